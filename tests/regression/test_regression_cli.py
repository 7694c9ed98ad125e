"""``polfair report --task regression`` and ``polfair demo --task regression`` (issue 23)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polfair as pf
from polfair.cli import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def adult_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("reg") / "adult.parquet"
    pf.load_adult_regression().gather_every(12).write_parquet(path)
    return path


def test_report_equals_the_library_call(adult_file, tmp_path):
    out = tmp_path / "r.parquet"
    code = main([
        "report", str(adult_file), "--task", "regression", "--y-true", "hours_per_week", "--y-pred",
        "predicted_hours", "--protected", "sex", "CASE WHEN age < 30 THEN 'young' ELSE 'older' END AS age_band",
        "--weight", "fnlwgt", "--privileged", "sex=Male", "--no-run-metadata", "--out", str(out),
    ])  # fmt: skip
    assert code == 0
    age_band = pl.when(pl.col("age") < 30).then(pl.lit("young")).otherwise(pl.lit("older")).alias("age_band")
    want = pl.read_parquet(adult_file).pipe(
        pf.regression_report, y_true="hours_per_week", y_pred="predicted_hours", protected=["sex", age_band],
        weight="fnlwgt", privileged={"sex": "Male"},
    )  # fmt: skip
    got = pl.read_parquet(out)
    assert_frame_equal(got.drop("group_key"), want.drop("group_key"), check_dtypes=False)


def test_report_prints_a_summary_and_no_ci_drops_the_interval_columns(adult_file, tmp_path, capsys):
    base = ["report", str(adult_file), "--task", "regression", "--y-true", "hours_per_week", "--y-pred",
            "predicted_hours", "--protected", "sex", "race"]  # fmt: skip
    assert main(base) == 0
    text = capsys.readouterr().out
    assert "sex (reference: Male)" in text and "mean error" in text and max(map(len, text.splitlines())) <= 100
    out = tmp_path / "r.parquet"
    assert main([*base, "--no-ci", "--by", "split", "--out", str(out)]) == 0
    rep = pl.read_parquet(out)
    assert "value_lo" not in rep.columns and {"split", "run_id"} <= set(rep.columns)
    assert set(rep["split"].cast(pl.String).unique()) == {"train", "test"}


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--y-score", "x"], "--y-score"),
        (["--favorable", "1"], "--favorable"),
        (["--reference", "best"], "--reference best"),
        # given at its default value, still refused (issue 30: slipped through on main)
        (["--threshold", "0.5"], "--threshold"),
        (["--y-sc", "x"], "--y-score"),  # an abbreviation is the same option (--thr is ambiguous: --thresholds)
        (["--exact-sums"], "--exact-sums: the regression moments are Float64 sums"),  # was silently ignored
    ],
)
def test_classification_options_are_refused(adult_file, capsys, extra, needle):
    args = ["report", str(adult_file), "--task", "regression", "--y-true", "hours_per_week", "--y-pred",
            "predicted_hours", "--protected", "sex", *extra]  # fmt: skip
    assert main(args) == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err


def test_a_non_numeric_prediction_is_a_clear_error(adult_file, capsys):
    args = ["report", str(adult_file), "--task", "regression", "--y-true", "hours_per_week", "--y-pred", "sex",
            "--protected", "race"]  # fmt: skip
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "y_pred" in err and "numeric" in err and "Traceback" not in err


def test_demo_regression_writes_report_and_page(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    out, page = tmp_path / "demo.parquet", tmp_path / "demo.html"
    assert main(["demo", "--task", "regression", "--out", str(out), "--html", str(page)]) == 0
    text = capsys.readouterr().out
    assert "hours_per_week" in text and "Female" in text
    rep = pl.read_parquet(out)
    female = rep.filter(attribute="sex", group="Female", metric="mean_error")
    # women's hours are over-predicted relative to men's (docs/regression.md)
    assert female["difference_lo"].item() > 0
    html = page.read_text(encoding="utf-8")
    assert html.count("<svg") >= 6 and "Prediction distributions by sex" in html


def test_demo_regression_runs_from_the_tracked_files(tmp_path):
    """A fresh clone has only git's tracked files: copy them and run the demo there, in a new process."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    listed = subprocess.run(["git", "ls-files", "-z", "polfair"], cwd=ROOT, capture_output=True, check=True)
    for name in filter(None, listed.stdout.decode().split("\0")):
        src, dst = ROOT / name, tmp_path / "clone" / name
        if src.is_file():
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "clone")}
    res = subprocess.run([sys.executable, "-m", "polfair", "demo", "--task", "regression"], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert res.returncode == 0, res.stderr[-2000:]
    assert "48,842 people" in res.stdout and "race (reference: White)" in res.stdout
