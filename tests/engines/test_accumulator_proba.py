"""FairnessAccumulator with an estimated attribute (``protected_proba``, issue 38): the stage of each batch's
pass, so the accumulated report is the one pass's weighted estimator."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polfair as pf
from polfair.engines.accumulator import FairnessAccumulator

PP = {"race": {"a": "pa", "b": "pb", "c": None}}
#: Metrics that read the apportioned row counts (aif360's unweighted between-group indices): approximate.
ROW_COUNT_METRICS = ("between_group", "between_all_groups")


def _data(n: int = 3000) -> pl.DataFrame:
    rng = np.random.default_rng(3)
    pa = rng.uniform(0, 1, n)
    pb = rng.uniform(0, 1 - pa)
    return pl.DataFrame({"y": rng.integers(0, 2, n), "p": (rng.uniform(0, 1, n) < 0.3 + 0.4 * pa).astype(int),
                         "sex": rng.choice(["f", "m"], n), "pa": pa, "pb": pb, "w": rng.uniform(0.5, 2, n)})  # fmt: skip


@pytest.mark.parametrize("weight", [None, "w"])
@pytest.mark.parametrize("protected", ["sex", None])
def test_batches_equal_the_one_shot_report(weight: str | None, protected: str | None) -> None:
    df = _data()
    kw = dict(y_true="y", y_pred="p", weight=weight, protected_proba=PP)
    one = pf.fairness_report(df, protected=protected, **kw)
    acc = FairnessAccumulator(protected=protected, **kw)
    for batch in df.iter_slices(700):
        acc.update(batch)
    assert acc.protected[-1] == "race"
    got = acc.compute()
    keys = ["attribute", "group", "metric"]
    j = got.join(one, on=keys, suffix="_r", nulls_equal=True)
    assert j.height == got.height == one.height
    exact = j.filter(~pl.col("metric").cast(pl.String).str.starts_with(ROW_COUNT_METRICS[0])
                     & ~pl.col("metric").cast(pl.String).str.starts_with(ROW_COUNT_METRICS[1]))  # fmt: skip
    # the intervals read the groups' row counts too (Wilson's n): close, not equal
    for col, tol in (("value", 1e-12), ("difference", 1e-12), ("ratio", 1e-12), ("value_lo", 1e-3), ("value_hi", 1e-3)):
        d = exact.select(((pl.col(col) - pl.col(f"{col}_r")).abs() / pl.max_horizontal(pl.col(f"{col}_r").abs(), 1.0)).max())
        assert (d.item() or 0.0) < tol, col
    # the rows are apportioned batch by batch: the groups' n add up to the rows, close to the one pass's
    groups = got.filter(attribute="race", metric="selection_rate").filter(pl.col("group").is_not_null())
    assert int(groups["n"].sum()) == df.height
    assert j.filter((pl.col("n") - pl.col("n_r")).abs() > pl.max_horizontal(pl.lit(25), 0.05 * pl.col("n_r"))).height == 0


def test_proba_options_without_protected_proba_are_refused() -> None:
    with pytest.raises(pf.PolfairError, match="proba_assignment"):
        FairnessAccumulator(y_true="y", y_pred="p", protected="sex", proba_assignment="argmax")
    with pytest.raises(pf.PolfairError, match="protected"):
        FairnessAccumulator(y_true="y", y_pred="p")


def test_state_round_trip_and_merge_keep_the_estimated_attribute(tmp_path) -> None:  # type: ignore[no-untyped-def]
    df = _data()
    kw = dict(y_true="y", y_pred="p", protected="sex", protected_proba=PP)
    acc = FairnessAccumulator(**kw).update(df.head(1500)).update(df.tail(1500))
    acc.save(tmp_path / "s.parquet")
    assert FairnessAccumulator.load(tmp_path / "s.parquet", **kw).compute().equals(acc.compute())
    merged = FairnessAccumulator(**kw).update(df.head(1500)).merge(FairnessAccumulator(**kw).update(df.tail(1500)))
    assert_frame_equal(merged.state(), acc.state(), check_exact=False, rel_tol=1e-12)
