"""The regression pass: one ``group_by`` over the rows to the regression cell table, and its algebra.

The cell table's schema, the shifts its sums are taken about and the histogram's bin codes are
described in :mod:`polfair.core.regression` (the public module, which re-exports this one's public
names). Here: the bin code of a prediction (:func:`prediction_bin`, :func:`bin_edges`), the pass on
every engine (:func:`regression_pass`, :func:`regression_cells`), and the exact algebra on the table
(:func:`rebase`, :func:`merge_regression_cells`, :func:`roll_up`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import polars as pl

from polfair.core import contract as ct
from polfair.core._args import mergeable_tables
from polfair.core.collect import check_cardinality
from polfair.exceptions import PolfairError

__all__ = [
    "BINS_PER_OCTAVE",
    "REGRESSION_CELL_COLUMNS",
    "REGRESSION_SUM_COLUMNS",
    "aggs_over_bins",
    "bin_edges",
    "check_regression_cells",
    "common_shift",
    "merge_regression_cells",
    "prediction_bin",
    "rebase",
    "regression_cells",
    "regression_pass",
    "roll_up",
]

#: Default resolution of the prediction histogram: bins per octave (a bin is 2^(1/256) − 1 = 0.27% wide).
BINS_PER_OCTAVE = 256
_OFFSET_OCTAVES = 1100  # |ŷ| >= 2^-1074 (the smallest subnormal): codes stay >= 1

#: Additive sums of a regression cell (summed when cells are rolled up or merged).
REGRESSION_SUM_COLUMNS = (
    "n", "n_missing", "n_invalid", "w", "w2", "sum_y", "sum_y2", "sum_y3", "sum_y4", "sum_p", "sum_p2", "sum_yp",
    "sum_e", "sum_e2", "sum_e4", "sum_ae", "sum_e2y", "sum_e2y2",
)  # fmt: skip
#: Value columns of the regression cell table, in order (every other column is a key).
REGRESSION_CELL_COLUMNS = (*REGRESSION_SUM_COLUMNS, "y_shift", "p_shift", "p_min", "p_max", "y_min", "y_max")


_F64 = pl.Float64


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
    shift: tuple[float, float] | None = None,
    engine: Literal["auto", "in-memory", "streaming"] = "auto",
) -> pl.DataFrame:
    """The regression cell table of a Polars frame: ONE ``group_by(keys + bin)``.

    Parameters
    ----------
    frame
        A LazyFrame with the key columns and numeric outcome, prediction and weight. Null and NaN
        are missing (``n_missing``); ±inf, and a negative weight, are invalid (``n_invalid``; the
        caller raises, :func:`polfair.regression_counts`). Neither is used in any sum.
    y_true, y_pred, weight
        Column names or expressions (weight default 1).
    keys
        The ``by`` and protected columns, in order.
    bins_per_octave
        Resolution of the prediction histogram (:func:`prediction_bin`).
    shift
        ``(K_y, K_p)``; default the outcome and prediction of the first row that counts.
    engine
        Polars engine of the pass.

    Returns
    -------
    pl.DataFrame
        ``*keys``, ``bin``, then :data:`REGRESSION_CELL_COLUMNS`, sorted by the keys and ``bin``.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": [1.0, 2.0, 4.0], "p": [1.5, 2.0, None], "g": ["a", "a", "b"]})
    >>> cells = regression_cells(df.lazy(), y_true="y", y_pred="p", keys=["g"])
    >>> cells.group_by("g").agg(pl.col("n", "n_missing").sum()).sort("g").rows()
    [('a', 2, 0), ('b', 0, 1)]
    """
    return regression_pass(
        ct.PolarsFrame(frame), y_true=y_true, y_pred=y_pred, protected=list(keys), weight=weight,
        bins_per_octave=bins_per_octave, shift=shift, check=False, on_missing="ignore", allow_many_groups=True,
        engine=engine,
    )  # fmt: skip


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


def _first_counted(frame: Any, y: Any, p: Any, ok: Any) -> tuple[float, float]:
    """The outcome and prediction of the first row that counts (a limit-1 query in the frame's engine)."""
    if hasattr(frame, "lf"):  # contract.PolarsFrame
        row = frame.lf.filter(ok).select(y.alias("y"), p.alias("p")).head(1).collect()
    else:  # engines.narwhals.ForeignFrame
        row = frame.nf.filter(ok).select(y.alias("y"), p.alias("p")).head(1).collect(backend="polars").to_native()
    if row.height == 0:
        return 0.0, 0.0
    ky, kp = (float(v) for v in row.row(0))
    return (ky if math.isfinite(ky) else 0.0), (kp if math.isfinite(kp) else 0.0)


def regression_pass(
    frame: Any,
    *,
    y_true: Any,
    y_pred: Any,
    protected: Sequence[Any] = (),
    by: Sequence[Any] = (),
    weight: Any = None,
    bins_per_octave: int = BINS_PER_OCTAVE,
    shift: tuple[float, float] | None = None,
    on_missing: str = "warn",
    check: bool = True,
    allow_many_groups: bool = False,
    engine: str = "auto",
) -> pl.DataFrame:
    """The regression cell table of any input, in ONE ``group_by(by + protected + bin + code)`` of its engine.

    The input contract (:mod:`polfair.core.contract`) compiles the roles: ``y_true`` and ``y_pred``
    are numeric outcomes (:func:`~polfair.core.contract.numeric`: null and NaN missing, ±inf
    invalid), ``weight`` a weight (null/NaN missing, negative or ±inf invalid), the ``by`` and
    ``protected`` columns keys (NaN in a Float key is the null group, -0.0 is 0.0). The frame
    adapter runs the pass in the input's engine: :class:`polfair.core.contract.PolarsFrame` or
    ``polfair.engines.narwhals.ForeignFrame`` (Spark, DuckDB); only the small table of
    ``(keys, bin, outcome code)`` comes back, and the contract's one post-pass check
    (:func:`~polfair.core.contract.check_problems`) judges it. Before the pass, a limit-1 query
    reads the shift (the first counted row; :func:`rebase`).

    Parameters
    ----------
    frame
        A frame adapter (``eng``, ``column(x, role)``, ``aggregate(columns, group, aggs)``,
        ``examples(compiled)``, and ``lf`` (Polars) or ``nf`` (narwhals)).
    y_true, y_pred, weight
        Column arguments (names; Polars also takes named expressions).
    protected, by
        Key column arguments, in order.
    bins_per_octave
        Resolution of the prediction histogram (:func:`prediction_bin`).
    shift
        ``(K_y, K_p)``; default the outcome and prediction of the first counted row.
    on_missing
        ``"warn"``, ``"raise"`` or ``"ignore"`` (the contract's post-pass check).
    check
        ``False``: no post-pass check: invalid rows are only counted in ``n_invalid``
        (:func:`regression_cells`).
    allow_many_groups
        Skip the cardinality check of the keys (:func:`polfair.core.collect.check_cardinality`).
    engine
        Polars engine of the pass (Polars input only).

    Returns
    -------
    pl.DataFrame
        ``*by``, ``*protected``, ``bin`` (Int64; null for the row holding the missing and
        invalid rows of a key), then :data:`REGRESSION_CELL_COLUMNS`, sorted by keys and ``bin``.

    Raises
    ------
    InvalidInputError
        The contract's errors (a non-numeric role, infinite values, negative weights, missing
        values under ``on_missing="raise"``, too many groups), naming the column, the count and
        example values.
    PolfairError
        ``bins_per_octave`` is not an int >= 1.

    Examples
    --------
    >>> import polars as pl
    >>> from polfair.core.contract import PolarsFrame
    >>> df = pl.DataFrame({"y": [1.0, 2.0, 4.0], "p": [1.5, 2.0, 3.0], "g": ["a", "a", "b"]})
    >>> cells = regression_pass(PolarsFrame(df), y_true="y", y_pred="p", protected=["g"])
    >>> cells.group_by("g").agg(pl.col("n").sum(), pl.col("sum_e").sum()).sort("g").rows()
    [('a', 2, 0.5), ('b', 1, -1.0)]
    """
    if isinstance(bins_per_octave, bool) or not isinstance(bins_per_octave, int) or bins_per_octave < 1:
        msg = f"bins_per_octave must be an int >= 1, got {bins_per_octave!r}"
        raise PolfairError(msg)
    eng = frame.eng
    ns = eng.ns
    roles: dict[str, Any] = {
        "y_true": ct.numeric(eng, frame.column(y_true, "y_true"), role="y_true"),
        "y_pred": ct.numeric(eng, frame.column(y_pred, "y_pred"), role="y_pred"),
    }
    if weight is not None:
        roles["weight"] = ct.weight(eng, frame.column(weight, "weight"))
    key_cols = [(role, frame.column(x, role)) for role, items in (("by", by), ("protected", protected))
                for x in items]  # fmt: skip
    names = [c.name for _, c in key_cols]
    y, p = roles["y_true"].value, roles["y_pred"].value
    w = roles["weight"].value if weight is not None else eng.lit(1.0)
    flags = [roles["weight"].state] if weight is not None else []
    code = ct.outcome_code(eng, roles["y_true"].state, roles["y_pred"].state, flags)
    ok = code == 0
    ky, kp = _first_counted(frame, y, p, ok & (w > 0.0)) if shift is None else shift
    yc, pc, e = y - ky, p - kp, p - y
    e2 = e * e
    columns: dict[str, Any] = {c.name: ct.key(eng, c, role=role) for role, c in key_cols}
    columns |= {
        "bin": _bin_of(eng, p, ok, bins_per_octave), ct.CODE: code,
        "__pf_w": w, "__pf_w2": w * w, "__pf_y": w * yc, "__pf_y2": w * yc * yc, "__pf_y3": w * yc * yc * yc,
        "__pf_y4": w * (yc * yc) * (yc * yc), "__pf_p": w * pc, "__pf_p2": w * pc * pc, "__pf_yp": w * yc * pc,
        "__pf_e": w * e, "__pf_e2": w * e2, "__pf_e4": w * e2 * e2, "__pf_ae": w * e.abs(), "__pf_e2y": w * e2 * yc,
        "__pf_e2y2": w * e2 * yc * yc, "__pf_pv": p, "__pf_yv": ns.when(w > 0.0).then(y),
    }  # fmt: skip
    sums = {"w": "__pf_w", "w2": "__pf_w2", "sum_y": "__pf_y", "sum_y2": "__pf_y2", "sum_y3": "__pf_y3",
            "sum_y4": "__pf_y4", "sum_p": "__pf_p", "sum_p2": "__pf_p2", "sum_yp": "__pf_yp", "sum_e": "__pf_e",
            "sum_e2": "__pf_e2", "sum_e4": "__pf_e4", "sum_ae": "__pf_ae", "sum_e2y": "__pf_e2y",
            "sum_e2y2": "__pf_e2y2"}  # fmt: skip

    def aggs(ns: Any) -> list[Any]:
        return [
            ns.len().alias("__pf_n"), *[ns.col(src).sum().alias(out) for out, src in sums.items()],
            ns.col("__pf_pv").min().alias("p_min"), ns.col("__pf_pv").max().alias("p_max"),
            ns.col("__pf_yv").min().alias("y_min"), ns.col("__pf_yv").max().alias("y_max"),
        ]  # fmt: skip

    out = frame.aggregate(columns, [*names, "bin", ct.CODE], aggs, engine)
    out = out.with_columns(pl.col("__pf_n").cast(pl.Int64), pl.col(ct.CODE).cast(pl.Int32))
    total = int(out["__pf_n"].sum() or 0)
    problems = ct.code_problems(out)
    if check:
        ct.check_problems(problems, roles, total=total, on_missing=on_missing, examples=frame.examples,
                          excluded_from="counted in n_missing and left out of every metric", stacklevel=5)  # fmt: skip
    if not allow_many_groups:
        check_cardinality(names, out, total)
    o = pl.col(ct.CODE)
    a, b, fl = o % 4, (o // 4) % 4, o // 16
    invalid = (a == ct.INVALID) | (b == ct.INVALID) | (((fl // ct.FLAG_BAD_WEIGHT) % 2) == 1)
    counted = out.filter(o == 0)
    ct.check_finite_sums(counted, ["w", "w2"], roles.get("weight"))
    floats = [*sums, "p_min", "p_max", "y_min", "y_max"]
    counted = counted.select(
        *names, pl.col("bin").cast(pl.Int64), pl.col("__pf_n").alias("n"), pl.lit(0, pl.Int64).alias("n_missing"),
        pl.lit(0, pl.Int64).alias("n_invalid"), *[pl.col(c).cast(_F64) for c in floats],
    )  # fmt: skip
    left = (
        out.filter(o != 0)
        .group_by(names)
        .agg(
            pl.col("__pf_n").filter(~invalid).sum().alias("n_missing"),
            pl.col("__pf_n").filter(invalid).sum().alias("n_invalid"),
        )  # fmt: skip
        .select(
            *names,
            pl.lit(None, pl.Int64).alias("bin"),
            pl.lit(0, pl.Int64).alias("n"),
            pl.col("n_missing").cast(pl.Int64),
            pl.col("n_invalid").cast(pl.Int64),
            *[pl.lit(0.0 if c in sums else None, _F64).alias(c) for c in floats],
        )  # fmt: skip
    )
    both = pl.concat([counted, left], how="vertical_relaxed") if names else pl.concat([counted, left])
    both = both.group_by([*names, "bin"]).agg(
        pl.col("n", "n_missing", "n_invalid").sum(), *[pl.col(c).sum() for c in sums],
        pl.col("p_min", "y_min").min(), pl.col("p_max", "y_max").max(),
    )  # fmt: skip
    both = both.with_columns(pl.lit(float(ky), _F64).alias("y_shift"), pl.lit(float(kp), _F64).alias("p_shift"))
    return both.select(*names, "bin", *REGRESSION_CELL_COLUMNS).sort([*names, "bin"], nulls_last=False)


def rebase(y_shift: float | pl.Expr, p_shift: float | pl.Expr) -> list[pl.Expr]:
    """Expressions rewriting a regression cell table's sums about new shifts (exact algebra).

    With ``d = K_old − K_new`` and ``S_k = Σw(y−K_old)^k``: ``Σw(y−K_new)^k = Σ_j C(k,j) d^(k−j) S_j``
    (``S_0 = W``); the cross and error-weighted sums likewise. Apply with ``with_columns``.

    Examples
    --------
    >>> import polars as pl
    >>> t = pl.DataFrame({"w": [2.0], "sum_y": [0.0], "sum_y2": [2.0], "sum_y3": [0.0], "sum_y4": [2.0],
    ...                   "sum_p": [0.0], "sum_p2": [0.0], "sum_yp": [0.0], "sum_e2": [1.0], "sum_e2y": [0.0],
    ...                   "sum_e2y2": [0.0], "y_shift": [10.0], "p_shift": [0.0]})
    >>> t.with_columns(rebase(9.0, 0.0)).select("sum_y", "sum_y2", "y_shift").row(0)
    (2.0, 4.0, 9.0)
    """
    c = pl.col
    ky = y_shift if isinstance(y_shift, pl.Expr) else pl.lit(float(y_shift), _F64)
    kp = p_shift if isinstance(p_shift, pl.Expr) else pl.lit(float(p_shift), _F64)
    dy, dp = c("y_shift") - ky, c("p_shift") - kp
    W, s1, s2, s3, s4 = c("w"), c("sum_y"), c("sum_y2"), c("sum_y3"), c("sum_y4")
    return [
        (s1 + W * dy).alias("sum_y"),
        (s2 + 2 * dy * s1 + W * dy**2).alias("sum_y2"),
        (s3 + 3 * dy * s2 + 3 * dy**2 * s1 + W * dy**3).alias("sum_y3"),
        (s4 + 4 * dy * s3 + 6 * dy**2 * s2 + 4 * dy**3 * s1 + W * dy**4).alias("sum_y4"),
        (c("sum_p") + W * dp).alias("sum_p"),
        (c("sum_p2") + 2 * dp * c("sum_p") + W * dp**2).alias("sum_p2"),
        (c("sum_yp") + dp * s1 + dy * c("sum_p") + W * dy * dp).alias("sum_yp"),
        (c("sum_e2y") + dy * c("sum_e2")).alias("sum_e2y"),
        (c("sum_e2y2") + 2 * dy * c("sum_e2y") + dy**2 * c("sum_e2")).alias("sum_e2y2"),
        ky.alias("y_shift"),
        kp.alias("p_shift"),
    ]


def check_regression_cells(cells: pl.DataFrame, keys: Sequence[str]) -> None:
    """Raise :class:`~polfair.exceptions.PolfairError` unless ``cells`` has the columns of a
    regression cell table with these keys (``*keys``, ``bin``, :data:`REGRESSION_CELL_COLUMNS`).

    The error names the missing columns and how to build the table.
    """
    missing = [c for c in (*keys, "bin", *REGRESSION_CELL_COLUMNS) if c not in cells.columns]
    if missing:
        msg = (
            f"not a regression cell table with keys {list(keys)}: missing columns {missing} "
            "(build it with polfair.core.regression.regression_cells or polfair.regression_counts)"
        )
        raise PolfairError(msg)


def aggs_over_bins() -> list[pl.Expr]:
    """Aggregations that sum a regression cell table's rows into one (per group of a ``group_by``).

    The sums are summed, the shifts taken from the first row (the rows must share them:
    :func:`common_shift`), and the prediction and outcome ranges widened (min of the minima, max
    of the maxima).
    """
    return [
        *[pl.col(c).sum() for c in REGRESSION_SUM_COLUMNS],
        pl.col("y_shift").first(), pl.col("p_shift").first(), pl.col("p_min").min(), pl.col("p_max").max(),
        pl.col("y_min").min(), pl.col("y_max").max(),
    ]  # fmt: skip


def common_shift(cells: pl.DataFrame) -> pl.DataFrame:
    """The table with every row about one row's shifts (a no-op when they agree): the first row that
    holds positive weight, so the common shift lies in the data (a partition with no counted row
    has the shift 0, which would cost the others' digits: found by the property test).
    """
    if cells.height == 0 or (cells["y_shift"].n_unique() == 1 and cells["p_shift"].n_unique() == 1):
        return cells
    counted = cells.filter(pl.col("w") > 0)
    first = counted if counted.height else cells
    ky, kp = first["y_shift"][0], first["p_shift"][0]
    return cells.with_columns(rebase(ky, kp))


def merge_regression_cells(tables: Sequence[pl.DataFrame | pl.LazyFrame]) -> pl.DataFrame:
    """Merge regression cell tables (same keys and bin resolution) into the table of their union.

    Rebases every table to the first one's shifts (:func:`rebase`), then sums the sums and takes
    the min / max of ``p_min`` / ``p_max`` per (keys, ``bin``). Exact up to floating-point
    rounding of the sums.

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
    >>> merged.select("g", "bin", "n", "sum_e2").equals(whole.select("g", "bin", "n", "sum_e2"))
    True
    """
    frames = mergeable_tables(tables, merge="merge_regression_cells", what="a regression cell table",
                              required=REGRESSION_CELL_COLUMNS, same_order=False)  # fmt: skip
    cols = frames[0].columns
    keys = [c for c in cols if c not in REGRESSION_CELL_COLUMNS]
    both = common_shift(pl.concat([f.select(cols) for f in frames], how="vertical_relaxed"))
    return both.group_by(keys).agg(aggs_over_bins()).select(cols).sort(keys, nulls_last=False)


def roll_up(cells: pl.DataFrame, keys: Sequence[str] = ()) -> pl.DataFrame:
    """The sums of a regression cell table per combination of ``keys`` (over every other key and bin).

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": [1.0, 3.0, 2.0], "p": [2.0, 2.0, 2.5], "g": ["a", "a", "b"]})
    >>> roll_up(regression_cells(df.lazy(), y_true="y", y_pred="p", keys=["g"]), ["g"]).select("g", "n").rows()
    [('a', 2), ('b', 1)]
    """
    t = common_shift(cells)
    if not keys:
        return t.select(aggs_over_bins())
    return t.group_by(list(keys)).agg(aggs_over_bins()).sort(list(keys), nulls_last=False)
