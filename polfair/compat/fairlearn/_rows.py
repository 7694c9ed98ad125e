"""Row indicators -> confusion counts for the expression metrics; shared argument checks.

An underscore module: internal to :mod:`polfair.compat.fairlearn` (its modules import it), not public
API. :class:`Rows` turns ``y_true``/``y_pred``/``pos_label``/``sample_weight`` into the four
confusion indicators and binds :class:`polfair.core.metrics.Counts` to their weighted sums;
:func:`metric_value` then evaluates a metric of :data:`polfair.core.metrics.METRICS` on them, so no
formula is re-typed here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import polars as pl

from polfair.core._args import as_expr
from polfair.core._typing import IntoExpr
from polfair.core.metrics import ALIASES, METRICS, Counts
from polfair.exceptions import PolfairError

__all__ = [
    "EXPR_METRICS",
    "Agg",
    "Method",
    "Rows",
    "SensitiveFeatures",
    "check_choice",
    "metric_value",
    "resolve_metric",
    "sensitive_exprs",
]

Method = Literal["between_groups", "to_overall"]
Agg = Literal["worst_case", "mean"]
SensitiveFeatures = IntoExpr | Sequence[IntoExpr]

#: Metrics of :data:`polfair.core.metrics.METRICS` available as expressions (the score-based
#: ``generalized_*`` ones need a score column and live in the report only).
EXPR_METRICS: tuple[str, ...] = tuple(n for n in METRICS if "generalized" not in n)

_CELLS = ("tp", "fp", "tn", "fn")


def sensitive_exprs(sensitive_features: SensitiveFeatures | None, role: str = "sensitive_features") -> list[pl.Expr]:
    if sensitive_features is None:
        msg = f"{role} is required: name the column(s) whose groups are compared, e.g. {role}=['sex']"
        raise PolfairError(msg)
    items = [sensitive_features] if isinstance(sensitive_features, (str, pl.Expr)) else list(sensitive_features)
    if not items:
        msg = f"{role} must name at least one column or expression, got an empty sequence"
        raise PolfairError(msg)
    return [as_expr(s, role) for s in items]


def check_choice(name: str, value: Any, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        msg = f"{name} must be one of {set(allowed)}, got {value!r}"
        raise PolfairError(msg)


def resolve_metric(name: str) -> str:
    canonical = ALIASES.get(name, name)
    if canonical not in EXPR_METRICS:
        msg = f"unknown metric {name!r}; use one of {list(EXPR_METRICS)} or an alias in {sorted(ALIASES)}"
        raise PolfairError(msg)
    return canonical


class Rows:
    """The confusion indicators of each row, and the :class:`Counts` that sum them.

    ``tp = Σ w·1[y = pos ∧ ŷ = pos]`` and so on. A row with a null label, prediction or weight is
    in none of the four cells (Kleene logic never yields ``True`` from a null, and a null weight
    makes the product null, which ``sum`` skips).
    """

    def __init__(self, y_true: IntoExpr, y_pred: IntoExpr, pos_label: Any, sample_weight: IntoExpr | None) -> None:
        if pos_label is None:
            msg = (
                "pos_label=None (every class compared) is supported by demographic_parity_difference "
                "only; give the positive class, e.g. pos_label=1"
            )
            raise PolfairError(msg)
        t = as_expr(y_true, "y_true") == pos_label
        p = as_expr(y_pred, "y_pred") == pos_label
        self.cells = {"tp": t & p, "fp": ~t & p, "tn": ~t & ~p, "fn": t & ~p}
        self.w = pl.lit(1.0) if sample_weight is None else as_expr(sample_weight, "sample_weight").cast(pl.Float64)

    def counts(self, window: list[pl.Expr] | None = None) -> Counts:
        def get(name: str) -> pl.Expr:
            if name not in self.cells:
                raise AttributeError(name)
            total = (self.cells[name].cast(pl.Float64) * self.w).sum()
            return total if window is None else total.over(window)

        return Counts(get)


def metric_value(name: str, rows: Rows, window: list[pl.Expr] | None = None) -> pl.Expr:
    """The metric, null where its denominator is 0; per row of its group when ``window`` is given."""
    return METRICS[name].expr(rows.counts(window))
