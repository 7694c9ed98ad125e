"""Seeded, reproducible row sampling for ``max_sample_size`` (:func:`sample_rows`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from polfair.core.contract.inputs import to_lazyframe
from polfair.monitor._values import check_size

__all__ = ["sample_rows"]


def sample_rows(data: Any, max_sample_size: int, seed: int = 0) -> pl.LazyFrame:
    """A seeded, reproducible uniform sample of at most ``max_sample_size`` rows (lazy).

    Parameters
    ----------
    data
        Any input of :func:`polfair.core.passes.spec.to_lazyframe` (frame, pandas, arrow, path).
    max_sample_size
        Positive int. Inputs with at most this many rows are returned whole.
    seed
        Int seed of ``numpy.random.default_rng``.

    Returns
    -------
    pl.LazyFrame
        The input's columns; the rows at positions
        ``sort(default_rng(seed).choice(n_rows, max_sample_size, replace=False))`` in input order.

    Raises
    ------
    PolfairError
        ``max_sample_size`` is not a positive integer.

    Notes
    -----
    Counting the rows is a separate, cheap query (file metadata for parquet, a scan for CSV); the
    sample itself is a filter on the row position inside the report's one pass. The sample depends
    on the input's row order: re-ordered data gives a different (equally uniform) sample.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"x": list(range(10))})
    >>> sample_rows(df, 3, seed=1).collect()["x"].to_list() == sample_rows(df, 3, seed=1).collect()["x"].to_list()
    True
    >>> sample_rows(df, 3).collect().height
    3
    """
    size = check_size(max_sample_size, "max_sample_size")
    assert size is not None
    lf = to_lazyframe(data)
    n = int(lf.select(pl.len()).collect().item())
    if n <= size:
        return lf
    idx = np.sort(np.random.default_rng(seed).choice(n, size=size, replace=False))
    row = "__pf_sample_row"
    return (
        lf.with_row_index(row)
        .filter(pl.col(row).cast(pl.Int64).is_in(pl.Series(idx, dtype=pl.Int64).implode()))
        .drop(row)
    )
