"""One request travels from the door down (issue 38): built once, config merged once, read by every stage."""

from __future__ import annotations

import dataclasses
import warnings

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polfair as pf
from polfair.cli import main
from polfair.core.passes.collect import collect_cells
from polfair.core.passes.spec import PassOptions, build_spec
from polfair.core.report.build import ReportOptions, report_of
from polfair.core.report.run_metadata import render_request, request_of
from polfair.core.request import AuditRequest
from polfair.monitor.plan import ReportPlan, plan_report


def _frame() -> pl.DataFrame:
    return pl.DataFrame({
        "y": [1, 0, 1, 1, 0, 0, 1, 0] * 10, "p": [1, 1, 0, 1, 0, 1, 1, 0] * 10, "s": [0.9, 0.6, 0.2, 0.8, 0.1, 0.7, 0.4, 0.3] * 10,
        "g": ["a", "a", "b", "b"] * 20, "age": list(range(18, 58)) * 2,
    })  # fmt: skip


def test_the_pass_reads_the_request_itself() -> None:
    df = _frame()
    request = AuditRequest.of(y_true="y", y_score="s", threshold=0.3, protected="g")
    assert isinstance(request, PassOptions)  # no pass_keywords() dict: the request is what the pass reads
    by_request = collect_cells(build_spec(df, dataclasses.replace(request, threshold=0.3)))
    by_keywords = collect_cells(build_spec(df, y_true="y", y_score="s", threshold=0.3, protected="g"))
    assert_frame_equal(by_request, by_keywords)


def test_the_config_is_merged_once_into_a_frozen_view() -> None:
    cfg = {"monitored": {"age": [18, 25]}, "reference": {"age": [26, 99]}, "min_sample_size": 5, "threshold": 0.4,
           "thresholds": {"disparate_impact": [0.8, 1.25]}, "statistics": {"ci": 0.9}}  # fmt: skip
    asked = AuditRequest.of(y_true="y", y_score="s", config=cfg)
    plan = plan_report(_frame(), asked)
    assert isinstance(plan, ReportPlan) and plan.asked is asked
    run = plan.request  # every option in effect, by name
    assert (run.threshold, run.min_sample_size, run.ci, run.band, run.intersections) == (0.4, 5, 0.9, "both", 1)
    assert run.privileged == {"age": "[26, 99]"} and plan.bands == {"disparate_impact": (0.8, 1.25)}
    assert asked.threshold is None and asked.ci == 0.95  # the door's request is unchanged (the hash reads it)
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.request = asked  # type: ignore[misc]
    assert plan.hashed()["threshold"] == 0.4


def test_the_report_builder_reads_typed_options_as_the_door_keywords() -> None:
    cells = pf.confusion_counts(_frame(), y_true="y", y_pred="p", protected="g").collect()
    options = ReportOptions(protected=["g"], privileged={"g": "a"}, ci=0.9, min_sample_size=5)
    assert_frame_equal(report_of(cells, options),
                       pf.report_from_counts(cells, protected=["g"], privileged={"g": "a"}, ci=0.9, min_sample_size=5))


def test_the_cli_hands_the_request_in_effect_to_the_battery(tmp_path, capsys) -> None:
    """The battery's minimum is the config's ``min_sample_size`` (merged once into the request)."""
    data, config = tmp_path / "d.parquet", tmp_path / "c.toml"
    pl.DataFrame({"y": [1, 0] * 20, "p": [1, 0, 1, 1] * 10, "g": ["a"] * 30 + ["b"] * 8 + ["c"] * 2}).write_parquet(data)
    config.write_text("min_sample_size = 5\n")
    code = main(["report", str(data), "--y-true", "y", "--y-pred", "p", "--protected", "g", "--adverse-impact", "eeoc",
                 "--config", str(config)])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    assert "fewer than 5 candidates" in out[out.index("adverse impact (eeoc)"):]


def test_report_warnings_name_the_users_line() -> None:
    """The report builder's ReferenceWarnings point at the caller through every door (user_stacklevel)."""
    df = _frame()
    cells = pf.confusion_counts(df, y_true="y", y_pred="p", protected="g").collect()
    calls = [
        lambda: pf.fairness_report(df, y_true="y", y_pred="p", protected="g", reference="best", min_sample_size=1000),
        lambda: pf.report_from_counts(cells, protected=["g"], reference="best", min_sample_size=1000),
        lambda: pf.fairness_report(df, y_true="y", y_pred="p", protected="g", privileged={"g": "a"}, min_sample_size=1000),
    ]
    for call in calls:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            call()
        files = {w.filename for w in seen if issubclass(w.category, pf.ReferenceWarning)}
        assert files == {__file__}, files


def test_provenance_is_rendered_by_one_rule_per_option() -> None:
    got = render_request({"y_true": "y", "y_pred": pl.col("s") >= 0.5, "threshold": 0.3, "protected": "g", "by": None,
                          "ci": None, "p_adjust": "bh", "min_sample_size": None}, task="t")  # fmt: skip
    assert got == {"task": "t", "y_true": "y", "y_pred": "(s) >= (0.5)", "protected": ["g"], "min_sample_size": 30}
    scored = render_request({"y_score": "s", "threshold": 0.3, "ci": 0.9, "p_adjust": "bh"})
    assert scored == {"y_score": "s", "threshold": 0.3, "ci": 0.9, "p_adjust": "bh"}
    assert render_request({"ci": None, "p_adjust": "holm"}, p_values_need_ci=False) == {"p_adjust": "holm"}


def test_slice_scan_writes_an_expression_role_as_every_door_does() -> None:
    """Behaviour change (issue 38): slice_scan's provenance wrote ``str(expr)``; now the one renderer's text."""
    df = _frame()
    expr = pl.col("p").alias("pred")
    scan = pf.slice_scan(df, features=["g"], y_true="y", y_pred=expr, min_support=1)
    report = pf.fairness_report(df, y_true="y", y_pred=expr, protected="g")
    slices, classification = request_of(scan), request_of(report)
    assert slices is not None and classification is not None
    assert slices["y_pred"] == classification["y_pred"] == 'p.alias("pred")'  # was 'col("p").alias("pred")' here
