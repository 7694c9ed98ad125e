"""The regression cell table's moments: centred moments, their units, and their exact merge.

A regression cell holds, per quantity ``q`` of a row (the outcome ``y``, the prediction ``p``,
the error ``e = p − y``, its absolute value ``ae`` and its square ``e2``), the weighted mean
``mean_q = Σw·q / W`` and the centred moments ``m2_q = Σw(q − mean_q)²`` (``m3_y``, ``m4_y`` for
the outcome), and three co-moments: ``c_yp = Σw(y − ȳ)(p − p̄)``, ``c_e2y = Σw(e² − ē²)(y − ȳ)``
and ``c_e2y2 = Σw(e² − ē²)(y − ȳ)²``. Centred moments cannot cancel: a variance is a sum of
non-negative terms of the order of the spread, whatever the mean (prices of 1e8 ± 1) and
whatever the order of the rows.

**Merging** (tables of partitions, batches, bins, cells of a group): Chan, Golub & LeVeque (1979)
and Pébay (2008), for k parts at once. Each part's moments are re-centred on the combined mean
``c`` (``d = mean_i − c``; :func:`about`: ``S2 = m2 + W d²``, ``S3 = m3 + 3d·m2 + W d³``,
``S4 = m4 + 4d·m3 + 6d²·m2 + W d⁴``, co-moments likewise), summed, and made central again
(:func:`central`, a correction of the order of rounding). Every added term of ``m2`` is
non-negative, so no merge loses the digits of a variance.

**Units.** Weights far from 1 (1e-200, 1e200) and values far from 1 (outcomes near 1e150, whose
fourth powers leave Float64) are held in scaled units: the weighted sums of a cell are in units of
``2^w_exp`` (``w`` is ``Σw·2^-w_exp``) and its values in units of ``2^y_exp`` (``mean_y`` is
``ȳ·2^-y_exp``). The pass picks the exponents per cell from its largest weight and its largest
absolute outcome or prediction (0 when these lie in [2^-100, 2^100], so a table of ordinary data
is in the data's units; null when they are all 0: any unit holds the cell); scaling by a power of
two is exact. :data:`UNITS` gives each column's
degree in the weights and in the values; tables on other units are rescaled exactly before they
are merged (:func:`rescale`).

**Compensated means.** Each mean is a double-double ``mean_q + mean_q_lo``: ``mean_q`` is the
weighted mean as computed, ``mean_q_lo = Σw(q − mean_q)/W`` the weighted mean of its residuals (in
the same query; ``q − mean_q`` is exact near the mean, Sterbenz). A mean at a large level
(1e12 ± 1: an ulp of 1.2e-4) keeps the digits its rounding to the level loses: the centred terms
are about ``mean_q + mean_q_lo``, and every difference of means (the merges' ``d``, the reports'
differences and Welch tests) is taken as ``(hi_a − hi_b) + (lo_a − lo_b)``. A merge's mean is
``c + Σw(hi − c)/W`` (the centre ``c`` the parts' weighted mean: the rounded means as before the
compensations, so one part merged alone keeps its mean bitwise) stored as an exact two-sum, whose
error joins the parts' weighted ``lo``. Tables without the ``*_lo`` columns (written before issue 40)
read ``lo = 0`` (:func:`with_lo`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl

__all__ = [
    "CELL_COLUMNS",
    "COMOMENTS",
    "MOMENT_COLUMNS",
    "QUANTITIES",
    "SAFE_EXP",
    "UNITS",
    "about",
    "central",
    "combine",
    "LO_COLUMNS",
    "common_units",
    "complement",
    "rescale",
    "two_sum",
    "unit_exponent",
    "with_lo",
]

#: The quantities of a row: name -> (its mean column, its centred moment columns of order 2, 3, ...).
QUANTITIES: dict[str, tuple[str, tuple[str, ...]]] = {
    "y": ("mean_y", ("m2_y", "m3_y", "m4_y")),
    "p": ("mean_p", ("m2_p",)),
    "e": ("mean_e", ("m2_e",)),
    "ae": ("mean_ae", ("m2_ae",)),
    "e2": ("mean_e2", ("m2_e2",)),
}
#: The compensation of each mean (the low part of a double-double mean): mean column -> its ``*_lo`` column.
LO: dict[str, str] = {mean: f"{mean}_lo" for mean, _ in QUANTITIES.values()}
#: The compensation columns of the regression cell table (additive: a table without them reads 0).
LO_COLUMNS = tuple(LO.values())
#: The co-moments: column -> (quantity a, quantity b, power of b): Σw(a − ā)(b − b̄)^k.
COMOMENTS: dict[str, tuple[str, str, int]] = {"c_yp": ("y", "p", 1), "c_e2y": ("e2", "y", 1), "c_e2y2": ("e2", "y", 2)}
#: The moment columns of the regression cell table, in order.
MOMENT_COLUMNS = (
    "mean_y", "m2_y", "m3_y", "m4_y", "mean_p", "m2_p", "c_yp", "mean_e", "m2_e", "mean_ae", "m2_ae",
    "mean_e2", "m2_e2", "c_e2y", "c_e2y2",
)  # fmt: skip
#: The value columns of the regression cell table, in order (every other column is a key): counts,
#: Σw and Σw², the moments, the units' exponents, the ranges (``REGRESSION_CELL_COLUMNS``).
CELL_COLUMNS = (
    "n", "n_missing", "n_invalid", "w", "w2", *MOMENT_COLUMNS, "w_exp", "y_exp", "p_min", "p_max", "y_min", "y_max",
)  # fmt: skip
#: Each scaled column's units: (degree in the weights, degree in the values); the column holds
#: ``true · 2^-(a·w_exp + b·y_exp)``.
UNITS: dict[str, tuple[int, int]] = {
    "w": (1, 0), "w2": (2, 0),
    "mean_y": (0, 1), "m2_y": (1, 2), "m3_y": (1, 3), "m4_y": (1, 4), "mean_p": (0, 1), "m2_p": (1, 2),
    "c_yp": (1, 2), "mean_e": (0, 1), "m2_e": (1, 2), "mean_ae": (0, 1), "m2_ae": (1, 2), "mean_e2": (0, 2),
    "m2_e2": (1, 4), "c_e2y": (1, 3), "c_e2y2": (1, 4),
}  # fmt: skip
#: Largest weight or value magnitude kept in its own units: outside [2^-SAFE_EXP, 2^SAFE_EXP] a cell is scaled.
SAFE_EXP = 100
_CLAMP = 1000  # |exponent| at most this (2^±1000 is still a finite Float64)


def unit_exponent(ns: Any, largest: Any) -> Any:
    """Expression: the exponent a cell's weights or values are scaled by, from their largest magnitude.

    0 where ``largest`` is in [2^-100, 2^100]; else ``floor(log2(largest))`` (clamped to ±1000),
    so the scaled magnitudes are below 2; null where ``largest`` is 0 or null (every weight or
    value of the cell is 0: any unit holds it, and it must not set the unit of a merge). In the
    namespace ``ns`` (Polars or narwhals).

    Examples
    --------
    >>> import polars as pl
    >>> pl.DataFrame({"m": [0.0, 3.0, 1e-200, 1e200]}).select(unit_exponent(pl, pl.col("m")).alias("e"))["e"].to_list()
    [None, 0.0, -665.0, 664.0]
    """
    lo, hi = 2.0**-SAFE_EXP, 2.0**SAFE_EXP
    safe = ns.when((largest > 0.0) & ((largest < lo) | (largest > hi))).then(largest).otherwise(ns.lit(1.0))
    e = safe.log(2.0).floor()
    e = ns.when(e > _CLAMP).then(ns.lit(float(_CLAMP))).when(e < -_CLAMP).then(ns.lit(float(-_CLAMP))).otherwise(e)
    return ns.when(largest > 0.0).then(e)


# ----------------------------------------------------------------------------------------------
# the algebra: written once for numpy arrays and Polars expressions (only + − × ÷ are used)


def two_sum(a: Any, b: Any) -> tuple[Any, Any]:
    """Knuth's TwoSum: ``s = fl(a + b)`` and the exact rounding error ``e`` (``a + b = s + e`` exactly).

    Examples
    --------
    >>> s, e = two_sum(1e12, 1e-5)
    >>> s, e == 1e-5 - (s - 1e12)
    (1000000000000.0, True)
    """
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def with_lo(table: Any) -> Any:
    """The table (eager or lazy) with every compensation column (:data:`LO_COLUMNS`): 0.0 where absent.

    A cell table of an earlier polfair (without ``*_lo``) reads as exact means rounded to Float64.
    """
    names = table.collect_schema().names() if isinstance(table, pl.LazyFrame) else table.columns
    absent = [c for c in LO_COLUMNS if c not in names]
    return table.with_columns([pl.lit(0.0, pl.Float64).alias(c) for c in absent]) if absent else table


def about(m: Mapping[str, Any], d: Mapping[str, Any], W: Any) -> dict[str, Any]:
    """Sums about shifted centres from centred moments: ``d[q] = mean_q − centre_q`` per quantity.

    Returns ``s1_q = W·d``, ``s2_q = m2 + W d²``, ``s3_y``, ``s4_y`` and the co-moments about the
    centres (keys named like :data:`MOMENT_COLUMNS`, with ``s1_q`` for every quantity).

    Examples
    --------
    >>> import numpy as np
    >>> m = {"m2_y": np.array([2.0]), "m3_y": np.array([0.0]), "m4_y": np.array([2.0])}
    >>> s = about({**{k: np.zeros(1) for k in ("m2_p", "m2_e", "m2_ae", "m2_e2", "c_yp", "c_e2y", "c_e2y2")}, **m},
    ...           {q: np.array([1.0]) for q in ("y", "p", "e", "ae", "e2")}, np.array([2.0]))
    >>> float(s["s1_y"][0]), float(s["m2_y"][0]), float(s["m4_y"][0])
    (2.0, 4.0, 16.0)
    """
    out: dict[str, Any] = {}
    for q, (_, moments) in QUANTITIES.items():
        dq = d[q]
        out[f"s1_{q}"] = W * dq
        out[moments[0]] = m[moments[0]] + W * dq * dq
    dy = d["y"]
    m2, m3, m4 = m["m2_y"], m["m3_y"], m["m4_y"]
    out["m3_y"] = m3 + 3.0 * dy * m2 + W * dy * dy * dy
    out["m4_y"] = m4 + 4.0 * dy * m3 + 6.0 * dy * dy * m2 + W * (dy * dy) * (dy * dy)
    out["c_yp"] = m["c_yp"] + W * dy * d["p"]
    dq = d["e2"]
    out["c_e2y"] = m["c_e2y"] + W * dq * dy
    out["c_e2y2"] = m["c_e2y2"] + 2.0 * dy * m["c_e2y"] + dq * m2 + W * dq * dy * dy
    return out


def central(s: Mapping[str, Any], W: Any, ratio: Callable[[Any, Any], Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Centred moments from sums about centres (the inverse of :func:`about`).

    Parameters
    ----------
    s
        Sums about the centres (:func:`about`'s keys).
    W
        Σw.
    ratio
        ``ratio(a, W)``: ``a / W`` where ``W > 0``, 0 elsewhere (the engine's guarded division).

    Returns
    -------
    (dict, dict)
        ``d``: per quantity, mean − centre (``s1/W``); the centred moments by column name.
    """
    d = {q: ratio(s[f"s1_{q}"], W) for q in QUANTITIES}
    out: dict[str, Any] = {}
    for q, (_, moments) in QUANTITIES.items():
        out[moments[0]] = s[moments[0]] - W * d[q] * d[q]
    dy = d["y"]
    s2, s3, s4 = s["m2_y"], s["m3_y"], s["m4_y"]
    out["m3_y"] = s3 - 3.0 * dy * s2 + 2.0 * W * dy * dy * dy
    out["m4_y"] = s4 - 4.0 * dy * s3 + 6.0 * dy * dy * s2 - 3.0 * W * (dy * dy) * (dy * dy)
    out["c_yp"] = s["c_yp"] - W * dy * d["p"]
    dq = d["e2"]
    out["c_e2y"] = s["c_e2y"] - W * dq * dy
    out["c_e2y2"] = s["c_e2y2"] - 2.0 * dy * out["c_e2y"] - dq * out["m2_y"] - W * dq * dy * dy
    return d, out


# ----------------------------------------------------------------------------------------------
# tables (Polars): units and merges


def _exp2(x: pl.Expr) -> pl.Expr:
    return pl.lit(2.0, pl.Float64).pow(x.cast(pl.Float64))


def rescale(w_exp: pl.Expr | int, y_exp: pl.Expr | int) -> list[pl.Expr]:
    """Expressions putting a regression cell table on the units ``(w_exp, y_exp)`` (exact powers of two).

    Examples
    --------
    >>> import polars as pl
    >>> t = pl.DataFrame({c: [1.0] for c in UNITS} | {"w_exp": [0], "y_exp": [3]})
    >>> t.with_columns(rescale(1, 4)).select("w", "mean_y", "m2_y", "w_exp", "y_exp").row(0)
    (0.5, 0.5, 0.125, 1, 4)
    """
    we = w_exp if isinstance(w_exp, pl.Expr) else pl.lit(int(w_exp))
    ye = y_exp if isinstance(y_exp, pl.Expr) else pl.lit(int(y_exp))
    # a null exponent (a cell of zero weights or values) is any unit: taken as the target
    dw = (pl.col("w_exp").cast(pl.Float64) - we.cast(pl.Float64)).fill_null(0.0)
    dy = (pl.col("y_exp").cast(pl.Float64) - ye.cast(pl.Float64)).fill_null(0.0)
    out = [(pl.col(c) * _exp2(a * dw + b * dy)).alias(c) for c, (a, b) in UNITS.items()]
    return [*out, we.cast(pl.Int32).alias("w_exp"), ye.cast(pl.Int32).alias("y_exp")]


def common_units(cells: pl.DataFrame) -> tuple[pl.DataFrame, int, int]:
    """The table on ONE pair of units for every row (the largest exponents), and those exponents.

    The report computes every group on common units (a group's rows may come from cells with
    other exponents), then scales its values back (``2^y_exp`` for means, ``4^y_exp`` for the
    mean squared error, ``2^w_exp`` for ``num_instances``).

    Examples
    --------
    >>> import polars as pl
    >>> t = pl.DataFrame({c: [1.0, 1.0] for c in UNITS} | {"w_exp": [0, 2], "y_exp": [0, 0]})
    >>> table, we, ye = common_units(t)
    >>> table["w"].to_list(), we, ye
    ([0.25, 1.0], 2, 0)
    """
    cells = with_lo(cells)
    if cells.height == 0:
        return cells, 0, 0
    we, ye = int(cells["w_exp"].max() or 0), int(cells["y_exp"].max() or 0)  # type: ignore[arg-type]
    return cells.with_columns(rescale(we, ye)), we, ye


def _over(e: pl.Expr, keys: Sequence[str]) -> pl.Expr:
    return e.over(list(keys)) if keys else e


def _ratio_expr(a: pl.Expr, W: pl.Expr) -> pl.Expr:
    return pl.when(W > 0).then(a / W).otherwise(0.0)


#: Columns a merge adds (counts), takes the min of, the max of.
_ADDED = ("n", "n_missing", "n_invalid")
_MIN, _MAX = ("p_min", "y_min"), ("p_max", "y_max")


def combine(cells: pl.DataFrame, keys: Sequence[str]) -> pl.DataFrame:
    """Merge the rows of a regression cell table per combination of ``keys`` (Chan et al. 1979; Pébay 2008).

    Every group's rows are put on the group's largest units (:func:`rescale`), re-centred on the
    group's combined means (:func:`about`), summed and made central (:func:`central`); counts
    add, ranges widen. Order-independent up to rounding; no variance can cancel.

    Parameters
    ----------
    cells
        Rows with the regression cell table's value columns (and ``keys``).
    keys
        The columns to group by (``[]``: one row of everything).

    Returns
    -------
    pl.DataFrame
        ``*keys`` and the value columns, one row per group (in order of first appearance).

    Examples
    --------
    >>> import polars as pl
    >>> from polfair.core.regression import regression_cells
    >>> df = pl.DataFrame({"y": [1.0, 2.0, 4.0, 9.0], "p": [1.0, 3.0, 5.0, 7.0], "g": ["a", "a", "b", "b"]})
    >>> one = combine(regression_cells(df.lazy(), y_true="y", y_pred="p", keys=["g"]), [])
    >>> float(one["mean_y"][0]), float(one["m2_y"][0])
    (4.0, 38.0)
    """
    keys = list(keys)
    t = with_lo(cells).with_columns(_over(pl.col("w_exp").max(), keys).alias("__pf_we"),
                           _over(pl.col("y_exp").max(), keys).alias("__pf_ye"))  # fmt: skip
    t = t.with_columns(rescale(pl.col("__pf_we"), pl.col("__pf_ye")))
    W = _over(pl.col("w").sum(), keys)
    centre = {
        q: pl.when(W > 0).then(_over((pl.col("w") / W * pl.col(mean)).sum(), keys)).otherwise(_over(pl.col(mean).mean(), keys))
        for q, (mean, _) in QUANTITIES.items()
    }  # fmt: skip
    # the combined compensation: the weighted mean of the parts' lo (as the centre: one part keeps its lo)
    low = {
        q: pl.when(W > 0).then(_over((pl.col("w") / W * pl.col(LO[mean])).sum(), keys))
        .otherwise(_over(pl.col(LO[mean]).mean(), keys))
        for q, (mean, _) in QUANTITIES.items()
    }  # fmt: skip
    t = t.with_columns([c.alias(f"__pf_c_{q}") for q, c in centre.items()] + [c.alias(f"__pf_l_{q}") for q, c in low.items()])
    # the compensated difference of means: (hi − c) is exact near the centre (Sterbenz), lo adds the digits
    hd = {q: pl.col(mean) - pl.col(f"__pf_c_{q}") for q, (mean, _) in QUANTITIES.items()}
    d = {q: hd[q] + pl.col(LO[mean]) for q, (mean, _) in QUANTITIES.items()}
    raw = about({c: pl.col(c) for c in MOMENT_COLUMNS}, d, pl.col("w"))
    t = t.with_columns([e.alias(f"__pf_s_{k}") for k, e in raw.items()] +
                       [(pl.col("w") * hd[q]).alias(f"__pf_h_{q}") for q in QUANTITIES])  # fmt: skip
    aggs = [
        *[pl.col(c).sum() for c in (*_ADDED, "w", "w2")], *[pl.col(f"__pf_s_{k}").sum().alias(f"__pf_s_{k}") for k in raw],
        *[pl.col(f"__pf_h_{q}").sum() for q in QUANTITIES], *[pl.col(f"__pf_l_{q}").first() for q in QUANTITIES],
        *[pl.col(f"__pf_c_{q}").first() for q in QUANTITIES], pl.col("__pf_we").first().alias("w_exp"),
        pl.col("__pf_ye").first().alias("y_exp"), *[pl.col(c).min() for c in _MIN], *[pl.col(c).max() for c in _MAX],
    ]  # fmt: skip
    g = t.group_by(keys, maintain_order=True).agg(aggs) if keys else t.select(aggs)
    Wg = pl.col("w")
    _, cm = central({k: pl.col(f"__pf_s_{k}") for k in raw}, Wg, _ratio_expr)
    means = []
    for q, (mean, _) in QUANTITIES.items():
        # the combined mean: c + Σw(hi − c)/W (the parts' rounded means, as before the compensations: a table
        # of one part keeps its mean bitwise), its rounding error and the parts' lo, a double-double
        hi, err = two_sum(pl.col(f"__pf_c_{q}"), _ratio_expr(pl.col(f"__pf_h_{q}"), Wg))
        means += [hi.alias(mean), (err + pl.col(f"__pf_l_{q}")).alias(LO[mean])]
    g = g.with_columns(*means, *[e.alias(c) for c, e in cm.items()])
    return g.select(*keys, *_ordered(g.columns))


def _ordered(columns: Sequence[str]) -> list[str]:
    return [c for c in (*CELL_COLUMNS, *LO_COLUMNS) if c in columns]


def complement(whole: Mapping[str, np.ndarray], part: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The moments of the rows of ``whole`` not in ``part`` (a group's complement in its population).

    Both on the same units; the inverse of a merge: the part's sums about the whole's means are
    taken off the whole's, and the rest is made central (:func:`central`). Its outcome range is
    unknown (taken as not constant).

    Examples
    --------
    >>> import numpy as np
    >>> whole = {c: np.array([0.0]) for c in MOMENT_COLUMNS} | {"w": np.array([4.0]), "w2": np.array([4.0]),
    ...          "mean_y": np.array([2.5]), "m2_y": np.array([5.0])}
    >>> part = {c: np.array([0.0]) for c in MOMENT_COLUMNS} | {"w": np.array([2.0]), "w2": np.array([2.0]),
    ...         "mean_y": np.array([1.5]), "m2_y": np.array([0.5])}
    >>> rest = complement(whole, part)
    >>> float(rest["mean_y"][0]), float(rest["m2_y"][0])
    (3.5, 0.5)
    """
    W = whole["w"] - part["w"]
    zero = np.zeros_like(W)
    lo_w, lo_p = ({m: t.get(m, zero) for m in LO_COLUMNS} for t in (whole, part))
    hd = {q: part[mean] - whole[mean] for q, (mean, _) in QUANTITIES.items()}
    ld = {q: lo_p[LO[mean]] - lo_w[LO[mean]] for q, (mean, _) in QUANTITIES.items()}
    d = {q: hd[q] + ld[q] for q in QUANTITIES}
    sp = about(part, d, part["w"])
    sw = about(whole, {q: np.zeros_like(W) for q in QUANTITIES}, whole["w"])
    rest = {k: sw[k] - sp[k] for k in sp}

    def ratio(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(b > 0, a / np.where(b > 0, b, 1.0), 0.0)

    _, cm = central(rest, W, ratio)
    out = {"w": W, "w2": whole["w2"] - part["w2"], **cm}
    for q, (mean, _) in QUANTITIES.items():  # W_r·mean_r = W·mean − W_p·mean_p: whole's hi − W_p·hd/W_r, then the lo
        hi, err = two_sum(whole[mean], ratio(-(part["w"] * hd[q]), W))
        out[mean], out[LO[mean]] = hi, err + (lo_w[LO[mean]] - ratio(part["w"] * ld[q], W))
    out |= {"y_min": np.full_like(W, -np.inf), "y_max": np.full_like(W, np.inf)}
    return out
