"""The terminal summary of a report: group rates and disparities per attribute, population indices."""

from __future__ import annotations

from typing import Sequence

import polars as pl

__all__ = ["summarize"]

_SUMMARY_METRICS = (
    "base_rate", "selection_rate", "false_positive_rate", "false_negative_rate",
    "positive_predictive_value", "accuracy",
)  # fmt: skip
_DISPARITY_METRICS = (
    "statistical_parity_difference", "disparate_impact", "equal_opportunity_difference",
    "average_odds_difference", "false_positive_rate_ratio", "false_negative_rate_ratio",
)  # fmt: skip


def summarize(report: pl.DataFrame, *, attributes: Sequence[str] | None = None) -> str:
    """A readable text summary of a report: group rates and disparities per single attribute.

    Parameters
    ----------
    report
        A report from :func:`polfair.fairness_report` (without ``by`` columns).
    attributes
        Attribute sets to show (default: every single attribute).

    Returns
    -------
    str
        Plain text with one table of rates and one of disparities per attribute set, then the
        population-level entropy and differential-fairness values.

    Examples
    --------
    >>> import polars as pl
    >>> import polfair as pf
    >>> df = pl.DataFrame({"y": [1, 0, 1, 0], "p": [1, 0, 0, 0], "g": ["a", "a", "b", "b"]})
    >>> "selection_rate" in summarize(pf.fairness_report(df, y_true="y", y_pred="p", protected="g"))
    True
    """
    lines: list[str] = []
    attrs = list(attributes) if attributes else [
        a for a in report["attribute"].unique(maintain_order=True).drop_nulls() if " & " not in a
    ]
    groups = report.filter(pl.col("group").is_not_null())
    present = set(report["metric"].unique())
    with pl.Config(tbl_rows=100, tbl_cols=20, tbl_width_chars=200, float_precision=4, fmt_str_lengths=60,
                   tbl_hide_dataframe_shape=True, tbl_hide_column_data_types=True):  # fmt: skip
        for a in attrs:
            sub = groups.filter(pl.col("attribute") == a)
            rates = [m for m in _SUMMARY_METRICS if m in present]
            wide = sub.filter(pl.col("metric").is_in(rates)).pivot(
                on="metric", index=["group", "n"], values="value"
            )
            ref = sub["reference_group"].drop_nulls()
            lines.append(f"\n== {a}: group rates (reference group: {ref[0] if len(ref) else '-'})")
            lines.append(str(wide.select("group", "n", *[m for m in rates if m in wide.columns])))
            disp = [m for m in _DISPARITY_METRICS if m in present]
            if disp:
                dw = sub.filter(pl.col("metric").is_in(disp)).pivot(on="metric", index="group", values="value")
                lines.append(f"-- {a}: disparities vs the reference group (difference: group − ref; ratio: group / ref)")
                lines.append(str(dw.select("group", *[m for m in disp if m in dw.columns])))
        pop = report.filter(pl.col("attribute").is_null(), pl.col("metric").is_in([
            "generalized_entropy_index", "theil_index", "between_all_groups_theil_index",
            "smoothed_empirical_differential_fairness", "smoothed_empirical_differential_fairness_predictions",
            "differential_fairness_bias_amplification",
        ]))  # fmt: skip
        lines.append("\n== whole population: entropy indices and differential fairness (all attributes jointly)")
        lines.append(str(pop.select("metric", "value")))
    lines.append(f"\n{report.height} report rows; write them all with --out report.parquet")
    return "\n".join(lines)
