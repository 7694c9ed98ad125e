"""ROC, precision–recall and reliability curves, AUC, AP, Brier, ECE and ABROCA by group.

Everything here is arithmetic on a score histogram (:func:`polfair.scores.counts.score_counts`):
the histogram is rolled up to every attribute set (each protected attribute alone and their
intersections, as in the fairness report) and the population; each group's cells are sorted by
score, descending, and cumulated. The decision at threshold ``t`` is ``score >= t``.

Definitions (``w`` weights, ``y`` 1 for the favorable label, ``s`` the score):

* ROC points: ``(FPR, TPR)`` at every distinct score (bin), from ``(0, 0)``; **roc_auc** =
  trapezoidal area, ties counted as half (equal to scikit-learn's ``roc_auc_score``, 1.x).
* **average_precision** = Σ_k (R_k − R_{k−1}) P_k over distinct scores, descending (scikit-learn's
  ``average_precision_score``: no interpolation).
* **brier_score** = Σw(s − y)² / Σw (scikit-learn's ``brier_score_loss``); exact under any binning.
* reliability curve: ``calibration_bins`` equal-width bins on [0, 1] with scikit-learn's
  ``calibration_curve(strategy="uniform")`` assignment (a score equal to an interior edge goes to the
  lower bin); per bin the mean score and the fraction of favorable labels (weighted).
  **expected_calibration_error** = Σ_b (W_b / W) |mean score_b − fraction favorable_b| (Naeini et
  al. 2015; Guo et al. 2017) over those bins. Brier, ECE and reliability need scores in [0, 1]
  (else the value is null).
* **abroca** (Gardner, Brooks & Baker 2019, "Evaluating the Fairness of Predictive Student Models
  Through Slicing Analysis"): ∫₀¹ |TPR_g(f) − TPR_ref(f)| df between a group's ROC curve and the
  reference group's, computed exactly on the piecewise-linear curves (holisticai's ``abroca``
  approximates the same integral on a grid).

The binning error of a binned histogram's AUC is at most ``½ Σ_b P_b N_b / (P N)`` (ties inside a
bin count as half-concordant); the exact-value histogram has no error.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from typing import Any, Literal, Required, TypedDict, Unpack

import numpy as np
import polars as pl

from polfair.core import intervals as iv
from polfair.core._args import as_list, as_values
from polfair.core._typing import IntoExpr
from polfair.core.options import checks_keywords, keywords_of
from polfair.core.passes.counts import check_counted
from polfair.core.proba import DEFAULT_TOLERANCE
from polfair.core.reference import largest_reference, resolve_min_sample_size, warn_small_reference
from polfair.core.report.build import attribute_sets, group_label, value_label, warn_absent_privileged
from polfair.core.values import coerce_values
from polfair.exceptions import InvalidInputError, PolfairError
from polfair.scores._uncertainty import SCORE_CI_FLOATS, auc_variance_expr, score_intervals
from polfair.scores.counts import SCORE_COUNT_COLUMNS, score_counts

__all__ = [
    "SCORE_METRICS",
    "CurveRows",
    "HistogramRows",
    "ScoreKnobs",
    "ScoreRows",
    "area_between_roc_curves",
    "check_score_reference",
    "group_histograms",
    "pass_rows",
    "reference_groups",
    "precision_recall_curve",
    "reliability_curve",
    "roc_curve",
    "score_report",
    "score_report_from_counts",
    "split_missing",
    "warn_absent_privileged_scores",
]

#: Metrics of :func:`score_report`, in order.
SCORE_METRICS = ("roc_auc", "average_precision", "brier_score", "expected_calibration_error", "abroca")

_SET = "__pf_set"  # attribute-set index, -1 on population rows
_GID = "__pf_gid"


_W2 = "weight_sq_sum"  # Σw² per cell; absent from histograms of polfair before the score intervals


def _keys_of(hist: pl.DataFrame, by: Sequence[str]) -> list[str]:
    missing = [b for b in by if b not in hist.columns]
    if missing or not {*SCORE_COUNT_COLUMNS[:6], "score", "label"} <= set(hist.columns):
        msg = f"not a score_counts table with by columns {list(by)} (missing {missing or 'score/label/n/...'})"
        raise PolfairError(msg)
    return [c for c in hist.columns if c not in (*by, "score", "label", *SCORE_COUNT_COLUMNS)]


def group_histograms(
    hist: pl.DataFrame | pl.LazyFrame,
    *,
    by: str | Sequence[str] | None = None,
    intersections: int | Sequence[Sequence[str]] | None = None,
    population: bool = True,
) -> pl.DataFrame:
    """Roll a score histogram up to every attribute set, group and score.

    Parameters
    ----------
    hist
        Output of :func:`~polfair.scores.counts.score_counts` (or a merge of them).
    by
        Its ``by`` column names (every other key column is a protected attribute).
    intersections
        Largest attribute-set size, or explicit attribute sets (as in the fairness report).
    population
        Add the population rows (``attribute`` and ``group`` null).

    Returns
    -------
    pl.DataFrame
        ``*by``, ``attribute`` (String, names joined by ``" & "``), ``group`` (String, values joined
        by ``" & "``), ``score`` (Float64), ``n`` (Int64 rows), ``pos`` / ``neg`` (Float64 Σw over
        favorable / unfavorable labels), ``pos_score`` / ``neg_score`` (Σw·s), ``score_sq`` (Σw·s²),
        ``score_min``, ``score_max``, ``pos_n`` / ``neg_n`` (Int64 rows), ``pos_w2`` / ``neg_w2``
        (Σw²; null for a weighted histogram without ``weight_sq_sum``), ``pos_score_sq`` /
        ``neg_score_sq`` (Σw·s² by label); sorted by ``by``, attribute set (report order), group,
        score.

    Examples
    --------
    >>> import polfair as pf
    >>> from polfair.scores import score_counts, group_histograms
    >>> h = score_counts(pf.load_compas(), y_true="two_year_recid", y_score="decile_score", protected="sex")
    >>> g = group_histograms(h)
    >>> g.filter(attribute="sex", group="Male", score=10.0).select("n", "pos").row(0)
    (262, 214.0)
    """
    h = hist.collect() if isinstance(hist, pl.LazyFrame) else hist
    by_n = [str(b) for b in as_list(by)]
    keys = _keys_of(h, by_n)
    sets: list[tuple[str, ...]] = attribute_sets(keys, intersections) if keys else []
    lab = pl.col("label")
    if _W2 not in h.columns:  # an older histogram: Σw² is the count where the weights are 1, else unknown
        h = h.with_columns(pl.when(pl.col("weight") == pl.col("n")).then(pl.col("n").cast(pl.Float64)).alias(_W2))
    w2 = pl.col(_W2)
    # the label folded into columns once (the finest cells); every attribute set then sums these
    # plain columns on its own keys and labels its groups after the roll-up (fewer rows)
    base = (
        h.group_by([*by_n, *keys, "score"])
        .agg(
            pl.col("n").sum(),
            pl.col("weight").filter(lab).sum().alias("pos"),
            pl.col("weight").filter(~lab).sum().alias("neg"),
            pl.col("score_sum").filter(lab).sum().alias("pos_score"),
            pl.col("score_sum").filter(~lab).sum().alias("neg_score"),
            pl.col("score_sq_sum").sum().alias("score_sq"),
            pl.col("score_min").min(),
            pl.col("score_max").max(),
            pl.col("n").filter(lab).sum().alias("pos_n"),
            pl.col("n").filter(~lab).sum().alias("neg_n"),
            pl.when(w2.filter(lab).null_count() == 0).then(w2.filter(lab).sum()).alias("pos_w2"),
            pl.when(w2.filter(~lab).null_count() == 0).then(w2.filter(~lab).sum()).alias("neg_w2"),
            pl.col("score_sq_sum").filter(lab).sum().alias("pos_score_sq"),
            pl.col("score_sq_sum").filter(~lab).sum().alias("neg_score_sq"),
        )
        .lazy()
    )
    extra = ("pos_n", "neg_n", "pos_w2", "neg_w2", "pos_score_sq", "neg_score_sq")
    aggs = [
        *[pl.col(c).sum() for c in ("n", "pos", "neg", "pos_score", "neg_score", "score_sq")],
        pl.col("score_min").min(),
        pl.col("score_max").max(),
        *[pl.col(c).sum() for c in ("pos_n", "neg_n", "pos_score_sq", "neg_score_sq")],
        *[pl.when(pl.col(c).null_count() == 0).then(pl.col(c).sum()).alias(c) for c in ("pos_w2", "neg_w2")],
    ]
    parts = []
    for i, s in enumerate(sets):
        parts.append(
            base.group_by([*by_n, *s, "score"])
            .agg(aggs)
            .with_columns(
                group_label(list(s)).alias("group"), pl.lit(" & ".join(s)).alias("attribute"), pl.lit(i).alias(_SET)
            )
        )
    if population or not parts:
        parts.append(
            base.group_by([*by_n, "score"])
            .agg(aggs)
            .with_columns(
                pl.lit(None, pl.String).alias("attribute"),
                pl.lit(None, pl.String).alias("group"),
                pl.lit(-1).alias(_SET),
            )
        )
    cols = [*by_n, "attribute", "group", "score", "n", "pos", "neg", "pos_score", "neg_score", "score_sq",
            "score_min", "score_max", *extra]  # fmt: skip
    out = pl.concat([p.select(*cols, _SET) for p in parts])  # one lazy plan: the roll-ups run in parallel
    return out.sort([*by_n, _SET, "group", "score"], nulls_last=True).drop(_SET).collect()


def _gid(by: Sequence[str]) -> list[str]:
    return [*by, "attribute", "group"]


def _with_gid(gh: pl.DataFrame, by: Sequence[str]) -> pl.DataFrame:
    """Number the groups 0, 1, ... in the (sorted) order of ``gh``."""
    key = pl.struct(_gid(by))
    return gh.with_columns(key.ne_missing(key.shift(1)).fill_null(True).cum_sum().cast(pl.UInt32).alias(_GID))


def _cumulative(gh: pl.DataFrame, by: Sequence[str]) -> pl.DataFrame:
    """Per group, scores descending with cumulative TP/FP (weighted) and the group's totals."""
    return (
        _with_gid(gh, by)
        .sort([_GID, "score"], descending=[False, True])
        .with_columns(
            pl.col("pos").cum_sum().over(_GID).alias("tp"),
            pl.col("neg").cum_sum().over(_GID).alias("fp"),
            pl.col("pos").sum().over(_GID).alias("P"),
            pl.col("neg").sum().over(_GID).alias("N"),
        )
    )


@checks_keywords
def roc_curve(
    data: Any,
    *,
    y_true: IntoExpr | None = None,
    y_score: IntoExpr | None = None,
    protected: IntoExpr | Sequence[IntoExpr] | None = None,
    favorable: Any = 1,
    score_label: Any = None,
    weight: IntoExpr | None = None,
    by: IntoExpr | Sequence[IntoExpr] | None = None,
    bins: int | Sequence[float] | str | None = "exact",
    intersections: int | Sequence[Sequence[str]] | None = None,
) -> pl.DataFrame:
    """ROC curve of every group (and the population) as a tidy frame.

    Parameters
    ----------
    data
        Rows (as :func:`~polfair.scores.counts.score_counts`), or a score histogram; with a
        histogram give only ``by`` (its by-column names) and ``intersections``.
    y_true, y_score, protected, favorable, weight, by, bins, score_label
        As :func:`~polfair.scores.counts.score_counts` (``score_label``: the label the score is of,
        ``docs/contract.md#polarity``).
    intersections
        As the fairness report.

    Returns
    -------
    pl.DataFrame
        ``*by``, ``attribute``, ``group`` (String), ``threshold`` (Float64; ``inf`` for the first
        point), ``fpr``, ``tpr`` (Float64 in [0, 1]; null when the group has no negatives /
        positives), ``tp``, ``fp`` (Float64 weighted counts). One row per distinct score plus the
        ``(0, 0)`` start, thresholds descending: scikit-learn's ``roc_curve(...,
        drop_intermediate=False)`` per group.

    Examples
    --------
    >>> import polfair as pf
    >>> from polfair.scores import roc_curve
    >>> r = roc_curve(pf.load_compas(), y_true="two_year_recid", y_score="decile_score", protected="race")
    >>> r.filter(attribute="race", group="Caucasian").select("threshold", "fpr", "tpr").head(2).rows()
    [(inf, 0.0, 0.0), (10.0, 0.0117096018735363, 0.04257907542579075)]
    """
    hist, by_n = _histogram(data, dict(y_true=y_true, y_score=y_score, protected=protected, favorable=favorable,
                                       weight=weight, by=by, bins=bins, score_label=score_label))  # fmt: skip
    c = _cumulative(group_histograms(hist, by=by_n, intersections=intersections), by_n)
    start = (
        c.group_by(_GID, maintain_order=True)
        .first()
        .with_columns(pl.lit(float("inf")).alias("score"), pl.lit(0.0).alias("tp"), pl.lit(0.0).alias("fp"))
    )
    cols = [*_gid(by_n), _GID, "score", "tp", "fp", "P", "N"]
    out = pl.concat([start.select(cols), c.select(cols)]).sort([_GID, "score"], descending=[False, True])
    return out.select(
        *_gid(by_n),
        pl.col("score").alias("threshold"),
        (pl.col("fp") / pl.when(pl.col("N") > 0).then(pl.col("N"))).alias("fpr"),
        (pl.col("tp") / pl.when(pl.col("P") > 0).then(pl.col("P"))).alias("tpr"),
        "tp",
        "fp",
    )


class HistogramRows(TypedDict, total=False):
    """The keywords of :func:`roc_curve` that every score door takes besides its roles (each with its default there)."""

    favorable: Any
    score_label: Any
    weight: IntoExpr | None
    by: IntoExpr | Sequence[IntoExpr] | None
    bins: int | Sequence[float] | str | None
    intersections: int | Sequence[Sequence[str]] | None


class CurveRows(HistogramRows, total=False):
    """The rows (or a histogram) of a curve: the keywords of :func:`roc_curve`, as the other curves take them."""

    y_true: IntoExpr | None
    y_score: IntoExpr | None
    protected: IntoExpr | Sequence[IntoExpr] | None


def pass_rows(rows: Mapping[str, Any]) -> dict[str, Any]:
    """The keywords of :func:`~polfair.scores.counts.score_counts` in a score door's ``rows``
    (:class:`HistogramRows` and the roles; :func:`roc_curve`'s defaults for the roles not given).
    """
    return {"y_true": None, "protected": None} | {k: v for k, v in rows.items() if k != "intersections"}


@keywords_of(roc_curve)
def precision_recall_curve(data: Any, **rows: Unpack[CurveRows]) -> pl.DataFrame:
    """Precision–recall curve of every group (and the population) as a tidy frame.

    Parameters are those of :func:`roc_curve`.

    Returns
    -------
    pl.DataFrame
        ``*by``, ``attribute``, ``group``, ``threshold`` (Float64, descending), ``precision`` =
        TP / (TP + FP), ``recall`` = TP / P (Float64; null on a zero denominator). One row per
        distinct score: scikit-learn's ``precision_recall_curve`` points (without its final
        ``(recall 0, precision 1)`` point).

    Examples
    --------
    >>> import polfair as pf
    >>> from polfair.scores import precision_recall_curve
    >>> pr = precision_recall_curve(pf.load_compas(), y_true="two_year_recid", y_score="decile_score", protected="sex")
    >>> pr.filter(attribute="sex", group="Male").select("threshold", "precision").head(1).rows()
    [(10.0, 0.816793893129771)]
    """
    hist, by_n = _histogram(data, rows)
    c = _cumulative(group_histograms(hist, by=by_n, intersections=rows.get("intersections")), by_n)
    den = pl.col("tp") + pl.col("fp")
    return c.select(
        *_gid(by_n),
        pl.col("score").alias("threshold"),
        (pl.col("tp") / pl.when(den > 0).then(den)).alias("precision"),
        (pl.col("tp") / pl.when(pl.col("P") > 0).then(pl.col("P"))).alias("recall"),
    )


def _calibration_bin(n_bins: int) -> pl.Expr:
    edges = np.linspace(0.0, 1.0, n_bins + 1)[1:-1]  # scikit-learn's edges, bit for bit
    v = pl.col("score_max")
    out = pl.lit(0, pl.Int64)
    for e in edges:
        out = out + (v > float(e)).cast(pl.Int64)
    return out


def _reliability(gh: pl.DataFrame, by: Sequence[str], n_bins: int) -> pl.DataFrame:
    b = _calibration_bin(n_bins)
    w = pl.col("pos") + pl.col("neg")
    return (
        _with_gid(gh, by)
        .with_columns(b.alias("bin"))
        .group_by([_GID, *_gid(by), "bin"])
        .agg(
            pl.col("n").sum(),
            w.sum().alias("weight"),
            (pl.col("pos_score") + pl.col("neg_score")).sum().alias("ws"),
            pl.col("pos").sum(),
        )
        .sort([_GID, "bin"])
    )


@keywords_of(roc_curve)
def reliability_curve(data: Any, *, calibration_bins: int = 10, **rows: Unpack[CurveRows]) -> pl.DataFrame:
    """Reliability (calibration) curve of every group: mean score vs fraction favorable per bin.

    Parameters
    ----------
    data, y_true, y_score, protected, favorable, score_label, weight, by, bins, intersections
        As :func:`roc_curve`.
    calibration_bins
        Number of equal-width bins on [0, 1] (scikit-learn's ``n_bins``, default 10). With a binned
        histogram, its bins should nest in these (e.g. ``bins=100``); a histogram bin is assigned by
        its largest score.

    Returns
    -------
    pl.DataFrame
        ``*by``, ``attribute``, ``group``, ``bin`` (Int64, 0-based), ``bin_lower``, ``bin_upper``
        (Float64 edges), ``n`` (Int64), ``weight`` (Float64 Σw), ``mean_predicted`` (Float64, Σw·s /
        Σw), ``fraction_positive`` (Float64, Σw·y / Σw). Empty bins are left out, as scikit-learn's
        ``calibration_curve(y, s, n_bins=calibration_bins)`` does (its ``prob_pred`` and
        ``prob_true``).

    Raises
    ------
    InvalidInputError
        If a score is outside [0, 1].

    Examples
    --------
    >>> import polars as pl
    >>> import polfair as pf
    >>> from polfair.scores import reliability_curve
    >>> df = pf.load_compas().with_columns(p=pl.col("decile_score") / 10)
    >>> rc = reliability_curve(df, y_true="two_year_recid", y_score="p", protected="race")
    >>> first = rc.filter(attribute="race", group="Caucasian", bin=0)
    >>> first.select(pl.col("mean_predicted", "fraction_positive").round(4)).row(0)
    (0.1, 0.2116)
    """
    hist, by_n = _histogram(data, rows)
    if (
        _check_calibration_bins(calibration_bins)
        and hist.height
        and (
            hist["score_min"].min() < 0 or hist["score_max"].max() > 1  # type: ignore[operator]
        )
    ):
        msg = "reliability_curve needs scores in [0, 1] (probabilities); rescale y_score, e.g. pl.col('decile') / 10"
        raise InvalidInputError(msg)
    r = _reliability(group_histograms(hist, by=by_n, intersections=rows.get("intersections")), by_n, calibration_bins)
    edges = np.linspace(0.0, 1.0, calibration_bins + 1).tolist()
    lo = pl.Series(edges[:-1])
    hi = pl.Series(edges[1:])
    return r.select(
        *_gid(by_n), "bin",
        pl.col("bin").map_elements(lambda i: lo[i], return_dtype=pl.Float64).alias("bin_lower"),
        pl.col("bin").map_elements(lambda i: hi[i], return_dtype=pl.Float64).alias("bin_upper"),
        "n", "weight",
        (pl.col("ws") / pl.col("weight")).alias("mean_predicted"),
        (pl.col("pos") / pl.col("weight")).alias("fraction_positive"),
    ).filter(pl.col("weight") > 0)  # fmt: skip


def _check_calibration_bins(n: Any) -> bool:
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        msg = f"calibration_bins must be an int >= 1, got {n!r}"
        raise PolfairError(msg)
    return True


def _histogram(data: Any, rows: Mapping[str, Any]) -> tuple[pl.DataFrame, list[str]]:
    """Rows -> histogram of a curve's ``rows`` (:class:`CurveRows`), or a histogram as is (when ``y_score`` is None)."""
    by = rows.get("by")
    if rows.get("y_score") is None:
        h = data.collect() if isinstance(data, pl.LazyFrame) else data
        if not isinstance(h, pl.DataFrame):
            msg = "give y_score= (and y_true=, protected=) for rows, or pass a score_counts table"
            raise PolfairError(msg)
        by_n = [str(b) for b in as_list(by)]
        _keys_of(h, by_n)
        return h, by_n
    # the curves are free of the weights' scale: weights beyond 1e±150 in a power-of-two unit
    h = score_counts(data, **pass_rows(rows), relative=True)
    by_n = [c for c in h.columns[: len(as_list(by))]]
    return h, by_n


def area_between_roc_curves(f1: np.ndarray, t1: np.ndarray, f2: np.ndarray, t2: np.ndarray) -> float:
    """Exact ∫₀¹ |TPR₁(f) − TPR₂(f)| df between two piecewise-linear ROC curves (ABROCA).

    Parameters
    ----------
    f1, t1
        FPR and TPR of the first curve's points, FPR non-decreasing (vertical steps allowed), from
        (0, 0) to (1, 1).
    f2, t2
        The second curve.

    Returns
    -------
    float
        The area, in [0, 1]: each linear piece is integrated exactly, including the crossing of
        the two curves inside a piece (two triangles).

    Examples
    --------
    >>> import numpy as np
    >>> diagonal = (np.array([0, 1.0]), np.array([0, 1.0]))
    >>> area_between_roc_curves(np.array([0, 0.5, 1.0]), np.array([0, 0.75, 1.0]), *diagonal)
    0.125
    """
    f1, t1, f2, t2 = (np.asarray(a, dtype=np.float64) for a in (f1, t1, f2, t2))
    grid = np.union1d(f1, f2)
    grid = grid[(grid >= 0) & (grid <= 1)]

    a, b = grid[:-1], grid[1:]

    def ends(f: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        # the curve's linear piece over (a, b): it starts at the highest TPR at its left FPR (after
        # a vertical jump) and ends at the lowest TPR at its right FPR (before the next jump)
        uf, first = np.unique(f, return_index=True)
        last = np.r_[first[1:] - 1, len(f) - 1]
        k = np.clip(np.searchsorted(uf, a, side="right") - 1, 0, len(uf) - 2)
        x0, x1, y0, y1 = uf[k], uf[k + 1], t[last[k]], t[first[k + 1]]
        slope = (y1 - y0) / (x1 - x0)
        return y0 + (a - x0) * slope, y0 + (b - x0) * slope

    s1, e1 = ends(f1, t1)
    s2, e2 = ends(f2, t2)
    d0 = s1 - s2  # difference just right of each grid point
    d1 = e1 - e2  # difference just left of the next grid point
    dx = np.diff(grid)
    same = d0 * d1 >= 0
    a0, a1 = np.abs(d0), np.abs(d1)
    with np.errstate(invalid="ignore", divide="ignore"):
        cross = np.where(a0 + a1 > 0, (d0 * d0 + d1 * d1) / (2 * (a0 + a1)), 0.0)
    area = np.where(same, (a0 + a1) / 2, cross) * dx
    return float(area.sum())


def _privileged_label(attrs: Sequence[str], privileged: Mapping[str, Any] | None) -> str | None:
    if not privileged:
        return None
    vals = []
    for a in attrs:
        if a not in privileged or len(as_values(privileged[a])) != 1:
            return None
        vals.append(value_label(as_values(privileged[a])[0]))
    return " & ".join(vals)


def reference_groups(
    groups: pl.DataFrame,
    *,
    by: Sequence[str] = (),
    privileged: Mapping[str, Any] | None = None,
    size: str = "n",
    reference: Literal["privileged", "largest"] | None = None,
    rows: str = "n",
    min_sample_size: int | None = None,
) -> pl.DataFrame:
    """The reference group of every (``by`` value, attribute set): privileged if given, else the largest.

    The choice and the small-group policy are :mod:`polfair.core.reference`'s (one
    implementation for every report): the largest group is the largest among the groups with at
    least ``min_sample_size`` input rows; a privileged group below it warns.

    Parameters
    ----------
    groups
        One row per group with ``*by``, ``attribute``, ``group`` and the ``size`` column (rows with
        a null ``attribute``, the population, are ignored).
    by
        The ``by`` column names.
    privileged
        ``{attribute: value}``; an attribute set whose attributes all have one privileged value
        takes that group (``None`` when no row is in it, as the report's: its comparisons are null;
        :func:`warn_absent_privileged_scores` says so).
    size
        Column ranking the groups otherwise (the largest first; ties: the first in order).
    reference
        ``None`` (privileged where it names a group of the set, else the largest), ``"privileged"``
        (the same; ``privileged`` is required) or ``"largest"`` (the largest, ``privileged`` ignored).
    rows
        Column of input rows (the small-group policy's size); absent from ``groups``: no minimum.
    min_sample_size
        Rows a group needs to be chosen as the largest (``None``: 30; ``0``: no minimum).

    Returns
    -------
    pl.DataFrame
        ``*by``, ``attribute`` (String), ``reference_group`` (String), one row per attribute set.

    Raises
    ------
    PolfairError
        ``reference`` is not ``None``, ``"privileged"`` or ``"largest"``, or ``"privileged"``
        without ``privileged``.

    Examples
    --------
    >>> import polars as pl
    >>> g = pl.DataFrame({"attribute": ["sex", "sex"], "group": ["f", "m"], "n": [30, 50]})
    >>> reference_groups(g).rows(), reference_groups(g, privileged={"sex": "f"}).rows()
    ([('sex', 'm')], [('sex', 'f')])
    >>> reference_groups(g, privileged={"sex": "x"}).rows()  # in no row: null, as the report's (a warning there)
    [('sex', None)]
    """
    check_score_reference(reference, privileged)
    by_n = list(by)
    fam = [*by_n, "attribute"]
    known = groups.filter(pl.col("attribute").is_not_null()).with_row_index("__pf_o")
    min_n = resolve_min_sample_size(min_sample_size) if rows in known.columns else 0
    names = known.get_column("attribute").cast(pl.String).unique(maintain_order=True).to_list()
    labels = {a: _privileged_label(a.split(" & "), privileged if reference != "largest" else None) for a in names}
    named_label = pl.col("attribute").cast(pl.String).replace_strict(labels, default=None, return_dtype=pl.String)
    is_priv = pl.col("group").cast(pl.String) == named_label
    known = known.with_columns(is_priv.fill_null(False).alias("__pf_p"), named_label.is_not_null().alias("__pf_named"))
    known = known.with_columns(pl.col("__pf_p").any().over(fam).alias("__pf_has"))
    # the largest among the sets without a privileged value; a group whose every row is missing (null size)
    # is never the largest
    pool = known.filter(~pl.col("__pf_named") & pl.col(size).is_not_null())
    largest = largest_reference(pool, fam, order="__pf_o", weight=size,
                                size=rows if min_n else size, min_sample_size=min_n).collect()  # fmt: skip
    chosen = known.filter(pl.col("__pf_p") | pl.col("__pf_o").is_in(largest.get_column("__pf_o").implode()))
    named = chosen.filter(pl.col("__pf_p"))
    if min_n:
        warn_small_reference(named, label="group", size=rows, min_sample_size=min_n, stacklevel=5)
    chosen = chosen.sort("__pf_o").unique(fam, keep="first", maintain_order=True)
    # a privileged value in no row of its set: a null reference, as in the report (warned by the caller)
    absent = (known.filter(pl.col("__pf_named") & ~pl.col("__pf_has")).group_by(fam, maintain_order=True)
              .agg(pl.col("__pf_o").min(), pl.lit(None, pl.String).alias("group")))  # fmt: skip
    schema: dict[str, Any] = {**{b: groups.schema[b] for b in by_n}, "attribute": pl.String, "reference_group": pl.String}
    cols = [*by_n, "attribute", "__pf_o", "group"]
    both = pl.concat([chosen.select(cols).with_columns(pl.col("group").cast(pl.String)),
                      absent.select(cols)], how="diagonal_relaxed").sort("__pf_o")  # fmt: skip
    return both.select(*by_n, pl.col("attribute").cast(pl.String), pl.col("group").cast(pl.String)
                       .alias("reference_group")).cast(schema)  # type: ignore[arg-type]  # fmt: skip


def check_score_reference(reference: Any, privileged: Mapping[str, Any] | None) -> None:
    """Validate a score report's ``reference``: ``None``, ``"privileged"`` (with ``privileged``) or ``"largest"``.

    Examples
    --------
    >>> check_score_reference("largest", None)
    """
    if reference not in (None, "privileged", "largest"):
        msg = (
            f"reference must be None, 'privileged' or 'largest' for score reports, got {reference!r} "
            "('best' and 'overall' compare rates: use fairness_report)"
        )
        raise PolfairError(msg)
    if reference == "privileged" and not privileged:
        msg = "reference='privileged' needs privileged={attribute: value} (the group to compare with)"
        raise PolfairError(msg)


def split_missing(hist: pl.DataFrame | pl.LazyFrame, *, what: str = "label, score or weight"
                  ) -> tuple[pl.DataFrame, pl.DataFrame]:  # fmt: skip
    """``(missing, scored)``: the rows ``score_counts(with_missing=True)`` adds for rows with a missing
    label, score or weight (``score`` and ``label`` null), and the others.

    Raises
    ------
    InvalidInputError
        No scored row: every row missing (named with its count), or no row at all.
    """
    h = hist.collect() if isinstance(hist, pl.LazyFrame) else hist
    gone = pl.col("score").is_null() & pl.col("label").is_null()
    miss, h = h.filter(gone), h.filter(~gone)
    if not h.height:
        n_miss = int(miss["n"].sum() or 0)
        check_counted(n_miss, n_miss, what=what)
    return miss, h


def warn_absent_privileged_scores(hist: pl.DataFrame, by: Sequence[str], privileged: Mapping[str, Any] | None) -> None:
    """The report's warning (:func:`polfair.core.report.build.warn_absent_privileged`) for a score
    histogram: each ``privileged`` value found in no row of its protected column.
    """
    if not privileged:
        return
    keys = [c for c in hist.columns[: hist.columns.index("score")] if c not in by]
    typed = {a: coerce_values(as_values(v), hist.schema[a], option="privileged", column=a)
             for a, v in privileged.items() if a in keys}  # fmt: skip
    warn_absent_privileged(hist.lazy(), hist.schema, typed)


class ScoreRows(HistogramRows, total=False):
    """The rows of a score report or sweep: the keywords of :func:`roc_curve`, ``y_true`` and ``y_score`` required."""

    y_true: Required[IntoExpr]
    y_score: Required[IntoExpr]
    protected: IntoExpr | Sequence[IntoExpr] | None


@keywords_of(roc_curve)
def score_report(
    data: Any,
    *,
    privileged: Mapping[str, Any] | None = None,
    calibration_bins: int = 10,
    ci: float | None = 0.95,
    n_boot: int = 200,
    seed: int = 0,
    p_adjust: Literal["bh", "by", "holm"] | None = "bh",
    protected_proba: Mapping[str, Mapping[str, IntoExpr | None]] | None = None,
    proba_assignment: Literal["weighted", "argmax"] = "weighted",
    proba_tolerance: float = DEFAULT_TOLERANCE,
    reference: Literal["privileged", "largest"] | None = None,
    min_sample_size: int | None = None,
    on_missing: Literal["warn", "raise", "ignore"] = "warn",
    **rows: Unpack[ScoreRows],
) -> pl.DataFrame:
    """Score-based fairness report: ROC AUC, AP, Brier, ECE and ABROCA by group, with intervals, from one pass.

    Parameters
    ----------
    data
        Rows: polars/pandas/pyarrow frame, dict or parquet/CSV path.
    y_true
        Label column or expression; ``favorable`` is its favorable value(s) (default ``1``).
    y_score
        Numeric score (probabilities for Brier/ECE; any real score for AUC/AP/ABROCA).
    protected
        Protected attribute(s), names or named expressions.
    favorable
        Favorable label value(s).
    score_label
        The label the score is the score of (``docs/contract.md#polarity``): by default the
        favorable label where that is unambiguous, else a
        :class:`~polfair.exceptions.PolarityError`; it must be a favorable value (the report is
        about the favorable label's score), as :func:`~polfair.scores.counts.score_counts`.
    weight
        Optional non-negative weights.
    by
        Optional column(s): one report per value, same pass.
    bins
        ``"exact"`` (default; every value exact), an int of equal-width bins on [0, 1], or edges.
    intersections
        Largest attribute-set size or explicit attribute sets (default: all intersections).
    privileged
        ``{attribute: value}``: the reference group of each attribute set whose attributes all
        have one privileged value (else the largest group by weight), as :func:`polfair.fairness_report`.
    reference
        As :func:`polfair.fairness_report`: ``None`` (privileged where given, else the largest group
        by weight), ``"privileged"`` (requires ``privileged``) or ``"largest"``. ``"best"`` and
        ``"overall"`` compare rates and are the classification report's (a
        :class:`~polfair.exceptions.PolfairError` here).
    min_sample_size
        The small-group policy (``docs/status.md``): input rows a group needs to be the comparison
        group; the largest group is chosen among those that meet it, a privileged group below it
        warns (:class:`~polfair.exceptions.ReferenceWarning`). ``None``: 30 rows; ``0``: no minimum.
    calibration_bins
        Number of equal-width bins on [0, 1] of the ECE (default 10).
    ci
        Confidence level in (0, 1), default 0.95: adds ``value_lo, value_hi, difference_lo,
        difference_hi, p_value, p_value_adjusted, n_eff`` (Float64) and ``ci_method, test``
        (Categorical) after ``n``. ``roc_auc``: DeLong on the binned scores (ties in a bin are ties;
        ``delong``), widened in small groups and at the boundary to Newcombe's (2006) score interval
        (``newcombe_score``; never 0 wide at perfect separation), MOVER difference, its p-value
        floored at the exact rank bound ``2 / C(m + n, m)`` of the group's rows;
        ``average_precision``: Boyd et al.'s logit interval (Wilson at 0 or 1), MOVER difference
        (``logit`` / ``score``); ``brier_score``: t interval (widened to Wilson's below 100 rows),
        Welch test (``t`` / ``score``, ``welch``); ``abroca``:
        stratified bootstrap percentiles (``bootstrap_percentile``); attribute rows: the spread's
        interval (two groups: the pair's; more: Šidák projection) and Cochran's Q (AUC) or Welch's
        ANOVA (Brier). ECE has none. Details: :mod:`polfair.scores._uncertainty`. ``None``: no
        interval columns.
    n_boot, seed
        Bootstrap replicates of the ABROCA intervals (int >= 2, default 200) and their seed (same
        input and seed, same numbers).
    p_adjust
        ``"bh"`` (default), ``"by"``, ``"holm"`` or ``None``: ``p_value_adjusted`` within each
        (``by`` value, metric) family of group rows (and of attribute rows).
    protected_proba, proba_assignment, proba_tolerance
        A protected attribute estimated from proxies (BISG), as in
        :func:`~polfair.scores.counts.score_counts`: each group's AUC, AP, Brier score and ECE are
        those of the rows weighted by their membership probabilities (the weighted estimator), or
        of the rows assigned to their likeliest group (``"argmax"``); intervals use Kish sizes
        ``(Σ w·p)² / Σ w²·p`` and cover sampling noise only (``docs/proxy-groups.md``).
    on_missing
        Rows with a missing label, prediction, score or weight: ``"warn"`` (default), ``"raise"`` or
        ``"ignore"``, as in :func:`polfair.fairness_report`.

    Returns
    -------
    pl.DataFrame
        The fairness report's key columns and dtypes: ``*by``, ``attribute`` (Categorical; null on
        population rows), ``group`` (String; null on attribute-level and population rows),
        ``metric`` (Categorical, in :data:`SCORE_METRICS` order), ``value`` (Float64),
        ``reference_group`` (Categorical), ``difference`` (Float64: on group rows value − reference value (null for
        ``abroca``); on attribute rows max − min over groups), ``n`` (Int64 rows).
        On attribute rows ``value`` is null except ``abroca`` (the largest ABROCA of a group vs the
        reference). Values are null where undefined (AUC of a group without positives or
        negatives; Brier/ECE of scores outside [0, 1]). With ``ci``, the interval columns follow
        ``n`` (see ``ci``); they are null where undefined, on the reference group's own
        comparison and on ``expected_calibration_error``.

    Raises
    ------
    ColumnNotFoundError, InvalidInputError, PolarityError, PolfairError
        As :func:`~polfair.scores.counts.score_counts`.

    Warns
    -----
    PolarityWarning
        The score's mean is clearly lower on favorable than on unfavorable labels (an ROC AUC below
        0.5): it looks inverted relative to ``favorable`` (:func:`~polfair.scores.counts.score_counts`).

    Notes
    -----
    ``roc_auc`` equals scikit-learn's ``roc_auc_score`` per group (``bins="exact"``),
    ``average_precision`` its ``average_precision_score``, ``brier_score`` its
    ``brier_score_loss``; see the module docstring for the formulas and sources.

    Examples
    --------
    >>> import polfair as pf
    >>> from polfair.scores import score_report
    >>> rep = score_report(pf.load_compas(), y_true="two_year_recid", y_score="decile_score",
    ...                    protected=["race", "sex"], privileged={"race": "Caucasian"})
    >>> rep.filter(attribute="race", group="African-American", metric="roc_auc").select("value", "difference").row(0)
    (0.7042527817830293, 0.011490227437370937)
    """
    h = score_counts(
        data, **pass_rows(rows), protected_proba=protected_proba, proba_assignment=proba_assignment,
        proba_tolerance=proba_tolerance, with_missing=True, relative=True, on_missing=on_missing,
    )  # fmt: skip
    by_n = h.columns[: len(as_list(rows.get("by")))]
    return score_report_from_counts(
        h, by=by_n, intersections=rows.get("intersections"), privileged=privileged, calibration_bins=calibration_bins, ci=ci,
        n_boot=n_boot, seed=seed, p_adjust=p_adjust, reference=reference, min_sample_size=min_sample_size,
    )  # fmt: skip


class ScoreKnobs(TypedDict, total=False):
    """The report's keywords of :func:`score_report` that :func:`score_report_from_counts` takes (its defaults)."""

    privileged: Mapping[str, Any] | None
    calibration_bins: int
    ci: float | None
    n_boot: int
    seed: int
    p_adjust: Literal["bh", "by", "holm"] | None
    reference: Literal["privileged", "largest"] | None
    min_sample_size: int | None


@keywords_of(score_report)
def score_report_from_counts(
    hist: pl.DataFrame | pl.LazyFrame,
    *,
    by: str | Sequence[str] | None = None,
    intersections: int | Sequence[Sequence[str]] | None = None,
    **knobs: Unpack[ScoreKnobs],
) -> pl.DataFrame:
    """The score report (:func:`score_report`) from a (merged) score histogram.

    Parameters
    ----------
    hist
        Output of :func:`~polfair.scores.counts.score_counts` / ``merge_score_counts``.
    by
        Its ``by`` column names.
    intersections, privileged, calibration_bins, ci, n_boot, seed, p_adjust, reference, min_sample_size
        As :func:`score_report`.

    Returns
    -------
    pl.DataFrame
        As :func:`score_report`.

    Raises
    ------
    PolfairError
        Not a score histogram; bad ``calibration_bins``, ``ci``, ``n_boot``, ``seed`` or ``p_adjust``.

    Examples
    --------
    >>> import polars as pl
    >>> import polfair as pf
    >>> from polfair.scores import score_counts, score_report_from_counts
    >>> h = score_counts(pf.load_compas(), y_true="two_year_recid", y_score="decile_score", protected="sex")
    >>> r = score_report_from_counts(h)
    >>> r.filter(pl.col("attribute").is_null(), metric="roc_auc").select(pl.col("value", "value_lo").round(4)).row(0)
    (0.7098, 0.697)
    """
    options = inspect.signature(score_report).bind_partial(**knobs)  # with score_report's defaults
    options.apply_defaults()
    privileged, calibration_bins, ci, n_boot, seed, p_adjust, reference, min_sample_size = (
        options.arguments[k] for k in ScoreKnobs.__annotations__)
    _check_calibration_bins(calibration_bins)
    check_score_reference(reference, privileged)
    min_n = resolve_min_sample_size(min_sample_size)
    level = iv.check_ci(ci)
    n_boot = iv.check_n_boot(n_boot)
    adjust = iv.check_p_adjust(p_adjust)
    if isinstance(seed, bool) or not isinstance(seed, int):
        msg = f"seed must be an int, got {seed!r}"
        raise PolfairError(msg)
    h = hist.collect() if isinstance(hist, pl.LazyFrame) else hist
    by_n = [str(b) for b in as_list(by)]
    _keys_of(h, by_n)
    warn_absent_privileged_scores(h, by_n, privileged)
    miss, h = split_missing(h)  # score_counts(with_missing=True)'s rows
    gh = group_histograms(h, by=by_n, intersections=intersections)
    c = _cumulative(gh, by_n)
    tp_prev = pl.col("tp").shift(1, fill_value=0.0).over(_GID)
    fp_prev = pl.col("fp").shift(1, fill_value=0.0).over(_GID)
    P, N = pl.col("P").first(), pl.col("N").first()
    W = P + N
    prec = pl.col("tp") / (pl.col("tp") + pl.col("fp"))
    in01 = (pl.col("score_min").min() >= 0) & (pl.col("score_max").max() <= 1)
    auc = (
        pl.when((P > 0) & (N > 0))
        .then(((pl.col("fp") - pl.col("fp_prev")) * (pl.col("tp") + pl.col("tp_prev"))).sum() / 2 / (P * N))
    )
    per = (
        c.with_columns(tp_prev.alias("tp_prev"), fp_prev.alias("fp_prev"))
        .group_by([_GID, *_gid(by_n)], maintain_order=True)
        .agg(
            pl.col("n").sum(),
            W.alias("__pf_W"),
            auc.alias("roc_auc"),
            pl.when(P > 0)
            .then(((pl.col("tp") - pl.col("tp_prev")) * prec.fill_nan(0.0)).sum() / P)
            .alias("average_precision"),
            pl.when(in01 & (W > 0))
            .then((pl.col("score_sq").sum() - 2 * pl.col("pos_score").sum() + P) / W)
            .alias("brier_score"),
            *(auc_variance_expr(P, N, auc) if level is not None else []),
        )
    )
    per = _with_missing(per, miss, by_n, intersections)
    rel = _reliability(gh, by_n, calibration_bins)
    ece = rel.group_by(_GID).agg(
        ((pl.col("ws") - pl.col("pos")).abs().sum() / pl.col("weight").sum()).alias("__pf_ece")
    )
    per = per.join(ece, on=_GID, how="left").with_columns(
        pl.when(pl.col("brier_score").is_not_null()).then(pl.col("__pf_ece")).alias("expected_calibration_error")
    )
    refs = reference_groups(per, by=by_n, privileged=privileged, size="__pf_W", reference=reference,
                            min_sample_size=min_n)  # fmt: skip
    ref_rows = refs.to_dicts()
    abro = _abroca(c, by_n, ref_rows)
    per = per.join(abro, on=_GID, how="left")
    metrics = ["n_missing", *SCORE_METRICS]
    long = per.unpivot(index=[_GID, *_gid(by_n), "n"], on=metrics, variable_name="metric", value_name="value")
    ref_vals = long.join(
        refs, left_on=[*by_n, "attribute", "group"], right_on=[*by_n, "attribute", "reference_group"], nulls_equal=True
    ).select(*by_n, "attribute", "metric", pl.col("value").alias("__pf_ref"))
    grp = (
        long.filter(pl.col("attribute").is_not_null())
        .join(refs, on=[*by_n, "attribute"], how="left", nulls_equal=True)
        .join(ref_vals, on=[*by_n, "attribute", "metric"], how="left", nulls_equal=True)
        .with_columns(
            pl.when(~pl.col("metric").is_in(["abroca", "n_missing"])).then(pl.col("value") - pl.col("__pf_ref"))
            .alias("difference")
        )
    )
    spread = pl.when(pl.col("value").null_count() == 0).then(pl.col("value").max() - pl.col("value").min())
    att = (
        grp.filter(pl.col("metric") != "n_missing").group_by([*by_n, "attribute", "metric"], maintain_order=True)
        .agg(
            pl.when(pl.col("metric").first() == "abroca").then(pl.col("value").max()).alias("value"),
            pl.col("reference_group").first(),
            spread.alias("difference"),
            pl.col("n").sum(),
            pl.col(_GID).min(),
        )
        .with_columns(pl.lit(None, pl.String).alias("group"))
    )
    pop = long.filter(pl.col("attribute").is_null() & (pl.col("metric") != "abroca")).with_columns(
        pl.lit(None, pl.String).alias("reference_group"), pl.lit(None, pl.Float64).alias("difference")
    )
    cols = [*by_n, "attribute", "group", "metric", "value", "reference_group", "difference", "n"]
    ci_cols: list[str] = []
    if level is not None:
        grp, att, pop = _with_intervals(per, c, refs, grp, att, pop, by_n, level, n_boot, seed, adjust)
        ci_cols = [*SCORE_CI_FLOATS, "ci_method", "test"]
    order = {m: i for i, m in enumerate(metrics)}
    att = att.with_columns((pl.col(_GID) - 0.5).alias(_GID))  # attribute rows before their groups
    typed = [pl.col(c).cast(pl.Float64 if c in SCORE_CI_FLOATS else pl.String) for c in ci_cols]
    out = pl.concat([x.select(*cols, *typed, pl.col(_GID).cast(pl.Float64)) for x in (grp, att, pop)])
    return (
        out.with_columns(pl.col("metric").replace_strict(order, return_dtype=pl.Int64).alias("__pf_m"))
        .sort([*by_n, _GID, "__pf_m"], nulls_last=True)
        .select(*cols[:-1], pl.col("n").cast(pl.Int64), *ci_cols)
        .with_columns(pl.col("attribute", "metric", "reference_group", *ci_cols[-2:]).cast(pl.Categorical))  # as the report
    )


def _with_missing(
    per: pl.DataFrame, miss: pl.DataFrame, by_n: list[str], intersections: int | Sequence[Sequence[str]] | None
) -> pl.DataFrame:
    """``n`` counting every input row of a group (missing ones included, as the input contract says)
    and ``n_missing`` (Float64, the report's value column), from ``score_counts(with_missing=True)``'s
    rows; 0 for a histogram without them.
    """
    if not miss.height:
        return per.with_columns(pl.lit(0.0).alias("n_missing"))
    gm = group_histograms(miss.with_columns(pl.lit(0.0).alias("score")), by=by_n, intersections=intersections)
    gm = gm.group_by(_gid(by_n), maintain_order=True).agg(pl.col("n").sum().alias("__pf_nm"))
    # a group whose every row is missing keeps its rows (n, n_missing, null metrics), numbered after the others
    only = gm.join(per.select(_gid(by_n)), on=_gid(by_n), how="anti", nulls_equal=True)
    if only.height:
        start = int(per[_GID].max() or 0) + 1  # type: ignore[arg-type]
        extra = only.select(_gid(by_n)).with_row_index(_GID, offset=start).with_columns(
            pl.col(_GID).cast(per.schema[_GID]), pl.lit(0, per.schema["n"]).alias("n"))  # fmt: skip
        per = pl.concat([per, extra], how="diagonal_relaxed")
    return (
        per.join(gm, on=_gid(by_n), how="left", nulls_equal=True, maintain_order="left")
        .with_columns(pl.col("__pf_nm").fill_null(0))
        .with_columns((pl.col("n") + pl.col("__pf_nm")).alias("n"), pl.col("__pf_nm").cast(pl.Float64).alias("n_missing"))
        .drop("__pf_nm")
    )


def _with_intervals(
    per: pl.DataFrame,
    c: pl.DataFrame,
    refs: pl.DataFrame,
    grp: pl.DataFrame,
    att: pl.DataFrame,
    pop: pl.DataFrame,
    by_n: list[str],
    level: float,
    n_boot: int,
    seed: int,
    adjust: str | None,
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """The score report's interval and test columns (:mod:`polfair.scores._uncertainty`) joined on."""
    # positions 0..G-1 (_with_gid numbers the groups 1..G in order); a group whose every row is missing
    # (numbered after them, _with_missing) has no scores: null intervals
    per = per.filter(pl.col(_GID).is_in(c[_GID].unique().implode()))
    offset = int(per[_GID].min() or 0)  # type: ignore[arg-type]
    per = per.sort(_GID).with_columns((pl.col(_GID) - offset).alias(_GID))
    c = c.with_columns((pl.col(_GID) - offset).alias(_GID))
    grp, att, pop = (x.with_columns((pl.col(_GID) - offset).alias(_GID)) for x in (grp, att, pop))
    keyed = per.select(_GID, *by_n, "attribute", "group").join(
        refs, on=[*by_n, "attribute"], how="left", nulls_equal=True, maintain_order="left"
    )
    ref_of = keyed.join(
        per.select(pl.col(_GID).alias("__pf_rg"), *by_n, "attribute", pl.col("group").alias("reference_group")),
        on=[*by_n, "attribute", "reference_group"], how="left", nulls_equal=True, maintain_order="left",
    )  # fmt: skip
    ref_gid = ref_of["__pf_rg"].fill_null(-1).cast(pl.Int64).to_numpy()
    families = []
    for key, part in keyed.filter(pl.col("attribute").is_not_null()).group_by([*by_n, "attribute"], maintain_order=True):
        gids = [int(g) for g in part[_GID].to_list()]
        r = int(ref_gid[gids[0]])
        families.append((tuple(key), gids, r if r >= 0 else None))
    long, attr = score_intervals(per, c, ref_gid, families, ci=level, n_boot=n_boot, seed=seed)
    long = long.with_columns(pl.col("__pf_gid").cast(per.schema[_GID]))
    grp = grp.join(long.rename({"__pf_gid": _GID}), on=[_GID, "metric"], how="left", maintain_order="left")
    pop = pop.join(long.rename({"__pf_gid": _GID}), on=[_GID, "metric"], how="left", maintain_order="left")
    pop = pop.with_columns(*[pl.lit(None, pl.Float64).alias(k) for k in ("difference_lo", "difference_hi", "p_value")],
                           pl.lit(None, pl.String).alias("test"))  # fmt: skip
    rows = []
    for key, fam in attr.items():
        for metric, v in fam.items():
            rows.append({**dict(zip([*by_n, "attribute"], key)), "metric": metric, **{
                k: v.get(k) for k in ("value_lo", "value_hi", "difference_lo", "difference_hi", "p_value", "ci_method", "test")
            }})  # fmt: skip
    schema: dict[str, Any] = {**{b: per.schema[b] for b in by_n}, "attribute": pl.String, "metric": pl.String,
                              **{k: pl.Float64 for k in ("value_lo", "value_hi", "difference_lo", "difference_hi",
                                                         "p_value")}, "ci_method": pl.String, "test": pl.String}  # fmt: skip
    fam_frame = pl.DataFrame(rows, schema=schema).with_columns(pl.col(pl.Float64).fill_nan(None))
    att = att.join(fam_frame, on=[*by_n, "attribute", "metric"], how="left", nulls_equal=True, maintain_order="left")
    att = att.with_columns(pl.lit(None, pl.Float64).alias("n_eff"))
    over = [*by_n, "metric"]
    if adjust is not None:
        adj = iv.p_adjust(pl.col("p_value"), adjust)  # type: ignore[arg-type]
        grp = grp.with_columns(adj.over(over).alias("p_value_adjusted"))
        att = att.with_columns(adj.over(over).alias("p_value_adjusted"))
    else:
        grp, att = (x.with_columns(pl.lit(None, pl.Float64).alias("p_value_adjusted")) for x in (grp, att))
    pop = pop.with_columns(pl.lit(None, pl.Float64).alias("p_value_adjusted"))
    return tuple(x.with_columns((pl.col(_GID) + offset).alias(_GID)) for x in (grp, att, pop))  # type: ignore[return-value]


def _abroca(c: pl.DataFrame, by: Sequence[str], refs: list[dict[str, Any]]) -> pl.DataFrame:
    """ABROCA of every group vs its attribute set's reference group (0 for the reference)."""
    fpr = pl.when(pl.col("N") > 0).then(pl.col("fp") / pl.col("N"))
    tpr = pl.when(pl.col("P") > 0).then(pl.col("tp") / pl.col("P"))
    pts = c.select(_GID, *_gid(by), fpr.alias("f"), tpr.alias("t"))
    curves: dict[tuple[Any, ...], tuple[int, np.ndarray, np.ndarray]] = {}
    for key, part in pts.group_by([_GID, *_gid(by)], maintain_order=True):
        f = np.r_[0.0, part["f"].to_numpy()]
        t = np.r_[0.0, part["t"].to_numpy()]
        curves[tuple(key[1:])] = (int(key[0]), f, t)
    out_gid, out_val = [], []
    ref_of = {tuple(r[b] for b in (*by, "attribute")): r["reference_group"] for r in refs}
    for k, (gid, f, t) in curves.items():
        if k[-2] is None:  # population
            continue
        ref = curves.get((*k[:-1], ref_of.get(k[:-1])))
        val = None
        if ref is not None and not (
            np.isnan(f).any() or np.isnan(t).any() or np.isnan(ref[1]).any() or np.isnan(ref[2]).any()
        ):
            val = area_between_roc_curves(f, t, ref[1], ref[2])
        out_gid.append(gid)
        out_val.append(val)
    return pl.DataFrame({_GID: out_gid, "abroca": out_val}, schema={_GID: pl.UInt32, "abroca": pl.Float64})
