"""Score histograms, ROC/PR/calibration by group and threshold sweeps vs scikit-learn and the core report."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polfair as pf
from polfair.exceptions import InvalidInputError, PolfairError
from polfair.scores import (
    group_histograms,
    merge_score_counts,
    precision_recall_curve,
    reliability_curve,
    roc_curve,
    score_counts,
    score_report,
    score_report_from_counts,
    threshold_sweep,
    threshold_sweep_from_counts,
)

skm = pytest.importorskip("sklearn.metrics")
calibration = pytest.importorskip("sklearn.calibration")

COMPAS = {"y_true": "two_year_recid", "y_score": "decile_score", "protected": ["race", "sex"]}


def _groups(df: pl.DataFrame, attrs: list[str]):
    for key, part in df.group_by(attrs, maintain_order=True):
        yield " & ".join(str(k) for k in key), part


def _value(rep: pl.DataFrame, attribute: str | None, group: str | None, metric: str) -> float | None:
    a = pl.col("attribute").is_null() if attribute is None else pl.col("attribute") == attribute
    g = pl.col("group").is_null() if group is None else pl.col("group") == group
    return rep.filter(a, g, pl.col("metric") == metric)["value"].item()


def test_compas_auc_ap_equal_sklearn_per_group_and_intersection() -> None:
    df = pf.load_compas()
    rep = score_report(df, **COMPAS)
    worst = 0.0
    checked = 0
    for attrs in (["race"], ["sex"], ["race", "sex"]):
        for label, part in _groups(df, attrs):
            y, s = part["two_year_recid"].to_numpy(), part["decile_score"].to_numpy()
            auc = _value(rep, " & ".join(attrs), label, "roc_auc")
            ap = _value(rep, " & ".join(attrs), label, "average_precision")
            if len(set(y)) < 2:
                assert auc is None
                continue
            worst = max(worst, abs(auc - skm.roc_auc_score(y, s)), abs(ap - skm.average_precision_score(y, s)))
            checked += 1
    y, s = df["two_year_recid"].to_numpy(), df["decile_score"].to_numpy()
    assert _value(rep, None, None, "roc_auc") == pytest.approx(skm.roc_auc_score(y, s), abs=1e-14)
    assert checked >= 15
    assert worst < 1e-13


def test_adult_weighted_auc_ap_brier_equal_sklearn() -> None:
    df = pf.load_adult().with_columns(p=pl.col("education_num") / 16)
    kw = {"y_true": "income_gt_50k", "y_score": "p", "protected": ["sex", "race"], "weight": "fnlwgt"}
    rep = score_report(df, **kw)
    for label, part in _groups(df, ["sex"]):
        y, s, w = part["income_gt_50k"].to_numpy(), part["p"].to_numpy(), part["fnlwgt"].to_numpy()
        assert _value(rep, "sex", label, "roc_auc") == pytest.approx(
            skm.roc_auc_score(y, s, sample_weight=w), abs=1e-12
        )
        assert _value(rep, "sex", label, "average_precision") == pytest.approx(
            skm.average_precision_score(y, s, sample_weight=w), abs=1e-12
        )
        assert _value(rep, "sex", label, "brier_score") == pytest.approx(
            skm.brier_score_loss(y, s, sample_weight=w), abs=1e-12
        )


def test_reliability_curve_and_ece_equal_sklearn_calibration_curve() -> None:
    rng = np.random.default_rng(3)
    n = 4000
    p = np.round(rng.uniform(size=n), 2)  # many ties, several exactly on bin edges
    y = (rng.uniform(size=n) < p**1.5).astype(int)
    g = rng.choice(["a", "b", "c"], size=n)
    df = pl.DataFrame({"y": y, "p": p, "g": g})
    rc = reliability_curve(df, y_true="y", y_score="p", protected="g", calibration_bins=10)
    rep = score_report(df, y_true="y", y_score="p", protected="g")
    for label in ("a", "b", "c"):
        m = g == label
        prob_true, prob_pred = calibration.calibration_curve(y[m], p[m], n_bins=10)
        mine = rc.filter(attribute="g", group=label)
        np.testing.assert_allclose(mine["fraction_positive"].to_numpy(), prob_true, rtol=0, atol=1e-12)
        np.testing.assert_allclose(mine["mean_predicted"].to_numpy(), prob_pred, rtol=0, atol=1e-12)
        # ECE by hand on the same bins
        ids = np.searchsorted(np.linspace(0, 1, 11)[1:-1], p[m])
        ece = sum(abs(p[m][ids == b].sum() - y[m][ids == b].sum()) for b in range(10)) / m.sum()
        assert _value(rep, "g", label, "expected_calibration_error") == pytest.approx(ece, abs=1e-12)
        assert _value(rep, "g", label, "brier_score") == pytest.approx(skm.brier_score_loss(y[m], p[m]), abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from([0.0, 0.2, 0.5, 0.5000001, 0.9, 1.0, -3.0]), st.booleans(),
                  st.sampled_from(["a", "b"]), st.sampled_from([0.0, 0.5, 1.0, 2.0, 7.25])),
        min_size=1, max_size=40,
    )
)  # fmt: skip
def test_property_auc_ap_equal_sklearn_weighted_with_ties(rows: list) -> None:
    df = pl.DataFrame(rows, schema=["s", "y", "g", "w"], orient="row")
    rep = score_report(df, y_true="y", y_score="s", protected="g", weight="w", favorable=True)
    for label, part in _groups(df, ["g"]):
        y, s, w = part["y"].to_numpy(), part["s"].to_numpy(), part["w"].to_numpy()
        P, N = w[y].sum(), w[~y].sum()
        auc = _value(rep, "g", label, "roc_auc")
        if P > 0 and N > 0:
            assert auc == pytest.approx(skm.roc_auc_score(y, s, sample_weight=w), abs=1e-12)
        else:
            assert auc is None
        ap = _value(rep, "g", label, "average_precision")
        if P > 0 and (w > 0).all():
            assert ap == pytest.approx(skm.average_precision_score(y, s, sample_weight=w), abs=1e-12)


def test_roc_and_pr_curves_equal_sklearn_points() -> None:
    df = pf.load_compas()
    roc = roc_curve(df, **COMPAS)
    pr = precision_recall_curve(df, **COMPAS)
    for label, part in _groups(df, ["race"]):
        y, s = part["two_year_recid"].to_numpy(), part["decile_score"].to_numpy()
        if len(set(y)) < 2:
            continue
        fpr, tpr, thr = skm.roc_curve(y, s, drop_intermediate=False)
        mine = roc.filter(attribute="race", group=label)
        np.testing.assert_allclose(mine["fpr"].to_numpy(), fpr, atol=1e-15)
        np.testing.assert_allclose(mine["tpr"].to_numpy(), tpr, atol=1e-15)
        np.testing.assert_array_equal(mine["threshold"].to_numpy()[1:], thr[1:])
        prec, rec, _ = skm.precision_recall_curve(y, s)
        mine = pr.filter(attribute="race", group=label)
        # sklearn: thresholds ascending, final (recall 0, precision 1) point appended
        np.testing.assert_allclose(mine["precision"].to_numpy(), prec[:-1][::-1], atol=1e-15)
        np.testing.assert_allclose(mine["recall"].to_numpy(), rec[:-1][::-1], atol=1e-15)


def _abroca_grid(f1, t1, f2, t2, n=200_001) -> float:
    x = np.linspace(0, 1, n)
    # left-continuous interpolation is irrelevant on a fine grid (jumps have measure zero)
    d = np.abs(np.interp(x, f1, t1) - np.interp(x, f2, t2))
    return float(np.sum((d[1:] + d[:-1]) / 2 * np.diff(x)))


def test_abroca_equals_numeric_integral_and_is_zero_for_reference() -> None:
    df = pf.load_compas()
    rep = score_report(df, **COMPAS, privileged={"race": "Caucasian", "sex": "Male"})
    roc = roc_curve(df, **COMPAS)

    def curve(g: str) -> tuple[np.ndarray, np.ndarray]:
        c = roc.filter(attribute="race", group=g)
        return c["fpr"].to_numpy(), c["tpr"].to_numpy()

    ref = curve("Caucasian")
    values = {}
    for g in ("African-American", "Hispanic", "Other"):
        f, t = curve(g)
        values[g] = _value(rep, "race", g, "abroca")
        assert values[g] == pytest.approx(_abroca_grid(f, t, *ref), abs=2e-5)
    assert _value(rep, "race", "Caucasian", "abroca") == 0.0
    assert _value(rep, "race", None, "abroca") == max(
        v for v in rep.filter(attribute="race", metric="abroca")["value"].to_list() if v is not None
    )


def test_abroca_of_crossing_curves_is_exact() -> None:
    from polfair.scores.curves import area_between_roc_curves

    diag = (np.array([0.0, 1.0]), np.array([0.0, 1.0]))
    # above the diagonal: two triangles of area 1/16 each
    assert area_between_roc_curves(np.array([0.0, 0.5, 1.0]), np.array([0.0, 0.75, 1.0]), *diag) == pytest.approx(0.125)
    # crosses the diagonal at FPR 0.5, inside a linear piece: four triangles of 1/32
    cross = (np.array([0.0, 0.25, 0.75, 1.0]), np.array([0.0, 0.5, 0.5, 1.0]))
    assert area_between_roc_curves(*cross, *diag) == pytest.approx(0.125)
    # a vertical step (two points at the same FPR)
    step = (np.array([0.0, 0.5, 0.5, 1.0]), np.array([0.0, 0.0, 1.0, 1.0]))
    assert area_between_roc_curves(*step, *diag) == pytest.approx(0.25)
    assert area_between_roc_curves(*cross, *cross) == 0.0


def test_threshold_sweep_equals_fairness_report_at_each_threshold() -> None:
    df = pf.load_compas()
    sw = threshold_sweep(df, **COMPAS, thresholds=[1, 5, 8, 11])
    for t in (1, 5, 8, 11):
        rep = pf.fairness_report(df, y_true="two_year_recid", y_pred=pl.col("decile_score") >= t,
                                 protected=["race", "sex"])  # fmt: skip
        # the generalized (score-weighted) counts use the score; the report at a cut uses the 0/1 decision
        mine = sw.filter(
            pl.col("threshold") == float(t), ~pl.col("metric").cast(pl.String).str.contains("generalized")
        ).select(pl.col("attribute", "metric").cast(pl.String), "group", pl.col("value").alias("mine"))
        rep = rep.select("attribute", "group", "metric", "value").with_columns(
            pl.col("attribute", "metric").cast(pl.String)
        )
        joined = rep.join(mine, on=["attribute", "group", "metric"], nulls_equal=True)
        assert joined.height > 400  # 21 metrics x (6 + 2 + 11 groups + population)
        both = joined.filter(pl.col("value").is_not_null() | pl.col("mine").is_not_null())
        assert (both["value"] - both["mine"]).abs().max() < 1e-12
        assert both.filter(pl.col("value").is_null() != pl.col("mine").is_null()).height == 0


def test_sweep_every_score_and_rank_cuts() -> None:
    df = pf.load_compas()
    sw = threshold_sweep(df, **COMPAS, metrics=["num_pred_positives"])
    assert sorted(set(sw["threshold"].to_list())) == [float(v) for v in range(1, 11)]
    ranks = threshold_sweep(df, **COMPAS, rank_abs=[100, 1000, 10**6], rank_pct=[0.5], metrics=["num_pred_positives"])
    pop = ranks.filter(pl.col("attribute").is_null())
    s = np.sort(df["decile_score"].to_numpy())[::-1]
    for cut, k in (("rank_abs=100", 100), ("rank_abs=1000", 1000), ("rank_abs=1000000", len(s)),
                   ("rank_pct=0.5", math.ceil(0.5 * len(s)))):  # fmt: skip
        row = pop.filter(cut=cut)
        assert row["threshold"].item() == s[k - 1]  # the k-th highest score
        assert row["value"].item() == (s >= s[k - 1]).sum() >= k


def test_histograms_merge_across_partitions() -> None:
    df = pf.load_adult().with_columns(p=pl.col("education_num") / 16, w=pl.col("fnlwgt") / 1e5)
    kw = {"y_true": "income_gt_50k", "y_score": "p", "protected": ["sex", "race"], "weight": "w", "by": "split"}
    parts = [score_counts(df[i::3], **kw) for i in range(3)]
    whole = score_counts(df, **kw)
    merged = merge_score_counts(parts)
    assert merged.select("split", "sex", "race", "score", "label", "n").equals(
        whole.select("split", "sex", "race", "score", "label", "n")
    )
    a = score_report_from_counts(merged, by="split")
    b = score_report_from_counts(whole, by="split")
    floats = [c for c, t in a.schema.items() if t == pl.Float64]  # values and interval limits: sums in another order
    assert a.select(pl.exclude(floats)).equals(b.select(pl.exclude(floats)))
    for c in floats:
        np.testing.assert_allclose(a[c].to_numpy().astype(float), b[c].to_numpy().astype(float), rtol=1e-9,
                                   atol=1e-12, equal_nan=True)  # fmt: skip
    sa = threshold_sweep_from_counts(merged, by="split", thresholds=[0.5, 0.75], rank_abs=[500])
    sb = threshold_sweep_from_counts(whole, by="split", thresholds=[0.5, 0.75], rank_abs=[500])
    floats = [c for c, t in sa.schema.items() if t == pl.Float64 and c != "threshold"]
    assert sa.select(pl.exclude(floats)).equals(sb.select(pl.exclude(floats)))
    for c in floats:
        if c != "value":
            np.testing.assert_allclose(sa[c].to_numpy().astype(float), sb[c].to_numpy().astype(float), rtol=1e-9,
                                       atol=1e-12, equal_nan=True)  # fmt: skip
    np.testing.assert_allclose(
        sa["value"].to_numpy().astype(float), sb["value"].to_numpy().astype(float), rtol=1e-12, atol=1e-9
    )


def test_binned_auc_within_documented_bound_and_brier_exact() -> None:
    rng = np.random.default_rng(0)
    n = 5000
    p = rng.beta(2, 3, size=n)
    y = rng.uniform(size=n) < p
    g = rng.choice(["a", "b"], size=n)
    df = pl.DataFrame({"y": y, "p": p, "g": g})
    exact = score_report(df, y_true="y", y_score="p", protected="g", favorable=True)
    binned_h = score_counts(df, y_true="y", y_score="p", protected="g", favorable=True, bins=20)
    binned = score_report_from_counts(binned_h)
    gh = group_histograms(binned_h)
    for label in ("a", "b"):
        part = gh.filter(attribute="g", group=label)
        bound = 0.5 * (part["pos"] * part["neg"]).sum() / (part["pos"].sum() * part["neg"].sum())
        err = abs(_value(binned, "g", label, "roc_auc") - _value(exact, "g", label, "roc_auc"))
        assert 0 < err <= bound
        assert _value(binned, "g", label, "brier_score") == pytest.approx(
            _value(exact, "g", label, "brier_score"), abs=1e-12
        )
    # explicit edges equal the int form, and the binned histogram has one row per bin and cell at most
    edges = np.linspace(0, 1, 21).tolist()
    assert score_counts(df, y_true="y", y_score="p", protected="g", favorable=True, bins=edges).height <= 2 * 2 * 20


def test_errors_are_clear() -> None:
    df = pf.load_compas()
    with pytest.raises(InvalidInputError, match="outside the bin edges"):
        score_counts(df, **COMPAS, bins=10)
    with pytest.raises(PolfairError, match="bins"):
        score_counts(df, **COMPAS, bins="quantile")
    with pytest.raises(PolfairError, match="rank_abs"):
        threshold_sweep(df, **COMPAS, rank_abs=[0])
    with pytest.raises(PolfairError, match="unknown"):
        threshold_sweep(df, **COMPAS, metrics=["auc"])
    with pytest.raises(InvalidInputError, match="favorable"):
        score_counts(df, **COMPAS, favorable="yes")
    with pytest.raises(pf.exceptions.ColumnNotFoundError, match="decile_scor"):
        score_counts(df, y_true="two_year_recid", y_score="decile_scor", protected="race")
    with pytest.raises(InvalidInputError, match=r"\[0, 1\]"):
        reliability_curve(df, **COMPAS)
    with pytest.raises(PolfairError, match="reserved"):
        score_counts(df.rename({"race": "score"}), y_true="two_year_recid", y_score="decile_score", protected="score")


def test_missing_values_warn_and_are_excluded() -> None:
    df = pl.DataFrame({"y": [1, 0, None, 1, 0], "s": [0.9, 0.1, 0.5, None, float("nan")], "g": ["a"] * 5})
    with pytest.warns(pf.exceptions.MissingValuesWarning, match="3 rows"):
        h = score_counts(df, y_true="y", y_score="s", protected="g")
    assert h["n"].sum() == 2


def test_duckdb_relation_runs_the_pass_in_its_engine() -> None:
    duckdb = pytest.importorskip("duckdb")
    pytest.importorskip("narwhals")
    df = (
        pf.load_compas()
        .select("race", "sex", "two_year_recid", "decile_score")
        .with_columns(
            pl.col("race", "sex").cast(pl.String), p=pl.col("decile_score") / 10, w=pl.col("decile_score") % 3 + 1.0
        )
    )
    rel = duckdb.from_arrow(df.to_arrow())
    for kw in ({"y_score": "decile_score"}, {"y_score": "p", "bins": 5, "weight": "w"}):
        a = score_counts(rel, y_true="two_year_recid", protected=["race", "sex"], **kw)
        b = score_counts(df, y_true="two_year_recid", protected=["race", "sex"], **kw)
        assert a.select(pl.exclude("score_sum", "score_sq_sum")).equals(
            b.select(pl.exclude("score_sum", "score_sq_sum"))
        )
        np.testing.assert_allclose(a["score_sq_sum"].to_numpy(), b["score_sq_sum"].to_numpy(), rtol=1e-12)
    ra = score_report(rel, y_true="two_year_recid", y_score="decile_score", protected=["race"])
    rb = score_report(df, y_true="two_year_recid", y_score="decile_score", protected=["race"])
    assert ra.equals(rb)
    with pytest.raises(TypeError, match="column names only"):
        score_counts(rel, y_true="two_year_recid", y_score=pl.col("p") * 2, protected="race")


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from([0.0, 0.1, 0.5, 0.9, 1.0, 3.0, -1.0]), st.booleans(),
                  st.sampled_from(["a", "b", "c"]),
                  st.sampled_from([0.0, 1.0, 2.5]), st.integers(0, 2)),
        min_size=1, max_size=50,
    ),
    st.lists(st.sampled_from([-2.0, 0.0, 0.1, 0.3, 0.5, 1.0, 5.0]), min_size=1, max_size=4, unique=True),
    st.integers(1, 60),
)  # fmt: skip
def test_property_sweep_counts_and_merge_equal_naive(rows: list, thresholds: list, k: int) -> None:
    from polfair.scores.sweep import sweep_counts

    df = pl.DataFrame(rows, schema=["s", "y", "g", "w", "part"], orient="row")
    kw = {"y_true": "y", "y_score": "s", "protected": "g", "weight": "w", "favorable": True}
    whole = score_counts(df, **kw)
    parts = [score_counts(df.filter(part=i), **kw) for i in range(3) if df.filter(part=i).height]
    merged = merge_score_counts(parts)
    assert merged.select("g", "score", "label", "n").equals(whole.select("g", "score", "label", "n"))
    got = sweep_counts(merged, thresholds=thresholds, rank_abs=[k])
    s, y, g, w = (df[c].to_numpy() for c in ("s", "y", "g", "w"))
    kth = np.sort(s)[::-1][min(k, len(s)) - 1]
    for row in got.iter_rows(named=True):
        m = np.ones(len(s), bool) if row["group"] is None else g == row["group"]
        t = row["threshold"]
        if row["cut"].startswith("rank_abs"):
            assert t == kth
        sel = m & (s >= t)
        assert row["tp"] == pytest.approx(w[sel & y].sum(), abs=1e-9)
        assert row["fp"] == pytest.approx(w[sel & ~y].sum(), abs=1e-9)
        assert row["fn"] == pytest.approx(w[m & ~(s >= t) & y].sum(), abs=1e-9)
        assert row["tn"] == pytest.approx(w[m & ~(s >= t) & ~y].sum(), abs=1e-9)
        assert row["n"] == m.sum()


def test_sweep_differences_vs_reference_at_each_cut() -> None:
    df = pf.load_compas()
    sw = threshold_sweep(df, **COMPAS, thresholds=[5, 7], metrics=["false_positive_rate"],
                         privileged={"race": "Caucasian", "sex": "Male"})  # fmt: skip
    race = sw.filter(attribute="race", threshold=5.0)
    assert race["reference_group"].cast(pl.String).unique().to_list() == ["Caucasian"]
    ref = race.filter(group="Caucasian")["value"].item()
    aa = race.filter(group="African-American")
    assert aa["difference"].item() == pytest.approx(aa["value"].item() - ref)
    assert aa["ratio"].item() == pytest.approx(aa["value"].item() / ref)
    inter = sw.filter(attribute="race & sex")
    assert inter["reference_group"].cast(pl.String).unique().to_list() == ["Caucasian & Male"]
    # without privileged values: the largest group
    plain = threshold_sweep(df, **COMPAS, thresholds=[5], metrics=["selection_rate"])
    assert plain.filter(attribute="race")["reference_group"].cast(pl.String).unique().to_list() == ["African-American"]
    assert plain.filter(pl.col("attribute").is_null())["difference"].null_count() == 1
