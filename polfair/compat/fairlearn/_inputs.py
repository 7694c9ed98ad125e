"""What the fairlearn-named functions accept: column names and expressions, or data as fairlearn takes it.

An underscore module: internal to :mod:`polfair.compat.fairlearn`. :func:`accepts_data` wraps an
expression builder so that it also takes what fairlearn's functions take for ``y_true``,
``y_pred``, ``sample_weight`` (lists, tuples, NumPy arrays, pandas and Polars Series, pyarrow
arrays and chunked arrays, one-column frames, ``(n, 1)`` arrays, and a scalar as one row, as
fairlearn squeezes its inputs) and ``sensitive_features`` (those, or a 2-D array, a
pandas/Polars DataFrame, a pyarrow table, a dict of columns: one sensitive feature per column, as
fairlearn's ``MetricFrame`` reads them). Given data, the wrapped
function puts it in a small frame, evaluates its own expression there and returns a number (a
``numpy.float64``, fairlearn's type; NaN where polfair's value is null). Given column names or
expressions, it returns the expression, as before. The two kinds are not mixed in one call.

Error messages describe a value by its type and length (``a pandas Series of 6,172 values``),
never by its repr: a Series in a message would print the Series.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, Protocol, cast, overload

import numpy as np
import polars as pl

from polfair.core._typing import IntoExpr
from polfair.exceptions import PolfairError

__all__ = ["Dual", "accepts_data", "describe"]

#: The arguments that hold one value per row (``sensitive_features`` may hold several columns).
ROW_ROLES = ("y_true", "y_pred", "sample_weight")


class Dual(Protocol):
    """A function of :mod:`polfair.compat.fairlearn`: an expression from names, a number from data."""

    @overload
    def __call__(self, *args: IntoExpr, **kwargs: Any) -> pl.Expr: ...
    @overload
    def __call__(self, *args: Any, **kwargs: Any) -> float: ...


def describe(x: Any) -> str:
    """A short description of an argument for an error message: its type and size, never its values."""
    kind = type(x)
    lib = kind.__module__.split(".")[0]
    prefix = f"{lib} " if lib in ("pandas", "polars", "numpy") else ""
    shape = getattr(x, "shape", None)
    if isinstance(shape, tuple) and len(shape) > 1:
        size = " of shape " + "×".join(f"{n:,}" for n in shape)
    else:
        try:
            size = f" of {len(x):,} values"
        except TypeError:
            text = repr(x)
            return f"{kind.__name__} {text}" if len(text) <= 40 else f"a {kind.__name__}"
    dtype = getattr(x, "dtype", None)
    return f"a {prefix}{kind.__name__}{size}" + (f" (dtype {dtype})" if dtype is not None else "")


def _is_ref(x: Any) -> bool:
    return isinstance(x, (str, pl.Expr))


def _refs(x: Any) -> bool:
    """A column name or expression, or a list/tuple of them (how ``sensitive_features`` names columns)."""
    return _is_ref(x) or (isinstance(x, (list, tuple)) and all(_is_ref(i) for i in x))


def _is_pandas(x: Any, name: str) -> bool:
    return type(x).__module__.split(".")[0] == "pandas" and type(x).__name__ == name


def _is_pyarrow(x: Any) -> bool:
    return type(x).__module__.split(".")[0] == "pyarrow"


def _column(x: Any, role: str) -> pl.Series:
    """One argument's values as a Series (NaN read as missing, like null).

    As fairlearn reads it (``_convert_to_ndarray_and_squeeze``): a scalar is one row, unit
    dimensions are dropped (an ``(n, 1)`` array or a one-column frame is one column), pyarrow
    arrays and chunked arrays are columns.
    """
    if isinstance(x, np.ndarray) and x.ndim != 1:
        x = x.reshape(1) if x.size == 1 else np.squeeze(x)
        if x.ndim != 1:
            msg = f"{role} must hold one value per row (1-D); got {describe(x)}"
            raise PolfairError(msg)
    try:
        if isinstance(x, pl.Series):
            s = x
        elif isinstance(x, pl.DataFrame) and x.width == 1:
            s = x.to_series()
        elif _is_pandas(x, "Series"):
            s = cast(pl.Series, pl.from_pandas(x))
        elif _is_pandas(x, "DataFrame") and x.shape[1] == 1:
            s = cast(pl.Series, pl.from_pandas(x.iloc[:, 0]))
        elif _is_pyarrow(x) and type(x).__name__ in ("Table", "RecordBatch") and x.num_columns == 1:
            s = pl.Series(pl.from_arrow(x.column(0)))
        elif _is_pyarrow(x) and hasattr(x, "type"):  # pyarrow Array or ChunkedArray
            s = pl.Series(pl.from_arrow(x))
        elif isinstance(x, np.ndarray):
            s = pl.Series(x.tolist(), strict=False) if x.dtype == object else pl.Series(x)
        elif isinstance(x, (list, tuple)):
            s = pl.Series(list(x), strict=False)
        elif np.ndim(x) == 0 and not isinstance(x, (dict, set)):  # a scalar: one row, as fairlearn reads it
            s = pl.Series([x.item() if isinstance(x, np.generic) else x], strict=False)
        else:
            msg = f"{role} must be data (a list, array or Series) or a column name; got {describe(x)}"
            raise PolfairError(msg)
    except (pl.exceptions.PolarsError, TypeError, ValueError) as exc:
        if isinstance(exc, PolfairError):
            raise
        msg = f"{role}: cannot read {describe(x)} as one column ({type(exc).__name__}); give one scalar per row"
        raise PolfairError(msg) from exc
    if isinstance(s.dtype, (pl.List, pl.Array, pl.Struct, pl.Object)):
        msg = f"{role} must hold one scalar per row; {describe(x)} holds {s.dtype} values"
        raise PolfairError(msg)
    return s.fill_nan(None) if s.dtype.is_float() else s


def _features(x: Any) -> list[pl.Series]:
    """``sensitive_features`` as fairlearn's ``MetricFrame`` reads it: one Series per sensitive feature."""
    role = "sensitive_features"
    if isinstance(x, pl.Series) or _is_pandas(x, "Series") or (_is_pyarrow(x) and hasattr(x, "type")):
        return [_column(x, role)]
    if _is_pyarrow(x) and hasattr(x, "column_names"):  # a pyarrow Table or RecordBatch
        return pl.DataFrame(pl.from_arrow(x)).get_columns()
    if isinstance(x, pl.DataFrame):
        return x.get_columns()
    if _is_pandas(x, "DataFrame"):
        return pl.from_pandas(x).get_columns()
    if isinstance(x, dict):
        return [_column(v, f"{role}[{k!r}]") for k, v in x.items()]
    if isinstance(x, (list, tuple)):
        if all(np.ndim(v) == 0 for v in x):
            return [_column(x, role)]
        msg = (
            f"{role}: a list holds one group label per row; for several features pass a 2-D array, a "
            "DataFrame or a dict of columns (or, inside a query, a list of column names)"
        )
        raise PolfairError(msg)
    arr = np.squeeze(np.asarray(x, dtype=object))
    if arr.ndim == 1:
        return [_column(arr, role)]
    if arr.ndim == 2:
        return [_column(arr[:, i], f"{role}[:, {i}]") for i in range(arr.shape[1])]
    msg = f"{role} must be 1-D (one feature) or 2-D (one column per feature); got {describe(x)}"
    raise PolfairError(msg)


def _mixed(role: str, value: Any, names: bool, others: str) -> TypeError:
    if names:
        msg = (
            f"{role} must be a column name (str) or a polars expression, as {others}; got {describe(value)}. "
            "To compute on data, pass data (lists, arrays, Series) for every argument"
        )
    else:
        msg = (
            f"{role} is a column name or expression, but {others} data; pass data for every argument, or "
            f"column names for every argument inside a query (df.select(...)); got {value!r}"
        )
    return TypeError(msg)


def _data_frame(args: dict[str, Any]) -> tuple[pl.DataFrame, dict[str, Any]] | None:
    """``None`` when the call names columns; else the frame of the data and the names to use in its place."""
    y_true, y_pred = args["y_true"], args["y_pred"]
    extra = [r for r in ("sample_weight", "sensitive_features") if args.get(r) is not None]
    if _is_ref(y_true) and _is_ref(y_pred):
        for role in extra:
            if not _refs(args[role]):
                raise _mixed(role, args[role], True, "y_true and y_pred are")
        return None
    if _is_ref(y_true) or _is_ref(y_pred):
        raise _mixed("y_pred", y_pred, True, "y_true is") if _is_ref(y_true) else _mixed("y_pred", y_pred, False, "y_true is")
    for role in extra:
        if _is_ref(args[role]):
            raise _mixed(role, args[role], False, "y_true and y_pred are")
    columns = {role: _column(args[role], role) for role in ROW_ROLES if args.get(role) is not None}
    names: dict[str, Any] = {role: role for role in columns}
    if "sensitive_features" in extra:
        features = {f"sensitive_feature_{i}": s for i, s in enumerate(_features(args["sensitive_features"]))}
        columns |= features
        names["sensitive_features"] = list(features)
    n = len(columns["y_true"])
    for role, s in columns.items():
        if len(s) != n:
            msg = f"{role} has {len(s):,} values and y_true {n:,}: give one value per row"
            raise PolfairError(msg)
    return pl.DataFrame([s.alias(name) for name, s in columns.items()]), names


def accepts_data(build: Callable[..., pl.Expr]) -> Dual:
    """``build`` (names/expressions -> an aggregation expression) made to accept data as well.

    With data for ``y_true``/``y_pred`` (and ``sensitive_features``, ``sample_weight``), the call
    evaluates ``build``'s expression on a frame of that data and returns a ``numpy.float64`` (NaN
    where the expression is null); with names or expressions it returns the expression.
    """
    sig = inspect.signature(build)

    @functools.wraps(build)
    def call(*args: Any, **kwargs: Any) -> Any:
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        data = _data_frame(bound.arguments)
        if data is None:
            return build(*args, **kwargs)
        frame, names = data
        bound.arguments.update(names)
        value = frame.select(build(*bound.args, **bound.kwargs)).item()
        return np.float64(np.nan if value is None else value)

    return cast(Dual, call)
