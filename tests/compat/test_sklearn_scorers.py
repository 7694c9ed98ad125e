"""polfair.compat.sklego scorers: naive NumPy references, scikit-lego itself, GridSearchCV, edge cases."""

from __future__ import annotations

import math
import warnings

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polfair.compat.sklego import correlation_score, equal_opportunity_score, p_percent_score, subset_score
from polfair.exceptions import PolfairError


class Fixed:
    """An 'estimator' whose predictions are fixed (row order of X)."""

    def __init__(self, y_hat):
        self.y_hat = np.asarray(y_hat)

    def predict(self, X):
        assert len(X) == len(self.y_hat)
        return self.y_hat


class Column:
    """Predicts the values of one column of X (works on subsets)."""

    def __init__(self, col):
        self.col = col

    def predict(self, X):
        if isinstance(X, np.ndarray):
            return X[:, self.col]
        return np.asarray(X[self.col])


# ---- naive references (definitions written out with NumPy; NaN where undefined) -------------


def ref_p_percent(z, y_hat, t=1):
    z, y_hat = np.asarray(z), np.asarray(y_hat)
    if (z == 1).sum() == 0 or (z == 0).sum() == 0:
        return math.nan
    r1, r0 = np.mean(y_hat[z == 1] == t), np.mean(y_hat[z == 0] == t)
    if r1 == 0 and r0 == 0:
        return math.nan
    if r1 == 0 or r0 == 0:
        return 0.0
    return min(r1 / r0, r0 / r1)


def ref_equal_opportunity(z, y, y_hat, t=1):
    z, y, y_hat = map(np.asarray, (z, y, y_hat))
    g1, g0 = (z == 1) & (y == t), (z == 0) & (y == t)
    if g1.sum() == 0 or g0.sum() == 0:
        return math.nan
    r1, r0 = np.mean(y_hat[g1] == t), np.mean(y_hat[g0] == t)
    if r1 == 0 and r0 == 0:
        return math.nan
    if r1 == 0 or r0 == 0:
        return 0.0
    return min(r1 / r0, r0 / r1)


def same(a, b):
    return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, rel=1e-12, abs=1e-12)


def quiet(f, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*args)


rows = st.integers(min_value=1, max_value=40).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(0, 1), min_size=n, max_size=n),
        st.lists(st.integers(0, 1), min_size=n, max_size=n),
        st.lists(st.integers(0, 1), min_size=n, max_size=n),
    )
)


@settings(max_examples=80, deadline=None)
@given(rows)
def test_p_percent_and_equal_opportunity_match_reference(data):
    z, y, y_hat = (np.array(v) for v in data)
    X = z.reshape(-1, 1)
    est = Fixed(y_hat)
    assert same(quiet(p_percent_score(0), est, X, y), ref_p_percent(z, y_hat))
    assert same(quiet(equal_opportunity_score(0), est, X, y), ref_equal_opportunity(z, y, y_hat))


@settings(max_examples=80, deadline=None)
@given(rows)
def test_scorers_equal_scikit_lego_on_defined_cases(data):
    sk = pytest.importorskip("sklego.metrics")
    z, y, y_hat = (np.array(v) for v in data)
    X = z.reshape(-1, 1)
    est = Fixed(y_hat)
    for ours, theirs, _args in (
        (p_percent_score(0), sk.p_percent_score(0), ()),
        (equal_opportunity_score(0), sk.equal_opportunity_score(0), ()),
    ):
        a, b = quiet(ours, est, X, y), quiet(theirs, est, X, y)
        if math.isnan(a):
            # undefined here; scikit-lego returns an arbitrary 0 or 1 instead
            assert b in (0, 1)
        else:
            assert a == pytest.approx(float(b), rel=1e-12, abs=1e-12)


def test_undefined_cases_are_nan_with_a_warning_where_sklego_returns_0_or_1():
    sk = pytest.importorskip("sklego.metrics")
    X = np.array([[1], [1], [0], [0]])
    cases = [
        # (y_hat, y, scorer factory, sklego factory, sklego's arbitrary value)
        ([0, 0, 0, 0], [1, 1, 1, 1], p_percent_score, sk.p_percent_score, 0),  # both rates 0
        ([1, 0, 0, 1], [0, 1, 1, 0], equal_opportunity_score, sk.equal_opportunity_score, 1),  # both TPR 0
        ([1, 1, 1, 0], [1, 1, 0, 0], equal_opportunity_score, sk.equal_opportunity_score, 0),  # z=0 no y=1
    ]
    for y_hat, y, ours, theirs, sk_value in cases:
        with pytest.warns(RuntimeWarning, match="undefined"):
            assert math.isnan(ours(0)(Fixed(y_hat), X, np.array(y)))
        assert quiet(theirs(0), Fixed(y_hat), X, np.array(y)) == sk_value
    # one group empty: scikit-lego says 1 ("perfectly fair"), we say NaN
    X1 = np.array([[1], [1], [1]])
    with pytest.warns(RuntimeWarning, match="column|== 0"):
        assert math.isnan(p_percent_score(0)(Fixed([1, 0, 1]), X1))
    assert quiet(sk.p_percent_score(0), Fixed([1, 0, 1]), X1) == 1


def test_one_zero_rate_is_zero_not_nan():
    X = np.array([[1], [1], [0], [0]])
    assert p_percent_score(0)(Fixed([0, 0, 1, 0]), X) == 0.0
    assert equal_opportunity_score(0)(Fixed([0, 0, 1, 0]), X, np.array([1, 1, 1, 1])) == 0.0


def test_pandas_polars_numpy_inputs_agree():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    n = 200
    z = rng.integers(0, 2, n)
    y = rng.integers(0, 2, n)
    y_hat = (rng.random(n) < 0.3 + 0.3 * z).astype(int)
    f = rng.normal(size=n) + z
    arr = np.column_stack([f, z])
    pdf = pd.DataFrame({"f": f, "z": z})
    plf = pl.DataFrame({"f": f, "z": z})
    est = Fixed(y_hat)
    expected = ref_p_percent(z, y_hat)
    assert p_percent_score(1)(est, arr) == pytest.approx(expected)
    assert p_percent_score("z")(est, pdf) == pytest.approx(expected)
    assert p_percent_score("z")(est, plf) == pytest.approx(expected)
    assert p_percent_score(1)(est, plf) == pytest.approx(expected)  # position in a Polars frame
    eo = ref_equal_opportunity(z, y, y_hat)
    for X, col in ((arr, 1), (pdf, "z"), (plf, "z")):
        for yy in (y, pd.Series(y), pl.Series(y)):
            assert equal_opportunity_score(col)(est, X, yy) == pytest.approx(eo)
    # booleans and 0.0/1.0 floats are indicators too
    assert p_percent_score("z")(est, plf.with_columns(pl.col("z").cast(pl.Boolean))) == pytest.approx(expected)
    assert p_percent_score("z")(est, pdf.astype({"z": float})) == pytest.approx(expected)


def test_string_labels_and_positive_target():
    X = np.array([[1], [1], [0], [0], [0]])
    y_hat = np.array(["yes", "no", "yes", "yes", "no"])
    y = np.array(["yes", "yes", "yes", "yes", "no"])
    got = p_percent_score(0, positive_target="yes")(Fixed(y_hat), X)
    assert got == pytest.approx(ref_p_percent(X[:, 0], y_hat, "yes"))
    got = equal_opportunity_score(0, positive_target="yes")(Fixed(y_hat), X, y)
    assert got == pytest.approx(ref_equal_opportunity(X[:, 0], y, y_hat, "yes"))
    # positive_target other than 1 on multiclass labels: every other label is "not positive"
    y3 = np.array([2, 0, 2, 1, 2])
    p3 = np.array([2, 2, 1, 2, 0])
    assert equal_opportunity_score(0, positive_target=2)(Fixed(p3), X, y3) == pytest.approx(
        ref_equal_opportunity(X[:, 0], y3, p3, 2)
    )


def test_errors_name_the_column_and_fix():
    X = np.array([[0], [2], [1]])
    with pytest.raises(ValueError, match=r"binary indicator.*found values \[0, 1, 2\]"):
        p_percent_score(0)(Fixed([1, 0, 1]), X)
    with pytest.raises(PolfairError, match="'sex' is not in X"):
        p_percent_score("sex")(Fixed([1, 0]), pl.DataFrame({"z": [0, 1]}))
    with pytest.raises(PolfairError, match="binary indicator"):
        p_percent_score("z")(Fixed([1, 0]), pl.DataFrame({"z": [None, 1]}))
    with pytest.raises(PolfairError, match="binary indicator"):
        p_percent_score("z")(Fixed([1, 0]), pl.DataFrame({"z": ["a", "b"]}))
    with pytest.raises(PolfairError, match="needs y_true"):
        equal_opportunity_score(0)(Fixed([1, 0]), np.array([[0], [1]]))


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.floats(-100, 100), st.floats(-100, 100)), min_size=3, max_size=30))
def test_correlation_matches_numpy_and_sklego(pairs):
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    X = b.reshape(-1, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = -abs(np.corrcoef(a, b)[1, 0])
    got = quiet(correlation_score(0), Fixed(a), X)
    if np.std(a) < 1e-9 or np.std(b) < 1e-9:
        return  # degenerate: NumPy and Polars may disagree on near-constant data (tested below exactly)
    assert got == pytest.approx(ref, rel=1e-9, abs=1e-9)
    try:
        sk = __import__("sklego.metrics", fromlist=["correlation_score"])
    except ImportError:
        return
    assert got == pytest.approx(quiet(sk.correlation_score(0), Fixed(a), X), rel=1e-9, abs=1e-9)


def test_correlation_constant_is_nan_and_named_columns():
    X = pl.DataFrame({"a": [1.0, 2.0, 3.0], "z": [True, False, True]})
    assert math.isnan(correlation_score("a")(Fixed([1, 1, 1]), X))
    assert correlation_score("z")(Fixed([1, 0, 1]), X) == pytest.approx(-1.0)
    with pytest.raises(PolfairError, match="numeric or boolean"):
        correlation_score("s")(Fixed([1, 0]), pl.DataFrame({"s": ["a", "b"]}))


def test_subset_score_matches_sklego_and_handles_empty():
    skm = pytest.importorskip("sklearn.metrics")
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(1)
    n = 120
    df = pd.DataFrame({"g": rng.choice(["a", "b"], n), "p": rng.integers(0, 2, n)})
    y = pd.Series(rng.integers(0, 2, n))
    est = Column("p")
    pick = lambda X, y: X["g"] == "a"  # noqa: E731
    ours = subset_score(pick, skm.accuracy_score)(est, df, y)
    m = (df["g"] == "a").to_numpy()
    assert ours == pytest.approx(skm.accuracy_score(y[m], df["p"][m]))
    try:
        from sklego.metrics import subset_score as sk_subset

        assert ours == pytest.approx(sk_subset(pick, skm.accuracy_score)(est, df, y))
    except ImportError:
        pass
    # a polfair metric name: computed from the subset's confusion counts
    rec = subset_score(pick, "recall")(est, df, y)
    assert rec == pytest.approx(skm.recall_score(y[m], df["p"][m]))
    # Polars X and y, with a Polars mask
    plx, ply = pl.from_pandas(df), pl.Series(y.to_numpy())
    assert subset_score(lambda X, y: X["g"] == "a", skm.accuracy_score)(est, plx, ply) == pytest.approx(ours)
    # empty subset: NaN + warning, as scikit-lego
    with pytest.warns(RuntimeWarning, match="No samples in subset"):
        assert math.isnan(subset_score(lambda X, y: X["g"] == "zzz", skm.accuracy_score)(est, df, y))
    # undefined metric on a non-empty subset: NaN, not 0
    assert math.isnan(subset_score(lambda X, y: np.ones(len(X), bool), "recall")(Fixed([0, 0]), np.zeros((2, 1)), np.zeros(2)))
    with pytest.raises(PolfairError, match="1-dimensional"):
        subset_score(lambda X, y: np.ones((len(X), 2), bool), skm.accuracy_score)(est, df, y)
    with pytest.raises(PolfairError, match="not a polfair metric"):
        subset_score(pick, "recal")


def test_gridsearchcv_with_pandas_and_polars_x():
    pytest.importorskip("sklearn")
    pd = pytest.importorskip("pandas")
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GridSearchCV

    rng = np.random.default_rng(2)
    n = 400
    z = rng.integers(0, 2, n)
    x1 = rng.normal(size=n) + 0.8 * z
    y = (x1 + rng.normal(size=n) > 0.4).astype(int)
    pdf = pd.DataFrame({"x1": x1, "z": z})
    grid = {"C": [0.01, 1.0]}
    scoring = {"p": p_percent_score("z"), "eo": equal_opportunity_score("z"), "corr": correlation_score("z"),
               "acc": "accuracy"}  # fmt: skip
    gs = GridSearchCV(LogisticRegression(), grid, scoring=scoring, refit="acc", cv=3).fit(pdf, y)
    p_scores = gs.cv_results_["mean_test_p"]
    assert np.all((p_scores >= 0) & (p_scores <= 1))
    assert np.all(gs.cv_results_["mean_test_corr"] <= 0)
    # the scorer on a fitted model equals the reference definition
    model = LogisticRegression(C=1.0).fit(pdf, y)
    assert p_percent_score("z")(model, pdf, y) == pytest.approx(ref_p_percent(z, model.predict(pdf)))
    # Polars X: the same numbers as pandas X
    plf = pl.from_pandas(pdf)
    gs2 = GridSearchCV(LogisticRegression(), grid, scoring=scoring, refit="acc", cv=3).fit(plf, y)
    np.testing.assert_allclose(gs2.cv_results_["mean_test_p"], p_scores)
    try:
        import sklego.metrics as sk
    except ImportError:
        return
    gs3 = GridSearchCV(LogisticRegression(), grid, scoring={"p": sk.p_percent_score("z")}, refit="p", cv=3).fit(pdf, y)
    np.testing.assert_allclose(gs3.cv_results_["mean_test_p"], p_scores)


def test_module_imports_without_sklearn_and_scorer_needs_only_predict():
    # the scorer never imports scikit-learn: a plain object with .predict is enough
    X = pl.DataFrame({"z": [0, 1, 0, 1]})
    assert p_percent_score("z")(Fixed([1, 1, 0, 1]), X) == pytest.approx(0.5)
