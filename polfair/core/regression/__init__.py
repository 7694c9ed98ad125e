"""Fairness of regression models: one pass to a regression cell table, then arithmetic on it.

The regression analogue of the classification cell table (:mod:`polfair.core.passes.counts`). ONE
``group_by(by + protected keys + bin)`` over the rows gives, per cell (a combination of ``by``
values and protected values) and per bin of the prediction, the weights and the centred moments
of the rows (schema version 4; ``docs/schema.md`` has the migration from the sums of version 3):

=====================  =======  ====================================================================
column                 dtype    meaning (``w`` weight, ``y`` outcome, ``ŷ`` prediction, ``e = ŷ − y``)
=====================  =======  ====================================================================
*by*, *protected*      input's  the keys
``bin``                Int64    the prediction's bin code (:func:`prediction_bin`); null on the rows
                                counting missing values
``n``                  Int64    rows counted (outcome, prediction and weight present)
``n_missing``          Int64    rows with a missing outcome, prediction or weight (not counted)
``n_invalid``          Int64    rows with an infinite outcome or prediction, or a negative or
                                infinite weight (not counted; the report raises)
``w``, ``w2``          Float64  Σw, Σw² (in units of ``2^w_exp``)
``mean_y`` ...         Float64  weighted means of ``y``, ``ŷ``, ``e``, ``|e|``, ``e²``: ``mean_y, mean_p,
                                mean_e, mean_ae, mean_e2`` (in units of ``2^y_exp``)
``m2_y`` ...           Float64  centred moments Σw(q − q̄)^k: ``m2_y, m3_y, m4_y, m2_p, m2_e, m2_ae,
                                m2_e2``; co-moments ``c_yp`` = Σw(y − ȳ)(ŷ − ŷ̄), ``c_e2y`` =
                                Σw(e² − ē²)(y − ȳ), ``c_e2y2`` = Σw(e² − ē²)(y − ȳ)²
``w_exp``, ``y_exp``   Int32    the cell's units: weights in ``2^w_exp``, values in ``2^y_exp``
                                (0 unless the cell's largest weight or value leaves [2^-100, 2^100];
                                null where they are all 0: any unit)
``p_min``, ``p_max``   Float64  the smallest and largest prediction in the cell and bin
``y_min``, ``y_max``   Float64  the smallest and largest outcome of the rows with a positive
                                weight (a constant outcome, whose r² is undefined, exactly)
``mean_y_lo`` ...      Float64  each mean's compensation (added in issue 40): ``mean_y_lo, mean_p_lo,
                                mean_e_lo, mean_ae_lo, mean_e2_lo``, the weighted mean of the
                                residuals about the mean (the mean is ``mean_q + mean_q_lo``, a
                                double-double; a table without them reads 0)
=====================  =======  ====================================================================

**Moments that cannot cancel.** Raw sums of squares lose every digit when the mean is large
against the spread (``Σw y² − (Σw y)²/W`` for prices of 1e8 ± 1). The pass therefore computes,
inside its one query, each cell's weighted means (window functions over the cell) and sums the
rows' centred terms; tables of partitions, batches, bins and cells merge exactly with Chan,
Golub & LeVeque's (1979) and Pébay's (2008) formulas (:func:`merge_regression_cells`,
:func:`roll_up`; :mod:`polfair.core.regression.moments`), which add only non-negative terms to a
variance. The result depends on the order of the rows through rounding only.

**Units.** A cell's weights and values are held in units of powers of two chosen from its largest
weight and value, so weights of 1e-200 or 1e200 and outcomes near 1e150 (whose fourth powers leave
Float64) give the same report as any other scale, and a result that does not fit Float64 in the
data's units (a mean squared error beyond 1.8e308) is an error naming the columns.

**The histogram.** ``bin`` is a code on a relative grid: ``B`` bins per octave (default 256, a
bin is 0.27% wide), ``code = sign(ŷ)·(⌊log2|ŷ|·B⌋ + C)`` and 0 for ŷ = 0; the code is increasing
in ŷ, needs no range and merges across partitions. The Kolmogorov–Smirnov distance of two
groups' prediction distributions evaluated at the bin edges is exact there; inside a bin both
distribution functions stay between their values at the bin's edges, so the true distance exceeds
the value at the edges by at most ``max_b max(F_g(b⁺) − F_r(b⁻), F_r(b⁺) − F_g(b⁻)) − D_edges``
over the bins whose predictions are not all equal (``p_min < p_max``), itself at most the largest
within-bin mass ``max_b max(p_g(b), p_r(b))``: :func:`ks_from_histograms` returns that bound with
it (0 for discrete predictions, such as rounded or integer ones, with one value per bin; on UCI
Adult's predicted hours the bound is 0.7–0.9% at the default grid and the realised error at most
0.2%; at 64 bins per octave 3–4% and 0.8%).

Metric definitions (scikit-learn's names; weights act as its ``sample_weight``), per group:
``mean_outcome = Σwy/W``, ``mean_prediction = Σwŷ/W``, ``mean_error = Σwe/W`` (positive =
over-prediction), ``mean_absolute_error = Σw|e|/W``, ``mean_squared_error = Σwe²/W``,
``root_mean_squared_error = √MSE``, ``r2_score = 1 − Σwe²/Σw(y−ȳ)²`` (null for a constant
outcome, where scikit-learn returns 1.0 or 0.0 by ``force_finite``).

Intervals and tests (``docs/regression.md`` has the coverage measured by ``bench/coverage.py``):
the five means have the standard error ``se² = s²/n_eff``, with Kish's effective size
``n_eff = W²/Σw²`` and ``s² = m2_q/W · n_eff/(n_eff − 1)`` (the weighted variance
with the Kish small-sample factor; for unit weights the usual ``s²``), ``ν = n_eff − 1``; value
intervals are Student t, ``m ± t_ν·se``, for the outcome, prediction and error means, and on the
log scale, ``m·exp(±t_ν·se/m)``, for the positive, right-skewed MAE and MSE
(:func:`value_limits`); differences get the Welch interval and test (Welch–Satterthwaite ν;
unweighted equal to ``scipy.stats.ttest_ind(equal_var=False)``); ratios the log-scale delta
method (both means positive). RMSE takes the square roots of the MSE limits and the delta method
for its difference (its test is the MSE's); ``r2_score`` the delta method of ``1 − MSE/Var(y)``
(needs ``m2_e2``, ``m4_y`` and ``c_e2y2``) with normal limits. Spreads over an attribute set's
groups: Šidák projections (two groups: the pair's interval through ``|·|``), Welch's
heteroscedastic ANOVA (means) or Cochran's Q (r²). Every distribution function comes from :mod:`scipy.stats`.

The module is pure arithmetic on small tables (numpy and Polars); the input contract (what a
value of each role may be) lives in the pass that builds the table.

The module re-exports the public names of three concept modules: the pass and the cell table's
algebra (:mod:`polfair.core.regression.passes`), the statistics on group moments
(:mod:`polfair.core.regression.stats`) and the report (:mod:`polfair.core.regression.report`).
"""

from __future__ import annotations

from polfair.core.regression.moments import LO_COLUMNS as REGRESSION_LO_COLUMNS
from polfair.core.regression.moments import MOMENT_COLUMNS as REGRESSION_MOMENT_COLUMNS
from polfair.core.regression.moments import common_units
from polfair.core.regression.passes import (
    BINS_PER_OCTAVE,
    REGRESSION_CELL_COLUMNS,
    REGRESSION_COUNT_COLUMNS,
    bin_edges,
    merge_regression_cells,
    prediction_bin,
    regression_cells,
    regression_pass,
    roll_up,
)
from polfair.core.regression.report import (
    attach_regression_cells,
    regression_cells_of,
    regression_report_from_cells,
)
from polfair.core.regression.stats import (
    REGRESSION_ATTRIBUTE_METRICS,
    REGRESSION_METRICS,
    Moments,
    group_moments,
    ks_from_histograms,
    mean_interval,
    metric_values,
    value_limits,
    welch_anova,
    welch_test,
)

__all__ = [
    "BINS_PER_OCTAVE",
    "REGRESSION_ATTRIBUTE_METRICS",
    "REGRESSION_CELL_COLUMNS",
    "REGRESSION_METRICS",
    "REGRESSION_COUNT_COLUMNS",
    "REGRESSION_LO_COLUMNS",
    "REGRESSION_MOMENT_COLUMNS",
    "Moments",
    "attach_regression_cells",
    "bin_edges",
    "common_units",
    "group_moments",
    "ks_from_histograms",
    "mean_interval",
    "metric_values",
    "merge_regression_cells",
    "prediction_bin",
    "regression_cells",
    "regression_cells_of",
    "regression_pass",
    "regression_report_from_cells",
    "roll_up",
    "value_limits",
    "welch_anova",
    "welch_test",
]
