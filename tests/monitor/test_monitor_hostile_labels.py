"""Issue 15 §1: the monitor's label for rows in neither group never collides with a real value."""

from __future__ import annotations

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

import polfair as pf
from polfair.monitor.config import FairnessConfig

ALPHABET = st.sampled_from(["other", "(other)", "x", "a|b", "a", "b", "null", ""])


@given(monitored=st.lists(ALPHABET, min_size=1, max_size=2, unique=True), reference=st.lists(ALPHABET, min_size=1, max_size=2, unique=True),
       rows=st.lists(ALPHABET | st.none(), min_size=1, max_size=12))  # fmt: skip
@settings(max_examples=80, deadline=None)
def test_labels_of_the_three_kinds_of_rows_never_collide(monitored, reference, rows) -> None:
    if set(monitored) & set(reference):
        return  # overlapping groups are rejected by the config
    cfg = FairnessConfig(monitored={"g": monitored}, reference={"g": reference})
    got = pl.DataFrame({"g": rows}, schema={"g": pl.String}).select(cfg.protected_exprs())["g"].to_list()
    kind = ["null" if v is None else "m" if v in monitored else "r" if v in reference else "o" for v in rows]
    # one label per kind of row, and different kinds never share a label
    by_label: dict = {}
    for label, k in zip(got, kind):
        by_label.setdefault(label, set()).add(k)
    assert all(len(k) == 1 for k in by_label.values()), by_label


def test_monitored_value_spelled_other_is_its_own_group_in_the_report() -> None:
    df = pl.DataFrame({"y": [1, 0, 1, 0, 1, 1], "g": ["other", "other", "x", "x", "y", "y"]})
    rep = pf.fairness_report(df, y_true="y", protected="g", config={"monitored": {"g": ["other"]}, "reference": {"g": ["x"]}})
    n = rep.filter(pl.col("metric") == "num_instances", pl.col("group").is_not_null())
    assert sorted(zip(n["group"].cast(pl.String).to_list(), n["value"].to_list())) == [("(neither group)", 2.0), ("other", 2.0), ("x", 2.0)]


def test_monitored_values_match_in_the_columns_dtype() -> None:
    # ints on a Float column and floats on an Int column: compared as numbers, not a Polars crash
    df = pl.DataFrame({"y": [1, 0, 1, 0, 1, 1], "g": [1.0, 1.0, 2.0, 2.0, 3.0, 3.0], "h": [1, 1, 2, 2, 3, 3]})
    for cfg in ({"monitored": {"g": [1]}, "reference": {"g": [2]}}, {"monitored": {"h": [1.0]}, "reference": {"h": [2]}}):
        rep = pf.fairness_report(df, y_true="y", config=cfg)
        n = rep.filter(pl.col("metric") == "num_instances", pl.col("group").is_not_null())
        assert sorted(zip(n["group"].cast(pl.String).to_list(), n["value"].to_list())) == [("(neither group)", 2.0), ("1", 2.0), ("2", 2.0)]
