"""The regression cell table and its arithmetic (polfair.core.regression) against fairlearn, scikit-learn,
scipy and statsmodels on real data (UCI Adult, hours_per_week and a least-squares prediction)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from fairlearn.metrics import MetricFrame
from scipy import stats
from sklearn import metrics as skm

import polfair as pf
from polfair.core import regression as rg

METRICS = {
    "mean_absolute_error": skm.mean_absolute_error,
    "mean_squared_error": skm.mean_squared_error,
    "root_mean_squared_error": skm.root_mean_squared_error,
    "r2_score": skm.r2_score,
}


@pytest.fixture(scope="module")
def adult() -> pl.DataFrame:
    df = pf.load_adult_regression()
    assert isinstance(df, pl.DataFrame)
    return df.with_columns(pl.col("hours_per_week").cast(pl.Float64), pl.col("fnlwgt").cast(pl.Float64) / 1e4)


def _report(df: pl.DataFrame, weight: str | None, **kw: object) -> pl.DataFrame:
    cells = rg.regression_cells(df.lazy(), y_true="hours_per_week", y_pred="predicted_hours", keys=["race", "sex"],
                                weight=weight)  # fmt: skip
    return rg.regression_report_from_cells(cells, protected=["race", "sex"], **kw)  # type: ignore[arg-type]


def _fairlearn(df: pl.DataFrame, weight: str | None, attrs: list[str]) -> dict[tuple[str, ...], dict[str, float]]:
    y, p = df["hours_per_week"].to_numpy(), df["predicted_hours"].to_numpy()
    sens = df.select([pl.col(a).cast(pl.String) for a in attrs]).to_pandas()
    params = {} if weight is None else {name: {"sample_weight": df[weight].to_numpy()} for name in METRICS}
    mf = MetricFrame(metrics=METRICS, y_true=y, y_pred=p, sensitive_features=sens, sample_params=params or None)
    out: dict[tuple[str, ...], dict[str, float]] = {}
    for key, row in mf.by_group.iterrows():
        out[key if isinstance(key, tuple) else (key,)] = dict(row)
    w = np.ones(df.height) if weight is None else df[weight].to_numpy()
    frame = sens.assign(y=y, p=p, w=w)
    for key, g in frame.groupby(attrs):
        key = key if isinstance(key, tuple) else (key,)
        out[key]["mean_outcome"] = np.average(g["y"], weights=g["w"])
        out[key]["mean_prediction"] = np.average(g["p"], weights=g["w"])
        out[key]["mean_error"] = np.average(g["p"] - g["y"], weights=g["w"])
    return out


@pytest.mark.parametrize("weight", [None, "fnlwgt"])
def test_group_metrics_equal_fairlearn_and_sklearn(adult: pl.DataFrame, weight: str | None) -> None:
    rep = _report(adult, weight, ci=None)
    checked = 0
    for attrs in (["race"], ["sex"], ["race", "sex"]):
        expected = _fairlearn(adult, weight, attrs)
        rows = rep.filter(pl.col("attribute") == " & ".join(attrs), pl.col("group").is_not_null())
        for key, values in expected.items():
            label = " & ".join(key)
            for metric, want in values.items():
                got = rows.filter(pl.col("group") == label, pl.col("metric") == metric)["value"].item()
                assert got == pytest.approx(want, rel=1e-12, abs=1e-12), (attrs, key, metric)
                checked += 1
    assert checked == (5 + 2 + 10) * 7
    # the population rows are the metrics of everyone
    pop = rep.filter(pl.col("attribute").is_null())
    w = None if weight is None else adult[weight].to_numpy()
    y, p = adult["hours_per_week"].to_numpy(), adult["predicted_hours"].to_numpy()
    for metric, fn in METRICS.items():
        got = pop.filter(metric=metric)["value"].item()
        assert got == pytest.approx(fn(y, p, sample_weight=w), rel=1e-12)


def test_welch_equals_scipy_ttest(adult: pl.DataFrame) -> None:
    rep = _report(adult, None, privileged={"sex": "Male", "race": "White"})
    male = adult.filter(sex="Male")
    female = adult.filter(sex="Female")
    quantities = {
        "mean_outcome": pl.col("hours_per_week"),
        "mean_prediction": pl.col("predicted_hours"),
        "mean_error": pl.col("predicted_hours") - pl.col("hours_per_week"),
        "mean_absolute_error": (pl.col("predicted_hours") - pl.col("hours_per_week")).abs(),
        "mean_squared_error": (pl.col("predicted_hours") - pl.col("hours_per_week")) ** 2,
    }
    for metric, q in quantities.items():
        a, b = female.select(q).to_series().to_numpy(), male.select(q).to_series().to_numpy()
        res = stats.ttest_ind(a, b, equal_var=False)
        row = rep.filter(attribute="sex", group="Female", metric=metric)
        assert row["p_value"].item() == pytest.approx(res.pvalue, rel=1e-9, abs=1e-300)
        ci = res.confidence_interval(0.95)
        assert row["difference_lo"].item() == pytest.approx(ci.low, rel=1e-9)
        assert row["difference_hi"].item() == pytest.approx(ci.high, rel=1e-9)
        assert row["test"].item() == "welch"
    # RMSE: the test of equal MSE
    rmse = rep.filter(attribute="sex", group="Female", metric="root_mean_squared_error")["p_value"].item()
    mse = rep.filter(attribute="sex", group="Female", metric="mean_squared_error")["p_value"].item()
    assert rmse == mse


def test_t_interval_equals_scipy(adult: pl.DataFrame) -> None:
    rep = _report(adult, None)
    g = adult.filter(race="Other")["hours_per_week"].to_numpy()
    lo, hi = stats.t.interval(0.95, len(g) - 1, loc=g.mean(), scale=stats.sem(g))
    row = rep.filter(attribute="race", group="Other", metric="mean_outcome")
    assert (row["value_lo"].item(), row["value_hi"].item()) == pytest.approx((lo, hi), rel=1e-10)


def test_welch_anova_equals_statsmodels(adult: pl.DataFrame) -> None:
    from statsmodels.stats.oneway import anova_oneway

    rep = _report(adult, None)
    e = (adult["predicted_hours"] - adult["hours_per_week"]).abs().to_numpy()
    res = anova_oneway(e, adult["race"].cast(pl.String).to_numpy(), use_var="unequal")
    row = rep.filter(pl.col("group").is_null(), attribute="race", metric="mean_absolute_error")
    assert row["p_value"].item() == pytest.approx(res.pvalue, rel=1e-9)
    assert row["test"].item() == "welch_anova"


def test_ks_within_bound_of_scipy(adult: pl.DataFrame) -> None:
    rep = _report(adult, None, privileged={"race": "White", "sex": "Male"})
    ref = adult.filter(race="White")["predicted_hours"].to_numpy()
    for race in ["Black", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other"]:
        g = adult.filter(race=race)["predicted_hours"].to_numpy()
        exact = stats.ks_2samp(g, ref).statistic
        row = rep.filter(attribute="race", group=race)
        d = row.filter(metric="ks_distance")["value"].item()
        bound = row.filter(metric="ks_distance_bound")["value"].item()
        assert d <= exact + 1e-12 <= d + bound + 2e-12, (race, d, exact, bound)
        assert bound < 0.01  # the default grid (256 per octave) on ~40-hour predictions
        # the p-value is scipy's asymptotic one at the histogram's distance
        en = round(len(g) * len(ref) / (len(g) + len(ref)))
        assert row.filter(metric="ks_distance")["p_value"].item() == pytest.approx(stats.kstwo.sf(d, en), rel=1e-9)


def test_ks_exact_on_discrete_predictions() -> None:
    rng = np.random.default_rng(3)
    df = pl.DataFrame({"g": rng.choice(["a", "b"], 500), "y": rng.normal(size=500),
                       "p": rng.integers(0, 20, 500).astype(float)})  # fmt: skip
    cells = rg.regression_cells(df.lazy(), y_true="y", y_pred="p", keys=["g"])
    rep = rg.regression_report_from_cells(cells, protected="g", privileged={"g": "a"})
    row = rep.filter(group="b")
    exact = stats.ks_2samp(df.filter(g="b")["p"].to_numpy(), df.filter(g="a")["p"].to_numpy()).statistic
    assert row.filter(metric="ks_distance")["value"].item() == pytest.approx(exact, abs=1e-15)
    assert row.filter(metric="ks_distance_bound")["value"].item() == 0.0


def test_merge_of_partitions_equals_whole(adult: pl.DataFrame) -> None:
    kw = dict(y_true="hours_per_week", y_pred="predicted_hours", keys=["race", "sex"], weight="fnlwgt")
    parts = [rg.regression_cells(adult.lazy().slice(i, 10_000), **kw) for i in range(0, adult.height, 10_000)]
    merged = rg.merge_regression_cells(parts)
    whole = rg.regression_cells(adult.lazy(), **kw)
    cols = [c for c in whole.columns if c not in ("race", "sex", "bin")]
    a, b = merged.select(cols).to_numpy(), whole.select(cols).to_numpy()
    np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-6)
    r1 = rg.regression_report_from_cells(merged, protected=["race", "sex"])
    r2 = rg.regression_report_from_cells(whole, protected=["race", "sex"])
    np.testing.assert_allclose(r1["value"].to_numpy(), r2["value"].to_numpy(), rtol=1e-9, equal_nan=True)


def test_large_mean_small_spread_keeps_its_digits() -> None:
    """Prices near 1e8 with a spread of 1: raw sums of squares would lose every digit."""
    rng = np.random.default_rng(0)
    y = 1e8 + rng.normal(size=2_000)
    p = y + rng.normal(scale=0.5, size=2_000)
    df = pl.DataFrame({"y": y, "p": p, "g": rng.choice(["a", "b"], 2_000)})
    cells = rg.regression_cells(df.lazy(), y_true="y", y_pred="p", keys=["g"])
    rep = rg.regression_report_from_cells(cells, protected="g")
    for g in ("a", "b"):
        part = df.filter(g=g)
        yy, pp = part["y"].to_numpy(), part["p"].to_numpy()
        assert rep.filter(group=g, metric="r2_score")["value"].item() == pytest.approx(skm.r2_score(yy, pp), rel=1e-9)
        lo = rep.filter(group=g, metric="mean_outcome")["value_lo"].item()
        want = stats.t.interval(0.95, len(yy) - 1, loc=yy.mean(), scale=stats.sem(yy))[0]
        assert lo == pytest.approx(want, rel=1e-13)


def test_missing_rows_are_counted_not_used() -> None:
    df = pl.DataFrame({"y": [1.0, None, 3.0, float("nan"), 5.0], "p": [1.0, 2.0, None, 4.0, 4.0],
                       "g": ["a", "a", "a", "b", "b"]})  # fmt: skip
    cells = rg.regression_cells(df.lazy(), y_true="y", y_pred="p", keys=["g"])
    rep = rg.regression_report_from_cells(cells, protected="g", ci=None)
    a = rep.filter(group="a")
    assert a.filter(metric="n_missing")["value"].item() == 2.0
    assert a.filter(metric="num_instances")["value"].item() == 1.0
    assert a["n"][0] == 3
    assert rep.filter(group="b", metric="mean_absolute_error")["value"].item() == 1.0


def test_constant_outcome_r2_is_null() -> None:
    df = pl.DataFrame({"y": [2.0, 2.0, 2.0, 1.0, 3.0], "p": [2.0, 1.0, 2.5, 1.0, 2.0], "g": ["a"] * 3 + ["b"] * 2})
    cells = rg.regression_cells(df.lazy(), y_true="y", y_pred="p", keys=["g"])
    rep = rg.regression_report_from_cells(cells, protected="g")
    assert rep.filter(group="a", metric="r2_score")["value"].item() is None
    assert rep.filter(group="b", metric="r2_score")["value"].item() == pytest.approx(skm.r2_score([1.0, 3.0], [1.0, 2.0]))


def test_overall_reference_compares_with_the_rest(adult: pl.DataFrame) -> None:
    rep = _report(adult, None, reference="overall")
    row = rep.filter(attribute="sex", group="Female", metric="mean_error")
    e = (adult["predicted_hours"] - adult["hours_per_week"]).to_numpy()
    fem = (adult["sex"].cast(pl.String) == "Female").to_numpy()
    assert row["difference"].item() == pytest.approx(e[fem].mean() - e.mean(), rel=1e-9)
    assert row["reference_group"].item() == "overall"
    res = stats.ttest_ind(e[fem], e[~fem], equal_var=False)
    assert row["p_value"].item() == pytest.approx(res.pvalue, rel=1e-9)
    f = fem.mean()
    ci = res.confidence_interval(0.95)
    assert row["difference_lo"].item() == pytest.approx((1 - f) * ci.low, rel=1e-9)


def test_reference_groups_have_no_comparison_intervals(adult: pl.DataFrame) -> None:
    rep = _report(adult, None, privileged={"race": ["White", "Black"], "sex": "Male"})
    race = rep.filter(pl.col("group").is_not_null(), attribute="race", metric="mean_error")
    own = race.filter(pl.col("group").is_in(["White", "Black"]))
    assert own["p_value"].null_count() == 2 and own["difference_lo"].null_count() == 2
    assert set(race["reference_group"].cast(pl.String).to_list()) == {"White|Black"}
    others = race.filter(~pl.col("group").is_in(["White", "Black"]))
    assert others["p_value"].null_count() == 0
    # the union reference: the two groups' rows pooled
    e = (adult["predicted_hours"] - adult["hours_per_week"]).to_numpy()
    ref = adult["race"].cast(pl.String).is_in(["White", "Black"]).to_numpy()
    other = (adult["race"].cast(pl.String) == "Other").to_numpy()
    assert others.filter(group="Other")["difference"].item() == pytest.approx(e[other].mean() - e[ref].mean(), rel=1e-9)
