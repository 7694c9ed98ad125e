"""RegressionAccumulator: batches, merges and saved states give the report of the whole data."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polfair as pf
from polfair.exceptions import PolfairError

OPTIONS = dict(y_true="hours_per_week", y_pred="predicted_hours", protected=["sex", "race"], weight="w",
               by="split", privileged={"sex": "Male", "race": "White"})  # fmt: skip


@pytest.fixture(scope="module")
def adult() -> pl.DataFrame:
    df = pf.load_adult_regression().gather_every(5)
    return df.with_columns(w=(pl.col("fnlwgt") / 1e5).round(3))


def _close(a: pl.DataFrame, b: pl.DataFrame) -> None:
    assert_frame_equal(a.drop("group_key"), b.drop("group_key"), check_exact=False, rel_tol=1e-9, abs_tol=1e-9)


def test_shuffled_batches_and_merged_workers_equal_the_whole(adult, tmp_path):
    whole = adult.pipe(pf.regression_report, **OPTIONS)
    order = np.random.default_rng(7).permutation(adult.height)
    shuffled = adult[order]
    workers = [pf.RegressionAccumulator(**OPTIONS) for _ in range(3)]
    for i, batch in enumerate(shuffled.iter_slices(1500)):
        workers[i % 3].update(batch)
    acc = workers[0].merge(workers[1]).merge(workers[2])
    _close(acc.compute(), whole)
    # the state is a plain table: save it, load it into a fresh accumulator, keep adding
    path = tmp_path / "state.parquet"
    assert acc.state is not None
    acc.state.write_parquet(path)
    again = pf.RegressionAccumulator(**OPTIONS).load_state(pl.read_parquet(path))
    _close(again.compute(), whole)
    assert "Prediction distributions" in pf.to_html(again.compute(), generated_at="x") if _has_report() else True


def _has_report() -> bool:
    try:
        import jinja2  # noqa: F401
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def test_errors_are_clear(adult):
    acc = pf.RegressionAccumulator(**OPTIONS)
    with pytest.raises(PolfairError, match="no rows yet"):
        acc.compute()
    acc.update(adult.head(100))
    other = pf.RegressionAccumulator(**{**OPTIONS, "protected": "sex"}).update(adult.head(100))
    with pytest.raises(PolfairError, match="same by and protected columns"):
        acc.merge(other)
    with pytest.raises(PolfairError, match="not a regression cell table"):
        acc.load_state(pl.DataFrame({"a": [1]}))
    assert acc.reset().state is None
