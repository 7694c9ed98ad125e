"""The corrected between-group variance of rates (Lum, Zhang & Bower 2022, section 5; issue 39, item 4):
the report's row equals the formula computed by hand, is unbiased (near 0 when every group has the
same true rate, while the plain variance is not) and positive when the rates really differ."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import polfair as pf
from polfair.core.intervals.common import Segments
from polfair.core.intervals.variance import between_group_variance


def hand(p: list[float], n: list[float]) -> float:
    """The double-corrected estimator, written out with plain Python loops."""
    k = len(p)
    mean = sum(p) / k
    naive = sum((x - mean) ** 2 for x in p) / (k - 1)
    noise = sum(x * (1 - x) / (m - 1) for x, m in zip(p, n)) / k
    return naive - noise


def _frame() -> pl.DataFrame:
    rng = np.random.default_rng(3)
    sizes = {"a": 40, "b": 25, "c": 12, "d": 7, "e": 1}  # e: one row, no variance estimate
    g = np.concatenate([[k] * v for k, v in sizes.items()])
    rate = {"a": 0.3, "b": 0.5, "c": 0.6, "d": 0.2, "e": 1.0}
    y = (rng.random(len(g)) < 0.5).astype(int)
    p = (rng.random(len(g)) < np.array([rate[x] for x in g])).astype(int)
    return pl.DataFrame({"g": g, "y": y, "p": p})


def test_report_row_equals_the_formula_by_hand() -> None:
    rep = pf.fairness_report(_frame(), y_true="y", y_pred="p", protected="g")
    grp = rep.filter(pl.col("group").is_not_null(), pl.col("group") != "e", metric="selection_rate").sort("group")
    want = hand(grp["value"].to_list(), [float(x) for x in grp["n"].to_list()])
    row = rep.filter(pl.col("group").is_null(), attribute="g", metric="between_group_variance_selection_rate")
    assert row["value"].item() == pytest.approx(want, rel=1e-12)
    assert row["n_groups"].item() == 4
    assert "e (fewer than 2 rows)" in row["excluded_groups"].item()
    assert row["ci_method"].item() == "scaled_chi2"
    assert 0 <= row["value_lo"].item() <= max(row["value"].item(), 0) <= row["value_hi"].item()
    base = rep.filter(pl.col("group").is_null(), attribute="g", metric="between_group_variance_base_rate")
    assert base.height == 1
    no_ci = pf.fairness_report(_frame(), y_true="y", y_pred="p", protected="g", ci=None)
    assert no_ci.filter(metric="between_group_variance_selection_rate")["value"].item() == row["value"].item()


def test_labels_only_report_has_the_base_rate_row_only() -> None:
    rep = pf.fairness_report(_frame(), y_true="y", protected="g")
    names = set(rep["metric"].cast(pl.String).to_list())
    assert "between_group_variance_base_rate" in names
    assert "between_group_variance_selection_rate" not in names


def _simulate(rates: np.ndarray, sizes: np.ndarray, reps: int, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    k = len(rates)
    x = rng.binomial(sizes.astype(np.int64), rates, size=(reps, k)) / sizes
    seg = Segments(np.repeat(np.arange(reps), k), reps)
    return between_group_variance(x.ravel(), np.tile(sizes.astype(float), reps), seg, 1.959963984540054)


def test_near_zero_when_every_group_has_the_same_true_rate() -> None:
    sizes = np.linspace(5, 50, 30).round()
    out = _simulate(np.full(30, 0.3), sizes, 2000, 0)
    est, naive = out["value"], out["naive"]
    se = est.std() / np.sqrt(len(est))
    assert abs(est.mean()) < 4 * se  # unbiased: E = 0
    assert naive.mean() > 20 * se  # the plain variance is inflated by noise alone
    assert np.mean(out["lo"] <= 0) >= 0.95  # the interval keeps the true 0


def test_positive_and_unbiased_when_rates_differ() -> None:
    rates = np.linspace(0.1, 0.6, 20)
    sizes = np.full(20, 200.0)
    true = rates.var(ddof=1)
    out = _simulate(rates, sizes, 2000, 1)
    est = out["value"]
    assert est.mean() == pytest.approx(true, abs=4 * est.std() / np.sqrt(len(est)))
    assert np.mean(est > 0) == 1.0
    assert np.median(out["lo"]) > 0
    cover = np.mean((out["lo"] <= true) & (true <= out["hi"]))
    assert 0.93 <= cover <= 0.99


def test_kernel_matches_hand_per_family() -> None:
    p = np.array([0.2, 0.4, 0.6, 0.5, np.nan, 0.1, 0.9])
    n = np.array([11.0, 11.0, 11.0, 3.0, 5.0, 1.0, 4.0])
    seg = Segments(np.array([0, 0, 0, 1, 1, 1, 1]), 2)
    out = between_group_variance(p, n, seg)
    assert out["value"][0] == pytest.approx(hand([0.2, 0.4, 0.6], [11, 11, 11]), rel=1e-12)
    assert out["value"][1] == pytest.approx(hand([0.5, 0.9], [3, 4]), rel=1e-12)  # NaN rate and n = 1 left out
    assert out["k"].tolist() == [3.0, 2.0]
    one = between_group_variance(np.array([0.5]), np.array([10.0]), Segments(np.zeros(1), 1), 1.96)
    assert np.isnan(one["value"][0]) and np.isnan(one["lo"][0])


def test_two_groups_take_newcombes_interval_squared() -> None:
    statsmodels = pytest.importorskip("statsmodels.stats.proportion")
    out = between_group_variance(np.array([0.3, 0.52]), np.array([50.0, 25.0]), Segments(np.zeros(2), 1),
                                 1.959963984540054)  # fmt: skip
    lo, hi = statsmodels.confint_proportions_2indep(13, 25, 15, 50, method="newcomb")  # p1 − p2 = 0.52 − 0.30
    assert lo < 0 < hi  # the difference may be 0: so may V
    assert (out["lo"][0], out["hi"][0]) == pytest.approx((0.0, hi * hi / 2), rel=1e-9)
    out = between_group_variance(np.array([0.3, 0.52]), np.array([200.0, 100.0]), Segments(np.zeros(2), 1),
                                 1.959963984540054)  # fmt: skip
    lo, hi = statsmodels.confint_proportions_2indep(52, 100, 60, 200, method="newcomb")
    assert lo > 0
    assert (out["lo"][0], out["hi"][0]) == pytest.approx((lo * lo / 2, hi * hi / 2), rel=1e-9)
    assert out["value"][0] == pytest.approx(hand([0.3, 0.52], [200, 100]), rel=1e-12)



def test_limits_equal_every_family_bisected_bit_for_bit(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernel bisects only the families whose limits it returns and that are not at 0 or the top:
    the same floats as bisecting all (families of 1, 2 and many groups, equal and differing rates,
    NaN rates, one-row groups)."""
    from polfair.core.intervals import variance

    rng = np.random.default_rng(11)
    sizes = rng.choice([1, 2, 3, 5, 12, 40], size=400)
    codes = np.repeat(np.arange(sizes.size), sizes)
    n = rng.integers(1, 300, codes.size).astype(float)
    p = np.where(rng.random(codes.size) < 0.5, 0.4, rng.random(codes.size))  # half the families near equal rates
    p[rng.random(codes.size) < 0.03] = np.nan
    seg = Segments(codes, sizes.size)
    seen = {}
    real = variance._scaled_chi2_limits

    def spy(*args):  # type: ignore[no-untyped-def]
        seen["args"] = args
        return real(*args)

    monkeypatch.setattr(variance, "_scaled_chi2_limits", spy)
    out = between_group_variance(p, n, seg, z=1.959963984540054)
    *args, kept = seen["args"]
    lo, hi = variance._scaled_chi2_limits(*args, None)  # every family bisected
    k = out["k"]
    returned = (k > 2) & np.isfinite(out["value"])
    assert returned.sum() > 100 and ((lo > 0) & returned).sum() > 10  # bisected families are checked
    np.testing.assert_array_equal(out["lo"][returned], lo[returned])
    np.testing.assert_array_equal(out["hi"][returned], hi[returned])
