"""The input contract's polarity rule: what a score and a Boolean prediction mean relative to ``favorable``.

Part of :mod:`polfair.core.contract` (the public module re-exports this one's public names). Two
conventions meet here. scikit-learn's ``predict_proba(X)[:, 1]`` is the probability of
``classes_[1]``, the *larger* of two labels in sort order (1 of 0/1, ``True``, ``"yes"`` of
``"no"``/``"yes"``, 2 of German credit's 1/2); a Boolean made from it (``p >= 0.5``, or ``y == 1``)
is True for that label. aif360 reads scores as the probability of the *favorable* label. The two
agree exactly when every favorable label sorts above every unfavorable one; elsewhere a score, and
a Boolean ``y_pred`` next to non-Boolean labels, has two plausible readings, and polfair never
guesses: the one parameter ``score_label`` says which label the score is the probability of, and
which label a Boolean prediction's True stands for.

The rule (:func:`polarity`, rendered as the table of ``docs/contract.md``, :func:`polarity_table`):

* ``score_label`` given: a favorable value -> ``y_score`` is P(favorable), True = favorable; an
  unfavorable value ``u`` -> ``y_score`` is P(y = u), polfair reads P(favorable) = 1 - y_score and
  ``y_score >= threshold`` (or True) predicts ``u``; then ``u`` must be the only unfavorable label
  (checked in the pass when the dtype and ``unfavorable=`` do not tell).
* ``score_label`` not given: decided **before the pass** where the dtype or the options tell
  (Boolean labels; Enum categories; ``unfavorable=`` given; a numeric ``favorable`` that is 0 or
  below, e.g. ``favorable=0`` on 0/1 labels): agree -> P(favorable), else :class:`PolarityError`.
  Where only the data tells (String/Categorical labels, numeric labels such as 1/2), the pass marks
  the unfavorable labels that sort above the favorable one (the label's state field, no extra
  aggregation); any such row stops the report after the pass with the same error, naming the labels
  found.

After the pass, :func:`polarity_alarms` turns the population's accuracy below 0.5, or scores higher
on unfavorable than on favorable labels, into :class:`~polfair.exceptions.PolarityWarning` text.
"""

from __future__ import annotations

import decimal
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import polars as pl

from polfair.core.contract.compile import Column, Compiled, Engine, check_dtype, label
from polfair.core.contract.rules import dtype_kind
from polfair.core.values import coerce_value, coerce_values
from polfair.exceptions import InvalidInputError, PolarityError

__all__ = ["Polarity", "cell_alarms", "compile_labels", "decision_reading", "polarity", "polarity_alarms", "written",
           "polarity_table"]

#: Where the rule is documented (messages point there).
DOCS = "docs/contract.md#polarity"


def _sort_key(v: Any, kind: str) -> Any:
    """A label value's place in scikit-learn's sort order (numbers numerically, text by code point)."""
    if kind in ("categorical", "enum", "string"):
        return str(v)
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, decimal.Decimal):
        return float(v)
    return v


def written(col: Column) -> str:
    """A role as the user wrote it, for messages: the column's name, or an expression's text
    (``pl.col("pred") == 0`` is ``[(col("pred")) == (dyn int: 0)]``, not its root column ``pred``).

    Examples
    --------
    >>> written(Column("pred", pl.col("pred") == 0, pl.Boolean()))
    '[(col("pred")) == (dyn int: 0)]'
    >>> written(Column("pred", pl.col("pred"), pl.Boolean()))
    'pred'
    """
    e = col.expr
    if isinstance(e, pl.Expr) and not e.meta.is_column():
        return str(e)
    return col.name


def _shown(values: Sequence[Any]) -> str:
    return repr(values[0]) if len(values) == 1 else repr(list(values))


@dataclass(frozen=True)
class Polarity:
    """How a pass reads ``y_score`` and a Boolean ``y_pred`` against ``favorable`` (from :func:`polarity`).

    Attributes
    ----------
    score_favorable
        ``True``: ``y_score`` is the favorable label's probability and a Boolean prediction's True is
        favorable; ``False``: both are about the unfavorable label ``score_label`` (P(favorable) is
        ``1 - y_score``, True is unfavorable).
    score_label
        The user's ``score_label`` in the label's dtype, or ``None`` (not given).
    check
        What the pass checks in the data: ``"above"`` (no unfavorable label may sort above the
        favorable one: the readings would differ), ``"other"`` (no unfavorable label but
        ``score_label``), or ``None``.
    reads
        The inputs the rule applies to: ``"y_score"`` and/or ``"y_pred"`` (a Boolean prediction
        next to non-Boolean labels); empty when the pass reads neither.
    label, score, pred
        Column names, for messages.
    dtype
        The label's dtype.
    favorable, unfavorable
        The label values, in the label's dtype.
    """

    score_favorable: bool = True
    score_label: Any = None
    check: str | None = None
    reads: tuple[str, ...] = ()
    label: str = "y"
    score: str | None = None
    pred: str | None = None
    dtype: Any = field(default=None, repr=False)
    favorable: tuple[Any, ...] = ()
    unfavorable: tuple[Any, ...] | None = None

    # -- what the pass computes -------------------------------------------------------------

    def favorable_score(self, s: Any) -> Any:
        """The favorable label's probability from the score expression ``s`` (``1 - s`` when the score is
        of the unfavorable ``score_label``).
        """
        return s if self.score_favorable else 1.0 - s

    def mark(self, eng: Any, x: Any) -> Any | None:
        """Boolean expression over a non-missing, non-favorable label ``x``: the row breaks the reading
        (``check``); ``None`` when nothing is checked.
        """
        if self.check is None:
            return None
        kind = dtype_kind(self.dtype)
        if self.check == "other":
            return ~eng.is_in(x, self.dtype, (self.score_label,))
        lowest = min(self.favorable, key=lambda v: _sort_key(v, kind))
        if kind in ("categorical", "enum"):
            return x.cast(eng.ns.String) > eng.lit(str(lowest))
        if kind == "decimal":
            return eng.float64(x) > float(lowest)
        return x > eng.lit(lowest)

    # -- messages ---------------------------------------------------------------------------

    def _subject(self) -> str:
        parts = []
        if "y_score" in self.reads:
            parts.append(f"y_score={self.score!r}")
        if "y_pred" in self.reads:
            parts.append(f"the Boolean y_pred={self.pred!r}")
        return " and ".join(parts) or "y_score"

    def ambiguity(self, larger: Any | None = None, found: Sequence[Any] = ()) -> str:
        """The message of an ambiguous reading: the two readings, the fix of each (one line).

        ``larger``: the label scikit-learn's ``predict_proba(X)[:, 1]`` would be about (``None``:
        not known before the pass); ``found``: unfavorable labels seen above the favorable one.
        """
        fav = _shown(self.favorable)
        one = self.favorable[0]
        other = f"the larger label {larger!r}" if larger is not None else "the larger label, 1 on 0/1 labels"
        b = repr(larger) if larger is not None else "1"
        score, pred = "y_score" in self.reads, "y_pred" in self.reads
        seen = f" (it holds {_shown(list(found))} above it)" if found else ""
        if score and pred:
            what = "the score can be the probability of, and True can stand for,"
            how = "scikit-learn's predict_proba(X)[:, 1], and predict_proba(X)[:, 1] >= 0.5"
            say_a, say_b = f"y_score is P(y = {one!r}), True = {one!r}", f"y_score is P(y = {b}), True = {b}"
        elif score:
            what = "it can be the probability of"
            how = "scikit-learn's predict_proba(X)[:, 1]"
            say_a, say_b = f"y_score is P(y = {one!r})", f"y_score is P(y = {b})"
        else:
            what = "True can stand for"
            how = f"as y_pred == {b} or predict_proba(X)[:, 1] >= 0.5 give"
            say_a, say_b = f"True = {one!r}", f"True = {b}"
        tail = f"; polfair reads P(favorable) = 1 - y_score, and y_score >= threshold predicts {b}" if score else ""
        return (
            f"{self._subject()} {'are' if score and pred else 'is'} ambiguous next to y_true={self.label!r} "
            f"({self.dtype}) with favorable={fav}{seen}: {what} the favorable label {fav} (aif360's reading) or "
            f"{other} ({how}). Say which: score_label={one!r} ({say_a}) or score_label={b} ({say_b}{tail}). "
            f"See {DOCS}"
        )

    def others_message(self, found: Sequence[Any]) -> str:
        """The message when ``score_label`` names one unfavorable label but the label has others."""
        return (
            f"score_label={self.score_label!r} says {self._subject()} is about the label {self.score_label!r}, but "
            f"y_true={self.label!r} also has the unfavorable label(s) {_shown(list(found)) if found else '(others)'}: "
            f"P(favorable) is then not 1 - y_score. Give the favorable label's probability with "
            f"score_label={self.favorable[0]!r}, or map the labels to two classes first. See {DOCS}"
        )

    def score_room_message(self) -> str:
        """The score rooms' refusal of a score of the unfavorable ``score_label``, with the fix."""
        fav = self.favorable[0]
        return (
            f"score_label={self.score_label!r}: y_score={self.score!r} is the probability of the unfavorable label "
            f"{self.score_label!r}, but the score rooms (score_counts, score_report, the curves, threshold_sweep, "
            f"group_thresholds) read the favorable label's score, and their curves and thresholds are on it. Pass "
            f"the favorable label's score with score_label={fav!r}: y_score=1 - pl.col({self.score!r}) for a "
            f"probability, -pl.col({self.score!r}) for another score (on Spark/DuckDB, add that column in the "
            f"engine). See {DOCS}"
        )

    def reading(self) -> str:
        """How the pass reads the score / Boolean prediction, in words (for warnings and provenance)."""
        if not self.reads:
            return ""
        target = _shown(self.favorable) if self.score_favorable else repr(self.score_label)
        parts = []
        if "y_score" in self.reads:
            parts.append(f"y_score={self.score!r} is read as P(y = {target})")
        if "y_pred" in self.reads:
            parts.append(f"True of y_pred={self.pred!r} as y = {target}")
        return " and ".join(parts)


def _known_others(kind: str, dtype: Any, fav: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """The non-favorable labels the dtype allows, when it tells (Boolean, Enum); else ``None``."""
    if kind == "boolean":
        return tuple(v for v in (False, True) if v not in fav)
    if kind == "enum":
        return tuple(c for c in dtype.categories.to_list() if c not in fav)
    return None


def polarity(
    dtype: pl.DataType,
    favorable: Sequence[Any],
    unfavorable: Sequence[Any] | None,
    score_label: Any = None,
    *,
    label: str = "y",
    score: str | None = None,
    pred: str | None = None,
) -> Polarity:
    """THE polarity rule, decided before the pass (module docstring; ``docs/contract.md#polarity``).

    Parameters
    ----------
    dtype
        The label's (``y_true``'s) dtype.
    favorable, unfavorable
        The label values (:func:`polfair.core.passes.spec.label_values`); matched in ``dtype``.
    score_label
        The user's ``score_label`` (``None``: not given).
    label
        The label column's name (messages).
    score
        The score column's name when the pass reads a score, else ``None``.
    pred
        The prediction column's name when it is a Boolean next to non-Boolean labels, else ``None``.

    Returns
    -------
    Polarity
        ``check`` says what the pass must verify in the data.

    Raises
    ------
    PolarityError
        The two readings differ and ``score_label`` does not say which (before the pass where the
        dtype or the options tell); ``score_label`` names an unfavorable label but there are several.
    InvalidInputError
        ``score_label`` cannot be held by the label's dtype, or (with ``unfavorable=``) is neither
        favorable nor unfavorable.

    Examples
    --------
    >>> import polars as pl
    >>> polarity(pl.Int64, (1,), None, score="p").check
    'above'
    >>> polarity(pl.Int64, (0,), None, 1, score="p").score_favorable
    False
    >>> polarity(pl.Int64, (0,), None, score="p_deny", label="deny")
    Traceback (most recent call last):
    ...
    polfair.exceptions.PolarityError: y_score='p_deny' is ambiguous next to y_true='deny' (Int64) with favorable=0: ...
    """
    kind = dtype_kind(dtype)
    fav = tuple(v for v in coerce_values(favorable, dtype, option="favorable", column=label) if v is not None)
    unf = None if unfavorable is None else tuple(
        v for v in coerce_values(unfavorable, dtype, option="unfavorable", column=label) if v is not None)  # fmt: skip
    reads = tuple(r for r, c in (("y_score", score), ("y_pred", pred)) if c is not None)
    base = Polarity(reads=reads, label=label, score=score, pred=pred, dtype=dtype, favorable=fav, unfavorable=unf)
    if score_label is not None:
        sl = coerce_value(score_label, dtype, option="score_label", column=label)
        if sl in fav:
            return replace(base, score_label=sl) if reads else _unused_score_label(replace(base, score_label=sl))
        out = replace(base, score_label=sl, score_favorable=False)
        others = unf if unf is not None else _known_others(kind, dtype, fav)
        if unf is not None and sl not in unf:
            msg = (f"score_label={sl!r} is neither favorable {_shown(fav)} nor unfavorable {_shown(unf)}: name the "
                   f"label y_score is the probability of (and a Boolean y_pred's True stands for)")  # fmt: skip
            raise InvalidInputError(msg)
        if not reads:
            return _unused_score_label(out)
        if others is not None:
            extra = [o for o in others if o != sl]
            if extra:
                raise PolarityError(out.others_message(extra))
            return out
        return replace(out, check="other")
    if not reads:
        return base
    others = unf if unf is not None else _known_others(kind, dtype, fav)
    if others is not None:
        low = min(_sort_key(v, kind) for v in fav)
        above = sorted((o for o in others if _sort_key(o, kind) > low), key=lambda o: _sort_key(o, kind))
        if above:
            raise PolarityError(base.ambiguity(above[-1], above))
        return base
    if kind in ("integer", "float", "decimal") and all(_sort_key(v, kind) <= 0 for v in fav):
        raise PolarityError(base.ambiguity(None))
    return replace(base, check="above")


def decision_reading(dtype: pl.DataType, favorable: Sequence[Any], score_label: Any = None, *, column: str = "y_pred"
                     ) -> bool | None:  # fmt: skip
    """A decision read without labels (``adverse_impact``, ``decision_counts``, ``proxy_scan``): whether a
    Boolean decision's True is favorable, when ``favorable`` was not given as True/False.

    ``favorable`` is then a label value (``1``, ``0``): ``favorable=1`` means True (the label 1)
    is favorable; ``favorable=0`` could mean False (the label 0) or "the favorable label 0, which
    True stands for": :class:`PolarityError` unless ``score_label`` (the label True stands for) says.

    Returns
    -------
    bool or None
        ``None``: not a Boolean decision, or ``favorable`` given as Booleans (matched in the dtype).

    Raises
    ------
    PolarityError
        A Boolean decision with ``favorable=0`` (or any value but 1) and no ``score_label``.

    Examples
    --------
    >>> import polars as pl
    >>> decision_reading(pl.Boolean, (1,)), decision_reading(pl.Boolean, (True,)), decision_reading(pl.Boolean, (0,), 0)
    (True, None, True)
    """
    if dtype_kind(dtype) != "boolean" or all(isinstance(v, bool) for v in favorable):
        return None
    if score_label is not None:
        return any(v == score_label for v in favorable)
    if all(v == 1 for v in favorable):
        return True
    fav = _shown(list(favorable))
    msg = (
        f"the Boolean y_pred={column!r} is ambiguous with favorable={fav}: False could be the favorable label "
        f"{fav}, or True could stand for it (a decision such as p_approve >= 0.5). Say which: score_label=1 "
        f"(True = 1, so False is favorable) or score_label={favorable[0]!r} (True = {favorable[0]!r}, the "
        f"favorable decision), or give favorable=True / favorable=False. See {DOCS}"
    )
    raise PolarityError(msg)


def _unused_score_label(p: Polarity) -> Polarity:
    """Refuse ``score_label`` where the pass reads neither a score nor a Boolean prediction (issue 38:
    an option a door accepts but would not use is an error naming it).
    """
    msg = (f"score_label={p.score_label!r} is not used: it names the label y_score is the probability of (and a "
           f"Boolean y_pred's True stands for), and this pass reads no score and no Boolean prediction next to "
           f"y_true={p.label!r}; remove score_label")  # fmt: skip
    raise InvalidInputError(msg)


def compile_labels(
    eng: Engine,
    *,
    y_true: Column | None,
    y_pred: Column | None,
    favorable: Sequence[Any],
    unfavorable: Sequence[Any] | None,
    score_label: Any = None,
    score: str | None = None,
) -> tuple[dict[str, Compiled], Polarity | None]:
    """The label and prediction of a pass, compiled under the polarity rule (every pass reads them so).

    Parameters
    ----------
    eng
        The engine.
    y_true, y_pred
        The label and the prediction columns (either may be ``None``).
    favorable, unfavorable
        The label values (:func:`polfair.core.passes.spec.label_values`).
    score_label
        The user's ``score_label``.
    score
        The score column's name when the pass reads a score (its polarity is decided here too).

    Returns
    -------
    (dict, Polarity or None)
        ``{"y_true": ..., "y_pred": ...}`` (those given) and the rule's decision (``None``
        without a label): :meth:`Polarity.favorable_score` turns the score into the favorable
        label's probability, ``score_favorable`` says what ``score >= threshold`` predicts.

    Raises
    ------
    PolarityError, InvalidInputError
        As :func:`polarity` and :func:`decision_reading`; and the label rules of
        :func:`polfair.core.contract.label`.

    Examples
    --------
    >>> import polars as pl
    >>> from polfair.core.contract import POLARS, Column
    >>> y, p = Column("y", pl.col("y"), pl.Int64()), Column("p", pl.col("p"), pl.Boolean())
    >>> compiled, pol = compile_labels(POLARS, y_true=y, y_pred=p, favorable=(0,), unfavorable=None, score_label=1)
    >>> pl.DataFrame({"y": [0, 1], "p": [True, False]}).select(compiled["y_pred"].state)["literal"].to_list()
    [0, 1]
    """
    compiled: dict[str, Compiled] = {}
    pol = None
    for role, c in (("y_true", y_true), ("y_pred", y_pred)):
        if c is not None:
            check_dtype(role, c)  # before the rule reads the dtype
    boolean_pred = (y_pred is not None and dtype_kind(y_pred.dtype) == "boolean"
                    and (y_true is None or dtype_kind(y_true.dtype) != "boolean"))  # fmt: skip
    if y_true is None and y_pred is not None and score_label is not None and not boolean_pred and score is None:
        msg = (f"score_label={score_label!r} is not used: it says what a Boolean y_pred's True stands for, and "
               f"y_pred={y_pred.name!r} ({y_pred.dtype}) holds the labels themselves; remove score_label")  # fmt: skip
        raise InvalidInputError(msg)
    if y_true is not None:
        pol = polarity(y_true.dtype, favorable, unfavorable, score_label, label=y_true.name, score=score,
                       pred=written(y_pred) if boolean_pred and y_pred is not None else None)  # fmt: skip
        compiled["y_true"] = label(eng, y_true, favorable, unfavorable, role="y_true", polarity=pol)
    if y_pred is not None:
        if not boolean_pred:
            reading = None
        elif pol is not None:
            reading = pol.score_favorable
        else:
            reading = decision_reading(y_pred.dtype, favorable, score_label, column=written(y_pred))
        compiled["y_pred"] = label(eng, y_pred, favorable, unfavorable, role="y_pred", boolean=reading)
    return compiled, pol


#: One-sided level of the alarms: an inversion is reported when chance alone would show it less often
#: (a model at chance on many rows warns 1 time in 1,000).
ALARM_LEVEL = 0.001


def _inverted(z: float) -> bool:
    """A one-sided z statistic beyond the alarm level (the data show the inversion, not noise)."""
    from scipy.special import ndtr

    return z == z and float(ndtr(-z)) < ALARM_LEVEL


def polarity_alarms(
    pol: Polarity | None,
    *,
    accuracy: tuple[float, float] | None = None,
    scores: tuple[tuple[float, float, float], tuple[float, float, float]] | None = None,
) -> list[str]:
    """Warnings (text) that the population's predictions or scores look inverted relative to ``favorable``.

    An alarm needs evidence, not noise: a one-sided z test at :data:`ALARM_LEVEL` (0.1%), so a
    handful of rows, or a model at chance, hardly ever warns, and a large audit with an inverted model
    always does.

    Parameters
    ----------
    pol
        The pass's polarity (names and the reading, for the message); ``None``: unknown.
    accuracy
        ``(accuracy, n)``: the weighted accuracy and its (effective) number of rows. Alarm when
        accuracy < 0.5 with ``z = (0.5 - accuracy) / sqrt(0.25 / n)`` beyond the level.
    scores
        ``((mean, variance, n) of rows with a favorable label, (mean, variance, n) of the others)``
        for the favorable-oriented score. Alarm when the favorable mean is lower, with Welch's
        ``z = (m_u - m_f) / sqrt(v_f / n_f + v_u / n_u)`` beyond the level: what an ROC AUC below
        0.5 looks like.

    Returns
    -------
    list of str
        One sentence per alarm (empty: nothing looks inverted), naming the reading used and the fix.

    Examples
    --------
    >>> import polars as pl
    >>> pol = polarity(pl.Int64, (0,), None, 0, label="deny", score="p")
    >>> polarity_alarms(pol, accuracy=(0.08, 100.0))[0][:60]
    'the population accuracy is 0.080 (below 0.5): the prediction'
    >>> polarity_alarms(pol, accuracy=(0.4, 10.0))
    []
    """
    out: list[str] = []
    fav = _shown(pol.favorable) if pol is not None else "?"
    label = pol.label if pol is not None else "y_true"
    reading = pol.reading() if pol is not None else ""
    fix = (f"If the model is not worse than chance, check favorable={fav} (y_true={label!r}) and what the "
           f"predictions mean: {reading + '; ' if reading else ''}a score or a Boolean prediction of the other "
           f"label needs score_label= (see {DOCS})")  # fmt: skip
    if accuracy is not None:
        acc, n = accuracy
        if n > 0 and acc < 0.5 and _inverted((0.5 - acc) / (0.25 / n) ** 0.5):
            out.append(f"the population accuracy is {acc:.3f} (below 0.5): the predictions look inverted relative "
                       f"to favorable={fav}. {fix}")  # fmt: skip
    if scores is not None:
        (mf, vf, nf), (mu, vu, nu) = scores
        se = (vf / nf + vu / nu) ** 0.5 if nf > 0 and nu > 0 else 0.0
        if mf < mu and (se == 0.0 or _inverted((mu - mf) / se)) and nf > 1 and nu > 1:
            out.append(f"the mean score is {mf:.3f} on rows with the favorable label {fav} and {mu:.3f} on the "
                       f"others: the score looks like the probability of the unfavorable label (inverted; its ROC "
                       f"AUC is likely below 0.5). {fix}")  # fmt: skip
    return out


def cell_alarms(cells: pl.DataFrame, pol: Polarity | None, *, has_predictions: bool, has_scores: bool) -> list[str]:
    """:func:`polarity_alarms` of a cell table's population (its count columns summed).

    Parameters
    ----------
    cells
        A cell table (:mod:`polfair.core.passes.counts`).
    pol
        The pass's polarity (``Spec.polarity``).
    has_predictions, has_scores
        Whether the pass read predictions (``y_pred`` or ``y_score``) and scores.

    Returns
    -------
    list of str
        As :func:`polarity_alarms`: accuracy = (tp + tn) / w on the Kish effective rows with
        predictions; with scores, the mean score over favorable labels ``gtp / (tp + fn)`` against
        unfavorable ones ``gfp / (fp + tn)``, each with the largest variance a score in [0, 1]
        can have, ``m (1 - m)`` (the cell table holds no Σs²: a conservative test).

    Examples
    --------
    >>> import polars as pl
    >>> cells = pl.DataFrame({"w": [100.0], "tp": [5.0], "fp": [45.0], "tn": [5.0], "fn": [45.0],
    ...                       "gtp": [10.0], "gfp": [40.0], "tp_w2": [5.0], "fp_w2": [45.0], "tn_w2": [5.0],
    ...                       "fn_w2": [45.0]})
    >>> len(cell_alarms(cells, None, has_predictions=True, has_scores=True))
    2
    """
    if not has_predictions or cells.height == 0:
        return []
    cols = ("w", "tp", "fp", "tn", "fn", "gtp", "gfp", "tp_w2", "fp_w2", "tn_w2", "fn_w2")
    t = cells.select(pl.col(c).sum() for c in cols).row(0, named=True)

    def n_eff(w: float, w2: float | None) -> float:
        return w * w / w2 if w2 else 0.0

    w2 = sum(t[c] or 0.0 for c in ("tp_w2", "fp_w2", "tn_w2", "fn_w2"))
    acc = (t["tp"] + t["tn"]) / t["w"] if t["w"] else None
    pos, neg = t["tp"] + t["fn"], t["fp"] + t["tn"]
    scores = None
    if has_scores and pos > 0 and neg > 0:
        mf, mu = t["gtp"] / pos, t["gfp"] / neg
        scores = ((mf, mf * (1 - mf), n_eff(pos, (t["tp_w2"] or 0) + (t["fn_w2"] or 0))),
                  (mu, mu * (1 - mu), n_eff(neg, (t["fp_w2"] or 0) + (t["tn_w2"] or 0))))  # fmt: skip
    return polarity_alarms(pol, accuracy=None if acc is None else (acc, n_eff(t["w"], w2)), scores=scores)


#: The rule as a table (``docs/contract.md`` shows it): label dtype -> what y_score / a Boolean y_pred mean.
_TABLE = (
    ("boolean", "favorable=True: P(True), True = True. favorable=False: PolarityError (before the pass)",
     "True/False"),
    ("enum", "every other category sorts below the favorable one: P(favorable); else PolarityError (before the "
     "pass)", "a category"),
    ("integer, float, decimal",
     "favorable <= 0 (favorable=0 on 0/1 labels): PolarityError before the pass. Otherwise read as P(favorable) "
     "if no unfavorable label sorts above the favorable one (checked in the pass, e.g. German credit's 1/2 labels "
     "with favorable=1 stop with PolarityError)", "a number"),
    ("string, categorical",
     "read as P(favorable) if no unfavorable label sorts above it (checked in the pass: 'yes' with 'no' is "
     "fine, favorable='no' with 'yes' stops with PolarityError)", "a string"),
    ("any, with unfavorable=",
     "decided before the pass from favorable and unfavorable: every unfavorable value below the favorable "
     "one: P(favorable); else PolarityError", "a favorable or unfavorable value"),
)  # fmt: skip


def polarity_table() -> pl.DataFrame:
    """The polarity rule as a table: one row per label dtype (``docs/contract.md#polarity`` shows it).

    Returns
    -------
    pl.DataFrame
        Columns ``label dtype``, ``without score_label`` (what ``y_score`` and a Boolean ``y_pred``
        mean), ``score_label`` (what it takes; a favorable value: P(favorable), True = favorable; an
        unfavorable value ``u``: P(y = u), P(favorable) = 1 - y_score, True = ``u``).

    Examples
    --------
    >>> polarity_table()["label dtype"].to_list()[0]
    'boolean'
    """
    return pl.DataFrame(
        {
            "label dtype": [r[0] for r in _TABLE],
            "without score_label": [r[1] for r in _TABLE],
            "score_label": [r[2] for r in _TABLE],
        }
    )
