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

* **group rows** (``attribute`` and ``group`` set): the group metrics of :mod:`polfair.metrics`,
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

import itertools
import warnings
from typing import Any, Literal, Mapping, Sequence

import polars as pl

from polfair import entropy
from polfair.counts import COUNT_COLUMNS, code_counts, describe_code_problems, pivot_codes
from polfair.exceptions import InvalidInputError, MissingValuesWarning, PolfairError
from polfair.metrics import DISPARITIES, METRICS, Disparity, group_metrics, label_disparities, rate
from polfair.spec import CODE, IntoExpr, OnMissing, Spec, build_spec

__all__ = ["REPORT_COLUMNS", "collect_cells", "fairness_report", "report_from_counts"]

REPORT_COLUMNS = ("attribute", "group", "metric", "value", "reference_group", "difference", "ratio", "n")
Reference = Literal["privileged", "largest", "overall", "best"]

_G = "__pf_group"
_SORT_A, _SORT_G, _SORT_M = "__pf_sa", "__pf_sg", "__pf_sm"
_SUMS = [c for c in COUNT_COLUMNS]

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


def collect_cells(spec: Spec, *, on_missing: OnMissing = "warn", engine: str = "streaming") -> pl.DataFrame:
    """Run the one pass for ``spec``, validate the data, and return the cell table.

    Parameters
    ----------
    spec
        From :func:`polfair.spec.build_spec`.
    on_missing
        ``"warn"`` (default): warn with :class:`MissingValuesWarning` when rows have a null label,
        prediction, score or weight; ``"raise"``: raise instead; ``"ignore"``: say nothing. Either
        way such rows are counted in ``n_missing`` and excluded from every rate.
    engine
        Polars engine for the pass (``"streaming"`` default, ``"in-memory"``, ``"auto"``).

    Returns
    -------
    pl.DataFrame
        The cell table (schema in :mod:`polfair.counts`).

    Raises
    ------
    InvalidInputError
        Empty input; labels neither favorable nor unfavorable (with ``unfavorable=``); predicted
        labels likewise; scores NaN or outside [0, 1]; weights negative, NaN or infinite; missing
        values with ``on_missing="raise"``. The message names the column, counts the rows and
        shows example values (fetched by a second query that only runs on this error path).
    """
    if on_missing not in ("warn", "raise", "ignore"):
        msg = f"on_missing must be one of {{'warn', 'raise', 'ignore'}}, got {on_missing!r}"
        raise PolfairError(msg)
    codes = code_counts(spec).collect(engine=engine)  # type: ignore[arg-type]
    total = int(codes["__pf_n"].sum() or 0)
    if total == 0:
        msg = "the input has no rows: there is nothing to audit (check filters applied before the report)"
        raise InvalidInputError(msg)
    problems = describe_code_problems(codes)
    _raise_invalid(spec, problems)
    missing = {k: v for k, v in problems.items() if k.startswith("null_") and v}
    if missing and on_missing != "ignore":
        parts = ", ".join(f"{v} with a null {k[5:]}" for k, v in missing.items())
        cols = ", ".join(f"{r}={_describe(spec, r)}" for r in _roles_for(missing))
        msg = (
            f"{parts} (of {total} rows): these rows are counted in n_missing and excluded from all "
            f"rates ({cols}). Fill or drop them before the report to silence this, or pass "
            "on_missing='ignore'"
        )
        if on_missing == "raise":
            raise InvalidInputError(msg.replace("Fill or drop", "on_missing='raise': fill or drop"))
        warnings.warn(msg, MissingValuesWarning, stacklevel=3)
    return pivot_codes(codes.lazy(), spec).collect()


def _roles_for(kinds: Mapping[str, int]) -> list[str]:
    role = {"label": "y_true", "prediction": "y_pred", "weight": "weight", "score": "y_score"}
    out = []
    for k in kinds:
        r = role[k.split("_", 1)[1]]
        out.append(r)
    return list(dict.fromkeys(out))


def _describe(spec: Spec, role: str) -> str:
    e = spec.roles.get(role)
    if e is None and role == "y_pred":
        e = spec.roles.get("y_score")
    if e is None:
        return "?"
    try:
        return repr(e.meta.output_name())
    except Exception:
        return str(e)


def _examples(spec: Spec, role: str, cond: pl.Expr) -> list[Any]:
    e = spec.roles[role]
    rows = spec.source.select(e.alias("v"), cond.alias("bad")).filter(pl.col("bad")).select("v")
    return rows.unique().head(5).collect()["v"].to_list()


def _raise_invalid(spec: Spec, problems: dict[str, int]) -> None:
    fav, unf = list(spec.favorable), list(spec.unfavorable or [])
    if problems["invalid_label"]:
        e = spec.roles["y_true"]
        bad = e.is_not_null() & ~e.is_in(fav + unf)
        msg = (
            f"y_true={_describe(spec, 'y_true')}: {problems['invalid_label']} rows have labels that are "
            f"neither favorable {fav} nor unfavorable {unf}; found e.g. {_examples(spec, 'y_true', bad)}. "
            "Map them to one of the two, filter them out, or drop unfavorable= to treat every "
            "non-favorable label as unfavorable"
        )
        raise InvalidInputError(msg)
    if problems["invalid_prediction"]:
        e = spec.roles["y_pred"]
        bad = e.is_not_null() & ~e.is_in(fav + unf)
        msg = (
            f"y_pred={_describe(spec, 'y_pred')}: {problems['invalid_prediction']} rows have predicted "
            f"labels that are neither favorable {fav} nor unfavorable {unf}; found e.g. "
            f"{_examples(spec, 'y_pred', bad)}. Map them to one of the two or drop unfavorable="
        )
        raise InvalidInputError(msg)
    if problems["invalid_score"]:
        s = spec.roles["y_score"].cast(pl.Float64)
        bad = s.is_nan() | (s < 0) | (s > 1)
        msg = (
            f"y_score={_describe(spec, 'y_score')}: {problems['invalid_score']} rows have scores that are "
            f"NaN or outside [0, 1]; found e.g. {_examples(spec, 'y_score', bad)}. Scores are "
            "probabilities of the favorable label: rescale them (e.g. a sigmoid of logits) or clip"
        )
        raise InvalidInputError(msg)
    if problems["invalid_weight"]:
        w = spec.roles["weight"].cast(pl.Float64)
        bad = w.is_nan() | w.is_infinite() | (w < 0)
        msg = (
            f"weight={_describe(spec, 'weight')}: {problems['invalid_weight']} rows have weights that "
            f"are negative, NaN or infinite; found e.g. {_examples(spec, 'weight', bad)}. Weights must "
            "be finite and >= 0"
        )
        raise InvalidInputError(msg)


def fairness_report(
    data: Any,
    *,
    y_true: IntoExpr,
    y_pred: IntoExpr | None = None,
    y_score: IntoExpr | None = None,
    threshold: float = 0.5,
    protected: IntoExpr | Sequence[IntoExpr],
    favorable: Any = 1,
    unfavorable: Any = None,
    privileged: Mapping[str, Any] | None = None,
    reference: Reference | None = None,
    weight: IntoExpr | None = None,
    by: IntoExpr | Sequence[IntoExpr] | None = None,
    intersections: int | Sequence[Sequence[str]] | None = None,
    alpha: float = 2.0,
    concentration: float = 1.0,
    on_missing: OnMissing = "warn",
    engine: str = "streaming",
) -> pl.DataFrame:
    """Audit a classifier's decisions (or a dataset's labels) for group fairness, in one pass.

    Reads the input once (one ``group_by`` to the cell table, :func:`polfair.confusion_counts`),
    then computes every group metric for every protected attribute, every intersection of them and
    the whole population, compares each group with a reference group, and adds the entropy
    indices and differential fairness, all from the cell table. Use it as
    ``df.pipe(pf.fairness_report, ...)``.

    Parameters
    ----------
    data
        ``pl.DataFrame``, ``pl.LazyFrame``, pandas DataFrame, pyarrow Table, or a parquet/CSV path
        (scanned lazily).
    y_true, y_pred, y_score, threshold, protected, favorable, unfavorable, weight, by
        As in :func:`polfair.confusion_counts`. Without ``y_pred`` and ``y_score`` the report audits
        the labels alone (base rates; statistical parity and disparate impact on base rates; EDF),
        as aif360's ``BinaryLabelDatasetMetric`` does.
    privileged
        Optional mapping attribute -> privileged value (or list of values), e.g.
        ``{"race": "Caucasian", "sex": "Male"}``. An attribute set whose attributes all have a
        privileged value is compared with that group; others fall back to the largest group.
    reference
        ``None`` (default: privileged where given, else largest), ``"privileged"`` (require
        ``privileged`` for every attribute set; others get null comparisons), ``"largest"``
        (the group with the largest total weight), ``"overall"`` (the whole population), or
        ``"best"`` (per metric, the group with the best value: highest for rates where higher is
        better, lowest for error rates; highest for counts).
    intersections
        ``None`` (all non-empty subsets of the protected attributes), an int ``k`` (subsets of at
        most ``k`` attributes), or an explicit list of attribute-name lists.
    alpha
        Float, the α of ``generalized_entropy_index`` (default 2).
    concentration
        Float ≥ 0, the smoothing of ``smoothed_empirical_differential_fairness`` (default 1).
    on_missing
        ``"warn"`` | ``"raise"`` | ``"ignore"``: what to do about rows with a null label,
        prediction, score or weight (always counted in ``n_missing`` and excluded from rates).
    engine
        Polars engine for the pass; default ``"streaming"`` (bounded memory).

    Returns
    -------
    pl.DataFrame
        Long/tidy report with columns ``*by, attribute, group, metric, value, reference_group,
        difference, ratio, n``; see :mod:`polfair.report` for the schema and row kinds. Rates
        are fractions in [0, 1]; counts are weighted when ``weight`` is given.

    Raises
    ------
    ColumnNotFoundError
        A named column is missing (suggests close names).
    InvalidInputError
        Empty input, invalid labels/scores/weights, or missing values with ``on_missing="raise"``.
    PolfairError
        Invalid options, or a protected attribute that is the label.

    Warns
    -----
    MissingValuesWarning
        Rows with a null label, prediction, score or weight (with ``on_missing="warn"``).

    Notes
    -----
    Policies. Signs: ``difference = group − reference``, ``ratio = group / reference`` (aif360's
    unprivileged − privileged when the reference is the privileged group). Undefined values
    (zero denominators, ratios to a 0 reference) are null, never 0 or inf; where aif360 returns
    0.0 (PPV/NPV/FDR/FOR/accuracy of an empty group) or inf (x/0 ratios), the report returns null
    on purpose; the aif360-compatible classes reproduce aif360. ``equalized_odds_difference`` is
    null when either rate difference is undefined (aif360's builtin ``max`` would return one of
    them depending on argument order). The entropy indices are unweighted and use hard
    predictions (as aif360). A null protected value is its own group, shown as ``"null"``.

    Examples
    --------
    >>> import polars as pl
    >>> import polfair as pf
    >>> df = pl.DataFrame({
    ...     "y": [1, 0, 1, 1, 0, 0], "p": [1, 1, 0, 1, 0, 1],
    ...     "sex": ["f", "f", "f", "m", "m", "m"]})
    >>> rep = df.pipe(pf.fairness_report, y_true="y", y_pred="p", protected="sex",
    ...               privileged={"sex": "m"})
    >>> rep.filter(pl.col("metric") == "selection_rate", pl.col("group").is_not_null()).select(
    ...     "group", "value", "reference_group", "difference", "ratio")
    shape: (2, 5)
    ┌───────┬──────────┬─────────────────┬────────────┬───────┐
    │ group ┆ value    ┆ reference_group ┆ difference ┆ ratio │
    │ ---   ┆ ---      ┆ ---             ┆ ---        ┆ ---   │
    │ str   ┆ f64      ┆ str             ┆ f64        ┆ f64   │
    ╞═══════╪══════════╪═════════════════╪════════════╪═══════╡
    │ f     ┆ 0.666667 ┆ m               ┆ 0.0        ┆ 1.0   │
    │ m     ┆ 0.666667 ┆ m               ┆ 0.0        ┆ 1.0   │
    └───────┴──────────┴─────────────────┴────────────┴───────┘
    """
    spec = build_spec(
        data, y_true=y_true, y_pred=y_pred, y_score=y_score, threshold=threshold,
        protected=protected, favorable=favorable, unfavorable=unfavorable, weight=weight, by=by,
    )  # fmt: skip
    cells = collect_cells(spec, on_missing=on_missing, engine=engine)
    return report_from_counts(
        cells, protected=spec.keys, by=spec.by, has_predictions=spec.has_predictions,
        privileged=privileged, reference=reference, intersections=intersections,
        alpha=alpha, concentration=concentration,
    )  # fmt: skip


def _attribute_sets(keys: Sequence[str], intersections: int | Sequence[Sequence[str]] | None) -> list[tuple[str, ...]]:
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


def _value_str(v: Any) -> str:
    if v is None:
        return "null"
    return str(pl.Series([v]).cast(pl.String)[0])


def _group_str(keys: Sequence[str]) -> pl.Expr:
    return pl.concat_str([pl.col(k).cast(pl.String).fill_null("null") for k in keys], separator=" & ")


def _rollup(cells: pl.DataFrame, group: Sequence[str]) -> pl.DataFrame:
    sums = [pl.col(c).sum() for c in _SUMS]
    if not group:
        return cells.select(sums)
    return cells.group_by(list(group)).agg(sums).sort(list(group), nulls_last=False)


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
        The report (schema in :mod:`polfair.report`).

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
    cells = cells.collect() if isinstance(cells, pl.LazyFrame) else cells
    keys, by = list(protected), list(by)
    if reference not in (None, "privileged", "largest", "overall", "best"):
        msg = f"reference must be one of {{None, 'privileged', 'largest', 'overall', 'best'}}, got {reference!r}"
        raise PolfairError(msg)
    privileged = dict(privileged or {})
    for k in privileged:
        if k not in keys:
            msg = f"privileged names {k!r}, which is not a protected attribute {keys}"
            raise PolfairError(msg)
    metric_names = [m.name for m in METRICS.values() if has_predictions or m.needs == "labels"]
    disparities = list(DISPARITIES.values()) if has_predictions else label_disparities()

    pop = _rollup(cells, by).with_columns(group_metrics(has_predictions))
    parts = [_population_rows(cells, pop, keys, by, has_predictions, metric_names, alpha, concentration)]
    for ai, attrs in enumerate(_attribute_sets(keys, intersections)):
        rolled = _rollup(cells, [*by, *attrs]).with_columns(group_metrics(has_predictions))
        rolled = rolled.with_columns(_group_str(attrs).alias(_G)).with_row_index(_SORT_G)
        ref = _reference(rolled, pop, attrs, by, privileged, reference, metric_names)
        name = " & ".join(attrs)
        parts.append(_group_rows(rolled, ref, by, metric_names, disparities, name, ai))
        parts.append(_attribute_rows(rolled, pop, by, metric_names, has_predictions, alpha, concentration, name, ai))
    out = pl.concat([p for p in parts if p.height], how="diagonal_relaxed")
    out = out.with_columns(pl.col("metric").replace_strict(_ORDER, default=len(_ORDER)).alias(_SORT_M))
    out = out.sort([*by, _SORT_A, _SORT_G, _SORT_M], nulls_last=False)
    return out.select(
        *by,
        pl.col("attribute").cast(pl.String),
        pl.col("group").cast(pl.String),
        pl.col("metric").cast(pl.String),
        pl.col("value").cast(pl.Float64),
        pl.col("reference_group").cast(pl.String),
        pl.col("difference").cast(pl.Float64),
        pl.col("ratio").cast(pl.Float64),
        pl.col("n").cast(pl.Int64),
    )


def _reference(
    rolled: pl.DataFrame,
    pop: pl.DataFrame,
    attrs: Sequence[str],
    by: list[str],
    privileged: dict[str, Any],
    reference: Reference | None,
    metric_names: list[str],
) -> pl.DataFrame:
    """One row per ``by`` group: ``<metric>__ref`` values and ``<metric>__refname`` group names."""
    mode = reference
    if mode is None:
        mode = "privileged" if privileged and all(a in privileged for a in attrs) else "largest"
    if mode == "privileged":
        if not all(a in privileged for a in attrs):
            ref = pop.select(*by).with_columns([pl.lit(None, pl.Float64).alias(m) for m in metric_names])
            return _named(ref, by, metric_names, pl.lit(None, pl.String))
        cond = pl.lit(True)
        labels = []
        for a in attrs:
            vals = [_value_str(v) for v in (privileged[a] if isinstance(privileged[a], (list, tuple, set)) else [privileged[a]])]
            cond = cond & pl.col(a).cast(pl.String).fill_null("null").is_in(vals)
            labels.append("|".join(vals))
        chosen = rolled.filter(cond)
        sums = [pl.col(c).sum() for c in _SUMS]
        agg = chosen.group_by(by).agg(sums) if by else chosen.select(sums)
        agg = pop.select(*by).join(agg, on=by, how="left", nulls_equal=True) if by else agg
        agg = agg.with_columns(group_metrics(True)) if "tp" in agg.columns else agg
        ref = agg.select(*by, *metric_names)
        return _named(ref, by, metric_names, pl.lit(" & ".join(labels)))
    if mode == "overall":
        return _named(pop.select(*by, *metric_names), by, metric_names, pl.lit("overall"))
    if mode == "largest":
        best = rolled.sort([*by, "w", _SORT_G], descending=[False] * len(by) + [True, False], nulls_last=False)
        first = best.group_by(by, maintain_order=True).first() if by else best.head(1)
        return _named(first.select(*by, *metric_names, _G), by, metric_names, pl.col(_G))
    # best: per metric
    cols = []
    for m in metric_names:
        hib = METRICS[m].higher_is_better
        pick = pl.col(m).max() if hib in (True, None) else pl.col(m).min()
        cols += [pick.alias(f"{m}__ref"), pl.col(_G).filter(pl.col(m) == pick).first().alias(f"{m}__refname")]
    return rolled.group_by(by).agg(cols) if by else rolled.select(cols)


def _named(ref: pl.DataFrame, by: list[str], metric_names: list[str], name: pl.Expr) -> pl.DataFrame:
    return ref.select(
        *by,
        *[pl.col(m).alias(f"{m}__ref") for m in metric_names],
        *[name.alias(f"{m}__refname") for m in metric_names],
    )


def _join_ref(rolled: pl.DataFrame, ref: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    if by:
        return rolled.join(ref, on=by, how="left", nulls_equal=True)
    return rolled.join(ref, how="cross")


def _group_rows(
    rolled: pl.DataFrame,
    ref: pl.DataFrame,
    by: list[str],
    metric_names: list[str],
    disparities: list[Disparity],
    attribute: str,
    ai: int,
) -> pl.DataFrame:
    wide = _join_ref(rolled, ref, by)
    common = [*by, pl.lit(attribute).alias("attribute"), pl.col(_G).alias("group"),
              pl.col("n").cast(pl.Int64), pl.lit(ai).alias(_SORT_A), pl.col(_SORT_G).cast(pl.Int64)]  # fmt: skip
    frames = [
        wide.select(*common, metric=pl.lit("n_missing"), value=pl.col("n_missing").cast(pl.Float64))
    ]
    for m in metric_names:
        frames.append(
            wide.select(
                *common,
                metric=pl.lit(m),
                value=pl.col(m),
                reference_group=pl.col(f"{m}__refname"),
                difference=pl.col(m) - pl.col(f"{m}__ref"),
                ratio=rate(pl.col(m), pl.col(f"{m}__ref")),
            )
        )
    for d in disparities:
        g = pl.col
        r = lambda m: pl.col(f"{m}__ref")  # noqa: E731
        names = [pl.col(f"{m}__refname") for m in d.rates]
        refname = names[0]
        for other in names[1:]:
            refname = pl.when(refname == other).then(refname).otherwise(
                pl.concat_str([refname, other], separator=" / ")
            )
        frames.append(
            wide.select(*common, metric=pl.lit(d.name), value=d.formula(g, r), reference_group=refname)
        )
    return pl.concat(frames, how="diagonal_relaxed")


def _attribute_rows(
    rolled: pl.DataFrame,
    pop: pl.DataFrame,
    by: list[str],
    metric_names: list[str],
    has_predictions: bool,
    alpha: float,
    concentration: float,
    attribute: str,
    ai: int,
) -> pl.DataFrame:
    def spread(m: str) -> tuple[pl.Expr, pl.Expr]:
        ok = pl.col(m).null_count() == 0
        return (
            pl.when(ok).then(pl.col(m).max() - pl.col(m).min()),
            pl.when(ok).then(rate(pl.col(m).min(), pl.col(m).max())),
        )

    aggs = []
    for m in metric_names:
        d, r = spread(m)
        aggs += [d.alias(f"{m}__d"), r.alias(f"{m}__r")]
    spreads = rolled.group_by(by).agg(aggs) if by else rolled.select(aggs)
    base = pop.select(*by, pl.col("n").cast(pl.Int64))
    spreads = base.join(spreads, on=by, how="left", nulls_equal=True) if by else base.join(spreads, how="cross")
    common = [*by, pl.lit(attribute).alias("attribute"), pl.lit(None, pl.String).alias("group"), "n",
              pl.lit(ai).alias(_SORT_A), pl.lit(-1, pl.Int64).alias(_SORT_G)]  # fmt: skip
    frames = [
        spreads.select(*common, metric=pl.lit(m), difference=pl.col(f"{m}__d"), ratio=pl.col(f"{m}__r"))
        for m in metric_names
    ]
    values: dict[str, pl.Expr] = {}
    if has_predictions:
        values["demographic_parity_difference"] = pl.col("selection_rate__d")
        values["demographic_parity_ratio"] = pl.col("selection_rate__r")
        tpr_d, fpr_d = pl.col("true_positive_rate__d"), pl.col("false_positive_rate__d")
        tpr_r, fpr_r = pl.col("true_positive_rate__r"), pl.col("false_positive_rate__r")
        values["equalized_odds_difference"] = pl.when(tpr_d.is_not_null() & fpr_d.is_not_null()).then(
            pl.max_horizontal(tpr_d, fpr_d)
        )
        values["equalized_odds_ratio"] = pl.when(tpr_r.is_not_null() & fpr_r.is_not_null()).then(
            pl.min_horizontal(tpr_r, fpr_r)
        )
    named = spreads.select(*common, *[v.alias(k) for k, v in values.items()])
    extra = _indices(rolled, by, has_predictions, alpha, concentration, prefix="between_group_", edf=True)
    named = named.join(extra, on=by, how="left", nulls_equal=True) if by else named.join(extra, how="cross")
    frames.append(named.unpivot(index=[*by, "attribute", "group", "n", _SORT_A, _SORT_G],
                                variable_name="metric", value_name="value"))  # fmt: skip
    return pl.concat(frames, how="diagonal_relaxed")


def _indices(
    table: pl.DataFrame,
    by: list[str],
    has_predictions: bool,
    alpha: float,
    concentration: float,
    *,
    prefix: str,
    edf: bool,
) -> pl.DataFrame:
    """Between-group entropy indices (and EDF) of ``table``'s groups, one row per ``by`` group."""
    benefits = entropy.benefit_of_groups(table, by)
    out = _entropy_family(benefits, by, alpha, prefix) if has_predictions else None
    if edf:
        c = pl.col
        lab = entropy.smoothed_empirical_differential_fairness(
            table, c("tp") + c("fn"), c("tp") + c("fn") + c("fp") + c("tn"), concentration, by
        ).rename({"value": "smoothed_empirical_differential_fairness"})
        out = lab if out is None else _join(out, lab, by)
        if has_predictions:
            pred = entropy.smoothed_empirical_differential_fairness(
                table, c("tp") + c("fp"), c("tp") + c("fn") + c("fp") + c("tn"), concentration, by
            ).rename({"value": "smoothed_empirical_differential_fairness_predictions"})
            out = _join(out, pred, by)
    return out if out is not None else pl.DataFrame()


def _join(a: pl.DataFrame, b: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    return a.join(b, on=by, how="full", coalesce=True, nulls_equal=True) if by else a.join(b, how="cross")


def _entropy_family(benefits: pl.DataFrame, by: list[str], alpha: float, prefix: str) -> pl.DataFrame:
    ge = entropy.generalized_entropy_index(benefits, alpha, by).rename({"value": f"{prefix}generalized_entropy_index"})
    th = entropy.generalized_entropy_index(benefits, 1.0, by).rename({"value": f"{prefix}theil_index"})
    ge2 = entropy.generalized_entropy_index(benefits, 2.0, by)
    cv = ge2.select(*by, (2.0 * pl.col("value")).sqrt().alias(f"{prefix}coefficient_of_variation"))
    return _join(_join(ge, th, by), cv, by)


def _population_rows(
    cells: pl.DataFrame,
    pop: pl.DataFrame,
    keys: list[str],
    by: list[str],
    has_predictions: bool,
    metric_names: list[str],
    alpha: float,
    concentration: float,
) -> pl.DataFrame:
    common = [*by, pl.lit(None, pl.String).alias("attribute"), pl.lit(None, pl.String).alias("group"),
              pl.col("n").cast(pl.Int64), pl.lit(-1).alias(_SORT_A), pl.lit(-1, pl.Int64).alias(_SORT_G)]  # fmt: skip
    frames = [pop.select(*common, metric=pl.lit("n_missing"), value=pl.col("n_missing").cast(pl.Float64))]
    frames += [pop.select(*common, metric=pl.lit(m), value=pl.col(m)) for m in metric_names]
    index_cols = [*by, "attribute", "group", "n", _SORT_A, _SORT_G]
    full = _rollup(cells, [*by, *keys])
    vals = _indices(full, by, has_predictions, alpha, concentration, prefix="between_all_groups_", edf=True)
    if has_predictions:
        ind = _entropy_family(entropy.benefit_of_individuals(cells, by), by, alpha, prefix="")
        vals = _join(vals, ind, by)
        vals = vals.with_columns(
            differential_fairness_bias_amplification=pl.col("smoothed_empirical_differential_fairness_predictions")
            - pl.col("smoothed_empirical_differential_fairness")
        )
    head = pop.select(*common)
    wide = head.join(vals, on=by, how="left", nulls_equal=True) if by else head.join(vals, how="cross")
    frames.append(wide.unpivot(index=index_cols, variable_name="metric", value_name="value"))
    return pl.concat(frames, how="diagonal_relaxed")
