"""Closed-form intervals of :class:`~polfair.compat.fairlearn.MetricFrame` (``ci_method="analytic"``).

An underscore module: internal to :mod:`polfair.compat.fairlearn`. Every limit comes from a kernel
of :mod:`polfair.core.intervals` or :mod:`polfair.core.regression` applied to the cell tables
the point estimates were computed from (nothing reads the rows again):

* rates (recall, precision, accuracy, error rate, selection rate, fairlearn's and polfair's rate
  functions): Wilson score limits with Kish's effective size of the denominator
  (:func:`~polfair.core.intervals.rate_inputs`, :func:`~polfair.core.intervals.wilson_limits`);
  ``group_min``/``group_max``: the groups' Šidák-simultaneous limits projected through min/max;
  ``difference``/``ratio`` between groups: :func:`~polfair.core.intervals.spread_limits`
  (Newcombe / MOVER-R for two groups, projections for more); ``to_overall``: each group against
  its complement (:func:`~polfair.core.intervals.overall_difference_limits`,
  :func:`~polfair.core.intervals.overall_ratio_limits`), Šidák-simultaneous, through ``|·|`` (or
  the fold ``min(r, 1/r)``) and the max (min) over the groups;
* regression means (MAE, MSE, RMSE, mean prediction) and ``r2_score``:
  :func:`~polfair.core.regression.mean_interval` / ``r2_parts`` and
  :func:`~polfair.core.regression.value_limits`; extremes and between-group spreads by Šidák
  projections; ``to_overall`` is NaN (no closed form here);
* every other metric (F-scores, balanced accuracy, counts, metrics called per group): NaN.

A quantile ``q`` maps to a two-sided level: ``q < 0.5`` is the lower limit of the ``1 − 2q``
interval, ``q > 0.5`` the upper limit of the ``2q − 1`` interval, ``q = 0.5`` the estimate.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import polars as pl

from polfair.compat.fairlearn._mf_compute import Layout, Pass, Results
from polfair.compat.fairlearn._mf_known import Known
from polfair.core.intervals.common import Segments, z_values
from polfair.core.intervals.differences import overall_difference_limits, overall_ratio_limits
from polfair.core.intervals.projections import abs_limits
from polfair.core.intervals.proportions import kish_size, rate_inputs, wilson_limits
from polfair.core.intervals.spreads import spread_limits
from polfair.core.metrics import METRICS, Counts
from polfair.core.regression import Moments, group_moments, mean_interval, value_limits
from polfair.core.regression.stats import r2_parts

__all__ = ["analytic_limits", "rate_of"]

#: Regression handler -> the core's metric name.
_REGRESSION = {"mae": "mean_absolute_error", "mse": "mean_squared_error", "rmse": "root_mean_squared_error",
               "mean_prediction": "mean_prediction", "r2": "r2_score"}  # fmt: skip


def rate_of(k: Known) -> str | None:
    """The rate of :data:`polfair.core.metrics.METRICS` a handler reports, or ``None`` (no Wilson interval)."""
    h = k.handler
    if h in ("fl_rate", "pf_rate"):
        return str(k.params["metric"])
    if h in ("accuracy", "zero_one_loss"):
        return None if not k.params["normalize"] else ("accuracy" if h == "accuracy" else "error_rate")
    return {"recall": "true_positive_rate", "precision": "positive_predictive_value",
            "fl_selection_rate": "selection_rate"}.get(h)  # fmt: skip


def _dense(table: pl.DataFrame, values: np.ndarray, layout: Layout, features: Sequence[int], size: int) -> np.ndarray:
    out = np.full(size, np.nan)
    out[layout.codes(table, features)] = values
    return out


class _RateParts:
    """A rate's value, effective size, weighted numerator/denominator and Σw² of the denominator, dense."""

    def __init__(self, metric: str, table: pl.DataFrame, layout: Layout, features: Sequence[int], size: int) -> None:
        m = METRICS[metric]
        assert m.denominator is not None
        r = rate_inputs(metric)
        c = Counts()
        cols = table.select(
            r.p.cast(pl.Float64).alias("p"), r.n.cast(pl.Float64).alias("n"), m.numerator(c).cast(pl.Float64).alias("num"),
            m.denominator(c).cast(pl.Float64).alias("den"),
            m.denominator(Counts(lambda x: pl.col(f"{x}_w2"))).cast(pl.Float64).alias("den2"),
        ).fill_null(np.nan)  # fmt: skip
        self.p, self.n, self.num, self.den, self.den2 = (_dense(table, cols[c_].to_numpy(), layout, features, size)
                                                          for c_ in ("p", "n", "num", "den", "den2"))  # fmt: skip


def _side(q: float, lo: np.ndarray, hi: np.ndarray, est: np.ndarray) -> np.ndarray:
    return lo if q < 0.5 else hi if q > 0.5 else est


def _level(q: float) -> float:
    return abs(1.0 - 2.0 * q) if q != 0.5 else 0.5


def _k(defined: np.ndarray) -> np.ndarray:
    """Groups with a value per control group (the Šidák family size), broadcast over the groups."""
    return np.broadcast_to(defined.sum(axis=-1, keepdims=True), defined.shape)


def _quiet_min(x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        ok = ~np.isnan(x)
        return np.where(ok.any(axis=-1), np.nanmin(np.where(ok, x, np.inf), axis=-1), np.nan)


def _quiet_max(x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        ok = ~np.isnan(x)
        return np.where(ok.any(axis=-1), np.nanmax(np.where(ok, x, -np.inf), axis=-1), np.nan)


def _rate_limits(kind: str, method: str, q: float, g: _RateParts, o: _RateParts, C: int, S: int,
                 nominal: np.ndarray) -> np.ndarray:  # fmt: skip
    """One quantile of a rate's result (``(C, S)`` for by_group, ``(C,)`` otherwise)."""
    if q == 0.5:
        return nominal
    level = _level(q)
    if kind in ("by_group", "overall"):
        parts = g if kind == "by_group" else o
        lo, hi = wilson_limits(parts.p, parts.n, z_values(level, 1))
        out = _side(q, lo, hi, parts.p)
        return out.reshape(C, S) if kind == "by_group" else out
    p, n = g.p.reshape(C, S), g.n.reshape(C, S)
    defined = ~np.isnan(p) & (n > 0)
    if kind in ("min", "max"):
        lo, hi = wilson_limits(p, n, z_values(level, _k(defined)))
        lo, hi = np.where(defined, lo, np.nan), np.where(defined, hi, np.nan)
        pick = _quiet_min if kind == "min" else _quiet_max
        return _side(q, pick(lo), pick(hi), nominal)
    if method == "between_groups":
        seg = Segments(np.repeat(np.arange(C), S), C)
        spread = spread_limits(np.where(defined, p, np.nan).reshape(-1), np.where(defined, n, np.nan).reshape(-1), seg, level)
        name = "difference" if kind == "difference" else "ratio"
        return _side(q, spread[f"{name}_lo"], spread[f"{name}_hi"], nominal)
    # to_overall: each group against the rest of its control group, Šidák over the groups
    num_c, den_c, den2_c = (x[:, None] for x in (o.num, o.den, o.den2))
    num_g, den_g, den2_g = (x.reshape(C, S) for x in (g.num, g.den, g.den2))
    with np.errstate(all="ignore"):
        den_r = den_c - den_g
        p_r = np.where(den_r > 0, (num_c - num_g) / np.where(den_r > 0, den_r, 1.0), np.nan)
        n_r = kish_size(den_r, den2_c - den2_g)
        f = np.where(den_c > 0, den_g / np.where(den_c > 0, den_c, 1.0), np.nan)
    z = z_values(level, _k(defined))
    rest = den_r > 0
    if kind == "difference":
        lo, hi = abs_limits(*overall_difference_limits(p, n, p_r, n_r, f, z))
        lo, hi = np.where(rest, lo, 0.0), np.where(rest, hi, 0.0)  # a group that is all of it: 0 exactly
        lo, hi = np.where(defined, lo, np.nan), np.where(defined, hi, np.nan)
        return _side(q, _quiet_max(lo), _quiet_max(hi), nominal)
    rlo, rhi = overall_ratio_limits(p, n, p_r, n_r, f, z)
    with np.errstate(all="ignore"):
        flo = np.where(rhi <= 1.0, rlo, np.where(rlo >= 1.0, 1.0 / rhi, np.fmin(rlo, 1.0 / rhi)))
        fhi = np.where(rhi <= 1.0, rhi, np.where(rlo >= 1.0, 1.0 / rlo, 1.0))
    flo, fhi = np.where(rest, flo, 1.0), np.where(rest, fhi, 1.0)
    flo, fhi = np.where(defined, flo, np.nan), np.where(defined, fhi, np.nan)
    return _side(q, _quiet_min(flo), _quiet_min(fhi), nominal)


def _moments(table: pl.DataFrame, layout: Layout, features: Sequence[int], size: int) -> Moments:
    m = group_moments(table)
    idx = layout.codes(table, features)
    dense = {}
    for name, v in m.sums.items():
        d = np.full(size, np.nan)
        d[idx] = v
        dense[name] = d
    return Moments(dense)


def _estimate(metric: str, m: Moments) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if metric == "r2_score":
        return r2_parts(m)
    if metric == "root_mean_squared_error":
        mse, var, df = mean_interval(m, "mean_squared_error")
        est = np.sqrt(mse)
        with np.errstate(all="ignore"):
            return est, np.where(mse > 0, var / (4.0 * mse), np.nan), df
    return mean_interval(m, metric)


def _regression_limits(kind: str, method: str, q: float, metric: str, g: Moments, o: Moments, C: int, S: int,
                       nominal: np.ndarray) -> np.ndarray:  # fmt: skip
    if q == 0.5:
        return nominal
    level = _level(q)
    if kind in ("by_group", "overall"):
        est, var, df = _estimate(metric, g if kind == "by_group" else o)
        lo, hi = value_limits(metric, est, var, df, level)
        out = _side(q, lo, hi, est)
        return out.reshape(C, S) if kind == "by_group" else out
    if method == "to_overall":
        return np.full(C, np.nan)
    est, var, df = (x.reshape(C, S) for x in _estimate(metric, g))
    defined = np.isfinite(est) & np.isfinite(var)
    k = np.maximum(_k(defined), 1)
    lo, hi = value_limits(metric, est, var, df, level ** (1.0 / k))
    lo, hi = np.where(defined, lo, np.nan), np.where(defined, hi, np.nan)
    if kind in ("min", "max"):
        pick = _quiet_min if kind == "min" else _quiet_max
        return _side(q, pick(lo), pick(hi), nominal)
    two = defined.sum(axis=-1) >= 2
    max_lo, min_lo, max_hi, min_hi = _quiet_max(lo), _quiet_min(lo), _quiet_max(hi), _quiet_min(hi)
    with np.errstate(all="ignore"):
        if kind == "difference":
            out_lo, out_hi = np.maximum(max_lo - min_hi, 0.0), max_hi - min_lo
        else:
            positive = min_lo > 0
            out_lo = np.where(positive, min_lo / max_hi, np.nan)
            out_hi = np.where(positive, np.fmin(min_hi / max_lo, 1.0), np.nan)
    return _side(q, np.where(two, out_lo, np.nan), np.where(two, out_hi, np.nan), nominal)


Limits = Callable[[str, str, Sequence[float]], dict[str, np.ndarray]]


def analytic_limits(layout: Layout, known: dict[str, Known], results: Results, names: Sequence[str],
                    nominal: Callable[[str, str], dict[str, np.ndarray]]) -> Limits:  # fmt: skip
    """The ``(kind, method, quantiles) -> {metric: limits}`` function of a MetricFrame's analytic intervals.

    ``nominal(kind, method)`` gives each metric's point result (the ``q = 0.5`` row). The limits
    are arrays ``(len(quantiles), C, S)`` for ``by_group`` and ``(len(quantiles), C)`` otherwise.
    """
    C, S = layout.C, layout.S
    everything, cf = range(len(layout.names)), range(layout.n_cf)
    prepared: dict[str, Any] = {}
    for name, (ps, cells, rolled) in results.tables.items():
        k = known.get(name)
        if k is None:
            continue
        if isinstance(ps, Pass) and ps.family == "reg" and k.handler in _REGRESSION:
            prepared[name] = ("reg", _REGRESSION[k.handler], _moments(cells, layout, everything, C * S),
                              _moments(rolled, layout, cf, C))  # fmt: skip
        elif (rate := rate_of(k)) is not None:
            prepared[name] = ("rate", rate, _RateParts(rate, cells, layout, everything, C * S),
                              _RateParts(rate, rolled, layout, cf, C))  # fmt: skip

    def limits(kind: str, method: str, quantiles: Sequence[float]) -> dict[str, np.ndarray]:
        point = nominal(kind, method)
        out = {}
        for name in names:
            shape = (C, S) if kind == "by_group" else (C,)
            est = np.asarray(point[name], dtype=np.float64).reshape(shape)
            if name not in prepared:
                out[name] = np.stack([est if q == 0.5 else np.full(shape, np.nan) for q in quantiles])
                continue
            family, metric, g, o = prepared[name]
            if family == "rate":
                out[name] = np.stack([_rate_limits(kind, method, q, g, o, C, S, est) for q in quantiles])
            else:
                out[name] = np.stack([_regression_limits(kind, method, q, metric, g, o, C, S, est) for q in quantiles])
        return out

    return limits
