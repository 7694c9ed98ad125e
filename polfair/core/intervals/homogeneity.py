"""χ² homogeneity tests of a rate across the groups of an attribute set (Monte Carlo exact
when Cochran's rule fails), one family at a time or many at once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import polars as pl

from polfair.core.intervals.common import Rate, seeded_generator
from polfair.core.intervals.projections import as_expr
from polfair.core.intervals.significance import chi2_sf

__all__ = [
    "homogeneity_table",
    "homogeneity_test",
]

def _pearson(x: np.ndarray, n: np.ndarray) -> float:
    tot, succ = n.sum(), x.sum()
    pp = succ / tot
    if pp <= 0.0 or pp >= 1.0:
        return 0.0
    return float(np.sum((x - n * pp) ** 2 / n) / (pp * (1.0 - pp)))


def _homogeneity(
    parts: list[tuple[np.ndarray, np.ndarray]], weighted: bool, key: Any, seed: int, n_boot: int
) -> tuple[float | None, str]:
    stat, df, cochran_ok, used = 0.0, 0, True, []
    for x, n in parts:
        if len(n) < 2:
            return None, "chi2_homogeneity"
        stat += _pearson(x, n)
        df += len(n) - 1
        pp = x.sum() / n.sum()
        e = np.concatenate([n * pp, n * (1.0 - pp)])
        if e.min() < 1.0 or np.mean(e < 5.0) > 0.2:
            cochran_ok = False
        used.append((x, n))
    if cochran_ok or weighted:
        return float(chi2_sf(stat, df)), "chi2_homogeneity"
    # Monte Carlo exact test conditional on both margins: successes spread over groups by a
    # multivariate hypergeometric draw; p = (1 + #{X²* ≥ X²}) / (B + 1)
    rng = seeded_generator(seed, key)
    sims = np.zeros(n_boot)
    for x, n in used:
        order = np.lexsort((x, n))  # canonical group order: the draws do not depend on row order
        x, n = x[order], n[order]
        ni = np.round(n).astype(np.int64)
        s = round(float(x.sum()))
        draws = rng.multivariate_hypergeometric(ni, s, size=n_boot).astype(np.float64)
        tot = ni.sum()
        pp = s / tot
        if 0.0 < pp < 1.0:
            sims += ((draws - ni * pp) ** 2 / ni).sum(axis=1) / (pp * (1.0 - pp))
    hits = int(np.sum(sims >= stat * (1.0 - 1e-12)))
    return (1.0 + hits) / (n_boot + 1.0), "mc_exact"


def homogeneity_test(
    parts: Sequence[Rate], key: pl.Expr, *, weighted: bool = False, seed: int = 0, n_boot: int = 200
) -> pl.Expr:
    """Aggregation expression: χ² homogeneity test of a rate across the groups of an attribute set.

    Use in ``group_by(by, attribute set, metric).agg(...)`` over group rows. Pearson's χ² of the
    k × 2 table of the defined groups, ``k − 1`` df (one part); for several parts (fairlearn's
    equalized odds: TPR and FPR) the statistics add, ``Σ(k_i − 1)`` df. p-value from the closed
    integer-df series (:func:`chi2_sf`; test ``"chi2_homogeneity"``). When Cochran's rule fails (an
    expected count < 1 or more than 20% of them < 5) and the rows are unweighted, a Monte Carlo
    exact test conditional on both margins (``n_boot`` multivariate hypergeometric tables,
    ``p = (1 + #{X²* ≥ X²}) / (n_boot + 1)``; test ``"mc_exact"``) from a stream seeded by
    ``[seed, stable_hash(key)]``. Weighted: effective counts ``(p̂·n_eff, n_eff)``, χ² only.

    Parameters
    ----------
    parts
        :class:`Rate` (s) over the group rows.
    key
        String expression naming the tested family (e.g. the by values, attribute set and metric
        joined); its first value seeds the Monte Carlo stream, so a row's p-value does not depend
        on which other rows exist.
    weighted, seed, n_boot
        As in the report.

    Returns
    -------
    pl.Expr
        A struct ``{p_value: Float64, test: String}`` per group (unnest it); null p-value for
        fewer than two defined groups.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"a": ["x"] * 3, "p": [0.2, 0.3, 0.5], "n": [100.0, 100.0, 100.0]})
    >>> t = homogeneity_test([Rate(pl.col("p"), pl.col("n"))], pl.col("a"))
    >>> out = df.group_by("a").agg(t.alias("t")).unnest("t")
    >>> round(out["p_value"].item(), 8), out["test"].item()
    (2.754e-05, 'chi2_homogeneity')
    """
    exprs: list[pl.Expr] = [key.cast(pl.String)]
    for r in parts:
        exprs += [r.p.cast(pl.Float64), r.n.cast(pl.Float64)]

    def run(series: Sequence[pl.Series]) -> dict[str, Any]:
        k = series[0].drop_nulls()
        kv = k[0] if len(k) else None
        arrays = []
        for i in range(len(parts)):
            p, n = series[1 + 2 * i].to_numpy(), series[2 + 2 * i].to_numpy()
            good = np.isfinite(p) & np.isfinite(n) & (n > 0)
            p, n = p[good].astype(np.float64), n[good].astype(np.float64)
            x = p * n if weighted else np.round(p * n)
            if not weighted:
                n = np.round(n)
            arrays.append((x, n))
        pv, name = _homogeneity(arrays, weighted, kv, seed, n_boot)
        return {"p_value": pv, "test": name if pv is not None else None}

    dtype = pl.Struct({"p_value": pl.Float64, "test": pl.String})
    return pl.map_groups(exprs, lambda s: pl.Series([run(s)], dtype=dtype), return_dtype=dtype, returns_scalar=True)


class _HomogeneitySums(NamedTuple):
    """Per-segment statistics of :func:`_homogeneity_segments` (arrays of one value per segment)."""

    stat: np.ndarray  # Pearson's χ² (0 where the pooled rate is 0 or 1)
    df: np.ndarray  # defined groups − 1 (Int64)
    few: np.ndarray  # fewer than two defined groups (bool)
    bad: np.ndarray  # Cochran's rule failed (bool)
    x: np.ndarray  # per row: the group's count (0 where not defined)
    n: np.ndarray  # per row: the group's size (0 where not defined)
    good: np.ndarray  # per row: the group is defined
    seg: np.ndarray  # per row: its segment


def _homogeneity_segments(p: np.ndarray, n: np.ndarray, seg: np.ndarray, segments: int, weighted: bool) -> _HomogeneitySums:
    """Pearson's χ² homogeneity statistic of many families at once, over rows tagged by segment.

    ``p``, ``n``: each group row's rate and (effective) size (Float64, NaN for null); ``seg``: its
    segment (Int64 in ``[0, segments)``; a segment is one family part, e.g. one rate of one
    attribute set and ``by`` value). A row enters where ``p`` and ``n`` are finite and ``n > 0``;
    unweighted counts are rounded (``x = round(p·n)``, ``n = round(n)``), weighted ones are the
    effective counts ``(p·n, n)``. Per segment: ``χ² = Σ (x − n·p̄)² / n / (p̄(1 − p̄))`` with
    ``p̄ = Σx / Σn`` (0 where ``p̄`` is 0 or 1), ``df = k − 1``, ``few = k < 2``, and Cochran's rule
    failed (an expected count below 1, or more than 20% below 5). Every sum adds the rows in order
    (``np.bincount``), so the result does not depend on threads: the report and
    :func:`homogeneity_table` give bit-identical statistics. Vectorised: O(rows), no per-segment work.
    """
    good = np.isfinite(p) & np.isfinite(n) & (n > 0)
    with np.errstate(invalid="ignore"):
        x = np.where(good, p * n if weighted else np.round(p * n), 0.0)
        nn = np.where(good, n if weighted else np.round(n), 0.0)
    k = np.bincount(seg, weights=good, minlength=segments)
    tot_x = np.bincount(seg, weights=x, minlength=segments)
    tot_n = np.bincount(seg, weights=nn, minlength=segments)
    with np.errstate(invalid="ignore", divide="ignore"):
        pp = tot_x / tot_n
        pr = pp[seg]
        e1, e2 = nn * pr, nn * (1.0 - pr)
        dev = np.where(good, (x - e1) ** 2 / nn, 0.0)
        inner = (pp > 0.0) & (pp < 1.0)
        stat = np.where(inner, np.bincount(seg, weights=dev, minlength=segments) / (pp * (1.0 - pp)), 0.0)
    below1 = np.bincount(seg, weights=good & ((e1 < 1.0) | (e2 < 1.0)), minlength=segments)
    below5 = np.bincount(seg, weights=np.where(good, (e1 < 5.0).astype(np.float64) + (e2 < 5.0), 0.0),
                         minlength=segments)  # fmt: skip
    with np.errstate(invalid="ignore", divide="ignore"):
        bad = (k == 0) | (below1 > 0) | (below5 / (2.0 * k) > 0.2)
    return _HomogeneitySums(stat, k.astype(np.int64) - 1, k < 2, bad, x, nn, good, seg)


def _segment_parts(sums: _HomogeneitySums) -> Callable[[int], tuple[np.ndarray, np.ndarray]]:
    """The defined groups' (counts, sizes) of segment ``i`` (for the rare Monte Carlo tests)."""
    order = np.argsort(sums.seg, kind="stable")
    bounds = np.searchsorted(sums.seg[order], np.arange(len(sums.stat) + 1))  # every segment, rows or not

    def of(i: int) -> tuple[np.ndarray, np.ndarray]:
        rows = order[bounds[i] : bounds[i + 1]]
        rows = rows[sums.good[rows]]
        return sums.x[rows], sums.n[rows]

    return of


def _homogeneity_results(
    stat: np.ndarray,
    df: np.ndarray,
    few: np.ndarray,
    bad: np.ndarray,
    parts: Callable[[int], list[tuple[np.ndarray, np.ndarray]]],
    keys: Sequence[str | None],
    *,
    weighted: bool,
    seed: int,
    n_boot: int,
) -> tuple[np.ndarray, list[str | None]]:
    """p-values (NaN where untested) and test names of families: the :func:`_homogeneity_segments`
    values ``stat``, ``df`` (summed over each family's parts), ``few``, ``bad`` (any part), one per family.
    The χ² tail for all at once; the Monte Carlo exact test (unweighted, Cochran's rule failed)
    on ``parts(i)`` (family ``i``'s counts and sizes per part), seeded by ``keys[i]``.
    """
    stat = stat.astype(np.float64)
    mc = bad & ~few & (not weighted)
    pv = np.full(len(stat), np.nan)
    chi_rows = ~few & ~mc
    if chi_rows.any():
        pv[chi_rows] = chi2_sf(stat[chi_rows], df[chi_rows])
    tests: list[str | None] = [
        None if f else ("mc_exact" if m else "chi2_homogeneity") for f, m in zip(few.tolist(), mc.tolist())
    ]
    for i in np.flatnonzero(mc).tolist():  # rare: the exact test, as homogeneity_test runs it
        pv[i], tests[i] = _homogeneity(parts(i), weighted, keys[i], seed, n_boot)
    return pv, tests


def homogeneity_table(
    rows: pl.DataFrame | pl.LazyFrame,
    *,
    by: Sequence[str],
    families: Mapping[str, Sequence[tuple[str | pl.Expr, str | pl.Expr]]],
    key: pl.Expr,
    weighted: bool = False,
    seed: int = 0,
    n_boot: int = 200,
) -> pl.DataFrame:
    """:func:`homogeneity_test` for many families at once, vectorised: one row per ``by`` value.

    The same test, p-values and Monte Carlo streams as :func:`homogeneity_test` (the family named
    ``name`` is seeded by the first value of ``key`` followed by ``name``), but Pearson's χ²,
    its degrees of freedom and Cochran's rule are plain aggregations of ``rows`` for every family
    in one ``group_by``; only the (few) unweighted families where Cochran's rule fails run the
    Monte Carlo exact test in Python. This is what the report uses: with ``by=`` a day column
    one Python call per (day, attribute set, metric) would dominate the report's cost.

    Parameters
    ----------
    rows
        Group rows (one per group), with the rate and size columns named in ``families``.
    by
        Columns whose values each hold one test per family (e.g. by values and attribute set).
    families
        ``name -> [(p, n), ...]``: the parts (rate, effective size) tested together; column
        names or expressions.
    key
        String expression naming the tested unit (seeds the Monte Carlo stream with ``name``).
    weighted, seed, n_boot
        As in :func:`homogeneity_test`.

    Returns
    -------
    polars.DataFrame
        ``by`` columns, then ``<name>__tp`` (Float64 p-value in [0, 1]; null with fewer than two
        defined groups) and ``<name>__tt`` (String: ``"chi2_homogeneity"`` or ``"mc_exact"``) for
        each family.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"a": ["x"] * 3, "p": [0.2, 0.3, 0.5], "n": [100.0, 100.0, 100.0]})
    >>> out = homogeneity_table(df, by=["a"], families={"m": [("p", "n")]}, key=pl.col("a"))
    >>> round(out["m__tp"].item(), 8), out["m__tt"].item()
    (2.754e-05, 'chi2_homogeneity')
    """
    by = list(by)
    fam, part = "__pf_fam", "__pf_part"
    if not families:
        return rows.lazy().select(by).unique(maintain_order=True).collect()
    # long form: one block of rows per (family, part), so every statistic is written once
    blocks = [
        rows.lazy().select(*by, pl.lit(name).alias(fam), pl.lit(j, pl.Int32).alias(part),
                           (pl.lit(None, pl.String) if j else key.cast(pl.String)).alias("__pf_hkey"),
                           as_expr(p_).cast(pl.Float64).alias("__pf_p"), as_expr(n_).cast(pl.Float64).alias("__pf_n"))
        for name, parts in families.items() for j, (p_, n_) in enumerate(parts)
    ]  # fmt: skip
    long = (
        pl.concat(blocks, how="vertical_relaxed")
        .with_row_index("__pf_seg")
        .with_columns(pl.col("__pf_seg").first().over([*by, fam, part]))
        .collect()
    )
    # segments (by, family, part) in order of first appearance; families (by, family) likewise
    first_rows, seg = np.unique(long["__pf_seg"].to_numpy(), return_inverse=True)
    sums = _homogeneity_segments(long["__pf_p"].fill_null(np.nan).to_numpy(), long["__pf_n"].fill_null(np.nan).to_numpy(),
                                seg.astype(np.int64), len(first_rows), weighted)  # fmt: skip
    per_part = long[first_rows].select(*by, fam, part).with_columns(
        pl.Series("__pf_i", np.arange(len(first_rows))), pl.Series("__pf_stat", sums.stat), pl.Series("__pf_df", sums.df),
        pl.Series("__pf_few", sums.few), pl.Series("__pf_bad", sums.bad),
    )  # fmt: skip
    hkey = long.group_by([*by, fam], maintain_order=True).agg(pl.col("__pf_hkey").drop_nulls().first())
    res = per_part.group_by([*by, fam], maintain_order=True).agg(
        pl.col("__pf_stat").sum(), pl.col("__pf_df").sum(), pl.col("__pf_few").any(), pl.col("__pf_bad").any(),
        pl.col("__pf_i"),
    ).join(hkey, on=[*by, fam], how="left", nulls_equal=True, maintain_order="left")  # fmt: skip
    keys = [None if kv is None else f"{kv}{name}" for kv, name in zip(res["__pf_hkey"].to_list(), res[fam].to_list())]
    segment = _segment_parts(sums)
    members = res["__pf_i"]

    def parts(i: int) -> list[tuple[np.ndarray, np.ndarray]]:
        return [segment(j) for j in members[i].to_list()]

    pv, tests = _homogeneity_results(
        res["__pf_stat"].to_numpy(), res["__pf_df"].to_numpy(), res["__pf_few"].to_numpy(), res["__pf_bad"].to_numpy(),
        parts, keys, weighted=weighted, seed=seed, n_boot=n_boot,
    )  # fmt: skip
    res = res.select(*by, fam).with_columns(
        pl.Series("__pf_tp", pv, dtype=pl.Float64, nan_to_null=True), pl.Series("__pf_tt", tests, dtype=pl.String)
    )
    ones = [
        res.filter(pl.col(fam) == name).select(*by, pl.col("__pf_tp").alias(f"{name}__tp"), pl.col("__pf_tt").alias(f"{name}__tt"))
        for name in families
    ]  # fmt: skip
    if not by:
        return pl.concat(ones, how="horizontal")
    out = res.select(by).unique(maintain_order=True)
    for one in ones:
        out = out.join(one, on=by, how="left", nulls_equal=True, maintain_order="left")
    return out
