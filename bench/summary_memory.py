"""Peak memory of the CLI's terminal summary vs ``--out`` on a column of many groups (issue 31).

Writes a parquet of ``--rows`` rows whose protected column has ``--levels`` distinct values (the
issue's case: 600,000 rows, 260,000 levels), then runs, each in a fresh process, ``polfair report``
printing the summary and ``polfair report --out`` writing the whole report, and reports each run's
peak resident memory (``ru_maxrss`` of the child) and wall time, and their ratio.

Run: ``python bench/summary_memory.py`` (``--rows 600000 --levels 260000``).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl


def _run(cmd: list[str]) -> tuple[float, float]:
    """(peak RSS in GiB, seconds) of ``cmd`` in a fresh process (the forked child's own peak)."""
    code = (
        "import resource, subprocess, sys, json\n"
        "r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
        "print(json.dumps([r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss]))"
    )
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code, *cmd], capture_output=True, text=True, check=True).stdout
    seconds = time.perf_counter() - t
    rc, kib = eval(out.strip().splitlines()[-1])  # noqa: S307 - our own json list
    if rc != 0:
        msg = f"{cmd} exited {rc}"
        raise SystemExit(msg)
    return kib / 2**20, seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=600_000)
    ap.add_argument("--levels", type=int, default=260_000)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "many.parquet"
        out = Path(tmp) / "report.parquet"
        pl.DataFrame({
            "y": rng.integers(0, 2, args.rows), "p": rng.integers(0, 2, args.rows),
            "zip": [f"z{i:06d}" for i in rng.integers(0, args.levels, args.rows)],
        }).write_parquet(path)  # fmt: skip
        base = [sys.executable, "-m", "polfair", "report", str(path), "--y-true", "y", "--y-pred", "p",
                "--protected", "zip", "--allow-many-groups"]  # fmt: skip
        print(f"{args.rows:,} rows, {args.levels:,} levels")
        summary = _run(base)
        written = _run([*base, "--out", str(out)])
        print(f"{'command':28s} {'peak GiB':>9s} {'seconds':>8s}")
        print(f"{'summary (terminal)':28s} {summary[0]:9.2f} {summary[1]:8.1f}")
        print(f"{'--out report.parquet':28s} {written[0]:9.2f} {written[1]:8.1f}")
        print(f"summary / --out peak memory: {summary[0] / written[0]:.2f}")


if __name__ == "__main__":
    main()
