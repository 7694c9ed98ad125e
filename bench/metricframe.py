"""Benchmark: polfair.MetricFrame vs fairlearn.metrics.MetricFrame, side by side, same run.

Usage::

    python bench/metricframe.py --rows 1e4 1e5 1e6 1e7 --n-boot 100 --update bench/results.md

Seeded synthetic rows (a 0/1 label; a 0/1 prediction; ``sex`` with 2 and ``race`` with 5 string
levels as the sensitive features, an ``age_group`` with 3 levels as a control feature), as NumPy
arrays (what a fairlearn user passes). One request, the same for both classes: five metrics
(``accuracy_score``, ``recall_score``, ``precision_score(zero_division=0)``, fairlearn's
``selection_rate`` and ``count``), then ``by_group``, ``overall``, ``difference()`` and
``ratio(method="to_overall")`` read; with ``--n-boot`` also the bootstrap (``ci_quantiles``
0.025/0.5/0.975, ``by_group_ci`` and ``difference_ci()`` read). A last case adds a custom
callable, which polfair calls per group (as fairlearn does), to show that path's cost; another
passes the same data as Polars columns (polfair only), to show the cost without reading NumPy text.

polfair is timed as the median of ``--repeats`` runs after one warm-up; fairlearn once (it is
slow), and only up to ``--peer-max-rows`` (without bootstrap) and ``--peer-boot-max-rows`` (with):
above those the row says "skipped" (fairlearn's time grows linearly in the rows, and with the
bootstrap linearly in rows × n_boot). The values are compared where both ran (the bootstrap
quantiles only in law: the draws differ). Ratios in the same run are the result.
"""

from __future__ import annotations

import argparse
import functools
import os
import platform
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

Q = [0.025, 0.5, 0.975]


def make(n: int, seed: int = 0) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    sex = rng.integers(0, 2, n)
    race = rng.integers(0, 5, n)
    age = rng.integers(0, 3, n)
    logit = -0.2 + 0.5 * sex - 0.2 * race
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(np.int64)
    p = np.where(rng.random(n) < 0.8, y, 1 - y).astype(np.int64)
    return {
        "y_true": y,
        "y_pred": p,
        "sensitive_features": {"sex": np.array(["F", "M"])[sex], "race": np.array(list("ABCDE"))[race]},
        "control_features": {"age_group": np.array(["<25", "25-45", ">45"])[age]},
    }


def metrics() -> dict[str, Callable[..., Any]]:
    import fairlearn.metrics as fm
    import sklearn.metrics as skm

    return {
        "accuracy": skm.accuracy_score,
        "recall": skm.recall_score,
        "precision": functools.partial(skm.precision_score, zero_division=0),
        "selection_rate": fm.selection_rate,
        "count": fm.count,
    }


def custom(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """A metric no library knows: both classes call it on each group's rows."""
    return float(np.mean(y_true != y_pred))


def request(cls: Any, data: dict[str, Any], n_boot: int | None, extra: bool = False) -> dict[str, Any]:
    ms = metrics() | ({"custom": custom} if extra else {})
    kw: dict[str, Any] = {"n_boot": n_boot, "ci_quantiles": Q, "random_state": 0} if n_boot else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mf = cls(metrics=ms, **data, **kw)
        out = {"by_group": mf.by_group, "overall": mf.overall, "difference": mf.difference(),
               "ratio": mf.ratio(method="to_overall")}  # fmt: skip
        if n_boot:
            out["by_group_ci"] = mf.by_group_ci
            out["difference_ci"] = mf.difference_ci()
    return out


def timed(f: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    out = f()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def once(f: Callable[[], Any]) -> tuple[float, Any]:
    t = time.perf_counter()
    out = f()
    return time.perf_counter() - t, out


def max_difference(a: dict[str, Any], b: dict[str, Any]) -> float:
    worst = 0.0
    for key in ("by_group", "overall", "difference", "ratio"):
        x, y = a[key], b[key]
        if hasattr(y, "columns") and hasattr(x, "columns"):
            y = y[list(x.columns)]
        worst = max(worst, float(np.nanmax(np.abs(np.asarray(x, dtype=float) - np.asarray(y, dtype=float)))))
    return worst


def _floor(frame: Any) -> Any:
    return frame.group_by(["age_group", "sex", "race", "y", "p"]).len()


def fmt(t: float) -> str:
    return f"{t * 1e3:.1f} ms" if t < 1 else f"{t:.2f} s"


def run(args: argparse.Namespace) -> list[str]:
    import fairlearn.metrics as fm

    import polfair as pf

    rows = []
    for n in (int(float(r)) for r in args.rows):
        data = make(n)
        floor_frame = __import__("polars").DataFrame(
            {"y": data["y_true"], "p": data["y_pred"], **data["sensitive_features"], **data["control_features"]}
        )
        floor, _ = timed(functools.partial(_floor, floor_frame), args.repeats)
        for n_boot in (None, args.n_boot):
            label = "no intervals" if not n_boot else f"n_boot={n_boot}"
            ours_t, ours = timed(functools.partial(request, pf.MetricFrame, data, n_boot), args.repeats)
            limit = args.peer_boot_max_rows if n_boot else args.peer_max_rows
            if n <= limit:
                theirs_t, theirs = once(functools.partial(request, fm.MetricFrame, data, n_boot))
                diff = max_difference(ours, theirs)
                rows.append(f"| {n:,} | {label} | {fmt(floor)} | {fmt(ours_t)} | {fmt(theirs_t)} | "
                            f"**{theirs_t / ours_t:,.0f}×** | {diff:.1e} |")  # fmt: skip
            else:
                rows.append(f"| {n:,} | {label} | {fmt(floor)} | {fmt(ours_t)} | skipped (> {int(limit):,} rows) | | |")
        as_polars = {"y_true": floor_frame["y"], "y_pred": floor_frame["p"],
                     "sensitive_features": floor_frame.select("sex", "race"),
                     "control_features": floor_frame.select("age_group")}  # fmt: skip
        ours_t, _ = timed(functools.partial(request, pf.MetricFrame, as_polars, None), args.repeats)
        rows.append(f"| {n:,} | no intervals, Polars inputs (no text conversion) | {fmt(floor)} | {fmt(ours_t)} | | | |")
        if n <= args.peer_max_rows:
            ours_t, ours = timed(functools.partial(request, pf.MetricFrame, data, None, extra=True), 1)
            theirs_t, theirs = once(functools.partial(request, fm.MetricFrame, data, None, extra=True))
            rows.append(f"| {n:,} | + a custom callable (per group in both) | {fmt(floor)} | {fmt(ours_t)} | "
                        f"{fmt(theirs_t)} | **{theirs_t / ours_t:,.1f}×** | {max_difference(ours, theirs):.1e} |")  # fmt: skip
        print(*rows[-4:], sep="\n", flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", nargs="+", default=["1e4", "1e5", "1e6", "1e7"])
    parser.add_argument("--n-boot", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--peer-max-rows", type=float, default=1e6)
    parser.add_argument("--peer-boot-max-rows", type=float, default=1e5)
    parser.add_argument("--update", type=Path, help="replace the MetricFrame section of this results file")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    rows = run(args)
    load = (f"load average {load_before:.1f} at the start, {os.getloadavg()[0]:.1f} at the end (on a shared "
            "machine the absolute times are noisy; compare ratios)")  # fmt: skip
    import fairlearn

    import polfair

    head = (
        f"`python bench/metricframe.py --rows {' '.join(args.rows)} --n-boot {args.n_boot} --repeats {args.repeats}`, "
        f"one run, {platform.machine()}, {os.cpu_count()} cores, {load}, Python {sys.version.split()[0]}, "
        f"polfair {polfair.__version__}, fairlearn "
        f"{fairlearn.__version__}. Five metrics (accuracy, recall, precision, selection rate, count), sensitive "
        "features sex (2) × race (5), control feature age_group (3), NumPy inputs; by_group, overall, difference() "
        "and ratio('to_overall') read (with n_boot: by_group_ci and difference_ci() too). polfair: median of "
        f"{args.repeats} after a warm-up; fairlearn: one run; floor: Polars `group_by(features, y, p).len()` on "
        "the same rows. 'max |Δ|': largest difference of any point value (the bootstrap draws differ by design)."
    )
    table = ["| rows | case | floor | polfair | fairlearn | fairlearn / polfair | max \\|Δ\\| |",
             "|---:|---|---:|---:|---:|---:|---:|", *rows]  # fmt: skip
    section = "\n".join(["<!-- metricframe:begin -->", "## MetricFrame vs fairlearn's (issue 32)", "", head, "",
                         *table, "<!-- metricframe:end -->"])  # fmt: skip
    print(section)
    if args.update:
        text = args.update.read_text()
        if "<!-- metricframe:begin -->" in text:
            before, rest = text.split("<!-- metricframe:begin -->", 1)
            after = rest.split("<!-- metricframe:end -->", 1)[1]
            text = before + section + after
        else:
            text = text.rstrip("\n") + "\n\n" + section + "\n"
        args.update.write_text(text)


if __name__ == "__main__":
    main()
