"""Charts of the HTML report, drawn with matplotlib and inlined as SVG text.

matplotlib is imported inside the functions (it is the optional extra ``polfair[report]``). Figures
are built with :class:`matplotlib.figure.Figure` (no pyplot, no global backend state), text stays
text (``svg.fonttype = "none"``: small, selectable, readable by screen readers), mathtext is off
(a group value ``"$x$"`` is shown as typed), and the output is deterministic: a fixed
``svg.hashsalt`` and no date in the metadata, so the same report gives byte-identical SVG.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Sequence
from typing import Any

from polfair.outputs.html._view import (
    fmt_band,
    fmt_interval,
    fmt_metric,
    fmt_num,
    is_ratio_metric,
)

__all__ = ["OKABE_ITO", "STATUS_STYLE", "chart_style", "fix_svg", "forest_svg", "heatmap_svg", "new_figure",
           "over_time_svg", "panel_axes", "short_label", "to_svg", "whisker_point"]

#: Okabe & Ito (2008) colour-blind-safe palette.
OKABE_ITO = {
    "black": "#000000", "orange": "#E69F00", "sky_blue": "#56B4E9", "bluish_green": "#009E73",
    "yellow": "#F0E442", "blue": "#0072B2", "vermillion": "#D55E00", "reddish_purple": "#CC79A7",
}  # fmt: skip
GREY = "#8C8C8C"
#: status -> (colour, marker, filled, label); the label is always printed beside the colour.
STATUS_STYLE = {
    "ok": (OKABE_ITO["bluish_green"], "o", True, "ok"),
    "violation": (OKABE_ITO["vermillion"], "s", True, "violation"),
    "inconclusive": (OKABE_ITO["orange"], "^", True, "inconclusive"),
    "insufficient_data": (GREY, "o", False, "insufficient data"),
    "not_assessed": (OKABE_ITO["blue"], "o", True, "no threshold"),
    "reference": (OKABE_ITO["black"], "D", False, "reference"),
}
SERIES_COLOURS = [OKABE_ITO[k] for k in ("blue", "vermillion", "bluish_green", "reddish_purple", "orange", "sky_blue")]
BAND_COLOUR = OKABE_ITO["sky_blue"]
MAX_LABEL = 32

_RC = {
    "svg.fonttype": "none",
    "svg.hashsalt": "polfair-html-report",
    "text.parse_math": False,
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans", "Arial", "Helvetica"],
    "font.size": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.edgecolor": "#555555",
    "axes.titlesize": 10,
    "xtick.color": "#333333",
    "ytick.color": "#333333",
    "path.simplify": True,
}


def short_label(text: str, limit: int = MAX_LABEL) -> str:
    """``text`` cut to ``limit`` characters, the last one an ellipsis, for an axis label."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def new_figure(width: float, height: float) -> Any:
    """A matplotlib ``Figure`` of ``width`` × ``height`` inches at the page's 72 dpi (no pyplot state)."""
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=72)


def to_svg(fig: Any, uid: str, title: str, desc: str, *, tight: bool = True) -> str:
    """Serialise ``fig`` to an inline ``<svg>`` element with a title and description."""
    buf = io.StringIO()
    if tight:
        fig.savefig(buf, format="svg", metadata={"Date": None}, bbox_inches="tight", pad_inches=0.08)
    else:
        fig.savefig(buf, format="svg", metadata={"Date": None})
    return fix_svg(buf.getvalue(), uid, title, desc)


_ID = re.compile(r'\bid="([^"]+)"')


def fix_svg(svg: str, uid: str, title: str, desc: str) -> str:
    """Make a standalone SVG document inlineable: no prolog, unique ids, responsive, labelled.

    Every ``id`` gets the prefix ``uid`` (several charts share one page), the fixed width/height
    become a ``viewBox``-driven size, and ``role="img"`` with ``<title>``/``<desc>`` give screen
    readers the chart's alt text (escaped: it contains group values).
    """
    from markupsafe import escape

    start = svg.find("<svg")
    svg = re.sub(r"\s*<metadata>.*?</metadata>", "", svg[start:], flags=re.DOTALL)  # RDF block with links
    ids = set(_ID.findall(svg))
    for old in sorted(ids, key=len, reverse=True):
        new = f"{uid}-{old}"
        svg = svg.replace(f'id="{old}"', f'id="{new}"').replace(f"url(#{old})", f"url(#{new})")
        svg = svg.replace(f'href="#{old}"', f'href="#{new}"')
    head_end = svg.find(">")
    head = svg[:head_end]
    w = re.search(r'\bwidth="([\d.]+)pt"', head)
    width_px = f' style="max-width:{float(w.group(1)) * 4 / 3:.0f}px"' if w else ""
    head = re.sub(r'\s(width|height)="[^"]*"', "", head)
    label = f' id="{uid}" role="img" aria-labelledby="{uid}-title {uid}-desc" class="pf-chart" width="100%"{width_px}'
    # matplotlib's <style> says "*{stroke-linejoin: round; ...}": inline, that would style the whole page
    svg = re.sub(r"(<style[^>]*>\s*)\*\s*\{", lambda m: f"{m.group(1)}#{uid} *{{", svg)
    inner = f'<title id="{uid}-title">{escape(title)}</title><desc id="{uid}-desc">{escape(desc)}</desc>'
    return head + label + ">" + inner + svg[head_end + 1 :].rstrip() + "\n"


def chart_style() -> Any:
    """The page's matplotlib style as a context manager (``with chart_style(): ...``)."""
    import matplotlib

    return matplotlib.rc_context(_RC)  # type: ignore[arg-type]


# ---------------------------------------------------------------- forest plot


def whisker_point(ax: Any, y: float, x: float, lo: Any, hi: Any, colour: str, size: float) -> None:
    """One group's row of a dot-and-whisker panel: its interval ``[lo, hi]`` (when finite) and its value."""
    if lo is not None and hi is not None and math.isfinite(lo) and math.isfinite(hi):
        ax.hlines(y, lo, hi, color=colour, lw=1.6, zorder=2)
        ax.vlines([lo, hi], y - 0.15, y + 0.15, color=colour, lw=1.2, zorder=2)
    ax.scatter([x], [y], s=size, marker="o", color=colour, zorder=3)


def panel_axes(ax: Any, labels: Sequence[str], title: str, *, first: bool) -> None:
    """The y axis, title and grid of one panel of a multi-panel group chart (labels on the first only)."""
    k = len(labels)
    ax.set_yticks(range(k))
    ax.set_yticklabels(labels if first else [""] * k)
    if not first:
        ax.tick_params(axis="y", length=0)
    ax.set_title(title, fontsize=10, loc="left")
    ax.tick_params(axis="x", labelsize=8.5)
    ax.grid(axis="x", color="#DDDDDD", lw=0.6, zorder=0)


def _log_ticks(lo: float, hi: float) -> list[float]:
    """Readable ticks on a log axis: 1 first, then candidates at least 1/7 of the range apart."""
    cands = [0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 0.5, 0.8, 1.25, 2.0, 4.0, 5.0, 10.0, 20.0, 50.0, 100.0]
    gap = (math.log(hi) - math.log(lo)) / 7
    kept = [1.0] if lo <= 1.0 <= hi else []
    for side in (
        sorted((c for c in cands if c < 1 and c >= lo), reverse=True),
        sorted(c for c in cands if c > 1 and c <= hi),
    ):
        last = 1.0
        for c in side:
            if abs(math.log(c) - math.log(last)) >= gap:
                kept.append(c)
                last = c
    return sorted(kept)


def forest_svg(rows: Sequence[dict[str, Any]], *, metric: str, attribute: str, uid: str) -> str:
    """A forest plot of one disparity for the groups of one attribute set.

    ``rows`` come from the view (``group, n, value, lo, hi, status, is_ref, reason, band``). Ratios
    are drawn on a log axis around 1, differences on a linear axis around 0; the band (threshold or
    four-fifths) is shaded, the reference is a hollow diamond, the marker area grows with n, groups
    with a reason (undefined, small) are grey and carry the reason as text beside the marker.
    """
    from matplotlib.ticker import FixedLocator, NullLocator

    ratio = is_ratio_metric(metric)
    centre = 1.0 if ratio else 0.0
    k = max(1, len(rows))
    band = next((r["band"] for r in rows if r.get("band")), None)  # the report's threshold only (docs/status.md)
    xs: list[float] = [centre]
    for r in rows:
        for key in ("value", "lo", "hi"):
            v = r.get(key)
            if v is not None and math.isfinite(v) and (not ratio or v > 0):
                xs.append(v)
    if band is not None:
        xs += [b for b in band if math.isfinite(b) and (not ratio or b > 0)]
    lo_x, hi_x = min(xs), max(xs)
    if ratio:
        lo_x, hi_x = min(lo_x, 0.5) / 1.25, max(hi_x, 2.0) * 1.25
    else:
        span = max(hi_x - lo_x, 0.1)
        lo_x, hi_x = lo_x - 0.08 * span, hi_x + 0.08 * span
    max_n = max([r["n"] or 0 for r in rows] + [1])

    labels, rights = [], []
    for r in rows:
        labels.append(short_label(str(r["group"])) + ("  (ref)" if r["is_ref"] else ""))
        v = r.get("value")
        if v is None or not math.isfinite(v):
            rights.append(f"–  {r.get('reason') or 'undefined'}")
        else:
            _, _, _, word = STATUS_STYLE.get(r["status"], STATUS_STYLE["not_assessed"])
            label = "reference" if r["is_ref"] else (r.get("reason") if r.get("grey") else word)
            ci = fmt_interval(metric, r.get("lo"), r.get("hi"))
            rights.append(f"{fmt_metric(metric, v)} {ci}".strip() + f"  {label}")
    # fixed layout (no second "tight" draw): margins from the text lengths, in inches
    left = 0.2 + 0.068 * max(len(t) for t in labels) if labels else 1.0
    right = 0.25 + 0.062 * max(len(t) for t in rights) if rights else 1.0
    plot_w = 2.9
    width, height = left + plot_w + right, 0.62 + 0.3 * k
    with chart_style():
        fig = new_figure(width, height)
        ax = fig.add_axes((left / width, 0.5 / height, plot_w / width, (0.3 * k) / height))
        if ratio:
            ax.set_xscale("log")
        ax.set_xlim(lo_x, hi_x)
        ax.set_ylim(k - 0.5, -0.5)
        if band is not None:
            b0 = max(band[0], lo_x) if math.isfinite(band[0]) else lo_x
            b1 = min(band[1], hi_x) if math.isfinite(band[1]) else hi_x
            ax.axvspan(b0, b1, color=BAND_COLOUR, alpha=0.18, lw=0, zorder=0)
        ax.axvline(centre, color="#333333", lw=0.9, zorder=1)
        for y, r in enumerate(rows):
            colour, marker, filled, _ = STATUS_STYLE.get(r["status"], STATUS_STYLE["not_assessed"])
            if r.get("grey"):
                colour, filled = GREY, False
            if y % 2 == 0:
                ax.axhspan(y - 0.5, y + 0.5, color="#F2F2F2", lw=0, zorder=-1)
            v = r.get("value")
            if v is None or not math.isfinite(v):
                ax.text(centre, y, "undefined", ha="center", va="center", color="#555555", fontsize=8.5, style="italic")
            else:
                lo, hi = r.get("lo"), r.get("hi")
                if lo is not None and hi is not None:
                    lo_c = max(lo, lo_x) if (not ratio or lo > 0) else lo_x
                    hi_c = min(hi, hi_x)
                    ax.hlines(y, lo_c, hi_c, color=colour, lw=1.6, zorder=2)
                    ax.vlines([lo_c, hi_c], y - 0.15, y + 0.15, color=colour, lw=1.2, zorder=2)
                size = 18 + 160 * math.sqrt((r["n"] or 0) / max_n)
                off_scale = (ratio and v <= 0) or v < lo_x or v > hi_x
                plot_v = min(max(v if (not ratio or v > 0) else lo_x, lo_x), hi_x)
                if off_scale:  # 0 on a log axis, or beyond the limits: an arrow at the edge
                    marker, size = ("<" if plot_v <= lo_x else ">"), 40
                ax.scatter([plot_v], [y], s=size, marker=marker, zorder=3, linewidths=1.4, clip_on=False,
                           facecolors=colour if filled else "white", edgecolors=colour)  # fmt: skip
            ax.annotate(rights[y], xy=(1.02, y), xycoords=("axes fraction", "data"), va="center", fontsize=8.5,
                        color="#222222" if not r.get("grey") else "#666666")  # fmt: skip
        ax.set_yticks(range(len(rows)))
        ax.set_yticklabels(labels, fontsize=9)
        ax.tick_params(axis="y", length=0)
        if ratio:
            ticks = _log_ticks(lo_x, hi_x)
            ax.xaxis.set_major_locator(FixedLocator(ticks))
            ax.xaxis.set_minor_locator(NullLocator())
            ax.set_xticklabels([f"{t:g}" for t in ticks], fontsize=8.5)
        else:
            ax.tick_params(axis="x", labelsize=8.5)
        scale = "ratio to the reference, log scale" if ratio else "difference from the reference"
        ax.set_xlabel(f"{metric} ({scale})", fontsize=9)
        title = f"{metric} by {attribute}"
        flagged = [r["group"] for r in rows if r["status"] in ("violation", "inconclusive")]
        desc = (
            f"Forest plot of {metric} for {len(rows)} groups of {attribute}"
            f"{' with confidence intervals' if any(r.get('lo') is not None for r in rows) else ''}; "
            f"band {fmt_band(band)} shaded. "
            + "; ".join(f"{r['group']}: {rights[i]}" for i, r in enumerate(rows[:30]))
            + (f". Flagged: {', '.join(map(str, flagged[:10]))}." if flagged else ".")
        )
        return to_svg(fig, uid, title, desc, tight=False)


# ---------------------------------------------------------------- heatmap


def heatmap_svg(hm: dict[str, Any], *, uid: str) -> str:
    """A heatmap of one ratio (log colour scale, centred on 1) or difference over two attributes."""
    import numpy as np
    from matplotlib.colors import TwoSlopeNorm
    from matplotlib.patches import Rectangle

    metric = hm["metric"]
    ratio = is_ratio_metric(metric)
    rows, cols = hm["rows"], hm["cols"]
    data = np.full((len(rows), len(cols)), np.nan)
    for i, rv in enumerate(rows):
        for j, cv in enumerate(cols):
            c = hm["cells"].get((rv, cv))
            v = None if c is None else c["value"]
            if v is not None and math.isfinite(v):
                data[i, j] = (math.log(v) if v > 0 else -math.inf) if ratio else v
    finite = data[np.isfinite(data)]
    data = np.where(np.isneginf(data), -1e9, data)  # a ratio of 0: the far end of the scale
    lim = max(float(np.abs(finite).max()) if finite.size else 0.0, math.log(1.25) if ratio else 0.05)
    lim = min(lim, math.log(8) if ratio else 1.0)
    w = min(8.0, 2.2 + 0.75 * len(cols))
    h = 1.3 + 0.42 * len(rows)
    with chart_style():
        fig = new_figure(w, h)
        ax = fig.add_subplot()
        ax.spines[:].set_visible(False)
        cmap = _cmap()
        # vector cells (pcolormesh), not a raster image: crisp at any zoom, no embedded PNG
        im = ax.pcolormesh(
            np.arange(len(cols) + 1) - 0.5,
            np.arange(len(rows) + 1) - 0.5,
            np.ma.masked_invalid(np.clip(data, -lim, lim)),
            cmap=cmap,
            norm=TwoSlopeNorm(0.0, -lim, lim),
            edgecolors="white",
            linewidth=1,
        )
        ax.set_xlim(-0.5, len(cols) - 0.5)
        ax.set_ylim(len(rows) - 0.5, -0.5)
        for i, rv in enumerate(rows):
            for j, cv in enumerate(cols):
                c = hm["cells"].get((rv, cv))
                if c is None:
                    txt, col = "no rows", "#777777"
                elif c["reference"]:
                    txt, col = "ref", "#000000"
                else:
                    v = c["value"]
                    txt = fmt_metric(metric, v) if v is not None else "undef."
                    if c.get("status") in ("violation", "inconclusive"):
                        txt += " !" if c["status"] == "violation" else " ?"
                    col = "#000000"
                    if c.get("grey"):  # small or undefined: veiled, with its size
                        ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, facecolor="white", alpha=0.7, lw=0))
                        txt += f"\nn = {fmt_num(c['n'])}"
                        col = "#555555"
                    elif v is not None and np.isfinite(data[i, j]) and abs(data[i, j]) > 0.6 * lim:
                        col = "#FFFFFF"
                ax.text(j, i, txt, ha="center", va="center", fontsize=8, color=col)
        ax.set_xticks(range(len(cols)))
        ax.set_xticklabels([short_label(str(c), 16) for c in cols], rotation=30 if len(cols) > 3 else 0,
                           ha="right" if len(cols) > 3 else "center", fontsize=8.5)  # fmt: skip
        ax.set_yticks(range(len(rows)))
        ax.set_yticklabels([short_label(str(r), 20) for r in rows], fontsize=8.5)
        ax.set_xlabel(hm["col_attr"], fontsize=9)
        ax.set_ylabel(hm["row_attr"], fontsize=9)
        ax.tick_params(length=0)
        cb = fig.colorbar(im, ax=ax, shrink=0.85, pad=0.02)
        cb.solids.set_rasterized(False)  # matplotlib rasterizes long colorbars: keep vector, no PNG
        cb.solids.set_edgecolor("face")  # no hairline seams between the levels
        if ratio:
            ticks = [t for t in (0.125, 0.25, 0.5, 0.8, 1.0, 1.25, 2.0, 4.0, 8.0) if abs(math.log(t)) <= lim + 1e-9]
            cb.set_ticks([math.log(t) for t in ticks])
            cb.set_ticklabels([f"{t:g}" for t in ticks])
        cb.ax.tick_params(labelsize=8)
        cb.set_label(f"{metric}" + (" (log scale)" if ratio else ""), fontsize=8.5)
        title = f"{metric} over {hm['row_attr']} × {hm['col_attr']}"
        cells = [f"{rv} & {cv}: {fmt_metric(metric, hm['cells'][(rv, cv)]['value'])}"
                 for rv in rows for cv in cols if (rv, cv) in hm["cells"]][:60]  # fmt: skip
        desc = f"Heatmap of {metric} for each combination of {hm['row_attr']} and {hm['col_attr']}: " + "; ".join(cells)
        return to_svg(fig, uid, title, desc)


def _cmap() -> Any:
    # diverging, colour-blind safe: Okabe-Ito vermillion -> white -> blue
    from matplotlib.colors import LinearSegmentedColormap

    # 24 levels: the cells carry their values as text; a 256-level colorbar would be 256 SVG paths
    return LinearSegmentedColormap.from_list("pf_div", [OKABE_ITO["vermillion"], "#FFFFFF", OKABE_ITO["blue"]], N=24)


# ---------------------------------------------------------------- over time


def over_time_svg(ot: dict[str, Any], *, uid: str) -> str:
    """The first headline disparity per period: one line per group, its interval as a band."""
    from matplotlib.ticker import FixedLocator, NullLocator

    metric = ot["metric"]
    ratio = is_ratio_metric(metric)
    periods = ot["periods"]
    x = list(range(len(periods)))
    with chart_style():
        fig = new_figure(7.2, 3.4)
        ax = fig.add_axes((0.09, 0.2, 0.62, 0.72))
        if ratio:
            ax.set_yscale("log")
        band = ot.get("band")
        ys: list[float] = [1.0 if ratio else 0.0]
        markers = ["o", "s", "^", "D", "v", "P"]
        bad = STATUS_STYLE["violation"][0]
        for j in ot.get("violation_periods", []):  # periods with a violation (any group): a red column
            ax.axvspan(j - 0.45, j + 0.45, color=bad, alpha=0.10, lw=0, zorder=0)
        for i, s in enumerate(ot["series"]):
            colour = SERIES_COLOURS[i % len(SERIES_COLOURS)]
            v = [p[0] if p[0] is not None and (not ratio or p[0] > 0) else float("nan") for p in s["points"]]
            lo = [p[1] if p[1] is not None and (not ratio or p[1] > 0) else float("nan") for p in s["points"]]
            hi = [p[2] if p[2] is not None else float("nan") for p in s["points"]]
            ys += [t for t in v + lo + hi if math.isfinite(t)]
            if any(math.isfinite(t) for t in lo):
                ax.fill_between(x, lo, hi, color=colour, alpha=0.15, lw=0)
            ax.plot(x, v, color=colour, marker=markers[i % len(markers)], ms=4.5, lw=1.6)
            flagged = [(j, t) for j, (t, p) in enumerate(zip(v, s["points"])) if len(p) > 3 and p[3] == "violation"
                       and math.isfinite(t)]  # fmt: skip
            if flagged:  # the report's violations of this group: a cross over the point
                ax.plot([j for j, _ in flagged], [t for _, t in flagged], ls="none", marker="X", ms=9,
                        mfc=bad, mec="white", mew=0.8, zorder=5)  # fmt: skip
            last = max((j for j, t in enumerate(v) if math.isfinite(t)), default=None)
            if last is not None:
                ax.annotate(f"{short_label(str(s['group']), 24)} {fmt_metric(metric, v[last])}", xy=(1.01, v[last]),
                            xycoords=("axes fraction", "data"), va="center", fontsize=8.5, color=colour)  # fmt: skip
        if band is not None:
            ys += [b for b in band if math.isfinite(b)]
        lo_y, hi_y = min(ys), max(ys)
        if ratio:
            lo_y, hi_y = min(lo_y, 0.5) / 1.15, max(hi_y, 2.0) * 1.15
            ax.set_ylim(lo_y, hi_y)
            ticks = _log_ticks(lo_y, hi_y)
            ax.yaxis.set_major_locator(FixedLocator(ticks))
            ax.yaxis.set_minor_locator(NullLocator())
            ax.set_yticklabels([f"{t:g}" for t in ticks], fontsize=8.5)
        if band is not None:
            ax.axhspan(max(band[0], lo_y) if math.isfinite(band[0]) else lo_y,
                       min(band[1], hi_y) if math.isfinite(band[1]) else hi_y,
                       color=BAND_COLOUR, alpha=0.18, lw=0, zorder=0)  # fmt: skip
        ax.axhline(1.0 if ratio else 0.0, color="#333333", lw=0.9)
        step = max(1, math.ceil(len(periods) / 12))
        ax.set_xticks(x[::step])
        ax.set_xticklabels([short_label(p, 12) for p in periods[::step]], rotation=30, ha="right", fontsize=8.5)
        ax.set_xlim(-0.3, len(periods) - 0.7)
        ax.set_ylabel(f"{metric}" + (" (log)" if ratio else ""), fontsize=9)
        ref = ot.get("reference")
        ax.set_title(f"{ot['attribute']}: vs reference {ref}" if ref else ot["attribute"], fontsize=9.5, loc="left")
        title = f"{metric} over time by {ot['attribute']}"
        desc = (
            f"Line chart of {metric} per period ({periods[0]} to {periods[-1]}) for "
            + ", ".join(str(s["group"]) for s in ot["series"])
            + (f"; band {fmt_band(band)} shaded" if band else "")
            + f"; {len(ot.get('violation_periods', []))} periods with a violation marked."
        )
        return to_svg(fig, uid, title, desc)
