"""The fairness report: one pass to the cell table, then every metric from it (long/tidy output).

Report schema (a ``pl.DataFrame``; one row per (by, attribute set, group, metric)), in order:

======================  ===========  ============================================================
column                  dtype        meaning
======================  ===========  ============================================================
*by*                    input's      the ``by`` values (one report per ``by`` group, same pass)
``attribute``           Categorical  attribute-set names joined by ``" & "``; null on population rows
``group``               String       display label: the group's values joined by ``" & "`` (a null
                                     value -> ``null``; a value equal to ``"null"``, containing
                                     ``" & "``, starting with ``"& "`` or a double quote, or
                                     ending with ``" &"`` is JSON-quoted); null on attribute-level
                                     and population rows. :func:`parse_group_label` inverts it.
``metric``              Categorical  standard metric name (aif360 / fairlearn spelling)
``value``               Float64      the metric; null where undefined (zero denominator), never a 0
``reference_group``     Categorical  the group it is compared with (group rows and disparities)
``difference``          Float64      group rows: value − reference value; attribute rows: max − min
``ratio``               Float64      group rows: value / reference value; attribute rows: min / max
``n``                   Int64        input rows in the group (all of them, missing ones included)
*intervals*             Float64      only with ``ci``: ``value_lo, value_hi, difference_lo,
                                     difference_hi, ratio_lo, ratio_hi, p_value,
                                     p_value_adjusted, n_eff`` (:mod:`polfair.core.intervals`)
``ci_method``, ``test`` Categorical  only with ``ci``: the interval method and the test
``n_groups``            Int64        attribute rows (and ``between_all_groups_*``): how many groups
                                     entered the spread / index; null on other rows
``excluded_groups``     String       attribute rows: the groups left out and why, e.g.
                                     ``"c (no negatives); d (no negatives)"``; null if none
``group_key``           Struct       the typed key (SQL GROUPING SETS shape): one field per
                                     protected attribute in the input's dtype; a field is null
                                     when the attribute is not in the set or the value is null
                                     (``attribute`` tells which); null on attribute/population rows
``harm``                String       group rows of a metric with a direction of harm: ``"group"``
                                     (the group is on the disadvantaged side of its reference),
                                     ``"reference"`` or ``"none"``; null elsewhere
                                     (:mod:`polfair.core.report.status`)
======================  ===========  ============================================================

``attribute``, ``metric`` and ``reference_group`` are Categorical (a few distinct strings repeated
millions of times); filter them as strings (``pl.col("metric") == "disparate_impact"``) and cast
before string functions (``pl.col("metric").cast(pl.String).str.ends_with("_ratio")``). Protected
columns named ``group``, ``value``, ``metric`` ... are fine: their values live in ``group_key``.
CSV cannot hold a Struct: the file writers (:mod:`polfair.outputs.writers`) write ``group_key``
as one JSON object per row; parquet and JSON keep it typed.

Row kinds:

* **group rows** (``attribute`` and ``group`` set): the group metrics of :mod:`polfair.core.metrics`,
  ``n_missing``, and the named disparities against the reference group
  (``statistical_parity_difference``, ``disparate_impact``, ...), whose ``value`` is the disparity.
* **attribute rows** (``group`` null): per group metric, the spread across the attribute set's
  groups in ``difference`` (max − min) and ``ratio`` (min / max), like fairlearn's
  ``between_groups``; fairlearn's ``demographic_parity_difference/ratio`` and
  ``equalized_odds_difference/ratio``; the between-group entropy indices and the smoothed EDF of
  that attribute set.
* **population rows** (``attribute`` null): the metrics of everyone, the entropy indices of all
  individuals, the ``between_all_groups_*`` indices, EDF on labels and on predictions and
  ``differential_fairness_bias_amplification`` (aif360's definitions, all attributes jointly).

Policy for undefined groups: a spread over groups (max − min, min ÷ max, fairlearn's
``demographic_parity_*`` / ``equalized_odds_*``) uses the groups where the metric is defined (for
equalized odds each rate's spread uses its own defined groups, as fairlearn; ``n_groups`` counts
the groups where both rates are defined); ``n_groups`` and ``excluded_groups`` say which entered
and which were left out and why; the spread is null only when fewer than two groups are defined.
The between-group indices (``between_group_*``, ``between_all_groups_*``) use the groups with
counted rows, with the same rule (aif360 returns 0.0 for a single group; the report returns null).

Attribute sets (``intersections``): by default every subset when there are at most 3 protected
attributes, otherwise every single attribute, every pair and the full intersection (EDF's);
``"all"`` gives every subset. Reports estimated above :data:`LARGE_REPORT_ROWS` rows warn.

How it is built: every row kind is computed wide (one row per group / attribute set / ``by``
value, one column per metric), then the long rows are laid out once
(:func:`polfair.core.report.rows.assemble`): no unpivot, no sort of the long rows.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import json
import warnings
from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import Any, Literal, cast

import numpy as np
import polars as pl

from polfair.core import intervals as iv
from polfair.core._args import SMALL_COLLECT as _SMALL
from polfair.core._args import as_list
from polfair.core._typing import Reference
from polfair.core.clustered import clustered_report
from polfair.core.entropy.intervals import benefit_variance
from polfair.core.intervals.common import Segments
from polfair.core.intervals.spreads import segments_of
from polfair.core.metrics import METRICS, Disparity, group_metrics
from polfair.core.passes.counts import BUCKET, COUNT_COLUMNS, WEIGHT_EXP, check_cell_table, check_counted
from polfair.core.passes.spec import Spec
from polfair.core.reference import (
    best_value,
    eligible,
    largest_reference,
    resolve_min_sample_size,
    warn_small_reference,
)
from polfair.core.report.intervals import (
    CI_CATS,
    CI_FLOATS,
    CiOptions,
    GroupContext,
    adjust_p_values,
    adjust_p_values_at,
    best_statistics,
)
from polfair.core.report.rows import (
    ATTR_METRICS,
    BENEFIT_VAR,
    GROUP_COL,
    GROUP_KEY,
    POP_METRICS,
    SORT_A,
    SORT_G,
    Part,
    assemble,
    attribute_part,
    attribute_rows,
    disparity_list,
    group_part,
    index_needs,
    metric_list,
    population_part,
    take,
)
from polfair.core.report.selection import restrict, select_metrics
from polfair.core.report.status import with_harm
from polfair.core.report.worst import MAX_GROUPS_PER_ATTRIBUTE, WORST_K, groups_limited, warn_limited, worst_rows
from polfair.core.request import AuditRequest
from polfair.core.user_metrics import check_user_metrics, user_metric_parts
from polfair.core.values import absent_values_message, coerce_values, match_values
from polfair.exceptions import PolfairError, ReferenceWarning, ReportSizeWarning, user_stacklevel

__all__ = [
    "GROUP_KEY",
    "LARGE_REPORT_ROWS",
    "MAX_INTERSECTION_GROUPS",
    "REPORT_COLUMNS",
    "SEPARATOR",
    "attribute_sets",
    "budget_message",
    "budget_sets",
    "check_protected_names",
    "check_reference",
    "group_label",
    "parse_group_label",
    "ReportOptions",
    "report_batches",
    "report_batches_of",
    "report_from_counts",
    "report_of",
    "value_label",
    "warn_absent_privileged",
]

#: The report's core columns after the ``by`` columns, in order (``n_groups``, ``excluded_groups``
#: and ``group_key`` follow them; with ``ci`` the interval columns sit between ``n`` and those).
REPORT_COLUMNS = ("attribute", "group", "metric", "value", "reference_group", "difference", "ratio", "n")
#: Joins attribute names in ``attribute`` and values in ``group``.
SEPARATOR = " & "
#: Reports estimated to have more rows than this warn (:class:`~polfair.exceptions.ReportSizeWarning`).
LARGE_REPORT_ROWS = 5_000_000

_PRIV, _MODE, _PLABEL = "__pf_priv", "__pf_mode", "__pf_plabel"
#: The count metrics (Σw of some rows: in the weights' units; every other metric is free of them).
_COUNT_METRICS = [m for m, v in METRICS.items() if v.denominator is None and v.formula is None]
#: The cell table's weighted columns (Σw² ones in squared units).
_WEIGHTED = ("w", "tp", "fp", "tn", "fn", "gtp", "gfp", "gtn", "gfn", "tp_w2", "fp_w2", "tn_w2", "fn_w2")
_SUMS = list(COUNT_COLUMNS)
_ALLKEY = "__pf_all"
#: Cell tables of at most this many rows are "small": their fixed costs (Polars plans, expressions
#: evaluated once per attribute set) are cut where that costs more than the data.
_SMALL_CELLS = 4096


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


Intersections = int | Literal["all", "none"] | Sequence[Sequence[str]] | None


def attribute_sets(keys: Sequence[str], intersections: Intersections) -> list[tuple[str, ...]]:
    """The attribute sets a report covers, in report order.

    Parameters
    ----------
    keys
        The protected attribute names, in order.
    intersections
        ``None`` (the default sets: every subset when there are at most 3 attributes; otherwise
        every single attribute, every pair and the full intersection), ``"all"`` (every non-empty
        subset: ``2^k − 1`` sets), ``"none"`` (every attribute alone), an int ``k`` (every subset of
        at most ``k`` attributes), or an explicit list of attribute-name lists.

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
    if intersections == "none":  # every attribute alone
        intersections = 1
    if intersections is None and len(keys) > 3:
        sets = [s for k in (1, 2) for s in itertools.combinations(keys, k)]
        return sets + [tuple(keys)]
    if intersections is None or intersections == "all" or isinstance(intersections, int):
        if isinstance(intersections, bool):
            msg = f"intersections must be None, 'all', an int or a list of attribute lists, got {intersections!r}"
            raise PolfairError(msg)
        top = len(keys) if intersections in (None, "all") else int(intersections)
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


#: The default intersection budget (``fairness_report(max_intersection_groups=...)``).
MAX_INTERSECTION_GROUPS = 1000


def budget_sets(
    cells: pl.DataFrame | pl.LazyFrame, keys: Sequence[str], intersections: Intersections, budget: int
) -> tuple[Intersections, list[dict[str, Any]]]:
    """The default attribute sets under an intersection budget, and what was skipped and why.

    With ``intersections=None`` (the default), every protected attribute is audited alone, and the
    default intersections (:func:`attribute_sets`) are audited in report order while the number of
    intersection groups they hold together (their distinct value combinations in the cell table,
    over every ``by`` value) stays at most ``budget``; an intersection that would exceed it is
    skipped (a smaller one after it may still fit). Any other ``intersections`` (``"all"``,
    ``"none"``, an int, a list) is the user's explicit choice and is returned unchanged.

    Parameters
    ----------
    cells
        The cell table.
    keys
        The protected attribute names, in order.
    intersections
        As in :func:`attribute_sets`, and ``"none"`` (every attribute alone: ``1``).
    budget
        Int >= 0: the most intersection groups the default audits.

    Returns
    -------
    tuple
        The ``intersections`` to report (``None`` when nothing was skipped, so the report is the
        default one; else the explicit list of sets kept), and one entry per skipped set:
        ``{"attributes": [...], "groups": int, "reason": str}``.

    Raises
    ------
    PolfairError
        ``budget`` not an int >= 0.

    Examples
    --------
    >>> import polars as pl
    >>> t = pl.DataFrame({"zip": [str(i) for i in range(40)], "sex": ["f", "m"] * 20})
    >>> sets, skipped = budget_sets(t, ["zip", "sex"], None, 30)
    >>> sets, skipped[0]["attributes"], skipped[0]["groups"]
    ([('zip',), ('sex',)], ['zip', 'sex'], 40)
    """
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
        msg = f"max_intersection_groups must be an int >= 0 (intersection groups the default audits), got {budget!r}"
        raise PolfairError(msg)
    if intersections == "none":
        return 1, []
    if intersections is not None:
        return intersections, []
    sets = attribute_sets(keys, None)
    multi = [s for s in sets if len(s) > 1]
    if not multi or (isinstance(cells, pl.DataFrame) and cells.height * len(multi) <= budget):
        return None, []  # (a set has at most as many groups as the table has rows: none can exceed the budget)
    counts = cells.lazy().select([pl.struct(list(s)).n_unique().alias(str(i)) for i, s in enumerate(multi)])
    sizes = dict(zip(multi, counts.collect(**_SMALL).row(0)))
    kept, skipped, total = [], [], 0
    for s in sets:
        g = sizes.get(s)
        if g is None or total + g <= budget:
            kept.append(s)
            total += g or 0
            continue
        skipped.append({"attributes": list(s), "groups": int(g),
                        "reason": f"over the intersection budget: {total:,} + {g:,} groups > max_intersection_groups="
                                  f"{budget:,}"})  # fmt: skip
    return (kept if skipped else None), skipped


def budget_message(skipped: Sequence[Mapping[str, Any]], budget: int) -> str:
    """The one warning of the sets :func:`budget_sets` skipped."""
    said = "; ".join(f"{SEPARATOR.join(s['attributes'])} ({s['groups']:,} groups)" for s in skipped)
    return (
        f"intersections skipped by the intersection budget (max_intersection_groups={budget:,}): {said}; every "
        "attribute is audited alone. Pass intersections='all' (or a list of attribute sets) to audit them, or a "
        "larger max_intersection_groups"
    )


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


@functools.lru_cache(maxsize=256)
def _label_expr(key: str) -> pl.Expr:  # expressions are immutable: build each key's once
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


def _rollup(cells: pl.LazyFrame, group: Sequence[str], extra: Sequence[str] = ()) -> pl.LazyFrame:
    # maintain_order: groups come out in cell-table order, so every later float sum (entropy,
    # EDF) adds the same numbers in the same order on every run
    return cells.group_by(list(group), maintain_order=True).agg([pl.col(c).sum() for c in (*_SUMS, *extra)])


def report_from_counts(
    cells: pl.DataFrame | pl.LazyFrame,
    *,
    protected: str | Sequence[str],
    by: str | Sequence[str] | None = (),
    has_predictions: bool = True,
    privileged: Mapping[str, Any] | None = None,
    reference: Reference | None = None,
    intersections: Intersections = None,
    alpha: float = 2.0,
    concentration: float = 1.0,
    ci: float | None = 0.95,
    ci_method: Literal["auto"] = "auto",
    n_boot: int = 200,
    seed: int = 0,
    p_adjust: Literal["bh", "by", "holm"] | None = "bh",
    weighted: bool | None = None,
    metrics: Mapping[str, Any] | None = None,
    select: Sequence[str] | None = None,
    max_intersection_groups: int = MAX_INTERSECTION_GROUPS,
    min_sample_size: int | None = None,
    max_groups_per_attribute: int | None = MAX_GROUPS_PER_ATTRIBUTE,
    worst_k: int = WORST_K,
) -> pl.DataFrame:
    """Build the fairness report from a cell table (e.g. merged from partitions).

    Parameters
    ----------
    cells
        A cell table (:func:`polfair.confusion_counts`, :func:`polfair.merge_counts`), eager or lazy. A
        table with a ``bucket`` key (``confusion_counts(cluster=...)``) gives the report of
        ``fairness_report(cluster=...)``: its buckets summed, cluster-robust (jackknife) intervals
        (:func:`polfair.core.clustered.clustered_report`); :func:`report_batches` refuses one.
    protected
        Names of its protected-attribute columns, in order (one name or a list). Names may not
        contain ``" & "``.
    by
        Names of its ``by`` columns (one name, a list, or None / empty for none).
    has_predictions
        ``False`` for a labels-only audit (only label metrics are reported).
    privileged, reference, intersections, alpha, concentration, ci, ci_method, n_boot, seed, p_adjust
        As in :func:`polfair.fairness_report`.
    weighted
        Whether the counts are weighted (tests use Kish sizes and no Fisher test); ``None``:
        inferred from the table (weighted iff some Σw² differs from its Σw). ``privileged`` values are matched in the column's
        dtype (``None`` names the null group, the string ``"null"`` only a real string).
    metrics
        Optional user metrics ``{name: expression over the count columns}``
        (:mod:`polfair.core.user_metrics`): each gets group, attribute and population rows.
    select
        Optional list of the report's metric names (:mod:`polfair.core.report.selection`): only
        their rows, and only what they need is computed; the rows equal the full report's rows of
        those metrics. ``None`` (default): every metric.
    max_intersection_groups
        The intersection budget of the default ``intersections`` (:func:`budget_sets`; a skipped
        set warns with :class:`~polfair.exceptions.ReportSizeWarning`), as in
        :func:`polfair.fairness_report`.
    min_sample_size
        Input rows a group needs to be a comparison group (:mod:`polfair.core.reference`):
        ``reference="largest"`` and ``"best"`` choose among the groups that meet it, a named
        ``privileged`` group below it warns. ``None`` (default): 30 rows; ``0``: no minimum.
    max_groups_per_attribute, worst_k
        An attribute set with more than ``max_groups_per_attribute`` groups in a ``by`` value keeps
        its attribute rows over every group, and shows the group rows of its ``worst_k`` (default
        20) worst groups by the interval rule and of its reference groups
        (:mod:`polfair.core.report.worst`; warns once with
        :class:`~polfair.exceptions.ReportSizeWarning`). The default is
        :func:`polfair.fairness_report`'s (:data:`~polfair.core.report.worst.MAX_GROUPS_PER_ATTRIBUTE`,
        1,000), so a cell table says what the report of its rows says; ``None``: every group's rows
        (what the rooms that read every group, e.g. MetricFrame and drift, ask for).

    Returns
    -------
    pl.DataFrame
        The report (schema and row kinds in :mod:`polfair.core.report.build`).

    Raises
    ------
    PolfairError
        Unknown ``reference``, ``privileged`` naming a non-protected column or a value the column's
        dtype cannot hold, bad ``intersections``, a protected name containing ``" & "``.

    Warns
    -----
    ReferenceWarning
        A ``privileged`` value found in no cell of its column, or a privileged group (or, when no
        group meets the minimum, the best group) with fewer rows than ``min_sample_size``.
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
    # the long rows are then laid out once (polfair.core.report.rows.assemble).
    options = ReportOptions.of_keywords(locals())
    if BUCKET in cells.collect_schema().names():  # confusion_counts(cluster=...): as fairness_report(cluster=...)
        table = cells.collect() if isinstance(cells, pl.LazyFrame) else cells
        return clustered_report(table, options, report_of)
    return report_of(cells, options)


def report_batches(
    cells: pl.DataFrame | pl.LazyFrame,
    *,
    protected: str | Sequence[str],
    by: str | Sequence[str] | None = (),
    has_predictions: bool = True,
    privileged: Mapping[str, Any] | None = None,
    reference: Reference | None = None,
    intersections: Intersections = None,
    alpha: float = 2.0,
    concentration: float = 1.0,
    ci: float | None = 0.95,
    ci_method: Literal["auto"] = "auto",
    n_boot: int = 200,
    seed: int = 0,
    p_adjust: Literal["bh", "by", "holm"] | None = "bh",
    weighted: bool | None = None,
    metrics: Mapping[str, Any] | None = None,
    batch_rows: int = 250_000,
    select: Sequence[str] | None = None,
    max_intersection_groups: int = MAX_INTERSECTION_GROUPS,
    min_sample_size: int | None = None,
    max_groups_per_attribute: int | None = MAX_GROUPS_PER_ATTRIBUTE,
    worst_k: int = WORST_K,
) -> Iterator[pl.DataFrame]:
    """:func:`report_from_counts`'s report in consecutive batches of about ``batch_rows`` rows, built as they are yielded.

    The concatenated batches equal :func:`report_from_counts` (same rows in the same order, same
    values). What needs every group row, their adjusted p-values (a family is every group of a ``by``
    value and metric) and the "best" reference of each attribute set, is computed first, for all of
    them, as arrays of one value per (group, metric); then each batch lays out its population,
    attribute and group rows alone, so memory grows with ``batch_rows`` and the number of groups, not
    with the report's rows (a report is ~40 rows per group): ``polfair report ... --out`` writes it so.

    Parameters
    ----------
    cells, protected, by, has_predictions, privileged, reference, intersections
        As in :func:`report_from_counts`.
    alpha, concentration, ci, ci_method, n_boot, seed, p_adjust, weighted, metrics, select, max_intersection_groups,
    min_sample_size, max_groups_per_attribute, worst_k
        As in :func:`report_from_counts` (with user ``metrics``, or an attribute set whose group rows
        are limited to its worst groups, the report comes as one batch).
    batch_rows
        Rows per batch (a batch ends with an entity's rows: it may run over by up to one entity's).

    Returns
    -------
    Iterator[pl.DataFrame]
        Frames with :func:`report_from_counts`'s schema; at least one (possibly empty).

    Raises
    ------
    PolfairError
        As :func:`report_from_counts`; ``batch_rows`` below 1.

    Examples
    --------
    >>> import polars as pl
    >>> import polfair as pf
    >>> df = pl.DataFrame({"y": [1, 0, 1, 0], "p": [1, 0, 0, 0], "g": ["a", "a", "b", "b"]})
    >>> cells = pf.confusion_counts(df, y_true="y", y_pred="p", protected="g").collect()
    >>> parts = list(report_batches(cells, protected=["g"], batch_rows=20))
    >>> len(parts) > 1 and pl.concat(parts).equals(pf.report_from_counts(cells, protected=["g"]))
    True
    """
    return report_batches_of(cells, ReportOptions.of_keywords(locals()), batch_rows)


def report_batches_of(cells: pl.DataFrame | pl.LazyFrame, options: ReportOptions,
                      batch_rows: int = 250_000) -> Iterator[pl.DataFrame]:  # fmt: skip
    """:func:`report_batches` of typed options (what :func:`polfair.fairness_report_batches` calls)."""
    if isinstance(batch_rows, bool) or not isinstance(batch_rows, int) or batch_rows < 1:
        msg = f"batch_rows must be a positive int, got {batch_rows!r}"
        raise PolfairError(msg)
    if BUCKET in cells.collect_schema().names():
        msg = ("report_batches got a cell table with a `bucket` key (confusion_counts(cluster=...)): its intervals "
               "need every bucket at once; use pf.report_from_counts(cells, ...) (or fairness_report(cluster=...))")
        raise PolfairError(msg)
    prep = _prepare(cells, options)
    if prep.user or prep.limited_sets:  # user metrics lay out their own rows of every entity; worst groups: one batch
        parts = [prep.population_part(), prep.attribute_part(), prep.group_part(prep.groups), *prep.user_parts()]
        yield prep.finish(assemble(parts, prep.sort_keys, prep.entity_columns, prep.floats, prep.cats))
        return
    pop_part, attr_part = prep.population_part(), prep.attribute_part()
    groups = prep.groups
    windows = attribute_rows(groups, prep.sk)
    # entities in report order (population, attribute and group rows), and their rows' count
    kind, src = "__pf_kind", "__pf_src"
    keys = prep.sort_keys
    ents = pl.concat([
        part.select(keys).with_columns(pl.lit(i, pl.Int8).alias(kind), pl.int_range(pl.len(), dtype=pl.Int64).alias(src))
        for i, part in enumerate((pop_part.entities, attr_part.entities, groups.select(keys)))
    ]).sort(keys, nulls_last=False, maintain_order=True)  # fmt: skip
    kinds, srcs = ents[kind].to_numpy(), ents[src].to_numpy()
    per_entity = np.array([len(pop_part.metrics), len(attr_part.metrics), len(prep.group_names())])
    ends = np.cumsum(per_entity[kinds])
    cuts = np.searchsorted(ends, np.arange(batch_rows, int(ends[-1]) if ends.size else 0, batch_rows), side="left") + 1
    bounds = np.unique(np.concatenate(([0], cuts, [len(kinds)])))
    batches = [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:])] or [(0, 0)]
    context = None
    if prep.opts is not None:  # what the group rows' intervals need from all of them, computed batch by batch
        best = (best_statistics(groups, prep.metric_names, windows, prep.opts.ci, prep.min_n)
                if "best" in prep.modes else None)  # fmt: skip
        pvals: dict[str, list[np.ndarray]] = {}
        for a, b in batches:
            rows = np.sort(srcs[a:b][kinds[a:b] == 2])
            got = prep.group_part(groups[pl.Series(rows, dtype=pl.UInt32)], (windows.at(rows), GroupContext(best=best)))
            for m, v in got.intervals.columns.get("p_value", {}).items():  # type: ignore[union-attr]
                pvals.setdefault(m, []).append(v)
        order = np.argsort(np.concatenate([np.sort(srcs[a:b][kinds[a:b] == 2]) for a, b in batches]), kind="stable")
        by_rows = prep.by_rows(groups)
        adjusted = adjust_p_values({m: np.concatenate(v)[order] for m, v in pvals.items()}, by_rows, prep.opts.p_adjust)
        context = (best, adjusted)
    for a, b in batches:
        mine = [np.sort(srcs[a:b][kinds[a:b] == i]) for i in range(3)]
        batch_ctx = None
        if context is not None:
            batch_ctx = GroupContext(best=context[0], adjusted={m: v[mine[2]] for m, v in context[1].items()})
        group_rows = groups[pl.Series(mine[2], dtype=pl.UInt32)]
        parts = [take(pop_part, mine[0]), take(attr_part, mine[1]),
                 prep.group_part(group_rows, (windows.at(mine[2]), batch_ctx) if batch_ctx is not None else None)]  # fmt: skip
        yield prep.finish(assemble(parts, keys, prep.entity_columns, prep.floats, prep.cats))


@dataclasses.dataclass(frozen=True, eq=False)
class ReportOptions:
    """What the report builder reads (:func:`report_from_counts`'s keywords, typed and frozen).

    The public doors keep their flat keywords and build one; :func:`polfair.fairness_report` builds it
    from its request (:meth:`of`), so the report reads the options the pass ran with. The regression
    report (:func:`polfair.core.regression.report.report_rows`) reads the same type: its keys,
    ``privileged``, ``reference``, ``intersections``, ``ci``, ``p_adjust`` and ``min_sample_size``.
    """

    protected: str | Sequence[str] = ()
    by: str | Sequence[str] | None = ()
    has_predictions: bool = True
    privileged: Mapping[str, Any] | None = None
    reference: Reference | None = None
    intersections: Intersections = None
    alpha: float = 2.0
    concentration: float = 1.0
    ci: float | None = 0.95
    ci_method: Literal["auto"] = "auto"
    n_boot: int = 200
    seed: int = 0
    p_adjust: Literal["bh", "by", "holm"] | None = "bh"
    weighted: bool | None = None
    metrics: Mapping[str, Any] | None = None
    select: Sequence[str] | None = None
    max_intersection_groups: int = MAX_INTERSECTION_GROUPS
    min_sample_size: int | None = None
    max_groups_per_attribute: int | None = None
    worst_k: int = WORST_K

    @classmethod
    def of(cls, request: AuditRequest, spec: Spec, *, intersections: Intersections,
           select: Sequence[str] | None) -> ReportOptions:  # fmt: skip
        """The options of a request in effect (config merged) over the pass's ``spec`` (its keys, by,
        roles), with the ``intersections`` the budget kept and the metric ``select``-ion to compute.
        """
        # the request's fields by name; what the pass resolved (keys, roles) and the budget kept, from them
        return cls.of_request(request, protected=spec.keys, by=spec.by, has_predictions=spec.has_predictions,
                              intersections=intersections, weighted=spec.weighted, metrics=request.custom_metrics,
                              select=select)  # fmt: skip

    @classmethod
    def of_keywords(cls, keywords: Mapping[str, Any]) -> ReportOptions:
        """The options among a door's keywords (its ``locals()``), each under its own name."""
        return cls(**{k: v for k, v in keywords.items() if k in cls.__dataclass_fields__})

    @classmethod
    def of_request(cls, request: Any, **overrides: Any) -> ReportOptions:
        """The report's part of a door's request object (any object with these fields by name, e.g.
        :class:`polfair.core.request.AuditRequest`), with ``overrides`` (the regression report reads it so).
        """
        fields = {f: getattr(request, f) for f in cls.__dataclass_fields__ if hasattr(request, f)}
        return cls(**(fields | overrides))

    def replicate(self, by: Sequence[str]) -> ReportOptions:
        """The options of a replicate report (the jackknife's): other ``by`` keys, default intervals."""
        defaults: dict[str, Any] = {f.name: f.default for f in dataclasses.fields(self) if f.name in _STATISTICS}
        return dataclasses.replace(self, by=by, **defaults)


#: The interval options of :class:`ReportOptions` (those a replicate report takes at their default).
_STATISTICS = ("ci", "ci_method", "n_boot", "seed", "p_adjust")


def report_of(cells: pl.DataFrame | pl.LazyFrame, options: ReportOptions) -> pl.DataFrame:
    """:func:`report_from_counts` of typed options (what :func:`polfair.fairness_report` calls)."""
    prep = _prepare(cells, options)
    parts = [prep.population_part(), prep.attribute_part(), prep.group_part(prep.groups), *prep.user_parts()]
    return prep.finish(assemble(parts, prep.sort_keys, prep.entity_columns, prep.floats, prep.cats))


class _Prepared:
    """Everything :func:`report_from_counts` and :func:`report_batches` compute before the row kinds."""

    def __init__(self, cells: pl.DataFrame | pl.LazyFrame, o: ReportOptions) -> None:
        has_predictions, privileged, reference, intersections = o.has_predictions, o.privileged, o.reference, o.intersections
        alpha, concentration, metrics, budget = o.alpha, o.concentration, o.metrics, o.max_intersection_groups
        max_groups, worst_k = o.max_groups_per_attribute, o.worst_k
        keys, by = cast("list[str]", as_list(o.protected)), cast("list[str]", as_list(o.by))  # a name, a list, None
        # a table of collect_cells(relative=True): weights in units of 2**w_exp (extreme weights; every
        # statistic but the counts is free of that unit: the counts are scaled back in finish())
        self.w_exp = 0
        if WEIGHT_EXP in cells.collect_schema().names():
            self.w_exp = int(cells.lazy().select(pl.col(WEIGHT_EXP).max()).collect().item() or 0)
            cells = cells.drop(WEIGHT_EXP)
            concentration = concentration * 2.0**-self.w_exp  # the EDF's smoothing is in the data's units
        check_cell_table(cells, keys=[*by, *keys], what="cells")
        intersections, skipped = budget_sets(cells, keys, intersections, budget)
        if skipped:
            warnings.warn(budget_message(skipped, budget), ReportSizeWarning, stacklevel=user_stacklevel())
        self.user = check_user_metrics(metrics, [*ATTR_METRICS, *POP_METRICS], by)
        check_reference(reference)
        check_protected_names(keys)
        self.min_n = resolve_min_sample_size(o.min_sample_size)
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
        cells_df = lf.collect(**_SMALL).rechunk()
        small = cells_df.height <= _SMALL_CELLS
        lf = cells_df.lazy()
        rows = lf.select(pl.col("n").sum(), pl.col("n_missing").sum()).collect(**_SMALL).row(0)
        check_counted(int(rows[0] or 0), int(rows[1] or 0))  # no rows, or every row missing: one clear error
        selection = select_metrics(o.select, has_predictions)
        metric_names = metric_list(has_predictions) if selection is None else selection.group_metrics
        if selection is not None and self.user and "num_instances" not in metric_names:  # user rows name the reference
            metric_names = [m for m in metric_list(has_predictions) if m in {*metric_names, "num_instances"}]
        self.selection = selection
        self.disparities = disparity_list(has_predictions) if selection is None else selection.disparities
        self.attribute_metrics = metric_names if selection is None else selection.attribute_metrics
        # EDF and the entropy indices: computed only when shown (a selection without them skips them)
        self.indices = index_needs(None if selection is None else selection.shown)
        sets = attribute_sets(keys, intersections)
        sk = [*ib, SORT_A]  # the key of one (by group, attribute set)

        opts = _ci_options(lf, o.ci, o.ci_method, o.n_boot, o.seed, o.p_adjust, o.weighted, self.min_n)
        extra: tuple[str, ...] = ()
        if opts is not None and has_predictions and self.indices[1]:  # the entropy intervals' per-cell benefit variance
            extra = (BENEFIT_VAR,)
            counts = lf.select("tp_n", "fp_n", "tn_n", "fn_n").collect(**_SMALL).to_numpy().astype(np.int64)
            lf = lf.with_columns(pl.Series(BENEFIT_VAR, benefit_variance(counts)))

        # a selection (without user metrics, which may read any metric) computes its group metrics only
        only = None if selection is None or self.user else {*metric_names, *self.attribute_metrics}
        pop_metrics = group_metrics(has_predictions)
        if only is not None:
            pop_metrics = [e for e in pop_metrics if e.meta.output_name() in only]
        pop = _rollup(lf, ib).with_columns(pop_metrics).collect(**_SMALL)
        typed = {a: coerce_values(privileged[a], schema[a], option="privileged", column=a) for a in privileged}
        warn_absent_privileged(lf, schema, typed)
        groups, modes = _groups(lf, keys, ib, sets, schema, typed, reference, has_predictions, extra, only, small)
        # high-cardinality sets: every group in the attribute rows, the worst worst_k as group rows (said once)
        limited = groups_limited(groups if max_groups is not None and groups.height <= max_groups else lf, ib, sets,
                                 max_groups, worst_k)  # (no set over the limit: no plan)
        warn_limited(limited, max_groups or 0)
        self.limited_sets = [sets.index(tuple(s["attributes"])) for s in limited]
        self.worst_k = worst_k
        self.kept: np.ndarray | None = None  # the SORT_G of the group rows shown, once some were left out
        shown = groups.height - sum(max(0, s["groups"] - worst_k) for s in limited) * pop.height
        _warn_size(max(shown, 0), pop.height, len(sets), has_predictions)
        ref = _reference(groups.lazy(), pop.lazy(), sk, ib, metric_names, modes, self.disparities, self.min_n)
        self.by, self.ib, self.sk, self.lf, self.pop, self.groups, self.ref = by, ib, sk, lf, pop, groups, ref
        self.keys, self.modes, self.opts, self.metric_names = keys, modes, opts, metric_names
        self.has_predictions, self.alpha, self.concentration = has_predictions, alpha, concentration
        self.sort_keys = [*ib, SORT_A, SORT_G]
        self.entity_columns = [*ib, "attribute", "group", "n", GROUP_KEY]
        self.floats = ["value", "difference", "ratio", *(CI_FLOATS if opts else ()), "n_groups"]
        self.cats = ["reference_group", *(CI_CATS if opts else ()), "excluded_groups"]

    def _shown(self, part: Part) -> Part:
        return part if self.selection is None else restrict(part, self.selection.shown)

    def group_names(self) -> list[str]:
        """The metric names of each group row, in order."""
        names = ["n_missing", *self.metric_names, *(d.name for d in self.disparities)]
        return names if self.selection is None else [m for m in names if m in self.selection.shown]

    def population_part(self) -> Part:
        return self._shown(population_part(self.lf, self.pop, self.keys, self.ib, self.has_predictions,
                                           self.metric_names, self.alpha, self.concentration, self.opts,
                                           self.indices))  # fmt: skip

    def attribute_part(self) -> Part:
        return self._shown(attribute_part(self.groups, self.pop, self.sk, self.ib, self.has_predictions, self.alpha,
                                          self.concentration, self.opts, self.attribute_metrics, self.indices,
                                          None if self.selection is None else self.selection.shown))  # fmt: skip

    def group_part(self, groups: pl.DataFrame, batch: tuple[Segments, GroupContext] | None = None) -> Part:
        screen = bool(self.limited_sets) and self.opts is not None and batch is None
        if screen:  # every group's harm bounds and (adjusted) p-values; the rest for the rows shown only
            windows = attribute_rows(groups, self.sk)
            best = (best_statistics(groups, self.metric_names, windows, self.opts.ci, self.min_n)  # type: ignore[union-attr]
                    if "best" in self.modes else None)  # fmt: skip
            batch = (windows, GroupContext(best=best))
        part = group_part(groups, self.ref, self.sk, self.ib, self.has_predictions, self.opts, self.pop, self.modes,
                          _PRIV, _MODE, batch, self.metric_names, self.disparities, screen=screen)  # fmt: skip
        if self.limited_sets:  # the worst groups of the high-cardinality sets (and every other set's groups)
            rows = worst_rows(part, groups, self.ref, self.sk, self.metric_names, self.limited_sets, self.worst_k, _PRIV)
            if rows is not None:
                self.kept = groups.get_column(SORT_G).to_numpy()[rows]
                if not screen:
                    return self._shown(take(part, rows))
                windows, context = cast("tuple[Segments, GroupContext]", batch)
                pvals = part.intervals.columns.get("p_value", {})  # type: ignore[union-attr]
                adjusted = adjust_p_values_at(pvals, self.by_rows(groups), self.opts.p_adjust, rows)  # type: ignore[union-attr]
                batch = (windows.at(rows), GroupContext(best=context.best, adjusted=adjusted))
                groups = groups[pl.Series(rows, dtype=pl.UInt32)]
            if screen:  # the shown rows' every interval column (every group's when none was left out)
                part = group_part(groups, self.ref, self.sk, self.ib, self.has_predictions, self.opts, self.pop,
                                  self.modes, _PRIV, _MODE, batch if rows is not None else None, self.metric_names,
                                  self.disparities)  # fmt: skip
        return self._shown(part)

    def _kept(self, part: Part) -> Part:
        """A part's group entities limited to those :meth:`group_part` kept (population and attribute rows stay)."""
        if self.kept is None:
            return part
        sg = part.entities.get_column(SORT_G).to_numpy()
        return take(part, np.flatnonzero((sg < 0) | np.isin(sg, self.kept)))

    def user_parts(self) -> list[Part]:
        """The user metrics' population, attribute and group parts (none without user metrics)."""
        if not self.user:
            return []
        cols = {"sort_a": SORT_A, "sort_g": SORT_G, "group": GROUP_COL, "key": GROUP_KEY, "priv": _PRIV, "mode": _MODE,
                "ref_label": "num_instances__refname"}  # fmt: skip
        groups, pop = self.groups, self.pop
        if self.w_exp:  # user metrics read the counts in the data's units
            back = [pl.col(c) * 2.0 ** (2 * self.w_exp if c.endswith("_w2") else self.w_exp) for c in _WEIGHTED
                    if c in groups.columns]  # fmt: skip
            groups, pop = groups.with_columns(back), pop.with_columns(back)
        parts = user_metric_parts(self.user, groups, pop, self.ref, sk=self.sk, ib=self.ib, columns=cols, make_part=Part,
                                  min_sample_size=self.min_n)  # fmt: skip
        return [self._kept(p) for p in cast("list[Part]", parts)]

    def by_rows(self, groups: pl.DataFrame) -> Segments:
        """Each group row's by value (the families of its adjusted p-values)."""
        if self.pop.height == 1:
            return Segments(np.zeros(groups.height, dtype=np.int64), 1)
        return segments_of(groups, self.ib)[0]

    def finish(self, out: pl.DataFrame) -> pl.DataFrame:
        """The laid-out rows with the public names and column order (counts back in the data's units)."""
        opts = self.opts
        if self.w_exp:
            is_count = pl.col("metric").cast(pl.String).is_in(_COUNT_METRICS)
            scale = [pl.when(is_count).then(pl.col(c) * 2.0**self.w_exp).otherwise(pl.col(c)).alias(c)
                     for c in ("value", "difference", "value_lo", "value_hi", "difference_lo", "difference_hi")
                     if c in out.columns]  # fmt: skip
            out = out.with_columns(scale)
        return with_harm(out.select(
            *[pl.col(i).alias(b) for i, b in zip(self.ib, self.by)],
            "attribute", "group", "metric", "value", "reference_group", "difference", "ratio", "n",
            *(CI_FLOATS if opts else ()), *(CI_CATS if opts else ()),
            pl.col("n_groups").cast(pl.Int64), pl.col("excluded_groups").cast(pl.String), GROUP_KEY,
        ))  # fmt: skip


_prepare = _Prepared


def _ci_options(
    lf: pl.LazyFrame, ci: Any, ci_method: Any, n_boot: Any, seed: Any, p_adjust: Any, weighted: bool | None,
    min_n: int = 0,
) -> CiOptions | None:
    level = iv.check_ci(ci)
    if level is None:
        return None
    if ci_method != "auto":
        msg = f"ci_method must be 'auto' (closed forms, projections, analytic cell-bootstrap moments), got {ci_method!r}"
        raise PolfairError(msg)
    if isinstance(seed, bool) or not isinstance(seed, int):
        msg = f"seed must be an int, got {seed!r}"
        raise PolfairError(msg)
    cols = lf.collect_schema().names()
    missing = [f"{c}_w2" for c in ("tp", "fp", "tn", "fn") if f"{c}_w2" not in cols]
    if missing:
        msg = (
            f"ci={ci!r} needs the cell table's Σw² columns {missing} (cell tables from polfair >= the "
            "intervals release have them); recount the data, or pass ci=None"
        )
        raise PolfairError(msg)
    if weighted is None:
        diff = pl.any_horizontal([pl.col(c) != pl.col(f"{c}_w2") for c in ("tp", "fp", "tn", "fn")]).any()
        weighted = bool(lf.select(diff).collect(**_SMALL).item())
    return CiOptions(level, weighted, iv.check_n_boot(n_boot), seed, iv.check_p_adjust(p_adjust), min_n)


def warn_absent_privileged(
    lf: pl.LazyFrame, schema: pl.Schema, typed: dict[str, tuple[Any, ...]], stacklevel: int = 5
) -> None:
    """Warn (:class:`ReferenceWarning`) for each ``privileged`` value found in no cell of its column:
    most often a misspelling or another dtype (``"male"`` for ``"Male"``, ``"1"`` for ``1``), which
    would leave every comparison with the privileged group null without a word.

    The one check of every door with ``privileged=`` (the fairness report, the regression report).

    Parameters
    ----------
    lf
        A cell table (any table with the protected columns).
    schema
        Its schema (the columns' dtypes).
    typed
        ``{attribute: values}``: the privileged values in their columns' dtypes (:func:`coerce_values`).
    stacklevel
        Unused (kept for callers): the warning names the first frame outside polfair
        (:func:`polfair.exceptions.user_stacklevel`), whatever the path to it.

    Examples
    --------
    >>> import warnings
    >>> import polars as pl
    >>> t = pl.DataFrame({"sex": ["f", "m"]})
    >>> with warnings.catch_warnings(record=True) as got:
    ...     warnings.simplefilter("always")
    ...     warn_absent_privileged(t.lazy(), t.schema, {"sex": ("male",)})
    >>> "'male' does not occur in column 'sex'" in str(got[0].message)
    True
    """
    if not typed:
        return
    checks = [
        match_values(pl.col(a), schema[a], (v,)).any().alias(f"{a}\x1f{i}")
        for a, values in typed.items() for i, v in enumerate(values)
    ]  # fmt: skip
    found = lf.select(checks).collect(**_SMALL).row(0)
    at = 0
    for a, values in typed.items():
        absent = [v for v, ok in zip(values, found[at : at + len(values)]) if not ok]
        at += len(values)
        if not absent:
            continue
        seen = lf.select(pl.col(a).unique(maintain_order=True).head(11)).collect(**_SMALL).to_series().to_list()
        what = "no row is in the privileged group, so its comparisons are null" if len(absent) == len(values) else (
            "the privileged group holds the other values only"
        )
        msg = absent_values_message(f"privileged={{{a!r}: {list(values)!r}}}", absent, a, seen, what)
        warnings.warn(msg, ReferenceWarning, stacklevel=user_stacklevel())


def _warn_size(n_groups: int, n_by: int, n_sets: int, has_predictions: bool) -> None:
    per_group = 1 + len(metric_list(has_predictions)) + len(disparity_list(has_predictions))
    rows = n_groups * per_group + n_by * n_sets * (len(metric_list(has_predictions)) + len(ATTR_METRICS))
    if rows > LARGE_REPORT_ROWS:
        msg = (
            f"the report will have about {rows:,} rows ({n_groups:,} groups in {n_sets} attribute sets"
            f"{f' x {n_by} by values' if n_by > 1 else ''}); pass intersections=1 or 2 (or a list of "
            "attribute sets), fewer protected attributes, or coarser groups (bin high-cardinality "
            "columns) for a smaller one"
        )
        warnings.warn(msg, ReportSizeWarning, stacklevel=user_stacklevel())


def _groups(
    lf: pl.LazyFrame,
    keys: list[str],
    ib: list[str],
    sets: list[tuple[str, ...]],
    schema: pl.Schema,
    typed: dict[str, tuple[Any, ...]],
    reference: Reference | None,
    has_predictions: bool,
    extra: Sequence[str] = (),
    only: Collection[str] | None = None,
    small: bool = False,
) -> tuple[pl.DataFrame, set[str]]:
    """Every group of every attribute set (and by value): sums, metrics, labels and typed keys.
    ``typed``: the privileged values in their columns' dtypes (:func:`coerce_values`); ``extra``: more
    columns of ``lf`` to sum per group; ``only``: the group metrics computed (``None``: every one);
    ``small``: ``lf`` is a small table (its labels are computed once per cell).
    """
    metric_exprs = group_metrics(has_predictions)
    if only is not None:
        metric_exprs = [e for e in metric_exprs if e.meta.output_name() in only]
    frames = []
    modes: set[str] = set()
    # a small cell table with several attribute sets: each key's label once per cell (one small plan),
    # carried through the roll-ups, instead of once per set (each label is a dozen string steps, which
    # cost more than a small table's data); the same strings (a group's key is its first cell's value)
    labels = {a: f"__pf_lbl{i}" for i, a in enumerate(keys)} if small and len(sets) > 1 else None
    if labels is not None:
        lf = lf.with_columns([_label_expr(a).alias(labels[a]) for a in keys]).collect(**_SMALL).lazy()
    for ai, attrs in enumerate(sets):
        covered = all(a in typed for a in attrs)
        mode = reference or ("privileged" if typed and covered else "largest")
        modes.add(mode)
        is_priv = pl.lit(False)
        label = None
        if mode == "privileged" and covered:
            is_priv = pl.lit(True)
            for a in attrs:
                is_priv = is_priv & match_values(pl.col(a), schema[a], typed[a])
            label = SEPARATOR.join("|".join(value_label(v) for v in typed[a]) for a in attrs)
        key = pl.struct([pl.col(k) if k in attrs else pl.lit(None, schema[k]).alias(k) for k in keys])
        if labels is None:
            rolled, label_of = _rollup(lf, [*ib, *attrs], extra), group_label(attrs)
        else:
            rolled = lf.group_by([*ib, *attrs], maintain_order=True).agg(
                *[pl.col(c).sum() for c in (*_SUMS, *extra)], *[pl.col(labels[a]).first() for a in attrs])
            label_of = pl.concat_str([pl.col(labels[a]) for a in attrs], separator=SEPARATOR)
        frames.append(
            rolled
            .sort([*ib, *attrs], nulls_last=False)
            .select(
                *ib, pl.lit(ai, pl.Int64).alias(SORT_A), pl.lit(SEPARATOR.join(attrs)).alias("attribute"),
                label_of.alias(GROUP_COL), key.alias(GROUP_KEY), is_priv.alias(_PRIV),
                pl.lit(mode).alias(_MODE), pl.lit(label, pl.String).alias(_PLABEL), *_SUMS, *extra,
            )  # fmt: skip
        )
    groups = (
        pl.concat(frames).with_row_index(SORT_G).with_columns(pl.col(SORT_G).cast(pl.Int64))
        .with_columns(metric_exprs).collect(**_SMALL).rechunk()
    )  # fmt: skip
    return groups, modes



def _reference(
    groups: pl.LazyFrame,
    pop: pl.LazyFrame,
    sk: list[str],
    ib: list[str],
    metric_names: list[str],
    modes: set[str],
    disparities: Sequence[Disparity],
    min_n: int = 0,
) -> pl.DataFrame:
    """One row per (by group, attribute set): ``<metric>__ref`` values and ``<name>__refname``
    (Categorical) for every metric and named disparity. Only the branches of the ``modes`` in use are built.
    The choice among groups (largest, best) and the small-group policy: :mod:`polfair.core.reference`.
    """

    def of(m: str) -> pl.LazyFrame:
        return groups.filter(pl.col(_MODE) == m) if len(modes) > 1 else groups

    parts = []
    if "privileged" in modes:  # the rows flagged privileged, summed; none in a by group -> null
        priv = (
            of("privileged")
            .group_by(sk)
            .agg(pl.col(_PLABEL).first(), pl.col(_PRIV).any().alias("__pf_has"), pl.col("attribute").first(),
                 *[pl.col(c).filter(pl.col(_PRIV)).sum() for c in _SUMS])  # fmt: skip
            .with_columns(group_metrics(True))
            .with_columns([pl.when(pl.col("__pf_has")).then(pl.col(m)).alias(m) for m in metric_names])
        )
        named = priv.filter(pl.col("__pf_has")).select(pl.col(_PLABEL).fill_null(pl.col("attribute")), "n")
        warn_small_reference(named.collect(**_SMALL), label=_PLABEL, size="n", min_sample_size=min_n,
                             stacklevel=user_stacklevel() + 1)  # fmt: skip
        parts.append(_named(priv, sk, metric_names, pl.when(pl.col(_PLABEL).is_not_null()).then(pl.col(_PLABEL))))
    if "overall" in modes:
        overall = of("overall").select(*sk).unique().join(pop, on=ib, how="left", nulls_equal=True)
        parts.append(_named(overall, sk, metric_names, pl.lit("overall")))
    if "largest" in modes:  # largest total weight among the groups meeting the minimum; ties: the first in key order
        # pick the row index first (narrow), then fetch that row: sorting the wide table is costly
        first = largest_reference(of("largest"), sk, order=SORT_G, weight="w", size="n", min_sample_size=min_n)
        largest = of("largest").join(first.select(SORT_G), on=SORT_G, how="semi")
        parts.append(_named(largest, sk, metric_names, pl.col(GROUP_COL)))
    if "best" in modes:  # per metric: the best value of the attribute set's groups meeting the minimum
        ok = eligible("n", min_n)
        cols = []
        for m in metric_names:
            hib = METRICS[m].higher_is_better
            pick = best_value(pl.col(m), hib in (True, None), ok)
            chosen = (pl.col(m) == pick) & (ok | ~ok.any())
            cols += [pick.alias(f"{m}__ref"), pl.col(GROUP_COL).filter(chosen).first().alias(f"{m}__refname")]
            if METRICS[m].is_rate:  # the chosen group's effective size (its intervals are projections)
                n = iv.rate_inputs(m).n if "tp_w2" in groups.collect_schema().names() else pl.lit(None, pl.Float64)
                cols.append(n.filter(chosen).first().alias(f"{m}__refn"))
        cols.append((~ok.any() & (pl.len() > 0)).alias("__pf_nobody"))
        best = of("best").group_by(sk).agg(cols)
        nobody = best.filter(pl.col("__pf_nobody")).select(sk).collect(**_SMALL).height
        if nobody and min_n > 0:
            msg = (
                f"reference='best': in {nobody} attribute set(s) no group has the minimum sample size ({min_n} "
                "rows), so the best group is chosen among groups below it and every comparison is insufficient_data"
            )
            warnings.warn(msg, ReferenceWarning, stacklevel=user_stacklevel())
        parts.append(best.drop("__pf_nobody"))
    ref = parts[0] if len(parts) == 1 else pl.concat(parts, how="diagonal_relaxed")

    def refname(d: Disparity) -> pl.Expr:
        names = [pl.col(f"{m}__refname") for m in d.rates]
        out = names[0]
        for other in names[1:]:  # "best" may pick a different group per rate
            out = pl.when(out == other).then(out).otherwise(pl.concat_str([out, other], separator=" / "))
        return out.alias(f"{d.name}__refname")

    ref = ref.with_columns([refname(d) for d in disparities])
    return ref.collect(**_SMALL).with_columns(pl.col("^.*__refname$").cast(pl.Categorical))


def _named(ref: pl.LazyFrame, sk: list[str], metric_names: list[str], name: pl.Expr) -> pl.LazyFrame:
    rates = [m for m in metric_names if METRICS[m].is_rate]
    has_w2 = "tp_w2" in ref.collect_schema().names()
    return ref.select(
        *sk,
        *[pl.col(m).alias(f"{m}__ref") for m in metric_names],
        *[name.alias(f"{m}__refname") for m in metric_names],
        *[(iv.rate_inputs(m).n if has_w2 else pl.lit(None, pl.Float64)).alias(f"{m}__refn") for m in rates],
    )
