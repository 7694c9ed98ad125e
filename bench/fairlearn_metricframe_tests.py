"""Run fairlearn's own MetricFrame tests, unmodified, against fairlearn and against polfair.MetricFrame.

Usage::

    python bench/fairlearn_metricframe_tests.py /path/to/fairlearn-checkout [-n 2] [--json out.json]

The checkout is a fairlearn source tree (e.g. ``git clone https://github.com/fairlearn/fairlearn``
at the 0.15 release); this script fetches nothing. It runs
``test/unit/metrics/test_metricframe_*.py`` twice, each in its own process, from the checkout's
root (so its ``pyproject.toml`` applies: warnings are errors there):

1. as they are (the baseline: the tests that pass on fairlearn itself);
2. with ``fairlearn.metrics.MetricFrame = polfair.MetricFrame`` set by a pytest plugin (this
   file, loaded with ``-p``) before the test modules are imported, so ``metrics.MetricFrame(...)``,
   ``from fairlearn.metrics import MetricFrame`` and ``MetricFrame.__new__`` all reach polfair's
   class. No test file is copied or edited.

``--fairlearn installed`` (default) tests the fairlearn installed in this Python (the plugin
imports it before pytest puts the checkout on ``sys.path``; Python runs with ``-P``);
``--fairlearn checkout`` the checkout's own ``fairlearn`` package.

It prints the counts (passed on fairlearn, of those passed on polfair, the share) and the node
ids of the baseline-passing tests that fail on polfair, grouped by test function; each must be a
deliberate difference listed in ``docs/from-fairlearn.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PATTERN = "test/unit/metrics/test_metricframe_*.py"


def _plugin() -> None:
    """The plugin half (this module imported by ``-p fairlearn_metricframe_tests``, before pytest
    loads the checkout's conftest files and so puts the checkout on ``sys.path``): import
    fairlearn now; substitute the class when ``POLFAIR_SUBSTITUTE=1``.
    """
    import importlib

    saved = list(sys.path)
    if os.environ.get("POLFAIR_FAIRLEARN") == "installed":  # not the checkout's package (pytest-xdist's workers
        here = os.path.abspath(os.getcwd())  # put the rootdir first on sys.path)
        sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    try:
        fairlearn = importlib.import_module("fairlearn")
        importlib.import_module("fairlearn.metrics")
    finally:
        sys.path[:] = saved

    line = f"[fairlearn {fairlearn.__version__} from {fairlearn.__file__}]"
    if os.environ.get("POLFAIR_SUBSTITUTE") == "1":
        import polfair

        fairlearn.metrics.MetricFrame = polfair.MetricFrame  # type: ignore[misc]
        line += f" MetricFrame -> polfair {polfair.__version__} from {polfair.__file__}"
    sys.stderr.write(line + "\n")


if __name__ != "__main__" and "POLFAIR_SUBSTITUTE" in os.environ:
    _plugin()


def _outcomes(junit: Path) -> dict[str, str]:
    out = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        node = f"{case.get('classname')}::{case.get('name')}"
        kinds = {child.tag for child in case}
        out[node] = "failed" if kinds & {"failure", "error"} else "skipped" if "skipped" in kinds else "passed"
    return out


def run(checkout: Path, polfair_class: bool, workers: str, installed: bool = True) -> dict[str, str]:
    """Outcome per test node of one run (a subprocess of pytest in the checkout's root)."""
    files = sorted(str(p.relative_to(checkout)) for p in checkout.glob(PATTERN))
    if not files:
        raise SystemExit(f"no {PATTERN} under {checkout}: give the root of a fairlearn checkout")
    with tempfile.TemporaryDirectory() as tmp:
        junit = Path(tmp) / "junit.xml"
        python = [sys.executable, "-P"] if installed else [sys.executable]
        cmd = [*python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
               "-p", "fairlearn_metricframe_tests", f"--junitxml={junit}", *files]  # fmt: skip
        if workers != "0":
            cmd += ["-n", workers]
        env = dict(os.environ)
        env["POLFAIR_SUBSTITUTE"] = "1" if polfair_class else "0"
        env["POLFAIR_FAIRLEARN"] = "installed" if installed else "checkout"
        env["PYTHONPATH"] = os.pathsep.join([str(REPO / "bench"), str(REPO), env.get("PYTHONPATH", "")])
        proc = subprocess.run(cmd, cwd=checkout, env=env, capture_output=True, text=True)
        versions = sorted({ln for ln in proc.stderr.splitlines() if ln.startswith("[fairlearn")})
        sys.stderr.write("".join(v + "\n" for v in versions))
        if not junit.exists():
            sys.stderr.write(proc.stdout[-4000:] + proc.stderr[-4000:])
            raise SystemExit("pytest produced no report")
        sys.stderr.write(proc.stdout.strip().splitlines()[-1] + "\n" if proc.stdout.strip() else "")
        return _outcomes(junit)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", type=Path, help="root of a fairlearn source checkout")
    parser.add_argument("-n", default="2", help="pytest-xdist workers (0: none)")
    parser.add_argument("--json", type=Path, help="write the outcomes here")
    parser.add_argument("--fairlearn", choices=["installed", "checkout"], default="installed",
                        help="which fairlearn package the tests import")
    args = parser.parse_args()
    checkout = args.checkout.resolve()
    installed = args.fairlearn == "installed"
    base = run(checkout, False, args.n, installed)
    ours = run(checkout, True, args.n, installed)
    baseline = sorted(n for n, o in base.items() if o == "passed")
    failing = [n for n in baseline if ours.get(n) != "passed"]
    share = 1 - len(failing) / len(baseline) if baseline else 0.0
    print(f"fairlearn itself: {len(baseline)} passed of {len(base)} collected")
    print(f"polfair.MetricFrame: {len(baseline) - len(failing)} of those {len(baseline)} pass ({share:.1%})")
    by_function = Counter(n.split("[")[0] for n in failing)
    for fn, count in sorted(by_function.items()):
        print(f"  FAIL {count:3d}  {fn}")
    if args.json:
        args.json.write_text(json.dumps({"fairlearn": base, "polfair": ours, "failing": failing}, indent=1))


if __name__ == "__main__":
    main()
