"""Tests and multiplicity: distribution tails, Fisher's exact test, the two-proportion test
(Campbell's rule), the 2-df χ² test of two-part disparities, adjusted p-values.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import polars as pl
from scipy import special

from polfair.core.intervals.common import TEST_DTYPE, Rate, Test, check_p_adjust, staged
from polfair.core.intervals.proportions import rate_defined
from polfair.exceptions import PolfairError

__all__ = [
    "chi2_2df_test",
    "chi2_sf",
    "fisher_exact_two_sided",
    "p_adjust",
    "t_quantile",
    "t_sf",
    "two_proportion_test",
]

def chi2_sf(x: Any, df: Any) -> np.ndarray:
    """Survival function (upper tail) of the χ² distribution, vectorised: ``scipy.special.chdtrc``.

    Parameters
    ----------
    x
        Statistic(s) (array-like, Float64).
    df
        Degrees of freedom (array-like, broadcast with ``x``; positive, not necessarily integers).

    Returns
    -------
    numpy.ndarray
        Float64 p-values in [0, 1]: 1 where ``x ≤ 0``, 0 where ``x = +inf``; NaN where ``x`` is NaN or
        ``df ≤ 0``.

    Examples
    --------
    >>> round(float(chi2_sf(3.841458820694124, 1)), 12)
    0.05
    >>> abs(float(chi2_sf(2.0, 2)) - float(np.exp(-1.0))) < 1e-15
    True
    """
    x = np.asarray(x, dtype=np.float64)
    df = np.asarray(df, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        out = special.chdtrc(np.where(df > 0, df, np.nan), np.where(x > 0, x, 0.0))
    return np.where(np.isnan(x), np.nan, out)


def t_sf(t: Any, df: Any) -> Any:
    """Upper tail ``P(T > t)`` of Student's t with ``df > 0`` (``scipy.special.stdtr``; scalars or arrays).

    Raises
    ------
    PolfairError
        A ``df`` that is not positive.

    Examples
    --------
    >>> round(t_sf(2.093024054408263, 19), 10)
    0.025
    """
    dfa = np.asarray(df, dtype=np.float64)
    if np.any(dfa <= 0):
        msg = f"t_sf: df must be > 0, got {df}"
        raise PolfairError(msg)
    out = special.stdtr(dfa, -np.asarray(t, dtype=np.float64))
    return float(out) if np.ndim(out) == 0 else out


def t_quantile(q: Any, df: Any) -> Any:
    """Quantile of Student's t (``scipy.special.stdtrit``; scalars or arrays), for the jackknife's ``t_{G−1}``.

    Raises
    ------
    PolfairError
        ``q`` outside (0, 1) or a ``df`` that is not positive.

    Examples
    --------
    >>> round(t_quantile(0.975, 19), 6)
    2.093024
    >>> round(t_quantile(0.975, 1), 6)
    12.706205
    """
    qa, dfa = np.asarray(q, dtype=np.float64), np.asarray(df, dtype=np.float64)
    if np.any(~((qa > 0.0) & (qa < 1.0))):
        msg = f"t_quantile: q must be in (0, 1), got {q!r}"
        raise PolfairError(msg)
    if np.any(dfa <= 0):
        msg = f"t_quantile: df must be > 0, got {df!r}"
        raise PolfairError(msg)
    out = special.stdtrit(dfa, qa)
    return float(out) if np.ndim(out) == 0 else out


#: Relative band within which two hypergeometric probabilities count as equal in Fisher's test: wider than
#: the rounding of their float64 evaluation (about support × 2e-16), far below any real difference.
_FISHER_TIE = 1e-11


def fisher_exact_two_sided(x1: Any, n1: Any, x2: Any, n2: Any) -> np.ndarray:
    """Two-sided Fisher exact test of ``x1/n1`` vs ``x2/n2`` for many 2×2 tables at once (numpy).

    The p-value of ``scipy.stats.fisher_exact(alternative="two-sided")``: the hypergeometric
    probabilities (both margins fixed) of the observed table's tail and of the tables on the other
    side of the mode that are no more likely than it; 1 when the observed table is (as likely as)
    the mode or a margin is 0. Vectorised over tables: each table's probabilities over its support
    come from the ratio recurrence ``P(x+1)/P(x) = (n1 − x)(s − x) / ((x + 1)(n2 − s + x + 1))``
    (log space, normalised per table), for all tables at once in blocks of similar support length
    (a loop over ⌈log₂⌉ of the support length, never over tables). Probabilities equal to within
    1e-11 relative count as ties (scipy: 1e-14 on its own evaluation; the recurrence's rounding is
    about support × 2e-16), so exact ties are found whatever the rounding.

    Parameters
    ----------
    x1, n1, x2, n2
        Integer counts (array-like, broadcast; ``0 ≤ x ≤ n``).

    Returns
    -------
    numpy.ndarray
        Float64 p-values in (0, 1]; NaN where an input is missing or invalid.

    Notes
    -----
    Fisher (1935); the two-sided rule of scipy and R (tables no more probable than the observed
    one). Equal to ``scipy.stats.fisher_exact`` to 1e-12 (tested with hypothesis, ties included),
    and far faster on large margins (scipy evaluates each probability exactly, O(N) per value).

    Examples
    --------
    >>> round(float(fisher_exact_two_sided(1, 10, 8, 10)), 10)  # scipy 1.17: 0.005477494641581329
    0.0054774946
    >>> fisher_exact_two_sided([1, 0, 3], [10, 0, 6], [8, 2, 3], [10, 5, 6]).round(6).tolist()
    [0.005477, 1.0, 1.0]
    """
    arrs = np.broadcast_arrays(*(np.asarray(a, dtype=np.float64) for a in (x1, n1, x2, n2)))
    shape = arrs[0].shape
    a, na, b, nb = (np.ravel(v) for v in arrs)
    out = np.full(a.shape, np.nan)
    with np.errstate(invalid="ignore"):
        valid = np.isfinite(a) & np.isfinite(na) & np.isfinite(b) & np.isfinite(nb)
        valid &= (a >= 0) & (b >= 0) & (a <= na) & (b <= nb)
    a, na, b, nb = (np.round(v[valid]) for v in (a, na, b, nb))
    s, n = a + b, na + nb
    lo, hi = np.maximum(0.0, s - nb), np.minimum(s, na)
    p = np.ones(len(a))
    todo = np.flatnonzero((na > 0) & (nb > 0) & (s > 0) & (s < n) & (hi > lo))
    length = (hi - lo + 1.0)[todo]
    width = np.exp2(np.ceil(np.log2(length))).astype(np.int64)  # blocks of support length within a factor 2
    for w in np.unique(width).tolist():
        rows = todo[width == w]
        p[rows] = _fisher_block(a[rows], na[rows], nb[rows], s[rows], lo[rows], hi[rows], int(w))
    out[valid] = p
    return out.reshape(shape)


def _fisher_block(a: np.ndarray, na: np.ndarray, nb: np.ndarray, s: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                  width: int) -> np.ndarray:  # fmt: skip
    """Two-sided Fisher p-values of tables whose supports ``[lo, hi]`` fit in ``width`` columns."""
    j = np.arange(width, dtype=np.float64)
    x = lo[:, None] + j  # one row per table, its support padded to the width
    inside = x <= hi[:, None]
    xm = x[:, :-1]  # step from x to x + 1
    with np.errstate(divide="ignore", invalid="ignore"):
        step = np.log((na[:, None] - xm) * (s[:, None] - xm)) - np.log((xm + 1.0) * (nb[:, None] - s[:, None] + xm + 1.0))
    logp = np.zeros_like(x)
    np.cumsum(step, axis=1, out=logp[:, 1:])
    logp = np.where(inside, logp, -np.inf)
    logp -= logp.max(axis=1, keepdims=True)
    prob = np.exp(logp)
    prob /= prob.sum(axis=1, keepdims=True)
    rows = np.arange(len(a))
    obs = logp[rows, (a - lo).astype(np.int64)]
    # scipy's mode and its tie rule with the observed table
    mode = np.floor((s + 1.0) * (na + 1.0) / (na + nb + 2.0))
    at_mode = logp[rows, (mode - lo).astype(np.int64)] <= obs + _FISHER_TIE
    low_side = (a < mode)[:, None]
    tail = np.where(low_side, x <= a[:, None], x >= a[:, None])  # the observed table's tail
    other = np.where(low_side, x >= mode[:, None], x <= mode[:, None]) & (logp <= obs[:, None] + _FISHER_TIE)
    p = np.where(tail | other, prob, 0.0).sum(axis=1)
    return np.where(at_mode, 1.0, np.minimum(p, 1.0))


# ----------------------------------------------------------------------------------------------
# tests


def _pooled_z(g: Rate, r: Rate) -> tuple[pl.Expr, pl.Expr, pl.Expr]:
    """Pooled two-proportion z (null variance -> z = 0), the total size, and validity."""
    n1, n2 = g.n.cast(pl.Float64), r.n.cast(pl.Float64)
    tot = n1 + n2
    pp = (g.p * n1 + r.p * n2) / tot
    var = pp * (1.0 - pp) * (1.0 / n1 + 1.0 / n2)
    z = pl.when(var > 0).then((g.p - r.p) / var.sqrt()).otherwise(0.0)
    return z, tot, rate_defined(g) & rate_defined(r)


def _fisher_batch(s: pl.Series) -> pl.Series:
    flag = s.struct.field("flag").fill_null(False).to_numpy()
    out = np.full(len(s), np.nan)
    if flag.any():
        cols = [s.struct.field(c).to_numpy()[flag] for c in ("x1", "n1", "x2", "n2")]
        out[flag] = fisher_exact_two_sided(*cols)
    return pl.Series(out, dtype=pl.Float64)


def two_proportion_test(g: Rate, r: Rate, *, weighted: bool = False) -> Test:
    """p-value of H0 ``p_g = p_r`` (independent groups) and the test's name, as expressions.

    Unweighted (Campbell 2007): the "N−1" χ² ``z²·(N−1)/N`` with the pooled z, 1 df,
    ``p = erfc(√(χ²/2))`` (test ``"chi2_n1"``), unless the smallest expected count of the 2×2
    table is < 1, then the two-sided Fisher exact test (``"fisher"``; numpy, on those rows only,
    through ``map_batches`` inside the plan). Weighted: the pooled z with Kish effective sizes,
    ``p = erfc(|z|/√2)`` (``"z_ess"``; Fisher does not apply).

    Parameters
    ----------
    g, r
        The two :class:`Rate` s; unweighted, ``n`` are the row counts (``x = round(p̂·n)``).
    weighted
        Whether the rates are weighted.

    Returns
    -------
    Test
        ``p_value`` (Float64 in [0, 1]; 1 when both rates are 0 or both 1; null when a rate or
        size is undefined) and ``test`` (String).

    Notes
    -----
    Type-I error at 5% (exact enumeration, 8 scenarios down to 8 vs 8 rows): 1.6–5.3%; the plain
    pooled z reaches 7.7% with tiny expected counts, Fisher alone is very conservative (0.7%).
    The pooled z equals statsmodels ``proportions_ztest``; Fisher equals scipy ``fisher_exact``.

    Examples
    --------
    >>> import polars as pl
    >>> t = two_proportion_test(Rate(pl.col("p1"), pl.col("n1")), Rate(pl.col("p2"), pl.col("n2")))
    >>> df = pl.DataFrame({"p1": [0.2, 0.0], "n1": [50.0, 10.0], "p2": [0.4, 0.02], "n2": [50.0, 100.0]})
    >>> out = df.select(t.p_value.round(6).alias("p"), t.test.alias("test"))
    >>> out.rows()
    [(0.029913, 'chi2_n1'), (1.0, 'fisher')]
    """
    z, tot, ok = _pooled_z(g, r)
    if weighted:
        p = (z.abs() / math.sqrt(2.0)).erfc()
        return staged(Test(pl.when(ok).then(p.clip(0.0, 1.0)), pl.when(ok).then(pl.lit("z_ess", TEST_DTYPE))))
    stat = z * z * (tot - 1.0) / tot
    p = (stat / 2.0).sqrt().erfc().clip(0.0, 1.0)
    x1, x2 = (g.p * g.n).round(0), (r.p * r.n).round(0)
    succ = x1 + x2
    expected = pl.min_horizontal(g.n, r.n) * pl.min_horizontal(succ, tot - succ) / tot
    flag = ok & (expected < 1.0)
    fisher = pl.struct(
        x1.alias("x1"), g.n.round(0).alias("n1"), x2.alias("x2"), r.n.round(0).alias("n2"), flag.alias("flag")
    ).map_batches(_fisher_batch, return_dtype=pl.Float64)
    p_value = pl.when(ok).then(pl.when(flag).then(fisher).otherwise(p))
    test = pl.when(ok).then(pl.when(flag).then(pl.lit("fisher", TEST_DTYPE)).otherwise(pl.lit("chi2_n1", TEST_DTYPE)))
    return staged(Test(p_value, test))


def chi2_2df_test(pairs: Sequence[tuple[Rate, Rate]]) -> Test:
    """p-value of H0 "every pair of rates is equal" for independent parts (odds-based disparities).

    ``x = Σ z_i²`` with the pooled z of each pair (effective sizes when weighted) is χ² with
    ``m`` df under H0; for the two parts of equalized odds / average odds (TPR on positives,
    FPR on negatives) ``p = exp(−x/2)`` (test ``"chi2_2df"``). Type-I 4.0–5.0% at 5% in simulation.

    Examples
    --------
    >>> import polars as pl
    >>> r = lambda p, n: Rate(pl.lit(p), pl.lit(n))
    >>> t = chi2_2df_test([(r(0.5, 100.0), r(0.5, 100.0)), (r(0.2, 100.0), r(0.2, 100.0))])
    >>> pl.select(t.p_value.alias("p"), t.test.alias("test")).row(0)
    (1.0, 'chi2_2df')
    """
    zs = [_pooled_z(g, r) for g, r in pairs]
    x = pl.sum_horizontal([z * z for z, _, _ in zs])
    ok = pl.all_horizontal([o for _, _, o in zs])
    if len(pairs) == 2:
        p = (-x / 2.0).exp()
    else:
        p = x.map_batches(lambda s: pl.Series(chi2_sf(s.to_numpy(), len(pairs))), return_dtype=pl.Float64)
    return staged(Test(pl.when(ok).then(p), pl.when(ok).then(pl.lit("chi2_2df", TEST_DTYPE))))


def p_adjust(p: pl.Expr, method: Literal["bh", "by", "holm"] = "bh") -> pl.Expr:
    """Expression: multiplicity-adjusted p-values within a family; apply ``.over(family)``.

    ``"bh"``: Benjamini–Hochberg step-up (FDR), ``p_(i)·m/i`` with a reverse cumulative minimum;
    ``"by"``: Benjamini–Yekutieli (any dependence), BH times ``Σ_{j≤m} 1/j``; ``"holm"``: Holm's
    step-down (FWER), ``(m − i + 1)·p_(i)`` with a cumulative maximum. Clipped at 1; null p-values
    are skipped (``m`` counts the non-null ones) and stay null.

    Returns
    -------
    pl.Expr
        Float64. Equal to statsmodels ``multipletests`` (``fdr_bh``, ``fdr_by``, ``holm``).

    Notes
    -----
    Benjamini & Hochberg (1995); Benjamini & Yekutieli (2001); Holm (1979). In the report the
    family is (by value, row kind, metric): 29 groups vs a reference under the global null flag at least
    one group in 75.5% of audits at raw p < 0.05, in 5.4% with BH.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"f": ["a"] * 4, "p": [0.01, 0.04, 0.03, None]})
    >>> df.select(p_adjust(pl.col("p")).over("f").round(4)).to_series().to_list()
    [0.03, 0.04, 0.04, None]
    """
    check_p_adjust(method)
    p = p.cast(pl.Float64)
    m = p.count().cast(pl.Float64)
    idx = pl.int_range(1, pl.len() + 1, dtype=pl.Int64).cast(pl.Float64)
    s = p.sort(nulls_last=True)
    if method == "holm":
        adj = ((m - idx + 1.0) * s).cum_max()
    else:
        adj = (s * m / idx).reverse().cum_min().reverse()
        if method == "by":
            adj = adj * (1.0 / pl.int_range(1, m.cast(pl.Int64) + 1, dtype=pl.Int64).cast(pl.Float64)).sum()
    adj = adj.clip(upper_bound=1.0)
    return adj.gather((p.rank("ordinal") - 1).cast(pl.UInt32))
