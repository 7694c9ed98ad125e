"""The terminal summary (``polfair demo``, ``polfair report`` without ``--out``): 100 columns, intervals."""

from __future__ import annotations

import re

import polars as pl
import pytest

import polfair as pf
from polfair.cli import main
from polfair.outputs.summary import summarize

INTERVAL = re.compile(r"-?\d+\.\d\d \[-?\d+\.\d\d, -?\d+\.\d\d\]")


@pytest.fixture(scope="module")
def demo_text() -> str:
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["demo"]) == 0
    return buf.getvalue()


def _summary_part(text: str) -> list[str]:
    """The summary proper: the lines before the violation list (one line per violation, any width)."""
    lines = text.splitlines()
    end = next((i for i, line in enumerate(lines) if "threshold violation(s)" in line), len(lines))
    return lines[:end]


def test_demo_fits_100_columns_and_shows_intervals(demo_text):
    lines = _summary_part(demo_text)
    assert max(len(line) for line in lines) <= 100, [line for line in lines if len(line) > 100]
    assert INTERVAL.search(demo_text)
    assert "! violation = the value and its whole confidence interval lie\noutside the band" in demo_text
    assert demo_text.splitlines()[-1] == "See it as a page with charts: polfair demo --html compas.html"
    # the first lines say what "favorable" means and where ProPublica's false positives went
    head = " ".join(demo_text.splitlines()[:9])
    assert "Favorable outcome (aif360's convention for COMPAS): no recidivism" in head and "false NEGATIVES" in head


def test_demo_marks_are_the_report_status(tmp_path, capsys):
    # issue 22: the "?" used to mean "the interval includes no difference" (a second verdict); now every mark
    # is the report's status: ! violation, ? inconclusive, ~ insufficient data, no mark ok
    out = tmp_path / "demo.parquet"
    assert main(["demo", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    rep = pl.read_parquet(out).with_columns(pl.col("attribute", "metric").cast(pl.String))
    titles = {"DI": "disparate_impact", "FPR ratio": "false_positive_rate_ratio",
              "FNR ratio": "false_negative_rate_ratio"}  # fmt: skip
    marks = {"violation": "!", "inconclusive": "?", "insufficient_data": "~", "ok": ""}
    blocks = text.split("-- race: disparities")[1].split("\n\n")[0].splitlines()
    checked = 0
    header: list[str] = []
    for line in blocks:
        if line.startswith("group"):
            header = re.split(r"\s{2,}", line.strip())
            continue
        if not header or line.startswith(("-", " ")):
            continue
        group = next(g for g in ("African-American", "Asian", "Caucasian", "Hispanic", "Native American", "Other")
                     if line.startswith(g))  # fmt: skip
        cells = re.findall(r"-?\d+\.\d\d(?: \[-?\d+\.\d\d, -?\d+\.\d\d\])?([!?~]?)", line[len(group):])
        for title, mark in zip(header[1:], cells):
            if title in titles:
                status = rep.filter(attribute="race", group=group, metric=titles[title])["status"].item()
                assert mark == marks[status], (group, title, status, mark)
                checked += 1
    assert checked == 18
    # the example: race Other, an FPR ratio (favorable = 0) of 1.33 [1.14, 1.52] is inconclusive
    assert re.search(r"^Other .*1\.33 \[1\.14, 1\.52\]\?", text, re.M)


def test_summary_without_intervals_and_with_long_labels_stays_narrow():
    n = 60
    df = pl.DataFrame({
        "y": [i % 2 for i in range(n)], "p": [i % 3 == 0 for i in range(n)],
        "g": ["a group with a very long and descriptive name indeed" if i % 2 else "b" for i in range(n)],
    })  # fmt: skip
    text = summarize(pf.fairness_report(df, y_true="y", y_pred="p", protected="g", ci=None))
    assert max(len(line) for line in text.splitlines()) <= 100
    table = text.split("== whole population")[0].split("-- g:")[1].split("\n\n")[0]
    assert "DI" in text and "[" not in table.split("verdict:")[1].split("\n", 1)[1]
    assert "ci=0.95" in text  # says how to get intervals


def test_summary_of_report_with_suppressed_groups(tmp_path):
    df = pl.DataFrame({"y": [1, 0] * 20 + [1], "p": [1, 1, 0, 0] * 10 + [1], "g": ["a"] * 20 + ["b"] * 20 + ["c"]})
    rep = pf.fairness_report(df, y_true="y", y_pred="p", protected="g", min_group_size=2)
    text = summarize(rep)
    table = text.split("== g:")[1].split("\n\n")[0]
    assert "\nc " not in table and "\nb " in table


def test_cli_min_group_size_applies_to_the_written_report(tmp_path, capsys):
    src = tmp_path / "c.parquet"
    pf.load_compas().select("race", "two_year_recid", "decile_score").write_parquet(src)
    out = tmp_path / "r.parquet"
    args = ["report", str(src), "--y-true", "two_year_recid", "--y-pred", "decile_score >= 5",
            "--protected", "race", "--min-group-size", "400", "--no-run-metadata"]  # fmt: skip
    assert main([*args, "--out", str(out)]) == 0
    groups = pl.read_parquet(out).filter(pl.col("group").is_not_null())
    assert groups["n"].min() >= 400 and set(groups["group"]) == {"African-American", "Caucasian", "Hispanic"}
    capsys.readouterr()
    assert main(args) == 0  # the printed summary too
    text = capsys.readouterr().out
    assert "Caucasian" in text and "Native American" not in text
    assert main([*args[:-3], "--min-group-size", "0"]) == 2
    assert "--min-group-size" in capsys.readouterr().err


def test_cli_significance_flag_reaches_the_report(tmp_path, capsys):
    src = tmp_path / "c.parquet"
    pf.load_compas().select("race", "two_year_recid", "decile_score").write_parquet(src)
    args = ["report", str(src), "--y-true", "two_year_recid", "--y-pred", "decile_score >= 5", "--protected", "race"]
    assert main([*args, "--significance", "2"]) == 2
    assert "significance" in capsys.readouterr().err
    out, same = tmp_path / "r.parquet", tmp_path / "s.parquet"  # deprecated: the level of the intervals
    with pytest.warns(FutureWarning, match=r"ci=0\.9"):
        assert main([*args, "--significance", "0.1", "--out", str(out), "--no-run-metadata"]) == 0
    assert main([*args, "--ci", "0.9", "--out", str(same), "--no-run-metadata"]) == 0
    assert pl.read_parquet(out).equals(pl.read_parquet(same))


def test_summary_is_bounded_in_groups_and_periods():
    # issue 22: a 58k-level attribute died with MemoryError; now the worst groups print, the rest are counted
    import numpy as np

    rng = np.random.default_rng(0)
    n = 12_000
    df = pl.DataFrame({"y": rng.integers(0, 2, n), "p": rng.integers(0, 2, n),
                       "id": rng.integers(0, 2_000, n).astype(str), "day": rng.integers(1, 31, n)})  # fmt: skip
    rep = pf.fairness_report(df, y_true="y", y_pred="p", protected="id", by="day", ci=None, allow_many_groups=True)
    text = summarize(rep, max_groups=5, max_periods=3)
    lines = text.splitlines()
    assert len(lines) < 150 and max(len(line) for line in lines) <= 100
    # without thresholds nothing is judged: the latest periods first, no counts (docs/status.md)
    assert "== 30 periods (day), latest first: not judged (no thresholds)" in text
    assert text.count("== period day = ") == 3 and "== period day = 30" in text
    assert "more groups" in text
    judged = pf.apply_thresholds(rep, "four_fifths", min_sample_size=5)
    text = summarize(judged, max_groups=5, max_periods=3)
    assert max(len(line) for line in text.splitlines()) <= 100
    assert "== 30 periods (day), worst first" in text and text.count("== period day = ") == 3

