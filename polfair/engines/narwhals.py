"""The counting pass on engines other than Polars (PySpark, DuckDB, sqlframe, Dask, ...), via narwhals.

For a frame that lives in another engine, polfair runs the same single pass *inside that engine*:
the outcome code of :mod:`polfair.core.spec` is written once with narwhals expressions, the engine runs
one ``group_by(by + protected keys + [code]).agg(sums)``, and only that small code table is
collected into Polars. The pivot to the cell table, the validation and every metric then run in
Polars exactly as for a Polars input, so results are identical.

Column arguments must be column names here (Polars expressions cannot run in another engine).
Optional dependency: ``narwhals`` (``pip install 'polfair[spark]'`` installs it with pyspark).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from polfair.core._args import check_columns, is_bool_like
from polfair.core.inputs import is_foreign
from polfair.core.spec import (
    CODE,
    FLAG_BAD_SCORE,
    FLAG_BAD_WEIGHT,
    FLAG_NULL_SCORE,
    FLAG_NULL_WEIGHT,
    W1S,
    WS,
    W,
    check_key_names,
    check_threshold,
    label_values,
)
from polfair.core.values import coerce_values
from polfair.exceptions import InvalidInputError, PolfairError

__all__ = ["ForeignSpec", "foreign_code_table", "is_foreign"]

_N = "__pf_n"
_ONE = "__pf_one"
_W2 = "__pf_w2"  # the name polfair.core.counts.pivot_codes reads Σw² from


@dataclass(frozen=True)
class ForeignSpec:
    """What later stages need to know about a request on a foreign frame (cf. :class:`polfair.core.spec.Spec`)."""

    by: tuple[str, ...]
    keys: tuple[str, ...]
    has_predictions: bool
    has_scores: bool
    weighted: bool
    roles: dict[str, pl.Expr]
    favorable: tuple[Any, ...]
    unfavorable: tuple[Any, ...] | None
    threshold: float
    source: None = None  # no Polars source: error messages carry counts, not example values


def _names(x: str | Sequence[str] | None, role: str) -> list[str]:
    items = [] if x is None else [x] if isinstance(x, (str, pl.Expr)) else list(x)
    for item in items:
        if not isinstance(item, str):
            msg = (
                f"{role}: with a {{Spark, DuckDB, ...}} frame, pass column names (str), not "
                f"{type(item).__name__}; compute derived columns in that engine first"
            )
            raise TypeError(msg)
    return items


def foreign_code_table(
    data: Any,
    *,
    y_true: str,
    y_pred: str | None = None,
    y_score: str | None = None,
    threshold: float = 0.5,
    protected: str | Sequence[str],
    favorable: Any = 1,
    unfavorable: Any = None,
    weight: str | None = None,
    by: str | Sequence[str] | None = None,
    cluster: str | None = None,
    n_buckets: int = 20,
) -> tuple[pl.DataFrame, ForeignSpec]:
    """Run the counting pass inside the frame's own engine; return the code table and the spec.

    Parameters
    ----------
    data
        A PySpark DataFrame, DuckDB relation, or another frame narwhals supports lazily.
    y_true, y_pred, y_score, threshold, protected, favorable, unfavorable, weight, by
        As in :func:`polfair.confusion_counts`, but column names only.
    cluster, n_buckets
        Not supported in foreign engines yet (the bucket hash needs wrapping unsigned 64-bit
        arithmetic): giving ``cluster`` raises.

    Returns
    -------
    (pl.DataFrame, ForeignSpec)
        The per-(by, keys, outcome code) counts, collected into Polars (small), and the spec.

    Raises
    ------
    ImportError
        narwhals is not installed.
    ColumnNotFoundError, PolfairError, TypeError
        As for Polars inputs; expressions instead of names raise ``TypeError``.

    Examples
    --------
    >>> import duckdb  # doctest: +SKIP
    >>> rel = duckdb.sql("select * from (values (1, 1, 'a'), (0, 1, 'b')) t(y, p, g)")  # doctest: +SKIP
    >>> codes, spec = foreign_code_table(rel, y_true="y", y_pred="p", protected="g")  # doctest: +SKIP
    """
    try:
        import narwhals as nw
    except ImportError as exc:  # exercised without the extra (tests/engines/test_foreign_extra.py)
        engine = type(data).__module__.split(".")[0]
        extra = "duckdb" if engine == "duckdb" else "spark"
        msg = (
            f"{type(data).__name__} frames ({engine}) need the optional extra: pip install "
            f"'polfair[{extra}]' (it installs narwhals), or convert the frame to polars first"
        )
        raise ImportError(msg) from exc

    if cluster is not None:
        msg = (
            f"cluster={cluster!r} is not supported for Spark/DuckDB inputs yet (the bucket hash needs "
            "unsigned 64-bit arithmetic); collect to Polars first, or count partitions with polfair"
        )
        raise PolfairError(msg)
    check_threshold(threshold)
    nf = nw.from_native(data)
    schema = nf.collect_schema()
    roles, keys, by_names = _resolve_names(
        list(schema.names()), y_true=y_true, y_pred=y_pred, y_score=y_score, weight=weight, protected=protected, by=by
    )
    fav, unfav = label_values(favorable, unfavorable)
    code, score, w = _outcome_code(
        nw, schema, y_true=y_true, y_pred=y_pred, y_score=y_score, weight=weight, fav=fav, unfav=unfav,
        threshold=threshold,
    )  # fmt: skip
    codes = _count_codes(nw, nf, code, score, w, [*by_names, *keys])
    spec = ForeignSpec(
        by=tuple(by_names),
        keys=tuple(keys),
        has_predictions=y_pred is not None or y_score is not None,
        has_scores=score is not None,
        weighted=w is not None,
        roles={r: pl.col(n) for r, n in roles.items()},
        favorable=fav,
        unfavorable=unfav,
        threshold=float(threshold),
    )
    return codes, spec


def _resolve_names(
    names: list[str],
    *,
    y_true: str,
    y_pred: str | None,
    y_score: str | None,
    weight: str | None,
    protected: str | Sequence[str],
    by: str | Sequence[str] | None,
) -> tuple[dict[str, str], list[str], list[str]]:
    """Check the column-name arguments against the frame's columns: (roles, protected keys, by names)."""
    given = {"y_true": y_true, "y_pred": y_pred, "y_score": y_score, "weight": weight}
    roles: dict[str, str] = {r: _names(v, r)[0] for r, v in given.items() if v is not None}
    keys, by_names = _names(protected, "protected"), _names(by, "by")
    if not keys:
        msg = "protected must name at least one column, e.g. protected=['sex']"
        raise PolfairError(msg)
    for role, name in [*roles.items(), *(("protected", k) for k in keys), *(("by", b) for b in by_names)]:
        check_columns(pl.col(name), role, names)
    if y_true in keys:
        msg = f"protected attribute {y_true!r} is the label column y_true; pass the demographic columns as protected="
        raise PolfairError(msg)
    check_key_names(by_names, keys)
    return roles, keys, by_names


def _match(nw: Any, schema: Any, col: str, values: tuple[Any, ...], arg: str) -> Any:
    """Boolean narwhals expression: the value in ``col`` is one of ``values`` (checked against its dtype)."""
    dtype = schema[col]
    pl_dtype = _polars_dtype(dtype)
    if pl_dtype is not None:  # the value rules of polfair.core.values, in the column's dtype
        values = tuple(v for v in coerce_values(values, pl_dtype, option=arg, column=col) if v is not None)
    if dtype == nw.Boolean:
        if not all(is_bool_like(v) for v in values):
            raise InvalidInputError(f"{arg}={list(values)!r} cannot match boolean column {col!r}")
        wanted = {bool(v) for v in values}
        return nw.col(col).is_not_null() if wanted == {True, False} else (
            nw.col(col) if True in wanted else ~nw.col(col)
        )
    if dtype.is_numeric() and not all(isinstance(v, (int, float)) for v in values):
        raise InvalidInputError(f"{arg}={list(values)!r} cannot match column {col!r} of dtype {dtype}")
    if dtype == nw.String and not all(isinstance(v, str) for v in values):
        raise InvalidInputError(f"{arg}={list(values)!r} cannot match string column {col!r}")
    return nw.col(col).is_in(list(values))


def _polars_dtype(dtype: Any) -> pl.DataType | None:
    """The Polars dtype of a simple narwhals dtype (numbers, booleans, strings), else ``None``."""
    name = str(dtype)
    if name in {"Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32", "UInt64", "Float32",
                "Float64", "Boolean", "String"}:  # fmt: skip
        return getattr(pl, name)()
    return None


def _state(nw: Any, col: str, fav_mask: Any, unf_mask: Any | None, nan: bool = False) -> Any:
    """0 unfavorable, 1 favorable, 2 null (NaN too when ``nan``: a Float column), 3 neither."""
    inner = nw.lit(0) if unf_mask is None else nw.when(unf_mask).then(nw.lit(0)).otherwise(nw.lit(3))
    missing = nw.col(col).is_null() | nw.col(col).is_nan() if nan else nw.col(col).is_null()
    return nw.when(missing).then(nw.lit(2)).otherwise(
        nw.when(fav_mask).then(nw.lit(1)).otherwise(inner)
    )


def _outcome_code(
    nw: Any,
    schema: Any,
    *,
    y_true: str,
    y_pred: str | None,
    y_score: str | None,
    weight: str | None,
    fav: tuple[Any, ...],
    unfav: tuple[Any, ...] | None,
    threshold: float,
) -> tuple[Any, Any | None, Any | None]:
    """The outcome code of :mod:`polfair.core.spec` in narwhals: ``label + 4·prediction + 16·flags``.

    Returns the code expression and the Float64 score and weight expressions (``None`` when absent).
    """
    fav_mask = _match(nw, schema, y_true, fav, "favorable")
    label = _state(nw, y_true, fav_mask, None if unfav is None else _match(nw, schema, y_true, unfav, "unfavorable"),
                   nan=schema[y_true].is_float())
    flags = []
    score = None
    if y_score is not None:
        score = nw.col(y_score).cast(nw.Float64)
        bad = score.is_nan() | (score < 0.0) | (score > 1.0)
        flags.append(nw.when(score.is_null()).then(nw.lit(FLAG_NULL_SCORE)).otherwise(
            nw.when(bad).then(nw.lit(FLAG_BAD_SCORE)).otherwise(nw.lit(0))))  # fmt: skip
    if y_pred is not None:
        if schema[y_pred] == nw.Boolean and not all(is_bool_like(v) for v in fav):
            pred = _state(nw, y_pred, nw.col(y_pred), None)
        else:
            pred = _state(nw, y_pred, _match(nw, schema, y_pred, fav, "favorable"),
                          None if unfav is None else _match(nw, schema, y_pred, unfav, "unfavorable"),
                          nan=schema[y_pred].is_float())  # fmt: skip
    elif score is not None:
        pred = nw.when(score.is_null()).then(nw.lit(2)).otherwise(
            nw.when(score >= float(threshold)).then(nw.lit(1)).otherwise(nw.lit(0)))  # fmt: skip
    else:
        pred = label
    w = None
    if weight is not None:
        w = nw.col(weight).cast(nw.Float64)
        badw = w.is_nan() | (w < 0.0) | (w == float("inf"))
        flags.append(nw.when(w.is_null()).then(nw.lit(FLAG_NULL_WEIGHT)).otherwise(
            nw.when(badw).then(nw.lit(FLAG_BAD_WEIGHT)).otherwise(nw.lit(0))))  # fmt: skip
    code = label + 4 * pred
    for f in flags:
        code = code + 16 * f
    return code, score, w


def _count_codes(nw: Any, nf: Any, code: Any, score: Any | None, w: Any | None, group: list[str]) -> pl.DataFrame:
    """The one ``group_by(by + keys + code)`` with plain sums, run in the frame's engine, collected to Polars."""
    cols = {CODE: code, _ONE: nw.lit(1).cast(nw.Int64)}
    aggs = [nw.col(_ONE).sum().alias(_N)]
    if w is not None:
        cols[W] = w
        cols[_W2] = w * w  # Σw² per (cell, code): Kish effective sizes for the intervals
        aggs += [nw.col(W).sum(), nw.col(_W2).sum()]
    if score is not None:
        cols[WS] = score if w is None else w * score
        cols[W1S] = (1.0 - score) if w is None else w * (1.0 - score)
        aggs += [nw.col(WS).sum(), nw.col(W1S).sum()]
    # the portable two-step form: indicator columns first, then plain sums (runs on every backend)
    lazy = nf.lazy() if hasattr(nf, "lazy") else nf
    table = lazy.with_columns(**cols).group_by(*group, CODE).agg(*aggs)
    native = table.collect(backend="polars").to_native()
    casts = {CODE: pl.UInt8, _N: pl.UInt64, W: pl.Float64, _W2: pl.Float64, WS: pl.Float64, W1S: pl.Float64}
    return native.with_columns([pl.col(c).cast(t) for c, t in casts.items() if c in native.columns])
