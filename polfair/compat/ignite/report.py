"""Multiclass and multilabel fairness reports and pytorch-ignite's two metrics, from the class cell table.

:func:`multiclass_report` is :func:`polfair.core.report.build.report_from_counts` of the class cell table
(:func:`polfair.compat.ignite.counts.multiclass_counts`) with ``class`` as an extra ``by`` key, plus
the class-free rows (accuracy, ignite's ``SubgroupAccuracyDifference`` and multiclass
``DemographicParityDifference``). Spreads over groups are
:func:`polfair.core.metrics.between_groups_difference` / ``between_groups_ratio`` (null when a group
is undefined).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Required, TypedDict, Unpack

import polars as pl

from polfair.compat.ignite.counts import CLASS, multiclass_counts
from polfair.core._args import as_list
from polfair.core._typing import IntoExpr
from polfair.core.metrics import between_groups_difference, between_groups_ratio, rate
from polfair.core.options import keywords_of
from polfair.core.report.build import attribute_sets, group_label, report_from_counts

__all__ = ["ClassRows", "multiclass_demographic_parity_difference", "multiclass_report", "subgroup_accuracy_difference"]


def _group_values(cells: pl.DataFrame, group: list[str], keys: list[str]) -> pl.DataFrame:
    """Per (group, class): selection rate; per group: accuracy. Rolled up from the class cell table."""
    sums = [pl.col(c).sum() for c in ("w", "tp", "fp", "n_correct", "w_correct", "n")]
    g = cells.group_by([*group, *keys, CLASS]).agg(sums)
    return g.with_columns(
        rate(pl.col("tp") + pl.col("fp"), pl.col("w")).alias("selection_rate"),
        rate(pl.col("w_correct"), pl.col("w")).alias("accuracy"),
    )


def multiclass_demographic_parity_difference(
    data: Any,
    *,
    y_true: IntoExpr,
    y_pred: IntoExpr,
    sensitive_features: IntoExpr | Sequence[IntoExpr],
    multilabel: bool = False,
    sample_weight: IntoExpr | None = None,
) -> float | None:
    """pytorch-ignite's ``DemographicParityDifference``: per-class gap, then the max over classes.

    ``max_c (max_g SR_gc − min_g SR_gc)``, ``SR_gc`` = weighted share of group g's valid rows
    predicted class c (multilabel: with label c set). Groups are the observed combinations of
    ``sensitive_features``.

    Parameters
    ----------
    data, y_true, y_pred, multilabel
        As in :func:`multiclass_counts` (labels, List/Array scores, or multilabel 0/1 lists).
    sensitive_features
        Column name(s) or expressions defining the groups.
    sample_weight
        Optional column name or expression of row weights.

    Returns
    -------
    float or None
        In [0, 1]; 0.0 with fewer than two groups (ignite raises); None if a group has zero
        total weight.

    Raises
    ------
    InvalidInputError, PolfairError, ColumnNotFoundError
        As :func:`multiclass_counts`.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"p": [[0.9, 0.1, 0.0], [0.1, 0.8, 0.1], [0.9, 0.0, 0.1], [0.0, 0.1, 0.9]],
    ...                    "y": [0, 1, 2, 0], "g": [0, 0, 1, 1]})
    >>> multiclass_demographic_parity_difference(df, y_true="y", y_pred="p", sensitive_features="g")
    0.5
    """
    cells = multiclass_counts(data, y_true=y_true, y_pred=y_pred, protected=sensitive_features,
                              multilabel=multilabel, weight=sample_weight)  # fmt: skip
    keys = [c for c in cells.columns[: cells.columns.index(CLASS)]]
    vals = _group_values(cells, [], keys)
    per_class = vals.group_by(CLASS).agg(between_groups_difference(pl.col("selection_rate")).alias("d"))
    if per_class["d"].null_count():
        return None
    return float(per_class["d"].max())  # type: ignore[arg-type]


def subgroup_accuracy_difference(
    data: Any,
    *,
    y_true: IntoExpr,
    y_pred: IntoExpr,
    sensitive_features: IntoExpr | Sequence[IntoExpr],
    multilabel: bool = False,
    sample_weight: IntoExpr | None = None,
) -> float | None:
    """pytorch-ignite's ``SubgroupAccuracyDifference``: ``max_g acc_g − min_g acc_g``.

    ``acc_g`` is the weighted share of group g's valid rows predicted right: the argmax class
    (scores), the label (labels), or every label (multilabel: exact match, as ignite's
    ``Accuracy(is_multilabel=True)``).

    Parameters
    ----------
    data, y_true, y_pred, multilabel
        As in :func:`multiclass_counts`.
    sensitive_features
        Column name(s) or expressions defining the groups.
    sample_weight
        Optional column name or expression of row weights.

    Returns
    -------
    float or None
        In [0, 1]; 0.0 with fewer than two groups (ignite raises); None if a group has zero total
        weight.

    Raises
    ------
    InvalidInputError, PolfairError, ColumnNotFoundError
        As :func:`multiclass_counts`.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": [0, 1, 2, 0], "p": [0, 1, 0, 2], "g": ["a", "a", "b", "b"]})
    >>> subgroup_accuracy_difference(df, y_true="y", y_pred="p", sensitive_features="g")
    1.0
    """
    cells = multiclass_counts(data, y_true=y_true, y_pred=y_pred, protected=sensitive_features,
                              multilabel=multilabel, weight=sample_weight)  # fmt: skip
    keys = [c for c in cells.columns[: cells.columns.index(CLASS)]]
    first = cells.filter(pl.col(CLASS) == cells[CLASS][0])  # accuracy is the same in every class row
    acc = first.group_by(keys).agg(pl.col("w_correct").sum(), pl.col("w").sum())
    out = acc.select(between_groups_difference(rate(pl.col("w_correct"), pl.col("w")))).item()
    return None if out is None else float(out)


class ClassRows(TypedDict, total=False):
    """The keywords of :func:`multiclass_counts` (what the class pass reads), as :func:`multiclass_report` takes them.

    ``y_true``, ``y_pred`` and ``protected`` (required), ``multilabel``, ``by``, ``weight``, ``classes``
    and ``on_missing``: each as in :func:`multiclass_counts`, with its default there.
    """

    y_true: Required[IntoExpr]
    y_pred: Required[IntoExpr]
    protected: Required[IntoExpr | Sequence[IntoExpr]]
    multilabel: bool
    by: IntoExpr | Sequence[IntoExpr] | None
    weight: IntoExpr | None
    classes: Sequence[Any] | None
    on_missing: str


@keywords_of(multiclass_counts)
def multiclass_report(
    data: Any, *, intersections: int | Sequence[Sequence[str]] | None = None, **rows: Unpack[ClassRows]
) -> pl.DataFrame:
    """Fairness report of a multiclass or multilabel classifier, from one pass over the data.

    The report is :func:`polfair.report_from_counts` of the class cell table with ``class`` as an
    extra ``by`` key: for every class, the full binary report of the one-vs-rest problem
    "class c or not" (``selection_rate`` = share predicted c, ``true_positive_rate`` = recall of c,
    disparities, ...), plus rows with a null ``class`` for the class-free metrics:

    * group rows: ``accuracy`` (multilabel: exact-match ratio) per group;
    * attribute rows: ``accuracy`` spread (``difference`` = max − min, ``ratio`` = min / max),
      ``subgroup_accuracy_difference`` (ignite) and ``demographic_parity_difference`` = the max over
      classes of the per-class values (ignite's multiclass ``DemographicParityDifference``);
    * population rows: ``accuracy`` of everyone.

    Parameters
    ----------
    data, y_true, y_pred, protected, multilabel, by, weight, classes, on_missing
        As in :func:`multiclass_counts`.
    intersections
        As in :func:`polfair.fairness_report`.

    Returns
    -------
    pl.DataFrame
        The report schema of :mod:`polfair.core.report.build` with the ``class`` key after ``by``:
        ``*by, class, attribute, group, metric, value, reference_group, difference, ratio, n``.
        Per-class one-vs-rest rows have the class; class-free rows have ``class`` null (first).

    Raises
    ------
    InvalidInputError, PolfairError, ColumnNotFoundError
        As :func:`multiclass_counts`.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": [0, 1, 2, 0], "p": [0, 1, 0, 2], "g": ["a", "a", "b", "b"]})
    >>> rep = multiclass_report(df, y_true="y", y_pred="p", protected="g")
    >>> rep.filter(pl.col("group").is_null(), pl.col("attribute") == "g",
    ...            pl.col("metric") == "demographic_parity_difference").select("class", "value")
    shape: (4, 2)
    ┌───────┬───────┐
    │ class ┆ value │
    │ ---   ┆ ---   │
    │ i64   ┆ f64   │
    ╞═══════╪═══════╡
    │ null  ┆ 0.5   │
    │ 0     ┆ 0.0   │
    │ 1     ┆ 0.5   │
    │ 2     ┆ 0.5   │
    └───────┴───────┘
    """
    cells = multiclass_counts(data, **rows)
    ci = cells.columns.index(CLASS)
    n_by = len(as_list(rows.get("by")))
    by_names, keys = cells.columns[:n_by], cells.columns[n_by:ci]
    binary = report_from_counts(
        cells.drop("n_correct", "w_correct"), protected=keys, by=[*by_names, CLASS], intersections=intersections,
        ci=None, max_groups_per_attribute=None,
    )
    # class-free rows: accuracy is the same in every class row of a cell, so take one class
    one = cells.filter(pl.col(CLASS) == cells[CLASS][0]).drop(CLASS)
    acc = rate(pl.col("w_correct"), pl.col("w"))
    null_class = pl.lit(None, cells.schema[CLASS]).alias(CLASS)
    frames = []
    pop = one.group_by(by_names).agg(pl.col("w_correct", "w", "n").sum()) if by_names else one.select(
        pl.col("w_correct", "w", "n").sum())
    frames.append(pop.select(*by_names, null_class, pl.lit("accuracy").alias("metric"), acc.alias("value"),
                             pl.col("n").cast(pl.Int64), pl.lit(-1).alias("__pf_a")))  # fmt: skip
    dpd = binary.filter(pl.col("group").is_null(), pl.col("attribute").is_not_null(),
                        pl.col("metric") == "demographic_parity_difference")  # fmt: skip
    for ai, attrs in enumerate(attribute_sets(keys, intersections)):
        frames += _attribute_set_rows(one, dpd, by_names, attrs, ai, null_class)
    free = pl.concat(frames, how="diagonal_relaxed")
    free = free.with_row_index("__pf_i").sort([*by_names, "__pf_a", "__pf_i"], nulls_last=False)
    free = free.drop("__pf_i", "__pf_a")
    both = pl.concat([free, binary], how="diagonal_relaxed")
    cols = [*by_names, CLASS, *[c for c in binary.columns if c not in (*by_names, CLASS)]]  # core + later columns
    both = both.select([pl.col(c).cast(binary.schema[c]) if c in binary.schema else pl.col(c) for c in cols])
    if by_names:
        both = both.with_row_index("__pf_i").sort([*by_names, "__pf_i"], nulls_last=False).drop("__pf_i")
    return both


def _attribute_set_rows(
    one: pl.DataFrame, dpd: pl.DataFrame, by_names: list[str], attrs: tuple[str, ...], ai: int, null_class: pl.Expr
) -> list[pl.DataFrame]:
    """The class-free rows of one attribute set: accuracy per group, its spread, ignite's two metrics.

    ``one`` is the class cell table of one class (accuracy is the same in every class), ``dpd`` the
    per-class ``demographic_parity_difference`` attribute rows of the binary report; ``ai`` orders
    the attribute sets.
    """
    acc = rate(pl.col("w_correct"), pl.col("w"))
    frames = []
    name = " & ".join(attrs)
    g = one.group_by([*by_names, *attrs]).agg(pl.col("w_correct", "w", "n").sum()).sort(
        [*by_names, *attrs], nulls_last=False)
    g = g.with_columns(acc.alias("value"), group_label(attrs).alias("group"))
    frames.append(g.select(*by_names, null_class, pl.lit(name).alias("attribute"), "group",
                           pl.lit("accuracy").alias("metric"), "value", pl.col("n").cast(pl.Int64),
                           pl.lit(ai).alias("__pf_a")))  # fmt: skip
    aggs = [
        between_groups_difference(pl.col("value")).alias("difference"),
        between_groups_ratio(pl.col("value")).alias("ratio"),
        pl.col("n").sum().cast(pl.Int64),
    ]
    s = g.group_by(by_names).agg(aggs) if by_names else g.select(aggs)
    base: list[str | pl.Expr] = [
        *by_names, null_class, pl.lit(name).alias("attribute"), pl.lit(ai).alias("__pf_a"), "n"
    ]
    frames.append(s.select(*base, pl.lit("accuracy").alias("metric"), "difference", "ratio"))
    frames.append(s.select(*base, pl.lit("subgroup_accuracy_difference").alias("metric"),
                           pl.col("difference").alias("value")))  # fmt: skip
    mx = dpd.filter(pl.col("attribute") == name)
    mx = mx.group_by(by_names).agg(pl.when(pl.col("value").null_count() == 0).then(pl.col("value").max()))\
        if by_names else mx.select(pl.when(pl.col("value").null_count() == 0).then(pl.col("value").max()))
    mx = s.select(*by_names, "n").join(mx, on=by_names, how="left", nulls_equal=True) if by_names else \
        s.select("n").join(mx, how="cross")
    frames.append(mx.select(*base, pl.lit("demographic_parity_difference").alias("metric"),
                            pl.col("value").cast(pl.Float64)))  # fmt: skip
    return frames
