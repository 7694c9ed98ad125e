"""Fairness over time: the change of every metric and disparity between two runs or periods.

:func:`compare_reports` puts two reports side by side (this week's and last week's run, a model
and its predecessor) or the periods of one report computed with ``by=<period>`` (a trend table:
each period against the previous one, or against a fixed baseline period), and tests each change
of a rate or of a rate disparity from the counts the reports carry, as two independent samples.
The output is one long table, the shape of Databricks Lakehouse Monitoring's drift table, ready
to append next to the reports.

Tests (two independent samples: the two runs or periods share no rows):

* **a rate** (``value`` of ``selection_rate``, ``true_positive_rate``, ...; group and population
  rows): the two-proportion test of :func:`polfair.core.intervals.two_proportion_test` ("N−1" χ²,
  Fisher's exact test for tiny expected counts, the z test with Kish effective sizes when
  weighted) and Newcombe's hybrid score interval of the change
  (:func:`polfair.core.intervals.newcombe_interval`);
* **a rate difference** (``difference`` of a rate against its reference group, and the named
  disparities built from one rate: ``statistical_parity_difference``,
  ``equal_opportunity_difference``, ``*_rate_difference``): the change of a difference of
  differences, ``Δ = (p₁g − p₁r) − (p₀g − p₀r)``, four independent rates, Wald z with
  ``Var = Σ p(1 − p)/n`` (test ``"z_wald"``), interval ``Δ ± z·√Var``;
* **a rate ratio** (``ratio`` of a rate, ``disparate_impact``, ``*_rate_ratio``): the change of
  the ratio's logarithm, ``log(R₁) − log(R₀)``, delta method ``Var = Σ (1 − p)/(n p)`` (test
  ``"z_log_wald"``; null when a rate is 0); no interval of ``current − baseline`` (null);
* anything else (counts, spreads across groups, entropy indices, EDF, averaged odds): the change
  is reported, the test columns are null.

The sizes ``n`` are the reports' ``n_eff`` column when present (reports with confidence
intervals); for cell tables, Kish's effective sizes ``(Σw)²/Σw²`` of each rate's denominator,
from the tables' ``*_w2`` columns; else the unweighted counts read from the reports' count rows
(``num_positives``, ...), which are the sample sizes only when the report is unweighted: a
weighted report without ``n_eff`` is refused rather than tested with the wrong sizes. A comparison against a reference
group is tested only when both runs use the same reference group and it is a group of the report
(``reference="overall"`` compares a group with a population that contains it: not independent).
p-values are adjusted with Benjamini–Hochberg within each family (comparison, metric, statistic);
``drift`` flags adjusted p-values below ``alpha``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from polfair.core import intervals
from polfair.core.intervals import (
    Rate,
    check_p_adjust,
    newcombe_interval,
    two_proportion_test,
    z_value,
)
from polfair.core.report.build import report_from_counts
from polfair.core.schema import CELL_SCHEMA, by_columns
from polfair.exceptions import PolfairError, user_stacklevel

__all__ = ["DRIFT_COLUMNS", "RATE_DENOMINATORS", "NoMatchWarning", "compare_reports"]


class NoMatchWarning(UserWarning):
    """compare_reports found no row of the current report that matches a row of the baseline."""

#: Binary rates and the count metric of the report that is their denominator.
RATE_DENOMINATORS: dict[str, str] = {
    "base_rate": "num_instances",
    "selection_rate": "num_instances",
    "accuracy": "num_instances",
    "error_rate": "num_instances",
    "true_positive_rate": "num_positives",
    "false_negative_rate": "num_positives",
    "true_negative_rate": "num_negatives",
    "false_positive_rate": "num_negatives",
    "positive_predictive_value": "num_pred_positives",
    "false_discovery_rate": "num_pred_positives",
    "negative_predictive_value": "num_pred_negatives",
    "false_omission_rate": "num_pred_negatives",
}

#: The comparison's columns after the key columns (``*by``; the period and its baseline period).
DRIFT_COLUMNS = (
    "attribute", "group", "metric", "statistic", "current", "baseline", "change", "relative_change",
    "change_lo", "change_hi", "p_value", "p_value_adjusted", "test", "drift",
)  # fmt: skip

_STATS = ("value", "difference", "ratio")
_P, _N, _PR, _NR, _RATE, _W = "__pf_p", "__pf_n", "__pf_pr", "__pf_nr", "__pf_rate", "__pf_w"
_KEYS = ("attribute", "group", "metric")
_ROW, _ORD = "__pf_row", "__pf_ord"


def _named_disparities(labels_only: bool) -> dict[str, tuple[str, str]]:
    """Named disparity -> (its rate, 'difference' | 'ratio')."""
    sp = "base_rate" if labels_only else "selection_rate"
    out = {"statistical_parity_difference": (sp, "difference"), "disparate_impact": (sp, "ratio"),
           "equal_opportunity_difference": ("true_positive_rate", "difference")}  # fmt: skip
    for m in ("error_rate", "false_positive_rate", "false_negative_rate", "false_discovery_rate",
              "false_omission_rate"):  # fmt: skip
        out[f"{m}_difference"] = (m, "difference")
        out[f"{m}_ratio"] = (m, "ratio")
    return out


def _as_report(
    frame: pl.DataFrame, name: str, protected: Sequence[str] | None, options: Mapping[str, Any]
) -> pl.DataFrame:
    if not isinstance(frame, pl.DataFrame):
        msg = (f"compare_reports: {name} must be a polars DataFrame (a report or a cell table), "
               f"got {type(frame).__name__}")  # fmt: skip
        raise TypeError(msg)
    if "metric" in frame.columns and "attribute" in frame.columns:
        return frame
    counts = {c.name for c in CELL_SCHEMA}
    if "tp" in frame.columns and "n" in frame.columns:
        if not protected:
            msg = f"compare_reports: {name} is a cell table; pass protected=[...] (its protected-attribute columns)"
            raise PolfairError(msg)
        missing = [k for k in protected if k not in frame.columns]
        if missing:
            msg = (f"compare_reports: protected columns {missing} are not in the {name} cell table "
                   f"({frame.columns[:12]})")  # fmt: skip
            raise PolfairError(msg)
        by = [c for c in frame.columns if c not in counts and c not in protected]
        options = {"max_groups_per_attribute": None, **dict(options)}  # drift reads every group
        report = report_from_counts(frame, protected=list(protected), by=by, **options)
        w2 = [f"{c}_w2" for c in ("tp", "fp", "tn", "fn")]
        if "n_eff" in report.columns or not all(c in frame.columns for c in w2):
            return report
        # Kish sizes from the cell table's Σw²: the same report built on Σw² in place of Σw has
        # Σw² of every denominator in its count rows; n_eff = (Σw)² / Σw² per rate denominator
        squares = frame.with_columns([pl.col(f"{c}_w2").alias(c) for c in ("tp", "fp", "tn", "fn")])
        sq = report_from_counts(squares, protected=list(protected), by=by, **options)
        return _with_kish_sizes(report, sq, by)
    msg = (f"compare_reports: {name} is neither a polfair report (columns attribute, group, metric, value, ...) "
           f"nor a cell table (n, tp, fp, ...); found {frame.columns[:12]}")  # fmt: skip
    raise PolfairError(msg)


def _denominators(report: pl.DataFrame, rows: list[str], name: str) -> pl.DataFrame:
    """Per (rows, denominator count metric): its value, long."""
    counts = (
        report.filter(pl.col("metric").cast(pl.String).is_in(list(set(RATE_DENOMINATORS.values()))))
        .filter(pl.col("group").is_not_null() | pl.col("attribute").is_null())
        .select(*rows, pl.col("metric").cast(pl.String).alias("__pf_den"), pl.col("value").alias(name))
    )
    return counts.with_columns(pl.col("attribute").cast(pl.String))


def _with_kish_sizes(report: pl.DataFrame, squares: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    """``report`` with ``n_eff`` on its rate rows: (Σw)² / Σw² of each rate's denominator."""
    rows = [*by, "attribute", "group"]
    sums = _denominators(report, rows, "__pf_s").join(
        _denominators(squares, rows, "__pf_s2"), on=[*rows, "__pf_den"], how="left", nulls_equal=True
    )
    dens = pl.DataFrame({"metric": list(RATE_DENOMINATORS), "__pf_den": list(RATE_DENOMINATORS.values())})
    kish = sums.select(*rows, "__pf_den", pl.when(pl.col("__pf_s2") > 0).then(
        pl.col("__pf_s") * pl.col("__pf_s") / pl.col("__pf_s2")).alias("n_eff"))  # fmt: skip
    out = (
        report.with_columns(pl.col("metric").cast(pl.String).alias("__pf_m"), pl.col("attribute").cast(pl.String)
                            .alias("__pf_a"))
        .join(dens.rename({"metric": "__pf_m"}), on="__pf_m", how="left")
        .join(kish.rename({"attribute": "__pf_a"}), on=[*by, "__pf_a", "group", "__pf_den"], how="left",
              nulls_equal=True, maintain_order="left")
    )  # fmt: skip
    return out.drop("__pf_m", "__pf_a", "__pf_den")


def _sized(report: pl.DataFrame, keys: list[str], name: str) -> pl.DataFrame:
    """Strings for the label columns, the value/difference/ratio, and the sample size of binary rates."""
    need = [c for c in ("attribute", "group", "metric", "value", "difference", "ratio", "n") if c not in report.columns]
    if need:
        msg = f"compare_reports: {name} lacks report columns {need}"
        raise PolfairError(msg)
    ref = pl.col("reference_group").cast(pl.String) if "reference_group" in report.columns else pl.lit(None, pl.String)
    base = report.select(
        *keys, *[pl.col(c).cast(pl.String) for c in _KEYS], ref.alias("reference_group"),
        *[pl.col(c).cast(pl.Float64) for c in _STATS], "n",
        (pl.col("n_eff").cast(pl.Float64) if "n_eff" in report.columns else pl.lit(None, pl.Float64)).alias("n_eff"),
    )  # fmt: skip
    is_rate = pl.col("metric").is_in(list(RATE_DENOMINATORS)) & pl.col("group").is_not_null() | (
        pl.col("metric").is_in(list(RATE_DENOMINATORS)) & pl.col("attribute").is_null()
    )
    # sample sizes from the count rows: exact when unweighted
    rows = [*keys, "attribute", "group"]
    counts = (
        base.filter(pl.col("metric").is_in(["num_instances", "n_missing", *set(RATE_DENOMINATORS.values())]))
        .filter(pl.col("group").is_not_null() | pl.col("attribute").is_null())
        .pivot(on="metric", index=rows, values="value")
    )
    has_n_eff = "n_eff" in report.columns
    if not has_n_eff and "num_instances" in counts.columns and "n_missing" in counts.columns:
        sizes = base.select(*rows, "n").unique(subset=rows, keep="first")
        check = counts.join(sizes, on=rows, nulls_equal=True)
        gap = pl.col("num_instances") + pl.col("n_missing") - pl.col("n").cast(pl.Float64)
        weighted = check.filter(gap.abs() > 1e-9)
        if weighted.height:
            msg = (f"compare_reports: {name} looks weighted (num_instances + n_missing != n on {weighted.height} "
                   "group rows), so its counts are not sample sizes; compare the cell tables instead "
                   "(pf.confusion_counts(...), with protected=[...]: effective sizes from their Σw²), or reports "
                   "computed with confidence intervals (they carry n_eff)")  # fmt: skip
            raise PolfairError(msg)
    long = counts.drop("n_missing", strict=False).unpivot(index=rows, variable_name="__pf_den", value_name="__pf_nc")
    dens = pl.DataFrame({"metric": list(RATE_DENOMINATORS), "__pf_den": list(RATE_DENOMINATORS.values())})
    sized = base.join(dens, on="metric", how="left").join(long, on=[*rows, "__pf_den"], how="left", nulls_equal=True)
    nc = pl.col("__pf_nc").cast(pl.Float64)
    if has_n_eff:  # effective sizes; weighted where they differ from the counts
        size, flag = pl.col("n_eff"), (pl.col("n_eff") - nc).abs().fill_null(1.0) > 1e-9
    else:
        size, flag = nc, pl.lit(False)
    return sized.with_columns(pl.when(is_rate).then(size).alias(_N), pl.when(is_rate).then(flag).alias(_W)).drop(
        "__pf_den", "__pf_nc", "n_eff"
    )


def _with_reference(sized: pl.DataFrame, keys: list[str], labels_only: bool) -> pl.DataFrame:
    """Add the tested rate of each row (p, n) and its reference group's (p_r, n_r)."""
    named = _named_disparities(labels_only)
    rate_of = pl.DataFrame({"metric": [*RATE_DENOMINATORS, *named],
                            _RATE: [*RATE_DENOMINATORS, *[v[0] for v in named.values()]]})  # fmt: skip
    rates = sized.filter(pl.col(_N).is_not_null()).select(
        *keys, "attribute", "group", pl.col("metric").alias(_RATE), pl.col("value").alias(_P),
        pl.col(_N).alias("__pf_nn"), pl.col(_W).alias("__pf_ww"),
    )  # fmt: skip
    out = sized.join(rate_of, on="metric", how="left").drop(_N, _W)
    out = out.join(rates, on=[*keys, "attribute", "group", _RATE], how="left", nulls_equal=True)
    out = out.rename({"__pf_nn": _N, "__pf_ww": _W})
    refs = rates.drop("__pf_ww").rename({"group": "reference_group", _P: _PR, "__pf_nn": _NR})
    return out.join(refs, on=[*keys, "attribute", "reference_group", _RATE], how="left", nulls_equal=True)


def _check_unique(frame: pl.DataFrame, keys: list[str], name: str) -> None:
    """One row per (keys, attribute, group, metric): else name the periods and runs that repeat."""
    on = [*keys, *_KEYS]
    dup = frame.select(on).is_duplicated()
    if not dup.any():
        return
    rows = frame.filter(dup)
    where = ", ".join(f"{k}={rows[k][0]!r}" for k in keys) or "the whole report"
    if "run_id" in frame.columns:
        runs = rows.filter(*[pl.col(k) == rows[k][0] for k in keys if rows[k][0] is not None])["run_id"]
        ids = sorted({str(r) for r in runs.drop_nulls().unique().to_list()})
        msg = (
            f"compare_reports: {name} holds {len(ids)} runs for {where} (run_id {', '.join(map(repr, ids))}): "
            "a retried job appended it twice; keep one run per period (e.g. the latest run_at) before comparing"
        )
    else:
        msg = (
            f"compare_reports: {name} has several rows per (attribute, group, metric) for {where}: it holds several "
            "runs or periods; give the period column(s) as period= (or on=), or keep one run"
        )
    raise PolfairError(msg)


def _pairs(
    current: pl.DataFrame, baseline: pl.DataFrame, keys: list[str], period: list[str], baseline_period: Any,
    trend: bool,
) -> tuple[pl.DataFrame, list[str]]:
    """Join current rows with their baseline rows; returns the joined frame and its key columns."""
    on = [*keys, *_KEYS]
    if not period:
        joined = current.join(baseline, on=on, how="inner", nulls_equal=True, suffix="_b", maintain_order="left")
        return joined.with_row_index(_ROW), list(keys)
    rest = [k for k in keys if k not in period]
    named = [f"baseline_{p}" for p in period]
    if not trend:  # two reports: match ignoring the period columns
        base = baseline.rename(dict(zip(period, named)))
        joined = current.join(base, on=[*rest, *_KEYS], how="inner", nulls_equal=True, suffix="_b",
                              maintain_order="left")  # fmt: skip
        return joined.with_row_index(_ROW), [*period, *named, *rest]
    (col,) = period
    periods = current.select(pl.col(col).unique().sort()).to_series()
    if periods.null_count():
        msg = f"compare_reports: the period column {col!r} has null values; fill or drop them first"
        raise PolfairError(msg)
    if baseline_period is None:
        mapping = pl.DataFrame({col: periods[1:], f"baseline_{col}": periods[:-1]})
    else:
        if baseline_period not in periods.to_list():
            msg = (f"compare_reports: baseline_period={baseline_period!r} is not a value of {col!r} "
                   f"({periods.to_list()[:10]})")  # fmt: skip
            raise PolfairError(msg)
        later = periods.filter(periods != baseline_period)
        fixed = pl.Series([baseline_period] * len(later), dtype=periods.dtype)
        mapping = pl.DataFrame({col: later, f"baseline_{col}": fixed})
    cur = current.join(mapping, on=col, how="inner", maintain_order="left")
    base = baseline.rename({col: f"baseline_{col}"})
    joined = cur.join(base, on=[f"baseline_{col}", *rest, *_KEYS], how="inner", nulls_equal=True, suffix="_b",
                      maintain_order="left")  # fmt: skip
    return joined.with_row_index(_ROW), [col, f"baseline_{col}", *rest]


def compare_reports(
    current: pl.DataFrame,
    baseline: pl.DataFrame | None = None,
    *,
    period: str | Sequence[str] | None = None,
    on: Sequence[str] | None = None,
    baseline_period: Any = None,
    metrics: Sequence[str] | None = None,
    statistics: Sequence[str] = _STATS,
    alpha: float = 0.05,
    p_adjust: str | None = "bh",
    protected: Sequence[str] | None = None,
    report_options: Mapping[str, Any] | None = None,
) -> pl.DataFrame:
    """The change of every metric and disparity between two reports, or between periods of one.

    Parameters
    ----------
    current
        A long report (:func:`polfair.fairness_report`), or a cell table (with ``protected``).
    baseline
        The report (or cell table) to compare with: an earlier run, another model. ``None`` with
        ``period``: compare the periods of ``current`` (a trend table).
    period
        The ``by`` column(s) that identify a period (a day, a month, ...; any sortable dtype).
        With a ``baseline``: rows are matched ignoring them (tonight's ``date`` with last night's;
        the output keeps both, as ``<period>`` and ``baseline_<period>``); the baseline must hold
        one period. With ``baseline=None``: one column, whose periods are each compared with the
        previous one, or with ``baseline_period`` (a trend table).
    on
        With a ``baseline``: the ``by`` columns rows are matched on (default: all of them except
        ``period``); the other ``by`` columns are treated as ``period``.
    baseline_period
        A value of ``period`` that every other period is compared with (default: the previous).
    metrics
        Only these metrics (default: all).
    statistics
        Which report columns to compare: any of ``"value"``, ``"difference"`` (vs the reference
        group; spreads on attribute rows), ``"ratio"``. Default all three; rows where both sides
        are null are dropped.
    alpha
        Float in (0, 1): the level of the tests; the change intervals have level ``1 − alpha``.
    p_adjust
        ``"bh"`` (default, Benjamini–Hochberg), ``"by"``, ``"holm"`` or ``None``, within each family
        (compared pair of runs or periods, metric, statistic).
    protected
        With cell tables: their protected-attribute columns (the other non-count columns are
        ``by`` columns).
    report_options
        With cell tables: keywords of :func:`polfair.report_from_counts` (``privileged``, ...).

    Returns
    -------
    pl.DataFrame
        Key columns first: without ``period``, the ``by`` columns the reports share; with
        ``period``, ``<period>``, ``baseline_<period>``, then the other ``by`` columns. Then
        ``attribute, group, metric`` (String), ``statistic`` (String: ``"value"``,
        ``"difference"`` or ``"ratio"``), ``current``, ``baseline`` (Float64),
        ``change = current − baseline``, ``relative_change = change / |baseline|`` (null when the
        baseline is 0 or null), ``change_lo``, ``change_hi`` (Float64: the interval of the change,
        level ``1 − alpha``), ``p_value``, ``p_value_adjusted`` (Float64), ``test`` (String:
        ``chi2_n1``, ``fisher``, ``z_ess``, ``z_wald``, ``z_log_wald``; null when untested),
        ``drift`` (Boolean: ``p_value_adjusted < alpha``; null when untested). Only rows present
        in both reports; rates are fractions in [0, 1]. Rows follow the current report's order,
        with the statistics of a row in the order of ``statistics``.

    Raises
    ------
    PolfairError
        Inputs that are neither reports nor cell tables; ``by`` columns that differ between the
        two reports; ``period``/``on`` not ``by`` columns; ``baseline_period`` not a period; a
        report holding two runs for one period (a retried job appended it twice: the message
        names the run ids) or a baseline holding several periods; a weighted report without
        ``n_eff`` (its counts are not sample sizes); bad ``statistics``/``alpha``.
    TypeError
        An input is not a ``pl.DataFrame``.

    Warns
    -----
    NoMatchWarning
        No row of ``current`` matches a row of ``baseline`` (the result is empty): the message
        names the ``by`` values of each side and suggests ``period=``.

    Notes
    -----
    Two independent samples (runs or periods share no rows). Rates: Campbell's (2007) "N−1" χ² /
    Fisher (unweighted) or Kish effective-size z (weighted), Newcombe (1998) interval. Rate
    differences: Wald z on the difference of differences; ratios: delta-method z on the log
    ratio. Multiplicity: Benjamini & Hochberg (1995). These tests treat each run as a sample
    from a process; with a whole population each period (no sampling) a significant change is
    still a real change, and the test says it is larger than noise of that size.

    Examples
    --------
    >>> import polars as pl
    >>> import polfair as pf
    >>> df = pf.load_compas().with_columns(pl.col("compas_screening_date").str.slice(0, 4).alias("year"))
    >>> rep = pf.fairness_report(df, y_true="two_year_recid", y_pred=pl.col("decile_score") >= 5,
    ...                          protected="sex", by="year")
    >>> trend = compare_reports(rep, period="year")
    >>> trend.filter(metric="selection_rate", statistic="value", attribute="sex").select(
    ...     "year", "baseline_year", "group", "current", "baseline", "p_value", "drift"
    ... ).with_columns(pl.selectors.float().round(4))
    shape: (2, 7)
    ┌──────┬───────────────┬────────┬─────────┬──────────┬─────────┬───────┐
    │ year ┆ baseline_year ┆ group  ┆ current ┆ baseline ┆ p_value ┆ drift │
    │ ---  ┆ ---           ┆ ---    ┆ ---     ┆ ---      ┆ ---     ┆ ---   │
    │ str  ┆ str           ┆ str    ┆ f64     ┆ f64      ┆ f64     ┆ bool  │
    ╞══════╪═══════════════╪════════╪═════════╪══════════╪═════════╪═══════╡
    │ 2014 ┆ 2013          ┆ Female ┆ 0.4226  ┆ 0.3967   ┆ 0.3984  ┆ false │
    │ 2014 ┆ 2013          ┆ Male   ┆ 0.4855  ┆ 0.443    ┆ 0.0062  ┆ true  │
    └──────┴───────────────┴────────┴─────────┴──────────┴─────────┴───────┘
    """
    bad = [s for s in statistics if s not in _STATS]
    if bad or not statistics:
        msg = f"statistics must be a non-empty subset of {list(_STATS)}, got {list(statistics)!r}"
        raise PolfairError(msg)
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0.0 < alpha < 1.0:
        msg = f"alpha must be a level in (0, 1) such as 0.05, got {alpha!r}"
        raise PolfairError(msg)
    check_p_adjust(p_adjust)
    options = dict(report_options or {})
    cur = _as_report(current, "current", protected, options)
    if baseline is None:
        if period is None:
            msg = "compare_reports: give a baseline report, or period=<a by column of current> for a trend table"
            raise PolfairError(msg)
        base = cur
    else:
        base = _as_report(baseline, "baseline", protected, options)
    keys = by_columns(cur.columns)
    if baseline is not None and by_columns(base.columns) != keys:
        msg = (f"compare_reports: current has by columns {keys}, baseline has {by_columns(base.columns)}; "
               "they must match")  # fmt: skip
        raise PolfairError(msg)
    periods = [] if period is None else [period] if isinstance(period, str) else list(period)
    if on is not None:
        if baseline is None:
            raise PolfairError("compare_reports: on= matches two reports; give a baseline (or period= for a trend)")
        bad_on = [c for c in on if c not in keys]
        if bad_on:
            msg = f"compare_reports: on={list(on)!r}: {bad_on} are not by columns of the reports (by columns: {keys})"
            raise PolfairError(msg)
        periods = [k for k in keys if k not in on]
    bad = [p for p in periods if p not in keys]
    if bad:
        msg = f"compare_reports: period={period!r}: {bad} is not a by column of the report (by columns: {keys})"
        raise PolfairError(msg)
    if baseline is None and len(periods) > 1:
        raise PolfairError(f"compare_reports: a trend table takes one period column, got {periods}")
    _check_unique(cur, keys, "current")
    if baseline is not None:
        _check_unique(base, [k for k in keys if k not in periods], "baseline")
    labels_only = "selection_rate" not in set(cur["metric"].cast(pl.String).unique().to_list()) | set(
        base["metric"].cast(pl.String).unique().to_list()
    )
    a = _with_reference(_sized(cur, keys, "current"), keys, labels_only)
    b = a if baseline is None else _with_reference(_sized(base, keys, "baseline"), keys, labels_only)
    if metrics is not None:  # after the sizes: they come from the count rows
        a = a.filter(pl.col("metric").is_in(list(metrics)))
        b = b.filter(pl.col("metric").is_in(list(metrics)))
    joined, out_keys = _pairs(a, b, keys, periods, baseline_period, trend=baseline is None)
    if joined.height == 0 and a.height and b.height:
        _warn_no_match(cur, base, keys, periods)
    z = z_value(1.0 - alpha)
    parts = [_compare(joined, out_keys, s, i, z, labels_only) for i, s in enumerate(statistics)]
    out = pl.concat(parts, how="vertical")
    # adjust within (comparison, metric, statistic) over the tested rows only (most rows are untested)
    family = [*out_keys, "metric", "statistic"]
    tested = out.filter(pl.col("p_value").is_not_null())
    if p_adjust is None:
        adjusted = pl.col("p_value")
    else:
        adjusted = intervals.p_adjust(pl.col("p_value"), p_adjust).over(family)  # type: ignore[arg-type]
    tested = tested.with_columns(adjusted.alias("p_value_adjusted"), (adjusted < alpha).alias("drift"))
    rest = out.filter(pl.col("p_value").is_null()).with_columns(
        pl.lit(None, pl.Float64).alias("p_value_adjusted"), pl.lit(None, pl.Boolean).alias("drift")
    )
    # rows in the current report's order, statistics in the order asked for
    return pl.concat([tested, rest]).sort(_ROW, _ORD).select(*out_keys, *DRIFT_COLUMNS)


def _warn_no_match(cur: pl.DataFrame, base: pl.DataFrame, keys: list[str], periods: list[str]) -> None:
    def values(frame: pl.DataFrame) -> str:
        if not keys:
            return "no by columns"
        combos = frame.select(keys).unique().sort(keys, nulls_last=True).head(4).rows()
        return "; ".join(", ".join(f"{k}={v!r}" for k, v in zip(keys, c)) for c in combos)

    hint = (f" pass period={[k for k in keys if k not in periods][0]!r} (the column that names the period) to match "
            "across periods, or on=[...]" if [k for k in keys if k not in periods] else
            " the reports share no (attribute, group, metric)")  # fmt: skip
    msg = (
        f"compare_reports: no row of current matches a row of baseline (current: {values(cur)}; baseline: "
        f"{values(base)}); the comparison is empty:{hint}"
    )
    warnings.warn(msg, NoMatchWarning, stacklevel=user_stacklevel())


def _compare(joined: pl.DataFrame, keys: list[str], stat: str, index: int, z: float, labels_only: bool) -> pl.DataFrame:
    """One statistic's rows: values, change, and the test where one applies."""
    named = _named_disparities(labels_only)
    cur, base = pl.col(stat), pl.col(f"{stat}_b")
    change = cur - base
    g1, g0 = Rate(pl.col(_P), pl.col(_N)), Rate(pl.col(f"{_P}_b"), pl.col(f"{_N}_b"))
    r1, r0 = Rate(pl.col(_PR), pl.col(_NR)), Rate(pl.col(f"{_PR}_b"), pl.col(f"{_NR}_b"))
    metric = pl.col("metric")
    is_rate = metric.is_in(list(RATE_DENOMINATORS))
    diff_names = [k for k, v in named.items() if v[1] == "difference"]
    ratio_names = [k for k, v in named.items() if v[1] == "ratio"]
    ref = pl.col("reference_group")
    same_ref = (ref == pl.col("reference_group_b")) & (pl.col("group") != ref)
    kind = pl.lit(None, pl.String)
    if stat == "value":
        kind = (pl.when(is_rate).then(pl.lit("rate"))
                .when(metric.is_in(diff_names) & same_ref).then(pl.lit("difference"))
                .when(metric.is_in(ratio_names) & same_ref).then(pl.lit("ratio")))  # fmt: skip
    elif stat == "difference":
        kind = pl.when(is_rate & pl.col("group").is_not_null() & same_ref).then(pl.lit("difference"))
    else:
        kind = pl.when(is_rate & pl.col("group").is_not_null() & same_ref).then(pl.lit("ratio"))
    # rates: two-proportion test and Newcombe's interval
    t_u, t_w = two_proportion_test(g1, g0), two_proportion_test(g1, g0, weighted=True)
    # effective (weighted) sizes: Kish z instead of χ²/Fisher
    any_weighted = pl.col(_W).fill_null(False) | pl.col(f"{_W}_b").fill_null(False)
    rate_p = pl.when(any_weighted).then(t_w.p_value).otherwise(t_u.p_value)
    rate_t = pl.when(any_weighted).then(t_w.test).otherwise(t_u.test)
    nc = newcombe_interval(g1, g0, z)
    # differences of differences: Wald
    var_d = sum((r.p * (1.0 - r.p) / r.n for r in (g1, r1, g0, r0)), pl.lit(0.0))
    dd = (g1.p - r1.p) - (g0.p - r0.p)
    se_d = var_d.sqrt()
    p_d = pl.when(var_d > 0).then((dd.abs() / se_d / math.sqrt(2.0)).erfc())
    # log ratios: delta method
    pos = pl.all_horizontal([r.p > 0 for r in (g1, r1, g0, r0)])
    var_r = sum(((1.0 - r.p) / (r.n * r.p) for r in (g1, r1, g0, r0)), pl.lit(0.0))
    lr = (g1.p / r1.p).log() - (g0.p / r0.p).log()
    se_r = var_r.sqrt()
    p_r = pl.when(pos & (var_r > 0)).then((lr.abs() / se_r / math.sqrt(2.0)).erfc())
    frame = (
        joined.lazy().filter(cur.is_not_null() | base.is_not_null()).with_columns(kind.alias("__pf_kind"))
        .collect()
    )  # fmt: skip
    k = pl.col("__pf_kind")
    common: list[pl.Expr | str] = [
        _ROW, pl.lit(index, pl.Int8).alias(_ORD),
        *keys, "attribute", "group", "metric", pl.lit(stat).alias("statistic"),
        cur.alias("current"), base.alias("baseline"), change.alias("change"),
        pl.when(base.is_not_null() & (base != 0)).then(change / base.abs()).alias("relative_change"),
    ]  # fmt: skip
    # the tests only where one applies (most rows are counts, spreads, indices): when/then would
    # evaluate every branch on every row
    untested = frame.filter(k.is_null()).select(
        *common, *[pl.lit(None, pl.Float64).alias(c) for c in ("change_lo", "change_hi", "p_value")],
        pl.lit(None, pl.String).alias("test"),
    )  # fmt: skip
    tested = frame.lazy().filter(k.is_not_null()).select(
        *common,
        pl.when(k == "rate").then(nc.lo).when((k == "difference") & (var_d > 0)).then(dd - z * se_d)
        .cast(pl.Float64).alias("change_lo"),
        pl.when(k == "rate").then(nc.hi).when((k == "difference") & (var_d > 0)).then(dd + z * se_d)
        .cast(pl.Float64).alias("change_hi"),
        pl.when(k == "rate").then(rate_p).when(k == "difference").then(p_d).when(k == "ratio").then(p_r)
        .cast(pl.Float64).alias("p_value"),
        pl.when(k == "rate").then(rate_t).when((k == "difference") & p_d.is_not_null()).then(pl.lit("z_wald"))
        .when((k == "ratio") & p_r.is_not_null()).then(pl.lit("z_log_wald")).cast(pl.String).alias("test"),
    ).collect()  # fmt: skip
    return pl.concat([tested, untested], how="vertical")
