"""Spark and DuckDB give Polars' answer where they did not (issue 30): datetime keys whatever the
session's time zone, ``cluster=`` (the jackknife bucket computed in the engine with Polars' integers),
reweighing with bad weights, the regression door's hostile cases.

Spark uses the shared session (``tests/spark_session.py``); its tests are few and batch their cases
(a JVM start is slow).
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polfair as pf
from polfair.core.hashing import bucket_expr, bucket_of, string_key, string_key_sql

duckdb = pytest.importorskip("duckdb")
nw = pytest.importorskip("narwhals")


def _frame(n: int = 600, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    base = [dt.datetime(2020, 1, 3, 12, 0), dt.datetime(2020, 1, 3, 23, 30), dt.datetime(2020, 6, 1, 0, 0)]
    uid = rng.integers(-(10**12), 10**12, n) // 997 * 997  # clusters of several rows, negative ids too
    return pl.DataFrame({
        "y": rng.integers(0, 2, n), "p": rng.integers(0, 2, n), "g": rng.choice(["a", "b", "c"], n),
        "t": [base[i % 3] for i in range(n)], "uid": uid, "w": rng.uniform(0.5, 2.0, n),
    }).with_columns(sid=pl.format("user-{}", pl.col("uid")), flag=pl.col("uid") % 2 == 0)  # fmt: skip


def _groups(rep: pl.DataFrame) -> list[str | None]:
    return rep.filter(metric="selection_rate", attribute="t")["group"].to_list()


# ---------------------------------------------------------------------------------------------
# the bucket hash: one definition, the same integers in every engine


def test_the_limb_arithmetic_gives_polars_buckets_in_every_engine() -> None:
    rng = np.random.default_rng(1)
    ids = np.concatenate([rng.integers(-(2**63), 2**63 - 1, 4000, dtype=np.int64),
                          np.array([0, 1, -1, 2**63 - 1, -(2**63)], dtype=np.int64)])  # fmt: skip
    df = pl.DataFrame({"u": ids}).with_columns(pl.when(pl.int_range(pl.len()) == 7).then(None).otherwise("u").alias("u"))
    want = df.select(bucket_of(pl.col("u"), 37).cast(pl.Int64).alias("b"))["b"]
    assert df.select(bucket_expr(pl, pl.col("u"), 37).alias("b"))["b"].equals(want)
    rel = duckdb.from_arrow(df.to_arrow())
    got = nw.from_native(rel).select(bucket_expr(nw, nw.col("u"), 37).alias("b")).collect(backend="polars")
    assert got.to_native()["b"].equals(want)
    assert np.bincount(want.drop_nulls().to_numpy(), minlength=37).min() > 60  # spread over the buckets


def test_string_keys_are_the_same_in_polars_and_duckdb() -> None:
    vals = ["abc", "", "é", "日本語テキスト長い文字列です", "user_0000001234567", None, "x" * 40]
    want = pl.DataFrame({"s": vals}).select(string_key(pl.col("s")).alias("k"))["k"].to_list()
    got = duckdb.sql(f"select {string_key_sql('s', 'duckdb')} as k from (select unnest(?) s)", params=[vals])
    assert [r[0] for r in got.fetchall()] == want


@pytest.mark.parametrize("cluster", ["uid", "sid", "flag"])
def test_cluster_on_duckdb_equals_polars(cluster: str) -> None:
    df = _frame()
    kw = dict(y_true="y", y_pred="p", protected="g", weight="w", cluster=cluster, n_buckets=17)
    cells = pf.confusion_counts(df, **kw).collect().sort("g", "bucket")
    got = pf.confusion_counts(duckdb.from_arrow(df.to_arrow()), **kw).collect().sort("g", "bucket")
    assert got.select("g", "bucket", "n").equals(cells.select("g", "bucket", "n"))
    assert_frame_equal(pf.fairness_report(duckdb.from_arrow(df.to_arrow()), **kw), pf.fairness_report(df, **kw),
                       check_exact=False, rel_tol=1e-9, abs_tol=1e-12)  # fmt: skip


def test_cluster_ids_without_an_engine_twin_are_refused_clearly() -> None:
    df = _frame(50).with_columns(f=pl.col("w"))
    with pytest.raises(pf.PolfairError, match=r"cluster='f' has dtype Float64: on Spark/DuckDB.*integers"):
        pf.fairness_report(duckdb.from_arrow(df.to_arrow()), y_true="y", y_pred="p", protected="g", cluster="f")


def test_duckdb_timestamptz_keys_come_back_in_utc() -> None:
    df = _frame(60).with_columns(pl.col("t").dt.replace_time_zone("UTC"))
    kw = dict(y_true="y", y_pred="p", protected="t", ci=None)
    for zone in ("UTC", "America/Los_Angeles"):
        con = duckdb.connect()
        con.execute(f"SET TimeZone='{zone}'")
        assert _groups(pf.fairness_report(con.from_arrow(df.to_arrow()), **kw)) == _groups(pf.fairness_report(df, **kw))


@pytest.mark.parametrize("bad", [-1.0, float("inf")])
def test_reweighing_on_duckdb_applies_the_contract(bad: float) -> None:
    df = _frame(80)
    kw = dict(y_true="y", protected="g", weight="w")
    rw = pf.reweighing(duckdb.from_arrow(df.to_arrow()), **kw)
    assert_frame_equal(rw.table, pf.reweighing(df, **kw).table, check_exact=False, rel_tol=1e-12)
    assert df.with_columns(rw.to_expr())["reweighing_weight"].sum() == pytest.approx(df["w"].sum())
    hostile = df.with_columns(pl.when(pl.int_range(pl.len()) == 0).then(bad).otherwise(pl.col("w")).alias("w"))
    with pytest.raises(pf.InvalidInputError, match=r"weight='w': 1 rows .* negative or infinite"):
        pf.reweighing(duckdb.from_arrow(hostile.to_arrow()), **kw)  # was a TypeError


# ---------------------------------------------------------------------------------------------
# Spark


def test_spark_datetime_keys_equal_polars_in_any_session_time_zone(spark) -> None:
    df = _frame(90)
    kw = dict(y_true="y", y_pred="p", protected="t", ci=None)
    want = _groups(pf.fairness_report(df, **kw))
    zone = spark.conf.get("spark.sql.session.timeZone")
    try:
        for tz in ("America/Los_Angeles", "Asia/Tokyo", "UTC"):  # the frame made, and read, in each zone
            spark.conf.set("spark.sql.session.timeZone", tz)
            for sdf in (spark.createDataFrame(df.to_arrow()), spark.createDataFrame(df.to_pandas())):
                assert _groups(pf.fairness_report(sdf, **kw)) == want, tz  # Los Angeles: shifted by 8 h on main
                assert spark.conf.get("spark.sql.session.timeZone") == tz  # the pass restores the session's zone
    finally:
        spark.conf.set("spark.sql.session.timeZone", zone)


def test_spark_clusters_reweighing_and_regression_equal_polars(spark) -> None:
    df = _frame(400)
    sdf = spark.createDataFrame(df.drop("t").to_arrow())
    for cluster in ("uid", "sid"):  # the jackknife on Spark (refused on main), with Polars' buckets
        kw = dict(y_true="y", y_pred="p", protected="g", weight="w", cluster=cluster, n_buckets=11)
        got = pf.confusion_counts(sdf, **kw).collect().sort("g", "bucket")
        want = pf.confusion_counts(df, **kw).collect().sort("g", "bucket")
        assert got.select("g", "bucket", "n").equals(want.select("g", "bucket", "n")), cluster
        assert_frame_equal(pf.fairness_report(sdf, **kw), pf.fairness_report(df, **kw), check_exact=False,
                           rel_tol=1e-9, abs_tol=1e-12)  # fmt: skip
    rw = pf.reweighing(sdf, y_true="y", protected="g", weight="w")  # a TypeError on main
    assert_frame_equal(rw.table, pf.reweighing(df, y_true="y", protected="g", weight="w").table, check_exact=False,
                       rel_tol=1e-12)  # fmt: skip
    bad = df.drop("t").with_columns(pl.when(pl.int_range(pl.len()) == 0).then(-1.0).otherwise(pl.col("w")).alias("w"))
    with pytest.raises(pf.InvalidInputError, match="weight='w'"):
        pf.reweighing(spark.createDataFrame(bad.to_arrow()), y_true="y", protected="g", weight="w")
    # the regression door's hostile cases: an outlying first row, tiny weights
    rng = np.random.default_rng(2)
    y = 1e8 + rng.normal(size=300)
    reg = pl.DataFrame({"y": y, "p": y + rng.normal(scale=0.5, size=300), "g": ["a", "b"] * 150,
                        "w": rng.uniform(0.5, 2.0, 300) * 1e-200})  # fmt: skip
    reg = reg.with_columns(pl.when(pl.int_range(pl.len()) == 0).then(0.0).otherwise(pl.col("y")).alias("y"))
    kw = dict(y_true="y", y_pred="p", protected="g", weight="w", privileged={"g": "a"})
    assert_frame_equal(pf.regression_report(spark.createDataFrame(reg.to_arrow()), **kw),
                       pf.regression_report(reg, **kw), check_exact=False, rel_tol=1e-7, abs_tol=1e-6)  # fmt: skip


# ---------------------------------------------------------------------------------------------
# every report free of the weights' scale, and the doors' refusals, on the engines


def _free(rep: pl.DataFrame) -> pl.DataFrame:
    """The rows free of the weights' scale (the counts are Σw; the smoothed EDF adds a constant to them)."""
    metric = pl.col("metric").cast(pl.String)
    return rep.filter(~metric.str.starts_with("num_") & ~metric.str.contains("differential_fairness"))


def _scale_cases(make) -> None:  # noqa: ANN001
    """Every report of the engine's frame (``make(polars_frame)``) with weights of 1e-200 and 1e200: Polars' at 1."""
    df = _frame(300).drop("t").with_columns(s=(pl.col("uid").abs() % 101) / 100.0)
    df = df.with_columns(r=pl.col("y") * 2.0 + pl.col("s"), q=pl.col("s") * 3.0)
    doors = {
        "fairness": lambda d: pf.fairness_report(d, y_true="y", y_pred="p", protected="g", weight="w"),
        "scores": lambda d: pf.score_report(d, y_true="y", y_score="s", protected="g", weight="w"),
        "regression": lambda d: pf.regression_report(d, y_true="r", y_pred="q", protected="g", weight="w"),
    }
    for scale in (1e-200, 1e200):
        data = make(df.with_columns(pl.col("w") * scale))
        for name, door in doors.items():
            try:
                assert_frame_equal(_free(door(data)), _free(door(df)), check_exact=False, rel_tol=1e-9, abs_tol=1e-12)
            except AssertionError as exc:
                raise AssertionError(f"{name} at weights x {scale}: {exc}") from None
        rw = pf.reweighing(data, y_true="y", protected="g", weight="w").table
        one = pf.reweighing(df, y_true="y", protected="g", weight="w").table
        assert_frame_equal(rw.drop("observed", "expected"), one.drop("observed", "expected"), check_exact=False,
                           rel_tol=1e-12)  # fmt: skip


def _refusals(make) -> None:  # noqa: ANN001
    """The doors' refusals through the engine: empty input, score_report's n_missing, overflowing squares."""
    df = pl.DataFrame({"y": [1, 0, 1, 0, 1, 0], "g": ["a", "a", "b", "b", "a", "b"],
                       "s": [0.1, None, 0.3, 0.8, 0.5, 0.2], "r": [1.0, 2.0, 0.5, 1.5, 3.0, 0.0]})  # fmt: skip
    with pytest.raises(pf.InvalidInputError, match="the input has no rows"):
        pf.regression_report(make(df.head(0)), y_true="r", y_pred="r", protected="g")
    with pytest.raises(pf.InvalidInputError, match="the input has no rows"):
        pf.score_report(make(df.head(0)), y_true="y", y_score="s", protected="g")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pf.MissingValuesWarning)
        rep = pf.score_report(make(df), y_true="y", y_score="s", protected="g")
    missing = rep.filter(metric="n_missing").sort("group", nulls_last=True)
    assert missing["value"].to_list() == [1.0, 0.0, 1.0] and missing["n"].to_list() == [3, 3, 6]
    big = pl.DataFrame({"y": [1e300, -2e300, 3e300, 0.5e300], "p": [-1e300, 2e300, 1e300, 0.0], "g": ["a", "a", "b", "b"]})
    with pytest.raises(pf.InvalidInputError, match=r"y_true='y', y_pred='p'.*overflow Float64"):
        pf.regression_report(make(big), y_true="y", y_pred="p", protected="g")
    with pytest.warns(pf.ReferenceWarning, match="'zz' does not occur in column 'g'"):
        pf.regression_report(make(df), y_true="r", y_pred="r", protected="g", privileged={"g": "zz"})


def test_duckdb_reports_are_free_of_the_weights_scale_and_refuse_alike() -> None:
    _scale_cases(lambda d: duckdb.from_arrow(d.to_arrow()))
    _refusals(lambda d: duckdb.from_arrow(d.to_arrow()))


def test_spark_reports_are_free_of_the_weights_scale_and_refuse_alike(spark) -> None:
    _scale_cases(lambda d: spark.createDataFrame(d.to_arrow()))
    _refusals(lambda d: spark.createDataFrame(d.to_arrow()))
