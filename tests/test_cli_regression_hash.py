"""The CLI's regression config hash comes from core.request.task_hashed and stays the stored one (issue 38)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import polfair as pf
from polfair.cli import main


@pytest.mark.parametrize(
    ("extra", "want"),
    [
        ([], "5658d183f2680841"),
        (["--weight", "w", "--by", "race", "--ci", "0.9"], "424923454ddf06c7"),
        (["--y-pred", "predicted_hours * 2", "--no-ci"], "1bfc65c3d89c2a4a"),
    ],
)
def test_the_regression_config_hash_is_the_one_etl_jobs_stored(tmp_path: Path, extra: list[str], want: str) -> None:
    src, dst = tmp_path / "a.parquet", tmp_path / "r.parquet"
    pf.load_adult_regression().head(3000).with_columns(w=pl.lit(1.5)).write_parquet(src)
    args = ["report", str(src), "--task", "regression", "--y-true", "hours_per_week", "--y-pred", "predicted_hours",
            "--protected", "sex", "--out", str(dst), "--no-progress", *extra]  # fmt: skip
    assert main(args) == 0
    assert pl.read_parquet(dst)["config_hash"].unique().to_list() == [want]  # pinned: computed before issue 38
