"""The terminal summary of a report: verdicts, rates and disparities per attribute and period.

Plain text that fits 100 columns. It judges nothing: every mark is the report's ``status`` column
(the rule of :mod:`polfair.core.report.status`); a report computed without thresholds has no status, so
the summary shows values and intervals without marks and says how to ask for a verdict
(``thresholds="four_fifths"``), as the HTML page, :func:`polfair.alerts` and ``--fail-on-violation``
do (``docs/status.md``). Bounded: an attribute with more than ``max_groups`` groups shows its
worst groups (by status, then by how far the headline disparity is from no difference) and counts
the rest, and a report with ``by`` periods shows the worst periods first, each labelled, and
counts the rest. It reads the report, or its batches one at a time (:func:`summarize` of
:func:`polfair.fairness_report_batches`), into the rows of the groups it shows and one small row
of statistics per group, so the length never grows with the groups or periods and the memory
holds no more than one batch beside them.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import polars as pl

from polfair.core.docstrings import with_setup
from polfair.core.options import check_present
from polfair.core.proba import estimated_note
from polfair.core.report.run_metadata import request_of
from polfair.core.report.status import is_ratio_metric
from polfair.core.schema import by_columns
from polfair.exceptions import PolfairError

__all__ = ["MARKS", "NOT_JUDGED", "favorable_statement", "interval_text", "summarize", "text_table", "violation_lines"]

#: Page width of the summary (characters).
WIDTH = 100

#: The mark printed after a judged value: the report's ``status``, in one character.
MARKS = {"violation": "!", "inconclusive": "?", "insufficient_data": "~", "ok": ""}
#: One sentence explaining the marks (the page has the same one).
MARKS_LEGEND = (
    "Marks (the report's status): ! violation = the value and its whole confidence interval lie\n"
    "outside the band; ? inconclusive = the value is outside the band but its interval reaches into it;\n"
    "~ insufficient data = the group or its reference is below min_sample_size, or the value is\n"
    "undefined; no mark = ok."
)
#: The legend of a report without thresholds: nothing is judged, and how to ask for a verdict.
NOT_JUDGED = (
    "Not judged: the report has no thresholds, so no value is marked (docs/status.md). For the common\n"
    "verdict, the four-fifths band [0.8, 1.25] on DI and the FPR/FNR ratios, pass\n"
    "thresholds='four_fifths' (polfair report --thresholds four_fifths), or your own bands or a --config."
)
_SEVERITY = {"violation": 3, "inconclusive": 2, "insufficient_data": 1, "ok": 0}

#: Rate columns of the group table: metric -> short column title.
_SUMMARY_METRICS = {
    "base_rate": "base", "selection_rate": "sel", "false_positive_rate": "FPR", "false_negative_rate": "FNR",
    "positive_predictive_value": "PPV", "accuracy": "acc",
}  # fmt: skip
#: Disparity columns: metric -> short title.
_DISPARITY_METRICS = {
    "disparate_impact": "DI",
    "statistical_parity_difference": "SPD",
    "false_positive_rate_ratio": "FPR ratio",
    "equal_opportunity_difference": "EOD",
    "average_odds_difference": "AOD",
    "false_negative_rate_ratio": "FNR ratio",
}
_LEGEND = (
    "DI = sel / sel_ref (disparate impact); SPD = sel - sel_ref; FPR ratio = FPR / FPR_ref;\n"
    "EOD = TPR - TPR_ref; AOD = mean of the FPR and TPR differences; FNR ratio = FNR / FNR_ref.\n"
    "Favorable outcome: {favorable}. DI, SPD, EOD, AOD or FPR ratio below no difference, or FNR ratio "
    "above it, puts the group on the disadvantaged side (the report's harm column)."
)


def favorable_statement(request: Mapping[str, Any] | None, meaning: str | None = None) -> str | None:
    """What the favorable outcome is, from a report's request: ``"y = 0"`` (the label column and the
    ``favorable`` value(s)), with the user's ``meaning`` in parentheses; ``None`` without a label.

    Examples
    --------
    >>> favorable_statement({"y_true": "Risk", "favorable": ["good"]})
    'Risk = good'
    >>> favorable_statement({"y_true": "y", "favorable": [0, 2]}, "no default")
    'y in (0, 2) (no default)'
    """
    req = request or {}
    fav = req.get("favorable")
    if fav is None:
        return None
    values = list(fav) if isinstance(fav, (list, tuple)) else [fav]
    label = req.get("y_true")
    shown = str(values[0]) if len(values) == 1 else f"({', '.join(map(str, values))})"
    text = (f"{label} {'=' if len(values) == 1 else 'in'} {shown}" if label else f"label {shown}")
    return f"{text} ({meaning.rstrip('. ')})" if meaning else text
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


def _cell(value: Any, lo: Any, hi: Any, status: Any, digits: int) -> str:
    """``2.20 [0.98, 3.61]?``: the value, its interval when known, the mark of its status."""
    text = _num(value, digits)
    if value is not None and lo is not None:
        text += " " + _interval(lo, hi, digits)
    return text + MARKS.get(status or "", "")


def interval_text(lo: Any, hi: Any, digits: int) -> str:
    """``[lo, hi]``; ``[lo, inf)`` when the upper limit is unbounded (null with a lower limit: EDF's
    projection), as the page writes it (``polfair.outputs.html._view.bounded``); every terminal
    output (the report's, the ranking report's) writes intervals with it.

    Examples
    --------
    >>> interval_text(0.005949, None, 6), interval_text(0.1, 0.2, 3)
    ('[0.005949, inf)', '[0.100, 0.200]')
    """
    return f"[{_num(lo, digits)}, inf)" if hi is None else f"[{_num(lo, digits)}, {_num(hi, digits)}]"


_interval = interval_text


def _label(v: Any) -> str:
    s = "null" if v is None else str(v)
    return s if len(s) <= _MAX_LABEL else s[: _MAX_LABEL - 1] + "~"


def text_table(header: list[str], rows: list[list[str]], width: int = WIDTH, left: int = 1) -> list[str]:
    r"""A plain-text table sized to its cells: the first ``left`` columns left-aligned, the others
    right-aligned; split into several tables (the first column repeated) above ``width`` characters,
    so no number is cut.

    Examples
    --------
    >>> print("\n".join(text_table(["group", "mean y"], [["a", "123456.78"], ["bb", "1.00"]])))
    group     mean y
    -----  ---------
    a      123456.78
    bb          1.00
    """
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
            return "  ".join([r[0].ljust(widths[0]),
                              *(r[i].ljust(widths[i]) if i < left else r[i].rjust(widths[i]) for i in cols)]).rstrip()

        out.append(line(header))
        out.append(line(["-" * w for w in widths]))
        out.extend(line(r) for r in rows)
    return out


def _severity(col: str = "status") -> pl.Expr:
    return pl.col(col).replace_strict(_SEVERITY, default=-1, return_dtype=pl.Int8)


def _extremeness() -> pl.Expr:
    """How far a disparity is from no difference (|log ratio| or |difference|)."""
    v = pl.col("value")
    ratio = pl.col("metric").is_in([m for m in _DISPARITY_METRICS if is_ratio_metric(m)])
    far = pl.when(ratio).then(pl.when(v > 0).then(v.log().abs()).otherwise(pl.lit(50.0))).otherwise(v.abs())
    return far.fill_nan(None).fill_null(-1.0)


#: Per (by, attribute, group): the ranking keys of :func:`_ranked` and the status counts of its judged rows.
_STATS_COLUMNS = ("__order", "__n", "__ref", "__sev", "__far", "violation", "inconclusive", "insufficient_data", "ok")


def _group_stats(groups: pl.DataFrame, part: list[str], offset: int) -> pl.DataFrame:
    """One row per (``part``, group) of a batch: where it first appears (``offset`` + row), its ``n``,
    whether it is the reference, its worst status and largest distance from no difference on the
    headline disparities, and the counts of each status of its judged rows (not the reference's own).
    """
    keys = [*part, "group"]
    disp = pl.col("metric").is_in(list(_DISPARITY_METRICS))
    judged = disp & (pl.col("group") != pl.col("reference_group").fill_null(""))
    return (
        groups.with_row_index("__row", offset)
        .group_by(keys, maintain_order=True)
        .agg(pl.col("__row").min().cast(pl.Int64).alias("__order"), pl.col("n").first().alias("__n"),
             (pl.col("group") == pl.col("reference_group")).filter(disp).any().alias("__ref"),
             _severity().filter(disp).max().alias("__sev"), _extremeness().filter(disp).max().alias("__far"),
             *[(judged & (pl.col("status") == s)).sum().cast(pl.Int64).alias(s)
               for s in ("violation", "inconclusive", "insufficient_data", "ok")])
    )  # fmt: skip


def _ranked(stats: pl.DataFrame, part: list[str]) -> pl.DataFrame:
    """``stats`` with ``__rank`` within each ``part``: the reference first, then the worst status, the
    largest distance from no difference, the largest ``n``, the first in the report.
    """
    order = [pl.col("__ref").fill_null(False), pl.col("__sev").fill_null(-1), pl.col("__far").fill_null(-1.0),
             pl.col("__n").fill_null(-1), pl.col("__order")]  # fmt: skip
    return stats.sort([*part, *order], descending=[False] * len(part) + [True, True, True, True, False],
                      nulls_last=True, maintain_order=True).with_columns(
        pl.int_range(pl.len()).over(part).alias("__rank"))  # (part holds "attribute": never empty)


class _Digest:
    """What the summary reads of a report, folded over its batches with bounded memory.

    The rows of at most ``max_groups`` groups per (period, attribute) (the candidates: a batch's own
    best, narrowed to the report's best at the end), the population rows, and one small row of
    statistics per group (:func:`_group_stats`), so the summary of a report of millions of rows holds
    a few thousand of them (:func:`fairness_report_batches` ends each batch with a group's rows).
    """

    def __init__(self, attributes: Sequence[str] | None, max_groups: int) -> None:
        self.attributes, self.max_groups = attributes, max_groups
        self.height, self.attrs = 0, [] if attributes is None else list(attributes)
        self.present: set[str] = set()
        self.seen: list[str] = []  # every attribute set of the report (a typo'd attributes= names the close one)
        self.rows: list[pl.DataFrame] = []
        self.stats: list[pl.DataFrame] = []
        self.population: list[pl.DataFrame] = []
        self.columns: list[str] | None = None
        self.request: dict[str, Any] | None = None

    def add(self, batch: pl.DataFrame) -> None:
        if self.columns is None:
            self.columns, self.request = batch.columns, request_of(batch)
        rep = _normalised(batch)
        by = by_columns(batch.columns)
        part = [*by, "attribute"]
        seen = rep["attribute"].unique(maintain_order=True).drop_nulls().to_list()
        self.seen += [a for a in seen if a not in self.seen]
        if self.attributes is None:
            self.attrs += [a for a in seen if " & " not in a and a not in self.attrs]
        self.present |= set(rep["metric"].unique().to_list())
        single = ~pl.col("attribute").str.contains(" & ", literal=True) if self.attributes is None else (
            pl.col("attribute").is_in(list(self.attributes)))  # fmt: skip
        groups = rep.filter(pl.col("group").is_not_null(), single)
        stats = _group_stats(groups, part, self.height)
        best = _ranked(stats, part).filter(pl.col("__rank") < self.max_groups).select(*part, "group")
        self.rows.append(groups.join(best, on=[*part, "group"], how="semi", nulls_equal=True))
        self.stats.append(stats)
        self.population.append(rep.filter(pl.col("attribute").is_null(), pl.col("metric").is_in(_POPULATION)))
        self.height += batch.height

    def finish(self) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
        """(rows of the shown groups, statistics of every group with ``__rank``, population rows)."""
        by = by_columns(self.columns or [])
        part = [*by, "attribute"]
        stats = pl.concat(self.stats, how="vertical_relaxed")
        if len(self.stats) > 1:  # a group split over batches: its statistics summed (rank keys: min/max/first)
            stats = stats.group_by([*part, "group"], maintain_order=True).agg(
                pl.col("__order").min(), pl.col("__n").first(), pl.col("__ref").any(), pl.col("__sev").max(),
                pl.col("__far").max(), *[pl.col(s).sum() for s in ("violation", "inconclusive", "insufficient_data", "ok")])  # fmt: skip
        stats = _ranked(stats, part).with_columns((pl.col("__rank") < self.max_groups).alias("__shown"))
        shown = stats.filter("__shown").select(*part, "group")
        rows = pl.concat(self.rows, how="vertical_relaxed").join(shown, on=[*part, "group"], how="semi", nulls_equal=True)
        return rows, stats, pl.concat(self.population, how="vertical_relaxed")


def _normalised(report: pl.DataFrame) -> pl.DataFrame:
    """The report with String attribute/metric/reference columns and (null) status and interval columns."""
    rep = report if "status" in report.columns else report.with_columns(pl.lit(None, pl.String).alias("status"))
    rep = rep.with_columns(pl.col("attribute", "metric", "reference_group").cast(pl.String))
    if not ("value_lo" in rep.columns and "value_hi" in rep.columns):
        rep = rep.with_columns(pl.lit(None, pl.Float64).alias("value_lo"), pl.lit(None, pl.Float64).alias("value_hi"))
    return rep


def _status_counts(stats: pl.DataFrame) -> dict[str, int]:
    """Status -> rows, summed over the groups of ``stats`` (:func:`_group_stats`)."""
    sums = stats.select(pl.col("violation", "inconclusive", "insufficient_data", "ok").sum())
    return {k: int(v) for k, v in sums.row(0, named=True).items() if v}


def _counts_text(counts: dict[str, int] | None) -> str:
    if counts is None:
        return "not judged (no thresholds)"
    parts = [f"{s.replace('_', ' ')} {counts[s]}" for s in ("violation", "inconclusive", "insufficient_data", "ok")
             if counts.get(s)]  # fmt: skip
    return ", ".join(parts) if parts else "nothing judged"


def _attribute_block(sub: pl.DataFrame, stats: pl.DataFrame, a: str, present: set[str], with_rates: bool,
                     is_judged: bool = True, limited: bool = False) -> list[str]:  # fmt: skip
    """The tables of one attribute set (of one period): groups' rates, then marked disparities.

    ``sub``: the rows of the shown groups; ``stats``: every group's row of :func:`_group_stats`.
    """
    lines: list[str] = []
    keep = stats.filter("__shown").sort("__order")["group"].to_list()
    total = stats.height
    ref = sub["reference_group"].drop_nulls()
    ref_label = str(ref[0]) if len(ref) else "-"
    shown = sub.filter(pl.col("group").is_in(keep))
    values = {(r["group"], r["metric"]): r for r in shown.iter_rows(named=True)}
    verdict = _counts_text(_status_counts(stats) if is_judged else None)
    if with_rates:
        rates = [m for m in _SUMMARY_METRICS if m in present]
        lines.append(f"\n== {a}: groups (n = rows; rates are fractions; reference group: {_label(ref_label)})")
        rows = []
        for g in keep:
            n = next((values[(g, m)]["n"] for m in rates if (g, m) in values), None)
            rows.append([_label(g), "-" if n is None else str(n),
                         *(_num(values.get((g, m), {}).get("value"), 3) for m in rates)])  # fmt: skip
        lines.extend(text_table(["group", "n", *(_SUMMARY_METRICS[m] for m in rates)], rows))
    disp = [m for m in _DISPARITY_METRICS if m in present]
    if disp:
        head = f"-- {a}: disparities vs the reference group {_label(ref_label)}" if with_rates else (
            f"-- {a} (reference {_label(ref_label)})")  # fmt: skip
        lines.append(head)
        lines.append(f"   verdict: {verdict}")
        rows = []
        for g in keep:
            row = [_label(g)]
            for m in disp:
                r = values.get((g, m), {})
                row.append(_cell(r.get("value"), r.get("value_lo"), r.get("value_hi"), r.get("status"), 2))
            rows.append(row)
        lines.extend(text_table(["group", *(_DISPARITY_METRICS[m] for m in disp)], rows))
    if total > len(keep):
        hidden = _counts_text(_status_counts(stats.filter(~pl.col("__shown"))) if is_judged else None)
        lines.append(f"... and {total - len(keep):,} more groups ({hidden} on these disparities);")
        lines.append("    every group the report kept is in --out / --html" if limited else "    every group is in --out / --html")
    return lines


def _period_label(keys: Sequence[str], values: Sequence[Any]) -> str:
    return ", ".join(f"{k} = {v}" for k, v in zip(keys, values))


@with_setup
def summarize(
    report: pl.DataFrame | Iterable[pl.DataFrame],
    *,
    attributes: Sequence[str] | None = None,
    max_groups: int = 12,
    max_periods: int = 6,
) -> str:
    """A readable text summary of a report, at most 100 characters wide, bounded in length.

    Parameters
    ----------
    report
        A long report from :func:`polfair.fairness_report`, with or without ``by`` columns,
        interval columns (``ci=``) and ``status`` (thresholds); or its batches
        (:func:`polfair.fairness_report_batches`, any iterable of report frames in report order,
        each ending with a group's rows), read one at a time: the summary then holds the rows of
        the groups it shows and one small row per group, never the whole report (the CLI's summary
        of a column of 260,000 groups).
    attributes
        Attribute sets to show (default: every single attribute).
    max_groups
        Groups shown per attribute set (default 12): the reference, then the worst by status and
        by the distance of the headline disparities from no difference; the rest are counted.
    max_periods
        With ``by`` columns, periods shown (default 6): the worst first (most violations, then
        inconclusive rows, then the latest); the rest are counted in one line each.

    Returns
    -------
    str
        Plain text, no line longer than 100 characters. Per attribute set: a table of groups with
        ``n`` and rates (``base`` = base rate, ``sel`` = selection rate, ``FPR``, ``FNR``, ``PPV``,
        ``acc`` = accuracy; fractions, 3 decimals), then the headline disparities against the
        reference group (``DI``, ``SPD``, ``FPR ratio``, ``EOD``, ``AOD``, ``FNR ratio``; 2
        decimals, ``value [lo, hi]`` with intervals), each followed by the mark of the row's
        ``status`` (:data:`MARKS`: ``!`` violation, ``?`` inconclusive, ``~`` insufficient data),
        and the count of statuses. With ``by``, one compact verdict table per shown period,
        labelled with its period, after a line per period counting its statuses. Then the
        population-level indices (without ``by``), the legend and the number of report rows.

    Examples
    --------
    {{toy_report}}
    >>> text = summarize(rep)
    >>> "sel" in text and max(len(line) for line in text.splitlines()) <= 100
    True
    """
    digest = _Digest(attributes, max_groups)
    for batch in [report] if isinstance(report, pl.DataFrame) else report:
        digest.add(batch)
    if digest.columns is None:
        msg = "summarize: the iterable of report batches was empty"
        raise PolfairError(msg)
    check_present("summarize", "attributes", attributes, digest.seen)
    rows, stats, pop = digest.finish()
    is_judged = "status" in digest.columns
    by = by_columns(digest.columns)
    has_ci = "value_lo" in digest.columns and "value_hi" in digest.columns
    attrs, present = digest.attrs, digest.present
    lines: list[str] = []
    note = estimated_note((digest.request or {}).get("protected_proba"))
    if note:  # groups estimated from proxies (protected_proba): say so first
        lines.extend(textwrap.wrap(f"Note: {note}", WIDTH))
    limited = {" & ".join(x["attributes"]): x for x in (digest.request or {}).get("groups_limited") or []}
    for a, x in limited.items():  # high-cardinality sets: the report kept their worst groups' rows (said once)
        lines.extend(textwrap.wrap(
            f"Note: {a} has {x['groups']:,} groups; the report keeps the rows of its {x['shown']:,} worst by the "
            "interval rule and of the reference (max_groups_per_attribute, worst_k): the tables below show those "
            "groups only; its spreads, tests and indices cover every group.", WIDTH))  # fmt: skip
    if not by:
        for a in attrs:
            st = stats.filter(pl.col("attribute") == a)
            if st.height:
                sub = rows.filter(pl.col("attribute") == a)
                lines.extend(_attribute_block(sub, st, a, present, with_rates=True, is_judged=is_judged,
                                              limited=a in limited))  # fmt: skip
    else:
        lines.extend(_periods(rows, stats, by, attrs, present, max_periods, is_judged))
    if attrs:
        lines.append("")
        favorable = favorable_statement(digest.request) or "the favorable label"
        head, rest = _LEGEND.format(favorable=favorable).rsplit("\n", 1)
        lines.extend([*head.splitlines(), *textwrap.wrap(rest, WIDTH)])
        if has_ci:
            lines.append("[lo, hi] = confidence interval of the value; [lo, inf) = no upper limit (docs/statistics.md).")
        else:
            lines.append("Intervals: fairness_report(..., ci=0.95) or polfair report --ci 0.95.")
        if is_judged:
            lines.extend(MARKS_LEGEND.splitlines())
        else:
            lines.extend(NOT_JUDGED.splitlines())
    if pop.height and not by:
        lines.append("\n== whole population: entropy indices and differential fairness (all attributes jointly)")
        width = max(len(m) for m in pop["metric"].to_list())
        for r in pop.iter_rows(named=True):
            lines.append(f"{r['metric'].ljust(width)}  {_cell(r['value'], r['value_lo'], r['value_hi'], None, 4)}")
    lines.append(f"\n{digest.height:,} report rows; write them all with --out report.parquet")
    return "\n".join(lines)


def _periods(
    rows: pl.DataFrame, stats: pl.DataFrame, by: list[str], attrs: list[str], present: set[str], max_periods: int,
    is_judged: bool = True,
) -> list[str]:
    """Per period: a line of status counts (worst first), then the shown periods' verdict tables."""
    counts = stats.group_by(by).agg(
        pl.col("violation").sum().alias("v"), pl.col("inconclusive").sum().alias("i"), pl.col("ok").sum().alias("o"),
        pl.col("insufficient_data").sum().alias("s"))  # fmt: skip
    latest = counts.sort(by, descending=True, nulls_last=True).with_row_index("__recent")
    worst = latest.sort(["v", "i", "__recent"], descending=[True, True, False])
    n = worst.height
    shown = worst.head(max_periods)
    if not is_judged:  # no thresholds: no counts to rank by; the latest periods first
        worst = latest
        shown = worst.head(max_periods)
        lines = [f"\n== {n} periods ({', '.join(by)}), latest first: not judged (no thresholds)"]
    else:
        lines = [f"\n== {n} periods ({', '.join(by)}), worst first: violations / inconclusive / ok / insufficient data"]
        for r in worst.head(max(max_periods, 10)).iter_rows(named=True):
            label = _period_label(by, [r[k] for k in by])
            lines.append(f"  {label}: {r['v']} / {r['i']} / {r['o']} / {r['s']}")
    if is_judged and n > max(max_periods, 10):
        rest = worst.slice(max(max_periods, 10))
        lines.append(f"  ... and {rest.height:,} more periods: {int((rest['v'] > 0).sum())} with violations, "
                     f"{int(((rest['v'] == 0) & (rest['i'] > 0)).sum())} with inconclusive rows only")  # fmt: skip
    for r in shown.iter_rows(named=True):
        label = _period_label(by, [r[k] for k in by])
        cond = [pl.col(k).is_null() if r[k] is None else pl.col(k) == r[k] for k in by]
        sub_all, st_all = rows.filter(*cond), stats.filter(*cond)
        lines.append(f"\n== period {label}")
        for a in attrs:
            st = st_all.filter(pl.col("attribute") == a)
            if st.height:
                sub = sub_all.filter(pl.col("attribute") == a)
                lines.extend(_attribute_block(sub, st, a, present, with_rates=False, is_judged=is_judged))
    if n > shown.height:
        lines.append(f"\n({n - shown.height:,} more periods not shown as tables; counts above; --html shows all)")
    return lines


def violation_lines(report: pl.DataFrame, *, limit: int = 50, statuses: Sequence[str] = ("violation",)) -> list[str]:
    """One line per judged row with one of ``statuses``: period, attribute, group, metric, value [interval], band.

    The on-call view of :func:`polfair.monitor.alerts`: every field on one line (no table that a
    narrow terminal cuts), worst first within each period, latest period first, at most ``limit``
    lines and a count of the rest.

    Parameters
    ----------
    report
        A report with a ``status`` column.
    limit
        Lines at most (default 50).
    statuses
        Statuses listed (default violations only).

    Returns
    -------
    list of str
        E.g. ``"date = 2026-05-01  race = Other  false_negative_rate_ratio 1.92 [1.71, 2.17]  band [0.8,
        1.25]  violation (group disadvantaged)"``.

    Examples
    --------
    >>> import polars as pl
    >>> rep = pl.DataFrame({"attribute": ["race"], "group": ["Other"], "metric": ["disparate_impact"],
    ...                     "value": [0.62], "value_lo": [0.49], "value_hi": [0.76], "threshold": ["[0.8, 1.25]"],
    ...                     "status": ["violation"], "harm": ["group"]})
    >>> violation_lines(rep)
    ['race = Other  disparate_impact 0.62 [0.49, 0.76]  band [0.8, 1.25]  violation (group disadvantaged)']
    """
    if "status" not in report.columns:
        return []
    by = by_columns(report.columns)
    rows = report.filter(pl.col("status").is_in(list(statuses)))
    total = rows.height
    if by:
        rows = rows.sort(by, descending=True, nulls_last=True)
    rows = rows.head(limit)
    out = []
    for r in rows.iter_rows(named=True):
        metric = str(r["metric"])
        digits = 2 if is_ratio_metric(metric) or abs(r["value"] or 0) >= 0.1 else 3
        text = f"{r['attribute']} = {r['group']}" if r["group"] is not None else f"{r['attribute']} (all groups)"
        text += f"  {metric} {_num(r['value'], digits)}"
        if r.get("value_lo") is not None:
            text += " " + _interval(r["value_lo"], r.get("value_hi"), digits)
        text += f"  band {r.get('threshold')}  {r['status']}"
        if r.get("harm") in ("group", "reference"):
            text += f" ({r['harm']} disadvantaged)"
        if by:
            text = _period_label(by, [r[k] for k in by]) + "  " + text
        out.append(text)
    if total > limit:
        out.append(f"... and {total - limit:,} more; every row is in --out (status column)")
    return out
