"""A naive, item-by-item Python reference of the ranking metrics (docs/ranking.md), for the tests."""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any


def v(pos: int, kind: str = "log", k: int | None = None, p: float = 0.5) -> float:
    if k is not None and pos > k:
        return 0.0
    if kind == "log":
        return 1.0 / math.log2(1 + pos)
    if kind == "geometric":
        return p * (1 - p) ** (pos - 1)
    return 1.0 / pos


def item_weights(ranks: list[int], kind: str = "log", k: int | None = None, p: float = 0.5) -> list[float]:
    """Each item's mean weight over the positions its competition-rank tie spans."""
    size: dict[int, int] = defaultdict(int)
    for r in ranks:
        size[r] += 1
    return [sum(v(pos, kind, k, p) for pos in range(r, r + size[r])) / size[r] for r in ranks]


def top_fraction(ranks: list[int], k: int) -> list[float]:
    size: dict[int, int] = defaultdict(int)
    for r in ranks:
        size[r] += 1
    return [sum(1 for pos in range(r, r + size[r]) if pos <= k) / size[r] for r in ranks]


def report(rows: list[dict[str, Any]], k: int | None, kind: str = "log", p: float = 0.5) -> dict[str, Any]:
    """rows: dicts with q, r, g (and rel, qg). Returns group metrics, awrf, ndkl, ndcg by qg."""
    by_q: dict[Any, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_q[row["q"]].append(row)
    E: dict[Any, float] = defaultdict(float)
    N: dict[Any, int] = defaultdict(int)
    T: dict[Any, float] = defaultdict(float)
    R: dict[Any, float] = defaultdict(float)
    awrf, ndkl, ndcg = [], [], defaultdict(list)
    tot_l = 0
    for items in by_q.values():
        ranks = [it["r"] for it in items]
        w = item_weights(ranks, kind, k, p)
        wl = item_weights(ranks, "log", k)
        for it, wi in zip(items, w):
            E[it["g"]] += wi
            N[it["g"]] += 1
            R[it["g"]] += it.get("rel", 0.0)
        n_q = len(items)
        L = n_q if k is None else min(k, n_q)
        tot_l += L
        if k is not None:
            for it, f in zip(items, top_fraction(ranks, k)):
                T[it["g"]] += f
        groups = sorted({it["g"] for it in items}, key=str)
        if len(groups) >= 2:
            a = []
            for g in groups:
                mine = [wi for it, wi in zip(items, w) if it["g"] == g]
                a.append(sum(mine) / len(mine))
            if max(a) > 0:
                awrf.append(min(a) / max(a))
            # NDKL with expected top-i composition
            size: dict[int, int] = defaultdict(int)
            for r in ranks:
                size[r] += 1
            share = {g: sum(1 for it in items if it["g"] == g) / n_q for g in groups}
            num = den = 0.0
            for i in range(1, L + 1):
                cnt = {g: 0.0 for g in groups}
                for it in items:
                    r, m = it["r"], size[it["r"]]
                    cnt[it["g"]] += sum(1 for pos in range(r, r + m) if pos <= i) / m
                kl = sum((c / i) * math.log((c / i) / share[g]) for g, c in cnt.items() if c > 0)
                num += v(i) * kl
                den += v(i)
            ndkl.append(num / den)
        if "qg" in items[0]:
            dcg = sum(it["rel"] * wi for it, wi in zip(items, wl))
            ideal = sorted((it["rel"] for it in items), reverse=True)[:L]
            idcg = sum(x * v(j + 1) for j, x in enumerate(ideal))
            ndcg[items[0]["qg"]].append(dcg / idcg if idcg > 0 else 0.0)
    allE, allN = sum(E.values()), sum(N.values())
    out: dict[str, Any] = {"exposure": {g: E[g] / N[g] for g in N}, "exposure_share": {g: E[g] / allE for g in N},
                           "item_share": {g: N[g] / allN for g in N}}
    if any(R.values()):
        out["exposure_per_relevance"] = {g: E[g] / R[g] for g in N if R[g] > 0}
    if k is not None:
        out["top_k_share"] = {g: T[g] / tot_l for g in N}
    out["awrf"] = sum(awrf) / len(awrf) if awrf else None
    out["ndkl"] = sum(ndkl) / len(ndkl) if ndkl else None
    out["ndcg_at_k"] = {g: sum(x) / len(x) for g, x in ndcg.items()}
    return out
