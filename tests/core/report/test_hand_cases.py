"""Small cases whose expected numbers were worked out by hand, and ProPublica's COMPAS numbers."""

from __future__ import annotations

import math

import polars as pl
import pytest

import polfair as pf


def values(rep: pl.DataFrame, attribute: str | None, group: str | None, column: str = "value") -> dict:
    """metric -> column for one (attribute, group) of a report."""
    sel = rep.filter(pl.col("attribute").eq_missing(attribute), pl.col("group").eq_missing(group))
    return dict(zip(sel["metric"], sel[column]))


def approx(x: float) -> object:
    return pytest.approx(x, rel=1e-12, abs=1e-15)


# ---------------------------------------------------------------------------------------------
# Case 1: six rows, two groups, privileged = m
#   sex  f f f | m m m
#   y    1 0 1 | 1 0 0
#   ŷ    1 1 0 | 1 0 1
#   f: TP 1, FP 1, TN 0, FN 1      m: TP 1, FP 1, TN 1, FN 0
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def case1() -> pl.DataFrame:
    df = pl.DataFrame({"sex": ["f", "f", "f", "m", "m", "m"], "y": [1, 0, 1, 1, 0, 0], "p": [1, 1, 0, 1, 0, 1]})
    return pf.fairness_report(df, y_true="y", y_pred="p", protected="sex", privileged={"sex": "m"})


def test_case1_group_metrics(case1) -> None:
    f, m = values(case1, "sex", "f"), values(case1, "sex", "m")
    expected_f = {
        "num_instances": 3, "num_positives": 2, "num_negatives": 1, "base_rate": 2 / 3,
        "num_pred_positives": 2, "num_pred_negatives": 1, "selection_rate": 2 / 3,
        "num_true_positives": 1, "num_false_positives": 1, "num_true_negatives": 0, "num_false_negatives": 1,
        "true_positive_rate": 1 / 2, "true_negative_rate": 0, "false_positive_rate": 1,
        "false_negative_rate": 1 / 2, "positive_predictive_value": 1 / 2, "negative_predictive_value": 0,
        "false_discovery_rate": 1 / 2, "false_omission_rate": 1, "accuracy": 1 / 3, "error_rate": 2 / 3,
        # without scores the generalized counts are the hard ones
        "num_generalized_true_positives": 1, "generalized_true_positive_rate": 1 / 2,
        "generalized_false_positive_rate": 1, "n_missing": 0,
    }  # fmt: skip
    expected_m = {
        "base_rate": 1 / 3, "selection_rate": 2 / 3, "true_positive_rate": 1, "true_negative_rate": 1 / 2,
        "false_positive_rate": 1 / 2, "false_negative_rate": 0, "positive_predictive_value": 1 / 2,
        "negative_predictive_value": 1, "false_discovery_rate": 1 / 2, "false_omission_rate": 0,
        "accuracy": 2 / 3, "error_rate": 1 / 3,
    }  # fmt: skip
    for k, v in expected_f.items():
        assert f[k] == approx(v), k
    for k, v in expected_m.items():
        assert m[k] == approx(v), k


def test_case1_comparisons_with_privileged(case1) -> None:
    d, r = values(case1, "sex", "f", "difference"), values(case1, "sex", "f", "ratio")
    ref = values(case1, "sex", "f", "reference_group")
    assert ref["selection_rate"] == "m" and ref["disparate_impact"] == "m"
    assert d["base_rate"] == approx(1 / 3) and r["base_rate"] == approx(2)
    assert d["true_positive_rate"] == approx(-1 / 2) and r["true_positive_rate"] == approx(1 / 2)
    assert d["false_negative_rate"] == approx(1 / 2)
    assert r["false_negative_rate"] is None  # 0.5 / 0: undefined, not inf
    assert r["negative_predictive_value"] == approx(0)
    f = values(case1, "sex", "f")
    expected = {
        "statistical_parity_difference": 0, "disparate_impact": 1, "equal_opportunity_difference": -1 / 2,
        "average_odds_difference": 0.5 * ((1 - 1 / 2) + (1 / 2 - 1)),
        "average_abs_odds_difference": 0.5 * (1 / 2 + 1 / 2), "equalized_odds_difference": 1 / 2,
        "average_predictive_value_difference": 0.5 * ((1 / 2 - 1 / 2) + (1 - 0)),
        "generalized_equalized_odds_difference": 1 / 2,
        "error_rate_difference": 1 / 3, "error_rate_ratio": 2, "false_positive_rate_difference": 1 / 2,
        "false_positive_rate_ratio": 2, "false_negative_rate_difference": 1 / 2,
        "false_discovery_rate_difference": 0, "false_discovery_rate_ratio": 1,
        "false_omission_rate_difference": 1,
    }  # fmt: skip
    for k, v in expected.items():
        assert f[k] == approx(v), k
    assert f["false_negative_rate_ratio"] is None and f["false_omission_rate_ratio"] is None
    # the privileged group against itself
    m = values(case1, "sex", "m")
    assert m["disparate_impact"] == 1 and m["statistical_parity_difference"] == 0


def test_case1_attribute_rows(case1) -> None:
    d, r = values(case1, "sex", None, "difference"), values(case1, "sex", None, "ratio")
    v = values(case1, "sex", None)
    assert d["selection_rate"] == approx(0) and r["selection_rate"] == approx(1)
    assert d["base_rate"] == approx(1 / 3) and r["base_rate"] == approx(1 / 2)
    assert d["true_positive_rate"] == approx(1 / 2) and r["true_positive_rate"] == approx(1 / 2)
    assert d["false_negative_rate"] == approx(1 / 2) and r["false_negative_rate"] == approx(0)
    assert v["demographic_parity_difference"] == approx(0) and v["demographic_parity_ratio"] == approx(1)
    assert v["equalized_odds_difference"] == approx(1 / 2) and v["equalized_odds_ratio"] == approx(1 / 2)
    # between-group: group mean benefits f (1+2+0)/3 = 1, m (1+1+2)/3 = 4/3, μ = 7/6
    assert v["between_group_generalized_entropy_index"] == approx(1 / 98)
    assert v["between_group_coefficient_of_variation"] == approx(math.sqrt(2 / 98))
    theil = (1 / 2) * (6 / 7) * math.log(6 / 7) + (1 / 2) * (8 / 7) * math.log(8 / 7)
    assert v["between_group_theil_index"] == approx(theil)
    # EDF on labels: smoothed base rates (2 + ½)/(3 + 1) = 5/8 and 3/8
    assert v["smoothed_empirical_differential_fairness"] == approx(math.log(5 / 3))
    assert v["smoothed_empirical_differential_fairness_predictions"] == approx(0)
    assert case1.filter(pl.col("group").is_null(), attribute="sex")["n"].unique().to_list() == [6]


def test_case1_population(case1) -> None:
    v = values(case1, None, None)
    assert v["num_instances"] == 6 and v["num_true_positives"] == 2 and v["num_false_negatives"] == 1
    assert v["selection_rate"] == approx(4 / 6) and v["true_positive_rate"] == approx(2 / 3)
    # benefits b = 1 + ŷ − y = [1, 2, 0, 1, 1, 2], μ = 7/6
    assert v["generalized_entropy_index"] == approx(17 / 98)
    assert v["coefficient_of_variation"] == approx(math.sqrt(17) / 7)
    assert v["theil_index"] == approx(3 / 7 * math.log(6 / 7) + 4 / 7 * math.log(12 / 7))
    assert v["between_all_groups_generalized_entropy_index"] == approx(1 / 98)
    assert v["smoothed_empirical_differential_fairness"] == approx(math.log(5 / 3))
    assert v["differential_fairness_bias_amplification"] == approx(-math.log(5 / 3))
    assert "disparate_impact" not in v and case1.filter(pl.col("attribute").is_null())["n"].unique().to_list() == [6]


def test_case1_alpha_and_concentration() -> None:
    df = pl.DataFrame({"sex": ["f", "f", "f", "m", "m", "m"], "y": [1, 0, 1, 1, 0, 0], "p": [1, 1, 0, 1, 0, 1]})
    rep = pf.fairness_report(df, y_true="y", y_pred="p", protected="sex", alpha=3.0, concentration=2.0)
    v = values(rep, None, None)
    # GE(3) = mean((b/μ)³ − 1) / 6, Σb³ = 1 + 8 + 0 + 1 + 1 + 8 = 19
    assert v["generalized_entropy_index"] == approx(((19 / 6) / (7 / 6) ** 3 - 1) / 6)
    # concentration 2: (2 + 1)/(3 + 2) = 3/5 and (1 + 1)/(3 + 2) = 2/5
    assert v["smoothed_empirical_differential_fairness"] == approx(math.log(3 / 2))
    # α = 0 with a false negative (b = 0) is +inf, as aif360
    rep0 = pf.fairness_report(df, y_true="y", y_pred="p", protected="sex", alpha=0.0)
    assert values(rep0, None, None)["generalized_entropy_index"] == math.inf


# ---------------------------------------------------------------------------------------------
# Case 2: weights, and rates undefined in one group
#   g  a a | b b      w  2 1 | 3 0.5
#   y  1 1 | 0 0      a: TP 2, FN 1 (weighted)   b: FP 3, TN 0.5
#   ŷ  1 0 | 1 0      largest group by weight: b (3.5 > 3)
# ---------------------------------------------------------------------------------------------


def test_case2_weights_and_undefined_rates() -> None:
    df = pl.DataFrame({"g": ["a", "a", "b", "b"], "y": [1, 1, 0, 0], "p": [1, 0, 1, 0], "w": [2.0, 1.0, 3.0, 0.5]})
    rep = pf.fairness_report(df, y_true="y", y_pred="p", protected="g", weight="w")
    a, b = values(rep, "g", "a"), values(rep, "g", "b")
    assert a["num_instances"] == 3 and a["num_true_positives"] == 2 and a["num_false_negatives"] == 1
    assert a["true_positive_rate"] == approx(2 / 3) and a["selection_rate"] == approx(2 / 3)
    assert b["false_positive_rate"] == approx(6 / 7) and b["selection_rate"] == approx(6 / 7)
    assert a["false_positive_rate"] is None and b["true_positive_rate"] is None  # no negatives / positives
    assert b["positive_predictive_value"] == approx(0) and b["false_omission_rate"] == approx(0)
    assert a["negative_predictive_value"] == approx(0) and a["false_discovery_rate"] == approx(0)
    assert values(rep, "g", "a", "reference_group")["selection_rate"] == "b"
    assert a["statistical_parity_difference"] == approx(2 / 3 - 6 / 7)
    assert a["disparate_impact"] == approx(7 / 9)
    for k in ("equal_opportunity_difference", "average_odds_difference", "equalized_odds_difference"):
        assert a[k] is None, k  # TPR of b / FPR of a undefined: never a silent 0
    # spreads are null when a group's value is undefined
    assert values(rep, "g", None, "difference")["true_positive_rate"] is None
    assert values(rep, "g", None)["equalized_odds_difference"] is None
    pop = values(rep, None, None)
    # entropy is unweighted: b = [1, 0, 2, 1], μ = 1, GE(2) = mean(b² − 1)/2 = 1/4
    assert pop["generalized_entropy_index"] == approx(1 / 4)
    # EDF is weighted: a (3 + ½)/(3 + 1) = 7/8, b (0 + ½)/(3.5 + 1) = 1/9
    assert pop["smoothed_empirical_differential_fairness"] == approx(math.log(63 / 8))


# ---------------------------------------------------------------------------------------------
# Case 3: reference groups
#   g  x x | y y y | z      x: TP 1, FP 1       sel 1,   TPR 1,   FPR 1
#   y  1 0 | 1 1 0 | 1      y: TP 1, FN 1, TN 1 sel 1/3, TPR 1/2, FPR 0
#   ŷ  1 1 | 1 0 0 | 1      z: TP 1             sel 1,   TPR 1,   FPR null
#   overall: TP 3, FP 1, FN 1, TN 1: sel 2/3, TPR 3/4, FPR 1/2
# ---------------------------------------------------------------------------------------------

CASE3 = pl.DataFrame({"g": list("xxyyyz"), "y": [1, 0, 1, 1, 0, 1], "p": [1, 1, 1, 0, 0, 1]})


def rep3(**kw) -> pl.DataFrame:
    return pf.fairness_report(CASE3, y_true="y", y_pred="p", protected="g", **kw)


def test_case3_largest_default() -> None:
    rep = rep3()
    x = values(rep, "g", "x")
    assert values(rep, "g", "x", "reference_group")["selection_rate"] == "y"
    assert x["statistical_parity_difference"] == approx(2 / 3) and x["disparate_impact"] == approx(3)
    assert values(rep, "g", "x", "difference")["selection_rate"] == approx(2 / 3)


def test_case3_overall() -> None:
    rep = rep3(reference="overall")
    x = values(rep, "g", "x")
    assert values(rep, "g", "x", "reference_group")["false_positive_rate"] == "overall"
    assert x["statistical_parity_difference"] == approx(1 / 3) and x["disparate_impact"] == approx(3 / 2)
    assert x["equal_opportunity_difference"] == approx(1 / 4)
    assert x["average_odds_difference"] == approx(0.5 * (1 / 2 + 1 / 4))


def test_case3_best() -> None:
    rep = rep3(reference="best")
    names = values(rep, "g", "y", "reference_group")
    assert names["selection_rate"] == "x"  # highest, first in key order among ties (x, z)
    assert names["false_positive_rate"] == "y"  # lowest is better
    assert names["average_odds_difference"] == "y / x"  # FPR from y, TPR from x
    y = values(rep, "g", "y")
    assert y["average_odds_difference"] == approx(0.5 * ((0 - 0) + (1 / 2 - 1)))
    assert values(rep, "g", "x")["average_odds_difference"] == approx(0.5 * ((1 - 0) + (1 - 1)))


def test_case3_privileged_list_and_missing() -> None:
    rep = rep3(privileged={"g": ["x", "z"]})  # pooled x + z: TP 2, FP 1 -> sel 1, TPR 1, FPR 1
    assert values(rep, "g", "y", "reference_group")["selection_rate"] == "x|z"
    y = values(rep, "g", "y")
    assert y["statistical_parity_difference"] == approx(1 / 3 - 1)
    assert y["false_positive_rate_difference"] == approx(-1)
    # a privileged value that does not occur: undefined reference, null comparisons, and a warning
    with pytest.warns(pf.ReferenceWarning, match="'w' does not occur in column 'g'"):
        rep_none = rep3(privileged={"g": "w"})
    assert values(rep_none, "g", "y")["disparate_impact"] is None
    assert values(rep_none, "g", "y", "reference_group")["disparate_impact"] == "w"


def test_privileged_only_for_some_attributes() -> None:
    df = CASE3.with_columns(s=pl.Series(list("mfmfmf")))
    rep = pf.fairness_report(df, y_true="y", y_pred="p", protected=["g", "s"], privileged={"s": "m"})
    # s: privileged; g: largest; g & s: not all privileged -> largest
    assert values(rep, "s", "f", "reference_group")["selection_rate"] == "m"
    assert values(rep, "g", "x", "reference_group")["selection_rate"] == "y"
    strict = pf.fairness_report(df, y_true="y", y_pred="p", protected=["g", "s"], privileged={"s": "m"},
                                reference="privileged")  # fmt: skip
    assert values(strict, "g", "x")["disparate_impact"] is None
    assert values(strict, "g & s", "x & f", "reference_group")["selection_rate"] is None
    assert values(strict, "s", "f", "reference_group")["selection_rate"] == "m"


# ---------------------------------------------------------------------------------------------
# groups: intersections, nulls, booleans, binned numerics, labels-only, scores
# ---------------------------------------------------------------------------------------------


def test_intersections_and_group_names() -> None:
    df = pl.DataFrame({"a": ["u", "u", "v", None], "b": [True, False, True, True], "c": [1, 2, 1, 2],
                       "y": [1, 0, 1, 0], "p": [1, 1, 0, 0]})  # fmt: skip
    rep = pf.fairness_report(df, y_true="y", y_pred="p", protected=["a", "b", "c"])
    assert rep["attribute"].unique(maintain_order=True).to_list() == [
        None, "a", "b", "c", "a & b", "a & c", "b & c", "a & b & c"
    ]  # fmt: skip
    groups = rep.filter(pl.col("group").is_not_null(), attribute="a & b", metric="num_instances")["group"].to_list()
    assert groups == ["null & true", "u & false", "u & true", "v & true"]  # sorted by keys, nulls first
    assert rep.filter(attribute="c", group="2", metric="num_instances")["value"].item() == 2
    two = pf.fairness_report(df, y_true="y", y_pred="p", protected=["a", "b", "c"], intersections=2)
    assert "a & b & c" not in two["attribute"].to_list() and "b & c" in two["attribute"].to_list()
    explicit = pf.fairness_report(df, y_true="y", y_pred="p", protected=["a", "b", "c"],
                                  intersections=[["c", "a"]])  # fmt: skip
    assert explicit["attribute"].drop_nulls().unique().to_list() == ["a & c"]  # canonical order


def test_binned_numeric_attribute() -> None:
    df = pl.DataFrame({"age": [19, 23, 30, 44, 50, 70], "y": [1, 0, 1, 1, 0, 0], "p": [1, 1, 0, 1, 0, 1]})
    band = pl.when(pl.col("age") < 25).then(pl.lit("<25")).when(pl.col("age") < 45).then(pl.lit("25-44")) \
        .otherwise(pl.lit("45+")).alias("age_band")  # fmt: skip
    rep = pf.fairness_report(df, y_true="y", y_pred="p", protected=band)
    n = rep.filter(pl.col("group").is_not_null(), attribute="age_band", metric="num_instances")
    assert dict(zip(n["group"], n["value"])) == {"25-44": 2, "45+": 2, "<25": 2}


def test_labels_only_audit() -> None:
    df = pl.DataFrame({"g": list("aaabbb"), "y": ["yes", "no", "yes", "no", "no", "yes"]})
    rep = pf.fairness_report(df, y_true="y", protected="g", favorable="yes", privileged={"g": "b"})
    a = values(rep, "g", "a")
    assert set(a) == {"n_missing", "num_instances", "num_positives", "num_negatives", "base_rate",
                      "statistical_parity_difference", "disparate_impact"}  # fmt: skip
    assert a["base_rate"] == approx(2 / 3)
    assert a["statistical_parity_difference"] == approx(1 / 3) and a["disparate_impact"] == approx(2)
    pop = values(rep, None, None)
    # (2 + ½)/(3 + 1) = 5/8 and (1 + ½)/4 = 3/8
    assert pop["smoothed_empirical_differential_fairness"] == approx(math.log(5 / 3))
    assert "theil_index" not in pop


def test_scores_threshold_and_generalized_counts() -> None:
    df = pl.DataFrame({"g": list("aabb"), "y": [1, 0, 1, 0], "s": [0.8, 0.3, 0.4, 0.6]})
    rep = pf.fairness_report(df, y_true="y", y_score="s", protected="g", threshold=0.5)
    a, b = values(rep, "g", "a"), values(rep, "g", "b")
    assert a["num_true_positives"] == 1 and a["num_true_negatives"] == 1  # 0.8 ≥ .5, 0.3 < .5
    assert b["num_false_negatives"] == 1 and b["num_false_positives"] == 1
    assert a["num_generalized_true_positives"] == approx(0.8)
    assert a["num_generalized_false_positives"] == approx(0.3)
    assert a["num_generalized_true_negatives"] == approx(0.7)
    assert a["num_generalized_false_negatives"] == approx(0.2)
    assert b["generalized_true_positive_rate"] == approx(0.4)
    assert b["generalized_false_positive_rate"] == approx(0.6)
    low = pf.fairness_report(df, y_true="y", y_score="s", protected="g", threshold=0.35)
    assert values(low, "g", "b")["num_true_positives"] == 1  # 0.4 ≥ 0.35


def test_favorable_zero_flips_the_roles() -> None:
    df = pl.DataFrame({"g": list("aabb"), "y": [0, 0, 1, 0], "p": [0, 1, 0, 0]})
    rep = pf.fairness_report(df, y_true="y", y_pred="p", protected="g", favorable=0)
    a = values(rep, "g", "a")
    assert a["num_positives"] == 2 and a["num_true_positives"] == 1 and a["num_false_negatives"] == 1
    assert a["base_rate"] == 1.0


def test_by_gives_one_report_per_value() -> None:
    df = pl.DataFrame({"m": [1, 1, 2, 2], "g": list("abab"), "y": [1, 0, 1, 1], "p": [1, 1, 0, 1]})
    rep = pf.fairness_report(df, y_true="y", y_pred="p", protected="g", by="m")
    assert rep.columns[: 1 + len(pf.REPORT_COLUMNS)] == ["m", *pf.REPORT_COLUMNS]
    assert rep.filter(m=1, attribute="g", group="b", metric="false_positive_rate")["value"].item() == 1.0
    assert rep.filter(m=2, attribute="g", group="a", metric="true_positive_rate")["value"].item() == 0.0
    assert rep.filter(m=2, attribute="g", group="b", metric="false_positive_rate")["value"].item() is None


def test_report_schema() -> None:
    rep = rep3()
    # the core columns, then (issue 15) n_groups / excluded_groups and the typed group key
    assert rep.select(pf.REPORT_COLUMNS).schema == pl.Schema({
        "attribute": pl.Categorical(), "group": pl.String, "metric": pl.Categorical(), "value": pl.Float64,
        "reference_group": pl.Categorical(), "difference": pl.Float64, "ratio": pl.Float64, "n": pl.Int64,
    })  # fmt: skip
    assert tuple(rep.columns[: len(pf.REPORT_COLUMNS)]) == pf.REPORT_COLUMNS
    assert rep.columns[-4:] == ["n_groups", "excluded_groups", "group_key", "harm"]  # harm: schema 3
    assert rep.schema["n_groups"] == pl.Int64 and rep.schema["excluded_groups"] == pl.String
    assert isinstance(rep.schema["group_key"], pl.Struct)
    # no NaN anywhere: undefined is null
    for c in ("value", "difference", "ratio"):
        assert rep[c].is_nan().sum() == 0


def test_counts_are_exact_64_bit() -> None:
    """Unweighted counts are UInt64 (Polars' boolean sum is 32-bit): a large count stays exact."""
    big = 3_000_000_000
    cells = pl.DataFrame({"g": ["a", "a"], "n": [big, big], "n_missing": [0, 0], "n_invalid": [0, 0]}).cast(
        {"n": pl.UInt64, "n_missing": pl.UInt64, "n_invalid": pl.UInt64}
    )
    # merge_counts sums UInt64 without wrapping
    full = cells.with_columns(
        [pl.lit(1.0).alias(c) for c in pf.COUNT_COLUMNS if c not in ("n", "n_missing", "n_invalid") and not c.endswith("_n")]
        + [pl.lit(1, pl.UInt64).alias(c) for c in ("tp_n", "fp_n", "tn_n", "fn_n")]
    ).select("g", *pf.COUNT_COLUMNS)
    merged = pf.merge_counts([full[:1], full[1:]]).collect()
    assert merged["n"].item() == 2 * big and merged.schema["n"] == pl.UInt64


# ---------------------------------------------------------------------------------------------
# COMPAS: ProPublica's numbers (polfair/data/README.md)
# ---------------------------------------------------------------------------------------------


def test_compas_propublica_numbers(compas: pl.DataFrame) -> None:
    assert compas.height == 6172
    rep = compas.pipe(
        pf.fairness_report, y_true="two_year_recid", y_pred=pl.col("decile_score") >= 5,
        protected=["race", "sex"], privileged={"race": "Caucasian", "sex": "Male"},
    )  # fmt: skip
    expected = {
        "African-American": {"n": 3175, "base_rate": 0.5231, "selection_rate": 0.5761,
                             "false_positive_rate": 0.4234, "false_negative_rate": 0.2848},
        "Caucasian": {"n": 2103, "base_rate": 0.3909, "selection_rate": 0.3310,
                      "false_positive_rate": 0.2201, "false_negative_rate": 0.4964},
    }  # fmt: skip
    for race, exp in expected.items():
        v = values(rep, "race", race)
        assert rep.filter(attribute="race", group=race)["n"].unique().to_list() == [exp["n"]]
        for metric in ("base_rate", "selection_rate", "false_positive_rate", "false_negative_rate"):
            assert round(v[metric], 4) == exp[metric], (race, metric, v[metric])
    aa = values(rep, "race", "African-American")
    # the disparity ProPublica reported: Black defendants' FPR about twice, FNR about half the white one
    assert aa["false_positive_rate_ratio"] == pytest.approx(0.4234 / 0.2201, rel=1e-3)
    assert aa["false_negative_rate_ratio"] == pytest.approx(0.2848 / 0.4964, rel=1e-3)
    assert values(rep, "race", "African-American", "reference_group")["false_positive_rate"] == "Caucasian"
    # every row is accounted for
    assert rep.filter(attribute="race", metric="n_missing")["n"].sum() == 6172
