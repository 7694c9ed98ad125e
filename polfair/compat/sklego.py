"""scikit-learn scorers for fairness, with scikit-lego's API (``sklego.metrics``).

Each function is a *factory* that returns a scorer ``scorer(estimator, X, y_true) -> float`` for
``GridSearchCV(scoring=...)`` / ``cross_validate``: the scorer calls ``estimator.predict(X)`` and
reads the sensitive column from ``X`` (a name for pandas or Polars frames, an index for NumPy
arrays or Polars frames). Larger is better, as scikit-learn expects.

The group rates come from polfair's engine: the predictions, labels and sensitive column go
through :func:`polfair.confusion_counts` and the rates are :data:`polfair.core.metrics.METRICS`'
``selection_rate`` and ``true_positive_rate``, so every definition lives in one place.

Undefined cases. scikit-lego returns an arbitrary 0 or 1 when a score is undefined (0 when both
groups have no positive predictions, 1 when a group is empty, 0 when a group has no positive
labels; see the table in ``docs/monitoring.md``). These scorers return **NaN** in every undefined
case, with a ``RuntimeWarning`` saying why; on defined cases the values equal scikit-lego 0.9's
(including 0.0 when one group's rate is 0 and the other's is not: the ratio's limit).
scikit-learn's ``GridSearchCV`` treats a NaN score as the worst and warns about it.

scikit-learn itself is not needed to *build* or *call* these scorers (they only call
``estimator.predict``); install ``polfair[sklearn]`` to use them with scikit-learn's model
selection.

Source: scikit-lego ``sklego/metrics.py`` (koaning/scikit-lego); Zafar et al. (2017), "Fairness
Constraints: Mechanisms for Fair Classification" (p% rule); Hardt, Price & Srebro (2016),
"Equality of Opportunity in Supervised Learning".
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import polars as pl

from polfair.core.metrics import ALIASES, METRICS, Counts
from polfair.core.passes.counts import cell_table
from polfair.exceptions import PolfairError

__all__ = ["correlation_score", "equal_opportunity_score", "p_percent_score", "subset_score"]

Scorer = Callable[..., float]


def _module(obj: Any) -> str:
    return type(obj).__module__.split(".")[0]


def _column(X: Any, column: str | int, fn: str) -> pl.Series:
    """The sensitive column of ``X`` as a Polars Series (by name, or by position for arrays)."""
    try:
        if isinstance(X, np.ndarray):
            if X.ndim != 2:
                msg = f"{fn}: X must be 2-dimensional, got shape {X.shape}"
                raise PolfairError(msg)
            # a str column indexes nothing in an array: NumPy's IndexError is reported below
            return pl.Series(column if isinstance(column, str) else f"column_{column}", X[:, column])  # type: ignore[index]
        if isinstance(X, pl.DataFrame):
            return X.get_column(column) if isinstance(column, str) else X.to_series(column)
        if isinstance(X, pl.LazyFrame):
            msg = f"{fn}: X is a LazyFrame; collect it first (estimators predict on eager data)"
            raise PolfairError(msg)
        if _module(X) == "pandas":
            return pl.Series(str(column), X[column].to_numpy())
        return pl.Series(str(column), np.asarray(X)[:, column])  # type: ignore[index]  # str: IndexError below
    except (KeyError, IndexError, pl.exceptions.ColumnNotFoundError, pl.exceptions.OutOfBoundsError) as exc:
        cols = list(getattr(X, "columns", []))
        where = f" Columns: {cols[:20]}" if cols else ""
        msg = f"{fn}: column {column!r} is not in X.{where}"
        raise PolfairError(msg) from exc


def _series(values: Any, name: str) -> pl.Series:
    if isinstance(values, pl.Series):
        return values.alias(name)
    if _module(values) == "pandas":
        return pl.Series(name, values.to_numpy())
    arr = np.asarray(values)
    if arr.ndim != 1:
        arr = arr.reshape(-1) if arr.ndim == 2 and 1 in arr.shape else arr
    if arr.ndim != 1:
        msg = f"{name} must be 1-dimensional, got shape {arr.shape}"
        raise PolfairError(msg)
    return pl.Series(name, arr)


def _indicator(z: pl.Series, column: str | int, fn: str) -> pl.Series:
    """The 0/1 sensitive indicator as Int8; raises like scikit-lego for other values."""
    if z.dtype == pl.Boolean:
        ok = z.null_count() == 0
        z = z.cast(pl.Int8)
    elif z.dtype.is_numeric():
        zf = z.cast(pl.Float64)
        ok = bool(zf.is_in([0.0, 1.0]).fill_null(False).all())
        z = zf.cast(pl.Int8, strict=False) if ok else z
    else:
        ok = False
    if not ok:
        found = z.unique().sort(nulls_last=True).head(10).to_list()
        msg = (
            f"{fn} only supports binary indicator columns for the sensitive column {column!r} (values 0 "
            f"and 1, no nulls); found values {found}. Encode it first, e.g. (X[{column!r}] == 'female')"
        )
        raise PolfairError(msg)
    return z


def _rates(frame: pl.DataFrame, metric: str, positive_target: Any, y_col: str) -> dict[int, float | None]:
    """Group rates of ``metric`` (from :data:`METRICS`) per indicator value 0/1, via the cell table."""
    cells = cell_table(frame, y_true=y_col, y_pred="y_hat", protected="z", favorable=positive_target).collect()
    m = METRICS[metric]
    vals = cells.select(pl.col("z"), m.expr(Counts()).alias("v"))
    out: dict[int, float | None] = {0: None, 1: None}
    for z, v in vals.iter_rows():
        out[int(z)] = v
    return out


def _undefined(fn: str, why: str) -> float:
    """Warn (at the scorer's caller) that the score of ``fn`` is undefined because ``why``; NaN."""
    warnings.warn(f"{fn}: {why}; the score is undefined, returning NaN", RuntimeWarning, stacklevel=4)
    return float("nan")


def _min_ratio(r1: float | None, r0: float | None, column: Any, what: str, fn: str) -> float:
    if r1 is None or r0 is None:
        empty = [str(z) for z, r in ((1, r1), (0, r0)) if r is None]
        return _undefined(fn, f"no samples{what} for {column} == {' and '.join(empty)}")
    if r1 == 0.0 and r0 == 0.0:
        return _undefined(fn, f"the rate is 0 for both {column} == 1 and {column} == 0 (0/0)")
    if r1 == 0.0 or r0 == 0.0:
        return 0.0
    return float(min(r1 / r0, r0 / r1))


def p_percent_score(sensitive_column: str | int, positive_target: Any = 1) -> Scorer:
    """Scorer of the p% rule: the smaller ratio of the two groups' positive-prediction rates.

    Parameters
    ----------
    sensitive_column
        Name (pandas/Polars ``X``) or position (NumPy or Polars ``X``) of a 0/1 indicator column
        (booleans allowed).
    positive_target
        The predicted value that is the positive outcome (default 1).

    Returns
    -------
    callable
        ``scorer(estimator, X, y_true=None) -> float`` in [0, 1] (1 = equal rates), or NaN.

    Raises
    ------
    PolfairError
        (a ``ValueError``, as scikit-lego) from the scorer when the column is not a 0/1 indicator or
        is not in ``X``.

    Notes
    -----
    ``p% = min(P(ŷ=t | z=1) / P(ŷ=t | z=0), P(ŷ=t | z=0) / P(ŷ=t | z=1))`` with ``P(ŷ=t | z)`` polfair's
    ``selection_rate`` of group z. Edge cases: one rate 0, the other not -> 0.0 (as scikit-lego);
    both rates 0 -> NaN (scikit-lego: 0); a group with no rows -> NaN (scikit-lego: 1, or 0 if the
    other rate is 0). NaN comes with a ``RuntimeWarning``. Source: Zafar et al. (2017);
    scikit-lego ``p_percent_score``.

    Examples
    --------
    >>> import numpy as np
    >>> class Fixed:  # any fitted estimator with .predict
    ...     def predict(self, X):
    ...         return np.array([1, 1, 0, 1, 0, 0])
    >>> X = np.array([[1], [1], [1], [0], [0], [0]])
    >>> round(p_percent_score(0)(Fixed(), X), 4)  # (1/3) / (2/3)
    0.5
    """

    def p_percent(estimator: Any, X: Any, y_true: Any = None) -> float:
        z = _indicator(_column(X, sensitive_column, "p_percent_score"), sensitive_column, "p_percent_score")
        y_hat = _series(estimator.predict(X), "y_hat")
        frame = pl.DataFrame([z.alias("z"), y_hat])
        r = _rates(frame, "selection_rate", positive_target, "y_hat")
        return _min_ratio(r[1], r[0], sensitive_column, "", "p_percent_score")

    return p_percent


def equal_opportunity_score(sensitive_column: str | int, positive_target: Any = 1) -> Scorer:
    """Scorer of equal opportunity: the smaller ratio of the two groups' true positive rates.

    Parameters
    ----------
    sensitive_column
        Name or position of a 0/1 indicator column of ``X`` (as :func:`p_percent_score`).
    positive_target
        The label/prediction value that is the positive outcome (default 1).

    Returns
    -------
    callable
        ``scorer(estimator, X, y_true) -> float`` in [0, 1] (1 = equal TPRs), or NaN.

    Raises
    ------
    PolfairError
        From the scorer: the column is not a 0/1 indicator or not in ``X``; ``y_true`` missing or
        of a different length than ``X``.

    Notes
    -----
    ``min(TPR(z=1) / TPR(z=0), TPR(z=0) / TPR(z=1))``, ``TPR(z) = P(ŷ=t | y=t, z)``, polfair's
    ``true_positive_rate``. Edge cases: one TPR 0, the other not -> 0.0 (as scikit-lego); both TPRs
    0 -> NaN (scikit-lego: 1); a group without positive labels -> NaN (scikit-lego: 0). NaN comes
    with a ``RuntimeWarning``. Source: Hardt, Price & Srebro (2016); scikit-lego
    ``equal_opportunity_score``.

    Examples
    --------
    >>> import numpy as np
    >>> class Fixed:
    ...     def predict(self, X):
    ...         return np.array([1, 1, 0, 1, 0, 0])
    >>> X = np.array([[1], [1], [1], [0], [0], [0]])
    >>> y = np.array([1, 1, 1, 1, 1, 0])
    >>> round(equal_opportunity_score(0)(Fixed(), X, y), 4)  # TPR 2/3 vs 1/2
    0.75
    """

    def equal_opportunity(estimator: Any, X: Any, y_true: Any = None) -> float:
        if y_true is None:
            msg = "equal_opportunity_score needs y_true (the scorer is called as scorer(estimator, X, y))"
            raise PolfairError(msg)
        fn = "equal_opportunity_score"
        z = _indicator(_column(X, sensitive_column, fn), sensitive_column, fn)
        y_hat = _series(estimator.predict(X), "y_hat")
        y = _series(y_true, "y")
        if len(y) != len(z):
            msg = f"{fn}: y_true has {len(y)} rows but X has {len(z)}"
            raise PolfairError(msg)
        frame = pl.DataFrame([z.alias("z"), y_hat, y])
        r = _rates(frame, "true_positive_rate", positive_target, "y")
        return _min_ratio(r[1], r[0], sensitive_column, f" with y_true == {positive_target!r}", fn)

    return equal_opportunity


def correlation_score(column: str | int) -> Scorer:
    """Scorer of the negative absolute Pearson correlation between predictions and a column.

    Parameters
    ----------
    column
        Name or position of a numeric (or boolean) column of ``X``.

    Returns
    -------
    callable
        ``scorer(estimator, X, y_true=None) -> float`` in [-1, 0]: ``-|corr(predict(X), X[column])|``
        (0 = uncorrelated, the best; larger is better). NaN when either side is constant (the
        correlation is 0/0), as scikit-lego (NumPy's ``corrcoef``).

    Raises
    ------
    PolfairError
        From the scorer: the column is missing or not numeric/boolean, or the predictions are not
        numeric.

    Notes
    -----
    Not a count-based metric: it is Pearson's r of the two columns (``pl.corr``).
    Source: scikit-lego ``correlation_score``.

    Examples
    --------
    >>> import numpy as np
    >>> class Fixed:
    ...     def predict(self, X):
    ...         return np.array([1.0, 2.0, 3.0, 4.0])
    >>> X = np.array([[2.0], [4.0], [6.0], [8.0]])
    >>> correlation_score(0)(Fixed(), X)
    -1.0
    """

    def correlation(estimator: Any, X: Any, y_true: Any = None) -> float:
        z = _column(X, column, "correlation_score")
        y_hat = _series(estimator.predict(X), "y_hat")
        for s, what in ((z, f"column {column!r}"), (y_hat, "the predictions")):
            if not (s.dtype.is_numeric() or s.dtype == pl.Boolean):
                msg = f"correlation_score: {what} must be numeric or boolean, found dtype {s.dtype}"
                raise PolfairError(msg)
        frame = pl.DataFrame([z.cast(pl.Float64).alias("z"), y_hat.cast(pl.Float64)])
        r = frame.select(pl.corr("y_hat", "z")).item()
        return float("nan") if r is None else -abs(float(r))

    return correlation


def _mask(mask: Any) -> np.ndarray:
    if isinstance(mask, pl.Series):
        return mask.fill_null(False).cast(pl.Boolean).to_numpy()
    arr = mask.to_numpy() if _module(mask) == "pandas" else np.asarray(mask)
    if arr.ndim != 1:
        msg = f"subset_picker should return a 1-dimensional boolean array or Series, returned {arr.ndim} dimensions"
        raise PolfairError(msg)
    return arr.astype(bool)


def _take(obj: Any, mask: np.ndarray) -> Any:
    if obj is None:
        return None
    if isinstance(obj, (pl.DataFrame, pl.Series)):
        return obj.filter(pl.Series(mask))
    if _module(obj) == "pandas":
        return obj[mask]
    return np.asarray(obj)[mask]


def subset_score(subset_picker: Callable[[Any, Any], Any], score: Callable[..., Any] | str, **kwargs: Any) -> Scorer:
    """Scorer that applies ``score`` only to the rows ``subset_picker`` selects.

    Parameters
    ----------
    subset_picker
        ``subset_picker(X, y_true)`` -> 1-D boolean mask (NumPy, pandas or Polars; Polars nulls
        count as not selected), e.g. ``lambda X, y: X["sex"] == "female"``.
    score
        A metric ``score(y_true, y_pred, **kwargs)`` (e.g. ``sklearn.metrics.accuracy_score``), or
        the name of a polfair group metric (:data:`polfair.core.metrics.METRICS` or an alias such as
        ``"recall"``), computed from the subset's confusion counts with ``favorable=`` from
        ``kwargs`` (default 1); an undefined rate is NaN.
    **kwargs
        Passed to ``score`` (for a metric name: only ``favorable``).

    Returns
    -------
    callable
        ``scorer(estimator, X, y_true=None) -> float``: ``score(y_true[mask], predict(X[mask]))``;
        NaN with a ``RuntimeWarning`` when the subset is empty (as scikit-lego).

    Raises
    ------
    PolfairError
        From the scorer: a mask that is not 1-D; an unknown metric name or extra keyword for one.

    Notes
    -----
    Source: scikit-lego ``subset_score``.

    Examples
    --------
    >>> import numpy as np
    >>> class Echo:
    ...     def predict(self, X):
    ...         return X[:, 1]
    >>> X = np.array([[0, 1], [0, 0], [1, 1], [1, 1]])
    >>> y = np.array([1, 1, 0, 1])
    >>> tpr_of_z0 = subset_score(lambda X, y: X[:, 0] == 0, "true_positive_rate")
    >>> tpr_of_z0(Echo(), X, y)
    0.5
    """
    metric = None
    if isinstance(score, str):
        metric = METRICS.get(ALIASES.get(score, score))
        if metric is None:
            msg = f"subset_score: {score!r} is not a polfair metric; known: {', '.join([*METRICS, *ALIASES])}"
            raise PolfairError(msg)
        extra = set(kwargs) - {"favorable"}
        if extra:
            msg = f"subset_score: a polfair metric name takes only favorable=, got {sorted(extra)}"
            raise PolfairError(msg)

    def sliced(estimator: Any, X: Any, y_true: Any = None) -> float:
        mask = _mask(subset_picker(X, y_true))
        if not mask.any():
            warnings.warn("No samples in subset, returning NaN", RuntimeWarning, stacklevel=2)
            return float("nan")
        Xs = _take(X, mask)
        ys = _take(y_true, mask)
        y_pred = estimator.predict(Xs)
        if metric is None:
            return score(ys, y_pred, **kwargs)  # type: ignore[operator]
        if ys is None:
            msg = "subset_score: a polfair metric needs y_true"
            raise PolfairError(msg)
        frame = pl.DataFrame([_series(ys, "y"), _series(y_pred, "y_hat")]).with_columns(z=pl.lit(0, pl.Int8))
        cells = cell_table(frame, y_true="y", y_pred="y_hat", protected="z",
                                 favorable=kwargs.get("favorable", 1)).collect()  # fmt: skip
        v = cells.select(metric.expr(Counts()).alias("v")).item()
        return float("nan") if v is None else float(v)

    return sliced
