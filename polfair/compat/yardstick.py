"""Groupwise fairness metrics: a per-group metric plus an aggregate over the groups (yardstick).

R's yardstick (>= 1.3.0) builds a fairness metric from two parts: a per-group metric (or a set of
them) and an ``aggregate`` that turns the per-group values into one number
(``new_groupwise_metric(fn, name, aggregate)``). This module does the same on polfair's report:

* the per-group values are the report's group rows for metrics of :data:`polfair.core.metrics.METRICS`
  (so each metric is still defined once, and computed from the one-pass cell table);
* the aggregate is a built-in :class:`Aggregate` (:data:`diff_range`, :data:`ratio_range`,
  :data:`max_abs_difference_to_reference`) or any Polars expression over the per-group values;
* with several metrics, the aggregate runs per metric and the per-metric results are combined
  with ``max`` (or ``min`` for ratio-like aggregates): yardstick's ``equalized_odds`` is
  ``max(range(sensitivity), range(specificity))``.

The result is one *attribute-level* row (``group`` null) per attribute set and ``by`` group of
the report, computed in the same pass as the rest of the report
(``fairness_report(..., user_metrics=[demographic_parity, ...])``). ``by`` plays the role of
yardstick's grouped data frames (one estimate per outer group) and fairlearn's control features.

Undefined values: the built-in aggregates are null when any group's value is null (a rate with a
zero denominator), as yardstick's ``diff_range`` is NA when any group is NA; a combination over
several metrics is null when any per-metric value is null.

Source: yardstick ``R/fair-aaa.R``, ``R/fair-demographic_parity.R``,
``R/fair-equal_opportunity.R``, ``R/fair-equalized_odds.R`` (tidymodels/yardstick).
"""

from __future__ import annotations

import difflib
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import polars as pl

from polfair.core.metrics import ALIASES, METRICS, between_groups_difference, between_groups_ratio
from polfair.core.passes.collect import collect_cells
from polfair.core.passes.spec import build_spec
from polfair.core.report.build import REPORT_COLUMNS as _REPORT_COLUMNS
from polfair.core.report.build import report_from_counts
from polfair.core.report.selection import SELECTABLE
from polfair.exceptions import PolfairError

__all__ = [
    "GROUPWISE",
    "Aggregate",
    "GroupwiseMetric",
    "add_groupwise_rows",
    "demographic_parity",
    "diff_range",
    "equal_opportunity",
    "equalized_odds",
    "groupwise_metric",
    "max_abs_difference_to_reference",
    "ratio_range",
    "resolve",
    "split_metrics",
]

Combine = Literal["max", "min", "mean"]
Direction = Literal["minimize", "maximize", "zero"]

_MONITOR_COLUMNS = ("threshold", "status")
_AI, _IS_GROUP = "__pf_gw_ai", "__pf_gw_isgroup"


@dataclass(frozen=True)
class Aggregate:
    """How per-group values of one metric become one number, and how metrics combine.

    Attributes
    ----------
    name
        Name shown in ``repr`` and docs.
    expr
        Polars aggregation expression evaluated over the group rows of one metric within one
        (``by`` group, attribute set). It may read the report columns ``value`` (the group's metric
        value, Float64), ``difference`` (value − reference value), ``ratio`` (value / reference),
        ``n`` (rows in the group, Int64), ``group`` and ``reference_group`` (String). It must give
        one number per attribute set.
    combine
        ``"max"``, ``"min"`` or ``"mean"``: how the per-metric results of a metric *set* combine
        (the worst case: ``max`` for differences, ``min`` for ratios).
    direction
        ``"minimize"`` (0 is fair), ``"maximize"`` (1 is fair, for ratios) or ``"zero"``.
    reports_reference
        Whether the result row carries the reference group's name.
    """

    name: str
    expr: pl.Expr
    combine: Combine = "max"
    direction: Direction = "minimize"
    reports_reference: bool = False


def _all_defined(col: str, e: pl.Expr) -> pl.Expr:
    return pl.when(pl.col(col).null_count() == 0).then(e)


#: ``max(value) − min(value)`` over the groups (yardstick's ``diff_range``; fairlearn's
#: ``difference(method="between_groups")``); null if any group's value is null.
diff_range = Aggregate("diff_range", between_groups_difference(pl.col("value")), "max", "minimize")

#: ``min(value) / max(value)`` over the groups (fairlearn's ``ratio(method="between_groups")``);
#: null if any group's value is null or the max is 0. Sets of metrics combine with ``min``.
ratio_range = Aggregate("ratio_range", between_groups_ratio(pl.col("value")), "min", "maximize")

#: ``max_g |value_g − value_ref|`` over the groups, against the report's reference group (the
#: ``privileged=``/``reference=`` choice of :func:`polfair.fairness_report`); null if any group's
#: difference is undefined.
max_abs_difference_to_reference = Aggregate(
    "max_abs_difference_to_reference",
    _all_defined("difference", pl.col("difference").abs().max()),
    "max",
    "minimize",
    reports_reference=True,
)


@dataclass(frozen=True)
class GroupwiseMetric:
    """A fairness metric made of per-group metric(s) and an aggregate (see :func:`groupwise_metric`).

    Attributes
    ----------
    name
        The ``metric`` value of its report rows.
    metrics
        Canonical names of the per-group metrics (keys of :data:`polfair.core.metrics.METRICS`).
    aggregate
        The :class:`Aggregate` applied per metric.
    combine
        How per-metric results combine when there are several metrics.
    direction
        ``"minimize"``, ``"maximize"`` or ``"zero"`` (informational, as yardstick's ``direction``).
    """

    name: str
    metrics: tuple[str, ...]
    aggregate: Aggregate
    combine: Combine
    direction: Direction

    @property
    def needs(self) -> str:
        """``"predictions"`` if any per-group metric needs predictions, else ``"labels"``."""
        return "predictions" if any(METRICS[m].needs == "predictions" for m in self.metrics) else "labels"

    def compute(self, data: Any, **report_kwargs: Any) -> pl.DataFrame:
        """Run :func:`polfair.fairness_report` with this metric and return only its rows.

        Parameters
        ----------
        data
            Any input :func:`polfair.fairness_report` accepts.
        **report_kwargs
            Keyword arguments of :func:`polfair.fairness_report` (``y_true``, ``y_pred``,
            ``protected``, ``by``, ...), except ``metrics``.

        Returns
        -------
        pl.DataFrame
            The report rows of this metric (report schema): one per attribute set and ``by`` group.

        Raises
        ------
        PolfairError
            As :func:`polfair.fairness_report`, or ``metrics=`` passed in ``report_kwargs``.

        Examples
        --------
        >>> import polars as pl
        >>> df = pl.DataFrame({"y": [1, 0, 1, 0], "p": [1, 1, 0, 0], "g": ["a", "a", "b", "b"]})
        >>> demographic_parity.compute(df, y_true="y", y_pred="p", protected="g")["value"].item()
        1.0
        """
        if "metrics" in report_kwargs:
            msg = "compute() adds this metric itself; do not pass metrics= (use fairness_report for several)"
            raise PolfairError(msg)
        monitor_only = sorted(set(report_kwargs) & _MONITOR_KEYWORDS)
        if monitor_only:
            msg = (
                f"compute() takes the report's data keywords, not the monitor's {monitor_only}: use "
                f"pf.fairness_report(data, user_metrics=[{self.name!r}], ...) for those"
            )
            raise PolfairError(msg)
        kw = dict(report_kwargs)
        run = {k: kw.pop(k) for k in ("on_missing", "engine") if k in kw}
        rep_kw = {k: kw.pop(k) for k in _REPORT_KEYWORDS if k in kw}
        spec = build_spec(data, **kw)
        cells = collect_cells(spec, **run)
        rep = report_from_counts(cells, protected=spec.keys, by=spec.by, has_predictions=spec.has_predictions, ci=None,
                                 max_groups_per_attribute=None, **rep_kw)  # fmt: skip  (every group's metric)
        return add_groupwise_rows(rep, [self]).filter(pl.col("metric") == self.name)


#: Keywords of :func:`polfair.fairness_report` that belong to the monitor, not to ``compute()``.
_MONITOR_KEYWORDS = frozenset({"thresholds", "min_sample_size", "max_sample_size", "config"})
#: Keywords that ``compute()`` passes to :func:`polfair.core.report.build.report_from_counts`.
_REPORT_KEYWORDS = ("privileged", "reference", "intersections", "alpha", "concentration")


def _canonical(m: str) -> str:
    if not isinstance(m, str):
        msg = f"groupwise_metric: metric names must be strings, got {type(m).__name__}: {m!r}"
        raise TypeError(msg)
    name = ALIASES.get(m, m)
    if name not in METRICS:
        import difflib

        known = [*METRICS, *ALIASES]
        close = difflib.get_close_matches(m, known, n=3, cutoff=0.5)
        hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
        msg = (
            f"groupwise_metric: {m!r} is not a count-based group metric of polfair.core.metrics.METRICS.{hint} "
            f"Known: {', '.join(METRICS)} (aliases: {', '.join(ALIASES)})"
        )
        raise PolfairError(msg)
    return name


def groupwise_metric(
    metric_or_metrics: str | Sequence[str],
    *,
    name: str,
    aggregate: Aggregate | pl.Expr = diff_range,
    combine: Combine | None = None,
    direction: Direction | None = None,
) -> GroupwiseMetric:
    """Build a fairness metric from per-group metric(s) and an aggregate (yardstick's factory).

    Parameters
    ----------
    metric_or_metrics
        A metric name of :data:`polfair.core.metrics.METRICS` (or an alias of :data:`polfair.core.metrics.ALIASES`,
        e.g. ``"sensitivity"``), or a list of them (yardstick's ``metric_set``).
    name
        The name of the new metric (the ``metric`` column of its report rows). It must not be the
        name of a metric the report already has.
    aggregate
        A built-in :class:`Aggregate` (:data:`diff_range` default, :data:`ratio_range`,
        :data:`max_abs_difference_to_reference`) or any Polars aggregation expression over the
        per-group rows of one metric (columns ``value``, ``difference``, ``ratio``, ``n``,
        ``group``, ``reference_group``), e.g. ``pl.col("value").std()``. It must give one number.
    combine
        ``"max"``, ``"min"`` or ``"mean"``: how per-metric results combine for a metric set.
        Default: the aggregate's own (``max`` for differences, ``min`` for :data:`ratio_range`;
        ``max`` for an expression).
    direction
        ``"minimize"``, ``"maximize"`` or ``"zero"``; default the aggregate's (``"minimize"`` for an
        expression). Informational.

    Returns
    -------
    GroupwiseMetric
        Pass it in ``fairness_report(user_metrics=[...])``; its value appears on an attribute-level row
        (``group`` null, ``value`` = the aggregate, Float64) for every attribute set and ``by`` group.

    Raises
    ------
    PolfairError
        Unknown metric name (with close names), empty metric list, bad ``combine``/``direction``.
    TypeError
        ``aggregate`` is neither an :class:`Aggregate` nor a ``pl.Expr``.

    Notes
    -----
    Formula, for attribute set A and outer group b:
    ``value = combine_{m in metrics} aggregate({m(g) : g in groups of A within b})``. With the
    built-in aggregates a null (undefined) group value makes the result null, never a silent 0
    (yardstick: NA). Source: yardstick ``new_groupwise_metric``.

    Examples
    --------
    >>> import polars as pl
    >>> import polfair as pf
    >>> df = pl.DataFrame({"y": [1, 1, 0, 1, 1, 0], "p": [1, 1, 0, 1, 0, 0],
    ...                    "g": ["a", "a", "a", "b", "b", "b"]})
    >>> tpr_gap = groupwise_metric("true_positive_rate", name="tpr_gap")
    >>> tpr_gap.compute(df, y_true="y", y_pred="p", protected="g")["value"].item()
    0.5
    >>> worst_ratio = groupwise_metric(["true_positive_rate", "true_negative_rate"],
    ...                                name="worst_ratio", aggregate=ratio_range)
    >>> worst_ratio.compute(df, y_true="y", y_pred="p", protected="g")["value"].item()
    0.5
    """
    names = [metric_or_metrics] if isinstance(metric_or_metrics, str) else list(metric_or_metrics)
    if not names:
        msg = "groupwise_metric: give at least one metric name, e.g. 'selection_rate'"
        raise PolfairError(msg)
    canon = tuple(dict.fromkeys(_canonical(m) for m in names))
    if not isinstance(name, str) or not name:
        msg = f"groupwise_metric: name must be a non-empty string, got {name!r}"
        raise PolfairError(msg)
    if isinstance(aggregate, pl.Expr):
        aggregate = Aggregate("custom", aggregate)
    elif not isinstance(aggregate, Aggregate):
        msg = (
            "groupwise_metric: aggregate must be a polfair.compat.yardstick.Aggregate (diff_range, ratio_range, "
            f"max_abs_difference_to_reference) or a polars expression, got {type(aggregate).__name__}"
        )
        raise TypeError(msg)
    combine = combine or aggregate.combine
    if combine not in ("max", "min", "mean"):
        msg = f"groupwise_metric: combine must be 'max', 'min' or 'mean', got {combine!r}"
        raise PolfairError(msg)
    direction = direction or aggregate.direction
    if direction not in ("minimize", "maximize", "zero"):
        msg = f"groupwise_metric: direction must be 'minimize', 'maximize' or 'zero', got {direction!r}"
        raise PolfairError(msg)
    return GroupwiseMetric(name, canon, aggregate, combine, direction)


#: yardstick ``demographic_parity``: range of ``detection_prevalence`` (selection rate) over the
#: groups; equals fairlearn's ``demographic_parity_difference``.
demographic_parity = groupwise_metric("selection_rate", name="demographic_parity")
#: yardstick ``equal_opportunity``: range of sensitivity (TPR) over the groups.
equal_opportunity = groupwise_metric("true_positive_rate", name="equal_opportunity")
#: yardstick ``equalized_odds``: ``max(range(sensitivity), range(specificity))``; since
#: specificity = 1 − FPR, this equals fairlearn's ``equalized_odds_difference``.
equalized_odds = groupwise_metric(["true_positive_rate", "true_negative_rate"], name="equalized_odds")

#: Built-in groupwise metrics by name (``fairness_report(user_metrics=["equalized_odds"])`` accepts names).
GROUPWISE: dict[str, GroupwiseMetric] = {
    m.name: m for m in (demographic_parity, equal_opportunity, equalized_odds)
}


def resolve(metrics: Sequence[GroupwiseMetric | str] | GroupwiseMetric | str | None) -> list[GroupwiseMetric]:
    """Normalise a ``metrics=`` argument into a list of :class:`GroupwiseMetric` (names -> built-ins).

    Raises
    ------
    PolfairError
        An unknown name, a duplicate name, or an object of the wrong type.

    Examples
    --------
    >>> [m.name for m in resolve(["equalized_odds", demographic_parity])]
    ['equalized_odds', 'demographic_parity']
    """
    if metrics is None:
        return []
    items = [metrics] if isinstance(metrics, (str, GroupwiseMetric)) else list(metrics)
    out: list[GroupwiseMetric] = []
    for m in items:
        if isinstance(m, str):
            if m not in GROUPWISE:
                msg = (
                    f"metrics=: {m!r} is not a built-in groupwise metric ({', '.join(GROUPWISE)}); build "
                    f"one with polfair.groupwise_metric({m!r} ...) if it is a per-group metric"
                )
                raise PolfairError(msg)
            m = GROUPWISE[m]
        if not isinstance(m, GroupwiseMetric):
            msg = f"metrics= takes GroupwiseMetric objects or built-in names, got {type(m).__name__}: {m!r}"
            raise PolfairError(msg)
        out.append(m)
    names = [m.name for m in out]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        msg = f"metrics=: names given twice: {dupes}; give each groupwise metric a distinct name="
        raise PolfairError(msg)
    return out


def split_metrics(metrics: Any, user_metrics: Any = None, *, where: str = "fairness_report") -> tuple[list[str] | None, Any]:
    """``metrics=`` as a metric selection and ``user_metrics=`` (user-defined and groupwise metrics).

    ``metrics`` names the report's built-in metrics (:data:`polfair.core.report.selection.SELECTABLE`)
    to compute. Before, it held user metrics (a mapping ``{name: expression}``, a list of
    :class:`GroupwiseMetric` or of their names ``"equalized_odds"`` ...): that form still works for
    one version, with a :class:`DeprecationWarning`, and is moved to ``user_metrics``.

    Returns
    -------
    tuple
        The selection (a list of names, or ``None`` for every metric) and the user metrics
        (a mapping, a list of groupwise metrics, or ``None``).

    Raises
    ------
    PolfairError
        The old form in ``metrics`` together with ``user_metrics``.

    Examples
    --------
    >>> split_metrics(["selection_rate", "disparate_impact"])
    (['selection_rate', 'disparate_impact'], None)
    """
    if metrics is None:
        return None, user_metrics
    items = [metrics] if isinstance(metrics, (str, GroupwiseMetric)) else metrics
    old: Any
    if isinstance(items, Mapping):
        old, selected = items, []
    else:
        items = list(items)
        old = [m for m in items if not isinstance(m, str) or m in GROUPWISE]
        selected = [m for m in items if isinstance(m, str) and m not in GROUPWISE]
        unknown = [m for m in selected if m not in SELECTABLE]
        if unknown:  # one message for both lists: a misspelled report metric or groupwise metric
            said = []
            for m in unknown:
                close = difflib.get_close_matches(m, [*GROUPWISE, *SELECTABLE], n=3)
                hint = f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""
                said.append(f"{m!r} is not a metric of the report nor a built-in groupwise metric{hint}")
            msg = (f"{where} metrics=: {'; '.join(said)}; the report's names are "
                   "polfair.core.report.selection.SELECTABLE, the groupwise ones polfair.compat.yardstick.GROUPWISE")  # fmt: skip
            raise PolfairError(msg)
    if old:
        if user_metrics is not None:
            msg = (f"{where}: metrics= names built-in metrics to compute; user-defined or groupwise metrics "
                   f"({_shown(old)}) go in user_metrics= (given too): move them there")  # fmt: skip
            raise PolfairError(msg)
        warnings.warn(
            f"{where}: metrics= now selects built-in metrics by name; user-defined and groupwise metrics "
            f"({_shown(old)}) move to user_metrics= (metrics= still takes them in this version)",
            DeprecationWarning, stacklevel=4,
        )  # fmt: skip
        user_metrics = old
    return (selected or None), user_metrics


def _shown(old: Any) -> str:
    names = list(old) if isinstance(old, Mapping) else [m if isinstance(m, str) else getattr(m, "name", repr(m)) for m in old]
    return ", ".join(repr(n) for n in names)


def _by_columns(report: pl.DataFrame) -> list[str]:
    # the by columns come first, before "attribute" (later columns: intervals, typed keys, ...)
    cols = report.columns
    return cols[: cols.index("attribute")] if "attribute" in cols else [
        c for c in cols if c not in (*_REPORT_COLUMNS, *_MONITOR_COLUMNS)]


def _combine(cols: list[str], how: Combine) -> pl.Expr:
    exprs = [pl.col(c) for c in cols]
    if len(exprs) == 1:
        return exprs[0]
    defined = pl.all_horizontal([e.is_not_null() for e in exprs])
    if how == "max":
        v = pl.max_horizontal(exprs)
    elif how == "min":
        v = pl.min_horizontal(exprs)
    else:
        v = pl.mean_horizontal(exprs)
    return pl.when(defined).then(v)


def add_groupwise_rows(
    report: pl.DataFrame, metrics: Sequence[GroupwiseMetric | str] | GroupwiseMetric | str | None
) -> pl.DataFrame:
    """Append the attribute-level rows of groupwise metrics to a fairness report.

    Parameters
    ----------
    report
        A report of :func:`polfair.fairness_report` or :func:`polfair.report_from_counts` (it holds
        the per-group values, so nothing reads the data again).
    metrics
        :class:`GroupwiseMetric` objects or names of :data:`GROUPWISE`.

    Returns
    -------
    pl.DataFrame
        The report with, per metric, one row per (``by`` group, attribute set): ``group`` null,
        ``value`` the aggregate (Float64), ``reference_group`` the reference's name for
        :data:`max_abs_difference_to_reference` (else null), ``difference``/``ratio`` null, ``n`` the
        rows of the ``by`` group. They follow that attribute set's attribute-level rows.

    Raises
    ------
    PolfairError
        A metric's name is already a report metric; a per-group metric is absent from the report
        (e.g. a metric needing predictions in a labels-only audit); an aggregate expression that
        does not give a single number.

    Examples
    --------
    >>> import polars as pl
    >>> import polfair as pf
    >>> df = pl.DataFrame({"y": [1, 0, 1, 0], "p": [1, 1, 0, 0], "g": ["a", "a", "b", "b"]})
    >>> cells = pf.confusion_counts(df, y_true="y", y_pred="p", protected="g").collect()
    >>> rep = add_groupwise_rows(pf.report_from_counts(cells, protected=["g"]), ["demographic_parity"])
    >>> rep.filter(pl.col("metric") == "demographic_parity").select("attribute", "group", "value").row(0)
    ('g', None, 1.0)
    """
    gms = resolve(metrics)
    if not gms:
        return report
    by = _by_columns(report)
    _check_metrics(gms, set(report["metric"].unique().to_list()))
    keys = [*by, "attribute"]
    group_rows = report.filter(pl.col("group").is_not_null() & pl.col("attribute").is_not_null())
    base = (
        report.filter(pl.col("group").is_null() & pl.col("attribute").is_not_null())
        .group_by(keys, maintain_order=True)
        .agg(pl.col("n").first())
    )
    extra = pl.concat([_rows_for(gm, group_rows, base, by) for gm in gms], how="vertical_relaxed")
    return _insert_after_attribute_rows(report, extra, by)


def _check_metrics(gms: list[GroupwiseMetric], present: set[Any]) -> None:
    """Raise when a groupwise metric's name is taken or its per-group metrics are not in the report."""
    for gm in gms:
        if gm.name in present:
            msg = (
                f"groupwise metric name {gm.name!r} is already a metric of the report; pass a different "
                "name= to groupwise_metric"
            )
            raise PolfairError(msg)
        missing = [m for m in gm.metrics if m not in present]
        if missing:
            why = " (a labels-only audit has no predictions: pass y_pred= or y_score=)" if any(
                METRICS[m].needs == "predictions" for m in missing
            ) else ""
            msg = f"groupwise metric {gm.name!r} needs {missing}, which the report does not have{why}"
            raise PolfairError(msg)


def _rows_for(gm: GroupwiseMetric, group_rows: pl.DataFrame, base: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    """One attribute-level row of ``gm`` per (``by`` group, attribute set): the aggregate per metric, combined."""
    keys = [*by, "attribute"]
    wide = base
    cols = []
    for i, m in enumerate(gm.metrics):
        col = f"__pf_gw_{i}"
        aggs = [gm.aggregate.expr.alias(col)]
        if gm.aggregate.reports_reference and i == 0:
            aggs.append(pl.col("reference_group").drop_nulls().first().alias("reference_group"))
        per = group_rows.filter(pl.col("metric") == m).group_by(keys, maintain_order=True).agg(aggs)
        dtype = per.schema[col]
        if not (dtype.is_numeric() or dtype == pl.Null):
            msg = (
                f"groupwise metric {gm.name!r}: aggregate must return a single numeric value per "
                f"attribute set, got dtype {dtype} (use an aggregation such as pl.col('value').max())"
            )
            raise PolfairError(msg)
        wide = wide.join(per.with_columns(pl.col(col).cast(pl.Float64)), on=keys, how="left", nulls_equal=True)
        cols.append(col)
    if "reference_group" not in wide.columns:
        wide = wide.with_columns(pl.lit(None, pl.String).alias("reference_group"))
    return wide.select(
        *by,
        pl.col("attribute"),
        pl.lit(None, pl.String).alias("group"),
        pl.lit(gm.name).alias("metric"),
        _combine(cols, gm.combine).cast(pl.Float64).alias("value"),
        pl.col("reference_group").cast(pl.String),
        pl.lit(None, pl.Float64).alias("difference"),
        pl.lit(None, pl.Float64).alias("ratio"),
        pl.col("n").cast(pl.Int64),
    )


def _insert_after_attribute_rows(report: pl.DataFrame, extra: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    """``report`` with ``extra``'s rows placed after the attribute-level rows of their attribute set."""
    order = {a: i for i, a in enumerate(dict.fromkeys(report["attribute"].drop_nulls().to_list()))}

    def keyed(df: pl.DataFrame) -> pl.DataFrame:
        return df.with_columns(
            pl.col("attribute").replace_strict(order, default=-1, return_dtype=pl.Int64).alias(_AI),
            pl.col("group").is_not_null().alias(_IS_GROUP),
        )

    both = pl.concat([keyed(report), keyed(extra)], how="diagonal_relaxed")
    # keep the report's dtypes (attribute / metric / reference_group are Categorical)
    both = both.with_columns([pl.col(c).cast(report.schema[c]) for c in ("attribute", "metric", "reference_group")
                              if c in report.schema and both.schema[c] != report.schema[c]])  # fmt: skip
    return both.sort([*by, _AI, _IS_GROUP], nulls_last=False, maintain_order=True).drop(_AI, _IS_GROUP)
