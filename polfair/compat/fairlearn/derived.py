"""fairlearn's ``make_derived_metric`` on :class:`~polfair.compat.fairlearn.MetricFrame`.

A scalar metric from a disaggregated one: ``make_derived_metric(metric=recall_score,
transform="difference")`` returns ``f(y_true, y_pred, *, sensitive_features, method=...,
sample_weight=..., **metric_kwargs)``, the MetricFrame's ``difference()`` of the metric
(fairlearn 0.15's semantics and messages). Recognised metrics take the one pass.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

from polfair.compat.fairlearn.metric_frame import MetricFrame
from polfair.exceptions import PolfairError

__all__ = ["make_derived_metric"]

TRANSFORMS = ("difference", "group_min", "group_max", "ratio")
# fairlearn 0.15's messages (fairlearn/metrics/_make_derived_metric.py)
_METRIC_CALLABLE_ERROR = "Supplied metric object must be callable"
_METHOD_ARG_ERROR = (
    "Callables which accept a '{0}' argument may not be passed to make_derived_metric(). Please use functools.partial()"
)
_INVALID_TRANSFORM = f"Transform must be one of {list(TRANSFORMS)}"


def make_derived_metric(
    *,
    metric: Callable[..., Any],
    transform: str,
    sample_param_names: Sequence[str] | None = None,
) -> Callable[..., Any]:
    """A scalar metric: ``transform`` (a MetricFrame aggregate) of ``metric`` over the sensitive groups.

    Parameters
    ----------
    metric : callable
        ``metric(y_true, y_pred, **kwargs)``, e.g. ``sklearn.metrics.recall_score``; it may not
        take a ``method`` argument (bind such arguments with :func:`functools.partial`).
    transform : {"difference", "group_min", "group_max", "ratio"}
        The :class:`MetricFrame` method applied.
    sample_param_names : sequence of str, optional
        Keyword arguments of the returned function that hold one value per row, split by group
        (``sample_params``); default ``["sample_weight"]``.

    Returns
    -------
    callable
        ``f(y_true, y_pred, *, sensitive_features, method="between_groups", **kwargs)``: a float
        (or what the transform returns for one metric). Other keyword arguments are bound to
        ``metric``; ``method`` goes to ``difference``/``ratio``.

    Raises
    ------
    ValueError (PolfairError)
        ``metric`` is not callable or takes ``method``; ``transform`` is unknown (fairlearn's
        messages).

    Notes
    -----
    Equal to ``MetricFrame(metrics=metric, ...).<transform>(method=...)``. Source: fairlearn 0.15
    ``fairlearn.metrics.make_derived_metric``.

    Examples
    --------
    >>> from sklearn.metrics import recall_score
    >>> recall_difference = make_derived_metric(metric=recall_score, transform="difference")
    >>> float(recall_difference([1, 1, 1, 1], [1, 0, 1, 1], sensitive_features=["a", "a", "b", "b"]))
    0.5
    """
    if not callable(metric):
        raise PolfairError(_METRIC_CALLABLE_ERROR)
    if "method" in inspect.signature(metric).parameters:
        raise PolfairError(_METHOD_ARG_ERROR.format("method"))
    if transform not in TRANSFORMS:
        raise PolfairError(_INVALID_TRANSFORM)
    names = ["sample_weight"] if sample_param_names is None else list(sample_param_names)

    def derived(y_true: Any, y_pred: Any, *, sensitive_features: Any, **other: Any) -> Any:
        sample_params = {k: v for k, v in other.items() if k in names}
        method = {k: v for k, v in other.items() if k == "method"}
        bound = {k: v for k, v in other.items() if k not in names and k != "method"}
        fn = functools.partial(metric, **bound)
        fn.__name__ = "_".join([getattr(metric, "__name__", "metric"), *(f"{k}_{v}" for k, v in sorted(bound.items()))])  # type: ignore[attr-defined]
        mf = MetricFrame(metrics=fn, y_true=y_true, y_pred=y_pred, sensitive_features=sensitive_features,
                         sample_params=sample_params)  # fmt: skip
        if transform in ("difference", "ratio"):
            return getattr(mf, transform)(**method)
        return getattr(mf, transform)()

    derived.__name__ = f"{getattr(metric, '__name__', 'metric')}_{transform}"
    derived.__doc__ = f"{transform} of {getattr(metric, '__name__', 'the metric')} over the groups (make_derived_metric)."
    return derived
