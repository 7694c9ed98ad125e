"""Intervals of the score report: DeLong on binned scores against a direct DeLong and scikit-learn, the Brier
score's t / Welch against scipy, average precision's logit interval, ABROCA's bootstrap, spreads."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize, stats
from sklearn.metrics import average_precision_score, roc_auc_score

import polfair as pf
from polfair.scores import score_report
from polfair.scores._uncertainty import abroca_batch
from polfair.scores.curves import area_between_roc_curves


def direct_delong(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """AUC and DeLong's variance from the structural components, O(m·n) (ties count ½)."""
    psi = (x[:, None] > y[None, :]) + 0.5 * (x[:, None] == y[None, :])
    v10, v01 = psi.mean(axis=1), psi.mean(axis=0)
    return float(psi.mean()), float(v10.var(ddof=1) / len(x) + v01.var(ddof=1) / len(y))


def _data(n: int = 600, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    g = rng.choice(["a", "b", "c"], n, p=[0.6, 0.3, 0.1])
    y = rng.random(n) < np.where(g == "a", 0.4, 0.55)
    s = np.clip(rng.normal(0.35 + 0.3 * y - 0.05 * (g == "c"), 0.2), 0, 1)
    return pl.DataFrame({"g": g, "y": y.astype(int), "s": s})


def newcombe_oracle(a: float, m: float, n: float, z: float) -> tuple[float, float]:
    """Newcombe's (2006) score interval of the AUC by scipy's root finder (an independent oracle)."""
    big = (m + n) / 2

    def f(t: float) -> float:
        v = t * (1 - t) / (m * n) * (1 + (big - 1) * ((1 - t) / (2 - t) + t / (1 + t)))
        return (a - t) ** 2 - z * z * v

    lo = 0.0 if a <= 0 else optimize.brentq(f, 0.0, a, xtol=1e-14)
    hi = 1.0 if a >= 1 else optimize.brentq(f, a, 1.0, xtol=1e-14)
    return lo, hi


@pytest.mark.parametrize("bins", ["exact", 10, 25])
def test_auc_interval_equals_direct_delong_on_the_binned_scores(bins: object) -> None:
    df = _data()
    rep = score_report(df, y_true="y", y_score="s", protected="g", bins=bins, privileged={"g": "a"})  # type: ignore[arg-type]
    edges = None if bins == "exact" else np.linspace(0, 1, int(bins) + 1)  # type: ignore[call-overload]
    z = stats.norm.ppf(0.975)
    out = {}
    for g in ("a", "b", "c"):
        part = df.filter(g=g)
        s = part["s"].to_numpy()
        if edges is not None:  # the bin's lower edge (the last bin closed): a tie within a bin
            s = edges[np.minimum(np.searchsorted(edges, s, side="right") - 1, len(edges) - 2)]
        yy = part["y"].to_numpy().astype(bool)
        auc, var = direct_delong(s[yy], s[~yy])
        assert auc == pytest.approx(roc_auc_score(yy, s), rel=1e-12)
        row = rep.filter(group=g, metric="roc_auc")
        assert row["value"].item() == pytest.approx(auc, rel=1e-12)
        lo, hi = auc - z * var**0.5, auc + z * var**0.5
        if min(yy.sum(), (~yy).sum()) < 50:  # a small group: DeLong's widened to Newcombe's score interval
            nlo, nhi = newcombe_oracle(auc, yy.sum(), (~yy).sum(), z)
            wider = nlo < lo or nhi > hi
            lo, hi = min(lo, nlo), max(hi, nhi)
            assert row["ci_method"].item() == ("newcombe_score" if wider else "delong")
        else:
            assert row["ci_method"].item() == "delong"
        assert row["value_lo"].item() == pytest.approx(max(0.0, lo), rel=1e-10)
        assert row["value_hi"].item() == pytest.approx(min(1.0, hi), rel=1e-10)
        out[g] = (auc, lo, hi)
    assert rep.filter(group="c", metric="roc_auc")["ci_method"].item() == "newcombe_score"  # 60 rows
    for g in ("b", "c"):  # independent groups: MOVER from the two intervals; for Wald limits, the variances add
        (a, lo, hi), (ar, lor, hir) = out[g], out["a"]
        d = a - ar
        dlo, dhi = d - np.hypot(a - lo, hir - ar), d + np.hypot(hi - a, ar - lor)
        row = rep.filter(group=g, metric="roc_auc")
        assert (row["difference_lo"].item(), row["difference_hi"].item()) == pytest.approx((dlo, dhi), rel=1e-9)
        se = (d - dlo if d >= 0 else dhi - d) / z
        assert row["p_value"].item() == pytest.approx(2 * stats.norm.sf(abs(d) / se), rel=1e-9)
        assert row["test"].item() == "delong"


def test_weights_of_one_constant_do_not_change_the_auc_interval() -> None:
    df = _data().with_columns(pl.lit(2.5).alias("w"))
    a = score_report(df, y_true="y", y_score="s", protected="g", bins=20)
    b = score_report(df, y_true="y", y_score="s", protected="g", bins=20, weight="w")
    for col in ("value", "value_lo", "value_hi", "difference_lo", "p_value"):
        x, y = a.filter(metric="roc_auc")[col].to_numpy(), b.filter(metric="roc_auc")[col].to_numpy()
        np.testing.assert_allclose(x.astype(float), y.astype(float), rtol=1e-12, equal_nan=True)


def test_brier_t_interval_and_welch_equal_scipy_on_exact_scores() -> None:
    df = _data()
    rep = score_report(df, y_true="y", y_score="s", protected="g", privileged={"g": "a"})
    q = {g: ((df.filter(g=g)["s"] - df.filter(g=g)["y"]) ** 2).to_numpy() for g in ("a", "b")}
    row = rep.filter(group="b", metric="brier_score")
    lo, hi = stats.t.interval(0.95, len(q["b"]) - 1, loc=q["b"].mean(), scale=stats.sem(q["b"]))
    assert (row["value_lo"].item(), row["value_hi"].item()) == pytest.approx((lo, hi), rel=1e-9)
    res = stats.ttest_ind(q["b"], q["a"], equal_var=False)
    assert row["p_value"].item() == pytest.approx(res.pvalue, rel=1e-9)
    ci = res.confidence_interval(0.95)
    assert (row["difference_lo"].item(), row["difference_hi"].item()) == pytest.approx((ci.low, ci.high), rel=1e-9)


def test_brier_interval_with_bins_is_conservative() -> None:
    df = _data()
    exact = score_report(df, y_true="y", y_score="s", protected="g").filter(metric="brier_score", group="b")
    binned = score_report(df, y_true="y", y_score="s", protected="g", bins=10).filter(metric="brier_score", group="b")
    assert binned["value"].item() == pytest.approx(exact["value"].item(), rel=1e-12)  # Brier: exact under binning
    assert binned["value_hi"].item() - binned["value_lo"].item() >= exact["value_hi"].item() - exact["value_lo"].item()


def test_average_precision_logit_interval() -> None:
    df = _data()
    rep = score_report(df, y_true="y", y_score="s", protected="g")
    part = df.filter(g="c")
    ap = average_precision_score(part["y"], part["s"])
    m = int(part["y"].sum())
    z = stats.norm.ppf(0.975)
    lg, h = np.log(ap / (1 - ap)), z / np.sqrt(m * ap * (1 - ap))
    row = rep.filter(group="c", metric="average_precision")
    assert row["value"].item() == pytest.approx(ap, rel=1e-12)
    assert row["value_lo"].item() == pytest.approx(1 / (1 + np.exp(-(lg - h))), rel=1e-12)
    assert row["value_hi"].item() == pytest.approx(1 / (1 + np.exp(-(lg + h))), rel=1e-12)
    assert row["ci_method"].item() == "logit"


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 8), st.integers(2, 8), st.integers(0, 10_000))
def test_abroca_batch_equals_the_exact_area(k1: int, k2: int, seed: int) -> None:
    rng = np.random.default_rng(seed)

    def curve(k: int) -> tuple[np.ndarray, np.ndarray]:
        f = np.r_[0.0, np.sort(rng.choice([0.0, 0.25, 0.5, rng.random(), 1.0], k)), 1.0]
        t = np.r_[0.0, np.sort(rng.choice([0.0, 0.5, rng.random(), 1.0], k)), 1.0]
        return f, t

    (f1, t1), (f2, t2) = curve(k1), curve(k2)
    got = abroca_batch(f1[None, :], t1[None, :], f2[None, :], t2[None, :])[0]
    assert got == pytest.approx(area_between_roc_curves(f1, t1, f2, t2), abs=1e-12)


def test_abroca_bootstrap_is_seeded_and_brackets_the_spread() -> None:
    kw = dict(y_true="two_year_recid", y_score="decile_score", protected="race", privileged={"race": "Caucasian"})
    a = score_report(pf.load_compas(), **kw)
    b = score_report(pf.load_compas(), **kw)
    c = score_report(pf.load_compas(), **kw, seed=7)
    ab = a.filter(metric="abroca")
    assert ab.equals(b.filter(metric="abroca"))
    assert not ab["value_lo"].equals(c.filter(metric="abroca")["value_lo"])
    rows = ab.filter(pl.col("group").is_not_null(), pl.col("group") != "Caucasian")
    assert (rows["value_lo"] <= rows["value_hi"]).all()
    assert rows["ci_method"].cast(pl.String).unique().to_list() == ["bootstrap_percentile"]
    att = a.filter(pl.col("group").is_null(), attribute="race", metric="abroca")
    assert att["value_lo"].item() <= att["value"].item() <= att["value_hi"].item()


def test_auc_spread_of_two_groups_is_the_pair_interval_through_abs() -> None:
    df = _data().filter(pl.col("g") != "c")
    rep = score_report(df, y_true="y", y_score="s", protected="g", privileged={"g": "a"})
    pair = rep.filter(group="b", metric="roc_auc")
    spread = rep.filter(pl.col("group").is_null(), attribute="g", metric="roc_auc")
    lo, hi = pair["difference_lo"].item(), pair["difference_hi"].item()
    want = (0.0 if lo <= 0 <= hi else min(abs(lo), abs(hi)), max(abs(lo), abs(hi)))
    assert (spread["difference_lo"].item(), spread["difference_hi"].item()) == pytest.approx(want, rel=1e-12)
    assert spread["p_value"].item() == pytest.approx(pair["p_value"].item(), rel=1e-9)  # Cochran's Q, 1 df = z²


def test_ci_none_keeps_the_old_schema() -> None:
    rep = score_report(_data(), y_true="y", y_score="s", protected="g", ci=None)
    assert rep.columns == ["attribute", "group", "metric", "value", "reference_group", "difference", "n"]
