"""The wide form of a report: one row per (by, attribute set, group), one column per metric.

The long report (one row per metric) is the format for ETL and appends; notebooks and dashboards
want one row per group. :func:`to_wide` reshapes one into the other with a single pivot; the
numbers are the long report's, untouched.
"""

from __future__ import annotations

import polars as pl

from polfair.core.schema import RUN_METADATA_COLUMNS, by_columns
from polfair.exceptions import PolfairError

__all__ = ["WIDE_SEPARATOR", "to_wide"]

#: Separator between a metric's name and the statistic in a wide column name.
WIDE_SEPARATOR = "__"

# Columns that describe the row (the group), not one metric: they become index columns.
_ROW_COLUMNS = ("n", *RUN_METADATA_COLUMNS)
# Renamed statistics: value -> the metric's own column; value_lo/hi -> lo/hi.
_RENAME = {"value_lo": "lo", "value_hi": "hi"}


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
    ``reference_group``: the long report repeats the group's reference on each of its metric
    rows. When every group row has at most one non-null reference (the default references), it is
    one column of the wide form; with ``reference="best"`` (a reference per metric) it becomes
    ``<metric>__reference_group`` columns instead. Every number of the wide form is the long
    report's number (a pivot, no arithmetic); ``tests/test_wide.py`` checks the round trip.

    Examples
    --------
    >>> import polars as pl
    >>> import polfair as pf
    >>> df = pl.DataFrame({"y": [1, 0, 1, 0], "p": [1, 0, 0, 0], "g": ["a", "a", "b", "b"]})
    >>> wide = to_wide(pf.fairness_report(df, y_true="y", y_pred="p", protected="g"))
    >>> wide.filter(pl.col("group").is_not_null()).select("group", "selection_rate", "selection_rate__difference")
    shape: (2, 3)
    ┌───────┬────────────────┬────────────────────────────┐
    │ group ┆ selection_rate ┆ selection_rate__difference │
    │ ---   ┆ ---            ┆ ---                        │
    │ str   ┆ f64            ┆ f64                        │
    ╞═══════╪════════════════╪════════════════════════════╡
    │ a     ┆ 0.5            ┆ 0.0                        │
    │ b     ┆ 0.0            ┆ -0.5                       │
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
    split_ref = False
    if "reference_group" in stats:
        per_row = (
            report.lazy().filter(pl.col("reference_group").is_not_null())
            .group_by(keys).agg(pl.col("reference_group").n_unique().alias("k"))
            .select(pl.col("k").max()).collect().item()
        )  # fmt: skip
        split_ref = per_row is not None and per_row > 1
        if not split_ref:
            stats.remove("reference_group")
    dup = report.select(pl.struct(*keys, "metric").is_duplicated().any()).item()
    if dup:
        msg = "to_wide: the report has several rows for one (by, attribute, group, metric); reshape it per run first"
        raise PolfairError(msg)
    metrics = report["metric"].cast(pl.String).unique(maintain_order=True).to_list()
    frame = report.with_columns(pl.col("metric").cast(pl.String))
    index = [*keys, *row_cols]
    if not split_ref and "reference_group" in cols:
        # one reference per group row: the non-null one (n_missing rows carry none)
        ref = frame.group_by(keys, maintain_order=True).agg(pl.col("reference_group").drop_nulls().first())
        frame = frame.drop("reference_group").join(ref, on=keys, how="left", nulls_equal=True)
        index.append("reference_group")
    out = frame.pivot(on="metric", on_columns=metrics, index=index, values=["value", *stats],
                      separator=WIDE_SEPARATOR, maintain_order=True)  # fmt: skip
    names: dict[str, str] = {}
    order: list[str] = []
    for m in metrics:
        for s in ["value", *stats]:
            src = f"{s}{WIDE_SEPARATOR}{m}" if stats else m
            if src not in out.columns:
                continue
            dst = m if s == "value" else f"{m}{WIDE_SEPARATOR}{_RENAME.get(s, s)}"
            if s != "value" and drop_empty and out[src].null_count() == out.height:
                continue
            names[src] = dst
            order.append(src)
    return out.select(*index, *[pl.col(c).alias(names[c]) for c in order])
