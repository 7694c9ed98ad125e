"""Stable hashes for polfair's seeded streams and jackknife buckets (no other polfair imports).

:func:`stable_hash` keys the random streams of :mod:`polfair.core.intervals` (the same in every
process, platform and version); :func:`bucket_of` assigns the rows of a cluster to one jackknife
bucket in the counting pass (:func:`polfair.core.spec.build_spec` with ``cluster=``). They live here
so that the pass and the intervals share them without an import cycle.
"""

from __future__ import annotations

import hashlib
from typing import Any

import polars as pl

from polfair.exceptions import PolfairError

__all__ = ["bucket_of", "stable_hash"]


def stable_hash(value: Any) -> int:
    """A 64-bit hash of ``value``'s string form (blake2b), the same in every process and version.

    Examples
    --------
    >>> stable_hash(("2024-01", "x")) == stable_hash(("2024-01", "x"))
    True
    """
    return int.from_bytes(hashlib.blake2b(repr(value).encode(), digest_size=8).digest(), "little")


def bucket_of(cluster: pl.Expr, n_buckets: int = 20, *, integer: bool = True) -> pl.Expr:
    """Expression: the jackknife bucket (UInt8) of a cluster id, the same for every row of a cluster.

    Integer ids: the fixed multiplicative hash ``((id · 0x9E3779B97F4A7C15 mod 2⁶⁴) >> 32) · G >> 32``
    (Fibonacci hashing with Lemire's range reduction, wrapping UInt64 arithmetic; negative ids are
    taken modulo 2⁶⁴): stable across processes, platforms and versions. Other ids (strings, ...):
    ``Expr.hash(seed=0)``, then the same reduction; Polars documents its hash as stable only within
    one Polars version, so tables to be merged should be counted with the same Polars version.
    Null ids form one more cluster.

    Parameters
    ----------
    cluster
        Cluster id expression (one value per row).
    n_buckets
        Number of buckets ``G``, 2…255 (default 20).
    integer
        Whether ``cluster`` has an integer dtype (the caller knows the schema).

    Raises
    ------
    PolfairError
        ``n_buckets`` outside 2…255.

    Examples
    --------
    >>> import polars as pl
    >>> pl.DataFrame({"u": [1, 2, 3, 1]}).select(bucket_of(pl.col("u"))).to_series().to_list()
    [12, 4, 17, 12]
    """
    if isinstance(n_buckets, bool) or not isinstance(n_buckets, int) or not 2 <= n_buckets <= 255:
        msg = f"n_buckets must be an integer in 2..255, got {n_buckets!r}"
        raise PolfairError(msg)
    if integer:
        key = cluster.cast(pl.Int64).cast(pl.UInt64, wrap_numerical=True).fill_null(pl.lit(2**63, pl.UInt64))
    else:
        key = cluster.hash(seed=0)
    two32 = pl.lit(2**32, pl.UInt64)
    h = (key * pl.lit(0x9E3779B97F4A7C15, pl.UInt64)) // two32  # wrapping product, top 32 bits
    return ((h * pl.lit(n_buckets, pl.UInt64)) // two32).cast(pl.UInt8)
