"""ranking_report against FairRankTune 0.0.7 (EXP, EXPU, AWRF, NDKL) and ir-measures (nDCG@k) on rankings
built from UCI Adult (issue 43). Ties are fed to FairRankTune as balanced tie-breaks: the cyclic
rotations of every tie, so each tied item takes each of its tie's positions equally often."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import polfair as pf

sys.path.insert(0, str(Path(__file__).parent))
import naive  # noqa: E402

frt_exp = pytest.importorskip("FairRankTune.Metrics.EXP")
frt_awrf = pytest.importorskip("FairRankTune.Metrics.AWRF")
frt_ndkl = pytest.importorskip("FairRankTune.Metrics.NDKL")
pd = pytest.importorskip("pandas")


def _adult(ties: bool) -> pl.DataFrame:
    """1,200 Adult rows; query = occupation; rank by education, hours and age (competition ranks; without
    ties, the row order breaks them)."""
    df = pf.load_adult().filter(pl.col("occupation").is_not_null()).head(1200).with_columns(
        pl.int_range(pl.len()).alias("item"), pl.col("occupation").cast(pl.String).alias("q"),
        pl.col("income_gt_50k").cast(pl.Float64).alias("rel"))  # fmt: skip
    score = pl.struct(pl.col("education_num"), pl.col("hours_per_week"), pl.col("age"))
    if not ties:
        score = pl.struct(score, -pl.col("item"))
    df = df.with_columns(score.rank("min", descending=True).over("q").cast(pl.Int64).alias("r"))
    return df.with_columns(pl.col("sex").cast(pl.String), pl.col("race").cast(pl.String))


def _rotations(items: pl.DataFrame) -> list[list[int]]:
    """Balanced tie-breaks of one query: M = lcm of its tie sizes orders, tie members rotated by s."""
    blocks = items.sort("r", "item").group_by("r", maintain_order=True).agg(pl.col("item"))
    sizes = [len(x) for x in blocks["item"]]
    m = math.lcm(*sizes)
    assert m <= 60
    return [[b[(j + s) % len(b)] for b in blocks["item"].to_list() for j in range(len(b))] for s in range(m)]


def _frt_groups(df: pl.DataFrame, attr: str, k: int | None) -> dict[str, float]:
    """Pooled over queries from FairRankTune's per-query group values: Σ_q vals·n_qg/M_q ÷ Σ_q n_qg."""
    num: dict[str, float] = {}
    den: dict[str, float] = {}
    for (_,), part in df.group_by("q"):
        orders = _rotations(part)
        cols = {f"c{s}": (o[:k] if k is not None else o) for s, o in enumerate(orders)}
        width = max(len(c) for c in cols.values())
        frame = pd.DataFrame({c: list(v) + [np.nan] * (width - len(v)) for c, v in cols.items()})
        groups = dict(zip(part["item"].to_list(), part[attr].to_list()))
        _, vals = frt_exp.EXP(frame, groups, "MinMaxRatio")
        counts = part.group_by(attr).len()
        for g, n in counts.iter_rows():
            x = vals.get(g, 0.0)
            num[g] = num.get(g, 0.0) + x * n / len(orders)
            den[g] = den.get(g, 0.0) + n
    return {g: num[g] / den[g] for g in num}


@pytest.mark.parametrize("k", [None, 5])
def test_exposure_equals_fairranktune_exp_with_ties(k: int | None) -> None:
    df = _adult(ties=True)
    assert df.group_by("q", "r").len()["len"].max() > 1  # the case has ties
    rep = pf.ranking_report(df, query="q", rank="r", protected="race", k=k, ci=None)
    got = {r["group"]: r["value"] for r in rep.filter(metric="exposure", attribute="race").iter_rows(named=True) if r["group"]}
    want = _frt_groups(df, "race", k)
    assert set(got) == set(want)
    for g in want:
        assert got[g] == pytest.approx(want[g], abs=1e-12, rel=1e-12)


def test_exposure_per_relevance_equals_expu_one_query() -> None:
    """EXPU divides by the mean relevance of the items passed: equal on one whole ranking (FairRankTune
    requires relevance in [0, 1]; income > 50K here)."""
    df = _adult(ties=False).filter(pl.col("q") == "Sales")
    rep = pf.ranking_report(df, query="q", rank="r", protected="sex", relevance="rel", ci=None)
    order = df.sort("r")["item"].to_list()
    groups = dict(zip(df["item"].to_list(), df["sex"].to_list()))
    rel = pd.DataFrame({"c": df.sort("r")["rel"].to_list()})  # the relevance of each position
    combo, vals = frt_exp.EXPU(pd.DataFrame({"c": order}), groups, rel, "MinMaxRatio")
    got = {r["group"]: r["value"] for r in rep.filter(metric="exposure_per_relevance").iter_rows(named=True) if r["group"]}
    for g, x in vals.items():
        assert got[g] == pytest.approx(x, abs=1e-12, rel=1e-12)
    spread = rep.filter(pl.col("group").is_null(), metric="exposure_per_relevance", attribute="sex")["ratio"].item()
    assert spread == pytest.approx(combo, abs=1e-12)


@pytest.mark.parametrize("ties", [False, True])
def test_awrf_equals_fairranktune_per_query_mean(ties: bool) -> None:
    df = _adult(ties=ties)
    p = 0.2
    rep = pf.ranking_report(df, query="q", rank="r", protected="sex", position_weight="geometric", p=p, ci=None)
    vals = []
    for (_,), part in df.group_by("q"):
        if part["sex"].n_unique() < 2:
            continue
        frame = pd.DataFrame({f"c{s}": o for s, o in enumerate(_rotations(part))})
        combo, _ = frt_awrf.AWRF(frame, dict(zip(part["item"].to_list(), part["sex"].to_list())), p, "MinMaxRatio")
        vals.append(combo)
    got = rep.filter(metric="awrf", attribute="sex")["value"].item()
    assert got == pytest.approx(float(np.mean(vals)), abs=1e-12)


def test_ndkl_equals_paper_formula_and_fairranktune() -> None:
    """FairRankTune adds 1e-7 to both distributions (equal to ~1e-6); the paper's formula (naive.py) to 1e-12."""
    df = _adult(ties=False)
    rep = pf.ranking_report(df, query="q", rank="r", protected="race", ci=None)
    got = rep.filter(metric="ndkl", attribute="race")["value"].item()
    frt, paper = [], []
    for (_,), part in df.sort("r").group_by("q", maintain_order=True):
        if part["race"].n_unique() < 2:
            continue
        part = part.sort("r")
        frt.append(frt_ndkl.NDKL(pd.DataFrame({"c": part["item"].to_list()}), dict(zip(part["item"].to_list(), part["race"].to_list()))))
        rows = [{"q": 0, "r": r, "g": g} for r, g in zip(part["r"].to_list(), part["race"].to_list())]
        paper.append(naive.report(rows, None)["ndkl"])
    assert got == pytest.approx(float(np.mean(paper)), abs=1e-12)
    assert got == pytest.approx(float(np.mean(frt)), abs=1e-5)


@pytest.mark.parametrize("k", [5, 20])
def test_ndcg_equals_ir_measures(k: int) -> None:
    ir = pytest.importorskip("ir_measures")
    df = _adult(ties=False).with_columns(pl.col("q").str.slice(0, 1).alias("letter"))
    rep = pf.ranking_report(df, query="q", rank="r", protected="sex", query_protected="letter", relevance="rel", k=k, ci=None)
    qrels = [ir.Qrel(q, str(i), int(r)) for q, i, r in df.select("q", "item", "rel").iter_rows()]
    run = [ir.ScoredDoc(q, str(i), float(-r)) for q, i, r in df.select("q", "item", "r").iter_rows()]
    per_q = {m.query_id: m.value for m in ir.iter_calc([ir.nDCG @ k], qrels, run)}
    letters = dict(df.select("q", "letter").unique().iter_rows())
    for letter in set(letters.values()):
        qs = [q for q, l_ in letters.items() if l_ == letter]
        want = float(np.mean([per_q.get(q, 0.0) for q in qs]))
        got = rep.filter(metric="ndcg_at_k", group=letter)["value"].item()
        assert got == pytest.approx(want, abs=1e-12), letter
