"""Differential tests: fairness_report against aif360 0.6.1 itself (count metrics, disparities,
entropy indices, EDF, bias amplification), on random data and on COMPAS / Adult.

Where aif360 and the report's documented policy differ on purpose, the test checks the policy:
the report gives null where aif360 gives NaN/inf (undefined), and where aif360 guards a zero
denominator to 0.0 (PPV, NPV, FDR, FOR, accuracy and so error rate) or lets builtin ``max``
pick one side of a NaN (equalized odds).
"""

from __future__ import annotations

import logging
import math
import warnings
from typing import Any

import numpy as np
import polars as pl
import pytest
from conftest import Case, audit_cases
from hypothesis import HealthCheck, given, settings

import polfair as pf

aif360 = pytest.importorskip("aif360", reason="aif360 0.6.1 is needed for the differential tests")
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from aif360.datasets import BinaryLabelDataset
    from aif360.metrics import BinaryLabelDatasetMetric, ClassificationMetric

logging.getLogger("aif360").setLevel(logging.ERROR)

REL = 1e-12
ABS = 1e-12

#: where the report is null on purpose while aif360 may return a (guarded / order-dependent) number
GUARDED = {
    "positive_predictive_value", "negative_predictive_value", "false_discovery_rate",
    "false_omission_rate", "accuracy", "error_rate", "error_rate_difference", "error_rate_ratio",
    "false_discovery_rate_difference", "false_discovery_rate_ratio", "false_omission_rate_difference",
    "false_omission_rate_ratio", "average_predictive_value_difference", "equalized_odds_difference",
    "generalized_equalized_odds_difference",
}  # fmt: skip

DISPARITY_NAMES = [
    "statistical_parity_difference", "disparate_impact", "equal_opportunity_difference",
    "average_odds_difference", "average_abs_odds_difference", "equalized_odds_difference",
    "average_predictive_value_difference", "generalized_equalized_odds_difference",
    "error_rate_difference", "error_rate_ratio", "false_positive_rate_difference",
    "false_positive_rate_ratio", "false_negative_rate_difference", "false_negative_rate_ratio",
    "false_discovery_rate_difference", "false_discovery_rate_ratio",
    "false_omission_rate_difference", "false_omission_rate_ratio",
]  # fmt: skip


def agree(metric: str, ours: float | None, theirs: Any, where: str) -> None:
    """ours (report) vs theirs (aif360) under the report's policy."""
    theirs = float(np.asarray(theirs).reshape(-1)[0])
    if "coefficient_of_variation" in metric and math.isnan(theirs) and ours is not None and ours < 1e-7:
        # aif360 takes sqrt(2·GE) of a GE that rounding made slightly negative (a constant benefit
        # vector, e.g. a single group): NaN there, the exact 0 (or ~1e-8 noise) here
        return
    noise = math.sqrt(2 * ABS) if "coefficient_of_variation" in metric else ABS  # CV = sqrt(2·GE): sqrt of the noise
    if ours is None and metric.startswith("between_") and abs(theirs) <= noise:
        # policy (issue 15 §6): a between-group index needs two groups with counted rows; aif360
        # gives 0.0 for a single group (or rounding noise around it, e.g. 2.2e-16 for GE(α), and
        # 2.1e-08 = sqrt(2·2.2e-16) for the coefficient of variation: found by hypothesis)
        return
    if ours is None:
        assert not math.isfinite(theirs) or metric in GUARDED, f"{where} {metric}: report null, aif360 {theirs}"
        return
    assert math.isfinite(theirs) or (math.isinf(theirs) and ours == theirs), (
        f"{where} {metric}: report {ours}, aif360 {theirs}"
    )
    if "coefficient_of_variation" in metric:  # sqrt(2·GE) magnifies rounding near 0
        ours, theirs = ours * ours, theirs * theirs
    assert math.isclose(ours, theirs, rel_tol=REL, abs_tol=ABS), f"{where} {metric}: report {ours!r}, aif360 {theirs!r}"


class Aif:
    """aif360 datasets for a frame: keys (any dtype) encoded to float codes."""

    def __init__(self, keys: dict[str, list], y: np.ndarray, p: np.ndarray, s: np.ndarray | None,
                 w: np.ndarray | None) -> None:  # fmt: skip
        self.codes = {k: {v: float(i) for i, v in enumerate(sorted(set(col)))} for k, col in keys.items()}
        self.keys = keys
        self.y, self.p, self.s, self.w = y, p, s, w

    def datasets(self, names: list[str]) -> tuple[BinaryLabelDataset, BinaryLabelDataset]:
        import pandas as pd

        data = {k: [self.codes[k][v] for v in self.keys[k]] for k in names}
        data["y"] = self.y.astype(float)
        if self.w is not None:
            data["w"] = self.w.astype(float)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ds = BinaryLabelDataset(
                df=pd.DataFrame(data), label_names=["y"], protected_attribute_names=names,
                instance_weights_name="w" if self.w is not None else None,
                favorable_label=1.0, unfavorable_label=0.0,
            )  # fmt: skip
        pred = ds.copy(deepcopy=True)
        pred.labels = self.p.astype(float).reshape(-1, 1)
        pred.scores = (self.s if self.s is not None else (self.p == 1).astype(float)).reshape(-1, 1)
        return ds, pred


def call(f, *args, **kw):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return f(*args, **kw)
        except ValueError:  # EDF with a single observed cell
            return float("nan")


def check_against_aif360(rep: pl.DataFrame, aif: Aif, names: list[str], privileged: dict[str, Any],
                         alpha: float, concentration: float, predictions: bool = True) -> int:  # fmt: skip
    """Compare every comparable number of ``rep`` with aif360; returns how many were compared."""
    checked = 0
    val = {(r["attribute"], r["group"], r["metric"]): r["value"] for r in rep.iter_rows(named=True)}
    ds, pred = aif.datasets(names)
    where = "population"
    if predictions:
        cm = ClassificationMetric(ds, pred)
        for m, f in [
            ("generalized_entropy_index", lambda: cm.generalized_entropy_index(alpha)),
            ("theil_index", cm.theil_index),
            ("coefficient_of_variation", cm.coefficient_of_variation),
            ("between_all_groups_generalized_entropy_index", lambda: cm.between_all_groups_generalized_entropy_index(alpha)),
            ("between_all_groups_theil_index", cm.between_all_groups_theil_index),
            ("between_all_groups_coefficient_of_variation", cm.between_all_groups_coefficient_of_variation),
            ("smoothed_empirical_differential_fairness_predictions",
             lambda: BinaryLabelDatasetMetric(pred).smoothed_empirical_differential_fairness(concentration)),
            ("differential_fairness_bias_amplification",
             lambda: cm.differential_fairness_bias_amplification(concentration)),
        ]:  # fmt: skip
            agree(m, val[(None, None, m)], call(f), where)
            checked += 1
    bl = BinaryLabelDatasetMetric(ds)
    agree("smoothed_empirical_differential_fairness", val[(None, None, "smoothed_empirical_differential_fairness")],
          call(bl.smoothed_empirical_differential_fairness, concentration), where)  # fmt: skip
    checked += 1

    # attribute sets: the between-group indices and EDF equal aif360's "all groups" versions on
    # a dataset whose protected attributes are exactly that set
    attribute_sets = sorted({a for a in rep["attribute"].drop_nulls().unique()})
    for attr in attribute_sets:
        sub = attr.split(" & ")
        dsa, preda = aif.datasets(sub)
        where = f"attribute {attr}"
        edf = BinaryLabelDatasetMetric(dsa).smoothed_empirical_differential_fairness
        agree("smoothed_empirical_differential_fairness",
              val[(attr, None, "smoothed_empirical_differential_fairness")], call(edf, concentration), where)  # fmt: skip
        checked += 1
        if predictions:
            cma = ClassificationMetric(dsa, preda)
            for m, f in [
                ("between_group_generalized_entropy_index", lambda: cma.between_all_groups_generalized_entropy_index(alpha)),  # noqa: B023 (called in this iteration)
                ("between_group_theil_index", cma.between_all_groups_theil_index),
                ("between_group_coefficient_of_variation", cma.between_all_groups_coefficient_of_variation),
                ("smoothed_empirical_differential_fairness_predictions",
                 lambda: BinaryLabelDatasetMetric(preda).smoothed_empirical_differential_fairness(concentration)),  # noqa: B023
            ]:  # fmt: skip
                agree(m, val[(attr, None, m)], call(f), where)
                checked += 1

    # group rows of single attributes against the privileged value: aif360's unprivileged/privileged
    # (the scores f1_score, ... are scikit-learn's, tested in tests/core/test_score_metrics.py)
    metric_names = [m for m, d in pf.METRICS.items() if (predictions or d.needs == "labels") and not d.is_score]
    for a in names:
        p = privileged[a]
        levels = sorted(set(aif.keys[a]))
        for v in levels:
            g = str(v)
            cond_p = [{a: aif.codes[a][p]}]
            cond_u = [{a: aif.codes[a][v]}] if v != p else []  # aif360 wants disjoint groups
            side = v == p  # privileged=True reads the reference group itself
            where = f"{a}={g} vs {p}"
            if predictions:
                cm = ClassificationMetric(ds, pred, unprivileged_groups=cond_u, privileged_groups=cond_p)
            else:
                cm = BinaryLabelDatasetMetric(ds, unprivileged_groups=cond_u, privileged_groups=cond_p)
            for m in metric_names:
                agree(m, val[(a, g, m)], call(getattr(cm, m), privileged=side), where)
                checked += 1
            if side:
                continue
            disparities = DISPARITY_NAMES if predictions else DISPARITY_NAMES[:2]
            for d in disparities:
                agree(d, val[(a, g, d)], call(getattr(cm, d)), where)
                checked += 1
            if predictions and len(levels) == 2 and v != p:
                # two groups: aif360's between_group equals the report's partition version
                agree("between_group_theil_index", val[(a, None, "between_group_theil_index")],
                      call(cm.between_group_theil_index), where)  # fmt: skip
                agree("between_group_generalized_entropy_index",
                      val[(a, None, "between_group_generalized_entropy_index")],
                      call(cm.between_group_generalized_entropy_index, alpha), where)  # fmt: skip
                checked += 2
    return checked


# ---------------------------------------------------------------------------------------------
# random data
# ---------------------------------------------------------------------------------------------


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(audit_cases(min_rows=2, max_rows=40, by=False, nulls=False, label_kinds=("int", "str", "bool"),
                   predictions=None))  # fmt: skip
def test_random_frames_match_aif360(case: Case) -> None:
    names = list(case.rows.keys)
    arrays = case.rows.arrays()
    privileged = {k: sorted(set(case.rows.keys[k]))[0] for k in names}
    alpha = case.options["alpha"] if case.options["alpha"] != 0.0 else 2.0
    concentration = case.options["concentration"] or 1.0
    rep = pf.fairness_report(
        case.df, **case.kwargs, privileged=privileged, alpha=alpha, concentration=concentration
    )
    aif = Aif(case.rows.keys, arrays["y"], arrays["p"], None if case.rows.s is None else arrays["s"],
              None if case.rows.wt is None else arrays["w"])  # fmt: skip
    n = check_against_aif360(rep, aif, names, privileged, alpha, concentration, case.rows.has_predictions)
    assert n >= 6


@pytest.mark.parametrize("alpha", [0.0, 0.5, 1.0, 2.0, 3.0])
def test_entropy_alphas_match_aif360(alpha: float) -> None:
    rng = np.random.default_rng(int(alpha * 10))
    n = 300
    keys = {"a": list(rng.choice(["x", "y", "z"], n)), "b": list(rng.choice(["u", "v"], n))}
    y, p = rng.integers(0, 2, n), rng.integers(0, 2, n)
    df = pl.DataFrame({**keys, "y": y, "p": p})
    rep = pf.fairness_report(df, y_true="y", y_pred="p", protected=["a", "b"], alpha=alpha,
                             privileged={"a": "x", "b": "u"})  # fmt: skip
    aif = Aif(keys, y, p, None, None)
    assert check_against_aif360(rep, aif, ["a", "b"], {"a": "x", "b": "u"}, alpha, 1.0) > 50


@pytest.mark.parametrize("concentration", [0.1, 1.0, 10.0])
def test_edf_concentrations_match_aif360(concentration: float) -> None:
    rng = np.random.default_rng(7)
    n = 400
    keys = {"a": list(rng.choice(["x", "y", "z"], n)), "b": list(rng.choice(["u", "v", "w"], n))}
    y, p = rng.integers(0, 2, n), (rng.random(n) < 0.3).astype(int)
    w = rng.choice([0.5, 1.0, 2.0, 4.0], n)
    df = pl.DataFrame({**keys, "y": y, "p": p, "w": w})
    rep = pf.fairness_report(df, y_true="y", y_pred="p", protected=["a", "b"], weight="w",
                             concentration=concentration, privileged={"a": "x", "b": "u"})  # fmt: skip
    aif = Aif(keys, y, p, None, w)
    assert check_against_aif360(rep, aif, ["a", "b"], {"a": "x", "b": "u"}, 2.0, concentration) > 50


# ---------------------------------------------------------------------------------------------
# real data
# ---------------------------------------------------------------------------------------------


def test_compas_matches_aif360(compas: pl.DataFrame) -> None:
    df = compas.select("race", "sex", "two_year_recid", "decile_score").with_columns(
        pred=(pl.col("decile_score") >= 5).cast(pl.Int64), score=pl.col("decile_score") / 10.0
    )
    privileged = {"race": "Caucasian", "sex": "Male"}
    rep = pf.fairness_report(df, y_true="two_year_recid", y_pred="pred", y_score="score",
                             protected=["race", "sex"], privileged=privileged)  # fmt: skip
    keys = {k: df[k].to_list() for k in ("race", "sex")}
    aif = Aif(keys, df["two_year_recid"].to_numpy(), df["pred"].to_numpy(), df["score"].to_numpy(), None)
    assert check_against_aif360(rep, aif, ["race", "sex"], privileged, 2.0, 1.0) > 200


def test_compas_labels_only_matches_aif360(compas: pl.DataFrame) -> None:
    privileged = {"race": "Caucasian", "sex": "Male"}
    rep = pf.fairness_report(compas, y_true="two_year_recid", protected=["race", "sex"], privileged=privileged)
    keys = {k: compas[k].to_list() for k in ("race", "sex")}
    y = compas["two_year_recid"].to_numpy()
    aif = Aif(keys, y, y, None, None)
    assert check_against_aif360(rep, aif, ["race", "sex"], privileged, 2.0, 1.0, predictions=False) > 20


def test_adult_weighted_matches_aif360() -> None:
    adult = pf.load_adult().select(
        pl.col("race").cast(pl.String), pl.col("sex").cast(pl.String), "income_gt_50k", "fnlwgt",
        pred=((pl.col("education_num") >= 13) | (pl.col("capital_gain") > 5000)).cast(pl.Int64),
    )  # fmt: skip
    privileged = {"race": "White", "sex": "Male"}
    rep = pf.fairness_report(adult, y_true="income_gt_50k", y_pred="pred", protected=["race", "sex"],
                             weight="fnlwgt", privileged=privileged)  # fmt: skip
    keys = {k: adult[k].to_list() for k in ("race", "sex")}
    aif = Aif(keys, adult["income_gt_50k"].to_numpy(), adult["pred"].to_numpy(), None,
              adult["fnlwgt"].to_numpy().astype(float))  # fmt: skip
    assert check_against_aif360(rep, aif, ["race", "sex"], privileged, 2.0, 1.0) > 200


def test_aif360_repository_cases() -> None:
    """aif360's own tests (test_classification_metric.py), through the report."""
    feat = [0, 0, 1, 1, 1, 1, 2, 2, 2, 2]
    label = [1, 0, 0, 1, 0, 0, 1, 0, 1, 1]
    pred = [1, 0, 0, 0, 1, 1, 1, 0, 1, 0]
    df = pl.DataFrame({"feat": feat, "label": label, "pred": pred})
    pop = pf.fairness_report(df, y_true="label", y_pred="pred", protected="feat").filter(
        pl.col("attribute").is_null()
    )
    v = dict(zip(pop["metric"], pop["value"]))
    assert v["generalized_entropy_index"] == pytest.approx(0.2, rel=1e-14)
    assert v["theil_index"] == pytest.approx(4 * np.log(2) / 10, rel=1e-14)
    b = np.array([1, 1, 1.25, 1.25, 1.25, 1.25, 0.75, 0.75, 0.75, 0.75])
    assert v["between_all_groups_generalized_entropy_index"] == pytest.approx(1 / 20 * np.sum(b**2 - 1), rel=1e-12)
    df2 = df.with_columns(pred=pl.Series([0, 1, 1, 0, 0, 0, 0, 1, 1, 1]))
    pop2 = pf.fairness_report(df2, y_true="label", y_pred="pred", protected="feat").filter(
        pl.col("attribute").is_null(), metric="generalized_entropy_index"
    )
    assert pop2["value"].item() == pytest.approx(0.3, rel=1e-14)
    # between_group (feat 0 vs 1 only, both of two groups)
    d3 = pl.DataFrame({"feat": [0, 0, 1, 1, 1, 1], "label": [1, 0, 0, 1, 0, 0], "pred": [0, 0, 0, 0, 1, 1]})
    r3 = pf.fairness_report(d3, y_true="label", y_pred="pred", protected="feat")
    b3 = np.array([0.5, 0.5, 1.25, 1.25, 1.25, 1.25])
    got = r3.filter(attribute="feat", metric="between_group_generalized_entropy_index")["value"].item()
    assert got == pytest.approx(1 / 12 * np.sum(b3**2 - 1), rel=1e-12)


@pytest.mark.parametrize(
    ("attribute", "group", "metric"),
    [("race", "African-American", "false_positive_rate"), (None, None, "theil_index"),
     ("race & sex", None, "smoothed_empirical_differential_fairness"),
     ("sex", "Female", "average_odds_difference"), (None, None, "between_all_groups_coefficient_of_variation")],
)  # fmt: skip
def test_the_comparison_can_fail(compas: pl.DataFrame, attribute, group, metric) -> None:
    """Guard against a vacuous differential test: a perturbed report must be caught."""
    df = compas.select("race", "sex", "two_year_recid", pred=(pl.col("decile_score") >= 5).cast(pl.Int64))
    privileged = {"race": "Caucasian", "sex": "Male"}
    rep = pf.fairness_report(df, y_true="two_year_recid", y_pred="pred", protected=["race", "sex"],
                             privileged=privileged)  # fmt: skip
    hit = pl.col("attribute").eq_missing(attribute) & pl.col("group").eq_missing(group) & (pl.col("metric") == metric)
    assert rep.filter(hit).height == 1
    bad = rep.with_columns(value=pl.when(hit).then(pl.col("value") * (1 + 1e-9)).otherwise(pl.col("value")))
    keys = {k: df[k].to_list() for k in ("race", "sex")}
    aif = Aif(keys, df["two_year_recid"].to_numpy(), df["pred"].to_numpy(), None, None)
    with pytest.raises(AssertionError, match=metric):
        check_against_aif360(bad, aif, ["race", "sex"], privileged, 2.0, 1.0)
