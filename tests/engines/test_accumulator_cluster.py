"""FairnessAccumulator with ``cluster=``: its state has a ``bucket`` key, and :meth:`compute` reads it as
``fairness_report(cluster=...)`` does (:func:`polfair.core.clustered.clustered_report`): the buckets summed
before every value (the all-groups entropy indices and differential fairness read the groups, not the
buckets), then jackknife intervals on the group rows. The same rows say the same thing at every door."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from test_accumulator_proba import _assert_same_report, _batches  # k uneven batches; rows equal to 1e-12

import polfair as pf
from polfair.engines.accumulator import FairnessAccumulator

PP = {"race": {"a": "pa", "b": "pb", "c": None}}


def _data(n: int = 2400) -> pl.DataFrame:
    rng = np.random.default_rng(11)
    pa = rng.uniform(0, 1, n)
    pb = rng.uniform(0, 1 - pa)
    uid = rng.integers(0, 300, n)  # several rows per person: the clusters
    df = pl.DataFrame({"y": rng.integers(0, 2, n), "p": (rng.uniform(0, 1, n) < 0.3 + 0.4 * pa).astype(int),
                       "sex": rng.choice(["f", "m"], n), "grp": rng.choice(["x", "y", "z"], n, p=[0.6, 0.3, 0.1]),
                       "pa": pa, "pb": pb, "w": rng.integers(4, 17, n) / 8.0, "m": rng.integers(0, 3, n),
                       "uid": uid})  # fmt: skip
    i = pl.int_range(n)  # hostile rows: missing labels, unknown membership probabilities
    return df.with_columns(pl.when(i % 97 == 0).then(None).otherwise(pl.col("pa")).alias("pa"),
                           pl.when(i % 89 == 0).then(None).otherwise(pl.col("y")).alias("y"))  # fmt: skip


def _options(weight: str | None, by: str | None, proba: bool, ci: float | None = 0.95) -> dict:
    kw: dict = dict(y_true="y", y_pred="p", weight=weight, by=by, cluster="uid", n_buckets=8, ci=ci,
                    on_missing="ignore")  # fmt: skip
    if proba:
        return kw | {"protected_proba": PP, "protected": "sex" if by is None else None}
    return kw | {"protected": ["sex", "grp"]}


def _accumulated(df: pl.DataFrame, k: int, **kw: object) -> pl.DataFrame:
    acc = FairnessAccumulator(**kw)  # type: ignore[arg-type]
    for b in _batches(df, k):
        acc.update(b)
    return acc.compute()


@pytest.mark.parametrize("k", [1, 3, 7])
@pytest.mark.parametrize("proba", [False, True])
@pytest.mark.parametrize(("weight", "by"), [(None, None), ("w", None), (None, "m"), ("w", "m")])
def test_batches_equal_the_one_shot_clustered_report(k: int, proba: bool, weight: str | None, by: str | None) -> None:
    df = _data()
    kw = _options(weight, by, proba)
    one = df.pipe(pf.fairness_report, **kw)
    assert one.filter(pl.col("ci_method") == "jackknife_t").height > 0
    _assert_same_report(_accumulated(df, k, **kw), one)


@pytest.mark.parametrize("proba", [False, True])
def test_without_intervals_the_values_are_the_one_shot_report(proba: bool) -> None:
    df = _data()
    kw = _options("w", None, proba, ci=None)
    _assert_same_report(_accumulated(df, 3, **kw), df.pipe(pf.fairness_report, **kw))


def test_the_all_groups_rows_read_the_groups_not_the_buckets() -> None:
    # the rows the bucket key used to change: entropy over every individual, between-group indices, EDF;
    # without cluster= they are the same numbers (the bucket is no group)
    df = _data()
    kw = _options(None, None, False, ci=None)
    got = _accumulated(df, 7, **kw)
    plain = df.pipe(pf.fairness_report, **{k: v for k, v in kw.items() if k not in ("cluster", "n_buckets")})
    rows = got.filter(pl.col("attribute").is_null())
    names = rows["metric"].cast(pl.String)
    assert names.str.contains("theil|entropy|differential").sum() >= 4
    j = rows.join(plain, on=["attribute", "group", "metric"], suffix="_r", nulls_equal=True)
    assert j.height == rows.height
    d = j.select(((pl.col("value") - pl.col("value_r")).abs() / pl.max_horizontal(pl.col("value_r").abs(), 1.0)).max())
    assert d.item() < 1e-12


@pytest.mark.parametrize("proba", [False, True])
def test_merge_save_and_load_keep_the_buckets(tmp_path, proba: bool) -> None:  # type: ignore[no-untyped-def]
    df = _data()
    kw = _options("w", "m", proba)
    one = df.pipe(pf.fairness_report, **kw)
    parts = _batches(df, 3)
    left, right = FairnessAccumulator(**kw), FairnessAccumulator(**kw)  # type: ignore[arg-type]
    left.update(parts[0]).update(parts[1])
    right.update(parts[2])
    assert "bucket" in left.state().columns
    _assert_same_report(left.merge(right).compute(), one)
    path = tmp_path / "acc.parquet"
    first = FairnessAccumulator(**kw).update(parts[0])  # type: ignore[arg-type]
    first.save(path)
    loaded = FairnessAccumulator.load(path, **kw)
    assert "bucket" in loaded.state().columns
    _assert_same_report(loaded.update(parts[1]).update(parts[2]).compute(), one)
