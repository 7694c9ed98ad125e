"""Fairness of regression models: one pass to a regression cell table, then arithmetic on it.

The regression analogue of the classification cell table (:mod:`polfair.core.counts`). ONE
``group_by(by + protected keys + bin)`` over the rows gives, per cell (a combination of ``by``
values and protected values) and per bin of the prediction, additive sums:

=====================  =======  ====================================================================
column                 dtype    meaning (``w`` weight, ``y`` outcome, ``ŷ`` prediction, ``e = ŷ − y``)
=====================  =======  ====================================================================
*by*, *protected*      input's  the keys
``bin``                Int64    the prediction's bin code (:func:`prediction_bin`); null on the rows
                                counting missing values
``n``                  Int64    rows counted (outcome, prediction and weight present)
``n_missing``          Int64    rows with a missing outcome, prediction or weight (not counted)
``n_invalid``          Int64    rows with an infinite outcome or prediction, or a negative or
                                infinite weight (not counted; the report raises)
``w``, ``w2``          Float64  Σw, Σw²
``y_shift``            Float64  the constant ``K_y`` the outcome sums are taken about
``p_shift``            Float64  the constant ``K_p`` the prediction sums are taken about
``sum_y`` ...          Float64  ``sum_y, sum_y2, sum_y3, sum_y4`` = Σw(y−K_y)^k;
                                ``sum_p, sum_p2`` = Σw(ŷ−K_p)^k; ``sum_yp`` = Σw(y−K_y)(ŷ−K_p)
``sum_e`` ...          Float64  ``sum_e, sum_e2, sum_e4`` = Σw·e^k; ``sum_ae`` = Σw|e|;
                                ``sum_e2y, sum_e2y2`` = Σw·e²(y−K_y)^k
``p_min``, ``p_max``   Float64  the smallest and largest prediction in the cell and bin
``y_min``, ``y_max``   Float64  the smallest and largest outcome of the rows with a positive
                                weight (a constant outcome, whose r² is undefined, exactly)
=====================  =======  ====================================================================

Every column is a sum, a min or a max, so tables of partitions, batches or engines merge exactly
(:func:`merge_regression_cells`; tables taken about different shifts are rebased first,
:func:`rebase`). Groups of every attribute set, the population and the histograms of the
predictions are sums over this table.

**Cancellation.** ``Σw(y−ȳ)² = Σw y² − (Σw y)²/W`` from raw sums loses every digit when the mean
is large against the spread (prices ≈ 1e8 ± 1). The sums are therefore taken about a shift
``K`` near the data (the outcome and prediction of the first row that counts, read by a
limit-1 query before the pass): the variance then comes from
``Σw(y−K)² − (Σw(y−K))²/W``, whose terms are of the order of the spread. Merging tables with
other shifts converts their sums exactly (binomial expansion, :func:`rebase`). Errors ``e`` need
no shift (they are centred on 0 for any useful model).

**The histogram.** ``bin`` is a code on a relative grid: ``B`` bins per octave (default 256, a
bin is 0.27% wide), ``code = sign(ŷ)·(⌊log2|ŷ|·B⌋ + C)`` and 0 for ŷ = 0; the code is increasing
in ŷ, needs no range and merges across partitions. The Kolmogorov–Smirnov distance of two
groups' prediction distributions evaluated at the bin edges is exact there; inside a bin both
distribution functions stay between their values at the bin's edges, so the true distance exceeds
the value at the edges by at most ``max_b max(F_g(b⁺) − F_r(b⁻), F_r(b⁺) − F_g(b⁻)) − D_edges``
over the bins whose predictions are not all equal (``p_min < p_max``), itself at most the largest
within-bin mass ``max_b max(p_g(b), p_r(b))``: :func:`ks_from_histograms` returns that bound with
it (0 for discrete predictions, such as rounded or integer ones, with one value per bin; on UCI
Adult's predicted hours the bound is 0.7–0.9% at the default grid and the realised error at most
0.2%; at 64 bins per octave 3–4% and 0.8%).

Metric definitions (scikit-learn's names; weights act as its ``sample_weight``), per group:
``mean_outcome = Σwy/W``, ``mean_prediction = Σwŷ/W``, ``mean_error = Σwe/W`` (positive =
over-prediction), ``mean_absolute_error = Σw|e|/W``, ``mean_squared_error = Σwe²/W``,
``root_mean_squared_error = √MSE``, ``r2_score = 1 − Σwe²/Σw(y−ȳ)²`` (null for a constant
outcome, where scikit-learn returns 1.0 or 0.0 by ``force_finite``; also null where a group's
spread is below the rounding of sums taken about the table's one shift, i.e. spread/distance to
the shift under ~1e-8, such as outcomes 0 and 6e-61 in a table whose first row has 1.0).

Intervals and tests (``docs/regression.md`` has the coverage measured by ``bench/coverage.py``):
the five means have the standard error ``se² = s²/n_eff``, with Kish's effective size
``n_eff = W²/Σw²`` and ``s² = (Σwq² − (Σwq)²/W)/W · n_eff/(n_eff − 1)`` (the weighted variance
with the Kish small-sample factor; for unit weights the usual ``s²``), ``ν = n_eff − 1``; value
intervals are Student t, ``m ± t_ν·se``, for the outcome, prediction and error means, and on the
log scale, ``m·exp(±t_ν·se/m)``, for the positive, right-skewed MAE and MSE
(:func:`value_limits`); differences get the Welch interval and test (Welch–Satterthwaite ν;
unweighted equal to ``scipy.stats.ttest_ind(equal_var=False)``); ratios the log-scale delta
method (both means positive). RMSE takes the square roots of the MSE limits and the delta method
for its difference (its test is the MSE's); ``r2_score`` the delta method of ``1 − MSE/Var(y)``
(needs Σwe⁴, Σwy³, Σwy⁴, Σwe²y, Σwe²y²) with normal limits. Spreads over an attribute set's
groups: Šidák projections (two groups: the pair's interval through ``|·|``), Welch's
heteroscedastic ANOVA (means) or Cochran's Q (r²). Every distribution function comes from :mod:`scipy.stats`.

The module is pure arithmetic on small tables (numpy and Polars); the input contract (what a
value of each role may be) lives in the pass that builds the table.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import polars as pl

from polfair.core import contract as ct
from polfair.core import intervals as iv
from polfair.core._args import as_list, mergeable_tables
from polfair.core.collect import check_cardinality
from polfair.core.report import (
    GROUP_KEY,
    SEPARATOR,
    Intersections,
    attribute_sets,
    check_protected_names,
    check_reference,
    group_label,
    value_label,
)
from polfair.core.values import coerce_values, match_values
from polfair.exceptions import PolfairError

__all__ = [
    "BINS_PER_OCTAVE",
    "REGRESSION_ATTRIBUTE_METRICS",
    "REGRESSION_CELL_COLUMNS",
    "REGRESSION_METRICS",
    "REGRESSION_SUM_COLUMNS",
    "Moments",
    "attach_regression_cells",
    "bin_edges",
    "group_moments",
    "ks_from_histograms",
    "mean_interval",
    "metric_values",
    "merge_regression_cells",
    "prediction_bin",
    "rebase",
    "regression_cells",
    "regression_cells_of",
    "regression_pass",
    "regression_report_from_cells",
    "roll_up",
    "value_limits",
    "welch_anova",
    "welch_test",
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

#: Group (and population) metrics of the regression report, in report order.
REGRESSION_METRICS = (
    "num_instances", "mean_outcome", "mean_prediction", "mean_error", "mean_absolute_error", "mean_squared_error",
    "root_mean_squared_error", "r2_score",
)  # fmt: skip
_ESTIMATES = REGRESSION_METRICS[1:]
#: The means of a per-row quantity (t intervals, Welch tests): metric -> (Σwq, Σwq², shift column).
_MEANS: dict[str, tuple[str, str, str | None]] = {
    "mean_outcome": ("sum_y", "sum_y2", "y_shift"),
    "mean_prediction": ("sum_p", "sum_p2", "p_shift"),
    "mean_error": ("sum_e", "sum_e2", None),
    "mean_absolute_error": ("sum_ae", "sum_e2", None),
    "mean_squared_error": ("sum_e2", "sum_e4", None),
}
#: Attribute-set metrics other than the per-metric spreads.
REGRESSION_ATTRIBUTE_METRICS = tuple(
    f"{m}_group_{s}" for m in _ESTIMATES for s in ("max", "min")
) + ("bounded_group_loss", "ks_distance")  # fmt: skip

_F64 = pl.Float64



def _scipy_stats() -> Any:
    """:mod:`scipy.stats` (a core dependency; imported on first use so ``import polfair`` stays light)."""
    from scipy import stats

    return stats


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
        .agg(pl.col("__pf_n").filter(~invalid).sum().alias("n_missing"),
             pl.col("__pf_n").filter(invalid).sum().alias("n_invalid"))  # fmt: skip
        .select(*names, pl.lit(None, pl.Int64).alias("bin"), pl.lit(0, pl.Int64).alias("n"),
                pl.col("n_missing").cast(pl.Int64), pl.col("n_invalid").cast(pl.Int64),
                *[pl.lit(0.0 if c in sums else None, _F64).alias(c) for c in floats])  # fmt: skip
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


def _check_cells(cells: pl.DataFrame, keys: Sequence[str]) -> None:
    missing = [c for c in (*keys, "bin", *REGRESSION_CELL_COLUMNS) if c not in cells.columns]
    if missing:
        msg = (
            f"not a regression cell table with keys {list(keys)}: missing columns {missing} "
            "(build it with polfair.core.regression.regression_cells or polfair.regression_counts)"
        )
        raise PolfairError(msg)


def _aggs_over_bins() -> list[pl.Expr]:
    return [
        *[pl.col(c).sum() for c in REGRESSION_SUM_COLUMNS],
        pl.col("y_shift").first(), pl.col("p_shift").first(), pl.col("p_min").min(), pl.col("p_max").max(),
        pl.col("y_min").min(), pl.col("y_max").max(),
    ]  # fmt: skip


def _common_shift(cells: pl.DataFrame) -> pl.DataFrame:
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
    both = _common_shift(pl.concat([f.select(cols) for f in frames], how="vertical_relaxed"))
    return both.group_by(keys).agg(_aggs_over_bins()).select(cols).sort(keys, nulls_last=False)


# ----------------------------------------------------------------------------------------------
# moments -> metrics, intervals and tests (numpy over the small group tables)


@dataclass
class Moments:
    """Column sums of groups (one array element per group), the inputs of every metric.

    Built with :func:`group_moments` from a frame with the :data:`REGRESSION_CELL_COLUMNS`
    sums (every group about the same shifts).
    """

    sums: dict[str, np.ndarray]

    def __getitem__(self, name: str) -> np.ndarray:
        return self.sums[name]

    def __sub__(self, other: Moments) -> Moments:
        """The sums of the rows of ``self`` not in ``other`` (a group's complement in its population;
        its outcome range is unknown: taken as not constant).
        """
        out = {k: self.sums[k] - other.sums[k] for k in REGRESSION_SUM_COLUMNS}
        out |= {k: self.sums[k] for k in ("y_shift", "p_shift")}
        out |= {"y_min": np.full_like(out["w"], -np.inf), "y_max": np.full_like(out["w"], np.inf)}
        return Moments(out)

    def take(self, index: np.ndarray) -> Moments:
        """The moments of the groups at ``index`` (NaN where ``index`` is −1)."""
        ok = index >= 0
        safe = np.where(ok, index, 0)
        return Moments({k: np.where(ok, v[safe], np.nan) for k, v in self.sums.items()})

    @property
    def neff(self) -> np.ndarray:
        """Kish's effective size W²/Σw² (the row count for unit weights)."""
        w, w2 = self["w"], self["w2"]
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(w2 > 0, np.where(w == w2, w, w * w / w2), np.nan)


def roll_up(cells: pl.DataFrame, keys: Sequence[str] = ()) -> pl.DataFrame:
    """The sums of a regression cell table per combination of ``keys`` (over every other key and bin).

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": [1.0, 3.0, 2.0], "p": [2.0, 2.0, 2.5], "g": ["a", "a", "b"]})
    >>> roll_up(regression_cells(df.lazy(), y_true="y", y_pred="p", keys=["g"]), ["g"]).select("g", "n").rows()
    [('a', 2), ('b', 1)]
    """
    t = _common_shift(cells)
    if not keys:
        return t.select(_aggs_over_bins())
    return t.group_by(list(keys)).agg(_aggs_over_bins()).sort(list(keys), nulls_last=False)


def group_moments(frame: pl.DataFrame) -> Moments:
    """:class:`Moments` of the rows of ``frame`` (one per group; :func:`roll_up` sums a cell table).

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": [1.0, 3.0], "p": [2.0, 2.0]})
    >>> m = group_moments(roll_up(regression_cells(df.lazy(), y_true="y", y_pred="p")))
    >>> float(mean_interval(m, "mean_outcome")[0][0])
    2.0
    """
    cols = [*REGRESSION_SUM_COLUMNS, "y_shift", "p_shift", "y_min", "y_max"]
    return Moments({c: frame[c].cast(_F64).to_numpy().astype(np.float64, copy=True) for c in cols})


def _div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(b > 0, a / np.where(b > 0, b, 1.0), np.nan)


def metric_values(m: Moments) -> dict[str, np.ndarray]:
    """Every group metric of :data:`REGRESSION_METRICS` (NaN where undefined: no rows, constant y).

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": [1.0, 2.0, 3.0], "p": [1.0, 2.5, 2.5]})
    >>> v = metric_values(group_moments(roll_up(regression_cells(df.lazy(), y_true="y", y_pred="p"))))
    >>> round(float(v["mean_squared_error"][0]), 6), round(float(v["r2_score"][0]), 6)
    (0.166667, 0.75)
    """
    W = m["w"]
    out = {"num_instances": W.copy()}
    for name, (s1, _, shift) in _MEANS.items():
        out[name] = _div(m[s1], W) + (m[shift] if shift else 0.0)
    out["root_mean_squared_error"] = np.sqrt(out["mean_squared_error"])
    sst = _sst(m)
    with np.errstate(divide="ignore", invalid="ignore"):
        out["r2_score"] = np.where(sst > 0, 1.0 - m["sum_e2"] / np.where(sst > 0, sst, 1.0), np.nan)
    return out


def _sst(m: Moments) -> np.ndarray:
    """Σw(y − ȳ)²: 0 exactly for a constant outcome (``y_min == y_max`` over the weighted rows), NaN
    where rounding leaves no positive value for a non-constant one.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        raw = m["sum_y2"] - _div(m["sum_y"] * m["sum_y"], m["w"])
    constant = m["y_min"] == m["y_max"]
    return np.where(constant, 0.0, np.where(raw > 0, raw, np.nan))


def mean_interval(m: Moments, metric: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean, squared standard error and degrees of freedom of one of the five means.

    ``se² = (Σwq²/W − q̄²)/(n_eff − 1)`` (the Kish-weighted variance over ``n_eff``; for unit
    weights ``s²/n``), ``ν = n_eff − 1``; NaN with fewer than two effective rows.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": [1.0, 2.0, 6.0], "p": [0.0, 0.0, 0.0]})
    >>> m = group_moments(roll_up(regression_cells(df.lazy(), y_true="y", y_pred="p")))
    >>> mean, v, df_ = mean_interval(m, "mean_outcome")
    >>> float(mean[0]), round(float(v[0]), 6), float(df_[0])
    (3.0, 2.333333, 2.0)
    """
    s1, s2, shift = _MEANS[metric]
    W, neff = m["w"], m.neff
    centred = _div(m[s1], W)
    var_w = np.maximum(_div(m[s2], W) - centred * centred, 0.0)
    df = neff - 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        v = np.where(df > 0, var_w / np.where(df > 0, df, 1.0), np.nan)
    return centred + (m[shift] if shift else 0.0), v, np.where(df > 0, df, np.nan)


def _r2_parts(m: Moments) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """r² with its delta-method variance and ν = n_eff − 1 (NaN where undefined)."""
    W, neff = m["w"], m.neff
    r2 = metric_values(m)["r2_score"]
    mu = _div(m["sum_y"], W)  # about the shift
    ey2, ey3, ey4 = _div(m["sum_y2"], W), _div(m["sum_y3"], W), _div(m["sum_y4"], W)
    B = ey2 - mu * mu  # Var(y)
    A = _div(m["sum_e2"], W)  # MSE
    var_a = _div(m["sum_e4"], W) - A * A
    m4 = ey4 - 4 * mu * ey3 + 6 * mu * mu * ey2 - 3 * mu**4
    var_b = m4 - B * B
    cov = _div(m["sum_e2y2"], W) - 2 * mu * _div(m["sum_e2y"], W) + mu * mu * A - A * B
    df = neff - 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        g = var_a / B**2 - 2 * A * cov / B**3 + A * A * var_b / B**4
        v = np.where((df > 0) & (B > 0), np.maximum(g, 0.0) / df, np.nan)
    return r2, v, np.where(df > 0, df, np.nan)


#: Positive means whose value interval is taken on the log scale (right-skewed quantities).
_LOG_T = ("mean_absolute_error", "mean_squared_error", "root_mean_squared_error")


def value_limits(
    metric: str, est: np.ndarray, var: np.ndarray, df: np.ndarray, level: float
) -> tuple[np.ndarray, np.ndarray]:
    """The value interval of one metric at ``level`` from its estimate, squared standard error and ν.

    ``mean_outcome``, ``mean_prediction``, ``mean_error``: Student t, ``m ± t_ν·se``. MAE and MSE
    (means of positive, right-skewed quantities): on the log scale, ``m·exp(±t_ν·se/m)`` (the delta
    method for ``log m``; in ``bench/coverage.py`` it covers better than ``m ± t·se`` for every
    skewed scenario, e.g. MAE 94.4% vs 90.6% at 10 rows). RMSE: the square roots of the MSE's
    limits. ``r2_score``: ``r² ± z·se`` (delta method), at most 1. NaN where undefined.

    Examples
    --------
    >>> import numpy as np
    >>> lo, hi = value_limits("mean_squared_error", np.array([2.0]), np.array([0.25]), np.array([30.0]), 0.95)
    >>> round(float(lo[0]), 4), round(float(hi[0]), 4)
    (1.2003, 3.3325)
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if metric == "r2_score":
            h = _scipy_stats().norm.ppf(0.5 + level / 2.0) * np.sqrt(var)
            return est - h, np.minimum(est + h, 1.0)
        if metric == "root_mean_squared_error":  # est = √MSE, var = Var(MSE)/(4 MSE)
            mse, v_mse = est * est, var * 4 * est * est
            lo, hi = value_limits("mean_squared_error", mse, v_mse, df, level)
            return np.sqrt(lo), np.sqrt(hi)
        q = _t(level, df)
        if metric in _LOG_T:
            rel = np.where(est > 0, np.sqrt(var) / est, np.nan)
            return est * np.exp(-q * rel), est * np.exp(q * rel)
        h = q * np.sqrt(var)
        return est - h, est + h


def _t(ci: float, df: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return np.asarray(_scipy_stats().t.ppf(0.5 + ci / 2.0, df), dtype=np.float64)


def welch_test(
    m1: np.ndarray, v1: np.ndarray, df1: np.ndarray, m2: np.ndarray, v2: np.ndarray, df2: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Welch's t for ``m1 − m2``: difference, its squared standard error, Welch–Satterthwaite ν, p-value.

    ``ν = (v1 + v2)² / (v1²/ν1 + v2²/ν2)``, two-sided ``p = 2·t.sf(|d|/√(v1+v2), ν)``
    (:mod:`scipy.stats`). Unweighted (``v = s²/n``, ``ν = n − 1``) this is
    ``scipy.stats.ttest_ind(a, b, equal_var=False)``. NaN where a variance or ν is undefined or
    both variances are 0.

    Examples
    --------
    >>> import numpy as np
    >>> d, v, nu, p = welch_test(np.array([1.0]), np.array([0.1]), np.array([9.0]),
    ...                          np.array([0.5]), np.array([0.05]), np.array([19.0]))
    >>> round(float(nu[0]), 3), round(float(p[0]), 4)
    (18.106, 0.2129)
    """
    d, v = m1 - m2, v1 + v2
    with np.errstate(divide="ignore", invalid="ignore"):
        nu = v * v / (v1 * v1 / df1 + v2 * v2 / df2)
        nu = np.where(v > 0, nu, np.nan)
        t = np.abs(d) / np.sqrt(v)
        p = np.where(v > 0, 2.0 * _scipy_stats().t.sf(t, nu), np.nan)
    return d, np.where(v > 0, v, np.nan), nu, np.asarray(p, dtype=np.float64)


def welch_anova(means: np.ndarray, v: np.ndarray, df: np.ndarray) -> tuple[float, float, float, float]:
    """Welch's (1951) heteroscedastic one-way ANOVA of k group means from their moments.

    ``w_i = 1/v_i`` (``v_i`` the squared standard errors), ``m̄ = Σw_i m_i / Σw_i``,
    ``A = Σw_i(m_i − m̄)²/(k−1)``, ``Λ = Σ(1 − w_i/Σw)²/ν_i``, ``F = A / (1 + 2(k−2)Λ/(k²−1))``
    on ``(k − 1, (k² − 1)/(3Λ))`` df. Equal to statsmodels' ``anova_oneway(use_var="unequal")``;
    for two groups ``F`` is Welch's ``t²`` with the same p-value.

    Returns
    -------
    (F, df1, df2, p_value)
        NaN when fewer than two groups have a positive variance.

    Examples
    --------
    >>> import numpy as np
    >>> F, d1, d2, p = welch_anova(np.array([1.0, 0.5]), np.array([0.1, 0.05]), np.array([9.0, 19.0]))
    >>> round(p, 4)
    0.2129
    """
    ok = np.isfinite(means) & np.isfinite(v) & (v > 0) & np.isfinite(df) & (df > 0)
    k = int(ok.sum())
    if k < 2:
        return (math.nan,) * 4
    mm, w, nu = means[ok], 1.0 / v[ok], df[ok]
    sw = w.sum()
    mbar = (w * mm).sum() / sw
    A = (w * (mm - mbar) ** 2).sum() / (k - 1)
    lam = ((1.0 - w / sw) ** 2 / nu).sum()
    F = A / (1.0 + 2.0 * (k - 2) * lam / (k * k - 1))
    df2 = (k * k - 1) / (3.0 * lam)
    return float(F), float(k - 1), float(df2), float(_scipy_stats().f.sf(F, k - 1, df2))


def _cochran_q(est: np.ndarray, v: np.ndarray) -> float:
    """p-value of Cochran's Q (homogeneity of independent estimates with variances v), χ²(k−1)."""
    ok = np.isfinite(est) & np.isfinite(v) & (v > 0)
    k = int(ok.sum())
    if k < 2:
        return math.nan
    w = 1.0 / v[ok]
    mbar = (w * est[ok]).sum() / w.sum()
    return float(_scipy_stats().chi2.sf((w * (est[ok] - mbar) ** 2).sum(), k - 1))


def ks_from_histograms(
    hg: pl.DataFrame, hr: pl.DataFrame
) -> tuple[float, float]:
    """Kolmogorov–Smirnov distance of two histograms on the shared bin grid, with its error bound.

    Parameters
    ----------
    hg, hr
        Columns ``bin`` (Int64 code), ``w`` (Float64 weight), ``p_min``, ``p_max`` of the two
        groups' predictions.

    Returns
    -------
    (distance, bound)
        ``max_b |F_g − F_r|`` at the bins' upper edges, and how much more the true distance can
        be: inside bin ``b`` both distribution functions stay between their values at the bin's
        edges, so ``|F_g − F_r| <= max(F_g(b⁺) − F_r(b⁻), F_r(b⁺) − F_g(b⁻))`` there (the bins
        whose predictions, both groups pooled, are one point add nothing). The true distance lies in
        ``[distance, distance + bound]``, and ``bound <= max_b max(p_g(b), p_r(b))``. NaN when a
        histogram is empty.

    Examples
    --------
    >>> import polars as pl
    >>> g = pl.DataFrame({"bin": [1, 2], "w": [1.0, 1.0], "p_min": [1.0, 2.0], "p_max": [1.0, 2.0]})
    >>> r = pl.DataFrame({"bin": [2, 3], "w": [1.0, 1.0], "p_min": [2.0, 3.0], "p_max": [2.0, 3.0]})
    >>> ks_from_histograms(g, r)
    (0.5, 0.0)
    """
    d, b = _ks_batch(hg.with_columns(pl.lit(0).alias("__pf_k")), hr.with_columns(pl.lit(0).alias("__pf_k")),
                     "__pf_k")  # fmt: skip
    return float(d[0]), float(b[0])


def _ks_batch(hg: pl.DataFrame, hr: pl.DataFrame, key: str) -> tuple[np.ndarray, np.ndarray]:
    """:func:`ks_from_histograms` of many pairs at once: ``hg`` and ``hr`` keyed by ``key`` (0..k−1)."""
    cols = ["bin", "w", "p_min", "p_max"]
    both = (
        hg.select(key, *cols).join(hr.select(key, *cols), on=[key, "bin"], how="full", coalesce=True, suffix="_r")
        .with_columns(pl.col("w", "w_r").fill_null(0.0))
        .sort(key, "bin")
        .with_columns(
            (pl.col("w").cum_sum().over(key) / pl.col("w").sum().over(key)).alias("__fg"),
            (pl.col("w_r").cum_sum().over(key) / pl.col("w_r").sum().over(key)).alias("__fr"),
            (pl.min_horizontal("p_min", "p_min_r") < pl.max_horizontal("p_max", "p_max_r")).alias("__spread"),
        )
        .with_columns(  # the distribution functions just below each bin
            pl.col("__fg").shift(1, fill_value=0.0).over(key).alias("__fg0"),
            pl.col("__fr").shift(1, fill_value=0.0).over(key).alias("__fr0"),
        )
        .group_by(key)
        .agg(
            (pl.col("__fg") - pl.col("__fr")).abs().max().alias("d"),
            # inside a bin F_g and F_r stay between their values at its edges: the largest gap possible
            pl.max_horizontal(pl.col("__fg") - pl.col("__fr0"), pl.col("__fr") - pl.col("__fg0"))
            .filter(pl.col("__spread")).max().alias("u"),
        )
        .with_columns(pl.max_horizontal(pl.col("u") - pl.col("d"), pl.lit(0.0)).fill_null(0.0).alias("b"))
        .sort(key)
    )  # fmt: skip
    k = 1 + max(int(hg[key].max()) if hg.height else -1, int(hr[key].max()) if hr.height else -1)  # type: ignore[arg-type]
    d, b = np.full(k, np.nan), np.full(k, np.nan)
    keys = both[key].to_numpy()
    d[keys], b[keys] = both["d"].fill_nan(None).to_numpy(), both["b"].to_numpy()
    return d, b


def _ks_p_value(d: np.ndarray, n1: np.ndarray, n2: np.ndarray) -> np.ndarray:
    """Asymptotic two-sample KS p-value, ``kstwo.sf(d, round(n1·n2/(n1+n2)))`` (scipy's ``ks_2samp(method="asymp")``)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        en = np.round(n1 * n2 / (n1 + n2))
    ok = np.isfinite(d) & np.isfinite(en) & (en >= 1)
    out = np.full(d.shape, np.nan)
    if ok.any():
        out[ok] = np.clip(_scipy_stats().kstwo.sf(d[ok], en[ok]), 0.0, 1.0)
    return out


# ----------------------------------------------------------------------------------------------
# the report


_SA, _SG, _GL, _PRIV, _MODE, _ALL = "__pf_sa", "__pf_sg", "__pf_group", "__pf_priv", "__pf_mode", "__pf_all"
_CI_FLOATS = ("value_lo", "value_hi", "difference_lo", "difference_hi", "ratio_lo", "ratio_hi", "p_value",
              "p_value_adjusted", "n_eff")  # fmt: skip


def regression_report_from_cells(
    cells: pl.DataFrame | pl.LazyFrame,
    *,
    protected: str | Sequence[str],
    by: str | Sequence[str] | None = (),
    privileged: Mapping[str, Any] | None = None,
    reference: Literal["privileged", "largest", "overall"] | None = None,
    intersections: Intersections = None,
    ci: float | None = 0.95,
    p_adjust: Literal["bh", "by", "holm"] | None = "bh",
) -> pl.DataFrame:
    """The regression fairness report from a regression cell table (:func:`regression_cells`).

    Parameters
    ----------
    cells
        A regression cell table (or a merge of them), eager or lazy.
    protected
        Its protected-attribute columns, in order (one name or a list).
    by
        Its ``by`` columns (one report per ``by`` value).
    privileged
        ``{attribute: value or values}``: an attribute set whose attributes all have privileged
        values is compared with that group (the union of the values); others with the largest.
    reference
        ``None`` (privileged where given, else the largest group by weight), ``"privileged"``,
        ``"largest"`` or ``"overall"`` (the whole population: a group is then compared with the
        rest of the population, whose difference scales by ``1 − W_g/W``).
    intersections
        The attribute sets, as :func:`polfair.fairness_report`.
    ci
        Confidence level in (0, 1) or ``None`` (no interval columns).
    p_adjust
        ``"bh"`` (default), ``"by"``, ``"holm"`` or ``None`` (``p_value_adjusted`` = ``p_value``):
        ``p_value_adjusted`` within each (``by`` value, metric) family of group rows and of attribute rows.

    Returns
    -------
    pl.DataFrame
        The fairness report's long schema (:mod:`polfair.core.report`): ``*by, attribute,
        group, metric, value, reference_group, difference, ratio, n``, with ``ci`` the interval
        columns ``value_lo … n_eff`` (Float64) and ``ci_method, test`` (Categorical), then
        ``n_groups``, ``excluded_groups``, ``group_key``. Metrics: group and population rows
        :data:`REGRESSION_METRICS` and ``n_missing``; group rows also ``ks_distance`` (the
        Kolmogorov–Smirnov distance of the group's predictions to the reference's) and
        ``ks_distance_bound`` (its histogram error bound); attribute rows each metric's spread
        (``difference`` = max − min, ``ratio`` = min ÷ max, fairlearn's ``between_groups``) and
        :data:`REGRESSION_ATTRIBUTE_METRICS` (fairlearn's ``group_max``/``group_min``, the
        bounded group loss = the largest group MSE, the largest ``ks_distance``).

    Raises
    ------
    PolfairError
        Not a regression cell table, bad ``reference``/``privileged``/``intersections``/``ci``.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": [1.0, 2.0, 3.0, 4.0, 5.0, 7.0], "p": [1.5, 2.0, 2.5, 4.0, 5.5, 6.0],
    ...                    "g": ["a", "a", "a", "b", "b", "b"]})
    >>> cells = regression_cells(df.lazy(), y_true="y", y_pred="p", keys=["g"])
    >>> rep = regression_report_from_cells(cells, protected="g", privileged={"g": "a"})
    >>> rep.filter(group="b", metric="mean_absolute_error").select("value", "difference").row(0)
    (0.5, 0.16666666666666669)
    """
    keys, by_n = [str(k) for k in as_list(protected)], [str(b) for b in as_list(by)]
    check_reference(reference)
    if reference == "best":
        msg = "reference='best' is not available for regression reports; use 'privileged', 'largest' or 'overall'"
        raise PolfairError(msg)
    check_protected_names(keys)
    level = iv.check_ci(ci)
    method = iv.check_p_adjust(p_adjust)
    table = cells.collect() if isinstance(cells, pl.LazyFrame) else cells
    _check_cells(table, [*by_n, *keys])
    privileged = dict(privileged or {})
    for k in privileged:
        if k not in keys:
            msg = f"privileged names {k!r}, which is not a protected attribute {keys}"
            raise PolfairError(msg)
    ib = [f"__pf_by{i}" for i in range(len(by_n))] or [_ALL]
    schema = table.schema
    table = _common_shift(table).rename(dict(zip(by_n, ib)))
    if not by_n:
        table = table.with_columns(pl.lit(0, pl.Int8).alias(_ALL))
    typed = {a: coerce_values(privileged[a], schema[a], option="privileged", column=a) for a in privileged}
    sets = attribute_sets(keys, intersections)
    weighted = bool(table.select((pl.col("w") != pl.col("w2")).any()).item())
    ctx = _Context(table, keys, ib, sets, schema, typed, reference, level, weighted, method)
    rows = ctx.rows()
    ordered = rows.sort([*ib, _SA, _SG, "__pf_m"], nulls_last=False)
    floats = list(_CI_FLOATS) if level is not None else []
    cats = ["ci_method", "test"] if level is not None else []
    return ordered.select(
        *[pl.col(i).alias(b) for i, b in zip(ib, by_n)],
        pl.col("attribute").cast(pl.Categorical), "group", pl.col("metric").cast(pl.Categorical), "value",
        pl.col("reference_group").cast(pl.Categorical), "difference", "ratio", pl.col("n").cast(pl.Int64),
        *floats, *[pl.col(c).cast(pl.Categorical) for c in cats],
        pl.col("n_groups").cast(pl.Int64), pl.col("excluded_groups").cast(pl.String), GROUP_KEY,
    )  # fmt: skip


_ORDER: dict[str, int] = {}
for _m in ("n_missing", *REGRESSION_METRICS, "ks_distance", "ks_distance_bound", *REGRESSION_ATTRIBUTE_METRICS):
    _ORDER.setdefault(_m, len(_ORDER))


class _Context:
    """One report's computation: roll-ups, references, values, intervals, long rows."""

    def __init__(
        self,
        table: pl.DataFrame,
        keys: list[str],
        ib: list[str],
        sets: list[tuple[str, ...]],
        schema: pl.Schema,
        typed: dict[str, tuple[Any, ...]],
        reference: str | None,
        ci: float | None,
        weighted: bool,
        p_adjust: str | None,
    ) -> None:
        self.table, self.keys, self.ib, self.sets, self.schema = table, keys, ib, sets, schema
        self.typed, self.reference, self.ci, self.weighted, self.p_adjust = typed, reference, ci, weighted, p_adjust

    # ---- roll-ups ---------------------------------------------------------------------------
    def _groups(self) -> tuple[pl.DataFrame, pl.DataFrame]:
        """One row per (by, attribute set, group) with sums, and its histogram per bin."""
        frames, hists = [], []
        keys, ib, schema = self.keys, self.ib, self.schema
        for ai, attrs in enumerate(self.sets):
            covered = bool(self.typed) and all(a in self.typed for a in attrs)
            mode = self.reference or ("privileged" if covered else "largest")
            is_priv = pl.lit(False)
            if mode == "privileged" and covered:
                is_priv = pl.lit(True)
                for a in attrs:
                    is_priv = is_priv & match_values(pl.col(a), schema[a], self.typed[a])
            key = pl.struct([pl.col(k) if k in attrs else pl.lit(None, schema[k]).alias(k) for k in keys])
            g = (
                self.table.group_by([*ib, *attrs], maintain_order=True).agg(_aggs_over_bins())
                .sort([*ib, *attrs], nulls_last=False)
                .select(*ib, *attrs, pl.lit(ai, pl.Int64).alias(_SA), pl.lit(SEPARATOR.join(attrs)).alias("attribute"),
                        group_label(list(attrs)).alias(_GL), key.alias(GROUP_KEY), is_priv.alias(_PRIV),
                        pl.lit(mode).alias(_MODE), *REGRESSION_CELL_COLUMNS)
            )  # fmt: skip
            frames.append(g)
        groups = pl.concat(frames, how="diagonal_relaxed").with_row_index(_SG).with_columns(pl.col(_SG).cast(pl.Int64))
        for ai, attrs in enumerate(self.sets):
            h = (
                self.table.filter(pl.col("bin").is_not_null())
                .group_by([*ib, *attrs, "bin"])
                .agg(pl.col("w").sum(), pl.col("n").sum(), pl.col("p_min").min(), pl.col("p_max").max())
                .with_columns(pl.lit(ai, pl.Int64).alias(_SA))
            )
            sel = groups.filter(pl.col(_SA) == ai).select(*ib, *attrs, _SG)
            hists.append(h.join(sel, on=[*ib, *attrs], nulls_equal=True).select(_SG, "bin", "w", "n", "p_min", "p_max"))
        return groups, pl.concat(hists)

    def rows(self) -> pl.DataFrame:
        ib = self.ib
        groups, hist = self._groups()
        pop = self.table.group_by(ib, maintain_order=True).agg(_aggs_over_bins()).sort(ib, nulls_last=False)
        pop = pop.with_row_index("__pf_pi").with_columns(pl.col("__pf_pi").cast(pl.Int64))
        pop_hist = (
            self.table.filter(pl.col("bin").is_not_null()).join(pop.select(*ib, "__pf_pi"), on=ib, nulls_equal=True)
            .group_by("__pf_pi", "bin").agg(pl.col("w").sum(), pl.col("p_min").min(), pl.col("p_max").max())
        )  # fmt: skip
        g_pop = groups.join(pop.select(*ib, "__pf_pi"), on=ib, how="left", nulls_equal=True, maintain_order="left")
        pop_index = g_pop["__pf_pi"].to_numpy()
        ref_index, ref_label, ref_rows = self._references(groups)
        mg, mp = group_moments(groups), group_moments(pop)
        parts = [
            self._population_rows(pop, mp),
            self._group_rows(groups, mg, mp, pop_index, ref_index, ref_label, ref_rows, hist, pop_hist),
        ]
        parts.append(self._attribute_rows(groups, parts[1], pop))
        return pl.concat(parts, how="diagonal_relaxed")

    def _references(self, groups: pl.DataFrame) -> tuple[np.ndarray, list[str | None], pl.DataFrame]:
        """Per group: the index of its reference row in ``ref_rows`` (−1: none), its label; and
        ``ref_rows``: one row of sums per (by, attribute set) with a privileged or largest reference.
        """
        sk = [*self.ib, _SA]
        frames = []
        priv = groups.filter(pl.col(_MODE) == "privileged")
        if priv.height:
            labels = {
                ai: SEPARATOR.join("|".join(value_label(v) for v in self.typed[a]) for a in attrs)
                for ai, attrs in enumerate(self.sets) if all(a in self.typed for a in attrs)
            }  # fmt: skip
            p = (
                priv.filter(pl.col(_PRIV)).group_by(sk, maintain_order=True)
                .agg(*[pl.col(c).sum() for c in REGRESSION_SUM_COLUMNS], pl.col("y_shift", "p_shift").first(),
                     pl.col("y_min").min(), pl.col("y_max").max(), pl.col(_SG).alias("__pf_members"))
                .with_columns(pl.col(_SA).replace_strict(labels, default=None, return_dtype=pl.String).alias("__pf_label"))
            )  # fmt: skip
            frames.append(p)
        largest = groups.filter(pl.col(_MODE) == "largest")
        if largest.height:
            first = largest.group_by(sk).agg(pl.col(_SG).filter(pl.col("w") == pl.col("w").max()).min())
            lg = largest.join(first.select(_SG), on=_SG, how="semi").select(
                *sk, *REGRESSION_SUM_COLUMNS, "y_shift", "p_shift", "y_min", "y_max", pl.concat_list(_SG).alias("__pf_members"),
                pl.col(_GL).alias("__pf_label"),
            )  # fmt: skip
            frames.append(lg)
        if not frames:
            return np.full(groups.height, -1), [None] * groups.height, pl.DataFrame()
        ref_rows = pl.concat(frames, how="diagonal_relaxed").with_row_index("__pf_ri")
        joined = groups.select(*sk, _SG).join(
            ref_rows.select(*sk, "__pf_ri", "__pf_label", "__pf_members"), on=sk, how="left", nulls_equal=True,
            maintain_order="left",
        )  # fmt: skip
        idx = joined["__pf_ri"].fill_null(-1).cast(pl.Int64).to_numpy()
        labels_out = joined["__pf_label"].to_list()
        return idx, labels_out, ref_rows

    # ---- rows -------------------------------------------------------------------------------
    def _value_intervals(self, m: Moments, vals: dict[str, np.ndarray]) -> dict[str, dict[str, np.ndarray]]:
        """Per estimated metric: value_lo/hi, n_eff and the (value, variance, df) used by comparisons."""
        out: dict[str, dict[str, np.ndarray]] = {}
        ci = self.ci if self.ci is not None else 0.95
        neff = m.neff
        for name in _MEANS:
            mean, v, df = mean_interval(m, name)
            out[name] = {"est": mean, "var": v, "df": df, "n_eff": neff}
        mse = out["mean_squared_error"]
        rm = vals["root_mean_squared_error"]
        with np.errstate(divide="ignore", invalid="ignore"):
            v_rmse = np.where(rm > 0, mse["var"] / (4 * mse["est"]), np.nan)
        out["root_mean_squared_error"] = {"est": rm, "var": v_rmse, "df": mse["df"], "n_eff": neff}
        r2, v, df = _r2_parts(m)
        out["r2_score"] = {"est": r2, "var": v, "df": df, "n_eff": neff}
        for name, d in out.items():
            d["lo"], d["hi"] = value_limits(name, d["est"], d["var"], d["df"], ci)
        for d in out.values():
            bad = ~np.isfinite(d["est"]) | ~np.isfinite(d["var"])
            d["lo"], d["hi"] = np.where(bad, np.nan, d["lo"]), np.where(bad, np.nan, d["hi"])
        return out

    def _methods(self) -> dict[str, tuple[str, str | None]]:
        wt = "_ess" if self.weighted else ""
        out: dict[str, tuple[str, str | None]] = {m: (f"t{wt}", f"welch{wt}") for m in _MEANS}
        for m in _LOG_T:
            out[m] = (f"log_t{wt}", f"welch{wt}")
        out["r2_score"] = ("delta", "z_delta")
        return out

    def _long(self, entities: pl.DataFrame, metric: str, cols: Mapping[str, Any]) -> pl.DataFrame:
        data = {k: (pl.Series(k, v, dtype=_F64, nan_to_null=True) if isinstance(v, np.ndarray) and v.dtype.kind == "f"
                    else pl.Series(k, v)) for k, v in cols.items()}  # fmt: skip
        return entities.with_columns(
            pl.lit(metric).alias("metric"), pl.lit(_ORDER[metric], pl.Int64).alias("__pf_m"), *data.values()
        )

    def _population_rows(self, pop: pl.DataFrame, mp: Moments) -> pl.DataFrame:
        ib = self.ib
        ent = pop.select(
            *ib, pl.lit(-1, pl.Int64).alias(_SA), pl.lit(-1, pl.Int64).alias(_SG), pl.lit(None, pl.String).alias("attribute"),
            pl.lit(None, pl.String).alias("group"), (pl.col("n") + pl.col("n_missing")).alias("n"),
        )  # fmt: skip
        vals = metric_values(mp)
        ivs = self._value_intervals(mp, vals)
        meth = self._methods()
        out = [self._long(ent, "n_missing", {"value": pop["n_missing"].cast(_F64).to_numpy()})]
        for name in REGRESSION_METRICS:
            cols: dict[str, Any] = {"value": vals[name]}
            if self.ci is not None and name in ivs:
                d = ivs[name]
                cols |= {"value_lo": d["lo"], "value_hi": d["hi"], "n_eff": d["n_eff"],
                         "ci_method": [meth[name][0]] * pop.height}  # fmt: skip
            out.append(self._long(ent, name, cols))
        return pl.concat(out, how="diagonal_relaxed")

    def _group_rows(
        self,
        groups: pl.DataFrame,
        mg: Moments,
        mp: Moments,
        pop_index: np.ndarray,
        ref_index: np.ndarray,
        ref_label: list[str | None],
        ref_rows: pl.DataFrame,
        hist: pl.DataFrame,
        pop_hist: pl.DataFrame,
    ) -> pl.DataFrame:
        ib, h = self.ib, groups.height
        ent = groups.select(
            *ib, _SA, _SG, "attribute", pl.col(_GL).alias("group"), (pl.col("n") + pl.col("n_missing")).alias("n"),
            GROUP_KEY,
        )  # fmt: skip
        overall = (groups[_MODE] == "overall").to_numpy()
        mr_rows = group_moments(ref_rows) if ref_rows.height else None
        # the reference's moments per group (privileged / largest) or the population's (overall)
        mref = mr_rows.take(ref_index) if mr_rows is not None else Moments({k: np.full(h, np.nan) for k in mg.sums})
        mpop = mp.take(pop_index)
        for k in mref.sums:
            mref.sums[k] = np.where(overall, mpop[k], mref[k])
        labels = np.array([("overall" if o else lab) for o, lab in zip(overall, ref_label)], dtype=object)
        # a group that is (part of) its own reference has no comparison
        own = np.zeros(h, dtype=bool)
        if ref_rows.height:  # the groups that are (part of) their set's reference: a semi-join
            pairs = ref_rows.select(pl.col("__pf_ri").cast(pl.Int64), pl.col("__pf_members").alias(_SG)).explode(_SG)
            mine = pl.DataFrame({"__pf_ri": ref_index.astype(np.int64), _SG: groups[_SG].cast(pl.Int64)})
            own = mine.join(pairs.with_columns(pl.col(_SG).cast(pl.Int64), pl.lit(True).alias("__pf_own")),
                            on=["__pf_ri", _SG], how="left", maintain_order="left")["__pf_own"].fill_null(False).to_numpy()
            own = own & ~overall
        mcomp = mpop - mg  # the rest of the population (for "overall")
        vg, vr = metric_values(mg), metric_values(mref)
        f = _div(mg["w"], mpop["w"])
        ig, ir, ic = self._value_intervals(mg, vg), self._value_intervals(mref, vr), None
        if overall.any():
            ic = self._value_intervals(mcomp, metric_values(mcomp))
        meth = self._methods()
        ci = self.ci if self.ci is not None else 0.95
        out = [self._long(ent, "n_missing", {"value": groups["n_missing"].cast(_F64).to_numpy()})]
        done: dict[str, dict[str, Any]] = {}
        for name in REGRESSION_METRICS:
            v, r = vg[name], vr[name]
            diff = v - r
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = np.where(r != 0, v / np.where(r != 0, r, 1.0), np.nan)
            cols: dict[str, Any] = {"value": v, "difference": diff, "ratio": ratio,
                                    "reference_group": list(labels)}  # fmt: skip
            if self.ci is not None and name in ig:
                cols |= self._comparison(name, ig[name], ir[name], ic[name] if ic else None, overall, own, f, ci,
                                         meth[name], v, r)  # fmt: skip
                if name == "root_mean_squared_error":  # RMSE_g / RMSE_r = √(MSE_g / MSE_r); equal RMSE <=> equal MSE
                    mse = done["mean_squared_error"]
                    cols["ratio_lo"], cols["ratio_hi"] = np.sqrt(mse["ratio_lo"]), np.sqrt(mse["ratio_hi"])
                    cols["p_value"], cols["test"] = mse["p_value"], mse["test"]
                done[name] = cols
            out.append(self._long(ent, name, cols))
        out.append(self._ks_rows(ent, groups, hist, pop_hist, pop_index, ref_index, ref_rows, overall, own,
                                 labels, mg, mpop))  # fmt: skip
        rows = pl.concat(out, how="diagonal_relaxed")
        if self.ci is not None:  # p_adjust=None: the identity adjustment, as fairness_report
            adj = pl.col("p_value") if self.p_adjust is None else iv.p_adjust(pl.col("p_value"), self.p_adjust)  # type: ignore[arg-type]
            rows = rows.with_columns(adj.over([*ib, "metric"]).alias("p_value_adjusted"))
        return rows

    def _comparison(
        self,
        name: str,
        g: dict[str, np.ndarray],
        r: dict[str, np.ndarray],
        c: dict[str, np.ndarray] | None,
        overall: np.ndarray,
        own: np.ndarray,
        f: np.ndarray,
        ci: float,
        methods: tuple[str, str | None],
        v: np.ndarray,
        ref: np.ndarray,
    ) -> dict[str, Any]:
        """Intervals of the value, the difference and the ratio, and the test, of one metric."""
        h = len(v)
        cols: dict[str, Any] = {"value_lo": g["lo"], "value_hi": g["hi"], "n_eff": g["n_eff"]}
        # the comparison partner: the reference, or the rest of the population under "overall"
        other = {k: np.where(overall, c[k], r[k]) if c is not None else r[k] for k in ("est", "var", "df")}
        scale = np.where(overall, 1.0 - f, 1.0)
        d, vd, nu, p = welch_test(g["est"], g["var"], g["df"], other["est"], other["var"], other["df"])
        if name == "r2_score":  # the delta method: normal
            with np.errstate(invalid="ignore", divide="ignore"):
                p = np.where(vd > 0, 2.0 * _scipy_stats().norm.sf(np.abs(d) / np.sqrt(vd)), np.nan)
            q = np.full(h, _scipy_stats().norm.ppf(0.5 + ci / 2.0))
            p = np.where(overall, np.nan, p)  # r² of everyone is not a mixture of the parts': no test vs overall
        else:
            q = _t(ci, nu)
        half = q * np.sqrt(vd)
        dlo, dhi = scale * (d - half), scale * (d + half)
        if name == "r2_score":
            dlo, dhi = np.where(overall, np.nan, dlo), np.where(overall, np.nan, dhi)
        # ratio: log-scale delta method when both estimates are positive (a near-zero estimate: an
        # unbounded upper limit, inf)
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            rg, ro = g["var"] / g["est"] ** 2, other["var"] / other["est"] ** 2
            vl = rg + ro
            nul = vl * vl / (rg * rg / g["df"] + ro * ro / other["df"])
            ql = _scipy_stats().norm.ppf(0.5 + ci / 2.0) if name == "r2_score" else _t(ci, nul)
            R = g["est"] / other["est"]
            pos = (g["est"] > 0) & (other["est"] > 0) & (vl > 0)
            rlo, rhi = R * np.exp(-ql * np.sqrt(vl)), R * np.exp(ql * np.sqrt(vl))
            # "overall": value / population = R / (f R + 1 − f), increasing in R
            rlo = np.where(overall, rlo / (f * rlo + 1 - f), rlo)
            rhi = np.where(overall, rhi / (f * rhi + 1 - f), rhi)
        rlo, rhi = np.where(pos, rlo, np.nan), np.where(pos, rhi, np.nan)
        none = own | ~np.isfinite(v - ref)
        cols |= {
            "difference_lo": np.where(none, np.nan, dlo), "difference_hi": np.where(none, np.nan, dhi),
            "ratio_lo": np.where(none, np.nan, rlo), "ratio_hi": np.where(none, np.nan, rhi),
            "p_value": np.where(none, np.nan, p),
            "ci_method": [methods[0]] * h,
            "test": [None if (x or not np.isfinite(pv)) else methods[1] if name != "r2_score" else "z_delta"
                     for x, pv in zip(none, np.where(none, np.nan, p))],
        }  # fmt: skip
        return cols

    def _ks_rows(
        self,
        ent: pl.DataFrame,
        groups: pl.DataFrame,
        hist: pl.DataFrame,
        pop_hist: pl.DataFrame,
        pop_index: np.ndarray,
        ref_index: np.ndarray,
        ref_rows: pl.DataFrame,
        overall: np.ndarray,
        own: np.ndarray,
        labels: np.ndarray,
        mg: Moments,
        mpop: Moments,
    ) -> pl.DataFrame:
        """``ks_distance`` and ``ks_distance_bound`` of every group against its reference."""
        h = groups.height
        sg = np.arange(h)
        hg = hist.select(pl.col(_SG).alias("__pf_k"), "bin", "w", "p_min", "p_max")
        parts = []
        if ref_rows.height:  # the reference's histogram: its member groups' bins summed
            members = ref_rows.select("__pf_ri", pl.col("__pf_members").alias(_SG)).explode(_SG)
            rh = (hist.join(members, on=_SG).group_by("__pf_ri", "bin")
                  .agg(pl.col("w").sum(), pl.col("p_min").min(), pl.col("p_max").max()))  # fmt: skip
            pairs = pl.DataFrame({"__pf_k": sg, "__pf_ri": ref_index}).filter((pl.col("__pf_ri") >= 0) & ~pl.Series(overall))
            parts.append(pairs.join(rh, on="__pf_ri").drop("__pf_ri"))
        if overall.any():
            pairs = pl.DataFrame({"__pf_k": sg, "__pf_pi": pop_index}).filter(pl.Series(overall))
            parts.append(pairs.join(pop_hist, on="__pf_pi").drop("__pf_pi"))
        if parts:
            hr = pl.concat([p.select("__pf_k", "bin", "w", "p_min", "p_max") for p in parts])
            hr = hr.with_columns(pl.col("__pf_k").cast(pl.Int64))
            d, b = _ks_batch(hg.with_columns(pl.col("__pf_k").cast(pl.Int64)), hr, "__pf_k")
            d, b = np.resize(d, h) if len(d) != h else d, np.resize(b, h) if len(b) != h else b
            has_ref = np.isin(sg, hr["__pf_k"].unique().to_numpy()) & np.isin(sg, hg["__pf_k"].unique().to_numpy())
            d, b = np.where(has_ref, d, np.nan), np.where(has_ref, b, np.nan)
        else:
            d, b = np.full(h, np.nan), np.full(h, np.nan)
        d, b = np.where(own, np.nan, d), np.where(own, np.nan, b)
        cols: dict[str, Any] = {"value": d, "reference_group": list(labels)}
        if self.ci is not None:
            # the p-value: group vs reference; under "overall" group vs the rest (D = (1 − f)·D(g, rest))
            f = _div(mg["w"], mpop["w"])
            n1 = mg.neff
            ref_m = group_moments(ref_rows).take(ref_index) if ref_rows.height else None
            n2 = ref_m.neff if ref_m is not None else np.full(h, np.nan)
            rest = mpop - mg
            n2 = np.where(overall, rest.neff, n2)
            with np.errstate(divide="ignore", invalid="ignore"):
                dd = np.where(overall, np.minimum(d / (1.0 - f), 1.0), d)
            p = _ks_p_value(dd, n1, n2)
            cols |= {"p_value": p, "test": [("ks_asymptotic" if np.isfinite(x) else None) for x in p]}
        return pl.concat([
            self._long(ent, "ks_distance", cols),
            self._long(ent, "ks_distance_bound", {"value": b, "reference_group": list(labels)}),
        ], how="diagonal_relaxed")  # fmt: skip

    def _attribute_rows(self, groups: pl.DataFrame, group_rows: pl.DataFrame, pop: pl.DataFrame) -> pl.DataFrame:
        """Per (by, attribute set): each metric's spread, group max/min, bounded group loss, max KS."""
        ib = self.ib
        sk = [*ib, _SA]
        ent = (
            groups.group_by(sk, maintain_order=True).agg(pl.col("attribute").first())
            .join(pop.select(*ib, (pl.col("n") + pl.col("n_missing")).alias("n")), on=ib, how="left", nulls_equal=True,
                  maintain_order="left")
            .with_columns(pl.lit(-1, pl.Int64).alias(_SG), pl.lit(None, pl.String).alias("group"))
        )  # fmt: skip
        mg = group_moments(groups)
        vals = metric_values(mg)
        ivs = self._value_intervals(mg, vals) if self.ci is not None else {}
        codes = groups.select(pl.struct(sk).rank("dense").cast(pl.Int64) - 1).to_series().to_numpy()
        ent = ent.with_columns(pl.struct(sk).rank("dense").cast(pl.Int64).alias("__pf_code") - 1).sort("__pf_code")
        k_sets = ent.height
        labels = groups[_GL].to_list()
        out = []
        for name in _ESTIMATES:
            x = vals[name]
            res = _spread(x, codes, k_sets, labels, ivs.get(name), self.ci, name, self.weighted,
                          ivs.get("mean_squared_error"))
            out.append(self._long(ent, name, res["spread"]))
            out.append(self._long(ent, f"{name}_group_max", res["max"]))
            out.append(self._long(ent, f"{name}_group_min", res["min"]))
        mse = [r for r in out if r["metric"][0] == "mean_squared_error_group_max"][0]
        out.append(mse.with_columns(pl.lit("bounded_group_loss").alias("metric"),
                                    pl.lit(_ORDER["bounded_group_loss"], pl.Int64).alias("__pf_m")))  # fmt: skip
        ks = group_rows.filter(pl.col("metric") == "ks_distance").select(*sk, "value")
        ks_max = ks.group_by(sk).agg(
            pl.when(pl.col("value").count() > 0).then(pl.col("value").max()).alias("value")
        )
        ks_ent = ent.join(ks_max, on=sk, how="left", nulls_equal=True, maintain_order="left")
        out.append(self._long(ks_ent.drop("value"), "ks_distance", {"value": ks_ent["value"].cast(_F64).to_numpy()}))
        rows = pl.concat(out, how="diagonal_relaxed").drop("__pf_code")
        if self.ci is not None and "p_value" in rows.columns:  # p_adjust=None: the identity adjustment
            adj = pl.col("p_value") if self.p_adjust is None else iv.p_adjust(pl.col("p_value"), self.p_adjust)  # type: ignore[arg-type]
            rows = rows.with_columns(adj.over([*ib, "metric"]).alias("p_value_adjusted"))
        return rows


def _spread(
    x: np.ndarray,
    codes: np.ndarray,
    k_sets: int,
    labels: list[str],
    d: dict[str, np.ndarray] | None,
    ci: float | None,
    name: str,
    weighted: bool,
    mse: dict[str, np.ndarray] | None = None,
) -> dict[str, dict[str, Any]]:
    """Spread (max − min, min ÷ max), group max and min of one metric per attribute set, with intervals.

    Per set the groups where the metric is defined enter; ``n_groups`` counts them and
    ``excluded_groups`` names the others. Intervals: Šidák-simultaneous group intervals at level
    ``ci^(1/k)`` projected through max/min (two groups: the pair's Welch interval through ``|·|``);
    tests: Welch's ANOVA for the means, Cochran's Q for r².
    """
    spread = {c: np.full(k_sets, np.nan) for c in ("difference", "ratio", "n_groups")}
    mx = {c: np.full(k_sets, np.nan) for c in ("value",)}
    mn = {c: np.full(k_sets, np.nan) for c in ("value",)}
    excluded: list[str | None] = [None] * k_sets
    if ci is not None:
        for c in ("difference_lo", "difference_hi", "ratio_lo", "ratio_hi", "p_value"):
            spread[c] = np.full(k_sets, np.nan)
        for dd in (mx, mn):
            dd["value_lo"], dd["value_hi"] = np.full(k_sets, np.nan), np.full(k_sets, np.nan)
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(k_sets + 1))
    wt = "_ess" if weighted else ""
    for s in range(k_sets):
        idx = order[bounds[s] : bounds[s + 1]]
        ok = idx[np.isfinite(x[idx])]
        out_ = [labels[i] for i in idx if not np.isfinite(x[i])]
        excluded[s] = "; ".join(f"{lab} (undefined)" for lab in out_) or None
        k = len(ok)
        spread["n_groups"][s] = k
        if k == 0:
            continue
        v = x[ok]
        mx["value"][s], mn["value"][s] = v.max(), v.min()
        if k >= 2:
            spread["difference"][s] = v.max() - v.min()
            spread["ratio"][s] = v.min() / v.max() if v.max() > 0 and v.min() >= 0 else math.nan
        if ci is None or d is None:
            continue
        lo, hi = value_limits(name, d["est"][ok], d["var"][ok], d["df"][ok], ci ** (1.0 / k))
        if np.all(np.isfinite(lo)) and np.all(np.isfinite(hi)):
            mx["value_lo"][s], mx["value_hi"][s] = lo.max(), hi.max()
            mn["value_lo"][s], mn["value_hi"][s] = lo.min(), hi.min()
            if k >= 3:
                spread["difference_lo"][s] = max(0.0, lo.max() - hi.min())
                spread["difference_hi"][s] = hi.max() - lo.min()
                if lo.min() > 0:
                    spread["ratio_lo"][s] = lo.min() / hi.max()
                    spread["ratio_hi"][s] = min(1.0, hi.min() / lo.max())
        if k == 2:  # the pair: the interval of (larger − smaller), through |·|
            a, b = ok[np.argmax(x[ok])], ok[np.argmin(x[ok])]
            if a == b:
                b = ok[1] if ok[0] == a else ok[0]
            dif, vd, nu, _ = welch_test(d["est"][[a]], d["var"][[a]], d["df"][[a]], d["est"][[b]], d["var"][[b]],
                                        d["df"][[b]])  # fmt: skip
            q = float(np.ravel(_scipy_stats().norm.ppf(0.5 + ci / 2.0) if name == "r2_score" else _t(ci, nu))[0])
            lo2, hi2 = float(dif[0] - q * math.sqrt(vd[0])), float(dif[0] + q * math.sqrt(vd[0]))
            if math.isfinite(lo2) and math.isfinite(hi2):
                spread["difference_lo"][s] = 0.0 if lo2 <= 0 <= hi2 else min(abs(lo2), abs(hi2))
                spread["difference_hi"][s] = max(abs(lo2), abs(hi2))
        if k >= 2:
            if name == "r2_score":
                spread["p_value"][s] = _cochran_q(d["est"][ok], d["var"][ok])
            else:  # RMSE: the test of equal MSE
                t = mse if name == "root_mean_squared_error" and mse is not None else d
                spread["p_value"][s] = welch_anova(t["est"][ok], t["var"][ok], t["df"][ok])[3]
    res: dict[str, dict[str, Any]] = {"spread": {**spread, "excluded_groups": excluded}, "max": mx, "min": mn}
    if ci is not None:
        test = "cochran_q" if name == "r2_score" else f"welch_anova{wt}"
        res["spread"]["ci_method"] = ["projection"] * k_sets
        res["spread"]["test"] = [test if np.isfinite(p) else None for p in spread["p_value"]]
        res["max"]["ci_method"] = ["projection"] * k_sets
        res["min"]["ci_method"] = ["projection"] * k_sets
    return res


#: The attribute under which a report keeps its regression cell table (in memory only).
_CELLS_ATTR = "_polfair_regression_cells"


def attach_regression_cells(report: pl.DataFrame, cells: pl.DataFrame) -> pl.DataFrame:
    """Keep the cell table a regression report was computed from on the report object; returns it.

    In memory only: frames derived from the report (``filter``, ``select`` ...) and files do not
    carry it. The HTML page draws the prediction distributions from it
    (:func:`regression_cells_of`).
    """
    try:
        setattr(report, _CELLS_ATTR, cells)
    except AttributeError:  # pragma: no cover - a frame type without instance attributes
        pass
    return report


def regression_cells_of(report: Any) -> pl.DataFrame | None:
    """The regression cell table attached to a report (:func:`attach_regression_cells`), or ``None``.

    Examples
    --------
    >>> import polars as pl
    >>> import polfair as pf
    >>> df = pl.DataFrame({"y": [1.0, 2.0, 4.0], "p": [1.5, 2.5, 3.0], "g": ["a", "a", "b"]})
    >>> rep = pf.regression_report(df, y_true="y", y_pred="p", protected="g", ci=None)
    >>> int(regression_cells_of(rep)["n"].sum()), regression_cells_of(rep.filter(pl.col("group") == "a"))
    (3, None)
    """
    got = getattr(report, _CELLS_ATTR, None)
    return got if isinstance(got, pl.DataFrame) else None
