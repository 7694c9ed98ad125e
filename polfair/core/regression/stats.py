"""Regression statistics: group moments to metrics, intervals and tests (numpy over small tables).

The metric definitions and interval methods are described in :mod:`polfair.core.regression` (the
public module, which re-exports this one's public names). Here: :class:`Moments` (the column sums of
groups), the metric values, the value intervals of one group, Welch's test and ANOVA, the
Kolmogorov–Smirnov distance of two prediction histograms, and the spread of a metric over an
attribute set's groups (:func:`attribute_spread`). Every distribution function comes from
:mod:`scipy.stats`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from polfair.core.regression.moments import LO, LO_COLUMNS, MOMENT_COLUMNS, complement
from polfair.core.regression.passes import (
    regression_cells,  # noqa: F401 (the doctests use it)
    roll_up,  # noqa: F401 (the doctests use it)
)

__all__ = [
    "ESTIMATED_METRICS",
    "LOG_T_METRICS",
    "MEAN_MOMENTS",
    "REGRESSION_ATTRIBUTE_METRICS",
    "REGRESSION_METRICS",
    "Moments",
    "attribute_spread",
    "group_moments",
    "ks_batch",
    "ks_from_histograms",
    "ks_p_value",
    "mean_difference",
    "mean_interval",
    "mean_parts",
    "metric_values",
    "r2_parts",
    "safe_div",
    "scipy_stats",
    "t_quantile",
    "value_limits",
    "welch_anova",
    "welch_test",
]

#: Group (and population) metrics of the regression report, in report order.
REGRESSION_METRICS = (
    "num_instances", "mean_outcome", "mean_prediction", "mean_error", "mean_absolute_error", "mean_squared_error",
    "root_mean_squared_error", "r2_score",
)  # fmt: skip
#: The estimated group metrics (every one of :data:`REGRESSION_METRICS` but ``num_instances``).
ESTIMATED_METRICS = REGRESSION_METRICS[1:]
#: The means of a per-row quantity (t intervals, Welch tests): metric -> (mean column, centred Σw(q − q̄)² column).
MEAN_MOMENTS: dict[str, tuple[str, str]] = {
    "mean_outcome": ("mean_y", "m2_y"),
    "mean_prediction": ("mean_p", "m2_p"),
    "mean_error": ("mean_e", "m2_e"),
    "mean_absolute_error": ("mean_ae", "m2_ae"),
    "mean_squared_error": ("mean_e2", "m2_e2"),
}
#: Attribute-set metrics other than the per-metric spreads.
REGRESSION_ATTRIBUTE_METRICS = tuple(
    f"{m}_group_{s}" for m in ESTIMATED_METRICS for s in ("max", "min")
) + ("bounded_group_loss", "ks_distance")  # fmt: skip


_F64 = pl.Float64


def scipy_stats() -> Any:
    """:mod:`scipy.stats` (a core dependency; imported on first use so ``import polfair`` stays light)."""
    from scipy import stats

    return stats


# ----------------------------------------------------------------------------------------------
# moments -> metrics, intervals and tests (numpy over the small group tables)


@dataclass
class Moments:
    """Weights and centred moments of groups (one array element per group), the inputs of every metric.

    Built with :func:`group_moments` from a frame with the regression cell table's value columns
    (every group on the same units: :func:`polfair.core.regression.moments.common_units`).
    """

    sums: dict[str, np.ndarray]

    def __getitem__(self, name: str) -> np.ndarray:
        return self.sums[name]

    def __sub__(self, other: Moments) -> Moments:
        """The moments of the rows of ``self`` not in ``other`` (a group's complement in its population;
        :func:`polfair.core.regression.moments.complement`; its outcome range is unknown: taken as
        not constant).
        """
        return Moments(complement(self.sums, other.sums))

    def take(self, index: np.ndarray) -> Moments:
        """The moments of the groups at ``index`` (NaN where ``index`` is −1)."""
        ok = index >= 0
        safe = np.where(ok, index, 0)
        return Moments({k: np.where(ok, v[safe], np.nan) for k, v in self.sums.items()})

    @property
    def neff(self) -> np.ndarray:
        """Kish's effective size W²/Σw² (the row count for unit weights), computed as ``W·(W/Σw²)``."""
        w, w2 = self["w"], self["w2"]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return np.where(w2 > 0, np.where(w == w2, w, w * (w / w2)), np.nan)


def group_moments(frame: pl.DataFrame) -> Moments:
    """:class:`Moments` of the rows of ``frame`` (one per group; :func:`roll_up` merges a cell table).

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": [1.0, 3.0], "p": [2.0, 2.0]})
    >>> m = group_moments(roll_up(regression_cells(df.lazy(), y_true="y", y_pred="p")))
    >>> float(mean_interval(m, "mean_outcome")[0][0])
    2.0
    """
    cols = ["w", "w2", *MOMENT_COLUMNS, "y_min", "y_max", *LO_COLUMNS]
    zero = pl.Series(np.zeros(frame.height))  # a table without the compensations (an earlier polfair): lo = 0
    return Moments({c: (frame[c] if c in frame.columns else zero).cast(_F64).to_numpy().astype(np.float64, copy=True)
                    for c in cols})  # fmt: skip


def mean_parts(m: Moments, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """The double-double mean ``(hi, lo)`` of one of the five means (lo 0 where the moments have none).

    A difference of two means is ``(hi_a − hi_b) + (lo_a − lo_b)`` (:func:`mean_difference`): at a
    level far above the spread (1e12 ± 1) each mean rounded to Float64 has lost the digits the
    difference needs.
    """
    mean = MEAN_MOMENTS[metric][0]
    hi = m[mean]
    return hi, m.sums.get(LO[mean], np.zeros_like(hi))


def mean_difference(a: Moments, b: Moments, metric: str) -> np.ndarray:
    """``mean_a − mean_b`` of one of the five means, from their double-double parts (NaN where undefined).

    Examples
    --------
    >>> import numpy as np
    >>> a = Moments({"w": np.ones(1), "mean_y": np.array([1e12]), "mean_y_lo": np.array([3e-5])})
    >>> b = Moments({"w": np.ones(1), "mean_y": np.array([1e12]), "mean_y_lo": np.array([1e-5])})
    >>> round(float(mean_difference(a, b, "mean_outcome")[0]), 12), float((1e12 + 3e-5) - (1e12 + 1e-5))
    (2e-05, 0.0)
    """
    (ha, la), (hb, lb) = mean_parts(a, metric), mean_parts(b, metric)
    with np.errstate(invalid="ignore"):
        return np.where((a["w"] > 0) & (b["w"] > 0), (ha - hb) + (la - lb), np.nan)


def safe_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a / b`` element-wise where ``b > 0``, NaN elsewhere (no warning for a zero or NaN divisor).

    The shared guard of every ratio of sums (means ``Σwq/W``, group shares ``W_g/W``).
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(b > 0, a / np.where(b > 0, b, 1.0), np.nan)


def metric_values(m: Moments) -> dict[str, np.ndarray]:
    """Every group metric of :data:`REGRESSION_METRICS` (NaN where undefined: no weight, constant y).

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": [1.0, 2.0, 3.0], "p": [1.0, 2.5, 2.5]})
    >>> v = metric_values(group_moments(roll_up(regression_cells(df.lazy(), y_true="y", y_pred="p"))))
    >>> round(float(v["mean_squared_error"][0]), 6), round(float(v["r2_score"][0]), 6)
    (0.166667, 0.75)
    """
    W = m["w"]
    out = {"num_instances": W.copy()}
    for name, (mean, _) in MEAN_MOMENTS.items():  # the rounded mean (hi; hi + lo differs by an ulp at most)
        out[name] = np.where(W > 0, m[mean], np.nan)
    out["root_mean_squared_error"] = np.sqrt(out["mean_squared_error"])
    sst = _sst(m)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # 1 − Σwe²/Σw(y − ȳ)² = 1 − MSE / (m2_y / W)
        out["r2_score"] = np.where(sst > 0, 1.0 - out["mean_squared_error"] / (np.where(sst > 0, sst, 1.0) / W), np.nan)
    return out


def _sst(m: Moments) -> np.ndarray:
    """Σw(y − ȳ)² (the centred ``m2_y``): 0 exactly for a constant outcome (``y_min == y_max`` over
    the weighted rows), NaN where no weight.
    """
    constant = m["y_min"] == m["y_max"]
    return np.where(m["w"] > 0, np.where(constant, 0.0, np.maximum(m["m2_y"], 0.0)), np.nan)


def mean_interval(m: Moments, metric: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean, squared standard error and degrees of freedom of one of the five means.

    ``se² = (m2_q/W)/(n_eff − 1)`` (the Kish-weighted variance over ``n_eff``; for unit weights
    ``s²/n``), ``ν = n_eff − 1``; NaN with fewer than two effective rows.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": [1.0, 2.0, 6.0], "p": [0.0, 0.0, 0.0]})
    >>> m = group_moments(roll_up(regression_cells(df.lazy(), y_true="y", y_pred="p")))
    >>> mean, v, df_ = mean_interval(m, "mean_outcome")
    >>> float(mean[0]), round(float(v[0]), 6), float(df_[0])
    (3.0, 2.333333, 2.0)
    """
    mean, m2 = MEAN_MOMENTS[metric]
    W, neff = m["w"], m.neff
    var_w = np.maximum(safe_div(m[m2], W), 0.0)
    # deviations below the rounding of the mean (a constant quantity whose mean rounds by an ulp) are 0,
    # whatever the order the rows were added in
    var_w = np.where(var_w > (8 * np.finfo(float).eps * m[mean]) ** 2, var_w, 0.0)
    df = neff - 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        v = np.where(df > 0, var_w / np.where(df > 0, df, 1.0), np.nan)
    return np.where(W > 0, m[mean], np.nan), v, np.where(df > 0, df, np.nan)


def r2_parts(m: Moments) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """r² with its delta-method variance and ν = n_eff − 1 (NaN where undefined).

    ``r² = 1 − A/B`` with ``A`` the MSE and ``B = m2_y/W``; ``Var(A) = m2_e2/W``,
    ``Var(B) = m4_y/W − B²``, ``Cov = c_e2y2/W`` (all centred: no cancellation), divided by ν.
    """
    W, neff = m["w"], m.neff
    r2 = metric_values(m)["r2_score"]
    A = np.where(W > 0, m["mean_e2"], np.nan)
    B = safe_div(m["m2_y"], W)
    var_a = safe_div(m["m2_e2"], W)
    var_b = safe_div(m["m4_y"], W) - B * B
    cov = safe_div(m["c_e2y2"], W)
    df = neff - 1.0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        g = var_a / B**2 - 2 * A * cov / B**3 + A * A * var_b / B**4
        v = np.where((df > 0) & (B > 0), np.maximum(g, 0.0) / df, np.nan)
    return r2, v, np.where(df > 0, df, np.nan)


#: Positive means whose value interval is taken on the log scale (right-skewed quantities).
LOG_T_METRICS = ("mean_absolute_error", "mean_squared_error", "root_mean_squared_error")


def value_limits(
    metric: str, est: np.ndarray, var: np.ndarray, df: np.ndarray, level: float
) -> tuple[np.ndarray, np.ndarray]:
    """The value interval of one metric at ``level`` from its estimate, squared standard error and ν.

    ``mean_outcome``, ``mean_prediction``, ``mean_error``: Student t, ``m ± t_ν·se``. MAE and MSE
    (means of positive, right-skewed quantities): on the log scale, ``m·exp(±t_ν·se/m)`` (the delta
    method for ``log m``; in ``bench/coverage.py`` it covers better than ``m ± t·se`` for every
    skewed scenario, e.g. MAE 94.4% vs 90.6% at 10 rows). RMSE: the square roots of the MSE's
    limits. ``r2_score``: ``r² ± z·se`` (delta method), at most 1. NaN where undefined.

    Examples
    --------
    >>> import numpy as np
    >>> lo, hi = value_limits("mean_squared_error", np.array([2.0]), np.array([0.25]), np.array([30.0]), 0.95)
    >>> round(float(lo[0]), 4), round(float(hi[0]), 4)
    (1.2003, 3.3325)
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if metric == "r2_score":
            h = scipy_stats().norm.ppf(0.5 + level / 2.0) * np.sqrt(var)
            return est - h, np.minimum(est + h, 1.0)
        if metric == "root_mean_squared_error":  # est = √MSE, var = Var(MSE)/(4 MSE)
            mse, v_mse = est * est, var * 4 * est * est
            lo, hi = value_limits("mean_squared_error", mse, v_mse, df, level)
            return np.sqrt(lo), np.sqrt(hi)
        q = t_quantile(level, df)
        if metric in LOG_T_METRICS:
            rel = np.where(est > 0, np.sqrt(var) / est, np.nan)
            return est * np.exp(-q * rel), est * np.exp(q * rel)
        h = q * np.sqrt(var)
        return est - h, est + h


def t_quantile(ci: float, df: np.ndarray) -> np.ndarray:
    """The two-sided Student t quantile ``t.ppf(0.5 + ci/2, df)`` per element (NaN where ``df`` is NaN).

    The half-width factor of every t interval of the regression report (:mod:`scipy.stats`).
    """
    with np.errstate(invalid="ignore"):
        return np.asarray(scipy_stats().t.ppf(0.5 + ci / 2.0, df), dtype=np.float64)


def welch_test(
    m1: np.ndarray,
    v1: np.ndarray,
    df1: np.ndarray,
    m2: np.ndarray,
    v2: np.ndarray,
    df2: np.ndarray,
    diff: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Welch's t for ``m1 − m2``: difference, its squared standard error, Welch–Satterthwaite ν, p-value.

    ``ν = (v1 + v2)² / (v1²/ν1 + v2²/ν2)``, two-sided ``p = 2·t.sf(|d|/√(v1+v2), ν)``
    (:mod:`scipy.stats`). Unweighted (``v = s²/n``, ``ν = n − 1``) this is
    ``scipy.stats.ttest_ind(a, b, equal_var=False)``. NaN where a variance or ν is undefined or
    both variances are 0. ``diff``: ``m1 − m2`` computed more exactly by the caller (the
    compensated difference of two means, :func:`mean_difference`); default ``m1 − m2``.

    Examples
    --------
    >>> import numpy as np
    >>> d, v, nu, p = welch_test(np.array([1.0]), np.array([0.1]), np.array([9.0]),
    ...                          np.array([0.5]), np.array([0.05]), np.array([19.0]))
    >>> round(float(nu[0]), 3), round(float(p[0]), 4)
    (18.106, 0.2129)
    """
    d, v = (m1 - m2) if diff is None else diff, v1 + v2
    with np.errstate(divide="ignore", invalid="ignore"):
        nu = v * v / (v1 * v1 / df1 + v2 * v2 / df2)
        nu = np.where(v > 0, nu, np.nan)
        t = np.abs(d) / np.sqrt(v)
        p = np.where(v > 0, 2.0 * scipy_stats().t.sf(t, nu), np.nan)
    return d, np.where(v > 0, v, np.nan), nu, np.asarray(p, dtype=np.float64)


def welch_anova(means: np.ndarray, v: np.ndarray, df: np.ndarray) -> tuple[float, float, float, float]:
    """Welch's (1951) heteroscedastic one-way ANOVA of k group means from their moments.

    ``w_i = 1/v_i`` (``v_i`` the squared standard errors), ``m̄ = Σw_i m_i / Σw_i``,
    ``A = Σw_i(m_i − m̄)²/(k−1)``, ``Λ = Σ(1 − w_i/Σw)²/ν_i``, ``F = A / (1 + 2(k−2)Λ/(k²−1))``
    on ``(k − 1, (k² − 1)/(3Λ))`` df. Equal to statsmodels' ``anova_oneway(use_var="unequal")``;
    for two groups ``F`` is Welch's ``t²`` with the same p-value.

    Returns
    -------
    (F, df1, df2, p_value)
        NaN when fewer than two groups have a positive variance.

    Examples
    --------
    >>> import numpy as np
    >>> F, d1, d2, p = welch_anova(np.array([1.0, 0.5]), np.array([0.1, 0.05]), np.array([9.0, 19.0]))
    >>> round(p, 4)
    0.2129
    """
    ok = np.isfinite(means) & np.isfinite(v) & (v > 0) & np.isfinite(df) & (df > 0)
    k = int(ok.sum())
    if k < 2:
        return (math.nan,) * 4
    mm, w, nu = means[ok], 1.0 / v[ok], df[ok]
    sw = w.sum()
    mbar = (w * mm).sum() / sw
    A = (w * (mm - mbar) ** 2).sum() / (k - 1)
    lam = ((1.0 - w / sw) ** 2 / nu).sum()
    F = A / (1.0 + 2.0 * (k - 2) * lam / (k * k - 1))
    df2 = (k * k - 1) / (3.0 * lam)
    return float(F), float(k - 1), float(df2), float(scipy_stats().f.sf(F, k - 1, df2))


def _cochran_q(est: np.ndarray, v: np.ndarray) -> float:
    """p-value of Cochran's Q (homogeneity of independent estimates with variances v), χ²(k−1)."""
    ok = np.isfinite(est) & np.isfinite(v) & (v > 0)
    k = int(ok.sum())
    if k < 2:
        return math.nan
    w = 1.0 / v[ok]
    mbar = (w * est[ok]).sum() / w.sum()
    return float(scipy_stats().chi2.sf((w * (est[ok] - mbar) ** 2).sum(), k - 1))


def ks_from_histograms(hg: pl.DataFrame, hr: pl.DataFrame) -> tuple[float, float]:
    """Kolmogorov–Smirnov distance of two histograms on the shared bin grid, with its error bound.

    Parameters
    ----------
    hg, hr
        Columns ``bin`` (Int64 code), ``w`` (Float64 weight), ``p_min``, ``p_max`` of the two
        groups' predictions.

    Returns
    -------
    (distance, bound)
        ``max_b |F_g − F_r|`` at the bins' upper edges, and how much more the true distance can
        be: inside bin ``b`` both distribution functions stay between their values at the bin's
        edges, so ``|F_g − F_r| <= max(F_g(b⁺) − F_r(b⁻), F_r(b⁺) − F_g(b⁻))`` there (the bins
        whose predictions, both groups pooled, are one point add nothing). The true distance lies in
        ``[distance, distance + bound]``, and ``bound <= max_b max(p_g(b), p_r(b))``. NaN when a
        histogram is empty.

    Examples
    --------
    >>> import polars as pl
    >>> g = pl.DataFrame({"bin": [1, 2], "w": [1.0, 1.0], "p_min": [1.0, 2.0], "p_max": [1.0, 2.0]})
    >>> r = pl.DataFrame({"bin": [2, 3], "w": [1.0, 1.0], "p_min": [2.0, 3.0], "p_max": [2.0, 3.0]})
    >>> ks_from_histograms(g, r)
    (0.5, 0.0)
    """
    d, b = ks_batch(hg.with_columns(pl.lit(0).alias("__pf_k")), hr.with_columns(pl.lit(0).alias("__pf_k")),
                     "__pf_k")  # fmt: skip
    return float(d[0]), float(b[0])


def ks_batch(hg: pl.DataFrame, hr: pl.DataFrame, key: str) -> tuple[np.ndarray, np.ndarray]:
    """:func:`ks_from_histograms` of many pairs at once: ``hg`` and ``hr`` keyed by ``key`` (0..k−1)."""
    cols = ["bin", "w", "p_min", "p_max"]
    both = (
        hg.select(key, *cols).join(hr.select(key, *cols), on=[key, "bin"], how="full", coalesce=True, suffix="_r")
        .with_columns(pl.col("w", "w_r").fill_null(0.0))
        .sort(key, "bin")
        .with_columns(
            (pl.col("w").cum_sum().over(key) / pl.col("w").sum().over(key)).alias("__fg"),
            (pl.col("w_r").cum_sum().over(key) / pl.col("w_r").sum().over(key)).alias("__fr"),
            (pl.min_horizontal("p_min", "p_min_r") < pl.max_horizontal("p_max", "p_max_r")).alias("__spread"),
        )
        .with_columns(  # the distribution functions just below each bin
            pl.col("__fg").shift(1, fill_value=0.0).over(key).alias("__fg0"),
            pl.col("__fr").shift(1, fill_value=0.0).over(key).alias("__fr0"),
        )
        .group_by(key)
        .agg(
            (pl.col("__fg") - pl.col("__fr")).abs().max().alias("d"),
            # inside a bin F_g and F_r stay between their values at its edges: the largest gap possible
            pl.max_horizontal(pl.col("__fg") - pl.col("__fr0"), pl.col("__fr") - pl.col("__fg0"))
            .filter(pl.col("__spread")).max().alias("u"),
        )
        .with_columns(pl.max_horizontal(pl.col("u") - pl.col("d"), pl.lit(0.0)).fill_null(0.0).alias("b"))
        .sort(key)
    )  # fmt: skip
    k = 1 + max(int(hg[key].max()) if hg.height else -1, int(hr[key].max()) if hr.height else -1)  # type: ignore[arg-type]
    d, b = np.full(k, np.nan), np.full(k, np.nan)
    keys = both[key].to_numpy()
    d[keys], b[keys] = both["d"].fill_nan(None).to_numpy(), both["b"].to_numpy()
    return d, b


def ks_p_value(d: np.ndarray, n1: np.ndarray, n2: np.ndarray) -> np.ndarray:
    """Asymptotic two-sample KS p-value, ``kstwo.sf(d, round(n1·n2/(n1+n2)))`` (scipy's ``ks_2samp(method="asymp")``)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        en = np.round(n1 * n2 / (n1 + n2))
    ok = np.isfinite(d) & np.isfinite(en) & (en >= 1)
    out = np.full(d.shape, np.nan)
    if ok.any():
        out[ok] = np.clip(scipy_stats().kstwo.sf(d[ok], en[ok]), 0.0, 1.0)
    return out


def attribute_spread(
    x: np.ndarray,
    codes: np.ndarray,
    k_sets: int,
    labels: list[str],
    d: dict[str, np.ndarray] | None,
    ci: float | None,
    name: str,
    weighted: bool,
    mse: dict[str, np.ndarray] | None = None,
    lo: np.ndarray | None = None,
) -> dict[str, dict[str, Any]]:
    """Spread (max − min, min ÷ max), group max and min of one metric per attribute set, with intervals.

    ``lo``: the compensations of ``x`` (a mean's double-double low parts, :func:`mean_parts`): the
    differences (the spread, its interval, the tests) are then taken about the set's first group,
    ``(x − x_0) + lo``, so a level far above the spread (1e12 ± 1) keeps its digits.

    Per set the groups where the metric is defined enter; ``n_groups`` counts them and
    ``excluded_groups`` names the others. Intervals: Šidák-simultaneous group intervals at level
    ``ci^(1/k)`` projected through max/min (two groups: the pair's Welch interval through ``|·|``);
    tests: Welch's ANOVA for the means, Cochran's Q for r².
    """
    spread = {c: np.full(k_sets, np.nan) for c in ("difference", "ratio", "n_groups")}
    mx = {c: np.full(k_sets, np.nan) for c in ("value",)}
    mn = {c: np.full(k_sets, np.nan) for c in ("value",)}
    excluded: list[str | None] = [None] * k_sets
    if ci is not None:
        for c in ("difference_lo", "difference_hi", "ratio_lo", "ratio_hi", "p_value"):
            spread[c] = np.full(k_sets, np.nan)
        for dd in (mx, mn):
            dd["value_lo"], dd["value_hi"] = np.full(k_sets, np.nan), np.full(k_sets, np.nan)
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(k_sets + 1))
    wt = "_ess" if weighted else ""
    for s in range(k_sets):
        idx = order[bounds[s] : bounds[s + 1]]
        ok = idx[np.isfinite(x[idx])]
        out_ = [labels[i] for i in idx if not np.isfinite(x[i])]
        excluded[s] = "; ".join(f"{lab} (undefined)" for lab in out_) or None
        k = len(ok)
        spread["n_groups"][s] = k
        if k == 0:
            continue
        v = x[ok]
        mx["value"][s], mn["value"][s] = v.max(), v.min()
        # the differences about the set's first group, compensated (an exact copy of x without lo)
        off = x[ok[0]] if lo is not None else 0.0
        rel = (x - off) + lo if lo is not None else x
        dr = d if d is None or lo is None else {**d, "est": (d["est"] - off) + lo}
        if k >= 2:
            spread["difference"][s] = rel[ok].max() - rel[ok].min()
            spread["ratio"][s] = v.min() / v.max() if v.max() > 0 and v.min() >= 0 else math.nan
        if ci is None or d is None:
            continue
        assert dr is not None
        lo_, hi = value_limits(name, d["est"][ok], d["var"][ok], d["df"][ok], ci ** (1.0 / k))
        rlo, rhi = value_limits(name, dr["est"][ok], dr["var"][ok], dr["df"][ok], ci ** (1.0 / k)) if lo is not None else (lo_, hi)
        if np.all(np.isfinite(lo_)) and np.all(np.isfinite(hi)):
            mx["value_lo"][s], mx["value_hi"][s] = lo_.max(), hi.max()
            mn["value_lo"][s], mn["value_hi"][s] = lo_.min(), hi.min()
            if k >= 3:
                spread["difference_lo"][s] = max(0.0, rlo.max() - rhi.min())
                spread["difference_hi"][s] = rhi.max() - rlo.min()
                if lo_.min() > 0:
                    spread["ratio_lo"][s] = lo_.min() / hi.max()
                    spread["ratio_hi"][s] = min(1.0, hi.min() / lo_.max())
        if k == 2:  # the pair: the interval of (larger − smaller), through |·|
            a, b = ok[np.argmax(rel[ok])], ok[np.argmin(rel[ok])]
            if a == b:
                b = ok[1] if ok[0] == a else ok[0]
            dif, vd, nu, _ = welch_test(dr["est"][[a]], dr["var"][[a]], dr["df"][[a]], dr["est"][[b]], dr["var"][[b]],
                                        dr["df"][[b]])  # fmt: skip
            q = float(np.ravel(scipy_stats().norm.ppf(0.5 + ci / 2.0) if name == "r2_score" else t_quantile(ci, nu))[0])
            lo2, hi2 = float(dif[0] - q * math.sqrt(vd[0])), float(dif[0] + q * math.sqrt(vd[0]))
            if math.isfinite(lo2) and math.isfinite(hi2):
                spread["difference_lo"][s] = 0.0 if lo2 <= 0 <= hi2 else min(abs(lo2), abs(hi2))
                spread["difference_hi"][s] = max(abs(lo2), abs(hi2))
        if k >= 2:
            if name == "r2_score":
                spread["p_value"][s] = _cochran_q(d["est"][ok], d["var"][ok])
            else:  # RMSE: the test of equal MSE
                t = mse if name == "root_mean_squared_error" and mse is not None else dr
                spread["p_value"][s] = welch_anova(t["est"][ok], t["var"][ok], t["df"][ok])[3]
    res: dict[str, dict[str, Any]] = {"spread": {**spread, "excluded_groups": excluded}, "max": mx, "min": mn}
    if ci is not None:
        test = "cochran_q" if name == "r2_score" else f"welch_anova{wt}"
        res["spread"]["ci_method"] = ["projection"] * k_sets
        res["spread"]["test"] = [test if np.isfinite(p) else None for p in spread["p_value"]]
        res["max"]["ci_method"] = ["projection"] * k_sets
        res["min"]["ci_method"] = ["projection"] * k_sets
    return res
