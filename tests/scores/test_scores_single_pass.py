"""Every request of the score, regulatory, mitigation and proxy rooms reads its input exactly once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl
import pytest
from counting_source import CountingSource

from polfair.mitigation import group_thresholds, reweighing
from polfair.proxies import proxy_report, proxy_scan
from polfair.regulatory import adverse_impact
from polfair.scores import (
    precision_recall_curve,
    reliability_curve,
    roc_curve,
    score_counts,
    score_report,
    threshold_sweep,
)


def _frame(n: int = 4000) -> pl.DataFrame:
    i = pl.int_range(n, eager=True)
    return pl.DataFrame(
        {
            "id": i,
            "race": (i % 3).replace_strict({0: "a", 1: "b", 2: "c"}, return_dtype=pl.String),
            "sex": (i % 2).replace_strict({0: "f", 1: "m"}, return_dtype=pl.String),
            "zip": (i % 7).cast(pl.String),
            "age": i % 60 + 18,
            "month": i % 4,
            "y": ((i * 7) % 5 < 2).cast(pl.Int64),
            "p": ((i * 11) % 3 == 0).cast(pl.Int64),
            "s": ((i * 13) % 101) / 100.0,
            "w": (i % 3 + 1).cast(pl.Float64),
        }
    )


SCORE = {"y_true": "y", "y_score": "s", "protected": ["race", "sex"], "weight": "w"}

CALLS: dict[str, Callable[[pl.LazyFrame], Any]] = {
    "score_counts": lambda lf: score_counts(lf, **SCORE, by="month"),
    "score_report": lambda lf: score_report(lf, **SCORE, by="month"),
    "threshold_sweep": lambda lf: threshold_sweep(lf, **SCORE, by="month", thresholds=[0.3, 0.5], rank_pct=[0.1]),
    "roc_curve": lambda lf: roc_curve(lf, **SCORE),
    "precision_recall_curve": lambda lf: precision_recall_curve(lf, **SCORE),
    "reliability_curve": lambda lf: reliability_curve(lf, **SCORE),
    "adverse_impact_eeoc": lambda lf: adverse_impact(lf, y_pred="p", protected=["race", "sex"], by="month"),
    "adverse_impact_nyc_score": lambda lf: adverse_impact(
        lf, y_score="s", preset="nyc_ll144", protected=["race", "sex"]
    ),
    "group_thresholds": lambda lf: group_thresholds(lf, y_true="y", y_score="s", protected="race",
                                                    constraint="equalized_odds"),
    "reweighing": lambda lf: reweighing(lf, y_true="y", protected=["race", "sex"]),
    "proxy_scan": lambda lf: proxy_scan(lf, protected="sex", features=["zip", "age", "race"], y_true="y", y_pred="p"),
    "proxy_report": lambda lf: proxy_report(lf, protected="sex", features=["zip", "age"], y_true="y"),
}  # fmt: skip


@pytest.mark.parametrize("name", list(CALLS))
def test_one_scan_per_request(name: str) -> None:
    df = _frame()
    src = CountingSource(df, batch_size=700)
    out = CALLS[name](src.lazy())
    assert src.scans == 1
    assert src.rows_read == df.height
    table = out if isinstance(out, pl.DataFrame) else out.table
    assert table.height > 0
