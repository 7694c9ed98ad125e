"""Terminal summary of a ranking report (:func:`polfair.ranking_report`), for ``pf.summarize`` and
``polfair ranking``.

Plain text from the long report alone, at most 100 characters wide: per attribute set, a table of
the groups (items, item share, exposure share with its interval, exposure per item and its ratio to
the reference group with its interval, top-k share), then AWRF and NDKL, and the nDCG@k of each
group of queries. A report judged by :func:`polfair.monitor.apply_thresholds` shows each group's
statuses as that function decided them (``status`` column; this module judges nothing).
"""

from __future__ import annotations

import math
from typing import Any

import polars as pl

from polfair.outputs.summary import interval_text, text_table

__all__ = ["is_ranking_report", "status_text", "summarize_ranking"]


def is_ranking_report(report: pl.DataFrame) -> bool:
    """Whether a long report is a ranking report (it has ``exposure_share`` or ``ndcg_at_k`` rows)."""
    if "metric" not in report.columns:
        return False
    names = set(report["metric"].cast(pl.String).unique().to_list())
    return bool(names & {"exposure_share", "ndcg_at_k"})


def _num(x: Any, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    return f"{x:.{digits}f}"


def _iv(row: dict[str, Any] | None, stat: str = "value", digits: int = 3) -> str:
    if row is None or row.get(stat) is None:
        return "–"
    text = _num(row[stat], digits)
    lo, hi = row.get(f"{stat}_lo"), row.get(f"{stat}_hi")
    if lo is not None:  # an open upper limit is written as every output writes it ([lo, inf))
        text += " " + interval_text(lo, hi, digits)
    return text


def status_text(part: list[dict[str, Any]]) -> str:
    """The statuses :func:`polfair.monitor.apply_thresholds` gave these rows (read, never decided here): ``ok``
    when every judged row is ok, else ``metric: status`` of the others; ``–`` when none is judged.

    Examples
    --------
    >>> status_text([{"metric": "awrf", "status": "violation"}, {"metric": "ndkl", "status": None}])
    'awrf: violation'
    """
    judged = [r for r in part if r.get("status") is not None]
    if not judged:
        return "–"
    bad = [f"{r['metric']}: {r['status']}" for r in judged if r["status"] != "ok"]
    return "; ".join(bad) if bad else "ok"


def summarize_ranking(report: pl.DataFrame, *, max_groups: int = 12, **_: Any) -> str:
    """A readable text summary of a ranking report, at most 100 characters wide.

    Parameters
    ----------
    report
        The long report of :func:`polfair.ranking_report` (with ``by`` columns, the last ``by``
        value in sort order is shown).
    max_groups
        Groups shown per attribute set (the largest).

    Returns
    -------
    str
        Lines of text.

    Examples
    --------
    >>> import polars as pl
    >>> import polfair as pf
    >>> df = pl.DataFrame({"q": [1, 1, 1, 1], "r": [1, 2, 3, 4], "g": ["a", "b", "a", "b"]})
    >>> "exposure share" in summarize_ranking(pf.ranking_report(df, query="q", rank="r", protected="g", ci=None))
    True
    """
    by = report.columns[: report.columns.index("attribute")]
    lines: list[str] = []
    if by and report.height:
        last = report.select(by).unique().sort(by).row(-1)
        report = report.filter(*[pl.col(b) == v for b, v in zip(by, last)])
        lines.append("for " + ", ".join(f"{b} = {v}" for b, v in zip(by, last)))
    rows = report.with_columns(pl.col("attribute", "metric", "reference_group").cast(pl.String))
    for (attr,), part in rows.filter(pl.col("attribute").is_not_null()).group_by("attribute", maintain_order=True):
        wide: dict[tuple[Any, str], dict[str, Any]] = {(r["group"], r["metric"]): r for r in part.iter_rows(named=True)}
        groups = part.filter(pl.col("group").is_not_null()).sort("n", descending=True)["group"].unique(maintain_order=True)
        refs = part["reference_group"].drop_nulls()
        ref = refs[0] if refs.len() else None
        if "ndcg_at_k" in part["metric"].to_list():
            lines += ["", f"== {attr}: nDCG@k of each group of queries (reference: {ref})"]
            body = [[str(g), f"{int(wide[(g, 'ndcg_at_k')]['n_eff'] or 0):,}" if wide[(g, 'ndcg_at_k')].get("n_eff") else "-",
                     _iv(wide.get((g, "ndcg_at_k"))), _iv(wide.get((g, "ndcg_at_k")), "difference")]
                    for g in groups.head(max_groups)]  # fmt: skip
            lines += text_table(["group", "queries", "nDCG@k [interval]", "difference [interval]"], body)
            continue
        lines += ["", f"== {attr}: who is seen (reference group: {ref})"]
        body = []
        judged = "status" in part.columns
        for g in groups.head(max_groups):
            body.append([str(g), f"{int(wide[(g, 'exposure')]['n']):,}", _num(wide.get((g, "item_share"), {}).get("value")),
                         _iv(wide.get((g, "exposure_share"))), _num(wide.get((g, "exposure"), {}).get("value")),
                         _iv(wide.get((g, "exposure")), "ratio", 2), _num(wide.get((g, "top_k_share"), {}).get("value"))]
                        + ([status_text([r for (gg, _), r in wide.items() if gg == g])] if judged else []))  # fmt: skip
        lines += text_table(["group", "items", "item share", "exposure share [interval]", "exposure", "ratio [interval]",
                             "top-k share", *(["status"] if judged else [])], body)  # fmt: skip
        if groups.len() > max_groups:
            lines.append(f"... and {groups.len() - max_groups:,} more groups")
        extra = [f"{m.upper()} {_iv(wide.get((None, m)))}" + (f" ({wide[(None, m)]['status']})" if wide[(None, m)].get("status")
                 else "") for m in ("awrf", "ndkl") if (None, m) in wide]  # fmt: skip
        if extra:
            lines.append("  " + "; ".join(extra))
    lines += ["", "exposure = mean position weight per item (1/log2(1 + rank) by default); a fair share of exposure",
              "is the share of items; ratio: the group's exposure / the reference's. AWRF 1: equal attention per",
              "item in every query; NDKL 0: each top i has the query's group shares. Intervals: jackknife by query."]
    return "\n".join(lines)
