"""Groups estimated from proxies (``protected_proba``) on DuckDB and Spark: the same answer as Polars.

The pass runs inside the engine (the probability columns compiled by the same code,
:func:`polfair.core.proba.proba_columns`); only its small result comes back and is reshaped in Polars.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal
from spark_session import spark_session

import polfair as pf
from polfair.datasets import BISG_GROUPS

pytest.importorskip("narwhals")

PROBA = {"race": {g: f"p_{g}" for g in BISG_GROUPS}}
KEY = ["month", "attribute", "group", "metric"]


def _book(n: int = 6_000) -> pl.DataFrame:
    df = pf.make_bisg_lending(n, seed=11)
    rng = np.random.default_rng(11)
    return df.with_columns(
        pl.Series("amount", rng.integers(1, 9, n).astype(float)),
        pl.Series("month", rng.integers(1, 4, n)),
        # a few applicants without BISG probabilities (surname and tract unknown): the null group
        pl.when(pl.int_range(pl.len()) % 211 == 0).then(None).otherwise(pl.col("p_white")).alias("p_white"),
    )


def _same_report(got: pl.DataFrame, want: pl.DataFrame) -> None:
    got = got.with_columns(pl.col("month").cast(pl.Int64)).sort(KEY, nulls_last=True)
    want = want.sort(KEY, nulls_last=True)
    # Float64 sums of fractional probabilities: the same up to summation order (Spark's varies from run
    # to run); differences of two weighted counts of thousands cancel, hence the absolute tolerance
    assert_frame_equal(got, want, check_exact=False, rel_tol=1e-12, abs_tol=1e-9)


def _to_engine(name: str, df: pl.DataFrame):
    if name == "duckdb":
        duckdb = pytest.importorskip("duckdb")
        return duckdb.from_arrow(df.to_arrow())
    pytest.importorskip("pyspark")
    spark = spark_session()
    if spark is None:  # pragma: no cover
        pytest.skip("no Java runtime for Spark")
    return spark.createDataFrame(df.to_arrow())


@pytest.mark.parametrize("engine", ["duckdb", "spark"])
@pytest.mark.parametrize("assignment", ["weighted", "argmax"])
def test_report_and_cells_equal_polars(engine: str, assignment: str) -> None:
    df = _book()
    data = _to_engine(engine, df)
    kw = dict(y_true="repaid", y_pred="approved", y_score="score", weight="amount", protected="sex", by="month",
              protected_proba=PROBA, proba_assignment=assignment)  # fmt: skip
    rep = dict(kw, privileged={"race": "white", "sex": "male"}, on_missing="ignore")
    _same_report(pf.fairness_report(data, **rep), pf.fairness_report(df, **rep))
    got = pf.confusion_counts(data, **kw).collect().with_columns(pl.col("month").cast(pl.Int64))
    want = pf.confusion_counts(df, **kw).collect()
    assert_frame_equal(got, want, check_exact=False, rel_tol=1e-12)
    whole = [c for c in want.columns if want.schema[c] == pl.UInt64]
    assert got.select(whole).equals(want.select(whole))  # apportioned rows: the same integers
    assert got.filter(pl.col("race").is_null())["n_missing"].sum() == df["p_white"].null_count()


@pytest.mark.parametrize("engine", ["duckdb", "spark"])
def test_invalid_probabilities_raise_the_same_error(engine: str) -> None:
    df = _book(600).with_columns(
        pl.when(pl.int_range(pl.len()) == 5).then(1.5).otherwise(pl.col("p_black")).alias("p_black")
    )
    data = _to_engine(engine, df)
    kw = dict(y_true="repaid", y_pred="approved", protected_proba=PROBA, on_missing="ignore")
    with pytest.raises(pf.InvalidInputError) as polars_error:
        pf.fairness_report(df, **kw)
    with pytest.raises(pf.InvalidInputError) as engine_error:
        pf.fairness_report(data, **kw)
    assert str(engine_error.value) == str(polars_error.value)
    assert "found e.g. [1.5]" in str(engine_error.value)
