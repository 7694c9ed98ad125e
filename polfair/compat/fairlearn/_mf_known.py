"""Which metric functions :class:`~polfair.compat.fairlearn.MetricFrame` computes from cell tables.

An underscore module: internal to :mod:`polfair.compat.fairlearn`. :func:`recognise` maps a metric
function, by identity, to a :class:`Known` handler: scikit-learn's ``accuracy_score``,
``zero_one_loss``, ``balanced_accuracy_score``, ``recall_score``, ``precision_score``,
``f1_score``, ``fbeta_score``, ``mean_absolute_error``, ``mean_squared_error``,
``root_mean_squared_error``, ``r2_score``; fairlearn's ``selection_rate``, ``true_positive_rate``,
``true_negative_rate``, ``false_positive_rate``, ``false_negative_rate``, ``count``,
``mean_prediction``; polfair's own rate functions (:mod:`polfair.compat.fairlearn.rates`); and
their :func:`functools.partial` forms whose keywords the handler knows (``pos_label``,
``zero_division``, ``beta``, ``normalize``, ``adjusted``, ``force_finite``, ``average="binary"``,
``multioutput="uniform_average"``), with ``sample_weight`` passed as fairlearn passes it, in
``sample_params``. :func:`data_refusal` then says whether the data allow the cell path (e.g.
scikit-learn's binary metrics need at most two labels, no missing value, and ``pos_label`` among
the labels when there are two): when they do not, the metric is called per group, so that it
raises or answers exactly as it does on fairlearn.

:func:`classification_values` and :func:`regression_values` evaluate a handler on a count table,
with the peer's conventions for undefined values (scikit-learn's ``zero_division``, fairlearn's
rate of an empty confusion row = 0, ``r2_score``'s ``force_finite``, polfair's NaN) applied to
the numerator and denominator of :data:`polfair.core.metrics.METRICS`.
"""

from __future__ import annotations

import functools
import math
import numbers
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from polfair.compat.fairlearn._mf_data import MetricFunction, Target
from polfair.core.metrics import METRICS, Counts
from polfair.exceptions import user_stacklevel

__all__ = [
    "as_labels",
    "classification_values",
    "data_refusal",
    "emit",
    "favorable_of",
    "kind_of",
    "Known",
    "label_value",
    "LabelFacts",
    "Notes",
    "recognise",
    "regression_values",
    "weight_refusal",
]

_REQUIRED = object()
_CLASSIFIER_PARAMS = {"labels": None, "pos_label": 1, "average": "binary", "sample_weight": None,
                      "zero_division": "warn"}  # fmt: skip
_REGRESSOR_PARAMS = {"sample_weight": None, "multioutput": "uniform_average"}

#: scikit-learn function name -> (handler, keyword -> default).
SKLEARN: dict[str, tuple[str, dict[str, Any]]] = {
    "accuracy_score": ("accuracy", {"normalize": True, "sample_weight": None}),
    "zero_one_loss": ("zero_one_loss", {"normalize": True, "sample_weight": None}),
    "balanced_accuracy_score": ("balanced_accuracy", {"sample_weight": None, "adjusted": False}),
    "recall_score": ("recall", dict(_CLASSIFIER_PARAMS)),
    "precision_score": ("precision", dict(_CLASSIFIER_PARAMS)),
    "f1_score": ("fbeta", dict(_CLASSIFIER_PARAMS)),
    "fbeta_score": ("fbeta", dict(_CLASSIFIER_PARAMS) | {"beta": _REQUIRED}),
    "mean_absolute_error": ("mae", dict(_REGRESSOR_PARAMS)),
    "mean_squared_error": ("mse", dict(_REGRESSOR_PARAMS)),
    "root_mean_squared_error": ("rmse", dict(_REGRESSOR_PARAMS)),
    "r2_score": ("r2", dict(_REGRESSOR_PARAMS) | {"force_finite": True}),
}
#: fairlearn function name -> (handler, keyword -> default).
FAIRLEARN: dict[str, tuple[str, dict[str, Any]]] = {
    "selection_rate": ("fl_selection_rate", {"pos_label": 1, "sample_weight": None}),
    "true_positive_rate": ("fl_rate", {"sample_weight": None, "pos_label": None}),
    "true_negative_rate": ("fl_rate", {"sample_weight": None, "pos_label": None}),
    "false_positive_rate": ("fl_rate", {"sample_weight": None, "pos_label": None}),
    "false_negative_rate": ("fl_rate", {"sample_weight": None, "pos_label": None}),
    "count": ("count", {}),
    "mean_prediction": ("mean_prediction", {"sample_weight": None}),
}
#: The rate functions of :mod:`polfair.compat.fairlearn.rates` (polfair's conventions).
POLFAIR_RATES = (
    "accuracy", "base_rate", "error_rate", "false_discovery_rate", "false_negative_rate", "false_omission_rate",
    "false_positive_rate", "negative_predictive_value", "positive_predictive_value", "selection_rate",
    "true_negative_rate", "true_positive_rate",
)  # fmt: skip

CLASSIFICATION = {"accuracy", "zero_one_loss", "balanced_accuracy", "recall", "precision", "fbeta", "fl_rate",
                  "fl_selection_rate", "pf_rate", "count"}  # fmt: skip
REGRESSION = {"mae", "mse", "rmse", "r2", "mean_prediction"}
#: Handlers whose peer function reads both labels and checks them (scikit-learn's binary rules).
_SKLEARN_LABELS = {"accuracy", "zero_one_loss", "balanced_accuracy", "recall", "precision", "fbeta"}


@dataclass(frozen=True)
class Known:
    """A recognised metric: the handler, its peer function's name and its keyword values."""

    handler: str
    peer: str
    params: dict[str, Any] = field(default_factory=dict)
    weight: Target | None = None

    @property
    def is_regression(self) -> bool:
        return self.handler in REGRESSION


def _peer_table(func: Callable[..., Any]) -> tuple[str, str, dict[str, Any]] | None:
    """(library, function name, keyword defaults) of a function polfair knows, found by identity."""
    name = getattr(func, "__name__", None)
    if not isinstance(name, str):
        return None
    for module, table in (("sklearn.metrics", SKLEARN), ("fairlearn.metrics", FAIRLEARN)):
        mod = sys.modules.get(module)
        if mod is not None and name in table and getattr(mod, name, None) is func:
            return module.split(".")[0], name, table[name][1]
    import polfair.compat.fairlearn.rates as rates

    if name in POLFAIR_RATES and getattr(rates, name, None) is func:
        return "polfair", name, {"pos_label": 1, "sample_weight": None}
    return None


def _unwrap(func: Any) -> tuple[Any, tuple[Any, ...], dict[str, Any]]:
    """The function under (nested) :func:`functools.partial` wrappers, their positional and keyword arguments."""
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = {}
    while isinstance(func, functools.partial):
        args = func.args + args
        kwargs = {**func.keywords, **kwargs}
        func = func.func
    return func, args, kwargs


def _is_nan(v: Any) -> bool:
    return isinstance(v, float) and math.isnan(v)


def _check_value(key: str, value: Any) -> str | None:
    """Why a keyword value keeps the metric off the cell path (``None``: it is understood)."""
    ok = {
        "labels": value is None,
        "average": value == "binary",
        "multioutput": isinstance(value, str) and value == "uniform_average",
        "sample_weight": value is None,
        "zero_division": (isinstance(value, str) and value == "warn") or _is_nan(value)
        or (isinstance(value, numbers.Real) and not isinstance(value, bool) and value in (0, 1)),
        "normalize": isinstance(value, (bool, np.bool_)),
        "adjusted": isinstance(value, (bool, np.bool_)),
        "force_finite": isinstance(value, (bool, np.bool_)),
        "beta": isinstance(value, numbers.Real) and not isinstance(value, bool) and float(value) >= 0,
        "pos_label": value is None or isinstance(value, (str, numbers.Number, np.bool_)),
    }.get(key, False)
    if ok:
        return None
    if key == "sample_weight":
        return "sample_weight is bound in the partial (fairlearn splits weights by group only from sample_params)"
    return f"{key}={value!r} is not handled from the cell table"


def recognise(mf: MetricFunction) -> Known | str:
    """The :class:`Known` handler of a metric function, or why it is called per group instead."""
    func, args, kwargs = _unwrap(mf.func)
    peer = _peer_table(func)
    if peer is None:
        return "not a function polfair recognises (called per group, as fairlearn does)"
    lib, name, defaults = peer
    if args:
        return f"{lib}'s {name} with positional arguments bound in a partial"
    params = dict(defaults)
    for key, value in kwargs.items():
        if key not in defaults:
            return f"{lib}'s {name} has no cell-table form with keyword {key!r}"
        reason = _check_value(key, value)
        if reason is not None:
            return f"{lib}'s {name}: {reason}"
        params[key] = value
    extra = set(mf.params) - {"sample_weight"}
    if extra or (mf.params and "sample_weight" not in defaults):
        return f"{lib}'s {name} with sample parameters {sorted(mf.params)}"
    if any(v is _REQUIRED for v in params.values()):
        missing = [k for k, v in params.items() if v is _REQUIRED]
        return f"{lib}'s {name} without its required keyword(s) {missing}"
    handler = SKLEARN[name][0] if lib == "sklearn" else FAIRLEARN[name][0] if lib == "fairlearn" else "pf_rate"
    if name == "f1_score":
        params["beta"] = 1.0
    if handler in ("fl_rate", "pf_rate"):
        params["metric"] = name
    return Known(handler, f"{lib}.{name}", params, mf.params.get("sample_weight"))


# ----------------------------------------------------------------------------------------------
# can the data take the cell path?


def kind_of(s: pl.Series | None) -> str:
    """``"num"`` (integers, booleans, integral floats as labels), ``"float"``, ``"str"`` or ``"other"``."""
    if s is None:
        return "other"
    if s.dtype == pl.Boolean or s.dtype.is_integer():
        return "num"
    if s.dtype.is_float():
        return "float"
    if s.dtype in (pl.String, pl.Categorical) or isinstance(s.dtype, pl.Enum):
        return "str"
    return "other"


class LabelFacts:
    """What the handlers' data conditions read about ``y_true`` / ``y_pred``, each computed once."""

    def __init__(self, y: pl.Series | None, p: pl.Series | None) -> None:
        self.y, self.p = y, p

    @functools.cached_property
    def y_label(self) -> pl.Series | None:
        return as_labels(self.y)

    @functools.cached_property
    def p_label(self) -> pl.Series | None:
        return as_labels(self.p)

    @functools.cached_property
    def clean(self) -> bool:
        """Both are 1-D label columns without missing values, of the same kind (numbers or strings)."""
        y, p = self.y_label, self.p_label
        return (y is not None and p is not None and y.null_count() == 0 and p.null_count() == 0
                and kind_of(y) == kind_of(p) and kind_of(y) in ("num", "str"))  # fmt: skip

    @functools.cached_property
    def labels(self) -> list[Any]:
        """The sorted distinct labels of ``y_true`` and ``y_pred`` (only read when :attr:`clean`)."""
        assert self.y_label is not None and self.p_label is not None
        values = set(self.y_label.unique().to_list()) | set(self.p_label.unique().to_list())
        return sorted(values)

    @functools.cached_property
    def numeric_finite(self) -> bool:
        """Both are 1-D numeric columns with only finite values (what scikit-learn's regressors accept)."""
        return all(s is not None and (s.dtype.is_numeric() or s.dtype == pl.Boolean) and s.null_count() == 0
                   and (not s.dtype.is_float() or bool(s.is_finite().all())) for s in (self.y, self.p))  # fmt: skip

    @functools.cached_property
    def p_numeric_finite(self) -> bool:
        s = self.p
        return bool(s is not None and (s.dtype.is_numeric() or s.dtype == pl.Boolean) and s.null_count() == 0
                    and (not s.dtype.is_float() or s.is_finite().all()))  # fmt: skip


def as_labels(s: pl.Series | None) -> pl.Series | None:
    """A label column as the pass reads it: booleans and integral floats as Int64; others unchanged."""
    if s is None:
        return None
    if s.dtype == pl.Boolean:
        return s.cast(pl.Int64)
    if s.dtype.is_float():
        ok = s.drop_nulls()
        if ok.len() and bool(ok.is_finite().all()) and bool((ok == ok.floor()).all()):
            return s.cast(pl.Int64)
        return s
    if isinstance(s.dtype, (pl.Categorical, pl.Enum)):
        return s.cast(pl.String)
    return s


def label_value(v: Any, kind: str) -> tuple[bool, Any]:
    """``(ok, value)``: ``v`` as a value of a label column of ``kind`` (booleans and integral floats as ints)."""
    if kind == "str":
        return (True, v) if isinstance(v, str) else (False, None)
    if isinstance(v, (bool, np.bool_)):
        return True, int(v)
    if isinstance(v, numbers.Integral):
        return True, int(v)
    if isinstance(v, numbers.Real) and float(v).is_integer():
        return True, int(float(v))
    return False, None


def weight_refusal(k: Known) -> str | None:
    """Why ``sample_weight`` keeps a metric per group: missing, negative or non-finite weights."""
    if k.weight is None:
        return None
    s = k.weight.series
    if s is None or not (s.dtype.is_numeric() or s.dtype == pl.Boolean):
        return "sample_weight is not one number per row"
    if k.handler == "pf_rate":
        return None  # polfair's functions leave rows with a missing weight out; the pass does too
    if s.null_count() or (s.dtype.is_float() and not bool(s.is_finite().all())):
        return "sample_weight has missing or infinite values"
    if bool((s < 0).any()):
        return "sample_weight has negative values"
    return None


def data_refusal(k: Known, facts: LabelFacts) -> str | None:
    """Why the data keep a recognised metric off the cell path (``None``: the cell path applies)."""
    reason = weight_refusal(k)
    if reason is not None:
        return reason
    h = k.handler
    if h == "count":
        return None
    if h in ("mae", "mse", "rmse", "r2"):
        return None if facts.numeric_finite else "y_true and y_pred are not finite numbers without missing values"
    if h == "mean_prediction":
        return None if facts.p_numeric_finite else "y_pred is not finite numbers without missing values"
    if h == "pf_rate":
        for s in (facts.y_label, facts.p_label):
            if s is None or kind_of(s) not in ("num", "str", "float"):
                return "y_true or y_pred is not one label per row"
            if not label_value(k.params["pos_label"], "str" if kind_of(s) == "str" else "num")[0]:
                return "pos_label does not have the labels' type"
        return None
    if h == "fl_selection_rate":
        p = facts.p_label
        if p is None or p.null_count() or kind_of(p) not in ("num", "str"):
            return "y_pred is not labels without missing values"
        if not label_value(k.params["pos_label"], kind_of(p))[0]:
            return "pos_label does not have the type of y_pred's labels"
        return None
    if not facts.clean:
        return "y_true and y_pred are not labels of one type without missing values"
    labels = facts.labels
    if len(labels) > 2:
        return f"{len(labels)} distinct labels (multiclass): the metric is called per group"
    kind = kind_of(facts.y_label)
    if h == "fl_rate":
        pos = k.params["pos_label"]
        if pos is None:
            if kind != "num" or not (set(labels) <= {0, 1} or set(labels) <= {-1, 1}):
                return "pos_label=None needs labels in {0, 1} or {-1, 1} (fairlearn raises otherwise)"
            return None
        ok, value = label_value(pos, kind)
        if not ok or (len(labels) == 2 and value not in labels):
            return "pos_label is not one of the two labels (fairlearn raises)"
        return None
    if h in ("recall", "precision", "fbeta"):
        ok, value = label_value(k.params["pos_label"], kind)
        if not ok or (len(labels) == 2 and value not in labels):
            return "pos_label is not one of the labels (scikit-learn raises)"
    return None


def favorable_of(k: Known, facts: LabelFacts) -> Any:
    """The favorable label of the pass a handler reads (its ``pos_label``, in the pass's types)."""
    h = k.handler
    if h == "count":
        return None
    if h in ("fl_selection_rate", "pf_rate", "recall", "precision", "fbeta"):
        s = facts.p_label if h == "fl_selection_rate" else facts.y_label
        return label_value(k.params["pos_label"], "str" if kind_of(s) == "str" else "num")[1]
    if h == "fl_rate" and k.params["pos_label"] is not None:
        return label_value(k.params["pos_label"], kind_of(facts.y_label))[1]
    labels = facts.labels
    return 1 if 1 in labels and kind_of(facts.y_label) == "num" else (labels[-1] if labels else 1)


# ----------------------------------------------------------------------------------------------
# values from count tables, with the peer's conventions


def _num_den(frame: pl.DataFrame, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """Numerator and denominator of ``METRICS[metric]`` over a count table, as float arrays."""
    m = METRICS[metric]
    assert m.denominator is not None
    c = Counts()
    out = frame.select(m.numerator(c).cast(pl.Float64).alias("num"), m.denominator(c).cast(pl.Float64).alias("den"))
    return out["num"].to_numpy(), out["den"].to_numpy()


def _divide(num: np.ndarray, den: np.ndarray, zero: float) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den != 0, num / np.where(den != 0, den, 1.0), zero)


def _zero_division(value: Any) -> float:
    return 0.0 if isinstance(value, str) else float(value)


@dataclass
class Notes:
    """Warnings a handler owes the caller (the peer's), emitted once per metric by the caller."""

    messages: list[tuple[str, type[Warning]]] = field(default_factory=list)

    def add(self, message: str, category: type[Warning]) -> None:
        if (message, category) not in self.messages:
            self.messages.append((message, category))


def _undefined_metric_warning() -> type[Warning]:
    mod = sys.modules.get("sklearn.exceptions")
    return getattr(mod, "UndefinedMetricWarning", UserWarning) if mod is not None else UserWarning


def _prf(k: Known, frame: pl.DataFrame, present: np.ndarray, notes: Notes) -> np.ndarray:
    """scikit-learn's precision, recall and F-beta (average='binary'): ``_prf_divide`` semantics."""
    zd = k.params["zero_division"]
    zero = _zero_division(zd)
    tp, true_sum = _num_den(frame, "true_positive_rate")
    _, pred_sum = _num_den(frame, "positive_predictive_value")
    h = k.handler
    beta = float(k.params.get("beta", 1.0))
    if h == "fbeta" and math.isinf(beta):
        h = "recall"
    elif h == "fbeta" and beta == 0:
        h = "precision"
    if h == "recall":
        num, den, what = tp, true_sum, "Recall is ill-defined and being set to 0.0 due to no true samples."
    elif h == "precision":
        num, den, what = tp, pred_sum, "Precision is ill-defined and being set to 0.0 due to no predicted samples."
    else:
        beta2 = beta**2
        num, den = (1 + beta2) * tp, beta2 * true_sum + pred_sum
        what = "F-score is ill-defined and being set to 0.0 due to no true nor predicted samples."
    if isinstance(zd, str) and k.handler == h and bool(((den == 0) & present).any()):
        notes.add(f"{what} Use `zero_division` parameter to control this behavior.", _undefined_metric_warning())
    return _divide(num, den, zero)


def _balanced_accuracy(k: Known, frame: pl.DataFrame, notes: Notes) -> np.ndarray:
    """scikit-learn's ``balanced_accuracy_score``: mean recall over the classes present in the group."""
    tp, pos = _num_den(frame, "true_positive_rate")
    tn, neg = _num_den(frame, "true_negative_rate")
    seen = frame.select((pl.col("tp_n") + pl.col("fn_n") + pl.col("fp_n")).alias("pos"),
                        (pl.col("tn_n") + pl.col("fp_n") + pl.col("fn_n")).alias("neg"))  # fmt: skip
    has_pos, has_neg = seen["pos"].to_numpy() > 0, seen["neg"].to_numpy() > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        r_pos, r_neg = tp / pos, tn / neg
    use_pos, use_neg = has_pos & (pos != 0), has_neg & (neg != 0)
    if bool(((has_pos & (pos == 0)) | (has_neg & (neg == 0))).any()):
        notes.add("y_pred contains classes not in y_true", UserWarning)
    k_classes = use_pos.astype(np.int64) + use_neg
    with np.errstate(divide="ignore", invalid="ignore"):
        both = (r_neg + r_pos) / 2.0
        score = np.where(use_pos & use_neg, both, np.where(use_pos, r_pos, np.where(use_neg, r_neg, np.nan)))
        if k.params["adjusted"]:
            chance = 1.0 / k_classes
            score = (score - chance) / (1.0 - chance)
    return score


def classification_values(k: Known, frame: pl.DataFrame, notes: Notes, strict: bool = True) -> np.ndarray | None:
    """A classification handler's value for each row of a count table; ``None`` to call it per group.

    ``frame`` has the cell table's count columns (``n``, ``w``, ``tp`` ... ``fn``, ``tp_n`` ...):
    one row per group, every row with at least one row of data. ``strict``: a group whose weights
    sum to 0 sends the metric per group (the peer divides by zero: it raises or warns); otherwise
    its value is NaN (bootstrap replicates).
    """
    h = k.handler
    rows = frame["n"].to_numpy().astype(np.float64)
    total = frame.select(Counts().total.cast(pl.Float64)).to_series().to_numpy()
    present = rows > 0
    if strict and k.weight is not None and h != "pf_rate" and bool(((total == 0) & present).any()):
        return None  # a group whose weights sum to 0: the peer divides by zero (raises or warns): call it
    if h == "count":
        return frame["n"].to_numpy().astype(np.int64)
    if h == "pf_rate":
        out = frame.select(METRICS[k.params["metric"]].expr(Counts())).to_series()
        return out.cast(pl.Float64).fill_null(np.nan).to_numpy()
    if h in ("accuracy", "zero_one_loss"):
        correct, _ = _num_den(frame, "accuracy")
        if k.params["normalize"]:
            acc = correct / total
            return 1.0 - acc if h == "zero_one_loss" else acc
        if h == "accuracy":
            return correct
        n_samples = rows if k.weight is None else total
        return n_samples - correct
    if h == "fl_selection_rate":
        num, den = _num_den(frame, "selection_rate")
        return num / den
    if h == "fl_rate":
        num, den = _num_den(frame, k.params["metric"])
        return _divide(num, den, 0.0)  # fairlearn: confusion_matrix(normalize="true"), nan_to_num
    if h == "balanced_accuracy":
        return _balanced_accuracy(k, frame, notes)
    return _prf(k, frame, present, notes)


def regression_values(k: Known, values: dict[str, np.ndarray], constant: np.ndarray, rows: np.ndarray,
                      notes: Notes) -> np.ndarray:  # fmt: skip
    """A regression handler's value per group from :func:`polfair.core.regression.metric_values`.

    ``constant`` marks groups whose outcome is constant (``r2_score``'s zero denominator), ``rows``
    their row counts (``r2_score`` is NaN below two rows).
    """
    h = k.handler
    if h == "mean_prediction":
        return values["mean_prediction"]
    if h == "mae":
        return values["mean_absolute_error"]
    if h == "mse":
        return values["mean_squared_error"]
    if h == "rmse":
        return values["root_mean_squared_error"]
    r2 = values["r2_score"].copy()
    perfect = values["mean_squared_error"] == 0
    if k.params["force_finite"]:
        r2 = np.where(constant, np.where(perfect, 1.0, 0.0), r2)
    else:
        r2 = np.where(constant, np.where(perfect, np.nan, -np.inf), r2)
    few = rows < 2
    if bool(few.any()):
        notes.add("R^2 score is not well-defined with less than two samples.", _undefined_metric_warning())
    return np.where(few, np.nan, r2)


def emit(notes: Notes, stacklevel: int = 4) -> None:
    """Emit the peer's warnings a computation owes (once each)."""
    for message, category in notes.messages:
        warnings.warn(message, category, stacklevel=user_stacklevel())
