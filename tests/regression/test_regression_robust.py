"""The regression door as robust as the classification one (issue 30): moments that cannot cancel,
results independent of the order of the rows, weights and outcomes of any scale, on every engine.

Oracles: scikit-learn's ``r2_score`` and ``mean_squared_error``, scipy's ``ttest_ind(equal_var=False)``
and the report of the same data at an ordinary scale.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal
from scipy import stats
from sklearn.metrics import mean_squared_error, r2_score

import polfair as pf

duckdb = pytest.importorskip("duckdb")
pytest.importorskip("narwhals")

KW = dict(y_true="y", y_pred="p", protected="g", privileged={"g": "a"})


def prices(n: int = 400, seed: int = 0) -> pl.DataFrame:
    """Prices near 1e8 with a spread of 1, and a free item (a 0) in the FIRST row, of group a."""
    rng = np.random.default_rng(seed)
    y = 1e8 + rng.normal(size=n)
    p = y + rng.normal(scale=0.5, size=n)
    g = np.array(["a", "b"] * (n // 2))
    y[0], p[0] = 0.0, 0.3
    return pl.DataFrame({"y": y, "p": p, "g": g})


def _value(rep: pl.DataFrame, group: str, metric: str, col: str = "value") -> float:
    return rep.filter(group=group, metric=metric)[col].item()


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_an_outlying_first_row_does_not_cancel_the_other_groups(engine: str) -> None:
    df = prices()
    data = df if engine == "polars" else duckdb.from_arrow(df.to_arrow())
    rep = pf.regression_report(data, **KW)
    b = df.filter(g="b")
    # group b's r² and variance: scikit-learn's (was null, and a zero-width interval, on main)
    assert _value(rep, "b", "r2_score") == pytest.approx(r2_score(b["y"], b["p"]), rel=1e-9)
    assert _value(rep, "b", "mean_squared_error") == pytest.approx(mean_squared_error(b["y"], b["p"]), rel=1e-9)
    lo, hi = _value(rep, "b", "mean_outcome", "value_lo"), _value(rep, "b", "mean_outcome", "value_hi")
    sem = stats.sem(b["y"].to_numpy())
    assert hi - lo == pytest.approx(2 * stats.t.ppf(0.975, b.height - 1) * sem, rel=1e-6)
    # the Welch test of group b's mean error against a's: scipy's
    a = df.filter(g="a")
    want = stats.ttest_ind((b["p"] - b["y"]).to_numpy(), (a["p"] - a["y"]).to_numpy(), equal_var=False)
    assert _value(rep, "b", "mean_error", "p_value") == pytest.approx(want.pvalue, rel=1e-6)


def test_the_report_does_not_depend_on_the_order_of_the_rows() -> None:
    df = prices()
    want = pf.regression_report(df, **KW)
    for seed in range(3):
        shuffled = df.sample(fraction=1.0, shuffle=True, seed=seed)
        assert_frame_equal(pf.regression_report(shuffled, **KW), want, check_exact=False, rel_tol=1e-9, abs_tol=1e-9)
    # and the free item last: the same report
    assert_frame_equal(pf.regression_report(df.reverse(), **KW), want, check_exact=False, rel_tol=1e-9, abs_tol=1e-9)


@pytest.mark.parametrize("scale", [1e-200, 1e-120, 1e120, 1e200])
def test_weights_of_any_scale_give_the_same_report(scale: float) -> None:
    rng = np.random.default_rng(3)
    n = 300
    df = pl.DataFrame({"y": rng.normal(size=n), "g": rng.choice(["a", "b", "c"], n), "w": rng.uniform(0.2, 3.0, n)})
    df = df.with_columns(p=pl.col("y") + rng.normal(scale=0.4, size=n))
    one = pf.regression_report(df, **KW, weight="w")
    got = pf.regression_report(df.with_columns(pl.col("w") * scale), **KW, weight="w")
    counts = pl.col("metric").cast(pl.String) == "num_instances"
    assert_frame_equal(got.filter(~counts), one.filter(~counts), check_exact=False, rel_tol=1e-9, abs_tol=1e-12)
    assert got.filter(counts)["value"].drop_nulls().to_list() == pytest.approx(
        [scale * v for v in one.filter(counts)["value"].drop_nulls().to_list()], rel=1e-12
    )
    assert got["n_eff"].is_not_null().sum() == one["n_eff"].is_not_null().sum() > 0  # null on main at 1e-200


def test_outcomes_near_1e150_give_the_report_of_the_rescaled_data() -> None:
    rng = np.random.default_rng(4)
    n = 200
    y = rng.normal(size=n)
    df = pl.DataFrame({"y": y, "p": y + rng.normal(scale=0.3, size=n), "g": np.array(["a", "b"] * (n // 2))})
    one = pf.regression_report(df, **KW)
    big = pf.regression_report(df.with_columns(pl.col("y", "p") * 1e150), **KW)
    unit = {"mean_squared_error": 1e300, "bounded_group_loss": 1e300, "r2_score": 1.0, "ks_distance": 1.0,
            "ks_distance_bound": 1.0, "num_instances": 1.0, "n_missing": 1.0}  # fmt: skip
    for metric in one["metric"].cast(pl.String).unique():
        f = unit.get(metric.replace("_group_max", "").replace("_group_min", ""), 1e150)
        a, b = big.filter(metric=metric), one.filter(metric=metric)
        for c in ("value", "value_lo", "value_hi", "difference", "difference_lo", "difference_hi"):
            _close(a[c], b[c] * f, (metric, c))
        for c in ("p_value", "ratio", "n_eff"):  # free of the scale: null on main for every Welch test
            _close(a[c], b[c], (metric, c))
    assert big.filter(metric="mean_error")["p_value"].is_not_null().any()


def _close(got: pl.Series, want: pl.Series, what: object) -> None:
    assert got.is_null().to_list() == want.is_null().to_list(), what
    assert got.drop_nulls().to_list() == pytest.approx(want.drop_nulls().to_list(), rel=1e-9, abs=1e-300), what


def test_squared_errors_beyond_float64_are_an_error_naming_the_columns() -> None:
    df = pl.DataFrame({"y": [1e300, -2e300, 3e300, 0.5e300], "p": [-1e300, 2e300, 1e300, 0.0], "g": ["a", "a", "b", "b"]})
    with pytest.raises(pf.InvalidInputError, match=r"y_true='y', y_pred='p'.*overflow Float64.*rescale"):
        pf.regression_report(df, **KW)
    with pytest.raises(pf.InvalidInputError, match=r"y_true='y', y_pred='p'.*overflow Float64"):
        pf.regression_report(duckdb.from_arrow(df.to_arrow()), **KW)


def test_unmatched_privileged_value_warns_as_the_classification_door() -> None:
    df = prices(40)
    with pytest.warns(pf.ReferenceWarning, match=r"privileged=\{'g': \['A'\]\}: 'A' does not occur in column 'g'"):
        pf.regression_report(df, y_true="y", y_pred="p", protected="g", privileged={"g": "A"})
    with pytest.warns(pf.ReferenceWarning, match="does not occur"):
        pf.RegressionAccumulator(y_true="y", y_pred="p", protected="g", privileged={"g": "zz"}).update(df).compute()


def test_empty_input_is_the_no_rows_error() -> None:
    df = prices(10).head(0)
    for data in (df, duckdb.from_arrow(df.to_arrow())):
        with pytest.raises(pf.InvalidInputError, match="the input has no rows"):
            pf.regression_report(data, **KW)


def test_merged_partitions_in_any_order_give_the_whole_table() -> None:
    from polfair.core.regression import merge_regression_cells, regression_report_from_cells

    df = prices(600, seed=7).with_columns(w=pl.int_range(pl.len()) % 5 * 0.5)
    kw = dict(y_true="y", y_pred="p", protected="g", weight="w")
    parts = [pf.regression_counts(df.slice(i, 97), **kw) for i in range(0, df.height, 97)]
    whole = regression_report_from_cells(pf.regression_counts(df, **kw), protected="g")
    for order in (parts, parts[::-1], parts[3:] + parts[:3]):
        got = regression_report_from_cells(merge_regression_cells(order), protected="g")
        # means near 1e8 agree to their rounding (1e-8): differences of them and their tests to about that
        assert_frame_equal(got, whole, check_exact=False, rel_tol=1e-7, abs_tol=1e-6)


def test_the_pass_reads_its_input_once() -> None:
    from counting_source import CountingSource

    df = prices(300).with_columns(w=pl.lit(2.0))
    src = CountingSource(df)
    pf.regression_report(src.lazy(), **KW, weight="w")
    assert src.scans == 1 and src.rows_read == df.height  # no limit-1 query for a shift any more
