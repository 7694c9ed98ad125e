"""The terminal summary of a report: group rates and disparities per attribute, population indices.

Plain text that fits 100 columns: per attribute, one table of group sizes and rates and one of the
headline disparities against the reference group, with confidence intervals (``2.20 [0.98, 3.61]``)
when the report has them (``fairness_report(ci=0.95)``) and a ``?`` mark on groups whose interval
includes "no difference" (the data cannot tell); tables wider than the page are split.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import polars as pl

__all__ = ["summarize"]

#: Page width of the summary (characters).
WIDTH = 100

#: Rate columns of the group table: metric -> short column title.
_SUMMARY_METRICS = {
    "base_rate": "base", "selection_rate": "sel", "false_positive_rate": "FPR", "false_negative_rate": "FNR",
    "positive_predictive_value": "PPV", "accuracy": "acc",
}  # fmt: skip
#: Disparity columns: metric -> (short title, value meaning "no difference").
_DISPARITY_METRICS = {
    "disparate_impact": ("DI", 1.0),
    "statistical_parity_difference": ("SPD", 0.0),
    "false_positive_rate_ratio": ("FPR ratio", 1.0),
    "equal_opportunity_difference": ("EOD", 0.0),
    "average_odds_difference": ("AOD", 0.0),
    "false_negative_rate_ratio": ("FNR ratio", 1.0),
}
_LEGEND = (
    "DI = sel / sel_ref (disparate impact); SPD = sel - sel_ref; FPR ratio = FPR / FPR_ref;\n"
    "EOD = TPR - TPR_ref; AOD = mean of the FPR and TPR differences; FNR ratio = FNR / FNR_ref."
)
_POPULATION = (
    "generalized_entropy_index", "theil_index", "between_all_groups_theil_index",
    "smoothed_empirical_differential_fairness", "smoothed_empirical_differential_fairness_predictions",
    "differential_fairness_bias_amplification",
)  # fmt: skip
_MAX_LABEL = 24


def _num(v: Any, digits: int) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    return f"{v:.{digits}f}"


def _cell(value: Any, lo: Any, hi: Any, null_value: float | None, digits: int) -> str:
    """``2.20 [0.98, 3.61]?``: the value, its interval when known, ``?`` when it holds ``null_value``."""
    text = _num(value, digits)
    if value is None or lo is None or hi is None:
        return text
    mark = "?" if null_value is not None and lo <= null_value <= hi else ""
    return f"{text} [{_num(lo, digits)}, {_num(hi, digits)}]{mark}"


def _label(v: Any) -> str:
    s = "null" if v is None else str(v)
    return s if len(s) <= _MAX_LABEL else s[: _MAX_LABEL - 1] + "~"


def _table(header: list[str], rows: list[list[str]], width: int = WIDTH) -> list[str]:
    """Left-aligned first column, right-aligned others; split into several tables above ``width``."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    chunks: list[list[int]] = [[]]
    used = widths[0]
    for i in range(1, len(header)):
        if chunks[-1] and used + 2 + widths[i] > width:
            chunks.append([])
            used = widths[0]
        chunks[-1].append(i)
        used += 2 + widths[i]
    out: list[str] = []
    for cols in chunks:
        def line(r: list[str], cols: list[int] = cols) -> str:
            return "  ".join([r[0].ljust(widths[0]), *(r[i].rjust(widths[i]) for i in cols)]).rstrip()

        out.append(line(header))
        out.append(line(["-" * w for w in widths]))
        out.extend(line(r) for r in rows)
    return out


def summarize(report: pl.DataFrame, *, attributes: Sequence[str] | None = None) -> str:
    """A readable text summary of a report, at most 100 characters wide.

    Parameters
    ----------
    report
        A long report from :func:`polfair.fairness_report` (without ``by`` columns), with or
        without interval columns (``ci=``).
    attributes
        Attribute sets to show (default: every single attribute).

    Returns
    -------
    str
        Plain text, no line longer than 100 characters. Per attribute set: a table of groups with
        ``n`` and rates (``base`` = base rate, ``sel`` = selection rate, ``FPR``, ``FNR``, ``PPV``,
        ``acc`` = accuracy; fractions, 3 decimals), then a table of the headline disparities
        against the reference group (``DI``, ``SPD``, ``FPR ratio``, ``EOD``, ``AOD``, ``FNR ratio``; 2 decimals). When
        the report has intervals (``value_lo``/``value_hi``), each disparity reads
        ``value [lo, hi]`` and ends with ``?`` when the interval includes the no-difference value
        (1 for ratios, 0 for differences): the data cannot tell that group from the reference.
        Then the population-level entropy and differential-fairness values, and the number of
        report rows. Tables wider than the page are split into several (the group column repeats).

    Examples
    --------
    >>> import polars as pl
    >>> import polfair as pf
    >>> df = pl.DataFrame({"y": [1, 0, 1, 0], "p": [1, 0, 0, 0], "g": ["a", "a", "b", "b"]})
    >>> text = summarize(pf.fairness_report(df, y_true="y", y_pred="p", protected="g"))
    >>> "sel" in text and max(len(line) for line in text.splitlines()) <= 100
    True
    """
    lines: list[str] = []
    attrs = list(attributes) if attributes else [
        a for a in report["attribute"].cast(pl.String).unique(maintain_order=True).drop_nulls() if " & " not in a
    ]  # fmt: skip
    has_ci = "value_lo" in report.columns and "value_hi" in report.columns
    rep = report.with_columns(pl.col("attribute", "metric").cast(pl.String))
    if not has_ci:
        rep = rep.with_columns(pl.lit(None, pl.Float64).alias("value_lo"), pl.lit(None, pl.Float64).alias("value_hi"))
    groups = rep.filter(pl.col("group").is_not_null())
    present = set(rep["metric"].unique().to_list())
    for a in attrs:
        sub = groups.filter(pl.col("attribute") == a)
        if sub.height == 0:
            continue
        labels = sub["group"].unique(maintain_order=True).to_list()
        ref = sub["reference_group"].drop_nulls().cast(pl.String)
        ref_label = ref[0] if len(ref) else "-"
        values = {(r["group"], r["metric"]): r for r in sub.iter_rows(named=True)}
        rates = [m for m in _SUMMARY_METRICS if m in present]
        lines.append(f"\n== {a}: groups (n = rows; rates are fractions; reference group: {_label(ref_label)})")
        rows = []
        for g in labels:
            n = next((values[(g, m)]["n"] for m in rates if (g, m) in values), None)
            rows.append([_label(g), "-" if n is None else str(n),
                         *(_num(values.get((g, m), {}).get("value"), 3) for m in rates)])  # fmt: skip
        lines.extend(_table(["group", "n", *(_SUMMARY_METRICS[m] for m in rates)], rows))
        disp = [m for m in _DISPARITY_METRICS if m in present]
        if disp:
            lines.append(f"-- {a}: disparities vs the reference group {_label(ref_label)}")
            rows = []
            for g in labels:
                row = [_label(g)]
                for m in disp:
                    r = values.get((g, m), {})
                    row.append(_cell(r.get("value"), r.get("value_lo"), r.get("value_hi"), _DISPARITY_METRICS[m][1], 2))
                rows.append(row)
            lines.extend(_table(["group", *(_DISPARITY_METRICS[m][0] for m in disp)], rows))
    if attrs:
        lines.append("")
        lines.extend(_LEGEND.splitlines())
        if has_ci:
            lines.append("[lo, hi] = confidence interval (docs/statistics.md); ? = it includes no difference")
            lines.append("(1 for ratios, 0 for differences): too uncertain to conclude for that group.")
        else:
            lines.append("Intervals: fairness_report(..., ci=0.95) or polfair report --ci 0.95.")
    pop = rep.filter(pl.col("attribute").is_null(), pl.col("metric").is_in(_POPULATION))
    if pop.height:
        lines.append("\n== whole population: entropy indices and differential fairness (all attributes jointly)")
        width = max(len(m) for m in pop["metric"].to_list())
        for r in pop.iter_rows(named=True):
            lines.append(f"{r['metric'].ljust(width)}  {_cell(r['value'], r['value_lo'], r['value_hi'], None, 4)}")
    lines.append(f"\n{report.height} report rows; write them all with --out report.parquet")
    return "\n".join(lines)
