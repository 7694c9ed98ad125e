"""Two rates: Newcombe's difference, MOVER-R ratios, references that contain the group
(``reference="overall"``), MOVER sums of independent differences.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from polfair.core.intervals.common import Interval, IntoFloat, Rate, staged
from polfair.core.intervals.proportions import rate_defined, wilson_interval

__all__ = [
    "mover_ratio_limits",
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
    lg, ug = wilson_interval(g, z)
    lr, ur = wilson_interval(r, z)
    d = g.p - r.p
    lo = d - ((g.p - lg) ** 2 + (ur - r.p) ** 2).sqrt()
    hi = d + ((ug - g.p) ** 2 + (r.p - lr) ** 2).sqrt()
    return staged(Interval(lo, hi))


def mover_ratio_limits(g: Rate, r: Rate, z: IntoFloat) -> Interval:
    """MOVER-R limits with an unbounded upper limit as +inf (when ``p_r = 0``)."""
    lg, ug = wilson_interval(g, z)
    lr, ur = wilson_interval(r, z)
    p1, p2 = g.p, r.p
    b = p1 * p2
    a_lo = lg * (2.0 * p1 - lg)
    c_lo = ur * (2.0 * p2 - ur)
    lo = a_lo / (b + (b * b - a_lo * c_lo).clip(lower_bound=0.0).sqrt())
    lo = pl.when(p1 <= 0.0).then(0.0).otherwise(lo)
    a_hi = ug * (2.0 * p1 - ug)
    c_hi = lr * (2.0 * p2 - lr)
    hi = (b + (b * b - a_hi * c_hi).clip(lower_bound=0.0).sqrt()) / c_hi
    hi = pl.when(p2 <= 0.0).then(float("inf")).otherwise(hi)
    ok = rate_defined(g) & rate_defined(r) & ((p1 > 0.0) | (p2 > 0.0))
    return staged(Interval(pl.when(ok).then(lo), pl.when(ok).then(hi)))


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
    lo, hi = mover_ratio_limits(g, r, z)
    return staged(Interval(pl.when(hi.is_finite()).then(lo), pl.when(hi.is_finite()).then(hi)))


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
    lo, hi = newcombe_interval(g, c, z)
    return staged(Interval((1.0 - f) * lo, (1.0 - f) * hi))


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
    lo, hi = mover_ratio_limits(g, c, z)

    def m(x: pl.Expr) -> pl.Expr:
        return pl.when(x.is_infinite()).then(1.0 / f).otherwise(x / (f * x + 1.0 - f))

    ok = f.is_not_null() & (f < 1.0)
    return staged(Interval(pl.when(ok).then(m(lo)), pl.when(ok).then(m(hi))))


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
    d = pl.sum_horizontal([e for e, _ in parts]) if len(parts) > 1 else parts[0][0]
    lo_sq = [(e - iv.lo) ** 2 for e, iv in parts]
    hi_sq = [(iv.hi - e) ** 2 for e, iv in parts]
    ok = pl.all_horizontal([e.is_not_null() & iv.lo.is_not_null() & iv.hi.is_not_null() for e, iv in parts])
    lo = d - (pl.sum_horizontal(lo_sq) if len(parts) > 1 else lo_sq[0]).sqrt()
    hi = d + (pl.sum_horizontal(hi_sq) if len(parts) > 1 else hi_sq[0]).sqrt()
    return staged(Interval(pl.when(ok).then(scale * lo), pl.when(ok).then(scale * hi)))


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
    parts = [(g.p - r.p, newcombe_interval(g, r, z)) for g, r in pairs]
    return mover_sum_interval(parts, 1.0 / len(pairs))


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
