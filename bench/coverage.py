"""Coverage benchmark of polfair's confidence intervals and type-I error of its tests (issue 11).

Usage::

    python bench/coverage.py [--reps 2000] [--boot 200] [--seed 20261123] [--out bench/results.md]

Simulated audits with known true rates, evaluated with the functions the report uses
(:mod:`polfair.core.intervals`; closed forms as Polars expressions over one row per simulated
audit, so each scenario is one vectorised plan). Prints, per scenario, the empirical coverage of
each 95% interval family (share of simulated audits whose interval contains the true value) and
the type-I error of each test at nominal 5% under H0, with the Monte Carlo standard error.
``--out`` appends the tables as a new section at the end of the given markdown file.

Scenarios: balanced (1000/1000), small groups (10–50 rows against 200), rates near 0 and 1,
weighted rows (lognormal weights, Kish effective sizes), 30 intersectional groups (n 20…1000:
spreads, homogeneity, BH, between-group GE(2) cell bootstrap), clustered rows (delete-a-group
jackknife vs Newcombe). ``--regression``: the regression intervals (issue 23); ``--bisg``: groups
estimated from BISG probabilities (issue 34); ``--small``: groups of 5-50 rows, perfect separation,
rare classes: rates, the score report's AUC / AP / Brier intervals, the corrected between-group
variance (issue 39). Not a timed benchmark; ``tests/core/intervals/test_coverage.py`` runs a fast seeded
slice of it.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from polfair.core import intervals as iv
from polfair.core.intervals import Rate

CI = 0.95
Z = iv.z_value(CI)
G = Rate(pl.col("p1"), pl.col("n1"))
R = Rate(pl.col("p2"), pl.col("n2"))


def _pair_frame(x1, n1, x2, n2) -> pl.DataFrame:
    df = pl.DataFrame({"x1": x1, "n1": n1, "x2": x2, "n2": n2}).cast(pl.Float64)
    return df.with_columns(
        p1=pl.when(pl.col("n1") > 0).then(pl.col("x1") / pl.col("n1")),
        p2=pl.when(pl.col("n2") > 0).then(pl.col("x2") / pl.col("n2")),
    )


def _covers(lo: pl.Series, hi: pl.Series, truth: float | np.ndarray) -> tuple[float, float]:
    """(coverage among defined intervals, share undefined); an upper null = unbounded."""
    lo_a = lo.to_numpy().astype(float)
    hi_a = hi.fill_null(float("inf")).to_numpy().astype(float)
    ok = ~np.isnan(lo_a)
    t = np.broadcast_to(np.asarray(truth, dtype=float), lo_a.shape)
    cov = np.mean((lo_a[ok] <= t[ok] + 1e-12) & (t[ok] - 1e-12 <= hi_a[ok])) if ok.any() else float("nan")
    return float(cov), float(1 - ok.mean())


def two_group(
    rng: np.random.Generator, reps: int, n1: int | np.ndarray, n2: int, p1: float, p2: float
) -> dict[str, tuple[float, float]]:
    """Rate (Wilson), difference (Newcombe), ratio (MOVER-R) coverage and the test's rejection rate."""
    n1a = np.broadcast_to(np.asarray(n1), (reps,)).astype(np.int64)
    x1, x2 = rng.binomial(n1a, p1), rng.binomial(n2, p2, reps)
    df = _pair_frame(x1, n1a, x2, np.full(reps, n2))
    w = iv.wilson_interval(G, Z)
    d = iv.newcombe_interval(G, R, Z)
    q = iv.mover_ratio_interval(G, R, Z)
    t = iv.two_proportion_test(G, R)
    out = df.select(
        w.lo.alias("wl"), w.hi.alias("wh"), d.lo.alias("dl"), d.hi.alias("dh"),
        q.lo.alias("ql"), q.hi.alias("qh"), t.p_value.alias("p"),
    )  # fmt: skip
    res = {
        "rate: Wilson": _covers(out["wl"], out["wh"], p1),
        "difference: Newcombe": _covers(out["dl"], out["dh"], p1 - p2),
        "ratio: MOVER-R": _covers(out["ql"], out["qh"], p1 / p2),
    }
    if p1 == p2:
        res["test: N-1 chi2 / Fisher (type-I)"] = (float((out["p"] < 0.05).mean()), 0.0)
    return res


def odds(
    rng: np.random.Generator,
    reps: int,
    n_g: int,
    n_r: int,
    base: float,
    tpr: tuple[float, float],
    fpr: tuple[float, float],
) -> dict[str, tuple[float, float]]:
    """average_odds_difference (MOVER sum) and equalized_odds_difference (projection), 2-df test."""
    pos_g, pos_r = rng.binomial(n_g, base, reps), rng.binomial(n_r, base, reps)
    neg_g, neg_r = n_g - pos_g, n_r - pos_r
    tp_g, tp_r = rng.binomial(pos_g, tpr[0]), rng.binomial(pos_r, tpr[1])
    fp_g, fp_r = rng.binomial(neg_g, fpr[0]), rng.binomial(neg_r, fpr[1])
    df = pl.DataFrame(
        {"tpg": tp_g, "pg": pos_g, "tpr_": tp_r, "pr": pos_r, "fpg": fp_g, "ng": neg_g, "fpr_": fp_r, "nr": neg_r}
    ).cast(pl.Float64)

    def rate(x: str, n: str) -> Rate:
        return Rate(pl.when(pl.col(n) > 0).then(pl.col(x) / pl.col(n)), pl.col(n))

    pairs = [(rate("tpg", "pg"), rate("tpr_", "pr")), (rate("fpg", "ng"), rate("fpr_", "nr"))]
    a = iv.average_difference_interval(pairs, Z)
    e = iv.max_abs_difference_interval(pairs, CI)
    t = iv.chi2_2df_test(pairs)
    out = df.select(a.lo.alias("al"), a.hi.alias("ah"), e.lo.alias("el"), e.hi.alias("eh"), t.p_value.alias("p"))
    aod = 0.5 * ((tpr[0] - tpr[1]) + (fpr[0] - fpr[1]))
    eod = max(abs(tpr[0] - tpr[1]), abs(fpr[0] - fpr[1]))
    res = {"AOD: MOVER sum": _covers(out["al"], out["ah"], aod), "EOD: projection": _covers(out["el"], out["eh"], eod)}
    if tpr[0] == tpr[1] and fpr[0] == fpr[1]:
        res["test: 2-df chi2 (type-I)"] = (
            float((out["p"].drop_nulls() < 0.05).mean()),
            float(out["p"].null_count() / reps),
        )
    return res


def weighted(
    rng: np.random.Generator, reps: int, n1: int, n2: int, p1: float, p2: float, sigma: float = 1.0
) -> dict[str, tuple[float, float]]:
    """Wilson / Newcombe with Kish effective sizes (lognormal weights, independent of y); z_ess test."""
    rows = []
    for n, p in ((n1, p1), (n2, p2)):
        y = rng.random((reps, n)) < p
        w = rng.lognormal(0.0, sigma, (reps, n))
        sw, sw2 = w.sum(axis=1), (w * w).sum(axis=1)
        rows.append(((w * y).sum(axis=1) / sw, sw * sw / sw2))
    df = pl.DataFrame({"p1": rows[0][0], "n1": rows[0][1], "p2": rows[1][0], "n2": rows[1][1]})
    w_ = iv.wilson_interval(G, Z)
    d = iv.newcombe_interval(G, R, Z)
    t = iv.two_proportion_test(G, R, weighted=True)
    naive = iv.wilson_interval(Rate(pl.col("p1"), pl.lit(float(n1))), Z)
    out = df.select(
        w_.lo.alias("wl"),
        w_.hi.alias("wh"),
        d.lo.alias("dl"),
        d.hi.alias("dh"),
        naive.lo.alias("nl"),
        naive.hi.alias("nh"),
        t.p_value.alias("p"),
    )
    res = {
        "rate: Wilson, Kish n_eff": _covers(out["wl"], out["wh"], p1),
        "rate: Wilson, row count (naive, for comparison)": _covers(out["nl"], out["nh"], p1),
        "difference: Newcombe, Kish n_eff": _covers(out["dl"], out["dh"], p1 - p2),
    }
    if p1 == p2:
        res["test: z with n_eff (type-I)"] = (float((out["p"] < 0.05).mean()), 0.0)
    return res


def many_groups(
    rng: np.random.Generator, reps: int, k: int, rates: np.ndarray, sizes: np.ndarray
) -> dict[str, tuple[float, float]]:
    """Spreads (max − min, min / max) by projection; χ² homogeneity / exact moments; BH vs raw under the null."""
    x = rng.binomial(sizes[None, :], rates[None, :], (reps, k))
    df = pl.DataFrame({
        "rep": np.repeat(np.arange(reps), k), "g": np.tile(np.arange(k), reps),
        "x": x.ravel().astype(float), "n": np.tile(sizes, reps).astype(float),
    }).with_columns(p=pl.col("x") / pl.col("n"))  # fmt: skip
    r = Rate(pl.col("p"), pl.col("n"))
    s = iv.spread_intervals(r, CI)
    h = iv.homogeneity_test([r])
    out = df.group_by("rep", maintain_order=True).agg(
        s.difference_lo.alias("dl"), s.difference_hi.alias("dh"), s.ratio_lo.alias("rl"), s.ratio_hi.alias("rh"),
        h.alias("h"),
    ).unnest("h")  # fmt: skip
    res = {
        f"spread max-min: projection ({k} groups)": _covers(out["dl"], out["dh"], rates.max() - rates.min()),
        f"spread min/max: projection ({k} groups)": _covers(out["rl"], out["rh"], rates.min() / rates.max()),
    }
    if np.all(rates == rates[0]):
        mom = 100 * float((out["test"] == "chi2_moments").mean())
        res[f"test: homogeneity chi2 / exact moments ({k} groups; type-I; {mom:.0f}% moments)"] = (
            float((out["p_value"] < 0.05).mean()), 0.0)  # fmt: skip
        # each group vs the largest: raw p < 0.05 for any group (FWER) vs BH-adjusted
        ref = int(np.argmax(sizes))
        pairs = df.join(
            df.filter(pl.col("g") == ref).select("rep", pl.col("p").alias("p2"), pl.col("n").alias("n2")), on="rep"
        )
        pairs = pairs.filter(pl.col("g") != ref).rename({"p": "p1", "n": "n1"})
        t = iv.two_proportion_test(G, R)
        tested = pairs.with_columns(t.p_value.alias("pv")).with_columns(
            iv.p_adjust(pl.col("pv")).over("rep").alias("adj")
        )
        fw = tested.group_by("rep").agg(
            (pl.col("pv") < 0.05).any().alias("raw"), (pl.col("adj") < 0.05).any().alias("bh")
        )
        res[f"family-wise error, {k - 1} groups vs largest: raw p"] = (float(fw["raw"].mean()), 0.0)
        res[f"family-wise error, {k - 1} groups vs largest: BH"] = (float(fw["bh"].mean()), 0.0)
    return res


def homogeneity(rng: np.random.Generator, reps: int, p: float, sizes: np.ndarray) -> dict[str, tuple[float, float]]:
    """Type-I error of the report's homogeneity test under H0 (one rate ``p`` in every group), vectorised over
    the simulated audits (``homogeneity_table``, the report's code), against Pearson's χ² with k − 1 df alone.
    """
    from scipy import stats

    k = len(sizes)
    x = rng.binomial(sizes[None, :], p, (reps, k))
    df = pl.DataFrame({"rep": np.repeat(np.arange(reps), k), "x": x.ravel().astype(float),
                       "n": np.tile(sizes, reps).astype(float)}).with_columns(p=pl.col("x") / pl.col("n"))  # fmt: skip
    out = iv.homogeneity_table(df, by=["rep"], families={"h": [("p", "n")]}).drop_nulls("h__tp")
    pooled = x.sum(axis=1) / sizes.sum()
    with np.errstate(invalid="ignore", divide="ignore"):
        stat = np.nansum((x - sizes * pooled[:, None]) ** 2 / sizes, axis=1) / (pooled * (1 - pooled))
    chi = stats.chi2.sf(stat, k - 1)[(pooled > 0) & (pooled < 1)]
    mom = 100 * float((out["h__tt"] == "chi2_moments").mean())
    return {
        f"test: homogeneity as the report ({mom:.0f}% exact moments; type-I)": (float((out["h__tp"] < 0.05).mean()), 0.0),
        f"test: Pearson chi2, {k - 1} df, always (type-I)": (float((chi < 0.05).mean()), 0.0),
    }


def _entropy_audits(
    rng: np.random.Generator, reps: int, k: int, sizes: np.ndarray, fprs: np.ndarray
) -> tuple[pl.DataFrame, dict[str, float]]:
    """Simulated cell tables (one ``rep`` per audit, ``k`` groups: base rate 0.4, TPR 0.7, FPR
    ``fprs``) and the true between-group GE(2) and Theil of the expected group mean benefits
    1 + P(ŷ=1) − P(y=1), weighted by group size.
    """
    base, tpr = 0.4, 0.7
    pos = rng.binomial(sizes[None, :], base, (reps, k))
    neg = sizes[None, :] - pos
    tp = rng.binomial(pos, tpr)
    fp = rng.binomial(neg, fprs[None, :])
    cells = pl.DataFrame({
        "rep": np.repeat(np.arange(reps), k), "g": np.tile([f"g{i:02d}" for i in range(k)], reps),
        "tp_n": tp.ravel(), "fp_n": fp.ravel(), "tn_n": (neg - fp).ravel(), "fn_n": (pos - tp).ravel(),
    }).with_columns(pl.col("tp_n", "fp_n", "tn_n", "fn_n").cast(pl.UInt64))  # fmt: skip
    mu_g = 1.0 + base * tpr + (1 - base) * fprs - base
    mu = float(np.sum(sizes * mu_g) / sizes.sum())
    r = mu_g / mu
    truths = {
        "GE(2)": float(np.sum(sizes * (r**2 - 1.0)) / (sizes.sum() * 2.0)),
        "Theil": float(np.sum(sizes * r * np.log(r)) / sizes.sum()),
    }
    return cells, truths


def entropy_between(
    rng: np.random.Generator, reps: int, k: int, sizes: np.ndarray, fprs: np.ndarray, boot: int
) -> dict[str, tuple[float, float]]:
    """Between-group GE(2), stratified cell bootstrap (bias-corrected normal), replicates as by values."""
    cells, truths = _entropy_audits(rng, reps, k, sizes, fprs)
    out = iv.entropy_bootstrap(cells, protected=["g"], by=["rep"], n_boot=boot, seed=1)
    out = out.filter(pl.col("metric") == "between_group_generalized_entropy_index")
    return {
        f"between-group GE(2): cell bootstrap, bias-corrected normal ({k} groups)": _covers(
            out["value_lo"], out["value_hi"], truths["GE(2)"]
        )
    }


def entropy_analytic(
    rng: np.random.Generator, reps: int, k: int, sizes: np.ndarray, fprs: np.ndarray
) -> dict[str, tuple[float, float]]:
    """Between-group GE(2) and Theil, the report's analytic moments of the cell bootstrap (``entropy_delta``)."""
    cells, truths = _entropy_audits(rng, reps, k, sizes, fprs)
    out = iv.entropy_delta(cells, protected=["g"], by=["rep"])
    res = {}
    for label, metric in (("GE(2)", "between_group_generalized_entropy_index"), ("Theil", "between_group_theil_index")):
        rows = out.filter(pl.col("metric") == metric)
        res[f"between-group {label}: analytic cell-bootstrap moments ({k} groups)"] = _covers(
            rows["value_lo"], rows["value_hi"], truths[label]
        )
    return res


def edf(
    rng: np.random.Generator, reps: int, k: int, sizes: np.ndarray, rates: np.ndarray
) -> dict[str, tuple[float, float]]:
    """EDF (unsmoothed population value) by projection of simultaneous Wilson limits on log rates."""
    x = rng.binomial(sizes[None, :], rates[None, :], (reps, k))
    df = pl.DataFrame(
        {"rep": np.repeat(np.arange(reps), k), "x": x.ravel().astype(float), "n": np.tile(sizes, reps).astype(float)}
    )
    e = iv.edf_interval(pl.col("x"), pl.col("n"), None, CI)
    out = df.group_by("rep").agg(e.lo.alias("lo"), e.hi.alias("hi"))
    truth = max(np.log(rates).max() - np.log(rates).min(), np.log(1 - rates).max() - np.log(1 - rates).min())
    cov, _ = _covers(out["lo"], out["hi"], truth)
    return {f"EDF: projection ({k} cells; {100 * out['hi'].null_count() / reps:.0f}% unbounded above)": (cov, 0.0)}


def clustered(
    rng: np.random.Generator, reps: int, clusters: int, per: int, p0: float, sigma: float
) -> dict[str, tuple[float, float]]:
    """Statistical parity difference with clustered rows: Newcombe (iid) vs delete-a-group jackknife (20 buckets)."""
    logit = math.log(p0 / (1 - p0))
    rows = []
    for rep in range(reps):
        for g in ("a", "b"):
            u = rng.normal(0.0, sigma, clusters)
            p = 1.0 / (1.0 + np.exp(-(logit + u)))
            x = rng.binomial(per, p)
            ids = rng.integers(0, 2**40, clusters)  # cluster ids, hashed to buckets like the pass does
            rows.append(pl.DataFrame({"rep": rep, "g": g, "uid": ids, "x": x.astype(float), "n": float(per)}))
    df = pl.concat(rows).with_columns(iv.bucket_of(pl.col("uid")).alias("bucket")).drop("uid")
    cells = df.group_by("rep", "g", "bucket").agg(pl.col("x", "n").sum())

    def spd(t: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
        r = t.group_by([*keys, "g"]).agg(pl.col("x").sum() / pl.col("n").sum())
        wide = r.pivot(on="g", index=keys, values="x")
        return wide.select(*keys, (pl.col("a") - pl.col("b")).alias("value"))

    jk = iv.jackknife_intervals(cells, spd, by=["rep"], sums=["x", "n"], ci=CI)
    tot = cells.group_by("rep", "g").agg(pl.col("x", "n").sum()).pivot(on="g", index="rep", values=["x", "n"])
    pairs = _pair_frame(tot["x_a"], tot["n_a"], tot["x_b"], tot["n_b"])
    d = iv.newcombe_interval(G, R, Z)
    nc = pairs.select(d.lo.alias("lo"), d.hi.alias("hi"))
    return {
        f"clustered SPD (sd {sigma}): Newcombe, iid (for comparison)": _covers(nc["lo"], nc["hi"], 0.0),
        f"clustered SPD (sd {sigma}): delete-a-group jackknife, t19": _covers(jk["value_lo"], jk["value_hi"], 0.0),
    }


def scenarios(
    reps: int, boot: int
) -> list[tuple[str, Callable[[np.random.Generator], dict[str, tuple[float, float]]]]]:
    sizes30 = np.round(np.geomspace(20, 1000, 30)).astype(np.int64)
    rates30 = np.linspace(0.2, 0.5, 30)
    fpr30 = np.linspace(0.10, 0.30, 30)
    return [
        ("balanced 1000/1000, p 0.30/0.40", lambda g: two_group(g, reps, 1000, 1000, 0.3, 0.4)),
        ("balanced 1000/1000, H0 p = 0.30", lambda g: two_group(g, reps, 1000, 1000, 0.3, 0.3)),
        (
            "small groups n 10..50 vs 200, p 0.30/0.45",
            lambda g: two_group(g, reps, g.integers(10, 51, reps), 200, 0.3, 0.45),
        ),
        (
            "small groups n 10..50 vs 200, H0 p = 0.30",
            lambda g: two_group(g, reps, g.integers(10, 51, reps), 200, 0.3, 0.3),
        ),
        ("near 0: 100/200, p 0.02/0.05", lambda g: two_group(g, reps, 100, 200, 0.02, 0.05)),
        ("near 1: 200/200, p 0.97/0.99", lambda g: two_group(g, reps, 200, 200, 0.97, 0.99)),
        ("near 0, H0: 50/50, p = 0.05", lambda g: two_group(g, reps, 50, 50, 0.05, 0.05)),
        ("odds: 40 vs 400, TPR 0.6/0.75, FPR 0.2/0.1", lambda g: odds(g, reps, 40, 400, 0.4, (0.6, 0.75), (0.2, 0.1))),
        ("odds: 20 vs 1000, H0", lambda g: odds(g, reps, 20, 1000, 0.4, (0.7, 0.7), (0.2, 0.2))),
        ("weighted (lognormal sd 1): 300/300, p 0.3/0.4", lambda g: weighted(g, reps, 300, 300, 0.3, 0.4)),
        ("weighted (lognormal sd 1): 60/200, H0 p = 0.3", lambda g: weighted(g, reps, 60, 200, 0.3, 0.3)),
        ("30 groups n 20..1000, p 0.2..0.5", lambda g: many_groups(g, reps, 30, rates30, sizes30)),
        ("30 groups n 20..1000, H0 p = 0.3", lambda g: many_groups(g, reps, 30, np.full(30, 0.3), sizes30)),
        (
            "30 groups n 20..1000, H0 p = 0.03 (Cochran fails)",
            lambda g: many_groups(g, reps, 30, np.full(30, 0.03), sizes30),
        ),
        ("homogeneity, H0: 3 groups n 5, 8, 12, p = 0.15", lambda g: homogeneity(g, reps, 0.15, np.array([5, 8, 12]))),
        (
            "homogeneity, H0: 6 groups n 3175..11 (COMPAS races), p = 0.02",
            lambda g: homogeneity(g, reps, 0.02, np.array([3175, 2103, 509, 343, 31, 11])),
        ),
        (
            "homogeneity, H0: 60 groups n 5..200, p = 0.1",
            lambda g: homogeneity(g, reps, 0.1, np.linspace(5, 200, 60).astype(np.int64)),
        ),
        (
            "homogeneity, H0: 1,000 groups of 1-3 rows, p = 0.1",
            lambda g: homogeneity(g, reps, 0.1, np.tile([1, 2, 3], 334)[:1000]),
        ),
        (
            "homogeneity, H0: 20,000 groups of 1-2 rows, p = 0.3",
            lambda g: homogeneity(g, max(reps // 4, 200), 0.3, np.tile([1, 2], 10_000)),
        ),
        ("30 groups: between-group GE(2)", lambda g: entropy_between(g, max(reps // 10, 50), 30, sizes30, fpr30, boot)),
        ("entropy, analytic: 30 groups n 20..1000", lambda g: entropy_analytic(g, reps, 30, sizes30, fpr30)),
        (
            "entropy, analytic: 30 groups n 20..1000, H0 (true index 0)",
            lambda g: entropy_analytic(g, reps, 30, sizes30, np.full(30, 0.2)),
        ),
        (
            "entropy, analytic: 30 small groups n 5..40",
            lambda g: entropy_analytic(g, reps, 30, np.linspace(5, 40, 30).astype(np.int64), fpr30),
        ),
        ("30 cells: EDF", lambda g: edf(g, reps, 30, np.round(np.geomspace(100, 2000, 30)).astype(np.int64), rates30)),
        (
            "clustered: 2 x 100 clusters x 10 rows, sd 1.0",
            lambda g: clustered(g, max(reps // 10, 50), 100, 10, 0.3, 1.0),
        ),
    ]


# ----------------------------------------------------------------------------------------------
# regression intervals (issue 23): polfair.core.regression's t / Welch / delta-method intervals


def _reg_moments(y: np.ndarray, p: np.ndarray, w: np.ndarray):
    """Weights and centred moments of each replicate (rows of the (reps, n) arrays), as the cell table holds them."""
    from polfair.core.regression import Moments

    W = w.sum(1, keepdims=True)
    e = p - y
    q = {"y": y, "p": p, "e": e, "ae": np.abs(e), "e2": e * e}
    mean = {k: (w * v).sum(1, keepdims=True) / W for k, v in q.items()}
    d = {k: v - mean[k] for k, v in q.items()}
    s = {
        "w": W[:, 0], "w2": (w * w).sum(1), **{f"mean_{k}": m[:, 0] for k, m in mean.items()},
        "m2_y": (w * d["y"] ** 2).sum(1), "m3_y": (w * d["y"] ** 3).sum(1), "m4_y": (w * d["y"] ** 4).sum(1),
        "m2_p": (w * d["p"] ** 2).sum(1), "c_yp": (w * d["y"] * d["p"]).sum(1), "m2_e": (w * d["e"] ** 2).sum(1),
        "m2_ae": (w * d["ae"] ** 2).sum(1), "m2_e2": (w * d["e2"] ** 2).sum(1),
        "c_e2y": (w * d["e2"] * d["y"]).sum(1), "c_e2y2": (w * d["e2"] * d["y"] ** 2).sum(1),
        "y_min": y.min(1), "y_max": y.max(1),
    }  # fmt: skip
    return Moments(s)


def _reg_draw(g: np.random.Generator, reps: int, n: int, shift: float, weights: bool = False, heavy: bool = False):
    """Skewed outcomes, x ~ N(shift, 1). "wages": y = exp(1 + 0.4·x + 0.3·ε) (log-normal, log-sd 0.5),
    the model predicts E[y | x] = exp(1.045 + 0.4·x). "heavy": y = exp(1 + 0.8·x + 0.5·ε) (log-sd 0.94)
    and a misspecified linear model ŷ = 2.2 + 2.6·x (heavy-tailed errors). Weights log-normal (sd 1) or 1.
    """
    x = g.normal(shift, 1.0, (reps, n))
    if heavy:
        y = np.exp(1.0 + 0.8 * x + 0.5 * g.normal(size=(reps, n)))
        p = 2.2 + 2.6 * x
    else:
        y = np.exp(1.0 + 0.4 * x + 0.3 * g.normal(size=(reps, n)))
        p = np.exp(1.045 + 0.4 * x)
    w = np.exp(g.normal(size=(reps, n))) if weights else np.ones((reps, n))
    return y, p, w


def _reg_truth(shift: float, heavy: bool = False) -> dict[str, float]:
    """The population values of a group (one large sample; weights independent of the data, so the
    weighted population values equal the unweighted ones).
    """
    g = np.random.default_rng(12345)
    y, p, _ = _reg_draw(g, 1, 4_000_000, shift, heavy=heavy)
    y, p = y[0], p[0]
    e = p - y
    mse = float(np.mean(e**2))
    return {"mean_outcome": float(y.mean()), "mean_error": float(e.mean()), "mean_absolute_error": float(np.abs(e).mean()),
            "mean_squared_error": mse, "root_mean_squared_error": mse**0.5, "r2_score": 1 - mse / float(y.var())}  # fmt: skip


def regression_two_group(g: np.random.Generator, reps: int, n1: int, n2: int, s1: float, s2: float,
                         weights: bool = False, heavy: bool = False) -> dict[str, tuple[float, float]]:  # fmt: skip
    from polfair.core import regression as rg
    from polfair.core.regression import report as rr

    t1, t2 = _reg_truth(s1, heavy), _reg_truth(s2, heavy)
    m1 = _reg_moments(*_reg_draw(g, reps, n1, s1, weights, heavy))
    m2 = _reg_moments(*_reg_draw(g, reps, n2, s2, weights, heavy))
    tag = " (Kish n_eff)" if weights else ""
    out: dict[str, tuple[float, float]] = {}
    ctx = rr._Context.__new__(rr._Context)  # the report's interval code, without a report around it
    ctx.ci, ctx.weighted = CI, weights
    i1 = ctx._value_intervals(m1, rg.metric_values(m1))
    i2 = ctx._value_intervals(m2, rg.metric_values(m2))
    for name in ("mean_outcome", "mean_error", "mean_absolute_error", "mean_squared_error", "root_mean_squared_error",
                 "r2_score"):  # fmt: skip
        out[f"{name}: value{tag}"] = _covers(pl.Series(i1[name]["lo"]), pl.Series(i1[name]["hi"]), t1[name])
    for name in ("mean_error", "mean_absolute_error", "mean_squared_error"):
        d, v, nu, p = rg.welch_test(i1[name]["est"], i1[name]["var"], i1[name]["df"], i2[name]["est"], i2[name]["var"],
                                    i2[name]["df"])  # fmt: skip
        from scipy import stats

        h = stats.t.ppf(0.5 + CI / 2, nu) * np.sqrt(v)
        truth = t1[name] - t2[name]
        if truth == 0.0:
            out[f"{name}: Welch test{tag} (type-I)"] = (float(np.mean(p[np.isfinite(p)] < 0.05)), float(np.mean(~np.isfinite(p))))
        else:
            out[f"{name}: difference, Welch{tag}"] = _covers(pl.Series(d - h), pl.Series(d + h), truth)
    d, v, _, _ = rg.welch_test(i1["r2_score"]["est"], i1["r2_score"]["var"], i1["r2_score"]["df"],
                               i2["r2_score"]["est"], i2["r2_score"]["var"], i2["r2_score"]["df"])  # fmt: skip
    h = Z * np.sqrt(v)
    if t1["r2_score"] != t2["r2_score"]:
        out[f"r2_score: difference, delta{tag}"] = _covers(pl.Series(d - h), pl.Series(d + h),
                                                           t1["r2_score"] - t2["r2_score"])  # fmt: skip
    return out


def regression_scenarios(reps: int) -> list[tuple[str, Callable[[np.random.Generator], dict[str, tuple[float, float]]]]]:
    """Regression scenarios: log-normal outcomes, groups of 10..1000 rows, weighted, H0."""
    two = regression_two_group
    return [
        ("wages (log-normal): 1000 vs 1000, shifted", lambda g: two(g, reps, 1000, 1000, 0.0, 0.5)),
        ("wages: 200 vs 1000, shifted", lambda g: two(g, reps, 200, 1000, 0.0, 0.5)),
        ("wages: 30 vs 200, shifted", lambda g: two(g, reps, 30, 200, 0.0, 0.5)),
        ("wages: 10 vs 200, shifted", lambda g: two(g, reps, 10, 200, 0.0, 0.5)),
        ("wages: H0 20 vs 200", lambda g: two(g, reps, 20, 200, 0.0, 0.0)),
        ("wages: H0 200 vs 200", lambda g: two(g, reps, 200, 200, 0.0, 0.0)),
        ("wages, weighted (log-normal sd 1): 300 vs 300, shifted", lambda g: two(g, reps, 300, 300, 0.0, 0.5, True)),
        ("wages, weighted: H0 60 vs 200", lambda g: two(g, reps, 60, 200, 0.0, 0.0, True)),
        ("heavy tails (misspecified model): 200 vs 1000, shifted", lambda g: two(g, reps, 200, 1000, 0.0, 0.5,
                                                                                 heavy=True)),
        ("heavy tails: 30 vs 200, shifted", lambda g: two(g, reps, 30, 200, 0.0, 0.5, heavy=True)),
        ("heavy tails: H0 20 vs 200", lambda g: two(g, reps, 20, 200, 0.0, 0.0, heavy=True)),
    ]  # fmt: skip


# ----------------------------------------------------------------------------------------------
# groups estimated from proxies (issue 34): fairness_report(protected_proba=...) on BISG-like data


#: The rates and comparisons (against white) whose intervals are checked: (metric, the report's
#: value and interval columns, the target's key, how the table names it).
_BISG_CHECKS = (
    ("selection_rate", "value", "value_lo", "value_hi", "selection_rate"),
    ("base_rate", "value", "value_lo", "value_hi", "base_rate"),
    ("true_positive_rate", "value", "value_lo", "value_hi", "true_positive_rate"),
    ("false_positive_rate", "value", "value_lo", "value_hi", "false_positive_rate"),
    ("base_rate", "difference", "difference_lo", "difference_hi", "base_rate difference"),
    ("statistical_parity_difference", "value", "value_lo", "value_hi", "statistical_parity_difference"),
    ("equal_opportunity_difference", "value", "value_lo", "value_hi", "equal_opportunity_difference"),
    ("disparate_impact", "value", "value_lo", "value_hi", "disparate_impact"),
)  # fmt: skip


def _target(values: dict, group: str, metric: str, column: str) -> float:
    """A group's target value (``column="difference"``: minus white's)."""
    v = values.get((group, metric), np.nan)
    return v - values.get(("white", metric), np.nan) if column == "difference" else v


def _bisg_report(df: pl.DataFrame, assignment: str, **kw: object) -> pl.DataFrame:
    import polfair as pf
    from polfair.datasets import BISG_GROUPS

    proba = {"race": {g: f"p_{g}" for g in BISG_GROUPS}}
    return pf.fairness_report(df, y_true="repaid", y_pred="approved", protected_proba=proba,
                              proba_assignment=assignment, privileged={"race": "white"}, **kw)  # fmt: skip


def _bisg_targets(direct: float, seed: int, rows: int = 4_000_000) -> tuple[dict, dict]:
    """(the weighted estimator's limit, the true group values) per (group, metric), from ``rows`` draws."""
    import polfair as pf

    big = pf.make_bisg_lending(rows, seed=seed, direct_effect=direct).drop("surname", "tract")
    est = _bisg_report(big, "weighted", ci=None)
    true = pf.fairness_report(big, y_true="repaid", y_pred="approved", protected="race", privileged={"race": "white"},
                              ci=None)  # fmt: skip
    pick = lambda r: {(g, m): v for g, m, v in r.filter(attribute="race").select("group", "metric", "value").iter_rows()  # noqa: E731
                      if g is not None}  # fmt: skip
    return pick(est), pick(true)


def _bisg_alternatives(
    df: pl.DataFrame, n: int, reps: int, est: dict, metric: str = "base_rate"
) -> dict[str, dict[str, float]]:
    """Coverage of a group rate's Wilson interval under three effective sizes (numpy, per replicate).

    Kish with Σp² (the weighted estimator's own sampling variance, birdie's analytical SE), the
    report's Kish with Σp (``Σ w²·p`` unweighted), and the linearization of the ratio estimator.
    """
    from polfair.datasets import BISG_GROUPS

    rep = np.arange(df.height) // n
    y = (df["repaid"] if metric == "base_rate" else df["approved"]).to_numpy().astype(float)
    out: dict[str, dict[str, float]] = {}
    for g in BISG_GROUPS:
        p = df[f"p_{g}"].to_numpy()
        s1, s2, sp = (np.bincount(rep, x, reps) for x in (p, p * p, p))
        x1, x2 = np.bincount(rep, p * y, reps), np.bincount(rep, p * p * y, reps)
        mu = x1 / s1
        lin = (x2 * (1 - 2 * mu) + mu * mu * s2) / (s1 * s1)  # Σp²(y − μ)² / (Σp)²
        target = est[(g, metric)]
        res = {}
        for name, ne in (("Kish Σp²", s1 * s1 / s2), ("report: Kish Σp", s1 * s1 / sp),
                         ("linearization", mu * (1 - mu) / np.maximum(lin, 1e-300))):  # fmt: skip
            c = ne
            centre = (mu + Z * Z / (2 * c)) / (1 + Z * Z / c)
            half = Z / (1 + Z * Z / c) * np.sqrt(mu * (1 - mu) / c + Z * Z / (4 * c * c))
            res[name] = float(np.mean((centre - half <= target) & (target <= centre + half)))
        out[g] = res
    return out


def bisg_rows(reps: int, seed: int) -> tuple[list[tuple[str, str, float, float, int]], str]:
    """Coverage of the report's intervals on BISG data; rows for :func:`table` and the decision table."""
    import polfair as pf

    rows: list[tuple[str, str, float, float, int]] = []
    alt_lines = ["| scenario | group | Kish Σp² (estimator's own variance) | report: Kish Σp | linearization |",
                 "|---|---|---:|---:|---:|"]  # fmt: skip
    for si, (direct, n) in enumerate(((0.0, 2000), (1.0, 500), (1.0, 2000), (1.0, 20_000))):
        t0 = time.perf_counter()
        est, true = _bisg_targets(direct, seed + 1000 + si)
        r = max(reps * 2000 // n, 50) if n > 2000 else reps  # about as many rows as the 2000-row scenarios
        df = pf.make_bisg_lending(n * r, seed=seed + si, direct_effect=direct).drop("surname", "tract")
        df = df.with_columns((pl.int_range(pl.len()) // n).alias("rep"))
        label = f"BISG, {'no direct effect' if direct == 0 else f'direct race effect {direct}'}, {n} rows"
        for assignment in ("weighted", "argmax"):
            rep = _bisg_report(df, assignment, by="rep").filter(pl.col("attribute") == "race", pl.col("group").is_not_null())
            for metric, column, lo_col, hi_col, name in _BISG_CHECKS:
                sub = rep.filter(metric=metric)
                if column != "value" or metric not in ("selection_rate", "base_rate", "true_positive_rate",
                                                       "false_positive_rate"):  # comparisons: the others vs white
                    sub = sub.filter(pl.col("group") != "white")
                groups = sub["group"].to_list()
                for target_name, target in (("weighted estimator's limit", est), ("true group value", true)):
                    if assignment == "argmax" and target is est:
                        continue
                    t = np.array([_target(target, g, metric, column) for g in groups])
                    cov, undefined = _covers(sub[lo_col], sub[hi_col], t)
                    rows.append((f"{label} ({assignment})", f"{name} vs {target_name}", cov, undefined, r))
        alt = _bisg_alternatives(df, n, r, est)
        for g, res in alt.items():
            alt_lines.append(f"| {label} | {g} | " + " | ".join(f"{100 * res[k]:.1f}" for k in (
                "Kish Σp²", "report: Kish Σp", "linearization")) + " |")  # fmt: skip
        print(f"  {label}: {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        del df
    return rows, "\n".join(alt_lines)


def _main_bisg(args: argparse.Namespace) -> None:
    """``--bisg``: the estimated-groups scenarios (issue 34), in their own results section."""
    t0 = time.perf_counter()
    rows, alternatives = bisg_rows(args.reps, args.seed)
    text = table(rows)
    print(text)
    print(alternatives)
    if args.out is None:
        return
    section = (
        f"\n\n## Groups estimated from proxies: coverage (issue 34)\n\n"
        f"`python bench/coverage.py --bisg --reps {args.reps} --seed {args.seed}`, one run "
        f"({time.perf_counter() - t0:.0f} s, 2 cores), polars {pl.__version__}. Data: `pf.make_bisg_lending` "
        "(BISG probabilities from synthetic census tables, calibrated; `repaid` depends on race beyond the proxies "
        "with the direct effect, `approved` only on income). Each replicate is one `by` value of ONE "
        "`fairness_report(protected_proba=..., by='rep')`; rates and comparisons of the race groups against "
        "white (its own comparisons excluded). Targets: the weighted estimator's limit (the same report on 4 "
        "million draws) and the true group value (the report of the true race on them).\n\n" + text
        + "\n\nWilson intervals of `base_rate` under three effective sizes (same replicates; numpy; coverage of "
        "the weighted estimator's limit, %):\n\n" + alternatives + "\n"
    )
    _append(args.out, section)


def _scenario_rows(scenarios: Any, reps: int, seed: int, *, stream: int) -> list[tuple[str, str, float, float, int]]:
    """Rows of a section's scenarios, each on its own random stream ``[seed, stream + i]`` (timed to stderr)."""
    rows = []
    for i, (name, fn) in enumerate(scenarios):
        t1 = time.perf_counter()
        res = fn(np.random.default_rng([seed, stream + i]))
        rows += [(name, fam, value, undefined, reps) for fam, (value, undefined) in res.items()]
        print(f"  {name}: {time.perf_counter() - t1:.1f} s", file=sys.stderr)
    return rows


def _append(out: Path, section: str) -> None:
    """Append a results section to ``out`` (created when missing)."""
    with out.open("a") as f:
        f.write(section)


def run(reps: int, boot: int, seed: int, only: set[str] | None = None) -> list[tuple[str, str, float, float, int]]:
    """All scenarios; rows (scenario, family, coverage or rejection rate, share undefined, replicates)."""
    rows = []
    for i, (name, fn) in enumerate(scenarios(reps, boot)):
        if only is not None and name not in only:
            continue
        rng = np.random.default_rng([seed, i])  # each scenario has its own stream
        t0 = time.perf_counter()
        res = fn(rng)
        n = max(reps // 10, 50) if name.startswith(("30 groups: between", "clustered")) else reps
        n = max(reps // 4, 200) if name.startswith("homogeneity, H0: 20,000") else n
        for fam, (value, undefined) in res.items():
            rows.append((name, fam, value, undefined, n))
        print(f"  {name}: {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return rows


def table(rows: list[tuple[str, str, float, float, int]]) -> str:
    lines = [
        "| scenario | interval / test | coverage or type-I % | MC s.e. | undefined % | replicates |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for name, fam, value, undefined, n in rows:
        se = math.sqrt(max(value * (1 - value), 1e-12) / n)
        lines.append(f"| {name} | {fam} | {100 * value:.1f} | {100 * se:.1f} | {100 * undefined:.1f} | {n} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--boot", type=int, default=200)
    ap.add_argument("--seed", type=int, default=20261123)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--regression", action="store_true", help="only the regression scenarios (issue 23)")
    ap.add_argument("--bisg", action="store_true", help="only the groups estimated from proxies (issue 34)")
    ap.add_argument("--small", action="store_true", help="only the small-group and boundary scenarios (issue 39)")
    ap.add_argument("--ranking", action="store_true", help="only the ranking report, clustered by query (issue 43)")
    args = ap.parse_args(argv)
    if args.small:
        return _main_small(args)
    if args.ranking:
        return _main_ranking(args)
    if args.regression:
        return _main_regression(args)
    if args.bisg:
        return _main_bisg(args)
    t0 = time.perf_counter()
    rows = run(args.reps, args.boot, args.seed)
    text = table(rows)
    print(text)
    if args.out is not None:
        head = (
            f"\n\n## Confidence intervals: coverage and type-I error (issue 11)\n\n"
            f"`python bench/coverage.py --reps {args.reps} --boot {args.boot} --seed {args.seed}`, one run "
            f"({time.perf_counter() - t0:.0f} s, 2 cores), polars {pl.__version__}, numpy {np.__version__}. "
            "Nominal level 95% (tests: 5%). Coverage = share of simulated audits whose interval contains the "
            "true value; tests: share of audits under H0 with p < 0.05. Projections (EOD, spreads, EDF) are "
            "conservative by design. Functions of `polfair.core.intervals`, as the report calls them.\n\n"
        )
        _append(args.out, head + text + "\n")


def _main_regression(args: argparse.Namespace) -> None:
    """``--regression``: the regression scenarios only, in their own results section."""
    t0 = time.perf_counter()
    text = table(_scenario_rows(regression_scenarios(args.reps), args.reps, args.seed, stream=1000))
    print(text)
    if args.out is None:
        return
    section = (
        f"\n\n## Regression intervals: coverage and type-I error (issue 23)\n\n"
        f"`python bench/coverage.py --regression --reps {args.reps} --seed {args.seed}`, one run "
        f"({time.perf_counter() - t0:.0f} s, 2 cores), numpy {np.__version__}. Two groups of skewed outcomes "
        "(\"wages\": y log-normal given x, log-sd 0.5, the model E[y|x]; \"heavy tails\": log-sd 0.94 "
        "and a misspecified linear model, so the squared errors are very heavy-tailed); true values from 4 million "
        "draws. Intervals of `polfair.core.regression` as the regression report computes them "
        "(t with ν = n_eff − 1; MAE and MSE on the log scale; RMSE the square roots of the MSE limits; Welch; "
        "delta-method r²).\n\n" + text + "\n"
    )
    _append(args.out, section)


# ----------------------------------------------------------------------------------------------
# small groups and the boundary (issue 39): groups of 5-50 rows, perfect separation, rare classes


def _binormal_truth(pi: float, delta: float, rows: int = 2_000_000) -> dict[str, float]:
    """Population AUC (closed form), average precision and Brier score (one large seeded draw) of
    scores ``x | y ~ N(δ·y, 1)``, probabilities ``s = expit(x·δ − δ²/2 + logit π)`` (calibrated).
    """
    from scipy import stats

    g = np.random.default_rng(7)
    y = g.random(rows) < pi
    x = g.normal(delta * y, 1.0)
    s = 1 / (1 + np.exp(-(x * delta - delta * delta / 2 + math.log(pi / (1 - pi)))))
    order = np.argsort(-x)
    tp = np.cumsum(y[order])
    prec = tp / np.arange(1, rows + 1)
    ap = float((prec * y[order]).sum() / y.sum())
    return {"roc_auc": float(stats.norm.cdf(delta / math.sqrt(2))), "average_precision": ap,
            "brier_score": float(np.mean((s - y) ** 2))}  # fmt: skip


def small_scores(
    rng: np.random.Generator, reps: int, n_pos: int, n_neg: int, delta: float, ref: int = 200, ref_delta: float | None = None
) -> dict[str, tuple[float, float]]:
    """A small group (``n_pos`` positives, ``n_neg`` negatives) beside a reference of ``ref`` rows, ``reps``
    audits in ONE ``score_report`` call (``by`` = the audit): coverage of the group's AUC, AP and Brier
    intervals, of the AUC difference, and the AUC test's rejection rate when the two groups are alike.
    """
    from polfair.scores import score_report

    pi = n_pos / (n_pos + n_neg)
    ref_delta = delta if ref_delta is None else ref_delta
    k = n_pos + n_neg
    y_small = np.tile(np.r_[np.ones(n_pos), np.zeros(n_neg)], reps)
    y_ref = (rng.random(reps * ref) < pi).astype(float)
    x_small = rng.normal(delta * y_small, 1.0)
    x_ref = rng.normal(ref_delta * y_ref, 1.0)

    def prob(x: np.ndarray, d: float) -> np.ndarray:
        return 1 / (1 + np.exp(-(x * d - d * d / 2 + math.log(pi / (1 - pi)))))

    df = pl.DataFrame({
        "audit": np.r_[np.repeat(np.arange(reps), k), np.repeat(np.arange(reps), ref)],
        "g": ["small"] * (reps * k) + ["ref"] * (reps * ref),
        "y": np.r_[y_small, y_ref].astype(np.int64),
        "s": np.r_[prob(x_small, delta), prob(x_ref, ref_delta)],
    })  # fmt: skip
    rep = score_report(df, y_true="y", y_score="s", protected="g", by="audit", privileged={"g": "ref"}, n_boot=2,
                       p_adjust=None).filter(group="small")  # fmt: skip
    truth = _binormal_truth(pi, delta)
    res: dict[str, tuple[float, float]] = {}
    for metric, label in (("roc_auc", "AUC: DeLong / Newcombe score"), ("average_precision", "AP: logit / Wilson at 1"),
                          ("brier_score", "Brier: t, widened to Wilson below 100 rows")):  # fmt: skip
        part = rep.filter(metric=metric)
        res[label] = _covers(part["value_lo"], part["value_hi"], truth[metric])
    auc = rep.filter(metric="roc_auc")
    res["(share of audits perfectly separated)"] = (float((auc["value"] == 1.0).mean()), 0.0)
    if ref_delta == delta:
        res["AUC difference: MOVER"] = _covers(auc["difference_lo"], auc["difference_hi"], 0.0)
        p = auc["p_value"].to_numpy().astype(float)
        res["AUC test, H0 (type-I)"] = (float(np.mean(p[np.isfinite(p)] < 0.05)), float(np.mean(~np.isfinite(p))))
    return res


def corrected_variance(rng: np.random.Generator, reps: int, rates: np.ndarray, sizes: np.ndarray) -> dict[str, tuple[float, float]]:
    """Lum, Zhang & Bower's corrected between-group variance (:mod:`polfair.core.intervals.variance`):
    coverage of its interval and the mean estimates (corrected and plain) against the truth.
    """
    from polfair.core.intervals.common import Segments
    from polfair.core.intervals.variance import between_group_variance

    k = len(rates)
    x = rng.binomial(sizes, rates, size=(reps, k)) / sizes
    out = between_group_variance(x.ravel(), np.tile(sizes.astype(float), reps),
                                 Segments(np.repeat(np.arange(reps), k), reps), Z)  # fmt: skip
    true = float(np.var(rates, ddof=1))
    cover = float(np.mean((out["lo"] <= true + 1e-15) & (true - 1e-15 <= out["hi"])))
    return {
        "corrected variance: scaled chi2 inversion (2 groups: Newcombe, squared)": (cover, 0.0),
        f"(true variance {true:.5f}; mean corrected {out['value'].mean():.5f}; mean plain {out['naive'].mean():.5f})": (
            float("nan"), 0.0),
    }  # fmt: skip


def small_scenarios(reps: int) -> list[tuple[str, Callable[[np.random.Generator], dict[str, tuple[float, float]]]]]:
    d75, d95 = math.sqrt(2) * 0.6744897501960817, math.sqrt(2) * 1.6448536269514722  # AUC 0.75, 0.95
    d99 = math.sqrt(2) * 2.3263478740408408  # AUC 0.99
    sizes = np.linspace(5, 50, 30).round().astype(np.int64)
    return [
        ("rates: n 5..15 vs 200, p 0.30/0.45", lambda g: two_group(g, reps, g.integers(5, 16, reps), 200, 0.3, 0.45)),
        ("rates: n 5..15 vs 200, H0 p = 0.30", lambda g: two_group(g, reps, g.integers(5, 16, reps), 200, 0.3, 0.3)),
        ("rates, rare: n 20..50 vs 500, p 0.02/0.05", lambda g: two_group(g, reps, g.integers(20, 51, reps), 500, 0.02, 0.05)),
        ("rates, rare: n 20..50 vs 500, H0 p = 0.03", lambda g: two_group(g, reps, g.integers(20, 51, reps), 500, 0.03, 0.03)),
        ("scores: 6 + 2 rows (the issue's group), AUC 0.99", lambda g: small_scores(g, reps, 6, 2, d99)),
        ("scores: 10 + 10 rows, AUC 0.95", lambda g: small_scores(g, reps, 10, 10, d95)),
        ("scores: 15 + 35 rows, AUC 0.75", lambda g: small_scores(g, reps, 15, 35, d75)),
        ("scores: 5 + 5 rows, AUC 0.75", lambda g: small_scores(g, reps, 5, 5, d75)),
        ("scores, rare positives: 3 + 37 rows, AUC 0.95", lambda g: small_scores(g, reps, 3, 37, d95)),
        ("scores: 25 + 25 rows, AUC 0.95", lambda g: small_scores(g, reps, 25, 25, d95)),
        ("variance: 30 groups n 5..50, equal p = 0.3", lambda g: corrected_variance(g, reps, np.full(30, 0.3), sizes)),
        ("variance: 30 groups n 5..50, p 0.2..0.5", lambda g: corrected_variance(g, reps, np.linspace(0.2, 0.5, 30), sizes)),
        ("variance: 5 groups x 10, equal p = 0.5", lambda g: corrected_variance(g, reps, np.full(5, 0.5), np.full(5, 10))),
        ("variance: 10 groups x 30, rare p 0.02..0.10", lambda g: corrected_variance(g, reps, np.linspace(0.02, 0.1, 10),
                                                                                 np.full(10, 30))),  # fmt: skip
        ("variance: 6 groups x 200, p 0.30..0.40", lambda g: corrected_variance(g, reps, np.linspace(0.3, 0.4, 6),
                                                                             np.full(6, 200))),  # fmt: skip
        ("variance: 2 groups x 50, p 0.3/0.5", lambda g: corrected_variance(g, reps, np.array([0.3, 0.5]), np.full(2, 50))),
    ]


def _main_small(args: argparse.Namespace) -> None:
    """``--small``: the small-group and boundary scenarios only (issue 39), in their own results section."""
    t0 = time.perf_counter()
    text = table(_scenario_rows(small_scenarios(args.reps), args.reps, args.seed, stream=2000))
    print(text)
    if args.out is None:
        return
    section = (
        f"\n\n## Small groups and the boundary: coverage (issue 39)\n\n"
        f"`python bench/coverage.py --small --reps {args.reps} --seed {args.seed}`, one run "
        f"({time.perf_counter() - t0:.0f} s, 2 shared cores), polars {pl.__version__}, numpy {np.__version__}. "
        "Rates: the report's Wilson / Newcombe / MOVER-R / N-1 chi2-Fisher on groups of 5-50 rows and rare "
        "outcomes. Scores: one `score_report` call per scenario (`by` = the simulated audit), a small group "
        "beside a 200-row reference with the same score law (binormal, x | y ~ N(d*y, 1); probabilities "
        "calibrated); true AP and Brier from 2 million draws; AP's and Brier's estimands are the population "
        "values, which small-sample estimates are biased toward (AP up). Variance: the corrected between-group "
        "variance's interval (`polfair.core.intervals.variance`) against the variance of the true rates.\n\n"
        + text + "\n"
    )
    _append(args.out, section)


# ---------------------------------------------------------------------------------------------
# rankings (issue 43): intervals with queries as the sampling unit


def _ranking_draw(rng: np.random.Generator, reps: int, queries: int, items: int = 20) -> pl.DataFrame:
    """``reps`` audits of ``queries`` rankings each. Clustered by query: each query has its own share of
    group b (Beta(2, 4)) and its own ranking penalty for b (N(-0.4, 0.6) on the score scale), so the
    items of one query are far from independent draws. Scores are rounded: ties.
    """
    nq = reps * queries
    share = rng.beta(2.0, 4.0, nq)
    shift = rng.normal(-0.4, 0.6, nq)
    q = np.repeat(np.arange(nq), items)
    b = rng.random(nq * items) < share[q]
    score = np.round(rng.normal(0.0, 1.0, nq * items) + np.where(b, shift[q], 0.0), 1)
    df = pl.DataFrame({"rep": q // queries, "q": q, "g": np.where(b, "b", "a"), "s": score})
    return df.with_columns(pl.col("s").rank("min", descending=True).over("q").cast(pl.Int64).alias("r"))


_RANKING_TARGETS = (("exposure", "b", "value"), ("exposure_share", "b", "value"), ("top_k_share", "b", "value"),
                    ("exposure", "b", "ratio"), ("exposure", "b", "difference"), ("awrf", None, "value"),
                    ("ndkl", None, "value"))  # fmt: skip


def _ranking_values(rep: pl.DataFrame) -> dict[tuple[str, str | None, str], pl.DataFrame]:
    out = {}
    for metric, group, stat in _RANKING_TARGETS:
        f = rep.filter(pl.col("metric") == metric, pl.col("attribute") == "g")
        f = f.filter(pl.col("group") == group) if group else f.filter(pl.col("group").is_null())
        out[(metric, group, stat)] = f
    return out


def ranking_rows(reps: int, seed: int, queries: int = 200, n_buckets: int = 20) -> list[tuple[str, str, float, float, int]]:
    """Coverage of the ranking report's jackknife-by-query intervals (95%), clustered by query."""
    import polfair as pf

    kw = dict(query="q", rank="r", protected="g", k=10, privileged={"g": "a"}, n_buckets=n_buckets)
    truth_df = _ranking_draw(np.random.default_rng([seed, 43, 0]), 1, 400_000)
    truth = _ranking_values(pf.ranking_report(truth_df, ci=None, **kw))
    rows = []
    rep = pf.ranking_report(_ranking_draw(np.random.default_rng([seed, 43, 1]), reps, queries), by="rep", **kw)
    got = _ranking_values(rep)
    for key, f in got.items():
        metric, group, stat = key
        true = truth[key][stat].item()
        lo, hi = f[f"{stat}_lo"], f[f"{stat}_hi"]
        ok = lo.is_not_null() & hi.is_not_null()
        cover = float(((lo <= true) & (true <= hi) & ok).sum()) / reps
        name = f"{metric}{'[' + group + ']' if group else ''} {stat}"
        scenario = f"rankings, {queries} queries x 20 items, clustered, {n_buckets} buckets"
        rows.append((scenario, name, cover, float((~ok).sum()) / reps, reps))
    return rows


def _main_ranking(args: argparse.Namespace) -> None:
    """``--ranking``: the ranking report's intervals, clustered by query, in their own results section."""
    t0 = time.perf_counter()
    rows = [r for b in (20, 40) for r in ranking_rows(args.reps, args.seed, n_buckets=b)]
    text = table(rows)
    print(text)
    if args.out is not None:
        head = (
            f"\n\n## Rankings: coverage with queries as the sampling unit (issue 43)\n\n"
            f"`python bench/coverage.py --ranking --reps {args.reps} --seed {args.seed}`, one run "
            f"({time.perf_counter() - t0:.0f} s, 2 cores, shared). Each audit: 200 queries of 20 items, each query with its "
            "own share of group b (Beta(2, 4)) and its own ranking penalty for b; ties. Truth: the same "
            "estimands on 400,000 queries. Delete-a-group jackknife-t over 20 (the default) and 40 buckets of queries, 95%.\n\n"
        )
        _append(args.out, head + text + "\n")


if __name__ == "__main__":
    main()
