"""Threshold sweeps: every report metric at many thresholds, from one score histogram.

At a threshold ``t`` the decision is ``score >= t``; per group the confusion counts are sums over
the histogram's cells (TP = Σw[y = fav, s >= t], ...), and every metric is the core's one
definition (:data:`polfair.core.metrics.METRICS`) applied to those counts. Thresholds are

* score values (``thresholds=[0.1, ..., 0.9]``, Fairness Indicators' default list), or every
  distinct score / bin edge (``thresholds=None``, the default when no rank cut is given);
* top-k cuts (Aequitas' ``rank_abs``: the ``k`` highest-scored rows of the population are
  selected) and top-percent cuts (``rank_pct``: the top ``ceil(p·n)`` rows). The cut is the
  ``k``-th highest score of the population (per ``by`` value), applied to every group; rows tied
  with it are selected too, so the population's selected count can exceed ``k`` (the ``threshold``
  column gives the score used).

With a binned histogram a threshold is exact when it is a bin edge; otherwise a bin counts as
selected when its lower edge is ``>= t``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from polfair.core._args import as_list
from polfair.core._typing import IntoExpr
from polfair.core.metrics import METRICS, group_metrics, rate
from polfair.exceptions import PolfairError
from polfair.scores.counts import score_counts
from polfair.scores.curves import group_histograms, reference_groups

__all__ = ["sweep_counts", "threshold_sweep", "threshold_sweep_from_counts"]

_GID = "__pf_gid"


def _threshold_table(gh: pl.DataFrame, by: list[str], thresholds: Any, rank_abs: Any, rank_pct: Any) -> pl.DataFrame:
    pop = gh.filter(pl.col("attribute").is_null())
    by_vals = pop.select(by).unique(maintain_order=True) if by else pl.DataFrame()
    parts: list[pl.DataFrame] = []
    schema: dict[str, Any] = {**{b: gh.schema[b] for b in by}, "cut": pl.String, "threshold": pl.Float64}
    if thresholds is None and rank_abs is None and rank_pct is None:
        parts.append(
            pop.select(*by, pl.format("score>={}", pl.col("score")).alias("cut"), pl.col("score").alias("threshold"))
        )
    elif thresholds is not None:
        ts = [float(t) for t in as_list(thresholds)]  # type: ignore[arg-type]
        if any(math.isnan(t) for t in ts):
            msg = "thresholds must be numbers (no NaN)"
            raise PolfairError(msg)
        t = pl.DataFrame({"cut": [f"score>={x}" for x in ts], "threshold": ts})
        parts.append(by_vals.join(t, how="cross") if by else t)
    ranks: list[tuple[str, Any]] = []
    for k in as_list(rank_abs):
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            msg = f"rank_abs values must be ints >= 1 (top-k), got {k!r}"
            raise PolfairError(msg)
        ranks.append((f"rank_abs={k}", pl.lit(k, pl.Int64)))
    for p in as_list(rank_pct):
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 < p <= 1:
            msg = f"rank_pct values must be fractions in (0, 1], got {p!r}"
            raise PolfairError(msg)
        ranks.append((f"rank_pct={p}", (pl.lit(float(p)) * pl.col("__pf_total")).ceil().cast(pl.Int64)))
    if ranks:
        cum = pop.sort([*by, "score"], descending=[*([False] * len(by)), True]).with_columns(
            (pl.col("n").cum_sum().over(by) if by else pl.col("n").cum_sum()).alias("__pf_cum"),
            (pl.col("n").sum().over(by) if by else pl.col("n").sum()).alias("__pf_total"),
        )
        for cut, k in ranks:
            chosen = cum.filter(pl.col("__pf_cum") >= pl.min_horizontal(k, pl.col("__pf_total")))
            first = chosen.group_by(by, maintain_order=True).first() if by else chosen.head(1)
            parts.append(first.select(*by, pl.lit(cut).alias("cut"), pl.col("score").alias("threshold")))
    if not parts:
        return pl.DataFrame(schema=schema)
    return pl.concat([p.cast(schema) for p in parts]).unique(maintain_order=True)  # type: ignore[arg-type]


def sweep_counts(
    hist: pl.DataFrame,
    *,
    by: str | Sequence[str] | None = None,
    intersections: int | Sequence[Sequence[str]] | None = None,
    thresholds: float | Sequence[float] | None = None,
    rank_abs: int | Sequence[int] | None = None,
    rank_pct: float | Sequence[float] | None = None,
) -> pl.DataFrame:
    """Weighted confusion counts of every group at every threshold (wide; the cell table's columns).

    Parameters
    ----------
    hist
        A score histogram (:func:`~polfair.scores.counts.score_counts`).
    by, intersections, thresholds, rank_abs, rank_pct
        As :func:`threshold_sweep`.

    Returns
    -------
    pl.DataFrame
        ``*by``, ``attribute``, ``group``, ``cut`` (String), ``threshold`` (Float64), ``n`` (Int64
        rows of the group), ``tp``, ``fp``, ``tn``, ``fn`` (Float64 weighted counts of
        ``score >= threshold``), ``gtp``, ``gfp``, ``gtn``, ``gfn`` (the generalized, score-weighted
        counts, aif360's definitions; independent of the threshold).

    Examples
    --------
    >>> import polfair as pf
    >>> from polfair.scores import score_counts
    >>> from polfair.scores.sweep import sweep_counts
    >>> h = score_counts(pf.load_compas(), y_true="two_year_recid", y_score="decile_score", protected="sex")
    >>> sweep_counts(h, thresholds=[5]).filter(group="Female").select("tp", "fp", "tn", "fn").row(0)
    (246.0, 230.0, 532.0, 167.0)
    """
    by_n = [str(b) for b in as_list(by)]
    gh = group_histograms(hist, by=by_n, intersections=intersections)
    T = _threshold_table(gh, by_n, thresholds, rank_abs, rank_pct)
    g = [*by_n, "attribute", "group"]
    key = pl.struct(g)
    gh = gh.with_columns(key.ne_missing(key.shift(1)).fill_null(True).cum_sum().cast(pl.UInt32).alias(_GID))
    totals = gh.group_by([_GID, *g], maintain_order=True).agg(
        pl.col("n").sum(),
        pl.col("pos").sum().alias("P"),
        pl.col("neg").sum().alias("N"),
        pl.col("pos_score").sum().alias("gtp"),
        pl.col("neg_score").sum().alias("gfp"),
    )
    # suffix sums: Σ over scores >= this cell's score
    suffix = (
        gh.sort([_GID, "score"], descending=[False, True])
        .select(
            _GID,
            "score",
            pl.col("pos").cum_sum().over(_GID).alias("tp"),
            pl.col("neg").cum_sum().over(_GID).alias("fp"),
        )
        .sort("score")
    )
    left = (totals.join(T, on=by_n, how="inner", nulls_equal=True) if by_n else totals.join(T, how="cross")).sort(
        "threshold"
    )
    # prefix sums: Σ over scores < this cell's score, so TN and FN are sums too (no N - FP residue)
    prefix = (
        gh.sort([_GID, "score"])
        .select(
            _GID,
            "score",
            pl.col("pos").cum_sum().over(_GID).alias("fn"),
            pl.col("neg").cum_sum().over(_GID).alias("tn"),
        )
        .sort("score")
    )
    joined = left.join_asof(
        suffix, left_on="threshold", right_on="score", by=_GID, strategy="forward", check_sortedness=False
    ).join_asof(
        prefix, left_on="threshold", right_on="score", by=_GID, strategy="backward", allow_exact_matches=False,
        check_sortedness=False,
    )  # fmt: skip
    out = joined.with_columns(pl.col("tp", "fp", "tn", "fn").fill_null(0.0)).select(
        *g, "cut", "threshold", pl.col("n").cast(pl.Int64), "tp", "fp", "tn", "fn",
        "gtp", "gfp", (pl.col("N") - pl.col("gfp")).alias("gtn"), (pl.col("P") - pl.col("gtp")).alias("gfn"),
        _GID,
    )  # fmt: skip
    return out.sort([_GID, "threshold"], descending=[False, True]).drop(_GID)


def threshold_sweep_from_counts(
    hist: pl.DataFrame,
    *,
    by: str | Sequence[str] | None = None,
    intersections: int | Sequence[Sequence[str]] | None = None,
    thresholds: float | Sequence[float] | None = None,
    rank_abs: int | Sequence[int] | None = None,
    rank_pct: float | Sequence[float] | None = None,
    metrics: Sequence[str] | None = None,
    privileged: Mapping[str, Any] | None = None,
) -> pl.DataFrame:
    """:func:`threshold_sweep` from a (merged) score histogram (same parameters, without the data).

    Examples
    --------
    >>> import polfair as pf
    >>> from polfair.scores import score_counts
    >>> from polfair.scores.sweep import threshold_sweep_from_counts
    >>> h = score_counts(pf.load_compas(), y_true="two_year_recid", y_score="decile_score", protected="race")
    >>> s = threshold_sweep_from_counts(h, thresholds=[5], metrics=["selection_rate"])
    >>> s.filter(group="Caucasian")["value"].item()
    0.3309557774607703
    """
    names = list(METRICS) if metrics is None else list(metrics)
    unknown = [m for m in names if m not in METRICS]
    if unknown:
        msg = f"metrics: unknown {unknown}; choose from {list(METRICS)}"
        raise PolfairError(msg)
    wide = sweep_counts(hist, by=by, intersections=intersections, thresholds=thresholds, rank_abs=rank_abs,
                        rank_pct=rank_pct)  # fmt: skip
    by_n = [str(b) for b in as_list(by)]
    idx = [*by_n, "attribute", "group", "cut", "threshold", "n"]
    vals = wide.with_row_index("__pf_row").with_columns(group_metrics()).select("__pf_row", *idx, *names)
    long = vals.unpivot(index=["__pf_row", *idx], on=names, variable_name="metric", value_name="value")
    # the reference group of each attribute set (privileged, else the largest by weight) and the
    # difference / ratio of every group's value with the reference's at the same cut
    sizes = wide.group_by([*by_n, "attribute", "group"], maintain_order=True).agg(
        (pl.col("tp") + pl.col("fp") + pl.col("tn") + pl.col("fn")).first().alias("__pf_W")
    )
    refs = reference_groups(sizes, by=by_n, privileged=privileged, size="__pf_W")
    ref_vals = long.join(
        refs, left_on=[*by_n, "attribute", "group"], right_on=[*by_n, "attribute", "reference_group"], nulls_equal=True
    ).select(*by_n, "attribute", "cut", "metric", pl.col("value").alias("__pf_ref"))
    keys = [*by_n, "attribute", "cut", "metric"]
    long = (
        long.join(refs, on=[*by_n, "attribute"], how="left", nulls_equal=True)
        .join(ref_vals, on=keys, how="left", nulls_equal=True)
        .with_columns(
            (pl.col("value") - pl.col("__pf_ref")).alias("difference"),
            rate(pl.col("value"), pl.col("__pf_ref")).alias("ratio"),
        )
    )
    order = {m: i for i, m in enumerate(names)}
    return (
        long.with_columns(pl.col("metric").replace_strict(order, return_dtype=pl.Int64).alias("__pf_m"))
        .sort(["__pf_row", "__pf_m"])
        .select(*idx[:-1], "metric", "value", "reference_group", "difference", "ratio", "n")
        .with_columns(pl.col("attribute", "metric", "reference_group").cast(pl.Categorical))  # as the report
    )


def threshold_sweep(
    data: Any,
    *,
    y_true: IntoExpr,
    y_score: IntoExpr,
    protected: IntoExpr | Sequence[IntoExpr],
    favorable: Any = 1,
    weight: IntoExpr | None = None,
    by: IntoExpr | Sequence[IntoExpr] | None = None,
    bins: int | Sequence[float] | str | None = "exact",
    intersections: int | Sequence[Sequence[str]] | None = None,
    thresholds: float | Sequence[float] | None = None,
    rank_abs: int | Sequence[int] | None = None,
    rank_pct: float | Sequence[float] | None = None,
    metrics: Sequence[str] | None = None,
    privileged: Mapping[str, Any] | None = None,
) -> pl.DataFrame:
    """Every report metric of every group at each threshold, from one pass (a long table).

    Parameters
    ----------
    data, y_true, y_score, protected, favorable, weight, by, bins
        As :func:`~polfair.scores.counts.score_counts`.
    intersections
        Largest attribute-set size or explicit attribute sets (default: all).
    thresholds
        Score thresholds (decision ``score >= t``). ``None`` with no rank cut: every distinct
        score (bin) of the population.
    rank_abs
        Top-k cuts (Aequitas ``rank_abs``): ints ``k >= 1``.
    rank_pct
        Top-percent cuts (Aequitas ``rank_pct``): fractions in (0, 1].
    metrics
        Names from :data:`polfair.core.metrics.METRICS` (default: all of them).
    privileged
        ``{attribute: value}``: the reference group of the attribute sets whose attributes all have
        one privileged value (else the largest group by weight), as :func:`score_report`.

    Returns
    -------
    pl.DataFrame
        ``*by``, ``attribute`` (Categorical, as the fairness report; null on population rows),
        ``group`` (String; null on population rows), ``cut`` (String: ``"score>=0.5"``,
        ``"rank_abs=100"``, ``"rank_pct=0.1"``), ``threshold`` (Float64, the score cut used),
        ``metric`` (Categorical), ``value`` (Float64; rates are fractions in [0, 1], null on a zero
        denominator), ``reference_group`` (Categorical), ``difference`` (value − the reference
        group's value at the same cut) and ``ratio`` (value / the reference's; null on a zero
        reference) (Float64; null on population rows), ``n`` (Int64 rows of the group). Thresholds
        descending within each group.

    Raises
    ------
    PolfairError
        Unknown metric, invalid ``rank_abs`` / ``rank_pct`` / thresholds; and as
        :func:`~polfair.scores.counts.score_counts`.

    Examples
    --------
    >>> import polars as pl
    >>> import polfair as pf
    >>> from polfair.scores import threshold_sweep
    >>> sw = threshold_sweep(pf.load_compas(), y_true="two_year_recid", y_score="decile_score", protected="race",
    ...                      thresholds=[5, 8], rank_pct=[0.1], metrics=["selection_rate", "false_positive_rate"])
    >>> fpr = sw.filter(group="African-American", metric="false_positive_rate")
    >>> fpr.select("cut", "threshold", pl.col("value").round(4)).rows()
    [('rank_pct=0.1', 9.0, 0.0826), ('score>=8.0', 8.0, 0.1394), ('score>=5.0', 5.0, 0.4234)]
    """
    h = score_counts(
        data, y_true=y_true, y_score=y_score, protected=protected, favorable=favorable, weight=weight, by=by, bins=bins
    )
    by_n = h.columns[: len(as_list(by))]
    return threshold_sweep_from_counts(
        h, by=by_n, intersections=intersections, thresholds=thresholds, rank_abs=rank_abs, rank_pct=rank_pct,
        metrics=metrics, privileged=privileged,
    )  # fmt: skip
