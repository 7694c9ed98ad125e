"""Atomic report files, appends with schema enforcement, nested columns in text formats."""

from __future__ import annotations

import json
import os
from pathlib import Path

import polars as pl
import pytest

import polfair as pf
from polfair.core.report.run_metadata import with_run_metadata
from polfair.exceptions import PolfairError, SchemaMismatchError
from polfair.outputs.writers import (
    append_report,
    for_text_formats,
    write_atomic,
    write_report,
)

_COMPAS = {"y_true": "two_year_recid", "y_pred": pl.col("decile_score") >= 5, "protected": ["race", "sex"]}


@pytest.fixture(scope="module")
def report(compas: pl.DataFrame) -> pl.DataFrame:
    return pf.fairness_report(compas, **_COMPAS)


@pytest.mark.parametrize("ext", ["parquet", "csv", "json", "ndjson"])
def test_write_report_formats_leave_no_temporary_file(tmp_path: Path, report: pl.DataFrame, ext: str) -> None:
    path = tmp_path / f"r.{ext}"
    write_report(report, str(path))
    assert os.listdir(tmp_path) == [f"r.{ext}"]
    readers = {"parquet": pl.read_parquet, "csv": lambda p: pl.read_csv(p, infer_schema_length=None),
               "json": lambda p: pl.read_json(p, infer_schema_length=None),
               "ndjson": lambda p: pl.read_ndjson(p, infer_schema_length=None)}  # fmt: skip
    back = readers[ext](path)
    assert back.height == report.height
    assert back["metric"].cast(pl.String).to_list() == report["metric"].cast(pl.String).to_list()
    if ext == "csv" and "group_key" in report.columns:  # the typed key as one JSON object per row
        keys = back.filter(pl.col("group_key").is_not_null())["group_key"]
        assert keys.len() and set(json.loads(keys[0])) == {"race", "sex"}


def test_failed_write_keeps_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "r.parquet"
    old = pl.DataFrame({"a": [1]})
    write_report(old, str(path))

    def boom(tmp: str) -> None:
        Path(tmp).write_bytes(b"partial")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_atomic(path, boom)
    assert pl.read_parquet(path).equals(old)
    assert os.listdir(tmp_path) == ["r.parquet"]


def test_write_errors(tmp_path: Path, report: pl.DataFrame) -> None:
    with pytest.raises(PolfairError, match="use a .parquet"):
        write_report(report, str(tmp_path / "r.xlsx"))
    with pytest.raises(FileNotFoundError, match="does not exist"):
        write_report(report, str(tmp_path / "missing" / "r.parquet"))


def test_struct_group_key_in_csv_is_json(tmp_path: Path) -> None:
    df = pl.DataFrame({"group_key": [{"race": "Caucasian", "sex": "Male"}, None], "value": [0.5, None]})
    write_report(df, str(tmp_path / "r.csv"))
    back = pl.read_csv(tmp_path / "r.csv")
    assert json.loads(back["group_key"][0]) == {"race": "Caucasian", "sex": "Male"}
    assert back["group_key"][1] is None
    assert for_text_formats(pl.DataFrame({"v": [1]})).equals(pl.DataFrame({"v": [1]}))


@pytest.mark.parametrize("layout", ["file", "directory"])
def test_append_twice_and_read_back(tmp_path: Path, report: pl.DataFrame, layout: str) -> None:
    table = tmp_path / ("fairness.parquet" if layout == "file" else "fairness")
    first = with_run_metadata(report, run_id="run-1")
    second = with_run_metadata(report, run_id="run-2")
    append_report(first, table)
    written = append_report(second, table)
    assert written.exists()
    glob = str(table) if layout == "file" else str(table / "*.parquet")
    back = pl.read_parquet(glob)
    assert back.height == 2 * report.height
    assert back.schema == first.schema
    assert sorted(back["run_id"].unique().to_list()) == ["run-1", "run-2"]
    got = back.filter(run_id="run-2").drop(*[c for c in back.columns if c.startswith("run") or c in (
        "polfair_version", "schema_version", "config_hash")])  # fmt: skip
    assert got.equals(report)
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith(".tmp")]


@pytest.mark.parametrize("layout", ["file", "directory"])
def test_append_refuses_a_schema_mismatch(tmp_path: Path, report: pl.DataFrame, layout: str) -> None:
    table = tmp_path / ("t.parquet" if layout == "file" else "t")
    append_report(report, table)
    before = sorted(p.name for p in tmp_path.rglob("*"))
    bad = report.with_columns(pl.col("n").cast(pl.Int32)).drop("ratio").with_columns(pl.lit(1.0).alias("extra"))
    with pytest.raises(SchemaMismatchError) as err:
        append_report(bad, table)
    msg = str(err.value)
    assert "column 'n': Int32 here, Int64 expected" in msg
    assert "column 'ratio': absent here, Float64 expected" in msg
    assert "column 'extra': Float64 here, absent expected" in msg
    assert sorted(p.name for p in tmp_path.rglob("*")) == before


def test_append_reorders_columns_to_the_table(tmp_path: Path, report: pl.DataFrame) -> None:
    table = tmp_path / "t.parquet"
    append_report(report, table)
    append_report(report.select(reversed(report.columns)), table)
    assert pl.read_parquet(table).columns == report.columns


def test_append_to_a_non_parquet_file(tmp_path: Path, report: pl.DataFrame) -> None:
    path = tmp_path / "t.csv"
    path.write_text("a\n1\n")
    with pytest.raises(PolfairError, match="use a .parquet file or a directory"):
        append_report(report, path)


# ---- issue 22: evolvable tables, run ids once, locks, provenance in the file ---------------------------


def _old_table_rows(report: pl.DataFrame) -> pl.DataFrame:
    """A report as an older job wrote it: no harm column, a group_key of one attribute (race)."""
    old = report.filter(pl.col("attribute").cast(pl.String) == "race").drop("harm")
    key = pl.struct(pl.col("group_key").struct.field("race"))
    return with_run_metadata(old.with_columns(pl.when(pl.col("group_key").is_not_null()).then(key).alias("group_key")),
                             run_id="old")  # fmt: skip


@pytest.mark.parametrize("layout", ["file", "directory"])
def test_old_tables_keep_appending_after_new_columns_and_key_fields(tmp_path: Path, report: pl.DataFrame,
                                                                    layout: str) -> None:  # fmt: skip
    from polfair.outputs.writers import read_table

    table = tmp_path / ("t.parquet" if layout == "file" else "t")
    old = _old_table_rows(report)
    append_report(old, table)
    new = with_run_metadata(report, run_id="new")  # a new protected attribute (sex) and the harm column
    append_report(new, table)
    back = read_table(table).collect()
    assert back.height == old.height + new.height
    assert back.schema["group_key"] == new.schema["group_key"]
    olds = back.filter(run_id="old")
    assert olds["harm"].null_count() == olds.height
    keys = olds.filter(pl.col("group_key").is_not_null())["group_key"]
    assert keys.struct.field("sex").null_count() == keys.len() and keys.struct.field("race").null_count() == 0
    got = back.filter(run_id="new").select(new.columns)
    assert got.drop("run_at").equals(new.drop("run_at"))
    # and an old job appends again to the widened table (its missing columns are null)
    append_report(with_run_metadata(old.drop("run_id"), run_id="old-2"), table)
    assert read_table(table).collect().filter(run_id="old-2").height == old.height


@pytest.mark.parametrize("layout", ["file", "directory"])
def test_a_run_id_is_appended_once_or_replaced(tmp_path: Path, report: pl.DataFrame, layout: str) -> None:
    from polfair.outputs.writers import RunExistsError, read_table

    table = tmp_path / ("t.parquet" if layout == "file" else "t")
    append_report(with_run_metadata(report, run_id="day-1"), table)
    append_report(with_run_metadata(report, run_id="day-2"), table)
    before = read_table(table).collect()
    with pytest.raises(RunExistsError, match="already holds run 'day-1'"):
        append_report(with_run_metadata(report, run_id="day-1"), table)
    assert read_table(table).collect().equals(before)
    retry = with_run_metadata(report.with_columns(pl.lit(0.5).alias("value")), run_id="day-1")
    append_report(retry, table, replace_run=True)
    after = read_table(table).collect()
    assert after.height == before.height
    assert after.filter(run_id="day-1")["value"].unique().to_list() == [0.5]
    assert after.filter(run_id="day-2").equals(before.filter(run_id="day-2"))
    if layout == "directory":
        assert len(list(table.glob("*.parquet"))) == 2


def test_overlapping_appends_lose_no_rows(tmp_path: Path, report: pl.DataFrame) -> None:
    import threading

    table = tmp_path / "t.parquet"
    small = report.head(50)
    errors: list[BaseException] = []

    def job(i: int) -> None:
        try:
            for k in range(4):
                append_report(with_run_metadata(small, run_id=f"job{i}-{k}"), table)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=job, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    back = pl.read_parquet(table)
    assert back.height == 12 * small.height and back["run_id"].n_unique() == 12


def test_a_held_lock_times_out_with_a_clear_error(tmp_path: Path, report: pl.DataFrame) -> None:
    from polfair.outputs.writers import TableLockedError, table_lock

    table = tmp_path / "t.parquet"
    with table_lock(table):
        with pytest.raises(TableLockedError, match="another process is appending"):
            append_report(report, table, lock_timeout=0.2)
    assert not table.exists()
    append_report(report, table)  # released
    assert table.exists()


def test_the_request_travels_in_the_parquet_metadata(tmp_path: Path, compas: pl.DataFrame) -> None:
    from polfair.core.report.run_metadata import request_of
    from polfair.outputs.writers import read_report

    rep = pf.fairness_report(compas, **_COMPAS, favorable=0, score_label=1, thresholds={"disparate_impact": [0.8, 1.25]})
    req = request_of(rep)
    assert req is not None and req["favorable"] == [0] and req["thresholds"] == {"disparate_impact": "[0.8, 1.25]"}
    assert req["y_pred"] == "(decile_score) >= (5)" and req["ci"] == 0.95 and "polfair_version" in req
    path = tmp_path / "r.parquet"
    write_report(rep, str(path))
    assert request_of(read_report(path)) == req
    table = tmp_path / "t"
    written = append_report(with_run_metadata(rep, run_id="r1"), table)
    assert request_of(read_report(written)) == req


def test_append_to_a_non_parquet_path_is_refused_before_anything(tmp_path: Path, report: pl.DataFrame) -> None:
    from polfair.outputs.writers import check_append_target

    for name in ("new.csv", "new.json"):
        with pytest.raises(PolfairError, match="use a .parquet file or a directory"):
            append_report(report, tmp_path / name)
        with pytest.raises(PolfairError, match="write a CSV with --out"):
            check_append_target(tmp_path / name)
    assert os.listdir(tmp_path) == []
