"""The long report assembled ONCE from wide tables (internal to :mod:`polfair.core.report`).

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

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import polars as pl
import pyarrow as pa

__all__ = ["NO_CODE", "Part", "assemble", "categorical_codes"]

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
    ``floats``, Categorical for ``cats``.
    """

    entities: pl.DataFrame
    metrics: list[str]
    floats: dict[str, pl.DataFrame] = field(default_factory=dict)
    cats: dict[str, pl.DataFrame] = field(default_factory=dict)


def categorical_codes(frame: pl.DataFrame) -> np.ndarray:
    """The global Categorical codes of a frame of Categorical columns (null -> :data:`NO_CODE`)."""
    return frame.select(pl.all().to_physical().cast(pl.UInt32).fill_null(int(NO_CODE))).to_numpy()


def _codes_to_categorical(name: str, codes: np.ndarray) -> pl.Series:
    s = pl.Series(name, codes, dtype=pl.UInt32)
    if (codes == NO_CODE).any():
        s = pl.select(pl.when(s != int(NO_CODE)).then(s).alias(name)).to_series()
    return s.cat.to(pl.Categorical)


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
    consecutive entities of one part (e.g. the groups of one attribute set and ``by`` value).
    """
    kind, src = "__pf_kind", "__pf_src"
    ents = pl.concat(
        [
            p.entities.select(*dict.fromkeys([*sort_keys, *[c for c in entity_columns if c in p.entities.columns]]))
            .with_columns(pl.lit(i, pl.Int32).alias(kind), pl.int_range(pl.len(), dtype=pl.Int64).alias(src))
            for i, p in enumerate(parts)
        ],
        how="diagonal_relaxed",
    ).sort(sort_keys, nulls_last=False, maintain_order=True)
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

    def layout(flats: list[np.ndarray]) -> np.ndarray:
        return np.concatenate([flats[k][a : a + n] for k, a, n in runs])

    all_names = list(dict.fromkeys(m for p in parts for m in p.metrics))
    name_codes = dict(zip(all_names, pl.Series(all_names).cast(pl.Categorical).to_physical().to_numpy()))
    metric = layout([np.tile(np.array([name_codes[m] for m in p.metrics], dtype=np.uint32), p.entities.height)
                     for p in parts])  # fmt: skip
    columns = [_codes_to_categorical("metric", metric)]
    for fam in float_families:
        flats = []
        for p in parts:
            full = np.full((p.entities.height, len(p.metrics)), _NULL)
            frame = p.floats.get(fam)
            if frame is not None and frame.width:
                offs = [p.metrics.index(c) for c in frame.columns]
                full[:, offs] = frame.select(pl.all().cast(pl.Float64).fill_null(pl.lit(_NULL))).to_numpy()
            flats.append(full.ravel())
        out = layout(flats)
        null = out.view(np.uint64) == _NULL_BITS
        columns.append(pl.Series(fam, pl.from_arrow(pa.array(out, mask=null))))
    for fam in cat_families:
        flats = []
        for p in parts:
            full = np.full((p.entities.height, len(p.metrics)), NO_CODE, dtype=np.uint32)
            frame = p.cats.get(fam)
            if frame is not None and frame.width:
                offs = [p.metrics.index(c) for c in frame.columns]
                full[:, offs] = categorical_codes(frame)
            flats.append(full.ravel())
        columns.append(_codes_to_categorical(fam, layout(flats)))
    return base.hstack(columns)
