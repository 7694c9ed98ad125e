"""ranking_report and the report skeleton's small-group policy and statuses (issue 43): the reference is chosen
among the groups that meet ``min_sample_size`` (polfair.core.reference), a named reference below it warns,
and the monitor's ``apply_thresholds`` judges ranking rows with the one status rule, reading the report's minimum."""

from __future__ import annotations

import polars as pl
import pytest

import polfair as pf
from polfair.core.report.run_metadata import request_of
from polfair.exceptions import ReferenceWarning
from polfair.monitor import apply_thresholds


def queries() -> pl.DataFrame:
    """Query group "few" has the most queries (4, of 2 items: 8 rows); "many" 3 queries of 10 items (30 rows).
    Items: group "s" is 1 item in each of 3 queries (3 rows, all at the top), "t" the rest."""
    rows = []
    for q in range(4):
        rows += [{"q": q, "r": r, "u": "few", "g": "t", "rel": float(r == 1)} for r in (1, 2)]
    for q in range(4, 7):
        rows += [{"q": q, "r": r, "u": "many", "g": "s" if r == 1 else "t", "rel": float(r <= 2)} for r in range(1, 11)]
    return pl.DataFrame(rows)


def ref(rep: pl.DataFrame, attribute: str) -> str:
    return rep.filter(pl.col("attribute") == attribute, pl.col("group").is_not_null())["reference_group"].unique().item()


def test_the_largest_query_group_below_the_minimum_is_no_reference() -> None:
    df = queries()
    kw = dict(query="q", rank="r", protected="g", query_protected="u", relevance="rel", k=5, ci=None)
    # "few" has the most queries but 8 rows: below the default 30 it is not the comparison group
    assert ref(pf.ranking_report(df, **kw), "u") == "many"
    assert ref(pf.ranking_report(df, min_sample_size=0, **kw), "u") == "few"
    # no group meets the minimum: the largest of all
    assert ref(pf.ranking_report(df, min_sample_size=100, **kw), "u") == "few"
    assert request_of(pf.ranking_report(df, **kw))["min_sample_size"] == 30


def test_a_named_reference_below_the_minimum_warns() -> None:
    df = queries()
    with pytest.warns(ReferenceWarning, match="'s' has 3 input rows"):
        rep = pf.ranking_report(df, query="q", rank="r", protected="g", k=5, ci=None, privileged={"g": "s"})
    assert ref(rep, "g") == "s"
    with pytest.raises(pf.PolfairError, match="min_sample_size"):
        pf.ranking_report(df, query="q", rank="r", protected="g", min_sample_size=-1)


def test_apply_thresholds_judges_ranking_rows_with_the_reports_minimum() -> None:
    adult = pf.load_adult().head(3000).with_columns(pl.int_range(pl.len()).alias("i"))
    df = adult.with_columns((pl.col("i") // 30).alias("q")).with_columns(
        pl.col("hours_per_week").rank("min", descending=True).over("q").cast(pl.Int64).alias("r"))
    rep = pf.ranking_report(df, query="q", rank="r", protected="race", k=10, min_sample_size=100)
    out = apply_thresholds(rep, {"exposure_share": [0.0, 0.5], "awrf": {"min": 0.5}})
    groups = out.filter(pl.col("metric") == "exposure_share", pl.col("group").is_not_null())
    small = groups.filter(pl.col("n") < 100)
    assert small.height and (small["status"] == "insufficient_data").all()
    big = groups.filter(pl.col("n") >= 100)
    assert set(big["status"].to_list()) <= {"ok", "violation", "inconclusive"}
    # the majority group's share is above 0.5 and its whole interval too: a violation
    white = groups.filter(pl.col("group") == "White")
    assert white["value_lo"].item() > 0.5 and white["status"].item() == "violation"
    awrf = out.filter(pl.col("metric") == "awrf")
    assert awrf["status"].item() in {"ok", "violation", "inconclusive", "insufficient_data"}
    # the attribute row of a per-group ranking metric holds its spread (value null): not judged, as the
    # core's per-group metrics' attribute rows (was insufficient_data)
    spread = out.filter(pl.col("metric") == "exposure_share", pl.col("group").is_null())
    assert spread.height and spread["value"].is_null().all()
    assert spread["status"].is_null().all() and spread["threshold"].is_null().all()


def test_ndkl_by_chunks_of_queries_equals_one_chunk(monkeypatch: pytest.MonkeyPatch) -> None:
    """NDKL's dense arrays run on chunks of consecutive queries of at most NDKL_DENSE_CELLS cells (bounded memory):
    chunks of one or a few queries give the values of one chunk (ties, a by column, intersections, queries with one
    group, k and no k)."""
    from polfair.ranking import report as rr

    adult = pf.load_adult().head(2000).with_columns(pl.int_range(pl.len()).alias("i"))
    df = adult.with_columns((pl.col("i") // 25).alias("q"), (pl.col("i") // 1000).alias("day")).with_columns(
        (pl.col("hours_per_week") // 10).rank("min", descending=True).over("q").cast(pl.Int64).alias("r"))
    for k in (3, None):
        kw = dict(query="q", rank="r", protected=["sex", "race"], k=k, by="day", ci=None)
        whole = pf.ranking_report(df, **kw).filter(pl.col("metric") == "ndkl")
        for cells in (0, 200):
            monkeypatch.setattr(rr, "NDKL_DENSE_CELLS", cells)
            chunked = pf.ranking_report(df, **kw).filter(pl.col("metric") == "ndkl")
            monkeypatch.undo()
            assert whole.height == chunked.height > 0
            assert (whole["value"] - chunked["value"]).abs().max() < 1e-12


def test_the_summary_shows_the_statuses_apply_thresholds_gave() -> None:
    adult = pf.load_adult().head(3000).with_columns(pl.int_range(pl.len()).alias("i"))
    df = adult.with_columns((pl.col("i") // 30).alias("q")).with_columns(
        pl.col("hours_per_week").rank("min", descending=True).over("q").cast(pl.Int64).alias("r"))
    rep = pf.ranking_report(df, query="q", rank="r", protected="sex", k=10)
    assert "status" not in pf.summarize(rep)
    judged = apply_thresholds(rep, {"exposure_share": [0.0, 0.5], "awrf": {"min": 0.99}})
    text = pf.summarize(judged)
    male = judged.filter(pl.col("group") == "Male", pl.col("metric") == "exposure_share")["status"].item()
    awrf = judged.filter(pl.col("metric") == "awrf")["status"].item()
    assert "status" in text and male != "ok" and f"exposure_share: {male}" in text
    assert "AWRF" in text and f"({awrf})" in text


def test_the_html_page_shows_the_statuses_apply_thresholds_gave() -> None:
    adult = pf.load_adult().head(3000).with_columns(pl.int_range(pl.len()).alias("i"))
    df = adult.with_columns((pl.col("i") // 30).alias("q")).with_columns(
        pl.col("hours_per_week").rank("min", descending=True).over("q").cast(pl.Int64).alias("r"))
    rep = pf.ranking_report(df, query="q", rank="r", protected="race", k=10)
    assert "status (apply_thresholds)" not in pf.to_html(rep)
    judged = apply_thresholds(rep, {"exposure_share": [0.0, 0.5], "awrf": {"min": 0.99}})
    page = pf.to_html(judged)
    assert "status (apply_thresholds)" in page
    assert "exposure_share: violation" in page and "exposure_share: insufficient_data" in page
    assert "(insufficient_data)" in page  # AWRF: its smallest group has fewer than 30 rows


def test_thresholds_on_ranking_report_give_apply_thresholds_statuses() -> None:
    """``ranking_report(thresholds=)`` is the report judged by ``apply_thresholds`` with the report's minimum: the same
    threshold and status on every row, for a band, a one-sided band and the minimum; the bands are in the request."""
    adult = pf.load_adult().head(3000).with_columns(pl.int_range(pl.len()).alias("i"))
    df = adult.with_columns((pl.col("i") // 30).alias("q")).with_columns(
        pl.col("hours_per_week").rank("min", descending=True).over("q").cast(pl.Int64).alias("r"))
    bands = {"exposure_share": [0.0, 0.5], "awrf": {"min": 0.9}, "exposure": [0.3, 0.5]}
    for msz in (None, 100):
        kw = dict(query="q", rank="r", protected=["race", "sex"], k=10, min_sample_size=msz)
        judged = pf.ranking_report(df, thresholds=bands, **kw)
        want = apply_thresholds(pf.ranking_report(df, **kw), bands)
        assert judged.columns == want.columns and judged.columns[-2:] == ["threshold", "status"]
        assert judged.select("attribute", "group", "metric", "threshold", "status").equals(
            want.select("attribute", "group", "metric", "threshold", "status"))
        assert {"ok", "violation"} <= set(judged["status"].drop_nulls().to_list())
        if msz == 100:
            assert "insufficient_data" in judged["status"].to_list()
    assert request_of(judged)["thresholds"] == {"exposure_share": "[0, 0.5]", "awrf": "[0.9, inf]", "exposure": "[0.3, 0.5]"}
    assert "status" not in pf.ranking_report(df, query="q", rank="r", protected="race", k=10).columns
    with pytest.raises(pf.PolfairError, match="ndcg_at_k"):
        pf.ranking_report(df, query="q", rank="r", protected="race", k=10, thresholds={"ndcg_at_k": [0.5, 1]})


def test_integer_codes_by_value_or_by_join_give_the_same_report(monkeypatch: pytest.MonkeyPatch) -> None:
    """An integer query column and one integer group column without nulls are coded by their values (no join); with
    that turned off, the joins give the same report (values, intervals, group keys)."""
    from polfair.ranking import report as rr

    adult = pf.load_adult().head(2000).with_columns(pl.int_range(pl.len()).alias("i"))
    df = adult.with_columns((pl.col("i") // 25 * 3 + 7).alias("q"), (pl.col("age") // 20).cast(pl.Int16).alias("ageg"))
    df = df.with_columns(pl.col("hours_per_week").rank("min", descending=True).over("q").cast(pl.Int64).alias("r"))
    kw = dict(query="q", rank="r", protected="ageg", k=5, privileged={"ageg": 2})
    fast = pf.ranking_report(df, **kw)
    monkeypatch.setattr(rr, "_SMALL_INTS", ())
    joined = pf.ranking_report(df, **kw)
    assert fast.drop(pl.selectors.float()).equals(joined.drop(pl.selectors.float()))
    for c in fast.select(pl.selectors.float()).columns:
        assert ((fast[c] - joined[c]).abs().max() or 0.0) < 1e-12, c


def test_query_codes_from_the_sort_or_the_join_give_the_same_report() -> None:
    """An integer query column is coded from the sort by its value; any other (strings, a by column) by a join with
    the distinct queries: the same values either way, and the same intervals when the buckets are the same."""
    adult = pf.load_adult().head(2000).with_columns(pl.int_range(pl.len()).alias("i"))
    df = adult.with_columns((pl.col("i") // 25 * 7 - 300).alias("q"), pl.lit(1).alias("one")).with_columns(
        pl.col("hours_per_week").rank("min", descending=True).over("q").cast(pl.Int64).alias("r"))
    kw = dict(rank="r", protected=["sex", "race"], k=5)
    ints = pf.ranking_report(df, query="q", ci=None, **kw)
    strs = pf.ranking_report(df.with_columns(pl.col("q").cast(pl.String)), query="q", ci=None, **kw)
    assert ints.select("metric", "group").equals(strs.select("metric", "group"))
    assert (ints["value"] - strs["value"]).abs().max() < 1e-12 and ints["value"].null_count() == strs["value"].null_count()
    # the same query ids, with a constant by column (the join path): the same buckets, so the same intervals
    a = pf.ranking_report(df, query="q", **kw)
    b = pf.ranking_report(df, query="q", by="one", **kw).drop("one")
    for c in ("value", "value_lo", "value_hi", "difference_lo", "p_value"):
        assert ((a[c] - b[c]).abs().max() or 0.0) < 1e-12, c


def test_sparse_and_dense_pair_sums_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    """(query, group) pairs are summed on a dense queries × groups array up to DENSE_PAIRS cells, else on the distinct
    pairs (many queries × many groups): the same report either way (intersections, a query attribute with nDCG)."""
    from polfair.ranking import report as rr

    adult = pf.load_adult().head(2000).with_columns(pl.int_range(pl.len()).alias("i"))
    df = adult.with_columns((pl.col("i") // 25).alias("q"), pl.col("income_gt_50k").cast(pl.Float64).alias("rel")).with_columns(
        pl.col("hours_per_week").rank("min", descending=True).over("q").cast(pl.Int64).alias("r"),
        pl.col("sex").first().over("q").alias("user"))  # fmt: skip
    kw = dict(query="q", rank="r", protected=["race", "sex"], query_protected="user", relevance="rel", k=4)
    dense = pf.ranking_report(df, **kw)
    monkeypatch.setattr(rr, "DENSE_PAIRS", 0)
    sparse = pf.ranking_report(df, **kw)
    assert dense.drop(pl.selectors.float()).equals(sparse.drop(pl.selectors.float()))
    for c in dense.select(pl.selectors.float()).columns:
        assert ((dense[c] - sparse[c]).abs().max() or 0.0) < 1e-12, c
    # query attributes only: no item groups, the population's exposure and nDCG by query group
    only_queries = pf.ranking_report(df, query="q", rank="r", query_protected="user", relevance="rel", k=4)
    assert only_queries.select(pl.col("metric").cast(pl.String), "group").rows() == [
        ("exposure", None), ("ndcg_at_k", None), ("ndcg_at_k", None), ("ndcg_at_k", "Female"), ("ndcg_at_k", "Male")]
