"""An interval without an upper limit (EDF's projection when a group's rate can be 0) reads the same in
the terminal summary and on the page: ``[lo, inf)`` (issue 39)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import polfair as pf
from polfair.outputs.html._view import bounded, fmt_index_interval


@pytest.fixture(scope="module")
def report() -> pl.DataFrame:
    rng = np.random.default_rng(0)
    g = np.array(["a"] * 150 + ["b"] * 140 + ["c"] * 10)
    y = (rng.random(300) < 0.5).astype(int)
    p = np.where(g == "c", 0, rng.random(300) < 0.4).astype(int)  # c: no predicted positive
    return pf.fairness_report(pl.DataFrame({"g": g, "y": y, "p": p}), y_true="y", y_pred="p", protected="g")


def _unbounded(report: pl.DataFrame) -> dict[str, object]:
    rows = report.filter(pl.col("attribute").is_null(), pl.col("value_lo").is_not_null(), pl.col("value_hi").is_null(),
                         metric="smoothed_empirical_differential_fairness_predictions")  # fmt: skip
    assert rows.height == 1  # the case this test is about
    return rows.row(0, named=True)


def test_summary_writes_an_unbounded_interval(report: pl.DataFrame) -> None:
    r = _unbounded(report)
    text = pf.summarize(report)
    line = next(x for x in text.splitlines() if x.startswith("smoothed_empirical_differential_fairness_predictions"))
    assert line.rstrip().endswith(f"{r['value']:.4f} [{r['value_lo']:.4f}, inf)")  # was: no interval at all


def test_page_writes_the_same_rendering(report: pl.DataFrame) -> None:
    pytest.importorskip("jinja2")
    r = _unbounded(report)
    from polfair.outputs.html.render import to_html

    page = to_html(report)
    want = fmt_index_interval(r["value_lo"], None)
    assert want.endswith(", inf)")
    assert want in page
    assert "–]" not in page  # was `[0.005949, –]`


def test_bounded_text() -> None:
    assert bounded("0.1", None) == "[0.1, inf)"
    assert bounded("0.1", "0.2") == "[0.1, 0.2]"
