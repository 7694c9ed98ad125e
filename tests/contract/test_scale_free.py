"""Every report is free of the order of the rows and of the scale of the weights (issue 30).

A property test (hypothesis): the rows shuffled and the weights multiplied by a power of ten from
1e-200 to 1e200 give every report (classification, regression, scores, reweighing) equal to
rounding. Exceptions by definition, named: the counts (``num_*``, ``observed``/``expected``: Σw,
scaled by the factor) and the smoothed empirical differential fairness (its Dirichlet smoothing adds
a constant to weighted counts, as aif360's does).
"""

from __future__ import annotations

import warnings

import numpy as np
import polars as pl
import pytest
from hypothesis import example, given, note, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import polfair as pf

SCALES = [1e-200, 1e-150, 1e-60, 1.0, 1e60, 1e150, 1e200]


@st.composite
def frames(draw: st.DrawFn) -> pl.DataFrame:
    n = draw(st.integers(16, 60))
    seed = draw(st.integers(0, 2**31 - 1))
    note(f"frame: n={n}, seed={seed}")
    return frame_of(n, seed)


def frame_of(n: int, seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    y = rng.normal(size=n)
    return pl.DataFrame({
        "g": rng.choice(["a", "b", "c"], n), "k": rng.choice(["x", "y"], n),
        "label": rng.integers(0, 2, n), "pred": rng.integers(0, 2, n), "s": rng.random(n).round(2),
        "y": y, "p": y + rng.normal(scale=0.5, size=n), "w": rng.choice([0.0, 0.25, 0.5, 1.0, 3.0, 7.5], n),
    })  # fmt: skip


def reports(df: pl.DataFrame) -> dict[str, pl.DataFrame]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # small groups: size warnings alike at every scale
        return {
            "fairness": pf.fairness_report(df, y_true="label", y_pred="pred", protected=["g", "k"], weight="w"),
            "regression": pf.regression_report(df, y_true="y", y_pred="p", protected=["g", "k"], weight="w"),
            "scores": pf.score_report(df, y_true="label", y_score="s", protected="g", weight="w"),
            "reweighing": pf.reweighing(df, y_true="label", protected=["g", "k"], weight="w").table,
        }


def _scaled(name: str, rep: pl.DataFrame) -> tuple[pl.Expr, pl.Expr]:
    """Rows whose value is Σw (times the scale), rows free of the scale (the rest compared as is)."""
    if name == "reweighing":
        return pl.lit(True), pl.lit(True)
    metric = pl.col("metric").cast(pl.String)
    return metric.str.starts_with("num_"), ~metric.str.contains("differential_fairness")


@settings(max_examples=15, deadline=None)
@given(df=frames(), scale=st.sampled_from(SCALES), order=st.integers(0, 2**31 - 1))
# found by this test: a perfect separation's DeLong variance was 0 in one row order and 1e-33 in another,
# which decided whether the group entered Cochran's Q; variances below rounding are now 0
@example(df=frame_of(16, 3865), scale=1e-150, order=0)
# found by this test: a difference of 1e-16 (summation order) flipped harm from "none" to "reference"
@example(df=frame_of(17, 26), scale=1e-200, order=0)
def test_every_report_is_free_of_row_order_and_weight_scale(df: pl.DataFrame, scale: float, order: int) -> None:
    base = reports(df)
    moved = reports(df.sample(fraction=1.0, shuffle=True, seed=order).with_columns(pl.col("w") * scale))
    for name, want in base.items():
        got = moved[name]
        counts, free = _scaled(name, want)
        if name == "reweighing":
            assert_frame_equal(got.drop("observed", "expected"), want.drop("observed", "expected"), check_exact=False,
                               rel_tol=1e-9, abs_tol=1e-12)  # fmt: skip
            for c in ("observed", "expected"):
                assert got[c].to_list() == pytest.approx([v * scale for v in want[c].to_list()], rel=1e-9), c
            continue
        keep = free & ~counts
        try:
            assert_frame_equal(got.filter(keep), want.filter(keep), check_exact=False, rel_tol=1e-9, abs_tol=1e-9)
        except AssertionError as exc:
            raise AssertionError(f"{name}: {exc}") from None
        a, b = got.filter(counts)["value"], want.filter(counts)["value"]
        assert a.is_null().to_list() == b.is_null().to_list(), name
        assert a.drop_nulls().to_list() == pytest.approx([v * scale for v in b.drop_nulls().to_list()], rel=1e-9)


@pytest.mark.parametrize("scale", [1e-200, 1e200])
def test_the_issue_cases_at_the_extremes(scale: float) -> None:
    """n_eff, intervals and AUC were null or NaN at 1e-200 (and an error at 1e200) on main."""
    rng = np.random.default_rng(0)
    n = 400
    df = pl.DataFrame({"y": rng.integers(0, 2, n), "p": rng.integers(0, 2, n), "g": rng.choice(["a", "b"], n),
                       "w": rng.uniform(0.5, 2, n), "s": rng.random(n)})  # fmt: skip
    for door in (
        lambda d: pf.fairness_report(d, y_true="y", y_pred="p", protected="g", weight="w"),
        lambda d: pf.score_report(d, y_true="y", y_score="s", protected="g", weight="w"),
    ):
        one, got = door(df), door(df.with_columns(pl.col("w") * scale))
        metric = pl.col("metric").cast(pl.String)
        free = ~metric.str.starts_with("num_") & ~metric.str.contains("differential_fairness")
        assert_frame_equal(got.filter(free), one.filter(free), check_exact=False, rel_tol=1e-9, abs_tol=1e-12)
        assert got.filter(free)["n_eff"].null_count() == one.filter(free)["n_eff"].null_count()
    auc = pf.score_report(df.with_columns(pl.col("w") * scale), y_true="y", y_score="s", protected="g", weight="w")
    assert auc.filter(metric="roc_auc")["value"].is_nan().sum() == 0


def test_squares_beyond_every_unit_are_null_with_a_warning_naming_the_weight() -> None:
    df = pl.DataFrame({"y": [1, 0, 1, 0], "p": [1, 1, 0, 0], "g": ["a", "a", "b", "b"], "w": [1e300] * 4})
    with pytest.warns(pf.WeightRangeWarning, match="weight='w'.*cannot be held in Float64"):
        rep = pf.fairness_report(df, y_true="y", y_pred="p", protected="g", weight="w")
    assert rep.filter(pl.col("group").is_not_null(), metric="selection_rate")["value"].to_list() == [1.0, 0.0]


def room_frame(n: int, seed: int) -> pl.DataFrame:
    """Rows for every room; outcomes, predictions and losses are multiples of 1/8 below 64, so the
    same values plus 1e12 are exact in Float64 (the shift changes nothing but the level).
    """
    rng = np.random.default_rng(seed)
    y = np.round(rng.normal(8.0, 3.0, n) * 8) / 8
    pa = rng.uniform(0, 1, n).round(3)
    return pl.DataFrame({
        "g": rng.choice(["a", "b", "c"], n), "label": rng.integers(0, 2, n), "pred": rng.integers(0, 2, n),
        "s": rng.random(n).round(2), "y": y, "p": y + np.round(rng.normal(0, 1.0, n) * 8) / 8,
        "loss": np.round(rng.gamma(2.0, 1.0, n) * 8) / 8, "pa": pa, "pb": (1.0 - pa).round(3),
        "w": rng.choice([0.25, 0.5, 1.0, 3.0, 7.5], n),
    })  # fmt: skip


def _rooms(df: pl.DataFrame) -> dict[str, pl.DataFrame]:
    proba = {"race": {"a": "pa", "b": "pb"}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {
            "estimated": pf.fairness_report(df, y_true="label", y_pred="pred", weight="w", protected_proba=proba),
            "estimated_scores": pf.score_report(df, y_true="label", y_score="s", weight="w", protected_proba=proba),
            "regression": pf.regression_report(df, y_true="y", y_pred="p", protected="g", weight="w"),
            "slices": pf.slice_scan(df, features=["g"], errors="loss", weight="w", max_level=1, k=50, min_support=1,
                                    alpha=1.0, p_adjust=None),  # fmt: skip
        }


#: What a 1e12 shift of the outcomes leaves unchanged (to rounding): the error metrics and their
#: statistics. r² and the differences of mean outcomes are not in this list: at 1e12 the cell table's
#: means are rounded to 1e12's precision before they are merged (issue 40, open; see the xfail below).
_SHIFT_FREE = ("mean_error", "mean_absolute_error", "mean_squared_error", "root_mean_squared_error")


@settings(max_examples=10, deadline=None)
@given(n=st.integers(40, 120), seed=st.integers(0, 2**31 - 1), scale=st.sampled_from(SCALES),
       shift=st.sampled_from([0.0, 1e12]))  # fmt: skip
def test_every_room_is_free_of_the_weights_scale_and_the_outcomes_level(n: int, seed: int, scale: float,
                                                                        shift: float) -> None:  # fmt: skip
    """Weights times 1e-200 ... 1e200 and outcomes/losses plus 1e12: reports, scores and estimated
    groups (weights), regression (weights; the error metrics also under the shift) and slices
    (weights and the shift: their tests and intervals of the difference) are unchanged to 1e-9
    (p-values to 1e-6 relative), as docs/contract.md states (the smoothed EDF excepted).
    """
    df = room_frame(n, seed)
    base = _rooms(df)
    moved = _rooms(df.with_columns(pl.col("w") * scale, pl.col("y") + shift, pl.col("p") + shift,
                                   pl.col("loss") + shift))  # fmt: skip
    metric = pl.col("metric").cast(pl.String)
    for name in ("estimated", "estimated_scores", "regression"):
        keep = ~metric.str.starts_with("num_") & ~metric.str.contains("differential_fairness")
        if name == "regression" and shift:
            keep = keep & metric.is_in(_SHIFT_FREE)
        want, got = base[name].filter(keep), moved[name].filter(keep)
        assert got.height == want.height > 0, name
        for c in ("value", "value_lo", "value_hi", "difference", "difference_lo", "difference_hi", "n_eff"):
            if c in want.columns:
                g, w = got[c].fill_null(np.nan).to_list(), want[c].fill_null(np.nan).to_list()
                assert g == pytest.approx(w, rel=1e-9, abs=1e-9, nan_ok=True), (name, c)
        g, w = got["p_value"].fill_null(np.nan).to_list(), want["p_value"].fill_null(np.nan).to_list()
        assert g == pytest.approx(w, rel=1e-6, abs=1e-12, nan_ok=True), (name, "p_value")
    want, got = base["slices"], moved["slices"]
    common = sorted(set(want["slice"].to_list()) & set(got["slice"].to_list()))
    assert common or not want.height
    w, g = (t.filter(pl.col("slice").is_in(common)).sort("slice") for t in (want, got))
    for c in ("n", "n_eff", "difference", "difference_lo", "difference_hi"):
        assert g[c].fill_null(np.nan).to_list() == pytest.approx(w[c].fill_null(np.nan).to_list(), rel=1e-9, abs=1e-9,
                                                                nan_ok=True), ("slices", c)  # fmt: skip
    assert g["p_value"].fill_null(np.nan).to_list() == pytest.approx(w["p_value"].fill_null(np.nan).to_list(), rel=1e-6,
                                                                     abs=1e-12, nan_ok=True)  # fmt: skip
    if not shift:
        assert g["error_mean"].to_list() == pytest.approx(w["error_mean"].to_list(), rel=1e-12)


def _welch_p(rep: pl.DataFrame, group: str) -> tuple[float, str]:
    row = rep.filter((pl.col("group") == group) & (pl.col("metric").cast(pl.String) == "mean_outcome")).row(0, named=True)
    return row["p_value"], row["reference_group"]


@pytest.mark.parametrize("level", [1e9, 1e12])
@pytest.mark.parametrize("order", [0, 1, 2])
def test_regression_r2_and_mean_outcome_difference_at_a_large_level(level: float, order: int) -> None:
    """Issue 40: the cell table's means were rounded to the level's precision (1e12: an ulp of 1.2e-4)
    before Chan's merge and before a difference of two group means was taken (r² 1.4e-6 off, order
    dependent; the Welch p of a mean-outcome difference 0.668 for 0.662). The shift is exact
    (room_frame), so the oracle is scikit-learn's r² and scipy's Welch test on the unshifted rows
    (scikit-learn itself on the shifted rows rounds its mean: 2.4e-11 off here).
    """
    from scipy import stats
    from sklearn.metrics import r2_score

    df = room_frame(300, 3)
    rows = df.sample(fraction=1.0, shuffle=True, seed=order) if order else df
    rep = pf.regression_report(rows.with_columns(pl.col("y") + level, pl.col("p") + level), y_true="y", y_pred="p",
                               protected="g")  # fmt: skip
    r2 = rep.filter(pl.col("metric").cast(pl.String) == "r2_score").select("attribute", "group", "value")
    assert r2.filter(pl.col("attribute").is_null())["value"][0] == pytest.approx(r2_score(df["y"], df["p"]), rel=1e-12)
    for g in ("a", "b", "c"):
        sub = df.filter(pl.col("g") == g)
        got = r2.filter(pl.col("group") == g)["value"][0]
        assert got == pytest.approx(r2_score(sub["y"], sub["p"]), rel=1e-12), g
    compared = 0
    for g in ("a", "b", "c"):
        p, ref = _welch_p(rep, g)
        if p is None:
            continue
        compared += 1
        a, b = (df.filter(pl.col("g") == x)["y"].to_numpy() for x in (g, ref))
        assert p == pytest.approx(stats.ttest_ind(a, b, equal_var=False).pvalue, rel=1e-12), (g, ref)
        diff = rep.filter((pl.col("group") == g) & (pl.col("metric").cast(pl.String) == "mean_outcome"))["difference"][0]
        assert diff == pytest.approx(a.mean() - b.mean(), rel=1e-12, abs=1e-13), (g, ref)
    assert compared == 2


def test_regression_cell_table_of_an_earlier_polfair_reads_lo_zero() -> None:
    """The compensation columns are additive (docs/schema.md): a table without them is a table whose
    means are exact Float64 (lo = 0), merged and reported as before."""
    from polfair.core.regression import REGRESSION_LO_COLUMNS, merge_regression_cells, regression_report_from_cells

    df = room_frame(120, 5)
    cells = pf.regression_counts(df, y_true="y", y_pred="p", protected="g")
    old = cells.drop(REGRESSION_LO_COLUMNS)
    assert set(REGRESSION_LO_COLUMNS) <= set(cells.columns)
    want = regression_report_from_cells(cells, protected="g")
    got = regression_report_from_cells(old, protected="g")
    assert_frame_equal(got, want, check_exact=False, rel_tol=1e-12, abs_tol=1e-12)
    merged = merge_regression_cells([old, cells])
    assert merged.columns == cells.columns
    assert merged["n"].to_list() == [2 * n for n in cells["n"].to_list()]
    acc = pf.RegressionAccumulator(y_true="y", y_pred="p", protected="g").load_state(old)
    acc.update(df)
    assert acc.state.columns == cells.columns
    assert_frame_equal(acc.state, merged, check_exact=False, rel_tol=1e-12, abs_tol=1e-12)


@pytest.mark.parametrize("reference", [None, "overall"])
def test_weighted_regression_report_is_free_of_a_1e12_level(reference: str | None) -> None:
    """Weighted, shuffled, every attribute set: a shift of 1e12 (exact, room_frame) leaves every difference,
    interval of a difference and p-value, and every value but the two levels' own (mean outcome and
    prediction), as at level 0 (issue 40: r² was 4.8e-9 off, the attribute spread of the mean outcome
    7.2e-6 off)."""
    df = room_frame(300, 7).with_columns(k=pl.Series(np.random.default_rng(7).choice(["x", "y"], 300)))
    kw = dict(y_true="y", y_pred="p", protected=["g", "k"], weight="w", reference=reference)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = pf.regression_report(df, **kw)
        got = pf.regression_report(df.sample(fraction=1.0, shuffle=True, seed=1)
                                   .with_columns(pl.col("y") + 1e12, pl.col("p") + 1e12), **kw)  # fmt: skip
    level = pl.col("metric").cast(pl.String).str.contains("mean_outcome|mean_prediction")
    # the prediction histogram's bins are relative (0.27% wide): at 1e12 ± 64 every prediction is in one bin,
    # so the KS distance is not free of the level by design (its bound says so)
    ks = pl.col("metric").cast(pl.String).str.starts_with("ks_distance")
    want, got = want.filter(~ks), got.filter(~ks)
    cols = ["difference", "difference_lo", "difference_hi", "p_value"]
    for c in cols:
        assert got[c].fill_null(np.nan).to_list() == pytest.approx(want[c].fill_null(np.nan).to_list(), rel=1e-9,
                                                                  abs=1e-12, nan_ok=True), c  # fmt: skip
    for c in ("value", "value_lo", "value_hi", "ratio"):
        g, w = got.filter(~level)[c], want.filter(~level)[c]
        assert g.fill_null(np.nan).to_list() == pytest.approx(w.fill_null(np.nan).to_list(), rel=1e-9, abs=1e-12,
                                                              nan_ok=True), c  # fmt: skip
