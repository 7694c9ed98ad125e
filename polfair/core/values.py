"""User values in the column's dtype, and checks of the tables polfair reads back.

Values a user names (``favorable``, ``unfavorable``, ``privileged``, monitored and reference
groups, the aif360 facade's group conditions) are compared with a column *in that column's dtype*,
never through their text: ``1`` matches ``1.0`` in a Float column, ``True`` and ``1`` both match in
Boolean and 0/1 integer columns, ``None`` names the null group (the string ``"null"`` only a real
string), and a value the dtype cannot represent (``1.5`` in an Int64 column, ``300`` in a UInt8
column, ``"1"`` in an integer column) is an error naming the option, the column and its dtype.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import math
import warnings
from collections.abc import Sequence
from typing import Any

import polars as pl

from polfair.exceptions import InvalidInputError, user_stacklevel

__all__ = [
    "UNSUPPORTED_DTYPES",
    "absent_values_message",
    "check_key_dtype",
    "check_option_types",
    "check_role_dtype",
    "check_values_present",
    "coerce_value",
    "coerce_values",
    "match_values",
]

#: Dtypes no role accepts (labels, predictions, scores, weights, keys): their values have no order
#: or equality polfair can use as a group or an outcome.
UNSUPPORTED_DTYPES = (pl.List, pl.Array, pl.Struct, pl.Object, pl.Binary)


def _unsupported(dtype: pl.DataType) -> bool:
    return isinstance(dtype, UNSUPPORTED_DTYPES) or dtype in (pl.Object, pl.Binary, pl.Null) or (
        isinstance(dtype, type) and issubclass(dtype, UNSUPPORTED_DTYPES)
    )


def check_role_dtype(dtype: pl.DataType, role: str, column: str) -> None:
    """Raise unless a column of ``dtype`` can play ``role`` at all (no List/Array/Struct/Object/Binary).

    Parameters
    ----------
    dtype
        The column's Polars dtype.
    role
        The option that names the column (``"y_true"``, ``"protected"``, ``"--weight"``, ...).
    column
        The column's name, for the message.

    Raises
    ------
    InvalidInputError
        The dtype is nested (List, Array, Struct), Object, Binary or Null (an all-null column of
        unknown type).

    Examples
    --------
    >>> import polars as pl
    >>> check_role_dtype(pl.Int64, "y_true", "y")
    >>> check_role_dtype(pl.List(pl.Int64), "protected", "tags")
    Traceback (most recent call last):
    ...
    polfair.exceptions.InvalidInputError: protected: column 'tags' has dtype List(Int64), ...
    """
    if _unsupported(dtype):
        what = "an all-null column of unknown type" if dtype == pl.Null else "not a scalar type"
        msg = (
            f"{role}: column {column!r} has dtype {dtype}, {what}; polfair needs one scalar value per "
            "row (string, integer, boolean, or a category); select or derive a scalar column, e.g. "
            f"pl.col({column!r}).list.first() or .cast(pl.String)"
        )
        raise InvalidInputError(msg)


def check_key_dtype(dtype: pl.DataType, role: str, column: str) -> None:
    """Raise unless a column of ``dtype`` can be a group key (a ``protected`` or ``by`` column).

    Strings, integers, Floats, booleans, Categorical/Enum, Decimal, Date and Datetime keys are
    accepted (dates render as ISO text in the report's ``group`` column). Duration and Time keys
    are rejected (bin them). Whether a key has too many groups (a continuous column, an id) is a
    matter of its cardinality, checked after the pass (``polfair.core.passes.collect``), not of its dtype:
    a Float key with the values 0.0/1.0 is a group column like an integer one.

    Parameters
    ----------
    dtype, role, column
        As :func:`check_role_dtype`.

    Raises
    ------
    InvalidInputError
        As described above; the message suggests binning.

    Examples
    --------
    >>> import polars as pl
    >>> check_key_dtype(pl.Float64, "protected", "sex")
    >>> check_key_dtype(pl.Time, "protected", "t")
    Traceback (most recent call last):
    ...
    polfair.exceptions.InvalidInputError: protected: column 't' has dtype Time, which is not a group; ...
    """
    check_role_dtype(dtype, role, column)
    if isinstance(dtype, (pl.Duration, pl.Time)) or dtype in (pl.Duration, pl.Time):
        msg = (
            f"{role}: column {column!r} has dtype {dtype}, which is not a group; bin it first, e.g. "
            f"pl.col({column!r}).dt.hour().alias('{column}_hour') or bin its total seconds"
        )
        raise InvalidInputError(msg)


def _kind(v: Any) -> str:
    return type(v).__name__


def _example(dtype: pl.DataType) -> str:
    if dtype == pl.Boolean:
        return "True"
    if dtype.is_integer():
        return "1"
    if dtype.is_float():
        return "1.0"
    if dtype.is_temporal():
        return "datetime.date(2020, 1, 1)"
    return "'Yes'"


def coerce_value(v: Any, dtype: pl.DataType, *, option: str, column: str) -> Any:
    """One user value as a value of a column of ``dtype`` (``None`` stays ``None``: the null group).

    Parameters
    ----------
    v
        The user's value (Python or NumPy scalar).
    dtype
        The column's Polars dtype.
    option
        The option that gave the value (``"favorable"``, ``"privileged"``, ``"--favorable"``, ...).
    column
        The column's name, for messages.

    Returns
    -------
    Any
        ``bool`` for Boolean columns (``True``/``1``/``1.0``), ``int`` for integer columns
        (``1``, ``1.0`` and ``True`` -> ``1``), ``float`` for Float columns, ``str`` for
        String/Categorical/Enum columns, ``date``/``datetime`` for temporal ones; ``None``.

    Raises
    ------
    InvalidInputError
        The value cannot be represented in the dtype (``1.5`` or ``"1"`` in an integer column,
        ``-1`` or ``300`` in UInt8, ``2`` in a Boolean column, ``1`` in a String column, a string
        that is not a category of an Enum, NaN anywhere); the message names the option, the
        column, its dtype and the value.

    Examples
    --------
    >>> import polars as pl
    >>> coerce_value(1.0, pl.Int64, option="favorable", column="y")
    1
    >>> coerce_value(1, pl.Boolean, option="favorable", column="y")
    True
    >>> coerce_value(1.5, pl.Int64, option="favorable", column="y")
    Traceback (most recent call last):
    ...
    polfair.exceptions.InvalidInputError: favorable=1.5 cannot match column 'y' of dtype Int64: ...
    """
    if v is None:
        return None
    if hasattr(v, "item") and not isinstance(v, (str, bytes)) and getattr(v, "ndim", 0) == 0:
        try:
            v = v.item()  # NumPy scalars -> Python
        except (TypeError, ValueError):  # pragma: no cover - an odd scalar type; judged as is below
            v = v

    def bad(why: str) -> InvalidInputError:
        return InvalidInputError(
            f"{option}={v!r} cannot match column {column!r} of dtype {dtype}: {why}. Give a value "
            f"of the column's type, e.g. {option}={_example(dtype)}"
        )

    if isinstance(v, float) and math.isnan(v):
        raise bad("NaN is a missing value, never a group or an outcome; use None for null rows")
    if dtype == pl.Boolean:
        if isinstance(v, bool):
            return v
        if isinstance(v, (int, float)) and v in (0, 1):
            return bool(v)
        raise bad("a Boolean column takes True/False (or 1/0)")
    if dtype.is_integer():
        if isinstance(v, bool):
            out = int(v)
        elif isinstance(v, int):
            out = v
        elif isinstance(v, float) and v.is_integer():
            out = int(v)
        elif isinstance(v, decimal.Decimal) and v == v.to_integral_value():
            out = int(v)
        else:
            raise bad(f"it is not an integer ({_kind(v)})")
        try:
            pl.Series([out], dtype=dtype, strict=True)
        except (TypeError, ValueError, OverflowError, pl.exceptions.PolarsError):
            raise bad(f"{out} is outside the range of {dtype}") from None
        return out
    if dtype.is_float():
        if isinstance(v, (bool, int, float, decimal.Decimal)):
            return float(v)
        raise bad(f"it is not a number ({_kind(v)})")
    if isinstance(dtype, pl.Decimal):
        if isinstance(v, (bool, int, float, decimal.Decimal)):
            return decimal.Decimal(str(v)) if isinstance(v, float) else decimal.Decimal(v)
        raise bad(f"it is not a number ({_kind(v)})")
    if dtype == pl.String or isinstance(dtype, (pl.String, pl.Categorical, pl.Enum)):
        if not isinstance(v, str):
            raise bad(f"it is a {_kind(v)}, the column holds strings (did you mean {str(v)!r}?)")
        if isinstance(dtype, pl.Enum) and v not in dtype.categories.to_list():
            cats = dtype.categories.to_list()
            shown = ", ".join(map(repr, cats[:20])) + (", ..." if len(cats) > 20 else "")
            raise bad(f"{v!r} is not a category of the Enum ({shown})")
        return v
    if isinstance(dtype, pl.Datetime) or dtype == pl.Datetime:
        if isinstance(v, _dt.datetime):
            zone = getattr(dtype, "time_zone", None)
            if v.tzinfo is not None and zone is None:
                raise bad("it is a time-zone-aware datetime and the column holds wall-clock times (naive; a Spark "
                          "TIMESTAMP as the session's time zone shows it): give the wall-clock time, e.g. "
                          "v.astimezone(ZoneInfo(spark.conf.get('spark.sql.session.timeZone'))).replace(tzinfo=None)")
            return v
        if isinstance(v, _dt.date):
            return _dt.datetime(v.year, v.month, v.day)
        raise bad(f"it is a {_kind(v)}, not a datetime")
    if dtype == pl.Date:
        if isinstance(v, _dt.datetime):
            raise bad("it is a datetime, the column holds dates")
        if isinstance(v, _dt.date):
            return v
        raise bad(f"it is a {_kind(v)}, not a date")
    try:  # other dtypes: accept what Polars converts without loss
        s = pl.Series([v], dtype=dtype, strict=True)
    except (TypeError, ValueError, OverflowError, pl.exceptions.PolarsError):
        raise bad(f"{_kind(v)} is not a value of this dtype") from None
    return s[0]


def coerce_values(values: Any, dtype: pl.DataType, *, option: str, column: str) -> tuple[Any, ...]:
    """:func:`coerce_value` of one value or a list/tuple/set of values (duplicates dropped, order kept).

    Examples
    --------
    >>> import polars as pl
    >>> coerce_values([1, 1.0, None], pl.Float64, option="privileged", column="g")
    (1.0, None)
    """
    items = values if isinstance(values, (list, tuple, set, frozenset)) else [values]
    out = [coerce_value(v, dtype, option=option, column=column) for v in items]
    return tuple(dict.fromkeys(out))


def match_values(expr: pl.Expr, dtype: pl.DataType, values: Sequence[Any]) -> pl.Expr:
    """Boolean expression: the value of ``expr`` (a column of ``dtype``) is one of ``values``.

    ``values`` come from :func:`coerce_values` (already in the dtype); ``None`` among them matches
    the null rows, so the result is never null. NaN rows of a Float column match nothing.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"g": [1.0, 2.0, None]})
    >>> df.select(match_values(pl.col("g"), pl.Float64, (1.0, None)))["g"].to_list()
    [True, False, True]
    """
    real = [v for v in values if v is not None]
    out: pl.Expr
    if not real:
        out = pl.lit(False)
    elif dtype == pl.Boolean:
        out = expr.is_not_null() if set(real) == {True, False} else (expr if real[0] else ~expr)
    elif isinstance(dtype, (pl.Categorical, pl.Enum)):
        out = expr.cast(pl.String).is_in(pl.Series(real, dtype=pl.String).implode())
    else:
        out = expr.is_in(pl.Series(real, dtype=dtype).implode())
    out = out.fill_null(False)
    if len(real) < len(values):
        out = out | expr.is_null()
    return out


def _shown(values: Sequence[Any], limit: int = 20) -> str:
    out = ", ".join(repr(v) for v in values[:limit])
    return out + (f", ... ({len(values)} in all)" if len(values) > limit else "")


def absent_values_message(option: str, absent: Sequence[Any], column: str, seen: Sequence[Any] | str,
                          consequence: str) -> str:  # fmt: skip
    """The one message of a value a user named that occurs in no row (``privileged``, ``favorable``,
    a config's monitored or reference values): what, where, the values that exist, the consequence.

    Parameters
    ----------
    option
        How the value was given, e.g. ``"privileged={'race': ['White']}"`` or ``"favorable='No'"``.
    absent
        The values found in no row.
    column
        The column they were looked for in.
    seen
        Values the column holds (a few; fetched on the warning path only), or a text such as
        ``"from 30 to 90"`` (a numeric column's range).
    consequence
        What follows (``"every base rate is 0"``).

    Returns
    -------
    str

    Examples
    --------
    >>> absent_values_message("favorable='No'", ["No"], "y", ["no", "yes"], "no row is favorable")[:72]
    "favorable='No': 'No' does not occur in column 'y' (values: 'no', 'yes');"
    """
    if isinstance(seen, str):
        values = f" (values {seen})"
    else:
        shown = ", ".join(repr(v) for v in seen[:10]) + (", ..." if len(seen) > 10 else "")
        values = f" (values: {shown})" if seen else ""
    return (
        f"{option}: {', '.join(repr(v) for v in absent)} does not occur in column {column!r}{values}; "
        f"{consequence}. Check the spelling and the type of the value"
    )


def check_values_present(
    cells: pl.DataFrame,
    column: str,
    values: Sequence[Any],
    *,
    option: str,
    by: Sequence[str] = (),
) -> None:
    """Raise (or, under ``by``, warn) when none of ``values`` occurs in ``cells[column]``.

    Parameters
    ----------
    cells
        A table with the key column (a cell table, or any frame of observed key values).
    column
        The key column.
    values
        The wanted values, in the column's dtype (:func:`coerce_values`); ``None`` = null rows.
    option
        The option that named them, for messages (``"privileged"``, ``"reference"``).
    by
        ``by`` columns of ``cells``: without them an absent value is an error; with them, a
        :class:`UserWarning` names the ``by`` groups where no row has one of ``values`` (an error
        when no ``by`` group has one).

    Raises
    ------
    InvalidInputError
        None of the values occurs; the message lists the values that exist.

    Examples
    --------
    >>> import polars as pl
    >>> cells = pl.DataFrame({"g": ["a", "b"]})
    >>> check_values_present(cells, "g", ("a",), option="privileged")
    >>> check_values_present(cells, "g", ("c",), option="privileged")
    Traceback (most recent call last):
    ...
    polfair.exceptions.InvalidInputError: privileged={'g': 'c'} matches no row: ...
    """
    hit = match_values(pl.col(column), cells.schema[column], values)
    wanted = values[0] if len(values) == 1 else list(values)

    def existing() -> str:
        vals = cells.get_column(column).unique(maintain_order=True).sort(nulls_last=False).to_list()
        return _shown(vals)

    if not by:
        if not cells.select(hit.any()).item():
            msg = (
                f"{option}={{{column!r}: {wanted!r}}} matches no row: column {column!r} "
                f"({cells.schema[column]}) holds {existing()}"
            )
            raise InvalidInputError(msg)
        return
    per_by = cells.group_by(list(by), maintain_order=True).agg(hit.any().alias("__pf_hit"))
    absent = per_by.filter(~pl.col("__pf_hit"))
    if absent.height == per_by.height:
        msg = (
            f"{option}={{{column!r}: {wanted!r}}} matches no row in any by group: column "
            f"{column!r} ({cells.schema[column]}) holds {existing()}"
        )
        raise InvalidInputError(msg)
    if absent.height:
        where = _shown([tuple(r) if len(r) > 1 else r[0] for r in absent.select(list(by)).rows()], 10)
        msg = (
            f"{option}={{{column!r}: {wanted!r}}} matches no row where {', '.join(by)} = {where}; "
            f"those by groups get null comparisons (column {column!r} holds {existing()})"
        )
        warnings.warn(msg, UserWarning, stacklevel=user_stacklevel())


def _is_column(x: Any) -> bool:
    # an Ibis expression (``t.score >= 5``, ``ibis._.x``) is a column of an Ibis table (polfair.engines.narwhals)
    return isinstance(x, (str, pl.Expr)) or type(x).__module__.split(".")[0] == "ibis"


def _is_columns(x: Any) -> bool:
    return _is_column(x) or (isinstance(x, (list, tuple)) and all(_is_column(v) for v in x))


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and not (isinstance(x, float) and math.isnan(x))


_OPTION_RULES: dict[str, tuple[Any, str]] = {
    "y_true": (lambda x: x is None or _is_column(x), "a column name (str) or a polars expression"),
    "y_pred": (lambda x: x is None or _is_column(x), "a column name (str), a polars expression, or None"),
    "y_score": (lambda x: x is None or _is_column(x), "a column name (str), a polars expression, or None"),
    "weight": (lambda x: x is None or _is_column(x), "a column name (str), a polars expression, or None"),
    "protected": (lambda x: x is None or _is_columns(x), "a column name, an expression, or a list of them"),
    "by": (lambda x: x is None or _is_columns(x), "a column name, an expression, a list of them, or None"),
    "threshold": (_is_number, "a number in [0, 1]"),
    "favorable": (lambda x: not isinstance(x, (dict, pl.Expr, pl.Series)), "a label value or a list of label values"),
    "unfavorable": (lambda x: not isinstance(x, (dict, pl.Expr, pl.Series)), "a label value, a list of them, or None"),
    "score_label": (lambda x: x is None or not isinstance(x, (dict, list, tuple, set, frozenset, pl.Expr, pl.Series)),
                    "one label value (the label y_score is the probability of), or None"),
    "privileged": (
        lambda x: x is None or isinstance(x, dict) or hasattr(x, "items"),
        "a mapping attribute -> value(s), e.g. {'sex': 'Male'}",
    ),
    "intersections": (
        lambda x: x is None or x in ("all", "none") or (isinstance(x, int) and not isinstance(x, bool))
        or (isinstance(x, (list, tuple)) and all(isinstance(s, (str, list, tuple)) for s in x)),
        "None (default sets under the intersection budget), 'all' (every subset), 'none' (each attribute "
        "alone), an int (largest attribute-set size) or a list of "
        "attribute-name lists",
    ),
    "alpha": (_is_number, "a number (the generalized entropy index's alpha)"),
    "concentration": (_is_number, "a number >= 0"),
    "on_missing": (lambda x: isinstance(x, str), "one of 'warn', 'raise', 'ignore'"),
    "engine": (lambda x: isinstance(x, str), "a Polars engine name: 'streaming', 'in-memory' or 'auto'"),
    "min_sample_size": (lambda x: x is None or (_is_int(x) and x >= 0), "None or an int >= 0"),
    "max_sample_size": (lambda x: x is None or (_is_int(x) and x >= 1), "None or an int >= 1"),
    "allow_many_groups": (lambda x: isinstance(x, bool), "True or False"),
    "exact_sums": (lambda x: isinstance(x, bool), "True or False"),
}


def check_option_types(options: dict[str, Any]) -> None:
    """Raise ``TypeError`` naming the option when a keyword of the Python API has the wrong type.

    Parameters
    ----------
    options
        Keyword name -> value (names without a rule are not checked).

    Raises
    ------
    TypeError
        ``"<name> must be <what>, got <type>: <value>"``.

    Examples
    --------
    >>> check_option_types({"threshold": 0.5, "protected": ["sex"]})
    >>> check_option_types({"threshold": None})
    Traceback (most recent call last):
    ...
    TypeError: threshold must be a number in [0, 1], got NoneType: None
    """
    for name, value in options.items():
        rule = _OPTION_RULES.get(name)
        if rule is not None and not rule[0](value):
            msg = f"{name} must be {rule[1]}, got {type(value).__name__}: {value!r}"
            raise TypeError(msg)
