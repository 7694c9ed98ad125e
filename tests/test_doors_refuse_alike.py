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
        pf.fairness_report(_frame(), y_true="y", y_pred="p", protected="g", metrics={"m": expr})


@pytest.mark.parametrize("name", ["n", "attribute", "group", "value", "tp", "selection_rate__value"])
def test_a_user_metric_named_like_a_report_column_is_refused(name: str) -> None:
    # n/attribute/group: DuplicateError on main; value/tp/...__value: a wide form with two meanings of one name
    with pytest.raises(pf.PolfairError, match=rf"metrics: '{name}' (is taken by a column|contains '__')"):
        pf.fairness_report(_frame(), y_true="y", y_pred="p", protected="g", metrics={name: pl.col("tp") / pl.col("n")},
                           shape="wide")  # fmt: skip


def test_a_row_wise_user_metric_still_works_in_the_wide_form() -> None:
    rep = pf.fairness_report(_frame(), y_true="y", y_pred="p", protected="g", ci=None, shape="wide",
                             metrics={"hit_share": pl.col("tp") / pl.col("n")})  # fmt: skip
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
