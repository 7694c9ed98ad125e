"""Inputs: turn DataFrames, LazyFrames, pandas/pyarrow objects, dicts and paths/globs into a ``pl.LazyFrame``.

Frames of other engines (PySpark, DuckDB, ...) are not read here: their pass runs in their own engine
(:mod:`polfair.engines.narwhals`); :func:`is_foreign` tells them apart.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from polfair.exceptions import InvalidInputError, PolfairError

__all__ = ["FOREIGN_MODULES", "interval_label", "is_foreign", "pandas_categories", "pandas_column", "source_name",
           "to_lazyframe"]

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
        return _from_pandas(data)
    if isinstance(data, dict):
        return pl.DataFrame(data).lazy()
    msg = (
        "data must be a polars DataFrame/LazyFrame, a pandas DataFrame, a pyarrow Table, a dict "
        f"of columns, or a path to parquet/CSV files; got {type(data).__name__}"
    )
    raise TypeError(msg)


def _interval_number(v: Any) -> str:
    x = float(v)
    if x.is_integer() and abs(x) < 2**53:
        return str(int(x))
    text = repr(x)
    return text[:-2] if text.endswith(".0") else text


def interval_label(iv: Any) -> str:
    """A pandas ``Interval`` as a readable group label: ``[18, 30)`` (``pd.cut(..., right=False)``),
    ``(18, 30]`` (the default), ``[a, b]``, ``(a, b)``; numbers as written (``18``, ``2.5``), times as
    pandas shows them.

    Examples
    --------
    >>> import pandas as pd  # doctest: +SKIP
    >>> interval_label(pd.Interval(18, 30, closed="left")), interval_label(pd.Interval(0.5, 2.0))  # doctest: +SKIP
    ('[18, 30)', '(0.5, 2]')
    """
    show = _interval_number if isinstance(iv.left, (int, float)) or hasattr(iv.left, "__float__") else str
    try:
        lo, hi = show(iv.left), show(iv.right)
    except (TypeError, ValueError):
        lo, hi = str(iv.left), str(iv.right)
    return f"{'[' if iv.closed_left else '('}{lo}, {hi}{']' if iv.closed_right else ')'}"


def pandas_categories(data: Any) -> dict[str, list[str]]:
    """The columns of a pandas frame whose order or labels polfair keeps (column -> Enum categories):
    interval categories (``pd.cut``/``pd.qcut`` bands, as :func:`interval_label` labels, in their
    order) and ordered categoricals of strings (their categories' order, e.g. ``<25`` before ``60+``).
    """
    out: dict[str, list[str]] = {}
    for name in data.columns:
        dt = data[name].dtype
        if str(dt) != "category":
            continue
        cats = dt.categories
        if str(getattr(cats, "dtype", "")).startswith("interval"):
            out[name] = [interval_label(iv) for iv in cats]
        elif dt.ordered and all(isinstance(c, str) for c in cats):
            out[name] = [str(c) for c in cats]
    return out


def pandas_column(col: Any, categories: list[str]) -> pl.Series:
    """One categorical pandas column of :func:`pandas_categories` as a Polars Enum of ``categories``."""
    codes = col.cat.codes.to_numpy()
    labels = pl.Series(categories, dtype=pl.String)
    idx = pl.Series(codes, dtype=pl.Int64)
    text = labels.gather(idx.clip(lower_bound=0)).zip_with(idx >= 0, pl.Series([None] * len(idx), dtype=pl.String))
    return text.cast(pl.Enum(categories)).alias(str(col.name))


def _from_pandas(data: Any) -> pl.LazyFrame:
    """A pandas frame as a LazyFrame; an object column of mixed Python types is named in the error.

    Interval categories (``pd.cut``/``pd.qcut``) become an Enum of readable labels (``[18, 30)``), and
    ordered categoricals of strings an Enum in their order (:func:`pandas_categories`): every output
    then shows the bands as pandas does and sorts them in their order.
    """
    cats = pandas_categories(data) if data.columns.is_unique else {}
    if cats:
        rest = data.drop(columns=list(cats))
        base = _from_pandas(rest).collect() if rest.shape[1] else pl.DataFrame(height=len(data))
        cols = {str(c): (pandas_column(data[c], cats[c]) if c in cats else base.get_column(str(c))) for c in data.columns}
        return pl.DataFrame(list(cols.values())).lazy()
    try:
        return pl.from_pandas(data).lazy()
    except (TypeError, ValueError, pl.exceptions.PolarsError, ImportError) as exc:
        import pyarrow as pa

        for name in data.columns:
            col = data[name]
            if str(col.dtype) != "object":
                continue
            kinds = sorted({type(v).__name__ for v in col.dropna().head(100_000)})
            if len(kinds) > 1:
                msg = (
                    f"pandas column {str(name)!r} (dtype object) mixes Python types {kinds}; give it one "
                    f"type, e.g. df[{str(name)!r}].astype(str)"
                )
                raise InvalidInputError(msg) from exc
            try:
                pa.array(col, from_pandas=True)
            except (pa.ArrowException, TypeError, ValueError):
                msg = f"pandas column {str(name)!r} (dtype object) cannot be converted: {exc}"
                raise InvalidInputError(msg) from exc
        raise


def _scan_path(path: str) -> pl.LazyFrame:
    lower = path.lower()
    p = Path(path)
    is_glob = any(c in path for c in "*?[")
    known = lower.endswith((".csv", ".csv.gz", ".tsv", ".ipc", ".arrow", ".feather", ".parquet"))
    if known and not is_glob and not p.exists():
        msg = f"input {path!r} does not exist (check the path; globs such as 'data/*.parquet' are accepted)"
        raise FileNotFoundError(msg)
    if lower.endswith((".csv", ".csv.gz", ".tsv")):
        sep = "\t" if lower.endswith(".tsv") else ","
        _expand(path) if is_glob else None
        return _named(pl.scan_csv(path, separator=sep), path)
    if lower.endswith((".ipc", ".arrow", ".feather")):
        _expand(path) if is_glob else None
        return _named(pl.scan_ipc(path), path)
    if lower.endswith(".parquet") or p.is_dir() or is_glob:
        hive = p.is_dir() or None
        files = _expand(path) if (is_glob or p.is_dir()) else [path]
        schema = _parquet_schema(files, path) if len(files) > 1 else None
        if schema is None:
            return _named(pl.scan_parquet(path, hive_partitioning=hive), path)
        opts = pl.ScanCastOptions(integer_cast="upcast", float_cast="upcast")
        return _named(pl.scan_parquet(path, hive_partitioning=hive, schema=schema, cast_options=opts), path)
    msg = (
        f"cannot tell the format of {path!r}: use a path ending in .parquet, .csv, .tsv, .ipc/"
        ".arrow, a glob, or a directory of parquet files; or read it with polars and pass the frame"
    )
    raise PolfairError(msg)


def _named(lf: pl.LazyFrame, path: str) -> pl.LazyFrame:
    """Remember which file or pattern a scan reads, for the messages of errors raised when it runs."""
    lf._pf_source = path  # type: ignore[attr-defined]
    return lf


def source_name(lf: pl.LazyFrame) -> str | None:
    """The file or pattern a scan made by :func:`to_lazyframe` reads (``None`` for in-memory data).

    Examples
    --------
    >>> import polars as pl
    >>> source_name(pl.LazyFrame({"a": [1]})) is None
    True
    """
    return getattr(lf, "_pf_source", None)


def _expand(path: str) -> list[str]:
    """The files a glob or directory names; a clear error when it names none."""
    import glob

    p = Path(path)
    if p.is_dir():
        files = sorted(str(f) for f in p.rglob("*.parquet")) or sorted(
            str(f) for f in p.rglob("*") if f.is_file() and not f.name.startswith((".", "_"))
        )
    else:
        files = sorted(glob.glob(path, recursive=True))
    if not files:
        msg = f"the pattern {path!r} matches no file (relative to {Path.cwd()}); check the path and the extension"
        raise FileNotFoundError(msg)
    return files


def _parquet_schema(files: list[str], pattern: str) -> pl.Schema | None:
    """One schema for parquet files that may disagree on integer/float widths (the widest wins).

    ``None`` when they all agree. Raises naming the file and the column on any other disagreement.
    """
    schemas = {f: pl.read_parquet_schema(f) for f in files}
    first_file, first = files[0], schemas[files[0]]
    out: dict[str, pl.DataType] = dict(first)
    widened = False
    for f, sch in schemas.items():
        for c in set(out) - set(sch):
            msg = (
                f"{pattern!r}: file {f!r} has no column {c!r}, which {first_file!r} has; give files of "
                "one schema, or scan them yourself with pl.scan_parquet(..., missing_columns='insert')"
            )
            raise InvalidInputError(msg)
        for c, dt in sch.items():
            if c not in out:
                msg = f"{pattern!r}: file {f!r} has a column {c!r} that {first_file!r} lacks; give files of one schema"
                raise InvalidInputError(msg)
            have = out[c]
            if dt == have:
                continue
            wider = _wider(have, dt)
            if wider is None:
                msg = (
                    f"{pattern!r}: column {c!r} is {dt} in file {f!r} but {first[c]} in {first_file!r}; "
                    "these types do not convert safely: rewrite the files with one dtype, or scan them "
                    "yourself and cast the column"
                )
                raise InvalidInputError(msg)
            out[c], widened = wider, True
    return pl.Schema(out) if widened else None


def _wider(a: pl.DataType, b: pl.DataType) -> pl.DataType | None:
    """The dtype both ``a`` and ``b`` convert to without changing a value, for numeric widths."""
    if a.is_integer() and b.is_integer():
        def bits(d: pl.DataType) -> int:
            return int("".join(ch for ch in str(d) if ch.isdigit()))

        signed = str(a).startswith("Int") or str(b).startswith("Int")
        if not signed:
            return a if bits(a) >= bits(b) else b
        need = max(bits(d) if str(d).startswith("Int") else 2 * bits(d) for d in (a, b))
        return {8: pl.Int8(), 16: pl.Int16(), 32: pl.Int32(), 64: pl.Int64(), 128: pl.Int128()}.get(need)
    if a.is_float() and b.is_float():
        return pl.Float64()
    return None
