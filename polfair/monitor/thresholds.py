"""Thresholds on a fairness report: :func:`apply_thresholds` (``threshold``/``status``) and :func:`alerts`.

A threshold is an inclusive band per metric; each checked row of the report gets ``status`` ``"ok"``,
``"violation"`` or ``"insufficient_data"`` (a group, or its reference group, below
``min_sample_size`` rows, or an undefined value), as IBM Watson OpenScale's fairness monitor does.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from polfair.core.metrics import METRICS
from polfair.core.report import REPORT_COLUMNS as _REPORT_COLUMNS
from polfair.core.schema import by_columns
from polfair.exceptions import PolfairError
from polfair.monitor._values import check_size, format_number
from polfair.monitor.config import parse_thresholds

__all__ = ["STATUS_VALUES", "alerts", "apply_thresholds", "format_threshold"]

#: Values of the ``status`` column (null where no threshold applies).
STATUS_VALUES = ("ok", "violation", "insufficient_data", "inconclusive")


def format_threshold(lo: float, hi: float) -> str:
    """The ``threshold`` column's text for an inclusive band, e.g. ``"[0.8, 1.25]"``.

    Examples
    --------
    >>> format_threshold(0.8, 1.25), format_threshold(-0.1, float("inf"))
    ('[0.8, 1.25]', '[-0.1, inf]')
    """
    return f"[{format_number(lo)}, {format_number(hi)}]"



def apply_thresholds(
    report: pl.DataFrame,
    thresholds: Mapping[str, Any],
    min_sample_size: int | None = None,
    *,
    groups: Mapping[str, Sequence[str]] | None = None,
    significance: float | None = None,
) -> pl.DataFrame:
    """Judge a fairness report against thresholds: add ``threshold`` and ``status`` columns.

    Parameters
    ----------
    report
        A report of :func:`polfair.fairness_report` (any ``by`` columns are kept).
    thresholds
        Metric name -> inclusive band ``[lo, hi]`` or ``{min=, max=}`` (see
        :func:`parse_thresholds`). Names must be metrics present in the report.
    min_sample_size
        Optional positive int. A checked row whose group has fewer than this many input rows
        (``n``), or whose reference group does (comparisons), or, for an attribute-level row, whose
        smallest group does, gets ``"insufficient_data"``.
    groups
        Optional mapping attribute-set name -> group labels to judge; group rows of those
        attribute sets with other labels get no status (``fairness_report(config=...)`` passes the
        monitored group of each config attribute). Attribute sets not in the mapping are judged
        for all groups.
    significance
        Optional float in (0, 1), e.g. 0.05; needs a report with intervals (``ci=``). A row whose
        point value breaches its band is a ``"violation"`` only when the breach is also
        significant: its ``p_value_adjusted`` is below ``significance``, or its interval
        ``[value_lo, value_hi]`` lies entirely outside the band; otherwise it is
        ``"inconclusive"`` (the data cannot tell). Rows without an interval or p-value (counts)
        keep the point-value rule. Default ``None``: OpenScale's point-value semantics.

    Returns
    -------
    pl.DataFrame
        The report plus ``threshold`` (String, e.g. ``"[0.8, 1.25]"``) and ``status`` (String:
        ``"ok"`` if ``lo <= value <= hi``, ``"violation"`` otherwise, ``"insufficient_data"`` as
        above or when ``value`` is null, ``"inconclusive"`` with ``significance`` as above; null
        where no threshold applies). Which rows are checked:
        every row of a threshold's metric, except the attribute-level rows of per-group metrics
        (:data:`polfair.core.metrics.METRICS`, whose ``value`` is null by design).

    Raises
    ------
    PolfairError
        A threshold names a metric that is not in the report (with close names), an invalid band
        or ``min_sample_size``, a report without the report columns, or ``significance`` outside
        (0, 1) or without the interval columns.

    Notes
    -----
    The band is inclusive on both ends, as OpenScale's and Aequitas' ``tau`` band
    (``0.8 <= disparate_impact <= 1.25``). A comparison with a pooled reference (several
    privileged values) or with ``reference="overall"`` checks only the group's own size.

    Examples
    --------
    >>> import polars as pl
    >>> import polfair as pf
    >>> df = pl.DataFrame({"y": [1, 0, 1, 0, 1, 1], "p": [1, 1, 1, 0, 0, 0],
    ...                    "g": ["a", "a", "a", "b", "b", "b"]})
    >>> rep = pf.fairness_report(df, y_true="y", y_pred="p", protected="g", privileged={"g": "a"})
    >>> out = apply_thresholds(rep, {"disparate_impact": [0.8, 1.25]}, min_sample_size=2)
    >>> out.filter(pl.col("status").is_not_null()).select("group", "value", "threshold", "status")
    shape: (2, 4)
    ┌───────┬───────┬─────────────┬───────────┐
    │ group ┆ value ┆ threshold   ┆ status    │
    │ ---   ┆ ---   ┆ ---         ┆ ---       │
    │ str   ┆ f64   ┆ str         ┆ str       │
    ╞═══════╪═══════╪═════════════╪═══════════╡
    │ a     ┆ 1.0   ┆ [0.8, 1.25] ┆ ok        │
    │ b     ┆ 0.0   ┆ [0.8, 1.25] ┆ violation │
    └───────┴───────┴─────────────┴───────────┘
    """
    missing = [c for c in _REPORT_COLUMNS if c not in report.columns]
    if missing:
        msg = f"apply_thresholds needs a fairness report (columns {list(_REPORT_COLUMNS)}); missing {missing}"
        raise PolfairError(msg)
    bands = parse_thresholds(thresholds)
    min_n = check_size(min_sample_size, "min_sample_size")
    _check_metrics_present(report, bands)
    if significance is not None:
        _check_significance(report, significance)
    report = report.drop("threshold", "status", strict=False)
    out = report.with_row_index("__pf_row")
    out = out.join(_band_table(bands, report.schema["metric"]), on="metric", how="left", maintain_order="left")
    out = _join_sample_sizes(out, report)
    eligible = _eligible(groups)
    out = out.sort("__pf_row").with_columns(
        pl.when(eligible).then(pl.col("threshold")).alias("threshold"), _status(eligible, min_n).alias("status")
    )
    if significance is not None:
        out = out.with_columns(_significant_status(significance).alias("status"))
    return out.select(*report.columns, "threshold", "status")


_SIGNIFICANCE_COLUMNS = ("value_lo", "value_hi", "p_value_adjusted")


def _check_significance(report: pl.DataFrame, significance: Any) -> None:
    if isinstance(significance, bool) or not isinstance(significance, (int, float)) or not 0 < significance < 1:
        msg = f"significance must be a level in (0, 1) such as 0.05, or None; got {significance!r}"
        raise PolfairError(msg)
    missing = [c for c in _SIGNIFICANCE_COLUMNS if c not in report.columns]
    if missing:
        msg = (
            f"significance= needs a report with confidence intervals (columns {missing} are missing): "
            "compute it with fairness_report(..., ci=0.95)"
        )
        raise PolfairError(msg)


def _significant_status(significance: float) -> pl.Expr:
    """A point-value violation stays a violation only if it is significant, else ``inconclusive``."""
    lo, hi = pl.col("value_lo"), pl.col("value_hi")
    p_adj = pl.col("p_value_adjusted")
    beyond = (hi < pl.col("__pf_lo")).fill_null(False) | (lo > pl.col("__pf_hi")).fill_null(False)
    significant = (p_adj < significance).fill_null(False) | beyond
    has_evidence = lo.is_not_null() | hi.is_not_null() | p_adj.is_not_null()
    status = pl.col("status")
    return pl.when((status == "violation") & has_evidence & ~significant).then(pl.lit("inconclusive")).otherwise(status)


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


def _eligible(groups: Mapping[str, Sequence[str]] | None) -> pl.Expr:
    """Rows a threshold applies to: a band exists, not a per-group metric's attribute row, a judged group."""
    per_group_metric = pl.col("metric").is_in([*METRICS, "n_missing"])
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


def _status(eligible: pl.Expr, min_n: int | None) -> pl.Expr:
    """The ``status`` expression: null, ``insufficient_data``, ``ok`` or ``violation``."""
    if min_n is None:
        small = pl.lit(False)
    else:
        own = pl.when(_IS_ATTR).then(pl.col("__pf_min_n")).otherwise(pl.col("n"))
        small = (own < min_n).fill_null(False) | (_IS_GROUP & (pl.col("__pf_ref_n") < min_n).fill_null(False))
    value = pl.col("value")
    undefined = value.is_null() | value.is_nan()
    inside = (value >= pl.col("__pf_lo")) & (value <= pl.col("__pf_hi"))
    return (
        pl.when(~eligible).then(pl.lit(None, pl.String))
        .when(small | undefined).then(pl.lit("insufficient_data"))
        .when(inside).then(pl.lit("ok"))
        .otherwise(pl.lit("violation"))
    )  # fmt: skip


def alerts(report: pl.DataFrame) -> pl.DataFrame:
    """The violations of a judged report (rows with ``status == "violation"``).

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
    >>> df = pl.DataFrame({"y": [1, 0, 1, 0], "p": [1, 1, 0, 0], "g": ["a", "a", "b", "b"]})
    >>> rep = pf.fairness_report(df, y_true="y", y_pred="p", protected="g",
    ...                          thresholds={"statistical_parity_difference": [-0.1, 0.1]})
    >>> alerts(rep).select("group", "metric", "value", "reference_group").rows()
    [('b', 'statistical_parity_difference', -1.0, 'a')]
    """
    if "status" not in report.columns:
        msg = (
            "alerts() needs a report with a status column: pass thresholds= or config= to "
            "fairness_report, or call apply_thresholds(report, thresholds)"
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

