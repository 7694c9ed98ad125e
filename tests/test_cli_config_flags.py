"""The command line and the config: the score threshold from the config, clashes named by the config's
table, and optional extras checked before the pass (issue 31)."""

from __future__ import annotations

import sys
from pathlib import Path

import polars as pl
import pytest

import polfair as pf
from polfair.cli import main
from polfair.exceptions import PolfairError


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("cfg") / "compas.parquet"
    pf.load_compas().with_columns(score=pl.col("decile_score") / 10).write_parquet(path)
    return str(path)


def _config(tmp_path: Path, text: str) -> str:
    path = tmp_path / "fairness.toml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def _selection_rate(path: Path) -> float:
    rep = pl.read_parquet(path).filter(pl.col("metric") == "selection_rate", pl.col("attribute").is_null())
    return rep["value"].item()


def test_the_config_sets_the_score_threshold_and_the_flag_wins(data: str, tmp_path: Path) -> None:
    cfg = _config(tmp_path, 'y_score = "score"\nthreshold = 0.7\n')
    base = ["report", data, "--y-true", "two_year_recid", "--protected", "race", "--no-ci"]
    assert main([*base, "--config", cfg, "--out", str(tmp_path / "cfg.parquet")]) == 0
    assert main([*base, "--y-score", "score", "--threshold", "0.7", "--out", str(tmp_path / "flag.parquet")]) == 0
    assert main([*base, "--y-score", "score", "--out", str(tmp_path / "default.parquet")]) == 0
    assert main([*base, "--config", cfg, "--threshold", "0.5", "--out", str(tmp_path / "win.parquet")]) == 0
    rates = {k: _selection_rate(tmp_path / f"{k}.parquet") for k in ("cfg", "flag", "default", "win")}
    assert rates["cfg"] == rates["flag"] != rates["default"] == rates["win"]
    expected = pl.read_parquet(data).select((pl.col("score") >= 0.7).mean()).item()
    assert rates["cfg"] == pytest.approx(expected)


def test_the_api_takes_the_threshold_from_the_config_and_hashes_it() -> None:
    df = pf.load_compas().with_columns(score=pl.col("decile_score") / 10)
    kw = dict(y_true="two_year_recid", y_score="score", protected="race", ci=None, run_metadata=True)
    from_config = pf.fairness_report(df, **kw, config={"threshold": 0.7})
    given = pf.fairness_report(df, **kw, threshold=0.7)
    default, half = pf.fairness_report(df, **kw), pf.fairness_report(df, **kw, threshold=0.5)
    value = pl.col("metric") == "selection_rate"
    assert from_config.filter(value)["value"].equals(given.filter(value)["value"])
    assert not from_config.filter(value)["value"].equals(default.filter(value)["value"])
    # the threshold in effect is hashed: 0.5 by default, as before the config could set it
    assert default["config_hash"][0] == half["config_hash"][0] != from_config["config_hash"][0]


@pytest.mark.parametrize("bad", [1.5, "high", True])
def test_a_bad_config_threshold_names_the_key(bad: object) -> None:
    with pytest.raises(PolfairError, match="config key threshold"):
        pf.FairnessConfig(threshold=bad)  # type: ignore[arg-type]


_MONITORED = '[monitored]\nrace = ["African-American"]\n[reference]\nrace = ["Caucasian"]\n'


def test_protected_naming_the_config_attribute_is_the_configs_attribute(data: str, tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture) -> None:  # fmt: skip
    # --protected race with [monitored] race: the config's groups define race (as protected="race" in Python)
    cfg = _config(tmp_path, _MONITORED)
    out = tmp_path / "r.parquet"
    args = ["report", data, "--y-true", "two_year_recid", "--y-pred", "decile_score >= 5", "--no-ci"]
    assert main([*args, "--protected", "race", "sex", "--config", cfg, "--out", str(out)]) == 0
    groups = set(pl.read_parquet(out).filter(attribute="race")["group"].drop_nulls())
    assert groups == {"African-American", "Caucasian", "(neither group)"}
    assert main([*args, "--protected", "sex AS race", "--config", cfg]) == 2
    err = capsys.readouterr().err
    assert "config's [monitored] table" in err and "race" in err and "given twice" not in err
    assert main([*args, "--protected", "sex", "--by", "race", "--config", cfg]) == 2
    err = capsys.readouterr().err
    assert "by names 'race', an attribute of the config's [monitored] table" in err and "given twice" not in err


def test_a_flag_given_twice_reads_as_flags(data: str, capsys: pytest.CaptureFixture) -> None:
    args = ["report", data, "--y-true", "two_year_recid", "--y-pred", "decile_score >= 5", "--protected", "race"]
    assert main([*args, "--by", "race"]) == 2
    assert "column 'race' is given twice among --by and --protected;" in capsys.readouterr().err


def test_html_without_the_extra_fails_before_the_pass(data: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture) -> None:  # fmt: skip
    monkeypatch.setitem(sys.modules, "jinja2", None)
    out, page = tmp_path / "r.parquet", tmp_path / "r.html"
    args = ["report", data, "--y-true", "two_year_recid", "--y-pred", "decile_score >= 5", "--protected", "race",
            "--out", str(out), "--html", str(page)]  # fmt: skip
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "pip install 'polfair[report]'" in err and "nothing was computed or written" in err
    assert not out.exists() and not page.exists()
    assert main(["demo", "--html", str(page), "--out", str(out)]) == 2
    assert not out.exists() and not page.exists()
