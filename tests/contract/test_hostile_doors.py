"""The newest doors at the extremes (issue 40): estimated groups, slices, regression, MetricFrame and
pandas inputs against independent oracles (scipy, scikit-learn, exact fractions) or a documented error.
"""

from __future__ import annotations

import warnings

import numpy as np
import polars as pl
import pytest
import scipy.stats

import polfair as pf


def _duckdb(df: pl.DataFrame):  # a DuckDB relation of df (skipped without duckdb)
    duckdb = pytest.importorskip("duckdb")
    pytest.importorskip("narwhals")
    return duckdb.from_arrow(df.to_arrow())


# -- the polarity rule with estimated groups ------------------------------------------------------


def _proba_frame(n: int = 400, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    pa = rng.uniform(0, 1, n).round(3)
    y = rng.integers(0, 2, n)
    s = np.clip(0.3 * y + rng.uniform(0, 0.7, n), 0, 1).round(4)  # P(y = 1), 1 unfavorable
    return pl.DataFrame({"y": y, "s": s, "sf": 1.0 - s, "pa": pa, "pb": (1.0 - pa).round(3)})


@pytest.mark.parametrize("door", ["polars", "duckdb"])
def test_estimated_groups_read_a_score_of_the_unfavorable_label_as_one_minus_it(door: str) -> None:
    df = _proba_frame()
    data = df if door == "polars" else _duckdb(df)
    pp = {"race": {"a": "pa", "b": "pb"}}
    with warnings.catch_warnings():
        warnings.simplefilter("error", pf.PolarityWarning)  # was: a false PolarityWarning
        got = pf.fairness_report(data, y_true="y", y_score="s", score_label=1, favorable=0, protected_proba=pp)
    want = pf.fairness_report(df, y_true="y", y_score="sf", score_label=0, favorable=0, protected_proba=pp)
    pick = pl.col("metric").cast(pl.String).str.contains("generalized")
    g, w = got.filter(pick).sort("metric", "group"), want.filter(pick).sort("metric", "group")
    assert g.height > 0
    assert g["value"].fill_null(np.nan).to_list() == pytest.approx(w["value"].fill_null(np.nan).to_list(), rel=1e-12,
                                                                   nan_ok=True)  # fmt: skip
    # the oracle: population Σ P(favorable) over favorable labels, by hand
    fav = (df["y"] == 0).to_numpy()
    gtp = got.filter((pl.col("metric").cast(pl.String) == "num_generalized_true_positives") & pl.col("group").is_null())
    assert gtp["value"][0] == pytest.approx(float((1.0 - df["s"].to_numpy())[fav].sum()), rel=1e-12)


def test_slices_read_a_score_of_the_unfavorable_label_as_one_minus_it() -> None:
    df = _proba_frame().with_columns(g=pl.Series(np.resize(["u", "v", "x"], 400)))
    kw = dict(features=["g"], y_true="y", metric="generalized_false_positive_rate", favorable=0, k=3, min_support=5,
              alpha=0.99)  # fmt: skip
    got = pf.slice_scan(df, y_score="s", score_label=1, **kw)
    want = pf.slice_scan(df, y_score="sf", score_label=0, **kw)
    assert got.height > 0
    assert got["error_mean"].to_list() == pytest.approx(want["error_mean"].to_list(), rel=1e-12)


# -- slices: centred spreads and power-of-two weight units ----------------------------------------


def _loss_frame(level: float, n: int = 2000, seed: int = 1) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    g = rng.choice(["a", "b", "c"], n)
    u = rng.uniform(0, 1, n) + (g == "a") * 0.05
    return pl.DataFrame({"g": g, "u": u, "loss": level + u, "w": np.ones(n)})


@pytest.mark.parametrize("door", ["polars", "duckdb"])
def test_slice_welch_p_of_large_losses_equals_scipy(door: str) -> None:
    df = _loss_frame(1e9)
    data = df if door == "polars" else _duckdb(df)
    top = pf.slice_scan(data, features=["g"], errors="loss", k=3, min_support=10, alpha=1.0, p_adjust=None)
    row = top.filter(pl.col("slice") == "g = a").row(0, named=True)
    a, b = df.filter(pl.col("g") == "a")["u"].to_numpy(), df.filter(pl.col("g") != "a")["u"].to_numpy()
    want = scipy.stats.ttest_ind(a, b, equal_var=False)
    assert row["p_value"] == pytest.approx(want.pvalue, rel=1e-6)  # was 0.40-like (raw sums of squares)
    assert row["p_value_adjusted"] == row["p_value"]  # p_adjust=None: unadjusted, as in the reports
    assert row["difference"] == pytest.approx(a.mean() - b.mean(), rel=1e-6)
    half = (row["difference_hi"] - row["difference_lo"]) / 2  # Welch's interval, not 40x too wide
    se = np.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    assert half == pytest.approx(scipy.stats.t.ppf(0.975, want.df) * se, rel=1e-6)


@pytest.mark.parametrize("scale", [1e-200, 1e200])
def test_slice_weights_of_any_scale_give_the_weights_1_results(scale: float) -> None:
    df = _loss_frame(0.0)
    kw = dict(features=["g"], errors="loss", weight="w", k=3, min_support=10, alpha=1.0)
    want = pf.slice_scan(df, **kw)
    got = pf.slice_scan(df.with_columns(pl.col("w") * scale), **kw)
    free = ["slice", "n", "error_mean", "p_value", "p_value_adjusted", "n_eff", "value_lo", "value_hi",
            "difference_lo", "difference_hi", "score"]  # fmt: skip
    assert got["n_eff"].null_count() == 0
    for c in free:
        g, w = got[c].to_list(), want[c].to_list()
        assert g == (w if c == "slice" else pytest.approx(w, rel=1e-9)), c
    assert got["error_sum"].to_list() == pytest.approx([v * scale for v in want["error_sum"].to_list()], rel=1e-9)


# -- estimated groups and weights -----------------------------------------------------------------


def _bisg_frame(n: int = 300, seed: int = 4) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    pa = rng.uniform(0, 1, n).round(3)
    return pl.DataFrame({"y": rng.integers(0, 2, n), "p": rng.integers(0, 2, n), "pa": pa, "pb": (1.0 - pa).round(3),
                         "w": rng.choice([0.5, 1.0, 2.0], n)})  # fmt: skip


def _free(report: pl.DataFrame) -> pl.DataFrame:
    # the rows free of the weights' scale (num_* counts are Σw); the smoothed EDF is documented as not
    m = pl.col("metric").cast(pl.String)
    return report.filter(~m.str.starts_with("num_") & ~m.str.contains("differential_fairness")).sort(
        "attribute", "group", "metric", nulls_last=False)


@pytest.mark.parametrize("door", ["polars", "duckdb"])
@pytest.mark.parametrize("scale", [1e-200, 1e200])
def test_estimated_groups_take_weights_of_any_scale(door: str, scale: float) -> None:
    df = _bisg_frame()
    kw = dict(y_true="y", y_pred="p", weight="w", protected_proba={"race": {"a": "pa", "b": "pb"}})
    want = _free(pf.fairness_report(df, **kw))
    moved = df.with_columns(pl.col("w") * scale)
    got = _free(pf.fairness_report(moved if door == "polars" else _duckdb(moved), **kw))  # was: InvalidInputError
    assert got.height == want.height > 0
    for c in ("value", "value_lo", "value_hi", "p_value", "n_eff"):
        g, w = got[c].fill_null(np.nan).to_list(), want[c].fill_null(np.nan).to_list()
        assert g == pytest.approx(w, rel=1e-9, abs=1e-12, nan_ok=True), c


def test_confusion_counts_null_w2_comes_with_the_weight_range_warning() -> None:
    df = _bisg_frame().with_columns(pl.col("w") * 1e200, g=pl.Series(np.resize(["a", "b"], 300)))
    with pytest.warns(pf.WeightRangeWarning, match="weight='w'"):
        cells = pf.confusion_counts(df, y_true="y", y_pred="p", weight="w", protected="g").collect()
    assert cells["tp_w2"].null_count() == cells.height  # null, as documented, now with its warning


def test_proba_tolerance_accepts_probabilities_rounded_to_its_decimals() -> None:
    df = pl.DataFrame({"y": [0, 1] * 10, "p": [1, 1, 0, 0] * 5, "pa": [0.5, 0.25] * 10, "pb": [0.499, 0.75] * 10})
    assert abs((df["pa"] + df["pb"])[0] - 1.0) > 1e-3  # 0.0010000000000000009 in Float64: 0.999 is stored below it
    out = pf.fairness_report(df, y_true="y", y_pred="p", protected_proba={"race": {"a": "pa", "b": "pb"}},
                             proba_tolerance=1e-3)  # fmt: skip
    assert out.height > 0
    with pytest.raises(pf.InvalidInputError, match="proba_tolerance"):  # beyond the tolerance: still refused
        pf.fairness_report(df.with_columns(pb=pl.col("pb") - 0.001), y_true="y", y_pred="p",
                           protected_proba={"race": {"a": "pa", "b": "pb"}}, proba_tolerance=1e-3)  # fmt: skip


# -- promises -------------------------------------------------------------------------------------


def test_public_summarize_takes_a_fairness_reports_batches() -> None:
    df = pl.DataFrame({"y": [1, 0, 1, 0] * 25, "p": [1, 0, 0, 0] * 25, "g": ["a", "b"] * 50})
    kw = dict(y_true="y", y_pred="p", protected="g")
    whole = pf.summarize(pf.fairness_report(df, **kw))
    assert pf.summarize(pf.fairness_report_batches(df, batch_rows=7, **kw)) == whole  # was: TypeError
    with pytest.raises(pf.PolfairError, match="empty"):
        pf.summarize(iter([]))


def test_metric_frame_of_a_metric_returning_strings_gives_fairlearns_extremes() -> None:
    fl = pytest.importorskip("fairlearn.metrics")
    pytest.importorskip("pandas")
    from polfair.compat.fairlearn import MetricFrame

    y = np.array([0, 1, 1, 0, 1, 0, 1, 1, 0, 0, 1, 1])
    p = np.array([0, 1, 0, 0, 1, 1, 1, 0, 0, 1, 1, 1])
    g = np.array(list("aabbaabbccca"))
    c = np.array(list("xyxyxyxyxyxy"))

    def grade(yt: np.ndarray, yp: np.ndarray) -> str:
        return "high" if (yt == yp).mean() > 0.5 else "low"

    for kw in (dict(metrics=grade), dict(metrics={"grade": grade, "n": lambda a, b: len(a)}),
               dict(metrics={"grade": grade}, control_features=c)):  # fmt: skip
        want = fl.MetricFrame(y_true=y, y_pred=p, sensitive_features=g, **kw)
        got = MetricFrame(y_true=y, y_pred=p, sensitive_features=g, **kw)  # was: PolfairError (non-scalar cells)
        for attr in ("group_min", "group_max"):
            w, o = getattr(want, attr)(), getattr(got, attr)()
            assert (list(o.to_dict().items()) if hasattr(o, "to_dict") else o) == (
                list(w.to_dict().items()) if hasattr(w, "to_dict") else w), (attr, kw)


# -- words ----------------------------------------------------------------------------------------


def test_summaries_and_pages_state_the_favorable_label() -> None:
    df = pl.DataFrame({"y": [1, 0, 1, 0] * 25, "p": [1, 0, 0, 0] * 25, "g": ["a", "b"] * 50,
                       "h": ["u", "v", "v", "x"] * 25})  # fmt: skip
    rep = pf.fairness_report(df, y_true="y", y_pred="p", protected="g", favorable=0)
    text = pf.summarize(rep)
    assert "Favorable outcome: y = 0." in text and "positive class" not in text  # was: "the positive class"
    assert "positive class" not in pf.to_html(rep)
    sl = pf.slice_scan(df, features=["g", "h"], y_true="y", y_pred="p", metric="false_positive_rate", favorable=0,
                       min_support=5)  # fmt: skip
    assert "favorable outcome: y = 0" in " ".join(pf.summarize(sl).split())
    assert "Favorable outcome: y = 0" in pf.to_html(sl)


def test_a_refused_boolean_prediction_expression_is_named_as_written() -> None:
    df = pl.DataFrame({"y": ["a", "b"] * 10, "pred": [1, 0, 0, 0] * 5, "g": ["a", "b"] * 10})
    with pytest.raises(pf.PolarityError, match=r'y_pred=\'\[\(col\("pred"\)\) == \(dyn int: 0\)\]\''):
        pf.fairness_report(df, y_true="y", y_pred=pl.col("pred") == 0, protected="g", favorable="a")


# -- pandas inputs --------------------------------------------------------------------------------


def _pandas_frame():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    n = 300
    age = pd.Series(rng.integers(18, 90, n))
    return pd.DataFrame({
        "band": pd.cut(age, [18, 30, 60, 100], right=False),
        "ord": pd.Categorical(rng.choice(["<25", "25-60", "60+"], n), categories=["<25", "25-60", "60+"], ordered=True),
        "y": rng.integers(0, 2, n), "p": rng.integers(0, 2, n), "loss": rng.random(n), "yr": rng.normal(size=n),
    })  # fmt: skip


def test_pandas_interval_bands_are_readable_group_labels_at_every_door() -> None:
    df = _pandas_frame()
    bands = ["[18, 30)", "[30, 60)", "[60, 100)"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = pf.fairness_report(df, y_true="y", y_pred="p", protected="band")  # was: a raw Polars error
        reg = pf.regression_report(df, y_true="yr", y_pred="loss", protected="band")
        sl = pf.slice_scan(df, features=["band"], errors="loss", min_support=1, k=10, alpha=1.0)
    for out in (rep, reg):
        got = out.filter(pl.col("attribute") == "band")["group"].drop_nulls().unique(maintain_order=True).to_list()
        assert got == bands
    assert sl.height and set(sl["band"].cast(pl.String).to_list()) <= set(bands)
    assert all(t.startswith("band = [") for t in sl["slice"].to_list())
    assert pf.fairness_report(df, y_true="y", y_pred="p", protected="band", privileged={"band": "[30, 60)"}).height


def test_ordered_pandas_categoricals_keep_their_order_in_every_output() -> None:
    df = _pandas_frame()
    order = ["<25", "25-60", "60+"]  # by code point '60+' sorts between '25-60' and '<25'
    rep = pf.fairness_report(df, y_true="y", y_pred="p", protected="ord")
    rows = rep.filter((pl.col("attribute") == "ord") & (pl.col("metric").cast(pl.String) == "selection_rate"))
    assert rows["group"].drop_nulls().to_list() == order
    text = pf.summarize(rep)
    block = text[text.index("== ord"):]
    assert [block.index(f"\n{g} ") for g in order] == sorted(block.index(f"\n{g} ") for g in order)
    page = pf.to_html(rep)
    shown = [page.index(f">{g.replace('<', '&lt;')}<") for g in order]
    assert shown == sorted(shown)


def test_metric_frame_indexes_interval_bands_as_fairlearn() -> None:
    fl = pytest.importorskip("fairlearn.metrics")
    pd = pytest.importorskip("pandas")
    from sklearn.metrics import accuracy_score

    from polfair.compat.fairlearn import MetricFrame

    df = _pandas_frame()
    for sf in (df["band"], pd.qcut(df["yr"], 3), {"b": df["band"], "o": df["ord"]}):
        want = fl.MetricFrame(metrics=accuracy_score, y_true=df["y"], y_pred=df["p"], sensitive_features=sf).by_group
        got = MetricFrame(metrics=accuracy_score, y_true=df["y"], y_pred=df["p"], sensitive_features=sf).by_group
        pd.testing.assert_series_equal(got, want)  # was: an index of {'left': 18, 'right': 30} dicts


# -- a favorable list and datetime keys -----------------------------------------------------------


def test_a_misspelled_value_inside_a_favorable_list_warns_like_privileged() -> None:
    df = pl.DataFrame({"y": ["good", "bad"] * 20, "p": ["good", "bad", "bad", "good"] * 10, "g": ["a", "b"] * 20})
    for data in (df, _duckdb(df)):
        with pytest.warns(pf.ReferenceWarning, match=r"favorable=\['good', 'goood'\]: 'goood' does not occur"):
            pf.fairness_report(data, y_true="y", y_pred="p", protected="g", favorable=["good", "goood"])
    with warnings.catch_warnings():
        warnings.simplefilter("error", pf.ReferenceWarning)  # every value present: nothing said
        three = df.with_columns(y=pl.Series(np.resize(["good", "ok", "bad"], df.height)))
        pf.fairness_report(three, y_true="y", y_pred="p", protected="g", favorable=["good", "ok"])


def test_an_aware_privileged_datetime_on_wall_clock_keys_is_a_clear_error() -> None:
    import datetime as dt

    df = pl.DataFrame({"y": [1, 0] * 10, "p": [1, 1, 0, 0] * 5,
                       "t": [dt.datetime(2020, 1, 1, 12), dt.datetime(2021, 6, 1, 3)] * 10})  # fmt: skip
    aware = dt.datetime(2020, 1, 1, 12, tzinfo=dt.UTC)
    with pytest.raises(pf.InvalidInputError, match="time-zone-aware datetime and the column holds wall-clock"):
        pf.fairness_report(df, y_true="y", y_pred="p", protected="t", privileged={"t": aware})  # was: a raw Polars error
    utc = df.with_columns(pl.col("t").dt.replace_time_zone("UTC"))
    assert pf.fairness_report(utc, y_true="y", y_pred="p", protected="t", privileged={"t": aware}).height  # matches


def test_spark_aware_datetime_keys_with_a_datetime_privileged() -> None:
    import datetime as dt
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from spark_session import spark_session

    pytest.importorskip("pyspark")
    spark = spark_session()
    if spark is None:  # pragma: no cover
        pytest.skip("no Java runtime for Spark")
    df = pl.DataFrame({"y": [1, 0] * 10, "p": [1, 1, 0, 0] * 5,
                       "t": [dt.datetime(2020, 1, 1, 12), dt.datetime(2021, 6, 1, 3)] * 10})  # fmt: skip
    utc = df.with_columns(pl.col("t").dt.replace_time_zone("UTC"))
    zone = spark.conf.get("spark.sql.session.timeZone")
    try:
        spark.conf.set("spark.sql.session.timeZone", "UTC")
        sdf = spark.createDataFrame(utc.to_arrow())
        kw = dict(y_true="y", y_pred="p", protected="t", ci=None)
        want = pf.fairness_report(df, **kw, privileged={"t": dt.datetime(2020, 1, 1, 12)})
        got = pf.fairness_report(sdf, **kw, privileged={"t": dt.datetime(2020, 1, 1, 12)})  # the wall-clock key
        assert got.select("group", "metric", "value").equals(want.select("group", "metric", "value"))
        with pytest.raises(pf.InvalidInputError, match="wall-clock"):  # was: a raw InvalidOperationError
            pf.fairness_report(sdf, **kw, privileged={"t": dt.datetime(2020, 1, 1, 12, tzinfo=dt.UTC)})
    finally:
        spark.conf.set("spark.sql.session.timeZone", zone)
