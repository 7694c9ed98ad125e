"""The ``fair`` namespace on Polars frames: ``df.fair.report(...)``, ``lf.fair.counts(...)``.

Importing this module registers ``pl.DataFrame.fair`` and ``pl.LazyFrame.fair``. Every method is an
explicit, typed forwarder to a function of polfair (no ``__getattr__`` magic), with the frame as
``data``; see that function for the parameters.

Examples
--------
>>> import polars as pl
>>> import polfair.namespace  # registers the namespace
>>> df = pl.DataFrame({"y": [1, 0, 1, 1], "p": [1, 1, 0, 1], "g": ["a", "a", "b", "b"]})
>>> df.fair.demographic_parity_difference("y", "p", sensitive_features="g")
0.5
>>> df.lazy().fair.counts(y_true="y", y_pred="p", protected="g").collect()["tp"].to_list()
[1.0, 1.0]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from polfair.api import confusion_counts, fairness_report
from polfair.compat import fairlearn as _expr
from polfair.compat.ignite import multiclass_report
from polfair.core.spec import IntoExpr

__all__ = ["FairFrame", "FairLazyFrame"]


class _Common:
    _data: pl.DataFrame | pl.LazyFrame

    def report(
        self,
        *,
        y_true: IntoExpr,
        y_pred: IntoExpr | None = None,
        y_score: IntoExpr | None = None,
        threshold: float = 0.5,
        protected: IntoExpr | Sequence[IntoExpr],
        favorable: Any = 1,
        unfavorable: Any = None,
        privileged: Mapping[str, Any] | None = None,
        reference: Any = None,
        weight: IntoExpr | None = None,
        by: IntoExpr | Sequence[IntoExpr] | None = None,
        intersections: int | Sequence[Sequence[str]] | None = None,
        alpha: float = 2.0,
        concentration: float = 1.0,
        on_missing: Any = "warn",
        engine: str = "streaming",
    ) -> pl.DataFrame:
        """:func:`polfair.fairness_report` of this frame (runs the query; returns the report).

        Returns
        -------
        pl.DataFrame
            The long report (schema in :mod:`polfair.core.report`).

        Examples
        --------
        >>> import polars as pl
        >>> import polfair.namespace
        >>> df = pl.DataFrame({"y": [1, 0, 1, 1], "p": [1, 1, 0, 1], "g": ["a", "a", "b", "b"]})
        >>> df.fair.report(y_true="y", y_pred="p", protected="g").filter(
        ...     metric="demographic_parity_difference")["value"].item()
        0.5
        """
        return fairness_report(
            self._data, y_true=y_true, y_pred=y_pred, y_score=y_score, threshold=threshold,
            protected=protected, favorable=favorable, unfavorable=unfavorable, privileged=privileged,
            reference=reference, weight=weight, by=by, intersections=intersections, alpha=alpha,
            concentration=concentration, on_missing=on_missing, engine=engine,
        )  # fmt: skip

    def multiclass_report(
        self,
        *,
        y_true: IntoExpr,
        y_pred: IntoExpr,
        protected: IntoExpr | Sequence[IntoExpr],
        multilabel: bool = False,
        by: IntoExpr | Sequence[IntoExpr] | None = None,
        weight: IntoExpr | None = None,
    ) -> pl.DataFrame:
        """:func:`polfair.compat.ignite.multiclass_report` of this frame.

        Returns
        -------
        pl.DataFrame
            The report schema with a ``class`` key.

        Examples
        --------
        >>> import polars as pl
        >>> import polfair.namespace
        >>> df = pl.DataFrame({"y": [0, 1, 2, 0], "p": [0, 1, 0, 2], "g": ["a", "a", "b", "b"]})
        >>> df.fair.multiclass_report(y_true="y", y_pred="p", protected="g").filter(
        ...     pl.col("class").is_null(), metric="subgroup_accuracy_difference")["value"].item()
        1.0
        """
        return multiclass_report(self._data, y_true=y_true, y_pred=y_pred, protected=protected,
                                 multilabel=multilabel, by=by, weight=weight)  # fmt: skip


def _scalar(data: pl.DataFrame | pl.LazyFrame, e: pl.Expr) -> float | None:
    out = data.lazy().select(e).collect().item()
    return None if out is None else float(out)


@pl.api.register_dataframe_namespace("fair")
class FairFrame(_Common):
    """``df.fair``: polfair on an eager ``pl.DataFrame``.

    Parameters
    ----------
    df
        The frame (Polars passes it when ``df.fair`` is accessed).

    Examples
    --------
    >>> import polars as pl
    >>> import polfair.namespace
    >>> pl.DataFrame({"y": [1, 0], "p": [1, 1], "g": ["a", "b"]}).fair.counts(
    ...     y_true="y", y_pred="p", protected="g")["fp"].to_list()
    [0.0, 1.0]
    """

    def __init__(self, df: pl.DataFrame) -> None:
        self._data = df

    def counts(
        self,
        *,
        y_true: IntoExpr,
        y_pred: IntoExpr | None = None,
        y_score: IntoExpr | None = None,
        threshold: float = 0.5,
        protected: IntoExpr | Sequence[IntoExpr],
        favorable: Any = 1,
        unfavorable: Any = None,
        weight: IntoExpr | None = None,
        by: IntoExpr | Sequence[IntoExpr] | None = None,
    ) -> pl.DataFrame:
        """:func:`polfair.confusion_counts` of this frame, collected.

        Returns
        -------
        pl.DataFrame
            The cell table (schema in :mod:`polfair.core.counts`).

        Examples
        --------
        See :class:`FairFrame`.
        """
        return confusion_counts(
            self._data, y_true=y_true, y_pred=y_pred, y_score=y_score, threshold=threshold,
            protected=protected, favorable=favorable, unfavorable=unfavorable, weight=weight, by=by,
        ).collect()  # fmt: skip

    def demographic_parity_difference(
        self,
        y_true: IntoExpr,
        y_pred: IntoExpr,
        *,
        sensitive_features: IntoExpr | Sequence[IntoExpr],
        method: _expr.Method = "between_groups",
        sample_weight: IntoExpr | None = None,
        pos_label: Any = 1,
    ) -> float | None:
        """:func:`polfair.compat.fairlearn.demographic_parity_difference` evaluated on this frame.

        Returns
        -------
        float or None
            None where undefined.

        Examples
        --------
        See :mod:`polfair.namespace`.
        """
        return _scalar(self._data, _expr.demographic_parity_difference(
            y_true, y_pred, sensitive_features=sensitive_features, method=method,
            sample_weight=sample_weight, pos_label=pos_label))  # fmt: skip

    def equalized_odds_difference(
        self,
        y_true: IntoExpr,
        y_pred: IntoExpr,
        *,
        sensitive_features: IntoExpr | Sequence[IntoExpr],
        method: _expr.Method = "between_groups",
        sample_weight: IntoExpr | None = None,
        agg: _expr.Agg = "worst_case",
        pos_label: Any = 1,
    ) -> float | None:
        """:func:`polfair.compat.fairlearn.equalized_odds_difference` evaluated on this frame.

        Returns
        -------
        float or None
            None where undefined (a group without positives or negatives).

        Examples
        --------
        >>> import polars as pl
        >>> import polfair.namespace
        >>> df = pl.DataFrame({"y": [1, 0, 1, 0], "p": [1, 0, 0, 0], "g": ["a", "a", "b", "b"]})
        >>> df.fair.equalized_odds_difference("y", "p", sensitive_features="g")
        1.0
        """
        return _scalar(self._data, _expr.equalized_odds_difference(
            y_true, y_pred, sensitive_features=sensitive_features, method=method,
            sample_weight=sample_weight, agg=agg, pos_label=pos_label))  # fmt: skip


@pl.api.register_lazyframe_namespace("fair")
class FairLazyFrame(_Common):
    """``lf.fair``: polfair on a ``pl.LazyFrame`` (``counts`` stays lazy; reports run the query).

    Parameters
    ----------
    lf
        The lazy frame (Polars passes it when ``lf.fair`` is accessed).

    Examples
    --------
    >>> import polars as pl
    >>> import polfair.namespace
    >>> lf = pl.LazyFrame({"y": [1, 0], "p": [1, 1], "g": ["a", "b"]})
    >>> type(lf.fair.counts(y_true="y", y_pred="p", protected="g")).__name__
    'LazyFrame'
    """

    def __init__(self, lf: pl.LazyFrame) -> None:
        self._data = lf

    def counts(
        self,
        *,
        y_true: IntoExpr,
        y_pred: IntoExpr | None = None,
        y_score: IntoExpr | None = None,
        threshold: float = 0.5,
        protected: IntoExpr | Sequence[IntoExpr],
        favorable: Any = 1,
        unfavorable: Any = None,
        weight: IntoExpr | None = None,
        by: IntoExpr | Sequence[IntoExpr] | None = None,
    ) -> pl.LazyFrame:
        """:func:`polfair.confusion_counts` of this lazy frame (not run).

        Returns
        -------
        pl.LazyFrame
            The cell table query; ``.collect(engine="streaming")`` runs it out of core.

        Examples
        --------
        See :class:`FairLazyFrame`.
        """
        return confusion_counts(
            self._data, y_true=y_true, y_pred=y_pred, y_score=y_score, threshold=threshold,
            protected=protected, favorable=favorable, unfavorable=unfavorable, weight=weight, by=by,
        )  # fmt: skip
