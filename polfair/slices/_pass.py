"""The level passes of the slice search: ONE scan of the input per lattice level, on every engine.

Each row carries its features (as compiled by the input contract: :func:`polfair.core.contract.key`,
numeric features cut at their bin edges), its error ``e`` (the ``errors`` loss, or the numerator of
a rate on the rows of its denominator), its weight ``w`` and the outcome code (missing and invalid
values, :mod:`polfair.core.contract`). The statistics of a slice are sums over its rows: ``n``
(rows), ``s`` = Σw, ``e`` = Σw·e, ``d`` = Σw·(e − c), ``e2`` = Σw·(e − c)², ``w2`` = Σw², and ``m`` = max e; ``c`` is a
reference error near the mean and every weight is read in a power-of-two unit (:meth:`Source.reference`),
so that the spreads are centred (losses like 1e9 + U(0, 1)) and weights of 1e-200 or 1e200 give the
sums of weights near 1 (exactly those, scaled by a power of two).

* **Level 1** reads every feature's values with their sums (and the outcome codes, for the one
  post-pass check): for a Polars input (DataFrame, LazyFrame, parquet/CSV path) one streaming scan
  whose batches are grouped per feature and merged (memory: the features' distinct values); for a
  Spark/DuckDB frame one query in that engine (the features unpivoted to ``(feature, value)`` text
  and grouped with the code), whose small result is typed back to the features' dtypes.
* **Level L ≥ 2** evaluates every candidate of the level from one scan: each feature is mapped to
  a small code (its values that occur in a candidate; every other value to a sentinel), each
  candidate *feature set* folds its features' codes into one integer key, and the key indexes the
  candidates of that set. Polars: one streaming scan, whose batches are accumulated per set with
  ``numpy.bincount`` over the candidate index (and ``np.maximum.at`` for the largest error);
  Spark/DuckDB: one query in the engine, the sets' keys unpivoted to ``(set, key)`` rows and grouped
  (both engines expand each row into its sets within one scan). Memory is bounded by the candidates
  (the accumulators) and the key tables of the sets, not by the rows.
* **Bins**: numeric features with more distinct values than ``bins`` are cut at their quantiles
  before level 1, which costs one more scan (Polars: a systematic sample of at most 2**21 values per
  feature, exact below that; Spark/DuckDB: the engine's ``quantile``); bins given as edges need none.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from polfair.core import contract
from polfair.core.contract import CODE, Column, Compiled
from polfair.exceptions import InvalidInputError

__all__ = ["STATS", "Accumulator", "Feature", "ForeignSource", "LevelPlan", "Rows", "Source", "cut_labels", "source_of"]

_E, _W, _WE, _WE2, _W2, _NB = "__pf_e", "__pf_w", "__pf_we", "__pf_we2", "__pf_w2", "__pf_nb"
#: The statistics of a slice (sums over its counted rows; ``m`` the largest error).
STATS = ("n", "s", "e", "d", "e2", "w2", "m")
#: Rows per batch of the Polars passes.
CHUNK_ROWS = 1 << 18
#: Values per feature kept by the Polars sample the quantile edges come from.
SAMPLE_ROWS = 1 << 21
#: Counted rows a Spark/DuckDB search reads first (a LIMIT query) for its reference error and weight unit.
REFERENCE_ROWS = 1 << 12
#: Candidate-key table entries per feature set beyond which a set is looked up by sorted search.
_MAX_TABLE = 1 << 22


# ---------------------------------------------------------------------------------------------
# features and rows


def _number(v: float, integer: bool) -> str:
    if integer and float(v).is_integer():
        return str(int(v))
    text = repr(float(v))
    return text[:-2] if text.endswith(".0") else text


def cut_labels(edges: Sequence[float], integer: bool) -> list[str]:
    """Labels of the bins cut at ``edges``: ``(-inf, c1)``, ``[c1, c2)``, ..., ``[cm, inf)``.

    Examples
    --------
    >>> cut_labels([25, 37.5], integer=False)
    ['(-inf, 25)', '[25, 37.5)', '[37.5, inf)']
    """
    shown = [_number(c, integer) for c in edges]
    if not shown:
        return ["(-inf, inf)"]
    return [f"(-inf, {shown[0]})", *(f"[{a}, {b})" for a, b in zip(shown, shown[1:])), f"[{shown[-1]}, inf)"]


@dataclass
class Feature:
    """One feature of the search.

    Attributes
    ----------
    name
        The output column's name.
    column
        The checked input column (engine expression, dtype).
    edges
        Cut points of a binned numeric feature (ascending), else ``None``.
    values
        The feature's values in one-hot order (level 1 fills it): the input's values (a binned
        feature's bin indices), sorted, null last.
    """

    name: str
    column: Column
    edges: list[float] | None = None
    values: pl.Series | None = None

    @property
    def binned(self) -> bool:
        return self.edges is not None

    @property
    def dtype(self) -> pl.DataType:
        """The output column's dtype: the input's, or an Enum of the bin labels."""
        if self.edges is None:
            return self.column.dtype
        return pl.Enum(cut_labels(self.edges, self.column.dtype.is_integer()))

    def expr(self, eng: Any) -> Any:
        """The feature's value per row (a binned feature: its bin index, null stays null)."""
        x = contract.key(eng, self.column, role="features")
        if self.edges is None:
            return x
        idx = eng.lit(0)
        for c in self.edges:
            idx = idx + (x >= float(c)).cast(eng.ns.Int64)
        return idx

    def shown(self) -> pl.Series:
        """The values in the output dtype (a binned feature's labels)."""
        assert self.values is not None
        if self.edges is None:
            return self.values
        labels = cut_labels(self.edges, self.column.dtype.is_integer())
        idx = self.values.cast(pl.Int64)
        return pl.Series(self.name, [None if i is None else labels[i] for i in idx.to_list()], dtype=self.dtype)


@dataclass
class Rows:
    """The compiled per-row columns of the search (engine expressions).

    Attributes
    ----------
    code
        The outcome code (missing and invalid values; :mod:`polfair.core.contract`).
    e
        The error (Float64), meaningful on counted rows.
    w
        The weight (Float64), ``None`` without weights.
    counted
        The outcome codes of the rows the search counts (valid values; for a rate, the rows of its
        denominator).
    compiled
        The compiled roles, for :func:`polfair.core.contract.check_problems`.
    binary
        ``True`` when every error is 0 or 1 by construction (Boolean errors, a confusion rate).
    """

    code: Any
    e: Any
    w: Any | None
    counted: list[int]
    compiled: dict[str, Compiled]
    binary: bool


@dataclass
class LevelPlan:
    """What one level's scan evaluates: the candidates' feature sets, codes and keys.

    Attributes
    ----------
    codes
        Feature index -> (the values that occur in a candidate, as a Series of the pass dtype; whether
        null is one of them): value ``j`` of the list has code ``j``, null the next code, every other
        value the sentinel (the list's length plus one, or its length without null).
    sets
        Per feature set: (feature indices, radices, candidate keys (sorted), candidate positions).
    size
        Number of candidates.
    """

    codes: dict[int, tuple[pl.Series, bool]]
    sets: list[tuple[tuple[int, ...], list[int], np.ndarray, np.ndarray]] = field(default_factory=list)
    size: int = 0
    tables: list[np.ndarray | None] = field(default_factory=list)

    @staticmethod
    def build(g: np.ndarray, feature: np.ndarray, value: np.ndarray, features: Sequence[Feature]) -> LevelPlan:
        """The plan of candidates ``g`` ((m, L) one-hot columns; ``feature``/``value`` per column)."""
        fsets, inverse = np.unique(feature[g], axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        vals = value[g]
        codes: dict[int, tuple[pl.Series, bool]] = {}
        compact: dict[int, np.ndarray] = {}
        for f in np.unique(fsets):
            f = int(f)
            used = np.unique(vals[feature[g] == f])
            series = features[f].values
            assert series is not None
            has_null = series.null_count() > 0 and int(used[-1]) == series.len() - 1
            nonnull = used[:-1] if has_null else used
            codes[f] = (series.gather(nonnull), has_null)
            place = np.full(series.len(), -1, dtype=np.int64)
            place[used] = np.arange(used.shape[0])
            compact[f] = place
        plan = LevelPlan(codes, size=int(g.shape[0]))
        for s, fs in enumerate(fsets):
            rows = np.flatnonzero(inverse == s)
            radices = [int(codes[int(f)][0].len() + codes[int(f)][1]) + 1 for f in fs]
            if sum(math.log2(r) for r in radices) > 62:
                msg = ("slice_scan: a feature set's value combinations exceed 2**62; bin the features with "
                       "the most distinct values (bins=) or lower max_level")  # fmt: skip
                raise InvalidInputError(msg)
            key = np.zeros(rows.shape[0], dtype=np.int64)
            for j, f in enumerate(fs):
                key = key * radices[j] + compact[int(f)][vals[rows, j]]
            order = np.argsort(key, kind="stable")
            plan.sets.append((tuple(int(f) for f in fs), radices, key[order], rows[order]))
            space = math.prod(radices)
            table: np.ndarray | None = None
            if space <= _MAX_TABLE:  # key -> the candidate's place in the set + 1 (0: not a candidate)
                table = np.zeros(space, dtype=np.int64)
                table[key[order]] = np.arange(1, rows.shape[0] + 1)
            plan.tables.append(table)
        return plan

    def code_expr(self, eng: Any, f: int, x: Any) -> Any:
        """The code of feature ``f``'s pass value ``x`` (engine expression, Int64)."""
        vals, has_null = self.codes[f]
        sentinel = vals.len() + (1 if has_null else 0)
        if vals.len():
            coded = x.replace_strict(vals.to_list(), list(range(vals.len())), default=sentinel,
                                     return_dtype=eng.ns.Int64)  # fmt: skip
        else:
            coded = eng.lit(sentinel).cast(eng.ns.Int64)
        null_code = vals.len() if has_null else sentinel
        return eng.ns.when(x.is_null()).then(eng.lit(null_code).cast(eng.ns.Int64)).otherwise(coded)

    def key_expr(self, eng: Any, s: int, coded: dict[int, Any]) -> Any:
        """Feature set ``s``'s folded key of a row (engine expression, Int64)."""
        fs, radices, _, _ = self.sets[s]
        key = coded[fs[0]]
        for f, r in zip(fs[1:], radices[1:]):
            key = key * r + coded[f]
        return key


# ---------------------------------------------------------------------------------------------
# accumulation (numpy): the statistics of candidates from key arrays


class Accumulator:
    """Sums of a level's candidates, added batch by batch (or from a grouped engine result)."""

    def __init__(self, size: int, *, weighted: bool, binary: bool) -> None:
        self.weighted, self.binary = weighted, binary
        self.n = np.zeros(size + 1, dtype=np.int64)
        self.sums = {k: np.zeros(size + 1) for k in self.columns}
        self.m = np.zeros(size + 1)

    @property
    def columns(self) -> tuple[str, ...]:
        if self.weighted:
            return ("s", "e", "w2") if self.binary else ("s", "e", "d", "e2", "w2")
        return ("e",) if self.binary else ("e", "d", "e2")

    def add(self, idx: np.ndarray, pos: np.ndarray, values: dict[str, np.ndarray], e: np.ndarray) -> None:
        """Add rows of one feature set: ``idx`` is the row's place among the set's candidates + 1 (0: none),
        ``pos`` the set's candidates' indices in the level (the work is per set, not per level).
        """
        size = pos.shape[0] + 1
        at = pos + 1
        if self.binary and not self.weighted:  # 0/1 errors: one count of (candidate, error)
            both = np.bincount(idx * 2 + values["bit"], minlength=2 * size).reshape(size, 2)
            self.n[at] += both[1:, 0] + both[1:, 1]
            self.sums["e"][at] += both[1:, 1]
            return
        self.n[at] += np.bincount(idx, minlength=size)[1:]
        for k in self.columns:
            self.sums[k][at] += np.bincount(idx, weights=values[k], minlength=size)[1:]
        m = np.zeros(size)
        np.maximum.at(m, idx, e)
        self.m[at] = np.maximum(self.m[at], m[1:])

    def add_grouped(self, idx: np.ndarray, n: np.ndarray, sums: dict[str, np.ndarray], m: np.ndarray) -> None:
        """Add per-candidate totals of a grouped result (``idx`` as in :meth:`add`)."""
        np.add.at(self.n, idx, n)
        for k in self.columns:
            np.add.at(self.sums[k], idx, sums[k])
        np.maximum.at(self.m, idx, m)

    def result(self) -> dict[str, np.ndarray]:
        n = self.n[1:]
        out: dict[str, np.ndarray] = {"n": n}
        out |= {k: v[1:] for k, v in self.sums.items()}
        if not self.weighted:
            out["s"] = n.astype(np.float64)
            out["w2"] = out["s"]
        if self.binary:
            out["e2"] = out["e"]
            out["d"] = out["e"]
            if not self.weighted:
                self.m[1:] = (out["e"] > 0).astype(np.float64)
        out["m"] = self.m[1:]
        return out


def _lookup(plan: LevelPlan, s: int, key: np.ndarray) -> np.ndarray:
    """Each key's place among set ``s``'s candidates + 1 (0 where the key is not a candidate)."""
    table = plan.tables[s]
    if table is not None:
        return table[key]
    keys = plan.sets[s][2]
    at = np.minimum(np.searchsorted(keys, key), keys.shape[0] - 1)
    return np.where(keys[at] == key, at + 1, 0)


# ---------------------------------------------------------------------------------------------
# the sources: Polars (streaming batches) and Spark/DuckDB (in-engine queries)


class Source:
    """The passes of one search over one input (the Polars implementation; see :class:`ForeignSource`)."""

    foreign = False

    def __init__(self, frame: Any, rows: Rows, features: list[Feature]) -> None:
        self.frame, self.rows, self.features = frame, rows, features
        self.eng = frame.eng
        self.weighted = rows.w is not None
        self.binary = rows.binary
        self.scans = 0
        #: Counted rows whose error is neither 0 nor 1 (level 1 sets it).
        self.nonbinary = 0
        #: The reference error ``c`` of the squared sums (``e2`` = Σw·(e − c)², centred near the mean so
        #: that losses like 1e9 + U(0, 1) keep their spread) and the weights' power-of-two unit ``2^k``
        #: (every weight is read as w·2^−k, exact: 1e-200 and 1e200 weights give the weights-1 sums);
        #: both are set from the first counted rows (Polars: level 1's first batch; an engine: :meth:`reference`).
        self.shift, self.unit = 0.0, 0

    def _reference_from(self, e: np.ndarray, w: np.ndarray | None) -> None:
        """Set :attr:`shift` (the rows' weighted mean error) and :attr:`unit` (the largest weight's binary
        exponent) from the first counted rows, and read the search's weights in that unit from then on.
        """
        unit = 0
        if w is not None and w.size and float(w.max()) > 0:
            unit = int(np.frexp(float(w.max()))[1])
            w = w * 2.0**-unit
        shift = 0.0
        ok = np.isfinite(e)
        if not self.binary and ok.any():
            if w is not None and float(w[ok].sum()) > 0:
                shift = float(np.average(e[ok], weights=w[ok]))
            else:
                shift = float(e[ok].mean())
        self.shift, self.unit = (shift if np.isfinite(shift) else 0.0), unit
        r = self.rows
        if unit and r.w is not None:
            self.rows = Rows(r.code, r.e, r.w * 2.0**-unit, r.counted, r.compiled, r.binary)

    def reference(self) -> None:
        """Polars: nothing before level 1, whose first batch sets :attr:`shift` and :attr:`unit`."""

    # -- bins ------------------------------------------------------------------------------------

    def value_profile(self, idx: Sequence[int], qs: Sequence[float]) -> dict[int, tuple[int, list[float]]]:
        """Distinct values and quantiles ``qs`` (linear) of numeric features (one scan; a sample)."""
        lf = self.frame.lf.select([contract.key(self.eng, self.features[i].column, role="features")
                                  .cast(pl.Float64).alias(f"__pf_x{i}") for i in idx])  # fmt: skip
        self.scans += 1
        buffers: dict[int, list[np.ndarray]] = {i: [] for i in idx}
        stride, held = 1, 0
        for batch in lf.collect_batches(chunk_size=CHUNK_ROWS):
            for i in idx:
                col = batch[f"__pf_x{i}"].to_numpy()
                buffers[i].append(col[::stride])
            held += -(-batch.height // stride)
            while held > SAMPLE_ROWS:  # a systematic sample: every stride-th row, the stride doubling
                for i in idx:
                    buffers[i] = [np.concatenate(buffers[i])[::2]]
                stride, held = stride * 2, -(-held // 2)
        out: dict[int, tuple[int, list[float]]] = {}
        for i in idx:
            x = np.concatenate(buffers[i]) if buffers[i] else np.zeros(0)
            x = x[~np.isnan(x)]
            if x.size == 0:
                out[i] = (0, [])
                continue
            out[i] = (int(np.unique(x).size), [float(v) for v in np.quantile(x, qs, method="linear")])
        return out

    # -- level 1 ---------------------------------------------------------------------------------

    def _base(self, feature_exprs: dict[str, Any], *, counted_only: bool) -> pl.LazyFrame:
        r = self.rows
        cols = {CODE: r.code, _E: r.e, **({_W: r.w} if r.w is not None else {}), **feature_exprs}
        lf = self.frame.lf.select([e.alias(n) for n, e in cols.items()])
        if counted_only:
            lf = lf.filter(pl.col(CODE).is_in(r.counted)).drop(CODE)
        return lf

    def _aggs(self, ns: Any = pl) -> list[Any]:
        """The level-1 sums of a value, in the namespace ``ns`` (Polars, or narwhals for an engine)."""
        e = ns.col(_E)
        d = e - self.shift  # the squared sums are centred at the reference error
        out = [ns.len().cast(ns.Int64).alias("n")]
        if self.weighted:
            w = ns.col(_W)
            out += [w.sum().alias("s"), (w * e).sum().alias("e"), (w * w).sum().alias("w2"), w.min().alias("w_min")]
            if not self.binary:
                out += [(w * d).sum().alias("d"), (w * d * d).sum().alias("e2")]
        else:
            out.append(e.sum().alias("e"))
            if not self.binary:
                out += [d.sum().alias("d"), (d * d).sum().alias("e2")]
        out.append(e.max().alias("m"))
        return out

    def _merge(self, parts: list[pl.DataFrame], *, single: bool = True) -> pl.DataFrame:
        """Sum tables of (value, sums) per value (``single``: one table already has one row per value)."""
        if len(parts) == 1 and single:
            return parts[0]
        frame = pl.concat(parts, how="vertical_relaxed")
        aggs = [pl.col(c).sum() for c in frame.columns if c not in ("v", "m", "w_min")] + [pl.col("m").max()]
        if "w_min" in frame.columns:
            aggs.append(pl.col("w_min").min())
        return frame.group_by("v").agg(aggs)

    def _binned(self, codes: np.ndarray, values: dict[str, np.ndarray], e: np.ndarray, w: np.ndarray | None
                ) -> dict[str, np.ndarray]:  # fmt: skip
        """Sums per code (``codes`` >= 0: bins ``codes + 1``; −1 is null: bin 0)."""
        idx = codes + 1
        size = int(idx.max(initial=0)) + 1
        out: dict[str, np.ndarray] = {"n": np.bincount(idx, minlength=size)}
        for k in ("s", "e", "d", "e2", "w2") if self.weighted else ("e", "d", "e2"):
            if k in ("d", "e2") and self.binary:
                continue
            out[k] = np.bincount(idx, weights=values[k], minlength=size)
        m = np.zeros(size)
        np.maximum.at(m, idx, e)
        out["m"] = m
        if w is not None:
            wm = np.full(size, np.inf)
            np.minimum.at(wm, idx, w)
            out["w_min"] = wm
        return out

    def _level1_part(self, s: pl.Series, ok: pl.DataFrame, values: dict[str, np.ndarray], e: np.ndarray,
                     w: np.ndarray | None) -> pl.DataFrame:  # fmt: skip
        """One feature's sums in one batch: numpy on integer codes where the dtype gives them, else a group_by."""
        kind = contract.dtype_kind(s.dtype)
        if kind in ("categorical", "enum", "boolean") or kind == "integer":
            x = s.to_physical().cast(pl.Int64) if kind != "boolean" else s.cast(pl.Int64)
            lo = 0
            if kind == "integer":
                lo_, hi_ = x.min(), x.max()
                if lo_ is not None and int(hi_) - int(lo_) > max(1 << 16, 4 * s.len()):  # type: ignore[arg-type]
                    return ok.group_by(pl.col(s.name).alias("v")).agg(self._aggs())
                lo = int(lo_) if lo_ is not None else 0  # type: ignore[arg-type]
            codes = (x - lo).fill_null(-1).to_numpy()
            sums = self._binned(codes, values, e, w)
            present = np.flatnonzero(sums["n"])
            ids = pl.Series(present - 1, dtype=pl.Int64)
            v = pl.when(ids >= 0).then(ids + lo)
            decoded = pl.select(v.alias("v")).to_series()
            if kind in ("categorical", "enum"):
                decoded = decoded.cast(pl.UInt32).cat.to(s.dtype)
            else:
                decoded = decoded.cast(s.dtype)
            return pl.DataFrame([decoded.alias("v"), *(pl.Series(k, a[present]) for k, a in sums.items())])
        return ok.group_by(pl.col(s.name).alias("v")).agg(self._aggs())

    def level1(self) -> tuple[list[pl.DataFrame], pl.DataFrame]:
        """Per feature, its values' statistics (column ``v`` in the pass dtype, and the stats); and the
        outcome codes' row counts (``CODE``, ``n``) of every input row.
        """
        exprs = {f"__pf_f{i}": f.expr(self.eng) for i, f in enumerate(self.features)}
        lf = self._base(exprs, counted_only=False)
        self.scans += 1
        counted = np.zeros(256, dtype=bool)
        counted[self.rows.counted] = True
        codes = np.zeros(256, dtype=np.int64)
        parts: list[list[pl.DataFrame]] = [[] for _ in self.features]
        nonbinary = 0
        first = True
        for batch in lf.collect_batches(chunk_size=CHUNK_ROWS):
            code = batch[CODE].to_numpy()
            codes += np.bincount(code, minlength=256)
            mask = counted[code]
            ok = batch.filter(pl.Series(mask)) if not mask.all() else batch
            e = ok[_E].to_numpy()
            if first and ok.height:  # the reference error and the weights' unit, from the first counted rows
                self._reference_from(e, ok[_W].to_numpy() if self.weighted else None)
                first = False
            if self.unit and self.weighted:
                ok = ok.with_columns(pl.col(_W) * 2.0**-self.unit)
            w = ok[_W].to_numpy() if self.weighted else None
            if not self.binary:
                nonbinary += int(np.count_nonzero((e != 0.0) & (e != 1.0)))
            values = self._values(e, w)
            for i in range(len(self.features)):
                parts[i].append(self._level1_part(ok[f"__pf_f{i}"], ok, values, e, w))
                if len(parts[i]) >= 64:
                    parts[i] = [self._merge(parts[i])]
        self.nonbinary = nonbinary
        tables = [self._merge(p) if p else self._empty(i) for i, p in enumerate(parts)]
        table = pl.DataFrame({CODE: np.arange(256, dtype=np.uint8), "n": codes}).filter(pl.col("n") > 0)
        return tables, table

    def _empty(self, i: int) -> pl.DataFrame:
        dtype = pl.Int64() if self.features[i].binned else self.features[i].column.dtype
        return pl.DataFrame(schema={"v": dtype, "n": pl.Int64, "e": pl.Float64, "m": pl.Float64})

    # -- level L ---------------------------------------------------------------------------------

    def _coder(self, plan: LevelPlan, f: int) -> tuple[Any, Callable[[pl.Series], np.ndarray]]:
        """Feature ``f``'s column for the scan and the numpy function that turns a batch of it into codes.

        Text (String, Categorical, Enum): cast in the scan to an Enum of the candidates' values
        (``strict=False``: any other value is null), whose physical index is the code. Everything
        else (integers and bins, floats, booleans, dates, decimals): its numbers, coded in numpy by a
        table over their range or a sorted search. (``replace_strict`` would do both in one
        expression, but the streaming engine does not stream it: it holds the whole column.)
        """
        vals, has_null = plan.codes[f]
        sentinel = vals.len() + (1 if has_null else 0)
        null_code = vals.len() if has_null else sentinel
        x = self.features[f].expr(self.eng)
        kind = "integer" if self.features[f].binned else contract.dtype_kind(vals.dtype)
        if kind in ("string", "categorical", "enum"):
            texts = vals.cast(pl.String).to_list()
            coded = x.cast(pl.String).cast(pl.Enum(texts), strict=False).to_physical().cast(pl.Int64)
            expr = pl.when(x.is_null()).then(pl.lit(null_code, pl.Int64)).otherwise(coded.fill_null(sentinel))
            return expr, lambda s: s.to_numpy()
        if kind == "boolean":
            expr, known = x.cast(pl.Int64), vals.cast(pl.Int64).to_numpy()
        elif kind in ("date", "datetime"):
            expr, known = x.to_physical().cast(pl.Int64), vals.to_physical().cast(pl.Int64).to_numpy()
        elif kind == "integer":
            expr, known = x.cast(pl.Int64), vals.cast(pl.Int64).to_numpy()
        else:  # float, decimal
            expr, known = x.cast(pl.Float64), vals.cast(pl.Float64).to_numpy()
        order = np.argsort(known, kind="stable")
        ordered = known[order]
        if kind not in ("float", "decimal") and known.size and int(ordered[-1]) - int(ordered[0]) <= (1 << 22):
            lo = int(ordered[0])
            table = np.full(int(ordered[-1]) - lo + 1, sentinel, dtype=np.int64)
            table[known - lo] = np.arange(known.size)

            def code(s: pl.Series) -> np.ndarray:
                raw = s.fill_null(lo - 1).to_numpy().astype(np.int64) - lo
                inside = (raw >= 0) & (raw < table.size)
                out = np.where(inside, table[np.clip(raw, 0, table.size - 1)], sentinel)
                out[s.is_null().to_numpy()] = null_code
                return out

            return expr, code

        def search(s: pl.Series) -> np.ndarray:
            raw = s.to_numpy()
            if ordered.size == 0:
                out = np.full(raw.shape[0], sentinel, dtype=np.int64)
            else:
                at = np.clip(np.searchsorted(ordered, raw), 0, ordered.size - 1)
                out = np.where(ordered[at] == raw, order[at], sentinel)
            out[s.is_null().to_numpy()] = null_code
            return out

        return expr, search

    def evaluate(self, plan: LevelPlan) -> dict[str, np.ndarray]:
        """The statistics of the plan's candidates (one scan)."""
        used = sorted(plan.codes)
        coders = {f: self._coder(plan, f) for f in used}
        lf = self._base({f"__pf_c{f}": coders[f][0] for f in used}, counted_only=True)
        self.scans += 1
        acc = Accumulator(plan.size, weighted=self.weighted, binary=self.binary)
        for batch in lf.collect_batches(chunk_size=CHUNK_ROWS):
            if batch.height == 0:
                continue
            codes = {f: coders[f][1](batch[f"__pf_c{f}"]).astype(np.int64, copy=False) for f in used}
            e = batch[_E].to_numpy()
            values = self._values(e, batch[_W].to_numpy() if self.weighted else None)
            for s, (fs, radices, _, pos) in enumerate(plan.sets):
                key = codes[fs[0]].copy()
                for f, r in zip(fs[1:], radices[1:]):
                    key *= r
                    key += codes[f]
                acc.add(_lookup(plan, s, key), pos, values, e)
        return acc.result()

    def _values(self, e: np.ndarray, w: np.ndarray | None) -> dict[str, np.ndarray]:
        d = e - self.shift  # the squared sums are centred at the reference error
        if w is None:
            return {"e": e, "d": d, "e2": d * d, "bit": (e > 0).astype(np.int64) if self.binary else e}
        wd = w * d
        return {"s": w, "e": w * e, "d": wd, "e2": wd * d, "w2": w * w}


class ForeignSource(Source):
    """The passes in a Spark/DuckDB/... engine (narwhals), one query per level."""

    foreign = True

    def value_profile(self, idx: Sequence[int], qs: Sequence[float]) -> dict[int, tuple[int, list[float]]]:
        nw = self.eng.ns
        exprs = []
        for i in idx:
            x = self.eng.float64(contract.key(self.eng, self.features[i].column, role="features"))
            exprs.append(x.n_unique().alias(f"__pf_u{i}"))
            exprs += [x.quantile(q, interpolation="linear").alias(f"__pf_q{i}_{j}") for j, q in enumerate(qs)]
        self.scans += 1
        row = self.frame.nf.select(*exprs).collect(backend="polars").to_native().row(0, named=True)
        del nw
        out = {}
        for i in idx:
            qv = [row[f"__pf_q{i}_{j}"] for j in range(len(qs))]
            # n_unique counts null as a value in some engines: the quantiles tell an all-null column
            distinct = int(row[f"__pf_u{i}"] or 0)
            out[i] = (0, []) if qv[0] is None else (distinct, [float(v) for v in qv])
        return out

    def _select(self, cols: dict[str, Any]) -> Any:
        return self.frame.nf.select(**cols)

    def reference(self) -> None:
        """Set :attr:`shift` and :attr:`unit` from at most :data:`REFERENCE_ROWS` counted rows (one
        ``LIMIT`` query before level 1, whose single query needs them).
        """
        r = self.rows
        cols = {CODE: r.code, _E: r.e, **({_W: r.w} if r.w is not None else {})}
        q = self._select(cols).filter(self.eng.ns.col(CODE).is_in(r.counted)).head(REFERENCE_ROWS)
        head = q.collect(backend="polars").to_native()
        e = head[_E].cast(pl.Float64).to_numpy()
        self._reference_from(e, head[_W].cast(pl.Float64).to_numpy() if self.weighted else None)

    def level1(self) -> tuple[list[pl.DataFrame], pl.DataFrame]:
        nw, eng, r = self.eng.ns, self.eng, self.rows
        names = [f"__pf_f{i}" for i in range(len(self.features))]
        cols: dict[str, Any] = {CODE: r.code, _E: r.e}
        if self.weighted:
            cols |= {_W: r.w}
        cols |= {n: f.expr(eng).cast(nw.String) for n, f in zip(names, self.features)}
        index = [CODE, _E, *([_W] if self.weighted else [])]
        e = nw.col(_E)
        aggs = self._aggs(nw)
        if not self.binary:
            aggs.append(((e != 0.0) & (e != 1.0)).cast(nw.Int64).sum().alias("nb"))
        # the features stacked (one union; narwhals' DuckDB unpivot runs SQL on DuckDB's default connection,
        # which cannot read a relation of another connection)
        base = self._select(cols)
        q = nw.concat([base.select(*index, nw.lit(n).alias("__pf_var"), nw.col(n).alias("v")) for n in names],
                      how="vertical")  # fmt: skip
        self.scans += 1
        out = q.group_by("__pf_var", "v", CODE).agg(*aggs).collect(backend="polars").to_native()
        out = out.with_columns(pl.col(CODE).cast(pl.UInt8), pl.col("n").cast(pl.Int64))
        out = out.with_columns([pl.col(c).cast(pl.Float64) for c in ("s", "e", "d", "e2", "w2", "m", "w_min") if c in out.columns])
        table = out.filter(pl.col("__pf_var") == names[0]).group_by(CODE).agg(pl.col("n").sum())
        ok = out.filter(pl.col(CODE).is_in(r.counted))
        if "nb" in ok.columns:
            self.nonbinary = int(ok.filter(pl.col("__pf_var") == names[0])["nb"].sum())
            ok = ok.drop("nb")
        tables = []
        for i, f in enumerate(self.features):
            part = ok.filter(pl.col("__pf_var") == names[i]).drop("__pf_var", CODE)
            part = part.with_columns(_typed(part["v"], pl.Int64() if f.binned else f.column.dtype).alias("v"))
            tables.append(self._merge([part], single=False) if part.height else self._empty(i))  # one row per code
        return tables, table

    def evaluate(self, plan: LevelPlan) -> dict[str, np.ndarray]:
        nw, eng, r = self.eng.ns, self.eng, self.rows
        coded = {f: plan.code_expr(eng, f, self.features[f].expr(eng)) for f in plan.codes}
        cols: dict[str, Any] = {CODE: r.code, _E: r.e}
        if self.weighted:
            cols |= {_W: r.w}
        keys = {f"__pf_k{s}": plan.key_expr(eng, s, coded) for s in range(len(plan.sets))}
        q = self._select(cols | keys).filter(nw.col(CODE).is_in(r.counted))
        e = nw.col(_E)
        aggs = [nw.len().alias("n"), e.max().alias("m")]
        if self.weighted:
            w = nw.col(_W)
            d = e - self.shift
            aggs += [w.sum().alias("s"), (w * e).sum().alias("e"), (w * w).sum().alias("w2"), (w * d).sum().alias("d"),
                     (w * d * d).sum().alias("e2")]
        else:
            d = e - self.shift
            aggs += [e.sum().alias("e"), d.sum().alias("d"), (d * d).sum().alias("e2")]
        index = [_E, *([_W] if self.weighted else [])]
        q = q.unpivot(on=list(keys), index=index, variable_name="__pf_var", value_name="__pf_key")
        self.scans += 1
        out = q.group_by("__pf_var", "__pf_key").agg(*aggs).collect(backend="polars").to_native()
        acc = Accumulator(plan.size, weighted=self.weighted, binary=self.binary)
        for s in range(len(plan.sets)):
            part = out.filter(pl.col("__pf_var") == f"__pf_k{s}")
            if not part.height:
                continue
            local = _lookup(plan, s, part["__pf_key"].cast(pl.Int64).to_numpy())
            idx = np.where(local > 0, plan.sets[s][3][np.maximum(local - 1, 0)] + 1, 0)
            sums = {c: part[c].cast(pl.Float64).to_numpy() for c in ("s", "e", "d", "e2", "w2") if c in part.columns}
            acc.add_grouped(idx, part["n"].cast(pl.Int64).to_numpy(), sums, part["m"].cast(pl.Float64).to_numpy())
        return acc.result()


def _typed(text: pl.Series, dtype: pl.DataType) -> pl.Series:
    """Values an engine returned as text, in the feature's dtype."""
    kind = contract.dtype_kind(dtype)
    if kind == "boolean":
        return text.str.to_lowercase().replace_strict({"true": True, "false": False}, default=None, return_dtype=pl.Boolean)
    if kind == "date":
        return text.str.slice(0, 10).str.to_date()
    if kind == "datetime":
        return text.str.to_datetime(time_unit=getattr(dtype, "time_unit", "us") or "us").cast(dtype)
    if kind in ("categorical", "enum", "string"):
        return text.cast(dtype)
    return text.cast(pl.Float64).cast(dtype) if kind == "decimal" else text.cast(dtype)


def source_of(frame: Any, rows: Rows, features: list[Feature]) -> Source:
    """The :class:`Source` of a frame adapter (Polars, or a foreign engine's)."""
    return ForeignSource(frame, rows, features) if hasattr(frame, "nf") else Source(frame, rows, features)


