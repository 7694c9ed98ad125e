"""The folded-key pass (Enum / Boolean / in-memory Categorical keys folded into one integer, beside
the keys whose values are not known) equals the general pass (no key folded)."""

from __future__ import annotations

import hypothesis.strategies as st
import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from polars.testing import assert_frame_equal

import polfair as pf
from polfair.core.passes import spec as spec_module
from polfair.core.passes.counts import code_counts
from polfair.core.passes.spec import build_spec, fold_layout

KW = dict(y_true="y", y_pred="p", y_score="s", weight="w", protected=["a", "b", "c"])
COUNTS = ["n", "n_missing", "n_invalid", "tp_n", "fp_n", "tn_n", "fn_n"]


def _frame(n: int, seed: int, null_rate: float = 0.1) -> pl.DataFrame:
    rng = np.random.default_rng(seed)

    def nulls(values: np.ndarray) -> list:
        return [None if u < null_rate else v for v, u in zip(values.tolist(), rng.random(n))]

    return pl.DataFrame(
        {
            "a": pl.Series(nulls(rng.choice(["x", "y"], n)), dtype=pl.Categorical),
            "b": pl.Series(nulls(rng.choice(["r", "q", "p"], n)), dtype=pl.Enum(["r", "q", "p", "unused"])),
            "c": pl.Series(nulls(rng.integers(0, 2, n).astype(bool)), dtype=pl.Boolean),
            "d": pl.Series(rng.integers(0, 3, n).astype(bool)),  # a by column
            "y": pl.Series(nulls(rng.integers(0, 2, n)), dtype=pl.Int64),
            "p": rng.integers(0, 2, n),
            "s": pl.Series(nulls(rng.random(n)), dtype=pl.Float64),  # null scores: outcome codes >= 128
            "w": pl.Series(nulls(rng.integers(1, 4, n).astype(float)), dtype=pl.Float64),  # integer weights
        }
    )


def _sizes(fold: tuple) -> list[int | None]:
    return [None if entry is None else entry[0] for entry in fold]


def test_fold_layout_is_chosen_per_key_where_values_are_known() -> None:
    df = _frame(50, 0)
    sizes = _sizes(build_spec(df, **KW).fold)
    # a Categorical's size is the process-wide bound of interned values (>= its 2 values; other
    # tests in the same process intern more); an Enum counts its categories
    assert sizes[0] >= 2 and sizes[1:] == [4, 2]
    assert _sizes(build_spec(df.lazy(), **KW).fold) == [None, 4, 2]  # a lazy Categorical may intern new values
    lazy_enum = dict(KW, protected=["b", "c"])
    assert _sizes(build_spec(df.lazy(), **lazy_enum).fold) == [4, 2]
    as_string = df.with_columns(pl.col("a").cast(pl.String))
    assert _sizes(build_spec(as_string, **KW).fold) == [None, 4, 2]  # a String key beside the folded ones
    derived = dict(KW, protected=[pl.col("a").cast(pl.String).cast(pl.Categorical).alias("a2"), "b"])
    assert _sizes(build_spec(df, **derived).fold) == [None, 4]
    assert build_spec(df, by="d", **KW).fold[0] == (2, pl.Boolean)  # a Boolean by key folds too
    strings = df.with_columns(pl.col("a").cast(pl.String), pl.col("b").cast(pl.String))
    assert build_spec(strings, **dict(KW, protected=["a", "b"])).fold == ()  # no known key: the general pass


def _unfolded(data: pl.DataFrame | pl.LazyFrame, **kw: object) -> pl.DataFrame:
    """``confusion_counts`` with no key folded (the general pass)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(spec_module, "fold_layout", lambda *a, **k: ())
        return pf.confusion_counts(data, **kw).collect()


def test_fold_layout_width_limit() -> None:
    big = pl.Enum([f"v{i}" for i in range(70_000)])
    lf = pl.LazyFrame(schema={"k1": big, "k2": big, "k3": big})
    keys = [pl.col("k1"), pl.col("k2"), pl.col("k3")]
    assert len(fold_layout(lf, keys, in_memory=True)) == 3  # 70001^3 * 256 < 2^64: UInt64 key
    huge = pl.Enum([f"v{i}" for i in range(500_000)])
    lf = pl.LazyFrame(schema={"k1": huge, "k2": huge, "k3": huge})
    assert fold_layout(lf, keys, in_memory=True) == ()  # would overflow UInt64: general pass


@pytest.mark.parametrize("by", [None, "d"])
def test_folded_cells_equal_general_cells(by: str | None) -> None:
    df = _frame(3000, 1)
    folded = pf.confusion_counts(df, by=by, **KW).collect()
    general = _unfolded(df, by=by, **KW)
    assert None not in build_spec(df, by=by, **KW).fold
    assert_frame_equal(folded, general)  # integer weights, per-cell sums of scores: exact up to order
    assert folded.schema == general.schema
    assert folded["n"].sum() == df.height
    assert folded.filter(pl.col("a").is_null(), pl.col("b").is_null(), pl.col("c").is_null()).height == (
        df.filter(pl.col("a").is_null(), pl.col("b").is_null(), pl.col("c").is_null()).select("d").n_unique()
        if by
        else 1
    )


@pytest.mark.parametrize("lazy", [False, True])
def test_partly_folded_cells_equal_general_cells(lazy: bool) -> None:
    """Keys whose values are not known (a date ``by``, a String, a lazy Categorical) beside folded ones."""
    df = _frame(3000, 4).with_columns(
        day=pl.date(2026, 1, 1) + pl.duration(days=pl.int_range(pl.len()) % 37),
        t=pl.col("a").cast(pl.String).fill_null("z") + "'\"",
    )
    data = df.lazy() if lazy else df
    for kw in (dict(KW, by="day"), dict(KW, protected=["t", "b", "c"]), dict(KW, protected=["b", "t", "a"], by="day")):
        fold = build_spec(data, **kw).fold
        assert None in fold and any(entry is not None for entry in fold)  # partly folded
        folded = pf.confusion_counts(data, **kw).collect()
        general = _unfolded(data, **kw)
        assert folded.columns == general.columns and folded.schema == general.schema
        keys = [c for c in folded.columns if c in ("day", "t", "a", "b", "c")]
        assert_frame_equal(folded.sort(keys, nulls_last=False), general.sort(keys, nulls_last=False))
        assert folded["n"].sum() == df.height


def test_cluster_keys_fold_beside_the_bucket() -> None:
    df = _frame(2000, 6).with_columns(user=pl.int_range(pl.len()) % 97)
    kw = dict(KW, cluster="user")
    folded = pf.confusion_counts(df, **kw).collect()
    general = _unfolded(df, **kw)
    keys = ["a", "b", "c", "bucket"]
    assert_frame_equal(folded.sort(keys, nulls_last=False), general.sort(keys, nulls_last=False))


def test_folded_report_equals_general_report() -> None:
    df = _frame(3000, 2)
    a = pf.fairness_report(df, on_missing="ignore", **KW)
    b = pf.fairness_report(df.lazy(), on_missing="ignore", **KW)
    assert_frame_equal(a, b, rel_tol=1e-12)


def test_fold_keeps_unobserved_and_reordered_categories() -> None:
    # Enum values keep their dtype (order of categories) and unobserved ones do not appear
    df = pl.DataFrame(
        {"g": pl.Series(["q", "q", "r"], dtype=pl.Enum(["r", "q", "p"])), "y": [1, 0, 1], "p": [1, 1, 0]}
    )
    cells = pf.confusion_counts(df, y_true="y", y_pred="p", protected="g").collect()
    assert cells.schema["g"] == pl.Enum(["r", "q", "p"])
    assert cells["g"].to_list() == ["r", "q"]  # sorted by the Enum's order
    assert cells["n"].to_list() == [1, 2]
    assert cells["tp_n"].to_list() == [0, 1]


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 400), seed=st.integers(0, 10_000), null_rate=st.sampled_from([0.0, 0.3, 1.0]))
def test_fold_property(n: int, seed: int, null_rate: float) -> None:
    df = _frame(n, seed, null_rate)
    kw = dict(KW, y_true="p")
    folded = pf.confusion_counts(df, **kw).collect()
    general = _unfolded(df, **kw)
    assert_frame_equal(folded, general)
    assert folded.select(COUNTS).sum().row(0) == general.select(COUNTS).sum().row(0)
    lazy = pf.confusion_counts(df.lazy(), **kw).collect()  # the lazy Categorical beside the folded keys
    assert_frame_equal(lazy, general)


def test_folded_enum_pass_streams_without_fallback(tmp_path) -> None:
    from test_scale import FALLBACK  # Polars' colour for an in-memory-engine fallback node

    path = tmp_path / "d.parquet"
    _frame(2000, 3).with_columns(pl.col("a", "b").cast(pl.String)).write_parquet(path)
    lf = pl.scan_parquet(path).with_columns(pl.col("b").cast(pl.Enum(["r", "q", "p", "unused"])))
    kw = dict(KW, protected=["b", "c"])
    spec = build_spec(lf, **kw)
    assert spec.fold  # Enum and Boolean keys fold even from a scan
    graph = code_counts(spec).show_graph(engine="streaming", plan_stage="physical", raw_output=True, show=False)
    assert "group-by" in graph and FALLBACK not in graph
    folded = pf.confusion_counts(lf, **kw).collect(engine="streaming")
    general = pf.confusion_counts(lf.with_columns(pl.col("b").cast(pl.String)), **kw).collect()
    folded = folded.with_columns(pl.col("b").cast(pl.String)).sort("b", "c", nulls_last=False)
    assert_frame_equal(folded, general.sort("b", "c", nulls_last=False))  # rows ordered by the Enum vs by string
    partly = dict(KW, protected=["a", "b", "c"])  # a String key beside the Enum and Boolean ones
    spec = build_spec(lf, **partly)
    assert spec.fold[0] is None and spec.fold[1:]
    graph = code_counts(spec).show_graph(engine="streaming", plan_stage="physical", raw_output=True, show=False)
    assert "group-by" in graph and FALLBACK not in graph
    streamed = pf.confusion_counts(lf, **partly).collect(engine="streaming")
    assert_frame_equal(streamed.sort("a", "b", "c", nulls_last=False),
                       _unfolded(lf, **partly).sort("a", "b", "c", nulls_last=False))  # fmt: skip
