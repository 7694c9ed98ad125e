"""pf.regression_report / pf.regression_counts: the public door (inputs, errors, by, files, pandas)."""

from __future__ import annotations

import warnings

import numpy as np
import polars as pl
import pytest
from sklearn.metrics import mean_absolute_error

import polfair as pf
from polfair.exceptions import ColumnNotFoundError, InvalidInputError, MissingValuesWarning, PolfairError


@pytest.fixture(scope="module")
def adult() -> pl.DataFrame:
    df = pf.load_adult_regression()
    assert isinstance(df, pl.DataFrame)
    return df


def test_report_by_split_equals_separate_reports(adult: pl.DataFrame) -> None:
    kw = dict(y_true="hours_per_week", y_pred="predicted_hours", protected=["sex"], privileged={"sex": "Male"})
    both = adult.pipe(pf.regression_report, by="split", **kw)
    assert both.columns[0] == "split"
    for split in ("train", "test"):
        one = pf.regression_report(adult.filter(pl.col("split") == split), **kw)
        part = both.filter(pl.col("split") == split).drop("split")
        a, b = part.filter(metric="mean_absolute_error"), one.filter(metric="mean_absolute_error")
        np.testing.assert_allclose(a["value"].to_numpy().astype(float), b["value"].to_numpy().astype(float), rtol=1e-12,
                                   equal_nan=True)  # fmt: skip
    sub = adult.filter(pl.col("split") == "test", sex="Female")
    got = both.filter(split="test", group="Female", metric="mean_absolute_error")["value"].item()
    assert got == pytest.approx(mean_absolute_error(sub["hours_per_week"], sub["predicted_hours"]), rel=1e-12)


def test_inputs_pandas_parquet_and_expressions(adult: pl.DataFrame, tmp_path) -> None:
    small = adult.head(2000)
    kw = dict(y_true="hours_per_week", y_pred="predicted_hours", protected="race", ci=None)
    base = pf.regression_report(small, **kw)
    path = tmp_path / "a.parquet"
    small.write_parquet(path)
    expr = pf.regression_report(small, y_true=pl.col("hours_per_week").alias("h"),
                                y_pred=(pl.col("predicted_hours") * 1.0).alias("p"), protected="race", ci=None)  # fmt: skip
    for other in (pf.regression_report(str(path), **kw), pf.regression_report(small.to_pandas(), **kw), expr):
        assert other.select("attribute", "group", "metric").equals(base.select("attribute", "group", "metric"))
        # sums may add in another order (file chunks): the last bits
        np.testing.assert_allclose(other["value"].to_numpy().astype(float), base["value"].to_numpy().astype(float),
                                   rtol=1e-12, atol=1e-14, equal_nan=True)  # fmt: skip


def test_every_row_is_accounted_for_and_missing_values_warn() -> None:
    df = pl.DataFrame({"y": [1.0, None, 3.0, float("nan"), 5.0, 6.0], "p": [1.0, 2.0, 2.5, 4.0, None, 5.0],
                       "w": [1.0, 1.0, 2.0, 1.0, 1.0, None], "g": ["a", "a", "a", "b", "b", "b"]})  # fmt: skip
    with pytest.warns(MissingValuesWarning, match="4 rows"):
        cells = pf.regression_counts(df, y_true="y", y_pred="p", protected="g", weight="w")
    assert int(cells["n"].sum()) + int(cells["n_missing"].sum()) == df.height
    with pytest.raises(InvalidInputError, match="on_missing='raise'"):
        pf.regression_report(df, y_true="y", y_pred="p", protected="g", on_missing="raise")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rep = pf.regression_report(df, y_true="y", y_pred="p", protected="g", on_missing="ignore", ci=None)
    assert rep.filter(group="a", metric="n_missing")["value"].item() == 1.0
    assert rep.filter(group="a")["n"][0] == 3


@pytest.mark.parametrize(
    ("column", "values", "match"),
    [
        ("y", [1.0, float("inf"), 2.0], r"y_true='y': 1 rows \(of 3\) have values that are infinite; found e.g. \[inf\]"),
        ("p", [1.0, 2.0, float("-inf")], r"y_pred='p': 1 rows \(of 3\) have values that are infinite"),
        ("w", [1.0, -2.0, 1.0], r"weight='w': 1 rows \(of 3\) have weights that are negative or infinite"),
    ],
)
def test_invalid_values_raise_naming_the_column(column: str, values: list[float], match: str) -> None:
    df = pl.DataFrame({"y": [1.0, 2.0, 3.0], "p": [1.0, 2.0, 3.0], "w": [1.0, 1.0, 1.0], "g": ["a", "b", "a"]})
    df = df.with_columns(pl.Series(column, values))
    with pytest.raises(InvalidInputError, match=match):
        pf.regression_report(df, y_true="y", y_pred="p", protected="g", weight="w")


def test_bad_arguments_raise_clearly() -> None:
    df = pl.DataFrame({"y": [1.0, 2.0], "p": ["1", "2"], "g": ["a", "b"], "q": [1.0, 2.0]})
    with pytest.raises(InvalidInputError, match="must be numeric"):
        pf.regression_report(df, y_true="y", y_pred="p", protected="g")
    with pytest.raises(ColumnNotFoundError, match="Did you mean"):
        pf.regression_report(df, y_true="y", y_pred="qq", protected="g")
    with pytest.raises(PolfairError, match="protected attribute"):
        pf.regression_report(df, y_true="y", y_pred="q", protected=[])
    with pytest.raises(PolfairError, match="reserved"):
        pf.regression_report(df.rename({"g": "bin"}), y_true="y", y_pred="q", protected="bin")
    with pytest.raises(PolfairError, match="best"):
        pf.regression_report(df, y_true="y", y_pred="q", protected="g", reference="best")  # type: ignore[arg-type]


def test_p_adjust_none_is_the_identity_adjustment() -> None:
    # as fairness_report: p_value_adjusted = p_value (it raised ColumnNotFoundError before)
    rng = np.random.default_rng(0)
    df = pl.DataFrame({"y": rng.normal(size=300), "p": rng.normal(size=300), "g": rng.choice(["a", "b", "c"], 300)})
    got = pf.regression_report(df, y_true="y", y_pred="p", protected="g", p_adjust=None)
    tested = got.filter(pl.col("p_value").is_not_null())
    assert tested.height > 0 and tested["p_value_adjusted"].equals(tested["p_value"], check_names=False)
    bh = pf.regression_report(df, y_true="y", y_pred="p", protected="g")
    assert bh.filter(pl.col("p_value").is_not_null())["p_value_adjusted"].ge(tested["p_value"]).all()
