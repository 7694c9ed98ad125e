"""Fairness of regression models: ``regression_report`` and its cell table (issue 23).

ONE ``group_by`` over the rows to the regression cell table (:mod:`polfair.core.regression`), then
every metric, comparison, spread, interval and test from that small table. See
``docs/regression.md``.

Input rules: the input contract's (:mod:`polfair.core.contract`, ``docs/contract.md``), compiled
into the pass by :func:`polfair.core.regression.regression_pass` on every engine: ``y_true`` /
``y_pred`` are numeric outcomes (null and NaN missing, counted in ``n_missing`` and warned about;
±inf an error naming the column), ``weight`` a weight (null and NaN missing; negative or ±inf an
error), ``protected`` / ``by`` keys as in :func:`polfair.fairness_report`. Spark, DuckDB and other
lazy frames run the same pass in their engine through narwhals (``polfair.engines.narwhals``);
their column arguments are names.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Literal, Required, TypedDict, Unpack

import polars as pl

from polfair.core._args import as_list
from polfair.core._typing import IntoExpr
from polfair.core.options import checks_keywords, keywords_of
from polfair.core.passes.spec import PassOptions, check_key_names
from polfair.core.proba import DEFAULT_TOLERANCE, parse_protected_proba
from polfair.core.regression import (
    BINS_PER_OCTAVE,
    REGRESSION_CELL_COLUMNS,
    attach_regression_cells,
    merge_regression_cells,
    regression_pass,
)
from polfair.core.regression.moments import with_lo
from polfair.core.regression.passes import RESERVED_KEYS, cells_of_pass, merge_pass_results
from polfair.core.regression.report import report_rows
from polfair.core.report.build import Intersections, ReportOptions
from polfair.core.report.run_metadata import attach_request, render_request
from polfair.engines.frame import frame_of
from polfair.exceptions import PolfairError

__all__ = ["BatchRows", "RegressionAccumulator", "RegressionOptions", "RegressionRows", "regression_counts",
           "regression_report"]

OnMissing = Literal["warn", "raise", "ignore"]


class BatchRows(TypedDict, total=False):
    """How the rows are read: the keywords of :func:`regression_report` every pass takes (its defaults there).

    ``y_true`` and ``y_pred`` (required), ``protected``, ``weight``, ``by``, ``bins_per_octave``,
    ``on_missing``, ``allow_many_groups``, ``protected_proba``, ``proba_assignment`` and ``proba_tolerance``.
    """

    y_true: Required[IntoExpr]
    y_pred: Required[IntoExpr]
    protected: IntoExpr | Sequence[IntoExpr] | None
    weight: IntoExpr | None
    by: IntoExpr | Sequence[IntoExpr] | None
    bins_per_octave: int
    on_missing: OnMissing
    allow_many_groups: bool
    protected_proba: Mapping[str, Mapping[str, IntoExpr | None]] | None
    proba_assignment: Literal["weighted", "argmax"]
    proba_tolerance: float


class RegressionRows(BatchRows, total=False):
    """The keywords of :func:`regression_counts`: :class:`BatchRows` and the Polars ``engine``."""

    engine: Literal["auto", "in-memory", "streaming"]


class RegressionOptions(BatchRows, total=False):
    """The keywords of :class:`RegressionAccumulator`: :class:`BatchRows` and the report's comparison options.

    ``privileged``, ``reference``, ``intersections``, ``ci`` and ``p_adjust``, as in :func:`regression_report`.
    """

    privileged: Mapping[str, Any] | None
    reference: Literal["privileged", "largest", "overall"] | None
    intersections: Intersections
    ci: float | None
    p_adjust: Literal["bh", "by", "holm"] | None


def _pass_of(data: Any, request: PassOptions, *, bins_per_octave: int, expand: bool = True) -> pl.DataFrame:
    """:func:`regression_counts` of its request; ``expand=False`` with ``protected_proba``: the pass's result
    before its rows are apportioned (:func:`polfair.core.regression.passes.merge_pass_results`).
    """
    frame = frame_of(data)
    check_key_names([frame.column(x, "by").name for x in request.by_keys],
                    [frame.column(x, "protected").name for x in request.protected_keys],
                    also_reserved=RESERVED_KEYS)  # fmt: skip
    return regression_pass(frame, request, bins_per_octave=bins_per_octave, expand=expand)


@checks_keywords
def regression_report(
    data: Any,
    *,
    y_true: IntoExpr,
    y_pred: IntoExpr,
    protected: IntoExpr | Sequence[IntoExpr] | None = None,
    weight: IntoExpr | None = None,
    by: IntoExpr | Sequence[IntoExpr] | None = None,
    privileged: Mapping[str, Any] | None = None,
    reference: Literal["privileged", "largest", "overall"] | None = None,
    intersections: Intersections = None,
    ci: float | None = 0.95,
    p_adjust: Literal["bh", "by", "holm"] | None = "bh",
    bins_per_octave: int = BINS_PER_OCTAVE,
    on_missing: OnMissing = "warn",
    allow_many_groups: bool = False,
    engine: Literal["auto", "in-memory", "streaming"] = "auto",
    min_sample_size: int | None = None,
    protected_proba: Mapping[str, Mapping[str, IntoExpr | None]] | None = None,
    proba_assignment: Literal["weighted", "argmax"] = "weighted",
    proba_tolerance: float = DEFAULT_TOLERANCE,
) -> pl.DataFrame:
    """Audit a regression model for group fairness, in one pass: errors, bias, calibration in the
    large and prediction distributions by group, with intervals and tests.

    Reads the input once (:func:`regression_counts`), then computes for every protected attribute,
    every intersection and the population scikit-learn's regression metrics (``mean_outcome``,
    ``mean_prediction``, ``mean_error``, ``mean_absolute_error``, ``mean_squared_error``,
    ``root_mean_squared_error``, ``r2_score``; weights as ``sample_weight``), the difference and
    ratio of each group's value to the reference group's, fairlearn's group max/min/difference/
    ratio per attribute set, the bounded group loss, and the Kolmogorov–Smirnov distance of each
    group's predictions to the reference's. Use it as ``df.pipe(pf.regression_report, ...)``.

    Parameters
    ----------
    data, y_true, y_pred, protected, weight, by, bins_per_octave, on_missing, allow_many_groups, engine
        As :func:`regression_counts`.
    protected_proba, proba_assignment, proba_tolerance
        An attribute estimated from proxies, as :func:`regression_counts`: its groups' metrics are
        the weighted estimator (equal to the report of the rows expanded into one row per group,
        weighted by its probability; the intervals use ``Σ w²·p_g`` for the effective sizes, as
        :func:`polfair.fairness_report`).
    privileged
        ``{attribute: value or values}``: the reference group of every attribute set whose
        attributes all have privileged values (else the largest group by weight).
    reference
        ``None`` (privileged where given, else largest), ``"privileged"``, ``"largest"``, or
        ``"overall"`` (each group against the rest of the population; the difference to everyone
        is ``(1 − W_g/W)`` times that).
    intersections
        ``None`` (default: every subset of up to 3 attributes), ``"all"``, an int, or explicit
        attribute sets, as :func:`polfair.fairness_report`.
    ci
        Confidence level, default 0.95: the interval and test columns (t / Welch with Kish
        effective sizes, log-scale t for MAE and MSE, delta method for r², asymptotic KS;
        ``docs/regression.md``). ``None``: none.
    p_adjust
        ``"bh"`` (default), ``"by"``, ``"holm"`` or ``None``: ``p_value_adjusted`` within each
        (``by`` value, metric) family.
    min_sample_size
        Input rows a group needs to be the comparison group (the small-group policy,
        ``docs/status.md``): the largest group is chosen among those that meet it; a privileged
        group below it warns. ``None``: 30 rows; ``0``: no minimum.

    Returns
    -------
    pl.DataFrame
        The fairness report's long schema: ``*by, attribute, group, metric, value,
        reference_group, difference, ratio, n`` (``n``: input rows of the group, missing ones
        included), with ``ci`` ``value_lo, value_hi, difference_lo, difference_hi, ratio_lo,
        ratio_hi, p_value, p_value_adjusted, n_eff`` (Float64) and ``ci_method, test``
        (Categorical), then ``n_groups``, ``excluded_groups``, ``group_key``. Metrics and row kinds:
        :func:`polfair.core.regression.regression_report_from_cells` and ``docs/metrics.md``.

    Raises
    ------
    ColumnNotFoundError, InvalidInputError, PolfairError
        As :func:`regression_counts`; bad ``privileged``/``reference``/``intersections``/``ci``.

    Warns
    -----
    MissingValuesWarning
        Rows with a null or NaN outcome, prediction or weight (``on_missing="warn"``).

    Notes
    -----
    Per-group values equal fairlearn's ``MetricFrame`` with scikit-learn's metrics (weighted and
    not) to 1e-12 on UCI Adult; Welch's tests equal ``scipy.stats.ttest_ind(equal_var=False)``
    (``tests/regression``). ``r2_score`` of a constant outcome is null (scikit-learn returns 1.0
    or 0.0).

    Examples
    --------
    >>> import polars as pl
    >>> import polfair as pf
    >>> rep = pf.load_adult_regression().pipe(pf.regression_report, y_true="hours_per_week",
    ...                                       y_pred="predicted_hours", protected="sex", privileged={"sex": "Male"})
    >>> row = rep.filter(group="Female", metric="mean_error")
    >>> row.select(pl.col("value", "difference").round(2), "test").row(0)
    (1.62, 2.45, 'welch')
    """
    cells = regression_counts(
        data, y_true=y_true, y_pred=y_pred, protected=protected, weight=weight, by=by,
        bins_per_octave=bins_per_octave, on_missing=on_missing, allow_many_groups=allow_many_groups, engine=engine,
        protected_proba=protected_proba, proba_assignment=proba_assignment, proba_tolerance=proba_tolerance,
    )  # fmt: skip
    n_by = len(as_list(by))
    by_n, keys = cells.columns[:n_by], cells.columns[n_by : cells.columns.index("bin")]
    if not keys:
        msg = "regression_report needs at least one protected attribute (protected=..., or protected_proba=...)"
        raise PolfairError(msg)
    report = report_rows(cells, ReportOptions.of_keywords(locals() | {"protected": keys, "by": by_n}))
    fields = {
        "y_true": y_true, "y_pred": y_pred, "protected": as_list(protected) or None, "weight": weight,
        "by": as_list(by) or None, "privileged": dict(privileged) if privileged else None, "reference": reference,
        "intersections": intersections, "ci": ci, "p_adjust": p_adjust, "bins_per_octave": bins_per_octave,
        "min_sample_size": min_sample_size,
        "protected_proba": None if protected_proba is None
        else parse_protected_proba(protected_proba, proba_assignment, proba_tolerance).describe(),
    }  # fmt: skip
    attach_request(report, render_request(fields, task="regression"))
    return attach_regression_cells(report, cells)  # the page's prediction distributions read it


@keywords_of(regression_report)
def regression_counts(data: Any, **rows: Unpack[RegressionRows]) -> pl.DataFrame:
    """The regression cell table of the rows: ONE ``group_by(by + protected + bin)``.

    Parameters
    ----------
    data
        ``pl.DataFrame``, ``pl.LazyFrame``, pandas DataFrame, pyarrow Table, dict of columns, a
        parquet/CSV path (scanned lazily), or a Spark / DuckDB / other lazy frame (the pass runs in
        that engine through narwhals, extra ``polfair[spark]`` / ``polfair[duckdb]``; column
        arguments are then names).
    y_true, y_pred
        The outcome and the model's prediction: numeric column names or named expressions.
    protected, by
        Protected attribute(s) and ``by`` column(s): names or named expressions.
    weight
        Optional non-negative numeric weights (scikit-learn's ``sample_weight``).
    bins_per_octave
        Resolution of the prediction histogram (default 256: bins 0.27% wide).
    on_missing
        ``"warn"`` (default), ``"raise"`` or ``"ignore"`` rows whose outcome, prediction or weight is
        null or NaN (always counted in ``n_missing``, never used).
    allow_many_groups
        Accept a key with a group per row or so (more than 1000 distinct values that are more
        than half the rows: an error by default, checked after the pass as in
        :func:`polfair.fairness_report`).
    engine
        Polars engine of the pass.
    protected_proba, proba_assignment, proba_tolerance
        A protected attribute estimated from proxies (BISG probabilities), as in
        :func:`polfair.fairness_report`: ``{attribute: {group: probability column, ...}}`` (one
        group may map to ``None``: the remainder). ``"weighted"`` (default): each group's moments
        are taken with the weights ``w·p_g`` (the weighted estimator: the report of the rows
        expanded into one row per group weighted by its probability), its ``w2`` is ``Σ w²·p_g``
        and ``n`` the rows apportioned to it; ``"argmax"``: each row in its likeliest group. Rows
        whose probabilities are missing are its null group's ``n_missing``; probabilities outside
        [0, 1] or not summing to 1 (within ``proba_tolerance``) are an error. Its key comes after
        ``protected``.

    Returns
    -------
    pl.DataFrame
        ``*by``, ``*protected`` [, the estimated attribute], ``bin``, then
        :data:`~polfair.core.regression.REGRESSION_CELL_COLUMNS` (the table's schema:
        :mod:`polfair.core.regression`). Tables of partitions merge with
        :func:`~polfair.core.regression.merge_regression_cells`.

    Raises
    ------
    ColumnNotFoundError
        A named column is missing.
    InvalidInputError
        The input contract's (:mod:`polfair.core.contract`): a non-numeric outcome, prediction or
        weight; an infinite value; a negative weight (naming the column, the count, example values
        and the fix); missing values with ``on_missing="raise"``; a key of an unsupported dtype or
        with too many groups.
    PolfairError
        A key name that is reserved or given twice.
    TypeError
        A Spark/DuckDB frame with an expression for a column argument (give names).

    Examples
    --------
    >>> import polars as pl
    >>> import polfair as pf
    >>> df = pl.DataFrame({"y": [1.0, 2.0, 4.0], "p": [1.5, None, 3.0], "g": ["a", "a", "b"]})
    >>> cells = pf.regression_counts(df, y_true="y", y_pred="p", protected="g", on_missing="ignore")
    >>> cells.group_by("g").agg(pl.col("n", "n_missing").sum()).sort("g").rows()
    [('a', 1, 1), ('b', 1, 0)]
    """
    request = PassOptions.of(**{k: v for k, v in rows.items() if k != "bins_per_octave"})
    return _pass_of(data, request, bins_per_octave=rows.get("bins_per_octave", BINS_PER_OCTAVE))


class RegressionAccumulator:
    """Accumulate a regression fairness report over batches (streams, epochs, partitions), then compute it.

    Keeps only the regression cell table (:mod:`polfair.core.regression`): each :meth:`update`
    runs the one pass over its batch (:func:`regression_counts`, with its input rules) and merges
    the batch's table (:func:`polfair.core.regression.merge_regression_cells`); :meth:`compute`
    makes the report (:func:`polfair.core.regression.regression_report_from_cells`). Any split of
    the rows into batches, in any order, gives the report of the whole data up to floating-point
    summation order. The regression counterpart of :class:`polfair.FairnessAccumulator`.

    Parameters
    ----------
    y_true, y_pred, protected, weight, by, bins_per_octave, on_missing, allow_many_groups
        As :func:`regression_counts`; how to read each batch.
    protected_proba, proba_assignment, proba_tolerance
        An attribute estimated from proxies, as :func:`regression_counts` (its key after ``protected``).
        The accumulator keeps each batch's pass result before its rows are apportioned to the groups
        (:func:`polfair.core.regression.passes.merge_pass_results`) and apportions the merged sums
        once, as one pass does: :attr:`state` and :meth:`compute` give one pass's row counts.
    privileged, reference, intersections, ci, p_adjust
        As :func:`regression_report`; used by :meth:`compute`.

    Raises
    ------
    PolfairError
        :meth:`compute` before any row; :meth:`merge` of accumulators with other keys; a state
        with other columns.

    Examples
    --------
    >>> import polars as pl
    >>> import polfair as pf
    >>> df = pf.load_adult_regression()
    >>> acc = pf.RegressionAccumulator(y_true="hours_per_week", y_pred="predicted_hours", protected="sex",
    ...                                privileged={"sex": "Male"})
    >>> for batch in df.iter_slices(20_000):
    ...     _ = acc.update(batch)
    >>> got = acc.compute().filter(group="Female", metric="mean_error")["difference"].item()
    >>> want = df.pipe(pf.regression_report, y_true="hours_per_week", y_pred="predicted_hours", protected="sex",
    ...                privileged={"sex": "Male"}).filter(group="Female", metric="mean_error")["difference"].item()
    >>> abs(got - want) < 1e-9
    True
    """

    @keywords_of(regression_report)
    def __init__(self, **options: Unpack[RegressionOptions]) -> None:
        given = inspect.signature(regression_report).bind(None, **options)  # with regression_report's defaults
        given.apply_defaults()
        a = given.arguments
        self._read: dict[str, Any] = {k: a[k] for k in BatchRows.__annotations__}
        self._report = ReportOptions(**{k: a[k] for k in ("privileged", "reference", "intersections", "ci", "p_adjust")})
        self._n_by = len(as_list(a["by"]))
        self._cells: pl.DataFrame | None = None
        # an estimated attribute: the pass's results before their rows are apportioned, merged (apportioned once)
        self._raw: pl.DataFrame | None = None
        self._ps = None if a["protected_proba"] is None else parse_protected_proba(
            a["protected_proba"], a["proba_assignment"], a["proba_tolerance"])  # fmt: skip

    def update(self, batch: Any) -> RegressionAccumulator:
        """Add a batch (any input of :func:`regression_counts`); returns ``self``."""
        if self._ps is not None:
            read = {k: v for k, v in self._read.items() if k != "bins_per_octave"}
            request = PassOptions.of(**read, engine="auto")
            return self._add_raw(_pass_of(batch, request, bins_per_octave=self._read["bins_per_octave"], expand=False))
        return self._add(regression_counts(batch, **self._read))

    @staticmethod
    def _check_columns(table: pl.DataFrame, held: pl.DataFrame | None, what: str) -> None:
        if held is not None and table.columns != held.columns:
            msg = (
                f"the batch's {what} has columns {table.columns}, the accumulated one {held.columns}: "
                "every batch and merged accumulator must have the same by and protected columns"
            )
            raise PolfairError(msg)

    def _add_raw(self, raw: pl.DataFrame) -> RegressionAccumulator:
        self._check_columns(raw, self._raw, "pass")
        self._raw = raw if self._raw is None else merge_pass_results([self._raw, raw], self._ps)
        return self

    def _add(self, cells: pl.DataFrame) -> RegressionAccumulator:
        self._check_columns(cells, self._cells, "cell table")
        self._cells = cells if self._cells is None else merge_regression_cells([self._cells, cells])
        return self

    def merge(self, other: RegressionAccumulator) -> RegressionAccumulator:
        """Add another accumulator's rows (e.g. of another partition or worker); returns ``self``."""
        if other._raw is not None:
            self._add_raw(other._raw)
        if other._cells is not None:
            self._add(other._cells)
        return self

    def reset(self) -> RegressionAccumulator:
        """Forget every row; returns ``self``."""
        self._cells = self._raw = None
        return self

    def _table(self) -> pl.DataFrame | None:
        """The cell table: the merged batches' rows apportioned to the estimated groups once (as one pass
        does), merged with a loaded state.
        """
        if self._raw is None:
            return self._cells
        cells = cells_of_pass(self._raw, self._ps)
        return cells if self._cells is None else merge_regression_cells([self._cells, cells])

    def compute(self) -> pl.DataFrame:
        """The report of every row added so far (the schema of :func:`regression_report`)."""
        table = self._table()
        if table is None or int(table["n"].sum()) == 0:
            raise PolfairError("RegressionAccumulator.compute: no rows yet (call update with a batch first)")
        cols = table.columns
        by, keys = cols[: self._n_by], cols[self._n_by : cols.index("bin")]
        report = report_rows(table, replace(self._report, protected=tuple(keys), by=tuple(by)))
        return attach_regression_cells(report, table)

    @property
    def state(self) -> pl.DataFrame | None:
        """The accumulated regression cell table (``None`` before the first batch).

        With an estimated attribute, its rows are apportioned to the groups from the batches'
        summed shares, as one pass over all the rows does: the table is one pass's (row counts
        equal, values up to summation order). A table given back to :meth:`load_state` is taken
        as it is (its rows apportioned already).
        """
        return self._table()

    def load_state(self, state: pl.DataFrame) -> RegressionAccumulator:
        """Replace the accumulated table by ``state`` (a table of :attr:`state`, e.g. read from parquet)."""
        missing = [c for c in ("bin", *REGRESSION_CELL_COLUMNS) if c not in state.columns]
        if missing:
            old = (" (a state saved by an earlier polfair, with sums about a shift: re-accumulate the batches, "
                   "docs/schema.md, version 4)") if "sum_y" in state.columns else ""  # fmt: skip
            msg = f"load_state: not a regression cell table (missing columns {missing}){old}"
            raise PolfairError(msg)
        self._cells = with_lo(state)  # a state saved before issue 40 (no compensations): lo = 0
        self._raw = None
        return self
