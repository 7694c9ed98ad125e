"""A fairness report as one self-contained HTML file: verdict, forest plots, tables, methods.

``to_html(report)`` returns the page as a string, ``write_html(report, path)`` writes it, and
``HtmlReport(report)`` shows it inline in Jupyter (``_repr_html_``). The page is built from the
long report alone (no second pass over the data) with jinja2 (autoescaping on: group values are
user data) and matplotlib (charts as inline SVG). Both are the optional extra
``pip install 'polfair[report]'``; ``import polfair`` never imports them.

The file has no external reference of any kind (no CDN, no ``src``/``href`` outside the page,
no web fonts): it opens offline, can be mailed or archived, and renders the same with scripting
disabled (a few lines of inline JavaScript only make the group tables sortable).
"""

from __future__ import annotations

import datetime as _dt
import json
import math
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from polfair.core.docstrings import with_setup
from polfair.core.proba import estimated_note
from polfair.exceptions import PolfairError
from polfair.outputs.html import _view
from polfair.outputs.html._view import ViewOptions, build_view
from polfair.outputs.summary import favorable_statement

__all__ = ["HtmlReport", "require_extra", "to_html", "write_html"]

_EXTRA = "pip install 'polfair[report]'"

#: Sources and definitions of the attribute- and population-level indices (not in METRICS).
_INDEX_DOCS = {
    "smoothed_empirical_differential_fairness": (
        (
            "ε of smoothed empirical differential fairness on the labels: the largest |log ratio| of the "
            "(Dirichlet-smoothed, concentration 1 by default) favorable or unfavorable rates over every pair of groups"
        ),
        "Foulds, Islam, Keya & Pan, 'An Intersectional Definition of Fairness', ICDE 2020; aif360 0.6.1",
    ),
    "smoothed_empirical_differential_fairness_predictions": (
        "the same ε on the predictions (selection rates)",
        "Foulds et al. 2020; aif360 0.6.1",
    ),
    "differential_fairness_bias_amplification": (
        "ε on the predictions minus ε on the labels (all attributes jointly)",
        "Foulds et al. 2020; aif360 0.6.1",
    ),
    "between_group_generalized_entropy_index": (
        (
            "generalized entropy index GE(α) of the benefits b = ŷ − y + 1 when every individual gets the mean "
            "benefit of their group"
        ),
        "Speicher et al., 'A Unified Approach to Quantifying Algorithmic Unfairness', KDD 2018; aif360 0.6.1",
    ),
    "between_group_theil_index": ("GE(1) of the group-mean benefits", "Speicher et al. 2018; aif360 0.6.1"),
    "between_group_variance_base_rate": (
        "variance of the groups' base rates with the sampling noise taken out (may be below 0)",
        "Lum, Zhang & Bower, 'De-biasing \"bias\" measurement', FAccT 2022",
    ),
    "between_group_variance_selection_rate": (
        "variance of the groups' selection rates with the sampling noise taken out (may be below 0)",
        "Lum, Zhang & Bower, 'De-biasing \"bias\" measurement', FAccT 2022",
    ),
    "between_group_coefficient_of_variation": (
        "sqrt(2·GE(2)) of the group-mean benefits",
        "Speicher et al. 2018; aif360 0.6.1",
    ),
    "between_all_groups_generalized_entropy_index": (
        "GE(α) of the group-mean benefits over the intersection of all attributes",
        "Speicher et al. 2018; aif360",
    ),
    "between_all_groups_theil_index": ("GE(1), intersection of all attributes", "Speicher et al. 2018; aif360"),
    "between_all_groups_coefficient_of_variation": (
        "sqrt(2·GE(2)), intersection of all attributes",
        "Speicher et al. 2018; aif360",
    ),
    "generalized_entropy_index": ("GE(α) of the individual benefits", "Speicher et al. 2018; aif360 0.6.1"),
    "theil_index": ("GE(1) of the individual benefits", "Speicher et al. 2018; aif360 0.6.1"),
    "coefficient_of_variation": ("sqrt(2·GE(2)) of the individual benefits", "Speicher et al. 2018; aif360"),
}
_CI_METHODS = {
    "score": "score intervals: Wilson for rates, Newcombe's hybrid score for differences, MOVER-R with "
    "Wilson limits for ratios (Newcombe 1998; Donner & Zou 2012)",
    "score_ess": "score intervals on the Kish effective sample size (weighted data)",
    "mover": "MOVER: the disparity's interval recovered from its parts' score intervals (Zou & Donner 2008)",
    "projection": "projection: the range of the quantity over the group intervals (conservative)",
    "bootstrap_bc": "bias-corrected bootstrap over cells",
    "delta_bc": "bias-corrected normal interval from the analytic (second-order) moments of the bootstrap over cells",
    "bootstrap_percentile": "percentile bootstrap",
    "jackknife_t": "delete-a-group jackknife with t quantiles over cluster buckets",
    "bound": "bound from the interval of the hard-prediction rate",
}
_TESTS = {
    "chi2_n1": "'N−1' χ² test of two proportions (Campbell 2007)",
    "fisher": "Fisher's exact test (small expected counts)",
    "z_ess": "z test on the effective sample size (weighted data)",
    "chi2_2df": "2-df χ² test (odds-based disparities)",
    "chi2_homogeneity": "χ² test of homogeneity over the groups",
    "mc_exact": "Monte Carlo exact test of homogeneity",
    "chi2_moments": "χ² test of homogeneity on the exact moments (small expected counts)",
    "jackknife_t": "jackknife t test",
}
#: The page's one-sentence explanation of its marks (the terminal summary has the same one).
_MARKS = (
    "Every status is the report's own (the rule of polfair.core.report.status): ✓ ok = the value lies inside the band; "
    "✗ violation = the value and its whole confidence interval lie outside the band; ? inconclusive = the value is "
    "outside the band but its interval reaches into it; … insufficient data = the group or its reference has fewer "
    "rows than the minimum sample size, or the value is undefined."
)
_POLICIES = (
    (
        "Signs: difference = group − reference, ratio = group / reference (aif360's unprivileged − "
        "privileged when the reference is the privileged group); a ratio below 1 means the group has the "
        "lower rate."
    ),
    (
        "Undefined values are null, never a silent 0 or ∞: a rate with an empty denominator, a ratio to a "
        "reference rate of 0. Charts and tables show them greyed with the reason."
    ),
    (
        'A null protected value is its own group, shown as "null"; rows with a null label, prediction, '
        "score or weight are counted in n and n_missing and excluded from every rate."
    ),
)


def require_extra() -> Any:
    """jinja2 (returned) after checking that the page's extra is installed: jinja2 and matplotlib.

    The command line calls it before its pass (``--html`` without the extra fails at once, before
    ``--out`` or ``--append`` is written).

    Raises
    ------
    ImportError
        jinja2 or matplotlib is missing; the message names ``pip install 'polfair[report]'``.
    """
    try:
        import jinja2
        import matplotlib  # noqa: F401
    except ImportError as exc:
        msg = f"the HTML report needs jinja2 and matplotlib: {_EXTRA} (missing: {exc.name})"
        raise ImportError(msg) from exc
    return jinja2


def _env() -> Any:
    jinja2 = require_extra()
    loader = jinja2.FunctionLoader(_template_source)
    env = jinja2.Environment(loader=loader, autoescape=True, trim_blocks=True, lstrip_blocks=True,
                             undefined=jinja2.StrictUndefined)  # fmt: skip
    env.filters.update(
        ratio=_view.fmt_ratio, diff=_view.fmt_diff, pct=_view.fmt_pct, num=_view.fmt_num, idx=_view.fmt_index,
        idx_ci=_view.fmt_index_interval, metric=_view.fmt_metric, interval=_view.fmt_interval, band=_view.fmt_band,
        sortkey=_sortkey,
    )  # fmt: skip
    return env


def _template_source(name: str) -> str:
    return resources.files("polfair.outputs.html").joinpath("templates", name).read_text(encoding="utf-8")


def _sortkey(x: Any) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return ""
    return repr(float(x)) if isinstance(x, (int, float)) and not isinstance(x, bool) else str(x)


def _stringify(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, (list, tuple)):
        return ", ".join(_stringify(v) for v in value)
    if isinstance(value, Mapping):
        return ", ".join(f"{k} = {_stringify(v)}" for k, v in value.items())
    return str(value)


#: Provenance rows: request key -> label on the page, in order.
_PROVENANCE = (
    ("source", "input"), ("rows", "rows"), ("y_true", "label (y_true)"), ("y_pred", "prediction (y_pred)"),
    ("y_score", "score (y_score)"), ("threshold", "score threshold"), ("favorable", "favorable label value(s)"),
    ("unfavorable", "unfavorable label value(s)"), ("score_label", "score label (what the score is the probability of)"),
    ("weight", "weight"), ("protected", "protected attributes"), ("protected_proba", "attribute estimated from proxies"),
    ("privileged", "privileged / reference groups"), ("monitored", "monitored groups (config)"),
    ("reference_groups", "reference groups (config)"), ("reference", "reference policy"),
    ("thresholds", "thresholds (bands)"), ("band", "band sides judged"), ("min_sample_size", "minimum sample size"),
    ("ci", "confidence level"), ("p_adjust", "p-value adjustment"), ("cluster", "cluster"),
    ("min_group_size", "minimum group size shown"), ("max_sample_size", "sample size"), ("config", "config"),
)  # fmt: skip


def _merged_request(report: Any, given: Mapping[str, Any]) -> dict[str, Any]:
    """The report's request (its metadata), with the keywords given to ``to_html`` winning."""
    from polfair.core.report.run_metadata import request_of

    out = dict(request_of(report) or {})
    out.update({k: v for k, v in given.items() if v is not None and k != "generated_at"})
    return out


def _provenance(view: dict[str, Any], merged: Mapping[str, Any], title: str) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    for key, label in _PROVENANCE:
        v = merged.get(key)
        if key == "rows" and v is None and view["population_n"] is not None:
            v = view["population_n"]
        if key == "config" and isinstance(v, Mapping):
            v = "given as a mapping (below)"
        if key == "protected_proba" and isinstance(v, Mapping):  # race (weighted): white = p_white, ...
            pairs = ", ".join(f"{g} = {c if c is not None else '1 - the others'}"
                              for g, c in zip(v.get("groups") or [], v.get("columns") or []))  # fmt: skip
            v = f"{v.get('attribute')} ({v.get('assignment')} estimator): {pairs}"
        if v is not None and v != [] and v != {}:
            rows.append((label, f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else _stringify(v)))
    if view["by"]:
        rows.append(("by", ", ".join(view["by"]) + f" ({view['n_by_values']} value(s))"))
        rows.append(("snapshot shown", _stringify(view["snapshot"])))
    for key, vals in view["metadata"].items():
        if vals:
            rows.append((key, ", ".join(vals)))
    from importlib.metadata import PackageNotFoundError, version

    if not view["metadata"].get("polfair_version") and not merged.get("polfair_version"):
        try:
            rows.append(("polfair version", version("polfair")))
        except PackageNotFoundError:  # pragma: no cover - running from a source tree
            pass
    elif merged.get("polfair_version") and not view["metadata"].get("polfair_version"):
        rows.append(("polfair version", str(merged["polfair_version"])))
    rows.append(("report rows", f"{view['report_rows']:,}"))
    return rows


def _favorable_text(merged: Mapping[str, Any]) -> str:
    """The page's first statement: what the favorable outcome is, in the user's words when given."""
    meaning = merged.get("favorable_meaning")
    if meaning:
        return str(meaning).rstrip(". ")
    stated = favorable_statement(merged)  # the label column and its favorable value(s)
    if stated:
        return stated
    return "the report's favorable label (pass favorable= to say which value it is)"


def _generated_at(value: Any, view: dict[str, Any]) -> str:
    if value is None:
        run_at = view["metadata"].get("run_at")
        if run_at:
            return run_at[0]
        value = _dt.datetime.now(_dt.UTC).replace(microsecond=0)
    if isinstance(value, _dt.datetime):
        return value.isoformat(sep=" ")
    return str(value)


#: With more attribute sets than this, intersections get a chart of the first headline metric only
#: (single attributes keep one per headline metric; the group tables have every metric).
_ALL_CHARTS_UP_TO = 12


def _charted_metrics(view: dict[str, Any], s: dict[str, Any]) -> list[str]:
    if s["order"] == 1 or len(view["sets"]) <= _ALL_CHARTS_UP_TO:
        return list(view["headline"])
    return list(view["headline"][:1])


def _charts(view: dict[str, Any]) -> dict[str, Any]:
    from polfair.outputs.html import _charts as ch

    forest: dict[str, list[dict[str, str]]] = {}
    for s in view["sets"]:
        if not s["charted"]:
            continue
        forest[s["id"]] = [
            {"metric": m, "svg": ch.forest_svg(s["chart_rows"][m], metric=m, attribute=s["attribute"],
                                                uid=f"{s['id']}-{j}")}
            for j, m in enumerate(_charted_metrics(view, s)) if s["chart_rows"][m]
        ]  # fmt: skip
    heat = [ch.heatmap_svg(hm, uid=f"heat-{i}") for i, hm in enumerate(view["intersections"])]
    time = [ch.over_time_svg(ot, uid=f"time-{i}") for i, ot in enumerate(view["over_time"] or [])]
    return {"forest": forest, "heat": heat, "time": time, "legend": ch.STATUS_STYLE}


def _methods(view: dict[str, Any]) -> list[dict[str, str]]:
    """Definition and source of every metric shown: the report's glossary, else the metric registry."""
    from polfair.core.glossary import REPORT_METRICS
    from polfair.core.metrics import DISPARITIES, METRICS

    shown = [("group", m) for m in (*view["headline"], *view["table_rates"])]
    shown += [("attribute", m) for m in view["indices"]["metrics"]]
    shown += [("population", p["metric"]) for p in view["indices"]["population"]]
    kinds = {"group": "group rows", "attribute": "attribute-set rows", "population": "population rows"}
    out, seen = [], set()
    for kind, m in shown:
        if (kind, m) in seen:
            continue
        seen.add((kind, m))
        entry = REPORT_METRICS.get((kind, m))  # type: ignore[arg-type]
        if entry is not None:
            definition, source = entry.formula, entry.source.replace("``", "")
        elif m in METRICS:
            definition, source = METRICS[m].description, "aif360 0.6.1"
        elif m in DISPARITIES:
            definition, source = DISPARITIES[m].description, "aif360 0.6.1"
        elif m in _INDEX_DOCS:
            definition, source = _INDEX_DOCS[m]
        else:
            definition, source = "see docs/metrics.md", ""
        if (
            kind == "group"
            and "selection_rate" not in view["present"]
            and m in ("disparate_impact", "statistical_parity_difference")
        ):
            definition = definition.replace("selection_rate", "base_rate") + " (labels-only audit: on base rates)"
        out.append({"metric": m, "definition": definition, "kind": kinds[kind], "source": source})
    return out


def _extra_sections(env: Any, first: int, scores: Any, adverse_impact: Any, top_k: int,
                    snapshot: Mapping[str, Any] | None, slices: Any = None) -> list[dict[str, str]]:  # fmt: skip
    """The score, adverse-impact and slice sections (:mod:`polfair.outputs.html.sections`,
    :mod:`polfair.outputs.html.slices`), numbered from ``first``.
    """
    from polfair.outputs.html import sections

    out: list[dict[str, str]] = []
    if slices is not None:
        from polfair.outputs.html.slices import slices_section

        out.append({"id": "pf-slices", "title": "Slices", "nav": "Slices",
                    "html": slices_section(slices, env=env, number=first + len(out))})  # fmt: skip
    if scores is not None:
        out.append(sections.score_section(scores, env=env, number=first + len(out), top_k=top_k, snapshot=snapshot))
    if adverse_impact is not None:
        out.append(sections.adverse_impact_section(adverse_impact, env=env, number=first + len(out), snapshot=snapshot))
    return out


def _sections_page(report: Any, given: Mapping[str, Any], *, title: str, scores: Any, adverse_impact: Any,
                   top_k: int, snapshot: Mapping[str, Any] | None, fragment: bool) -> str | None:  # fmt: skip
    """A score report or an adverse-impact table given as the report: a page of its sections; else ``None``."""
    import polars as pl

    from polfair.outputs.html import sections

    frame = report.collect() if isinstance(report, pl.LazyFrame) else report
    if not isinstance(frame, pl.DataFrame):
        return None
    if sections.is_score_report(frame) and scores is None:
        scores = frame
    elif sections.is_adverse_impact(frame) and adverse_impact is None:
        adverse_impact = frame
    else:
        return None
    env = _env()
    provenance = [(label, _stringify(given[key])) for key, label in _PROVENANCE if given.get(key) is not None]
    first = 2 if provenance else 1
    return sections.render_sections_page(
        _extra_sections(env, first, scores, adverse_impact, top_k, snapshot), env=env, title=title,
        generated_at=_generated_at(given.get("generated_at"), {"metadata": {}}), provenance=provenance,
        fragment=fragment,
    )  # fmt: skip


def _render(report: Any, opts: ViewOptions, title: str, fragment: bool, scores: Any = None,
            adverse_impact: Any = None, slices: Any = None) -> str:  # fmt: skip
    env = _env()
    view = build_view(report, opts)
    given = opts.provenance
    merged = _merged_request(report, given)
    config = given.get("config")
    config_text = None
    if config is not None and not isinstance(config, (str, Path)):
        raw = config if isinstance(config, Mapping) else getattr(config, "__dict__", str(config))
        config_text = json.dumps(raw, indent=2, sort_keys=True, default=str) if isinstance(raw, Mapping) else str(raw)
    elif merged:  # the effective configuration: the report's request, as JSON
        config_text = json.dumps({k: v for k, v in merged.items() if k not in ("source", "rows")}, indent=2,
                                 sort_keys=True, default=str)  # fmt: skip
    ctx = {
        "favorable_text": _favorable_text(merged), "marks": _MARKS,
        "estimated_text": estimated_note(merged.get("protected_proba")),
        "polarity_warnings": [str(w) for w in merged.get("polarity_warnings") or []],
        "title": title, "view": view, "charts": _charts(view), "methods": _methods(view),
        "provenance": _provenance(view, merged, title), "generated_at": _generated_at(given.get("generated_at"), view),
        "config_text": config_text, "ci_methods": [(c, _CI_METHODS.get(c, c)) for c in view["ci_methods"]],
        "tests": [(t, _TESTS.get(t, t)) for t in view["tests"]], "policies": _POLICIES, "fragment": fragment,
        "short": _view.SHORT, "four_fifths": _view.FOUR_FIFTHS, "is_ratio": _view.is_ratio_metric,
        "extra_sections": _extra_sections(env, 7 if view["over_time"] else 6, scores, adverse_impact, opts.top_k,
                                          opts.snapshot, slices),
    }  # fmt: skip
    return env.get_template("report.html.j2").render(**ctx).strip() + "\n"


def _options(
    metrics: Sequence[str] | None, top_k: int, table_rows: int, min_n: int | None, max_sets: int,
    by: Sequence[str] | None, snapshot: Mapping[str, Any] | None, provenance: dict[str, Any],
) -> ViewOptions:  # fmt: skip
    for name, v, low in (
        ("top_k", top_k, 2),
        ("table_rows", table_rows, 1),
        ("min_n", 0 if min_n is None else min_n, 0),
        ("max_sets", max_sets, 0),
    ):
        if not isinstance(v, int) or isinstance(v, bool) or v < low:
            msg = f"{name} must be an integer >= {low}, got {v!r}"
            raise ValueError(msg)
    if isinstance(metrics, str):
        metrics = [metrics]
    if isinstance(by, str):
        by = [by]
    return ViewOptions(metrics=metrics, top_k=top_k, table_rows=table_rows, min_n=min_n, max_sets=max_sets,
                       by=by, snapshot=snapshot, provenance=provenance)  # fmt: skip


@with_setup
def to_html(
    report: Any,
    *,
    title: str = "Fairness report",
    metrics: Sequence[str] | None = None,
    source: Any = None,
    rows: int | None = None,
    y_true: Any = None,
    y_pred: Any = None,
    y_score: Any = None,
    favorable: Any = None,
    weight: Any = None,
    privileged: Mapping[str, Any] | None = None,
    reference: str | None = None,
    config: Any = None,
    favorable_meaning: str | None = None,
    generated_at: Any = None,
    top_k: int = 20,
    table_rows: int = 50,
    min_n: int | None = None,
    max_sets: int = 40,
    by: Sequence[str] | None = None,
    snapshot: Mapping[str, Any] | None = None,
    fragment: bool = False,
    cells: Any = None,
    slices: Any = None,
    scores: Any = None,
    adverse_impact: Any = None,
) -> str:
    """Render a fairness report as one self-contained HTML page (a string).

    Sections: provenance; verdict per attribute set × headline metric with one sentence per flagged
    group; a forest plot per attribute set and headline metric (ratios on a log axis, intervals as
    whiskers, the band shaded, the reference marked, marker area by n, undefined/small groups greyed
    with the reason); group tables; intersections (heatmap over attribute pairs, EDF and
    between-group entropy indices with the groups that drive them); over time (when ``by`` holds a
    date/period column); methods (definitions and sources of every metric shown, policies, the
    interval method). Charts are inline SVG (matplotlib); nothing is loaded from the network.

    Parameters
    ----------
    report : pl.DataFrame or pl.LazyFrame
        The long report of :func:`polfair.fairness_report` / ``report_from_counts``: columns
        ``*by, attribute, group, metric, value, reference_group, difference, ratio, n`` (String /
        Float64 / Int64), read by name. Optional columns are used when present: ``threshold`` and
        ``status`` (the monitor's bands and ok / violation / inconclusive / insufficient_data),
        the interval columns ``value_lo, value_hi`` (whiskers; ``difference_*``, ``ratio_*``,
        ``p_value``, ``p_value_adjusted``), ``ci_method``, ``test``, a Struct ``group_key`` (to place
        intersections whose values contain ``" & "``), and run metadata (``run_id``, ``run_at``,
        ``polfair_version``, ``schema_version``, ``config_hash``).
    title : str
        Page title and heading.
    metrics : list of str, optional
        Headline disparities (named group-row metrics such as ``"disparate_impact"`` or
        ``"equal_opportunity_difference"``). Default: the metrics with a threshold in the report,
        else ``disparate_impact``, ``false_positive_rate_ratio`` and ``false_negative_rate_ratio``
        (those present; a labels-only report has ``disparate_impact`` on base rates).
    source, rows, y_true, y_pred, y_score, favorable, weight, privileged, reference, config
        Provenance shown in the header. By default the report's own request
        (:func:`polfair.core.report.run_metadata.request_of`: what ``fairness_report`` was asked, after a
        config was merged: label, prediction or score and threshold, favorable values,
        privileged and monitored groups, bands, ``ci``, weight, polfair version), shown as rows and
        as the effective configuration (JSON); keywords given here win: the input's description
        (path or frame), its row count (default: the population's ``n``), the label / prediction
        / score definitions (strings or Polars expressions), the favorable value(s), the weight,
        the privileged groups, the reference policy and a config (mapping, shown as JSON).
    favorable_meaning
        What the favorable outcome means, in words (the page's first statement; default: the
        report's request, else the favorable label value).
    generated_at : str or datetime, optional
        Timestamp printed in the header; default the report's ``run_at``, else now (UTC). Pass a
        fixed value for byte-identical output.
    top_k : int
        Groups per chart (default 20): the reference, then flagged groups, then the most extreme;
        the rest are summarised in one line.
    table_rows : int
        Rows per group table (default 50), chosen the same way; the rest are counted.
    min_n : int, optional
        On rows the report did not judge, groups (or references) with fewer input rows are greyed
        as "small". Default: the report's own ``min_sample_size`` (the small-group policy, 30
        unless the run set another). Rows the report judged show its ``status``: the page never
        re-judges (a row is greyed "small" exactly when its status is ``insufficient_data``).
    max_sets : int
        Attribute sets with charts (default 40; single attributes first, then pairs, ...).
    by : list of str, optional
        The report's ``by`` columns (default: the unknown columns before ``attribute``).
    snapshot : mapping, optional
        ``by`` values whose report the charts and tables show (default: the last ``by`` value in
        sort order, e.g. the latest month). The verdict counts every period, and the over-time
        section shows all periods with the violation periods marked.
    fragment : bool
        ``True``: a ``<div>`` for embedding (Jupyter) instead of a whole document.
    cells : pl.DataFrame, optional
        Regression reports only: the regression cell table (:func:`polfair.regression_counts`) whose
        prediction histogram draws the groups' prediction distributions; default the table the
        report of :func:`polfair.regression_report` carries in memory.
    slices : pl.DataFrame, optional
        A :func:`polfair.slice_scan` result: the page gets a section "Slices: where the model errs
        most" (:mod:`polfair.outputs.html.slices`: an interval chart and a table of the slices with
        their intervals, differences to the rest and adjusted p-values) before the methods. Passing
        the slice table itself as ``report`` makes a page of its own.

    scores : pl.DataFrame, optional
        The table of :func:`polfair.score_report`: adds the section "Scores" before the methods:
        per attribute set, each group's ROC AUC and Brier score with their intervals (chart), and
        a table of ROC AUC, its difference to the reference group (interval, adjusted p-value),
        average precision, Brier score, ECE and ABROCA, with the AUC's heterogeneity test.
    adverse_impact : pl.DataFrame, optional
        The table of :func:`polfair.adverse_impact`: adds the section "Adverse impact": per
        attribute set, the impact ratios against the four-fifths line (chart) and the battery's
        table (rates, impact ratios, four-fifths, z test, Fisher's test, shortfall, flips).

    Returns
    -------
    str
        The HTML page (UTF-8 text). Verdict statuses are the report's ``status`` column; a report
        without one is not judged (no verdict, no band; the page says how to ask for one:
        ``thresholds="four_fifths"``, ``docs/status.md``); differences without a threshold are not
        judged. The report's ``polarity_warnings`` are shown above the verdict. Every per-group verdict element carries
        ``data-status``, ``data-metric``, ``data-attribute``, ``data-group`` (the display label)
        and, with ``by`` periods, ``data-period`` (:func:`polfair.outputs.html._view.period_label`);
        with ``by``, the verdict covers every period (counts per attribute set and metric, the
        latest period's status, and a grid of every period).

    Raises
    ------
    ImportError
        jinja2 or matplotlib is missing; the message names ``pip install 'polfair[report]'``.
    TypeError
        ``report`` is not a Polars DataFrame/LazyFrame.
    ValueError
        The report lacks a required column or is empty; ``metrics`` names a metric without group
        rows; ``by``/``snapshot`` name unknown columns or select nothing; a size option below its
        minimum; ``scores``/``adverse_impact`` with a regression report.

    Notes
    -----
    ``report`` may also be the table of :func:`polfair.score_report` or of
    :func:`polfair.adverse_impact`: the page then has that section alone (with the provenance
    given here), as with ``scores=`` / ``adverse_impact=``; with ``by`` columns, the sections show
    ``snapshot`` (default: the last ``by`` value). Their numbers are the tables' own: the page
    computes no statistic.

    A regression report (:func:`polfair.regression_report`: group rows of ``mean_error`` and no
    classification rate) gets the regression page (:mod:`polfair.outputs.html.regression`):
    provenance, population metrics, findings, per attribute set a forest plot of the differences
    of the mean error, mean absolute error and mean prediction to the reference with their
    intervals, the prediction distributions and a group table, the spreads and the methods.

    Scales with the report, not the data: a 10,000-level attribute shows ``top_k`` groups per chart
    and ``table_rows`` per table. The output is deterministic for a fixed ``generated_at``
    (matplotlib's ``svg.hashsalt`` is fixed and the SVG carries no date). Colours are the
    Okabe–Ito colour-blind-safe palette and every status is also written as text.

    Examples
    --------
    {{toy_report}}
    >>> page = to_html(rep, title="Toy model", min_n=1, generated_at="2026-01-01")
    >>> page.startswith("<!DOCTYPE html>"), "disparate_impact by g" in page
    (True, True)
    """
    given = {
        "source": source, "rows": rows, "y_true": y_true, "y_pred": y_pred, "y_score": y_score,
        "favorable": favorable, "weight": weight, "privileged": privileged, "reference": reference,
        "config": config, "favorable_meaning": favorable_meaning, "generated_at": generated_at,
    }  # fmt: skip
    opts = _options(metrics, top_k, table_rows, min_n, max_sets, by, snapshot, given)
    page = _sections_page(report, given, title=title, scores=scores, adverse_impact=adverse_impact, top_k=top_k,
                          snapshot=snapshot, fragment=fragment)  # fmt: skip
    if page is not None:
        return page
    from polfair.outputs.html import regression as _regression
    from polfair.outputs.html import slices as _slices

    if _slices.is_slice_table(report):  # a slice search's own page
        return _slices.render_slices(report, title=title, generated_at=_generated_at(generated_at, {"metadata": {}}),
                                     fragment=fragment, env=_env(), provenance=given)  # fmt: skip
    from polfair.outputs.html import ranking as _ranking

    if _ranking.is_ranking_report(report):  # a ranking report's own page
        return _ranking.render_ranking(report, title=title, provenance=_merged_request(report, given), fragment=fragment,
                                       generated_at=_generated_at(generated_at, {"metadata": {}}), top_k=top_k)  # fmt: skip
    normalized = _view.normalize(report)
    if _regression.is_regression_report(normalized):
        if scores is not None or adverse_impact is not None:
            msg = "scores= and adverse_impact= add sections to a classification report's page, not a regression report's"
            raise ValueError(msg)
        run_at = normalized["run_at"].drop_nulls().cast(str).to_list()[:1] if "run_at" in normalized.columns else []
        return _regression.render_regression(
            report, title=title, provenance=_merged_request(report, given), cells=cells, top_k=top_k,
            max_sets=max_sets, by=by, snapshot=snapshot, fragment=fragment, env=_env(),
            generated_at=_generated_at(generated_at, {"metadata": {"run_at": run_at}}),
        )  # fmt: skip
    return _render(report, opts, title, fragment, scores, adverse_impact, slices)


@with_setup
def write_html(report: Any, path: str | Path, *, title: str = "Fairness report", **kwargs: Any) -> Path:
    """Write a fairness report as one self-contained HTML file.

    Parameters
    ----------
    report : pl.DataFrame or pl.LazyFrame
        The report of :func:`polfair.fairness_report` (see :func:`to_html`), or the table of
        :func:`polfair.score_report` or :func:`polfair.adverse_impact` (a page of that section).
    path : str or pathlib.Path
        Output file (UTF-8); its folder must exist; an existing file is replaced atomically (a
        failed write leaves the previous page).
    title : str
        Page title.
    **kwargs
        Every other keyword of :func:`to_html` (provenance, ``metrics``, ``top_k``, ``scores``,
        ``adverse_impact``, ...).

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    ImportError
        jinja2 or matplotlib is missing (names ``pip install 'polfair[report]'``).
    PolfairError
        The folder of ``path`` does not exist.
    TypeError, ValueError
        As :func:`to_html`.

    Examples
    --------
    >>> import tempfile, pathlib
    {{toy_report}}
    >>> with tempfile.TemporaryDirectory() as d:
    ...     out = write_html(rep, pathlib.Path(d) / "fairness.html", title="Toy", min_n=1)
    ...     out.read_text(encoding="utf-8").count("<svg") >= 1
    True
    """
    path = Path(path)
    if not path.parent.exists():
        msg = f"write_html: the folder {str(path.parent)!r} does not exist (create it first)"
        raise PolfairError(msg)
    html = to_html(report, title=title, **kwargs)
    _write_text(path, html)
    return path


def _write_text(path: Path, text: str) -> None:
    """Atomically (a temporary file renamed over ``path``): a failed write keeps the previous page."""
    from polfair.outputs.writers import write_atomic

    def write(tmp: str) -> None:
        Path(tmp).write_text(text, encoding="utf-8")

    write_atomic(path, write)


@with_setup
class HtmlReport:
    """A fairness report that displays as the HTML report in Jupyter (``_repr_html_``).

    Parameters
    ----------
    report : pl.DataFrame or pl.LazyFrame
        The report of :func:`polfair.fairness_report`.
    **kwargs
        Keywords of :func:`to_html` (``title``, provenance, ``metrics``, ...).

    Attributes
    ----------
    report : pl.DataFrame
        The report.

    Notes
    -----
    The page is rendered on first use and cached. In a notebook the report shows as a ``<div>``
    whose styles are scoped to it; ``str(obj)`` / :meth:`to_html` give the whole document and
    :meth:`save` writes it (as :func:`write_html`).

    Examples
    --------
    {{toy_report}}
    >>> view = HtmlReport(rep, min_n=1)
    >>> view._repr_html_().startswith('<div class="pf-report"')
    True
    """

    def __init__(self, report: Any, **kwargs: Any) -> None:
        self.report = _view.normalize(report) if report is not None else report
        self._kwargs = kwargs
        self._cache: dict[bool, str] = {}

    def to_html(self, *, fragment: bool = False) -> str:
        """The page (``fragment=False``) or an embeddable ``<div>`` (``fragment=True``)."""
        if fragment not in self._cache:
            self._cache[fragment] = to_html(self.report, fragment=fragment, **self._kwargs)
        return self._cache[fragment]

    def _repr_html_(self) -> str:
        return self.to_html(fragment=True)

    def save(self, path: str | Path) -> Path:
        """Write the page to ``path`` (as :func:`write_html`); returns the path."""
        path = Path(path)
        if not path.parent.exists():
            msg = f"save: the folder {str(path.parent)!r} does not exist (create it first)"
            raise PolfairError(msg)
        _write_text(path, self.to_html())
        return path

    def __str__(self) -> str:
        return self.to_html()

    def __repr__(self) -> str:
        rows = self.report.height if self.report is not None else 0
        return f"HtmlReport(<report with {rows} rows>, {', '.join(f'{k}={v!r}' for k, v in self._kwargs.items())})"
