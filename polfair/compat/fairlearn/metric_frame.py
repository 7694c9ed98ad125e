"""fairlearn's ``MetricFrame``, computed on polfair's one pass: change the import, keep the code.

:class:`MetricFrame` takes fairlearn 0.15's constructor (``metrics``, ``y_true``, ``y_pred``,
``sensitive_features``, ``control_features``, ``sample_params``, ``n_boot``, ``ci_quantiles``,
``random_state``) and answers with fairlearn's attributes and types (``overall``, ``by_group``,
``group_min``, ``group_max``, ``difference``, ``ratio`` with ``method=`` and ``errors=``, the
``*_ci`` forms, ``control_levels``, ``sensitive_levels``): pandas objects where fairlearn returns
them, and a Polars frame from :meth:`MetricFrame.to_polars`.

Metrics polfair recognises (scikit-learn's and fairlearn's functions, polfair's own rates, and
their ``functools.partial`` forms; :mod:`~polfair.compat.fairlearn._mf_known` lists them) are
computed from the core's cell tables: one pass over the rows, then arithmetic on one row per
group. Any other callable is called on each group's rows, as fairlearn calls it.
:attr:`MetricFrame.metric_paths` says which metric took which path.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np
import polars as pl

from polfair.compat.fairlearn._mf_compute import (
    Pass,
    Results,
    bootstrap_results,
    cell_results,
    make_rng,
    pass_frame,
    per_group_results,
    plan,
    row_codes,
)
from polfair.compat.fairlearn._mf_data import (
    DUPLICATE_FEATURE_NAME,
    Feature,
    MetricFunction,
    Target,
    check_consistent_length,
    metric_functions,
    num_samples,
    process_features,
)
from polfair.compat.fairlearn._mf_known import Known, LabelFacts, Notes, data_refusal, emit, recognise
from polfair.compat.fairlearn._mf_results import (
    aggregate,
    as_float,
    check_errors,
    check_method,
    check_replicates,
    is_integer,
    ordered_scalars,
    quantiles,
    scalar_extreme,
    to_pandas,
    to_polars,
)
from polfair.core.options import checks_keywords
from polfair.exceptions import PolfairError

__all__ = ["MetricFrame"]

# fairlearn 0.15's messages for the bootstrap arguments (fairlearn/metrics/_metric_frame.py)
_NEED_N_AND_CI = "Must specify both n_boot and ci_quantiles"
_N_BOOT_INT_GT_ZERO = "Must have n_boot be a positive integer"
_CI_INVALID = "Must have all ci_quantiles be floats in (0, 1)"
_NOT_INITIALIZED = (
    "Could not compute confidence intervals:"
    " Bootstrapping parameters n_boot and ci_quantiles were not specified"
    " in the MetricFrame constructor."
)

Method = Literal["between_groups", "to_overall"]
Errors = Literal["raise", "coerce"]
Result = Literal["by_group", "overall", "group_min", "group_max", "difference", "ratio"]


class MetricFrame:
    r"""Metrics per group, their extremes, differences and ratios: fairlearn's ``MetricFrame`` on one pass.

    A drop-in for :class:`fairlearn.metrics.MetricFrame` (0.15): the same constructor, attributes,
    methods and return types; ``from polfair import MetricFrame`` in place of
    ``from fairlearn.metrics import MetricFrame`` keeps the code. Metrics polfair recognises
    (scikit-learn's ``accuracy_score``, ``zero_one_loss``, ``balanced_accuracy_score``,
    ``recall_score``, ``precision_score``, ``f1_score``, ``fbeta_score``, ``mean_absolute_error``,
    ``mean_squared_error``, ``root_mean_squared_error``, ``r2_score``; fairlearn's
    ``selection_rate``, ``true_positive_rate``, ``true_negative_rate``, ``false_positive_rate``,
    ``false_negative_rate``, ``count``, ``mean_prediction``; polfair's rate functions; and their
    ``functools.partial`` forms with ``pos_label``, ``zero_division``, ``beta``, ...) are computed
    from the core's cell table, one pass over the rows; bootstrap intervals resample that table.
    Any other callable is called on each group's rows, as fairlearn does (:attr:`metric_paths`).

    Parameters
    ----------
    metrics : callable or dict of str to callable
        ``fn(y_true, y_pred, **sample_params) -> value``; a dict gives several, named by its keys
        (the return types then stay those of a dict even with one entry, as in fairlearn). A
        callable is named by its ``__name__``.
    y_true, y_pred : array-like, shape (n,) (or (n, k) for metrics that take 2-D inputs)
        Lists, NumPy arrays, pandas Series/DataFrames (nullable and pyarrow-backed dtypes too),
        Polars Series/DataFrames, pyarrow arrays.
    sensitive_features : array-like or dict
        One feature (a list of scalars, a 1-D array, a Series) or several (a DataFrame, a 2-D array,
        a dict of 1-D columns, a Polars/pyarrow table). Names come from the Series/columns/keys
        (strings), else ``sensitive_feature_<i>``. A missing value (None, NaN, null) is a group of
        its own (fairlearn 0.15 raises).
    control_features : array-like or dict, optional
        Features whose groups are kept apart: ``overall`` and every aggregate are computed per
        control group. Unnamed ones are ``control_feature_<i>``.
    sample_params : dict, optional
        Per-row arguments of the metrics (e.g. ``{"sample_weight": w}``), split by group; for a
        dict of metrics, a dict metric name -> such a dict.
    n_boot : int, optional
        Number of bootstrap replicates (with ``ci_quantiles``): rows drawn with replacement, as
        many as the data has, every metric recomputed on each replicate.
    ci_quantiles : list of float, optional
        Quantiles in (0, 1) of the replicates to report, e.g. ``[0.025, 0.5, 0.975]``. With
        ``ci_method="analytic"`` the limits of closed-form intervals instead (no ``n_boot``).
    random_state : int, numpy.random.RandomState or numpy.random.Generator, optional
        Seed or generator of the bootstrap draws.
    ci_method : {"bootstrap", "analytic"}, default "bootstrap"
        polfair's addition. ``"analytic"``: the ``*_ci`` limits come from closed-form intervals
        of the core (Wilson score intervals for rates, Student t for regression means and the
        delta method for ``r2_score``; extremes, differences and ratios by the core's Šidák
        projections, spread and to-overall intervals), at the two-sided level of each quantile:
        ``q < 0.5`` is the lower limit of the ``1 − 2q`` interval, ``q > 0.5`` the upper limit of
        the ``2q − 1`` interval, ``q = 0.5`` the estimate. NaN for metrics without a closed form
        (F-scores, balanced accuracy, counts, metrics called per group) and for the ``to_overall``
        comparisons of regression metrics.

    Attributes
    ----------
    overall, by_group
        The metrics on the whole data (per control group) and per group. Types as in fairlearn:
        ``overall`` is the metric's value for one callable, a Series over the metrics for a
        dict; with control features a Series/DataFrame over the control groups. ``by_group`` is a
        Series (one callable) or DataFrame indexed by every combination of the control and
        sensitive levels (a MultiIndex for several features; NaN for a combination without rows).
    overall_ci, by_group_ci
        Lists, one per quantile, of objects shaped as ``overall`` / ``by_group``.
    control_levels, sensitive_levels
        The feature names (``None`` without control features).
    n_boot, ci_quantiles
        As given.
    metric_paths : dict of str to str
        For each metric: ``"cell_table"`` (computed from the core's cell table) or
        ``"per_group"`` (called on each group's rows); :attr:`fallback_reasons` says why.
    fallback_reasons : dict of str to str
        For each metric called per group, the reason (not a recognised function, a keyword
        without a cell-table form, data the function would refuse ...).

    Raises
    ------
    ValueError (polfair.exceptions.PolfairError)
        fairlearn's errors, with fairlearn's messages: inputs of different lengths, duplicate
        feature names, feature names that are not strings, ``sample_params`` keys not among the
        metrics, ``n_boot`` without ``ci_quantiles`` (or the converse), ``n_boot`` not a positive
        integer, quantiles outside (0, 1), an unsupported ``random_state``; non-scalar metric
        values under the bootstrap.
    Exception
        What a metric called per group raises (e.g. scikit-learn on multiclass labels with
        ``average="binary"``), as on fairlearn.

    Notes
    -----
    Where polfair's number differs from fairlearn's, on purpose: a missing sensitive or control
    value is a group (fairlearn 0.15 raises); bootstrap replicates are drawn differently (the
    row bootstrap by multinomial counts of the table of distinct rows), so the quantiles agree in
    law, not to the digit; sums of non-integer weights may differ from scikit-learn's in the last
    bits (summation order). ``docs/from-fairlearn.md`` lists every difference.

    Cost: the recognised metrics read the rows once (one ``group_by`` of the core per distinct
    favorable label and weight); the bootstrap then works on the table of distinct rows (a few
    rows per group for labels and predictions), ``n_boot`` replicates in one more pass over
    ``n_boot ×`` that table. Per-group metrics cost what fairlearn's do.

    Source: fairlearn 0.15 ``fairlearn.metrics.MetricFrame`` (``_metric_frame.py``,
    ``_disaggregated_result.py``, ``_bootstrap.py``).

    Examples
    --------
    >>> from polfair import MetricFrame
    >>> from polfair.compat.fairlearn import selection_rate
    >>> y_true = [1, 1, 1, 1, 1, 0, 0, 1, 1, 0]
    >>> y_pred = [0, 1, 1, 1, 1, 0, 0, 0, 1, 1]
    >>> sex = ["Female"] * 5 + ["Male"] * 5
    >>> mf = MetricFrame(metrics={"selection_rate": selection_rate}, y_true=y_true, y_pred=y_pred,
    ...                  sensitive_features=sex)
    >>> mf.by_group  # doctest: +NORMALIZE_WHITESPACE
                         selection_rate
    sensitive_feature_0
    Female                          0.8
    Male                            0.4
    >>> float(mf.difference().iloc[0]), float(mf.ratio().iloc[0])
    (0.4, 0.5)
    >>> mf.metric_paths
    {'selection_rate': 'cell_table'}
    >>> mf.to_polars("by_group")
    shape: (2, 2)
    ┌─────────────────────┬────────────────┐
    │ sensitive_feature_0 ┆ selection_rate │
    │ ---                 ┆ ---            │
    │ str                 ┆ f64            │
    ╞═════════════════════╪════════════════╡
    │ Female              ┆ 0.8            │
    │ Male                ┆ 0.4            │
    └─────────────────────┴────────────────┘
    """

    @checks_keywords
    def __init__(
        self,
        *,
        metrics: Callable[..., Any] | dict[str, Callable[..., Any]],
        y_true: Any,
        y_pred: Any,
        sensitive_features: Any,
        control_features: Any = None,
        sample_params: dict[str, Any] | None = None,
        n_boot: int | None = None,
        ci_quantiles: Sequence[float] | None = None,
        random_state: int | np.random.RandomState | np.random.Generator | None = None,
        ci_method: Literal["bootstrap", "analytic"] = "bootstrap",
    ) -> None:
        check_consistent_length(y_true, y_pred)
        n = num_samples(y_true)
        self._y_true, self._y_pred = Target(y_true), Target(y_pred)
        funcs, self._user_supplied_callable = metric_functions(metrics, sample_params, n)
        sf = self._process_features("sensitive_feature_", sensitive_features, y_true)
        cf = None if control_features is None else self._process_features("control_feature_", control_features, y_true)
        self._sf_names = [f.name_ for f in sf]
        self._cf_names = None if cf is None else [f.name_ for f in cf]
        seen: set[str] = set()
        for name in [*(self._cf_names or []), *self._sf_names]:
            if name in seen:
                raise PolfairError(DUPLICATE_FEATURE_NAME.format(name))
            seen.add(name)
        self._n_boot, self._ci_quantiles = n_boot, None if ci_quantiles is None else list(ci_quantiles)
        self._ci_method = _check_intervals(n_boot, ci_quantiles, ci_method)
        rng = make_rng(random_state) if self._ci_method == "bootstrap" else None
        features = [*(cf or []), *sf]
        self._names = [mf.name for mf in funcs]
        self._compute(funcs, features, len(cf or []), n)
        self._boot: Results | None = None
        if self._ci_method == "bootstrap":
            self._bootstrap(n, rng)
        elif self._ci_method == "analytic":
            from polfair.compat.fairlearn._mf_analytic import analytic_limits

            def nominal(kind: str, method: str) -> dict[str, np.ndarray]:
                if kind in ("by_group", "overall"):
                    d = self._values.by_group if kind == "by_group" else self._values.overall
                    return {m: as_float(v[0], "coerce") for m, v in d.items()}
                return {m: v[0] for m, v in self._aggregate_values(kind, method, "coerce", self._values).items()}

            self._analytic = analytic_limits(self._layout, self._known, self._values, self._names, nominal)

    # ------------------------------------------------------------------------------------------
    # construction

    @staticmethod
    def _process_features(base_name: str, features: Any, sample_array: Any) -> list[Feature]:
        """Fairlearn's ``MetricFrame._process_features``: features as a list of named columns."""
        return process_features(base_name, features, sample_array)

    def _compute(self, funcs: list[MetricFunction], features: list[Feature], n_cf: int, n: int) -> None:
        """The point estimates: recognised metrics from the cell tables, the others per group."""
        frame = pl.DataFrame([f.values.alias(f"__mf_k{i}") for i, f in enumerate(features)], height=n)
        facts = LabelFacts(self._y_true.series, self._y_pred.series)
        known: dict[str, Known] = {}
        self.fallback_reasons: dict[str, str] = {}
        for mf in funcs:
            k = recognise(mf)
            reason = k if isinstance(k, str) else data_refusal(k, facts)
            if reason is None and isinstance(k, Known):
                known[mf.name] = k
            else:
                self.fallback_reasons[mf.name] = str(reason)
        weights: dict[int, str] = {}
        for k in known.values():
            if k.weight is not None and id(k.weight.raw) not in weights:
                weights[id(k.weight.raw)] = f"__mf_w{len(weights)}"
                frame = frame.with_columns(_weight_series(k.weight).alias(weights[id(k.weight.raw)]))
        passes = plan(known, facts, weights)
        frame = pass_frame(frame, facts, list(passes))
        notes = Notes()
        cells, layout, refused = cell_results(frame, known, passes, None, features, n_cf, notes=notes)
        for name, reason in refused.items():
            known.pop(name)
            self.fallback_reasons[name] = reason
        passes = {ps: [m for m in names if m in known] for ps, names in passes.items()}
        self._frame, self._facts, self._known, self._layout = frame, facts, known, layout
        self._passes = {ps: names for ps, names in passes.items() if names}
        self._features = features
        self._fallback = [mf for mf in funcs if mf.name in self.fallback_reasons]
        emit(notes, stacklevel=4)
        per_group = Results()
        if self._fallback:
            y_true, y_pred, cf_codes, group_codes = self._row_arrays()
            per_group = per_group_results(self._fallback, y_true, y_pred, layout, cf_codes, group_codes)
        self._values = _merge(self._names, cells, per_group)
        self.metric_paths = {m: "per_group" if m in self.fallback_reasons else "cell_table" for m in self._names}

    def _row_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        if not hasattr(self, "_codes"):
            self._codes = row_codes(self._frame, self._layout)
        return self._y_true.array, self._y_pred.array, *self._codes

    def _bootstrap(self, n: int, rng: Any) -> None:
        columns = [*self._layout.keys, *_read_columns(self._passes)]
        cells, per_group = bootstrap_results(
            self._frame, self._known, self._passes, self._layout, self._features, columns, self._fallback,
            int(self._n_boot or 0), rng, self._row_arrays,
        )  # fmt: skip
        boot = _merge(self._names, cells, per_group)
        for d in (boot.overall, boot.by_group):
            for name in d:
                d[name] = check_replicates(d[name])
        self._boot = boot

    # ------------------------------------------------------------------------------------------
    # fairlearn's attributes

    @property
    def overall(self) -> Any:
        """The metrics on the whole data (per control group): fairlearn's types (see the class docstring)."""
        return to_pandas("control", {m: v[0] for m, v in self._values.overall.items()}, self._layout,
                         self._user_supplied_callable, "overall")  # fmt: skip

    @property
    def by_group(self) -> Any:
        """The metrics of every group: a Series (one callable) or DataFrame indexed by the groups."""
        return to_pandas("by_group", {m: v[0] for m, v in self._values.by_group.items()}, self._layout,
                         self._user_supplied_callable, "by_group")  # fmt: skip

    @property
    def control_levels(self) -> list[str] | None:
        """The control features' names (the leading levels of ``by_group``'s index), or ``None``."""
        return self._cf_names

    @property
    def sensitive_levels(self) -> list[str]:
        """The sensitive features' names (the trailing levels of ``by_group``'s index)."""
        return self._sf_names

    @property
    def n_boot(self) -> int | None:
        """The number of bootstrap replicates given to the constructor."""
        return self._n_boot

    @property
    def ci_quantiles(self) -> list[float] | None:
        """The quantiles given to the constructor."""
        return self._ci_quantiles

    def group_min(self, errors: Errors = "raise") -> Any:
        """Smallest value of each metric over the groups (per control group); missing groups skipped.

        Parameters
        ----------
        errors : {"raise", "coerce"}, default "raise"
            ``"raise"``: a metric with a non-scalar value (a confusion matrix) raises
            ``ValueError``; ``"coerce"``: its result is NaN.

        Returns
        -------
        scalar, pandas.Series or pandas.DataFrame
            As ``overall``: the value for one callable, a Series over the metrics for a dict;
            with control features a Series/DataFrame over the control groups.
        """
        return self._aggregate("min", "between_groups", errors, "group_min()")

    def group_max(self, errors: Errors = "raise") -> Any:
        """Largest value of each metric over the groups; as :meth:`group_min`."""
        return self._aggregate("max", "between_groups", errors, "group_max()")

    def difference(self, method: Method = "between_groups", errors: Errors = "coerce") -> Any:
        """Largest difference of each metric: ``max − min`` of the groups, or ``max |group − overall|``.

        Parameters
        ----------
        method : {"between_groups", "to_overall"}, default "between_groups"
            ``between_groups``: ``group_max() − group_min()``; ``to_overall``: the largest absolute
            difference between a group and ``overall`` (of its control group).
        errors : {"raise", "coerce"}, default "coerce"
            As :meth:`group_min` (note fairlearn's different default).

        Returns
        -------
        scalar, pandas.Series or pandas.DataFrame
            As :meth:`group_min`; ≥ 0, NaN where no group has a value.
        """
        check_errors(errors)
        check_method(method)
        return self._aggregate("difference", method, errors, "difference()")

    def ratio(self, method: Method = "between_groups", errors: Errors = "coerce") -> Any:
        """Smallest ratio of each metric: ``min / max`` of the groups, or ``min`` of ``group / overall``.

        Parameters
        ----------
        method : {"between_groups", "to_overall"}, default "between_groups"
            ``between_groups``: ``group_min() / group_max()``; ``to_overall``: the smallest of
            ``r = group / overall`` over the groups, with ``r`` replaced by ``1 / r`` above 1.
        errors : {"raise", "coerce"}, default "coerce"
            As :meth:`group_min`.

        Returns
        -------
        scalar, pandas.Series or pandas.DataFrame
            As :meth:`group_min`; in [0, 1] for non-negative metrics; ``inf``/NaN where a divisor
            is 0, as pandas divides.
        """
        check_errors(errors)
        check_method(method)
        return self._aggregate("ratio", method, errors, "ratio()")

    def _aggregate_values(self, kind: str, method: str, errors: str, values: Results) -> dict[str, np.ndarray]:
        out = {}
        # pandas keeps the min/max/difference of integer columns integer (when every metric is one)
        integers = kind in ("min", "max", "difference") and all(
            is_integer(values.by_group[m]) and is_integer(values.overall[m]) for m in self._names
        )
        for name in self._names:
            bg, ov = values.by_group[name], values.overall[name]
            if kind in ("min", "max") and ordered_scalars(bg):  # strings, dates...: fairlearn's pandas extreme
                out[name] = scalar_extreme(kind, bg)
                continue
            result = aggregate(kind, method, as_float(bg, errors), as_float(ov, errors))
            out[name] = result.astype(np.int64) if integers and not np.isnan(result).any() else result
        return out

    def _aggregate(self, kind: str, method: str, errors: str, attribute: str) -> Any:
        check_errors(errors)
        out = self._aggregate_values(kind, method, errors, self._values)
        return to_pandas("control", {m: v[0] for m, v in out.items()}, self._layout, self._user_supplied_callable,
                         attribute)  # fmt: skip

    # ------------------------------------------------------------------------------------------
    # intervals

    def _check_ci(self) -> None:
        if self._ci_quantiles is None or len(self._ci_quantiles) == 0 or (self._n_boot is None and self._ci_method == "bootstrap"):
            raise PolfairError(_NOT_INITIALIZED)

    def _ci(self, kind: str, method: str, attribute: str) -> list[Any]:
        """The quantiles of one result: a list, one object per quantile, shaped as the result."""
        self._check_ci()
        q = list(self._ci_quantiles or [])
        if self._ci_method == "analytic":
            limits = self._analytic(kind, method, q)
        else:
            assert self._boot is not None
            if kind == "by_group":
                reps = dict(self._boot.by_group)
            elif kind == "overall":
                reps = dict(self._boot.overall)
            else:
                reps = self._aggregate_values(kind, method, "raise", self._boot)
            skip_nan = kind == "by_group" or bool(self._cf_names)
            limits = {m: quantiles(v, q, skip_nan) for m, v in reps.items()}
        shape = "by_group" if kind == "by_group" else "control"
        return [to_pandas(shape, {m: v[i] for m, v in limits.items()}, self._layout, self._user_supplied_callable,
                          attribute) for i in range(len(q))]  # fmt: skip

    @property
    def overall_ci(self) -> list[Any]:
        """``overall`` at each of ``ci_quantiles`` (bootstrap quantiles, or analytic limits)."""
        return self._ci("overall", "", "overall_ci")

    @property
    def by_group_ci(self) -> list[Any]:
        """``by_group`` at each of ``ci_quantiles``."""
        return self._ci("by_group", "", "by_group_ci")

    def group_min_ci(self) -> list[Any]:
        """:meth:`group_min` at each of ``ci_quantiles`` (the metrics must be scalars)."""
        return self._ci("min", "between_groups", "group_min_ci()")

    def group_max_ci(self) -> list[Any]:
        """:meth:`group_max` at each of ``ci_quantiles``."""
        return self._ci("max", "between_groups", "group_max_ci()")

    def difference_ci(self, method: Method = "between_groups") -> list[Any]:
        """:meth:`difference` at each of ``ci_quantiles``."""
        check_method(method)
        return self._ci("difference", method, "difference_ci()")

    def ratio_ci(self, method: Method = "between_groups") -> list[Any]:
        """:meth:`ratio` at each of ``ci_quantiles``."""
        check_method(method)
        return self._ci("ratio", method, "ratio_ci()")

    # ------------------------------------------------------------------------------------------
    # Polars

    def to_polars(self, result: Result = "by_group", *, method: Method = "between_groups",
                  errors: Errors | None = None, ci: bool = False) -> pl.DataFrame:  # fmt: skip
        """A result as a Polars DataFrame (no pandas needed): the groups' keys, then one column per metric.

        Parameters
        ----------
        result : {"by_group", "overall", "group_min", "group_max", "difference", "ratio"}
            Which result. ``by_group``: one row per combination of the control and sensitive levels;
            the others one row per control group (one row without control features).
        method : {"between_groups", "to_overall"}
            For ``difference`` and ``ratio``.
        errors : {"raise", "coerce"}, optional
            As the pandas methods (default: theirs, ``"raise"`` for ``group_min``/``group_max``,
            ``"coerce"`` for ``difference``/``ratio``).
        ci : bool, default False
            Add one column ``<metric>_q<quantile>`` per metric and quantile of ``ci_quantiles``.

        Returns
        -------
        pl.DataFrame
            Key columns in the features' dtypes (a missing value as null), then Float64 metric
            columns (Int64 for counts; Object for non-scalar values); an undefined value is null
            (fairlearn's NaN).

        Raises
        ------
        ValueError (PolfairError)
            Unknown ``result``/``method``/``errors``; ``ci=True`` without intervals.

        Examples
        --------
        >>> from polfair import MetricFrame, selection_rate
        >>> mf = MetricFrame(metrics=selection_rate, y_true=[1, 0, 1, 0], y_pred=[1, 1, 0, 1],
        ...                  sensitive_features=["a", "a", "b", "b"])
        >>> mf.to_polars("difference").item()
        0.5
        """
        kinds = {"group_min": "min", "group_max": "max", "difference": "difference", "ratio": "ratio"}
        kind: str
        if result in ("by_group", "overall"):
            values = self._values.by_group if result == "by_group" else self._values.overall
            table = {m: v[0] for m, v in values.items()}
            kind = result
        elif result in kinds:
            check_method(method)
            errs = errors or ("raise" if result in ("group_min", "group_max") else "coerce")
            check_errors(errs)
            kind = kinds[result]
            table = {m: v[0] for m, v in self._aggregate_values(kind, method, errs, self._values).items()}
        else:
            msg = f"result must be one of by_group, overall, group_min, group_max, difference, ratio; got {result!r}"
            raise PolfairError(msg)
        shape = "by_group" if result == "by_group" else "control"
        frame = to_polars(shape, table, self._layout)
        if ci:
            limits = self._ci_limits(kind, method)
            q = self._ci_quantiles or []
            extra = to_polars(shape, {f"{m}_q{q[i]}": v[i] for m, v in limits.items() for i in range(len(q))},
                              self._layout)  # fmt: skip
            frame = pl.concat([frame, extra.select([c for c in extra.columns if c not in frame.columns])],
                              how="horizontal")  # fmt: skip
        return frame

    def _ci_limits(self, kind: str, method: str) -> dict[str, np.ndarray]:
        self._check_ci()
        q = list(self._ci_quantiles or [])
        if self._ci_method == "analytic":
            return self._analytic(kind, method, q)
        assert self._boot is not None
        if kind in ("by_group", "overall"):
            reps = self._boot.by_group if kind == "by_group" else self._boot.overall
        else:
            reps = self._aggregate_values(kind, method, "raise", self._boot)
        skip_nan = kind == "by_group" or bool(self._cf_names)
        return {m: quantiles(v, q, skip_nan) for m, v in reps.items()}

    def __repr__(self) -> str:
        paths = ", ".join(f"{m}: {p}" for m, p in self.metric_paths.items())
        return (f"MetricFrame(metrics=[{paths}], sensitive_levels={self._sf_names}, "
                f"control_levels={self._cf_names}, groups={self._layout.C * self._layout.S})")  # fmt: skip


def _check_intervals(n_boot: Any, ci_quantiles: Any, ci_method: Any) -> str | None:
    """The interval method to use (``None``: no intervals), after fairlearn's checks of ``n_boot``
    and ``ci_quantiles`` (in its order, with its messages).
    """
    if ci_method not in ("bootstrap", "analytic"):
        msg = f"ci_method must be 'bootstrap' or 'analytic', got {ci_method!r}"
        raise PolfairError(msg)
    has_q = ci_quantiles is not None and len(ci_quantiles) > 0
    if ci_method == "analytic":
        if not has_q:
            msg = "ci_method='analytic' needs ci_quantiles (e.g. [0.025, 0.975]); n_boot is for the bootstrap"
            raise PolfairError(msg)
        if n_boot is not None:
            msg = "ci_method='analytic' computes closed-form intervals: leave n_boot=None"
            raise PolfairError(msg)
    elif n_boot is not None and has_q:
        if isinstance(n_boot, bool) or not isinstance(n_boot, numbers.Integral) or n_boot < 1:
            raise PolfairError(_N_BOOT_INT_GT_ZERO)
    elif (n_boot is not None) ^ has_q:
        raise PolfairError(_NEED_N_AND_CI)
    else:
        return None
    for q in ci_quantiles:
        if not isinstance(q, float) or q <= 0 or q >= 1:
            raise PolfairError(_CI_INVALID)
    return str(ci_method)


def _weight_series(t: Target) -> pl.Series:
    s = t.series
    assert s is not None
    return s.cast(pl.Float64)


def _read_columns(passes: dict[Pass, list[str]]) -> list[str]:
    cols: list[str] = []
    for ps in passes:
        for c in (ps.y, ps.p, ps.weight):
            if c is not None and c not in cols:
                cols.append(c)
    return cols


def _merge(names: list[str], *parts: Results) -> Results:
    out = Results()
    for name in names:
        for part in parts:
            if name in part.by_group:
                out.by_group[name] = part.by_group[name]
                out.overall[name] = part.overall[name]
            if name in part.tables:
                out.tables[name] = part.tables[name]
    return out

