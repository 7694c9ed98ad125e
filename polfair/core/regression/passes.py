"""The regression pass: one ``group_by`` over the rows to the regression cell table, and its algebra.

The cell table's schema, its centred moments, their units and the histogram's bin codes are
described in :mod:`polfair.core.regression` (the public module, which re-exports this one's public
names) and :mod:`polfair.core.regression.moments` (the moment algebra). Here: the bin code of a
prediction (:func:`prediction_bin`, :func:`bin_edges`), the pass on every engine
(:func:`regression_pass`, :func:`regression_cells`), and the exact merge of tables
(:func:`merge_regression_cells`, :func:`roll_up`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import polars as pl

from polfair.core import contract as ct
from polfair.core._args import mergeable_tables
from polfair.core.passes.estimated import expand_sums
from polfair.core.passes.skeleton import (
    aggregate,
    check_rows,
    estimated_stage,
    group_shares,
    key_columns,
    problem_columns,
)
from polfair.core.passes.spec import PassOptions
from polfair.core.regression.moments import (
    CELL_COLUMNS,
    LO,
    LO_COLUMNS,
    MOMENT_COLUMNS,
    QUANTITIES,
    combine,
    common_units,
    unit_exponent,
    with_lo,
)
from polfair.exceptions import InvalidInputError, PolfairError

__all__ = [
    "BINS_PER_OCTAVE",
    "RESERVED_KEYS",
    "REGRESSION_CELL_COLUMNS",
    "REGRESSION_COUNT_COLUMNS",
    "bin_edges",
    "check_regression_cells",
    "common_units",
    "cells_of_pass",
    "merge_pass_results",
    "merge_regression_cells",
    "prediction_bin",
    "regression_cells",
    "regression_pass",
    "roll_up",
]

#: Default resolution of the prediction histogram: bins per octave (a bin is 2^(1/256) − 1 = 0.27% wide).
BINS_PER_OCTAVE = 256
_OFFSET_OCTAVES = 1100  # |ŷ| >= 2^-1074 (the smallest subnormal): codes stay >= 1

#: Row counts of a regression cell (added when cells are merged).
REGRESSION_COUNT_COLUMNS = ("n", "n_missing", "n_invalid")
#: Value columns of the regression cell table, in order (every other column is a key): counts, Σw and
#: Σw² (in units of ``2^w_exp``), the centred moments (:mod:`polfair.core.regression.moments`, values
#: in units of ``2^y_exp``), the units' exponents, and the ranges of the predictions and outcomes.
REGRESSION_CELL_COLUMNS = CELL_COLUMNS


_F64 = pl.Float64
#: No key may take these names: the regression cell table's own columns, and two working columns of its
#: report ("attribute", "group_key"); ``by`` keys not the report's columns either (``check_key_names``).
RESERVED_KEYS = ("bin", *CELL_COLUMNS, *LO_COLUMNS, "attribute", "group_key")
_RESERVED = RESERVED_KEYS


# ----------------------------------------------------------------------------------------------
# the pass


def prediction_bin(p: pl.Expr, bins_per_octave: int = BINS_PER_OCTAVE) -> pl.Expr:
    """Expression: the histogram bin code of a prediction (Int64; null where ``p`` is null).

    ``code = sign(p)·(⌊log2|p|·B⌋ + 1100·B)``, 0 for ``p = 0``: increasing in ``p``, one bin per
    ``2^(1/B)`` ratio, no range needed (mergeable across partitions).

    Parameters
    ----------
    p
        Float64 prediction expression (finite or null).
    bins_per_octave
        ``B``, an int >= 1.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"p": [-2.0, 0.0, 1.0, 1.001, 1.02, None]})
    >>> codes = df.select(prediction_bin(pl.col("p"))).to_series().to_list()
    >>> codes[1], codes[2] == codes[3], codes[3] < codes[4], codes[0] < 0, codes[5]
    (0, True, True, True, None)
    """
    return _bin_of(ct.POLARS, p, p.is_finite(), bins_per_octave)


def bin_edges(codes: Any, bins_per_octave: int = BINS_PER_OCTAVE) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper edges of bins given by their codes (:func:`prediction_bin`).

    Examples
    --------
    >>> lo, hi = bin_edges([0, 1100 * 256 + 256], 256)
    >>> float(lo[1]), float(hi[1])
    (2.0, 2.005422550100405)
    """
    c = np.asarray(codes, dtype=np.float64)
    off = _OFFSET_OCTAVES * bins_per_octave
    a = np.abs(c) - off
    lo_pos, hi_pos = np.exp2(a / bins_per_octave), np.exp2((a + 1) / bins_per_octave)
    lo = np.where(c > 0, lo_pos, np.where(c < 0, -hi_pos, 0.0))
    hi = np.where(c > 0, hi_pos, np.where(c < 0, -lo_pos, 0.0))
    return lo, hi


def regression_cells(
    frame: pl.LazyFrame,
    *,
    y_true: str | pl.Expr,
    y_pred: str | pl.Expr,
    keys: Sequence[str] = (),
    weight: str | pl.Expr | None = None,
    bins_per_octave: int = BINS_PER_OCTAVE,
    engine: Literal["auto", "in-memory", "streaming"] = "auto",
) -> pl.DataFrame:
    """The regression cell table of a Polars frame: ONE ``group_by(keys + bin)``.

    Parameters
    ----------
    frame
        A LazyFrame with the key columns and numeric outcome, prediction and weight. Null and NaN
        are missing (``n_missing``); ±inf, and a negative weight, are invalid (``n_invalid``; the
        caller raises, :func:`polfair.regression_counts`). Neither is used in any moment.
    y_true, y_pred, weight
        Column names or expressions (weight default 1).
    keys
        The ``by`` and protected columns, in order.
    bins_per_octave
        Resolution of the prediction histogram (:func:`prediction_bin`).
    engine
        Polars engine of the pass.

    Returns
    -------
    pl.DataFrame
        ``*keys``, ``bin``, then :data:`REGRESSION_CELL_COLUMNS` and the means' compensations
        (:data:`~polfair.core.regression.moments.LO_COLUMNS`), sorted by the keys and ``bin``.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": [1.0, 2.0, 4.0], "p": [1.5, 2.0, None], "g": ["a", "a", "b"]})
    >>> cells = regression_cells(df.lazy(), y_true="y", y_pred="p", keys=["g"])
    >>> cells.group_by("g").agg(pl.col("n", "n_missing").sum()).sort("g").rows()
    [('a', 2, 0), ('b', 0, 1)]
    """
    request = PassOptions.of(y_true=y_true, y_pred=y_pred, protected=list(keys), weight=weight, judge=False,
                             on_missing="ignore", allow_many_groups=True, engine=engine)  # fmt: skip
    return regression_pass(ct.PolarsFrame(frame), request, bins_per_octave=bins_per_octave)


# ---------------------------------------------------------------------------------------------
# the one pass, on every engine (the input contract's frame adapter)


def _bin_of(eng: Any, p: Any, ok: Any, bins_per_octave: int) -> Any:
    """:func:`prediction_bin` in an engine's namespace; null where the row does not count.

    The logarithm is taken of ``|p|`` only where ``p`` is a counted non-zero value (1.0 elsewhere),
    so no engine casts an infinite value to an integer.
    """
    ns = eng.ns
    safe = ns.when(ok & (p != 0.0)).then(p.abs()).otherwise(ns.lit(1.0))
    k = (safe.log(2.0) * float(bins_per_octave)).floor().cast(ns.Int64) + _OFFSET_OCTAVES * bins_per_octave
    return ns.when(ok).then(eng.cases([(p > 0.0, k), (p < 0.0, k * -1)], ns.lit(0, ns.Int64)))


#: The pass's row-level columns of each quantity (scaled) and of its cell mean.
_Q = {"y": "__pf_y", "p": "__pf_p", "e": "__pf_e", "ae": "__pf_ae", "e2": "__pf_e2"}


def _stages(ns: Any, part: list[str], groups: Sequence[str] = ("",)) -> list[dict[str, Any]]:
    """The window stages of the pass (each a ``with_columns``), over the cell ``part``.

    1. the cell's units (:func:`~polfair.core.regression.moments.unit_exponent` of its largest
       weight and largest absolute outcome or prediction); 2. the scaled weight and values;
    3. the errors; 4. the cell's weighted means; 5. their compensations (the weighted means of the
    residuals); 6. each row's terms of the centred moments (about the compensated means).

    ``groups``: the suffixes of the weights the moments are taken with (``""``: the row's weight;
    an estimated attribute: ``"_g0"``, ``"_g1"``, ...: each group's share ``w·p_g`` of it, whose
    Σw² term is ``w²·p_g``, as the classification cells hold, :mod:`polfair.core.passes.estimated`).
    """
    c = ns.col
    two = ns.lit(2.0)
    largest = ns.max_horizontal(c("__pf_y0").abs(), c("__pf_p0").abs())
    units = {f"__pf_we{g}": unit_exponent(ns, c(f"__pf_w0{g}").max().over(*part)) for g in groups}
    units["__pf_ye"] = unit_exponent(ns, largest.max().over(*part))
    fy = two ** (c("__pf_ye").fill_null(0.0) * -1.0)
    fw = {g: two ** (c(f"__pf_we{g}").fill_null(0.0) * -1.0) for g in groups}
    scaled = {**{f"__pf_w{g}": c(f"__pf_w0{g}") * fw[g] for g in groups}, "__pf_y": c("__pf_y0") * fy,
              "__pf_p": c("__pf_p0") * fy}  # fmt: skip
    e = c("__pf_p") - c("__pf_y")
    errors = {"__pf_e": e, "__pf_ae": e.abs(), "__pf_e2": e * e}
    means: dict[str, Any] = {}
    lows: dict[str, Any] = {}
    terms: dict[str, Any] = {}
    for g in groups:
        w = c(f"__pf_w{g}")
        W = w.sum().over(*part)
        means |= {
            f"{v}_c{g}": ns.when(W > 0.0).then((w * c(v)).sum().over(*part) / W).otherwise(c(v).mean().over(*part))
            for v in _Q.values()
        }  # fmt: skip
        # the compensation of each mean: the weighted mean of the residuals about it (v − mean is exact near
        # the mean, Sterbenz), so a mean at a large level (1e12 ± 1) keeps its digits (moments.LO)
        r = {v: c(v) - c(f"{v}_c{g}") for v in _Q.values()}
        lows |= {
            f"{v}_lo{g}": ns.when(W > 0.0).then((w * r[v]).sum().over(*part) / W).otherwise(r[v].mean().over(*part))
            for v in _Q.values()
        }  # fmt: skip
        d = {q: (c(v) - c(f"{v}_c{g}")) - c(f"{v}_lo{g}") for q, v in _Q.items()}
        dy = d["y"]
        w2 = w * w if not g else w * (c("__pf_w0") * fw[g])  # Σw²·p_g: the group's share of Σw²
        terms |= {
            f"__pf_w2{g}": w2, f"__pf_m2_y{g}": w * dy * dy, f"__pf_m3_y{g}": w * dy * dy * dy,
            f"__pf_m4_y{g}": w * (dy * dy) * (dy * dy), f"__pf_m2_p{g}": w * d["p"] * d["p"],
            f"__pf_c_yp{g}": w * dy * d["p"], f"__pf_m2_e{g}": w * d["e"] * d["e"],
            f"__pf_m2_ae{g}": w * d["ae"] * d["ae"], f"__pf_m2_e2{g}": w * d["e2"] * d["e2"],
            f"__pf_c_e2y{g}": w * d["e2"] * dy, f"__pf_c_e2y2{g}": w * d["e2"] * dy * dy,
        }  # fmt: skip
    return [units, scaled, errors, means, lows, terms]


#: Output column -> the pass's column it sums.
_SUMS = {"w": "__pf_w", "w2": "__pf_w2", **{m: f"__pf_{m}" for m in MOMENT_COLUMNS if not m.startswith("mean_")}}
#: Output column -> the pass's column of the cell's mean (constant over a cell: its max).
_MEANS = {mean: f"{_Q[q]}_c" for q, (mean, _) in QUANTITIES.items()}
#: Output column -> the pass's column of the compensation of the cell's mean (constant over a cell).
_LOS = {LO[mean]: f"{_Q[q]}_lo" for q, (mean, _) in QUANTITIES.items()}
#: Output column -> (the pass's column, its aggregation) of the ranges and the weight's unit.
_RANGES = {"w_exp": ("__pf_we", "max"), "p_min": ("__pf_pv", "min"), "p_max": ("__pf_pv", "max"),
           "y_min": ("__pf_yv", "min"), "y_max": ("__pf_yv", "max")}  # fmt: skip


def regression_pass(frame: Any, request: PassOptions, *, bins_per_octave: int = BINS_PER_OCTAVE,
                    expand: bool = True) -> pl.DataFrame:  # fmt: skip
    """The regression cell table of any input, in ONE ``group_by(by + protected + bin + code)`` of its engine.

    The pass skeleton (:mod:`polfair.core.passes.skeleton`) with the regression's aggregations.
    The input contract (:mod:`polfair.core.contract`) compiles the roles: ``y_true`` and ``y_pred``
    are numeric outcomes (:func:`~polfair.core.contract.numeric`: null and NaN missing, ±inf
    invalid), ``weight`` a weight (null/NaN missing, negative or ±inf invalid), the ``by`` and
    ``protected`` columns keys (NaN in a Float key is the null group, -0.0 is 0.0). The frame
    adapter runs the pass in the input's engine: :class:`polfair.core.contract.PolarsFrame` or
    ``polfair.engines.narwhals.ForeignFrame`` (Spark, DuckDB); only the small table of
    ``(keys, bin, outcome code)`` comes back, and the contract's one post-pass check
    (:func:`~polfair.core.contract.check_problems`) judges it.

    Inside the one query, window functions over each cell (the same partition as the
    ``group_by``) give the cell's units and weighted means before the rows' centred terms are
    summed (:mod:`polfair.core.regression.moments`): the input is read once, and the moments
    depend on the order of the rows only through rounding.

    An estimated attribute (``request.protected_proba``, :mod:`polfair.core.proba`) is a stage of
    the same pass: each group's moments are taken with the weights ``w·p_g`` (argmax: ``w`` in the
    likeliest group), its Σw² is ``Σ w²·p_g``, and the small result is reshaped into one cell per
    group (:func:`polfair.core.passes.estimated.expand_sums`: rows apportioned to the groups); rows
    whose probabilities are missing are the attribute's null group (``n_missing``), invalid ones
    raise (or with ``check=False`` are counted in its ``n_invalid``). Its key comes after
    ``protected``. Every metric is then the weighted estimator, equal to the report of the rows
    expanded into one row per group weighted by its probability.

    Parameters
    ----------
    frame
        A :class:`~polfair.core.contract.Frame`.
    request
        The roles (``y_true``, ``y_pred``, ``weight``), the keys (``by``, ``protected``), the
        policy (``on_missing``; ``check=False``: no post-pass check, invalid rows only counted in
        ``n_invalid``; ``allow_many_groups``; ``engine``) and the estimated attribute.
    bins_per_octave
        Resolution of the prediction histogram (:func:`prediction_bin`).
    expand
        With an estimated attribute: ``False`` returns the pass's small result before its rows
        are apportioned to the groups (per observed keys, ``bin`` and outcome code; what an
        accumulator merges with :func:`merge_pass_results` and turns into cells with
        :func:`cells_of_pass`, as this function does).

    Returns
    -------
    pl.DataFrame
        ``*by``, ``*protected`` [, the estimated attribute], ``bin`` (Int64; null for the row
        holding the missing and invalid rows of a key), then :data:`REGRESSION_CELL_COLUMNS` and
        the means' compensations (:data:`~polfair.core.regression.moments.LO_COLUMNS`), sorted by
        keys and ``bin``.

    Raises
    ------
    InvalidInputError
        No input row; the contract's errors (a non-numeric role, infinite values, negative weights, missing
        values under ``on_missing="raise"``, too many groups, invalid probabilities), naming the column,
        the count and example values; squared errors whose mean overflows Float64 (naming ``y_true`` and
        ``y_pred``); a sum of weights that overflows Float64 (naming the weight).
    PolfairError
        ``bins_per_octave`` is not an int >= 1.

    Examples
    --------
    >>> import polars as pl
    >>> from polfair.core.contract import PolarsFrame
    >>> df = pl.DataFrame({"y": [1.0, 2.0, 4.0], "p": [1.5, 2.0, 3.0], "g": ["a", "a", "b"]})
    >>> cells = regression_pass(PolarsFrame(df), PassOptions.of(y_true="y", y_pred="p", protected=["g"]))
    >>> roll_up(cells, ["g"]).select("g", "n", "mean_e").rows()
    [('a', 2, 0.25), ('b', 1, -1.0)]
    """
    if isinstance(bins_per_octave, bool) or not isinstance(bins_per_octave, int) or bins_per_octave < 1:
        msg = f"bins_per_octave must be an int >= 1, got {bins_per_octave!r}"
        raise PolfairError(msg)
    eng = frame.eng
    ns = eng.ns
    weight = request.weight
    roles: dict[str, Any] = {
        "y_true": ct.numeric(eng, frame.column(request.y_true, "y_true"), role="y_true"),
        "y_pred": ct.numeric(eng, frame.column(request.y_pred, "y_pred"), role="y_pred"),
    }
    if weight is not None:
        roles["weight"] = ct.weight(eng, frame.column(weight, "weight"))
    key_cols = key_columns(frame, request)
    names = [c.name for _, c in key_cols]
    ps = estimated_stage(frame, request, names, roles, weighted=weight is not None, has_scores=False,
                         reserved=_RESERVED)  # fmt: skip
    y, p = roles["y_true"].value, roles["y_pred"].value
    w = roles["weight"].value if weight is not None else eng.lit(1.0)
    flags = [roles["weight"].state] if weight is not None else []
    code = ct.outcome_code(eng, roles["y_true"].state, roles["y_pred"].state, flags)
    ok = code == 0
    zero = ns.lit(0.0)
    columns: dict[str, Any] = {c.name: ct.key(eng, c, role=role) for role, c in key_cols}
    columns |= {
        "bin": _bin_of(eng, p, ok, bins_per_octave), ct.CODE: code,
        # rows that do not count enter their own cells (another code) with zeros: no window sees a NaN
        "__pf_w0": ns.when(ok).then(w).otherwise(zero), "__pf_y0": ns.when(ok).then(y).otherwise(zero),
        "__pf_p0": ns.when(ok).then(p).otherwise(zero), "__pf_pv": p, "__pf_yv": ns.when(ok & (w > 0.0)).then(y),
    }  # fmt: skip
    groups, extra = [""], []
    if ps is not None:  # the estimated groups: each one's weights, problem counts and shares (summed)
        groups = [f"_g{i}" for i in range(len(ps.labels))]
        checks = problem_columns(eng, ps)
        extra = [ct.PROBA_NULL, ct.PROBA_BAD, ct.PROBA_SUM]
        columns |= {k: checks[k] for k in extra}
        for g, (a, q) in zip(groups, zip(*group_shares(eng, ps, w if weight is not None else None))):
            usable = ok & ~q.is_null()
            columns |= {f"__pf_w0{g}": ns.when(usable).then(a).otherwise(zero), f"__pf_q{g}": q,
                        f"__pf_pv{g}": ns.when(q > 0.0).then(p), f"__pf_yv{g}": ns.when(usable & (a > 0.0)).then(y)}  # fmt: skip
            extra.append(f"__pf_q{g}")

    def aggs(ns: Any) -> list[Any]:
        return [
            ns.len().alias("__pf_n"), *[ns.col(f"{src}{g}").sum().alias(f"{out}{g}")
                                        for g in groups for out, src in _SUMS.items()],
            *[ns.col(f"{src}{g}").max().alias(f"{out}{g}")
              for g in groups for out, src in (_MEANS | _LOS).items()],
            *[getattr(ns.col(f"{src}{g}"), how)().alias(f"{out}{g}")
              for g in groups for out, (src, how) in _RANGES.items()],
            ns.col("__pf_ye").max().alias("y_exp"), *[ns.col(c).sum().alias(c) for c in extra],
        ]  # fmt: skip

    out = aggregate(frame, columns, [*names, "bin", ct.CODE], aggs, count="__pf_n", engine=request.engine,
                    stages=lambda ns, part: _stages(ns, part, groups))  # fmt: skip
    check_rows(out, roles, count="__pf_n", on_missing=request.on_missing, examples=frame.examples,
               excluded_from="counted in n_missing and left out of every metric", stacklevel=5, check=request.judge,
               keys=None if request.allow_many_groups else names)  # fmt: skip
    if ps is not None and not expand:
        return out
    return cells_of_pass(out, ps, roles, check=request.judge)


def cells_of_pass(out: pl.DataFrame, ps: Any, roles: dict[str, Any] | None = None, *, check: bool = False) -> pl.DataFrame:
    """The regression cell table of the pass's small result ``out`` (per keys, ``bin`` and outcome code).

    With an estimated attribute (``ps``, :class:`polfair.core.proba.ProbaSpec`), one cell per
    (row, group) (:func:`polfair.core.passes.estimated.expand_sums`: the rows apportioned to the
    groups) and the attribute's null group for the rows without usable probabilities. The rows
    are apportioned here, once: on one pass's result, or on an accumulator's merged results
    (:func:`merge_pass_results`), which then gives the one pass's row counts. ``check``: the
    overflow check of the values (``roles`` names the columns).
    """
    names = out.columns[: out.columns.index("bin")]
    unusable = None
    if ps is not None:  # one cell per (row of the result, group); rows without usable probabilities: its null group
        unusable = out.group_by(names).agg(pl.col(ct.PROBA_NULL).sum().alias("n_missing"),
                                           (pl.col(ct.PROBA_BAD) + pl.col(ct.PROBA_SUM)).sum().alias("n_invalid"))  # fmt: skip
        sums = {c: f"{c}_g{{}}" for c in _SUMS}
        values = {c: f"{c}_g{{}}" for c in (*_MEANS, *_LOS, *_RANGES)}
        out = expand_sums(out, ps, keep=[*names, "bin", ct.CODE, "y_exp"], count="__pf_n", sums=sums,
                          share="__pf_q_g{}", values=values)  # fmt: skip
        names = [*names, ps.attribute]
    return _cells(out, names, roles or {}, check=check, unusable=unusable)


def merge_pass_results(tables: Sequence[pl.DataFrame], ps: Any) -> pl.DataFrame:
    """Results of :func:`regression_pass` with ``expand=False`` over parts of the data as its result over all.

    Per (keys, ``bin``, outcome code): the row and problem counts and each group's ``Σ p_g`` add;
    each group's moments merge as cells do (:func:`~polfair.core.regression.moments.combine`).
    :func:`cells_of_pass` of the merged result apportions the rows once, as for one pass.
    """
    first = tables[0]
    keys = [*first.columns[: first.columns.index("bin")], "bin", ct.CODE]
    both = pl.concat([first, *[t.select(first.columns) for t in tables[1:]]], how="vertical_relaxed")
    k = len(ps.labels)
    added = ["__pf_n", ct.PROBA_NULL, ct.PROBA_BAD, ct.PROBA_SUM, *[f"__pf_q_g{i}" for i in range(k)]]
    merged = both.group_by(keys).agg(pl.col(added).sum())
    values = [*_SUMS, *_MEANS, *_LOS, *_RANGES]
    zero = pl.lit(0, pl.Int64)
    for i in range(k):  # each group's moments, on the cell table's columns
        part = both.select(*keys, zero.alias("n"), zero.alias("n_missing"), zero.alias("n_invalid"), "y_exp",
                           *[pl.col(f"{c}_g{i}").alias(c) for c in values])  # fmt: skip
        done = combine(part, keys).select(*keys, *(["y_exp"] if i == 0 else []),
                                          *[pl.col(c).alias(f"{c}_g{i}") for c in values])  # fmt: skip
        merged = merged.join(done, on=keys, how="left", nulls_equal=True)
    return merged.select([pl.col(c).cast(t) for c, t in first.schema.items()]).sort(keys, nulls_last=False)


def _cells(out: pl.DataFrame, names: list[str], roles: dict[str, Any], *, check: bool,
           unusable: pl.DataFrame | None) -> pl.DataFrame:  # fmt: skip
    """The cell table of the pass's result: the counted cells, then one row per key of its missing
    and invalid rows (``bin`` null); ``unusable``: an estimated attribute's rows without usable
    probabilities, per observed key (its null group).
    """
    o = pl.col(ct.CODE)
    a, b, fl = o % 4, (o // 4) % 4, o // 16
    invalid = (a == ct.INVALID) | (b == ct.INVALID) | (((fl // ct.FLAG_BAD_WEIGHT) % 2) == 1)
    floats = [*_SUMS, *_MEANS, "p_min", "p_max", "y_min", "y_max", *_LOS]
    counted = out.filter(o == 0).select(
        *names, pl.col("bin").cast(pl.Int64), pl.col("__pf_n").alias("n"), pl.lit(0, pl.Int64).alias("n_missing"),
        pl.lit(0, pl.Int64).alias("n_invalid"), *[pl.col(c).cast(_F64) for c in floats],
        pl.col("w_exp", "y_exp").cast(pl.Int32),
    )  # fmt: skip
    if check:
        _check_overflow(counted, roles)
    left = out.filter(o != 0).group_by(names).agg(
        pl.col("__pf_n").filter(~invalid).sum().alias("n_missing"),
        pl.col("__pf_n").filter(invalid).sum().alias("n_invalid"),
    )  # fmt: skip
    if unusable is not None:
        nulls = unusable.filter((pl.col("n_missing") + pl.col("n_invalid")) > 0)
        left = pl.concat([left, nulls.with_columns(pl.lit(None, out.schema[names[-1]]).alias(names[-1])).select(left.columns)],
                         how="vertical_relaxed")  # fmt: skip
    left = left.select(
        *names, pl.lit(None, pl.Int64).alias("bin"), pl.lit(0, pl.Int64).alias("n"),
        pl.col("n_missing").cast(pl.Int64), pl.col("n_invalid").cast(pl.Int64),
        *[pl.lit(0.0 if c in _SUMS or c in _MEANS or c in _LOS else None, _F64).alias(c) for c in floats],
        pl.lit(None, pl.Int32).alias("w_exp"), pl.lit(None, pl.Int32).alias("y_exp"),
    )  # fmt: skip
    both = pl.concat([counted, left], how="vertical_relaxed") if names else pl.concat([counted, left])
    return both.select(*names, "bin", *REGRESSION_CELL_COLUMNS, *LO_COLUMNS).sort([*names, "bin"], nulls_last=False)


def _check_overflow(counted: pl.DataFrame, roles: dict[str, Any]) -> None:
    """The report's values are Float64 in the data's units: a sum of weights or a mean squared error
    that leaves Float64 (the moments themselves are held in scaled units and never do) is an error
    naming the columns, with the fix.
    """
    if not counted.height:
        return
    big = counted.select(
        (pl.col("w") * pl.lit(2.0).pow(pl.col("w_exp").cast(_F64))).is_infinite().any().alias("w"),
        (pl.col("mean_e2") * pl.lit(2.0).pow(2.0 * pl.col("y_exp").cast(_F64))).is_infinite().any().alias("e2"),
        pl.max_horizontal(pl.col("mean_y", "mean_p").abs() * pl.lit(2.0).pow(pl.col("y_exp").cast(_F64))).max().alias("m"),
    ).row(0, named=True)
    if big["w"]:
        ct.check_finite_sums(pl.DataFrame({"w": [float("inf")]}), ["w"], roles.get("weight"))
    if big["e2"]:
        y, p = roles["y_true"].column, roles["y_pred"].column
        msg = (
            f"y_true={y!r}, y_pred={p!r}: the squared errors (y_pred − y_true)² overflow Float64 (errors of "
            f"about 1e154 or more; the outcomes reach {big['m']:.3g}), so the mean squared error cannot be "
            "represented; rescale the outcome and the prediction (divide both by the same power of ten)"
        )
        raise InvalidInputError(msg)


def check_regression_cells(cells: pl.DataFrame, keys: Sequence[str]) -> None:
    """Raise :class:`~polfair.exceptions.PolfairError` unless ``cells`` has the columns of a
    regression cell table with these keys (``*keys``, ``bin``, :data:`REGRESSION_CELL_COLUMNS`).

    The error names the missing columns and how to build the table (a table of polfair before
    the centred moments, with ``sum_y`` ... columns, must be recounted: ``docs/schema.md``).
    """
    missing = [c for c in (*keys, "bin", *REGRESSION_CELL_COLUMNS) if c not in cells.columns]
    if missing:
        old = " (a table of an earlier polfair, with sums about a shift: recount the data)" if "sum_y" in cells.columns else ""
        msg = (
            f"not a regression cell table with keys {list(keys)}: missing columns {missing}{old} "
            "(build it with polfair.core.regression.regression_cells or polfair.regression_counts)"
        )
        raise PolfairError(msg)


def merge_regression_cells(tables: Sequence[pl.DataFrame | pl.LazyFrame]) -> pl.DataFrame:
    """Merge regression cell tables (same keys and bin resolution) into the table of their union.

    Rows with the same keys and ``bin`` are merged exactly (:func:`~polfair.core.regression.moments.combine`:
    Chan, Golub & LeVeque 1979; Pébay 2008): counts add, the moments are re-centred on the
    combined means, the units are the larger ones. Equal to the table of the whole data up to
    floating-point rounding, in any order.

    Raises
    ------
    PolfairError
        No table, or tables with different columns.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": [1.0, 2.0, 4.0, 8.0], "p": [1.0, 3.0, 5.0, 7.0], "g": ["a", "a", "b", "a"]})
    >>> parts = [regression_cells(df.lazy().slice(0, 2), y_true="y", y_pred="p", keys=["g"]),
    ...          regression_cells(df.lazy().slice(2, 2), y_true="y", y_pred="p", keys=["g"])]
    >>> merged = merge_regression_cells(parts)
    >>> whole = regression_cells(df.lazy(), y_true="y", y_pred="p", keys=["g"])
    >>> merged.select("g", "bin", "n", "mean_e2").equals(whole.select("g", "bin", "n", "mean_e2"))
    True
    """
    # a table of an earlier polfair (no *_lo columns): lo = 0
    tables = [with_lo(t) if isinstance(t, (pl.DataFrame, pl.LazyFrame)) else t for t in tables]
    frames = mergeable_tables(tables, merge="merge_regression_cells", what="a regression cell table",
                              required=REGRESSION_CELL_COLUMNS, same_order=False)  # fmt: skip
    cols = frames[0].columns
    keys = [c for c in cols if c not in REGRESSION_CELL_COLUMNS and c not in LO_COLUMNS]
    both = pl.concat([f.select(cols) for f in frames], how="vertical_relaxed")
    return combine(both, keys).select(cols).sort(keys, nulls_last=False)


def roll_up(cells: pl.DataFrame, keys: Sequence[str] = ()) -> pl.DataFrame:
    """The moments of a regression cell table per combination of ``keys`` (over every other key and bin).

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": [1.0, 3.0, 2.0], "p": [2.0, 2.0, 2.5], "g": ["a", "a", "b"]})
    >>> roll_up(regression_cells(df.lazy(), y_true="y", y_pred="p", keys=["g"]), ["g"]).select("g", "n", "m2_y").rows()
    [('a', 2, 2.0), ('b', 1, 0.0)]
    """
    out = combine(cells, list(keys))
    return out.sort(list(keys), nulls_last=False) if keys else out
