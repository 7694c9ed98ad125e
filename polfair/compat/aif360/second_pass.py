"""Row-level (individual) fairness measures: a documented *second pass* over the data.

Everything else in polfair reads only the cell table. Two of aif360's measures need the rows
themselves, so they live here and select only the columns they need, then collect them once:

* :func:`consistency` (Zemel et al. 2013): how similar each individual's label is to its
  k nearest neighbours' labels. Uses scikit-learn's ``NearestNeighbors(algorithm="ball_tree")``,
  an optional dependency (``pip install 'polfair[sklearn]'``), so that ties between equidistant
  neighbours are broken exactly as aif360 0.6.1 breaks them.
* :func:`rich_subgroup` (Kearns et al. 2018, GerryFair): the weighted disparity of the most
  unfair linear-threshold subgroup over the protected attributes, as aif360 0.6.1's auditor
  computes it in one step (two ordinary least-squares fits), with NumPy least squares.

Both functions take plain NumPy arrays (the collected columns) so that the aif360-compatible
classes (:mod:`polfair.compat.aif360`) can collect once and call them many times. Both are unweighted
and ignore any group definition, as in aif360.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["consistency", "rich_subgroup"]


def consistency(features: np.ndarray, labels: np.ndarray, n_neighbors: int = 5) -> float:
    r"""Individual-fairness consistency of labels with their nearest neighbours' labels.

    .. math:: \mathrm{consistency} = 1 - \frac{1}{n}\sum_{i=1}^{n}
       \left| y_i - \frac{1}{k}\sum_{j \in \mathcal{N}_k(x_i)} y_j \right|

    where :math:`\mathcal{N}_k(x_i)` are the ``k`` nearest rows to :math:`x_i` in Euclidean
    distance over the *unscaled* feature matrix, **the row itself included** (the query set is
    the training set, as in aif360).

    Parameters
    ----------
    features
        Float64 array of shape ``(n, d)``: one row per individual. aif360 uses every column
        except the label, score and weight columns, protected attributes included.
    labels
        Float64 array of shape ``(n,)``: the *raw* label values (aif360 does not map them to
        0/1; with labels {0, 1} the result does not depend on which label is favorable).
    n_neighbors
        Positive int ``k`` (default 5); ``k = 1`` always gives 1.0.

    Returns
    -------
    float
        In [0, 1] for 0/1 labels; 1 means every individual agrees with its neighbours.
        aif360 0.6.1 returns an ``ndarray`` of shape ``(1,)``; this returns the float inside it.

    Raises
    ------
    ImportError
        If scikit-learn is not installed (``pip install 'polfair[sklearn]'``).
    ValueError
        From scikit-learn if ``n_neighbors > n`` (``Expected n_neighbors <= n_samples_fit``), or
        if ``features`` / ``labels`` have mismatched lengths or contain NaN.

    Notes
    -----
    Reproduces aif360 0.6.1 ``BinaryLabelDatasetMetric.consistency`` bit for bit: neighbours from
    ``NearestNeighbors(n_neighbors=k, algorithm="ball_tree")`` (the ball tree decides which of
    several equidistant rows are taken), each neighbour mean with ``np.mean`` and the deviations
    accumulated *sequentially* (``np.cumsum``, the same additions in the same order as aif360's
    Python loop). Unweighted. Source: Zemel, Wu, Swersky, Pitassi & Dwork (2013), "Learning fair
    representations", ICML.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [0.1], [0.2], [5.0], [5.1], [5.2]])
    >>> y = np.array([1.0, 1.0, 0.0, 0.0, 0.0, 0.0])
    >>> round(consistency(X, y, n_neighbors=3), 6)
    0.777778
    """
    try:
        from sklearn.neighbors import NearestNeighbors
    except ImportError as exc:  # pragma: no cover - exercised only without scikit-learn
        msg = "consistency() needs scikit-learn: pip install 'polfair[sklearn]'"
        raise ImportError(msg) from exc
    X = np.asarray(features, dtype=np.float64)
    y = np.asarray(labels, dtype=np.float64).ravel()
    if X.ndim != 2 or X.shape[0] != y.shape[0]:
        msg = f"features must have shape (n, d) with n = len(labels) = {y.shape[0]}; got shape {X.shape}"
        raise ValueError(msg)
    nbrs = NearestNeighbors(n_neighbors=n_neighbors, algorithm="ball_tree")
    nbrs.fit(X)
    _, idx = nbrs.kneighbors(X)
    # np.mean over each row of y[idx] (k values) is the same reduction as aif360's np.mean(y[idx[i]])
    dev = np.abs(y - np.mean(y[idx], axis=1))
    total = np.cumsum(dev)[-1] if dev.size else 0.0  # sequential, like aif360's `c += ...`
    return float(1.0 - total / X.shape[0])


def _ols_fitted(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Fitted values of OLS with intercept, in the order of operations of sklearn's LinearRegression."""
    X = np.asfortranarray(X, dtype=np.float64)
    x_off = np.mean(X, axis=0)
    y_off = np.mean(y)
    coef = np.linalg.lstsq(X - x_off, y - y_off, rcond=1e-6)[0]  # sklearn: scipy lstsq(cond=tol=1e-6)
    intercept = y_off - x_off @ coef
    return X @ coef + intercept


def rich_subgroup(
    protected: np.ndarray, labels: np.ndarray, predictions: Any, fairness_def: str = "FP"
) -> float:
    r"""Rich subgroup fairness: weighted disparity of the most unfair linear subgroup (GerryFair audit).

    With ``S`` the rows with label 0 (``"FP"``) or label 1 (``"FN"``), ``p_i`` the prediction
    (``"FP"``) or ``1 − prediction`` (``"FN"``) and ``β = mean(p over S)``:

    .. math:: g_i = 1\left[\widehat{\mathrm{OLS}}_{X'_S}\!\left(\tfrac{p - \beta}{n}\right)(x_i) < 0\right],
       \quad w_+ = \left|\overline{p}_{g=1} - \beta\right| \cdot \frac{\sum g}{n}

    and ``w₋`` the same with target ``(β − p)/n`` giving members ``g⁻``; the value is
    ``max(w₋, w₊)`` (``w₋`` only when strictly greater).

    Parameters
    ----------
    protected
        Float64 array of shape ``(n, k)``: the protected-attribute columns (unscaled, uncentred).
    labels
        Float64 array of shape ``(n,)``: raw labels, assumed to be 0 ("negative") and 1, whatever
        the favorable label is (aif360's assumption).
    predictions
        Array-like of ``n`` hard labels (0/1) or scores in [0, 1]; shape ``(n,)`` or ``(n, 1)``.
    fairness_def
        ``"FP"`` (false-positive rates over rows with label 0) or ``"FN"`` (false-negative rates
        over rows with label 1).

    Returns
    -------
    float
        ``≥ 0``: |subgroup rate − overall rate| × (subgroup size / n); 0 means no linear
        subgroup of the protected attributes is treated differently.

    Raises
    ------
    ValueError
        ``fairness_def`` not ``"FP"``/``"FN"`` (aif360 raises a bare ``Exception`` with the same
        message: ``except Exception`` still catches it); no rows with the needed label (aif360
        fails inside the regression); ``predictions`` of the wrong length.

    Notes
    -----
    Reproduces aif360 0.6.1 ``BinaryLabelDatasetMetric.rich_subgroup`` (``gerryfair.Auditor``),
    **including its bug**: the rate of the negative-direction group is the mean of ``p`` over the
    *complement of the first group* (``g = 0``), not over ``g⁻`` (NaN if that complement is empty,
    which then never wins the comparison). ``n`` counts all rows, not ``|S|``. Unweighted.
    Fitted values come from NumPy least squares with the operation order of scikit-learn's
    ``LinearRegression`` (centre, ``lstsq`` with ``rcond = 1e-6``, add the intercept); a fitted
    value within rounding of exactly 0 can in principle fall on the other side than in aif360
    (``w₊`` is unaffected by that mathematically). Source: Kearns, Neel, Roth & Wu (2018),
    "Preventing fairness gerrymandering", ICML.

    Examples
    --------
    >>> import numpy as np
    >>> a = np.array([[0.0], [0.0], [0.0], [1.0], [1.0], [1.0]])
    >>> y = np.array([0.0, 0.0, 1.0, 0.0, 0.0, 1.0])
    >>> p = np.array([1.0, 1.0, 1.0, 0.0, 0.0, 1.0])
    >>> rich_subgroup(a, y, p, "FP")
    0.16666666666666666
    """
    if fairness_def not in ("FP", "FN"):
        msg = f"Invalid fairness metric specified: {fairness_def}. Please choose 'FP' or 'FN'."
        raise ValueError(msg)
    X = np.asarray(protected, dtype=np.float64)
    y = np.asarray(labels, dtype=np.float64).ravel()
    pred = np.asarray(predictions, dtype=np.float64)
    if pred.ndim == 2 and pred.shape[1] == 1:
        pred = pred[:, 0]
    if pred.ndim != 1 or pred.shape[0] != y.shape[0]:
        msg = (
            f"predictions must hold one value per row: expected {y.shape[0]} values (shape (n,) or "
            f"(n, 1)), got shape {np.shape(predictions)}"
        )
        raise ValueError(msg)
    n = float(y.shape[0])
    if fairness_def == "FP":
        subset = y == 0
        baseline = np.mean(pred[y == 0]) if subset.any() else np.float64(np.nan)
        p = pred[subset]
    else:
        subset = np.abs(1 - y) == 0
        baseline = np.mean(1 - pred[y == 1]) if (y == 1).any() else np.float64(np.nan)
        p = 1 - pred[subset]
    if not subset.any():
        want = 0 if fairness_def == "FP" else 1
        msg = (
            f"rich_subgroup(fairness_def={fairness_def!r}) needs rows with label {want}, found none: "
            "aif360 assumes raw labels 0 (negative) and 1; map the labels to 0/1 first"
        )
        raise ValueError(msg)
    Xs = X[subset]

    members = _ols_fitted(Xs, -1.0 / n * (baseline - p)) < 0.0
    rate = 0 if members.sum() == 0 else np.mean(p[members])
    w_pos = np.abs(rate - baseline) * (np.sum(members) * 1.0 / n)

    members_neg = _ols_fitted(Xs, -1.0 / n * (p - baseline)) < 0.0
    rate_neg: float
    if members_neg.sum() == 0:
        rate_neg = 0
    else:
        rest = p[~members]  # aif360's bug: the complement of the FIRST group
        rate_neg = np.mean(rest) if rest.size else np.float64(np.nan)
    w_neg = np.abs(rate_neg - baseline) * (np.sum(members_neg) * 1.0 / n)
    return float(w_neg if w_neg > w_pos else w_pos)
