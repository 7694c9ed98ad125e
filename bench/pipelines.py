"""Cost of the pipeline steps after the report: wide form, run metadata, append, drift.

Measured on the monitoring shape of issue 12 (``by=day``, 365 days, 3 attributes of 2, 5 and 6
levels), as ratios to building the report itself in the same run, and per report row.

    python bench/pipelines.py [--rows 2e6] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np
import polars as pl

import polfair as pf
from polfair.core.report.run_metadata import with_run_metadata
from polfair.core.report.wide import to_wide
from polfair.monitor.drift import compare_reports
from polfair.outputs.writers import append_report


def _best(f, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=float, default=2e6)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    n = int(args.rows)
    rng = np.random.default_rng(0)
    df = pl.DataFrame({
        "day": rng.integers(0, 365, n).astype(np.int32), "a": rng.integers(0, 2, n).astype(str),
        "b": rng.integers(0, 5, n).astype(str), "c": rng.integers(0, 6, n).astype(str),
        "y": rng.integers(0, 2, n), "p": rng.integers(0, 2, n),
    })  # fmt: skip
    opts = {"y_true": "y", "y_pred": "p", "protected": ["a", "b", "c"], "by": "day"}
    report = pf.fairness_report(df, **opts)
    t_report = _best(lambda: pf.fairness_report(df, **opts), args.repeat)
    stamped = with_run_metadata(report, run_id="bench")
    folder = tempfile.mkdtemp()
    rows = [
        ("fairness_report (the reference)", t_report),
        ("to_wide", _best(lambda: to_wide(report), args.repeat)),
        ("with_run_metadata", _best(lambda: with_run_metadata(report, run_id="bench"), args.repeat)),
        ("append_report (directory, one new file)",
         _best(lambda: append_report(stamped, os.path.join(folder, "t")), args.repeat)),
        ("compare_reports(period='day')", _best(lambda: compare_reports(report, period="day"), args.repeat)),
    ]  # fmt: skip
    print(f"{n:,} input rows, by=day; report: {report.height:,} rows")
    print(f"{'step':<42} {'seconds':>8} {'x report':>9} {'us/report row':>14}")
    for name, t in rows:
        print(f"{name:<42} {t:8.3f} {t / t_report:9.2f} {1e6 * t / report.height:14.3f}")


if __name__ == "__main__":
    main()
