"""The exact weighted sums of the pass (``counts._exact_sum``) against a naive exact reference.

The rule (``docs/design.md``, "Reproducible weighted sums"): every counted weight ``w`` and product
``w·s`` is truncated to a multiple of 2**-56, ``floor(x * 2**56)``, and the integers are added; the
cell table holds that integer sum / 2**56 rounded once to Float64. The reference below applies the
rule with Python's exact ``fractions.Fraction`` arithmetic, row by row; the pass must give the same
integers in any row order, chunking and engine.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import polfair as pf
from polfair.core.counts import code_counts
from polfair.core.spec import CODE, FLAG_BAD_SCORE, FLAG_BAD_WEIGHT, WS, W, build_spec

SCALE = 2**56
W2 = "__pf_w2"
KW = {"y_true": "y", "y_pred": "p", "y_score": "s", "weight": "w", "protected": "g"}

# weights over the whole accepted range [0, 2**40): zeros, subnormals, values below and above the
# 1/16 boundary of exact representation, and values just under the limit
VALID_WEIGHTS = st.one_of(
    st.floats(0.0, 2.0**40, exclude_max=True, allow_subnormal=True),
    st.floats(0.0, 1.0 / 16, allow_subnormal=True),
    st.floats(1.0 / 16, 1e6),
    st.sampled_from([0.0, 5e-324, 2.0**-57, 2.0**-56, 1.0 / 16, 1.0 / 3, 1.0, 2.0**40 - 2.0**-12]),
)
# rows with a null or invalid weight/score are counted under their own codes: they must not disturb
# the valid codes' sums (and must not break the pass)
WEIGHTS = st.one_of(VALID_WEIGHTS, VALID_WEIGHTS, st.sampled_from([None, -1.0, math.nan, math.inf, 2.0**40, 1e300]))
SCORES = st.one_of(
    st.floats(0.0, 1.0, allow_subnormal=True),
    st.sampled_from([0.0, 1.0, 0.5, 1e-300]),
    st.sampled_from([None, math.nan, 1.5, -0.5]),
)
ROWS = st.lists(
    st.tuples(st.integers(0, 1), st.integers(0, 1), SCORES, WEIGHTS, st.sampled_from(["a", "b", "c"])),
    min_size=1,
    max_size=60,
)


def _frame(rows: list[tuple]) -> pl.DataFrame:
    y, p, s, w, g = zip(*rows)
    return pl.DataFrame(
        {"y": list(y), "p": list(p), "s": list(s), "w": list(w), "g": list(g)},
        schema={"y": pl.Int64, "p": pl.Int64, "s": pl.Float64, "w": pl.Float64, "g": pl.String},
    )


def _fixed(x: float) -> int:
    """The rule for one value: floor(x * 2**56), in exact rational arithmetic."""
    return math.floor(Fraction(x) * SCALE)


def _reference(df: pl.DataFrame) -> dict[tuple[str, int], tuple[int, int | None, int | None]]:
    """(g, outcome code) -> (rows, Σ floor(w·2**56), Σ floor(w·s·2**56)) from the prepared columns.

    A sum is ``None`` where the pass's value is never read: Σw for the codes of rows with an invalid
    weight, Σw·s also for an invalid score. ``w·s`` is the Float64 product, as the pass forms it.
    """
    prepared = build_spec(df, **KW).lf.collect()
    sums: dict[tuple[str, int], list[int]] = {}
    for g, code, w, ws in prepared.select("g", CODE, W, WS).iter_rows():
        acc = sums.setdefault((g, code), [0, 0, 0])
        bad_w, bad_s = bool(code // 16 & FLAG_BAD_WEIGHT), bool(code // 16 & FLAG_BAD_SCORE)
        acc[0] += 1
        if w is not None and not bad_w:
            acc[1] += _fixed(w)
        if ws is not None and not (bad_w or bad_s):
            acc[2] += _fixed(ws)
    ref: dict[tuple[str, int], tuple[int, int | None, int | None]] = {}
    for (g, code), (n, sw, sws) in sums.items():
        bad_w, bad_s = bool(code // 16 & FLAG_BAD_WEIGHT), bool(code // 16 & FLAG_BAD_SCORE)
        ref[(g, code)] = (n, None if bad_w else sw, None if bad_w or bad_s else sws)
    return ref


def _codes(data: pl.DataFrame, engine: str = "in-memory") -> pl.DataFrame:
    spec = build_spec(data, **KW)
    return code_counts(spec).collect(engine=engine).sort("g", CODE)  # type: ignore[call-overload]


def _pieces(df: pl.DataFrame, cuts: list[int], seed: int) -> pl.DataFrame:
    """The rows shuffled, then held as several chunks (``rechunk=False``)."""
    shuffled = df.sample(fraction=1.0, shuffle=True, seed=seed)
    bounds = sorted({0, df.height, *(c % (df.height + 1) for c in cuts)})
    return pl.concat([shuffled[a:b] for a, b in zip(bounds, bounds[1:])], rechunk=False)


@given(rows=ROWS)
@settings(max_examples=60, deadline=None)
def test_pass_sums_equal_the_exact_reference(rows: list[tuple]) -> None:
    df = _frame(rows)
    codes = _codes(df)
    assert codes.schema[W] == pl.UInt128 and codes.schema[WS] == pl.UInt128
    ref = _reference(df)
    assert len(codes) == len(ref)
    for g, code, n, sw, sws in codes.select("g", CODE, "__pf_n", W, WS).iter_rows():
        rn, rw, rws = ref[(g, code)]
        assert n == rn
        if rw is not None:
            assert sw == rw, (g, code)
        if rws is not None:
            assert sws == rws, (g, code)


@given(rows=ROWS, cuts=st.lists(st.integers(0, 60), max_size=4), seed=st.integers(0, 2**16))
@settings(max_examples=40, deadline=None)
def test_pass_sums_do_not_depend_on_row_order_chunking_or_engine(rows: list[tuple], cuts: list[int], seed: int) -> None:
    df = _frame(rows)
    want = _codes(df)
    other = _pieces(df, cuts, seed)
    for engine in ("in-memory", "streaming"):
        got = _codes(other, engine)
        # Σw² (Kish sizes) is a plain Float64 sum: equal up to the order of the additions only
        assert_frame_equal(got.drop(W2), want.drop(W2), check_exact=True)
        assert_frame_equal(got.select(W2), want.select(W2), rel_tol=1e-12)


def _valid_frame(n: int, seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    w = rng.exponential(1.0, n) * rng.choice([1e-6, 1e-2, 1.0, 1e3, 1e9], n)
    return pl.DataFrame({
        "y": rng.integers(0, 2, n), "p": rng.integers(0, 2, n), "s": rng.random(n), "w": w,
        "g": rng.choice(["a", "b", "c"], n),
    })  # fmt: skip


def test_cell_values_are_the_exact_sums_rounded_once() -> None:
    df = _valid_frame(5000, seed=3)
    cells = pf.confusion_counts(df, **KW).collect().sort("g")
    rows = df.with_columns(ws=pl.col("w") * pl.col("s")).iter_rows(named=True)
    exact: dict[tuple[str, str], int] = {}
    for r in rows:
        cls = {(1, 1): "tp", (0, 1): "fp", (0, 0): "tn", (1, 0): "fn"}[(r["y"], r["p"])]
        fw, fws = _fixed(r["w"]), _fixed(r["ws"])
        for col, v in ((cls, fw), (f"{cls}_ws", fws), (f"{cls}_w1s", fw - fws)):
            exact[(r["g"], col)] = exact.get((r["g"], col), 0) + v
    for g, tp, fp, tn, fn in cells.select("g", "tp", "fp", "tn", "fn").iter_rows():
        for col, got in (("tp", tp), ("fp", fp), ("tn", tn), ("fn", fn)):
            assert got == float(Fraction(exact[(g, col)], SCALE)), (g, col)  # float(Fraction): correctly rounded
    # Σw·s and Σw·(1−s) are exact too, and a column over several classes (generalized counts, w)
    # adds the classes' exact sums before its one rounding
    for g, gtp, gfn, gtn, w in cells.select("g", "gtp", "gfn", "gtn", "w").iter_rows():
        assert gtp == float(Fraction(exact[(g, "tp_ws")] + exact[(g, "fn_ws")], SCALE))
        assert gfn == float(Fraction(exact[(g, "tp_w1s")] + exact[(g, "fn_w1s")], SCALE))
        assert gtn == float(Fraction(exact[(g, "fp_w1s")] + exact[(g, "tn_w1s")], SCALE))
        assert w == float(Fraction(sum(exact[(g, c)] for c in ("tp", "fp", "tn", "fn")), SCALE))


@pytest.mark.parametrize("engine", ["in-memory", "streaming"])
def test_cell_tables_are_bit_identical_across_orders_and_chunks(engine: str) -> None:
    df = _valid_frame(20_000, seed=5)
    want = pf.confusion_counts(df, **KW).collect()
    for seed, cuts in ((1, [3, 777, 9000]), (2, list(range(0, 20_000, 1234)))):
        got = pf.confusion_counts(_pieces(df, cuts, seed), **KW).collect(engine=engine)  # type: ignore[call-overload]
        exact = [c for c in want.columns if not c.endswith("_w2")]  # Σw² is a Float64 sum (see design.md)
        assert_frame_equal(got.select(exact), want.select(exact), check_exact=True)


def test_weights_below_the_grid_truncate_and_unweighted_scores_are_exact() -> None:
    # a weight below 2**-56 adds nothing to Σw (it still counts in n); between grid points it
    # truncates: 0 + 1 + 64 units of 2**-56 (rounding to nearest would give 0 + 2 + 64)
    df = pl.DataFrame({"y": [1, 1, 1], "g": ["a"] * 3, "w": [2.0**-57, 3 * 2.0**-57, 2.0**-50]})
    cells = pf.confusion_counts(df, y_true="y", protected="g", weight="w").collect()
    assert cells["tp"].item() == 65 * 2.0**-56 and cells["tp_n"].item() == 3
    # scores without weights: Σs and Σ(1−s) exact as well
    s = [0.1, 0.2, 0.7, 1.0 / 3]
    df = pl.DataFrame({"y": [1] * 4, "p": [1] * 4, "s": s, "g": ["a"] * 4})
    cells = pf.confusion_counts(df, y_true="y", y_pred="p", y_score="s", protected="g").collect()
    assert cells["gtp"].item() == float(Fraction(sum(_fixed(v) for v in s), SCALE))
    assert cells["gfn"].item() == float(Fraction(sum(SCALE - _fixed(v) for v in s), SCALE))
