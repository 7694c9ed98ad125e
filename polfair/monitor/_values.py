"""Small value helpers shared by the monitor's modules: number tests, number text, sample sizes.

An underscore module: internal to :mod:`polfair.monitor` (its modules import it), not public API.
"""

from __future__ import annotations

import math
from typing import Any

from polfair.exceptions import PolfairError

__all__ = ["check_size", "column_or_sql", "format_number", "is_number"]


def is_number(v: Any) -> bool:
    """Whether ``v`` is an int or a float (booleans are not numbers here).

    Examples
    --------
    >>> is_number(1), is_number(2.5), is_number(True), is_number("1")
    (True, True, False, False)
    """
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def format_number(x: float) -> str:
    """A number as config text: integral floats without ``.0``, ``inf``/``-inf`` for infinities.

    Examples
    --------
    >>> format_number(18), format_number(25.0), format_number(0.8), format_number(float("-inf"))
    ('18', '25', '0.8', '-inf')
    """
    if isinstance(x, int):
        return str(x)
    if math.isfinite(x) and x == int(x) and abs(x) < 1e15:
        return str(int(x))
    return repr(float(x)) if math.isfinite(x) else ("inf" if x > 0 else "-inf")


def check_size(v: Any, where: str) -> int | None:
    """Validate an optional sample size: ``None`` or a positive int (rows).

    Raises
    ------
    PolfairError
        ``v`` is not ``None`` and not a positive integer; the message starts with ``where``.

    Examples
    --------
    >>> check_size(None, "min_sample_size"), check_size(30, "min_sample_size")
    (None, 30)
    """
    if v is None:
        return None
    if not isinstance(v, int) or isinstance(v, bool) or v < 1:
        msg = f"{where} must be a positive integer (rows), got {v!r}"
        raise PolfairError(msg)
    return v


def column_or_sql(text: str, names: list[str] | tuple[str, ...], where: str) -> Any:
    """A column of the input when ``text`` names one, else the SQL expression ``text`` (``polars.sql_expr``).

    The command line's flags and a config file's column keys (``y_pred = "decile_score >= 5"``)
    read their text this one way.

    Parameters
    ----------
    text
        A column name or a SQL expression such as ``"decile_score >= 5"`` or
        ``"CASE WHEN age < 25 THEN 'young' ELSE 'older' END AS age_band"``.
    names
        The input's column names.
    where
        The flag or config key, for messages (``"--y-pred"``, ``"config: y_pred"``).

    Returns
    -------
    pl.Expr

    Raises
    ------
    PolfairError
        ``text`` is neither a column nor a SQL expression (the message names ``where`` and a few columns).

    Examples
    --------
    >>> column_or_sql("decile_score >= 5", ["decile_score"], "y_pred")
    <Expr ['[(col("decile_score")) >= (dyn…'] at ...>
    """
    import polars as pl

    if text in names:
        return pl.col(text)
    try:
        return pl.sql_expr(text)
    except Exception as exc:
        shown = ", ".join(list(names)[:15]) + (" ..." if len(names) > 15 else "")
        msg = f"{where} {text!r} is neither a column of the input ({shown}) nor a SQL expression: {exc}"
        raise PolfairError(msg) from exc
