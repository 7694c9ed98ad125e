"""Issue 39, items 1-2: one small-group policy at every door and output; no comparison group below it.

The table: the bundled German credit data (1,000 applicants) with the outcome coded as in the
issue's credit table (``bad``: 0 = good = favorable, ``favorable=0``), the model's decision equal
to the outcome, and one more applicant whose marital status is ``"unknown"`` (1 row, good, rate
1.0) — the issue's 1-row comparison group. Every case below failed on the main before the policy
(the 1-row group was the EEOC battery's and ``reference="best"``'s comparison group, was judged
``violation`` by ``thresholds="four_fifths"``, showed up in ``pf.alerts`` and the exit code, and the
page's chart re-judged "small" from its own minimum).
"""

from __future__ import annotations

import contextlib
import io
import re
import warnings
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polfair as pf
from polfair.cli import main
from polfair.core.reference import DEFAULT_MIN_SAMPLE_SIZE, resolve_min_sample_size
from polfair.exceptions import PolfairError, ReferenceWarning
from polfair.monitor import alerts, apply_thresholds
from polfair.regulatory import adverse_impact
from polfair.scores import score_report

ATTR = "personal_status"
TINY = "unknown"
KW: dict[str, Any] = dict(y_true="bad", y_pred="pred", protected=ATTR, favorable=0)


def credit() -> pl.DataFrame:
    """German credit, outcome 0 = good (favorable), the decision = the outcome, plus a 1-row group."""
    df = pl.read_parquet(Path(pf.__file__).parent / "data" / "german_credit.parquet").select(
        pl.col(ATTR).cast(pl.String), (1 - pl.col("credit_good").cast(pl.Int64)).alias("bad"),
        pl.col("duration_months"),
    )  # fmt: skip
    extra = pl.DataFrame({ATTR: [TINY], "bad": [0], "duration_months": [12]}, schema=df.schema)
    df = pl.concat([df, extra])
    # the decision: the outcome, and a score that separates it except for a few rows (for the score report)
    return df.with_columns(pl.col("bad").alias("pred"),
                           (0.8 - 0.6 * pl.col("bad") + pl.col("duration_months") / 1000).alias("score"))  # fmt: skip


def _engines() -> list[str]:
    return ["polars", "duckdb"]


def _as(engine: str, df: pl.DataFrame) -> Any:
    if engine == "polars":
        return df
    duckdb = pytest.importorskip("duckdb")
    return duckdb.from_arrow(df.to_arrow())


def _status(rep: pl.DataFrame, group: str, metric: str) -> Any:
    row = rep.filter(pl.col("group") == group, pl.col("metric").cast(pl.String) == metric)
    return row["status"].item()


# ---- the policy itself ------------------------------------------------------------------------


def test_the_default_is_thirty_rows_and_zero_switches_it_off() -> None:
    assert DEFAULT_MIN_SAMPLE_SIZE == 30
    assert resolve_min_sample_size(None) == 30 and resolve_min_sample_size(0) == 0
    with pytest.raises(PolfairError, match="int >= 0"):
        resolve_min_sample_size(-1)


# ---- verdicts: thresholds="four_fifths" applies the minimum -----------------------------------


@pytest.mark.parametrize("engine", _engines())
def test_four_fifths_gives_the_one_row_group_insufficient_data(engine: str) -> None:
    rep = pf.fairness_report(_as(engine, credit()), **KW, thresholds="four_fifths", ci=None)
    # point rule (ci=None): rate 1.0 / 0.70 = 1.43 > 1.25 was a violation on the main
    assert _status(rep, TINY, "disparate_impact") == "insufficient_data"
    assert TINY not in alerts(rep)["group"].to_list()
    # explicit min_sample_size=0: the policy off, the old verdict
    off = pf.fairness_report(_as(engine, credit()), **KW, thresholds="four_fifths", ci=None, min_sample_size=0)
    assert _status(off, TINY, "disparate_impact") == "violation"


@pytest.mark.parametrize("engine", _engines())
def test_one_row_comparison_has_one_status_on_every_metric(engine: str) -> None:
    bands = {"statistical_parity_difference": [-0.1, 0.1], "disparate_impact": [0.8, 1.25]}
    rep = pf.fairness_report(_as(engine, credit()), **KW, thresholds=bands, privileged={ATTR: "single"})
    got = {_status(rep, TINY, m) for m in bands}
    assert got == {"insufficient_data"}


# ---- reference choice -------------------------------------------------------------------------


@pytest.mark.parametrize("engine", _engines())
def test_best_reference_is_never_the_one_row_group(engine: str) -> None:
    rep = pf.fairness_report(_as(engine, credit()), **KW, reference="best", thresholds="four_fifths", ci=None)
    refs = set(rep.filter(pl.col("metric").cast(pl.String) == "disparate_impact")["reference_group"].cast(pl.String))
    assert refs == {"single"}  # the highest rate among the groups of 30 rows or more
    assert _status(rep, "divorced/separated", "disparate_impact") == "ok"  # 0.82; 0.60 (a violation) against 1 row


def test_best_reference_with_intervals_takes_its_projection_from_the_large_groups() -> None:
    rep = pf.fairness_report(credit(), **KW, reference="best")
    row = rep.filter(group="divorced/separated", metric="selection_rate").row(0, named=True)
    assert row["reference_group"] == "single"
    # the projection's best limit comes from the groups meeting the minimum (about -0.41); against the
    # 1-row group's simultaneous upper limit (near 1.0) it reached about -0.6
    assert -0.45 < row["difference_lo"] < row["difference"] < row["difference_hi"]


def test_a_named_small_reference_warns_and_judges_nothing() -> None:
    with pytest.warns(ReferenceWarning, match=r"'unknown' has 1 input rows, below the minimum sample size \(30\)"):
        rep = pf.fairness_report(credit(), **KW, privileged={ATTR: TINY}, thresholds="four_fifths")
    di = rep.filter(pl.col("metric").cast(pl.String) == "disparate_impact")
    assert set(di["status"].drop_nulls()) == {"insufficient_data"}


def test_largest_reference_skips_groups_below_the_minimum() -> None:
    from polfair.core.reference import largest_reference

    g = pl.DataFrame({"a": [0, 0, 0], "i": [0, 1, 2], "w": [500.0, 20.0, 40.0], "n": [5, 20, 40]})  # weighted rows
    assert largest_reference(g, ["a"], order="i", min_sample_size=30).collect()["i"].to_list() == [2]
    assert largest_reference(g, ["a"], order="i", min_sample_size=0).collect()["i"].to_list() == [0]


def test_regression_report_warns_for_a_small_privileged_group() -> None:
    df = credit().with_columns(pl.col("duration_months").cast(pl.Float64).alias("y"),
                               (pl.col("duration_months") * 0.9).alias("p"))  # fmt: skip
    with pytest.warns(ReferenceWarning, match="'unknown' has 1 input rows"):
        pf.regression_report(df, y_true="y", y_pred="p", protected=ATTR, privileged={ATTR: TINY}, ci=None)


def test_score_report_takes_reference_and_warns_for_a_small_privileged_group() -> None:
    df = credit()
    kw = dict(y_true="bad", y_score="score", protected=ATTR, favorable=0, score_label=0, ci=None)
    with pytest.warns(ReferenceWarning, match="'unknown' has 1 input rows"):
        rep = score_report(df, **kw, privileged={ATTR: TINY})
    assert set(rep.filter(pl.col("group").is_not_null())["reference_group"].cast(pl.String)) == {TINY}
    largest = score_report(df, **kw, privileged={ATTR: TINY}, reference="largest")
    assert set(largest.filter(pl.col("group").is_not_null())["reference_group"].cast(pl.String)) == {"single"}
    with pytest.raises(PolfairError, match="reference must be None, 'privileged' or 'largest'"):
        score_report(df, **kw, reference="best")


# ---- the EEOC battery --------------------------------------------------------------------------


@pytest.mark.parametrize("engine", _engines())
def test_eeoc_highest_rate_group_meets_the_minimum(engine: str) -> None:
    t = adverse_impact(_as(engine, credit()), y_pred="pred", protected=ATTR, favorable=0, preset="eeoc")
    assert set(t["reference_group"]) == {"single"}  # was the 1-row group (rate 1.0)
    tiny = t.filter(group=TINY).row(0, named=True)
    assert tiny["excluded"] and tiny["excluded_reason"].startswith("insufficient_data")
    assert tiny["significant"] is None and tiny["four_fifths_pass"] is None  # no z test called it significant
    # the married applicants no longer fail the four-fifths rule against one person
    assert t.filter(group="divorced/separated/married")["four_fifths_pass"].item() is True
    # min_size is the same option under its older name
    same = adverse_impact(_as(engine, credit()), y_pred="pred", protected=ATTR, favorable=0, min_size=30)
    assert same.equals(t)
    with pytest.raises(PolfairError, match="same option"):
        adverse_impact(credit(), y_pred="pred", protected=ATTR, favorable=0, min_size=5, min_sample_size=30)


def test_cli_min_sample_size_reaches_the_battery(tmp_path: Path) -> None:
    data = tmp_path / "credit.parquet"
    credit().write_parquet(data)
    out = tmp_path / "ai.parquet"
    args = ["report", str(data), "--y-true", "bad", "--y-pred", "pred", "--protected", ATTR, "--favorable", "0",
            "--adverse-impact", "eeoc", "--adverse-impact-out", str(out)]  # fmt: skip
    with contextlib.redirect_stdout(io.StringIO()):
        assert main([*args, "--min-sample-size", "60"]) == 0
    t = pl.read_parquet(out)
    # 60 rows: divorced/separated (50) is left out too, as in the report
    assert set(t.filter("excluded")["group"]) == {TINY, "divorced/separated"}
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(args) == 0
    assert set(pl.read_parquet(out).filter("excluded")["group"]) == {TINY}  # the default, 30
    config = tmp_path / "policy.toml"
    config.write_text("min_sample_size = 60\n", encoding="utf-8")
    with contextlib.redirect_stdout(io.StringIO()):
        assert main([*args, "--config", str(config)]) == 0  # the config's minimum reaches the battery too
    assert set(pl.read_parquet(out).filter("excluded")["group"]) == {TINY, "divorced/separated"}


# ---- every output: the same label for the 1-row group -------------------------------------------


def test_summary_alerts_exit_code_and_page_agree(tmp_path: Path) -> None:
    pytest.importorskip("jinja2")
    pytest.importorskip("matplotlib")
    df = credit()
    rep = pf.fairness_report(df, **KW, thresholds="four_fifths", ci=None)
    assert _status(rep, TINY, "disparate_impact") == "insufficient_data"
    assert alerts(rep).height == 0
    text = pf.summarize(rep)
    line = next(x for x in text.splitlines() if TINY in x and "~" in x)
    assert "!" not in line
    data = tmp_path / "credit.parquet"
    df.write_parquet(data)
    page = tmp_path / "page.html"
    args = ["report", str(data), "--y-true", "bad", "--y-pred", "pred", "--protected", ATTR, "--favorable", "0",
            "--thresholds", "four_fifths", "--no-ci", "--fail-on-violation"]  # fmt: skip
    with contextlib.redirect_stdout(io.StringIO()):
        assert main([*args, "--html", str(page)]) == 0  # was 1: the 1-row group's "violation"
    html = page.read_text(encoding="utf-8")
    tags = re.findall(r'<[^>]*data-group="unknown"[^>]*data-metric="disparate_impact"[^>]*>', html)
    tags += re.findall(r'<[^>]*data-metric="disparate_impact"[^>]*data-group="unknown"[^>]*>', html)
    statuses = {m for t in tags for m in re.findall(r'data-status="([a-z_]+)"', t)}
    assert statuses == {"insufficient_data"}, tags
    assert "small group (n = 1)" in html  # the chart's mark, from the same status


def test_the_page_greys_by_the_runs_minimum_not_its_own() -> None:
    pytest.importorskip("jinja2")
    pytest.importorskip("matplotlib")
    # min_sample_size=0: the 1-row group is judged (a violation) and the chart must not call it small
    rep = pf.fairness_report(credit(), **KW, thresholds="four_fifths", ci=None, min_sample_size=0)
    assert _status(rep, TINY, "disparate_impact") == "violation"
    html = pf.to_html(rep, title="t", generated_at="2026-01-01")
    assert "small group (n = 1)" not in html
    # judged again by apply_thresholds: the report's own policy (its request), not the default
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        again = apply_thresholds(rep, "four_fifths")
    assert _status(again, TINY, "disparate_impact") == "violation"


# ---- Spark: the same reference choice --------------------------------------------------------


def test_spark_best_reference_and_battery() -> None:
    pytest.importorskip("pyspark")
    pytest.importorskip("narwhals")
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from spark_session import spark_session

    spark = spark_session()
    if spark is None:  # pragma: no cover
        pytest.skip("no Java runtime for Spark")
    sdf = spark.createDataFrame(credit().to_arrow())
    rep = pf.fairness_report(sdf, **KW, reference="best", thresholds="four_fifths", ci=None)
    di = rep.filter(pl.col("metric").cast(pl.String) == "disparate_impact")
    assert set(di["reference_group"].cast(pl.String)) == {"single"}
    assert _status(rep, TINY, "disparate_impact") == "insufficient_data"
    t = adverse_impact(sdf, y_pred="pred", protected=ATTR, favorable=0)
    assert set(t["reference_group"]) == {"single"}
