"""polfair.compat.yardstick: yardstick-style groupwise metrics against NumPy references and fairlearn."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import polfair as pf
from polfair.compat.yardstick import (
    GROUPWISE,
    add_groupwise_rows,
    demographic_parity,
    diff_range,
    equal_opportunity,
    equalized_odds,
    groupwise_metric,
    max_abs_difference_to_reference,
    ratio_range,
)
from polfair.exceptions import PolfairError

# ---- naive reference ------------------------------------------------------------------------


def ref_rates(y, p, mask):
    """selection rate, TPR, TNR of the rows in mask (NaN where undefined)."""
    y, p = y[mask], p[mask]
    pos, neg = y == 1, y == 0
    sel = p.mean() if len(p) else math.nan
    tpr = (p[pos] == 1).mean() if pos.any() else math.nan
    tnr = (p[neg] == 0).mean() if neg.any() else math.nan
    return {"selection_rate": sel, "true_positive_rate": tpr, "true_negative_rate": tnr}


def ref_range(vals):
    if any(math.isnan(v) for v in vals):
        return math.nan
    return max(vals) - min(vals)


def close(a, b):
    a = math.nan if a is None else a
    return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, abs=1e-12)


frames = st.integers(min_value=2, max_value=60).flatmap(
    lambda n: st.fixed_dictionaries(
        {
            "y": st.lists(st.integers(0, 1), min_size=n, max_size=n),
            "p": st.lists(st.integers(0, 1), min_size=n, max_size=n),
            "g": st.lists(st.sampled_from(["a", "b", "c"]), min_size=n, max_size=n),
            "outer": st.lists(st.sampled_from([0, 1]), min_size=n, max_size=n),
        }
    )
)


@settings(max_examples=40, deadline=None)
@given(frames)
def test_builtins_match_reference_per_by_group(d):
    df = pl.DataFrame(d)
    rep = pf.fairness_report(df, y_true="y", y_pred="p", protected="g", by="outer",
                             user_metrics=["demographic_parity", "equal_opportunity", "equalized_odds"])  # fmt: skip
    y, p, g, b = (np.array(d[k]) for k in ("y", "p", "g", "outer"))
    for bv in np.unique(b):
        groups = [gv for gv in ("a", "b", "c") if ((g == gv) & (b == bv)).any()]
        rates = [ref_rates(y, p, (g == gv) & (b == bv)) for gv in groups]
        want = {
            "demographic_parity": ref_range([r["selection_rate"] for r in rates]),
            "equal_opportunity": ref_range([r["true_positive_rate"] for r in rates]),
        }
        tpr_r = ref_range([r["true_positive_rate"] for r in rates])
        tnr_r = ref_range([r["true_negative_rate"] for r in rates])
        want["equalized_odds"] = math.nan if math.isnan(tpr_r) or math.isnan(tnr_r) else max(tpr_r, tnr_r)
        for name, v in want.items():
            row = rep.filter(pl.col("outer") == bv, pl.col("metric") == name)
            assert row.height == 1
            assert row["group"].item() is None and row["attribute"].item() == "g"
            assert row["n"].item() == int((b == bv).sum())
            assert close(row["value"].item(), v), (name, bv, row["value"].item(), v)


@settings(max_examples=30, deadline=None)
@given(frames)
def test_custom_expression_aggregates(d):
    df = pl.DataFrame(d)
    std = groupwise_metric("selection_rate", name="sel_std", aggregate=pl.col("value").std())
    wmean = groupwise_metric(
        ["selection_rate", "base_rate"], name="wmean",
        aggregate=(pl.col("value") * pl.col("n")).sum() / pl.col("n").sum(), combine="mean",
    )  # fmt: skip
    ratio = groupwise_metric("selection_rate", name="sel_ratio", aggregate=ratio_range)
    rep = pf.fairness_report(df, y_true="y", y_pred="p", protected="g", user_metrics=[std, wmean, ratio])
    y, p, g = (np.array(d[k]) for k in ("y", "p", "g"))
    groups = [gv for gv in ("a", "b", "c") if (g == gv).any()]
    sel = np.array([p[g == gv].mean() for gv in groups])
    base = np.array([y[g == gv].mean() for gv in groups])
    ns = np.array([(g == gv).sum() for gv in groups])
    got = dict(rep.filter(pl.col("group").is_null(), pl.col("attribute") == "g").select("metric", "value").rows())
    want_std = float(np.std(sel, ddof=1)) if len(sel) > 1 else math.nan
    assert close(got["sel_std"], want_std)
    assert close(got["wmean"], float(((sel * ns).sum() / ns.sum() + (base * ns).sum() / ns.sum()) / 2))
    want_ratio = math.nan if sel.max() == 0 else float(sel.min() / sel.max())
    assert close(got["sel_ratio"], want_ratio)


def _fairlearn_case(seed, n=3000):
    rng = np.random.default_rng(seed)
    g = rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2])
    ctrl = rng.choice(["x", "y"], n)
    y = rng.integers(0, 2, n)
    p = (rng.random(n) < np.where(g == "a", 0.6, 0.4)).astype(int)
    return pl.DataFrame({"y": y, "p": p, "g": g, "ctrl": ctrl})


@pytest.mark.parametrize("seed", [0, 1])
def test_equals_fairlearn(seed):
    fm = pytest.importorskip("fairlearn.metrics")
    df = _fairlearn_case(seed)
    y, p, g, ctrl = (df[c].to_numpy() for c in ("y", "p", "g", "ctrl"))
    rep = pf.fairness_report(df, y_true="y", y_pred="p", protected="g", user_metrics=list(GROUPWISE))
    got = dict(rep.filter(pl.col("group").is_null(), pl.col("attribute") == "g").select("metric", "value").rows())
    assert got["demographic_parity"] == pytest.approx(fm.demographic_parity_difference(y, p, sensitive_features=g))
    assert got["equalized_odds"] == pytest.approx(fm.equalized_odds_difference(y, p, sensitive_features=g))
    assert got["equal_opportunity"] == pytest.approx(fm.equal_opportunity_difference(y, p, sensitive_features=g))
    # by= gives one value per outer group, as fairlearn's control features
    rep = pf.fairness_report(df, y_true="y", y_pred="p", protected="g", by="ctrl", user_metrics=["demographic_parity"])
    mf = fm.MetricFrame(metrics=fm.selection_rate, y_true=y, y_pred=p, sensitive_features=g, control_features=ctrl)
    ours = dict(rep.filter(pl.col("metric") == "demographic_parity").select("ctrl", "value").rows())
    for level, v in mf.difference().items():
        assert ours[level] == pytest.approx(v)


def test_max_abs_difference_to_reference_uses_the_report_reference():
    df = pl.DataFrame({"y": [1] * 9, "p": [1, 1, 1, 1, 0, 0, 1, 0, 0], "g": list("aaabbbccc")})
    gm = groupwise_metric("selection_rate", name="gap_to_ref", aggregate=max_abs_difference_to_reference)
    rep = pf.fairness_report(df, y_true="y", y_pred="p", protected="g", privileged={"g": "b"}, user_metrics=[gm])
    row = rep.filter(pl.col("metric") == "gap_to_ref")
    # rates a=1, b=1/3, c=1/3; reference b -> max |diff| = 2/3
    assert row["value"].item() == pytest.approx(2 / 3)
    assert row["reference_group"].item() == "b"
    rep = pf.fairness_report(df, y_true="y", y_pred="p", protected="g", privileged={"g": "a"}, user_metrics=[gm])
    assert rep.filter(pl.col("metric") == "gap_to_ref")["value"].item() == pytest.approx(2 / 3)
    assert rep.filter(pl.col("metric") == "gap_to_ref")["reference_group"].item() == "a"


def test_undefined_group_makes_builtins_null_not_zero():
    # group b has no positive labels: its TPR is undefined
    df = pl.DataFrame({"y": [1, 1, 0, 0], "p": [1, 0, 1, 0], "g": ["a", "a", "b", "b"]})
    rep = pf.fairness_report(df, y_true="y", y_pred="p", protected="g", user_metrics=list(GROUPWISE))
    got = dict(rep.filter(pl.col("group").is_null(), pl.col("attribute") == "g").select("metric", "value").rows())
    assert got["equal_opportunity"] is None
    assert got["equalized_odds"] is None
    assert got["demographic_parity"] == 0.0


def test_report_rows_kept_in_order_and_attribute_rows_follow():
    df = _fairlearn_case(3, n=300)
    plain = pf.fairness_report(df, y_true="y", y_pred="p", protected=["g", "ctrl"], by=None)
    rep = pf.fairness_report(df, y_true="y", y_pred="p", protected=["g", "ctrl"], user_metrics=[demographic_parity])
    assert_frame_equal(rep.filter(pl.col("metric") != "demographic_parity"), plain)
    dp = rep.filter(pl.col("metric") == "demographic_parity")
    assert dp["attribute"].to_list() == ["g", "ctrl", "g & ctrl"]
    # each groupwise row sits after its attribute set's attribute-level rows, before its group rows
    idx = rep.with_row_index("i")
    for attr in ("g", "ctrl", "g & ctrl"):
        mine = idx.filter(pl.col("metric") == "demographic_parity", pl.col("attribute") == attr)["i"].item()
        attr_rows = idx.filter(pl.col("attribute") == attr, pl.col("group").is_null())["i"]
        group_rows = idx.filter(pl.col("attribute") == attr, pl.col("group").is_not_null())["i"]
        assert attr_rows.max() == mine and group_rows.min() > mine


def test_add_groupwise_rows_on_merged_counts_and_labels_only():
    df = _fairlearn_case(4, n=200)
    parts = [pf.confusion_counts(d, y_true="y", y_pred="p", protected="g") for d in (df[:100], df[100:])]
    cells = pf.merge_counts(parts).collect()
    rep = add_groupwise_rows(pf.report_from_counts(cells, protected=["g"]), [equalized_odds])
    direct = pf.fairness_report(df, y_true="y", y_pred="p", protected="g", user_metrics=[equalized_odds])
    a = rep.filter(pl.col("metric") == "equalized_odds")["value"].item()
    assert a == pytest.approx(direct.filter(pl.col("metric") == "equalized_odds")["value"].item())
    # labels only: base-rate groupwise metrics work, prediction metrics are a clear error
    base = groupwise_metric("base_rate", name="base_rate_gap")
    rep = pf.fairness_report(df, y_true="y", protected="g", user_metrics=[base])
    assert rep.filter(pl.col("metric") == "base_rate_gap")["value"].item() is not None
    with pytest.raises(PolfairError, match="labels-only audit"):
        pf.fairness_report(df, y_true="y", protected="g", user_metrics=[demographic_parity])


def test_validation_errors():
    with pytest.raises(PolfairError, match="Did you mean 'selection_rate'"):
        groupwise_metric("selection_rat", name="x")
    with pytest.raises(PolfairError, match="at least one"):
        groupwise_metric([], name="x")
    with pytest.raises(TypeError, match="aggregate must be"):
        groupwise_metric("selection_rate", name="x", aggregate=max)  # type: ignore[arg-type]
    with pytest.raises(PolfairError, match="combine"):
        groupwise_metric("selection_rate", name="x", combine="median")  # type: ignore[arg-type]
    df = pl.DataFrame({"y": [1, 0], "p": [1, 0], "g": ["a", "b"]})
    clash = groupwise_metric("selection_rate", name="demographic_parity_difference")
    with pytest.raises(PolfairError, match="already a metric"):
        pf.fairness_report(df, y_true="y", y_pred="p", protected="g", user_metrics=[clash])
    with pytest.raises(PolfairError, match="did you mean 'demographic_parity'"):
        pf.fairness_report(df, y_true="y", y_pred="p", protected="g", metrics=["demographic_parit"])
    with pytest.raises(PolfairError, match="not a built-in groupwise metric"):
        pf.fairness_report(df, y_true="y", y_pred="p", protected="g", user_metrics=["demographic_parit"])
    with pytest.raises(PolfairError, match="given twice"):
        pf.fairness_report(df, y_true="y", y_pred="p", protected="g", user_metrics=["equalized_odds", equalized_odds])
    listy = groupwise_metric("selection_rate", name="listy", aggregate=pl.col("value"))
    with pytest.raises(PolfairError, match="single numeric value"):
        pf.fairness_report(df, y_true="y", y_pred="p", protected="g", user_metrics=[listy])


def test_aliases_and_builtin_definitions():
    assert groupwise_metric("sensitivity", name="s").metrics == ("true_positive_rate",)
    assert equalized_odds.metrics == ("true_positive_rate", "true_negative_rate")
    assert equalized_odds.aggregate is diff_range and equalized_odds.combine == "max"
    assert demographic_parity.metrics == ("selection_rate",)
    assert equal_opportunity.needs == "predictions"
    assert ratio_range.combine == "min" and ratio_range.direction == "maximize"
