"""Every (row kind, metric) of a regression report has exactly one glossary entry, and no entry is unused."""

from __future__ import annotations

import polars as pl

from polfair.core import regression as rg
from polfair.core.glossary import REGRESSION_REPORT_METRICS, row_kind


def test_every_regression_row_has_a_glossary_entry() -> None:
    df = pl.DataFrame({"y": [1.0, 2, 3, 4, 5, 7], "p": [1.5, 2, 2.5, 4, 5.5, 6], "g": ["a", "a", "a", "b", "b", "b"]})
    rep = rg.regression_report_from_cells(rg.regression_cells(df.lazy(), y_true="y", y_pred="p", keys=["g"]), protected="g")
    seen = {(row_kind(a, g), m) for a, g, m in rep.select("attribute", "group", pl.col("metric").cast(pl.String)).iter_rows()}
    assert seen == set(REGRESSION_REPORT_METRICS)
