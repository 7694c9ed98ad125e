"""One name, one meaning: every (row kind, metric) of a report has exactly one glossary entry, and
``docs/metrics.md`` is generated from that one table."""

from __future__ import annotations

from pathlib import Path

import polars as pl

import polfair as pf
from polfair.core.glossary import REPORT_METRICS, glossary_markdown, row_kind

DOC = Path(__file__).resolve().parents[2] / "docs" / "metrics.md"


def _kinds(report: pl.DataFrame) -> set[tuple[str, str]]:
    rows = report.select(pl.col("attribute").cast(pl.String), pl.col("group").cast(pl.String),
                         pl.col("metric").cast(pl.String)).unique()  # fmt: skip
    return {(row_kind(a, g), m) for a, g, m in rows.iter_rows()}


def test_every_report_row_has_one_meaning():
    df = pf.load_compas()
    full = df.pipe(pf.fairness_report, y_true="two_year_recid", y_pred=pl.col("decile_score") >= 5,
                   y_score=pl.col("decile_score") / 10, protected=["race", "sex"])  # fmt: skip
    labels = df.pipe(pf.fairness_report, y_true="two_year_recid", protected=["race", "sex"])
    seen = _kinds(full) | _kinds(labels)
    missing = sorted(seen - set(REPORT_METRICS))
    assert not missing, f"report rows without a glossary entry: {missing}"
    # the one name used by two peers for two formulas keeps each peer's meaning on its row kind
    assert REPORT_METRICS[("group", "equalized_odds_difference")].source.startswith("aif360")
    assert REPORT_METRICS[("attribute", "equalized_odds_difference")].source.startswith("fairlearn")


def test_row_kinds_carry_their_formulas():
    df = pl.DataFrame({"y": [1, 0, 1, 1, 0, 0, 1, 0], "p": [1, 1, 0, 1, 0, 1, 1, 0], "g": list("aaabbbcc")})
    rep = pf.fairness_report(df, y_true="y", y_pred="p", protected="g", privileged={"g": "a"})
    eod = rep.filter(pl.col("metric") == "equalized_odds_difference")
    by_group = dict(zip(eod["group"].cast(pl.String), eod["value"]))
    # group rows: aif360's max(|ΔFPR|, |ΔTPR|) against the reference a (TPR a=1/2, b=1, c=1; FPR a=1, b=1/2, c=0)
    assert by_group["a"] == 0.0 and by_group["b"] == 0.5 and by_group["c"] == 1.0
    # attribute row: fairlearn's max(range TPR, range FPR) = max(0.5, 1.0)
    assert by_group[None] == 1.0
    assert df.select(pf.equalized_odds_difference("y", "p", sensitive_features="g")).item() == 1.0


def test_the_glossary_page_is_current():
    assert DOC.read_text(encoding="utf-8") == glossary_markdown(), (
        "docs/metrics.md is stale: run `python -m polfair.core.glossary > docs/metrics.md`"
    )
