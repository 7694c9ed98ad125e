"""Issue 42: ``polfair report --explain``: the one counting query for a dialect, the audit not run."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polfair as pf
from polfair.cli import main
from polfair.engines.sql import DIALECTS

ibis = pytest.importorskip("ibis")
sqlglot = pytest.importorskip("sqlglot")
duckdb = pytest.importorskip("duckdb")

DF = pl.DataFrame({
    "y": [1, 0, 1, 1, 0, 0, 1, 0, 1], "p": [1, 1, 0, 1, 0, 1, 1, 0, 1], "g": list("aaabbbbac"),
    "w": [1.0, 2, 0.5, 1, 3, 1, 0.25, 1, 1], "s": [0.9, 0.6, 0.2, 0.7, 0.1, 0.5, 0.8, 0.3, 0.4],
})  # fmt: skip
FLAGS = [["--y-true", "y", "--y-pred", "p", "--protected", "g"],
         ["--y-true", "y", "--y-pred", "p", "--protected", "g", "--weight", "w"],
         ["--y-true", "y", "--y-score", "s", "--threshold", "0.5", "--protected", "g", "--weight", "w"]]  # fmt: skip
REQUESTS = [{"y_true": "y", "y_pred": "p", "protected": ["g"]},
            {"y_true": "y", "y_pred": "p", "protected": ["g"], "weight": "w"},
            {"y_true": "y", "y_score": "s", "threshold": 0.5, "protected": ["g"], "weight": "w"}]  # fmt: skip


@pytest.fixture
def loans(tmp_path: Path) -> Path:
    path = tmp_path / "loans.parquet"
    DF.write_parquet(path)
    return path


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("i", range(len(FLAGS)))
def test_explain_prints_counting_sql(loans: Path, dialect: str, i: int, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(loans), *FLAGS[i], "--explain", "--dialect", dialect]) == 0
    out = capsys.readouterr().out.strip()
    table = ibis.table(ibis.Schema.from_polars(DF.schema), name="loans")
    assert out == pf.counting_sql(table, dialect, **REQUESTS[i])
    assert sqlglot.parse_one(out, dialect=dialect).find(sqlglot.exp.Select) is not None
    assert '"loans"' in out or "`loans`" in out or " loans" in out  # the table is named after the file


@pytest.mark.parametrize("i", range(len(FLAGS)))
def test_explained_query_run_in_duckdb_gives_the_cell_table(loans: Path, i: int,
                                                            capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    assert main(["report", str(loans), *FLAGS[i], "--explain", "--dialect", "duckdb", "--min-group-size", "2"]) == 0
    query = capsys.readouterr().out
    con = duckdb.connect()
    con.execute(f"CREATE TABLE loans AS SELECT * FROM read_parquet('{loans}')")
    result = con.sql(query).pl()
    assert set(result["g"]) == {"a", "b"}  # group c (1 row) never left the database
    cells = pf.cells_from_sql(result, ibis.table(ibis.Schema.from_polars(DF.schema), name="loans"), **REQUESTS[i])
    want = pf.confusion_counts(DF.filter(pl.col("g") != "c"), **REQUESTS[i]).collect()
    assert_frame_equal(cells.sort("g"), want.sort("g"), check_dtypes=False, rel_tol=1e-9)


@pytest.mark.parametrize(
    ("extra", "says"),
    [(["--explain", "--out", "r.parquet"], "--out would need the audit"),
     (["--explain", "--ci", "0.9"], "--ci would need the audit"),
     (["--dialect", "duckdb"], "--dialect is the SQL dialect of --explain"),
     (["--explain", "--task", "regression"], "drop --task regression")],
)  # fmt: skip
def test_explain_refuses_what_it_does_not_do(loans: Path, extra: list[str], says: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    assert main(["report", str(loans), *FLAGS[0], *extra]) == 2
    assert says in capsys.readouterr().err


def test_explain_names_a_missing_column(loans: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(loans), "--y-true", "y", "--y-pred", "p", "--protected", "gg", "--explain"]) == 2
    err = capsys.readouterr().err
    assert "--protected 'gg'" in err and "'g'" in err
    assert main(["report", str(loans), "--y-true", "y", "--y-pred", "p >= 1", "--protected", "g", "--explain"]) == 2
    assert "--explain takes column names" in capsys.readouterr().err
