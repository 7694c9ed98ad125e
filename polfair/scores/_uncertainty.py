"""Intervals and tests of the score report (internal to :mod:`polfair.scores.curves`).

Everything is arithmetic on the rolled-up score histogram (one row per group and score bin, scores
descending, with cumulative weights): no second pass. Methods (``docs/scores.md``):

* ``roc_auc`` — DeLong, DeLong & Clarke-Pearson (1988) on the binned scores: every score in a bin
  is a tie, so the structural components are constant per bin,
  ``V10(b) = (N_<b + ½N_b)/N`` for the positives of bin ``b`` and ``V01(b) = (P_>b + ½P_b)/P``
  for its negatives, and ``Var(AUC) = Σ_b Σw²_pos,b (V10(b) − A)² / P² · m/(m − 1) + (the same
  over negatives)`` with Kish's ``m = P²/Σw²`` (for unit weights exactly DeLong's
  ``S10/m + S01/n``). Interval ``A ± z·se`` truncated to [0, 1] (as R's pROC) where both Kish
  sizes are at least :data:`AUC_LARGE_CLASS` and it stays inside [0, 1]; elsewhere (small groups,
  the boundary, perfect separation where DeLong's variance is 0) each limit is the farther of
  DeLong's and Newcombe's (2006) score-type interval (:func:`newcombe_auc_interval`; ``ci_method``
  ``newcombe_score``). The difference to the reference is MOVER (Zou & Donner 2008) from the two
  intervals (for two DeLong intervals: the variances add), with the two-sided normal p-value on
  the standard error it implies (test ``delong``), floored at the exact rank bound
  ``2 / C(m + n, m)`` of the smaller group's rows (:func:`exact_rank_p_floor`).
* ``average_precision`` — the logit interval of Boyd, Eng & Page (2013), "Area under the
  precision-recall curve: point estimates and confidence intervals" (ECML PKDD):
  ``expit(logit(AP) ± z/√(m·AP(1 − AP)))``, ``m`` the (Kish) number of positives; at AP = 0 or 1
  (logit infinite) the Wilson interval with ``n = m``; the difference by MOVER (Zou & Donner
  2008) from the two groups' limits; no test.
* ``brier_score`` — a mean of ``q = (s − y)²``: Student t with ``ν = n_eff − 1`` and Welch's test
  for the difference (:func:`polfair.core.regression.welch_test`). ``Σw·q²`` is exact for exact
  histograms (one score per bin); for binned scores each (bin, label) cell adds the largest
  variance a variable on its range of ``q`` can have (Popoviciu: ``(q_max − q_min)²/4``), so the
  interval is conservative. Below ``2·AUC_LARGE_CLASS`` Kish rows, or with every ``q`` equal (a
  0-wide t interval), each limit is the farther of the t and the Wilson interval at
  ``(Brier, n_eff)`` (``Var(q) ≤ μ(1 − μ)``, Bhatia & Davis 2000; ``ci_method`` ``score``).
* ``abroca`` — percentile interval of a stratified bootstrap of the histogram: each group's
  (bin, label) cells are redrawn multinomially (its rows with replacement; a cell's replicate
  weight is its count times its mean weight), the reference group's once per replicate and shared
  by the groups compared with it; ``n_boot`` replicates, seeded per (``by`` value, attribute set)
  from ``seed`` (:func:`polfair.core.intervals.stable_hash`). ABROCA is an area between two noisy
  curves, biased upward in small groups: the interval describes the estimate's sampling
  variability, it does not test ABROCA = 0. The attribute row (the largest ABROCA of the set) takes
  the percentiles of the replicates' largest ABROCA.
* spreads on attribute rows (``difference`` = max − min of ``roc_auc``, ``average_precision``,
  ``brier_score``) — two groups: the difference interval of the pair through ``|·|``; more:
  Šidák-simultaneous group intervals (level ``ci^(1/k)``) projected through max − min
  (conservative, as the fairness report's spreads); test: Cochran's Q with the groups' variances
  (``roc_auc``: the variance the interval implies, ``((hi − lo)/2z)²``, and the smallest group's
  exact rank floor; ``brier_score``: Welch's heteroscedastic ANOVA).

``expected_calibration_error`` has no interval (null).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import polars as pl

from polfair.core import intervals as iv
from polfair.core.regression import welch_anova, welch_test

__all__ = [
    "AUC_LARGE_CLASS", "SCORE_CI_FLOATS", "abroca_batch", "auc_limits", "auc_variance_expr", "exact_rank_p_floor",
    "hanley_mcneil_variance", "mover_p_value", "newcombe_auc_interval", "score_intervals",
]  # fmt: skip

#: A variance of shares in [0, 1] below this is rounding: (16 ε)².
_ROUNDING_SQ = (16 * 2.0**-52) ** 2

#: Kish numbers of positives and of negatives from which a DeLong AUC interval inside [0, 1] is
#: used alone (below, or at the boundary, it is widened to Newcombe's score interval); twice it, the
#: Kish rows from which the Brier score's t interval is used alone (below: widened to Wilson's).
AUC_LARGE_CLASS = 50

#: The interval columns of the score report, after ``n`` (with ``ci``; then ``ci_method, test``).
SCORE_CI_FLOATS = ("value_lo", "value_hi", "difference_lo", "difference_hi", "p_value", "p_value_adjusted", "n_eff")


def _stats() -> Any:
    from scipy import stats

    return stats


def auc_variance_expr(P: pl.Expr, N: pl.Expr, auc: pl.Expr) -> list[pl.Expr]:
    """Aggregations (per group, over its bins: columns ``tp, fp`` cumulative descending, ``pos, neg,
    pos_w2, neg_w2``) of DeLong's variance of the AUC on binned scores, and the Kish sizes.

    Returns ``__pf_auc_var`` (Float64), ``__pf_m`` and ``__pf_nn`` (effective numbers of positives
    and negatives).
    """
    c = pl.col
    v10 = (N - c("fp") + 0.5 * c("neg")) / N  # share of negatives below a positive of the bin, ties ½
    v01 = (c("tp") - 0.5 * c("pos")) / P  # share of positives above a negative of the bin, ties ½
    sp2, sn2 = c("pos_w2").sum(), c("neg_w2").sum()
    m, n = P * P / sp2, N * N / sn2
    part_p = (c("pos_w2") * (v10 - auc) ** 2).sum() / (P * P) * m / (m - 1.0)
    part_n = (c("neg_w2") * (v01 - auc) ** 2).sum() / (N * N) * n / (n - 1.0)
    ok = (P > 0) & (N > 0) & (m > 1.0) & (n > 1.0)
    # the components are shares in [0, 1]: a variance below their squared rounding is 0 (a perfect
    # separation whose v10 − AUC rounds to 1e-16 must not get a positive variance in one row order only)
    var = part_p + part_n
    var = pl.when(var > _ROUNDING_SQ).then(var).otherwise(0.0)
    return [pl.when(ok).then(var).alias("__pf_auc_var"), m.alias("__pf_m"), n.alias("__pf_nn")]


def hanley_mcneil_variance(theta: np.ndarray, m: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Hanley & McNeil's (1982) variance of the AUC at ``theta``, symmetrised as Newcombe (2006).

    ``θ(1 − θ)/(m·n) · [1 + (N − 1)((1 − θ)/(2 − θ) + θ/(1 + θ))]``, ``N = (m + n)/2`` standing for
    both ``m`` and ``n`` in the bracket (Hanley & McNeil have ``m − 1`` and ``n − 1``): the variance
    of the Mann-Whitney estimate under their exponential model, 0 only at θ = 0 or 1.

    Parameters
    ----------
    theta, m, n
        Broadcastable float arrays: the AUC in [0, 1], the (effective) numbers of positives and
        negatives (> 0).

    Returns
    -------
    numpy.ndarray
        The variance (Float64).

    Examples
    --------
    >>> import numpy as np
    >>> round(float(hanley_mcneil_variance(np.array(0.5), np.array(10.0), np.array(10.0))), 6)
    0.0175
    """
    big_n = (m + n) / 2.0
    return theta * (1 - theta) / (m * n) * (1 + (big_n - 1) * ((1 - theta) / (2 - theta) + theta / (1 + theta)))


def newcombe_auc_interval(auc: np.ndarray, m: np.ndarray, n: np.ndarray, z: float) -> tuple[np.ndarray, np.ndarray]:
    """Score-type interval of the AUC (Newcombe 2006, part 2): every θ with ``(Â − θ)² ≤ z²·V(θ)``.

    ``V`` is :func:`hanley_mcneil_variance`; the limits solve ``(Â − θ)² = z²·V(θ)`` on [0, Â] and
    [Â, 1] (bisection, 60 halvings: to 1e-18). The interval lies in [0, 1] and keeps a positive
    width at Â = 0 or 1 (perfect separation): at Â = 1 its lower limit is below 1 by about
    ``z²·(N + 1)/(2·m·n)``.

    Parameters
    ----------
    auc, m, n
        (G,) float arrays: the AUCs, the (Kish) numbers of positives and negatives; NaN where
        undefined.
    z
        The normal quantile of the level.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        (G,) lower and upper limits; NaN where ``auc`` is NaN or ``m`` or ``n`` is not positive.

    Examples
    --------
    >>> import numpy as np
    >>> lo, hi = newcombe_auc_interval(np.array([1.0]), np.array([6.0]), np.array([2.0]), 1.959964)
    >>> bool(0.5 < lo[0] < 1.0), float(hi[0])
    (True, 1.0)
    """
    ok = np.isfinite(auc) & (m > 0) & (n > 0)
    a = np.where(ok, np.clip(auc, 0.0, 1.0), 0.5)
    mm, nn = np.where(ok, m, 1.0), np.where(ok, n, 1.0)

    def f(t: np.ndarray) -> np.ndarray:
        return (a - t) ** 2 - z * z * hanley_mcneil_variance(t, mm, nn)

    # lower limit: f(0) >= 0 >= f(Â), the root where f falls through 0; upper: f(Â) <= 0 <= f(1)
    l0, l1 = np.zeros_like(a), a.copy()
    u0, u1 = a.copy(), np.ones_like(a)
    for _ in range(60):
        lm, um = (l0 + l1) / 2, (u0 + u1) / 2
        lp, up = f(lm) > 0, f(um) > 0
        l0, l1 = np.where(lp, lm, l0), np.where(lp, l1, lm)
        u0, u1 = np.where(up, u0, um), np.where(up, um, u1)
    lo, hi = np.where(ok, l0, np.nan), np.where(ok, u1, np.nan)
    return np.where(ok & (a <= 0), 0.0, lo), np.where(ok & (a >= 1), 1.0, hi)


def auc_limits(
    auc: np.ndarray, var: np.ndarray, m: np.ndarray, n: np.ndarray, z: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The AUC interval: DeLong's ``Â ± z·se``; in small groups and at the boundary, widened to
    Newcombe's score interval where that reaches further.

    DeLong's interval is 0 wide at perfect separation and too narrow in small groups; Newcombe's
    (:func:`newcombe_auc_interval`, on the Kish sizes) never collapses, but knows nothing of ties
    or weights and is model-based (wider than DeLong's in large samples). So: DeLong's alone where
    both Kish sizes are at least :data:`AUC_LARGE_CLASS` and its interval stays inside [0, 1];
    elsewhere each limit is the farther of the two (the union of the intervals), and Newcombe's
    alone where DeLong's variance is undefined (one positive or negative).

    Returns
    -------
    (numpy.ndarray, numpy.ndarray, numpy.ndarray)
        (G,) lower and upper limits (not clipped: DeLong's may pass 0 or 1), and whether a limit
        came from Newcombe's interval.
    """
    nlo, nhi = newcombe_auc_interval(auc, m, n, z)
    se = np.sqrt(var)
    dlo, dhi = auc - z * se, auc + z * se
    have = np.isfinite(se)
    large = have & (m >= AUC_LARGE_CLASS) & (n >= AUC_LARGE_CLASS) & (dlo >= 0) & (dhi <= 1)
    nlo, nhi = np.where(large, np.nan, nlo), np.where(large, np.nan, nhi)
    lo = np.where(have, np.fmin(dlo, nlo), nlo)
    hi = np.where(have, np.fmax(dhi, nhi), nhi)
    widened = np.isfinite(nlo) & (~have | (nlo < dlo) | (nhi > dhi))
    return lo, hi, widened


def exact_rank_p_floor(pos_rows: np.ndarray, neg_rows: np.ndarray) -> np.ndarray:
    """The smallest two-sided p-value a rank (Mann-Whitney) test on a group's rows can reach.

    With ``m`` positive and ``n`` negative rows there are ``C(m + n, m)`` equally likely
    arrangements of the labels under exchangeability; the most extreme one has probability
    ``1 / C(m + n, m)`` one-sided, ``2 / C(m + n, m)`` two-sided (Mann & Whitney 1947). A test of a
    group's AUC cannot honestly report less: 6 and 2 rows, ``2/28 = 0.071``.

    Parameters
    ----------
    pos_rows, neg_rows
        (G,) numbers of rows (unweighted).

    Returns
    -------
    numpy.ndarray
        (G,) ``min(1, 2 / C(m + n, m))``; 1 where a class is empty.

    Examples
    --------
    >>> import numpy as np
    >>> exact_rank_p_floor(np.array([6.0]), np.array([2.0])).round(4).tolist()
    [0.0714]
    """
    from scipy.special import gammaln

    m, n = np.maximum(pos_rows, 0.0), np.maximum(neg_rows, 0.0)
    log_c = gammaln(m + n + 1) - gammaln(m + 1) - gammaln(n + 1)
    return np.minimum(1.0, np.exp(math.log(2.0) - log_c))


def mover_p_value(d: np.ndarray, lo: np.ndarray, hi: np.ndarray, z: float, floor: np.ndarray) -> np.ndarray:
    """Two-sided normal p-value of ``d = 0`` with the standard error the difference's interval
    implies on the side of 0 (``(d − lo)/z`` for ``d > 0``, ``(hi − d)/z`` below), floored at
    ``floor`` (:func:`exact_rank_p_floor`). For a symmetric (Wald) interval it is the Wald test.
    """
    st = _stats()
    with np.errstate(invalid="ignore", divide="ignore"):
        se = np.where(d >= 0, d - lo, hi - d) / z
        p = np.where(se > 0, 2 * st.norm.sf(np.abs(d) / se), np.where(d == 0, 1.0, np.nan))
    return np.where(np.isfinite(p), np.maximum(p, floor), np.nan)


def _curve_at(f: np.ndarray, t: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row: the curve's linear piece over each ``(a, b)`` evaluated at both ends.

    ``f, t`` are (R, K) ROC points (FPR non-decreasing per row, vertical steps allowed); ``a, b``
    (R, M) consecutive grid points of the merged grid. Just right of ``a`` the curve starts at its
    highest TPR at ``a``'s FPR; just left of ``b`` it ends before the next vertical step.
    """
    R, K = f.shape
    off = 2.0 * np.arange(R)[:, None]  # FPR in [0, 1]: an offset of 2 per row keeps rows apart, sorted
    flat = (f + off).ravel()
    k = np.searchsorted(flat, (a + off).ravel(), side="right").reshape(a.shape) - 1 - (np.arange(R) * K)[:, None]
    k = np.clip(k, 0, K - 2)
    rows = np.arange(R)[:, None]
    x0, x1, y0, y1 = f[rows, k], f[rows, k + 1], t[rows, k], t[rows, k + 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        slope = np.where(x1 > x0, (y1 - y0) / (x1 - x0), 0.0)
    return y0 + (a - x0) * slope, y0 + (b - x0) * slope


def abroca_batch(f1: np.ndarray, t1: np.ndarray, f2: np.ndarray, t2: np.ndarray) -> np.ndarray:
    """:func:`~polfair.scores.curves.area_between_roc_curves` of many curve pairs at once (one per row).

    Parameters
    ----------
    f1, t1, f2, t2
        (R, K1) and (R, K2) arrays of ROC points, each row from (0, 0) to (1, 1), FPR
        non-decreasing; NaN rows (a group without positives or negatives) give NaN.

    Returns
    -------
    numpy.ndarray
        (R,) areas, exact for piecewise-linear curves (crossings inside a piece split into two
        triangles).

    Examples
    --------
    >>> import numpy as np
    >>> f1, t1 = np.array([[0, 0.5, 1.0]]), np.array([[0, 0.75, 1.0]])
    >>> abroca_batch(f1, t1, np.array([[0, 1.0]]), np.array([[0, 1.0]])).tolist()
    [0.125]
    """
    bad = np.isnan(f1).any(axis=1) | np.isnan(t1).any(axis=1) | np.isnan(f2).any(axis=1) | np.isnan(t2).any(axis=1)
    f1, t1, f2, t2 = (np.nan_to_num(x) for x in (f1, t1, f2, t2))
    grid = np.sort(np.concatenate([f1, f2], axis=1), axis=1)
    a, b = grid[:, :-1], grid[:, 1:]
    s1, e1 = _curve_at(f1, t1, a, b)
    s2, e2 = _curve_at(f2, t2, a, b)
    d0, d1 = s1 - s2, e1 - e2
    a0, a1 = np.abs(d0), np.abs(d1)
    with np.errstate(invalid="ignore", divide="ignore"):
        cross = np.where(a0 + a1 > 0, (d0 * d0 + d1 * d1) / (2 * (a0 + a1)), 0.0)
    area = (np.where(d0 * d1 >= 0, (a0 + a1) / 2, cross) * (b - a)).sum(axis=1)
    return np.where(bad, np.nan, area)


def _replicate_curves(
    pos_n: np.ndarray, neg_n: np.ndarray, pos: np.ndarray, neg: np.ndarray, R: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """(R, K+1) FPR and TPR of ``R`` bootstrap replicates of one group (bins in descending score order)."""
    counts = np.concatenate([pos_n, neg_n]).astype(np.int64)
    total = int(counts.sum())
    K = len(pos_n)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_w = np.concatenate([np.where(pos_n > 0, pos / pos_n, 0.0), np.where(neg_n > 0, neg / neg_n, 0.0)])
    draws = rng.multinomial(total, counts / total, size=R) if total > 0 else np.zeros((R, 2 * K))
    wts = draws * mean_w
    tp, fp = np.cumsum(wts[:, :K], axis=1), np.cumsum(wts[:, K:], axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        P, N = tp[:, -1:], fp[:, -1:]
        tpr = np.where(P > 0, tp / np.where(P > 0, P, 1.0), np.nan)
        fpr = np.where(N > 0, fp / np.where(N > 0, N, 1.0), np.nan)
    zero = np.zeros((R, 1))
    return np.concatenate([zero, fpr], axis=1), np.concatenate([zero, tpr], axis=1)


def _percentile(x: np.ndarray, ci: float) -> tuple[float, float]:
    ok = x[np.isfinite(x)]
    if len(ok) < max(10, 0.9 * len(x)):  # too many replicates without a curve: no interval
        return math.nan, math.nan
    lo, hi = np.quantile(ok, [(1 - ci) / 2, (1 + ci) / 2])
    return float(lo), float(hi)


def _abroca_bootstrap(
    bins: pl.DataFrame, families: list[tuple[Any, list[int], int | None]], ci: float, n_boot: int, seed: int
) -> tuple[dict[int, tuple[float, float]], dict[Any, tuple[float, float]]]:
    """Percentile intervals of each group's ABROCA and of each family's largest ABROCA."""
    arrays: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}
    for (gid,), part in bins.group_by(["__pf_gid"], maintain_order=True):
        pn, nn, p, n = (part[c].to_numpy().astype(np.float64) for c in ("pos_n", "neg_n", "pos", "neg"))
        arrays[int(gid)] = (pn, nn, p, n)
    per_group: dict[int, tuple[float, float]] = {}
    per_family: dict[Any, tuple[float, float]] = {}
    for key, gids, ref in families:
        if ref is None or ref not in arrays:
            continue
        rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, iv.stable_hash(repr(key))])))
        fr, tr = _replicate_curves(*arrays[ref], n_boot, rng)
        reps = []
        for gid in gids:
            if gid == ref or gid not in arrays:
                continue
            fg, tg = _replicate_curves(*arrays[gid], n_boot, rng)
            a = abroca_batch(fg, tg, fr, tr)
            per_group[gid] = _percentile(a, ci)
            reps.append(a)
        if reps:
            stacked = np.vstack(reps)
            with np.errstate(invalid="ignore"):
                worst = np.where(np.isnan(stacked).any(axis=0), np.nan, stacked.max(axis=0))
            per_family[key] = _percentile(worst, ci)
    return per_group, per_family


def _brier_moments(c: pl.DataFrame) -> pl.DataFrame:
    """Per group: Σw·q² (q = (s − y)², conservative for binned scores), Σw² and n_eff."""
    col = pl.col
    lo, hi = col("score_min"), col("score_max")
    q_pos = (col("pos_score_sq") - 2 * col("pos_score") + col("pos")) / col("pos")  # mean (s − 1)² of the positives
    q_neg = col("neg_score_sq") / col("neg")
    r_pos = ((hi - 1) ** 2 - (lo - 1) ** 2).abs() / 2  # half the range of q over the bin: Popoviciu
    r_neg = (hi * hi - lo * lo).abs() / 2
    q2 = (
        pl.when(col("pos") > 0).then(col("pos") * (q_pos * q_pos + r_pos * r_pos)).otherwise(0.0)
        + pl.when(col("neg") > 0).then(col("neg") * (q_neg * q_neg + r_neg * r_neg)).otherwise(0.0)
    )
    return c.group_by("__pf_gid", maintain_order=True).agg(
        q2.sum().alias("__pf_q2"), (col("pos_w2") + col("neg_w2")).sum().alias("__pf_w2")
    )


def _logit_limits(ap: np.ndarray, m: np.ndarray, z: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
    """Boyd et al.'s logit interval; at AP = 0 or 1 (where the logit is infinite) the Wilson score
    interval with ``n = m``, to which the logit interval tends there (a positive width; the
    boundary rule of a rate).
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        ok = (ap > 0) & (ap < 1) & (m > 0)
        lg = np.log(ap / (1 - ap))
        h = z / np.sqrt(m * ap * (1 - ap))
        lo, hi = 1 / (1 + np.exp(-(lg - h))), 1 / (1 + np.exp(-(lg + h)))
    edge = ((ap == 0) | (ap == 1)) & (m > 0)
    wlo, whi = iv.wilson_limits(np.where(edge, ap, np.nan), np.where(edge, m, np.nan), z)
    return np.where(ok, lo, np.where(edge, wlo, np.nan)), np.where(ok, hi, np.where(edge, whi, np.nan))


def score_intervals(
    per: pl.DataFrame,
    c: pl.DataFrame,
    ref_gid: np.ndarray,
    families: list[tuple[Any, list[int], int | None]],
    *,
    ci: float,
    n_boot: int,
    seed: int,
) -> tuple[pl.DataFrame, dict[Any, dict[str, Any]]]:
    """The interval columns of every (group, metric) row and of the attribute rows.

    Parameters
    ----------
    per
        One row per group (``__pf_gid`` 0..G−1 in order; population rows included) with
        ``roc_auc``, ``average_precision``, ``brier_score``, ``__pf_auc_var``, ``__pf_m``,
        ``__pf_W``.
    c
        The cumulative histogram (per group and bin).
    ref_gid
        (G,) the reference group's gid of each group (−1: none, population rows).
    families
        ``(key, gids, reference gid)`` per (``by`` value, attribute set); key = (*by, attribute).

    Returns
    -------
    (pl.DataFrame, dict)
        Long rows ``__pf_gid, metric`` + :data:`SCORE_CI_FLOATS` (without ``p_value_adjusted``)
        + ``ci_method, test``; and per family key, per metric, the attribute row's columns.
    """
    st = _stats()
    G = per.height
    z = float(st.norm.ppf(0.5 + ci / 2))
    has_ref = ref_gid >= 0
    r = np.where(has_ref, ref_gid, 0)
    out: list[pl.DataFrame] = []

    def rows(metric: str, cols: dict[str, Any]) -> pl.DataFrame:
        data: dict[str, Any] = {"__pf_gid": np.arange(G, dtype=np.uint32), "metric": [metric] * G}
        for k, v in cols.items():
            data[k] = (pl.Series(k, v, dtype=pl.Float64, nan_to_null=True) if isinstance(v, np.ndarray)
                       else pl.Series(k, v, dtype=pl.String))  # fmt: skip
        return pl.DataFrame(data)

    # ---- ROC AUC: DeLong, widened to Newcombe's score interval; MOVER difference; floored p
    auc, v_auc = per["roc_auc"].to_numpy().astype(float), per["__pf_auc_var"].to_numpy().astype(float)
    m_k, n_k = per["__pf_m"].to_numpy().astype(float), per["__pf_nn"].to_numpy().astype(float)
    rows_pn = c.group_by("__pf_gid").agg(pl.col("pos_n").sum(), pl.col("neg_n").sum()).sort("__pf_gid")
    p_floor = exact_rank_p_floor(rows_pn["pos_n"].to_numpy().astype(float), rows_pn["neg_n"].to_numpy().astype(float))
    a_lo, a_hi, a_newc = auc_limits(auc, v_auc, m_k, n_k, z)
    own = has_ref & (ref_gid == np.arange(G))
    d = np.where(has_ref, auc - auc[r], np.nan)
    with np.errstate(invalid="ignore"):
        dlo = d - np.sqrt((auc - a_lo) ** 2 + (a_hi[r] - auc[r]) ** 2)  # MOVER (Zou & Donner 2008)
        dhi = d + np.sqrt((a_hi - auc) ** 2 + (auc[r] - a_lo[r]) ** 2)
    p = mover_p_value(d, dlo, dhi, z, np.maximum(p_floor, p_floor[r]))
    none = own | ~np.isfinite(d) | ~np.isfinite(dlo) | ~np.isfinite(dhi)
    out.append(rows("roc_auc", {
        "value_lo": np.clip(a_lo, 0, 1), "value_hi": np.clip(a_hi, 0, 1),
        "difference_lo": np.where(none, np.nan, dlo), "difference_hi": np.where(none, np.nan, dhi),
        "p_value": np.where(none, np.nan, p), "n_eff": m_k,
        "ci_method": [None if not np.isfinite(x) else "newcombe_score" if w else "delong" for x, w in zip(a_lo, a_newc)],
        "test": [None if (x or not np.isfinite(q)) else "delong" for x, q in zip(none, p)],
    }))  # fmt: skip
    # the interval's standard error (half its width / z): the spreads' and Cochran's Q's variance
    v_auc_ci = ((a_hi - a_lo) / (2 * z)) ** 2
    # ---- average precision: Boyd et al.'s logit interval, MOVER difference
    ap, m = per["average_precision"].to_numpy().astype(float), per["__pf_m"].to_numpy().astype(float)
    lo, hi = _logit_limits(ap, m, z)
    dap = np.where(has_ref, ap - ap[r], np.nan)
    dlo = dap - np.sqrt((ap - lo) ** 2 + (hi[r] - ap[r]) ** 2)
    dhi = dap + np.sqrt((hi - ap) ** 2 + (ap[r] - lo[r]) ** 2)
    none_ap = own | ~np.isfinite(dap)
    out.append(rows("average_precision", {
        "value_lo": lo, "value_hi": hi, "difference_lo": np.where(none_ap, np.nan, dlo),
        "difference_hi": np.where(none_ap, np.nan, dhi), "n_eff": m,
        "ci_method": [None if not np.isfinite(x) else "logit" if 0 < a < 1 else "score" for x, a in zip(lo, ap)],
    }))  # fmt: skip
    # ---- Brier score: a mean; t interval, Welch difference
    bm = _brier_moments(c).sort("__pf_gid")
    brier = per["brier_score"].to_numpy().astype(float)
    W = per["__pf_W"].to_numpy().astype(float)
    w2 = bm["__pf_w2"].to_numpy().astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        neff = np.where(w2 > 0, W * W / w2, np.nan)
        q2 = bm["__pf_q2"].to_numpy() / W
        var_w = q2 - brier * brier  # raw moments of q in [0, 1]: below their rounding, 0 in any row order
        var_w = np.where(var_w > 16 * np.finfo(float).eps * q2, var_w, 0.0)
        dfb = neff - 1
        vb = np.where(dfb > 0, var_w / dfb, np.nan)
        tq = st.t.ppf(0.5 + ci / 2, dfb)
    okb = np.isfinite(brier) & np.isfinite(vb)
    # q is in [0, 1], so Var(q) <= μ(1 − μ) (Bhatia & Davis 2000): the Wilson score interval at (Brier,
    # n_eff) is conservative. Where every q is equal (perfect 0/1 scores) the t interval is 0 wide, and in
    # small groups its skewed q makes it too narrow (41% coverage for 8 rows at AUC 0.99, bench/results.md):
    # there each limit is the farther of the t and the Wilson limits
    small = okb & ((vb <= 0) | (neff < 2 * AUC_LARGE_CLASS))
    wblo, wbhi = iv.wilson_limits(np.where(small, brier, np.nan), np.where(small, neff, np.nan), z)
    with np.errstate(invalid="ignore"):
        tlo = np.where(vb > 0, np.maximum(brier - tq * np.sqrt(vb), 0.0), brier)
        thi = np.where(vb > 0, np.minimum(brier + tq * np.sqrt(vb), 1.0), brier)
    flat = small & ((wblo < tlo) | (wbhi > thi))  # a Wilson limit is the farther one
    db, vdb, nub, pb = welch_test(brier, vb, dfb, brier[r], vb[r], dfb[r])
    with np.errstate(invalid="ignore"):
        hb = st.t.ppf(0.5 + ci / 2, nub) * np.sqrt(vdb)
    none_b = own | ~has_ref | ~np.isfinite(db)
    out.append(rows("brier_score", {
        "value_lo": np.where(okb, np.where(small, np.fmin(tlo, wblo), tlo), np.nan),
        "value_hi": np.where(okb, np.where(small, np.fmax(thi, wbhi), thi), np.nan),
        "difference_lo": np.where(none_b, np.nan, db - hb), "difference_hi": np.where(none_b, np.nan, db + hb),
        "p_value": np.where(none_b, np.nan, pb), "n_eff": np.where(okb, neff, np.nan),
        "ci_method": ["score" if f else "t" if x else None for x, f in zip(okb, flat)],
        "test": [None if (x or not np.isfinite(q)) else "welch" for x, q in zip(none_b, pb)],
    }))  # fmt: skip
    # ---- ABROCA: stratified bootstrap percentiles
    per_group, per_family = _abroca_bootstrap(
        c.select("__pf_gid", "pos_n", "neg_n", "pos", "neg"), families, ci, n_boot, seed
    )
    ab_lo = np.array([per_group.get(g, (math.nan, math.nan))[0] for g in range(G)])
    ab_hi = np.array([per_group.get(g, (math.nan, math.nan))[1] for g in range(G)])
    out.append(rows("abroca", {
        "value_lo": ab_lo, "value_hi": ab_hi,
        "ci_method": ["bootstrap_percentile" if np.isfinite(x) else None for x in ab_lo],
    }))  # fmt: skip
    # ---- attribute rows: spreads (projection / pair), tests; the largest ABROCA
    attr: dict[Any, dict[str, Any]] = {}
    for key, gids, _ in families:
        g = np.array(gids, dtype=np.int64)
        fam: dict[str, Any] = {}
        lo_, hi_ = per_family.get(key, (math.nan, math.nan))
        fam["abroca"] = {"value_lo": lo_, "value_hi": hi_,
                         "ci_method": "bootstrap_percentile" if math.isfinite(lo_) else None}  # fmt: skip
        fam["roc_auc"] = _spread(auc[g], v_auc_ci[g], None, ci, "normal", p_floor=float(p_floor[g].max()))
        fam["brier_score"] = _spread(brier[g], vb[g], dfb[g], ci, "t")
        fam["average_precision"] = _spread(ap[g], None, m[g], ci, "logit")
        attr[key] = fam
    return pl.concat(out, how="diagonal_relaxed"), attr


def _limits(est: np.ndarray, var: np.ndarray | None, df: np.ndarray | None, level: float, kind: str
            ) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    st = _stats()
    if kind == "logit":
        return _logit_limits(est, df, float(st.norm.ppf(0.5 + level / 2)))  # type: ignore[arg-type]
    q = st.norm.ppf(0.5 + level / 2) if kind == "normal" else st.t.ppf(0.5 + level / 2, df)
    h = q * np.sqrt(var)  # type: ignore[arg-type]
    return est - h, est + h


def _spread(est: np.ndarray, var: np.ndarray | None, df: np.ndarray | None, ci: float, kind: str,
            p_floor: float = 0.0) -> dict[str, Any]:  # fmt: skip
    """Interval of max − min over the groups where the metric (and its interval) is defined, and a
    test (its p-value no smaller than ``p_floor``, :func:`exact_rank_p_floor` of the smallest group).
    """
    st = _stats()
    ok = np.isfinite(est) & (np.isfinite(var) if var is not None else True) & (np.isfinite(df) if df is not None else True)
    e = est[ok]
    v = var[ok] if var is not None else None
    f = df[ok] if df is not None else None
    k = len(e)
    out: dict[str, Any] = {"difference_lo": math.nan, "difference_hi": math.nan, "p_value": math.nan,
                           "ci_method": None, "test": None}  # fmt: skip
    if k < 2:
        return out
    if k == 2:  # the pair: the difference interval of larger − smaller, through |·|
        a, b = int(np.argmax(e)), int(np.argmin(e))
        if a == b:
            a, b = 0, 1
        if kind == "logit":
            la, ha = _logit_limits(e[[a]], f[[a]], float(st.norm.ppf(0.5 + ci / 2)))  # type: ignore[index]
            lb, hb = _logit_limits(e[[b]], f[[b]], float(st.norm.ppf(0.5 + ci / 2)))  # type: ignore[index]
            dd = e[a] - e[b]
            lo = float(dd - math.sqrt((e[a] - la[0]) ** 2 + (hb[0] - e[b]) ** 2))
            hi = float(dd + math.sqrt((ha[0] - e[a]) ** 2 + (e[b] - lb[0]) ** 2))
        else:
            vv = v[a] + v[b]  # type: ignore[index]
            if kind == "t":
                nu = welch_test(e[[a]], v[[a]], f[[a]], e[[b]], v[[b]], f[[b]])[2][0]  # type: ignore[index]
                q = float(st.t.ppf(0.5 + ci / 2, nu))
            else:
                q = float(st.norm.ppf(0.5 + ci / 2))
            lo, hi = e[a] - e[b] - q * math.sqrt(vv), e[a] - e[b] + q * math.sqrt(vv)
        if math.isfinite(lo) and math.isfinite(hi):
            out["difference_lo"] = 0.0 if lo <= 0 <= hi else min(abs(lo), abs(hi))
            out["difference_hi"] = max(abs(lo), abs(hi))
    else:  # Šidák-simultaneous limits projected through max − min
        lo_, hi_ = _limits(e, v, f, ci ** (1.0 / k), kind)
        if np.all(np.isfinite(lo_)) and np.all(np.isfinite(hi_)):
            out["difference_lo"] = max(0.0, float(lo_.max() - hi_.min()))
            out["difference_hi"] = float(hi_.max() - lo_.min())
    out["ci_method"] = "projection"
    if kind == "normal" and v is not None and np.all(v > 0):  # Cochran's Q with the DeLong variances
        w = 1 / v
        mbar = (w * e).sum() / w.sum()
        q = float(st.chi2.sf((w * (e - mbar) ** 2).sum(), k - 1))
        out["p_value"], out["test"] = max(q, p_floor), "cochran_q"
    elif kind == "t" and v is not None:
        p = welch_anova(e, v, f)[3]  # type: ignore[arg-type]
        if math.isfinite(p):
            out["p_value"], out["test"] = p, "welch_anova"
    return out

