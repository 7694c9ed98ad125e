"""``pf.summarize``: the terminal summary of any polfair report, chosen by the report's kind.

A small registry (:data:`SUMMARIES`): each entry names a report kind, tells it from the report's
columns and metric names, and summarises it. :func:`summarize` takes the first entry that
recognises the report; a report no entry recognises is a :class:`~polfair.exceptions.PolfairError`
naming the kinds it knows. A new report kind is one line: :func:`register_summary` (or one entry
in :data:`SUMMARIES`).

Kinds: ``"slices"`` (:func:`polfair.slice_scan`), ``"adverse_impact"`` (:func:`polfair.adverse_impact`), ``"regression"``
(:func:`polfair.regression_report`), ``"score"`` (:func:`polfair.score_report`) and
``"classification"`` (:func:`polfair.fairness_report`, :func:`polfair.report_from_counts`,
``FairnessAccumulator.compute``). Every summary is plain text at most 100 characters wide.
"""

from __future__ import annotations

import inspect
import itertools
import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from polfair.core.options import check_known, check_present
from polfair.exceptions import PolfairError
from polfair.outputs.ranking import is_ranking_report, summarize_ranking
from polfair.outputs.regression import summarize_regression
from polfair.outputs.slices import summarize_slices
from polfair.outputs.summary import summarize as summarize_classification
from polfair.outputs.summary import text_table

__all__ = [
    "SUMMARIES", "SummaryKind", "register_summary", "report_kind", "summarize", "summarize_adverse_impact",
    "summarize_scores",
]  # fmt: skip

#: Metric names of :func:`polfair.score_report` (``polfair.scores.SCORE_METRICS``; the outputs do
#: not import the scores room).
_SCORE_METRICS = ("roc_auc", "average_precision", "brier_score", "expected_calibration_error", "abroca")
_SCORE_SHORT = {"roc_auc": "AUC", "average_precision": "AP", "brier_score": "Brier",
                "expected_calibration_error": "ECE", "abroca": "ABROCA"}  # fmt: skip


@dataclass(frozen=True)
class SummaryKind:
    """One kind of report :func:`summarize` knows.

    Attributes
    ----------
    kind
        Its name (:func:`report_kind` returns it).
    detect
        ``detect(report) -> bool``: the report is of this kind (from its columns and metric names).
    summarize
        ``summarize(report, **options) -> str``.
    """

    kind: str
    detect: Callable[[pl.DataFrame], bool]
    summarize: Callable[..., str]


def _metrics(report: pl.DataFrame) -> set[str]:
    if "metric" not in report.columns:
        return set()
    return set(report.get_column("metric").cast(pl.String).unique().drop_nulls().to_list())


def _is_slices(report: pl.DataFrame) -> bool:
    from polfair.slices import is_slice_table

    return is_slice_table(report)


def _is_adverse_impact(report: pl.DataFrame) -> bool:
    return {"impact_ratio", "four_fifths_pass", "selection_rate"} <= set(report.columns)


def _is_regression(report: pl.DataFrame) -> bool:
    return "mean_error" in _metrics(report)


def _is_score_report(report: pl.DataFrame) -> bool:
    return "roc_auc" in _metrics(report)


def _is_classification(report: pl.DataFrame) -> bool:
    return {"attribute", "group", "metric", "value"} <= set(report.columns) and bool(
        {"selection_rate", "base_rate"} & _metrics(report)
    )


def _num(x: Any, digits: int) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "-"
    return f"{x:.{digits}f}"


def summarize_scores(report: pl.DataFrame, *, attributes: Sequence[str] | None = None, max_groups: int = 12) -> str:
    """A readable text summary of a score report (:func:`polfair.score_report`), at most 100 characters wide.

    Parameters
    ----------
    report
        The score report (with or without interval columns; with ``by`` columns, the last value).
    attributes
        Attribute sets to show (default: every single attribute).
    max_groups
        Groups shown per attribute set (the reference first, then the largest).

    Returns
    -------
    str
        The population's values, then per attribute set the groups' ``n``, ROC AUC and average
        precision with their intervals, Brier score, ECE and ABROCA against the reference group.

    Examples
    --------
    >>> import polfair as pf
    >>> rep = pf.score_report(pf.load_compas(), y_true="two_year_recid", y_score="decile_score", protected="sex")
    >>> "AUC" in summarize_scores(rep)
    True
    """
    by = [c for c in report.columns if c not in _SCORE_REPORT_COLUMNS]
    if by:
        last = report.select(by).unique().sort(by, nulls_last=True).row(-1, named=True)
        report = report.filter(*[pl.col(c).eq_missing(v) for c, v in last.items()])
    rep = report.with_columns(pl.col("attribute", "metric").cast(pl.String))
    has_ci = "value_lo" in rep.columns

    def cell(r: dict[str, Any] | None, digits: int = 3) -> str:
        if not r:
            return "-"
        text = _num(r.get("value"), digits)
        if has_ci and r.get("value_lo") is not None and r.get("value_hi") is not None:
            text += f" [{_num(r['value_lo'], digits)}, {_num(r['value_hi'], digits)}]"
        return text

    lines: list[str] = []
    if by:
        lines.append("shown: " + ", ".join(f"{c} = {v}" for c, v in last.items()))
    pop = {r["metric"]: r for r in rep.filter(pl.col("attribute").is_null()).iter_rows(named=True)}
    if pop:
        n = max(int(r["n"] or 0) for r in pop.values())
        lines.append(f"population: {n:,} rows; " + ", ".join(
            f"{_SCORE_SHORT[m]} {cell(pop.get(m))}" for m in _SCORE_METRICS[:4] if m in pop))  # fmt: skip
    sets = rep["attribute"].drop_nulls().unique(maintain_order=True).to_list()
    check_present("summarize", "attributes", attributes, sets)
    sets = [a for a in sets if " & " not in a] if attributes is None else [a for a in attributes if a in sets]
    for a in sets:
        part = rep.filter(pl.col("attribute") == a, pl.col("group").is_not_null())
        wide = {(r["group"], r["metric"]): r for r in part.iter_rows(named=True)}
        refs = part["reference_group"].drop_nulls().cast(pl.String)
        ref = refs[0] if refs.len() else None
        sizes = part.filter(metric="roc_auc").sort("n", descending=True)
        groups = sorted(sizes["group"].to_list(), key=lambda g: g != ref)
        shown, rest = groups[:max_groups], groups[max_groups:]
        rows = []
        for g in shown:
            size = wide.get((g, "roc_auc"), {}).get("n")
            rows.append([str(g), "-" if size is None else f"{int(size):,}", cell(wide.get((g, "roc_auc"))),
                         cell(wide.get((g, "average_precision"))), _num(wide.get((g, "brier_score"), {}).get("value"), 3),
                         _num(wide.get((g, "expected_calibration_error"), {}).get("value"), 3),
                         _num(wide.get((g, "abroca"), {}).get("value"), 3)])  # fmt: skip
        lines += ["", f"== {a}: score quality by group (reference group: {ref})"]
        lines += text_table(["group", "n", "AUC", "AP", "Brier", "ECE", "ABROCA"], rows)
        if rest:
            lines.append(f"... and {len(rest):,} more groups")
    lines += ["", "AUC = ROC AUC, AP = average precision (scikit-learn's), Brier and ECE need scores in [0, 1];",
              "ABROCA = area between the group's and the reference's ROC curves. [lo, hi]: confidence intervals."]
    return "\n".join(lines)


_SCORE_REPORT_COLUMNS = frozenset((
    "attribute", "group", "metric", "value", "reference_group", "difference", "n", "value_lo", "value_hi",
    "difference_lo", "difference_hi", "p_value", "p_value_adjusted", "n_eff", "ci_method", "test",
))  # fmt: skip


def summarize_adverse_impact(report: pl.DataFrame, *, max_groups: int = 30) -> str:
    """A readable text summary of an adverse-impact table (:func:`polfair.adverse_impact`).

    Parameters
    ----------
    report
        The table (any ``by`` columns come first in it).
    max_groups
        Rows shown per (``by`` value, attribute set).

    Returns
    -------
    str
        Per attribute set: group, candidates, selected, selection rate, impact ratio, the
        four-fifths result, the z test's p-value, Fisher's, the shortfall and why a group was
        excluded; lines at most 100 characters wide (wider tables are split).

    Examples
    --------
    >>> import polars as pl
    >>> import polfair as pf
    >>> t = pf.adverse_impact(pf.load_compas(), y_pred=pl.col("decile_score") < 5, favorable=True, protected="sex")
    >>> "impact" in summarize_adverse_impact(t)
    True
    """
    by = report.columns[: report.columns.index("attribute")]
    lines: list[str] = []
    keys = [*by, "attribute"]
    for key, part in report.group_by(keys, maintain_order=True):
        head = ", ".join(f"{k} = {v}" for k, v in zip(keys, key, strict=True))
        rows = []
        for r in part.head(max_groups).iter_rows(named=True):
            rows.append([str(r["group"]), f"{int(r['n']):,}", f"{int(r['selected']):,}", _num(r["selection_rate"], 3),
                         _num(r["impact_ratio"], 3),
                         ("~" if (r["excluded_reason"] or "").startswith("insufficient_data") else "-")
                         if r["four_fifths_pass"] is None else ("pass" if r["four_fifths_pass"] else "FAIL"),
                         _num(r["p_value"], 3), _num(r["fisher_p_value"], 3), _num(r["shortfall"], 1),
                         r["excluded_reason"] or ""])  # fmt: skip
        lines += ["", f"== {head}"]
        lines += text_table(["group", "n", "selected", "rate", "impact", "4/5", "p (z)", "p (Fisher)", "shortfall",
                             "excluded"], rows)  # fmt: skip
        if part.height > max_groups:
            lines.append(f"... and {part.height - max_groups:,} more groups")
    lines += ["", "impact = the group's selection rate / the highest compared group's; 4/5: the EEOC four-fifths",
              "rule (29 CFR 1607.4(D)); ~ = insufficient data (fewer candidates than min_sample_size: no",
              "verdict, no comparison); p (z): two-standard-deviation test; shortfall: expected minus",
              "actual selections."]
    return "\n".join(lines)


#: The registry: the first kind whose ``detect`` recognises a report summarises it.
SUMMARIES: list[SummaryKind] = [
    SummaryKind("slices", _is_slices, summarize_slices),
    SummaryKind("adverse_impact", _is_adverse_impact, summarize_adverse_impact),
    SummaryKind("ranking", is_ranking_report, summarize_ranking),
    SummaryKind("regression", _is_regression, summarize_regression),
    SummaryKind("score", _is_score_report, summarize_scores),
    SummaryKind("classification", _is_classification, summarize_classification),
]


def register_summary(kind: str, detect: Callable[[pl.DataFrame], bool], summarize: Callable[..., str]) -> None:
    """Add a report kind to :func:`summarize` (checked before the built-in kinds).

    Examples
    --------
    >>> register_summary("mine", lambda r: "my_column" in r.columns, lambda r, **o: "mine")
    >>> report_kind(pl.DataFrame({"my_column": [1]}))
    'mine'
    >>> SUMMARIES.pop(0).kind
    'mine'
    """
    SUMMARIES.insert(0, SummaryKind(kind, detect, summarize))


def report_kind(report: pl.DataFrame) -> str:
    """The kind of a report (:data:`SUMMARIES`), or raise.

    Raises
    ------
    PolfairError
        No kind recognises it; the message lists the kinds.

    Examples
    --------
    >>> import polfair as pf
    >>> report_kind(pf.fairness_report(pf.load_compas(), y_true="two_year_recid", protected="sex", ci=None))
    'classification'
    """
    if not isinstance(report, pl.DataFrame):
        msg = f"summarize takes a report (a polars DataFrame), got {type(report).__name__}"
        raise TypeError(msg)
    for entry in SUMMARIES:
        if entry.detect(report):
            return entry.kind
    kinds = ", ".join(e.kind for e in SUMMARIES)
    msg = (
        f"summarize cannot tell which report this is (columns {report.columns[:8]}"
        f"{' ...' if report.width > 8 else ''}): it summarises {kinds} reports, from fairness_report, "
        "regression_report, ranking_report, score_report, adverse_impact, slice_scan"
    )
    raise PolfairError(msg)


def summarize(report: pl.DataFrame | Iterable[pl.DataFrame], **options: Any) -> str:
    """The terminal summary of any polfair report: plain text at most 100 characters wide.

    Dispatches on the report's kind (:func:`report_kind`): a fairness report
    (:func:`polfair.outputs.summary.summarize`), a regression report
    (:func:`polfair.outputs.regression.summarize_regression`), a score report
    (:func:`summarize_scores`), an adverse-impact table (:func:`summarize_adverse_impact`), a slice
    search (:func:`polfair.outputs.slices.summarize_slices`).

    Parameters
    ----------
    report
        The report; or a fairness report's batches (:func:`polfair.fairness_report_batches`, an
        iterator, list or tuple of report frames in report order), read one at a time
        (:func:`polfair.outputs.summary.summarize`).
    **options
        The kind's summary options (``attributes=``, ``max_groups=``, ...).

    Returns
    -------
    str

    Raises
    ------
    PolfairError
        A frame that is no report polfair knows; an empty iterable; batches of another kind than a
        fairness report.

    Examples
    --------
    >>> import polfair as pf
    >>> rep = pf.load_adult_regression().pipe(pf.regression_report, y_true="hours_per_week",
    ...                                       y_pred="predicted_hours", protected="sex")
    >>> "mean error" in pf.summarize(rep)
    True
    """
    if isinstance(report, (Iterator, list, tuple)):
        batches = iter(report)  # a fairness report's batches: told by the first, summarised one at a time
        first = next(batches, None)
        if first is None:
            msg = "summarize: the iterable of report batches was empty"
            raise PolfairError(msg)
        if report_kind(first) != "classification":
            msg = f"summarize takes batches of a fairness report (fairness_report_batches), got {report_kind(first)!r} batches"
            raise PolfairError(msg)
        return summarize_classification(itertools.chain([first], batches), **options)
    kind = report_kind(report)  # type: ignore[arg-type]  # anything else: report_kind names what it got
    entry = next(e for e in SUMMARIES if e.kind == kind)
    params = list(inspect.signature(entry.summarize).parameters.values())[1:]
    if not any(p.kind is p.VAR_KEYWORD for p in params):  # an unknown option names the close one
        check_known(options, [p.name for p in params], door=f"summarize (a {kind} report)")
    return entry.summarize(report, **options)
