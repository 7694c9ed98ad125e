"""Run metadata columns and the config hash."""

from __future__ import annotations

import datetime as dt

import polars as pl
import pytest

from polfair.core.report.run_metadata import config_hash, package_version, with_run_metadata
from polfair.core.schema import REPORT_SCHEMA, RUN_METADATA_COLUMNS, SCHEMA_VERSION
from polfair.exceptions import PolfairError

_REP = pl.DataFrame({"attribute": ["sex", "sex"], "metric": ["selection_rate"] * 2, "value": [0.5, 0.25]})


def test_columns_dtypes_and_values() -> None:
    at = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    out = with_run_metadata(_REP, run_id="abc", run_at=at, config={"y_true": "y"}, polfair_version="9.9")
    assert out.columns == [*_REP.columns, *RUN_METADATA_COLUMNS]
    dtypes = {c.name: c.dtype for c in REPORT_SCHEMA}
    for c in RUN_METADATA_COLUMNS:
        assert out.schema[c] == dtypes[c]
        assert out[c].n_unique() == 1
    row = out.row(0, named=True)
    assert row["run_id"] == "abc"
    assert row["run_at"] == dt.datetime(2026, 3, 1, 10, 0, tzinfo=dt.UTC)  # converted to UTC
    assert row["polfair_version"] == "9.9"
    assert row["schema_version"] == SCHEMA_VERSION
    assert row["config_hash"] == config_hash({"y_true": "y"})


def test_defaults_are_fresh_and_replacing_keeps_one_set() -> None:
    a = with_run_metadata(_REP)
    b = with_run_metadata(a)
    assert a["run_id"][0] != b["run_id"][0]
    assert b.columns == a.columns
    assert a["polfair_version"][0] == package_version()
    assert a["config_hash"].null_count() == 2
    naive = with_run_metadata(_REP, run_at=dt.datetime(2026, 1, 1))
    assert naive["run_at"][0] == dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def test_config_hash_is_order_free_and_sensitive() -> None:
    base = {"y_true": "y", "protected": ["sex", "race"], "privileged": {"sex": "m", "race": "w"}}
    same = {"privileged": {"race": "w", "sex": "m"}, "protected": ["sex", "race"], "y_true": "y"}
    assert config_hash(base) == config_hash(same)
    assert config_hash(base) == config_hash({**base, "weight": None})  # a None option is no option
    assert config_hash(base) != config_hash({**base, "protected": ["race", "sex"]})
    assert config_hash({"p": pl.col("s") >= 5}) == config_hash({"p": pl.col("s") >= 5})
    assert config_hash({"p": pl.col("s") >= 5}) != config_hash({"p": pl.col("s") >= 6})


def test_bad_arguments() -> None:
    with pytest.raises(PolfairError, match="run_id must be a string"):
        with_run_metadata(_REP, run_id=3)  # type: ignore[arg-type]
    with pytest.raises(PolfairError, match="run_at must be a datetime"):
        with_run_metadata(_REP, run_at="2026-01-01")  # type: ignore[arg-type]


def test_fairness_report_run_metadata() -> None:
    import polfair as pf

    df = pl.DataFrame({"y": [1, 0, 1, 0], "p": [1, 0, 0, 0], "g": ["a", "a", "b", "b"]})
    plain = pf.fairness_report(df, y_true="y", y_pred="p", protected="g")
    a = pf.fairness_report(df, y_true="y", y_pred="p", protected="g", run_metadata={"run_id": "r1"})
    b = pf.fairness_report(df, y_true="y", y_pred="p", protected="g", run_metadata=True)
    c = pf.fairness_report(df, y_true="y", y_pred="p", protected="g", run_metadata=True, reference="overall")
    assert a.columns == [*plain.columns, *RUN_METADATA_COLUMNS]
    assert a.drop(*RUN_METADATA_COLUMNS).equals(plain)
    assert a["run_id"][0] == "r1" and b["run_id"][0] != "r1"
    assert a["config_hash"][0] == b["config_hash"][0] != c["config_hash"][0]
    with pytest.raises(PolfairError, match="unknown keys"):
        pf.fairness_report(df, y_true="y", y_pred="p", protected="g", run_metadata={"id": "x"})
