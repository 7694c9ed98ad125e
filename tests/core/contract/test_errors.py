"""Bad input (issue 2, item 8): clear errors naming the column and the fix; null accounting."""

from __future__ import annotations

import warnings

import polars as pl
import pytest

import polfair as pf


@pytest.fixture
def df() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "label": [1, 0, 1, 1, 0, 0],
            "pred": [1, 1, 0, 1, 0, 1],
            "score": [0.9, 0.6, 0.2, 0.7, 0.1, 0.5],
            "race": ["a", "b", "a", "b", "a", "b"],
            "sex": ["f", "f", "m", "m", "f", "m"],
            "w": [1.0, 2.0, 1.0, 0.5, 1.0, 1.0],
        }
    )


BASE = {"y_true": "label", "y_pred": "pred", "protected": ["race", "sex"]}


def run(data, **kw):
    return pf.fairness_report(data, **{**BASE, **kw})


# ---------------------------------------------------------------------------------------------
# missing columns
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kw", "role", "missing", "suggestion"),
    [
        ({"protected": ["rac", "sex"]}, "protected", "rac", "race"),
        ({"y_true": "lable"}, "y_true", "lable", "label"),
        ({"y_pred": "prde"}, "y_pred", "prde", "pred"),
        ({"y_pred": None, "y_score": "scores"}, "y_score", "scores", "score"),
        ({"weight": "ww"}, "weight", "ww", "w"),
        ({"by": "rca"}, "by", "rca", "race"),
        ({"protected": [pl.col("sexx").alias("s2")]}, "protected", "sexx", "sex"),
    ],
)
def test_missing_column_names_it_and_suggests(df, kw, role, missing, suggestion) -> None:
    with pytest.raises(pf.ColumnNotFoundError) as exc:
        run(df, **kw)
    msg = str(exc.value)
    assert role in msg and repr(missing) in msg
    assert f"Did you mean {suggestion!r}" in msg
    assert "Available columns" in msg
    # the same check happens in confusion_counts, at call time (before any collect)
    with pytest.raises(pf.ColumnNotFoundError):
        pf.confusion_counts(df.lazy(), **{**BASE, **kw})


def test_missing_column_without_close_name_lists_columns(df) -> None:
    with pytest.raises(pf.ColumnNotFoundError, match=r"'zzz' is not in the input\. Available columns: label"):
        run(df, weight="zzz")


def test_column_errors_are_value_errors(df) -> None:
    with pytest.raises(ValueError):
        run(df, y_true="nope")


# ---------------------------------------------------------------------------------------------
# labels / predictions outside favorable and unfavorable
# ---------------------------------------------------------------------------------------------


def test_label_neither_favorable_nor_unfavorable(df) -> None:
    bad = df.with_columns(label=pl.Series([1, 0, 2, 1, 7, 0]))
    with pytest.raises(pf.InvalidInputError) as exc:
        run(bad, unfavorable=0)
    msg = str(exc.value)
    assert "y_true='label'" in msg and "2 rows" in msg
    assert "[2, 7]" in msg or "[7, 2]" in msg  # example values
    assert "drop unfavorable=" in msg  # the fix
    # without unfavorable= every other value is unfavorable: no error, and nothing is lost
    rep = run(bad, on_missing="raise")
    assert rep.filter(pl.col("attribute").is_null(), metric="num_negatives")["value"].item() == 4.0  # 0, 2, 7, 0
    # the invalid rows are counted in the cell table
    cells = pf.confusion_counts(bad, **BASE, unfavorable=0).collect()
    assert cells["n_invalid"].sum() == 2 and cells["n"].sum() == 6


def test_string_label_neither(df) -> None:
    s = df.with_columns(label=pl.Series(["yes", "no", "maybe", "yes", "no", "no"]),
                        pred=pl.Series(["yes", "yes", "no", "no", "no", "yes"]))  # fmt: skip
    with pytest.raises(pf.InvalidInputError, match=r"y_true='label'.*'maybe'"):
        run(s, favorable="yes", unfavorable="no")


def test_prediction_neither_favorable_nor_unfavorable(df) -> None:
    bad = df.with_columns(pred=pl.Series([1, 0, 3, 1, 0, 0]))
    with pytest.raises(pf.InvalidInputError, match=r"y_pred='pred'.*\[3\]"):
        run(bad, unfavorable=0)


def test_favorable_of_the_wrong_type(df) -> None:
    with pytest.raises(pf.InvalidInputError, match=r"favorable='yes'.*dtype Int64.*favorable=1"):
        run(df, favorable="yes")


def test_favorable_and_unfavorable_overlap(df) -> None:
    with pytest.raises(pf.PolfairError, match="overlap"):
        run(df, favorable=[0, 1], unfavorable=1)


# ---------------------------------------------------------------------------------------------
# scores and weights
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad_value", [1.5, -0.1, float("inf")])
def test_score_outside_unit_interval_or_infinite(df, bad_value) -> None:
    bad = df.with_columns(score=pl.Series([0.9, bad_value, 0.2, 0.7, 0.1, 0.5]))
    with pytest.raises(pf.InvalidInputError) as exc:
        run(bad, y_pred=None, y_score="score")
    msg = str(exc.value)
    assert "y_score='score'" in msg and "1 rows" in msg and "infinite or outside [0, 1]" in msg
    assert "rescale" in msg or "clip" in msg
    # also when the score only feeds the generalized counts next to y_pred
    with pytest.raises(pf.InvalidInputError, match="y_score"):
        run(bad, y_score="score")


def test_non_numeric_score(df) -> None:
    with pytest.raises(pf.InvalidInputError, match="y_score must be numeric.*String"):
        run(df, y_pred=None, y_score="race")


def test_nan_scores_and_weights_are_missing(df) -> None:
    # issue 21 (the input contract): NaN is a missing value in every role, as null is (it was an
    # invalid score / weight before): counted in n_missing, warned about, left out of every rate
    bad = df.with_columns(score=pl.Series([0.9, float("nan"), 0.2, 0.7, 0.1, 0.5]),
                          w=pl.Series([1.0, 2.0, float("nan"), 1.0, 1.0, 1.0]))  # fmt: skip
    with pytest.warns(pf.MissingValuesWarning, match="1 with a null score, 1 with a null weight.*NaN counts as null"):
        rep = run(bad, y_score="score", weight="w")
    assert rep.filter(pl.col("attribute").is_null(), metric="n_missing")["value"].item() == 2


@pytest.mark.parametrize("bad_value", [-1.0, float("inf"), float("-inf")])
def test_negative_or_infinite_weights(df, bad_value) -> None:
    bad = df.with_columns(w=pl.Series([1.0, bad_value, 1.0, 1.0, 1.0, 1.0]))
    with pytest.raises(pf.InvalidInputError) as exc:
        run(bad, weight="w")
    msg = str(exc.value)
    assert "weight='w'" in msg and "negative or infinite" in msg and ">= 0" in msg


def test_non_numeric_weight(df) -> None:
    with pytest.raises(pf.InvalidInputError, match="weight must be numeric"):
        run(df, weight="sex")


def test_zero_weights_are_fine(df) -> None:
    rep = run(df.with_columns(w=pl.lit(0.0)), weight="w")
    pop = rep.filter(pl.col("attribute").is_null())
    assert pop.filter(metric="num_instances")["value"].item() == 0.0
    assert pop.filter(metric="selection_rate")["value"].item() is None  # 0/0 is undefined, not 0


# ---------------------------------------------------------------------------------------------
# empty input, label as protected attribute, options
# ---------------------------------------------------------------------------------------------


def test_empty_input(df) -> None:
    for empty in (df.clear(), df.lazy().filter(pl.col("label") > 5)):
        with pytest.raises(pf.InvalidInputError, match="no rows"):
            run(empty)


@pytest.mark.parametrize(
    "protected",
    [["race", "label"], "label", pl.col("label"), pl.col("label").alias("grp"), ["sex", pl.col("label").alias("x")]],
)
def test_protected_attribute_equal_to_label(df, protected) -> None:
    with pytest.raises(pf.PolfairError, match=r"is the label column y_true='label'.*protected="):
        run(df, protected=protected)


def test_derived_expression_of_label_is_allowed(df) -> None:
    # not the label itself (e.g. a deliberately coarsened copy): accepted
    rep = run(df, protected=(pl.col("label") * 10).alias("lab10"))
    assert "lab10" in rep["attribute"].to_list()


@pytest.mark.parametrize(
    ("kw", "pattern"),
    [
        ({"threshold": 1.5}, r"threshold must be in \[0, 1\]"),
        ({"on_missing": "skip"}, "on_missing must be one of"),
        ({"reference": "worst"}, "reference must be one of"),
        ({"privileged": {"age": 3}}, "privileged names 'age'"),
        ({"intersections": 0}, "intersections must be >= 1"),
        ({"intersections": [["race", "age"]]}, "intersections"),
        ({"concentration": -1.0}, "concentration must be non-negative"),
        ({"protected": ["race", "race"]}, "given twice"),
        ({"protected": [pl.col("race").alias("n")]}, "reserved"),
        ({"protected": []}, "protected"),
    ],
)
def test_bad_options(df, kw, pattern) -> None:
    with pytest.raises(pf.PolfairError, match=pattern):
        run(df, **kw)


def test_bad_data_type() -> None:
    with pytest.raises(TypeError, match="got list"):
        pf.fairness_report([1, 2], y_true="y", protected="g")
    with pytest.raises(pf.PolfairError, match="cannot tell the format"):
        pf.fairness_report("data.xlsx", y_true="y", protected="g")


# ---------------------------------------------------------------------------------------------
# null labels / predictions / scores / weights: counted, excluded, warned, or raised
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def with_nulls() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "label": [1, None, 0, 1, 0, 1, 0, 1],
            "pred": [1, 0, None, 1, 0, 0, 1, 1],
            "score": [0.9, 0.2, 0.6, None, 0.3, 0.4, 0.8, 0.7],
            "w": [1.0, 1.0, 1.0, 1.0, None, 2.0, 1.0, 1.0],
            "race": ["a", "a", "b", "b", "a", "b", None, "a"],
            "sex": ["f", "m", "f", "m", "f", "m", "f", "m"],
        }
    )


def test_null_values_are_counted_excluded_and_warned(with_nulls) -> None:
    kw = {"y_score": "score", "weight": "w"}
    with pytest.warns(pf.MissingValuesWarning) as rec:
        rep = run(with_nulls, **kw)
    msg = str(rec[0].message)
    for part in ("1 with a null label", "1 with a null prediction", "1 with a null score",
                 "1 with a null weight", "of 8 rows", "n_missing", "on_missing='ignore'"):  # fmt: skip
        assert part in msg, (part, msg)
    assert "y_true='label'" in msg and "weight='w'" in msg
    pop = rep.filter(pl.col("attribute").is_null())
    assert pop.filter(metric="n_missing")["value"].item() == 4.0
    assert pop["n"].unique().to_list() == [8]
    # the 4 complete rows only: rows 0, 5, 6, 7 -> weights 1, 2, 1, 1
    assert pop.filter(metric="num_instances")["value"].item() == 5.0
    # TP rows 0, 7 (w 1 + 1); FN row 5 (w 2); FP row 6 (w 1)
    assert pop.filter(metric="true_positive_rate")["value"].item() == pytest.approx(2 / 4)
    assert pop.filter(metric="false_positive_rate")["value"].item() == 1.0
    # per group: race a has rows 0, 1, 4, 7 -> rows 1 (null label) and 4 (null weight) missing
    a = rep.filter(attribute="race", group="a")
    assert a.filter(metric="n_missing")["value"].item() == 2.0
    assert a["n"].unique().to_list() == [4]
    # null protected value: its own group "null"
    assert rep.filter(attribute="race", group="null", metric="num_instances")["value"].item() == 1.0


def test_no_row_is_lost(with_nulls) -> None:
    cells = pf.confusion_counts(with_nulls, **BASE, y_score="score", weight="w").collect()
    assert cells["n"].sum() == with_nulls.height
    assert cells["n_missing"].sum() == 4
    assert (cells["tp_n"] + cells["fp_n"] + cells["tn_n"] + cells["fn_n"]).sum() == 4
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pf.MissingValuesWarning)
        rep = run(with_nulls, y_score="score", weight="w", on_missing="warn")
    for attr in ("race", "sex", "race & sex"):
        g = rep.filter(attribute=attr, metric="n_missing")
        assert g["n"].sum() == 8, attr
        assert g["value"].sum() == 4.0, attr


def test_on_missing_raise(with_nulls) -> None:
    with pytest.raises(pf.InvalidInputError, match=r"null label.*on_missing='raise'"):
        run(with_nulls, on_missing="raise")
    for col in ("label", "pred"):
        only = with_nulls.with_columns(pl.col(c).fill_null(1) for c in ("label", "pred") if c != col)
        with pytest.raises(pf.InvalidInputError, match=f"{col}'"):
            run(only, on_missing="raise")
    with pytest.raises(pf.InvalidInputError, match="null score"):
        run(with_nulls.drop_nulls(["label", "pred"]), y_score="score", on_missing="raise")
    with pytest.raises(pf.InvalidInputError, match="null weight"):
        run(with_nulls.drop_nulls(["label", "pred"]), weight="w", on_missing="raise")


def test_on_missing_ignore_is_silent(with_nulls) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rep = run(with_nulls, on_missing="ignore")
    assert rep.filter(pl.col("attribute").is_null(), metric="n_missing")["value"].item() == 2.0


def test_complete_data_does_not_warn(df) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run(df, y_score="score", weight="w", on_missing="warn")


def test_null_labels_in_labels_only_audit(with_nulls) -> None:
    with pytest.warns(pf.MissingValuesWarning, match="1 with a null label"):
        rep = pf.fairness_report(with_nulls, y_true="label", protected="race")
    pop = rep.filter(pl.col("attribute").is_null())
    assert pop.filter(metric="num_instances")["value"].item() == 7.0
    assert pop.filter(metric="n_missing")["value"].item() == 1.0


@pytest.mark.parametrize(
    ("privileged", "absent", "what"),
    [
        ({"race": "A"}, "'A'", "no row is in the privileged group"),  # case
        ({"sex": ["f", "x"]}, "'x'", "holds the other values only"),
        ({"race": None}, "None", "no row is in the privileged group"),  # the null group, absent
    ],
)
def test_privileged_value_absent_from_the_data_warns(df, privileged, absent, what) -> None:
    with pytest.warns(pf.ReferenceWarning) as got:
        rep = pf.fairness_report(df, **BASE, privileged=privileged, min_sample_size=0)  # toy sizes: no policy
    assert len(got) == 1
    msg = str(got[0].message)
    attr = next(iter(privileged))
    assert f"{absent} does not occur in column {attr!r}" in msg and what in msg
    assert ("'a', 'b'" if attr == "race" else "'f', 'm'") in msg  # the values that do occur
    if "no row" in what:  # every comparison of that attribute with its privileged group is null
        spd = rep.filter(pl.col("attribute") == attr, pl.col("metric") == "statistical_parity_difference")
        assert spd.height == 2 and spd["value"].null_count() == 2


def test_privileged_values_present_do_not_warn(df) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", pf.ReferenceWarning)
        rep = pf.fairness_report(df, **BASE, privileged={"race": "a", "sex": ["f", "m"]}, min_sample_size=0)
    assert rep.filter(pl.col("attribute") == "race", pl.col("group") == "b",
                      pl.col("metric") == "statistical_parity_difference")["value"].item() is not None  # fmt: skip
