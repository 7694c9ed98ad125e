"""Issue 41: a high-cardinality attribute set shows its worst groups (``max_groups_per_attribute=``, ``worst_k=``)."""

from __future__ import annotations

import warnings

import numpy as np
import polars as pl
import pytest

import polfair as pf
from polfair.core.report.run_metadata import request_of
from polfair.core.report.worst import groups_limited
from polfair.exceptions import PolfairError, ReportSizeWarning

KEY = ["attribute", "group", "metric"]


def _data(levels: int = 60, n: int = 6000, seed: int = 3) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    z = rng.integers(0, levels, n)
    # three zips are clearly worse off (a low selection rate), one is small and extreme (2 rows)
    p = np.where(np.isin(z, [5, 17, 41]), 0.15, 0.55)
    pred = (rng.random(n) < p).astype(np.int64)
    zip_ = np.char.add("z", z.astype(str).astype(object).astype(str))
    df = pl.DataFrame({"zip": zip_, "sex": rng.choice(["f", "m"], n), "y": rng.integers(0, 2, n), "p": pred})
    tiny = pl.DataFrame({"zip": ["ztiny", "ztiny"], "sex": ["f", "m"], "y": [1, 0], "p": [0, 0]})
    return pl.concat([df, tiny])


def _report(df: pl.DataFrame, **kw) -> pl.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReportSizeWarning)
        return pf.fairness_report(df, y_true="y", y_pred="p", protected=["zip", "sex"], **kw)


def test_the_worst_groups_by_the_interval_rule_and_the_reference_rows_equal_the_full_report():
    df = _data()
    full = _report(df, max_groups_per_attribute=None)
    with pytest.warns(ReportSizeWarning, match=r"groups in a by value: zip \(61 groups\); zip & sex \(122 groups\)"):
        rep = pf.fairness_report(df, y_true="y", y_pred="p", protected=["zip", "sex"], max_groups_per_attribute=10,
                                 worst_k=3)  # fmt: skip
    zips = set(rep.filter(attribute="zip")["group"].drop_nulls())
    ref = rep.filter(attribute="zip", metric="selection_rate")["reference_group"].drop_nulls().unique().to_list()
    # the three clearly worse zips (not the 2-row extreme one: its interval is wide), and the reference
    assert zips == {"z5", "z17", "z41", *ref}
    # sex (2 groups) and every attribute row are complete; every row shown is the full report's row
    assert rep.filter(attribute="sex").height == full.filter(attribute="sex").height
    assert rep.filter(pl.col("group").is_null()).height == full.filter(pl.col("group").is_null()).height
    joined = rep.join(full, on=KEY, how="left", nulls_equal=True, suffix="_full")
    for c in ("value", "difference", "ratio", "value_lo", "difference_hi", "p_value", "p_value_adjusted", "n_groups"):
        assert joined[c].eq_missing(joined[f"{c}_full"]).all(), c
    limited = request_of(rep)["groups_limited"]
    assert [(s["attributes"], s["groups"], s["shown"]) for s in limited] == [(["zip"], 61, 3), (["zip", "sex"], 122, 3)]
    assert rep.filter(attribute="zip & sex")["group"].drop_nulls().n_unique() <= 3 + 2  # the worst and the references
    assert "groups_limited" not in request_of(full)


def test_without_intervals_the_point_difference_ranks():
    df = _data()
    rep = _report(df, max_groups_per_attribute=10, worst_k=3, ci=None)
    worst = set(rep.filter(attribute="zip")["group"].drop_nulls())
    assert "ztiny" in worst  # selection rate 0 in 2 rows: the largest point difference (no interval to temper it)


def test_below_the_limit_nothing_changes_and_nothing_is_said():
    df = _data(levels=8)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ReportSizeWarning)
        rep = pf.fairness_report(df, y_true="y", y_pred="p", protected=["zip", "sex"])
    assert rep.equals(pf.fairness_report(df, y_true="y", y_pred="p", protected=["zip", "sex"], max_groups_per_attribute=None))
    assert "groups_limited" not in request_of(rep)


def test_batches_and_the_lazy_report_agree():
    df = _data()
    kw = dict(y_true="y", y_pred="p", protected=["zip", "sex"], max_groups_per_attribute=10, worst_k=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReportSizeWarning)
        rep = pf.fairness_report(df, **kw)
        batches = pl.concat(list(pf.fairness_report_batches(df, batch_rows=50, **kw)))
        lazy = pf.lazy_report(df, **kw).collect()
    assert batches.equals(rep) and lazy.equals(rep)


def test_options_are_checked():
    df = _data(levels=4)
    with pytest.raises(PolfairError, match="max_groups_per_attribute must be None"):
        pf.fairness_report(df, y_true="y", y_pred="p", protected="zip", max_groups_per_attribute=0)
    with pytest.raises(PolfairError, match="worst_k must be an int >= 0"):
        pf.fairness_report(df, y_true="y", y_pred="p", protected="zip", worst_k=-1)


def test_groups_are_counted_per_by_value():
    t = pl.DataFrame({"d": [1] * 30 + [2] * 30, "zip": [str(i) for i in range(30)] * 2})
    assert groups_limited(t, ["d"], [("zip",)], 30, 5) == []
    assert [s["groups"] for s in groups_limited(t, ["d"], [("zip",)], 29, 5)] == [30]


def test_user_metrics_rows_follow_the_groups_shown():
    df = _data()
    f_half = {"f_half": 1.25 * pl.col("tp") / (1.25 * pl.col("tp") + 0.25 * pl.col("fn") + pl.col("fp"))}
    rep = _report(df, user_metrics=f_half, max_groups_per_attribute=10, worst_k=3)
    built_in = set(rep.filter(attribute="zip", metric="selection_rate")["group"].drop_nulls())
    user = set(rep.filter(attribute="zip", metric="f_half")["group"].drop_nulls())
    assert user == built_in and len(user) <= 5
    assert rep.filter(pl.col("group").is_null(), attribute="zip", metric="f_half").height == 1  # its attribute row


def test_the_command_line_takes_the_limit_and_none(tmp_path):
    from polfair.cli import main

    src, out = tmp_path / "zip.parquet", tmp_path / "rep.parquet"
    _data().write_parquet(src)
    base = ["report", str(src), "--y-true", "y", "--y-pred", "p", "--protected", "zip", "--no-ci", "--out", str(out)]
    groups = {}
    for extra in ([], ["--max-groups-per-attribute", "10", "--worst-k", "3"], ["--max-groups-per-attribute", "none"]):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ReportSizeWarning)
            assert main([*base, *extra]) == 0
        groups[len(extra)] = pl.read_parquet(out).filter(attribute="zip")["group"].drop_nulls().n_unique()
    assert groups == {0: 61, 4: 4, 2: 61}  # 61 zips under the default 1,000; the worst 3 and the reference


def test_clustered_intervals_keep_every_group_so_the_adjustment_counts_them():
    df = _data().with_row_index("uid").with_columns((pl.col("uid") % 97).alias("user"))
    kw = dict(y_true="y", y_pred="p", protected="zip", cluster="user")
    with warnings.catch_warnings():
        warnings.simplefilter("error", ReportSizeWarning)  # nothing is limited, so nothing is said
        rep = pf.fairness_report(df, **kw, max_groups_per_attribute=10, worst_k=3)
    full = pf.fairness_report(df, **kw, max_groups_per_attribute=None)
    assert rep.equals(full) and "groups_limited" not in request_of(rep)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReportSizeWarning)
        limited = pf.fairness_report(df, **kw, max_groups_per_attribute=10, worst_k=3, ci=None)  # no jackknife: limited
    assert limited.filter(attribute="zip")["group"].drop_nulls().n_unique() <= 5


def test_every_report_door_limits_alike_by_default():
    """fairness_report, report_from_counts of its cell table and the accumulator over batches show the same
    rows by default (the same worst groups), and the same full report with max_groups_per_attribute=None."""
    from polars.testing import assert_frame_equal

    df = _data(levels=1100, n=12_000)  # zip: 1,101 groups, over the default 1,000
    kw = {"max_groups_per_attribute": 50, "worst_k": 5}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReportSizeWarning)
        for limits in ({}, kw, {"max_groups_per_attribute": None}, {"min_sample_size": 15},
                       {"thresholds": "four_fifths"}, {"thresholds": {"selection_rate": [0.3, 0.7]}, **kw}):
            want = _report(df, **limits)
            cells = pf.confusion_counts(df, y_true="y", y_pred="p", protected=["zip", "sex"]).collect()
            core = {k: v for k, v in limits.items() if k != "thresholds"}  # (the core report judges nothing)
            counted = pf.report_from_counts(cells, protected=["zip", "sex"], **core)
            acc = pf.FairnessAccumulator(y_true="y", y_pred="p", protected=["zip", "sex"], **limits)
            for part in (df[:2000], df[2000:]):
                acc.update(part)
            judged = acc.compute()
            assert judged.columns == want.columns  # the accumulator judges as the report does (thresholds, min size)
            for got in (counted, judged):  # (the core's report_from_counts has no status columns)
                cols = [c for c in want.columns if c in got.columns]
                assert cols == got.columns
                assert_frame_equal(got.sort(KEY, nulls_last=False), want.select(cols).sort(KEY, nulls_last=False),
                                   check_dtypes=False)  # fmt: skip
            limited = request_of(want).get("groups_limited")
            assert bool(limited) == (limits.get("max_groups_per_attribute", 1000) is not None)
            if "thresholds" in limits:
                assert want["status"].is_not_null().any()


def test_the_summary_and_the_page_say_how_many_groups_the_set_has_and_which_rows_they_show():
    """A reader of a limited set is told its real size and that its tables show the worst groups only
    (the page said "zip (21 groups)" and the summary "... and 9 more groups" for a 1,101-group attribute)."""
    import html as html_lib
    import re

    df = _data(levels=1100, n=12_000)
    rep = _report(df)
    assert request_of(rep)["groups_limited"][0]["groups"] == 1101
    text = " ".join(pf.summarize(rep).split())
    assert "zip has 1,101 groups; the report keeps the rows of its 20 worst" in text
    page = " ".join(re.sub(r"<[^>]+>", " ", html_lib.unescape(str(pf.HtmlReport(rep)))).split())
    assert "zip ( 1,101 groups; reference:" in page or "zip (1,101 groups; reference:" in page
    assert "zip has 1,101 groups: the report keeps the rows of the worst groups" in page
    assert "(1,101 groups; the rows of the 20 worst and the reference)" in page
    full = _report(df, max_groups_per_attribute=None)
    assert "has 1,101 groups" not in pf.summarize(full) and "the rows of the 20 worst" not in str(pf.HtmlReport(full))



@pytest.mark.parametrize(("reference", "p_adjust", "extra"), [
    (None, "bh", {}),
    ("overall", "holm", {"weight": "w"}),
    ("best", "by", {"y_score": "s"}),
    ("largest", "bh", {"y_score": "s", "weight": "w"}),
])  # fmt: skip
def test_the_limited_report_screens_every_group_and_shows_the_full_reports_rows(reference, p_adjust, extra):
    """Every group's harm bounds and adjusted p-values come from a screen of every group, the other interval
    columns from the rows shown only: each row shown equals the full report's, every column, at 2 by values
    (one cell table: weighted sums of separate passes may differ in the last bits)."""
    df = _data()
    rng = np.random.default_rng(11)
    df = df.with_columns(d=pl.Series(rng.integers(0, 2, df.height)), w=pl.Series(rng.gamma(2.0, 0.5, df.height)),
                         s=pl.Series(rng.random(df.height)))  # fmt: skip
    cells = pf.confusion_counts(df, y_true="y", y_pred=None if "y_score" in extra else "p", protected=["zip", "sex"],
                                by="d", **extra).collect()  # fmt: skip
    kw = dict(protected=["zip", "sex"], by="d", p_adjust=p_adjust, weighted="weight" in extra)
    kw |= {"privileged": {"sex": "m"}} if reference is None else {"reference": reference}
    full = pf.report_from_counts(cells, **kw, max_groups_per_attribute=None)
    with pytest.warns(ReportSizeWarning):
        rep = pf.report_from_counts(cells, **kw, max_groups_per_attribute=10, worst_k=3)
    assert rep.height < full.height and set(rep["d"].unique()) == {0, 1}
    key = ["d", *KEY]
    joined = rep.join(full, on=key, how="left", nulls_equal=True, suffix="_full")
    assert joined.height == rep.height and joined["n_full"].null_count() == 0
    for c in (c for c in rep.columns if c not in key):
        assert joined[c].eq_missing(joined[f"{c}_full"]).all(), c
    assert rep["p_value_adjusted"].is_not_null().sum() > 0 and rep["difference_lo"].is_not_null().sum() > 0


def test_the_ratio_intervals_are_computed_for_the_rows_shown_only(monkeypatch):
    """With a limited set, every group gets its harm bound and p-values (the screen); MOVER-R and the
    Wilson limits of the value columns only the rows shown (counted: the rows each call is given)."""
    from polfair.core.report import intervals as report_intervals

    seen: list[int] = []
    real = report_intervals.ivd.mover_ratio_limits

    def counting(p, *args, **kwargs):
        seen.append(np.shape(p)[0])
        return real(p, *args, **kwargs)

    monkeypatch.setattr(report_intervals.ivd, "mover_ratio_limits", counting)
    df = _data()
    rep = _report(df, max_groups_per_attribute=10, worst_k=3)
    shown = rep.filter(pl.col("group").is_not_null()).select("attribute", "group").unique().height
    assert seen and max(seen) == shown < 122  # (zip & sex alone has 122 groups)
    seen.clear()
    full = _report(df, max_groups_per_attribute=None)
    assert max(seen) == full.filter(pl.col("group").is_not_null()).select("attribute", "group").unique().height == 185
