"""Stage 3, *metrics*: every group metric, defined once, as arithmetic on cell-table counts.

A :class:`Metric` is a name, a numerator and (for rates) a denominator, written as functions of a
:class:`Counts` accessor. The same definition serves

* the report, with the accessor bound to columns of a rolled-up cell table (:func:`group_metrics`);
* the Polars expression API, with the accessor bound to aggregations over raw rows;
* the aif360-compatible classes, which apply aif360's own zero-division conventions to the same
  numerator and denominator.

Policy of this module: a rate whose denominator is 0 is **null** (undefined), never a silent 0.
Three *scores* are neither counts nor proportions of rows (``f1_score``, ``balanced_accuracy``,
``matthews_corrcoef``): a :class:`Metric` with a ``formula``, equal to scikit-learn's
(``sample_weight`` = the weights) wherever scikit-learn's value is defined, null where it divides by
zero (scikit-learn returns its ``zero_division`` value, 0.0 by default, with a warning: pass
``zero_division=np.nan`` there to get the report's null). They have no closed-form interval in
the report (their interval columns are null). Aliases (``recall``, ``sensitivity``, ``precision``, ``specificity``, ...) are entries of
:data:`ALIASES` that point at the one definition.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Literal

import polars as pl

__all__ = [
    "ALIASES",
    "between_groups_difference",
    "between_groups_ratio",
    "DISPARITIES",
    "METRICS",
    "Counts",
    "Disparity",
    "Metric",
    "group_metrics",
    "label_disparities",
    "rate",
]


def _sum(a: str, b: str, doc: str) -> Any:
    """A property of :class:`Counts`: the sum ``a + b`` of two of its counts (``doc``: its docstring)."""

    def get(self: Counts) -> pl.Expr:
        return getattr(self, a) + getattr(self, b)

    get.__doc__ = doc
    return property(get, doc=doc)


class Counts:
    """Named count expressions (``tp``, ``fp``, ... of the cell table) that formulas are written in.

    Parameters
    ----------
    get
        Maps a cell-table column name to the expression that holds it, e.g. ``pl.col``.

    Examples
    --------
    >>> import polars as pl
    >>> c = Counts(pl.col)
    >>> pl.DataFrame({"tp": [3.0], "fn": [1.0]}).select(c.positives).item()
    4.0
    """

    def __init__(self, get: Callable[[str], pl.Expr] = pl.col) -> None:
        self._get = get

    def __getattr__(self, name: str) -> pl.Expr:
        if name.startswith("_"):
            raise AttributeError(name)
        return self._get(name)

    # derived totals (weighted)
    positives = _sum("tp", "fn", "P = TP + FN: the (weighted) rows with the favorable label.")
    negatives = _sum("fp", "tn", "N = FP + TN: the (weighted) rows with the unfavorable label.")
    pred_positives = _sum("tp", "fp", "TP + FP: the (weighted) rows predicted favorable.")
    pred_negatives = _sum("tn", "fn", "TN + FN: the (weighted) rows predicted unfavorable.")
    total = _sum("positives", "negatives", "P + N: every counted (weighted) row.")


Needs = Literal["labels", "predictions"]
#: The side of "no difference" that disadvantages a group: a lower or a higher value.
Harm = Literal["lower", "higher"]


@dataclass(frozen=True)
class Metric:
    """One group metric.

    Attributes
    ----------
    name
        Standard name (aif360 spelling).
    numerator
        Counts -> Expr. For a count metric, the value itself.
    denominator
        Counts -> Expr for a rate, ``None`` for a count.
    needs
        ``"labels"`` if defined on labels alone, ``"predictions"`` if it needs ŷ.
    higher_is_better
        Direction used by ``reference="best"``; ``None`` for counts.
    description
        One line with the formula, used in docs.
    harm
        Direction of harm for the group (``polfair.core.report.status``): ``"lower"`` when a lower value
        than the reference's disadvantages the group (a rate of the favorable outcome:
        ``selection_rate``, ``true_positive_rate``, ``false_positive_rate`` = P(ŷ favorable | y
        unfavorable), ...), ``"higher"`` when a higher one does (``false_negative_rate``,
        ``error_rate``, ...); ``None`` for counts. Not ``higher_is_better`` (model quality): a
        higher FPR is a worse model but more favorable decisions for the group.
    formula
        For a *score* (neither a count nor a proportion of rows, e.g. ``f1_score``): Counts ->
        Expr of the value itself, null where undefined; ``numerator`` is then the same function
        and ``denominator`` is ``None``. ``None`` for counts and rates.
    """

    name: str
    numerator: Callable[[Counts], pl.Expr]
    denominator: Callable[[Counts], pl.Expr] | None
    needs: Needs
    higher_is_better: bool | None
    description: str
    harm: Harm | None = None
    formula: Callable[[Counts], pl.Expr] | None = None

    @property
    def is_rate(self) -> bool:
        """Whether the metric is a rate (a proportion with a denominator), not a count or a score."""
        return self.denominator is not None

    @property
    def is_score(self) -> bool:
        """Whether the metric is a score (``formula``): not a count, not a proportion of rows."""
        return self.formula is not None

    def expr(self, c: Counts) -> pl.Expr:
        """Value expression under the report policy (null on a zero denominator)."""
        if self.formula is not None:
            return self.formula(c).cast(pl.Float64)
        num = self.numerator(c).cast(pl.Float64)
        if self.denominator is None:
            return num
        return rate(num, self.denominator(c).cast(pl.Float64))


def rate(num: pl.Expr, den: pl.Expr) -> pl.Expr:
    """``num / den``, null where ``den`` is 0 or null (the report's undefined-value policy)."""
    return pl.when(den > 0).then(num / den)


def between_groups_difference(values: pl.Expr) -> pl.Expr:
    """Aggregation: ``max − min`` of a metric over groups; null if any group's value is undefined.

    fairlearn's ``MetricFrame.difference(method="between_groups")`` and yardstick's ``diff_range``,
    except that an undefined (null) group makes the result null instead of being skipped.

    Examples
    --------
    >>> import polars as pl
    >>> pl.DataFrame({"v": [0.2, 0.5]}).select(between_groups_difference(pl.col("v"))).item()
    0.3
    """
    return pl.when(values.null_count() == 0).then(values.max() - values.min())


def between_groups_ratio(values: pl.Expr) -> pl.Expr:
    """Aggregation: ``min / max`` of a metric over groups; null if any group is undefined or max is 0.

    fairlearn's ``MetricFrame.ratio(method="between_groups")``.

    Examples
    --------
    >>> import polars as pl
    >>> pl.DataFrame({"v": [0.2, 0.5]}).select(between_groups_ratio(pl.col("v"))).item()
    0.4
    """
    return pl.when(values.null_count() == 0).then(rate(values.min(), values.max()))


def _count(name: str, f: Callable[[Counts], pl.Expr], needs: Needs, desc: str) -> Metric:
    return Metric(name, f, None, needs, None, desc)


def _rate(name: str, num: Callable[[Counts], pl.Expr], den: Callable[[Counts], pl.Expr],
          needs: Needs, hib: bool, desc: str, harm: Harm) -> Metric:  # fmt: skip
    return Metric(name, num, den, needs, hib, desc, harm)


_METRIC_LIST: list[Metric] = [
    _count("num_instances", lambda c: c.total, "labels", "Σw over counted rows"),
    _count("num_positives", lambda c: c.positives, "labels", "P = Σw[y = fav]"),
    _count("num_negatives", lambda c: c.negatives, "labels", "N = Σw[y = unf]"),
    _rate("base_rate", lambda c: c.positives, lambda c: c.total, "labels", True, "P / (P + N)", "lower"),
    _count("num_pred_positives", lambda c: c.pred_positives, "predictions", "TP + FP"),
    _count("num_pred_negatives", lambda c: c.pred_negatives, "predictions", "TN + FN"),
    _rate("selection_rate", lambda c: c.pred_positives, lambda c: c.total, "predictions", True,
          "(TP + FP) / (P + N)", "lower"),
    _count("num_true_positives", lambda c: c.tp, "predictions", "TP = Σw[y = fav, ŷ = fav]"),
    _count("num_false_positives", lambda c: c.fp, "predictions", "FP = Σw[y = unf, ŷ = fav]"),
    _count("num_true_negatives", lambda c: c.tn, "predictions", "TN = Σw[y = unf, ŷ = unf]"),
    _count("num_false_negatives", lambda c: c.fn, "predictions", "FN = Σw[y = fav, ŷ = unf]"),
    _rate("true_positive_rate", lambda c: c.tp, lambda c: c.positives, "predictions", True, "TP / P", "lower"),
    _rate("true_negative_rate", lambda c: c.tn, lambda c: c.negatives, "predictions", True, "TN / N", "higher"),
    _rate("false_positive_rate", lambda c: c.fp, lambda c: c.negatives, "predictions", False, "FP / N", "lower"),
    _rate("false_negative_rate", lambda c: c.fn, lambda c: c.positives, "predictions", False, "FN / P", "higher"),
    _rate("positive_predictive_value", lambda c: c.tp, lambda c: c.pred_positives, "predictions", True,
          "TP / (TP + FP)", "higher"),
    _rate("negative_predictive_value", lambda c: c.tn, lambda c: c.pred_negatives, "predictions", True,
          "TN / (TN + FN)", "lower"),
    _rate("false_discovery_rate", lambda c: c.fp, lambda c: c.pred_positives, "predictions", False,
          "FP / (TP + FP)", "lower"),
    _rate("false_omission_rate", lambda c: c.fn, lambda c: c.pred_negatives, "predictions", False,
          "FN / (TN + FN)", "higher"),
    _rate("accuracy", lambda c: c.tp + c.tn, lambda c: c.total, "predictions", True, "(TP + TN) / (P + N)", "lower"),
    # error_rate = 1 - accuracy, computed as aif360 does (so the last bits agree); see group_metrics
    _rate("error_rate", lambda c: c.fp + c.fn, lambda c: c.total, "predictions", False, "1 - accuracy", "higher"),
]  # fmt: skip

#: aif360's generalized (score-based) counts, ``s`` the score: count -> (its name, a row's weight, the label).
_GENERALIZED = {
    "tp": ("true_positives", "w·s", "fav"),
    "fp": ("false_positives", "w·s", "unf"),
    "tn": ("true_negatives", "w·(1-s)", "unf"),
    "fn": ("false_negatives", "w·(1-s)", "fav"),
}


def _generalized(k: str) -> Callable[[Counts], pl.Expr]:
    """Counts -> the score-weighted sum of count ``k`` (``gtp`` for ``tp``)."""
    return lambda c: getattr(c, f"g{k}")


_METRIC_LIST += [
    _count(f"num_generalized_{name}", _generalized(k), "predictions", f"G{k.upper()} = Σ {w} [y = {y}]")
    for k, (name, w, y) in _GENERALIZED.items()
]
# the generalized rates: a basic rate with its count's score-weighted sum (same denominator, direction, harm)
_METRIC_LIST += [
    replace(m, name=f"generalized_{m.name}", numerator=_generalized(k), description=f"G{m.description}")
    for k in ("tp", "tn", "fp", "fn")
    for m in _METRIC_LIST
    if m.name == f"{_GENERALIZED[k][0][:-1]}_rate"
]

#: alias -> canonical metric name (the alias computes exactly the canonical metric).
ALIASES: dict[str, str] = {
    "recall": "true_positive_rate",
    "sensitivity": "true_positive_rate",
    "specificity": "true_negative_rate",
    "precision": "positive_predictive_value",
    "power": "num_true_positives",
}


def _f1(c: Counts) -> pl.Expr:
    den = (2.0 * c.tp + c.fp + c.fn).cast(pl.Float64)
    return rate(2.0 * c.tp.cast(pl.Float64), den)


def _balanced_accuracy(c: Counts) -> pl.Expr:
    tpr, tnr = rate(c.tp.cast(pl.Float64), c.positives), rate(c.tn.cast(pl.Float64), c.negatives)
    return (tpr + tnr) / 2.0


def _mcc(c: Counts) -> pl.Expr:
    tp, fp, tn, fn = (x.cast(pl.Float64) for x in (c.tp, c.fp, c.tn, c.fn))
    margins = [tp + fp, tp + fn, tn + fp, tn + fn]
    den = (margins[0] * margins[1]).sqrt() * (margins[2] * margins[3]).sqrt()
    ok = pl.all_horizontal([m > 0 for m in margins])
    raw = (tp * tn - fp * fn) / den
    # counts in a cell table's data units with weights beyond about 1e±150 overflow (or underflow) the products:
    # the same scale-free ratio on the counts as fractions of their total (a report's relative units need not)
    in_range = (tp * tn).is_finite() & (fp * fn).is_finite() & den.is_finite() & (den >= 2.0**-1022)
    t = tp + fp + tn + fn
    p, f, n, m = tp / t, fp / t, tn / t, fn / t
    scaled = (p * n - f * m) / ((p + f) * (p + m)).sqrt() / ((n + f) * (n + m)).sqrt()
    return pl.when(ok).then(pl.when(in_range).then(raw).otherwise(scaled))


def _score(name: str, f: Callable[[Counts], pl.Expr], desc: str) -> Metric:
    return Metric(name, f, None, "predictions", True, desc, "lower", formula=f)  # lower quality for the group: its harm


_METRIC_LIST += [
    _score("f1_score", _f1, "2TP / (2TP + FP + FN)"),
    _score("balanced_accuracy", _balanced_accuracy, "(TP / P + TN / N) / 2"),
    _score("matthews_corrcoef", _mcc, "(TP·TN − FP·FN) / √((TP+FP)(TP+FN)(TN+FP)(TN+FN))"),
]
#: name -> Metric, in report order.
METRICS: dict[str, Metric] = {m.name: m for m in _METRIC_LIST}


def _metric_expr(m: Metric, c: Counts) -> pl.Expr:
    if m.name == "error_rate":  # aif360: 1. - accuracy
        return (1.0 - METRICS["accuracy"].expr(c)).alias("error_rate")
    return m.expr(c).alias(m.name)


def group_metrics(needs_predictions: bool = True, c: Counts | None = None) -> list[pl.Expr]:
    """Expressions for every group metric, named by metric, over a (rolled-up) cell table.

    Parameters
    ----------
    needs_predictions
        ``False`` for labels-only audits: only the label metrics are returned.
    c
        Counts accessor; default binds to the cell-table columns.

    Returns
    -------
    list of pl.Expr
        One Float64 expression per metric, aliased to the metric name. Rates are fractions in
        [0, 1], null where the denominator is 0.

    Examples
    --------
    >>> import polars as pl
    >>> c = {"tp": 1.0, "fp": 0.0, "tn": 0.0, "fn": 0.0, "gtp": 0.9, "gfp": 0.0, "gtn": 0.0, "gfn": 0.1}
    >>> t = pl.DataFrame({k: [v] for k, v in c.items()})
    >>> t.select(group_metrics()).select("selection_rate", "true_negative_rate").row(0)
    (1.0, None)
    """
    if c is None:
        return list(_cell_metrics(needs_predictions))
    return [_metric_expr(m, c) for m in _METRIC_LIST if needs_predictions or m.needs == "labels"]


@functools.lru_cache(maxsize=2)
def _cell_metrics(needs_predictions: bool) -> tuple[pl.Expr, ...]:
    # expressions are immutable: build the cell-table ones once per process
    return tuple(group_metrics(needs_predictions, Counts()))


@dataclass(frozen=True)
class Disparity:
    """A named comparison of a group with its reference group.

    ``formula(g, r)`` gets two functions mapping a metric name to the group's and the reference's
    value expressions. ``rates`` lists the metrics it reads (for ``reference="best"``). ``harm``:
    the side of "no difference" (0 for differences, 1 for ratios) that disadvantages the group,
    the :attr:`Metric.harm` of the rates it compares (``"lower"`` for ``disparate_impact``,
    ``"higher"`` for ``false_negative_rate_ratio``); ``None`` for unsigned ones (absolute values).
    """

    name: str
    rates: tuple[str, ...]
    formula: Callable[[Callable[[str], pl.Expr], Callable[[str], pl.Expr]], pl.Expr]
    needs: Needs
    description: str
    harm: Harm | None = None


def _diff(m: str) -> Callable[[Callable[[str], pl.Expr], Callable[[str], pl.Expr]], pl.Expr]:
    return lambda g, r: g(m) - r(m)


def _ratio(m: str) -> Callable[[Callable[[str], pl.Expr], Callable[[str], pl.Expr]], pl.Expr]:
    return lambda g, r: rate(g(m), r(m))


def _max_abs(a: pl.Expr, b: pl.Expr) -> pl.Expr:
    # null if either is null (the report never hides an undefined rate behind the other one)
    return pl.when(a.is_not_null() & b.is_not_null()).then(pl.max_horizontal(a.abs(), b.abs()))


def _disparities() -> list[Disparity]:
    d = Disparity
    out = [
        d("statistical_parity_difference", ("selection_rate",), _diff("selection_rate"), "predictions",
          "selection_rate(group) - selection_rate(reference)", "lower"),
        d("disparate_impact", ("selection_rate",), _ratio("selection_rate"), "predictions",
          "selection_rate(group) / selection_rate(reference)", "lower"),
        d("equal_opportunity_difference", ("true_positive_rate",), _diff("true_positive_rate"), "predictions",
          "TPR(group) - TPR(reference)", "lower"),
        d("average_odds_difference", ("false_positive_rate", "true_positive_rate"),
          lambda g, r: 0.5 * ((g("false_positive_rate") - r("false_positive_rate"))
                              + (g("true_positive_rate") - r("true_positive_rate"))),
          "predictions", "(ΔFPR + ΔTPR) / 2", "lower"),
        d("average_abs_odds_difference", ("false_positive_rate", "true_positive_rate"),
          lambda g, r: 0.5 * ((g("false_positive_rate") - r("false_positive_rate")).abs()
                              + (g("true_positive_rate") - r("true_positive_rate")).abs()),
          "predictions", "(|ΔFPR| + |ΔTPR|) / 2"),
        d("equalized_odds_difference", ("false_positive_rate", "true_positive_rate"),
          lambda g, r: _max_abs(g("false_positive_rate") - r("false_positive_rate"),
                                g("true_positive_rate") - r("true_positive_rate")),
          "predictions", "max(|ΔFPR|, |ΔTPR|), null if either is undefined"),
        d("average_predictive_value_difference", ("positive_predictive_value", "false_omission_rate"),
          lambda g, r: 0.5 * ((g("positive_predictive_value") - r("positive_predictive_value"))
                              + (g("false_omission_rate") - r("false_omission_rate"))),
          "predictions", "(ΔPPV + ΔFOR) / 2 (aif360's definition: FOR, not NPV)", "higher"),
        d("generalized_equalized_odds_difference",
          ("generalized_false_positive_rate", "generalized_true_positive_rate"),
          lambda g, r: _max_abs(g("generalized_false_positive_rate") - r("generalized_false_positive_rate"),
                                g("generalized_true_positive_rate") - r("generalized_true_positive_rate")),
          "predictions", "max(|ΔGFPR|, |ΔGTPR|)"),
    ]  # fmt: skip
    for m in ("error_rate", "false_positive_rate", "false_negative_rate", "false_discovery_rate",
              "false_omission_rate"):  # fmt: skip
        harm = METRICS[m].harm
        out.append(d(f"{m}_difference", (m,), _diff(m), "predictions", f"{m}(group) - {m}(reference)", harm))
        out.append(d(f"{m}_ratio", (m,), _ratio(m), "predictions", f"{m}(group) / {m}(reference)", harm))
    return out


#: name -> Disparity, in report order. With labels only, the report computes
#: statistical_parity_difference and disparate_impact on ``base_rate`` (aif360's
#: BinaryLabelDatasetMetric) via :func:`label_disparities`.
DISPARITIES: dict[str, Disparity] = {d.name: d for d in _disparities()}


def label_disparities() -> list[Disparity]:
    """statistical_parity_difference and disparate_impact on base rates (labels-only audits)."""
    return [
        Disparity("statistical_parity_difference", ("base_rate",), _diff("base_rate"), "labels",
                  "base_rate(group) - base_rate(reference)", "lower"),
        Disparity("disparate_impact", ("base_rate",), _ratio("base_rate"), "labels",
                  "base_rate(group) / base_rate(reference)", "lower"),
    ]  # fmt: skip
