"""The same slice search through Polars, parquet, DuckDB and Spark: the same result, each level in-engine."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polfair as pf
from polfair.core.report.run_metadata import request_of
from polfair.exceptions import InvalidInputError

pytest.importorskip("narwhals")


def _frame(n: int = 3000, seed: int = 7) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    g = rng.choice(["a", "b", "c", "d"], n)
    age = rng.integers(18, 80, n)
    hot = (g == "b") & (age < 30)
    y = (rng.random(n) < 0.4).astype(np.int64)
    p = np.where(rng.random(n) < np.where(hot, 0.5, 0.1), 1 - y, y)
    return pl.DataFrame({
        "g": g, "flag": rng.integers(0, 2, n).astype(bool), "age": age, "x": rng.normal(0, 1, n).round(3),
        "y": y, "p": p, "w": rng.integers(1, 4, n).astype(float), "loss": rng.gamma(2.0, np.where(hot, 1.0, 0.4)).round(4),
    })  # fmt: skip


CASES = {
    "errors": dict(features=["g", "flag", "age", "x"], errors="loss", k=8, min_support=20),
    "metric_weighted": dict(features=["g", "flag", "age"], y_true="y", y_pred="p", metric="false_positive_rate",
                            weight="w", k=8, min_support=20),  # fmt: skip
    "edges": dict(features=["g", "age", "x"], errors="loss", bins={"age": [30, 50], "x": None}, k=5, min_support=10,
                  max_level=2),  # fmt: skip
}


def _same(got: pl.DataFrame, want: pl.DataFrame) -> None:
    # the sums of Float64 losses may add in another order in another engine: equal to 1e-12
    assert_frame_equal(got, want, check_exact=False, rel_tol=1e-12, abs_tol=1e-12)


@pytest.mark.parametrize("case", list(CASES))
def test_duckdb_and_parquet_equal_polars(case: str, tmp_path) -> None:
    duckdb = pytest.importorskip("duckdb")
    df = _frame()
    want = pf.slice_scan(df, **CASES[case])
    assert want.height > 0
    _same(pf.slice_scan(duckdb.from_arrow(df.to_arrow()), **CASES[case]), want)
    path = tmp_path / "rows.parquet"
    df.write_parquet(path, row_group_size=500)
    _same(pf.slice_scan(str(path), **CASES[case]), want)
    _same(pf.slice_scan(pl.scan_parquet(path), **CASES[case]), want)


def test_duckdb_scans_once_per_level_and_checks_the_contract() -> None:
    duckdb = pytest.importorskip("duckdb")
    df = _frame()
    out = pf.slice_scan(duckdb.from_arrow(df.to_arrow()), features=["g", "flag", "age"], errors="loss", min_support=20)
    req = request_of(out)
    assert req["scans"] == 1 + sum(c > 0 for c in req["candidates"][1:])  # age: bins from level 1, no extra query
    bad = df.with_columns(loss=pl.when(pl.col("age") == 40).then(-1.0).otherwise(pl.col("loss")))
    with pytest.raises(InvalidInputError, match=r"errors='loss': \d+ rows .* negative or infinite; found e\.g\. \[-1\.0\]"):
        pf.slice_scan(duckdb.from_arrow(bad.to_arrow()), features=["g"], errors="loss")
    with pytest.raises(TypeError, match="column names only"):
        pf.slice_scan(duckdb.from_arrow(df.to_arrow()), features=[pl.col("g")], errors="loss")


@pytest.mark.slow
def test_spark_equals_polars(spark) -> None:
    df = _frame()
    sdf = spark.createDataFrame(df.to_arrow())
    for case in ("errors", "metric_weighted"):
        _same(pf.slice_scan(sdf, **CASES[case]), pf.slice_scan(df, **CASES[case]))
