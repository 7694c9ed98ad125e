"""polfair.core.entropy.bootstrap: the vectorised entropy bootstrap against the naive implementation it replaced.

The reference below is the former ``intervals.entropy_bootstrap`` (one Polars frame per ``by``
value, replicates through ``ge_replicates``, one Python call of the scalar interval per row) and
the former scalar ``bias_corrected_normal_interval``, copied verbatim except that the reference
takes its draws from a ``draw`` function. With the same draws both must agree: estimates bit for
bit (same Polars path), limits to rounding (the reference sums ``Σ cnt·b^α/μ^α − S0`` with Polars'
Kahan sums, the new code ``Σ cnt·((b/μ)^α − 1)``). The new resampler (:func:`draw_cells`) draws
the same law as the former ``Generator.multinomial`` but a different stream: its law is tested
against the exact trinomial pmf.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import polars as pl
import pytest

from polfair.core import entropy
from polfair.core import intervals as iv
from polfair.core.entropy import bootstrap as bs
from polfair.core.intervals import common as ivc

_REP = "__pf_rep"
_CONFUSION_N = ("tp_n", "fp_n", "tn_n", "fn_n")
U64 = pl.UInt64

Draw = Callable[[np.random.Generator, np.ndarray, int], np.ndarray]  # -> (B, C, 4) tp, fp, tn, fn


# ----------------------------------------------------------------------------------------------
# the former implementation (reference)


def old_bias_corrected_normal_interval(
    estimate: float, replicates: Any, ci: float, *, lower: float | None = 0.0
) -> tuple[float | None, float | None]:
    reps = np.asarray(replicates, dtype=np.float64)
    good = reps[np.isfinite(reps)]
    if (
        estimate is None
        or not math.isfinite(estimate)
        or len(good) < 2
        or (len(reps) - len(good)) > (1 - ci) / 2 * len(reps)
    ):
        return None, None
    z = iv.z_value(ci)
    centre = 2.0 * estimate - float(good.mean())
    sd = float(good.std(ddof=1))
    lo, hi = centre - z * sd, centre + z * sd
    if lower is not None:
        lo, hi = max(lower, lo), max(lower, hi)
    return lo, hi


def multinomial_draw(rng: np.random.Generator, counts: np.ndarray, n_boot: int) -> np.ndarray:
    """The former draw: all four counts from ``Generator.multinomial``."""
    n = counts.sum(axis=1)
    return rng.multinomial(n, counts / n[:, None], size=(n_boot, len(n)))


def old_entropy_bootstrap(
    cells: pl.DataFrame | pl.LazyFrame,
    *,
    protected: Sequence[str],
    by: Sequence[str] = (),
    sets: Sequence[Sequence[str]] | None = None,
    alpha: float = 2.0,
    ci: float = 0.95,
    n_boot: int = 200,
    seed: int = 0,
    draw: Draw = multinomial_draw,
) -> pl.DataFrame:
    ci = iv.check_ci(ci)  # type: ignore[assignment]
    n_boot = iv.check_n_boot(n_boot)
    keys, by = list(protected), list(by)
    sets = [tuple(s) for s in sets] if sets is not None else [
        s for k in range(1, len(keys) + 1) for s in itertools.combinations(keys, k)
    ]  # fmt: skip
    lf = cells.lazy()
    group = [*by, *keys]
    base = (
        lf.group_by(group).agg([pl.col(c).cast(pl.Int64).sum() for c in _CONFUSION_N])
        .sort(group, nulls_last=False)
        .collect()
    )  # fmt: skip
    tot = base.select(pl.sum_horizontal(_CONFUSION_N)).to_series()
    base = base.filter(tot > 0)
    # one replicate table per by value, stacked; replicate -1 is the original table
    parts = [base.with_columns(pl.lit(-1, pl.Int32).alias(_REP))]
    by_parts = base.partition_by(by, maintain_order=True, as_dict=False) if by else [base]
    for part in by_parts:
        by_values = tuple(part.row(0, named=True)[b] for b in by)
        rng = ivc.seeded_generator(seed, tuple(str(v) for v in by_values))
        counts = part.select(_CONFUSION_N).to_numpy().astype(np.int64)
        n = counts.sum(axis=1)
        draws = draw(rng, counts, n_boot)  # (B, C, 4)
        c = len(n)
        stacked = part.select(group)[np.tile(np.arange(c), n_boot)].with_columns(
            pl.Series(_REP, np.repeat(np.arange(n_boot, dtype=np.int32), c))
        )
        flat = draws.reshape(-1, 4)
        stacked = stacked.with_columns([pl.Series(c, flat[:, j], dtype=pl.Int64) for j, c in enumerate(_CONFUSION_N)])
        parts.append(stacked)
    table = pl.concat(parts, how="diagonal_relaxed")
    rk = [*by, _REP]

    def family(benefits: pl.DataFrame, prefix: str) -> pl.DataFrame:
        names = {f"{prefix}generalized_entropy_index": alpha, f"{prefix}theil_index": 1.0, "__pf_ge2": 2.0}
        original = benefits.filter(pl.col(_REP) == -1)
        out = pl.concat(
            [
                entropy.generalized_entropy_indices(original, names, rk),
                iv.ge_replicates(benefits.filter(pl.col(_REP) >= 0), names, rk),
            ],
            how="vertical_relaxed",
        )
        clamped = {k: pl.col(k).fill_nan(None).clip(lower_bound=0.0) for k in names}
        cv = f"{prefix}coefficient_of_variation"
        return out.select(
            *rk,
            clamped[f"{prefix}generalized_entropy_index"].alias(f"{prefix}generalized_entropy_index"),
            clamped[f"{prefix}theil_index"].alias(f"{prefix}theil_index"),
            (2.0 * clamped["__pf_ge2"]).sqrt().alias(cv),
        )

    def longer(wide: pl.DataFrame, attribute: str | None) -> pl.DataFrame:
        return wide.unpivot(index=rk, variable_name="metric", value_name="value").with_columns(
            pl.lit(attribute, pl.String).alias("attribute")
        )

    frames = []
    for s in sets:
        rolled = table.group_by([*rk, *s], maintain_order=True).agg([pl.col(c).sum() for c in _CONFUSION_N])
        frames.append(longer(family(entropy.benefit_of_groups(rolled, rk), "between_group_"), " & ".join(s)))
    frames.append(longer(family(entropy.benefit_of_groups(table, rk), "between_all_groups_"), None))
    sums = table.group_by(rk, maintain_order=True).agg([pl.col(c).sum() for c in _CONFUSION_N])
    frames.append(longer(family(entropy.benefit_of_individuals(sums, rk, summed=True), ""), None))
    long = pl.concat(frames, how="vertical_relaxed")
    idx = [*by, "attribute", "metric"]
    est = long.filter(pl.col(_REP) == -1).drop(_REP)
    reps = long.filter(pl.col(_REP) >= 0).group_by(idx, maintain_order=True).agg(pl.col("value").alias("__pf_reps"))
    joined = est.join(reps, on=idx, how="left", nulls_equal=True)
    lows: list[float | None] = []
    highs: list[float | None] = []
    for value, rep_values in zip(joined["value"].to_list(), joined["__pf_reps"].to_list()):
        arr = np.array([np.nan if v is None else v for v in (rep_values or [])], dtype=np.float64)
        lo, hi = old_bias_corrected_normal_interval(value, arr, ci) if value is not None else (None, None)
        lows.append(lo)
        highs.append(hi)
    return joined.select(
        *by, pl.col("attribute"), pl.col("metric"), pl.col("value").cast(pl.Float64),
        pl.Series("value_lo", lows, dtype=pl.Float64), pl.Series("value_hi", highs, dtype=pl.Float64),
    )  # fmt: skip


# ----------------------------------------------------------------------------------------------
# helpers


def as_new(draw: Draw) -> bs.Sampler:
    """The new code's sampler (``(fn, fp)``) from a four-count draw."""

    def sampler(rng: np.random.Generator, counts: np.ndarray, n_boot: int) -> tuple[np.ndarray, np.ndarray]:
        d = draw(rng, counts, n_boot)
        return d[..., 3], d[..., 1]

    return sampler


def as_old(sampler: bs.Sampler) -> Draw:
    """A four-count draw from the new code's sampler (TP + TN all in TP: the indices only read the sum)."""

    def draw(rng: np.random.Generator, counts: np.ndarray, n_boot: int) -> np.ndarray:
        fn, fp = sampler(rng, counts, n_boot)
        n = counts.sum(axis=1)
        return np.stack([n[None, :] - fn - fp, fp, np.zeros_like(fn), fn], axis=-1)

    return draw


def new_bootstrap(cells: pl.DataFrame, sampler: bs.Sampler | None, **kw: Any) -> pl.DataFrame:
    """The new implementation with another sampler (``intervals.entropy_bootstrap`` uses the default)."""
    return bs.entropy_bootstrap(cells, quantile=iv.z_value, generator=ivc.seeded_generator, sampler=sampler, **kw)


def random_cells(seed: int, k: int = 60, *, nulls: bool = False, zeros: bool = False, scale: int = 1) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    df = pl.DataFrame({
        "m": pl.Series(rng.choice(["jan", "feb", None] if nulls else ["jan", "feb", "mar"], k).tolist(), dtype=pl.String),
        "a": rng.choice([0, 1, 2], k),
        "b": pl.Series(rng.choice(["u", "v", None] if nulls else ["u", "v"], k).tolist(), dtype=pl.String),
        "c": rng.choice(["p", "q", "r", "s"], k),
        **{c: rng.integers(0, 25, k) * scale for c in _CONFUSION_N},
    })  # fmt: skip
    if zeros:  # empty cells, and groups with one counted cell
        empty = pl.col("a") == 0
        df = df.with_columns([pl.when(empty).then(0).otherwise(pl.col(c)).alias(c) for c in _CONFUSION_N])
        df = df.with_columns(pl.when(pl.col("c") == "p").then(0).otherwise(pl.col("fn_n")).alias("fn_n"))
    return df.with_columns(pl.col(*_CONFUSION_N).cast(U64))


def assert_close(new: pl.DataFrame, ref: pl.DataFrame) -> None:
    """Same schema, keys and estimates (bit for bit); limits equal up to rounding.

    GE and Theil limits to 1e-9 relative / 1e-12 absolute. CV = sqrt(2 GE) turns a rounding
    residue of ~1e-16 in a GE of 0 (one group) into ~1e-8, so CV limits get 1e-7 absolute.
    """
    assert new.schema == ref.schema
    assert new.drop("value_lo", "value_hi").equals(ref.drop("value_lo", "value_hi"))
    cv = new["metric"].str.ends_with("coefficient_of_variation").to_numpy()
    for col in ("value_lo", "value_hi"):
        assert (new[col].is_null() == ref[col].is_null()).all(), col
        a = new[col].fill_null(np.nan).to_numpy()
        b = ref[col].fill_null(np.nan).to_numpy()
        ok = np.isclose(a, b, rtol=1e-9, atol=1e-12) | (cv & np.isclose(a, b, rtol=0, atol=1e-7))
        ok |= np.isnan(a) & np.isnan(b)
        assert ok.all(), (col, new.filter(~pl.Series(ok)), ref.filter(~pl.Series(ok)))


CASES: dict[str, tuple[pl.DataFrame, dict[str, Any]]] = {
    "by": (random_cells(1), dict(protected=["a", "b", "c"], by=["m"], n_boot=9)),
    "no by": (random_cells(2), dict(protected=["a", "b"], n_boot=9)),
    "nulls in keys": (random_cells(3, nulls=True), dict(protected=["a", "b"], by=["m"], n_boot=9)),
    "empty and one-cell groups": (random_cells(4, zeros=True), dict(protected=["a", "c"], by=["m"], n_boot=5)),
    "n_boot 2": (random_cells(5), dict(protected=["a", "b"], by=["m"], n_boot=2)),
    "n_boot 3, ci 0.5": (random_cells(6), dict(protected=["a", "b"], by=["m"], n_boot=3, ci=0.5)),
    "alpha 0": (random_cells(7), dict(protected=["a", "b"], by=["m"], n_boot=9, alpha=0.0)),
    "alpha 1": (random_cells(8), dict(protected=["a", "b"], by=["m"], n_boot=9, alpha=1.0)),
    "alpha 0.5": (random_cells(9), dict(protected=["a", "b"], by=["m"], n_boot=9, alpha=0.5)),
    "alpha 3": (random_cells(10), dict(protected=["a", "b"], by=["m"], n_boot=9, alpha=3.0)),
    "sets": (random_cells(11), dict(protected=["a", "b", "c"], by=["m"], n_boot=9, sets=[["c"], ["a", "b"], []])),
    "large cells (numpy binomials)": (random_cells(12, scale=500), dict(protected=["a", "b"], by=["m"], n_boot=9)),
    "one cell": (random_cells(13, k=1), dict(protected=["a"], n_boot=4)),
    "no counted cell": (random_cells(14).with_columns(pl.col(*_CONFUSION_N) * 0), dict(protected=["a"], by=["m"])),
    "empty table": (random_cells(15).head(0), dict(protected=["a", "b"], by=["m"], n_boot=4)),
}


# ----------------------------------------------------------------------------------------------
# the bootstrap against the reference


@pytest.mark.parametrize("name", list(CASES))
def test_equals_the_former_implementation_on_its_draws(name: str) -> None:
    cells, kw = CASES[name]
    ref = old_entropy_bootstrap(cells, **kw)
    new = new_bootstrap(cells, as_new(multinomial_draw), **kw)
    assert_close(new, ref)


@pytest.mark.parametrize("name", list(CASES))
def test_equals_the_former_implementation_on_the_new_draws(name: str) -> None:
    cells, kw = CASES[name]
    ref = old_entropy_bootstrap(cells, draw=as_old(bs.draw_cells), **kw)
    new = iv.entropy_bootstrap(cells, **kw)
    assert_close(new, ref)


def test_report_sized_case_equals_the_former_implementation() -> None:
    """Many by values x cells, 3 attributes (the benchmark's shape, smaller)."""
    rng = np.random.default_rng(21)
    k = 30 * 2 * 5 * 6
    cells = pl.DataFrame({
        "day": np.repeat(np.arange(30), 60), "sex": np.tile(np.repeat([0, 1], 30), 30),
        "race": np.tile(np.repeat(np.arange(5), 6), 60), "age": np.tile(np.arange(6), 300),
        **{c: rng.integers(0, 40, k) for c in _CONFUSION_N},
    }).with_columns(pl.col(*_CONFUSION_N).cast(U64))  # fmt: skip
    kw = dict(protected=["sex", "race", "age"], by=["day"], n_boot=40, seed=3)
    ref = old_entropy_bootstrap(cells, draw=as_old(bs.draw_cells), **kw)
    assert_close(iv.entropy_bootstrap(cells, **kw), ref)
    assert_close(new_bootstrap(cells, as_new(multinomial_draw), **kw), old_entropy_bootstrap(cells, **kw))


def test_a_by_value_does_not_depend_on_the_others() -> None:
    cells = random_cells(30, k=200, scale=1)
    big = random_cells(31, k=60, scale=400).with_columns(pl.lit("apr").alias("m"))  # numpy-binomial cells
    both = pl.concat([cells, big])
    kw = dict(protected=["a", "b"], by=["m"], n_boot=20, seed=9)
    full = new_bootstrap(both, None, **kw)
    for m in ("jan", "apr"):
        alone = new_bootstrap(both.filter(pl.col("m") == m), None, **kw)
        assert alone.equals(full.filter(pl.col("m") == m))


# ----------------------------------------------------------------------------------------------
# intervals


def _interval_inputs(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    m, b = 400, 37
    est = rng.uniform(0, 1, m)
    reps = est[:, None] + rng.normal(0, 0.1, (m, b)) * rng.uniform(0, 2, (m, 1))
    reps[:40] = np.round(reps[:40], 1)  # ties
    reps[40:60] = reps[40:60, :1]  # constant rows (sd 0)
    for i, frac in enumerate(np.linspace(0, 0.12, 60)):  # NaN / inf around the α/2 threshold
        row = 60 + i
        bad = rng.permutation(b)[: int(round(frac * b))]
        reps[row, bad] = rng.choice([np.nan, np.inf, -np.inf], bad.size)
    reps[120] = np.nan  # all undefined
    reps[121, 1:] = np.nan  # one defined
    reps[122, 2:] = np.nan  # two defined
    est[123:130] = [np.nan, np.inf, -np.inf, -0.5, 0.0, 1e300, -1e-300]
    reps[130] = [1e300] * (b - 1) + [-1e300]  # overflowing sd
    reps[131] = 1e308  # overflowing mean
    reps[132:140] = -reps[132:140]  # negative: the clamp at 0
    return est, reps


def _same(a: float | None, b: float | None) -> bool:
    return (a is None and b is None) or (
        a is not None and b is not None and (a == b or (math.isnan(a) and math.isnan(b)))
    )


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the scalar reference overflows on the 1e300 rows
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("ci", [0.95, 0.5, 0.99])
@pytest.mark.parametrize("lower", [0.0, None, 0.3, -1.0])
def test_vectorised_interval_equals_the_scalar_one_bit_for_bit(seed: int, ci: float, lower: float | None) -> None:
    est, reps = _interval_inputs(seed)
    lo, hi, ok = bs.bias_corrected_normal_intervals(est, reps, ci, iv.z_value, lower=lower)
    for i in range(est.size):
        want = old_bias_corrected_normal_interval(float(est[i]), reps[i], ci, lower=lower)
        got = (float(lo[i]), float(hi[i])) if ok[i] else (None, None)
        assert _same(got[0], want[0]) and _same(got[1], want[1]), (i, got, want)
        scalar = iv.bias_corrected_normal_interval(float(est[i]), reps[i], ci, lower=lower)
        assert _same(scalar[0], want[0]) and _same(scalar[1], want[1]), (i, scalar, want)
    assert not ok[120:123].any() and np.isnan(lo[~ok]).all()


def test_scalar_interval_keeps_its_behaviour() -> None:
    assert iv.bias_corrected_normal_interval(None, [1.0, 2.0], 0.95) == (None, None)  # type: ignore[arg-type]
    assert iv.bias_corrected_normal_interval(1.0, [], 0.95) == (None, None)
    assert iv.bias_corrected_normal_interval(1.0, [1.0, None, 2.0], 0.5) == old_bias_corrected_normal_interval(
        1.0, [1.0, None, 2.0], 0.5
    )
    assert iv.bias_corrected_normal_interval(2, [1, 1, 1], 0.95) == (3.0, 3.0)
    with pytest.raises(ValueError, match="shape"):
        bs.bias_corrected_normal_intervals([1.0, 2.0], [[1.0, 2.0]], 0.95, iv.z_value)


# ----------------------------------------------------------------------------------------------
# the resampler's law


def _trinomial_pmf(n: int, pfn: float, pfp: float) -> np.ndarray:
    """Exact P(FN = i, FP = j) as an (n+1, n+1) array."""
    lf = np.array([math.lgamma(k + 1) for k in range(n + 1)])
    i, j = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    r = n - i - j
    ok = r >= 0
    with np.errstate(divide="ignore", invalid="ignore"):
        logp = lf[n] - lf[i] - lf[j] - lf[np.where(ok, r, 0)]
        logp = logp + np.where(i > 0, i * np.log(pfn), 0.0) + np.where(j > 0, j * np.log(pfp), 0.0)
        logp = logp + np.where(r > 0, r * np.log1p(-pfn - pfp), 0.0)
    return np.where(ok, np.exp(logp), 0.0)


#: (tp, fp, tn, fn) of cells covering the table path, the numpy path and the edges.
LAW_CELLS = [
    (30, 20, 25, 15),  # the benchmark's kind of cell
    (0, 0, 0, 3),  # FN = n
    (5, 0, 4, 0),  # nothing to draw
    (0, 1, 0, 0),  # n = 1
    (60, 1, 30, 2),  # rare FN and FP
    (1, 40, 0, 38),  # FP = n - FN in share
    (400, 300, 500, 350),  # sd > 11.7: Generator.binomial
]


@pytest.mark.parametrize("cell", LAW_CELLS)
def test_draws_follow_the_trinomial(cell: tuple[int, int, int, int]) -> None:
    counts = np.array([cell], dtype=np.int64)
    n = int(counts.sum())
    reps = 40_000
    fn, fp = bs.draw_cells(np.random.default_rng(17), counts, reps)
    assert fn.shape == fp.shape == (reps, 1) and fn.dtype == fp.dtype == np.int64
    fn, fp = fn[:, 0], fp[:, 0]
    assert (fn >= 0).all() and (fp >= 0).all() and (fn + fp <= n).all()
    pfn, pfp = cell[3] / n, cell[1] / n
    # moments
    for x, p in ((fn, pfn), (fp, pfp)):
        sd = math.sqrt(n * p * (1 - p))
        assert abs(x.mean() - n * p) <= 5 * sd / math.sqrt(reps) + 1e-12
        if sd > 0:
            assert abs(x.var() / sd**2 - 1) < 0.06
    if pfn * pfp > 0:
        cov, want = np.cov(fn, fp)[0, 1], -n * pfn * pfp
        assert abs(cov - want) < 5 * math.sqrt(n * pfn * (1 - pfn) * n * pfp * (1 - pfp) / reps) + 0.05 * abs(want)
    if n > 200:
        return
    # the joint law: chi-square over cells with an expected count >= 5 (the rest pooled)
    pmf = _trinomial_pmf(n, pfn, pfp)
    obs = np.zeros_like(pmf)
    np.add.at(obs, (fn, fp), 1)
    exp = pmf * reps
    big = exp >= 5
    if big.sum() < 2:
        assert obs[~big].sum() == pytest.approx(exp[~big].sum(), abs=5 * math.sqrt(exp[~big].sum()) + 1)
        return
    o = np.r_[obs[big], obs[~big].sum()]
    e = np.r_[exp[big], exp[~big].sum()]
    keep = e > 0
    stat = float(((o[keep] - e[keep]) ** 2 / e[keep]).sum())
    df = int(keep.sum()) - 1
    stats = pytest.importorskip("scipy.stats")
    assert stats.chi2.sf(stat, df) > 1e-4, (stat, df)


def test_draws_are_independent_across_cells_and_replicates() -> None:
    """Each cell's draws are shuffled on their own: no dependence between cells of one replicate."""
    counts = np.array([(30, 20, 25, 15)] * 6 + [(400, 300, 500, 350)] * 2, dtype=np.int64)
    fn, fp = bs.draw_cells(np.random.default_rng(5), counts, 20_000)
    corr = np.corrcoef(np.c_[fn, fp].T)
    off = corr[~np.eye(corr.shape[0], dtype=bool)]
    within = [corr[i, i + fn.shape[1]] for i in range(fn.shape[1])]  # FN vs FP of one cell: negative
    off = np.array([c for c in off if not any(np.isclose(c, w) for w in within)])
    assert np.abs(off).max() < 5 / math.sqrt(20_000)
    assert max(within) < -0.1
    # replicates are exchangeable: no trend over the replicate index
    idx = np.arange(fn.shape[0])
    for col in range(fn.shape[1]):
        assert abs(np.corrcoef(idx, fn[:, col])[0, 1]) < 5 / math.sqrt(20_000)


def test_window_tables_handle_degenerate_shares() -> None:
    rng = np.random.default_rng(0)
    n = np.array([0, 5, 5, 1, 10**6])
    p = np.array([0.3, 0.0, 1.0, 0.5, 1e-7])
    x = bs._histograms(rng, n, p, 50)
    assert (x[0] == 0).all() and (x[1] == 0).all() and (x[2] == 5).all()
    assert set(np.unique(x[3])) <= {0, 1} and (x[4] >= 0).all() and (x[4] <= 10).all()
