"""Small value helpers shared by the monitor's modules: number tests, number text, sample sizes.

An underscore module: internal to :mod:`polfair.monitor` (its modules import it), not public API.
"""

from __future__ import annotations

import math
from typing import Any

from polfair.exceptions import PolfairError

__all__ = ["check_size", "format_number", "is_number"]


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
