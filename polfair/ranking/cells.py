"""The ranking pass: ONE ``group_by`` of the rows to the ranking cell table (issue 43).

A ranking input is a long table of (query, item, rank, protected attributes, optional relevance)
rows. The pass groups it by ``by + query + rank + protected + query_protected`` (and the relevance
value when nDCG needs its ideal ordering), with ranks beyond ``k`` pooled into one rank ``k + 1``
per query: every position weight, tie, share and per-query quantity of the report is arithmetic on
that table (:mod:`polfair.ranking.report`). The table has at most ``queries × (k + 1) × groups``
rows, whatever the number of items; without ``k`` it keeps every rank.

The pass runs in Polars (lazy, streaming) or, for Spark / DuckDB / other lazy frames, in their
engine through narwhals (:class:`polfair.engines.narwhals.ForeignFrame`), the frame adapter every
pass uses.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from polfair.core.passes.collect import check_not_empty
from polfair.core.passes.spec import check_key_names
from polfair.engines.frame import frame_of
from polfair.exceptions import InvalidInputError

__all__ = ["RANK", "RANKING_CELL_COLUMNS", "RELEVANCE_KEY", "ranking_pass"]

#: The rank key of the cell table (ranks beyond ``k`` are ``k + 1``).
RANK = "__pf_rank"
#: The relevance key (only when ``ndcg_at_k`` needs the ideal ordering).
RELEVANCE_KEY = "__pf_relkey"
#: The sums of a cell: rows, summed relevance (with ``relevance``), the query weight's min/max (with
#: ``weight``; it must be constant within a query).
RANKING_CELL_COLUMNS = ("n", "rel", "qw_min", "qw_max")


def _is_int(dtype: pl.DataType) -> bool:
    return dtype.is_integer()


def ranking_pass(
    data: Any,
    *,
    query: Any,
    rank: Any,
    protected: Sequence[Any],
    query_protected: Sequence[Any] = (),
    relevance: Any = None,
    weight: Any = None,
    by: Sequence[Any] = (),
    k: int | None = None,
    relevance_key: bool = False,
    engine: str = "auto",
) -> tuple[pl.DataFrame, dict[str, list[str]]]:
    """The ranking cell table of the rows, and the key names by role.

    Returns
    -------
    (pl.DataFrame, dict)
        The table: ``*by, query, __pf_rank, *protected, *query_protected[, __pf_relkey]`` then
        ``n`` (Int64 rows), with ``relevance`` ``rel`` (Σ relevance), with ``weight`` ``qw_min``,
        ``qw_max`` (the query weight's extremes). The dict: role -> the key names in the table.

    Raises
    ------
    ColumnNotFoundError
        A named column is missing.
    InvalidInputError
        A non-integer rank; a null, zero or negative rank; a null query id; a non-numeric, null,
        NaN, infinite or negative relevance or weight.
    PolfairError
        A key name given twice or reserved; no rows.
    """
    frame = frame_of(data)
    ns = frame.eng.ns
    cq = frame.column(query, "query")
    cr = frame.column(rank, "rank")
    cp = [frame.column(x, "protected") for x in protected]
    cqp = [frame.column(x, "query_protected") for x in query_protected]
    cb = [frame.column(x, "by") for x in by]
    check_key_names([c.name for c in cb], [cq.name, *[c.name for c in cp], *[c.name for c in cqp]],
                    also_reserved=("attribute", "group_key", "qw", "n_rel_missing", *RANKING_CELL_COLUMNS))  # fmt: skip
    if not _is_int(cr.dtype):
        msg = (
            f"rank={cr.name!r} has dtype {cr.dtype}; give integer positions 1, 2, 3, ... per query "
            "(competition ranks for ties: 1, 2, 2, 4, e.g. pl.col('score').rank('min', descending=True)"
            ".over('query'))"
        )
        raise InvalidInputError(msg)
    numeric: dict[str, Any] = {}
    for role, c in (("relevance", relevance), ("weight", weight)):
        if c is not None:
            col = frame.column(c, role)
            if not (col.dtype.is_numeric() or col.dtype == pl.Boolean):
                msg = f"{role}={col.name!r} has dtype {col.dtype}; give a numeric column"
                raise InvalidInputError(msg)
            numeric[role] = col
    columns: dict[str, Any] = {c.name: c.expr for c in cb}
    columns[cq.name] = cq.expr
    r = cr.expr
    columns[RANK] = r if k is None else ns.when(r > k).then(ns.lit(k + 1)).otherwise(r)
    for c in (*cp, *cqp):
        columns[c.name] = c.expr
    rel = numeric["relevance"].expr.cast(ns.Float64) if "relevance" in numeric else None
    if rel is not None:
        columns["__pf_rel"] = rel
        if relevance_key:
            columns[RELEVANCE_KEY] = rel
    if "weight" in numeric:
        columns["__pf_qw"] = numeric["weight"].expr.cast(ns.Float64)
    keys = [*[c.name for c in cb], cq.name, RANK, *[c.name for c in cp], *[c.name for c in cqp]]
    if rel is not None and relevance_key:
        keys.append(RELEVANCE_KEY)

    def guarded(ns: Any, c: str) -> Any:
        # a value's check rides on its sum: a null or negative value enters it as NaN (so do NaN and -inf; +inf stays
        # inf), so one non-finite sum per cell flags the cell: no min, max or count aggregation
        return ns.when(ns.col(c) >= 0).then(ns.col(c)).otherwise(ns.lit(float("nan"))).sum()

    def aggs(ns: Any) -> list[Any]:
        out = [ns.len().alias("n")]
        if rel is not None:
            out.append(guarded(ns, "__pf_rel").alias("rel"))
        if "weight" in numeric:
            out += [guarded(ns, "__pf_qw").alias("qw"), ns.col("__pf_qw").min().alias("qw_min"),
                    ns.col("__pf_qw").max().alias("qw_max")]  # fmt: skip
        return out

    table = frame.aggregate(columns, keys, aggs, engine=engine)
    check_not_empty(int(table["n"].sum() or 0))
    table = _checked(table, cq.name, numeric)
    names = {"by": [c.name for c in cb], "query": [cq.name], "protected": [c.name for c in cp],
             "query_protected": [c.name for c in cqp]}  # fmt: skip
    return table, names


def _checked(table: pl.DataFrame, query: str, numeric: dict[str, Any]) -> pl.DataFrame:
    """Check the pass's ranks, relevance and weights on the cell table; the table with every sum column."""
    bad_rank = table.filter(pl.col(RANK).is_null() | (pl.col(RANK) < 1))
    if bad_rank.height:
        nrows = int(bad_rank["n"].sum())
        vals = sorted({v for v in bad_rank[RANK].to_list()}, key=lambda v: (v is not None, v))[:5]
        msg = (
            f"rank: {nrows:,} rows have a null, zero or negative rank (values {vals}); ranks are positions "
            "1, 2, 3, ... within each query: drop or fix those rows"
        )
        raise InvalidInputError(msg)
    if table[query].null_count():
        nrows = int(table.filter(pl.col(query).is_null())["n"].sum())
        msg = f"query={query!r}: {nrows:,} rows have a null query id; every ranked row belongs to one query"
        raise InvalidInputError(msg)
    for role, col in numeric.items():
        total = "rel" if role == "relevance" else "qw"
        sums = table[total].cast(pl.Float64)
        bad = table.filter(sums.is_null() | sums.is_nan() | sums.is_infinite())
        if bad.height:
            qs = bad[query].unique(maintain_order=True).head(3).to_list()
            msg = (
                f"{role}={col.name!r}: every row needs a finite, non-negative value; found null, negative, NaN or infinite "
                f"values among {int(bad['n'].sum()):,} rows ({bad[query].n_unique():,} queries, e.g. {query} = {qs}): "
                "fill, clip or drop those rows"
            )
            raise InvalidInputError(msg)
    # columns that carry nothing (no relevance, no weight) are not kept: the cell table stays small
    drop = [c for c in ("qw",) if c in table.columns]
    out = table.drop(drop).with_columns(pl.col("n").cast(pl.Int64))
    if "relevance" in numeric:
        out = out.with_columns(pl.col("rel").cast(pl.Float64))
    if "weight" in numeric:
        out = out.with_columns(pl.col("qw_min", "qw_max").cast(pl.Float64))
    return out

