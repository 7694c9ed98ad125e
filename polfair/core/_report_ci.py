"""The report's interval and test columns (issue 11), as expressions over the report's wide tables.

Internal to :mod:`polfair.core.report`: every function returns, per column family (``value_lo``,
``value_hi``, ``difference_lo``, ..., ``n_eff``, ``ci_method``, ``test``), a mapping metric ->
expression, evaluated on the same wide frame (or in the same aggregation) as the values, so the
intervals cost a few expressions per metric and no second pass. The methods are those of
:mod:`polfair.core.intervals` (its module docstring maps each row kind to its function). Null rules
(``docs/statistics.md`` §5): an interval is null where its point value is null, on counts and
``n_missing``, and (difference, ratio and test) on the reference group's own row.

An underscore module: internal, not public API.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import polars as pl

from polfair.core import intervals as iv
from polfair.core.metrics import METRICS, Counts, Disparity

__all__ = [
    "CI_CATS", "CI_FLOATS", "CiOptions", "Families", "attribute_aggs", "attribute_tables", "group_families", "neff_columns",
    "population_edf_aggs", "population_edf_table", "population_families",
]  # fmt: skip

#: Float interval families, in report column order.
CI_FLOATS = ("value_lo", "value_hi", "difference_lo", "difference_hi", "ratio_lo", "ratio_hi",
             "p_value", "p_value_adjusted", "n_eff")  # fmt: skip
#: Categorical families.
CI_CATS = ("ci_method", "test")

Families = dict[str, dict[str, pl.Expr]]


@dataclass(frozen=True)
class CiOptions:
    """The report's statistics options (validated)."""

    ci: float
    weighted: bool
    n_boot: int = 200
    seed: int = 0
    p_adjust: str | None = "bh"
    families: Families = field(default_factory=dict)


def _empty() -> Families:
    return {f: {} for f in (*CI_FLOATS, *CI_CATS)}


def _rates(names: Sequence[str]) -> list[str]:
    return [m for m in names if METRICS[m].is_rate]


def _score(weighted: bool) -> str:
    return "score_ess" if weighted else "score"


def _generalized(m: str) -> bool:
    return m.startswith("generalized_")


def neff_columns(names: Sequence[str]) -> list[pl.Expr]:
    """``<m>__neff``: each rate's effective size (Kish; = the count unweighted), materialised once
    so the interval expressions read plain columns (small expression trees).
    """
    return [iv.rate_inputs(m).n.alias(f"{m}__neff") for m in _rates(names)]


def _rate(m: str) -> iv.Rate:
    return iv.Rate(pl.col(m), pl.col(f"{m}__neff"))


def _ref_rate(m: str) -> iv.Rate:
    return iv.Rate(pl.col(f"{m}__ref"), pl.col(f"{m}__refn"))


def group_families(
    metric_names: Sequence[str],
    disparities: Sequence[Disparity],
    *,
    opts: CiOptions,
    own: Callable[[str], pl.Expr],
    mode: pl.Expr,
    modes: set[str],
    sk: Sequence[str],
    ib: Sequence[str],
) -> Families:
    """Interval columns of the group rows, over the group table joined with the reference table.

    ``own`` flags a group that is its own reference (its comparisons are null); ``mode`` is the
    reference mode of the row's attribute set; the reference's rate ``<m>__ref`` and effective size
    ``<m>__refn`` are columns; for ``reference="overall"`` the population's counts are ``__pop_<c>``.
    """
    z = iv.z_value(opts.ci)
    out = _empty()
    diff: dict[str, iv.Interval] = {}
    ratio: dict[str, iv.Interval] = {}
    test: dict[str, iv.Test] = {}
    g_rate: dict[str, iv.Rate] = {}
    pop = Counts(lambda c: pl.col(f"__pop_{c}"))
    for m in _rates(metric_names):
        g = _rate(m)
        g_rate[m] = g
        r = _ref_rate(m)
        metric = METRICS[m]
        wl = iv.wilson_interval(g, z)
        out["value_lo"][m], out["value_hi"][m], out["n_eff"][m] = wl.lo, wl.hi, g.n
        d, q = iv.newcombe_interval(g, r, z), iv.mover_ratio_interval(g, r, z)
        t = iv.two_proportion_test(g, r, weighted=opts.weighted)
        mine = own(m)
        dl, dh, ql, qh, tp, tt = d.lo, d.hi, q.lo, q.hi, t.p_value, t.test
        if "overall" in modes:  # the group is part of the population: compare it with the rest
            num, den = metric.numerator(Counts()), metric.denominator(Counts())  # type: ignore[misc]
            den2 = metric.denominator(Counts(lambda c: pl.col(f"{c}_w2")))  # type: ignore[misc]
            pden2 = metric.denominator(Counts(lambda c: pl.col(f"__pop_{c}_w2")))  # type: ignore[misc]
            c, f = iv.complement_rate(num, den, den2, metric.numerator(pop), metric.denominator(pop), pden2)  # type: ignore[misc]
            od, oq = iv.overall_difference_interval(g, c, f, z), iv.overall_ratio_interval(g, c, f, z)
            ot = iv.two_proportion_test(g, c, weighted=opts.weighted)
            over = mode == "overall"
            dl, dh = pl.when(over).then(od.lo).otherwise(dl), pl.when(over).then(od.hi).otherwise(dh)
            ql, qh = pl.when(over).then(oq.lo).otherwise(ql), pl.when(over).then(oq.hi).otherwise(qh)
            tp, tt = pl.when(over).then(ot.p_value).otherwise(tp), pl.when(over).then(ot.test).otherwise(tt)
        if "best" in modes:  # the best group is chosen from the data: projection, no test
            bd, bq = iv.best_reference_intervals(g, ci=opts.ci, higher_is_better=bool(metric.higher_is_better),
                                                 over=list(sk))  # fmt: skip
            best = mode == "best"
            dl, dh = pl.when(best).then(bd.lo).otherwise(dl), pl.when(best).then(bd.hi).otherwise(dh)
            ql, qh = pl.when(best).then(bq.lo).otherwise(ql), pl.when(best).then(bq.hi).otherwise(qh)
            tp, tt = pl.when(~best).then(tp), pl.when(~best).then(tt)
        diff[m] = iv.Interval(pl.when(~mine).then(dl), pl.when(~mine).then(dh))
        ratio[m] = iv.Interval(pl.when(~mine).then(ql), pl.when(~mine).then(qh))
        test[m] = iv.Test(pl.when(~mine).then(tp), pl.when(~mine).then(tt))
        is_best = mode == "best"
        ok_d, ok_r = (pl.col(m) - pl.col(f"{m}__ref")).is_not_null(), pl.col(f"{m}__ref") > 0
        out["difference_lo"][m] = pl.when(ok_d).then(diff[m].lo)
        out["difference_hi"][m] = pl.when(ok_d).then(diff[m].hi)
        out["ratio_lo"][m] = pl.when(ok_r & pl.col(m).is_not_null()).then(ratio[m].lo)
        out["ratio_hi"][m] = pl.when(ok_r & pl.col(m).is_not_null()).then(ratio[m].hi)
        gen = _generalized(m)
        out["p_value"][m] = None if gen else test[m].p_value  # type: ignore[assignment]
        out["test"][m] = None if gen else test[m].test  # type: ignore[assignment]
        label = "bound" if gen else _score(opts.weighted)
        out["ci_method"][m] = (
            pl.lit(label) if gen else pl.when(is_best).then(pl.lit("projection")).otherwise(pl.lit(label))
        )
    for d_ in disparities:
        v = pl.col(d_.name)
        parts = d_.rates
        base = parts[0]
        if len(parts) == 1:  # a rate's difference or ratio, named
            iv_ = ratio[base] if d_.name == "disparate_impact" or d_.name.endswith("_ratio") else diff[base]
            lo, hi, p_, t_ = iv_.lo, iv_.hi, test[base].p_value, test[base].test
            method: pl.Expr = out["ci_method"][base]
        else:
            pairs = [(g_rate[m], _ref_rate(m)) for m in parts]
            if d_.name in ("average_odds_difference", "average_predictive_value_difference"):
                it, method = iv.average_difference_interval(pairs, z), pl.lit("mover")
            elif d_.name == "average_abs_odds_difference":
                it, method = iv.average_abs_difference_interval(pairs, opts.ci), pl.lit("projection")
            else:  # equalized odds, generalized equalized odds
                it, method = iv.max_abs_difference_interval(pairs, opts.ci), pl.lit("projection")
            lo, hi = it.lo, it.hi
            fixed = ~own(base) & (mode != "best") & (mode != "overall")
            lo, hi = pl.when(fixed).then(lo), pl.when(fixed).then(hi)
            if any(_generalized(m) for m in parts):
                p_, t_, method = pl.lit(None, pl.Float64), pl.lit(None, pl.String), pl.lit("bound")
            else:
                t2 = iv.chi2_2df_test(pairs)
                p_, t_ = pl.when(fixed).then(t2.p_value), pl.when(fixed).then(t2.test)
        out["value_lo"][d_.name], out["value_hi"][d_.name] = (
            pl.when(v.is_not_null()).then(lo),
            pl.when(v.is_not_null()).then(hi),
        )
        out["p_value"][d_.name], out["test"][d_.name] = p_, t_
        out["n_eff"][d_.name] = g_rate[base].n
        out["ci_method"][d_.name] = pl.when(v.is_not_null()).then(method)
    # Benjamini–Hochberg within (by value, metric): applied to the evaluated p-values by the caller
    return {fam: {k: e for k, e in exprs.items() if e is not None} for fam, exprs in out.items()}


def _edf_interval(on: str, ci: float, weighted: bool) -> iv.Interval:
    c = pl.col
    pos = c("tp") + (c("fn") if on == "labels" else c("fp"))
    tot = c("tp") + c("fn") + c("fp") + c("tn")
    tot2 = c("tp_w2") + c("fn_w2") + c("fp_w2") + c("tn_w2") if weighted else None
    return iv.edf_interval(pos, tot, tot2, ci)


_EDF = "smoothed_empirical_differential_fairness"


def attribute_aggs(
    metric_names: Sequence[str], *, opts: CiOptions, has_predictions: bool, key: pl.Expr
) -> tuple[list[pl.Expr], Families]:
    """Aggregations (over the group rows of one attribute set and ``by`` value) for the interval
    columns of the attribute rows, and the families reading their results.
    """
    aggs: list[pl.Expr] = []
    out = _empty()
    rates = _rates(metric_names)
    for m in rates:  # limits come from attribute_tables (joined on the attribute rows)
        for fam, kind in zip(("difference_lo", "difference_hi", "ratio_lo", "ratio_hi"), ("dlo", "dhi", "rlo", "rhi")):
            out[fam][m] = pl.col(f"{m}__{kind}")
        out["ci_method"][m] = pl.when(pl.col(f"{m}__d").is_not_null()).then(pl.lit("projection"))
    tested = [m for m in rates if not _generalized(m)]
    for m in tested:  # homogeneity tests: columns <m>__tp/__tt from attribute_tables
        out["p_value"][m] = pl.when(pl.col(f"{m}__d").is_not_null()).then(pl.col(f"{m}__tp"))
        out["test"][m] = pl.when(pl.col(f"{m}__d").is_not_null()).then(pl.col(f"{m}__tt"))
    if has_predictions:
        for name, m in (
            ("demographic_parity_difference", "selection_rate"),
            ("demographic_parity_ratio", "selection_rate"),
        ):
            kind = "d" if name.endswith("difference") else "r"
            out["value_lo"][name], out["value_hi"][name] = pl.col(f"{m}__{kind}lo"), pl.col(f"{m}__{kind}hi")
            out["p_value"][name], out["test"][name] = out["p_value"][m], out["test"][m]
            out["ci_method"][name] = pl.when(pl.col(f"{m}__{kind}").is_not_null()).then(pl.lit("projection"))
        for name, kind in (("equalized_odds_difference", "d"), ("equalized_odds_ratio", "r")):
            out["value_lo"][name], out["value_hi"][name] = pl.col(f"__pf_eo_{kind}lo"), pl.col(f"__pf_eo_{kind}hi")
            ok = pl.col(name).is_not_null()
            out["p_value"][name] = pl.when(ok).then(pl.col("equalized_odds__tp"))
            out["test"][name] = pl.when(ok).then(pl.col("equalized_odds__tt"))
            out["ci_method"][name] = pl.when(ok).then(pl.lit("projection"))
    for _, name in _edf_names(has_predictions):
        ok = pl.col(name).is_not_null()
        out["value_lo"][name], out["value_hi"][name] = (
            pl.when(ok).then(pl.col(f"{name}__lo")),
            pl.when(ok).then(pl.col(f"{name}__hi")),
        )
        out["ci_method"][name] = pl.when(ok).then(pl.lit("projection"))
    return aggs, out


def _edf_names(has_predictions: bool) -> list[tuple[str, str]]:
    return [("labels", _EDF), ("predictions", f"{_EDF}_predictions")][: 2 if has_predictions else 1]


def attribute_tables(
    rows: pl.LazyFrame,
    idx: Sequence[str],
    metric_names: Sequence[str],
    *,
    opts: CiOptions,
    has_predictions: bool,
    key: pl.Expr | None = None,
) -> pl.LazyFrame:
    """The attribute rows' projection limits, one row per (by, attribute set): ``<m>__dlo/dhi/rlo/rhi``
    of every rate's spread, ``__pf_eo_*`` of fairlearn's equalized odds and ``<edf>__lo/hi``; with
    ``key`` (naming the attribute row, seeds the Monte Carlo tests) also the homogeneity tests
    ``<m>__tp/__tt`` (``equalized_odds__tp/__tt`` for TPR and FPR together).

    Uses the vectorised frame forms of :mod:`polfair.core.intervals` (:func:`~polfair.core.intervals.spread_table`,
    :func:`~polfair.core.intervals.equalized_odds_spread_table`, :func:`~polfair.core.intervals.edf_table`):
    a few plain aggregations for all families at once, where one aggregation expression per family
    would cost Polars a large plan each. ``rows`` are the group rows with ``<m>__neff`` columns.
    """
    keys = list(idx)
    names = ("difference_lo", "difference_hi", "ratio_lo", "ratio_hi")
    rows = rows.collect().lazy()  # read by every table below: evaluate once
    out = rows.select(keys).unique(maintain_order=True)
    parts = []
    rates = _rates(metric_names)
    if rates:  # every rate's spreads in ONE table (families: keys + metric), then one column set per rate
        metric = "__pf_metric"
        long = pl.concat([rows.select(*keys, pl.lit(m).alias(metric), pl.col(m).cast(pl.Float64).alias("__pf_p"),
                                      pl.col(f"{m}__neff").cast(pl.Float64).alias("__pf_n")) for m in rates])  # fmt: skip
        spreads = iv.spread_table(long, by=[*keys, metric], p="__pf_p", n="__pf_n", ci=opts.ci).collect()
        for m in rates:
            parts.append(
                spreads.lazy().filter(pl.col(metric) == m)
                .select(*keys, *[pl.col(c).alias(f"{m}__{k}") for c, k in zip(names, ("dlo", "dhi", "rlo", "rhi"))])
            )  # fmt: skip
    if has_predictions:
        t = iv.equalized_odds_spread_table(rows, by=keys, tpr=("true_positive_rate", "true_positive_rate__neff"),
                                           fpr=("false_positive_rate", "false_positive_rate__neff"), ci=opts.ci)  # fmt: skip
        parts.append(
            t.select(*keys, *[pl.col(c).alias(f"__pf_eo_{k}") for c, k in zip(names, ("dlo", "dhi", "rlo", "rhi"))])
        )
    c = pl.col
    tot = c("tp") + c("fn") + c("fp") + c("tn")
    tot2 = c("tp_w2") + c("fn_w2") + c("fp_w2") + c("tn_w2") if opts.weighted else None
    for on, name in _edf_names(has_predictions):
        pos = c("tp") + (c("fn") if on == "labels" else c("fp"))
        t = iv.edf_table(rows, by=keys, positives=pos, total=tot, total_w2=tot2, ci=opts.ci)
        parts.append(t.select(*keys, pl.col("value_lo").alias(f"{name}__lo"), pl.col("value_hi").alias(f"{name}__hi")))
    if key is not None:
        fams: dict[str, list[tuple[str, str]]] = {
            m: [(m, f"{m}__neff")] for m in _rates(metric_names) if not _generalized(m)
        }
        if has_predictions:
            fams["equalized_odds"] = [(m, f"{m}__neff") for m in ("true_positive_rate", "false_positive_rate")]
        tests = iv.homogeneity_table(rows, by=keys, families=fams, key=key, weighted=opts.weighted, seed=opts.seed,
                                     n_boot=opts.n_boot)  # fmt: skip
        parts.append(tests.lazy())
    for part in parts:
        out = out.join(part, on=keys, how="left", nulls_equal=True, maintain_order="left")
    return out


def population_families(metric_names: Sequence[str], *, opts: CiOptions) -> Families:
    """Interval columns of the population rows that are expressions over the population table."""
    z = iv.z_value(opts.ci)
    out = _empty()
    for m in _rates(metric_names):
        g = _rate(m)
        wl = iv.wilson_interval(g, z)
        out["value_lo"][m], out["value_hi"][m], out["n_eff"][m] = wl.lo, wl.hi, g.n
        out["ci_method"][m] = pl.lit("bound" if _generalized(m) else _score(opts.weighted))
    return out


def population_edf_aggs(has_predictions: bool, opts: CiOptions) -> tuple[list[pl.Expr], Families]:
    """EDF over the full intersection's cells and bias amplification (EDFs at level 1 − α/2 each):
    the families reading the columns of :func:`population_edf_table` (no aggregations of their own).
    """
    out = _empty()
    for _, name in _edf_names(has_predictions):
        ok = pl.col(name).is_not_null()
        out["value_lo"][name], out["value_hi"][name] = (
            pl.when(ok).then(pl.col(f"{name}__lo")),
            pl.when(ok).then(pl.col(f"{name}__hi")),
        )
        out["ci_method"][name] = pl.when(ok).then(pl.lit("projection"))
    if has_predictions:
        name = "differential_fairness_bias_amplification"
        d = iv.difference_of_intervals(iv.Interval(pl.col(f"{_EDF}_predictions__hlo"), pl.col(f"{_EDF}_predictions__hhi")),
                                       iv.Interval(pl.col(f"{_EDF}__hlo"), pl.col(f"{_EDF}__hhi")))  # fmt: skip
        ok = pl.col(name).is_not_null()
        out["value_lo"][name], out["value_hi"][name] = pl.when(ok).then(d.lo), pl.when(ok).then(d.hi)
        out["ci_method"][name] = pl.when(ok).then(pl.lit("projection"))
    return [], out


def population_edf_table(
    cells: pl.LazyFrame, by: Sequence[str], has_predictions: bool, opts: CiOptions
) -> pl.LazyFrame:
    """Per ``by`` value: the EDF projection limits over the cells (``<edf>__lo/hi``) and at level
    1 − α/2 (``<edf>__hlo/hhi``, for bias amplification), via :func:`polfair.core.intervals.edf_table`.
    """
    keys = list(by)
    c = pl.col
    tot = c("tp") + c("fn") + c("fp") + c("tn")
    tot2 = c("tp_w2") + c("fn_w2") + c("fp_w2") + c("tn_w2") if opts.weighted else None
    half = 1.0 - (1.0 - opts.ci) / 2.0
    out = cells.select(keys).unique(maintain_order=True)
    for on, name in _edf_names(has_predictions):
        pos = c("tp") + (c("fn") if on == "labels" else c("fp"))
        for level, lo, hi in ((opts.ci, "lo", "hi"), (half, "hlo", "hhi")):
            t = iv.edf_table(cells, by=keys, positives=pos, total=tot, total_w2=tot2, ci=level)
            t = t.select(*keys, c("value_lo").alias(f"{name}__{lo}"), c("value_hi").alias(f"{name}__{hi}"))
            out = out.join(t, on=keys, how="left", nulls_equal=True, maintain_order="left")
    return out
