"""The wide form (polfair.core.report.wide.to_wide) holds exactly the long report's numbers."""

from __future__ import annotations

import polars as pl
import pytest
from conftest import Case, audit_cases
from hypothesis import HealthCheck, given, settings

import polfair as pf
from polfair.core.report.wide import to_wide
from polfair.core.schema import RUN_METADATA_COLUMNS, by_columns
from polfair.exceptions import PolfairError

_COMPAS = {"y_true": "two_year_recid", "y_pred": pl.col("decile_score") >= 5, "protected": ["race", "sex"]}


def _check_round_trip(long: pl.DataFrame) -> None:
    """Read every long cell back from the wide form (drop_empty=False) and compare exactly."""
    wide = to_wide(long, drop_empty=False)
    keys = [*by_columns(long.columns), "attribute", "group"]
    row_cols = [c for c in long.columns if c in ("n", *RUN_METADATA_COLUMNS) or long.schema[c].base_type() == pl.Struct]
    assert set(row_cols) <= set(wide.columns)
    cats = [c for c in ("attribute", "metric", "reference_group") if c in long.columns]
    long = long.with_columns(pl.col(cats).cast(pl.String))
    wide = wide.with_columns(pl.col("attribute").cast(pl.String))
    assert wide.select(keys).is_duplicated().sum() == 0
    assert wide.height == long.select(keys).unique().height
    metrics = long["metric"].unique(maintain_order=True).to_list()
    stats = [c for c in long.columns if c not in (*keys, *row_cols, "metric", "value", "reference_group")]
    per_metric_ref = f"{metrics[0]}__reference_group" in wide.columns
    parts = []
    for m in metrics:
        cols = {"value": pl.col(m)}
        for s in stats:
            cols[s] = pl.col(f"{m}__{ {'value_lo': 'lo', 'value_hi': 'hi'}.get(s, s) }")
        ref = pl.col(f"{m}__reference_group") if per_metric_ref else pl.col("reference_group")
        parts.append(wide.select(*keys, pl.lit(m).alias("metric"), "n", **cols, reference_group=ref))
    back = pl.concat(parts, how="vertical_relaxed")
    joined = long.join(back, on=[*keys, "metric"], how="left", nulls_equal=True, suffix="__w")
    assert joined.height == long.height
    for c in ["n", "value", *stats]:
        if long.schema[c] != back.schema[c]:  # Categorical statistics (ci_method, test)
            joined = joined.with_columns(pl.col(c, f"{c}__w").cast(pl.String))
        a, b = joined[c], joined[f"{c}__w"]
        same = (a == b) | (a.is_null() & b.is_null()) | (a.is_nan() & b.is_nan() if a.dtype.is_float() else False)
        assert same.fill_null(False).all(), c
    # the reference group: the long one wherever the long row has one
    has_ref = joined.filter(pl.col("reference_group").is_not_null())
    assert (has_ref["reference_group"] == has_ref["reference_group__w"]).all()
    # the wide form has no cell that the long report lacks
    extra = back.join(long, on=[*keys, "metric"], how="anti", nulls_equal=True)
    assert extra.select(pl.col("value").is_null().all()).item()


def test_compas_round_trip_and_row_kinds(compas: pl.DataFrame) -> None:
    long = pf.fairness_report(compas, **_COMPAS, privileged={"race": "Caucasian", "sex": "Male"})
    _check_round_trip(long)
    wide = to_wide(long)
    pop = wide.filter(pl.col("attribute").is_null())
    assert pop.height == 1 and pop["group"].is_null().all()
    assert pop["theil_index"].item() == long.filter(pl.col("attribute").is_null(), metric="theil_index")["value"].item()
    attr = wide.filter(pl.col("group").is_null(), attribute="race")
    assert attr["selection_rate"].is_null().all()  # spreads are in __difference / __ratio
    spread = long.filter(pl.col("group").is_null(), attribute="race", metric="selection_rate")
    assert attr["selection_rate__difference"].item() == spread["difference"].item()
    assert attr["demographic_parity_difference"].item() == spread["difference"].item()
    grp = wide.filter(attribute="race", group="African-American")
    assert grp["reference_group"].item() == "Caucasian"
    assert grp["disparate_impact"].item() == grp["selection_rate__ratio"].item()
    # drop_empty: statistic columns null everywhere are gone, value columns stay
    assert "disparate_impact__difference" not in wide.columns
    assert "n_missing" in wide.columns


def test_shuffled_and_concatenated_reports(compas: pl.DataFrame) -> None:
    long = pf.fairness_report(compas, **_COMPAS)
    shuffled = long.sample(fraction=1.0, shuffle=True, seed=7)
    _check_round_trip(shuffled)
    a, b = to_wide(shuffled), to_wide(long)
    assert sorted(a.columns) == sorted(b.columns)  # metric columns in order of first appearance
    order = [pl.col("attribute").cast(pl.String), "group"]
    assert a.sort(order, nulls_last=False).select(b.columns).equals(b.sort(order, nulls_last=False))
    two = pl.concat([long.filter(attribute="sex"), long.filter(pl.col("attribute") != "sex")])
    _check_round_trip(two)


def test_compas_best_reference_gets_per_metric_reference_columns(compas: pl.DataFrame) -> None:
    long = pf.fairness_report(compas, **_COMPAS, reference="best")
    wide = to_wide(long)
    assert "reference_group" not in wide.columns
    assert "selection_rate__reference_group" in wide.columns
    _check_round_trip(long)


def test_by_and_thresholds_round_trip(compas: pl.DataFrame) -> None:
    df = compas.with_columns((pl.col("age") > 40).alias("older"))
    long = pf.fairness_report(df, **_COMPAS, by="older", thresholds={"disparate_impact": [0.8, 1.25]})
    _check_round_trip(long)
    wide = to_wide(long)
    assert wide.columns[:3] == ["older", "attribute", "group"]
    assert "disparate_impact__status" in wide.columns


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=audit_cases(max_rows=30))
def test_random_reports_round_trip(case: Case) -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            long = pf.fairness_report(case.df, **case.kwargs, **case.options, on_missing="ignore")
        except pf.InvalidInputError as exc:  # every row missing: the doors' one error (issue 38)
            assert "nothing to audit" in str(exc)
            return
    _check_round_trip(long)


def test_errors() -> None:
    with pytest.raises(PolfairError, match="columns \\['metric'"):
        to_wide(pl.DataFrame({"attribute": ["a"], "group": ["g"], "value": [1.0]}))
    dup = pl.DataFrame({"attribute": ["a", "a"], "group": ["g", "g"], "metric": ["m", "m"], "value": [1.0, 2.0]})
    with pytest.raises(PolfairError, match="several rows"):
        to_wide(dup)


def test_fairness_report_shape_wide_equals_to_wide(compas: pl.DataFrame) -> None:
    long = pf.fairness_report(compas, **_COMPAS)
    wide = pf.fairness_report(compas, **_COMPAS, shape="wide")
    assert wide.equals(to_wide(long))
    with pytest.raises(PolfairError, match="shape must be 'long'"):
        pf.fairness_report(compas, **_COMPAS, shape="tall")  # type: ignore[arg-type]
