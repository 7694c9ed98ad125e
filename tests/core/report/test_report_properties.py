"""Property tests: fairness_report / confusion_counts against the naive NumPy reference, and
invariances (engines, input kinds, row order, label encoding, weights, by=)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import polars as pl
import pytest
from conftest import Case, audit_cases
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal
from reference import compare_reports, ref_cells, ref_report, report_as_dict

import polfair as pf
from polfair.core.intervals import INTERVAL_COLUMNS

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
#: invariance tests run several reports per example: fewer examples
FEW = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: metrics that ignore weights (aif360): excluded when comparing weighted with duplicated rows
UNWEIGHTED = {
    "generalized_entropy_index", "theil_index", "coefficient_of_variation",
    "between_group_generalized_entropy_index", "between_group_theil_index",
    "between_group_coefficient_of_variation", "between_all_groups_generalized_entropy_index",
    "between_all_groups_theil_index", "between_all_groups_coefficient_of_variation", "n_missing",
    # Kish sizes, not frequency weights: n − 1 of duplicated rows is not n_eff − 1 of weighted ones
    "between_group_variance_base_rate", "between_group_variance_selection_rate",
}  # fmt: skip


def every_row_missing(df: pl.DataFrame, kwargs: dict) -> bool:
    """Rows, none invalid, each with a missing label, prediction, score or weight."""
    c = pf.confusion_counts(df, **kwargs).collect()
    n = int(c["n"].sum() or 0)
    return n > 0 and int(c["n_invalid"].sum() or 0) == 0 and int(c["n_missing"].sum() or 0) == n


def report(case: Case, data=None, **extra) -> pl.DataFrame:
    kw = {**case.kwargs, **case.options, "on_missing": "ignore", **extra}
    if every_row_missing(case.df, case.kwargs):  # the doors' one error (issue 38), then another example
        with pytest.raises(pf.InvalidInputError, match="nothing to audit"):
            pf.fairness_report(case.df if data is None else data, **kw)
        assume(False)
    return pf.fairness_report(case.df if data is None else data, **kw)


def assert_reports_equal(a: pl.DataFrame, b: pl.DataFrame, *, exact: bool = False) -> None:
    """Same rows in the same order; floats equal up to summation-order rounding."""
    assert a.columns == b.columns
    assert a.schema == b.schema
    if exact:  # point values exactly; intervals up to the Float64 Σw² of weighted counts (docs/design.md)
        ci = [c for c in a.columns if c in INTERVAL_COLUMNS]
        assert_frame_equal(a.drop(ci), b.drop(ci))
        assert_frame_equal(a.select(ci), b.select(ci), check_exact=False, rel_tol=1e-12, abs_tol=1e-15)
    else:
        assert_frame_equal(a, b, check_exact=False, rel_tol=1e-9, abs_tol=1e-12)


# ---------------------------------------------------------------------------------------------
# against the reference
# ---------------------------------------------------------------------------------------------


@SETTINGS
@given(audit_cases())
def test_report_matches_reference(case: Case) -> None:
    got = report_as_dict(report(case), case.by)
    want = ref_report(case.rows, **case.options)
    problems = compare_reports(got, want)
    assert not problems, "\n".join(problems[:20])


@SETTINGS
@given(audit_cases(options=False))
def test_confusion_counts_match_reference(case: Case) -> None:
    lf = pf.confusion_counts(case.df, **case.kwargs)
    assert isinstance(lf, pl.LazyFrame)
    cells = lf.collect()
    key_cols = [*case.rows.by, *case.rows.keys]
    # schema: keys keep the input dtypes, counts have the documented dtypes
    assert cells.columns == [*key_cols, *pf.COUNT_COLUMNS]
    for c in key_cols:
        assert cells.schema[c] == case.df.schema[c]
    for c in ("n", "n_missing", "n_invalid", "tp_n", "fp_n", "tn_n", "fn_n"):
        assert cells.schema[c] == pl.UInt64, c
    for c in ("w", "tp", "fp", "tn", "fn", "gtp", "gfp", "gtn", "gfn"):
        assert cells.schema[c] == pl.Float64, c
    # no row is lost from the accounting
    assert cells["n"].sum() == case.df.height
    want = ref_cells(case.rows)
    got = {tuple(r[c] for c in key_cols): r for r in cells.iter_rows(named=True)}
    assert list(got) == list(want), "cells differ (or are not sorted by keys, nulls first)"
    for key, w in want.items():
        for col, v in w.items():
            assert math.isclose(got[key][col], v, rel_tol=1e-12, abs_tol=1e-12), (key, col, got[key][col], v)


@FEW
@given(audit_cases(options=False, predictions="none"))
def test_labels_only_prediction_mirrors_label(case: Case) -> None:
    cells = pf.confusion_counts(case.df, **case.kwargs).collect()
    assert cells["fp"].sum() == 0 and cells["fn"].sum() == 0
    assert cells["fp_n"].sum() == 0 and cells["fn_n"].sum() == 0
    rep = report(case)
    assert "selection_rate" not in rep["metric"].to_list()
    assert "theil_index" not in rep["metric"].to_list()


def test_all_rows_missing_is_accounted() -> None:
    df = pl.DataFrame({"y": [None, None, 1], "p": [1, 0, None], "g": ["a", "b", "a"]})
    # a whole input with every row missing is the doors' one error (issue 38; a report of nulls before) ...
    with pytest.raises(pf.InvalidInputError, match=r"every row \(3\) has a missing .*nothing to audit"):
        pf.fairness_report(df, y_true="y", y_pred="p", protected="g", on_missing="ignore")
    # ... a period with every row missing keeps its rows, accounted, with null rates
    df = pl.concat([df.with_columns(t=pl.lit(1)), pl.DataFrame({"y": [1], "p": [1], "g": ["a"], "t": [2]})],
                   how="vertical_relaxed")
    rep = pf.fairness_report(df, y_true="y", y_pred="p", protected="g", by="t", on_missing="ignore").filter(t=1)
    pop = rep.filter(pl.col("attribute").is_null())
    assert pop.filter(metric="n_missing")["value"].item() == 3.0
    assert pop.filter(metric="num_instances")["value"].item() == 0.0
    assert pop.filter(metric="selection_rate")["value"].item() is None
    assert pop.filter(metric="generalized_entropy_index")["value"].item() is None
    assert rep.filter(metric="n_missing", group="b")["value"].item() == 1.0


# ---------------------------------------------------------------------------------------------
# invariances
# ---------------------------------------------------------------------------------------------


@settings(max_examples=15, deadline=None)
@given(case=audit_cases(max_rows=30))
def test_engines_and_input_kinds_agree(case: Case, tmp_path_factory: pytest.TempPathFactory) -> None:
    # with intervals once; the other input kinds give the same cell table, so point values suffice
    # (the intervals are a function of the cell table; keeps the suite's run time in check)
    assert_reports_equal(report(case, case.df.lazy(), engine="streaming"), report(case, engine="in-memory"))
    base = report(case, engine="in-memory", ci=None)
    assert_reports_equal(report(case, case.df.lazy(), engine="in-memory", ci=None), base)
    assert_reports_equal(report(case, engine="auto", ci=None), base)
    path = tmp_path_factory.mktemp("pq") / "data.parquet"
    case.df.write_parquet(path)
    assert_reports_equal(report(case, str(path), ci=None), base)
    assert_reports_equal(report(case, path, ci=None), base)
    assert_reports_equal(report(case, case.df.to_arrow(), ci=None), base)
    if case.df.schema["y"] != pl.Boolean and all(
        case.df.schema[k] == pl.String for k in case.rows.keys
    ):  # pandas round trips of nullable int/bool columns change dtypes, so only str keys here
        pdf = case.df.to_pandas()
        got = report(case, pdf, ci=None)
        assert_frame_equal(got, base, check_exact=False, rel_tol=1e-9, abs_tol=1e-12, check_dtypes=False)


@FEW
@given(audit_cases(max_rows=30), st.randoms(use_true_random=False))
def test_row_order_does_not_matter(case: Case, rnd) -> None:
    idx = list(range(case.df.height))
    rnd.shuffle(idx)
    shuffled = case.df[idx]
    assert_reports_equal(report(case, shuffled), report(case))
    assert_frame_equal(
        pf.confusion_counts(shuffled, **case.kwargs).collect(),
        pf.confusion_counts(case.df, **case.kwargs).collect(),
        check_exact=False, rel_tol=1e-12, abs_tol=1e-12,
    )  # fmt: skip


@FEW
@given(audit_cases(max_rows=30, label_kinds=("int",)))
def test_label_renaming_does_not_matter(case: Case) -> None:
    mapping = {0: "no", 1: "yes"}
    cols = [c for c in ("y", "yhat") if c in case.df.columns]
    renamed = case.df.with_columns(pl.col(c).replace_strict(mapping, return_dtype=pl.String) for c in cols)
    if "score_label" in case.kwargs:  # "yes" sorts above "no": the score needs no score_label there
        case.kwargs.pop("score_label")
    got = report(case, renamed, favorable="yes")
    assert_reports_equal(got, report(case), exact=True)
    # and with an explicit unfavorable label
    # the other spellings give the same cell table: point values suffice
    got2 = report(case, renamed, favorable="yes", unfavorable="no", ci=None)
    assert_reports_equal(got2, report(case, ci=None), exact=True)
    # favorable given as a list
    got3 = report(case, renamed, favorable=["yes"], ci=None)
    assert_reports_equal(got3, report(case, ci=None), exact=True)


@FEW
@given(audit_cases(max_rows=30, weights=False))
def test_unit_weights_equal_no_weights(case: Case) -> None:
    weighted = case.df.with_columns(unit=pl.lit(1.0))
    # a weighted report's tests are z tests on Kish sizes (no Fisher), so they are not compared;
    # with unit weights the Kish sizes are the counts, so every limit is the same
    tests = ["p_value", "p_value_adjusted", "ci_method", "test"]
    want = report(case).drop(tests)
    got = report(case, weighted, weight="unit")
    assert_reports_equal(got.drop(tests), want, exact=True)
    got_int = report(case, case.df.with_columns(unit=pl.lit(1, pl.Int32)), weight="unit")
    assert_reports_equal(got_int.drop(tests), want, exact=True)


@FEW
@given(audit_cases(max_rows=25, weights=False), st.data())
def test_integer_weights_equal_row_duplication(case: Case, data: st.DataObject) -> None:
    k = data.draw(st.lists(st.integers(1, 3), min_size=case.df.height, max_size=case.df.height))
    weighted = case.df.with_columns(wt=pl.Series(k, dtype=pl.Int64))
    duplicated = case.df.select(pl.all().repeat_by(pl.Series(k, dtype=pl.UInt32)).explode())
    a = report_as_dict(report(case, weighted, weight="wt", ci=None), case.by)  # point values are compared
    b = report_as_dict(report(case, duplicated, ci=None), case.by)
    assert set(a) == set(b)
    from reference import close

    for key in a:
        if key[3] in UNWEIGHTED:
            continue
        for f in ("value", "difference", "ratio"):
            assert close(a[key][f], b[key][f]), (key, f, a[key][f], b[key][f])
        assert a[key]["reference_group"] == b[key]["reference_group"], key


@FEW
@given(audit_cases(max_rows=40, by=True))
def test_by_equals_separate_reports(case: Case) -> None:
    kwargs = {k: v for k, v in case.kwargs.items() if k != "by"}
    # point values only: the bootstrap and Monte Carlo streams are keyed by the by value (by design,
    # docs/statistics.md "Determinism"), so a report without by draws from another stream
    full = report(case, ci=None)
    for (value,), part in full.group_by(["bcol"], maintain_order=True):
        sub = case.df.filter(pl.col("bcol").eq_missing(value))
        if every_row_missing(sub, kwargs):  # alone: the doors' one error; in the by report: null rates (issue 38)
            with pytest.raises(pf.InvalidInputError, match="nothing to audit"):
                pf.fairness_report(sub, **kwargs, **case.options, on_missing="ignore", ci=None)
            rates = part.filter(pl.col("metric").is_in(["base_rate", "selection_rate"]))
            assert rates["value"].null_count() == rates.height
            continue
        with warnings.catch_warnings():  # a by value may lack the privileged group: the report alone warns
            warnings.simplefilter("ignore", pf.ReferenceWarning)
            alone = pf.fairness_report(sub, **kwargs, **case.options, on_missing="ignore", ci=None)
        assert_reports_equal(part.drop("bcol"), alone)
    # every by value gets a report
    assert set(full["bcol"].unique().to_list()) == set(case.df["bcol"].unique().to_list())


@FEW
@given(audit_cases(max_rows=30, options=False))
def test_merge_counts_of_parts_equals_whole(case: Case) -> None:
    cut = case.df.height // 2
    parts = [pf.confusion_counts(d, **case.kwargs) for d in (case.df[:cut], case.df[cut:]) if d.height]
    merged = pf.merge_counts(parts).collect()
    whole = pf.confusion_counts(case.df, **case.kwargs).collect()
    assert_frame_equal(merged, whole, check_exact=False, rel_tol=1e-12, abs_tol=1e-12)
    keys = list(case.rows.keys)
    a = pf.report_from_counts(merged, protected=keys, by=case.by, has_predictions="y_pred" in case.kwargs
                              or "y_score" in case.kwargs, weighted="weight" in case.kwargs)  # fmt: skip
    b = report(case)
    assert_reports_equal(a, b)


def test_reference_itself_on_a_tiny_case() -> None:
    """Guard the reference: a hand-checked 4-row case."""
    from reference import Rows

    rows = Rows(y=[1, 0, 1, 1], p=[1, 1, 0, 1], keys={"g": ["f", "f", "m", "m"]})
    rep = ref_report(rows)
    assert rep[((), "g", "f", "false_positive_rate")]["value"] == 1.0
    assert rep[((), "g", "m", "true_positive_rate")]["value"] == 0.5
    assert rep[((), "g", "f", "true_negative_rate")]["value"] == 0.0
    assert rep[((), "g", None, "selection_rate")]["difference"] == 0.5
    assert np.isclose(rep[((), None, None, "base_rate")]["value"], 0.75)
