"""polfair.core.intervals: agreement with statsmodels / scipy, edge cases, determinism."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polfair.core import intervals as iv
from polfair.core.intervals import Interval, Rate

Z95 = iv.z_value(0.95)


def _tables(seed: int, size: int = 400, nmax: int = 300) -> tuple[np.ndarray, ...]:
    """Random (x1, n1, x2, n2) with edges: n = 1, x = 0, x = n, tiny and large n."""
    rng = np.random.default_rng(seed)
    n1 = rng.integers(1, nmax, size)
    n2 = rng.integers(1, nmax, size)
    n1[:20] = rng.integers(1, 6, 20)
    n2[20:40] = 10**7 + rng.integers(0, 1000, 20)
    p1, p2 = rng.uniform(0, 1, size), rng.uniform(0, 1, size)
    p1[40:80:2], p2[41:80:2] = 0.0, 1.0  # x = 0, x = n
    p1[80:100] = rng.uniform(0, 0.02, 20)
    x1, x2 = rng.binomial(n1, p1), rng.binomial(n2, p2)
    return x1, n1, x2, n2


def _frame(x1, n1, x2, n2) -> pl.DataFrame:
    return (
        pl.DataFrame({"x1": x1, "n1": n1, "x2": x2, "n2": n2})
        .cast(pl.Float64)
        .with_columns(p1=pl.col("x1") / pl.col("n1"), p2=pl.col("x2") / pl.col("n2"))
    )


G, R = Rate(pl.col("p1"), pl.col("n1")), Rate(pl.col("p2"), pl.col("n2"))


def _np(df: pl.DataFrame, *exprs: pl.Expr) -> list[np.ndarray]:
    out = df.select([e.alias(f"c{i}") for i, e in enumerate(exprs)])
    return [out[c].to_numpy().astype(float) for c in out.columns]


@pytest.mark.parametrize("ci", [0.8, 0.95, 0.99])
def test_wilson_matches_statsmodels(ci):
    sm = pytest.importorskip("statsmodels.stats.proportion")
    x1, n1, x2, n2 = _tables(1)
    df = _frame(x1, n1, x2, n2)
    lo, hi = _np(df, *iv.wilson_interval(G, iv.z_value(ci)))
    slo, shi = sm.proportion_confint(x1, n1, alpha=1 - ci, method="wilson")
    assert np.max(np.abs(lo - slo)) < 1e-9
    assert np.max(np.abs(hi - shi)) < 1e-9
    # exact limits at the boundaries
    assert np.all(lo[x1 == 0] == 0.0) and np.all(hi[x1 == n1] == 1.0)


@pytest.mark.parametrize("ci", [0.9, 0.95])
def test_newcombe_matches_statsmodels(ci):
    sm = pytest.importorskip("statsmodels.stats.proportion")
    x1, n1, x2, n2 = _tables(2)
    df = _frame(x1, n1, x2, n2)
    lo, hi = _np(df, *iv.newcombe_interval(G, R, iv.z_value(ci)))
    slo, shi = sm.confint_proportions_2indep(x1, n1, x2, n2, method="newcomb", compare="diff", alpha=1 - ci)
    assert np.max(np.abs(lo - slo)) < 1e-9
    assert np.max(np.abs(hi - shi)) < 1e-9


def test_mover_ratio_solves_mover_equations():
    """MOVER-R (Donner & Zou 2012) in its textbook form, and the limits lie around the estimate."""
    x1, n1, x2, n2 = _tables(3)
    df = _frame(x1, n1, x2, n2)
    lo, hi = _np(df, *iv.mover_ratio_interval(G, R, Z95))
    wl1, wu1 = _np(df, *iv.wilson_interval(G, Z95))
    wl2, wu2 = _np(df, *iv.wilson_interval(R, Z95))
    p1, p2 = x1 / n1, x2 / n2
    ok = (x2 > 0) & (x1 > 0)
    b = p1 * p2
    # textbook: L = (b − sqrt(b² − l1(2p1 − l1)·u2(2p2 − u2))) / (u2(2p2 − u2)), where u2 < 2 p2
    den = wu2 * (2 * p2 - wu2)
    use = ok & (den > 1e-3)
    ref_lo = (b - np.sqrt(np.maximum(b * b - wl1 * (2 * p1 - wl1) * den, 0))) / den
    assert np.max(np.abs(lo[use] - ref_lo[use]) / np.maximum(1, ref_lo[use])) < 1e-9
    den_u = wl2 * (2 * p2 - wl2)
    with np.errstate(divide="ignore", invalid="ignore"):
        ref_hi = (b + np.sqrt(np.maximum(b * b - wu1 * (2 * p1 - wu1) * den_u, 0))) / den_u
    assert np.max(np.abs(hi[ok] - ref_hi[ok]) / np.maximum(1, ref_hi[ok])) < 1e-9
    theta = p1[x2 > 0] / p2[x2 > 0]
    assert np.all(lo[x2 > 0] <= theta * (1 + 1e-12)) and np.all(hi[x2 > 0] >= theta * (1 - 1e-12))
    assert np.all(lo[(x1 == 0) & (x2 > 0)] == 0.0)
    assert np.all(np.isnan(lo[x2 == 0])) and np.all(np.isnan(hi[x2 == 0]))  # ratio undefined -> null


def test_ztest_and_n1_chi2_match_statsmodels_and_scipy():
    sm = pytest.importorskip("statsmodels.stats.proportion")
    stats = pytest.importorskip("scipy.stats")
    x1, n1, x2, n2 = _tables(4)
    df = _frame(x1, n1, x2, n2)
    keep = ~(((x1 + x2) == 0) | ((x1 + x2) == (n1 + n2)))
    (pw,) = _np(df, iv.two_proportion_test(G, R, weighted=True).p_value)
    ref = np.array(
        [sm.proportions_ztest([a, b], [c, d])[1] for a, c, b, d in zip(x1[keep], n1[keep], x2[keep], n2[keep])]
    )
    assert np.max(np.abs(pw[keep] - ref)) < 1e-9
    assert np.all(pw[~keep] == 1.0)
    test = iv.two_proportion_test(G, R)
    p, name = df.select(test.p_value.alias("p"), test.test.alias("t")).get_columns()
    p, name = p.to_numpy(), name.to_numpy()
    nn = (n1 + n2).astype(float)
    z = np.array([sm.proportions_ztest([a, b], [c, d])[0] if k else 0.0 for a, c, b, d, k in zip(x1, n1, x2, n2, keep)])
    chi = stats.chi2.sf(z**2 * (nn - 1) / nn, 1)
    m = name == "chi2_n1"
    assert np.max(np.abs(p[m] - chi[m])) < 1e-9
    f = name == "fisher"
    assert f.sum() > 10
    ref_f = np.array(
        [stats.fisher_exact([[a, c - a], [b, d - b]]).pvalue for a, c, b, d in zip(x1[f], n1[f], x2[f], n2[f])]
    )
    assert np.max(np.abs(p[f] - ref_f)) < 1e-9
    # Campbell's rule: Fisher exactly where the smallest expected count is < 1
    s = x1 + x2
    expected = np.minimum(n1, n2) * np.minimum(s, nn - s) / nn
    assert np.array_equal(f, expected < 1)


def test_fisher_matches_scipy_on_many_small_tables():
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(5)
    n1, n2 = rng.integers(0, 40, 500), rng.integers(0, 40, 500)
    n2[:150] = n1[:150]  # equal group sizes: tables tie exactly with their mirror image
    x1, x2 = rng.binomial(n1, rng.uniform(size=500)), rng.binomial(n2, rng.uniform(size=500))
    ours = iv.fisher_exact_two_sided(x1, n1, x2, n2)
    ref = np.array([stats.fisher_exact([[a, c - a], [b, d - b]]).pvalue for a, c, b, d in zip(x1, n1, x2, n2)])
    assert np.max(np.abs(ours - ref)) < 1e-12


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3000), st.integers(0, 3000), st.integers(0, 3000), st.integers(0, 3000)),
                min_size=1, max_size=12))
def test_fisher_vectorised_equals_scipy_table_by_table(tables):
    # vectorised over tables of very different supports (blocks of support length): each p-value
    # equals scipy's on its own table, large margins and exact ties included
    stats = pytest.importorskip("scipy.stats")
    a, b, c, d = (np.array(v) for v in zip(*tables))
    ours = iv.fisher_exact_two_sided(a, a + b, c, c + d)
    for i, (w, x, y, z) in enumerate(tables):
        assert abs(ours[i] - stats.fisher_exact([[w, x], [y, z]]).pvalue) < 1e-12, tables[i]


def test_fisher_many_repeated_small_tables_equal_scipy():
    # a high-cardinality attribute: thousands of tiny tables, few distinct ones, each computed once
    # (distinct tables found by a lookup table when the keys' range is small, by a sort otherwise)
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(8)
    n1, n2 = rng.integers(0, 4, 5000), rng.integers(0, 6, 5000)
    x1, x2 = rng.binomial(n1, 0.4), rng.binomial(n2, 0.6)
    x1[7] = -1  # invalid: NaN, the others unaffected
    ours = iv.fisher_exact_two_sided(x1, n1, x2, n2)
    assert np.isnan(ours[7]) and np.isfinite(np.delete(ours, 7)).all()
    memo: dict[tuple[int, int, int, int], float] = {}
    for i in np.flatnonzero(np.arange(5000) != 7):
        t = (int(x1[i]), int(n1[i]), int(x2[i]), int(n2[i]))
        if t not in memo:
            memo[t] = stats.fisher_exact([[t[0], t[1] - t[0]], [t[2], t[3] - t[2]]]).pvalue
        assert abs(ours[i] - memo[t]) < 1e-12, t
    assert len(memo) < 300  # (few distinct tables: the lookup-table path)


def test_fisher_invalid_and_degenerate_tables():
    got = iv.fisher_exact_two_sided([np.nan, 3, 0, 2, -1], [5, 2, 0, 4, 3], [1, 1, 2, 2, 1], [5, 3, 5, 4, 3])
    assert np.isnan(got[0]) and np.isnan(got[1]) and np.isnan(got[4])  # missing, x > n, negative
    assert got[2] == 1.0 and got[3] == 1.0  # an empty group; the observed table is the mode


def test_chi2_sf_matches_scipy():
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(6)
    df = np.repeat(np.arange(1, 201), 20)
    x = rng.gamma(df / 2.0, 2.0) * rng.uniform(0.05, 3.0, df.size)
    ours = iv.chi2_sf(x, df)
    assert np.max(np.abs(ours - stats.chi2.sf(x, df))) < 1e-12
    assert iv.chi2_sf(0.0, 3) == 1.0 and np.isnan(iv.chi2_sf(np.nan, 3))


def test_t_and_z_quantiles_match_scipy():
    stats = pytest.importorskip("scipy.stats")
    for df in range(1, 120):
        for q in (0.9, 0.95, 0.975, 0.995, 0.025):
            assert abs(iv.t_quantile(q, df) - stats.t.ppf(q, df)) < 1e-9 * max(1.0, abs(stats.t.ppf(q, df)))
        assert abs(iv.t_sf(1.7, df) - stats.t.sf(1.7, df)) < 1e-12
    for ci in (0.5, 0.8, 0.9, 0.95, 0.99, 0.999):
        for k in (1, 2, 7, 30, 500):
            level = ci ** (1 / k)
            assert abs(iv.z_value(ci, k) - stats.norm.ppf(1 - (1 - level) / 2)) < 1e-9


@pytest.mark.parametrize("method,sm_name", [("bh", "fdr_bh"), ("by", "fdr_by"), ("holm", "holm")])
def test_p_adjust_matches_statsmodels(method, sm_name):
    mt = pytest.importorskip("statsmodels.stats.multitest")
    rng = np.random.default_rng(7)
    fam = np.repeat(np.arange(12), rng.integers(1, 40, 12).max())[:300]
    p = rng.uniform(0, 1, fam.size) ** 3
    p[::17] = p[1::17][: len(p[::17])]  # ties
    df = pl.DataFrame({"f": fam, "p": p}).with_row_index()
    with_null = df.with_columns(pl.when(pl.col("index") % 23 == 0).then(None).otherwise(pl.col("p")).alias("p"))
    out = with_null.with_columns(iv.p_adjust(pl.col("p"), method).over("f").alias("adj"))
    worst = 0.0
    for _, part in out.group_by("f"):
        keep = part.filter(pl.col("p").is_not_null())
        ref = mt.multipletests(keep["p"].to_numpy(), method=sm_name)[1]
        worst = max(worst, float(np.max(np.abs(keep["adj"].to_numpy() - ref))))
        assert part.filter(pl.col("p").is_null())["adj"].null_count() == part["p"].null_count()
    assert worst < 1e-12


def test_homogeneity_matches_scipy_and_uses_exact_moments_when_cochran_fails():
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(8)
    rows = []
    for t in range(60):
        k = int(rng.integers(2, 8))
        n = rng.integers(30, 400, k)
        x = rng.binomial(n, rng.uniform(0.2, 0.6))
        rows += [{"t": t, "x": float(a), "n": float(b)} for a, b in zip(x, n)]
    df = pl.DataFrame(rows).with_columns(p=pl.col("x") / pl.col("n"))
    test = iv.homogeneity_test([Rate(pl.col("p"), pl.col("n"))])
    out = df.group_by("t", maintain_order=True).agg(test.alias("h")).unnest("h")
    for t, p, name in out.iter_rows():
        part = df.filter(pl.col("t") == t)
        x, n = part["x"].to_numpy(), part["n"].to_numpy()
        table = np.stack([x, n - x], axis=1)
        if name == "chi2_homogeneity":
            assert abs(p - stats.chi2_contingency(table, correction=False)[1]) < 1e-9
    assert set(out["test"]) == {"chi2_homogeneity"}
    # rare events: Cochran fails -> Pearson's X² against a chi2 scaled to its exact moments:
    # deterministic, independent of row order
    rare = pl.DataFrame({"t": ["a"] * 5, "x": [0.0, 1.0, 0.0, 2.0, 0.0], "n": [20.0, 30.0, 25.0, 40.0, 10.0]})
    rare = rare.with_columns(p=pl.col("x") / pl.col("n"))
    a = rare.group_by("t").agg(test.alias("h")).unnest("h")
    b = rare.reverse().group_by("t").agg(test.alias("h")).unnest("h")
    assert a["test"].item() == "chi2_moments" and a["p_value"].item() == b["p_value"].item()
    x, n = rare["x"].to_numpy(), rare["n"].to_numpy()
    xs = np.sum((x - n * x.sum() / n.sum()) ** 2 / n) / (x.sum() / n.sum() * (1 - x.sum() / n.sum()))
    m, v = _exact_pearson_moments(n.astype(int), int(x.sum()))
    assert a["p_value"].item() == pytest.approx(stats.chi2.sf(xs * 2 * m / v, 2 * m * m / v), rel=1e-9)


def _exact_pearson_moments(n: np.ndarray, s: int) -> tuple[float, float]:
    """Mean and variance of Pearson's X² over every table with margins (n, s), weighted by its
    multivariate hypergeometric probability (exact enumeration: small tables only)."""
    import itertools

    tot = mean = second = 0.0
    for x in itertools.product(*[range(v + 1) for v in n]):
        if sum(x) != s:
            continue
        w = math.prod(math.comb(int(a), int(b)) for a, b in zip(n, x))
        xa = np.array(x, dtype=float)
        pp = s / n.sum()
        stat = float(np.sum((xa - n * pp) ** 2 / n) / (pp * (1 - pp)))
        tot, mean, second = tot + w, mean + w * stat, second + w * stat * stat
    return mean / tot, second / tot - (mean / tot) ** 2


@settings(max_examples=60, deadline=None)
@given(sizes=st.lists(st.integers(1, 6), min_size=2, max_size=5), frac=st.floats(0.0, 1.0))
def test_pearson_moments_equal_exact_enumeration(sizes: list[int], frac: float) -> None:
    from polfair.core.intervals.homogeneity import homogeneity_segments

    n = np.array(sizes)
    s = int(round(frac * n.sum()))
    if s in (0, n.sum()):
        return
    x = np.zeros(len(n))
    left = s
    for j in range(len(n)):  # any table with these margins: the moments depend on the margins only
        x[j] = min(n[j], left)
        left -= x[j]
    got = homogeneity_segments(x / n, n.astype(float), np.zeros(len(n), dtype=np.int64), 1, False)
    mean, var = _exact_pearson_moments(n, s)
    assert got.mean[0] == pytest.approx(mean, rel=1e-9, abs=1e-12)
    assert got.var[0] == pytest.approx(var, rel=1e-8, abs=1e-9)


def test_chi2_2df():
    df = _frame(*_tables(9, 150))
    t = iv.chi2_2df_test([(G, R), (R, G)])
    (p,) = _np(df, t.p_value)
    (z1,) = _np(df, iv.two_proportion_test(G, R, weighted=True).p_value)
    # both parts have the same |z|: x = 2 z², p = exp(−z²) with 2·Φ(−|z|) = z1
    stats = pytest.importorskip("scipy.stats")
    z = stats.norm.isf(z1 / 2)
    assert np.max(np.abs(p - np.exp(-(z**2)))) < 1e-9


def test_effective_size_and_rate_inputs():
    t = pl.DataFrame({"w": [10.0, 4.0, 0.0], "w2": [10.0, 8.0, 0.0]})
    assert t.select(iv.effective_size("w", "w2")).to_series().to_list() == [10.0, 2.0, None]
    with pytest.raises(ValueError, match="not a rate metric"):
        iv.rate_inputs("num_positives")


def test_overall_identities():
    """difference and ratio vs a reference that contains the group are exact maps of g vs rest."""
    num_g, den_g, num_r, den_r = pl.col("ng"), pl.col("dg"), pl.col("nr"), pl.col("dr")
    df = pl.DataFrame(
        {"ng": [3.0, 0.0, 5.0], "dg": [10.0, 7.0, 20.0], "nr": [20.0, 9.0, 5.0], "dr": [100.0, 50.0, 80.0]}
    )
    comp, f = iv.complement_rate(num_g, den_g, den_g, num_r, den_r, den_r)
    g = Rate(num_g / den_g, den_g)
    d = iv.overall_difference_interval(g, comp, f, Z95)
    q = iv.overall_ratio_interval(g, comp, f, Z95)
    out = df.with_columns(
        d.lo.alias("dlo"), d.hi.alias("dhi"), q.lo.alias("qlo"), q.hi.alias("qhi"),
        (num_g / den_g - num_r / den_r).alias("d"), ((num_g / den_g) / (num_r / den_r)).alias("q"),
        *[e.alias(n) for e, n in zip(iv.newcombe_interval(g, comp, Z95), ("nlo", "nhi"))],
    )  # fmt: skip
    for r in out.iter_rows(named=True):
        share = r["dg"] / r["dr"]
        assert r["dlo"] == pytest.approx((1 - share) * r["nlo"]) and r["dhi"] == pytest.approx((1 - share) * r["nhi"])
        assert r["dlo"] <= r["d"] <= r["dhi"]
        assert r["qlo"] <= r["q"] <= r["qhi"]
    # rest has rate 0 (third row): ratio upper limit is 1/f, not unbounded
    assert out["qhi"][2] == pytest.approx(80.0 / 20.0)


def _wilson_np(x, n, z):
    p = x / n
    den = 1 + z * z / n
    c = (p + z * z / (2 * n)) / den
    h = z / den * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return np.where(x == 0, 0.0, c - h), np.where(x == n, 1.0, c + h)


def test_spread_projection_matches_numpy():
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(10)
    rows = []
    for t in range(40):
        k = int(rng.integers(2, 9))
        n = rng.integers(5, 300, k).astype(float)
        x = rng.binomial(n.astype(int), rng.uniform(0.0, 1.0, k)).astype(float)
        rows += [{"t": t, "x": a, "n": b} for a, b in zip(x, n)]
        rows.append({"t": t, "x": None, "n": 0.0})  # an undefined group is skipped
    df = pl.DataFrame(rows).with_columns(p=pl.when(pl.col("n") > 0).then(pl.col("x") / pl.col("n")))
    s = iv.spread_intervals(Rate(pl.col("p"), pl.col("n")), 0.95)
    out = df.group_by("t", maintain_order=True).agg(
        s.difference_lo.alias("dlo"), s.difference_hi.alias("dhi"), s.ratio_lo.alias("rlo"), s.ratio_hi.alias("rhi")
    )
    sm = pytest.importorskip("statsmodels.stats.proportion")
    for t, dlo, dhi, rlo, rhi in out.iter_rows():
        part = df.filter((pl.col("t") == t) & (pl.col("n") > 0))
        x, n = part["x"].to_numpy(), part["n"].to_numpy()
        k = len(n)
        p = x / n
        if k == 2:
            i, j = int(np.argmax(p)), int(np.argmin(p))
            if i == j:
                i, j = 0, 1
            lo, hi = sm.confint_proportions_2indep(x[i], n[i], x[j], n[j], method="newcomb")
            ref = (0.0, max(abs(lo), abs(hi))) if lo <= 0 <= hi else (min(abs(lo), abs(hi)), max(abs(lo), abs(hi)))
            assert (dlo, dhi) == pytest.approx(ref, abs=1e-9)
        else:
            z = stats.norm.isf((1 - 0.95 ** (1 / k)) / 2)
            lo, hi = _wilson_np(x, n, z)
            assert dlo == pytest.approx(max(0.0, lo.max() - hi.min()), abs=1e-9)
            assert dhi == pytest.approx(hi.max() - lo.min(), abs=1e-9)
            if p.max() > 0:
                assert rlo == pytest.approx(lo.min() / hi.max(), abs=1e-9)
                if lo.max() > 0:
                    assert rhi == pytest.approx(min(1.0, hi.min() / lo.max()), abs=1e-9)
        assert dlo <= p.max() - p.min() + 1e-12 <= dhi + 2e-12
        if p.max() > 0 and rhi is not None:
            assert rlo - 1e-12 <= p.min() / p.max() <= rhi + 1e-12


def test_best_reference_and_edf_contain_the_estimate():
    rng = np.random.default_rng(11)
    n = rng.integers(5, 200, 12).astype(float)
    x = rng.binomial(n.astype(int), 0.4).astype(float)
    df = pl.DataFrame({"m": ["r"] * 12, "x": x, "n": n}).with_columns(p=pl.col("x") / pl.col("n"))
    d, q = iv.best_reference_intervals(Rate(pl.col("p"), pl.col("n")), ci=0.95, higher_is_better=True, over="m")
    out = df.with_columns(d.lo.alias("lo"), d.hi.alias("hi"), (pl.col("p") - pl.col("p").max()).alias("d"))
    assert (out["lo"] <= out["d"]).all() and (out["d"] <= out["hi"]).all()
    e = iv.edf_interval(pl.col("x"), pl.col("n"), None, 0.95)
    lo, hi = df.select(e.lo, e.hi.alias("hi")).row(0)
    s = x / n
    edf = max(np.log(s).max() - np.log(s).min(), np.log(1 - s).max() - np.log(1 - s).min())
    assert lo <= edf and (hi is None or edf <= hi)
    pure = pl.DataFrame({"x": [0.0, 50.0], "n": [100.0, 100.0]})
    assert pure.select(e.hi).item() is None and pure.select(e.lo).item() > 0


def test_composites():
    r = lambda p, n: Rate(pl.lit(p), pl.lit(n))  # noqa: E731
    pairs = [(r(0.2, 50.0), r(0.4, 50.0)), (r(0.7, 40.0), r(0.8, 60.0))]
    lo, hi = pl.select(*[e.alias(n) for e, n in zip(iv.average_difference_interval(pairs, Z95), "ab")]).row(0)
    # MOVER sum: by hand from the two Newcombe intervals
    n1 = pl.select(*[e.alias(n) for e, n in zip(iv.newcombe_interval(*pairs[0], Z95), "ab")]).row(0)
    n2 = pl.select(*[e.alias(n) for e, n in zip(iv.newcombe_interval(*pairs[1], Z95), "ab")]).row(0)
    d1, d2 = -0.2, -0.1
    assert lo == pytest.approx(0.5 * (d1 + d2 - math.hypot(d1 - n1[0], d2 - n2[0])))
    assert hi == pytest.approx(0.5 * (d1 + d2 + math.hypot(n1[1] - d1, n2[1] - d2)))
    lo, hi = pl.select(*[e.alias(n) for e, n in zip(iv.max_abs_difference_interval(pairs, 0.95), "ab")]).row(0)
    assert lo == 0.0 and 0.2 <= hi
    a = iv.abs_interval(Interval(pl.lit(0.1), pl.lit(0.3)))
    assert pl.select(a.lo.alias("a"), a.hi.alias("b")).row(0) == (0.1, 0.3)


@settings(max_examples=200, deadline=None)
@given(x=st.integers(0, 10**9), n=st.integers(0, 10**9), ci=st.sampled_from([0.5, 0.9, 0.95, 0.999]))
def test_wilson_properties(x, n, ci):
    x = min(x, n)
    df = pl.DataFrame({"p": [x / n if n else None], "n": [float(n)]})
    lo, hi = df.select(
        *[e.alias(c) for e, c in zip(iv.wilson_interval(Rate(pl.col("p"), pl.col("n")), iv.z_value(ci)), "ab")]
    ).row(0)
    if n == 0:
        assert lo is None and hi is None
        return
    p = x / n
    assert 0.0 <= lo <= p + 1e-15 and p - 1e-15 <= hi <= 1.0
    if x == 0:
        assert lo == 0.0
    if x == n:
        assert hi == 1.0


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(*[st.integers(0, 60)] * 4), min_size=1, max_size=40))
def test_two_sample_properties(tables):
    rows = [(min(a, b), b, min(c, d), d) for a, b, c, d in tables]
    df = pl.DataFrame(
        {
            "p1": [x1 / n1 if n1 else None for x1, n1, _, _ in rows], "n1": [float(r[1]) for r in rows],
            "p2": [x2 / n2 if n2 else None for _, _, x2, n2 in rows], "n2": [float(r[3]) for r in rows],
        },
        schema_overrides={"p1": pl.Float64, "p2": pl.Float64},
    )  # fmt: skip
    d = iv.newcombe_interval(G, R, Z95)
    q = iv.mover_ratio_interval(G, R, Z95)
    t = iv.two_proportion_test(G, R)
    out = df.select(
        d.lo.alias("a"), d.hi.alias("b"), q.lo.alias("c"), q.hi.alias("d"), t.p_value.alias("e"), t.test.alias("f")
    )
    for (x1, n1, x2, n2), (dlo, dhi, qlo, qhi, p, name) in zip(rows, out.iter_rows()):
        if n1 == 0 or n2 == 0:
            assert dlo is None and p is None and name is None
            continue
        diff = x1 / n1 - x2 / n2
        assert -1.0 - 1e-12 <= dlo <= diff + 1e-12 and diff - 1e-12 <= dhi <= 1.0 + 1e-12
        assert 0.0 <= p <= 1.0 and name in ("chi2_n1", "fisher")
        if x2 == 0:
            assert qlo is None and qhi is None
        else:
            ratio = (x1 / n1) / (x2 / n2)
            assert 0.0 <= qlo <= ratio * (1 + 1e-12) and ratio * (1 - 1e-12) <= qhi


def test_errors_name_the_option():
    with pytest.raises(ValueError, match="ci must be"):
        iv.check_ci(95)
    with pytest.raises(ValueError, match="n_boot"):
        iv.check_n_boot(1)
    with pytest.raises(ValueError, match="p_adjust"):
        iv.check_p_adjust("bonferroni")
    with pytest.raises(ValueError, match="n_buckets"):
        iv.bucket_of(pl.col("u"), 1)


# ---------------------------------------------------------------------------------------------
# bootstrap and jackknife


def _cells(seed: int = 0, rows: int = 4000):
    import polfair as pf

    rng = np.random.default_rng(seed)
    df = pl.DataFrame({
        "y": rng.integers(0, 2, rows), "p": rng.integers(0, 2, rows),
        "a": rng.choice(["x", "y", "z"], rows), "b": rng.choice(["u", "v"], rows),
        "m": rng.choice(["jan", "feb"], rows), "uid": rng.integers(0, 300, rows),
    })  # fmt: skip
    return df, pf


def test_entropy_bootstrap_is_deterministic_and_order_free():
    df, pf = _cells()
    kw = dict(y_true="y", y_pred="p", protected=["a", "b"], by="m")
    cells = pf.confusion_counts(df, **kw).collect()
    args = dict(protected=["a", "b"], by=["m"], n_boot=60, seed=5)
    one = iv.entropy_bootstrap(cells, **args)
    again = iv.entropy_bootstrap(cells.sample(fraction=1.0, shuffle=True, seed=1), **args)
    assert one.equals(again)
    halves = [pf.confusion_counts(d, **kw) for d in (df[:1300], df[1300:])]
    merged = pf.merge_counts(halves).collect()
    assert iv.entropy_bootstrap(merged, **args).equals(one)
    # the same by value gets the same stream whatever else is in the table
    jan = iv.entropy_bootstrap(cells.filter(pl.col("m") == "jan"), **args)
    assert jan.equals(one.filter(pl.col("m") == "jan"))
    other = iv.entropy_bootstrap(cells, **{**args, "seed": 6})
    assert not other.equals(one)
    # metric names and structure
    names = set(one["metric"])
    assert {"between_group_theil_index", "theil_index", "between_all_groups_coefficient_of_variation"} <= names
    assert (one["value_lo"] >= 0).all() and (one["value_hi"] >= one["value_lo"]).all()


def test_entropy_bootstrap_estimate_equals_report():
    df, pf = _cells(1)
    cells = pf.confusion_counts(df, y_true="y", y_pred="p", protected=["a", "b"]).collect()
    boot = iv.entropy_bootstrap(cells, protected=["a", "b"], n_boot=20)
    rep = pf.report_from_counts(cells, protected=["a", "b"])
    rep = rep.select(pl.col("attribute", "metric").cast(pl.String), pl.col("value").alias("rv"))
    joined = boot.join(rep, on=["attribute", "metric"], nulls_equal=True)
    assert joined.height == boot.height
    assert np.max(np.abs(joined["value"].to_numpy() - joined["rv"].to_numpy())) < 1e-12


def test_jackknife_matches_brute_force():
    rng = np.random.default_rng(12)
    t = pl.DataFrame({
        "bucket": np.repeat(np.arange(6), 2), "g": ["a", "b"] * 6,
        "x": rng.integers(0, 20, 12).astype(float), "n": rng.integers(20, 40, 12).astype(float),
    })  # fmt: skip

    def share(table, keys):
        return table.group_by([*keys, "g"]).agg(value=pl.col("x").sum() / pl.col("n").sum(), null_value=pl.lit(0.5))

    out = iv.jackknife_intervals(t, share, sums=["x", "n"], ci=0.9).sort("g")
    stats = pytest.importorskip("scipy.stats")
    for g, row in zip(("a", "b"), out.iter_rows(named=True)):
        part = t.filter(pl.col("g") == g)
        x, n = part["x"].to_numpy(), part["n"].to_numpy()
        theta = x.sum() / n.sum()
        reps = np.array([(x.sum() - x[i]) / (n.sum() - n[i]) for i in range(6)])
        se = math.sqrt(5 / 6 * np.sum((reps - reps.mean()) ** 2))
        tq = stats.t.ppf(0.95, 5)
        assert row["value"] == pytest.approx(theta)
        assert row["se"] == pytest.approx(se, rel=1e-12)
        assert row["value_lo"] == pytest.approx(theta - tq * se, rel=1e-9)
        assert row["p_value"] == pytest.approx(2 * stats.t.sf(abs(theta - 0.5) / se, 5), rel=1e-9)
        assert row["n_buckets"] == 6


def test_bucket_hash_is_fixed():
    ids = pl.DataFrame({"u": [0, 1, 2, 3, -5, 2**40 + 7, None]})
    got = ids.select(iv.bucket_of(pl.col("u"))).to_series().to_list()
    golden = 0x9E3779B97F4A7C15
    ref = [((((v if v is not None else 2**63) * golden) % 2**64 >> 32) * 20) >> 32 for v in ids["u"].to_list()]
    assert got == ref
    s = pl.DataFrame({"u": ["a", "b", "a"]}).select(iv.bucket_of(pl.col("u"), 7, integer=False)).to_series().to_list()
    assert s[0] == s[2] and all(0 <= v < 7 for v in s)


@pytest.mark.parametrize("alpha", [0.0, 0.5, 1.0, 2.0, 3.0])
def test_ge_replicates_equals_the_entropy_module(alpha):
    from polfair.core import entropy

    rng = np.random.default_rng(13)
    k = np.repeat(np.arange(300), 7)
    b = rng.uniform(0.05 if alpha == 0.0 else 0.0, 2.0, k.size)
    b[::11] = 0.0 if alpha != 0.0 else b[::11]
    cnt = rng.integers(0, 50, k.size).astype(float)
    frame = pl.DataFrame({"k": k, "b": b, "cnt": cnt})
    ours = iv.ge_replicates(frame, {"v": alpha}, ["k"]).sort("k")["v"].to_numpy()
    ref = entropy.generalized_entropy_indices(frame, {"v": alpha}, ["k"]).sort("k")["v"].to_numpy()
    assert np.max(np.abs(ours - ref) / np.maximum(1e-300, np.abs(ref))) < 1e-12


def test_table_forms_equal_the_aggregation_forms():
    rng = np.random.default_rng(14)
    fam = np.repeat(np.arange(8), 6)
    n = rng.integers(0, 80, fam.size).astype(float)
    x = np.floor(n * rng.uniform(0, 1, fam.size))
    x[::7] = 0.0
    n[::9] = 0.0  # undefined groups are skipped
    df = pl.DataFrame({"f": fam, "x": x, "n": n})
    df = df.with_columns(p=pl.when(pl.col("n") > 0).then(pl.col("x") / pl.col("n")))
    names = ("difference_lo", "difference_hi", "ratio_lo", "ratio_hi")
    r = Rate(pl.col("p"), pl.col("n"))
    fast = iv.spread_table(df, by=["f"], p="p", n="n", ci=0.9).collect().sort("f")
    slow = df.group_by("f").agg(*[e.alias(c) for e, c in zip(iv.spread_intervals(r, 0.9), names)]).sort("f")
    assert fast.select(names).equals(slow.select(names))
    eo_fast = iv.equalized_odds_spread_table(df, by=["f"], tpr=("p", "n"), fpr=("p", "n"), ci=0.9).collect().sort("f")
    eo_slow = df.group_by("f").agg(*[e.alias(c) for e, c in zip(iv.equalized_odds_spread_intervals(r, r, 0.9), names)])
    assert eo_fast.select(names).equals(eo_slow.sort("f").select(names))
    e = iv.edf_interval(pl.col("x"), pl.col("n"), None, 0.9)
    edf_fast = iv.edf_table(df, by=["f"], positives="x", total="n", total_w2=None, ci=0.9).collect().sort("f")
    edf_slow = df.group_by("f").agg(e.lo.alias("value_lo"), e.hi.alias("value_hi")).sort("f")
    assert edf_fast.select("value_lo", "value_hi").equals(edf_slow.select("value_lo", "value_hi"))


def test_spread_with_tied_rates_does_not_depend_on_row_order() -> None:
    # two groups with the same rate and different sizes: the two-group interval takes the larger
    # size for the "largest" rate and the smaller for the "smallest", whatever the row order
    rows = pl.DataFrame({"a": ["x", "x"], "p": [0.5, 0.5], "n": [10.0, 400.0]})
    got = {iv.spread_table(r, by=["a"], p="p", n="n", ci=0.95).collect().row(0) for r in (rows, rows.reverse())}
    assert len(got) == 1
    d = iv.abs_interval(iv.newcombe_interval(iv.Rate(pl.lit(0.5), pl.lit(400.0)), iv.Rate(pl.lit(0.5), pl.lit(10.0)), iv.z_value(0.95)))
    assert got.pop()[3] == pl.select(d.hi).item()
