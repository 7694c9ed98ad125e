"""The pass's weighted sums against naive references: exact fixed point (``exact_sums=True``) and Float64.

The exact rule (``docs/design.md``, "Reproducible weighted sums"): every counted weight ``w`` and
product ``w·s`` is truncated to a multiple of 2**-56, ``floor(x * 2**56)``; every ``w²`` (the
Float64 product) to a multiple of 2**-80, ``floor(w² * 2**80)``, held as ``hi = floor(w² * 2**16)``
and the next 64 bits; the integers are added, and the cell table holds the integer sums / 2**56
rounded once to Float64 (Σw²: ``hi · 2**-16 + lo · 2**-80``). The reference below applies the rule
with Python's exact ``fractions.Fraction`` arithmetic, row by row; the pass must give the same
integers in any row order, chunking and engine. Without ``exact_sums`` the sums are Float64 sums,
checked against ``math.fsum`` to about 1e-13 relative.
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
from polfair.core.contract import MAX_EXACT_WEIGHT, MIN_EXACT_WEIGHT
from polfair.core.passes.counts import code_counts
from polfair.core.passes.spec import (
    CODE,
    FLAG_BAD_SCORE,
    FLAG_BAD_WEIGHT,
    FLAG_NULL_SCORE,
    FLAG_NULL_WEIGHT,
    WS,
    W,
    build_spec,
)

SCALE = 2**56
W2, W2LO = "__pf_w2", "__pf_w2lo"
KW = {"y_true": "y", "y_pred": "p", "y_score": "s", "weight": "w", "protected": "g"}

# weights over the whole range exact_sums accepts: 0 and [2**-16, 2**40), with values below and above
# the 1/16 boundary of exact representation on the 2**-56 grid, and values just under the limit
VALID_WEIGHTS = st.one_of(
    st.just(0.0),
    st.floats(MIN_EXACT_WEIGHT, MAX_EXACT_WEIGHT, exclude_max=True),
    st.floats(MIN_EXACT_WEIGHT, 1.0 / 16),
    st.floats(1.0 / 16, 1e6),
    st.sampled_from([0.0, MIN_EXACT_WEIGHT, 1.0 / 16, 1.0 / 3, 1.0, 2.0**40 - 2.0**-12]),
)
# rows with a null, NaN or invalid weight/score are counted under their own codes: they must not
# disturb the valid codes' sums (and must not break the pass)
WEIGHTS = st.one_of(
    VALID_WEIGHTS, VALID_WEIGHTS, st.sampled_from([None, -1.0, math.nan, math.inf, 2.0**40, 1e300, 1e-9, 5e-324])
)
SCORES = st.one_of(
    st.floats(0.0, 1.0, allow_subnormal=True),
    st.sampled_from([0.0, 1.0, 0.5, 1e-300]),
    st.sampled_from([None, math.nan, 1.5, -0.5, math.inf]),
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


def _fixed(x: float, scale: int = SCALE) -> int:
    """The rule for one value: floor(x * scale), in exact rational arithmetic."""
    return math.floor(Fraction(x) * scale)


def _reference(df: pl.DataFrame) -> dict[tuple[str, int], tuple[int, int | None, int | None, int | None]]:
    """(g, outcome code) -> (rows, Σ floor(w·2**56), Σ floor(w·s·2**56), Σ floor(w²·2**80)).

    A sum is ``None`` where the pass's value is never read: Σw and Σw² for the codes of rows with an
    invalid or missing weight, Σw·s also for an invalid or missing score. ``w·s`` and ``w²`` are the
    Float64 products, as the pass forms them.
    """
    prepared = build_spec(df, **KW, exact_sums=True).lf.collect()
    sums: dict[tuple[str, int], list[int]] = {}
    for g, code, w, ws in prepared.select("g", CODE, W, WS).iter_rows():
        acc = sums.setdefault((g, code), [0, 0, 0, 0])
        flags = code // 16
        skip_w = bool(flags & (FLAG_BAD_WEIGHT | FLAG_NULL_WEIGHT))
        skip_s = skip_w or bool(flags & (FLAG_BAD_SCORE | FLAG_NULL_SCORE))
        acc[0] += 1
        if not skip_w:
            acc[1] += _fixed(w)
            acc[3] += _fixed(w * w, 2**80)
        if not skip_s:
            acc[2] += _fixed(ws)
    ref = {}
    for (g, code), (n, sw, sws, sw2) in sums.items():
        flags = code // 16
        skip_w = bool(flags & (FLAG_BAD_WEIGHT | FLAG_NULL_WEIGHT))
        skip_s = skip_w or bool(flags & (FLAG_BAD_SCORE | FLAG_NULL_SCORE))
        ref[(g, code)] = (n, None if skip_w else sw, None if skip_s else sws, None if skip_w else sw2)
    return ref


def _codes(data: pl.DataFrame, engine: str = "in-memory") -> pl.DataFrame:
    spec = build_spec(data, **KW, exact_sums=True)
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
    assert all(codes.schema[c] == pl.UInt128 for c in (W, WS, W2, W2LO))
    ref = _reference(df)
    assert len(codes) == len(ref)
    for g, code, n, sw, sws, hi, lo in codes.select("g", CODE, "__pf_n", W, WS, W2, W2LO).iter_rows():
        rn, rw, rws, rw2 = ref[(g, code)]
        assert n == rn
        if rw is not None:
            assert sw == rw, (g, code)
            assert hi * 2**64 + lo == rw2, (g, code)  # Σ floor(w²·2**80), split at 2**-16
        if rws is not None:
            assert sws == rws, (g, code)


@given(rows=ROWS, cuts=st.lists(st.integers(0, 60), max_size=4), seed=st.integers(0, 2**16))
@settings(max_examples=40, deadline=None)
def test_pass_sums_do_not_depend_on_row_order_chunking_or_engine(rows: list[tuple], cuts: list[int], seed: int) -> None:
    df = _frame(rows)
    want = _codes(df)
    other = _pieces(df, cuts, seed)
    valid = pl.col(CODE).is_in(list(range(16)))  # rows whose sums are read (no flag set)
    for engine in ("in-memory", "streaming"):
        got = _codes(other, engine)
        assert_frame_equal(got.filter(valid), want.filter(valid), check_exact=True)  # Σw² included
        assert_frame_equal(got.select("g", CODE, "__pf_n"), want.select("g", CODE, "__pf_n"))


def _valid_frame(n: int, seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    w = (rng.exponential(1.0, n) + 0.01) * rng.choice([1e-2, 1.0, 1e3, 1e9], n)  # all >= 2**-16
    return pl.DataFrame({
        "y": rng.integers(0, 2, n), "p": rng.integers(0, 2, n), "s": rng.random(n), "w": w,
        "g": rng.choice(["a", "b", "c"], n),
    })  # fmt: skip


def test_cell_values_are_the_exact_sums_rounded_once() -> None:
    df = _valid_frame(5000, seed=3)
    cells = pf.confusion_counts(df, **KW, exact_sums=True).collect().sort("g")
    rows = df.with_columns(ws=pl.col("w") * pl.col("s"), ww=pl.col("w") * pl.col("w")).iter_rows(named=True)
    exact: dict[tuple[str, str], int] = {}
    for r in rows:
        cls = {(1, 1): "tp", (0, 1): "fp", (0, 0): "tn", (1, 0): "fn"}[(r["y"], r["p"])]
        fw, fws, fw2 = _fixed(r["w"]), _fixed(r["ws"]), _fixed(r["ww"], 2**80)
        for col, v in ((cls, fw), (f"{cls}_ws", fws), (f"{cls}_w1s", fw - fws), (f"{cls}_w2", fw2)):
            exact[(r["g"], col)] = exact.get((r["g"], col), 0) + v
    for row in cells.iter_rows(named=True):
        g = row["g"]
        for col in ("tp", "fp", "tn", "fn"):
            assert row[col] == float(Fraction(exact[(g, col)], SCALE)), (g, col)  # float(Fraction): correctly rounded
            hi, lo = divmod(exact[(g, f"{col}_w2")], 2**64)
            assert row[f"{col}_w2"] == float(hi) * 2.0**-16 + float(lo) * 2.0**-80, (g, col)  # the fixed formula
            assert row[f"{col}_w2"] == pytest.approx(float(Fraction(exact[(g, f"{col}_w2")], 2**80)), rel=1e-15)
        # Σw·s and Σw·(1−s) are exact too, and a column over several classes (generalized counts, w)
        # adds the classes' exact sums before its one rounding
        assert row["gtp"] == float(Fraction(exact[(g, "tp_ws")] + exact[(g, "fn_ws")], SCALE))
        assert row["gfn"] == float(Fraction(exact[(g, "tp_w1s")] + exact[(g, "fn_w1s")], SCALE))
        assert row["gtn"] == float(Fraction(exact[(g, "fp_w1s")] + exact[(g, "tn_w1s")], SCALE))
        assert row["w"] == float(Fraction(sum(exact[(g, c)] for c in ("tp", "fp", "tn", "fn")), SCALE))


@pytest.mark.parametrize("engine", ["in-memory", "streaming"])
def test_cell_tables_and_reports_are_bit_identical_across_orders_and_chunks(engine: str) -> None:
    df = _valid_frame(20_000, seed=5)
    want = pf.confusion_counts(df, **KW, exact_sums=True).collect()
    report = pf.fairness_report(df, **KW, exact_sums=True, engine=engine)
    for seed, cuts in ((1, [3, 777, 9000]), (2, list(range(0, 20_000, 1234)))):
        other = _pieces(df, cuts, seed)
        got = pf.confusion_counts(other, **KW, exact_sums=True).collect(engine=engine)  # type: ignore[call-overload]
        assert_frame_equal(got, want, check_exact=True)  # Σw² (n_eff, intervals) included
        # the ENTIRE report: values, intervals, p-values, n_eff
        assert_frame_equal(pf.fairness_report(other, **KW, exact_sums=True, engine=engine), report, check_exact=True)


def test_float64_sums_are_within_1e13_of_the_exact_sums() -> None:
    df = _valid_frame(50_000, seed=11)
    cells = pf.confusion_counts(df, **KW).collect().sort("g")
    for g, part in df.with_columns(ws=pl.col("w") * pl.col("s")).group_by("g"):
        row = cells.filter(pl.col("g") == g[0]).row(0, named=True)
        assert row["w"] == pytest.approx(math.fsum(part["w"]), rel=1e-13)
        assert row["gtp"] + row["gfp"] == pytest.approx(math.fsum(part["ws"]), rel=1e-13)
        assert sum(row[f"{c}_w2"] for c in ("tp", "fp", "tn", "fn")) == pytest.approx(
            math.fsum(part["w"] ** 2), rel=1e-13
        )


def test_weights_below_the_grid_are_an_error_and_unweighted_scores_are_exact() -> None:
    # issue 21: a positive weight below 2**-16 used to add (almost) nothing to Σw in silence
    # (1e-300 gave num_instances 0.0); with exact_sums it is an error naming the option and range,
    # and Float64 sums (the default) count it
    df = pl.DataFrame({"y": [1, 1, 1], "g": ["a"] * 3, "w": [1e-300, 1e-300, 1e-9]})
    with pytest.raises(pf.InvalidInputError, match=r"weight='w': 3 rows .*exact_sums=True.*2\*\*-16"):
        pf.fairness_report(df, y_true="y", protected="g", weight="w", exact_sums=True)
    rep = pf.fairness_report(df, y_true="y", protected="g", weight="w")
    assert rep.filter(pl.col("attribute").is_null(), metric="num_instances")["value"].item() == 2e-300 + 1e-9
    # scores without weights: Σs and Σ(1−s) exact as well
    s = [0.1, 0.2, 0.7, 1.0 / 3]
    df = pl.DataFrame({"y": [1] * 4, "p": [1] * 4, "s": s, "g": ["a"] * 4})
    cells = pf.confusion_counts(df, y_true="y", y_pred="p", y_score="s", protected="g", exact_sums=True).collect()
    assert cells["gtp"].item() == float(Fraction(sum(_fixed(v) for v in s), SCALE))
    assert cells["gfn"].item() == float(Fraction(sum(SCALE - _fixed(v) for v in s), SCALE))
