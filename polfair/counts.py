"""Stage 2, *counts*: the one pass over the data that produces the cell table.

The pass is a single ``group_by(by + protected keys + [outcome code]).agg(n, Σw, Σw·s, Σw·(1-s))``
over the user's rows (the outcome code is described in :mod:`polfair.spec`). The outcome code is a
tiny integer key, so this is much cheaper than one conditional sum per confusion cell (see
``docs/design.md``). Pivoting the code into the confusion columns then happens on that result,
which has at most 16 rows per cell. Everything after this module reads only the cell table.

Cell table schema (one row per observed combination of ``by`` and protected keys, sorted by them,
nulls first). It is a public, stable format: tables from partitions merge by summation
(:func:`merge_counts`).

=============  ========  ==================================================================
column         dtype     meaning
=============  ========  ==================================================================
*by*, *keys*   input's   the ``by`` columns, then the protected attributes (null kept as null)
``n``          UInt64    rows in the cell, all of them (valid + missing + invalid)
``n_missing``  UInt64    rows with a null label, prediction, score or weight (excluded below)
``n_invalid``  UInt64    rows with an invalid label/score/weight (excluded; the report raises)
``w``          Float64   Σ weight over the counted rows (= their number when unweighted)
``tp fp tn fn``Float64   weighted confusion counts w.r.t. the favorable label
``tp_n`` ...   UInt64    the same four, unweighted (aif360's entropy indices ignore weights)
``gtp gfp``    Float64   Σ w·s over y = fav, Σ w·s over y = unfav (s = score, or 1[ŷ = fav])
``gtn gfn``    Float64   Σ w·(1−s) over y = unfav, Σ w·(1−s) over y = fav
=============  ========  ==================================================================

Without predictions (labels-only audits) the prediction mirrors the label, so ``fp = fn = 0``.
"""

from __future__ import annotations

from typing import Any, Sequence

import polars as pl

from polfair.spec import (
    CODE,
    CODE_VALUES,
    FLAG_BAD_SCORE,
    FLAG_BAD_WEIGHT,
    FLAG_NULL_SCORE,
    FLAG_NULL_WEIGHT,
    W,
    W1S,
    WS,
    IntoExpr,
    Spec,
    build_spec,
    fold_values,
)

__all__ = [
    "CONFUSION_COLUMNS",
    "COUNT_COLUMNS",
    "COUNT_DTYPES",
    "confusion_counts",
    "merge_counts",
]

#: Count columns of the cell table, in schema order.
COUNT_COLUMNS = (
    "n", "n_missing", "n_invalid", "w", "tp", "fp", "tn", "fn",
    "tp_n", "fp_n", "tn_n", "fn_n", "gtp", "gfp", "gtn", "gfn",
)  # fmt: skip
CONFUSION_COLUMNS = COUNT_COLUMNS[3:]
#: The dtype of every count column (unweighted counts UInt64, weighted sums Float64).
COUNT_DTYPES: dict[str, pl.DataType] = {
    c: pl.UInt64() if c in ("n", "n_missing", "n_invalid") or c.endswith("_n") else pl.Float64()
    for c in COUNT_COLUMNS
}

_N = "__pf_n"
_K = "__pf_k"


def code_counts(spec: Spec) -> pl.LazyFrame:
    """The pass over the data: counts per (by, keys, outcome code). Internal, see module doc."""
    aggs = [pl.len().cast(pl.UInt64).alias(_N)]
    if spec.weighted:  # a sum of its own, so integer weights give exact integer totals
        aggs.append(pl.col(W).sum())
    if spec.has_scores:
        aggs += [pl.col(WS).sum(), pl.col(W1S).sum()]
    group = [*spec.by, *spec.keys]
    if not spec.fold:
        return spec.lf.group_by([*group, CODE]).agg(aggs)
    # Small-domain keys: group on ONE integer holding every key's value slot and the outcome
    # code (a single-integer hash is cheaper than hashing several columns), then decode the keys
    # on the small result. Slot = physical value, or `size` for null.
    dt = pl.UInt32 if fold_values(spec.fold) <= 2**32 else pl.UInt64
    folded = None
    for name, (size, dtype) in zip(group, spec.fold):
        phys = pl.col(name) if dtype == pl.Boolean else pl.col(name).to_physical()
        slot = phys.cast(dt).fill_null(size)
        folded = slot if folded is None else folded * (size + 1) + slot
    folded = pl.col(CODE).cast(dt) + CODE_VALUES * folded
    decoded, step = [], CODE_VALUES
    for name, (size, dtype) in reversed(list(zip(group, spec.fold))):
        slot = (pl.col(_K) // step) % (size + 1)
        known = pl.when(slot < size)
        if dtype == pl.Boolean:
            decoded.append(known.then(slot == 1).alias(name))
        else:
            physical = pl.Series(dtype=dtype).to_physical().dtype
            decoded.append(known.then(slot).cast(physical).cat.to(dtype).alias(name))
        step *= size + 1
    code = (pl.col(_K) % CODE_VALUES).cast(pl.UInt8).alias(CODE)
    return spec.lf.group_by(folded.alias(_K)).agg(aggs).select(*reversed(decoded), code, *[a.meta.output_name() for a in aggs])


def _slot(code: int) -> int:
    """Where rows with outcome ``code`` go: 0 tp, 1 fp, 2 tn, 3 fn, 4 missing, 5 invalid."""
    label, pred, flags = code % 4, code // 4 % 4, code // 16
    if label == 3 or pred == 3 or flags % 4:  # flag bits 0, 1: invalid score / weight
        return 5
    if label == 2 or pred == 2 or flags >= 4:  # bits 2, 3: null weight / score
        return 4
    return {(1, 1): 0, (0, 1): 1, (0, 0): 2, (1, 0): 3}[(label, pred)]


#: The slot of every possible outcome code (a UInt8 code indexes it directly).
_SLOTS = pl.Series("__pf_slot", [_slot(c) for c in range(CODE_VALUES)], dtype=pl.UInt8)


def pivot_codes(codes: pl.LazyFrame, spec: Spec) -> pl.LazyFrame:
    """Turn per-code counts into the cell table (runs on the small result of :func:`code_counts`)."""
    n, slot = pl.col(_N), pl.col(_SLOTS.name)
    wt = pl.col(W) if spec.weighted else n.cast(pl.Float64)
    # default scores are 1[ŷ = fav] (aif360), so then the generalized counts are the hard ones
    ws = pl.col(WS) if spec.has_scores else pl.when(slot.is_in([0, 1])).then(wt).otherwise(0.0)
    w1s = pl.col(W1S) if spec.has_scores else pl.when(slot.is_in([2, 3])).then(wt).otherwise(0.0)

    def at(x: pl.Expr, *slots: int) -> pl.Expr:
        zero = pl.lit(0, pl.UInt64) if x is n else pl.lit(0.0)
        return pl.when(slot.is_in(list(slots)) if len(slots) > 1 else slot == slots[0]).then(x).otherwise(zero)

    columns = {
        "n": n, "n_missing": at(n, 4), "n_invalid": at(n, 5), "w": at(wt, 0, 1, 2, 3),
        "tp": at(wt, 0), "fp": at(wt, 1), "tn": at(wt, 2), "fn": at(wt, 3),
        "tp_n": at(n, 0), "fp_n": at(n, 1), "tn_n": at(n, 2), "fn_n": at(n, 3),
        "gtp": at(ws, 0, 3), "gfp": at(ws, 1, 2), "gtn": at(w1s, 1, 2), "gfn": at(w1s, 0, 3),
    }  # fmt: skip
    group = [*spec.by, *spec.keys]
    # sort the (small) code table first so the weighted sums below add in the same order every run;
    # each row's amounts go to its slot's columns (zeros elsewhere), then one plain sum per column
    out = (
        codes.sort([*group, CODE], nulls_last=False)
        .with_columns(pl.lit(_SLOTS).gather(pl.col(CODE)))
        .select(*group, *[e.alias(c) for c, e in columns.items()])
    )
    if group:
        return out.group_by(group, maintain_order=True).agg(pl.all().sum())
    return out.select(pl.all().sum())


def describe_code_problems(codes: pl.DataFrame) -> dict[str, int]:
    """Row totals per problem kind from a collected :func:`code_counts` result."""
    o = pl.col(CODE).cast(pl.Int32)
    label, pred, flags = o % 4, (o // 4) % 4, o // 16
    kinds = {
        "invalid_label": label == 3,
        "invalid_prediction": pred == 3,
        "invalid_score": ((flags // FLAG_BAD_SCORE) % 2) == 1,
        "invalid_weight": ((flags // FLAG_BAD_WEIGHT) % 2) == 1,
        "null_label": label == 2,
        "null_prediction": pred == 2,
        "null_weight": ((flags // FLAG_NULL_WEIGHT) % 2) == 1,
        "null_score": ((flags // FLAG_NULL_SCORE) % 2) == 1,
    }
    row = codes.select(
        [pl.col(_N).filter(mask).sum().alias(k) for k, mask in kinds.items()]
    ).row(0, named=True)
    return {k: int(v or 0) for k, v in row.items()}


def confusion_counts(
    data: Any,
    *,
    y_true: IntoExpr,
    y_pred: IntoExpr | None = None,
    y_score: IntoExpr | None = None,
    threshold: float = 0.5,
    protected: IntoExpr | Sequence[IntoExpr],
    favorable: Any = 1,
    unfavorable: Any = None,
    weight: IntoExpr | None = None,
    by: IntoExpr | Sequence[IntoExpr] | None = None,
) -> pl.LazyFrame:
    """Weighted confusion counts per cell of every protected-attribute combination, in one pass.

    Builds (does not run) ONE ``group_by`` over the input that yields the sufficient statistics
    of every group metric polfair computes: the *cell table*. Collect it with
    ``.collect(engine="streaming")`` to run out of core.

    Parameters
    ----------
    data
        ``pl.DataFrame``, ``pl.LazyFrame``, pandas DataFrame, pyarrow Table, dict of columns, a
        path/glob/hive directory of parquet or CSV files (scanned lazily), or a PySpark DataFrame /
        DuckDB relation (the pass then runs inside that engine at call time, via narwhals, and only
        the small result is collected; column arguments must be names; see :mod:`polfair.backends`).
    y_true
        Column name or expression of the true labels, one per row. Integer, boolean or string.
    y_pred
        Column name or expression of the predicted labels (same values as ``y_true``), or a boolean
        expression such as ``pl.col("decile_score") >= 5``. A boolean next to 0/1 labels is read
        as the label (True = 1); next to other labels (strings) True means "predicted favorable".
    y_score
        Column name or expression of scores, P(favorable label), Float in [0, 1]. Used for the
        generalized counts and, when ``y_pred`` is not given, for ``ŷ = score >= threshold``.
    threshold
        Float in [0, 1]; the decision threshold for ``y_score``. Default 0.5.
    protected
        One or more column names or named expressions (bin numerics with e.g.
        ``pl.col("age").cut([25, 45]).alias("age_band")``). Null values are kept as a group.
    favorable
        Label value, or list of values, that is the favorable outcome. Default ``1``.
    unfavorable
        Optional label value(s) that are unfavorable. When given, a label that is neither is an
        error (counted in ``n_invalid``); when omitted every other value is unfavorable.
    weight
        Optional column name or expression of non-negative instance weights (Float64).
    by
        Optional column name(s) or expressions; one independent set of cells per ``by`` value.

    Returns
    -------
    pl.LazyFrame
        The cell table. Columns: ``*by``, ``*protected`` (input dtypes), then
        ``n, n_missing, n_invalid`` (UInt64), ``w, tp, fp, tn, fn`` (Float64),
        ``tp_n, fp_n, tn_n, fn_n`` (UInt64), ``gtp, gfp, gtn, gfn`` (Float64); one row per
        observed cell, sorted by the keys (nulls first). See :mod:`polfair.counts`.

    Raises
    ------
    ColumnNotFoundError
        A named column is missing (at call time).
    PolfairError
        Invalid options (at call time). Data problems (labels outside favorable/unfavorable,
        scores outside [0, 1], negative weights) are *counted* in ``n_invalid`` here;
        :func:`polfair.fairness_report` raises on them.

    Notes
    -----
    Counts are exact 64-bit integers when unweighted; weighted sums are Float64 and may differ in
    the last bits between runs of the streaming engine (summation order). With
    ``y_pred`` and ``y_score`` both absent, the prediction mirrors the label (``fp = fn = 0``), so
    the label-side metrics (base rates) are what remains meaningful.

    Examples
    --------
    >>> import polars as pl
    >>> import polfair as pf
    >>> df = pl.DataFrame({"y": [1, 0, 1, 1], "p": [1, 1, 0, 1], "sex": ["f", "f", "m", "m"]})
    >>> cells = pf.confusion_counts(df, y_true="y", y_pred="p", protected="sex").collect()
    >>> cells.select("sex", "n", "tp", "fp", "tn", "fn")
    shape: (2, 6)
    ┌─────┬─────┬─────┬─────┬─────┬─────┐
    │ sex ┆ n   ┆ tp  ┆ fp  ┆ tn  ┆ fn  │
    │ --- ┆ --- ┆ --- ┆ --- ┆ --- ┆ --- │
    │ str ┆ u64 ┆ f64 ┆ f64 ┆ f64 ┆ f64 │
    ╞═════╪═════╪═════╪═════╪═════╪═════╡
    │ f   ┆ 2   ┆ 1.0 ┆ 1.0 ┆ 0.0 ┆ 0.0 │
    │ m   ┆ 2   ┆ 1.0 ┆ 0.0 ┆ 0.0 ┆ 1.0 │
    └─────┴─────┴─────┴─────┴─────┴─────┘
    """
    from polfair.backends import foreign_code_table, is_foreign

    kwargs = dict(y_true=y_true, y_pred=y_pred, y_score=y_score, threshold=threshold, protected=protected,
                  favorable=favorable, unfavorable=unfavorable, weight=weight, by=by)  # fmt: skip
    if is_foreign(data):  # Spark, DuckDB, ...: the pass runs now, in that engine
        codes, fspec = foreign_code_table(data, **kwargs)  # type: ignore[arg-type]
        return pivot_codes(codes.lazy(), fspec)  # type: ignore[arg-type]
    spec = build_spec(data, **kwargs)  # type: ignore[arg-type]
    return pivot_codes(code_counts(spec), spec)


def merge_counts(tables: Sequence[pl.DataFrame | pl.LazyFrame]) -> pl.LazyFrame:
    """Merge cell tables of partitions (files, days, batches) into the table of their union.

    Cell tables are additive: concatenating them and summing every count column per key gives
    exactly the table a single pass over all the data gives (integer counts exactly; weighted
    sums up to floating-point summation order).

    Parameters
    ----------
    tables
        Cell tables from :func:`confusion_counts` with the same key columns (eager or lazy).

    Returns
    -------
    pl.LazyFrame
        A cell table with the same schema, sorted by its keys (nulls first).

    Raises
    ------
    PolfairError
        If ``tables`` is empty or the tables' columns differ.

    Examples
    --------
    >>> import polars as pl
    >>> import polfair as pf
    >>> df = pl.DataFrame({"y": [1, 0, 1, 1], "p": [1, 1, 0, 1], "g": ["a", "a", "b", "b"]})
    >>> parts = [pf.confusion_counts(d, y_true="y", y_pred="p", protected="g") for d in (df[:2], df[2:])]
    >>> merged = pf.merge_counts(parts).collect()
    >>> merged.equals(pf.confusion_counts(df, y_true="y", y_pred="p", protected="g").collect())
    True
    """
    from polfair.exceptions import PolfairError

    lfs = [t.lazy() for t in tables]
    if not lfs:
        msg = "merge_counts needs at least one cell table"
        raise PolfairError(msg)
    cols = lfs[0].collect_schema().names()
    for lf in lfs[1:]:
        if lf.collect_schema().names() != cols:
            msg = f"cell tables differ in columns: {cols} vs {lf.collect_schema().names()}"
            raise PolfairError(msg)
    keys = [c for c in cols if c not in COUNT_COLUMNS]
    both = pl.concat(lfs, how="vertical_relaxed")
    sums = [pl.col(c).sum() for c in cols if c in COUNT_COLUMNS]
    if not keys:
        return both.select(sums)
    return both.group_by(keys).agg(sums).sort(keys, nulls_last=False).select(cols)
