"""Issue 41: the lazy report's filters push down into construction (counted), and its rows are the eager report's."""

from __future__ import annotations

import sys
from pathlib import Path

import polars as pl
import pytest

import polfair as pf
from polfair.core.report import build
from polfair.exceptions import PolfairError

sys.path.insert(0, str(Path(__file__).parent))
import report_shapes  # noqa: E402

KW = dict(y_true="y", y_pred="p", y_score="s", weight="w", exact_sums=True, protected=["a", "b", "c"], by="d")


@pytest.fixture
def built(monkeypatch):
    """What construction builds: per group_part call, its group rows and its metric columns."""
    seen: list[tuple[int, int]] = []
    original = build.group_part

    def spy(groups, *args, **kw):
        part = original(groups, *args, **kw)
        seen.append((groups.height, len(part.floats["value"].columns)))
        return part

    monkeypatch.setattr(build, "group_part", spy)  # the name the report's construction calls
    return seen


def test_metric_and_attribute_filters_push_down(built):
    full = pf.fairness_report(report_shapes.frame(), **KW)
    full_groups, full_metrics = built[-1]
    lazy = pf.lazy_report(report_shapes.frame(), **KW).filter(metric=["disparate_impact", "selection_rate"])
    lazy = lazy.filter(attribute="a & b", group=["x & p", "y & q"]).filter(d=[0, 2])
    assert lazy.pushed_down() == {"metrics": ["disparate_impact", "selection_rate"], "intersections": [["a", "b"]]}
    got = lazy.collect()
    groups, metrics = built[-1]
    # a & b: 6 groups x 3 by values, of (3 + 2 + 4 + 6 + 12 + 8 + 24) x 3; 3 value columns of ~50
    assert (groups, full_groups) == (18, 177) and metrics == 3 and full_metrics > 40  # n_missing, rate, disparity
    want = full.filter(pl.col("metric").cast(pl.String).is_in(["disparate_impact", "selection_rate"]),
                       pl.col("attribute") == "a & b", pl.col("group").is_in(["x & p", "y & q"]),
                       pl.col("d").is_in([0, 2]))  # fmt: skip
    assert got.height == want.height == 2 * 2 * 2
    # the one difference an attribute pushdown makes: p_value_adjusted over the sets it builds
    assert got.drop("p_value_adjusted").equals(want.drop("p_value_adjusted"))


def test_a_metric_filter_alone_is_the_eager_rows_bit_for_bit(built):
    full = pf.fairness_report(report_shapes.frame(), **KW)
    got = pf.lazy_report(report_shapes.frame(), **KW).filter(metric="theil_index").collect()
    assert built[-1][1] == 1  # no group metric built for a population index: n_missing alone
    assert got.equals(full.filter(pl.col("metric") == "theil_index")) and got.height == 3


def test_expressions_and_user_metric_names_filter_the_built_rows(built):
    kw = dict(y_true="y", y_pred="p", protected=["a"], user_metrics={"hit": pl.col("tp") / pl.col("n")})
    full = pf.fairness_report(report_shapes.frame(), **kw)
    lazy = pf.lazy_report(report_shapes.frame(), **kw).filter(pl.col("value") > 0.3, metric=["hit", "accuracy"])
    assert lazy.pushed_down() == {}  # a user metric's name is not a built-in one: nothing pushed
    got = lazy.collect()
    assert got.equals(full.filter(pl.col("value") > 0.3, pl.col("metric").cast(pl.String).is_in(["hit", "accuracy"])))


def test_batches_and_sink_stream_the_filtered_report(tmp_path):
    lazy = pf.lazy_report(report_shapes.frame(), **KW).filter(metric=["selection_rate", "false_positive_rate"])
    whole = lazy.collect()
    batches = list(lazy.collect_batches(batch_rows=20))
    assert len(batches) > 1 and pl.concat(batches).equals(whole)
    path = tmp_path / "r.parquet"
    assert lazy.sink(path, batch_rows=20) == whole.height
    assert pl.read_parquet(path).height == whole.height


def test_options_are_checked_before_any_data_is_read():
    with pytest.raises(PolfairError, match="did you mean 'protected'"):
        pf.lazy_report("no/such/file.parquet", y_true="y", protectd=["a"])
    lazy = pf.lazy_report(report_shapes.frame(), **KW).filter(metric="selection_rate").filter(metric="accuracy")
    with pytest.raises(PolfairError, match="intersection is empty"):
        lazy.collect()
