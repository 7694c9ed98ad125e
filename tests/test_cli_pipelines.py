"""polfair report for pipelines: --append, --shape, run metadata, --log-format json."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

import polfair as pf
from polfair.cli import main
from polfair.core.schema import RUN_METADATA_COLUMNS, SCHEMA_VERSION


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("cli") / "compas.parquet"
    pf.load_compas().write_parquet(path)
    return str(path)


def _args(data: str, *extra: str) -> list[str]:
    return ["report", data, "--y-true", "two_year_recid", "--y-pred", "decile_score >= 5",
            "--protected", "race", "sex", *extra]  # fmt: skip


def _events(err: str) -> list[dict]:
    return [json.loads(line) for line in err.splitlines() if line.strip()]


def test_append_twice_to_a_directory_and_read_back(data: str, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    table = tmp_path / "fairness"
    assert main(_args(data, "--append", str(table), "--run-id", "run-1")) == 0
    assert main(_args(data, "--append", str(table), "--run-id", "run-2")) == 0
    back = pl.read_parquet(table / "*.parquet")
    assert sorted(back["run_id"].unique()) == ["run-1", "run-2"]
    assert back.columns[-len(RUN_METADATA_COLUMNS):] == list(RUN_METADATA_COLUMNS)
    assert back["schema_version"].unique().to_list() == [SCHEMA_VERSION]
    assert back["config_hash"].n_unique() == 1  # same options, same hash
    assert back.filter(run_id="run-1").height == back.filter(run_id="run-2").height
    assert "appended" in capsys.readouterr().out


def test_append_schema_mismatch_exits_2_naming_the_columns(data: str, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture) -> None:  # fmt: skip
    table = tmp_path / "t.parquet"
    assert main(_args(data, "--append", str(table))) == 0
    before = pl.read_parquet(table)
    capsys.readouterr()
    assert main(_args(data, "--append", str(table), "--no-run-metadata")) == 2
    err = capsys.readouterr().err
    assert "column 'run_id': absent here, String expected" in err
    assert pl.read_parquet(table).equals(before)


def test_json_log_events(data: str, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "wide.parquet"
    assert main(_args(data, "--out", str(out), "--shape", "wide", "--log-format", "json", "--run-id", "r9")) == 0
    events = _events(capsys.readouterr().err)
    assert [e["event"] for e in events] == ["start", "pass_done", "report_written", "done"]
    assert all(e["logger"] == "polfair" and e["ts"].endswith("Z") for e in events)
    assert events[0]["run_id"] == "r9" and events[0]["options"]["y_true"] == "two_year_recid"
    assert events[1]["report_rows"] > 0 and events[1]["seconds"] >= 0
    assert events[2]["path"] == str(out) and events[-1]["exit_code"] == 0
    wide = pl.read_parquet(out)
    assert "selection_rate__difference" in wide.columns and wide["run_id"].unique().to_list() == ["r9"]
    assert events[2]["rows"] == wide.height


def test_json_log_error_event_only(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    code = main(["report", str(tmp_path / "missing.parquet"), "--y-true", "y", "--log-format", "json"])
    assert code == 2
    events = _events(capsys.readouterr().err)  # every stderr line is JSON
    assert events[-1]["event"] == "error" and events[-1]["level"] == "error" and events[-1]["exit_code"] == 2


def test_json_log_turns_warnings_into_events(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "d.parquet"
    pl.DataFrame({"y": [1, 0, None, 1], "p": [1, 0, 1, 1], "g": ["a", "b", "a", "b"]}).write_parquet(path)
    assert main(["report", str(path), "--y-true", "y", "--y-pred", "p", "--protected", "g",
                 "--out", str(tmp_path / "r.csv"), "--log-format", "json"]) == 0  # fmt: skip
    events = _events(capsys.readouterr().err)
    warn = [e for e in events if e["event"] == "warning"]
    assert warn and warn[0]["category"] == "MissingValuesWarning"


# ---- issue 22: idempotent runs, refusals before the pass, evolvable tables, atomic files -----------


def test_a_run_id_already_in_the_table_exits_2_before_the_pass(data: str, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture) -> None:  # fmt: skip
    table = tmp_path / "fairness"
    assert main(_args(data, "--append", str(table), "--run-id", "day-1")) == 0
    capsys.readouterr()
    assert main(_args(data, "--append", str(table), "--run-id", "day-1", "--log-format", "json")) == 2
    events = _events(capsys.readouterr().err)
    assert [e["event"] for e in events] == ["error"]  # refused before the pass: no start, no pass_done
    assert "already holds run 'day-1'" in events[0]["message"] and "--replace-run" in events[0]["message"]
    assert main(_args(data, "--append", str(table), "--run-id", "day-1", "--replace-run")) == 0
    back = pl.read_parquet(table / "*.parquet")
    assert back["run_id"].unique().to_list() == ["day-1"] and back.height == pl.read_parquet(
        next(table.glob("*.parquet"))).height  # fmt: skip
    capsys.readouterr()
    assert main(_args(data, "--replace-run")) == 2
    assert "--append TABLE" in capsys.readouterr().err


def test_append_to_a_non_parquet_path_is_refused_before_the_pass(data: str, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture) -> None:  # fmt: skip
    target = tmp_path / "report.csv"
    assert main(_args(data, "--append", str(target), "--log-format", "json")) == 2
    events = _events(capsys.readouterr().err)
    assert [e["event"] for e in events] == ["error"] and "write a CSV with --out" in events[0]["message"]
    assert not target.exists()


def test_adding_a_protected_attribute_keeps_appending(data: str, tmp_path: Path) -> None:
    from polfair.outputs.writers import read_table

    table = tmp_path / "t.parquet"
    base = ["report", data, "--y-true", "two_year_recid", "--y-pred", "decile_score >= 5", "--append", str(table)]
    assert main([*base, "--protected", "race", "--run-id", "before"]) == 0
    assert main([*base, "--protected", "race", "sex", "--run-id", "after"]) == 0  # a wider group_key
    back = read_table(table).collect()
    keys = back.filter(run_id="before", attribute="race")["group_key"]
    assert keys.struct.field("sex").null_count() == keys.len()
    assert back.filter(run_id="after", attribute="sex").height > 0


def test_html_and_adverse_impact_files_are_written_atomically(data: str, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    pytest.importorskip("jinja2")
    page, ai = tmp_path / "page.html", tmp_path / "ai.csv"
    args = _args(data, "--html", str(page), "--adverse-impact", "eeoc", "--adverse-impact-out", str(ai),
                 "--adverse-impact-min-size", "30", "--adverse-impact-sets", "race", "race & sex")  # fmt: skip
    assert main(args) == 0
    good_page, good_ai = page.read_text(encoding="utf-8"), ai.read_text(encoding="utf-8")
    table = pl.read_csv(ai)
    assert set(table["attribute"]) == {"race", "race & sex"}  # the attribute sets asked for
    small = table.filter(pl.col("n") < 30)
    assert small.height and set(small["excluded_reason"]) == {"insufficient_data: fewer than 30 candidates"}

    real = Path.write_text

    def half_then_fail(self: Path, text: str, *a: object, **k: object) -> int:
        real(self, text[: len(text) // 2], *a, **k)  # type: ignore[arg-type]
        raise OSError(28, "No space left on device", str(self))

    monkeypatch.setattr(Path, "write_text", half_then_fail)
    assert main(_args(data, "--html", str(page))) == 2
    monkeypatch.undo()
    assert page.read_text(encoding="utf-8") == good_page  # the previous page, whole
    assert ai.read_text(encoding="utf-8") == good_ai
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
