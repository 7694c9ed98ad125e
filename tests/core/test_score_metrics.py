"""f1_score, balanced_accuracy and matthews_corrcoef in the built-in metric table equal scikit-learn's
(weighted and not), and are null exactly where scikit-learn divides by zero."""

from __future__ import annotations

import warnings

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import metrics as skm

import polfair as pf

SK = {
    "f1_score": lambda y, p, w: skm.f1_score(y, p, sample_weight=w, zero_division=np.nan),
    "balanced_accuracy": lambda y, p, w: skm.balanced_accuracy_score(y, p, sample_weight=w),
    "matthews_corrcoef": lambda y, p, w: skm.matthews_corrcoef(y, p, sample_weight=w),
}


@pytest.mark.parametrize("weighted", [False, True])
def test_equal_to_sklearn_on_compas(weighted: bool) -> None:
    df = pf.load_compas().with_columns(
        (pl.col("decile_score") >= 5).cast(pl.Int8).alias("p"), (pl.col("priors_count") % 3 + 0.5).alias("w")
    )
    w = "w" if weighted else None
    rep = pf.fairness_report(df, y_true="two_year_recid", y_pred="p", protected="race", weight=w, ci=None)
    for race in df["race"].unique().to_list():
        sub = df.filter(race=race)
        y, p, ww = sub["two_year_recid"].to_numpy(), sub["p"].to_numpy(), sub["w"].to_numpy() if weighted else None
        for metric, fn in SK.items():
            got = rep.filter(group=race, metric=metric)["value"].item()
            assert got == pytest.approx(fn(y, p, ww), rel=1e-12, abs=1e-15), (race, metric)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 1), st.integers(0, 1), st.sampled_from([0.5, 1.0, 2.0, 3.25])), min_size=1,
             max_size=30),  # fmt: skip
    st.booleans(),
)
def test_property_against_sklearn(rows: list[tuple[int, int, float]], weighted: bool) -> None:
    y, p, w = (np.array(c) for c in zip(*rows))
    df = pl.DataFrame({"y": y, "p": p, "w": w, "g": ["a"] * len(y)})
    rep = pf.fairness_report(df, y_true="y", y_pred="p", protected="g", weight="w" if weighted else None, ci=None)
    ww = w if weighted else None
    pos, neg = (y == 1).any(), (y == 0).any()
    ppos, pneg = (p == 1).any(), (p == 0).any()
    for metric, fn in SK.items():
        got = rep.filter(group="a", metric=metric)["value"].item()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = fn(y, p, ww)
        if metric == "balanced_accuracy" and not (pos and neg):
            assert got is None  # scikit-learn averages the recall of the one class present (and warns)
        elif metric == "matthews_corrcoef" and not (pos and neg and ppos and pneg):
            assert got is None  # scikit-learn returns 0.0 when a margin is empty
        elif np.isnan(want):
            assert got is None
        else:
            assert got == pytest.approx(want, rel=1e-12, abs=1e-15), metric


def test_zero_division_is_null_and_comparisons_follow() -> None:
    # group b: no positives and no predicted positives -> f1, balanced accuracy and MCC undefined
    df = pl.DataFrame({"y": [1, 0, 1, 0, 0, 0], "p": [1, 0, 0, 1, 0, 0], "g": ["a"] * 4 + ["b"] * 2})
    rep = pf.fairness_report(df, y_true="y", y_pred="p", protected="g", ci=None)
    b = rep.filter(group="b")
    for metric in SK:
        assert b.filter(metric=metric)["value"].item() is None
        assert b.filter(metric=metric)["difference"].item() is None
    spread = rep.filter(pl.col("group").is_null(), attribute="g", metric="f1_score")
    assert spread["n_groups"].item() == 1 and spread["difference"].item() is None
    assert "b (undefined)" in spread["excluded_groups"].item()


def test_scores_have_no_interval_and_best_reference_picks_the_highest() -> None:
    df = pf.load_compas().with_columns((pl.col("decile_score") >= 5).cast(pl.Int8).alias("p"))
    rep = pf.fairness_report(df, y_true="two_year_recid", y_pred="p", protected="sex", reference="best")
    rows = rep.filter(metric="f1_score", attribute="sex").filter(pl.col("group").is_not_null())
    assert rows["value_lo"].null_count() == rows.height
    best = rows.sort("value")["group"][-1]
    assert set(rows["reference_group"].cast(pl.String).to_list()) == {best}


@pytest.mark.parametrize("scale", [1e200, 1e-200])
def test_matthews_corrcoef_of_a_cell_table_in_extreme_weight_units(scale: float) -> None:
    """The cell table (data units) and the accumulator give fairness_report's MCC with weights x1e±200 (the
    products TP·TN overflowed to NaN / underflowed to a division by zero); ordinary weights take the same path."""
    rng = np.random.default_rng(4)
    n = 600
    df = pl.DataFrame({"g": rng.choice(["a", "b"], n), "y": rng.integers(0, 2, n), "p": rng.integers(0, 2, n),
                       "w": rng.integers(1, 5, n).astype(float)})  # fmt: skip
    kw = {"y_true": "y", "y_pred": "p", "protected": "g", "ci": None}
    want = pf.fairness_report(df, **kw, weight="w").filter(metric="matthews_corrcoef").sort("group", nulls_last=False)
    big = df.with_columns(pl.col("w") * scale)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cells = pf.confusion_counts(big, **{k: v for k, v in kw.items() if k != "ci"}, weight="w").collect()
        counted = pf.report_from_counts(cells, protected="g", ci=None)
        acc = pf.FairnessAccumulator(**kw, weight="w").update(big[:250]).update(big[250:]).compute()
    for got in (counted, acc):
        mcc = got.filter(metric="matthews_corrcoef").sort("group", nulls_last=False)
        np.testing.assert_allclose(mcc["value"].to_numpy(), want["value"].to_numpy(), rtol=1e-12)
