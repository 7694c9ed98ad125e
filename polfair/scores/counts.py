"""Score histograms: ONE ``group_by`` over (by, protected keys, score bin, label) to additive cells.

The score analogue of the core's cell table. Each cell holds, for one combination of the ``by``
values, the protected attributes, a score bin and the label (favorable or not):

* ``n`` (Int64): rows; ``weight`` (Float64): Σw;
* ``score_sum`` = Σ w·s and ``score_sq_sum`` = Σ w·s² (Float64);
* ``score_min`` / ``score_max`` (Float64): the smallest and largest score in the cell;
* ``weight_sq_sum`` = Σw² (Float64; = ``n`` unweighted): Kish effective sizes for the intervals.

Input values follow the input contract (:mod:`polfair.core.contract`, ``docs/contract.md``), on
every engine alike: labels are matched in their dtype (null and NaN labels are missing), scores are
numeric and finite (null and NaN are missing), weights finite and >= 0 (null and NaN are missing);
missing rows are left out with a :class:`~polfair.exceptions.MissingValuesWarning`, invalid ones
raise naming the column.

Every column is a sum, a min or a max, so tables of partitions merge exactly
(:func:`merge_score_counts`). ROC and precision–recall curves, AUC, average precision, the Brier
score, reliability curves, ECE, threshold sweeps and per-group thresholds are arithmetic on this
small table (:mod:`polfair.scores.curves`, :mod:`polfair.scores.sweep`).

Binning (``bins=``)
-------------------
* ``"exact"`` / ``None`` (default): one bin per distinct score value. Every statistic is then exact
  (equal to scikit-learn on the rows). Use it for discrete scores (COMPAS ``decile_score`` 1..10,
  rounded probabilities); the table has one row per distinct value per cell.
* an ``int`` ``k``: ``k`` equal-width bins on ``range`` (default ``(0, 1)``), left-closed, the last
  closed on both sides. A score outside ``range`` raises (scores are never clipped silently).
* a sequence of increasing edges ``[e0, e1, ..., ek]``: the bins ``[e_i, e_{i+1})``, the last closed.

A binned cell's ``score`` is its lower edge, so a threshold that is a bin edge is exact: the
decision ``s >= t`` is the same for every row of a bin. The Brier score is exact under any binning
(it needs only Σw·s², Σw·s and Σw·y per cell). Binning error bound for the ROC AUC: ties inside a
bin count as half-concordant, so ``|AUC_binned − AUC_exact| ≤ ½ Σ_b P_b N_b / (P N)`` where
``P_b`` / ``N_b`` are the positive / negative weights in bin ``b`` (:func:`~polfair.scores.curves.roc_auc_bound`
gives the bound per group).
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import polars as pl

from polfair.core import contract
from polfair.core._args import mergeable_tables
from polfair.core._typing import IntoExpr
from polfair.core.contract import CODE, PROBA_BAD, PROBA_NULL, PROBA_SUM
from polfair.core.passes.counts import COUNTED_CODES
from polfair.core.passes.estimated import expand_sums
from polfair.core.passes.skeleton import (
    aggregate,
    check_rows,
    estimated_stage,
    pass_keys,
    problem_columns,
)
from polfair.core.passes.spec import PassOptions, label_values
from polfair.core.proba import (
    DEFAULT_TOLERANCE,
    GROUP_INDEX,
    group_weights,
)
from polfair.engines.frame import frame_of
from polfair.exceptions import InvalidInputError, PolarityError, PolarityWarning, PolfairError, user_stacklevel

__all__ = [
    "SCORE_COUNT_COLUMNS",
    "decision_counts",
    "merge_score_counts",
    "score_counts",
]

#: Value columns of a score histogram, in order (every other column is a key).
SCORE_COUNT_COLUMNS = ("n", "weight", "score_sum", "score_sq_sum", "score_min", "score_max", "weight_sq_sum")

_RESERVED = frozenset({"score", "label", *SCORE_COUNT_COLUMNS, "attribute", "group", "metric", "value", "threshold"})
_S, _W, _WS, _WSS, _WW, _WD = "__pf_s", "__pf_w", "__pf_ws", "__pf_wss", "__pf_ww", "__pf_wd"


def _check_bins(bins: Any, range_: tuple[float, float]) -> tuple[float, ...] | None:
    if bins is None or (isinstance(bins, str) and bins == "exact"):
        return None
    if isinstance(bins, bool):
        msg = f"bins must be 'exact', None, an int >= 1 or a list of increasing edges, got {bins!r}"
        raise PolfairError(msg)
    if isinstance(bins, int):
        lo, hi = (float(range_[0]), float(range_[1]))
        if bins < 1 or not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            msg = f"bins={bins!r} needs bins >= 1 and a finite range lo < hi, got range={range_!r}"
            raise PolfairError(msg)
        return tuple(lo + (hi - lo) * i / bins for i in range(bins)) + (hi,)
    if isinstance(bins, str):
        msg = f"bins must be 'exact', None, an int >= 1 or a list of increasing edges, got {bins!r}"
        raise PolfairError(msg)
    edges = tuple(float(e) for e in bins)
    if len(edges) < 2 or any(not math.isfinite(e) for e in edges) or any(a >= b for a, b in itertools.pairwise(edges)):
        msg = f"bins edges must be >= 2 finite, strictly increasing numbers, got {list(bins)!r}"
        raise PolfairError(msg)
    return edges


def _bin_expr(ns: Any, s: Any, edges: tuple[float, ...] | None) -> Any:
    """The bin of a score (its lower edge; null stays null), in the frame's namespace."""
    if edges is None:
        return s
    # bin i = [e_i, e_{i+1}), the last closed; the cell's score is the lower edge
    lower = ns.lit(edges[0])
    for e in edges[1:-1]:
        lower = ns.when(s >= e).then(ns.lit(e)).otherwise(lower)
    return ns.when(~s.is_null()).then(lower)


def _histogram(
    data: Any, request: PassOptions, *, edges: tuple[float, ...] | None, with_missing: bool = False,
    relative: bool = False,
) -> tuple[pl.DataFrame, list[str], contract.Polarity | None]:  # fmt: skip
    """The ONE ``group_by`` of a score histogram: the pass skeleton (:mod:`polfair.core.passes.skeleton`)
    with the histogram's aggregations, written once for every engine.

    With ``request.y_pred`` (a decision, :func:`decision_counts`) the histogram's score is 1.0 for a
    favorable decision and 0.0 for an unfavorable one. An attribute estimated from proxies
    (``request.protected_proba``, :mod:`polfair.core.proba`) is a stage of the pass: its groups'
    sums are extra columns of the same pass, reshaped after it.
    With labels and a score, warns (:class:`~polfair.exceptions.PolarityWarning`) when the score's
    mean is clearly lower on favorable labels than on unfavorable ones. ``with_missing``: also the
    rows with a missing label, score or weight, one row per cell with ``score`` and ``label`` null.
    """
    frame = frame_of(data)
    eng = frame.eng
    y_true, y_pred = request.y_true, request.y_pred
    truth_col = frame.column(y_true, "y_true") if y_true is not None else None
    key_cols = pass_keys(frame, request, truth_col, _RESERVED, required=False)  # the skeleton's keys, checked
    names = [c.name for _, c in key_cols]
    fav, _ = label_values(request.favorable, None)
    pred_col = frame.column(y_pred, "y_pred") if y_pred is not None else None
    score_col = frame.column(request.y_score, "y_score") if y_pred is None else None
    # the polarity rule (docs/contract.md#polarity): what the score / a Boolean decision is about
    compiled, pol = contract.compile_labels(
        eng, y_true=truth_col, y_pred=pred_col, favorable=fav, unfavorable=None, score_label=request.score_label,
        score=score_col.name if score_col is not None and truth_col is not None else None,
    )  # fmt: skip
    if pol is not None and not pol.score_favorable and "y_score" in pol.reads:
        raise PolarityError(pol.score_room_message())
    truth = compiled["y_true"].state if y_true is not None else eng.small(0)
    flags = []
    pred = None
    if pred_col is not None:
        pred = compiled["y_pred"].state
        s = eng.cases([(pred == 1, eng.lit(1.0))], eng.lit(0.0))
    else:
        assert score_col is not None
        compiled["y_score"] = contract.score(eng, score_col, unit_interval=False)
        flags.append(compiled["y_score"].state)
        s = compiled["y_score"].value
    w = eng.lit(1.0)
    weighted = request.weight is not None
    if weighted:
        compiled["weight"] = contract.weight(eng, frame.column(request.weight, "weight"))
        flags.append(compiled["weight"].state)
        w = compiled["weight"].value
    columns: dict[str, Any] = {c.name: contract.key(eng, c, role=role) for role, c in key_cols}
    up, down = contract.weight_squares(w)  # Σw² in two accumulators: weights of 1e-200 and 1e200 both fit
    columns |= {"score": _bin_expr(eng.ns, s, edges), CODE: contract.outcome_code(eng, truth, pred, flags), _S: s, _W: w,
                _WS: w * s, _WSS: w * s * s, _WW: up, _WD: down}  # fmt: skip
    group = [*names, "score", CODE]
    ps = estimated_stage(frame, request, names, compiled, weighted=weighted, has_scores=True, reserved=_RESERVED)
    extra = _estimated(eng, ps, columns, group, len(names), weighted, s)

    def aggs(ns: Any) -> list[Any]:
        return [ns.len().alias("n"), ns.col(_W).sum().alias("weight"), ns.col(_WS).sum().alias("score_sum"),
                ns.col(_WSS).sum().alias("score_sq_sum"), ns.col(_S).min().alias("score_min"),
                ns.col(_S).max().alias("score_max"), ns.col(_WW).sum().alias(_WW), ns.col(_WD).sum().alias(_WD),
                *(ns.col(c).sum() for c in extra)]  # fmt: skip

    out = aggregate(frame, columns, group, aggs, count="n", engine=request.engine)
    check_rows(out, compiled, count="n", on_missing=request.on_missing, examples=frame.examples,
               excluded_from="left out of the score histogram", stacklevel=5)  # fmt: skip
    missing = out.filter(~pl.col(CODE).is_in(COUNTED_CODES)).group_by(names).agg(pl.col("n").sum())
    out = out.filter(pl.col(CODE).is_in(COUNTED_CODES))
    contract.check_finite_sums(out, ["weight", "score_sum", "score_sq_sum"], compiled.get("weight"))
    out = out.with_columns(pl.col("weight", _WW, _WD, "score_sum", "score_sq_sum").cast(pl.Float64))
    out, k = contract.weight_units(out, w="weight", up=_WW, down=_WD, out="weight_sq_sum",
                                   scaled=["score_sum", "score_sq_sum"], weight_=compiled.get("weight"),
                                   relative=relative)  # fmt: skip
    if ps is not None:
        out = _group_units(out, ps, k)
    out = out.with_columns(
        pl.col("score").cast(pl.Float64), (pl.col(CODE) % 4 == 1).alias("label"),
        pl.col("weight", "score_sum", "score_sq_sum", "score_min", "score_max", "weight_sq_sum").cast(pl.Float64),
    )  # fmt: skip
    if ps is not None:  # the estimated attribute's groups: one row per (row of the pass, group)
        out, names = _spread_groups(out, ps, names)
        missing = missing.with_columns(pl.lit(None, ps.dtype).alias(ps.attribute))
    out = out.select(*names, "score", "label", *SCORE_COUNT_COLUMNS)
    if pol is not None and score_col is not None and out.height:
        _warn_inverted(out, pol)
    if with_missing and missing.height:  # invalid rows raised above: these are the missing ones
        zeros = [pl.lit(0.0, pl.Float64).alias(c) for c in ("weight", "score_sum", "score_sq_sum")]
        rows = missing.select(*names, pl.lit(None, pl.Float64).alias("score"), pl.lit(None, pl.Boolean).alias("label"),
                              pl.col("n").cast(pl.Int64), *zeros, pl.lit(None, pl.Float64).alias("score_min"),
                              pl.lit(None, pl.Float64).alias("score_max"), pl.lit(0.0).alias("weight_sq_sum"))  # fmt: skip
        out = pl.concat([out, rows], how="vertical_relaxed")
    return out, names, pol


def _warn_inverted(hist: pl.DataFrame, pol: contract.Polarity) -> None:
    """:class:`~polfair.exceptions.PolarityWarning` when the score's mean is clearly lower on favorable
    labels (:func:`polfair.core.contract.polarity_alarms`).
    """
    t = hist.group_by("label").agg(pl.col("weight", "score_sum", "score_sq_sum", "weight_sq_sum").sum())
    stats = {}
    for r in t.iter_rows(named=True):
        w, ww = r["weight"], r["weight_sq_sum"]
        if w > 0 and ww:  # (Σw² null or 0: weights beyond Float64's squares; no effective size to test with)
            m = r["score_sum"] / w
            stats[r["label"]] = (m, max(r["score_sq_sum"] / w - m * m, 0.0), w * w / ww)
    if True in stats and False in stats:
        for text in contract.polarity_alarms(pol, scores=(stats[True], stats[False])):
            warnings.warn(text, PolarityWarning, stacklevel=user_stacklevel())


#: Per-group sums of an estimated attribute's histogram: output column -> pass column template.
_GROUP_SUMS = {"weight": "__pf_h{}_w", "score_sum": "__pf_h{}_ws", "score_sq_sum": "__pf_h{}_wss",
               "weight_sq_sum": "__pf_h{}_ww"}  # fmt: skip
_GROUP_SHARE = "__pf_h{}_q"
#: The two accumulators of each group's Σw²·p (:func:`polfair.core.contract.weight_squares`'s scales).
_GROUP_W2 = ("__pf_h{}_wwu", "__pf_h{}_wwd")


def _estimated(eng: Any, ps: Any, columns: dict[str, Any], group: list[str], n_keys: int, weighted: bool,
               s: Any) -> list[str]:  # fmt: skip
    """The histogram's columns of an estimated attribute (``columns``, ``group``, in place): its problem
    counts, and per group Σw·p, Σw·p·s, Σw·p·s², Σw²·p and Σp (argmax: the likeliest group's index, a key).

    Returns the extra columns the pass sums (none without an estimated attribute).
    """
    if ps is None:
        return []
    checks = problem_columns(eng, ps)  # the problem counts (and argmax)
    extra = [PROBA_NULL, PROBA_BAD, PROBA_SUM]
    if ps.assignment == "argmax":
        columns |= checks
        group.insert(n_keys, GROUP_INDEX)
        return extra
    columns |= {c: checks[c] for c in extra}
    w = columns[_W] if weighted else None
    hi, lo = 2.0**contract.W2_SHIFT, 2.0**-contract.W2_SHIFT
    for i, (a, q) in enumerate(zip(*group_weights(ps, w))):
        # Σw²·p in the contract's two accumulators (as every Σw²): weights of 1e-200 and 1e200 both fit
        up, down = (a * (hi * hi), a * (lo * lo)) if w is None else ((w * hi) * (a * hi), (w * lo) * (a * lo))
        columns |= {_GROUP_SUMS["weight"].format(i): a, _GROUP_SUMS["score_sum"].format(i): a * s,
                    _GROUP_SUMS["score_sq_sum"].format(i): a * s * s, _GROUP_W2[0].format(i): up,
                    _GROUP_W2[1].format(i): down, _GROUP_SHARE.format(i): q}  # fmt: skip
    sums = [t for k, t in _GROUP_SUMS.items() if k != "weight_sq_sum"]
    extra += [t.format(i) for t in (*sums, *_GROUP_W2, _GROUP_SHARE) for i in range(len(ps.labels))]
    return extra


def _group_units(out: pl.DataFrame, ps: Any, k: int) -> pl.DataFrame:
    """An estimated attribute's per-group sums in the histogram's weight unit ``2^k`` (as
    :func:`polfair.core.contract.weight_units` put the others): Σw, Σw·s, Σw·s² scaled by ``2^-k`` and
    Σw²·p from its two accumulators (``4^-k``·Σw²·p; null where no unit holds it).
    """
    if ps.assignment == "argmax":
        return out
    cols = []
    for i in range(len(ps.labels)):
        up, down = pl.col(_GROUP_W2[0].format(i)), pl.col(_GROUP_W2[1].format(i))
        if k > 0:
            ww = down * 4.0 ** (contract.W2_SHIFT - k)
        elif k < 0:
            ww = up * 4.0 ** (-contract.W2_SHIFT - k)
        else:
            ww = pl.when(up.is_finite()).then(up * 4.0**-contract.W2_SHIFT).otherwise(down * 4.0**contract.W2_SHIFT)
        cols.append(ww.alias(_GROUP_SUMS["weight_sq_sum"].format(i)))
        if k:
            cols += [(pl.col(_GROUP_SUMS[c].format(i)) * 2.0**-k).alias(_GROUP_SUMS[c].format(i))
                     for c in ("weight", "score_sum", "score_sq_sum")]  # fmt: skip
    return out.with_columns(cols)


def _spread_groups(out: pl.DataFrame, ps: Any, names: list[str]) -> tuple[pl.DataFrame, list[str]]:
    """The histogram of the estimated attribute's groups (after the checks; unusable rows left out)."""
    keys = [*names, ps.attribute]
    if ps.assignment == "argmax":
        label = pl.col(GROUP_INDEX).to_physical().cast(pl.UInt8).replace_strict(
            list(range(len(ps.labels))), list(ps.labels), default=None, return_dtype=ps.dtype)  # fmt: skip
        return out.filter(pl.col(GROUP_INDEX).is_not_null()).with_columns(label.alias(ps.attribute)), keys
    keep = [*names, "score", CODE, "label", "score_min", "score_max"]  # (the keys first: the order of the roundings)
    spread = expand_sums(out, ps, keep=keep, count="n", sums=_GROUP_SUMS, share=_GROUP_SHARE)
    return spread, keys


def score_counts(
    data: Any,
    *,
    y_true: IntoExpr | None,
    y_score: IntoExpr,
    protected: IntoExpr | Sequence[IntoExpr] | None,
    favorable: Any = 1,
    weight: IntoExpr | None = None,
    by: IntoExpr | Sequence[IntoExpr] | None = None,
    bins: int | Sequence[float] | str | None = "exact",
    range: tuple[float, float] = (0.0, 1.0),
    engine: Literal["auto", "in-memory", "streaming"] = "auto",
    on_missing: Literal["warn", "raise", "ignore"] = "warn",
    protected_proba: Mapping[str, Mapping[str, IntoExpr | None]] | None = None,
    proba_assignment: Literal["weighted", "argmax"] = "weighted",
    proba_tolerance: float = DEFAULT_TOLERANCE,
    score_label: Any = None,
    with_missing: bool = False,
    relative: bool = False,
) -> pl.DataFrame:
    """Score histogram by group: ONE ``group_by`` over (by, protected, score bin, label).

    Parameters
    ----------
    data
        A polars DataFrame/LazyFrame, pandas DataFrame, pyarrow Table, dict of columns or a
        parquet/CSV path (scanned lazily), or a PySpark DataFrame / DuckDB relation (column names
        only; the pass runs in that engine, under the same input contract).
    y_true
        Label column or expression; ``favorable`` gives its favorable value(s), matched in the
        column's dtype. ``None`` for a score-only histogram (every ``label`` is False). Null and NaN
        labels are missing; a Float label that is not a whole number is an error.
    y_score
        Numeric score column or expression (a probability, a decile, any finite real number).
        Null and NaN are missing; ±inf is an error.
    protected
        Protected attribute(s): names or named expressions (``None`` for none). Null (and NaN in a
        Float key) is its own group.
    favorable
        Favorable label value(s). Default ``1``.
    weight
        Optional finite, non-negative numeric weight column or expression (null and NaN are
        missing; negative or infinite weights are an error).
    by
        Optional column(s) giving one histogram per value (month, model version, ...).
    bins
        ``"exact"`` / ``None`` (one bin per distinct score, every statistic exact), an ``int``
        number of equal-width bins on ``range``, or a sequence of increasing bin edges. See the
        module docstring for the error bounds of binned scores.
    range
        ``(lo, hi)`` of the equal-width bins when ``bins`` is an int. Default ``(0, 1)``. Bins on
        the observed range would need a first pass for the min and max (and would not merge across
        partitions): give the range of the score (e.g. ``(1, 10)`` for deciles) instead.
    engine
        Polars engine for the pass (``"auto"``, ``"streaming"``, ``"in-memory"``).
    on_missing
        ``"warn"`` (default), ``"raise"`` or ``"ignore"``: rows with a null or NaN label, score or
        weight are left out of the histogram; say so with a
        :class:`~polfair.exceptions.MissingValuesWarning`, raise, or say nothing.
    protected_proba, proba_assignment, proba_tolerance
        A protected attribute estimated from proxies (BISG probabilities), as in
        :func:`polfair.confusion_counts`: its key comes after ``protected``. ``"weighted"``: each
        histogram row's ``weight``, ``score_sum``, ``score_sq_sum`` are ``Σ w·p_g``, ``Σ w·p_g·s``,
        ``Σ w·p_g·s²``, ``weight_sq_sum`` is ``Σ w²·p_g`` and ``n`` the rows apportioned to the
        group (whole rows); rows whose probabilities are missing are left out like missing values.
        ``"argmax"``: each row in its likeliest group.
    score_label
        The label ``y_score`` is the score of (the polarity rule, ``docs/contract.md#polarity``).
        ``None``: the favorable label, where that is unambiguous (every favorable label sorts above
        the unfavorable ones, so scikit-learn's ``predict_proba(X)[:, 1]`` means the same); else a
        :class:`~polfair.exceptions.PolarityError`. The score rooms read the favorable label's
        score (their curves and thresholds are on it): ``score_label`` must be a favorable value;
        an unfavorable one is a :class:`~polfair.exceptions.PolarityError` whose message gives the
        fix (``y_score=1 - pl.col(...)``).
    with_missing
        ``True``: the histogram also accounts for those rows, one row per cell with ``score`` and
        ``label`` null whose ``n`` counts them (weights and sums 0). :func:`score_report` uses it
        for ``n`` and ``n_missing``; the curves and sweeps take histograms without it.
    relative
        ``False`` (default): every sum in the data's units; Σw² of weights beyond about 1e±150 then
        does not fit Float64 and is an error naming the weight column. ``True``: such weights are
        held in units of a power of two (``weight``, ``score_sum``, ``score_sq_sum`` scaled by
        ``2^-K``, ``weight_sq_sum`` by ``4^-K``; :func:`polfair.core.contract.weight_units`), which
        changes no statistic of the curves and the score report (all free of the weights' scale):
        :func:`score_report` uses it.

    Returns
    -------
    pl.DataFrame
        Columns ``*by``, ``*protected`` (input dtypes), ``score`` (Float64: the distinct value, or
        the bin's lower edge), ``label`` (Boolean: the label is favorable), then
        :data:`SCORE_COUNT_COLUMNS`: ``n`` (Int64 rows), ``weight`` (Float64 Σw), ``score_sum``
        (Σw·s), ``score_sq_sum`` (Σw·s²), ``score_min``, ``score_max``, ``weight_sq_sum`` (Σw²; Float64). Sorted by the
        keys, ``score`` and ``label``.

    Raises
    ------
    ColumnNotFoundError
        A named column is missing.
    PolarityError
        The score can be read two ways relative to ``favorable`` (``score_label``), or it is the
        unfavorable label's.
    InvalidInputError
        The input has no row; the score or weight is not numeric, a score is infinite, a weight is negative or
        infinite, a label is not a label (a fractional Float), ``favorable`` cannot be held by the
        label's dtype, or a score lies outside the bin edges; missing values with
        ``on_missing="raise"``. The message names the column and shows example values.
    PolfairError
        Invalid ``bins`` / ``range``, or a key name is reserved (``score``, ``label``, ``n``, ...).

    Notes
    -----
    One pass: the input is scanned once (``tests/scores/test_scores_single_pass.py`` counts the
    scans). The tables of partitions merge with :func:`merge_score_counts`. A PySpark DataFrame or
    DuckDB relation runs the same ``group_by``, compiled by the same code, inside its own engine
    via narwhals (optional dependency; column names only) and only the small histogram comes
    back to Polars; the parity suite (``tests/contract``) checks that every engine gives the same
    table.

    Examples
    --------
    >>> import polars as pl
    >>> import polfair as pf
    >>> from polfair.scores import score_counts
    >>> h = score_counts(pf.load_compas(), y_true="two_year_recid", y_score="decile_score", protected="sex")
    >>> h.select("sex", "score", "label", "n").head(2).rows()
    [('Female', 1.0, False, 214), ('Female', 1.0, True, 47)]
    >>> int(h["n"].sum())
    6172
    """
    edges = _check_bins(bins, range)
    request = PassOptions.of(y_true=y_true, y_score=y_score, protected=protected, favorable=favorable, weight=weight,
                             by=by, engine=engine, on_missing=on_missing, protected_proba=protected_proba,
                             proba_assignment=proba_assignment, proba_tolerance=proba_tolerance,
                             score_label=score_label)  # fmt: skip
    out, keys, _ = _histogram(data, request, edges=edges, with_missing=with_missing, relative=relative)
    return _finish(out, keys, edges)


def decision_counts(data: Any, request: PassOptions, *, with_missing: bool = False) -> pl.DataFrame:
    """The histogram of a decision: :func:`score_counts` whose score is 1.0 (favorable decision) or 0.0.

    The decision is read by the input contract's label rules (``favorable`` matched in the
    column's dtype; null and NaN are missing; a Float value that is not a whole number is an
    error suggesting ``y_score=``), on every engine.

    Parameters
    ----------
    data
        As :func:`score_counts` (Spark/DuckDB frames included).
    request
        The pass's options (the door's request): ``y_pred``, the decision column or expression
        (selected / moved forward); ``protected``, ``by``, ``on_missing``, ``protected_proba``,
        ``proba_assignment``, ``proba_tolerance`` as :func:`score_counts`; ``favorable``, the
        favorable (selected) value(s) of ``y_pred`` (for a Boolean decision give ``True`` or
        ``False``; a label value there, ``favorable=1``: True is favorable, is read by the polarity
        rule, :func:`polfair.core.contract.decision_reading`: ``favorable=0`` needs
        ``score_label``); ``score_label``, the label a Boolean decision's True stands for
        (``docs/contract.md#polarity``).
    with_missing
        Also the rows with a missing decision, as :func:`score_counts`'s (``score`` and ``label`` null).

    Returns
    -------
    pl.DataFrame
        The schema of :func:`score_counts`; ``label`` is False.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"hired": ["yes", "no", "yes"], "sex": ["f", "f", "m"]})
    >>> request = PassOptions.of(y_pred="hired", favorable="yes", protected="sex")
    >>> decision_counts(df, request).select("sex", "score", "n").rows()
    [('f', 0.0, 1), ('f', 1.0, 1), ('m', 1.0, 1)]
    """
    out, keys, _ = _histogram(data, request, edges=None, with_missing=with_missing)
    return _finish(out, keys, None)


def _finish(out: pl.DataFrame, keys: list[str], edges: tuple[float, ...] | None) -> pl.DataFrame:
    if edges is not None and out["score_min"].drop_nulls().len():
        lo, hi = float(out["score_min"].min()), float(out["score_max"].max())  # type: ignore[arg-type]
        if lo < edges[0] or hi > edges[-1]:
            msg = (
                f"y_score has values in [{lo}, {hi}], outside the bin edges [{edges[0]}, {edges[-1]}]: "
                "give range=(lo, hi) or bins edges covering every score, or bins='exact'"
            )
            raise InvalidInputError(msg)
    return out.sort([*keys, "score", "label"], nulls_last=True)


def merge_score_counts(tables: Sequence[pl.DataFrame | pl.LazyFrame]) -> pl.DataFrame:
    """Merge score histograms of partitions (same keys and bins) into the histogram of their union.

    Sums ``n``, ``weight``, ``score_sum``, ``score_sq_sum``; takes the min of ``score_min`` and the
    max of ``score_max`` per (keys, ``score``, ``label``). Exact: merging the histograms of a split
    equals the histogram of the whole (for exact bins or the same bin edges).

    Parameters
    ----------
    tables
        Outputs of :func:`score_counts` with the same columns.

    Returns
    -------
    pl.DataFrame
        Same schema as :func:`score_counts`.

    Raises
    ------
    PolfairError
        If no table is given or the tables' columns differ.

    Examples
    --------
    >>> import polfair as pf
    >>> from polfair.scores import score_counts, merge_score_counts
    >>> df = pf.load_compas()
    >>> kw = dict(y_true="two_year_recid", y_score="decile_score", protected="race")
    >>> parts = [score_counts(df.head(3000), **kw), score_counts(df.tail(df.height - 3000), **kw)]
    >>> merge_score_counts(parts).equals(score_counts(df, **kw))
    True
    """
    frames = mergeable_tables(tables, merge="merge_score_counts", what="a score_counts output",
                              required=SCORE_COUNT_COLUMNS, same_order=True)  # fmt: skip
    cols = frames[0].columns
    keys = [c for c in cols if c not in SCORE_COUNT_COLUMNS]
    aggs = [pl.col(c).sum() for c in (*SCORE_COUNT_COLUMNS[:4], *SCORE_COUNT_COLUMNS[6:])]
    aggs += [pl.col("score_min").min(), pl.col("score_max").max()]
    return pl.concat(frames).group_by(keys).agg(aggs).select(cols).sort(keys, nulls_last=True)
