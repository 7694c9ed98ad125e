"""Benchmark of the score / regulatory / mitigation / proxy rooms vs a bare Polars group-by (the floor).

Usage::

    python bench/scores.py --rows 1e6 1e7 --out bench/scores_results.md

Seeded synthetic rows in memory (3 Categorical protected attributes with 2, 5 and 6 levels; a label;
a probability score rounded to 3 decimals, i.e. ~1000 distinct values; the same score unrounded for
``bins=100``; 3 candidate proxy features). Each case is timed in this one process as the median of
``--repeats`` runs after one untimed warm-up, on the same data, and reported as a ratio to the floor
``df.lazy().group_by(protected).agg(pl.len())``. Ratios, not absolute seconds, are the result. With
``--peer-max-rows`` rows or fewer, scikit-learn's ``roc_auc_score`` per group and intersection (the
loop a user would write) is timed too, and its values are compared with polfair's.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

G = ["sex", "race", "age_group"]


def make(n: int, seed: int = 0) -> pl.DataFrame:
    """``n`` seeded synthetic rows."""
    rng = np.random.default_rng(seed)
    levels = {"sex": ["F", "M"], "race": ["A", "B", "C", "D", "E"], "age_group": [f"a{i}" for i in range(6)]}
    codes = {k: rng.integers(0, len(v), n) for k, v in levels.items()}
    logit = -0.3 + 0.4 * codes["sex"] - 0.15 * codes["race"] + 0.1 * codes["age_group"]
    p_true = 1 / (1 + np.exp(-logit))
    y = (rng.random(n) < p_true).astype(np.int8)
    score = np.clip(p_true + rng.normal(0, 0.25, n) + 0.2 * (y - 0.5), 0, 1)
    cols: dict[str, Any] = {k: pl.Series(k, np.array(v)[codes[k]]).cast(pl.Enum(v)) for k, v in levels.items()}
    cols.update(
        y=y,
        score=np.round(score, 3),
        score_raw=score,
        zip=rng.integers(0, 50, n) + 10 * codes["race"],
        hours=rng.integers(10, 70, n),
        channel=rng.integers(0, 4, n),
    )
    return pl.DataFrame(cols)


def timed(f: Callable[[], Any], repeats: int) -> float:
    """Median wall time of ``repeats`` calls after one warm-up call."""
    f()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def cases(df: pl.DataFrame) -> dict[str, Callable[[], Any]]:
    """The timed requests (each reads the frame once)."""
    from polfair.mitigation import group_thresholds, reweighing
    from polfair.proxies import proxy_scan
    from polfair.regulatory import adverse_impact
    from polfair.scores import score_counts, score_report, threshold_sweep

    kw = {"y_true": "y", "y_score": "score", "protected": G}
    return {
        "floor: group_by(protected).agg(len)": lambda: df.lazy().group_by(G).agg(pl.len()).collect(),
        "bare group_by(protected, score, y).agg(len)": lambda: (
            df.lazy().group_by([*G, "score", "y"]).agg(pl.len()).collect()
        ),
        "score_counts (exact, ~1000 scores)": lambda: score_counts(df, **kw),
        "score_counts (bins=100, raw scores)": lambda: score_counts(
            df, y_true="y", y_score="score_raw", protected=G, bins=100
        ),
        "score_report (AUC, AP, Brier, ECE, ABROCA; 7 attribute sets)": lambda: score_report(df, **kw),
        "threshold_sweep (9 thresholds + top 10%, all metrics)": lambda: threshold_sweep(
            df, **kw, thresholds=[i / 10 for i in range(1, 10)], rank_pct=[0.1]
        ),
        "adverse_impact (eeoc, score >= 0.5)": lambda: adverse_impact(
            df, y_pred=pl.col("score") >= 0.5, favorable=True, protected=G
        ),
        "group_thresholds (equalized odds, 60 groups)": lambda: group_thresholds(df, **kw, constraint="equalized_odds"),
        "reweighing": lambda: reweighing(df, y_true="y", protected=G),
        "proxy_scan (race vs 3 features)": lambda: proxy_scan(
            df, protected="race", features=["zip", "hours", "channel"]
        ),
    }


def sklearn_loop(df: pl.DataFrame) -> dict[tuple[str, str], float]:
    """roc_auc_score for every group of every attribute set, as a user would loop."""
    from itertools import combinations

    from sklearn.metrics import roc_auc_score

    out = {}
    for k in range(1, len(G) + 1):
        for attrs in combinations(G, k):
            for key, part in df.group_by(list(attrs)):
                label = " & ".join(str(v) for v in key)
                out[(" & ".join(attrs), label)] = roc_auc_score(part["y"].to_numpy(), part["score"].to_numpy())
    return out


def main() -> None:
    """Run the cases at each size and write the markdown table."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", nargs="+", type=float, default=[1e6])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--peer-max-rows", type=float, default=1e6)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    import polfair  # noqa: F401  (import time outside the timings)
    from polfair.scores import score_report

    lines = ["| rows | case | ratio to the floor |", "|---:|---|---:|"]
    for n in [int(r) for r in args.rows]:
        df = make(n)
        results = {name: timed(f, args.repeats) for name, f in cases(df).items()}
        floor = results["floor: group_by(protected).agg(len)"]
        if n <= args.peer_max_rows:
            t = time.perf_counter()
            theirs = sklearn_loop(df)
            results[f"scikit-learn roc_auc_score loop ({len(theirs)} groups, one run)"] = time.perf_counter() - t
            rep = score_report(df, y_true="y", y_score="score", protected=G)
            ours = {
                (a, g): v
                for a, g, v in rep.filter(pl.col("group").is_not_null(), metric="roc_auc")
                .select(pl.col("attribute").cast(pl.String), "group", "value")
                .iter_rows()
            }
            worst = max(abs(ours[k] - v) for k, v in theirs.items())
            print(f"{n:.0e} rows: max |AUC polfair - scikit-learn| over {len(theirs)} groups = {worst:.1e}")
        for name, t in results.items():
            lines.append(f"| {n:.0e} | {name} | {t / floor:.2f}x |")
            print(f"{n:.0e}  {name:70s} {t * 1e3:9.1f} ms  {t / floor:7.2f}x")
    if args.out:
        args.out.write_text(
            "# Score rooms benchmark (`python bench/scores.py`)\n\n"
            "One run, one machine; ratios to a bare `group_by(protected).agg(len)` on the same in-memory "
            "frame (Enum keys).\n\n" + "\n".join(lines) + "\n"
        )


if __name__ == "__main__":
    main()
