"""Stable hashes for polfair's seeded streams and jackknife buckets (no other polfair imports).

:func:`stable_hash` keys the random streams of :mod:`polfair.core.intervals` (the same in every
process, platform and version); :func:`bucket_of` assigns the rows of a cluster to one jackknife
bucket in the counting pass (:func:`polfair.core.passes.spec.build_spec` with ``cluster=``). They live here
so that the pass and the intervals share them without an import cycle.
"""

from __future__ import annotations

import hashlib
from typing import Any

import polars as pl

from polfair.exceptions import PolfairError

__all__ = ["bucket_expr", "bucket_kind", "bucket_of", "check_n_buckets", "stable_hash", "string_key", "string_key_sql"]


def stable_hash(value: Any) -> int:
    """A 64-bit hash of ``value``'s string form (blake2b), the same in every process and version.

    Examples
    --------
    >>> stable_hash(("2024-01", "x")) == stable_hash(("2024-01", "x"))
    True
    """
    return int.from_bytes(hashlib.blake2b(repr(value).encode(), digest_size=8).digest(), "little")


#: Fibonacci hashing's multiplier (2⁶⁴ / golden ratio) and its four 16-bit limbs, low first.
_FIB = 0x9E3779B97F4A7C15
_FIB_LIMBS = tuple((_FIB >> (16 * i)) & 0xFFFF for i in range(4))
#: The string key's prime modulus (2³¹ − 1).
_P = 2**31 - 1
#: The key of a null cluster id (one more cluster): −2⁶³, i.e. 2⁶³ as an unsigned 64-bit integer.
_NULL_KEY = -(2**63)


def bucket_kind(dtype: pl.DataType) -> str:
    """How :func:`bucket_of` reads a cluster id of this dtype: ``"integer"`` (integers, Boolean),
    ``"string"`` (String, Categorical, Enum) or ``"other"`` (Float, Decimal, Date, Datetime: Polars' hash).

    Examples
    --------
    >>> import polars as pl
    >>> bucket_kind(pl.Int32()), bucket_kind(pl.Categorical()), bucket_kind(pl.Date())
    ('integer', 'string', 'other')
    """
    if dtype.is_integer() or dtype == pl.Boolean:
        return "integer"
    if dtype in (pl.String, pl.Categorical) or isinstance(dtype, pl.Enum):
        return "string"
    return "other"


def string_key(s: pl.Expr) -> pl.Expr:
    """Expression: the Int64 key of a string cluster id, from its UTF-8 bytes (null stays null).

    ``a`` = the first 7 bytes and ``b`` = the last 7 bytes as big-endian integers (0 for ""),
    ``n`` = the number of bytes; ``key = (a mod p)·2³² + ((b + n) mod p)`` with ``p = 2³¹ − 1``:
    non-negative, below 2⁶³, and computed identically by Spark
    (``conv(left(hex(s), 14), 16, 10)``, ``octet_length``) and DuckDB (``hex``, ``strlen``).
    Different ids may share a key (then a bucket), which the jackknife allows; every row of one
    id gets the same key.

    Examples
    --------
    >>> import polars as pl
    >>> pl.DataFrame({"s": ["abc", "", None]}).select(string_key(pl.col("s"))).to_series().to_list()
    [27411250088600166, 0, None]
    """
    h = s.cast(pl.String).str.encode("hex")
    a = h.str.head(14).str.to_integer(base=16, strict=False).fill_null(0)
    b = h.str.tail(14).str.to_integer(base=16, strict=False).fill_null(0)
    n = s.cast(pl.String).str.len_bytes().cast(pl.Int64)
    key = (a % _P) * 2**32 + (b + n) % _P
    return pl.when(s.is_null()).then(None).otherwise(key).cast(pl.Int64)


def string_key_sql(column: str, engine: str) -> str:
    """:func:`string_key` as SQL for Spark (``engine="spark"``) or DuckDB (``"duckdb"``), of a quoted column.

    Examples
    --------
    >>> "conv(left(hex" in string_key_sql("`c`", "spark")
    True
    """
    if engine == "spark":
        s = f"cast({column} as string)"
        h = f"hex({s})"
        a = f"coalesce(cast(conv(left({h}, 14), 16, 10) as bigint), 0)"
        b = f"coalesce(cast(conv(right({h}, 14), 16, 10) as bigint), 0)"
        n = f"cast(octet_length({s}) as bigint)"
    else:
        s = f"CAST({column} AS VARCHAR)"
        h = f"hex({s})"
        a = f"CAST(('0x0' || left({h}, 14)) AS BIGINT)"
        b = f"CAST(('0x0' || right({h}, 14)) AS BIGINT)"
        n = f"CAST(strlen({s}) AS BIGINT)"
    return f"CASE WHEN {column} IS NULL THEN NULL ELSE ({a} % {_P}) * {2**32} + (({b} + {n}) % {_P}) END"


def bucket_of(cluster: pl.Expr, n_buckets: int = 20, *, integer: bool = True, kind: str | None = None) -> pl.Expr:
    """Expression: the jackknife bucket (UInt8) of a cluster id, the same for every row of a cluster.

    Integer ids (and Boolean): the fixed multiplicative hash ``((id · 0x9E3779B97F4A7C15 mod 2⁶⁴) >> 32) · G >> 32``
    (Fibonacci hashing with Lemire's range reduction, wrapping UInt64 arithmetic; negative ids are
    taken modulo 2⁶⁴): stable across processes, platforms, versions and engines (Spark and DuckDB
    compute it with 16-bit limbs, :func:`bucket_expr`). String ids (String, Categorical, Enum):
    the same hash of :func:`string_key` (their UTF-8 bytes), also the same on every engine. Other
    ids (Float, Decimal, Date, Datetime): ``Expr.hash(seed=0)``, then the same reduction; Polars
    documents its hash as stable only within one Polars version (Spark and DuckDB refuse them).
    Null ids form one more cluster.

    Parameters
    ----------
    cluster
        Cluster id expression (one value per row).
    n_buckets
        Number of buckets ``G``, 2…255 (default 20).
    integer
        Whether ``cluster`` has an integer dtype (when ``kind`` is not given).
    kind
        :func:`bucket_kind` of the cluster's dtype (``"integer"``, ``"string"``, ``"other"``).

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
    check_n_buckets(n_buckets)
    kind = kind or ("integer" if integer else "other")
    if kind == "other":
        key = cluster.hash(seed=0)
    else:
        ids = string_key(cluster) if kind == "string" else cluster.cast(pl.Int64)
        key = ids.cast(pl.UInt64, wrap_numerical=True).fill_null(pl.lit(2**63, pl.UInt64))
    two32 = pl.lit(2**32, pl.UInt64)
    h = (key * pl.lit(_FIB, pl.UInt64)) // two32  # wrapping product, top 32 bits
    return ((h * pl.lit(n_buckets, pl.UInt64)) // two32).cast(pl.UInt8)


def check_n_buckets(n_buckets: Any) -> None:
    """Raise :class:`PolfairError` unless ``n_buckets`` is an int in 2…255."""
    if isinstance(n_buckets, bool) or not isinstance(n_buckets, int) or not 2 <= n_buckets <= 255:
        msg = f"n_buckets must be an integer in 2..255, got {n_buckets!r}"
        raise PolfairError(msg)


def bucket_expr(ns: Any, key: Any, n_buckets: int) -> Any:
    """:func:`bucket_of`'s hash of an Int64 key in any engine's namespace (Polars or narwhals: Spark, DuckDB).

    The same integers as the UInt64 arithmetic, with Int64 operations that never overflow (so
    ANSI-mode Spark and DuckDB's checked arithmetic accept them): the key's four 16-bit limbs
    ``a_i`` (taken modulo 2⁶⁴ by non-negative remainders and exact divisions), the products with
    the multiplier's limbs ``c_j`` summed by weight, ``S_k = Σ_{i+j=k} a_i c_j`` (< 2³⁴), the
    product's bits 32…63 as ``(⌊(S_0 + S_1·2¹⁶)/2³²⌋ + S_2 + (S_3 mod 2¹⁶)·2¹⁶) mod 2³²``, then
    ``⌊h·G/2³²⌋``. Every division is of an exact multiple, so engines whose ``/`` is a float
    division give the same integers.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"u": [1, 2, 3, -7, None, 2**63 - 1]})
    >>> a = df.select(bucket_expr(pl, pl.col("u"), 20).alias("b"))["b"].to_list()
    >>> a == df.select(bucket_of(pl.col("u")).cast(pl.Int64).alias("b"))["b"].to_list()
    True
    """
    check_n_buckets(n_buckets)
    i64 = ns.Int64

    def lit(v: int) -> Any:
        return ns.lit(v, i64)

    def pmod(x: Any, m: int) -> Any:  # x mod m in [0, m) whatever the engine's sign rule
        return ((x % lit(m)) + lit(m)) % lit(m)

    def exact_div(x: Any, m: int) -> Any:  # x / m for a multiple x of m
        return (x / lit(m)).cast(i64)

    k = key.cast(i64).fill_null(lit(_NULL_KEY))
    m16, m32, m48 = pmod(k, 2**16), pmod(k, 2**32), pmod(k, 2**48)
    a = [m16, exact_div(m32 - m16, 2**16), exact_div(m48 - m32, 2**32), pmod(exact_div(k - m48, 2**48), 2**16)]
    c = _FIB_LIMBS
    S = [sum((a[i] * lit(c[k - i]) for i in range(k + 1)), lit(0)) for k in range(4)]
    t = S[0] + S[1] * lit(2**16)
    carry = exact_div(t - pmod(t, 2**32), 2**32)
    h = pmod(carry + S[2] + pmod(S[3], 2**16) * lit(2**16), 2**32)
    hg = h * lit(n_buckets)
    return exact_div(hg - pmod(hg, 2**32), 2**32)
