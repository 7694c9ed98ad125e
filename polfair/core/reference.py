"""The small-group policy and the reference (comparison) group, decided once for every report.

**The minimum sample size** (:data:`DEFAULT_MIN_SAMPLE_SIZE`, :func:`resolve_min_sample_size`).
A group with fewer input rows than ``min_sample_size`` gets no verdict (``insufficient_data``,
:func:`polfair.core.report.status.status_expr`) and is never chosen as a comparison group. The
default is 30 rows: the usual rule of thumb for the normal approximation of a rate (the report's
intervals and z tests are large-sample methods), the size the demo and the HTML page used, and well
above the sizes at which a single row flips a four-fifths verdict (29 CFR 1607.4(D): "greater
differences in selection rate may not constitute adverse impact where the differences are based on
small numbers"). ``min_sample_size=None`` means this default; ``0`` switches the policy off.

**Reference choice** (:func:`largest_reference`, :func:`best_value`, :func:`warn_small_reference`):

* ``"privileged"``: the group the user named; when it has fewer rows than the minimum a
  :class:`~polfair.exceptions.ReferenceWarning` says so (its comparisons are ``insufficient_data``);
* ``"largest"``: the group of largest total weight among the groups that meet the minimum (ties: the
  first in key order); when none meets it, the largest of all (every comparison is then
  ``insufficient_data``);
* ``"best"`` (highest rate, the EEOC's comparison group): the best value among the groups that
  meet the minimum; when none does, among all groups, with a warning.

The classification report (:mod:`polfair.core.report.build`), the regression report
(:mod:`polfair.core.regression.report`), the score report (``polfair.scores``) and the adverse
impact batteries (``polfair.regulatory``) call these functions; none chooses on its own.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import polars as pl

from polfair.exceptions import PolfairError, ReferenceWarning

__all__ = [
    "DEFAULT_MIN_SAMPLE_SIZE",
    "best_value",
    "check_min_sample_size",
    "eligible",
    "largest_reference",
    "resolve_min_sample_size",
    "small_reference_message",
    "warn_small_reference",
]

#: Input rows a group needs for a verdict and to be a comparison group (``min_sample_size=None``).
DEFAULT_MIN_SAMPLE_SIZE = 30


def resolve_min_sample_size(value: Any, option: str = "min_sample_size") -> int:
    """The minimum in force: ``None`` -> :data:`DEFAULT_MIN_SAMPLE_SIZE`; ``0`` -> no minimum.

    Raises
    ------
    PolfairError
        Not ``None`` nor an int >= 0 (the message names ``option``).

    Examples
    --------
    >>> resolve_min_sample_size(None), resolve_min_sample_size(0), resolve_min_sample_size(5)
    (30, 0, 5)
    """
    if value is None:
        return DEFAULT_MIN_SAMPLE_SIZE
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        msg = (
            f"{option} must be None (the default minimum, {DEFAULT_MIN_SAMPLE_SIZE} rows) or an int >= 0 "
            f"(0: no minimum), got {value!r}"
        )
        raise PolfairError(msg)
    return int(value)


def check_min_sample_size(value: Any, option: str = "min_sample_size") -> int | None:
    """Validate ``min_sample_size`` without applying the default: ``None`` (not given) or an int >= 0.

    Examples
    --------
    >>> check_min_sample_size(None), check_min_sample_size(0)
    (None, 0)
    """
    return None if value is None else resolve_min_sample_size(value, option)


def eligible(size: str | pl.Expr, min_sample_size: int) -> pl.Expr:
    """Boolean expression: the group meets the minimum (``size >= min_sample_size``; null size: no).

    Examples
    --------
    >>> import polars as pl
    >>> pl.DataFrame({"n": [1, 30, None]}).select(eligible("n", 30))["n"].to_list()
    [False, True, False]
    """
    e = pl.col(size) if isinstance(size, str) else size
    return (e >= min_sample_size).fill_null(False) if min_sample_size > 0 else e.is_not_null() | e.is_null()


def largest_reference(
    groups: pl.LazyFrame | pl.DataFrame,
    keys: Sequence[str],
    *,
    order: str,
    weight: str = "w",
    size: str = "n",
    min_sample_size: int = DEFAULT_MIN_SAMPLE_SIZE,
) -> pl.LazyFrame:
    """Per ``keys`` (a by value and attribute set): the ``order`` of its largest group that meets the minimum.

    Parameters
    ----------
    groups
        One row per group: the ``keys`` columns, ``order`` (a unique, sortable row id), ``weight``
        (total weight) and ``size`` (input rows).
    keys
        Columns identifying one comparison family.
    order, weight, size
        Column names (see above).
    min_sample_size
        Groups below it are chosen only when no group of the family meets it.

    Returns
    -------
    pl.LazyFrame
        ``*keys``, ``order``: one row per family (the largest weight; ties: the smallest ``order``).

    Examples
    --------
    >>> import polars as pl
    >>> g = pl.DataFrame({"a": [0, 0, 0, 1], "i": [0, 1, 2, 3], "w": [9.0, 50.0, 40.0, 2.0], "n": [9, 20, 40, 2]})
    >>> largest_reference(g, ["a"], order="i", min_sample_size=30).sort("a").collect().rows()
    [(0, 2), (1, 3)]
    """
    keys = list(keys)
    ok = eligible(size, min_sample_size)
    cand = ok | ~ok.any().over(keys) if keys else ok | ~ok.any()
    lf = groups.lazy().filter(cand)
    return lf.group_by(keys).agg(pl.col(order).filter(pl.col(weight) == pl.col(weight).max()).min())


def best_value(value: pl.Expr, higher_is_better: bool, ok: pl.Expr) -> pl.Expr:
    """Aggregation: the best ``value`` among the rows where ``ok`` (else among all rows).

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"v": [1.0, 0.7, 0.5], "n": [1, 40, 50]})
    >>> df.select(best_value(pl.col("v"), True, eligible("n", 30)))["v"].item()
    0.7
    """
    def agg(e: pl.Expr) -> pl.Expr:
        return e.max() if higher_is_better else e.min()

    return pl.when(ok.any()).then(agg(value.filter(ok))).otherwise(agg(value))


def small_reference_message(option: str, label: Any, n: int, min_sample_size: int) -> str:
    """The words every door uses for a named reference group below the minimum."""
    return (
        f"{option}: the reference group {label!r} has {n:,} input rows, below the minimum sample size "
        f"({min_sample_size}): its comparisons are insufficient_data, and it is no comparison group for a "
        f"verdict. Name a larger group, or pass min_sample_size (0: no minimum) if the group is meant"
    )


def warn_small_reference(
    refs: pl.DataFrame, *, label: str, size: str, min_sample_size: int, option: str = "privileged", stacklevel: int = 6
) -> None:
    """Warn (:class:`~polfair.exceptions.ReferenceWarning`) once per named reference below the minimum.

    ``refs``: one row per chosen reference with its ``label`` and ``size`` (input rows).

    Examples
    --------
    >>> import warnings, polars as pl
    >>> with warnings.catch_warnings(record=True) as got:
    ...     warnings.simplefilter("always")
    ...     warn_small_reference(pl.DataFrame({"g": ["x"], "n": [3]}), label="g", size="n", min_sample_size=30)
    >>> "'x' has 3 input rows" in str(got[0].message)
    True
    """
    if min_sample_size <= 0 or not refs.height:
        return
    small = refs.filter(pl.col(size) < min_sample_size).select(label, size).unique(maintain_order=True)
    for lab, n in small.iter_rows():
        warnings.warn(small_reference_message(option, lab, int(n), min_sample_size), ReferenceWarning,
                      stacklevel=stacklevel)  # fmt: skip
