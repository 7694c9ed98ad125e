"""Sizes (and render times) of the HTML report on COMPAS, Adult, 8 attributes and a 10k-level attribute.

Run: ``python bench/html_sizes.py [--out DIR]``. Prints one line per case: report rows, attribute
sets, charts (<svg> elements), file size and render time. Sizes, not speed, are the point here (the
issue asks for "under a few MB"); times are one run on this machine.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

import polfair as pf
from polfair.outputs.html import write_html


def _compas() -> pl.DataFrame:
    df = pf.load_compas()
    age = (
        pl.when(pl.col("age") < 25).then(pl.lit("<25")).when(pl.col("age") <= 45).then(pl.lit("25-45"))
        .otherwise(pl.lit(">45")).alias("age_band")
    )  # fmt: skip
    return df.pipe(pf.fairness_report, y_true="two_year_recid", y_pred=pl.col("decile_score") >= 5,
                   protected=["race", "sex", age], favorable=1,
                   privileged={"race": "Caucasian", "sex": "Male", "age_band": "25-45"})  # fmt: skip


def _adult() -> pl.DataFrame:
    df = pf.load_adult()
    return df.pipe(pf.fairness_report, y_true="income_gt_50k", y_pred=pl.col("education_num") >= 13,
                   protected=["sex", "race"], favorable=1,
                   privileged={"sex": "Male", "race": "White"})  # fmt: skip


def _synthetic(n: int, levels: list[int], seed: int = 0, intersections: int | None = None) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    cols = {f"a{i}": rng.integers(0, k, n).astype(str) for i, k in enumerate(levels)}
    y = rng.integers(0, 2, n)
    p = (rng.random(n) < 0.3 + 0.2 * (cols["a0"] == "0")).astype(int)
    df = pl.DataFrame({**cols, "y": y, "p": p})
    return df.pipe(pf.fairness_report, y_true="y", y_pred="p", protected=list(cols), intersections=intersections)


CASES = {
    "compas (3 attributes, all 7 sets)": _compas,
    "adult (sex, race)": _adult,
    "8 attributes x 3 levels, pairs (36 sets)": lambda: _synthetic(200_000, [3] * 8, intersections=2),
    "one attribute with 10,000 levels": lambda: _synthetic(500_000, [10_000]),
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", help="keep the files in this folder")
    args = ap.parse_args()
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp())
    out.mkdir(parents=True, exist_ok=True)
    print("| case | report rows | attribute sets | charts | file size | render time |")
    print("|---|---:|---:|---:|---:|---:|")
    for i, (name, make) in enumerate(CASES.items()):
        report = make()
        t0 = time.perf_counter()
        path = write_html(report, out / f"case{i}.html", title=name, generated_at="fixed")
        dt = time.perf_counter() - t0
        text = path.read_text(encoding="utf-8")
        sets = report["attribute"].drop_nulls().n_unique()
        print(f"| {name} | {report.height:,} | {sets} | {text.count('<svg') - 6} | "
              f"{path.stat().st_size / 1e6:.2f} MB | {dt:.1f} s |")  # fmt: skip


if __name__ == "__main__":
    main()
