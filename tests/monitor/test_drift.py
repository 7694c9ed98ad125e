"""compare_reports: changes between runs/periods and their tests, against hand-computed cases."""

from __future__ import annotations

import inspect
import math
from statistics import NormalDist

import numpy as np
import polars as pl
import pytest

import polfair as pf
from polfair.exceptions import PolfairError
from polfair.monitor.drift import DRIFT_COLUMNS, RATE_DENOMINATORS, compare_reports


def _rows(group: str, n: int, positives: int, period: str) -> dict[str, list]:
    # y_pred: `positives` ones; labels: alternate 1/0 (not used by the selection-rate tests)
    return {"g": [group] * n, "pred": [1] * positives + [0] * (n - positives),
            "y": [i % 2 for i in range(n)], "period": [period] * n}  # fmt: skip


def _frame(spec: list[tuple[str, int, int, str]]) -> pl.DataFrame:
    parts = [pl.DataFrame(_rows(*s)) for s in spec]
    return pl.concat(parts)


# current: a 30/100 selected, b 50/100; baseline: a 20/100, b 50/100 (b is the privileged reference)
_CUR = _frame([("a", 100, 30, "p2"), ("b", 100, 50, "p2")])
_BASE = _frame([("a", 100, 20, "p1"), ("b", 100, 50, "p1")])
_OPTS = {"y_true": "y", "y_pred": "pred", "protected": "g", "privileged": {"g": "b"}}
# reports without intervals (no n_eff column), whatever the default of ci= is
_NO_CI = {"ci": None} if "ci" in inspect.signature(pf.fairness_report).parameters else {}


def _one(out: pl.DataFrame, group: str | None, metric: str, statistic: str) -> dict:
    sub = out.filter(pl.col("group").eq_missing(group), metric=metric, statistic=statistic)
    assert sub.height == 1, sub
    return sub.row(0, named=True)


def _two_sided(z: float) -> float:
    return 2.0 * (1.0 - NormalDist().cdf(abs(z)))


@pytest.fixture(scope="module")
def compared() -> pl.DataFrame:
    cur = pf.fairness_report(_CUR, **_OPTS)
    base = pf.fairness_report(_BASE, **_OPTS)
    return compare_reports(cur, base)


def test_columns(compared: pl.DataFrame) -> None:
    assert compared.columns == list(DRIFT_COLUMNS)
    assert compared.schema["drift"] == pl.Boolean


def test_rate_change_hand_computed(compared: pl.DataFrame) -> None:
    row = _one(compared, "a", "selection_rate", "value")
    assert row["current"] == pytest.approx(0.3) and row["baseline"] == pytest.approx(0.2)
    assert row["change"] == pytest.approx(0.1)
    assert row["relative_change"] == pytest.approx(0.5)
    # "N-1" chi-square with the pooled proportion 50/200
    z = 0.1 / math.sqrt(0.25 * 0.75 * (1 / 100 + 1 / 100))
    chi2 = z * z * 199 / 200
    assert row["p_value"] == pytest.approx(math.erfc(math.sqrt(chi2 / 2)), rel=1e-12)
    assert row["p_value"] == pytest.approx(0.10335, abs=5e-5)
    assert row["test"] == "chi2_n1"
    unchanged = _one(compared, "b", "selection_rate", "value")
    assert unchanged["change"] == 0.0 and unchanged["p_value"] == pytest.approx(1.0)


def test_rate_change_interval_is_newcombe() -> None:
    sm = pytest.importorskip("statsmodels.stats.proportion")
    cur = pf.fairness_report(_CUR, **_OPTS)
    out = compare_reports(cur, pf.fairness_report(_BASE, **_OPTS), alpha=0.1)
    row = _one(out, "a", "selection_rate", "value")
    lo, hi = sm.confint_proportions_2indep(30, 100, 20, 100, method="newcomb", alpha=0.1)
    assert (row["change_lo"], row["change_hi"]) == pytest.approx((lo, hi), abs=1e-12)


def test_difference_change_hand_computed(compared: pl.DataFrame) -> None:
    row = _one(compared, "a", "selection_rate", "difference")
    assert row["current"] == pytest.approx(-0.2) and row["baseline"] == pytest.approx(-0.3)
    var = 0.3 * 0.7 / 100 + 0.5 * 0.5 / 100 + 0.2 * 0.8 / 100 + 0.5 * 0.5 / 100
    z = 0.1 / math.sqrt(var)
    assert row["p_value"] == pytest.approx(_two_sided(z), rel=1e-9)
    assert row["p_value"] == pytest.approx(0.2837, abs=1e-4)
    zc = NormalDist().inv_cdf(0.975)
    assert (row["change_lo"], row["change_hi"]) == pytest.approx((0.1 - zc * math.sqrt(var), 0.1 + zc * math.sqrt(var)))
    assert row["test"] == "z_wald"
    # the named disparity built from the same rate gets the same test
    spd = _one(compared, "a", "statistical_parity_difference", "value")
    assert spd["p_value"] == pytest.approx(row["p_value"], rel=1e-12)
    assert spd["change"] == pytest.approx(0.1)
    # the reference group's own comparison is not tested
    assert _one(compared, "b", "selection_rate", "difference")["p_value"] is None


def test_ratio_change_hand_computed(compared: pl.DataFrame) -> None:
    row = _one(compared, "a", "disparate_impact", "value")
    assert row["current"] == pytest.approx(0.6) and row["baseline"] == pytest.approx(0.4)
    var = 0.7 / 30 + 0.5 / 50 + 0.8 / 20 + 0.5 / 50
    z = math.log(1.5) / math.sqrt(var)
    assert row["p_value"] == pytest.approx(_two_sided(z), rel=1e-9)
    assert row["p_value"] == pytest.approx(0.1601, abs=1e-4)
    assert row["test"] == "z_log_wald"
    assert row["change_lo"] is None
    assert _one(compared, "a", "selection_rate", "ratio")["p_value"] == pytest.approx(row["p_value"])


def test_bh_adjustment_within_metric_and_statistic(compared: pl.DataFrame) -> None:
    fam = compared.filter(metric="selection_rate", statistic="value").filter(pl.col("p_value").is_not_null())
    p = sorted(fam["p_value"].to_list())
    m = len(p)
    expect = [min(1.0, min(p[j] * m / (j + 1) for j in range(i, m))) for i in range(m)]
    got = fam.sort("p_value")["p_value_adjusted"].to_list()
    assert got == pytest.approx(expect)
    assert (compared.filter(pl.col("drift"))["p_value_adjusted"] < 0.05).all()


def test_untested_rows_have_null_tests(compared: pl.DataFrame) -> None:
    counts = compared.filter(metric="num_instances")
    assert counts.height and counts["p_value"].is_null().all() and counts["drift"].is_null().all()
    spread = compared.filter(pl.col("group").is_null() & pl.col("attribute").is_not_null())
    assert spread["p_value"].is_null().all()


def test_significant_drift_is_flagged() -> None:
    cur = pf.fairness_report(_frame([("a", 400, 200, "p"), ("b", 400, 200, "p")]), **_OPTS)
    base = pf.fairness_report(_frame([("a", 400, 80, "p"), ("b", 400, 200, "p")]), **_OPTS)
    out = compare_reports(cur, base, metrics=["selection_rate", "disparate_impact"])
    assert _one(out, "a", "selection_rate", "value")["drift"] is True
    assert _one(out, "a", "disparate_impact", "value")["drift"] is True
    assert _one(out, "b", "selection_rate", "value")["drift"] is False
    assert set(out["metric"].unique()) == {"selection_rate", "disparate_impact"}


def test_trend_previous_and_fixed_baseline() -> None:
    df = pl.concat([_BASE, _CUR, _frame([("a", 100, 45, "p3"), ("b", 100, 50, "p3")])])
    rep = pf.fairness_report(df, **_OPTS, by="period")
    prev = compare_reports(rep, period="period", metrics=["selection_rate"], statistics=["value"])
    assert prev.columns[:2] == ["period", "baseline_period"]
    pairs = prev.select("period", "baseline_period").unique().sort("period").rows()
    assert pairs == [("p2", "p1"), ("p3", "p2")]
    assert _one(prev.filter(period="p3"), "a", "selection_rate", "value")["change"] == pytest.approx(0.15)
    fixed = compare_reports(rep, period="period", baseline_period="p1", metrics=["selection_rate"])
    assert fixed.select("period", "baseline_period").unique().sort("period").rows() == [("p2", "p1"), ("p3", "p1")]
    # the p2-vs-p1 rows are the two-report comparison
    two = compare_reports(pf.fairness_report(_CUR, **_OPTS), pf.fairness_report(_BASE, **_OPTS),
                          metrics=["selection_rate"])  # fmt: skip
    same = fixed.filter(period="p2").drop("period", "baseline_period")
    assert same.sort("group", "statistic").equals(two.sort("group", "statistic"))


def test_cell_tables_give_the_same_comparison(compared: pl.DataFrame) -> None:
    cur = pf.confusion_counts(_CUR, y_true="y", y_pred="pred", protected="g").collect()
    base = pf.confusion_counts(_BASE, y_true="y", y_pred="pred", protected="g").collect()
    out = compare_reports(cur, base, protected=["g"], report_options={"privileged": {"g": "b"}})
    assert out.equals(compared)


def test_effective_sizes_from_n_eff_use_the_weighted_test() -> None:
    cur = pf.fairness_report(_CUR, **_OPTS)
    base = pf.fairness_report(_BASE, **_OPTS)

    def with_n_eff(rep: pl.DataFrame, scale: float) -> pl.DataFrame:
        den = pl.DataFrame({"metric": list(RATE_DENOMINATORS), "den": list(RATE_DENOMINATORS.values())})
        counts = rep.filter(pl.col("group").is_not_null()).select(
            "attribute", "group", pl.col("metric").cast(pl.String).alias("den"), pl.col("value").alias("n_eff")
        )
        out = rep.with_columns(pl.col("metric").cast(pl.String)).join(den, on="metric", how="left")
        out = out.join(counts, on=["attribute", "group", "den"], how="left", nulls_equal=True)
        return out.with_columns(pl.col("n_eff") * scale).drop("den")

    out = compare_reports(with_n_eff(cur, 0.5), with_n_eff(base, 0.5), metrics=["selection_rate"])
    row = _one(out, "a", "selection_rate", "value")
    assert row["test"] == "z_ess"
    z = 0.1 / math.sqrt(0.25 * 0.75 * (1 / 50 + 1 / 50))
    assert row["p_value"] == pytest.approx(_two_sided(z), rel=1e-9)


def test_weighted_report_without_n_eff_is_refused() -> None:
    w = _CUR.with_columns(pl.lit(2.0).alias("w"))
    cur = pf.fairness_report(w, **_OPTS, weight="w", **_NO_CI)
    with pytest.raises(PolfairError, match="looks weighted"):
        compare_reports(cur, cur)


def test_errors(compared: pl.DataFrame) -> None:
    rep = pf.fairness_report(_CUR, **_OPTS)
    with pytest.raises(PolfairError, match="period=<a by column"):
        compare_reports(rep)
    with pytest.raises(PolfairError, match="not a by column"):
        compare_reports(rep, period="period")
    by = pf.fairness_report(_CUR, **_OPTS, by="period")
    with pytest.raises(PolfairError, match="they must match"):
        compare_reports(by, rep)
    with pytest.raises(PolfairError, match="baseline_period='p9'"):
        compare_reports(by, period="period", baseline_period="p9")
    with pytest.raises(PolfairError, match="statistics must be"):
        compare_reports(rep, rep, statistics=["values"])
    with pytest.raises(PolfairError, match="alpha must be"):
        compare_reports(rep, rep, alpha=5)
    with pytest.raises(PolfairError, match="pass protected"):
        compare_reports(pf.confusion_counts(_CUR, y_true="y", y_pred="pred", protected="g").collect(), rep)
    with pytest.raises(PolfairError, match="neither a polfair report"):
        compare_reports(pl.DataFrame({"a": [1]}), rep)
    with pytest.raises(TypeError, match="polars DataFrame"):
        compare_reports(rep.lazy(), rep)  # type: ignore[arg-type]


def test_rate_denominators_match_the_metric_definitions() -> None:
    from polfair.core.metrics import METRICS

    counts = pl.DataFrame({"tp": [3.0], "fp": [5.0], "tn": [7.0], "fn": [11.0]})
    report_counts = {"num_instances": 26.0, "num_positives": 14.0, "num_negatives": 12.0,
                     "num_pred_positives": 8.0, "num_pred_negatives": 18.0}  # fmt: skip
    from polfair.core.metrics import Counts

    for metric, den in RATE_DENOMINATORS.items():
        assert counts.select(METRICS[metric].denominator(Counts())).item() == report_counts[den], metric


def _counts_frame(cells: list[tuple[str, int, int]], period: str) -> pl.DataFrame:
    """Rows for (group, n, selected); labels alternate."""
    return pl.concat([pl.DataFrame(_rows(g, n, k, period)) for g, n, k in cells])


def test_random_rate_changes_match_scipy_and_statsmodels() -> None:
    """Property test: the value test of every group's selection rate equals the reference computation
    (statsmodels' pooled z -> "N-1" chi2 via scipy, or scipy's Fisher exact test), and the difference
    test equals the naive Wald z of the difference of differences."""
    hyp = pytest.importorskip("hypothesis")
    st = hyp.strategies
    stats = pytest.importorskip("scipy.stats")
    smp = pytest.importorskip("statsmodels.stats.proportion")

    sizes = st.tuples(st.integers(2, 60), st.integers(0, 60)).map(lambda t: (t[0], min(t[1], t[0])))

    @hyp.settings(max_examples=15, deadline=None)
    @hyp.given(cur=st.lists(sizes, min_size=2, max_size=3), base=st.lists(sizes, min_size=2, max_size=3))
    def check(cur: list[tuple[int, int]], base: list[tuple[int, int]]) -> None:
        k = min(len(cur), len(base))
        names = [f"g{i}" for i in range(k)]
        c = pf.fairness_report(_counts_frame([(g, *cur[i]) for i, g in enumerate(names)], "c"),
                               y_true="y", y_pred="pred", protected="g", privileged={"g": "g0"})  # fmt: skip
        b = pf.fairness_report(_counts_frame([(g, *base[i]) for i, g in enumerate(names)], "b"),
                               y_true="y", y_pred="pred", protected="g", privileged={"g": "g0"})  # fmt: skip
        out = compare_reports(c, b, metrics=["selection_rate"], p_adjust=None)
        for i, g in enumerate(names):
            (n1, x1), (n0, x0) = cur[i], base[i]
            row = _one(out, g, "selection_rate", "value")
            succ, tot = x1 + x0, n1 + n0
            expected_min = min(n1, n0) * min(succ, tot - succ) / tot
            if succ in (0, tot):
                ref = 1.0
            elif expected_min < 1:
                ref = stats.fisher_exact([[x1, n1 - x1], [x0, n0 - x0]]).pvalue
            else:
                z, _ = smp.proportions_ztest([x1, x0], [n1, n0])
                ref = stats.chi2.sf(z * z * (tot - 1) / tot, 1)
            assert row["p_value"] == pytest.approx(ref, rel=1e-9, abs=1e-12), (g, cur[i], base[i], row["test"])
            assert row["change"] == pytest.approx(x1 / n1 - x0 / n0, abs=1e-15)
            if i == 0:
                continue
            (r1n, r1x), (r0n, r0x) = cur[0], base[0]
            ps = [(x1 / n1, n1), (r1x / r1n, r1n), (x0 / n0, n0), (r0x / r0n, r0n)]
            var = sum(p * (1 - p) / n for p, n in ps)
            drow = _one(out, g, "selection_rate", "difference")
            dd = (ps[0][0] - ps[1][0]) - (ps[2][0] - ps[3][0])
            assert drow["change"] == pytest.approx(dd, abs=1e-12)
            if var > 0:
                ref_p = 2 * stats.norm.sf(abs(dd) / math.sqrt(var))
                assert drow["p_value"] == pytest.approx(ref_p, rel=1e-9, abs=1e-12)
            else:
                assert drow["p_value"] is None

    check()


def test_weighted_cell_tables_use_kish_sizes_from_the_squares() -> None:
    rng = np.random.default_rng(1)

    def frame(shift: float) -> pl.DataFrame:
        n = 600
        p = (rng.random(n) < 0.4 + shift).astype(int)
        return pl.DataFrame({"g": rng.choice(["a", "b"], n), "y": rng.integers(0, 2, n), "p": p,
                             "w": rng.choice([0.5, 1.0, 3.0], n)})  # fmt: skip

    now, before = frame(0.1), frame(0.0)
    cells = [pf.confusion_counts(f, y_true="y", y_pred="p", protected="g", weight="w").collect() for f in (now, before)]
    out = compare_reports(*cells, protected=["g"], metrics=["selection_rate"], statistics=["value"])

    def kish(df: pl.DataFrame) -> tuple[float, float]:
        d = df.filter(g="a")
        w = d["w"]
        return w.sum() ** 2 / (w**2).sum(), (d["w"] * d["p"]).sum() / w.sum()

    (n1, p1), (n0, p0) = kish(now), kish(before)
    pooled = (p1 * n1 + p0 * n0) / (n1 + n0)
    z = (p1 - p0) / math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n0))
    row = _one(out, "a", "selection_rate", "value")
    assert row["test"] == "z_ess"
    assert (row["current"], row["baseline"]) == pytest.approx((p1, p0))
    assert row["p_value"] == pytest.approx(_two_sided(z), rel=1e-9)
    # the same reports without sizes are refused
    opts = {"y_true": "y", "y_pred": "p", "protected": "g", "weight": "w", **_NO_CI}
    reports = [pf.fairness_report(f, **opts) for f in (now, before)]
    with pytest.raises(PolfairError, match="looks weighted"):
        compare_reports(*reports)


# ---- issue 22: nightly runs with different period values, retried jobs ------------------------------


def _nightly(day: str, run: str, data: pl.DataFrame = _CUR) -> pl.DataFrame:
    rep = pf.fairness_report(data.with_columns(pl.lit(day).alias("date")), **_OPTS, by="date",
                             run_metadata={"run_id": run})  # fmt: skip
    return rep


def test_two_nightly_runs_match_ignoring_their_dates() -> None:
    import warnings

    from polfair.monitor.drift import NoMatchWarning

    tonight, last = _nightly("2026-05-02", "b", _CUR), _nightly("2026-05-01", "a", _BASE)
    with pytest.warns(NoMatchWarning, match="pass period='date'"):
        empty = compare_reports(tonight, last)  # the dates differ: nothing matches, and it says so
    assert empty.height == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = compare_reports(tonight, last, period="date")
        same = compare_reports(tonight, last, on=[])
    assert out.columns[:2] == ["date", "baseline_date"] and out.height > 0
    assert set(out["baseline_date"]) == {"2026-05-01"} and set(out["date"]) == {"2026-05-02"}
    plain = compare_reports(tonight.drop("date"), last.drop("date"))  # the same numbers as without dates
    assert out.drop("date", "baseline_date").equals(plain)
    assert same.equals(out)


def test_a_period_appended_twice_names_the_runs() -> None:
    table = pl.concat([_nightly("2026-05-01", "first-try", _BASE), _nightly("2026-05-01", "retry", _BASE),
                       _nightly("2026-05-02", "c", _CUR)])  # fmt: skip
    with pytest.raises(PolfairError, match=r"holds 2 runs for date='2026-05-01' \(run_id 'first-try', 'retry'\)"):
        compare_reports(table, period="date")
    base = table.filter(pl.col("date") == "2026-05-01")
    with pytest.raises(PolfairError, match="'first-try', 'retry'"):
        compare_reports(_nightly("2026-05-02", "c", _CUR), base, period="date")
    with pytest.raises(PolfairError, match="not by columns"):
        compare_reports(table, base, on=["day"])
