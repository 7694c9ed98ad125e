"""Issue 21, "Why": one test per defect found at a door, each failing before the input contract.

The engine-parity defects (DuckDB/Spark reading NaN scores, weights, Booleans, ENUMs, dotted names,
Float/Time keys differently from Polars) are the parity suite's cases (``test_parity.py``); the ones
here are a single door's, plus the DuckDB ones that need a DuckDB-native type.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polfair as pf
from polfair.exceptions import InvalidInputError, MissingValuesWarning
from polfair.mitigation import group_thresholds, reweighing
from polfair.proxies import proxy_scan
from polfair.scores import score_counts, score_report


def scores_frame(n: int = 160, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    s = np.clip(0.3 * y + rng.random(n) * 0.7, 0, 1)
    return pl.DataFrame({"y": y, "s": s, "g": rng.choice(["a", "b"], n), "w": rng.uniform(0.5, 2, n)})


# --- the score doors -----------------------------------------------------------------------------


def test_score_counts_nan_labels_are_missing_not_unfavorable() -> None:
    df = scores_frame().with_columns(pl.col("y").cast(pl.Float64))
    df = df.with_columns(pl.when(pl.int_range(pl.len()) % 9 == 0).then(float("nan")).otherwise(pl.col("y")).alias("y"))
    with pytest.warns(MissingValuesWarning, match="18 with a null label"):
        h = score_counts(df, y_true="y", y_score="s", protected="g")
    assert h["n"].sum() == 160 - 18
    want = score_counts(df.filter(pl.col("y").is_not_nan()), y_true="y", y_score="s", protected="g")
    assert_frame_equal(h, want)


def test_score_counts_favorable_the_label_cannot_hold_is_an_error() -> None:
    with pytest.raises(InvalidInputError, match=r"favorable=1.5 cannot match column 'y' of dtype Int64"):
        score_counts(scores_frame(), y_true="y", y_score="s", protected="g", favorable=1.5)


def test_score_counts_null_and_nan_weights_warn() -> None:
    df = scores_frame().with_columns(pl.when(pl.int_range(pl.len()) < 3).then(None).otherwise(pl.col("w")).alias("w"))
    df = df.with_columns(pl.when(pl.int_range(pl.len()) == 5).then(float("nan")).otherwise(pl.col("w")).alias("w"))
    with pytest.warns(MissingValuesWarning, match="4 with a null weight"):
        h = score_counts(df, y_true="y", y_score="s", protected="g", weight="w")
    assert h["n"].sum() == 156 and not h["weight"].is_nan().any()


def test_an_infinite_weight_is_an_error_not_nan_metrics() -> None:
    df = scores_frame().with_columns(pl.when(pl.int_range(pl.len()) == 7).then(math.inf).otherwise(pl.col("w")).alias("w"))
    with pytest.raises(InvalidInputError, match=r"weight='w': 1 rows .*negative or infinite; found e\.g\. \[inf\]"):
        score_report(df, y_true="y", y_score="s", protected="g", weight="w")
    with pytest.raises(InvalidInputError, match=r"weight='w'"):
        group_thresholds(df, y_true="y", y_score="s", protected="g", weight="w")


def test_nan_scores_are_missing_on_every_engine() -> None:
    # NaN scores landed in the top bin on DuckDB (AUC 0.790 vs 0.837, Brier and ECE NaN, n 160 vs 147)
    duckdb = pytest.importorskip("duckdb")
    df = scores_frame()
    df = df.with_columns(pl.when(pl.int_range(pl.len()) % 12 == 0).then(float("nan")).otherwise(pl.col("s")).alias("s"))
    with pytest.warns(MissingValuesWarning):
        want = score_report(df, y_true="y", y_score="s", protected="g")
    with pytest.warns(MissingValuesWarning):
        got = score_report(duckdb.from_arrow(df.to_arrow()), y_true="y", y_score="s", protected="g")
    assert_frame_equal(got, want, rel_tol=1e-12)
    assert not want["value"].is_nan().any()


def test_favorable_on_a_duckdb_enum_label() -> None:
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()
    con.execute("create type yn as enum ('no', 'yes')")
    rel = con.sql("select y::yn as y, p::yn as p, g from (values ('yes','yes','a'), ('no','yes','b'), ('yes','no','a')) t(y, p, g)")
    with pytest.raises(InvalidInputError, match=r"favorable=1 cannot match column 'y' of dtype Enum"):
        pf.fairness_report(rel, y_true="y", y_pred="p", protected="g")
    got = pf.confusion_counts(rel, y_true="y", y_pred="p", protected="g", favorable="yes").collect()
    assert got.select("tp", "fp", "fn").rows() == [(1.0, 0.0, 1.0), (0.0, 1.0, 0.0)]


# --- the other rooms --------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [-1.0, math.inf])
def test_reweighing_refuses_invalid_weights(bad: float) -> None:
    df = scores_frame(40).with_columns(pl.when(pl.int_range(pl.len()) == 3).then(bad).otherwise(pl.col("w")).alias("w"))
    with pytest.raises(InvalidInputError, match=r"weight='w'.*negative or infinite"):
        reweighing(df, y_true="y", protected="g", weight="w")


def test_reweighing_nan_weights_are_missing_and_get_no_new_weight() -> None:
    df = scores_frame(40).with_columns(pl.when(pl.int_range(pl.len()) == 3).then(math.nan).otherwise(pl.col("w")).alias("w"))
    with pytest.warns(MissingValuesWarning, match="1 with a null weight"):
        rw = reweighing(df, y_true="y", protected="g", weight="w")
    new = df.select(rw.to_expr())["reweighing_weight"]
    assert new[3] is None and new.null_count() == 1 and not new.is_nan().any()
    # every other row: multiplier x weight, the group totals kept
    kept = df.with_columns(new).filter(pl.int_range(pl.len()) != 3)
    for _, part in kept.group_by("g"):
        assert part["reweighing_weight"].sum() == pytest.approx(part["w"].sum())


def test_reweighing_an_all_zero_weight_cell_gets_weight_zero() -> None:
    df = pl.DataFrame({"y": [1, 0, 1, 0, 1, 0], "g": ["a", "a", "a", "b", "b", "b"], "w": [1.0, 1, 1, 0, 2, 0]})
    rw = reweighing(df, y_true="y", protected="g", weight="w")
    assert rw.table.filter(g="b", label=False)["weight"].item() == 0.0
    # W = 5, W_b = 2, W_pos = 4, W_b,pos = 2: the multiplier 2 * 4 / (5 * 2) = 0.8 on the weight 2
    assert df.select(rw.to_expr())["reweighing_weight"].to_list()[3:] == [0.0, pytest.approx(1.6), 0.0]


def test_proxy_scan_nan_weight_is_missing_not_a_null_association() -> None:
    df = pf.load_adult().select("sex", "relationship", "race").with_columns(w=pl.lit(1.0))
    df = df.with_columns(pl.when(pl.int_range(pl.len()) == 0).then(math.nan).otherwise(pl.col("w")).alias("w"))
    with pytest.warns(MissingValuesWarning):
        scan = proxy_scan(df, protected="sex", features=["relationship", "race"], weight="w")
    assert scan["association"].null_count() == 0 and scan["feature"][0] == "relationship"


def test_proxy_scan_refuses_negative_weights() -> None:
    df = pl.DataFrame({"sex": ["f", "m"] * 4, "f": ["x", "y", "x", "x"] * 2, "w": [1.0, -1.0] + [1.0] * 6})
    with pytest.raises(InvalidInputError, match=r"weight='w'.*negative"):
        proxy_scan(df, protected="sex", features=["f"], weight="w")


def test_proxy_scan_null_next_to_the_string_null() -> None:
    df = pl.DataFrame({"g": [None, "null", "a", None, "null", "a"], "f": ["x", "y", "x", "x", "y", "y"]})
    scan = proxy_scan(df, protected="g", features=["f"])
    groups = {t["protected_group"] for t in scan["top_values"][0]}
    assert groups == {"null", '"null"', "a"}  # the report's labels: a null, and the string "null" quoted


def test_group_thresholds_to_expr_null_and_nan_scores_decide_nothing() -> None:
    df = scores_frame()
    gt = group_thresholds(df, y_true="y", y_score="s", protected="g")
    new = pl.DataFrame({"s": [None, math.nan, math.inf, 0.99], "g": ["a", "a", "b", "a"]})
    out = new.select(gt.to_expr(seed=1), gt.probability_expr())
    assert out["decision"].to_list()[:3] == [None, None, None]
    assert out["selection_probability"].to_list()[:3] == [None, None, None]
    assert out["decision"][3] is not None


# --- the core -----------------------------------------------------------------------------------


def test_probabilities_passed_as_predictions_are_an_error_with_the_fix() -> None:
    df = scores_frame().with_columns(pl.col("s").alias("prob"))
    for kw in ({}, {"unfavorable": 0}):  # the second was a raw Polars 'is_in' InvalidOperationError
        with pytest.raises(InvalidInputError) as exc:
            pf.fairness_report(df, y_true="y", y_pred="prob", protected="g", **kw)
        msg = str(exc.value)
        assert msg.startswith("y_pred='prob': ") and "found e.g. [" in msg
        assert "y_score='prob', threshold=0.5 instead of y_pred" in msg


def test_a_float_protected_column_with_two_values_is_a_group_column() -> None:
    # aif360's own encoding (sex as 0.0/1.0): pf.ClassificationMetric took it, fairness_report refused it
    df = scores_frame().with_columns(sex=(pl.col("g") == "a").cast(pl.Float64), p=(pl.col("s") > 0.5).cast(pl.Int64))
    rep = pf.fairness_report(df, y_true="y", y_pred="p", protected="sex", privileged={"sex": 1})
    sr = rep.filter(pl.col("group").is_not_null(), metric="selection_rate", attribute="sex").sort("group")
    assert sr["group"].to_list() == ["0.0", "1.0"] and sr["reference_group"].to_list() == ["1.0", "1.0"]
    cm = pf.ClassificationMetric(df, y_true="y", y_pred="p", protected="sex", unprivileged_groups=[{"sex": 0}],
                                 privileged_groups=[{"sex": 1}])  # fmt: skip
    assert cm.statistical_parity_difference() == pytest.approx(sr.filter(group="0.0")["difference"].item())


def test_tiny_weights_count_or_are_refused_never_lost() -> None:
    df = pl.DataFrame({"y": [1, 1, 0, 0], "g": ["a"] * 4, "w": [1e-300, 1e-300, 1e-9, 1e-9]})
    rep = pf.fairness_report(df, y_true="y", protected="g", weight="w", ci=None)
    pop = rep.filter(pl.col("attribute").is_null())
    assert pop.filter(metric="num_instances")["value"].item() == 2e-300 + 2e-9  # was 0.0 / off by 2e-7
    assert pop.filter(metric="base_rate")["value"].item() == pytest.approx(2e-300 / (2e-300 + 2e-9))
    with pytest.raises(InvalidInputError, match="exact_sums=True"):
        pf.fairness_report(df, y_true="y", protected="g", weight="w", exact_sums=True)
