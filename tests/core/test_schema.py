"""The schema contract (polfair.core.schema) against real reports and cell tables."""

from __future__ import annotations

import polars as pl
import pytest

import polfair as pf
from polfair.core.passes.counts import COUNT_COLUMNS, COUNT_DTYPES
from polfair.core.report.run_metadata import with_run_metadata
from polfair.core.schema import (
    CELL_SCHEMA,
    REPORT_SCHEMA,
    RUN_METADATA_COLUMNS,
    SCHEMA_VERSION,
    by_columns,
    dtype_matches,
    schema_differences,
    schema_table,
)

_COMPAS = {"y_true": "two_year_recid", "y_pred": pl.col("decile_score") >= 5, "protected": ["race", "sex"]}


def _check_against_schema(report: pl.DataFrame, by: list[str]) -> None:
    """Every non-by column is in REPORT_SCHEMA with its dtype, in schema order; core columns all there."""
    assert by_columns(report.columns) == by
    known = {c.name: c for c in REPORT_SCHEMA}
    rest = report.columns[len(by):]
    unknown = [c for c in rest if c not in known]
    assert not unknown, f"report columns missing from polfair.core.schema.REPORT_SCHEMA: {unknown}"
    for c in rest:
        assert dtype_matches(report.schema[c], known[c].dtype), (c, report.schema[c], known[c].dtype)
    order = [c.name for c in REPORT_SCHEMA]
    assert [order.index(c) for c in rest] == sorted(order.index(c) for c in rest), "columns out of schema order"
    core = [c.name for c in REPORT_SCHEMA if c.kind == "core"]
    assert [c for c in core if c not in rest] == []
    for c in rest:
        if not known[c].nullable:
            assert report[c].null_count() == 0, c


def test_schema_version_is_5() -> None:
    # 3: the harm column, the interval status rule; 4: a config attribute's rows in neither group are
    # "(neither group)", was "other"; regression cells of centred moments, score n/n_missing; 5: the 30-row
    # minimum for verdicts, noise-corrected variance rows, the intersection budget, compensated regression means
    assert SCHEMA_VERSION == 5
    assert all(1 <= c.since <= SCHEMA_VERSION for c in (*REPORT_SCHEMA, *CELL_SCHEMA))
    names = [c.name for c in REPORT_SCHEMA]
    assert len(names) == len(set(names))


def test_version_1_columns_are_the_original_report() -> None:
    v1 = [c.name for c in REPORT_SCHEMA if c.since == 1 and c.kind == "core"]
    assert v1 == ["attribute", "group", "metric", "value", "reference_group", "difference", "ratio", "n"]


def test_default_report_matches_schema(compas: pl.DataFrame) -> None:
    report = pf.fairness_report(compas, **_COMPAS)
    _check_against_schema(report, [])


def test_report_with_by_weights_thresholds_and_run_metadata_matches_schema(compas: pl.DataFrame) -> None:
    df = compas.with_columns((pl.col("age") > 40).alias("older"), pl.lit(2.0).alias("w"))
    report = pf.fairness_report(df, **_COMPAS, by="older", weight="w",
                                thresholds={"disparate_impact": [0.8, 1.25]})  # fmt: skip
    report = with_run_metadata(report, run_id="r", config={"a": 1})
    _check_against_schema(report, ["older"])
    assert report.columns[-len(RUN_METADATA_COLUMNS):] == list(RUN_METADATA_COLUMNS)


def test_cell_table_matches_schema(compas: pl.DataFrame) -> None:
    df = compas.with_row_index("person")
    for extra in ({}, {"cluster": "person"}):
        cells = pf.confusion_counts(df, **_COMPAS, **extra).collect()
        known = {c.name: c for c in CELL_SCHEMA}
        rest = [c for c in cells.columns if c in known]
        assert cells.columns[: len(cells.columns) - len(rest)] == ["race", "sex"]
        assert rest == [c.name for c in CELL_SCHEMA if c.name in rest]  # schema order
        assert ("bucket" in rest) == bool(extra)
        for c in rest:
            assert dtype_matches(cells.schema[c], known[c].dtype), (c, cells.schema[c])
            if not known[c].nullable:
                assert cells[c].null_count() == 0, c
    assert [c.name for c in CELL_SCHEMA if c.kind == "count"] == list(COUNT_COLUMNS)
    assert all(dtype_matches(COUNT_DTYPES[c], known[c].dtype) for c in COUNT_COLUMNS)


def test_schema_differences_names_each_column() -> None:
    diffs = schema_differences({"value": pl.Float32(), "extra": pl.String()},
                               {"value": pl.Float64(), "n": pl.Int64()})  # fmt: skip
    assert diffs == [
        "column 'value': Float32 here, Float64 expected",
        "column 'extra': String here, absent expected",
        "column 'n': absent here, Int64 expected",
    ]
    assert schema_differences({"a": pl.Int64()}, {"a": pl.Int64()}) == []


def test_dtype_classes_match_any_parameters() -> None:
    assert dtype_matches(pl.Datetime("us", "UTC"), pl.Datetime)
    assert not dtype_matches(pl.Datetime("us"), pl.Datetime("us", "UTC"))
    assert not dtype_matches(pl.String(), pl.Struct)


def test_by_columns_rejects_non_reports() -> None:
    with pytest.raises(ValueError, match="no 'attribute' column"):
        by_columns(["a", "b"])


def test_schema_table_lists_every_column() -> None:
    t = schema_table()
    assert t["name"].to_list() == [c.name for c in REPORT_SCHEMA]
    assert t.filter(pl.col("since") > 1)["nullable"].all()


def test_report_with_intervals_matches_schema(compas: pl.DataFrame) -> None:
    import inspect

    if "ci" not in inspect.signature(pf.fairness_report).parameters:
        pytest.skip("fairness_report has no ci= yet")
    report = pf.fairness_report(compas, **_COMPAS, ci=0.95)
    _check_against_schema(report, [])
    intervals = [c.name for c in REPORT_SCHEMA if c.kind == "interval"]
    assert [c for c in intervals if c not in report.columns] == []
