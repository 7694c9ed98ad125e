"""The HTML page of a regression report (:func:`polfair.regression_report`).

:func:`polfair.outputs.html.to_html` sends a regression report here (its group rows carry
``mean_error`` and no classification rate). The page: provenance; the population's metrics;
findings (groups whose mean error, mean absolute error or mean prediction differs from the
reference group's, by the report's own intervals and adjusted p-values); per attribute set a forest
plot of the differences to the reference (mean error, MAE, mean prediction, with their intervals),
the groups' prediction distributions (histogram and distribution functions, drawn from the
report's cell table) and a group table; the spreads per attribute set (fairlearn's difference,
the bounded group loss, the largest KS distance); methods.

The prediction distributions need the regression cell table: the report of
:func:`polfair.regression_report` carries it in memory
(:func:`polfair.core.regression.regression_cells_of`), or pass ``cells=`` (a table of
:func:`polfair.regression_counts`); without it (a report read back from a file) the page says so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from polfair.outputs.html import _charts as ch
from polfair.outputs.html._view import by_columns, fmt_num, normalize

__all__ = ["distribution_svg", "forest_svg", "is_regression_report", "render_regression"]

#: Differences drawn in the forest plot: (metric, panel title).
FOREST_METRICS = (
    ("mean_error", "mean error ŷ − y"),
    ("mean_absolute_error", "mean absolute error"),
    ("mean_prediction", "mean prediction ŷ"),
)
#: Group-table columns: (metric, header, with interval).
TABLE_METRICS = (
    ("mean_outcome", "mean outcome y", False), ("mean_prediction", "mean pred. ŷ", False),
    ("mean_error", "mean error ŷ − y", True), ("mean_absolute_error", "MAE", True),
    ("root_mean_squared_error", "RMSE", False), ("r2_score", "r²", False), ("ks_distance", "KS distance", False),
)  # fmt: skip
POPULATION_METRICS = (
    ("mean_outcome", "mean outcome"), ("mean_prediction", "mean prediction"), ("mean_error", "mean error"),
    ("mean_absolute_error", "MAE"), ("root_mean_squared_error", "RMSE"), ("r2_score", "r²"),
)  # fmt: skip
_CI_METHODS = {
    "t": "Student t interval of a mean, ν = n − 1",
    "t_ess": "Student t interval on Kish's effective sample size (weighted data)",
    "log_t": "t interval on the log scale (MAE, MSE: right-skewed positive means); RMSE: square roots of the MSE's",
    "delta": "delta method (r² = 1 − MSE/Var(y)), normal limits",
    "projection": "projection of Šidák-simultaneous group intervals (spreads, group max/min)",
}
_TESTS = {
    "welch": "Welch's t test (Welch–Satterthwaite ν; unweighted equal to scipy.stats.ttest_ind(equal_var=False))",
    "z_delta": "normal test of the r² difference (delta method)",
    "ks_asymptotic": "asymptotic two-sample Kolmogorov–Smirnov test at the histogram's distance",
    "welch_anova": "Welch's heteroscedastic one-way ANOVA (statsmodels anova_oneway(use_var='unequal'))",
    "cochran_q": "Cochran's Q test of heterogeneity (r²)",
}
#: Groups drawn in a distribution chart (the reference first, then the largest).
MAX_DISTRIBUTIONS = 6
#: Coarse histogram bins of the distribution chart.
HIST_BINS = 40


def is_regression_report(report: pl.DataFrame) -> bool:
    """Whether ``report`` is a regression report: group rows of ``mean_error``, no classification rate."""
    if "metric" not in report.columns:
        return False
    metrics = set(report["metric"].cast(pl.String).unique().to_list())
    return "mean_error" in metrics and not metrics & {"selection_rate", "base_rate", "accuracy"}


def _f(x: Any, digits: int = 2, sign: bool = False) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    return f"{x:+.{digits}f}" if sign else f"{x:.{digits}f}"


def _p(x: Any) -> str:
    if x is None:
        return "–"
    return "< 1e-300" if x == 0 else f"{x:.2g}"


def _snapshot(report: pl.DataFrame, by: Sequence[str], snapshot: Mapping[str, Any] | None) -> dict[str, Any]:
    if not by:
        return {}
    if snapshot:
        return dict(snapshot)
    return report.select(by).unique().sort(by, nulls_last=True).row(-1, named=True)


def _sets(report: pl.DataFrame, max_sets: int) -> list[str]:
    names = report["attribute"].drop_nulls().unique(maintain_order=True).to_list()
    return sorted(names, key=lambda a: (a.count(" & "), names.index(a)))[:max_sets]


def _groups(part: pl.DataFrame, top_k: int) -> tuple[list[dict[str, Any]], int]:
    """Group rows of one attribute set as dicts (metric -> row), the reference first, then by size."""
    rows: dict[str, dict[str, Any]] = {}
    for r in part.iter_rows(named=True):
        g = "null" if r["group"] is None else str(r["group"])
        entry = rows.setdefault(g, {"group": g, "n": r["n"], "metrics": {}, "key": r.get("group_key")})
        entry["metrics"][r["metric"]] = r
    ref = part["reference_group"].drop_nulls().cast(pl.String)
    reference = ref[0] if ref.len() else None
    for entry in rows.values():
        entry["is_ref"] = entry["group"] == reference
    ordered = sorted(rows.values(), key=lambda e: (not e["is_ref"], -(e["n"] or 0), e["group"]))
    return ordered[:top_k], max(0, len(ordered) - top_k)


def _findings(sets: list[dict[str, Any]], alpha: float | None) -> list[str]:
    """One sentence per group of a single attribute whose mean error, MAE or mean prediction differs
    from its reference group's (adjusted p below ``alpha``), naming each such difference.
    """
    out: list[str] = []
    names = {"mean_error": "mean error", "mean_absolute_error": "MAE", "mean_prediction": "mean prediction"}
    for s in sets:
        if s["order"] != 1 or alpha is None:
            continue
        for g in s["groups"]:
            if g["is_ref"]:
                continue
            parts = []
            for m, _ in FOREST_METRICS:
                r = g["metrics"].get(m) or {}
                d, p = r.get("difference"), r.get("p_value_adjusted")
                if d is None or p is None or p >= alpha:
                    continue
                lo, hi = r.get("difference_lo"), r.get("difference_hi")
                parts.append(f"{names[m]} {_f(d, sign=True)} [{_f(lo, sign=True)}, {_f(hi, sign=True)}] (p {_p(p)})")
            if not parts:
                continue
            own = g["metrics"].get("mean_error") or {}
            me = own.get("value")
            bias = "" if me is None else _bias_words(me, own.get("value_lo"), own.get("value_hi"))
            out.append(f"{s['attribute']} = {g['group']} ({g['n']:,} rows) vs {s['reference']}: " + "; ".join(parts)
                       + (f"; its own mean error is {_f(me, sign=True)}{bias}" if me is not None else ""))  # fmt: skip
    return out


def _bias_words(me: float, lo: float | None, hi: float | None) -> str:
    """What a group's mean error says, by its interval: over- or under-predicted only when the whole
    interval is on that side of 0 (without an interval, the sign alone, said so).
    """
    if lo is None or hi is None:
        side = "over" if me > 0 else "under" if me < 0 else None
        return f" — {side}-predicted on average (no interval)" if side else ""
    if lo > 0:
        return f" — over-predicted on average (interval [{_f(lo, sign=True)}, {_f(hi, sign=True)}] above 0)"
    if hi < 0:
        return f" — under-predicted on average (interval [{_f(lo, sign=True)}, {_f(hi, sign=True)}] below 0)"
    return f" — not clearly over- or under-predicted (its interval [{_f(lo, sign=True)}, {_f(hi, sign=True)}] contains 0)"


# ---------------------------------------------------------------- charts


def forest_svg(groups: Sequence[dict[str, Any]], *, attribute: str, uid: str) -> str:
    """Differences to the reference of the mean error, MAE and mean prediction, one panel each."""
    k = max(1, len(groups))
    labels = [ch.short_label(g["group"], 28) + ("  (ref)" if g["is_ref"] else "") for g in groups]
    left = 0.3 + 0.085 * max(len(t) for t in labels)
    panel, gap = 2.6, 0.35
    width, height = left + 3 * panel + 2 * gap + 0.2, 0.95 + 0.3 * k
    colour = ch.OKABE_ITO["blue"]
    max_n = max([g["n"] or 0 for g in groups] + [1])
    with ch.chart_style():
        fig = ch.new_figure(width, height)
        for j, (metric, title) in enumerate(FOREST_METRICS):
            x0 = left + j * (panel + gap)
            ax = fig.add_axes((x0 / width, 0.5 / height, panel / width, (0.3 * k) / height))
            xs = [0.0]
            for g in groups:
                r = g["metrics"].get(metric) or {}
                xs += [v for v in (r.get("difference"), r.get("difference_lo"), r.get("difference_hi"))
                       if v is not None and math.isfinite(v)]  # fmt: skip
            lo_x, hi_x = min(xs), max(xs)
            span = max(hi_x - lo_x, 0.1)
            ax.set_xlim(lo_x - 0.1 * span, hi_x + 0.1 * span)
            ax.set_ylim(k - 0.5, -0.5)
            ax.axvline(0.0, color="#333333", lw=0.9, zorder=1)
            for y, g in enumerate(groups):
                if y % 2 == 0:
                    ax.axhspan(y - 0.5, y + 0.5, color="#F2F2F2", lw=0, zorder=-1)
                r = g["metrics"].get(metric) or {}
                d = r.get("difference")
                if g["is_ref"]:
                    ax.scatter([0.0], [y], s=40, marker="D", facecolors="white", edgecolors="black", zorder=3)
                    continue
                if d is None or not math.isfinite(d):
                    ax.text(0.0, y, "undefined", ha="center", va="center", color="#555555", fontsize=8.5)
                    continue
                p = r.get("p_value_adjusted")
                c = ch.OKABE_ITO["vermillion"] if p is not None and p < 0.05 else colour
                size = 18 + 140 * math.sqrt((g["n"] or 0) / max_n)
                ch.whisker_point(ax, y, d, r.get("difference_lo"), r.get("difference_hi"), c, size)
            ch.panel_axes(ax, labels, title, first=j == 0)
            ax.set_xlabel("difference to the reference", fontsize=8.5)
        desc = "; ".join(
            f"{g['group']}: " + ", ".join(
                f"{m} {_f((g['metrics'].get(m) or {}).get('difference'), sign=True)}" for m, _ in FOREST_METRICS
            )
            for g in groups if not g["is_ref"]
        )  # fmt: skip
        return ch.to_svg(fig, uid, f"Differences to the reference group by {attribute}", desc, tight=False)


def _distributions(cells: pl.DataFrame, keys: Sequence[str], groups: Sequence[dict[str, Any]],
                   bins_per_octave: int) -> list[dict[str, Any]]:  # fmt: skip
    """Per drawn group: the bins' midpoints, upper edges and weights (sorted by bin)."""
    from polfair.core.regression import bin_edges, common_units

    if not all(k in cells.columns for k in keys):
        return []
    if "w_exp" in cells.columns:  # the cells' weights on one unit (they are in units of 2^w_exp)
        cells = common_units(cells)[0]
    label = pl.concat_str([pl.col(k).cast(pl.String).fill_null("null") for k in keys], separator=" & ")
    hist = (
        cells.filter(pl.col("w") > 0)
        .group_by(label.alias("__group"), "bin")
        .agg(pl.col("w").sum(), pl.col("p_min").min(), pl.col("p_max").max())
        .sort("bin")
    )
    out = []
    for g in groups[:MAX_DISTRIBUTIONS]:
        h = hist.filter(pl.col("__group") == g["group"])
        if not h.height:
            continue
        lo, hi = bin_edges(h["bin"].to_numpy(), bins_per_octave)
        w = h["w"].to_numpy()
        out.append({"group": g["group"], "is_ref": g["is_ref"], "mid": (h["p_min"] + h["p_max"]).to_numpy() / 2,
                    "upper": hi, "lower": lo, "w": w / w.sum(),
                    "ks": (g["metrics"].get("ks_distance") or {}).get("value")})  # fmt: skip
    return out


def distribution_svg(dists: Sequence[dict[str, Any]], *, attribute: str, uid: str) -> str:
    """The groups' prediction distributions: a histogram (density) and distribution functions."""
    import numpy as np

    colours = ["#000000", *ch.SERIES_COLOURS]
    allmid = np.concatenate([d["mid"] for d in dists])
    allw = np.concatenate([d["w"] for d in dists])
    order = np.argsort(allmid)
    cum = np.cumsum(allw[order]) / allw.sum()
    sorted_mid = allmid[order]
    x_lo = float(sorted_mid[int(np.searchsorted(cum, 0.002))])
    x_hi = float(sorted_mid[min(int(np.searchsorted(cum, 0.998)), len(order) - 1)])
    if x_hi <= x_lo:
        x_lo, x_hi = x_lo - 0.5, x_hi + 0.5
    edges = np.linspace(x_lo, x_hi, HIST_BINS + 1)
    width_in = 10.2
    with ch.chart_style():
        fig = ch.new_figure(width_in, 3.1)
        ax1 = fig.add_axes((0.06, 0.17, 0.40, 0.72))
        ax2 = fig.add_axes((0.54, 0.17, 0.40, 0.72))
        for i, d in enumerate(dists):
            c = colours[i % len(colours)]
            name = ch.short_label(d["group"], 24) + (" (ref)" if d["is_ref"] else f" (KS {_f(d['ks'], 3)})")
            dens, _ = np.histogram(np.clip(d["mid"], x_lo, x_hi), bins=edges, weights=d["w"])
            dens = dens / np.diff(edges)
            ax1.stairs(dens, edges, color=c, lw=1.8 if d["is_ref"] else 1.4,
                       linestyle="-" if i < 4 else "--", label=name)  # fmt: skip
            xs = np.concatenate([[min(x_lo, float(d["lower"][0]))], d["upper"]])
            ys = np.concatenate([[0.0], np.cumsum(d["w"])])
            ax2.step(xs, ys, where="post", color=c, lw=1.8 if d["is_ref"] else 1.4,
                     linestyle="-" if i < 4 else "--", label=name)  # fmt: skip
        ax1.set_xlim(x_lo, x_hi)
        ax2.set_xlim(x_lo, x_hi)
        ax2.set_ylim(0, 1.01)
        ax1.set_title("prediction density (share per unit of ŷ)", fontsize=10, loc="left")
        ax2.set_title("distribution function of ŷ (KS = largest vertical gap to the reference)", fontsize=10,
                      loc="left")  # fmt: skip
        for ax in (ax1, ax2):
            ax.set_xlabel("prediction ŷ", fontsize=9)
            ax.grid(color="#E5E5E5", lw=0.6)
            ax.tick_params(labelsize=8.5)
        ax2.legend(fontsize=8.5, frameon=False, loc="upper left")
        desc = "; ".join(f"{d['group']}" + ("" if d["is_ref"] else f": KS {_f(d['ks'], 3)}") for d in dists)
        return ch.to_svg(fig, uid, f"Prediction distributions by {attribute}", desc)


# ---------------------------------------------------------------- page


def render_regression(
    report: Any,
    *,
    title: str,
    provenance: Mapping[str, Any],
    cells: pl.DataFrame | None = None,
    top_k: int = 20,
    max_sets: int = 40,
    by: Sequence[str] | None = None,
    snapshot: Mapping[str, Any] | None = None,
    generated_at: str,
    fragment: bool = False,
    env: Any,
) -> str:
    """The page of a regression report (see :func:`polfair.outputs.html.to_html`)."""
    from polfair.core.regression import BINS_PER_OCTAVE, regression_cells_of

    if cells is None:
        cells = regression_cells_of(report)
    rep = normalize(report)
    by_cols = by_columns(rep, by)
    snap = _snapshot(rep, by_cols, snapshot)
    if snap:
        rep = rep.filter(*[pl.col(c).eq_missing(v) for c, v in snap.items()])
        if cells is not None and all(c in cells.columns for c in snap):
            cells = cells.filter(*[pl.col(c).eq_missing(v) for c, v in snap.items()])
    rep = rep.with_columns(pl.col(c).cast(pl.String) for c in ("attribute", "metric"))
    ci = provenance.get("ci")
    has_ci = bool(rep["p_value_adjusted"].is_not_null().any())  # normalize() adds absent columns as nulls
    alpha = 1 - float(ci if isinstance(ci, (int, float)) else 0.95) if has_ci else None
    bins = int(provenance.get("bins_per_octave") or BINS_PER_OCTAVE)
    pop = {r["metric"]: r for r in rep.filter(pl.col("attribute").is_null()).iter_rows(named=True)}
    sets = []
    for i, attr in enumerate(_sets(rep, max_sets)):
        part = rep.filter(pl.col("attribute") == attr)
        grp, attr_rows = part.filter(pl.col("group").is_not_null()), part.filter(pl.col("group").is_null())
        groups, hidden = _groups(grp, top_k)
        reference = next((g["group"] for g in groups if g["is_ref"]), None)
        s: dict[str, Any] = {
            "attribute": attr, "order": attr.count(" & ") + 1, "id": f"set-{i}", "groups": groups,
            "hidden": hidden, "reference": reference,
            "spreads": {r["metric"]: r for r in attr_rows.iter_rows(named=True)},
        }  # fmt: skip
        s["forest"] = forest_svg(groups, attribute=attr, uid=f"rf-{i}") if len(groups) > 1 else None
        s["dist"] = None
        if cells is not None and s["order"] <= 2:
            dists = _distributions(cells, attr.split(" & "), groups, bins)
            if dists:
                s["dist"] = distribution_svg(dists, attribute=attr, uid=f"rd-{i}")
                s["dist_hidden"] = max(0, len(groups) - MAX_DISTRIBUTIONS)
        sets.append(s)
    methods = _methods(rep)
    ci_methods = sorted(set(rep["ci_method"].drop_nulls().cast(pl.String))) if "ci_method" in rep.columns else []
    tests = sorted(set(rep["test"].drop_nulls().cast(pl.String))) if "test" in rep.columns else []
    ctx = {
        "title": title, "generated_at": generated_at, "fragment": fragment, "provenance": _provenance(provenance, pop),
        "pop": pop, "pop_metrics": POPULATION_METRICS, "sets": sets, "table_metrics": TABLE_METRICS,
        "findings": _findings(sets, alpha), "alpha": alpha, "has_ci": has_ci,
        "snapshot": ", ".join(f"{k} = {v}" for k, v in snap.items()), "has_cells": cells is not None,
        "methods": methods, "ci_methods": [(c, _CI_METHODS.get(c, c)) for c in ci_methods],
        "tests": [(t, _TESTS.get(t, t)) for t in tests], "f": _f, "p": _p, "num": fmt_num,
        "level": f"{100 * (1 - alpha):.0f}%" if alpha is not None else None,
    }  # fmt: skip
    return env.get_template("regression.html.j2").render(**ctx).strip() + "\n"


_PROVENANCE = (
    ("source", "input"), ("rows", "rows"), ("y_true", "outcome (y_true)"), ("y_pred", "prediction (y_pred)"),
    ("weight", "weight"), ("protected", "protected attributes"), ("privileged", "reference groups"),
    ("reference", "reference policy"), ("by", "by"), ("ci", "confidence level"), ("p_adjust", "p-value adjustment"),
)  # fmt: skip


def _text(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return ", ".join(_text(v) for v in value)
    if isinstance(value, Mapping):
        return ", ".join(f"{k} = {_text(v)}" for k, v in sorted(value.items()))
    return "–" if value is None else str(value)


def _provenance(merged: Mapping[str, Any], pop: Mapping[str, Any]) -> list[tuple[str, str]]:
    rows = []
    for key, label in _PROVENANCE:
        v = merged.get(key)
        if key == "rows" and v is None and "num_instances" in pop:
            v = pop["num_instances"]["n"]
        if v is not None and v != [] and v != {}:
            rows.append((label, f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else _text(v)))
    from polfair.core.report.run_metadata import package_version

    rows.append(("polfair version", str(merged.get("polfair_version") or package_version())))
    return rows


def _methods(rep: pl.DataFrame) -> list[dict[str, str]]:
    from polfair.core.glossary import REGRESSION_REPORT_METRICS

    kinds = {"group": "group rows", "attribute": "attribute-set rows", "population": "population rows"}
    present = set(rep["metric"].unique().to_list())
    out = []
    for (kind, name), entry in REGRESSION_REPORT_METRICS.items():
        if name in present and not name.endswith(("_group_max", "_group_min")):
            out.append({"metric": name, "kind": kinds.get(kind, kind), "definition": entry.formula,
                        "source": entry.source.replace("``", "")})  # fmt: skip
    return out
