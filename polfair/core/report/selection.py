"""Metric selection: the report's built-in metrics a reader names, and what they need.

A report restricted to some metrics (``fairness_report(..., metrics=["selection_rate",
"false_positive_rate"])``) has the rows of those metrics only, with the same values, intervals and
order as the full report's rows of them (a test holds the two equal), and computes only what they
need: the group metrics named, the rates of the named disparities (``disparate_impact`` reads the
selection rate), and, on attribute rows, the selection rate, TPR and FPR fairlearn's disparities read.

A name is any metric of the report: a group metric (:data:`polfair.core.metrics.METRICS`; its group
rows, its spread over each attribute set's groups on the attribute rows, its population rows), a
named disparity (:data:`polfair.core.metrics.DISPARITIES`), fairlearn's attribute-level disparities
and the entropy indices and EDF (:data:`polfair.core.report.rows.ATTR_METRICS`,
:data:`polfair.core.report.rows.POP_METRICS`), or ``n_missing``.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Sequence
from dataclasses import dataclass

import polars as pl

from polfair.core.metrics import DISPARITIES, METRICS, Disparity
from polfair.core.report.intervals import IntervalColumns
from polfair.core.report.rows import ATTR_METRICS, POP_METRICS, Part, disparity_list, metric_list, ordered
from polfair.exceptions import PolfairError

__all__ = ["SELECTABLE", "Selection", "restrict", "select_metrics"]

#: Every name a metric selection may hold, in report order.
SELECTABLE: tuple[str, ...] = tuple(ordered(["n_missing", *METRICS, *DISPARITIES, *POP_METRICS, *ATTR_METRICS]))
#: The rates fairlearn's attribute-level disparities (and their intervals) read.
_ATTRIBUTE_RATES = ("selection_rate", "true_positive_rate", "false_positive_rate")


@dataclass(frozen=True)
class Selection:
    """A checked metric selection.

    Attributes
    ----------
    shown
        The names whose rows the report holds.
    group_metrics
        The group metrics computed on group, population and reference rows (the named ones and the
        rates of the named disparities), in report order.
    attribute_metrics
        The group metrics whose spreads are computed on attribute rows (``group_metrics`` and, with
        predictions, the selection rate, TPR and FPR).
    disparities
        The named disparities computed, in report order.
    """

    shown: frozenset[str]
    group_metrics: list[str]
    attribute_metrics: list[str]
    disparities: list[Disparity]


def select_metrics(names: Sequence[str] | None, has_predictions: bool, *, option: str = "metrics") -> Selection | None:
    """Check a metric selection and resolve what it needs; ``None`` (every metric) stays ``None``.

    Parameters
    ----------
    names
        Metric names (see the module's docstring), or ``None`` for the full report.
    has_predictions
        ``False`` for a labels-only audit: a prediction metric is then an error.
    option
        The option's name in messages.

    Returns
    -------
    Selection or None

    Raises
    ------
    PolfairError
        An empty selection, a name that is not a metric (with the closest names), or a prediction
        metric in a labels-only audit.

    Examples
    --------
    >>> s = select_metrics(["disparate_impact", "false_positive_rate"], True)
    >>> s.group_metrics, [d.name for d in s.disparities]
    (['selection_rate', 'false_positive_rate'], ['disparate_impact'])
    >>> select_metrics(["selection_rte"], True)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    polfair.exceptions.PolfairError: metrics: 'selection_rte' is not a metric of the report (did you mean 'selection_rate'?); ...
    """
    if names is None:
        return None
    if isinstance(names, str):
        names = [names]
    names = list(names)
    if not names:
        msg = f"{option}: an empty list selects no metric; leave {option} out for every metric"
        raise PolfairError(msg)
    bad = [n for n in names if not isinstance(n, str) or n not in SELECTABLE]
    if bad:
        said = []
        for n in bad:
            close = difflib.get_close_matches(str(n), SELECTABLE, n=2) if isinstance(n, str) else []
            hint = f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""
            said.append(f"{n!r} is not a metric of the report{hint}")
        msg = f"{option}: {'; '.join(said)}; the names are polfair.core.report.selection.SELECTABLE"
        raise PolfairError(msg)
    available = set(_available(has_predictions))
    missing = [n for n in names if n not in available]
    if missing:
        msg = (f"{option}: {missing} need predictions (y_pred or y_score); a labels-only audit has "
               f"{sorted(available)}")  # fmt: skip
        raise PolfairError(msg)
    shown = frozenset(names)
    disparities = [d for d in disparity_list(has_predictions) if d.name in shown]
    needed = shown | {r for d in disparities for r in d.rates}
    group = [m for m in metric_list(has_predictions) if m in needed]
    extra = set(_ATTRIBUTE_RATES) if has_predictions else set()
    attribute = [m for m in metric_list(has_predictions) if m in needed or m in extra]
    return Selection(shown, group, attribute, disparities)


def _available(has_predictions: bool) -> list[str]:
    if has_predictions:
        return list(SELECTABLE)
    labels = {"n_missing", *metric_list(False), *(d.name for d in disparity_list(False)),
              "smoothed_empirical_differential_fairness"}  # fmt: skip
    return [n for n in SELECTABLE if n in labels]


def restrict(part: Part, keep: Collection[str]) -> Part:
    """The part with the metrics in ``keep`` only (same order; every family, frames and interval arrays)."""
    names = [m for m in part.metrics if m in keep]
    if len(names) == len(part.metrics):
        return part
    # the kept columns as they are (no plan per frame: a select costs more than a small report's data)
    floats = {f: pl.DataFrame([v.get_column(c) for c in v.columns if c in keep]) for f, v in part.floats.items()}
    cats = {f: pl.DataFrame([v.get_column(c) for c in v.columns if c in keep]) for f, v in part.cats.items()}
    intervals = None
    if part.intervals is not None:
        cols = {f: {m: a for m, a in d.items() if m in keep} for f, d in part.intervals.columns.items()}
        intervals = IntervalColumns(part.intervals.height, cols)
    return Part(part.entities, names, floats, cats, intervals)
