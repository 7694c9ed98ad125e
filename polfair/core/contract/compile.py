"""The input contract compiled: the engine adapter and the compiled roles of a pass.

Part of :mod:`polfair.core.contract` (the public module, which re-exports this one's public names and
describes the contract as a whole). Here: :class:`Engine` (an expression namespace mirroring
Polars' API; :data:`POLARS` is the core's own), the input :class:`Column` of a role, and the
functions that compile a role's rules into expressions (:func:`label`, :func:`score`,
:func:`numeric`, :func:`weight`, :func:`key`, :func:`outcome_code`), each returning a
:class:`Compiled` role.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from polfair.core.contract.rules import (
    FLAG_BAD_SCORE,
    FLAG_BAD_WEIGHT,
    FLAG_NULL_SCORE,
    FLAG_NULL_WEIGHT,
    INVALID,
    MAX_EXACT_WEIGHT,
    MIN_EXACT_WEIGHT,
    MISSING,
    ROLES,
    dtype_kind,
)
from polfair.core.values import check_key_dtype, check_role_dtype, coerce_values, match_values
from polfair.exceptions import InvalidInputError

__all__ = [
    "MEMBERSHIP_OK",
    "MEMBERSHIP_SUM",
    "POLARS",
    "Column",
    "Compiled",
    "Engine",
    "check_dtype",
    "key",
    "Membership",
    "label",
    "loss",
    "membership",
    "numeric",
    "outcome_code",
    "score",
    "weight",
]


# ---------------------------------------------------------------------------------------------
# the engine adapter


class Engine:
    """An expression namespace that mirrors Polars' API, plus the few renderings that differ.

    The compile functions of this module are written against it; :data:`POLARS` renders Polars
    expressions, :func:`polfair.engines.narwhals.engine` narwhals ones (Spark, DuckDB, ...).

    Parameters
    ----------
    name
        Engine name, for messages.
    ns
        The namespace: ``col``, ``lit``, ``when``, ``len`` and the dtypes ``Float64``, ``String``,
        ``Int64``.

    Examples
    --------
    >>> import polars as pl
    >>> POLARS.cases([(pl.col("x") > 1, POLARS.small(2))], POLARS.small(0)).meta.output_name()
    'literal'
    """

    def __init__(self, name: str, ns: Any) -> None:
        self.name = name
        self.ns = ns

    def small(self, v: int) -> Any:
        """A small non-negative integer literal (the code's parts)."""
        return self.ns.lit(v)

    def lit(self, v: Any) -> Any:
        """A literal."""
        return self.ns.lit(v)

    def cases(self, branches: Sequence[tuple[Any, Any]], default: Any) -> Any:
        """``when(c1).then(v1) ... otherwise(default)``, nested (every engine runs nesting)."""
        out = default
        for cond, value in reversed(branches):
            out = self.ns.when(cond).then(value).otherwise(out)
        return out

    def is_in(self, expr: Any, dtype: pl.DataType, values: Sequence[Any]) -> Any:
        """Boolean: ``expr`` is one of ``values`` (coerced to ``dtype``, no ``None``); never null."""
        kind = dtype_kind(dtype)
        if not values:
            return self.ns.lit(False)
        if kind == "boolean":
            wanted = {bool(v) for v in values}
            out = expr.is_not_null() if wanted == {True, False} else (expr if True in wanted else ~expr)
        elif kind in ("categorical", "enum"):
            out = expr.cast(self.ns.String).is_in([str(v) for v in values])
        elif kind == "decimal":
            out = expr.cast(self.ns.Float64).is_in([float(v) for v in values])
        else:
            out = expr.is_in(list(values))
        return out.fill_null(False)

    def float64(self, expr: Any) -> Any:
        """``expr`` cast to Float64."""
        return expr.cast(self.ns.Float64)


class _PolarsEngine(Engine):
    def small(self, v: int) -> Any:
        return pl.lit(v, pl.UInt8)

    def cases(self, branches: Sequence[tuple[Any, Any]], default: Any) -> Any:
        out: Any = None
        for cond, value in branches:
            out = pl.when(cond).then(value) if out is None else out.when(cond).then(value)
        return default if out is None else out.otherwise(default)

    def is_in(self, expr: Any, dtype: pl.DataType, values: Sequence[Any]) -> Any:
        return match_values(expr, dtype, values)


#: The Polars engine (the core's own).
POLARS: Engine = _PolarsEngine("polars", pl)


# ---------------------------------------------------------------------------------------------
# compiled roles


@dataclass(frozen=True)
class Column:
    """One input column of a role: display name, the engine-native expression, the dtype.

    Attributes
    ----------
    name
        The name shown in messages (the column's, or the expression's output name).
    expr
        The expression in the engine's namespace (``pl.col("y")``, a user's Polars expression, or
        a narwhals ``nw.col``).
    dtype
        Its dtype in the contract's vocabulary (a Polars dtype).
    """

    name: str
    expr: Any
    dtype: pl.DataType


@dataclass(frozen=True)
class Compiled:
    """A role compiled by the contract.

    Attributes
    ----------
    role
        The role (``"y_true"``, ``"y_pred"``, ``"y_score"``, ``"weight"``).
    column
        The column's display name.
    value
        The normalised value (Float64 for scores, weights and numeric outcomes; ``None`` for labels).
    state
        Labels and numeric outcomes: the 2-bit state (0/1, :data:`MISSING`, :data:`INVALID`);
        scores and weights: the flag bits (0 when the value is usable).
    invalid
        Boolean expression: the row's value breaks the rule (used only to fetch example values on
        the error path).
    what
        What the invalid rows are, for the message (``"scores that are infinite or outside [0, 1]"``).
    fix
        The fix, for the message.
    source
        The :class:`Column`.
    mark
        Labels only: Boolean expression of the rows whose label breaks the polarity rule's reading
        (:class:`~polfair.core.contract.polarity.Polarity`; counted in the ``INVALID`` state with
        the invalid rows, told apart on the error path), or ``None``.
    polarity
        The :class:`~polfair.core.contract.polarity.Polarity` whose check ``mark`` is.
    labels
        Labels only: the ``(favorable, unfavorable)`` values in the column's dtype (``unfavorable``
        ``None``: every other value), for the post-pass check that each matches a row.
    """

    role: str
    column: str
    value: Any
    state: Any
    invalid: Any
    what: str
    fix: str
    source: Column = field(repr=False)
    mark: Any = field(default=None, repr=False)
    polarity: Any = field(default=None, repr=False)
    labels: tuple[tuple[Any, ...], tuple[Any, ...] | None] | None = field(default=None, repr=False)


def _missing(x: Any, kind: str) -> Any:
    return x.is_null() | x.is_nan() if kind == "float" else x.is_null()


def check_dtype(role: str, col: Column) -> str:
    """Raise unless ``col``'s dtype is allowed for ``role``; return its kind.

    Parameters
    ----------
    role
        ``"y_true"``, ``"y_pred"``, ``"y_score"``, ``"weight"``, ``"protected"``, ``"by"``,
        ``"y_true (numeric)"``, ``"y_pred (numeric)"`` (keys of :data:`ROLES`) or a CLI spelling.
    col
        The column.

    Returns
    -------
    str
        The dtype kind.

    Raises
    ------
    InvalidInputError
        The dtype is not allowed; the message names the role, the column and the fix.

    Examples
    --------
    >>> import polars as pl
    >>> check_dtype("weight", Column("w", pl.col("w"), pl.Float32))
    'float'
    >>> check_dtype("weight", Column("w", pl.col("w"), pl.String))
    Traceback (most recent call last):
    ...
    polfair.exceptions.InvalidInputError: weight must be numeric (finite, >= 0); column 'w' has dtype String: ...
    """
    base = role.split(" ")[0]
    kind = dtype_kind(col.dtype)
    check_role_dtype(col.dtype, base, col.name)
    if base in ("protected", "by", "features"):
        check_key_dtype(col.dtype, base, col.name)
        return kind
    allowed = ROLES.get(role, ROLES.get(base)).kinds  # type: ignore[union-attr]
    if kind in allowed:
        return kind
    if base == "weight":
        msg = (f"weight must be numeric (finite, >= 0); column {col.name!r} has dtype {col.dtype}: "
               f"cast it, e.g. pl.col({col.name!r}).cast(pl.Float64)")  # fmt: skip
    elif base == "errors":
        msg = (f"errors must be a per-row loss (Boolean or numeric, >= 0); column {col.name!r} has dtype "
               f"{col.dtype}: compute a loss, e.g. (pl.col('y') != pl.col('pred')).alias({col.name!r})")  # fmt: skip
    elif base == "protected_proba":
        msg = (f"protected_proba: column {col.name!r} has dtype {col.dtype}; a membership probability is a "
               f"number in [0, 1]: cast it, e.g. pl.col({col.name!r}).cast(pl.Float64)")  # fmt: skip
    elif base == "y_score" or "numeric" in role:
        what = "numeric (probabilities or real scores)" if base == "y_score" else "numeric"
        msg = (f"{base} must be {what}; column {col.name!r} has dtype {col.dtype}: cast it, e.g. "
               f"pl.col({col.name!r}).cast(pl.Float64)")  # fmt: skip
    else:
        msg = (f"{base}: column {col.name!r} has dtype {col.dtype}, which is not a label; labels are "
               "booleans, integers, floats, strings or categories: cast it, e.g. "
               f"pl.col({col.name!r}).cast(pl.String)")  # fmt: skip
    raise InvalidInputError(msg)


def _shown(values: Sequence[Any]) -> str:
    return repr(list(values))


def label(
    eng: Engine,
    col: Column,
    favorable: Sequence[Any],
    unfavorable: Sequence[Any] | None,
    *,
    role: str = "y_true",
    boolean: bool | None = None,
    polarity: Any = None,
) -> Compiled:
    """Compile a binary label or prediction: the 2-bit state 0 unfavorable, 1 favorable, missing, invalid.

    Parameters
    ----------
    eng
        The engine.
    col
        The label (or predicted label) column.
    favorable, unfavorable
        The user's label values (:func:`polfair.core.passes.spec.label_values`); they are matched in the
        column's dtype (:func:`polfair.core.values.coerce_values`). ``unfavorable=None``: every
        other value is unfavorable, except a Float value that is not a whole number (invalid).
    role
        ``"y_true"`` or ``"y_pred"`` (messages).
    boolean
        A Boolean prediction next to non-Boolean labels, read by the polarity rule
        (:func:`~polfair.core.contract.polarity.polarity`): ``True``: True = favorable, False =
        unfavorable; ``False``: True = unfavorable (the label ``score_label``), False = favorable;
        ``None``: the column is matched in its dtype.
    polarity
        ``y_true`` only: a :class:`~polfair.core.contract.polarity.Polarity` whose data check
        (``check``) the pass runs: rows whose label breaks the reading get the ``INVALID`` state and
        ``Compiled.mark``; the post-pass check raises :class:`~polfair.exceptions.PolarityError`.

    Returns
    -------
    Compiled
        ``value`` is ``None``; ``state`` the 2-bit state.

    Raises
    ------
    InvalidInputError
        The dtype cannot be a label, or a favorable/unfavorable value cannot be held by it
        (``1.5`` in an Int column, ``"yes"`` in a Boolean column, ``1`` in a String column).

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"p": [1.0, 0.0, 0.37, None, float("nan")]})
    >>> c = label(POLARS, Column("p", pl.col("p"), pl.Float64), (1,), None, role="y_pred")
    >>> df.select(c.state)["literal"].to_list()
    [1, 0, 3, 2, 2]
    """
    kind = check_dtype(role, col)
    x = col.expr
    if boolean is not None:
        yes, no = (1, 0) if boolean else (0, 1)
        return Compiled(role, col.name, None, eng.cases([(x.is_null(), eng.small(MISSING)), (x, eng.small(yes))],
                        eng.small(no)), eng.lit(False), "", "", col)  # fmt: skip
    fav = tuple(v for v in coerce_values(favorable, col.dtype, option="favorable", column=col.name) if v is not None)
    unf = (
        None
        if unfavorable is None
        else tuple(
            v for v in coerce_values(unfavorable, col.dtype, option="unfavorable", column=col.name) if v is not None
        )
    )
    missing = _missing(x, kind)
    is_fav = eng.is_in(x, col.dtype, fav)
    if unf is not None:
        outside = ~(is_fav | eng.is_in(x, col.dtype, unf))
        what = f"values that are neither favorable {_shown(fav)} nor unfavorable {_shown(unf)}"
        branches = [(missing, eng.small(MISSING)), (is_fav, eng.small(1)), (outside, eng.small(INVALID))]
    elif kind == "float":
        # a Float label is a class only when it is a whole number: 0.37 is a probability, not a label
        outside = ~is_fav & (~x.is_finite() | (x % 1.0 != 0.0))
        what = f"values that are neither favorable {_shown(fav)} nor a whole-number label (unfavorable)"
        branches = [(missing, eng.small(MISSING)), (is_fav, eng.small(1)), (outside, eng.small(INVALID))]
    else:
        outside = eng.lit(False)
        what = ""
        branches = [(missing, eng.small(MISSING)), (is_fav, eng.small(1))]
    mark = polarity.mark(eng, x) if polarity is not None else None
    if mark is not None:  # the polarity rule's data check: an unfavorable label that breaks the reading
        branches.append((mark, eng.small(INVALID)))
    state = eng.cases(branches, eng.small(0))
    if role == "y_pred":
        fix = (f"Predictions must be labels: if these are scores or probabilities, pass y_score={col.name!r}, "
               f"threshold=0.5 instead of y_pred (the prediction is then score >= threshold); otherwise "
               f"map them to the favorable/unfavorable labels or filter them out")  # fmt: skip
    else:
        fix = ("Labels must be classes: map them to the favorable/unfavorable labels or filter them out; if "
               f"they are scores, pass the column as y_score={col.name!r} (with threshold=) and the true "
               "labels as y_true")  # fmt: skip
    if unf is not None:
        fix += ", or drop unfavorable= to count every non-favorable label as unfavorable"
    return Compiled(role, col.name, None, state, ~missing & outside, what, fix, col,
                    None if mark is None else ~missing & ~is_fav & mark, polarity if mark is not None else None,
                    (fav, unf))  # fmt: skip


def score(eng: Engine, col: Column, *, unit_interval: bool) -> Compiled:
    """Compile a score: Float64 value, flag bits (:data:`FLAG_NULL_SCORE` for null/NaN,
    :data:`FLAG_BAD_SCORE` for ±inf and, with ``unit_interval``, values outside [0, 1]).

    Parameters
    ----------
    eng, col
        The engine and the score column (numeric dtype).
    unit_interval
        Whether the pass needs probabilities in [0, 1].

    Returns
    -------
    Compiled
        ``value`` (Float64; NaN rows are flagged missing), ``state`` (flag bits).

    Raises
    ------
    InvalidInputError
        A non-numeric dtype (Boolean, String: cast them).

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"s": [0.2, None, float("nan"), 1.5, float("inf")]})
    >>> c = score(POLARS, Column("s", pl.col("s"), pl.Float64), unit_interval=True)
    >>> df.select(c.state)["literal"].to_list()
    [0, 8, 8, 1, 1]
    """
    check_dtype("y_score", col)
    s = eng.float64(col.expr)
    missing = s.is_null() | s.is_nan()
    ok = ((s >= 0.0) & (s <= 1.0)) if unit_interval else s.is_finite()
    flag = eng.cases([(missing, eng.small(FLAG_NULL_SCORE)), (ok, eng.small(0))], eng.small(FLAG_BAD_SCORE))
    what = "scores that are infinite or outside [0, 1]" if unit_interval else "scores that are infinite"
    fix = ("Scores are probabilities (of the favorable label, or of score_label=): rescale them (e.g. a sigmoid of "
           "logits) or clip"
           if unit_interval else "Scores must be finite numbers: filter or clip them")  # fmt: skip
    return Compiled("y_score", col.name, s, flag, ~missing & ~ok, what, fix, col)


def numeric(eng: Engine, col: Column, *, role: str = "y_true") -> Compiled:
    """Compile a numeric outcome (a regression target or prediction): Float64 value, 2-bit state
    (0 ok, :data:`MISSING` for null/NaN, :data:`INVALID` for ±inf).

    Parameters
    ----------
    eng, col
        The engine and the column (numeric dtype).
    role
        ``"y_true"`` or ``"y_pred"`` (messages).

    Returns
    -------
    Compiled
        ``value``: the Float64 outcome; ``state``: the 2-bit state a regression pass puts in the
        outcome code's label (``y_true``) or prediction (``y_pred``) field.

    Raises
    ------
    InvalidInputError
        A Boolean, String or other non-numeric dtype (cast it).

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": [1.5, None, float("nan"), float("-inf")]})
    >>> c = numeric(POLARS, Column("y", pl.col("y"), pl.Float64))
    >>> df.select(c.state)["literal"].to_list()
    [0, 2, 2, 3]
    """
    check_dtype(f"{role} (numeric)", col)
    v = eng.float64(col.expr)
    missing = v.is_null() | v.is_nan()
    bad = ~v.is_finite()
    state = eng.cases([(missing, eng.small(MISSING)), (bad, eng.small(INVALID))], eng.small(0))
    return Compiled(role, col.name, v, state, ~missing & bad, "values that are infinite",
                    "Numeric outcomes must be finite: filter or clip them", col)  # fmt: skip


def loss(eng: Engine, col: Column, *, role: str = "errors") -> Compiled:
    """Compile a per-row loss (the ``errors`` of a slice search): Float64 value, 2-bit state
    (0 ok, :data:`MISSING` for null/NaN, :data:`INVALID` for a negative or infinite value).

    A Boolean column is a 0/1 error (True is 1).

    Parameters
    ----------
    eng, col
        The engine and the column (Boolean or numeric dtype).
    role
        The keyword that names the column (messages).

    Returns
    -------
    Compiled
        ``value``: the Float64 loss; ``state``: the 2-bit state a pass puts in the outcome code's
        label field.

    Raises
    ------
    InvalidInputError
        A String, nested or other non-numeric dtype (cast it).

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"e": [0.5, None, float("nan"), -1.0, float("inf")]})
    >>> c = loss(POLARS, Column("e", pl.col("e"), pl.Float64))
    >>> df.select(c.state)["literal"].to_list()
    [0, 2, 2, 3, 3]
    """
    check_dtype("errors", col)
    v = eng.float64(col.expr)
    missing = v.is_null() | v.is_nan()
    ok = (v >= 0.0) & (v < math.inf)
    state = eng.cases([(missing, eng.small(MISSING)), (ok, eng.small(0))], eng.small(INVALID))
    return Compiled(role, col.name, v, state, ~missing & ~ok, "values that are negative or infinite",
                    "Errors are per-row losses, finite and >= 0 (0/1 errors, squared or absolute error, log "
                    "loss): compute a loss, e.g. (pl.col('y') != pl.col('pred')) or (pl.col('y') - "
                    "pl.col('pred')) ** 2", col)  # fmt: skip


def weight(eng: Engine, col: Column, *, exact: bool = False) -> Compiled:
    """Compile a weight: Float64 value, flag bits (:data:`FLAG_NULL_WEIGHT` for null/NaN,
    :data:`FLAG_BAD_WEIGHT` for negative or ±inf, and with ``exact`` for a weight the fixed-point
    grid cannot hold: in (0, 2**-16) or >= 2**40).

    Parameters
    ----------
    eng, col
        The engine and the weight column (numeric dtype).
    exact
        ``exact_sums=True`` of the pass.

    Returns
    -------
    Compiled

    Raises
    ------
    InvalidInputError
        A non-numeric dtype.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"w": [1.0, None, float("nan"), -1.0, 1e-9]})
    >>> c = weight(POLARS, Column("w", pl.col("w"), pl.Float64))
    >>> df.select(c.state)["literal"].to_list()
    [0, 4, 4, 2, 0]
    >>> df.select(weight(POLARS, Column("w", pl.col("w"), pl.Float64), exact=True).state)["literal"].to_list()
    [0, 4, 4, 2, 2]
    """
    check_dtype("weight", col)
    w = eng.float64(col.expr)
    missing = w.is_null() | w.is_nan()
    if exact:
        ok = (w == 0.0) | ((w >= MIN_EXACT_WEIGHT) & (w < MAX_EXACT_WEIGHT))
        what = ("weights that are negative, infinite, or outside what exact_sums=True holds exactly "
                "(0, or 2**-16 <= w < 2**40, about 1.5e-05 to 1.1e12)")  # fmt: skip
        fix = ("Rescale the weights (e.g. divide them by their mean: every rate is unchanged), or pass "
               "exact_sums=False (Float64 sums, reproducible to about 1e-13 relative)")  # fmt: skip
    else:
        ok = (w >= 0.0) & (w < math.inf)  # False for NaN (flagged missing first), negative and +inf
        what = "weights that are negative or infinite"
        fix = "Weights must be finite and >= 0 (null or NaN weights are missing values)"
    flag = eng.cases([(missing, eng.small(FLAG_NULL_WEIGHT)), (ok, eng.small(0))], eng.small(FLAG_BAD_WEIGHT))
    return Compiled("weight", col.name, w, flag, ~missing & ~ok, what, fix, col)


#: States of a row's membership probabilities (:func:`membership`): usable, not summing to 1, a
#: null/NaN among them (:data:`MISSING`), a value outside [0, 1] or infinite (:data:`INVALID`).
MEMBERSHIP_OK, MEMBERSHIP_SUM = 0, 1


@dataclass(frozen=True)
class Membership:
    """Membership probabilities of one estimated attribute, compiled by the contract.

    Attributes
    ----------
    attribute
        The estimated attribute's name (``"race"``).
    labels
        Its groups, in the order given (a remainder group last).
    columns
        Display names of the probability columns, one per named group (the remainder has none).
    values
        One Float64 expression per group (``labels`` order): the row's probability divided by the
        row's sum, so that they sum to 1; null where the row's state is not :data:`MEMBERSHIP_OK`.
    state
        The row's state: :data:`MEMBERSHIP_OK` (0), :data:`MEMBERSHIP_SUM` (1: the probabilities do
        not sum to 1 within the tolerance), :data:`MISSING` (2: a null or NaN probability),
        :data:`INVALID` (3: a probability outside [0, 1] or infinite).
    checks
        The two invalid kinds as :class:`Compiled` roles for :func:`~polfair.core.contract.check_problems`:
        ``"protected_proba"`` (values outside [0, 1]; its source expression is the row's first such
        value) and ``"protected_proba_sum"`` (rows not summing to 1; its source is the row's sum).
    tolerance
        The tolerance of the row sums.
    raw
        The probabilities as read (Float64; the remainder's ``max(0, 1 - sum)`` last), ``labels`` order.
    top
        The row's largest probability (of ``raw``).
    inverse
        ``1 / the row's sum`` where the row is usable, else null: ``values`` are ``raw × inverse``.
    """

    attribute: str
    labels: tuple[str, ...]
    columns: tuple[str, ...]
    values: tuple[Any, ...]
    state: Any
    checks: dict[str, Compiled]
    tolerance: float
    raw: tuple[Any, ...] = ()
    top: Any = None
    inverse: Any = None


def membership(
    eng: Engine, cols: Sequence[Column], *, attribute: str, labels: Sequence[str], tolerance: float,
    remainder: bool = False,
) -> Membership:  # fmt: skip
    """Compile the membership probabilities of an estimated attribute (``protected_proba``).

    The rule (one row of :data:`~polfair.core.contract.ROLES`): each probability is a number in
    [0, 1]; null or NaN makes the whole row's group unknown (missing); a row's probabilities sum to
    1 within ``tolerance`` (plus ``k·2^-52`` for the Float64 representation of k decimals: 0.5 and
    0.499 sum to 0.9989999999999999, within ``1e-3``) (with a remainder group: to at most ``1 + tolerance``, the remainder being
    ``max(0, 1 - sum)``); each row's probabilities are then divided by their sum (the remainder
    included), so a row's weight is spread over the groups exactly.

    Parameters
    ----------
    eng
        The engine.
    cols
        The probability columns, one per named group (numeric dtypes).
    attribute
        The estimated attribute's name (messages).
    labels
        The group labels: one per column, plus the remainder group's last when ``remainder``.
    tolerance
        Float >= 0: how far a row's sum may be from 1.
    remainder
        Whether the last label is a remainder group (``1 - sum`` of the others).

    Returns
    -------
    Membership

    Raises
    ------
    InvalidInputError
        A column of a non-numeric dtype (cast it).

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"a": [0.7, 0.5, None, 1.5, 0.5], "b": [0.3, 0.2, 0.5, 0.0, 0.5]})
    >>> cols = [Column(c, pl.col(c), pl.Float64) for c in "ab"]
    >>> m = membership(POLARS, cols, attribute="race", labels=["A", "B"], tolerance=1e-6)
    >>> df.select(m.state)["literal"].to_list()
    [0, 1, 2, 3, 0]
    >>> df.select(m.values[0].alias("q"))["q"].to_list()
    [0.7, None, None, None, 0.5]
    """
    for c in cols:
        check_dtype("protected_proba", c)
    p = [eng.float64(c.expr) for c in cols]
    missing = p[0].is_null() | p[0].is_nan()
    for x in p[1:]:
        missing = missing | x.is_null() | x.is_nan()
    # one horizontal min, max and sum per row (NaN rows are missing before these are read)
    low, top = (eng.ns.min_horizontal(*p), eng.ns.max_horizontal(*p)) if len(p) > 1 else (p[0], p[0])
    outside = (low < 0.0) | (top > 1.0)
    total = eng.ns.sum_horizontal(*p) if len(p) > 1 else p[0]
    # the tolerance covers the probabilities' Float64 representation: each of k values in [0, 1] is
    # within 2^-53 of its decimal, and their sum within k·2^-52 more (0.5 + 0.499 is stored as
    # 0.9989999999999999: within proba_tolerance=1e-3 of 1, as the user wrote it)
    slack = tolerance + len(p) * 2.0**-52
    if remainder:
        bad_sum = total > 1.0 + slack
        rest = eng.ns.when(total < 1.0).then(1.0 - total).otherwise(eng.lit(0.0))
        p = [*p, rest]
        top = eng.ns.max_horizontal(top, rest)
        scale = eng.ns.when(total < 1.0).then(eng.lit(1.0)).otherwise(total)
    else:
        bad_sum = (total - 1.0).abs() > slack
        scale = total
    state = eng.cases([(missing, eng.small(MISSING)), (outside, eng.small(INVALID)), (bad_sum, eng.small(MEMBERSHIP_SUM))],
                      eng.small(MEMBERSHIP_OK))  # fmt: skip
    inverse = eng.ns.when(state == MEMBERSHIP_OK).then(1.0 / scale)  # null where the row is not usable
    values = tuple(x * inverse for x in p)
    shown = ", ".join(c.name for c in cols) + (f" (remainder: {labels[-1]!r})" if remainder else "")
    display = f"{attribute}: {shown}"
    first_bad = eng.cases([(~((x >= 0.0) & (x <= 1.0)), x) for x in p[: len(cols)]], p[0])
    fix = (f"Each is P({attribute} = group | proxies), a number in [0, 1], and a row's probabilities sum to 1. "
           "Normalise them (divide each by the row's sum), name a remainder group (a group without a column: "
           f"1 - the others), or, for rounded probabilities, allow more: proba_tolerance=0.001 (now {tolerance:g})")  # fmt: skip
    range_check = Compiled("protected_proba", display, None, state, ~missing & outside,
                           "membership probabilities outside [0, 1] or infinite", fix,
                           Column(display, first_bad, pl.Float64()))  # fmt: skip
    sum_what = (f"membership probabilities summing to more than 1 + {tolerance:g}" if remainder else
                f"membership probabilities whose sum is not 1 (within {tolerance:g}; their sums shown)")  # fmt: skip
    sum_check = Compiled("protected_proba_sum", display, None, state, ~missing & ~outside & bad_sum, sum_what, fix,
                         Column(display, total, pl.Float64()))  # fmt: skip
    return Membership(attribute, tuple(labels), tuple(c.name for c in cols), values, state,
                      {"protected_proba": range_check, "protected_proba_sum": sum_check}, float(tolerance),
                      tuple(p), top, inverse)  # fmt: skip


def key(eng: Engine, col: Column, *, role: str = "protected") -> Any:
    """A group key, checked and normalised: in a Float key NaN is null (the null group) and -0.0 is 0.0.

    Parameters
    ----------
    eng, col
        The engine and the key column.
    role
        ``"protected"`` or ``"by"``.

    Returns
    -------
    Any
        The key expression (same dtype as the column).

    Raises
    ------
    InvalidInputError
        Time, Duration, nested and other non-group dtypes.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"k": [-0.0, 0.0, float("nan"), None]})
    >>> df.select(key(POLARS, Column("k", pl.col("k"), pl.Float64)))["k"].to_list()
    [0.0, 0.0, None, None]
    """
    kind = check_dtype(role, col)
    x = col.expr
    if kind != "float":
        return x
    # -0.0 == 0.0, so abs() gives +0.0 (``x + 0.0`` would be simplified away by Polars' optimiser)
    return eng.ns.when(x == 0.0).then(x.abs()).otherwise(x).fill_nan(None)


def outcome_code(eng: Engine, y_true: Any, y_pred: Any | None = None, flags: Sequence[Any] = ()) -> Any:
    """The outcome code ``a + 4·b + 16·flags`` of states/flag expressions (``y_pred=None``: ``b = a``).

    Examples
    --------
    >>> import polars as pl
    >>> pl.select(outcome_code(POLARS, pl.lit(1, pl.UInt8), pl.lit(0, pl.UInt8), [pl.lit(4, pl.UInt8)])).item()
    65
    """
    code = y_true + eng.small(4) * (y_true if y_pred is None else y_pred)
    if flags:
        total = flags[0]
        for f in flags[1:]:
            total = total + f
        code = code + eng.small(16) * total
    return code
