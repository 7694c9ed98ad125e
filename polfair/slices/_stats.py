"""Statistics of slices: the interval of a slice's mean error, its difference to the rest, a test,
and p-values adjusted over every slice the search evaluated. Arithmetic on the slices' sums
(numpy), with the core's interval and test kernels.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from polfair.core.intervals import TESTS, p_adjust, z_value
from polfair.core.intervals.differences import newcombe_limits
from polfair.core.intervals.proportions import kish_size, wilson_limits
from polfair.core.intervals.significance import two_proportion_pvalues
from polfair.core.regression import Moments, mean_interval, value_limits, welch_test
from polfair.core.regression.stats import t_quantile

__all__ = ["slice_statistics", "adjusted"]


def _parts(stats: dict[str, np.ndarray], total: dict[str, float]) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """The slice's and the rest's sums (Σw, Σw², Σw·e, Σw·(e−c), Σw·(e−c)²; the rest's centred sum may be negative)."""
    own = {"w": stats["s"], "w2": stats["w2"], "sum_e": stats["e"], "sum_d": stats["d"], "sum_e2": stats["e2"]}
    rest = {k: v if k == "sum_d" else np.maximum(v, 0.0) for k, v in
            ((k, total[k] - v) for k, v in own.items())}  # fmt: skip
    return own, rest


def _offsets(p: dict[str, np.ndarray]) -> np.ndarray:
    """The mean error less the reference ``c`` (from the centred sum: differences of means keep their digits)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(p["w"] > 0, p["sum_d"] / p["w"], np.nan)


def _means(p: dict[str, np.ndarray]) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(p["w"] > 0, p["sum_e"] / p["w"], np.nan)


def _moments(p: dict[str, np.ndarray]) -> Moments:
    """The regression kernels' moments of a slice's (or the rest's) errors: ``w``, ``w2``, the mean
    ``mean_e`` less the reference ``c`` (the search's ``shift``, near the mean error: a Welch difference of two
    means is then a difference of centred quantities) and ``m2_e = Σw·(e−c)² − (Σw·(e−c))²/Σw``
    (clipped at 0), both from the centred sums, so losses like 1e9 + U(0, 1) keep their spread's digits.
    """
    w = p["w"]
    with np.errstate(divide="ignore", invalid="ignore"):
        d = p["sum_d"]
        m2 = np.maximum(p["sum_e2"] - np.where(w > 0, d * d / w, 0.0), 0.0)
    return Moments({"w": w, "w2": p["w2"], "mean_e": _offsets(p), "m2_e": m2})


def slice_statistics(
    stats: dict[str, np.ndarray], total: dict[str, float], *, binary: bool, weighted: bool, ci: float | None,
    shift: float = 0.0,
) -> dict[str, Any]:
    """Interval, difference to the rest, its interval and the test, for slices with ``stats`` sums.

    Parameters
    ----------
    stats
        Per slice: ``s`` (Σw), ``w2`` (Σw²), ``e`` (Σw·e), ``e2`` (Σw·(e − shift)²), arrays of one length.
    total
        The same sums over every counted row (keys ``w``, ``w2``, ``sum_e``, ``sum_e2``).
    binary
        Errors are 0/1 (the mean is a rate): Wilson score interval, Newcombe's hybrid score interval
        for the difference, the "N−1" χ² test (Fisher's exact test for an expected count below 1;
        weighted: the pooled z with Kish sizes). Otherwise the mean of a non-negative loss: a
        Student t interval on the log scale, Welch's interval and test for the difference.
    shift
        The reference error ``c`` the squared sums are centred at (0 for 0/1 errors).
    weighted
        Kish effective sizes (``n_eff``) and the ``_ess`` method names.
    ci
        Confidence level of the intervals, ``None`` for none (the tests are still computed).

    Returns
    -------
    dict
        numpy arrays ``value_lo``, ``value_hi``, ``rest_error_mean``, ``difference``,
        ``difference_lo``, ``difference_hi``, ``p_value``, ``n_eff`` (NaN where undefined) and the
        names ``ci_method``, ``test`` (lists of str or None).
    """
    own, rest = _parts(stats, total)
    mean, rmean = _means(own), _means(rest)
    n = len(mean)
    nan = np.full(n, np.nan)
    out: dict[str, Any] = {"rest_error_mean": rmean, "difference": mean - rmean}
    if binary:
        ng, nr = kish_size(own["w"], own["w2"]), kish_size(rest["w"], rest["w2"])
        p, code = two_proportion_pvalues(mean, ng, rmean, nr, weighted=weighted)
        out["p_value"] = p
        names = np.array([*TESTS, None], dtype=object)
        out["test"] = names[np.where(np.isnan(code), len(TESTS), np.nan_to_num(code)).astype(np.int64)].tolist()
        out["n_eff"] = ng
        if ci is not None:
            z = z_value(ci)
            lo, hi = wilson_limits(mean, ng, z)
            dlo, dhi = newcombe_limits(mean, ng, rmean, nr, z)
            out |= {"value_lo": lo, "value_hi": hi, "difference_lo": dlo, "difference_hi": dhi}
        method = "score_ess" if weighted else "score"
    else:
        mg, mr = _moments(own), _moments(rest)
        est, var, df = mean_interval(mg, "mean_error")
        rest_est, rest_var, rest_df = mean_interval(mr, "mean_error")
        d, vd, nu, p = welch_test(est, var, df, rest_est, rest_var, rest_df)
        out["p_value"] = p
        out["difference"] = d  # of the centred means (mean − rest_mean less their common reference)
        wt = "_ess" if weighted else ""
        out["test"] = [None if np.isnan(v) else f"welch{wt}" for v in p.tolist()]
        out["n_eff"] = mg.neff
        if ci is not None:
            lo, hi = value_limits("mean_absolute_error", est + shift, var, df, ci)
            half = t_quantile(ci, nu) * np.sqrt(vd)
            out |= {"value_lo": lo, "value_hi": hi, "difference_lo": d - half, "difference_hi": d + half}
        method = f"log_t{wt}"
    for k in ("value_lo", "value_hi", "difference_lo", "difference_hi"):
        out.setdefault(k, nan)
    out["ci_method"] = [None if ci is None or np.isnan(v) else method for v in out["value_lo"].tolist()]
    return out


def adjusted(p: np.ndarray, method: str | None) -> np.ndarray:
    """``p`` adjusted over the whole family (the core's :func:`~polfair.core.intervals.p_adjust`);
    NaN p-values are left out of the family and stay NaN; ``method=None`` returns ``p`` (unadjusted).

    Examples
    --------
    >>> adjusted(np.array([0.01, 0.04, 0.03, np.nan]), "bh").round(4).tolist()
    [0.03, 0.04, 0.04, nan]
    """
    if method is None:  # no adjustment: the raw p-values (as the reports' p_value_adjusted)
        return p.copy()
    frame = pl.DataFrame({"p": pl.Series(p, dtype=pl.Float64, nan_to_null=True)})
    out = frame.select(p_adjust(pl.col("p"), method))["p"]  # type: ignore[arg-type]
    return out.fill_null(np.nan).to_numpy()
