"""ranking_report (issue 43): hand-computed cases, a property test against a naive item-by-item
reference (tests/ranking/naive.py), the input rules, intervals by query."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import polfair as pf
from polfair.core.report.run_metadata import request_of
from polfair.exceptions import ColumnNotFoundError, InvalidInputError, PolfairError

sys.path.insert(0, str(Path(__file__).parent))
import naive  # noqa: E402


def v(p: int) -> float:
    return 1.0 / math.log2(1 + p)


def val(rep: pl.DataFrame, metric: str, group: str | None = None, col: str = "value") -> float:
    f = rep.filter(pl.col("metric") == metric, pl.col("attribute").is_not_null())
    f = f.filter(pl.col("group").is_null() if group is None else pl.col("group") == group)
    return f[col].item()


TIES = pl.DataFrame({"q": [1, 1, 1, 1, 2, 2, 2], "r": [1, 2, 2, 4, 1, 1, 3], "g": ["a", "b", "a", "b", "a", "b", "b"]})


def test_hand_computed_ties_and_cutoff() -> None:
    rep = pf.ranking_report(TIES, query="q", rank="r", protected="g", k=2, ci=None)
    # query 1: a at 1 and in the tie {2, 3}; b in the tie and at 4. query 2: a, b tied on {1, 2}, b at 3
    t12, t23 = (v(1) + v(2)) / 2, v(2) / 2  # the tie's mean weights, cut at k = 2
    ea, eb = 1 + t23 + t12, t23 + t12
    assert val(rep, "exposure", "a") == pytest.approx(ea / 3, abs=1e-15)
    assert val(rep, "exposure", "b") == pytest.approx(eb / 4, abs=1e-15)
    assert val(rep, "exposure_share", "a") == pytest.approx(ea / (ea + eb), abs=1e-15)
    assert val(rep, "item_share", "b") == pytest.approx(4 / 7, abs=1e-15)
    # top-2 slots: query 1 a 1 + 1/2, b 1/2; query 2 a 1, b 1: out of 4 slots; a tie straddling k counts 1/2
    assert val(rep, "top_k_share", "a") == pytest.approx(2.5 / 4, abs=1e-15)
    awrf1 = (t23 / 2) / ((1 + t23) / 2)
    awrf2 = (t12 / 2) / t12
    assert val(rep, "awrf") == pytest.approx((awrf1 + awrf2) / 2, abs=1e-15)
    assert val(rep, "exposure", None, "ratio") == pytest.approx(min(ea / 3, eb / 4) / max(ea / 3, eb / 4), abs=1e-15)
    assert rep.filter(pl.col("group") == "a", pl.col("metric") == "exposure")["reference_group"].item() == "b"


def test_single_group_queries_left_out_and_counted() -> None:
    df = pl.concat([TIES, pl.DataFrame({"q": [3, 3], "r": [1, 2], "g": ["a", "a"]})])
    rep = pf.ranking_report(df, query="q", rank="r", protected="g", ci=None)
    base = pf.ranking_report(TIES, query="q", rank="r", protected="g", ci=None)
    assert val(rep, "awrf") == pytest.approx(val(base, "awrf"), abs=1e-15)
    assert val(rep, "ndkl") == pytest.approx(val(base, "ndkl"), abs=1e-15)
    assert request_of(rep)["queries_left_out"] == {"g": 1}


def test_ndcg_by_query_group_hand() -> None:
    df = pl.DataFrame({"q": [1, 1, 1, 2, 2], "r": [1, 2, 3, 1, 2], "rel": [0, 2, 1, 0, 0], "u": ["x", "x", "x", "y", "y"],
                       "g": ["a", "b", "a", "a", "b"]})  # fmt: skip
    rep = pf.ranking_report(df, query="q", rank="r", protected="g", query_protected="u", relevance="rel", k=2, ci=None)
    want = (2 * v(2)) / (2 * v(1) + 1 * v(2))
    assert val(rep, "ndcg_at_k", "x") == pytest.approx(want, abs=1e-15)
    assert val(rep, "ndcg_at_k", "y") == 0.0  # no relevant item: 0, as ir-measures
    assert rep.filter(pl.col("metric") == "ndcg_at_k", pl.col("attribute").is_null())["value"].item() == pytest.approx(want / 2)


ROWS = st.lists(
    st.tuples(st.integers(0, 3), st.integers(0, 2), st.integers(0, 3), st.sampled_from(["a", "b", "c"]),
              st.sampled_from(["x", "y"])),
    min_size=1, max_size=40,
)  # fmt: skip


def _competition(raw: list[tuple[int, int, int, str, str]]) -> list[dict]:
    """Rows (query, score, relevance, group, query group) -> competition ranks by score within each query."""
    rows = []
    for q in sorted({r[0] for r in raw}):
        items = [r for r in raw if r[0] == q]
        qg = items[0][4]
        for it in items:
            rank = 1 + sum(1 for o in items if o[1] > it[1])
            rows.append({"q": q, "r": rank, "rel": float(it[2]), "g": it[3], "qg": qg})
    return rows


@settings(max_examples=60, deadline=None)
@given(ROWS, st.sampled_from([None, 1, 2, 5]), st.sampled_from(["log", "geometric", "reciprocal"]))
def test_matches_naive_reference(raw: list, k: int | None, kind: str) -> None:
    rows = _competition(raw)
    want = naive.report(rows, k, kind, p=0.3)
    df = pl.DataFrame(rows)
    rep = pf.ranking_report(df, query="q", rank="r", protected="g", query_protected="qg", relevance="rel", k=k,
                            position_weight=kind, p=0.3, ci=None)  # fmt: skip
    g_rows = rep.filter(pl.col("attribute") == "g", pl.col("group").is_not_null())
    for metric in ("exposure", "exposure_share", "item_share", "exposure_per_relevance", "top_k_share"):
        got = {r["group"]: r["value"] for r in g_rows.filter(pl.col("metric") == metric).iter_rows(named=True)}
        for g, x in want.get(metric, {}).items():
            assert got[g] == pytest.approx(x, abs=1e-12, rel=1e-12), (metric, g)
    for metric in ("awrf", "ndkl"):
        got = rep.filter(pl.col("attribute") == "g", pl.col("metric") == metric)["value"]
        if want[metric] is None:
            assert got.len() == 0 or got.item() is None
        else:
            assert got.item() == pytest.approx(want[metric], abs=1e-12)
    nd = {r["group"]: r["value"] for r in rep.filter(pl.col("metric") == "ndcg_at_k", pl.col("group").is_not_null()).iter_rows(named=True)}
    for g, x in want["ndcg_at_k"].items():
        assert nd[g] == pytest.approx(x, abs=1e-12)


def test_lazy_parquet_and_by_equal_subsets(tmp_path: Path) -> None:
    df = pl.concat([TIES.with_columns(pl.lit(1).alias("day")), TIES.with_columns(pl.lit(2).alias("day"), (pl.col("q") + 10))])
    path = tmp_path / "r.parquet"
    df.write_parquet(path)
    a = pf.ranking_report(df, query="q", rank="r", protected="g", k=3, ci=None)
    b = pf.ranking_report(df.lazy(), query="q", rank="r", protected="g", k=3, ci=None)
    c = pf.ranking_report(str(path), query="q", rank="r", protected="g", k=3, ci=None, engine="streaming")
    assert_frame_equal(a, b, abs_tol=1e-14)
    assert_frame_equal(a, c, abs_tol=1e-14)
    byrep = pf.ranking_report(df, query="q", rank="r", protected="g", k=3, by="day", ci=None)
    one = pf.ranking_report(df.filter(day=2), query="q", rank="r", protected="g", k=3, ci=None)
    got = byrep.filter(day=2).drop("day")
    assert_frame_equal(got.select("metric", "group", "value"), one.select("metric", "group", "value"), abs_tol=1e-14)


def test_input_rules() -> None:
    with pytest.raises(InvalidInputError, match="competition ranks"):
        pf.ranking_report(pl.DataFrame({"q": [1, 1, 1], "r": [1, 2, 2], "g": ["a", "b", "a"]}).with_columns(
            pl.Series("r", [1, 1, 2])), query="q", rank="r", protected="g")
    with pytest.raises(InvalidInputError, match="null, zero or negative rank"):
        pf.ranking_report(pl.DataFrame({"q": [1, 1], "r": [0, 1], "g": ["a", "b"]}), query="q", rank="r", protected="g")
    with pytest.raises(InvalidInputError, match="dtype"):
        pf.ranking_report(pl.DataFrame({"q": [1], "r": [1.0], "g": ["a"]}), query="q", rank="r", protected="g")
    with pytest.raises(InvalidInputError, match="non-negative"):
        pf.ranking_report(TIES.with_columns(rel=pl.lit(-1.0)), query="q", rank="r", protected="g", relevance="rel")
    with pytest.raises(InvalidInputError, match="query weight"):
        pf.ranking_report(TIES.with_columns(w=pl.int_range(pl.len())), query="q", rank="r", protected="g", weight="w")
    with pytest.raises(InvalidInputError, match="property of the query"):
        pf.ranking_report(TIES, query="q", rank="r", query_protected="g")
    with pytest.raises(ColumnNotFoundError):
        pf.ranking_report(TIES, query="q", rank="rank", protected="g")
    with pytest.raises(PolfairError, match="position_weight"):
        pf.ranking_report(TIES, query="q", rank="r", protected="g", position_weight="exp")
    with pytest.raises(PolfairError, match="k="):
        pf.ranking_report(TIES, query="q", rank="r", protected="g", k=0)


def test_query_weight_equals_repeating_queries() -> None:
    w = TIES.with_columns(pl.when(pl.col("q") == 1).then(3.0).otherwise(1.0).alias("w"))
    rep = pf.ranking_report(w, query="q", rank="r", protected="g", weight="w", k=2, ci=None)
    rep_q = pl.concat([TIES.filter(q=1).with_columns(pl.col("q") + 100 * i) for i in range(3)] + [TIES.filter(q=2)])
    want = pf.ranking_report(rep_q, query="q", rank="r", protected="g", k=2, ci=None)
    for m in ("exposure", "exposure_share", "top_k_share"):
        assert val(rep, m, "a") == pytest.approx(val(want, m, "a"), abs=1e-14)
    assert val(rep, "awrf") == pytest.approx(val(want, "awrf"), abs=1e-14)


def test_intervals_by_query_and_privileged() -> None:
    adult = pf.load_adult().head(3000).with_columns(pl.int_range(pl.len()).alias("i"))
    df = adult.with_columns((pl.col("i") // 30).alias("q")).with_columns(
        pl.col("hours_per_week").rank("min", descending=True).over("q").cast(pl.Int64).alias("r"))
    rep = pf.ranking_report(df, query="q", rank="r", protected="sex", k=10, privileged={"sex": "Male"})
    row = rep.filter(pl.col("group") == "Female", pl.col("metric") == "exposure")
    assert row["reference_group"].item() == "Male"
    assert row["ci_method"].item() == "jackknife_t" and row["n_eff"].item() == 100
    assert row["value_lo"].item() < row["value"].item() < row["value_hi"].item()
    assert row["ratio_lo"].item() < row["ratio"].item() < row["ratio_hi"].item()
    assert 0 <= row["p_value"].item() <= 1
    assert rep.filter(pl.col("metric") == "awrf")["value_lo"].item() is not None


def test_hostile_keys_by_null_and_categorical() -> None:
    """String query ids, UInt8 ranks, Categorical attributes with nulls (a group "null"), a null ``by`` value:
    each ``by`` value's rows equal the report of its subset."""
    adult = pf.load_adult().head(600).with_columns(pl.int_range(pl.len()).alias("i"))
    df = adult.with_columns(
        (pl.col("i") // 20).cast(pl.String).alias("q"),
        pl.when(pl.col("i") % 7 == 0).then(None).otherwise(pl.col("race")).alias("race"),
        pl.when((pl.col("i") // 20) % 5 == 0).then(None).otherwise(pl.col("i") // 300).alias("day"),
    ).with_columns(pl.col("hours_per_week").rank("min", descending=True).over("q").cast(pl.UInt8).alias("r"))
    kw = dict(query="q", rank="r", protected=["sex", "race"], k=5, ci=None)
    rep = pf.ranking_report(df, by="day", **kw)
    assert "null" in rep["group"].to_list()
    for day in (None, 0, 1):
        sub = df.filter(pl.col("day").is_null() if day is None else pl.col("day") == day)
        got = rep.filter(pl.col("day").is_null() if day is None else pl.col("day") == day).drop("day")
        assert_frame_equal(got.select("attribute", "group", "metric", "value", "difference", "ratio", "n"),
                           pf.ranking_report(sub, **kw).select("attribute", "group", "metric", "value", "difference",
                                                               "ratio", "n"), abs_tol=1e-14, check_dtypes=False)  # fmt: skip


def test_accumulator_over_batches_equals_the_one_shot_report() -> None:
    """RankingAccumulator: batches that split queries (rows of a query in several batches), with by, weights, a query
    attribute with nDCG, thresholds: report() equals ranking_report of the concatenated rows (values, intervals,
    statuses, request)."""
    from polfair.core.report.run_metadata import request_of
    from polfair.ranking import RankingAccumulator

    adult = pf.load_adult().head(3000).with_columns(pl.int_range(pl.len()).alias("i"))
    df = adult.with_columns((pl.col("i") // 30).alias("q"), pl.col("income_gt_50k").cast(pl.Float64).alias("rel"),
                            (pl.col("i") // 1500).alias("day"), (1.0 + pl.col("i") // 30 % 3).alias("w"))  # fmt: skip
    df = df.with_columns(pl.col("hours_per_week").rank("min", descending=True).over("q").cast(pl.Int64).alias("r"),
                         pl.col("race").first().over("q").alias("user")).sample(fraction=1.0, shuffle=True, seed=4)  # fmt: skip
    kw = dict(query="q", rank="r", protected=["sex", "race"], query_protected="user", relevance="rel", weight="w", by="day",
              k=5, thresholds={"exposure_share": [0.1, 0.6], "awrf": {"min": 0.5}})  # fmt: skip
    acc = RankingAccumulator(**kw)
    for start in range(0, df.height, 700):  # 5 batches; a query's 30 rows are spread over several (shuffled)
        acc.update(df.slice(start, 700))
    got, want = acc.report(), pf.ranking_report(df, **kw)
    assert got.columns == want.columns and got.height == want.height
    assert got.drop(pl.selectors.float()).equals(want.drop(pl.selectors.float()))
    for c in got.select(pl.selectors.float()).columns:
        assert ((got[c] - want[c]).abs().max() or 0.0) < 1e-12, c
    assert request_of(got) == request_of(want)
    # the running cell table stays the cell table of all the rows (compact: one row per key, whatever the batches)
    counts = pf.ranking_counts(df, **{k: v for k, v in kw.items() if k != "thresholds"})
    assert acc.cells is not None and acc.cells.height == counts.height
    keys = [c for c in counts.columns if c not in ("n", "rel", "qw_min", "qw_max")]
    assert_frame_equal(acc.cells.sort(keys), counts.sort(keys), check_exact=False, rel_tol=1e-12)
    with pytest.raises(PolfairError, match="update"):
        RankingAccumulator(query="q", rank="r", protected="sex").report()
    with pytest.raises(PolfairError, match="k="):
        RankingAccumulator(query="q", rank="r", protected="sex", k=0)
    with pytest.raises(PolfairError, match="ranking_report's keywords"):
        RankingAccumulator(query="q", rank="r", protected="sex", top_k=5)
    with pytest.raises(PolfairError, match="query"):
        RankingAccumulator(rank="r", protected="sex")
