"""The fairlearn-named functions take what fairlearn takes (lists, arrays, pandas/Polars Series; 2-D
arrays, DataFrames and dicts of sensitive features) and return what fairlearn returns, on real data
(COMPAS, Adult with its survey weights) against fairlearn 0.15 and scikit-learn themselves."""

from __future__ import annotations

import math
import warnings

import numpy as np
import polars as pl
import pytest

import polfair as pf
import polfair.compat.fairlearn as pfx
from polfair.exceptions import PolfairError

fm = pytest.importorskip("fairlearn.metrics")
pd = pytest.importorskip("pandas")
skm = pytest.importorskip("sklearn.metrics")


def _compas() -> pl.DataFrame:
    df = pf.load_compas()
    return df.select(y="two_year_recid", p=(pl.col("decile_score") >= 5).cast(pl.Int64), race=pl.col("race").cast(pl.String),
                     sex=pl.col("sex").cast(pl.String), age=pl.col("age_cat").cast(pl.String))  # fmt: skip


def _adult() -> pl.DataFrame:
    # a rule as the "classifier" (degree or more), the census survey weights as sample weights; a seeded
    # sample of 4,000 of the 48,842 rows keeps fairlearn's own run short
    df = pf.load_adult().sample(4_000, seed=7)
    return df.select(y=pl.col("income_gt_50k").cast(pl.Int64), p=(pl.col("education_num") >= 13).cast(pl.Int64),
                     sex=pl.col("sex").cast(pl.String), race=pl.col("race").cast(pl.String),
                     w=pl.col("fnlwgt").cast(pl.Float64))  # fmt: skip


COMPAS = _compas()
ADULT = _adult()

KINDS = {
    "list": lambda s: s.to_list(),
    "numpy": lambda s: s.to_numpy(),
    "pandas": lambda s: s.to_pandas(),
    "polars": lambda s: s,
}


def _same(ours: float, theirs: float | None) -> bool:
    """Equal numbers; NaN (data in) equals NaN or a null (an expression on a frame)."""
    if theirs is None or math.isnan(theirs):
        return math.isnan(ours)
    return math.isclose(ours, theirs, rel_tol=1e-9, abs_tol=1e-12)


RATES = ["selection_rate", "true_positive_rate", "true_negative_rate", "false_positive_rate", "false_negative_rate"]


@pytest.mark.parametrize("kind", list(KINDS))
def test_rates_on_data_equal_fairlearn(kind: str) -> None:
    conv = KINDS[kind]
    for df, weighted in ((COMPAS, False), (ADULT, True)):
        y, p = conv(df["y"]), conv(df["p"])
        sw = conv(df["w"]) if weighted else None
        for name in RATES:
            theirs = getattr(fm, name)(y, p, sample_weight=sw)
            ours = getattr(pfx, name)(y, p, sample_weight=sw)
            assert type(ours) is np.float64, (name, type(ours))
            assert _same(ours, float(theirs)), (name, kind, ours, theirs)
            # the same number as the expression on the frame
            assert _same(ours, df.select(getattr(pfx, name)("y", "p", sample_weight="w" if weighted else None)).item())
        # the rates fairlearn leaves to scikit-learn
        assert _same(pfx.accuracy(y, p, sample_weight=sw), skm.accuracy_score(y, p, sample_weight=sw))
        assert _same(pfx.error_rate(y, p, sample_weight=sw), skm.zero_one_loss(y, p, sample_weight=sw))
        assert _same(pfx.positive_predictive_value(y, p, sample_weight=sw), skm.precision_score(y, p, sample_weight=sw))
        assert _same(pfx.metric("recall", y, p, sample_weight=sw), skm.recall_score(y, p, sample_weight=sw))


DISPARITIES = [
    ("demographic_parity_difference", {}),
    ("demographic_parity_ratio", {}),
    ("equalized_odds_difference", {"agg": "worst_case"}),
    ("equalized_odds_ratio", {"agg": "mean"}),
    ("equal_opportunity_difference", {}),
    ("equal_opportunity_ratio", {}),
]


def _features(df: pl.DataFrame, cols: list[str], form: str):
    """The sensitive features in each form fairlearn's MetricFrame reads."""
    if len(cols) == 1:
        return KINDS[form](df[cols[0]]) if form in KINDS else None
    return {
        "pandas_frame": lambda: df.select(cols).to_pandas(),
        "polars_frame": lambda: df.select(cols),
        "dict": lambda: {c: df[c].to_numpy() for c in cols},
        "array_2d": lambda: df.select(cols).to_numpy(),
    }[form]()


def _every_group_has_both_labels(df: pl.DataFrame, cols: list[str]) -> bool:
    counts = df.group_by(cols).agg(pos=pl.col("y").sum(), neg=(1 - pl.col("y")).sum())
    return counts["pos"].min() > 0 and counts["neg"].min() > 0


CASES = [
    (COMPAS, ["race"], "list", False),
    (COMPAS, ["race"], "pandas", False),
    (COMPAS, ["sex", "age"], "pandas_frame", False),
    (COMPAS, ["sex", "age"], "array_2d", False),
    (ADULT, ["sex"], "numpy", True),
    (ADULT, ["sex"], "polars", True),
    (ADULT, ["sex", "race"], "dict", True),
    (ADULT, ["sex", "race"], "polars_frame", True),
]


@pytest.mark.parametrize(("df", "cols", "form", "weighted"), CASES,
                         ids=[f"{'compas' if c[0] is COMPAS else 'adult'}-{'+'.join(c[1])}-{c[2]}" for c in CASES])
def test_disparities_on_data_equal_fairlearn(df: pl.DataFrame, cols: list[str], form: str, weighted: bool) -> None:
    kind = form if form in KINDS else "numpy"
    y, p = KINDS[kind](df["y"]), KINDS[kind](df["p"])
    sw = KINDS[kind](df["w"]) if weighted else None
    sf = _features(df, cols, form)
    theirs_sf = sf.to_pandas() if isinstance(sf, pl.DataFrame) else sf  # fairlearn reads pandas frames
    for name, kw in DISPARITIES:
        for method in ("between_groups", "to_overall"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                theirs = getattr(fm, name)(y, p, sensitive_features=theirs_sf, method=method, sample_weight=sw, **kw)
            ours = getattr(pfx, name)(y, p, sensitive_features=sf, method=method, sample_weight=sw, **kw)
            assert isinstance(ours, np.float64)
            if name.startswith("equal") and not _every_group_has_both_labels(df, cols):
                # a group without positives (or negatives): its TPR (FPR) is undefined, fairlearn counts it as 0
                assert math.isnan(ours), (name, method, ours)
            else:
                assert _same(ours, float(theirs)), (name, method, form, ours, theirs)
            e = getattr(pfx, name)("y", "p", sensitive_features=cols, method=method,
                                   sample_weight="w" if weighted else None, **kw)  # fmt: skip
            assert _same(ours, df.select(e).item())


def test_group_aggregates_on_data_equal_metricframe() -> None:
    y, p, sf, sw = ADULT["y"].to_numpy(), ADULT["p"].to_numpy(), ADULT.select("sex").to_pandas(), ADULT["w"]
    mf = fm.MetricFrame(metrics=fm.true_positive_rate, y_true=y, y_pred=p, sensitive_features=sf,
                        sample_params={"sample_weight": sw.to_numpy()})  # fmt: skip
    kw = dict(sensitive_features=sf, sample_weight=sw.to_pandas())
    assert _same(pfx.group_min("recall", y, p, **kw), mf.group_min())
    assert _same(pfx.group_max("true_positive_rate", y, p, **kw), mf.group_max())
    for method in ("between_groups", "to_overall"):
        assert _same(pfx.group_difference("recall", y, p, method=method, **kw), mf.difference(method=method))
        assert _same(pfx.group_ratio("recall", y, p, method=method, **kw), mf.ratio(method=method))


def test_names_still_give_expressions_and_data_gives_numbers() -> None:
    assert isinstance(pfx.selection_rate("y", "p"), pl.Expr)
    assert isinstance(pfx.demographic_parity_difference(pl.col("y"), "p", sensitive_features=["race", "sex"]), pl.Expr)
    assert isinstance(pf.equalized_odds_difference([1, 0], [1, 1], sensitive_features=["a", "b"]), np.float64)
    # a list of strings is a list of column names next to names, a list of group labels next to data
    expr = pfx.demographic_parity_difference("y", "p", sensitive_features=["race", "sex"])
    assert COMPAS.select(expr).item() == pfx.demographic_parity_difference(
        COMPAS["y"], COMPAS["p"], sensitive_features=COMPAS.select("race", "sex"))


def test_undefined_is_nan_on_data_where_the_expression_gives_null() -> None:
    # group "b" has no positives: its TPR is undefined (fairlearn says 0.0)
    y, p, g = [1, 1, 0, 0, 0, 0], [1, 0, 1, 0, 1, 0], ["a"] * 4 + ["b"] * 2
    assert math.isnan(pfx.equal_opportunity_difference(y, p, sensitive_features=g))
    assert math.isnan(pfx.true_positive_rate([0, 0], [1, 0]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert fm.equal_opportunity_difference(y, p, sensitive_features=g) == 0.5


def test_nan_and_none_in_data_are_missing_rows() -> None:
    y = np.array([1.0, 0.0, np.nan, 1.0])
    p = pd.Series([1, 1, 0, None], dtype="Int64")
    # rows 3 and 4 have a missing label or prediction: left out, as a null is in a frame
    assert pfx.selection_rate(y, p) == 1.0
    assert pfx.selection_rate(y, p) == pl.DataFrame({"y": [1, 0, None, 1], "p": [1, 1, 0, None]}).select(
        pfx.selection_rate("y", "p")).item()


def test_multiclass_dpd_on_data() -> None:
    ours = pfx.demographic_parity_difference(np.array([0, 1, 2, 0]), np.array([0, 1, 0, 2]),
                                             sensitive_features=np.array(["a", "a", "b", "b"]), pos_label=None)  # fmt: skip
    assert ours == 0.5


BIG = pl.Series("y", np.arange(100_000) % 2)


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: pfx.selection_rate("y", BIG), TypeError, r"y_pred must be a column name .* got a polars Series of 100,000"),
        (lambda: pfx.selection_rate(BIG, "p"), TypeError, r"y_pred is a column name or expression, but y_true is data"),
        (lambda: pfx.selection_rate("y", "p", sample_weight=BIG.to_pandas()), TypeError,
         r"sample_weight must be a column name .* got a pandas Series of 100,000 values \(dtype int64\)"),
        (lambda: pfx.demographic_parity_difference(BIG, BIG, sensitive_features="sex"), TypeError,
         r"sensitive_features is a column name or expression, but y_true and y_pred are data"),
        (lambda: pfx.demographic_parity_difference("y", "p", sensitive_features=BIG.to_numpy()), TypeError,
         r"got a numpy ndarray of 100,000 values \(dtype int64\)"),
        (lambda: pfx.selection_rate(BIG, BIG[:10]), PolfairError, r"y_pred has 10 values and y_true 100,000"),
        (lambda: pfx.demographic_parity_difference(BIG, BIG, sensitive_features=BIG[:5].to_list()), PolfairError,
         r"sensitive_feature_0 has 5 values"),
        (lambda: pfx.selection_rate(np.zeros((3, 2)), np.zeros((3, 2))), PolfairError,
         r"y_true must hold one value per row \(1-D\); got a numpy ndarray of shape 3×2"),
        (lambda: pfx.demographic_parity_difference([1, 0], [1, 0], sensitive_features=[[1, 2], [3, 4]]), PolfairError,
         r"a list holds one group label per row"),
        (lambda: pfx.selection_rate([1, 0], 3), PolfairError, r"y_pred has 1 values and y_true 2"),  # a scalar is one row
        (lambda: pfx.selection_rate([1, 0], {"a": 1}), PolfairError, r"y_pred must be data .* got a dict"),
        (lambda: pfx.selection_rate([[1], [0]], [1, 0]), PolfairError, r"y_true must hold one scalar per row"),
    ],
)
def test_errors_describe_values_without_printing_them(call, error, match) -> None:
    with pytest.raises(error, match=match) as info:
        call()
    text = str(info.value)
    assert len(text) < 400, text
    assert "0, 1, 0" not in text and "shape: (" not in text  # no values, no frame repr
