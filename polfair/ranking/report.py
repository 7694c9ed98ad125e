"""The ranking report: the ranking cell table to the fairness report's long rows (issue 43).

Every metric is arithmetic on the cell table of :func:`polfair.ranking.cells.ranking_pass`: the
position weights (with ties), then per (query, group) sums, then per-query quantities (AWRF, NDKL,
nDCG), then the pooled values, their references and intervals. Queries are the sampling unit: the
intervals are delete-a-group jackknife ones over buckets of queries
(:func:`polfair.core.intervals.jackknife_intervals`, the jackknife of the report's ``cluster=``).
Definitions: ``docs/ranking.md``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl
from scipy import special

from polfair.core import intervals as iv
from polfair.core.intervals import jackknife_intervals
from polfair.core.reference import largest_reference, warn_small_reference
from polfair.core.report.build import GROUP_KEY, SEPARATOR, Intersections, attribute_sets, group_label
from polfair.core.values import coerce_values
from polfair.exceptions import InvalidInputError, PolfairError
from polfair.ranking.cells import RANK, RELEVANCE_KEY

__all__ = ["POSITION_WEIGHTS", "RANKING_METRICS", "RankingOptions", "position_weight_expr", "ranking_rows", "references", "unit_table",
           "values"]  # fmt: skip

F64 = pl.Float64
#: The position weights ``position_weight=`` accepts.
POSITION_WEIGHTS = ("log", "geometric", "reciprocal")
#: The report's metrics, in report order.
RANKING_METRICS = ("exposure", "exposure_share", "item_share", "exposure_per_relevance", "top_k_share", "awrf", "ndkl",
                   "ndcg_at_k")  # fmt: skip
_ORDER = {m: i for i, m in enumerate(RANKING_METRICS)}
_SUMS = ["s_e", "s_n", "s_t", "s_r", "s_rows", "s_nq", "s_a", "c_a", "s_k", "c_k", "s_g", "c_g", "s_lo"]
_B = "bucket"


def position_weight_expr(pos: pl.Expr, kind: str = "log", p: float = 0.5, k: int | None = None) -> pl.Expr:
    """The attention at position ``pos`` (1-based): ``"log"`` 1/log2(1 + pos) (DCG's discount),
    ``"geometric"`` p·(1 − p)^(pos − 1) (Sapiezynski et al.'s; FairRankTune's AWRF multiplies it
    by 100), ``"reciprocal"`` 1/pos; 0 beyond ``k``.

    Examples
    --------
    >>> import polars as pl
    >>> pl.select(position_weight_expr(pl.lit(3), "log", k=2).alias("a"), position_weight_expr(pl.lit(1)).alias("b")).row(0)
    (0.0, 1.0)
    """
    x = pos.cast(F64)
    if kind == "log":
        w = 1.0 / (x + 1.0).log(2)
    elif kind == "geometric":
        w = p * (1.0 - p) ** (x - 1.0)
    elif kind == "reciprocal":
        w = 1.0 / x
    else:
        msg = f"position_weight={kind!r}: choose one of {list(POSITION_WEIGHTS)}"
        raise PolfairError(msg)
    return w if k is None else pl.when(pos <= k).then(w).otherwise(0.0)


_SMALL_INTS = (pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32)


def _group_codes(cells: pl.DataFrame, keys: list[str]) -> tuple[pl.DataFrame, np.ndarray]:
    """The distinct groups (``keys``) in code order and each cell's group code: one integer column without nulls
    and of a small range is coded by its value (a scatter of its range), anything else by a join with its
    distinct values.
    """
    col = cells[keys[0]]
    if len(keys) == 1 and col.dtype in _SMALL_INTS and not col.null_count():
        lo, hi = int(col.min()), int(col.max())  # type: ignore[arg-type]
        if hi - lo < max(1 << 16, 4 * cells.height):
            v = col.to_numpy().astype(np.int64) - lo
            present = np.bincount(v, minlength=hi - lo + 1) > 0
            code = np.cumsum(present) - 1
            ug = pl.Series(keys[0], np.flatnonzero(present) + lo).cast(col.dtype).to_frame()
            return ug, code[v]
    ug = cells.select(keys).unique().with_row_index("__pf_gi")
    gi = (cells.lazy().select(keys).join(ug.lazy(), on=keys, how="left", maintain_order="left", nulls_equal=True)
          .select("__pf_gi").collect().to_series().to_numpy().astype(np.int64))  # fmt: skip
    return ug.drop("__pf_gi"), gi


def _sorted_codes(cells: pl.DataFrame, qk: list[str], keys: list[str]) -> tuple[np.ndarray, pl.DataFrame, pl.DataFrame,
                                                                                  np.ndarray, np.ndarray]:
    """The cells' order by (query, rank), the distinct queries (``qk``) in code order, the distinct groups (``keys``)
    in code order, and each sorted cell's query and group code.

    Group codes: a join with the distinct groups. Query codes: with one integer query column, from the sort by the
    query's value itself (the codes count the distinct values along it: no join); else a join with the distinct
    queries, then the sort by code. No multi-column sort.
    """
    r = cells[RANK].to_numpy().astype(np.int64)
    rmax = int(r.max())
    q = cells[qk[0]]
    if len(qk) == 1 and q.dtype in _SMALL_INTS:
        lo, hi = int(q.min()), int(q.max())  # type: ignore[arg-type]
        if (hi - lo + 1) * (rmax + 1) < 2**62:
            ug, gi = _group_codes(cells, keys)
            order = np.argsort((q.to_numpy().astype(np.int64) - lo) * (rmax + 1) + r)
            qv = q.to_numpy()[order]
            first = np.r_[True, qv[1:] != qv[:-1]]
            uq = q.gather(order[first]).to_frame()
            return order, uq, ug, np.cumsum(first) - 1, gi[order]
    ug = cells.select(keys).unique().with_row_index("__pf_gi")
    uq = cells.select(qk).unique().with_row_index("__pf_qi")
    ix = (cells.lazy().select(*qk, *keys)
          .join(uq.lazy(), on=qk, how="left", maintain_order="left", nulls_equal=True)
          .join(ug.lazy(), on=keys, how="left", maintain_order="left", nulls_equal=True)
          .select("__pf_qi", "__pf_gi").collect())  # fmt: skip
    qi, gi = ix["__pf_qi"].to_numpy().astype(np.int64), ix["__pf_gi"].to_numpy().astype(np.int64)
    if uq.height * (rmax + 1) < 2**62:
        order = np.argsort(qi * (rmax + 1) + r)
    else:  # pragma: no cover - ranks beyond 2^62 / queries: the competition check rejects them
        order = np.lexsort((r, qi))
    return order, uq.drop("__pf_qi"), ug.drop("__pf_gi"), qi[order], gi[order]


def _recode(frame: pl.DataFrame, cols: list[str]) -> tuple[np.ndarray, pl.DataFrame]:
    """The code of each row of a small ``frame`` among its distinct ``cols`` values, and those values in code order."""
    u = frame.select(cols).unique().with_row_index("__pf_c")
    c = frame.select(cols).join(u, on=cols, how="left", maintain_order="left", nulls_equal=True)["__pf_c"]
    return c.to_numpy().astype(np.int64), u.drop("__pf_c")


def _check_competition(bq: np.ndarray, br: np.ndarray, bm: np.ndarray, uq: pl.DataFrame, query: str, k: int | None) -> None:
    """Ranks are competition ranks (1, 2, 2, 4) within each query (checked up to k): the tie blocks (query code
    ``bq``, rank ``br``, size ``bm``, sorted by query then rank) have each rank r = 1 + the items ranked before it.
    """
    ahead = np.cumsum(bm) - bm
    first = np.r_[True, bq[1:] != bq[:-1]]
    ahead = ahead - np.maximum.accumulate(np.where(first, ahead, 0))
    bad = (ahead != br - 1) if k is None else (br <= k) & (ahead != br - 1)
    if bad.any():
        qs = np.unique(bq[bad])
        msg = (
            f"rank: the ranks of {len(qs):,} queries (e.g. {query} = {uq[qs[:3]][query].to_list()}) are not competition "
            f"ranks 1, 2, 2, 4, ...{' (up to k)' if k is not None else ''}: a query's ranks start at 1 and a tie of m "
            "items at rank r is followed by rank r + m (a by= column must not split a query). Rank within each query with "
            "pl.col(score).rank('min', descending=True).over(query) (dense ranks 1, 2, 2, 3 are not accepted)"
        )
        raise InvalidInputError(msg)


def _block_weights(br: np.ndarray, bm: np.ndarray, k: int | None, kinds: Sequence[str], p: float) -> list[np.ndarray]:
    """Per tie block (rank ``br``, size ``bm``): the mean weight of the positions it spans for each of ``kinds``
    (cut at k), then the fraction of it within the top k.

    Untied blocks (m = 1) read the weight of their rank; a tie of m items at rank r reads
    (V(e) − V(r − 1)) / m from the cumulative weights V of positions 1 … max rank (e = the tie's last
    position within k): no row per position. Called after :func:`_check_competition`, so the ranks are
    bounded by the query's rows; blocks beyond k (the pooled rank k + 1) get 0.
    """
    inside = br <= k if k is not None else np.ones(len(br), dtype=bool)
    r, m = br[inside], bm[inside]
    tied = np.flatnonzero(m > 1)  # most blocks are one item: only ties need the mean over their span
    rt, mt = r[tied], m[tied]
    end = rt + mt - 1 if k is None else np.minimum(rt + mt - 1, k)
    top = max(int(r.max()) if len(r) else 0, int(end.max()) if len(end) else 0)
    pos = pl.select(pl.int_range(1, top + 1, dtype=pl.Int64).alias("x"))
    out = []
    for kd in kinds:
        v = pos.select(position_weight_expr(pl.col("x"), kd, p)).to_series().to_numpy()
        cum = np.concatenate([[0.0], np.cumsum(v)])
        w = v[r - 1]
        w[tied] = (cum[end] - cum[rt - 1]) / mt
        full = np.zeros(len(br))
        full[inside] = w
        out.append(full)
    f = np.zeros(len(br))
    ft = np.ones(len(r))
    ft[tied] = (end - rt + 1) / mt
    f[inside] = ft
    return [*out, f]


#: The dense NDKL (:func:`_ndkl_dense`) holds positions × queries × groups floats per array: it runs on chunks of
#: consecutive queries of at most this many cells (one query is never split). Small chunks (256 KiB a float array)
#: stay in the CPU's cache and reuse the allocator's memory: at 1e6 rows, 10,000 queries, the report's arrays
#: took ~40% less time than one chunk of 360,000 cells; memory is bounded for every number of queries.
NDKL_DENSE_CELLS = 32_768


def _ndkl(pk: np.ndarray, r: np.ndarray, stop: np.ndarray, w: np.ndarray, ng: int, L: np.ndarray, pairs: np.ndarray,
          rows: np.ndarray, n_q: np.ndarray, qs: np.ndarray) -> np.ndarray:
    """NDKL per query of one attribute set: :func:`_ndkl_dense` on chunks of consecutive queries (the cells are sorted
    by query; ``qs`` is each query's first cell; ``pairs`` the sorted distinct query × ``ng`` + group codes and
    ``rows`` their rows, from which each chunk's group shares are built).
    """
    nq = len(L)
    out = np.empty(nq)
    if not nq:
        return out
    step = max(1, NDKL_DENSE_CELLS // ((int(L.max()) + 2) * ng))
    bounds = np.r_[qs, len(pk)]
    for q0 in range(0, nq, step):
        q1 = min(nq, q0 + step)
        a, b = bounds[q0], bounds[q1]
        pa, pb = np.searchsorted(pairs, [q0 * ng, q1 * ng])
        share = np.zeros((q1 - q0) * ng)
        share[pairs[pa:pb] - q0 * ng] = rows[pa:pb]
        share = share.reshape(q1 - q0, ng) / n_q[q0:q1, None]
        out[q0:q1] = _ndkl_dense(pk[a:b] - q0 * ng, r[a:b], stop[a:b], w[a:b], ng, L[q0:q1], share)
    return out


def _ndkl_dense(pk: np.ndarray, r: np.ndarray, stop: np.ndarray, w: np.ndarray, ng: int, L: np.ndarray,
                share: np.ndarray) -> np.ndarray:
    """NDKL per query of one attribute set, on a dense positions × queries × groups array.

    The cells: ``pk`` = query code × ``ng`` + group code, rank ``r``, ``stop`` = the position after their tie
    block's last one within the top k, ``w`` = rows ÷ the tie block's size (0 beyond k); ``L`` the top-k length
    and ``share`` (queries × groups) the group shares of each query. The expected count of group g at each
    position of a tie block of m items at rank r is n_g / m (random tie-breaking): a difference array (+n_g/m at
    r, −n_g/m at ``stop``), summed twice along the positions, gives the expected top-i counts C_g(i); then
    NDKL = Σ_{i ≤ L} v(i) Σ_g P ln(P / Q) / Σ_{i ≤ L} v(i), P = C_g(i) / i, Q = n_g / n_q (Geyik et al., KDD 2019;
    exact distributions, 0·ln 0 = 0).
    """
    nq, lmax = len(L), int(L.max()) if len(L) else 0
    S = nq * ng
    size = (lmax + 2) * S
    # in place where it can be: fresh arrays of this size cost page faults
    d: np.ndarray = np.zeros(size)  # one array, scattered into twice (np.add.at: as fast as np.bincount, no second array)
    idx = r * S
    idx += pk
    np.add.at(d, idx, w)
    np.multiply(stop, S, out=idx)
    idx += pk
    np.subtract.at(d, idx, w)
    del idx
    d = d.reshape(lmax + 2, nq, ng)  # positions first: the cumulative sums run over contiguous slices
    for _ in range(2):
        for j in range(1, lmax + 2):
            d[j] += d[j - 1]
    i = np.arange(1, lmax + 1, dtype=np.float64)
    P: np.ndarray = d[1 : lmax + 1]
    P /= i[:, None, None]
    np.maximum(P, 0.0, out=P)  # a rounding residue P < 0 counts 0
    # Σ_g P ln(P / Q) = Σ_g (P ln P − P ln Q), with 0·ln 0 = 0 (a group absent from the query has P = Q = 0)
    t = P * np.log(np.where(share > 0, share, 1.0))[None, :, :]
    special.xlogy(P, P, out=P)
    P -= t
    # Σ over the groups: a loop over a few groups beats numpy's reduction along a short last axis
    kl = P.sum(axis=2) if ng > 16 else functools.reduce(np.add, [P[:, :, g] for g in range(ng)])
    z = np.where(np.arange(1, lmax + 1)[:, None] <= L[None, :], 1.0 / np.log2(1.0 + i)[:, None], 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        out: np.ndarray = (z * kl).sum(axis=0) / z.sum(axis=0)
    return out


def _ndcg(cells: pl.LazyFrame, w: pl.LazyFrame, qk: list[str], qt: pl.LazyFrame) -> pl.LazyFrame:
    """nDCG@k per (by, query): linear gains, log discount, expected DCG over random tie-breaks, ideal
    from every item of the query; 0 when the query has no relevant item.
    """
    dcg = w.group_by(qk).agg((pl.col("rel") * pl.col("__pf_wl")).sum().alias("__pf_dcg"))
    lv = cells.group_by([*qk, RELEVANCE_KEY]).agg(pl.col("n").sum().alias("__pf_c"))
    lv = lv.sort([*qk, RELEVANCE_KEY], descending=[False] * len(qk) + [True])
    lv = lv.with_columns((pl.col("__pf_c").cum_sum().over(qk) - pl.col("__pf_c") + 1).alias("__pf_s"))
    lv = lv.join(qt.select(*qk, "L"), on=qk, nulls_equal=True).filter(pl.col("__pf_s") <= pl.col("L"))
    end = pl.min_horizontal(pl.col("__pf_s") + pl.col("__pf_c") - 1, pl.col("L"))
    ideal = (
        lv.with_columns(pl.int_ranges(pl.col("__pf_s"), end + 1).alias("__pf_i")).explode("__pf_i")
        .group_by(qk).agg((pl.col(RELEVANCE_KEY) * position_weight_expr(pl.col("__pf_i"), "log")).sum().alias("__pf_idcg"))
    )  # fmt: skip
    out = qt.select(qk).join(dcg, on=qk, how="left", nulls_equal=True).join(ideal, on=qk, how="left", nulls_equal=True)
    return out.select(*qk, pl.when(pl.col("__pf_idcg") > 0).then(pl.col("__pf_dcg") / pl.col("__pf_idcg"))
                      .otherwise(0.0).alias("__pf_ndcg"))  # fmt: skip


def _bucket(query: str, n_buckets: int) -> pl.Expr:
    return (pl.col(query).hash(seed=43) % n_buckets).cast(pl.Int64).alias(_B)


def _zeros(frame: pl.LazyFrame) -> pl.LazyFrame:
    names = frame.collect_schema().names()
    return frame.with_columns([pl.lit(0.0).alias(c) for c in _SUMS if c not in names])


#: (query, group) pairs are summed on a dense queries × groups array up to this many cells, else on the sorted
#: distinct pairs.
DENSE_PAIRS = 4_000_000


def _unit_frame(ub: pl.DataFrame | None, n_buckets: int, unit: np.ndarray, kind: str, si: int, group: pl.Series | None,
                sums: Mapping[str, np.ndarray]) -> pl.DataFrame:
    """Rows of the sums table: ``unit`` = by code × n_buckets + bucket."""
    n = len(unit)
    cols = [pl.Series(_B, unit % n_buckets, dtype=pl.Int64), pl.Series("kind", [kind] * n, dtype=pl.String),
            pl.Series("set", np.full(n, si), dtype=pl.Int64),
            group.alias("group") if group is not None else pl.Series("group", [None] * n, dtype=pl.String)]  # fmt: skip
    cols += [pl.Series(c, sums[c], dtype=F64) if c in sums else pl.Series(c, np.zeros(n), dtype=F64) for c in _SUMS]
    frame = pl.DataFrame(cols)
    return frame if ub is None else pl.concat([ub[unit // n_buckets], frame], how="horizontal")


def _sum_by(idx: np.ndarray, size: int, **weights: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The non-empty ``idx`` values and the sum of each weight over them, with ``s_nq`` the count."""
    cnt = np.bincount(idx, minlength=size)
    keep = np.flatnonzero(cnt)
    out = {c: np.bincount(idx, weights=w, minlength=size)[keep] for c, w in weights.items()}
    out["s_nq"] = cnt[keep].astype(np.float64)
    return keep, out


def _pairs(key: np.ndarray, size: int) -> tuple[np.ndarray, Callable[[np.ndarray], np.ndarray]]:
    """The distinct values of ``key`` (in ``0 … size − 1``), sorted, and a function summing a weight over each: a
    dense ``np.bincount`` up to :data:`DENSE_PAIRS`, else on the inverse of ``np.unique``.
    """
    if size <= DENSE_PAIRS:
        pres = np.flatnonzero(np.bincount(key, minlength=size))
        return pres, lambda x: np.bincount(key, weights=x, minlength=size)[pres]
    pres, inv = np.unique(key, return_inverse=True)
    return pres, lambda x: np.bincount(inv, weights=x, minlength=len(pres))


def unit_table(
    cells: pl.DataFrame,
    names: Mapping[str, list[str]],
    *,
    sets: list[tuple[str, ...]],
    qsets: list[tuple[str, ...]],
    k: int | None,
    position_weight: str,
    p: float,
    ndcg: bool,
    n_buckets: int,
) -> tuple[pl.DataFrame, dict[str, int], pl.DataFrame]:
    """The sums per (by, bucket of queries, kind, attribute set, group): what every value and
    replicate of the report is a function of. Also: queries left out of AWRF/NDKL per attribute,
    and the distinct groups (every protected and query_protected column).

    The cells get a query code and a group code (by value for one integer column, else a join with the distinct
    values), are sorted by (query, rank) once, and every tie block, weight, per-query and per-(query, group) quantity is a segment sum or
    a scatter (``np.bincount``) on those codes; NDKL on dense arrays of bounded size (chunks of queries); only
    nDCG's ideal ordering runs as a Polars plan.
    """
    by, query = names["by"], names["query"][0]
    qk = [*by, query]
    qprot = list(names["query_protected"])
    keys = [*names["protected"], *qprot]
    order, uq, ug, qi, gi = _sorted_codes(cells, qk, keys)
    nq = uq.height
    r = cells[RANK].to_numpy().astype(np.int64)[order]
    n = cells["n"].to_numpy().astype(np.int64)[order]
    new = np.r_[True, (qi[1:] != qi[:-1]) | (r[1:] != r[:-1])]
    bs = np.flatnonzero(new)  # the first cell of each (query, rank) tie block
    bid = np.cumsum(new) - 1  # each cell's block
    bq, br, bm = qi[bs], r[bs], np.add.reduceat(n, bs)
    _check_competition(bq, br, bm, uq, query, k)
    qs = np.flatnonzero(np.r_[True, qi[1:] != qi[:-1]])  # the first cell of each query: codes 0 … nq − 1 in order
    n_q = np.add.reduceat(n, qs)
    if "qw_min" in cells.columns:
        W = np.minimum.reduceat(cells["qw_min"].to_numpy()[order], qs)
        if (W != np.maximum.reduceat(cells["qw_max"].to_numpy()[order], qs)).any():
            msg = "weight: the weight is a query weight and must be the same on every row of a query; found queries with several"
            raise InvalidInputError(msg)
    else:
        W = np.ones(nq)
    for c in qprot:
        code = _recode(ug, [c])[0][gi]
        several = int((np.minimum.reduceat(code, qs) != np.maximum.reduceat(code, qs)).sum())
        if several:
            msg = (
                f"query_protected={c!r} is a property of the query but takes several values within "
                f"{several:,} queries; give it in protected= if it describes items"
            )
            raise InvalidInputError(msg)
    L = n_q if k is None else np.minimum(n_q, k)
    with_ndcg = bool(ndcg and qsets)
    bw = _block_weights(br, bm, k, (position_weight, "log") if with_ndcg else (position_weight,), p)
    e, t = n * bw[0][bid], n * bw[-1][bid]
    # NDKL's cells (the same for every attribute set): rows ÷ tie size within the top k (0 beyond), and the position
    # after each tie block's last one within it (r + m − 1 <= n_q: the ranks are competition ranks)
    m_c = bm[bid]
    w_top = n / m_c
    stop = r + m_c
    if k is not None:
        w_top[r > k] = 0.0
        np.minimum(stop, k + 1, out=stop)
    del m_c
    e_q = np.add.reduceat(e, qs)
    bucket = uq.select(_bucket(query, n_buckets))[_B].to_numpy().astype(np.int64)
    ub = None
    byc = np.zeros(nq, dtype=np.int64)
    if by:
        byc, ub = _recode(uq, by)
    unit = byc * n_buckets + bucket
    nu = (ub.height if ub is not None else 1) * n_buckets
    keep, s = _sum_by(unit, nu, s_e=W * e_q, s_n=W * n_q, s_t=W * L, s_rows=n_q.astype(np.float64))
    parts: list[pl.DataFrame | pl.LazyFrame] = [_unit_frame(ub, n_buckets, keep, "t", -1, None, s)]
    rel = cells["rel"].to_numpy().astype(np.float64)[order] if "rel" in cells.columns else None
    left_out: dict[str, int] = {}
    for si, attrs in enumerate(sets):
        gmap, us = _recode(ug, list(attrs))
        labels = us.select(group_label(list(attrs)).alias("group"))["group"]
        ng = us.height
        gc = gmap[gi]
        pk = qi * ng + gc
        pres, psum = _pairs(pk, nq * ng)
        pq, pg = pres // ng, pres % ng
        pe, pn, pt = psum(e), psum(n.astype(np.float64)), psum(t)
        Wp = W[pq]
        gkey = unit[pq] * ng + pg
        keep, s = _sum_by(gkey, nu * ng, s_e=Wp * pe, s_n=Wp * pn, s_t=Wp * pt, s_rows=pn,
                          **({"s_r": Wp * psum(rel)} if rel is not None else {}))  # fmt: skip
        parts.append(_unit_frame(ub, n_buckets, keep // ng, "g", si, labels[keep % ng], s))
        # AWRF: per query, min ÷ max over its groups of the mean attention per item
        ps = np.flatnonzero(np.r_[True, pq[1:] != pq[:-1]])
        a = pe / pn
        lo, hi = np.minimum.reduceat(a, ps), np.maximum.reduceat(a, ps)
        multi = np.diff(np.r_[ps, len(pq)]) >= 2
        has_a = multi & (hi > 0)
        awrf = np.where(has_a, lo / np.where(has_a, hi, 1.0), np.nan)
        nd = _ndkl(pk, r, stop, w_top, ng, L, pres, pn, n_q, qs)
        ndkl = np.where(multi, nd, np.nan)
        ok_a, ok_k = ~np.isnan(awrf), ~np.isnan(ndkl)
        keep, s = _sum_by(unit, nu, s_a=np.where(ok_a, W * awrf, 0.0), c_a=np.where(ok_a, W, 0.0),
                          s_k=np.where(ok_k, W * ndkl, 0.0), c_k=np.where(ok_k, W, 0.0), s_lo=(~multi).astype(np.float64),
                          s_nqa=ok_a.astype(np.float64))  # fmt: skip
        s["s_nq"] = s.pop("s_nqa")
        parts.append(_unit_frame(ub, n_buckets, keep, "a", si, None, s))
        left_out[SEPARATOR.join(attrs)] = int((~multi).sum())
    if with_ndcg:
        cs = cells[order].with_columns(pl.Series("__pf_wl", bw[1][bid], dtype=F64)).lazy()
        qt = pl.concat([uq, pl.DataFrame({"L": L, "W": W, "n_q": n_q, _B: bucket})], how="horizontal").lazy()
        Wc = pl.col("W")
        nq_ = _ndcg(cells.lazy(), cs, qk, qt).join(qt.select(*qk, "W", "n_q", _B), on=qk, nulls_equal=True)
        qvals = cells.lazy().group_by(qk).agg([pl.col(c).first() for c in qprot])
        nq_ = nq_.join(qvals, on=qk, nulls_equal=True)
        for qj, attrs in enumerate(qsets):
            parts.append(
                nq_.with_columns(group_label(list(attrs)).alias("group")).group_by([*by, _B, "group"]).agg(
                    (Wc * pl.col("__pf_ndcg")).sum().alias("s_g"), Wc.sum().alias("c_g"),
                    pl.col("n_q").sum().cast(F64).alias("s_rows"), pl.len().cast(F64).alias("s_nq"),
                ).with_columns(pl.lit("c").alias("kind"), pl.lit(len(sets) + qj, pl.Int64).alias("set"))
            )  # fmt: skip
        parts.append(
            nq_.group_by([*by, _B]).agg((Wc * pl.col("__pf_ndcg")).sum().alias("s_g"), Wc.sum().alias("c_g"),
                                        pl.col("n_q").sum().cast(F64).alias("s_rows"), pl.len().cast(F64).alias("s_nq"))
            .with_columns(pl.lit("p").alias("kind"), pl.lit(-1, pl.Int64).alias("set"), pl.lit(None, pl.String).alias("group"))
        )  # fmt: skip
    cols = [*by, _B, "kind", "set", "group", *_SUMS]
    lazy = [i for i, x in enumerate(parts) if isinstance(x, pl.LazyFrame)]
    for i, x in zip(lazy, pl.collect_all([_zeros(parts[i].lazy()) for i in lazy])):  # nDCG's parts
        parts[i] = x.with_columns([pl.col(c).cast(F64).fill_null(0.0) for c in _SUMS])
    table = pl.concat([x.select(cols) for x in parts if isinstance(x, pl.DataFrame)], how="vertical_relaxed")
    return table, left_out, ug


def _div(a: pl.Expr, b: pl.Expr) -> pl.Expr:
    return pl.when(b != 0).then(a / b)


def values(table: pl.DataFrame, keys: list[str], refs: pl.DataFrame, by: list[str], metrics: Sequence[str]) -> pl.DataFrame:
    """Every report value of a sums table (:func:`unit_table` without buckets): long rows
    ``keys, set, group, metric, stat (value / difference / ratio), value``; ratios on the log scale.
    """
    tot = table.filter(pl.col("kind") == "t").select(*keys, pl.col("s_e").alias("t_e"), pl.col("s_n").alias("t_n"),
                                                     pl.col("s_t").alias("t_t"))  # fmt: skip
    g = table.filter(pl.col("kind") == "g").join(tot, on=keys, how="left", nulls_equal=True)
    defs = {
        "exposure": _div(pl.col("s_e"), pl.col("s_n")), "exposure_share": _div(pl.col("s_e"), pl.col("t_e")),
        "item_share": _div(pl.col("s_n"), pl.col("t_n")), "exposure_per_relevance": _div(pl.col("s_e"), pl.col("s_r")),
        "top_k_share": _div(pl.col("s_t"), pl.col("t_t")),
    }  # fmt: skip
    group_metrics = [m for m in defs if m in metrics]
    # one select of every group metric, then one unpivot to long rows (fewer small-frame operations)
    long = [g.select(*keys, "set", "group", *[defs[m].cast(F64).alias(m) for m in group_metrics])
            .unpivot(group_metrics, index=[*keys, "set", "group"], variable_name="metric", value_name="v")
            ] if group_metrics else []  # fmt: skip
    c = table.filter(pl.col("kind") == "c")
    if c.height and "ndcg_at_k" in metrics:
        long.append(c.select(*keys, "set", "group", pl.lit("ndcg_at_k").alias("metric"), _div(pl.col("s_g"), pl.col("c_g")).alias("v")))
    frames: list[pl.DataFrame] = []
    if long:
        gl = pl.concat(long) if len(long) > 1 else long[0]
        ref = gl.join(refs, on=[*by, "set"], how="inner", nulls_equal=True).filter(pl.col("group") == pl.col("__pf_ref"))
        gl = gl.join(ref.select(*keys, "set", "metric", pl.col("v").alias("__pf_rv")), on=[*keys, "set", "metric"],
                     how="left", nulls_equal=True)  # fmt: skip
        diff = pl.col("v") - pl.col("__pf_rv")
        logr = pl.when((pl.col("v") > 0) & (pl.col("__pf_rv") > 0)).then((pl.col("v") / pl.col("__pf_rv")).log())
        frames.append(gl.select(*keys, "set", "group", "metric", pl.col("v").alias("__pf_value"), diff.alias("__pf_difference"),
                                logr.alias("__pf_ratio"))
                      .unpivot(["__pf_value", "__pf_difference", "__pf_ratio"], index=[*keys, "set", "group", "metric"],
                               variable_name="stat", value_name="value")
                      .with_columns(pl.col("stat").str.strip_prefix("__pf_")))  # fmt: skip
        spread = gl.group_by([*keys, "set", "metric"]).agg(
            (pl.col("v").max() - pl.col("v").min()).alias("__pf_d"),
            pl.when(pl.col("v").min() > 0).then((pl.col("v").min() / pl.col("v").max()).log()).alias("__pf_r"),
        )
        frames += [spread.select(*keys, "set", pl.lit(None, pl.String).alias("group"), "metric", pl.lit(s).alias("stat"),
                                 pl.col(c).alias("value")) for s, c in (("difference", "__pf_d"), ("ratio", "__pf_r"))]  # fmt: skip
    a = table.filter(pl.col("kind") == "a")
    for m, s, cnt in (("awrf", "s_a", "c_a"), ("ndkl", "s_k", "c_k")):
        if m in metrics and a.height:
            frames.append(a.select(*keys, "set", pl.lit(None, pl.String).alias("group"), pl.lit(m).alias("metric"),
                                   pl.lit("value").alias("stat"), _div(pl.col(s), pl.col(cnt)).alias("value")))  # fmt: skip
    pop = table.filter(pl.col("kind").is_in(["t", "p"])).group_by(keys).agg(
        _div(pl.col("s_e").sum(), pl.col("s_n").sum()).alias("exposure"), _div(pl.col("s_g").sum(), pl.col("c_g").sum()).alias("ndcg_at_k"),
        (pl.col("kind") == "p").any().alias("__pf_hasp"),
    )  # fmt: skip
    none = [pl.lit(-1, pl.Int64).alias("set"), pl.lit(None, pl.String).alias("group")]
    frames.append(pop.select(*keys, *none, pl.lit("exposure").alias("metric"), pl.lit("value").alias("stat"),
                             pl.col("exposure").alias("value")))  # fmt: skip
    if "ndcg_at_k" in metrics:
        frames.append(pop.filter("__pf_hasp").select(*keys, *none, pl.lit("ndcg_at_k").alias("metric"),
                                                     pl.lit("value").alias("stat"), pl.col("ndcg_at_k").alias("value")))  # fmt: skip
    out = pl.concat(frames, how="vertical_relaxed")
    return out.with_columns(
        pl.when(pl.col("value").is_finite()).then(pl.col("value")).alias("value"), pl.lit(0.0).alias("null_value")
    )


def references(
    table: pl.DataFrame,
    by: list[str],
    sets: list[tuple[str, ...]],
    qsets: list[tuple[str, ...]],
    privileged: Mapping[str, Any],
    schema: Mapping[str, pl.DataType],
    min_sample_size: int = 0,
) -> pl.DataFrame:
    """The reference group of each (by, attribute set): the privileged group where every attribute of the set
    has privileged values, else the largest (items for item groups, queries for query groups) among the groups
    with at least ``min_sample_size`` input rows (the small-group policy of
    :mod:`polfair.core.reference`: when none has, the largest of all); a named group below the
    minimum warns (:class:`~polfair.exceptions.ReferenceWarning`).
    """
    size = table.filter(pl.col("kind").is_in(["g", "c"])).group_by([*by, "set", "group"]).agg(
        pl.when(pl.col("kind").first() == "g").then(pl.col("s_rows").sum()).otherwise(pl.col("s_nq").sum()).alias("__pf_size"),
        pl.col("s_rows").sum().alias("__pf_rows"),
    )  # fmt: skip
    typed = {a: coerce_values(v, schema[a], option="privileged", column=a) for a, v in privileged.items()}
    out = []
    named = []
    for si, attrs in enumerate([*sets, *qsets]):
        part = size.filter(pl.col("set") == si)
        if privileged and all(a in typed for a in attrs):
            vals = [tuple(typed[a]) for a in attrs]
            if all(len(v) == 1 for v in vals):
                frame = pl.DataFrame({a: pl.Series([v[0]], dtype=schema[a]) for a, v in zip(attrs, vals)})
                label = frame.select(group_label(list(attrs))).item()
                part = part.filter(pl.col("group") == label)
                named.append(part.select("group", "__pf_rows"))
            else:
                msg = f"privileged: give one value per attribute for ranking reports (got {dict(zip(attrs, vals))})"
                raise PolfairError(msg)
        # ties of size: the first group label (the order of the sorted labels)
        part = part.sort([*by, "group"]).with_row_index("__pf_o")
        best = largest_reference(part, by, order="__pf_o", weight="__pf_size", size="__pf_rows",
                                 min_sample_size=min_sample_size).collect()  # fmt: skip
        best = best.join(part.select(*by, "__pf_o", "group"), on=[*by, "__pf_o"], nulls_equal=True)
        out.append(best.select(*by, pl.col("group").alias("__pf_ref"), pl.lit(si, pl.Int64).alias("set")))
    if named:
        warn_small_reference(pl.concat(named), label="group", size="__pf_rows", min_sample_size=min_sample_size,
                             stacklevel=5)  # fmt: skip
    return pl.concat(out, how="vertical_relaxed") if out else pl.DataFrame({"set": [], "__pf_ref": []})


_STATS = ("value", "difference", "ratio")


@dataclass(frozen=True)
class RankingOptions:
    """The options of a ranking report after :func:`polfair.ranking.ranking_report` checked them (one object, not a
    dozen keywords through every internal function).
    """

    k: int | None = None
    position_weight: str = "log"
    p: float = 0.5
    relevance: bool = False
    privileged: Mapping[str, Any] | None = None
    intersections: Intersections = None
    ci: float | None = 0.95
    p_adjust: Any = "bh"
    n_buckets: int = 20
    min_sample_size: int = 0


def ranking_rows(
    cells: pl.DataFrame, names: Mapping[str, list[str]], schema: Mapping[str, pl.DataType], options: RankingOptions
) -> tuple[pl.DataFrame, dict[str, int]]:
    """The long report of a ranking cell table, and the queries left out of AWRF/NDKL per attribute set."""
    o = options
    k, position_weight, p, relevance, intersections = o.k, o.position_weight, o.p, o.relevance, o.intersections
    ci, p_adjust, n_buckets, min_sample_size = o.ci, o.p_adjust, o.n_buckets, o.min_sample_size
    by, prot, qprot = list(names["by"]), list(names["protected"]), list(names["query_protected"])
    level = iv.check_ci(ci)
    method = iv.check_p_adjust(p_adjust)
    privileged = dict(o.privileged or {})
    for a in privileged:
        if a not in (*prot, *qprot):
            msg = f"privileged names {a!r}, which is not a protected or query_protected attribute {[*prot, *qprot]}"
            raise PolfairError(msg)
    sets = attribute_sets(prot, intersections) if prot else []
    qsets = attribute_sets(qprot, intersections) if qprot else []
    ndcg = bool(qsets) and relevance
    table, left_out, groups = unit_table(cells, names, sets=sets, qsets=qsets, k=k, position_weight=position_weight, p=p,
                                 ndcg=ndcg, n_buckets=n_buckets)  # fmt: skip
    metrics = [m for m in RANKING_METRICS if (m != "exposure_per_relevance" or relevance) and (m != "top_k_share" or k is not None)
               and (m != "ndcg_at_k" or ndcg)]  # fmt: skip
    refs = references(table, by, sets, qsets, privileged, schema, min_sample_size)
    rep = "__pf_rep"

    def statistic(t: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
        return values(t, keys, refs, by, metrics)

    if level is None:
        full = table.drop(_B).group_by([*by, "kind", "set", "group"]).agg(pl.col(_SUMS).sum()).with_columns(pl.lit(0).alias(rep))
        est = statistic(full, [*by, rep]).drop(rep, "null_value")
        est = est.with_columns(pl.lit(None, F64).alias(c) for c in ("value_lo", "value_hi", "p_value"))
    else:
        est = jackknife_intervals(table, statistic, by=by, bucket=_B, ci=level, sums=_SUMS).drop("null_value")
    ids = [*by, "set", "group", "metric"]
    wide = est.pivot(on="stat", index=ids, values=["value", "value_lo", "value_hi", "p_value"])

    def col(kind: str, stat: str) -> pl.Expr:
        name = f"{kind}_{stat}"
        return pl.col(name) if name in wide.columns else pl.lit(None, F64)

    exp = {"ratio"}
    out = wide.select(
        *ids,
        *[(col(kind, s).exp() if s in exp else col(kind, s)).alias(f"{s}{suffix}")
          for s in _STATS for kind, suffix in (("value", ""), ("value_lo", "_lo"), ("value_hi", "_hi"))],
        col("p_value", "difference").alias("p_value"),
    )  # fmt: skip
    # every metric is >= 0, shares, AWRF and nDCG <= 1: the jackknife-t limits are truncated to that range
    # (which keeps every true value they covered)
    unit = pl.col("metric").is_in(["exposure_share", "item_share", "top_k_share", "awrf", "ndcg_at_k"])
    out = out.with_columns([pl.col(c).clip(0.0, pl.when(unit).then(1.0).otherwise(float("inf"))).alias(c)
                            for c in ("value_lo", "value_hi")])  # fmt: skip
    # attribute rows (max − min, min ÷ max) have no jackknife interval (inconsistent for extremes)
    spread = pl.col("group").is_null() & ~pl.col("metric").is_in(["awrf", "ndkl"])
    out = out.with_columns([pl.when(~spread).then(pl.col(c)).alias(c) for c in
                            ("value_lo", "value_hi", "difference_lo", "difference_hi", "ratio_lo", "ratio_hi", "p_value")])  # fmt: skip
    # attribute names, reference labels, sizes
    all_sets = [*sets, *qsets]
    attr = pl.DataFrame({"set": list(range(-1, len(all_sets))), "attribute": [None, *[SEPARATOR.join(s) for s in all_sets]]},
                        schema={"set": pl.Int64, "attribute": pl.String})  # fmt: skip
    sizes = table.group_by([*by, "kind", "set", "group"]).agg(pl.col("s_rows", "s_nq").sum())
    gsize = sizes.filter(pl.col("kind").is_in(["g", "c"])).select(*by, "set", "group", "s_rows", "s_nq")
    tsize = sizes.filter(pl.col("kind") == "t").select(*by, pl.col("s_rows").alias("__pf_tr"), pl.col("s_nq").alias("__pf_tq"))
    asize = sizes.filter(pl.col("kind") == "a").select(*by, "set", pl.col("s_nq").alias("__pf_aq"))
    ngroups = gsize.group_by([*by, "set"]).agg(pl.len().cast(pl.Int64).alias("n_groups"))
    out = (out.join(attr, on="set", how="left").join(refs, on=[*by, "set"] if by else "set", how="left", nulls_equal=True)
           .join(gsize, on=[*by, "set", "group"], how="left", nulls_equal=True)
           .join(tsize, on=by, how="left", nulls_equal=True) if by else
           out.join(attr, on="set", how="left").join(refs, on="set", how="left")
           .join(gsize, on=["set", "group"], how="left", nulls_equal=True).join(tsize, how="cross"))  # fmt: skip
    out = out.join(asize, on=[*by, "set"], how="left", nulls_equal=True).join(ngroups, on=[*by, "set"], how="left", nulls_equal=True)
    is_group = pl.col("group").is_not_null()
    own = is_group & (pl.col("group") == pl.col("__pf_ref"))
    out = out.with_columns(
        pl.when(is_group).then(pl.col("__pf_ref")).alias("reference_group"),
        pl.when(is_group).then(pl.col("s_rows")).otherwise(pl.col("__pf_tr")).cast(pl.Int64).alias("n"),
        pl.when(is_group).then(pl.col("s_nq")).when(pl.col("metric").is_in(["awrf", "ndkl"])).then(pl.col("__pf_aq"))
        .otherwise(pl.col("__pf_tq")).cast(F64).alias("n_eff"),
        pl.when(pl.col("set") >= 0).then(pl.col("n_groups")).alias("n_groups"),
    )  # fmt: skip
    out = out.with_columns(
        [pl.when(own).then(pl.lit(None, F64)).otherwise(pl.col(c)).alias(c)
         for c in ("difference_lo", "difference_hi", "ratio_lo", "ratio_hi", "p_value")]
        + [pl.when(own).then(0.0).otherwise(pl.col("difference")).alias("difference"),
           pl.when(own).then(1.0).otherwise(pl.col("ratio")).alias("ratio")]
    )  # fmt: skip
    if level is not None:
        adj = pl.col("p_value") if method is None else iv.p_adjust(pl.col("p_value"), method)  # type: ignore[arg-type]
        out = out.with_columns(adj.over([*by, "metric", is_group.alias("__pf_isg")]).alias("p_value_adjusted"),
                               pl.when(pl.col("value_lo").is_not_null() | pl.col("difference_lo").is_not_null())
                               .then(pl.lit("jackknife_t")).alias("ci_method"),
                               pl.when(pl.col("p_value").is_not_null()).then(pl.lit("jackknife_t")).alias("test"))  # fmt: skip
    keys = [*prot, *qprot]
    gk = _group_keys(groups, all_sets, keys)
    out = out.join(gk, on=["set", "group"], how="left", nulls_equal=True)
    out = out.sort([*by, "set", pl.col("group").is_not_null(), "group", pl.col("metric").replace_strict(_ORDER, return_dtype=pl.Int64)],
                   nulls_last=False)  # fmt: skip
    floats = ["value_lo", "value_hi", "difference_lo", "difference_hi", "ratio_lo", "ratio_hi", "p_value", "p_value_adjusted", "n_eff"]
    cats = ["ci_method", "test"]
    report = out.select(
        *by, pl.col("attribute").cast(pl.Categorical), "group", pl.col("metric").cast(pl.Categorical),
        pl.col("value").cast(F64), pl.col("reference_group").cast(pl.Categorical), pl.col("difference").cast(F64),
        pl.col("ratio").cast(F64), "n",
        *([pl.col(c).cast(F64) for c in floats] + [pl.col(c).cast(pl.Categorical) for c in cats] if level is not None else []),
        pl.col("n_groups").cast(pl.Int64), pl.lit(None, pl.String).alias("excluded_groups"), GROUP_KEY,
    )  # fmt: skip
    return report, left_out


def _group_keys(groups: pl.DataFrame, sets: list[tuple[str, ...]], keys: list[str]) -> pl.DataFrame:
    """(set, group label) -> the group's key struct (null for the attributes not in the set), from the distinct
    ``groups`` (or any frame with the ``keys`` columns).
    """
    frames = [
        groups.select(list(attrs)).unique().select(
            pl.lit(si, pl.Int64).alias("set"), group_label(list(attrs)).alias("group"),
            pl.struct([pl.col(c) if c in attrs else pl.lit(None, groups.schema[c]).alias(c) for c in keys]).alias(GROUP_KEY),
        )
        for si, attrs in enumerate(sets)
    ]  # fmt: skip
    if not frames:
        return pl.DataFrame(schema={"set": pl.Int64, "group": pl.String})
    return pl.concat(frames)
