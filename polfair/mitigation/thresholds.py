"""Per-group decision thresholds under a fairness constraint (Hardt, Price & Srebro 2016), from one pass.

Post-processing as fairlearn's ``ThresholdOptimizer`` (fairlearn 0.10+), computed exactly on the
score histogram of each group (:func:`polfair.scores.counts.score_counts`; the documented room
edge ``mitigation -> scores``) instead of on a grid:

* Every deterministic threshold of a group ("select scores ≥ s", and "select nobody") is a point
  (rate, objective). Randomising between two thresholds (the rows between them are selected with a
  probability) reaches every point on the segment between them, so the achievable points of a
  group are the convex hull of its threshold points.
* ``demographic_parity``: one selection rate ``x`` for every group; the total objective
  Σ_g hull_g(x) of concave piecewise-linear functions is maximised exactly at a vertex.
* ``equal_opportunity``: the same with ``x`` = the true positive rate (fairlearn's
  ``"true_positive_rate_parity"``).
* ``equalized_odds``: one (FPR, TPR) point for every group. A group reaches any point under its ROC
  hull by mixing the hull point at that FPR with a score-blind coin that predicts positive with
  probability FPR (the diagonal). The best common point lies on ``min_g ROC-hull_g(FPR)``, a
  concave piecewise-linear function, maximised exactly at one of its breakpoints (hull vertices
  and crossings of two hulls).

The objective is accuracy (expected correct decisions over all rows) or a linear utility of the
four confusion counts. The result's decisions meet the constraint exactly *in expectation* on the
data it was fitted on; a realised decision draws one uniform number per row
(:meth:`GroupThresholds.to_expr`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import polars as pl

from polfair.core._args import as_expr, as_list, output_name
from polfair.core._typing import IntoExpr
from polfair.core.contract import POLARS, Column, score
from polfair.core.contract import key as key_rule
from polfair.core.options import checks_keywords
from polfair.core.passes.spec import check_key_names
from polfair.core.report.build import group_label
from polfair.exceptions import PolfairError
from polfair.scores.counts import score_counts
from polfair.scores.curves import split_missing

__all__ = ["CONSTRAINTS", "GroupThresholds", "group_thresholds", "group_thresholds_from_counts"]

#: Supported constraints.
CONSTRAINTS = ("demographic_parity", "equal_opportunity", "equalized_odds")

_ACCURACY = (1.0, 0.0, 1.0, 0.0)  # utility of (TP, FP, TN, FN)


@dataclass(frozen=True)
class GroupThresholds:
    """Fitted per-group randomised thresholds.

    Attributes
    ----------
    table
        One row per group: the protected keys, ``group`` (String), ``n`` (Int64), the rule
        ``threshold_high`` (Float64: scores ≥ it are selected; ``inf`` = none), ``threshold_low``
        (Float64: scores in [low, high) are selected with probability ``p_between``),
        ``p_between`` (Float64), ``p_coin`` (Float64: probability of ignoring the score and
        predicting positive with probability ``coin``; equalized odds only, else 0), ``coin``
        (Float64), and the expected ``selection_rate``, ``true_positive_rate``,
        ``false_positive_rate``, ``accuracy`` of the new decision on the fitted data.
    constraint
        The constraint.
    objective_value
        The expected objective on the fitted data (accuracy as a fraction, or the total utility).
    score
        The score expression the rule applies to.
    keys
        The protected attributes (named expressions).
    """

    table: pl.DataFrame
    constraint: str
    objective_value: float
    score: pl.Expr = field(repr=False)
    keys: tuple[pl.Expr, ...] = field(repr=False)

    def probability_expr(self) -> pl.Expr:
        """Probability that a row is selected, as a Polars expression (null for an unseen group).

        The row's score and keys are read by the input contract (:mod:`polfair.core.contract`),
        as when fitting: a null, NaN or infinite score has no probability (null), NaN in a Float
        key is the null group and -0.0 is 0.0.

        Returns
        -------
        pl.Expr
            Float64 in [0, 1], named ``"selection_probability"``; null for a row of a group not
            seen at fit time or with a null, NaN or infinite score.

        Examples
        --------
        >>> import polars as pl
        >>> import polfair as pf
        >>> from polfair.mitigation import group_thresholds
        >>> df = pf.load_compas()
        >>> gt = group_thresholds(df, y_true="two_year_recid", y_score="decile_score", protected="sex")
        >>> round(df.select(gt.probability_expr().mean()).item(), 4) == round(gt.table["selection_rate"].mean(), 4)
        True
        """
        sc = score(POLARS, Column("y_score", self.score, pl.Float64()), unit_interval=False)
        s = sc.value
        names = [output_name(k, "protected") for k in self.keys]
        keys = [key_rule(POLARS, Column(n, k, self.table.schema[n])) for k, n in zip(self.keys, names)]
        out: Any = None
        for r in self.table.iter_rows(named=True):
            match = pl.lit(True)
            for k, name in zip(keys, names):
                v = r[name]
                match = match & (k.is_null() if v is None else (k == v))
            h = (
                pl.when(s >= r["threshold_high"])
                .then(1.0)
                .when(s >= r["threshold_low"])
                .then(r["p_between"])
                .otherwise(0.0)
            )
            p = (1.0 - r["p_coin"]) * h + r["p_coin"] * r["coin"]
            out = pl.when(match).then(p) if out is None else out.when(match).then(p)
        if out is None:
            return pl.lit(None, pl.Float64).alias("selection_probability")
        return pl.when(sc.state == 0).then(out.otherwise(None)).cast(pl.Float64).alias("selection_probability")

    def to_expr(self, *, seed: int = 0, row_id: IntoExpr | None = None) -> pl.Expr:
        """The new decision (Boolean), as a Polars expression for ``select`` / ``with_columns``.

        Parameters
        ----------
        seed
            Seed of the per-row uniform draw (only randomised groups use it).
        row_id
            Column or expression identifying a row (e.g. an application id): the draw is
            ``hash(row_id, seed) / 2⁶⁴``, so a row gets the same decision in every run and engine
            batch. Default: the row's position (``pl.int_range(pl.len())``), which depends on row
            order. Polars' hash is stable within a Polars version, not across versions.

        Returns
        -------
        pl.Expr
            Boolean named ``"decision"``: ``uniform < selection probability``; null for rows of a
            group not seen at fit time or with a null, NaN or infinite score (the input contract:
            such a score is missing or invalid, never a decision).

        Examples
        --------
        >>> import polars as pl
        >>> import polfair as pf
        >>> from polfair.mitigation import group_thresholds
        >>> df = pf.load_compas()
        >>> gt = group_thresholds(df, y_true="two_year_recid", y_score="decile_score", protected="race",
        ...                       constraint="demographic_parity")
        >>> out = df.with_columns(gt.to_expr(seed=1, row_id="id"))
        >>> out["decision"].dtype
        Boolean
        """
        rid = pl.int_range(pl.len(), dtype=pl.UInt64) if row_id is None else as_expr(row_id, "row_id")
        u = rid.hash(seed=seed).cast(pl.Float64) / 2.0**64
        return (u < self.probability_expr()).alias("decision")


def _hull(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Upper concave hull of points (x ascending): vertex x, y and the indices of the points."""
    order = np.lexsort((-y, x))
    idx: list[int] = []
    for i in order:
        if idx and x[idx[-1]] == x[i]:
            continue  # same x, lower y
        while len(idx) >= 2:
            a, b = idx[-2], idx[-1]
            # drop b if it is on or below the segment a -> i
            if (x[b] - x[a]) * (y[i] - y[a]) - (y[b] - y[a]) * (x[i] - x[a]) >= 0:
                idx.pop()
            else:
                break
        idx.append(int(i))
    ii = np.array(idx)
    return x[ii], y[ii], ii


@dataclass
class _Group:
    label: str
    keys: dict[str, Any]
    n: int
    scores: np.ndarray  # distinct scores, descending (threshold k >= 1 selects scores >= scores[k-1])
    tp: np.ndarray  # at thresholds k = 0..K (k = 0: nobody)
    fp: np.ndarray
    P: float
    N: float

    def utility(self, u: tuple[float, float, float, float]) -> np.ndarray:
        return u[0] * self.tp + u[1] * self.fp + u[2] * (self.N - self.fp) + u[3] * (self.P - self.tp)

    def threshold(self, k: int) -> float:
        return math.inf if k == 0 else float(self.scores[k - 1])


def _groups(hist: pl.DataFrame, keys: list[str]) -> list[_Group]:
    out = []
    lab = pl.col("label")
    cells = (
        hist.group_by([*keys, "score"])
        .agg(
            pl.col("n").sum(),
            pl.col("weight").filter(lab).sum().alias("pos"),
            pl.col("weight").filter(~lab).sum().alias("neg"),
        )
        .sort([*keys, "score"], descending=[*([False] * len(keys)), True], nulls_last=True)
        .with_columns(group_label(keys).alias("__pf_label"))  # the report's labels ("true", quoted "null", ...)
    )
    for key, part in cells.group_by(keys, maintain_order=True):
        tp = np.r_[0.0, np.cumsum(part["pos"].to_numpy())]
        fp = np.r_[0.0, np.cumsum(part["neg"].to_numpy())]
        label = str(part["__pf_label"][0])
        out.append(_Group(label, dict(zip(keys, key)), int(part["n"].sum()), part["score"].to_numpy(), tp, fp,
                          float(tp[-1]), float(fp[-1])))  # fmt: skip
    return out


def _mix(xs: np.ndarray, idx: np.ndarray, x: float) -> tuple[int, int, float]:
    """Hull vertices (threshold indices hi_k <= lo_k) around ``x`` and the weight of the lower one."""
    j = int(np.searchsorted(xs, x, side="right")) - 1
    j = min(max(j, 0), len(xs) - 1)
    if j == len(xs) - 1 or xs[j] == x:
        return int(idx[j]), int(idx[j]), 0.0
    q = (x - xs[j]) / (xs[j + 1] - xs[j])
    return int(idx[j]), int(idx[j + 1]), float(q)


def _rule(g: _Group, k_hi: int, k_lo: int, q: float) -> tuple[float, float, float]:
    if q == 0.0 or k_hi == k_lo:
        t = g.threshold(k_hi)
        return t, t, 0.0
    return g.threshold(k_hi), g.threshold(k_lo), q


def _solve_parity(groups: list[_Group], u: tuple[float, float, float, float], rate: str) -> tuple[float, list[tuple]]:
    hulls = []
    for g in groups:
        den = g.P + g.N if rate == "selection" else g.P
        x = (g.tp + g.fp) / den if rate == "selection" else g.tp / den
        hx, hy, hi = _hull(x, g.utility(u))
        hulls.append((hx, hy, hi))
    cand = np.unique(np.concatenate([h[0] for h in hulls]))
    total = sum(np.interp(cand, h[0], h[1]) for h in hulls)
    best = float(cand[int(np.argmax(total))])
    rules = []
    for g, (hx, _hy, hi) in zip(groups, hulls):
        k_hi, k_lo, q = _mix(hx, hi, best)
        rules.append((*_rule(g, k_hi, k_lo, q), 0.0, 0.0))
    return best, rules


def _solve_equalized_odds(groups: list[_Group], u: tuple[float, float, float, float]) -> tuple[float, list[tuple]]:
    hulls = []
    for g in groups:
        hx, hy, hi = _hull(g.fp / g.N, g.tp / g.P)
        hulls.append((hx, hy, hi))
    grid = np.unique(np.concatenate([h[0] for h in hulls]))
    vals = np.array([np.interp(grid, h[0], h[1]) for h in hulls])
    cand = [grid]
    for i in range(len(hulls)):  # crossings of two hulls inside a grid interval
        for j in range(i + 1, len(hulls)):
            d = vals[i] - vals[j]
            s = np.nonzero(d[:-1] * d[1:] < 0)[0]
            if len(s):
                cand.append(grid[s] + (grid[s + 1] - grid[s]) * d[s] / (d[s] - d[s + 1]))
    xs = np.unique(np.concatenate(cand))
    ys = np.min([np.interp(xs, h[0], h[1]) for h in hulls], axis=0)
    A = sum(g.P for g in groups) * (u[0] - u[3])
    B = sum(g.N for g in groups) * (u[1] - u[2])
    obj = A * ys + B * xs
    i = int(np.argmax(obj))
    fpr, tpr = float(xs[i]), float(ys[i])
    rules = []
    for g, (hx, hy, hi) in zip(groups, hulls):
        k_hi, k_lo, q = _mix(hx, hi, fpr)
        top = float(np.interp(fpr, hx, hy))
        lam = 0.0 if top - fpr <= 1e-15 else min(1.0, max(0.0, (top - tpr) / (top - fpr)))
        rules.append((*_rule(g, k_hi, k_lo, q), lam, fpr))
    return tpr, rules


#: The rule table's own columns (after the keys): no protected key may take their names.
_TABLE_COLUMNS = ("group", "n", "threshold_high", "threshold_low", "p_between", "p_coin", "coin", "selection_rate",
                  "true_positive_rate", "false_positive_rate", "accuracy")


def group_thresholds_from_counts(
    hist: pl.DataFrame,
    *,
    protected: Sequence[str],
    constraint: Literal["demographic_parity", "equal_opportunity", "equalized_odds"] = "demographic_parity",
    objective: str | tuple[float, float, float, float] = "accuracy",
) -> pl.DataFrame:
    """The per-group rule table of :func:`group_thresholds` from a score histogram (no ``by``).

    Parameters
    ----------
    hist
        :func:`~polfair.scores.counts.score_counts` output.
    protected
        Its protected key columns (every group is a cell of their joint values).
    constraint, objective
        As :func:`group_thresholds`.

    Returns
    -------
    pl.DataFrame
        The ``table`` of :class:`GroupThresholds`.

    Examples
    --------
    >>> import polfair as pf
    >>> from polfair.scores import score_counts
    >>> from polfair.mitigation.thresholds import group_thresholds_from_counts
    >>> h = score_counts(pf.load_compas(), y_true="two_year_recid", y_score="decile_score", protected="sex")
    >>> t = group_thresholds_from_counts(h, protected=["sex"], constraint="demographic_parity")
    >>> t["selection_rate"].n_unique()
    1
    """
    if constraint not in CONSTRAINTS:
        msg = f"constraint must be one of {CONSTRAINTS}, got {constraint!r}"
        raise PolfairError(msg)
    if isinstance(objective, str):
        if objective != "accuracy":
            msg = f"objective must be 'accuracy' or a utility tuple (tp, fp, tn, fn), got {objective!r}"
            raise PolfairError(msg)
        u = _ACCURACY
    else:
        u = tuple(float(v) for v in objective)  # type: ignore[assignment]
        if len(u) != 4 or not all(math.isfinite(v) for v in u):
            msg = f"a utility objective is 4 finite numbers (tp, fp, tn, fn), got {objective!r}"
            raise PolfairError(msg)
    check_key_names((), list(protected), also_reserved=_TABLE_COLUMNS)
    groups = _groups(hist, list(protected))
    if not groups:
        msg = "group_thresholds: no rows with a label, score and group"
        raise PolfairError(msg)
    need_p = constraint in ("equal_opportunity", "equalized_odds")
    bad = [g.label for g in groups if (need_p and g.P <= 0) or (constraint == "equalized_odds" and g.N <= 0)]
    if bad:
        msg = (
            f"{constraint} needs favorable and unfavorable labels in every group; groups {bad} lack "
            "one: merge or drop them (e.g. a coarser protected attribute)"
        )
        raise PolfairError(msg)
    if constraint == "equalized_odds":
        if (u[0] - u[3]) <= 0:
            msg = "equalized_odds needs a utility that rewards true positives over false negatives"
            raise PolfairError(msg)
        _, rules = _solve_equalized_odds(groups, u)
    else:
        _, rules = _solve_parity(groups, u, "selection" if constraint == "demographic_parity" else "tpr")
    rows = []
    for g, (hi, lo, q, lam, coin) in zip(groups, rules):
        tp, fp = _expected(g, hi, lo, q)
        tp = (1 - lam) * tp + lam * coin * g.P
        fp = (1 - lam) * fp + lam * coin * g.N
        W = g.P + g.N
        rows.append({**g.keys, "group": g.label, "n": g.n, "threshold_high": hi, "threshold_low": lo, "p_between": q,
                     "p_coin": lam, "coin": coin, "selection_rate": (tp + fp) / W if W else None,
                     "true_positive_rate": tp / g.P if g.P else None, "false_positive_rate": fp / g.N if g.N else None,
                     "accuracy": (tp + g.N - fp) / W if W else None, "__pf_u": u[0] * tp + u[1] * fp
                     + u[2] * (g.N - fp) + u[3] * (g.P - tp), "__pf_w": W})  # fmt: skip
    key_schema = {k: hist.schema[k] for k in protected}
    return pl.DataFrame(rows, schema={**key_schema, "group": pl.String, "n": pl.Int64, **dict.fromkeys(
        ["threshold_high", "threshold_low", "p_between", "p_coin", "coin", "selection_rate", "true_positive_rate",
         "false_positive_rate", "accuracy", "__pf_u", "__pf_w"], pl.Float64)})  # fmt: skip


def _expected(g: _Group, hi: float, lo: float, q: float) -> tuple[float, float]:
    """Expected TP, FP of the rule (scores >= hi selected, [lo, hi) with probability q)."""
    k_hi = 0 if math.isinf(hi) else int(np.searchsorted(-g.scores, -hi, side="right"))
    k_lo = 0 if math.isinf(lo) else int(np.searchsorted(-g.scores, -lo, side="right"))
    tp = g.tp[k_hi] + q * (g.tp[k_lo] - g.tp[k_hi])
    fp = g.fp[k_hi] + q * (g.fp[k_lo] - g.fp[k_hi])
    return float(tp), float(fp)


@checks_keywords
def group_thresholds(
    data: Any,
    *,
    y_true: IntoExpr,
    y_score: IntoExpr,
    protected: IntoExpr | Sequence[IntoExpr],
    constraint: Literal["demographic_parity", "equal_opportunity", "equalized_odds"] = "demographic_parity",
    objective: str | tuple[float, float, float, float] = "accuracy",
    favorable: Any = 1,
    weight: IntoExpr | None = None,
    bins: int | Sequence[float] | str | None = "exact",
    score_label: Any = None,
    on_missing: Literal["warn", "raise", "ignore"] = "warn",
) -> GroupThresholds:
    """Per-group (randomised) thresholds that satisfy a fairness constraint and maximise accuracy.

    Parameters
    ----------
    data
        Rows with labels and scores (polars/pandas/pyarrow frame, dict or parquet/CSV path).
    y_true
        Label column or expression; ``favorable`` its favorable value(s).
    y_score
        Numeric score; the decision is ``score >= threshold`` (randomised between two thresholds
        where needed).
    protected
        Protected attribute(s); a group is a cell of their joint values (as fairlearn's
        ``sensitive_features`` with several columns).
    constraint
        ``"demographic_parity"`` (equal selection rates), ``"equal_opportunity"`` (equal true
        positive rates) or ``"equalized_odds"`` (equal TPR and FPR).
    objective
        ``"accuracy"`` or a utility ``(u_tp, u_fp, u_tn, u_fn)`` per (weighted) row, maximised in
        total.
    favorable
        Favorable label value(s).
    weight
        Optional non-negative weights.
    bins
        As :func:`~polfair.scores.counts.score_counts` (``"exact"``: thresholds at every distinct
        score; an int: at bin edges, for continuous scores on large data).
    score_label
        The label the score is of (``docs/contract.md#polarity``): the favorable label where that
        is unambiguous, else a :class:`~polfair.exceptions.PolarityError`; a favorable value (the
        thresholds select the favorable decision), as :func:`~polfair.scores.counts.score_counts`.
    on_missing
        Rows with a missing label, prediction, score or weight: ``"warn"`` (default), ``"raise"`` or
        ``"ignore"``, as in :func:`polfair.fairness_report`.

    Returns
    -------
    GroupThresholds
        ``.table`` (per-group rules and their expected rates), ``.to_expr()`` (the new Boolean
        decision as a Polars expression), ``.probability_expr()``, ``.objective_value``.

    Raises
    ------
    PolfairError
        Unknown constraint or objective; a group without positives (equal opportunity,
        equalized odds) or negatives (equalized odds).

    Notes
    -----
    Hardt, Price & Srebro, "Equality of Opportunity in Supervised Learning", NeurIPS 2016;
    fairlearn's ``ThresholdOptimizer`` (``constraints="demographic_parity"``,
    ``"true_positive_rate_parity"``, ``"equalized_odds"``; ``objective="accuracy_score"``), which
    searches a grid of 1000 points: here the optimum over the hulls is exact, so the constraint is
    met exactly (in expectation) and the objective is at least fairlearn's (tested).

    Examples
    --------
    >>> import polfair as pf
    >>> from polfair.mitigation import group_thresholds
    >>> gt = group_thresholds(pf.load_compas(), y_true="two_year_recid", y_score="decile_score",
    ...                       protected="race", constraint="equal_opportunity")
    >>> gt.table["true_positive_rate"].round(10).n_unique()
    1
    >>> round(gt.objective_value, 4)
    0.6501
    """
    keys = [k if isinstance(k, str) else as_expr(k, "protected") for k in as_list(protected)]  # names: any engine
    if not keys:
        msg = "protected must name at least one column or expression"
        raise PolfairError(msg)
    hist = score_counts(data, y_true=y_true, y_score=y_score, protected=keys, favorable=favorable, weight=weight,
                        bins=bins, score_label=score_label, on_missing=on_missing, with_missing=True)  # fmt: skip
    hist = split_missing(hist)[1]  # every row missing: the reports' one error
    names = [k if isinstance(k, str) else output_name(k, "protected") for k in keys]
    table = group_thresholds_from_counts(hist, protected=names, constraint=constraint, objective=objective)
    total_w = float(table["__pf_w"].sum())
    value = float(table["__pf_u"].sum())
    if objective == "accuracy":
        value = value / total_w if total_w else float("nan")
    named = [as_expr(k, "protected").alias(n) for k, n in zip(keys, names)]  # the fitted rule reads Polars frames
    return GroupThresholds(table.drop("__pf_u", "__pf_w"), constraint, value, as_expr(y_score, "y_score"), tuple(named))
