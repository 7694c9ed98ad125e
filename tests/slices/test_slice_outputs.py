"""Where people look at a slice search: the terminal summary, the HTML section and page, the CLI."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import numpy as np
import polars as pl
import pytest

import polfair as pf
from polfair.cli import main
from polfair.outputs.slices import summarize_slices


@pytest.fixture(scope="module")
def compas() -> pl.DataFrame:
    return pf.load_compas().with_columns(pred=(pl.col("decile_score") >= 5).cast(pl.Int64))


@pytest.fixture(scope="module")
def result(compas: pl.DataFrame) -> pl.DataFrame:
    return pf.slice_scan(compas, features=["race", "sex", "age_cat", "priors_count", "c_charge_degree"],
                         y_true="two_year_recid", y_pred="pred", metric="false_positive_rate", k=6)  # fmt: skip


def test_summary_fits_100_columns_and_says_what_was_searched(result: pl.DataFrame) -> None:
    text = summarize_slices(result)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 100
    assert lines[0] == "Worst slices by SliceLine score: metric=false_positive_rate"
    assert lines[1].startswith("alpha 0.95; up to 3 features; support >= 32 rows; 3,363 rows; false positive rate")
    assert f"{result['n_evaluated'][0]:,} slices evaluated; p-values adjusted (holm)" in " ".join(lines[1:3])
    for i, s in enumerate(result["slice"], 1):  # every slice, numbered, with its predicates
        assert any(line.startswith(f"{i:>2}  ") and s.split(" & ")[0] in line for line in lines)
    row = next(line for line in lines if line.startswith("1  ") and "[" in line and "=" not in line)
    r = result.row(0, named=True)
    assert f"{r['error_mean']:.3f} [{r['value_lo']:.3f}, {r['value_hi']:.3f}]" in row
    assert f"{r['n']:,}" in row
    short = summarize_slices(result, max_slices=2)
    assert f"... and {result.height - 2} more slices" in short
    with pytest.raises(TypeError, match="slice_scan"):
        summarize_slices(pl.DataFrame({"a": [1]}))


def test_summary_of_an_empty_search() -> None:
    out = pf.slice_scan(pl.DataFrame({"g": ["a", "b"] * 20, "err": [0, 1] * 20}), features=["g"], errors="err")
    assert "nothing stands out" in summarize_slices(out)


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: list[str] = []
        self.refs: list[str] = []
        self.rows: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id"):
            self.ids.append(a["id"] or "")
        self.refs += [v or "" for k, v in attrs if k in ("src", "href")]
        if tag == "tr" and a.get("data-slice") is not None:
            self.rows.append(a["data-slice"] or "")


def _page(html: str) -> _Page:
    p = _Page()
    p.feed(html)
    return p


def test_the_slices_page_and_section(result: pl.DataFrame, compas: pl.DataFrame, tmp_path) -> None:
    html = pf.to_html(result, title="COMPAS slices", generated_at="2026-01-01")
    page = _page(html)
    assert html.startswith("<!DOCTYPE html>") and "pf-slices" in page.ids
    assert all(r.startswith("#") for r in page.refs)  # nothing outside the page
    assert page.rows == result["slice"].to_list()
    assert html.count("<svg") == 1 and "false positive rate (square" in html
    assert f"It evaluated {result['n_evaluated'][0]:,} slices" in html
    report = pf.fairness_report(compas, y_true="two_year_recid", y_pred="pred", protected=["race", "sex"])
    with_section = pf.to_html(report, slices=result, generated_at="2026-01-01")
    plain = pf.to_html(report, generated_at="2026-01-01")
    assert "pf-slices" in _page(with_section).ids and "pf-slices" not in _page(plain).ids
    assert '<a href="#pf-slices">Slices</a>' in with_section
    assert re.search(r"6\. Slices: where the model errs most.*7\. Methods", with_section, re.S)
    assert "6. Methods" in plain
    out = pf.write_html(result, tmp_path / "s.html")
    assert out.read_text(encoding="utf-8").count('data-slice="') == result.height
    with pytest.raises(TypeError, match="slice_scan"):
        pf.to_html(report, slices=report)


def test_hostile_values_are_escaped() -> None:
    bad = '<script>alert("x")</script>'
    df = pl.DataFrame({"g": [bad, "ok"] * 60, "err": [1, 0] * 60})
    html = pf.to_html(pf.slice_scan(df, features=["g"], errors="err", min_support=5), generated_at="2026-01-01")
    assert bad not in html and "&lt;script&gt;" in html


def test_cli_prints_writes_and_speaks_in_flags(tmp_path, capsys, compas: pl.DataFrame) -> None:
    src = tmp_path / "compas.parquet"
    compas.select("race", "sex", "age", "priors_count", "two_year_recid", "pred").write_parquet(src)
    assert main(["slices", str(src), "--features", "race", "sex", "age", "--errors", "two_year_recid != pred",
                 "--alpha", "0.99", "--k", "3"]) == 0  # fmt: skip
    text = capsys.readouterr().out
    assert text.startswith("Worst slices by SliceLine score: errors=two_year_recid != pred\nalpha 0.99;")
    want = pf.slice_scan(pl.scan_parquet(src), features=["race", "sex", "age"],
                         errors=(pl.col("two_year_recid") != pl.col("pred")).alias("e"), alpha=0.99, k=3)  # fmt: skip
    assert all(s in text for s in want["slice"])
    out, page = tmp_path / "s.parquet", tmp_path / "s.html"
    assert main(["slices", str(src), "--features", "race", "sex", "priors_count", "--y-true", "two_year_recid",
                 "--y-pred", "pred", "--metric", "false_positive_rate", "--out", str(out), "--html", str(page)]) == 0  # fmt: skip
    got = pl.read_parquet(out)
    assert got.equals(pf.slice_scan(pl.scan_parquet(src), features=["race", "sex", "priors_count"],
                                    y_true="two_year_recid", y_pred="pred", metric="false_positive_rate"))  # fmt: skip
    assert "pf-slices" in page.read_text(encoding="utf-8")
    capsys.readouterr()
    assert main(["slices", str(src), "--features", "race", "--y-true", "two_year_recid", "--y-pred", "pred",
                 "--metric", "accuracy"]) == 2  # fmt: skip
    assert "pass its complement --metric error_rate" in capsys.readouterr().err
    assert main(["slices", str(src), "--features", "race", "--errors", "age", "--min-support", "1.5"]) == 2
    assert "--min-support" in capsys.readouterr().err
    assert main(["slices", str(src), "--features", "race"]) == 2
    assert "needs --errors" in capsys.readouterr().err


def test_cli_bins_zero_keeps_every_value(tmp_path, capsys) -> None:
    rng = np.random.default_rng(0)
    src = tmp_path / "x.csv"
    x = rng.integers(0, 30, 500)
    pl.DataFrame({"x": x, "e": (x < 3) | (rng.random(500) < 0.1)}).write_csv(src)
    assert main(["slices", str(src), "--features", "x", "--errors", "e", "--bins", "0", "--min-support", "5",
                 "--out", str(tmp_path / "o.csv")]) == 0  # fmt: skip
    got = pl.read_csv(tmp_path / "o.csv")
    assert got.height and got.schema["x"] == pl.Int64  # not cut into bins
