"""The audit request (issue 31): one frozen object from the keywords, the same options as ``fairness_report``."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

import polfair as pf
from polfair.core.request import AuditRequest
from polfair.exceptions import PolfairError


def test_the_fields_are_fairness_reports_keywords_with_its_defaults() -> None:
    params = {k: p.default for k, p in inspect.signature(pf.fairness_report).parameters.items()
              if k not in ("data", "shape", "run_metadata")}  # fmt: skip
    fields = {f.name: f.default for f in dataclasses.fields(AuditRequest) if f.name in AuditRequest.option_names()}
    assert fields == params
    assert "judge" not in AuditRequest.option_names()  # a pass's own switch, not a door's keyword


def test_it_is_frozen() -> None:
    r = AuditRequest.of(y_true="y", weight="w")
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.weight = "v"  # type: ignore[misc]


def test_an_unknown_option_names_the_close_one() -> None:
    with pytest.raises(PolfairError, match="'wieght' \\(did you mean 'weight'\\?\\)"):
        AuditRequest.of(wieght="w")


def test_options_are_checked_at_the_door() -> None:
    with pytest.raises(PolfairError, match="significance"):
        AuditRequest.of(significance=2.0)


def test_the_hash_leaves_out_options_at_their_default_that_came_later() -> None:
    hashed = AuditRequest.of(y_true="y").hashed(threshold=0.5)
    assert "band" not in hashed and "protected_proba" not in hashed and hashed["threshold"] == 0.5
    assert "band" in AuditRequest.of(y_true="y", band="harm").hashed()
