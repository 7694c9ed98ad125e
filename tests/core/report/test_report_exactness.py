"""Bit-level properties of the report: correctly rounded ratios and run-to-run determinism."""

from __future__ import annotations

import numpy as np
import polars as pl

import polfair as pf


def _frame(seed: int = 1, n: int = 300) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    return pl.DataFrame(
        {"y": rng.integers(0, 2, n), "p": rng.integers(0, 2, n), "g": rng.choice(["a", "b", "c"], n),
         "h": rng.choice(["x", "y"], n), "w": rng.random(n) * 3}  # fmt: skip
    )


def test_ratios_are_the_correctly_rounded_quotient_without_by():
    # one attribute set, no by: the reference value is the same on every row, which Polars may
    # hold as a scalar and divide by via its reciprocal (one ulp off); the report must not
    rep = pf.fairness_report(_frame(), y_true="y", y_pred="p", protected="g", privileged={"g": "b"})
    rows = rep.filter(pl.col("group").is_not_null(), pl.col("ratio").is_not_null())
    ref = dict(rows.filter(group="b").select("metric", "value").iter_rows())
    checked = 0
    for metric, value, ratio in rows.filter(group="a").select("metric", "value", "ratio").iter_rows():
        assert ratio == value / ref[metric], metric  # exact: Python's float division is IEEE a/b
        checked += 1
    assert checked > 20


def test_report_is_identical_across_runs():
    df = _frame(2, 3000)
    kw = dict(y_true="y", y_pred="p", weight="w", protected=["g", "h"], alpha=3.0)
    cells = pf.confusion_counts(df, **{k: v for k, v in kw.items() if k != "alpha"}).collect()
    first = pf.report_from_counts(cells, protected=["g", "h"], alpha=3.0)
    for _ in range(10):
        assert pf.report_from_counts(cells, protected=["g", "h"], alpha=3.0).equals(first)
