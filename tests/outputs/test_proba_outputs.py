"""What a person sees of a report whose groups are estimated from proxies: the summary, the page, the CLI."""

from __future__ import annotations

import polars as pl
import pytest

import polfair as pf
from polfair.cli import main, parse_protected_proba_flag
from polfair.core.report.run_metadata import request_of
from polfair.datasets import BISG_GROUPS
from polfair.outputs.summary import summarize

PROBA = {"race": {g: f"p_{g}" for g in BISG_GROUPS}}


@pytest.fixture(scope="module")
def book() -> pl.DataFrame:
    return pf.make_bisg_lending(3_000, seed=4)


def test_summary_and_page_say_the_groups_are_estimated(book: pl.DataFrame) -> None:
    for assignment, words in (("weighted", "tends to understate disparities"),
                              ("argmax", "generally exaggerating disparities")):  # fmt: skip
        rep = pf.fairness_report(book, y_true="repaid", y_pred="approved", protected_proba=PROBA,
                                 proba_assignment=assignment)  # fmt: skip
        text = summarize(rep)
        assert text.startswith("Note: Groups of 'race' are estimated from proxies")
        assert words in " ".join(text.split()) and "Chen, Kallus, Mao, Svacha & Udell" in text
        assert max(len(line) for line in text.splitlines()) <= 100
        page = pf.to_html(rep)
        assert 'id="pf-estimated"' in page and words in page
        assert "race (" + assignment + " estimator): white = p_white" in page
    plain = pf.fairness_report(book, y_true="repaid", y_pred="approved", protected="sex")
    assert "estimated" not in summarize(plain) and 'id="pf-estimated"' not in pf.to_html(plain)


def test_cli_flag(book: pl.DataFrame, tmp_path, capsys) -> None:
    src = tmp_path / "book.parquet"
    book.write_parquet(src)
    out = tmp_path / "r.parquet"
    flag = "race=white:p_white,black:p_black,hispanic:p_hispanic,asian:p_asian,other"
    assert main(["report", str(src), "--y-true", "repaid", "--y-pred", "approved", "--protected", "sex",
                 "--protected-proba", flag, "--proba-assignment", "argmax", "--out", str(out),
                 "--adverse-impact", "eeoc"]) == 0  # fmt: skip
    printed = capsys.readouterr().out
    assert "adverse impact: Groups of 'race' are estimated from proxies" in printed
    assert "as if memberships were known" in printed
    want = pf.fairness_report(book, y_true="repaid", y_pred="approved", protected="sex", proba_assignment="argmax",
                              protected_proba={"race": {**{g: f"p_{g}" for g in BISG_GROUPS[:4]}, "other": None}})  # fmt: skip
    got = pl.read_parquet(out)
    key = ["attribute", "group", "metric"]
    assert got.sort(key, nulls_last=True)["value"].equals(want.sort(key, nulls_last=True)["value"])
    assert main(["report", str(src), "--y-true", "repaid", "--protected-proba", "race"]) == 2
    assert "--protected-proba 'race': write ATTR=GROUP:COLUMN" in capsys.readouterr().err
    assert main(["report", str(src), "--y-true", "repaid", "--protected-proba", "race=white:p_white,black:p_black"]) == 2
    err = capsys.readouterr().err
    assert "whose sum is not 1" in err and "--proba-tolerance 0.001" in err


def test_flag_parser() -> None:
    assert parse_protected_proba_flag("race = a:pa, b:pb") == {"race": {"a": "pa", "b": "pb"}}
    for bad in ("race=", "race=a:", "race=a:pa,a:pb", "=a:pa"):
        with pytest.raises(pf.PolfairError, match="--protected-proba"):
            parse_protected_proba_flag(bad)


def test_provenance_in_written_files(book: pl.DataFrame, tmp_path) -> None:
    rep = pf.fairness_report(book, y_true="repaid", y_pred="approved", protected_proba=PROBA)
    path = tmp_path / "r.parquet"
    pf.write_report(rep, str(path))
    import json

    import pyarrow.parquet as pq

    meta = json.loads(pq.read_metadata(path).metadata[b"polfair.request"])
    assert meta["protected_proba"]["groups"] == list(BISG_GROUPS)
    assert request_of(rep)["protected_proba"]["columns"] == [f"p_{g}" for g in BISG_GROUPS]
