"""The regression pass on DuckDB and Spark (via narwhals) gives the Polars result (issue 23).

Both run the input contract's rules from the same code (:func:`polfair.core.regression.regression_pass`
with the engine's frame adapter); only the small cell table comes back. Sums are added in another
order, so values agree to 1e-9 relative, not bit for bit. Spark uses the shared session
(``tests/spark_session.py``) and stays at two tests (a JVM start is slow).
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polfair as pf

duckdb = pytest.importorskip("duckdb")
pytest.importorskip("narwhals")

KW = dict(y_true="y", y_pred="p", protected=["g", "k"], weight="w", by="m", privileged={"g": "a"})


def _frame(n: int = 600, seed: int = 5) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    y = rng.lognormal(3.0, 0.5, n)
    p = y * rng.lognormal(0.0, 0.2, n) + rng.normal(0, 1, n)
    df = pl.DataFrame({
        "g": rng.choice(["a", "b", "c"], n), "k": rng.choice([0.0, 1.0, -0.0], n), "m": rng.integers(1, 3, n),
        "y": y, "p": p, "w": rng.integers(0, 4, n).astype(float),
    })  # fmt: skip
    i = pl.int_range(pl.len())
    return df.with_columns(  # hostile values: null and NaN outcomes/predictions/weights, null keys
        pl.when(i % 41 == 0).then(None).otherwise(pl.col("y")).alias("y"),
        pl.when(i % 53 == 0).then(float("nan")).otherwise(pl.col("p")).alias("p"),
        pl.when(i % 67 == 0).then(None).otherwise(pl.col("w")).alias("w"),
        pl.when(i % 29 == 0).then(None).otherwise(pl.col("g")).alias("g"),
        pl.when(i % 31 == 0).then(float("nan")).otherwise(pl.col("k")).alias("k"),
    )


def _same(got: pl.DataFrame, want: pl.DataFrame) -> None:
    keys = ["m", "attribute", "group", "metric"]
    norm = [pl.col(c).cast(pl.String) for c in ("attribute", "group", "metric", "reference_group")]
    a = got.drop("group_key").with_columns(*norm, pl.col("m").cast(pl.Int64)).sort(keys, nulls_last=True)
    b = want.drop("group_key").with_columns(*norm, pl.col("m").cast(pl.Int64)).sort(keys, nulls_last=True)
    assert_frame_equal(a, b, check_exact=False, rel_tol=1e-9, abs_tol=1e-9, check_dtypes=False)


def test_duckdb_report_equals_polars():
    df = _frame()
    rel = duckdb.from_arrow(df.to_arrow())
    with pytest.warns(pf.MissingValuesWarning):
        got = pf.regression_report(rel, **KW)
    with pytest.warns(pf.MissingValuesWarning):
        want = pf.regression_report(df, **KW)
    _same(got, want)
    assert got.filter(pl.col("attribute").is_null(), metric="n_missing")["value"].sum() > 0
    # the accumulator takes batches of any engine: a DuckDB batch and a Polars one give the report of both
    acc = pf.RegressionAccumulator(**KW, on_missing="ignore").update(rel).update(df)
    _same(acc.compute(), pf.regression_report(pl.concat([df, df]), **KW, on_missing="ignore"))


@pytest.mark.parametrize(("column", "value", "match"), [("y", float("inf"), "y_true='y'"),
                                                        ("w", -1.0, "weight='w'")])  # fmt: skip
def test_duckdb_invalid_values_raise_as_polars(column, value, match):
    df = _frame(50).with_columns(pl.when(pl.int_range(pl.len()) == 3).then(value).otherwise(pl.col(column))
                                 .alias(column))  # fmt: skip
    rel = duckdb.from_arrow(df.to_arrow())
    for data in (df, rel):
        with pytest.raises(pf.InvalidInputError, match=match):
            pf.regression_report(data, **KW, on_missing="ignore")


def _level_frame() -> pl.DataFrame:
    """Multiples of 1/8 below 64 plus 1e12 (exact in Float64): only the level changes (issue 40)."""
    rng = np.random.default_rng(11)
    y = np.round(rng.normal(8.0, 3.0, 240) * 8) / 8
    return pl.DataFrame({"g": rng.choice(["a", "b", "c"], 240), "y": y, "p": y + np.round(rng.normal(0, 1, 240) * 8) / 8,
                         "w": rng.choice([0.25, 1.0, 3.0], 240)})  # fmt: skip


def _level_free(report_of) -> None:  # noqa: ANN001
    """r², the differences of means and their Welch p at a 1e12 level equal Polars' at level 0."""
    df = _level_frame()
    kw = dict(y_true="y", y_pred="p", protected="g", weight="w")
    got = report_of(df.with_columns(pl.col("y") + 1e12, pl.col("p") + 1e12), kw)
    want = pf.regression_report(df, **kw)
    for metric, cols in (("r2_score", ["value", "difference", "p_value"]), ("mean_outcome", ["difference", "p_value"])):
        a, b = (t.filter(pl.col("metric").cast(pl.String) == metric).select(cols) for t in (got, want))
        assert_frame_equal(a, b, check_exact=False, rel_tol=1e-10, abs_tol=1e-13)


def test_duckdb_report_at_a_1e12_level_equals_polars_at_0():
    _level_free(lambda df, kw: pf.regression_report(duckdb.from_arrow(df.to_arrow()), **kw))


def test_spark_report_equals_polars(spark):
    df = _frame(300)
    sdf = spark.createDataFrame(df.to_arrow())
    _same(pf.regression_report(sdf, **KW, on_missing="ignore"), pf.regression_report(df, **KW, on_missing="ignore"))
    _level_free(lambda d, kw: pf.regression_report(spark.createDataFrame(d.to_arrow()), **kw))  # issue 40
    # an estimated attribute (issue 38): a stage of the same pass, on Spark too (missing probabilities included)
    pa = np.random.default_rng(9).uniform(0, 1, df.height)
    df = df.with_columns(pa=pl.when(pl.int_range(pl.len()) % 37 == 0).then(None).otherwise(pl.Series(pa)))
    est = dict(KW, protected=["g"], protected_proba={"race": {"a": "pa", "b": None}}, on_missing="ignore")
    _same(pf.regression_report(spark.createDataFrame(df.to_arrow()), **est), pf.regression_report(df, **est))


def test_spark_invalid_values_raise(spark):
    df = _frame(40).with_columns(pl.when(pl.int_range(pl.len()) == 3).then(float("inf")).otherwise(pl.col("p"))
                                 .alias("p"))  # fmt: skip
    with pytest.raises(pf.InvalidInputError, match=r"y_pred='p': 1 rows .* infinite"):
        pf.regression_report(spark.createDataFrame(df.to_arrow()), **KW, on_missing="ignore")
