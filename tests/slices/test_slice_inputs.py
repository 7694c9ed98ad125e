"""slice_scan's input contract, options, bins, nulls and result schema."""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl
import pytest

import polfair as pf
from polfair.core.report.run_metadata import request_of
from polfair.exceptions import ColumnNotFoundError, InvalidInputError, MissingValuesWarning, PolfairError
from polfair.slices import SLICE_COLUMNS, is_slice_table


def _df(n: int = 600) -> pl.DataFrame:
    rng = np.random.default_rng(1)
    g = rng.choice(["a", "b", "c"], n)
    x = rng.normal(40, 12, n).round(2)
    err = (rng.random(n) < np.where((g == "a") & (x > 45), 0.7, 0.15)).astype(np.int64)
    return pl.DataFrame({"g": g, "x": x, "h": rng.integers(0, 2, n).astype(bool), "err": err,
                         "y": err, "p": np.zeros(n, dtype=np.int64)})  # fmt: skip


def test_schema_marker_dtypes_and_one_column_per_feature() -> None:
    out = pf.slice_scan(_df(), features=["g", "h", "x"], errors="err", min_support=10)
    assert is_slice_table(out) and not is_slice_table(out.drop("n_evaluated"))
    assert out.columns == ["g", "h", "x", *SLICE_COLUMNS]
    assert out.schema["g"] == pl.String and out.schema["h"] == pl.Boolean
    assert isinstance(out.schema["x"], pl.Enum)  # a numeric feature cut into bins: its labels, in order
    labels = list(out.schema["x"].categories)
    assert labels[0].startswith("(-inf, ") and labels[-1].endswith(", inf)") and len(labels) == 10
    assert out["level"].to_list() == [s.count(" & ") + 1 for s in out["slice"]]
    for r in out.iter_rows(named=True):  # a feature's column holds the slice's value, null where it is free
        assert r["level"] == sum(r[f] is not None for f in ("g", "h", "x"))
    assert out["score"].is_sorted(descending=True)


def test_bins_none_edges_and_options() -> None:
    df = _df()
    raw = pf.slice_scan(df, features=["x"], errors="err", bins=None, min_support=1, max_level=1, k=3)
    assert raw.schema["x"] == pl.Float64  # every distinct value is a value
    edged = pf.slice_scan(df, features=["g", "x"], errors="err", bins={"x": [30, 45.5]}, min_support=5)
    assert list(edged.schema["x"].categories) == ["(-inf, 30)", "[30, 45.5)", "[45.5, inf)"]
    assert "g = a & x = [45.5, inf)" in edged["slice"].to_list()
    for bad, match in [({"z": 3}, "not features"), ({"x": [3, 1]}, "strictly increasing"), (1, "at least 2"),
                       ("ten", "bins must be"), ({"x": [1, float("nan")]}, "finite")]:  # fmt: skip
        with pytest.raises(PolfairError, match=match):
            pf.slice_scan(df, features=["g", "x"], errors="err", bins=bad)


def test_null_and_nan_feature_values_are_values_of_their_own() -> None:
    df = pl.DataFrame({"g": ["a", None, "b", None] * 50, "f": [1.0, float("nan"), 2.0, 1.0] * 50,
                       "err": [0, 1, 0, 1] * 50})  # fmt: skip
    out = pf.slice_scan(df, features=["g", "f"], errors="err", bins=None, min_support=10, k=3)
    assert out["slice"][0] == "g is null"  # every row with a null g errs
    assert out.row(0, named=True)["g"] is None and out["level"][0] == 1
    assert out["n"][0] == 100


def test_errors_contract_names_the_column() -> None:
    df = _df()
    with pytest.raises(InvalidInputError, match=r"errors='e': 1 rows \(of 600\) have values that are negative"):
        pf.slice_scan(df.with_columns(e=pl.when(pl.int_range(600) == 5).then(-1.0).otherwise(0.5)), features=["g"], errors="e")
    with pytest.raises(InvalidInputError, match="errors must be a per-row loss"):
        pf.slice_scan(df.with_columns(e=pl.lit("x")), features=["g"], errors="e")
    with pytest.warns(MissingValuesWarning, match=r"3 with a null error .*errors='e'"):
        out = pf.slice_scan(df.with_columns(e=pl.when(pl.int_range(600) < 3).then(None).otherwise(pl.col("err"))),
                            features=["g"], errors="e", min_support=1, k=50, max_level=1)  # fmt: skip
    assert request_of(out)["rows"] == 600 - 3  # the rows the search counted
    with pytest.raises(InvalidInputError, match="null error"):
        pf.slice_scan(df.with_columns(e=pl.lit(None, pl.Float64)), features=["g"], errors="e", on_missing="raise")
    with pytest.raises(ColumnNotFoundError, match="Did you mean 'err'"):
        pf.slice_scan(df, features=["g"], errors="erro")


def test_boolean_errors_and_expressions() -> None:
    df = _df()
    a = pf.slice_scan(df, features=["g", "h"], errors=(pl.col("y") != pl.col("p")).alias("wrong"), min_support=5)
    b = pf.slice_scan(df, features=["g", "h"], errors="err", min_support=5)
    assert a.equals(b)


def test_options_are_checked() -> None:
    df = _df()
    for kw, match in [
        (dict(alpha=0), "alpha must be"), (dict(alpha=1.5), "alpha must be"), (dict(k=0), "k must be"),
        (dict(max_level=0), "max_level must be"), (dict(min_support=1.5), "min_support must be"),
        (dict(min_support=-1), "min_support must be"), (dict(ci=95), "ci must be"),
        (dict(p_adjust="bonferroni"), "p_adjust must be"), (dict(on_missing="skip"), "on_missing"),
        (dict(features=[]), "at least one column"), (dict(features=["g", "g"]), "twice"),
        (dict(y_true="y"), "either errors= or y_true="), (dict(metric="false_positive_rate"), "either errors="),
    ]:  # fmt: skip
        kwargs = {"features": ["g"], "errors": "err"} | kw
        with pytest.raises(PolfairError, match=match):
            pf.slice_scan(df, **kwargs)
    with pytest.raises(PolfairError, match="named like columns of the result"):
        pf.slice_scan(df.with_columns(score=pl.col("g")), features=["score"], errors="err")
    with pytest.raises(PolfairError, match=r"pass its complement metric='false_negative_rate'"):
        pf.slice_scan(df, features=["g"], y_true="y", y_pred="p", metric="recall")
    with pytest.raises(PolfairError, match="needs predictions"):
        pf.slice_scan(df, features=["g"], y_true="y", metric="false_positive_rate")
    with pytest.raises(PolfairError, match="report's rates"):
        pf.slice_scan(df, features=["g"], y_true="y", y_pred="p", metric="num_instances")
    with pytest.raises(PolfairError, match="needs errors="):
        pf.slice_scan(df, features=["g"])
    with pytest.raises(InvalidInputError, match="Time"):
        pf.slice_scan(df.with_columns(t=pl.lit(dt.time(1, 2))), features=["t"], errors="err")


def test_min_support_fraction_is_sliceline_s() -> None:
    df = _df()
    a = pf.slice_scan(df, features=["g", "h"], errors="err", min_support=0.1)
    b = pf.slice_scan(df, features=["g", "h"], errors="err", min_support=60)
    assert a.drop("n_evaluated").equals(b.drop("n_evaluated"))
    assert (a["n"] >= 60).all()


def test_nothing_stands_out_and_empty_inputs() -> None:
    flat = pl.DataFrame({"g": ["a", "b"] * 50, "err": [0] * 100})
    out = pf.slice_scan(flat, features=["g"], errors="err")
    assert out.height == 0 and is_slice_table(out) and out.schema["g"] == pl.String
    with pytest.raises(InvalidInputError, match="no rows"):
        pf.slice_scan(flat.head(0), features=["g"], errors="err")
    with pytest.raises(InvalidInputError, match="no row has a usable error"):
        pf.slice_scan(flat.with_columns(y=pl.lit(1), p=pl.lit(1)), features=["g"], y_true="y", y_pred="p",
                      metric="false_positive_rate")  # fmt: skip


def test_dates_decimals_enums_and_categoricals_keep_their_dtype() -> None:
    n = 400
    i = pl.int_range(n, eager=True)
    df = pl.DataFrame({
        "d": (i % 3).cast(pl.Int32).map_elements(lambda k: dt.date(2024, 1, 1 + k), return_dtype=pl.Date),
        "e": (i % 2).replace_strict({0: "lo", 1: "hi"}).cast(pl.Enum(["lo", "hi"])),
        "c": (i % 4).cast(pl.String).cast(pl.Categorical),
        "t": (i % 5).map_elements(lambda k: dt.datetime(2024, 1, 1, k), return_dtype=pl.Datetime("us", "UTC")),
        "few": (i // 7 % 3).cast(pl.Decimal(10, 2)),  # three values: each its own
        "many": (i % 37).cast(pl.Decimal(10, 2)),  # 37 values: cut at deciles
        "err": ((i % 3 == 0) & (i % 2 == 1)).cast(pl.Int64),
    })  # fmt: skip
    feats = ["d", "e", "c", "t", "few", "many"]
    out = pf.slice_scan(df, features=feats, errors="err", min_support=10, k=20)
    assert out.schema["d"] == pl.Date and out.schema["e"] == pl.Enum(["lo", "hi"]) and out.schema["c"] == pl.Categorical
    assert out.schema["t"] == pl.Datetime("us", "UTC") and out.schema["few"] == pl.Decimal(10, 2)
    assert isinstance(out.schema["many"], pl.Enum)
    assert out["slice"][0] == "d = 2024-01-01 & e = hi"
    assert "d = 2024-01-01 & e = hi & few = 0.00" in out["slice"].to_list()
