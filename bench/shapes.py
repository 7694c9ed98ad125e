"""Benchmark: the long report at real monitoring shapes (issue 12), as ratios to a bare group-by.

Usage::

    python bench/shapes.py [--repeats 5] [--shapes compas levels day attrs8 zip10k big50k mem1e7] [--out bench/results.md]

Each shape runs in a fresh interpreter (so its peak RSS, ``getrusage(RUSAGE_SELF).ru_maxrss``, is
its own). Data are seeded synthetic rows (labels, scores, predictions ``score >= 0.5``, weights):

* ``day``: 2e6 rows, ``by=day`` (365 dates), 3 attributes with 2, 5, 6 levels (Categorical);
* ``attrs8``: 1e6 rows, 8 attributes (2, 5, 6, 2, 3, 4, 3, 2 levels), every attribute set
  (``intersections="all"``: 255 sets) and, separately, the default attribute sets;
* ``zip10k``: 2e6 rows, a 10k-level zip code (String) + sex + race (the default report: the zip's
  attribute rows over every zip and the group rows of its worst 20, since issue 41's
  ``max_groups_per_attribute``), and with ``intersections="all"``;
* ``big50k``: 2e7 rows, a 50k-level attribute (String) × sex, read from a parquet file (written
  once under ``bench/data/``, not committed) by the streaming engine: peak RSS of the pass alone
  (``confusion_counts``) and of the full report (with ``--ci-none`` also without intervals), each in
  its own process;
* ``two_metrics``: 2e6 rows, 3 attributes, ``metrics=["selection_rate", "false_positive_rate"]``
  (weighted with scores, and unweighted without scores), and every metric;
* ``mem1e7``: 1e7 rows in memory, 3 attributes (the README benchmark's in-memory case); also timed:
  polfair's pass alone (``confusion_counts(...).collect()``) and the bare Polars sums any weighted,
  scored report needs (``group_by(keys).agg(len, Σw, Σw², Σw·score)``), both as ratios to the floor;
* ``compas``: the bundled COMPAS data (6,172 rows), race and sex, the demo's prediction and
  privileged groups, unweighted: the fixed cost of a small report;
* ``levels``: one String attribute with 20,000 and with 160,000 levels (1.5 rows per level,
  unweighted: Fisher tests and sparse homogeneity tables), ``allow_many_groups=True``, every
  group's rows (``max_groups_per_attribute=None``); the ratio of the two reports' times says whether
  the cost is linear in the levels; and the 160k-level default report (the worst 20 groups' rows);
* ``cli50k``: the ``big50k`` parquet file through ``python -m polfair report ... --out
  report.parquet`` (default options): peak RSS of the CLI process.

``floor`` is ``df.lazy().group_by(keys).agg(pl.len()).collect()`` on the same frame (keys = by +
protected); the *bare sums* are what the report must add up, in bare Polars: ``group_by(keys + label +
prediction).agg(len, Σw, Σw², Σw·score)`` (the columns the call has); every shape prints its ratio to
both; ``polfair`` is ``pf.fairness_report`` with weights and scores and default options. The
two are timed interleaved, ``--repeats`` times each after one untimed warm-up call; the ratio is
of the medians, from the same run; each ratio is also given in CPU time (``time.process_time``, every
thread), which moves less than the wall time when other work shares the machine. Every shape is
also timed with ``ci=None`` (where the keyword exists; ``--no-ci-none`` skips it), and the table
gives default / ``ci=None`` from the same run.
With ``--out``, the markdown table replaces the section between the ``<!-- shapes:begin -->`` and
``<!-- shapes:end -->`` markers of that file (appended if absent).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import textwrap
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"

_PRELUDE = """
import inspect, json, resource, statistics, sys, time, warnings
import numpy as np
import polars as pl
import polfair as pf
warnings.simplefilter("ignore")
repeats, ci_none = int(sys.argv[1]), sys.argv[2] == "1"

def emit(d):
    d["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(d), flush=True)

def frame(n, levels, seed=0, by_days=0, string_keys=()):
    rng = np.random.default_rng(seed)
    cols, logit = {}, np.full(n, -0.3)
    for i, (name, k) in enumerate(levels.items()):
        code = rng.integers(0, k, n)
        logit += 0.3 * np.cos(code * (i + 1))
        if name in string_keys:
            cols[name] = pl.Series(name, code).cast(pl.String).str.zfill(5)
        else:
            cols[name] = pl.Series(name, [f"{name}{j}" for j in range(k)]).cast(pl.Categorical).gather(code)
    if by_days:
        cols["day"] = pl.Series("day", rng.integers(19_723, 19_723 + by_days, n)).cast(pl.Int32).cast(pl.Date)
    p = 1 / (1 + np.exp(-logit))
    y = (rng.random(n) < p).astype(np.int8)
    score = np.clip(p + rng.normal(0, 0.25, n) + 0.2 * (y - 0.5), 0, 1)
    df = pl.DataFrame(cols).with_columns(
        y_true=pl.Series(y), score=pl.Series(score), y_pred=pl.Series((score >= 0.5).astype(np.int8)),
        weight=pl.Series(rng.gamma(2.0, 0.5, n)))
    return df

def interleaved(fns, k):
    for f in fns.values():
        f()  # warm-up
    times = {name: [] for name in fns}
    cpu = {name: [] for name in fns}  # CPU seconds of every thread (time.process_time): steadier under load
    out = {}
    for _ in range(k):
        for name, f in fns.items():
            c0, t0 = time.process_time(), time.perf_counter(); out[name] = f()
            times[name].append(time.perf_counter() - t0); cpu[name].append(time.process_time() - c0)
    CPU.clear(); CPU.update({name: statistics.median(ts) for name, ts in cpu.items()})
    return {name: statistics.median(ts) for name, ts in times.items()}, out

CPU = {}  # the CPU-time medians of the last interleaved() call

HAS_CI = "ci" in inspect.signature(pf.fairness_report).parameters

def bare_sums(df, kw, keys):
    # what the report must sum, in bare Polars: len, Σw, Σw², Σw·score by the keys, label and prediction
    w = pl.col(kw["weight"]) if kw.get("weight") else None
    s = pl.col(kw["y_score"]) if kw.get("y_score") else None
    aggs = [pl.len()]
    if w is not None:
        aggs += [w.sum().alias("w"), (w * w).sum().alias("w2")]
    if s is not None:
        aggs.append((s if w is None else w * s).sum().alias("ws"))
    outcome = [pl.col(c) for c in (kw.get("y_true"), kw.get("y_pred")) if isinstance(c, str)]
    return lambda: df.lazy().group_by([*keys, *outcome]).agg(aggs).collect()

def run_pair(df, kw, keys, label, k=None, sums=False):
    fns = {"floor": lambda: df.lazy().group_by(keys).agg(pl.len()).collect(),
           "polfair": lambda: pf.fairness_report(df, **kw)}
    if ci_none and HAS_CI:
        fns["polfair_ci_none"] = lambda: pf.fairness_report(df, **kw, ci=None)
    fns["floor_sums"] = bare_sums(df, kw, keys)
    if sums:  # polfair's pass alone
        pass_kw = {key: kw[key] for key in ("y_true", "y_pred", "y_score", "weight", "protected", "by")}
        fns["pass"] = lambda: pf.confusion_counts(df, **pass_kw).collect()
    med, out = interleaved(fns, k or repeats)
    rep = out["polfair"]
    d = {"label": label, "rows": df.height, "report_rows": rep.height, "floor": med["floor"],
         "polfair": med["polfair"], "ratio": med["polfair"] / med["floor"],
         "report_mib": rep.estimated_size() / 2**20, "ci": HAS_CI}
    if "polfair_ci_none" in med:
        d["polfair_ci_none"] = med["polfair_ci_none"]
        d["ratio_ci_none"] = med["polfair_ci_none"] / med["floor"]
    d["ratio_floor_sums"] = med["floor_sums"] / med["floor"]
    d["cpu"] = dict(CPU)
    d["ratio_cpu"] = CPU["polfair"] / CPU["floor"]
    if "polfair_ci_none" in CPU:
        d["ci_none_cpu"] = CPU["polfair"] / CPU["polfair_ci_none"]
    d["ratio_to_sums"] = med["polfair"] / med["floor_sums"]
    if sums:
        d["ratio_pass"] = med["pass"] / med["floor"]
    return d

def run_shape(df, protected, by=(), extra=None, label="", sums=False):
    kw = dict(y_true="y_true", y_pred="y_pred", y_score="score", weight="weight", protected=protected,
              by=list(by) or None, **(extra or {}))
    return run_pair(df, kw, [*by, *protected], label, sums=sums)
"""

SHAPES = {
    "day": """
df = frame(2_000_000, {"sex": 2, "race": 5, "age_group": 6}, by_days=365)
emit(run_shape(df, ["sex", "race", "age_group"], by=["day"], label="2e6 rows, by=day (365), 3 attributes (2, 5, 6 levels)"))
""",
    "attrs8": """
lv = {"a1": 2, "a2": 5, "a3": 6, "a4": 2, "a5": 3, "a6": 4, "a7": 3, "a8": 2}
df = frame(1_000_000, lv)
from polfair.core.report.build import attribute_sets
every = "all" if len(attribute_sets(list(lv), None)) < 255 else None  # before issue 12, None meant every subset
emit(run_shape(df, list(lv), extra={"intersections": every}, label="1e6 rows, 8 attributes, every subset (255 sets)"))
emit(run_shape(df, list(lv), label="1e6 rows, 8 attributes, default attribute sets"))
""",
    "zip10k": """
df = frame(2_000_000, {"zip": 10_000, "sex": 2, "race": 5}, string_keys=("zip",))
emit(run_shape(df, ["zip", "sex", "race"], label="2e6 rows, zip (10k levels, String) + sex + race"))
if "max_intersection_groups" in inspect.signature(pf.fairness_report).parameters:
    every = {"max_groups_per_attribute": None} if "worst_k" in inspect.signature(pf.fairness_report).parameters else {}
    emit(run_shape(df, ["zip", "sex", "race"], extra={"intersections": "all", **every},
                   label="2e6 rows, zip (10k levels, String) + sex + race, intersections='all' (every intersection"
                         + (", every group's rows)" if every else ")")))
""",
    "two_metrics": """
df = frame(2_000_000, {"sex": 2, "race": 5, "age_group": 6})
sel = ["selection_rate", "false_positive_rate"]
if "max_intersection_groups" in inspect.signature(pf.fairness_report).parameters:
    emit(run_shape(df, ["sex", "race", "age_group"], extra={"metrics": sel},
                   label="2e6 rows, 3 attributes, metrics=[selection_rate, false_positive_rate]"))
    kw = dict(y_true="y_true", y_pred="y_pred", protected=["sex", "race", "age_group"], metrics=sel)
    emit(run_pair(df, kw, ["sex", "race", "age_group"],
                  "2e6 rows, 3 attributes, metrics=[selection_rate, false_positive_rate], unweighted, no scores"))
emit(run_shape(df, ["sex", "race", "age_group"], label="2e6 rows, 3 attributes, every metric"))
""",
    "mem1e7": """
df = frame(10_000_000, {"sex": 2, "race": 5, "age_group": 6})
emit(run_shape(df, ["sex", "race", "age_group"], label="1e7 rows in memory, 3 attributes (2, 5, 6 levels)", sums=True))
""",
    "compas": """
df = pf.load_compas()
kw = dict(y_true="two_year_recid", y_pred=pl.col("decile_score") >= 5, protected=["race", "sex"],
          privileged={"race": "Caucasian", "sex": "Male"})
emit(run_pair(df, kw, ["race", "sex"], "COMPAS, 6,172 rows, race + sex (the demo's prediction), unweighted", k=max(repeats, 15)))
""",
    "levels": """
out = []
worst = "max_groups_per_attribute" in inspect.signature(pf.fairness_report).parameters
every = {"max_groups_per_attribute": None} if worst else {}  # every group's rows (the default shows the worst 20)
for levels in (20_000, 160_000):
    df = frame(int(1.5 * levels), {"lvl": levels}, seed=7, string_keys=("lvl",))
    kw = dict(y_true="y_true", y_pred="y_pred", y_score="score", protected=["lvl"], allow_many_groups=True, **every)
    out.append(run_pair(df, kw, ["lvl"], f"{levels:,} levels, {df.height:,} rows, one String attribute, unweighted"
                        + (", every group's rows" if worst else ""), k=min(repeats, 3)))
out[1]["per_20k"] = out[1]["polfair"] / out[0]["polfair"]
if worst:  # the default: the attribute row over every group, the worst 20 groups' rows (intervals of every group)
    del kw["max_groups_per_attribute"]
    out.append(run_pair(df, kw, ["lvl"], f"{levels:,} levels, {df.height:,} rows, one String attribute, unweighted, "
                        "default (the worst 20 groups' rows)", k=min(repeats, 3)))
for d in out:
    emit(d)
""",
    "cli50k": """
import os, subprocess, tempfile
path = sys.argv[3]
with tempfile.TemporaryDirectory() as tmp:
    target = os.path.join(tmp, "report.parquet")
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "polfair", "report", path, "--y-true", "y_true", "--y-pred", "y_pred",
                           "--y-score", "score", "--weight", "weight", "--protected", "person_group", "sex",
                           "--out", target], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode:
        raise SystemExit(proc.stderr[-2000:])
    rows = pl.scan_parquet(target).select(pl.len()).collect().item()
child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(json.dumps({"label": "2e7 rows, 50k-level attribute x sex: CLI report --out report.parquet (peak RSS of the CLI)",
                  "time": wall, "report_rows": rows, "peak_rss_mib": child}), flush=True)
""",
    "big50k_pass": """
path = sys.argv[3]
t0 = time.perf_counter()
cells = pf.confusion_counts(path, y_true="y_true", y_pred="y_pred", y_score="score", weight="weight",
                            protected=["person_group", "sex"]).collect(engine="streaming")
emit({"label": "2e7 rows, 50k-level attribute x sex, parquet: the pass alone (hot-table cap as in the report)",
      "time": time.perf_counter() - t0, "cells": cells.height})
""",
    "big50k_report": """
path = sys.argv[3]
t0 = time.perf_counter()
rep = pf.fairness_report(path, y_true="y_true", y_pred="y_pred", y_score="score", weight="weight",
                         protected=["person_group", "sex"], engine="streaming")
emit({"label": "2e7 rows, 50k-level attribute x sex, parquet: full report", "time": time.perf_counter() - t0,
      "report_rows": rep.height, "report_mib": rep.estimated_size() / 2**20})
""",
    "big50k_report_ci_none": """
path = sys.argv[3]
t0 = time.perf_counter()
rep = pf.fairness_report(path, y_true="y_true", y_pred="y_pred", y_score="score", weight="weight",
                         protected=["person_group", "sex"], engine="streaming", ci=None)
emit({"label": "2e7 rows, 50k-level attribute x sex, parquet: full report, ci=None", "time": time.perf_counter() - t0,
      "report_rows": rep.height, "report_mib": rep.estimated_size() / 2**20})
""",
    "big50k_floor": """
path = sys.argv[3]
t0 = time.perf_counter()
out = pl.scan_parquet(path).group_by(["person_group", "sex"]).agg(pl.len()).collect(engine="streaming")
emit({"label": "2e7 rows, 50k-level attribute x sex, parquet: floor group-by", "time": time.perf_counter() - t0})
""",
}

_MAKE_BIG = """
import numpy as np, pyarrow as pa, pyarrow.parquet as pq, sys
path, n, chunk = sys.argv[1], 20_000_000, 2_000_000
rng = np.random.default_rng(1)
writer = None
for start in range(0, n, chunk):
    g = rng.integers(0, 50_000, chunk); s = rng.integers(0, 2, chunk)
    p = 1 / (1 + np.exp(-(-0.3 + 0.4 * s + 0.3 * np.cos(g))))
    y = (rng.random(chunk) < p).astype(np.int8)
    score = np.clip(p + rng.normal(0, 0.25, chunk) + 0.2 * (y - 0.5), 0, 1)
    t = pa.table({"person_group": pa.array([f"g{i:05d}" for i in g]), "sex": pa.array(np.where(s == 1, "M", "F")),
                  "y_true": y, "y_pred": (score >= 0.5).astype(np.int8), "score": score,
                  "weight": rng.gamma(2.0, 0.5, chunk)})
    writer = writer or pq.ParquetWriter(path, t.schema, compression="zstd")
    writer.write_table(t, row_group_size=1_000_000)
writer.close()
"""


def run(name: str, repeats: int, ci_none: bool, path: str = "-") -> list[dict]:
    code = textwrap.dedent(_PRELUDE) + textwrap.dedent(SHAPES[name])
    argv = [sys.executable, "-c", code, str(repeats), "1" if ci_none else "0", path]
    # the pass alone as fairness_report runs it: with its streaming hot-table cap (docs/scale.md)
    env = {**os.environ, "POLARS_MAX_HOT_TABLE_SIZE": "1048576"} if name == "big50k_pass" else None
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=HERE.parent, env=env)
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-3:] if proc.stderr.strip() else ["failed"]
        return [{"label": name, "error": " | ".join(tail)}]
    return [json.loads(line) for line in proc.stdout.strip().splitlines() if line.startswith("{")]


def table(results: list[dict], args: argparse.Namespace) -> str:
    lines = [
        "## Report at real shapes (issue 12)",
        "",
        f"`python bench/shapes.py --repeats {args.repeats}`, one run, {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}. polfair = `fairness_report` with weights and scores, default "
        "options; floor = `df.lazy().group_by(by + protected).agg(pl.len())` on the same frame; medians of "
        f"{args.repeats} interleaved repeats after a warm-up; peak RSS of the shape's own process (frame included).",
        "",
        "| shape | report rows | floor | polfair | ratio to floor (bare count) | ratio to the bare sums | default / ci=None | peak RSS |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        if "error" in r:
            lines.append(f"| {r['label']} | error: {r['error'][:120]} | | | | | | |")
            continue
        if "ratio" in r:
            extra = f" (ci=None: {r['ratio_ci_none']:.2f}×)" if "ratio_ci_none" in r else ""
            if "ratio_pass" in r:
                extra += (f"; the pass alone: {r['ratio_pass']:.2f}×; bare Polars sums of the same rows "
                          f"(len, Σw, Σw², Σw·score by the keys, label, prediction): {r['ratio_floor_sums']:.2f}×")
            to_sums = f"{r['ratio_to_sums']:.2f}×" if "ratio_to_sums" in r else ""
            vs = f"**{r['polfair'] / r['polfair_ci_none']:.2f}×**" if "polfair_ci_none" in r else ""
            if "ratio_cpu" in r:
                extra += f"; CPU time: {r['ratio_cpu']:.2f}×"
            if "ci_none_cpu" in r:
                vs += f" (CPU time: {r['ci_none_cpu']:.2f}×)"
            if "per_20k" in r:
                vs += f" (default time / 20k levels' default time: {r['per_20k']:.2f}×)"
            lines.append(
                f"| {r['label']} | {r['report_rows']:,} | {r['floor'] * 1e3:.1f} ms | {r['polfair'] * 1e3:.0f} ms "
                f"| **{r['ratio']:.2f}×**{extra} | {to_sums} | {vs} | {r['peak_rss_mib']:.0f} MiB |"
            )
        else:
            rows = f"{r['report_rows']:,}" if "report_rows" in r else (f"{r['cells']:,} cells" if "cells" in r else "")
            lines.append(f"| {r['label']} | {rows} | | {r['time'] * 1e3:.0f} ms | | | | **{r['peak_rss_mib']:.0f} MiB** |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--shapes", nargs="+",
                    default=["compas", "levels", "day", "attrs8", "zip10k", "two_metrics", "big50k", "mem1e7"])
    ap.add_argument("--ci-none", action=argparse.BooleanOptionalAction, default=True,
                    help="also time ci=None where the keyword exists (default: on)")
    ap.add_argument("--out", default=None, help="markdown file whose shapes section is replaced")
    args = ap.parse_args(argv)
    results: list[dict] = []
    for name in args.shapes:
        if name == "big50k":
            DATA.mkdir(exist_ok=True)
            path = DATA / "shapes_big50k.parquet"
            if not path.exists():
                t0 = time.perf_counter()
                subprocess.run([sys.executable, "-c", _MAKE_BIG, str(path)], check=True)
                print(f"generated {path} in {time.perf_counter() - t0:.0f}s", flush=True)
            parts = ["big50k_floor", "big50k_pass", "big50k_report", *(["big50k_report_ci_none"] if args.ci_none else []),
                     "cli50k"]
            for part in parts:
                res = run(part, args.repeats, args.ci_none, str(path))
                results += res
                print(json.dumps(res), flush=True)
        else:
            res = run(name, args.repeats, args.ci_none)
            results += res
            print(json.dumps(res), flush=True)
    md = table(results, args)
    print(md)
    if args.out:
        out = Path(args.out)
        text = out.read_text() if out.exists() else ""
        begin, end = "<!-- shapes:begin -->", "<!-- shapes:end -->"
        block = f"{begin}\n{md}{end}\n"
        if begin in text and end in text:
            text = text[: text.index(begin)] + block + text[text.index(end) + len(end) + 1 :]
        else:
            text = text.rstrip("\n") + "\n\n" + block
        out.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
