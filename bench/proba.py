"""Benchmark: the pass of an attribute estimated from proxies (``protected_proba``), as ratios to a bare group-by.

Usage::

    python bench/proba.py [--rows 5e6] [--repeats 7] [--groups 5]

Data: seeded in-memory rows with two observed Categorical keys (sex: 2 levels, age group: 6),
labels, scores, predictions ``score >= 0.5``, gamma weights, the true race (``--groups`` levels)
and Dirichlet membership probabilities ``p_0 … p_{K-1}`` (BISG-like, about 0.85 on the likeliest
group). The streaming engine, as the report runs the pass. Times are medians of ``--repeats``
interleaved runs after one warm-up; ratios are to the floor's median of the same run.

* ``floor``: ``group_by(sex, age_group).agg(len)`` on the same frame (reads only the observed keys);
* ``observed race``: the ordinary weighted pass with the race recorded (a third key, Categorical);
* ``weighted estimator``: the pass of ``protected_proba`` (``polfair.core.passes.estimated.code_counts``):
  one ``group_by(sex, age_group, code)`` with, per group, ``Σ w·p``, ``Σ w²·p``, ``Σ p`` (and with
  scores ``Σ w·p·s``, ``Σ w·p·(1−s)``) as extra sums, then the reshape of its small result;
* ``argmax``: the same pass grouping by the likeliest group's index;
* ``exploded rows`` (not shipped, for the record): the alternatives the design avoided, one row
  per input row and group with weight ``w·p`` (an in-plan ``unpivot``, or K stacked selects, which
  read a lazy input K times) followed by the ordinary pass by (sex, age_group, group, code); they
  would still lack ``Σ w²·p`` and ``Σ p`` (not the same cell table). A list-of-structs ``explode``
  measured about 1,000x the floor and is not shown;
* ``... + scores``: the same with ``y_score`` (two more sums per group).

The full ``fairness_report`` (pass, checks, reshape, report with intervals) is timed once per
variant for scale.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import polfair as pf  # noqa: E402
from polfair.core.passes import counts, proba_cells  # noqa: E402
from polfair.core.passes.spec import build_spec  # noqa: E402

KEYS = ["sex", "age_group"]


def frame(n: int, k: int, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    race = rng.integers(0, k, n)
    conc = np.full((n, k), 0.15)
    conc[np.arange(n), race] = 3.0
    p = rng.gamma(conc)  # Dirichlet rows (each row's gammas over their sum)
    p /= p.sum(axis=1, keepdims=True)
    score = rng.random(n)
    cols = {
        name: pl.Series(name, [f"{name}{j}" for j in range(m)]).cast(pl.Categorical).gather(rng.integers(0, m, n))
        for name, m in {"sex": 2, "age_group": 6}.items()
    }
    return pl.DataFrame(cols).with_columns(
        race=pl.Series([f"r{j}" for j in range(k)]).cast(pl.Categorical).gather(race),
        y_true=pl.Series(rng.integers(0, 2, n).astype(np.int8)),
        score=pl.Series(score),
        y_pred=pl.Series((score >= 0.5).astype(np.int8)),
        weight=pl.Series(rng.gamma(2.0, 0.5, n)),
        **{f"p_{j}": pl.Series(p[:, j]) for j in range(k)},
    )


def _proba(k: int) -> dict[str, dict[str, str]]:
    return {"race_est": {f"r{j}": f"p_{j}" for j in range(k)}}


def cases(df: pl.DataFrame, k: int, scores: bool) -> dict[str, Callable[[], object]]:
    base = dict(y_true="y_true", y_pred="y_pred", weight="weight", **({"y_score": "score"} if scores else {}))
    observed = build_spec(df, **base, protected=[*KEYS, "race"])
    weighted = build_spec(df, **base, protected=KEYS, protected_proba=_proba(k))
    argmax = build_spec(df, **base, protected=KEYS, protected_proba=_proba(k), proba_assignment="argmax")
    tail = " + scores" if scores else ""
    # the alternatives the design avoided: one row per input row and group, weight w·p, then the
    # ordinary pass (which would still lack Σ w²·p and Σ p: not the same cell table)
    index = [*KEYS, "y_true", "y_pred", "weight", *(["score"] if scores else [])]
    probs = [f"p_{j}" for j in range(k)]
    groups = pl.Enum(probs)
    unpivoted = (df.lazy().select(*index, *probs).unpivot(on=probs, index=index, variable_name="g", value_name="p")
                 .with_columns(pl.col("g").cast(groups), (pl.col("weight") * pl.col("p")).alias("wp")))  # fmt: skip
    stacked = pl.concat([df.lazy().select(*index, pl.lit(c).cast(groups).alias("g"), pl.col(c).alias("p")) for c in probs])
    stacked = stacked.with_columns((pl.col("weight") * pl.col("p")).alias("wp"))
    sc = {"y_score": "score"} if scores else {}
    exploded = build_spec(unpivoted, y_true="y_true", y_pred="y_pred", weight="wp", protected=[*KEYS, "g"], **sc)
    concat = build_spec(stacked, y_true="y_true", y_pred="y_pred", weight="wp", protected=[*KEYS, "g"], **sc)

    def run(plan: pl.LazyFrame) -> Callable[[], object]:
        return lambda: plan.collect(engine="streaming")

    def run_proba(spec: object) -> Callable[[], object]:
        return lambda: proba_cells.expand_codes(proba_cells.code_counts(spec).collect(engine="streaming").lazy(),  # type: ignore[arg-type]
                                                spec).collect()  # type: ignore[arg-type]

    return {
        f"observed race{tail}": run(counts.code_counts(observed)),
        f"weighted estimator{tail}": run_proba(weighted),
        f"argmax{tail}": run_proba(argmax),
        f"exploded rows, unpivot (not shipped){tail}": run(counts.code_counts(exploded)),
        f"exploded rows, K stacked selects (not shipped: reads a lazy input K times){tail}": run(
            counts.code_counts(concat)),
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=float, default=5e6)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--groups", type=int, default=5)
    args = ap.parse_args(argv)
    n, k = int(args.rows), args.groups
    df = frame(n, k)
    floor = df.lazy().group_by(KEYS).agg(pl.len())
    todo: dict[str, Callable[[], object]] = {"floor: group_by(sex, age_group).agg(len)": lambda: floor.collect(engine="streaming")}
    for scores in (False, True):
        todo |= cases(df, k, scores)
    times: dict[str, list[float]] = {name: [] for name in todo}
    for f in todo.values():  # warm-up
        f()
    for _ in range(args.repeats):
        for name, f in todo.items():
            t0 = time.perf_counter()
            f()
            times[name].append(time.perf_counter() - t0)
    floor_med = statistics.median(times[next(iter(todo))])
    print(f"{n:,} in-memory rows, {k} estimated groups, streaming engine; {platform.machine()}, polars {pl.__version__}, "
          f"medians of {args.repeats} interleaved runs\n")  # fmt: skip
    print("| pass | median | / floor |\n|---|---:|---:|")
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f"| {name} | {1000 * med:.0f} ms | {med / floor_med:.2f} |")
    print()
    base = dict(y_true="y_true", y_pred="y_pred", y_score="score", weight="weight")
    for name, kw in (("observed race", {"protected": [*KEYS, "race"]}),
                     ("weighted estimator", {"protected": KEYS, "protected_proba": _proba(k)}),
                     ("argmax", {"protected": KEYS, "protected_proba": _proba(k), "proba_assignment": "argmax"})):  # fmt: skip
        t0 = time.perf_counter()
        pf.fairness_report(df, **base, **kw)
        print(f"fairness_report, {name} (+ scores, intervals): {time.perf_counter() - t0:.2f} s")


if __name__ == "__main__":
    main()
