"""Issue 15, "nothing silently wrong": every class of hostile input ends in a correct result or a
clear error naming the option/column (never a raw Polars traceback, never a silent wrong number).

One test class per class of failure: values matched in the column's dtype, missing values (NaN),
unsupported dtypes, continuous keys, option types, cell tables and merges, accumulator batches,
files and globs.
"""

from __future__ import annotations

import datetime as dt
import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import polfair as pf
from polfair.core.passes.counts import COUNT_COLUMNS, COUNT_DTYPES, check_cell_table, merge_counts
from polfair.core.report.build import report_from_counts
from polfair.core.values import check_values_present, coerce_value, coerce_values, match_values
from polfair.engines.accumulator import FairnessAccumulator
from polfair.exceptions import InvalidInputError, PolfairError

pytestmark = pytest.mark.filterwarnings("ignore::polfair.exceptions.MissingValuesWarning")

Y = [1, 0, 1, 1, 0, 0, 1, 0]
P = [1, 1, 0, 1, 0, 1, 1, 0]
G = ["a", "a", "a", "b", "b", "b", "b", "a"]


def counts(df, **kw):
    kw = {"y_true": "y", "y_pred": "p", "protected": "g", **kw}
    return pf.confusion_counts(df, **kw).collect()


def base() -> pl.DataFrame:
    return pl.DataFrame({"y": Y, "p": P, "g": G})


CONFUSION = ["n", "tp", "fp", "tn", "fn"]


# ---------------------------------------------------------------------------------------------
class TestValuesInTheColumnsDtype:
    """favorable/unfavorable (and the helpers the report uses for privileged/reference) compare in
    the column's dtype: 1 == 1.0 == True where the dtype says so; unrepresentable values raise."""

    expected = counts(base()).select(CONFUSION)

    @pytest.mark.parametrize(
        "dtype", [pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32, pl.UInt64, pl.Float32, pl.Float64, pl.Boolean]
    )
    @pytest.mark.parametrize("favorable", [1, 1.0, True, [1], (1.0,)])
    def test_label_dtypes_and_spellings_of_one(self, dtype, favorable) -> None:
        df = base().with_columns(pl.col("y").cast(dtype), pl.col("p").cast(dtype))
        got = counts(df, favorable=favorable).select(CONFUSION)
        assert_frame_equal(got, self.expected)

    @given(
        ydt=st.sampled_from([pl.Int8, pl.UInt16, pl.Int64, pl.Float32, pl.Float64, pl.Boolean]),
        pdt=st.sampled_from([pl.Int8, pl.UInt16, pl.Int64, pl.Float32, pl.Float64, pl.Boolean]),
        fav=st.sampled_from([1, 1.0, True, 0, 0.0, False]),
    )
    @settings(max_examples=40, deadline=None)
    def test_mixed_label_and_prediction_dtypes(self, ydt, pdt, fav) -> None:
        # Boolean labels with 0/1 integer predictions (and every other mix) count the same cells
        df = base().with_columns(pl.col("y").cast(ydt), pl.col("p").cast(pdt))
        want = counts(base(), favorable=int(fav)).select(CONFUSION)
        assert_frame_equal(counts(df, favorable=fav).select(CONFUSION), want)

    @pytest.mark.parametrize(
        ("dtype", "value", "why"),
        [
            (pl.Int64, 1.5, "not an integer"),
            (pl.Int64, "1", "not an integer"),
            (pl.UInt8, 300, "outside the range of UInt8"),
            (pl.UInt8, -1, "outside the range"),
            (pl.Boolean, 2, "Boolean"),
            (pl.Float64, "1", "not a number"),
            (pl.Float64, float("nan"), "NaN"),
        ],
    )
    def test_unrepresentable_favorable_names_option_column_dtype(self, dtype, value, why) -> None:
        df = base().with_columns(pl.col("y").cast(dtype), pl.col("p").cast(dtype))
        with pytest.raises(InvalidInputError) as exc:
            counts(df, favorable=value)
        msg = str(exc.value)
        assert "favorable=" in msg and "'y'" in msg and str(dtype) in msg and why in msg

    def test_string_labels_do_not_match_numbers(self) -> None:
        df = base().with_columns(pl.col("y").cast(pl.String), pl.col("p").cast(pl.String))
        with pytest.raises(InvalidInputError, match=r"favorable=1 .*'y'.*String.*did you mean '1'"):
            counts(df, favorable=1)
        assert_frame_equal(counts(df, favorable="1").select(CONFUSION), self.expected)

    def test_enum_label_value_outside_the_categories(self) -> None:
        df = pl.DataFrame({"y": ["yes", "no"], "p": ["yes", "yes"], "g": ["a", "b"]}).with_columns(
            pl.col("y", "p").cast(pl.Enum(["yes", "no"]))
        )
        with pytest.raises(InvalidInputError, match="not a category of the Enum"):
            counts(df, favorable="Yes")
        assert counts(df, favorable="yes")["tp"].to_list() == [1.0, 0.0]

    def test_unfavorable_in_the_dtype_too(self) -> None:
        df = base().with_columns(pl.col("y", "p").cast(pl.Float64))
        got = counts(df, favorable=1, unfavorable=0).select(CONFUSION)  # ints on a Float column
        assert_frame_equal(got, self.expected)
        with pytest.raises(PolfairError, match="overlap"):
            counts(base(), favorable=1, unfavorable=[1.0])

    def test_none_is_not_an_outcome(self) -> None:
        with pytest.raises(PolfairError, match="favorable=None"):
            counts(base(), favorable=None)

    @given(v=st.one_of(st.integers(-300, 300), st.floats(allow_nan=False, allow_infinity=False, width=32), st.booleans()))
    @settings(max_examples=60, deadline=None)
    def test_coerce_value_round_trips_or_raises(self, v) -> None:
        # a value either becomes one the dtype holds exactly (the same number) or raises
        for dtype in (pl.Int16, pl.UInt8, pl.Float64, pl.Boolean):
            try:
                out = coerce_value(v, dtype, option="favorable", column="y")
            except InvalidInputError as exc:
                assert "favorable=" in str(exc) and str(dtype) in str(exc)
                continue
            assert out == v  # 1 == 1.0 == True in Python: no value was changed
            assert pl.Series([out], dtype=dtype, strict=True)[0] == out

    def test_match_values_none_is_the_null_group_and_null_string_is_a_string(self) -> None:
        df = pl.DataFrame({"g": ["null", None, "x"]})
        pick = lambda vals: df.select(match_values(pl.col("g"), pl.String, coerce_values(vals, pl.String, option="privileged", column="g")).alias("m"))["m"].to_list()  # noqa: E731
        assert pick([None]) == [False, True, False]
        assert pick(["null"]) == [True, False, False]
        assert pick(["null", None]) == [True, True, False]

    def test_match_values_numeric_and_categorical(self) -> None:
        df = pl.DataFrame({"f": [1.0, 2.0, None], "c": ["a", "b", None]}).with_columns(pl.col("c").cast(pl.Categorical))
        f = coerce_values(1, pl.Float64, option="privileged", column="f")
        assert df.select(match_values(pl.col("f"), pl.Float64, f))["f"].to_list() == [True, False, False]
        c = coerce_values(["b", None], pl.Categorical(), option="privileged", column="c")
        assert df.select(match_values(pl.col("c"), pl.Categorical(), c))["c"].to_list() == [False, True, True]


class TestValuesPresent:
    """A privileged/reference value absent from the data is an error listing the values that exist
    (under by=, a warning naming the by groups where it is absent)."""

    cells = pl.DataFrame({"day": [1, 1, 2], "g": ["a", "b", "a"]})

    def test_absent_value_lists_existing_ones(self) -> None:
        with pytest.raises(InvalidInputError, match=r"privileged=\{'g': 'c'\} matches no row.*'a', 'b'"):
            check_values_present(self.cells, "g", ("c",), option="privileged")

    def test_absent_under_by_warns_naming_the_by_values(self) -> None:
        with pytest.warns(UserWarning, match=r"day = 2"):
            check_values_present(self.cells, "g", ("b",), option="privileged", by=["day"])
        with pytest.raises(InvalidInputError, match="any by group"):
            check_values_present(self.cells, "g", ("z",), option="privileged", by=["day"])

    def test_null_group(self) -> None:
        cells = pl.DataFrame({"g": ["a", None]})
        check_values_present(cells, "g", (None,), option="privileged")
        with pytest.raises(InvalidInputError):
            check_values_present(pl.DataFrame({"g": ["a", "null"]}), "g", (None,), option="privileged")


# ---------------------------------------------------------------------------------------------
class TestNaNIsMissing:
    """NaN in a Float label or prediction is a missing value (n_missing), for Polars and pandas."""

    def frame(self) -> pl.DataFrame:
        return base().with_columns(pl.col("y", "p").cast(pl.Float64)).with_columns(
            pl.when(pl.int_range(pl.len()) == 0).then(float("nan")).otherwise(pl.col("y")).alias("y"),
            pl.when(pl.int_range(pl.len()) == 3).then(float("nan")).otherwise(pl.col("p")).alias("p"),
        )

    def test_polars_nan_counts_as_missing(self) -> None:
        got = counts(self.frame())
        assert got["n_missing"].sum() == 2 and got["n"].sum() == 8
        want = counts(base().with_row_index().filter(~pl.col("index").is_in([0, 3])).drop("index"))
        assert_frame_equal(got.select(CONFUSION[1:]), want.select(CONFUSION[1:]))

    def test_pandas_and_polars_agree(self) -> None:
        pytest.importorskip("pandas")
        pd_df = self.frame().to_pandas()
        assert_frame_equal(counts(pd_df), counts(self.frame()))

    def test_nan_label_warns_like_null(self) -> None:
        with pytest.warns(pf.MissingValuesWarning, match="null label"):
            pf.fairness_report(self.frame(), y_true="y", y_pred="p", protected="g")


# ---------------------------------------------------------------------------------------------
class TestUnsupportedDtypes:
    """Nested/Object/Binary columns in any role, Duration/Time keys: a clear error naming the column
    and dtype. Date/Datetime keys work."""

    nested = {
        "list": pl.Series([[1]] * 8),
        "struct": pl.Series([{"a": 1}] * 8),
        "array": pl.Series([[1, 2]] * 8, dtype=pl.Array(pl.Int64, 2)),
        "binary": pl.Series([b"x"] * 8),
        "object": pl.Series([object()] * 8, dtype=pl.Object),
    }

    @pytest.mark.parametrize("kind", list(nested))
    @pytest.mark.parametrize("role", ["y_true", "y_pred", "protected", "by", "weight", "y_score"])
    def test_nested_columns_in_any_role(self, kind, role) -> None:
        df = base().with_columns(self.nested[kind].alias("bad"))
        kw = {role: "bad"}
        if role == "by":
            kw = {"by": "bad"}
        with pytest.raises(InvalidInputError) as exc:
            pf.fairness_report(df, **{"y_true": "y", "y_pred": "p", "protected": "g", **kw})
        assert "'bad'" in str(exc.value) and "dtype" in str(exc.value)

    @pytest.mark.parametrize("col", [pl.Series([dt.timedelta(seconds=i) for i in range(8)]), pl.Series([dt.time(i) for i in range(8)])])
    def test_duration_and_time_keys(self, col) -> None:
        df = base().with_columns(col.alias("t"))
        with pytest.raises(InvalidInputError, match=r"'t'.*(Duration|Time).*bin it"):
            pf.fairness_report(df, y_true="y", y_pred="p", protected="t")

    def test_date_keys_render_as_text(self) -> None:
        df = base().with_columns(pl.Series([dt.date(2020, 1, 1 + i % 2) for i in range(8)]).alias("d"))
        rep = pf.fairness_report(df, y_true="y", y_pred="p", protected="d")
        groups = rep.filter(pl.col("group").is_not_null())["group"].cast(pl.String).unique().sort().to_list()
        assert groups == ["2020-01-01", "2020-01-02"]


class TestContinuousKeys:
    """A key with about a group per row (a continuous column, an id) is an error suggesting binning,
    with the explicit override allow_many_groups=True; the guard is about cardinality, not dtype
    (issue 21): a Float key with few values is a group column like an integer one."""

    def test_float_key_with_few_values_is_a_group_column(self) -> None:
        # aif360's own encoding: sex as 0.0/1.0
        df = base().with_columns(pl.Series([0.0, 1.0] * 4).alias("sex"))
        rep = pf.fairness_report(df, y_true="y", y_pred="p", protected="sex")
        as_int = pf.fairness_report(df.with_columns(pl.col("sex").cast(pl.Int64)), y_true="y", y_pred="p", protected="sex")
        assert rep.filter(pl.col("group").is_not_null())["group"].unique().sort().to_list() == ["0.0", "1.0"]
        assert_frame_equal(rep.drop("group", "reference_group", "group_key"), as_int.drop("group", "reference_group", "group_key"))

    def test_continuous_float_key(self) -> None:
        n = 3000
        df = pl.DataFrame({"y": [i % 2 for i in range(n)], "age": [i / 7 for i in range(n)]})
        with pytest.raises(InvalidInputError, match=r"'age' has 3000 distinct values.*bin_intervals.*allow_many_groups=True"):
            pf.fairness_report(df, y_true="y", protected="age")
        rep = pf.fairness_report(df, y_true="y", protected="age", allow_many_groups=True, ci=None,
                                 max_groups_per_attribute=None)  # every value's rows (default: the worst 20)
        assert rep.filter(pl.col("group").is_not_null())["group"].n_unique() == n

    def test_nan_and_negative_zero_in_a_float_key(self) -> None:
        # NaN in a Float key is the null group (a missing key), -0.0 is 0.0, in any row order
        df = base().with_columns(pl.Series([-0.0, 0.0, float("nan"), None, 1.0, 1.0, 0.0, -0.0]).alias("k"))
        for frame in (df, df.reverse()):
            cells = pf.confusion_counts(frame, y_true="y", y_pred="p", protected="k").collect()
            assert cells["k"].to_list() == [None, 0.0, 1.0] and cells["n"].to_list() == [2, 4, 2]
            assert math.copysign(1.0, cells["k"][1]) == 1.0

    def test_id_like_key(self) -> None:
        n = 3000
        df = pl.DataFrame({"y": [i % 2 for i in range(n)], "id": list(range(n))})
        with pytest.raises(InvalidInputError, match=r"'id' has 3000 distinct values in 3000 rows.*allow_many_groups"):
            pf.fairness_report(df, y_true="y", protected="id")
        cells = pf.FairnessAccumulator  # the accumulator shares the check (via collect_cells)
        assert cells is not None

    def test_many_groups_but_many_rows_is_fine(self) -> None:
        n = 5000
        df = pl.DataFrame({"y": [i % 2 for i in range(n)], "zip": [i % 1200 for i in range(n)]})
        cells = pf.confusion_counts(df, y_true="y", protected="zip").collect()
        assert cells.height == 1200


# ---------------------------------------------------------------------------------------------
class TestOptionTypes:
    """Every option of the Python API is type-checked with its name in the message."""

    @pytest.mark.parametrize(
        ("kw", "name"),
        [
            ({"threshold": [0.5]}, "threshold"),  # None is the config's threshold, else 0.5 (issue 31)
            ({"threshold": "0.5"}, "threshold"),
            ({"protected": 3}, "protected"),
            ({"protected": [["g"]]}, "protected"),
            ({"y_true": 1}, "y_true"),
            ({"y_pred": 1.0}, "y_pred"),
            ({"weight": True}, "weight"),
            ({"by": 3}, "by"),
            ({"favorable": {"a": 1}}, "favorable"),
            ({"privileged": "a"}, "privileged"),
            ({"intersections": 1.5}, "intersections"),
            ({"intersections": True}, "intersections"),
            ({"alpha": "2"}, "alpha"),
            ({"concentration": None}, "concentration"),
            ({"on_missing": False}, "on_missing"),
            ({"engine": 1}, "engine"),
            ({"min_sample_size": -1}, "min_sample_size"),
            ({"max_sample_size": 0.5}, "max_sample_size"),
            ({"allow_many_groups": "yes"}, "allow_many_groups"),
        ],
    )
    def test_wrong_type_names_the_option(self, kw, name) -> None:
        with pytest.raises(TypeError, match=rf"^{name} must be"):
            pf.fairness_report(base(), **{"y_true": "y", "y_pred": "p", "protected": "g", **kw})

    @pytest.mark.parametrize(("kw", "name"), [({"threshold": None}, "threshold"), ({"protected": 3}, "protected")])
    def test_confusion_counts_too(self, kw, name) -> None:
        with pytest.raises(TypeError, match=rf"^{name} must be"):
            pf.confusion_counts(base(), **{"y_true": "y", "protected": "g", **kw})


# ---------------------------------------------------------------------------------------------
class TestCellTables:
    """report_from_counts, merge_counts and the accumulator validate cell tables."""

    cells = counts(base())

    def test_lazy_cells(self) -> None:
        lazy = pf.confusion_counts(base(), y_true="y", y_pred="p", protected="g")
        assert_frame_equal(report_from_counts(lazy, protected=["g"]), report_from_counts(lazy.collect(), protected=["g"]))

    def test_missing_count_column(self) -> None:
        with pytest.raises(InvalidInputError, match="count column.*'tp' missing"):
            report_from_counts(self.cells.drop("tp"), protected=["g"])
        with pytest.raises(InvalidInputError, match="tables\\[1\\].*'n_missing' missing"):
            merge_counts([self.cells, self.cells.drop("n_missing")])

    def test_missing_key_column(self) -> None:
        with pytest.raises(InvalidInputError, match="key column 'sex' is missing.*\\['g'\\]"):
            report_from_counts(self.cells, protected=["sex"])

    def test_key_that_is_a_count_column(self) -> None:
        with pytest.raises((InvalidInputError, PolfairError), match="'n'"):
            report_from_counts(self.cells, protected=["n"])

    @pytest.mark.parametrize(("col", "bad"), [("n", pl.String), ("tp", pl.String), ("tp_n", pl.Float64)])
    def test_count_column_of_the_wrong_dtype(self, col, bad) -> None:
        wrong = self.cells.with_columns(pl.col(col).cast(bad))
        with pytest.raises(InvalidInputError, match=rf"count column '{col}' has dtype {bad}"):
            report_from_counts(wrong, protected=["g"])
        with pytest.raises(InvalidInputError, match=rf"'{col}'"):
            merge_counts([self.cells, wrong])

    def test_not_a_frame(self) -> None:
        with pytest.raises(TypeError, match="cells must be a polars DataFrame"):
            check_cell_table({"n": [1]})
        with pytest.raises(TypeError, match="list of cell tables"):
            merge_counts(self.cells)

    def test_string_and_integer_keys_are_not_unified(self) -> None:
        a = counts(base().with_columns(pl.Series(["1", "2"] * 4).alias("g")))
        b = counts(base().with_columns(pl.Series([1, 2] * 4).alias("g")))
        with pytest.raises(InvalidInputError, match=r"key column 'g' has dtype Int64 but another table has String"):
            merge_counts([a, b])

    def test_integer_widths_merge(self) -> None:
        a = counts(base().with_columns(pl.Series([1, 2] * 4, dtype=pl.Int8).alias("g")))
        b = counts(base().with_columns(pl.Series([1, 2] * 4, dtype=pl.Int64).alias("g")))
        merged = merge_counts([a, b]).collect()
        assert merged["n"].to_list() == [8, 8]

    def test_merged_counts_keep_uint64(self) -> None:
        merged = merge_counts([self.cells, self.cells]).collect()
        assert {c: merged.schema[c] for c in COUNT_COLUMNS} == COUNT_DTYPES
        # integer columns of another width are accepted and come back as UInt64
        narrow = self.cells.with_columns(pl.col("n").cast(pl.Int32))
        assert merge_counts([narrow, self.cells]).collect().schema["n"] == pl.UInt64

    def test_uint64_overflow_is_an_error(self) -> None:
        big = self.cells.with_columns(pl.lit(2**64 - 1, pl.UInt64).alias("n"))
        with pytest.raises(InvalidInputError, match="'n' exceeds UInt64"):
            merge_counts([big, self.cells]).collect()

    def test_float64_overflow_is_an_error(self) -> None:
        big = self.cells.with_columns(pl.lit(1.5e308).alias("w"))
        with pytest.raises(InvalidInputError, match="'w' overflows Float64"):
            merge_counts([big, big]).collect()

    def test_overflowing_weights_name_the_weight(self) -> None:
        # each weight finite, their Float64 sum infinite: an error naming the column, never inf/NaN metrics
        df = base().with_columns(pl.lit(1e308).alias("wt"))
        with pytest.raises(InvalidInputError, match=r"weight='wt'.*overflows Float64.*rescale"):
            pf.fairness_report(df, y_true="y", y_pred="p", protected="g", weight="wt")
        # a weight whose square overflows Float64 (Σw² of the intervals): the report holds the weights in a
        # power-of-two unit (issue 30) and gives the report of weights 1; the public cell table cannot hold Σw²
        # and says so, naming the column; beyond about 1e240 even the report's unit cannot
        rep = pf.fairness_report(base().with_columns(pl.lit(1e200).alias("wt")), y_true="y", y_pred="p", protected="g",
                                 weight="wt")  # fmt: skip
        one = pf.fairness_report(base().with_columns(pl.lit(1.0).alias("wt")), y_true="y", y_pred="p", protected="g",
                                 weight="wt")  # fmt: skip
        # (the counts are Σw, and the smoothed EDF adds its concentration to them: neither is free of the scale)
        metric = rep["metric"].cast(pl.String)
        free = ~metric.str.starts_with("num_") & ~metric.str.contains("differential_fairness")
        assert_frame_equal(rep.filter(free), one.filter(free), check_exact=False, rel_tol=1e-12)
        got, want = (r.filter(metric == "num_instances")["value"].drop_nulls().to_list() for r in (rep, one))
        assert got == pytest.approx([1e200 * v for v in want], rel=1e-12)
        cells = pf.confusion_counts(base().with_columns(pl.lit(1e200).alias("wt")), y_true="y", y_pred="p",
                                    protected="g", weight="wt").collect()  # fmt: skip
        assert sorted(cells["tp"].to_list()) == pytest.approx([1e200, 2e200]) and cells["tp_w2"].null_count() == 2
        acc = pf.FairnessAccumulator(y_true="y", y_pred="p", protected="g", weight="wt")
        with pytest.warns(pf.WeightRangeWarning, match=r"weight='wt'.*squared weights.*cannot be held in Float64.*rescale"):
            acc.update(base().with_columns(pl.lit(1e200).alias("wt")))
        assert acc.compute()["value_lo"].is_not_null().any()  # the values are there; Kish sizes unknown
        with pytest.warns(pf.WeightRangeWarning, match=r"weight='wt'.*squared weights.*cannot be held in Float64.*rescale"):
            rep = pf.fairness_report(base().with_columns(pl.lit(1e300).alias("wt")), y_true="y", y_pred="p",
                                     protected="g", weight="wt")  # fmt: skip
        assert rep.filter(metric="selection_rate")["n_eff"].null_count() == rep.filter(metric="selection_rate").height

    @pytest.mark.parametrize("w", [2.0**40, 1e15, 1e-9, 2.0**-17])
    def test_weights_outside_the_exact_grid_name_the_option(self, w) -> None:
        # Float64 sums (the default) take them; exact_sums=True refuses them, naming the option and range
        df = base().with_columns(pl.lit(w).alias("wt"))
        rep = pf.fairness_report(df, y_true="y", y_pred="p", protected="g", weight="wt")
        assert rep.filter(pl.col("attribute").is_null(), metric="num_instances")["value"].item() == pytest.approx(8 * w)
        with pytest.raises(InvalidInputError, match=r"weight='wt'.*exact_sums=True.*2\*\*-16 <= w < 2\*\*40.*exact_sums=False"):
            pf.fairness_report(df, y_true="y", y_pred="p", protected="g", weight="wt", exact_sums=True)

    def test_large_weights_below_the_bound_sum_exactly(self) -> None:
        df = base().with_columns(pl.lit(2.0**40 - 1).alias("wt"))
        cells = counts(df, weight="wt", exact_sums=True)
        assert cells["w"].to_list() == [4 * (2.0**40 - 1)] * 2

    @given(
        data=st.lists(st.tuples(st.integers(0, 1), st.integers(0, 1), st.sampled_from(["a", "b", None]), st.integers(0, 5)), min_size=1, max_size=40),
        cuts=st.lists(st.integers(0, 40), max_size=4),
    )
    @settings(max_examples=50, deadline=None)
    def test_random_splits_merge_to_the_single_pass(self, data, cuts) -> None:
        df = pl.DataFrame(data, schema={"y": pl.Int64, "p": pl.Int64, "g": pl.String, "w": pl.Int64}, orient="row")
        bounds = sorted({0, len(df), *(c for c in cuts if c < len(df))})
        parts = [counts(df[a:b], weight="w") for a, b in zip(bounds, bounds[1:]) if b > a]
        merged = merge_counts(parts).collect()
        assert_frame_equal(merged, counts(df, weight="w"))  # integer weights: exact


class TestAccumulatorBatches:
    def acc(self) -> FairnessAccumulator:
        return FairnessAccumulator(y_true="y", y_pred="p", protected="g")

    def test_ragged_batch(self) -> None:
        with pytest.raises(InvalidInputError, match=r"ragged batch.*y=3.*p=2"):
            self.acc().update({"y": [1, 0, 1], "p": [1, 0], "g": ["a", "b", "a"]})

    def test_key_dtype_changes_between_batches(self) -> None:
        acc = self.acc().update({"y": [1, 0], "p": [1, 0], "g": ["1", "2"]})
        with pytest.raises(InvalidInputError, match=r"this batch: key column 'g' has dtype Int64"):
            acc.update({"y": [1, 0], "p": [1, 0], "g": [1, 2]})
        assert acc.state()["n"].sum() == 2  # the state is unchanged

    def test_load_state_checks_the_table(self) -> None:
        state = self.acc().update(base()).state()
        with pytest.raises(InvalidInputError, match="the state: .*'fp' missing"):
            self.acc().load_state(state.drop("fp"))
        with pytest.raises(InvalidInputError, match="count column 'n' has dtype String"):
            self.acc().load_state(state.with_columns(pl.col("n").cast(pl.String)))
        with pytest.raises(TypeError, match="load_state takes"):
            self.acc().load_state({"n": [1]})
        loaded = self.acc().load_state(state.with_columns(pl.col("n").cast(pl.Int64)))
        assert loaded.state().schema["n"] == pl.UInt64


# ---------------------------------------------------------------------------------------------
class TestFilesAndGlobs:
    def test_integer_widths_upcast(self, tmp_path) -> None:
        base().with_columns(pl.col("y", "p").cast(pl.Int32)).write_parquet(tmp_path / "a.parquet")
        base().with_columns(pl.col("y", "p").cast(pl.Int64)).write_parquet(tmp_path / "b.parquet")
        got = counts(str(tmp_path / "*.parquet")).select(CONFUSION)
        both = pl.concat([base(), base()])
        assert_frame_equal(got, counts(both).select(CONFUSION))

    def test_incompatible_dtypes_name_file_and_column(self, tmp_path) -> None:
        base().write_parquet(tmp_path / "a.parquet")
        base().with_columns(pl.col("y").cast(pl.String)).write_parquet(tmp_path / "b.parquet")
        with pytest.raises(InvalidInputError, match=r"column 'y' is String in file '.*b\.parquet'"):
            counts(str(tmp_path / "*.parquet"))

    def test_file_lacking_a_column(self, tmp_path) -> None:
        base().write_parquet(tmp_path / "a.parquet")
        base().drop("g").write_parquet(tmp_path / "b.parquet")
        with pytest.raises(InvalidInputError, match=r"file '.*b\.parquet' has no column 'g'"):
            counts(str(tmp_path / "*.parquet"))

    def test_glob_matching_nothing(self, tmp_path) -> None:
        with pytest.raises(FileNotFoundError, match=r"matches no file"):
            counts(str(tmp_path / "nothing-*.parquet"))
        with pytest.raises(FileNotFoundError, match="does not exist"):
            counts(str(tmp_path / "missing.csv"))

    def test_malformed_csv_row_names_the_file(self, tmp_path) -> None:
        path = tmp_path / "bad.csv"
        rows = ["y,p,g", *[f"{i % 2},{i % 2},{'ab'[i % 2]}" for i in range(300)], "abc,1,a"]
        path.write_text("\n".join(rows) + "\n")
        with pytest.raises(InvalidInputError, match=r"reading the input '.*bad\.csv' failed.*'y'") as exc:
            pf.fairness_report(str(path), y_true="y", y_pred="p", protected="g")
        assert isinstance(exc.value.__cause__, pl.exceptions.PolarsError)

    def test_pandas_mixed_object_column_names_it(self) -> None:
        pd = pytest.importorskip("pandas")
        frame = pd.DataFrame({"y": [1, 0, 1], "p": [1, 1, 0], "g": ["a", 1, 2.5]})
        with pytest.raises(InvalidInputError, match=r"pandas column 'g' .*mixes Python types \['float', 'int', 'str'\]"):
            counts(frame)


def test_assert_nothing_silently_dropped() -> None:
    """No input row leaves the accounting: n sums to the input's rows whatever the values."""
    df = pl.DataFrame({
        "y": [1.0, float("nan"), None, 0.0, 1.0], "p": [1, None, 1, 0, 0],
        "g": ["null", None, "x & y", "", "ü"],
    })  # fmt: skip
    cells = counts(df)
    assert cells["n"].sum() == df.height
    assert math.isclose(cells["w"].sum() + 0.0, float(cells.filter(pl.col("n_missing") == 0)["n"].sum()))
    assert np.all(cells["g"].to_numpy() != None) or cells["g"].null_count() == 1  # noqa: E711


class TestReproducibleWeightedSums:
    """Weighted sums: Float64 by default (reproducible to about 1e-13 relative), and with
    ``exact_sums=True`` exact fixed-point sums, Σw² included, so the ENTIRE report (interval columns
    too) is bit-identical through a glob, a CLI run and an in-memory frame, in any order and chunking
    (issue 15 §7, made whole by issue 21)."""

    @staticmethod
    def frame(n: int = 20_000, seed: int = 0) -> pl.DataFrame:
        rng = np.random.default_rng(seed)
        return pl.DataFrame({
            "y": rng.integers(0, 2, n), "p": rng.integers(0, 2, n), "s": rng.random(n),
            "g": rng.choice(["a", "b", "c"], n), "h": rng.choice(["x", "y"], n),
            "w": (rng.exponential(1.0, n) + 0.02) * rng.choice([1e-3, 1.0, 1e3], n),  # >= 2**-16 (exact_sums)
        })  # fmt: skip

    KW = {"y_true": "y", "y_pred": "p", "y_score": "s", "protected": ["g", "h"], "weight": "w"}

    def test_orders_chunks_and_files_agree_bit_for_bit(self, tmp_path) -> None:
        df = self.frame()
        want = pf.fairness_report(df, **self.KW, exact_sums=True)
        default = pf.fairness_report(df, **self.KW)
        shuffled = df.sample(fraction=1.0, shuffle=True, seed=1)
        chunked = pl.concat([df[i : i + 777] for i in range(0, df.height, 777)], rechunk=False)
        for i in range(4):
            df[i * 5000 : (i + 1) * 5000].write_parquet(tmp_path / f"part-{i}.parquet")
        for other in (shuffled, chunked, str(tmp_path / "*.parquet")):
            assert_frame_equal(pf.fairness_report(other, **self.KW, exact_sums=True), want, check_exact=True)
            # the default Float64 sums: the same report up to the order of the additions
            assert_frame_equal(pf.fairness_report(other, **self.KW), default, rel_tol=1e-9, abs_tol=1e-9)

    def test_cli_run_agrees_bit_for_bit(self, tmp_path) -> None:
        from polfair.cli import main

        df = self.frame(5000, seed=2)
        df.write_parquet(tmp_path / "d.parquet")
        out = tmp_path / "r.parquet"
        argv = ["report", str(tmp_path / "d.parquet"), "--y-true", "y", "--y-pred", "p", "--y-score", "s",
                "--protected", "g", "h", "--weight", "w", "--out", str(out), "--no-run-metadata", "--exact-sums"]  # fmt: skip
        assert main(argv) == 0
        got = pl.read_parquet(out)
        want = pf.fairness_report(df.sample(fraction=1.0, shuffle=True, seed=3), **self.KW, exact_sums=True)
        cols = [c for c in want.columns if c in got.columns and want.schema[c] == pl.Float64]
        assert_frame_equal(got.select(cols), want.select(cols), check_exact=True)

    @given(seed=st.integers(0, 2**16), cuts=st.lists(st.integers(1, 1999), max_size=5))
    @settings(max_examples=25, deadline=None)
    def test_random_splits_of_the_pass(self, seed, cuts) -> None:
        df = self.frame(2000, seed=seed)
        bounds = sorted({0, df.height, *cuts})
        pieces = pl.concat([df[a:b] for a, b in zip(bounds, bounds[1:])], rechunk=False)
        shuffled = pieces.sample(fraction=1.0, shuffle=True, seed=seed)
        a = pf.confusion_counts(df, **self.KW, exact_sums=True).collect()
        b = pf.confusion_counts(shuffled, **self.KW, exact_sums=True).collect(engine="streaming")
        assert_frame_equal(a, b, check_exact=True)  # Σw² (tp_w2 ...) included
        c = pf.confusion_counts(shuffled, **self.KW).collect(engine="streaming")
        assert_frame_equal(a, c, rel_tol=1e-12)

    def test_sums_are_exact_for_weights_of_one_sixteenth_and_up(self) -> None:
        rng = np.random.default_rng(7)
        w = rng.uniform(0.0625, 1e6, 50_000)
        df = pl.DataFrame({"y": np.ones(50_000, dtype=np.int64), "g": ["a"] * 50_000, "w": w})
        cells = pf.confusion_counts(df, y_true="y", protected="g", weight="w", exact_sums=True).collect()
        assert cells["w"].item() == math.fsum(w)  # the correctly rounded exact sum
        default = pf.confusion_counts(df, y_true="y", protected="g", weight="w").collect()
        assert default["w"].item() == pytest.approx(math.fsum(w), rel=1e-13)


def test_an_expression_that_does_not_type_check_is_named() -> None:
    with pytest.raises(PolfairError, match=r"cannot evaluate the column expression y_pred") as exc:
        pf.fairness_report(base(), y_true="y", y_pred=pl.col("g") + 1, protected="g")
    assert isinstance(exc.value.__cause__, pl.exceptions.PolarsError)
