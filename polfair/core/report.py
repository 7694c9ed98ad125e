"""The fairness report: one pass to the cell table, then every metric from it (long/tidy output).

Report schema (a ``pl.DataFrame``; one row per (by, attribute set, group, metric)):

===================  ========  ===============================================================
column               dtype     meaning
===================  ========  ===============================================================
*by*                 input's   the ``by`` values (one report per ``by`` group, same pass)
``attribute``        String    attribute-set names joined by ``" & "``; null on population rows
``group``            String    the group's values joined by ``" & "`` (null value -> ``"null"``);
                               null on attribute-level and population rows
``metric``           String    standard metric name (aif360 / fairlearn spelling)
``value``            Float64   the metric; null where undefined (zero denominator), never a 0
``reference_group``  String    the group it is compared with (group rows and disparities)
``difference``       Float64   group rows: value − reference value; attribute rows: max − min
``ratio``            Float64   group rows: value / reference value; attribute rows: min / max
``n``                Int64     input rows in the group (all of them, missing ones included)
===================  ========  ===============================================================

Row kinds:

* **group rows** (``attribute`` and ``group`` set): the group metrics of :mod:`polfair.core.metrics`,
  ``n_missing``, and the named disparities against the reference group
  (``statistical_parity_difference``, ``disparate_impact``, ...), whose ``value`` is the disparity.
* **attribute rows** (``group`` null): per group metric, the spread across the attribute set's
  groups in ``difference`` (max − min) and ``ratio`` (min / max), fairlearn's ``between_groups``
  (null if any group's value is undefined); fairlearn's ``demographic_parity_difference/ratio``
  and ``equalized_odds_difference/ratio``; the between-group entropy indices and the smoothed
  EDF of that attribute set.
* **population rows** (``attribute`` null): the metrics of everyone, the entropy indices of all
  individuals, the ``between_all_groups_*`` indices, EDF on labels and on predictions and
  ``differential_fairness_bias_amplification`` (aif360's definitions, all attributes jointly).
"""

from __future__ import annotations

import functools
import itertools
import warnings
from typing import Any, Literal, Mapping, Sequence

import polars as pl

from polfair.core import entropy
from polfair.core._args import SMALL_COLLECT as _SMALL
from polfair.core.counts import COUNT_COLUMNS
from polfair.exceptions import InvalidInputError, MissingValuesWarning, PolfairError
from polfair.core.metrics import (
    DISPARITIES,
    METRICS,
    Disparity,
    between_groups_difference,
    between_groups_ratio,
    group_metrics,
    label_disparities,
    rate,
)
from polfair.core._typing import Reference

__all__ = [
    "REPORT_COLUMNS",
    "attribute_sets",
    "check_reference",
    "group_label",
    "report_from_counts",
    "value_label",
]

REPORT_COLUMNS = ("attribute", "group", "metric", "value", "reference_group", "difference", "ratio", "n")

_G = "__pf_group"
_PRIV, _MODE, _PLABEL = "__pf_priv", "__pf_mode", "__pf_plabel"
_SORT_A, _SORT_G, _SORT_M = "__pf_sa", "__pf_sg", "__pf_sm"
_SUMS = list(COUNT_COLUMNS)

_ATTR_METRICS = (
    "demographic_parity_difference", "demographic_parity_ratio",
    "equalized_odds_difference", "equalized_odds_ratio",
    "between_group_generalized_entropy_index", "between_group_theil_index",
    "between_group_coefficient_of_variation",
    "smoothed_empirical_differential_fairness", "smoothed_empirical_differential_fairness_predictions",
)  # fmt: skip
_POP_METRICS = (
    "generalized_entropy_index", "theil_index", "coefficient_of_variation",
    "between_all_groups_generalized_entropy_index", "between_all_groups_theil_index",
    "between_all_groups_coefficient_of_variation",
    "smoothed_empirical_differential_fairness", "smoothed_empirical_differential_fairness_predictions",
    "differential_fairness_bias_amplification",
)  # fmt: skip


def _metric_order() -> dict[str, int]:
    names = ["n_missing", *METRICS, *DISPARITIES, *_POP_METRICS, *_ATTR_METRICS]
    out: dict[str, int] = {}
    for name in names:
        out.setdefault(name, len(out))
    return out


_ORDER = _metric_order()


def check_reference(reference: Any) -> None:
    """Raise unless ``reference`` is one of the reference modes of :func:`fairness_report`."""
    if reference not in (None, "privileged", "largest", "overall", "best"):
        msg = f"reference must be one of {{None, 'privileged', 'largest', 'overall', 'best'}}, got {reference!r}"
        raise PolfairError(msg)


def attribute_sets(keys: Sequence[str], intersections: int | Sequence[Sequence[str]] | None) -> list[tuple[str, ...]]:
    if intersections is None or isinstance(intersections, int):
        top = len(keys) if intersections is None else int(intersections)
        if top < 1:
            msg = f"intersections must be >= 1 (the largest attribute-set size), got {intersections!r}"
            raise PolfairError(msg)
        return [s for k in range(1, min(top, len(keys)) + 1) for s in itertools.combinations(keys, k)]
    out = []
    for s in intersections:
        t = (s,) if isinstance(s, str) else tuple(s)
        unknown = [a for a in t if a not in keys]
        if unknown or not t:
            msg = f"intersections: {list(t)!r} must be a non-empty list of protected attributes {list(keys)}"
            raise PolfairError(msg)
        out.append(tuple(k for k in keys if k in t))  # canonical order
    return list(dict.fromkeys(out))


def value_label(v: Any) -> str:
    if v is None:
        return "null"
    return str(pl.Series([v]).cast(pl.String)[0])


def group_label(keys: Sequence[str]) -> pl.Expr:
    return pl.concat_str([pl.col(k).cast(pl.String).fill_null("null") for k in keys], separator=" & ")


_ALLKEY = "__pf_all"


def _rollup(cells: pl.LazyFrame, group: Sequence[str]) -> pl.LazyFrame:
    # maintain_order: groups come out in cell-table order, so every later float sum (entropy,
    # EDF) adds the same numbers in the same order on every run
    return cells.group_by(list(group), maintain_order=True).agg([pl.col(c).sum() for c in _SUMS])


def report_from_counts(
    cells: pl.DataFrame | pl.LazyFrame,
    *,
    protected: Sequence[str],
    by: Sequence[str] = (),
    has_predictions: bool = True,
    privileged: Mapping[str, Any] | None = None,
    reference: Reference | None = None,
    intersections: int | Sequence[Sequence[str]] | None = None,
    alpha: float = 2.0,
    concentration: float = 1.0,
) -> pl.DataFrame:
    """Build the fairness report from a cell table (e.g. merged from partitions).

    Parameters
    ----------
    cells
        A cell table (:func:`polfair.confusion_counts`, :func:`polfair.merge_counts`).
    protected
        Names of its protected-attribute columns, in order.
    by
        Names of its ``by`` columns.
    has_predictions
        ``False`` for a labels-only audit (only label metrics are reported).
    privileged, reference, intersections, alpha, concentration
        As in :func:`fairness_report`.

    Returns
    -------
    pl.DataFrame
        The report (schema in :mod:`polfair.core.report`).

    Raises
    ------
    PolfairError
        Unknown ``reference``, ``privileged`` naming a non-protected column, bad ``intersections``.

    Examples
    --------
    >>> import polars as pl
    >>> import polfair as pf
    >>> df = pl.DataFrame({"y": [1, 0, 1, 0], "p": [1, 0, 0, 0], "g": ["a", "a", "b", "b"]})
    >>> cells = pf.confusion_counts(df, y_true="y", y_pred="p", protected="g").collect()
    >>> rep = pf.report_from_counts(cells, protected=["g"])
    >>> rep.filter(metric="true_positive_rate", group="b")["value"].item()
    0.0
    """
    # All attribute sets are rolled up into ONE small table keyed by a set index (grouping sets), so
    # metrics, references, spreads, entropy and EDF are computed once over it, not once per set.
    keys, by = list(protected), list(by)
    check_reference(reference)
    if concentration < 0:
        msg = f"concentration must be non-negative, got {concentration!r}"
        raise PolfairError(msg)
    privileged = dict(privileged or {})
    for k in privileged:
        if k not in keys:
            msg = f"privileged names {k!r}, which is not a protected attribute {keys}"
            raise PolfairError(msg)
    # internally the by columns get private names (no clash with any working column), and a
    # constant key stands in for "no by", so there is one code path
    ib = [f"__pf_by{i}" for i in range(len(by))] or [_ALLKEY]
    # one chunk: sums over a multi-chunk frame may add in a run-dependent order
    lf = cells.rechunk().lazy().rename(dict(zip(by, ib)))
    if not by:
        lf = lf.with_columns(pl.lit(0, pl.Int8).alias(_ALLKEY))
    metric_names = _metric_names(has_predictions)
    sets = attribute_sets(keys, intersections)

    pop = _rollup(lf, ib).with_columns(group_metrics(has_predictions)).collect(**_SMALL)
    frames = []
    modes: set[str] = set()
    for ai, attrs in enumerate(sets):
        covered = all(a in privileged for a in attrs)
        mode = reference or ("privileged" if privileged and covered else "largest")
        modes.add(mode)
        is_priv = pl.lit(False)
        label = None
        if mode == "privileged" and covered:
            is_priv = pl.lit(True)
            for a in attrs:
                is_priv = is_priv & pl.col(a).cast(pl.String).fill_null("null").is_in(_privileged_values(privileged[a]))
            label = " & ".join("|".join(_privileged_values(privileged[a])) for a in attrs)
        frames.append(
            _rollup(lf, [*ib, *attrs])
            .sort([*ib, *attrs], nulls_last=False)
            .select(
                *ib, pl.lit(ai, pl.Int64).alias(_SORT_A), pl.lit(" & ".join(attrs)).alias("attribute"),
                group_label(attrs).alias(_G), is_priv.alias(_PRIV), pl.lit(mode).alias(_MODE),
                pl.lit(label, pl.String).alias(_PLABEL), *_SUMS,
            )  # fmt: skip
        )
    sk = [*ib, _SORT_A]  # the key of one (by group, attribute set)
    groups = (
        pl.concat(frames).with_row_index(_SORT_G).with_columns(pl.col(_SORT_G).cast(pl.Int64))
        .with_columns(group_metrics(has_predictions)).collect(**_SMALL).rechunk()
    )  # fmt: skip
    ref = _reference(groups.lazy(), pop.lazy(), sk, ib, metric_names, modes)
    out = pl.concat(
        [
            _population_rows(lf, pop.lazy(), keys, ib, has_predictions, metric_names, alpha, concentration),
            _group_rows(groups.lazy(), ref, sk, has_predictions),
            _attribute_rows(groups.lazy(), pop.lazy(), sk, ib, has_predictions, alpha, concentration),
        ],
        how="diagonal_relaxed",
    )
    out = out.with_columns(pl.col("metric").replace_strict(_ORDER, default=len(_ORDER)).alias(_SORT_M))
    out = out.sort([*ib, _SORT_A, _SORT_G, _SORT_M], nulls_last=False)
    return out.select(
        *[pl.col(i).alias(b) for i, b in zip(ib, by)],
        pl.col("attribute").cast(pl.String),
        pl.col("group").cast(pl.String),
        pl.col("metric").cast(pl.String),
        pl.col("value").cast(pl.Float64),
        pl.col("reference_group").cast(pl.String),
        pl.col("difference").cast(pl.Float64),
        pl.col("ratio").cast(pl.Float64),
        pl.col("n").cast(pl.Int64),
    ).collect(**_SMALL)


def _privileged_values(v: Any) -> list[str]:
    return [value_label(x) for x in (v if isinstance(v, (list, tuple, set, frozenset)) else [v])]


def _reference(
    groups: pl.LazyFrame,
    pop: pl.LazyFrame,
    sk: list[str],
    ib: list[str],
    metric_names: list[str],
    modes: set[str],
) -> pl.LazyFrame:
    """One row per (by group, attribute set): ``<metric>__ref`` values and ``<metric>__refname``.

    Only the branches of the reference ``modes`` in use are built."""

    def of(m: str) -> pl.LazyFrame:
        return groups.filter(pl.col(_MODE) == m) if len(modes) > 1 else groups

    parts = []
    if "privileged" in modes:  # the rows flagged privileged, summed; none in a by group -> null
        priv = (
            of("privileged")
            .group_by(sk)
            .agg(pl.col(_PLABEL).first(), pl.col(_PRIV).any().alias("__pf_has"),
                 *[pl.col(c).filter(pl.col(_PRIV)).sum() for c in _SUMS])  # fmt: skip
            .with_columns(group_metrics(True))
            .with_columns([pl.when(pl.col("__pf_has")).then(pl.col(m)).alias(m) for m in metric_names])
        )
        parts.append(_named(priv, sk, metric_names, pl.when(pl.col(_PLABEL).is_not_null()).then(pl.col(_PLABEL))))
    if "overall" in modes:
        overall = of("overall").select(*sk).unique().join(pop, on=ib, how="left", nulls_equal=True)
        parts.append(_named(overall, sk, metric_names, pl.lit("overall")))
    if "largest" in modes:  # largest total weight; ties go to the first group in key order
        largest = (
            of("largest")
            .sort([*sk, "w", _SORT_G], descending=[False] * len(sk) + [True, False], nulls_last=False)
            .group_by(sk, maintain_order=True)
            .first()
        )
        parts.append(_named(largest, sk, metric_names, pl.col(_G)))
    if "best" in modes:  # per metric: the best value of the attribute set's groups
        cols = []
        for m in metric_names:
            hib = METRICS[m].higher_is_better
            pick = pl.col(m).max() if hib in (True, None) else pl.col(m).min()
            cols += [pick.alias(f"{m}__ref"), pl.col(_G).filter(pl.col(m) == pick).first().alias(f"{m}__refname")]
        parts.append(of("best").group_by(sk).agg(cols))
    return parts[0] if len(parts) == 1 else pl.concat(parts, how="diagonal_relaxed")


def _named(ref: pl.LazyFrame, sk: list[str], metric_names: list[str], name: pl.Expr) -> pl.LazyFrame:
    return ref.select(
        *sk,
        *[pl.col(m).alias(f"{m}__ref") for m in metric_names],
        *[name.alias(f"{m}__refname") for m in metric_names],
    )


_REF = "__pf_ref"
_LONG_TYPES = {"value": pl.Float64, "reference_group": pl.String, _REF: pl.Float64}


def _cells(values: dict[str, pl.Expr], **others: dict[str, pl.Expr]) -> tuple[pl.Expr, ...]:
    """One struct per metric: ``value`` from ``values`` and one field per ``others`` family (keyed
    by the same names; missing names give null)."""
    fields = {"value": values, **others}
    return tuple(
        pl.struct(
            [fam.get(name, pl.lit(None)).cast(_LONG_TYPES[col]).alias(col) for col, fam in fields.items()]
        ).alias(name)
        for name in values
    )


def _long(wide: pl.LazyFrame, idx: list[str], cells: tuple[pl.Expr, ...]) -> pl.LazyFrame:
    """Long rows (metric, value, ...) from :func:`_cells`: one select, one unpivot, one unnest."""
    return (
        wide.select(*idx, *cells)
        .unpivot(index=idx, variable_name="metric", value_name="__pf_cell")
        .unnest("__pf_cell")
    )


def _metric_names(has_predictions: bool) -> list[str]:
    return [m.name for m in METRICS.values() if has_predictions or m.needs == "labels"]


def _disparity_list(has_predictions: bool) -> list[Disparity]:
    return list(DISPARITIES.values()) if has_predictions else label_disparities()


@functools.lru_cache(maxsize=4)
def _group_cells(has_predictions: bool) -> tuple[pl.Expr, ...]:
    """Group rows: metrics vs the reference, and the named disparities (built once per process)."""
    metric_names, disparities = _metric_names(has_predictions), _disparity_list(has_predictions)

    def r(m: str) -> pl.Expr:
        # Polars may hold a reference value that is the same on every row as a broadcast scalar,
        # and divides by a scalar via its reciprocal (a·(1/b), one ulp off a/b). Adding 0·row
        # index makes it a per-row column (exactly equal), so every ratio is the rounded a/b.
        return pl.col(f"{m}__ref") + 0.0 * pl.col(_SORT_G)

    def refname(d: Disparity) -> pl.Expr:
        names = [pl.col(f"{m}__refname") for m in d.rates]
        out = names[0]
        for other in names[1:]:  # "best" may pick a different group per rate
            out = pl.when(out == other).then(out).otherwise(pl.concat_str([out, other], separator=" / "))
        return out

    values = {"n_missing": pl.col("n_missing").cast(pl.Float64)}
    values |= {m: pl.col(m) for m in metric_names}
    values |= {d.name: d.formula(pl.col, r) for d in disparities}
    names = {m: pl.col(f"{m}__refname") for m in metric_names} | {d.name: refname(d) for d in disparities}
    # each metric's reference value rides along in the long rows; difference and ratio are then
    # two expressions over the long rows (not two per metric), see _group_rows
    refs = {m: pl.col(f"{m}__ref") for m in metric_names}
    return _cells(values, reference_group=names, **{_REF: refs})


#: The metrics whose spreads fairlearn's named disparities read (demographic parity, equalized odds).
_NAMED_SPREADS = ("selection_rate", "true_positive_rate", "false_positive_rate")


def _spreads(name: str) -> tuple[pl.Expr, pl.Expr]:
    """fairlearn's between_groups difference and ratio of column ``name`` (null if any group is
    undefined), as ``<name>__d`` and ``<name>__r``."""
    values = pl.col(name)
    return between_groups_difference(values).alias(f"{name}__d"), between_groups_ratio(values).alias(f"{name}__r")


@functools.lru_cache(maxsize=8)
def _attribute_cells(has_predictions: bool, extra_names: tuple[str, ...]) -> tuple[pl.Expr, ...]:
    """Attribute rows other than the per-metric spreads: fairlearn's named disparities, entropy and EDF."""
    values: dict[str, pl.Expr] = {}
    if has_predictions:
        tpr_d, fpr_d = pl.col("true_positive_rate__d"), pl.col("false_positive_rate__d")
        tpr_r, fpr_r = pl.col("true_positive_rate__r"), pl.col("false_positive_rate__r")
        values["demographic_parity_difference"] = pl.col("selection_rate__d")
        values["demographic_parity_ratio"] = pl.col("selection_rate__r")
        both_d, both_r = tpr_d.is_not_null() & fpr_d.is_not_null(), tpr_r.is_not_null() & fpr_r.is_not_null()
        values["equalized_odds_difference"] = pl.when(both_d).then(pl.max_horizontal(tpr_d, fpr_d))
        values["equalized_odds_ratio"] = pl.when(both_r).then(pl.min_horizontal(tpr_r, fpr_r))
    values |= {k: pl.col(k) for k in extra_names}
    return _cells(values)


@functools.lru_cache(maxsize=8)
def _population_cells(has_predictions: bool, names: tuple[str, ...]) -> tuple[pl.Expr, ...]:
    """Population rows: every metric of everyone, and the population-level indices."""
    values = {"n_missing": pl.col("n_missing").cast(pl.Float64)}
    values |= {m: pl.col(m) for m in _metric_names(has_predictions)}
    values |= {k: pl.col(k) for k in names}
    return _cells(values)


def _group_rows(groups: pl.LazyFrame, ref: pl.LazyFrame, sk: list[str], has_predictions: bool) -> pl.LazyFrame:
    wide = groups.join(ref, on=sk, how="left", nulls_equal=True).with_columns(
        pl.col(_G).alias("group"), pl.col("n").cast(pl.Int64)
    )
    rows = _long(wide, [*sk, _SORT_G, "attribute", "group", "n"], _group_cells(has_predictions))
    # metric rows carry their reference value; other rows (n_missing, disparities) carry null
    value, ref = pl.col("value"), pl.col(_REF)
    return rows.with_columns((value - ref).alias("difference"), rate(value, ref).alias("ratio")).drop(_REF)


def _attribute_rows(
    groups: pl.LazyFrame,
    pop: pl.LazyFrame,
    sk: list[str],
    ib: list[str],
    has_predictions: bool,
    alpha: float,
    concentration: float,
) -> pl.LazyFrame:
    aggs, finish, names = _index_aggs(has_predictions, alpha, "between_group_")
    idx = [*sk, "attribute"]
    # every metric's spread over the groups of an attribute set, in long form: one unpivot and
    # one aggregation with two expressions (not two per metric)
    spreads = (
        groups.select(*idx, *_metric_names(has_predictions))
        .unpivot(index=idx, variable_name="metric", value_name="value")
        .group_by([*idx, "metric"], maintain_order=True)
        .agg(*_spreads("value"))
        .select(*idx, "metric", pl.lit(None, pl.Float64).alias("value"),
                pl.col("value__d").alias("difference"), pl.col("value__r").alias("ratio"))  # fmt: skip
    )
    # fairlearn's named disparities, entropy indices and EDF of each attribute set: one aggregation
    named = [e for m in _NAMED_SPREADS for e in _spreads(m)] if has_predictions else []
    wide = groups.with_columns(_index_inputs(concentration)).group_by(idx).agg(*named, *aggs).with_columns(finish)
    rows = pl.concat([spreads, _long(wide, idx, _attribute_cells(has_predictions, tuple(names)))], how="diagonal")
    return rows.join(pop.select(*ib, pl.col("n").cast(pl.Int64)), on=ib, how="left", nulls_equal=True).with_columns(
        pl.lit(None, pl.String).alias("group"), pl.lit(-1, pl.Int64).alias(_SORT_G)
    )


_B, _CNT = "__pf_b", "__pf_cnt"
_LOGS = ("__pf_lp", "__pf_ln", "__pf_plp", "__pf_pln")  # EDF's log rates: labels, then predictions


@functools.lru_cache(maxsize=4)
def _index_inputs(concentration: float) -> tuple[pl.Expr, ...]:
    """Per-group inputs of the entropy indices and EDF; null for groups without counted rows,
    which every aggregation then skips (as aif360 skips empty groups and unobserved cells)."""
    c = pl.col
    b, cnt = entropy.group_benefit()
    tot = c("tp") + c("fn") + c("fp") + c("tn")
    lp, ln = entropy._edf_log_rates(c("tp") + c("fn"), tot, concentration)  # positives (labels)
    plp, pln = entropy._edf_log_rates(c("tp") + c("fp"), tot, concentration)  # predicted positives
    exprs = (b, cnt, lp, ln, plp, pln)
    return tuple(pl.when(cnt > 0).then(e).alias(name) for e, name in zip(exprs, (_B, _CNT, *_LOGS)))


def _index_aggs(
    has_predictions: bool, alpha: float, prefix: str
) -> tuple[list[pl.Expr], list[pl.Expr], list[str]]:
    """The between-group entropy indices and EDF over :func:`_index_inputs` columns: plain
    aggregations, the expressions that finish them on the aggregated rows, and the output names."""
    b, cnt = pl.col(_B), pl.col(_CNT)
    edf = "smoothed_empirical_differential_fairness"
    aggs, finish, names = [], [], []
    for logs, name in ((_LOGS[:2], edf), (_LOGS[2:], f"{edf}_predictions"))[: 2 if has_predictions else 1]:
        parts = [f"{name}__{i}" for i in range(5)]
        aggs += [e.alias(p) for e, p in zip(entropy._edf_parts(pl.col(logs[0]), pl.col(logs[1])), parts)]
        finish.append(entropy._edf_from_parts(*(pl.col(p) for p in parts)).alias(name))
        names.append(name)
    if not has_predictions:
        return aggs, finish, names
    alphas, ge_finish, ge_names = _entropy_family_parts(alpha, prefix)
    aggs += [entropy._ge_agg_with_nan(a, b, cnt).alias(g) for g, a in alphas.items()]
    return aggs, [*finish, *ge_finish], [*ge_names, *names]


def _entropy_family_parts(alpha: float, prefix: str) -> tuple[dict[str, float], list[pl.Expr], list[str]]:
    """GE(alpha), Theil and CV: the GE columns to aggregate (name -> α), the expressions that
    finish them on the aggregated rows, and the output names (``<prefix>generalized_entropy_index``, ...)."""
    alphas = {f"{prefix}generalized_entropy_index": alpha, f"{prefix}theil_index": 1.0, "__pf_ge2": 2.0}
    # GE >= 0 in exact arithmetic (Jensen): the report clamps rounding noise such as -1e-17 (groups
    # with equal mean benefit), where aif360 returns the tiny negative and a NaN CV
    clamped = {g: pl.col(g).fill_nan(None).clip(lower_bound=0.0) for g in alphas}
    ge, theil, cv = (f"{prefix}{x}" for x in ("generalized_entropy_index", "theil_index", "coefficient_of_variation"))
    finish = [clamped[ge].alias(ge), clamped[theil].alias(theil), (2.0 * clamped["__pf_ge2"]).sqrt().alias(cv)]  # aif360: sqrt(2·GE(2))
    return alphas, finish, [ge, theil, cv]


def _join(a: pl.LazyFrame, b: pl.LazyFrame, ib: list[str]) -> pl.LazyFrame:
    return a.join(b, on=ib, how="full", coalesce=True, nulls_equal=True)


def _entropy_family(benefits: pl.LazyFrame, ib: list[str], alpha: float) -> tuple[pl.LazyFrame, list[str]]:
    """GE(alpha), Theil and CV of all individuals (benefits as distinct values and counts)."""
    alphas, finish, names = _entropy_family_parts(alpha, "")
    return entropy.generalized_entropy_indices(benefits, alphas, ib).select(*ib, *finish), names


def _population_rows(
    cells: pl.LazyFrame,
    pop: pl.LazyFrame,
    keys: list[str],
    ib: list[str],
    has_predictions: bool,
    metric_names: list[str],
    alpha: float,
    concentration: float,
) -> pl.LazyFrame:
    # the cell table is already the full intersection (one row per by + all keys)
    aggs, finish, names = _index_aggs(has_predictions, alpha, "between_all_groups_")
    vals = cells.with_columns(_index_inputs(concentration)).group_by(ib).agg(aggs).select(*ib, *finish)
    if has_predictions:
        benefits = entropy.benefit_of_individuals(pop, ib, summed=True)  # pop: one row per by group
        ind, ind_names = _entropy_family(benefits, ib, alpha)
        vals = _join(vals, ind, ib)
        names = [*ind_names, *names, "differential_fairness_bias_amplification"]
    wide = pop.join(vals, on=ib, how="left", nulls_equal=True).with_columns(
        pl.lit(None, pl.String).alias("attribute"), pl.lit(None, pl.String).alias("group"),
        pl.col("n").cast(pl.Int64), pl.lit(-1).alias(_SORT_A), pl.lit(-1, pl.Int64).alias(_SORT_G),
    )  # fmt: skip
    if has_predictions:
        wide = wide.with_columns(
            differential_fairness_bias_amplification=pl.col("smoothed_empirical_differential_fairness_predictions")
            - pl.col("smoothed_empirical_differential_fairness")
        )
    idx = [*ib, "attribute", "group", "n", _SORT_A, _SORT_G]
    return _long(wide, idx, _population_cells(has_predictions, tuple(names)))
