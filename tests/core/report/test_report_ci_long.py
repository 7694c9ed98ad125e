"""The report's attribute-row intervals (computed in long form, one aggregation for every spread,
EDF and test) equal the public frame functions run on the report's own group rows."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polfair as pf
from polfair.core import intervals as iv
from polfair.core.intervals import homogeneity as ivh
from polfair.core.metrics import METRICS


def _frame(weighted: bool) -> pl.DataFrame:
    rng = np.random.default_rng(3)
    n = 1500
    df = pl.DataFrame({
        "a": rng.choice(["x", "y"], n), "b": rng.choice(["p", "q", "r", "s"], n, p=[0.5, 0.3, 0.15, 0.05]),
        "y": rng.integers(0, 2, n), "s": rng.random(n), "d": rng.choice(["d1", "d2"], n),
    }).with_columns(p=(pl.col("s") > 0.5).cast(pl.Int8), w=pl.lit(1.0) + pl.Series(rng.random(n)))  # fmt: skip
    return df if weighted else df.drop("w")


@pytest.mark.parametrize("weighted", [False, True])
def test_attribute_limits_and_tests_equal_the_frame_functions(weighted: bool) -> None:
    df = _frame(weighted)
    rep = pf.fairness_report(df, y_true="y", y_pred="p", protected=["a", "b"], by="d",
                             weight="w" if weighted else None, intersections="all")  # fmt: skip
    groups = rep.filter(pl.col("group").is_not_null())
    attrs = rep.filter(pl.col("group").is_null() & pl.col("attribute").is_not_null())
    fam = ["d", "attribute"]
    rates = [m for m, v in METRICS.items() if v.is_rate and not m.startswith("generalized_")]
    for m in rates:
        rows = groups.filter(pl.col("metric") == m).select(*fam, "value", "n_eff")
        want = iv.spread_table(rows, by=fam, p="value", n="n_eff", ci=0.95).collect()
        got = attrs.filter(pl.col("metric") == m).select(*fam, "difference", "difference_lo", "difference_hi",
                                                          "ratio_lo", "ratio_hi", "p_value", "test")  # fmt: skip
        both = got.join(want, on=fam, how="left", suffix="_w", nulls_equal=True)
        defined = both["difference"].is_not_null()  # the spread (attribute rows have no value)
        assert defined.sum() >= 6, m  # 2 by values x 3 attribute sets
        for c in ("difference_lo", "difference_hi", "ratio_lo", "ratio_hi"):
            assert both.filter(defined)[c].equals(both.filter(defined)[f"{c}_w"]), (m, c)
        tests = iv.homogeneity_table(rows, by=fam, families={m: [("value", "n_eff")]}, weighted=weighted)
        both = got.join(tests, on=fam, how="left", nulls_equal=True).filter(defined)
        assert both["p_value"].equals(both[f"{m}__tp"].alias("p_value")), m
        assert both["test"].cast(pl.String).equals(both[f"{m}__tt"].alias("test")), m


def test_report_from_counts_takes_by_and_protected_as_fairness_report_does() -> None:
    df = _frame(False)
    cells = pf.confusion_counts(df, y_true="y", y_pred="p", protected=["a"], by="d").collect()
    want = pf.report_from_counts(cells, protected=["a"], by=["d"], ci=None)
    assert pf.report_from_counts(cells, protected="a", by="d", ci=None).equals(want)
    whole = pf.confusion_counts(df, y_true="y", y_pred="p", protected=["a"]).collect()
    assert pf.report_from_counts(whole, protected="a", by=None, ci=None).equals(
        pf.report_from_counts(whole, protected=["a"], ci=None)
    )


@settings(max_examples=60, deadline=None)
@given(
    p=st.lists(st.one_of(st.none(), st.sampled_from([0.0, 0.01, 0.5, 1.0]), st.floats(0.0, 1.0)), min_size=1, max_size=40),
    data=st.data(),
    method=st.sampled_from(["bh", "holm", "by", None]),
)
def test_adjusted_p_values_equal_the_window_expression(p: list, data: st.DataObject, method: str | None) -> None:
    # the report's numpy adjustment (every column at once, one sort) against p_adjust over the by values,
    # with ties, nulls (untested rows), repeated columns and a by column holding nulls and separator-like strings
    from polfair.core.intervals.spreads import segments_of
    from polfair.core.report import intervals as _report_ci

    n = len(p)
    by = data.draw(st.lists(st.sampled_from([None, "a", "b & c", "null", "\x1f"]), min_size=n, max_size=n))
    q = data.draw(st.permutations(p))
    res = pl.DataFrame({"k": [0] * n, "d": pl.Series(by, dtype=pl.String), "x": pl.Series(p, dtype=pl.Float64),
                        "y": pl.Series(q, dtype=pl.Float64), "z": pl.Series(p, dtype=pl.Float64)})  # fmt: skip
    for over in (["k"], ["d"]):  # the report always has a by key (a constant one without by)
        want = res.select(
            [(pl.col(m) if method is None else iv.p_adjust(pl.col(m), method).over(over)).alias(m) for m in "xyz"]  # type: ignore[arg-type]
        )
        got = _report_ci.adjust_p_values({m: res[m].fill_null(np.nan).to_numpy() for m in "xyz"},
                                         segments_of(res, over)[0], method)  # fmt: skip
        assert pl.DataFrame([pl.Series(m, got[m], nan_to_null=True) for m in "xyz"]).equals(want), (over, method)


@pytest.mark.parametrize("method", ["bh", "holm", "by"])
@pytest.mark.parametrize("sizes", [[5, 3, 4], [2000] + [1] * 1000, [1], [40] * 30])
def test_adjusted_p_values_padded_and_sorted_paths_agree(method: str, sizes: list[int]) -> None:
    # segments of similar size are adjusted as rows of a padded matrix, very unequal ones (the second
    # case) by one sort per column; both equal p_adjust over the segments, with ties and untested rows
    from polfair.core.intervals.common import Segments
    from polfair.core.report import intervals as _report_ci

    rng = np.random.default_rng(len(sizes))
    codes = rng.permutation(np.repeat(np.arange(len(sizes)), sizes))
    cols = {m: np.where(rng.random(codes.size) < 0.2, np.nan, np.round(rng.random(codes.size), 2)) for m in "xyz"}
    cols["u"] = np.full(codes.size, np.nan)  # a column without a test (not sorted): NaN
    got = _report_ci.adjust_p_values(cols, Segments(codes, len(sizes)), method)
    frame = pl.DataFrame({"seg": codes, **{m: pl.Series(v, nan_to_null=True) for m, v in cols.items()}})
    want = frame.select([iv.p_adjust(pl.col(m), method).over("seg").alias(m) for m in cols])  # type: ignore[arg-type]
    for m in cols:
        assert pl.Series(m, got[m], nan_to_null=True).equals(want[m]), m
        assert np.isnan(got[m]).sum() == np.isnan(cols[m]).sum()



@pytest.mark.parametrize("method", ["bh", "holm", "by", None])
@pytest.mark.parametrize("sizes", [[3000], [1], [5, 3, 4], [200] * 3])
def test_adjusted_p_values_of_some_rows_are_those_of_every_row(method: str | None, sizes: list[int]) -> None:
    # a limited report adjusts the p-values of the rows it shows (adjust_p_values_at) within families of
    # every row: the same floats (bits) as adjusting every row, with ties (few distinct values), untested
    # rows, a column without any tested row, repeated columns, and rows shown among the ties
    from polfair.core.intervals.common import Segments
    from polfair.core.report import intervals as _report_ci

    rng = np.random.default_rng(sum(sizes))
    codes = rng.permutation(np.repeat(np.arange(len(sizes)), sizes))
    h = codes.size
    cols = {m: np.where(rng.random(h) < 0.2, np.nan, rng.choice(rng.random(7) ** 3, h)) for m in "xy"}
    cols |= {"z": cols["x"].copy(), "u": np.full(h, np.nan), "e": rng.random(h)}
    segs = Segments(codes, len(sizes))
    every = _report_ci.adjust_p_values(cols, segs, method)
    for rows in (np.arange(h), np.sort(rng.choice(h, min(h, 25), replace=False)), np.array([], dtype=np.int64)):
        got = _report_ci.adjust_p_values_at(cols, segs, method, rows)
        assert list(got) == list(cols)
        for m in cols:
            assert got[m].view(np.uint64).tolist() == every[m][rows].view(np.uint64).tolist(), (m, rows.size)


@settings(max_examples=80, deadline=None)
@given(
    rows=st.lists(
        st.tuples(st.integers(0, 3), st.one_of(st.floats(0.0, 1.0), st.sampled_from([float("nan"), float("inf")])),
                  st.one_of(st.floats(0.0, 300.0), st.sampled_from([0.0, -1.0, float("nan"), 1.0, 2.0]))),
        min_size=1, max_size=30,
    ),  # fmt: skip
    weighted=st.booleans(),
)
def testhomogeneity_segments_equal_the_per_family_test(rows: list, weighted: bool) -> None:
    # the vectorised χ² statistics against the per-family computation of homogeneity_test
    seg = np.array([r[0] for r in rows], dtype=np.int64)
    p, n = np.array([r[1] for r in rows]), np.array([r[2] for r in rows])
    if not weighted:  # unweighted sizes are counts
        n = np.round(n)
    got = ivh.homogeneity_segments(p, n, seg, 4, weighted)
    for i in range(4):
        mine = seg == i
        good = np.isfinite(p[mine]) & np.isfinite(n[mine]) & (n[mine] > 0)
        pi, ni = p[mine][good], n[mine][good]
        x, nn = (pi * ni, ni) if weighted else (np.round(pi * ni), np.round(ni))
        k = len(ni)
        assert got.df[i] == k - 1 and got.few[i] == (k < 2)
        if k == 0:
            assert got.bad[i]
            continue
        np.testing.assert_allclose(got.stat[i], ivh._pearson(x, nn), rtol=1e-12, atol=1e-12)
        pp = x.sum() / nn.sum()
        e = np.concatenate([nn * pp, nn * (1.0 - pp)])
        assert got.bad[i] == bool(e.min() < 1.0 or np.mean(e < 5.0) > 0.2)


@pytest.mark.parametrize("ref_dtype", [pl.Categorical, pl.String])
@pytest.mark.parametrize("label_dtype", [pl.String, pl.Categorical])
def test_own_reference_matches_labels_to_each_windows_reference_and_null_to_nothing(label_dtype, ref_dtype) -> None:
    from polfair.core.intervals.common import Segments
    from polfair.core.report.intervals import _Columns

    frame = pl.DataFrame({
        "g": pl.Series(["a", None, "b", "a", None, "c'\""], dtype=label_dtype),
        "r1__refname": pl.Series(["a", "x", None, "zz", "zz", "c'\""], dtype=pl.Categorical),  # read at each window's first row
        "r2__refname": pl.Series(["b", None, "a", None, None, None], dtype=ref_dtype),
    })  # fmt: skip
    windows = Segments(np.array([0, 0, 1, 1, 1, 2]), 3)
    need = np.array([True, True, True, True, True, False])
    got = _Columns(frame).own_reference("g", ["r1__refname", "r2__refname"], windows, need)
    want = np.array([[True, False], [False, False], [False, False], [False, True], [False, False], [False, False]])
    np.testing.assert_array_equal(got, want)  # a null label matches no null reference; row 5 is not needed
