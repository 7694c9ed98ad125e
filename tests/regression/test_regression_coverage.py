"""A fast, seeded slice of bench/coverage.py's regression scenarios: the intervals cover, Welch holds its level."""

from __future__ import annotations

import runpy
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

_PATH = Path(__file__).resolve().parents[2] / "bench" / "coverage.py"


@pytest.fixture(scope="module")
def coverage() -> SimpleNamespace:
    return SimpleNamespace(**runpy.run_path(str(_PATH)))  # the bench module's functions (its main does not run)


def test_wages_intervals_cover(coverage) -> None:
    res = coverage.regression_two_group(np.random.default_rng(7), 400, 200, 1000, 0.0, 0.5)
    for fam in ("mean_outcome: value", "mean_error: value", "mean_absolute_error: value", "r2_score: value",
                "mean_error: difference, Welch", "mean_absolute_error: difference, Welch"):  # fmt: skip
        cov, undefined = res[fam]
        assert 0.90 <= cov <= 0.99, (fam, cov)  # 95% nominal; MC s.e. 1.1% at 400 replicates
        assert undefined == 0.0


def test_welch_type_one_error_under_h0_weighted(coverage) -> None:
    res = coverage.regression_two_group(np.random.default_rng(8), 400, 60, 200, 0.0, 0.0, weights=True)
    for fam in ("mean_error: Welch test (Kish n_eff) (type-I)", "mean_absolute_error: Welch test (Kish n_eff) (type-I)"):
        rate, _ = res[fam]
        assert rate <= 0.09, (fam, rate)
    assert 0.90 <= res["mean_outcome: value (Kish n_eff)"][0] <= 0.99
