"""Small-cell disclosure control: :func:`suppress_small_groups` (``fairness_report(min_group_size=)``).

Published fairness reports about people often must not show statistics of very small groups (a
rate over 3 people reveals individuals). This drops the rows of groups below a size from the report
that is displayed and written; the numbers of every other row are unchanged (they were computed
from all the data).
"""

from __future__ import annotations

from typing import Any

import polars as pl

from polfair.core.docstrings import with_setup
from polfair.exceptions import PolfairError

__all__ = ["suppress_small_groups"]

#: Columns that compare a group with its reference; nulled when the reference group is suppressed.
_COMPARISON_COLUMNS = ("difference", "ratio", "difference_lo", "difference_hi", "ratio_lo", "ratio_hi")
_REPORT_COLUMNS = ("attribute", "group", "metric", "value", "reference_group", "difference", "ratio", "n")


@with_setup
def suppress_small_groups(report: pl.DataFrame, min_group_size: Any) -> pl.DataFrame:
    """Drop the group rows of groups with fewer than ``min_group_size`` input rows (small-cell control).

    Parameters
    ----------
    report
        A long report of :func:`polfair.fairness_report` (any ``by`` columns, interval, threshold
        and run columns are kept).
    min_group_size
        Positive int, or ``None`` (return ``report`` unchanged). A group row (``group`` not null)
        whose ``n`` (input rows of the group, Int64) is below it is removed.

    Returns
    -------
    pl.DataFrame
        The same columns and dtypes, fewer rows. Group rows whose *reference* group was removed
        keep their own ``value`` but get null comparison columns (``difference``, ``ratio`` and,
        when present, ``difference_lo/hi``, ``ratio_lo/hi``), since the reference's value could be
        recovered from them. Attribute-level rows (``group`` null: spreads over groups,
        entropy indices, EDF) and population rows are kept: they aggregate over all groups.

    Raises
    ------
    PolfairError
        ``min_group_size`` is not a positive integer, or ``report`` lacks the report columns
        (``group``, ``n``, ...).

    Notes
    -----
    Row suppression only: the remaining numbers are computed from all rows (a spread over groups
    still includes the suppressed groups). It is the primary-suppression rule of statistical
    disclosure control (threshold rule; e.g. Hundepool et al., *Statistical Disclosure Control*,
    Wiley 2012, §5.2); complementary suppression is not attempted. Use it on reports you publish;
    for monitoring, prefer ``min_sample_size`` (keeps the rows, marks them ``insufficient_data``).

    Examples
    --------
    {{toy_report}}
    >>> out = suppress_small_groups(rep, 3)
    >>> sorted(out["group"].drop_nulls().unique().to_list())
    ['a']
    >>> out.height < rep.height
    True
    """
    if min_group_size is None:
        return report
    if isinstance(min_group_size, bool) or not isinstance(min_group_size, int) or min_group_size < 1:
        msg = f"min_group_size={min_group_size!r} is not a positive integer (rows); use e.g. min_group_size=10"
        raise PolfairError(msg)
    min_n = min_group_size
    missing = [c for c in _REPORT_COLUMNS if c not in report.columns]
    if missing:
        msg = f"min_group_size needs a long fairness report (columns {list(_REPORT_COLUMNS)}); missing {missing}"
        raise PolfairError(msg)
    by = report.columns[: report.columns.index("attribute")]
    small = pl.col("group").is_not_null() & pl.col("n").is_not_null() & (pl.col("n") < min_n)
    gone = (
        report.filter(small)
        .select(*by, pl.col("attribute").cast(pl.String).alias("__pf_a"), pl.col("group").alias("__pf_ref"))
        .unique()
        .with_columns(pl.lit(True).alias("__pf_gone"))
    )
    kept = report.filter(~small)
    if gone.height == 0:
        return kept
    out = kept.with_columns(
        pl.col("attribute").cast(pl.String).alias("__pf_a"),
        pl.col("reference_group").cast(pl.String).alias("__pf_ref"),
    ).join(gone, on=[*by, "__pf_a", "__pf_ref"], how="left", nulls_equal=False, maintain_order="left")
    hide = pl.col("__pf_gone").fill_null(False) & pl.col("group").is_not_null()
    out = out.with_columns(
        [pl.when(hide).then(None).otherwise(pl.col(c)).alias(c) for c in _COMPARISON_COLUMNS if c in out.columns]
    )
    return out.select(report.columns)
