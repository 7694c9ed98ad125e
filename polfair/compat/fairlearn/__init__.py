"""fairlearn-style fairness metrics as Polars expressions, usable inside any Polars query.

Every function here returns a ``pl.Expr`` that *aggregates* rows, so it works wherever an
aggregation works: ``df.select(...)``, ``df.group_by("model").agg(...)`` (one value per model,
fairlearn's *control features*), ``expr.over("model")`` and on ``pl.LazyFrame`` (any engine,
streaming included). Nothing is computed until the query runs.

The formulas are not re-typed here: each rate is ``polfair.core.metrics.METRICS[name]``'s numerator and
denominator, with the :class:`polfair.core.metrics.Counts` accessor bound to aggregations over the raw
rows, e.g. ``tp = Σ w·1[y = pos ∧ ŷ = pos]``. A group-wise value (``sensitive_features=``) is the same
aggregation taken ``.over(sensitive_features)``.

Semantics follow fairlearn 0.15 (``fairlearn.metrics``), with these deliberate differences:

* **Undefined rates are null, not 0.0.** fairlearn's ``true_positive_rate`` of a group without
  positives is ``0.0`` (scikit-learn's ``normalize="true"`` turns 0/0 into 0, silently), which then
  makes ``equalized_odds_ratio`` 0. Here such a rate is ``null``, and so is every disparity that
  would read it (a disparity over groups is null as soon as one group's rate is undefined).
  Ratios whose denominator is 0 are null where fairlearn gives NaN.
* **Missing values.** Rows with a null ``y_true``, ``y_pred`` or ``sample_weight`` are left out of
  every count (fairlearn raises); a null sensitive feature is its own group (fairlearn 0.15
  raises).
* **Labels.** ``pos_label`` (default ``1``) is the positive class; every other value is negative
  (fairlearn's rates insist on at most two distinct labels). ``pos_label`` must have the column's
  type (``pos_label="yes"`` for string labels), else Polars raises when the query runs.
  ``y_pred`` is compared as fairlearn compares it, ``y_pred == pos_label``: a Boolean ``y_pred``
  is True == 1 (scikit-learn's reading), so with ``pos_label=0`` False is the positive class, as in
  fairlearn (polfair's own doors ask for ``score_label`` there: ``docs/contract.md#polarity``).
* **Multiclass.** :func:`demographic_parity_difference` with ``pos_label=None`` compares every
  class, as pytorch-ignite's ``DemographicParityDifference`` does (fairlearn raises).

Weights are used as given (no check for negative values: the report, :func:`polfair.fairness_report`,
validates them).

Inputs: each function takes column names or expressions (and returns an expression), or data as
fairlearn takes it: lists, NumPy arrays, pandas or Polars Series for ``y_true``, ``y_pred`` and
``sample_weight``, and those or a 2-D array, DataFrame or dict of columns for ``sensitive_features``
(and returns a number, a ``numpy.float64``, NaN where polfair's value is null). The two kinds are
not mixed in one call; an error describes a value by its type and size, never prints it.

:class:`MetricFrame` is fairlearn's ``MetricFrame`` (0.15 constructor, attributes and types) computed
on the one pass, and :func:`make_derived_metric` (:mod:`~polfair.compat.fairlearn.derived`) builds
fairlearn's scalar derived metrics on it (:mod:`~polfair.compat.fairlearn.metric_frame`, with the internal ``_mf_*`` modules:
inputs, recognised metrics, computation, results, analytic intervals).

Modules: :mod:`~polfair.compat.fairlearn.rates` (:func:`metric` and the 12 rate functions),
:mod:`~polfair.compat.fairlearn.group_aggregates` (``group_min``/``group_max``/``group_difference``/
``group_ratio``), :mod:`~polfair.compat.fairlearn.disparities` (fairlearn's named disparity functions)
and the internal :mod:`~polfair.compat.fairlearn._rows` (row indicators -> counts, argument checks) and
:mod:`~polfair.compat.fairlearn._inputs` (data inputs).
"""

from polfair.compat.fairlearn import disparities, group_aggregates, rates
from polfair.compat.fairlearn._rows import EXPR_METRICS
from polfair.compat.fairlearn._rows import Agg as Agg  # type alias for annotations
from polfair.compat.fairlearn._rows import Method as Method  # type alias for annotations
from polfair.compat.fairlearn.derived import make_derived_metric
from polfair.compat.fairlearn.disparities import *  # noqa: F403
from polfair.compat.fairlearn.group_aggregates import *  # noqa: F403
from polfair.compat.fairlearn.metric_frame import MetricFrame
from polfair.compat.fairlearn.rates import *  # noqa: F403

__all__ = ["EXPR_METRICS", "MetricFrame", "make_derived_metric"] + rates.__all__ + group_aggregates.__all__ + disparities.__all__
