"""Property tests of the regression cell table against a naive per-row reference (hypothesis):
hostile values (NaN, None, huge offsets, zero and tiny weights), splits and merges."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import polars as pl
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import polfair as pf
from polfair.core import regression as rg

VALUES = st.one_of(st.floats(-50, 50, allow_nan=False), st.sampled_from([0.0, 1e-9, float("nan")]), st.none())
WEIGHTS = st.sampled_from([0.0, 1e-6, 0.5, 1.0, 3.25, None])


def naive(y: np.ndarray, p: np.ndarray, w: np.ndarray) -> dict[str, float]:
    ok = ~(np.isnan(y) | np.isnan(p) | np.isnan(w))
    y, p, w = y[ok], p[ok], w[ok]
    W = w.sum()
    if not W > 0:
        return {}
    e = p - y
    mse = (w * e * e).sum() / W
    out = {"num_instances": W, "mean_outcome": (w * y).sum() / W, "mean_prediction": (w * p).sum() / W,
           "mean_error": (w * e).sum() / W, "mean_absolute_error": (w * np.abs(e)).sum() / W,
           "mean_squared_error": mse, "root_mean_squared_error": math.sqrt(mse)}  # fmt: skip
    # r²: exact rational arithmetic (the reference must not lose digits where polfair keeps them)
    fw, fy, fp = ([Fraction(float(v)) for v in a] for a in (w, y, p))
    Wf = sum(fw)
    ybar = sum(a * b for a, b in zip(fw, fy)) / Wf
    sst = sum(a * (b - ybar) ** 2 for a, b in zip(fw, fy))
    sse = sum(a * (c - b) ** 2 for a, b, c in zip(fw, fy, fp))
    if sst > 0:
        out["r2_score"] = float(1 - sse / sst)
    return out


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["a", "b", "null", None]), VALUES, VALUES, WEIGHTS), min_size=1, max_size=40),
    st.sampled_from([0.0, 1e6, -3e7]),
    st.integers(1, 3),
)
@example(  # found by CI: group b's spread (6e-61) was lost against the partition's shift (group a's 1.0)
    rows=[("a", 0.0, 0.0, 0.0), ("a", None, 0.0, 0.0), ("a", 1.0, 0.0, 1e-06), ("b", 0.0, 0.0, 1e-06),
          ("b", 6.223129050218614e-61, 0.0, 1e-06)],
    offset=0.0, parts=1,
)  # fmt: skip
@example(  # found by CI: a partition without a counted row (shift 0) set the merge's shift
    rows=[*[("a", 0.0, 0.0, 0.0)] * 3, ("a", 0.0, None, 0.0), *[("a", 0.0, 0.0, 0.0)] * 6, ("a", 0.0, 0.0, 1e-06),
          ("a", 1.0, 0.0, 1e-06)],
    offset=1e6, parts=2,
)  # fmt: skip
def test_metrics_equal_a_naive_reference_and_merges(rows, offset: float, parts: int) -> None:
    g = [r[0] for r in rows]
    f = lambda v: float("nan") if v is None else float(v)  # noqa: E731
    y = np.array([f(r[1]) for r in rows]) + offset
    p = np.array([f(r[2]) for r in rows]) + offset
    w = np.array([f(r[3]) for r in rows])
    df = pl.DataFrame({"g": g, "y": y, "p": p, "w": w}, schema_overrides={"g": pl.String})  # all-null: still a key
    cells = rg.regression_cells(df.lazy(), y_true="y", y_pred="p", keys=["g"], weight="w")
    # every input row is accounted for
    assert int(cells["n"].sum() + cells["n_missing"].sum()) == len(rows)
    size = math.ceil(len(rows) / parts)  # partitions, each with its own centred moments, then merged
    chunks = [rg.regression_cells(df.lazy().slice(i, size), y_true="y", y_pred="p", keys=["g"], weight="w")
              for i in range(0, len(rows), size)]  # fmt: skip
    merged = rg.merge_regression_cells(chunks)
    if not int(cells["n"].sum()):  # every row missing: the doors' one error (issue 38)
        with pytest.raises(pf.InvalidInputError, match="nothing to audit"):
            rg.regression_report_from_cells(cells, protected="g", ci=None)
        return
    for table in (cells, merged):
        rep = rg.regression_report_from_cells(table, protected="g", ci=None)
        for key in {*g}:
            sel = np.array([x == key for x in g])
            want = naive(y[sel], p[sel], w[sel])
            label = "null" if key is None else ('"null"' if key == "null" else key)
            rows_g = rep.filter(pl.col("group") == label)
            for metric in rg.REGRESSION_METRICS:
                got = rows_g.filter(metric=metric)["value"].item()
                if metric not in want:
                    assert got is None or metric == "num_instances", (metric, got)
                    continue
                # r² is scale-free: centred moments keep its digits whatever the offset (1e-6 absolute
                # is the rounding of deviations of about 1 from means of 3e7)
                scale = 1e3 if metric == "r2_score" else max(1.0, abs(offset), abs(want[metric]))
                assert got is not None and got == pytest.approx(want[metric], rel=1e-7, abs=1e-9 * scale), metric
