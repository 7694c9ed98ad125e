"""Benchmark of the slice search (issue 33): side by side with ``sliceline``, and 1e7 rows from parquet.

Usage::

    python bench/slices.py --copies 1 2 4 8 --big-rows 1e7 --out bench/slices_results.md

Part 1, the peer: UCI Adult (bundled; 48,842 rows), copied ``--copies`` times, ten features (eight
categories, age and weekly hours in decades), errors of a transparent model ("more than 50K" predicted
for a bachelor's degree or more), ``alpha=0.95, k=10, max_level=2, min_support=32``. The same frame is
given to ``sliceline.Slicefinder(...).fit`` (pandas) and ``pf.slice_scan`` (Polars, ``bins=None``); both
results are compared slice by slice (scores to 1e-9) before any time is reported. Times: medians of
``--repeats`` runs after one warm-up (``sliceline``: one run above 100,000 rows); ratios of the same run.
With ``--level3`` the first size also runs at ``max_level=3``.

Part 2, scale: a seeded parquet file of ``--big-rows`` rows and twelve features (eight integer codes with
3 to 20 values, two text columns with 4 and 15 values, two Float columns cut into deciles) and 0/1
errors with planted slices, written to ``bench/data/`` (git-ignored) once; ``pf.slice_scan(path,
max_level=3)`` runs in a fresh process whose peak resident memory (``ru_maxrss``) is reported with its
time, its scans of the file and its candidates per level, next to a bare Polars
``scan_parquet(path).group_by("c0").agg(pl.len())`` of the same file in another fresh process.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

ROOT = Path(__file__).resolve().parents[1]
CATS = ["workclass", "education", "marital_status", "occupation", "relationship", "race", "sex", "native_country"]
FEATURES = [*CATS, "age10", "hours10"]
BIG_FEATURES = [*(f"c{j}" for j in range(8)), "s0", "s1", "x0", "x1"]


def adult() -> pl.DataFrame:
    import polfair as pf

    a = pf.load_adult()
    return a.select(
        *[pl.col(c).cast(pl.String).fill_null("?") for c in CATS],
        (pl.col("age") // 10 * 10).alias("age10"),
        (pl.col("hours_per_week") // 10 * 10).alias("hours10"),
        ((pl.col("education_num") >= 13).cast(pl.Int8) != pl.col("income_gt_50k")).cast(pl.Float64).alias("err"),
    )


def run_sliceline(df: pl.DataFrame, max_level: int) -> list[tuple[Any, ...]]:
    from sliceline.slicefinder import Slicefinder

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sf = Slicefinder(alpha=0.95, k=10, max_l=max_level, min_sup=32, verbose=False)
        sf.fit(df.select(FEATURES).to_pandas(), df["err"].to_numpy())
    return [(tuple(s), st["slice_score"], st["slice_size"]) for s, st in zip(sf.top_slices_.tolist(), sf.top_slices_statistics_)]


def run_polfair(df: pl.DataFrame, max_level: int) -> list[tuple[Any, ...]]:
    import polfair as pf

    out = pf.slice_scan(df, features=FEATURES, errors="err", alpha=0.95, k=10, max_level=max_level, min_support=32,
                        bins=None)  # fmt: skip
    return [(tuple(r[f] for f in FEATURES), r["score"], r["n"]) for r in out.iter_rows(named=True)]


def timed(f: Any, repeats: int) -> tuple[float, Any]:
    out = f()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def peer(copies: list[int], repeats: int, level3: bool) -> list[str]:
    base = adult()
    rows = ["| rows | max_level | sliceline | polfair | ratio | same top k |", "|---:|---:|---:|---:|---:|---|"]
    cases = [(c, 2) for c in copies] + ([(copies[0], 3)] if level3 else [])
    for c, level in cases:
        df = pl.concat([base] * c)
        if df.height > 100_000 or level > 2:  # one run of the peer (seconds to minutes)
            t0 = time.perf_counter()
            want = run_sliceline(df, level)
            t_peer = time.perf_counter() - t0
        else:
            t_peer, want = timed(lambda df=df, level=level: run_sliceline(df, level), repeats)
        t_ours, got = timed(lambda df=df, level=level: run_polfair(df, level), repeats)
        same = [g[0] for g in got] == [w[0] for w in want] and all(
            abs(g[1] - w[1]) <= 1e-9 and g[2] == w[2] for g, w in zip(got, want)
        )
        assert same, f"slice_scan differs from sliceline at {df.height} rows"
        rows.append(f"| {df.height:,} | {level} | {t_peer:.2f} s | {t_ours:.3f} s | **{t_peer / t_ours:.0f}×** | yes ({len(got)} slices) |")
        print(rows[-1], flush=True)
    return rows


def make_big(path: Path, n: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    cols: dict[str, Any] = {}
    for j, d in enumerate([3, 5, 8, 12, 4, 6, 10, 20]):
        cols[f"c{j}"] = rng.integers(0, d, n).astype(np.int32)
    cols["s0"] = np.array(["north", "south", "east", "west"])[rng.integers(0, 4, n)]
    cols["s1"] = np.array([f"k{i}" for i in range(15)])[rng.integers(0, 15, n)]
    cols["x0"] = rng.normal(40, 12, n)
    cols["x1"] = rng.exponential(3, n)
    logit = -1.5 + 0.8 * (cols["c0"] == 1) + 0.9 * (cols["c2"] == 3) * (cols["s0"] == "east") + 0.02 * (cols["x0"] - 40)
    cols["err"] = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(np.int8)
    path.parent.mkdir(parents=True, exist_ok=True)
    pl.DataFrame(cols).write_parquet(path, row_group_size=500_000)


_CHILD = """
import json, resource, sys, time
t = time.perf_counter()
import polars as pl
if sys.argv[1] == "floor":
    pl.scan_parquet(sys.argv[2]).group_by("c0").agg(pl.len()).collect(engine="streaming")
    info = {}
else:
    import polfair as pf
    from polfair.core.report.run_metadata import request_of
    out = pf.slice_scan(sys.argv[2], features=json.loads(sys.argv[3]), errors="err", max_level=3, k=10)
    req = request_of(out)
    info = {"scans": req["scans"], "candidates": req["candidates"], "top": out["slice"][0] if out.height else None}
info["seconds"] = time.perf_counter() - t
# VmHWM: this process's own peak (ru_maxrss would keep the peak of the parent it was forked from)
try:
    hwm = [ln for ln in open("/proc/self/status") if ln.startswith("VmHWM:")][0]
    info["peak_mib"] = int(hwm.split()[1]) / 1024
except OSError:
    info["peak_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(info))
"""


def child(*args: str) -> dict[str, Any]:
    res = subprocess.run([sys.executable, "-c", _CHILD, *args], capture_output=True, text=True, check=True, cwd=ROOT,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})  # fmt: skip
    return json.loads(res.stdout.strip().splitlines()[-1])


def big(n: int) -> list[str]:
    path = ROOT / "bench" / "data" / f"slices_{n}.parquet"
    if not path.exists():
        make_big(path, n)
    floor = child("floor", str(path))
    ours = child("polfair", str(path), json.dumps(BIG_FEATURES))
    return [
        "| case | time | peak RSS | scans of the file | candidates per level |", "|---|---:|---:|---:|---|",
        f"| floor: `scan_parquet(path).group_by('c0').agg(pl.len())` | {floor['seconds']:.1f} s | "
        f"{floor['peak_mib']:.0f} MiB | 1 | |",
        f"| `pf.slice_scan(path, 12 features, max_level=3)` | {ours['seconds']:.1f} s | **{ours['peak_mib']:.0f} MiB** | "
        f"{ours['scans']} | {', '.join(f'{c:,}' for c in ours['candidates'])} |",
        "", f"Top slice: `{ours['top']}` (planted: c2 = 3 & s0 = east, c0 = 1).",
    ]  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--copies", type=int, nargs="+", default=[1, 2, 4, 8])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--level3", action="store_true", help="also max_level=3 at the first size (sliceline: minutes)")
    ap.add_argument("--big-rows", type=float, default=1e7)
    ap.add_argument("--no-big", action="store_true")
    ap.add_argument("--no-peer", action="store_true")
    ap.add_argument("--out", default=None, help="also write the Markdown to this file")
    args = ap.parse_args()
    from importlib.metadata import version

    head = (f"`python bench/slices.py {' '.join(sys.argv[1:])}`, {platform.machine()}, Python "
            f"{platform.python_version()}, polars {pl.__version__}, sliceline {version('sliceline')} (its NumPy path: "
            "numba is not installed), load average at the start "
            f"{' / '.join(f'{x:.1f}' for x in __import__('os').getloadavg())}.")  # fmt: skip
    lines = [head, "", "Side by side with `sliceline` (UCI Adult copies, ten features, alpha 0.95, k 10, min_support 32):", ""]
    if not args.no_peer:
        lines += peer(args.copies, args.repeats, args.level3)
    if not args.no_big:
        lines += ["", f"{int(args.big_rows):,} rows from parquet, twelve features, max_level 3, each case in a fresh process:", ""]
        lines += big(int(args.big_rows))
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
