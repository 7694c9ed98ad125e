"""Issue 39 through every engine: the noise-corrected between-group variance rows and the score
report's small-group AUC interval and floored p-value are the same from DuckDB and Spark as from Polars.

Spark uses the shared session (``tests/spark_session.py``); one test batches its cases.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polfair as pf
from polfair.scores import score_report

duckdb = pytest.importorskip("duckdb")


def _groups() -> pl.DataFrame:
    rng = np.random.default_rng(5)
    g = np.repeat(["a", "b", "c", "d", "e"], [60, 25, 12, 7, 1])
    y = (rng.random(len(g)) < 0.5).astype(np.int64)
    p = (rng.random(len(g)) < np.where(g == "c", 0.7, 0.35)).astype(np.int64)
    return pl.DataFrame({"g": g, "y": y, "p": p})


def _scores() -> pl.DataFrame:
    rng = np.random.default_rng(1)
    y = np.r_[rng.random(300) < 0.4, [1, 1, 1, 1, 1, 1, 0, 0]].astype(np.int64)
    s = np.r_[np.clip(rng.normal(0.35 + 0.3 * y[:300], 0.2), 0, 1), [0.9, 0.8, 0.85, 0.95, 0.7, 0.75, 0.1, 0.2]]
    return pl.DataFrame({"g": ["big"] * 300 + ["tiny"] * 8, "y": y, "s": s})


def _check(engine: Callable[[pl.DataFrame], Any]) -> None:
    kw: dict[str, Any] = {"y_true": "y", "y_pred": "p", "protected": "g"}
    want = pf.fairness_report(_groups(), **kw)
    got = pf.fairness_report(engine(_groups()), **kw)
    pick = pl.col("metric").cast(pl.String).str.starts_with("between_group_variance")
    assert want.filter(pick).height == 2
    assert_frame_equal(got.filter(pick), want.filter(pick), check_exact=False, rel_tol=1e-12)
    skw: dict[str, Any] = {"y_true": "y", "y_score": "s", "protected": "g", "privileged": {"g": "big"}}
    sw = score_report(_scores(), **skw).filter(group="tiny", metric="roc_auc")
    sg = score_report(engine(_scores()), **skw).filter(group="tiny", metric="roc_auc")
    assert_frame_equal(sg, sw, check_exact=False, rel_tol=1e-12)
    assert sw["value_lo"].item() < 0.9 and sw["p_value"].item() >= 2 / math.comb(8, 6)


def test_duckdb_equals_polars() -> None:
    _check(lambda d: duckdb.from_arrow(d.to_arrow()))


def test_spark_equals_polars(spark) -> None:
    _check(lambda d: spark.createDataFrame(d.to_arrow()))
