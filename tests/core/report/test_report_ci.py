"""Interval and test columns of the report (issue 11): agreement with direct calls of
polfair.core.intervals, null rules, and ci=None leaving the schema unchanged."""

from __future__ import annotations

import math

import polars as pl
import pytest

import polfair as pf
from polfair.core import intervals as iv
from polfair.core.report.build import report_from_counts

CI_COLUMNS = ["value_lo", "value_hi", "difference_lo", "difference_hi", "ratio_lo", "ratio_hi", "p_value",
              "p_value_adjusted", "n_eff", "ci_method", "test"]  # fmt: skip


@pytest.fixture(scope="module")
def cells() -> pl.DataFrame:
    df = pl.DataFrame({"g": ["a"] * 30 + ["b"] * 12 + ["c"] * 5, "y": [1, 0, 0] * 10 + [1, 1, 0] * 4 + [1] * 5})
    return pf.confusion_counts(df, y_true="y", protected="g").collect()


@pytest.fixture(scope="module")
def rep(cells: pl.DataFrame) -> pl.DataFrame:
    return report_from_counts(cells, protected=["g"], has_predictions=False, ci=0.95)


def test_ci_none_keeps_the_schema(cells: pl.DataFrame) -> None:
    plain = report_from_counts(cells, protected=["g"], has_predictions=False, ci=None)
    assert plain.columns == [*pf.REPORT_COLUMNS, "n_groups", "excluded_groups", "group_key", "harm"]


def test_interval_columns_follow_n(rep: pl.DataFrame) -> None:
    assert rep.columns == [*pf.REPORT_COLUMNS, *CI_COLUMNS, "n_groups", "excluded_groups", "group_key", "harm"]
    assert all(rep.schema[c] == pl.Float64 for c in CI_COLUMNS[:9])
    assert rep.schema["ci_method"] == pl.Categorical() and rep.schema["test"] == pl.Categorical()


def _rate(x: float, n: float) -> iv.Rate:
    return iv.Rate(pl.lit(x / n), pl.lit(n))


def test_group_rates_match_direct_interval_calls(rep: pl.DataFrame) -> None:
    z = iv.z_value(0.95)
    b = rep.filter(group="b", metric="base_rate").row(0, named=True)
    a = rep.filter(group="a", metric="base_rate").row(0, named=True)
    assert b["reference_group"] == "a"  # the largest group
    g, r = _rate(8, 12), _rate(10, 30)
    w, d, q = iv.wilson_interval(g, z), iv.newcombe_interval(g, r, z), iv.mover_ratio_interval(g, r, z)
    t = iv.two_proportion_test(g, r)
    want = pl.select(w.lo, w.hi.alias("a"), d.lo.alias("b"), d.hi.alias("c"), q.lo.alias("d"), q.hi.alias("e"),
                     t.p_value.alias("f"), t.test.alias("t")).row(0)  # fmt: skip
    got = (b["value_lo"], b["value_hi"], b["difference_lo"], b["difference_hi"], b["ratio_lo"], b["ratio_hi"], b["p_value"])
    for x, y in zip(got, want[:7]):
        assert math.isclose(x, y, rel_tol=1e-12, abs_tol=1e-15)
    assert b["test"] == want[7] and b["ci_method"] == "score" and b["n_eff"] == 12.0
    # hand check of Wilson for 8/12: centre (p + z²/2n)/(1 + z²/n)
    p, n = 8 / 12, 12.0
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    assert math.isclose(b["value_lo"], centre - half, rel_tol=1e-12)
    # the reference group's own comparison has no interval and no test
    assert a["difference"] == 0.0 and a["difference_lo"] is None and a["p_value"] is None
    assert a["value_lo"] is not None
    # BH within (by, metric): adjusted >= raw
    ps = rep.filter(pl.col("group").is_not_null(), pl.col("p_value").is_not_null(), metric="base_rate")
    assert (ps["p_value_adjusted"] >= ps["p_value"] - 1e-15).all()


def test_counts_and_named_disparities(rep: pl.DataFrame) -> None:
    counts = rep.filter(pl.col("metric").cast(pl.String).str.starts_with("num_") | (pl.col("metric") == "n_missing"))
    assert counts.select(CI_COLUMNS).null_count().row(0) == tuple([counts.height] * len(CI_COLUMNS))
    spd = rep.filter(group="b", metric="statistical_parity_difference").row(0, named=True)
    base = rep.filter(group="b", metric="base_rate").row(0, named=True)
    assert (spd["value_lo"], spd["value_hi"], spd["p_value"]) == (base["difference_lo"], base["difference_hi"], base["p_value"])
    di = rep.filter(group="b", metric="disparate_impact").row(0, named=True)
    assert (di["value_lo"], di["value_hi"]) == (base["ratio_lo"], base["ratio_hi"])


def test_attribute_and_population_rows(rep: pl.DataFrame) -> None:
    spread = rep.filter(pl.col("attribute") == "g", pl.col("group").is_null(), metric="base_rate").row(0, named=True)
    assert spread["difference_lo"] <= spread["difference"] <= spread["difference_hi"]
    assert spread["ci_method"] == "projection" and spread["p_value"] is not None
    pop = rep.filter(pl.col("attribute").is_null(), metric="base_rate").row(0, named=True)
    assert pop["value_lo"] < pop["value"] < pop["value_hi"] and pop["p_value"] is None and pop["n_eff"] == 47.0
    edf = rep.filter(pl.col("attribute").is_null(), metric="smoothed_empirical_differential_fairness").row(0, named=True)
    assert edf["ci_method"] == "projection" and edf["value_lo"] >= 0.0
    assert edf["value_hi"] is None  # group c has only favorable labels: no upper bound


def test_deterministic(cells: pl.DataFrame, rep: pl.DataFrame) -> None:
    again = report_from_counts(cells, protected=["g"], has_predictions=False, ci=0.95)
    assert again.drop("group_key").equals(rep.drop("group_key"))


def test_bad_ci_is_a_clear_error(cells: pl.DataFrame) -> None:
    with pytest.raises(ValueError, match="ci"):
        report_from_counts(cells, protected=["g"], has_predictions=False, ci=95)


def test_best_reference_with_intervals(cells: pl.DataFrame) -> None:
    # regression: reference="best" with ci failed (the best group's effective size was missing)
    # min_sample_size=0: the best group here is c (5 rows), below the small-group policy's default
    rep = report_from_counts(cells, protected=["g"], has_predictions=False, ci=0.95, reference="best", min_sample_size=0)
    b = rep.filter(group="b", metric="base_rate").row(0, named=True)
    c = rep.filter(group="c", metric="base_rate").row(0, named=True)
    assert c["reference_group"] == "c" and c["difference_lo"] is None  # the best group is its own reference
    assert b["ci_method"] == "projection" and b["p_value"] is None  # chosen from the data: no test
    assert b["difference_lo"] <= b["difference"] < 0.0 < b["difference_hi"]  # b may be the true best


def test_staged_and_plain_interval_expressions_agree() -> None:
    df = pl.DataFrame({"p": [0.2, 0.0, 1.0, 0.5, None], "n": [50.0, 10.0, 7.0, 0.0, 3.0],
                       "q": [0.4, 0.3, 0.9, 0.5, 0.1], "m": [40.0, 100.0, 30.0, 5.0, 8.0]})  # fmt: skip
    g, r = iv.Rate(pl.col("p"), pl.col("n")), iv.Rate(pl.col("q"), pl.col("m"))

    def build() -> list[pl.Expr]:
        eo = iv.max_abs_difference_interval([(g, r), (r, g)], 0.95)
        mv = iv.mover_ratio_interval(g, r, 1.96)
        t = iv.two_proportion_test(g, r)
        return [eo.lo, eo.hi, mv.lo, mv.hi, t.p_value, t.test]

    plain = df.select([e.alias(str(i)) for i, e in enumerate(build())])
    st = iv.Stager()
    with st.active():
        staged = build()
    assert st.columns and all(len(str(e)) < 400 for e in staged)  # parents read staged columns
    got = st.apply(df.lazy()).select([e.alias(str(i)) for i, e in enumerate(staged)]).collect()
    assert got.equals(plain)


def test_homogeneity_table_equals_the_aggregation_form() -> None:
    rng = __import__("numpy").random.default_rng(4)
    rows = []
    for t in range(40):
        k = int(rng.integers(1, 7))
        n = rng.integers(3, 300, k) if t % 3 else rng.integers(2, 12, k)  # every third: Cochran fails (moments)
        x = rng.binomial(n, 0.1 if t % 3 == 0 else 0.4)
        rows += [{"t": f"u{t}", "p": a / b, "n": float(b), "q": 1 - a / b} for a, b in zip(x, n)]
    df = pl.DataFrame(rows)
    one = iv.homogeneity_test([iv.Rate(pl.col("p"), pl.col("n"))])
    two = iv.homogeneity_test([iv.Rate(pl.col("p"), pl.col("n")), iv.Rate(pl.col("q"), pl.col("n"))])
    want = df.group_by("t", maintain_order=True).agg(one.alias("a"), two.alias("b"))
    got = iv.homogeneity_table(df, by=["t"], families={"m": [("p", "n")], "eo": [("p", "n"), ("q", "n")]})
    assert got["t"].to_list() == want["t"].to_list()
    assert set(got["m__tt"].drop_nulls()) == {"chi2_homogeneity", "chi2_moments"}
    for fam, col in (("m", "a"), ("eo", "b")):
        assert got[f"{fam}__tt"].to_list() == want[col].struct.field("test").to_list()
        for x, y in zip(got[f"{fam}__tp"].to_list(), want[col].struct.field("p_value").to_list()):
            assert (x is None and y is None) or math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-14)


def test_one_group_labels_only_report_with_intervals() -> None:
    # regression: the Enum test/method codes of a one-column cats frame were written into a read-only view
    df = pl.DataFrame({"k": [1, 1, 0, 0, 1], "y": [True, True, False, True, False]})
    rep = pf.fairness_report(df, y_true="y", protected="k")
    assert rep.filter(group="1", metric="base_rate")["ci_method"].item() == "score"


def test_reference_limits_once_per_run_of_equal_rows_are_bit_identical():
    # group_intervals computes the reference's Wilson limits once per run of identical (rate, size) rows
    import numpy as np

    from polfair.core.intervals.proportions import wilson_limits
    from polfair.core.report.intervals import _repeated_rows

    rng = np.random.default_rng(11)
    k = 5
    distinct = rng.random((6, 2 * k))
    distinct[:, k:] = rng.integers(0, 40, (6, k))
    distinct[1, 0], distinct[2, k + 1], distinct[3, 2], distinct[4, 3] = np.nan, 0.0, -0.0, 1.0
    rows = np.repeat(rng.permutation(np.arange(6)), rng.integers(1, 90, 6))  # runs of unequal length
    both = np.concatenate([rng.random((rows.size, k)), distinct[rows]], axis=1)  # strided views, as in the report
    p, n = both[:, k : 2 * k], both[:, 2 * k :]
    assert rows.size >= 64
    got, want = _repeated_rows(wilson_limits, p, n, 1.959963984540054), wilson_limits(p, n, 1.959963984540054)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.view(np.uint64).tolist() == w.view(np.uint64).tolist()
