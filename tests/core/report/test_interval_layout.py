"""The long layout of the interval families (`polfair.core.report.rows.assemble`): a large part's
interval arrays go metric by metric straight to their report rows (or, when the report is laid out
in zero-copy chunks, come row-major from Polars with their NaN (null) set to the sentinel in place),
the same report as the small parts' numpy path; and the χ² cdf of the between-group variance limits."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from scipy import stats

import polfair as pf
from polfair.core.intervals.variance import chi2_cdf
from polfair.core.report import rows


def test_nan_to_null_sets_the_sentinel_in_place_and_keeps_every_other_bit() -> None:
    flat = np.array([0.25, np.nan, np.inf, -0.0, np.inf - np.inf, 1e-300, -np.inf])
    want = flat.copy()
    want[np.isnan(want)] = rows._NULL
    out = rows._nan_to_null(flat, [np.zeros(3)])
    assert out is flat  # its own writable array: no copy
    np.testing.assert_array_equal(out.view(np.uint64), want.view(np.uint64))
    assert (out.view(np.uint64) == rows._NULL_BITS).sum() == 2


def test_nan_to_null_copies_a_shared_or_read_only_array() -> None:
    src = np.array([np.nan, 0.5, np.nan])
    out = rows._nan_to_null(src[:], [src])  # a view of a source: the source keeps its NaN
    assert out is not src and np.isnan(src).sum() == 2
    assert (out.view(np.uint64) == rows._NULL_BITS).sum() == 2
    ro = np.array([np.nan, 1.0])
    ro.flags.writeable = False
    out = rows._nan_to_null(ro, [])
    assert np.isnan(ro[0]) and out.view(np.uint64)[0] == rows._NULL_BITS


def _frame() -> pl.DataFrame:
    rng = np.random.default_rng(5)
    n = 30_000
    return pl.DataFrame({
        "day": rng.integers(0, 420, n), "a": rng.choice(["x", "y"], n), "b": rng.choice(["p", "q", "r"], n),
        "y": rng.integers(0, 2, n), "p": rng.integers(0, 2, n), "w": 0.5 + rng.integers(0, 4, n) / 4,
    })  # fmt: skip


@pytest.mark.parametrize("chunked", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_large_parts_lay_out_the_intervals_as_the_small_parts_do(monkeypatch: pytest.MonkeyPatch,
                                                                 weighted: bool, chunked: bool) -> None:  # fmt: skip
    """Over 4,096 group rows (420 days × 11 groups): the large part's paths of the interval families
    (metric columns scattered to their rows; with ``chunked``, the row-major Polars copy) equal the
    numpy path every small part takes, bit for bit, nulls included."""
    kw = {"y_true": "y", "y_pred": "p", "protected": ["a", "b"], "by": "day", "weight": "w" if weighted else None}
    cells = pf.confusion_counts(_frame(), **kw).collect()
    ckw = {"protected": ["a", "b"], "by": "day"}
    if chunked:  # this report's 420 × 5 runs as zero-copy chunks
        monkeypatch.setattr(rows, "_MAX_CHUNKS", 10**6)
        monkeypatch.setattr(rows, "_MIN_CHUNKED_ROWS", 0)
    large = pf.report_from_counts(cells, **ckw)
    assert (large.get_column("group").is_not_null()).sum() > rows._STACK_ROWS * 20  # the large path is taken
    monkeypatch.setattr(rows, "_STACK_ROWS", 0)
    every_large = pf.report_from_counts(cells, **ckw)  # every part, the attribute rows too, as a large one
    monkeypatch.setattr(rows, "_STACK_ROWS", 10**9)
    small = pf.report_from_counts(cells, **ckw)
    assert large.columns == small.columns == every_large.columns
    for c in ("value", "difference", "ratio", "n_groups"):  # the value families: numpy places vs Polars' copy
        a, b = every_large.get_column(c), small.get_column(c)
        np.testing.assert_array_equal(a.is_null().to_numpy(), b.is_null().to_numpy())
        np.testing.assert_array_equal(a.drop_nulls().to_numpy().view(np.uint64),
                                      b.drop_nulls().to_numpy().view(np.uint64))  # fmt: skip
    for c in ("value_lo", "value_hi", "difference_lo", "difference_hi", "ratio_lo", "ratio_hi", "p_value",
              "p_value_adjusted", "n_eff"):  # fmt: skip
        a, b = large.get_column(c), small.get_column(c)
        assert a.null_count() == b.null_count() > 0, c
        assert a.is_nan().sum() == 0, c  # an interval's NaN is a null
        np.testing.assert_array_equal(a.is_null().to_numpy(), b.is_null().to_numpy())
        np.testing.assert_array_equal(a.drop_nulls().to_numpy().view(np.uint64),
                                      b.drop_nulls().to_numpy().view(np.uint64))  # fmt: skip
    assert large.select(pl.col(pl.Categorical).cast(pl.String)).equals(small.select(pl.col(pl.Categorical).cast(pl.String)))


def test_chi2_cdf_equals_scipy_bit_for_bit() -> None:
    rng = np.random.default_rng(2)
    x = rng.gamma(2.0, 3.0, 5000)
    df = np.concatenate([rng.uniform(0.05, 5, 2500), rng.uniform(5, 1e6, 2499), [1e12]])
    np.testing.assert_array_equal(chi2_cdf(x, df), stats.chi2.cdf(x, df))  # the direct kernel
    edge_x = np.array([0.0, -1.0, np.inf, np.nan, 2.0, 2.0, 3.0])
    edge_df = np.array([2.0, 2.0, 3.0, 1.0, 0.0, -1.0, np.nan])
    np.testing.assert_array_equal(chi2_cdf(edge_x, edge_df), stats.chi2.cdf(edge_x, edge_df))  # scipy's rules
    assert chi2_cdf(np.array([]), np.array([])).shape == (0,)


@pytest.mark.parametrize("with_enum", [False, True])
def test_categorical_codes_of_small_frames_equal_the_one_plan_path(monkeypatch: pytest.MonkeyPatch,
                                                                   with_enum: bool) -> None:  # fmt: skip
    """A small frame's codes (Categorical columns end to end; with an Enum column, column by column)
    equal those of the one Polars plan a large frame takes, nulls as NO_CODE, row by row."""
    cats = pl.Series(["b", None, "a", "c'\"", None, "b", "a"], dtype=pl.Categorical)
    cols = {"x": cats, "y": cats.shift(2), "z": pl.Series([None] * 7, dtype=pl.Categorical)}
    if with_enum:
        cols["e"] = pl.Series(["q", "p", None, "q", "p", "p", "q"], dtype=pl.Enum(["p", "q"]))
    frame = pl.DataFrame(cols)
    small = rows.categorical_codes(frame)
    monkeypatch.setattr(rows, "_STACK_ROWS", 0)
    large = rows.categorical_codes(frame)
    assert small.shape == large.shape == (7, frame.width) and small.dtype == large.dtype == np.uint32
    np.testing.assert_array_equal(small, large)
    assert (small[:, 2] == rows.NO_CODE).all() and (small[1, :2] == rows.NO_CODE).all()
    for j, col in enumerate(frame.columns):  # the codes are the values' (an Enum's null is null, not a code)
        back = rows._codes_to_categorical(col, np.ascontiguousarray(small[:, j]))
        assert back.cast(pl.String).to_list() == frame[col].cast(pl.String).to_list(), col
