"""The HTML page's score and adverse-impact sections (issue 31): the tables' own numbers, intervals
included, on their own page or added to the fairness report's page, and in the CLI's --html."""

from __future__ import annotations

import re
from html import escape, unescape
from pathlib import Path

import polars as pl
import pytest

import polfair as pf
from polfair.cli import main

pytest.importorskip("jinja2")
pytest.importorskip("matplotlib")

PRIVILEGED = {"race": "Caucasian", "sex": "Male"}


@pytest.fixture(scope="module")
def compas() -> pl.DataFrame:
    return pf.load_compas().with_columns(score=pl.col("decile_score") / 10)


@pytest.fixture(scope="module")
def scores(compas: pl.DataFrame) -> pl.DataFrame:
    return pf.score_report(compas, y_true="two_year_recid", y_score="score", protected=["race", "sex"],
                           privileged=PRIVILEGED)  # fmt: skip


@pytest.fixture(scope="module")
def battery(compas: pl.DataFrame) -> pl.DataFrame:
    return pf.adverse_impact(compas, y_pred=pl.col("decile_score") < 5, protected=["race", "sex"], preset="eeoc")


def _section(page: str, sid: str) -> str:
    start = page.index(f'<section id="{sid}"')
    return page[start : page.index("</section>", start)]


def _row(section: str, table_class: str, attribute: str, group: str) -> str:
    attr, grp = re.escape(escape(attribute)), re.escape(escape(group))
    table = re.search(rf'<table class="{table_class}" data-attribute="{attr}">(.*?)</table>', section, re.S)
    assert table, (table_class, attribute)
    row = re.search(rf'<tr[^>]*data-group="{grp}"[^>]*>(.*?)</tr>', table.group(1), re.S)
    assert row, group
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", row.group(1))).split())


def test_the_score_page_shows_each_groups_auc_with_its_interval(scores: pl.DataFrame) -> None:
    page = pf.to_html(scores, title="Scores", generated_at="2026-01-01")
    section = _section(page, "pf-scores")
    groups = scores.filter(pl.col("metric") == "roc_auc", pl.col("group").is_not_null(), pl.col("value_lo").is_not_null())
    assert groups.height >= 10
    for r in groups.iter_rows(named=True):
        text = _row(section, "pf-scores", r["attribute"], r["group"])
        assert f"{r['value']:.3f} [{r['value_lo']:.3f}, {r['value_hi']:.3f}]" in text, (r["group"], text)
        if r["group"] != r["reference_group"] and r["difference_lo"] is not None:
            assert f"{r['difference']:+.3f} [{r['difference_lo']:+.3f}, {r['difference_hi']:+.3f}]" in text
    assert section.count("<svg") == 3  # one chart per attribute set: race, sex, race & sex
    assert "delong" in section and "cochran_q" in section  # the methods and tests named
    assert not re.search(r'(src|href)="(?!#)', page)  # self-contained


def test_the_adverse_impact_page_is_the_eeoc_table(battery: pl.DataFrame) -> None:
    page = pf.to_html(battery, title="EEOC", generated_at="2026-01-01")
    section = _section(page, "pf-adverse-impact")
    for r in battery.iter_rows(named=True):
        text = _row(section, "pf-adverse", r["attribute"], r["group"])
        if r["excluded"]:  # below the small-group policy's minimum (30): no ratio, the policy's words
            assert r["n"] < 30 and "insufficient data" in text and "below 4/5" not in text, text
            continue
        assert f"{r['n']:,}" in text and f"{100 * r['selection_rate']:.1f}%" in text and f"{r['impact_ratio']:.3f}" in text
        assert ("below 4/5" in text) == (r["four_fifths_pass"] is False), (r["group"], text)
    for attr, part in battery.group_by("attribute"):
        finding = re.search(rf'class="pf-ai-finding" data-attribute="{re.escape(escape(attr[0]))}" data-below="(\d+)"',
                            section)
        assert finding and int(finding.group(1)) == int((part["four_fifths_pass"] == False).sum())  # noqa: E712
    assert "29 CFR 1607.4(D)" in section


def test_the_fairness_page_gets_both_sections_before_its_methods(compas: pl.DataFrame, scores: pl.DataFrame,
                                                                 battery: pl.DataFrame, tmp_path: Path) -> None:  # fmt: skip
    report = pf.fairness_report(compas, y_true="two_year_recid", y_pred=pl.col("decile_score") >= 5,
                                protected=["race", "sex"], privileged=PRIVILEGED)  # fmt: skip
    out = pf.write_html(report, tmp_path / "all.html", scores=scores, adverse_impact=battery, generated_at="2026-01-01")
    page = out.read_text(encoding="utf-8")
    heads = re.findall(r'<h2 id="([\w-]+)">(\d+)\.', page)
    assert [h for h, _ in heads][-3:] == ["pf-h-scores", "pf-h-adverse-impact", "pf-h-methods"]
    assert [int(n) for _, n in heads] == list(range(1, len(heads) + 1))
    assert 'href="#pf-scores"' in page and 'href="#pf-adverse-impact"' in page
    plain = pf.to_html(report, generated_at="2026-01-01")
    assert "pf-scores" not in plain and re.findall(r'<h2 id="pf-h-methods">(\d+)', plain) == ["6"]


def test_by_periods_show_one_snapshot(compas: pl.DataFrame) -> None:
    df = compas.with_columns(year=pl.col("compas_screening_date").str.slice(0, 4))
    rep = pf.score_report(df, y_true="two_year_recid", y_score="score", protected="race", by="year")
    latest = sorted(rep["year"].unique())[-1]
    page = pf.to_html(rep, generated_at="2026-01-01")
    assert f"(year = {latest})" in page
    auc = rep.filter(year=latest, group="Caucasian", metric="roc_auc")["value"].item()
    assert f"{auc:.3f}" in _row(_section(page, "pf-scores"), "pf-scores", "race", "Caucasian")
    first = sorted(rep["year"].unique())[0]
    assert f"(year = {first})" in pf.to_html(rep, snapshot={"year": first}, generated_at="2026-01-01")
    with pytest.raises(ValueError, match="selects no row"):
        pf.to_html(rep, snapshot={"year": "1900"})


def test_sections_refuse_what_they_cannot_show(scores: pl.DataFrame) -> None:
    reg = pf.regression_report(pf.load_adult_regression(), y_true="hours_per_week", y_pred="predicted_hours",
                               protected="sex")  # fmt: skip
    with pytest.raises(ValueError, match="not a regression report"):
        pf.to_html(reg, scores=scores)
    small = pl.DataFrame({"y": [1, 0, 1, 0], "p": [1, 0, 0, 0], "g": ["a", "a", "b", "b"]})
    report = pf.fairness_report(small, y_true="y", y_pred="p", protected="g")
    with pytest.raises(TypeError, match="score_report"):
        pf.to_html(report, scores={"roc_auc": 0.7})
    with pytest.raises(ValueError, match="empty"):
        pf.to_html(report, adverse_impact=pl.DataFrame(schema={"attribute": pl.String}))


def test_the_cli_page_has_the_adverse_impact_section(compas: pl.DataFrame, tmp_path: Path) -> None:
    data = tmp_path / "compas.parquet"
    compas.write_parquet(data)
    page = tmp_path / "r.html"
    args = ["report", str(data), "--y-true", "two_year_recid", "--y-pred", "decile_score < 5", "--protected", "race",
            "--adverse-impact", "eeoc", "--html", str(page)]  # fmt: skip
    assert main(args) == 0
    html = page.read_text(encoding="utf-8")
    assert '<section id="pf-adverse-impact"' in html and 'data-group="African-American"' in html
