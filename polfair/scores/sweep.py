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
from typing import Any, Literal, Required, TypedDict, Unpack

import polars as pl

from polfair.core import intervals as iv
from polfair.core._args import as_list
from polfair.core._typing import IntoExpr
from polfair.core.metrics import METRICS, group_metrics, rate
from polfair.core.options import keywords_of
from polfair.exceptions import PolfairError
from polfair.scores.counts import score_counts
from polfair.scores.curves import (
    HistogramRows,
    group_histograms,
    pass_rows,
    reference_groups,
    roc_curve,
    split_missing,
    warn_absent_privileged_scores,
)

__all__ = ["SWEEP_CI_COLUMNS", "Cuts", "SweepRows", "sweep_counts", "threshold_sweep", "threshold_sweep_from_counts"]

_GID = "__pf_gid"


def _many(x: Any) -> list[Any]:
    """A number or a list of numbers as a list (``None``: empty)."""
    if x is None:
        return []
    return [x] if isinstance(x, (int, float)) else list(x)


def _top_count(p: float, total: pl.Expr) -> pl.Expr:
    """``ceil(p·n)`` rows, with ``p·n`` within rounding of an integer taken as that integer (0.07 × 100 is
    7.000000000000001 in floating point: the top 7% of 100 rows is 7 rows, not 8).
    """
    x = pl.lit(p) * total.cast(pl.Float64)
    r = x.round()
    near = (x - r).abs() <= 1e-9 * pl.max_horizontal(x.abs(), pl.lit(1.0))
    return pl.when(near).then(r).otherwise(x.ceil()).cast(pl.Int64)


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
        ts = [float(t) for t in _many(thresholds)]
        if any(math.isnan(t) for t in ts):
            msg = "thresholds must be numbers (no NaN)"
            raise PolfairError(msg)
        t = pl.DataFrame({"cut": [f"score>={x}" for x in ts], "threshold": ts})
        parts.append(by_vals.join(t, how="cross") if by else t)
    ranks: list[tuple[str, Any]] = []
    for k in _many(rank_abs):
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            msg = f"rank_abs values must be ints >= 1 (top-k), got {k!r}"
            raise PolfairError(msg)
        ranks.append((f"rank_abs={k}", pl.lit(k, pl.Int64)))
    for p in _many(rank_pct):
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 < p <= 1:
            msg = f"rank_pct values must be fractions in (0, 1], got {p!r}"
            raise PolfairError(msg)
        ranks.append((f"rank_pct={p}", _top_count(float(p), pl.col("__pf_total"))))
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


def _with_missing_rows(
    wide: pl.DataFrame, miss: pl.DataFrame, by_n: list[str], intersections: int | Sequence[Sequence[str]] | None
) -> pl.DataFrame:
    """``n`` counting every input row of a group, as the report's does, and ``n_missing`` (Int64, the
    rows with a missing label, score or weight); a group whose every row is missing keeps one row per
    cut, with null counts (so null rates), after its attribute set's other groups.
    """
    g = [*by_n, "attribute", "group"]
    if not miss.height:
        return wide.with_columns(pl.lit(0, pl.Int64).alias("n_missing"))
    gm = group_histograms(miss.with_columns(pl.lit(0.0).alias("score")), by=by_n, intersections=intersections)
    gm = gm.group_by(g, maintain_order=True).agg(pl.col("n").sum().cast(pl.Int64).alias("n_missing"))
    out = wide.join(gm, on=g, how="left", nulls_equal=True, maintain_order="left").with_columns(
        pl.col("n_missing").fill_null(0)
    )
    only = gm.join(wide.select(g).unique(), on=g, how="anti", nulls_equal=True)
    if only.height:
        cuts = wide.select(*by_n, "cut", "threshold").unique(maintain_order=True)
        extra = (only.join(cuts, on=by_n, nulls_equal=True) if by_n else only.join(cuts, how="cross")).with_columns(
            pl.lit(0, pl.Int64).alias("n"))  # fmt: skip
        sets = wide.select(*by_n, "attribute").unique(maintain_order=True).with_row_index("__pf_set")
        out = (
            pl.concat([out, extra], how="diagonal_relaxed")
            .join(sets, on=[*by_n, "attribute"], how="left", nulls_equal=True, maintain_order="left")
            .sort("__pf_set", nulls_last=True, maintain_order=True)
            .drop("__pf_set")
        )
    return out.with_columns((pl.col("n") + pl.col("n_missing")).alias("n"))


_CONF = ("tp", "fp", "tn", "fn")
#: The interval columns of a sweep (with ``ci``), after ``n``: the fairness report's, for its rates.
SWEEP_CI_COLUMNS = ("value_lo", "value_hi", "difference_lo", "difference_hi", "ratio_lo", "ratio_hi", "p_value",
                    "p_value_adjusted", "n_eff", "ci_method", "test")  # fmt: skip


def _rate_intervals(
    long: pl.DataFrame, rates: list[str], ci: float, weighted: bool, adjust: str | None, family: list[str]
) -> pl.DataFrame:
    """The fairness report's group-row intervals of each rate at each cut (:mod:`polfair.core.intervals`):
    Wilson (value), Newcombe (difference), MOVER-R (ratio) and the N−1 χ² / Fisher test (weighted:
    Kish sizes, z test) against the reference group at the same cut; generalized rates get limits
    only (``bound``); counts and scores none. Null on the reference group's own comparisons.
    """
    c = pl.col
    if "__pf_n" not in long.columns:
        long = long.with_columns(pl.lit(None, pl.Float64).alias("__pf_n"), pl.lit(None, pl.Float64).alias("__pf_refn"))
    z = iv.z_value(ci)
    g, r = iv.Rate(c("value"), c("__pf_n")), iv.Rate(c("__pf_ref"), c("__pf_refn"))
    wl, d, q = iv.wilson_interval(g, z), iv.newcombe_interval(g, r, z), iv.mover_ratio_interval(g, r, z)
    t = iv.two_proportion_test(g, r, weighted=weighted)
    is_rate = c("metric").is_in(rates)
    gen = c("metric").str.starts_with("generalized_")
    compare = is_rate & c("attribute").is_not_null() & (c("group") != c("reference_group").cast(pl.String)).fill_null(True)
    okd = compare & c("difference").is_not_null()
    okr = compare & c("ratio").is_not_null()
    test = compare & ~gen
    out = long.with_columns(
        pl.when(is_rate).then(wl.lo).alias("value_lo"), pl.when(is_rate).then(wl.hi).alias("value_hi"),
        pl.when(okd).then(d.lo).alias("difference_lo"), pl.when(okd).then(d.hi).alias("difference_hi"),
        pl.when(okr).then(q.lo).alias("ratio_lo"), pl.when(okr).then(q.hi).alias("ratio_hi"),
        pl.when(test).then(t.p_value).alias("p_value"),
        pl.when(is_rate).then(c("__pf_n")).alias("n_eff"),
        pl.when(is_rate & c("value").is_not_null())
        .then(pl.when(gen).then(pl.lit("bound")).otherwise(pl.lit("score_ess" if weighted else "score")))
        .alias("ci_method"),
        pl.when(test & t.p_value.is_not_null()).then(t.test.cast(pl.String)).alias("test"),
    )  # fmt: skip
    floats = ["value_lo", "value_hi", "difference_lo", "difference_hi", "ratio_lo", "ratio_hi", "p_value"]
    out = out.with_columns(pl.col(floats).fill_nan(None))  # e.g. a generalized "rate" of scores outside [0, 1]
    if adjust is not None:
        return out.with_columns(iv.p_adjust(c("p_value"), adjust).over(family).alias("p_value_adjusted"))  # type: ignore[arg-type]
    return out.with_columns(pl.lit(None, pl.Float64).alias("p_value_adjusted"))


class SweepRows(HistogramRows, total=False):
    """The rows of a sweep: the keywords of :func:`~polfair.scores.curves.roc_curve`, its roles required."""

    y_true: Required[IntoExpr]
    y_score: Required[IntoExpr]
    protected: Required[IntoExpr | Sequence[IntoExpr]]


@keywords_of(roc_curve)
def threshold_sweep(
    data: Any,
    *,
    thresholds: float | Sequence[float] | None = None,
    rank_abs: int | Sequence[int] | None = None,
    rank_pct: float | Sequence[float] | None = None,
    metrics: Sequence[str] | None = None,
    privileged: Mapping[str, Any] | None = None,
    ci: float | None = 0.95,
    p_adjust: Literal["bh", "by", "holm"] | None = "bh",
    on_missing: Literal["warn", "raise", "ignore"] = "warn",
    **rows: Unpack[SweepRows],
) -> pl.DataFrame:
    """Every report metric of every group at each threshold, from one pass (a long table).

    Parameters
    ----------
    data, y_true, y_score, protected, favorable, score_label, weight, by, bins
        As :func:`~polfair.scores.counts.score_counts` (``score_label``: the label the score is of,
        a favorable value; ``docs/contract.md#polarity``).
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
        one privileged value (else the largest group by weight), as :func:`score_report`. A value
        found in no row warns (:class:`~polfair.exceptions.ReferenceWarning`) and leaves that
        attribute's comparisons null, as in the report.
    on_missing
        Rows with a missing label, score or weight: ``"warn"`` (default), ``"raise"`` or
        ``"ignore"``; they are counted in ``n`` and ``n_missing`` and left out of every rate.
    ci
        Confidence level in (0, 1), default 0.95: the fairness report's interval columns for the
        rates at each cut (Wilson value, Newcombe difference, MOVER-R ratio, N−1 χ² / Fisher test
        against the reference group at the same cut; Kish sizes when weighted). ``None``: none.
    p_adjust
        ``"bh"`` (default), ``"by"``, ``"holm"`` or ``None``: ``p_value_adjusted`` within each
        (``by`` value, cut, metric) family.

    Returns
    -------
    pl.DataFrame
        ``*by``, ``attribute`` (Categorical, as the fairness report; null on population rows),
        ``group`` (String; null on population rows), ``cut`` (String: ``"score>=0.5"``,
        ``"rank_abs=100"``, ``"rank_pct=0.1"``), ``threshold`` (Float64, the score cut used),
        ``metric`` (Categorical), ``value`` (Float64; rates are fractions in [0, 1], null on a zero
        denominator), ``reference_group`` (Categorical), ``difference`` (value − the reference
        group's value at the same cut) and ``ratio`` (value / the reference's; null on a zero
        reference) (Float64; null on population rows), ``n`` (Int64 rows of the group, those with a
        missing label, score or weight included, as in the report), ``n_missing`` (Int64, those
        rows; a group whose every row is missing keeps its rows, with null values); with
        ``ci`` then :data:`SWEEP_CI_COLUMNS` (``value_lo`` … ``n_eff`` Float64, ``ci_method`` and
        ``test`` Categorical; null for counts and scores). Thresholds descending within each group.

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
    h = score_counts(data, **pass_rows(rows), with_missing=True, on_missing=on_missing)
    by_n = h.columns[: len(as_list(rows.get("by")))]
    return threshold_sweep_from_counts(
        h, by=by_n, intersections=rows.get("intersections"), thresholds=thresholds, rank_abs=rank_abs, rank_pct=rank_pct,
        metrics=metrics, privileged=privileged, ci=ci, p_adjust=p_adjust,
    )  # fmt: skip


class Cuts(TypedDict, total=False):
    """The groups and cuts of a sweep: the keywords of :func:`threshold_sweep` that its histogram steps take.

    ``by``, ``intersections``, ``thresholds``, ``rank_abs`` and ``rank_pct``: each as in
    :func:`threshold_sweep` (``None`` by default).
    """

    by: str | Sequence[str] | None
    intersections: int | Sequence[Sequence[str]] | None
    thresholds: float | Sequence[float] | None
    rank_abs: int | Sequence[int] | None
    rank_pct: float | Sequence[float] | None


@keywords_of(threshold_sweep)
def sweep_counts(hist: pl.DataFrame, **cuts: Unpack[Cuts]) -> pl.DataFrame:
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
        counts, aif360's definitions; independent of the threshold), ``tp_n`` ... ``fn_n`` (Int64 rows)
        and ``tp_w2`` ... ``fn_w2`` (Float64 Σw²; null for a weighted histogram without
        ``weight_sq_sum``): the cell table's columns, for the intervals.

    Examples
    --------
    >>> import polfair as pf
    >>> from polfair.scores import score_counts
    >>> from polfair.scores.sweep import sweep_counts
    >>> h = score_counts(pf.load_compas(), y_true="two_year_recid", y_score="decile_score", protected="sex")
    >>> sweep_counts(h, thresholds=[5]).filter(group="Female").select("tp", "fp", "tn", "fn").row(0)
    (246.0, 230.0, 532.0, 167.0)
    """
    by_n = [str(b) for b in as_list(cuts.get("by"))]
    gh = group_histograms(hist, by=by_n, intersections=cuts.get("intersections"))
    T = _threshold_table(gh, by_n, cuts.get("thresholds"), cuts.get("rank_abs"), cuts.get("rank_pct"))
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

    def cumulative(descending: bool, pos: str, neg: str) -> pl.DataFrame:
        """Running sums of each group's positives as ``pos`` and negatives as ``neg`` (and their row
        counts and Σw²), over its scores in ``descending`` (or ascending) order, sorted by score.
        """
        return (
            gh.sort([_GID, "score"], descending=[False, descending])
            .select(
                _GID,
                "score",
                *[pl.col(f"{a}{x}").cum_sum().over(_GID).alias(f"{b}{x}") for a, b in (("pos", pos), ("neg", neg))
                  for x in ("", "_n", "_w2")],
            )
            .sort("score")
        )  # fmt: skip

    suffix = cumulative(True, "tp", "fp")  # suffix sums: Σ over scores >= this cell's score
    left = (totals.join(T, on=by_n, how="inner", nulls_equal=True) if by_n else totals.join(T, how="cross")).sort(
        "threshold"
    )
    # prefix sums: Σ over scores < this cell's score, so TN and FN are sums too (no N - FP residue)
    prefix = cumulative(False, "fn", "tn")
    joined = left.join_asof(
        suffix, left_on="threshold", right_on="score", by=_GID, strategy="forward", check_sortedness=False
    ).join_asof(
        prefix, left_on="threshold", right_on="score", by=_GID, strategy="backward", allow_exact_matches=False,
        check_sortedness=False,
    )  # fmt: skip
    counts = ("tp", "fp", "tn", "fn")
    out = joined.with_columns(
        pl.col(*counts).fill_null(0.0), pl.col([f"{c}_n" for c in counts]).fill_null(0).cast(pl.Int64),
        # Σw² of an empty side is 0; of a weighted histogram without Σw², unknown (null)
        *[pl.when(pl.col(f"{c}").fill_null(0.0).eq(0.0)).then(pl.lit(0.0)).otherwise(pl.col(f"{c}_w2"))
          .alias(f"{c}_w2") for c in counts],
    ).select(
        *g, "cut", "threshold", pl.col("n").cast(pl.Int64), *counts,
        "gtp", "gfp", (pl.col("N") - pl.col("gfp")).alias("gtn"), (pl.col("P") - pl.col("gtp")).alias("gfn"),
        *[f"{c}_n" for c in counts], *[f"{c}_w2" for c in counts], _GID,
    )  # fmt: skip
    return out.sort([_GID, "threshold"], descending=[False, True]).drop(_GID)


@keywords_of(threshold_sweep)
def threshold_sweep_from_counts(
    hist: pl.DataFrame,
    *,
    metrics: Sequence[str] | None = None,
    privileged: Mapping[str, Any] | None = None,
    ci: float | None = 0.95,
    p_adjust: Literal["bh", "by", "holm"] | None = "bh",
    **cuts: Unpack[Cuts],
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
    level = iv.check_ci(ci)
    adjust = iv.check_p_adjust(p_adjust)
    by_n = [str(b) for b in as_list(cuts.get("by"))]
    hist = hist.collect() if isinstance(hist, pl.LazyFrame) else hist
    warn_absent_privileged_scores(hist, by_n, privileged)
    miss, hist = split_missing(hist)
    wide = _with_missing_rows(sweep_counts(hist, **cuts), miss, by_n, cuts.get("intersections"))
    idx = [*by_n, "attribute", "group", "cut", "threshold", "n"]
    rates = [m for m in names if METRICS[m].is_rate]
    vals = wide.with_row_index("__pf_row").with_columns(group_metrics())
    # each rate's effective size (Kish; the count when unweighted), for the intervals
    sizes_n = vals.select("__pf_row", *[iv.rate_inputs(m).n.alias(m) for m in rates]).unpivot(
        index="__pf_row", on=rates, variable_name="metric", value_name="__pf_n"
    ) if level is not None and rates else None  # fmt: skip
    vals = vals.select("__pf_row", *idx, "n_missing", *names)
    long = vals.unpivot(index=["__pf_row", *idx, "n_missing"], on=names, variable_name="metric", value_name="value")
    if sizes_n is not None:
        long = long.join(sizes_n, on=["__pf_row", "metric"], how="left", maintain_order="left")
    # the reference group of each attribute set (privileged, else the largest by weight) and the
    # difference / ratio of every group's value with the reference's at the same cut
    sizes = wide.group_by([*by_n, "attribute", "group"], maintain_order=True).agg(
        (pl.col("tp") + pl.col("fp") + pl.col("tn") + pl.col("fn")).first().alias("__pf_W")
    )
    refs = reference_groups(sizes, by=by_n, privileged=privileged, size="__pf_W")
    ref_vals = long.join(
        refs, left_on=[*by_n, "attribute", "group"], right_on=[*by_n, "attribute", "reference_group"], nulls_equal=True
    ).select(*by_n, "attribute", "cut", "metric", pl.col("value").alias("__pf_ref"),
             *([pl.col("__pf_n").alias("__pf_refn")] if sizes_n is not None else []))  # fmt: skip
    keys = [*by_n, "attribute", "cut", "metric"]
    long = (
        long.join(refs, on=[*by_n, "attribute"], how="left", nulls_equal=True)
        .join(ref_vals, on=keys, how="left", nulls_equal=True)
        .with_columns(
            (pl.col("value") - pl.col("__pf_ref")).alias("difference"),
            rate(pl.col("value"), pl.col("__pf_ref")).alias("ratio"),
        )
    )
    ci_cols: list[str] = []
    if level is not None:
        weighted = bool(wide.select(pl.any_horizontal([pl.col(c) != pl.col(f"{c}_w2") for c in _CONF]).any()).item())
        long = _rate_intervals(long, rates, level, weighted, adjust, [*by_n, "cut", "metric"])
        ci_cols = [*SWEEP_CI_COLUMNS]
    order = {m: i for i, m in enumerate(names)}
    return (
        long.with_columns(pl.col("metric").replace_strict(order, return_dtype=pl.Int64).alias("__pf_m"))
        .sort(["__pf_row", "__pf_m"])
        .select(*idx[:-1], "metric", "value", "reference_group", "difference", "ratio", "n", "n_missing", *ci_cols)
        .with_columns(pl.col("attribute", "metric", "reference_group", *ci_cols[-2:]).cast(pl.Categorical))  # as the report
    )
