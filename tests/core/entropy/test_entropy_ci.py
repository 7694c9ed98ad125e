"""polfair.core.entropy.intervals: the analytic (second-order delta) intervals of the entropy indices.

Three references: a brute-force gradient and Hessian of the index as a function of every group
mean (numerical differences over all K means, so the O(K) rank-two algebra is checked term by
term); the cell bootstrap it approximates (``intervals.entropy_bootstrap`` with many replicates);
and hand cases (degenerate groups, one group, a mean benefit of 0).
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import polfair as pf
from polfair.core import intervals as iv
from polfair.core.entropy import intervals as ec

ALPHAS = [0.0, 0.5, 1.0, 2.0, 3.0]


def index_of_means(mu_g: np.ndarray, p: np.ndarray, a: float) -> float:
    """Between-group GE(α) of group means ``mu_g`` with shares ``p`` (aif360's GE(0) keeps 1/μ)."""
    mu = float(np.sum(p * mu_g))
    r = mu_g / mu
    if a == 1.0:
        return float(np.sum(p * r * np.log(r)))
    if a == 0.0:
        return float(-np.sum(p * np.log(r)) / mu)
    return float((np.sum(p * r**a) - 1.0) / (a * (a - 1.0)))


def brute_moments(mu_g: np.ndarray, p: np.ndarray, v: np.ndarray, a: float) -> tuple[float, float]:
    """``½ Σ H_gg v_g`` and ``sqrt(Σ g² v + ½ Σ H_gh² v_g v_h)`` from numerical derivatives."""
    k, h = mu_g.size, 1e-4
    f0 = index_of_means(mu_g, p, a)
    grad, hess = np.zeros(k), np.zeros((k, k))
    for i in range(k):
        e_i = np.eye(k)[i] * h
        grad[i] = (index_of_means(mu_g + e_i, p, a) - index_of_means(mu_g - e_i, p, a)) / (2 * h)
        for j in range(k):
            e_j = np.eye(k)[j] * h
            hess[i, j] = (
                index_of_means(mu_g + e_i + e_j, p, a) - index_of_means(mu_g + e_i - e_j, p, a)
                - index_of_means(mu_g - e_i + e_j, p, a) + index_of_means(mu_g - e_i - e_j, p, a)
            ) / (4 * h * h)  # fmt: skip
    del f0
    bias = 0.5 * float(np.sum(np.diag(hess) * v))
    var = float(np.sum(grad**2 * v) + 0.5 * np.sum(hess**2 * np.outer(v, v)))
    return bias, float(np.sqrt(var))


@pytest.mark.parametrize("a", ALPHAS)
def test_between_moments_equal_brute_force_derivatives(a: float) -> None:
    rng = np.random.default_rng(int(10 * a) + 3)
    k = 6
    nn = rng.integers(20, 400, k).astype(float)
    mean = rng.uniform(0.6, 1.4, k)
    x = nn * mean
    var = nn * rng.uniform(0.1, 0.6, k)
    bias, sd = ec._between_moments(nn, x, var, np.zeros(k, dtype=np.int64), 1, a)
    ref_bias, ref_sd = brute_moments(mean, nn / nn.sum(), var / nn**2, a)
    assert bias[0] == pytest.approx(ref_bias, rel=1e-5, abs=1e-12)
    assert sd[0] == pytest.approx(ref_sd, rel=1e-5)


def test_between_moments_at_the_null_have_positive_sd() -> None:
    # every group has the same mean: the gradient is 0, the second-order term carries the SD
    nn = np.array([100.0, 200.0, 300.0])
    bias, sd = ec._between_moments(nn, nn * 1.1, nn * 0.5, np.zeros(3, dtype=np.int64), 1, 2.0)
    ref_bias, ref_sd = brute_moments(np.full(3, 1.1), nn / nn.sum(), 0.5 / nn, 2.0)
    assert sd[0] > 0
    assert sd[0] == pytest.approx(ref_sd, rel=1e-5)
    assert bias[0] == pytest.approx(ref_bias, rel=1e-5)


def random_cells(seed: int, k: int, by: int = 2) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for m in range(by):
        for i in range(k):
            for s in ("F", "M"):
                n = int(rng.integers(5, 400))
                pr = rng.dirichlet([2 + i % 3, 3, 6, 2])
                tp, fp, tn, fn = rng.multinomial(n, pr)
                rows.append((f"m{m}", f"g{i}", s, tp, fp, tn, fn))
    return pl.DataFrame(rows, schema=["m", "g", "s", "tp_n", "fp_n", "tn_n", "fn_n"], orient="row")


@pytest.mark.parametrize(("seed", "alpha"), [(1, 2.0), (2, 0.5), (3, 3.0)])
def test_delta_limits_match_a_large_cell_bootstrap(seed: int, alpha: float) -> None:
    cells = random_cells(seed, k=8)
    kw = {"protected": ["g", "s"], "by": ["m"], "alpha": alpha}
    delta = iv.entropy_delta(cells, **kw)
    boot = iv.entropy_bootstrap(cells, **kw, n_boot=4000, seed=seed)
    both = delta.join(boot, on=["m", "attribute", "metric"], nulls_equal=True, suffix="_b")
    assert both.height == delta.height == boot.height == 2 * 3 * 5
    assert (both["value"] == both["value_b"]).all()
    rate = both.filter(~pl.col("metric").str.contains("coefficient_of_variation"))
    width = (rate["value_hi_b"] - rate["value_lo_b"]).to_numpy()
    assert (width > 0).all()
    for side in ("value_lo", "value_hi"):
        gap = np.abs(rate[side].to_numpy() - rate[f"{side}_b"].to_numpy())
        assert (gap <= 0.06 * width).all(), (side, float((gap / width).max()))


def test_cv_limits_are_the_ge2_limits_mapped() -> None:
    cells = random_cells(4, k=5)
    out = iv.entropy_delta(cells, protected=["g", "s"], by=["m"], alpha=2.0)
    ge = out.filter(pl.col("metric").str.ends_with("generalized_entropy_index")).sort("m", "attribute", "metric")
    cv = out.filter(pl.col("metric").str.ends_with("coefficient_of_variation")).sort("m", "attribute", "metric")
    np.testing.assert_allclose(cv["value_lo"].to_numpy(), np.sqrt(2 * ge["value_lo"].to_numpy()), rtol=1e-12)
    np.testing.assert_allclose(cv["value_hi"].to_numpy(), np.sqrt(2 * ge["value_hi"].to_numpy()), rtol=1e-12)


def test_degenerate_groups() -> None:
    # group "z": every row a false negative (benefit 0, cannot move under the bootstrap): Theil's
    # derivative is infinite there, its terms drop out; the limits stay finite
    cells = pl.DataFrame({
        "g": ["a", "b", "z"], "tp_n": [30, 10, 0], "fp_n": [10, 20, 0], "tn_n": [50, 60, 0], "fn_n": [10, 10, 7],
    })  # fmt: skip
    out = iv.entropy_delta(cells, protected=["g"], alpha=0.5)
    between = out.filter(pl.col("attribute") == "g")
    assert between["value_lo"].is_not_null().all()
    assert np.isfinite(between["value_hi"].to_numpy()).all()
    assert (between["value_lo"] <= between["value"]).all() and (between["value"] <= between["value_hi"]).all()
    # GE(0) of individuals is undefined with a benefit of 0 (ln 0): no limits, like the estimate
    ge0 = iv.entropy_delta(cells, protected=["g"], alpha=0.0).filter(pl.col("metric") == "generalized_entropy_index")
    assert ge0["value"].is_null().all() or not np.isfinite(ge0["value"].to_numpy()).all()
    assert ge0["value_lo"].is_null().all()
    # one group only: between-group indices are exactly 0 with a degenerate interval at 0
    one = iv.entropy_delta(cells.filter(pl.col("g") == "a"), protected=["g"])
    row = one.filter(pl.col("metric") == "between_group_generalized_entropy_index").row(0, named=True)
    assert (row["value"], row["value_lo"]) == (0.0, 0.0)
    assert row["value_hi"] == pytest.approx(0.0, abs=1e-15)
    # nobody benefits (mean benefit 0): undefined, no limits
    none = pl.DataFrame({"g": ["a", "b"], "tp_n": [0, 0], "fp_n": [0, 0], "tn_n": [0, 0], "fn_n": [4, 5]})
    assert iv.entropy_delta(none, protected=["g"])["value_lo"].is_null().all()


def test_individual_moments_match_the_bootstrap_per_alpha() -> None:
    cells = random_cells(5, k=3, by=1)
    for alpha in (0.5, 2.0, 3.0):
        d = iv.entropy_delta(cells, protected=["g", "s"], by=["m"], alpha=alpha)
        b = iv.entropy_bootstrap(cells, protected=["g", "s"], by=["m"], alpha=alpha, n_boot=4000, seed=9)
        pick = pl.col("metric").is_in(["generalized_entropy_index", "theil_index"])
        d, b = d.filter(pick).sort("metric"), b.filter(pick).sort("metric")
        width = (b["value_hi"] - b["value_lo"]).to_numpy()
        for side in ("value_lo", "value_hi"):
            assert (np.abs(d[side].to_numpy() - b[side].to_numpy()) <= 0.05 * width).all()


def test_report_uses_the_delta_intervals() -> None:
    df = pl.DataFrame({
        "g": ["a", "a", "b", "b", "b", "a", "b", "a"] * 20, "y": [1, 0, 1, 1, 0, 0, 1, 1] * 20,
        "p": [1, 0, 0, 1, 1, 0, 1, 0] * 20,
    })  # fmt: skip
    rep = pf.fairness_report(df, y_true="y", y_pred="p", protected=["g"])
    rep = rep.with_columns(pl.col("attribute", "metric", "ci_method").cast(pl.String))
    ent = rep.filter(pl.col("metric").str.contains("entropy|theil|coefficient_of_variation"))
    assert ent.height == 9
    assert (ent["ci_method"] == "delta_bc").all()
    ref = iv.entropy_delta(pf.confusion_counts(df, y_true="y", y_pred="p", protected=["g"]), protected=["g"])
    got = ent.select("attribute", "metric", "value_lo", "value_hi").sort("attribute", "metric", nulls_last=True)
    want = ref.select("attribute", "metric", "value_lo", "value_hi").sort("attribute", "metric", nulls_last=True)
    assert got.equals(want)
