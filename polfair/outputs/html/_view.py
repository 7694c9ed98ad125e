"""The HTML report's view model: plain Python data extracted from a fairness report.

Everything here is Polars and the standard library (no jinja2, no matplotlib), so it can be
tested alone. :func:`build_view` reads the long report of :func:`polfair.fairness_report` by
column *name* (never position); the optional columns (``threshold``, ``status``, ``harm``, the
interval columns, ``group_key``, run metadata) are used when present.

The page judges nothing: every status it shows is the report's ``status`` column (the rule of
:mod:`polfair.core.report.status`). A report computed without thresholds has no status, so the page shows
values and intervals with no verdict ("no threshold"), as the terminal summary, :func:`polfair.alerts`
and ``--fail-on-violation`` do (``docs/status.md``: one story with or without thresholds;
``thresholds="four_fifths"`` asks for the common verdict). With ``by`` periods, the verdict covers
every period.
"""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from polfair.core.reference import resolve_min_sample_size
from polfair.core.report.run_metadata import attach_request, request_of
from polfair.core.report.status import is_ratio_metric
from polfair.monitor.thresholds import FOUR_FIFTHS as _FOUR_FIFTHS

__all__ = [
    "ViewOptions", "band_of", "bounded", "build_view", "by_columns", "fmt_band", "fmt_diff", "fmt_index",
    "fmt_index_interval", "fmt_interval", "fmt_metric", "fmt_num", "fmt_pct", "fmt_ratio", "headline_metrics",
    "input_rate", "is_ratio_metric", "normalize", "period_label", "time_column",
]  # fmt: skip

REQUIRED = ("attribute", "group", "metric", "value", "reference_group", "difference", "ratio", "n")
INTERVAL_FLOATS = (
    "value_lo", "value_hi", "difference_lo", "difference_hi", "ratio_lo", "ratio_hi",
    "p_value", "p_value_adjusted", "n_eff",
)  # fmt: skip
OPTIONAL_STRINGS = ("threshold", "status", "ci_method", "test", "harm")
METADATA = ("run_id", "run_at", "polfair_version", "schema_version", "config_hash")
KNOWN = frozenset(
    (*REQUIRED, *INTERVAL_FLOATS, *OPTIONAL_STRINGS, *METADATA, "group_key", "n_groups", "excluded_groups")
)
#: Periods drawn in the verdict-over-time grid (the latest ones; older periods are counted).
MAX_GRID_PERIODS = 62

#: Severity order of statuses (higher is worse) used to rank groups and attribute sets.
SEVERITY = {"violation": 4, "inconclusive": 3, "insufficient_data": 2, "ok": 1, "not_assessed": 0, "reference": 0}
#: The four-fifths band used for ratio metrics when the report carries no threshold.
FOUR_FIFTHS = _FOUR_FIFTHS
TIME_NAMES = frozenset(
    ("month", "period", "date", "day", "week", "year", "quarter", "time", "window", "timestamp", "ts")
)

#: Rates shown in the group table, in this order, when present in the report.
TABLE_RATES = (
    "base_rate", "selection_rate", "true_positive_rate", "false_positive_rate",
    "false_negative_rate", "positive_predictive_value", "accuracy",
)  # fmt: skip
SHORT = {
    "base_rate": "base rate", "selection_rate": "selection rate", "true_positive_rate": "TPR",
    "false_positive_rate": "FPR", "false_negative_rate": "FNR", "positive_predictive_value": "PPV",
    "accuracy": "accuracy", "n_missing": "n missing",
}  # fmt: skip
#: How a sentence names a group's rate ("... has a selection rate of 42% vs 65% ...").
PHRASE = {
    "selection_rate": "is predicted favorable at",
    "base_rate": "has the favorable label at a rate of",
    "true_positive_rate": "has a true positive rate of",
    "false_positive_rate": "has a false positive rate of",
    "false_negative_rate": "has a false negative rate of",
    "true_negative_rate": "has a true negative rate of",
    "positive_predictive_value": "has a positive predictive value of",
    "negative_predictive_value": "has a negative predictive value of",
    "false_discovery_rate": "has a false discovery rate of",
    "false_omission_rate": "has a false omission rate of",
    "error_rate": "has an error rate of",
    "accuracy": "has an accuracy of",
}
ATTRIBUTE_INDICES = (
    "smoothed_empirical_differential_fairness", "smoothed_empirical_differential_fairness_predictions",
    "between_group_generalized_entropy_index", "between_group_theil_index",
    "between_group_coefficient_of_variation",
    "between_group_variance_base_rate", "between_group_variance_selection_rate",
)  # fmt: skip
INDEX_LABELS = {
    "smoothed_empirical_differential_fairness": "EDF ε (labels)",
    "smoothed_empirical_differential_fairness_predictions": "EDF ε (predictions)",
    "between_group_generalized_entropy_index": "between-group GE(α)",
    "between_group_theil_index": "between-group Theil",
    "between_group_coefficient_of_variation": "between-group CV",
    "between_group_variance_base_rate": "variance of base rates, noise removed",
    "between_group_variance_selection_rate": "variance of selection rates, noise removed",
}
POPULATION_INDICES = (
    "smoothed_empirical_differential_fairness", "smoothed_empirical_differential_fairness_predictions",
    "differential_fairness_bias_amplification", "between_all_groups_generalized_entropy_index",
    "between_all_groups_theil_index", "between_all_groups_coefficient_of_variation",
    "generalized_entropy_index", "theil_index", "coefficient_of_variation",
)  # fmt: skip


@dataclass
class ViewOptions:
    """Display options (see :func:`polfair.outputs.html.to_html` for their meaning)."""

    metrics: Sequence[str] | None = None
    top_k: int = 20
    table_rows: int = 50
    #: The small-group policy's minimum for marks on rows the report did not judge: ``None`` = the
    #: report's own ``min_sample_size`` (its request), else the policy's default (30).
    min_n: int | None = None
    max_sets: int = 40
    max_heatmap_levels: int = 12
    max_series: int = 6
    by: Sequence[str] | None = None
    snapshot: Mapping[str, Any] | None = None
    provenance: dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------- formatting


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def fmt_ratio(x: Any) -> str:
    """A ratio with 2 decimals (3 significant digits below 0.1); ``"–"`` for null."""
    if x is None:
        return "–"
    if not _finite(x):
        return str(x)
    return f"{x:.3g}" if abs(x) < 0.1 and x != 0 else f"{x:.2f}"


def fmt_diff(x: Any) -> str:
    """A signed difference with 3 decimals; ``"–"`` for null."""
    if x is None:
        return "–"
    return f"{x:+.3f}" if _finite(x) else str(x)


def fmt_pct(x: Any) -> str:
    """A rate (fraction) as a percentage with 1 decimal; ``"–"`` for null."""
    if x is None:
        return "–"
    return f"{100 * x:.1f}%" if _finite(x) else str(x)


def fmt_num(x: Any) -> str:
    """A count: integer with thousands separators when whole, else 4 significant digits."""
    if x is None:
        return "–"
    if _finite(x) and float(x) == int(x):
        return f"{int(x):,}"
    return f"{x:.4g}" if _finite(x) else str(x)


def fmt_index(x: Any) -> str:
    """An index value (entropy, EDF) with 4 significant digits."""
    if x is None:
        return "–"
    return f"{x:.4g}" if _finite(x) else str(x)


def fmt_metric(metric: str, x: Any) -> str:
    return fmt_ratio(x) if is_ratio_metric(metric) else fmt_diff(x)


def fmt_interval(metric: str, lo: Any, hi: Any) -> str:
    if lo is None and hi is None:
        return ""
    f = fmt_ratio if is_ratio_metric(metric) else fmt_diff
    return bounded(f(lo), None if hi is None else f(hi))


def bounded(lo: str, hi: str | None) -> str:
    """An interval's text: ``[lo, hi]``, or ``[lo, inf)`` when its upper limit is unbounded (null with
    a lower limit: EDF's projection). The same text as the terminal summary's (:mod:`polfair.outputs.summary`).

    Examples
    --------
    >>> bounded("0.005949", None), bounded("0.1", "0.2")
    ('[0.005949, inf)', '[0.1, 0.2]')
    """
    return f"[{lo}, inf)" if hi is None else f"[{lo}, {hi}]"


def fmt_index_interval(lo: Any, hi: Any) -> str:
    """An index's interval (:func:`fmt_index` limits; :func:`bounded`)."""
    return bounded(fmt_index(lo), None if hi is None else fmt_index(hi))


_BAND = re.compile(r"^\s*\[\s*([^,\]]+)\s*,\s*([^\]]+)\s*\]\s*$")


def band_of(threshold: Any) -> tuple[float, float] | None:
    """Parse the monitor's ``threshold`` text (``"[0.8, 1.25]"``, ``"[-0.1, inf]"``) into a band.

    Returns ``None`` for null or text in another form.
    """
    if not isinstance(threshold, str):
        return None
    m = _BAND.match(threshold)
    if not m:
        return None
    try:
        lo, hi = float(m.group(1)), float(m.group(2))
    except ValueError:
        return None
    if math.isnan(lo) or math.isnan(hi) or lo > hi:
        return None
    return lo, hi


def fmt_band(band: tuple[float, float] | None) -> str:
    if band is None:
        return "–"
    lo, hi = band

    def one(x: float) -> str:
        return "∞" if x == math.inf else ("−∞" if x == -math.inf else f"{x:g}")

    return f"[{one(lo)}, {one(hi)}]"


# ---------------------------------------------------------------- report normalisation


def normalize(report: Any) -> pl.DataFrame:
    """Check the report's required columns and add absent optional ones as nulls."""
    if isinstance(report, pl.LazyFrame):
        report = report.collect()
    if not isinstance(report, pl.DataFrame):
        msg = (
            "to_html/write_html take the report DataFrame of pf.fairness_report (a polars DataFrame "
            f"with columns {', '.join(REQUIRED)}); got {type(report).__name__}"
        )
        raise TypeError(msg)
    missing = [c for c in REQUIRED if c not in report.columns]
    if missing:
        msg = (
            f"the report lacks column(s) {', '.join(missing)}: pass the unmodified output of "
            "pf.fairness_report (or report_from_counts); found columns " + ", ".join(report.columns[:20])
        )
        raise ValueError(msg)
    if report.height == 0:
        msg = "the report is empty (0 rows): there is nothing to show"
        raise ValueError(msg)
    request = request_of(report)
    # label columns may be Categorical/Enum (the report's compact dtypes): read them as String
    text = [c for c in ("attribute", "group", "metric", "reference_group", *OPTIONAL_STRINGS, "excluded_groups")
            if c in report.columns and report.schema[c] != pl.String]  # fmt: skip
    if text:
        report = report.with_columns(pl.col(c).cast(pl.String) for c in text)
    add = [pl.lit(None, pl.Float64).alias(c) for c in INTERVAL_FLOATS if c not in report.columns]
    add += [pl.lit(None, pl.String).alias(c) for c in OPTIONAL_STRINGS if c not in report.columns]
    return attach_request(report.with_columns(add), request) if add else attach_request(report, request)


def by_columns(report: pl.DataFrame, by: Sequence[str] | None) -> list[str]:
    """The ``by`` columns: given, else the unknown non-Struct columns placed before ``attribute``."""
    if by is not None:
        bad = [b for b in by if b not in report.columns]
        if bad:
            msg = f"by={list(by)!r}: column(s) {bad} are not in the report (columns: {report.columns})"
            raise ValueError(msg)
        return list(by)
    stop = report.columns.index("attribute")
    return [
        c for c in report.columns[:stop]
        if c not in KNOWN and not isinstance(report.schema[c], pl.Struct)
    ]  # fmt: skip


def time_column(report: pl.DataFrame, by: Sequence[str]) -> str | None:
    """The ``by`` column that holds dates/times or periods, if any."""
    for c in by:
        if report.schema[c].is_temporal():
            return c
    for c in by:
        if c.lower() in TIME_NAMES:
            return c
    return None


def _label(v: Any) -> str:
    if v is None:
        return "null"
    midnight = isinstance(v, datetime.datetime) and v.time() == datetime.time(0)
    if midnight and v.utcoffset() in (None, datetime.timedelta(0)):
        return v.date().isoformat()  # a daily/monthly period stored as a Datetime
    return str(v)


# ---------------------------------------------------------------- headline metrics and statuses


def headline_metrics(rep: pl.DataFrame, metrics: Sequence[str] | None) -> list[str]:
    """The disparities judged and charted: given, else thresholded ones, else a default set."""
    present = rep.filter(pl.col("group").is_not_null())["metric"].unique().to_list()
    if metrics is not None:
        bad = [m for m in metrics if m not in present]
        if bad:
            cands = sorted(m for m in present if m.endswith(("_difference", "_ratio")) or m == "disparate_impact")
            msg = f"metrics={list(metrics)!r}: {bad} have no group rows in the report; choose from {cands}"
            raise ValueError(msg)
        return list(metrics)
    thr = rep.filter(pl.col("threshold").is_not_null(), pl.col("group").is_not_null())
    if thr.height:
        return thr["metric"].unique(maintain_order=True).to_list()
    default = ["disparate_impact", "false_positive_rate_ratio", "false_negative_rate_ratio"]
    out = [m for m in default if m in present]
    if not out:  # an unusual report: its first comparison
        out = [m for m in present if is_ratio_metric(m) or m.endswith("_difference")][:1]
    return out


def input_rate(metric: str, present: set[str]) -> str | None:
    """The rate a disparity compares (selection_rate, or base_rate on a labels-only report)."""
    if metric == "disparate_impact" or metric == "statistical_parity_difference":
        return "selection_rate" if "selection_rate" in present else "base_rate"
    for suffix in ("_ratio", "_difference"):
        if metric.endswith(suffix):
            base = metric[: -len(suffix)]
            if base in present:
                return base
    if metric == "equal_opportunity_difference":
        return "true_positive_rate"
    return None


def period_label(by: Sequence[str], values: Sequence[Any]) -> str:
    """The label of a ``by`` period on the page (``data-period``): its value, or ``k=v; k=v`` for several.

    Examples
    --------
    >>> import datetime
    >>> period_label(["date"], [datetime.date(2026, 5, 1)]), period_label(["m", "r"], ["2026-05", "north"])
    ('2026-05-01', 'm=2026-05; r=north')
    """
    if len(by) == 1:
        return _label(values[0])
    return "; ".join(f"{k}={_label(v)}" for k, v in zip(by, values))


# ---------------------------------------------------------------- the view


def _extreme(metric: str, v: Any) -> float:
    if not _finite(v):
        return -1.0
    if is_ratio_metric(metric):
        return abs(math.log(v)) if v > 0 else 50.0
    return abs(v)


def build_view(report: Any, opts: ViewOptions) -> dict[str, Any]:
    """Everything the template and the charts need, as plain Python data."""
    request = request_of(report) or {}
    min_n = opts.min_n if opts.min_n is not None else resolve_min_sample_size(request.get("min_sample_size"))
    rep = normalize(report)
    had_status = bool(rep.select(pl.col("status").is_not_null().any()).item())
    by = by_columns(rep, opts.by)
    tcol = time_column(rep, by)
    snapshot: dict[str, Any] = {}
    n_by_values = 0
    if opts.snapshot and not by:
        msg = f"snapshot={dict(opts.snapshot)!r}: the report has no by columns"
        raise ValueError(msg)
    combos = rep.select(by).unique().sort(by, nulls_last=True) if by else None
    if combos is not None:
        n_by_values = combos.height
        if opts.snapshot:
            snapshot = {k: opts.snapshot[k] for k in by if k in opts.snapshot}
            unknown = [k for k in opts.snapshot if k not in by]
            if unknown:
                msg = f"snapshot={dict(opts.snapshot)!r}: {unknown} are not by columns ({by})"
                raise ValueError(msg)
        for k in by:
            if k not in snapshot:
                sub = combos.filter(*[pl.col(c) == v for c, v in snapshot.items()]) if snapshot else combos
                snapshot[k] = sub[k][-1] if sub.height else None
    cond = [pl.col(k).is_null() if v is None else (pl.col(k) == v) for k, v in snapshot.items()]
    shown = rep.filter(*cond) if cond else rep
    if shown.height == 0:
        msg = f"snapshot={snapshot!r} selects no report rows"
        raise ValueError(msg)
    headline = headline_metrics(shown, opts.metrics)
    # the verdict: the report's status (none without thresholds: nothing is judged, docs/status.md)
    full = rep
    rep = full.filter(*cond) if cond else full
    present = set(rep["metric"].unique().to_list())
    has_intervals = bool(rep.select(pl.col("value_lo").is_not_null().any()).item())
    has_status = had_status

    attrs = rep["attribute"].drop_nulls().unique(maintain_order=True).to_list()
    first = {a: i for i, a in enumerate(attrs)}
    attrs.sort(key=lambda a: (a.count(" & "), first[a]))

    # ---- headline rows for every group (all groups: verdict counts, priorities)
    inputs = {m: input_rate(m, present) for m in headline}
    need = set(headline) | {r for r in inputs.values() if r} | set(TABLE_RATES) | {"n_missing", "num_instances"}
    gcols = ["attribute", "group", "metric", "value", "reference_group", "n", "value_lo", "value_hi",
             "difference", "ratio", "difference_lo", "difference_hi", "ratio_lo", "ratio_hi",
             "p_value", "p_value_adjusted", "threshold", "status", "harm"]  # fmt: skip
    g = rep.filter(pl.col("group").is_not_null(), pl.col("metric").is_in(list(need))).select(gcols)
    head = g.filter(pl.col("metric").is_in(headline))
    # reference group sizes (for "small reference" and the sentences)
    sizes = {(a, grp): n for a, grp, n in g.select("attribute", "group", "n").unique().iter_rows()}
    rates = {
        (a, grp, m): v
        for a, grp, m, v in g.filter(pl.col("metric").is_in([r for r in inputs.values() if r]))
        .select("attribute", "group", "metric", "value").iter_rows()
    }  # fmt: skip

    rows_by_set: dict[str, dict[str, list[dict[str, Any]]]] = {a: {m: [] for m in headline} for a in attrs}
    priority: dict[tuple[str, str], tuple[int, float, int]] = {}
    for r in head.iter_rows(named=True):
        a, grp, m = r["attribute"], r["group"], r["metric"]
        if a not in rows_by_set:
            continue
        ref = r["reference_group"]
        is_ref = ref is not None and grp == ref
        band = band_of(r["threshold"])
        band_source = None if band is None else "threshold"
        ref_n = sizes.get((a, ref)) if ref is not None else None
        # the core's verdict where the report judged the row (no re-judging); else the same policy's size
        small_n, small_ref = (r["n"] or 0) < min_n, ref_n is not None and ref_n < min_n
        small = r["status"] == "insufficient_data" if r["status"] is not None else (small_n or small_ref)
        status = r["status"] or "not_assessed"
        if is_ref:
            status = "reference"
        reason = None
        rate_name = inputs.get(m)
        g_rate = rates.get((a, grp, rate_name)) if rate_name else None
        r_rate = rates.get((a, ref, rate_name)) if rate_name and ref is not None else None
        if r["value"] is None:
            if ref is None:
                reason = "no reference group"
            elif rate_name and g_rate is None:
                reason = f"{SHORT.get(rate_name, rate_name)} undefined (empty denominator)"
            elif rate_name and r_rate == 0 and is_ratio_metric(m):
                reason = f"reference {SHORT.get(rate_name, rate_name)} is 0"
            else:
                reason = "undefined"
        elif small:
            reason = (
                f"small group (n = {fmt_num(r['n'])})" if small_n
                else f"small reference (n = {fmt_num(ref_n)})" if small_ref else "insufficient data"
            )  # fmt: skip
        row = {
            "group": grp, "n": r["n"], "value": r["value"], "lo": r["value_lo"], "hi": r["value_hi"],
            "status": status, "is_ref": is_ref, "reason": reason, "band": band, "band_source": band_source,
            "reference": ref, "rate_name": rate_name, "group_rate": g_rate, "reference_rate": r_rate,
            "p": r["p_value_adjusted"] if r["p_value_adjusted"] is not None else r["p_value"],
            "p_adjusted": r["p_value_adjusted"] is not None, "harm": r["harm"],
            "grey": reason is not None and not is_ref,
        }  # fmt: skip
        rows_by_set[a][m].append(row)
        key = (a, grp)
        pr = (SEVERITY.get(status, 0) if not is_ref else 9, _extreme(m, r["value"]), r["n"] or 0)
        if key not in priority or pr > priority[key]:
            priority[key] = pr

    # groups the report left out of an attribute set (its excluded_groups column, when present)
    excluded_by_set: dict[str, str] = {}
    if "excluded_groups" in rep.columns:
        ex = rep.filter(
            pl.col("group").is_null(), pl.col("attribute").is_not_null(), pl.col("excluded_groups").is_not_null()
        )
        for a, text in ex.select("attribute", "excluded_groups").unique(subset="attribute", keep="first").iter_rows():
            if text:
                excluded_by_set[a] = text

    # the sets whose group rows the report limited to its worst groups (request's groups_limited)
    limited = {" & ".join(x["attributes"]): x for x in request.get("groups_limited") or []}
    periods = _period_verdicts(full, by, attrs, headline, opts) if by else {}
    # ---- keep the top-k groups per attribute set (reference first in priority)
    sets: list[dict[str, Any]] = []
    for i, a in enumerate(attrs):
        groups_all = [r["group"] for r in rows_by_set[a][headline[0]]] if headline else []
        if not groups_all:
            groups_all = g.filter(pl.col("attribute") == a)["group"].unique(maintain_order=True).to_list()
        ranked = sorted(groups_all, key=lambda x: priority.get((a, x), (0, 0.0, 0)), reverse=True)
        keep = set(ranked[: opts.top_k])
        chart_rows: dict[str, list[dict[str, Any]]] = {}
        hidden: dict[str, dict[str, Any]] = {}
        verdict: dict[str, dict[str, Any]] = {}
        for m in headline:
            rows = rows_by_set[a][m]
            shown_rows = [r for r in rows if r["group"] in keep]
            rest = [r for r in rows if r["group"] not in keep]
            chart_rows[m] = shown_rows
            vals = [r["value"] for r in rest if _finite(r["value"])]
            hidden[m] = {
                "count": len(rest), "n": sum(r["n"] or 0 for r in rest),
                "min": min(vals) if vals else None, "max": max(vals) if vals else None,
                "flagged": sum(r["status"] in ("violation", "inconclusive") for r in rest),
            }  # fmt: skip
            verdict[m] = _verdict_cell(m, rows)
            if a in periods:
                verdict[m]["periods"] = periods[a]["metrics"][m]
        table = _group_table(g, a, ranked[: opts.table_rows], headline, rows_by_set[a], present)
        excluded = excluded_by_set.get(a)
        sets.append({
            "attribute": a, "id": f"set-{i}", "order": a.count(" & ") + 1, "charted": i < opts.max_sets,
            "n_groups": limited[a]["groups"] if a in limited else len(groups_all), "limited": limited.get(a),
            "chart_rows": chart_rows, "hidden": hidden, "verdict": verdict,
            "table": table, "table_hidden": max(0, len(groups_all) - opts.table_rows),
            "reference": next((r["reference"] for m in headline for r in rows_by_set[a][m] if r["reference"]), None),
            "excluded": excluded, "grid": periods.get(a),
        })  # fmt: skip

    sentences = _sentences(sets, headline)
    intersections = _intersections(rep, rows_by_set, attrs, headline, opts)
    indices = _indices(rep, g, attrs, present)
    over_time = _over_time(full, by, tcol, snapshot, headline, opts) if tcol else None
    # input rows: the population's n, summed over the by values
    pop = full.filter(pl.col("attribute").is_null())
    population_n = (
        (pop.group_by(by).agg(pl.col("n").max())["n"].sum() if by else pop["n"].max()) if pop.height else None
    )
    return {
        "by": by, "time_column": tcol, "snapshot": snapshot, "n_by_values": n_by_values,
        "snapshot_label": period_label(by, [snapshot[k] for k in by]) if by else None,
        "headline": headline, "has_intervals": has_intervals, "has_status": has_status,
        "sets": sets, "sentences": sentences, "intersections": intersections, "indices": indices,
        "over_time": over_time, "population_n": population_n, "present": present,
        "ci_methods": _distinct(rep, "ci_method"), "tests": _distinct(rep, "test"),
        "metadata": {c: _distinct(full, c) for c in METADATA if c in full.columns},
        "table_rates": [m for m in TABLE_RATES if m in present], "min_n": min_n,
        "top_k": opts.top_k, "max_sets": opts.max_sets, "report_rows": full.height,
        "has_adjusted": bool(rep.select(pl.col("p_value_adjusted").is_not_null().any()).item()),
        "has_harm": bool(rep.select(pl.col("harm").is_not_null().any()).item()),
        "grid_periods": _grid_periods(full, by),
    }  # fmt: skip


def _grid_periods(full: pl.DataFrame, by: list[str]) -> dict[str, Any]:
    """The periods of the verdict grid: the latest :data:`MAX_GRID_PERIODS`, and how many are left out."""
    if not by:
        return {"labels": [], "hidden": 0}
    combos = full.select(by).unique().sort(by, nulls_last=True)
    labels = [period_label(by, row) for row in combos.rows()]
    return {"labels": labels[-MAX_GRID_PERIODS:], "hidden": max(0, len(labels) - MAX_GRID_PERIODS)}


def _period_status(statuses: list[str]) -> str:
    """An attribute set's status on one metric in one period: the worst over its groups (as a verdict cell)."""
    judged = [s for s in statuses if s in SEVERITY and s not in ("reference", "not_assessed")]
    if not judged:
        return "not_assessed"
    worst = max(judged, key=lambda x: SEVERITY[x])
    if worst == "insufficient_data" and "ok" in judged:
        return "ok"
    return worst


def _period_verdicts(
    full: pl.DataFrame, by: list[str], attrs: list[str], headline: Sequence[str], opts: ViewOptions
) -> dict[str, dict[str, Any]]:
    """Per attribute set: for each headline metric, per period counts and the latest status, and the grid.

    The grid holds one cell per (group, metric, period) for the latest :data:`MAX_GRID_PERIODS`
    periods and the ``top_k`` groups most often flagged; its cells are the report's statuses.
    """
    rows = full.filter(pl.col("group").is_not_null(), pl.col("metric").is_in(list(headline)),
                       pl.col("attribute").is_in(attrs))  # fmt: skip
    if rows.height == 0:
        return {}
    combos = full.select(by).unique().sort(by, nulls_last=True)
    all_labels = [period_label(by, r) for r in combos.rows()]
    labels = all_labels[-MAX_GRID_PERIODS:]
    rows = rows.with_columns(
        pl.when(pl.col("group") == pl.col("reference_group")).then(pl.lit("reference"))
        .otherwise(pl.col("status").fill_null("not_assessed")).alias("__st")
    )  # fmt: skip
    period_keys = {tuple(r): lab for r, lab in zip(combos.rows(), all_labels)}
    out: dict[str, dict[str, Any]] = {}
    for (a,), sub in rows.partition_by("attribute", as_dict=True, maintain_order=True).items():
        metrics: dict[str, Any] = {}
        grid_rows: list[dict[str, Any]] = []
        sev = sub.group_by("group", maintain_order=True).agg(
            (pl.col("__st") == "violation").sum().alias("v"), (pl.col("__st") == "inconclusive").sum().alias("i"),
            (pl.col("__st") == "reference").any().alias("ref"),
        ).sort(["ref", "v", "i"], descending=True, maintain_order=True)  # fmt: skip
        groups = sev["group"].head(opts.top_k).to_list()
        cells: dict[tuple[str, str, str], dict[str, Any]] = {}
        for r in sub.filter(pl.col("group").is_in(groups)).iter_rows(named=True):
            lab = period_keys[tuple(r[k] for k in by)]
            cells[(r["group"], r["metric"], lab)] = {
                "status": r["status"] or "not_assessed", "reference": r["__st"] == "reference", "value": r["value"],
                "lo": r["value_lo"], "hi": r["value_hi"],
            }  # fmt: skip
        for m in headline:
            per_period: dict[str, list[str]] = {}
            for row in sub.filter(pl.col("metric") == m).select(*by, "__st").rows():
                per_period.setdefault(period_keys[tuple(row[:-1])], []).append(row[-1])
            statuses = {lab: _period_status(per_period.get(lab, [])) for lab in all_labels}
            counts: dict[str, int] = {}
            for st in statuses.values():
                counts[st] = counts.get(st, 0) + 1
            metrics[m] = {"counts": counts, "latest": statuses[all_labels[-1]], "n_periods": len(all_labels),
                          "violation_periods": [lab for lab in all_labels if statuses[lab] == "violation"]}  # fmt: skip
            for grp in groups:
                grid_rows.append({
                    "group": grp, "metric": m,
                    "cells": [{"period": lab, **cells.get((grp, m, lab), {"status": None})} for lab in labels],
                })  # fmt: skip
        out[a] = {"metrics": metrics, "rows": grid_rows, "hidden_groups": max(0, sev.height - len(groups))}
    return out


def _distinct(rep: pl.DataFrame, col: str) -> list[str]:
    if col not in rep.columns:
        return []
    return [str(v) for v in rep[col].drop_nulls().unique(maintain_order=True).to_list()][:10]


def _verdict_cell(metric: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    judged = [r for r in rows if not r["is_ref"]]
    counts: dict[str, int] = {}
    for r in judged:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    worst = max((r["status"] for r in judged), key=lambda s: SEVERITY.get(s, 0), default="not_assessed")
    if worst == "insufficient_data" and counts.get("ok"):
        worst = "ok"  # some groups judged ok, the rest too small: the judged part is fine
    flagged = [r for r in judged if r["status"] in ("violation", "inconclusive")]
    flagged.sort(key=lambda r: (-SEVERITY[r["status"]], -_extreme(metric, r["value"])))
    band = next((r["band"] for r in rows if r["band"] is not None), None)
    src = next((r["band_source"] for r in rows if r["band_source"] is not None), None)
    return {
        "status": worst, "counts": counts, "n_judged": len(judged), "worst_group": flagged[0] if flagged else None,
        "band": fmt_band(band), "band_source": src,
    }  # fmt: skip


def _sentence(attribute: str, metric: str, r: dict[str, Any]) -> str:
    rate = r["rate_name"]
    ref = r["reference"]
    head = f"{attribute} = {r['group']}"
    if rate and r["group_rate"] is not None and r["reference_rate"] is not None:
        s = f"{head} {PHRASE.get(rate, 'has a ' + rate.replace('_', ' ') + ' of')} {fmt_pct(r['group_rate'])} "
        s += f"vs {fmt_pct(r['reference_rate'])} for the reference group {ref}"
    else:
        s = f"{head} compared with the reference group {ref}"
    kind = "ratio" if is_ratio_metric(metric) else "difference"
    s += f": {metric} ({kind}) {fmt_metric(metric, r['value'])}"
    ci = fmt_interval(metric, r["lo"], r["hi"])
    if ci:
        s += f" {ci}"
    band = fmt_band(r["band"]) if r["band"] else None
    if r["status"] == "violation":
        s += f", outside the band {band} with its whole interval" if band and ci else (
            f", outside the band {band}" if band else ", a violation")  # fmt: skip
    elif r["status"] == "inconclusive":
        s += f", outside the band {band} but the interval reaches into it (inconclusive)" if band else ", inconclusive"
    if r.get("harm") == "group":
        s += "; the group is on the disadvantaged side"
    elif r.get("harm") == "reference":
        s += f"; the reference group {ref} is on the disadvantaged side"
    s += f" (n = {fmt_num(r['n'])}"
    if r.get("p") is not None:
        s += f"; {'adjusted ' if r.get('p_adjusted') else ''}p = {r['p']:.2g}"
    return s + ")."


def _sentences(sets: list[dict[str, Any]], headline: Sequence[str], per_cell: int = 5) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for s in sets:
        blocks: list[dict[str, Any]] = []
        out.append({"attribute": s["attribute"], "blocks": blocks})
        for m in headline:
            rows = [r for r in s["chart_rows"][m] if r["status"] in ("violation", "inconclusive")]
            rows.sort(key=lambda r: (-SEVERITY[r["status"]], -_extreme(m, r["value"])))
            total = s["verdict"][m]["counts"].get("violation", 0) + s["verdict"][m]["counts"].get("inconclusive", 0)
            if not rows and not total:
                continue
            blocks.append({
                "attribute": s["attribute"], "metric": m, "status": s["verdict"][m]["status"],
                "items": [{"text": _sentence(s["attribute"], m, r), "status": r["status"]} for r in rows[:per_cell]],
                "more": max(0, total - min(per_cell, len(rows))),
            })  # fmt: skip
    return [e for e in out if e["blocks"]]


def _group_table(
    g: pl.DataFrame, attribute: str, groups: list[str], headline: Sequence[str],
    rows: dict[str, list[dict[str, Any]]], present: set[str],
) -> list[dict[str, Any]]:  # fmt: skip
    """Rows of the group table for ``groups`` (in report order)."""
    sub = g.filter(pl.col("attribute") == attribute, pl.col("group").is_in(groups))
    cells: dict[str, dict[str, Any]] = {}
    order: list[str] = []
    for r in sub.iter_rows(named=True):
        grp = r["group"]
        if grp not in cells:
            cells[grp] = {"group": grp, "n": r["n"], "is_ref": grp == r["reference_group"]}
            order.append(grp)
        cells[grp][r["metric"]] = (r["value"], r["value_lo"], r["value_hi"])
    for m in headline:
        for hr in rows[m]:
            if hr["group"] in cells:
                cells[hr["group"]]["h:" + m] = hr
    return [cells[grp] for grp in order]


def _split_group(group: str, k: int) -> list[str] | None:
    parts = group.split(" & ")
    return parts if len(parts) == k else None


def _intersections(
    rep: pl.DataFrame, rows_by_set: dict[str, dict[str, list[dict[str, Any]]]], attrs: list[str],
    headline: Sequence[str], opts: ViewOptions,
) -> list[dict[str, Any]]:  # fmt: skip
    """Heatmaps of the first headline metric over every pair of attributes."""
    if not headline:
        return []
    metric = headline[0]
    out = []
    keyed = "group_key" in rep.columns and isinstance(rep.schema["group_key"], pl.Struct)
    for a in attrs:
        if a.count(" & ") != 1:
            continue
        left, right = a.split(" & ")
        judged = {r["group"]: r for r in rows_by_set[a][metric]}
        sub = rep.filter(pl.col("attribute") == a, pl.col("metric") == metric, pl.col("group").is_not_null())
        cells: dict[tuple[str, str], dict[str, Any]] = {}
        for r in sub.iter_rows(named=True):
            parts: list[str] | None = None
            if keyed and isinstance(r.get("group_key"), dict):
                key = r["group_key"]
                if left in key and right in key:
                    parts = [_label(key[left]), _label(key[right])]
            if parts is None:
                parts = _split_group(r["group"], 2)
            if parts is None:
                continue  # a value that itself contains " & ": not placeable without group_key
            j = judged.get(r["group"], {})
            cells[(parts[0], parts[1])] = {
                "value": r["value"], "n": r["n"], "status": j.get("status"), "grey": j.get("grey", False),
                "reference": r["group"] == r["reference_group"],
            }  # fmt: skip
        if not cells:
            continue
        size: dict[str, dict[str, int]] = {"row": {}, "col": {}}
        for (x, y), c in cells.items():
            size["row"][x] = size["row"].get(x, 0) + (c["n"] or 0)
            size["col"][y] = size["col"].get(y, 0) + (c["n"] or 0)
        rows = sorted(size["row"], key=lambda v: -size["row"][v])[: opts.max_heatmap_levels]
        cols = sorted(size["col"], key=lambda v: -size["col"][v])[: opts.max_heatmap_levels]
        rows.sort()
        cols.sort()
        out.append({
            "attribute": a, "row_attr": left, "col_attr": right, "rows": rows, "cols": cols, "cells": cells,
            "metric": metric, "hidden_rows": len(size["row"]) - len(rows), "hidden_cols": len(size["col"]) - len(cols),
        })  # fmt: skip
        if len(out) >= opts.max_sets:
            break
    return out


def _indices(rep: pl.DataFrame, g: pl.DataFrame, attrs: list[str], present: set[str]) -> dict[str, Any]:
    """EDF and between-group entropy indices per attribute set, with the groups that drive them."""
    attr_rows = rep.filter(pl.col("attribute").is_not_null(), pl.col("group").is_null(),
                           pl.col("metric").is_in(list(ATTRIBUTE_INDICES)))  # fmt: skip
    vals: dict[tuple[str, str], tuple[Any, Any, Any]] = {
        (r["attribute"], r["metric"]): (r["value"], r["value_lo"], r["value_hi"])
        for r in attr_rows.iter_rows(named=True)
    }
    metrics = [m for m in ATTRIBUTE_INDICES if any(k[1] == m for k in vals)]
    by_set = []
    for a in attrs:
        if not any((a, m) in vals for m in metrics):
            continue
        sub = g.filter(pl.col("attribute") == a)
        per: dict[str, dict[str, Any]] = {}
        for grp, m, v in sub.select("group", "metric", "value").iter_rows():
            per.setdefault(grp, {})[m] = v
        drivers = {}
        for m, rate in (("smoothed_empirical_differential_fairness", "base_rate"),
                        ("smoothed_empirical_differential_fairness_predictions", "selection_rate")):  # fmt: skip
            pts = [(grp, d[rate]) for grp, d in per.items() if d.get(rate) is not None]
            if (a, m) in vals and len(pts) >= 2:
                hi = max(pts, key=lambda t: t[1])
                lo = min(pts, key=lambda t: t[1])
                drivers[m] = f"highest {SHORT[rate]}: {hi[0]} ({fmt_pct(hi[1])}); lowest: {lo[0]} ({fmt_pct(lo[1])})"
        theil = vals.get((a, "between_group_theil_index"), (None,))[0]
        contrib = _theil_contributions(per, theil)
        if contrib:
            drivers["between_group_theil_index"] = "largest shares: " + "; ".join(
                f"{grp} ({share:.0%})" for grp, share in contrib[:3]
            )
        present_m = [m for m in metrics if (a, m) in vals]
        by_set.append({
            "attribute": a,
            "rows": [{"metric": m, "label": INDEX_LABELS.get(m, m), "value": vals[(a, m)][0], "lo": vals[(a, m)][1],
                      "hi": vals[(a, m)][2], "driver": drivers.get(m, "")} for m in present_m],
        })  # fmt: skip
    pop = rep.filter(pl.col("attribute").is_null(), pl.col("metric").is_in(list(POPULATION_INDICES)))
    population = [
        {"metric": r["metric"], "value": r["value"], "lo": r["value_lo"], "hi": r["value_hi"]}
        for r in pop.iter_rows(named=True)
    ]
    return {"metrics": metrics, "sets": by_set, "population": population}


def _theil_contributions(per: dict[str, dict[str, Any]], theil: Any) -> list[tuple[str, float]]:
    """Each group's share of the between-group Theil index, when it reproduces the reported value.

    The between-group Theil index of aif360 gives every individual its group's mean benefit
    ``b = ŷ − y + 1``: ``T = Σ_g π_g (μ_g/μ) ln(μ_g/μ)`` with ``μ_g = 1 + selection_rate − base_rate``.
    The report's rates are weighted when weights were given while the index is not; so the shares
    are shown only when their sum equals the reported index (else an empty list).
    """
    if not _finite(theil) or theil <= 0:
        return []
    parts = []
    for grp, d in per.items():
        n, sel, base = d.get("num_instances"), d.get("selection_rate"), d.get("base_rate")
        if n is None:
            return []
        if not n:
            continue
        if sel is None or base is None:
            return []
        parts.append((grp, n, 1.0 + sel - base))
    total = sum(p[1] for p in parts)
    if total <= 0:
        return []
    mu = sum(n * m for _, n, m in parts) / total
    if mu <= 0:
        return []
    # T = Σ π_g (r ln r − r + 1) with r = μ_g/μ (the added terms sum to 0): every term is ≥ 0
    contrib = [(grp, (n / total) * ((m / mu) * math.log(m / mu) - m / mu + 1 if m > 0 else 1.0)) for grp, n, m in parts]
    s = sum(c for _, c in contrib)
    if not math.isclose(s, theil, rel_tol=1e-6, abs_tol=1e-12):
        return []
    contrib.sort(key=lambda t: -abs(t[1]))
    return [(grp, c / theil) for grp, c in contrib]


def _over_time(
    full: pl.DataFrame, by: list[str], tcol: str, snapshot: dict[str, Any], headline: Sequence[str], opts: ViewOptions
) -> list[dict[str, Any]]:
    """Per single attribute: the first headline metric per period for the largest groups."""
    if not headline:
        return []
    metric = headline[0]
    others = [c for c in by if c != tcol]
    single = pl.col("attribute").is_not_null() & ~pl.col("attribute").str.contains(" & ", literal=True)
    sub = full.filter(pl.col("metric") == metric, pl.col("group").is_not_null(), single)
    for c in others:
        v = snapshot.get(c)
        sub = sub.filter(pl.col(c).is_null() if v is None else pl.col(c) == v)
    periods = sub[tcol].unique().sort(nulls_last=True).to_list()
    if len(periods) < 2:
        return []
    out = []
    for a in sub["attribute"].unique(maintain_order=True).to_list():
        s = sub.filter(pl.col("attribute") == a)
        refs = s.filter(pl.col("group") == pl.col("reference_group"))["group"].unique(maintain_order=True).to_list()
        # a group that is the reference in every period is the flat line at 1 (or 0): not drawn
        always_ref = (
            s.group_by("group").agg((pl.col("group") == pl.col("reference_group")).all().alias("r"))
            .filter(pl.col("r"))["group"].to_list()
        )  # fmt: skip
        sizes = (
            s.filter(~pl.col("group").is_in(always_ref)).group_by("group").agg(pl.col("n").sum())
            .sort(["n", "group"], descending=[True, False])
        )  # fmt: skip
        groups = sizes["group"].head(opts.max_series).to_list()
        series = []
        for grp in groups:
            pts = {p: (v, lo, hi, st) for p, v, lo, hi, st in s.filter(pl.col("group") == grp)
                   .select(tcol, "value", "value_lo", "value_hi", "status").iter_rows()}  # fmt: skip
            series.append({"group": grp, "points": [pts.get(p, (None, None, None, None)) for p in periods]})
        band = next((band_of(t) for t in s["threshold"].to_list() if band_of(t)), None)
        reference = None
        if refs:
            reference = str(refs[0]) if len(refs) == 1 else "per period: " + ", ".join(map(str, refs))
        flagged = set(s.filter(pl.col("status") == "violation", pl.col("group") != pl.col("reference_group"))[tcol]
                      .to_list())  # fmt: skip
        out.append({
            "attribute": a, "metric": metric, "periods": [_label(p) for p in periods], "series": series,
            "violation_periods": [i for i, p in enumerate(periods) if p in flagged],
            "reference": reference,
            "band": band,
            "hidden": max(0, sizes.height - len(groups)), "others": {c: snapshot.get(c) for c in others},
        })  # fmt: skip
    return out
