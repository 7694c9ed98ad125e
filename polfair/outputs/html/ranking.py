"""The HTML page of a ranking report (:func:`polfair.ranking_report`).

Per attribute set: a chart of each group's exposure share (with its interval) against its item
share (the fair share of attention if every item deserved the same), then a table of the group
rows (items, shares, exposure and its ratio to the reference group with intervals, top-k share,
nDCG@k for groups of queries) and the attribute's AWRF and NDKL; a report judged by
:func:`polfair.monitor.apply_thresholds` also shows its statuses. Every value from the report is
escaped; the SVG is built by polfair from escaped text; no external ``src``/``href``.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping
from typing import Any

import polars as pl

from polfair.outputs.ranking import status_text
from polfair.outputs.summary import interval_text

__all__ = ["is_ranking_report", "render_ranking", "share_svg"]

_BLUE, _GREY, _ORANGE = "#0072B2", "#BBBBBB", "#D55E00"


def is_ranking_report(report: Any) -> bool:
    """Whether ``report`` is a ranking report (``exposure_share`` or ``ndcg_at_k`` rows)."""
    if not isinstance(report, pl.DataFrame) or "metric" not in report.columns:
        return False
    return bool(set(report["metric"].cast(pl.String).unique().to_list()) & {"exposure_share", "ndcg_at_k"})


def _f(x: Any, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    return f"{x:.{digits}f}"


def _e(x: Any) -> str:
    return html.escape("null" if x is None else str(x))


def _iv(row: Mapping[str, Any] | None, stat: str = "value", digits: int = 3) -> str:
    if not row or row.get(stat) is None:
        return "–"
    text = _f(row[stat], digits)
    lo, hi = row.get(f"{stat}_lo"), row.get(f"{stat}_hi")
    if lo is not None:  # an open upper limit reads [lo, inf), as on the report's page
        text += f' <span class="pf-ci">{html.escape(interval_text(lo, hi, digits))}</span>'
    return text


def share_svg(groups: list[dict[str, Any]], uid: str) -> str:
    """Horizontal bars: item share (grey) and exposure share (blue, with its interval) per group."""
    left, width, row_h = 190, 420, 34
    height = 30 + row_h * len(groups)
    top = max([1e-9] + [max(g.get("item") or 0, g.get("hi") or g.get("exp") or 0) for g in groups])
    scale = width / min(1.0, top * 1.1)

    def x(v: float) -> float:
        return left + max(0.0, v) * scale

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-labelledby="{uid}-t" width="{left + width + 80}" '
             f'height="{height}" viewBox="0 0 {left + width + 80} {height}" font-size="12">',
             f'<title id="{uid}-t">exposure share against item share by group</title>',
             f'<rect x="{left}" y="4" width="10" height="10" fill="{_GREY}"/><text x="{left + 14}" y="13">item share</text>',
             f'<rect x="{left + 100}" y="4" width="10" height="10" fill="{_BLUE}"/>'
             f'<text x="{left + 114}" y="13">exposure share [interval]</text>']  # fmt: skip
    for i, g in enumerate(groups):
        y = 24 + i * row_h
        label = _e(g["group"])[:28]
        parts.append(f'<text x="{left - 8}" y="{y + 17}" text-anchor="end">{label}</text>')
        item, exp = g.get("item"), g.get("exp")
        if item is not None:
            parts.append(f'<rect x="{left}" y="{y + 3}" width="{x(item) - left:.1f}" height="11" fill="{_GREY}"/>')
        if exp is not None:
            color = _ORANGE if (g.get("hi") is not None and item is not None and g["hi"] < item) else _BLUE
            parts.append(f'<rect x="{left}" y="{y + 16}" width="{x(exp) - left:.1f}" height="11" fill="{color}"/>')
            if g.get("lo") is not None and g.get("hi") is not None:
                parts.append(f'<line x1="{x(g["lo"]):.1f}" x2="{x(g["hi"]):.1f}" y1="{y + 21.5}" y2="{y + 21.5}" '
                             'stroke="#111" stroke-width="1.5"/>')  # fmt: skip
            parts.append(f'<text x="{x(max(exp, g.get("hi") or exp)) + 5:.1f}" y="{y + 26}">{_f(exp)}</text>')
    parts.append(f'<line x1="{left}" x2="{left}" y1="20" y2="{height}" stroke="#666"/></svg>')
    return "".join(parts)


def render_ranking(report: Any, *, title: str, provenance: Mapping[str, Any], generated_at: str, fragment: bool = False,
                   top_k: int = 20) -> str:  # fmt: skip
    """The page of a ranking report (see :func:`polfair.outputs.html.to_html`)."""
    rep = report if isinstance(report, pl.DataFrame) else report.collect()
    by = rep.columns[: rep.columns.index("attribute")]
    snap = ""
    if by and rep.height:
        last = rep.select(by).unique().sort(by).row(-1)
        rep = rep.filter(*[pl.col(b) == v for b, v in zip(by, last)])
        snap = ", ".join(f"{b} = {v}" for b, v in zip(by, last))
    rep = rep.with_columns(pl.col(c).cast(pl.String) for c in ("attribute", "metric", "reference_group"))
    body = [f"<h1>{_e(title)}</h1>",
            '<p class="pf-sub">Who is seen: each group\'s share of the attention (position-weighted exposure) against '
            "its share of the ranked items (orange: the whole interval of the exposure share lies below the item share). "
            "Intervals: delete-a-group jackknife over queries.</p>"]  # fmt: skip
    if snap:
        body.append(f'<p class="pf-sub">for {_e(snap)}</p>')
    keys = ("source", "query", "rank", "protected", "query_protected", "relevance", "k", "position_weight", "weight", "ci",
            "queries_left_out", "min_sample_size")  # fmt: skip
    prov = [(k, provenance.get(k)) for k in keys if provenance.get(k) is not None]
    if prov:
        body.append("<table class='pf-prov'>" + "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in prov)
                    + "</table>")  # fmt: skip
    judged = "status" in rep.columns  # a report judged by apply_thresholds: its statuses are shown, never decided here
    sets = rep.filter(pl.col("attribute").is_not_null()).group_by("attribute", maintain_order=True)
    for i, ((attr,), part) in enumerate(sets):
        wide = {(r["group"], r["metric"]): r for r in part.iter_rows(named=True)}
        refs = part["reference_group"].drop_nulls()
        ref = refs[0] if refs.len() else None
        names = part.filter(pl.col("group").is_not_null()).sort("n", descending=True)["group"].unique(maintain_order=True)
        names = sorted(names.head(top_k).to_list(), key=lambda g: g != ref)
        body.append(f"<h2 id='rk-{i}'>{_e(attr)} <span class='pf-sub'>(reference group: {_e(ref)})</span></h2>")
        if (names[0] if names else None, "ndcg_at_k") in wide:
            rows = "".join(f"<tr><td>{_e(g)}</td><td class='pf-num'>{_iv(wide.get((g, 'ndcg_at_k')))}</td>"
                           f"<td class='pf-num'>{_iv(wide.get((g, 'ndcg_at_k')), 'difference')}</td></tr>" for g in names)  # fmt: skip
            body.append("<table><tr><th>group of queries</th><th class='pf-num'>nDCG@k [interval]</th>"
                        f"<th class='pf-num'>difference [interval]</th></tr>{rows}</table>")  # fmt: skip
            continue
        bars = []
        for g in names:
            e = wide.get((g, "exposure_share")) or {}
            bars.append({"group": g, "item": (wide.get((g, "item_share")) or {}).get("value"), "exp": e.get("value"),
                         "lo": e.get("value_lo"), "hi": e.get("value_hi")})  # fmt: skip
        body.append(f"<div class='pf-scroll'>{share_svg(bars, f'rk-svg-{i}')}</div>")
        def n_of(g: Any, wide: dict[tuple[Any, Any], dict[str, Any]] = wide) -> str:
            return f"{(wide.get((g, 'exposure')) or {}).get('n', 0):,}"

        rows = "".join(
            f"<tr{' class=pf-ref' if g == ref else ''}><td>{_e(g)}</td><td class='pf-num'>{n_of(g)}</td>"
            f"<td class='pf-num'>{_f((wide.get((g, 'item_share')) or {}).get('value'))}</td>"
            f"<td class='pf-num'>{_iv(wide.get((g, 'exposure_share')))}</td>"
            f"<td class='pf-num'>{_iv(wide.get((g, 'exposure')))}</td>"
            f"<td class='pf-num'>{_iv(wide.get((g, 'exposure')), 'ratio', 2)}</td>"
            f"<td class='pf-num'>{_f((wide.get((g, 'top_k_share')) or {}).get('value'))}</td>"
            + (f"<td>{_e(status_text([r for (gg, _), r in wide.items() if gg == g]))}</td>" if judged else "") + "</tr>"
            for g in names
        )  # fmt: skip
        body.append("<table><tr><th>group</th><th class='pf-num'>items</th><th class='pf-num'>item share</th>"
                    "<th class='pf-num'>exposure share [interval]</th><th class='pf-num'>exposure per item</th>"
                    "<th class='pf-num'>ratio to reference</th><th class='pf-num'>top-k share</th>"
                    + ("<th>status (apply_thresholds)</th>" if judged else "") + f"</tr>{rows}</table>")  # fmt: skip
        extra = [f"{m.upper()} {_iv(wide.get((None, m)))}"
                 + (f" ({_e(wide[(None, m)]['status'])})" if wide[(None, m)].get("status") else "")
                 for m in ("awrf", "ndkl") if (None, m) in wide]  # fmt: skip
        if extra:
            body.append("<p>" + "; ".join(extra) + " (AWRF 1: equal attention per item in every query; NDKL 0: every "
                        "top i has the query's group shares)</p>")  # fmt: skip
    body.append(f"<p class='pf-sub'>generated {_e(generated_at)} by polfair; definitions: docs/ranking.md</p>")
    style = ("<style>.pf-report{font:15px/1.5 system-ui,sans-serif;color:#1a1a1a;max-width:1100px;margin:0 auto;"
             "padding:16px 20px}.pf-report table{border-collapse:collapse;font-size:.9em;margin:.3em 0 .8em}"
             ".pf-report th,.pf-report td{padding:.3em .6em;border-bottom:1px solid #e6e6e6;text-align:left}"
             ".pf-report th{background:#f4f4f4}.pf-report .pf-num{text-align:right;font-variant-numeric:tabular-nums}"
             ".pf-report .pf-ci,.pf-report .pf-sub{color:#555;font-size:.9em}.pf-report tr.pf-ref td{background:#f7f7f2}"
             ".pf-report h2{font-size:1.25em;border-top:2px solid #e3e3e3;padding-top:.4em}</style>")  # fmt: skip
    page = f"<div class='pf-report' id='pf-report'>{style}{''.join(body)}</div>"
    if fragment:
        return page + "\n"
    return (f"<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'><meta name='generator' content='polfair'>"
            f"<title>{_e(title)}</title></head><body>{page}</body></html>\n")  # fmt: skip
