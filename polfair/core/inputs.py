"""Inputs: turn DataFrames, LazyFrames, pandas/pyarrow objects, dicts and paths/globs into a ``pl.LazyFrame``.

Frames of other engines (PySpark, DuckDB, ...) are not read here: their pass runs in their own engine
(:mod:`polfair.engines.narwhals`); :func:`is_foreign` tells them apart.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from polfair.exceptions import PolfairError

__all__ = ["FOREIGN_MODULES", "is_foreign", "to_lazyframe"]

#: Top-level modules of the frame types whose pass runs in their own engine (the only copy).
FOREIGN_MODULES = frozenset({"pyspark", "duckdb", "sqlframe", "dask", "ibis", "modin", "daft"})


def is_foreign(data: Any) -> bool:
    """True when ``data`` is a frame of another engine (PySpark, DuckDB, sqlframe, Dask, ...).

    Parameters
    ----------
    data
        Any object.

    Returns
    -------
    bool
        Whether the object's type comes from one of :data:`FOREIGN_MODULES`.

    Examples
    --------
    >>> import polars as pl
    >>> is_foreign(pl.DataFrame({"a": [1]}))
    False
    """
    return type(data).__module__.split(".")[0] in FOREIGN_MODULES


def to_lazyframe(data: Any) -> pl.LazyFrame:
    """Turn supported inputs into a ``pl.LazyFrame`` without reading a file eagerly.

    Parameters
    ----------
    data
        ``pl.LazyFrame`` (used as is), ``pl.DataFrame``, a pandas DataFrame, a pyarrow Table, a
        mapping of column name to values, or a path / glob / hive directory of parquet, CSV or IPC
        files (scanned lazily; a directory is read as a hive-partitioned parquet dataset).

    Returns
    -------
    pl.LazyFrame

    Raises
    ------
    TypeError
        If the object is none of the above.
    PolfairError
        If a path has an extension polfair cannot scan.

    Examples
    --------
    >>> import polars as pl
    >>> to_lazyframe({"a": [1, 2]}).collect().shape
    (2, 1)
    """
    if isinstance(data, pl.LazyFrame):
        return data
    if isinstance(data, pl.DataFrame):
        return data.lazy()
    if isinstance(data, (str, Path)):
        return _scan_path(str(data))
    module = type(data).__module__.split(".")[0]
    if module in FOREIGN_MODULES:
        msg = (
            f"{type(data).__name__} frames are computed by their own engine: pass them directly to "
            "polfair.confusion_counts / fairness_report with column names (no polars expressions, "
            "config ranges or max_sample_size), or convert them to polars first"
        )
        raise TypeError(msg)
    if module == "pyarrow":
        out = pl.from_arrow(data)
        if isinstance(out, pl.Series):
            out = out.to_frame()
        return out.lazy()
    if module == "pandas":
        return pl.from_pandas(data).lazy()
    if isinstance(data, dict):
        return pl.DataFrame(data).lazy()
    msg = (
        "data must be a polars DataFrame/LazyFrame, a pandas DataFrame, a pyarrow Table, a dict "
        f"of columns, or a path to parquet/CSV files; got {type(data).__name__}"
    )
    raise TypeError(msg)


def _scan_path(path: str) -> pl.LazyFrame:
    lower = path.lower()
    p = Path(path)
    if lower.endswith((".csv", ".csv.gz", ".tsv")):
        sep = "\t" if lower.endswith(".tsv") else ","
        return pl.scan_csv(path, separator=sep)
    if lower.endswith((".ipc", ".arrow", ".feather")):
        return pl.scan_ipc(path)
    if lower.endswith(".parquet") or p.is_dir() or any(c in path for c in "*?["):
        return pl.scan_parquet(path, hive_partitioning=p.is_dir() or None)
    msg = (
        f"cannot tell the format of {path!r}: use a path ending in .parquet, .csv, .tsv, .ipc/"
        ".arrow, a glob, or a directory of parquet files; or read it with polars and pass the frame"
    )
    raise PolfairError(msg)
