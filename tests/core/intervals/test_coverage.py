"""A fast, seeded slice of bench/coverage.py: the 95% intervals cover, the tests hold their level."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[3] / "bench" / "coverage.py"


@pytest.fixture(scope="module")
def coverage():
    spec = importlib.util.spec_from_file_location("polfair_bench_coverage", _PATH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


FAST = {
    "balanced 1000/1000, p 0.30/0.40",
    "small groups n 10..50 vs 200, p 0.30/0.45",
    "small groups n 10..50 vs 200, H0 p = 0.30",
    "near 1: 200/200, p 0.97/0.99",
    "odds: 40 vs 400, TPR 0.6/0.75, FPR 0.2/0.1",
    "weighted (lognormal sd 1): 60/200, H0 p = 0.3",
    "clustered: 2 x 100 clusters x 10 rows, sd 1.0",
    "entropy, analytic: 30 small groups n 5..40",
}


def test_coverage_slice(coverage):
    rows = coverage.run(reps=500, boot=50, seed=7, only=FAST)
    got = {(name, fam): value for name, fam, value, _, _ in rows}
    assert {name for name, _ in got} == FAST
    for (name, fam), value in got.items():
        if fam.startswith("test:"):
            assert value <= 0.09, (name, fam, value)  # nominal 5%
        elif "naive" in fam or "Newcombe, iid" in fam:
            assert value < 0.88, (name, fam, value)  # the failures the methods fix are visible
        else:
            assert 0.90 <= value <= 1.0, (name, fam, value)  # nominal 95%
