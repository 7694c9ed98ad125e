"""The wide form of a report: one row per (by, attribute set, group), one column per metric.

The long report (one row per metric) is the format for ETL and appends; notebooks and dashboards
want one row per group. :func:`to_wide` reshapes one into the other with a single pivot; the
numbers are the long report's, untouched.
"""

from __future__ import annotations

import polars as pl

from polfair.core.docstrings import with_setup
from polfair.core.schema import RUN_METADATA_COLUMNS, by_columns
from polfair.exceptions import PolfairError

__all__ = ["WIDE_SEPARATOR", "to_wide"]

#: Separator between a metric's name and the statistic in a wide column name.
WIDE_SEPARATOR = "__"

# Columns that describe the row (the group), not one metric: they become index columns.
_ROW_COLUMNS = ("n", *RUN_METADATA_COLUMNS)
# Renamed statistics: value -> the metric's own column; value_lo/hi -> lo/hi.
_RENAME = {"value_lo": "lo", "value_hi": "hi"}
_R, _K = "__pf_row", "__pf_nref"


@with_setup
def to_wide(report: pl.DataFrame, *, drop_empty: bool = True) -> pl.DataFrame:
    """Reshape a long report to one row per (by, attribute set, group) and one column per metric.

    Parameters
    ----------
    report
        A long report (:func:`polfair.fairness_report`, :func:`polfair.report_from_counts`), with
        or without interval, monitor and run-metadata columns.
    drop_empty
        ``True`` (default): drop the per-metric statistic columns that are null on every row (for
        example ``num_instances__lo``, ``disparate_impact__difference``). Metric value columns are
        always kept.

    Returns
    -------
    pl.DataFrame
        Index columns first: the ``by`` columns, ``attribute``, ``group``, any other column that
        describes the group rather than a metric (a typed group-key Struct column, ``n``, the
        run-metadata columns) and ``reference_group`` (when one reference per row; see below).
        Then, per metric in the report's order: ``<metric>`` (Float64, the long ``value``),
        followed by ``<metric>__<statistic>`` for every other per-metric column of the long report:
        ``__difference``, ``__ratio``, ``__lo``/``__hi`` (from ``value_lo``/``value_hi``),
        ``__difference_lo``, ..., ``__p_value``, ``__p_value_adjusted``, ``__n_eff``,
        ``__ci_method``, ``__test``, ``__threshold``, ``__status`` (their long dtypes).

        Row kinds, as in the long report: **group rows** (``attribute`` and ``group`` set: group
        metrics, their ``__difference``/``__ratio`` against the reference group, the named
        disparities); **attribute rows** (``group`` null: ``<metric>`` null for group metrics and
        their spread across groups in ``<metric>__difference`` (max − min) and
        ``<metric>__ratio`` (min / max); attribute-level metrics such as
        ``demographic_parity_difference`` in their value column); **population rows**
        (``attribute`` and ``group`` null: the metrics of everyone and the population indices).
        A cell is null where the long report has no such row. Rows come in the long report's
        order of first appearance.

    Raises
    ------
    PolfairError
        ``report`` lacks the ``attribute``, ``group``, ``metric`` or ``value`` column, or has two
        rows for one (by, attribute, group, metric).

    Notes
    -----
    Cost: one ``group_by`` over the report's row keys, one join, one split by metric, then each
    metric's rows are scattered into full-height columns; linear in the report's size.

    ``reference_group``: the long report repeats the group's reference on each of its metric
    rows. When every group row has at most one non-null reference (the default references), it is
    one column of the wide form; with ``reference="best"`` (a reference per metric) it becomes
    ``<metric>__reference_group`` columns instead. Every number of the wide form is the long
    report's number (a pivot, no arithmetic); ``tests/test_wide.py`` checks the round trip.

    Examples
    --------
    {{toy_report}}
    >>> wide = to_wide(rep)
    >>> wide.filter(pl.col("group").is_not_null()).select("group", "selection_rate", "selection_rate__difference")
    shape: (2, 3)
    ┌───────┬────────────────┬────────────────────────────┐
    │ group ┆ selection_rate ┆ selection_rate__difference │
    │ ---   ┆ ---            ┆ ---                        │
    │ str   ┆ f64            ┆ f64                        │
    ╞═══════╪════════════════╪════════════════════════════╡
    │ a     ┆ 0.75           ┆ 0.0                        │
    │ b     ┆ 0.0            ┆ -0.75                      │
    └───────┴────────────────┴────────────────────────────┘
    """
    missing = [c for c in ("attribute", "group", "metric", "value") if c not in report.columns]
    if missing:
        msg = f"to_wide needs a long polfair report; columns {missing} are missing (found {report.columns[:12]})"
        raise PolfairError(msg)
    by = by_columns(report.columns)
    cols = report.columns
    after = cols[cols.index("attribute") + 1 :]
    # columns that describe the group: everything known to be per-row plus Struct group keys
    row_cols = [c for c in after if c in _ROW_COLUMNS or report.schema[c].base_type() == pl.Struct]
    keys = [*by, "attribute", "group"]
    stats = [c for c in after if c not in ("group", "metric", "value", *row_cols)]
    has_ref = "reference_group" in stats
    # one row per (by, attribute, group), in order of first appearance, numbered _R
    index, numbered = _number_rows(report, keys, row_cols)
    if has_ref:
        refs = (
            numbered.select(_R, "reference_group").filter(pl.col("reference_group").is_not_null())
            .group_by(_R).agg(pl.col("reference_group").first(), pl.col("reference_group").n_unique().alias(_K))
        )  # fmt: skip
        split_ref = bool(refs.select((pl.col(_K) > 1).any()).item())  # reference="best": one per metric
        if not split_ref:
            index = index.join(refs.drop(_K), on=_R, how="left", maintain_order="left")
            stats.remove("reference_group")
    rows = index.height
    # the long rows split by metric (one pass); each part is scattered into full-height columns:
    # cost linear in the report, no pivot
    parts = numbered.select(_R, "metric", "value", *stats).partition_by(
        "metric", as_dict=True, include_key=False, maintain_order=True
    )
    out_cols: list[pl.Series] = []
    for (metric,), part in parts.items():
        name = str(metric)
        if part[_R].is_duplicated().any():
            msg = (f"to_wide: the report has several rows for one (by, attribute, group, metric) (metric {name!r}); "
                   "reshape one run at a time (filter on run_id) ")  # fmt: skip
            raise PolfairError(msg)
        at = part[_R]
        for s in ("value", *stats):
            src = part[s]
            if s != "value" and drop_empty and src.null_count() == src.len():
                continue
            col = pl.repeat(None, rows, dtype=src.dtype, eager=True)
            col.scatter(at, src)
            dst = name if s == "value" else f"{name}{WIDE_SEPARATOR}{_RENAME.get(s, s)}"
            out_cols.append(col.alias(dst))
    return pl.concat([index.drop(_R), pl.DataFrame(out_cols)], how="horizontal")


def _number_rows(report: pl.DataFrame, keys: list[str], row_cols: list[str]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The wide rows (keys + row columns, numbered ``_R``) and the report with each row's ``_R``."""
    # a report lists each group's metrics contiguously: runs of equal keys are the wide rows
    rid = report.select(pl.struct(keys).rle_id().alias(_R))
    numbered = report.with_columns(rid[_R])
    heads = numbered.filter(pl.col(_R).is_first_distinct()).select(_R, *keys, *row_cols)
    if not heads.select(pl.struct(keys).is_duplicated().any()).item():
        return heads, numbered
    # a filtered or concatenated report: number the groups by first appearance
    index = report.group_by(keys, maintain_order=True).agg([pl.col(c).first() for c in row_cols]).with_row_index(_R)
    index = index.select(_R, *keys, *row_cols)
    numbered = report.join(index.select(*keys, _R), on=keys, how="left", nulls_equal=True, maintain_order="left")
    return index, numbered
