"""IBM aif360 0.6.1-compatible metric classes on the one-pass engine.

:class:`BinaryLabelDatasetMetric` and :class:`ClassificationMetric` have every public method of
IBM aif360 0.6.1's classes of the same names (12 and 72 methods), with the same names, arguments,
return types and numbers, quirks included, but they read a Polars frame (or a LazyFrame, or a
parquet/CSV path) by column name instead of two ``BinaryLabelDataset`` objects::

    aif360                                             polfair
    ------------------------------------------------   --------------------------------------------
    ds = BinaryLabelDataset(df=pdf, label_names=["y"],   cm = ClassificationMetric(
        protected_attribute_names=["sex"])                     df, y_true="y", y_pred="p",
    pred = ds.copy(); pred.labels = yhat                       protected=["sex"],
    cm = ClassificationMetric(ds, pred,                        unprivileged_groups=[{"sex": 0}],
        unprivileged_groups=[{"sex": 0}],                      privileged_groups=[{"sex": 1}])
        privileged_groups=[{"sex": 1}])

How it computes. The first method call runs ONE lazy ``group_by`` over the data (the cell table of
:mod:`polfair.core.passes.counts`, via :func:`polfair.core.report.build.collect_cells`) and caches it on the object; every
count-based method is then a sum over the few rows of that table that match a group condition,
and the rates apply aif360's zero-division conventions to the numerators and denominators of
:data:`polfair.core.metrics.METRICS`. Only :meth:`~BinaryLabelDatasetMetric.consistency` and
:meth:`~BinaryLabelDatasetMetric.rich_subgroup` need rows; they collect the few columns they need
once more (the documented second pass of :mod:`polfair.compat.aif360.second_pass`) and cache them.

Modules: :mod:`~polfair.compat.aif360._base` (the adapter: cell table -> aif360's group conditions,
masks, sums and zero-division rules), :mod:`~polfair.compat.aif360.dataset_metric`
(:class:`BinaryLabelDatasetMetric`), :mod:`~polfair.compat.aif360.classification_metric`
(:class:`ClassificationMetric`) and :mod:`~polfair.compat.aif360.second_pass` (the row-level measures).

Conventions reproduced from aif360 0.6.1 (see each method):

* group conditions are a list of dicts, OR across dicts, AND within one; ``None`` = every row,
  ``[]`` = no row, ``[{}]`` = every row; keys must be protected attributes;
* ``difference(f) = f(privileged=False) − f(privileged=True)`` and ``ratio(f)`` likewise
  (unprivileged over privileged), with NumPy float64 semantics: ``x/0 = inf``, ``0/0 = nan``
  (and NumPy's ``RuntimeWarning``), never an exception;
* TPR/TNR/FPR/FNR, the generalized rates, base rate and selection rate are ``nan`` on a zero
  denominator; PPV, NPV, FDR, FOR and accuracy are ``0.0`` (so an empty group's error rate is 1.0);
* ``power`` is the true-positive *count*; ``average_predictive_value_difference`` averages ΔPPV and
  ΔFOR; equalized odds use Python's builtin ``max`` (NaN handling depends on argument order);
* entropy indices are unweighted and use hard labels (the α = 0 variant carries an extra 1/μ);
  counts, rates and differential fairness are weighted.

Deliberate differences from aif360 (inputs only; never numbers): data problems raise
:class:`polfair.InvalidInputError` (a ``ValueError``) on the first method call rather than in a
dataset constructor: a null label, prediction, score or weight (aif360: "cannot contain NA
values"), a label or prediction that is neither favorable nor unfavorable, a score outside [0, 1]
(aif360 only logs a warning) and a negative weight (aif360 accepts it). Overlapping privileged and
unprivileged groups likewise raise on the first call, not in the constructor. A score column equal
to the prediction column is not remapped to ``1[ŷ = fav]`` (aif360's quirk; give no ``y_score``).
Results are not memoised per call (aif360 memoises every method forever); the cell table is.
Weighted sums are Polars sums, equal to aif360's NumPy pairwise sums to about 1e-15 relative;
with unit (or no) weights every count is exactly aif360's.
"""

from polfair.compat.aif360.classification_metric import ClassificationMetric
from polfair.compat.aif360.dataset_metric import BinaryLabelDatasetMetric

__all__ = ["BinaryLabelDatasetMetric", "ClassificationMetric"]
