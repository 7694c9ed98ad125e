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

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from polfair.core import intervals as iv
from polfair.core._args import SMALL_COLLECT, SMALL_ROWS, collect_options
from polfair.core.intervals import homogeneity as ivh
from polfair.core.intervals import projections as ivp
from polfair.core.intervals import proportions as ivr
from polfair.core.metrics import METRICS, Counts, Disparity

__all__ = [
    "CI_CATS", "CI_FLOATS", "CiOptions", "Families", "adjusted_p_values", "attribute_intervals", "group_tables",
    "neff_columns", "population_intervals",
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
    return list(_neff_columns(tuple(names)))


@functools.lru_cache(maxsize=16)
def _neff_columns(names: tuple[str, ...]) -> tuple[pl.Expr, ...]:
    return tuple(iv.rate_inputs(m).n.alias(f"{m}__neff") for m in _rates(names))


_F64 = pl.Float64
_SEP = "\x1f"


def adjusted_p_values(res: pl.DataFrame, metrics: Sequence[str], over: Sequence[str], method: str) -> list[pl.Series]:
    """``p_value_adjusted`` U+001F ``<m>`` for each metric: its ``p_value`` U+001F ``<m>`` column adjusted
    (:func:`~polfair.core.intervals.p_adjust`) within ``over`` (the by values), the family being
    (by value, metric) within these rows (another row kind is another family).

    On a small table evaluated ONCE over the p-values stacked in long form (one block of rows per
    metric, the window ``over`` + metric), not as one window expression per metric (fewer
    expressions to plan). On a large one (more than :data:`~polfair.core._args.SMALL_ROWS` rows)
    each distinct p-value column once (a named disparity has its rate's test: half the columns
    repeat one), for BH and Holm by :func:`_adjust_sorted`: one sort per column instead of Polars'
    sort and rank (0.5 s -> 0.1 s for 34 columns of 180,000 groups). The same windows and
    arithmetic either way (the order of tied p-values does not change their adjusted value), so
    the same values; a test checks both paths.
    """
    h, k = res.height, len(metrics)
    if h > SMALL_ROWS:
        sorted_ok = method in ("bh", "holm")  # "by" scales by a harmonic sum: Polars' own, below
        seg = np.zeros(h, dtype=np.int64)
        if over and sorted_ok:  # the by values' codes (first-appearance order)
            first = res.select(over).with_row_index("__pf_r").select(pl.col("__pf_r").first().over(over))
            seg = np.unique(first.to_series().to_numpy(), return_inverse=True)[1].astype(np.int64)
        done: list[tuple[pl.Series, pl.Series]] = []
        out = []
        for m in metrics:
            p = res[f"p_value{_SEP}{m}"].cast(_F64)
            same = next((adj for q, adj in done if q.equals(p)), None)
            if same is None:
                values = p.to_numpy()
                if sorted_ok and np.count_nonzero(np.isnan(values)) == p.null_count():
                    same = pl.Series(_adjust_sorted(values, seg, method), nan_to_null=True)
                else:  # "by", or a NaN p-value (never produced by the report's tests): the window expression
                    frame = res.select(over).with_columns(p.alias("__pf_p"))
                    same = frame.select(iv.p_adjust(pl.col("__pf_p"), method).over(over)).to_series()  # type: ignore[arg-type]
                done.append((p, same))
            out.append(same.alias(f"p_value_adjusted{_SEP}{m}"))
        return out
    long = res.select(over)[np.tile(np.arange(h), k)].with_columns(
        pl.Series("__pf_padj_m", np.repeat(np.arange(k, dtype=np.int32), h)),
        pl.concat([res[f"p_value{_SEP}{m}"] for m in metrics]).alias("__pf_padj_p"),
    )
    adj = long.select(iv.p_adjust(pl.col("__pf_padj_p"), method).over([*over, "__pf_padj_m"])).to_series()  # type: ignore[arg-type]
    return [adj.slice(i * h, h).alias(f"p_value_adjusted{_SEP}{m}") for i, m in enumerate(metrics)]


def _adjust_sorted(p: np.ndarray, seg: np.ndarray, method: str) -> np.ndarray:
    """Benjamini–Hochberg (``"bh"``) or Holm adjusted p-values of ``p`` (NaN: untested, stays NaN)
    within each segment ``seg`` (Int64 codes): :func:`~polfair.core.intervals.p_adjust`'s arithmetic
    (``p_(i)·m/i`` with a reverse cumulative minimum, or ``(m − i + 1)·p_(i)`` with a cumulative
    maximum; clipped at 1) over the p-values sorted within their segment.
    """
    out = np.full(len(p), np.nan)
    rows = np.flatnonzero(~np.isnan(p))  # only the tested rows are sorted (numpy sorts NaN slowly)
    if not len(rows):
        return out
    order = rows[np.argsort(p[rows])]  # the order of ties does not change their adjusted value
    if seg.any():
        order = order[np.argsort(seg[order], kind="stable")]
    s, sg = p[order], seg[order]
    n = len(s)
    starts = np.flatnonzero(np.r_[True, sg[1:] != sg[:-1]])
    size = np.diff(np.r_[starts, n])
    m = np.repeat(size, size).astype(np.float64)
    idx = (np.arange(n) - np.repeat(starts, size) + 1).astype(np.float64)
    if method == "holm":
        adj = _segment_scan((m - idx + 1.0) * s, sg, len(starts), "max")
    else:
        adj = _segment_scan((s * m / idx)[::-1], sg[::-1], len(starts), "min")[::-1]
    out[order] = np.minimum(adj, 1.0)
    return out


def _segment_scan(x: np.ndarray, seg: np.ndarray, segments: int, how: str) -> np.ndarray:
    """Cumulative min / max of ``x`` restarting at each change of ``seg`` (``segments`` runs)."""
    if segments == 1:
        return (np.minimum if how == "min" else np.maximum).accumulate(x)
    e = pl.col("x").cum_min() if how == "min" else pl.col("x").cum_max()
    return pl.DataFrame({"x": x, "s": seg}).select(e.over("s")).to_series().to_numpy()


class _Columns:
    """Interval columns gathered per family, as the ``*_intervals`` functions and :func:`group_tables`
    return them: Series named ``<family>`` U+001F ``<metric>``, and each family's metric names in order.
    """

    def __init__(self) -> None:
        self.series: dict[str, pl.Series] = {}
        self.names: dict[str, list[str]] = {fam: [] for fam in (*CI_FLOATS, *CI_CATS)}

    def put(self, fam: str, metric: str, v: pl.Series) -> None:
        self.series[f"{fam}{_SEP}{metric}"] = v
        self.names[fam].append(metric)

    def get(self, fam: str, metric: str) -> pl.Series:
        return self.series[f"{fam}{_SEP}{metric}"]

    def result(self) -> tuple[pl.DataFrame, dict[str, list[str]]]:
        return pl.DataFrame([v.alias(n) for n, v in self.series.items()]), {f: ms for f, ms in self.names.items() if ms}


def _keyed_rates(keys: np.ndarray, p: pl.Series, n: pl.Series, ci: np.ndarray, joint: np.ndarray) -> pl.DataFrame:
    """Rows of rates tagged by the family of limits they belong to: ``key`` (Int64 in
    ``[0, len(ci))``), ``p``, ``n``, ``ok`` (the rate is defined) and ``z``, the Šidák critical value
    of the row's key, ``z_value(ci[key], k·joint[key])`` with ``k`` the key's defined rows and
    ``joint`` the number of such families holding jointly (null where ``k`` is 0). One quantile per
    distinct (level, ``k``), broadcast by key: no window over the rows.
    """
    long = pl.DataFrame([pl.Series("key", keys), p.alias("p"), n.alias("n")])
    long = long.with_columns(ivr.rate_defined(iv.Rate(pl.col("p"), pl.col("n"))).alias("ok"))
    k = np.bincount(keys, weights=long["ok"].to_numpy(), minlength=len(ci)).astype(np.int64) * joint
    z = np.full(len(ci), np.nan)
    for level in np.unique(ci).tolist():
        mine = ci == level
        ks, at = np.unique(k[mine], return_inverse=True)
        z[mine] = np.array([iv.z_value(level, int(v)) if v else np.nan for v in ks.tolist()])[at]
    return long.with_columns(pl.Series("z", z[keys], nan_to_null=True))


def _hib(m: str) -> bool:
    """Whether "best" is the largest value (``higher_is_better`` True or None, as the reference picks it)."""
    return METRICS[m].higher_is_better in (True, None)


def group_tables(
    wide: pl.DataFrame,
    metric_names: Sequence[str],
    disparities: Sequence[Disparity],
    *,
    opts: CiOptions,
    mode: str,
    modes: set[str],
    sk: Sequence[str],
    priv: str,
    group_col: str,
) -> tuple[pl.DataFrame, dict[str, list[str]]]:
    """The group rows' interval columns, evaluated in long form.

    Each method is written ONCE over a frame with one row per (rate, group) (and one per
    (two-part disparity, group)), not once per metric over the wide frame: Polars' cost on these
    small frames is per expression. The long frames are stacked from the wide columns.

    Per rate: Wilson (``value_lo/hi``; ``n_eff`` the Kish size), Newcombe (``difference``),
    MOVER-R (``ratio``) and the N-1 chi2 / Fisher test against the reference; with
    ``reference="overall"`` the comparison with the rest of the population
    (:func:`~polfair.core.intervals.overall_difference_interval`); with ``"best"`` the projection
    intervals of :func:`~polfair.core.intervals.best_reference_intervals` and no test. Generalized
    rates get limits but no test (``ci_method = "bound"``). Named one-rate disparities take their
    rate's difference or ratio interval and test; two-part ones the MOVER sum (average odds,
    average predictive value), or the projections (``max``/mean of absolute differences) and the
    2-df chi2 test. A group that is its own reference (its set's mode is "privileged" and it is
    flagged ``priv``, or its label is the reference's) has null comparisons; so do the "best" and
    "overall" modes for two-part disparities. Differences are null where the point difference is,
    ratios where the reference rate is 0; disparity limits where the disparity is null.

    ``wide`` is the group table joined with the reference table (``<m>``, ``<m>__neff``,
    ``<m>__ref``, ``<m>__refn``, ``<m>__refname``, the named disparities, ``mode``, ``priv``,
    ``group_col``, the ``sk`` keys; ``__pop_<count>`` for ``reference="overall"``).

    Returns a frame aligned with ``wide`` with columns ``<family>`` + U+001F + ``<metric>`` and
    the metric names per family.
    """
    h = wide.height
    z = iv.z_value(opts.ci)
    rates = _rates(metric_names)
    if not rates:
        return pl.DataFrame(), {}
    over_best = [*sk, "__m"]
    c = pl.col
    k_r = len(rates)

    def stack(fmt: str, dtype: pl.DataType | None = None) -> pl.Series:
        return pl.concat([wide[fmt.format(m)].cast(dtype or _F64) for m in rates]).rename("x")

    def flags(fn: Callable[[str], bool]) -> pl.Series:
        return pl.Series(np.repeat(np.array([fn(m) for m in rates], dtype=bool), h))

    tiled = wide.select(*sk, group_col, c(mode).cast(pl.String).alias("mode"), priv)[np.tile(np.arange(h), k_r)]
    data = {
        "__m": pl.Series(np.repeat(np.arange(k_r, dtype=np.int32), h)),
        "p": stack("{}"), "n": stack("{}__neff"), "pr": stack("{}__ref"), "nr": stack("{}__refn"),
        "refname": stack("{}__refname", pl.String()), "gen": flags(_generalized), "hib": flags(_hib),
    }  # fmt: skip
    long_in = tiled.hstack([v.alias(k) for k, v in data.items()])
    if "overall" in modes:
        pop = Counts(lambda x: pl.col(f"__pop_{x}"))
        exprs = []
        for m in rates:
            metric = METRICS[m]
            num, den = metric.numerator(Counts()), metric.denominator(Counts())  # type: ignore[misc]
            den2 = metric.denominator(Counts(lambda x: pl.col(f"{x}_w2")))  # type: ignore[misc]
            pden2 = metric.denominator(Counts(lambda x: pl.col(f"__pop_{x}_w2")))  # type: ignore[misc]
            parts = (num, den, den2, metric.numerator(pop), metric.denominator(pop), pden2)  # type: ignore[misc]
            exprs += [e.cast(_F64).alias(f"{m}\x1f{i}") for i, e in enumerate(parts)]
        comp = wide.select(exprs)
        long_in = long_in.hstack(
            [pl.concat([comp[f"{m}\x1f{i}"] for m in rates]).alias(f"__c{i}") for i in range(6)]
        )
    st = iv.Stager()
    with st.active():
        g, r = iv.Rate(c("p"), c("n")), iv.Rate(c("pr"), c("nr"))
        wl = iv.wilson_interval(g, z)
        d, q = iv.newcombe_interval(g, r, z), iv.mover_ratio_interval(g, r, z)
        t = iv.two_proportion_test(g, r, weighted=opts.weighted)
        dl, dh, ql, qh, tp, tt = d.lo, d.hi, q.lo, q.hi, t.p_value, t.test
        if "overall" in modes:  # the group is part of the population: compare it with the rest
            cr_, f_ = iv.complement_rate(*[c(f"__c{i}") for i in range(6)])
            od, oq = iv.overall_difference_interval(g, cr_, f_, z), iv.overall_ratio_interval(g, cr_, f_, z)
            ot = iv.two_proportion_test(g, cr_, weighted=opts.weighted)
            o = c("mode") == "overall"
            dl, dh = pl.when(o).then(od.lo).otherwise(dl), pl.when(o).then(od.hi).otherwise(dh)
            ql, qh = pl.when(o).then(oq.lo).otherwise(ql), pl.when(o).then(oq.hi).otherwise(qh)
            tp, tt = pl.when(o).then(ot.p_value).otherwise(tp), pl.when(o).then(ot.test).otherwise(tt)
        if "best" in modes:  # the best group is chosen from the data: projection, no test
            hi_d, hi_q = iv.best_reference_intervals(g, ci=opts.ci, higher_is_better=True, over=over_best)
            lo_d, lo_q = iv.best_reference_intervals(g, ci=opts.ci, higher_is_better=False, over=over_best)
            hib = c("hib")
            b = c("mode") == "best"
            dl = pl.when(b).then(pl.when(hib).then(hi_d.lo).otherwise(lo_d.lo)).otherwise(dl)
            dh = pl.when(b).then(pl.when(hib).then(hi_d.hi).otherwise(lo_d.hi)).otherwise(dh)
            ql = pl.when(b).then(pl.when(hib).then(hi_q.lo).otherwise(lo_q.lo)).otherwise(ql)
            qh = pl.when(b).then(pl.when(hib).then(hi_q.hi).otherwise(lo_q.hi)).otherwise(qh)
            tp, tt = pl.when(~b).then(tp), pl.when(~b).then(tt)
        privileged = c("mode") == "privileged"
        mine = (privileged & c(priv)) | (~privileged & (c(group_col).cast(pl.String) == c("refname")).fill_null(False))
        keep = ~mine
        dl, dh, ql, qh = [pl.when(keep).then(e) for e in (dl, dh, ql, qh)]
        tp, tt = pl.when(keep).then(tp), pl.when(keep).then(tt)
        gen = c("gen")
        e = iv.CI_METHOD_DTYPE
        method = pl.when(gen).then(pl.lit("bound", e)).otherwise(
            pl.when(c("mode") == "best").then(pl.lit("projection", e)).otherwise(pl.lit(_score(opts.weighted), e))
        )
        okd, okr = (c("p") - c("pr")).is_not_null(), (c("pr") > 0) & c("p").is_not_null()
        outs = {
            "value_lo": wl.lo, "value_hi": wl.hi, "n_eff": c("n"),
            "difference_lo": pl.when(okd).then(dl), "difference_hi": pl.when(okd).then(dh),
            "ratio_lo": pl.when(okr).then(ql), "ratio_hi": pl.when(okr).then(qh),
            "p_value": pl.when(~gen).then(tp), "test": pl.when(~gen).then(tt), "ci_method": method,
            "__dl": dl, "__dh": dh, "__ql": ql, "__qh": qh, "__tp": tp, "__tt": tt, "__mine": mine,
        }  # fmt: skip
    long = st.apply(long_in.lazy()).select([e.alias(k) for k, e in outs.items()]).collect(**collect_options(long_in.height))
    cols = _Columns()
    fams = [f for f in (*CI_FLOATS, *CI_CATS) if f in outs]

    def block(name: str, i: int) -> pl.Series:
        return long[name].slice(i * h, h)

    for i, m in enumerate(rates):
        for fam in fams:
            cols.put(fam, m, block(fam, i))
    # ---- named disparities of one rate: the rate's comparison, where the disparity is defined ----
    for x in disparities:
        if len(x.rates) != 1:
            continue
        i = rates.index(x.rates[0])
        kind = "q" if x.name == "disparate_impact" or x.name.endswith("_ratio") else "d"
        undefined = wide[x.name].is_null()
        got = {
            "value_lo": block(f"__{kind}l", i).set(undefined, None), "value_hi": block(f"__{kind}h", i).set(undefined, None),
            "p_value": block("__tp", i), "test": block("__tt", i), "n_eff": block("n_eff", i),
            "ci_method": block("ci_method", i).set(undefined, None),
        }  # fmt: skip
        for fam, v in got.items():
            cols.put(fam, x.name, v)
    # ---- two-part disparities: one block of rows per disparity -------------------------------
    multi = [x for x in disparities if len(x.rates) > 1]
    if multi:
        kinds = {"average_odds_difference": 0, "average_predictive_value_difference": 0, "average_abs_odds_difference": 1}

        def stack2(fmt: str, j: int) -> pl.Series:
            return pl.concat([wide[fmt.format(x.rates[j])].cast(_F64) for x in multi])

        def from_rates(name: str) -> pl.Series:
            return pl.concat([block(name, rates.index(x.rates[0])) for x in multi])

        data2 = {
            **{f"{a}{j + 1}": stack2(fmt, j) for j in (0, 1)
               for a, fmt in (("p", "{}"), ("n", "{}__neff"), ("pr", "{}__ref"), ("nr", "{}__refn"))},
            "mine": from_rates("__mine"), "mode": pl.concat([tiled["mode"].head(h)] * len(multi)),
            "v": pl.concat([wide[x.name].cast(_F64) for x in multi]),
            "kind": pl.Series(np.repeat(np.array([kinds.get(x.name, 2) for x in multi], dtype=np.int32), h)),
            "gen": pl.Series(np.repeat(np.array([any(_generalized(m) for m in x.rates) for x in multi], dtype=bool), h)),
        }  # fmt: skip
        st2 = iv.Stager()
        with st2.active():
            pairs = [(iv.Rate(c("p1"), c("n1")), iv.Rate(c("pr1"), c("nr1"))),
                     (iv.Rate(c("p2"), c("n2")), iv.Rate(c("pr2"), c("nr2")))]  # fmt: skip
            avg = iv.average_difference_interval(pairs, z)
            aabs = iv.average_abs_difference_interval(pairs, opts.ci)
            mabs = iv.max_abs_difference_interval(pairs, opts.ci)
            k = c("kind")
            lo = pl.when(k == 0).then(avg.lo).when(k == 1).then(aabs.lo).otherwise(mabs.lo)
            hi = pl.when(k == 0).then(avg.hi).when(k == 1).then(aabs.hi).otherwise(mabs.hi)
            fixed = ~c("mine") & (c("mode") != "best") & (c("mode") != "overall")
            t2 = iv.chi2_2df_test(pairs)
            gen, ok = c("gen"), c("v").is_not_null()
            e = iv.CI_METHOD_DTYPE
            method = pl.when(gen).then(pl.lit("bound", e)).when(k == 0).then(pl.lit("mover", e)).otherwise(pl.lit("projection", e))
            outs2 = {
                "value_lo": pl.when(ok & fixed).then(lo), "value_hi": pl.when(ok & fixed).then(hi),
                "p_value": pl.when(~gen & fixed).then(t2.p_value), "test": pl.when(~gen & fixed).then(t2.test),
                "n_eff": c("n1"), "ci_method": pl.when(ok).then(method),
            }  # fmt: skip
        frame2 = pl.DataFrame([v.alias(n) for n, v in data2.items()])
        long2 = st2.apply(frame2.lazy()).select([e.alias(n) for n, e in outs2.items()]).collect(
            **collect_options(frame2.height)
        )
        for i, x in enumerate(multi):
            for fam in outs2:
                cols.put(fam, x.name, long2[fam].slice(i * h, h))
    return cols.result()


_EDF = "smoothed_empirical_differential_fairness"


def _edf_names(has_predictions: bool) -> list[tuple[str, str]]:
    return [("labels", _EDF), ("predictions", f"{_EDF}_predictions")][: 2 if has_predictions else 1]


def attribute_intervals(
    rows: pl.DataFrame,
    wide: pl.DataFrame,
    idx: Sequence[str],
    ib: Sequence[str],
    metric_names: Sequence[str],
    *,
    opts: CiOptions,
    has_predictions: bool,
) -> tuple[pl.DataFrame, dict[str, list[str]]]:
    """The attribute rows' interval columns, evaluated in long form.

    One frame with a block of the group rows per spread (every rate; TPR and FPR again at the
    equalized-odds level, two spreads holding jointly) and per EDF (favourable labels,
    predictions), so each method is written ONCE: the Wilson limits at the Šidák level of each
    (attribute row, block), then ONE aggregation per (attribute row, block) with the spread and
    EDF aggregations of :func:`~polfair.core.intervals.spread_table` and
    :func:`~polfair.core.intervals.edf_table` (the same helpers, rows and order, so the same
    values) and their finishing arithmetic; the homogeneity tests' statistics are the numpy
    segment sums that :func:`~polfair.core.intervals.homogeneity_table` uses. No join: an
    aggregation keeps the attribute rows in the order of ``wide``.

    Per rate: the projection limits of its spread (``difference`` / ``ratio``) and the homogeneity
    test (not for generalized rates), where the spread is defined; the demographic-parity
    disparities take the selection rate's limits and test, fairlearn's equalized odds the limits
    of the TPR and FPR spreads combined (max / min) and the test of both; EDF its projection
    limits where EDF is defined. ``ci_method`` is ``projection`` throughout.

    ``rows`` are the group rows with ``<m>__neff`` columns; ``wide`` the attribute rows (one per
    distinct ``idx`` of ``rows``, in order of first appearance) with the point spreads
    ``<m>__d`` / ``<m>__r``, the named disparities and EDF. Returns a frame aligned with ``wide``
    with columns ``<family>`` + U+001F + ``<metric>`` and the metric names per family.
    """
    h, g = wide.height, rows.height
    c = pl.col
    rates = _rates(metric_names)
    tested = [m for m in rates if not _generalized(m)]
    tot = c("tp") + c("fn") + c("fp") + c("tn")
    tot2 = c("tp_w2") + c("fn_w2") + c("fp_w2") + c("tn_w2") if opts.weighted else None
    # blocks: (name, rate, size, number of spreads that hold jointly)
    blocks: list[tuple[str, pl.Expr, pl.Expr, int]] = [(m, c(m), c(f"{m}__neff"), 1) for m in rates]
    if has_predictions:
        blocks += [(f"__eo_{m}", c(m), c(f"{m}__neff"), 2) for m in ("true_positive_rate", "false_positive_rate")]
    for on, name in _edf_names(has_predictions):
        pos, tot_f = (c("tp") + (c("fn") if on == "labels" else c("fp"))).cast(_F64), tot.cast(_F64)
        size = tot_f if tot2 is None else iv.effective_size(tot_f, tot2)
        blocks.append((name, pl.when(tot_f > 0).then(pos / tot_f), size, 1))
    at = {name: i for i, (name, *_) in enumerate(blocks)}
    nb = len(blocks)
    # the attribute row of each group row: first-appearance order, as wide's aggregation
    first = rows.select(idx).with_row_index("r").select(c("r").first().over(idx))["r"].to_numpy()
    rid = np.unique(first, return_inverse=True)[1]
    inputs = rows.select([e.cast(_F64).alias(f"p{i}") for i, (_, e, _, _) in enumerate(blocks)]
                         + [e.cast(_F64).alias(f"n{i}") for i, (_, _, e, _) in enumerate(blocks)])  # fmt: skip
    spreads = np.array([j for *_, j in blocks], dtype=np.int32)
    # key: (block, attribute row); the Šidák level of its defined groups times the spreads holding jointly
    long = _keyed_rates(
        np.repeat(np.arange(nb, dtype=np.int64) * h, g) + np.tile(rid, nb),
        pl.concat([inputs[f"p{i}"] for i in range(nb)]), pl.concat([inputs[f"n{i}"] for i in range(nb)]),
        np.full(nb * h, opts.ci), np.repeat(spreads, h).astype(np.int64),
    )  # fmt: skip
    r = iv.Rate(c("p"), c("n"))
    wilson = iv.wilson_interval(r, c("z"))  # z as a column
    lf = long.lazy().with_columns(wilson.lo.alias("lo"), wilson.hi.alias("hi"))
    wl = iv.Interval(c("lo"), c("hi"))  # null where the group is not defined
    r_ok = iv.Rate(pl.when(c("ok")).then(c("p")), pl.when(c("ok")).then(c("n")))
    for stage in ivp._spread_inputs(r_ok, wl, "key"):
        lf = lf.with_columns(stage)
    agg = (
        lf.group_by("key", maintain_order=True)
        .agg(c("ok").sum().alias("k"), *ivp._spread_aggs(), *ivp._edf_aggs(wl))
        .collect(**collect_options(long.height))
    )  # fmt: skip
    if agg.height != nb * h:  # every attribute row has group rows
        msg = f"attribute_intervals: {agg.height} families, expected {nb * h}"
        raise AssertionError(msg)
    z2 = pl.when(c("fam") == 2).then(iv.z_value(opts.ci, 2)).otherwise(iv.z_value(opts.ci, 1))
    staged, lim = ivp._spread_limits(agg.lazy().with_columns(pl.Series("fam", np.repeat(spreads, h))), c("k"), z2)
    edf = ivp._edf_limits(c("k"))
    out = staged.select(*[e.alias(n) for n, e in lim.items()], edf.lo.alias("edf_lo"), edf.hi.alias("edf_hi")).collect(
        **collect_options(agg.height)
    )

    def block(name: str, col: str) -> pl.Series:
        return out[col].slice(at[name] * h, h)

    cols = _Columns()
    put = cols.put

    def where(defined: pl.Series, v: pl.Series) -> pl.Series:
        return v.set(~defined, None)

    projection = pl.Series(["projection"] * h, dtype=pl.String)
    for m in rates:
        for fam in ("difference_lo", "difference_hi", "ratio_lo", "ratio_hi"):
            put(fam, m, block(m, fam))
        put("ci_method", m, where(wide[f"{m}__d"].is_not_null(), projection))
    # homogeneity tests: one per tested rate, and equalized odds (TPR and FPR together)
    families = {m: [m] for m in tested}
    if has_predictions:
        families["equalized_odds"] = ["true_positive_rate", "false_positive_rate"]
    if families:
        # the tests' statistics: one segment per (tested rate, attribute row), numpy sums in row order
        ti = {m: i for i, m in enumerate(tested)}
        sums = ivh._homogeneity_segments(
            np.concatenate([inputs[f"p{at[m]}"].to_numpy() for m in tested]),
            np.concatenate([inputs[f"n{at[m]}"].to_numpy() for m in tested]),
            np.repeat(np.arange(len(tested), dtype=np.int64) * h, g) + np.tile(rid, len(tested)),
            len(tested) * h, opts.weighted,
        )  # fmt: skip

        def part(col: str, m: str) -> np.ndarray:
            return getattr(sums, col)[ti[m] * h : (ti[m] + 1) * h]

        def combined(col: str, op: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
            out_: list[np.ndarray] = []
            for parts in families.values():
                acc = part(col, parts[0])
                for m in parts[1:]:
                    acc = op(acc, part(col, m))
                out_.append(acc)
            return np.concatenate(out_)

        pv, codes = ivh._homogeneity_results(
            combined("stat", np.add), combined("df", np.add), combined("few", np.logical_or),
            combined("bad", np.logical_or), combined("mean", np.add), combined("var", np.add), weighted=opts.weighted,
        )  # fmt: skip
        tests = np.array([None, *iv.TESTS], dtype=object)[codes + 1]
        tp = pl.Series(pv, dtype=_F64, nan_to_null=True)
        tt = pl.Series(tests, dtype=pl.String)
        test_of = {name: (tp.slice(i * h, h), tt.slice(i * h, h)) for i, name in enumerate(families)}
        for m in tested:
            defined = wide[f"{m}__d"].is_not_null()
            put("p_value", m, where(defined, test_of[m][0]))
            put("test", m, where(defined, test_of[m][1]))
    if has_predictions:
        sel = "selection_rate"
        for name, kind in (("demographic_parity_difference", "difference"), ("demographic_parity_ratio", "ratio")):
            put("value_lo", name, block(sel, f"{kind}_lo"))
            put("value_hi", name, block(sel, f"{kind}_hi"))
            put("p_value", name, cols.get("p_value", sel))
            put("test", name, cols.get("test", sel))
            put("ci_method", name, where(wide[f"{sel}__{kind[0]}"].is_not_null(), projection))
        t, f = "__eo_true_positive_rate", "__eo_false_positive_rate"
        both = pl.DataFrame([block(x, fam).alias(f"{fam}{y}") for x, y in ((t, ""), (f, "__f"))
                             for fam in ("difference_lo", "difference_hi", "ratio_lo", "ratio_hi")])  # fmt: skip
        d = ivp._max_of([iv.Interval(c("difference_lo"), c("difference_hi")),
                        iv.Interval(c("difference_lo__f"), c("difference_hi__f"))])  # fmt: skip
        q = ivp._min_of([iv.Interval(c("ratio_lo"), c("ratio_hi")), iv.Interval(c("ratio_lo__f"), c("ratio_hi__f"))])
        q_hi = pl.when(c("ratio_lo").is_not_null() & c("ratio_lo__f").is_not_null()).then(
            pl.min_horizontal(c("ratio_hi"), c("ratio_hi__f"))
        )
        eo = both.select(d.lo.alias("dlo"), d.hi.alias("dhi"), pl.when(q_hi.is_not_null()).then(q.lo).alias("rlo"),
                         q_hi.alias("rhi"))  # fmt: skip
        for name, kind in (("equalized_odds_difference", "d"), ("equalized_odds_ratio", "r")):
            defined = wide[name].is_not_null()
            put("value_lo", name, eo[f"{kind}lo"])
            put("value_hi", name, eo[f"{kind}hi"])
            put("p_value", name, where(defined, test_of["equalized_odds"][0]))
            put("test", name, where(defined, test_of["equalized_odds"][1]))
            put("ci_method", name, where(defined, projection))
    for _, name in _edf_names(has_predictions):
        defined = wide[name].is_not_null()
        put("value_lo", name, where(defined, block(name, "edf_lo")))
        put("value_hi", name, where(defined, block(name, "edf_hi")))
        put("ci_method", name, where(defined, projection))
    return cols.result()


def population_intervals(
    cells: pl.LazyFrame,
    wide: pl.DataFrame,
    ib: Sequence[str],
    metric_names: Sequence[str],
    *,
    opts: CiOptions,
    has_predictions: bool,
) -> tuple[pl.DataFrame, dict[str, list[str]]]:
    """The population rows' interval columns (one row per ``by`` value), evaluated in long form.

    Every rate's Wilson limits (``n_eff`` its Kish size; ``ci_method`` ``bound`` for generalized
    rates, else the score method) written ONCE over a frame with one block of rows per rate; the
    EDF projection limits over the full intersection's ``cells`` (level ``ci``, and ``1 − α/2``
    for bias amplification, the difference of the two EDFs' intervals) in ONE aggregation over a
    block of the cells per (EDF, level), with the helpers of
    :func:`~polfair.core.intervals.edf_table` (same values). EDF limits are null where EDF is.

    ``wide`` holds the rates, ``<m>__neff``, EDF and bias amplification, and the ``ib`` columns.
    Returns a frame aligned with ``wide`` with columns ``<family>`` + U+001F + ``<metric>`` and
    the metric names per family.
    """
    h = wide.height
    c = pl.col
    rates = _rates(metric_names)
    cols = _Columns()
    put = cols.put

    if rates:
        long = pl.DataFrame([pl.concat([wide[m].cast(_F64) for m in rates]).alias("p"),
                             pl.concat([wide[f"{m}__neff"].cast(_F64) for m in rates]).alias("n")])  # fmt: skip
        wl = iv.wilson_interval(iv.Rate(c("p"), c("n")), iv.z_value(opts.ci))
        out = long.select(wl.lo.alias("lo"), wl.hi.alias("hi"), "n")
        for i, m in enumerate(rates):
            for fam, col in (("value_lo", "lo"), ("value_hi", "hi"), ("n_eff", "n")):
                put(fam, m, out[col].slice(i * h, h))
            put("ci_method", m, pl.Series(["bound" if _generalized(m) else _score(opts.weighted)] * h, dtype=pl.String))
    # EDF: one block of the cells per (EDF, level ci / 1 − α/2), keyed by block and by value
    tot = (c("tp") + c("fn") + c("fp") + c("tn")).cast(_F64)
    size = tot if not opts.weighted else iv.effective_size(tot, c("tp_w2") + c("fn_w2") + c("fp_w2") + c("tn_w2"))
    edfs = _edf_names(has_predictions)
    inputs = (
        cells.join(wide.lazy().select(*ib).with_row_index("__pf_rid"), on=list(ib), how="left", nulls_equal=True)
        .select(c("__pf_rid").cast(pl.Int64),
                *[pl.when(tot > 0).then((c("tp") + c("fn" if on == "labels" else "fp")).cast(_F64) / tot).alias(f"p{j}")
                  for j, (on, _) in enumerate(edfs)], size.alias("n"))
        .collect(**SMALL_COLLECT)
    )  # fmt: skip
    g, nb = inputs.height, 2 * len(edfs)
    half = 1.0 - (1.0 - opts.ci) / 2.0
    long = _keyed_rates(  # key: (EDF, level, by value); levels ci and 1 − α/2 alternate
        np.repeat(np.arange(nb, dtype=np.int64) * h, g) + np.tile(inputs["__pf_rid"].to_numpy(), nb),
        pl.concat([inputs[f"p{j}"] for j in range(len(edfs)) for _ in (0, 1)]), pl.concat([inputs["n"]] * nb),
        np.repeat(np.tile([opts.ci, half], len(edfs)), h), np.ones(nb * h, dtype=np.int64),
    )  # fmt: skip
    wilson = iv.wilson_interval(iv.Rate(c("p"), c("n")), c("z"))
    lim = ivp._edf_limits(c("k"))
    edf = (
        long.lazy().with_columns(wilson.lo.alias("lo"), wilson.hi.alias("hi"))
        .group_by("key").agg(c("ok").sum().alias("k"), *ivp._edf_aggs(iv.Interval(c("lo"), c("hi"))))
        .sort("key").select(lim.lo.alias("lo"), lim.hi.alias("hi"))
        .collect(**SMALL_COLLECT)
    )  # fmt: skip
    if edf.height != nb * h:  # every by value has cells
        msg = f"population_intervals: {edf.height} EDF families, expected {nb * h}"
        raise AssertionError(msg)

    def limits(j: int, level: int) -> tuple[pl.Series, pl.Series]:
        return edf["lo"].slice((2 * j + level) * h, h), edf["hi"].slice((2 * j + level) * h, h)

    projection = pl.Series(["projection"] * h, dtype=pl.String)
    for j, (_, name) in enumerate(edfs):
        defined = wide[name].is_not_null()
        lo, hi = limits(j, 0)
        put("value_lo", name, lo.set(~defined, None))
        put("value_hi", name, hi.set(~defined, None))
        put("ci_method", name, projection.set(~defined, None))
    if has_predictions:  # bias amplification: EDF(predictions) − EDF(labels), each at level 1 − α/2
        name = "differential_fairness_bias_amplification"
        defined = wide[name].is_not_null()
        (llo, lhi), (plo, phi) = limits(0, 1), limits(1, 1)
        put("value_lo", name, (plo - lhi).set(~defined, None))
        put("value_hi", name, (phi - llo).set(~defined, None))
        put("ci_method", name, projection.set(~defined, None))
    return cols.result()
