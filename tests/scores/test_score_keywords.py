"""The score doors take roc_curve's keywords as one block (keywords_of): shown flat, checked alike."""

from __future__ import annotations

import inspect

import pytest

import polfair as pf
from polfair.exceptions import UnknownOptionError
from polfair.scores import precision_recall_curve, reliability_curve, roc_curve, score_report, threshold_sweep
from polfair.scores.curves import score_report_from_counts

ROWS = ["y_true", "y_score", "protected", "favorable", "score_label", "weight", "by", "bins", "intersections"]


@pytest.mark.parametrize("door", [precision_recall_curve, reliability_curve, score_report, threshold_sweep])
def test_the_doors_list_roc_curves_keywords_with_its_defaults(door) -> None:
    mine, roc = inspect.signature(door).parameters, inspect.signature(roc_curve).parameters
    for k in ROWS:
        required = k in {score_report: ("y_true", "y_score"), threshold_sweep: ("y_true", "y_score", "protected")}.get(door, ())
        assert mine[k].default == (inspect.Parameter.empty if required else roc[k].default), (door.__name__, k)
    with pytest.raises(UnknownOptionError, match="did you mean 'protected'"):
        door(pf.load_compas(), y_true="two_year_recid", y_score="decile_score", protectd="race")


def test_roc_curve_names_the_close_keyword_too() -> None:
    with pytest.raises(UnknownOptionError, match="did you mean 'y_score'"):
        roc_curve(pf.load_compas(), y_true="two_year_recid", y_scor="decile_score", protected="race")


def test_score_report_from_counts_takes_score_reports_defaults() -> None:
    df = pf.load_compas()
    h = pf.scores.score_counts(df, y_true="two_year_recid", y_score="decile_score", protected="sex", with_missing=True,
                               relative=True)  # fmt: skip
    assert score_report_from_counts(h).equals(score_report(df, y_true="two_year_recid", y_score="decile_score",
                                                           protected="sex"))  # fmt: skip
    assert score_report_from_counts(h, ci=None, n_boot=10).equals(
        score_report(df, y_true="two_year_recid", y_score="decile_score", protected="sex", ci=None, n_boot=10))
    with pytest.raises(UnknownOptionError, match="did you mean 'n_boot'"):
        score_report_from_counts(h, n_bot=10)
