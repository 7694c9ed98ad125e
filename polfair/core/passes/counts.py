"""Stage 2, *counts*: the one pass over the data that produces the cell table.

The pass is a single ``group_by(by + protected keys + [outcome code]).agg(n, Σw, Σw·s, Σw·(1-s))``
over the user's rows (the outcome code is described in :mod:`polfair.core.passes.spec`). The outcome code is a
tiny integer key, so this is much cheaper than one conditional sum per confusion cell (see
``docs/design.md``). Pivoting the code into the confusion columns then happens on that result,
which has at most 16 rows per cell. Everything after this module reads only the cell table.

Cell table schema (one row per observed combination of ``by`` and protected keys, sorted by them,
nulls first). It is a public, stable format: tables from partitions merge by summation
(:func:`merge_counts`).

=============  ========  ==================================================================
column         dtype     meaning
=============  ========  ==================================================================
*by*, *keys*   input's   the ``by`` columns, then the protected attributes (null kept as null)
``n``          UInt64    rows in the cell, all of them (valid + missing + invalid)
``n_missing``  UInt64    rows with a null label, prediction, score or weight (excluded below)
``n_invalid``  UInt64    rows with an invalid label/score/weight (excluded; the report raises)
``w``          Float64   Σ weight over the counted rows (= their number when unweighted)
``tp fp tn fn``Float64   weighted confusion counts w.r.t. the favorable label
``tp_n`` ...   UInt64    the same four, unweighted (aif360's entropy indices ignore weights)
``gtp gfp``    Float64   Σ w·s over y = fav, Σ w·s over y = unfav (s = score, or 1[ŷ = fav])
``gtn gfn``    Float64   Σ w·(1−s) over y = unfav, Σ w·(1−s) over y = fav
``tp_w2`` ...  Float64   Σ w² per confusion class (``tp_w2, fp_w2, tn_w2, fn_w2``; equal to
                         ``tp_n`` ... when unweighted): Kish effective sizes for the intervals
=============  ========  ==================================================================

With ``cluster=`` the table has one more key after the protected attributes, ``bucket`` (UInt8,
:func:`polfair.core.intervals.bucket_of` of the cluster id, 0 … ``n_buckets − 1``): all rows of
a cluster share a bucket, so the delete-a-group jackknife can drop one bucket at a time. It is an
ordinary key for :func:`merge_counts`; sum it away for point estimates.

Without predictions (labels-only audits) the prediction mirrors the label, so ``fp = fn = 0``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import polars as pl

from polfair.core.contract import W2_SHIFT, check_polarity, code_problems, weight_range_message, weight_squares
from polfair.core.passes.spec import (
    CODE,
    CODE_VALUES,
    EXACT_SCALE,
    W1S,
    WS,
    Spec,
    W,
    build_spec,
    favorable_value_columns,
    fold_values,
)
from polfair.core.values import check_role_dtype
from polfair.exceptions import InvalidInputError, PolfairError, WeightRangeWarning

__all__ = [
    "BUCKET",
    "CODE_ROWS",
    "CODE_W2",
    "CONFUSION_COLUMNS",
    "COUNTED_CODES",
    "COUNT_COLUMNS",
    "COUNT_DTYPES",
    "cell_table",
    "checked_polarity",
    "code_counts",
    "combine_limbs",
    "describe_code_problems",
    "check_cell_table",
    "check_counted",
    "exact_limb_columns",
    "grouped_by_code",
    "merge_counts",
    "pivot_codes",
    "W2_COLUMNS",
    "W2_DOWN",
    "W2_ONE",
    "W2_UP",
    "WEIGHT_EXP",
]

#: Count columns of the cell table, in schema order.
COUNT_COLUMNS = (
    "n", "n_missing", "n_invalid", "w", "tp", "fp", "tn", "fn",
    "tp_n", "fp_n", "tn_n", "fn_n", "gtp", "gfp", "gtn", "gfn",
    "tp_w2", "fp_w2", "tn_w2", "fn_w2",
)  # fmt: skip
#: The Σw² columns (additive; used by :mod:`polfair.core.intervals` for Kish effective sizes).
W2_COLUMNS = ("tp_w2", "fp_w2", "tn_w2", "fn_w2")
#: Name of the optional jackknife bucket key (``cluster=``).
BUCKET = "bucket"
CONFUSION_COLUMNS = COUNT_COLUMNS[3:]
#: The dtype of every count column (unweighted counts UInt64, weighted sums Float64).
COUNT_DTYPES: dict[str, pl.DataType] = {
    c: pl.UInt64() if c in ("n", "n_missing", "n_invalid") or c.endswith("_n") else pl.Float64()
    for c in COUNT_COLUMNS
}

_N = "__pf_n"
_K = "__pf_k"
_W2 = "__pf_w2"
#: Names of the code table's row count and Σw² columns (what :func:`pivot_codes` reads them from).
CODE_ROWS, CODE_W2 = _N, _W2
_W2LO = "__pf_w2lo"
#: The Float64 pass's two accumulators of Σw² (:func:`polfair.core.contract.weight_squares`).
W2_UP, W2_DOWN = "__pf_w2up", "__pf_w2dn"
#: The pass's Σw² in one Float64 accumulator (``code_counts(one_square=True)``).
W2_ONE = "__pf_w2one"
#: A column of a cell table of :func:`polfair.core.passes.collect.collect_cells` with ``relative=True`` (not
#: public): its weighted columns are in units of ``2**value`` (Σw² in ``4**value``).
WEIGHT_EXP = "__pf_wexp"
#: exact_sums=True: Σw² is ``floor(w² · 2**80)``, held as two UInt128 sums: ``_W2`` =
#: ``floor(w² · 2**16)`` (< 2**96 for w < 2**40) and ``_W2LO`` = the next 64 bits.
W2_HI_SCALE, W2_LO_SCALE = 2.0**16, 2.0**64


def _group(spec: Spec) -> list[str]:
    """The keys of the pass: by, protected, and the jackknife bucket when ``cluster=`` was given."""
    return [*spec.by, *spec.keys, *([BUCKET] if getattr(spec, "bucket", False) else [])]


def _exact_sum(name: str) -> pl.Expr:
    """Σ of a non-negative Float64 column below 2**40, exactly and in any order: each value
    truncated to a multiple of 2**-56 (``floor(x · 2**56)``), summed as UInt128.

    ``wrap_numerical=True`` is the plain float -> integer conversion (truncation, no range check:
    about 20% cheaper than a checked cast); UInt128 about 10% cheaper again than Int128. Every
    counted value is in [0, 2**96), where it is exact; NaN, negative or huge values exist only in
    rows with an invalid or missing weight or score, whose sums are never read.
    """
    return (pl.col(name) * EXACT_SCALE).cast(pl.UInt128, wrap_numerical=True).sum().alias(name)


def _exact_w2() -> list[pl.Expr]:
    """Σw² exactly (``floor(w² · 2**80)``, w² the Float64 product) as two UInt128 sums."""
    q = pl.col(W) * pl.col(W) * W2_HI_SCALE  # < 2**96; exact scaling of the correctly rounded w·w
    hi = q.floor()
    return [
        hi.cast(pl.UInt128, wrap_numerical=True).sum().alias(_W2),
        ((q - hi) * W2_LO_SCALE).cast(pl.UInt128, wrap_numerical=True).sum().alias(_W2LO),
    ]


def exact_limb_columns(eng: Any, w: Any | None, ws: Any | None, ok_w: Any, ok_ws: Any) -> dict[str, Any]:
    """The exact sums' integers as 32-bit limbs, for engines with 64-bit integers (Spark, DuckDB).

    ``floor(x · 2**56)`` of a value below 2**40 is below 2**96: three limbs ``l2, l1, l0`` (each
    < 2**32, so an Int64 sum of fewer than 2**31 rows cannot overflow) with
    ``floor(x · 2**56) = l2·2**64 + l1·2**32 + l0``, computed exactly in Float64 (``a − floor(a)``
    and scaling by 2**32 are exact). Σw² takes five limbs: ``floor(w² · 2**80)``. Rows whose value
    is not counted (``ok_*`` false: missing or invalid) get 0, so no conversion can overflow.
    :func:`combine_limbs` turns the sums back into the UInt128 columns of :func:`code_counts`;
    ``tests/contract`` checks that the integers are the same on every engine.

    Parameters
    ----------
    eng
        The engine (:class:`polfair.core.contract.Engine`).
    w, ws
        Float64 weight and weight·score expressions (``None`` when absent).
    ok_w, ok_ws
        Boolean expressions: the weight (and score) of the row are counted.

    Returns
    -------
    dict
        Column name (``__pf_w__l2`` ...) -> Int64 limb expression.
    """
    ns = eng.ns

    def limbs(name: str, top: Any, ok: Any, n: int) -> dict[str, Any]:
        a = ns.when(ok).then(top).otherwise(ns.lit(0.0))
        out = {}
        for i in range(n - 1, -1, -1):
            limb = a.floor()
            out[f"{name}__l{i}"] = limb.cast(ns.Int64)
            a = (a - limb) * 2.0**32
        return out

    cols: dict[str, Any] = {}
    if w is not None:
        cols |= limbs(W, w * (EXACT_SCALE / 2.0**64), ok_w, 3)
        cols |= limbs(_W2, w * w * (W2_HI_SCALE / 2.0**64), ok_w, 5)
    if ws is not None:
        cols |= limbs(WS, ws * (EXACT_SCALE / 2.0**64), ok_ws, 3)
    return cols


def combine_limbs(codes: pl.DataFrame) -> pl.DataFrame:
    """Sums of :func:`exact_limb_columns` -> the UInt128 columns of :func:`code_counts` (exact).

    Examples
    --------
    >>> import polars as pl
    >>> t = pl.DataFrame({"__pf_w__l2": [1], "__pf_w__l1": [0], "__pf_w__l0": [3]})
    >>> combine_limbs(t)["__pf_w"].item() == 2**64 + 3
    True
    """
    u = pl.UInt128

    def part(name: str, idx: Sequence[int]) -> pl.Expr:
        out = None
        for i in idx:
            term = pl.col(f"{name}__l{i}").cast(pl.Int128).cast(u) * pl.lit(2 ** (32 * (i - idx[-1])), u)
            out = term if out is None else out + term
        assert out is not None
        return out

    new = {}
    for name in (W, WS):
        if f"{name}__l0" in codes.columns:
            new[name] = part(name, (2, 1, 0))
    if f"{_W2}__l0" in codes.columns:
        new[_W2], new[_W2LO] = part(_W2, (4, 3, 2)), part(_W2, (1, 0))
    limbs = [c for c in codes.columns if "__l" in c and c.rsplit("__l", 1)[0] in (W, WS, _W2)]
    return codes.with_columns(**new).drop(limbs)


def _is_exact(dtype: pl.DataType | None) -> bool:
    """A weighted sum of the code table held as exact fixed point (this pass; Int128 before)."""
    return dtype in (pl.UInt128, pl.Int128)


def _in_slots(x: pl.Expr, zero: pl.Expr, *slots: int) -> pl.Expr:
    """``x`` on code-table rows of these slots (column ``_SLOTS.name``), ``zero`` elsewhere."""
    slot = pl.col(_SLOTS.name)
    return pl.when(slot.is_in(list(slots)) if len(slots) > 1 else slot == slots[0]).then(x).otherwise(zero)


def code_counts(spec: Spec, *, one_square: bool = False) -> pl.LazyFrame:
    """The pass over the data: counts per (by, keys, outcome code). Internal, see module doc.

    Float64 sums by default (Σw, Σw², Σw·s, Σw·(1−s)); with ``spec.exact`` fixed-point UInt128
    sums (Σw, Σw·s, Σw² in two parts; Σw·(1−s) is then Σw − Σw·s exactly). ``one_square``: Σw² as
    ONE Float64 sum (column :data:`W2_ONE`) instead of the two scaled accumulators of
    :func:`~polfair.core.contract.weight_squares`: half their work, exact for ordinary weights;
    :func:`polfair.core.passes.collect.collect_codes` checks its range and recounts with the two
    only where it cannot hold Σw² (weights beyond about 1e±144).
    """
    aggs = [pl.len().cast(pl.UInt64).alias(_N)]
    if spec.exact:  # exact fixed-point sums: the same bits whatever the row order, chunking or engine
        if spec.weighted:
            aggs += [_exact_sum(W), *_exact_w2()]
        if spec.has_scores:
            aggs.append(_exact_sum(WS))
    else:
        if spec.weighted and one_square:  # Σw² in one accumulator (ordinary weights: checked after the pass)
            aggs += [pl.col(W).sum(), (pl.col(W) * pl.col(W)).sum().alias(W2_ONE)]
        elif spec.weighted:  # Σw² (Kish sizes) in two accumulators: weights of 1e-200 and of 1e200 both fit
            up, down = weight_squares(pl.col(W))
            aggs += [pl.col(W).sum(), up.sum().alias(W2_UP), down.sum().alias(W2_DOWN)]
        if spec.has_scores:
            aggs += [pl.col(WS).sum(), pl.col(W1S).sum()]
    assert spec.lf is not None
    aggs += [pl.col(c).sum() for c in favorable_value_columns(spec.lf.collect_schema().names())]
    return grouped_by_code(spec, aggs)


def grouped_by_code(spec: Spec, aggs: Sequence[pl.Expr]) -> pl.LazyFrame:
    """``aggs`` per (by, keys, outcome code) of ``spec.lf``: the grouping of :func:`code_counts`
    (one folded integer key for the keys whose values are known, beside the others), for any aggregations.
    """
    group = _group(spec)
    lf = spec.lf
    assert lf is not None, "a Spec of another engine's pass has no Polars frame"
    if not spec.fold:
        return lf.group_by([*group, CODE]).agg(aggs)
    # Small-domain keys: group on ONE integer holding each such key's value slot and the outcome
    # code (a single-integer hash is cheaper than hashing several columns), beside the keys whose
    # values are not known (a date, a String, the bucket), then decode the keys on the small
    # result. Slot = physical value, or `size` for null.
    layout = [*spec.fold, *[None] * (len(group) - len(spec.fold))]  # (the bucket: never folded)
    known = [(name, entry) for name, entry in zip(group, layout) if entry is not None]
    dt = pl.UInt32 if fold_values(spec.fold) <= 2**32 else pl.UInt64
    folded = None
    for name, (size, dtype) in known:
        phys = pl.col(name) if dtype == pl.Boolean else pl.col(name).to_physical()
        slot = phys.cast(dt).fill_null(size)
        folded = slot if folded is None else folded * (size + 1) + slot
    assert folded is not None  # a non-empty fold has a known key
    folded = pl.col(CODE).cast(dt) + CODE_VALUES * folded
    decoded, step = {}, CODE_VALUES
    for name, (size, dtype) in reversed(known):
        slot = (pl.col(_K) // step) % (size + 1)
        when_known = pl.when(slot < size)
        if dtype == pl.Boolean:
            decoded[name] = when_known.then(slot == 1).alias(name)
        else:
            physical = pl.Series(dtype=dtype).to_physical().dtype
            decoded[name] = when_known.then(slot).cast(physical).cat.to(dtype).alias(name)
        step *= size + 1
    code = (pl.col(_K) % CODE_VALUES).cast(pl.UInt8).alias(CODE)
    others = [name for name, entry in zip(group, layout) if entry is None]
    return lf.group_by([*others, folded.alias(_K)]).agg(aggs).select(
        *[decoded.get(name, pl.col(name)) for name in group], code, *[a.meta.output_name() for a in aggs]
    )


def _slot(code: int) -> int:
    """Where rows with outcome ``code`` go: 0 tp, 1 fp, 2 tn, 3 fn, 4 missing, 5 invalid."""
    label, pred, flags = code % 4, code // 4 % 4, code // 16
    if label == 3 or pred == 3 or flags % 4:  # flag bits 0, 1: invalid score / weight
        return 5
    if label == 2 or pred == 2 or flags >= 4:  # bits 2, 3: null weight / score
        return 4
    return {(1, 1): 0, (0, 1): 1, (0, 0): 2, (1, 0): 3}[(label, pred)]


#: The slot of every possible outcome code (a UInt8 code indexes it directly).
_SLOTS = pl.Series("__pf_slot", [_slot(c) for c in range(CODE_VALUES)], dtype=pl.UInt8)
#: The outcome codes of counted rows (a valid label, prediction, score and weight).
COUNTED_CODES: tuple[int, ...] = tuple(c for c in range(CODE_VALUES) if _slot(c) < 4)


def _range_warning(spec: Spec) -> Callable[[pl.Series], pl.Series]:
    """A batch function that passes Σw² through and, when the lazy public table is collected with
    some Σw² Float64 cannot hold (null), warns once with :class:`~polfair.exceptions.WeightRangeWarning`
    naming the weight column (as :func:`polfair.core.contract.weight_units` does for the reports).
    """
    said = False

    def check(w2: pl.Series) -> pl.Series:
        nonlocal said
        bad = w2.null_count()
        if bad and not said:
            said = True
            warnings.warn(weight_range_message(spec.compiled.get("weight"), bad), WeightRangeWarning, stacklevel=2)
        return w2

    return check


def pivot_codes(codes: pl.LazyFrame, spec: Spec) -> pl.LazyFrame:
    """Turn per-code counts into the cell table (runs on the small result of :func:`code_counts`).

    An exact code table (integer counts, fixed-point sums: ``exact_sums=True``, or no weights and
    no scores) goes through :func:`_pivot_exact`; a table with Float64 sums (the default) is sorted
    first so that the sums after the pass add in the same order every run.
    """
    cschema = codes.collect_schema()
    exact = not (spec.weighted and not _is_exact(cschema.get(W))) and not (
        spec.has_scores and not _is_exact(cschema.get(WS))
    )
    if exact:
        return _pivot_exact(codes, spec)
    # Float64 sums W, WS, W1S and Σw² (the default pass, in any engine)
    n, slot = pl.col(_N), pl.col(_SLOTS.name)
    wt = pl.col(W) if spec.weighted else n.cast(pl.Float64)
    # Σw² per row of the code table (unweighted: the count): after weight_units (collect_cells), or in the
    # data's units from the pass's two accumulators (the lazy public table; checked below)
    names = cschema.names()
    if not spec.weighted:
        w2 = n.cast(pl.Float64)
    elif _W2 in names:
        w2 = pl.col(_W2)
    elif W2_UP in names:  # null where Σw² leaves Float64's normal range (weights beyond about 1e±150)
        a, b = pl.col(W2_UP), pl.col(W2_DOWN)
        w2 = pl.when(a.is_finite()).then(a * 4.0**-W2_SHIFT).otherwise(b * 4.0**W2_SHIFT)
        w2 = pl.when((w2 >= 2.0**-1022) & w2.is_finite() | (pl.col(W) == 0)).then(w2)
        w2 = w2.map_batches(_range_warning(spec), return_dtype=pl.Float64, is_elementwise=True)  # warns at collect
    else:
        w2 = pl.lit(None, pl.Float64)
    # default scores are 1[ŷ = fav] (aif360), so then the generalized counts are the hard ones
    ws = pl.col(WS) if spec.has_scores else pl.when(slot.is_in([0, 1])).then(wt).otherwise(0.0)
    w1s = pl.col(W1S) if spec.has_scores else pl.when(slot.is_in([2, 3])).then(wt).otherwise(0.0)

    def at(x: pl.Expr, *slots: int) -> pl.Expr:
        return _in_slots(x, pl.lit(0, pl.UInt64) if x is n else pl.lit(0.0), *slots)

    columns = {
        "n": n, "n_missing": at(n, 4), "n_invalid": at(n, 5), "w": at(wt, 0, 1, 2, 3),
        "tp": at(wt, 0), "fp": at(wt, 1), "tn": at(wt, 2), "fn": at(wt, 3),
        "tp_n": at(n, 0), "fp_n": at(n, 1), "tn_n": at(n, 2), "fn_n": at(n, 3),
        "gtp": at(ws, 0, 3), "gfp": at(ws, 1, 2), "gtn": at(w1s, 1, 2), "gfn": at(w1s, 0, 3),
        "tp_w2": at(w2, 0), "fp_w2": at(w2, 1), "tn_w2": at(w2, 2), "fn_w2": at(w2, 3),
    }  # fmt: skip
    group = _group(spec)
    # sort the (small) code table first so the weighted sums below add in the same order every run;
    # each row's amounts go to its slot's columns (zeros elsewhere), then one plain sum per column
    out = (
        codes.sort([*group, CODE], nulls_last=False)
        .with_columns(pl.lit(_SLOTS).gather(pl.col(CODE)))
        .select(*group, *[e.alias(c) for c, e in columns.items()])
    )
    # a null Σw² (beyond Float64's range) stays null in its cell's sum
    sums = [pl.col(c).sum() if c not in W2_COLUMNS else pl.when(pl.col(c).null_count() == 0).then(pl.col(c).sum()).alias(c)
            for c in columns]  # fmt: skip
    if group:
        return out.group_by(group, maintain_order=True).agg(sums)
    return out.select(sums)


def _pivot_exact(codes: pl.LazyFrame, spec: Spec) -> pl.LazyFrame:
    """:func:`pivot_codes` of an exact code table (counts and fixed-point sums).

    Every column is a sum over its slots' codes done in integers (UInt64 counts, UInt128 fixed
    point) and converted once: the result does not depend on the order of the code table, so it
    needs no sort of the code table (one row per (cell, outcome code)), only of the cells. Σw² is
    ``hi · 2**-16 + lo · 2**-80`` of its two integer sums (a fixed formula of exact integers, so
    the same bits every run and on every engine).
    """
    n = pl.col(_N)
    u128 = pl.UInt128
    zero_n, zero_u = pl.lit(0, pl.UInt64), pl.lit(0, u128)
    at = _in_slots
    cschema = codes.collect_schema()

    # per code-table row: each amount in its slots' columns (integers), then one plain sum per column
    total = pl.col(W).cast(u128) if spec.weighted else n.cast(u128) * pl.lit(int(EXACT_SCALE), u128)
    ws = pl.col(WS).cast(u128) if spec.has_scores else None
    fixed: dict[str, pl.Expr] = {"w": at(total, zero_u, 0, 1, 2, 3)}
    if spec.weighted:
        fixed |= {"tp": at(total, zero_u, 0), "fp": at(total, zero_u, 1), "tn": at(total, zero_u, 2),
                  "fn": at(total, zero_u, 3)}  # fmt: skip
    if ws is not None:  # Σw·s and Σw·(1 − s) = Σw − Σw·s (never below 0 where read: rows of slots 0-3)
        fixed |= {"gtp": at(ws, zero_u, 0, 3), "gfp": at(ws, zero_u, 1, 2), "gtn": at(total - ws, zero_u, 1, 2),
                  "gfn": at(total - ws, zero_u, 0, 3)}  # fmt: skip
    counts = {"n": n, "n_missing": at(n, zero_n, 4), "n_invalid": at(n, zero_n, 5), "tp_n": at(n, zero_n, 0),
              "fp_n": at(n, zero_n, 1), "tn_n": at(n, zero_n, 2), "fn_n": at(n, zero_n, 3)}  # fmt: skip
    classes = ("tp", "fp", "tn", "fn")
    exact_w2 = spec.weighted and _W2LO in cschema.names()
    w2_parts: dict[str, pl.Expr] = {}
    if exact_w2:
        for i, k in enumerate(classes):
            w2_parts[f"{k}_w2hi"] = at(pl.col(_W2).cast(u128), zero_u, i)
            w2_parts[f"{k}_w2lo"] = at(pl.col(_W2LO).cast(u128), zero_u, i)
    else:  # unweighted: Σw² is the count (a weighted Float64 Σw² never reaches this function)
        w2_parts = {f"{k}_w2": at(n, zero_n, i) for i, k in enumerate(classes)}
    group = _group(spec)
    rows = codes.with_columns(pl.lit(_SLOTS).gather(pl.col(CODE))).select(
        *group, *[e.alias(c) for c, e in {**counts, **fixed, **w2_parts}.items()]
    )
    summed = rows.group_by(group).agg(pl.all().sum()).sort(group, nulls_last=False) if group else rows.sum()
    as_float = {c: pl.col(c).cast(pl.Float64) / EXACT_SCALE for c in fixed}
    for k in classes:
        if exact_w2:
            as_float[f"{k}_w2"] = (pl.col(f"{k}_w2hi").cast(pl.Float64) / W2_HI_SCALE
                                   + pl.col(f"{k}_w2lo").cast(pl.Float64) / (W2_HI_SCALE * W2_LO_SCALE))  # fmt: skip
        else:
            as_float[f"{k}_w2"] = pl.col(f"{k}_w2").cast(pl.Float64)
    hard = {"tp": "tp_n", "fp": "fp_n", "tn": "tn_n", "fn": "fn_n"}
    for c, src in hard.items():  # unweighted: the counts
        as_float.setdefault(c, pl.col(src).cast(pl.Float64))
    for c, src in {"gtp": "tp", "gfp": "fp", "gtn": "tn", "gfn": "fn"}.items():  # default scores 1[ŷ = fav]
        as_float.setdefault(c, as_float[src])
    return summed.select(*group, *[(as_float[c] if c in as_float else pl.col(c)).alias(c) for c in COUNT_COLUMNS])


def describe_code_problems(codes: pl.DataFrame) -> dict[str, int]:
    """Row totals per problem kind from a collected :func:`code_counts` result
    (:func:`polfair.core.contract.code_problems`).
    """
    return code_problems(codes, _N)


def cell_table(data: Any, **request: Any) -> pl.LazyFrame:
    """The cell table of a Polars-readable input (the plan of the ONE pass; nothing runs yet).

    The in-process half of :func:`polfair.confusion_counts` (which also dispatches PySpark/DuckDB
    frames to :mod:`polfair.engines.narwhals`): ``build_spec`` -> ``code_counts`` -> ``pivot_codes``.

    Parameters
    ----------
    data
        Anything :func:`polfair.core.contract.inputs.to_lazyframe` reads (frames, pandas, pyarrow, paths).
    **request
        The keywords of :func:`polfair.core.passes.spec.build_spec` (``y_true``, ``y_pred``, ``y_score``,
        ``threshold``, ``protected``, ``favorable``, ``unfavorable``, ``weight``, ``by``).

    Returns
    -------
    pl.LazyFrame
        The cell table (schema in this module's docstring).

    Raises
    ------
    ColumnNotFoundError, PolfairError
        As :func:`polfair.core.passes.spec.build_spec`.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": [1, 0], "p": [1, 1], "g": ["a", "b"]})
    >>> cell_table(df, y_true="y", y_pred="p", protected="g").collect()["fp"].to_list()
    [0.0, 1.0]
    """
    spec = build_spec(data, **request)
    return pivot_codes(checked_polarity(code_counts(spec), spec), spec)


def checked_polarity(codes: pl.LazyFrame, spec: Spec) -> pl.LazyFrame:
    """``codes`` that raise, when collected, if the pass found labels that break the polarity rule's
    reading (:func:`polfair.core.contract.check_polarity`; the lazy cell table of
    :func:`polfair.confusion_counts` counts other invalid rows in ``n_invalid``, but a reading it
    cannot tell is never a number).
    """
    c = spec.compiled.get("y_true")
    if c is None or c.mark is None:
        return codes

    def check(df: pl.DataFrame) -> pl.DataFrame:
        if code_problems(df, _N)["invalid_label"]:
            check_polarity(c, spec.examples)
        return df

    return codes.map_batches(check, schema=codes.collect_schema())


def merge_counts(tables: Sequence[pl.DataFrame | pl.LazyFrame]) -> pl.LazyFrame:
    """Merge cell tables of partitions (files, days, batches) into the table of their union.

    Cell tables are additive: concatenating them and summing every count column per key gives
    exactly the table a single pass over all the data gives (integer counts exactly; weighted
    sums up to floating-point summation order).

    Parameters
    ----------
    tables
        Cell tables from :func:`confusion_counts` with the same key columns (eager or lazy).

    Returns
    -------
    pl.LazyFrame
        A cell table with the same schema, sorted by its keys (nulls first).

    Raises
    ------
    PolfairError
        If ``tables`` is empty or the tables' columns differ.
    InvalidInputError
        A table is not a cell table (missing or mistyped count columns), a key's dtype differs
        between tables (String ``"1"`` and Int ``1`` are never merged into one cell), a merged
        count exceeds UInt64, or a weighted sum overflows Float64 (raised when collected).

    Examples
    --------
    >>> import polars as pl
    >>> import polfair as pf
    >>> df = pl.DataFrame({"y": [1, 0, 1, 1], "p": [1, 1, 0, 1], "g": ["a", "a", "b", "b"]})
    >>> parts = [pf.confusion_counts(d, y_true="y", y_pred="p", protected="g") for d in (df[:2], df[2:])]
    >>> merged = pf.merge_counts(parts).collect()
    >>> merged.equals(pf.confusion_counts(df, y_true="y", y_pred="p", protected="g").collect())
    True
    """
    if isinstance(tables, (pl.DataFrame, pl.LazyFrame)) or not isinstance(tables, Sequence):
        msg = f"merge_counts takes a list of cell tables, got {type(tables).__name__}"
        raise TypeError(msg)
    if not tables:
        msg = "merge_counts needs at least one cell table"
        raise PolfairError(msg)
    first = check_cell_table(tables[0], what="tables[0]")
    cols = first.names()
    for i, t in enumerate(tables[1:], 1):
        schema = check_cell_table(t, what=f"tables[{i}]", like=first)
        if sorted(schema.names()) != sorted(cols):
            msg = (
                f"tables[{i}] has columns {schema.names()}, tables[0] has {cols}: cell tables merge "
                "only when they were counted with the same by= and protected= columns"
            )
            raise PolfairError(msg)
    lfs = [t.lazy().select(cols) for t in tables]
    keys = [c for c in cols if c not in COUNT_COLUMNS]
    # whole counts are summed in Int128 and checked against UInt64's range (a UInt64 sum would wrap)
    wide = {c: pl.col(c).cast(pl.Int128) if COUNT_DTYPES[c] == pl.UInt64 else pl.col(c).cast(pl.Float64) for c in COUNT_COLUMNS}
    both = pl.concat([lf.with_columns(**wide) for lf in lfs], how="vertical_relaxed")
    sums = [pl.col(c).sum() for c in cols if c in COUNT_COLUMNS]
    out = both.select(sums) if not keys else both.group_by(keys).agg(sums).sort(keys, nulls_last=False)
    merged = both.collect_schema()
    return out.select(cols).map_batches(_checked_counts, schema={c: COUNT_DTYPES.get(c, merged[c]) for c in cols})


def _checked_counts(df: pl.DataFrame) -> pl.DataFrame:
    """Cast merged sums back to the documented dtypes, raising where a sum left UInt64's range or
    a sum of finite weights overflowed Float64.
    """
    for c in COUNT_COLUMNS:
        if c not in df.columns:
            continue
        if COUNT_DTYPES[c] == pl.UInt64:
            if df.height and (df[c].max() or 0) > 2**64 - 1:  # type: ignore[operator]
                msg = f"merge_counts: the merged count {c!r} exceeds UInt64's range (2**64 - 1); the counts cannot be added"
                raise InvalidInputError(msg)
        elif df.height and df[c].is_infinite().any():
            msg = (
                f"merge_counts: the weighted sum {c!r} overflows Float64 (inf) although every table's "
                "sums are finite; rescale the weights (e.g. divide them by their mean)"
            )
            raise InvalidInputError(msg)
    return df.with_columns([pl.col(c).cast(COUNT_DTYPES[c]) for c in COUNT_COLUMNS if c in df.columns])


def check_counted(total: int, missing: int = 0, *, what: str = "label, prediction, score or weight") -> None:
    """The one "nothing to audit" error of every report: no rows, or every row missing (issue 38: every
    door refuses an input whose every label is missing alike, rather than some returning nulls).

    Parameters
    ----------
    total
        Rows counted (valid, missing and invalid together).
    missing
        Of them, rows with a missing value of a role (left out of every rate).
    what
        The roles that can be missing, for the message.

    Raises
    ------
    InvalidInputError
        ``total == 0`` ("the input has no rows"), or ``missing >= total`` ("every row (n) has a
        missing ...").

    Examples
    --------
    >>> check_counted(3, 1)
    >>> check_counted(3, 3, what="label")
    Traceback (most recent call last):
    ...
    polfair.exceptions.InvalidInputError: every row (3) has a missing label: nothing to audit (check the ...
    """
    if total <= 0:
        msg = "the input has no rows: there is nothing to audit (check filters applied before the report)"
        raise InvalidInputError(msg)
    if missing >= total:
        msg = (f"every row ({total:,}) has a missing {what}: nothing to audit (check the columns and the filters "
               "applied before the report)")  # fmt: skip
        raise InvalidInputError(msg)


def check_cell_table(
    table: pl.DataFrame | pl.LazyFrame,
    *,
    keys: Sequence[str] | None = None,
    what: str = "cells",
    like: pl.Schema | None = None,
) -> pl.Schema:
    """Check that ``table`` is a cell table (schema only; nothing is read) and return its schema.

    Parameters
    ----------
    table
        A cell table (:func:`polfair.confusion_counts`) or something claiming to be one.
    keys
        The key columns it must have (``by`` + protected); ``None``: every non-count column.
    what
        How the message names the table (``"cells"``, ``"tables[2]"``, ``"state"``).
    like
        The schema of another table it must agree with (same key columns and key dtypes).

    Returns
    -------
    pl.Schema
        The table's schema.

    Raises
    ------
    TypeError
        ``table`` is not a Polars frame.
    InvalidInputError
        A count column is missing or has another dtype than :data:`polfair.core.passes.counts.COUNT_DTYPES`
        (integer columns that are not UInt64 are accepted only when they are integers: the caller
        casts them); a key column is missing, is a count column, or has a nested dtype; a key's
        dtype differs from ``like``'s (String ``"1"`` and Int ``1`` are different groups: cast one
        side explicitly).

    Examples
    --------
    >>> import polars as pl
    >>> import polfair as pf
    >>> df = pl.DataFrame({"y": [1, 0], "p": [1, 1], "g": ["a", "b"]})
    >>> cells = pf.confusion_counts(df, y_true="y", y_pred="p", protected="g").collect()
    >>> check_cell_table(cells, keys=["g"])["g"]
    String
    >>> check_cell_table(cells.drop("tp"), keys=["g"])
    Traceback (most recent call last):
    ...
    polfair.exceptions.InvalidInputError: cells: not a cell table: count column(s) 'tp' missing; ...
    """
    if not isinstance(table, (pl.DataFrame, pl.LazyFrame)):
        msg = (
            f"{what} must be a polars DataFrame or LazyFrame cell table (from confusion_counts), "
            f"got {type(table).__name__}"
        )
        raise TypeError(msg)
    count_columns, dtypes = COUNT_COLUMNS, COUNT_DTYPES
    schema = table.collect_schema()
    missing = [c for c in count_columns if c not in schema]
    if missing:
        msg = (
            f"{what}: not a cell table: count column(s) {', '.join(map(repr, missing))} missing; "
            f"a cell table has {', '.join(count_columns)} (from polfair.confusion_counts)"
        )
        raise InvalidInputError(msg)
    for c in count_columns:
        want, got = dtypes[c], schema[c]
        if got == want:
            continue
        ok = (want == pl.UInt64 and got.is_integer()) or (want == pl.Float64 and (got.is_float() or got.is_integer()))
        if not ok:
            msg = (
                f"{what}: count column {c!r} has dtype {got}, expected {want} "
                f"({'whole row counts' if want == pl.UInt64 else 'weighted sums'}); cast it with "
                f"pl.col({c!r}).cast(pl.{want})"
            )
            raise InvalidInputError(msg)
    key_cols = [c for c in schema.names() if c not in count_columns]
    if keys is not None:
        for k in keys:
            if k in count_columns:
                msg = f"{what}: key {k!r} is a count column of the cell table; a key needs another name"
                raise InvalidInputError(msg)
            if k not in schema:
                msg = (
                    f"{what}: key column {k!r} is missing; the table's key columns are "
                    f"{key_cols} (pass protected=/by= as the names used when counting)"
                )
                raise InvalidInputError(msg)
        key_cols = list(keys)
    for k in key_cols:
        check_role_dtype(schema[k], f"{what} key", k)
    if like is not None:
        for k in key_cols:
            if k in like and like[k] != schema[k] and not _same_kind(like[k], schema[k]):
                msg = (
                    f"{what}: key column {k!r} has dtype {schema[k]} but another table has "
                    f"{like[k]}; values such as '1' and 1 are different groups and are not merged. "
                    f"Cast one side explicitly, e.g. pl.col({k!r}).cast(pl.{like[k]})"
                )
                raise InvalidInputError(msg)
    return schema


def _same_kind(a: pl.DataType, b: pl.DataType) -> bool:
    """Key dtypes that merge without changing a value (integer widths, Categorical vs String)."""
    if a.is_integer() and b.is_integer():
        return True
    if a.is_float() and b.is_float():
        return True
    texts = (pl.String, pl.Categorical)
    return isinstance(a, texts) and isinstance(b, texts) or (a == pl.String and isinstance(b, pl.Categorical)) or (
        b == pl.String and isinstance(a, pl.Categorical)
    )


