"""polfair.MetricFrame against fairlearn's MetricFrame (0.15) and against a naive reference.

* differential: real data (COMPAS; Adult with its survey weights) through both classes, every
  result compared (types, index, values);
* property tests (hypothesis): random labels, groups and weights, hostile cases (one-label groups,
  empty combinations, string and boolean labels), polfair against a naive reference that calls
  scikit-learn on each group's rows;
* containers: lists, NumPy, pandas (nullable, pyarrow-backed), Polars, pyarrow, all the same numbers;
* the two paths (cell table / per group), the bootstrap (law, reproducibility, shared draws), the
  analytic intervals (the core's kernels), the Polars output, fairlearn's errors.
"""

from __future__ import annotations

import functools
import math
import warnings
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import polfair as pf
from polfair.core.intervals.common import z_values
from polfair.core.intervals.proportions import wilson_limits
from polfair.exceptions import PolfairError

fm = pytest.importorskip("fairlearn.metrics")
pd = pytest.importorskip("pandas")
skm = pytest.importorskip("sklearn.metrics")
pa = pytest.importorskip("pyarrow")

COMPAS = pf.load_compas().select(
    y="two_year_recid", p=(pl.col("decile_score") >= 5).cast(pl.Int64), score=pl.col("decile_score") / 10.0,
    race=pl.col("race").cast(pl.String), sex=pl.col("sex").cast(pl.String), age=pl.col("age_cat").cast(pl.String),
)  # fmt: skip

# Adult with its survey weights as sample weights, a rule (degree or more) as the classifier
ADULT = pf.load_adult().sample(3_000, seed=11).with_columns(pl.col("sex", "race").cast(pl.String))

CLASSIFIERS = {
    "accuracy": skm.accuracy_score,
    "recall": skm.recall_score,
    "precision": functools.partial(skm.precision_score, zero_division=0),
    "f1": skm.f1_score,
    "f2": functools.partial(skm.fbeta_score, beta=2.0),
    "balanced": skm.balanced_accuracy_score,
    "zero_one": skm.zero_one_loss,
    "selection_rate": fm.selection_rate,
    "tpr": fm.true_positive_rate,
    "fpr": fm.false_positive_rate,
    "tnr": fm.true_negative_rate,
    "fnr": fm.false_negative_rate,
    "count": fm.count,
}
REGRESSORS = {
    "mae": skm.mean_absolute_error,
    "mse": skm.mean_squared_error,
    "rmse": skm.root_mean_squared_error,
    "r2": skm.r2_score,
    "mean_prediction": fm.mean_prediction,
}


def _values_equal(a: Any, b: Any) -> None:
    if isinstance(a, (pd.Series, pd.DataFrame)):
        assert type(a) is type(b)
        assert list(a.index) == list(b.index)
        assert a.index.names == b.index.names
        if isinstance(a, pd.DataFrame):
            assert list(a.columns) == list(b.columns)
        x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    else:
        assert isinstance(a, float) == isinstance(b, float), (type(a), type(b))
        x, y = np.float64(a), np.float64(b)
    np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-15, equal_nan=True)


def _same_frames(ours: pf.MetricFrame, theirs: Any) -> None:
    """Every result of the two MetricFrames: same types, index and values."""
    _values_equal(ours.overall, theirs.overall)
    _values_equal(ours.by_group, theirs.by_group)
    for name in ("group_min", "group_max"):
        _values_equal(getattr(ours, name)(), getattr(theirs, name)())
    for name in ("difference", "ratio"):
        for method in ("between_groups", "to_overall"):
            a, b = getattr(ours, name)(method=method), getattr(theirs, name)(method=method)
            if isinstance(b, pd.DataFrame):  # fairlearn's ratio(to_overall) with control features sorts the columns
                b = b[list(a.columns)]
            _values_equal(a, b)
    assert ours.control_levels == theirs.control_levels
    assert ours.sensitive_levels == theirs.sensitive_levels


def _both(**kwargs: Any) -> tuple[pf.MetricFrame, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the peers' own warnings (single-label groups, ill-defined values)
        return pf.MetricFrame(**kwargs), fm.MetricFrame(**kwargs)


@pytest.mark.parametrize("control", [False, True])
@pytest.mark.parametrize("several", [False, True])
def test_compas_every_result_equals_fairlearn(control: bool, several: bool) -> None:
    sf = COMPAS.select("race", "age").to_pandas() if several else COMPAS["race"].to_numpy()
    cf = {"sex": COMPAS["sex"].to_numpy()} if control else None
    ours, theirs = _both(metrics=CLASSIFIERS, y_true=COMPAS["y"].to_numpy(), y_pred=COMPAS["p"].to_numpy(),
                         sensitive_features=sf, control_features=cf)  # fmt: skip
    assert set(ours.metric_paths.values()) == {"cell_table"}, ours.fallback_reasons
    _same_frames(ours, theirs)


def test_compas_regression_metrics_equal_fairlearn() -> None:
    ours, theirs = _both(metrics=REGRESSORS, y_true=COMPAS["y"].to_numpy(), y_pred=COMPAS["score"].to_numpy(),
                         sensitive_features=COMPAS["race"].to_numpy(), control_features=COMPAS["sex"].to_numpy())  # fmt: skip
    assert set(ours.metric_paths.values()) == {"cell_table"}, ours.fallback_reasons
    # r2 from moments about a shift (the core's regression cells): the same to the last bits or so
    np.testing.assert_allclose(ours.by_group.to_numpy(), theirs.by_group.to_numpy(), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(ours.overall.to_numpy(), theirs.overall.to_numpy(), rtol=1e-10, atol=1e-14)
    for name in ("difference", "ratio"):
        for method in ("between_groups", "to_overall"):
            a, b = getattr(ours, name)(method=method), getattr(theirs, name)(method=method)
            np.testing.assert_allclose(a.to_numpy(), b[list(a.columns)].to_numpy(), rtol=1e-9, atol=1e-12)


def test_adult_survey_weights_equal_fairlearn() -> None:
    weighted = {k: CLASSIFIERS[k] for k in ("accuracy", "recall", "precision", "f1", "balanced", "selection_rate", "tpr", "fpr")}
    params = {k: {"sample_weight": ADULT["fnlwgt"].cast(pl.Float64).to_numpy()} for k in weighted}
    y, p = ADULT["income_gt_50k"].cast(pl.Int64).to_numpy(), (ADULT["education_num"] >= 13).cast(pl.Int64).to_numpy()
    ours, theirs = _both(metrics=weighted, y_true=y, y_pred=p, sensitive_features=ADULT.select("sex", "race").to_pandas(),
                         sample_params=params)  # fmt: skip
    assert set(ours.metric_paths.values()) == {"cell_table"}
    # weighted sums are added in another order than scikit-learn's: the last bits may differ
    np.testing.assert_allclose(ours.by_group.to_numpy(), theirs.by_group.to_numpy(), rtol=1e-10, equal_nan=True)
    np.testing.assert_allclose(ours.difference().to_numpy(), theirs.difference().to_numpy(), rtol=1e-9)


def test_partials_and_labels_follow_the_peer() -> None:
    y, p = COMPAS["y"].to_numpy(), COMPAS["p"].to_numpy()
    ys, ps = np.where(y == 1, "yes", "no"), np.where(p == 1, "yes", "no")
    metrics = {
        "recall_0": functools.partial(skm.recall_score, pos_label=0),
        "precision_nan": functools.partial(skm.precision_score, zero_division=np.nan),
        "sr_0": functools.partial(fm.selection_rate, pos_label=0),
        "tpr_0": functools.partial(fm.true_positive_rate, pos_label=0),
        "acc_count": functools.partial(skm.accuracy_score, normalize=False),
        "bal_adj": functools.partial(skm.balanced_accuracy_score, adjusted=True),
    }
    _same_frames(*_both(metrics=metrics, y_true=y, y_pred=p, sensitive_features=COMPAS["race"].to_numpy()))
    strings = {"recall": functools.partial(skm.recall_score, pos_label="yes"),
               "sr": functools.partial(fm.selection_rate, pos_label="yes")}  # fmt: skip
    ours, theirs = _both(metrics=strings, y_true=ys, y_pred=ps, sensitive_features=COMPAS["race"].to_numpy())
    assert set(ours.metric_paths.values()) == {"cell_table"}
    _same_frames(ours, theirs)


def test_zero_division_warns_as_scikit_learn() -> None:
    y, p, g = [1, 1, 0, 0], [1, 0, 0, 0], ["a", "a", "b", "b"]  # group b: no positives, no predicted positives
    with pytest.warns(Warning, match="Recall is ill-defined"):
        mf = pf.MetricFrame(metrics=skm.recall_score, y_true=y, y_pred=p, sensitive_features=g)
    assert mf.metric_paths == {"recall_score": "cell_table"}
    assert mf.by_group.tolist() == [0.5, 0.0]


def test_other_callables_are_called_per_group() -> None:
    def my_metric(y_true: np.ndarray, y_pred: np.ndarray) -> float:
        return float(np.mean(y_true == y_pred))

    metrics = {"mine": my_metric, "cm": skm.confusion_matrix, "acc": skm.accuracy_score,
               "multi": functools.partial(skm.recall_score, average="macro")}  # fmt: skip
    ours, theirs = _both(metrics=metrics, y_true=COMPAS["y"].to_numpy(), y_pred=COMPAS["p"].to_numpy(),
                         sensitive_features=COMPAS["race"].to_numpy())  # fmt: skip
    assert ours.metric_paths == {"mine": "per_group", "cm": "per_group", "acc": "cell_table", "multi": "per_group"}
    assert "not a function polfair recognises" in ours.fallback_reasons["mine"]
    assert "average='macro'" in ours.fallback_reasons["multi"]
    np.testing.assert_array_equal(ours.by_group["mine"].to_numpy(), ours.by_group["acc"].to_numpy())
    for g in ours.by_group.index:
        np.testing.assert_array_equal(ours.by_group["cm"][g], theirs.by_group["cm"][g])
    with pytest.raises(ValueError, match="non-scalar"):
        ours.group_min()
    assert np.isnan(ours.group_min(errors="coerce")["cm"])


def test_string_labels_with_the_default_pos_label_raise_as_scikit_learn() -> None:
    args = dict(metrics=skm.recall_score, y_true=["no", "yes", "yes"], y_pred=["yes", "yes", "no"],
                sensitive_features=["a", "b", "b"])  # fmt: skip
    with pytest.raises(ValueError, match="pos_label=1 is not a valid label"):
        fm.MetricFrame(**args)
    with pytest.raises(ValueError, match="pos_label=1 is not a valid label"):
        pf.MetricFrame(**args)


def test_data_the_peer_refuses_goes_per_group_and_raises_as_there() -> None:
    y = np.array([0, 1, 2, 1, 0, 2])  # multiclass: recall_score(average="binary") raises on fairlearn
    mf_args = dict(metrics=skm.recall_score, y_true=y, y_pred=y, sensitive_features=["a", "b"] * 3)
    with pytest.raises(ValueError, match="average='binary'"):
        fm.MetricFrame(**mf_args)
    with pytest.raises(ValueError, match="average='binary'"):
        pf.MetricFrame(**mf_args)
    mf = pf.MetricFrame(**dict(mf_args, metrics=skm.accuracy_score))
    assert mf.metric_paths == {"accuracy_score": "per_group"} and "multiclass" in mf.fallback_reasons["accuracy_score"]
    assert mf.overall == 1.0


# ----------------------------------------------------------------------------------------------
# property tests against a naive reference


def _naive(metric: Any, y: np.ndarray, p: np.ndarray, groups: list[np.ndarray], w: np.ndarray | None) -> dict[tuple, float]:
    """The metric called on each observed combination of the groups' values (no MetricFrame)."""
    out = {}
    keys = list(zip(*groups, strict=True))
    for key in sorted(set(keys)):
        mask = np.array([k == key for k in keys])
        kw = {} if w is None else {"sample_weight": w[mask]}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out[key] = float(metric(y[mask], p[mask], **kw))
    return out


NAIVE_METRICS = {
    "accuracy": skm.accuracy_score,
    "recall": functools.partial(skm.recall_score, zero_division=0),
    "precision": functools.partial(skm.precision_score, zero_division=1),
    "f1": functools.partial(skm.f1_score, zero_division=0),
    "balanced": skm.balanced_accuracy_score,
    "selection_rate": fm.selection_rate,
    "tpr": fm.true_positive_rate,
    "fpr": fm.false_positive_rate,
}


@st.composite
def _cases(draw: Any) -> dict[str, Any]:
    n = draw(st.integers(1, 40))
    labels = draw(st.sampled_from([(0, 1), (False, True), ("no", "yes"), (0,), (1,)]))
    y = np.array(draw(st.lists(st.sampled_from(labels), min_size=n, max_size=n)))
    p = np.array(draw(st.lists(st.sampled_from(labels), min_size=n, max_size=n)))
    g1 = np.array(draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=n, max_size=n)))
    g2 = np.array(draw(st.lists(st.sampled_from([1, 2]), min_size=n, max_size=n)))
    weighted = draw(st.booleans())
    w = np.array(draw(st.lists(st.integers(1, 5), min_size=n, max_size=n)), dtype=float) if weighted else None
    return {"y": y, "p": p, "g1": g1, "g2": g2, "w": w, "pos": labels[-1]}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_cases())
def test_property_by_group_equals_naive_reference(case: dict[str, Any]) -> None:
    y, p, w, pos = case["y"], case["p"], case["w"], case["pos"]
    metrics = {name: (functools.partial(m, pos_label=pos) if name not in ("accuracy", "balanced") else m)
               for name, m in NAIVE_METRICS.items()}  # fmt: skip
    params = None if w is None else {name: {"sample_weight": w} for name in metrics}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mf = pf.MetricFrame(metrics=metrics, y_true=y, y_pred=p, sensitive_features={"g1": case["g1"], "g2": case["g2"]},
                            sample_params=params)  # fmt: skip
    for name, metric in metrics.items():
        expected = _naive(metric, y, p, [case["g1"], case["g2"]], w)
        column = mf.by_group[name]
        for key, value in column.items():
            if key in expected:
                assert math.isclose(value, expected[key], rel_tol=1e-12, abs_tol=1e-15) or (
                    math.isnan(value) and math.isnan(expected[key])), (name, key, value, expected[key])  # fmt: skip
            else:
                assert math.isnan(value)  # a combination without rows
        finite = [v for v in expected.values() if not math.isnan(v)]
        if finite:
            gmin = mf.group_min()[name]
            assert math.isclose(gmin, min(finite), rel_tol=1e-12, abs_tol=1e-15)
            diff = mf.difference()[name]
            assert math.isclose(diff, max(finite) - min(finite), rel_tol=1e-12, abs_tol=1e-12)
        overall = _naive(metric, y, p, [np.zeros(len(y))], w)[(0.0,)]
        assert math.isclose(mf.overall[name], overall, rel_tol=1e-12, abs_tol=1e-15) or (
            math.isnan(mf.overall[name]) and math.isnan(overall))  # fmt: skip


@settings(max_examples=30, deadline=None)
@given(_cases())
def test_property_cell_path_equals_per_group_path(case: dict[str, Any]) -> None:
    """The same metric through the cell table and through a wrapper polfair cannot recognise."""
    y, p = case["y"], case["p"]
    pos = case["pos"]
    recall = functools.partial(skm.recall_score, pos_label=pos, zero_division=0)

    def wrapped(a: np.ndarray, b: np.ndarray) -> float:
        return float(recall(a, b))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mf = pf.MetricFrame(metrics={"cells": recall, "rows": wrapped}, y_true=y, y_pred=p,
                            sensitive_features=case["g1"], control_features=case["g2"])  # fmt: skip
    assert mf.metric_paths == {"cells": "cell_table", "rows": "per_group"}
    np.testing.assert_array_equal(mf.by_group["cells"].to_numpy(), mf.by_group["rows"].to_numpy())
    np.testing.assert_array_equal(mf.overall["cells"].to_numpy(), mf.overall["rows"].to_numpy())
    for method in ("between_groups", "to_overall"):
        d = mf.ratio(method=method)
        np.testing.assert_array_equal(d["cells"].to_numpy(), d["rows"].to_numpy())


# ----------------------------------------------------------------------------------------------
# containers


def _containers() -> dict[str, Any]:
    y, p, g = COMPAS["y"], COMPAS["p"], COMPAS["race"]
    return {
        "numpy": (y.to_numpy(), p.to_numpy(), g.to_numpy()),
        "list": (y.to_list(), p.to_list(), g.to_list()),
        "pandas": (y.to_pandas(), p.to_pandas(), g.to_pandas()),
        "pandas_nullable": (y.to_pandas().astype("Int64"), p.to_pandas().astype("Int64"), g.to_pandas().astype("string")),
        "pandas_pyarrow": (y.to_pandas().astype("int64[pyarrow]"), p.to_pandas().astype("int64[pyarrow]"),
                           g.to_pandas().astype("string[pyarrow]")),  # fmt: skip
        "pandas_frame": (y.to_frame().to_pandas(), p.to_frame().to_pandas(), COMPAS.select("race").to_pandas()),
        "polars": (y, p, g),
        "polars_categorical": (y, p, g.cast(pl.Categorical)),
        "pyarrow": (y.to_arrow(), p.to_arrow(), g.to_arrow()),
        "pyarrow_chunked": (pa.chunked_array([y.to_arrow()]), pa.chunked_array([p.to_arrow()]), pa.chunked_array([g.to_arrow()])),
        "numpy_2d": (y.to_numpy()[:, None], p.to_numpy()[:, None], g.to_numpy()),
    }


@pytest.mark.parametrize("kind", list(_containers()))
def test_every_container_gives_the_same_numbers(kind: str) -> None:
    y, p, g = _containers()[kind]
    metrics = {"acc": skm.accuracy_score, "recall": skm.recall_score, "sr": fm.selection_rate, "mse": skm.mean_squared_error}
    ours = pf.MetricFrame(metrics=metrics, y_true=y, y_pred=p, sensitive_features=g)
    assert set(ours.metric_paths.values()) == {"cell_table"}, ours.fallback_reasons
    base = pf.MetricFrame(metrics=metrics, y_true=COMPAS["y"].to_numpy(), y_pred=COMPAS["p"].to_numpy(),
                          sensitive_features=COMPAS["race"].to_numpy())  # fmt: skip
    np.testing.assert_array_equal(ours.by_group.to_numpy(), base.by_group.to_numpy())
    assert [str(v) for v in ours.by_group.index] == [str(v) for v in base.by_group.index]
    np.testing.assert_array_equal(ours.difference().to_numpy(), base.difference().to_numpy())


def test_a_missing_sensitive_value_is_a_group() -> None:
    g = pd.Series(["a", None, "a", "b", np.nan, "b"])
    mf = pf.MetricFrame(metrics=fm.count, y_true=[1] * 6, y_pred=[1] * 6, sensitive_features=g)
    assert mf.by_group.tolist() == [2, 2, 2]  # a, b, then the missing value's group (last, as a NaN)
    assert pd.isna(mf.by_group.index[-1])
    with pytest.raises(ValueError, match="missing values"):
        fm.MetricFrame(metrics=fm.count, y_true=[1] * 6, y_pred=[1] * 6, sensitive_features=g)  # fairlearn 0.15 raises


# ----------------------------------------------------------------------------------------------
# bootstrap


def test_bootstrap_has_fairlearns_shapes_and_is_reproducible() -> None:
    kw = dict(metrics={"sr": fm.selection_rate, "acc": skm.accuracy_score}, y_true=COMPAS["y"].to_numpy(),
              y_pred=COMPAS["p"].to_numpy(), sensitive_features=COMPAS["race"].to_numpy(),
              control_features=COMPAS["sex"].to_numpy(), n_boot=50, ci_quantiles=[0.05, 0.5, 0.95], random_state=3)  # fmt: skip
    a, b = pf.MetricFrame(**kw), fm.MetricFrame(**kw)
    for attr in ("overall_ci", "by_group_ci"):
        ours, theirs = getattr(a, attr), getattr(b, attr)
        assert len(ours) == 3 and [type(x) for x in ours] == [type(x) for x in theirs]
        assert ours[0].shape == theirs[0].shape and list(ours[0].index) == list(theirs[0].index)
    for name in ("group_min_ci", "group_max_ci", "difference_ci", "ratio_ci"):
        ours = getattr(a, name)()
        assert [x.shape for x in ours] == [x.shape for x in getattr(b, name)()]
        assert (ours[0] <= ours[2]).all().all()
    again = pf.MetricFrame(**kw)
    pd.testing.assert_frame_equal(again.by_group_ci[0], a.by_group_ci[0])


def test_bootstrap_follows_the_row_bootstraps_law() -> None:
    """The overall selection rate of the replicates: mean p, variance p(1 − p)/n (the row bootstrap)."""
    rng = np.random.default_rng(0)
    n = 2_000
    y = rng.integers(0, 2, n)
    p = rng.integers(0, 2, n)
    mf = pf.MetricFrame(metrics=fm.selection_rate, y_true=y, y_pred=p, sensitive_features=rng.integers(0, 3, n),
                        n_boot=4_000, ci_quantiles=[0.1587, 0.5, 0.8413], random_state=1)  # fmt: skip
    lo, mid, hi = mf.overall_ci
    share = p.mean()
    sd = math.sqrt(share * (1 - share) / n)
    assert abs(mid - share) < 0.1 * sd
    assert abs((hi - lo) / 2 - sd) < 0.06 * sd


def test_bootstrap_shares_its_draws_with_metrics_called_per_group() -> None:
    def acc(a: np.ndarray, b: np.ndarray) -> float:
        return float(np.mean(a == b))

    mf = pf.MetricFrame(metrics={"cells": skm.accuracy_score, "rows": acc}, y_true=COMPAS["y"].to_numpy()[:600],
                        y_pred=COMPAS["p"].to_numpy()[:600], sensitive_features=COMPAS["race"].to_numpy()[:600],
                        n_boot=30, ci_quantiles=[0.1, 0.9], random_state=np.random.RandomState(5))  # fmt: skip
    for q in mf.by_group_ci:
        np.testing.assert_allclose(q["cells"].to_numpy(), q["rows"].to_numpy(), rtol=1e-12, equal_nan=True)


def test_bootstrap_refuses_non_scalar_metrics_as_fairlearn() -> None:
    with pytest.raises(ValueError, match="non-scalar result") as info:
        pf.MetricFrame(metrics=skm.confusion_matrix, y_true=[0, 1, 1], y_pred=[1, 1, 0], sensitive_features=["a", "b", "b"],
                       n_boot=3, ci_quantiles=[0.5], random_state=1)  # fmt: skip
    assert "truth value of an array" in str(info.value.__cause__)


# ----------------------------------------------------------------------------------------------
# analytic intervals


def test_analytic_intervals_are_the_cores_wilson_limits() -> None:
    y, p, g = COMPAS["y"].to_numpy(), COMPAS["p"].to_numpy(), COMPAS["race"].to_numpy()
    mf = pf.MetricFrame(metrics={"sr": fm.selection_rate, "f1": skm.f1_score}, y_true=y, y_pred=p, sensitive_features=g,
                        ci_quantiles=[0.025, 0.5, 0.975], ci_method="analytic")  # fmt: skip
    lo, mid, hi = mf.by_group_ci
    for group in mf.by_group.index:
        mask = g == group
        rate, n = p[mask].mean(), mask.sum()
        expect = wilson_limits(rate, float(n), z_values(0.95, 1))
        assert math.isclose(lo["sr"][group], float(expect[0]), rel_tol=1e-12)
        assert math.isclose(hi["sr"][group], float(expect[1]), rel_tol=1e-12)
        assert mid["sr"][group] == mf.by_group["sr"][group]
    assert lo["f1"].isna().all() and (mid["f1"] == mf.by_group["f1"]).all()  # no closed form: NaN limits
    d_lo, _, d_hi = mf.difference_ci()
    assert d_lo["sr"] <= mf.difference()["sr"] <= d_hi["sr"]
    r_lo, _, r_hi = mf.ratio_ci(method="to_overall")
    assert r_lo["sr"] <= mf.ratio(method="to_overall")["sr"] <= r_hi["sr"]


# ----------------------------------------------------------------------------------------------
# Polars output, errors


def test_to_polars_matches_the_pandas_results() -> None:
    mf = pf.MetricFrame(metrics={"sr": fm.selection_rate, "n": fm.count}, y_true=COMPAS["y"], y_pred=COMPAS["p"],
                        sensitive_features=COMPAS["race"], control_features=COMPAS["sex"])  # fmt: skip
    by = mf.to_polars()
    assert by.columns == ["sex", "race", "sr", "n"] and by.height == len(mf.by_group)
    assert by["sr"].to_list() == mf.by_group["sr"].tolist()
    assert by.schema["n"] == pl.Int64  # a count stays an integer (pandas makes it float next to a float metric)
    assert mf.by_group["n"].dtype == np.float64
    diff = mf.to_polars("difference", method="to_overall")
    assert diff["sr"].to_list() == mf.difference(method="to_overall")["sr"].tolist()
    with pytest.raises(PolfairError, match="result must be one of"):
        mf.to_polars("nope")  # type: ignore[arg-type]


def test_without_pandas_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import polfair.compat.fairlearn._mf_results as results

    mf = pf.MetricFrame(metrics=fm.selection_rate, y_true=[1, 0], y_pred=[1, 1], sensitive_features=["a", "b"])
    monkeypatch.setattr(results, "pandas", lambda: None)
    with pytest.raises(PolfairError, match=r"polfair\[pandas\].*to_polars\('by_group'\)"):
        _ = mf.by_group
    assert mf.to_polars()["selection_rate"].to_list() == [1.0, 1.0]


@pytest.mark.parametrize(("kwargs", "message"), [
    (dict(n_boot=5), "Must specify both n_boot and ci_quantiles"),
    (dict(n_boot=0, ci_quantiles=[0.5]), "Must have n_boot be a positive integer"),
    (dict(n_boot=5, ci_quantiles=[1.0]), r"Must have all ci_quantiles be floats in \(0, 1\)"),
    (dict(n_boot=5, ci_quantiles=[0.5], random_state="x"), "Unsupported random_state: x"),
    (dict(ci_quantiles=[0.5], ci_method="analytic", n_boot=5), "leave n_boot=None"),
    (dict(sensitive_features=pd.DataFrame({"a": ["x", "y"], "b": ["x", "y"]}), control_features={"a": ["u", "v"]}),
     "Detected duplicate feature name: 'a'"),
    (dict(sample_params={"nope": {}}), "Keys in 'sample_params' do not match those in 'metric'"),
])  # fmt: skip
def test_fairlearns_errors(kwargs: dict[str, Any], message: str) -> None:
    base = dict(metrics={"sr": fm.selection_rate}, y_true=[1, 0], y_pred=[1, 1], sensitive_features=["a", "b"])
    with pytest.raises(ValueError, match=message):
        pf.MetricFrame(**(base | kwargs))


def test_import_polfair_does_not_import_pandas() -> None:
    import subprocess
    import sys

    code = "import sys, polfair; assert 'pandas' not in sys.modules; print(polfair.MetricFrame.__name__)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "MetricFrame"


# ----------------------------------------------------------------------------------------------
# the fairlearn-named functions take scalars and pyarrow arrays, as fairlearn's do


@pytest.mark.parametrize("make", [
    lambda v: v, lambda v: pa.array(v), lambda v: pa.chunked_array([v]), lambda v: np.asarray(v)[:, None],
    lambda v: pl.DataFrame({"x": v}), lambda v: pd.DataFrame({"x": v}),
])  # fmt: skip
def test_fairlearn_named_functions_take_pyarrow_and_squeezable_inputs(make: Any) -> None:
    y, p, g = [1, 0, 1, 0, 0, 1], [1, 1, 0, 1, 0, 1], ["a", "a", "b", "b", "c", "c"]  # each group: both labels
    for name in ("selection_rate", "true_positive_rate", "false_negative_rate"):
        assert getattr(pf, name)(make(y), make(p)) == getattr(fm, name)(y, p)
    for name in ("demographic_parity_difference", "equalized_odds_difference"):
        theirs = getattr(fm, name)(y, p, sensitive_features=g)
        assert math.isclose(getattr(pf, name)(make(y), make(p), sensitive_features=pa.array(g)), theirs)


def test_fairlearn_named_functions_take_a_scalar_as_one_row() -> None:
    assert pf.selection_rate(1, 1) == fm.selection_rate(1, 1) == 1.0
    assert pf.selection_rate(np.int64(0), np.int64(0)) == fm.selection_rate(np.int64(0), np.int64(0)) == 0.0


def test_make_derived_metric_equals_fairlearns() -> None:
    y, p, g, w = COMPAS["y"].to_numpy(), COMPAS["p"].to_numpy(), COMPAS["race"].to_numpy(), np.arange(len(COMPAS)) % 3 + 1.0
    for transform in ("difference", "ratio", "group_min", "group_max"):
        ours = pf.make_derived_metric(metric=skm.precision_score, transform=transform)
        theirs = fm.make_derived_metric(metric=skm.precision_score, transform=transform)
        kw: dict[str, Any] = {"sensitive_features": g, "sample_weight": w, "zero_division": 0}
        if transform in ("difference", "ratio"):
            kw["method"] = "to_overall"
        assert math.isclose(ours(y, p, **kw), theirs(y, p, **kw), rel_tol=1e-12)
    with pytest.raises(ValueError, match="Transform must be one of"):
        pf.make_derived_metric(metric=skm.recall_score, transform="mean")
