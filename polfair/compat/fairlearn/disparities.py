"""fairlearn's named disparity functions: demographic parity, equalized odds, equal opportunity.

Each is a :func:`~polfair.compat.fairlearn.group_difference` or
:func:`~polfair.compat.fairlearn.group_ratio` of one rate (equalized odds: of two, combined by
``agg``), made by :func:`_disparity` from its row of :data:`_DISPARITIES`. Given column names or
expressions they return an aggregation expression; given data (as fairlearn takes it) a number.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl

from polfair.compat.fairlearn._inputs import Dual, accepts_data
from polfair.compat.fairlearn._rows import Agg, Method, SensitiveFeatures, check_choice, sensitive_exprs
from polfair.compat.fairlearn.group_aggregates import group_difference, group_ratio
from polfair.core._args import as_expr
from polfair.core._typing import IntoExpr
from polfair.core.metrics import rate
from polfair.exceptions import PolfairError

__all__ = [
    "demographic_parity_difference",
    "demographic_parity_ratio",
    "equal_opportunity_difference",
    "equal_opportunity_ratio",
    "equalized_odds_difference",
    "equalized_odds_ratio",
]


def _multiclass_dpd(
    y_true: IntoExpr, y_pred: IntoExpr, sf: list[pl.Expr], sample_weight: IntoExpr | None
) -> pl.Expr:
    """Ignite's DemographicParityDifference: per class max−min of group selection rates, max over classes."""
    yp = as_expr(y_pred, "y_pred")
    w = pl.lit(1.0) if sample_weight is None else as_expr(sample_weight, "sample_weight").cast(pl.Float64)
    valid = as_expr(y_true, "y_true").is_not_null() & yp.is_not_null() & w.is_not_null()
    vw = pl.when(valid).then(w)
    # per valid row: the share of its predicted class c within its group g, SR_gc
    share = rate(vw.sum().over([*sf, yp]), vw.sum().over(sf)).filter(valid)
    cls = yp.filter(valid)
    # Sort the valid rows by (class, share): each class is then one run, its first row holds
    # min_g SR_gc and its last row max_g SR_gc. (A window over the class would re-evaluate the
    # inner group windows inside each class, so the runs are found by sorting instead.)
    order = [cls, share]
    s, c = share.sort_by(order), cls.sort_by(order)
    first = (c != c.shift(1)).fill_null(True)
    last = (c != c.shift(-1)).fill_null(True)
    # groups predicting each class: new (class, group) pairs, counted per run
    new_pair = pl.struct([yp.alias("__pf_c"), *(f.alias(f"__pf_s{i}") for i, f in enumerate(sf))])
    runs = new_pair.filter(valid).is_first_distinct().sort_by(order).cast(pl.Int64).cum_sum().filter(last)
    groups_with_class = runs.diff().fill_null(runs.first())
    n_groups = pl.struct([f.alias(f"__pf_s{i}") for i, f in enumerate(sf)]).filter(valid).n_unique()
    # a group that never predicts the class has rate 0 for it
    low = pl.when(groups_with_class == n_groups).then(s.filter(first)).otherwise(0.0)
    per_class = s.filter(last) - low
    return pl.when(share.null_count() == 0).then(per_class.max())




def _combine(a: pl.Expr, b: pl.Expr, agg: str, worst: Callable[..., pl.Expr]) -> pl.Expr:
    both = a.is_not_null() & b.is_not_null()
    return pl.when(both).then(worst(a, b) if agg == "worst_case" else (a + b) / 2.0)


def _disparity_expr(
    name: str, metrics: tuple[str, ...], y_true: IntoExpr, y_pred: IntoExpr, sensitive_features: SensitiveFeatures,
    method: Method, sample_weight: IntoExpr | None, pos_label: Any, agg: Agg = "worst_case",
) -> pl.Expr:  # fmt: skip
    """``name``: the group difference (or ratio) of each metric, the two of equalized odds combined by ``agg``."""
    check_choice("method", method, ("between_groups", "to_overall"))
    check_choice("agg", agg, ("worst_case", "mean"))
    if pos_label is None and name == "demographic_parity_difference":
        if method != "between_groups":
            msg = "pos_label=None (every class compared) supports method='between_groups' only"
            raise PolfairError(msg)
        return _multiclass_dpd(y_true, y_pred, sensitive_exprs(sensitive_features), sample_weight).alias(name)
    aggregate = group_difference if name.endswith("_difference") else group_ratio
    kw = dict(sensitive_features=sensitive_features, method=method, sample_weight=sample_weight, pos_label=pos_label)
    parts = [aggregate(m, y_true, y_pred, **kw) for m in metrics]
    if len(parts) == 1:
        return parts[0].alias(name)
    worst = pl.max_horizontal if name.endswith("_difference") else pl.min_horizontal
    return _combine(parts[0], parts[1], agg, worst).alias(name)


_PARAMETERS = """
    Parameters
    ----------
    y_true, y_pred
        Column names or expressions of the true and predicted labels (see :func:`selection_rate`); or
        data, one value per row: lists, NumPy arrays, pandas or Polars Series.
    sensitive_features
        Column name, expression, or a sequence of them; or data: one value per row, or a 2-D array,
        DataFrame or dict of columns (one feature per column, as fairlearn's ``MetricFrame`` reads
        them). The groups are the observed combinations (intersections), a null value being its
        own group.
    method
        ``"between_groups"`` (default) or ``"to_overall"``.
    sample_weight
        Optional per-row weights: a column name or expression, or data.{agg}
    pos_label
        The positive label; default ``1``.{multiclass}"""

_AGG = """
    agg
        ``"worst_case"`` (default) or ``"mean"``."""


def _disparity(name: str, metrics: tuple[str, ...], text: dict[str, str]) -> Dual:
    """The public function ``name``, with its numpydoc page from ``text`` and the shared parameters."""
    def one(y_true: IntoExpr, y_pred: IntoExpr, *, sensitive_features: SensitiveFeatures,
            method: Method = "between_groups", sample_weight: IntoExpr | None = None,
            pos_label: Any = 1) -> pl.Expr:  # fmt: skip
        return _disparity_expr(name, metrics, y_true, y_pred, sensitive_features, method, sample_weight, pos_label)

    def two(y_true: IntoExpr, y_pred: IntoExpr, *, sensitive_features: SensitiveFeatures,
            method: Method = "between_groups", sample_weight: IntoExpr | None = None,
            agg: Agg = "worst_case", pos_label: Any = 1) -> pl.Expr:  # fmt: skip
        return _disparity_expr(name, metrics, y_true, y_pred, sensitive_features, method, sample_weight, pos_label, agg)

    build: Callable[..., pl.Expr] = one if len(metrics) == 1 else two
    multiclass = " ``None``: every class (``between_groups`` only)." if name == "demographic_parity_difference" else ""
    build.__name__ = build.__qualname__ = name
    build.__module__ = __name__
    build.__doc__ = f"""{text["title"]}

    {text["formula"]}
{_PARAMETERS.format(agg=_AGG if len(metrics) > 1 else "", multiclass=multiclass)}

    Returns
    -------
    pl.Expr or float
        With names or expressions: a Float64 aggregation named ``"{name}"``, {text["returns"]}
        With data: its value, a ``numpy.float64`` as fairlearn returns (NaN where undefined).

    Raises
    ------
    PolfairError
        Unknown ``method``{" or ``agg``" if len(metrics) > 1 else ""}, missing ``sensitive_features``,
        {text.get("pos_label", "``pos_label=None``")}; data of different lengths.
    TypeError
        A column argument is neither a name, an expression nor data, or names and data are mixed.

    Notes
    -----
    {text.get("notes", "Source: fairlearn 0.15.")}

    Examples
    --------
    >>> import polars as pl
    >>> import polfair.compat.fairlearn as pfx
{text["examples"]}
    """
    return accepts_data(build)


demographic_parity_difference = _disparity("demographic_parity_difference", ("selection_rate",), {
    "title": "Demographic parity difference: the largest gap in selection rate between groups.",
    "formula": """fairlearn's ``demographic_parity_difference``: ``max_g SR_g − min_g SR_g`` (``between_groups``)
    or ``max_g |SR_g − SR_overall|`` (``to_overall``), with ``SR = P(ŷ = pos_label)``.

    With ``pos_label=None`` every class is compared (multiclass, pytorch-ignite's
    ``DemographicParityDifference``): for each class ``c`` the gap ``max_g SR_gc − min_g SR_gc`` of the
    per-group rates ``SR_gc = P(ŷ = c | g)`` (0 for a group that never predicts ``c``), then the
    largest gap over the classes. For 0/1 predictions this equals the binary value.""",
    "returns": """in [0, 1]; 0 means equal
        selection rates. Null if a group has no valid row weight (zero total weight).""",
    "pos_label": "``method=\"to_overall\"`` with ``pos_label=None``",
    "notes": """``y_true`` only decides which rows are valid (a null label drops the row), as the other
    metrics; fairlearn ignores it. Source: fairlearn 0.15; ignite 0.5.4 for ``pos_label=None``.""",
    "examples": """    >>> df = pl.DataFrame({"y": [1, 0, 1, 0, 1, 1], "p": [1, 1, 0, 1, 0, 0],
    ...                    "sex": ["f", "f", "f", "m", "m", "m"], "model": ["a"] * 3 + ["b"] * 3})
    >>> df.select(pfx.demographic_parity_difference("y", "p", sensitive_features="sex")).item()
    0.333...
    >>> mc = pl.DataFrame({"y": [0, 1, 2, 0], "p": [0, 1, 0, 2], "g": ["a", "a", "b", "b"]})
    >>> mc.select(pfx.demographic_parity_difference("y", "p", sensitive_features="g", pos_label=None)).item()
    0.5
    >>> pfx.demographic_parity_difference([1, 0, 1, 0], [1, 1, 0, 1], sensitive_features=["a", "a", "b", "b"])
    np.float64(0.5)""",
})  # fmt: skip
demographic_parity_ratio = _disparity("demographic_parity_ratio", ("selection_rate",), {
    "title": "Demographic parity ratio: the smallest ratio of selection rates between groups.",
    "formula": """fairlearn's ``demographic_parity_ratio``: ``min_g SR_g / max_g SR_g`` (``between_groups``) or
    ``min_g min(SR_g/SR, SR/SR_g)`` against the overall rate ``SR`` (``to_overall``).""",
    "returns": """in [0, 1]; 1 means equal rates.
        Null when every group's selection rate is 0 (fairlearn: NaN).""",
    "examples": """    >>> df = pl.DataFrame({"y": [1, 0, 1, 0], "p": [1, 1, 0, 1], "g": ["a", "a", "b", "b"]})
    >>> df.select(pfx.demographic_parity_ratio("y", "p", sensitive_features="g")).item()
    0.5""",
})  # fmt: skip
equalized_odds_difference = _disparity("equalized_odds_difference", ("true_positive_rate", "false_positive_rate"), {
    "title": "Equalized odds difference: the larger (or mean) of the TPR and FPR group differences.",
    "formula": """fairlearn's ``equalized_odds_difference``: with ``D(m)`` the :func:`group_difference` of a
    metric, ``max(D(TPR), D(FPR))`` for ``agg="worst_case"``, ``(D(TPR) + D(FPR)) / 2`` for
    ``agg="mean"``.""",
    "returns": """in [0, 1]. Null when a group has
        no positives or no negatives (its TPR or FPR is undefined); fairlearn counts that rate as 0.""",
    "examples": """    >>> df = pl.DataFrame({"y": [1, 1, 0, 0, 1, 1, 0, 0], "p": [1, 1, 0, 1, 1, 0, 0, 0],
    ...                    "g": ["a"] * 4 + ["b"] * 4})
    >>> df.select(pfx.equalized_odds_difference("y", "p", sensitive_features="g")).item()
    0.5
    >>> df.select(pfx.equalized_odds_difference("y", "p", sensitive_features="g", agg="mean")).item()
    0.5
    >>> pfx.equalized_odds_difference(df["y"], df["p"], sensitive_features=df["g"])  # Series in, a number out
    np.float64(0.5)""",
})  # fmt: skip
equalized_odds_ratio = _disparity("equalized_odds_ratio", ("true_positive_rate", "false_positive_rate"), {
    "title": "Equalized odds ratio: the smaller (or mean) of the TPR and FPR group ratios.",
    "formula": """fairlearn's ``equalized_odds_ratio``: with ``R(m)`` the :func:`group_ratio` of a metric,
    ``min(R(TPR), R(FPR))`` for ``agg="worst_case"``, ``(R(TPR) + R(FPR)) / 2`` for ``agg="mean"``.""",
    "returns": """in [0, 1]. Null when a group's TPR or
        FPR is undefined or a divisor is 0 (fairlearn: 0.0 or NaN).""",
    "examples": """    >>> df = pl.DataFrame({"y": [1, 1, 0, 0, 1, 1, 0, 0], "p": [1, 1, 0, 1, 1, 0, 1, 0],
    ...                    "g": ["a"] * 4 + ["b"] * 4})
    >>> df.select(pfx.equalized_odds_ratio("y", "p", sensitive_features="g")).item()
    0.5""",
})  # fmt: skip
equal_opportunity_difference = _disparity("equal_opportunity_difference", ("true_positive_rate",), {
    "title": "Equal opportunity difference: the largest gap in true positive rate between groups.",
    "returns": """in [0, 1]. Null when a group
        has no positives (fairlearn counts its TPR as 0.0).""",
    "formula": """fairlearn's ``equal_opportunity_difference`` (since 0.11): :func:`group_difference` of
    ``true_positive_rate``. Unsigned, unlike aif360's (group − privileged) of the same name, which
    the report gives per group.""",
    "examples": """    >>> df = pl.DataFrame({"y": [1, 1, 1, 1], "p": [1, 0, 1, 1], "g": ["a", "a", "b", "b"]})
    >>> df.select(pfx.equal_opportunity_difference("y", "p", sensitive_features="g")).item()
    0.5""",
})  # fmt: skip
equal_opportunity_ratio = _disparity("equal_opportunity_ratio", ("true_positive_rate",), {
    "title": "Equal opportunity ratio: the smallest ratio of true positive rates between groups.",
    "formula": """fairlearn's ``equal_opportunity_ratio`` (since 0.11): :func:`group_ratio` of
    ``true_positive_rate``.""",
    "returns": """in [0, 1]. Null when a group has
        no positives or every group's TPR is 0 (fairlearn: 0.0 or NaN).""",
    "examples": """    >>> pfx.equal_opportunity_ratio([1, 1, 1, 1], [1, 0, 1, 1], sensitive_features=["a", "a", "b", "b"])
    np.float64(0.5)""",
})  # fmt: skip
