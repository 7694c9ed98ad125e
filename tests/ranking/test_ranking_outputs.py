"""polfair ranking (the CLI), pf.summarize of a ranking report (issue 43)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polfair as pf
from polfair.cli import main


@pytest.fixture
def ranked(tmp_path: Path) -> Path:
    adult = pf.load_adult().head(1500).with_columns(pl.int_range(pl.len()).alias("i"))
    df = adult.with_columns((pl.col("i") // 30).alias("q"), pl.col("income_gt_50k").cast(pl.Float64).alias("rel"),
                            pl.col("sex").cast(pl.String))  # fmt: skip
    df = df.with_columns(pl.col("hours_per_week").rank("min", descending=True).over("q").cast(pl.Int64).alias("r"),
                         pl.col("race").cast(pl.String).first().over("q").alias("user"))  # fmt: skip
    path = tmp_path / "ranked.parquet"
    df.select("q", "r", "sex", "user", "rel").write_parquet(path)
    return path


def test_cli_summary_and_out(ranked: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ranking", str(ranked), "--query", "q", "--rank", "r", "--protected", "sex", "--query-protected",
                 "user", "--relevance", "rel", "--k", "10", "--privileged", "sex=Male"]) == 0  # fmt: skip
    text = capsys.readouterr().out
    assert "== sex: who is seen (reference group: Male)" in text and "nDCG@k" in text
    assert max(len(line) for line in text.splitlines()) <= 100
    out = tmp_path / "rep.parquet"
    assert main(["ranking", str(ranked), "--query", "q", "--rank", "r", "--protected", "sex", "--out", str(out),
                 "--streaming", "--no-ci"]) == 0  # fmt: skip
    got = pl.read_parquet(out)
    want = pf.ranking_report(pl.read_parquet(ranked), query="q", rank="r", protected="sex", ci=None)
    assert_frame_equal(got.drop("group_key"), want.drop("group_key"), abs_tol=1e-12)  # summation order: not bitwise


def test_cli_errors_name_the_column(ranked: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ranking", str(ranked), "--query", "q", "--rank", "rank", "--protected", "sex"]) == 2
    assert "'rank'" in capsys.readouterr().err


def test_summarize_recognises_a_ranking_report(ranked: Path) -> None:
    rep = pf.ranking_report(pl.read_parquet(ranked), query="q", rank="r", protected="sex", k=5)
    text = pf.summarize(rep)
    assert "exposure share [interval]" in text and "AWRF" in text


def test_html_page_shows_shares_with_intervals(ranked: Path) -> None:
    rep = pf.ranking_report(pl.read_parquet(ranked), query="q", rank="r", protected="sex", query_protected="user",
                            relevance="rel", k=10)  # fmt: skip
    page = pf.to_html(rep, title="Rankings <test>")
    assert "<svg" in page and "exposure share [interval]" in page and "nDCG@k" in page
    assert "Rankings &lt;test&gt;" in page and "src=" not in page and "href=" not in page


def test_cli_min_sample_size_and_thresholds(ranked: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--min-sample-size`` and ``--thresholds METRIC=LO:HI`` are ranking_report's ``min_sample_size`` and ``thresholds``."""
    out = tmp_path / "judged.parquet"
    assert main(["ranking", str(ranked), "--query", "q", "--rank", "r", "--protected", "sex", "--k", "10",
                 "--min-sample-size", "800", "--thresholds", "exposure_share=0.2:0.5", "awrf=0.9:", "--out", str(out)]) == 0  # fmt: skip
    got = pl.read_parquet(out)
    want = pf.ranking_report(pl.read_parquet(ranked), query="q", rank="r", protected="sex", k=10, min_sample_size=800,
                             thresholds={"exposure_share": [0.2, 0.5], "awrf": {"min": 0.9}})  # fmt: skip
    assert got.select("group", "metric", "threshold", "status").equals(want.select("group", "metric", "threshold", "status"))
    assert "insufficient_data" in got["status"].to_list()  # a sex below 800 rows
    assert set(got.filter(pl.col("metric") == "awrf")["threshold"].to_list()) == {"[0.9, inf]"}
    assert main(["ranking", str(ranked), "--query", "q", "--rank", "r", "--protected", "sex", "--k", "10",
                 "--thresholds", "exposure_share=0.2:0.5"]) == 0  # fmt: skip
    assert "exposure_share: violation" in capsys.readouterr().out  # Male's share, 0.82 [0.77, 0.86], above 0.5
    for bad in ("exposure_share", "exposure_share=0.2", "exposure_share=:", "exposure_share=a:b"):
        assert main(["ranking", str(ranked), "--query", "q", "--rank", "r", "--protected", "sex", "--thresholds", bad]) == 2
        assert "METRIC=LO:HI" in capsys.readouterr().err


def test_cli_fail_on_violation(ranked: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--fail-on-violation`` as ``polfair report``'s: exit 1 and the on-call list when a judged row is a
    violation (the report still written), 0 when none is, 2 without thresholds (nothing would be judged)."""
    args = ["ranking", str(ranked), "--query", "q", "--rank", "r", "--protected", "sex", "--k", "10"]
    out = tmp_path / "judged.parquet"
    assert main([*args, "--thresholds", "exposure_share=0.2:0.5", "--fail-on-violation", "--out", str(out)]) == 1
    text = capsys.readouterr().out
    n = int((pl.read_parquet(out)["status"] == "violation").sum())
    assert n > 0 and f"{n} threshold violation(s)" in text and "exposure_share" in text  # Male's share, above 0.5
    assert main([*args, "--thresholds", "exposure_share=0:1", "--fail-on-violation"]) == 0
    assert "threshold violation" not in capsys.readouterr().out
    assert main([*args, "--thresholds", "exposure_share=0.2:0.5"]) == 0  # judged, but not asked to fail
    assert main([*args, "--fail-on-violation"]) == 2
    assert "--fail-on-violation needs thresholds" in capsys.readouterr().err
