"""Each lattice level of slice_scan reads the input exactly once (a source that counts its scans)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import polars as pl
import pytest

import polfair as pf
from polfair.core.report.run_metadata import request_of

# the report's counting source (tests/core/passes/test_single_pass.py), loaded under its own name
_spec = importlib.util.spec_from_file_location("_pf_counting", Path(__file__).resolve().parents[1] / "core" / "passes" / "test_single_pass.py")
assert _spec is not None and _spec.loader is not None
_counting = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_counting)
CountingSource = _counting.CountingSource


def _frame(n: int = 6000) -> pl.DataFrame:
    i = pl.int_range(n, eager=True)
    return pl.DataFrame(
        {
            "race": (i % 3).replace_strict({0: "a", 1: "b", 2: "c"}, return_dtype=pl.String),
            "sex": (i % 2).replace_strict({0: "f", 1: "m"}, return_dtype=pl.String).cast(pl.Categorical),
            "age": (i * 7 % 71 + 18),
            "month": i % 4,
            "income": (i * 13 % 1000).cast(pl.Float64),
        }
    ).with_columns(
        err=(((i * 11) % 5 < 2) | ((pl.col("race") == "a") & (pl.col("month") == 1) & (i % 3 == 0))).cast(pl.Int64)
    )


@pytest.mark.parametrize("max_level", [1, 2, 3, 4])
def test_one_scan_per_level(max_level: int) -> None:
    df = _frame()
    src = CountingSource(df)
    out = pf.slice_scan(src.lazy(), features=["race", "sex", "month", "age"], errors="err", max_level=max_level,
                        bins=None, min_support=20, k=50)  # fmt: skip
    candidates = request_of(out)["candidates"]  # per level the search ran: its candidates
    assert len(candidates) == max_level
    levels = 1 + sum(c > 0 for c in candidates[1:])  # a level without candidates reads nothing
    assert levels == min(max_level, 3)  # here no level-4 candidate survives the pruning
    assert src.scans == levels
    assert src.rows_read == levels * df.height
    assert out["level"].max() == min(max_level, 3)
    # the same search over the in-memory frame: the same slices
    assert out.equals(pf.slice_scan(df, features=["race", "sex", "month", "age"], errors="err", max_level=max_level,
                                    bins=None, min_support=20, k=50))  # fmt: skip


def test_quantile_bins_of_floats_cost_one_scan_before_level_1_integers_and_edges_none() -> None:
    df = _frame()
    src = CountingSource(df)
    out = pf.slice_scan(src.lazy(), features=["race", "age", "income"], errors="err", max_level=2, min_support=20)
    assert request_of(out)["scans"] == src.scans == 1 + 2
    assert set(request_of(out)["bins"]) == {"age", "income"}
    src = CountingSource(df)  # integer features are cut from their level-1 values: no extra scan
    out = pf.slice_scan(src.lazy(), features=["race", "age", "month"], errors="err", max_level=2, min_support=20)
    assert src.scans == 2
    assert set(request_of(out)["bins"]) == {"age"}  # month has 4 values: each its own
    src = CountingSource(df)
    pf.slice_scan(src.lazy(), features=["race", "age", "income"], errors="err", max_level=2, min_support=20,
                  bins={"age": [30, 50], "income": [250.0, 500.0, 750.0]})  # fmt: skip
    assert src.scans == 2


def test_labels_and_a_metric_still_one_scan_per_level() -> None:
    df = _frame().with_columns(y=(pl.col("err") + pl.col("month")) % 2, p=pl.col("month") % 2)
    src = CountingSource(df)
    out = pf.slice_scan(src.lazy(), features=["race", "sex", "month"], y_true="y", y_pred="p",
                        metric="false_positive_rate", max_level=3, min_support=20)  # fmt: skip
    assert src.scans == len(request_of(out)["candidates"]) <= 3
