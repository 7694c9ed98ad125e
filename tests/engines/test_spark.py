"""The cluster path: the counting pass runs inside a local Spark session (``local[2]``).

Needs ``pyspark`` and a Java runtime; skipped with the reason otherwise. The DuckDB test in
``test_scale.py`` covers the same narwhals code path without a JVM.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polfair as pf

pyspark = pytest.importorskip("pyspark")
pytest.importorskip("narwhals")


def _frame(n: int = 4_000, seed: int = 1) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    return pl.DataFrame(
        {
            "sex": rng.choice(["F", "M"], n),
            "race": rng.choice(list("ABC"), n),
            "label": np.where(y == 1, "yes", "no"),
            "pred": np.where(rng.random(n) < 0.5, "yes", "no"),
            "score": rng.random(n),
            "w": rng.integers(1, 5, n).astype(float),
            "month": rng.integers(1, 4, n),
        }
    ).with_columns(pl.when(pl.int_range(pl.len()) % 97 == 0).then(None).otherwise(pl.col("label")).alias("label"))


def test_spark_counts_and_report_equal_polars(spark):
    df = _frame()
    sdf = spark.createDataFrame(df.to_arrow())
    kw = dict(y_true="label", y_pred="pred", y_score="score", weight="w", protected=["sex", "race"],
              favorable="yes", on_missing="ignore")  # fmt: skip
    cells_kw = {k: v for k, v in kw.items() if k != "on_missing"}
    got = pf.confusion_counts(sdf, **cells_kw, by="month").collect()
    want = pf.confusion_counts(df, **cells_kw, by="month").collect()
    assert_frame_equal(got.with_columns(pl.col("month").cast(pl.Int64)), want)  # integer weights: exact
    rep_s = pf.fairness_report(sdf, **kw, privileged={"sex": "M"})
    rep_p = pf.fairness_report(df, **kw, privileged={"sex": "M"})
    assert_frame_equal(rep_s, rep_p)
    assert rep_s.filter(pl.col("attribute").is_null(), metric="n_missing")["value"].item() > 0


def test_spark_invalid_labels_raise(spark):
    sdf = spark.createDataFrame(_frame(200).to_arrow())
    with pytest.raises(pf.InvalidInputError, match="neither favorable"):
        pf.fairness_report(sdf, y_true="label", y_pred="pred", protected="sex", favorable="yes",
                           unfavorable="nope", on_missing="ignore")  # fmt: skip


def test_spark_protected_keys_named_like_report_columns(spark):
    # protected attributes called "group" and "value" (report column names; never report columns):
    # the Spark report equals the Polars one (integer weights: exact sums)
    df = _frame(600).rename({"sex": "group", "race": "value"})
    kw = dict(y_true="label", y_pred="pred", weight="w", protected=["group", "value"], favorable="yes",
              on_missing="ignore")  # fmt: skip
    got = pf.fairness_report(spark.createDataFrame(df.to_arrow()), **kw)
    assert_frame_equal(got, pf.fairness_report(df, **kw))
    assert got.schema["group_key"].fields[0].name == "group"


def test_spark_polarity_follows_the_one_rule(spark):
    # issue 29 on Spark: the ambiguity found in the pass (labels 1/2 with favorable=1), its error path's
    # labels and fix, a score of the unfavorable label (1 - score), and the label-value warning
    from polfair.exceptions import PolarityError, ReferenceWarning

    rng = np.random.default_rng(29)
    n = 400
    df = pl.DataFrame({"credit": rng.integers(1, 3, n), "p_bad": rng.random(n).round(3),
                       "g": rng.choice(["a", "b"], n), "yn": rng.choice(["yes", "no"], n)})  # fmt: skip
    sdf = spark.createDataFrame(df.to_arrow())
    kw = dict(y_true="credit", y_score="p_bad", protected="g", ci=None)
    with pytest.raises(PolarityError, match=r"\(it holds 2 above it\).*score_label=1 .*score_label=2 "):
        pf.fairness_report(sdf, **kw)
    assert_frame_equal(pf.fairness_report(sdf, **kw, score_label=2), pf.fairness_report(df, **kw, score_label=2))
    with pytest.raises(PolarityError, match="score_label=0"):  # favorable=0: decided before the pass
        pf.confusion_counts(sdf, y_true="credit", y_score="p_bad", protected="g", favorable=0)
    with pytest.warns(ReferenceWarning, match=r"favorable='No': 'No' does not occur in column 'yn' "
                                              r"\(values: 'no', 'yes'\)"):  # fmt: skip
        pf.fairness_report(sdf, y_true="yn", protected="g", favorable="No", ci=None)
