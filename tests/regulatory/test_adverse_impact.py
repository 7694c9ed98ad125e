"""Adverse-impact batteries vs published worked examples, scipy and statsmodels."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polfair as pf
from polfair.exceptions import PolfairError
from polfair.regulatory import (
    adverse_impact,
    adverse_impact_from_counts,
    fisher_exact_two_sided,
    flip_to_nonsignificance,
    two_proportion_z,
)
from polfair.scores import merge_score_counts, score_counts


def _rows(counts: dict[str, tuple[int, int]], col: str = "race") -> pl.DataFrame:
    """One row per applicant: {group: (applicants, selected)}."""
    g, s = [], []
    for name, (n, x) in counts.items():
        g += [name] * n
        s += [1] * x + [0] * (n - x)
    return pl.DataFrame({col: g, "selected": s})


def _get(t: pl.DataFrame, group: str, col: str):
    return t.filter(pl.col("group") == group)[col].item()


def test_uniform_guidelines_qa12_example() -> None:
    # Q&A 12 on the Uniform Guidelines (44 FR 11996, 1979): hiring rates 60% whites, 45% American
    # Indians, 48% Hispanics, 51% Blacks -> impact ratios 75%, 80%, 85%; adverse impact indicated for
    # American Indians only (80% is not "less than four-fifths").
    df = _rows({"White": (100, 60), "American Indian": (100, 45), "Hispanic": (100, 48), "Black": (100, 51)})
    t = adverse_impact(df, y_pred="selected", protected="race")
    assert _get(t, "American Indian", "impact_ratio") == pytest.approx(0.75)
    assert _get(t, "Hispanic", "impact_ratio") == pytest.approx(0.80)
    assert _get(t, "Black", "impact_ratio") == pytest.approx(0.85)
    assert t["reference_group"].unique().to_list() == ["White"]
    assert dict(zip(t["group"], t["four_fifths_pass"])) == {
        "American Indian": False, "Black": True, "Hispanic": True, "White": True,
    }  # fmt: skip
    # exactly at the line (48/60 = 0.8, 0.7999999999999999 in floats) passes: the test is exact
    assert _get(t, "Hispanic", "flip_four_fifths") == 0
    assert _get(t, "American Indian", "flip_four_fifths") == 3  # 48/100 reaches 4/5 of 60/100


def test_shortfall_dci_small_sample_example() -> None:
    # DCI Consulting, "Miniscule shortfalls: statistical significance alone falls short": overall
    # selection rate 20%, 10 women applied, 1 selected -> 2 expected, shortfall of one woman.
    df = _rows({"female": (10, 1), "male": (40, 9)}, col="sex")
    t = adverse_impact(df, y_pred="selected", protected="sex", min_sample_size=0)  # the formula on a small sample
    assert _get(t, "female", "shortfall") == pytest.approx(1.0)
    assert _get(t, "male", "shortfall") == pytest.approx(-1.0)
    # 1/10 vs 9/40: not significant by z nor Fisher with groups this small
    assert _get(t, "female", "significant") is False
    assert _get(t, "female", "fisher_p_value") > 0.05


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 60), st.integers(0, 60), st.integers(0, 60), st.integers(0, 60))
def test_fisher_equals_scipy(a: int, b: int, c: int, d: int) -> None:
    stats = pytest.importorskip("scipy.stats")
    ours = fisher_exact_two_sided(a, b, c, d)
    theirs = stats.fisher_exact([[a, b], [c, d]]).pvalue
    assert ours == pytest.approx(theirs, rel=1e-9, abs=1e-15)


def test_fisher_large_counts_equal_scipy() -> None:
    stats = pytest.importorskip("scipy.stats")
    for table in ([1346, 3175 - 1346, 273, 70], [5000, 12000, 4900, 11000], [0, 500, 3, 497]):
        assert fisher_exact_two_sided(*table) == pytest.approx(
            stats.fisher_exact([table[:2], table[2:]]).pvalue, rel=1e-7
        )


def test_z_equals_statsmodels_pooled_ztest() -> None:
    sm = pytest.importorskip("statsmodels.stats.proportion")
    for x1, n1, x2, n2 in ((40, 100, 60, 100), (1, 10, 9, 40), (1346, 3175, 273, 343)):
        z, p = sm.proportions_ztest([x1, x2], [n1, n2])
        assert two_proportion_z(x1, n1, x2, n2) == pytest.approx(z, rel=1e-12)
        t = adverse_impact(_rows({"a": (n1, x1), "b": (n2, x2)}), y_pred="selected", protected="race",
                           min_sample_size=0)  # the z statistic itself, whatever the sizes
        low = "a" if x1 / n1 < x2 / n2 else "b"
        assert _get(t, low, "p_value") == pytest.approx(p, rel=1e-9)
    # hypergeometric variance: z * sqrt((N - 1) / N)
    assert two_proportion_z(40, 100, 60, 100, "hypergeometric") == pytest.approx(
        two_proportion_z(40, 100, 60, 100) * math.sqrt(199 / 200)
    )


def test_flips_are_the_smallest_counts_by_brute_force() -> None:
    for x1, n1, x2, n2 in ((40, 100, 60, 100), (10, 80, 30, 90), (200, 1000, 300, 1000)):
        k = flip_to_nonsignificance(x1, n1, x2, n2)
        assert abs(two_proportion_z(x1 + k, n1, x2, n2)) < 1.959963984540054
        assert k == 0 or two_proportion_z(x1 + k - 1, n1, x2, n2) <= -1.959963984540054
        t = adverse_impact(_rows({"a": (n1, x1), "b": (n2, x2)}), y_pred="selected", protected="race")
        f = _get(t, "a", "flip_four_fifths")
        assert 5 * (x1 + f) * n2 >= 4 * x2 * n1 and (f == 0 or 5 * (x1 + f - 1) * n2 < 4 * x2 * n1)


def test_nyc_ll144_scoring_rate_exclusion_unknown_and_intersections() -> None:
    rng = np.random.default_rng(1)
    n = 1000
    sex = rng.choice(["Male", "Female", None], size=n, p=[0.5, 0.47, 0.03])
    race = rng.choice(["Hispanic or Latino", "White", "Black or African American", "Asian"], size=n,
                      p=[0.3, 0.4, 0.29, 0.01])  # fmt: skip
    score = rng.integers(0, 100, size=n).astype(float)
    df = pl.DataFrame({"sex": sex, "race": race, "score": score})
    t = adverse_impact(df, y_score="score", preset="nyc_ll144", protected=["sex", "race"], exclude_below=0.02)
    med = float(np.median(score))
    assert t["median_score"].unique().to_list() == [med]
    # scoring rate: share above the sample median, per category
    for g in ("Male", "Female"):
        m = sex == g
        assert _get(t.filter(attribute="sex"), g, "selection_rate") == pytest.approx((score[m] > med).mean())
    # unknown sex: reported with its count, excluded from the comparisons
    unknown = t.filter(attribute="sex", excluded_reason="unknown demographics")
    assert unknown["n"].item() == int(pd_isnull(sex).sum())
    assert unknown["impact_ratio"].item() is None
    # Asian is under 2% of the data: reported as excluded, never the reference group
    asian = t.filter(attribute="race", group="Asian")
    assert asian["excluded"].item() and asian["excluded_reason"].item() == "under 0.02 of the data"
    assert "Asian" not in t["reference_group"].to_list()
    # intersections are there, the highest scoring category has impact ratio 1
    inter = t.filter(attribute="sex & race", excluded=False)
    assert inter.height >= 6
    assert inter["impact_ratio"].max() == 1.0
    ref = inter["reference_group"][0]
    assert inter.filter(group=ref)["selection_rate"].item() == inter["selection_rate"].max()


def pd_isnull(a: np.ndarray) -> np.ndarray:
    return np.array([v is None for v in a])


def test_by_and_merge_across_partitions() -> None:
    df = pf.load_adult().with_columns(sel=pl.col("education_num") >= 13)
    kw = {"y_true": None, "y_score": pl.col("sel").cast(pl.Float64), "protected": ["sex", "race"], "by": "split"}
    whole = adverse_impact_from_counts(score_counts(df, **kw), by="split")
    merged = adverse_impact_from_counts(
        merge_score_counts([score_counts(df[i::4], **kw) for i in range(4)]), by="split"
    )
    assert merged.equals(whole)
    direct = adverse_impact(df, y_pred="sel", favorable=True, protected=["sex", "race"], by="split")
    assert direct.equals(whole)
    assert set(whole["split"].to_list()) == {"train", "test"}


def test_errors() -> None:
    df = _rows({"a": (10, 5), "b": (10, 2)})
    with pytest.raises(PolfairError, match="preset"):
        adverse_impact(df, y_pred="selected", protected="race", preset="uk")  # type: ignore[arg-type]
    with pytest.raises(PolfairError, match="exactly one"):
        adverse_impact(df, protected="race")
    with pytest.raises(PolfairError, match="nyc_ll144"):
        adverse_impact(df, y_score="selected", protected="race")
    with pytest.raises(PolfairError, match="exclude_below"):
        adverse_impact(df, y_pred="selected", protected="race", exclude_below=2)
    with pytest.raises(pf.exceptions.InvalidInputError, match="favorable"):
        adverse_impact(df, y_pred="selected", protected="race", favorable="yes")


def test_cli_adverse_impact_flag(tmp_path, capsys) -> None:
    from polfair.cli import main

    data = tmp_path / "compas.parquet"
    pf.load_compas().with_columns(p=pl.col("decile_score") / 10).write_parquet(data)
    out = tmp_path / "ai.csv"
    rc = main(["report", str(data), "--y-true", "two_year_recid", "--y-pred", "decile_score < 5", "--protected", "race",
               "sex", "--adverse-impact", "eeoc", "--adverse-impact-out", str(out)])  # fmt: skip
    assert rc == 0
    table = pl.read_csv(out)
    direct = adverse_impact(
        pf.load_compas(), y_pred=pl.col("decile_score") < 5, favorable=True, protected=["race", "sex"]
    )
    assert table["impact_ratio"].to_list() == pytest.approx(direct["impact_ratio"].to_list(), nan_ok=True)
    rc = main(["report", str(data), "--y-true", "two_year_recid", "--y-score", "p", "--protected", "sex",
               "--adverse-impact", "nyc_ll144"])  # fmt: skip
    assert rc == 0
    assert "adverse impact (nyc_ll144)" in capsys.readouterr().out
    rc = main(["report", str(data), "--y-true", "two_year_recid", "--y-score", "p", "--protected", "sex",
               "--adverse-impact", "eeoc"])  # fmt: skip
    assert rc == 2


def test_duckdb_relation() -> None:
    duckdb = pytest.importorskip("duckdb")
    pytest.importorskip("narwhals")
    df = pf.load_compas().select(
        pl.col("race", "sex").cast(pl.String), (pl.col("decile_score") < 5).alias("low"), "decile_score"
    )
    rel = duckdb.from_arrow(df.to_arrow())
    a = adverse_impact(rel, y_pred="low", favorable=True, protected=["race", "sex"])
    b = adverse_impact(df, y_pred="low", favorable=True, protected=["race", "sex"])
    assert a.equals(b)
    a = adverse_impact(rel, y_score="decile_score", preset="nyc_ll144", protected=["sex"])
    b = adverse_impact(df, y_score="decile_score", preset="nyc_ll144", protected=["sex"])
    assert a.equals(b)
