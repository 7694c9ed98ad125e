"""Ranking report benchmark (issue 43): polfair against FairRankTune's EXP and against a bare Polars group-by.

Usage::

    python bench/ranking.py [--rows 1e6] [--items 100] [--k 10] [--frt] [--repeats 3]  # speed, same run
    python bench/ranking.py --memory --rows 1e8 --items 500 --k 10          # streamed parquet, peak RSS

Speed: rankings of ``--items`` items per query with three groups and ties; ``pf.ranking_report``
(every metric, with jackknife intervals by query) against (a) a bare Polars
``group_by(query, group).agg(Σ 1/log2(1 + rank) cut at k, len)`` (each row weighted by its own rank,
ties not averaged), (a') the same sums with the report's tie rule, bare (``group_by(query, rank cut at
k + 1, group).agg(len)``, the tie size a window by (query, rank) on that small table, each row the mean
weight of the positions its tie spans, summed by (query, group): the report's exposure sums exactly,
checked), and (b) FairRankTune 0.0.7's ``EXP`` alone (``--frt``; its pure-Python loop over items), on the
same rows in the same process. Memory: writes a parquet file in batches (``/tmp``), then runs the
report on ``scan_parquet`` with ``engine="streaming"`` in a child process and prints its peak RSS.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl


def rankings(rows: int, items: int, seed: int = 43) -> pl.DataFrame:
    """``rows`` ranked items: query, competition rank (ties from a coarse score), group, relevance."""
    rng = np.random.default_rng(seed)
    nq = rows // items
    g = rng.integers(0, 3, nq * items).astype(np.int8)
    score = rng.integers(0, items * 4, nq * items) + g.astype(np.int64) * items // 2  # groups ranked unequally; ties
    df = pl.DataFrame({"q": np.repeat(np.arange(nq, dtype=np.int64), items), "s": score, "g": g,
                       "rel": (rng.random(nq * items) < 0.2).astype(np.float64)})  # fmt: skip
    return df.with_columns(pl.col("s").rank("min", descending=True).over("q").cast(pl.Int32).alias("r")).drop("s")


def best(f, reps: int = 7) -> float:
    out = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        out.append(time.perf_counter() - t)
    return min(out)


def tie_sums(lf: pl.LazyFrame, k: int) -> pl.DataFrame:
    """The report's exposure sums per (q, g), bare: count the rows per (q, rank cut at k + 1, g), take each tie's size
    m as the rows sharing (q, rank) (a window on that small table), give each row the mean of 1/log2(1 + pos) over
    the positions r … r + m − 1 its tie spans (0 beyond k) and sum by (q, g). The first step is collected, the rest
    runs eagerly on its small table (the fastest of the plans tried: one lazy plan took ~2x longer).
    """
    cum = pl.Series(np.concatenate([[0.0], np.cumsum(1.0 / np.log2(1.0 + np.arange(1, k + 1)))]))
    r = pl.col("r")
    cells = lf.group_by("q", pl.min_horizontal(r, pl.lit(k + 1)).alias("r"), "g").agg(pl.len().alias("n")).collect()
    cells = cells.with_columns(pl.col("n").sum().over("q", "r").alias("m"))
    end = pl.min_horizontal(r + pl.col("m") - 1, pl.lit(k))
    start = pl.min_horizontal(r - 1, pl.lit(k))  # every row is gathered: keep the index in range
    w = pl.when(r <= k).then((pl.lit(cum).gather(end) - pl.lit(cum).gather(start)) / pl.col("m")).otherwise(0.0)
    return cells.with_columns((pl.col("n") * w).alias("e")).group_by("q", "g").agg(pl.col("e", "n").sum())


def speed(rows: int, items: int, k: int, frt: bool, repeats: int) -> None:
    import polfair as pf

    df = rankings(rows, items)
    lf = df.lazy()
    v = pl.when(pl.col("r") <= k).then(1.0 / (pl.col("r").cast(pl.Float64) + 1.0).log(2)).otherwise(0.0)
    # the report's exposure sums, computed bare: they equal the report's (checked), ties included
    sums = tie_sums(lf, k).group_by("g").agg(pl.col("e", "n").sum()).sort("g")
    rep = pf.ranking_report(df, query="q", rank="r", protected="g", k=k, ci=None)
    got = rep.filter(pl.col("metric") == "exposure", pl.col("group").is_not_null()).sort("group")["value"].to_numpy()
    assert np.allclose(got, (sums["e"] / sums["n"]).to_numpy(), rtol=1e-12, atol=0.0)
    print(f"rows {rows:,} ({rows // items:,} queries x {items}), k={k}; best of 7, {repeats} repeat(s)")
    for i in range(repeats):
        bare = best(lambda: lf.group_by("q", "g").agg(v.sum(), pl.len()).collect())
        bare_ties = best(lambda: tie_sums(lf, k))
        rep = best(lambda: pf.ranking_report(df, query="q", rank="r", protected="g", relevance="rel", k=k))
        rep_noci = best(lambda: pf.ranking_report(df, query="q", rank="r", protected="g", relevance="rel", k=k, ci=None))
        print(f" repeat {i + 1}:")
        print(f"  bare Polars group_by(q, g): Σ 1/log2(1 + r) cut at k, len:  {bare:.4f} s")
        print(f"  the same sums with the report's tie weights (bare, 2 levels): {bare_ties:.4f} s")
        print(f"  pf.ranking_report, every metric, jackknife intervals:        {rep:.4f} s ({rep / bare:.2f}x the bare sums, "
              f"{rep / bare_ties:.2f}x with ties)")
        print(f"  pf.ranking_report, ci=None:                                  {rep_noci:.4f} s ({rep_noci / bare:.2f}x, "
              f"{rep_noci / bare_ties:.2f}x)")
        if frt:
            import pandas as pd
            from FairRankTune.Metrics.EXP import EXP

            # FairRankTune takes one column per ranking (strict orders: ties broken by row order) and an item -> group dict
            order = df.with_columns(pl.int_range(pl.len()).alias("item")).sort("q", "r")
            cols = order.group_by("q", maintain_order=True).agg(pl.col("item"))["item"].to_list()
            frame = pd.DataFrame({f"c{i}": c for i, c in enumerate(cols)})
            groups = dict(zip(order["item"].to_list(), order["g"].to_list()))
            t = time.perf_counter()
            EXP(frame, groups, "MinMaxRatio")
            t_frt = time.perf_counter() - t
            print(f"  FairRankTune 0.0.7 EXP alone (no cut-off, one call):         {t_frt:.2f} s ({t_frt / rep:.0f}x the whole "
                  "report)")


def memory(rows: int, items: int, k: int) -> None:
    import pyarrow.parquet as pq

    path = Path(f"/tmp/polfair_ranking_{rows}_{items}.parquet")
    if not path.exists():
        batch = 5_000_000 // items * items
        writer = None
        for i, start in enumerate(range(0, rows, batch)):
            part = rankings(min(batch, rows - start), items, seed=i).with_columns(pl.col("q") + start // items)
            table = part.to_arrow()
            writer = writer or pq.ParquetWriter(path, table.schema)
            writer.write_table(table)
        assert writer is not None
        writer.close()
    code = (
        "import resource, time, polars as pl, polfair as pf\n"
        f"t = time.perf_counter()\nrep = pf.ranking_report(pl.scan_parquet({str(path)!r}), query='q', rank='r', protected='g', "
        f"relevance='rel', k={k}, engine='streaming')\n"
        "print(f'{rep.height} report rows in {time.perf_counter() - t:.1f} s; peak RSS '"
        "f'{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB')\n"
    )
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    print(f"rows {rows:,} streamed from {path} ({path.stat().st_size / 2**20:.0f} MiB), k={k}: {out.stdout.strip()}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=float, default=1e6)
    ap.add_argument("--items", type=int, default=100)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--frt", action="store_true")
    ap.add_argument("--memory", action="store_true")
    ap.add_argument("--repeats", type=int, default=1)
    a = ap.parse_args()
    if a.memory:
        memory(int(a.rows), a.items, a.k)
    else:
        speed(int(a.rows), a.items, a.k, a.frt, a.repeats)


if __name__ == "__main__":
    main()
