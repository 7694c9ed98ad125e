"""Appends whose ``by`` periods the table already holds: refused, or replaced with ``replace_run``.

A nightly job rerun without its run id used to add a second copy of the day (only
``compare_reports`` noticed, later). The rule: a report row is the same as a table row when their
``by`` values, ``attribute``, ``group`` and ``metric`` are equal; such an append is refused
(``PeriodExistsError``, exit 2 in the CLI) unless ``replace_run=True`` / ``--replace-run``.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import polfair as pf
from polfair.cli import main
from polfair.outputs.writers import PeriodExistsError, RunExistsError, append_report, read_table


def _data(days: list[str]) -> pl.DataFrame:
    rows = 40
    return pl.DataFrame({
        "day": [days[i % len(days)] for i in range(rows)],
        "y": [i % 2 for i in range(rows)],
        "p": [(i // 2) % 2 for i in range(rows)],
        "sex": ["f" if i % 3 else "m" for i in range(rows)],
        "race": ["a" if i % 5 else "b" for i in range(rows)],
    })  # fmt: skip


def _report(days: list[str], run: str, protected: str | list[str] = "sex") -> pl.DataFrame:
    return pf.fairness_report(_data(days), y_true="y", y_pred="p", protected=protected, by="day", ci=None,
                              run_metadata={"run_id": run})  # fmt: skip


@pytest.mark.parametrize("kind", ["file", "directory"])
def test_a_rerun_of_a_period_is_refused_and_the_table_unchanged(tmp_path: Path, kind: str) -> None:
    table = tmp_path / ("t.parquet" if kind == "file" else "t")
    append_report(_report(["2026-05-01"], "night-1"), table)
    before = read_table(table).collect()
    with pytest.raises(PeriodExistsError, match=r"day=2026-05-01 \(run 'night-1'\).*--replace-run"):
        append_report(_report(["2026-05-01"], "night-1-retry"), table)
    assert read_table(table).collect().equals(before)
    assert issubclass(PeriodExistsError, RunExistsError)  # callers that catch the run-id refusal catch this too


@pytest.mark.parametrize("kind", ["file", "directory"])
def test_replace_run_replaces_the_periods_rows_and_keeps_the_others(tmp_path: Path, kind: str) -> None:
    table = tmp_path / ("t.parquet" if kind == "file" else "t")
    first = _report(["2026-05-01", "2026-05-02"], "run-1")
    append_report(first, table)
    second = _report(["2026-05-02", "2026-05-03"], "run-2")
    append_report(second, table, replace_run=True)
    back = read_table(table).collect()
    runs = dict(back.group_by("day").agg(pl.col("run_id").unique()).sort("day").iter_rows())
    assert runs == {"2026-05-01": ["run-1"], "2026-05-02": ["run-2"], "2026-05-03": ["run-2"]}
    assert back.height == first.filter(day="2026-05-01").height + second.height
    # one copy per (day, attribute, group, metric): what compare_reports needs
    assert not back.select("day", "attribute", "group", "metric").is_duplicated().any()


def test_other_attribute_sets_of_the_same_period_are_not_a_copy(tmp_path: Path) -> None:
    table = tmp_path / "t"
    append_report(_report(["2026-05-01"], "sex-job", protected="sex"), table)
    append_report(_report(["2026-05-01"], "race-job", protected="race"), table)  # another job's rows: accepted
    assert sorted(read_table(table).collect()["run_id"].unique()) == ["race-job", "sex-job"]


def test_a_new_period_and_reports_without_by_append_as_before(tmp_path: Path) -> None:
    table = tmp_path / "t.parquet"
    append_report(_report(["2026-05-01"], "n1"), table)
    append_report(_report(["2026-05-02"], "n2"), table)
    assert read_table(table).collect()["day"].n_unique() == 2
    plain = tmp_path / "plain.parquet"
    rep = pf.fairness_report(_data(["x"]), y_true="y", y_pred="p", protected="sex", ci=None)
    append_report(rep, plain)
    append_report(rep, plain)  # no by, no run id: nothing tells a rerun from a new snapshot
    assert pl.read_parquet(plain).height == 2 * rep.height


def test_the_cli_refuses_a_rerun_of_a_day_unless_replace_run(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    data = tmp_path / "day.parquet"
    _data(["2026-05-01"]).write_parquet(data)
    table = tmp_path / "fairness"
    args = ["report", str(data), "--y-true", "y", "--y-pred", "p", "--protected", "sex", "--by", "day", "--no-ci",
            "--append", str(table)]  # fmt: skip
    assert main(args) == 0
    before = read_table(table).collect()
    capsys.readouterr()
    assert main(args) == 2  # the nightly job rerun, a new random run id
    err = capsys.readouterr().err
    assert "already holds rows of 1 of this report's day period(s): day=2026-05-01" in err and "--replace-run" in err
    assert read_table(table).collect().equals(before)
    assert main([*args, "--replace-run"]) == 0
    after = read_table(table).collect()
    assert after.height == before.height and after["run_id"].n_unique() == 1
    assert after["run_id"][0] != before["run_id"][0]
