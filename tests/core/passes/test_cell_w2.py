"""Issue 11 additions to the single pass: Σw² per confusion class and the jackknife bucket key."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import polfair as pf
from polfair.core.intervals import bucket_of
from polfair.core.passes.counts import BUCKET, COUNT_COLUMNS, W2_COLUMNS
from polfair.engines.accumulator import FairnessAccumulator

KW = dict(y_true="y", y_pred="p", protected=["a", "b"])


def _data(n: int = 3000, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    return pl.DataFrame({
        "y": rng.integers(0, 2, n), "p": rng.integers(0, 2, n),
        "a": rng.choice(["x", "y", "z"], n), "b": rng.choice(["u", "v"], n),
        "w": rng.lognormal(0, 1, n), "uid": rng.integers(0, 400, n), "m": rng.choice(["jan", "feb"], n),
    })  # fmt: skip


def _naive_w2(df: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    cls = {"tp": (1, 1), "fp": (0, 1), "tn": (0, 0), "fn": (1, 0)}
    return (
        df.group_by(keys)
        .agg(
            [
                (pl.col("w") ** 2).filter((pl.col("y") == y) & (pl.col("p") == p)).sum().alias(f"{c}_w2")
                for c, (y, p) in cls.items()
            ]
        )
        .sort(keys)
    )


def test_w2_columns_weighted_and_unweighted():
    df = _data()
    cells = pf.confusion_counts(df, weight="w", **KW).collect()
    assert list(cells.columns[-4:]) == list(W2_COLUMNS) and set(W2_COLUMNS) <= set(COUNT_COLUMNS)
    ref = _naive_w2(df, ["a", "b"])
    got = cells.select("a", "b", *W2_COLUMNS).sort("a", "b")
    for c in W2_COLUMNS:
        assert np.allclose(got[c].to_numpy(), ref[c].to_numpy(), rtol=1e-12)
    plain = pf.confusion_counts(df, **KW).collect()
    for c in ("tp", "fp", "tn", "fn"):
        assert plain[f"{c}_w2"].to_list() == plain[f"{c}_n"].cast(pl.Float64).to_list()


def test_w2_in_the_folded_pass_and_merge():
    df = _data().with_columns(pl.col("a").cast(pl.Enum(["x", "y", "z"])), pl.col("b").cast(pl.Enum(["u", "v"])))
    folded = pf.confusion_counts(df, weight="w", **KW).collect()
    general = pf.confusion_counts(df.with_columns(pl.col("a", "b").cast(pl.String)), weight="w", **KW).collect()
    assert np.allclose(folded["tp_w2"].to_numpy(), general["tp_w2"].to_numpy(), rtol=1e-12)
    parts = [pf.confusion_counts(d, weight="w", **KW) for d in (df[:1000], df[1000:])]
    merged = pf.merge_counts(parts).collect()
    for c in W2_COLUMNS:
        assert np.allclose(merged[c].to_numpy(), folded[c].to_numpy(), rtol=1e-12)


def test_cluster_adds_a_bucket_key_in_the_same_pass():
    df = _data()
    cells = pf.confusion_counts(df, cluster="uid", by="m", **KW).collect()
    assert cells.columns[:4] == ["m", "a", "b", BUCKET] and cells.schema[BUCKET] == pl.UInt8
    plain = pf.confusion_counts(df, by="m", **KW).collect()
    summed = cells.group_by("m", "a", "b").agg(pl.col(c).sum() for c in COUNT_COLUMNS).sort("m", "a", "b")
    assert summed.select(plain.columns).equals(plain.sort("m", "a", "b"), null_equal=True)
    # every cluster lands in exactly one bucket
    per_user = df.with_columns(bucket_of(pl.col("uid")).alias("bk")).group_by("uid").agg(pl.col("bk").n_unique())
    assert (per_user["bk"] == 1).all()
    assert cells[BUCKET].max() < 20
    fewer = pf.confusion_counts(df, cluster="uid", n_buckets=5, **KW).collect()
    assert fewer[BUCKET].max() < 5
    with pytest.raises(ValueError, match="n_buckets"):
        pf.confusion_counts(df, cluster="uid", n_buckets=300, **KW)
    with pytest.raises(ValueError, match="cluster"):
        pf.confusion_counts(df, cluster="a", **KW)


def test_accumulator_cluster_and_old_states():
    df = _data()
    acc = FairnessAccumulator(cluster="uid", **KW)
    for part in (df[:1500], df[1500:]):
        acc.update(part)
    ref = pf.confusion_counts(df, cluster="uid", **KW).collect()
    assert acc.state().sort("a", "b", BUCKET).equals(ref.sort("a", "b", BUCKET))
    # a version-1 state (no *_w2): unweighted -> the counts; weighted -> null with a warning
    v1 = pf.confusion_counts(df, **KW).collect().drop(*W2_COLUMNS)
    loaded = FairnessAccumulator(**KW).load_state(v1).state()
    assert loaded["tp_w2"].to_list() == loaded["tp_n"].cast(pl.Float64).to_list()
    v1w = pf.confusion_counts(df, weight="w", **KW).collect().drop(*W2_COLUMNS)
    with pytest.warns(UserWarning, match="squared weights"):
        accw = FairnessAccumulator(weight="w", **KW).load_state(v1w)
    assert accw.state()["tp_w2"].null_count() == accw.state().height
    accw.update(df[:100])  # the unknown Σw² stays unknown after more batches
    assert accw.state()["tp_w2"].null_count() == accw.state().height
