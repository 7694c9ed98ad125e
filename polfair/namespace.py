"""The ``fair`` namespace on Polars frames: ``df.fair.report(...)``, ``lf.fair.counts(...)``.

Importing this module registers ``pl.DataFrame.fair`` and ``pl.LazyFrame.fair``. Every method is
the polfair function of the same name with the frame as ``data``: it takes that function's
keywords, all of them, and is built from the function itself (one definition of each request, in
:mod:`polfair.api` and the peer modules; no ``__getattr__`` magic: the methods are listed below).
Each method is built when first looked up (a descriptor naming the function's module), so
registering the namespace at ``import polfair`` loads nothing but Polars.

* ``report`` — :func:`polfair.fairness_report`; ``multiclass_report`` —
  :func:`polfair.compat.ignite.multiclass_report`;
* ``counts`` — :func:`polfair.confusion_counts`: collected on ``df.fair``, a ``LazyFrame`` on
  ``lf.fair``;
* fairlearn's six named disparities (``demographic_parity_difference``, ``..._ratio``,
  ``equalized_odds_*``, ``equal_opportunity_*``) evaluated on the frame: a ``float``, or ``None``
  where the value is undefined.

Examples
--------
>>> import polars as pl
>>> import polfair.namespace  # registers the namespace
>>> df = pl.DataFrame({"y": [1, 0, 1, 1], "p": [1, 1, 0, 1], "g": ["a", "a", "b", "b"]})
>>> df.fair.demographic_parity_difference("y", "p", sensitive_features="g")
0.5
>>> df.fair.report(y_true="y", y_pred="p", protected="g", ci=None).filter(
...     metric="demographic_parity_difference")["value"].item()
0.5
>>> df.lazy().fair.counts(y_true="y", y_pred="p", protected="g").collect()["tp"].to_list()
[1.0, 1.0]
>>> df.fair.counts(y_true="y", y_pred="p", protected="g")["fp"].to_list()
[1.0, 0.0]
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from typing import Any, Concatenate, ParamSpec, TypeVar

import polars as pl

__all__ = ["FairFrame", "FairLazyFrame"]

P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")


def _signature(fn: Callable[..., Any], *, drop_first: bool, returns: Any) -> inspect.Signature:
    sig = inspect.signature(fn)
    params = list(sig.parameters.values())[1 if drop_first else 0 :]
    me = inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)
    return sig.replace(parameters=[me, *params], return_annotation=returns)


def _named(method: Callable[..., Any], fn: Callable[..., Any], doc: str, sig: inspect.Signature) -> None:
    method.__name__ = method.__qualname__ = fn.__name__
    method.__doc__ = doc
    setattr(method, "__signature__", sig)  # what help(), inspect and IDEs show  # noqa: B010


def _on_frame(fn: Callable[Concatenate[Any, P], R], then: Callable[[R], T]) -> Callable[Concatenate[Any, P], T]:
    """The method ``self.fn(...) = then(fn(self._data, ...))``: ``fn``'s keywords, with the frame as ``data``."""

    def method(self: Any, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return then(fn(self._data, *args, **kwargs))

    doc = f":func:`polfair.{fn.__name__}` of this frame (see there for the parameters)."
    _named(method, fn, doc, _signature(fn, drop_first=True, returns=inspect.Signature.empty))
    return method


def _evaluated(fn: Callable[P, Any]) -> Callable[Concatenate[Any, P], float | None]:
    """The method ``self.fn(...)``: the aggregation expression ``fn(...)`` evaluated on the frame."""

    def method(self: Any, /, *args: P.args, **kwargs: P.kwargs) -> float | None:
        out = self._data.lazy().select(fn(*args, **kwargs)).collect().item()
        return None if out is None else float(out)

    doc = (
        f":func:`polfair.{fn.__name__}` with column names or expressions, evaluated on this frame: a "
        "float, or None where it is undefined (see that function for the parameters)."
    )
    _named(method, fn, doc, _signature(fn, drop_first=False, returns="float | None"))
    return method


def _same(x: R) -> R:
    return x


def _collect(lf: pl.LazyFrame) -> pl.DataFrame:
    return lf.collect()


class _Method:
    """A namespace method built on first lookup from ``module.name`` (then cached on the class).

    ``build`` turns the function into the method (:func:`_on_frame` or :func:`_evaluated`), so the
    function's module (the whole engine, scipy, the peer facades) loads only when the method is
    first used or inspected.
    """

    def __init__(self, module: str, name: str, build: Callable[[Callable[..., Any]], Callable[..., Any]]) -> None:
        self.module, self.name, self.build = module, name, build

    def __set_name__(self, owner: type, attr: str) -> None:
        self.attr = attr

    def __get__(self, obj: Any, owner: type) -> Any:
        method = self.build(getattr(importlib.import_module(self.module), self.name))
        for cls in owner.__mro__:  # cache where the descriptor is defined
            if cls.__dict__.get(self.attr) is self:
                setattr(cls, self.attr, method)
        return method if obj is None else method.__get__(obj, owner)


def _on_frame_then(then: Callable[[Any], Any]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    return lambda fn: _on_frame(fn, then)


class _Common:
    """The methods of both namespaces."""

    _data: pl.DataFrame | pl.LazyFrame

    report = _Method("polfair.api", "fairness_report", _on_frame_then(_same))
    multiclass_report = _Method("polfair.compat.ignite", "multiclass_report", _on_frame_then(_same))
    demographic_parity_difference = _Method("polfair.compat.fairlearn", "demographic_parity_difference", _evaluated)
    demographic_parity_ratio = _Method("polfair.compat.fairlearn", "demographic_parity_ratio", _evaluated)
    equalized_odds_difference = _Method("polfair.compat.fairlearn", "equalized_odds_difference", _evaluated)
    equalized_odds_ratio = _Method("polfair.compat.fairlearn", "equalized_odds_ratio", _evaluated)
    equal_opportunity_difference = _Method("polfair.compat.fairlearn", "equal_opportunity_difference", _evaluated)
    equal_opportunity_ratio = _Method("polfair.compat.fairlearn", "equal_opportunity_ratio", _evaluated)


@pl.api.register_dataframe_namespace("fair")
class FairFrame(_Common):
    """``df.fair``: polfair on an eager ``pl.DataFrame`` (``counts`` returns the collected cell table).

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

    counts = _Method("polfair.api", "confusion_counts", _on_frame_then(_collect))

    def __init__(self, df: pl.DataFrame) -> None:
        self._data = df


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

    counts = _Method("polfair.api", "confusion_counts", _on_frame_then(_same))

    def __init__(self, lf: pl.LazyFrame) -> None:
        self._data = lf
