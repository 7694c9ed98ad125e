"""The computation behind :class:`~polfair.compat.fairlearn.MetricFrame`: one pass, then arithmetic.

An underscore module: internal to :mod:`polfair.compat.fairlearn`.

* :class:`Layout`: the groups. Each feature's levels are its sorted distinct values (a missing
  value last, as its own group); the groups of ``by_group`` are every combination of the control
  and sensitive levels (fairlearn's ``MultiIndex.from_product``), those of ``overall`` every
  combination of the control levels. Results are dense arrays ``(..., C, S)`` and ``(..., C)``
  over them (NaN for a combination without rows).
* :func:`cell_results`: the recognised metrics (:mod:`~polfair.compat.fairlearn._mf_known`)
  from the core's cell tables: one classification pass (:func:`polfair.core.passes.spec.build_spec` +
  :func:`polfair.core.passes.collect.collect_cells`) per distinct ``(favorable label, weight)`` the
  metrics read, one regression pass (:func:`polfair.core.regression.regression_cells`) per
  weight; usually exactly one pass in all. Groups and roll-ups are sums over the cell table.
* :func:`per_group_results`: any other metric, called on each group's rows (fairlearn's way).
* :func:`bootstrap_results`: the row bootstrap from the table of distinct rows ("units": rows
  equal in every column a recognised metric reads, with their count): one
  ``Multinomial(n; unit shares)`` draw per replicate, a NumPy array ``(n_boot, units)``, then the
  same passes over the drawn units with the replicate as a ``by`` key and the draw as a
  multiplicity weight, so every replicate of every group comes out of one pass. Metrics called per
  group are called per replicate on resampled rows (their unit counts then come from the same draws).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from polfair.compat.fairlearn._mf_data import Feature, MetricFunction
from polfair.compat.fairlearn._mf_known import (
    Known,
    LabelFacts,
    Notes,
    classification_values,
    favorable_of,
    regression_values,
)
from polfair.core.passes.collect import collect_cells
from polfair.core.passes.counts import CONFUSION_COLUMNS
from polfair.core.passes.spec import build_spec
from polfair.core.regression import group_moments, metric_values, regression_cells, roll_up
from polfair.exceptions import InvalidInputError, PolfairError

__all__ = [
    "bootstrap_results",
    "call",
    "cell_results",
    "key_name",
    "Layout",
    "make_layout",
    "make_rng",
    "Pass",
    "pass_frame",
    "per_group_results",
    "plan",
    "Results",
    "row_codes",
    "units_of",
    "weight_name",
]

Y, P, YN, PN, M, REP = "__mf_y", "__mf_p", "__mf_yn", "__mf_pn", "__mf_m", "__mf_rep"
#: The count columns summed by a roll-up of the classification cell table (the core's names).
_SUMS = ("n", *CONFUSION_COLUMNS)
#: Replicates x units drawn per block (bounds the memory of a bootstrap with many distinct rows).
BLOCK_CELLS = 4_000_000


def key_name(i: int) -> str:
    return f"__mf_k{i}"


def weight_name(i: int) -> str:
    return f"__mf_w{i}"


@dataclass
class Layout:
    """The groups: feature names (control first), each feature's levels, and index arithmetic."""

    names: list[str]
    n_cf: int
    levels: list[pl.Series]
    #: Per feature, label -> the pandas value shown in the index (interval bands), or ``None``.
    shown: list[dict[str, Any] | None] = field(default_factory=list)

    @property
    def keys(self) -> list[str]:
        return [key_name(i) for i in range(len(self.names))]

    @property
    def cf_keys(self) -> list[str]:
        return self.keys[: self.n_cf]

    @property
    def C(self) -> int:  # noqa: N802 (the paper's notation)
        return math.prod(len(v) for v in self.levels[: self.n_cf])

    @property
    def S(self) -> int:  # noqa: N802
        return math.prod(len(v) for v in self.levels[self.n_cf :])

    def codes(self, frame: pl.DataFrame, features: Sequence[int]) -> np.ndarray:
        """The flat index of each row of ``frame`` among the combinations of ``features`` (row-major)."""
        flat = np.zeros(frame.height, dtype=np.int64)
        for i in features:
            k = key_name(i)
            lookup = pl.DataFrame({k: self.levels[i], "__mf_i": np.arange(len(self.levels[i]), dtype=np.int64)})
            idx = frame.select(k).join(lookup, on=k, how="left", nulls_equal=True, maintain_order="left")["__mf_i"]
            flat = flat * len(self.levels[i]) + idx.to_numpy()
        return flat


def make_layout(features: Sequence[Feature], n_cf: int, observed: pl.DataFrame) -> Layout:
    """The :class:`Layout` of the features, their levels read from ``observed`` (rows or a cell table)."""
    levels = [observed[key_name(i)].unique().sort(nulls_last=True) for i in range(len(features))]
    return Layout([f.name_ for f in features], n_cf, levels, [f.shown for f in features])


# ----------------------------------------------------------------------------------------------
# the cell path


@dataclass(frozen=True)
class Pass:
    """One core pass: its family, the columns it reads, its favorable label and weight column."""

    family: str  # "clf" or "reg"
    y: str | None  # None: the literal 1 (the pass only counts rows)
    p: str | None
    favorable: Any
    weight: str | None


@dataclass
class Results:
    """Metric values on the layout: ``by_group[name]`` ``(R, C, S)``, ``overall[name]`` ``(R, C)``.

    ``R`` is 1 for the point estimates, ``n_boot`` for replicates. Float arrays for the cell path;
    object arrays (any value a metric returns) for metrics called per group.
    """

    by_group: dict[str, np.ndarray] = field(default_factory=dict)
    overall: dict[str, np.ndarray] = field(default_factory=dict)
    #: The tables a recognised metric was computed from: (pass, group table, control-group table).
    tables: dict[str, tuple[Pass, pl.DataFrame, pl.DataFrame]] = field(default_factory=dict)


def plan(known: dict[str, Known], facts: LabelFacts, weights: dict[int, str]) -> dict[Pass, list[str]]:
    """The passes the recognised metrics need (metric names per pass); equal needs share a pass."""
    passes: dict[Pass, list[str]] = {}
    for name, k in known.items():
        w = None if k.weight is None else weights[id(k.weight.raw)]
        if k.is_regression:
            numeric_y = facts.numeric_finite
            key = Pass("reg", YN if numeric_y else PN, PN, None, w)
        elif k.handler == "count":
            continue
        else:
            y = Y if (k.handler != "fl_selection_rate" or facts.clean) else P
            key = Pass("clf", y, P, favorable_of(k, facts), w)
        passes.setdefault(key, []).append(name)
    counts = [n for n, k in known.items() if k.handler == "count"]
    if counts:  # rows per group: any unweighted pass over labels without missing values counts them
        shared = [ps for ps in passes if ps.family == "clf" and ps.weight is None and ps.y == Y] if facts.clean else []
        passes.setdefault(shared[0] if shared else Pass("clf", None, None, 1, None), []).extend(counts)
    return passes


def pass_frame(frame: pl.DataFrame, facts: LabelFacts, passes: Sequence[Pass]) -> pl.DataFrame:
    """``frame`` with the label and numeric columns the passes read."""
    extra: dict[str, pl.Series] = {}
    if any(ps.family == "clf" and ps.y == Y for ps in passes) and facts.y_label is not None:
        extra[Y] = facts.y_label
    if any(ps.family == "clf" and ps.p == P for ps in passes) and facts.p_label is not None:
        extra[P] = facts.p_label
    for col, s in ((YN, facts.y), (PN, facts.p)):
        if any(ps.family == "reg" and col in (ps.y, ps.p) for ps in passes) and s is not None:
            extra[col] = s.cast(pl.Float64)
    return frame.with_columns([s.alias(c) for c, s in extra.items()]) if extra else frame


def _weight_expr(ps: Pass, multiplicity: bool) -> pl.Expr | None:
    w = None if ps.weight is None else pl.col(ps.weight).cast(pl.Float64)
    if multiplicity:
        m = pl.col(M).cast(pl.Float64)
        w = m if w is None else w * m
    return w


def _classification_tables(frame: pl.DataFrame, ps: Pass, layout: Layout, rep: bool) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The cell table of one classification pass, and its roll-up over the sensitive features."""
    multiplicity = M in frame.columns
    y = pl.col(ps.y) if ps.y is not None else pl.lit(1, pl.Int64).alias("__mf_one")
    spec = build_spec(
        frame, y_true=y, y_pred=None if ps.p is None else pl.col(ps.p), protected=layout.keys,
        favorable=ps.favorable, weight=_weight_expr(ps, multiplicity), by=[REP] if rep else None,
    )  # fmt: skip
    cells = collect_cells(spec, on_missing="ignore", engine="auto", allow_many_groups=True)
    if multiplicity and ps.weight is None:
        cells = cells.with_columns(pl.col("w").round(0).cast(pl.UInt64).alias("n"))  # rows = Σ multiplicity
    group = ([REP] if rep else []) + layout.cf_keys
    sums = [pl.col(c).sum() for c in _SUMS]
    rolled = cells.group_by(group, maintain_order=True).agg(sums) if group else cells.select(sums)
    return cells, rolled


def _regression_tables(frame: pl.DataFrame, ps: Pass, layout: Layout, rep: bool) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The regression cell table of one pass rolled up to the groups and to the control groups."""
    multiplicity = M in frame.columns
    keys = ([REP] if rep else []) + layout.keys
    assert ps.y is not None and ps.p is not None
    cells = regression_cells(frame.lazy(), y_true=ps.y, y_pred=ps.p, keys=keys,
                             weight=_weight_expr(ps, multiplicity))  # fmt: skip
    group = ([REP] if rep else []) + layout.cf_keys
    return roll_up(cells, keys), roll_up(cells, group)


class _Positions:
    """Where the rows of the pass tables go in the dense arrays: ``(replicate, cell)``, computed once per table."""

    def __init__(self, layout: Layout, rep: bool) -> None:
        self.layout, self.rep = layout, rep
        self.cache: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self.tables: list[pl.DataFrame] = []  # kept alive: the cache is keyed by id()

    def __call__(self, table: pl.DataFrame, features: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        if id(table) not in self.cache:
            r = table[REP].to_numpy().astype(np.int64) if self.rep else np.zeros(table.height, dtype=np.int64)
            self.cache[id(table)] = (r, self.layout.codes(table, features))
            self.tables.append(table)
        return self.cache[id(table)]


def _place(values: np.ndarray, at: tuple[np.ndarray, np.ndarray], shape: tuple[int, ...]) -> np.ndarray:
    """Scatter per-row values of a (rolled-up) table into a dense ``(R, cells)`` array (NaN elsewhere)."""
    out = np.full(shape, np.nan, dtype=np.float64)
    out.reshape(shape[0], -1)[at] = values
    return out


def _rows_table(frame: pl.DataFrame, layout: Layout, rep: bool) -> tuple[pl.DataFrame, pl.DataFrame]:
    return _classification_tables(frame, Pass("clf", None, None, 1, None), layout, rep)


def cell_results(
    frame: pl.DataFrame, known: dict[str, Known], passes: dict[Pass, list[str]], layout: Layout | None,
    features: Sequence[Feature], n_cf: int, *, rep: int = 0, notes: Notes | None = None,
) -> tuple[Results, Layout, dict[str, str]]:  # fmt: skip
    """The recognised metrics from the passes over ``frame``.

    ``rep > 0``: ``frame`` holds drawn units with the replicate number (``__mf_rep``, 0 …
    ``rep - 1``) and multiplicity (``__mf_m``); values of groups whose weights sum to 0 are then
    NaN. Returns the results, the layout (made from the first cell table when not given) and the
    metrics the cell path refused, with the reason (they are then called per group).
    """
    notes = notes if notes is not None else Notes()
    out, refused = Results(), {}
    tables: dict[Pass, tuple[pl.DataFrame, pl.DataFrame]] = {}
    names_only = _pending(features, n_cf)
    for ps, names in passes.items():
        try:
            make = _classification_tables if ps.family == "clf" else _regression_tables
            tables[ps] = make(frame, ps, layout or names_only, rep > 0)
        except (InvalidInputError, PolfairError) as exc:
            for name in names:
                refused[name] = f"the core's pass refused the data ({str(exc).splitlines()[0]})"
            continue
        if layout is None:
            layout = make_layout(features, n_cf, tables[ps][0])
    if layout is None:
        layout = make_layout(features, n_cf, frame)
    R, everything, cf = max(rep, 1), range(len(layout.names)), range(n_cf)
    at = _Positions(layout, rep > 0)
    cells_shape, control_shape = (R, layout.C * layout.S), (R, layout.C)
    rows: tuple[np.ndarray, np.ndarray] | None = None
    if any(known[n].handler == "r2" for ps in tables for n in passes[ps]):
        cells, rolled = _rows_table(frame, layout, rep > 0)
        rows = (_place(cells["n"].to_numpy().astype(np.float64), at(cells, everything), cells_shape),
                _place(rolled["n"].to_numpy().astype(np.float64), at(rolled, cf), control_shape))  # fmt: skip
    for ps, (cells, rolled) in tables.items():
        for name in passes[ps]:
            k = known[name]
            if ps.family == "clf":
                by_group = classification_values(k, cells, notes, strict=rep == 0)
                overall = classification_values(k, rolled, notes, strict=rep == 0)
            else:
                by_group = _regression(k, cells, at(cells, everything), None if rows is None else rows[0], notes)
                overall = _regression(k, rolled, at(rolled, cf), None if rows is None else rows[1], notes)
            if by_group is None or overall is None:
                refused[name] = "a group's weights sum to 0 (the peer function divides by zero)"
                continue
            out.by_group[name] = _place(by_group, at(cells, everything), cells_shape).reshape(R, layout.C, layout.S)
            out.overall[name] = _place(overall, at(rolled, cf), control_shape)
            out.tables[name] = (ps, cells, rolled)
            if k.handler == "count":  # an integer count: keep it one where every group has rows
                for d in (out.by_group, out.overall):
                    if not np.isnan(d[name]).any():
                        d[name] = d[name].astype(np.int64)
    return out, layout, refused


def _pending(features: Sequence[Feature], n_cf: int) -> Layout:
    """A layout without levels (names only): what a pass needs before the levels are known."""
    return Layout([f.name_ for f in features], n_cf, [pl.Series([], dtype=pl.Null) for _ in features])


def _regression(k: Known, table: pl.DataFrame, at: tuple[np.ndarray, np.ndarray], rows: np.ndarray | None,
                notes: Notes) -> np.ndarray:  # fmt: skip
    """A regression handler's values on a rolled-up regression table (``rows``: row counts, dense)."""
    m = group_moments(table)
    constant = m["y_min"] == m["y_max"]
    counts = np.full(table.height, np.inf) if rows is None else rows[at]
    return regression_values(k, metric_values(m), constant, counts, notes)


# ----------------------------------------------------------------------------------------------
# metrics called per group


def row_codes(frame: pl.DataFrame, layout: Layout) -> tuple[np.ndarray, np.ndarray]:
    """Each row's control-group index and its group index (``c * S + s``)."""
    c = layout.codes(frame, range(layout.n_cf))
    s = layout.codes(frame, range(layout.n_cf, len(layout.names)))
    return c, c * layout.S + s


def _split(codes: np.ndarray, n: int, rows: np.ndarray | None = None) -> list[tuple[int, np.ndarray]]:
    """(code, row positions) of each non-empty code, rows in their order (a stable sort)."""
    idx = np.arange(codes.size) if rows is None else rows
    order = np.argsort(codes, kind="stable")
    sorted_codes = codes[order]
    bounds = np.searchsorted(sorted_codes, np.arange(n + 1))
    return [(g, idx[order[bounds[g]:bounds[g + 1]]]) for g in range(n) if bounds[g + 1] > bounds[g]]


def call(mf: MetricFunction, y_true: np.ndarray, y_pred: np.ndarray, rows: np.ndarray | None) -> Any:
    """``mf.func(y_true[rows], y_pred[rows], **sample_params[rows])`` (all rows when ``rows`` is None)."""
    if rows is None:
        return mf.func(y_true, y_pred, **{k: t.array for k, t in mf.params.items()})
    return mf.func(y_true[rows], y_pred[rows], **{k: t.array[rows] for k, t in mf.params.items()})


def per_group_results(metrics: Sequence[MetricFunction], y_true: np.ndarray, y_pred: np.ndarray, layout: Layout,
                      cf_codes: np.ndarray, group_codes: np.ndarray, rows: np.ndarray | None = None) -> Results:  # fmt: skip
    """Metrics called on each group's rows (object arrays ``(1, C, S)`` and ``(1, C)``; NaN: no rows).

    ``rows``: the rows to use (a bootstrap replicate's draw, repeats allowed), default all of them.
    """
    out = Results()
    C, S = layout.C, layout.S
    cf = cf_codes if rows is None else cf_codes[rows]
    gc = group_codes if rows is None else group_codes[rows]
    overall_groups = _split(cf, C, rows) if layout.n_cf else [(0, np.arange(y_true.shape[0]) if rows is None else rows)]
    groups = _split(gc, C * S, rows)
    for mf in metrics:
        overall = np.full((1, C), np.nan, dtype=object)
        for g, r in overall_groups:
            overall[0, g] = call(mf, y_true, y_pred, None if (rows is None and not layout.n_cf) else r)
        by_group = np.full((1, C * S), np.nan, dtype=object)
        for g, r in groups:
            by_group[0, g] = call(mf, y_true, y_pred, r)
        out.overall[mf.name] = overall
        out.by_group[mf.name] = by_group.reshape(1, C, S)
    return out


# ----------------------------------------------------------------------------------------------
# bootstrap


def make_rng(random_state: Any) -> Any:
    """A NumPy generator from fairlearn's ``random_state`` (None, an int, a RandomState; also a Generator)."""
    import numbers

    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, (np.random.RandomState, np.random.Generator)):
        return random_state
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        return np.random.default_rng(int(random_state))
    msg = f"Unsupported random_state: {random_state}"
    raise PolfairError(msg)


def _integers(rng: Any, n: int) -> np.ndarray:
    return rng.integers(0, n, size=n) if isinstance(rng, np.random.Generator) else rng.randint(0, n, size=n)


def units_of(frame: pl.DataFrame, columns: Sequence[str], with_ids: bool) -> tuple[pl.DataFrame, np.ndarray | None]:
    """The distinct rows over ``columns`` with their count (``__mf_m``), and each row's unit id."""
    if not with_ids:  # in order of first appearance: the draws of a seed land on the same units every run
        return frame.group_by(list(columns), maintain_order=True).agg(pl.len().alias(M)), None
    uid = frame.select(pl.struct(list(columns)).rank("dense").cast(pl.Int64) - 1).to_series().to_numpy()
    units = (frame.select(columns).with_columns(pl.Series("__mf_u", uid)).group_by("__mf_u")
             .agg(*[pl.col(c).first() for c in columns], pl.len().alias(M)).sort("__mf_u").drop("__mf_u"))  # fmt: skip
    return units, uid


def bootstrap_results(
    frame: pl.DataFrame, known: dict[str, Known], passes: dict[Pass, list[str]], layout: Layout,
    features: Sequence[Feature], columns: Sequence[str], fallback: Sequence[MetricFunction], n_boot: int, rng: Any,
    arrays: Callable[[], tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]],
) -> tuple[Results, Results]:  # fmt: skip
    """Bootstrap replicates: recognised metrics from drawn units (one pass per block of replicates),
    the others called per group on resampled rows. Returns (cell-path results, per-group results).
    """
    n = frame.height
    units, uid = units_of(frame, columns, with_ids=bool(fallback)) if passes else (None, None)
    per_group = Results()
    if fallback:
        if uid is None:
            uid = np.zeros(n, dtype=np.int64)
        y_true, y_pred, cf_codes, group_codes = arrays()
        U = units.height if units is not None else 1
        draws = np.zeros((n_boot, U), dtype=np.int64)
        parts: list[Results] = []
        for b in range(n_boot):  # each replicate calls the user's functions on its rows: a loop by nature
            idx = _integers(rng, n)
            draws[b] = np.bincount(uid[idx], minlength=U)
            parts.append(per_group_results(fallback, y_true, y_pred, layout, cf_codes, group_codes, idx))
        for mf in fallback:
            per_group.by_group[mf.name] = np.concatenate([p.by_group[mf.name] for p in parts])
            per_group.overall[mf.name] = np.concatenate([p.overall[mf.name] for p in parts])
    elif units is not None:
        counts = units[M].to_numpy().astype(np.float64)
        draws = rng.multinomial(n, counts / counts.sum(), size=n_boot)
    if units is None:
        return Results(), per_group
    chunks: dict[str, tuple[list[np.ndarray], list[np.ndarray]]] = {}
    block = max(1, BLOCK_CELLS // max(units.height, 1))
    for b0 in range(0, n_boot, block):  # blocks of replicates: bounded memory, one pass per block
        part = draws[b0 : b0 + block]
        bi, ui = np.nonzero(part)
        drawn = units.drop(M)[ui].with_columns(pl.Series(REP, bi, dtype=pl.Int64), pl.Series(M, part[bi, ui]))
        res, _, refused = cell_results(drawn, known, passes, layout, features, layout.n_cf, rep=part.shape[0])
        if refused:
            raise PolfairError(f"bootstrap: the cell path refused a replicate ({refused})")
        for name in res.by_group:
            parts_bg, parts_ov = chunks.setdefault(name, ([], []))
            parts_bg.append(res.by_group[name].astype(np.float64))
            parts_ov.append(res.overall[name].astype(np.float64))
    cells = Results()
    for name, (parts_bg, parts_ov) in chunks.items():
        cells.by_group[name], cells.overall[name] = np.concatenate(parts_bg), np.concatenate(parts_ov)
    return cells, per_group

