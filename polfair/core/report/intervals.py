"""The report's interval and test columns (issue 11), computed with numpy on the report's wide tables.

Internal to :mod:`polfair.core.report.build`. Each function takes a row kind's wide table (one row per
group, attribute row or ``by`` value; one column per metric), reads the rates, sizes and reference
values it needs straight out of it as numpy arrays (:class:`_Columns`: columns by name, effective
sizes from the count formulas on arrays; no Polars plan, whose planning costs more than the
arithmetic on a report's few hundred rows), and evaluates every method on whole arrays (a
(row × rate) matrix at a time) with the numpy kernels of :mod:`polfair.core.intervals` (its module
docstring maps each row kind to its method): no Python loop over groups, pairs or families. The
result is an :class:`IntervalColumns`: per column family (``value_lo``,
``value_hi``, ``difference_lo``, ..., ``n_eff``, ``ci_method``, ``test``) a metric -> array
mapping aligned with the wide table (floats: NaN is null; methods and tests: codes into
``CI_METHODS`` / ``TESTS``, −1 null). Null rules (``docs/statistics.md``): an interval is null where
its point value is null, on counts and ``n_missing``, and (difference, ratio and test) on the
reference group's own row. ``p_value_adjusted`` adjusts each p-value column within the ``by``
values (:func:`adjust_p_values`): a family is (by value, row kind, metric).

An underscore module: internal, not public API.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from polfair.core import intervals as iv
from polfair.core.intervals import differences as ivd
from polfair.core.intervals import homogeneity as ivh
from polfair.core.intervals import projections as ivp
from polfair.core.intervals import proportions as ivr
from polfair.core.intervals import significance as ivs
from polfair.core.intervals import spreads as ivsp
from polfair.core.intervals.common import CI_METHODS, TESTS, Segments, distinct_rows
from polfair.core.metrics import METRICS, Counts, Disparity

__all__ = [
    "CI_CATS", "CI_FLOATS", "CiOptions", "GroupContext", "IntervalColumns", "best_statistics", "adjust_p_values",
    "adjust_p_values_at", "attribute_intervals",
    "entropy_columns", "group_intervals", "population_intervals", "variance_columns",
]  # fmt: skip

#: Float interval families, in report column order.
CI_FLOATS = ("value_lo", "value_hi", "difference_lo", "difference_hi", "ratio_lo", "ratio_hi",
             "p_value", "p_value_adjusted", "n_eff")  # fmt: skip
#: Categorical families.
CI_CATS = ("ci_method", "test")
#: The categories behind the codes of each categorical family.
CATEGORIES = {"ci_method": CI_METHODS, "test": TESTS}

_F64 = pl.Float64
_EDF = "smoothed_empirical_differential_fairness"


@dataclass(frozen=True)
class CiOptions:
    """The report's statistics options (validated)."""

    ci: float
    weighted: bool
    n_boot: int = 200
    seed: int = 0
    p_adjust: str | None = "bh"
    #: Input rows a group needs to be the "best" reference (:mod:`polfair.core.reference`).
    min_sample_size: int = 0


@dataclass
class IntervalColumns:
    """A row kind's interval columns: per family, metric -> array aligned with its wide table.

    Floats hold NaN for null; ``ci_method`` and ``test`` hold codes into ``CI_METHODS`` / ``TESTS``
    (int, −1 for null).
    """

    height: int
    columns: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)

    def put(self, fam: str, metric: str, values: np.ndarray) -> None:
        """Store the column ``metric`` of family ``fam``."""
        self.columns.setdefault(fam, {})[metric] = values

    def get(self, fam: str, metric: str) -> np.ndarray:
        """The column ``metric`` of family ``fam``."""
        return self.columns[fam][metric]

    def adjust(self, segments: Segments, method: str | None) -> None:
        """``p_value_adjusted`` of every ``p_value`` column, adjusted within ``segments`` (the by values)."""
        pvals = self.columns.get("p_value", {})
        if not pvals:
            return
        self.columns["p_value_adjusted"] = adjust_p_values(pvals, segments, method)


def _rates(names: Sequence[str]) -> list[str]:
    return [m for m in names if METRICS[m].is_rate]


def _generalized(m: str) -> bool:
    return m.startswith("generalized_")


def _code(table: tuple[str, ...], name: str) -> int:
    return table.index(name)


def _where(ok: np.ndarray, values: np.ndarray) -> np.ndarray:
    return np.where(ok, values, np.nan)


def _codes(ok: np.ndarray, code: np.ndarray | int) -> np.ndarray:
    return np.where(ok, code, -1).astype(np.int64)


def _tests(ok: np.ndarray, code: np.ndarray) -> np.ndarray:
    """Test codes from the kernels' float codes (NaN: untested) where ``ok``."""
    return np.where(ok & ~np.isnan(code), code, -1.0).astype(np.int64)


class _Probe:
    """Stands in for :class:`~polfair.core.metrics.Counts`: a formula of it returns the names it reads (a cache key)."""

    def __getattr__(self, name: str) -> str:
        return name


class _Columns:
    """A wide table's columns as numpy arrays, each converted once (no Polars plan: a select costs
    tens of microseconds per expression, more than the arithmetic on a few hundred rows).

    :meth:`f64`: Float64 (null -> NaN, as ``pl.col(c).cast(pl.Float64)`` then ``to_numpy``);
    :meth:`raw`: the column's own dtype (for count formulas, evaluated in it as Polars would, then
    cast); :meth:`matrix`: several Float64 columns as a ``(rows, k)`` matrix; :meth:`sizes`: the Kish
    effective size of each rate's denominator (``rate_inputs(m).n``, the report's ``<m>__neff``).
    """

    def __init__(self, frame: pl.DataFrame) -> None:
        self.frame = frame
        self._f64: dict[str, np.ndarray] = {}
        self._raw: dict[str, np.ndarray] = {}
        self._sizes: dict[tuple[str, Any], np.ndarray] = {}

    def raw(self, name: str) -> np.ndarray:
        if name not in self._raw:
            self._raw[name] = self.frame.get_column(name).to_numpy()
        return self._raw[name]

    def f64(self, name: str) -> np.ndarray:
        if name not in self._f64:
            s = self.frame.get_column(name)
            self._f64[name] = (s if s.dtype == _F64 else s.cast(_F64)).to_numpy()
        return self._f64[name]

    def matrix(self, names: Sequence[str]) -> np.ndarray:
        if not names:
            return np.zeros((self.frame.height, 0))
        sub = self.frame[list(names)]  # (not empty: frame[[]] selects rows)
        if any(dtype != _F64 for dtype in sub.dtypes):  # column by column (a frame's cast is a plan)
            sub = pl.DataFrame([c if c.dtype == _F64 else c.cast(_F64) for c in sub.get_columns()])
        return sub.to_numpy()

    def counts(self, prefix: str = "", suffix: str = "") -> Counts:
        """The count columns ``<prefix><c><suffix>`` as a :class:`~polfair.core.metrics.Counts` of arrays."""
        return Counts(lambda c: self.raw(f"{prefix}{c}{suffix}"))  # type: ignore[arg-type, return-value]

    def sizes(self, rates: Sequence[str], prefix: str = "") -> np.ndarray:
        """``(rows, rates)``: each rate's Kish size ``(Σw)²/Σw²`` of its denominator (NaN where ``Σw² ≤ 0``)."""
        out = np.empty((self.frame.height, len(rates)))
        for j, m in enumerate(rates):
            den = METRICS[m].denominator
            key = (prefix, den(_Probe()))  # type: ignore[misc, arg-type]
            if key not in self._sizes:
                w = np.asarray(den(self.counts(prefix)), dtype=np.float64)  # type: ignore[misc]
                w2 = np.asarray(den(self.counts(prefix, "_w2")), dtype=np.float64)  # type: ignore[misc]
                self._sizes[key] = ivr.kish_size(w, w2)
            out[:, j] = self._sizes[key]
        return out

    def own_reference(self, label: str, refnames: Sequence[str], windows: Segments, need: np.ndarray) -> np.ndarray:
        """``(rows, k)``: whether each row's ``label`` is the string in each ``refnames`` column, on the
        rows where ``need``; a reference name is one value per window (it comes from the reference
        table, one row per window), null matches nothing.

        Compared as global Categorical codes (one code per string in the process): the labels' codes
        against each window's reference codes, read once per window, as integers.
        """
        h, k = self.frame.height, len(refnames)
        out = np.zeros((h, k), dtype=bool)
        if not k or not need.any():
            return out
        _, first, inv = np.unique(windows.codes, return_index=True, return_inverse=True)
        at_first = self.frame.select(refnames)[first]  # each window's reference names, end to end: one Series
        stacked = pl.concat([_as_categorical(c) for c in at_first.get_columns()], rechunk=True)
        refs = _category_codes(stacked, -2).reshape(k, first.size).T
        labels = _category_codes(self.frame.get_column(label), -1)  # (null: -1, matching no reference's -2)
        np.equal(labels[:, None], refs[inv.reshape(-1)], out=out)
        out &= need[:, None]
        return out

    def equal_to(self, name: str, value: str) -> np.ndarray:
        """Whether a String column equals ``value``, row by row (null: False)."""
        s = self.frame.get_column(name)
        return ((s if s.dtype == pl.String else s.cast(pl.String)) == value).to_numpy() == True  # noqa: E712


def _as_categorical(values: pl.Series) -> pl.Series:
    """``values`` as a Categorical (its strings' global codes)."""
    return values if values.dtype == pl.Categorical else values.cast(pl.String).cast(pl.Categorical)


def _category_codes(values: pl.Series, null: int) -> np.ndarray:
    """The global Categorical code of each string of ``values`` (Int64; ``null`` where null)."""
    return _as_categorical(values).to_physical().cast(pl.Int64).fill_null(null).to_numpy()


# ----------------------------------------------------------------------------------------------
# adjusted p-values


def adjust_p_values(pvals: Mapping[str, np.ndarray], segments: Segments, method: str | None) -> dict[str, np.ndarray]:
    """Each p-value column adjusted within each segment (the family is (segment, column)).

    ``method``: ``"bh"`` (Benjamini–Hochberg: ``p_(i)·m/i``, reverse cumulative minimum), ``"by"``
    (BH times ``Σ_{j≤m} 1/j``), ``"holm"`` (``(m − i + 1)·p_(i)``, cumulative maximum), clipped at 1;
    ``None``: the p-values themselves. NaN p-values (untested rows) are skipped (``m`` counts the
    tested ones) and stay NaN: the arithmetic of :func:`~polfair.core.intervals.p_adjust`. Per column
    (a handful), every segment at once: the tested p-values sorted by (segment, p).
    """
    if method is None:
        return {m: np.asarray(v, dtype=np.float64).copy() for m, v in pvals.items()}
    given = {m: np.asarray(v, dtype=np.float64) for m, v in pvals.items()}
    # columns with the same p-values (a named disparity has its rate's test, equalized and average
    # odds share theirs) have the same adjusted ones: each distinct column adjusted once
    same: dict[bytes, str] = {}
    alias = {m: same.setdefault(v.tobytes(), m) for m, v in given.items()}
    # a column without a tested p-value (e.g. the generalized rates': no test) stays NaN: not sorted
    untested = {m for m, v in given.items() if alias[m] == m and np.isnan(v).all()}
    done = _adjust_distinct({m: v for m, v in given.items() if alias[m] == m and m not in untested}, segments, method)
    done.update({m: np.full(given[m].size, np.nan) for m in untested})
    return {m: done[alias[m]] if alias[m] == m else done[alias[m]].copy() for m in given}


def adjust_p_values_at(pvals: Mapping[str, np.ndarray], segments: Segments, method: str | None,
                       rows: np.ndarray) -> dict[str, np.ndarray]:  # fmt: skip
    """``adjust_p_values(pvals, segments, method)[m][rows]`` of each column, without adjusting the other rows.

    The adjusted p-values of some rows (the group rows shown of a limited report,
    :mod:`polfair.core.report.worst`) within families of every row. With one segment, each column's
    tested p-values are sorted (values only) and the adjusted values of the sorted positions computed
    by the kernel of :func:`adjust_p_values`' one-column path (``_adjusted_sorted``); a row's adjusted
    value is that of the last position of its value (a binary search). Every position of equal
    p-values has the same scanned value (BH, BY: the reverse minimum reaches ``p·m/i`` of the block's
    largest ``i``, its smallest; Holm: the forward maximum ``(m − i + 1)·p`` of its smallest ``i``, its
    largest), so these are the floats of :func:`adjust_p_values` at those rows, whatever the order of
    ties. Several segments: :func:`adjust_p_values`.
    """
    if method is None or segments.count != 1:
        return {m: v[rows] for m, v in adjust_p_values(pvals, segments, method).items()}
    out: dict[str, np.ndarray] = {}
    for name, col in pvals.items():  # (a handful of columns)
        v = np.asarray(col, dtype=np.float64)
        s = np.sort(v)  # NaN (untested) last
        k = int(np.count_nonzero(~np.isnan(s)))
        p = v[rows]
        got = np.full(rows.size, np.nan)
        ok = ~np.isnan(p)
        if k and ok.any():
            s = s[:k]
            adj = _adjusted_sorted(s, np.zeros(k, dtype=np.int64), method)
            got[ok] = adj[np.searchsorted(s, p[ok], side="right") - 1]
        out[name] = got
    return out


def _adjust_distinct(cols: dict[str, np.ndarray], segments: Segments, method: str) -> dict[str, np.ndarray]:
    k, h = len(cols), segments.codes.size
    width = int(segments.sizes.max()) if h else 0
    if h and all(v.size == h for v in cols.values()) and segments.count * width <= 4 * h + 1024:
        # segments of similar size: every column's segments sorted at once as rows of a padded
        # (column × segment, position) matrix (short rows: cache-local sorts, no global sort), in
        # blocks of columns that bound the padded matrix
        step = max(1, _PADDED // (segments.count * width))
        names = list(cols)
        out: dict[str, np.ndarray] = {}
        for a in range(0, k, step):
            block = names[a : a + step]
            out.update(zip(block, _adjust_padded(np.stack([cols[m] for m in block]), segments, width, method)))
        return out
    if 1 < k and k * h <= _STACKED and all(v.size == h for v in cols.values()):
        # small tables: every column in one call, the family (column, segment) as one segment code
        # (the same sorts and scans per family; one call instead of one per column)
        codes = (np.arange(k, dtype=np.int64)[:, None] * segments.count + segments.codes[None, :]).ravel()
        both = _adjust_column(np.concatenate(list(cols.values())), Segments(codes, k * segments.count), method)
        return {m: both[j * h : (j + 1) * h] for j, m in enumerate(cols)}
    return {m: _adjust_column(v, segments, method) for m, v in cols.items()}


#: Up to this many p-values (columns × rows), :func:`adjust_p_values` adjusts every column in one call.
_STACKED = 1 << 20
#: At most this many cells in one padded (column × segment, position) matrix of :func:`_adjust_padded`.
_PADDED = 1 << 22


def _adjust_padded(p: np.ndarray, segments: Segments, width: int, method: str) -> np.ndarray:
    """:func:`_adjust_column` of every row of ``p`` (columns × rows) at once, each segment a row of a
    padded matrix (untested p-values and the padding are NaN, which sorts last).

    The same products, quotients and scans as :func:`_adjust_column` on the same sorted values, so
    the same adjusted p-values (the order of ties does not change them). The NaN after a row's tested
    values stay NaN through the scans (BH/BY: a reverse ``fmin`` scan, which skips the NaN at the
    start of the reversed row; Holm: a forward maximum, NaN only after the tested values), so every
    cell is written back, untested ones as NaN, the padding into one spare slot.
    """
    k, h = p.shape
    count = segments.count
    order = segments.order if segments.order is not None else np.arange(h)
    codes = segments.codes[order]
    start = np.cumsum(segments.sizes) - segments.sizes
    slot = codes * width + (np.arange(h) - start[codes])  # each row's place in its segment's row
    src = np.full(count * width, h, dtype=np.int64)  # the padding: the spare slot h of each column
    src[slot] = order
    pad = np.full((k, count * width), np.nan)
    pad[:, slot] = p[:, order]
    pad = pad.reshape(k * count, width)
    idx = np.argsort(pad, axis=1)
    s = np.take_along_axis(pad, idx, axis=1)
    del pad
    m = np.count_nonzero(~np.isnan(s), axis=1).astype(np.float64)[:, None]  # each family's tested p-values
    i = np.arange(1, width + 1, dtype=np.float64)
    if method == "holm":
        adj = (m - i + 1.0) * s
        np.maximum.accumulate(adj, axis=1, out=adj)  # NaN only after the tested values
    else:
        adj = s * m
        adj /= i
        rev = adj[:, ::-1]
        np.fmin.accumulate(rev, axis=1, out=rev)  # (NaN, the untested values, stay NaN: they come first)
        if method == "by":
            harmonic = np.cumsum(1.0 / np.arange(1, width + 1, dtype=np.float64))
            adj *= harmonic[np.maximum(m.astype(np.int64), 1) - 1]
    np.minimum(adj, 1.0, out=adj)
    rows = src.reshape(count, width)[np.tile(np.arange(count), k)[:, None], idx]
    rows += np.repeat(np.arange(k, dtype=np.int64) * (h + 1), count)[:, None]
    out = np.empty((k, h + 1))
    out.reshape(-1)[rows] = adj
    return out[:, :h]


def _adjust_column(p: np.ndarray, segments: Segments, method: str) -> np.ndarray:
    out = np.full(p.size, np.nan)
    rows = np.flatnonzero(~np.isnan(p))
    if not rows.size:
        return out
    order = rows[np.argsort(p[rows])]  # the order of ties does not change their adjusted value
    if segments.count > 1:  # then (stable, integer radix sort) by segment
        order = order[np.argsort(segments.codes[order], kind="stable")]
    out[order] = _adjusted_sorted(p[order], segments.codes[order], method)
    return out


def _adjusted_sorted(s: np.ndarray, f: np.ndarray, method: str) -> np.ndarray:
    """The adjusted p-values of tested p-values ``s`` sorted by segment ``f``, then ascending within
    it (each segment a family): BH/BY's reverse minimum of ``p·m/i`` (BY times the harmonic sum of
    ``m``), Holm's forward maximum of ``(m − i + 1)·p``, at most 1.
    """
    n = s.size
    starts = np.flatnonzero(np.r_[True, f[1:] != f[:-1]])
    size = np.diff(np.r_[starts, n])
    m = np.repeat(size, size).astype(np.float64)
    i = (np.arange(n) - np.repeat(starts, size) + 1).astype(np.float64)
    if method == "holm":
        adj = _segment_scan((m - i + 1.0) * s, f, starts.size, "max")
    else:
        adj = _segment_scan((s * m / i)[::-1], f[::-1], starts.size, "min")[::-1]
        if method == "by":
            harmonic = np.cumsum(1.0 / np.arange(1, int(size.max()) + 1, dtype=np.float64))
            adj = adj * harmonic[m.astype(np.int64) - 1]
    return np.minimum(adj, 1.0)


def _segment_scan(x: np.ndarray, seg: np.ndarray, segments: int, how: str) -> np.ndarray:
    """Cumulative min / max of ``x`` restarting at each change of ``seg`` (``segments`` runs)."""
    op = np.minimum if how == "min" else np.maximum
    if segments == 1:
        return op.accumulate(x)
    starts = np.flatnonzero(np.r_[True, seg[1:] != seg[:-1]])
    size = np.diff(np.r_[starts, x.size])
    width = int(size.max())
    if segments * width <= 4 * x.size + 1024:  # runs of similar length: one padded (run × position) scan
        col = np.arange(x.size) - np.repeat(starts, size)
        row = np.repeat(np.arange(segments), size)
        pad = np.full((segments, width), np.inf if how == "min" else -np.inf)
        pad[row, col] = x
        return op.accumulate(pad, axis=1)[row, col]
    e = pl.col("x").cum_min() if how == "min" else pl.col("x").cum_max()
    return pl.DataFrame({"x": x, "s": seg}).select(e.over("s")).to_series().to_numpy()


# ----------------------------------------------------------------------------------------------
# group rows


def group_intervals(
    wide: pl.DataFrame,
    metric_names: Sequence[str],
    disparities: Sequence[Disparity],
    *,
    opts: CiOptions,
    modes: set[str],
    windows: Segments,
    by_rows: Segments,
    mode: str,
    priv: str,
    group_col: str,
    context: GroupContext | None = None,
    screen: bool = False,
    classes: bool = True,
) -> IntervalColumns:
    """The group rows' interval columns.

    Per rate, on the (group × rate) matrices: Wilson (``value_lo/hi``; ``n_eff`` the Kish size),
    Newcombe (``difference``), MOVER-R (``ratio``) and the N−1 χ² / Fisher test against the
    reference; with ``reference="overall"`` the comparison with the rest of the population; with
    ``"best"`` the projections against the data-chosen best group of each (by value, attribute set)
    and no test. Generalized rates get limits but no test (``ci_method = "bound"``). Named one-rate
    disparities take their rate's difference or ratio interval and test; two-part ones the MOVER sum
    (average odds, average predictive value) or the projections (max / mean of absolute
    differences) and the 2-df χ² test. A group that is its own reference (its set's mode is
    "privileged" and it is flagged ``priv``, or its label is the reference's) has null comparisons;
    so do the "best" and "overall" modes for two-part disparities. Differences are null where the
    point difference is, ratios where the reference rate is 0, disparity limits where the disparity
    is null. ``p_value_adjusted``: within (by value, metric) over the group rows.

    ``wide`` is the group table joined with the reference table (``<m>``, the sums,
    ``<m>__ref``, ``<m>__refn``, ``<m>__refname``, the named disparities, ``mode``, ``priv``,
    ``group_col``; ``__pop_<count>`` for ``reference="overall"``). ``windows``: each row's (by value,
    attribute set); ``by_rows``: each row's by value. ``context``: when the rows are a batch of the
    group rows (:func:`polfair.core.report.build.report_batches`), what needs all of them: the "best"
    reference's per-window statistics and the adjusted p-values of these rows.

    ``screen=True``: only what choosing the worst groups of a limited attribute set needs from every
    group row (:mod:`polfair.core.report.worst`): ``difference_lo`` / ``difference_hi`` of each rate
    with a direction of harm (its harm bound) and ``p_value`` of every column (the adjusted p-values
    of the rows shown are :func:`adjust_p_values_at` of them: a family is every group of the by
    value); each the same array as without ``screen`` (the same arithmetic on the same rows). The
    other families (Wilson limits, ratios, the disparities' limits, methods, tests, sizes) are left
    out: the rows shown get them from a second call on those rows. ``classes``: the screen may take
    the rates of counts once per class of rows with equal inputs (:func:`_screen_by_classes`; the
    same arrays).
    """
    if screen and classes:  # the many groups' small tables: each distinct one once
        out = _screen_by_classes(wide, metric_names, disparities, dict(opts=opts, modes=modes, windows=windows,
                                 by_rows=by_rows, mode=mode, priv=priv, group_col=group_col, context=context))  # fmt: skip
        if out is not None:
            return out
    h = wide.height
    out = IntervalColumns(h)
    rates = _rates(metric_names)
    if not rates:
        return out
    z = iv.z_value(opts.ci)
    r_n = len(rates)
    wc = _Columns(wide)
    both = wc.matrix([*rates, *(f"{m}__ref" for m in rates), *(f"{m}__refn" for m in rates)])
    p, pr, nr = both[:, :r_n], both[:, r_n : 2 * r_n], both[:, 2 * r_n :]
    n = wc.sizes(rates)
    is_mode = {name: wc.equal_to(mode, name)[:, None] for name in ("privileged", "overall", "best")}
    gen = np.array([_generalized(m) for m in rates])[None, :]
    w_lo, w_hi = ivr.wilson_limits(p, n, z)
    r_lo, r_hi = _repeated_rows(ivr.wilson_limits, pr, nr, z)  # the reference's: once per run of equal rows
    wilson = (w_lo, w_hi, r_lo, r_hi)  # both rates' limits, shared by Newcombe and MOVER-R
    nc_lo, nc_hi = ivd.newcombe_limits(p, n, pr, nr, z, wilson=wilson)
    d_lo, d_hi = nc_lo, nc_hi
    # (the screen needs no ratio limits: placeholders, never read)
    q_lo, q_hi = ivd.mover_ratio_limits(p, n, pr, nr, z, wilson=wilson) if not screen else (p, p)
    # the screen of generalized rates only reads no test (they have none; nor their two-part disparities)
    untested = screen and bool(gen.all()) and not any(len(x.rates) == 1 for x in disparities)
    if untested:
        t_p = t_code = np.full((h, r_n), np.nan)
        pooled = (t_p, t_p, np.zeros((h, r_n), dtype=bool))  # (never read)
    else:
        pooled = ivs.pooled_z(p, n, pr, nr)  # also the parts of the two-part disparities' 2-df test
        t_p, t_code = ivs.two_proportion_pvalues(p, n, pr, nr, weighted=opts.weighted, pooled=pooled)
    if "overall" in modes:  # the group is part of the population: compare it with the rest
        pc, nc, f = ivr.complement_limits(*_complement_inputs(wc, rates))
        o = is_mode["overall"]
        od = ivd.overall_difference_limits(p, n, pc, nc, f, z)
        oq = ivd.overall_ratio_limits(p, n, pc, nc, f, z) if not screen else (q_lo, q_hi)
        ot_p, ot_code = ivs.two_proportion_pvalues(p, n, pc, nc, weighted=opts.weighted) if not untested else (t_p, t_code)
        d_lo, d_hi, q_lo, q_hi = (np.where(o, new, old) for new, old in zip((*od, *oq), (d_lo, d_hi, q_lo, q_hi)))
        t_p, t_code = np.where(o, ot_p, t_p), np.where(o, ot_code, t_code)
    if "best" in modes:  # the best group is chosen from the data: projection, no test
        seg = Segments((windows.codes[:, None] * r_n + np.arange(r_n)[None, :]).ravel(), windows.count * r_n)
        hib = np.array([METRICS[m].higher_is_better in (True, None) for m in rates])[None, :]
        stats = context.best if context is not None and context.best is not None else {}
        ok = _eligible_cells(wide, r_n, opts.min_sample_size)
        up = [v.reshape(h, r_n) for v in ivp.best_reference_limits(p.ravel(), n.ravel(), seg, opts.ci, True,
                                                                     stats=stats.get(True), eligible=ok)]  # fmt: skip
        down = [v.reshape(h, r_n) for v in ivp.best_reference_limits(p.ravel(), n.ravel(), seg, opts.ci, False,
                                                                       stats=stats.get(False), eligible=ok)]  # fmt: skip
        b = is_mode["best"]
        d_lo, d_hi, q_lo, q_hi = (np.where(b, np.where(hib, u, w), old)
                                  for u, w, old in zip(up, down, (d_lo, d_hi, q_lo, q_hi)))  # fmt: skip
        t_p, t_code = np.where(b, np.nan, t_p), np.where(b, np.nan, t_code)
    own = wc.own_reference(group_col, [f"{m}__refname" for m in rates], windows, ~is_mode["privileged"][:, 0])
    flagged = (wide.get_column(priv).to_numpy() == True)[:, None]  # noqa: E712  (null -> False)
    mine = (is_mode["privileged"] & flagged) | (~is_mode["privileged"] & own)
    if screen:
        return _screen(out, rates, disparities, p, pr, d_lo, d_hi, t_p, pooled, mine, is_mode)
    d_lo, d_hi, q_lo, q_hi, t_p, t_code = (_where(~mine, v) for v in (d_lo, d_hi, q_lo, q_hi, t_p, t_code))
    score = _code(CI_METHODS, "score_ess" if opts.weighted else "score")
    method = np.where(gen, _code(CI_METHODS, "bound"), np.where(is_mode["best"], _code(CI_METHODS, "projection"), score))
    with np.errstate(invalid="ignore"):
        okd, okr = ~np.isnan(p - pr), (pr > 0) & ~np.isnan(p)
    method = np.broadcast_to(method, (h, r_n)).astype(np.int64)
    cols = {"value_lo": w_lo, "value_hi": w_hi, "difference_lo": _where(okd, d_lo), "difference_hi": _where(okd, d_hi),
            "ratio_lo": _where(okr, q_lo), "ratio_hi": _where(okr, q_hi), "p_value": _where(~gen, t_p),
            "test": _tests(np.broadcast_to(~gen, (h, r_n)), t_code), "n_eff": n, "ci_method": method}  # fmt: skip
    for fam, matrix in cols.items():
        for j, m in enumerate(rates):
            out.put(fam, m, matrix[:, j])
    t_all = _tests(np.ones((h, r_n), dtype=bool), t_code)
    # ---- named disparities of one rate: the rate's comparison, where the disparity is defined ----
    for x in disparities:
        if len(x.rates) != 1:
            continue
        j = rates.index(x.rates[0])
        defined = ~np.isnan(wc.f64(x.name))
        ratio = x.name == "disparate_impact" or x.name.endswith("_ratio")
        out.put("value_lo", x.name, _where(defined, (q_lo if ratio else d_lo)[:, j]))
        out.put("value_hi", x.name, _where(defined, (q_hi if ratio else d_hi)[:, j]))
        out.put("p_value", x.name, t_p[:, j])
        out.put("test", x.name, t_all[:, j])
        out.put("n_eff", x.name, n[:, j])
        out.put("ci_method", x.name, _codes(defined, method[:, j]))
    # ---- two-part disparities (average odds, average |odds|, equalized odds share one pair of rates:
    # each pair's test and Šidák-level |Newcombe| parts are computed once) --------------------------
    fixed = ~is_mode["best"][:, 0] & ~is_mode["overall"][:, 0]
    tests2: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray]] = {}
    # the |Newcombe| parts at the Šidák level of two (abs_parts) of every rate of a projected disparity, at once
    abs_cols = sorted({rates.index(r) for x in disparities if len(x.rates) == 2 and x.name not in _MOVER for r in x.rates})
    if abs_cols:
        a_lo, a_hi = ivp.abs_limits(*ivd.newcombe_limits(p[:, abs_cols], n[:, abs_cols], pr[:, abs_cols], nr[:, abs_cols],
                                                         iv.z_value(opts.ci, 2)))  # fmt: skip
    for x in (x for x in disparities if len(x.rates) > 1):
        js = tuple(rates.index(r) for r in x.rates)
        j0 = js[0]
        if js not in tests2:
            tests2[js] = ivs.chi2_pooled_pvalues([(pooled[0][:, j], None, pooled[2][:, j]) for j in js])
        t2_p, t2_code = tests2[js]
        if x.name in _MOVER:
            # the MOVER sum of the rates' own Newcombe intervals (the rate rows', before any reference mode)
            lo, hi = ivd.mover_sum_limits([(p[:, j] - pr[:, j], nc_lo[:, j], nc_hi[:, j]) for j in js], 0.5)
            kind = "mover"
        else:
            parts = ([(a_lo[:, abs_cols.index(j)], a_hi[:, abs_cols.index(j)]) for j in js] if len(js) == 2
                     else ivp.abs_parts([(p[:, j], n[:, j], pr[:, j], nr[:, j]) for j in js], opts.ci))  # fmt: skip
            lo, hi = ivp.mean_of(parts) if x.name == "average_abs_odds_difference" else ivp.max_of(parts)
            kind = "projection"
        g = _generalized(x.rates[0]) or _generalized(x.rates[1])
        ok = ~np.isnan(wc.f64(x.name))
        keep = fixed & ~mine[:, j0]
        out.put("value_lo", x.name, _where(ok & keep, lo))
        out.put("value_hi", x.name, _where(ok & keep, hi))
        out.put("p_value", x.name, _where(keep & (not g), t2_p))
        out.put("test", x.name, _tests(keep & (not g), t2_code))
        out.put("n_eff", x.name, n[:, j0])
        out.put("ci_method", x.name, _codes(ok, _code(CI_METHODS, "bound" if g else kind)))
    if context is not None and context.adjusted is not None:
        out.columns["p_value_adjusted"] = context.adjusted
    else:
        out.adjust(by_rows, opts.p_adjust)
    return out


def _screen_by_classes(wide: pl.DataFrame, metric_names: Sequence[str], disparities: Sequence[Disparity],
                       kw: dict[str, Any]) -> IntervalColumns | None:  # fmt: skip
    """:func:`group_intervals`' screen of the rates of counts (not the generalized ones) once per
    class of group rows with the same inputs (:func:`~polfair.core.intervals.common.distinct_rows`:
    at 160,000 levels of 1-2 rows each, a few hundred distinct small tables), gathered back; the
    generalized rates (score sums, distinct per group) and the disparities that read them on every
    row. ``None`` where the rows do not repeat enough (then the screen of every row).

    A class's rows have the same bits in everything the screen reads of these rates on a row (the
    rates, sizes, reference rates and sizes, window, reference mode, privileged flag, whether the
    row is its window's reference group, and with ``reference="overall"`` the complement's counts),
    and each of those kernels is elementwise on its row (the "best" reference's window statistics
    are given, ``context.best``, from every row), so every gathered value is the one the row's own
    computation gives. ``kw``: :func:`group_intervals`' keywords (but ``screen``).
    """
    opts, modes, windows, by_rows, context = kw["opts"], kw["modes"], kw["windows"], kw["by_rows"], kw["context"]
    mode, priv, group_col = kw["mode"], kw["priv"], kw["group_col"]
    rates = _rates(metric_names)
    if "best" in modes and (context is None or context.best is None):
        return None
    full = {m for m in rates if _generalized(m)}  # rates read on every row
    grew = True
    while grew:  # a disparity's rates are computed in one call
        grew = False
        for x in disparities:
            if full & set(x.rates) and not set(x.rates) <= full:
                full |= set(x.rates)
                grew = True
    few = [m for m in rates if m not in full]
    if not few:
        return None
    wc = _Columns(wide)
    cols: list[np.ndarray] = [wc.f64(c) for m in few for c in (m, f"{m}__ref", f"{m}__refn")]
    cols += [wc.sizes(few), windows.codes, wide.get_column(priv).fill_null(False).to_numpy()]
    if len(modes) > 1:
        cols += [wc.equal_to(mode, name) for name in ("privileged", "overall", "best")]
    cols.append(wc.own_reference(group_col, [f"{m}__refname" for m in few], windows, np.ones(wide.height, dtype=bool)))
    if "overall" in modes:
        cols += _complement_inputs(wc, few)
    d = distinct_rows(cols)
    if d is None:
        return None
    args = dict(opts=opts, modes=modes, mode=mode, priv=priv, group_col=group_col, screen=True, classes=False)
    mine = [x for x in disparities if not set(x.rates) & full]
    small = group_intervals(wide[pl.Series(d.first, dtype=pl.UInt32)], few, mine, windows=windows.at(d.first),
                            by_rows=by_rows.at(d.first), context=_best_of(context, rates, few, windows.count),
                            **args)  # fmt: skip
    rest = (group_intervals(wide, [m for m in rates if m in full], [x for x in disparities if x not in mine],
                            windows=windows, by_rows=by_rows,
                            context=_best_of(context, rates, sorted(full, key=rates.index), windows.count),
                            **args)
            if full else IntervalColumns(wide.height))  # fmt: skip
    # the one call's columns, in its order (rates, then one-rate disparities, then the others)
    order = [*rates, *(x.name for x in disparities if len(x.rates) == 1), *(x.name for x in disparities if len(x.rates) > 1)]
    out = IntervalColumns(wide.height)
    for fam in dict.fromkeys([*small.columns, *rest.columns]):
        a, b = small.columns.get(fam, {}), rest.columns.get(fam, {})
        for name in order:
            if name in a:
                out.put(fam, name, a[name][d.inverse])
            elif name in b:
                out.put(fam, name, b[name])
    return out


def _best_of(context: GroupContext | None, rates: Sequence[str], some: Sequence[str], count: int) -> GroupContext | None:
    """``context`` with the "best" reference's (window × rate) statistics of ``some`` of the ``rates`` only."""
    if context is None or context.best is None:
        return context
    cols = [rates.index(m) for m in some]
    best = {hib: tuple(v.reshape(count, len(rates))[:, cols].ravel() for v in stats) for hib, stats in context.best.items()}
    return GroupContext(best=best, adjusted=context.adjusted)  # type: ignore[arg-type]


def _screen(out: IntervalColumns, rates: list[str], disparities: Sequence[Disparity], p: np.ndarray, pr: np.ndarray,
            d_lo: np.ndarray, d_hi: np.ndarray, t_p: np.ndarray, pooled: tuple[np.ndarray, ...],
            mine: np.ndarray, is_mode: dict[str, np.ndarray]) -> IntervalColumns:  # fmt: skip
    """:func:`group_intervals`' ``screen``: the harmful side's difference limits and every p-value, by
    the same expressions as the full columns (see there); the caller adjusts the p-values of the rows
    it shows (:func:`adjust_p_values_at`).
    """
    d_lo, d_hi, t_p = (_where(~mine, v) for v in (d_lo, d_hi, t_p))
    gen = np.array([_generalized(m) for m in rates])[None, :]
    with np.errstate(invalid="ignore"):
        okd = ~np.isnan(p - pr)
    lo, hi = _where(okd, d_lo), _where(okd, d_hi)
    for j, m in enumerate(rates):
        if METRICS[m].harm is not None:
            out.put("difference_lo", m, lo[:, j])
            out.put("difference_hi", m, hi[:, j])
    t_rates = _where(~gen, t_p)
    for j, m in enumerate(rates):
        out.put("p_value", m, t_rates[:, j])
    fixed = ~is_mode["best"][:, 0] & ~is_mode["overall"][:, 0]
    tests2: dict[tuple[int, ...], np.ndarray] = {}
    for x in disparities:  # (in the full columns' order: one-rate disparities first)
        if len(x.rates) == 1:
            out.put("p_value", x.name, t_p[:, rates.index(x.rates[0])])
    for x in (x for x in disparities if len(x.rates) > 1):
        js = tuple(rates.index(r) for r in x.rates)
        g = _generalized(x.rates[0]) or _generalized(x.rates[1])
        if g:  # no test (as the full columns: every p-value null)
            out.put("p_value", x.name, np.full(p.shape[0], np.nan))
            continue
        if js not in tests2:
            tests2[js] = ivs.chi2_pooled_pvalues([(pooled[0][:, j], None, pooled[2][:, j]) for j in js])[0]
        out.put("p_value", x.name, _where(fixed & ~mine[:, js[0]], tests2[js]))
    return out


def _repeated_rows(f: Callable[..., tuple[np.ndarray, ...]], p: np.ndarray, n: np.ndarray, z: float) -> tuple[np.ndarray, ...]:
    """``f(p, n, z)`` of an elementwise kernel on ``(rows, k)`` arrays, computed once per run of identical rows.

    The reference's rate and size repeat on every group row of a window (e.g. 160,000 groups of one
    attribute): the kernel runs on the first row of each run and is gathered back (bit-identical: an
    elementwise kernel gives each element the same result wherever it is computed).
    """
    h = p.shape[0]
    if h < 64:
        return f(p, n, z)
    new = np.empty(h, dtype=bool)
    new[0] = True
    new[1:] = (p[1:].view(np.uint64) != p[:-1].view(np.uint64)).any(axis=1)
    new[1:] |= (n[1:].view(np.uint64) != n[:-1].view(np.uint64)).any(axis=1)
    first = np.flatnonzero(new)
    if 4 * first.size > h:  # few repeats: no gain
        return f(p, n, z)
    run = np.cumsum(new) - 1
    return tuple(np.asarray(v)[run] for v in f(p[first], n[first], z))


#: Two-part disparities whose interval is the MOVER sum of the rates' Newcombe intervals (the others project).
_MOVER = ("average_odds_difference", "average_predictive_value_difference")


@dataclass
class GroupContext:
    """What the intervals of a batch of group rows need from all of them (see :func:`group_intervals`):
    ``best[higher_is_better]`` the (window × rate) statistics of :func:`~polfair.core.intervals.projections.best_reference_stats`,
    ``adjusted`` the batch's adjusted p-values (metric -> array).
    """

    best: dict[bool, tuple[np.ndarray, np.ndarray, np.ndarray]] | None = None
    adjusted: dict[str, np.ndarray] | None = None


def best_statistics(groups: pl.DataFrame, metric_names: Sequence[str], windows: Segments, ci: float,
                    min_sample_size: int = 0) -> dict[bool, tuple[np.ndarray, np.ndarray, np.ndarray]]:  # fmt: skip
    """The "best" reference's statistics of every (window, rate) of the group rows (for batches)."""
    rates = _rates(metric_names)
    gc = _Columns(groups)
    p, n = gc.matrix(rates), gc.sizes(rates)
    r_n = len(rates)
    seg = Segments((windows.codes[:, None] * r_n + np.arange(r_n)[None, :]).ravel(), windows.count * r_n)
    ok = _eligible_cells(groups, r_n, min_sample_size)
    return {hib: ivp.best_reference_stats(p.ravel(), n.ravel(), seg, ci, hib, eligible=ok) for hib in (True, False)}


def _eligible_cells(groups: pl.DataFrame, r_n: int, min_sample_size: int) -> np.ndarray | None:
    """Per (group, rate), raveled: the group meets the minimum (its ``n`` input rows); ``None``: no minimum."""
    if min_sample_size <= 0:
        return None
    ok = groups.get_column("n").fill_null(0).to_numpy() >= min_sample_size
    return np.repeat(ok, r_n)


def _complement_inputs(cols: _Columns, rates: Sequence[str]) -> list[np.ndarray]:
    """``reference="overall"``: each rate's numerator, denominator and its Σw² of the group, then of its
    population (``__pop_<count>`` columns), ``(rows, rates)`` each (the inputs of ``complement_limits``).
    """
    group, group2 = cols.counts(), cols.counts(suffix="_w2")
    pop, pop2 = cols.counts("__pop_"), cols.counts("__pop_", "_w2")
    out = []
    for part, counts in (("numerator", group), ("denominator", group), ("denominator", group2), ("numerator", pop),
                         ("denominator", pop), ("denominator", pop2)):  # fmt: skip
        out.append(np.column_stack([np.asarray(getattr(METRICS[m], part)(counts), dtype=np.float64) for m in rates]))
    return out


# ----------------------------------------------------------------------------------------------
# attribute rows


def _edf_names(has_predictions: bool) -> list[tuple[str, str]]:
    return [("labels", _EDF), ("predictions", f"{_EDF}_predictions")][: 2 if has_predictions else 1]


def _edf_inputs(frame: pl.DataFrame | _Columns, has_predictions: bool, weighted: bool) -> tuple[np.ndarray, np.ndarray]:
    """Each row's (cell's or group's) favourable rate of labels (and predictions), ``(rows, EDFs)``, and its size."""
    fc = frame if isinstance(frame, _Columns) else _Columns(frame)
    tp, fn, fp, tn = (fc.raw(c) for c in ("tp", "fn", "fp", "tn"))
    t = np.asarray(tp + fn + fp + tn, dtype=np.float64)
    pos = np.column_stack([np.asarray(tp + (fn if on == "labels" else fp), dtype=np.float64)
                           for on, _ in _edf_names(has_predictions)])  # fmt: skip
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(t[:, None] > 0, pos / t[:, None], np.nan)
    if not weighted:
        return p, t
    w2 = np.asarray(fc.raw("tp_w2") + fc.raw("fn_w2") + fc.raw("fp_w2") + fc.raw("tn_w2"), dtype=np.float64)
    return p, ivr.kish_size(t, w2)


def attribute_intervals(
    rows: pl.DataFrame,
    wide: pl.DataFrame,
    segs: Segments,
    by_rows: Segments,
    metric_names: Sequence[str],
    *,
    opts: CiOptions,
    has_predictions: bool,
    edf: bool = True,
) -> IntervalColumns:
    """The attribute rows' interval columns (``edf=False``: without EDF's, for a report that leaves EDF out).

    One (group × block) matrix per kind of block: every rate's spread (and TPR and FPR again at the
    equalized-odds level, two spreads holding jointly), and EDF of labels and predictions; every
    (block, attribute row) is a family of :class:`~polfair.core.intervals.common.Segments`, and
    :func:`~polfair.core.intervals.spreads.spread_limits` / :func:`~polfair.core.intervals.spreads.edf_limits`
    compute all of them at once; the homogeneity tests' statistics are the numpy segment sums of
    :func:`~polfair.core.intervals.homogeneity_table`. Per rate: the projection limits of its spread
    (``difference`` / ``ratio``) and the homogeneity test (not for generalized rates), where the
    spread is defined; the demographic-parity disparities take the selection rate's, fairlearn's
    equalized odds the TPR and FPR spreads combined and the test of both; EDF its projection limits
    where EDF is defined. ``ci_method`` is ``projection`` throughout.

    ``rows`` are the group rows (their sums give the effective sizes); ``wide`` the attribute rows with the
    point spreads ``<m>__d`` / ``<m>__r``, the named disparities and EDF; ``segs`` each group row's
    attribute row, ``by_rows`` each attribute row's by value.
    """
    h = wide.height
    out = IntervalColumns(h)
    rates = _rates(metric_names)
    edf_names = _edf_names(has_predictions) if edf else []
    tested = [m for m in rates if not _generalized(m)]
    if segs.count != h:  # every attribute row has group rows
        msg = f"attribute_intervals: {segs.count} families, expected {h}"
        raise AssertionError(msg)
    eo = ["true_positive_rate", "false_positive_rate"] if has_predictions else []
    spread_rates = [*rates, *eo]
    rc = _Columns(rows)
    p_all, n_all = rc.matrix(rates), rc.sizes(rates)
    # whether each attribute row's spreads, disparities and EDF are defined (their null rules), in one select
    flags = [f"{m}__d" for m in rates] + (["selection_rate__r", "equalized_odds_difference", "equalized_odds_ratio"]
                                          if has_predictions else []) + [name for _, name in edf_names]
    defined_all = dict(zip(flags, ~np.isnan(_Columns(wide).matrix(flags).T)))
    edf_p, edf_n = _edf_inputs(rc, has_predictions, opts.weighted) if edf_names else (None, None)
    # the group rows' classes of equal inputs of the rates of counts and EDF (many groups of a few rows:
    # a few hundred distinct small tables): their spreads and EDF limits are maxima, minima and counts,
    # so each class enters once with its number of groups (the same floats)
    fixed = [j for j, m in enumerate(rates) if not _generalized(m)]
    d = (distinct_rows([segs.codes, p_all[:, fixed], n_all[:, fixed], *((edf_p, edf_n) if edf_names else ())])
         if fixed else None)  # fmt: skip
    blocks = len(spread_rates)
    fams = np.array([1.0] * len(rates) + [2.0] * len(eo))
    # block-major rows (block, group row): the segment codes are then sorted whenever the attribute rows
    # are runs, so no sort of (groups × blocks) codes (the spreads are maxima, minima and counts: the
    # order of the rows does not change them)
    parts: list[tuple[np.ndarray, ...]] = []
    for b, m in enumerate(spread_rates):
        j = rates.index(m)
        if d is not None and not _generalized(m):
            parts.append((p_all[d.first, j], n_all[d.first, j], b * h + segs.codes[d.first], d.counts))
        else:
            parts.append((p_all[:, j], n_all[:, j], b * h + segs.codes, np.ones(rows.height, dtype=np.int64)))
    p, n, codes, counts = (np.concatenate(v) for v in zip(*parts))
    lim = ivsp.spread_limits(p, n, Segments(codes, blocks * h), opts.ci, np.repeat(fams, h),
                             counts=counts if d is not None else None)  # fmt: skip

    def spread(b: int) -> dict[str, np.ndarray]:
        return {k: v[b * h : (b + 1) * h] for k, v in lim.items()}

    projection = _code(CI_METHODS, "projection")
    defined = {m: defined_all[f"{m}__d"] for m in rates}
    for j, m in enumerate(rates):
        s = spread(j)
        for fam in ivsp.SPREAD_FIELDS:
            out.put(fam, m, s[fam])
        out.put("ci_method", m, _codes(defined[m], projection))
    # homogeneity tests: one per tested rate, and equalized odds (TPR and FPR together)
    if tested:
        cols = [rates.index(m) for m in tested]
        t_n = len(tested)
        if d is None:
            sums = ivh.homogeneity_segments(
                p_all[:, cols].T.ravel(), n_all[:, cols].T.ravel(),
                (np.arange(t_n)[:, None] * h + segs.codes[None, :]).ravel(), t_n * h, opts.weighted,
            )  # fmt: skip
        else:  # each class's terms once; the rows (block-major, in order) read their class's
            c_n = d.first.size
            sums = ivh.homogeneity_segments(
                p_all[d.first][:, cols].T.ravel(), n_all[d.first][:, cols].T.ravel(),
                (np.arange(t_n)[:, None] * h + segs.codes[d.first][None, :]).ravel(), t_n * h, opts.weighted,
                classes=((np.arange(t_n)[:, None] * c_n + d.inverse[None, :]).ravel(), np.tile(d.counts, t_n)),
            )  # fmt: skip
        # one family per tested rate, and equalized odds (TPR and FPR together), all tested at once
        families = {m: [tested.index(m)] for m in tested} | ({"equalized_odds": [tested.index(m) for m in eo]} if eo else {})
        pv, codes = ivh.family_tests(sums, list(families.values()), h, weighted=opts.weighted)
        tests = {name: (pv[i * h : (i + 1) * h], codes[i * h : (i + 1) * h]) for i, name in enumerate(families)}
        for m in tested:
            out.put("p_value", m, _where(defined[m], tests[m][0]))
            out.put("test", m, _codes(defined[m], tests[m][1]))
    if has_predictions:
        sel = "selection_rate"
        for name, kind in (("demographic_parity_difference", "difference"), ("demographic_parity_ratio", "ratio")):
            ok = defined_all[f"{sel}__{kind[0]}"]
            s = spread(rates.index(sel))
            out.put("value_lo", name, s[f"{kind}_lo"])
            out.put("value_hi", name, s[f"{kind}_hi"])
            out.put("p_value", name, out.get("p_value", sel))
            out.put("test", name, out.get("test", sel))
            out.put("ci_method", name, _codes(ok, projection))
        both = ivsp.equalized_odds_limits(spread(len(rates)), spread(len(rates) + 1))
        for name, kind in (("equalized_odds_difference", "difference"), ("equalized_odds_ratio", "ratio")):
            ok = defined_all[name]
            out.put("value_lo", name, both[f"{kind}_lo"])
            out.put("value_hi", name, both[f"{kind}_hi"])
            out.put("p_value", name, _where(ok, tests["equalized_odds"][0]))
            out.put("test", name, _codes(ok, tests["equalized_odds"][1]))
            out.put("ci_method", name, _codes(ok, projection))
    if edf_p is not None and edf_n is not None:  # EDF of each attribute set: its groups are the cells of the projection
        e_n = edf_p.shape[1]
        ep, en, sc = (edf_p, edf_n, segs.codes) if d is None else (edf_p[d.first], edf_n[d.first], segs.codes[d.first])
        lims = ivsp.edf_limits(ep.T.ravel(), np.tile(en, e_n), Segments((np.arange(e_n)[:, None] * h + sc[None, :]).ravel(), e_n * h),
                               opts.ci, counts=None if d is None else np.tile(d.counts, e_n))  # fmt: skip
        for j, (_, name) in enumerate(edf_names):
            ok = defined_all[name]
            out.put("value_lo", name, _where(ok, lims["lo"][j * h : (j + 1) * h]))
            out.put("value_hi", name, _where(ok, lims["hi"][j * h : (j + 1) * h]))
            out.put("ci_method", name, _codes(ok, projection))
    out.adjust(by_rows, opts.p_adjust)
    return out


# ----------------------------------------------------------------------------------------------
# population rows


def population_intervals(
    cells: pl.DataFrame,
    wide: pl.DataFrame,
    segs: Segments,
    metric_names: Sequence[str],
    *,
    opts: CiOptions,
    has_predictions: bool,
    edf: bool = True,
) -> IntervalColumns:
    """The population rows' interval columns (one row per ``by`` value; ``edf=False``: without EDF's
    and bias amplification's).

    Every rate's Wilson limits (``n_eff`` its Kish size; ``ci_method`` ``bound`` for generalized
    rates, else the score method); the EDF projection limits over the full intersection's ``cells``
    (level ``ci``, and ``1 − α/2`` for bias amplification, the difference of the two EDFs'
    intervals), for every ``by`` value at once. EDF limits are null where EDF is.

    ``wide`` holds the rates, their sums, EDF and bias amplification, one row per ``by`` value;
    ``segs`` gives each cell's row of ``wide``.
    """
    h = wide.height
    out = IntervalColumns(h)
    rates = _rates(metric_names)
    z = iv.z_value(opts.ci)
    wc = _Columns(wide)
    if rates:
        p, n = wc.matrix(rates), wc.sizes(rates)
        lo, hi = ivr.wilson_limits(p, n, z)
        score = _code(CI_METHODS, "score_ess" if opts.weighted else "score")
        for j, m in enumerate(rates):
            out.put("value_lo", m, lo[:, j])
            out.put("value_hi", m, hi[:, j])
            out.put("n_eff", m, n[:, j])
            out.put("ci_method", m, np.full(h, _code(CI_METHODS, "bound") if _generalized(m) else score, dtype=np.int64))
    if segs.count != h:  # every by value has cells
        msg = f"population_intervals: {segs.count} by values in the cells, expected {h}"
        raise AssertionError(msg)
    if not edf:
        return out
    edf_p, edf_n = _edf_inputs(cells, has_predictions, opts.weighted)
    codes = segs.codes
    # the cells' classes of equal inputs (many cells of a few rows), each once with its number of cells
    d = distinct_rows([codes, edf_p, edf_n])
    if d is not None:
        edf_p, edf_n, codes = edf_p[d.first], edf_n[d.first], codes[d.first]
    half = 1.0 - (1.0 - opts.ci) / 2.0
    # every (EDF, level) of every by value at once: segment (EDF, level, by value), its level per segment
    e_n, c_n = edf_p.shape[1], edf_p.shape[0]
    block = np.repeat(np.arange(2 * e_n), c_n)
    lim = ivsp.edf_limits(np.repeat(edf_p.T, 2, axis=0).ravel(), np.tile(edf_n, 2 * e_n),
                          Segments(block * h + np.tile(codes, 2 * e_n), 2 * e_n * h),
                          np.repeat(np.tile([opts.ci, half], e_n), h),
                          counts=None if d is None else np.tile(d.counts, 2 * e_n))  # fmt: skip
    limits = {(j, level): {k: v[(2 * j + i) * h : (2 * j + i + 1) * h] for k, v in lim.items()}
              for j in range(e_n) for i, level in enumerate((opts.ci, half))}  # fmt: skip
    projection = _code(CI_METHODS, "projection")
    for j, (_, name) in enumerate(_edf_names(has_predictions)):
        ok = ~np.isnan(wc.f64(name))
        out.put("value_lo", name, _where(ok, limits[j, opts.ci]["lo"]))
        out.put("value_hi", name, _where(ok, limits[j, opts.ci]["hi"]))
        out.put("ci_method", name, _codes(ok, projection))
    if has_predictions:  # bias amplification: EDF(predictions) − EDF(labels), each at level 1 − α/2
        name = "differential_fairness_bias_amplification"
        ok = ~np.isnan(wc.f64(name))
        (llo, lhi), (plo, phi) = ((limits[j, half]["lo"], limits[j, half]["hi"]) for j in (0, 1))
        out.put("value_lo", name, _where(ok, plo - lhi))
        out.put("value_hi", name, _where(ok, phi - llo))
        out.put("ci_method", name, _codes(ok, projection))
    return out


# ----------------------------------------------------------------------------------------------
# entropy indices


def entropy_columns(out: IntervalColumns, wide: pl.DataFrame, names: Sequence[str],
                    limits: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]]) -> None:  # fmt: skip
    """Add the limits of an entropy family (``names``: GE(α), Theil, CV of one kind) to ``out``:
    ``limits(estimates)`` gets the report's estimates ``(3, rows)`` of ``wide`` (NaN: undefined) and
    returns ``lo``, ``hi``, ``ok`` of the same shape (:mod:`polfair.core.entropy.intervals`); null where the
    index itself is.
    """
    if not names:
        return
    est = _Columns(wide).matrix(names).T
    lo, hi, ok = limits(est)
    method = _code(CI_METHODS, "delta_bc")
    for j, name in enumerate(names):
        defined = ~np.isnan(est[j]) & ok[j]
        out.put("value_lo", name, _where(defined, lo[j]))
        out.put("value_hi", name, _where(defined, hi[j]))
        out.put("ci_method", name, _codes(defined, method))


def variance_columns(out: IntervalColumns, name: str, res: dict[str, np.ndarray]) -> None:
    """Add the Wald limits of a corrected between-group variance (``name``;
    :func:`~polfair.core.intervals.variance.between_group_variance`'s ``res``) to ``out``; null where
    the variance is.
    """
    defined = ~np.isnan(res["value"])
    out.put("value_lo", name, _where(defined, res["lo"]))
    out.put("value_hi", name, _where(defined, res["hi"]))
    out.put("ci_method", name, _codes(defined, _code(CI_METHODS, "scaled_chi2")))
