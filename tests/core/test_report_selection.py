"""Issue 41: metric selection (``metrics=``), the intersection budget, and the full report unchanged."""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import polfair as pf
from polfair.core.report import rows
from polfair.core.report.run_metadata import request_of
from polfair.core.report.selection import SELECTABLE, select_metrics
from polfair.exceptions import PolfairError, ReportSizeWarning

sys.path.insert(0, str(Path(__file__).parent))
import report_shapes  # noqa: E402

BASE_DIGESTS = json.loads((Path(__file__).parent / "data" / "report_digests_base.json").read_text())


@pytest.mark.parametrize("name", sorted(report_shapes.SHAPES))
def test_every_report_is_bitwise_the_one_before_issue_41(name):
    # digests from the code at the branch's base (report_shapes.py says how they were made)
    assert report_shapes.canonical(report_shapes.report(name)) == BASE_DIGESTS[name]


SELECTIONS = [
    ["selection_rate", "false_positive_rate"],
    ["disparate_impact"],
    ["equalized_odds_difference", "theil_index", "n_missing"],
    ["average_odds_difference", "generalized_entropy_index", "demographic_parity_ratio"],
    ["smoothed_empirical_differential_fairness", "between_group_theil_index", "accuracy"],
]


@pytest.mark.parametrize("shape", ["weighted_scores_by", "best_no_ci", "overall_all_sets", "privileged"])
@pytest.mark.parametrize("selection", SELECTIONS, ids=lambda s: "+".join(s))
def test_a_selection_is_the_full_reports_rows_of_those_metrics(shape, selection):
    kw = dict(report_shapes.SHAPES[shape])
    full = pf.fairness_report(report_shapes.frame(), **kw)
    got = pf.fairness_report(report_shapes.frame(), **kw, metrics=selection)
    want = full.filter(pl.col("metric").cast(pl.String).is_in(selection))
    assert got.height == want.height > 0
    assert report_shapes.canonical(got) == report_shapes.canonical(want)
    assert request_of(got)["selected_metrics"] == selection


def test_labels_only_selection_and_batches():
    kw = dict(report_shapes.SHAPES["labels_only"])
    full = pf.fairness_report(report_shapes.frame(), **kw)
    sel = ["base_rate", "disparate_impact"]
    got = pf.fairness_report(report_shapes.frame(), **kw, metrics=sel)
    assert got.equals(full.filter(pl.col("metric").cast(pl.String).is_in(sel)))
    batches = list(pf.fairness_report_batches(report_shapes.frame(), **kw, metrics=sel, batch_rows=7))
    assert len(batches) > 1 and pl.concat(batches).equals(got)
    with pytest.raises(PolfairError, match="need predictions"):
        pf.fairness_report(report_shapes.frame(), **kw, metrics=["false_positive_rate"])


def test_a_selection_computes_only_what_it_needs(monkeypatch):
    built: dict[str, list[str]] = {}
    original = rows.group_intervals

    def spy(wide, metric_names, disparities, **kw):
        built["rates"] = list(metric_names)
        built["disparities"] = [d.name for d in disparities]
        built["columns"] = wide.columns
        return original(wide, metric_names, disparities, **kw)

    monkeypatch.setattr(rows, "group_intervals", spy)
    kw = report_shapes.SHAPES["basic"]
    pf.fairness_report(report_shapes.frame(), **kw, metrics=["disparate_impact", "false_positive_rate"])
    assert built["rates"] == ["selection_rate", "false_positive_rate"]
    assert built["disparities"] == ["disparate_impact"]
    assert "true_negative_rate__ref" not in built["columns"]  # no reference value of an unasked metric
    pf.fairness_report(report_shapes.frame(), **kw)
    assert len(built["rates"]) > 20 and len(built["disparities"]) > 10


@pytest.mark.parametrize(
    ("selection", "edf", "ge"),
    [
        (["selection_rate", "false_positive_rate"], False, False),
        (["disparate_impact", "theil_index"], False, True),
        (["between_group_generalized_entropy_index"], False, True),
        (["differential_fairness_bias_amplification"], True, False),
        (["smoothed_empirical_differential_fairness", "accuracy"], True, False),
        (["between_group_variance_selection_rate"], False, False),
        (["between_group_variance_base_rate", "base_rate"], False, False),
        (None, True, True),
    ],
)
def test_a_selection_skips_the_entropy_indices_and_edf_it_does_not_show(monkeypatch, selection, edf, ge):
    # counted where they are built: EDF's log rates (point values, both row kinds), its interval
    # inputs, the individuals' entropy family and the per-cell benefit variance of the entropy intervals
    calls = {"edf": 0, "edf_ci": 0, "ge": 0, "bvar": 0, "variance": 0}
    from polfair.core.report import build, intervals

    def counting(module, name, key):
        original = getattr(module, name)

        def wrapper(*a, **k):
            calls[key] += 1
            return original(*a, **k)

        monkeypatch.setattr(module, name, wrapper)

    counting(rows.entropy, "edf_log_rates", "edf")
    counting(intervals, "_edf_inputs", "edf_ci")
    counting(rows, "_entropy_family", "ge")
    counting(build, "benefit_variance", "bvar")
    counting(rows, "between_group_variance", "variance")  # the corrected variances: only those shown
    variance_rows: list[int] = []  # the group rows of each call (every shown rate's rows in one call)
    counted_variance = rows.between_group_variance
    monkeypatch.setattr(rows, "between_group_variance",
                        lambda p, *a, **k: variance_rows.append(len(p)) or counted_variance(p, *a, **k))  # fmt: skip
    group_columns: list[str] = []
    group_rows: list[int] = []
    original_groups = build._groups

    def groups_spy(*a, **k):
        out = original_groups(*a, **k)
        group_columns[:] = out[0].columns
        group_rows[:] = [out[0].height]
        return out

    monkeypatch.setattr(build, "_groups", groups_spy)
    rows._index_inputs.cache_clear()  # its expressions are cached: built again under the counter
    kw = report_shapes.SHAPES["weighted_scores_by"]
    got = pf.fairness_report(report_shapes.frame(), **kw, metrics=selection)
    rows._index_inputs.cache_clear()
    assert got.height > 0
    assert (calls["edf"] > 0) == (edf or ge)  # the index inputs hold both: built when either is shown
    assert (calls["edf_ci"] > 0) == edf
    assert (calls["ge"] > 0) == ge and (calls["bvar"] > 0) == ge
    variances = 2 if selection is None else sum(m.startswith("between_group_variance_") for m in selection)
    assert calls["variance"] == (variances > 0)  # one call for every rate shown
    assert sum(variance_rows) == variances * group_rows[0]
    if selection is not None:
        assert set(got["metric"].cast(pl.String)) == set(selection)
    # the group table holds the group metrics the selection needs only
    assert ("accuracy" in group_columns) == (selection is None or "accuracy" in selection)
    assert ("true_negative_rate" in group_columns) == (selection is None)


def test_selection_names_are_checked():
    with pytest.raises(PolfairError, match="did you mean 'selection_rate'"):
        pf.fairness_report(report_shapes.frame(), **report_shapes.SHAPES["basic"], metrics=["selection_rte"])
    with pytest.raises(PolfairError, match="empty list"):
        select_metrics([], True)
    assert "disparate_impact" in SELECTABLE and "theil_index" in SELECTABLE and "n_missing" in SELECTABLE


def test_the_old_metrics_form_still_works_with_a_deprecation_warning():
    kw = dict(report_shapes.SHAPES["basic"])
    user = {"hit": pl.col("tp") / pl.col("n")}
    new = pf.fairness_report(report_shapes.frame(), **kw, user_metrics=user)
    with pytest.warns(DeprecationWarning, match="user_metrics="):
        old = pf.fairness_report(report_shapes.frame(), **kw, metrics=user)
    assert old.equals(new) and "hit" in new["metric"].cast(pl.String).to_list()
    with pytest.warns(DeprecationWarning):
        gw = pf.fairness_report(report_shapes.frame(), **kw, metrics=["equalized_odds", "selection_rate"])
    assert set(gw["metric"].cast(pl.String).unique()) == {"equalized_odds", "selection_rate"}
    with pytest.raises(PolfairError, match="user_metrics= \\(given too\\)"):
        pf.fairness_report(report_shapes.frame(), **kw, metrics=user, user_metrics=user)


def _zips(n: int = 30_000) -> pl.DataFrame:
    rng = np.random.default_rng(3)
    return pl.DataFrame({"zip": rng.integers(0, 400, n).astype(str), "sex": rng.choice(["f", "m"], n),
                         "race": rng.choice(["r1", "r2", "r3"], n), "y": rng.integers(0, 2, n),
                         "p": rng.integers(0, 2, n)})  # fmt: skip


def test_the_intersection_budget_skips_big_intersections_and_says_so_once():
    kw = dict(y_true="y", y_pred="p", protected=["zip", "sex", "race"], ci=None)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        rep = pf.fairness_report(_zips(), **kw)
    said = [w for w in got if issubclass(w.category, ReportSizeWarning)]
    assert len(said) == 1 and "zip & race (1,200 groups)" in str(said[0].message)
    # zip & sex (800 groups) fits the 1,000 budget; zip & race would take it to 2,000; sex & race (6) fits
    assert set(rep["attribute"].cast(pl.String).drop_nulls().unique()) == {"zip", "sex", "race", "zip & sex", "sex & race"}
    skipped = request_of(rep)["intersections_skipped"]
    assert [(s["attributes"], s["groups"]) for s in skipped] == [(["zip", "race"], 1200), (["zip", "sex", "race"], 2400)]
    every = pf.fairness_report(_zips(), **kw, intersections="all")
    assert every["attribute"].drop_nulls().n_unique() == 7 and "intersections_skipped" not in request_of(every)
    # the kept sets' rows are those of the report of every set (but p_value_adjusted: fewer tests in a family)
    kept = rep["attribute"].cast(pl.String).drop_nulls().unique().implode()
    cols = ["attribute", "group", "metric", "value", "difference", "ratio", "n"]
    keep = every.filter(pl.col("attribute").cast(pl.String).is_in(kept)).select(cols)
    mine = rep.filter(pl.col("attribute").is_not_null()).select(cols)
    # the between-group entropy sums run over a larger group table in `every`: equal to rounding
    entropy = pl.col("metric").cast(pl.String).str.starts_with("between_group_")
    assert keep.filter(~entropy).equals(mine.filter(~entropy))
    np.testing.assert_allclose(keep.filter(entropy)["value"].to_numpy(), mine.filter(entropy)["value"].to_numpy(),
                               rtol=1e-9)  # fmt: skip
    alone = pf.fairness_report(_zips(), **kw, intersections="none")
    assert set(alone["attribute"].cast(pl.String).drop_nulls().unique()) == {"zip", "sex", "race"}
    big = pf.fairness_report(_zips(), **kw, max_intersection_groups=10_000)
    assert big["attribute"].drop_nulls().n_unique() == 7


def test_cli_metrics_and_intersections_flags(tmp_path, capsys):
    from polfair.cli import main

    src, out = tmp_path / "d.parquet", tmp_path / "r.parquet"
    _zips(3000).write_parquet(src)
    assert main(["report", str(src), "--y-true", "y", "--y-pred", "p", "--protected", "zip", "sex",
                 "--metrics", "selection_rate", "disparate_impact", "--intersections", "none", "--out", str(out)]) == 0  # fmt: skip
    rep = pl.read_parquet(out)
    assert set(rep["metric"].unique()) == {"selection_rate", "disparate_impact"}
    assert set(rep["attribute"].drop_nulls().unique()) == {"zip", "sex"}
    capsys.readouterr()
    assert main(["report", str(src), "--y-true", "y", "--y-pred", "p", "--protected", "sex", "--metrics", "selection_rte"]) != 0
    assert "did you mean 'selection_rate'" in capsys.readouterr().err


def test_config_metrics_select_and_user_metrics_add():
    cfg = {"metrics": ["selection_rate"], "user_metrics": ["equalized_odds"]}
    rep = pf.fairness_report(report_shapes.frame(), y_true="y", y_pred="p", protected=["a"], config=cfg)
    assert set(rep["metric"].cast(pl.String).unique()) == {"selection_rate", "equalized_odds"}
    with pytest.raises(PolfairError, match="did you mean 'selection_rate'"):
        pf.fairness_report(report_shapes.frame(), y_true="y", y_pred="p", protected=["a"],
                           config={"metrics": ["selection_rat"]})  # fmt: skip


@pytest.mark.parametrize(("scale", "one"), [(1.0, True), (1e-120, True), (1e120, True), (1e150, True),
                                            (1e-150, False), (1e-200, False), (1e200, False)])  # fmt: skip
def test_one_square_accumulator_is_the_two_bit_for_bit_or_recounts(scale, one, monkeypatch):
    from polfair.core.passes import collect
    from polfair.core.passes.counts import code_counts
    from polfair.core.passes.spec import build_spec

    df = report_shapes.frame().with_columns(pl.col("w") * scale)
    spec = build_spec(df, y_true="y", y_pred="p", y_score="s", protected=["a", "b"], weight="w")
    two = code_counts(spec).collect(engine="in-memory").sort(pl.all())
    held = collect._one_square_holds(code_counts(spec, one_square=True).collect(engine="in-memory"))
    # ordinary weights (down to about 1e-144, up to Σw² < 1.8e308) are held by one accumulator; beyond,
    # the pass recounts with the two
    assert (held is not None) == one
    if held is not None:
        assert held.sort(pl.all()).equals(two)
    recounts = []
    original = collect.code_counts
    monkeypatch.setattr(collect, "code_counts", lambda s, **kw: recounts.append(kw) or original(s, **kw))
    cells = collect.collect_cells(spec, relative=True, engine="in-memory")
    assert recounts == ([{"one_square": True}] if held is not None else [{"one_square": True}, {}])
    assert cells.height == 6 and cells["tp_w2"].is_not_null().all()


def test_selection_and_budget_through_duckdb_equal_polars():
    duckdb = pytest.importorskip("duckdb")
    df = _zips(20_000).with_columns(w=pl.Series(np.random.default_rng(4).random(20_000) + 0.5))
    rel = duckdb.connect().from_arrow(df.to_arrow())
    kw = dict(y_true="y", y_pred="p", protected=["zip", "sex", "race"], weight="w", exact_sums=True,
              metrics=["selection_rate", "disparate_impact", "theil_index"])  # fmt: skip
    with pytest.warns(ReportSizeWarning, match="intersection budget"):
        in_duckdb = pf.fairness_report(rel, **kw)
    with pytest.warns(ReportSizeWarning, match="intersection budget"):
        in_polars = pf.fairness_report(df, **kw)
    assert in_duckdb.equals(in_polars) and request_of(in_duckdb)["intersections_skipped"]
