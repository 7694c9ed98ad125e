"""The statistics of returned slices against scipy and statsmodels on the slices' own rows."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from scipy import stats

import polfair as pf
from polfair.core.report.run_metadata import request_of

statsmodels = pytest.importorskip("statsmodels")
from statsmodels.stats.multitest import multipletests  # noqa: E402
from statsmodels.stats.proportion import proportion_confint  # noqa: E402


def _data(n: int = 4000, seed: int = 3) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    a = rng.choice(["p", "q", "r"], n)
    b = rng.choice(["u", "v"], n)
    c = rng.integers(0, 4, n)
    hot = (a == "p") & (b == "u")
    err = (rng.random(n) < np.where(hot, 0.45, 0.2)).astype(np.int64)
    loss = np.round(rng.gamma(2.0, np.where(hot, 0.6, 0.3)), 6)
    return pl.DataFrame({"a": a, "b": b, "c": c, "err": err, "loss": loss, "w": rng.integers(1, 4, n).astype(float)})


def _mask(df: pl.DataFrame, row: dict, features: list[str]) -> np.ndarray:
    m = np.ones(df.height, dtype=bool)
    for f in features:
        if row[f] is not None:
            m &= (df[f] == row[f]).to_numpy()
    return m


def _newcombe(x1: int, n1: int, x2: int, n2: int) -> tuple[float, float]:
    l1, u1 = proportion_confint(x1, n1, alpha=0.05, method="wilson")
    l2, u2 = proportion_confint(x2, n2, alpha=0.05, method="wilson")
    p1, p2 = x1 / n1, x2 / n2
    d = p1 - p2
    return d - np.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2), d + np.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)


def _chi2_n1(x1: float, n1: float, x2: float, n2: float) -> float:
    """Campbell's "N-1" chi2 p-value: the pooled z scaled by (N-1)/N (written out here, the oracle)."""
    p = (x1 + x2) / (n1 + n2)
    z = (x1 / n1 - x2 / n2) / np.sqrt(p * (1 - p) * (1 / n1 + 1 / n2))
    total = n1 + n2
    return float(stats.chi2.sf(z * z * (total - 1) / total, 1))


def test_rates_wilson_newcombe_and_the_n_minus_1_chi2() -> None:
    df, feats = _data(), ["a", "b", "c"]
    out = pf.slice_scan(df, features=feats, errors="err", k=5, max_level=2, min_support=50, alpha=0.95)
    assert out.height >= 3
    assert set(out["ci_method"]) == {"score"} and set(out["test"]) == {"chi2_n1"}
    e = df["err"].to_numpy()
    for r in out.iter_rows(named=True):
        m = _mask(df, r, feats)
        x1, n1, x2, n2 = int(e[m].sum()), int(m.sum()), int(e[~m].sum()), int((~m).sum())
        assert (r["n"], r["error_sum"]) == (n1, x1)
        assert r["error_mean"] == pytest.approx(x1 / n1, rel=1e-15)
        assert r["rest_error_mean"] == pytest.approx(x2 / n2, rel=1e-15)
        assert (r["value_lo"], r["value_hi"]) == pytest.approx(proportion_confint(x1, n1, alpha=0.05, method="wilson"), rel=1e-12)
        assert (r["difference_lo"], r["difference_hi"]) == pytest.approx(_newcombe(x1, n1, x2, n2), rel=1e-12)
        assert r["p_value"] == pytest.approx(_chi2_n1(x1, n1, x2, n2), rel=1e-9)
        assert r["n_eff"] == n1


def test_losses_log_t_and_welch_against_scipy() -> None:
    df, feats = _data(), ["a", "b", "c"]
    out = pf.slice_scan(df, features=feats, errors="loss", k=5, max_level=2, min_support=50, alpha=0.95)
    assert out.height >= 3
    assert set(out["ci_method"]) == {"log_t"} and set(out["test"]) == {"welch"}
    e = df["loss"].to_numpy()
    for r in out.iter_rows(named=True):
        m = _mask(df, r, feats)
        g, rest = e[m], e[~m]
        assert r["error_sum"] == pytest.approx(g.sum(), rel=1e-12)
        assert r["error_max"] == g.max()
        res = stats.ttest_ind(g, rest, equal_var=False)
        assert r["p_value"] == pytest.approx(res.pvalue, rel=1e-9)
        lo, hi = res.confidence_interval(0.95)
        assert (r["difference_lo"], r["difference_hi"]) == pytest.approx((lo, hi), rel=1e-9)
        mean, se = g.mean(), g.std(ddof=1) / np.sqrt(g.size)
        t = stats.t.ppf(0.975, g.size - 1)
        assert (r["value_lo"], r["value_hi"]) == pytest.approx((mean * np.exp(-t * se / mean), mean * np.exp(t * se / mean)), rel=1e-9)


@pytest.mark.parametrize("method", ["holm", "bh", "by"])
def test_p_values_adjusted_over_every_evaluated_slice(method: str) -> None:
    # at max_level=1 the family is every value of every feature: adjust them all with statsmodels
    df, feats = _data(), ["a", "b", "c"]
    out = pf.slice_scan(df, features=feats, errors="err", k=3, max_level=1, min_support=1, p_adjust=method)
    e = df["err"].to_numpy()
    fam, names = [], []
    for f in feats:
        for v in df[f].unique().sort():
            m = (df[f] == v).to_numpy()
            fam.append(_chi2_n1(e[m].sum(), m.sum(), e[~m].sum(), (~m).sum()))
            names.append(f"{f} = {v}")
    adj = dict(zip(names, multipletests(fam, method={"holm": "holm", "bh": "fdr_bh", "by": "fdr_by"}[method])[1]))
    assert out["n_evaluated"].unique().to_list() == [len(fam)] == [request_of(out)["n_evaluated"]]
    for r in out.iter_rows(named=True):
        assert r["p_value_adjusted"] == pytest.approx(adj[r["slice"]], rel=1e-9)
        assert r["p_value_adjusted"] >= r["p_value"]


def test_the_family_counts_the_candidates_of_later_levels() -> None:
    df = _data()
    out = pf.slice_scan(df, features=["a", "b", "c"], errors="err", k=3, max_level=2, min_support=1)
    req = request_of(out)
    assert req["n_evaluated"] == sum(req["candidates"]) > req["candidates"][0]  # every candidate has rows here
    none = pf.slice_scan(df, features=["a", "b", "c"], errors="err", k=3, max_level=2, min_support=1, p_adjust=None)
    assert none["p_value_adjusted"].to_list() == none["p_value"].to_list()  # unadjusted, as in the reports
    assert none["p_value"].to_list() == out["p_value"].to_list()
    no_ci = pf.slice_scan(df, features=["a", "b", "c"], errors="err", k=3, max_level=2, min_support=1, ci=None)
    for c in ("value_lo", "value_hi", "difference_lo", "difference_hi", "ci_method"):
        assert no_ci[c].null_count() == no_ci.height, c
    assert no_ci["p_value_adjusted"].to_list() == out["p_value_adjusted"].to_list()


def test_weights_kish_sizes_and_weighted_means() -> None:
    df, feats = _data(), ["a", "b", "c"]
    out = pf.slice_scan(df, features=feats, errors="err", weight="w", k=5, max_level=2, min_support=50)
    assert set(out["ci_method"]) == {"score_ess"} and set(out["test"]) == {"z_ess"}
    e, w = df["err"].to_numpy(), df["w"].to_numpy()
    for r in out.iter_rows(named=True):
        m = _mask(df, r, feats)
        assert r["n"] == m.sum()
        assert r["error_sum"] == pytest.approx((w[m] * e[m]).sum(), rel=1e-12)
        assert r["error_mean"] == pytest.approx((w[m] * e[m]).sum() / w[m].sum(), rel=1e-12)
        assert r["n_eff"] == pytest.approx(w[m].sum() ** 2 / (w[m] ** 2).sum(), rel=1e-12)
    ones = pf.slice_scan(df.with_columns(w=pl.lit(1.0)), features=feats, errors="err", weight="w", k=5, max_level=2,
                         min_support=50)  # fmt: skip
    plain = pf.slice_scan(df, features=feats, errors="err", k=5, max_level=2, min_support=50)
    cols = ["slice", "n", "error_sum", "error_mean", "score", "value_lo", "value_hi"]
    assert ones.select(cols).equals(plain.select(cols))  # unit weights: the unweighted search and intervals


@pytest.mark.parametrize(
    ("metric", "rows", "error"),
    [
        ("error_rate", pl.lit(True), pl.col("y") != pl.col("p")),
        ("false_positive_rate", pl.col("y") == 0, pl.col("p") == 1),
        ("false_negative_rate", pl.col("y") == 1, pl.col("p") == 0),
        ("selection_rate", pl.lit(True), pl.col("p") == 1),
        ("false_discovery_rate", pl.col("p") == 1, pl.col("y") == 0),
        ("base_rate", pl.lit(True), pl.col("y") == 1),
        ("generalized_false_positive_rate", pl.col("y") == 0, pl.col("s")),
    ],
)
def test_a_rate_is_the_search_on_its_denominator_with_its_numerator_as_the_error(
    metric: str, rows: pl.Expr, error: pl.Expr
) -> None:
    df = _data().with_columns(y=pl.col("err"), s=(pl.col("loss") / 10).clip(0, 1))
    df = df.with_columns(p=((pl.col("s") + (pl.col("c") == 2) * 0.2) > 0.1).cast(pl.Int64))
    kw = dict(features=["a", "b", "c"], k=6, max_level=3, min_support=30, alpha=0.99)
    got = pf.slice_scan(df, y_true="y", y_pred="p" if metric != "generalized_false_positive_rate" else None,
                        y_score="s" if metric == "generalized_false_positive_rate" else None, metric=metric, **kw)  # fmt: skip
    want = pf.slice_scan(df.filter(rows).with_columns(error.cast(pl.Float64).alias("e")), errors="e", **kw)
    assert got.height > 0
    cols = ["slice", "n", "error_sum", "error_max", "score", "p_value", "value_lo"]
    assert got.select(cols).equals(want.select(cols))
