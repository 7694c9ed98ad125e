"""The entropy-index cell bootstrap behind :func:`polfair.core.intervals.entropy_bootstrap`, vectorised.

One replicate table for all ``by`` values and replicates, held as numpy arrays (replicate × cell)
rather than a stacked Polars frame: each ``by`` value draws its cells' counts with its own
generator (:func:`polfair.core.intervals.common.seeded_generator`, so its intervals do not depend on the other
``by`` values); the attribute-set roll-ups are integer sums (each set from the smallest finer
grouping already summed); the replicates' generalized entropy indices are per-group sums in the
deviation form of :func:`polfair.core.entropy.ge_agg` (``Σ cnt·((b/μ)^α − 1)``, exactly 0 for one
group); the intervals are :func:`bias_corrected_normal_intervals` over all rows at once. The
estimates (replicate −1) still go through :mod:`polfair.core.entropy`, the report's definition.

Resampling (:func:`draw_cells`): per cell, ``(FN, FP, TP + TN)* ~ Multinomial(n_c; observed
shares)``, the law of the stratified row bootstrap for everything the indices read (they use
``TP + TN``, never ``TP`` and ``TN`` apart). ``FN* ~ Bin(n, p_FN)`` and
``FP* | FN* ~ Bin(n − FN*, p_FP / (1 − p_FN))``, the second as ``Y + Z`` with independent
``Y ~ Bin(n − max FN*, ·)`` (max over the cell's replicates) and ``Z ~ Bin(max FN* − FN*, ·)``.
``FN*`` and ``Y`` have the same distribution in every replicate: their ``n_boot`` draws are a
histogram, ``Multinomial(n_boot; pmf on the ±(10 sd + 10) window)``, in a random order (about one
binomial per window value instead of one per draw); ``Z`` is drawn by ``Generator.binomial``
on the unshuffled ``FN*`` (runs of equal parameters reuse numpy's set-up). Cells whose window
exceeds 255 values (sd > 11.7, thousands of rows) draw ``FN*`` and ``FP*`` by
``Generator.binomial``. Not the stream of the former ``Generator.multinomial`` draws (3-4x
slower); the same law.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import polars as pl

__all__ = ["Sampler", "bias_corrected_normal_intervals", "bootstrap_limits", "draw_cells", "entropy_bootstrap"]

#: ``sampler(rng, counts, n_boot) -> (fn, fp)``: ``counts`` is ``(C, 4)`` int64 in the order
#: ``tp_n, fp_n, tn_n, fn_n`` (one ``by`` value's cells, sorted); ``fn`` and ``fp`` are the drawn
#: false negatives and false positives, ``(n_boot, C)`` int64.
Sampler = Callable[[np.random.Generator, np.ndarray, int], tuple[np.ndarray, np.ndarray]]

#: Binomials drawn as histograms have a window of at most ``2 * _HALF + 1`` values.
_HALF = 127


# ----------------------------------------------------------------------------------------------
# resampling


def _window(n: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mode and the window ``[lo, hi]`` (mode ± (10 sd + 10), within ``[0, n]``) of ``Bin(n, p)``."""
    sd = np.sqrt(n * p * (1.0 - p))
    half = np.ceil(10.0 * sd).astype(np.int64) + 10
    mode = np.clip(np.floor((n + 1) * p).astype(np.int64), 0, n)
    return mode, np.maximum(mode - half, 0), np.minimum(mode + half, n)


def _fits(n: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Whether ``Bin(n, p)`` (and every ``Bin(m, p)`` with ``m ≤ n``) has a window of at most 255 values."""
    return np.ceil(10.0 * np.sqrt(n * p * (1.0 - p))) + 10 <= _HALF


def _histograms(rng: np.random.Generator, n: np.ndarray, p: np.ndarray, n_boot: int) -> np.ndarray:
    """``n_boot`` iid ``Bin(n_t, p_t)`` draws per row ``t``, *not yet shuffled*: ``(T, n_boot)`` int64.

    The ``n_boot`` draws of one distribution are its histogram, ``Multinomial(n_boot; pmf)``, in a
    uniformly random order: the caller shuffles each row (``Generator.permuted``). About one cheap
    binomial per value of the window instead of one inversion per draw. The pmf on the window
    comes from ratio recurrences outward from the mode (no underflow), values below 1e-18 of the
    mode's dropped, normalised; the mode is the multinomial's last category (numpy gives the last
    category the remainder). Equal draws are adjacent in a row.
    """
    t_count = n.size
    mode, lo, hi = _window(n, p)
    width = int((hi - lo).max()) + 1
    col = np.arange(width)
    k = lo[:, None] + col
    nk, mk = n[:, None], mode[:, None]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        odds = (p / (1.0 - p))[:, None]  # 0 at p = 0, inf at p = 1 (then only masked branches see it)
        up = np.where(k > mk, np.where(k > hi[:, None], 0.0, (nk - k + 1) / k * odds), 1.0)
        down = np.where(k < mk, (k + 1) / (nk - k) / odds, 1.0)
    pmf = np.cumprod(up, axis=1) * np.cumprod(down[:, ::-1], axis=1)[:, ::-1]  # 1 at the mode
    pmf[pmf < 1e-18] = 0.0  # below what a double's uniform resolves; p = 0 costs numpy nothing
    pmf = pmf / pmf.sum(axis=1, keepdims=True)
    at = mode - lo
    order = np.where(col < at[:, None], col, col + 1)
    order[:, -1] = at  # columns: the window without the mode, then the mode
    rows = np.arange(t_count)[:, None]
    hist = rng.multinomial(n_boot, pmf[rows, order])
    return np.repeat(k[rows, order].ravel(), hist.ravel()).reshape(t_count, n_boot)


def draw_cells(rng: np.random.Generator, counts: np.ndarray, n_boot: int) -> tuple[np.ndarray, np.ndarray]:
    """One ``by`` value's bootstrap draws: ``(FN*, FP*)`` per replicate and cell (see the module notes).

    Parameters
    ----------
    rng
        The ``by`` value's generator.
    counts
        ``(C, 4)`` int64 counts ``tp_n, fp_n, tn_n, fn_n`` of its cells (each with ``n > 0``).
    n_boot
        Replicates.

    Returns
    -------
    tuple of np.ndarray
        ``fn``, ``fp``: ``(n_boot, C)`` int64. ``TP* + TN* = n − FN* − FP*``.

    Examples
    --------
    >>> fn, fp = draw_cells(np.random.default_rng(0), np.array([[5, 3, 10, 2]]), 4)
    >>> fn.shape, bool(((fn + fp) <= 20).all())
    ((4, 1), True)
    """
    counts = np.asarray(counts, dtype=np.int64)
    n = counts.sum(axis=1)
    fn0, fp0 = counts[:, 3], counts[:, 1]
    rest = n - fn0
    p = fn0 / n
    r = np.divide(fp0, rest, out=np.zeros(n.size), where=rest > 0)
    fn = np.empty((n.size, n_boot), dtype=np.int64)
    fp = np.empty((n.size, n_boot), dtype=np.int64)
    small = _fits(n, p) & _fits(n, r)
    tab, big = np.flatnonzero(small), np.flatnonzero(~small)
    if tab.size:
        nt, rt = n[tab], r[tab][:, None]
        x = _histograms(rng, nt, p[tab], n_boot)  # runs of equal values: numpy's binomial set-up is reused
        top = x.max(axis=1)
        z = rng.binomial(top[:, None] - x, rt)  # 0 <= z <= top - x <= 254: packed with x, shuffled together
        xz = (x << 8) | z
        rng.permuted(xz, axis=1, out=xz)
        y = _histograms(rng, nt - top, r[tab], n_boot)
        rng.permuted(y, axis=1, out=y)
        y += xz & 255
        xz >>= 8
        if tab.size == n.size:
            fn, fp = xz, y
        else:
            fn[tab], fp[tab] = xz, y
    if big.size:
        x = rng.binomial(n[big], p[big], size=(n_boot, big.size)).T
        fn[big] = x
        fp[big] = rng.binomial(n[big][:, None] - x, r[big][:, None])
    return fn.T, fp.T


# ----------------------------------------------------------------------------------------------
# intervals


def bias_corrected_normal_intervals(
    estimates: Any, replicates: Any, ci: float, quantile: Callable[[float], float], *, lower: float | None = 0.0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`polfair.core.intervals.bias_corrected_normal_interval` for many estimates at once.

    Parameters
    ----------
    estimates
        ``(m,)`` estimates (NaN/inf: undefined).
    replicates
        ``(m, B)`` replicates; non-finite ones are skipped.
    ci, lower
        As for the scalar function.
    quantile
        :func:`polfair.core.intervals.z_value` (called only when some row is defined, as the
        scalar function calls it).

    Returns
    -------
    tuple of np.ndarray
        ``lo``, ``hi`` (Float64, ``(m,)``) and ``defined`` (bool): where ``defined`` is False the
        scalar function returns ``(None, None)`` (and ``lo``/``hi`` are NaN). Equal, bit for bit,
        to the scalar function: the mean and sd of each row's finite replicates are numpy's
        reductions over exactly those values, in their order.

    Examples
    --------
    >>> from polfair.core.intervals import z_value
    >>> lo, hi, ok = bias_corrected_normal_intervals([1.0], [[1.1, 1.3, 1.2]], 0.95, z_value)
    >>> [round(float(lo[0]), 4), round(float(hi[0]), 4)], bool(ok[0])
    ([0.604, 0.996], True)
    """
    est = np.asarray(estimates, dtype=np.float64).reshape(-1)
    reps = np.asarray(replicates, dtype=np.float64)
    if reps.ndim != 2 or reps.shape[0] != est.size:
        msg = f"replicates must have shape (len(estimates), B) = ({est.size}, B), got {reps.shape}"
        raise ValueError(msg)
    rows, width = reps.shape
    finite = np.isfinite(reps)
    good = finite.sum(axis=1)
    defined = np.isfinite(est) & (good >= 2) & ~((width - good) > (1 - ci) / 2 * width)
    mean = np.full(rows, np.nan)
    sd = np.full(rows, np.nan)
    with np.errstate(over="ignore", invalid="ignore"):  # huge replicates: inf / NaN limits, as before
        full = defined & (good == width)
        if full.any():
            block = reps[full]
            mean[full] = block.mean(axis=1)
            sd[full] = block.std(axis=1, ddof=1)
        part = np.flatnonzero(defined & (good < width))
        if part.size:
            # move each row's finite values to the front (in order) and reduce rows of equal count
            order = np.argsort(~finite[part], axis=1, kind="stable")
            packed = np.take_along_axis(reps[part], order, axis=1)
            for count in np.unique(good[part]):
                sel = good[part] == count
                block = np.ascontiguousarray(packed[sel, :count])
                mean[part[sel]] = block.mean(axis=1)
                sd[part[sel]] = block.std(axis=1, ddof=1)
    if not defined.any():
        return np.full(rows, np.nan), np.full(rows, np.nan), defined
    z = quantile(ci)
    with np.errstate(over="ignore", invalid="ignore"):
        centre = 2.0 * est - mean
        lo, hi = centre - z * sd, centre + z * sd
    if lower is not None:
        lo = np.where(lo > lower, lo, lower)  # max(lower, lo) as Python's max: lower unless lo > lower
        hi = np.where(hi > lower, hi, lower)
    return np.where(defined, lo, np.nan), np.where(defined, hi, np.nan), defined


# ----------------------------------------------------------------------------------------------
# generalized entropy of many benefit vectors


def _ge_terms(ratio: np.ndarray, cnt: np.ndarray, a: float) -> np.ndarray:
    """Per-group terms of GE(α)'s sum in the deviation form of :func:`polfair.core.entropy.ge_agg`.

    ``ratio = b / μ``: ``cnt·(ratio^α − 1)``; α = 1: ``cnt·ratio·ln ratio`` (0 at b = 0); α = 0:
    ``cnt·ln ratio``. A group at the mean adds exactly 0 (one group: GE = 0, not rounding noise).
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if a == 1.0:
            out = np.log(ratio, out=np.zeros(ratio.shape), where=ratio > 0)
            out *= ratio
        elif a == 0.0:
            out = np.log(ratio)
        else:
            out = ratio * ratio if a == 2.0 else np.power(ratio, a)
            out -= 1.0
        out *= cnt
        return out


def _ge_finish(total: np.ndarray, s0: np.ndarray, mu: np.ndarray, a: float) -> np.ndarray:
    """GE(α) from the sum of :func:`_ge_terms`, ``S0 = Σcnt`` and ``μ`` (aif360's GE(0) keeps its ``1/μ``)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if a == 1.0:
            return total / s0
        if a == 0.0:
            return -total / (mu * s0)
        return total / (s0 * a * (a - 1.0))


def _family_values(ge: dict[float, np.ndarray], alpha: float) -> list[np.ndarray]:
    """The three reported values (GE(α), Theil, CV) from GE by α, clamped as the estimates are."""
    with np.errstate(invalid="ignore"):
        clamp = {a: np.maximum(v, 0.0) for a, v in ge.items()}  # NaN (null) stays NaN; -inf -> 0
        return [clamp[float(alpha)], clamp[1.0], np.sqrt(2.0 * clamp[2.0])]


def _rollup(numg: np.ndarray, cntg: np.ndarray, parent: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sums of ``(B, G)`` group sums ``numg`` (and ``cntg``) over coarser groups ``parent`` (``0..G'−1``)."""
    if np.array_equal(parent, np.arange(parent.size)):
        return numg, cntg
    order = np.argsort(parent, kind="stable")
    sorted_parent = parent[order]
    starts = np.flatnonzero(np.r_[True, sorted_parent[1:] != sorted_parent[:-1]])
    return np.add.reduceat(numg[:, order], starts, axis=1), np.add.reduceat(cntg[order], starts)


def _group_replicates(
    numg: np.ndarray, cntg: np.ndarray, gseg: np.ndarray, s0: np.ndarray, mu: np.ndarray, alphas: list[float]
) -> dict[float, np.ndarray]:
    """Between-group GE(α) of every (replicate, by value): ``(B, D)`` per α.

    ``numg`` is ``(B, G)`` int64 ``TP + TN + 2 FP`` per group, ``cntg`` the groups' sizes (a by
    value's groups consecutive); ``gseg`` each group's by value; ``s0``, ``mu`` the by values'
    (replicates') ``Σn`` and mean benefit (the same for every grouping).
    """
    cnt = cntg.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = numg / cnt  # b, as group_benefit: (TP + TN + 2 FP) / n in Float64
        ratio /= mu[:, gseg]
    gstarts = np.flatnonzero(np.r_[True, gseg[1:] != gseg[:-1]])
    return {a: _ge_finish(np.add.reduceat(_ge_terms(ratio, cnt, a), gstarts, axis=1), s0, mu, a) for a in alphas}


def _individual_replicates(
    fn_tot: np.ndarray, fp_tot: np.ndarray, s0: np.ndarray, mu: np.ndarray, alphas: list[float]
) -> dict[float, np.ndarray]:
    """GE(α) of all individuals (benefits 0, 1, 2 with counts FN, TP + TN, FP) per (replicate, by value)."""
    parts = [(0.0, fn_tot), (1.0, s0 - fn_tot - fp_tot), (2.0, fp_tot)]
    out = {}
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = [bv / mu for bv, _ in parts]
    for a in alphas:
        total = np.zeros(fn_tot.shape)
        for ratio, (_, c) in zip(ratios, parts):  # benefits nobody has are skipped (0 · log 0)
            c = c.astype(np.float64)
            total = total + np.where(c > 0, _ge_terms(ratio, c, a), 0.0)
        out[a] = _ge_finish(total, s0, mu, a)
    return out


# ----------------------------------------------------------------------------------------------
# the bootstrap


def entropy_bootstrap(
    cells: pl.DataFrame | pl.LazyFrame,
    *,
    n_boot: int = 200,
    seed: int = 0,
    quantile: Callable[[float], float],
    generator: Callable[[int, Any], np.random.Generator],
    sampler: Sampler | None = None,
    **rows: Any,  # the fields of entropy.intervals.IndexRows (protected, by, sets, alpha, ci)
) -> pl.DataFrame:
    """:func:`polfair.core.intervals.entropy_bootstrap` (see there), for a valid ``ci`` and ``n_boot``.

    ``quantile`` is :func:`polfair.core.intervals.z_value`, ``generator(seed, key)`` the seeded
    generator of a ``by`` value (``intervals.common.seeded_generator``; passed in: this module imports nothing
    from ``intervals``, which imports it), ``sampler`` the draws (default :func:`draw_cells`). The
    rows and estimates are :func:`polfair.core.entropy.intervals.entropy_intervals`'s; this module adds
    the limits (:func:`bootstrap_limits`).

    Examples
    --------
    >>> from polfair.core.intervals import z_value
    >>> from polfair.core.intervals.common import seeded_generator
    >>> cells = pl.DataFrame({"g": ["a", "b"], "tp_n": [30, 10], "fp_n": [10, 20], "tn_n": [50, 60], "fn_n": [10, 10]})
    >>> entropy_bootstrap(cells, protected=["g"], n_boot=50, quantile=z_value, generator=seeded_generator).height
    9
    """
    from polfair.core.entropy.intervals import IndexRows, entropy_intervals

    limits = bootstrap_limits(n_boot=n_boot, seed=seed, quantile=quantile, generator=generator, sampler=sampler)
    out = entropy_intervals(cells, IndexRows(**rows), limits=limits, method="bootstrap_bc")
    return out.drop("ci_method")


def bootstrap_limits(
    *,
    n_boot: int,
    seed: int,
    quantile: Callable[[float], float],
    generator: Callable[[int, Any], np.random.Generator],
    sampler: Sampler | None = None,
) -> Callable[[Any, np.ndarray, float], tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The cell bootstrap as a :data:`polfair.core.entropy.intervals.Limits` method.

    Parameters
    ----------
    n_boot, seed, quantile, generator, sampler
        As for :func:`entropy_bootstrap`.

    Returns
    -------
    callable
        ``limits(cells, estimates, ci) -> (lo, hi, defined)``: the draws of every ``by`` value
        (its own generator) in one replicate × cell array, the replicates' indices per block
        (group sums rolled up from the finest grouping already summed, finest first), and
        :func:`bias_corrected_normal_intervals` over all rows.

    Examples
    --------
    >>> from polfair.core.intervals import z_value
    >>> from polfair.core.intervals.common import seeded_generator
    >>> callable(bootstrap_limits(n_boot=10, seed=0, quantile=z_value, generator=seeded_generator))
    True
    """
    draw = draw_cells if sampler is None else sampler

    def limits(cells: Any, estimates: np.ndarray, ci: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        counts, n, seg, starts = cells.counts, cells.n, cells.seg, cells.starts
        n_cells, alpha = n.size, cells.alpha
        alphas = sorted({float(alpha), 1.0, 2.0})
        bounds = np.r_[starts, n_cells]
        fn = np.empty((n_boot, n_cells), dtype=np.int64)
        fp = np.empty((n_boot, n_cells), dtype=np.int64)
        for d, values in enumerate(cells.by_rows):
            a, b = bounds[d], bounds[d + 1]
            rng = generator(seed, tuple(str(v) for v in values))
            fn[:, a:b], fp[:, a:b] = draw(rng, counts[a:b], n_boot)
        num = n[None, :] - fn + fp  # TP + TN + 2 FP
        s0 = np.add.reduceat(n, starts).astype(np.float64)[None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            mu = np.add.reduceat(num, starts, axis=1) / s0  # mean benefit per (replicate, by value)

        # replicate values per distinct grouping; group sums rolled up from the smallest finer
        # grouping already summed (integer sums: the same as from the cells), finest first
        groupings = [blk for blk in cells.blocks if blk is not None]
        finest = max(groupings, key=lambda g: len(g.attrs))  # the cells themselves
        summed = [(finest.attrs, finest.first, num, n)]
        by_grouping: dict[bytes, list[np.ndarray]] = {}

        def replicate_values(g: Any) -> list[np.ndarray]:  # g: a polfair.core.entropy.intervals.Grouping
            key = g.codes.tobytes()
            if key not in by_grouping:
                _, f_first, f_num, f_cnt = min((f for f in summed if f[0] >= g.attrs), key=lambda f: f[2].shape[1])
                numg, cntg = _rollup(f_num, f_cnt, g.codes[f_first])
                summed.append((g.attrs, g.first, numg, cntg))
                by_grouping[key] = _family_values(_group_replicates(numg, cntg, seg[g.first], s0, mu, alphas), alpha)
            return by_grouping[key]

        for g in sorted(groupings, key=lambda g: len(g.attrs), reverse=True):
            replicate_values(g)
        reps: list[np.ndarray] = []
        for blk in cells.blocks:
            if blk is None:
                fn_tot = np.add.reduceat(fn, starts, axis=1)
                fp_tot = np.add.reduceat(fp, starts, axis=1)
                reps.extend(_family_values(_individual_replicates(fn_tot, fp_tot, s0, mu, alphas), alpha))
            else:
                reps.extend(replicate_values(blk))
        matrix = np.concatenate([r.T for r in reps], axis=0)  # (rows, B), rows in the order of the estimates
        return bias_corrected_normal_intervals(estimates, matrix, ci, quantile)

    return limits
