"""The counting pass as SQL: dialect-proof text for Ibis tables and :func:`counting_sql`.

An Ibis table (PostgreSQL, DuckDB, BigQuery, Snowflake, ...) runs the counting pass of
:mod:`polfair.engines.narwhals` inside its database: narwhals builds the Ibis expression, Ibis
compiles it to the backend's SQL, and this module makes that text safe for every dialect before it
runs (:func:`typed_sql`):

* every non-integer numeric literal is cast to ``DOUBLE PRECISION`` (PostgreSQL reads ``1.0`` as
  ``NUMERIC``: its sums come back as ``Decimal`` and widen without bound);
* every ``SUM`` adds ``DOUBLE PRECISION`` values (``SUM(bigint)`` is ``NUMERIC`` in PostgreSQL, and a
  Boolean cannot be summed): counts stay exact below 2**53 rows per cell;

NaN is tested before any comparison by the compiled contract itself (in PostgreSQL ``NaN = NaN``
and NaN sorts above every number), and empty sums are ``COALESCE``-d to 0 by narwhals. Only the
small result (the code table) is fetched.

:func:`counting_sql` returns that one query for a named dialect (``postgres``, ``duckdb``,
``bigquery``, ``snowflake``, ``spark``), transpiled by sqlglot, so a data team can run it in its own
scheduler and feed the result to :func:`polfair.report_from_codes`.

Optional dependencies: ``ibis-framework`` and ``sqlglot`` (``pip install 'polfair[sql]'``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from polfair.exceptions import PolfairError

__all__ = ["DIALECTS", "IDENTIFIER_BYTES", "check_identifiers", "counting_sql", "is_ibis", "typed_sql"]

#: Dialects :func:`counting_sql` writes (sqlglot's names).
DIALECTS = ("postgres", "duckdb", "bigquery", "snowflake", "spark")

#: The longest identifier (bytes, UTF-8) each dialect keeps; PostgreSQL truncates longer ones silently.
IDENTIFIER_BYTES = {"postgres": 63, "duckdb": 1024, "bigquery": 300, "snowflake": 255, "spark": 1024}


def _sqlglot() -> Any:
    try:
        import sqlglot
    except ImportError as exc:  # pragma: no cover - exercised without the extra
        msg = "the SQL path needs sqlglot: pip install 'polfair[sql]'"
        raise ImportError(msg) from exc
    return sqlglot


def is_ibis(data: Any) -> bool:
    """True when ``data`` is an Ibis table expression.

    Examples
    --------
    >>> is_ibis(pl.DataFrame())
    False
    """
    return type(data).__module__.split(".")[0] == "ibis"


def typed_sql(sql: str, dialect: str) -> str:
    """``sql`` with every non-integer numeric literal cast to ``DOUBLE`` and every ``SUM`` over ``DOUBLE``.

    Parameters
    ----------
    sql
        One query in ``dialect``.
    dialect
        A sqlglot dialect name (``"postgres"``, ``"duckdb"``, ...).

    Returns
    -------
    str
        The query in the same dialect.

    Examples
    --------
    >>> typed_sql("SELECT SUM(1.0) AS s FROM t", "postgres")
    'SELECT SUM(CAST(CAST(1.0 AS DOUBLE PRECISION) AS DOUBLE PRECISION)) AS s FROM t'
    """
    sqlglot = _sqlglot()
    return _typed(sqlglot.parse_one(sql, dialect=dialect)).sql(dialect=dialect)


def _typed(tree: Any) -> Any:
    from sqlglot import exp

    def fix(node: Any) -> Any:
        if isinstance(node, exp.Literal) and not node.is_string and not node.is_int:
            if not isinstance(node.parent, exp.Cast):
                return exp.cast(node.copy(), exp.DataType.Type.DOUBLE)
        if isinstance(node, exp.Sum):
            arg = node.this
            if not (isinstance(arg, exp.Cast) and arg.to.this == exp.DataType.Type.DOUBLE):
                node.set("this", exp.cast(arg.copy(), exp.DataType.Type.DOUBLE))
        return node

    return tree.transform(fix)


def check_identifiers(names: Any, dialect: str) -> None:
    """Raise when a name is longer than ``dialect`` keeps (PostgreSQL: 63 bytes, truncated silently).

    Raises
    ------
    PolfairError
        Naming the column, its length and the fix.

    Examples
    --------
    >>> check_identifiers(["sex"], "postgres")
    >>> check_identifiers(["x" * 64], "postgres")
    Traceback (most recent call last):
    ...
    polfair.exceptions.PolfairError: column 'xxx...' is 64 bytes long; postgres keeps identifiers of at most 63 bytes ...
    """
    limit = IDENTIFIER_BYTES.get(dialect)
    for name in names:
        size = len(str(name).encode())
        if limit is not None and size > limit:
            shown = str(name) if len(str(name)) <= 20 else str(name)[:3] + "..."
            msg = (
                f"column {shown!r} is {size} bytes long; {dialect} keeps identifiers of at most {limit} bytes "
                "(longer ones are truncated or refused): rename the column in the database or in a view"
            )
            raise PolfairError(msg)


def ibis_collect(expr: Any) -> pl.DataFrame:
    """Run an Ibis expression through :func:`typed_sql` on its backend; the (small) result in Polars."""
    con = expr._find_backend()
    schema = expr.schema()
    sql = _typed(con.compiler.to_sqlglot(expr)).sql(dialect=con.dialect)
    if con.name == "postgres":
        cur = con.raw_sql(sql)
        try:
            rows = cur.fetchall()
            names = [d.name for d in cur.description]
        finally:
            cur.close()
        want = schema.to_polars()
        return pl.DataFrame(rows, schema={n: want.get(n) for n in names}, orient="row", strict=False)
    if con.name == "duckdb":
        return con.con.sql(sql).pl()
    out = pl.from_arrow(con.sql(sql, dialect=con.dialect).to_pyarrow())
    assert isinstance(out, pl.DataFrame)
    return out


def counting_sql(data: Any, dialect: str = "postgres", **request: Any) -> str:
    """The one query of the counting pass, as text for ``dialect``.

    Parameters
    ----------
    data
        An Ibis table (its schema decides the contract's rules; it is not read).
    dialect
        One of :data:`DIALECTS`.
    **request
        The keywords of :func:`polfair.confusion_counts` (column names): ``y_true``, ``y_pred`` or
        ``y_score`` and ``threshold``, ``protected``, ``favorable``, ``unfavorable``, ``weight``,
        ``by``; and ``min_group_size`` (int): the rows of every ``(by, protected)`` group with fewer
        input rows are dropped inside the query (disclosure control: they never leave the database).

    Returns
    -------
    str
        One ``SELECT``: per ``(by, protected keys, outcome code)`` the row count and the sums, the
        columns :func:`polfair.report_from_codes` reads.

    Raises
    ------
    PolfairError
        An unknown dialect, a name longer than the dialect keeps, or any rule of the input
        contract that the schema decides (as :func:`polfair.confusion_counts` raises).

    Examples
    --------
    >>> import ibis  # doctest: +SKIP
    >>> t = ibis.table({"y": "int64", "p": "int64", "g": "string"}, name="loans")  # doctest: +SKIP
    >>> print(counting_sql(t, "duckdb", y_true="y", y_pred="p", protected="g"))  # doctest: +SKIP
    """
    if dialect not in DIALECTS:
        msg = f"dialect={dialect!r} is not one polfair writes; choose one of {list(DIALECTS)}"
        raise PolfairError(msg)
    if not is_ibis(data):
        msg = f"counting_sql takes an Ibis table (ibis.table(...) or con.table(...)), got {type(data).__name__}"
        raise TypeError(msg)
    min_size = request.pop("min_group_size", None)
    plan = plan_codes(data, **request)
    return render(plan, dialect, min_group_size=min_size)


class _Planned(BaseException):
    """Raised by the recording frame with the pass's plan instead of running it."""

    def __init__(self, plan: Any) -> None:
        super().__init__("planned")
        self.plan = plan


def plan_codes(data: Any, **request: Any) -> dict[str, Any]:
    """The counting pass's Ibis expression (not run), its key names and its result names."""
    import polfair.engines.narwhals as nwe

    class Recording(nwe.ForeignFrame):
        def aggregate(self, columns: Any, group: Any, aggs: Any, engine: str = "auto", stages: Any = None) -> Any:
            planned, keys, back = self.plan(columns, group, aggs)
            for stage in stages(self.eng.ns, keys) if stages else []:
                planned = planned.with_columns(**dict(stage))
            table = planned.group_by(*keys).agg(*aggs(self.eng.ns)) if keys else planned.select(*aggs(self.eng.ns))
            raise _Planned({"expr": table.to_native(), "keys": keys, "back": back})

    try:
        nwe.foreign_code_table(data, **request, frame_class=Recording)
    except _Planned as p:
        return dict(p.plan)
    raise AssertionError("the pass did not run")  # pragma: no cover


def render(plan: Mapping[str, Any], dialect: str, *, min_group_size: int | None = None) -> str:
    """The planned pass as text for ``dialect``: typed, keys renamed back, optionally disclosure-controlled."""
    import ibis

    sqlglot = _sqlglot()
    from sqlglot import exp

    back: dict[str, str] = dict(plan["back"])
    check_identifiers(back.values(), dialect)
    inner = typed_sql(ibis.to_sql(plan["expr"], dialect="duckdb"), "duckdb")
    tree = sqlglot.parse_one(inner, dialect="duckdb")
    keys = [k for k in plan["keys"] if k != "__pf_code"]
    user_keys = [k for k in keys if k in back]
    sub = tree.subquery("pf_codes")
    select = exp.select(*[exp.column(c, quoted=True).as_(back.get(c, c), quoted=True)
                          for c in _output_columns(tree)]).from_(sub)  # fmt: skip
    if min_group_size is not None:
        if isinstance(min_group_size, bool) or not isinstance(min_group_size, int) or min_group_size < 1:
            msg = f"min_group_size must be an int >= 1, got {min_group_size!r}"
            raise PolfairError(msg)
        # the group's input rows over its codes: a window over the (small) grouped rows
        parts = ", ".join(f'"{k}"' for k in user_keys)
        window = f"SUM(\"__pf_n\") OVER (PARTITION BY {parts})" if parts else 'SUM("__pf_n") OVER ()'
        counted = exp.select("*", sqlglot.parse_one(window, dialect="duckdb").as_("__pf_group_n")).from_(sub)
        select = exp.select(*[exp.column(c, quoted=True).as_(back.get(c, c), quoted=True)
                              for c in _output_columns(tree)]).from_(counted.subquery("pf_sized")).where(
            sqlglot.parse_one(f'"__pf_group_n" >= {int(min_group_size)}', dialect="duckdb"))  # fmt: skip
    return select.sql(dialect=dialect, pretty=True)


def _output_columns(tree: Any) -> list[str]:
    return [s.alias_or_name for s in tree.selects]
