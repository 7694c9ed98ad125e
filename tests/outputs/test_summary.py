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


def test_demo_fits_100_columns_and_shows_intervals(demo_text):
    lines = demo_text.splitlines()
    assert max(len(line) for line in lines) <= 100, [line for line in lines if len(line) > 100]
    assert INTERVAL.search(demo_text)
    assert "? = it includes no difference" in demo_text
    assert lines[-1] == "See it as a page with charts: polfair demo --html compas.html"


def test_demo_marks_only_intervals_that_include_no_difference(demo_text):
    rows = [line for line in demo_text.splitlines() if line.startswith(("Asian", "African-American"))]
    cells = [m for line in rows for m in re.findall(r"(-?\d+\.\d\d) \[(-?\d+\.\d\d), (-?\d+\.\d\d)\](\??)", line)]
    assert cells
    for _value, lo, hi, mark in cells:
        lo_f, hi_f = float(lo), float(hi)
        # no-difference is 1 (ratios) or 0 (differences): the mark says one of them is inside
        inside = lo_f <= 1.0 <= hi_f if lo_f > 0 else lo_f <= 0.0 <= hi_f
        if not inside:
            assert mark == "", (lo, hi, mark)
    # the 31 Asian defendants: disparate impact 0.68 with an interval that includes 1
    asian = [line for line in rows if line.startswith("Asian")]
    assert any(re.search(r"0\.68 \[0\.\d\d, 1\.\d\d\]\?", line) for line in asian)
    assert not any(INTERVAL.search(line) for line in asian if "0.226" in line)  # rates table: no intervals


def test_summary_without_intervals_and_with_long_labels_stays_narrow():
    n = 60
    df = pl.DataFrame({
        "y": [i % 2 for i in range(n)], "p": [i % 3 == 0 for i in range(n)],
        "g": ["a group with a very long and descriptive name indeed" if i % 2 else "b" for i in range(n)],
    })  # fmt: skip
    text = summarize(pf.fairness_report(df, y_true="y", y_pred="p", protected="g", ci=None))
    assert max(len(line) for line in text.splitlines()) <= 100
    assert "DI" in text and "[" not in text.split("== whole population")[0].split("-- g:")[1].split("\n\n")[0]
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
