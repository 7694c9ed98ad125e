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


def _data(n: int = 3000) -> pl.DataFrame:
    rng = np.random.default_rng(3)
    pa = rng.uniform(0, 1, n)
    pb = rng.uniform(0, 1 - pa)
    df = pl.DataFrame({"y": rng.integers(0, 2, n), "p": (rng.uniform(0, 1, n) < 0.3 + 0.4 * pa).astype(int),
                       "sex": rng.choice(["f", "m"], n), "pa": pa, "pb": pb, "w": rng.uniform(0.5, 2, n),
                       "m": rng.integers(0, 3, n)})  # fmt: skip
    # hostile rows: unknown probabilities (the null group) and missing labels (n_missing of every group)
    i = pl.int_range(n)
    return df.with_columns(pl.when(i % 97 == 0).then(None).otherwise(pl.col("pa")).alias("pa"),
                           pl.when(i % 89 == 0).then(None).otherwise(pl.col("y")).alias("y"))  # fmt: skip


def _batches(df: pl.DataFrame, k: int) -> list[pl.DataFrame]:
    """``k`` batches of uneven sizes, in order."""
    cuts = sorted(np.random.default_rng(k).choice(np.arange(1, df.height), k - 1, replace=False).tolist())
    return [df[a:b] for a, b in zip([0, *cuts], [*cuts, df.height])]


def _assert_same_report(got: pl.DataFrame, one: pl.DataFrame) -> None:
    """Equal rows, row counts equal exactly, every value and interval to 1e-12 (relative, 1 below 1)."""
    keys = [c for c in ("m", "attribute", "group", "metric") if c in one.columns]
    j = got.join(one, on=keys, suffix="_r", nulls_equal=True)
    assert j.height == got.height == one.height
    assert j.filter(pl.col("n").ne_missing(pl.col("n_r"))).height == 0
    assert got.columns == one.columns
    for col in [c for c in ("ci_method", "test") if c in one.columns]:  # weighted tests: membership probabilities are weights, as in the report
        assert j.filter(pl.col(col).cast(pl.String).ne_missing(pl.col(f"{col}_r").cast(pl.String))).height == 0, col
    for col in ("value", "difference", "ratio", "value_lo", "value_hi", "difference_lo", "difference_hi",
                "ratio_lo", "ratio_hi", "n_eff", "p_value", "p_value_adjusted"):
        if col not in one.columns:
            continue
        assert j.filter(pl.col(col).is_null() != pl.col(f"{col}_r").is_null()).height == 0, col
        d = j.select(((pl.col(col) - pl.col(f"{col}_r")).abs() / pl.max_horizontal(pl.col(f"{col}_r").abs(), 1.0)).max())
        assert (d.item() or 0.0) < 1e-12, col


@pytest.mark.parametrize("k", [1, 3, 7])
@pytest.mark.parametrize(("weight", "by"), [(None, None), ("w", None), (None, "m"), ("w", "m")])
def test_batches_equal_the_one_shot_report(k: int, weight: str | None, by: str | None) -> None:
    # the rows are apportioned once, from the batches' summed shares: n, tp_n ..., the intervals and the
    # between-group entropy indices (which read the row counts) are the one pass's
    df = _data()
    kw = dict(y_true="y", y_pred="p", weight=weight, by=by, protected_proba=PP, on_missing="ignore")
    protected = "sex" if by is None else None
    one = pf.fairness_report(df, protected=protected, **kw)
    acc = FairnessAccumulator(protected=protected, **kw)
    for batch in _batches(df, k):
        acc.update(batch)
    assert acc.protected[-1] == "race"
    whole = pf.confusion_counts(df, protected=protected, **{k: v for k, v in kw.items() if k != "on_missing"}).collect()
    assert_frame_equal(acc.state(), whole, check_exact=False, rel_tol=1e-12)
    assert acc.state().select(pl.selectors.unsigned_integer()).equals(whole.select(pl.selectors.unsigned_integer()))
    _assert_same_report(acc.compute(), one)
    groups = acc.state().filter(pl.col("race").is_not_null())
    assert int(groups["n"].sum()) + int(acc.state().filter(pl.col("race").is_null())["n"].sum()) == df.height


def test_scores_equal_the_one_shot_report() -> None:
    df = _data().with_columns(s=pl.col("w") / 2.0)
    kw = dict(y_true="y", y_score="s", protected="sex", protected_proba=PP, on_missing="ignore")
    acc = FairnessAccumulator(**kw)
    for batch in _batches(df, 5):
        acc.update(batch)
    _assert_same_report(acc.compute(), pf.fairness_report(df, **kw))


def test_proba_options_without_protected_proba_are_refused() -> None:
    with pytest.raises(pf.PolfairError, match="proba_assignment"):
        FairnessAccumulator(y_true="y", y_pred="p", protected="sex", proba_assignment="argmax")
    with pytest.raises(pf.PolfairError, match="protected"):
        FairnessAccumulator(y_true="y", y_pred="p")


def test_state_round_trip_and_merge_keep_the_estimated_attribute(tmp_path) -> None:  # type: ignore[no-untyped-def]
    df = _data()
    kw = dict(y_true="y", y_pred="p", protected="sex", protected_proba=PP)
    kw |= {"on_missing": "ignore"}
    parts = _batches(df, 4)
    acc = FairnessAccumulator(**kw).update(parts[0]).update(parts[1])
    acc.save(tmp_path / "s.parquet")
    loaded = FairnessAccumulator.load(tmp_path / "s.parquet", **kw)
    assert loaded.compute().equals(acc.compute())
    # the saved state keeps the rows not yet apportioned: batches added after loading it, and merges
    # of accumulators in any tree, give the one pass's report
    one = pf.fairness_report(df, **kw)
    _assert_same_report(loaded.update(parts[2]).update(parts[3]).compute(), one)
    right = FairnessAccumulator(**kw).update(parts[3]).merge(FairnessAccumulator(**kw).update(parts[2]))
    merged = FairnessAccumulator(**kw).update(parts[1]).merge(right).merge(FairnessAccumulator(**kw).update(parts[0]))
    _assert_same_report(merged.compute(), one)
    assert_frame_equal(merged.state(), loaded.state(), check_exact=False, rel_tol=1e-12)
    # a plain cell table (no saved pass result) still loads: its rows are apportioned already
    plain = FairnessAccumulator(**kw).load_state(acc.state())
    assert plain.state().equals(acc.state())
