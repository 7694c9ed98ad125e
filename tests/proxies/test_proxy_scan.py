"""Proxy scan (indirect bias) vs scipy's Cramér's V, scikit-learn's NMI and the core report."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import polfair as pf
from polfair.exceptions import PolfairError
from polfair.proxies import (
    proxy_counts,
    proxy_report,
    proxy_scan,
    proxy_scan_from_counts,
)

FEATURES = ["relationship", "occupation", "marital_status", "race", "workclass"]


def test_association_equals_scipy_and_sklearn_on_adult() -> None:
    contingency = pytest.importorskip("scipy.stats.contingency")
    skm = pytest.importorskip("sklearn.metrics")
    df = pf.load_adult()
    scan = proxy_scan(df, protected="sex", features=FEATURES)
    assert scan["association"].to_list() == sorted(scan["association"].to_list(), reverse=True)
    for f in FEATURES:
        ct = (
            df.with_columns(pl.col(f).cast(pl.String).fill_null("null"))
            .group_by("sex", f)
            .len()
            .pivot(on=f, index="sex", values="len")
            .fill_null(0)
        )
        table = ct.drop("sex").to_numpy()
        v = contingency.association(table, method="cramer")
        row = scan.filter(feature=f)
        assert row["cramers_v"].item() == pytest.approx(v, rel=1e-12)
        a = df["sex"].cast(pl.String).rank("dense").to_numpy()  # integer codes: fast in scikit-learn
        b = df[f].cast(pl.String).fill_null("null").rank("dense").to_numpy()
        assert row["normalized_mutual_info"].item() == pytest.approx(skm.normalized_mutual_info_score(a, b), rel=1e-10)


def test_top_values_are_the_most_indicative_value_per_group() -> None:
    df = pf.load_adult()
    scan = proxy_scan(df, protected="sex", features=["relationship", "occupation"])
    assert scan["feature"][0] == "relationship"
    top = {t["protected_group"]: t for t in scan.filter(feature="occupation")["top_values"].item()}
    # brute force: per sex, the occupation value (>= 1% of rows) with the highest share of that sex
    N = df.height
    stats = (
        df.group_by("occupation")
        .agg((pl.col("sex") == "Female").mean().alias("f"), pl.len())
        .filter(pl.col("len") >= 0.01 * N)
    )
    best_f = stats.sort("f", descending=True)["occupation"][0]
    best_m = stats.sort("f")["occupation"][0]
    assert top["Female"]["value"] == best_f
    assert top["Male"]["value"] == best_m
    share_f = stats.filter(occupation=best_f)["f"].item()
    assert top["Female"]["share"] == pytest.approx(share_f)
    assert top["Female"]["lift"] == pytest.approx(share_f / (df["sex"] == "Female").mean())


def test_numeric_features_are_binned_at_quantiles() -> None:
    df = pf.load_adult()
    scan = proxy_scan(df, protected="sex", features=["age", "education_num", "hours_per_week"], numeric_bins=4,
                      max_levels=20)  # fmt: skip
    by = {r["feature"]: r for r in scan.iter_rows(named=True)}
    assert by["age"]["kind"] == "numeric" and by["age"]["levels"] <= 4
    assert by["education_num"]["levels"] == 16  # 16 distinct values <= max_levels: kept as categories
    # the association of the binned feature equals Cramér's V of the rows binned the same way
    contingency = pytest.importorskip("scipy.stats.contingency")
    labels = [t["value"] for t in by["age"]["top_values"]]
    assert all(lbl.startswith(("<", "[", ">=")) for lbl in labels)
    edges = sorted({float(e) for lbl in labels for e in lbl.strip("[)<>= ").split(", ")})
    x = df["age"].to_numpy()
    cuts = np.quantile(x, [0.25, 0.5, 0.75], method="inverted_cdf")
    assert set(edges) <= set(cuts.tolist()) | {float(x.min())}
    idx = np.searchsorted(np.unique(cuts[cuts > x.min()]), x, side="right")
    table = pl.DataFrame({"s": df["sex"].cast(pl.String), "b": idx}).group_by("s", "b").len().pivot(
        on="b", index="s", values="len").fill_null(0).drop("s").to_numpy()  # fmt: skip
    assert by["age"]["cramers_v"] == pytest.approx(contingency.association(table, method="cramer"), rel=1e-12)


def test_proxy_report_equals_fairness_report_on_the_feature() -> None:
    df = pf.load_compas()
    kw = {"y_true": "two_year_recid", "y_pred": pl.col("decile_score") >= 5}
    rep = proxy_report(df, protected="race", features=["age_cat", "c_charge_degree"], **kw)
    for f in ("age_cat", "c_charge_degree"):
        core = pf.fairness_report(df, protected=[pl.col(f).cast(pl.String)], **kw)
        core = core.select("attribute", "group", "metric", "value").with_columns(
            pl.col("attribute", "metric").cast(pl.String)
        )
        mine = rep.filter(feature=f).select(pl.col("attribute", "metric").cast(pl.String), "group", "value")
        joined = core.join(mine, on=["attribute", "group", "metric"], nulls_equal=True, suffix="_p")
        assert joined.height == core.height
        vals = joined.filter(pl.col("value").is_not_null())
        assert (vals["value"] - vals["value_p"]).abs().max() < 1e-12


def test_scan_with_predictions_has_fairness_spreads() -> None:
    df = pf.load_compas()
    scan = proxy_scan(df, protected="race", features=["age_cat", "c_charge_degree"], y_true="two_year_recid",
                      y_pred=pl.col("decile_score") >= 5)  # fmt: skip
    rates = df.group_by("age_cat").agg((pl.col("decile_score") >= 5).mean())["decile_score"]
    row = scan.filter(feature="age_cat")
    assert row["demographic_parity_difference"].item() == pytest.approx(rates.max() - rates.min())
    assert row["demographic_parity_ratio"].item() == pytest.approx(rates.min() / rates.max())
    assert row["equalized_odds_difference"].item() > 0


def test_counts_merge_across_partitions() -> None:
    df = pf.load_adult()
    parts = [proxy_counts(df[i::3], protected="sex", features=FEATURES) for i in range(3)]
    keys = ["feature", "value", "protected_group", "label", "pred", "numeric"]
    merged = pl.concat(parts).group_by(keys).agg(pl.col("n").sum(), pl.col("w").sum(), pl.col("w2").sum())
    whole = proxy_counts(df, protected="sex", features=FEATURES)
    a = proxy_scan_from_counts(merged.select(whole.columns).sort(keys, nulls_last=True))
    b = proxy_scan_from_counts(whole)
    assert a.select("feature", "levels", "n").equals(b.select("feature", "levels", "n"))
    np.testing.assert_allclose(a["cramers_v"].to_numpy(), b["cramers_v"].to_numpy(), rtol=1e-12)


def test_errors() -> None:
    df = pf.load_adult()
    with pytest.raises(PolfairError, match="features"):
        proxy_scan(df, protected="sex", features=[])
    with pytest.raises(pf.exceptions.ColumnNotFoundError, match="ocupation"):
        proxy_scan(df, protected="sex", features=["ocupation"])
    with pytest.raises(PolfairError, match="measure"):
        proxy_scan(df, protected="sex", features=["race"], measure="pearson")


def test_proxy_scan_from_counts_takes_proxy_scans_measure_keywords() -> None:
    import inspect

    from polfair.exceptions import UnknownOptionError
    from polfair.proxies.scan import proxy_counts, proxy_scan, proxy_scan_from_counts

    mine, theirs = inspect.signature(proxy_scan_from_counts).parameters, inspect.signature(proxy_scan).parameters
    assert [(k, mine[k].default) for k in list(mine)[1:]] == [(k, theirs[k].default) for k in list(mine)[1:]]
    df = pf.load_adult().head(3000)
    c = proxy_counts(df, protected="sex", features=["relationship", "age"])
    from polars.testing import assert_frame_equal  # (the pass's float sums vary in the last bits between runs)

    assert_frame_equal(proxy_scan_from_counts(c), proxy_scan(df, protected="sex", features=["relationship", "age"]),
                       rel_tol=1e-12, abs_tol=0.0)  # fmt: skip
    assert_frame_equal(proxy_scan_from_counts(c, measure="normalized_mutual_info", numeric_bins=3),
                       proxy_scan(df, protected="sex", features=["relationship", "age"], measure="normalized_mutual_info",
                                  numeric_bins=3), rel_tol=1e-12, abs_tol=0.0)  # fmt: skip
    with pytest.raises(UnknownOptionError, match="did you mean 'measure'"):
        proxy_scan_from_counts(c, measur="cramers_v")
