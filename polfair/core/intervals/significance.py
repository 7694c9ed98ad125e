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

from polfair.core.intervals.common import TEST_DTYPE, TESTS, Rate, Test, check_p_adjust, numpy_expr, staged
from polfair.core.intervals.proportions import defined
from polfair.exceptions import PolfairError

__all__ = [
    "chi2_2df_pvalues",
    "chi2_pooled_pvalues",
    "pooled_z",
    "two_proportion_pvalues",
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
#: Above this many tables, :func:`fisher_exact_two_sided` evaluates each distinct table once (below, finding
#: them costs more than the repeats; a table's p-value does not depend on the tables evaluated with it).
_FISHER_DEDUPE = 64


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
    # many tables repeat (a 160,000-level attribute has a handful of distinct small tables per rate):
    # each distinct table once
    if a.size > _FISHER_DEDUPE and max(na.max(), nb.max()) < 2**31:  # integer keys: (x, n) of each group, then the pair
        sa, sb = int(na.max()) + 1, int(nb.max()) + 1
        k1 = a.astype(np.int64) * sa + na.astype(np.int64)  # (x, n) of each side: < sa² and < sb²
        k2 = b.astype(np.int64) * sb + nb.astype(np.int64)
        if sa * sa * sb * sb < 2**62:  # the pair as one integer key: one sort
            key = k1 * (sb * sb) + k2
        else:  # number each side's distinct (x, n) first
            g1, g2 = np.unique(k1, return_inverse=True)[1].reshape(-1), np.unique(k2, return_inverse=True)[1].reshape(-1)
            key = g1 * (int(g2.max()) + 1) + g2
        first, back = _distinct(key)
        if first.size < a.size:
            out[valid] = fisher_exact_two_sided(a[first], na[first], b[first], nb[first])[back.reshape(-1)]
            return out.reshape(shape)
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


def _distinct(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(key, return_index=True, return_inverse=True)[1:]`` of non-negative int64 keys: each
    distinct key's first position (in key order) and each key's distinct number; by a lookup table
    (no sort) when the keys' range is at most a few times their number.
    """
    top = int(key.max()) + 1 if key.size else 0
    if top > 4 * key.size + 1024:
        first, back = np.unique(key, return_index=True, return_inverse=True)[1:]
        return first, back.reshape(-1)
    pos = np.full(top, key.size, dtype=np.int64)
    np.minimum.at(pos, key, np.arange(key.size, dtype=np.int64))  # each key's first position
    seen = pos < key.size
    number = np.cumsum(seen) - 1  # distinct keys numbered in key order
    return pos[seen], number[key]


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
    p, code = numpy_expr(lambda *a: two_proportion_pvalues(*a, weighted=weighted), [g.p, g.n, r.p, r.n], ("p", "test"))
    return staged(Test(p, _test_names(code)))


def _test_names(code: pl.Expr) -> pl.Expr:
    """The test names (Enum) of test codes (indices into ``TESTS``; null where untested)."""
    return code.cast(pl.Int64).replace_strict(list(range(len(TESTS))), list(TESTS), default=None, return_dtype=TEST_DTYPE)


def pooled_z(pg: np.ndarray, ng: np.ndarray, pr: np.ndarray, nr: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pooled two-proportion z (0 where the pooled variance is 0), the total size and validity, on arrays.

    Examples
    --------
    >>> [round(float(v), 4) for v in pooled_z(np.array(0.2), np.array(50.0), np.array(0.4), np.array(50.0))[:2]]
    [-2.1822, 100.0]
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        tot = ng + nr
        pp = (pg * ng + pr * nr) / tot
        var = pp * (1.0 - pp) * (1.0 / ng + 1.0 / nr)
        z = np.where(var > 0, (pg - pr) / np.sqrt(var), 0.0)
    return z, tot, defined(pg, ng) & defined(pr, nr)


def two_proportion_pvalues(pg: Any, ng: Any, pr: Any, nr: Any, *, weighted: bool = False,
                           pooled: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """:func:`two_proportion_test` on arrays: p-values and test codes (indices into ``TESTS``; NaN: untested).

    Fisher's exact test runs on the rows with an expected count below 1 only, all at once.
    ``pooled``: :func:`pooled_z` of the same arrays, if already computed.

    Examples
    --------
    >>> p, code = two_proportion_pvalues(np.array([0.2, 0.0]), np.array([50.0, 10.0]), np.array([0.4, 0.02]),
    ...                                  np.array([50.0, 100.0]))
    >>> np.round(p, 6).tolist(), [TESTS[int(c)] for c in code]
    ([0.029913, 1.0], ['chi2_n1', 'fisher'])
    """
    pg, ng, pr, nr = (np.asarray(v, dtype=np.float64) for v in (pg, ng, pr, nr))
    z, tot, ok = pooled if pooled is not None else pooled_z(pg, ng, pr, nr)
    if weighted:
        p = np.clip(special.erfc(np.abs(z) / math.sqrt(2.0)), 0.0, 1.0)
        return np.where(ok, p, np.nan), np.where(ok, float(TESTS.index("z_ess")), np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        stat = z * z * (tot - 1.0) / tot
        x1, x2 = np.round(pg * ng), np.round(pr * nr)
        succ = x1 + x2
        expected = np.minimum(ng, nr) * np.minimum(succ, tot - succ) / tot
        flag = ok & (expected < 1.0)
        if flag.any():  # the χ² tail of the other rows only (the same values: elementwise)
            p = np.empty(np.shape(stat))
            chi = ~flag
            p[chi] = np.clip(special.erfc(np.sqrt(stat[chi] / 2.0)), 0.0, 1.0)
            p[flag] = fisher_exact_two_sided(x1[flag], np.round(ng[flag]), x2[flag], np.round(nr[flag]))
        else:
            p = np.clip(special.erfc(np.sqrt(stat / 2.0)), 0.0, 1.0)
    code = np.where(flag, float(TESTS.index("fisher")), float(TESTS.index("chi2_n1")))
    return np.where(ok, p, np.nan), np.where(ok, code, np.nan)


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
    def fn(*a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return chi2_2df_pvalues([tuple(a[i : i + 4]) for i in range(0, len(a), 4)])  # type: ignore[misc]

    p, code = numpy_expr(fn, [x for g, r in pairs for x in (g.p, g.n, r.p, r.n)], ("p", "test"))
    return staged(Test(p, _test_names(code)))


def chi2_2df_pvalues(pairs: Sequence[tuple[Any, Any, Any, Any]]) -> tuple[np.ndarray, np.ndarray]:
    """:func:`chi2_2df_test` on arrays: ``pairs`` are ``(p_g, n_g, p_r, n_r)``; p-values and test codes.

    Examples
    --------
    >>> p, _ = chi2_2df_pvalues([(0.5, 100.0, 0.5, 100.0), (0.2, 100.0, 0.2, 100.0)])
    >>> float(p)
    1.0
    """
    return chi2_pooled_pvalues([pooled_z(*(np.asarray(v, dtype=np.float64) for v in pair)) for pair in pairs])


def chi2_pooled_pvalues(zs: Sequence[tuple[np.ndarray, Any, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """:func:`chi2_2df_pvalues` from each pair's :func:`pooled_z` (``z``, total, validity), already computed.

    Examples
    --------
    >>> p, _ = chi2_pooled_pvalues([(np.array([1.0]), None, np.array([True])), (np.array([1.0]), None, np.array([True]))])
    >>> round(float(p[0]), 6)  # exp(-1)
    0.367879
    """
    x = zs[0][0] * zs[0][0]
    ok = zs[0][2]
    for z, _, o in zs[1:]:
        x, ok = x + z * z, ok & o
    p = np.exp(-x / 2.0) if len(zs) == 2 else chi2_sf(x, len(zs))
    return np.where(ok, p, np.nan), np.where(ok, float(TESTS.index("chi2_2df")), np.nan)


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
