"""The report inside PostgreSQL vs a bare GROUP BY on the same server (issue 42).

Starts a throwaway PostgreSQL 16 (``tests/engines/pg_server.py``: the ``pgserver`` wheel's binaries),
generates a table in SQL (``generate_series``; ``VACUUM (FREEZE, ANALYZE)``), then times, median of
``--repeats`` runs each, interleaved, on the same server:

* ``bare``: ``SELECT g, r, count(*), sum(w) FROM t GROUP BY g, r`` (the floor: one scan, the keys);
* ``report``: ``pf.fairness_report(t, y_true, y_pred, protected=[g, r], weight=w, ci=None)`` through
  Ibis (the pass in the database, the metrics in Polars);
* ``report_unweighted``: the same without the weight;
* ``report_folded`` (with ``--folded``): the weighted report with the weight's check folded into the
  grouping key, as before issue 42 (the planner then expects one group per row: a serial plan);
* ``report_checked`` (with ``--checked``): the weighted report without its common case (the query
  with the weight's checks as ``CASE`` aggregates, which runs where a weight is invalid);
* ``report_scores`` and ``report_scores_folded`` (with ``--scores``): the weighted report of a score
  (``y_score``, threshold 0.5), and the same with the score's checks folded into the grouping key
  (the code per row, as before: a serial plan);
* ``report_before`` (with ``--before FILE``): the weighted report with ``_flags_as_aggregates`` taken
  from another version of ``polfair/engines/narwhals.py`` (e.g. ``git show REV:polfair/engines/narwhals.py``),
  to compare two versions on the same server and table.

Usage: ``python bench/warehouse.py --rows 1e7 --repeats 3 [--checked] [--before FILE]`` (the
server's ``max_parallel_workers_per_gather``, shown).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "engines"))

import pg_server  # noqa: E402

import polfair as pf  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=float, default=1e7)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--folded", action="store_true", help="also time the weight's check folded into the key")
    ap.add_argument("--checked", action="store_true", help="also time the weighted report without its common case")
    ap.add_argument("--before", metavar="FILE", help="also time _flags_as_aggregates of this narwhals.py")
    ap.add_argument("--scores", action="store_true", help="also time a score's weighted report (and folded)")
    args = ap.parse_args()
    n = int(args.rows)
    server = pg_server.start()
    if server is None:
        raise SystemExit(pg_server.LAST_ERROR)
    try:
        con = server.ibis()
        t0 = time.perf_counter()
        con.raw_sql(
            "CREATE TABLE t AS SELECT (random() < 0.4)::int AS y, (random() < 0.45)::int AS p, "
            "(ARRAY['f','m'])[1 + (i % 2)] AS g, (ARRAY['a','b','c','d'])[1 + (i % 4)] AS r, "
            f"0.5 + random() AS w, random() AS s FROM generate_series(1, {n}) AS i"
        ).close()
        con.raw_sql("VACUUM (FREEZE, ANALYZE) t").close()
        made = time.perf_counter() - t0
        table = con.table("t")
        import polfair.engines.narwhals as nwe

        split, common, flags, scored = nwe._split_flags, nwe._common_case, nwe._flags_as_aggregates, nwe._score_common_case
        scores = {"y_true": "y", "y_score": "s", "protected": ["g", "r"], "weight": "w", "ci": None}

        def scores_folded() -> None:
            nwe._score_common_case = lambda *a: None  # type: ignore[assignment]
            try:
                pf.fairness_report(table, **scores)
            finally:
                nwe._score_common_case = scored
        weighted = {"y_true": "y", "y_pred": "p", "protected": ["g", "r"], "weight": "w", "ci": None}

        def checked() -> None:
            nwe._common_case = lambda *a: None  # type: ignore[assignment]
            try:
                pf.fairness_report(table, **weighted)
            finally:
                nwe._common_case = common

        def old_flags(ff: Any, c: Any, s: Any, g: Any, sums: Any, relabel: Any = None) -> Any:
            return old._flags_as_aggregates(ff, c, s, g, sums)

        def before() -> None:
            nwe._flags_as_aggregates = old_flags  # type: ignore[assignment]
            try:
                pf.fairness_report(table, **weighted)
            finally:
                nwe._flags_as_aggregates = flags

        def folded() -> None:
            nwe._split_flags = lambda *a: False  # type: ignore[assignment]
            try:
                pf.fairness_report(table, y_true="y", y_pred="p", protected=["g", "r"], weight="w", ci=None)
            finally:
                nwe._split_flags = split

        def bare() -> None:
            cur = con.raw_sql("SELECT g, r, count(*), sum(w) FROM t GROUP BY g, r")
            cur.fetchall()
            cur.close()

        cases = {
            "bare": bare,
            "report": lambda: pf.fairness_report(table, y_true="y", y_pred="p", protected=["g", "r"], weight="w",
                                                 ci=None),
            "report_unweighted": lambda: pf.fairness_report(table, y_true="y", y_pred="p", protected=["g", "r"],
                                                            ci=None),
        }  # fmt: skip
        if args.folded:
            cases["report_folded"] = folded
        if args.checked:
            cases["report_checked"] = checked
        if args.scores:
            cases["report_scores"] = lambda: pf.fairness_report(table, **scores)
            cases["report_scores_folded"] = scores_folded
        if args.before:
            import importlib.util

            spec = importlib.util.spec_from_file_location("pf_narwhals_before", args.before)
            assert spec is not None and spec.loader is not None
            old = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(old)
            cases["report_before"] = before
        runs: dict[str, list[float]] = {name: [] for name in cases}
        for f in cases.values():  # warm-up
            f()
        for _ in range(args.repeats):
            for name, f in cases.items():
                t = time.perf_counter()
                f()
                runs[name].append(time.perf_counter() - t)
        cur = con.raw_sql("SHOW max_parallel_workers_per_gather")
        workers = cur.fetchall()[0][0]
        cur.close()
        base = statistics.median(runs["bare"])
        print(f"{n:,} rows (made in {made:.1f} s), PostgreSQL 16, max_parallel_workers_per_gather={workers}, "
              f"medians of {args.repeats}")  # fmt: skip
        print("| case | median | runs | ratio |\n|---|---:|---|---:|")
        for name, ts in runs.items():
            med = statistics.median(ts)
            shown = ", ".join(f"{x:.2f}" for x in ts)
            print(f"| {name} | {med:.2f} s | {shown} | {med / base:.2f}x |")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
