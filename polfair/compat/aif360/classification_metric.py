"""``ClassificationMetric``: aif360 0.6.1's metrics of a classifier, on the cell table.

One method per aif360 method (72), each with its formula, aif360's undefined-value convention and a
doctest; see :mod:`polfair.compat.aif360` for how the class computes. A ``{{key}}`` line in a method's
docstring is a section the methods share, written once in :mod:`polfair.compat.aif360._docs`; a
method decorated with ``@metric_doc`` has its docstring written from its summary, formula, edge case
and doctest line by that module.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from polfair.compat.aif360._docs import expand_docstrings, metric_doc
from polfair.compat.aif360.dataset_metric import BinaryLabelDatasetMetric
from polfair.core import entropy
from polfair.core._typing import IntoExpr
from polfair.core.metrics import METRICS
from polfair.core.options import checks_keywords

__all__ = ["ClassificationMetric"]

_F = np.float64


@expand_docstrings
class ClassificationMetric(BinaryLabelDatasetMetric):
    """Metrics of a classifier's predictions against true labels, aif360 0.6.1-compatible.

    Drop-in for ``aif360.metrics.ClassificationMetric(dataset, classified_dataset, ...)`` on ONE
    Polars frame holding both the true labels and the predictions: the same 72 public methods,
    arguments, values and quirks. See :mod:`polfair.compat.aif360` for how it computes and for the
    (input-only) differences from aif360.

    Parameters
    ----------
    data
        The rows, one per individual: a ``pl.DataFrame``, ``pl.LazyFrame``, pandas DataFrame, pyarrow
        Table, dict of columns or path; a path is scanned lazily (parquet, CSV, IPC).
    y_true
        True labels (aif360's ``dataset.labels``); each ``favorable_label`` or ``unfavorable_label``.
    y_pred
        Predicted labels (``classified_dataset.labels``), same values. Without it, predictions are
        ``y_score >= 0.5`` when ``y_score`` is given, else the true labels themselves.
    y_score
        Scores, P(favorable label) in [0, 1] (``classified_dataset.scores``), used only by the
        generalized counts and rates. Default: ``1[ŷ = favorable_label]``, as aif360. Scores are
        never flipped when the favorable label is 0 (aif360 neither): the facade states aif360's
        reading, ``score_label=favorable_label`` (``docs/contract.md#polarity``), so a Boolean
        ``y_pred`` given with scores is True = favorable too.
    weight
        Instance weights (Float64, finite, ≥ 0). Default: every weight 1.
    protected
        Protected attributes; group conditions may only name these.
    favorable_label, unfavorable_label
        Label values, each a scalar or a list of scalars (default 1 and 0); lists give aif360's
        ``MulticlassLabelDataset`` mapping.
    unprivileged_groups, privileged_groups
        aif360 group conditions (OR across dicts, AND within one; ``[]`` empty; ``[{}]`` all rows).
    features
        Columns for :meth:`consistency` (default: every numeric column except label, prediction,
        score and weight, protected attributes included, as aif360's ``dataset.features``).

    Raises
    ------
    TypeError
        ``data`` of an unsupported type, or group conditions that are not lists of dicts.
    ValueError
        A group condition names a column that is not a protected attribute.
    ColumnNotFoundError
        A named column is missing.

    Notes
    -----
    Methods inherited from :class:`BinaryLabelDatasetMetric` read the **true** labels, as in
    aif360: ``num_instances``, ``num_positives``, ``num_negatives``, ``base_rate``, ``consistency``,
    ``smoothed_empirical_differential_fairness`` and ``rich_subgroup``. ``disparate_impact``,
    ``statistical_parity_difference`` and ``mean_difference`` are overridden to use predictions.
    Source: aif360 0.6.1 ``aif360.metrics.ClassificationMetric``.

    Examples
    --------
    >>> import polars as pl
    >>> from polfair.compat.aif360 import ClassificationMetric
    >>> df = pl.DataFrame({"sex": [0, 0, 1, 1], "y": [1, 0, 1, 0], "p": [0, 0, 1, 1]})
    >>> cm = ClassificationMetric(df, y_true="y", y_pred="p", protected="sex",
    ...                           unprivileged_groups=[{"sex": 0}], privileged_groups=[{"sex": 1}])
    >>> print(cm.true_positive_rate(privileged=False), cm.accuracy())
    0.0 0.5
    """

    _uses_predictions = True

    @checks_keywords
    def __init__(
        self,
        data: Any,
        *,
        y_true: IntoExpr,
        y_pred: IntoExpr | None = None,
        y_score: IntoExpr | None = None,
        weight: IntoExpr | None = None,
        protected: IntoExpr | Sequence[IntoExpr],
        favorable_label: Any = 1,
        unfavorable_label: Any = 0,
        unprivileged_groups: list[dict[str, Any]] | None = None,
        privileged_groups: list[dict[str, Any]] | None = None,
        features: Sequence[str] | None = None,
    ) -> None:
        self._setup(
            data, y_true=y_true, y_pred=y_pred, y_score=y_score, weight=weight, protected=protected,
            favorable_label=favorable_label, unfavorable_label=unfavorable_label,
            unprivileged_groups=unprivileged_groups, privileged_groups=privileged_groups,
            features=features,
        )  # fmt: skip

    # -- confusion matrices -----------------------------------------------------------------

    def binary_confusion_matrix(self, privileged: bool | None = None) -> dict[str, np.float64]:
        """Weighted confusion matrix of the selected rows.

        ``TP = Σw[y = fav, ŷ = fav]``, ``FP = Σw[y = unf, ŷ = fav]``, ``TN = Σw[y = unf, ŷ = unf]``, ``FN =
        Σw[y = fav, ŷ = unf]``.

        {{privileged}}

        Returns
        -------
        dict of str to numpy.float64
            Keys in aif360's order ``TP, FP, TN, FN``; all ``0.0`` for an empty group.

        {{raises_privileged}} {{notes_source}} {{examples}}
        >>> {k: float(v) for k, v in cm.binary_confusion_matrix(privileged=False).items()}
        {'TP': 1.0, 'FP': 2.0, 'TN': 0.0, 'FN': 1.0}
        """
        return {k: self._metric(f"num_{n}", privileged) for k, n in _CONFUSION.items()}

    def generalized_binary_confusion_matrix(self, privileged: bool | None = None) -> dict[str, np.float64]:
        """Weighted generalized (score-based) confusion matrix of the selected rows.

        With ``s`` the score (default ``1[ŷ = fav]``): ``GTP = Σ w·s [y = fav]``, ``GFP = Σ w·s [y = unf]``,
        ``GTN = Σ w·(1−s) [y = unf]``, ``GFN = Σ w·(1−s) [y = fav]``.

        {{privileged}}

        Returns
        -------
        dict of str to numpy.float64
            Keys in aif360's order ``GTP, GFP, GTN, GFN``; ``0.0`` for an empty group.

        {{raises_privileged}} {{notes_source}} {{examples}}
        >>> {k: float(v) for k, v in cm.generalized_binary_confusion_matrix(privileged=True).items()}
        {'GTP': 2.0, 'GFP': 1.0, 'GTN': 1.0, 'GFN': 0.0}
        """
        return {k: self._metric(f"num_generalized_{n}", privileged) for k, n in _GCONFUSION.items()}

    @metric_doc("``TP = Σ w [y = fav, ŷ = fav]``.", "cm.num_true_positives()", "3.0", zero=True)
    def num_true_positives(self, privileged: bool | None = None) -> np.float64:
        """Number of true positives (weighted)."""
        return self._metric("num_true_positives", privileged)

    @metric_doc("``FP = Σ w [y = unf, ŷ = fav]``.", "cm.num_false_positives()", "3.0", zero=True)
    def num_false_positives(self, privileged: bool | None = None) -> np.float64:
        """Number of false positives (weighted)."""
        return self._metric("num_false_positives", privileged)

    @metric_doc("``FN = Σ w [y = fav, ŷ = unf]``.", "cm.num_false_negatives()", "1.0", zero=True)
    def num_false_negatives(self, privileged: bool | None = None) -> np.float64:
        """Number of false negatives (weighted)."""
        return self._metric("num_false_negatives", privileged)

    @metric_doc("``TN = Σ w [y = unf, ŷ = unf]``.", "cm.num_true_negatives()", "1.0", zero=True)
    def num_true_negatives(self, privileged: bool | None = None) -> np.float64:
        """Number of true negatives (weighted)."""
        return self._metric("num_true_negatives", privileged)

    @metric_doc(
        "``GTP = Σ w·s [y = fav]`` (``s`` = score, default ``1[ŷ = fav]``).", "cm.num_generalized_true_positives()",
        "3.0", zero=True)
    def num_generalized_true_positives(self, privileged: bool | None = None) -> np.float64:
        """Number of generalized true positives (weighted, score-based)."""
        return self._metric("num_generalized_true_positives", privileged)

    @metric_doc("``GFP = Σ w·s [y = unf]``.", "cm.num_generalized_false_positives()", "3.0", zero=True)
    def num_generalized_false_positives(self, privileged: bool | None = None) -> np.float64:
        """Number of generalized false positives (weighted, score-based)."""
        return self._metric("num_generalized_false_positives", privileged)

    @metric_doc("``GFN = Σ w·(1 − s) [y = fav]``.", "cm.num_generalized_false_negatives()", "1.0", zero=True)
    def num_generalized_false_negatives(self, privileged: bool | None = None) -> np.float64:
        """Number of generalized false negatives (weighted, score-based)."""
        return self._metric("num_generalized_false_negatives", privileged)

    @metric_doc("``GTN = Σ w·(1 − s) [y = unf]``.", "cm.num_generalized_true_negatives()", "1.0", zero=True)
    def num_generalized_true_negatives(self, privileged: bool | None = None) -> np.float64:
        """Number of generalized true negatives (weighted, score-based)."""
        return self._metric("num_generalized_true_negatives", privileged)

    @metric_doc("``Σ w [ŷ = fav]`` = ``TP + FP``.", "cm.num_pred_positives(privileged=False)", "3.0", zero=True)
    def num_pred_positives(self, privileged: bool | None = None) -> np.float64:
        """Number of predicted positives (weighted)."""
        return self._metric("num_pred_positives", privileged)

    @metric_doc("``Σ w [ŷ = unf]`` = ``TN + FN``.", "cm.num_pred_negatives(privileged=False)", "1.0", zero=True)
    def num_pred_negatives(self, privileged: bool | None = None) -> np.float64:
        """Number of predicted negatives (weighted)."""
        return self._metric("num_pred_negatives", privileged)

    @metric_doc(
        "``(TP + FP) / (P + N)`` = ``num_pred_positives / num_instances``, in [0, 1].",
        "cm.selection_rate(privileged=True)", "0.75", note="``nan`` (NumPy ``RuntimeWarning``) for an empty group.")
    def selection_rate(self, privileged: bool | None = None) -> np.float64:
        """Selection rate: the fraction of rows predicted favorable (weighted)."""
        return self._metric("selection_rate", privileged)

    def performance_measures(self, privileged: bool | None = None) -> dict[str, np.float64]:
        """All the rates of the selected rows at once, as aif360 returns them.

        ``TPR = TP/P, TNR = TN/N, FPR = FP/N, FNR = FN/P, GTPR = GTP/P, GTNR = GTN/N, GFPR = GFP/N, GFNR =
        GFN/P`` (unguarded); ``PPV = TP/(TP+FP), NPV = TN/(TN+FN), FDR = FP/(FP+TP), FOR = FN/(FN+TN), ACC =
        (TP+TN)/(P+N)`` (guarded).

        {{privileged}}

        Returns
        -------
        dict of str to numpy.float64
            Keys in aif360's order ``TPR, TNR, FPR, FNR, GTPR, GTNR, GFPR, GFNR, PPV, NPV, FDR, FOR, ACC``.
            Rates are fractions in [0, 1]. The first eight are ``nan`` on a zero denominator (NumPy
            ``RuntimeWarning``); the last five are ``0.0`` (silent guard, as aif360).

        {{raises_privileged}} {{notes_source}} {{examples}}
        >>> pm = cm.performance_measures(privileged=False)
        >>> list(pm)[:4], float(pm['PPV'])
        (['TPR', 'TNR', 'FPR', 'FNR'], 0.3333333333333333)
        """
        return {k: getattr(self, name)(privileged=privileged) for k, name in _PERF.items()}

    # -- rates --------------------------------------------------------------------------------

    @metric_doc(
        "``TPR = TP / P``, a fraction in [0, 1].", "cm.true_positive_rate(privileged=False)", "0.5",
        note="``nan`` when ``P = 0`` (no guard, NumPy ``RuntimeWarning``).")
    def true_positive_rate(self, privileged: bool | None = None) -> np.float64:
        """True positive rate (recall, sensitivity) of the selected rows (weighted)."""
        return self._metric("true_positive_rate", privileged)

    @metric_doc(
        "``FPR = FP / N``, a fraction in [0, 1].", "cm.false_positive_rate(privileged=False)", "1.0",
        note="``nan`` when ``N = 0`` (no guard).")
    def false_positive_rate(self, privileged: bool | None = None) -> np.float64:
        """False positive rate of the selected rows (weighted)."""
        return self._metric("false_positive_rate", privileged)

    @metric_doc(
        "``FNR = FN / P``, a fraction in [0, 1].", "cm.false_negative_rate(privileged=False)", "0.5",
        note="``nan`` when ``P = 0`` (no guard).")
    def false_negative_rate(self, privileged: bool | None = None) -> np.float64:
        """False negative rate of the selected rows (weighted)."""
        return self._metric("false_negative_rate", privileged)

    @metric_doc(
        "``TNR = TN / N``, a fraction in [0, 1].", "cm.true_negative_rate(privileged=True)", "0.5",
        note="``nan`` when ``N = 0`` (no guard).")
    def true_negative_rate(self, privileged: bool | None = None) -> np.float64:
        """True negative rate (specificity) of the selected rows (weighted)."""
        return self._metric("true_negative_rate", privileged)

    @metric_doc(
        "``GTPR = GTP / P``, in [0, 1].", "cm.generalized_true_positive_rate()", "0.75",
        note="``nan`` when ``P = 0`` (no guard).")
    def generalized_true_positive_rate(self, privileged: bool | None = None) -> np.float64:
        """Generalized (score-based) true positive rate (weighted)."""
        return self._metric("generalized_true_positive_rate", privileged)

    @metric_doc(
        "``GFPR = GFP / N``, in [0, 1].", "cm.generalized_false_positive_rate()", "0.75",
        note="``nan`` when ``N = 0`` (no guard).")
    def generalized_false_positive_rate(self, privileged: bool | None = None) -> np.float64:
        """Generalized (score-based) false positive rate (weighted)."""
        return self._metric("generalized_false_positive_rate", privileged)

    @metric_doc(
        "``GFNR = GFN / P``, in [0, 1].", "cm.generalized_false_negative_rate()", "0.25",
        note="``nan`` when ``P = 0`` (no guard).")
    def generalized_false_negative_rate(self, privileged: bool | None = None) -> np.float64:
        """Generalized (score-based) false negative rate (weighted)."""
        return self._metric("generalized_false_negative_rate", privileged)

    @metric_doc(
        "``GTNR = GTN / N``, in [0, 1].", "cm.generalized_true_negative_rate()", "0.25",
        note="``nan`` when ``N = 0`` (no guard).")
    def generalized_true_negative_rate(self, privileged: bool | None = None) -> np.float64:
        """Generalized (score-based) true negative rate (weighted)."""
        return self._metric("generalized_true_negative_rate", privileged)

    @metric_doc(
        "``PPV = TP / (TP + FP)`` if ``TP + FP > 0`` else ``0.0``, in [0, 1].",
        "cm.positive_predictive_value(privileged=True)", "0.6666666666666666",
        note="``0.0`` when nothing is predicted positive (aif360's guard, not ``nan``).")
    def positive_predictive_value(self, privileged: bool | None = None) -> np.float64:
        """Positive predictive value (precision) of the selected rows (weighted)."""
        return self._guarded("positive_predictive_value", privileged)

    @metric_doc(
        "``FDR = FP / (FP + TP)`` if ``FP + TP > 0`` else ``0.0``, in [0, 1].",
        "cm.false_discovery_rate(privileged=False)", "0.6666666666666666",
        note="``0.0`` when nothing is predicted positive (so PPV + FDR = 0 then).")
    def false_discovery_rate(self, privileged: bool | None = None) -> np.float64:
        """False discovery rate of the selected rows (weighted)."""
        return self._guarded("false_discovery_rate", privileged)

    @metric_doc(
        "``FOR = FN / (FN + TN)`` if ``FN + TN > 0`` else ``0.0``, in [0, 1].",
        "cm.false_omission_rate(privileged=False)", "1.0", note="``0.0`` when nothing is predicted negative.")
    def false_omission_rate(self, privileged: bool | None = None) -> np.float64:
        """False omission rate of the selected rows (weighted)."""
        return self._guarded("false_omission_rate", privileged)

    @metric_doc(
        "``NPV = TN / (TN + FN)`` if ``TN + FN > 0`` else ``0.0``, in [0, 1].",
        "cm.negative_predictive_value(privileged=True)", "1.0", note="``0.0`` when nothing is predicted negative.")
    def negative_predictive_value(self, privileged: bool | None = None) -> np.float64:
        """Negative predictive value of the selected rows (weighted)."""
        return self._guarded("negative_predictive_value", privileged)

    @metric_doc(
        "``ACC = (TP + TN) / (P + N)`` if ``P + N > 0`` else ``0.0``, in [0, 1].", "cm.accuracy(privileged=True)",
        "0.75", note="``0.0`` for an empty group (aif360's guard).")
    def accuracy(self, privileged: bool | None = None) -> np.float64:
        """Accuracy of the selected rows (weighted)."""
        return self._guarded("accuracy", privileged)

    @metric_doc(
        "``ERR = 1 − accuracy`` (computed exactly so, as aif360), in [0, 1].", "cm.error_rate(privileged=False)",
        "0.75", note="**1.0 for an empty group** (accuracy is guarded to 0.0).")
    def error_rate(self, privileged: bool | None = None) -> np.float64:
        """Error rate of the selected rows (weighted)."""
        return 1.0 - self.accuracy(privileged=privileged)

    # -- group comparisons --------------------------------------------------------------------

    @metric_doc(
        "``TPR(unprivileged) − TPR(privileged)``; 0 is parity.", "cm.true_positive_rate_difference()", "-0.5",
        note="``nan`` if either TPR is ``nan`` (a group without positives).")
    def true_positive_rate_difference(self) -> np.float64:
        """Difference in true positive rates (equal opportunity difference)."""
        return self.difference(self.true_positive_rate)

    @metric_doc(
        "``FPR(unprivileged) − FPR(privileged)``.", "cm.false_positive_rate_difference()", "0.5",
        note="``nan`` if either FPR is ``nan``.")
    def false_positive_rate_difference(self) -> np.float64:
        """Difference in false positive rates."""
        return self.difference(self.false_positive_rate)

    @metric_doc(
        "``FNR(unprivileged) − FNR(privileged)``.", "cm.false_negative_rate_difference()", "0.5",
        note="``nan`` if either FNR is ``nan``.")
    def false_negative_rate_difference(self) -> np.float64:
        """Difference in false negative rates."""
        return self.difference(self.false_negative_rate)

    @metric_doc(
        "``FOR(unprivileged) − FOR(privileged)`` (guarded FOR: 0.0 without predicted negatives).",
        "cm.false_omission_rate_difference()", "1.0")
    def false_omission_rate_difference(self) -> np.float64:
        """Difference in false omission rates."""
        return self.difference(self.false_omission_rate)

    @metric_doc(
        "``FDR(unprivileged) − FDR(privileged)`` (guarded FDR: 0.0 without predicted positives).",
        "round(cm.false_discovery_rate_difference(), 6)", "0.333333")
    def false_discovery_rate_difference(self) -> np.float64:
        """Difference in false discovery rates."""
        return self.difference(self.false_discovery_rate)

    @metric_doc(
        "``FPR(unprivileged) / FPR(privileged)``.", "cm.false_positive_rate_ratio()", "2.0",
        note="``inf`` if the privileged FPR is 0 (and the other is not), ``nan`` for 0/0.")
    def false_positive_rate_ratio(self) -> np.float64:
        """Ratio of false positive rates."""
        return self.ratio(self.false_positive_rate)

    @metric_doc(
        "``FNR(unprivileged) / FNR(privileged)``.", "cm.false_negative_rate_ratio()", "inf",
        note="``inf`` if the privileged FNR is 0 (and the other is not), ``nan`` for 0/0.")
    def false_negative_rate_ratio(self) -> np.float64:
        """Ratio of false negative rates."""
        return self.ratio(self.false_negative_rate)

    @metric_doc(
        "``FOR(unprivileged) / FOR(privileged)`` (guarded FORs).", "cm.false_omission_rate_ratio()", "inf",
        note="``inf`` / ``nan`` on a zero privileged FOR.")
    def false_omission_rate_ratio(self) -> np.float64:
        """Ratio of false omission rates."""
        return self.ratio(self.false_omission_rate)

    @metric_doc(
        "``FDR(unprivileged) / FDR(privileged)`` (guarded FDRs).", "cm.false_discovery_rate_ratio()", "2.0",
        note="``inf`` / ``nan`` on a zero privileged FDR.")
    def false_discovery_rate_ratio(self) -> np.float64:
        """Ratio of false discovery rates."""
        return self.ratio(self.false_discovery_rate)

    @metric_doc(
        "``0.5 · (ΔFPR + ΔTPR)`` with ``Δ = unprivileged − privileged``.", "cm.average_odds_difference()", "0.0",
        note="``nan`` if any of the four rates is ``nan``.")
    def average_odds_difference(self) -> np.float64:
        """Average odds difference."""
        return 0.5 * (self.difference(self.false_positive_rate) + self.difference(self.true_positive_rate))

    @metric_doc(
        "``0.5 · (|ΔFPR| + |ΔTPR|)``.", "cm.average_abs_odds_difference()", "0.5",
        note="``nan`` if any of the four rates is ``nan``.")
    def average_abs_odds_difference(self) -> np.float64:
        """Average absolute odds difference."""
        fpr_diff, tpr_diff = self.difference(self.false_positive_rate), self.difference(self.true_positive_rate)
        return 0.5 * (np.abs(fpr_diff) + np.abs(tpr_diff))

    @metric_doc(
        "``0.5 · (ΔPPV + ΔFOR)``: aif360 averages PPV and the false **omission** rate (not NPV), so this is\n"
        "``0.5 · (ΔPPV − ΔNPV)`` when both are defined; guarded zeros feed in.",
        "round(cm.average_predictive_value_difference(), 6)", "0.333333")
    def average_predictive_value_difference(self) -> np.float64:
        """Average predictive value difference."""
        return 0.5 * (self.difference(self.positive_predictive_value) + self.difference(self.false_omission_rate))

    @metric_doc(
        "``max(|ΔFPR|, |ΔTPR|)`` with Python's builtin ``max``.", "cm.equalized_odds_difference()", "0.5",
        note="Builtin-``max`` NaN order, as aif360: ``nan`` when ``|ΔFPR|`` is ``nan``, but ``|ΔFPR|`` when only\n"
             "``|ΔTPR|`` is ``nan``.")
    def equalized_odds_difference(self) -> np.float64:
        """Equalized odds difference (aif360's): the larger absolute rate gap."""
        return max(np.abs(self.difference(self.false_positive_rate)), np.abs(self.difference(self.true_positive_rate)))

    @metric_doc(
        "``max(|ΔGFPR|, |ΔGTPR|)`` with Python's builtin ``max``.", "cm.generalized_equalized_odds_difference()",
        "0.5",
        note="Builtin-``max`` NaN order: ``nan`` when ``|ΔGFPR|`` is ``nan``, else a ``nan`` ``|ΔGTPR|`` is\n"
             "ignored.")
    def generalized_equalized_odds_difference(self) -> np.float64:
        """Generalized equalized odds difference: the larger absolute generalized-rate gap."""
        return max(
            np.abs(self.difference(self.generalized_false_positive_rate)),
            np.abs(self.difference(self.generalized_true_positive_rate)),
        )

    @metric_doc(
        "``ERR(unprivileged) − ERR(privileged)`` with ``ERR = 1 − ACC``.", "cm.error_rate_difference()", "0.5",
        note="An empty group has ERR = 1.0.")
    def error_rate_difference(self) -> np.float64:
        """Difference in error rates."""
        return self.difference(self.error_rate)

    @metric_doc(
        "``ERR(unprivileged) / ERR(privileged)``.", "cm.error_rate_ratio()", "3.0",
        note="``inf`` when the privileged group makes no error (or, through the guard, is perfect), ``nan`` for\n"
             "0/0.")
    def error_rate_ratio(self) -> np.float64:
        """Ratio of error rates."""
        return self.ratio(self.error_rate)

    def disparate_impact(self) -> np.float64:
        """Disparate impact of the predictions: ratio of selection rates.

        ``selection_rate(unprivileged) / selection_rate(privileged)``; 1 is parity, < 1 disadvantages the
        unprivileged group.

        {{returns_float}}
            ``inf`` when the privileged selection rate is 0, ``nan`` for 0/0.

        {{raises_groups}}

        Notes
        -----
        Overrides the label-based version of BinaryLabelDatasetMetric (predictions here).

        Source: aif360 0.6.1 ``ClassificationMetric.disparate_impact`` (same value, same NaN/inf cases).

        {{examples}}
        >>> print(cm.disparate_impact())
        1.0
        """
        return self.ratio(self.selection_rate)

    def statistical_parity_difference(self) -> np.float64:
        """Statistical parity difference of the predictions: difference of selection rates.

        ``selection_rate(unprivileged) − selection_rate(privileged)``, in [−1, 1].

        {{returns_float}}
            ``nan`` if either selection rate is ``nan``.

        {{raises_groups}}

        Notes
        -----
        Overrides the label-based version (predictions here); ``mean_difference`` follows.

        Source: aif360 0.6.1 ``ClassificationMetric.statistical_parity_difference`` (same value, same NaN/inf
        cases).

        {{examples}}
        >>> print(cm.statistical_parity_difference())
        0.0
        """
        return self.difference(self.selection_rate)

    # -- entropy indices ------------------------------------------------------------------------

    def _ge(self, benefits: pl.DataFrame, alpha: float) -> np.float64:
        v = entropy.generalized_entropy_index(benefits, alpha)["value"]
        x = v.item() if v.len() else None
        return _F(np.nan if x is None else x)

    def generalized_entropy_index(self, alpha: float = 2) -> np.float64:
        """Generalized entropy index of the benefits ``b = 1 + ŷ − y`` of all individuals.

        ``b_i ∈ {0 (FN), 1 (correct), 2 (FP)}``, ``μ = mean(b)``: ``GE(α) = mean((b/μ)^α − 1) / (α(α − 1))``;
        ``α = 1``: ``mean(ln((b/μ)^b) / μ)``; ``α = 0``: ``−mean(ln(b/μ) / μ)``. Unitless, ≥ 0.

        Parameters
        ----------
        alpha
            The index's parameter (2: half the squared coefficient of variation; 1: Theil).

        {{returns_float}}
            ``inf`` for α = 0 (or α < 0) whenever a false negative exists; ``nan`` if every row is a false
            negative (μ = 0).

        Raises
        ------
        InvalidInputError
            Invalid data (first call).

        Notes
        -----
        **Unweighted and on hard labels** (scores and weights ignored), over all rows, ignoring the groups, as
        aif360. The α = 0 form carries aif360's extra ``1/μ`` (not the paper's formula). Computed from the
        cell table's counts of b = 0, 1, 2 (:func:`polfair.core.entropy.generalized_entropy_index`); equal to
        aif360 to ~1e-15 relative. Speicher et al. (2018), 'A unified approach to quantifying algorithmic
        unfairness', KDD.

        Source: aif360 0.6.1 ``ClassificationMetric.generalized_entropy_index`` (same value, same NaN/inf
        cases).

        {{examples}}
        >>> print(round(cm.generalized_entropy_index(), 6))
        0.14
        """
        self.cells  # noqa: B018
        assert self._cells is not None  # set by the line above
        return self._ge(entropy.benefit_of_individuals(self._cells), alpha)

    def theil_index(self) -> np.float64:
        """Theil index of the benefits of all individuals: ``generalized_entropy_index(alpha=1)``.

        ``mean((b/μ) ln(b/μ))`` computed as aif360's ``mean(ln((b/μ)^b) / μ)``; b = 0 terms are 0.

        {{returns_float}}
            ≥ 0; ``nan`` if every row is a false negative.

        Raises
        ------
        InvalidInputError
            Invalid data (first call).

        Notes
        -----
        Unweighted, hard labels, all rows.

        Source: aif360 0.6.1 ``ClassificationMetric.theil_index`` (same value, same NaN/inf cases).

        {{examples}}
        >>> print(round(cm.theil_index(), 6))
        0.192745
        """
        return self.generalized_entropy_index(alpha=1)

    def coefficient_of_variation(self) -> np.float64:
        """Coefficient of variation of the benefits of all individuals.

        ``sqrt(2 · generalized_entropy_index(alpha=2))`` (aif360 ≥ 0.4.0; before 2022 it was
        ``2·sqrt(GE(2))``).

        {{returns_float}}
            ≥ 0; ``nan`` if every row is a false negative.

        Raises
        ------
        InvalidInputError
            Invalid data (first call).

        Notes
        -----
        Unweighted, hard labels, all rows.

        Source: aif360 0.6.1 ``ClassificationMetric.coefficient_of_variation`` (same value, same NaN/inf
        cases).

        {{examples}}
        >>> print(round(cm.coefficient_of_variation(), 6))
        0.52915
        """
        return np.sqrt(2 * self.generalized_entropy_index(alpha=2))

    def _between(self, alpha: float) -> np.float64:
        groups = [self._to_condition(False), self._to_condition(True)]
        self.cells  # noqa: B018
        arr = self._arrays
        nv = arr["tp_n"] + arr["fp_n"] + arr["tn_n"] + arr["fn_n"]
        bsum = arr["tp_n"] + arr["tn_n"] + 2 * arr["fp_n"]
        bs, cnts = [], []
        covered = np.zeros(nv.shape[0], dtype=bool)
        for tag in groups:
            m = self._mask(tag) & ~covered  # groups are disjoint (checked); a later group wins in aif360
            covered |= m
            k = int(nv[self._mask(tag)].sum())
            if k == 0:
                continue  # aif360 skips groups without rows
            bs.append(float(bsum[self._mask(tag)].sum()) / float(k))
            cnts.append(float(k))
        rest = float(nv[~covered].sum())
        bs.append(0.0)  # aif360 quirk: rows in neither group keep b = 0
        cnts.append(rest)
        return self._ge(pl.DataFrame({"b": bs, "cnt": cnts}), alpha)

    def between_group_generalized_entropy_index(self, alpha: float = 2) -> np.float64:
        """Between-group generalized entropy index: each row's benefit replaced by its group's mean.

        ``b_i`` = mean of ``1 + ŷ − y`` over the row's group (unprivileged or privileged), **0 for rows in
        neither group** (aif360 quirk); then GE(α) of that length-n vector, as
        :meth:`generalized_entropy_index`.

        Parameters
        ----------
        alpha
            The index's parameter.

        {{returns_float}}
            ≥ 0; ``inf`` for α = 0 when some row is in neither group or a group mean is 0.

        Raises
        ------
        AttributeError
            ``privileged_groups`` or ``unprivileged_groups`` was not given.
        InvalidInputError
            Invalid data (first call).

        Notes
        -----
        Unweighted, hard labels. Rows outside both groups are kept with b = 0 (which inflates the index when
        the groups do not cover the data); empty groups are skipped. Speicher et al. (2018).

        Source: aif360 0.6.1 ``ClassificationMetric.between_group_generalized_entropy_index`` (same value,
        same NaN/inf cases).

        {{examples}}
        >>> print(round(cm.between_group_generalized_entropy_index(), 6))
        0.0
        """
        return self._between(alpha)

    def between_group_theil_index(self) -> np.float64:
        """Between-group Theil index: ``between_group_generalized_entropy_index(alpha=1)``.

        GE(1) of the group-mean benefit vector (rows in neither group: b = 0).

        {{returns_float}}

        Raises
        ------
        AttributeError
            A group definition was not given.
        InvalidInputError
            Invalid data.

        Notes
        -----
        Unweighted, hard labels.

        Source: aif360 0.6.1 ``ClassificationMetric.between_group_theil_index`` (same value, same NaN/inf
        cases).

        {{examples}}
        >>> print(round(cm.between_group_theil_index(), 6))
        0.0
        """
        return self.between_group_generalized_entropy_index(alpha=1)

    def between_group_coefficient_of_variation(self) -> np.float64:
        """Between-group coefficient of variation: ``sqrt(2 · between_group_generalized_entropy_index(2))``.

        ``sqrt(2 · GE(2))`` of the group-mean benefit vector.

        {{returns_float}}

        Raises
        ------
        AttributeError
            A group definition was not given.
        InvalidInputError
            Invalid data.

        Notes
        -----
        Unweighted, hard labels.

        Source: aif360 0.6.1 ``ClassificationMetric.between_group_coefficient_of_variation`` (same value, same
        NaN/inf cases).

        {{examples}}
        >>> print(round(cm.between_group_coefficient_of_variation(), 6))
        0.0
        """
        return np.sqrt(2 * self.between_group_generalized_entropy_index(alpha=2))

    def between_all_groups_generalized_entropy_index(self, alpha: float = 2) -> np.float64:
        """Between-all-groups generalized entropy index: benefits averaged within every intersection.

        ``b_i`` = mean of ``1 + ŷ − y`` over the row's cell of the cross product of ALL protected attributes;
        then GE(α) as :meth:`generalized_entropy_index`.

        Parameters
        ----------
        alpha
            The index's parameter.

        {{returns_float}}
            ≥ 0.

        Raises
        ------
        InvalidInputError
            Invalid data (first call).

        Notes
        -----
        Unweighted, hard labels; ignores the metric's privileged/unprivileged groups (as aif360). Every row is
        in exactly one cell, so no b = 0 rows are added.

        Source: aif360 0.6.1 ``ClassificationMetric.between_all_groups_generalized_entropy_index`` (same
        value, same NaN/inf cases).

        {{examples}}
        >>> print(round(cm.between_all_groups_generalized_entropy_index(), 6))
        0.0
        """
        self.cells  # noqa: B018
        return self._ge(entropy.benefit_of_groups(self._cells), alpha)  # type: ignore[arg-type]

    def between_all_groups_theil_index(self) -> np.float64:
        """Between-all-groups Theil index: ``between_all_groups_generalized_entropy_index(alpha=1)``.

        GE(1) of the cell-mean benefit vector.

        {{returns_float}}

        Raises
        ------
        InvalidInputError
            Invalid data (first call).

        Notes
        -----
        Unweighted, hard labels.

        Source: aif360 0.6.1 ``ClassificationMetric.between_all_groups_theil_index`` (same value, same NaN/inf
        cases).

        {{examples}}
        >>> print(round(cm.between_all_groups_theil_index(), 6))
        0.0
        """
        return self.between_all_groups_generalized_entropy_index(alpha=1)

    def between_all_groups_coefficient_of_variation(self) -> np.float64:
        """Between-all-groups coefficient of variation.

        ``sqrt(2 · between_all_groups_generalized_entropy_index(alpha=2))``.

        {{returns_float}}

        Raises
        ------
        InvalidInputError
            Invalid data (first call).

        Notes
        -----
        Unweighted, hard labels.

        Source: aif360 0.6.1 ``ClassificationMetric.between_all_groups_coefficient_of_variation`` (same value,
        same NaN/inf cases).

        {{examples}}
        >>> print(round(cm.between_all_groups_coefficient_of_variation(), 6))
        0.0
        """
        return np.sqrt(2 * self.between_all_groups_generalized_entropy_index(alpha=2))

    def differential_fairness_bias_amplification(self, concentration: float = 1.0) -> np.float64:
        """Bias amplification: differential fairness of the predictions minus that of the true labels.

        ``EDF(ŷ) − EDF(y)``, each the smoothed empirical differential fairness over all intersections of the
        protected attributes (see :meth:`~BinaryLabelDatasetMetric.smoothed_empirical_differential_fairness`).
        Positive: the classifier amplified the disparity (in nats).

        Parameters
        ----------
        concentration
            Dirichlet smoothing ≥ 0.

        {{returns_float}}
            ``inf − inf = nan`` at concentration 0 with pure cells.

        Raises
        ------
        ValueError
            ``concentration < 0``; a single observed intersection.
        InvalidInputError
            Invalid data (first call).

        Notes
        -----
        Weighted. Foulds et al. (2020), 'An intersectional definition of fairness', ICDE.

        Source: aif360 0.6.1 ``ClassificationMetric.differential_fairness_bias_amplification`` (same value,
        same NaN/inf cases).

        {{examples}}
        >>> print(round(cm.differential_fairness_bias_amplification(), 6))
        0.0
        """
        edf_clf = self._edf(self._smoothed_base_rates(METRICS["num_pred_positives"].numerator, concentration))
        edf_data = self.smoothed_empirical_differential_fairness(concentration)
        return edf_clf - edf_data

    # -- aliases ---------------------------------------------------------------------------------

    @metric_doc("``TPR(unprivileged) − TPR(privileged)``.", "cm.equal_opportunity_difference()", "-0.5")
    def equal_opportunity_difference(self) -> np.float64:
        """Alias of :meth:`true_positive_rate_difference`."""
        return self.true_positive_rate_difference()

    @metric_doc("``TP = Σ w [y = fav, ŷ = fav]``.", "cm.power(privileged=True)", "2.0")
    def power(self, privileged: bool | None = None) -> np.float64:
        """Alias of :meth:`num_true_positives` (aif360's ``power`` is the TP **count**, not a rate)."""
        return self.num_true_positives(privileged=privileged)

    @metric_doc(
        "``TP / (TP + FP)``, 0.0 without predicted positives.", "cm.precision(privileged=False)", "0.3333333333333333")
    def precision(self, privileged: bool | None = None) -> np.float64:
        """Alias of :meth:`positive_predictive_value`."""
        return self.positive_predictive_value(privileged=privileged)

    @metric_doc("``TP / P``, ``nan`` when P = 0.", "cm.recall(privileged=True)", "1.0")
    def recall(self, privileged: bool | None = None) -> np.float64:
        """Alias of :meth:`true_positive_rate`."""
        return self.true_positive_rate(privileged=privileged)

    @metric_doc("``TP / P``, ``nan`` when P = 0.", "cm.sensitivity()", "0.75")
    def sensitivity(self, privileged: bool | None = None) -> np.float64:
        """Alias of :meth:`true_positive_rate`."""
        return self.true_positive_rate(privileged=privileged)

    @metric_doc("``TN / N``, ``nan`` when N = 0.", "cm.specificity()", "0.25")
    def specificity(self, privileged: bool | None = None) -> np.float64:
        """Alias of :meth:`true_negative_rate`."""
        return self.true_negative_rate(privileged=privileged)


_CONFUSION = {"TP": "true_positives", "FP": "false_positives", "TN": "true_negatives", "FN": "false_negatives"}
_GCONFUSION = {"GTP": "true_positives", "GFP": "false_positives", "GTN": "true_negatives", "GFN": "false_negatives"}
_PERF = {
    "TPR": "true_positive_rate", "TNR": "true_negative_rate", "FPR": "false_positive_rate",
    "FNR": "false_negative_rate", "GTPR": "generalized_true_positive_rate",
    "GTNR": "generalized_true_negative_rate", "GFPR": "generalized_false_positive_rate",
    "GFNR": "generalized_false_negative_rate", "PPV": "positive_predictive_value",
    "NPV": "negative_predictive_value", "FDR": "false_discovery_rate", "FOR": "false_omission_rate",
    "ACC": "accuracy",
}  # fmt: skip
