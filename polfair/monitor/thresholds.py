"""Thresholds on a fairness report: :func:`apply_thresholds` (``threshold``/``status``) and :func:`alerts`.

A threshold is an inclusive band per metric; each checked row of the report gets the ``status`` of
THE status rule, :func:`polfair.core.report.status.status_expr`: ``"insufficient_data"`` (a group, or its
reference group, below ``min_sample_size`` rows, or an undefined value), ``"ok"`` (inside the
band), ``"violation"`` (outside, and with intervals the whole interval outside on the same side)
or ``"inconclusive"`` (outside, the interval reaching into the band). Without intervals it is IBM
Watson OpenScale's point rule. No output judges a report without thresholds (``docs/status.md``);
``thresholds="four_fifths"`` (:data:`THRESHOLD_PRESETS`) asks for the common verdict, and
:func:`default_verdict` applies the same bands to a report when called.
"""

from __future__ import annotations

import difflib
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from polfair.core.docstrings import with_setup
from polfair.core.metrics import METRICS
from polfair.core.reference import resolve_min_sample_size
from polfair.core.report.build import REPORT_COLUMNS as _REPORT_COLUMNS
from polfair.core.report.run_metadata import attach_request, request_of
from polfair.core.report.status import STATUS_VALUES, check_sides, is_ratio_metric, sided_band, status_expr
from polfair.core.schema import by_columns
from polfair.exceptions import PolfairError, user_stacklevel
from polfair.monitor._values import format_number
from polfair.monitor.config import FOUR_FIFTHS, THRESHOLD_PRESETS, parse_thresholds, preset_thresholds

__all__ = [
    "FOUR_FIFTHS", "STATUS_VALUES", "THRESHOLD_PRESETS", "alerts", "apply_thresholds", "default_verdict",
    "format_threshold",
]  # fmt: skip


def format_threshold(lo: float, hi: float) -> str:
    """The ``threshold`` column's text for an inclusive band, e.g. ``"[0.8, 1.25]"``.

    Examples
    --------
    >>> format_threshold(0.8, 1.25), format_threshold(-0.1, float("inf"))
    ('[0.8, 1.25]', '[-0.1, inf]')
    """
    return f"[{format_number(lo)}, {format_number(hi)}]"



@with_setup
def apply_thresholds(
    report: pl.DataFrame,
    thresholds: Mapping[str, Any],
    min_sample_size: int | None = None,
    *,
    groups: Mapping[str, Sequence[str]] | None = None,
    band: str = "both",
    significance: float | None = None,
) -> pl.DataFrame:
    """Judge a fairness report against thresholds: add ``threshold`` and ``status`` columns.

    Parameters
    ----------
    report
        A report of :func:`polfair.fairness_report` (any ``by`` columns are kept).
    thresholds
        Metric name -> inclusive band ``[lo, hi]`` or ``{min=, max=}`` (see
        :func:`parse_thresholds`). Names must be metrics present in the report. Or a policy name
        (:data:`~polfair.monitor.config.THRESHOLD_PRESETS`): ``"four_fifths"`` is the band
        [0.8, 1.25] on ``disparate_impact`` and (with predictions) the FPR and FNR ratios.
    min_sample_size
        Int >= 0 or ``None`` (default: the small-group policy's 30 rows,
        :data:`polfair.core.reference.DEFAULT_MIN_SAMPLE_SIZE`; ``0``: no minimum). A
        checked row whose group has fewer than this many input rows (``n``), or whose reference
        group does (comparisons), or, for an attribute-level row, whose smallest group does, gets
        ``"insufficient_data"``.
    groups
        Optional mapping attribute-set name -> group labels to judge; group rows of those
        attribute sets with other labels get no status (``fairness_report(config=...)`` passes the
        monitored group of each config attribute). Attribute sets not in the mapping are judged
        for all groups.
    band
        ``"both"`` (default): a row is judged against both sides of its band (OpenScale's and
        Aequitas' symmetric band). ``"harm"``: only the side that disadvantages the group
        (:func:`polfair.core.report.status.sided_band`): ``[0.8, 1.25]`` is read ``[0.8, inf]`` for
        ``disparate_impact`` (a lower selection rate) and ``[-inf, 1.25]`` for
        ``false_negative_rate_ratio``, as the EEOC reads the four-fifths rule; metrics without a
        direction keep both sides. The ``threshold`` column shows the band applied.
    significance
        Deprecated and ignored (a ``FutureWarning``): the status reads the report's intervals,
        whose level is ``fairness_report(ci=...)``; ``significance=a`` there means ``ci=1-a``.
        Before schema version 3 a breach was a violation when its adjusted p-value was below
        ``significance``; see ``docs/schema.md``.

    Returns
    -------
    pl.DataFrame
        The report plus ``threshold`` (String, e.g. ``"[0.8, 1.25]"``) and ``status`` (String, the
        rule of :func:`polfair.core.report.status.status_expr`: ``"ok"`` if ``lo <= value <= hi``;
        outside, ``"violation"`` when the report has no interval for the row or the whole
        ``[value_lo, value_hi]`` lies outside the band on the value's side, else
        ``"inconclusive"``; ``"insufficient_data"`` as above or when ``value`` is null; null where
        no threshold applies). Which rows are checked:
        every row of a threshold's metric, except the attribute-level rows of per-group metrics
        (:data:`polfair.core.metrics.METRICS`, whose ``value`` is null by design).

    Raises
    ------
    PolfairError
        A threshold names a metric that is not in the report (with close names), an invalid band,
        ``band`` or ``min_sample_size``, or a report without the report columns.

    Notes
    -----
    The band is inclusive on both ends, as OpenScale's and Aequitas' ``tau`` band
    (``0.8 <= disparate_impact <= 1.25``). A comparison with a pooled reference (several
    privileged values) or with ``reference="overall"`` checks only the group's own size.

    Examples
    --------
    {{toy_report}}
    >>> out = apply_thresholds(rep, {"disparate_impact": [0.8, 1.25]}, min_sample_size=2)
    >>> out.filter(pl.col("status").is_not_null()).select("group", "value", "threshold", "status")
    shape: (2, 4)
    ┌───────┬───────┬─────────────┬──────────────┐
    │ group ┆ value ┆ threshold   ┆ status       │
    │ ---   ┆ ---   ┆ ---         ┆ ---          │
    │ str   ┆ f64   ┆ str         ┆ str          │
    ╞═══════╪═══════╪═════════════╪══════════════╡
    │ a     ┆ 1.0   ┆ [0.8, 1.25] ┆ ok           │
    │ b     ┆ 0.0   ┆ [0.8, 1.25] ┆ inconclusive │
    └───────┴───────┴─────────────┴──────────────┘
    """
    missing = [c for c in _REPORT_COLUMNS if c not in report.columns]
    if missing:
        msg = f"apply_thresholds needs a fairness report (columns {list(_REPORT_COLUMNS)}); missing {missing}"
        raise PolfairError(msg)
    if isinstance(thresholds, str):  # a named policy, on the metrics the report has
        has_pred = bool(report.select((pl.col("metric").cast(pl.String) == "selection_rate").any()).item())
        thresholds = preset_thresholds(thresholds, has_predictions=has_pred)
    bands = parse_thresholds(thresholds)
    request = request_of(report)
    if min_sample_size is None and isinstance(request, Mapping):  # the report's own policy, set once
        min_sample_size = request.get("min_sample_size")
    min_n = resolve_min_sample_size(min_sample_size)
    try:
        sides = check_sides(band)
    except ValueError as exc:
        raise PolfairError(str(exc)) from None
    _check_metrics_present(report, bands)
    if significance is not None:
        warnings.warn(
            f"apply_thresholds(significance={significance!r}) is ignored: the status reads the report's "
            "confidence intervals (a violation's whole interval lies outside the band), whose level is set when "
            "the report is computed (fairness_report(ci=0.95)); see docs/schema.md, version 3",
            FutureWarning, stacklevel=user_stacklevel(),
        )  # fmt: skip
    report = report.drop("threshold", "status", strict=False)
    out = report.with_row_index("__pf_row")
    table = _band_table(bands, pl.String())
    lo, hi = sided_band(pl.col("metric"), pl.col("__pf_lo"), pl.col("__pf_hi"), sides)  # on the small table
    table = table.with_columns(lo.alias("__pf_lo"), hi.alias("__pf_hi"), pl.col("metric").cast(report.schema["metric"]))
    out = out.join(table, on="metric", how="left", maintain_order="left")
    out = _join_sample_sizes(out, report)
    eligible = _eligible(groups, report.columns)
    out = out.sort("__pf_row").with_columns(
        pl.when(eligible).then(_threshold_text()).alias("threshold"), _status(report, eligible, min_n).alias("status")
    )
    return attach_request(out.select(*report.columns, "threshold", "status"), request)


def _threshold_text() -> pl.Expr:
    """``"[lo, hi]"`` of the band applied (one-sided bands: ``inf``), as :func:`format_threshold` writes it."""

    def num(e: pl.Expr) -> pl.Expr:
        whole = (e == e.round(0)) & e.is_finite() & (e.abs() < 1e15)
        text = pl.when(whole).then(e.cast(pl.Int64).cast(pl.String)).otherwise(e.cast(pl.String))
        return pl.when(e == float("inf")).then(pl.lit("inf")).when(e == float("-inf")).then(pl.lit("-inf")).otherwise(text)

    return pl.concat_str([pl.lit("["), num(pl.col("__pf_lo")), pl.lit(", "), num(pl.col("__pf_hi")), pl.lit("]")])


#: A group row of the report / an attribute-level row (group null) of the report.
_IS_GROUP = pl.col("group").is_not_null() & pl.col("attribute").is_not_null()
_IS_ATTR = pl.col("group").is_null() & pl.col("attribute").is_not_null()


def _check_metrics_present(report: pl.DataFrame, bands: Mapping[str, tuple[float, float]]) -> None:
    """Raise, with close names, when a threshold names a metric the report does not have."""
    present = report["metric"].unique().drop_nulls().to_list()
    for name in bands:
        if name not in present:
            close = difflib.get_close_matches(name, present, n=3, cutoff=0.6)
            hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
            msg = (
                f"thresholds: {name!r} is not a metric of this report.{hint} Threshold a metric the "
                "report has (labels-only audits have no prediction metrics)"
            )
            raise PolfairError(msg)


def _band_table(bands: Mapping[str, tuple[float, float]], metric_dtype: pl.DataType) -> pl.DataFrame:
    """One row per thresholded metric: ``metric`` (in the report's dtype), ``__pf_lo``, ``__pf_hi``, ``threshold``."""
    table = pl.DataFrame(
        {
            "metric": list(bands),
            "__pf_lo": [b[0] for b in bands.values()],
            "__pf_hi": [b[1] for b in bands.values()],
            "threshold": [format_threshold(*b) for b in bands.values()],
        },
        schema={"metric": pl.String, "__pf_lo": pl.Float64, "__pf_hi": pl.Float64, "threshold": pl.String},
    )
    return table.with_columns(pl.col("metric").cast(metric_dtype))


def _join_sample_sizes(out: pl.DataFrame, report: pl.DataFrame) -> pl.DataFrame:
    """Add ``__pf_ref_n`` (rows of the row's reference group) and ``__pf_min_n`` (its smallest group)."""
    keys = [*by_columns(report.columns), "attribute"]
    sizes = (
        report.filter(_IS_GROUP).group_by([*keys, "group"]).agg(pl.col("n").first().alias("__pf_ref_n"))
    )
    smallest = report.filter(_IS_GROUP).group_by(keys).agg(pl.col("n").min().alias("__pf_min_n"))
    sizes = sizes.rename({"group": "reference_group"}).with_columns(
        pl.col("reference_group").cast(report.schema["reference_group"])
    )
    out = out.join(
        sizes, on=[*keys, "reference_group"], how="left",
        nulls_equal=True, maintain_order="left",
    )  # fmt: skip
    return out.join(smallest, on=keys, how="left", nulls_equal=True, maintain_order="left")


def _eligible(groups: Mapping[str, Sequence[str]] | None, columns: Sequence[str] = ()) -> pl.Expr:
    """Rows a threshold applies to: a band exists, not a per-group metric's attribute row, a judged group."""
    # a per-group metric's attribute row holds its spread (value null by design): the core's metrics by
    # name; another room's (a ranking report's exposure, ...) by what the rows say: its attribute row has no
    # value while the same metric has group rows in the set
    keys = [*by_columns(list(columns)), "attribute", "metric"]
    has_groups = pl.col("group").is_not_null().any().over(keys)
    per_group_metric = pl.col("metric").is_in([*METRICS, "n_missing"]) | (
        ~pl.col("metric").is_in([*METRICS, "n_missing"]) & pl.col("value").is_null() & has_groups
    )
    eligible = pl.col("__pf_lo").is_not_null() & ~(_IS_ATTR & per_group_metric)
    if groups:
        judged = pl.lit(False)
        named = pl.lit(False)
        for attr, labels in groups.items():
            labels = [labels] if isinstance(labels, str) else list(labels)
            here = pl.col("attribute") == attr
            named = named | here
            judged = judged | (here & pl.col("group").is_in(labels))
        eligible = eligible & (~_IS_GROUP | ~named.fill_null(False) | judged.fill_null(False))
    return eligible


def _status(report: pl.DataFrame, eligible: pl.Expr, min_n: int | None) -> pl.Expr:
    """The ``status`` column: :func:`polfair.core.report.status.status_expr` on the eligible rows, else null."""
    own = pl.when(_IS_ATTR).then(pl.col("__pf_min_n")).otherwise(pl.col("n"))
    ref_n = pl.when(_IS_GROUP).then(pl.col("__pf_ref_n"))
    has_ci = "value_lo" in report.columns and "value_hi" in report.columns
    rule = status_expr(
        pl.col("value"), pl.col("value_lo") if has_ci else None, pl.col("value_hi") if has_ci else None,
        pl.col("__pf_lo"), pl.col("__pf_hi"), n=own, n_ref=ref_n, min_sample_size=min_n,
    )  # fmt: skip
    return pl.when(eligible).then(rule)


def default_verdict(report: pl.DataFrame, *, metrics: Sequence[str] | None = None, min_sample_size: int | None = None,
                    band: str = "both") -> pl.DataFrame:  # fmt: skip
    """The report with a status: its own, else the four-fifths verdict (asked for explicitly).

    A report judged by :func:`apply_thresholds` (it has a ``status`` column) is returned as is. A
    report without thresholds gets the ratio metrics among ``metrics`` (default
    ``disparate_impact``, ``false_positive_rate_ratio``, ``false_negative_rate_ratio``) judged
    against the four-fifths band :data:`FOUR_FIFTHS` by :func:`apply_thresholds` (the one status
    rule), with ``min_sample_size``. No output calls it (``docs/status.md``: an output never judges
    a report computed without thresholds); ``fairness_report(thresholds="four_fifths")`` gives
    the same bands in the report itself.

    Parameters
    ----------
    report
        A long report.
    metrics
        Headline metrics; only the ratio metrics among them present in the report are judged.
    min_sample_size
        Rows a group (and its reference) needs to be judged (``None``: the report's, else the
        policy's 30; ``0``: no minimum).
    band
        ``"both"`` or ``"harm"`` (see :func:`apply_thresholds`).

    Returns
    -------
    pl.DataFrame
        The report with ``threshold`` and ``status`` (unchanged when it had ``status``).

    Examples
    --------
    >>> import polars as pl
    >>> import polfair as pf
    >>> df = pl.DataFrame({"y": [1, 0, 1, 0] * 20, "p": [1, 1, 0, 0] * 20, "g": ["a", "b"] * 40})
    >>> rep = pf.fairness_report(df, y_true="y", y_pred="p", protected="g", privileged={"g": "a"})
    >>> default_verdict(rep).filter(metric="disparate_impact")["status"].to_list()
    ['ok', 'ok']
    """
    if "status" in report.columns:
        return report
    present = set(report.filter(pl.col("group").is_not_null())["metric"].cast(pl.String).unique().to_list())
    wanted = metrics if metrics is not None else ("disparate_impact", "false_positive_rate_ratio",
                                                  "false_negative_rate_ratio")  # fmt: skip
    bands = {m: FOUR_FIFTHS for m in wanted if m in present and is_ratio_metric(m)}
    return apply_thresholds(report, bands, min_sample_size, band=band)


def alerts(report: pl.DataFrame) -> pl.DataFrame:
    """The violations of a judged report: its rows with ``status == "violation"`` (it judges nothing).

    Parameters
    ----------
    report
        A report with a ``status`` column (``fairness_report(..., thresholds=...)``,
        ``fairness_report(..., config=...)`` or :func:`apply_thresholds`).

    Returns
    -------
    pl.DataFrame
        Those rows, all columns kept, in report order; empty (same schema) when all is well. When
        the report has intervals (``ci=``), a String column ``interval`` (``"[lo, hi]"``; null where
        the row has none) follows ``value``.

    Raises
    ------
    PolfairError
        The report has no ``status`` column (no thresholds were applied).

    Examples
    --------
    >>> import polars as pl
    >>> import polfair as pf
    >>> df = pl.DataFrame({"y": [1, 0, 1, 0] * 50, "p": [1, 1, 0, 0] * 50, "g": ["a", "a", "b", "b"] * 50})
    >>> rep = pf.fairness_report(df, y_true="y", y_pred="p", protected="g",
    ...                          thresholds={"statistical_parity_difference": [-0.1, 0.1]})
    >>> alerts(rep).select("group", "metric", "value", "status").rows()
    [('b', 'statistical_parity_difference', -1.0, 'violation')]
    """
    if "status" not in report.columns:
        msg = (
            "alerts() needs a report with a status column: the report has no thresholds, so nothing is judged "
            "(docs/status.md). Pass thresholds='four_fifths' (or your bands, or config=) to fairness_report, or "
            "call apply_thresholds(report, 'four_fifths')"
        )
        raise PolfairError(msg)
    out = report.filter(pl.col("status") == "violation")
    if "value_lo" in out.columns and "value_hi" in out.columns and "interval" not in out.columns:
        cols = out.columns
        lo, hi = pl.col("value_lo"), pl.col("value_hi")

        def num(e: pl.Expr) -> pl.Expr:
            return pl.when(e.is_null()).then(pl.lit("?")).otherwise(e.round_sig_figs(3).cast(pl.String))

        pieces = [pl.lit("["), num(lo), pl.lit(", "), num(hi), pl.lit("]")]
        text = pl.when(lo.is_not_null() | hi.is_not_null()).then(pl.concat_str(pieces))
        at = cols.index("value") + 1
        out = out.with_columns(text.alias("interval")).select(*cols[:at], "interval", *cols[at:])
    return out

