"""Every door refuses the same way (issue 30, "What to build" 4): empty input, user metrics that
aggregate or collide with a report column, ``score_report`` accounting for every row, and the
append destination checked before the pass. Polars and DuckDB here; Spark's cases are batched in
``tests/engines/test_engine_parity_keys_clusters.py``.

Each case failed on the main branch before issue 30 (a raw ``IndexError``/``SchemaError``/
``ShapeError``/``DuplicateError``/``FileNotFoundError``, or a silent wrong answer).
"""

from __future__ import annotations

import warnings

import polars as pl
import pytest

import polfair as pf
from polfair.cli import main

duckdb = pytest.importorskip("duckdb")
pytest.importorskip("narwhals")


def _frame() -> pl.DataFrame:
    return pl.DataFrame({
        "y": [1, 0, 1, 0, 1, 0, 1, 0], "p": [1, 0, 0, 1, 1, 0, 1, 1], "g": ["a", "a", "b", "b", "a", "b", "a", "b"],
        "s": [0.1, None, 0.3, 0.8, 0.5, 0.2, float("nan"), 0.4], "r": [1.0, 2.0, 0.5, 1.5, 3.0, 0.0, 2.5, 1.0],
    })  # fmt: skip


def _engines(df: pl.DataFrame) -> list[object]:
    return [df, duckdb.from_arrow(df.to_arrow())]


# ---------------------------------------------------------------------------------------------
# empty input: the one "no rows" error at every door


@pytest.mark.parametrize("door", ["regression", "scores", "fairness"])
def test_empty_input_is_the_no_rows_error_at_every_door(door: str) -> None:
    empty = _frame().head(0)
    call = {
        "regression": lambda d: pf.regression_report(d, y_true="r", y_pred="r", protected="g"),  # IndexError on main
        "scores": lambda d: pf.score_report(d, y_true="y", y_score="s", protected="g"),  # SchemaError on main
        "fairness": lambda d: pf.fairness_report(d, y_true="y", y_pred="p", protected="g"),
    }[door]
    for data in _engines(empty):
        with pytest.raises(pf.InvalidInputError, match="the input has no rows"):
            call(data)


# ---------------------------------------------------------------------------------------------
# score_report accounts for every row


def test_score_report_counts_rows_with_a_missing_score_in_n_and_n_missing() -> None:
    for data in _engines(_frame()):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", pf.MissingValuesWarning)
            rep = pf.score_report(data, y_true="y", y_score="s", protected="g")
        missing = rep.filter(metric="n_missing").sort("group", nulls_last=True)
        # a: one null and one NaN score of 4 rows; b: none of 4; the population: 2 of 8
        assert missing["group"].to_list() == ["a", "b", None]
        assert missing["value"].to_list() == [2.0, 0.0, 2.0]
        assert missing["n"].to_list() == [4, 4, 8]  # n counts every row (was 2, 4, 6 on main)
        auc = rep.filter(metric="roc_auc", group="a")
        assert auc["n"].item() == 4


def test_score_report_with_every_score_missing_is_a_clear_error() -> None:
    df = _frame().with_columns(s=pl.lit(None, pl.Float64))
    for data in _engines(df):
        with warnings.catch_warnings(), pytest.raises(pf.InvalidInputError, match=r"every row \(8\) has a missing label, score or weight"):
            warnings.simplefilter("ignore", pf.MissingValuesWarning)  # the contract's count, then the error
            pf.score_report(data, y_true="y", y_score="s", protected="g")


# ---------------------------------------------------------------------------------------------
# user metrics: row-wise, and not named like a column


@pytest.mark.parametrize(
    "expr",
    [
        pl.col("tp").sum() / pl.col("n").sum(),  # ShapeError on main
        pl.col("tp") / pl.col("tp").sum(),  # silently mixed the groups on main
        pl.col("tp").cum_sum(),
        pl.lit(1.0),
    ],
    ids=["aggregation", "share-of-total", "window", "literal"],
)
def test_a_user_metric_that_is_not_row_wise_is_refused(expr: pl.Expr) -> None:
    with pytest.raises(pf.PolfairError, match=r"metrics\['m'\] is not computed row by row"):
        pf.fairness_report(_frame(), y_true="y", y_pred="p", protected="g", user_metrics={"m": expr})


@pytest.mark.parametrize("name", ["n", "attribute", "group", "value", "tp", "selection_rate__value"])
def test_a_user_metric_named_like_a_report_column_is_refused(name: str) -> None:
    # n/attribute/group: DuplicateError on main; value/tp/...__value: a wide form with two meanings of one name
    with pytest.raises(pf.PolfairError, match=rf"metrics: '{name}' (is taken by a column|contains '__')"):
        pf.fairness_report(_frame(), y_true="y", y_pred="p", protected="g", user_metrics={name: pl.col("tp") / pl.col("n")},
                           shape="wide")  # fmt: skip


def test_a_row_wise_user_metric_still_works_in_the_wide_form() -> None:
    rep = pf.fairness_report(_frame(), y_true="y", y_pred="p", protected="g", ci=None, shape="wide",
                             user_metrics={"hit_share": pl.col("tp") / pl.col("n")})  # fmt: skip
    assert rep.filter(group="a")["hit_share"].item() == pytest.approx(3 / 4)


# ---------------------------------------------------------------------------------------------
# the append destination, checked before the pass as --out's


def test_append_report_into_a_missing_directory_names_it(tmp_path) -> None:
    rep = pf.fairness_report(_frame(), y_true="y", y_pred="p", protected="g", ci=None)
    target = tmp_path / "nope" / "t.parquet"
    with pytest.raises(pf.PolfairError, match=r"the directory '.*nope' does not exist; create it first"):
        pf.append_report(pf.with_run_metadata(rep), target)  # FileNotFoundError naming a hidden lock file on main


def test_cli_append_into_a_missing_directory_is_refused_before_the_pass(tmp_path, capsys, monkeypatch) -> None:
    data = tmp_path / "d.parquet"
    _frame().write_parquet(data)
    import polfair.cli as cli

    def no_pass(*a: object, **k: object) -> None:  # the destination is checked before any work
        raise AssertionError("the report was computed before the destination was checked")

    monkeypatch.setattr(cli, "fairness_report", no_pass, raising=False)
    monkeypatch.setattr(pf, "fairness_report", no_pass)
    code = main(["report", str(data), "--y-true", "y", "--y-pred", "p", "--protected", "g",
                 "--append", str(tmp_path / "nope" / "t.parquet")])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2, err
    assert "does not exist; create it first" in err and ".lock" not in err and "Traceback" not in err


# ---------------------------------------------------------------------------------------------
# issue 38: a misspelled keyword names the close one at every door (one decorator,
# polfair.core.options.checks_keywords); on main Python's TypeError named no alternative


def _doors_with_a_typo() -> dict[str, object]:
    from polfair.compat.aif360 import BinaryLabelDatasetMetric, ClassificationMetric

    df = _frame()
    return {
        "fairness_report": lambda: pf.fairness_report(df, y_true="y", y_pred="p", protectd="g"),
        "fairness_report_batches": lambda: list(pf.fairness_report_batches(df, y_true="y", y_pred="p", protectd="g")),
        "regression_report": lambda: pf.regression_report(df, y_true="r", y_pred="r", protectd="g"),
        "score_report": lambda: pf.score_report(df, y_true="y", y_score="r", protectd="g"),
        "threshold_sweep": lambda: pf.threshold_sweep(df, y_true="y", y_score="r", protectd="g"),
        "group_thresholds": lambda: pf.group_thresholds(df, y_true="y", y_score="r", protectd="g"),
        "adverse_impact": lambda: pf.adverse_impact(df, y_pred="p", protectd="g"),
        "slice_scan": lambda: pf.slice_scan(df, featurs=["g"], y_true="y", y_pred="p"),
        "proxy_scan": lambda: pf.proxy_scan(df, protected="g", features=["r"], protectd="g"),
        "MetricFrame": lambda: pf.MetricFrame(metrics=len, y_true=df["y"], y_pred=df["p"], sensitive_feature=df["g"]),
        "FairnessAccumulator": lambda: pf.FairnessAccumulator(y_true="y", y_pred="p", protectd="g"),
        "BinaryLabelDatasetMetric": lambda: BinaryLabelDatasetMetric(df, y="y", protectd="g"),
        "ClassificationMetric": lambda: ClassificationMetric(df, y_true="y", y_pred="p", protectd="g"),
    }  # fmt: skip


@pytest.mark.parametrize("door", list(_doors_with_a_typo()))
def test_a_misspelled_keyword_names_the_close_one_at_every_door(door: str) -> None:
    call = _doors_with_a_typo()[door]
    typo, right = {"slice_scan": ("featurs", "features"), "MetricFrame": ("sensitive_feature", "sensitive_features")
                   }.get(door, ("protectd", "protected"))  # fmt: skip
    with pytest.raises(pf.UnknownOptionError, match=rf"^{door} got an unknown keyword '{typo}' \(did you mean '{right}'\?\)"):
        call()  # type: ignore[operator]


def test_the_unknown_keyword_error_is_a_type_error_and_a_polfair_error() -> None:
    with pytest.raises(TypeError):
        pf.fairness_report(_frame(), y_true="y", y_pred="p", protected="g", weigth="r")
    with pytest.raises(pf.PolfairError, match="did you mean 'weight'"):
        pf.fairness_report(_frame(), y_true="y", y_pred="p", protected="g", weigth="r")


def test_summarize_names_the_close_option() -> None:
    rep = pf.fairness_report(_frame(), y_true="y", y_pred="p", protected="g", ci=None)
    with pytest.raises(pf.UnknownOptionError, match=r"summarize \(a classification report\) got an unknown keyword "
                       r"'max_group' \(did you mean 'max_groups'\?\)"):  # fmt: skip
        pf.summarize(rep, max_group=3)


def test_the_cli_names_the_close_option(tmp_path, capsys) -> None:
    data = tmp_path / "d.parquet"
    _frame().write_parquet(data)
    with pytest.raises(SystemExit) as exit_:
        main(["report", str(data), "--y-true", "y", "--y-pred", "p", "--protected", "g", "--min-sample-sise", "3"])
    assert exit_.value.code == 2
    assert "--min-sample-sise (did you mean --min-sample-size?)" in capsys.readouterr().err


def test_a_decorated_door_keeps_its_signature_and_its_doctests() -> None:
    import doctest
    import inspect

    import polfair.api

    assert "protected" in inspect.signature(pf.fairness_report).parameters
    found = {t.name for t in doctest.DocTestFinder().find(polfair.api)}
    assert "polfair.api.fairness_report" in found  # the wrapper lives in the door's module


# ---------------------------------------------------------------------------------------------
# issue 38: an option a door accepts but would not use is an error naming it (accepted and
# ignored on main)


def _bool_frame() -> pl.DataFrame:
    return _frame().with_columns(b=pl.col("p") == 1)


@pytest.mark.parametrize(
    ("door", "call", "match"),
    [
        ("fairness_report", lambda d: pf.fairness_report(d, y_true="y", y_pred="p", protected="g", threshold=0.3),
         r"fairness_report: threshold=0.3 is not used because y_pred='p' gives the predictions"),
        ("fairness_report+score", lambda d: pf.fairness_report(d, y_true="y", y_pred="p", y_score="r", protected="g",
                                                               threshold=0.3), r"threshold=0.3 is not used"),
        ("FairnessAccumulator", lambda d: pf.FairnessAccumulator(y_true="y", y_pred="p", protected="g", threshold=0.3),
         r"FairnessAccumulator: threshold=0.3 is not used"),
        ("slice_scan", lambda d: pf.slice_scan(d, features=["g"], y_true="y", y_pred="p", threshold=0.3),
         r"slice_scan: threshold=0.3 is not used"),
        ("slice_scan errors", lambda d: pf.slice_scan(d, features=["g"], errors="r", threshold=0.3),
         r"slice_scan: threshold=0.3 is not used because errors='r'"),
        ("fairness_report score_label", lambda d: pf.fairness_report(d, y_true="y", y_pred="p", protected="g",
                                                                     score_label=1), r"score_label=1 is not used"),
        ("slice_scan score_label", lambda d: pf.slice_scan(d, features=["g"], y_true="y", y_pred="p", score_label=1),
         r"score_label=1 is not used"),
        ("adverse_impact score_label", lambda d: pf.adverse_impact(d, y_pred="p", protected="g", score_label=1),
         r"score_label=1 is not used: it says what a Boolean y_pred's True stands for, and y_pred='p' \(Int64\)"),
        ("proxy_scan score_label", lambda d: pf.proxy_scan(d, protected="g", features=["r"], y_pred="p", score_label=1),
         r"score_label=1 is not used"),
        ("adverse_impact favorable+score", lambda d: pf.adverse_impact(d, y_score="r", protected="g", favorable=0,
                                                                       preset="nyc_ll144"),
         r"adverse_impact: favorable=0 is not used because y_score= is read as NYC LL144's scoring rate"),
        ("adverse_impact score_label+score", lambda d: pf.adverse_impact(d, y_score="r", protected="g", score_label=0,
                                                                         preset="nyc_ll144"),
         r"adverse_impact: score_label=0 is not used"),
    ],
    ids=lambda v: v if isinstance(v, str) and not v.startswith(("r\"", "fairness_report:")) else "",
)  # fmt: skip
def test_an_option_the_door_would_not_use_is_refused_by_name(door: str, call, match: str) -> None:
    df = _frame().with_columns(r=pl.col("r") / 3)
    for data in _engines(df) if door != "proxy_scan score_label" else [df]:  # proxy_scan reads Polars only
        with pytest.raises(pf.InvalidInputError, match=match):
            call(data)


def test_the_options_that_are_used_still_pass() -> None:
    df = _bool_frame().with_columns(r=pl.col("r") / 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pf.fairness_report(df, y_true="y", y_score="r", protected="g", threshold=0.3, score_label=1, ci=None)
        pf.fairness_report(df, y_true="y", y_pred="b", protected="g", score_label=1, ci=None)  # a Boolean y_pred
        pf.adverse_impact(df, y_pred="b", protected="g", favorable=0, score_label=0)
        pf.adverse_impact(df, y_score="r", protected="g", preset="nyc_ll144")
        pf.slice_scan(df, features=["g"], y_true="y", y_score="r", threshold=0.3, min_support=1)


def test_the_cli_passes_min_sample_size_to_the_adverse_impact_battery_and_prints_it_through_summarize(
        tmp_path, capsys) -> None:  # fmt: skip
    data = tmp_path / "d.parquet"
    pl.DataFrame({"y": [1, 0] * 20, "p": [1, 0, 1, 1] * 10, "g": ["a"] * 30 + ["b"] * 8 + ["c"] * 2}).write_parquet(data)
    code = main(["report", str(data), "--y-true", "y", "--y-pred", "p", "--protected", "g", "--adverse-impact", "eeoc",
                 "--min-sample-size", "5"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    section = out[out.index("adverse impact (eeoc)"):]
    assert "fewer than 5 candidates" in section  # c (2 rows) is left out of the battery, as of the report's statuses
    assert "impact" in section and "4/5" in section and "…" not in section  # pf.summarize's table, not Polars'


def test_warnings_name_the_users_line_through_every_door() -> None:
    df = _frame().with_columns(y=pl.when(pl.col("g") == "a").then(None).otherwise(pl.col("y")))
    calls = [
        lambda: pf.fairness_report(df, y_true="y", y_pred="p", protected="g", ci=None),
        lambda: pf.regression_report(df, y_true="y", y_pred="r", protected="g"),
        lambda: pf.score_report(df.with_columns(r=pl.col("r") / 3), y_true="y", y_score="r", protected="g"),
        lambda: pf.slice_scan(df, features=["g"], y_true="y", y_pred="p", min_support=1),
        lambda: pf.proxy_scan(df, protected="g", features=["r"], y_true="y"),
    ]
    for call in calls:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            call()
        files = {w.filename for w in seen if issubclass(w.category, pf.MissingValuesWarning)}
        assert files == {__file__}, files  # not polfair's wrapper or internals (api.py/proxies on main)


# ---------------------------------------------------------------------------------------------
# issue 38: a typo'd attribute in pf.summarize names the close one (printed nothing on main)


@pytest.mark.parametrize("kind", ["fairness", "score", "regression"])
def test_summarize_refuses_an_attribute_the_report_does_not_have(kind: str) -> None:
    df = _frame().rename({"g": "marital"}).with_columns(r=pl.col("r") / 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = {
            "fairness": lambda: pf.fairness_report(df, y_true="y", y_pred="p", protected="marital", ci=None),
            "score": lambda: pf.score_report(df, y_true="y", y_score="r", protected="marital", ci=None),
            "regression": lambda: pf.regression_report(df, y_true="r", y_pred="r", protected="marital", ci=None),
        }[kind]()
    with pytest.raises(pf.ColumnNotFoundError, match=r"summarize: attributes=\['Maritl'\]: 'Maritl' \(did you mean "
                       r"'marital'\?\) is no attribute set of the report; it has 'marital'"):  # fmt: skip
        pf.summarize(rep, attributes=["Maritl"])
    assert "marital" in pf.summarize(rep, attributes=["marital"])


# ---------------------------------------------------------------------------------------------
# issue 38: on_missing= at the doors whose warnings tell the user to pass it (TypeError on main)


def _missing_label_frame() -> pl.DataFrame:
    return _frame().with_columns(y=pl.when(pl.int_range(8) == 0).then(None).otherwise(pl.col("y")),
                                 r=pl.col("r") / 3)  # fmt: skip


@pytest.mark.parametrize("door", ["score_report", "threshold_sweep", "group_thresholds", "adverse_impact", "proxy_scan"])
def test_on_missing_is_taken_by_every_door_that_warns_about_missing_rows(door: str) -> None:
    df = _missing_label_frame()
    if door == "adverse_impact":
        df = df.with_columns(p=pl.col("y"))
    call = {
        "score_report": lambda **k: pf.score_report(df, y_true="y", y_score="r", protected="g", **k),
        "threshold_sweep": lambda **k: pf.threshold_sweep(df, y_true="y", y_score="r", protected="g", **k),
        "group_thresholds": lambda **k: pf.group_thresholds(df, y_true="y", y_score="r", protected="g", **k),
        "adverse_impact": lambda **k: pf.adverse_impact(df, y_pred="p", protected="g", **k),
        "proxy_scan": lambda **k: pf.proxy_scan(df, protected="g", features=["s"], y_true="y", **k),
    }[door]
    with pytest.warns(pf.MissingValuesWarning, match="pass on_missing='ignore'"):
        call()
    with pytest.raises(pf.InvalidInputError, match="on_missing='raise'"):
        call(on_missing="raise")
    with warnings.catch_warnings():
        warnings.simplefilter("error", pf.MissingValuesWarning)
        call(on_missing="ignore")


# ---------------------------------------------------------------------------------------------
# issue 38: threshold_sweep agrees with the report: intervals at 0/n and n/n, n with the missing
# rows, n_missing; unmatched privileged warns; a group whose every label is missing stays


def test_the_sweep_s_intervals_and_n_equal_the_report_s_at_a_threshold() -> None:
    df = pl.DataFrame({"y": [1, 0, 1, 0, 1, 0, 1, None], "s": [.1, .2, .3, .8, .5, .6, .9, .4],
                       "g": ["a", "a", "a", "b", "b", "b", "b", "b"]})  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pf.MissingValuesWarning)
        sw = pf.threshold_sweep(df, y_true="y", y_score="s", protected="g", thresholds=[0.7],
                                metrics=["selection_rate", "true_positive_rate"])  # fmt: skip
        rep = pf.fairness_report(df, y_true="y", y_score="s", protected="g", threshold=0.7)
    for metric in ("selection_rate", "true_positive_rate"):
        for group in ("a", "b"):  # a: 0/3 selected (null limits on main)
            got = sw.filter(metric=metric, group=group).select("value", "value_lo", "value_hi", "n").row(0)
            want = rep.filter(metric=metric, group=group).select("value", "value_lo", "value_hi", "n").row(0)
            assert got == pytest.approx(want), (metric, group)
    assert sw.filter(metric="selection_rate", group="a")["value_lo"].item() == 0.0
    assert sw.filter(metric="true_positive_rate", group="b")["value_hi"].item() == pytest.approx(
        rep.filter(metric="true_positive_rate", group="b")["value_hi"].item())  # n/n
    missing = sw.filter(metric="selection_rate").sort("group", nulls_last=True)
    assert missing["n"].to_list() == [3, 5, 8]  # b's missing row counted, as in the report (4 and 7 on main)
    assert missing["n_missing"].to_list() == [0, 1, 1]
    assert missing["n_missing"].dtype == pl.Int64


def test_a_group_whose_every_label_is_missing_stays_in_the_sweep_and_the_score_report() -> None:
    df = pl.DataFrame({"y": [1, 0, 1, 0, 1, 0, None, None], "s": [.1, .2, .3, .8, .5, .6, .9, .4],
                       "g": ["a", "a", "a", "b", "b", "b", "c", "c"]})  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pf.MissingValuesWarning)
        sw = pf.threshold_sweep(df, y_true="y", y_score="s", protected="g", thresholds=[0.5], metrics=["selection_rate"])
        sr = pf.score_report(df, y_true="y", y_score="s", protected="g")
    c = sw.filter(group="c")
    assert c.select("n", "n_missing").row(0) == (2, 2) and c["value"].item() is None  # vanished on main
    assert sw.filter(group="b")["reference_group"].item() in ("a", "b")  # never the empty group
    c = sr.filter(group="c")
    assert c.filter(metric="n_missing")["value"].item() == 2.0 and c.filter(metric="roc_auc")["value"].item() is None
    assert set(c["n"].to_list()) == {2}


@pytest.mark.parametrize("door", ["score_report", "threshold_sweep"])
def test_an_unmatched_privileged_value_warns_as_the_report_does(door: str) -> None:
    df = _frame().with_columns(r=pl.col("r") / 3)
    call = {"score_report": pf.score_report, "threshold_sweep": pf.threshold_sweep}[door]
    with pytest.warns(pf.ReferenceWarning, match=r"'z' does not occur in column 'g'"):
        out = call(df, y_true="y", y_score="r", protected="g", privileged={"g": "z"})  # type: ignore[operator]
    assert out.filter(pl.col("group").is_not_null())["reference_group"].null_count() == out.filter(
        pl.col("group").is_not_null()).height  # no silent fall-back to the largest group  # fmt: skip
    with pytest.warns(pf.ReferenceWarning, match=r"'z' does not occur in column 'g'"):
        pf.fairness_report(df, y_true="y", y_pred="p", protected="g", privileged={"g": "z"})


# ---------------------------------------------------------------------------------------------
# issue 38: every label missing is one clear error at every door (some returned a report of
# nulls on main, adverse_impact an empty table); an empty cell table is the "no rows" error


def _all_missing() -> pl.DataFrame:
    return _frame().with_columns(y=pl.lit(None, pl.Int64), r=pl.col("r") / 3)


@pytest.mark.parametrize("door", ["fairness_report", "fairness_report_batches", "FairnessAccumulator",
                                  "report_from_counts", "regression_report", "score_report", "threshold_sweep",
                                  "group_thresholds", "adverse_impact", "proxy_scan"])  # fmt: skip
def test_every_label_missing_is_one_clear_error_at_every_door(door: str) -> None:
    df = _all_missing()
    call = {
        "fairness_report": lambda: pf.fairness_report(df, y_true="y", y_pred="p", protected="g"),
        "fairness_report_batches": lambda: list(pf.fairness_report_batches(df, y_true="y", y_pred="p", protected="g")),
        "FairnessAccumulator": lambda: pf.FairnessAccumulator(y_true="y", y_pred="p", protected="g").update(df).compute(),
        "report_from_counts": lambda: pf.report_from_counts(
            pf.confusion_counts(df, y_true="y", y_pred="p", protected="g"), protected="g"),
        "regression_report": lambda: pf.regression_report(df.with_columns(pl.col("y").cast(pl.Float64)), y_true="y",
                                                          y_pred="r", protected="g"),
        "score_report": lambda: pf.score_report(df, y_true="y", y_score="r", protected="g"),
        "threshold_sweep": lambda: pf.threshold_sweep(df, y_true="y", y_score="r", protected="g"),
        "group_thresholds": lambda: pf.group_thresholds(df, y_true="y", y_score="r", protected="g"),
        "adverse_impact": lambda: pf.adverse_impact(df, y_pred="y", protected="g"),
        "proxy_scan": lambda: pf.proxy_scan(df, protected="g", features=["s"], y_true="y"),
    }[door]  # fmt: skip
    with warnings.catch_warnings(), pytest.raises(pf.InvalidInputError, match=r"every row \(8\) has a missing .*: "
                                                  r"nothing to audit"):  # fmt: skip
        warnings.simplefilter("ignore", pf.MissingValuesWarning)
        call()


def test_report_from_counts_of_an_empty_cell_table_is_the_no_rows_error() -> None:
    cells = pf.confusion_counts(_frame(), y_true="y", y_pred="p", protected="g").head(0)
    with pytest.raises(pf.InvalidInputError, match="the input has no rows"):  # a raw numpy ValueError on main
        pf.report_from_counts(cells, protected="g")


# ---------------------------------------------------------------------------------------------
# issue 38: group labels written by the report's one function at every door; DuckDB relations of
# their own connection and column names at every door


def _label_frame() -> pl.DataFrame:
    import datetime as dt

    return pl.DataFrame({
        "y": [1, 0, 1, 1] * 20, "s": [.9, .2, .3, .8] * 20, "b": [True, False] * 40,
        "t": [dt.datetime(2020, 1, 1, 0, 0, 0, 500)] * 40 + [dt.datetime(2020, 1, 2)] * 40,
        "c": ["null"] * 30 + [None] * 30 + ["x"] * 20,
    })  # fmt: skip


def test_group_thresholds_writes_the_report_s_group_labels() -> None:
    df = _label_frame()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = pf.fairness_report(df, y_true="y", y_score="s", protected=["b", "c"], ci=None)
        for col in ("b", "c"):
            got = pf.group_thresholds(df, y_true="y", y_score="s", protected=col).table["group"].to_list()
            want = rep.filter(attribute=col, metric="selection_rate")["group"].drop_nulls().to_list()
            assert sorted(got) == sorted(want), col  # "True"/"False", and null the same as "null", on main
    assert sorted(want) == ['"null"', "null", "x"]


def test_slice_scan_writes_values_as_the_report_writes_groups() -> None:
    df = _label_frame().with_columns(e=((pl.col("c") == "null").fill_null(False) & pl.col("b")).cast(pl.Int8))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = pf.fairness_report(df, y_true="y", y_score="s", protected=["t", "c"], ci=None)
    slices = pf.slice_scan(df, features=["t", "c", "b"], errors="e", min_support=1, k=20)["slice"].to_list()
    assert 'c = "null"' in slices and "b = true" in slices  # a real null reads "c is null"
    shown = {s.split(" = ", 1)[1] for part in slices for s in part.split(" & ") if s.startswith("t = ")}
    assert shown <= set(rep.filter(attribute="t")["group"].drop_nulls().to_list())
    assert "2020-01-01 00:00:00.000500" in shown  # "2020-01-01 00:00:00.000500" lost its fraction on main


def test_slice_scan_and_group_thresholds_read_a_duckdb_relation_of_its_own_connection() -> None:
    df = pl.DataFrame({"y": [1, 0, 1, 1] * 20, "s": [.9, .2, .3, .8] * 20, "g": ["a", "b"] * 40, "e": [0, 1, 1, 0] * 20})
    con = duckdb.connect()
    con.register("src", df.to_arrow())
    rel = con.sql("select * from src")
    got = pf.slice_scan(rel, features=["g"], errors="e", min_support=1)  # a raw DuckDB error on main
    assert got.equals(pf.slice_scan(df, features=["g"], errors="e", min_support=1))
    got_t = pf.group_thresholds(rel, y_true="y", y_score="s", protected="g").table  # refused a column name on main
    assert got_t.equals(pf.group_thresholds(df, y_true="y", y_score="s", protected="g").table)
