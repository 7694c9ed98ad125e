"""High-cardinality attribute sets: every group in the attribute row, the worst ``k`` as group rows.

An attribute set with more groups than a person reads one by one (a zip code of 10,000 values, an
employer) keeps its complete marginal audit: its attribute rows (every metric's spread over *all*
its groups, fairlearn's disparities, the homogeneity tests, the between-group indices) are computed
over every group, and so are the adjusted p-values of its group rows (a family is still every group
of the ``by`` value and metric). Only the group rows shown are limited: where one ``by`` value holds
more than ``max_groups_per_attribute`` groups of the set, its group rows are those of the ``worst_k``
worst groups and of the groups the rows are compared with (the reference groups).

With intervals, what is computed for every group row is what choosing and adjusting needs: each
group's harm bound (below) and every p-value (``group_intervals(screen=True)``); the p-values of the
rows shown are adjusted within every group's (``adjust_p_values_at``), and the other interval
columns (Wilson limits, ratio intervals, the disparities' limits) are computed for the rows shown
only: the same numbers as in the full report (``max_groups_per_attribute=None``), row for row.

**The interval rule.** A group's harm bound is, over the rates the report computes that have a
direction of harm (:attr:`polfair.core.metrics.Metric.harm`; e.g. a *lower* selection rate, a
*higher* false-positive rate), the largest one-sided confidence bound of its difference from the
reference on the harmful side: ``difference_lo`` where higher is harmful, ``-difference_hi`` where
lower is (with ``ci=None``: the signed point difference). A positive bound says the interval lies
wholly on the harmful side; the larger, the more clearly the group is worse off. The worst groups
are those with the largest bound (ties: more input rows first, then report order); groups without
any bound (undefined rates, the reference itself) come last. The rule reads the report's own
intervals, so a small group with an extreme point value and a wide interval does not crowd out a
large group that is clearly worse off.

What was limited is said once: one :class:`~polfair.exceptions.ReportSizeWarning` naming each set,
its largest number of groups in a ``by`` value and the rows shown, and the report's request
(``groups_limited``; :func:`polfair.fairness_report`). ``max_groups_per_attribute=None`` shows every
group; so does ``fairness_report(cluster=...)`` with intervals (its jackknife adjusts the p-values
over the group rows it is given, which must then be every one).

Internal to the core report (:mod:`polfair.core.report.build` calls it; ``polfair.api`` reads :func:`groups_limited`).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl

from polfair.core._args import SMALL_COLLECT
from polfair.core.metrics import METRICS
from polfair.core.report.rows import GROUP_COL, SORT_A, Part, attribute_rows
from polfair.exceptions import PolfairError, ReportSizeWarning, user_stacklevel

__all__ = [
    "MAX_GROUPS_PER_ATTRIBUTE", "WORST_K", "check_worst_options", "groups_limited", "harm_bounds", "limited_message",
    "warn_limited", "worst_rows",
]  # fmt: skip

#: The default ``max_groups_per_attribute``: an attribute set with more groups than this in one
#: ``by`` value shows the group rows of its worst :data:`WORST_K` groups (and its reference groups).
MAX_GROUPS_PER_ATTRIBUTE = 1000
#: The default ``worst_k``.
WORST_K = 20

_SEPARATOR = " & "


def check_worst_options(max_groups: Any, worst_k: Any) -> None:
    """Raise unless ``max_groups_per_attribute`` is ``None`` or an int >= 1 and ``worst_k`` an int >= 0.

    Examples
    --------
    >>> check_worst_options(1000, 20)
    >>> check_worst_options(None, 20)
    """
    if max_groups is not None and (isinstance(max_groups, bool) or not isinstance(max_groups, int) or max_groups < 1):
        msg = (f"max_groups_per_attribute must be None (every group's rows) or an int >= 1 (groups of an "
               f"attribute set shown one by one), got {max_groups!r}")  # fmt: skip
        raise PolfairError(msg)
    if isinstance(worst_k, bool) or not isinstance(worst_k, int) or worst_k < 0:
        msg = f"worst_k must be an int >= 0 (the worst groups shown of a set over max_groups_per_attribute), got {worst_k!r}"
        raise PolfairError(msg)


def groups_limited(
    cells: pl.DataFrame | pl.LazyFrame, by: Sequence[str], sets: Sequence[Sequence[str]], max_groups: int | None,
    worst_k: int,
) -> list[dict[str, Any]]:
    """The attribute sets whose group rows are limited, from the cell table (before the report).

    Parameters
    ----------
    cells
        The cell table (one row per ``by`` value and full intersection of the protected attributes).
    by
        Its ``by`` columns.
    sets
        The attribute sets the report audits (:func:`polfair.core.report.build.attribute_sets`).
    max_groups, worst_k
        ``max_groups_per_attribute`` and ``worst_k``.

    Returns
    -------
    list of dict
        One entry per limited set, in report order: ``{"attributes": [...], "groups": int (its most
        groups in one by value), "shown": worst_k, "rule": str}``; empty when none is.

    Examples
    --------
    >>> import polars as pl
    >>> t = pl.DataFrame({"zip": [str(i) for i in range(40)], "sex": ["f", "m"] * 20})
    >>> [(s["attributes"], s["groups"]) for s in groups_limited(t, [], [("zip",), ("sex",)], 30, 5)]
    [(['zip'], 40)]
    """
    check_worst_options(max_groups, worst_k)
    if max_groups is None or not sets or (isinstance(cells, pl.DataFrame) and cells.height <= max_groups):
        return []  # (a set has at most as many groups as the table has rows)
    lf = cells.lazy()
    counts = [pl.struct(list(s)).n_unique().alias(str(i)) for i, s in enumerate(sets)]
    if by:
        row = lf.group_by(list(by)).agg(counts).select(pl.all().exclude(by).max()).collect(**SMALL_COLLECT).row(0)
    else:
        row = lf.select(counts).collect(**SMALL_COLLECT).row(0)
    rule = ("the worst groups by the interval rule (the largest one-sided confidence bound of a rate's difference from "
            "the reference on its harmful side), and the reference groups")  # fmt: skip
    return [{"attributes": list(s), "groups": int(g), "shown": worst_k, "rule": rule}
            for s, g in zip(sets, row) if g is not None and g > max_groups]  # fmt: skip


def limited_message(limited: Sequence[Mapping[str, Any]], max_groups: int) -> str:
    """The one warning of the attribute sets :func:`groups_limited` found."""
    said = "; ".join(f"{_SEPARATOR.join(s['attributes'])} ({s['groups']:,} groups)" for s in limited)
    k = limited[0]["shown"] if limited else 0
    return (
        f"attribute sets with more than max_groups_per_attribute={max_groups:,} groups in a by value: {said}; their "
        f"attribute rows cover every group, their group rows are the worst {k} groups by the interval rule and the "
        "reference groups. Pass max_groups_per_attribute=None for every group's rows, or worst_k= for more"
    )


def warn_limited(limited: Sequence[Mapping[str, Any]], max_groups: int) -> None:
    """Warn once (:class:`~polfair.exceptions.ReportSizeWarning`) when some set is limited."""
    if limited:
        warnings.warn(limited_message(limited, max_groups), ReportSizeWarning, stacklevel=user_stacklevel())


def harm_bounds(part: Part, metric_names: Sequence[str]) -> np.ndarray:
    """Each group row's harm bound (the interval rule of the module docstring; ``-inf`` where none).

    ``part`` is the group part before any metric selection restricts it: ``difference`` (and, with
    intervals, ``difference_lo`` / ``difference_hi``) of every rate in ``metric_names``.
    """
    h = part.entities.height
    best = np.full(h, -np.inf)
    intervals = part.intervals.columns if part.intervals is not None else None
    diff = part.floats.get("difference")
    for m in metric_names:
        harm = METRICS[m].harm if m in METRICS else None
        if harm is None or not METRICS[m].is_rate:
            continue
        if intervals is not None and m in intervals.get("difference_lo", {}):
            bound = intervals["difference_lo"][m] if harm == "higher" else -intervals["difference_hi"][m]
        elif diff is not None and m in diff.columns:
            d = diff.get_column(m).cast(pl.Float64).to_numpy()
            bound = d if harm == "higher" else -d
        else:
            continue
        bound = np.asarray(bound, dtype=np.float64)
        best = np.where(np.isnan(bound) | (bound <= best), best, bound)
    return best


def worst_rows(
    part: Part,
    groups: pl.DataFrame,
    ref: pl.DataFrame,
    sk: list[str],
    metric_names: Sequence[str],
    limited_sets: Sequence[int],
    worst_k: int,
    priv: str,
) -> np.ndarray | None:
    """The group rows to show (sorted indices into ``groups``), or ``None`` to show every one.

    Parameters
    ----------
    part
        The group part of every group row (aligned with ``groups``).
    groups
        The group table (``sk`` keys, ``n``, the display label, the privileged flag ``priv``).
    ref
        The reference table (one row per (by value, attribute set): ``<m>__refname`` columns).
    sk
        The keys of one (by value, attribute set).
    metric_names
        The group metrics computed (their rates rank the groups).
    limited_sets
        The attribute-set indices (``SORT_A``) whose windows are limited.
    worst_k
        Groups shown per window of a limited set (besides its reference groups).
    priv
        The group table's privileged-flag column.
    """
    if not limited_sets or not groups.height:
        return None
    windows = attribute_rows(groups, sk)
    in_limited = np.isin(groups.get_column(SORT_A).to_numpy(), np.asarray(list(limited_sets)))
    if not in_limited.any():
        return None
    # the reference groups of each window: flagged privileged, or named by a reference column
    refnames = [c for c in ref.columns if c.endswith("__refname") and c[: -len("__refname")] in METRICS]
    is_ref = groups.get_column(priv).fill_null(False).to_numpy().astype(bool) if priv in groups.columns else (
        np.zeros(groups.height, dtype=bool))  # fmt: skip
    if refnames:
        names = groups.select(*sk, GROUP_COL).join(
            ref.select(*sk, *[pl.col(c).cast(pl.String) for c in refnames]), on=sk, how="left", nulls_equal=True,
            maintain_order="left",
        )  # fmt: skip
        hit = names.select(pl.any_horizontal([pl.col(GROUP_COL) == pl.col(c) for c in refnames]).fill_null(False))
        is_ref |= hit.to_series().to_numpy().astype(bool)
    score = harm_bounds(part, metric_names)
    n = groups.get_column("n").cast(pl.Float64).fill_null(0.0).to_numpy()
    rows = np.arange(groups.height)
    order = np.lexsort((rows, -n, -score, windows.codes))  # by window, worst first, larger first, report order
    codes = windows.codes[order]
    start = np.searchsorted(codes, codes, side="left")
    rank = np.empty(groups.height, dtype=np.int64)
    rank[order] = np.arange(groups.height) - start
    keep = ~in_limited | (rank < worst_k) | is_ref
    return np.flatnonzero(keep)
