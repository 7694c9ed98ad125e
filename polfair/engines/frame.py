"""The one frame adapter: :func:`frame_of` turns a pass's input into a :class:`~polfair.core.contract.Frame`."""

from __future__ import annotations

from typing import Any

from polfair.core.contract import Frame, PolarsFrame
from polfair.core.contract.inputs import is_foreign

__all__ = ["frame_of"]


def frame_of(data: Any) -> Frame:
    """The input's :class:`~polfair.core.contract.Frame`: Polars, or a Spark/DuckDB/... frame through narwhals.

    Parameters
    ----------
    data
        A Polars ``DataFrame``/``LazyFrame``, a path or glob, a pandas/pyarrow table (anything
        :func:`~polfair.core.contract.inputs.to_lazyframe` reads), or a frame of another engine
        (:func:`~polfair.core.contract.inputs.is_foreign`: PySpark, DuckDB, ...).

    Returns
    -------
    Frame
        :class:`~polfair.core.contract.PolarsFrame`, or ``polfair.engines.narwhals.ForeignFrame``
        (narwhals is imported only then).

    Raises
    ------
    ImportError
        A foreign frame without narwhals installed (the message names the extra).

    Examples
    --------
    >>> import polars as pl
    >>> type(frame_of(pl.DataFrame({"y": [1]}))).__name__
    'PolarsFrame'
    """
    if is_foreign(data):
        from polfair.engines.narwhals import foreign_frame

        return foreign_frame(data)
    return PolarsFrame(data)
