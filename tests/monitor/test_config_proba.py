"""A monitor config takes ``protected_proba`` (and its options) like the other role keys (issue 38)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polfair as pf
from polfair.datasets import BISG_GROUPS

PROBA = {"race": {g: f"p_{g}" for g in BISG_GROUPS}}
KW = dict(y_true="repaid", y_pred="approved", y_score="score", protected="sex", privileged={"race": "white"})


@pytest.fixture(scope="module")
def book() -> pl.DataFrame:
    return pf.make_bisg_lending(3000, seed=5)


@pytest.mark.parametrize("assignment", ["weighted", "argmax"])
def test_a_config_with_protected_proba_gives_the_keywords_report(book: pl.DataFrame, assignment: str,
                                                                 tmp_path: Path) -> None:  # fmt: skip
    want = pf.fairness_report(book, **KW, protected_proba=PROBA, proba_assignment=assignment)
    got = pf.fairness_report(book, **KW, config={"protected_proba": PROBA, "proba_assignment": assignment})
    assert_frame_equal(got, want)
    toml = tmp_path / "c.toml"
    rows = "\n".join(f'{g} = "p_{g}"' for g in BISG_GROUPS)
    toml.write_text(f'proba_assignment = "{assignment}"\n[protected_proba.race]\n{rows}\n')
    assert_frame_equal(pf.fairness_report(book, **KW, config=str(toml)), want)
    assert "race" in set(want["attribute"].drop_nulls())


def test_the_config_s_proba_keys_are_checked_and_given_once(book: pl.DataFrame) -> None:
    with pytest.raises(pf.PolfairError, match="config key protected_proba"):
        pf.FairnessConfig.from_dict({"protected_proba": {"race": ["p_white"]}})
    with pytest.raises(pf.PolfairError, match="proba_assignment='argmax' applies to protected_proba"):
        pf.FairnessConfig.from_dict({"proba_assignment": "argmax"})
    with pytest.raises(pf.PolfairError, match="protected_proba is given as a keyword and in the config"):
        pf.fairness_report(book, **KW, protected_proba=PROBA, config={"protected_proba": PROBA})
