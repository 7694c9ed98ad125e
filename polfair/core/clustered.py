"""Cluster-robust intervals for a report: delete-a-group jackknife over the ``bucket`` key.

``fairness_report(cluster=..., ci=...)`` counts with a ``bucket`` key (the hash of the cluster id
modulo ``n_buckets``), builds the report from the table without buckets, then calls
:func:`jackknife_report_intervals` to replace the interval and test columns of the group rows by
jackknife ones (:func:`polfair.core.intervals.jackknife_intervals`, Kott 2001).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl

from polfair.core._args import as_list
from polfair.core.intervals import jackknife_intervals, p_adjust
from polfair.core.passes.counts import BUCKET, COUNT_COLUMNS

__all__ = ["clustered_report", "jackknife_report_intervals", "sum_buckets"]

_IDS = ["attribute", "group", "metric"]
_STATS = ("value", "difference", "ratio")


def _is_ratio(stat: pl.Expr, metric: pl.Expr) -> pl.Expr:
    """Whether a statistic is a ratio (jackknifed on the log scale)."""
    return (stat == "ratio") | ((stat == "value") & (metric.str.ends_with("_ratio") | (metric == "disparate_impact")))


def _range(stat: pl.Expr, metric: pl.Expr) -> tuple[pl.Expr, pl.Expr]:
    """The range of a jackknifed quantity: rates in [0, 1], differences in [−1, 1], absolute differences
    (equalized odds, average absolute odds) in [0, 1]; the jackknife-t limits are truncated to it, which
    keeps every true value they covered. Ratios (log scale) need no bound.
    """
    m = metric.cast(pl.String)
    absolute = m.is_in(["equalized_odds_difference", "average_abs_odds_difference",
                        "generalized_equalized_odds_difference"])  # fmt: skip
    signed = (stat == "difference") | ((stat == "value") & m.str.ends_with("_difference") & ~absolute)
    return pl.when(signed).then(-1.0).otherwise(0.0), pl.lit(1.0)


def _is_disparity(metric: pl.Expr) -> pl.Expr:
    return metric.str.ends_with("_ratio") | metric.str.ends_with("_difference") | (metric == "disparate_impact")


def jackknife_report_intervals(
    report: pl.DataFrame,
    cells: pl.DataFrame,
    build: Callable[[pl.DataFrame, list[str]], pl.DataFrame],
    *,
    by: list[str],
    ci: float,
    p_adjust_method: Any = "bh",
) -> pl.DataFrame:
    r"""Replace the intervals and tests of a report's group rows by delete-a-group jackknife ones.

    Parameters
    ----------
    report
        A long report with interval columns (``ci=``), from the bucket-free version of ``cells``.
    cells
        The cell table with its ``bucket`` key (``cluster=``).
    build
        ``build(table, by_keys) -> report``: the same report (``ci=None``) from a bucket-free cell
        table with the extra ``by`` key of the replicate (see
        :func:`polfair.core.intervals.jackknife_intervals`).
    by
        The report's ``by`` columns.
    ci
        Confidence level.
    p_adjust_method
        ``"bh"``, ``"by"``, ``"holm"`` or ``None``: ``p_value_adjusted`` per (``by`` value, metric),
        recomputed from the new p-values.

    Returns
    -------
    pl.DataFrame
        The report, same schema. On group rows (``group`` not null) where the report had an
        interval: ``value_lo/value_hi`` (and, on rate rows, ``difference_lo/hi``, ``ratio_lo/hi``)
        are jackknife-t limits ``θ̂ ± t_{G−1}·se_J`` (ratios on the log scale, then
        exponentiated); ``p_value`` is the jackknife Wald-t test of no difference (difference 0,
        log ratio 0) where the report had one; ``ci_method`` is ``"jackknife_t"`` and ``test``
        ``"jackknife_t"``. Other rows (attribute-level spreads, where the jackknife is
        inconsistent, entropy indices, EDF, population rows) keep their methods. Null where
        fewer than 2 buckets are non-empty or a replicate is undefined.

    Notes
    -----
    Kott (2001), *Journal of Official Statistics* 17(4): with ``G`` buckets,
    :math:`v_J = \frac{G-1}{G}\sum_b(\theta_{(b)}-\bar\theta)^2`. Coverage 96% at 95% in
    ``bench/`` for clustered rows (Newcombe with iid rows: 82%).

    Examples
    --------
    >>> import polars as pl
    >>> import polfair as pf
    >>> df = pl.DataFrame({"y": [1, 0] * 30, "p": [1, 1, 0] * 20, "g": ["a", "b", "b"] * 20,
    ...                    "uid": [i // 2 for i in range(60)]})
    >>> rep = pf.fairness_report(df, y_true="y", y_pred="p", protected="g", ci=0.95, cluster="uid",
    ...                          n_buckets=10)
    >>> rep.filter(pl.col("metric") == "selection_rate", pl.col("group") == "a")["ci_method"].item()
    'jackknife_t'
    """

    def statistic(table: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
        rep = build(table, keys).filter(pl.col("group").is_not_null())
        parts = [
            rep.select(*keys, pl.col(_IDS).cast(pl.String), pl.lit(s).alias("stat"), pl.col(s).alias("value"))
            for s in _STATS
        ]
        out = pl.concat(parts)
        log = _is_ratio(pl.col("stat"), pl.col("metric"))
        return out.with_columns(
            pl.when(log).then(pl.when(pl.col("value") > 0).then(pl.col("value").log())).otherwise(pl.col("value"))
            .alias("value"),
            pl.lit(0.0).alias("null_value"),
        )  # fmt: skip

    jk = jackknife_intervals(cells, statistic, by=by, ci=ci)
    log = _is_ratio(pl.col("stat"), pl.col("metric"))
    low, high = _range(pl.col("stat"), pl.col("metric"))
    jk = jk.with_columns(  # ratios back from the log scale; every limit within the quantity's range
        [pl.when(log).then(pl.col(c).exp()).otherwise(pl.col(c).clip(low, high)).alias(c) for c in ("value_lo", "value_hi")]
    )
    wide = jk.pivot(on="stat", index=[*by, *_IDS], values=["value_lo", "value_hi", "p_value"])

    def col(kind: str, stat: str) -> str:
        name = f"{kind}_{stat}"
        return name if name in wide.columns else kind  # pivot names: '<values>_<on>'

    cols = {
        "value_lo": col("value_lo", "value"), "value_hi": col("value_hi", "value"),
        "difference_lo": col("value_lo", "difference"), "difference_hi": col("value_hi", "difference"),
        "ratio_lo": col("value_lo", "ratio"), "ratio_hi": col("value_hi", "ratio"),
    }  # fmt: skip
    new = wide.select(
        *by, *[pl.col(c).alias(f"__pf_k_{c}") for c in _IDS],
        *[pl.col(src).alias(f"__pf_jk_{dst}") for dst, src in cols.items() if src in wide.columns],
        pl.col(col("p_value", "difference")).alias("__pf_jk_p_rate"),
        pl.col(col("p_value", "value")).alias("__pf_jk_p_disp"),
    )  # fmt: skip
    out = report.with_row_index("__pf_row").with_columns(
        [pl.col(c).cast(pl.String).alias(f"__pf_k_{c}") for c in _IDS]
    ).join(new, on=[*by, *[f"__pf_k_{c}" for c in _IDS]], how="left", nulls_equal=True, maintain_order="left")
    # every group row that has an interval takes the jackknife's, null where the jackknife is undefined
    # (fewer than two non-empty buckets, an undefined replicate): never the iid interval
    hit = pl.col("group").is_not_null() & pl.col("value_lo").is_not_null()
    repl = []
    for dst in cols:
        if f"__pf_jk_{dst}" in out.columns:
            repl.append(pl.when(hit & pl.col(dst).is_not_null()).then(pl.col(f"__pf_jk_{dst}")).otherwise(pl.col(dst))
                        .alias(dst))  # fmt: skip
    jk_p = pl.when(_is_disparity(pl.col("metric").cast(pl.String))).then(pl.col("__pf_jk_p_disp")).otherwise(
        pl.col("__pf_jk_p_rate"))  # fmt: skip
    p_hit = hit & pl.col("p_value").is_not_null()
    repl.append(pl.when(p_hit).then(jk_p).otherwise(pl.col("p_value")).alias("p_value"))
    repl.append(pl.when(hit).then(pl.lit("jackknife_t")).otherwise(pl.col("ci_method").cast(pl.String))
                .alias("ci_method"))  # fmt: skip
    repl.append(pl.when(p_hit).then(pl.lit("jackknife_t")).otherwise(pl.col("test").cast(pl.String)).alias("test"))
    out = out.with_columns(repl)
    # the group rows' p-values are adjusted again within their own families (by value, metric), as the
    # report adjusts them; attribute rows keep theirs (their p-values did not change)
    on_groups = pl.col("group").is_not_null()
    if p_adjust_method is not None:
        adjusted = p_adjust(pl.col("p_value"), p_adjust_method).over([*by, on_groups.alias("__pf_g"), "metric"])
        out = out.with_columns(pl.when(on_groups).then(adjusted).otherwise(pl.col("p_value_adjusted")).alias("p_value_adjusted"))
    else:
        out = out.with_columns(pl.when(on_groups).then(pl.col("p_value")).otherwise(pl.col("p_value_adjusted"))
                               .alias("p_value_adjusted"))  # fmt: skip
    out = out.sort("__pf_row").select(report.columns)
    return out.with_columns([pl.col(c).cast(report.schema[c]) for c in ("ci_method", "test")])



def sum_buckets(cells: pl.DataFrame) -> pl.DataFrame:
    """A clustered cell table without its ``bucket`` key: the count columns summed per remaining key.

    Parameters
    ----------
    cells
        A cell table with a ``bucket`` key (``cluster=``).

    Returns
    -------
    pl.DataFrame
        The same columns less ``bucket``, one row per remaining key (in first-seen order, so the rows
        stay sorted by the keys), each count column summed in its dtype.

    Examples
    --------
    >>> import polars as pl
    >>> import polfair as pf
    >>> df = pl.DataFrame({"y": [1, 0, 1, 1], "p": [1, 1, 0, 1], "g": ["a", "a", "b", "b"], "uid": [1, 2, 3, 4]})
    >>> cells = pf.confusion_counts(df, y_true="y", y_pred="p", protected="g", cluster="uid", n_buckets=4).collect()
    >>> sum_buckets(cells).select("g", "n", "tp").rows()
    [('a', 2, 1.0), ('b', 2, 1.0)]
    """
    names = cells.columns
    sums = [c for c in names if c in COUNT_COLUMNS]
    keys = [c for c in names if c not in sums and c != BUCKET]
    out = cells.group_by(keys, maintain_order=True).agg([pl.col(c).sum() for c in sums]) if keys else (
        cells.select([pl.col(c).sum() for c in sums]))  # fmt: skip
    return out.with_columns([pl.col(c).cast(cells.schema[c]) for c in sums])  # rows stay sorted by the keys


def clustered_report(cells: pl.DataFrame, options: Any, build: Callable[[pl.DataFrame, Any], pl.DataFrame]) -> pl.DataFrame:
    """The report of a cell table with a ``bucket`` key, as ``fairness_report(cluster=...)`` makes it.

    Every door with a clustered cell table (:func:`polfair.fairness_report`,
    :class:`polfair.FairnessAccumulator`) calls this: the report of the table with its buckets summed
    (:func:`sum_buckets`: every value, entropy index and differential-fairness row reads the groups, not
    the buckets), then, with ``options.ci`` set, the cluster-robust intervals of
    :func:`jackknife_report_intervals` on its group rows.

    Parameters
    ----------
    cells
        The cell table with its ``bucket`` key.
    options
        The report's options (:class:`polfair.core.report.build.ReportOptions`): its ``by``, ``ci``
        and ``p_adjust``, and ``options.replicate(keys)`` for the jackknife's replicates.
    build
        ``build(table, options) -> report`` (:func:`polfair.core.report.build.report_of`).

    Returns
    -------
    pl.DataFrame
        ``build(sum_buckets(cells), options)``, its group rows' intervals and tests jackknife ones
        when ``options.ci`` is not None.

    Examples
    --------
    >>> import polars as pl
    >>> import polfair as pf
    >>> from polfair.core.report.build import ReportOptions, report_of
    >>> df = pl.DataFrame({"y": [1, 0] * 30, "p": [1, 1, 0] * 20, "g": ["a", "b", "b"] * 20,
    ...                    "uid": [i // 2 for i in range(60)]})
    >>> cells = pf.confusion_counts(df, y_true="y", y_pred="p", protected="g", cluster="uid", n_buckets=10).collect()
    >>> rep = clustered_report(cells, ReportOptions(protected=["g"]), report_of)
    >>> rep.equals(pf.fairness_report(df, y_true="y", y_pred="p", protected="g", cluster="uid", n_buckets=10))
    True
    """
    report = build(sum_buckets(cells), options)
    if options.ci is None:
        return report
    return jackknife_report_intervals(
        report, cells, lambda table, keys: build(table, options.replicate(keys)),
        by=[str(b) for b in as_list(options.by)], ci=options.ci, p_adjust_method=options.p_adjust,
    )  # fmt: skip
