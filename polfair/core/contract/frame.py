"""What a pass sees of its input: the :class:`Frame` protocol, one interface for every engine.

A pass (classification cells, regression sums, score histograms, slices, reweighing's fit) asks its
input for checked columns, runs ONE ``select -> group_by -> agg`` on it, and on the error path
fetches a few offending values. Two implementations satisfy it: :class:`~polfair.core.contract.PolarsFrame`
(Polars frames, lazy frames, files, anything :func:`~polfair.core.contract.inputs.to_lazyframe`
reads) and ``polfair.engines.narwhals.ForeignFrame`` (Spark, DuckDB and other narwhals backends).
``polfair.engines.frame.frame_of(data)`` picks one; it lives with the engines because the
core imports nothing of them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import polars as pl

from polfair.core.contract.compile import Column, Compiled, Engine

__all__ = ["Aggs", "Frame", "Stages"]

#: A pass's aggregations: the engine's expression namespace -> the ``agg`` expressions.
Aggs = Callable[[Any], list[Any]]
#: ``with_columns`` steps before the ``group_by``: (namespace, the group's names) -> name -> expression.
Stages = Callable[[Any, list[str]], list[Mapping[str, Any]]]


@runtime_checkable
class Frame(Protocol):
    """An input as a pass sees it (structural: any class with these members is one).

    Attributes
    ----------
    names
        The input's column names, in order (the names a role may take, and close-name hints).
    eng
        The contract's :class:`~polfair.core.contract.Engine` the compiled expressions are written in.

    Examples
    --------
    >>> import polars as pl
    >>> from polfair.core.contract import PolarsFrame
    >>> isinstance(PolarsFrame(pl.DataFrame({"y": [1]})), Frame)
    True
    """

    names: list[str]
    eng: Engine

    def column(self, x: Any, role: str) -> Column:
        """The checked :class:`~polfair.core.contract.Column` of a role's argument (a name, or on Polars an expression)."""
        ...

    def examples(self, c: Compiled) -> list[Any]:
        """A few offending values of a compiled role (a second query, on the error path only)."""
        ...

    def aggregate(self, columns: Mapping[str, Any], group: Sequence[str], aggs: Aggs, engine: str = "auto",
                  stages: Stages | None = None) -> pl.DataFrame:  # fmt: skip
        """``select(columns)``, the ``stages``, ``group_by(group).agg(aggs(ns))`` in the input's engine, collected to Polars."""
        ...
