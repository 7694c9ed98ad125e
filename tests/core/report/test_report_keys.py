"""Typed group identity, unambiguous labels, spreads over defined groups, default attribute sets
(issues 12 §2 and 15 §1, §6)."""

from __future__ import annotations

import warnings

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import polfair as pf
from polfair.core.report import build as core_report
from polfair.core.report.build import attribute_sets, group_label, parse_group_label, value_label
from polfair.exceptions import PolfairError, ReportSizeWarning

HOSTILE = ["", "null", "NULL", '"', '"x"', " & ", "a & b", "& x", "x &", "&", "a&b", "\\", '\\"', "é", "日本",
           "null & null", '"null"', "a", "b", "\n", " ", None, None]  # fmt: skip

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def hostile_frames(draw: st.DrawFn) -> tuple[pl.DataFrame, list[str], list[str]]:
    n = draw(st.integers(1, 14))
    k = draw(st.integers(1, 3))
    cols: dict[str, list] = {}
    for j in range(k):
        cols[f"k{j}"] = draw(st.lists(st.sampled_from(HOSTILE), min_size=n, max_size=n))
    by = draw(st.booleans())
    if by:
        cols["b"] = draw(st.lists(st.sampled_from(["x & y", "null", None, "x"]), min_size=n, max_size=n))
    cols["y"] = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    cols["p"] = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    schema = {c: pl.String for c in cols if c not in ("y", "p")} | {"y": pl.Int64, "p": pl.Int64}
    return pl.DataFrame(cols, schema=schema), [f"k{j}" for j in range(k)], (["b"] if by else [])


@SETTINGS
@given(hostile_frames())
def test_hostile_values_give_unique_keys_that_round_trip(case: tuple[pl.DataFrame, list[str], list[str]]) -> None:
    df, keys, by = case
    rep = pf.fairness_report(df, y_true="y", y_pred="p", protected=keys, by=by or None, on_missing="ignore")
    # every (by, attribute, group, metric) key is unique
    idx = [*by, "attribute", "group", "metric"]
    assert rep.select(idx).is_duplicated().sum() == 0
    groups = rep.filter(pl.col("group").is_not_null())
    seen: dict[tuple, tuple] = {}
    for row in groups.select(*by, "attribute", "group", "group_key").unique(maintain_order=True).iter_rows(named=True):
        attrs = str(row["attribute"]).split(" & ")
        typed = tuple(row["group_key"][a] for a in attrs)
        # the display label parses back to the typed values, and the typed key has nulls elsewhere
        assert parse_group_label(row["group"]) == typed
        assert all(row["group_key"][k] is None for k in keys if k not in attrs)
        # the label is a function of the typed key, and different typed keys get different labels
        ident = (tuple(row[b] for b in by), row["attribute"], typed)
        assert seen.setdefault((tuple(row[b] for b in by), row["attribute"], row["group"]), ident) == ident
    # the typed groups are exactly the input's distinct combinations (nothing merged, nothing lost)
    for attrs in attribute_sets(keys, None):
        want = df.select(*by, *attrs).unique().height
        got = groups.filter(pl.col("attribute") == " & ".join(attrs), metric="num_instances").height
        assert got == want
    # rows are all accounted for
    for attrs in attribute_sets(keys, None):
        n = groups.filter(pl.col("attribute") == " & ".join(attrs), metric="n_missing")["n"].sum()
        assert n == df.height


def test_labels_keep_todays_rendering_for_ordinary_values() -> None:
    df = pl.DataFrame({"g": ["Female", "R&D", None, "null"], "h": [1, 2, 3, None]})
    assert df.select(group_label(["g", "h"])).to_series().to_list() == ["Female & 1", "R&D & 2", "null & 3", '"null" & null']
    assert value_label(True) == "true" and value_label(None) == "null" and value_label('say "hi"') == 'say "hi"'
    assert value_label('"hi"') == '"\\"hi\\""' and parse_group_label(value_label('"hi"')) == ('"hi"',)


def test_parse_rejects_non_labels() -> None:
    with pytest.raises(ValueError, match="not a group label"):
        parse_group_label('"a"b')


def test_protected_names_with_the_separator_are_rejected() -> None:
    df = pl.DataFrame({"sex & race": ["a", "b"], "y": [1, 0]})
    with pytest.raises(PolfairError, match="contain ' & '"):
        pf.fairness_report(df, y_true="y", protected="sex & race")


def test_columns_named_like_report_columns_keep_working() -> None:
    df = pl.DataFrame({"group": ["a", "b", "a"], "value": [1, 1, 2], "metric": ["x", "y", "x"], "y": [1, 0, 1], "p": [1, 1, 0]})
    rep = pf.fairness_report(df, y_true="y", y_pred="p", protected=["group", "value", "metric"])
    row = rep.filter(pl.col("attribute") == "group & value & metric", group="a & 2 & x", metric="num_instances")
    assert row["group_key"].item() == {"group": "a", "value": 2, "metric": "x"}
    assert row["value"].item() == 1.0


def _renamed_back(rep: pl.DataFrame, names: dict[str, str]) -> pl.DataFrame:
    """A report of renamed keys, in the original names (attribute labels and group_key fields)."""
    attribute = pl.col("attribute").cast(pl.String)
    for new, old in names.items():
        attribute = attribute.str.replace_all(new, old, literal=True)
    fields = [names.get(f.name, f.name) for f in rep.schema["group_key"].fields]
    return rep.with_columns(attribute.cast(pl.Categorical), pl.col("group_key").struct.rename_fields(fields))


@pytest.mark.parametrize("engine", ["polars", "duckdb", "accumulator"])
@pytest.mark.parametrize("names", [("group", "value"), ("metric", "attribute"), ("reference_group", "difference"),
                                   ("ratio", "status"), ("p_value", "harm"), ("group_key", "n_eff")])  # fmt: skip
def test_protected_keys_may_take_report_column_names(engine: str, names: tuple[str, str]) -> None:
    # a protected attribute never becomes a report column (it is a label and a group_key field), so it may
    # be called like one: the report equals, bit for bit, the report of the same data under other names
    rng = np.random.default_rng(sum(map(len, names)))
    n = 300
    df = pl.DataFrame({names[0]: rng.choice(["a", "b", "c"], n), names[1]: rng.choice(["x", "y"], n),
                       "lbl": rng.integers(0, 2, n), "s": rng.random(n), "wt": rng.random(n) + 0.5})  # fmt: skip
    kw = dict(y_true="lbl", y_pred=(pl.col("s") > 0.5).cast(pl.Int8), y_score="s", weight="wt", exact_sums=True)

    def report(frame: pl.DataFrame, protected: list[str]) -> pl.DataFrame:
        if engine == "duckdb":
            duckdb = pytest.importorskip("duckdb")
            frame = frame.with_columns(pred=(pl.col("s") > 0.5).cast(pl.Int8))
            return pf.fairness_report(duckdb.connect().from_arrow(frame.to_arrow()), **{**kw, "y_pred": "pred"},
                                      protected=protected)  # fmt: skip
        if engine == "accumulator":
            acc = pf.FairnessAccumulator(**kw, protected=protected)
            acc.update(frame.head(100))
            acc.update(frame.tail(200))
            return acc.compute()
        return pf.fairness_report(frame, **kw, protected=protected, privileged={protected[0]: "a"})

    got = report(df, list(names))
    want = report(df.rename({names[0]: "k_0", names[1]: "k_1"}), ["k_0", "k_1"])
    assert got.columns == want.columns  # no column added for a key
    assert got.equals(_renamed_back(want, {"k_0": names[0], "k_1": names[1]}))


@pytest.mark.parametrize("name", ["group", "value", "p_value", "harm", "group_key", "run_id", "tp", "n"])
def test_by_keys_and_cell_names_are_refused_with_the_fix(name: str) -> None:
    # a by key is a column of the report: it may not take a report (or cell-table) column's name
    df = pl.DataFrame({name: ["d1", "d2", "d1"], "g": ["a", "b", "a"], "y": [1, 0, 1]})
    with pytest.raises(PolfairError, match=f"key name '{name}' is reserved.*alias"):
        pf.fairness_report(df, y_true="y", protected="g", by=name)
    if name in ("tp", "n"):  # the cell table's columns: no key at all
        with pytest.raises(PolfairError, match=f"key name '{name}' is reserved"):
            pf.fairness_report(df.rename({name: "d"}).with_columns(pl.col("g").alias(name)), y_true="y", protected=name)


def test_group_key_keeps_the_input_dtypes() -> None:
    df = pl.DataFrame({"a": [1.5, 2.5, None], "d": [True, False, True], "y": [1, 0, 1]})
    rep = pf.fairness_report(df, y_true="y", protected=["a", "d"], allow_many_groups=True)
    assert rep.schema["group_key"] == pl.Struct({"a": pl.Float64, "d": pl.Boolean})
    keys = rep.filter(pl.col("attribute") == "a", metric="base_rate", group=pl.lit("null"))["group_key"]
    assert keys.to_list() == [{"a": None, "d": None}]


def test_privileged_none_names_the_null_group_and_the_string_null_only_itself() -> None:
    df = pl.DataFrame({"g": [None, None, "null", "x", "x"], "y": [1, 1, 0, 0, 1], "p": [1, 1, 0, 0, 1]})
    kw = dict(y_true="y", y_pred="p", protected="g")
    null_ref = pf.fairness_report(df, privileged={"g": None}, **kw)
    row = null_ref.filter(group="x", metric="selection_rate")
    assert row["reference_group"].item() == "null" and row["difference"].item() == 0.5 - 1.0
    str_ref = pf.fairness_report(df, privileged={"g": "null"}, **kw)
    row = str_ref.filter(group="x", metric="selection_rate")
    assert row["reference_group"].item() == '"null"' and row["ratio"].item() is None  # reference rate 0


def test_spreads_skip_undefined_groups_and_say_which() -> None:
    # group c has only positives: its FPR/TNR are undefined; a and b define every rate
    df = pl.DataFrame({"g": ["a"] * 4 + ["b"] * 4 + ["c"] * 2,
                       "y": [1, 1, 0, 0, 1, 1, 0, 0, 1, 1], "p": [1, 0, 1, 0, 1, 1, 0, 0, 1, 0]})  # fmt: skip
    rep = pf.fairness_report(df, y_true="y", y_pred="p", protected="g")
    attr = rep.filter(pl.col("attribute") == "g", pl.col("group").is_null())
    fpr = attr.filter(metric="false_positive_rate").row(0, named=True)
    assert fpr["difference"] == 0.5 and fpr["ratio"] == 0.0  # a: 0.5, b: 0.0; c left out
    assert fpr["n_groups"] == 2 and fpr["excluded_groups"] == "c (no negatives)"
    tpr = attr.filter(metric="true_positive_rate").row(0, named=True)
    assert tpr["difference"] == 0.5 and tpr["n_groups"] == 3 and tpr["excluded_groups"] is None
    eo = attr.filter(metric="equalized_odds_difference").row(0, named=True)
    assert eo["value"] == 0.5 and eo["n_groups"] == 2 and eo["excluded_groups"] == "c (no negatives)"
    # group rows carry no n_groups
    assert rep.filter(pl.col("group").is_not_null())["n_groups"].null_count() == rep.filter(pl.col("group").is_not_null()).height


def test_spreads_are_null_with_fewer_than_two_defined_groups() -> None:
    df = pl.DataFrame({"g": ["a", "a", "b"], "y": [1, 0, 1], "p": [1, 0, 1]})
    rep = pf.fairness_report(df, y_true="y", y_pred="p", protected="g")
    fpr = rep.filter(pl.col("attribute") == "g", pl.col("group").is_null(), metric="false_positive_rate").row(0, named=True)
    assert fpr["difference"] is None and fpr["n_groups"] == 1 and fpr["excluded_groups"] == "b (no negatives)"
    one = pf.fairness_report(df.filter(pl.col("g") == "a"), y_true="y", y_pred="p", protected="g")
    theil = one.filter(pl.col("attribute") == "g", metric="between_group_theil_index").row(0, named=True)
    assert theil["value"] is None and theil["n_groups"] == 1


def test_default_attribute_sets_for_many_attributes() -> None:
    keys = [f"a{i}" for i in range(8)]
    sets = attribute_sets(keys, None)
    assert len(sets) == 8 + 28 + 1 and sets[-1] == tuple(keys)
    assert len(attribute_sets(keys, "all")) == 255
    assert attribute_sets(keys[:3], None) == attribute_sets(keys[:3], "all")
    with pytest.raises(PolfairError, match="intersections"):
        attribute_sets(keys, "every")


def test_large_reports_warn(monkeypatch: pytest.MonkeyPatch) -> None:
    df = pl.DataFrame({"g": list("abcdef"), "y": [1, 0, 1, 0, 1, 0], "p": [1, 1, 0, 0, 1, 0]})
    monkeypatch.setattr(core_report, "LARGE_REPORT_ROWS", 100)
    with pytest.warns(ReportSizeWarning, match="intersections"):
        pf.fairness_report(df, y_true="y", y_pred="p", protected="g")
    monkeypatch.setattr(core_report, "LARGE_REPORT_ROWS", 10_000)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pf.fairness_report(df, y_true="y", y_pred="p", protected="g")


@SETTINGS
@given(hostile_frames())
def test_small_cell_tables_label_each_cell_once_with_the_same_report(case: tuple[pl.DataFrame, list[str], list[str]]) -> None:
    # a small cell table's labels are computed once per key and cell and carried through the roll-ups:
    # the same report as the labels of every attribute set's groups (the path of large cell tables)
    df, keys, by = case
    kw = dict(y_true="y", y_pred="p", protected=keys, by=by or None, on_missing="ignore", ci=None)
    small = pf.fairness_report(df, **kw)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(core_report, "_SMALL_CELLS", -1)
        large = pf.fairness_report(df, **kw)
    assert small.equals(large)
