"""The terminal summary folded over report batches equals the summary of the whole report (issue 31).

``summarize(fairness_report_batches(...))`` holds the shown groups' rows and one row of statistics
per group, never the report; the text must be the same to the character. Memory is measured by
``bench/summary_memory.py``, not here.
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import polars as pl
import pytest

import polfair as pf
from polfair.exceptions import PolfairError
from polfair.outputs.summary import summarize


@pytest.fixture(scope="module")
def frame() -> pl.DataFrame:
    rng = np.random.default_rng(3)
    n = 4000
    return pl.DataFrame({
        "y": rng.integers(0, 2, n), "p": rng.integers(0, 2, n),
        "zip": [f"z{i:03d}" for i in rng.integers(0, 150, n)],  # many groups: most are counted, not shown
        "sex": rng.choice(["f", "m"], n), "day": rng.integers(1, 4, n),
    })  # fmt: skip


CASES = {
    "many groups": {"protected": ["zip", "sex"]},
    "intersections": {"protected": ["zip", "sex"], "intersections": 2, "ci": None},
    "periods": {"protected": ["zip", "sex"], "by": "day", "ci": None},
    "thresholds": {"protected": ["zip", "sex"], "thresholds": "four_fifths", "min_sample_size": 20, "ci": None},
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("options", [{}, {"max_groups": 2, "max_periods": 1, "attributes": ["zip"]}])
def test_batches_give_the_summary_of_the_whole_report(frame: pl.DataFrame, case: str, options: dict) -> None:
    kw = {"y_true": "y", "y_pred": "p", **CASES[case]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        whole = summarize(pf.fairness_report(frame, **kw), **options)
        folded = summarize(pf.fairness_report_batches(frame, batch_rows=1500, **kw), **options)
    assert folded == whole
    assert "more groups" in whole


def test_an_empty_iterable_is_a_clear_error() -> None:
    with pytest.raises(PolfairError, match="empty"):
        summarize(iter([]))


def test_the_cli_prints_the_folded_summary(tmp_path, frame: pl.DataFrame) -> None:
    path = tmp_path / "f.parquet"
    frame.write_parquet(path)
    out = subprocess.run([sys.executable, "-m", "polfair", "report", str(path), "--y-true", "y", "--y-pred", "p",
                          "--protected", "zip", "sex", "--no-ci"], capture_output=True, text=True, check=True).stdout  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = summarize(pf.fairness_report(frame, y_true="y", y_pred="p", protected=["zip", "sex"], ci=None))
    assert out.rstrip("\n") == expected


def test_write_report_takes_a_path(tmp_path) -> None:
    """``pf.write_report`` takes a ``pathlib.Path`` (it called ``.lower()`` on it)."""
    report = pf.fairness_report(pl.DataFrame({"y": [1, 0], "g": ["a", "b"]}), y_true="y", protected="g", ci=None)
    pf.write_report(report, tmp_path / "r.parquet")
    assert pl.read_parquet(tmp_path / "r.parquet").height == report.height
