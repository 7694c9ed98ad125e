"""Key names at every door: a protected attribute or ``by`` key named like a column the door writes is
refused with a PolfairError that names it and the fix, never a raw Polars error (reweighing's
``weight``, the rule table's ``selection_rate``, the regression cells' ``sum_y`` failed with
Polars' DuplicateError); a protected attribute named like any other report column works and gives
the values of the same data under another name."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polfair as pf
from polfair.exceptions import PolfairError


def frame(name: str, n: int = 300, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    return pl.DataFrame({name: rng.choice(["a", "b", "c"], n), "lbl": rng.integers(0, 2, n), "s": rng.random(n),
                         "t": rng.normal(size=n)})  # fmt: skip


DOORS = {
    "reweighing": lambda df, k: pf.reweighing(df, y_true="lbl", protected=k).table,
    "group_thresholds": lambda df, k: pf.group_thresholds(df, y_true="lbl", y_score="s", protected=k).table,
    "regression_report": lambda df, k: pf.regression_report(df, y_true="t", y_pred="s", protected=k),
    "regression_by": lambda df, k: pf.regression_report(df.with_columns(g=pl.lit("x")), y_true="t", y_pred="s",
                                                        protected="g", by=k),
    "score_report": lambda df, k: pf.score_report(df, y_true="lbl", y_score="s", protected=k, ci=None),
    "fairness_report_by": lambda df, k: pf.fairness_report(df.with_columns(g=pl.lit("x")), y_true="lbl",
                                                           protected="g", by=k),
}  # fmt: skip

REFUSED = [
    ("reweighing", "weight"), ("reweighing", "expected"), ("reweighing", "observed"), ("reweighing", "label"),
    ("reweighing", "group"), ("group_thresholds", "selection_rate"), ("group_thresholds", "accuracy"),
    ("group_thresholds", "coin"), ("regression_report", "mean_y"), ("regression_report", "w_exp"),
    ("regression_report", "n"), ("regression_report", "group_key"), ("regression_report", "bin"),
    ("regression_by", "p_value"), ("regression_by", "group_key"), ("score_report", "score"),
    ("fairness_report_by", "harm"), ("fairness_report_by", "run_id"),
]  # fmt: skip


@pytest.mark.parametrize(("door", "name"), REFUSED)
def test_a_key_named_like_a_column_the_door_writes_is_refused_clearly(door: str, name: str) -> None:
    with pytest.raises(PolfairError, match=f"key name '{name}' is reserved.*alias"):
        DOORS[door](frame(name), name)


WORKS = [(door, name) for door in ("reweighing", "regression_report", "group_thresholds", "score_report")
         for name in ("value", "difference", "p_value", "status", "harm")
         if not (door in ("group_thresholds", "score_report") and name == "value")]  # the score cells' own "value"


@pytest.mark.parametrize(("door", "name"), WORKS)
def test_a_protected_key_named_like_another_report_column_works(door: str, name: str) -> None:
    df = frame(name, seed=len(name))
    got = DOORS[door](df, name)
    want = DOORS[door](df.rename({name: "k_safe"}), "k_safe")
    if "attribute" in got.columns:  # a report: the key is a label and a group_key field, not a column
        assert got.columns == want.columns
        got = got.with_columns(pl.col("attribute").cast(pl.String).str.replace_all(name, "k_safe", literal=True))
        want = want.with_columns(pl.col("attribute").cast(pl.String))
    else:  # a table with the key's own column
        got = got.rename({name: "k_safe"})
    assert_frame_equal(got.drop("group_key", strict=False), want.drop("group_key", strict=False),
                       check_exact=False, rel_tol=1e-12, abs_tol=0)  # fmt: skip
