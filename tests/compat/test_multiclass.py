"""polfair.compat.ignite against a NumPy reference, ignite's documented examples, and ignite itself."""

from __future__ import annotations

import math
import warnings

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import polfair as pf
import polfair.compat.fairlearn as pfx
from polfair.compat.ignite import (
    CLASS,
    multiclass_counts,
    multiclass_demographic_parity_difference,
    multiclass_report,
    subgroup_accuracy_difference,
)
from polfair.core.passes.counts import COUNT_COLUMNS
from polfair.exceptions import InvalidInputError, MissingValuesWarning, PolfairError

SETTINGS = settings(max_examples=50, deadline=None)


# ---- NumPy reference (ignite's definitions) ------------------------------------------------


def np_rates(pred_onehot: np.ndarray, g: np.ndarray, w: np.ndarray) -> np.ndarray:
    """groups x classes selection rates; pred_onehot is (n, K) 0/1."""
    return np.array([(w[g == k, None] * pred_onehot[g == k]).sum(0) / w[g == k].sum() for k in np.unique(g)])


def np_dpd(pred_onehot, g, w) -> float:
    r = np_rates(pred_onehot, g, w)
    return float((r.max(0) - r.min(0)).max())


def np_acc_diff(correct: np.ndarray, g, w) -> float:
    acc = [(w[g == k] * correct[g == k]).sum() / w[g == k].sum() for k in np.unique(g)]
    return float(max(acc) - min(acc))


@st.composite
def multiclass(draw: st.DrawFn):
    n, k = draw(st.integers(1, 40)), draw(st.integers(2, 4))
    scores = draw(st.lists(st.lists(st.integers(0, 9), min_size=k, max_size=k), min_size=n, max_size=n))
    y = draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n))
    g = draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    w = draw(st.lists(st.integers(1, 3), min_size=n, max_size=n))
    return np.array(scores, dtype=float), np.array(y), np.array(g), np.array(w, dtype=float)


@st.composite
def multilabel(draw: st.DrawFn):
    n, k = draw(st.integers(1, 40)), draw(st.integers(1, 4))
    mat = lambda: np.array(draw(st.lists(st.lists(st.integers(0, 1), min_size=k, max_size=k), min_size=n, max_size=n)))  # noqa: E731
    g = np.array(draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)))
    w = np.array(draw(st.lists(st.integers(1, 3), min_size=n, max_size=n)), dtype=float)
    return mat(), mat(), g, w


@SETTINGS
@given(d=multiclass(), weighted=st.booleans())
def test_scores_argmax_equals_numpy(d, weighted: bool) -> None:
    scores, y, g, w = d
    w = w if weighted else np.ones(len(y))
    df = pl.DataFrame({"s": scores.tolist(), "y": y, "g": g, "w": w})
    pred = scores.argmax(1)  # first maximum on ties, like torch.argmax
    onehot = np.eye(scores.shape[1])[pred]
    sw = "w" if weighted else None
    got = multiclass_demographic_parity_difference(df, y_true="y", y_pred="s", sensitive_features="g", sample_weight=sw)
    ref = np_dpd(onehot, g, w) if len(np.unique(g)) > 1 else 0.0
    assert math.isclose(got, ref, abs_tol=1e-12)
    acc = subgroup_accuracy_difference(df, y_true="y", y_pred="s", sensitive_features="g", sample_weight=sw)
    assert math.isclose(acc, np_acc_diff(pred == y, g, w), abs_tol=1e-12)
    # labels input (the argmax as a column) gives the same, and so does the expression API with pos_label=None
    lab = df.with_columns(p=pl.Series(pred))
    got2 = multiclass_demographic_parity_difference(lab, y_true="y", y_pred="p", sensitive_features="g",
                                                    sample_weight=sw)  # fmt: skip
    # classes never predicted have rate 0 everywhere, so they cannot change the max
    assert math.isclose(got2, got, abs_tol=1e-12)
    e = pfx.demographic_parity_difference("y", "p", sensitive_features="g", pos_label=None, sample_weight=sw)
    assert math.isclose(lab.select(e).item(), got, abs_tol=1e-12)


@SETTINGS
@given(d=multilabel(), weighted=st.booleans())
def test_multilabel_equals_numpy(d, weighted: bool) -> None:
    yt, yp, g, w = d
    w = w if weighted else np.ones(len(g))
    df = pl.DataFrame({"yt": yt.tolist(), "yp": yp.tolist(), "g": g, "w": w})
    sw = "w" if weighted else None
    kw = dict(y_true="yt", y_pred="yp", sensitive_features="g", multilabel=True, sample_weight=sw)
    got = multiclass_demographic_parity_difference(df, **kw)
    assert math.isclose(got, np_dpd(yp, g, w), abs_tol=1e-12)
    acc = subgroup_accuracy_difference(df, **kw)
    assert math.isclose(acc, np_acc_diff((yt == yp).all(1), g, w), abs_tol=1e-12)
    # Array columns behave as List columns
    arr = df.with_columns(pl.col("yt", "yp").cast(pl.Array(pl.Int64, yt.shape[1])))
    assert multiclass_demographic_parity_difference(arr, **kw) == got


def test_ignite_documented_example() -> None:
    # peers.md §2 (ignite tests): G0 rates [0.5, 0.5, 0], G1 rates [0.5, 0, 0.5] -> 0.5
    df = pl.DataFrame({
        "s": [[0.9, 0.1, 0.0], [0.1, 0.8, 0.1], [0.9, 0.0, 0.1], [0.0, 0.1, 0.9]],
        "y": [0, 1, 2, 0], "g": [0, 0, 1, 1],
    })  # fmt: skip
    assert multiclass_demographic_parity_difference(df, y_true="y", y_pred="s", sensitive_features="g") == 0.5
    rep = multiclass_report(df, y_true="y", y_pred="s", protected="g")
    per_class = rep.filter(pl.col("group").is_null(), pl.col("attribute") == "g",
                           pl.col("metric") == "demographic_parity_difference").sort("class", nulls_last=False)  # fmt: skip
    assert per_class["value"].to_list() == [0.5, 0.0, 0.5, 0.5]
    rates = rep.filter(pl.col("metric") == "selection_rate", pl.col("group").is_not_null()).sort("group", "class")
    assert rates["value"].to_list() == [0.5, 0.5, 0.0, 0.5, 0.0, 0.5]


def test_binary_labels_equal_binary_report() -> None:
    rng = np.random.default_rng(1)
    df = pl.DataFrame({"y": rng.integers(0, 2, 300), "p": rng.integers(0, 2, 300), "g": rng.choice(["a", "b", "c"], 300)})
    rep = multiclass_report(df, y_true="y", y_pred="p", protected="g")
    binary = pf.fairness_report(df, y_true="y", y_pred="p", protected="g", ci=None)  # the class rows have no intervals
    ours = rep.filter(pl.col(CLASS) == 1).drop(CLASS)
    # bit-identical except the entropy indices, which report_from_counts sums in a run-dependent
    # order (last-bit noise; see the accumulator tests)
    exact = pl.col("metric").cast(pl.String).str.contains("entropy|theil|coefficient_of_variation").not_()
    assert_frame_equal(ours.filter(exact), binary.filter(exact), check_exact=True)
    assert_frame_equal(ours.filter(~exact), binary.filter(~exact), rel_tol=1e-12, abs_tol=1e-15)
    dpd = rep.filter(pl.col(CLASS).is_null(), metric="demographic_parity_difference")["value"].item()
    assert dpd == binary.filter(metric="demographic_parity_difference")["value"].item()


def test_class_cell_table_schema_and_consistency() -> None:
    df = pl.DataFrame({"y": ["a", "b", "c", "a", "b"], "p": ["a", "c", "c", "b", None], "g": [1, 1, 2, 2, 2]})
    with pytest.warns(MissingValuesWarning):
        t = multiclass_counts(df, y_true="y", y_pred="p", protected="g", classes=["d"])
    assert t.columns == ["g", CLASS, *COUNT_COLUMNS, "n_correct", "w_correct"]
    assert t[CLASS].to_list() == ["d", "a", "b", "c"] * 2
    # one-vs-rest: tp+fp+tn+fn = w in every class row; n is the cell's rows, missing ones included
    assert (t["tp"] + t["fp"] + t["tn"] + t["fn"] == t["w"]).all()
    assert t.filter(g=2)["n"].unique().to_list() == [3] and t.filter(g=2)["n_missing"].unique().to_list() == [1]
    assert t.filter(g=1, **{CLASS: "c"}).select("tp", "fp").row(0) == (0.0, 1.0)
    assert t.filter(g=1)["n_correct"].unique().to_list() == [1]


def test_report_schema_by_and_accuracy_rows() -> None:
    rng = np.random.default_rng(2)
    n = 200
    df = pl.DataFrame({"y": rng.integers(0, 3, n), "p": rng.integers(0, 3, n), "sex": rng.choice(["f", "m"], n),
                       "race": rng.choice(["x", "y"], n), "split": rng.choice(["train", "test"], n)})  # fmt: skip
    rep = multiclass_report(df, y_true="y", y_pred="p", protected=["sex", "race"], by="split")
    assert rep.columns[: 2 + len(pf.REPORT_COLUMNS)] == ["split", CLASS, *pf.REPORT_COLUMNS]
    acc = rep.filter(pl.col(CLASS).is_null(), pl.col("attribute") == "sex", pl.col("group") == "f",
                     pl.col("metric") == "accuracy", pl.col("split") == "test")["value"].item()  # fmt: skip
    sub = df.filter(split="test", sex="f")
    assert acc == pytest.approx((sub["y"] == sub["p"]).mean())
    sad = rep.filter(pl.col(CLASS).is_null(), pl.col("attribute") == "sex & race", pl.col("split") == "train",
                     pl.col("metric") == "subgroup_accuracy_difference")["value"].item()  # fmt: skip
    train = df.filter(split="train")
    assert sad == pytest.approx(subgroup_accuracy_difference(train, y_true="y", y_pred="p",
                                                             sensitive_features=["sex", "race"]))  # fmt: skip


def test_errors() -> None:
    df = pl.DataFrame({"s": [[0.1, 0.9], [0.5, 0.5]], "y": [0, 2], "g": [0, 1]})
    with pytest.raises(InvalidInputError, match="outside 0..1"):
        multiclass_counts(df, y_true="y", y_pred="s", protected="g")
    with pytest.raises(InvalidInputError, match="different lengths"):
        multiclass_counts(pl.DataFrame({"s": [[0.1, 0.9], [0.5]], "y": [0, 0], "g": [0, 1]}),
                          y_true="y", y_pred="s", protected="g")  # fmt: skip
    with pytest.raises(InvalidInputError, match="invalid"):
        multiclass_counts(pl.DataFrame({"a": [[0, 2]], "b": [[0, 1]], "g": [0]}), y_true="a", y_pred="b",
                          protected="g", multilabel=True)  # fmt: skip
    with pytest.raises(PolfairError, match="multilabel=True"):
        multiclass_counts(pl.DataFrame({"a": [0], "b": [1], "g": [0]}), y_true="a", y_pred="b", protected="g",
                          multilabel=True)  # fmt: skip
    with pytest.raises(InvalidInputError, match="different types"):
        multiclass_counts(pl.DataFrame({"a": ["x"], "b": [1], "g": [0]}), y_true="a", y_pred="b", protected="g")
    with pytest.raises(PolfairError, match="reserved"):
        multiclass_counts(pl.DataFrame({"a": [0], "b": [1], "class": [0]}), y_true="a", y_pred="b", protected="class")
    with pytest.raises(InvalidInputError, match="no rows"):
        multiclass_counts(pl.DataFrame({"a": [0], "b": [1], "g": [0]}).clear(), y_true="a", y_pred="b", protected="g")


# ---- differential tests against pytorch-ignite itself (skipped where torch is not installed) ----


@settings(max_examples=30, deadline=None)
@given(d=multiclass())
def test_against_ignite_multiclass(d) -> None:
    torch = pytest.importorskip("torch")
    fairness = pytest.importorskip("ignite.metrics.fairness")
    scores, y, g, _ = d
    groups = sorted(set(g.tolist()))
    if len(groups) < 2:
        return  # ignite raises with fewer than two groups
    df = pl.DataFrame({"s": scores.tolist(), "y": y, "g": g})
    for cls, ours_fn in ((fairness.DemographicParityDifference, multiclass_demographic_parity_difference),
                         (fairness.SubgroupAccuracyDifference, subgroup_accuracy_difference)):  # fmt: skip
        m = cls(groups=groups)
        # two batches: ignite accumulates, polfair reads all rows at once
        half = len(y) // 2
        for sl in (slice(0, half), slice(half, None)):
            if len(y[sl]):
                m.update((torch.tensor(scores[sl]), torch.tensor(y[sl]), torch.tensor(g[sl])))
        ours = ours_fn(df, y_true="y", y_pred="s", sensitive_features="g")
        assert math.isclose(ours, float(m.compute()), rel_tol=1e-6, abs_tol=1e-6)


@settings(max_examples=30, deadline=None)
@given(d=multilabel())
def test_against_ignite_multilabel(d) -> None:
    torch = pytest.importorskip("torch")
    fairness = pytest.importorskip("ignite.metrics.fairness")
    yt, yp, g, _ = d
    groups = sorted(set(g.tolist()))
    if len(groups) < 2 or yt.shape[1] < 2:
        return  # ignite raises with fewer than two groups; its multilabel input needs C >= 2
    df = pl.DataFrame({"yt": yt.tolist(), "yp": yp.tolist(), "g": g})
    for cls, ours_fn in ((fairness.DemographicParityDifference, multiclass_demographic_parity_difference),
                         (fairness.SubgroupAccuracyDifference, subgroup_accuracy_difference)):  # fmt: skip
        m = cls(groups=groups, is_multilabel=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m.update((torch.tensor(yp), torch.tensor(yt), torch.tensor(g)))
        ours = ours_fn(df, y_true="yt", y_pred="yp", sensitive_features="g", multilabel=True)
        assert math.isclose(ours, float(m.compute()), rel_tol=1e-6, abs_tol=1e-6)
