"""aif360's own repository test cases (spec Appendix A) as fixed tests, plus the quirks and errors.

Sources: ``tests/test_classification_metric.py`` of aif360 0.6.1 (A.1), the R package's
``test-classification.R`` 20-row case with the exact 0.6.1 values (A.4), and the quirks of spec
§2, §5, §7, §11. None of these tests needs aif360 installed: the expected values are constants.
"""

from __future__ import annotations

import math
import sys
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import polars as pl
import pytest

from polfair.compat.aif360 import BinaryLabelDatasetMetric, ClassificationMetric
from polfair.exceptions import InvalidInputError

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

FEAT = [0, 0, 1, 1, 1, 1, 2, 2, 2, 2]
LABEL = [1, 0, 0, 1, 0, 0, 1, 0, 1, 1]


def _pred(label: list[int], zeros: list[int], ones: list[int]) -> list[int]:
    out = list(label)
    for i in zeros:
        out[i] = 0
    for i in ones:
        out[i] = 1
    return out


# ---------------------------------------------------------------------------------------------
# A.1 tests/test_classification_metric.py


def test_generalized_entropy_index() -> None:
    pred = _pred(LABEL, [3, 9], [4, 5])
    assert pred == [1, 0, 0, 0, 1, 1, 1, 0, 1, 0]
    df = pl.DataFrame({"feat": FEAT, "label": LABEL, "pred": pred})
    cm = ClassificationMetric(df, y_true="label", y_pred="pred", protected="feat")
    assert cm.generalized_entropy_index() == 0.2
    df2 = df.with_columns(pred=pl.Series([0, 1, 1, 0, 0, 0, 0, 1, 1, 1]))
    cm2 = ClassificationMetric(df2, y_true="label", y_pred="pred", protected="feat")
    assert cm2.generalized_entropy_index() == 0.3


def test_theil_index() -> None:
    df = pl.DataFrame({"feat": FEAT, "label": LABEL, "pred": _pred(LABEL, [3, 9], [4, 5])})
    cm = ClassificationMetric(df, y_true="label", y_pred="pred", protected="feat")
    assert cm.theil_index() == pytest.approx(4 * np.log(2) / 10, rel=1e-12)


def test_between_all_groups() -> None:
    df = pl.DataFrame({"feat": FEAT, "label": LABEL, "pred": _pred(LABEL, [3, 9], [4, 5])})
    cm = ClassificationMetric(df, y_true="label", y_pred="pred", protected="feat")
    b = np.array([1, 1, 1.25, 1.25, 1.25, 1.25, 0.75, 0.75, 0.75, 0.75])
    assert cm.between_all_groups_generalized_entropy_index() == pytest.approx(1 / 20 * np.sum(b**2 - 1), rel=1e-12)


def test_between_group() -> None:
    label = [1, 0, 0, 1, 0, 0]
    df = pl.DataFrame({
        "feat": [0, 0, 1, 1, 1, 1], "feat2": [0, 1, 1, 1, 0, 0], "label": label,
        "pred": _pred(label, [0, 3], [4, 5]),
    })  # fmt: skip
    cm = ClassificationMetric(
        df, y_true="label", y_pred="pred", protected=["feat", "feat2"],
        unprivileged_groups=[{"feat": 0}], privileged_groups=[{"feat": 1}],
    )  # fmt: skip
    b = np.array([0.5, 0.5, 1.25, 1.25, 1.25, 1.25])
    assert cm.between_group_generalized_entropy_index() == pytest.approx(1 / 12 * np.sum(b**2 - 1), rel=1e-12)


def test_multiclass_confusion_matrix() -> None:
    label = [1, 0, 0, 1, 0, 2, 1, 0, 2, 1]
    pred = list(label)
    pred[3], pred[4] = 0, 2
    df = pl.DataFrame({"feat": FEAT, "label": label, "pred": pred})
    cm = ClassificationMetric(
        df, y_true="label", y_pred="pred", protected="feat", favorable_label=[0, 1], unfavorable_label=[2],
        unprivileged_groups=[{"feat": 2}], privileged_groups=[{"feat": 0}, {"feat": 1}],
    )  # fmt: skip
    assert cm.binary_confusion_matrix() == {"TP": 7, "FN": 1, "TN": 2, "FP": 0}
    assert list(cm.binary_confusion_matrix()) == ["TP", "FP", "TN", "FN"]  # aif360's key order
    assert cm.false_negative_rate_difference() == -0.2


def test_generalized_binary_confusion_matrix() -> None:
    df = pl.DataFrame({
        "feat": FEAT, "label": [1, 0, 0, 1, 0, 0, 2, 0, 0, 2],
        "score": [0.8, 0.6, 0.7, 0.8, 0.36, 0.82, 0.79, 0.42, 0.81, 0.3],
    })  # fmt: skip
    cm = ClassificationMetric(
        df, y_true="label", y_pred="label", y_score="score", protected="feat",
        favorable_label=[0, 1], unfavorable_label=[2],
        unprivileged_groups=[{"feat": 0}], privileged_groups=[{"feat": 1}],
    )  # fmt: skip
    assert round(cm.num_generalized_true_positives(), 2) == 5.31
    assert cm.num_generalized_false_positives() == 1.09


# ---------------------------------------------------------------------------------------------
# A.4 the R package's 20-row case (exact aif360 0.6.1 values)

R_SEX = [0, 1, 0, 0, 0, 0, 1, 1, 0, 1, 1, 1, 1, 1, 1, 0, 1, 0, 1, 0]
R_Y = [0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 1]
R_YHAT = [0, 0, 1, 1, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 1, 1, 0, 1, 0]

R_EXPECTED: dict[str, Any] = {
    ("accuracy", None): 0.55, ("accuracy", True): 0.7272727272727273, ("accuracy", False): 0.3333333333333333,
    "average_abs_odds_difference": 0.4246031746031746, "average_odds_difference": -0.0753968253968254,
    "between_all_groups_generalized_entropy_index": 0.0016134883809742957,
    "between_all_groups_theil_index": 0.00160823910132923,
    "between_all_groups_coefficient_of_variation": 0.056806485210304916,
    "coefficient_of_variation": 0.5685520361140011, "disparate_impact": 1.6296296296296298,
    "equal_opportunity_difference": -0.5,
    ("error_rate", None): 0.44999999999999996, ("error_rate", True): 0.2727272727272727,
    ("error_rate", False): 0.6666666666666667,
    "error_rate_difference": 0.39393939393939403, "error_rate_ratio": 2.444444444444445,
    ("false_discovery_rate", None): 0.8571428571428571, ("false_discovery_rate", True): 0.6666666666666666,
    ("false_discovery_rate", False): 1.0, "false_discovery_rate_difference": 0.33333333333333337,
    "false_discovery_rate_ratio": 1.5,
    ("false_negative_rate", None): 0.75, ("false_negative_rate", True): 0.5, ("false_negative_rate", False): 1.0,
    "false_negative_rate_difference": 0.5, "false_negative_rate_ratio": 2.0,
    ("false_omission_rate", None): 0.23076923076923078, ("false_omission_rate", True): 0.125,
    ("false_omission_rate", False): 0.4, "false_omission_rate_difference": 0.275, "false_omission_rate_ratio": 3.2,
    ("false_positive_rate", None): 0.375, ("false_positive_rate", True): 0.2222222222222222,
    ("false_positive_rate", False): 0.5714285714285714, "false_positive_rate_difference": 0.3492063492063492,
    "false_positive_rate_ratio": 2.5714285714285716,
    "generalized_entropy_index": 0.1616257088846882,
    "generalized_false_negative_rate": 0.75, "generalized_false_positive_rate": 0.375,
    "generalized_true_negative_rate": 0.625, "generalized_true_positive_rate": 0.25,
    "negative_predictive_value": 0.7692307692307693,
    "num_false_negatives": 3.0, "num_false_positives": 6.0, "num_generalized_false_negatives": 3.0,
    "num_generalized_false_positives": 6.0, "num_generalized_true_negatives": 10.0,
    "num_generalized_true_positives": 1.0,
    "positive_predictive_value": 0.14285714285714285, "precision": 0.14285714285714285, "power": 1.0,
    "recall": 0.25, "sensitivity": 0.25, "true_positive_rate": 0.25, "selection_rate": 0.35,
    "specificity": 0.625, "true_negative_rate": 0.625,
    "statistical_parity_difference": 0.1717171717171717, "theil_index": 0.22188006487350848,
    "true_positive_rate_difference": -0.5,
    "smoothed_empirical_differential_fairness": 0.18232155679395468,
    "differential_fairness_bias_amplification": 0.251314428280906,
    "equalized_odds_difference": 0.5, "average_predictive_value_difference": -0.029166666666666646,
}  # fmt: skip


@pytest.fixture(scope="module")
def r_case() -> ClassificationMetric:
    df = pl.DataFrame({"sex": R_SEX, "income": R_Y, "pred": R_YHAT})
    return ClassificationMetric(
        df, y_true="income", y_pred="pred", protected="sex",
        unprivileged_groups=[{"sex": 0}], privileged_groups=[{"sex": 1}],
    )  # fmt: skip


@pytest.mark.parametrize("key", list(R_EXPECTED), ids=str)
def test_r_package_case(r_case: ClassificationMetric, key: Any) -> None:
    name, args = (key[0], {"privileged": key[1]}) if isinstance(key, tuple) else (key, {})
    got = getattr(r_case, name)(**args)
    assert isinstance(got, np.float64)
    if any(w in name for w in ("entropy", "theil", "coefficient")):
        # summed over the cell table's distinct benefits, not over rows: equal to 1e-12 relative
        # (between-group indices are small differences of O(1) terms, so last-bit noise is amplified)
        assert got == pytest.approx(R_EXPECTED[key], rel=1e-12, abs=0)
    else:  # unweighted counts and the rates made of them: bit-identical to aif360
        assert got == R_EXPECTED[key]


def test_r_package_case_integer_counts_are_exact(r_case: ClassificationMetric) -> None:
    for name in ("num_false_negatives", "num_false_positives", "power", "selection_rate", "false_positive_rate_ratio"):
        assert getattr(r_case, name)() == R_EXPECTED[name]


# ---------------------------------------------------------------------------------------------
# one pass: all 84 methods read one cell table; the row measures add one documented second pass


def _counting_source(df: pl.DataFrame, counter: dict[str, int]) -> pl.LazyFrame:
    from polars.io.plugins import register_io_source

    def source(with_columns: list[str] | None, predicate: Any, n_rows: int | None, batch_size: int | None) -> Iterator[pl.DataFrame]:
        counter["scans"] += 1
        out = df if with_columns is None else df.select(with_columns)
        if predicate is not None:
            out = out.filter(predicate)
        yield out if n_rows is None else out.head(n_rows)

    return register_io_source(source, schema=df.schema)


def _call_everything(m: Any) -> int:
    calls = 0
    for name in sorted(n for n in dir(type(m)) if not n.startswith("_") and callable(getattr(m, n))):
        f = getattr(m, name)
        if name in ("difference", "ratio"):
            f(m.num_instances)
        elif name == "rich_subgroup":
            f([0, 1] * 10)
        elif name in ("consistency",):
            f(n_neighbors=3)
        else:
            params = __import__("inspect").signature(f).parameters
            if "privileged" in params:
                for p in (None, True, False):
                    f(privileged=p)
            else:
                f()
        calls += 1
    return calls


def test_all_84_methods_scan_the_data_once_plus_one_row_pass() -> None:
    df = pl.DataFrame({"sex": R_SEX, "age": list(range(20)), "income": R_Y, "pred": R_YHAT})
    counter = {"scans": 0}
    kw = {"protected": "sex", "unprivileged_groups": [{"sex": 0}], "privileged_groups": [{"sex": 1}]}
    cm = ClassificationMetric(_counting_source(df, counter), y_true="income", y_pred="pred", **kw)
    assert counter["scans"] == 0  # lazy: nothing read at construction
    cm.true_positive_rate()
    assert counter["scans"] == 1
    assert _call_everything(cm) == 72
    assert counter["scans"] == 2  # + the row pass of consistency/rich_subgroup, collected once
    assert _call_everything(cm) == 72
    assert counter["scans"] == 2

    counter["scans"] = 0
    dm = BinaryLabelDatasetMetric(_counting_source(df.drop("pred"), counter), y="income", **kw)
    assert _call_everything(dm) == 12
    assert counter["scans"] == 2


def test_path_input_is_scanned_lazily(tmp_path: Any) -> None:
    path = tmp_path / "d.parquet"
    pl.DataFrame({"sex": R_SEX, "income": R_Y, "pred": R_YHAT}).write_parquet(path)
    cm = ClassificationMetric(str(path), y_true="income", y_pred="pred", protected="sex",
                              unprivileged_groups=[{"sex": 0}], privileged_groups=[{"sex": 1}])  # fmt: skip
    assert cm.disparate_impact() == R_EXPECTED["disparate_impact"]


# ---------------------------------------------------------------------------------------------
# group conditions and quirks (spec §2, §5, §11)


def _small(**kw: Any) -> ClassificationMetric:
    df = pl.DataFrame({"a": [0, 0, 1, 1, 2, 2], "b": [0, 1, 0, 1, 0, 1], "y": [1, 0, 1, 0, 1, 1], "p": [1, 1, 0, 0, 1, 0]})
    return ClassificationMetric(df, y_true="y", y_pred="p", protected=["a", "b"], **kw)


def test_or_across_dicts_and_within() -> None:
    cm = _small(privileged_groups=[{"a": 0, "b": 1}, {"a": 2}], unprivileged_groups=[{"a": 1}])
    assert cm.num_instances(privileged=True) == 3.0
    assert cm.num_instances(privileged=False) == 2.0
    assert cm.num_instances() == 6.0


def test_empty_list_is_an_empty_group_and_empty_dict_is_everyone() -> None:
    cm = _small(privileged_groups=[], unprivileged_groups=[{}])
    assert cm.num_instances(privileged=True) == 0.0
    assert cm.num_instances(privileged=False) == 6.0
    assert math.isnan(cm.true_positive_rate(privileged=True))  # unguarded rate: nan
    assert cm.positive_predictive_value(privileged=True) == 0.0  # guarded: 0.0
    assert cm.error_rate(privileged=True) == 1.0  # 1 - guarded accuracy
    with np.errstate(divide="ignore"):
        assert cm.error_rate_ratio() == 0.5 / 1.0
        assert cm.ratio(cm.error_rate) == 0.5
        assert cm.disparate_impact() == np.inf or math.isnan(cm.disparate_impact())


def test_missing_group_definition_raises_attribute_error() -> None:
    cm = _small(privileged_groups=[{"a": 0}])
    with pytest.raises(AttributeError, match="'unprivileged_groups' was not provided when this object was initialized."):
        cm.accuracy(privileged=False)
    with pytest.raises(AttributeError, match="unprivileged_groups"):
        cm.statistical_parity_difference()
    with pytest.raises(AttributeError):
        cm.between_group_theil_index()


def test_privileged_1_without_groups_means_everyone() -> None:
    cm = _small()
    assert cm.accuracy(1) == cm.accuracy()
    assert cm.accuracy(0) == cm.accuracy()
    with pytest.raises(AttributeError):
        cm.accuracy(True)


def test_overlapping_groups_raise_value_error() -> None:
    cm = _small(privileged_groups=[{"a": 0}], unprivileged_groups=[{"b": 1}])
    with pytest.raises(ValueError, match="must be disjoint.*a=0, b=1"):
        cm.accuracy()


def test_group_keys_must_be_protected_attributes() -> None:
    with pytest.raises(ValueError, match="'y' is not in list"):
        _small(privileged_groups=[{"y": 1}])
    with pytest.raises(TypeError, match="list of dicts"):
        _small(privileged_groups={"a": 1})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="list of dicts"):
        _small(privileged_groups=["a"])  # type: ignore[list-item]


def test_value_of_another_type_is_an_error() -> None:
    # issue 15: the facade follows polfair's value rules; aif360 silently matched nothing here
    cm = _small(privileged_groups=[{"a": "0"}], unprivileged_groups=[{"a": 1.0}])
    with pytest.raises(ValueError, match=r"privileged_groups='0' cannot match column 'a'"):
        cm.num_instances(privileged=True)
    cm = _small(privileged_groups=[{"a": 0}], unprivileged_groups=[{"a": 1.0}])
    assert cm.num_instances(privileged=False) == 2.0  # float64 equality, as aif360


def test_string_protected_attributes_work() -> None:
    df = pl.DataFrame({"sex": ["f", "f", "m", "m"], "y": [1, 0, 1, 0], "p": [1, 1, 1, 0]})
    cm = ClassificationMetric(df, y_true="y", y_pred="p", protected="sex",
                              unprivileged_groups=[{"sex": "f"}], privileged_groups=[{"sex": "m"}])  # fmt: skip
    assert cm.false_positive_rate_difference() == 1.0
    with pytest.raises(ValueError, match="must be numeric"):
        cm.rich_subgroup("p")


def test_equalized_odds_builtin_max_nan_order() -> None:
    # privileged group has no positives: TPR_priv nan, |ΔTPR| nan, |ΔFPR| a number -> |ΔFPR|
    df = pl.DataFrame({"g": [0, 0, 0, 1, 1], "y": [1, 0, 0, 0, 0], "p": [1, 1, 0, 0, 0]})
    cm = ClassificationMetric(df, y_true="y", y_pred="p", protected="g",
                              unprivileged_groups=[{"g": 0}], privileged_groups=[{"g": 1}])  # fmt: skip
    assert cm.equalized_odds_difference() == 0.5
    assert math.isnan(cm.average_odds_difference())
    # privileged group has no negatives: |ΔFPR| nan comes first -> nan
    df2 = pl.DataFrame({"g": [0, 0, 0, 1, 1], "y": [1, 0, 0, 1, 1], "p": [1, 1, 0, 0, 1]})
    cm2 = ClassificationMetric(df2, y_true="y", y_pred="p", protected="g",
                               unprivileged_groups=[{"g": 0}], privileged_groups=[{"g": 1}])  # fmt: skip
    assert math.isnan(cm2.equalized_odds_difference())


def test_power_is_a_count_and_apvd_uses_false_omission_rate() -> None:
    cm = _small(privileged_groups=[{"a": 2}], unprivileged_groups=[{"a": 0}])
    assert cm.power() == cm.num_true_positives() == 2.0
    d = 0.5 * (cm.difference(cm.positive_predictive_value) + cm.difference(cm.false_omission_rate))
    assert cm.average_predictive_value_difference() == d


def test_between_group_rows_in_neither_group_keep_b_zero() -> None:
    cm = _small(privileged_groups=[{"a": 2}], unprivileged_groups=[{"a": 0}])
    # b: a=0 rows mean (1 + 2)/2 = 1.5; a=2 rows mean (1 + 0)/2 = 0.5; the two a=1 rows b = 0
    b = np.array([1.5, 1.5, 0.0, 0.0, 0.5, 0.5])
    mu = b.mean()
    assert cm.between_group_generalized_entropy_index() == pytest.approx(np.mean((b / mu) ** 2 - 1) / 2, rel=1e-12)
    assert cm.between_group_generalized_entropy_index(alpha=0) == np.inf


def test_alpha_zero_variant_is_inf_with_a_false_negative() -> None:
    cm = _small()
    assert cm.num_false_negatives() > 0
    assert cm.generalized_entropy_index(alpha=0) == np.inf


def test_edf_errors_and_concentration_zero() -> None:
    one_cell = pl.DataFrame({"g": [1, 1, 1], "y": [1, 0, 1]})
    dm = BinaryLabelDatasetMetric(one_cell, y="y", protected="g")
    with pytest.raises(ValueError, match="max\\(\\) arg is an empty sequence"):
        dm.smoothed_empirical_differential_fairness()
    dm2 = BinaryLabelDatasetMetric(pl.DataFrame({"g": [0, 0, 1, 1], "y": [1, 1, 1, 0]}), y="y", protected="g")
    with pytest.raises(ValueError, match="Concentration parameter must be non-negative."):
        dm2.smoothed_empirical_differential_fairness(concentration=-1)
    assert dm2.smoothed_empirical_differential_fairness(concentration=0.0) == np.inf  # log(0) of the pure cell
    s = np.array([(2 + 0.5) / 3, (1 + 0.5) / 3])
    expected = max(abs(np.log(s[0]) - np.log(s[1])), abs(np.log(1 - s[0]) - np.log(1 - s[1])))
    assert dm2.smoothed_empirical_differential_fairness() == expected


def test_consistency_and_rich_subgroup_read_true_labels_and_return_floats() -> None:
    df = pl.DataFrame({"sex": R_SEX, "age": list(range(20)), "income": R_Y, "pred": R_YHAT})
    cm = ClassificationMetric(df, y_true="income", y_pred="pred", protected="sex", features=["age", "sex"])
    dm = BinaryLabelDatasetMetric(df, y="income", protected="sex", features=["age", "sex"])
    assert isinstance(cm.consistency(), float)
    assert cm.consistency() == dm.consistency()
    assert cm.consistency(n_neighbors=1) == 1.0
    with pytest.raises(ValueError, match="n_neighbors"):
        cm.consistency(n_neighbors=21)
    v = cm.rich_subgroup("pred")
    assert v == cm.rich_subgroup(R_YHAT) == cm.rich_subgroup(np.array(R_YHAT).reshape(-1, 1)) == cm.rich_subgroup(pl.col("pred"))
    with pytest.raises(ValueError, match="Invalid fairness metric specified: XX"):
        cm.rich_subgroup("pred", fairness_def="XX")
    with pytest.raises(ValueError, match="expected 20 values"):
        cm.rich_subgroup([0, 1])


def test_consistency_without_scikit_learn_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sklearn", None)
    monkeypatch.setitem(sys.modules, "sklearn.neighbors", None)
    dm = BinaryLabelDatasetMetric(pl.DataFrame({"g": [0, 1], "y": [1, 0]}), y="y", protected="g")
    with pytest.raises(ImportError, match=r"pip install 'polfair\[sklearn\]'"):
        dm.consistency()


def test_invalid_data_raises_on_first_use() -> None:
    bad_label = pl.DataFrame({"g": [0, 1], "y": [1, 2], "p": [1, 0]})
    cm = ClassificationMetric(bad_label, y_true="y", y_pred="p", protected="g")
    with pytest.raises(InvalidInputError, match="neither favorable"):
        cm.accuracy()
    nulls = pl.DataFrame({"g": [0, 1], "y": [1, None], "p": [1, 0]})
    with pytest.raises(ValueError, match="null"):
        ClassificationMetric(nulls, y_true="y", y_pred="p", protected="g").accuracy()
    with pytest.raises(TypeError):
        ClassificationMetric(42, y_true="y", protected="g")


def test_dict_methods_raise_type_error_in_difference_and_keep_key_order() -> None:
    cm = _small(privileged_groups=[{"a": 2}], unprivileged_groups=[{"a": 0}])
    with pytest.raises(TypeError):
        cm.difference(cm.binary_confusion_matrix)
    assert list(cm.generalized_binary_confusion_matrix()) == ["GTP", "GFP", "GTN", "GFN"]
    assert list(cm.performance_measures()) == [
        "TPR", "TNR", "FPR", "FNR", "GTPR", "GTNR", "GFPR", "GFNR", "PPV", "NPV", "FDR", "FOR", "ACC",
    ]  # fmt: skip


def test_no_warnings_other_than_numpy_zero_division() -> None:
    cm = _small(privileged_groups=[], unprivileged_groups=[{"a": 0}])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cm.accuracy(privileged=True)  # guarded: silent
        with pytest.warns(RuntimeWarning, match="invalid value"):
            cm.true_positive_rate(privileged=True)  # 0/0, as numpy warns in aif360
