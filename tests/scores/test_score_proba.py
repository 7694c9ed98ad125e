"""Score reports and adverse-impact batteries of groups estimated from proxies (``protected_proba``)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polfair as pf
from polfair.core.report.run_metadata import request_of
from polfair.datasets import BISG_GROUPS
from polfair.regulatory import adverse_impact
from polfair.scores import score_counts, score_report

PROBA = {"race": {g: f"p_{g}" for g in BISG_GROUPS}}


def _book(n: int = 6_000) -> pl.DataFrame:
    return pf.make_bisg_lending(n, seed=21)


def test_score_report_equals_sklearn_with_the_probabilities_as_weights() -> None:
    """Each group's AUC, AP and Brier score are scikit-learn's with sample_weight = p_g (× weight)."""
    metrics = pytest.importorskip("sklearn.metrics")
    df = _book().with_columns(w=(pl.int_range(pl.len()) % 4 + 1).cast(pl.Float64))
    rep = score_report(df, y_true="repaid", y_score="score", weight="w", protected_proba=PROBA)
    y, s, w = df["repaid"].to_numpy(), df["score"].to_numpy(), df["w"].to_numpy()
    for g in BISG_GROUPS:
        sw = w * df[f"p_{g}"].to_numpy()
        got = dict(rep.filter(attribute="race", group=g).select("metric", "value").iter_rows())
        assert got["roc_auc"] == pytest.approx(metrics.roc_auc_score(y, s, sample_weight=sw), rel=1e-12)
        assert got["average_precision"] == pytest.approx(metrics.average_precision_score(y, s, sample_weight=sw), rel=1e-12)
        assert got["brier_score"] == pytest.approx(metrics.brier_score_loss(y, s, sample_weight=sw), rel=1e-12)


def test_argmax_histogram_is_the_histogram_of_the_likeliest_group() -> None:
    df = _book()
    likeliest = pl.concat_list(pl.col(f"p_{g}") for g in BISG_GROUPS).list.arg_max()
    hard = df.with_columns(likeliest.replace_strict(list(range(5)), list(BISG_GROUPS),
                                                    return_dtype=pl.Enum(list(BISG_GROUPS))).alias("race"))  # fmt: skip
    got = score_counts(df, y_true="repaid", y_score="score", protected="sex", protected_proba=PROBA,
                       proba_assignment="argmax", bins=20)  # fmt: skip
    want = score_counts(hard, y_true="repaid", y_score="score", protected=["sex", "race"], bins=20)
    assert_frame_equal(got, want)


def test_adverse_impact_on_estimated_groups_carries_the_caveat() -> None:
    df = _book()
    t = adverse_impact(df, y_pred="approved", protected="sex", protected_proba=PROBA)
    race = t.filter(attribute="race")
    assert race["n"].sum() == df.height  # whole candidates, each counted once
    p = df.select(pl.col(f"p_{g}") for g in BISG_GROUPS).to_numpy()
    expected_n = p.sum(axis=0)
    expected_rate = (p * df["approved"].to_numpy()[:, None]).sum(axis=0) / expected_n
    for i, g in enumerate(BISG_GROUPS):
        row = race.filter(group=g)
        assert abs(row["n"].item() - expected_n[i]) <= 2  # the decision's two histogram rows: within a row each
        assert row["selection_rate"].item() == pytest.approx(expected_rate[i], abs=2 / expected_n[i])
    caveat = request_of(t)["caveat"]
    assert "estimated from proxies" in caveat and "as if memberships were known" in caveat
    assert request_of(t)["protected_proba"]["attribute"] == "race"
    assert request_of(adverse_impact(df, y_pred="approved", protected="sex")) is None


def test_score_counts_on_duckdb_equal_polars() -> None:
    duckdb = pytest.importorskip("duckdb")
    pytest.importorskip("narwhals")
    df = _book(3_000)
    kw = dict(y_true="repaid", y_score="score", protected="sex", protected_proba=PROBA, bins=10)
    got = score_counts(duckdb.from_arrow(df.to_arrow()), **kw)
    assert_frame_equal(got, score_counts(df, **kw), check_exact=False, rel_tol=1e-12)


def test_missing_probabilities_are_left_out_of_the_histogram() -> None:
    df = _book(1_000).with_columns(pl.when(pl.int_range(pl.len()) < 10).then(None).otherwise(pl.col("p_white"))
                                   .alias("p_white"))  # fmt: skip
    with pytest.warns(pf.MissingValuesWarning, match="10 with a null probability"):
        h = score_counts(df, y_true="repaid", y_score="score", protected=None, protected_proba=PROBA)
    assert h["n"].sum() == 990
    assert np.isclose(h["weight"].sum(), 990.0)
