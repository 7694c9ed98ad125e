"""Sections of the HTML page for a score report and an adverse-impact battery.

:func:`polfair.outputs.html.to_html` takes ``scores=`` (the table of :func:`polfair.score_report`)
and ``adverse_impact=`` (the table of :func:`polfair.adverse_impact`) and adds a section for each
to the fairness report's page, before its methods; given one of them as the report itself, it
makes a page of that section alone (:func:`render_sections_page`).

* **Scores**: per attribute set, a chart of each group's ROC AUC and Brier score with their
  confidence intervals (the reference group and the whole population marked), and a table of
  ROC AUC, its difference to the reference group with interval and adjusted p-value, average
  precision, Brier score, expected calibration error and ABROCA; the spread of the AUC across
  the groups with its heterogeneity test.
* **Adverse impact**: per attribute set, a chart of the impact ratios against the four-fifths
  line, and the battery's table: selection (or scoring) rates, impact ratios, the four-fifths
  rule, the two-standard-deviation z test, Fisher's exact test, the shortfall, the flip checks
  and the groups left out with the reason.

Every number is the table's own (this module computes no statistic): the intervals and tests are
those :func:`polfair.score_report` computed; the adverse-impact battery has tests, not intervals.
With ``by`` columns, the sections show one ``by`` value (the last in sort order, or ``snapshot``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from polfair.outputs.html import _charts as ch

__all__ = [
    "adverse_impact_section",
    "adverse_impact_svg",
    "adverse_impact_view",
    "is_adverse_impact",
    "is_score_report",
    "render_sections_page",
    "score_section",
    "score_svg",
    "score_view",
]

#: Score metrics in the order of the table (metric, header, shown with its interval).
SCORE_COLUMNS = (
    ("roc_auc", "ROC AUC", True), ("average_precision", "average precision", True),
    ("brier_score", "Brier score", True), ("expected_calibration_error", "ECE", False), ("abroca", "ABROCA", True),
)  # fmt: skip
#: Chart panels of the score section: (metric, title).
SCORE_PANELS = (("roc_auc", "ROC AUC (higher ranks better)"), ("brier_score", "Brier score (lower is better)"))
_SCORE_DEFINITIONS = (
    ("roc_auc", "P(a row with the favorable label scores above one without); 0.5 is chance", "DeLong et al. 1988 "
     "(intervals and paired tests: DeLong's variance)"),
    ("average_precision", "area under the precision-recall curve (scikit-learn's step sum)", "logit interval"),
    ("brier_score", "mean squared difference between the score and the label (0 is perfect)", "Brier 1950; t interval"),
    ("expected_calibration_error", "mean |observed rate − mean score| over score bins, weighted by the bin's size",
     "Naeini et al. 2015"),
    ("abroca", "area between the group's ROC curve and the reference group's (0: the same ranking quality)",
     "Gardner, Brooks & Baker 2019; bootstrap percentile interval"),
)  # fmt: skip
_SCORE_TESTS = {
    "delong": "DeLong's test of two independent AUCs",
    "welch": "Welch's t test (Brier scores)",
    "cochran_q": "Cochran's Q test of heterogeneity of the groups' AUCs",
    "welch_anova": "Welch's heteroscedastic ANOVA of the groups' Brier scores",
}
#: The four-fifths line of 29 CFR 1607.4(D).
FOUR_FIFTHS = 0.8


def is_score_report(frame: pl.DataFrame) -> bool:
    """Whether ``frame`` is the table of :func:`polfair.score_report` (score metrics, no classification rate)."""
    if "metric" not in frame.columns or "attribute" not in frame.columns:
        return False
    metrics = set(frame["metric"].cast(pl.String).unique().to_list())
    return bool(metrics & {"roc_auc", "brier_score"}) and not metrics & {"selection_rate", "mean_error", "base_rate"}


def is_adverse_impact(frame: pl.DataFrame) -> bool:
    """Whether ``frame`` is the table of :func:`polfair.adverse_impact`."""
    return {"attribute", "group", "impact_ratio", "four_fifths_pass", "selection_rate"} <= set(frame.columns)


def _frame(table: Any, what: str) -> pl.DataFrame:
    if isinstance(table, pl.LazyFrame):
        table = table.collect()
    if not isinstance(table, pl.DataFrame):
        msg = f"{what} must be a polars DataFrame (the table of pf.{what}), got {type(table).__name__}"
        raise TypeError(msg)
    if table.height == 0:
        msg = f"the {what} table is empty (0 rows): there is nothing to show"
        raise ValueError(msg)
    cats = [c for c, t in table.schema.items() if isinstance(t, (pl.Categorical, pl.Enum))]
    return table.with_columns(pl.col(c).cast(pl.String) for c in cats) if cats else table


def _snapshot(frame: pl.DataFrame, snapshot: Mapping[str, Any] | None) -> tuple[pl.DataFrame, str]:
    """The rows of one ``by`` value (``snapshot``, default the last in sort order) and its label.

    The ``by`` columns are those before ``attribute`` (both tables put them first).
    """
    by = frame.columns[: frame.columns.index("attribute")]
    if not by:
        return frame, ""
    if snapshot is None:
        last = frame.select(by).unique().sort(by, nulls_last=False).row(-1)
        snapshot = dict(zip(by, last))
    bad = [k for k in snapshot if k not in by]
    if bad:
        msg = f"snapshot={dict(snapshot)!r}: {bad} are not by columns of the table (by columns: {by})"
        raise ValueError(msg)
    part = frame.filter(*[pl.col(k).eq_missing(v) for k, v in snapshot.items()])
    if part.height == 0:
        msg = f"snapshot={dict(snapshot)!r} selects no row of the table"
        raise ValueError(msg)
    return part, ", ".join(f"{k} = {v}" for k, v in snapshot.items())


def _num(x: Any, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    return f"{x:.{digits}f}"


def _p(x: Any) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    return "< 0.001" if x < 0.001 else f"{x:.3f}"


# ---------------------------------------------------------------- scores


def score_view(report: Any, *, top_k: int = 20, snapshot: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What the score section shows: the population's row per metric and, per attribute set, its groups.

    Groups per set: the reference group first, then the largest (up to ``top_k``); the others are counted.
    """
    frame, label = _snapshot(_frame(report, "score_report"), snapshot)
    pop = {r["metric"]: r for r in frame.filter(pl.col("attribute").is_null()).iter_rows(named=True)}
    sets = []
    for i, attr in enumerate(frame["attribute"].drop_nulls().unique(maintain_order=True).to_list()):
        part = frame.filter(pl.col("attribute") == attr)
        spread = {r["metric"]: r for r in part.filter(pl.col("group").is_null()).iter_rows(named=True)}
        rows = part.filter(pl.col("group").is_not_null())
        groups: dict[str, dict[str, Any]] = {}
        for r in rows.iter_rows(named=True):
            g = groups.setdefault(r["group"], {"group": r["group"], "n": r["n"], "metrics": {},
                                               "is_ref": r["group"] == r["reference_group"]})  # fmt: skip
            g["metrics"][r["metric"]] = r
        order = sorted(groups.values(), key=lambda g: (not g["is_ref"], -(g["n"] or 0), str(g["group"])))
        shown = order[:top_k]
        reference = next((g["group"] for g in order if g["is_ref"]), None)
        sets.append({
            "attribute": attr, "id": f"pf-scores-{i}", "groups": shown, "hidden": len(order) - len(shown),
            "reference": reference, "spread": spread,
            "svg": score_svg(shown, attribute=attr, uid=f"pf-sc-{i}", population=pop) if len(shown) > 1 else None,
        })  # fmt: skip
    methods = sorted(set(frame["ci_method"].drop_nulls().to_list())) if "ci_method" in frame.columns else []
    tests = sorted(set(frame["test"].drop_nulls().to_list())) if "test" in frame.columns else []
    return {
        "snapshot": label, "population": pop, "sets": sets, "columns": SCORE_COLUMNS,
        "definitions": [d for d in _SCORE_DEFINITIONS if d[0] in set(frame["metric"].to_list())],
        "ci_methods": methods, "tests": [(t, _SCORE_TESTS.get(t, t)) for t in tests],
        "has_intervals": bool(frame["value_lo"].is_not_null().any()) if "value_lo" in frame.columns else False,
    }  # fmt: skip


def score_svg(groups: Sequence[dict[str, Any]], *, attribute: str, uid: str,
              population: Mapping[str, Any] | None = None) -> str:  # fmt: skip
    """Each group's ROC AUC and Brier score with their intervals, one panel each (inline SVG)."""
    k = max(1, len(groups))
    labels = [ch.short_label(str(g["group"]), 28) + ("  (ref)" if g["is_ref"] else "") for g in groups]
    left = 0.3 + 0.085 * max(len(t) for t in labels)
    panel, gap = 2.8, 0.35
    width, height = left + len(SCORE_PANELS) * (panel + gap), 0.95 + 0.3 * k
    max_n = max([g["n"] or 0 for g in groups] + [1])
    with ch.chart_style():
        fig = ch.new_figure(width, height)
        for j, (metric, title) in enumerate(SCORE_PANELS):
            ax = fig.add_axes(((left + j * (panel + gap)) / width, 0.5 / height, panel / width, (0.3 * k) / height))
            xs = [v for g in groups for v in (
                (g["metrics"].get(metric) or {}).get(key) for key in ("value", "value_lo", "value_hi"))
                if v is not None and math.isfinite(v)]  # fmt: skip
            overall = (population or {}).get(metric, {}).get("value")
            if overall is not None and math.isfinite(overall):
                xs.append(overall)
                ax.axvline(overall, color="#555555", lw=0.9, ls="--", zorder=1)
            lo_x, hi_x = (min(xs), max(xs)) if xs else (0.0, 1.0)
            pad = max(hi_x - lo_x, 0.05) * 0.08
            ax.set_xlim(lo_x - pad, hi_x + pad)
            ax.set_ylim(k - 0.5, -0.5)
            for y, g in enumerate(groups):
                if y % 2 == 0:
                    ax.axhspan(y - 0.5, y + 0.5, color="#F2F2F2", lw=0, zorder=-1)
                r = g["metrics"].get(metric) or {}
                v, lo, hi = r.get("value"), r.get("value_lo"), r.get("value_hi")
                if v is None or not math.isfinite(v):
                    ax.text((lo_x + hi_x) / 2, y, "undefined", ha="center", va="center", color="#555555", fontsize=8.5)
                    continue
                p = r.get("p_value_adjusted")
                colour = ch.OKABE_ITO["vermillion"] if p is not None and p < 0.05 else ch.OKABE_ITO["blue"]
                colour = "black" if g["is_ref"] else colour
                if g["is_ref"]:
                    ch.whisker_point(ax, y, v, lo, hi, colour, 0)
                    ax.scatter([v], [y], s=46, marker="D", facecolors="white", edgecolors="black", zorder=3)
                else:
                    ch.whisker_point(ax, y, v, lo, hi, colour, 18 + 140 * math.sqrt((g["n"] or 0) / max_n))
            ch.panel_axes(ax, labels, title, first=j == 0)
        desc = "; ".join(
            f"{g['group']}: " + ", ".join(
                f"{m} {_num((g['metrics'].get(m) or {}).get('value'))}" for m, _ in SCORE_PANELS)
            for g in groups
        )  # fmt: skip
        return ch.to_svg(fig, uid, f"ROC AUC and Brier score by {attribute}, with confidence intervals", desc,
                         tight=False)  # fmt: skip


def score_section(report: Any, *, env: Any, number: int, top_k: int = 20,
                  snapshot: Mapping[str, Any] | None = None) -> dict[str, str]:  # fmt: skip
    """The score section: ``{"id", "title", "nav", "html"}`` (the HTML is a ``<section>`` element)."""
    view = score_view(report, top_k=top_k, snapshot=snapshot)
    title = "Scores: ranking and calibration by group"
    html = env.get_template("scores.html.j2").render(view=view, number=number, title=title, num=_num, p=_p)
    return {"id": "pf-scores", "title": title, "nav": "Scores", "html": html}


# ---------------------------------------------------------------- adverse impact


def adverse_impact_view(table: Any, *, snapshot: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What the adverse-impact section shows: per attribute set, its rows and counts of findings."""
    frame, label = _snapshot(_frame(table, "adverse_impact"), snapshot)
    scoring = "median_score" in frame.columns and frame["median_score"].is_not_null().any()
    sets = []
    for i, attr in enumerate(frame["attribute"].unique(maintain_order=True).to_list()):
        rows = frame.filter(pl.col("attribute") == attr).to_dicts()
        judged = [r for r in rows if not r.get("excluded")]
        fails = [r for r in judged if r.get("four_fifths_pass") is False]
        sig = [r for r in judged if r.get("significant") is True]
        sets.append({
            "attribute": attr, "id": f"pf-ai-{i}", "rows": rows, "reference": rows[0].get("reference_group"),
            "fails": fails, "significant": sig, "both": [r for r in fails if r.get("significant") is True],
            "svg": adverse_impact_svg(rows, attribute=attr, uid=f"pf-aic-{i}") if len(rows) > 1 else None,
        })  # fmt: skip
    return {"snapshot": label, "sets": sets, "scoring": bool(scoring),
            "median": frame["median_score"].drop_nulls().to_list()[:1] if scoring else []}  # fmt: skip


def adverse_impact_svg(rows: Sequence[dict[str, Any]], *, attribute: str, uid: str) -> str:
    """Impact ratios of the groups against the four-fifths line (inline SVG)."""
    k = max(1, len(rows))
    labels = [ch.short_label(str(r["group"]), 28) for r in rows]
    left = 0.3 + 0.085 * max(len(t) for t in labels)
    panel = 3.4  # with the labels, narrow enough to be read on a phone without scrolling (min-width 340 px)
    width, height = left + panel + 0.3, 0.9 + 0.3 * k
    values = [r["impact_ratio"] for r in rows if r.get("impact_ratio") is not None and math.isfinite(r["impact_ratio"])]
    hi_x = max([1.0, *values]) * 1.05
    with ch.chart_style():
        fig = ch.new_figure(width, height)
        ax = fig.add_axes((left / width, 0.7 / height, panel / width, (0.3 * k) / height))
        ax.set_xlim(0, hi_x)
        ax.set_ylim(k - 0.5, -0.5)
        ax.axvspan(0, FOUR_FIFTHS, color=ch.OKABE_ITO["vermillion"], alpha=0.07, lw=0, zorder=0)
        ax.axvline(FOUR_FIFTHS, color=ch.OKABE_ITO["vermillion"], lw=1.0, ls="--", zorder=1)
        ax.axvline(1.0, color="#333333", lw=0.8, zorder=1)
        for y, r in enumerate(rows):
            if y % 2 == 0:
                ax.axhspan(y - 0.5, y + 0.5, color="#F2F2F2", lw=0, zorder=-1)
            v = r.get("impact_ratio")
            if r.get("excluded") or v is None or not math.isfinite(v):
                ax.text(hi_x / 2, y, "left out: " + str(r.get("excluded_reason") or "undefined"), ha="center",
                        va="center", color="#555555", fontsize=8.5)  # fmt: skip
                continue
            fail = r.get("four_fifths_pass") is False
            style = ch.STATUS_STYLE["violation" if fail else "ok"]
            ax.scatter([v], [y], s=60, marker=style[1], color=style[0], zorder=3)
        ax.set_yticks(range(k))
        ax.set_yticklabels(labels)
        ax.set_xlabel("impact ratio (rate / the highest group's rate)\ndashed: four-fifths", fontsize=8.5)
        ax.tick_params(axis="x", labelsize=8.5)
        ax.grid(axis="x", color="#DDDDDD", lw=0.6, zorder=0)
        desc = "; ".join(f"{r['group']}: {_num(r.get('impact_ratio'), 2)}" for r in rows)
        return ch.to_svg(fig, uid, f"Impact ratios by {attribute} against the four-fifths line", desc, tight=False)


def adverse_impact_section(table: Any, *, env: Any, number: int,
                           snapshot: Mapping[str, Any] | None = None) -> dict[str, str]:  # fmt: skip
    """The adverse-impact section: ``{"id", "title", "nav", "html"}`` (the HTML is a ``<section>`` element)."""
    view = adverse_impact_view(table, snapshot=snapshot)
    title = "Adverse impact: the four-fifths rule and its tests"
    html = env.get_template("adverse_impact.html.j2").render(view=view, number=number, title=title, num=_num,
                                                             p=_p, four_fifths=FOUR_FIFTHS)  # fmt: skip
    return {"id": "pf-adverse-impact", "title": title, "nav": "Adverse impact", "html": html}


# ---------------------------------------------------------------- a page of sections alone


def render_sections_page(sections: Sequence[Mapping[str, str]], *, env: Any, title: str, generated_at: str,
                         provenance: Sequence[tuple[str, str]], fragment: bool = False) -> str:  # fmt: skip
    """A page of these sections alone (a score report or an adverse-impact table given as the report)."""
    return env.get_template("sections_page.html.j2").render(
        sections=sections, title=title, generated_at=generated_at, provenance=provenance, fragment=fragment,
    ).strip() + "\n"  # fmt: skip
