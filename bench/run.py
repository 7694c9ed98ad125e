"""Benchmark: polfair vs a bare Polars group-by (the floor), fairlearn MetricFrame and aif360.

Usage::

    python bench/run.py --rows 1e6 1e7 --out bench/results.md [--stream-rows 1e8] [--repeats 5]

The table replaces the section between ``<!-- run:begin -->`` and ``<!-- run:end -->`` of ``--out``
(prepended if absent); the other sections of that file belong to bench/coverage.py and bench/shapes.py.

Generates seeded synthetic data (3 protected attributes with 2, 5 and 6 levels; labels, predictions,
scores, weights) as parquet under ``bench/data/`` (not committed), then times, in ONE run on the
same data, each case in a fresh subprocess (so peak RSS is the case's own):

* ``floor``: ``df.lazy().group_by(protected).agg(pl.len())`` on the in-memory frame;
* ``polfair``: ``fairness_report`` (all metrics, all intersections, entropy, EDF; weights and
  scores) on the in-memory frame;
* ``floor_file`` / ``polfair_file``: the same two, streaming from the parquet file;
* ``fairlearn``: ``MetricFrame({selection_rate, tpr, fpr, accuracy, count})`` over the 3 attributes
  plus ``difference()`` / ``ratio()`` (pandas input);
* ``aif360``: building ``BinaryLabelDataset`` x2 + ``ClassificationMetric`` and computing 20 metrics
  (at most ``--peer-max-rows`` rows; larger sizes are extrapolated linearly and labelled so).

Times are medians of ``--repeats`` runs after one untimed warm-up call (peers: one timed run, no
warm-up); peak RSS is each case's
own process (``getrusage(RUSAGE_SELF)`` in the child). Ratios, not absolute seconds, are the result: they come from one
run on one machine. The peers' values are checked against polfair's (max abs difference printed).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
G = ["sex", "race", "age_group"]


def make_data(n: int, path: Path, seed: int = 0, chunk: int = 5_000_000) -> None:
    """Write ``n`` seeded synthetic rows to ``path`` in chunks (bounded memory)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    levels = {"sex": ["F", "M"], "race": ["A", "B", "C", "D", "E"], "age_group": [f"a{i}" for i in range(6)]}
    writer = None
    done = 0
    while done < n:
        m = min(chunk, n - done)
        codes = {k: rng.integers(0, len(v), m) for k, v in levels.items()}
        logit = -0.3 + 0.4 * codes["sex"] - 0.15 * codes["race"] + 0.1 * codes["age_group"]
        p_true = 1 / (1 + np.exp(-logit))
        y = (rng.random(m) < p_true).astype(np.int8)
        score = np.clip(p_true + rng.normal(0, 0.25, m) + 0.2 * (y - 0.5), 0, 1)
        cols = {
            k: pa.DictionaryArray.from_arrays(pa.array(c.astype(np.int32)), pa.array(levels[k]))
            for k, c in codes.items()
        }
        cols |= {
            "y_true": pa.array(y),
            "y_pred": pa.array((score >= 0.5).astype(np.int8)),
            "score": pa.array(score),
            "weight": pa.array(rng.gamma(2.0, 0.5, m)),
        }
        table = pa.table(cols)
        if writer is None:
            writer = pq.ParquetWriter(path, table.schema, compression="zstd")
        writer.write_table(table, row_group_size=1_000_000)
        done += m
    assert writer is not None
    writer.close()


# Each case is a small program run in a fresh interpreter; it prints a JSON line with its timings.
_PRELUDE = """
import json, resource, sys, time, statistics, warnings
import polars as pl
def emit(d):
    d["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(d))
warnings.simplefilter("ignore")
path, repeats, check = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "check"
G = ["sex", "race", "age_group"]
def timeit(f, k):
    ts = []
    out = f() if k > 1 else None  # one untimed warm-up call (imports, thread pool, caches)
    for _ in range(k):
        t0 = time.perf_counter(); out = f(); ts.append(time.perf_counter() - t0)
    return statistics.median(ts), ts, out
"""

CASES = {
    "floor": """
df = pl.read_parquet(path).with_columns(pl.col(G).cast(pl.Categorical))
med, ts, _ = timeit(lambda: df.lazy().group_by(G).agg(pl.len()).collect(), repeats)
emit({"median": med, "times": ts})
""",
    "polfair": """
import polfair as pf
df = pl.read_parquet(path).with_columns(pl.col(G).cast(pl.Categorical))
kw = dict(y_true="y_true", y_pred="y_pred", y_score="score", weight="weight", protected=G)
med, ts, rep = timeit(lambda: pf.fairness_report(df, **kw), repeats)
# untimed, only where aif360 runs too: the aif360-compatible class on the same data, for the
# value check against aif360 itself
aif = {}
if check:
  cm = pf.ClassificationMetric(df.with_columns(pl.col(G).cast(pl.String)), y_true="y_true", y_pred="y_pred",
                             y_score="score", weight="weight", protected=G,
                             unprivileged_groups=[{"sex": "F"}], privileged_groups=[{"sex": "M"}])
  aif = {k: float(getattr(cm, k)()) for k in AIF_NAMES}
sel = rep.filter(pl.col("attribute") == "sex & race & age_group", pl.col("group").is_not_null(),
                 pl.col("metric").is_in(["selection_rate", "true_positive_rate", "false_positive_rate", "accuracy"]))
emit({"median": med, "times": ts, "rows": rep.height, "aif360_values": aif,
                  "values": {f"{g}|{m}": v for g, m, v in sel.select("group", "metric", "value").iter_rows()}})
""",
    "floor_file": """
lf = pl.scan_parquet(path)
med, ts, _ = timeit(lambda: lf.group_by(G).agg(pl.len()).collect(engine="streaming"), repeats)
emit({"median": med, "times": ts})
""",
    "polfair_file": """
import polfair as pf
kw = dict(y_true="y_true", y_pred="y_pred", y_score="score", weight="weight", protected=G)
med, ts, rep = timeit(lambda: pf.fairness_report(path, engine="streaming", **kw), repeats)
emit({"median": med, "times": ts, "rows": rep.height})
""",
    "fairlearn": """
import numpy as np
from fairlearn.metrics import MetricFrame, selection_rate, true_positive_rate, false_positive_rate, count
from sklearn.metrics import accuracy_score
pdf = pl.read_parquet(path).with_columns(pl.col(G).cast(pl.String)).to_pandas()
def run():
    mf = MetricFrame(metrics={"selection_rate": selection_rate, "true_positive_rate": true_positive_rate,
                              "false_positive_rate": false_positive_rate, "accuracy": accuracy_score, "count": count},
                     y_true=pdf["y_true"], y_pred=pdf["y_pred"], sensitive_features=pdf[G],
                     sample_params={k: {"sample_weight": pdf["weight"]} for k in
                                    ["selection_rate", "true_positive_rate", "false_positive_rate", "accuracy"]})
    mf.difference(); mf.ratio()
    return mf
med, ts, mf = timeit(run, repeats)
vals = {}
for idx, row in mf.by_group.iterrows():
    for m in ["selection_rate", "true_positive_rate", "false_positive_rate", "accuracy"]:
        vals[" & ".join(map(str, idx)) + "|" + m] = None if row[m] != row[m] else float(row[m])
emit({"median": med, "times": ts, "values": vals})
""",
    "aif360": """
import numpy as np
from aif360.datasets import BinaryLabelDataset
from aif360.metrics import ClassificationMetric
# numeric codes for aif360: each attribute's sorted levels -> 1, 2, ... (sex: F=1, M=2)
pdf = pl.read_parquet(path).with_columns(pl.col(G).cast(pl.String).rank("dense").cast(pl.Float64)).to_pandas()
def run():
    truth = BinaryLabelDataset(df=pdf[G + ["y_true", "weight"]], label_names=["y_true"],
                               protected_attribute_names=G, instance_weights_name="weight")
    pred_df = pdf[G + ["y_pred", "weight", "score"]].rename(columns={"y_pred": "y_true"})
    pred = BinaryLabelDataset(df=pred_df, label_names=["y_true"], protected_attribute_names=G,
                              instance_weights_name="weight", scores_names=["score"])
    cm = ClassificationMetric(truth, pred, unprivileged_groups=[{"sex": 1}], privileged_groups=[{"sex": 2}])
    return {k: float(getattr(cm, k)()) for k in AIF_NAMES}
med, ts, vals = timeit(run, repeats)
emit({"median": med, "times": ts, "values": vals})
""",
}

_AIF_NAMES = """
AIF_NAMES = ["statistical_parity_difference", "disparate_impact", "equal_opportunity_difference",
             "average_odds_difference", "average_abs_odds_difference", "equalized_odds_difference",
             "error_rate_difference", "error_rate_ratio", "false_positive_rate_difference",
             "false_negative_rate_difference", "false_discovery_rate_difference", "false_omission_rate_difference",
             "true_positive_rate", "false_positive_rate", "accuracy", "selection_rate",
             "positive_predictive_value", "generalized_true_positive_rate", "theil_index",
             "smoothed_empirical_differential_fairness"]
"""


def run_case(name: str, path: Path, repeats: int, check: bool = False) -> dict:
    code = textwrap.dedent(_PRELUDE) + textwrap.dedent(_AIF_NAMES) + textwrap.dedent(CASES[name])
    t0 = time.perf_counter()
    argv = [sys.executable, "-c", code, str(path), str(repeats), "check" if check else "-"]
    proc = subprocess.run(argv, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "failed", "wall": wall}
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["wall"] = wall
    return out


def _fmt(x: float | None, unit: str = "s") -> str:
    if x is None:
        return "—"
    return f"{x:.3g} {unit}".strip()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", nargs="+", type=float, default=[1e6, 1e7])
    ap.add_argument("--stream-rows", nargs="*", type=float, default=[], help="file-only sizes (e.g. 1e8)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--peer-repeats", type=int, default=1)
    ap.add_argument("--peer-max-rows", type=float, default=1e6)
    ap.add_argument("--out", default=str(HERE / "results.md"))
    ap.add_argument("--plot", default=str(HERE / "results.png"))
    args = ap.parse_args(argv)
    DATA.mkdir(exist_ok=True)
    results: dict[int, dict[str, dict]] = {}
    sizes = [(int(n), False) for n in args.rows] + [(int(n), True) for n in args.stream_rows]
    for n, file_only in sizes:
        path = DATA / f"synthetic_{n}.parquet"
        if not path.exists():
            t0 = time.perf_counter()
            # in a child process: a parent that held the generated arrays would pass its peak RSS on
            # to every case process it starts (Linux copies the high-water mark at fork)
            subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {str(HERE)!r}); import run; "
                            f"run.make_data({n}, run.Path({str(path)!r}))"], check=True)  # fmt: skip
            print(f"generated {n:,} rows in {time.perf_counter() - t0:.1f}s -> {path}", flush=True)
        res: dict[str, dict] = {}
        cases = ["floor_file", "polfair_file"] if file_only else ["floor", "polfair", "floor_file", "polfair_file"]
        if not file_only and n <= args.peer_max_rows:
            cases += ["fairlearn", "aif360"]
        for case in cases:
            reps = args.peer_repeats if case in ("fairlearn", "aif360") else args.repeats
            res[case] = run_case(case, path, reps, check="aif360" in cases)
            print(f"{n:>12,} {case:<13} {json.dumps({k: v for k, v in res[case].items() if k != 'values'})[:160]}",
                  flush=True)
        results[n] = res
    write_results(results, args)
    return 0


def _check(a: dict, b: dict) -> float | None:
    common = [k for k in a if k in b and a[k] is not None and b[k] is not None]
    if not common:
        return None
    return max(abs(a[k] - b[k]) for k in common)


def write_results(results: dict[int, dict[str, dict]], args: argparse.Namespace) -> None:
    import platform

    lines = [
        "# polfair benchmark results",
        "",
        f"`python bench/run.py --rows {' '.join(f'{r:g}' for r in args.rows)}"
        + (f" --stream-rows {' '.join(f'{r:g}' for r in args.stream_rows)}" if args.stream_rows else "")
        + f" --repeats {args.repeats}`, one run, {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}. Medians of {args.repeats} runs after one warm-up call (peers: "
        f"{args.peer_repeats} run); "
        "peak RSS of the case's own process (it includes the loaded frame for in-memory cases).",
        "",
        "| rows | case | median time | peak RSS | ratio |",
        "|---:|---|---:|---:|---|",
    ]
    plot = {}
    first_peer: dict[str, tuple[int, float]] = {}
    for n, res in results.items():
        floor = res.get("floor", {}).get("median")
        ffloor = res.get("floor_file", {}).get("median")
        pol = res.get("polfair", {}).get("median")
        for case, r in res.items():
            med = r.get("median")
            ratio = ""
            if case == "polfair" and floor:
                ratio = f"**{med / floor:.2f}× floor**"
            elif case == "polfair_file" and ffloor:
                ratio = f"**{med / ffloor:.2f}× floor_file**"
            elif case in ("fairlearn", "aif360") and pol and med:
                ratio = f"**{med / pol:,.0f}× polfair**"
                first_peer.setdefault(case, (n, med))
            err = f" (error: {r['error']})" if "error" in r else ""
            lines.append(f"| {n:,} | {case} | {_fmt(med)}{err} | {_fmt(r.get('peak_rss_mib'), 'MiB')} | {ratio} |")
            if med:
                plot.setdefault(case, []).append((n, med))
        for case in ("fairlearn", "aif360"):
            if case not in res and case in first_peer and pol:
                n0, t0 = first_peer[case]
                est = t0 * n / n0
                lines.append(f"| {n:,} | {case} (extrapolated linearly from {n0:,}) | ~{est:.3g} s | — | "
                             f"~{est / pol:,.0f}× polfair (extrapolated) |")  # fmt: skip
    lines.append("")
    for n, res in results.items():
        pv = res.get("polfair", {}).get("values") or {}
        fv = res.get("fairlearn", {}).get("values") or {}
        d = _check(pv, fv)
        if d is not None:
            lines.append(f"* {n:,} rows: max |polfair − fairlearn| over {len(pv)} (group, metric) values: {d:.2e}")
        theirs = res.get("aif360", {}).get("values") or {}
        ours = res.get("polfair", {}).get("aif360_values") or {}
        if theirs and ours:
            rel = max(abs(ours[k] - theirs[k]) / max(abs(theirs[k]), 1e-300) for k in theirs)
            lines.append(f"* {n:,} rows: max relative |pf.ClassificationMetric − aif360| over {len(theirs)} metrics "
                         f"(weights, scores, sex F vs M): {rel:.2e}")  # fmt: skip
    # replace only this script's section of the file (between its markers; other scripts own the rest)
    out = Path(args.out)
    begin, end = "<!-- run:begin -->", "<!-- run:end -->"
    block = f"{begin}\n" + "\n".join(lines) + f"\n{end}\n"
    text = out.read_text() if out.exists() else ""
    if begin in text and end in text:
        text = text[: text.index(begin)] + block + text[text.index(end) + len(end) + 1 :]
    else:
        text = block + ("\n" + text if text else "")
    out.write_text(text)
    print("\n".join(lines))
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no plot", file=sys.stderr)
        return
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for case, pts in plot.items():
        xs, ys = zip(*sorted(pts))
        ax.plot(xs, ys, marker="o", label=case)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("rows")
    ax.set_ylabel("median time (s)")
    ax.set_title("polfair vs floor and peers (one run)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.plot, dpi=110)
    print(f"plot -> {args.plot}")


if __name__ == "__main__":
    raise SystemExit(main())
