"""Cluster-robust (delete-a-group jackknife) intervals of the report: ranges, undefined jackknives, families."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import polfair as pf
from polfair.core.intervals import p_adjust
from polfair.core.metrics import METRICS

KW = dict(y_true="y", y_pred="p", protected="g")


def _clustered_frame(n_people: int = 60, rows_each: int = 8, rate: float = 0.03, seed: int = 3) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    pid = np.repeat(np.arange(n_people), rows_each)
    person = rng.random(n_people) < 0.25  # the outcome clusters by person: a few people hold every event
    y = (person[pid] & (rng.random(pid.size) < rate * 4 / 0.25 / 2)).astype(int)
    return pl.DataFrame({"y": y, "p": (rng.random(pid.size) < 0.4).astype(int),
                         "g": np.where(pid % 3 == 0, "a", "b"), "pid": pid})  # fmt: skip


def test_jackknife_limits_stay_in_the_range_of_the_quantity():
    # rare, clustered events: the jackknife-t limits of a rate near 0 go below 0 unless truncated
    df = _clustered_frame()
    rep = pf.fairness_report(df, **KW, cluster="pid", n_buckets=20)
    jk = rep.filter(pl.col("group").is_not_null(), pl.col("ci_method") == "jackknife_t")
    rates = jk.filter(pl.col("metric").cast(pl.String).is_in([m for m, v in METRICS.items() if v.is_rate]))
    assert rates.height > 0
    assert rates["value_lo"].min() >= 0.0 and rates["value_hi"].max() <= 1.0  # was [-0.03, ...]
    assert rates["value_lo"].min() == 0.0  # it was truncated somewhere (the test exercises the bound)
    diffs = rates.drop_nulls("difference_lo")
    assert diffs["difference_lo"].min() >= -1.0 and diffs["difference_hi"].max() <= 1.0
    named = jk.filter(pl.col("metric").cast(pl.String).str.ends_with("_difference")).drop_nulls("value_lo")
    assert named["value_lo"].min() >= -1.0 and named["value_hi"].max() <= 1.0
    assert (jk["value_lo"] <= jk["value"]).all() and (jk["value"] <= jk["value_hi"]).all()


def test_a_single_cluster_gives_null_group_intervals_not_iid_ones():
    # one cluster: the jackknife is undefined (fewer than two non-empty buckets); docs/statistics.md
    # says the intervals are null, and the iid intervals (which assume independent rows) must not stay
    df = _clustered_frame().with_columns(pid=pl.lit(7))
    rep = pf.fairness_report(df, **KW, cluster="pid", n_buckets=20)
    plain = pf.fairness_report(df.drop("pid"), **KW)
    had = plain["group"].is_not_null() & plain["value_lo"].is_not_null()  # rows with an iid interval
    groups = rep.filter(had)
    assert groups.height > 0
    assert set(groups["ci_method"].cast(pl.String)) == {"jackknife_t"}
    for c in ("value_lo", "value_hi", "difference_lo", "difference_hi", "ratio_lo", "ratio_hi", "p_value"):
        assert groups[c].null_count() == groups.height, c
    # attribute rows keep their projections and tests
    attr = pl.col("group").is_null() & pl.col("attribute").is_not_null()
    assert rep.filter(attr).equals(plain.filter(attr))


def test_clustered_p_values_are_adjusted_in_the_same_families_as_without_clusters():
    # families: (by value, metric) within the group rows, and separately within the attribute rows;
    # the jackknife replaces group-row p-values only, so attribute rows keep their adjusted values
    df = pl.concat([_clustered_frame(seed=s, rate=0.2).with_columns(pid=pl.col("pid") + 1000 * s, d=pl.lit(s))
                    for s in range(2)])  # fmt: skip
    kw = {**KW, "protected": ["g"], "by": "d"}
    plain = pf.fairness_report(df, **kw)
    rep = pf.fairness_report(df, **kw, cluster="pid", n_buckets=10)
    attr = pl.col("group").is_null() & pl.col("attribute").is_not_null()
    assert rep.filter(attr)["p_value_adjusted"].equals(plain.filter(attr)["p_value_adjusted"])
    groups = rep.filter(pl.col("group").is_not_null()).with_columns(
        p_adjust(pl.col("p_value"), "bh").over("d", "metric").alias("want")
    )
    assert groups["p_value"].drop_nulls().len() > 0
    assert np.allclose(groups["p_value_adjusted"].fill_null(-1.0).to_numpy(), groups["want"].fill_null(-1.0).to_numpy(),
                       rtol=0, atol=1e-15)  # fmt: skip


@pytest.mark.parametrize("method", ["holm", None])
def test_clustered_adjustment_options(method):
    df = _clustered_frame(rate=0.2)
    rep = pf.fairness_report(df, **KW, cluster="pid", n_buckets=10, p_adjust=method)
    groups = rep.filter(pl.col("group").is_not_null())
    want = groups["p_value"] if method is None else groups.select(p_adjust(pl.col("p_value"), method).over("metric")).to_series()
    assert groups["p_value_adjusted"].equals(want.alias("p_value_adjusted"))


def test_without_clusters_group_and_attribute_rows_are_separate_families():
    # docs/statistics.md: a family is (by value, row kind, metric); the code adjusts exactly so
    df = _clustered_frame(rate=0.2).with_columns(h=pl.col("pid") % 2)
    rep = pf.fairness_report(df, y_true="y", y_pred="p", protected=["g", "h"])
    kind = pl.when(pl.col("group").is_not_null()).then(pl.lit("group")).otherwise(pl.lit("attribute"))
    got = rep.filter(pl.col("attribute").is_not_null()).with_columns(
        p_adjust(pl.col("p_value"), "bh").over(kind, "metric").alias("want")
    )
    assert got["p_value"].drop_nulls().len() > 0
    assert np.allclose(got["p_value_adjusted"].fill_null(-1.0).to_numpy(), got["want"].fill_null(-1.0).to_numpy(),
                       rtol=0, atol=1e-15)  # fmt: skip


def test_p_adjust_none_leaves_the_p_values_as_they_are():
    # p_adjust=None is the identity adjustment (R's p.adjust(method="none")), with or without clusters;
    # before, the report left p_value_adjusted null while the clustered path copied the p-values
    df = _clustered_frame(rate=0.2).with_columns(h=pl.col("pid") % 2)
    rep = pf.fairness_report(df, y_true="y", y_pred="p", protected=["g", "h"], p_adjust=None)
    assert rep["p_value"].drop_nulls().len() > 0
    assert rep["p_value_adjusted"].equals(rep["p_value"].alias("p_value_adjusted"))


def test_report_from_counts_of_a_clustered_cell_table_is_the_clustered_report():
    """A saved confusion_counts(cluster=...) table gives fairness_report(cluster=...)'s report: the buckets
    summed before the all-groups entropy indices and EDF (were read as cells), the jackknife intervals."""
    from polars.testing import assert_frame_equal

    from polfair.core.report.build import report_batches

    c = pf.load_compas().with_columns(clu=pl.col("id") % 50, pred=(pl.col("decile_score") >= 5).cast(pl.Int64))
    roles = {"y_true": "two_year_recid", "y_pred": "pred", "protected": ["race", "sex"], "cluster": "clu"}
    cells = pf.confusion_counts(c, **roles).collect()
    want = c.pipe(pf.fairness_report, **roles)
    got = pf.report_from_counts(cells, protected=["race", "sex"])
    assert_frame_equal(got, want)
    theil = "between_all_groups_theil_index"
    assert got.filter(metric=theil)["value"].to_list() == want.filter(metric=theil)["value"].to_list()
    with pytest.raises(pf.PolfairError, match="bucket"):
        next(iter(report_batches(cells, protected=["race", "sex"])))
