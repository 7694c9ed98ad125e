r"""Between-group variance of a rate, corrected for sampling noise (Lum, Zhang & Bower 2022).

The spread of group rates (max − min, the variance across groups) is biased upward by sampling
noise alone: with many small groups, equal true rates look unequal. Lum, Zhang & Bower, "De-biasing
'bias' measurement" (FAccT 2022, arXiv:2205.05770, section 5) remove the bias from the variance:

* the target: the variance of the groups' *true* rates, ``V = Σ_k (p_k − p̄)² / (K − 1)``,
  ``p̄ = Σ_k p_k / K`` (each group counts once, whatever its size);
* the naive estimate ``V̂ = Σ_k (p̂_k − mean p̂)² / (K − 1)`` has ``E[V̂] = V + Σ_k σ_k² / K``
  (``σ_k²`` the sampling variance of ``p̂_k``): noise adds to it;
* the plug-in ``p̂(1 − p̂)/n`` underestimates ``σ_k² = p(1 − p)/n`` by the factor ``(n − 1)/n``;
  ``σ̂_k² = p̂_k(1 − p̂_k)/(n_k − 1)`` is unbiased. Correcting for both ("double-corrected"):

  .. math:: \hat V_{dc} = \frac{1}{K-1}\sum_k (\hat p_k - \bar{\hat p})^2
            - \frac{1}{K}\sum_k \frac{\hat p_k(1-\hat p_k)}{n_k - 1},

  exactly unbiased for independent binomial groups (``E[V̂_dc] = V``). It can be negative (the
  groups differ less than noise alone would make them): it is reported as computed, unbiased.

Its interval inverts a test: ``V`` is in it when the observed plain variance ``V̂`` lies in the
central ``1 − α`` of its law under ``V``, taken as a scaled χ² (Satterthwaite 1946) with ``V̂``'s
mean ``V + Σσ_k²/K`` and its variance as a quadratic form in independent, approximately normal
rates, ``Var(x'Ax) = 2 tr((AΣ)²) + 4 μ'AΣAμ`` (``A = (I − J/K)/(K − 1)``, ``Σ = diag(σ_k²)``,
``μ'AΣAμ ≈ r·V/(K − 1)``, ``r`` the deviation-weighted mean of ``σ̂_k²``), ``σ_k²`` by ``σ̂_k²``.
Both limits lie in ``[0, K/(4(K − 1))]`` (the largest variance of K rates); the skewed law keeps
the interval honest where noise dominates (a Wald interval there covers 82-87%). With two groups
``V = (p₁ − p₂)²/2`` exactly, and its limits are Newcombe's (1998) interval of the difference
through ``|·|``, squared and halved (as the report's two-group spreads). Weighted rows: ``n_k`` is the
Kish effective size of the rate's denominator (approximately unbiased). Groups whose rate is
undefined or whose ``n_k ≤ 1`` (no variance estimate) are left out; fewer than two left: null.
"""

from __future__ import annotations

import numpy as np

from polfair.core.intervals.common import Segments
from polfair.core.intervals.differences import newcombe_limits

__all__ = ["between_group_variance", "chi2_cdf"]


def between_group_variance(
    p: np.ndarray, n: np.ndarray, seg: Segments, z: float | None = None
) -> dict[str, np.ndarray]:
    """Lum, Zhang & Bower's double-corrected between-group variance of a rate, per family (numpy).

    Parameters
    ----------
    p
        (rows,) Float64: each group's rate; NaN where undefined.
    n
        (rows,) Float64: the (Kish effective) size of each rate's denominator.
    seg
        Each group row's family (:class:`~polfair.core.intervals.common.Segments`: the groups of one
        attribute row).
    z
        The normal quantile of the interval's level; ``None``: no interval.

    Returns
    -------
    dict[str, numpy.ndarray]
        Per family (``seg.count``,) Float64: ``value`` (the corrected variance; NaN with fewer
        than two usable groups), ``naive`` (the plain variance ``V̂`` of the same groups), ``k``
        (the number of groups used), and with ``z`` ``lo`` and ``hi`` (the Wald limits floored at 0).

    Notes
    -----
    Formulas: the module docstring. Lum, K., Zhang, Y. & Bower, A. (2022), De-biasing "bias"
    measurement, FAccT 2022, doi:10.1145/3531146.3533105, section 5.

    Examples
    --------
    >>> import numpy as np
    >>> from polfair.core.intervals.common import Segments
    >>> out = between_group_variance(np.array([0.2, 0.4, 0.6]), np.array([11.0, 11.0, 11.0]), Segments(np.zeros(3), 1))
    >>> round(float(out["naive"][0]), 6), round(float(out["value"][0]), 6)
    (0.04, 0.018667)
    """
    p = np.asarray(p, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    ok = np.isfinite(p) & np.isfinite(n) & (n > 1)
    x = np.where(ok, p, 0.0)
    one = ok.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        s2 = np.where(ok, x * (1 - x) / (n - 1), 0.0)  # σ̂_k², unbiased for p(1 − p)/n
        k = seg.total(one)
        mean = seg.total(x) / k
        dev = np.where(ok, x - mean[seg.codes], 0.0)
        naive = seg.total(dev * dev) / (k - 1)
        sum_s2 = seg.total(s2)
        value = naive - sum_s2 / k
        usable = k >= 2
        out = {"value": np.where(usable, value, np.nan), "naive": np.where(usable, naive, np.nan), "k": k}
        if z is not None:
            # the noise term is itself estimated: Var(σ̂_k²) ≈ (1 − 2p)²·p(1 − p)/n / (n − 1)² (delta method)
            var_noise = seg.total(np.where(ok, (1 - 2 * x) ** 2 * x * (1 - x) / (n - 1) ** 3, 0.0)) / (k * k)
            two = usable & (k == 2)
            lo, hi = _scaled_chi2_limits(naive, sum_s2 / k, s2, dev, seg, k, z, var_noise, usable & ~two)
            if two.any():  # two groups: V = (p₁ − p₂)²/2 exactly; Newcombe's interval of the difference, squared
                plo, phi = _pair_limits(p, n, ok, seg, z)
                lo, hi = np.where(two, plo, lo), np.where(two, phi, hi)
            out["lo"] = np.where(usable, lo, np.nan)
            out["hi"] = np.where(usable, hi, np.nan)
    return out


def _scaled_chi2_limits(
    naive: np.ndarray, noise: np.ndarray, s2: np.ndarray, dev: np.ndarray, seg: Segments, k: np.ndarray, z: float,
    var_noise: np.ndarray, kept: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Limits of ``V``: the values whose scaled χ² law of the plain variance (Satterthwaite) puts the
    observed one inside its central ``1 − α`` (test inversion; bisection, 60 halvings, all families at once).

    Under ``V``, ``V̂`` has mean ``V + Σσ²/K`` and (normal rates) variance
    ``2 tr((AΣ)²) + 4 μ'AΣAμ``, ``μ'AΣAμ ≈ r·V/(K − 1)`` with ``r = Σσ̂²(x − x̄)² / Σ(x − x̄)²``;
    it is taken as ``c·χ²_ν`` with that mean and variance. With ``kept`` (the families whose limits
    the caller keeps), only those whose limit is not at an end of ``[0, top]`` are bisected: every
    step is elementwise, so their limits are the same floats as when every family is (``None``).
    """
    from scipy import stats

    with np.errstate(invalid="ignore", divide="ignore"):
        km1 = k - 1
        tr = ((1 - 2 / k) * seg.total(s2 * s2) + (noise * k) ** 2 / (k * k)) / (km1 * km1)
        ss = seg.total(dev * dev)
        r = np.where(ss > 0, seg.total(s2 * dev * dev) / ss, noise)
        alpha = 2 * stats.norm.sf(z)

        every = (noise, 2 * tr, 4 * r, km1, var_noise, naive)  # each family's constants of _cdf
        top = k / (4 * km1)  # the largest variance of K numbers in [0, 1]
        at_zero, at_top = _cdf(np.zeros_like(naive), *every), _cdf(top, *every)
        targets = (1 - alpha / 2, alpha / 2)  # the cdf falls as V grows: lower limit, then upper
        inners = [np.arange(naive.size) if kept is None
                  else np.flatnonzero(kept & ~(at_zero <= target) & ~(at_top >= target)) for target in targets]  # fmt: skip
        # both limits bisected together (one cdf call per halving), each family's constants taken once
        at = np.concatenate(inners)
        goal = np.concatenate([np.full(i.size, t) for t, i in zip(targets, inners)])
        constants = tuple(c[at] for c in every)
        a, b = np.zeros(at.size), top[at]
        for _ in range(60):
            mid = (a + b) / 2
            above = _cdf(mid, *constants) > goal
            a, b = np.where(above, mid, a), np.where(above, b, mid)
        out = []
        for j, (target, inner) in enumerate(zip(targets, inners)):
            start = inners[0].size if j else 0
            bisected = np.full_like(naive, np.nan)
            bisected[inner] = (a[start : start + inner.size] + b[start : start + inner.size]) / 2
            out.append(np.where(at_zero <= target, 0.0, np.where(at_top >= target, top, bisected)))
    return out[0], out[1]


def _cdf(v: np.ndarray, noise: np.ndarray, tr2: np.ndarray, r4: np.ndarray, km1: np.ndarray, var_noise: np.ndarray,
         naive: np.ndarray) -> np.ndarray:  # fmt: skip
    """P(V̂ <= naive | V = v) under the scaled χ² law of :func:`_scaled_chi2_limits` (``tr2 = 2·tr``, ``r4 = 4·r``)."""
    mean = v + noise
    var = tr2 + r4 * v / km1 + var_noise
    scale = np.where(var > 0, var / (2 * mean), 1.0)
    nu = np.where(var > 0, 2 * mean * mean / var, 1e12)
    return chi2_cdf(naive / scale, nu)


def chi2_cdf(x: np.ndarray, df: np.ndarray) -> np.ndarray:
    """``scipy.stats.chi2.cdf(x, df)``, the same floats: where every ``x`` is inside the support
    ``(0, ∞)`` and every ``df > 0``, scipy's own kernel (``scipy.special.chdtr``) directly, without the
    distribution's argument checks and masks of each of the bisection's 120 calls; otherwise scipy's.

    >>> from scipy import stats
    >>> x, df = np.array([0.5, 3.0, 40.0]), np.array([1.0, 2.5, 30.0])
    >>> bool(np.array_equal(chi2_cdf(x, df), stats.chi2.cdf(x, df)))
    True
    """
    from scipy import special, stats

    x, df = np.broadcast_arrays(np.asarray(x, dtype=np.float64), np.asarray(df, dtype=np.float64))
    if x.size and bool(np.all((x > 0) & (x < np.inf) & (df > 0))):
        return np.asarray(special.chdtr(df, x))
    return np.asarray(stats.chi2.cdf(x, df))


def _pair_limits(
    p: np.ndarray, n: np.ndarray, ok: np.ndarray, seg: Segments, z: float
) -> tuple[np.ndarray, np.ndarray]:
    """Per family with two usable groups: ``V = d²/2`` with ``d = p₁ − p₂``, its limits from Newcombe's
    (1998) interval of ``d`` through ``|·|`` and ``x ↦ x²/2`` (NaN elsewhere).
    """
    idx = np.flatnonzero(ok)
    codes = seg.codes[idx]
    order = np.argsort(codes, kind="stable")
    idx, codes = idx[order], codes[order]
    first = np.r_[True, codes[1:] != codes[:-1]]
    last = np.r_[codes[1:] != codes[:-1], True]
    a, b = idx[first], idx[last]  # a family's first and last usable group (the same when it has one)
    fam = codes[first]
    lo, hi = newcombe_limits(p[a], n[a], p[b], n[b], z)
    low = np.where((lo <= 0) & (hi >= 0), 0.0, np.minimum(np.abs(lo), np.abs(hi)))
    high = np.maximum(np.abs(lo), np.abs(hi))
    out_lo, out_hi = np.full(seg.count, np.nan), np.full(seg.count, np.nan)
    out_lo[fam], out_hi[fam] = low * low / 2, high * high / 2
    return out_lo, out_hi
