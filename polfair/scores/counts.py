"""Score histograms: ONE ``group_by`` over (by, protected keys, score bin, label) to additive cells.

The score analogue of the core's cell table. Each cell holds, for one combination of the ``by``
values, the protected attributes, a score bin and the label (favorable or not):

* ``n`` (Int64): rows; ``weight`` (Float64): Σw;
* ``score_sum`` = Σ w·s and ``score_sq_sum`` = Σ w·s² (Float64);
* ``score_min`` / ``score_max`` (Float64): the smallest and largest score in the cell;
* ``weight_sq_sum`` = Σw² (Float64; = ``n`` unweighted): Kish effective sizes for the intervals.

Every column is a sum, a min or a max, so tables of partitions merge exactly
(:func:`merge_score_counts`). ROC and precision–recall curves, AUC, average precision, the Brier
score, reliability curves, ECE, threshold sweeps and per-group thresholds are arithmetic on this
small table (:mod:`polfair.scores.curves`, :mod:`polfair.scores.sweep`).

Binning (``bins=``)
-------------------
* ``"exact"`` / ``None`` (default): one bin per distinct score value. Every statistic is then exact
  (equal to scikit-learn on the rows). Use it for discrete scores (COMPAS ``decile_score`` 1..10,
  rounded probabilities); the table has one row per distinct value per cell.
* an ``int`` ``k``: ``k`` equal-width bins on ``range`` (default ``(0, 1)``), left-closed, the last
  closed on both sides. A score outside ``range`` raises (scores are never clipped silently).
* a sequence of increasing edges ``[e0, e1, ..., ek]``: the bins ``[e_i, e_{i+1})``, the last closed.

A binned cell's ``score`` is its lower edge, so a threshold that is a bin edge is exact: the
decision ``s >= t`` is the same for every row of a bin. The Brier score is exact under any binning
(it needs only Σw·s², Σw·s and Σw·y per cell). Binning error bound for the ROC AUC: ties inside a
bin count as half-concordant, so ``|AUC_binned − AUC_exact| ≤ ½ Σ_b P_b N_b / (P N)`` where
``P_b`` / ``N_b`` are the positive / negative weights in bin ``b`` (:func:`~polfair.scores.curves.roc_auc_bound`
gives the bound per group).
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import polars as pl

from polfair.core._args import (
    as_expr,
    as_list,
    as_values,
    check_columns,
    is_bool_like,
    output_name,
)
from polfair.core._typing import IntoExpr
from polfair.core.inputs import is_foreign, to_lazyframe
from polfair.exceptions import InvalidInputError, MissingValuesWarning, PolfairError

__all__ = [
    "SCORE_COUNT_COLUMNS",
    "ScoreRequest",
    "favorable_indicator",
    "merge_score_counts",
    "score_counts",
    "score_counts_request",
]

#: Value columns of a score histogram, in order (every other column is a key).
SCORE_COUNT_COLUMNS = ("n", "weight", "score_sum", "score_sq_sum", "score_min", "score_max", "weight_sq_sum")

_RESERVED = frozenset({"score", "label", *SCORE_COUNT_COLUMNS, "attribute", "group", "metric", "value", "threshold"})
_W_MIN = "__pf_wmin"


def favorable_indicator(expr: pl.Expr, dtype: pl.DataType, favorable: Any, role: str = "y_true") -> pl.Expr:
    """Boolean expression: ``expr`` is one of the ``favorable`` values (null stays null).

    Parameters
    ----------
    expr
        The label (or decision) expression.
    dtype
        Its dtype (from the input's schema).
    favorable
        A value or a list of values of the favorable outcome, of the column's type.
    role
        The argument name used in error messages.

    Returns
    -------
    pl.Expr
        Boolean.

    Raises
    ------
    InvalidInputError
        If ``favorable`` cannot match a column of this dtype (e.g. ``favorable=1`` on strings).

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": ["yes", "no", None]})
    >>> df.select(favorable_indicator(pl.col("y"), pl.String, "yes")).to_series().to_list()
    [True, False, None]
    """
    values = as_values(favorable)

    def mismatch() -> InvalidInputError:
        msg = (
            f"favorable={list(values)!r} cannot match {role} of dtype {dtype}: give the favorable "
            f"value(s) in the column's type, e.g. favorable=1 for 0/1 labels or favorable='Yes' for strings"
        )
        return InvalidInputError(msg)

    if dtype == pl.Boolean:
        if not all(is_bool_like(v) for v in values):
            raise mismatch()
        wanted = {bool(v) for v in values}
        if wanted == {True, False}:
            return pl.when(expr.is_not_null()).then(pl.lit(True))
        return expr if True in wanted else ~expr
    if dtype.is_numeric():
        if not all(isinstance(v, (int, float)) for v in values):
            raise mismatch()
        return expr.cast(pl.Float64).is_in([float(v) for v in values])
    if dtype == pl.String or isinstance(dtype, (pl.String, pl.Categorical, pl.Enum)) or dtype == pl.Categorical:
        if not all(isinstance(v, str) for v in values):
            raise mismatch()
        return expr.cast(pl.String).is_in(list(values))
    raise mismatch()


@dataclass(frozen=True)
class ScoreRequest:
    """A validated score request: the lazy frame and the names of its columns.

    Attributes
    ----------
    frame
        Lazy frame with the ``by`` and protected keys, ``__pf_y`` (Boolean, favorable label),
        ``__pf_s`` (Float64 score) and ``__pf_w`` (Float64 weight).
    by
        Names of the ``by`` columns.
    keys
        Names of the protected attributes.
    """

    frame: pl.LazyFrame
    by: tuple[str, ...]
    keys: tuple[str, ...]


def _named(exprs: Sequence[IntoExpr], role: str, names: list[str]) -> list[pl.Expr]:
    out = []
    for x in exprs:
        e = as_expr(x, role)
        check_columns(e, role, names)
        out.append(e.alias(output_name(e, role)))
    return out


def score_counts_request(
    data: Any,
    *,
    y_true: IntoExpr | None,
    y_score: IntoExpr,
    protected: IntoExpr | Sequence[IntoExpr] | None,
    favorable: Any = 1,
    weight: IntoExpr | None = None,
    by: IntoExpr | Sequence[IntoExpr] | None = None,
) -> ScoreRequest:
    """Validate the arguments of :func:`score_counts` and build the normalised lazy frame.

    ``y_true=None`` gives an all-unfavorable label (for score-only analyses such as NYC LL144's
    scoring rate); ``protected=None`` or ``[]`` gives no keys.

    Returns
    -------
    ScoreRequest

    Raises
    ------
    ColumnNotFoundError, PolfairError, InvalidInputError, TypeError
        As :func:`score_counts`.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": [1], "s": [0.3], "g": ["a"]})
    >>> r = score_counts_request(df, y_true="y", y_score="s", protected="g")
    >>> r.keys, r.by
    (('g',), ())
    """
    lf = to_lazyframe(data)
    schema = lf.collect_schema()
    names = schema.names()
    by_e = _named(as_list(by), "by", names)
    key_e = _named(as_list(protected), "protected", names)
    by_n = [output_name(e, "by") for e in by_e]
    key_n = [output_name(e, "protected") for e in key_e]
    seen: set[str] = set()
    for k in (*by_n, *key_n):
        if k in seen or k in _RESERVED or k.startswith("__pf_"):
            msg = (
                f"key name {k!r} is given twice or is reserved for the score table's columns "
                f"({sorted(_RESERVED)}); rename it with .alias()"
            )
            raise PolfairError(msg)
        seen.add(k)
    s = as_expr(y_score, "y_score")
    check_columns(s, "y_score", names)
    s_type = lf.select(s).collect_schema().dtypes()[0]
    if not (s_type.is_numeric() or s_type == pl.Boolean):
        msg = f"y_score must be numeric, found dtype {s_type}; cast it (e.g. pl.col('score').cast(pl.Float64))"
        raise InvalidInputError(msg)
    s = s.cast(pl.Float64).fill_nan(None)
    if y_true is None:
        y = pl.lit(False)
    else:
        ye = as_expr(y_true, "y_true")
        check_columns(ye, "y_true", names)
        y = favorable_indicator(ye, lf.select(ye).collect_schema().dtypes()[0], favorable)
    if weight is None:
        w = pl.lit(1.0)
    else:
        we = as_expr(weight, "weight")
        check_columns(we, "weight", names)
        if not lf.select(we).collect_schema().dtypes()[0].is_numeric():
            msg = "weight must be numeric"
            raise InvalidInputError(msg)
        w = we.cast(pl.Float64).fill_nan(None)
    frame = lf.select(*by_e, *key_e, y.alias("__pf_y"), s.alias("__pf_s"), w.alias("__pf_w"))
    return ScoreRequest(frame, tuple(by_n), tuple(key_n))


def _check_bins(bins: Any, range_: tuple[float, float]) -> tuple[float, ...] | None:
    if bins is None or (isinstance(bins, str) and bins == "exact"):
        return None
    if isinstance(bins, bool):
        msg = f"bins must be 'exact', None, an int >= 1 or a list of increasing edges, got {bins!r}"
        raise PolfairError(msg)
    if isinstance(bins, int):
        lo, hi = (float(range_[0]), float(range_[1]))
        if bins < 1 or not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            msg = f"bins={bins!r} needs bins >= 1 and a finite range lo < hi, got range={range_!r}"
            raise PolfairError(msg)
        return tuple(lo + (hi - lo) * i / bins for i in range(bins)) + (hi,)
    if isinstance(bins, str):
        msg = f"bins must be 'exact', None, an int >= 1 or a list of increasing edges, got {bins!r}"
        raise PolfairError(msg)
    edges = tuple(float(e) for e in bins)
    if len(edges) < 2 or any(not math.isfinite(e) for e in edges) or any(a >= b for a, b in itertools.pairwise(edges)):
        msg = f"bins edges must be >= 2 finite, strictly increasing numbers, got {list(bins)!r}"
        raise PolfairError(msg)
    return edges


def _bin_expr(s: pl.Expr, edges: tuple[float, ...] | None) -> pl.Expr:
    if edges is None:
        return s
    # bin i = [e_i, e_{i+1}), the last closed; the cell's score is the lower edge
    lower = pl.lit(edges[0])
    for e in edges[1:-1]:
        lower = pl.when(s >= e).then(pl.lit(e)).otherwise(lower)
    return pl.when(s.is_not_null()).then(lower)


def score_counts(
    data: Any,
    *,
    y_true: IntoExpr | None,
    y_score: IntoExpr,
    protected: IntoExpr | Sequence[IntoExpr] | None,
    favorable: Any = 1,
    weight: IntoExpr | None = None,
    by: IntoExpr | Sequence[IntoExpr] | None = None,
    bins: int | Sequence[float] | str | None = "exact",
    range: tuple[float, float] = (0.0, 1.0),
    engine: Literal["auto", "in-memory", "streaming"] = "auto",
) -> pl.DataFrame:
    """Score histogram by group: ONE ``group_by`` over (by, protected, score bin, label).

    Parameters
    ----------
    data
        A polars DataFrame/LazyFrame, pandas DataFrame, pyarrow Table, dict of columns or a
        parquet/CSV path (scanned lazily).
    y_true
        Label column or expression; ``favorable`` gives its favorable value(s). ``None`` for a
        score-only histogram (every ``label`` is False).
    y_score
        Numeric score column or expression (a probability, a decile, any real number). NaN counts
        as missing.
    protected
        Protected attribute(s): names or named expressions (``None`` for none).
    favorable
        Favorable label value(s). Default ``1``.
    weight
        Optional non-negative numeric weight column or expression.
    by
        Optional column(s) giving one histogram per value (month, model version, ...).
    bins
        ``"exact"`` / ``None`` (one bin per distinct score, every statistic exact), an ``int``
        number of equal-width bins on ``range``, or a sequence of increasing bin edges. See the
        module docstring for the error bounds of binned scores.
    range
        ``(lo, hi)`` of the equal-width bins when ``bins`` is an int. Default ``(0, 1)``. Bins on
        the observed range would need a first pass for the min and max (and would not merge across
        partitions): give the range of the score (e.g. ``(1, 10)`` for deciles) instead.
    engine
        Polars engine for the pass (``"auto"``, ``"streaming"``, ``"in-memory"``).

    Returns
    -------
    pl.DataFrame
        Columns ``*by``, ``*protected`` (input dtypes), ``score`` (Float64: the distinct value, or
        the bin's lower edge), ``label`` (Boolean: the label is favorable), then
        :data:`SCORE_COUNT_COLUMNS`: ``n`` (Int64 rows), ``weight`` (Float64 Σw), ``score_sum``
        (Σw·s), ``score_sq_sum`` (Σw·s²), ``score_min``, ``score_max``, ``weight_sq_sum`` (Σw²)
        (Float64). Sorted by the
        keys, ``score`` and ``label``. Rows with a null label, score or weight are dropped with a
        :class:`~polfair.exceptions.MissingValuesWarning` giving their count.

    Raises
    ------
    ColumnNotFoundError
        A named column is missing.
    InvalidInputError
        The score or weight is not numeric, a weight is negative, ``favorable`` does not match the
        label's dtype, or a score lies outside the bin edges.
    PolfairError
        Invalid ``bins`` / ``range``, or a key name is reserved (``score``, ``label``, ``n``, ...).

    Notes
    -----
    One pass: the input is scanned once (``tests/scores/test_scores_single_pass.py`` counts the
    scans). The tables of partitions merge with :func:`merge_score_counts`. A PySpark DataFrame or
    DuckDB relation runs the same ``group_by`` inside its own engine via narwhals (optional
    dependency; column names only) and only the small histogram comes back to Polars.

    Examples
    --------
    >>> import polars as pl
    >>> import polfair as pf
    >>> from polfair.scores import score_counts
    >>> h = score_counts(pf.load_compas(), y_true="two_year_recid", y_score="decile_score", protected="sex")
    >>> h.select("sex", "score", "label", "n").head(2).rows()
    [('Female', 1.0, False, 214), ('Female', 1.0, True, 47)]
    >>> int(h["n"].sum())
    6172
    """
    edges = _check_bins(bins, range)
    if is_foreign(data):
        return _finish(*_foreign_counts(data, y_true, y_score, protected, favorable, weight, by, edges), edges)
    req = score_counts_request(
        data, y_true=y_true, y_score=y_score, protected=protected, favorable=favorable, weight=weight, by=by
    )
    s, w, y = pl.col("__pf_s"), pl.col("__pf_w"), pl.col("__pf_y")
    keys = [*req.by, *req.keys]
    aggs = [
        pl.len().cast(pl.Int64).alias("n"),
        w.sum().alias("weight"),
        (w * s).sum().alias("score_sum"),
        (w * s * s).sum().alias("score_sq_sum"),
        s.min().alias("score_min"),
        s.max().alias("score_max"),
        (w * w).sum().alias("weight_sq_sum"),
        w.min().alias(_W_MIN),
    ]
    out = (
        req.frame.with_columns(_bin_expr(s, edges).alias("score"), y.alias("label"))
        .group_by([*keys, "score", "label"])
        .agg(aggs)
        .collect(engine=engine)
    )
    return _finish(out, keys, edges)


def _foreign_counts(
    data: Any,
    y_true: Any,
    y_score: Any,
    protected: Any,
    favorable: Any,
    weight: Any,
    by: Any,
    edges: tuple[float, ...] | None,
) -> tuple[pl.DataFrame, list[str]]:
    """The same ONE group_by inside a PySpark / DuckDB / ... frame's own engine, via narwhals."""
    try:
        import narwhals as nw
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        msg = "Spark/DuckDB inputs need narwhals: pip install 'polfair[spark]' (or pip install narwhals)"
        raise ImportError(msg) from exc

    def names(x: Any, role: str) -> list[str]:
        out = as_list(x)
        if not all(isinstance(v, str) for v in out):
            msg = f"{role}: frames of other engines take column names only (no Polars expressions), got {out!r}"
            raise TypeError(msg)
        return [str(v) for v in out]

    nf = nw.from_native(data)
    schema = nf.collect_schema()
    cols = list(schema.names())
    by_n, keys = names(by, "by"), names(protected, "protected")
    roles = {"y_score": names(y_score, "y_score"), "y_true": names(y_true, "y_true"), "weight": names(weight, "weight")}
    for role, v in [*roles.items(), ("by", by_n), ("protected", keys)]:
        for c in v:
            check_columns(pl.col(c), role, cols)
    for k in (*by_n, *keys):
        if k in _RESERVED or k.startswith("__pf_"):
            msg = f"key name {k!r} is reserved for the score table's columns; rename it"
            raise PolfairError(msg)
    s = nw.col(roles["y_score"][0]).cast(nw.Float64)
    if y_true is None:
        label = nw.lit(False)
    else:
        col = roles["y_true"][0]
        values = list(as_values(favorable))
        dtype = schema[col]
        if dtype == nw.Boolean:
            label = nw.col(col) if True in [bool(v) for v in values] else ~nw.col(col)
        elif dtype.is_numeric() != all(isinstance(v, (int, float)) for v in values):
            msg = f"favorable={values!r} cannot match y_true column {col!r} of dtype {dtype}"
            raise InvalidInputError(msg)
        else:
            label = nw.col(col).is_in(values)
    w = nw.lit(1.0) if weight is None else nw.col(roles["weight"][0]).cast(nw.Float64)
    score = s
    if edges is not None:
        score = nw.lit(edges[0])
        for e in edges[1:-1]:
            score = nw.when(s >= e).then(nw.lit(e)).otherwise(score)
        score = nw.when(~s.is_null()).then(score)
    table = (
        nf.with_columns(
            s.alias("__pf_s"), w.alias("__pf_w"), (w * s).alias("__pf_ws"), (w * s * s).alias("__pf_wss"),
            (w * w).alias("__pf_ww"),
            score.alias("score"), label.alias("label"),
        )
        .group_by([*by_n, *keys, "score", "label"])
        .agg(
            nw.len().alias("n"), nw.col("__pf_w").sum().alias("weight"), nw.col("__pf_ws").sum().alias("score_sum"),
            nw.col("__pf_wss").sum().alias("score_sq_sum"), nw.col("__pf_s").min().alias("score_min"),
            nw.col("__pf_s").max().alias("score_max"), nw.col("__pf_ww").sum().alias("weight_sq_sum"),
            nw.col("__pf_w").min().alias(_W_MIN),
        )
    )  # fmt: skip
    native = table.collect(backend="polars").to_native() if hasattr(table, "collect") else table.to_polars()
    out = native.with_columns(
        pl.col("n").cast(pl.Int64), pl.col("score").cast(pl.Float64), pl.col("label").cast(pl.Boolean),
        pl.col("weight", "score_sum", "score_sq_sum", "score_min", "score_max", "weight_sq_sum", _W_MIN).cast(pl.Float64),
    )  # fmt: skip
    return out, [*by_n, *keys]


def _finish(out: pl.DataFrame, keys: list[str], edges: tuple[float, ...] | None) -> pl.DataFrame:
    bad_w = out.filter(pl.col(_W_MIN) < 0)
    if bad_w.height:
        msg = f"weight has negative values (minimum {bad_w[_W_MIN].min()!r}); weights must be >= 0"
        raise InvalidInputError(msg)
    missing = out.filter(pl.col("score").is_null() | pl.col("label").is_null() | pl.col("weight").is_null())
    # a null weight on some rows of a cell makes Σw skip them; count rows with null weight too
    if missing.height:
        n_miss = int(missing["n"].sum())
        warnings.warn(
            f"{n_miss} rows with a null label, score or weight were excluded from the score histogram",
            MissingValuesWarning,
            stacklevel=3,
        )
        out = out.filter(pl.col("score").is_not_null() & pl.col("label").is_not_null() & pl.col("weight").is_not_null())
    if edges is not None and out.height:
        lo, hi = float(out["score_min"].min()), float(out["score_max"].max())  # type: ignore[arg-type]
        if lo < edges[0] or hi > edges[-1]:
            msg = (
                f"y_score has values in [{lo}, {hi}], outside the bin edges [{edges[0]}, {edges[-1]}]: "
                "give range=(lo, hi) or bins edges covering every score, or bins='exact'"
            )
            raise InvalidInputError(msg)
    return out.drop(_W_MIN).sort([*keys, "score", "label"], nulls_last=True)


def merge_score_counts(tables: Sequence[pl.DataFrame | pl.LazyFrame]) -> pl.DataFrame:
    """Merge score histograms of partitions (same keys and bins) into the histogram of their union.

    Sums ``n``, ``weight``, ``score_sum``, ``score_sq_sum``; takes the min of ``score_min`` and the
    max of ``score_max`` per (keys, ``score``, ``label``). Exact: merging the histograms of a split
    equals the histogram of the whole (for exact bins or the same bin edges).

    Parameters
    ----------
    tables
        Outputs of :func:`score_counts` with the same columns.

    Returns
    -------
    pl.DataFrame
        Same schema as :func:`score_counts`.

    Raises
    ------
    PolfairError
        If no table is given or the tables' columns differ.

    Examples
    --------
    >>> import polfair as pf
    >>> from polfair.scores import score_counts, merge_score_counts
    >>> df = pf.load_compas()
    >>> kw = dict(y_true="two_year_recid", y_score="decile_score", protected="race")
    >>> parts = [score_counts(df.head(3000), **kw), score_counts(df.tail(df.height - 3000), **kw)]
    >>> merge_score_counts(parts).equals(score_counts(df, **kw))
    True
    """
    frames = [t.collect() if isinstance(t, pl.LazyFrame) else t for t in tables]
    if not frames:
        msg = "merge_score_counts needs at least one table"
        raise PolfairError(msg)
    cols = frames[0].columns
    if any(f.columns != cols for f in frames) or not set(SCORE_COUNT_COLUMNS) <= set(cols):
        msg = "merge_score_counts: every table must be a score_counts output with the same columns"
        raise PolfairError(msg)
    keys = [c for c in cols if c not in SCORE_COUNT_COLUMNS]
    aggs = [pl.col(c).sum() for c in (*SCORE_COUNT_COLUMNS[:4], *SCORE_COUNT_COLUMNS[6:])]
    aggs += [pl.col("score_min").min(), pl.col("score_max").max()]
    return pl.concat(frames).group_by(keys).agg(aggs).select(cols).sort(keys, nulls_last=True)
