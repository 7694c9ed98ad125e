"""Streaming accumulation: update a fairness audit batch by batch, merge partial audits, save them.

:class:`FairnessAccumulator` keeps only the cell table (:mod:`polfair.core.passes.counts`), the sufficient
statistic of every metric of the report. Each ``update`` runs the one pass over its batch and adds
the batch's cell table with :func:`polfair.merge_counts`; ``compute`` runs
:func:`polfair.report_from_counts`. Because cell tables are additive, any split of the data into
batches, in any order, and any tree of ``merge`` calls gives the cell table of the whole data:
exactly for integer counts (unweighted data, integer weights), and up to floating-point summation
order for real weights. An estimated attribute (``protected_proba``, weighted) keeps the pass's
result before its rows are apportioned to the groups instead, and apportions it once, as one
pass does. This is the ``update / compute / reset / state_dict`` protocol of
pytorch-ignite's metrics and of TFMA's combiners, with an Arrow/parquet state.
"""

from __future__ import annotations

import base64
import io
import json
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import polars as pl

from polfair.core._args import as_expr, as_list, output_name
from polfair.core._typing import IntoExpr
from polfair.core.clustered import clustered_report
from polfair.core.contract import cell_alarms, label_values_warnings, seen_values
from polfair.core.contract.inputs import to_lazyframe
from polfair.core.options import checks_keywords, refuse_unused_threshold
from polfair.core.passes.collect import cells_of_codes, collect_cells, collect_codes
from polfair.core.passes.counts import COUNT_DTYPES, W2_COLUMNS, check_cell_table, merge_counts, pivot_codes
from polfair.core.passes.estimated import expand_codes, merge_codes
from polfair.core.passes.spec import CODE, Spec, build_spec, protected_exprs
from polfair.core.proba import DEFAULT_TOLERANCE, check_proba_options, parse_protected_proba
from polfair.core.report.build import MAX_INTERSECTION_GROUPS, ReportOptions, check_reference, report_of
from polfair.core.report.worst import MAX_GROUPS_PER_ATTRIBUTE, WORST_K, check_worst_options
from polfair.exceptions import InvalidInputError, PolarityWarning, PolfairError, ReferenceWarning, user_stacklevel

__all__ = ["FairnessAccumulator"]

_META_KEY = b"polfair.engines.accumulator"
#: Metadata key of a saved state's un-apportioned pass result (an estimated attribute, ``"weighted"``):
#: the Arrow IPC stream of :func:`polfair.core.passes.estimated.merge_codes`'s table, base64.
_CODES_KEY = b"polfair.engines.accumulator.codes"
#: Version of the saved state. 2 (issue 11): Σw² columns ``tp_w2 … fn_w2`` and the optional
#: ``bucket`` key. A version-1 state (no ``*_w2``) still loads: unweighted, Σw² equals the counts;
#: weighted, the ``*_w2`` are null (values are computed, weighted-row intervals are null).
STATE_VERSION = 2


def _to_frame(batch: Any) -> pl.DataFrame | pl.LazyFrame:
    """A batch as a polars frame: frames and Arrow tables as they are, mappings of arrays column-wise."""
    if isinstance(batch, (pl.DataFrame, pl.LazyFrame)):
        return batch
    if isinstance(batch, Mapping):
        import numpy as np

        cols = {}
        for name, v in batch.items():
            if hasattr(v, "detach"):  # torch tensors (possibly on GPU, possibly requiring grad)
                v = v.detach().cpu().numpy()
            elif not isinstance(v, (list, tuple, pl.Series)) and hasattr(v, "__array__"):
                v = np.asarray(v)
            if isinstance(v, np.ndarray) and v.ndim != 1:
                msg = f"batch column {name!r} has shape {v.shape}; columns must be 1-D (one value per row)"
                raise InvalidInputError(msg)
            cols[str(name)] = v
        lengths = {k: len(v) for k, v in cols.items() if hasattr(v, "__len__")}
        if len(set(lengths.values())) > 1:
            shown = ", ".join(f"{k}={n}" for k, n in lengths.items())
            msg = f"ragged batch: its columns have different lengths ({shown}); every column needs one value per row"
            raise InvalidInputError(msg)
        return pl.DataFrame(cols)
    lf = to_lazyframe(batch)
    return lf


class FairnessAccumulator:
    """Accumulate a fairness report over batches (streams, epochs, partitions), then compute it.

    Parameters
    ----------
    y_true, y_pred, y_score, threshold, protected, favorable, unfavorable, score_label, weight, by
        As in :func:`polfair.fairness_report`; they say how to read each batch (the polarity rule,
        ``docs/contract.md#polarity``, is checked on every batch).
    privileged, reference, intersections, alpha, concentration, ci, n_boot, seed, p_adjust
        As in :func:`polfair.fairness_report` (intervals at ``ci=0.95`` by default, ``None`` for
        none); used by :meth:`compute`.
    thresholds
        As in :func:`polfair.fairness_report` (a named policy such as ``"four_fifths"``, or a mapping
        metric -> ``[lo, hi]``): :meth:`compute` adds its ``threshold`` and ``status`` columns, judged by
        :func:`polfair.apply_thresholds` (with ``min_sample_size`` alone, the ``insufficient_data``
        statuses, as the report's).
    min_sample_size, max_intersection_groups, max_groups_per_attribute, worst_k
        As in :func:`polfair.fairness_report`, with its defaults (30 rows for a comparison group;
        intersections within 1,000 groups; an attribute set of more than 1,000 groups shows its 20
        worst groups' rows), so :meth:`compute` says what the report of all the rows says.
    on_missing
        ``"warn"`` | ``"raise"`` | ``"ignore"``, applied to each batch (see
        :func:`polfair.fairness_report`).
    cluster, n_buckets
        Optional cluster id column and number of jackknife buckets, as in
        :func:`polfair.confusion_counts`: the state then has a ``bucket`` key.
    engine
        Polars engine for each batch's pass (default ``"streaming"``).
    protected_proba, proba_assignment, proba_tolerance
        A protected attribute estimated from proxies, as in :func:`polfair.fairness_report`
        (``protected`` may then be omitted): its key is the last of :attr:`protected`. With
        ``"weighted"`` the accumulator keeps the pass's result before its rows are apportioned to
        the groups (per observed cell and outcome: the row counts and each group's ``Σ p_g``,
        ``Σ w·p_g``, ...; :func:`polfair.core.passes.estimated.merge_codes`), and apportions the rows
        once, in :meth:`state` and :meth:`compute`, as one pass does: the row counts ``n``,
        ``tp_n`` ... equal one pass's over all the rows, and every value, interval and entropy
        index equals the report's up to summation order. :meth:`save` / :meth:`to_arrow` keep that
        table in the file's metadata; a plain cell table given to :meth:`load_state` (without it)
        has its rows apportioned already, and batches added to it are apportioned on their own.
        Not with ``exact_sums=True``.
    exact_sums
        ``False`` (default): weighted sums are Float64 (merged batch by batch: equal to one pass
        over all the rows up to summation order, about 1e-13 relative). ``True``: the accumulator
        keeps the pass's exact integer sums (:func:`polfair.confusion_counts` with
        ``exact_sums=True``), so ``update``/``merge`` in any order and split give bit for bit the
        cell table and report of one pass over all the rows. A state loaded with
        :meth:`load_state` is a Float64 cell table: from then on the accumulator adds Float64 sums.

    Attributes
    ----------
    protected, by : tuple of str
        Output names of the protected attributes and ``by`` keys (the cell table's key columns).
    has_predictions : bool
        Whether ``y_pred`` or ``y_score`` was given.

    Raises
    ------
    PolfairError
        Invalid options (no protected attribute, unnamed expressions, bad ``reference``).

    Notes
    -----
    ``update(batch) ... compute()`` equals ``fairness_report(concat(batches))`` exactly when the
    counts are integers (unweighted or integer weights) or with ``exact_sums=True``; real weights
    otherwise agree up to summation order.
    A batch is validated like the report's input: invalid labels, scores or weights raise in
    ``update`` (the state is left unchanged). Empty eager batches are skipped.

    Examples
    --------
    >>> import polars as pl
    >>> import polfair as pf
    >>> from polfair.engines.accumulator import FairnessAccumulator
    >>> df = pl.DataFrame({"y": [1, 0, 1, 1, 0, 0], "p": [1, 1, 0, 1, 0, 1],
    ...                    "sex": ["f", "f", "f", "m", "m", "m"]})
    >>> acc = FairnessAccumulator(y_true="y", y_pred="p", protected="sex")
    >>> acc.update(df[:4]).update({"y": [0, 0], "p": [0, 1], "sex": ["m", "m"]})  # doctest: +ELLIPSIS
    <polfair.engines.accumulator.FairnessAccumulator object at ...>
    >>> acc.state().equals(pf.confusion_counts(df, y_true="y", y_pred="p", protected="sex").collect())
    True
    >>> acc.compute().filter(metric="selection_rate", group="f")["value"].item()
    0.666...
    """

    @checks_keywords
    def __init__(
        self,
        *,
        y_true: IntoExpr,
        y_pred: IntoExpr | None = None,
        y_score: IntoExpr | None = None,
        threshold: float | None = None,
        protected: IntoExpr | Sequence[IntoExpr] | None = None,
        favorable: Any = 1,
        unfavorable: Any = None,
        score_label: Any = None,
        privileged: Mapping[str, Any] | None = None,
        reference: str | None = None,
        weight: IntoExpr | None = None,
        by: IntoExpr | Sequence[IntoExpr] | None = None,
        intersections: int | Sequence[Sequence[str]] | None = None,
        alpha: float = 2.0,
        concentration: float = 1.0,
        on_missing: str = "warn",
        engine: str = "streaming",
        cluster: IntoExpr | None = None,
        n_buckets: int = 20,
        ci: float | None = 0.95,
        n_boot: int = 200,
        seed: int = 0,
        p_adjust: str | None = "bh",
        thresholds: str | Mapping[str, Any] | None = None,
        min_sample_size: int | None = None,
        max_intersection_groups: int = MAX_INTERSECTION_GROUPS,
        max_groups_per_attribute: int | None = MAX_GROUPS_PER_ATTRIBUTE,
        worst_k: int = WORST_K,
        exact_sums: bool = False,
        protected_proba: Mapping[str, Mapping[str, IntoExpr | None]] | None = None,
        proba_assignment: str = "weighted",
        proba_tolerance: float = DEFAULT_TOLERANCE,
    ) -> None:
        refuse_unused_threshold("FairnessAccumulator", threshold, y_pred=y_pred)
        check_proba_options(protected_proba, proba_assignment, proba_tolerance)
        self._read = dict(
            y_true=y_true, y_pred=y_pred, y_score=y_score, threshold=0.5 if threshold is None else threshold,
            protected=protected,
            favorable=favorable, unfavorable=unfavorable, weight=weight, by=by, exact_sums=exact_sums,
            score_label=score_label,
        )  # fmt: skip
        if cluster is not None:
            self._read |= {"cluster": cluster, "n_buckets": n_buckets}
        estimated: tuple[str, ...] = ()
        # weighted estimated groups: keep the pass's result and apportion its rows once (merge_codes)
        self._late = protected_proba is not None and proba_assignment == "weighted"
        if protected_proba is not None:  # the estimated attribute: a stage of each batch's pass, its key last
            self._read |= {"protected_proba": protected_proba, "proba_assignment": proba_assignment,
                           "proba_tolerance": proba_tolerance}  # fmt: skip
            estimated = (parse_protected_proba(protected_proba, proba_assignment, proba_tolerance).attribute,)
        self._bucket: tuple[str, ...] = ("bucket",) if cluster is not None else ()
        check_worst_options(max_groups_per_attribute, worst_k)
        # the statuses, as fairness_report judges: a named policy or bands, or with min_sample_size alone the
        # insufficient_data rows (monitor.apply_thresholds: one reading of a threshold, one status rule)
        from polfair.monitor.config import parse_thresholds, preset_thresholds

        has_predictions = y_pred is not None or y_score is not None
        self._bands: dict[str, tuple[float, float]] | None = (
            None if thresholds is None and min_sample_size is None else {} if thresholds is None
            else preset_thresholds(thresholds, has_predictions=has_predictions) if isinstance(thresholds, str)
            else parse_thresholds(thresholds))  # fmt: skip
        self._min_sample_size = min_sample_size
        # cluster= with intervals: every group's rows, as fairness_report (the jackknife adjusts over the rows it gets)
        limit = None if cluster is not None and ci is not None else max_groups_per_attribute
        self._report = dict(privileged=dict(privileged or {}), reference=reference, intersections=intersections,
                            alpha=alpha, concentration=concentration, ci=ci, n_boot=n_boot, seed=seed,
                            p_adjust=p_adjust, min_sample_size=min_sample_size,
                            max_intersection_groups=max_intersection_groups, max_groups_per_attribute=limit,
                            worst_k=worst_k)  # fmt: skip
        check_reference(reference)
        self._on_missing = on_missing
        self._engine = engine
        keys = protected_exprs(as_list(protected)) if not estimated or as_list(protected) else []
        self.protected: tuple[str, ...] = (*(output_name(e, "protected") for e in keys), *estimated)
        self.by: tuple[str, ...] = tuple(output_name(as_expr(b, "by"), "by") for b in as_list(by))
        self.has_predictions: bool = y_pred is not None or y_score is not None
        self._cells: pl.DataFrame | None = None
        # exact_sums=True: the pass's code table with integer sums (exact merges), and a spec to pivot it
        self._codes: pl.DataFrame | None = None
        self._spec: Spec | None = None
        self._polarity: Any = None  # the polarity rule's reading of the last batch (for compute's alarms)
        self._label: Any = None  # the compiled label of the last batch, and label values seen (compute's checks)
        self._seen: list[Any] = []
        self.has_scores: bool = y_score is not None

    # -- accumulation ------------------------------------------------------------------------

    def update(self, batch: Any) -> FairnessAccumulator:
        """Add one batch of rows.

        Parameters
        ----------
        batch
            ``pl.DataFrame`` / ``pl.LazyFrame``, pandas DataFrame, pyarrow Table, or a mapping of
            column name to 1-D values (lists, NumPy arrays, anything with ``__array__``, torch
            tensors on any device).

        Returns
        -------
        FairnessAccumulator
            ``self``, for chaining.

        Raises
        ------
        InvalidInputError
            Invalid labels/scores/weights in the batch, a non-1-D column, or missing values with
            ``on_missing="raise"``; the state is unchanged.
        ColumnNotFoundError
            A named column is missing from the batch.

        Examples
        --------
        >>> import numpy as np
        >>> acc = FairnessAccumulator(y_true="y", y_pred="p", protected="g")
        >>> _ = acc.update({"y": np.array([1, 0]), "p": np.array([1, 1]), "g": np.array(["a", "b"])})
        >>> acc.state()["n"].to_list()
        [1, 1]
        """
        frame = _to_frame(batch)
        if isinstance(frame, pl.DataFrame) and frame.height == 0:
            return self
        spec = build_spec(frame, **self._read)
        self._polarity = spec.polarity
        if (spec.exact or self._late) and self._cells is None:
            codes = collect_codes(spec, on_missing=self._on_missing, engine=self._engine,  # type: ignore[arg-type]
                                  check_values=False, expand=not self._late)  # fmt: skip
            self._add_codes(codes, spec)
            self._remember_labels(spec, self._pivot(codes, spec))
            return self
        cells = collect_cells(spec, on_missing=self._on_missing, engine=self._engine,  # type: ignore[arg-type]
                              check_values=False)  # fmt: skip
        self._add(cells)
        self._remember_labels(spec, cells)
        return self

    def _add_codes(self, codes: pl.DataFrame, spec: Spec, what: str = "this batch") -> None:
        """Exact sums: add a code table (integers: the merge is exact in any order). Weighted
        estimated groups: add the pass's result before apportioning (Float64 sums, summed).
        """
        if self._codes is None or self._spec is None:
            self._codes, self._spec = codes, spec
            return
        check_cell_table(self._pivot(codes, spec), keys=self._keys, what=what, like=self._pivot(self._codes, self._spec).schema)
        if self._late:
            if codes.columns != self._codes.columns:
                msg = f"{what} has the pass columns {codes.columns}, the accumulated ones {self._codes.columns}"
                raise PolfairError(msg)
            self._codes = merge_codes([self._codes, codes], self._spec)
            return
        both = pl.concat([self._codes, codes.select(self._codes.columns)], how="vertical_relaxed")
        keys = [*self._keys, CODE]
        self._codes = both.group_by(keys).agg(pl.exclude(keys).sum()).sort(keys, nulls_last=False)

    @staticmethod
    def _pivot(codes: pl.DataFrame, spec: Spec) -> pl.DataFrame:
        if spec.proba is not None and spec.proba.assignment == "weighted":  # rows apportioned here, once
            return cells_of_codes(expand_codes(codes.lazy(), spec).collect(), spec)
        return pivot_codes(codes.lazy(), spec).collect()

    def _add(self, cells: pl.DataFrame, what: str = "this batch") -> None:
        if self._codes is not None:  # Float64 cells join exact ones: continue with Float64 sums
            self._cells, self._codes = self.state(), None
        if self._cells is None:
            self._cells = cells
        else:
            check_cell_table(cells, keys=self._keys, what=what, like=self._cells.schema)
            unknown_w2 = self._cells["tp_w2"].null_count() > 0 or cells["tp_w2"].null_count() > 0
            self._cells = merge_counts([self._cells, cells]).collect()
            if unknown_w2:  # a version-1 weighted state: its Σw² is unknown, so the sum is too
                self._cells = self._cells.with_columns([pl.lit(None, pl.Float64).alias(c) for c in W2_COLUMNS])

    @property
    def _keys(self) -> list[str]:
        return [*self.by, *self.protected, *self._bucket]

    def merge(self, other: FairnessAccumulator) -> FairnessAccumulator:
        """Add another accumulator's data (e.g. from another worker or file) to this one.

        Parameters
        ----------
        other
            An accumulator over the same keys (``protected``, ``by``) and prediction mode.

        Returns
        -------
        FairnessAccumulator
            ``self``, for chaining; ``other`` is unchanged.

        Raises
        ------
        PolfairError
            The accumulators have different keys or one has predictions and the other not.

        Examples
        --------
        >>> import polars as pl
        >>> a = FairnessAccumulator(y_true="y", y_pred="p", protected="g")
        >>> b = FairnessAccumulator(y_true="y", y_pred="p", protected="g")
        >>> _ = a.update(pl.DataFrame({"y": [1], "p": [1], "g": ["x"]}))
        >>> _ = b.update(pl.DataFrame({"y": [0], "p": [1], "g": ["x"]}))
        >>> a.merge(b).state().select("n", "tp", "fp").row(0)
        (2, 1.0, 1.0)
        """
        if not isinstance(other, FairnessAccumulator):
            msg = f"merge() takes a FairnessAccumulator, got {type(other).__name__}"
            raise TypeError(msg)
        self._check_compatible(other.protected, other.by, other.has_predictions, "other")
        if other._codes is not None and other._spec is not None and self._cells is None:
            self._add_codes(other._codes, other._spec, "the other accumulator")
        elif not other.is_empty:
            self._add(other.state(), "the other accumulator")
        if self._polarity is None:
            self._polarity = other._polarity
        self._label = self._label if self._label is not None else other._label
        self._seen = sorted(set(self._seen) | set(other._seen), key=repr)[:10]
        return self

    def _check_compatible(self, protected: Sequence[str], by: Sequence[str], has_predictions: bool, what: str) -> None:
        if tuple(protected) != self.protected or tuple(by) != self.by or has_predictions != self.has_predictions:
            msg = (
                f"{what} has protected={list(protected)}, by={list(by)}, has_predictions={has_predictions}; "
                f"this accumulator has protected={list(self.protected)}, by={list(self.by)}, "
                f"has_predictions={self.has_predictions}. Only audits of the same keys can be combined"
            )
            raise PolfairError(msg)

    def reset(self) -> FairnessAccumulator:
        """Forget every batch (keep the options).

        Returns
        -------
        FairnessAccumulator
            ``self``.

        Examples
        --------
        >>> acc = FairnessAccumulator(y_true="y", protected="g")
        >>> acc.update({"y": [1], "g": ["a"]}).reset().is_empty
        True
        """
        self._cells = self._codes = self._spec = None
        self._polarity = self._label = None
        self._seen = []
        return self

    @property
    def is_empty(self) -> bool:
        """``True`` until a non-empty batch has been added."""
        return self._cells is None and self._codes is None

    def compute(self) -> pl.DataFrame:
        """The fairness report of every row seen so far (:func:`polfair.report_from_counts`).

        Returns
        -------
        pl.DataFrame
            The report schema of :mod:`polfair.core.report.build`.

        Raises
        ------
        InvalidInputError
            No rows have been added yet.

        Warns
        -----
        PolarityWarning
            The accumulated predictions or scores look inverted relative to ``favorable``
            (:func:`polfair.core.contract.cell_alarms`, as :func:`polfair.fairness_report`).

        Examples
        --------
        >>> acc = FairnessAccumulator(y_true="y", y_pred="p", protected="g")
        >>> rep = acc.update({"y": [1, 0, 1, 1], "p": [1, 1, 0, 1], "g": ["a", "a", "b", "b"]}).compute()
        >>> rep.filter(metric="selection_rate", group="a")["value"].item()
        1.0
        """
        if self.is_empty:
            msg = "the accumulator has no rows yet: call update(batch) (or merge/load a state) before compute()"
            raise InvalidInputError(msg)
        cells = self.state()
        self._check_favorable(cells)
        for text in cell_alarms(cells, self._polarity, has_predictions=self.has_predictions, has_scores=self.has_scores):
            warnings.warn(text, PolarityWarning, stacklevel=user_stacklevel())
        options = ReportOptions(
            protected=self.protected, by=self.by, has_predictions=self.has_predictions,
            # as fairness_report: all-one weights are still weights, and so are membership probabilities
            weighted=self._read["weight"] is not None or self._late,
            **self._report,  # type: ignore[arg-type]
        )  # fmt: skip
        # cluster=: the buckets summed and jackknife intervals, by the function fairness_report calls
        report = clustered_report(cells, options, report_of) if self._bucket else report_of(cells, options)
        if self._bands is None:
            return report
        from polfair.monitor import apply_thresholds

        return apply_thresholds(report, self._bands, self._min_sample_size)

    def _check_favorable(self, cells: pl.DataFrame) -> None:
        """Warn, as :func:`polfair.fairness_report` does for one pass, when no accumulated row has the
        favorable label (or, with ``unfavorable=``, an unfavorable one).
        """
        if self._label is None:
            return
        t = cells.select(pl.col("tp", "fn", "fp", "tn").sum()).row(0, named=True)
        fav, unf = t["tp"] + t["fn"], t["fp"] + t["tn"]
        if fav + unf > 0:
            for text in label_values_warnings(self._label, int(fav > 0), int(unf > 0), lambda: list(self._seen)):
                warnings.warn(text, ReferenceWarning, stacklevel=user_stacklevel())

    def _remember_labels(self, spec: Spec, cells: pl.DataFrame) -> None:
        """A batch without a favorable (or unfavorable) label: remember a few of its label values for
        :meth:`_check_favorable` (a query on that batch only, as the report's warning path).
        """
        self._label = spec.compiled.get("y_true")
        t = cells.select(pl.col("tp", "fn", "fp", "tn").sum()).row(0, named=True)
        if self._label is not None and (t["tp"] + t["fn"] == 0 or t["fp"] + t["tn"] == 0) and len(self._seen) < 10:
            both = set(self._seen) | set(seen_values(self._label, spec.examples))
            try:
                self._seen = sorted(both)[:10]
            except TypeError:  # pragma: no cover - one column holds one type
                self._seen = sorted(both, key=repr)[:10]

    # -- state -------------------------------------------------------------------------------

    def state(self) -> pl.DataFrame:
        """The accumulated cell table (schema of :mod:`polfair.core.passes.counts`); empty (0 rows) if no data.

        Returns
        -------
        pl.DataFrame
            A copy-free view of the cell table; write it anywhere (parquet, Arrow IPC, a database).

        Examples
        --------
        >>> FairnessAccumulator(y_true="y", protected="g").state().height
        0
        """
        if self._codes is not None and self._spec is not None:
            return self._pivot(self._codes, self._spec)
        if self._cells is None:
            return pl.DataFrame(schema={**{k: pl.Null for k in self._keys}, **COUNT_DTYPES})
        return self._cells

    def _meta(self) -> dict[str, Any]:
        return {"version": STATE_VERSION, "protected": list(self.protected), "by": list(self.by),
                "has_predictions": self.has_predictions, "bucket": bool(self._bucket)}  # fmt: skip

    def to_arrow(self) -> Any:
        """The state as a ``pyarrow.Table`` whose schema metadata names the keys.

        Returns
        -------
        pyarrow.Table
            The cell table, with metadata ``b"polfair.engines.accumulator"`` (JSON: protected, by,
            has_predictions).

        Examples
        --------
        >>> acc = FairnessAccumulator(y_true="y", protected="g").update({"y": [1], "g": ["a"]})
        >>> acc.to_arrow().num_rows
        1
        """
        table = self.state().to_arrow()
        meta = dict(table.schema.metadata or {})
        meta[_META_KEY] = json.dumps(self._meta()).encode()
        if self._late and self._codes is not None:  # the rows not yet apportioned (load_state reads them)
            raw = io.BytesIO()
            self._codes.write_ipc_stream(raw)
            meta[_CODES_KEY] = base64.b64encode(raw.getvalue())
        return table.replace_schema_metadata(meta)

    def load_state(self, state: Any) -> FairnessAccumulator:
        """Replace the accumulated data by a saved state (a cell table).

        Parameters
        ----------
        state
            A ``pl.DataFrame`` / ``pyarrow.Table`` cell table with this accumulator's key columns
            (from :meth:`state`, :meth:`to_arrow`, or :func:`polfair.confusion_counts`).

        Returns
        -------
        FairnessAccumulator
            ``self``.

        Raises
        ------
        PolfairError
            The table's metadata or key columns do not match this accumulator.

        Examples
        --------
        >>> a = FairnessAccumulator(y_true="y", protected="g").update({"y": [1, 0], "g": ["a", "a"]})
        >>> b = FairnessAccumulator(y_true="y", protected="g").load_state(a.to_arrow())
        >>> b.state().equals(a.state())
        True
        """
        meta, codes = None, None
        if not isinstance(state, pl.DataFrame) and type(state).__module__.split(".")[0] != "pyarrow":
            msg = f"load_state takes a polars DataFrame or a pyarrow Table cell table, got {type(state).__name__}"
            raise TypeError(msg)
        if not isinstance(state, pl.DataFrame):
            raw = (state.schema.metadata or {}).get(_META_KEY) if hasattr(state, "schema") else None
            meta = None if raw is None else json.loads(raw)
            packed = (state.schema.metadata or {}).get(_CODES_KEY) if hasattr(state, "schema") else None
            if packed is not None and self._late:
                codes = pl.read_ipc_stream(io.BytesIO(base64.b64decode(packed)))
            out = pl.from_arrow(state)
            state = out.to_frame() if isinstance(out, pl.Series) else out
        if meta is not None:
            self._check_compatible(meta["protected"], meta["by"], meta["has_predictions"], "the state")
        from polfair.core.passes.counts import COUNT_COLUMNS

        state = self._upgrade(state)
        check_cell_table(state, keys=self._keys, what="the state")
        keys = [c for c in state.columns if c not in COUNT_COLUMNS]
        if keys != self._keys or [c for c in state.columns if c in COUNT_COLUMNS] != list(COUNT_COLUMNS):
            msg = (
                f"the state has columns {state.columns}; this accumulator expects the keys "
                f"{self._keys} followed by the count columns {list(COUNT_COLUMNS)}"
            )
            raise PolfairError(msg)
        state = state.with_columns([pl.col(c).cast(COUNT_DTYPES[c]) for c in COUNT_COLUMNS])
        if not self.is_empty and state.height:
            check_cell_table(state, what="the state", like=self.state().schema)
        self._cells = None if state.height == 0 else state
        self._codes = self._spec = None
        if codes is not None and codes.height:  # the saved pass result: its rows are apportioned in state()
            self._cells, self._codes, self._spec = None, codes, self._state_spec()
        return self

    def _state_spec(self) -> Spec:
        """The spec that reads a saved pass result of weighted estimated groups (no batch needed:
        :func:`~polfair.core.passes.estimated.expand_codes` reads only the keys and the sums' layout).
        """
        ps = parse_protected_proba(self._read["protected_proba"], "weighted", self._read["proba_tolerance"])
        ps = replace(ps, weighted=self._read["weight"] is not None, has_scores=self.has_scores)
        return Spec(lf=None, source=None, by=self.by, keys=self.protected, has_predictions=self.has_predictions,
                    has_scores=self.has_scores, weighted=True, roles={}, favorable=(), unfavorable=None,
                    threshold=self._read["threshold"], bucket=bool(self._bucket), proba=ps)  # fmt: skip

    def _upgrade(self, state: pl.DataFrame) -> pl.DataFrame:
        """A version-1 state (no Σw² columns): add them (the counts when unweighted, else null + warning)."""
        if all(c in state.columns for c in W2_COLUMNS) or not all(c in state.columns for c in ("tp_n", "fp_n", "tn_n", "fn_n")):
            return state
        if self._read.get("weight") is None:
            return state.with_columns([pl.col(f"{c}_n").cast(pl.Float64).alias(f"{c}_w2") for c in ("tp", "fp", "tn", "fn")])
        warnings.warn(
            "this weighted state was saved before polfair kept sums of squared weights (state version 1): "
            "values are computed, but intervals of weighted rows are null; re-accumulate the data to get them",
            UserWarning,
            stacklevel=user_stacklevel(),
        )
        return state.with_columns([pl.lit(None, pl.Float64).alias(c) for c in W2_COLUMNS])

    @classmethod
    def from_state(cls, state: Any, **options: Any) -> FairnessAccumulator:
        """Build an accumulator from a saved state and the options of :class:`FairnessAccumulator`.

        Parameters
        ----------
        state
            A cell table (``pl.DataFrame`` or ``pyarrow.Table``), e.g. from :meth:`to_arrow`.
        **options
            The keywords of :class:`FairnessAccumulator` (``y_true``, ``protected``, ...).

        Returns
        -------
        FairnessAccumulator

        Raises
        ------
        PolfairError
            The state does not match the options' keys.

        Examples
        --------
        >>> a = FairnessAccumulator(y_true="y", protected="g").update({"y": [1], "g": ["a"]})
        >>> FairnessAccumulator.from_state(a.state(), y_true="y", protected="g").state().height
        1
        """
        return cls(**options).load_state(state)

    def save(self, path: str | Path) -> None:
        """Write the state to a parquet file (keys recorded in the file's metadata).

        Parameters
        ----------
        path
            Destination file path.

        Examples
        --------
        >>> import tempfile, os
        >>> acc = FairnessAccumulator(y_true="y", protected="g").update({"y": [1], "g": ["a"]})
        >>> with tempfile.TemporaryDirectory() as d:
        ...     acc.save(os.path.join(d, "s.parquet"))
        ...     FairnessAccumulator.load(os.path.join(d, "s.parquet"), y_true="y", protected="g").state().height
        1
        """
        import pyarrow.parquet as pq

        pq.write_table(self.to_arrow(), str(path))

    @classmethod
    def load(cls, path: str | Path, **options: Any) -> FairnessAccumulator:
        """Read a state written by :meth:`save` (or any parquet cell table).

        Parameters
        ----------
        path
            A parquet file.
        **options
            As :meth:`from_state` (which returns the accumulator, and raises
            :class:`~polfair.exceptions.PolfairError` when the file's keys do not match ``options``).

        Examples
        --------
        See :meth:`save`.
        """
        import pyarrow.parquet as pq

        return cls.from_state(pq.read_table(str(path)), **options)
