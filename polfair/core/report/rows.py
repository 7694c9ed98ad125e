"""The long report assembled ONCE from wide tables (internal to :mod:`polfair.core.report.build`).

Every row of the long report belongs to an *entity* (a population row set per ``by`` value, an
attribute set per ``by`` value, or a group) and names a metric. The report computes each row kind
wide (one row per entity, one column per metric and column family: ``value``, ``difference``,
``ratio``, the intervals, ...), then :func:`assemble` lays the long rows out in their final order
with integer arithmetic: each entity's rows start at a known offset (entities sorted once, a cumulative
sum of their metric counts), so every column family is written by one vectorised scatter of its wide
matrix, the entity columns (``by``, ``attribute``, ``group``, ``n``, ``group_key``) by one gather, and
the repeated strings (``attribute``, ``metric``, ``reference_group``, ``ci_method``, ``test``) as
Categorical codes. No unpivot of structs, no sort of the long rows, no per-metric plan nodes: the cost
is a small constant per output row.

An underscore module: internal, not public API.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa

from polfair.core import entropy
from polfair.core._args import SMALL_COLLECT
from polfair.core.entropy.intervals import between_limits, individual_limits
from polfair.core.intervals.common import Segments, z_value
from polfair.core.intervals.proportions import rate_inputs
from polfair.core.intervals.spreads import segments_of
from polfair.core.intervals.variance import between_group_variance
from polfair.core.metrics import DISPARITIES, METRICS, Disparity, label_disparities, rate
from polfair.core.passes.counts import COUNT_COLUMNS
from polfair.core.report.intervals import (
    CATEGORIES,
    CiOptions,
    GroupContext,
    IntervalColumns,
    attribute_intervals,
    entropy_columns,
    group_intervals,
    population_intervals,
    variance_columns,
)

__all__ = [
    "ATTR_METRICS", "BENEFIT_VAR", "GROUP_COL", "GROUP_KEY", "NO_CODE", "POP_METRICS", "SORT_A", "SORT_G", "Part",
    "assemble", "attribute_part", "attribute_rows", "categorical_codes", "disparity_list", "group_part", "metric_list",
    "index_needs", "ordered", "population_part", "take",
]  # fmt: skip

#: The sentinel code of a null categorical cell inside :func:`assemble`.
NO_CODE = np.iinfo(np.uint32).max
# A null float cell inside assemble: a NaN with a payload no arithmetic produces, so real NaN
# values (e.g. inf - inf) stay NaN and nulls stay null.
_NULL_BITS = np.uint64(0x7FF4DEADBEEF0001)
_NULL = np.array([_NULL_BITS], dtype=np.uint64).view(np.float64)[0]


@dataclass
class Part:
    """One row kind: its entities and, per column family, a wide frame aligned with them.

    ``entities`` holds the entity columns plus the sort keys (``by`` keys, set index, group index);
    ``metrics`` the metric names in row order; ``floats``/``cats`` map a column family to a frame
    with one column per metric (a subset of ``metrics``; absent metrics give null), Float64 for
    ``floats``, Categorical for ``cats``; ``intervals`` the interval families as arrays (NaN null;
    method and test codes), aligned with ``entities``.
    """

    entities: pl.DataFrame
    metrics: list[str]
    floats: dict[str, pl.DataFrame] = field(default_factory=dict)
    cats: dict[str, pl.DataFrame] = field(default_factory=dict)
    intervals: IntervalColumns | None = None


def categorical_codes(frame: pl.DataFrame) -> np.ndarray:
    """The global Categorical codes of a frame of Categorical (or Enum) columns (null -> :data:`NO_CODE`).

    An Enum column is mapped through its few categories (no per-row string work).
    """
    dtypes = frame.schema.dtypes()
    if frame.height <= _STACK_ROWS and frame.width and all(d == pl.Categorical for d in dtypes):
        # small, Categorical: the columns end to end as one Series, its codes read once (no plan and
        # no call per column: a report's reference groups are ~90 columns of ~100 rows)
        stacked = pl.concat(frame.get_columns(), rechunk=True).to_physical().fill_null(int(NO_CODE))
        return stacked.to_numpy().astype(np.uint32, copy=False).reshape(frame.width, frame.height).T
    if frame.height <= _STACK_ROWS and frame.width:  # small: column by column, no plan (it costs more than the data)
        cols = []
        for c in frame.get_columns():
            v = c.to_physical().to_numpy()  # the codes; floats with NaN where null (float32 for an Enum's UInt8)
            if v.dtype.kind == "f":  # (NO_CODE is not a float32: the codes are set where known)
                codes, known = np.full(v.shape, NO_CODE, dtype=np.uint32), ~np.isnan(v)
                codes[known] = v[known]
                v = codes
            cols.append(v.astype(np.uint32))
        out = np.column_stack(cols)
    else:
        out = frame.select(pl.all().to_physical().cast(pl.UInt32).fill_null(int(NO_CODE))).to_numpy()
    if any(isinstance(dtype, pl.Enum) for dtype in dtypes):
        out = np.array(out)  # writable (to_numpy may return a read-only view)
    for j, dtype in enumerate(dtypes):
        if isinstance(dtype, pl.Enum):
            lut = _global_codes(tuple(dtype.categories))
            col = out[:, j]
            known = col != NO_CODE
            col[known] = lut[col[known]]
    return out


#: Categorical Series of the fixed string lists coded so far (Enum categories, metric names: a few
#: per process), with their global codes. The Series are kept alive on purpose: Polars may recycle
#: the codes of strings no Series uses, and these codes are turned back into Categoricals later.
_HELD_CODES: dict[tuple[str, ...], tuple[pl.Series, np.ndarray]] = {}


def _global_codes(strings: tuple[str, ...]) -> np.ndarray:
    """Global Categorical code (UInt32) of each string, in order; the codes stay valid."""
    if strings not in _HELD_CODES:
        held = pl.Series(strings, dtype=pl.String).cast(pl.Categorical)
        _HELD_CODES[strings] = (held, held.to_physical().cast(pl.UInt32).to_numpy())
    return _HELD_CODES[strings][1]


def _codes_to_categorical(name: str, codes: np.ndarray) -> pl.Series:
    null = codes == NO_CODE
    # the nulls as an Arrow validity mask (no Polars plan: this runs once per Categorical column of the report)
    s = pl.Series(name, pa.array(codes, type=pa.uint32(), mask=null)) if null.any() else pl.Series(name, codes, dtype=pl.UInt32)
    return s.cat.to(pl.Categorical)


#: At most this many runs of entities: the long columns are zero-copy chunks (one per run) of the
#: parts' arrays, aligned across columns; more (e.g. many ``by`` values): one copy per column.
_MAX_CHUNKS = 64
#: ... and only for reports of at least this many rows (below, building the chunks costs more than
#: copying: a 60-cell report has 15 runs of a few hundred rows).
_MIN_CHUNKED_ROWS = 2**20


#: Up to this many entities in a part, :func:`assemble` lays a family's interval arrays out in numpy
#: (one stacked copy); above, through Polars (multi-threaded NaN fill and row-major copy).
_STACK_ROWS = 4096


def _float_column(name: str, values: np.ndarray) -> pl.Series:
    """A Float64 Series over ``values`` (no copy), null where they hold the :data:`_NULL` sentinel.

    The validity is an Arrow bitmap packed from the sentinel mask; the values buffer is shared.
    """
    null = values.view(np.uint64) == _NULL_BITS
    if not null.any():
        return pl.Series(name, values)
    valid = np.packbits(~null, bitorder="little")
    arr = pa.Array.from_buffers(pa.float64(), values.size, [pa.py_buffer(valid), pa.py_buffer(values)])
    return pl.Series(name, arr)


def _nan_to_null(flat: np.ndarray, sources: Iterable[np.ndarray]) -> np.ndarray:
    """``flat`` with its NaN (an interval's null) as the :data:`_NULL` sentinel, in place where ``flat``
    is a writable array of its own (Polars' row-major copy of the sources), else in a copy.

    The floats of ``np.where(np.isnan(flat), _NULL, flat)`` without a second array of the report's size.
    """
    if not flat.flags.writeable or any(np.may_share_memory(flat, v) for v in sources):
        flat = flat.copy()
    np.copyto(flat, _NULL, where=np.isnan(flat))
    return flat


def assemble(
    parts: Sequence[Part],
    sort_keys: list[str],
    entity_columns: list[str],
    float_families: Sequence[str],
    cat_families: Sequence[str],
) -> pl.DataFrame:
    """The long rows of ``parts`` in entity order (``sort_keys``), then metric order within an entity.

    Returns ``entity_columns``, ``metric`` (Categorical), then one column per family (floats as
    Float64, null where the wide frame is null or lacks the metric; cats as Categorical).

    Each part's family is flattened row-major once (entity by entity, its metrics in order); the
    final column is the concatenation of slices of those flat arrays, one slice per *run* of
    consecutive entities of one part (e.g. the groups of one attribute set and ``by`` value):
    zero-copy chunks when there are few runs, one copied array otherwise. The parts' family
    Float64 frames are consumed (removed from ``floats``) so their memory goes as the report grows;
    the Categorical ones stay until their codes are Categoricals again (Polars may recycle the codes
    of strings no Series holds).
    """
    kind, src = "__pf_kind", "__pf_src"
    ents = pl.concat(  # one plan (a plan costs more than a small report's entities)
        [
            p.entities.lazy().select(
                *dict.fromkeys([*sort_keys, *[c for c in entity_columns if c in p.entities.columns]])
            ).with_columns(pl.lit(i, pl.Int32).alias(kind), pl.int_range(pl.len(), dtype=pl.Int64).alias(src))
            for i, p in enumerate(parts)
        ],
        how="diagonal_relaxed",
    ).sort(sort_keys, nulls_last=False, maintain_order=True).collect(**SMALL_COLLECT)
    sizes = np.array([len(p.metrics) for p in parts], dtype=np.int64)
    kinds, srcs = ents[kind].to_numpy(), ents[src].to_numpy()
    count = sizes[kinds]
    base = ents.select(entity_columns)[np.repeat(np.arange(ents.height), count)]
    # runs of consecutive entities of one part with consecutive source rows
    new_run = np.ones(len(kinds), dtype=bool)
    new_run[1:] = (kinds[1:] != kinds[:-1]) | (srcs[1:] != srcs[:-1] + 1)
    first = np.flatnonzero(new_run)
    lengths = np.diff(np.append(first, len(kinds)))
    runs = [(int(kinds[f]), int(srcs[f]) * int(sizes[kinds[f]]), int(n) * int(sizes[kinds[f]]))
            for f, n in zip(first, lengths)]  # fmt: skip

    total = int(count.sum())
    chunked = len(runs) <= _MAX_CHUNKS and total >= _MIN_CHUNKED_ROWS

    def layout(name: str, flats: list[np.ndarray], dtype: type, column: Callable[[str, np.ndarray], pl.Series],
               scattered: dict[int, list[np.ndarray]] | None = None) -> pl.Series:  # fmt: skip
        if chunked:  # one zero-copy chunk per run: the output shares the parts' flat arrays
            return pl.concat([column(name, flats[k][a : a + n]) for k, a, n in runs], rechunk=False)
        out: np.ndarray = np.empty(total, dtype=dtype)  # one allocation per output column
        if not scattered:
            np.concatenate([flats[k][a : a + n] for k, a, n in runs], out=out)  # the copy loop in C
            return column(name, out)
        # a large part's metric columns written straight to their report rows (no row-major copy of
        # the part and no second copy into the column), the other parts' flat arrays to theirs
        for k, metric_columns in scattered.items():
            rows_of = places.by_metric(k)
            for j, values in enumerate(metric_columns):
                out[rows_of[j]] = values
        for k, flat in enumerate(flats):
            if k not in scattered:
                out[places.flat(k)] = flat
        return column(name, out)

    places = _Places(kinds, srcs, count, [p.entities.height for p in parts], [len(p.metrics) for p in parts])
    if chunked:  # the entity columns cut at the same row boundaries (aligned chunks)
        ends = np.cumsum([n for _, _, n in runs])
        base = pl.concat([base.slice(int(e - n), int(n)) for e, (_, _, n) in zip(ends, runs)], rechunk=False)
    at = [{m: j for j, m in enumerate(p.metrics)} for p in parts]  # each part's metric -> column
    all_names = list(dict.fromkeys(m for p in parts for m in p.metrics))
    name_codes = dict(zip(all_names, _global_codes(tuple(all_names))))
    metric = [np.tile(np.array([name_codes[m] for m in p.metrics], dtype=np.uint32), p.entities.height) for p in parts]
    columns = [layout("metric", metric, np.uint32, _codes_to_categorical)]
    for fam in float_families:
        flats: list[np.ndarray] = []
        scattered: dict[int, list[Any]] = {}
        for i, p in enumerate(parts):
            arrays = p.intervals.columns.pop(fam, None) if p.intervals is not None else None
            if arrays and p.entities.height > _STACK_ROWS and not chunked:  # interval arrays (NaN: null) of a
                # large part: each metric's column straight to its report rows, NaN as the sentinel
                scattered[i] = [_sentinel_nan(arrays[m]) if m in arrays else _NULL for m in p.metrics]
                flats.append(_NO_FLAT_F)
                continue
            if arrays and p.entities.height > _STACK_ROWS:  # (chunked: the part's row-major flat, through
                # Polars as the value families below: its NaN fill and transposed copy run on every core)
                h = p.entities.height
                absent = pl.Series(values=np.full(h, _NULL))
                wide_f = pl.DataFrame([pl.Series(m, arrays[m]) if m in arrays else absent.alias(m) for m in p.metrics])
                flats.append(_nan_to_null(wide_f.to_numpy(order="c").reshape(-1), arrays.values()))
                continue
            if arrays:  # interval arrays of a small part: metric-major rows, then one transposed copy
                by_metric = np.empty((len(p.metrics), p.entities.height))  # (contiguous writes, not strided)
                by_metric[[j for j, m in enumerate(p.metrics) if m not in arrays]] = _NULL
                by_metric[[at[i][m] for m in arrays]] = np.stack(list(arrays.values()))  # one copy of every metric
                np.copyto(by_metric, _NULL, where=np.isnan(by_metric))
                flats.append(np.ascontiguousarray(by_metric.T).reshape(-1))
                continue
            frame = p.floats.pop(fam, None)  # consumed: its columns are freed once laid out
            have = set(frame.columns) if frame is not None else set()
            if frame is None or not have:
                flats.append(np.full(p.entities.height * len(p.metrics), _NULL))
                continue
            # row-major (entity, metric) straight from Polars, null and absent metrics as the sentinel
            # (whole-frame calls and Series: no expression per metric, which cost more than the data
            # on small reports)
            # (one plan, and none where every column is Float64 without nulls: a plan costs more than
            # the data of a small report)
            cols = frame.get_columns()
            sub = frame
            if any(c.dtype != pl.Float64 or c.null_count() for c in cols):
                sub = frame.select(pl.all().cast(pl.Float64).fill_null(_NULL))
            if sub.columns != p.metrics and p.entities.height <= _STACK_ROWS:  # small: the columns it has
                # into their places in numpy (no frame of every metric built)
                keep = [j for j, m in enumerate(sub.columns) if m in at[i]]
                full = np.full((p.entities.height, len(p.metrics)), _NULL)
                full[:, [at[i][sub.columns[j]] for j in keep]] = sub.to_numpy()[:, keep]
                flats.append(full.reshape(-1))
                continue
            if sub.columns != p.metrics:
                absent = pl.Series(values=np.full(p.entities.height, _NULL))
                sub = pl.DataFrame([sub[m] if m in have else absent.alias(m) for m in p.metrics])
            flats.append(sub.to_numpy(order="c").reshape(-1))
        columns.append(layout(fam, flats, np.float64, _float_column, scattered))
    for fam in cat_families:
        flats = []
        scattered = {}
        for i, p in enumerate(parts):
            frame = p.cats.get(fam)  # kept until laid out: its strings' codes must stay in use
            codes = p.intervals.columns.get(fam) if p.intervals is not None else None
            h = p.entities.height
            lut = np.append(_global_codes(tuple(CATEGORIES[fam])), NO_CODE) if codes else None  # (−1: null)
            if codes and lut is not None and h > _STACK_ROWS and not chunked:  # large: each metric's codes
                # straight to its report rows, as the interval floats
                scattered[i] = [lut[codes[m]] if m in codes else NO_CODE for m in p.metrics]
                flats.append(_NO_FLAT_U)
                continue
            if codes and lut is not None and h > _STACK_ROWS:  # large, chunked: the row-major copy through
                # Polars (every core), as for the interval floats
                absent = pl.Series(values=np.full(h, NO_CODE, dtype=np.uint32))
                full = pl.DataFrame([pl.Series(m, lut[codes[m]].astype(np.uint32)) if m in codes else absent.alias(m)
                                     for m in p.metrics]).to_numpy(order="c")  # fmt: skip
                flats.append(full.ravel())
                continue
            full = np.full((h, len(p.metrics)), NO_CODE, dtype=np.uint32)
            if codes and lut is not None:  # codes into CATEGORIES[fam], metric-major then one transposed copy
                code_rows = full.T.copy()
                code_rows[[at[i][m] for m in codes]] = lut[np.stack(list(codes.values()))]
                full = np.ascontiguousarray(code_rows.T)
            elif frame is not None and frame.width:
                offs = [at[i][c] for c in frame.columns]
                full[:, offs] = categorical_codes(frame)
            flats.append(full.ravel())
        columns.append(layout(fam, flats, np.uint32, _codes_to_categorical, scattered))
    return base.hstack(columns)


_NO_FLAT_F, _NO_FLAT_U = np.empty(0), np.empty(0, dtype=np.uint32)  # (a scattered part's place in ``flats``)


def _sentinel_nan(values: np.ndarray) -> np.ndarray:
    """``values`` with NaN (an interval's null) as the :data:`_NULL` sentinel (a copy where it has NaN)."""
    nan = np.isnan(values)
    return np.where(nan, _NULL, values) if nan.any() else values


class _Places:
    """Where each part's cells go in :func:`assemble`'s report columns (computed once, when first asked).

    ``kinds``/``srcs``: each report entity's part and row in it (report order); ``count``: its rows.
    """

    def __init__(self, kinds: np.ndarray, srcs: np.ndarray, count: np.ndarray, heights: list[int],
                 widths: list[int]) -> None:  # fmt: skip
        self._kinds, self._srcs, self._widths, self._heights = kinds, srcs, widths, heights
        self._first = np.cumsum(count) - count  # each report entity's first row
        self._starts: dict[int, np.ndarray] = {}
        self._flat: dict[int, np.ndarray] = {}
        self._by_metric: dict[int, np.ndarray] = {}

    def _start(self, k: int) -> np.ndarray:
        """The first report row of each entity of part ``k`` (in the part's order)."""
        if k not in self._starts:
            mine = self._kinds == k
            start = np.empty(self._heights[k], dtype=np.int64)
            start[self._srcs[mine]] = self._first[mine]
            self._starts[k] = start
        return self._starts[k]

    def flat(self, k: int) -> np.ndarray:
        """The report rows of part ``k``'s row-major (entity, metric) cells."""
        if k not in self._flat:
            self._flat[k] = (self._start(k)[:, None] + np.arange(self._widths[k])).reshape(-1)
        return self._flat[k]

    def by_metric(self, k: int) -> np.ndarray:
        """The report rows of part ``k``'s cells, one row of the result per metric (metric-major)."""
        if k not in self._by_metric:
            self._by_metric[k] = np.arange(self._widths[k])[:, None] + self._start(k)[None, :]
        return self._by_metric[k]


# --------------------------------------------------------------------------------------------
# the row kinds (built wide; laid out long by assemble)
# --------------------------------------------------------------------------------------------

#: The per-cell benefit variance the entropy intervals read (summed per group with the counts).
BENEFIT_VAR = "__pf_bvar"
#: The group's display label (working column of the group table).
GROUP_COL = "__pf_group"
#: Sort keys of the entities: attribute-set index and group index (-1 for population/attribute rows).
SORT_A, SORT_G = "__pf_sa", "__pf_sg"
#: The typed group key: a Struct with one field per protected attribute (SQL GROUPING SETS shape).
GROUP_KEY = "group_key"

#: Attribute-row metrics other than the per-metric spreads.
ATTR_METRICS = (
    "demographic_parity_difference", "demographic_parity_ratio",
    "equalized_odds_difference", "equalized_odds_ratio",
    "between_group_variance_base_rate", "between_group_variance_selection_rate",
    "between_group_generalized_entropy_index", "between_group_theil_index",
    "between_group_coefficient_of_variation",
    "smoothed_empirical_differential_fairness", "smoothed_empirical_differential_fairness_predictions",
)  # fmt: skip
#: Attribute-row variances of a rate across the groups, corrected for sampling noise (Lum, Zhang &
#: Bower 2022; :mod:`polfair.core.intervals.variance`): metric name -> the rate.
VARIANCE_OF = {"between_group_variance_base_rate": "base_rate", "between_group_variance_selection_rate": "selection_rate"}
#: Population-row metrics other than the group metrics.
POP_METRICS = (
    "generalized_entropy_index", "theil_index", "coefficient_of_variation",
    "between_all_groups_generalized_entropy_index", "between_all_groups_theil_index",
    "between_all_groups_coefficient_of_variation",
    "smoothed_empirical_differential_fairness", "smoothed_empirical_differential_fairness_predictions",
    "differential_fairness_bias_amplification",
)  # fmt: skip


#: The names that need EDF's computation (on attribute and population rows).
_EDF_NEEDS = frozenset({"smoothed_empirical_differential_fairness", "smoothed_empirical_differential_fairness_predictions",
                        "differential_fairness_bias_amplification"})  # fmt: skip
#: The names that need the entropy family's computation (GE(α), Theil, CV; between groups, between all
#: groups, of all individuals).
_GE_NEEDS = frozenset(n for n in (*ATTR_METRICS, *POP_METRICS) if n.endswith(("entropy_index", "theil_index",
                                                                              "coefficient_of_variation")))  # fmt: skip


def index_needs(shown: Collection[str] | None) -> tuple[bool, bool]:
    """Whether a report showing ``shown`` (``None``: every metric) needs EDF and the entropy indices.

    >>> index_needs(None), index_needs(["selection_rate", "theil_index"])
    ((True, True), (False, True))
    """
    if shown is None:
        return True, True
    return bool(_EDF_NEEDS.intersection(shown)), bool(_GE_NEEDS.intersection(shown))


def _metric_order() -> dict[str, int]:
    names = ["n_missing", *METRICS, *DISPARITIES, *POP_METRICS, *ATTR_METRICS]
    out: dict[str, int] = {}
    for name in names:
        out.setdefault(name, len(out))
    return out


_ORDER = _metric_order()


def ordered(names: Sequence[str]) -> list[str]:
    """Metric names in report order."""
    return sorted(dict.fromkeys(names), key=lambda m: _ORDER.get(m, len(_ORDER)))


def metric_list(has_predictions: bool) -> list[str]:
    """The group metrics a report has (label metrics only without predictions)."""
    return [m.name for m in METRICS.values() if has_predictions or m.needs == "labels"]


def disparity_list(has_predictions: bool) -> list[Disparity]:
    """The named disparities a report has."""
    return list(DISPARITIES.values()) if has_predictions else label_disparities()


def take(part: Part, rows: np.ndarray) -> Part:
    """The entities ``rows`` of a part (every family, frames and interval arrays alike)."""
    idx = pl.Series(rows, dtype=pl.UInt32)
    intervals = None
    if part.intervals is not None:
        intervals = IntervalColumns(len(rows), {f: {m: v[rows] for m, v in d.items()} for f, d in part.intervals.columns.items()})
    return Part(part.entities[idx], part.metrics, {f: v[idx] if v.width else v for f, v in part.floats.items()},
                {f: v[idx] if v.width else v for f, v in part.cats.items()}, intervals)  # fmt: skip


def attribute_rows(groups: pl.DataFrame, sk: list[str]) -> Segments:
    """Each group row's attribute row (by value and attribute set): the group table holds each one's
    groups as one run (sets one after the other, each sorted by the by values), numbered in order.
    """
    cols = [groups.get_column(c) for c in sk]
    if all(c.dtype.is_integer() and not c.null_count() for c in cols):  # integer keys: the runs in numpy, no plan
        change = np.zeros(groups.height, dtype=bool)
        change[:1] = True
        for c in cols:
            a = c.to_numpy()
            change[1:] |= a[1:] != a[:-1]
        runs = np.cumsum(change, dtype=np.int64) - 1
    else:
        runs = groups.select(pl.struct(sk).rle_id()).to_series().to_numpy().astype(np.int64)
    return Segments(runs, int(runs[-1]) + 1 if runs.size else 0)


def _by_rows(frame: pl.DataFrame, ib: list[str], n_by: int) -> Segments:
    """Each row's by value (numbered by first appearance); one by value: all 0, nothing to compute."""
    if n_by == 1:
        return Segments(np.zeros(frame.height, dtype=np.int64), 1)
    return segments_of(frame, ib)[0]


def _entities(frame: pl.DataFrame, ib: list[str], sort_a: pl.Expr, sort_g: pl.Expr, *extra: pl.Expr | str) -> pl.DataFrame:
    return frame.select(*ib, sort_a.cast(pl.Int64).alias(SORT_A), sort_g.cast(pl.Int64).alias(SORT_G), *extra)


@functools.lru_cache(maxsize=8)  # expressions are immutable: built once per metric selection
def _group_exprs(has_predictions: bool, metric_names: tuple[str, ...], disparity_names: tuple[str, ...]
                 ) -> tuple[list[pl.Expr], list[pl.Expr], list[pl.Expr], list[pl.Expr]]:  # fmt: skip
    """The group rows' value (metrics, then named disparities), difference, ratio and reference-name columns."""
    disparities = [d for d in disparity_list(has_predictions) if d.name in disparity_names]

    def r(m: str) -> pl.Expr:
        # Polars may hold a reference value that is the same on every row as a broadcast scalar,
        # and divides by a scalar via its reciprocal (a·(1/b), one ulp off a/b). Adding 0·row
        # index makes it a per-row column (exactly equal), so every ratio is the rounded a/b.
        return pl.col(f"{m}__ref") + 0.0 * pl.col(SORT_G)

    values = [pl.col("n_missing").cast(pl.Float64), *[pl.col(m) for m in metric_names]]
    values += [d.formula(pl.col, r).alias(d.name) for d in disparities]
    names = [*metric_names, *(d.name for d in disparities)]
    return (values, [(pl.col(m) - pl.col(f"{m}__ref")).alias(m) for m in metric_names],
            [rate(pl.col(m), r(m)).alias(m) for m in metric_names], [pl.col(f"{m}__refname").alias(m) for m in names])  # fmt: skip


@functools.lru_cache(maxsize=8)
def _group_select(has_predictions: bool, metric_names: tuple[str, ...], disparity_names: tuple[str, ...]
                  ) -> tuple[list[pl.Expr], list[int]]:  # fmt: skip
    """:func:`_group_exprs`' four families as one select (columns ``<family index>``, a unit separator, the metric) and their sizes."""
    families = _group_exprs(has_predictions, metric_names, disparity_names)
    exprs = [e.alias(f"{i}\x1f{e.meta.output_name()}") for i, fam in enumerate(families) for e in fam]
    return exprs, [len(f) for f in families]


def group_part(
    groups: pl.DataFrame,
    ref: pl.DataFrame,
    sk: list[str],
    ib: list[str],
    has_predictions: bool,
    ci: CiOptions | None = None,
    pop: pl.DataFrame | None = None,
    modes: set[str] | None = None,
    priv: str = "__pf_priv",
    mode: str = "__pf_mode",
    batch: tuple[Segments, GroupContext] | None = None,
    metric_names: Sequence[str] | None = None,
    disparities: Sequence[Disparity] | None = None,
    screen: bool = False,
) -> Part:
    """Group rows: every metric vs the reference, and the named disparities (and their intervals).

    ``batch``: ``groups`` are a batch of the group rows; each row's window (by value, attribute set)
    among all of them and the context their intervals need (:class:`GroupContext`).
    ``metric_names`` / ``disparities``: the group metrics and named disparities to compute (default:
    every one of the report, :func:`metric_list` / :func:`disparity_list`; a metric selection passes
    fewer, each disparity's rates among the metrics). ``screen``: the intervals are only those that
    choose the worst groups of a limited attribute set (:func:`~polfair.core.report.intervals.group_intervals`).
    """
    metric_names = list(metric_list(has_predictions) if metric_names is None else metric_names)
    disparities = list(disparity_list(has_predictions) if disparities is None else disparities)
    wide = groups.join(ref, on=sk, how="left", nulls_equal=True, maintain_order="left")
    key = (has_predictions, tuple(metric_names), tuple(d.name for d in disparities))
    # the four families in ONE plan (a select costs more than a small report's data), then split by name
    columns, sizes = _group_select(*key)
    out = wide.select(columns).get_columns()
    ends = np.cumsum(sizes)
    value_f, difference_f, ratio_f, refname_f = (
        pl.DataFrame([c.alias(c.name.split("\x1f", 1)[1]) for c in out[e - k : e]]) for e, k in zip(ends, sizes)
    )
    names = ["n_missing", *metric_names, *(d.name for d in disparities)]
    entities = _entities(
        groups, ib, pl.col(SORT_A), pl.col(SORT_G), pl.col("attribute").cast(pl.Categorical),
        pl.col(GROUP_COL).alias("group"), pl.col("n").cast(pl.Int64), GROUP_KEY,
    )  # fmt: skip
    part = Part(
        entities,
        names,
        floats={"value": value_f, "difference": difference_f, "ratio": ratio_f},
        cats={"reference_group": refname_f},
    )
    if ci is not None:
        if pop is not None and "overall" in (modes or ()):
            counts = [c for c in COUNT_COLUMNS if c in pop.columns]
            wide = wide.join(pop.select(*ib, *[pl.col(c).alias(f"__pop_{c}") for c in counts]),
                             on=ib, how="left", nulls_equal=True, maintain_order="left")  # fmt: skip
        # the disparity values computed above (part.floats["value"]), for the intervals' null rules
        wide = wide.hstack([part.floats["value"].get_column(d.name) for d in disparities])
        windows, context = batch if batch is not None else (attribute_rows(groups, sk), None)
        by_rows = _by_rows(groups, ib, pop.height if pop is not None else 0)
        part.intervals = group_intervals(wide, metric_names, disparities, opts=ci, modes=modes or set(), windows=windows,
                                         by_rows=by_rows, mode=mode, priv=priv, group_col=GROUP_COL, context=context,
                                         screen=screen)  # fmt: skip
    return part


#: The reason a group has no value of a rate: its denominator is 0.
_NO = {"total": "no counted rows", "positives": "no positives", "negatives": "no negatives",
       "pred_positives": "no predicted positives", "pred_negatives": "no predicted negatives"}  # fmt: skip


class _Probe:
    def __getattr__(self, name: str) -> str:
        return name


def _why(m: str) -> str:
    den = METRICS[m].denominator
    return _NO.get(den(_Probe()), "undefined") if den is not None else "undefined"  # type: ignore[arg-type, call-overload]


def _excluded(defined: pl.Expr, reason: pl.Expr | str) -> pl.Expr:
    """Aggregation: the groups left out (``defined`` false) with the reason, ``"; "``-joined; null if none."""
    why = (
        pl.lit(f" ({reason})")
        if isinstance(reason, str)
        else pl.concat_str([pl.lit(" ("), reason.filter(~defined), pl.lit(")")])
    )
    # filter first: only the (few) groups left out are turned into text
    listed = pl.concat_str([pl.col(GROUP_COL).filter(~defined), why]).str.join("; ")
    return pl.when((~defined).any()).then(listed)


def _spread_aggs(m: str) -> list[pl.Expr]:
    """Spread of metric ``m`` over the groups where it is defined: ``max − min``, ``min / max``, the
    number of groups that entered, the groups left out; null with fewer than two defined groups.
    """
    v = pl.col(m)
    two = v.count() >= 2
    return [
        pl.when(two).then(v.max() - v.min()).alias(f"{m}__d"),
        pl.when(two).then(rate(v.min(), v.max())).alias(f"{m}__r"),
        v.count().cast(pl.Float64).alias(f"{m}__k"),
        _excluded(v.is_not_null(), _why(m)).alias(f"{m}__x"),
    ]


@functools.lru_cache(maxsize=8)  # expressions are immutable: built once per metric selection
def _attribute_aggs(has_predictions: bool, metric_names: tuple[str, ...]) -> tuple[list[pl.Expr], list[pl.Expr]]:
    """Every metric's spread aggregations, and fairlearn's equalized odds' count and exclusions."""
    spread = [e for m in metric_names for e in _spread_aggs(m)]
    extra: list[pl.Expr] = []
    if has_predictions:
        tpr, fpr = pl.col("true_positive_rate"), pl.col("false_positive_rate")
        both = tpr.is_not_null() & fpr.is_not_null()
        why = pl.concat_str([pl.when(tpr.is_null()).then(pl.lit("no positives")),
                             pl.when(fpr.is_null()).then(pl.lit("no negatives"))], separator=", ", ignore_nulls=True)  # fmt: skip
        extra = [both.sum().cast(pl.Float64).alias("__pf_eo_k"), _excluded(both, why).alias("__pf_eo_x")]
    return spread, extra


def _frame_of(frame: pl.DataFrame, exprs: Mapping[str, pl.Expr], cast: Any = None) -> pl.DataFrame:
    """``frame.select(e.alias(name) for name, e in exprs)`` (each cast to ``cast`` if given), without a
    Polars plan where every expression is a plain column (a plan costs more than a small report's data).
    """
    if exprs and all(e.meta.is_column() for e in exprs.values()):
        cols = [frame.get_column(e.meta.output_name()).alias(n) for n, e in exprs.items()]
        return pl.DataFrame([c.cast(cast) for c in cols] if cast is not None else cols)
    return frame.select([(e if cast is None else e.cast(cast)).alias(n) for n, e in exprs.items()])


def attribute_part(
    groups: pl.DataFrame,
    pop: pl.DataFrame,
    sk: list[str],
    ib: list[str],
    has_predictions: bool,
    alpha: float,
    concentration: float,
    ci: CiOptions | None = None,
    metric_names: Sequence[str] | None = None,
    indices: tuple[bool, bool] = (True, True),
    shown: Collection[str] | None = None,
) -> Part:
    """Attribute rows: every metric's spread over the groups; fairlearn's named disparities;
    the between-group entropy indices and EDF. One aggregation over the group table.
    ``metric_names``: the group metrics whose spreads are computed (default: every one of the report;
    with predictions they include the selection rate, TPR and FPR, which fairlearn's disparities read).
    ``indices``: whether EDF and the entropy indices are computed (:func:`index_needs`; default both);
    ``shown``: the names a metric selection shows (``None``: every one), which leaves out the
    between-group variances it does not show.
    """
    metric_names = list(metric_list(has_predictions) if metric_names is None else metric_names)
    want_edf, want_ge = indices
    aggs, finish, index_names = _index_aggs(has_predictions, alpha, "between_group_", want_edf, want_ge)
    any_index = bool(index_names)
    spread, extra = _attribute_aggs(has_predictions, tuple(metric_names))
    variances = {v: m for v, m in VARIANCE_OF.items() if m in metric_names and (shown is None or v in shown)}
    sizes = {m: rate_inputs(m).n for m in variances.values()}
    idx = [*sk, "attribute"]
    index_k = [pl.col(_CNT).count().cast(pl.Float64).alias("__pf_ix_k"),
               _excluded(pl.col(_CNT).is_not_null(), "no counted rows").alias("__pf_ix_x")] if any_index else []
    wide = (
        groups.lazy().with_columns(*(_index_inputs(concentration) if any_index else ()))
        .group_by(idx, maintain_order=True)
        .agg(*spread, *extra, *aggs, *index_k,
             *[_excluded(pl.col(m).is_not_null() & (sizes[m] > 1), pl.when(pl.col(m).is_null()).then(pl.lit(_why(m)))
                         .otherwise(pl.lit("fewer than 2 rows"))).alias(f"{v}__x") for v, m in variances.items()])
        .with_columns(finish).with_columns(_between_rule(index_names))
        .join(pop.lazy().select(*ib, pl.col("n").cast(pl.Int64)), on=ib, how="left", nulls_equal=True,
              maintain_order="left")
        .collect(**SMALL_COLLECT)
    )  # fmt: skip
    values: dict[str, pl.Expr] = {}
    k: dict[str, pl.Expr] = {m: pl.col(f"{m}__k") for m in metric_names}
    x: dict[str, pl.Expr] = {m: pl.col(f"{m}__x") for m in metric_names}
    if has_predictions:
        tpr_d, fpr_d = pl.col("true_positive_rate__d"), pl.col("false_positive_rate__d")
        tpr_r, fpr_r = pl.col("true_positive_rate__r"), pl.col("false_positive_rate__r")
        both_d, both_r = tpr_d.is_not_null() & fpr_d.is_not_null(), tpr_r.is_not_null() & fpr_r.is_not_null()
        values["demographic_parity_difference"] = pl.col("selection_rate__d")
        values["demographic_parity_ratio"] = pl.col("selection_rate__r")
        values["equalized_odds_difference"] = pl.when(both_d).then(pl.max_horizontal(tpr_d, fpr_d))
        values["equalized_odds_ratio"] = pl.when(both_r).then(pl.min_horizontal(tpr_r, fpr_r))
        for name in ("demographic_parity_difference", "demographic_parity_ratio"):
            k[name], x[name] = pl.col("selection_rate__k"), pl.col("selection_rate__x")
        for name in ("equalized_odds_difference", "equalized_odds_ratio"):
            k[name], x[name] = pl.col("__pf_eo_k"), pl.col("__pf_eo_x")
    values |= {n: pl.col(n) for n in index_names}
    for n in index_names:
        k[n], x[n] = pl.col("__pf_ix_k"), pl.col("__pf_ix_x")
    segs = attribute_rows(groups, sk)
    if segs.count != wide.height:  # not one run per attribute row: number them by value
        segs = segments_of(groups, idx)[0]
    var_ci: dict[str, dict[str, np.ndarray]] = {}
    if variances:  # corrected between-group variances of rates: numpy over the group rows, all families at once
        rate_n = groups.select([pl.col(m).cast(pl.Float64) for m in variances.values()]
                               + [sizes[m].alias(f"__pf_n_{m}") for m in variances.values()])  # fmt: skip
        cols = []
        # every rate's families in one call (rate j's families numbered after rate j − 1's: the same
        # per-family sums, in the same row order, so the same floats as one call per rate)
        rates = list(variances.values())
        both = between_group_variance(
            np.concatenate([rate_n[m].to_numpy() for m in rates]),
            np.concatenate([rate_n[f"__pf_n_{m}"].to_numpy() for m in rates]),
            Segments(np.concatenate([segs.codes + j * segs.count for j in range(len(rates))]), len(rates) * segs.count),
            z_value(ci.ci) if ci is not None else None,
        )
        for j, v in enumerate(variances):
            res = {key: values_[j * segs.count : (j + 1) * segs.count] for key, values_ in both.items()}
            var_ci[v] = res
            cols += [pl.Series(v, res["value"], nan_to_null=True), pl.Series(f"{v}__k", res["k"])]
            values[v], k[v], x[v] = pl.col(v), pl.col(f"{v}__k"), pl.col(f"{v}__x")
        wide = wide.hstack(cols)
    names = ordered([*metric_names, *values])
    entities = _entities(wide, ib, pl.col(SORT_A), pl.lit(-1), pl.col("attribute").cast(pl.Categorical), "n")
    part = Part(
        entities,
        names,
        floats={
            "value": _frame_of(wide, values),
            "difference": _frame_of(wide, {m: pl.col(f"{m}__d") for m in metric_names}),
            "ratio": _frame_of(wide, {m: pl.col(f"{m}__r") for m in metric_names}),
            "n_groups": _frame_of(wide, k),
        },
        cats={"excluded_groups": _frame_of(wide, x, pl.Categorical)},
    )
    if ci is not None:  # spreads, equalized odds, EDF: projection limits and homogeneity tests; entropy indices
        # the named values computed above (part.floats["value"]) as columns, for the interval families' null rules
        have = set(wide.columns)
        wide = wide.hstack([part.floats["value"].get_column(n) for n in values if n not in have])
        rows = groups
        part.intervals = attribute_intervals(rows, wide, segs, _by_rows(wide, ib, pop.height), metric_names, opts=ci,
                                             has_predictions=has_predictions, edf=want_edf)  # fmt: skip
        for v, res in var_ci.items():
            variance_columns(part.intervals, v, res)
        if has_predictions and want_ge:  # between-group GE(α), Theil, CV: analytic moments of the cell bootstrap
            g_n, g_x = _benefit_sums(groups)
            keep = g_n > 0  # groups with counted rows
            g_var, g_seg, z = groups[BENEFIT_VAR].to_numpy()[keep], segs.codes[keep], z_value(ci.ci)
            entropy_columns(part.intervals, wide, [m for m in index_names if "differential" not in m],
                            lambda est: between_limits(g_n[keep], g_x[keep], g_var, g_seg, wide.height, est, alpha, z))
    return part


def _between_rule(names: list[str], k: str = "__pf_ix_k") -> list[pl.Expr]:
    """Between-group indices are null when fewer than two groups have counted rows (EDF already is)."""
    return [pl.when(pl.col(k) >= 2).then(pl.col(n)).alias(n) for n in names if "differential" not in n]


def population_part(
    cells: pl.LazyFrame,
    pop: pl.DataFrame,
    keys: list[str],
    ib: list[str],
    has_predictions: bool,
    metric_names: list[str],
    alpha: float,
    concentration: float,
    ci: CiOptions | None = None,
    indices: tuple[bool, bool] = (True, True),
) -> Part:
    """Population rows: every metric of everyone, and the population-level indices.
    ``indices``: whether EDF (and bias amplification) and the entropy indices are computed
    (:func:`index_needs`; default both).
    """
    # the cell table is already the full intersection (one row per by + all keys)
    want_edf, want_ge = indices
    aggs, finish, names = _index_aggs(has_predictions, alpha, "between_all_groups_", want_edf, want_ge)
    between = [n for n in names if "differential" not in n]
    wide = pop.lazy()
    if names:
        vals = (
            cells.with_columns(_index_inputs(concentration)).group_by(ib, maintain_order=True)
            .agg(*aggs, pl.col(_CNT).count().cast(pl.Float64).alias("__pf_ix_k"))
            .with_columns(finish).with_columns(_between_rule(names))
            .select(*ib, *names, "__pf_ix_k")
        )  # fmt: skip
        if has_predictions and want_ge:
            benefits = entropy.benefit_of_individuals(pop.lazy(), ib, summed=True)  # pop: one row per by group
            ind, ind_names = _entropy_family(benefits, ib, alpha)
            vals = vals.join(ind, on=ib, how="full", coalesce=True, nulls_equal=True)
            names = [*ind_names, *names]
        if has_predictions and want_edf:
            names = [*names, "differential_fairness_bias_amplification"]
        wide = wide.join(vals, on=ib, how="left", nulls_equal=True, maintain_order="left")
    if has_predictions and want_edf:
        wide = wide.with_columns(
            differential_fairness_bias_amplification=pl.col("smoothed_empirical_differential_fairness_predictions")
            - pl.col("smoothed_empirical_differential_fairness")
        )
    wide_df = wide.collect(**SMALL_COLLECT)  # as without intervals: their families are evaluated below
    values = [pl.col("n_missing").cast(pl.Float64), *[pl.col(m) for m in metric_names], *[pl.col(n) for n in names]]
    entities = _entities(wide_df, ib, pl.lit(-1), pl.lit(-1), pl.col("n").cast(pl.Int64))
    part = Part(
        entities,
        ordered(["n_missing", *metric_names, *names]),
        floats={
            "value": wide_df.select(values),
            "n_groups": _frame_of(wide_df, {n: pl.col("__pf_ix_k") for n in between}),
        },
    )
    if ci is not None:  # rates' Wilson limits and EDF; the entropy indices
        cells_df = cells.collect()
        segs = _by_rows(cells_df, ib, wide_df.height)
        part.intervals = population_intervals(cells_df, wide_df, segs, metric_names, opts=ci,
                                              has_predictions=has_predictions, edf=want_edf)  # fmt: skip
        if has_predictions and want_ge:  # entropy indices: between all groups (the cells) and of all individuals
            z = z_value(ci.ci)
            counts = cells_df[["tp_n", "fp_n", "tn_n", "fn_n"]].to_numpy().astype(np.float64)
            n, x = counts.sum(axis=1), counts[:, 0] + counts[:, 2] + 2.0 * counts[:, 1]  # rows, TP + TN + 2 FP
            var, keep = cells_df[BENEFIT_VAR].to_numpy(), n > 0
            h = wide_df.height
            entropy_columns(part.intervals, wide_df, [m for m in names if m.startswith("between_all_groups_")],
                            lambda est: between_limits(n[keep], x[keep], var[keep], segs.codes[keep], h, est, alpha, z))
            entropy_columns(part.intervals, wide_df, ["generalized_entropy_index", "theil_index", "coefficient_of_variation"],
                            lambda est: individual_limits(counts[keep, 3], counts[keep, 1], n[keep], segs.codes[keep], h,
                                                          est, alpha, z))  # fmt: skip
    return part


def _benefit_sums(frame: pl.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Each row's counted rows and benefit sum ``TP + TN + 2 FP`` (aif360's benefits, unweighted counts)."""
    tp, fp, tn, fn = (frame.get_column(c).to_numpy() for c in ("tp_n", "fp_n", "tn_n", "fn_n"))
    return np.asarray(tp + fp + tn + fn, dtype=np.float64), np.asarray(tp + tn + 2 * fp, dtype=np.float64)


_B, _CNT = "__pf_b", "__pf_cnt"
_LOGS = ("__pf_lp", "__pf_ln", "__pf_plp", "__pf_pln")  # EDF's log rates: labels, then predictions


@functools.lru_cache(maxsize=4)
def _index_inputs(concentration: float) -> tuple[pl.Expr, ...]:
    """Per-group inputs of the entropy indices and EDF; null for groups without counted rows,
    which every aggregation then skips (as aif360 skips empty groups and unobserved cells).
    """
    c = pl.col
    b, cnt = entropy.group_benefit()
    tot = c("tp") + c("fn") + c("fp") + c("tn")
    lp, ln = entropy.edf_log_rates(c("tp") + c("fn"), tot, concentration)  # positives (labels)
    plp, pln = entropy.edf_log_rates(c("tp") + c("fp"), tot, concentration)  # predicted positives
    exprs = (b, cnt, lp, ln, plp, pln)
    return tuple(pl.when(cnt > 0).then(e).alias(name) for e, name in zip(exprs, (_B, _CNT, *_LOGS)))


@functools.lru_cache(maxsize=32)  # expressions are immutable: built once per (predictions, α, prefix, wanted)
def _index_aggs(has_predictions: bool, alpha: float, prefix: str, want_edf: bool = True, want_ge: bool = True
                ) -> tuple[list[pl.Expr], list[pl.Expr], list[str]]:  # fmt: skip
    """The between-group entropy indices and EDF over :func:`_index_inputs` columns: plain
    aggregations, the expressions that finish them on the aggregated rows, and the output names
    (``want_edf`` / ``want_ge``: EDF / the entropy family left out when ``False``).
    """
    b, cnt = pl.col(_B), pl.col(_CNT)
    edf = "smoothed_empirical_differential_fairness"
    aggs, finish, names = [], [], []
    edfs = ((_LOGS[:2], edf), (_LOGS[2:], f"{edf}_predictions"))[: 2 if has_predictions else 1] if want_edf else ()
    for logs, name in edfs:
        parts = [f"{name}__{i}" for i in range(5)]
        aggs += [e.alias(p) for e, p in zip(entropy.edf_parts(pl.col(logs[0]), pl.col(logs[1])), parts)]
        finish.append(entropy.edf_from_parts(*(pl.col(p) for p in parts)).alias(name))
        names.append(name)
    if not has_predictions or not want_ge:
        return aggs, finish, names
    alphas, ge_finish, ge_names = _entropy_family_parts(alpha, prefix)
    aggs += [entropy.ge_agg_with_nan(a, b, cnt).alias(g) for g, a in alphas.items()]
    return aggs, [*finish, *ge_finish], [*ge_names, *names]


def _entropy_family_parts(alpha: float, prefix: str) -> tuple[dict[str, float], list[pl.Expr], list[str]]:
    """GE(alpha), Theil and CV: the GE columns to aggregate (name -> α), the expressions that
    finish them on the aggregated rows, and the output names (``<prefix>generalized_entropy_index``, ...).
    """
    alphas = {f"{prefix}generalized_entropy_index": alpha, f"{prefix}theil_index": 1.0, "__pf_ge2": 2.0}
    # GE >= 0 in exact arithmetic (Jensen): the report clamps rounding noise such as -1e-17 (groups
    # with equal mean benefit), where aif360 returns the tiny negative and a NaN CV
    clamped = {g: pl.col(g).fill_nan(None).clip(lower_bound=0.0) for g in alphas}
    ge, theil, cv = (f"{prefix}{x}" for x in ("generalized_entropy_index", "theil_index", "coefficient_of_variation"))
    finish = [
        clamped[ge].alias(ge),
        clamped[theil].alias(theil),
        (2.0 * clamped["__pf_ge2"]).sqrt().alias(cv),
    ]  # aif360: sqrt(2·GE(2))
    return alphas, finish, [ge, theil, cv]


def _entropy_family(benefits: pl.DataFrame | pl.LazyFrame, ib: list[str], alpha: float) -> tuple[pl.LazyFrame, list[str]]:
    """GE(alpha), Theil and CV of all individuals (benefits as distinct values and counts)."""
    alphas, finish, names = _entropy_family_parts(alpha, "")
    return entropy.generalized_entropy_indices(benefits.lazy(), alphas, ib).select(*ib, *finish), names
