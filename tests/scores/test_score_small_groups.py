"""Small groups and the boundary in the score report (issue 39, item 3): no AUC, average precision or
Brier interval of zero width at perfect separation, and no p-value smaller than the group's rows allow."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize, stats

from polfair.scores import score_report
from polfair.scores._uncertainty import exact_rank_p_floor, hanley_mcneil_variance, newcombe_auc_interval

Z = float(stats.norm.ppf(0.975))


def _separated(exact_scores: bool = False) -> pl.DataFrame:
    """400 ordinary rows and the issue's 8-row group: 6 positives above 2 negatives (AUC 1)."""
    rng = np.random.default_rng(1)
    n = 400
    y = np.r_[rng.random(n) < 0.4, [1, 1, 1, 1, 1, 1, 0, 0]].astype(int)
    tiny = [1.0] * 6 + [0.0] * 2 if exact_scores else [0.9, 0.8, 0.85, 0.95, 0.7, 0.75, 0.1, 0.2]
    s = np.r_[np.clip(rng.normal(0.35 + 0.3 * y[:n], 0.2), 0, 1), tiny]
    return pl.DataFrame({"g": ["big"] * n + ["tiny"] * 8, "y": y, "s": s})


def _row(rep: pl.DataFrame, metric: str, group: str = "tiny") -> dict[str, object]:
    return rep.filter(group=group, metric=metric).row(0, named=True)


def test_perfectly_separated_8_rows_get_a_wide_auc_interval_and_an_honest_p_value() -> None:
    rep = score_report(_separated(), y_true="y", y_score="s", protected="g", privileged={"g": "big"})
    row = _row(rep, "roc_auc")
    assert row["value"] == 1.0
    assert row["value_hi"] == 1.0
    assert row["value_lo"] < 0.9  # was [1.000, 1.000]: DeLong's variance is 0 at perfect separation
    lo, hi = newcombe_oracle(1.0, 6, 2)
    assert row["value_lo"] == pytest.approx(lo, abs=1e-12)
    assert row["ci_method"] == "newcombe_score"
    # 6 positives and 2 negatives: 28 arrangements, the most extreme has 1/28 one-sided (was 4.9e-17)
    assert row["p_value"] >= 2 / math.comb(8, 6)
    assert row["p_value_adjusted"] >= row["p_value"]
    assert row["difference_lo"] < 0 < row["difference_hi"]  # a 1-AUC group of 8 rows is no evidence
    spread = rep.filter(pl.col("group").is_null(), attribute="g", metric="roc_auc").row(0, named=True)
    assert spread["p_value"] >= 2 / math.comb(8, 6)


def test_exact_zero_one_scores_keep_positive_widths_for_ap_and_brier() -> None:
    rep = score_report(_separated(exact_scores=True), y_true="y", y_score="s", protected="g", privileged={"g": "big"})
    ap, brier = _row(rep, "average_precision"), _row(rep, "brier_score")
    assert ap["value"] == 1.0 and brier["value"] == 0.0
    assert (ap["value_lo"], ap["value_hi"]) == pytest.approx((6 / (6 + Z * Z), 1.0), rel=1e-12)  # Wilson, n = 6
    assert ap["ci_method"] == "score"
    assert brier["value_lo"] == 0.0
    assert brier["value_hi"] == pytest.approx(Z * Z / (8 + Z * Z), rel=1e-12)  # Wilson at 0, n = 8
    assert brier["ci_method"] == "score"
    assert ap["difference_lo"] < ap["difference"] < ap["difference_hi"]  # MOVER from the Wilson limits


def test_large_groups_keep_delong() -> None:
    rep = score_report(_separated(), y_true="y", y_score="s", protected="g", privileged={"g": "big"})
    assert _row(rep, "roc_auc", "big")["ci_method"] == "delong"


def newcombe_oracle(a: float, m: float, n: float) -> tuple[float, float]:
    big = (m + n) / 2

    def f(t: float) -> float:
        v = t * (1 - t) / (m * n) * (1 + (big - 1) * ((1 - t) / (2 - t) + t / (1 + t)))
        return (a - t) ** 2 - Z * Z * v

    # f is 0 at 0 and 1 (V is): start the search just inside, where f < 0
    lo = 0.0 if a <= 0 else optimize.brentq(f, 0.0, min(a, 1 - 1e-13), xtol=1e-15)
    hi = 1.0 if a >= 1 else optimize.brentq(f, max(a, 1e-13), 1.0, xtol=1e-15)
    return lo, hi


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 60), st.integers(1, 60), st.data())
def test_newcombe_interval_equals_a_root_finder(m: int, n: int, data: st.DataObject) -> None:
    k = data.draw(st.integers(0, m * n))  # an attainable AUC, the boundaries included
    a = k / (m * n)
    lo, hi = newcombe_auc_interval(np.array([a]), np.array([float(m)]), np.array([float(n)]), Z)
    want = newcombe_oracle(a, m, n)
    assert (lo[0], hi[0]) == pytest.approx(want, abs=1e-12)
    assert lo[0] <= a <= hi[0]
    assert hi[0] - lo[0] > 0


def test_hanley_mcneil_variance_is_the_1982_formula_at_equal_sizes() -> None:
    # m = n: Newcombe's substitution changes nothing; Hanley & McNeil's Q1, Q2 form
    t, m = 0.8, 12.0
    q1, q2 = t / (2 - t), 2 * t * t / (1 + t)
    hm = (t * (1 - t) + (m - 1) * (q1 - t * t) + (m - 1) * (q2 - t * t)) / (m * m)
    assert float(hanley_mcneil_variance(np.array(t), np.array(m), np.array(m))) == pytest.approx(hm, rel=1e-12)


def test_exact_rank_floor_is_two_over_the_arrangements() -> None:
    m = np.array([6.0, 1.0, 30.0, 0.0, 2.0])
    n = np.array([2.0, 1.0, 30.0, 5.0, 1.0])
    got = exact_rank_p_floor(m, n)
    want = [min(1.0, 2 / math.comb(int(a + b), int(a))) for a, b in zip(m, n)]
    np.testing.assert_allclose(got, want, rtol=1e-10)


def test_a_two_row_group_cannot_be_significant() -> None:
    # one positive above one negative: 2 orderings, so no two-sided p below 2/2 = 1
    df = pl.concat([_separated().filter(g="big"),
                    pl.DataFrame({"g": ["pair", "pair"], "y": [1, 0], "s": [0.99, 0.01]})])  # fmt: skip
    rep = score_report(df, y_true="y", y_score="s", protected="g", privileged={"g": "big"})
    row = _row(rep, "roc_auc", "pair")
    assert row["value"] == 1.0 and row["value_lo"] < 0.5  # Newcombe's interval where DeLong has none (m = n = 1)
    assert row["p_value"] == 1.0
