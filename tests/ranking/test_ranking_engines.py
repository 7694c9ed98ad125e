"""ranking_report on DuckDB and Spark (through narwhals) gives the Polars report (issue 43): the same pass
(:func:`polfair.ranking.cells.ranking_pass` with the engine's frame adapter), only the small cell table
comes back. Sums are added in another order: equal to 1e-12."""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal
from spark_session import spark_session

import polfair as pf

duckdb = pytest.importorskip("duckdb")
pytest.importorskip("narwhals")

KW = dict(query="q", rank="r", protected=["g", "h"], query_protected="u", relevance="rel", weight="w", by="day", k=3,
          n_buckets=4)  # fmt: skip


def _frame() -> pl.DataFrame:
    adult = pf.load_adult().head(600).with_columns(pl.int_range(pl.len()).alias("i"))
    df = adult.with_columns(
        (pl.col("i") // 12).alias("q"), pl.col("sex").cast(pl.String).alias("g"), (pl.col("age") > 40).alias("h"),
        pl.col("income_gt_50k").cast(pl.Float64).alias("rel"), (pl.col("i") // 300).alias("day"),
    )  # fmt: skip
    df = df.with_columns(
        pl.col("hours_per_week").rank("min", descending=True).over("q").cast(pl.Int64).alias("r"),
        pl.col("race").cast(pl.String).first().over("q").alias("u"), (1.0 + pl.col("q") % 3).alias("w"),
    )
    return df.select("q", "r", "g", "h", "u", "rel", "w", "day")


def _same(got: pl.DataFrame, want: pl.DataFrame) -> None:
    keys = ["day", "attribute", "group", "metric"]
    norm = [pl.col(c).cast(pl.String) for c in ("attribute", "group", "metric", "reference_group", "ci_method", "test")]
    a = got.drop("group_key").with_columns(*norm, pl.col("day").cast(pl.Int64)).sort(keys, nulls_last=True)
    b = want.drop("group_key").with_columns(*norm, pl.col("day").cast(pl.Int64)).sort(keys, nulls_last=True)
    assert_frame_equal(a, b, check_exact=False, rel_tol=1e-12, abs_tol=1e-12, check_dtypes=False)


def test_duckdb_report_equals_polars() -> None:
    df = _frame()
    assert df.group_by("q", "r").len()["len"].max() > 1  # ties
    got = pf.ranking_report(duckdb.from_arrow(df.to_arrow()), **KW)
    want = pf.ranking_report(df, **KW)
    _same(got, want)
    assert {"exposure", "awrf", "ndkl", "ndcg_at_k", "top_k_share"} <= set(want["metric"].cast(pl.String))


def test_duckdb_bad_rank_raises_as_polars() -> None:
    df = _frame().with_columns(pl.when(pl.int_range(pl.len()) == 3).then(0).otherwise(pl.col("r")).alias("r"))
    for data in (df, duckdb.from_arrow(df.to_arrow())):
        with pytest.raises(pf.InvalidInputError, match="null, zero or negative rank"):
            pf.ranking_report(data, **KW)


def _spark() -> Any:
    """The test Spark session, or skip."""
    pytest.importorskip("pyspark")
    spark = spark_session()
    if spark is None:  # pragma: no cover
        pytest.skip("no Spark session (pyspark or a Java runtime missing)")
    return spark


def test_spark_report_equals_polars() -> None:
    spark = _spark()
    df = _frame()
    got = pf.ranking_report(spark.createDataFrame(df.to_pandas()), **KW)
    _same(got, pf.ranking_report(df, **KW))


@pytest.mark.parametrize("role", ["rel", "w"])
@pytest.mark.parametrize("bad", [None, -1.0, float("nan"), float("inf"), -float("inf")])
def test_every_bad_relevance_or_weight_value_raises_in_polars_and_duckdb(role: str, bad: float | None) -> None:
    """The pass checks a value on its sum, into which a null or negative value enters as NaN: a null, negative, NaN or
    infinite value in one row of a query is an error in every engine (for the weight: in every row of the query, which
    stays constant)."""
    df = _frame()
    row = pl.col("q") == 3 if role == "w" else pl.int_range(pl.len()) == 5
    df = df.with_columns(pl.when(row).then(pl.lit(bad, pl.Float64)).otherwise(pl.col(role)).alias(role))
    for data in (df, duckdb.from_arrow(df.to_arrow())):
        with pytest.raises(pf.InvalidInputError, match="finite, non-negative"):
            pf.ranking_report(data, **KW)


def test_every_bad_relevance_or_weight_value_raises_in_spark() -> None:
    """The same check of relevance and weight in Spark (NaN >= 0 is true there, as in Polars: the sum still sees it)."""
    spark = _spark()
    for role in ("rel", "w"):
        for bad in (None, -1.0, float("nan"), float("inf")):
            df = _frame()
            row = pl.col("q") == 3 if role == "w" else pl.int_range(pl.len()) == 5
            df = df.with_columns(pl.when(row).then(pl.lit(bad, pl.Float64)).otherwise(pl.col(role)).alias(role))
            with pytest.raises(pf.InvalidInputError, match="finite, non-negative"):
                pf.ranking_report(spark.createDataFrame(df.to_pandas()), **KW)
