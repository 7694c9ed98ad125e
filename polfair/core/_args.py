"""Argument plumbing shared inside polfair: names/expressions, column checks with close-name hints.

An underscore module: internal to the package (any polfair module may import it), not public API.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any

import polars as pl

from polfair.core._typing import IntoExpr
from polfair.exceptions import ColumnNotFoundError, PolfairError

__all__ = [
    "SMALL_COLLECT", "SMALL_ROWS", "as_expr", "as_list", "as_values", "check_columns", "collect_options", "is_bool_like",
    "mergeable_tables", "output_name",
]  # fmt: skip


def mergeable_tables(
    tables: Sequence[pl.DataFrame | pl.LazyFrame], *, merge: str, what: str, required: Sequence[str], same_order: bool
) -> list[pl.DataFrame]:
    """The collected tables a ``merge_*`` function sums: at least one, every one with the first's
    columns (in its order when ``same_order``) and the ``required`` value columns; else a
    :class:`PolfairError` naming the function (``merge``) and the table kind (``what``).
    """
    frames = [t.collect() if isinstance(t, pl.LazyFrame) else t for t in tables]
    if not frames:
        msg = f"{merge} needs at least one table"
        raise PolfairError(msg)
    cols = frames[0].columns
    same = (lambda f: f.columns == cols) if same_order else (lambda f: set(f.columns) == set(cols))
    if not all(same(f) for f in frames) or not set(required) <= set(cols):
        msg = f"{merge}: every table must be {what} with the same columns"
        raise PolfairError(msg)
    return frames


def as_expr(x: IntoExpr, role: str) -> pl.Expr:
    if isinstance(x, str):
        return pl.col(x)
    if isinstance(x, pl.Expr):
        return x
    msg = f"{role} must be a column name (str) or a polars expression, got {type(x).__name__}: {x!r}"
    raise TypeError(msg)


def as_list(x: IntoExpr | Sequence[IntoExpr] | None) -> list[IntoExpr]:
    if x is None:
        return []
    if isinstance(x, (str, pl.Expr)):
        return [x]
    return list(x)


def check_columns(expr: pl.Expr, role: str, names: list[str]) -> None:
    for root in expr.meta.root_names():
        if root not in names:
            close = difflib.get_close_matches(root, names, n=3, cutoff=0.5)
            hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
            shown = ", ".join(names[:20]) + (", ..." if len(names) > 20 else "")
            msg = f"{role}: column {root!r} is not in the input.{hint} Available columns: {shown}"
            raise ColumnNotFoundError(msg)


def output_name(expr: pl.Expr, role: str) -> str:
    try:
        return expr.meta.output_name()
    except Exception as exc:  # polars raises ComputeError for nameless expressions
        msg = f"{role}: cannot name the expression {expr}; give it a name with .alias('name')"
        raise PolfairError(msg) from exc


def as_values(v: Any) -> tuple[Any, ...]:
    if isinstance(v, (list, tuple, set, frozenset)):
        return tuple(v)
    return (v,)


def is_bool_like(v: Any) -> bool:
    return isinstance(v, bool) or (isinstance(v, int) and v in (0, 1)) or (
        isinstance(v, float) and v in (0.0, 1.0)
    )


#: ``collect`` options for the small-table plans (a few hundred rows): they run faster without Polars'
#: query optimiser, whose cost exceeds its gain at these sizes (measured: 6 ms of a 17 ms collect).
SMALL_COLLECT: dict = {"engine": "in-memory", "optimizations": pl.QueryOptFlags.none()}
#: Up to this many rows a plan counts as small (:func:`collect_options`).
SMALL_ROWS = 20_000


def collect_options(rows: int) -> dict:
    """``collect`` options for a plan over a frame of ``rows`` rows: :data:`SMALL_COLLECT` up to
    :data:`SMALL_ROWS`, Polars' defaults above (there the optimiser's common-subexpression
    elimination pays: the interval plans of a 180,000-group report ran 2x slower without it).

    Examples
    --------
    >>> collect_options(100) is SMALL_COLLECT, collect_options(10**6)
    (True, {})
    """
    return SMALL_COLLECT if rows <= SMALL_ROWS else {}
