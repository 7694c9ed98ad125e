"""``BinaryLabelDatasetMetric``: aif360 0.6.1's metrics of a labelled dataset, on the cell table."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import polars as pl

from polfair.compat.aif360 import second_pass as individual
from polfair.compat.aif360._base import CellTableMetric
from polfair.compat.aif360._docs import expand_docstrings, metric_doc
from polfair.core._typing import IntoExpr
from polfair.core.metrics import METRICS
from polfair.core.options import checks_keywords

__all__ = ["BinaryLabelDatasetMetric"]


@expand_docstrings
class BinaryLabelDatasetMetric(CellTableMetric):
    """Metrics of a labelled dataset (no predictions), aif360 0.6.1-compatible.

    Drop-in for ``aif360.metrics.BinaryLabelDatasetMetric`` on a Polars frame: the same 12 public
    methods, arguments, values and quirks. See :mod:`polfair.compat.aif360` for how it computes and for
    the (input-only) differences from aif360.

    Parameters
    ----------
    data
        The rows, one per individual: a ``pl.DataFrame``, ``pl.LazyFrame``, pandas DataFrame, pyarrow
        Table, dict of columns or path; a path is scanned lazily (parquet, CSV, IPC).
    y
        The label column: every value must be ``favorable_label`` or ``unfavorable_label``.
    protected
        Protected attributes (named expressions allowed, e.g. a binned age). Group conditions may
        only name these. aif360 needs numbers; strings work here too.
    weight
        Instance weights (Float64, finite, ≥ 0). Default: every weight 1.
    favorable_label, unfavorable_label
        Label values, each a scalar or a list of scalars (default 1 and 0). Lists give aif360's
        ``MulticlassLabelDataset`` mapping (a label in the list is favorable / unfavorable); then raw
        labels are the 0/1 indicator (consistency, rich_subgroup).
    unprivileged_groups, privileged_groups
        aif360 group conditions: ``[{"sex": 1}]``, ``[{"sex": 1, "race": 0}, {"sex": 0}]`` (OR across
        dicts, AND within); ``None``: not given; ``[]``: an empty group; ``[{}]``: every row.
    features
        Columns used by :meth:`consistency`. Default: as aif360, every numeric (or boolean) column
        of ``data`` except the label, prediction, score and weight columns, in frame order
        (protected attributes included).

    Raises
    ------
    TypeError
        ``data`` of an unsupported type, or a group condition that is not a list of dicts.
    ValueError
        A group condition names a column that is not a protected attribute
        (aif360's "'x' is not in list").
    ColumnNotFoundError
        A named column is missing.

    Notes
    -----
    Data problems (nulls, labels outside favorable/unfavorable, bad weights) and overlapping
    groups raise on the first method call, when the one pass runs. Source: aif360 0.6.1
    ``aif360.metrics.BinaryLabelDatasetMetric`` (Bellamy et al. 2018, "AI Fairness 360").

    Examples
    --------
    >>> import polars as pl
    >>> from polfair.compat.aif360 import BinaryLabelDatasetMetric
    >>> df = pl.DataFrame({"sex": [0, 0, 1, 1], "y": [1, 0, 1, 1]})
    >>> dm = BinaryLabelDatasetMetric(df, y="y", protected="sex",
    ...                               unprivileged_groups=[{"sex": 0}], privileged_groups=[{"sex": 1}])
    >>> print(dm.disparate_impact())
    0.5
    """

    _uses_predictions = False

    @checks_keywords
    def __init__(
        self,
        data: Any,
        *,
        y: IntoExpr,
        protected: IntoExpr | Sequence[IntoExpr],
        weight: IntoExpr | None = None,
        favorable_label: Any = 1,
        unfavorable_label: Any = 0,
        unprivileged_groups: list[dict[str, Any]] | None = None,
        privileged_groups: list[dict[str, Any]] | None = None,
        features: Sequence[str] | None = None,
    ) -> None:
        self._setup(
            data, y_true=y, y_pred=None, y_score=None, weight=weight, protected=protected,
            favorable_label=favorable_label, unfavorable_label=unfavorable_label,
            unprivileged_groups=unprivileged_groups, privileged_groups=privileged_groups,
            features=features,
        )  # fmt: skip


    # -- generic comparisons ----------------------------------------------------------------

    def difference(self, metric_fun: Callable[..., Any]) -> np.float64:
        """Difference of a metric between the unprivileged and the privileged group.

        ``metric_fun(privileged=False) - metric_fun(privileged=True)`` (unprivileged − privileged).

        Parameters
        ----------
        metric_fun
            A bound method of this object taking ``privileged=`` and returning a scalar.

        {{returns_float}}
            ``nan`` if either side is ``nan``; ``inf − inf`` is ``nan``.

        {{raises_groups}}
        TypeError
            ``metric_fun`` returns a dict (e.g. ``binary_confusion_matrix``).

        Notes
        -----
        NumPy float64 arithmetic: nothing raises on undefined values.

        Source: aif360 0.6.1 ``ClassificationMetric.difference`` (same value, same NaN/inf cases).

        {{examples}}
        >>> print(cm.difference(cm.selection_rate))
        0.0
        """
        return metric_fun(privileged=False) - metric_fun(privileged=True)

    def ratio(self, metric_fun: Callable[..., Any]) -> np.float64:
        """Ratio of a metric between the unprivileged and the privileged group.

        ``metric_fun(privileged=False) / metric_fun(privileged=True)`` (unprivileged / privileged).

        Parameters
        ----------
        metric_fun
            A bound method of this object taking ``privileged=`` and returning a scalar.

        {{returns_float}}
            ``x/0 = inf`` (x > 0), ``0/0 = nan``, with NumPy's ``RuntimeWarning``.

        {{raises_groups}}
        TypeError
            ``metric_fun`` returns a dict.

        Notes
        -----
        NumPy float64 arithmetic: nothing raises on a zero denominator.

        Source: aif360 0.6.1 ``ClassificationMetric.ratio`` (same value, same NaN/inf cases).

        {{examples}}
        >>> print(cm.ratio(cm.true_positive_rate))
        0.5
        """
        return metric_fun(privileged=False) / metric_fun(privileged=True)

    # -- counts on labels ---------------------------------------------------------------------

    @metric_doc(
        "``Σ w`` over the rows of the group.", "dm.num_instances(privileged=True)", "4.0",
        note="The sum of weights (the row count without weights); ``0.0`` for an empty group.")
    def num_instances(self, privileged: bool | None = None) -> np.float64:
        """Number of instances ``n`` in the selected rows (weighted)."""
        return self._metric("num_instances", privileged)

    @metric_doc(
        "``P = Σ w [y = favorable_label]`` over the group.", "dm.num_positives(privileged=False)", "1.0", zero=True)
    def num_positives(self, privileged: bool | None = None) -> np.float64:
        """Number of positives ``P``: rows whose true label is favorable (weighted)."""
        return self._metric("num_positives", privileged)

    @metric_doc(
        "``N = Σ w [y = unfavorable_label]`` over the group.", "dm.num_negatives(privileged=False)", "3.0", zero=True)
    def num_negatives(self, privileged: bool | None = None) -> np.float64:
        """Number of negatives ``N``: rows whose true label is unfavorable (weighted)."""
        return self._metric("num_negatives", privileged)

    @metric_doc(
        "``P / (P + N)`` = ``num_positives / num_instances``, a fraction in [0, 1].", "dm.base_rate(privileged=True)",
        "0.75", note="``nan`` (with NumPy's ``RuntimeWarning``) for an empty group (0/0), as aif360.")
    def base_rate(self, privileged: bool | None = None) -> np.float64:
        """Base rate: the fraction of rows with the favorable true label (weighted)."""
        return self._metric("base_rate", privileged)

    def disparate_impact(self) -> np.float64:
        """Disparate impact of the true labels: ratio of base rates.

        ``base_rate(privileged=False) / base_rate(privileged=True)``; 1 is parity, < 1 disadvantages the
        unprivileged group.

        {{returns_float}}
            ``inf`` when the privileged base rate is 0, ``nan`` for 0/0.

        {{raises_groups}}

        Notes
        -----
        In :class:`ClassificationMetric` this is overridden to use predictions (selection rates).

        Source: aif360 0.6.1 ``BinaryLabelDatasetMetric.disparate_impact`` (same value, same NaN/inf cases).

        {{examples_dataset}}
        >>> print(dm.disparate_impact())
        0.3333333333333333
        """
        return self.ratio(self.base_rate)

    def statistical_parity_difference(self) -> np.float64:
        """Statistical parity difference of the true labels: difference of base rates.

        ``base_rate(privileged=False) − base_rate(privileged=True)``, in [−1, 1]; 0 is parity.

        {{returns_float}}
            ``nan`` if either base rate is ``nan``.

        {{raises_groups}}

        Notes
        -----
        In :class:`ClassificationMetric` this is overridden to use predictions (selection rates).

        Source: aif360 0.6.1 ``BinaryLabelDatasetMetric.statistical_parity_difference`` (same value, same
        NaN/inf cases).

        {{examples_dataset}}
        >>> print(dm.statistical_parity_difference())
        -0.5
        """
        return self.difference(self.base_rate)

    @metric_doc("``self.statistical_parity_difference()``.", "dm.mean_difference()", "-0.5")
    def mean_difference(self) -> np.float64:
        """Alias of :meth:`statistical_parity_difference` (dynamic: predictions in ClassificationMetric)."""
        return self.statistical_parity_difference()

    # -- row-level measures (second pass) ---------------------------------------------------

    def consistency(self, n_neighbors: int = 5) -> float:
        """Individual fairness: consistency of each row's label with its k nearest neighbours' labels.

        ``1 − (1/n) Σ_i |y_i − mean(y_j for j in kNN(x_i))|`` over the features (unscaled, Euclidean, the row
        itself among its neighbours); see :func:`polfair.compat.aif360.second_pass.consistency`.

        Parameters
        ----------
        n_neighbors
            Number of neighbours ``k`` (``k = 1`` gives 1.0).

        Returns
        -------
        float
            In [0, 1] for 0/1 labels. **aif360 0.6.1 returns an ndarray of shape (1,)**; this returns the
            float it holds.

        Raises
        ------
        ImportError
            scikit-learn is missing: ``pip install 'polfair[sklearn]'``.
        ValueError
            ``n_neighbors`` larger than the number of rows (from scikit-learn), or a named feature column is
            missing.

        Notes
        -----
        Unweighted; ignores the groups; uses the *true* labels (also in ClassificationMetric: the classifier's
        consistency is ``BinaryLabelDatasetMetric(df, y=pred_col, ...)``). Raw label values, as aif360.
        Features: ``features=`` or every numeric column except label, prediction, score and weight. A
        documented second pass over the data (collected once per object). Zemel et al. (2013), 'Learning fair
        representations'.

        Source: aif360 0.6.1 ``BinaryLabelDatasetMetric.consistency`` (same value, same NaN/inf cases).

        {{examples_dataset}}
        >>> print(round(dm.consistency(n_neighbors=3), 6))
        0.708333
        """
        rows = self._raw_rows()
        if rows["features"].shape[1] == 0:
            msg = "consistency() found no numeric feature columns; pass features=[...] to the constructor"
            raise ValueError(msg)
        return individual.consistency(rows["features"], rows["y"], n_neighbors)

    def smoothed_empirical_differential_fairness(self, concentration: float = 1.0) -> np.float64:
        """Smoothed empirical differential fairness (EDF) of the labels over all protected attributes.

        With each observed intersection ``k`` of ALL protected attributes, ``s_k = (pos_k + c/2) / (tot_k +
        c)`` (weighted counts, Dirichlet smoothing ``c``): ``max over i != j of max(|ln s_i − ln s_j|, |ln(1 −
        s_i) − ln(1 − s_j)|)``, in nats (≥ 0; 0 is perfect fairness).

        Parameters
        ----------
        concentration
            Smoothing ``c`` ≥ 0.

        {{returns_float}}
            ``inf`` or ``nan`` at concentration 0 with a pure cell (log 0), with Python's builtin-``max`` NaN
            order: ``nan`` if the first pair's term is ``nan``, else ``nan`` terms are skipped.

        Raises
        ------
        ValueError
            ``concentration < 0`` ('Concentration parameter must be non-negative.'); a single observed
            intersection ('max() arg is an empty sequence').
        InvalidInputError
            Invalid data (first call).

        Notes
        -----
        Weighted; ignores ``privileged_groups``; labels are this object's true labels (also in
        ClassificationMetric). Foulds, Islam, Keya & Pan (2020), 'An intersectional definition of fairness'.

        Source: aif360 0.6.1 ``BinaryLabelDatasetMetric.smoothed_empirical_differential_fairness`` (same
        value, same NaN/inf cases).

        {{examples_dataset}}
        >>> print(round(dm.smoothed_empirical_differential_fairness(), 6))
        0.847298
        """
        return self._edf(self._smoothed_base_rates(METRICS["num_positives"].numerator, concentration))

    def rich_subgroup(self, predictions: Any, fairness_def: str = "FP") -> float:
        """Rich subgroup fairness (GerryFair audit): disparity of the most unfair linear subgroup.

        Two least-squares fits of the (centred) FP or FN indicator on the protected attributes give the
        subgroup; value = |subgroup rate − overall rate| × subgroup size / n. See
        :func:`polfair.compat.aif360.second_pass.rich_subgroup` for the exact steps.

        Parameters
        ----------
        predictions
            A column name or expression of the input, or ``n`` values (shape ``(n,)`` or ``(n, 1)``) in row
            order: hard 0/1 labels or scores.
        fairness_def
            ``'FP'`` (default) or ``'FN'``: false-positive or false-negative rates.

        Returns
        -------
        float
            ≥ 0 (0: no subgroup is treated differently).

        Raises
        ------
        ValueError
            ``fairness_def`` not 'FP'/'FN' (aif360 raises a bare ``Exception`` with the same message); no row
            with the needed label; wrong number of predictions; non-numeric protected attributes.

        Notes
        -----
        Reproduces aif360 0.6.1 including its complement-group bug (spec §9 step 6) and its assumption that
        raw labels are 0/1 whatever ``favorable_label`` is. Unweighted, ignores the groups. Unlike aif360
        (memoised, so a positional ndarray raises ``TypeError: unhashable``), arrays may be passed
        positionally. A column name or expression is read with one more small select over the data; an array
        is not. Kearns, Neel, Roth & Wu (2018), 'Preventing fairness gerrymandering'.

        Source: aif360 0.6.1 ``BinaryLabelDatasetMetric.rich_subgroup`` (same value, same NaN/inf cases).

        {{examples_dataset}}
        >>> print(round(dm.rich_subgroup([1, 1, 0, 0, 1, 1, 1, 1], fairness_def='FP'), 6))
        0.0625
        """
        rows = self._raw_rows()
        keys = rows["keys"]
        bad = [c for c, t in keys.schema.items() if not (t.is_numeric() or t == pl.Boolean)]
        if bad:
            msg = (
                f"rich_subgroup regresses on the protected attributes, which must be numeric; {bad} are "
                "not: encode them as numbers (e.g. pl.col(x).cast(pl.Categorical).to_physical())"
            )
            raise ValueError(msg)
        X = keys.cast(pl.Float64).to_numpy()
        if isinstance(predictions, (str, pl.Expr)):
            e = pl.col(predictions) if isinstance(predictions, str) else predictions
            source = self._spec.source
            assert source is not None  # the facade's specs are Polars ones (build_spec)
            predictions = source.select(e.cast(pl.Float64)).collect().to_series().to_numpy()
        elif isinstance(predictions, pl.Series):
            predictions = predictions.cast(pl.Float64).to_numpy()
        return individual.rich_subgroup(X, rows["y"], predictions, fairness_def)
