"""polfair.core.report.status: THE status rule (ok / violation / inconclusive / insufficient_data) and harm."""

from __future__ import annotations

import math
import warnings

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polfair as pf
from polfair.core.metrics import DISPARITIES, METRICS
from polfair.core.report.status import harm_directions, sided_band, status, status_expr
from polfair.monitor import alerts, apply_thresholds


def naive(value, lo, hi, band, n, n_ref, min_n):
    """The rule as the issue states it, row by row."""
    if min_n is not None and ((n is not None and n < min_n) or (n_ref is not None and n_ref < min_n)):
        return "insufficient_data"
    if value is None or math.isnan(value):
        return "insufficient_data"
    b_lo, b_hi = band
    if b_lo <= value <= b_hi:
        return "ok"
    if lo is None or hi is None or math.isnan(lo) or math.isnan(hi):
        return "violation"  # no interval: the point rule
    if (value < b_lo and hi < b_lo) or (value > b_hi and lo > b_hi):
        return "violation"  # the whole interval outside, on the same side
    return "inconclusive"


hostile = st.one_of(st.none(), st.just(math.nan), st.just(math.inf), st.just(-math.inf),
                    st.floats(-3, 3, allow_nan=False), st.sampled_from([0.8, 1.25, -0.1, 0.1, 0.0, 1.0]))  # fmt: skip
bands = st.sampled_from([(0.8, 1.25), (-0.1, 0.1), (0.8, math.inf), (-math.inf, 1.25), (0.0, 0.0)])
sizes = st.one_of(st.none(), st.integers(0, 60))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(hostile, hostile, hostile, bands, sizes, sizes), min_size=1, max_size=30),
       st.one_of(st.none(), st.integers(1, 40)))  # fmt: skip
def test_status_expr_matches_the_stated_rule(rows, min_n):
    frame = pl.DataFrame(
        {"v": [r[0] for r in rows], "lo": [r[1] for r in rows], "hi": [r[2] for r in rows],
         "blo": [r[3][0] for r in rows], "bhi": [r[3][1] for r in rows], "n": [r[4] for r in rows],
         "nr": [r[5] for r in rows]},
        schema={"v": pl.Float64, "lo": pl.Float64, "hi": pl.Float64, "blo": pl.Float64, "bhi": pl.Float64,
                "n": pl.Int64, "nr": pl.Int64},
    )  # fmt: skip
    got = frame.select(status_expr(pl.col("v"), pl.col("lo"), pl.col("hi"), pl.col("blo"), pl.col("bhi"),
                                   n=pl.col("n"), n_ref=pl.col("nr"), min_sample_size=min_n))  # fmt: skip
    want = [naive(*r, min_n) for r in rows]
    assert got.to_series().to_list() == want
    # the scalar form is the same expression
    assert [status(r[0], r[1], r[2], r[3], n=r[4], n_ref=r[5], min_sample_size=min_n) for r in rows] == want


def test_the_three_verdicts_of_the_issue_are_one():
    # race "Other", false_negative_rate_ratio 1.33 [1.14, 1.52], adjusted p 0.0015: outside the band,
    # the interval reaches into it: inconclusive (the monitor with significance=0.05 said "violation",
    # the CLI summary's "?" said the opposite of the page)
    assert status(1.33, 1.14, 1.52, (0.8, 1.25)) == "inconclusive"
    # Female SPD -0.101 [-0.112, -0.090] against [-0.1, 0.1]: not a violation one day and ok the next
    assert status(-0.101, -0.112, -0.090, (-0.1, 0.1)) == "inconclusive"
    assert status(-0.093, -0.104, -0.082, (-0.1, 0.1)) == "ok"
    assert status(-0.13, -0.14, -0.12, (-0.1, 0.1)) == "violation"


def _report() -> pl.DataFrame:
    rows = [  # group, value, value_lo, value_hi, p_value_adjusted
        ("big", 0.62, 0.60, 0.66, 1e-60),  # breach, whole interval below the band
        ("small", 0.41, 0.15, 0.85, 0.20),  # breach by the value, the interval reaches into the band
        ("tiny_p", 0.75, 0.70, 0.82, 0.01),  # breach, small p-value, interval reaching in: inconclusive
        ("wide_ok", 1.0, 0.5, 1.9, 0.9),  # inside the band
        ("no_ci", 0.5, None, None, None),  # no interval: the point rule
    ]
    return pl.DataFrame(
        {"attribute": ["race"] * 5, "group": [r[0] for r in rows], "metric": ["disparate_impact"] * 5,
         "value": [r[1] for r in rows], "reference_group": ["white"] * 5, "difference": [None] * 5,
         "ratio": [None] * 5, "n": [3000, 11, 500, 40, 100], "value_lo": [r[2] for r in rows],
         "value_hi": [r[3] for r in rows], "p_value_adjusted": [r[4] for r in rows]},
        schema_overrides={"difference": pl.Float64, "ratio": pl.Float64},
    )  # fmt: skip


def test_apply_thresholds_reads_intervals_not_p_values():
    # the interval rule alone: the small-group policy off (min_sample_size=0), its sizes are toy ones
    out = apply_thresholds(_report(), {"disparate_impact": [0.8, 1.25]}, min_sample_size=0)
    assert out["status"].to_list() == ["violation", "inconclusive", "inconclusive", "ok", "violation"]
    shown = alerts(out)
    assert shown["group"].to_list() == ["big", "no_ci"]
    assert shown.columns[shown.columns.index("value") + 1] == "interval"
    assert shown["interval"].to_list() == ["[0.6, 0.66]", None]
    # without interval columns: OpenScale's point rule
    point = apply_thresholds(_report().drop("value_lo", "value_hi"), {"disparate_impact": [0.8, 1.25]},
                             min_sample_size=0)
    assert point["status"].to_list() == ["violation", "violation", "violation", "ok", "violation"]


def test_significance_is_retired_with_a_warning():
    with pytest.warns(FutureWarning, match="ignored"):
        out = apply_thresholds(_report(), {"disparate_impact": [0.8, 1.25]}, 0, significance=0.05)
    assert out["status"].to_list() == ["violation", "inconclusive", "inconclusive", "ok", "violation"]
    df = pl.DataFrame({"y": [1, 0, 1, 0] * 30, "p": [1, 1, 0, 0] * 30, "g": ["a", "a", "b", "b"] * 30})
    kw = dict(y_true="y", y_pred="p", protected="g", thresholds={"disparate_impact": [0.8, 1.25]})
    with pytest.warns(FutureWarning, match="ci=0.9"):
        rep = pf.fairness_report(df, **kw, significance=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        same = pf.fairness_report(df, **kw, ci=0.9)
    assert rep.select("value_lo", "status").equals(same.select("value_lo", "status"))
    with pytest.raises(pf.PolfairError, match="contradicts ci=0.99"):
        pf.fairness_report(df, **kw, significance=0.1, ci=0.99)
    with pytest.raises(pf.PolfairError, match="ci=None"):
        pf.fairness_report(df, **kw, significance=0.1, ci=None)


def test_harm_directions_come_from_the_metric_definitions():
    d = harm_directions()
    # favorable-outcome rates: lower is the disadvantage; unfavorable outcomes and errors: higher
    assert {m: d[m] for m in ("selection_rate", "true_positive_rate", "false_positive_rate", "accuracy")} == dict.fromkeys(
        ("selection_rate", "true_positive_rate", "false_positive_rate", "accuracy"), "lower")  # fmt: skip
    assert {d[m] for m in ("false_negative_rate", "true_negative_rate", "error_rate", "false_omission_rate")} == {
        "higher"}  # fmt: skip
    for name, disp in DISPARITIES.items():
        if len(disp.rates) == 1:  # a single-rate comparison has its rate's direction
            assert disp.harm == METRICS[disp.rates[0]].harm, name
    for unsigned in ("equalized_odds_difference", "average_abs_odds_difference"):
        assert unsigned not in d
    counts = [m for m in METRICS if not METRICS[m].is_rate and METRICS[m].formula is None]
    assert counts and not any(METRICS[m].harm for m in counts)
    # model-quality scores (f1, balanced accuracy, MCC): a lower score for the group is its harm, as accuracy
    assert {d[m] for m in ("f1_score", "balanced_accuracy", "matthews_corrcoef")} == {"lower"}


def test_harm_column_on_compas_reads_propublica():
    # aif360's convention: favorable = no recidivism (0); ProPublica's "false positives" (flagged, did not
    # reoffend) are then false negatives: African-American defendants are disadvantaged on both error rates
    rep = pf.fairness_report(pf.load_compas(), y_true="two_year_recid", y_pred=pl.col("decile_score") >= 5,
                             protected="race", favorable=0, score_label=1, privileged={"race": "Caucasian"},
                             ci=None)  # fmt: skip
    aa = dict(rep.filter(group="African-American").select(pl.col("metric").cast(pl.String), "harm").rows())
    for m in ("disparate_impact", "statistical_parity_difference", "false_negative_rate_ratio",
              "false_positive_rate_ratio", "selection_rate", "false_negative_rate", "average_odds_difference"):
        assert aa[m] == "group", m
    assert aa["equalized_odds_difference"] is None and aa["num_instances"] is None
    caucasian = rep.filter(group="Caucasian", metric="disparate_impact")["harm"].item()
    assert caucasian == "none"
    assert rep.filter(pl.col("group").is_null())["harm"].null_count() == rep.filter(pl.col("group").is_null()).height


def test_one_sided_band_flags_only_the_disadvantaged_side():
    df = pl.DataFrame({"metric": ["disparate_impact", "false_negative_rate_ratio", "equalized_odds"]})
    lo, hi = sided_band(pl.col("metric"), pl.lit(0.8), pl.lit(1.25), "harm")
    assert df.select(lo.alias("lo"), hi.alias("hi")).rows() == [(0.8, math.inf), (-math.inf, 1.25), (0.8, 1.25)]
    # an advantaged group (DI 1.6) is a violation on the symmetric band, ok on the harm side only
    data = pl.DataFrame({"y": [1, 0] * 200, "p": [1] * 160 + [0] * 40 + [1] * 100 + [0] * 100,
                         "g": ["a"] * 200 + ["b"] * 200})  # fmt: skip
    kw = dict(y_true="y", y_pred="p", protected="g", privileged={"g": "b"},
              thresholds={"disparate_impact": [0.8, 1.25]})  # fmt: skip
    both = pf.fairness_report(data, **kw).filter(group="a", metric="disparate_impact")
    harm = pf.fairness_report(data, **kw, band="harm").filter(group="a", metric="disparate_impact")
    assert both["status"].item() == "violation" and both["harm"].item() == "reference"
    assert harm["status"].item() == "ok" and harm["threshold"].item() == "[0.8, inf]"
    with pytest.raises(pf.PolfairError, match="band must be 'both'"):
        pf.fairness_report(data, **kw, band="lower")


def test_harm_column_matches_a_row_by_row_reference():
    import numpy as np

    rng = np.random.default_rng(3)
    n = 3000
    df = pl.DataFrame({"y": rng.integers(0, 2, n), "p": rng.integers(0, 2, n), "g": rng.choice(list("abcd"), n),
                       "s": rng.choice(["f", "m"], n)})  # fmt: skip
    rep = pf.fairness_report(df, y_true="y", y_pred="p", protected=["g", "s"], ci=None)
    d = harm_directions()
    for r in rep.iter_rows(named=True):
        m = str(r["metric"])
        signed = None
        if r["group"] is not None and m in d:
            if m in METRICS:
                signed = r["difference"]
            elif m == "disparate_impact" or m.endswith("_ratio"):
                signed = None if r["value"] is None else r["value"] - 1.0
            else:
                signed = r["value"]
        if signed is None or math.isnan(signed):
            want = None
        else:
            s = signed * (-1 if d[m] == "lower" else 1)
            want = "none" if s == 0 else "group" if s > 0 else "reference"
        assert r["harm"] == want, r


def test_harm_of_a_small_report_in_numpy_equals_the_polars_plan(monkeypatch):
    # with_harm computes a small report's codes in numpy (no plan): the same column as the plan
    import numpy as np

    from polfair.core.report import status as status_module

    rng = np.random.default_rng(5)
    n = 3000
    df = pl.DataFrame({"y": rng.integers(0, 2, n), "p": rng.integers(0, 2, n), "g": rng.choice(list("abcd"), n),
                       "s": rng.choice(["f", "m"], n)})  # fmt: skip
    rep = pf.fairness_report(df, y_true="y", y_pred="p", protected=["g", "s"])
    i = pl.int_range(pl.len())
    hostile = rep.with_columns(  # NaN, null and infinite values and differences, exact ties, ulp-sized distances
        value=pl.when(i % 17 == 0).then(float("nan")).when(i % 19 == 0).then(None).when(i % 23 == 0)
        .then(float("inf")).when(i % 29 == 0).then(1.0 + 1e-13).otherwise(pl.col("value")),
        difference=pl.when(i % 13 == 0).then(None).when(i % 11 == 0).then(0.0).when(i % 31 == 0)
        .then(-float("inf")).when(i % 37 == 0).then(float("nan")).otherwise(pl.col("difference")),
    )  # fmt: skip
    assert hostile.height <= status_module._NUMPY_HARM_ROWS
    small = status_module.with_harm(hostile)
    monkeypatch.setattr(status_module, "_NUMPY_HARM_ROWS", -1)  # force the Polars plan
    planned = status_module.with_harm(hostile)
    assert small["harm"].to_list() == planned["harm"].to_list()
    assert set(small["harm"].drop_nulls().to_list()) == {"none", "group", "reference"}
    assert small["harm"].null_count() > 0
