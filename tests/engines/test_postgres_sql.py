"""Issue 42: the SQL path: counting_sql for each dialect, disclosure control, expressions, refusals."""

from __future__ import annotations

import warnings
from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polfair as pf
from polfair.engines.sql import DIALECTS, check_identifiers, typed_sql

ibis = pytest.importorskip("ibis")
sqlglot = pytest.importorskip("sqlglot")

DF = pl.DataFrame({
    "y": [1, 0, 1, 1, 0, 0, 1, 0, 1], "p": [1, 1, 0, 1, 0, 1, 1, 0, 1], "g": list("aaabbbbac"),
    "w": [1.0, 2, 0.5, 1, 3, 1, 0.25, 1, 1], "s": [0.9, 0.6, 0.2, 0.7, 0.1, 0.5, 0.8, 0.3, 0.4],
})  # fmt: skip
REQUESTS = [
    {"y_true": "y", "y_pred": "p", "protected": "g"},
    {"y_true": "y", "y_pred": "p", "protected": "g", "weight": "w"},
    {"y_true": "y", "y_score": "s", "threshold": 0.5, "protected": "g", "weight": "w"},
]


@pytest.fixture(scope="module")
def pg_table(postgres: Any) -> Any:
    con = postgres.ibis()
    con.create_table("sql_small", DF.to_arrow(), overwrite=True)
    return con.table("sql_small")


@pytest.fixture(scope="module")
def duck_table() -> Any:
    con = ibis.duckdb.connect()
    return con.create_table("sql_small", DF.to_arrow())


def _run(table: Any, query: str) -> pl.DataFrame:
    con = table._find_backend()
    if con.name == "duckdb":
        return con.con.sql(query).pl()
    cur = con.raw_sql(query)
    rows, names = cur.fetchall(), [d.name for d in cur.description]
    cur.close()
    return pl.DataFrame(rows, schema=names, orient="row")


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_query_parses_in_each_dialect(duck_table: Any, dialect: str) -> None:
    for req in REQUESTS:
        query = pf.counting_sql(duck_table, dialect, **req, min_group_size=2)
        assert sqlglot.parse_one(query, dialect=dialect).find(sqlglot.exp.Select) is not None


@pytest.mark.parametrize("engine", ["duckdb", "postgres"])
def test_the_query_gives_the_pass_cell_table(engine: str, duck_table: Any, request: pytest.FixtureRequest) -> None:
    table = duck_table if engine == "duckdb" else request.getfixturevalue("pg_table")
    for req in REQUESTS:
        cells = pf.cells_from_sql(_run(table, pf.counting_sql(table, engine, **req)), table, **req)
        want = pf.confusion_counts(DF, **req).collect()
        assert_frame_equal(cells.sort("g"), want.sort("g"), check_dtypes=False, rel_tol=1e-9)
        report = pf.report_from_counts(cells, protected="g", ci=None)
        assert_frame_equal(report, pf.fairness_report(DF, **req, ci=None), check_dtypes=False, rel_tol=1e-9)


@pytest.mark.parametrize("engine", ["duckdb", "postgres"])
def test_small_groups_never_leave_the_database(engine: str, duck_table: Any, request: pytest.FixtureRequest) -> None:
    table = duck_table if engine == "duckdb" else request.getfixturevalue("pg_table")
    req = REQUESTS[1]
    rows = _run(table, pf.counting_sql(table, engine, **req, min_group_size=2))
    assert set(rows["g"]) == {"a", "b"}  # 'c' has one row
    cells = pf.cells_from_sql(rows, table, **req, min_group_size=2)
    want = pf.confusion_counts(DF.filter(pl.col("g") != "c"), **req).collect()
    assert_frame_equal(cells.sort("g"), want.sort("g"), check_dtypes=False, rel_tol=1e-9)
    with pytest.raises(pf.PolfairError, match="min_group_size must be an int >= 1"):
        pf.counting_sql(table, engine, **req, min_group_size=0)


def test_unknown_dialect_and_long_names(duck_table: Any) -> None:
    with pytest.raises(pf.PolfairError, match=r"dialect='oracle' is not one polfair writes"):
        pf.counting_sql(duck_table, "oracle", **REQUESTS[0])
    check_identifiers(["g" * 63], "postgres")
    with pytest.raises(pf.PolfairError, match="64 bytes long; postgres keeps identifiers of at most 63 bytes"):
        check_identifiers(["g" * 64], "postgres")
    long = ibis.duckdb.connect().create_table("t", DF.rename({"g": "é" * 32}).to_arrow())
    with pytest.raises(pf.PolfairError, match="64 bytes long"):
        pf.counting_sql(long, "postgres", y_true="y", y_pred="p", protected="é" * 32)
    assert len(pf.counting_sql(long, "duckdb", y_true="y", y_pred="p", protected="é" * 32)) > 0


def test_literals_are_typed() -> None:
    out = typed_sql("SELECT SUM(CASE WHEN y = 1 THEN 1.0 ELSE 0.0 END) AS s, SUM(n) FROM t", "postgres")
    assert "1.0 AS DOUBLE PRECISION" in out and "CAST(n AS DOUBLE PRECISION)" in out
    assert "SUM(CASE" not in out


def test_unweighted_scores_on_postgres_are_floats_not_numeric(pg_table: Any) -> None:
    # the bare 1.0 of an unweighted score pass was NUMERIC in PostgreSQL (sums came back as Decimal)
    from polfair.scores import score_counts

    got = score_counts(pg_table, y_true="y", y_score="s", protected="g")
    want = score_counts(DF, y_true="y", y_score="s", protected="g")
    assert_frame_equal(got.sort(got.columns), want.sort(want.columns), check_dtypes=False, rel_tol=1e-9)


def test_only_the_cell_table_is_fetched(pg_table: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import polfair.engines.dialects as sql

    fetched: list[int] = []
    real = sql.ibis_collect

    def counting(expr: Any) -> pl.DataFrame:
        out = real(expr)
        fetched.append(out.height)
        return out

    monkeypatch.setattr(sql, "ibis_collect", counting)
    pf.fairness_report(pg_table, **REQUESTS[1], ci=None)
    assert len(fetched) == 1 and fetched[0] <= 3 * 16  # one query; per (group, outcome code) rows only


def test_compas_with_expressions(postgres: Any) -> None:
    compas = pf.load_compas()
    cols = ["two_year_recid", "decile_score", "race", "sex"]
    con = postgres.ibis()
    small = compas.select(cols)
    t = con.create_table("compas", small.to_arrow(), overwrite=True)
    want = pf.fairness_report(small.with_columns((pl.col("decile_score") >= 5).alias("pred")),
                              y_true="two_year_recid", y_pred="pred", protected=["race", "sex"], ci=None)  # fmt: skip
    for y_pred in (t.decile_score >= 5, "decile_score >= 5"):
        got = pf.fairness_report(t, y_true="two_year_recid", y_pred=y_pred, protected=["race", "sex"], ci=None)
        assert_frame_equal(got.drop("group_key"), want.drop("group_key"), check_dtypes=False, rel_tol=1e-9)
    banded = pf.fairness_report(t, y_true="two_year_recid", y_pred="decile_score >= 5",
                                protected="CASE WHEN sex = 'Male' THEN 'm' ELSE 'f' END AS band", ci=None)  # fmt: skip
    assert set(banded["attribute"].drop_nulls()) == {"band"}
    with pytest.raises(pf.PolfairError, match="y_pred='decile_scor >= 5'"):
        pf.fairness_report(t, y_true="two_year_recid", y_pred="decile_scor >= 5", protected="race", ci=None)


def test_sqlframe_outside_duckdb_is_refused() -> None:
    fake = type("PostgresDataFrame", (), {"__module__": "sqlframe.postgres.dataframe"})()
    with pytest.raises(pf.PolfairError, match=r"SQLFrame postgres DataFrames cannot be collected.*ibis\.postgres"):
        pf.fairness_report(fake, y_true="y", y_pred="p", protected="g")


def test_counting_sql_holds_weights_beyond_1e63(duck_table: Any) -> None:
    # the emitted query carries the two Σw² accumulators itself (no second query to fall back on)
    con = duck_table._find_backend()
    df = DF.with_columns(w=pl.Series([1e-300, 1e200, 1.0, 2.0, 1e-70, 1.0, 3.0, 1.0, 1.0]))
    t = con.create_table("sql_extreme", df.to_arrow())
    req = REQUESTS[1]
    cells = pf.cells_from_sql(_run(t, pf.counting_sql(t, "duckdb", **req)), t, **req)
    want = pf.confusion_counts(df, **req).collect()
    assert_frame_equal(cells.sort("g"), want.sort("g"), check_dtypes=False, rel_tol=1e-9)


def test_a_long_sql_expression_is_a_column_on_postgres(pg_table: Any) -> None:
    # the expression's text (over 63 bytes) names the column in messages, not in the database
    text = "CASE WHEN p = 1 AND y IS NOT NULL AND g <> 'zzzzzzzzzzzzzzzzzzzzzzzz' THEN 1 ELSE 0 END"
    assert len(text.encode()) > 63
    got = pf.confusion_counts(pg_table, y_true="y", y_pred=text, protected="g").collect()
    want = pf.confusion_counts(DF, y_true="y", y_pred="p", protected="g").collect()
    assert_frame_equal(got.sort("g"), want.sort("g"), check_dtypes=False)


def test_timestamptz_keys_are_utc_instants_whatever_the_server_zone(postgres: Any) -> None:
    # the database's default zone is not UTC; the keys come back as the same instants, in UTC
    admin = postgres.psycopg()
    admin.execute("ALTER DATABASE postgres SET timezone = 'Asia/Kolkata'")
    try:
        admin.execute("DROP TABLE IF EXISTS tz_keys")
        admin.execute("CREATE TABLE tz_keys AS SELECT * FROM (VALUES (1, 1, '2024-01-01 00:30:00+02'::timestamptz), "
                      "(0, 1, '2024-01-01 00:30:00+02'::timestamptz), (1, 0, '2024-06-01 12:00:00Z'::timestamptz)) "
                      "t(y, p, ts)")  # fmt: skip
        got = pf.confusion_counts(postgres.ibis().table("tz_keys"), y_true="y", y_pred="p", protected="ts").collect()
    finally:
        admin.execute("ALTER DATABASE postgres RESET timezone")
        admin.close()
    assert got.schema["ts"] == pl.Datetime("us", "UTC")
    assert [str(x) for x in got.sort("ts")["ts"]] == ["2023-12-31 22:30:00+00:00", "2024-06-01 12:00:00+00:00"]
    assert got.sort("ts")["n"].to_list() == [2, 1]


@pytest.mark.parametrize("weights", [[1.0, None, 2.0, 0.0, 1.0, None, 3.0, 1.0, 1.0],      # usable or null: one query
                                     [1.0, None, 2.0, 0.0, 1e-70, None, 3.0, 1.0, 1.0]])  # a tiny one: w² again
def test_null_weights_on_postgres_are_missing_rows(postgres: Any, weights: list[Any]) -> None:
    df = DF.with_columns(w=pl.Series(weights, dtype=pl.Float64))
    con = postgres.ibis()
    t = con.create_table("sql_null_w", df.to_arrow(), overwrite=True)
    req = REQUESTS[1]
    got = pf.confusion_counts(t, **req).collect()
    want = pf.confusion_counts(df, **req).collect()
    assert_frame_equal(got.sort("g"), want.sort("g"), check_dtypes=False, rel_tol=1e-9)
    assert got["n_missing"].sum() == 2


def _spy_queries(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    import polfair.engines.dialects as sql

    seen: list[str] = []
    real = sql.ibis_collect

    def spy(expr: Any) -> pl.DataFrame:
        con = expr._find_backend()
        seen.append(sql.typed_tree(con.compiler.to_sqlglot(expr)).sql(dialect=con.dialect))
        return real(expr)

    monkeypatch.setattr(sql, "ibis_collect", spy)
    return seen


def test_the_weighted_common_case_is_one_query_without_case(pg_table: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # integer label and prediction, usable weights: grouped on their raw values, no CASE per row
    seen = _spy_queries(monkeypatch)
    got = pf.confusion_counts(pg_table, **REQUESTS[1]).collect()
    want = pf.confusion_counts(DF, **REQUESTS[1]).collect()
    assert_frame_equal(got.sort("g"), want.sort("g"), check_dtypes=False, rel_tol=1e-9)
    assert len(seen) == 1 and "CASE" not in seen[0].upper()
    assert '"t0"."y" AS' in seen[0] and '"t0"."p" AS' in seen[0]


@pytest.mark.parametrize(
    ("column", "values"),
    [("w", [1.0, 2.0, 1e200, 0.0, 1.0, 1.0, 3.0, 1.0, 1.0]),     # w² past Float64: PostgreSQL refuses it, rerun
     ("w", [1.0, 2.0, 1e-200, 0.0, 1.0, 1.0, 3.0, 1.0, 1.0]),    # w² underflows to 0: refused too, rerun
     ("w", [1.0, 2.0, 0.5, 1.0, 3.0, 1.0, 0.25, 1.0, 1e-160]),   # group c's Σw² subnormal: the accumulators
     ("w", [1.0, -2.0, 1.0, float("nan"), 1.0, None, 3.0, float("inf"), 1.0]),  # invalid weights: the checked query
     ("y", [1, 0, 2, 1, None, 0, 1, 0, 1]),                      # an invalid and a null label in the raw groups
     ("p", [True, False, None, True, False, True, True, False, True])],  # a Boolean prediction
)  # fmt: skip
def test_the_common_case_falls_back_or_agrees(postgres: Any, column: str, values: list[Any]) -> None:
    df = DF.with_columns(pl.Series(column, values))
    con = postgres.ibis()
    t = con.create_table("sql_common_case", df.to_arrow(), overwrite=True)
    req = REQUESTS[1]
    _same_outcome(t, df, req)


def _same_outcome(table: Any, df: pl.DataFrame, req: dict[str, Any]) -> None:
    def outcome(data: Any) -> Any:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                out: Any = pf.fairness_report(data, **req, ci=None, min_sample_size=0)
            except Exception as exc:  # the same error as Polars's, or the same report
                out = f"{type(exc).__name__}: {exc}"
        # (a ResourceWarning is the garbage collector's about another test's connection, never polfair's)
        return out, sorted({f"{type(w.message).__name__}: {w.message}" for w in caught
                            if not issubclass(w.category, ResourceWarning)})  # fmt: skip

    (got, got_warned), (want, want_warned) = outcome(table), outcome(df)
    assert got_warned == want_warned
    if isinstance(want, str):
        assert got == want
    else:
        assert_frame_equal(got, want, check_dtypes=False, rel_tol=1e-9)


@pytest.mark.parametrize("weighted", [True, False])
def test_a_score_pass_groups_on_no_continuous_column(pg_table: Any, weighted: bool,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    # the key: the group, the raw label and the Boolean score >= threshold (PostgreSQL counts 2 values)
    seen = _spy_queries(monkeypatch)
    req = dict(REQUESTS[2]) if weighted else {k: v for k, v in REQUESTS[2].items() if k != "weight"}
    got = pf.confusion_counts(pg_table, **req).collect()
    want = pf.confusion_counts(DF, **req).collect()
    assert_frame_equal(got.sort("g"), want.sort("g"), check_dtypes=False, rel_tol=1e-9)
    assert len(seen) == 1
    tree = sqlglot.parse_one(seen[0], dialect="postgres")
    grouped = tree.find(sqlglot.exp.Group)
    assert grouped is not None and len(grouped.expressions) == 3  # g, y, score >= threshold
    assert '"__pf_o"' not in seen[0]  # no outcome code per row


@pytest.mark.parametrize(
    ("column", "values", "extra"),
    [("s", [0.9, 0.6, float("nan"), 0.7, 0.1, 0.5, 0.8, 0.3, 0.4], {}),   # a NaN score: the usual query
     ("s", [0.9, 0.6, 1.5, 0.7, 0.1, 0.5, 0.8, 0.3, 0.4], {}),            # a score beyond [0, 1]
     ("s", [0.9, None, 0.2, 0.7, 0.1, 0.5, 0.8, 0.3, 0.4], {}),           # a null score
     ("s", [0.5, 0.6, 0.2, 0.7, 0.1, 0.5, 0.8, 0.3, 0.5], {}),            # scores at the threshold
     ("w", [1.0, None, 0.5, 1, 3, 1, 0.25, 1, 1], {}),                    # a null weight
     ("w", [1.0, 1e200, 0.5, 1, 3, 1, 0.25, 1, 1], {}),                   # a square past Float64
     ("y", [1, 0, 2, 1, None, 0, 1, 0, 1], {}),                           # invalid and null labels
     ("y", [1, 0, 1, 1, 0, 0, 1, 0, 1], {"score_label": 0}),              # a score of the unfavorable label
     ("y", [1, 0, 1, 1, 0, 0, 1, 0, 1], {"threshold": 0.35}),
     ("y", [1, 0, 1, 1, 0, 0, 1, 0, 1], {"weight": None})],
)  # fmt: skip
def test_the_score_common_case_falls_back_or_agrees(postgres: Any, column: str, values: list[Any],
                                                    extra: dict[str, Any]) -> None:  # fmt: skip
    df = DF.with_columns(pl.Series(column, values))
    t = postgres.ibis().create_table("sql_score_case", df.to_arrow(), overwrite=True)
    req = {k: v for k, v in {**REQUESTS[2], **extra}.items() if v is not None}
    _same_outcome(t, df, req)


@pytest.mark.parametrize(
    ("column", "values"),
    [("w", [1.0, 2, 1e200, 1, 3, 1, 0.25, 1, 1]), ("w", [1.0, 2, 1e-200, 1, 3, 1, 0.25, 1, 1e-160]),
     ("w", [1.0, -2, float("nan"), 1, 3, None, 0.25, 1, float("inf")]),
     ("s", [0.9, float("nan"), 1.5, None, 0.1, 0.5, 0.8, 0.3, 0.4]), ("y", [1, 0, 2, None, 0, 0, 1, 0, 1]),
     ("w", [1.0, 2, 0.5, 1, 3, 1, 0.25, 1, 1])],
)  # fmt: skip
@pytest.mark.parametrize("i", [1, 2])
def test_the_common_cases_on_ibis_duckdb(column: str, values: list[Any], i: int) -> None:
    df = DF.with_columns(pl.Series(column, values))
    t = ibis.duckdb.connect().create_table("common", df.to_arrow())
    _same_outcome(t, df, REQUESTS[i])
    _same_outcome(t, df, {k: v for k, v in REQUESTS[i].items() if k != "weight"})


def test_the_sql_common_case_reads_the_polars_one_square_rule() -> None:
    # the SQL common case reads the Polars pass's one-square rule itself (no copy of the number to drift)
    import inspect

    from polfair.core.passes import collect
    from polfair.engines import narwhals

    assert narwhals.ONE_SQUARE_MIN is collect.ONE_SQUARE_MIN
    assert "ONE_SQUARE_MIN =" not in inspect.getsource(narwhals)
