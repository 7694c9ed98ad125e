"""Resampling on the cell table: the entropy indices' cell bootstrap and its analytic moments,
the bias-corrected normal interval, and the delete-a-group jackknife for clustered rows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import polars as pl
from scipy import special

from polfair.core.intervals.common import check_ci, check_n_boot, seeded_generator, z_value
from polfair.exceptions import PolfairError

__all__ = [
    "bias_corrected_normal_interval",
    "entropy_bootstrap",
    "entropy_delta",
    "ge_replicates",
    "jackknife_intervals",
]

# ----------------------------------------------------------------------------------------------
# resampling: entropy-index bootstrap, delete-a-group jackknife


_REP = "__pf_rep"
_CONFUSION_N = ("tp_n", "fp_n", "tn_n", "fn_n")


def bias_corrected_normal_interval(
    estimate: float, replicates: Any, ci: float, *, lower: float | None = 0.0
) -> tuple[float | None, float | None]:
    """Bias-corrected normal bootstrap interval ``θ̂ − (mean θ* − θ̂) ± z·sd(θ*)`` (clipped at ``lower``).

    Undefined replicates (NaN) are skipped; more than ``α/2`` of them gives ``(None, None)``.

    Examples
    --------
    >>> [round(v, 4) for v in bias_corrected_normal_interval(1.0, [1.1, 1.3, 1.2], 0.95)]
    [0.604, 0.996]
    """
    from polfair.core.entropy.bootstrap import bias_corrected_normal_intervals

    if estimate is None:
        return None, None
    reps = np.asarray(replicates, dtype=np.float64).reshape(1, -1)
    lo, hi, ok = bias_corrected_normal_intervals([estimate], reps, ci, z_value, lower=lower)
    return (float(lo[0]), float(hi[0])) if ok[0] else (None, None)


def entropy_bootstrap(
    cells: pl.DataFrame | pl.LazyFrame,
    *,
    protected: Sequence[str],
    by: Sequence[str] = (),
    sets: Sequence[Sequence[str]] | None = None,
    alpha: float = 2.0,
    ci: float = 0.95,
    n_boot: int = 200,
    seed: int = 0,
) -> pl.DataFrame:
    """Bias-corrected normal stratified cell-bootstrap intervals of the entropy indices.

    Per ``by`` value, each cell keeps its size and redraws its four confusion counts:
    ``(TP, FP, TN, FN)* ~ Multinomial(n_c; observed shares)`` (exactly a row bootstrap stratified
    by cell; the indices use unweighted counts, as aif360). The draws of all ``by`` values fill one
    replicate × cell array (``polfair.core.entropy.bootstrap``: FN binomial, FP given FN as two binomial
    pieces, TP + TN the rest, which is all the indices read); the replicate indices use the
    deviation form ``Σ cnt·((b/μ)^α − 1)`` of the :mod:`polfair.core.entropy` formulas, whose
    estimates the report keeps. The interval is ``θ̂ − (mean θ* − θ̂) ± z·sd(θ*)`` clipped at 0
    (:func:`bias_corrected_normal_interval`, vectorised over all rows).

    Parameters
    ----------
    cells
        A cell table (``bucket`` is summed away if present).
    protected
        Its protected-attribute columns.
    by
        Its ``by`` columns.
    sets
        Attribute sets (lists of protected names) for the between-group rows; default every
        non-empty subset.
    alpha
        α of the generalized entropy index.
    ci, n_boot, seed
        Level, replicates, seed.

    Returns
    -------
    pl.DataFrame
        Columns ``*by``, ``attribute`` (String; names joined by ``" & "``, null on population
        rows), ``metric`` (String: ``between_group_*`` on attribute rows; ``generalized_entropy_index``,
        ``theil_index``, ``coefficient_of_variation`` and ``between_all_groups_*`` on population
        rows), ``value`` (the estimate), ``value_lo``, ``value_hi`` (Float64, ≥ 0; null when more
        than α/2 of the replicates are undefined).

    Notes
    -----
    Deterministic: the generator of each ``by`` value is
    ``Generator(PCG64(SeedSequence([seed, stable_hash(by values)])))`` and draws in the cell
    table's sorted key order from its exact integer counts, so the intervals do not depend on row
    order, batch split or merge order, and adding a ``by`` value leaves the others unchanged.
    Coverage of GE(2) at 95%: 96.9–99.9% (the percentile bootstrap: 0–24%). Cost: O(cells ·
    n_boot), independent of the number of rows.

    Examples
    --------
    >>> import polars as pl
    >>> cells = pl.DataFrame({"g": ["a", "b"], "tp_n": [30, 10], "fp_n": [10, 20], "tn_n": [50, 60], "fn_n": [10, 10]},
    ...                      schema_overrides={c: pl.UInt64 for c in ("tp_n", "fp_n", "tn_n", "fn_n")})
    >>> out = entropy_bootstrap(cells, protected=["g"], n_boot=50)
    >>> out.filter(pl.col("metric") == "theil_index").select("value_lo", "value_hi").row(0)[0] > 0
    True
    """
    from polfair.core.entropy import bootstrap as _bootstrap

    ci = check_ci(ci, required=True)
    n_boot = check_n_boot(n_boot)
    return _bootstrap.entropy_bootstrap(
        cells, protected=protected, by=by, sets=sets, alpha=alpha, ci=ci, n_boot=n_boot, seed=seed,
        quantile=z_value, generator=seeded_generator,
    )  # fmt: skip


def entropy_delta(
    cells: pl.DataFrame | pl.LazyFrame,
    *,
    protected: Sequence[str],
    by: Sequence[str] = (),
    sets: Sequence[Sequence[str]] | None = None,
    alpha: float = 2.0,
    ci: float = 0.95,
) -> pl.DataFrame:
    """Intervals on the entropy indices from the analytic moments of the cell bootstrap (the report's).

    The bias-corrected normal interval of :func:`entropy_bootstrap`,
    ``θ̂ − (E*θ* − θ̂) ± z·sd*(θ*)`` clipped at 0, with the bootstrap mean and SD replaced by their
    second-order delta-method values under the same law (each cell keeps its size and redraws
    its benefits as a multinomial sample): ``bias ≈ ½ Σ_g H_gg v_g`` and
    ``sd² ≈ Σ_g g_g² v_g + ½ Σ_gh H_gh² v_g v_h``, with ``v_g`` the exact variance of group ``g``'s
    mean benefit, ``g`` and ``H`` the index's gradient and Hessian in the group means (diagonal
    plus rank two for a between-group index: O(groups)). The second-order term keeps the SD
    positive when all groups have the same mean, where the first-order delta method gives 0. CV's
    limits are √(2·l), √(2·u) of GE(2)'s. No random numbers; O(cells), independent of the rows
    and of ``n_boot``. Formulas: :mod:`polfair.core.entropy.intervals`.

    Parameters
    ----------
    cells
        A cell table (unweighted counts ``tp_n, fp_n, tn_n, fn_n``; ``bucket`` and other
        columns are summed away).
    protected
        Its protected-attribute columns.
    by
        Its ``by`` columns (one set of intervals per combination).
    sets
        Attribute sets (lists of protected names) for the between-group rows; default every
        non-empty subset.
    alpha
        α of the generalized entropy index (float; aif360's GE(0) and GE(1) forms at 0 and 1).
    ci
        Level, in (0, 1).

    Returns
    -------
    pl.DataFrame
        Columns ``*by``, ``attribute`` (String; names joined by ``" & "``, null on population
        rows), ``metric`` (String: ``between_group_*`` on attribute rows;
        ``generalized_entropy_index``, ``theil_index``, ``coefficient_of_variation`` and
        ``between_all_groups_*`` on population rows), ``value`` (the estimate, as the report),
        ``value_lo``, ``value_hi`` (Float64, ≥ 0), ``ci_method`` (String ``"delta_bc"``). Limits
        are null where the estimate is (no rows, a mean benefit of 0, GE(α ≤ 0) with a benefit
        of 0).

    Raises
    ------
    PolfairError
        ``ci`` not a level in (0, 1) (or None); a ``ValueError``.

    Notes
    -----
    Measured against the cell bootstrap with 4,000 replicates (``tests/core/entropy/test_entropy_ci.py``):
    limits within 6% of the interval's width; coverage of GE(2) in ``bench/coverage.py``. At the
    report's shapes it replaces an O(cells × n_boot) computation (e.g. 100,000 cells × 200
    replicates: ~4 s) by O(cells) (~0.02 s). Source: the bootstrap it approximates
    (``docs/statistics.md``); the delta method to second order (e.g. Lehmann & Casella, *Theory
    of Point Estimation*, §1.8).

    Examples
    --------
    >>> import polars as pl
    >>> cells = pl.DataFrame({"g": ["a", "b"], "tp_n": [30, 10], "fp_n": [10, 20], "tn_n": [50, 60], "fn_n": [10, 10]})
    >>> out = entropy_delta(cells, protected=["g"])
    >>> [round(v, 4) for v in out.filter(pl.col("metric") == "theil_index").select("value_lo", "value_hi").row(0)]
    [0.1023, 0.1964]
    """
    from polfair.core.entropy import intervals as _entropy_ci

    level = check_ci(ci, required=True)
    rows = _entropy_ci.IndexRows(protected, by, sets, alpha, level)
    return _entropy_ci.entropy_intervals(cells, rows, limits=_entropy_ci.delta_limits, method="delta_bc")


def ge_replicates(benefits: pl.DataFrame, alphas: dict[str, float], by: Sequence[str]) -> pl.DataFrame:
    """Generalized entropy indices of many benefit vectors at once, from plain per-group sums.

    The formula of :func:`polfair.core.entropy.generalized_entropy_indices` (aif360's, including its
    GE(1) and GE(0) forms) rewritten with ``S0 = Σcnt``, ``μ = Σ cnt·b / S0`` and one more sum per
    index: ``GE(α) = (Σ cnt·b^α / μ^α − S0) / (S0·α(α−1))``, ``GE(1) = (Σ cnt·b·ln b − μ S0 ln μ) / (μ S0)``
    (``b ln b = 0`` at ``b = 0``), ``GE(0) = (S0 ln μ − Σ cnt·ln b) / (μ S0)``. Plain sums take Polars'
    fast group-by path, which matters for thousands of bootstrap replicates; equal to
    ``generalized_entropy_indices`` to about 1e-15 relative (tested).

    Parameters
    ----------
    benefits
        Columns ``*by, b, cnt`` (rows with ``cnt = 0`` are skipped).
    alphas
        Output column name -> α.
    by
        Group columns (one benefit vector per combination).

    Returns
    -------
    pl.DataFrame
        Columns ``*by`` and one Float64 column per entry of ``alphas`` (NaN/inf as the formula gives).

    Examples
    --------
    >>> import polars as pl
    >>> b = pl.DataFrame({"k": [0, 0, 0], "b": [0.0, 1.0, 2.0], "cnt": [2.0, 6.0, 2.0]})
    >>> ge_replicates(b, {"ge2": 2.0}, ["k"])["ge2"].round(12).item()
    0.2
    """
    b, cnt = pl.col("b").cast(pl.Float64), pl.col("cnt").cast(pl.Float64)
    aggs = [cnt.sum().alias("__pf_s0"), (b * cnt).sum().alias("__pf_s1")]
    finish = []
    s0, mu = pl.col("__pf_s0"), pl.col("__pf_s1") / pl.col("__pf_s0")
    for i, (name, a) in enumerate(alphas.items()):
        part = f"__pf_sa{i}"
        a = float(a)
        if a == 1.0:
            aggs.append((cnt * pl.when(b > 0).then(b * b.log()).otherwise(0.0)).sum().alias(part))
            finish.append(((pl.col(part) - mu * s0 * mu.log()) / (mu * s0)).alias(name))
        elif a == 0.0:
            aggs.append((cnt * b.log()).sum().alias(part))
            finish.append(((s0 * mu.log() - pl.col(part)) / (mu * s0)).alias(name))
        else:
            aggs.append((cnt * b.pow(a)).sum().alias(part))
            finish.append(((pl.col(part) / mu.pow(a) - s0) / (s0 * a * (a - 1.0))).alias(name))
    out = benefits.filter(cnt > 0).group_by(list(by), maintain_order=True).agg(aggs)
    return out.select(*by, *finish)


def jackknife_intervals(
    cells: pl.DataFrame | pl.LazyFrame,
    statistic: Callable[[pl.DataFrame, list[str]], pl.DataFrame],
    *,
    by: Sequence[str] = (),
    bucket: str = "bucket",
    ci: float = 0.95,
    sums: Sequence[str] | None = None,
) -> pl.DataFrame:
    r"""Delete-a-group jackknife intervals over the ``bucket`` key of a clustered cell table.

    For each ``by`` value with ``G`` non-empty buckets, the statistic is recomputed on the table
    minus bucket ``b`` (``θ_(b)``, all replicates in one call, stacked as an extra key), and

    .. math:: v_J = \frac{G-1}{G} \sum_b (\theta_{(b)} - \bar\theta)^2,\quad
       \hat\theta \pm t_{G-1,\,1-\alpha/2} \sqrt{v_J}

    Parameters
    ----------
    cells
        A cell table with a ``bucket`` key column (from ``cluster=``).
    statistic
        ``f(table, keys) -> DataFrame``: computes the quantity (column ``value``) for every
        combination of ``keys`` in ``table`` (a cell table without ``bucket``; ``keys`` = the
        ``by`` columns plus a replicate key). Its other output columns identify rows (e.g.
        ``attribute``, ``group``, ``metric``). An optional ``null_value`` column gives the value
        under H0 for a Wald-t p-value.
    by
        The ``by`` columns.
    bucket
        Name of the bucket column.
    ci
        Confidence level.
    sums
        The additive columns (default: the cell table's count columns, ``*_w2`` included); every
        other column except ``bucket`` is a key.

    Returns
    -------
    pl.DataFrame
        The statistic's columns (estimate from the full table) plus ``value_lo``, ``value_hi``,
        ``se`` (Float64), ``n_buckets`` (Int64), and ``p_value`` (Float64; ``2·P(T_{G−1} > |θ̂ − θ0|/se)``
        when ``null_value`` is given, else null). Null limits with fewer than 2 non-empty buckets
        or an undefined replicate.

    Notes
    -----
    Kott (2001), *Journal of Official Statistics* 17(4). For smooth statistics (rates, differences,
    log ratios, AOD, entropy indices); inconsistent for max/min (Shao & Tu 1995). Coverage at 95%
    with 2 groups × 100 clusters × 10 rows: 94.9–95.6% for between-cluster SD 0–1 on the logit
    scale (Newcombe and the cell bootstrap: 78–90%).

    Examples
    --------
    >>> import polars as pl
    >>> cells = pl.DataFrame({"bucket": [0, 1, 2, 3], "x": [3.0, 5.0, 4.0, 6.0], "n": [10.0, 10.0, 10.0, 10.0]})
    >>> def share(t, keys):
    ...     return t.group_by(keys).agg(value=pl.col("x").sum() / pl.col("n").sum())
    >>> out = jackknife_intervals(cells, share, sums=["x", "n"])
    >>> round(out["value"].item(), 3), out["n_buckets"].item()
    (0.45, 4)
    """
    from polfair.core.passes.counts import COUNT_COLUMNS

    ci = check_ci(ci, required=True)
    by = list(by)
    df = cells.lazy().collect()
    if bucket not in df.columns:
        msg = f"jackknife_intervals: the cell table has no {bucket!r} column (count with cluster= to get one)"
        raise PolfairError(msg)
    if sums is None:
        sums = [c for c in df.columns if c in COUNT_COLUMNS or c.endswith("_w2")]
    sums = list(sums)
    keys = [c for c in df.columns if c not in sums and c != bucket and c not in by]
    group = [*by, *keys]
    full = (
        df.group_by(group, maintain_order=True).agg([pl.col(c).sum() for c in sums])
        if group
        else df.select([pl.col(c).sum() for c in sums])
    )
    per_bucket = df.group_by([*by, bucket, *keys], maintain_order=True).agg([pl.col(c).sum() for c in sums])
    nonempty = per_bucket.group_by([*by, bucket]).agg(pl.lit(1).alias("__pf_one")).select(*by, bucket)
    g_count = (
        nonempty.group_by(by).agg(pl.len().alias("n_buckets")) if by else pl.DataFrame({"n_buckets": [nonempty.height]})
    )
    # replicate b = full minus bucket b (for the by value it belongs to); replicate -1 = full
    rep_keys = nonempty.rename({bucket: _REP}).with_columns(pl.col(_REP).cast(pl.Int32))
    base = full.join(rep_keys, on=by, how="inner") if by else full.join(rep_keys, how="cross")
    minus = per_bucket.rename({bucket: _REP}).with_columns(pl.col(_REP).cast(pl.Int32))
    base = base.join(minus, on=[*by, _REP, *keys], how="left", nulls_equal=True, suffix="__pf_b")
    base = base.with_columns([(pl.col(c) - pl.col(f"{c}__pf_b").fill_null(0)).alias(c) for c in sums]).select(
        *by, _REP, *keys, *sums
    )
    table = pl.concat([full.with_columns(pl.lit(-1, pl.Int32).alias(_REP)).select(*by, _REP, *keys, *sums), base])
    values = statistic(table, [*by, _REP])
    ids = [c for c in values.columns if c not in (*by, _REP, "value", "null_value")]
    est = values.filter(pl.col(_REP) == -1).drop(_REP)
    reps = values.filter(pl.col(_REP) >= 0)
    agg = reps.group_by([*by, *ids], maintain_order=True).agg(
        pl.col("value").cast(pl.Float64).alias("__pf_vals"),
    )
    if by or ids:
        out = est.join(agg, on=[*by, *ids], how="left", nulls_equal=True)
    else:
        out = pl.concat([est, agg], how="horizontal")
    out = (
        out.join(g_count, on=by, how="left", nulls_equal=True)
        if by
        else out.with_columns(pl.lit(g_count["n_buckets"][0], pl.UInt32).alias("n_buckets"))
    )
    # every row at once: the finite replicates' count, mean and spread (list arithmetic in Polars)
    vals = pl.col("__pf_vals").list.eval(pl.element().filter(pl.element().is_finite()))
    stats = out.select(
        vals.list.len().alias("m"), vals.list.mean().alias("mean"),
        vals.list.eval((pl.element() - pl.element().mean()) ** 2).list.sum().alias("ss"),
        pl.col("value").cast(pl.Float64).alias("theta"), pl.col("n_buckets").cast(pl.Float64).alias("g"),
        (pl.col("null_value").cast(pl.Float64) if "null_value" in out.columns else pl.lit(None, pl.Float64)).alias("h0"),
    )  # fmt: skip
    theta, g, m = (stats[c].fill_null(np.nan).to_numpy() for c in ("theta", "g", "m"))
    ss, h0 = stats["ss"].fill_null(np.nan).to_numpy(), stats["h0"].fill_null(np.nan).to_numpy()
    ok = np.isfinite(theta) & (g >= 2) & (m == g)  # every replicate defined
    with np.errstate(invalid="ignore", divide="ignore"):
        se = np.where(ok, np.sqrt((g - 1.0) / g * ss), np.nan)
        tq = special.stdtrit(np.where(ok, g - 1.0, np.nan), 1.0 - (1.0 - ci) / 2.0)
        tail = np.minimum(1.0, 2.0 * special.stdtr(g - 1.0, -np.abs(theta - h0) / se))
        pv = np.where(se == 0.0, np.where(theta == h0, 1.0, 0.0), tail)
    pv = np.where(ok & ~np.isnan(h0), pv, np.nan)
    return out.drop("__pf_vals").with_columns(
        pl.Series("value_lo", theta - tq * se, dtype=pl.Float64, nan_to_null=True),
        pl.Series("value_hi", theta + tq * se, dtype=pl.Float64, nan_to_null=True),
        pl.Series("se", se, dtype=pl.Float64, nan_to_null=True),
        pl.col("n_buckets").cast(pl.Int64),
        pl.Series("p_value", pv, dtype=pl.Float64, nan_to_null=True),
    )
