"""Slice discovery: where does the model fail, and for whom? SliceLine, one scan per lattice level.

:func:`slice_scan` finds the ``k`` worst *slices* of the data (conjunctions of feature values such
as ``race = Black & age = [25, 37) & priors_count = [4, inf)``), scored by SliceLine (Sagadeeva &
Boehm, "SliceLine: Fast, Linear-Algebra-based Slice Finding for ML Model Debugging", SIGMOD 2021;
reference code: Apache SystemDS ``scripts/builtin/sliceLine.dml``), with the exact semantics of the
PyPI package ``sliceline`` 0.3 (:mod:`polfair.slices._lattice`), and gives each returned slice the
statistics a reviewer needs to trust it. The statistics of a slice are sums over its rows, so each
lattice level is one scan of the input (:mod:`polfair.slices._pass`): on a Polars frame, a lazy
frame or a parquet/CSV path (streamed), and in Spark or DuckDB (one query per level).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

import numpy as np
import polars as pl

from polfair.core import contract
from polfair.core._typing import IntoExpr
from polfair.core.contract import CODE, Compiled
from polfair.core.intervals import check_ci, check_p_adjust
from polfair.core.metrics import ALIASES, METRICS, Counts
from polfair.core.options import checks_keywords, refuse_unused_threshold
from polfair.core.passes.skeleton import check_rows, feature_columns
from polfair.core.passes.spec import (
    SF,
    PassOptions,
    check_on_missing,
    check_threshold,
    classification_columns,
    label_values,
)
from polfair.core.report.build import group_label
from polfair.core.report.run_metadata import attach_request, render_request
from polfair.engines.frame import frame_of
from polfair.exceptions import InvalidInputError, PolfairError
from polfair.slices._lattice import Lattice
from polfair.slices._pass import Feature, LevelPlan, Rows, Source, source_of
from polfair.slices._stats import adjusted, slice_statistics

__all__ = ["SLICE_COLUMNS", "is_slice_table", "slice_scan"]

#: The result's columns after the features, in order (the result's schema marker).
SLICE_COLUMNS = (
    "slice", "level", "n", "error_sum", "error_mean", "error_max", "score", "rest_error_mean", "difference",
    "value_lo", "value_hi", "difference_lo", "difference_hi", "p_value", "p_value_adjusted", "n_eff", "ci_method",
    "test", "n_evaluated",
)  # fmt: skip
_DTYPES: dict[str, pl.DataType] = {
    "slice": pl.String(), "level": pl.Int64(), "n": pl.Int64(), "ci_method": pl.String(), "test": pl.String(),
    "n_evaluated": pl.Int64(),
}  # fmt: skip

#: Rates where a higher value is better: the search looks for the highest mean, so they need their complement.
_COMPLEMENTS = {
    "accuracy": "error_rate",
    "true_positive_rate": "false_negative_rate",
    "true_negative_rate": "false_positive_rate",
    "positive_predictive_value": "false_discovery_rate",
    "negative_predictive_value": "false_omission_rate",
    "generalized_true_positive_rate": "generalized_false_negative_rate",
    "generalized_true_negative_rate": "generalized_false_positive_rate",
}


def is_slice_table(frame: Any) -> bool:
    """Whether ``frame`` is a :func:`slice_scan` result (its columns end with :data:`SLICE_COLUMNS`).

    Examples
    --------
    >>> import polars as pl
    >>> is_slice_table(pl.DataFrame({"a": [1]}))
    False
    """
    return isinstance(frame, pl.DataFrame) and tuple(frame.columns[-len(SLICE_COLUMNS) :]) == SLICE_COLUMNS


# ---------------------------------------------------------------------------------------------
# options


def _check_options(alpha: Any, k: Any, max_level: Any, min_support: Any) -> None:
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0.0 < float(alpha) <= 1.0:
        msg = (f"alpha={alpha!r}: alpha must be a number in (0, 1], SliceLine's weight of the error term against "
               "the size term (0.95 favours high errors, 0.5 weighs both)")  # fmt: skip
        raise PolfairError(msg)
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        msg = f"k={k!r}: k must be an integer >= 1 (the number of slices to return)"
        raise PolfairError(msg)
    if isinstance(max_level, bool) or not isinstance(max_level, int) or max_level < 1:
        msg = f"max_level={max_level!r}: max_level must be an integer >= 1 (the most predicates in a slice)"
        raise PolfairError(msg)
    if (
        isinstance(min_support, bool)
        or not isinstance(min_support, (int, float))
        or min_support < 0
        or (isinstance(min_support, float) and min_support >= 1)
    ):
        msg = (f"min_support={min_support!r}: min_support must be a row count (int >= 0) or a fraction of the "
               "rows (float in (0, 1))")  # fmt: skip
        raise PolfairError(msg)


def _bins_for(bins: Any, names: Sequence[str]) -> dict[str, Any]:
    """Per feature: ``None`` (no bins), an int (quantile bins) or a list of edges."""
    if bins is None or (isinstance(bins, int) and not isinstance(bins, bool)):
        per = dict.fromkeys(names, bins)
    elif isinstance(bins, Mapping):
        unknown = [b for b in bins if b not in names]
        if unknown:
            msg = f"bins names {unknown} that are not features; features: {list(names)}"
            raise PolfairError(msg)
        per = {n: bins.get(n, 10) for n in names}
    else:
        msg = ("bins must be an int (quantile bins of every numeric feature), None (no bins), or a dict "
               f"feature -> int, list of edges or None; got {bins!r}")  # fmt: skip
        raise PolfairError(msg)
    for name, b in per.items():
        if b is None:
            continue
        if isinstance(b, int) and not isinstance(b, bool):
            if b < 2:
                msg = f"bins for {name!r} must be at least 2 (or None for no bins), got {b}"
                raise PolfairError(msg)
            continue
        if isinstance(b, (list, tuple)) and b and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                      and np.isfinite(v) for v in b):  # fmt: skip
            if list(b) != sorted(set(b)):
                msg = f"bins for {name!r}: edges must be strictly increasing, got {list(b)}"
                raise PolfairError(msg)
            continue
        msg = f"bins for {name!r} must be an int >= 2, a list of finite increasing edges, or None; got {b!r}"
        raise PolfairError(msg)
    return per


# ---------------------------------------------------------------------------------------------
# the rows: errors, or a rate of the confusion counts


def _metric(metric: Any) -> str:
    name = ALIASES.get(metric, metric) if isinstance(metric, str) else metric
    m = METRICS.get(name) if isinstance(name, str) else None
    if m is None or not m.is_rate:
        rates = [n for n, v in METRICS.items() if v.is_rate and n not in _COMPLEMENTS]
        msg = f"metric must be one of the report's rates {rates}, got {metric!r}"
        raise PolfairError(msg)
    if name in _COMPLEMENTS:
        msg = (f"metric={metric!r} is better when higher, and the slice search finds where a rate is highest: "
               f"pass its complement metric={_COMPLEMENTS[name]!r} to find where it is lowest")  # fmt: skip
        raise PolfairError(msg)
    return name


def _rows(frame: Any, roles: PassOptions, *, errors: Any, metric: str) -> tuple[Rows, str]:
    """The per-row error of the search: ``errors`` itself, or ``metric`` of the request's roles (``roles``)."""
    y_true, y_pred, y_score, weight = roles.y_true, roles.y_pred, roles.y_score, roles.weight
    threshold = cast(float, roles.threshold)
    eng = frame.eng
    if errors is not None:
        given = [r for r, v in (("y_true", y_true), ("y_pred", y_pred), ("y_score", y_score)) if v is not None]
        if given or metric != "error_rate":
            what = f"{', '.join(given)}" if given else f"metric={metric!r}"
            msg = (f"errors= is the per-row loss itself; {what} would define another error: pass either errors= "
                   "or y_true= with y_pred=/y_score= and metric=")  # fmt: skip
            raise PolfairError(msg)
        col = frame.column(errors, "errors")
        loss = contract.loss(eng, col)
        compiled: dict[str, Compiled] = {"y_true": loss}
        flags = []
        w = None
        if weight is not None:
            compiled["weight"] = contract.weight(eng, frame.column(weight, "weight"))
            flags.append(compiled["weight"].state)
            w = compiled["weight"].value
        code = contract.outcome_code(eng, loss.state, None, flags)
        binary = contract.dtype_kind(col.dtype) == "boolean"
        return Rows(code, loss.value, w, [0], compiled, binary), f"errors={col.name!r}"
    if y_true is None:
        msg = "slice_scan needs errors= (a per-row loss) or y_true= with y_pred= or y_score= (and metric=)"
        raise PolfairError(msg)
    name = _metric(metric)
    m = METRICS[name]
    if m.needs == "predictions" and y_pred is None and y_score is None:
        msg = f"metric={metric!r} needs predictions: pass y_pred= or y_score= (with threshold=)"
        raise PolfairError(msg)
    if name.startswith("generalized_") and y_score is None:
        msg = f"metric={metric!r} is a rate of scores: pass y_score="
        raise PolfairError(msg)
    check_threshold(threshold)
    fav, unfav = label_values(roles.favorable, roles.unfavorable)
    cols = {"y_true": frame.column(y_true, "y_true")}
    if y_pred is not None:
        cols["y_pred"] = frame.column(y_pred, "y_pred")
    if y_score is not None:
        cols["y_score"] = frame.column(y_score, "y_score")
    if weight is not None:
        cols["weight"] = frame.column(weight, "weight")
    compiled, columns, _ = classification_columns(eng, cols, fav, unfav, threshold=threshold,
                                                  score_label=roles.score_label)  # fmt: skip
    code = columns[CODE]
    a, b = code % eng.small(4), (code // eng.small(4)) % eng.small(4)
    s = columns.get(SF)  # the favorable label's probability (the polarity rule: 1 - y_score for an unfavorable score_label)

    def row(name_: str) -> Any:  # a confusion cell of one row (generalized: the score's share)
        truth = a == eng.small(1) if name_ in ("tp", "fn", "gtp", "gfn") else a == eng.small(0)
        if name_ in ("gtp", "gfp"):
            return eng.ns.when(truth).then(s).otherwise(eng.lit(0.0))
        if name_ in ("gtn", "gfn"):
            return eng.ns.when(truth).then(1.0 - s).otherwise(eng.lit(0.0))  # type: ignore[operator]
        pred = b == eng.small(1) if name_ in ("tp", "fp") else b == eng.small(0)
        return eng.float64(truth & pred)

    e = m.numerator(Counts(row))
    # the rows of the rate's denominator (a function of the label and prediction states)
    counted: list[int] = []
    for c in range(256):
        sa, sb, bits = c % 4, c // 4 % 4, c // 16
        if sa > 1 or sb > 1 or bits:
            continue
        cells = {"tp": float(sa == 1 and sb == 1), "fp": float(sa == 0 and sb == 1),
                 "tn": float(sa == 0 and sb == 0), "fn": float(sa == 1 and sb == 0)}  # fmt: skip
        if float(m.denominator(Counts(lambda n, cells=cells: cells[n]))) > 0:  # type: ignore[misc, arg-type]
            counted.append(c)
    w = compiled["weight"].value if "weight" in compiled else None
    return Rows(code, eng.float64(e), w, counted, compiled, not name.startswith("generalized_")), name


# ---------------------------------------------------------------------------------------------
# bins


def _cuts(quantiles: dict[float, float], q: int, integer: bool) -> list[float]:
    """Bin edges from the quantiles ``j/q`` (and 0, the minimum): rounded to 4 significant digits
    (integer features: up to whole numbers), distinct, above the minimum.
    """
    lowest = quantiles[0.0]
    raw = [quantiles[j / q] for j in range(1, q)]
    cuts = {float(np.ceil(c)) if integer else float(f"{c:.4g}") for c in raw}
    return sorted(c for c in cuts if c > lowest)


def _set_bins(source: Source, features: list[Feature], per: dict[str, Any]) -> dict[int, int]:
    """Cut the numeric features that ``per`` asks to bin: given edges as they are; Float and Decimal
    features at their quantiles (one scan before level 1). Returns the integer features to bin at
    quantiles from their level-1 values (no scan: :func:`_bin_level1`).
    """
    quantile: dict[int, int] = {}
    later: dict[int, int] = {}
    for i, f in enumerate(features):
        b = per[f.name]
        kind = contract.dtype_kind(f.column.dtype)
        if b is None or kind not in ("integer", "float", "decimal"):
            continue
        if not isinstance(b, int):
            f.edges = [float(v) for v in b]
        elif kind == "integer":
            later[i] = b
        else:
            quantile[i] = b
    if quantile:
        qs = sorted({0.0, *(j / q for q in set(quantile.values()) for j in range(1, q))})
        profile = source.value_profile(sorted(quantile), qs)
        for i, q in quantile.items():
            distinct, values = profile[i]
            if distinct > q:  # few values: each is a value of its own
                features[i].edges = _cuts(dict(zip(qs, values)), q, integer=False)
    return later


def _bin_level1(table: pl.DataFrame, f: Feature, q: int) -> pl.DataFrame:
    """An integer feature with more than ``q`` values cut at its quantiles, from its level-1 values
    (exact quantiles over the rows, numpy's "linear"); the values' sums added up per bin.
    """
    known = table.filter(pl.col("v").is_not_null()).sort("v")
    if known.height <= q:
        return table
    v = known["v"].cast(pl.Float64).to_numpy()
    cum = np.cumsum(known["n"].cast(pl.Int64).to_numpy())
    total = int(cum[-1])

    def at(h: float) -> float:  # the value of row h (0-based) of the sorted rows
        return float(v[np.searchsorted(cum, h, side="right")])

    qs: dict[float, float] = {}
    for p in {0.0, *(j / q for j in range(1, q))}:
        h = p * (total - 1)
        lo = np.floor(h)
        qs[p] = at(lo) + (h - lo) * (at(min(lo + 1, total - 1)) - at(lo))
    f.edges = _cuts(qs, q, integer=True)
    idx = pl.lit(0, pl.Int64)
    for c in f.edges:
        idx = idx + (pl.col("v") >= c).cast(pl.Int64)
    sums = [c for c in table.columns if c not in ("v", "m", "w_min")]
    aggs = [pl.col(c).sum() for c in sums] + [pl.col("m").max()]
    if "w_min" in table.columns:
        aggs.append(pl.col("w_min").min())
    return table.with_columns(pl.when(pl.col("v").is_not_null()).then(idx).alias("v")).group_by("v").agg(aggs)


# ---------------------------------------------------------------------------------------------
# the front door


@checks_keywords
def slice_scan(
    data: Any,
    *,
    features: IntoExpr | Sequence[IntoExpr],
    errors: IntoExpr | None = None,
    y_true: IntoExpr | None = None,
    y_pred: IntoExpr | None = None,
    y_score: IntoExpr | None = None,
    threshold: float | None = None,
    metric: str = "error_rate",
    favorable: Any = 1,
    unfavorable: Any = None,
    score_label: Any = None,
    weight: IntoExpr | None = None,
    alpha: float = 0.95,
    k: int = 10,
    max_level: int = 3,
    min_support: int | float = 32,
    bins: int | Mapping[str, Any] | None = 10,
    ci: float | None = 0.95,
    p_adjust: str | None = "holm",
    on_missing: str = "warn",
) -> pl.DataFrame:
    """The ``k`` slices of the data where the model errs most: SliceLine, one scan per lattice level.

    A *slice* is a conjunction of predicates ``feature = value``, at most one per feature
    (``sex = Female & age = [25, 37)``); its *level* is the number of predicates. SliceLine scores
    a slice ``S`` with ``n_S`` rows and error sum ``e_S`` among ``N`` rows of mean error ``ē`` as

        ``score = α·((e_S / n_S) / ē − 1) − (1 − α)·(N / n_S − 1)``

    (positive: worse than average and large enough), and returns the ``k`` best-scoring slices
    with at least ``min_support`` rows and a positive score, searching the lattice level by level
    with SliceLine's size and score upper bounds, missing-parent pruning and ties at the k-th score
    kept (Sagadeeva & Boehm, SIGMOD 2021; the semantics of the PyPI package ``sliceline`` 0.3:
    the same features, errors, ``alpha``, ``k``, ``max_level`` (``max_l``) and ``min_support``
    (``min_sup``) give the same slices, scores, sizes and error sums). Each level is ONE scan of
    the input (a Polars frame, lazy frame or parquet/CSV path, streamed in batches; Spark and
    DuckDB frames run each level in their engine), with memory bounded by the level's candidates.

    Parameters
    ----------
    data
        Rows: polars/pandas/pyarrow frame, LazyFrame, parquet/CSV path or glob, or a Spark/DuckDB
        frame (then column names only).
    features
        Columns (names or named Polars expressions) to slice on. Boolean, integer, float, decimal,
        string, categorical, enum, date and datetime values; null (and NaN) is a value of its own.
        Numeric features with more distinct values than ``bins`` are cut at their quantiles.
    errors
        A per-row loss (column or expression, Boolean or numeric, finite and >= 0): 0/1 errors,
        squared error, log loss. Null/NaN are missing (left out, with a warning); negative or
        infinite values raise.
    y_true, y_pred, y_score, threshold, favorable, unfavorable, score_label
        Instead of ``errors``: labels and predictions (``y_pred``, or ``y_score >= threshold``,
        ``threshold`` 0.5 by default and refused next to ``y_pred`` or ``errors``) as
        in :func:`polfair.fairness_report` (``score_label``: the polarity rule,
        ``docs/contract.md#polarity``); the error is then the rate ``metric``.
    metric
        With labels: a rate of the report whose highest values the search looks for:
        ``"error_rate"`` (default), ``"false_positive_rate"``, ``"false_negative_rate"``,
        ``"false_discovery_rate"``, ``"false_omission_rate"``, ``"selection_rate"``, ``"base_rate"``
        or a generalized rate of the scores. The search then runs on the rows of the rate's
        denominator (the actual negatives for the FPR) with the numerator as the error (a false
        positive), so a slice is where that rate is worst. Rates that are better when higher
        (accuracy, TPR, ...) raise and name their complement.
    weight
        Optional weights (finite, >= 0; null/NaN missing). Sizes and error sums are then weighted
        (``n_S`` is Σw, ``N`` the total weight), the support still counts rows; a generalisation
        (``sliceline`` has no weights).
    alpha
        SliceLine's weight of the error term, in (0, 1] (default 0.95).
    k
        Slices to return (more when several tie at the k-th score).
    max_level
        The most predicates in a slice (SliceLine's ``max_l``; default 3).
    min_support
        The fewest rows of a returned slice: an int, or a float in (0, 1) for a fraction of the
        rows (``int(min_support · N)``, as ``sliceline``).
    bins
        Numeric features: an int ``q`` (default 10) cuts each numeric feature with more than ``q``
        distinct values at its ``1/q, ..., (q−1)/q`` quantiles (linear interpolation; integer
        features at whole numbers) into bins labelled ``(-inf, c1)``, ``[c1, c2)``, ...,
        ``[cm, inf)`` (the column becomes an Enum of the labels; null stays a value of its own);
        ``None`` keeps every distinct value; a dict maps features to an int, a list of edges or
        ``None``. Quantile edges cost one scan before level 1 (on a Polars input, from a systematic
        sample of at most 2**21 rows per feature: exact below that).
    ci
        Confidence level of the intervals (``None``: no intervals; the tests remain).
    p_adjust
        ``"holm"`` (default), ``"bh"``, ``"by"`` or ``None``: the multiplicity adjustment of
        ``p_value``, over every slice the search evaluated (see Notes); ``None``: ``p_value_adjusted``
        is ``p_value``, as in the reports.
    on_missing
        ``"warn"``, ``"raise"`` or ``"ignore"``: rows with a missing error, label, prediction, score
        or weight (:class:`~polfair.exceptions.MissingValuesWarning`).

    Returns
    -------
    pl.DataFrame
        One row per slice, best first (score descending; ties in ``sliceline``'s order). One
        column per feature in its dtype (a binned feature: an Enum of its bin labels) holding the
        slice's value, null where the slice does not constrain the feature (a slice on a
        feature's null value shows null too: ``slice`` names it), then :data:`SLICE_COLUMNS`:

        * ``slice`` (String): the predicates, ``"sex = Female & age = [25, 37)"``,
          ``"income is null"``; ``level`` (Int64): their number;
        * ``n`` (Int64): rows; ``error_sum`` (Σw·e), ``error_mean`` (Σw·e/Σw; a rate for 0/1
          errors, a fraction in [0, 1]), ``error_max`` (largest error), ``score`` (Float64);
        * ``rest_error_mean``: the mean error of the other rows; ``difference`` =
          ``error_mean − rest_error_mean``;
        * ``value_lo``/``value_hi``: interval of ``error_mean``; ``difference_lo``/``difference_hi``:
          of the difference; ``p_value``: test of "no difference to the rest";
          ``p_value_adjusted``; ``n_eff`` (Kish's effective size; ``n`` unweighted);
          ``ci_method`` and ``test`` (String): 0/1 errors: ``score`` (Wilson; weighted ``score_ess``
          with Kish sizes), Newcombe's hybrid score interval for the difference, ``chi2_n1``
          (Campbell's "N−1" χ², ``fisher`` when an expected count is below 1, ``z_ess`` weighted);
          other losses: ``log_t`` (Student t on the log scale, as the regression report's MAE),
          Welch's interval and test (``welch``; ``_ess`` weighted);
        * ``n_evaluated`` (Int64): the slices the search evaluated (with rows on both sides): the
          family ``p_value_adjusted`` is adjusted over.

    Raises
    ------
    ColumnNotFoundError, InvalidInputError, PolfairError
        A missing column, a dtype a role does not take, negative or infinite errors or weights,
        invalid labels, an unknown or ambiguous ``metric``, both ``errors`` and labels, a feature
        named like a result column, options out of range.

    Warns
    -----
    MissingValuesWarning
        Rows with a null or NaN error, label, prediction, score or weight (left out).

    Notes
    -----
    **Why the adjustment counts every evaluated slice.** The search looks at thousands of slices
    and returns the few most extreme: a slice chosen because its error is the highest of thousands
    has a small raw p-value by construction, even where nothing differs. The p-values are
    therefore computed for *every* slice the search evaluated (every value of level 1, every
    candidate of the later levels) and adjusted over that whole family, as if all of them had been
    reported; the returned slices keep their adjusted p-values. With ``"holm"`` (the default) the
    probability that any returned slice without a real difference has an adjusted p-value below
    α is at most α whatever rule selected it, since Holm controls the family-wise error over the
    whole family and so over every subset of it. ``"bh"``/``"by"`` control the false discovery
    rate over the whole family, which does not carry over to a selected subset: use them to
    screen, Holm to claim. The family is the slices the search *evaluated*; slices it pruned (their
    upper bound could not reach the top k) were never tested and are not counted, which makes the
    family data-dependent: the adjustment is honest about the selection among the evaluated
    slices, not about the pruning. For a bound that needs no such caveat multiply the raw p-value by
    the number of slices in the lattice (Bonferroni).

    Each slice is compared with the rest of the rows (independent groups). Intervals and tests
    treat rows as independent draws.

    Scans: one per level (``max_level`` at most), plus one before level 1 when numeric features are
    cut at quantiles. The candidates of a level are evaluated by folding their features' codes into
    one integer key per feature set and indexing a table of the candidates (Polars: numpy
    ``bincount`` over streamed batches; Spark/DuckDB: one unpivot and group-by in the engine).

    Sources: Sagadeeva & Boehm (2021); SystemDS ``sliceLine.dml``; ``sliceline`` 0.3.0
    (``slicefinder.py``: ``_score``, ``_score_ub``, ``_get_pair_candidates``,
    ``_maintain_top_k``); Holm (1979); Benjamini & Hochberg (1995); Wilson (1927); Newcombe (1998);
    Welch (1947).

    Examples
    --------
    >>> import polars as pl
    >>> import polfair as pf
    >>> df = pl.DataFrame({"a": ["x", "x", "y", "y"] * 25, "b": ["u", "v"] * 50,
    ...                    "err": [1, 0, 0, 0] * 25})
    >>> top = pf.slice_scan(df, features=["a", "b"], errors="err", min_support=10, k=2)
    >>> top.select("slice", "n", "error_mean").rows()  # k=2: the 2nd and 3rd tie, both are kept
    [('a = x & b = u', 25, 1.0), ('b = u', 50, 0.5), ('a = x', 50, 0.5)]
    """
    _check_options(alpha, k, max_level, min_support)
    ci = check_ci(ci)
    check_p_adjust(p_adjust)
    check_on_missing(on_missing)
    refuse_unused_threshold("slice_scan", threshold, errors=errors, y_pred=y_pred)
    threshold = 0.5 if threshold is None else threshold
    frame = frame_of(data)
    fcols = feature_columns(frame, features, example="column to slice on, e.g. features=['sex', 'age']",
                            reserved=SLICE_COLUMNS)  # fmt: skip
    names = [c.name for c in fcols]
    per = _bins_for(bins, names)
    roles = PassOptions(y_true=y_true, y_pred=y_pred, y_score=y_score, threshold=threshold, favorable=favorable,
                        unfavorable=unfavorable, score_label=score_label, weight=weight)  # fmt: skip
    rows, what = _rows(frame, roles, errors=errors, metric=metric)
    feats = [Feature(c.name, c) for c in fcols]
    source = source_of(frame, rows, feats)
    later = _set_bins(source, feats, per)
    request: dict[str, Any] = {"features": names, "alpha": alpha, "k": k, "max_level": max_level,
                               "min_support": min_support, "ci": ci, "p_adjust": p_adjust}  # fmt: skip
    if errors is not None:
        request["errors"] = _column_name(frame, errors)
    else:
        request |= {"metric": what, "y_true": y_true, "y_pred": y_pred, "y_score": y_score, "threshold": threshold,
                    "favorable": favorable}  # fmt: skip
    request["weight"] = weight
    result, facts = _search(source, frame, feats, rows, alpha=float(alpha), k=k, max_level=max_level,
                            min_support=min_support, ci=ci, p_adjust=p_adjust, on_missing=on_missing,
                            later=later)  # fmt: skip
    request["bins"] = {f.name: f.edges for f in feats if f.edges is not None} or None
    request |= facts | {"scans": source.scans}
    return attach_request(result, render_request(request, task="slices", p_values_need_ci=False))


def _column_name(frame: Any, x: Any) -> str:
    """The display name of a column argument."""
    return x if isinstance(x, str) else frame.column(x, "errors").name


def _sorted_values(table: pl.DataFrame, dtype: pl.DataType) -> pl.DataFrame:
    """A feature's values in one-hot order: sorted (categories by their text, Enum by its order), null last."""
    key = pl.col("v").cast(pl.String) if contract.dtype_kind(dtype) == "categorical" else pl.col("v")
    return table.sort(key, nulls_last=True)


def _search(
    source: Source, frame: Any, feats: list[Feature], rows: Rows, *, alpha: float, k: int, max_level: int,
    min_support: int | float, ci: float | None, p_adjust: str | None, on_missing: str, later: dict[int, int],
) -> tuple[pl.DataFrame, dict[str, Any]]:  # fmt: skip
    source.reference()  # the reference error of the squared sums and the weights' unit (Polars: level 1 sets them)
    tables, codes = source.level1()
    for i, q in later.items():
        tables[i] = _bin_level1(tables[i], feats[i], q)
    check_rows(codes, rows.compiled, count="n", on_missing=on_missing, examples=frame.examples,
               excluded_from="left out of the slice search", stacklevel=4)  # fmt: skip
    weighted = rows.w is not None
    stat_cols = ("n", "s", "e", "d", "e2", "w2", "m")
    level1: dict[str, list[np.ndarray]] = {c: [] for c in stat_cols}
    feature, value = [], []
    w_min = np.inf
    for i, (f, t) in enumerate(zip(feats, tables)):
        t = _sorted_values(t, pl.Int64() if f.binned else f.column.dtype)
        f.values = t["v"]
        feature.append(np.full(t.height, i, dtype=np.int64))
        value.append(np.arange(t.height, dtype=np.int64))
        n = t["n"].cast(pl.Int64).to_numpy()
        level1["n"].append(n)
        for c in ("s", "e", "d", "e2", "w2", "m"):
            level1[c].append(t[c].cast(pl.Float64).to_numpy() if c in t.columns else np.zeros(t.height))
        if not weighted:
            level1["s"][-1] = n.astype(np.float64)
            level1["w2"][-1] = level1["s"][-1]
        if rows.binary:
            level1["e2"][-1] = level1["d"][-1] = level1["e"][-1]
        if i == 0:
            if weighted:
                w_min = float(t["w_min"].min()) if t.height else np.inf  # type: ignore[arg-type]
    stats1 = {c: np.concatenate(v) for c, v in level1.items()}
    fa, va = np.concatenate(feature), np.concatenate(value)
    counted = int(stats1["n"][fa == 0].sum())
    if counted == 0:
        msg = "slice_scan: no row has a usable error (every row is missing, or outside the rate's denominator)"
        raise InvalidInputError(msg)
    binary = rows.binary or source.nonbinary == 0
    if binary and not rows.binary:
        stats1["e2"] = stats1["d"] = stats1["e"]
    source.binary = binary
    first = fa == 0
    total = {"w": float(stats1["s"][first].sum()), "w2": float(stats1["w2"][first].sum()),
             "sum_e": float(stats1["e"][first].sum()), "sum_d": float(stats1["d"][first].sum()),
             "sum_e2": float(stats1["e2"][first].sum())}  # fmt: skip
    min_sup: float = int(min_support * counted) if isinstance(min_support, float) and 0 < min_support < 1 else min_support
    n_cols = fa.shape[0]
    if weighted:
        size_total: float = total["w"]
        n_ub, min_size = n_cols * total["w"] / counted, min_sup * (w_min if np.isfinite(w_min) else 0.0)
    else:
        size_total, n_ub, min_size = counted, n_cols, min_sup
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_error = total["sum_e"] / size_total if size_total > 0 else np.nan
    lattice = Lattice(fa, va, len(feats), alpha, k, max_level, min_sup, mean_error, size_total, n_ub, min_size)

    def evaluate(level: int, g: np.ndarray) -> dict[str, np.ndarray]:
        return source.evaluate(LevelPlan.build(g, fa, va, feats))

    lattice.run(stats1, evaluate)
    # the family of the adjustment: every evaluated slice (with rows on both sides: a defined p-value)
    fam = {c: np.concatenate([lv.stats[c] for lv in lattice.levels]) for c in ("s", "w2", "e", "d", "e2")}
    shift = 0.0 if binary else source.shift
    p_all = slice_statistics(fam, total, binary=binary, weighted=weighted, ci=None, shift=shift)["p_value"]
    n_eval = int(np.count_nonzero(~np.isnan(p_all)))
    result = _result(lattice, feats, total, adjusted(p_all, p_adjust), n_eval, binary=binary, weighted=weighted, ci=ci,
                     shift=shift, unit=source.unit)  # fmt: skip
    facts = {"rows": counted, "error_mean": None if not np.isfinite(mean_error) else float(mean_error),
             "min_support_rows": min_sup, "n_evaluated": n_eval, "candidates": lattice.candidates,
             "weighted": weighted, "binary_errors": binary}  # fmt: skip
    return result, facts


def _result(
    lattice: Lattice, feats: list[Feature], total: dict[str, float], p_adj: np.ndarray, n_eval: int, *,
    binary: bool, weighted: bool, ci: float | None, shift: float = 0.0, unit: int = 0,
) -> pl.DataFrame:  # fmt: skip
    offsets = np.cumsum([0] + [lv.g.shape[0] for lv in lattice.levels])
    at = np.array([offsets[lv] + i for lv, i in lattice.top], dtype=np.int64)
    top = {c: np.array([lattice.levels[lv].stats[c][i] for lv, i in lattice.top], dtype=np.float64)
           for c in ("n", "s", "w2", "e", "d", "e2", "m")}  # fmt: skip
    st = slice_statistics(top, total, binary=binary, weighted=weighted, ci=ci, shift=shift)
    shown = [f.shown() for f in feats]
    # values written as the report writes groups (one function for every door: "true", a datetime's
    # fraction, a quoted "null" string apart from a real null)
    labels = [sh.to_frame("v").select(group_label(["v"])).to_series().to_list() for sh in shown]
    columns: dict[str, pl.Series] = {}
    chosen: list[list[int | None]] = [[None] * len(lattice.top) for _ in feats]
    texts, levels = [], []
    for row, (lv, i) in enumerate(lattice.top):
        parts = []
        for gcol in lattice.levels[lv].g[i]:
            f, v = int(lattice.feature[gcol]), int(lattice.value[gcol])
            chosen[f][row] = v
            val = shown[f][v]
            parts.append(f"{feats[f].name} is null" if val is None else f"{feats[f].name} = {labels[f][v]}")
        texts.append(" & ".join(parts))
        levels.append(len(parts))
    for feat, sh, idx in zip(feats, shown, chosen):
        present = sh.to_list()
        columns[feat.name] = pl.Series(feat.name, [None if v is None else present[v] for v in idx], dtype=feat.dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(top["s"] > 0, top["e"] / top["s"], np.nan)
    scores = np.array([lattice.levels[lv].sc[i] for lv, i in lattice.top], dtype=np.float64)
    values: dict[str, Any] = {
        "slice": texts, "level": levels, "n": top["n"].astype(np.int64), "error_sum": top["e"] * 2.0**unit, "error_mean": mean,
        "error_max": top["m"], "score": scores, "rest_error_mean": st["rest_error_mean"],
        "difference": st["difference"], "value_lo": st["value_lo"], "value_hi": st["value_hi"],
        "difference_lo": st["difference_lo"], "difference_hi": st["difference_hi"], "p_value": st["p_value"],
        "p_value_adjusted": p_adj[at] if at.size else np.zeros(0), "n_eff": st["n_eff"],
        "ci_method": st["ci_method"], "test": st["test"], "n_evaluated": [n_eval] * len(lattice.top),
    }  # fmt: skip
    for c in SLICE_COLUMNS:
        dtype = _DTYPES.get(c, pl.Float64())
        v = values[c]
        series = (pl.Series(c, v, dtype=dtype, nan_to_null=True) if isinstance(v, np.ndarray) and v.dtype.kind == "f"
                  else pl.Series(c, list(v) if isinstance(v, np.ndarray) else v, dtype=dtype))  # fmt: skip
        columns[c] = series
    return pl.DataFrame(list(columns.values()))
