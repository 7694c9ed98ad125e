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
scheduler, turn the result into the cell table with :func:`cells_from_sql` and feed that to
:func:`polfair.report_from_counts`.

Optional dependencies: ``ibis-framework`` and ``sqlglot`` (``pip install 'polfair[sql]'``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from polfair.engines.dialects import IDENTIFIER_BYTES, check_identifiers, is_ibis, sqlglot_module, typed_sql
from polfair.exceptions import PolfairError

__all__ = ["DIALECTS", "IDENTIFIER_BYTES", "cells_from_sql", "check_identifiers", "counting_sql", "is_ibis", "typed_sql"]

#: Dialects :func:`counting_sql` writes (sqlglot's names).
DIALECTS = ("postgres", "duckdb", "bigquery", "snowflake", "spark")

#: The Ibis compiler of each dialect.
_IBIS_DIALECT = {"spark": "duckdb"}  # (Ibis's PySpark compiler needs a session: DuckDB's SQL, transpiled)


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
    plan = _plan_codes(data, **request)
    return _render(plan, dialect, min_group_size=min_size)


class _Planned(BaseException):
    """Raised by the recording frame with the pass's plan instead of running it."""

    def __init__(self, plan: Any) -> None:
        super().__init__("planned")
        self.plan = plan


def _plan_codes(data: Any, **request: Any) -> dict[str, Any]:
    """The counting pass's Ibis expression (not run), its key names and its result names."""
    import polfair.engines.narwhals as nwe

    class Recording(nwe.ForeignFrame):
        ranged_sums = False

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


def _render(plan: Mapping[str, Any], dialect: str, *, min_group_size: int | None = None) -> str:
    """The planned pass as text for ``dialect``: typed, keys renamed back, optionally disclosure-controlled."""
    import ibis

    sqlglot = sqlglot_module()
    from sqlglot import exp

    back: dict[str, str] = dict(plan["back"])
    check_identifiers(back.values(), dialect)
    # Ibis compiles for the target itself (its NaN test, its casts), then the literals are typed
    source = _IBIS_DIALECT.get(dialect, dialect)
    inner = typed_sql(ibis.to_sql(plan["expr"], dialect=source), source)
    tree = sqlglot.parse_one(inner, dialect=source)
    from polfair.core.contract import CODE

    keys = [k for k in plan["keys"] if k != CODE]
    user_keys = [k for k in keys if k in back]
    sub = tree.subquery("pf_codes")
    names = list(plan["expr"].schema().names)
    select = exp.select(*[exp.column(c, quoted=True).as_(back.get(c, c), quoted=True)
                          for c in names]).from_(sub)  # fmt: skip
    if min_group_size is not None:
        if isinstance(min_group_size, bool) or not isinstance(min_group_size, int) or min_group_size < 1:
            msg = f"min_group_size must be an int >= 1, got {min_group_size!r}"
            raise PolfairError(msg)
        # the group's input rows over its codes: a window over the (small) grouped rows
        parts = ", ".join(f'"{k}"' for k in user_keys)
        window = f"SUM(\"__pf_n\") OVER (PARTITION BY {parts})" if parts else 'SUM("__pf_n") OVER ()'
        counted = exp.select("*", sqlglot.parse_one(window, dialect="postgres").as_("__pf_group_n")).from_(sub)
        select = exp.select(*[exp.column(c, quoted=True).as_(back.get(c, c), quoted=True)
                              for c in names]).from_(counted.subquery("pf_sized")).where(
            sqlglot.parse_one(f'"__pf_group_n" >= {int(min_group_size)}', dialect="postgres"))  # fmt: skip
    return select.sql(dialect=dialect, pretty=True)


def _output_columns(tree: Any) -> list[str]:
    return [s.alias_or_name for s in tree.selects]


def cells_from_sql(result: Any, data: Any, **request: Any) -> pl.DataFrame:
    """The cell table of a :func:`counting_sql` result run elsewhere (dbt, Airflow, a notebook).

    Parameters
    ----------
    result
        The query's rows: a Polars DataFrame, or anything ``pl.DataFrame(...)`` takes (a pyarrow
        table, a pandas frame).
    data
        The Ibis table the query was written for (its schema; it is not read).
    **request
        The keywords given to :func:`counting_sql` (``min_group_size`` too).

    Returns
    -------
    pl.DataFrame
        The cell table of :func:`polfair.confusion_counts` (schema in docs/schema.md), checked by
        the input contract as the pass's own result is (invalid rows raise, missing ones warn);
        :func:`polfair.report_from_counts` turns it into the report.

    Raises
    ------
    InvalidInputError, PolfairError
        As :func:`polfair.confusion_counts`.

    Examples
    --------
    >>> import ibis  # doctest: +SKIP
    >>> cells = cells_from_sql(con.sql(query).to_polars(), t, y_true="y", y_pred="p", protected="g")  # doctest: +SKIP
    """
    import polfair.engines.narwhals as nwe
    from polfair.core.passes.counts import checked_polarity, pivot_codes

    request.pop("min_group_size", None)
    table = result if isinstance(result, pl.DataFrame) else pl.DataFrame(result)

    class Replay(nwe.ForeignFrame):
        ranged_sums = False

        def aggregate(self, columns: Any, group: Any, aggs: Any, engine: str = "auto", stages: Any = None) -> Any:
            return table

    codes, spec = nwe.foreign_code_table(data, **request, frame_class=Replay)
    return pivot_codes(checked_polarity(codes.lazy(), spec), spec).collect()
