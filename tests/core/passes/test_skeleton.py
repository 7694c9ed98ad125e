"""The one pass skeleton (issue 38): the steps every room's pass shares are written once."""

from __future__ import annotations

import re

import polars as pl
import pytest

import polfair as pf
from polfair.core.contract import CODE, PolarsFrame
from polfair.core.passes.skeleton import check_rows, feature_columns
from polfair.core.passes.spec import PassOptions
from polfair.proxies import proxy_scan
from polfair.scores import score_counts


def _df() -> pl.DataFrame:
    return pl.DataFrame({"a": ["x", "y"] * 30, "b": [1, 2, 3] * 20, "y": [0, 1] * 30, "l": [[1], [2]] * 30,
                         "err": [0, 1, 1] * 20})  # fmt: skip


def _doors(features: object) -> dict[str, object]:
    """The rooms that read a ``features`` role, each called with ``features``."""
    return {
        "slice_scan": lambda: pf.slice_scan(_df(), features=features, errors="err"),
        "proxy_scan": lambda: proxy_scan(_df(), protected="a", features=features),
    }


@pytest.mark.parametrize("features, match", [(["b", "b"], r"features are given twice: \['b', 'b'\]"),
                                             ([], "features must name at least one"),
                                             (["l"], "features")])  # fmt: skip
def test_the_features_role_is_checked_once_for_every_room(features: list[str], match: str) -> None:
    messages = []
    for door in _doors(features).values():
        with pytest.raises((pf.PolfairError, pf.InvalidInputError), match=match) as err:
            door()  # type: ignore[operator]
        messages.append(re.sub(r"at least one .*", "at least one (the room's example)", str(err.value)))
    assert len(set(messages)) == 1, messages


def test_pass_request_refuses_unknown_and_unused_options() -> None:
    with pytest.raises(TypeError, match="protectd"):
        PassOptions.of(protectd="g")
    with pytest.raises(pf.PolfairError, match="proba_tolerance"):
        PassOptions.of(protected="g", proba_tolerance=0.01)
    assert PassOptions.of(by="m", protected=["g", "h"]).by_keys == ("m",)


def test_check_rows_is_the_one_no_rows_error_and_counts_every_row() -> None:
    empty = pl.DataFrame({CODE: pl.Series([], dtype=pl.Int32), "n": pl.Series([], dtype=pl.Int64)})
    with pytest.raises(pf.InvalidInputError, match="the input has no rows"):
        check_rows(empty, {}, count="n", on_missing="warn", examples=None, excluded_from="", stacklevel=2)
    assert check_rows(empty, {}, count="n", on_missing="warn", examples=None, excluded_from="", stacklevel=2,
                      not_empty=False) == 0  # fmt: skip
    assert [c.name for c in feature_columns(PolarsFrame(_df()), ["a", "b"], example="column")] == ["a", "b"]


def test_the_options_objects_are_parts_of_the_request() -> None:
    from polfair.core.report.build import ReportOptions
    from polfair.core.request import AuditRequest

    req = AuditRequest(y_true="y", y_pred="p", protected=["g", "h"], by="m", weight="w", ci=0.9, p_adjust="holm",
                       protected_proba={"r": {"a": "pa", "b": None}}, min_sample_size=5)  # fmt: skip
    p = PassOptions.of_request(req, engine="auto")
    assert (p.y_true, p.protected_keys, p.by_keys, p.weight, p.engine) == ("y", ("g", "h"), ("m",), "w", "auto")
    assert p.protected_proba == {"r": {"a": "pa", "b": None}}
    r = ReportOptions.of_request(req)
    assert (r.protected, r.by, r.ci, r.p_adjust, r.min_sample_size, r.privileged) == (["g", "h"], "m", 0.9, "holm", 5, None)


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"protected": []}, "protected must name at least one column or expression"),
        ({"protected": "y"}, "is the label column y_true='y'"),
        ({"protected": "g", "exact_sums": True, "protected_proba": {"r": {"a": "p", "b": None}}},
         "exact_sums=True is not available with protected_proba"),
    ],
)
def test_build_spec_and_the_foreign_pass_word_a_rule_alike(kw: dict, match: str) -> None:
    """The classification pass's keys are the skeleton's (pass_keys): one rule, one message on every engine."""
    duckdb = pytest.importorskip("duckdb")
    from polfair.core.passes.spec import build_spec
    from polfair.engines.narwhals import foreign_code_table

    df = pl.DataFrame({"y": [1, 0], "g": ["a", "b"], "p": [0.5, 0.5]})
    messages = []
    for run in (lambda: build_spec(df, y_true="y", **kw), lambda: foreign_code_table(duckdb.from_arrow(df.to_arrow()), y_true="y", **kw)):
        with pytest.raises(pf.PolfairError, match=match) as err:
            run()
        messages.append(str(err.value))
    assert messages[0] == messages[1]


def test_every_pass_words_a_bad_on_missing_alike() -> None:
    """PassOptions.of checks on_missing once: the regression and score passes say what the report says."""
    df = pl.DataFrame({"y": [1.0, 0.0], "p": [0.5, 0.5], "g": ["a", "b"]})
    doors = [lambda: pf.regression_counts(df, y_true="y", y_pred="p", protected="g", on_missing="skip"),
             lambda: score_counts(df, y_true="y", y_score="p", protected="g", on_missing="skip"),
             lambda: pf.fairness_report(df.with_columns(pl.col("y").cast(pl.Int64)), y_true="y", y_score="p",
                                        protected="g", on_missing="skip")]  # fmt: skip
    messages = set()
    for door in doors:
        with pytest.raises(pf.PolfairError, match="on_missing must be one of") as err:
            door()
        messages.add(str(err.value))
    assert len(messages) == 1, messages


def test_the_score_pass_refuses_its_label_as_a_protected_attribute_as_the_report_does() -> None:
    """The score histogram takes its keys from the skeleton (pass_keys): the label rule is the report's."""
    df = pl.DataFrame({"y": [1, 0, 1], "s": [0.9, 0.2, 0.6], "g": ["a", "b", "a"]})
    messages = set()
    for door in (lambda: score_counts(df, y_true="y", y_score="s", protected="y"),
                 lambda: pf.fairness_report(df, y_true="y", y_score="s", protected="y")):
        with pytest.raises(pf.PolfairError, match="is the label column y_true='y'") as err:
            door()
        messages.add(str(err.value))
    assert len(messages) == 1
    assert score_counts(df, y_true="y", y_score="s", protected=None)["n"].sum() == 3  # population-only counts stay
