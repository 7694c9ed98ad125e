"""Dialect-proof SQL text for the counting pass on Ibis tables (used by :mod:`polfair.engines.narwhals`
and :mod:`polfair.engines.sql`): typed literals, ``DOUBLE`` sums, identifier lengths.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from polfair.exceptions import PolfairError

__all__ = ["IDENTIFIER_BYTES", "check_identifiers", "ibis_collect", "is_ibis", "sqlglot_module", "typed_sql", "typed_tree"]

#: The longest identifier (bytes, UTF-8) each dialect keeps; PostgreSQL truncates longer ones silently.
IDENTIFIER_BYTES = {"postgres": 63, "duckdb": 1024, "bigquery": 300, "snowflake": 255, "spark": 1024}


def sqlglot_module() -> Any:
    """The ``sqlglot`` module; ``ImportError`` naming the extra without it."""
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
    'SELECT SUM(CAST(1.0 AS DOUBLE PRECISION)) AS s FROM t'
    """
    sqlglot = sqlglot_module()
    return typed_tree(sqlglot.parse_one(sql, dialect=dialect)).sql(dialect=dialect)


def typed_tree(tree: Any) -> Any:
    """A sqlglot tree with its non-integer literals cast to ``DOUBLE`` and its ``SUM`` arguments too (:func:`typed_sql`)."""
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
    sql = typed_tree(con.compiler.to_sqlglot(expr)).sql(dialect=con.dialect)
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
