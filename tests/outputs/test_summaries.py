"""``pf.summarize`` (issue 29): one function for every report kind, a clear error otherwise; the
regression summary's columns fit the numbers; the regression page's wording follows the interval."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import polfair as pf
from polfair.exceptions import PolfairError
from polfair.outputs.summaries import report_kind


@pytest.fixture(scope="module")
def frame() -> pl.DataFrame:
    rng = np.random.default_rng(6)
    n = 2000
    g = rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2])
    s = np.clip(rng.beta(2, 2, n) + 0.1 * (g == "a"), 0, 1).round(3)
    y = (rng.random(n) < s).astype(np.int8)
    salary = 40_000 + 120_000 * rng.random(n) + 15_000 * (g == "a")
    pred = salary + rng.normal(0, 8_000, n) + 4_000 * (g == "b")
    return pl.DataFrame({"g": g, "y": y, "s": s, "salary": salary, "pred_salary": pred})


def test_summarize_dispatches_on_the_report_kind(frame: pl.DataFrame) -> None:
    cls = pf.fairness_report(frame, y_true="y", y_score="s", protected="g", ci=None)
    reg = pf.regression_report(frame, y_true="salary", y_pred="pred_salary", protected="g", privileged={"g": "a"})
    sco = pf.score_report(frame, y_true="y", y_score="s", protected="g", ci=None)
    ai = pf.adverse_impact(frame, y_pred=pl.col("s") >= 0.5, protected="g", favorable=True)
    assert [report_kind(r) for r in (cls, reg, sco, ai)] == ["classification", "regression", "score", "adverse_impact"]
    texts = {k: pf.summarize(r) for k, r in (("cls", cls), ("reg", reg), ("sco", sco), ("ai", ai))}
    assert "FPR" in texts["cls"] and "not judged (no thresholds)" in texts["cls"]
    assert "mean error" in texts["reg"] and "four-fifths" not in texts["reg"] and "FPR" not in texts["reg"]
    assert "AUC" in texts["sco"] and "ABROCA" in texts["sco"]
    assert "impact" in texts["ai"] and "4/5" in texts["ai"]
    for kind, text in texts.items():
        assert max(len(line) for line in text.splitlines()) <= 100, kind
    # the regression summary through pf.summarize is summarize_regression's
    from polfair.outputs.regression import summarize_regression

    assert texts["reg"] == summarize_regression(reg)


def test_summarize_refuses_what_it_cannot_summarise(frame: pl.DataFrame) -> None:
    cells = pf.confusion_counts(frame, y_true="y", y_score="s", protected="g").collect()  # a cell table
    with pytest.raises(PolfairError, match=r"summarize cannot tell which report this is .*adverse_impact, ranking, "
                                           r"regression, score, classification"):  # fmt: skip
        pf.summarize(cells)
    with pytest.raises(TypeError, match="got dict"):
        pf.summarize({"metric": "x"})  # type: ignore[arg-type]


def test_the_regression_summary_keeps_every_digit(frame: pl.DataFrame) -> None:
    reg = pf.regression_report(frame, y_true="salary", y_pred="pred_salary", protected="g", privileged={"g": "a"})
    text = pf.summarize(reg)
    rows = reg.filter(pl.col("group").is_not_null(), attribute="g")
    for metric, digits in (("mean_outcome", 2), ("mean_prediction", 2), ("mean_absolute_error", 2),
                           ("root_mean_squared_error", 2), ("r2_score", 3), ("ks_distance", 3)):  # fmt: skip
        for group, value in rows.filter(metric=metric).select("group", "value").iter_rows():
            if value is None:  # KS of the reference group
                continue
            assert f" {value:.{digits}f}" in text, (metric, group, value)  # 100,000s: no digit cut, no column lost
    table = [line for line in text.splitlines() if line.startswith(("group ", "a ", "b ", "c "))][:4]
    assert len({len(line.rstrip("–").rstrip()) for line in table[1:]} | {len(table[0])}) <= 2  # columns line up
    assert max(len(line) for line in text.splitlines()) <= 100


@pytest.mark.parametrize(
    ("me", "lo", "hi", "words"),
    [(2.0, 0.5, 3.5, "over-predicted on average (interval"), (-2.0, -3.0, -0.5, "under-predicted on average"),
     (2.0, -0.5, 4.5, "not clearly over- or under-predicted"), (-2.0, -4.5, 0.5, "not clearly"),
     (2.0, None, None, "over-predicted on average (no interval)")],  # fmt: skip
)
def test_the_regression_page_words_follow_the_interval(me: float, lo: float | None, hi: float | None,
                                                       words: str) -> None:  # fmt: skip
    from polfair.outputs.html.regression import _bias_words

    got = _bias_words(me, lo, hi)
    assert words in got
    if lo is not None and lo < 0 < hi:  # type: ignore[operator]
        assert "over-predicted on average" not in got and "under-predicted on average" not in got
