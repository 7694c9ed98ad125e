"""Intervals on the entropy indices of a cell table: the shared driver and the analytic method.

:func:`entropy_intervals` lays out what every method of the entropy-index intervals shares: the
cells summed over everything but ``by`` and the protected attributes, sorted; the ``by`` values as
runs of that table; one *block* per attribute set (between-group indices), one for the cells
(between all intersectional groups) and one for all individuals, each with three rows per ``by``
value (GE(α), Theil, CV); the estimates through :mod:`polfair.core.entropy` (the report's
definition). A method is a :data:`Limits` function that turns the blocks into limits.

:func:`delta_limits` is the report's method (``ci_method = "delta_bc"``): the **bias-corrected
normal interval** ``θ̂ − bias ± z·sd`` of the stratified cell bootstrap
(:func:`polfair.core.intervals.entropy_bootstrap`), with ``bias`` and ``sd`` the second-order
delta-method moments of the bootstrap law instead of the mean and SD of random replicates. Under
the cell bootstrap every cell keeps its size ``n_c`` and redraws its benefits (0 for FN, 1 for TP
and TN, 2 for FP) as a multinomial sample, so a group's benefit sum ``X_g`` (a union of cells) has
mean ``X̂_g`` and variance ``V_g = Σ_c (Σb² − (Σb)²/n_c)`` exactly, independently across groups. An
index ``θ = f(μ_1, …, μ_K)`` of the group means ``μ_g = X_g / n_g`` then has (``v_g = V_g / n_g²``,
``g`` its gradient, ``H`` its Hessian)::

    bias ≈ ½ Σ_g H_gg v_g,     sd² ≈ Σ_g g_g² v_g + ½ Σ_gh H_gh² v_g v_h

(second order; the second term is what keeps ``sd`` away from 0 when every group has the same
mean, where the first-order delta method fails). For a between-group index
``θ = c(μ) Σ_g p_g φ(μ_g / μ)`` (``p_g = n_g / N``, ``μ = Σ p_g μ_g``) the Hessian is a diagonal
plus a rank-two term, ``H_gh = δ_gh p_g c φ''_g / μ² + p_g p_h (κ + e_g + e_h)``, so both sums take
O(K) (module notes of :func:`_between_moments`). The index of all individuals is a function of the
two shares ``(FN, FP) / N`` with covariance ``Σ_c (diag(FN_c, FP_c) − (FN_c, FP_c)ᵀ(FN_c, FP_c)/n_c) / N²``;
its derivatives are central differences. CV = √(2·GE(2)) takes the GE(2) limits through that
monotone map (the delta method for a square root fails at 0).

The interval is deterministic (no random numbers), O(cells), and agrees with the bootstrap it
approximates (mean and SD within a few percent of B = 20,000 replicates at the report's shapes,
``tests/core/entropy/test_entropy_ci.py``); coverage is in ``bench/coverage.py``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np
import polars as pl

__all__ = [
    "CellBlocks", "Grouping", "IndexRows", "Limits", "benefit_variance", "between_limits", "delta_limits", "entropy_intervals",
    "individual_limits",
]  # fmt: skip

_ROW = "__pf_row"
_CONFUSION_N = ("tp_n", "fp_n", "tn_n", "fn_n")


class Grouping(NamedTuple):
    """The groups of cells of one between-group block.

    ``attrs`` the attributes it groups by (besides ``by``); ``codes`` each cell's group, numbered
    by first appearance (so a ``by`` value's groups are consecutive); ``first`` each group's first
    cell; ``n`` and ``x`` each group's row count and benefit sum ``TP + TN + 2 FP`` (Float64).
    """

    attrs: frozenset[str]
    codes: np.ndarray
    first: np.ndarray
    n: np.ndarray
    x: np.ndarray


class CellBlocks(NamedTuple):
    """What a :data:`Limits` method receives: the sorted cells and the blocks of rows.

    ``counts`` ``(C, 4)`` int64 ``tp_n, fp_n, tn_n, fn_n`` of the cells with ``n > 0``, sorted by
    ``by`` and the protected attributes; ``n`` their sizes; ``seg`` each cell's ``by`` value
    (``0..D−1``), ``starts`` the first cell of each; ``by_rows`` the ``by`` values (tuples);
    ``blocks`` one entry per block in row order: a :class:`Grouping` for the between-group blocks,
    ``None`` for the block of all individuals; ``alpha`` the index's α.
    """

    counts: np.ndarray
    n: np.ndarray
    seg: np.ndarray
    starts: np.ndarray
    by_rows: list[tuple[Any, ...]]
    blocks: list[Grouping | None]
    alpha: float


#: ``limits(cells, estimates, ci) -> (lo, hi, defined)``: ``estimates`` are the rows' values
#: (Float64, NaN where undefined), three per ``by`` value and block in the order GE(α) (all ``by``
#: values), Theil, CV, block after block; the result has the same length (``lo``/``hi`` NaN where
#: ``defined`` is False).
Limits = Callable[[CellBlocks, np.ndarray, float], tuple[np.ndarray, np.ndarray, np.ndarray]]


class IndexRows(NamedTuple):
    """Which entropy-index rows of a cell table: ``protected``, ``by``, ``sets``, ``alpha``, ``ci``.

    As the parameters of :func:`polfair.core.intervals.entropy_delta` (and ``entropy_bootstrap``):
    the protected-attribute and ``by`` columns, the attribute sets of the between-group rows
    (``None``: every non-empty subset), the index's α and the level.
    """

    protected: Sequence[str]
    by: Sequence[str] = ()
    sets: Sequence[Sequence[str]] | None = None
    alpha: float = 2.0
    ci: float = 0.95


def entropy_intervals(
    cells: pl.DataFrame | pl.LazyFrame, rows: IndexRows, *, limits: Limits, method: str
) -> pl.DataFrame:
    """The entropy-index rows of a cell table with the limits of ``limits`` (see the module notes).

    Parameters
    ----------
    cells
        A cell table (unweighted confusion counts ``tp_n, fp_n, tn_n, fn_n``; other columns than
        ``by`` and ``protected`` are summed away).
    rows
        Which rows (:class:`IndexRows`: ``protected``, ``by``, ``sets``, ``alpha``, ``ci``).
    limits
        The method.
    method
        Its name, written to the ``ci_method`` column.

    Returns
    -------
    pl.DataFrame
        Columns ``*by``, ``attribute`` (String), ``metric`` (String), ``value``, ``value_lo``,
        ``value_hi`` (Float64), ``ci_method`` (String; null where the limits are).

    Examples
    --------
    >>> cells = pl.DataFrame({"g": ["a", "b"], "tp_n": [30, 10], "fp_n": [10, 20], "tn_n": [50, 60], "fn_n": [10, 10]})
    >>> entropy_intervals(cells, IndexRows(protected=["g"]), limits=delta_limits, method="delta_bc").height
    9
    """
    from polfair.core import entropy

    protected, by, sets, alpha, ci = rows
    keys, by = list(protected), list(by)
    attr_sets: list[tuple[str, ...]] = [tuple(s) for s in sets] if sets is not None else [
        s for k in range(1, len(keys) + 1) for s in itertools.combinations(keys, k)
    ]  # fmt: skip
    group = [*by, *keys]
    base = (
        cells.lazy().group_by(group).agg([pl.col(c).cast(pl.Int64).sum() for c in _CONFUSION_N])
        .sort(group, nulls_last=False)
        .collect()
    )  # fmt: skip
    base = base.filter(base.select(pl.sum_horizontal(_CONFUSION_N)).to_series() > 0)
    n_cells = base.height
    if by and n_cells:
        seg = base.select(pl.struct(by).rle_id()).to_series().to_numpy().astype(np.int64)
    else:
        seg = np.zeros(n_cells, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, seg[1:] != seg[:-1]]) if n_cells else np.zeros(0, dtype=np.int64)
    n_seg = starts.size
    by_rows = base.select(by)[starts.tolist()].rows() if by else [()] * n_seg
    counts = base.select(_CONFUSION_N).to_numpy().astype(np.int64).reshape(n_cells, 4)
    n = counts.sum(axis=1)

    # every attribute set's groups of cells in one select, numbered in order of first appearance
    # (so a by value's groups are consecutive)
    distinct = list(dict.fromkeys(attr_sets))
    firsts = base.with_row_index(_ROW).select(
        [pl.col(_ROW).min().over([*by, *st]).alias(str(i)) for i, st in enumerate(distinct)]
    )
    x = (counts[:, 0] + counts[:, 2] + 2 * counts[:, 1]).astype(np.float64)  # TP + TN + 2 FP

    def grouping(attrs: frozenset[str], first: np.ndarray, codes: np.ndarray) -> Grouping:
        g = first.size
        return Grouping(attrs, codes, first, np.bincount(codes, weights=n, minlength=g),
                        np.bincount(codes, weights=x, minlength=g))  # fmt: skip

    of_set = {}
    for i, st in enumerate(distinct):  # a group's first row is its number's key (ascending = first appearance)
        first, codes = np.unique(firsts[str(i)].to_numpy(), return_inverse=True)
        of_set[st] = grouping(frozenset(st), first.astype(np.int64), codes.reshape(-1).astype(np.int64))
    cells_rows = np.arange(n_cells, dtype=np.int64)
    groupings = [of_set[st] for st in attr_sets] + [grouping(frozenset(keys), cells_rows, cells_rows)]  # + all groups
    labels = [" & ".join(st) for st in attr_sets] + [None, None]
    prefixes = ["between_group_"] * len(attr_sets) + ["between_all_groups_", ""]

    # estimates through polfair.core.entropy (the report's definition): the group benefit vectors of
    # every between-group block in one frame, one aggregation; the individuals' benefits in another
    cols: dict[str, list[np.ndarray]] = {"__pf_blk": [], "__pf_seg": [], "b": [], "cnt": []}
    for j, gr in enumerate(groupings):
        cols["__pf_blk"].append(np.full(gr.first.size, j, dtype=np.int64))
        cols["__pf_seg"].append(seg[gr.first])
        cols["b"].append(gr.x / gr.n)
        cols["cnt"].append(gr.n)
    groups = pl.DataFrame({k: np.concatenate(v) if v else np.zeros(0) for k, v in cols.items()})
    names = {"ge": alpha, "theil": 1.0, "ge2": 2.0}
    idx = ["__pf_blk", "__pf_seg"]
    between = entropy.generalized_entropy_indices(groups, names, idx)
    sums = base.with_columns(pl.lit(0, pl.Int64).alias("__pf_blk"), pl.Series("__pf_seg", seg)).group_by(
        idx, maintain_order=True
    ).agg([pl.col(c).sum() for c in _CONFUSION_N])  # fmt: skip
    individuals = entropy.generalized_entropy_indices(
        entropy.benefit_of_individuals(sums, idx, summed=True), names, idx
    )
    wide = pl.concat([between, individuals.with_columns(pl.lit(len(groupings), pl.Int64).alias("__pf_blk"))])
    clamped = {k: pl.col(k).fill_nan(None).clip(lower_bound=0.0) for k in names}
    wide = wide.sort(idx).select(clamped["ge"], clamped["theil"], (2.0 * clamped["ge2"]).sqrt().alias("cv"))
    blocks: list[Grouping | None] = [*groupings, None]  # None: all individuals
    if wide.height != len(blocks) * n_seg:  # every by value has a counted row in every block
        msg = "entropy intervals: internal error (estimate rows do not match the by values)"
        raise AssertionError(msg)
    # rows: block after block, in each GE(α) for every by value, then Theil, then CV
    value = wide.to_numpy().reshape(len(blocks), n_seg, 3).transpose(0, 2, 1).reshape(-1)
    family = ["generalized_entropy_index", "theil_index", "coefficient_of_variation"]
    est = pl.DataFrame({
        "attribute": pl.Series([lb for lb in labels for _ in range(3 * n_seg)], dtype=pl.String),
        "metric": pl.Series([f"{pre}{f}" for pre in prefixes for f in family for _ in range(n_seg)], dtype=pl.String),
    })  # fmt: skip
    if by:
        est = pl.concat([base.select(by)[np.tile(starts, 3 * len(blocks))], est], how="horizontal")
    if n_cells:
        table = CellBlocks(counts, n, seg, starts, by_rows, blocks, float(alpha))
        lo, hi, ok = limits(table, value, ci)
    else:
        lo = hi = np.zeros(0)
        ok = np.zeros(0, dtype=bool)
    out = pl.DataFrame({"value_lo": lo, "value_hi": hi, "__pf_ok": ok}).select(
        pl.when("__pf_ok").then(pl.col("value_lo")).alias("value_lo"),
        pl.when("__pf_ok").then(pl.col("value_hi")).alias("value_hi"),
        pl.when("__pf_ok").then(pl.lit(method)).alias("ci_method"),
    )
    value_col = pl.DataFrame({"value": pl.Series(value, dtype=pl.Float64)}).fill_nan(None)
    return pl.concat([est, value_col, out], how="horizontal")


# ----------------------------------------------------------------------------------------------
# the analytic (second-order delta) moments of the cell bootstrap


def _phi(r: np.ndarray, a: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``φ(r)``, ``φ'(r)``, ``r·φ'(r)`` and ``r²·φ''(r)`` of GE(α)'s term (the last two with their limits at 0).

    α ∉ {0, 1}: ``φ = (r^α − 1)/(α(α−1))``; α = 1: ``r ln r``; α = 0: ``−ln r`` (with ``c(μ) = 1/μ``,
    aif360's GE(0)). ``φ'`` is inf at ``r = 0`` when α ≤ 1; only groups that cannot move
    (``v = 0``) can have ``r = 0``, and their terms are masked by the caller.
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if a == 1.0:
            lr = np.log(r, out=np.zeros(r.shape), where=r > 0)
            return r * lr, lr + 1.0, r * lr + r, r.copy()
        if a == 0.0:
            return -np.log(r), -1.0 / r, np.full(r.shape, -1.0), np.ones(r.shape)
        ra = r * r if a == 2.0 else np.power(r, a)
        d1 = r if a == 2.0 else np.power(r, a - 1.0)
        return (ra - 1.0) / (a * (a - 1.0)), d1 / (a - 1.0), ra / (a - 1.0), ra


def _scale(mu: np.ndarray, a: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``c(μ)``, ``c'(μ)``, ``c''(μ)``: 1 (α ≠ 0) or ``1/μ`` (α = 0, aif360's GE(0))."""
    if a == 0.0:
        with np.errstate(divide="ignore"):
            return 1.0 / mu, -1.0 / mu**2, 2.0 / mu**3
    return np.ones(mu.shape), np.zeros(mu.shape), np.zeros(mu.shape)


def _between_moments(
    nn: np.ndarray, x: np.ndarray, var: np.ndarray, gseg: np.ndarray, n_seg: int, a: float
) -> tuple[np.ndarray, np.ndarray]:
    """Bias and SD of between-group GE(α) under the cell bootstrap, per ``by`` value.

    Parameters: each group's size ``nn``, benefit sum ``x``, variance ``var`` of that sum, and
    ``by`` value ``gseg`` (``0..n_seg−1``). With ``p = n/N``, ``μ_g = x/n``, ``r = μ_g/μ``,
    ``v = var/n²``, ``A = Σ p φ(r)``, ``m1 = Σ p r φ'``, ``m2 = Σ p (r φ' + r² φ'')``:
    gradient ``g = p (c'A + c (φ' − m1)/μ)``; Hessian ``H_gh = δ_gh D_g + p_g p_h (κ + e_g + e_h)``
    with ``D = p c φ''/μ²``, ``e = (c'/μ − c/μ²) φ' − (c/μ²) r φ''``,
    ``κ = c''A − 2 c' m1/μ + c (m1 + m2)/μ²``. With ``w = p² v`` and ``W_j = Σ w e^j``:
    ``Σ_gh H_gh² v_g v_h = Σ D² v² + 2 Σ D p² (κ + 2e) v² + κ² W0² + 2 W0 W2 + 4 κ W0 W1 + 2 W1²``.
    """
    return _between_moments_of(nn, x, var, gseg, n_seg, (a,))[a]


def _between_moments_of(nn: np.ndarray, x: np.ndarray, var: np.ndarray, gseg: np.ndarray, n_seg: int,
                        alphas: Sequence[float]) -> dict[float, tuple[np.ndarray, np.ndarray]]:  # fmt: skip
    """:func:`_between_moments` of several α at once (what does not depend on α computed once)."""

    def per(values: np.ndarray) -> np.ndarray:
        return np.bincount(gseg, weights=values, minlength=n_seg).astype(np.float64)

    big_n = per(nn)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        mu = per(x) / big_n
        p = nn / big_n[gseg]
        r = x / nn / mu[gseg]
        v = var / (nn * nn)
        moving = v > 0
        mu_g = mu[gseg]
        w = p * p * v
        w0 = per(w)
    one = per(np.ones(nn.size)) == 1  # one group: the index is 0 in every replicate (not rounding noise)
    out = {}
    for a in alphas:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            phi, d1, rd1, r2d2 = _phi(r, a)
            c, c1, c2 = _scale(mu, a)
            big_a = per(p * phi)
            m1 = per(p * rd1)
            m2 = per(p * (rd1 + r2d2))
            cg, c1g = c[gseg], c1[gseg]
            kappa = c2 * big_a - 2.0 * c1 * m1 / mu + c * (m1 + m2) / mu**2
            d1m = np.where(moving, d1, 0.0)
            d2 = np.where(moving, r2d2 / (r * r), 0.0)  # φ'' where the group moves (then r > 0)
            grad = p * (c1g * big_a[gseg] + cg * (d1m - m1[gseg]) / mu_g)
            diag = p * cg * d2 / mu_g**2
            e = (c1g / mu_g - cg / mu_g**2) * d1m - cg / mu_g**2 * r * d2
            kg = kappa[gseg]
            bias = 0.5 * per((diag + p * p * (kg + 2.0 * e)) * v)
            w1, w2 = per(w * e), per(w * e * e)
            quad = per(diag * diag * v * v + 2.0 * diag * p * p * (kg + 2.0 * e) * v * v)
            quad += kappa**2 * w0**2 + 2.0 * w0 * w2 + 4.0 * kappa * w0 * w1 + 2.0 * w1**2
            sd = np.sqrt(np.maximum(per(grad * grad * v) + 0.5 * quad, 0.0))
        out[a] = (np.where(one, 0.0, bias), np.where(one, 0.0, sd))
    return out


def _individual_ge(p0: np.ndarray, p2: np.ndarray, a: float) -> np.ndarray:
    """GE(α) of all individuals from the shares of benefit 0 (FN) and 2 (FP) (benefit 1 the rest).

    ``c(μ) Σ_b π_b φ(b/μ)`` with ``μ = 1 − π_0 + π_2``; a share of exactly 0 adds nothing.
    """
    mu = 1.0 - p0 + p2
    total = np.zeros(np.broadcast(p0, p2).shape)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for b, share in ((0.0, p0), (1.0, 1.0 - p0 - p2), (2.0, p2)):
            total += np.where(share != 0, share * _phi(b / mu, a)[0], 0.0)
        return _scale(mu, a)[0] * total


#: The central-difference points ``(i, j)`` of :func:`_individual_moments` (steps ``i·h0``, ``j·h2``).
_STEPS = np.array([(0, 0), (1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1)], dtype=np.float64)


def _individual_moments(fn: np.ndarray, fp: np.ndarray, n: np.ndarray, seg: np.ndarray, n_seg: int, a: float
                        ) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Bias and SD of GE(α) of all individuals, per ``by`` value.

    The shares ``(π_0, π_2) = (FN, FP)/N`` have covariance ``Σ`` (module notes); gradient and
    Hessian are central differences (step 1e-4; none along a share that cannot move, which keeps
    ``φ(0) = ∞`` of α ≤ 0 out when nobody has benefit 0); ``bias = ½ tr(HΣ)``,
    ``sd² = gᵀΣg + ½ tr((HΣ)²)``.
    """
    return _individual_moments_of(fn, fp, n, seg, n_seg, (a,))[a]


def _individual_moments_of(fn: np.ndarray, fp: np.ndarray, n: np.ndarray, seg: np.ndarray, n_seg: int,
                           alphas: Sequence[float]) -> dict[float, tuple[np.ndarray, np.ndarray]]:  # fmt: skip
    """:func:`_individual_moments` of several α at once (the shares, their covariance and steps computed once)."""

    def per(values: np.ndarray) -> np.ndarray:
        return np.bincount(seg, weights=values, minlength=n_seg).astype(np.float64)

    fn, fp, n = fn.astype(np.float64), fp.astype(np.float64), n.astype(np.float64)
    big_n = per(n)
    with np.errstate(divide="ignore", invalid="ignore"):  # a by value without counted rows: NaN, no limits
        s00 = per(fn - fn * fn / n) / big_n**2
        s22 = per(fp - fp * fp / n) / big_n**2
        s02 = per(-fn * fp / n) / big_n**2
        p0, p2 = per(fn) / big_n, per(fp) / big_n
    h0, h2 = np.where(s00 > 0, 1e-4, 0.0), np.where(s22 > 0, 1e-4, 0.0)
    one0, one2 = np.where(h0 > 0, h0, 1.0), np.where(h2 > 0, h2, 1.0)  # divisors where the step is 0
    # the nine evaluation points (steps i·h0, j·h2) of every by value in one call
    i, j = _STEPS[:, :1], _STEPS[:, 1:]
    at0, at2 = p0 + i * h0, p2 + j * h2
    out = {}
    for a in alphas:
        f0, fa, fb, fc, fd, f11, f1m, fm1, fmm = _individual_ge(at0, at2, a)
        with np.errstate(invalid="ignore", over="ignore"):
            g0, g2 = (fa - fb) / (2 * one0), (fc - fd) / (2 * one2)
            h00 = (fa - 2 * f0 + fb) / one0**2
            h22 = (fc - 2 * f0 + fd) / one2**2
            h02 = (f11 - f1m - fm1 + fmm) / (4 * one0 * one2)
            bias = 0.5 * (h00 * s00 + 2 * h02 * s02 + h22 * s22)
            m00, m01 = h00 * s00 + h02 * s02, h00 * s02 + h02 * s22  # HΣ (2 × 2)
            m10, m11 = h02 * s00 + h22 * s02, h02 * s02 + h22 * s22
            var = g0 * g0 * s00 + 2 * g0 * g2 * s02 + g2 * g2 * s22 + 0.5 * (m00 * m00 + 2 * m01 * m10 + m11 * m11)
            out[a] = (bias, np.sqrt(np.maximum(var, 0.0)))
    return out


def _bc_limits(
    est: np.ndarray, bias: np.ndarray, sd: np.ndarray, z: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``θ̂ − bias ± z·sd`` clipped at 0; defined where all three are finite."""
    ok = np.isfinite(est) & np.isfinite(bias) & np.isfinite(sd)
    with np.errstate(invalid="ignore", over="ignore"):
        centre = est - bias
        lo, hi = np.maximum(centre - z * sd, 0.0), np.maximum(centre + z * sd, 0.0)
    return np.where(ok, lo, np.nan), np.where(ok, hi, np.nan), ok


def delta_limits(cells: CellBlocks, estimates: np.ndarray, ci: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:data:`Limits` by the second-order delta moments of the cell bootstrap (module notes).

    Parameters
    ----------
    cells, estimates, ci
        As :data:`Limits` describes.

    Returns
    -------
    tuple of np.ndarray
        ``lo``, ``hi`` (Float64, ≥ 0, NaN where undefined) and ``defined`` (bool): an estimate that
        is undefined (null), or a mean benefit of 0, gives no limits. CV's limits are ``√(2·l)``
        and ``√(2·u)`` of GE(2)'s.

    Examples
    --------
    >>> counts = np.array([[30, 10, 50, 10], [10, 20, 60, 10]])
    >>> g = Grouping(frozenset({"g"}), np.array([0, 1]), np.array([0, 1]), np.array([100.0, 100.0]),
    ...              np.array([100.0, 110.0]))
    >>> cb = CellBlocks(counts, counts.sum(axis=1), np.zeros(2, np.int64), np.zeros(1, np.int64), [()], [g, None], 2.0)
    >>> lo, hi, ok = delta_limits(cb, np.array([0.005, 0.5, 0.1, 0.2, 0.1, 0.63]), 0.95)
    >>> bool(ok.all()), bool((lo <= hi).all())
    (True, True)
    """
    from scipy import special

    z = float(special.ndtri(0.5 + ci / 2.0))
    counts, n, seg = cells.counts, cells.n, cells.seg
    n_seg = cells.starts.size
    fn, fp = counts[:, 3], counts[:, 1]
    var = benefit_variance(counts)
    est = estimates.reshape(len(cells.blocks), 3, n_seg)
    out = np.full((3, len(cells.blocks), 3, n_seg), np.nan)  # (lo, hi, ok) × block × metric × by value
    # every between-group block in one call: its groups' segment is (block, by value)
    between = [(i, b) for i, b in enumerate(cells.blocks) if b is not None]
    if between:
        nn = np.concatenate([b.n for _, b in between])
        x = np.concatenate([b.x for _, b in between])
        vg = np.concatenate([np.bincount(b.codes, weights=var, minlength=b.first.size) for _, b in between])
        gseg = np.concatenate([seg[b.first] + j * n_seg for j, (_, b) in enumerate(between)])
        blk_est = np.concatenate([est[i] for i, _ in between], axis=1)  # (metric, block × by value)
        lims = between_limits(nn, x, vg, gseg, len(between) * n_seg, blk_est, cells.alpha, z)
        for j, (i, _) in enumerate(between):
            out[:, i] = np.stack(lims)[:, :, j * n_seg : (j + 1) * n_seg]
    for i, b in enumerate(cells.blocks):
        if b is None:
            out[:, i] = np.stack(individual_limits(fn, fp, n, seg, n_seg, est[i], cells.alpha, z))
    return out[0].reshape(-1), out[1].reshape(-1), out[2].reshape(-1).astype(bool)


def benefit_variance(counts: np.ndarray) -> np.ndarray:
    """Each cell's variance of its benefit sum under the cell bootstrap, ``Σb² − (Σb)²/n`` (benefits 0 for
    FN, 1 for TP and TN, 2 for FP; ``counts`` ``(cells, 4)`` as ``tp_n, fp_n, tn_n, fn_n``; 0 for an empty cell).

    Examples
    --------
    >>> benefit_variance(np.array([[1, 1, 0, 1], [0, 0, 0, 0]])).tolist()
    [2.0, 0.0]
    """
    n = counts.sum(axis=1).astype(np.float64)
    fn, fp = counts[:, 3].astype(np.float64), counts[:, 1].astype(np.float64)
    x, q = n - fn + fp, n - fn + 3.0 * fp  # Σb and Σb² per cell
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(n > 0, np.maximum(q - x * x / n, 0.0), 0.0)


def between_limits(nn: np.ndarray, x: np.ndarray, var: np.ndarray, gseg: np.ndarray, n_seg: int, est: np.ndarray,
                   alpha: float, z: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """Bias-corrected normal limits of the between-group GE(α), Theil and CV of every segment at once.

    ``nn``, ``x``, ``var``: each group's rows, benefit sum and benefit-sum variance (groups with rows
    only); ``gseg`` its segment (``0..n_seg−1``: a ``by`` value of one attribute set); ``est``
    ``(3, n_seg)``: the estimates (GE(α), Theil, CV; NaN undefined). Returns ``lo``, ``hi``, ``ok``,
    each ``(3, n_seg)``; CV's limits are ``√(2·l)``, ``√(2·u)`` of GE(2)'s.
    """
    moments = _between_moments_of(nn, x, var, gseg, n_seg, sorted({alpha, 1.0, 2.0}))
    return _family_limits(est, moments, alpha, z)


def individual_limits(fn: np.ndarray, fp: np.ndarray, n: np.ndarray, seg: np.ndarray, n_seg: int, est: np.ndarray,
                      alpha: float, z: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """:func:`between_limits` for the indices of all individuals, from each cell's (with rows) ``FN``,
    ``FP`` and row count and its segment (a ``by`` value).
    """
    moments = _individual_moments_of(fn, fp, n, seg, n_seg, sorted({alpha, 1.0, 2.0}))
    return _family_limits(est, moments, alpha, z)


def _family_limits(est: np.ndarray, moments: dict[float, tuple[np.ndarray, np.ndarray]], alpha: float, z: float
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    with np.errstate(invalid="ignore", over="ignore"):
        ge2 = np.where(np.isfinite(est[2]), est[2] ** 2 / 2.0, np.nan)
    parts = [_bc_limits(est[0], *moments[alpha], z), _bc_limits(est[1], *moments[1.0], z)]
    lo2, hi2, ok2 = _bc_limits(ge2, *moments[2.0], z)
    parts.append((np.sqrt(2.0 * lo2), np.sqrt(2.0 * hi2), ok2))
    return np.stack([q[0] for q in parts]), np.stack([q[1] for q in parts]), np.stack([q[2] for q in parts])
