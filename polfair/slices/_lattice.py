"""SliceLine's lattice search on small tables: candidates, bounds, pruning and the top k.

Pure arithmetic on the statistics of slices (numpy and small Polars joins); the data is read by the
level passes (:mod:`polfair.slices._pass`), which hand back, for every candidate of a level, its
row count ``n``, size ``s`` (Σw; ``n`` without weights), error sum ``e`` (Σw·e) and largest error
``m``. The rules are those of SliceLine (Sagadeeva & Boehm, SIGMOD 2021; SystemDS
``scripts/builtin/sliceLine.dml``) as the PyPI package ``sliceline`` 0.3.0 implements them
(``sliceline/slicefinder.py``), so that the same features, errors and parameters give the same
top k, bit for bit where the sums are exact:

* a slice is a conjunction of predicates ``feature = value``, at most one per feature; its
  *one-hot columns* are the (feature, value) pairs, numbered feature by feature in the order of the
  features and, within a feature, of its sorted values (``sklearn.preprocessing.OneHotEncoder``);
* score ``sc = α·((e/s)/ē − 1) − (1 − α)·(N/s − 1)`` with ``ē`` the mean error and ``N`` the rows
  (NaN → −inf, ±inf → ±max float, as ``np.nan_to_num``);
* level 1: every one-hot column; the working set keeps those with ``n ≥ min_sup`` and ``e > 0``;
* level L ≥ 2: every pair of working-set slices of level L−1 that share L−2 predicates and whose
  union has one predicate per feature; a candidate is kept only if all its L parents are in the
  working set (sliceline: it is produced by exactly L(L−1)/2 pairs); its size, error and maximum
  error are bounded by the minima over the *first* pair that produces it (the two parents earliest
  in the working set's order: one-hot column order at level 1, the slice id order after);
* the score's upper bound is the maximum of the score with size ``s'`` and error
  ``min(s'·m, e)`` at ``s' ∈ {min_sup, max(e/m, min_sup), s}``, with the number of one-hot columns
  in place of ``N`` (as sliceline's ``_score_ub``); a candidate is evaluated only if its bound is
  above the current k-th score and above 0 and its size bound is at least ``min_sup``;
* the top k keeps every slice of ``n ≥ min_sup`` and ``sc > 0`` whose score has rank
  ``≤ k`` (``rankdata(-sc, method="min")``: ties at the k-th score are all kept), ordered by score,
  then by the slice's one-hot columns (``np.lexsort``: a slice without the first column first);
* the search stops after ``min(max_level, features)`` levels or when a level has no candidate.

The *slice id order* (the order of the working set from level 2 on) is sliceline's mixed-radix id
``Σ_f (v_f + 1)·Π_{g>f}(d_g + 1)`` (``v_f`` the value's index, 0 where the feature is free),
computed here without overflow as a lexicographic order (:func:`id_order`).

With weights (a generalisation; sliceline has none) ``s`` is Σw, ``N`` is the total Σw, the
support ``min_sup`` counts rows, the size bound's lower end is ``min_sup·w_min`` and the number of
one-hot columns is scaled by the mean weight; without weights all of these reduce to sliceline's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import polars as pl
from scipy.stats import rankdata

__all__ = ["Evaluated", "Lattice", "id_order", "score", "score_upper_bound"]


def score(size: np.ndarray, esum: np.ndarray, *, alpha: float, mean_error: float, total: float) -> np.ndarray:
    """SliceLine's score of slices, exactly as ``sliceline.Slicefinder._score`` (numpy path).

    ``α·((e/s)/ē − 1) − (1 − α)·(N/s − 1)``; NaN (an empty slice) is −inf.

    Examples
    --------
    >>> score(np.array([10.0]), np.array([10.0]), alpha=0.95, mean_error=0.5, total=40).round(6).tolist()
    [0.8]
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        sc = alpha * ((esum / size) / mean_error - 1) - (1 - alpha) * (total / size - 1)
    return np.nan_to_num(sc, nan=-np.inf)


def score_upper_bound(
    size: np.ndarray, esum: np.ndarray, emax: np.ndarray, *, alpha: float, mean_error: float, n_cols: float,
    min_size: float,
) -> np.ndarray:  # fmt: skip
    """Upper bound of the score of any slice within size ``s``, error ``e`` and largest error ``m``.

    As ``sliceline.Slicefinder._score_ub`` (numpy path): the score is monotone in the size on each
    side of ``e/m``, so its maximum over sizes in ``[min_size, s]`` is at one of
    ``min_size``, ``max(e/m, min_size)``, ``s``; the size term uses ``n_cols`` (sliceline passes
    the number of one-hot columns there).

    Examples
    --------
    >>> b = score_upper_bound(np.array([40.0]), np.array([20.0]), np.array([1.0]), alpha=0.95, mean_error=0.5,
    ...                       n_cols=4, min_size=1)
    >>> round(float(b[0]), 4)
    0.99
    """
    ones = np.ones(size.shape[0])
    with np.errstate(divide="ignore", invalid="ignore"):
        pot = np.column_stack((min_size * ones, np.maximum(esum / emax, min_size), size))
        return np.amax(
            (alpha * (np.minimum(pot.T * emax, esum).T / mean_error - pot) - (1 - alpha) * (n_cols - pot)) / pot,
            axis=1,
        )


def id_order(g: np.ndarray, feature: np.ndarray, value: np.ndarray, n_features: int) -> np.ndarray:
    """The permutation that sorts slices of one level by sliceline's slice id.

    ``g`` is (m, L): each slice's one-hot columns, ascending (one per feature). The id compares
    features from the first: a free feature (0) before a constrained one, then by value. At the
    first position where two slices' sorted columns differ, the slice whose column lies on the later
    feature is smaller (the other constrains an earlier feature that it leaves free), and on the
    same feature the smaller value is smaller: so the order is lexicographic in
    ``(−feature, value)`` position by position.

    Examples
    --------
    >>> # features 0, 1, 2 with two values each: columns 0,1 | 2,3 | 4,5
    >>> feat, val = np.array([0, 0, 1, 1, 2, 2]), np.array([0, 1, 0, 1, 0, 1])
    >>> g = np.array([[0, 2], [2, 4], [0, 4], [1, 2]])
    >>> id_order(g, feat, val, 3).tolist()  # (f1=0, f2=0) < (f0=0, f2=0) < (f0=0, f1=0) < (f0=1, f1=0)
    [1, 2, 0, 3]
    """
    if g.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    width = int(value.max(initial=0)) + 1
    keys = (n_features - 1 - feature[g]).astype(np.int64) * width + value[g]
    return np.lexsort(keys.T[::-1])


@dataclass
class Evaluated:
    """The evaluated slices of one level: one-hot columns and statistics, in evaluation order.

    Attributes
    ----------
    g
        (m, L) Int64 one-hot columns of each slice, ascending.
    stats
        Name -> (m,) array: at least ``n`` (rows), ``s`` (size Σw), ``e`` (Σw·e), ``m`` (largest
        error); the pass may add more sums (kept for the statistics).
    sc
        Scores.
    """

    g: np.ndarray
    stats: dict[str, np.ndarray]
    sc: np.ndarray = field(default_factory=lambda: np.zeros(0))


@dataclass
class Lattice:
    """One SliceLine search (parameters as in :func:`polfair.slice_scan`).

    Attributes
    ----------
    feature, value
        Per one-hot column: its feature index and the value's index within the feature.
    n_features
        Number of features.
    alpha, k, max_level, min_sup
        SliceLine's ``alpha``, ``k``, ``max_l`` and ``min_sup`` (a row count).
    mean_error, total
        ``ē`` and ``N`` of the score (Σw·e/Σw and Σw).
    n_cols, min_size
        The size constant and the size bound's lower end of the upper bound (sliceline: the number
        of one-hot columns and ``min_sup``).
    levels
        The evaluated slices of every level (filled by :meth:`run`).
    top
        (level, index) of each top-k slice, best first (filled by :meth:`run`).
    """

    feature: np.ndarray
    value: np.ndarray
    n_features: int
    alpha: float
    k: int
    max_level: int
    min_sup: float
    mean_error: float
    total: float
    n_cols: float
    min_size: float
    levels: list[Evaluated] = field(default_factory=list)
    top: list[tuple[int, int]] = field(default_factory=list)
    candidates: list[int] = field(default_factory=list)

    def _score(self, ev: Evaluated) -> np.ndarray:
        return score(ev.stats["s"], ev.stats["e"], alpha=self.alpha, mean_error=self.mean_error, total=self.total)

    # ------------------------------------------------------------------------------------------
    # top k

    def _top_scores(self) -> np.ndarray:
        return np.array([self.levels[lv].sc[i] for lv, i in self.top], dtype=np.float64)

    def _maintain_top_k(self, level: int) -> None:
        ev = self.levels[level]
        valid = np.flatnonzero((ev.stats["n"] >= self.min_sup) & (ev.sc > 0))
        if valid.size == 0:
            return
        entries = self.top + [(level, int(i)) for i in valid]
        sc = np.concatenate([self._top_scores(), ev.sc[valid]])
        keep = np.flatnonzero(rankdata(-sc, method="min") <= self.k)
        entries, sc = [entries[i] for i in keep], sc[keep]
        onehot = np.zeros((len(entries), self.feature.shape[0]), dtype=bool)
        for row, (lv, i) in enumerate(entries):
            onehot[row, self.levels[lv].g[i]] = True
        order = np.lexsort(tuple(onehot[:, c] for c in range(onehot.shape[1]))[::-1] + (-sc,))
        self.top = [entries[i] for i in order]

    def _min_top_score(self) -> float:
        return float(self.levels[self.top[-1][0]].sc[self.top[-1][1]]) if self.top else -np.inf

    # ------------------------------------------------------------------------------------------
    # candidates

    def _candidates(self, level: int) -> tuple[np.ndarray, np.ndarray]:
        """Level ``level``'s candidates from the previous level's working set, pruned; in id order.

        Returns the candidates' one-hot columns (m, level) and their row-count bounds.
        """
        prev = self.levels[-1]
        keep = np.flatnonzero((prev.stats["n"] >= self.min_sup) & (prev.stats["e"] > 0))
        R = prev.g[keep]
        stats = {k: prev.stats[k][keep] for k in ("n", "s", "e", "m")}
        width = level - 1
        cols = [f"g{i}" for i in range(width)]
        work = pl.DataFrame({c: R[:, i] for i, c in enumerate(cols)}, schema={c: pl.Int64 for c in cols}).with_row_index("pos")
        # the Apriori join: two slices sharing their first L-2 columns, the second's last on a later feature
        prefix = cols[:-1]
        last = cols[-1]
        left = work.with_columns(pl.Series("f", self.feature[R[:, -1]].astype(np.int64)))
        if prefix:
            pairs = left.join(left, on=prefix, suffix="_r")
        else:
            pairs = left.join(left, how="cross", suffix="_r")
        pairs = pairs.filter(pl.col("f") < pl.col("f_r"))
        if pairs.height == 0:
            return np.zeros((0, level), dtype=np.int64), np.zeros(0)
        cand = np.column_stack([pairs[c].to_numpy() for c in cols] + [pairs[f"{last}_r"].to_numpy()]).astype(np.int64)
        # every parent (the candidate less one column) must be in the working set; the bounds come from
        # the two parents earliest in the working set (sliceline's first pair)
        lookup = work.rename({"pos": "__pos"})
        positions = []
        for drop in range(level):
            parent = np.delete(cand, drop, axis=1)
            frame = pl.DataFrame({c: parent[:, i] for i, c in enumerate(cols)}, schema={c: pl.Int64 for c in cols})
            found = frame.with_row_index("__row").join(lookup, on=cols, how="left").sort("__row")["__pos"]
            positions.append(found.fill_null(-1).to_numpy().astype(np.int64))
        pos = np.column_stack(positions)
        complete = (pos >= 0).all(axis=1)
        cand, pos = cand[complete], pos[complete]
        if cand.shape[0] == 0:
            return np.zeros((0, level), dtype=np.int64), np.zeros(0)
        pos.sort(axis=1)
        a, b = pos[:, 0], pos[:, 1]
        n_b = np.minimum(stats["n"][a], stats["n"][b])
        s_b = np.minimum(stats["s"][a], stats["s"][b])
        e_b = np.minimum(stats["e"][a], stats["e"][b])
        m_b = np.minimum(stats["m"][a], stats["m"][b])
        order = id_order(cand, self.feature, self.value, self.n_features)
        cand, n_b, s_b, e_b, m_b = cand[order], n_b[order], s_b[order], e_b[order], m_b[order]
        ub = score_upper_bound(s_b, e_b, m_b, alpha=self.alpha, mean_error=self.mean_error, n_cols=self.n_cols,
                               min_size=self.min_size)  # fmt: skip
        keep = (ub > self._min_top_score()) & (ub > 0) & (n_b >= self.min_sup)
        return cand[keep], n_b[keep]

    # ------------------------------------------------------------------------------------------
    # the search

    def run(self, level1: dict[str, np.ndarray], evaluate: Callable[[int, np.ndarray], dict[str, np.ndarray]]) -> None:
        """Search: ``level1`` holds the statistics of every one-hot column; ``evaluate(level, g)``
        returns the statistics of the candidates ``g`` (one scan of the data).
        """
        ev = Evaluated(np.arange(self.feature.shape[0], dtype=np.int64).reshape(-1, 1), dict(level1))
        ev.sc = self._score(ev)
        self.levels.append(ev)
        self.candidates.append(int(self.feature.shape[0]))
        self._maintain_top_k(0)
        level = 1
        stop = min(self.n_features, self.max_level)
        working = int(((level1["n"] >= self.min_sup) & (level1["e"] > 0)).sum())
        while working > 0 and level < stop:
            level += 1
            cand, _ = self._candidates(level)
            stats = evaluate(level, cand) if cand.shape[0] else {k: np.zeros(0) for k in level1}
            ev = Evaluated(cand, stats)
            ev.sc = self._score(ev)
            self.levels.append(ev)
            self.candidates.append(int(cand.shape[0]))
            self._maintain_top_k(level - 1)
            working = cand.shape[0]
