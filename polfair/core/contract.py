"""The input contract: what every role accepts, written ONCE and compiled into every pass on every engine.

Every door of polfair (``fairness_report``, ``confusion_counts``, the score histograms and curves,
``group_thresholds``, ``reweighing``, ``proxy_scan``, ``adverse_impact``, ``multiclass_report``,
the accumulator, the peer facades and the CLI) reads raw rows only through this module. It holds
the rules (:data:`ROLES`, rendered as the table of ``docs/contract.md``) and the functions that
compile them into expressions. The functions take an :class:`Engine`, a thin adapter over an
expression namespace that mirrors Polars' API (``col``, ``lit``, ``when/then/otherwise``,
``is_null``, ``is_nan``, ``is_in``, ``cast``, ``sum``): :data:`POLARS` here, and the narwhals
engine that :mod:`polfair.engines.narwhals` passes in for Spark, DuckDB and other lazy frames.
So Polars, DuckDB and Spark run the same rules from the same code; the core never imports
narwhals. Dtypes come from the schema each engine reports, mapped to one vocabulary (Polars
dtypes; :func:`dtype_kind`).

The rules in short (the full table is :data:`ROLES` / ``docs/contract.md``):

* **labels** (``y_true``, ``y_pred``): ``favorable``/``unfavorable`` are matched in the column's
  dtype (:mod:`polfair.core.values`); null and NaN are missing; with ``unfavorable`` a value in
  neither set is invalid; a Float value that is not a whole number (``0.37``: a probability passed
  as a label) or is infinite is invalid, with the fix ``y_score=..., threshold=``.
* **scores** (``y_score``): numeric; null and NaN are missing; ±inf is invalid, and so is a value
  outside [0, 1] where a pass needs probabilities (the classification cells, Brier, ECE).
* **numeric outcomes** (``y_true``/``y_pred`` of a regression pass, issue 23): numeric, finite;
  null and NaN are missing; ±inf is invalid.
* **weights**: numeric; null and NaN are missing; negative and ±inf are invalid; with
  ``exact_sums=True`` a weight must be 0 or in [2**-16, 2**40) (what the fixed-point grid holds to
  2**-40 relative).
* **keys** (``protected``, ``by``): Boolean, integer, Float, Decimal, String, Categorical, Enum, Date,
  Datetime; Time/Duration/nested are refused (bin them). Null is its own group; NaN in a Float key
  is the null group too; ``-0.0`` is ``0.0``. The many-groups guard is about cardinality (after the
  pass), not dtype.

API for a pass (what a new pass composes; see :func:`polfair.core.spec.build_spec` and
``polfair.scores.counts`` for two users)::

    eng = POLARS                                   # or the narwhals engine: same calls
    col = Column("y", pl.col("y"), dtype)          # the user's column, its dtype, its display name
    y   = label(eng, col, favorable=(1,), unfavorable=None, role="y_true")   # -> Compiled
    t   = numeric(eng, col, role="y_true")         # regression target: Compiled(value Float64, state)
    s   = score(eng, col, unit_interval=True)      # -> Compiled(value Float64, flag bits)
    w   = weight(eng, col, exact=False)            # -> Compiled(value Float64, flag bits)
    k   = key(eng, col, role="protected")          # normalised key expression (-0.0, NaN)
    o   = outcome_code(eng, y.state, p.state, [s.state, w.state])           # the one outcome code
    ... frame.group_by(keys + [CODE]).agg(len, sums) ...                    # the pass itself
    check_problems(code_problems(codes), roles, total=..., on_missing=...)  # the one post-pass check

A pass that should run on every engine takes its input through a frame adapter with one
interface: :class:`PolarsFrame` here, ``polfair.engines.narwhals.ForeignFrame`` for Spark/DuckDB.
``frame.eng`` is the engine, ``frame.column(x, role)`` the checked :class:`Column` of an argument,
``frame.aggregate(columns, group, aggs)`` runs ``select(columns).group_by(group).agg(aggs(ns))``
in the frame's engine and returns a Polars frame, and ``frame.examples(compiled)`` fetches example
values on the error path. ``polfair.scores.counts`` (the score histograms) is written that way.

The outcome code (``CODE``, one small integer per row) is ``a + 4·b + 16·flags`` with ``a`` the
state of ``y_true`` and ``b`` that of ``y_pred`` (0 unfavorable / value ok, 1 favorable,
:data:`MISSING`, :data:`INVALID`) and the flag bits :data:`FLAG_BAD_SCORE`, :data:`FLAG_BAD_WEIGHT`,
:data:`FLAG_NULL_WEIGHT`, :data:`FLAG_NULL_SCORE`. A regression pass puts its numeric states in
``a`` and ``b`` (0 ok) and reuses everything else.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from polfair.core._args import as_expr, check_columns, output_name
from polfair.core.inputs import to_lazyframe
from polfair.core.values import check_key_dtype, check_role_dtype, coerce_values, match_values
from polfair.exceptions import InvalidInputError, MissingValuesWarning, PolfairError

__all__ = [
    "CODE",
    "EXACT_SCALE",
    "FLAG_BAD_SCORE",
    "FLAG_BAD_WEIGHT",
    "FLAG_NULL_SCORE",
    "FLAG_NULL_WEIGHT",
    "INVALID",
    "MAX_EXACT_WEIGHT",
    "MIN_EXACT_WEIGHT",
    "MISSING",
    "POLARS",
    "ROLES",
    "Column",
    "Compiled",
    "Engine",
    "PolarsFrame",
    "Role",
    "check_dtype",
    "check_finite_sums",
    "check_problems",
    "code_problems",
    "contract_table",
    "dtype_kind",
    "fetch_examples",
    "key",
    "label",
    "numeric",
    "outcome_code",
    "score",
    "weight",
]

#: Name of the outcome-code column of every pass.
CODE = "__pf_o"
#: States of the two 2-bit fields of the code (0 and 1: unfavorable / favorable, or "value ok").
MISSING, INVALID = 2, 3
#: Flag bits (the code's high nibble).
FLAG_BAD_SCORE, FLAG_BAD_WEIGHT, FLAG_NULL_WEIGHT, FLAG_NULL_SCORE = 1, 2, 4, 8

#: ``exact_sums=True``: Σw and Σw·s are sums of ``floor(x · 2**56)`` (UInt128); a weight must be 0
#: or in [MIN_EXACT_WEIGHT, MAX_EXACT_WEIGHT): the grid then holds it to 2**-40 relative and a cell
#: of fewer than 2**31 rows cannot overflow 128 bits. Σw² is ``floor(w² · 2**80)`` in two parts.
EXACT_SCALE = 2.0**56
MIN_EXACT_WEIGHT = 2.0**-16
MAX_EXACT_WEIGHT = 2.0**40

# ---------------------------------------------------------------------------------------------
# one dtype vocabulary

#: Dtype kinds (:func:`dtype_kind`), the words of the contract table.
KINDS = ("boolean", "integer", "float", "decimal", "string", "categorical", "enum", "date", "datetime",
         "time", "duration", "null", "nested", "other")  # fmt: skip


def dtype_kind(dtype: pl.DataType) -> str:
    """The contract's word for a dtype (every engine's schema is mapped to Polars dtypes first).

    Parameters
    ----------
    dtype
        A Polars dtype (class or instance).

    Returns
    -------
    str
        One of :data:`KINDS`.

    Examples
    --------
    >>> import polars as pl
    >>> dtype_kind(pl.Int8), dtype_kind(pl.Enum(["a"])), dtype_kind(pl.List(pl.Int64))
    ('integer', 'enum', 'nested')
    """
    if dtype == pl.Boolean:
        return "boolean"
    if dtype == pl.Null:
        return "null"
    for kind, types in (("nested", (pl.List, pl.Array, pl.Struct)), ("enum", (pl.Enum,)),
                        ("categorical", (pl.Categorical,)), ("decimal", (pl.Decimal,)),
                        ("datetime", (pl.Datetime,)), ("duration", (pl.Duration,))):  # fmt: skip
        if isinstance(dtype, types) or (isinstance(dtype, type) and issubclass(dtype, types)):
            return kind
    if dtype.is_integer():
        return "integer"
    if dtype.is_float():
        return "float"
    if dtype == pl.String:
        return "string"
    if dtype == pl.Date:
        return "date"
    if dtype == pl.Time:
        return "time"
    return "other"


# ---------------------------------------------------------------------------------------------
# the contract table


@dataclass(frozen=True)
class Role:
    """One row of the contract: a role, the dtype kinds it accepts and what its values do.

    Attributes
    ----------
    name
        The role (the keyword that names the column).
    kinds
        Accepted dtype kinds (:func:`dtype_kind`).
    null, nan, outside
        What a null value, a NaN, and a value outside the accepted set do.
    error
        The error raised (and when).
    """

    name: str
    kinds: tuple[str, ...]
    null: str
    nan: str
    outside: str
    error: str


_LABEL_KINDS = ("boolean", "integer", "float", "decimal", "string", "categorical", "enum")
_NUMBER_KINDS = ("integer", "float", "decimal")
_KEY_KINDS = ("boolean", "integer", "float", "decimal", "string", "categorical", "enum", "date", "datetime")
_MISSING = "missing: counted in n_missing, left out of every rate; MissingValuesWarning (on_missing)"

#: The contract, one row per role (rendered by :func:`contract_table` and in ``docs/contract.md``).
ROLES: dict[str, Role] = {r.name: r for r in (
    Role("y_true", _LABEL_KINDS, _MISSING, "missing (Float columns)",
         "with unfavorable=: a value in neither set is invalid; without: every other value is "
         "unfavorable, except a Float value that is not a whole number or is infinite (invalid)",
         "InvalidInputError naming the column, the row count, example values and the fix "
         "(y_score=..., threshold=) for invalid values; favorable/unfavorable that the dtype cannot "
         "hold: InvalidInputError naming the option"),
    Role("y_pred", _LABEL_KINDS, _MISSING, "missing (Float columns)",
         "as y_true (a Boolean prediction next to non-0/1 labels: True = favorable)",
         "as y_true; the message suggests y_score=..., threshold= (probabilities passed as predictions)"),
    Role("y_score", _NUMBER_KINDS, _MISSING, "missing",
         "±inf is invalid; outside [0, 1] is invalid where probabilities are needed (classification "
         "cells, Brier, ECE, reliability)",
         "InvalidInputError naming the column, the count and example values; Boolean/String dtypes: "
         "InvalidInputError before the pass (cast them)"),
    Role("y_true (numeric)", _NUMBER_KINDS, _MISSING, "missing", "±inf is invalid",
         "InvalidInputError naming the column, the count and example values (regression passes)"),
    Role("y_pred (numeric)", _NUMBER_KINDS, _MISSING, "missing", "±inf is invalid",
         "as y_true (numeric)"),
    Role("weight", _NUMBER_KINDS, _MISSING, "missing (as null)",
         "negative or ±inf is invalid; with exact_sums=True also a weight in (0, 2**-16) or >= 2**40",
         "InvalidInputError naming the column, the count, example values and the fix (rescale; "
         "exact_sums=False); a weighted sum that overflows Float64: InvalidInputError (rescale)"),
    Role("protected", _KEY_KINDS, "its own group, shown as 'null'",
         "the null group (Float keys; -0.0 is 0.0)",
         "every distinct value is a group; more than 1000 distinct values that are more than half "
         "the rows is an error (allow_many_groups=True accepts it)",
         "InvalidInputError naming the column: Time/Duration/nested dtypes (bin them), too many "
         "groups (bin them, with a hint)"),
    Role("by", _KEY_KINDS, "its own group", "the null group (Float keys; -0.0 is 0.0)", "as protected",
         "as protected"),
    Role("cluster", ("boolean", "integer", "float", "decimal", "string", "categorical", "enum", "date",
                     "datetime"),
         "one more cluster", "one more cluster", "every value is a cluster id (hashed into buckets)",
         "InvalidInputError for nested dtypes; PolfairError on Spark/DuckDB (not supported yet)"),
)}  # fmt: skip


def contract_table() -> pl.DataFrame:
    """The contract as a table: one row per role (``docs/contract.md`` shows it).

    Returns
    -------
    pl.DataFrame
        Columns ``role``, ``dtypes`` (comma-separated kinds), ``null``, ``nan``, ``outside``,
        ``error`` (String).

    Examples
    --------
    >>> contract_table().filter(role="weight")["nan"].item()
    'missing (as null)'
    """
    return pl.DataFrame(
        [{"role": r.name, "dtypes": ", ".join(r.kinds), "null": r.null, "nan": r.nan, "outside": r.outside,
          "error": r.error} for r in ROLES.values()]  # fmt: skip
    )


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
    """

    role: str
    column: str
    value: Any
    state: Any
    invalid: Any
    what: str
    fix: str
    source: Column = field(repr=False)


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
    bool_means_favorable: bool = False,
) -> Compiled:
    """Compile a binary label or prediction: the 2-bit state 0 unfavorable, 1 favorable, missing, invalid.

    Parameters
    ----------
    eng
        The engine.
    col
        The label (or predicted label) column.
    favorable, unfavorable
        The user's label values (:func:`polfair.core.spec.label_values`); they are matched in the
        column's dtype (:func:`polfair.core.values.coerce_values`). ``unfavorable=None``: every
        other value is unfavorable, except a Float value that is not a whole number (invalid).
    role
        ``"y_true"`` or ``"y_pred"`` (messages).
    bool_means_favorable
        A Boolean prediction next to non-0/1 labels: True = favorable, False = unfavorable.

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
    if bool_means_favorable:
        return Compiled(role, col.name, None, eng.cases([(x.is_null(), eng.small(MISSING)), (x, eng.small(1))],
                        eng.small(0)), eng.lit(False), "", "", col)  # fmt: skip
    fav = tuple(v for v in coerce_values(favorable, col.dtype, option="favorable", column=col.name) if v is not None)
    unf = None if unfavorable is None else tuple(
        v for v in coerce_values(unfavorable, col.dtype, option="unfavorable", column=col.name) if v is not None)
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
    return Compiled(role, col.name, None, state, ~missing & outside, what, fix, col)


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
    fix = ("Scores are probabilities of the favorable label: rescale them (e.g. a sigmoid of logits) or clip"
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


# ---------------------------------------------------------------------------------------------
# the one post-pass check


def code_problems(codes: pl.DataFrame, count: str = "__pf_n") -> dict[str, int]:
    """Row totals per problem kind of a collected code table (column :data:`CODE` and a row count).

    Returns
    -------
    dict
        ``invalid_label``, ``invalid_prediction``, ``invalid_score``, ``invalid_weight``,
        ``null_label``, ``null_prediction``, ``null_weight``, ``null_score`` -> rows; ``missing``:
        the rows left out as missing (a null/NaN value somewhere, no invalid one).

    Examples
    --------
    >>> import polars as pl
    >>> codes = pl.DataFrame({CODE: [5, 3 + 4 * 3, 5 + 16 * 4], "__pf_n": [10, 2, 1]})
    >>> {k: v for k, v in code_problems(codes).items() if v}
    {'invalid_label': 2, 'invalid_prediction': 2, 'null_weight': 1, 'missing': 1}
    """
    o = pl.col(CODE).cast(pl.Int32)
    a, b, flags = o % 4, (o // 4) % 4, o // 16
    kinds = {
        "invalid_label": a == INVALID,
        "invalid_prediction": b == INVALID,
        "invalid_score": ((flags // FLAG_BAD_SCORE) % 2) == 1,
        "invalid_weight": ((flags // FLAG_BAD_WEIGHT) % 2) == 1,
        "null_label": a == MISSING,
        "null_prediction": b == MISSING,
        "null_weight": ((flags // FLAG_NULL_WEIGHT) % 2) == 1,
        "null_score": ((flags // FLAG_NULL_SCORE) % 2) == 1,
        # rows left out as missing: a missing value and no invalid one
        "missing": ((a == MISSING) | (b == MISSING) | (flags >= FLAG_NULL_WEIGHT)) & (a != INVALID) & (b != INVALID)
        & ((flags % 4) == 0),
    }
    row = codes.select([pl.col(count).filter(m).sum().alias(k) for k, m in kinds.items()]).row(0, named=True)
    return {k: int(v or 0) for k, v in row.items()}


#: Problem kind -> the role whose value it is about.
_KIND_ROLE = {"label": "y_true", "prediction": "y_pred", "score": "y_score", "weight": "weight"}


def check_problems(
    problems: Mapping[str, int],
    roles: Mapping[str, Compiled],
    *,
    total: int,
    on_missing: str = "warn",
    examples: Callable[[Compiled], list[Any]] | None = None,
    excluded_from: str = "counted in n_missing and excluded from all rates",
    stacklevel: int = 3,
) -> None:
    """The one post-pass check: invalid values raise, missing values warn (or raise, or pass).

    Parameters
    ----------
    problems
        From :func:`code_problems` (kinds the pass cannot produce may be left at 0).
    roles
        The compiled roles of the pass (``"y_true"``, ``"y_pred"``, ``"y_score"``, ``"weight"``);
        a problem of a role that is absent is ignored (without ``y_pred`` the prediction mirrors
        the label or follows the score).
    total
        Rows the pass counted.
    on_missing
        ``"warn"``, ``"raise"`` or ``"ignore"``.
    examples
        Fetches a few offending values of a role (a second query that runs only on this error
        path); ``None``: the message has counts only.
    excluded_from
        How the message says what happens to missing rows.
    stacklevel
        Of the warning.

    Raises
    ------
    InvalidInputError
        Invalid values (the first role in the order y_true, y_pred, y_score, weight), naming the
        column, the count, example values and the fix; missing values with ``on_missing="raise"``.

    Warns
    -----
    MissingValuesWarning
        Rows with a null or NaN label, prediction, score or weight (``on_missing="warn"``).

    Examples
    --------
    >>> import polars as pl
    >>> w = weight(POLARS, Column("w", pl.col("w"), pl.Float64))
    >>> check_problems({"invalid_weight": 2}, {"weight": w}, total=10)
    Traceback (most recent call last):
    ...
    polfair.exceptions.InvalidInputError: weight='w': 2 rows (of 10) have weights that are negative or infinite. ...
    """
    for kind, role in _KIND_ROLE.items():
        n = problems.get(f"invalid_{kind}", 0)
        c = roles.get(role)
        if not n or c is None:
            continue
        found = ""
        if examples is not None:
            try:
                found = f"; found e.g. {examples(c)}"
            except Exception:  # pragma: no cover - the examples are a courtesy; the counts are the error
                found = ""
        msg = f"{role}={c.column!r}: {n} rows (of {total}) have {c.what}{found}. {c.fix}"
        raise InvalidInputError(msg)
    missing = {k: problems.get(f"null_{k}", 0) for k in _KIND_ROLE if _KIND_ROLE[k] in roles}
    if "y_pred" not in roles or roles["y_pred"].role != "y_pred":
        missing.pop("prediction", None)  # it mirrors the label, or is the score's (counted there)
    missing = {k: v for k, v in missing.items() if v}
    if not missing or on_missing == "ignore":
        return
    parts = ", ".join(f"{v} with a null {k}" for k, v in missing.items())
    cols = ", ".join(f"{_KIND_ROLE[k]}={roles[_KIND_ROLE[k]].column!r}" for k in missing)
    tail = ("on_missing='raise': fill or drop them before the report, or pass on_missing='ignore'"
            if on_missing == "raise" else
            "Fill or drop them before the report to silence this, or pass on_missing='ignore'")  # fmt: skip
    rows = problems.get("missing", 0)
    these = f"these {rows} rows" if rows else "these rows"
    msg = f"{parts} (of {total} rows; NaN counts as null): {these} are {excluded_from} ({cols}). {tail}"
    if on_missing == "raise":
        raise InvalidInputError(msg)
    warnings.warn(msg, MissingValuesWarning, stacklevel=stacklevel)


def check_finite_sums(sums: pl.DataFrame, columns: Sequence[str], weight_: Compiled | None) -> None:
    """The Float64 overflow check of a pass: every counted weight is finite, so an infinite sum (or
    sum of squares) of counted rows is an overflow; raise naming the weight column and the fix.

    Parameters
    ----------
    sums
        The pass's result, restricted to counted rows.
    columns
        Its Float64 sum columns (``w2``-like names: a sum of squared weights).
    weight_
        The compiled weight role (``None``: unweighted, nothing to check).

    Raises
    ------
    InvalidInputError
        A sum is infinite.

    Examples
    --------
    >>> import polars as pl
    >>> w = weight(POLARS, Column("w", pl.col("w"), pl.Float64))
    >>> check_finite_sums(pl.DataFrame({"s": [1.0]}), ["s"], w)
    >>> check_finite_sums(pl.DataFrame({"s": [float("inf")]}), ["s"], w)
    Traceback (most recent call last):
    ...
    polfair.exceptions.InvalidInputError: weight='w': the weighted sum of a group overflows Float64 ...
    """
    if weight_ is None or not sums.height:
        return
    for col in columns:
        if col in sums.columns and sums.schema[col].is_float() and sums.get_column(col).is_infinite().any():
            what = "the sum of squared weights (Kish sizes)" if "2" in col else "the weighted sum"
            msg = (
                f"weight={weight_.column!r}: {what} of a group overflows Float64 (each weight is finite, the "
                "sum is not); rescale the weights, e.g. divide them by their mean: every rate is unchanged"
            )
            raise InvalidInputError(msg)


def fetch_examples(frame: Any, ns: Any, c: Compiled, collect: Callable[[Any], pl.DataFrame]) -> list[Any]:
    """Up to five distinct offending values of a compiled role, sorted: the error path's second query.

    Parameters
    ----------
    frame, ns
        The input as a lazy frame of the engine, and its namespace (``pl`` or ``narwhals``).
    c
        The compiled role (its column expression and its ``invalid`` mask).
    collect
        Runs the small query and returns a Polars frame.

    Examples
    --------
    >>> import polars as pl
    >>> w = weight(POLARS, Column("w", pl.col("w"), pl.Float64))
    >>> fetch_examples(pl.LazyFrame({"w": [1.0, -2.0, -1.0, -2.0]}), pl, w, lambda q: q.collect())
    [-2.0, -1.0]
    """
    q = frame.select(c.source.expr.alias("v"), c.invalid.alias("b")).filter(ns.col("b")).select("v").unique()
    vals = collect(q.head(50))["v"].to_list()
    try:
        vals = sorted(vals)
    except TypeError:  # pragma: no cover - one column holds one type
        pass
    return vals[:5]


# ---------------------------------------------------------------------------------------------
# the Polars frame adapter (the narwhals one is polfair.engines.narwhals.ForeignFrame)


class PolarsFrame:
    """A Polars-readable input seen by a pass: checked columns, the pass, example values.

    Parameters
    ----------
    data
        Anything :func:`polfair.core.inputs.to_lazyframe` reads.

    Attributes
    ----------
    lf
        The input as a lazy frame.
    names
        Its column names.
    eng
        :data:`POLARS`.

    Examples
    --------
    >>> import polars as pl
    >>> f = PolarsFrame(pl.DataFrame({"y": [1, 0], "g": ["a", "b"]}))
    >>> f.column("y", "y_true").dtype
    Int64
    >>> f.aggregate({"g": pl.col("g")}, ["g"], lambda ns: [ns.len().alias("n")]).sort("g")["n"].to_list()
    [1, 1]
    """

    eng: Engine = POLARS

    def __init__(self, data: Any) -> None:
        self.lf = to_lazyframe(data)
        self.names: list[str] = self.lf.collect_schema().names()

    def column(self, x: Any, role: str) -> Column:
        """The :class:`Column` of a role's argument (a name or a named expression), checked.

        Raises
        ------
        ColumnNotFoundError
            A named column is missing (close names suggested).
        PolfairError
            The expression does not type-check on the input, or has no name.
        TypeError
            ``x`` is neither a name nor an expression.
        """
        e = as_expr(x, role)
        check_columns(e, role, self.names)
        name = output_name(e, role)
        try:
            dtype = self.lf.select(e.alias("__pf_v")).collect_schema()["__pf_v"]
        except pl.exceptions.PolarsError as exc:
            msg = f"cannot evaluate the column expression {role}={e} on the input: {exc}"
            raise PolfairError(msg) from exc
        return Column(name, e, dtype)

    def examples(self, c: Compiled) -> list[Any]:
        """A few offending values of a compiled role (a second query; runs only on the error path)."""
        return fetch_examples(self.lf, pl, c, lambda q: q.collect())

    def aggregate(
        self, columns: Mapping[str, Any], group: Sequence[str], aggs: Callable[[Any], list[Any]], engine: str = "auto"
    ) -> pl.DataFrame:
        """``select(columns).group_by(group).agg(aggs(pl))``, collected (the pass)."""
        planned = self.lf.select([e.alias(n) for n, e in columns.items()])
        out = planned.group_by(list(group)).agg(aggs(pl)) if group else planned.select(aggs(pl))
        return out.collect(engine=engine)  # type: ignore[call-overload]
