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
import json
import warnings
from typing import Any, Literal, Mapping, Sequence

import polars as pl

from polfair.core import entropy
from polfair.core._args import SMALL_COLLECT as _SMALL
from polfair.core._report_rows import Part, assemble
from polfair.core._typing import Reference
from polfair.core.counts import COUNT_COLUMNS, check_cell_table
from polfair.core.metrics import DISPARITIES, METRICS, Disparity, group_metrics, label_disparities, rate
from polfair.core.values import coerce_values, match_values
from polfair.exceptions import PolfairError, ReportSizeWarning

__all__ = [
    "GROUP_KEY",
    "LARGE_REPORT_ROWS",
    "REPORT_COLUMNS",
    "SEPARATOR",
    "attribute_sets",
    "check_protected_names",
    "check_reference",
    "group_label",
    "parse_group_label",
    "report_from_counts",
    "value_label",
]

#: The report's core columns after the ``by`` columns, in order (``n_groups``, ``excluded_groups``
#: and ``group_key`` follow them; with ``ci`` the interval columns sit between ``n`` and those).
REPORT_COLUMNS = ("attribute", "group", "metric", "value", "reference_group", "difference", "ratio", "n")
#: The typed group key: a Struct with one field per protected attribute (SQL GROUPING SETS shape).
GROUP_KEY = "group_key"
#: Joins attribute names in ``attribute`` and values in ``group``.
SEPARATOR = " & "
#: Reports estimated to have more rows than this warn (:class:`~polfair.exceptions.ReportSizeWarning`).
LARGE_REPORT_ROWS = 5_000_000

_G = "__pf_group"
_PRIV, _MODE, _PLABEL = "__pf_priv", "__pf_mode", "__pf_plabel"
_SORT_A, _SORT_G = "__pf_sa", "__pf_sg"
_SUMS = list(COUNT_COLUMNS)
_ALLKEY = "__pf_all"

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


def _ordered(names: Sequence[str]) -> list[str]:
    return sorted(dict.fromkeys(names), key=lambda m: _ORDER.get(m, len(_ORDER)))


def check_reference(reference: Any) -> None:
    """Raise unless ``reference`` is one of the reference modes of :func:`fairness_report`.

    Examples
    --------
    >>> check_reference("largest")
    """
    if reference not in (None, "privileged", "largest", "overall", "best"):
        msg = f"reference must be one of {{None, 'privileged', 'largest', 'overall', 'best'}}, got {reference!r}"
        raise PolfairError(msg)


def check_protected_names(keys: Sequence[str]) -> None:
    """Raise if a protected attribute's name contains the separator ``" & "`` (it would make the
    ``attribute`` column ambiguous).

    Examples
    --------
    >>> check_protected_names(["sex", "race"])
    """
    bad = [k for k in keys if SEPARATOR in k]
    if bad:
        msg = (
            f"protected: the attribute name(s) {bad} contain {SEPARATOR!r}, which joins attribute names in the "
            "report's 'attribute' column; rename the column(s), e.g. with .alias('sex_and_race')"
        )
        raise PolfairError(msg)


Intersections = int | Literal["all"] | Sequence[Sequence[str]] | None


def attribute_sets(keys: Sequence[str], intersections: Intersections) -> list[tuple[str, ...]]:
    """The attribute sets a report covers, in report order.

    Parameters
    ----------
    keys
        The protected attribute names, in order.
    intersections
        ``None`` (the default sets: every subset when there are at most 3 attributes; otherwise
        every single attribute, every pair and the full intersection), ``"all"`` (every non-empty
        subset: ``2^k − 1`` sets), an int ``k`` (every subset of at most ``k`` attributes), or an
        explicit list of attribute-name lists.

    Returns
    -------
    list of tuple of str
        Attribute sets by size, then in the order of ``keys``.

    Raises
    ------
    PolfairError
        ``intersections`` < 1, an unknown attribute, an empty set, or an unknown string.

    Examples
    --------
    >>> attribute_sets(["a", "b", "c"], None)
    [('a',), ('b',), ('c',), ('a', 'b'), ('a', 'c'), ('b', 'c'), ('a', 'b', 'c')]
    >>> len(attribute_sets(list("abcdefgh"), None)), len(attribute_sets(list("abcdefgh"), "all"))
    (37, 255)
    """
    keys = list(keys)
    if intersections is None and len(keys) > 3:
        sets = [s for k in (1, 2) for s in itertools.combinations(keys, k)]
        return sets + [tuple(keys)]
    if intersections is None or intersections == "all" or isinstance(intersections, int):
        if isinstance(intersections, bool):
            msg = f"intersections must be None, 'all', an int or a list of attribute lists, got {intersections!r}"
            raise PolfairError(msg)
        top = len(keys) if intersections in (None, "all") else int(intersections)  # type: ignore[arg-type]
        if top < 1:
            msg = f"intersections must be >= 1 (the largest attribute-set size), got {intersections!r}"
            raise PolfairError(msg)
        return [s for k in range(1, min(top, len(keys)) + 1) for s in itertools.combinations(keys, k)]
    if isinstance(intersections, str):
        msg = f"intersections must be None, 'all', an int or a list of attribute lists, got {intersections!r}"
        raise PolfairError(msg)
    out = []
    for s in intersections:
        t = (s,) if isinstance(s, str) else tuple(s)
        unknown = [a for a in t if a not in keys]
        if unknown or not t:
            msg = f"intersections: {list(t)!r} must be a non-empty list of protected attributes {list(keys)}"
            raise PolfairError(msg)
        out.append(tuple(k for k in keys if k in t))  # canonical order
    return list(dict.fromkeys(out))


def _needs_quotes(s: str) -> bool:
    return s == "null" or SEPARATOR in s or s.startswith(('"', "& ")) or s.endswith(" &")


def value_label(v: Any) -> str:
    """How one protected value is shown in ``group`` / ``reference_group``.

    Its text (Polars' cast to String); ``"null"`` for a null; JSON-quoted when the text could be
    confused with a null, a separator or a quoted value: it equals ``"null"``, contains ``" & "``,
    starts with ``"& "`` or a double quote, or ends with ``" &"``.

    Examples
    --------
    >>> value_label("Female"), value_label(None), value_label("null"), value_label("a & b"), value_label(1.5)
    ('Female', 'null', '"null"', '"a & b"', '1.5')
    """
    if v is None:
        return "null"
    s = v if isinstance(v, str) else str(pl.Series([v]).cast(pl.String)[0])
    return json.dumps(s, ensure_ascii=False) if _needs_quotes(s) else s


def _label_expr(key: str) -> pl.Expr:
    s = pl.col(key).cast(pl.String)
    needs = (
        (s == "null") | s.str.contains(SEPARATOR, literal=True) | s.str.starts_with('"') | s.str.starts_with("& ")
        | s.str.ends_with(" &")
    )  # fmt: skip
    escaped = s.str.replace_all("\\", "\\\\", literal=True).str.replace_all('"', '\\"', literal=True)
    quoted = pl.concat_str([pl.lit('"'), escaped, pl.lit('"')])
    return pl.when(needs).then(quoted).otherwise(s).fill_null("null")


def group_label(keys: Sequence[str]) -> pl.Expr:
    """Expression: the display label of a group, its values (:func:`value_label`) joined by ``" & "``.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"a": ["x & y", "null", None], "b": [1, 2, 3]})
    >>> df.select(group_label(["a", "b"])).to_series().to_list()
    ['"x & y" & 1', '"null" & 2', 'null & 3']
    """
    return pl.concat_str([_label_expr(k) for k in keys], separator=SEPARATOR)


def parse_group_label(label: str) -> tuple[str | None, ...]:
    """The values of a ``group`` label as text (None for a null): the inverse of :func:`group_label`.

    Examples
    --------
    >>> parse_group_label('"x & y" & 1 & null & "null"')
    ('x & y', '1', None, 'null')
    """
    out: list[str | None] = []
    i, decoder = 0, json.JSONDecoder(strict=False)
    while True:
        if label.startswith('"', i):
            value, i = decoder.raw_decode(label, i)
            out.append(value)
        else:
            j = label.find(SEPARATOR, i)
            token = label[i:] if j < 0 else label[i:j]
            out.append(None if token == "null" else token)
            i = len(label) if j < 0 else j
        if i >= len(label):
            return tuple(out)
        if not label.startswith(SEPARATOR, i):
            msg = f"not a group label: {label!r} (expected {SEPARATOR!r} at position {i})"
            raise ValueError(msg)
        i += len(SEPARATOR)


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
    intersections: Intersections = None,
    alpha: float = 2.0,
    concentration: float = 1.0,
) -> pl.DataFrame:
    """Build the fairness report from a cell table (e.g. merged from partitions).

    Parameters
    ----------
    cells
        A cell table (:func:`polfair.confusion_counts`, :func:`polfair.merge_counts`), eager or lazy.
    protected
        Names of its protected-attribute columns, in order. Names may not contain ``" & "``.
    by
        Names of its ``by`` columns.
    has_predictions
        ``False`` for a labels-only audit (only label metrics are reported).
    privileged, reference, intersections, alpha, concentration
        As in :func:`polfair.fairness_report`. ``privileged`` values are matched in the column's
        dtype (``None`` names the null group, the string ``"null"`` only a real string).

    Returns
    -------
    pl.DataFrame
        The report (schema and row kinds in :mod:`polfair.core.report`).

    Raises
    ------
    PolfairError
        Unknown ``reference``, ``privileged`` naming a non-protected column or a value the column's
        dtype cannot hold, bad ``intersections``, a protected name containing ``" & "``.

    Warns
    -----
    ReportSizeWarning
        When the report would have more than :data:`LARGE_REPORT_ROWS` rows (pass fewer
        ``intersections``).

    Examples
    --------
    >>> import polars as pl
    >>> import polfair as pf
    >>> df = pl.DataFrame({"y": [1, 0, 1, 0], "p": [1, 0, 0, 0], "g": ["a", "a", "b", "b"]})
    >>> cells = pf.confusion_counts(df, y_true="y", y_pred="p", protected="g").collect()
    >>> rep = pf.report_from_counts(cells, protected=["g"])
    >>> rep.filter(metric="true_positive_rate", group="b")["value"].item()
    0.0
    >>> rep.filter(metric="true_positive_rate", group="b")["group_key"].item()
    {'g': 'b'}
    """
    # All attribute sets are rolled up into ONE small table keyed by a set index (grouping sets), so
    # metrics, references, spreads, entropy and EDF are computed once over it, not once per set;
    # the long rows are then laid out once (polfair.core._report_rows.assemble).
    keys, by = list(protected), list(by)
    check_cell_table(cells, keys=[*by, *keys], what="cells")
    check_reference(reference)
    check_protected_names(keys)
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
    lf = cells.lazy()
    schema = lf.collect_schema()
    lf = lf.rename(dict(zip(by, ib)))
    if not by:
        lf = lf.with_columns(pl.lit(0, pl.Int8).alias(_ALLKEY))
    # one chunk: sums over a multi-chunk frame may add in a run-dependent order
    lf = lf.collect(**_SMALL).rechunk().lazy()
    metric_names = _metric_names(has_predictions)
    sets = attribute_sets(keys, intersections)
    sk = [*ib, _SORT_A]  # the key of one (by group, attribute set)

    pop = _rollup(lf, ib).with_columns(group_metrics(has_predictions)).collect(**_SMALL)
    groups, modes = _groups(lf, keys, ib, sets, schema, privileged, reference, has_predictions)
    _warn_size(groups.height, pop.height, len(sets), has_predictions)
    ref = _reference(groups.lazy(), pop.lazy(), sk, ib, metric_names, modes, has_predictions)
    parts = [
        _population_part(lf, pop, keys, ib, has_predictions, metric_names, alpha, concentration),
        _attribute_part(groups, pop, sk, ib, has_predictions, alpha, concentration),
        _group_part(groups, ref, sk, ib, has_predictions),
    ]
    entity_cols = [*ib, "attribute", "group", "n", GROUP_KEY]
    out = assemble(parts, [*ib, _SORT_A, _SORT_G], entity_cols, ["value", "difference", "ratio", "n_groups"],
                   ["reference_group", "excluded_groups"])  # fmt: skip
    return out.select(
        *[pl.col(i).alias(b) for i, b in zip(ib, by)],
        "attribute", "group", "metric", "value", "reference_group", "difference", "ratio", "n",
        pl.col("n_groups").cast(pl.Int64), pl.col("excluded_groups").cast(pl.String), GROUP_KEY,
    )  # fmt: skip


def _warn_size(n_groups: int, n_by: int, n_sets: int, has_predictions: bool) -> None:
    per_group = 1 + len(_metric_names(has_predictions)) + len(_disparity_list(has_predictions))
    rows = n_groups * per_group + n_by * n_sets * (len(_metric_names(has_predictions)) + len(_ATTR_METRICS))
    if rows > LARGE_REPORT_ROWS:
        msg = (
            f"the report will have about {rows:,} rows ({n_groups:,} groups in {n_sets} attribute sets"
            f"{f' x {n_by} by values' if n_by > 1 else ''}); pass intersections=1 or 2 (or a list of "
            "attribute sets), fewer protected attributes, or coarser groups (bin high-cardinality "
            "columns) for a smaller one"
        )
        warnings.warn(msg, ReportSizeWarning, stacklevel=4)


def _groups(
    lf: pl.LazyFrame,
    keys: list[str],
    ib: list[str],
    sets: list[tuple[str, ...]],
    schema: pl.Schema,
    privileged: dict[str, Any],
    reference: Reference | None,
    has_predictions: bool,
) -> tuple[pl.DataFrame, set[str]]:
    """Every group of every attribute set (and by value): sums, metrics, labels and typed keys."""
    frames = []
    modes: set[str] = set()
    typed = {a: coerce_values(privileged[a], schema[a], option="privileged", column=a) for a in privileged}
    for ai, attrs in enumerate(sets):
        covered = all(a in privileged for a in attrs)
        mode = reference or ("privileged" if privileged and covered else "largest")
        modes.add(mode)
        is_priv = pl.lit(False)
        label = None
        if mode == "privileged" and covered:
            is_priv = pl.lit(True)
            for a in attrs:
                is_priv = is_priv & match_values(pl.col(a), schema[a], typed[a])
            label = SEPARATOR.join("|".join(value_label(v) for v in typed[a]) for a in attrs)
        key = pl.struct([pl.col(k) if k in attrs else pl.lit(None, schema[k]).alias(k) for k in keys])
        frames.append(
            _rollup(lf, [*ib, *attrs])
            .sort([*ib, *attrs], nulls_last=False)
            .select(
                *ib, pl.lit(ai, pl.Int64).alias(_SORT_A), pl.lit(SEPARATOR.join(attrs)).alias("attribute"),
                group_label(attrs).alias(_G), key.alias(GROUP_KEY), is_priv.alias(_PRIV),
                pl.lit(mode).alias(_MODE), pl.lit(label, pl.String).alias(_PLABEL), *_SUMS,
            )  # fmt: skip
        )
    groups = (
        pl.concat(frames).with_row_index(_SORT_G).with_columns(pl.col(_SORT_G).cast(pl.Int64))
        .with_columns(group_metrics(has_predictions)).collect(**_SMALL).rechunk()
    )  # fmt: skip
    return groups, modes


def _metric_names(has_predictions: bool) -> list[str]:
    return [m.name for m in METRICS.values() if has_predictions or m.needs == "labels"]


def _disparity_list(has_predictions: bool) -> list[Disparity]:
    return list(DISPARITIES.values()) if has_predictions else label_disparities()


def _reference(
    groups: pl.LazyFrame,
    pop: pl.LazyFrame,
    sk: list[str],
    ib: list[str],
    metric_names: list[str],
    modes: set[str],
    has_predictions: bool,
) -> pl.DataFrame:
    """One row per (by group, attribute set): ``<metric>__ref`` values and ``<name>__refname``
    (Categorical) for every metric and named disparity. Only the branches of the ``modes`` in use are built."""

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
    ref = parts[0] if len(parts) == 1 else pl.concat(parts, how="diagonal_relaxed")

    def refname(d: Disparity) -> pl.Expr:
        names = [pl.col(f"{m}__refname") for m in d.rates]
        out = names[0]
        for other in names[1:]:  # "best" may pick a different group per rate
            out = pl.when(out == other).then(out).otherwise(pl.concat_str([out, other], separator=" / "))
        return out.alias(f"{d.name}__refname")

    ref = ref.with_columns([refname(d) for d in _disparity_list(has_predictions)])
    return ref.collect(**_SMALL).with_columns(pl.col("^.*__refname$").cast(pl.Categorical))


def _named(ref: pl.LazyFrame, sk: list[str], metric_names: list[str], name: pl.Expr) -> pl.LazyFrame:
    return ref.select(
        *sk,
        *[pl.col(m).alias(f"{m}__ref") for m in metric_names],
        *[name.alias(f"{m}__refname") for m in metric_names],
    )


def _entities(frame: pl.DataFrame, ib: list[str], sort_a: pl.Expr, sort_g: pl.Expr, *extra: pl.Expr) -> pl.DataFrame:
    return frame.select(*ib, sort_a.cast(pl.Int64).alias(_SORT_A), sort_g.cast(pl.Int64).alias(_SORT_G), *extra)


def _group_part(groups: pl.DataFrame, ref: pl.DataFrame, sk: list[str], ib: list[str], has_predictions: bool) -> Part:
    """Group rows: every metric vs the reference, and the named disparities."""
    metric_names, disparities = _metric_names(has_predictions), _disparity_list(has_predictions)
    wide = groups.join(ref, on=sk, how="left", nulls_equal=True, maintain_order="left")

    def r(m: str) -> pl.Expr:
        # Polars may hold a reference value that is the same on every row as a broadcast scalar,
        # and divides by a scalar via its reciprocal (a·(1/b), one ulp off a/b). Adding 0·row
        # index makes it a per-row column (exactly equal), so every ratio is the rounded a/b.
        return pl.col(f"{m}__ref") + 0.0 * pl.col(_SORT_G)

    values = [pl.col("n_missing").cast(pl.Float64), *[pl.col(m) for m in metric_names]]
    values += [d.formula(pl.col, r).alias(d.name) for d in disparities]
    names = ["n_missing", *metric_names, *(d.name for d in disparities)]
    entities = _entities(
        groups, ib, pl.col(_SORT_A), pl.col(_SORT_G), pl.col("attribute").cast(pl.Categorical),
        pl.col(_G).alias("group"), pl.col("n").cast(pl.Int64), GROUP_KEY,
    )  # fmt: skip
    return Part(
        entities,
        names,
        floats={
            "value": wide.select(values),
            "difference": wide.select([(pl.col(m) - pl.col(f"{m}__ref")).alias(m) for m in metric_names]),
            "ratio": wide.select([rate(pl.col(m), r(m)).alias(m) for m in metric_names]),
        },
        cats={"reference_group": wide.select([pl.col(f"{m}__refname").alias(m) for m in names[1:]])},
    )


#: The reason a group has no value of a rate: its denominator is 0.
_NO = {"total": "no counted rows", "positives": "no positives", "negatives": "no negatives",
       "pred_positives": "no predicted positives", "pred_negatives": "no predicted negatives"}  # fmt: skip


class _Probe:
    def __getattr__(self, name: str) -> str:
        return name


def _why(m: str) -> str:
    den = METRICS[m].denominator
    return _NO.get(den(_Probe()), "undefined") if den is not None else "undefined"  # type: ignore[arg-type]


def _excluded(defined: pl.Expr, reason: pl.Expr | str) -> pl.Expr:
    """Aggregation: the groups left out (``defined`` false) with the reason, ``"; "``-joined; null if none."""
    why = pl.lit(f" ({reason})") if isinstance(reason, str) else pl.concat_str([pl.lit(" ("), reason.filter(~defined), pl.lit(")")])
    # filter first: only the (few) groups left out are turned into text
    listed = pl.concat_str([pl.col(_G).filter(~defined), why]).str.join("; ")
    return pl.when((~defined).any()).then(listed)


def _spread_aggs(m: str) -> list[pl.Expr]:
    """Spread of metric ``m`` over the groups where it is defined: ``max − min``, ``min / max``, the
    number of groups that entered, the groups left out; null with fewer than two defined groups."""
    v = pl.col(m)
    two = v.count() >= 2
    return [
        pl.when(two).then(v.max() - v.min()).alias(f"{m}__d"),
        pl.when(two).then(rate(v.min(), v.max())).alias(f"{m}__r"),
        v.count().cast(pl.Float64).alias(f"{m}__k"),
        _excluded(v.is_not_null(), _why(m)).alias(f"{m}__x"),
    ]


def _attribute_part(
    groups: pl.DataFrame,
    pop: pl.DataFrame,
    sk: list[str],
    ib: list[str],
    has_predictions: bool,
    alpha: float,
    concentration: float,
) -> Part:
    """Attribute rows: every metric's spread over the groups; fairlearn's named disparities;
    the between-group entropy indices and EDF. One aggregation over the group table."""
    metric_names = _metric_names(has_predictions)
    aggs, finish, index_names = _index_aggs(has_predictions, alpha, "between_group_")
    spread = [e for m in metric_names for e in _spread_aggs(m)]
    extra: list[pl.Expr] = []
    if has_predictions:
        tpr, fpr = pl.col("true_positive_rate"), pl.col("false_positive_rate")
        both = tpr.is_not_null() & fpr.is_not_null()
        why = pl.concat_str([pl.when(tpr.is_null()).then(pl.lit("no positives")),
                             pl.when(fpr.is_null()).then(pl.lit("no negatives"))], separator=", ", ignore_nulls=True)  # fmt: skip
        extra = [both.sum().cast(pl.Float64).alias("__pf_eo_k"), _excluded(both, why).alias("__pf_eo_x")]
    idx = [*sk, "attribute"]
    wide = (
        groups.lazy().with_columns(_index_inputs(concentration)).group_by(idx, maintain_order=True)
        .agg(*spread, *extra, *aggs, pl.col(_CNT).count().cast(pl.Float64).alias("__pf_ix_k"),
             _excluded(pl.col(_CNT).is_not_null(), "no counted rows").alias("__pf_ix_x"))
        .with_columns(finish).with_columns(_between_rule(index_names))
        .join(pop.lazy().select(*ib, pl.col("n").cast(pl.Int64)), on=ib, how="left", nulls_equal=True,
              maintain_order="left")
        .collect(**_SMALL)
    )  # fmt: skip
    values: dict[str, pl.Expr] = {}
    k: dict[str, pl.Expr] = {m: pl.col(f"{m}__k") for m in metric_names}
    x: dict[str, pl.Expr] = {m: pl.col(f"{m}__x") for m in metric_names}
    if has_predictions:
        tpr_d, fpr_d = pl.col("true_positive_rate__d"), pl.col("false_positive_rate__d")
        tpr_r, fpr_r = pl.col("true_positive_rate__r"), pl.col("false_positive_rate__r")
        both_d, both_r = tpr_d.is_not_null() & fpr_d.is_not_null(), tpr_r.is_not_null() & fpr_r.is_not_null()
        values["demographic_parity_difference"] = pl.col("selection_rate__d")
        values["demographic_parity_ratio"] = pl.col("selection_rate__r")
        values["equalized_odds_difference"] = pl.when(both_d).then(pl.max_horizontal(tpr_d, fpr_d))
        values["equalized_odds_ratio"] = pl.when(both_r).then(pl.min_horizontal(tpr_r, fpr_r))
        for name in ("demographic_parity_difference", "demographic_parity_ratio"):
            k[name], x[name] = pl.col("selection_rate__k"), pl.col("selection_rate__x")
        for name in ("equalized_odds_difference", "equalized_odds_ratio"):
            k[name], x[name] = pl.col("__pf_eo_k"), pl.col("__pf_eo_x")
    values |= {n: pl.col(n) for n in index_names}
    for n in index_names:
        k[n], x[n] = pl.col("__pf_ix_k"), pl.col("__pf_ix_x")
    names = _ordered([*metric_names, *values])
    entities = _entities(wide, ib, pl.col(_SORT_A), pl.lit(-1), pl.col("attribute").cast(pl.Categorical), "n")
    return Part(
        entities,
        names,
        floats={
            "value": wide.select([e.alias(n) for n, e in values.items()]),
            "difference": wide.select([pl.col(f"{m}__d").alias(m) for m in metric_names]),
            "ratio": wide.select([pl.col(f"{m}__r").alias(m) for m in metric_names]),
            "n_groups": wide.select([e.alias(n) for n, e in k.items()]),
        },
        cats={"excluded_groups": wide.select([e.cast(pl.Categorical).alias(n) for n, e in x.items()])},
    )


def _between_rule(names: list[str], k: str = "__pf_ix_k") -> list[pl.Expr]:
    """Between-group indices are null when fewer than two groups have counted rows (EDF already is)."""
    return [pl.when(pl.col(k) >= 2).then(pl.col(n)).alias(n) for n in names if "differential" not in n]


def _population_part(
    cells: pl.LazyFrame,
    pop: pl.DataFrame,
    keys: list[str],
    ib: list[str],
    has_predictions: bool,
    metric_names: list[str],
    alpha: float,
    concentration: float,
) -> Part:
    """Population rows: every metric of everyone, and the population-level indices."""
    # the cell table is already the full intersection (one row per by + all keys)
    aggs, finish, names = _index_aggs(has_predictions, alpha, "between_all_groups_")
    vals = (
        cells.with_columns(_index_inputs(concentration)).group_by(ib, maintain_order=True)
        .agg(*aggs, pl.col(_CNT).count().cast(pl.Float64).alias("__pf_ix_k"))
        .with_columns(finish).with_columns(_between_rule(names)).select(*ib, *names, "__pf_ix_k")
    )  # fmt: skip
    between = [n for n in names if "differential" not in n]
    if has_predictions:
        benefits = entropy.benefit_of_individuals(pop.lazy(), ib, summed=True)  # pop: one row per by group
        ind, ind_names = _entropy_family(benefits, ib, alpha)
        vals = vals.join(ind, on=ib, how="full", coalesce=True, nulls_equal=True)
        names = [*ind_names, *names, "differential_fairness_bias_amplification"]
    wide = pop.lazy().join(vals, on=ib, how="left", nulls_equal=True, maintain_order="left")
    if has_predictions:
        wide = wide.with_columns(
            differential_fairness_bias_amplification=pl.col("smoothed_empirical_differential_fairness_predictions")
            - pl.col("smoothed_empirical_differential_fairness")
        )
    wide_df = wide.collect(**_SMALL)
    values = [pl.col("n_missing").cast(pl.Float64), *[pl.col(m) for m in metric_names], *[pl.col(n) for n in names]]
    entities = _entities(wide_df, ib, pl.lit(-1), pl.lit(-1), pl.col("n").cast(pl.Int64))
    return Part(
        entities,
        _ordered(["n_missing", *metric_names, *names]),
        floats={
            "value": wide_df.select(values),
            "n_groups": wide_df.select([pl.col("__pf_ix_k").alias(n) for n in between]),
        },
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


def _index_aggs(has_predictions: bool, alpha: float, prefix: str) -> tuple[list[pl.Expr], list[pl.Expr], list[str]]:
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


def _entropy_family(benefits: pl.LazyFrame, ib: list[str], alpha: float) -> tuple[pl.LazyFrame, list[str]]:
    """GE(alpha), Theil and CV of all individuals (benefits as distinct values and counts)."""
    alphas, finish, names = _entropy_family_parts(alpha, "")
    return entropy.generalized_entropy_indices(benefits, alphas, ib).select(*ib, *finish), names
