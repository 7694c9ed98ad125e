"""Benchmark: the counting pass with weights, Float64 sums (default) and ``exact_sums=True``, as ratios to a bare group-by.

Usage::

    python bench/pass_sums.py [--rows 1e7] [--repeats 7] [--formulations] [--only NAME ...] [--big50k] [--rss-repeats 3]

The pass (``polfair.core.passes.counts.code_counts``) groups the rows by (keys, outcome code) and adds
``n`` and, with weights, Σw and Σw² (and Σw·s, Σw·(1−s) with scores). By default these are Float64
sums (issue 21: reproducible to about 1e-13 relative); ``exact_sums=True`` turns each value into an
integer on a fixed grid (2**-56; w² on 2**-80 in two parts) and adds them in 128 bits, so the
result is the same bit for bit in any row order, chunking and engine. Data: seeded in-memory rows,
three Categorical keys (2, 5, 6 levels), labels, scores, predictions ``score >= 0.5``, gamma
weights; the streaming engine, as the report runs the pass.

* ``floor``: ``df.lazy().group_by(keys).agg(pl.len())`` on the same frame;
* the shipped passes (``code_counts`` of ``build_spec``): unweighted; weighted; weighted with
  scores; each with Float64 sums (the default) and with ``exact_sums=True``;
* ``--formulations``: other formulations of the exact Σw and Σw·s measured for the record (the
  pass's grouping, Σw² as Float64 in all of them): Int128 with ``round`` and a checked cast (issue
  15's first version), Int128 truncating, UInt128 truncating (what ``exact_sums`` ships), two
  Int64 parts.

Times are medians of ``--repeats`` interleaved runs after one warm-up; the ratio is to the floor's
median of the same run. ``--big50k`` adds the peak RSS (``ru_maxrss``), wall and CPU time
(user + system, interpreter start included: steadier than wall time on a shared machine) of fresh
processes (``--rss-repeats`` each: RSS varies from run to run with thread scheduling) reading the
2e7-row, 50k-level String attribute × sex parquet file of ``bench/shapes.py`` (generated as there
if missing) with the streaming engine: the bare group-by, the pass alone as a user collects it
(``pf.confusion_counts(path, ...).collect(engine="streaming")``) with Float64 and exact sums, the
pass as the report runs it (``collect_cells``, which raises Polars' hot-table cap,
``collect._room_for_groups``) and the full ``fairness_report``, each with and without that cap.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from polfair.core.passes import counts  # noqa: E402
from polfair.core.passes.spec import EXACT_SCALE, WS, W, build_spec  # noqa: E402

KEYS = ["sex", "race", "age_group"]
_W2 = "__pf_w2"


def frame(n: int, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    cols = {
        name: pl.Series(name, [f"{name}{j}" for j in range(k)]).cast(pl.Categorical).gather(rng.integers(0, k, n))
        for name, k in {"sex": 2, "race": 5, "age_group": 6}.items()
    }
    score = rng.random(n)
    return pl.DataFrame(cols).with_columns(
        y_true=pl.Series(rng.integers(0, 2, n).astype(np.int8)),
        score=pl.Series(score),
        y_pred=pl.Series((score >= 0.5).astype(np.int8)),
        weight=pl.Series(rng.gamma(2.0, 0.5, n)),
    )


Sums = Callable[[str], list[pl.Expr]]


def _round_i128(c: str) -> list[pl.Expr]:
    return [(pl.col(c) * EXACT_SCALE).round().cast(pl.Int128, strict=False).sum().alias(c)]


def _trunc_i128(c: str) -> list[pl.Expr]:
    return [(pl.col(c) * EXACT_SCALE).cast(pl.Int128, wrap_numerical=True).sum().alias(c)]


def _two_parts(c: str) -> list[pl.Expr]:
    a = pl.col(c) * 2.0**24  # < 2**64 for x < 2**40
    hi = a.floor()
    lo = ((a - hi) * 2.0**32).cast(pl.Int64, wrap_numerical=True)  # < 2**32: an Int64 sum of < 2**31 rows fits
    return [
        hi.cast(pl.UInt64, wrap_numerical=True).cast(pl.Int128).sum().alias(c),
        lo.sum().alias(f"{c}_lo"),
    ]


VARIANTS: dict[str, tuple[Sums, bool]] = {  # name -> (sums of one column, with a Float64 Σw²)
    "Float64 sums": (lambda c: [pl.col(c).sum().alias(c)], True),
    "Int128, round (issue 15's first version)": (_round_i128, True),
    "Int128, truncate": (_trunc_i128, True),
    "UInt128, truncate (exact_sums)": (lambda c: [counts._exact_sum(c)], True),
    "two Int64 parts": (_two_parts, True),
}


def pass_plan(spec, sums: Sums, w2: bool) -> pl.LazyFrame:
    aggs = [pl.len().cast(pl.UInt64).alias("__pf_n"), *sums(W), *sums(WS)]
    if w2:
        aggs.append((pl.col(W) * pl.col(W)).sum().alias(_W2))
    return counts.grouped_by_code(spec, aggs)


#: The shipped passes: name -> build_spec keywords beyond labels, predictions and keys.
SHIPPED = {
    "unweighted pass": {},
    "weighted pass, Float64 sums (default)": {"weight": "weight"},
    "weighted + scores, Float64 sums (default)": {"weight": "weight", "y_score": "score"},
    "weighted pass, exact_sums=True": {"weight": "weight", "exact_sums": True},
    "weighted + scores, exact_sums=True": {"weight": "weight", "y_score": "score", "exact_sums": True},
}


def timings(n: int, repeats: int, only: list[str] | None, formulations: bool) -> list[dict]:
    df = frame(n)
    kw = dict(y_true="y_true", y_pred="y_pred", protected=KEYS)
    fns: dict[str, Callable[[], object]] = {
        "floor": lambda: df.lazy().group_by(KEYS).agg(pl.len()).collect(engine="streaming"),
    }
    for name, extra in SHIPPED.items():
        if only and name != "unweighted pass" and not any(o.lower() in name.lower() for o in only):
            continue
        spec = build_spec(df, **kw, **extra)  # type: ignore[arg-type]
        fns[name] = lambda spec=spec: counts.code_counts(spec).collect(engine="streaming")
    if formulations:
        spec = build_spec(df, **kw, y_score="score", weight="weight", exact_sums=True)
        for name, (sums, w2) in VARIANTS.items():
            if only and not any(o.lower() in name.lower() for o in only):
                continue
            plan = pass_plan(spec, sums, w2)
            fns[f"formulation: {name}"] = lambda plan=plan: plan.collect(engine="streaming")
    for f in fns.values():
        f()  # warm-up
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(repeats):
        for name, f in fns.items():
            t0 = time.perf_counter()
            f()
            times[name].append(time.perf_counter() - t0)
    floor = statistics.median(times["floor"])
    return [
        {"variant": k, "median_s": statistics.median(v), "min_s": min(v), "ratio": statistics.median(v) / floor}
        for k, v in times.items()
    ]


_RSS_CHILD = """
import contextlib, json, resource, sys, time, warnings
sys.path.insert(0, sys.argv[3])
import polars as pl
import polfair as pf
from polfair.core.passes import collect
warnings.simplefilter("ignore")
path, variant = sys.argv[1], sys.argv[2]
kw = dict(y_true="y_true", y_pred="y_pred", y_score="score", weight="weight", protected=["person_group", "sex"])
if variant.startswith("exact"):
    kw["exact_sums"] = True
if variant.endswith("default cap"):
    collect._room_for_groups = lambda engine: contextlib.nullcontext()
t0 = time.perf_counter()
if variant == "floor":
    pl.scan_parquet(path).group_by(["person_group", "sex"]).agg(pl.len()).collect(engine="streaming")
elif variant.startswith("report"):
    pf.fairness_report(path, **kw, engine="streaming")
elif variant.startswith("cells"):
    from polfair.core.passes.spec import build_spec
    collect.collect_cells(build_spec(path, **kw), engine="streaming", on_missing="ignore")
else:
    pf.confusion_counts(path, **kw).collect(engine="streaming")
ru = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"s": time.perf_counter() - t0, "cpu_s": ru.ru_utime + ru.ru_stime, "rss_mib": ru.ru_maxrss / 1024}))
"""

RSS_VARIANTS = {
    "floor": "floor: bare streaming group_by(person_group, sex).agg(len())",
    "now": "pass alone (confusion_counts(...).collect()), Float64 sums (default)",
    "exact": "pass alone (confusion_counts(..., exact_sums=True).collect()), UInt128 sums",
    "cells, default cap": "the pass as the report runs it (collect_cells), Polars' default hot-table cap",
    "cells": "the pass as the report runs it (collect_cells), hot-table cap raised (now)",
    "report, default cap": "full report, Polars' default hot-table cap",
    "report": "full report (now)",
}


def big50k(rss_repeats: int) -> list[dict]:
    path = HERE / "data" / "shapes_big50k.parquet"
    if not path.exists():
        sys.path.insert(0, str(HERE))
        from shapes import _MAKE_BIG  # the same file as bench/shapes.py --shapes big50k

        path.parent.mkdir(exist_ok=True)
        subprocess.run([sys.executable, "-c", _MAKE_BIG, str(path)], check=True)
    out = []
    for variant, label in RSS_VARIANTS.items():
        runs = []
        for _ in range(rss_repeats):
            argv = [sys.executable, "-c", _RSS_CHILD, str(path), variant, str(HERE.parent)]
            proc = subprocess.run(argv, capture_output=True, text=True, check=True)
            runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        rss = [r["rss_mib"] for r in runs]
        out.append({"variant": variant, "label": label, "rss_median_mib": statistics.median(rss),
                    "rss_max_mib": max(rss), "rss_min_mib": min(rss),
                    "time_median_s": statistics.median(r["s"] for r in runs),
                    "cpu_median_s": statistics.median(r["cpu_s"] for r in runs)})  # fmt: skip
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=float, default=1e7)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--only", nargs="*", default=None, help="variants whose name contains one of these")
    ap.add_argument("--formulations", action="store_true", help="also other formulations of the exact sums")
    ap.add_argument("--big50k", action="store_true", help="also the peak RSS of the 50k-level streaming pass")
    ap.add_argument("--rss-repeats", type=int, default=3)
    ap.add_argument("--no-timings", action="store_true", help="only the --big50k memory table")
    args = ap.parse_args(argv)
    n = int(args.rows)
    rows = [] if args.no_timings else timings(n, args.repeats, args.only, args.formulations)
    if rows:
        _print_timings(rows, args, n)
    if args.big50k:
        print(f"\n2e7 rows, 50k-level String attribute × sex, parquet, streaming; peak RSS of a fresh process, "
              f"{args.rss_repeats} runs each.\n")  # fmt: skip
        print("| run | peak RSS median | min – max | time median | CPU time median |")
        print("|---|---:|---:|---:|---:|")
        for r in big50k(args.rss_repeats):
            print(
                f"| {r['label']} | {r['rss_median_mib']:.0f} MiB | {r['rss_min_mib']:.0f} – {r['rss_max_mib']:.0f} MiB "
                f"| {r['time_median_s']:.2f} s | {r['cpu_median_s']:.2f} s |"
            )
    return 0


def _print_timings(rows: list[dict], args: argparse.Namespace, n: int) -> None:
    print(
        f"\n`python bench/pass_sums.py --rows {args.rows:g} --repeats {args.repeats}`: {platform.machine()}, "
        f"{os.cpu_count()} cores, Polars {pl.__version__}; {n:,} in-memory rows, three Categorical keys, streaming "
        f"engine; medians of {args.repeats} interleaved runs.\n"
    )
    print("| pass variant | median | min | / floor |")
    print("|---|---:|---:|---:|")
    for r in rows:
        print(f"| {r['variant']} | {r['median_s'] * 1e3:.1f} ms | {r['min_s'] * 1e3:.1f} ms | {r['ratio']:.2f}× |")


if __name__ == "__main__":
    raise SystemExit(main())
