"""The report's metric names: one table of (row kind, name) -> formula, source and peer equivalents.

**One name, one meaning.** A report row's meaning is fixed by its metric name *and its row kind*,
and the row kind is visible in every row (no extra column needed):

* ``group`` rows (``group`` not null): the metric of that group; named disparities compare the
  group with its reference group, with **aif360's** definitions (signed, group − reference);
* ``attribute`` rows (``attribute`` not null, ``group`` null): the spread over the groups of the
  attribute set, with **fairlearn's** definitions (``between_groups``: max − min, min ÷ max,
  unsigned);
* ``population`` rows (``attribute`` null): everyone.

Two peers use one name for two formulas, and the report keeps both peers' names on the row kind
where each peer means it: ``equalized_odds_difference`` is aif360's ``max(|ΔFPR|, |ΔTPR|)`` against
the reference on group rows and fairlearn's ``max(range TPR, range FPR)`` on attribute rows.
:data:`REPORT_METRICS` is the single table of these meanings; ``docs/metrics.md`` is generated
from it (:func:`glossary_markdown`) and a test checks that every (row kind, metric) of a report has
exactly one entry and that the page is current.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from polfair.core.metrics import ALIASES, DISPARITIES, METRICS

__all__ = ["REGRESSION_REPORT_METRICS", "REPORT_METRICS", "ROW_KINDS", "ReportMetric", "glossary_markdown", "row_kind"]

RowKind = Literal["group", "attribute", "population"]

#: The three row kinds of the long report, in report order.
ROW_KINDS: tuple[RowKind, ...] = ("group", "attribute", "population")

_AIF = "aif360 0.6.1 ``ClassificationMetric``"
_FL = "fairlearn 0.15"
#: scikit-learn's function of each score metric.
_SK = {"f1_score": "f1_score", "balanced_accuracy": "balanced_accuracy_score", "matthews_corrcoef": "matthews_corrcoef"}


@dataclass(frozen=True)
class ReportMetric:
    """The meaning of one metric name on one row kind of the report.

    Attributes
    ----------
    name
        The ``metric`` value of the report rows.
    kind
        ``"group"``, ``"attribute"`` or ``"population"`` (see the module docstring).
    formula
        What ``value`` (and, where used, ``difference`` / ``ratio``) hold, as a formula on the cell
        table's weighted counts (P positives, N negatives, TP, FP, TN, FN).
    source
        The paper or library the definition comes from.
    peers
        The same quantity in the peers polfair covers (empty where none has it).

    Examples
    --------
    >>> REPORT_METRICS[("attribute", "equalized_odds_difference")].source
    'fairlearn 0.15 equalized_odds_difference'
    """

    name: str
    kind: RowKind
    formula: str
    source: str
    peers: str = ""


def row_kind(attribute: str | None, group: str | None) -> RowKind:
    """The row kind of a report row from its ``attribute`` and ``group`` display columns.

    Parameters
    ----------
    attribute, group
        The row's ``attribute`` and ``group`` values (``None`` for null).

    Returns
    -------
    str
        ``"population"`` when ``attribute`` is null, ``"attribute"`` when only ``group`` is null,
        else ``"group"``.

    Examples
    --------
    >>> row_kind("race", None), row_kind(None, None), row_kind("race", "Caucasian")
    ('attribute', 'population', 'group')
    """
    if attribute is None:
        return "population"
    return "attribute" if group is None else "group"


def _aliases(name: str) -> str:
    names = [a for a, c in ALIASES.items() if c == name]
    return f" (aliases: {', '.join(names)})" if names else ""


def _entries() -> list[ReportMetric]:
    r = ReportMetric
    out: list[ReportMetric] = []
    fl_rates = {
        "selection_rate", "true_positive_rate", "true_negative_rate", "false_positive_rate",
        "false_negative_rate",
    }  # fmt: skip
    for m in METRICS.values():
        peers = f"{_AIF}.{m.name}(){_aliases(m.name)}"
        if m.name in fl_rates:
            peers += f"; {_FL} {m.name}; polfair.{m.name}"
        rate_note = "a fraction in [0, 1]; null when the denominator is 0"
        kind_note = rate_note if m.is_rate else "a count (weighted), not an estimate"
        if m.is_score:
            peers = f"scikit-learn {_SK[m.name]}(sample_weight=w); {_FL} MetricFrame(metrics={_SK[m.name]})"
            span = "[−1, 1]" if m.name == "matthews_corrcoef" else "[0, 1]"
            kind_note = (f"a score in {span}, equal to scikit-learn's; null where it divides by zero (scikit-learn: "
                         "its zero_division value, 0.0 by default); no interval")  # fmt: skip
        source = f"scikit-learn 1.x {_SK[m.name]}" if m.is_score else f"aif360 0.6.1 {m.name}"
        out.append(r(m.name, "group",
                     f"value = {m.description} of the group ({kind_note}); difference = value − reference value; "
                     "ratio = value / reference value", source, peers))  # fmt: skip
        out.append(r(m.name, "attribute",
                     f"value null; difference = max − min and ratio = min ÷ max of the groups' {m.name} "
                     "(over the groups where it is defined)",
                     f"{_FL} MetricFrame.difference/ratio(method='between_groups')",
                     f"{_FL} MetricFrame(metrics={m.name}).difference(); polfair.group_difference"))  # fmt: skip
        out.append(r(m.name, "population", f"value = {m.description} of everyone", source,
                     f"scikit-learn {_SK[m.name]}" if m.is_score else f"{_AIF}.{m.name}(privileged=None)"))  # fmt: skip
    for kind in ("group", "population"):
        out.append(r("n_missing", kind, "rows with a null label, prediction, score or weight (excluded from rates)",
                     "polfair", ""))  # fmt: skip
    for d in DISPARITIES.values():
        out.append(r(d.name, "group", f"value = {d.description}; the reference group is in reference_group",
                     f"aif360 0.6.1 {d.name}", f"{_AIF}.{d.name}()"))  # fmt: skip
    attr = [
        ("demographic_parity_difference", "max − min of the groups' selection_rate",
         f"{_FL} demographic_parity_difference", "polfair.demographic_parity_difference"),
        ("demographic_parity_ratio", "min ÷ max of the groups' selection_rate",
         f"{_FL} demographic_parity_ratio", "polfair.demographic_parity_ratio"),
        ("equalized_odds_difference", "max(max − min of TPR, max − min of FPR) over the groups",
         f"{_FL} equalized_odds_difference", "polfair.equalized_odds_difference (fairlearn semantics)"),
        ("equalized_odds_ratio", "min(min ÷ max of TPR, min ÷ max of FPR) over the groups",
         f"{_FL} equalized_odds_ratio", "polfair.equalized_odds_ratio"),
        ("between_group_variance_base_rate", "variance of the groups' base rates (each group once, divisor "
         "k − 1) minus the noise: mean over groups of p̂(1 − p̂)/(n − 1); unbiased, may be < 0 (groups with n ≤ 1 "
         "left out)", "Lum, Zhang & Bower (2022), section 5 (double-corrected)",
         "polfair.core.intervals.variance.between_group_variance"),
        ("between_group_variance_selection_rate", "the same on the groups' selection rates",
         "Lum, Zhang & Bower (2022), section 5 (double-corrected)",
         "polfair.core.intervals.variance.between_group_variance"),
        ("between_group_generalized_entropy_index", "GE(α) of the benefits b = 1 + ŷ − y with each row replaced by "
         "its group's mean (unweighted)", "Speicher et al. (2018); aif360 0.6.1",
         f"{_AIF}.between_group_generalized_entropy_index(alpha)"),
        ("between_group_theil_index", "GE(1) of the group-mean benefits", "Speicher et al. (2018); aif360 0.6.1",
         f"{_AIF}.between_group_theil_index()"),
        ("between_group_coefficient_of_variation", "sqrt(2 · GE(2)) of the group-mean benefits",
         "Speicher et al. (2018); aif360 0.6.1", f"{_AIF}.between_group_coefficient_of_variation()"),
        ("smoothed_empirical_differential_fairness", "max over pairs of the attribute set's groups of |log "
         "smoothed base-rate ratio| (and of 1 − rate), smoothing concentration c", "Foulds et al. (2020); aif360 0.6.1",
         "aif360 BinaryLabelDatasetMetric.smoothed_empirical_differential_fairness()"),
        ("smoothed_empirical_differential_fairness_predictions", "the same on predicted labels",
         "Foulds et al. (2020); aif360 0.6.1", "aif360 ClassificationMetric (on the predicted dataset)"),
    ]  # fmt: skip
    out += [r(n, "attribute", f, s, p) for n, f, s, p in attr]
    pop = [
        ("generalized_entropy_index", "GE(α) of every individual's benefit b = 1 + ŷ − y (unweighted)",
         "Speicher et al. (2018); aif360 0.6.1", f"{_AIF}.generalized_entropy_index(alpha)"),
        ("theil_index", "GE(1) of the individuals' benefits", "Speicher et al. (2018); aif360 0.6.1",
         f"{_AIF}.theil_index()"),
        ("coefficient_of_variation", "sqrt(2 · GE(2)) of the individuals' benefits",
         "Speicher et al. (2018); aif360 0.6.1", f"{_AIF}.coefficient_of_variation()"),
        ("between_all_groups_generalized_entropy_index", "GE(α) with each row replaced by the mean benefit of its "
         "full intersection of all protected attributes", "aif360 0.6.1",
         f"{_AIF}.between_all_groups_generalized_entropy_index(alpha)"),
        ("between_all_groups_theil_index", "GE(1) over all intersections", "aif360 0.6.1",
         f"{_AIF}.between_all_groups_theil_index()"),
        ("between_all_groups_coefficient_of_variation", "sqrt(2 · GE(2)) over all intersections", "aif360 0.6.1",
         f"{_AIF}.between_all_groups_coefficient_of_variation()"),
        ("smoothed_empirical_differential_fairness",
         "EDF over the cells of all protected attributes jointly (labels)", "Foulds et al. (2020); aif360 0.6.1",
         "aif360 BinaryLabelDatasetMetric.smoothed_empirical_differential_fairness()"),
        ("smoothed_empirical_differential_fairness_predictions", "the same on predicted labels",
         "Foulds et al. (2020); aif360 0.6.1", ""),
        ("differential_fairness_bias_amplification", "EDF(predictions) − EDF(labels)",
         "Foulds et al. (2020); aif360 0.6.1", f"{_AIF}.differential_fairness_bias_amplification()"),
    ]  # fmt: skip
    out += [r(n, "population", f, s, p) for n, f, s, p in pop]
    return out


#: (row kind, metric name) -> its meaning: the one table behind ``docs/metrics.md``.
REPORT_METRICS: dict[tuple[RowKind, str], ReportMetric] = {(m.kind, m.name): m for m in _entries()}

_SK_REG = "scikit-learn 1.x"
_REG_GROUP = [
    ("num_instances", "Σw over the rows with outcome, prediction and weight present", "polfair", ""),
    ("mean_outcome", "Σw·y / W", "polfair (weighted mean)", "numpy.average(y, weights=w)"),
    ("mean_prediction", "Σw·ŷ / W", "polfair (weighted mean)", "numpy.average(y_pred, weights=w)"),
    ("mean_error", "Σw·(ŷ − y) / W; positive = over-prediction", "polfair (bias)", "numpy.average(y_pred - y, weights=w)"),
    ("mean_absolute_error", "Σw·abs(ŷ − y) / W", f"{_SK_REG} mean_absolute_error",
     f"{_FL} MetricFrame(metrics=mean_absolute_error)"),
    ("mean_squared_error", "Σw·(ŷ − y)² / W", f"{_SK_REG} mean_squared_error",
     f"{_FL} MetricFrame(metrics=mean_squared_error)"),
    ("root_mean_squared_error", "√MSE", f"{_SK_REG} root_mean_squared_error",
     f"{_FL} MetricFrame(metrics=root_mean_squared_error)"),
    ("r2_score", "1 − Σw·e² / Σw·(y − ȳ)²; null for a constant outcome (scikit-learn: 1.0 or 0.0)",
     f"{_SK_REG} r2_score", f"{_FL} MetricFrame(metrics=r2_score)"),
]  # fmt: skip


def _regression_entries() -> list[ReportMetric]:
    r = ReportMetric
    out = []
    for name, formula, source, peers in _REG_GROUP:
        out.append(r(name, "group", f"value = {formula} of the group; difference = value − reference value; ratio = "
                     "value / reference value", source, peers))  # fmt: skip
        out.append(r(name, "population", f"value = {formula} of everyone", source, peers))
        if name != "num_instances":
            out.append(r(name, "attribute", f"value null; difference = max − min and ratio = min ÷ max of the groups' "
                         f"{name}", f"{_FL} MetricFrame.difference/ratio(method='between_groups')",
                         f"{_FL} MetricFrame(metrics={name}).difference()"))  # fmt: skip
            for stat in ("max", "min"):
                out.append(r(f"{name}_group_{stat}", "attribute", f"value = the {'largest' if stat == 'max' else 'smallest'} "
                             f"{name} of the set's groups", f"{_FL} MetricFrame.group_{stat}()",
                             f"{_FL} MetricFrame(metrics={name}).group_{stat}()"))  # fmt: skip
    for kind in ("group", "population"):
        out.append(r("n_missing", kind, "rows with a missing outcome, prediction or weight (not counted)", "polfair", ""))
    out += [
        r("ks_distance", "group", "value = sup_t abs(F_group(t) − F_reference(t)) of the predictions' distribution "
          "functions, at the histogram's bin edges (statistical parity of a regressor)",
          "Agarwal, Dudík & Wu (2019); Kolmogorov–Smirnov", "scipy.stats.ks_2samp(pred_group, pred_reference)"),
        r("ks_distance_bound", "group", "value = how much the true ks_distance can exceed the reported one inside "
          "the histogram's bins (0 for discrete predictions)", "polfair", ""),
        r("ks_distance", "attribute", "value = the largest ks_distance of the set's groups", "polfair", ""),
        r("bounded_group_loss", "attribute", "value = the largest group mean_squared_error (squared loss)",
          "Agarwal, Dudík & Wu (2019)", "fairlearn.reductions.BoundedGroupLoss(SquareLoss)"),
    ]  # fmt: skip
    return out


#: The regression report's (row kind, metric name) -> meaning (:mod:`polfair.core.regression`).
REGRESSION_REPORT_METRICS: dict[tuple[RowKind, str], ReportMetric] = {(m.kind, m.name): m for m in _regression_entries()}


def glossary_markdown() -> str:
    """``docs/metrics.md``: the report's metric glossary, generated from :data:`REPORT_METRICS`.

    Returns
    -------
    str
        A markdown page: the row-kind convention, then one table per row kind with the columns
        metric, formula, source and peer equivalents.

    Examples
    --------
    >>> "| `disparate_impact` |" in glossary_markdown()
    True
    """
    lines = [
        "# Metric glossary",
        "",
        "<!-- generated by `python -m polfair.core.glossary > docs/metrics.md`;"
        " tests/meta/test_glossary.py checks it -->",
        "",
        "Every report row's meaning is fixed by its `metric` name **and its row kind**: *group* rows (`group`",
        "not null) compare a group with its reference group with aif360's definitions (signed, group − reference);",
        "*attribute* rows (`group` null) give the spread over the attribute set's groups with fairlearn's",
        "definitions (max − min, min ÷ max); *population* rows (`attribute` null) describe everyone. Where the two",
        "peers use one name for two formulas (`equalized_odds_difference`), each row kind carries its peer's",
        "meaning. Rates are fractions in [0, 1]; undefined values (zero denominators) are null.",
    ]
    titles = {"group": "Group rows", "attribute": "Attribute rows", "population": "Population rows"}
    for kind in ROW_KINDS:
        lines += ["", f"## {titles[kind]}", "", "| metric | formula | source | peer equivalents |", "|---|---|---|---|"]
        for m in REPORT_METRICS.values():
            if m.kind == kind:
                cells = (m.formula, m.source, m.peers)
                lines.append(f"| `{m.name}` | " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    lines += ["", "## Regression reports", "",
              "`pf.regression_report` (docs/regression.md) keeps the row kinds; its metrics:", "",
              "| row kind | metric | formula | source | peer equivalents |", "|---|---|---|---|---|"]  # fmt: skip
    for m in REGRESSION_REPORT_METRICS.values():
        row = (m.kind, f"`{m.name}`", m.formula, m.source, m.peers)
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in row) + " |")
    lines += [
        "",
        "## Your own metrics",
        "",
        "`fairness_report(..., user_metrics={name: expression})` adds metrics of your own: a Polars expression over the",
        "cell table's count columns (`tp`, `fp`, `tn`, `fn` weighted; `tp_n` … unweighted; `tp_w2` … Σw²; `w`, `n`,",
        "`gtp`, `gfp`, `gtn`, `gfn`), a function of a `Counts` accessor, or `{\"expr\": ..., \"higher_is_better\": False}`.",
        "Each gets group rows (value, difference and ratio against the reference group), attribute rows (max − min,",
        "min ÷ max over the groups where it is defined) and population rows, like the built-ins above, without",
        "interval columns. Write zero divisions with `polfair.core.metrics.rate(num, den)` (null when `den` is 0).",
        "A list in `metrics=` keeps its meaning: groupwise metrics such as `\"equalized_odds\"`.",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # pragma: no cover
    print(glossary_markdown(), end="")
