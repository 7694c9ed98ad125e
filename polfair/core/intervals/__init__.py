"""Confidence intervals and significance tests for every rate and disparity, from the cell table.

Everything here reads the cell table (or the report's rows built from it); nothing reads the
data again. Each method is defined once, as a **numpy kernel** over whole arrays (``*_limits``,
``*_pvalues``: NaN marks a missing value; families over groups take
:class:`~polfair.core.intervals.common.Segments` and compute every family at once), and the report
(:mod:`polfair.core.report.intervals`) calls the kernels on its (row × metric) matrices: no Polars plan per
method, no Python loop over groups, pairs, replicates or families. The public **Polars expression
builders** (:func:`wilson_interval`, :func:`newcombe_interval`, ...) wrap the same kernels
(:func:`~polfair.core.intervals.common.numpy_expr`: one ``map_batches`` over a struct of the
inputs), for use inside any plan or ``group_by``. Distribution tails and quantiles come from
``scipy.special``; statsmodels and scipy.stats are the test suite's oracles.

Modules, one per method family: :mod:`~polfair.core.intervals.common` (column names and dtypes,
expression types, the stager, option checks, critical values, segments),
:mod:`~polfair.core.intervals.proportions` (Kish sizes, Wilson, the complement of a group),
:mod:`~polfair.core.intervals.differences` (Newcombe, MOVER-R, overall reference, MOVER sums),
:mod:`~polfair.core.intervals.projections` (``|·|``, max, min, ``reference="best"``),
:mod:`~polfair.core.intervals.spreads` (spreads over groups, fairlearn's equalized odds, EDF),
:mod:`~polfair.core.intervals.significance` (tails, Fisher, two-proportion and 2-df tests, p_adjust),
:mod:`~polfair.core.intervals.homogeneity` (χ² homogeneity, exact moments),
:mod:`~polfair.core.intervals.resampling` (entropy bootstrap and analytic moments, jackknife).

Methods (sources and measured coverage in ``docs/statistics.md``): Wilson score intervals for
rates (Wilson 1927), with Kish's effective size for weighted rows (Kish 1965); Newcombe's hybrid
score interval for differences (Newcombe 1998, method 10); MOVER-R with Wilson limits for ratios
(Donner & Zou 2012); the MOVER sum for averages of independent differences (Zou & Donner 2008);
projections of simultaneous (Šidák) intervals through ``|·|``, ``max`` and ``min`` for equalized
odds, spreads over groups, ``reference="best"`` and EDF (conservative by design); a
bias-corrected normal interval from the analytic (second-order delta) moments of the stratified
cell bootstrap for the entropy indices (:func:`entropy_delta`; :func:`entropy_bootstrap` draws the
replicates); the "N−1" χ² test with
Campbell's (2007) rule (two-sided Fisher when the smallest expected count is < 1); a 2-df χ² for
the odds-based disparities; a χ² homogeneity test (on the statistic's exact moments when Cochran's rule fails, Haldane 1940);
Benjamini–Hochberg adjusted p-values; Kott's (2001) delete-a-group jackknife for clustered rows.

Which function gives which report column
----------------------------------------
``z = z_value(ci)``; a :class:`Rate` is ``(p̂, n_eff)`` (:func:`rate_inputs` builds it for a
metric from cell-table columns). Null rules: every builder returns null where its inputs are
null or a denominator is 0; the caller nulls the interval where the report's ``value``,
``difference`` or ``ratio`` is null, on the reference group's own row, and on count rows. Each
entry names the expression form; the report calls its kernel (e.g. ``wilson_limits``).

Each entry: report row kind -- function(s) -- ``ci_method`` -- ``test``. For families over
groups (spreads, fairlearn's equalized odds, EDF) on many families, use the frame forms
:func:`spread_table`, :func:`equalized_odds_spread_table` and :func:`edf_table` (every family at
once, as the report; the aggregation-expression forms cost a Python call per family and are for
small ad hoc tables).

* group row, rate metric (``value_lo/hi``) -- :func:`wilson_interval` -- ``score`` (weighted:
  ``score_ess``) -- none.
* group row, rate vs a privileged / largest reference (``difference_*``, ``ratio_*``, ``p_value``)
  -- :func:`newcombe_interval`, :func:`mover_ratio_interval`, :func:`two_proportion_test` --
  ``score`` / ``score_ess`` -- ``chi2_n1`` or ``fisher`` (weighted: ``z_ess``).
* group row, rate vs ``"overall"`` -- :func:`complement_rate`, :func:`overall_difference_interval`,
  :func:`overall_ratio_interval`, :func:`two_proportion_test` (group vs the rest) -- as above.
* group row, rate vs ``"best"`` -- :func:`best_reference_intervals` -- ``projection`` -- null.
* group row, ``statistical_parity_difference``, ``*_difference``, ``disparate_impact``,
  ``*_ratio`` (``value_lo/hi``) -- the underlying rate's difference / ratio interval -- as the rate.
* group row, ``average_odds_difference``, ``average_predictive_value_difference`` --
  :func:`average_difference_interval` (TPR & FPR; PPV & FOR) -- ``mover`` -- ``chi2_2df``
  (:func:`chi2_2df_test`).
* group row, ``equalized_odds_difference`` / ``average_abs_odds_difference`` --
  :func:`max_abs_difference_interval` / :func:`average_abs_difference_interval` -- ``projection``
  -- ``chi2_2df``.
* group row, generalized rates and generalized EOD -- :func:`wilson_interval`,
  :func:`max_abs_difference_interval` on ``(GTP/P, P)`` -- ``bound`` -- null.
* attribute row, spread of a rate (``difference_*``, ``ratio_*``), ``demographic_parity_*`` --
  :func:`spread_intervals` (aggregation) -- ``projection`` -- ``chi2_homogeneity`` or ``chi2_moments``
  (:func:`homogeneity_test`).
* attribute row, fairlearn's ``equalized_odds_*`` -- :func:`equalized_odds_spread_intervals` --
  ``projection`` -- :func:`homogeneity_test` on TPR and FPR (2(k−1) df).
* attribute / population row, GE, Theil, CV -- :func:`entropy_delta` (the analytic moments of the cell
  bootstrap; :func:`entropy_bootstrap` draws it) -- ``delta_bc`` -- null.
* attribute / population row, EDF -- :func:`edf_interval` (aggregation) -- ``projection`` -- null.
* population row, bias amplification -- :func:`difference_of_intervals` of two :func:`edf_interval`
  at level ``1 − α/2`` -- ``projection`` -- null.
* population row, rate metric -- :func:`wilson_interval` -- ``score`` / ``score_ess`` -- null.
* ``p_value_adjusted`` -- :func:`p_adjust` ``.over(family)``, family = (by value, row kind, metric): group rows
  and attribute rows are adjusted separately.
* any smooth quantity with ``cluster=`` -- :func:`jackknife_intervals` -- ``jackknife_t`` --
  ``jackknife_t``.
* count metrics, ``n_missing`` -- none (null) -- null -- null.

Determinism: the report uses no random numbers (closed forms, exact-moment homogeneity tests, the
analytic entropy intervals of :func:`entropy_delta`). :func:`entropy_bootstrap`, when called, draws
from ``np.random.Generator(PCG64(SeedSequence([seed, stable_hash(key)])))`` per ``by`` value, in the
cell table's sorted order from its exact integer counts, so results do not depend on row order,
batch split or merge order (numpy guarantees its streams within a version, not across versions:
NEP 19).
"""


from polfair.core.hashing import bucket_of, stable_hash
from polfair.core.intervals.common import (
    CI_METHOD_DTYPE,
    CI_METHODS,
    INTERVAL_COLUMNS,
    INTERVAL_DTYPES,
    TEST_DTYPE,
    TESTS,
    Interval,
    Rate,
    SpreadInterval,
    Stager,
    Test,
    check_ci,
    check_n_boot,
    check_p_adjust,
    sidak_level,
    z_value,
)
from polfair.core.intervals.differences import (
    average_difference_interval,
    difference_of_intervals,
    mover_ratio_interval,
    mover_sum_interval,
    newcombe_interval,
    overall_difference_interval,
    overall_ratio_interval,
)
from polfair.core.intervals.homogeneity import homogeneity_table, homogeneity_test
from polfair.core.intervals.projections import (
    abs_interval,
    average_abs_difference_interval,
    best_reference_intervals,
    max_abs_difference_interval,
)
from polfair.core.intervals.proportions import (
    complement_rate,
    effective_size,
    rate_inputs,
    wilson_interval,
    wilson_limits,
)
from polfair.core.intervals.resampling import (
    bias_corrected_normal_interval,
    entropy_bootstrap,
    entropy_delta,
    ge_replicates,
    jackknife_intervals,
)
from polfair.core.intervals.significance import (
    chi2_2df_test,
    chi2_sf,
    fisher_exact_two_sided,
    p_adjust,
    t_quantile,
    t_sf,
    two_proportion_test,
)
from polfair.core.intervals.spreads import (
    edf_interval,
    edf_table,
    equalized_odds_spread_intervals,
    equalized_odds_spread_table,
    spread_intervals,
    spread_table,
)

__all__ = [
    "CI_METHODS",
    "CI_METHOD_DTYPE",
    "INTERVAL_COLUMNS",
    "INTERVAL_DTYPES",
    "TESTS",
    "TEST_DTYPE",
    "Interval",
    "Rate",
    "SpreadInterval",
    "Stager",
    "Test",
    "abs_interval",
    "average_abs_difference_interval",
    "average_difference_interval",
    "best_reference_intervals",
    "bias_corrected_normal_interval",
    "bucket_of",
    "check_ci",
    "check_n_boot",
    "check_p_adjust",
    "chi2_2df_test",
    "chi2_sf",
    "complement_rate",
    "difference_of_intervals",
    "edf_interval",
    "edf_table",
    "equalized_odds_spread_table",
    "effective_size",
    "entropy_bootstrap",
    "entropy_delta",
    "equalized_odds_spread_intervals",
    "fisher_exact_two_sided",
    "ge_replicates",
    "homogeneity_table",
    "homogeneity_test",
    "jackknife_intervals",
    "max_abs_difference_interval",
    "mover_ratio_interval",
    "mover_sum_interval",
    "newcombe_interval",
    "overall_difference_interval",
    "overall_ratio_interval",
    "p_adjust",
    "rate_inputs",
    "sidak_level",
    "spread_intervals",
    "spread_table",
    "stable_hash",
    "t_quantile",
    "t_sf",
    "two_proportion_test",
    "wilson_interval",
    "wilson_limits",
    "z_value",
]
