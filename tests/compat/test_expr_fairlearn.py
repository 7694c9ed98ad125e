"""Differential tests: polfair.compat.fairlearn against fairlearn 0.15 itself (functions and MetricFrame)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polfair.compat.fairlearn as pfx

fm = pytest.importorskip("fairlearn.metrics")

SETTINGS = settings(max_examples=15, deadline=None)


@st.composite
def frames(draw: st.DrawFn, *, complete: bool = True) -> pl.DataFrame:
    """Binary y/p, two sensitive features, a control feature, integer or real weights.

    ``complete=True`` makes every (control, sensitive) cell hold both labels, so every rate fairlearn
    computes is defined and the two libraries must agree exactly.
    """
    n = draw(st.integers(4, 60))
    a = draw(st.lists(st.sampled_from(["x", "y", "z"]), min_size=n, max_size=n))
    b = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    c = draw(st.lists(st.sampled_from(["c1", "c2"]), min_size=n, max_size=n))
    y = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    p = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    w = draw(st.lists(st.floats(0.25, 4.0, allow_nan=False), min_size=n, max_size=n))
    df = pl.DataFrame({"a": a, "b": b, "c": c, "y": y, "p": p, "w": w})
    if complete:
        # append one positive and one negative row (with a predicted 1 and 0) to every observed cell
        cells = df.select("a", "b", "c").unique()
        extra = pl.concat([cells.with_columns(y=pl.lit(v), p=pl.lit(q), w=pl.lit(1.0))
                           for v, q in ((1, 1), (0, 0), (1, 0), (0, 1))])  # fmt: skip
        df = pl.concat([df, extra.select(df.columns)], how="vertical_relaxed")
    return df


def _close(ours: float | None, theirs: float) -> bool:
    if ours is None:
        return math.isnan(theirs)
    return math.isclose(ours, theirs, rel_tol=1e-9, abs_tol=1e-12)


FUNCS = [
    ("demographic_parity_difference", {}),
    ("demographic_parity_ratio", {}),
    ("equalized_odds_difference", {"agg": "worst_case"}),
    ("equalized_odds_difference", {"agg": "mean"}),
    ("equalized_odds_ratio", {"agg": "worst_case"}),
    ("equalized_odds_ratio", {"agg": "mean"}),
    ("equal_opportunity_difference", {}),
    ("equal_opportunity_ratio", {}),
]


@settings(max_examples=10, deadline=None)
@given(df=frames(), weighted=st.booleans(), two=st.booleans())
def test_named_disparities_equal_fairlearn(df: pl.DataFrame, weighted: bool, two: bool) -> None:
    sf_cols = ["a", "b"] if two else ["a"]
    pdf = df.to_pandas()
    sw = pdf["w"].to_numpy() if weighted else None
    for name, kw in FUNCS:
        for method in ("between_groups", "to_overall"):
            theirs = getattr(fm, name)(pdf["y"], pdf["p"], sensitive_features=pdf[sf_cols], method=method,
                                       sample_weight=sw, **kw)  # fmt: skip
            e = getattr(pfx, name)("y", "p", sensitive_features=sf_cols, method=method,
                                   sample_weight="w" if weighted else None, **kw)  # fmt: skip
            ours = df.select(e).item()
            assert _close(ours, float(theirs)), (name, kw, method, ours, theirs)


BASE = ["selection_rate", "true_positive_rate", "false_positive_rate", "true_negative_rate", "false_negative_rate"]


@SETTINGS
@given(df=frames(), weighted=st.booleans())
def test_metricframe_by_group_overall_and_aggregates(df: pl.DataFrame, weighted: bool) -> None:
    pdf = df.to_pandas()
    sp = {"sample_weight": pdf["w"].to_numpy()} if weighted else None
    w = "w" if weighted else None
    for name in BASE:
        mf = fm.MetricFrame(metrics=getattr(fm, name), y_true=pdf["y"], y_pred=pdf["p"],
                            sensitive_features=pdf[["a", "b"]], sample_params=sp)  # fmt: skip
        # by_group: one group_by over the sensitive features
        by = df.group_by("a", "b").agg(getattr(pfx, name)("y", "p", sample_weight=w))
        theirs = mf.by_group.dropna()
        assert by.height == len(theirs)
        for (a, b), v in theirs.items():
            ours = by.filter(a=a, b=b)[name].item()
            assert _close(ours, v)
        assert _close(df.select(getattr(pfx, name)("y", "p", sample_weight=w)).item(), mf.overall)
        kw = dict(sensitive_features=["a", "b"], sample_weight=w)
        assert _close(df.select(pfx.group_min(name, "y", "p", **kw)).item(), mf.group_min())
        assert _close(df.select(pfx.group_max(name, "y", "p", **kw)).item(), mf.group_max())
        for method in ("between_groups", "to_overall"):
            assert _close(df.select(pfx.group_difference(name, "y", "p", method=method, **kw)).item(),
                          mf.difference(method=method))  # fmt: skip
            assert _close(df.select(pfx.group_ratio(name, "y", "p", method=method, **kw)).item(),
                          mf.ratio(method=method))  # fmt: skip


@SETTINGS
@given(df=frames())
def test_control_features_are_a_group_by(df: pl.DataFrame) -> None:
    pdf = df.to_pandas()
    mf = fm.MetricFrame(metrics={"tpr": fm.true_positive_rate, "fpr": fm.false_positive_rate,
                                 "sel": fm.selection_rate},
                        y_true=pdf["y"], y_pred=pdf["p"], sensitive_features=pdf["a"],
                        control_features=pdf["c"])  # fmt: skip
    ours = df.group_by("c").agg(
        pfx.group_difference("true_positive_rate", "y", "p", sensitive_features="a"),
        pfx.group_ratio("false_positive_rate", "y", "p", sensitive_features="a", method="to_overall"),
        pfx.group_max("selection_rate", "y", "p", sensitive_features="a"),
        pfx.true_positive_rate("y", "p"),
    )
    diff, ratio, gmax = mf.difference(), mf.ratio(method="to_overall"), mf.group_max()
    for c in ours["c"].to_list():
        row = ours.filter(c=c).row(0, named=True)
        assert _close(row["true_positive_rate_difference"], diff.loc[c, "tpr"])
        assert _close(row["false_positive_rate_ratio"], ratio.loc[c, "fpr"])
        assert _close(row["selection_rate_group_max"], gmax.loc[c, "sel"])
        assert _close(row["true_positive_rate"], mf.overall.loc[c, "tpr"])


def test_undefined_rate_is_null_where_fairlearn_says_zero() -> None:
    # group "b" has no positives: fairlearn's TPR is 0.0 (silently), ours is null
    df = pl.DataFrame({"y": [1, 1, 0, 0, 0, 0], "p": [1, 0, 1, 0, 1, 0], "g": ["a"] * 4 + ["b"] * 2})
    pdf = df.to_pandas()
    b = pdf[pdf["g"] == "b"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert fm.true_positive_rate(b["y"], b["p"]) == 0.0
        assert fm.equalized_odds_ratio(pdf["y"], pdf["p"], sensitive_features=pdf["g"]) == 0.0
        assert fm.equal_opportunity_difference(pdf["y"], pdf["p"], sensitive_features=pdf["g"]) == 0.5
    assert df.filter(g="b").select(pfx.true_positive_rate("y", "p")).item() is None
    assert df.select(pfx.equalized_odds_ratio("y", "p", sensitive_features="g")).item() is None
    assert df.select(pfx.equal_opportunity_difference("y", "p", sensitive_features="g")).item() is None
    # the rate that is defined in every group is unaffected
    assert df.select(pfx.group_difference("false_positive_rate", "y", "p", sensitive_features="g")).item() == 0.0


def test_ratio_with_zero_selection_everywhere_is_null_where_fairlearn_is_nan() -> None:
    df = pl.DataFrame({"y": [1, 0, 1, 0], "p": [0, 0, 0, 0], "g": ["a", "a", "b", "b"]})
    pdf = df.to_pandas()
    assert np.isnan(fm.demographic_parity_ratio(pdf["y"], pdf["p"], sensitive_features=pdf["g"]))
    assert df.select(pfx.demographic_parity_ratio("y", "p", sensitive_features="g")).item() is None
    assert df.select(pfx.demographic_parity_difference("y", "p", sensitive_features="g")).item() == 0.0


@SETTINGS
@given(df=frames(complete=False))
def test_fairlearn_agrees_wherever_every_group_rate_is_defined(df: pl.DataFrame) -> None:
    """On arbitrary data: equal to fairlearn when defined, null exactly when a group rate is undefined."""
    pdf = df.to_pandas()
    for name in ("equal_opportunity_difference", "equalized_odds_difference"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = float(getattr(fm, name)(pdf["y"], pdf["p"], sensitive_features=pdf["a"]))
        ours = df.select(getattr(pfx, name)("y", "p", sensitive_features="a")).item()
        groups = df.group_by("a").agg(pos=pl.col("y").sum(), neg=(1 - pl.col("y")).sum())
        need = ["pos"] if name.startswith("equal_opp") else ["pos", "neg"]
        undefined = any(groups[c].min() == 0 for c in need)
        if undefined:
            assert ours is None
        else:
            assert _close(ours, theirs)
