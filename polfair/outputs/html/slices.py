"""The slices section of the HTML page: the worst slices of :func:`polfair.slice_scan` with intervals.

One ``<section>`` (template ``slices_section.html.j2``): what was searched, an interval chart of the
slices' mean errors (each slice's interval, the rest of the rows' mean beside it, the overall mean
as a line), and a table of the slices with their rows, mean error and interval, the rest's mean,
the difference with its interval, the adjusted p-value and the score. It is added to a fairness
report's page with ``to_html(report, slices=result)`` / ``write_html(report, path, slices=result)``,
or makes a page of its own when the slice table itself is passed (``write_html(result, path)``).
Reads the result table (and the search's request attached to it) only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import polars as pl

from polfair.core.report.run_metadata import request_of
from polfair.outputs.html._charts import OKABE_ITO, chart_style, new_figure, short_label, to_svg
from polfair.outputs.slices import format_number, format_p
from polfair.outputs.summary import favorable_statement
from polfair.slices import is_slice_table

__all__ = ["is_slice_table", "render_slices", "slices_chart", "slices_section"]

#: Interval methods and tests of the slice table, in words.
_METHODS = {
    "score": "Wilson score interval (0/1 errors); Newcombe's hybrid score interval for the difference",
    "score_ess": "Wilson score interval with Kish's effective size (weighted 0/1 errors); Newcombe for the difference",
    "log_t": "Student t interval on the log scale (the mean of a non-negative loss); Welch's interval for the difference",
    "log_t_ess": "as log_t with Kish's effective size (weighted)",
    "chi2_n1": "Campbell's 'N−1' χ² test of the slice against the rest",
    "fisher": "Fisher's exact test (an expected count below 1)",
    "z_ess": "pooled z test with Kish's effective sizes (weighted)",
    "welch": "Welch's t test of the slice's mean against the rest's",
    "welch_ess": "Welch's t test with Kish's effective sizes (weighted)",
}
_ADJUST = {"holm": "Holm's step-down (family-wise error)", "bh": "Benjamini–Hochberg (false discovery rate)",
           "by": "Benjamini–Yekutieli (false discovery rate, any dependence)"}  # fmt: skip


def _fmt(x: Any, digits: int = 3, sign: bool = False) -> str:
    return format_number(x, digits, sign, missing="–")


def _p(x: Any) -> str:
    return format_p(x, missing="–")


def slices_chart(result: pl.DataFrame, *, uid: str, overall: float | None = None, measure: str = "mean error") -> str:
    """An interval chart of the slices' mean errors (inline SVG).

    One row per slice (numbered as the table): the mean error with its interval, the rest of the
    rows' mean as a hollow grey diamond, and the overall mean error as a dashed line.
    """
    rows = list(result.iter_rows(named=True))
    k = max(1, len(rows))
    labels = [f"{i}. " + short_label(r["slice"], 40) for i, r in enumerate(rows, 1)]
    rights = [f"{_fmt(r['error_mean'])}" + (f" [{_fmt(r['value_lo'])}, {_fmt(r['value_hi'])}]" if r["value_lo"]
              is not None else "") + f"  n={r['n']:,}" for r in rows]  # fmt: skip
    xs = [v for r in rows for v in (r["error_mean"], r["value_lo"], r["value_hi"], r["rest_error_mean"])
          if v is not None and math.isfinite(v)] + ([overall] if overall is not None else [])  # fmt: skip
    lo_x, hi_x = (min(xs), max(xs)) if xs else (0.0, 1.0)
    span = max(hi_x - lo_x, 0.05)
    lo_x, hi_x = max(0.0, lo_x - 0.06 * span) if lo_x >= 0 else lo_x - 0.06 * span, hi_x + 0.06 * span
    left = 0.2 + 0.068 * max(len(t) for t in labels)
    right = 0.25 + 0.062 * max(len(t) for t in rights)
    plot_w = 3.2
    width, height = left + plot_w + right, 0.7 + 0.3 * k
    colour, grey, ink = OKABE_ITO["vermillion"], "#8C8C8C", "#333333"
    with chart_style():
        fig = new_figure(width, height)
        ax = fig.add_axes((left / width, 0.55 / height, plot_w / width, (0.3 * k) / height))
        ax.set_xlim(lo_x, hi_x)
        ax.set_ylim(k - 0.5, -0.5)
        if overall is not None:
            ax.axvline(overall, color=ink, lw=0.9, ls="--", zorder=1)
        for y, r in enumerate(rows):
            if y % 2 == 0:
                ax.axhspan(y - 0.5, y + 0.5, color="#F2F2F2", lw=0, zorder=-1)
            if r["rest_error_mean"] is not None:
                ax.scatter([r["rest_error_mean"]], [y], s=30, marker="D", facecolors="white", edgecolors=grey,
                           linewidths=1.2, zorder=2)  # fmt: skip
            if r["value_lo"] is not None and r["value_hi"] is not None:
                ax.hlines(y, r["value_lo"], r["value_hi"], color=colour, lw=1.6, zorder=3)
                ax.vlines([r["value_lo"], r["value_hi"]], y - 0.15, y + 0.15, color=colour, lw=1.2, zorder=3)
            if r["error_mean"] is not None:
                ax.scatter([r["error_mean"]], [y], s=40, marker="s", color=colour, zorder=4)
            ax.annotate(rights[y], xy=(1.02, y), xycoords=("axes fraction", "data"), va="center", fontsize=8.5,
                        color="#222222")  # fmt: skip
        ax.set_yticks(range(len(rows)))
        ax.set_yticklabels(labels, fontsize=9)
        ax.tick_params(axis="y", length=0)
        ax.tick_params(axis="x", labelsize=8.5)
        ax.set_xlabel(f"{measure} (square: the slice, with its interval; diamond: the other rows"
                      + ("; dashed: overall)" if overall is not None else ")"), fontsize=9)  # fmt: skip
        desc = "Mean error of the worst slices with confidence intervals: " + "; ".join(
            f"{r['slice']}: {rights[i]} (rest {_fmt(r['rest_error_mean'])})" for i, r in enumerate(rows[:30])
        )
        return to_svg(fig, uid, f"Worst slices: {measure}", desc, tight=False)


def _context(result: pl.DataFrame, max_slices: int) -> dict[str, Any]:
    req = request_of(result) or {}
    shown = result.head(max_slices)
    rows = []
    for i, r in enumerate(shown.iter_rows(named=True), 1):
        ci = f" [{_fmt(r['value_lo'])}, {_fmt(r['value_hi'])}]" if r["value_lo"] is not None else ""
        dci = (f" [{_fmt(r['difference_lo'], sign=True)}, {_fmt(r['difference_hi'], sign=True)}]"
               if r["difference_lo"] is not None else "")  # fmt: skip
        p = r["p_value_adjusted"] if r["p_value_adjusted"] is not None else r["p_value"]
        rows.append({
            "i": i, "slice": r["slice"], "level": r["level"], "n": f"{r['n']:,}", "n_v": r["n"],
            "error": _fmt(r["error_mean"]), "error_v": r["error_mean"], "ci": ci, "rest": _fmt(r["rest_error_mean"]),
            "difference": _fmt(r["difference"], sign=True), "difference_v": r["difference"], "dci": dci, "p": _p(p),
            "p_v": p, "score": _fmt(r["score"]), "score_v": r["score"],
            "significant": p is not None and math.isfinite(p) and p < 0.05,
        })  # fmt: skip
    what = (f"errors = {req['errors']}" if req.get("errors") else f"the {req['metric'].replace('_', ' ')}"
            if req.get("metric") else "the errors")  # fmt: skip
    methods = sorted({m for m in [*shown["ci_method"].drop_nulls(), *shown["test"].drop_nulls()]})
    adjust = req.get("p_adjust")
    return {
        "rows": rows, "hidden": max(0, result.height - shown.height), "what": what, "req": req,
        "n_evaluated": int(result["n_evaluated"][0]) if result.height else req.get("n_evaluated"),
        "rows_total": req.get("rows"), "overall": req.get("error_mean"),
        "methods": [(m, _METHODS.get(m, m)) for m in methods],
        "adjust": _ADJUST.get(adjust, adjust) if adjust else None,
        "has_adjusted": bool(result.height) and result["p_value_adjusted"].null_count() < result.height,
        "favorable": favorable_statement(req) if req.get("metric") else None,
        "fmt": _fmt,
    }  # fmt: skip


def slices_section(result: pl.DataFrame, *, env: Any, number: int | None = None, max_slices: int = 20,
                   uid: str = "pf-slices-chart") -> str:  # fmt: skip
    """The ``<section id="pf-slices">`` of a slice table (HTML text; ``env``: the page's jinja2 environment).

    Raises
    ------
    TypeError
        ``result`` is not a :func:`polfair.slice_scan` result.
    """
    if not is_slice_table(result):
        msg = "slices= takes the result of polfair.slice_scan (a DataFrame of slices)"
        raise TypeError(msg)
    ctx = _context(result, max_slices)
    req = ctx["req"]
    measure = req["metric"].replace("_", " ") if req.get("metric") else "mean error"
    ctx |= {"number": number, "chart": slices_chart(result.head(max_slices), uid=uid, overall=ctx["overall"],
                                                    measure=measure) if result.height else None}  # fmt: skip
    return env.get_template("slices_section.html.j2").render(**ctx).strip() + "\n"


def render_slices(result: pl.DataFrame, *, title: str, generated_at: str, fragment: bool, env: Any,
                  provenance: Mapping[str, Any] | None = None, max_slices: int = 20) -> str:  # fmt: skip
    """A page of its own for a slice table (see :func:`polfair.outputs.html.to_html`)."""
    section = slices_section(result, env=env, max_slices=max_slices)
    req = request_of(result) or {}
    prov = dict(provenance or {})
    rows = req.get("rows")
    facts = [(k, v) for k, v in (("input", prov.get("source")), ("rows", f"{rows:,}" if rows is not None else None),
                                 ("label (y_true)", req.get("y_true")), ("prediction (y_pred)", req.get("y_pred")),
                                 ("score (y_score)", req.get("y_score")), ("threshold", req.get("threshold")),
                                 ("features", ", ".join(req.get("features", [])) or None),
                                 ("errors", req.get("errors")), ("metric", req.get("metric")),
                                 ("weight", req.get("weight")), ("alpha", req.get("alpha")),
                                 ("k", req.get("k")), ("max_level", req.get("max_level")),
                                 ("min_support (rows)", req.get("min_support_rows")),
                                 ("confidence level", req.get("ci")), ("p-value adjustment", req.get("p_adjust")),
                                 ("scans of the input", req.get("scans"))) if v is not None]  # fmt: skip
    return env.get_template("slices.html.j2").render(title=title, generated_at=generated_at, fragment=fragment,
                                                     section=section, facts=facts).strip() + "\n"  # fmt: skip
