"""The input contract's rules: the outcome code, the dtype vocabulary and the contract table.

Part of :mod:`polfair.core.contract` (the public module, which re-exports this one's public names and
describes the contract as a whole). Here: the outcome code's column and its states and flag bits
(:data:`CODE`, :data:`MISSING`, :data:`INVALID`, the ``FLAG_*`` bits), the ``exact_sums`` weight
range, the dtype kinds (:func:`dtype_kind`) and the table of what each role accepts
(:data:`ROLES`, :func:`contract_table`).
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

__all__ = [
    "CODE",
    "EXACT_SCALE",
    "FLAG_BAD_SCORE",
    "FLAG_BAD_WEIGHT",
    "FLAG_NULL_SCORE",
    "FLAG_NULL_WEIGHT",
    "INVALID",
    "KINDS",
    "MAX_EXACT_WEIGHT",
    "MIN_EXACT_WEIGHT",
    "MISSING",
    "ROLES",
    "Role",
    "contract_table",
    "dtype_kind",
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
         "as y_true; a Boolean prediction next to non-Boolean labels stands for a label by the polarity rule "
         "(True = favorable where every favorable label sorts above the others, else score_label= says)",
         "as y_true; the message suggests y_score=..., threshold= (probabilities passed as predictions)"),
    Role("y_score", _NUMBER_KINDS, _MISSING, "missing",
         "±inf is invalid; outside [0, 1] is invalid where probabilities are needed (classification "
         "cells, Brier, ECE, reliability); the score is of score_label (default: the favorable label, by the "
         "polarity rule)",
         "InvalidInputError naming the column, the count and example values; Boolean/String dtypes: "
         "InvalidInputError before the pass (cast them)"),
    Role("y_true (numeric)", _NUMBER_KINDS, _MISSING, "missing", "±inf is invalid",
         "InvalidInputError naming the column, the count and example values (regression passes)"),
    Role("y_pred (numeric)", _NUMBER_KINDS, _MISSING, "missing", "±inf is invalid",
         "as y_true (numeric)"),
    Role("weight", _NUMBER_KINDS, _MISSING, "missing (as null)",
         "negative or ±inf is invalid; with exact_sums=True also a weight in (0, 2**-16) or >= 2**40",
         "InvalidInputError naming the column, the count, example values and the fix (rescale; "
         "exact_sums=False); a weighted sum that overflows Float64: InvalidInputError (rescale); every report is "
         "free of the weights' scale for weights in about [1e-240, 1e240] (a power-of-two unit where their squares "
         "leave Float64); beyond, null Kish sizes with a WeightRangeWarning naming the column. One exception, by "
         "definition: the smoothed empirical differential fairness rows add aif360's fixed Dirichlet "
         "concentration to weighted counts, so they change with the weights' scale (kept for aif360 parity; "
         "normalise the weights, e.g. to mean 1, to compare runs)"),
    Role("protected", _KEY_KINDS, "its own group, shown as 'null'",
         "the null group (Float keys; -0.0 is 0.0)",
         "every distinct value is a group; more than 1000 distinct values that are more than half "
         "the rows is an error (allow_many_groups=True accepts it)",
         "InvalidInputError naming the column: Time/Duration/nested dtypes (bin them), too many "
         "groups (bin them, with a hint)"),
    Role("by", _KEY_KINDS, "its own group", "the null group (Float keys; -0.0 is 0.0)", "as protected",
         "as protected"),
    Role("errors", ("boolean", *_NUMBER_KINDS), "missing: the row is left out of the slice search; MissingValuesWarning "
         "(on_missing)", "missing", "negative or ±inf is invalid (a per-row loss: 0/1 errors, squared error, log loss; "
         "True is 1)",
         "InvalidInputError naming the column, the count, example values and the fix; String/nested dtypes: "
         "InvalidInputError before the pass"),
    Role("features", _KEY_KINDS, "a value of its own (a slice may be 'feature is null')",
         "the null value (Float features; -0.0 is 0.0)",
         "every distinct value is a value; numeric features with more distinct values than bins= are cut at "
         "their quantiles", "InvalidInputError naming the column: Time/Duration/nested dtypes (bin them)"),
    Role("protected_proba", _NUMBER_KINDS,
         "missing (any of the row's probabilities): the row's group is unknown; counted in n_missing of the "
         "attribute's null group, left out of every rate; MissingValuesWarning (on_missing)",
         "missing (as null)",
         "a probability outside [0, 1] or ±inf is invalid; a row whose probabilities do not sum to 1 "
         "(within proba_tolerance; with a remainder group: sum above 1 + proba_tolerance) is invalid; "
         "each row's probabilities are divided by their sum",
         "InvalidInputError naming the attribute and its columns, the row count, example values and "
         "the fix (normalise, a remainder group, proba_tolerance=); Boolean/String dtypes: "
         "InvalidInputError before the pass (cast them)"),
    Role("cluster", ("boolean", "integer", "float", "decimal", "string", "categorical", "enum", "date",
                     "datetime"),
         "one more cluster", "one more cluster", "every value is a cluster id (hashed into buckets)",
         "InvalidInputError for nested dtypes; on Spark/DuckDB boolean, integer, string, categorical and enum ids "
         "only (the bucket hash every engine computes identically; PolfairError otherwise)"),
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
        [
            {
                "role": r.name,
                "dtypes": ", ".join(r.kinds),
                "null": r.null,
                "nan": r.nan,
                "outside": r.outside,
                "error": r.error,
            }
            for r in ROLES.values()
        ]  # fmt: skip
    )
