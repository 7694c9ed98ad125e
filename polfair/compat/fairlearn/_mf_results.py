"""Aggregates, quantiles and output shapes of :class:`~polfair.compat.fairlearn.MetricFrame`.

An underscore module: internal to :mod:`polfair.compat.fairlearn`. Everything here is arithmetic
on the small dense arrays of :class:`~polfair.compat.fairlearn._mf_compute.Results` (one value
per group and metric, a leading axis of replicates), with fairlearn 0.15's semantics:

* ``group_min`` / ``group_max``: the smallest / largest group value, missing groups (NaN) skipped
  (pandas' ``skipna``); NaN when every group is missing.
* ``difference``: ``between_groups`` ``max − min``; ``to_overall`` ``max_g |m_g − m_overall|``.
* ``ratio``: ``between_groups`` ``min / max``; ``to_overall`` ``min_g r_g`` with
  ``r_g = m_g / m_overall``, replaced by ``1 / r_g`` above 1. A zero divisor gives ``inf`` or NaN,
  as pandas' division does.
* ``errors="raise"`` refuses a metric with a non-scalar group value (a confusion matrix);
  ``"coerce"`` makes such values NaN.
* Quantiles of replicates (``*_ci``): ``numpy.quantile`` where fairlearn's result is a Series
  (no control features), ``numpy.nanquantile`` where it is a DataFrame (``by_group``, and
  everything with control features), so a replicate without rows of a group is skipped there.

Outputs: pandas objects shaped as fairlearn's (:func:`to_pandas`, pandas imported here, inside the
function) or a Polars DataFrame (:func:`to_polars`).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from polfair.compat.fairlearn._mf_compute import Layout
from polfair.exceptions import PolfairError

__all__ = [
    "aggregate",
    "as_float",
    "check_errors",
    "check_method",
    "check_replicates",
    "COMPARE_METHODS",
    "ERRORS",
    "is_integer",
    "ordered_scalars",
    "pandas",
    "quantiles",
    "scalar_extreme",
    "to_pandas",
    "to_polars",
]

COMPARE_METHODS = ("between_groups", "to_overall")
ERRORS = ("raise", "coerce")
# fairlearn 0.15's messages (fairlearn/metrics/_disaggregated_result.py, _metric_frame.py, _bootstrap.py)
INVALID_ERRORS = f"Invalid error value specified. Valid values are {list(ERRORS)}"
NON_SCALAR = (
    "Metric frame contains non-scalar cells. Please remove non-scalar columns from your"
    " metric frame or use parameter errors='coerce'."
)
INVALID_METHOD = "Unrecognised comparison method: {0}"
QUANTILE_ERROR = "Error calling numpy.quantiles. Most likely due to a metric returning a non-scalar result"
PANDAS_MISSING = (
    "MetricFrame.{0} returns pandas objects, as fairlearn's does, and pandas is not installed: "
    "install the extra (pip install 'polfair[pandas]'), or read the result as a Polars frame with "
    "MetricFrame.to_polars({1!r})"
)


def check_errors(errors: Any) -> None:
    if errors not in ERRORS:
        raise PolfairError(INVALID_ERRORS)


def check_method(method: Any) -> None:
    if method not in COMPARE_METHODS:
        raise PolfairError(INVALID_METHOD.format(method))


def _scalar(v: Any) -> bool:
    return v is None or np.isscalar(v)


def as_float(values: np.ndarray, errors: str) -> np.ndarray:
    """A metric's values as floats: non-scalars raise (``errors="raise"``) or become NaN (``"coerce"``)."""
    if values.dtype != object:
        return values.astype(np.float64, copy=False)
    out = np.full(values.shape, np.nan)
    flat = values.reshape(-1)
    for i, v in enumerate(flat):
        if _scalar(v):
            try:
                out.reshape(-1)[i] = np.nan if v is None else float(v)
                continue
            except (TypeError, ValueError):
                pass
        if errors == "raise":
            raise PolfairError(NON_SCALAR)
    return out


def _absent(v: Any) -> bool:
    return v is None or (isinstance(v, (float, np.floating)) and np.isnan(v))


def ordered_scalars(values: np.ndarray) -> bool:
    """Whether a metric's values are scalars that are not numbers (a metric returning strings):
    fairlearn's ``group_min``/``group_max`` then return pandas' extreme of them, not an error.
    """
    if values.dtype != object:
        return values.dtype.kind in "USM"
    flat = [v for v in values.reshape(-1) if not _absent(v)]
    return bool(flat) and all(np.isscalar(v) and not isinstance(v, (int, float, complex, np.number, bool, np.bool_))
                              for v in flat)  # fmt: skip


def scalar_extreme(kind: str, values: np.ndarray) -> np.ndarray:
    """``min``/``max`` over the groups (last axis) of non-numeric scalars, missing values skipped (pandas'
    ``agg("min")``); ``NaN`` where a control group has none.
    """
    flat = values.reshape(-1, values.shape[-1]) if values.ndim else values.reshape(1, 1)
    pick = min if kind == "min" else max
    out = np.empty(flat.shape[0], dtype=object)
    for i, row in enumerate(flat):
        present = [v for v in row if not _absent(v)]
        out[i] = pick(present) if present else np.nan
    return out.reshape(values.shape[:-1])


def is_integer(values: np.ndarray) -> bool:
    """Whether every value is an integer (not a bool): fairlearn then keeps integer results integer."""
    if values.dtype != object:
        return values.dtype.kind in "iu"
    return values.size > 0 and all(isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))
                                   for v in values.reshape(-1))  # fmt: skip


def _quiet(fn: Any, *args: Any, **kwargs: Any) -> Any:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn(*args, **kwargs)


def aggregate(kind: str, method: str, by_group: np.ndarray, overall: np.ndarray) -> np.ndarray:
    """One aggregate over the groups (last axis) of float arrays ``(..., C, S)`` and ``(..., C)``.

    ``kind``: ``"min"``, ``"max"``, ``"difference"`` or ``"ratio"``; ``method`` as fairlearn's.
    """
    if kind == "min":
        return _quiet(np.nanmin, by_group, axis=-1) if by_group.shape[-1] else np.full(by_group.shape[:-1], np.nan)
    if kind == "max":
        return _quiet(np.nanmax, by_group, axis=-1) if by_group.shape[-1] else np.full(by_group.shape[:-1], np.nan)
    if kind == "difference":
        if method == "between_groups":
            return _quiet(np.subtract, aggregate("max", method, by_group, overall), aggregate("min", method, by_group, overall))
        return _quiet(lambda: np.nanmax(np.abs(by_group - overall[..., None]), axis=-1))
    if method == "between_groups":
        return _quiet(np.divide, aggregate("min", method, by_group, overall), aggregate("max", method, by_group, overall))

    def to_overall() -> np.ndarray:
        r = by_group / overall[..., None]
        return np.nanmin(np.where(r > 1, 1.0 / r, r), axis=-1)

    return _quiet(to_overall)


def quantiles(samples: np.ndarray, q: Sequence[float], skip_nan: bool) -> np.ndarray:
    """Fairlearn's quantiles of replicates (axis 0): ``numpy.nanquantile`` if ``skip_nan`` else ``numpy.quantile``."""
    fn = np.nanquantile if skip_nan else np.quantile
    return _quiet(fn, samples, q=list(q), axis=0)


def check_replicates(values: np.ndarray) -> np.ndarray:
    """Replicate values as floats, or fairlearn's quantile error when a metric returned non-scalars."""
    try:
        return as_float(values, "raise")
    except PolfairError:
        try:
            np.quantile(list(values.reshape(values.shape[0], -1)), q=[0.5], axis=0)
        except ValueError as ve:
            raise PolfairError(QUANTILE_ERROR) from ve
        raise PolfairError(QUANTILE_ERROR) from None


# ----------------------------------------------------------------------------------------------
# output shapes


def pandas() -> Any:
    """pandas, or the error naming the extra (raised by the caller with its own name)."""
    try:
        import pandas as pd
    except ImportError:
        return None
    return pd


def _index(pd: Any, layout: Layout, features: Sequence[int]) -> Any:
    levels = [layout.levels[i].to_list() for i in features]
    for k, i in enumerate(features):  # interval bands: the pd.Interval values (an IntervalIndex, as fairlearn's)
        shown = layout.shown[i] if i < len(layout.shown) else None
        if shown:
            levels[k] = [shown.get(v, v) if v is not None else np.nan for v in levels[k]]
    names = [layout.names[i] for i in features]
    if len(features) == 1:
        return pd.Index(levels[0], name=names[0])
    return pd.MultiIndex.from_product(levels, names=names)


def _column(pd: Any, values: np.ndarray, index: Any, name: Any) -> Any:
    if values.dtype == object:
        col = pd.Series(np.asarray(values, dtype=object), index=index, name=name).infer_objects()
        return col
    return pd.Series(values, index=index, name=name)


def to_pandas(what: str, values: dict[Any, np.ndarray], layout: Layout, single: bool, attribute: str) -> Any:
    """Fairlearn's shape of a result.

    ``what``: ``"by_group"`` (values ``(C, S)``: a DataFrame over every group, a Series for one
    callable) or ``"control"`` (values ``(C,)``: ``overall`` and the aggregates: a Series over the
    metrics, the value itself for one callable; with control features a DataFrame over the
    control groups, a Series for one callable).
    """
    pd = pandas()
    if pd is None:
        raise PolfairError(PANDAS_MISSING.format(attribute, attribute.split("(")[0].removesuffix("_ci")))
    if what == "by_group":
        index = _index(pd, layout, range(len(layout.names)))
        cols = {name: _column(pd, v.reshape(-1), index, name) for name, v in values.items()}
    elif layout.n_cf:
        index = _index(pd, layout, range(layout.n_cf))
        cols = {name: _column(pd, v.reshape(-1), index, name) for name, v in values.items()}
    else:
        series = pd.Series({name: v.reshape(-1)[0] for name, v in values.items()}, dtype=None if values else float)
        return series.iloc[0] if single else series
    numeric = [c.dtype.kind in "iuf" for c in cols.values()]
    if all(numeric) and any(c.dtype.kind == "f" for c in cols.values()):
        cols = {name: c.astype(np.float64) for name, c in cols.items()}  # fairlearn's rows: one dtype
    frame = pd.DataFrame(cols, index=index) if cols else pd.DataFrame(index=index)
    return frame.iloc[:, 0] if single else frame


def to_polars(what: str, values: dict[Any, np.ndarray], layout: Layout) -> pl.DataFrame:
    """A result as a Polars DataFrame: key columns (the groups) then one column per metric.

    ``by_group``: one row per combination of control and sensitive levels; otherwise one row per
    control group (one row without control features). Scalar metrics are Float64 (Int64 for
    counts), non-scalar ones Object.
    """
    features = range(len(layout.names)) if what == "by_group" else range(layout.n_cf)
    keys: dict[str, pl.Series] = {}
    sizes = [len(layout.levels[i]) for i in features]
    for pos, i in enumerate(features):
        repeat = int(np.prod(sizes[pos + 1 :])) if pos + 1 < len(sizes) else 1
        tile = int(np.prod(sizes[:pos])) if pos else 1
        idx = np.tile(np.repeat(np.arange(sizes[pos]), repeat), tile)
        keys[layout.names[i]] = layout.levels[i].gather(idx)
    cols: dict[str, pl.Series] = {}
    for name, v in values.items():
        flat = v.reshape(-1)
        if flat.dtype == object:
            try:
                s = pl.Series(str(name), as_float(flat, "raise"))
            except PolfairError:
                s = pl.Series(str(name), list(flat), dtype=pl.Object)
        elif flat.dtype.kind in "iu":
            s = pl.Series(str(name), flat.astype(np.int64))
        else:
            s = pl.Series(str(name), flat.astype(np.float64)).fill_nan(None)
        if str(name) in keys or str(name) in cols:
            msg = f"metric name {str(name)!r} is also a feature's or another metric's name: rename it in metrics="
            raise PolfairError(msg)
        cols[str(name)] = s
    return pl.DataFrame({**keys, **cols}) if (keys or cols) else pl.DataFrame()
