"""Issue 15 §4: a PySpark/DuckDB frame without the optional extra names the extra to install."""

from __future__ import annotations

import sys

import pytest

import polfair as pf


def test_duckdb_without_narwhals_names_the_extra(monkeypatch) -> None:
    duckdb = pytest.importorskip("duckdb")
    rel = duckdb.sql("select * from (values (1, 1, 'a'), (0, 1, 'b')) t(y, p, g)")
    monkeypatch.setitem(sys.modules, "narwhals", None)  # as if the extra were not installed
    with pytest.raises(ImportError, match=r"pip install 'polfair\[duckdb\]'"):
        pf.confusion_counts(rel, y_true="y", y_pred="p", protected="g")
    with pytest.raises(ImportError, match=r"polfair\[duckdb\]"):
        pf.fairness_report(rel, y_true="y", y_pred="p", protected="g")


def test_duckdb_follows_the_value_rules() -> None:
    duckdb = pytest.importorskip("duckdb")
    pytest.importorskip("narwhals")
    rel = duckdb.sql("select * from (values (1.0, 1, 'a'), (0.0, 1, 'b'), ('NaN'::double, 0, 'a')) t(y, p, g)")
    cells = pf.confusion_counts(rel, y_true="y", y_pred="p", protected="g", favorable=True).collect()
    assert cells.select("g", "n", "n_missing", "tp", "fp").rows() == [("a", 2, 1, 1.0, 0.0), ("b", 1, 0, 0.0, 1.0)]
    with pytest.raises(pf.InvalidInputError, match=r"favorable=1.5 cannot match column 'p' of dtype Int32"):
        pf.confusion_counts(rel, y_true="y", y_pred="p", protected="g", favorable=1.5)
