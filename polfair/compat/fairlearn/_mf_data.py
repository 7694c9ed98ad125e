"""What :class:`~polfair.compat.fairlearn.MetricFrame` accepts: fairlearn 0.15's inputs, read once.

An underscore module: internal to :mod:`polfair.compat.fairlearn`. It reads ``y_true`` / ``y_pred``
(:class:`Target`), the sensitive and control features (:func:`process_features`, fairlearn's
``MetricFrame._process_features`` rules and messages) and the metric functions with their
``sample_params`` (:func:`metric_functions`). Containers: lists, tuples, NumPy arrays, pandas
Series/DataFrames (nullable and pyarrow-backed dtypes included), Polars Series/DataFrames, pyarrow
arrays, chunked arrays and tables, dicts of columns. pandas is never imported here: a pandas
object is recognised by its type's module, and converted by Polars (``pl.from_pandas``).

Every value keeps two forms: a Polars Series (what the one pass reads, nulls kept as nulls) and,
only when a metric is called per group, the NumPy array fairlearn would pass to the metric
function (``numpy.asarray`` of the input, squeezed as fairlearn's
``_convert_to_ndarray_and_squeeze`` does).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import polars as pl

from polfair.exceptions import PolfairError, user_stacklevel

__all__ = [
    "as_series",
    "check_consistent_length",
    "Feature",
    "metric_functions",
    "MetricFunction",
    "num_samples",
    "process_features",
    "squeeze",
    "Target",
    "to_numpy",
]

# fairlearn 0.15's messages (fairlearn/metrics/_metric_frame.py, _group_feature.py,
# _annotated_metric_function.py): code written against fairlearn's MetricFrame matches on them.
SF_DICT_CONVERSION_FAILURE = (
    "DataFrame.from_dict() failed on sensitive features. "
    "Please ensure each array is strictly 1-D. "
    "The __cause__ field of this exception may contain further information."
)
FEATURE_LIST_NONSCALAR = "Feature lists must be of scalar types"
FEATURE_DF_COLUMN_BAD_NAME = "DataFrame column names must be strings. Name '{0}' is of type {1}"
SERIES_NAME_NOT_STRING = "Series name must be a string. Value '{0}' was of type {1}"
DUPLICATE_FEATURE_NAME = "Detected duplicate feature name: '{0}'"
TOO_MANY_FEATURE_DIMS = "Feature array has too many dimensions"
SAMPLE_PARAMS_NOT_DICT = "Sample parameters must be a dictionary"
SAMPLE_PARAM_KEYS_NOT_IN_FUNC_DICT = "Keys in 'sample_params' do not match those in 'metric'"
METRIC_FUNCTION_NONE = "Found 'None' instead of metric function"
METRIC_FUNCTION_NOT_CALLABLE = "Object passed as metric function not callable"
DEFAULT_METRIC_NAME = "metric"


def _module(x: Any) -> str:
    return type(x).__module__.split(".")[0]


def _is(x: Any, lib: str, *names: str) -> bool:
    return _module(x) == lib and type(x).__name__ in names


def num_samples(x: Any) -> int:
    """The number of rows of an array-like (scikit-learn's ``_num_samples``): its first dimension."""
    shape = getattr(x, "shape", None)
    if isinstance(shape, tuple) and shape:
        return int(shape[0])
    if hasattr(x, "__len__") and not isinstance(x, (str, bytes)):
        return len(x)
    msg = f"Singleton array {x!r} cannot be considered a valid collection."
    raise TypeError(msg)


def check_consistent_length(*arrays: Any) -> None:
    """scikit-learn's ``check_consistent_length`` (same message): every argument has as many rows."""
    lengths = [num_samples(x) for x in arrays if x is not None]
    if len(set(lengths)) > 1:
        msg = f"Found input variables with inconsistent numbers of samples: {lengths!r}"
        raise PolfairError(msg)


def to_numpy(x: Any) -> np.ndarray:
    """``numpy.asarray`` of any container (pyarrow chunked arrays and Polars frames included)."""
    if isinstance(x, (pl.Series, pl.DataFrame)):
        return x.to_numpy()
    if _is(x, "pyarrow", "ChunkedArray", "Array") or (_module(x) == "pyarrow" and hasattr(x, "to_numpy")):
        try:
            return np.asarray(x.to_numpy(zero_copy_only=False))
        except TypeError:
            return np.asarray(x.to_numpy())
    return np.asarray(x)


def squeeze(arr: np.ndarray) -> np.ndarray:
    """Fairlearn's ``_convert_to_ndarray_and_squeeze``: unit dimensions dropped, one element kept 1-D."""
    if arr.size == 0:
        return arr
    return np.squeeze(arr) if arr.size > 1 else arr.reshape(1)


def _series_from_numpy(arr: np.ndarray) -> pl.Series | None:
    """A 1-D array as a Polars Series (object arrays element-wise); ``None`` if Polars cannot hold it."""
    if arr.ndim != 1:
        return None
    try:
        if arr.dtype == object or arr.dtype.kind in "US":  # via a list: Polars reads NumPy's fixed-width text slowly
            s = pl.Series(arr.tolist(), strict=False) if arr.dtype == object else pl.Series(arr.astype(str).tolist())
        else:
            s = pl.Series(arr)
    except (pl.exceptions.PolarsError, TypeError, ValueError, OverflowError):
        return None
    return s


def as_series(x: Any) -> pl.Series | None:
    """One column of values as a Polars Series, NaN read as null; ``None`` when ``x`` is not one
    column of scalars (a 2-D array of several columns, a list of arrays, ...).
    """
    s: pl.Series | None
    try:
        if isinstance(x, pl.Series):
            s = x
        elif isinstance(x, pl.DataFrame):
            s = x.to_series() if x.width == 1 else None
        elif _is(x, "pandas", "Series"):
            s = pl.Series(pl.from_pandas(x))
        elif _is(x, "pandas", "DataFrame"):
            s = pl.Series(pl.from_pandas(x.iloc[:, 0])) if x.shape[1] == 1 else None
        elif _module(x) == "pyarrow" and type(x).__name__ in ("Table", "RecordBatch"):
            s = pl.Series(pl.from_arrow(x.column(0))) if x.num_columns == 1 else None
        elif _module(x) == "pyarrow":
            s = pl.Series(pl.from_arrow(x))
        else:
            s = _series_from_numpy(squeeze(np.asarray(x)))
    except (pl.exceptions.PolarsError, TypeError, ValueError, OverflowError, ImportError):
        return None
    if s is None or isinstance(s.dtype, (pl.List, pl.Array, pl.Struct, pl.Object)):
        return None
    if s.dtype.is_float():
        s = s.fill_nan(None)
    return s


class Target:
    """``y_true`` or ``y_pred`` (or a sample parameter): the input, its Series and its NumPy form."""

    def __init__(self, raw: Any) -> None:
        self.raw = raw

    @cached_property
    def series(self) -> pl.Series | None:
        """One scalar per row as a Polars Series (what the pass reads), or ``None`` (2-D, nested)."""
        return as_series(self.raw)

    @cached_property
    def array(self) -> np.ndarray:
        """What fairlearn hands a metric function: the input as a squeezed NumPy array."""
        arr = squeeze(to_numpy(self.raw))
        if arr.dtype == object and arr.ndim == 1 and arr.size and all(isinstance(v, str) for v in arr):
            arr = arr.astype(str)  # fairlearn's np.stack of a column of strings
        return arr


@dataclass
class Feature:
    """One sensitive or control feature: its name (fairlearn's ``name_``) and its values."""

    name_: str
    values: pl.Series
    #: label -> the pandas value it stands for (interval bands of ``pd.cut``: fairlearn's
    #: ``IntervalIndex`` is rebuilt from them), or ``None``.
    shown: dict[str, Any] | None = None

    @property
    def raw_feature_(self) -> list[Any]:
        """The values as a list (fairlearn's ``GroupFeature.raw_feature_``)."""
        return self.values.to_list()


def _intervals(values: Any) -> tuple[pl.Series, dict[str, Any]] | None:
    """A pandas Series of intervals (``pd.cut``/``pd.qcut``, categorical or not) as an Enum of readable
    labels in the intervals' order (``[18, 30)``) and the label -> ``pd.Interval`` map; else ``None``.
    """
    if not _is(values, "pandas", "Series"):
        return None
    dt = values.dtype
    cats = dt.categories if str(dt) == "category" else None
    if cats is None and not str(dt).startswith("interval"):
        return None
    if cats is not None and not str(cats.dtype).startswith("interval"):
        return None
    from polfair.core.contract.inputs import interval_label

    order = list(cats) if cats is not None else sorted(set(values.dropna()))
    shown = {interval_label(iv): iv for iv in order}
    labels = [None if not hasattr(v, "closed") else interval_label(v) for v in values.tolist()]
    return pl.Series(labels, dtype=pl.Enum(list(shown))), shown


def _feature_series(values: Any) -> pl.Series:
    s = as_series(values)
    if s is None:
        arr = np.asarray(values, dtype=object)
        s = _series_from_numpy(arr.reshape(-1) if arr.ndim == 0 else arr)
    if s is None:
        msg = f"a feature must hold one scalar value per row; got a {type(values).__name__}"
        raise PolfairError(msg)
    if isinstance(s.dtype, (pl.Categorical, pl.Enum)):
        s = s.cast(pl.String)  # grouped and sorted by value, as fairlearn groups the values
    return s


def _feature(base_name: str, values: Any, index: int, name: Any = None) -> Feature:
    if name is not None and not isinstance(name, str):
        raise PolfairError(SERIES_NAME_NOT_STRING.format(name, type(name)))
    bands = _intervals(values)  # fairlearn groups interval bands in their order and indexes them by interval
    if bands is not None:
        return Feature(name if name else f"{base_name}{index}", *bands)
    return Feature(name if name else f"{base_name}{index}", _feature_series(values))


def _column_name(name: Any) -> str:
    if not isinstance(name, str):
        raise PolfairError(FEATURE_DF_COLUMN_BAD_NAME.format(name, type(name)))
    return name


def _is_scalar(v: Any) -> bool:
    return np.ndim(v) == 0 and not isinstance(v, (dict, set))


def process_features(base_name: str, features: Any, sample_array: Any) -> list[Feature]:
    """Sensitive or control features as a list of :class:`Feature`, fairlearn's rules and messages.

    A Series is one feature (named by its name, else ``base_name + "0"``); a DataFrame, a dict
    or a 2-D array one feature per column (names must be strings; unnamed array columns get
    ``base_name + index``); a list holds one scalar per row. Every feature has as many rows as
    ``sample_array``.
    """
    out: list[Feature] = []
    if _is(features, "pandas", "Series"):
        check_consistent_length(features, sample_array)
        out.append(_feature(base_name, features, 0, features.name))
    elif isinstance(features, pl.Series):
        check_consistent_length(features, sample_array)
        out.append(_feature(base_name, features, 0, features.name or None))
    elif _is(features, "pandas", "DataFrame"):
        for i in range(len(features.columns)):
            name = _column_name(features.columns[i])
            column = features.iloc[:, i]
            check_consistent_length(column, sample_array)
            out.append(_feature(base_name, column, i, name))
    elif isinstance(features, pl.DataFrame) or (_module(features) == "pyarrow" and hasattr(features, "column_names")):
        frame = features if isinstance(features, pl.DataFrame) else pl.DataFrame(pl.from_arrow(features))
        for i, column in enumerate(frame.get_columns()):
            check_consistent_length(column, sample_array)
            out.append(_feature(base_name, column, i, column.name))
    elif isinstance(features, list):
        if not all(_is_scalar(v) for v in features):
            raise PolfairError(FEATURE_LIST_NONSCALAR)
        arr = np.atleast_1d(np.squeeze(np.asarray(features, dtype=object)))
        check_consistent_length(arr, sample_array)
        out.append(_feature(base_name, arr, 0))
    elif isinstance(features, dict):
        lengths: set[int] = set()
        for k, v in features.items():
            try:
                shape = np.shape(v) if not isinstance(v, (pl.Series, list, tuple)) else (len(v),)
                if len(shape) != 1:
                    raise ValueError(f"the value of {k!r} has shape {shape}: a column must be 1-D")
            except ValueError as exc:
                raise PolfairError(SF_DICT_CONVERSION_FAILURE) from exc
            lengths.add(shape[0])
        if len(lengths) > 1:
            raise PolfairError(SF_DICT_CONVERSION_FAILURE) from ValueError("All arrays must be of the same length")
        for i, (k, v) in enumerate(features.items()):
            name = _column_name(k)
            check_consistent_length(v, sample_array)
            out.append(_feature(base_name, v, i, name))
    elif _module(features) == "pyarrow":
        check_consistent_length(features, sample_array)
        out.append(_feature(base_name, features, 0))
    else:
        arr = np.atleast_1d(np.squeeze(np.asarray(features, dtype=object)))  # one row: one value (fairlearn raises)
        if arr.ndim == 1:
            check_consistent_length(arr, sample_array)
            out.append(_feature(base_name, arr, 0))
        elif arr.ndim == 2:
            for i in range(arr.shape[1]):
                check_consistent_length(arr[:, i], sample_array)
                out.append(_feature(base_name, arr[:, i], i))
        else:
            raise PolfairError(TOO_MANY_FEATURE_DIMS)
    return out


@dataclass
class MetricFunction:
    """One metric: its name, the callable, and its sample parameters (argument name -> :class:`Target`)."""

    name: str
    func: Callable[..., Any]
    params: dict[str, Target]


def _function_name(func: Any) -> str:
    name = getattr(func, "__name__", None)
    if name is None:
        warnings.warn("Supplied 'func' had no __name__ attribute", stacklevel=user_stacklevel())
        return DEFAULT_METRIC_NAME
    return str(name)


def _one(func: Any, name: str | None, params: Any, n: int) -> MetricFunction:
    if not isinstance(params, dict):
        raise PolfairError(SAMPLE_PARAMS_NOT_DICT)
    if func is None:
        raise PolfairError(METRIC_FUNCTION_NONE)
    if not callable(func):
        raise PolfairError(METRIC_FUNCTION_NOT_CALLABLE)
    targets = {}
    for arg, value in params.items():
        if value is None:
            continue
        t = Target(value)
        if num_samples(value) != n:
            msg = f"sample parameter {arg!r} has {num_samples(value):,} values and y_true {n:,}: give one per row"
            raise PolfairError(msg)
        targets[arg] = t
    return MetricFunction(_function_name(func) if name is None else name, func, targets)


def metric_functions(metrics: Any, sample_params: Any, n: int) -> tuple[list[MetricFunction], bool]:
    """The metric functions with their sample parameters, and whether one callable was given.

    fairlearn's rules: ``metrics`` is a callable (named by its ``__name__``) or a dict name ->
    callable; ``sample_params`` is then a dict argument -> array, or a dict name -> such a dict
    whose names are among the metrics'.
    """
    if sample_params is not None and not isinstance(sample_params, dict):
        raise PolfairError(SAMPLE_PARAMS_NOT_DICT)
    sample_params = sample_params or {}
    if not isinstance(metrics, dict):
        return [_one(metrics, None, sample_params, n)], True
    if not set(sample_params).issubset(metrics):
        raise PolfairError(SAMPLE_PARAM_KEYS_NOT_IN_FUNC_DICT)
    return [_one(f, name, sample_params.get(name, {}), n) for name, f in metrics.items()], False
