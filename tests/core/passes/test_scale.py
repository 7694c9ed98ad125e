"""Scale properties: streaming plan without fallback, exact mergeable counts, partitioned inputs."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polfair as pf
from polfair.core.passes.counts import code_counts
from polfair.core.passes.spec import build_spec

FALLBACK = 'fillcolor="0.0 0.3 1.0"'  # Polars' colour for an in-memory-engine fallback node
KW = dict(y_true="y", y_pred="p", y_score="s", weight="w", protected=["sex", "race", "age"])


def _frame(n: int = 20_000, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    return pl.DataFrame(
        {
            "sex": rng.choice(["F", "M"], n),
            "race": rng.choice(list("ABCDE"), n),
            "age": rng.integers(18, 80, n),
            "y": rng.integers(0, 2, n),
            "p": rng.integers(0, 2, n),
            "s": rng.random(n),
            "w": rng.integers(1, 4, n).astype(float),  # integer weights: sums are exact in any order
            "day": rng.integers(0, 5, n),
        }
    )


def test_counting_pass_streams_without_fallback(tmp_path):
    path = tmp_path / "d.parquet"
    _frame().write_parquet(path)
    kw = dict(KW, protected=["sex", "race", (pl.col("age") // 20).alias("age_band")])
    spec = build_spec(str(path), **kw)
    graph = code_counts(spec).show_graph(engine="streaming", plan_stage="physical", raw_output=True, show=False)
    assert "group-by" in graph
    assert FALLBACK not in graph
    cells = pf.confusion_counts(str(path), **kw, score_label=1)  # the score's reading stated: nothing to check
    graph = cells.show_graph(engine="streaming", plan_stage="physical", raw_output=True, show=False)
    assert FALLBACK not in graph
    # the reading checked in the data (the polarity rule): one in-memory step, on the small code table after the
    # streaming group-by (it raises PolarityError when collected if a label breaks the reading)
    graph = pf.confusion_counts(str(path), **kw).show_graph(engine="streaming", plan_stage="physical", raw_output=True,
                                                             show=False)  # fmt: skip
    fallbacks = [line for line in graph.splitlines() if FALLBACK in line]
    assert len(fallbacks) == 1 and "in-memory-map" in fallbacks[0] and "group-by" in graph


def test_counts_plan_serializes_for_remote_engines(tmp_path):
    path = tmp_path / "d.parquet"
    _frame(500).write_parquet(path)
    lf = pf.confusion_counts(str(path), **KW)
    again = pl.LazyFrame.deserialize(__import__("io").BytesIO(lf.serialize()))
    assert_frame_equal(again.collect(), lf.collect())


def test_counts_are_unsigned_64_bit_and_exact():
    cells = pf.confusion_counts(_frame(), **KW).collect()
    for c in ("n", "n_missing", "n_invalid", "tp_n", "fp_n", "tn_n", "fn_n"):
        assert cells.schema[c] == pl.UInt64
    for c in ("w", "tp", "fp", "tn", "fn", "gtp", "gfp", "gtn", "gfn"):
        assert cells.schema[c] == pl.Float64
    assert cells["n"].sum() == 20_000
    assert cells.select(pl.sum_horizontal("tp_n", "fp_n", "tn_n", "fn_n")).to_series().sum() == 20_000


def test_merge_counts_of_partitions_equals_whole_and_report_matches(tmp_path):
    df = _frame()
    whole = pf.confusion_counts(df, **KW).collect()
    parts = [pf.confusion_counts(d, **KW) for d in df.partition_by("day")]
    merged = pf.merge_counts(parts).collect()
    assert_frame_equal(merged, whole)  # integer weights: exact
    a = pf.report_from_counts(merged, protected=KW["protected"])
    b = pf.fairness_report(df, **KW)
    assert_frame_equal(a, b)


def test_hive_partitioned_dataset_and_glob(tmp_path):
    df = _frame()
    root = tmp_path / "hive"
    for (day,), part in df.group_by("day"):
        d = root / f"day={day}"
        d.mkdir(parents=True)
        part.drop("day").write_parquet(d / "part.parquet")
    expected = pf.fairness_report(df, **KW, by="day").sort("day", maintain_order=True)
    got = pf.fairness_report(str(root), **KW, by="day").sort("day", maintain_order=True)
    assert_frame_equal(got.with_columns(pl.col("day").cast(pl.Int64)), expected)
    flat = tmp_path / "flat"
    flat.mkdir()
    for i, part in enumerate(df.partition_by("day")):
        part.write_parquet(flat / f"{i}.parquet")
    assert_frame_equal(pf.fairness_report(str(flat / "*.parquet"), **KW), pf.fairness_report(df, **KW))


@pytest.mark.parametrize("engine", ["streaming", "in-memory"])
def test_row_order_and_engine_do_not_change_integer_counts(engine):
    df = _frame()
    base = pf.confusion_counts(df, **KW).collect()
    shuffled = df.sample(fraction=1.0, shuffle=True, seed=3)
    spec = build_spec(shuffled, **KW)
    from polfair.core.passes.collect import collect_cells

    got = collect_cells(spec, engine=engine)
    assert_frame_equal(got, base)


def test_duckdb_relation_gives_the_polars_report():
    duckdb = pytest.importorskip("duckdb")
    pytest.importorskip("narwhals")
    df = _frame(5_000)
    rel = duckdb.from_arrow(df.to_arrow())
    kw = dict(KW, protected=["sex", "race"])
    assert_frame_equal(
        pf.fairness_report(rel, **kw, by="day").sort("day", maintain_order=True),
        pf.fairness_report(df, **kw, by="day").sort("day", maintain_order=True),
        check_exact=False,
        rel_tol=1e-12,
    )
    with pytest.raises(TypeError, match="column names"):
        pf.confusion_counts(rel, y_true="y", y_pred=pl.col("p") == 1, protected="sex")


def test_streaming_pass_raises_the_hot_table_cap_only_while_it_runs(monkeypatch):
    # Polars buffers the rows of groups beyond its hot-table cap raw (memory ~ rows); the report's
    # pass raises the cap while it runs, keeps a cap the user set, and leaves no trace afterwards
    import os

    from polfair.core.passes import collect

    env = collect._HOT_TABLE_ENV
    monkeypatch.delenv(env, raising=False)
    seen: list[str | None] = []
    real = collect.code_counts

    def spy(spec, **kw):
        seen.append(os.environ.get(env))
        return real(spec, **kw)

    monkeypatch.setattr(collect, "code_counts", spy)
    df = _frame(2_000)
    want = pf.confusion_counts(df, **KW).collect()
    assert_frame_equal(collect.collect_cells(build_spec(df, **KW)), want)
    assert seen == [str(collect._HOT_TABLE_GROUPS)] and env not in os.environ
    collect.collect_cells(build_spec(df, **KW), engine="in-memory")  # no hot tables: untouched
    assert seen[-1] is None
    monkeypatch.setattr(collect, "code_counts", lambda spec, **kw: 1 / 0)  # restored on errors too
    with pytest.raises(ZeroDivisionError):
        collect.collect_cells(build_spec(df, **KW))
    assert env not in os.environ and collect._hot_users == 0
    monkeypatch.setattr(collect, "code_counts", spy)
    monkeypatch.setenv(env, "5000")  # the user's own setting wins
    collect.collect_cells(build_spec(df, **KW))
    assert seen[-1] == "5000" and os.environ[env] == "5000"
    monkeypatch.delenv(env)
    pl.Config.reload_env_vars()  # leave Polars' cached configuration as the environment is


@pytest.mark.parametrize("by", [None, ["day"]])
def test_long_report_layout_chunked_and_copied_are_the_same_rows(monkeypatch, by):
    # few runs of entities (in a large report): the long columns are zero-copy chunks of the parts'
    # arrays, aligned across columns; many runs (or _MAX_CHUNKS = 0): one copied array per column.
    from polfair.core.report import rows as _report_rows

    df = _frame(5_000)
    monkeypatch.setattr(_report_rows, "_MIN_CHUNKED_ROWS", 0)  # chunk this small report too
    chunked = pf.fairness_report(df, **KW, by=by, exact_sums=True)  # bit-identical sums (issue 21: opt-in)
    monkeypatch.setattr(_report_rows, "_MAX_CHUNKS", 0)
    copied = pf.fairness_report(df, **KW, by=by, exact_sums=True)
    assert copied.n_chunks() == 1
    if by is None:
        assert len(set(chunked.n_chunks("all"))) == 1 and chunked.n_chunks() > 1  # aligned chunks
    assert_frame_equal(chunked, copied)
    assert_frame_equal(chunked.filter(pl.col("metric") == "true_positive_rate"), copied.filter(pl.col("metric") == "true_positive_rate"))
    assert chunked.rechunk().equals(copied)
