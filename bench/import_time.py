"""Start-up cost: ``import polfair`` and ``polfair --help`` as ratios to ``import polars`` (issue 31).

Each command runs in a fresh interpreter, alternating, ``--repeat`` times; the median wall time of
each is reported with its ratio to the median of ``import polars`` in the same run (the machine's
load cancels). Target: ``import polfair`` at most 1.5x ``import polars``.

Run: ``python bench/import_time.py --repeat 15``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

COMMANDS = {
    "import polars": [sys.executable, "-c", "import polars"],
    "import polfair": [sys.executable, "-c", "import polfair"],
    "polfair --help": [sys.executable, "-m", "polfair", "--help"],
    "import polfair; fairness_report": [sys.executable, "-c", "import polfair; polfair.fairness_report"],
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args()
    times: dict[str, list[float]] = {k: [] for k in COMMANDS}
    for _ in range(args.repeat):
        for name, cmd in COMMANDS.items():
            t = time.perf_counter()
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            times[name].append(time.perf_counter() - t)
    base = statistics.median(times["import polars"])
    print(f"{'command':34s} {'median s':>9s} {'x polars':>9s}")
    for name, ts in times.items():
        m = statistics.median(ts)
        print(f"{name:34s} {m:9.3f} {m / base:9.2f}")


if __name__ == "__main__":
    main()
