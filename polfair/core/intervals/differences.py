"""Two rates: Newcombe's difference, MOVER-R ratios, references that contain the group
(``reference="overall"``), MOVER sums of independent differences.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from polfair.core.intervals.common import Interval, IntoFloat, Rate, numpy_expr, staged
from polfair.core.intervals.proportions import defined, wilson_limits

__all__ = [
    "Pair",
    "average_difference_limits",
    "mover_ratio_limits",
    "mover_ratio_raw",
    "mover_sum_limits",
    "newcombe_limits",
    "overall_difference_limits",
    "overall_ratio_limits",
    "average_difference_interval",
    "difference_of_intervals",
    "mover_ratio_interval",
    "mover_sum_interval",
    "newcombe_interval",
    "overall_difference_interval",
    "overall_ratio_interval",
]

def newcombe_interval(g: Rate, r: Rate, z: IntoFloat) -> Interval:
    r"""Newcombe's hybrid score interval (method 10) for the difference ``p_g − p_r`` of independent rates.

    .. math:: L = d - \sqrt{(\hat p_g - l_g)^2 + (u_r - \hat p_r)^2},\quad
       U = d + \sqrt{(u_g - \hat p_g)^2 + (\hat p_r - l_r)^2}

    with the Wilson limits ``(l, u)`` of each rate (:func:`wilson_interval`).

    Returns
    -------
    Interval
        Float64 limits in [−1, 1]; null when either rate or size is null/0.

    Notes
    -----
    Newcombe (1998), *Statistics in Medicine* 17, 873–890. Equal to statsmodels 0.15
    ``confint_proportions_2indep(method="newcomb")`` to 1e-15. Exact coverage 94.6–97.1% at 95%
    (down to a 10-row group against 500).

    Examples
    --------
    >>> import polars as pl
    >>> lo, hi = newcombe_interval(Rate(pl.lit(0.2), pl.lit(50.0)), Rate(pl.lit(0.4), pl.lit(50.0)), 1.959963984540054)
    >>> [round(v, 4) for v in pl.select(lo, hi.alias("hi")).row(0)]
    [-0.3636, -0.0201]
    """
    lo, hi = numpy_expr(newcombe_limits, [g.p, g.n, r.p, r.n, z], ("lo", "hi"))
    return staged(Interval(lo, hi))


def mover_ratio_interval(g: Rate, r: Rate, z: IntoFloat) -> Interval:
    r"""MOVER-R interval with Wilson limits for the ratio ``p_g / p_r`` of independent rates.

    With ``θ̂ = p̂_g/p̂_r`` and ``b = p̂_g p̂_r``:

    .. math:: L = \frac{l_g(2\hat p_g - l_g)}{b + \sqrt{b^2 - l_g(2\hat p_g - l_g)\,u_r(2\hat p_r - u_r)}},\quad
       U = \frac{b + \sqrt{b^2 - u_g(2\hat p_g - u_g)\,l_r(2\hat p_r - l_r)}}{l_r(2\hat p_r - l_r)}

    (the lower limit in rationalised form, finite when ``u_r > 2p̂_r``; 0 when ``x_g = 0``).

    Returns
    -------
    Interval
        Float64 limits ≥ 0; null when ``p̂_r = 0`` (the ratio itself is then null by the report's
        policy, and the upper limit would be unbounded) or a size is 0.

    Notes
    -----
    Donner & Zou (2012); Zou & Donner (2008). Exact coverage 95.0–96.8% at 95% in six scenarios,
    defined with a zero numerator count (Katz's log interval is not). statsmodels has no MOVER-R;
    its Koopman score interval (``method="score"``) is a different method and is wrong in
    0.15.0 when a count equals its n.

    Examples
    --------
    >>> import polars as pl
    >>> g, r = Rate(pl.lit(0.2), pl.lit(50.0)), Rate(pl.lit(0.4), pl.lit(50.0))
    >>> lo, hi = mover_ratio_interval(g, r, 1.959963984540054)
    >>> [round(v, 4) for v in pl.select(lo, hi.alias("hi")).row(0)]
    [0.263, 0.9363]
    """
    lo, hi = numpy_expr(mover_ratio_limits, [g.p, g.n, r.p, r.n, z], ("lo", "hi"))
    return staged(Interval(lo, hi))


def overall_difference_interval(g: Rate, c: Rate, f: pl.Expr, z: IntoFloat) -> Interval:
    """Interval of ``p_g − p_ref`` where the reference contains the group (``reference="overall"``).

    ``p_ref = f·p_g + (1−f)·p_c`` exactly (``c`` = reference minus group, ``f`` = the group's
    share of the denominator; :func:`complement_rate`), so ``p_g − p_ref = (1−f)(p_g − p_c)`` and its
    interval is ``(1−f)`` times Newcombe's interval of ``p_g − p_c`` (independent rows).

    Returns
    -------
    Interval
        Null when the complement is empty (the group is the whole reference).

    Examples
    --------
    >>> import polars as pl
    >>> lo, hi = overall_difference_interval(Rate(pl.lit(0.2), pl.lit(50.0)), Rate(pl.lit(0.4), pl.lit(50.0)),
    ...                                      pl.lit(0.5), 1.959963984540054)
    >>> [round(v, 4) for v in pl.select(lo, hi.alias("hi")).row(0)]
    [-0.1818, -0.0101]
    """
    lo, hi = numpy_expr(overall_difference_limits, [g.p, g.n, c.p, c.n, f, z], ("lo", "hi"))
    return staged(Interval(lo, hi))


def overall_ratio_interval(g: Rate, c: Rate, f: pl.Expr, z: IntoFloat) -> Interval:
    """Interval of ``p_g / p_ref`` where the reference contains the group (``reference="overall"``).

    ``p_g / p_ref = R / (f·R + 1 − f)`` with ``R = p_g / p_c``: an increasing map of ``R``, applied to
    the MOVER-R limits of ``R`` (an unbounded upper limit maps to ``1/f``).

    Returns
    -------
    Interval
        Null when ``p_g = p_c = 0`` (the ratio is undefined) or the complement is empty.

    Examples
    --------
    >>> import polars as pl
    >>> lo, hi = overall_ratio_interval(Rate(pl.lit(0.2), pl.lit(50.0)), Rate(pl.lit(0.0), pl.lit(50.0)),
    ...                                 pl.lit(0.5), 1.959963984540054)
    >>> [round(v, 4) for v in pl.select(lo, hi.alias("hi")).row(0)]
    [1.4319, 2.0]
    """
    lo, hi = numpy_expr(overall_ratio_limits, [g.p, g.n, c.p, c.n, f, z], ("lo", "hi"))
    return staged(Interval(lo, hi))


def mover_sum_interval(parts: Sequence[tuple[pl.Expr, Interval]], scale: float = 1.0) -> Interval:
    r"""MOVER interval of a sum of independent estimates, times ``scale``.

    .. math:: L = \sum d_i - \sqrt{\sum (d_i - L_i)^2},\quad U = \sum d_i + \sqrt{\sum (U_i - d_i)^2}

    Parameters
    ----------
    parts
        ``(estimate, Interval)`` of each independent part.
    scale
        Multiplies the result (0.5 for an average of two parts).

    Notes
    -----
    Zou & Donner (2008), *Statistics in Medicine* 27, 1693–1702.

    Examples
    --------
    >>> import polars as pl
    >>> lo, hi = mover_sum_interval([(pl.lit(0.1), Interval(pl.lit(0.0), pl.lit(0.2))),
    ...                              (pl.lit(0.1), Interval(pl.lit(0.0), pl.lit(0.2)))], 0.5)
    >>> [round(v, 6) for v in pl.select(lo, hi.alias("hi")).row(0)]
    [0.029289, 0.170711]
    """
    inputs = [x for e, iv in parts for x in (e, iv.lo, iv.hi)]

    def fn(*arrays: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return mover_sum_limits([tuple(arrays[i : i + 3]) for i in range(0, len(arrays), 3)], scale)  # type: ignore[misc]

    return staged(Interval(*numpy_expr(fn, inputs, ("lo", "hi"))))


def average_difference_interval(pairs: Sequence[tuple[Rate, Rate]], z: IntoFloat) -> Interval:
    """Interval of the average of rate differences over disjoint rows: the MOVER sum of Newcombe intervals, halved.

    ``average_odds_difference = ½(ΔFPR + ΔTPR)`` (negatives and positives: disjoint rows) and
    ``average_predictive_value_difference = ½(ΔPPV + ΔFOR)`` (predicted positives and negatives).

    Parameters
    ----------
    pairs
        ``[(group rate, reference rate), ...]`` for each part.
    z
        Critical value at the report's level (:func:`z_value`).

    Notes
    -----
    Coverage 94.1–96.3% at 95% (simulation; a 20-row group against 1000: the percentile
    bootstrap gives 88.4%).

    Examples
    --------
    >>> import polars as pl
    >>> r = lambda p, n: Rate(pl.lit(p), pl.lit(n))
    >>> lo, hi = average_difference_interval([(r(0.2, 50.0), r(0.4, 50.0)), (r(0.7, 40.0), r(0.8, 60.0))], 1.96)
    >>> [round(v, 3) for v in pl.select(lo, hi.alias("hi")).row(0)]
    [-0.27, -0.027]
    """
    def fn(*a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return average_difference_limits([tuple(a[i : i + 4]) for i in range(0, len(a) - 1, 4)], a[-1])  # type: ignore[misc]

    inputs = [x for g, r in pairs for x in (g.p, g.n, r.p, r.n)] + [z]
    return staged(Interval(*numpy_expr(fn, inputs, ("lo", "hi"))))


def difference_of_intervals(a: Interval, b: Interval) -> Interval:
    """Interval of ``A − B`` from intervals of ``A`` and ``B`` that hold jointly: ``[a.lo − b.hi, a.hi − b.lo]``.

    For ``differential_fairness_bias_amplification`` (EDF of predictions minus EDF of labels),
    give each EDF interval level ``1 − α/2`` (Bonferroni). A null (unbounded) limit gives null.

    Examples
    --------
    >>> import polars as pl
    >>> lo, hi = difference_of_intervals(Interval(pl.lit(1.0), pl.lit(2.0)), Interval(pl.lit(0.5), pl.lit(0.75)))
    >>> pl.select(lo, hi.alias("hi")).row(0)
    (0.25, 1.5)
    """
    return Interval(a.lo - b.hi, a.hi - b.lo)


# ----------------------------------------------------------------------------------------------
# numpy kernels: the definitions (the expression forms above wrap them). Arrays broadcast; NaN marks
# a missing value and an undefined limit.

Pair = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # group p, n; reference p, n


def newcombe_limits(pg: Any, ng: Any, pr: Any, nr: Any, z: Any, *, wilson: tuple[Any, Any, Any, Any] | None = None
                    ) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """:func:`newcombe_interval` on arrays (``wilson``: the two rates' Wilson limits at ``z``, if already computed).

    Examples
    --------
    >>> [round(float(v), 4) for v in newcombe_limits(0.2, 50.0, 0.4, 50.0, 1.959963984540054)]
    [-0.3636, -0.0201]
    """
    pg, pr = np.asarray(pg, dtype=np.float64), np.asarray(pr, dtype=np.float64)
    lg, ug, lr, ur = wilson if wilson is not None else (*wilson_limits(pg, ng, z), *wilson_limits(pr, nr, z))
    d = pg - pr
    with np.errstate(invalid="ignore"):
        lo = d - np.sqrt((pg - lg) ** 2 + (ur - pr) ** 2)
        hi = d + np.sqrt((ug - pg) ** 2 + (pr - lr) ** 2)
    return lo, hi


def mover_ratio_raw(pg: Any, ng: Any, pr: Any, nr: Any, z: Any, *, wilson: tuple[Any, Any, Any, Any] | None = None
                    ) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """MOVER-R limits of ``p_g / p_r`` on arrays, with an unbounded upper limit as ``+inf`` (``p_r = 0``).

    Examples
    --------
    >>> [round(float(v), 4) for v in mover_ratio_raw(0.2, 50.0, 0.0, 50.0, 1.959963984540054)]
    [2.5202, inf]
    """
    p1, n1, p2, n2 = (np.asarray(v, dtype=np.float64) for v in (pg, ng, pr, nr))
    lg, ug, lr, ur = wilson if wilson is not None else (*wilson_limits(p1, n1, z), *wilson_limits(p2, n2, z))
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        b = p1 * p2
        a_lo = lg * (2.0 * p1 - lg)
        c_lo = ur * (2.0 * p2 - ur)
        lo = a_lo / (b + np.sqrt(np.maximum(b * b - a_lo * c_lo, 0.0)))
        lo = np.where(p1 <= 0.0, 0.0, lo)
        a_hi = ug * (2.0 * p1 - ug)
        c_hi = lr * (2.0 * p2 - lr)
        hi = (b + np.sqrt(np.maximum(b * b - a_hi * c_hi, 0.0))) / c_hi
        hi = np.where(p2 <= 0.0, np.inf, hi)
        ok = defined(p1, n1) & defined(p2, n2) & ((p1 > 0.0) | (p2 > 0.0))
    return np.where(ok, lo, np.nan), np.where(ok, hi, np.nan)


def mover_ratio_limits(pg: Any, ng: Any, pr: Any, nr: Any, z: Any, *, wilson: tuple[Any, Any, Any, Any] | None = None
                       ) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """:func:`mover_ratio_interval` on arrays (NaN where the upper limit is unbounded).

    Examples
    --------
    >>> [round(float(v), 4) for v in mover_ratio_limits(0.2, 50.0, 0.4, 50.0, 1.959963984540054)]
    [0.263, 0.9363]
    """
    lo, hi = mover_ratio_raw(pg, ng, pr, nr, z, wilson=wilson)
    finite = np.isfinite(hi)
    return np.where(finite, lo, np.nan), np.where(finite, hi, np.nan)


def overall_difference_limits(pg: Any, ng: Any, pc: Any, nc: Any, f: Any, z: Any) -> tuple[np.ndarray, np.ndarray]:
    """:func:`overall_difference_interval` on arrays: ``(1 − f)`` times Newcombe's limits of group vs complement.

    Examples
    --------
    >>> [round(float(v), 4) for v in overall_difference_limits(0.2, 50.0, 0.4, 50.0, 0.5, 1.959963984540054)]
    [-0.1818, -0.0101]
    """
    lo, hi = newcombe_limits(pg, ng, pc, nc, z)
    f = np.asarray(f, dtype=np.float64)
    return (1.0 - f) * lo, (1.0 - f) * hi


def overall_ratio_limits(pg: Any, ng: Any, pc: Any, nc: Any, f: Any, z: Any) -> tuple[np.ndarray, np.ndarray]:
    """:func:`overall_ratio_interval` on arrays: the MOVER-R limits of ``R`` through ``R / (f·R + 1 − f)``.

    Examples
    --------
    >>> [round(float(v), 4) for v in overall_ratio_limits(0.2, 50.0, 0.0, 50.0, 0.5, 1.959963984540054)]
    [1.4319, 2.0]
    """
    lo, hi = mover_ratio_raw(pg, ng, pc, nc, z)
    f = np.asarray(f, dtype=np.float64)

    def m(x: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(np.isinf(x), 1.0 / f, x / (f * x + 1.0 - f))

    with np.errstate(invalid="ignore"):
        ok = ~np.isnan(f) & (f < 1.0)
    return np.where(ok, m(lo), np.nan), np.where(ok, m(hi), np.nan)


def mover_sum_limits(parts: Sequence[tuple[Any, Any, Any]], scale: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """:func:`mover_sum_interval` on arrays: ``parts`` are ``(estimate, lo, hi)`` of independent estimates.

    Examples
    --------
    >>> [round(float(v), 6) for v in mover_sum_limits([(0.1, 0.0, 0.2), (0.1, 0.0, 0.2)], 0.5)]
    [0.029289, 0.170711]
    """
    arrs = [tuple(np.asarray(v, dtype=np.float64) for v in part) for part in parts]
    d = arrs[0][0]
    lo_sq, hi_sq = (arrs[0][0] - arrs[0][1]) ** 2, (arrs[0][2] - arrs[0][0]) ** 2
    ok = ~(np.isnan(arrs[0][0]) | np.isnan(arrs[0][1]) | np.isnan(arrs[0][2]))
    for e, lo_i, hi_i in arrs[1:]:
        d = d + e
        lo_sq, hi_sq = lo_sq + (e - lo_i) ** 2, hi_sq + (hi_i - e) ** 2
        ok = ok & ~(np.isnan(e) | np.isnan(lo_i) | np.isnan(hi_i))
    with np.errstate(invalid="ignore"):
        lo, hi = d - np.sqrt(lo_sq), d + np.sqrt(hi_sq)
    return np.where(ok, scale * lo, np.nan), np.where(ok, scale * hi, np.nan)


def average_difference_limits(pairs: Sequence[Pair], z: Any) -> tuple[np.ndarray, np.ndarray]:
    """:func:`average_difference_interval` on arrays: ``pairs`` are ``(p_g, n_g, p_r, n_r)`` of each part.

    Examples
    --------
    >>> pairs = [(0.2, 50.0, 0.4, 50.0), (0.7, 40.0, 0.8, 60.0)]
    >>> [round(float(v), 3) for v in average_difference_limits(pairs, 1.96)]
    [-0.27, -0.027]
    """
    parts = [(np.asarray(pg, dtype=np.float64) - np.asarray(pr, dtype=np.float64), *newcombe_limits(pg, ng, pr, nr, z))
             for pg, ng, pr, nr in pairs]  # fmt: skip
    return mover_sum_limits(parts, 1.0 / len(pairs))
