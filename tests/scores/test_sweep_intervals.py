"""threshold_sweep: the fairness report's rate intervals at every cut; the top-percent cut counts right."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import polfair as pf
from polfair.scores import threshold_sweep

CI = ["value_lo", "value_hi", "difference_lo", "difference_hi", "ratio_lo", "ratio_hi", "p_value", "p_value_adjusted",
      "n_eff"]  # fmt: skip
RATES = ["selection_rate", "true_positive_rate", "false_positive_rate", "positive_predictive_value", "accuracy"]


@pytest.mark.parametrize("weighted", [False, True])
def test_sweep_rows_carry_the_reports_intervals(weighted: bool) -> None:
    df = pf.load_compas().with_columns((pl.col("priors_count") % 4 + 0.5).alias("w"))
    w = "w" if weighted else None
    sw = threshold_sweep(df, y_true="two_year_recid", y_score="decile_score", protected="race", weight=w,
                         privileged={"race": "Caucasian"}, thresholds=[5, 8], metrics=RATES)  # fmt: skip
    for t in (5.0, 8.0):
        rep = pf.fairness_report(df.with_columns((pl.col("decile_score") >= t).cast(pl.Int8).alias("p")),
                                 y_true="two_year_recid", y_pred="p", protected="race", weight=w,
                                 privileged={"race": "Caucasian"})  # fmt: skip
        for m in RATES:
            a = sw.filter(threshold=t, metric=m).sort("group", nulls_last=False)
            b = rep.filter(metric=m).filter(pl.col("group").is_not_null() | pl.col("attribute").is_null())
            b = b.sort("group", nulls_last=False)
            assert a["group"].to_list() == b["group"].to_list()
            for col in CI:
                np.testing.assert_allclose(a[col].to_numpy().astype(float), b[col].to_numpy().astype(float),
                                           rtol=1e-9, atol=1e-15, equal_nan=True, err_msg=f"{t} {m} {col}")  # fmt: skip
            assert a["test"].cast(pl.String).to_list() == b["test"].cast(pl.String).to_list()
            assert a["ci_method"].cast(pl.String).to_list() == b["ci_method"].cast(pl.String).to_list()


def test_rank_pct_of_100_rows_selects_7_not_8() -> None:
    df = pl.DataFrame({"y": np.arange(100) % 2, "s": np.arange(100) / 100.0, "g": ["a", "b"] * 50})
    sw = threshold_sweep(df, y_true="y", y_score="s", protected="g", rank_pct=0.07, metrics=["num_pred_positives"])
    pop = sw.filter(pl.col("attribute").is_null())
    assert pop["value"].item() == 7.0  # 0.07 × 100 = 7.000000000000001 in floating point
    # a scalar cut is accepted as a one-element list (rank_abs, thresholds too)
    one = threshold_sweep(df, y_true="y", y_score="s", protected="g", rank_abs=3, thresholds=0.5,
                          metrics=["num_pred_positives"]).filter(pl.col("attribute").is_null())  # fmt: skip
    assert sorted(one["value"].to_list()) == [3.0, 50.0]


def test_ci_none_keeps_the_old_columns() -> None:
    df = pl.DataFrame({"y": [1, 0, 1, 0], "s": [0.9, 0.1, 0.6, 0.4], "g": ["a", "a", "b", "b"]})
    sw = threshold_sweep(df, y_true="y", y_score="s", protected="g", thresholds=[0.5], ci=None)
    assert sw.columns == ["attribute", "group", "cut", "threshold", "metric", "value", "reference_group", "difference",
                          "ratio", "n", "n_missing"]  # fmt: skip  # n_missing added by issue 38 (docs/schema.md)
