"""The output contract: the report's and the cell table's columns, as data, with a schema version.

A table that a pipeline appends reports to (a parquet file, a directory of them, a warehouse table)
needs a schema that does not change under it. This module is the single statement of that schema:
every column polfair may write, its dtype, its meaning, and the schema version that introduced it.
``docs/schema.md`` is the prose version; ``tests/test_schema.py`` checks real reports against it.

Policy (``docs/schema.md``): within a major version columns are only **appended**, never renamed,
retyped or removed; every column added after version 1 is nullable (a reader of an older table
sees nulls); each change bumps :data:`SCHEMA_VERSION`. Writers that append
(:func:`polfair.outputs.writers.append_report`) refuse a report whose columns or dtypes differ
from the table's, naming the differences (:func:`schema_differences`).

Column order of a report: the ``by`` columns (input dtypes), then :data:`REPORT_SCHEMA` in order,
skipping the optional columns that a given call does not produce (intervals without ``ci``,
monitor columns without thresholds, run metadata unless asked for). Cell table: ``by`` columns,
protected keys (input dtypes), then :data:`CELL_SCHEMA` in order (``bucket`` only with
``cluster=``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

import polars as pl

__all__ = [
    "CELL_SCHEMA",
    "REPORT_SCHEMA",
    "RUN_METADATA_COLUMNS",
    "SCHEMA_VERSION",
    "Column",
    "by_columns",
    "dtype_matches",
    "report_dtypes",
    "schema_differences",
    "schema_table",
]

#: The version of the report and cell-table schemas (an int; bumped on every schema change).
#: 1: the original long report (``*by, attribute, group, metric, value, reference_group,
#: difference, ratio, n``, optional ``threshold, status``). 2: intervals and tests, run metadata,
#: the weighted-square counts and jackknife bucket of the cell table. 3: the ``harm`` column (the
#: direction of each comparison), ``status`` from the interval rule of :mod:`polfair.core.report.status`,
#: appends that add columns. 4: a config attribute's rows in neither its monitored nor its
#: reference group are the group ``"(neither group)"``, not ``"other"``; the regression cell table
#: of centred moments (``mean_*``, ``m2_*`` ..., ``w_exp``, ``y_exp`` instead of sums about a
#: shift), ``score_report``'s ``n`` counting every row and its ``n_missing`` rows, Σw² columns null
#: (with a warning) where Float64 cannot hold them (see ``docs/schema.md``).
SCHEMA_VERSION = 5


class Column(NamedTuple):
    """One column of a polfair table.

    ``dtype`` is a Polars dtype instance, or a dtype *class* (``pl.Struct``, ``pl.Enum``,
    ``pl.Datetime``) where the parameters depend on the call (the fields of a group key, the
    categories of an Enum); :func:`dtype_matches` then compares the base type only.
    """

    name: str
    dtype: pl.DataType | type[pl.DataType]
    meaning: str
    since: int
    kind: str  # report: "core" | "interval" | "monitor" | "run"; cell table: "key" | "count"
    nullable: bool = True


_F, _S, _I = pl.Float64(), pl.String(), pl.Int64()

#: The report's columns after the ``by`` columns, in order.
REPORT_SCHEMA: tuple[Column, ...] = (
    Column("attribute", pl.Categorical, "attribute-set names joined by ' & '; null on population rows "
           "(String in version 1)", 1, "core"),
    Column("group", _S, "the group's display label: values joined by ' & ' (null value -> 'null'; a value "
           "containing ' & ' or equal to 'null' is JSON-quoted); null on attribute and population rows. A config's "
           "monitored/reference attribute has the groups: its monitored label, its reference label, "
           "'(neither group)' (version 4; 'other' before) and 'null'", 1, "core"),
    Column("metric", pl.Categorical, "standard metric name (aif360 / fairlearn spelling; String in version 1)",
           1, "core", False),
    Column("value", _F, "the metric; null where undefined (zero denominator), never a silent 0", 1, "core"),
    Column("reference_group", pl.Categorical, "the group compared with (group rows and disparities; String "
           "in version 1)", 1, "core"),
    Column("difference", _F, "group rows: value - reference value; attribute rows: max - min over groups", 1, "core"),
    Column("ratio", _F, "group rows: value / reference value; attribute rows: min / max over groups", 1, "core"),
    Column("n", _I, "input rows in the group (missing ones included)", 1, "core", False),
    Column("value_lo", _F, "lower confidence limit of value", 2, "interval"),
    Column("value_hi", _F, "upper confidence limit of value", 2, "interval"),
    Column("difference_lo", _F, "lower confidence limit of difference", 2, "interval"),
    Column("difference_hi", _F, "upper confidence limit of difference", 2, "interval"),
    Column("ratio_lo", _F, "lower confidence limit of ratio", 2, "interval"),
    Column("ratio_hi", _F, "upper confidence limit of ratio", 2, "interval"),
    Column("p_value", _F, "p-value of H0 'no difference from the reference' (group rows) or 'all groups "
           "equal' (attribute rows)", 2, "interval"),
    Column("p_value_adjusted", _F, "p_value adjusted for multiplicity within (by value, row kind, metric)", 2,
           "interval"),
    Column("n_eff", _F, "effective sample size of the rate's denominator (Kish; = count unweighted)", 2, "interval"),
    Column("ci_method", pl.Categorical, "interval method (score, score_ess, mover, projection, delta_bc, "
           "jackknife_t, bound; bootstrap_bc before 2026-11-23)", 2, "interval"),
    Column("test", pl.Categorical, "test behind p_value (chi2_n1, fisher, z_ess, chi2_2df, chi2_homogeneity, "
           "chi2_moments, jackknife_t; mc_exact before issue 25)", 2, "interval"),
    Column("n_groups", _I, "attribute rows and between_all_groups rows: number of groups the spread or index "
           "is over; null elsewhere", 2, "core"),
    Column("excluded_groups", _S, "attribute rows: groups left out of the spread (undefined value), as a "
           "JSON list; null elsewhere", 2, "core"),
    Column("group_key", pl.Struct, "the typed group key: one field per protected attribute in its input dtype "
           "(null field: not in the attribute set, or a null value); null on population rows", 2, "core"),
    Column("harm", _S, "group rows of a metric with a direction of harm: 'group' (the group has the lower rate "
           "of favorable outcomes, or the higher rate of unfavorable ones or errors, than its reference), "
           "'reference', or 'none' (no difference); null elsewhere (polfair.core.report.status)", 3, "core"),
    Column("threshold", _S, "the threshold band applied to the row (monitor; with thresholds)", 1, "monitor"),
    Column("status", _S, "'ok' | 'violation' | 'inconclusive' | 'insufficient_data' (polfair.core.report.status: "
           "a violation's whole interval lies outside the band; inconclusive: the value is outside, the interval "
           "reaches in); null where no threshold applies", 1, "monitor"),
    Column("run_id", _S, "identifier of the run that produced the row (uuid4 hex by default)", 2, "run"),
    Column("run_at", pl.Datetime("us", "UTC"), "when the run started (UTC, microseconds)", 2, "run"),
    Column("polfair_version", _S, "polfair version that computed the row", 2, "run"),
    Column("schema_version", pl.Int32(), "SCHEMA_VERSION of the row's schema", 2, "run"),
    Column("config_hash", _S, "sha256 (hex, 16 chars) of the report's options: same hash, same "
           "configuration", 2, "run"),
)  # fmt: skip

#: The run-metadata columns (:func:`polfair.core.report.run_metadata.with_run_metadata`), last in a report.
RUN_METADATA_COLUMNS = tuple(c.name for c in REPORT_SCHEMA if c.kind == "run")

_U = pl.UInt64()

#: The cell table's columns after the ``by`` columns and the protected keys, in order (``bucket``
#: only with ``cluster=``).
CELL_SCHEMA: tuple[Column, ...] = (
    Column("bucket", pl.UInt8(), "jackknife bucket of the rows' cluster (only with cluster=): a key column, "
           "right after the protected keys", 2, "key", False),
    Column("n", _U, "rows in the cell, all of them (valid + missing + invalid)", 1, "count", False),
    Column("n_missing", _U, "rows with a null label, prediction, score or weight", 1, "count", False),
    Column("n_invalid", _U, "rows with an invalid label, score or weight", 1, "count", False),
    Column("w", _F, "sum of weights over the counted rows (= their number unweighted)", 1, "count", False),
    Column("tp", _F, "weighted true positives (favorable label, favorable prediction)", 1, "count", False),
    Column("fp", _F, "weighted false positives", 1, "count", False),
    Column("tn", _F, "weighted true negatives", 1, "count", False),
    Column("fn", _F, "weighted false negatives", 1, "count", False),
    Column("tp_n", _U, "unweighted true positives", 1, "count", False),
    Column("fp_n", _U, "unweighted false positives", 1, "count", False),
    Column("tn_n", _U, "unweighted true negatives", 1, "count", False),
    Column("fn_n", _U, "unweighted false negatives", 1, "count", False),
    Column("gtp", _F, "sum of w*s over y = favorable (s = score, or 1[prediction favorable])", 1, "count", False),
    Column("gfp", _F, "sum of w*s over y = unfavorable", 1, "count", False),
    Column("gtn", _F, "sum of w*(1-s) over y = unfavorable", 1, "count", False),
    Column("gfn", _F, "sum of w*(1-s) over y = favorable", 1, "count", False),
    Column("tp_w2", _F, "sum of squared weights over true positives (Kish effective sizes)", 2, "count"),
    Column("fp_w2", _F, "sum of squared weights over false positives", 2, "count"),
    Column("tn_w2", _F, "sum of squared weights over true negatives", 2, "count"),
    Column("fn_w2", _F, "sum of squared weights over false negatives", 2, "count"),
)  # fmt: skip


def dtype_matches(actual: pl.DataType, expected: pl.DataType | type[pl.DataType]) -> bool:
    """Whether ``actual`` satisfies ``expected`` (a dtype, or a dtype class matching any parameters).

    Examples
    --------
    >>> import polars as pl
    >>> dtype_matches(pl.Struct({"sex": pl.String}), pl.Struct)
    True
    >>> dtype_matches(pl.Int32(), pl.Int64())
    False
    """
    if isinstance(expected, type):
        return actual.base_type() == expected
    return actual == expected


def report_dtypes(kinds: Sequence[str] | None = None) -> dict[str, pl.DataType | type[pl.DataType]]:
    """The report's columns -> dtypes (without the ``by`` columns), optionally only some kinds.

    Parameters
    ----------
    kinds
        Subset of ``"core"``, ``"interval"``, ``"monitor"``, ``"run"`` (default: all).

    Examples
    --------
    >>> list(report_dtypes(["run"]))
    ['run_id', 'run_at', 'polfair_version', 'schema_version', 'config_hash']
    """
    return {c.name: c.dtype for c in REPORT_SCHEMA if kinds is None or c.kind in kinds}


def by_columns(columns: Sequence[str]) -> list[str]:
    """The ``by`` columns of a report: the columns before ``attribute``.

    Raises
    ------
    ValueError
        ``columns`` has no ``attribute`` column (not a polfair report).

    Examples
    --------
    >>> by_columns(["month", "attribute", "group", "metric", "value"])
    ['month']
    """
    cols = list(columns)
    if "attribute" not in cols:
        msg = f"not a polfair report: no 'attribute' column among {cols[:12]}"
        raise ValueError(msg)
    return cols[: cols.index("attribute")]


def _fmt(dtype: pl.DataType | type[pl.DataType] | None) -> str:
    if dtype is None:
        return "absent"
    return dtype.__name__ if isinstance(dtype, type) else str(dtype)


def schema_differences(
    actual: Mapping[str, pl.DataType], expected: Mapping[str, pl.DataType | type[pl.DataType]]
) -> list[str]:
    """Human-readable differences between two schemas (empty when they agree, order ignored).

    Parameters
    ----------
    actual
        Column -> dtype of the frame being checked (``df.schema``).
    expected
        Column -> dtype (or dtype class) it must have.

    Returns
    -------
    list[str]
        One line per column that is missing, extra, or of another dtype, e.g.
        ``"column 'n': Int32 here, Int64 expected"``.

    Examples
    --------
    >>> import polars as pl
    >>> for line in schema_differences({"a": pl.Int64(), "b": pl.String()}, {"a": pl.Int32(), "c": pl.Float64()}):
    ...     print(line)
    column 'a': Int64 here, Int32 expected
    column 'b': String here, absent expected
    column 'c': absent here, Float64 expected
    """
    out = []
    names = list(actual) + [c for c in expected if c not in actual]
    for name in names:
        a, e = actual.get(name), expected.get(name)
        if a is None or e is None or not dtype_matches(a, e):
            out.append(f"column {name!r}: {_fmt(a)} here, {_fmt(e)} expected")
    return out


def schema_table(columns: Sequence[Column] = REPORT_SCHEMA) -> pl.DataFrame:
    """The schema as a DataFrame (``name, dtype, since, kind, nullable, meaning``), for docs and checks.

    Examples
    --------
    >>> schema_table().filter(since=1).height >= 8
    True
    """
    return pl.DataFrame(
        {
            "name": [c.name for c in columns],
            "dtype": [_fmt(c.dtype) for c in columns],
            "since": [c.since for c in columns],
            "kind": [c.kind for c in columns],
            "nullable": [c.nullable for c in columns],
            "meaning": [c.meaning for c in columns],
        },
        schema={"name": pl.String, "dtype": pl.String, "since": pl.Int64, "kind": pl.String,
                "nullable": pl.Boolean, "meaning": pl.String},
    )  # fmt: skip
