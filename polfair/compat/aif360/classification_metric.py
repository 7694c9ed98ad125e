"""aif360-compatible metric classes on the one-pass engine.

:class:`BinaryLabelDatasetMetric` and :class:`ClassificationMetric` have every public method of
IBM aif360 0.6.1's classes of the same names (12 and 72 methods), with the same names, arguments,
return types and numbers, quirks included, but they read a Polars frame (or a LazyFrame, or a
parquet/CSV path) by column name instead of two ``BinaryLabelDataset`` objects::

    aif360                                             polfair
    ------------------------------------------------   --------------------------------------------
    ds = BinaryLabelDataset(df=pdf, label_names=["y"],   cm = ClassificationMetric(
        protected_attribute_names=["sex"])                     df, y_true="y", y_pred="p",
    pred = ds.copy(); pred.labels = yhat                       protected=["sex"],
    cm = ClassificationMetric(ds, pred,                        unprivileged_groups=[{"sex": 0}],
        unprivileged_groups=[{"sex": 0}],                      privileged_groups=[{"sex": 1}])
        privileged_groups=[{"sex": 1}])

How it computes. The first method call runs ONE lazy ``group_by`` over the data (the cell table of
:mod:`polfair.core.counts`, via :func:`polfair.core.report.collect_cells`) and caches it on the object; every
count-based method is then a sum over the few rows of that table that match a group condition,
and the rates apply aif360's zero-division conventions to the numerators and denominators of
:data:`polfair.core.metrics.METRICS`. Only :meth:`~BinaryLabelDatasetMetric.consistency` and
:meth:`~BinaryLabelDatasetMetric.rich_subgroup` need rows; they collect the few columns they need
once more (the documented second pass of :mod:`polfair.compat.aif360.second_pass`) and cache them.

Conventions reproduced from aif360 0.6.1 (see each method):

* group conditions are a list of dicts, OR across dicts, AND within one; ``None`` = every row,
  ``[]`` = no row, ``[{}]`` = every row; keys must be protected attributes;
* ``difference(f) = f(privileged=False) − f(privileged=True)`` and ``ratio(f)`` likewise
  (unprivileged over privileged), with NumPy float64 semantics: ``x/0 = inf``, ``0/0 = nan``
  (and NumPy's ``RuntimeWarning``), never an exception;
* TPR/TNR/FPR/FNR, the generalized rates, base rate and selection rate are ``nan`` on a zero
  denominator; PPV, NPV, FDR, FOR and accuracy are ``0.0`` (so an empty group's error rate is 1.0);
* ``power`` is the true-positive *count*; ``average_predictive_value_difference`` averages ΔPPV and
  ΔFOR; equalized odds use Python's builtin ``max`` (NaN handling depends on argument order);
* entropy indices are unweighted and use hard labels (the α = 0 variant carries an extra 1/μ);
  counts, rates and differential fairness are weighted.

Deliberate differences from aif360 (inputs only; never numbers): data problems raise
:class:`polfair.InvalidInputError` (a ``ValueError``) on the first method call rather than in a
dataset constructor: a null label, prediction, score or weight (aif360: "cannot contain NA
values"), a label or prediction that is neither favorable nor unfavorable, a score outside [0, 1]
(aif360 only logs a warning) and a negative weight (aif360 accepts it). Overlapping privileged and
unprivileged groups likewise raise on the first call, not in the constructor. A score column equal
to the prediction column is not remapped to ``1[ŷ = fav]`` (aif360's quirk; give no ``y_score``).
Results are not memoised per call (aif360 memoises every method forever); the cell table is.
Weighted sums are Polars sums, equal to aif360's NumPy pairwise sums to about 1e-15 relative;
with unit (or no) weights every count is exactly aif360's.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
import polars as pl

from polfair.compat.aif360 import second_pass as individual
from polfair.core import entropy
from polfair.core.metrics import METRICS, Counts
from polfair.core.collect import collect_cells
from polfair.core.spec import IntoExpr, Spec, build_spec

__all__ = ["BinaryLabelDatasetMetric", "ClassificationMetric"]

_F = np.float64
_COUNT_COLS = ("w", "tp", "fp", "tn", "fn", "gtp", "gfp", "gtn", "gfn")
_N_COLS = ("tp_n", "fp_n", "tn_n", "fn_n")
_PERF_KEYS = ("TPR", "TNR", "FPR", "FNR", "GTPR", "GTNR", "GFPR", "GFNR", "PPV", "NPV", "FDR", "FOR", "ACC")

# --------------------------------------------------------------------------------------------
# docstring assembly: every public method gets the same numpydoc sections, filled per method


_PRIV_PARAM = """\
privileged : bool or None, default None
    ``None``: every row; ``True``: the rows matching ``privileged_groups``; ``False``: the rows
    matching ``unprivileged_groups``. aif360 quirk kept: another truthy/falsy value (``1``,
    ``0``) selects the same groups but skips the "not provided" check, so ``privileged=1`` on a
    metric built without groups silently means every row."""

_PRIV_RAISES = """\
AttributeError
    ``privileged=True`` (``False``) but ``privileged_groups`` (``unprivileged_groups``) was not
    given: "'privileged_groups' was not provided when this object was initialized."
InvalidInputError
    On the first call, if the data are invalid (see the module notes); ``ValueError`` if the
    privileged and unprivileged groups overlap."""

_CMP_RAISES = """\
AttributeError
    ``privileged_groups`` or ``unprivileged_groups`` was not given.
InvalidInputError
    On the first call, if the data are invalid (see the module notes); ``ValueError`` if the
    privileged and unprivileged groups overlap."""

_SETUP_CM = """\
>>> import polars as pl
>>> from polfair.compat.aif360 import ClassificationMetric
>>> df = pl.DataFrame({"sex": [0, 0, 0, 0, 1, 1, 1, 1],
...                    "y":   [1, 1, 0, 0, 1, 1, 0, 0],
...                    "p":   [1, 0, 1, 1, 1, 1, 0, 1]})
>>> cm = ClassificationMetric(df, y_true="y", y_pred="p", protected="sex",
...                           unprivileged_groups=[{"sex": 0}], privileged_groups=[{"sex": 1}])"""

_SETUP_BL = """\
>>> import polars as pl
>>> from polfair.compat.aif360 import BinaryLabelDatasetMetric
>>> df = pl.DataFrame({"sex": [0, 0, 0, 0, 1, 1, 1, 1],
...                    "age": [20, 30, 40, 50, 20, 30, 40, 50],
...                    "y":   [1, 0, 0, 0, 1, 1, 1, 0]})
>>> dm = BinaryLabelDatasetMetric(df, y="y", protected="sex",
...                               unprivileged_groups=[{"sex": 0}], privileged_groups=[{"sex": 1}])"""


def _doc(
    summary: str,
    *,
    formula: str,
    example: str,
    params: str | None = _PRIV_PARAM,
    returns: str = "numpy.float64",
    raises: str = _PRIV_RAISES,
    notes: str = "",
    setup: str = _SETUP_CM,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Attach a numpydoc docstring (aif360 source, formula, edge cases, doctest) to a method."""

    def deco(f: Callable[..., Any]) -> Callable[..., Any]:
        cls = "ClassificationMetric" if setup is _SETUP_CM else "BinaryLabelDatasetMetric"
        parts = [summary, "", formula, ""]
        parts += ["Parameters", "----------", params or "None", ""]
        parts += ["Returns", "-------", returns, ""]
        parts += ["Raises", "------", raises, ""]
        parts += ["Notes", "-----"]
        if notes:
            parts += [notes, ""]
        parts += [f"Source: aif360 0.6.1 ``{cls}.{f.__name__}`` (same value, same NaN/inf cases).", ""]
        parts += ["Examples", "--------", setup, example]
        f.__doc__ = "\n".join(parts)
        return f

    return deco


def _is_number(v: Any) -> bool:
    return isinstance(v, (bool, int, float, np.number))


# --------------------------------------------------------------------------------------------


class BinaryLabelDatasetMetric:
    """Metrics of a labelled dataset (no predictions), aif360 0.6.1-compatible.

    Drop-in for ``aif360.metrics.BinaryLabelDatasetMetric`` on a Polars frame: the same 12 public
    methods, arguments, values and quirks. See :mod:`polfair.compat.aif360` for how it computes and for
    the (input-only) differences from aif360.

    Parameters
    ----------
    data : pl.DataFrame, pl.LazyFrame, pandas DataFrame, pyarrow Table, dict or path
        The rows, one per individual; a path is scanned lazily (parquet, CSV, IPC).
    y : str or pl.Expr
        The label column: every value must be ``favorable_label`` or ``unfavorable_label``.
    protected : str, pl.Expr or sequence of them
        Protected attributes (named expressions allowed, e.g. a binned age). Group conditions may
        only name these. aif360 needs numbers; strings work here too.
    weight : str or pl.Expr, optional
        Instance weights (Float64, finite, ≥ 0). Default: every weight 1.
    favorable_label, unfavorable_label : scalar or list of scalars, default 1 and 0
        Label values. Lists give aif360's ``MulticlassLabelDataset`` mapping (a label in the list is
        favorable / unfavorable); then raw labels are the 0/1 indicator (consistency, rich_subgroup).
    unprivileged_groups, privileged_groups : list of dict, optional
        aif360 group conditions: ``[{"sex": 1}]``, ``[{"sex": 1, "race": 0}, {"sex": 0}]`` (OR across
        dicts, AND within); ``None``: not given; ``[]``: an empty group; ``[{}]``: every row.
    features : sequence of str, optional
        Columns used by :meth:`consistency`. Default: as aif360, every numeric (or boolean) column
        of ``data`` except the label, prediction, score and weight columns, in frame order
        (protected attributes included).

    Raises
    ------
    TypeError
        ``data`` of an unsupported type, or a group condition that is not a list of dicts.
    ValueError
        A group condition names a column that is not a protected attribute
        (aif360's "'x' is not in list").
    ColumnNotFoundError
        A named column is missing.

    Notes
    -----
    Data problems (nulls, labels outside favorable/unfavorable, bad weights) and overlapping
    groups raise on the first method call, when the one pass runs. Source: aif360 0.6.1
    ``aif360.metrics.BinaryLabelDatasetMetric`` (Bellamy et al. 2018, "AI Fairness 360").

    Examples
    --------
    >>> import polars as pl
    >>> from polfair.compat.aif360 import BinaryLabelDatasetMetric
    >>> df = pl.DataFrame({"sex": [0, 0, 1, 1], "y": [1, 0, 1, 1]})
    >>> dm = BinaryLabelDatasetMetric(df, y="y", protected="sex",
    ...                               unprivileged_groups=[{"sex": 0}], privileged_groups=[{"sex": 1}])
    >>> print(dm.disparate_impact())
    0.5
    """

    _uses_predictions = False

    def __init__(
        self,
        data: Any,
        *,
        y: IntoExpr,
        protected: IntoExpr | Sequence[IntoExpr],
        weight: IntoExpr | None = None,
        favorable_label: Any = 1,
        unfavorable_label: Any = 0,
        unprivileged_groups: list[dict[str, Any]] | None = None,
        privileged_groups: list[dict[str, Any]] | None = None,
        features: Sequence[str] | None = None,
    ) -> None:
        self._setup(
            data, y_true=y, y_pred=None, y_score=None, weight=weight, protected=protected,
            favorable_label=favorable_label, unfavorable_label=unfavorable_label,
            unprivileged_groups=unprivileged_groups, privileged_groups=privileged_groups,
            features=features,
        )  # fmt: skip

    # -- construction and the one pass ------------------------------------------------------

    def _setup(
        self,
        data: Any,
        *,
        y_true: IntoExpr,
        y_pred: IntoExpr | None,
        y_score: IntoExpr | None,
        weight: IntoExpr | None,
        protected: IntoExpr | Sequence[IntoExpr],
        favorable_label: Any,
        unfavorable_label: Any,
        unprivileged_groups: list[dict[str, Any]] | None,
        privileged_groups: list[dict[str, Any]] | None,
        features: Sequence[str] | None,
    ) -> None:
        self._spec: Spec = build_spec(
            data, y_true=y_true, y_pred=y_pred, y_score=y_score, protected=protected,
            favorable=favorable_label, unfavorable=unfavorable_label, weight=weight,
        )  # fmt: skip
        plist = [protected] if isinstance(protected, (str, pl.Expr)) else list(protected)
        self._protected_exprs = [pl.col(e) if isinstance(e, str) else e for e in plist]
        self.favorable_label = favorable_label
        self.unfavorable_label = unfavorable_label
        self.protected_attribute_names = list(self._spec.keys)
        self.privileged_groups = self._check_groups(privileged_groups, "privileged_groups")
        self.unprivileged_groups = self._check_groups(unprivileged_groups, "unprivileged_groups")
        self._features = None if features is None else list(features)
        if self._features is not None and (isinstance(features, str) or not all(isinstance(f, str) for f in self._features)):
            msg = f"features must be a list of column names, got {features!r}"
            raise TypeError(msg)
        self._cells: pl.DataFrame | None = None
        self._masks: dict[Any, np.ndarray] = {}
        self._sums: dict[Any, dict[str, Any]] = {}
        self._rows: dict[str, np.ndarray] | None = None

    def _check_groups(self, groups: Any, arg: str) -> list[dict[str, Any]] | None:
        if groups is None:
            return None
        if isinstance(groups, dict) or not isinstance(groups, (list, tuple)):
            msg = (
                f"{arg} must be a list of dicts such as [{{'sex': 1}}] (OR across dicts, AND within "
                f"one), got {type(groups).__name__}: {groups!r}"
            )
            raise TypeError(msg)
        for g in groups:
            if not isinstance(g, dict):
                msg = f"{arg} must be a list of dicts such as [{{'sex': 1}}]; found the element {g!r}"
                raise TypeError(msg)
            for name in g:
                if name not in self.protected_attribute_names:
                    msg = (
                        f"'{name}' is not in list: {arg} may only name protected attributes "
                        f"{self.protected_attribute_names}; add {name!r} to protected= or fix the key"
                    )
                    raise ValueError(msg)
        return list(groups)

    @property
    def cells(self) -> pl.DataFrame:
        """The cell table (one pass over the data, run on first use and cached).

        Returns
        -------
        pl.DataFrame
            Schema of :mod:`polfair.core.counts`: ``*protected, n, n_missing, n_invalid, w, tp, fp, tn,
            fn, tp_n, fp_n, tn_n, fn_n, gtp, gfp, gtn, gfn``, one row per observed combination of
            the protected attributes.

        Raises
        ------
        InvalidInputError
            Invalid data (see the module notes).
        ValueError
            Overlapping privileged and unprivileged groups.

        Examples
        --------
        >>> import polars as pl
        >>> from polfair.compat.aif360 import BinaryLabelDatasetMetric
        >>> dm = BinaryLabelDatasetMetric(pl.DataFrame({"g": [0, 1, 1], "y": [1, 0, 1]}), y="y", protected="g")
        >>> dm.cells.select("g", "n", "tp").rows()
        [(0, 1, 1.0), (1, 2, 1.0)]
        """
        if self._cells is None:
            cells = collect_cells(self._spec, on_missing="raise")
            self._cells = cells
            self._arrays = {c: cells[c].to_numpy().astype(np.float64) for c in _COUNT_COLS}
            self._arrays.update({c: cells[c].to_numpy().astype(np.int64) for c in (*_N_COLS, "n")})
            if self.privileged_groups and self.unprivileged_groups:
                if np.any(self._mask("priv") & self._mask("unpriv")):
                    msg = (
                        "'privileged_groups' and 'unprivileged_groups' must be disjoint: rows with "
                        f"{self._overlap_example()} match both; change one of the conditions"
                    )
                    self._cells = None
                    raise ValueError(msg)
        return self._cells

    def _overlap_example(self) -> str:
        both = self._mask("priv") & self._mask("unpriv")
        row = self._cells.filter(pl.Series(both)).select(self.protected_attribute_names).row(0, named=True)  # type: ignore[union-attr]
        return ", ".join(f"{k}={v!r}" for k, v in row.items())

    def _condition_expr(self, condition: list[dict[str, Any]]) -> pl.Expr:
        schema = self._cells.schema  # type: ignore[union-attr]
        out: pl.Expr = pl.lit(False)
        for group in condition:
            g: pl.Expr = pl.lit(True)
            for name, val in group.items():
                g = g & self._eq(name, schema[name], val)
            out = out | g
        return out.fill_null(False)

    @staticmethod
    def _eq(name: str, dtype: pl.DataType, val: Any) -> pl.Expr:
        """``column == val`` as aif360 compares (float64 equality; other types match nothing)."""
        col = pl.col(name)
        if dtype.is_numeric() or dtype == pl.Boolean:
            if _is_number(val):
                return col.cast(pl.Float64) == float(val)
            return pl.lit(False)
        if isinstance(dtype, (pl.String, pl.Categorical, pl.Enum)):
            return col.cast(pl.String) == val if isinstance(val, str) else pl.lit(False)
        return col == pl.lit(val)

    def _mask(self, tag: Any) -> np.ndarray:
        """Boolean vector over the cell table for ``tag`` in {None, "priv", "unpriv"}."""
        if tag not in self._masks:
            cells = self.cells if self._cells is None else self._cells
            if tag is None:
                m = np.ones(cells.height, dtype=bool)
            else:
                cond = self.privileged_groups if tag == "priv" else self.unprivileged_groups
                m = cells.with_columns(self._condition_expr(cond or []).alias("__pf_m"))["__pf_m"].to_numpy().astype(bool)
            self._masks[tag] = m
        return self._masks[tag]

    def _to_condition(self, privileged: Any) -> Any:
        """aif360's ``_to_condition``, returning a tag for the cached masks."""
        if privileged is True and self.privileged_groups is None:
            msg = "'privileged_groups' was not provided when this object was initialized."
            raise AttributeError(msg)
        if privileged is False and self.unprivileged_groups is None:
            msg = "'unprivileged_groups' was not provided when this object was initialized."
            raise AttributeError(msg)
        if privileged is None:
            return None
        groups = self.privileged_groups if privileged else self.unprivileged_groups
        if groups is None:  # privileged=1 / 0 without groups: aif360 conditions on None = all rows
            return None
        return "priv" if privileged else "unpriv"

    def _counts(self, privileged: Any) -> Counts:
        """A :class:`~polfair.core.metrics.Counts` accessor bound to the sums over the selected cells."""
        tag = self._to_condition(privileged)
        if tag not in self._sums:
            self.cells  # noqa: B018 - runs the pass (and the disjointness check) once
            m = self._mask(tag)
            sums: dict[str, Any] = {c: _F(np.sum(self._arrays[c][m], dtype=np.float64)) for c in _COUNT_COLS}
            sums.update({c: int(np.sum(self._arrays[c][m])) for c in (*_N_COLS, "n")})
            self._sums[tag] = sums
        sums = self._sums[tag]
        return Counts(sums.__getitem__)

    def _metric(self, name: str, privileged: Any) -> np.float64:
        """A count (numerator only) or an *unguarded* rate (``num / den``, numpy semantics)."""
        m = METRICS[name]
        c = self._counts(privileged)
        num = _F(m.numerator(c))
        return num if m.denominator is None else num / _F(m.denominator(c))

    def _guarded(self, name: str, privileged: Any) -> np.float64:
        """A rate guarded as aif360 guards PPV/NPV/FDR/FOR/ACC: ``0.0`` when ``den <= 0``."""
        m = METRICS[name]
        c = self._counts(privileged)
        den = _F(m.denominator(c))  # type: ignore[misc]
        return _F(m.numerator(c)) / den if den > 0.0 else _F(0.0)

    def _cell_arrays(self) -> Counts:
        self.cells  # noqa: B018
        return Counts(self._arrays.__getitem__)

    def _smoothed_base_rates(self, positives: Callable[[Counts], Any], concentration: float) -> np.ndarray:
        if concentration < 0:
            msg = "Concentration parameter must be non-negative."
            raise ValueError(msg)
        c = self._cell_arrays()
        pos = np.asarray(positives(c), dtype=np.float64)
        tot = np.asarray(METRICS["num_instances"].numerator(c), dtype=np.float64)
        return (pos + concentration / 2) / (tot + concentration)

    @staticmethod
    def _edf(sbr: np.ndarray) -> np.float64:
        """aif360's ``max(max(pos(i,j), neg(i,j)) for i for j if i != j)`` with builtin-max NaN order."""
        k = sbr.shape[0]
        if k < 2:
            msg = (
                "max() arg is an empty sequence: smoothed empirical differential fairness needs at "
                f"least two observed intersections of the protected attributes, found {k}"
            )
            raise ValueError(msg)
        with np.errstate(divide="ignore", invalid="ignore"):
            lp, ln = np.log(sbr), np.log(1 - sbr)
            pos = np.abs(lp[:, None] - lp[None, :])
            neg = np.abs(ln[:, None] - ln[None, :])
        inner = np.where(neg > pos, neg, pos)  # builtin max(a, b): b only if b > a
        first = inner[0, 1]
        if np.isnan(first):  # nothing compares greater than a NaN running maximum
            return _F(first)
        off = inner[~np.eye(k, dtype=bool)]
        return _F(np.nanmax(off))  # a NaN term never replaces a number

    def _raw_rows(self) -> dict[str, np.ndarray]:
        """Second pass (documented): features, raw labels and protected attributes, collected once."""
        if self._rows is None:
            spec = self._spec
            source = spec.source
            schema = source.collect_schema()
            used = set()
            for e in spec.roles.values():
                used.update(e.meta.root_names())
            if self._features is None:
                feats = [c for c, t in schema.items() if c not in used and (t.is_numeric() or t == pl.Boolean)]
            else:
                missing = [f for f in self._features if f not in schema]
                if missing:
                    msg = f"features: columns {missing} are not in the input; available: {list(schema)}"
                    raise ValueError(msg)
                feats = self._features
            y = spec.roles["y_true"]
            ydt = source.select(y).collect_schema().dtypes()[0]
            if not isinstance(self.favorable_label, (list, tuple)) and (ydt.is_numeric() or ydt == pl.Boolean):
                ylab = y.cast(pl.Float64)  # aif360 uses the raw label values
            else:  # MulticlassLabelDataset mapping (or non-numeric labels): 1 = favorable, 0 = not
                fav = list(self.favorable_label) if isinstance(self.favorable_label, (list, tuple)) else [self.favorable_label]
                ylab = y.is_in(fav).cast(pl.Float64)
            keys = [e.alias(f"__pf_k{i}") for i, e in enumerate(self._protected_exprs)]
            feat_cols = [pl.col(f).cast(pl.Float64).alias(f"__pf_f{i}") for i, f in enumerate(feats)]
            frame = source.select([*feat_cols, ylab.alias("__pf_y"), *keys]).collect()  # one scan
            self._rows = {
                "features": frame.select([f"__pf_f{i}" for i in range(len(feats))]).to_numpy().astype(np.float64)
                if feats
                else np.zeros((frame.height, 0)),
                "y": frame["__pf_y"].to_numpy().astype(np.float64),
                "keys": frame.select([f"__pf_k{i}" for i in range(len(spec.keys))]),
                "feature_names": np.array(feats, dtype=object),
            }
        return self._rows

    # -- generic comparisons ----------------------------------------------------------------

    @_doc(
        "Difference of a metric between the unprivileged and the privileged group.",
        formula="``metric_fun(privileged=False) - metric_fun(privileged=True)`` (unprivileged − privileged).",
        params="metric_fun : callable\n    A bound method of this object taking ``privileged=`` and returning a scalar.",
        returns="numpy.float64\n    ``nan`` if either side is ``nan``; ``inf − inf`` is ``nan``.",
        raises=_CMP_RAISES + "\nTypeError\n    ``metric_fun`` returns a dict (e.g. ``binary_confusion_matrix``).",
        notes="NumPy float64 arithmetic: nothing raises on undefined values.",
        example=">>> print(cm.difference(cm.selection_rate))\n0.0",
    )
    def difference(self, metric_fun: Callable[..., Any]) -> np.float64:
        return metric_fun(privileged=False) - metric_fun(privileged=True)

    @_doc(
        "Ratio of a metric between the unprivileged and the privileged group.",
        formula="``metric_fun(privileged=False) / metric_fun(privileged=True)`` (unprivileged / privileged).",
        params="metric_fun : callable\n    A bound method of this object taking ``privileged=`` and returning a scalar.",
        returns="numpy.float64\n    ``x/0 = inf`` (x > 0), ``0/0 = nan``, with NumPy's ``RuntimeWarning``.",
        raises=_CMP_RAISES + "\nTypeError\n    ``metric_fun`` returns a dict.",
        notes="NumPy float64 arithmetic: nothing raises on a zero denominator.",
        example=">>> print(cm.ratio(cm.true_positive_rate))\n0.5",
    )
    def ratio(self, metric_fun: Callable[..., Any]) -> np.float64:
        return metric_fun(privileged=False) / metric_fun(privileged=True)

    # -- counts on labels ---------------------------------------------------------------------

    @_doc(
        "Number of instances ``n`` in the selected rows (weighted).",
        formula="``Σ w`` over the rows of the group.",
        returns="numpy.float64\n    The sum of weights (the row count without weights); ``0.0`` for an empty group.",
        example=">>> print(dm.num_instances(privileged=True))\n4.0",
        setup=_SETUP_BL,
    )
    def num_instances(self, privileged: bool | None = None) -> np.float64:
        return self._metric("num_instances", privileged)

    @_doc(
        "Number of positives ``P``: rows whose true label is favorable (weighted).",
        formula="``P = Σ w [y = favorable_label]`` over the group.",
        returns="numpy.float64\n    ``0.0`` for an empty group.",
        example=">>> print(dm.num_positives(privileged=False))\n1.0",
        setup=_SETUP_BL,
    )
    def num_positives(self, privileged: bool | None = None) -> np.float64:
        return self._metric("num_positives", privileged)

    @_doc(
        "Number of negatives ``N``: rows whose true label is unfavorable (weighted).",
        formula="``N = Σ w [y = unfavorable_label]`` over the group.",
        returns="numpy.float64\n    ``0.0`` for an empty group.",
        example=">>> print(dm.num_negatives(privileged=False))\n3.0",
        setup=_SETUP_BL,
    )
    def num_negatives(self, privileged: bool | None = None) -> np.float64:
        return self._metric("num_negatives", privileged)

    @_doc(
        "Base rate: the fraction of rows with the favorable true label (weighted).",
        formula="``P / (P + N)`` = ``num_positives / num_instances``, a fraction in [0, 1].",
        returns="numpy.float64\n    ``nan`` (with NumPy's ``RuntimeWarning``) for an empty group (0/0), as aif360.",
        example=">>> print(dm.base_rate(privileged=True))\n0.75",
        setup=_SETUP_BL,
    )
    def base_rate(self, privileged: bool | None = None) -> np.float64:
        return self._metric("base_rate", privileged)

    @_doc(
        "Disparate impact of the true labels: ratio of base rates.",
        formula="``base_rate(privileged=False) / base_rate(privileged=True)``; 1 is parity, < 1 "
        "disadvantages the unprivileged group.",
        params=None,
        returns="numpy.float64\n    ``inf`` when the privileged base rate is 0, ``nan`` for 0/0.",
        raises=_CMP_RAISES,
        notes="In :class:`ClassificationMetric` this is overridden to use predictions (selection rates).",
        example=">>> print(dm.disparate_impact())\n0.3333333333333333",
        setup=_SETUP_BL,
    )
    def disparate_impact(self) -> np.float64:
        return self.ratio(self.base_rate)

    @_doc(
        "Statistical parity difference of the true labels: difference of base rates.",
        formula="``base_rate(privileged=False) − base_rate(privileged=True)``, in [−1, 1]; 0 is parity.",
        params=None,
        returns="numpy.float64\n    ``nan`` if either base rate is ``nan``.",
        raises=_CMP_RAISES,
        notes="In :class:`ClassificationMetric` this is overridden to use predictions (selection rates).",
        example=">>> print(dm.statistical_parity_difference())\n-0.5",
        setup=_SETUP_BL,
    )
    def statistical_parity_difference(self) -> np.float64:
        return self.difference(self.base_rate)

    @_doc(
        "Alias of :meth:`statistical_parity_difference` (dynamic: predictions in ClassificationMetric).",
        formula="``self.statistical_parity_difference()``.",
        params=None,
        returns="numpy.float64",
        raises=_CMP_RAISES,
        example=">>> print(dm.mean_difference())\n-0.5",
        setup=_SETUP_BL,
    )
    def mean_difference(self) -> np.float64:
        return self.statistical_parity_difference()

    # -- row-level measures (second pass) ---------------------------------------------------

    @_doc(
        "Individual fairness: consistency of each row's label with its k nearest neighbours' labels.",
        formula="``1 − (1/n) Σ_i |y_i − mean(y_j for j in kNN(x_i))|`` over the features (unscaled, "
        "Euclidean, the row itself among its neighbours); see :func:`polfair.compat.aif360.second_pass.consistency`.",
        params="n_neighbors : int, default 5\n    Number of neighbours ``k`` (``k = 1`` gives 1.0).",
        returns="float\n    In [0, 1] for 0/1 labels. **aif360 0.6.1 returns an ndarray of shape (1,)**; "
        "this returns the float it holds.",
        raises="ImportError\n    scikit-learn is missing: ``pip install 'polfair[sklearn]'``.\n"
        "ValueError\n    ``n_neighbors`` larger than the number of rows (from scikit-learn), or a named "
        "feature column is missing.",
        notes="Unweighted; ignores the groups; uses the *true* labels (also in ClassificationMetric: "
        "the classifier's consistency is ``BinaryLabelDatasetMetric(df, y=pred_col, ...)``). Raw label "
        "values, as aif360. Features: ``features=`` or every numeric column except label, prediction, "
        "score and weight. A documented second pass over the data (collected once per object). "
        "Zemel et al. (2013), 'Learning fair representations'.",
        example=">>> print(round(dm.consistency(n_neighbors=3), 6))\n0.708333",
        setup=_SETUP_BL,
    )
    def consistency(self, n_neighbors: int = 5) -> float:
        rows = self._raw_rows()
        if rows["features"].shape[1] == 0:
            msg = "consistency() found no numeric feature columns; pass features=[...] to the constructor"
            raise ValueError(msg)
        return individual.consistency(rows["features"], rows["y"], n_neighbors)

    @_doc(
        "Smoothed empirical differential fairness (EDF) of the labels over all protected attributes.",
        formula="With each observed intersection ``k`` of ALL protected attributes, ``s_k = (pos_k + c/2) / "
        "(tot_k + c)`` (weighted counts, Dirichlet smoothing ``c``): ``max over i != j of "
        "max(|ln s_i − ln s_j|, |ln(1 − s_i) − ln(1 − s_j)|)``, in nats (≥ 0; 0 is perfect fairness).",
        params="concentration : float, default 1.0\n    Smoothing ``c`` ≥ 0.",
        returns="numpy.float64\n    ``inf`` or ``nan`` at concentration 0 with a pure cell (log 0), with "
        "Python's builtin-``max`` NaN order: ``nan`` if the first pair's term is ``nan``, else ``nan`` "
        "terms are skipped.",
        raises="ValueError\n    ``concentration < 0`` ('Concentration parameter must be non-negative.'); "
        "a single observed intersection ('max() arg is an empty sequence').\nInvalidInputError\n    "
        "Invalid data (first call).",
        notes="Weighted; ignores ``privileged_groups``; labels are this object's true labels (also in "
        "ClassificationMetric). Foulds, Islam, Keya & Pan (2020), 'An intersectional definition of "
        "fairness'.",
        example=">>> print(round(dm.smoothed_empirical_differential_fairness(), 6))\n0.847298",
        setup=_SETUP_BL,
    )
    def smoothed_empirical_differential_fairness(self, concentration: float = 1.0) -> np.float64:
        return self._edf(self._smoothed_base_rates(METRICS["num_positives"].numerator, concentration))

    @_doc(
        "Rich subgroup fairness (GerryFair audit): disparity of the most unfair linear subgroup.",
        formula="Two least-squares fits of the (centred) FP or FN indicator on the protected attributes "
        "give the subgroup; value = |subgroup rate − overall rate| × subgroup size / n. See "
        ":func:`polfair.compat.aif360.second_pass.rich_subgroup` for the exact steps.",
        params="predictions : str, pl.Expr or array-like\n    A column name or expression of the input, or "
        "``n`` values (shape ``(n,)`` or ``(n, 1)``) in row order: hard 0/1 labels or scores.\n"
        "fairness_def : {'FP', 'FN'}, default 'FP'\n    False-positive or false-negative rates.",
        returns="float\n    ≥ 0 (0: no subgroup is treated differently).",
        raises="ValueError\n    ``fairness_def`` not 'FP'/'FN' (aif360 raises a bare ``Exception`` with the "
        "same message); no row with the needed label; wrong number of predictions; non-numeric "
        "protected attributes.",
        notes="Reproduces aif360 0.6.1 including its complement-group bug (spec §9 step 6) and its "
        "assumption that raw labels are 0/1 whatever ``favorable_label`` is. Unweighted, ignores the "
        "groups. Unlike aif360 (memoised, so a positional ndarray raises ``TypeError: unhashable``), "
        "arrays may be passed positionally. A column name or expression is read with one more small "
        "select over the data; an array is not. Kearns, Neel, Roth & Wu (2018), 'Preventing fairness "
        "gerrymandering'.",
        example=">>> print(round(dm.rich_subgroup([1, 1, 0, 0, 1, 1, 1, 1], fairness_def='FP'), 6))\n0.0625",
        setup=_SETUP_BL,
    )
    def rich_subgroup(self, predictions: Any, fairness_def: str = "FP") -> float:
        rows = self._raw_rows()
        keys = rows["keys"]
        bad = [c for c, t in keys.schema.items() if not (t.is_numeric() or t == pl.Boolean)]
        if bad:
            msg = (
                f"rich_subgroup regresses on the protected attributes, which must be numeric; {bad} are "
                "not: encode them as numbers (e.g. pl.col(x).cast(pl.Categorical).to_physical())"
            )
            raise ValueError(msg)
        X = keys.cast(pl.Float64).to_numpy()
        if isinstance(predictions, (str, pl.Expr)):
            e = pl.col(predictions) if isinstance(predictions, str) else predictions
            predictions = self._spec.source.select(e.cast(pl.Float64)).collect().to_series().to_numpy()
        elif isinstance(predictions, pl.Series):
            predictions = predictions.cast(pl.Float64).to_numpy()
        return individual.rich_subgroup(X, rows["y"], predictions, fairness_def)


# --------------------------------------------------------------------------------------------


class ClassificationMetric(BinaryLabelDatasetMetric):
    """Metrics of a classifier's predictions against true labels, aif360 0.6.1-compatible.

    Drop-in for ``aif360.metrics.ClassificationMetric(dataset, classified_dataset, ...)`` on ONE
    Polars frame holding both the true labels and the predictions: the same 72 public methods,
    arguments, values and quirks. See :mod:`polfair.compat.aif360` for how it computes and for the
    (input-only) differences from aif360.

    Parameters
    ----------
    data : pl.DataFrame, pl.LazyFrame, pandas DataFrame, pyarrow Table, dict or path
        The rows, one per individual; a path is scanned lazily (parquet, CSV, IPC).
    y_true : str or pl.Expr
        True labels (aif360's ``dataset.labels``); each ``favorable_label`` or ``unfavorable_label``.
    y_pred : str or pl.Expr, optional
        Predicted labels (``classified_dataset.labels``), same values. Without it, predictions are
        ``y_score >= 0.5`` when ``y_score`` is given, else the true labels themselves.
    y_score : str or pl.Expr, optional
        Scores, P(favorable label) in [0, 1] (``classified_dataset.scores``), used only by the
        generalized counts and rates. Default: ``1[ŷ = favorable_label]``, as aif360. Scores are
        never flipped when the favorable label is 0 (aif360 neither).
    weight : str or pl.Expr, optional
        Instance weights (Float64, finite, ≥ 0). Default: every weight 1.
    protected : str, pl.Expr or sequence of them
        Protected attributes; group conditions may only name these.
    favorable_label, unfavorable_label : scalar or list of scalars, default 1 and 0
        Label values (lists: aif360's ``MulticlassLabelDataset`` mapping).
    unprivileged_groups, privileged_groups : list of dict, optional
        aif360 group conditions (OR across dicts, AND within one; ``[]`` empty; ``[{}]`` all rows).
    features : sequence of str, optional
        Columns for :meth:`consistency` (default: every numeric column except label, prediction,
        score and weight, protected attributes included, as aif360's ``dataset.features``).

    Raises
    ------
    TypeError
        ``data`` of an unsupported type, or group conditions that are not lists of dicts.
    ValueError
        A group condition names a column that is not a protected attribute.
    ColumnNotFoundError
        A named column is missing.

    Notes
    -----
    Methods inherited from :class:`BinaryLabelDatasetMetric` read the **true** labels, as in
    aif360: ``num_instances``, ``num_positives``, ``num_negatives``, ``base_rate``, ``consistency``,
    ``smoothed_empirical_differential_fairness`` and ``rich_subgroup``. ``disparate_impact``,
    ``statistical_parity_difference`` and ``mean_difference`` are overridden to use predictions.
    Source: aif360 0.6.1 ``aif360.metrics.ClassificationMetric``.

    Examples
    --------
    >>> import polars as pl
    >>> from polfair.compat.aif360 import ClassificationMetric
    >>> df = pl.DataFrame({"sex": [0, 0, 1, 1], "y": [1, 0, 1, 0], "p": [0, 0, 1, 1]})
    >>> cm = ClassificationMetric(df, y_true="y", y_pred="p", protected="sex",
    ...                           unprivileged_groups=[{"sex": 0}], privileged_groups=[{"sex": 1}])
    >>> print(cm.true_positive_rate(privileged=False), cm.accuracy())
    0.0 0.5
    """

    _uses_predictions = True

    def __init__(
        self,
        data: Any,
        *,
        y_true: IntoExpr,
        y_pred: IntoExpr | None = None,
        y_score: IntoExpr | None = None,
        weight: IntoExpr | None = None,
        protected: IntoExpr | Sequence[IntoExpr],
        favorable_label: Any = 1,
        unfavorable_label: Any = 0,
        unprivileged_groups: list[dict[str, Any]] | None = None,
        privileged_groups: list[dict[str, Any]] | None = None,
        features: Sequence[str] | None = None,
    ) -> None:
        self._setup(
            data, y_true=y_true, y_pred=y_pred, y_score=y_score, weight=weight, protected=protected,
            favorable_label=favorable_label, unfavorable_label=unfavorable_label,
            unprivileged_groups=unprivileged_groups, privileged_groups=privileged_groups,
            features=features,
        )  # fmt: skip

    # -- confusion matrices -----------------------------------------------------------------

    @_doc(
        "Weighted confusion matrix of the selected rows.",
        formula="``TP = Σw[y = fav, ŷ = fav]``, ``FP = Σw[y = unf, ŷ = fav]``, ``TN = Σw[y = unf, ŷ = unf]``, "
        "``FN = Σw[y = fav, ŷ = unf]``.",
        returns="dict of str to numpy.float64\n    Keys in aif360's order ``TP, FP, TN, FN``; all ``0.0`` for an "
        "empty group.",
        example=">>> {k: float(v) for k, v in cm.binary_confusion_matrix(privileged=False).items()}\n"
        "{'TP': 1.0, 'FP': 2.0, 'TN': 0.0, 'FN': 1.0}",
    )
    def binary_confusion_matrix(self, privileged: bool | None = None) -> dict[str, np.float64]:
        return {k: self._metric(f"num_{n}", privileged) for k, n in _CONFUSION.items()}

    @_doc(
        "Weighted generalized (score-based) confusion matrix of the selected rows.",
        formula="With ``s`` the score (default ``1[ŷ = fav]``): ``GTP = Σ w·s [y = fav]``, ``GFP = Σ w·s [y = unf]``, "
        "``GTN = Σ w·(1−s) [y = unf]``, ``GFN = Σ w·(1−s) [y = fav]``.",
        returns="dict of str to numpy.float64\n    Keys in aif360's order ``GTP, GFP, GTN, GFN``; ``0.0`` for an "
        "empty group.",
        example=">>> {k: float(v) for k, v in cm.generalized_binary_confusion_matrix(privileged=True).items()}\n"
        "{'GTP': 2.0, 'GFP': 1.0, 'GTN': 1.0, 'GFN': 0.0}",
    )
    def generalized_binary_confusion_matrix(self, privileged: bool | None = None) -> dict[str, np.float64]:
        return {k: self._metric(f"num_generalized_{n}", privileged) for k, n in _GCONFUSION.items()}

    @_doc(
        "Number of true positives (weighted).",
        formula="``TP = Σ w [y = fav, ŷ = fav]``.",
        returns="numpy.float64\n    ``0.0`` for an empty group.",
        example=">>> print(cm.num_true_positives())\n3.0",
    )
    def num_true_positives(self, privileged: bool | None = None) -> np.float64:
        return self._metric("num_true_positives", privileged)

    @_doc(
        "Number of false positives (weighted).",
        formula="``FP = Σ w [y = unf, ŷ = fav]``.",
        returns="numpy.float64\n    ``0.0`` for an empty group.",
        example=">>> print(cm.num_false_positives())\n3.0",
    )
    def num_false_positives(self, privileged: bool | None = None) -> np.float64:
        return self._metric("num_false_positives", privileged)

    @_doc(
        "Number of false negatives (weighted).",
        formula="``FN = Σ w [y = fav, ŷ = unf]``.",
        returns="numpy.float64\n    ``0.0`` for an empty group.",
        example=">>> print(cm.num_false_negatives())\n1.0",
    )
    def num_false_negatives(self, privileged: bool | None = None) -> np.float64:
        return self._metric("num_false_negatives", privileged)

    @_doc(
        "Number of true negatives (weighted).",
        formula="``TN = Σ w [y = unf, ŷ = unf]``.",
        returns="numpy.float64\n    ``0.0`` for an empty group.",
        example=">>> print(cm.num_true_negatives())\n1.0",
    )
    def num_true_negatives(self, privileged: bool | None = None) -> np.float64:
        return self._metric("num_true_negatives", privileged)

    @_doc(
        "Number of generalized true positives (weighted, score-based).",
        formula="``GTP = Σ w·s [y = fav]`` (``s`` = score, default ``1[ŷ = fav]``).",
        returns="numpy.float64\n    ``0.0`` for an empty group.",
        example=">>> print(cm.num_generalized_true_positives())\n3.0",
    )
    def num_generalized_true_positives(self, privileged: bool | None = None) -> np.float64:
        return self._metric("num_generalized_true_positives", privileged)

    @_doc(
        "Number of generalized false positives (weighted, score-based).",
        formula="``GFP = Σ w·s [y = unf]``.",
        returns="numpy.float64\n    ``0.0`` for an empty group.",
        example=">>> print(cm.num_generalized_false_positives())\n3.0",
    )
    def num_generalized_false_positives(self, privileged: bool | None = None) -> np.float64:
        return self._metric("num_generalized_false_positives", privileged)

    @_doc(
        "Number of generalized false negatives (weighted, score-based).",
        formula="``GFN = Σ w·(1 − s) [y = fav]``.",
        returns="numpy.float64\n    ``0.0`` for an empty group.",
        example=">>> print(cm.num_generalized_false_negatives())\n1.0",
    )
    def num_generalized_false_negatives(self, privileged: bool | None = None) -> np.float64:
        return self._metric("num_generalized_false_negatives", privileged)

    @_doc(
        "Number of generalized true negatives (weighted, score-based).",
        formula="``GTN = Σ w·(1 − s) [y = unf]``.",
        returns="numpy.float64\n    ``0.0`` for an empty group.",
        example=">>> print(cm.num_generalized_true_negatives())\n1.0",
    )
    def num_generalized_true_negatives(self, privileged: bool | None = None) -> np.float64:
        return self._metric("num_generalized_true_negatives", privileged)

    @_doc(
        "Number of predicted positives (weighted).",
        formula="``Σ w [ŷ = fav]`` = ``TP + FP``.",
        returns="numpy.float64\n    ``0.0`` for an empty group.",
        example=">>> print(cm.num_pred_positives(privileged=False))\n3.0",
    )
    def num_pred_positives(self, privileged: bool | None = None) -> np.float64:
        return self._metric("num_pred_positives", privileged)

    @_doc(
        "Number of predicted negatives (weighted).",
        formula="``Σ w [ŷ = unf]`` = ``TN + FN``.",
        returns="numpy.float64\n    ``0.0`` for an empty group.",
        example=">>> print(cm.num_pred_negatives(privileged=False))\n1.0",
    )
    def num_pred_negatives(self, privileged: bool | None = None) -> np.float64:
        return self._metric("num_pred_negatives", privileged)

    @_doc(
        "Selection rate: the fraction of rows predicted favorable (weighted).",
        formula="``(TP + FP) / (P + N)`` = ``num_pred_positives / num_instances``, in [0, 1].",
        returns="numpy.float64\n    ``nan`` (NumPy ``RuntimeWarning``) for an empty group.",
        example=">>> print(cm.selection_rate(privileged=True))\n0.75",
    )
    def selection_rate(self, privileged: bool | None = None) -> np.float64:
        return self._metric("selection_rate", privileged)

    @_doc(
        "All the rates of the selected rows at once, as aif360 returns them.",
        formula="``TPR = TP/P, TNR = TN/N, FPR = FP/N, FNR = FN/P, GTPR = GTP/P, GTNR = GTN/N, GFPR = GFP/N, "
        "GFNR = GFN/P`` (unguarded); ``PPV = TP/(TP+FP), NPV = TN/(TN+FN), FDR = FP/(FP+TP), "
        "FOR = FN/(FN+TN), ACC = (TP+TN)/(P+N)`` (guarded).",
        returns="dict of str to numpy.float64\n    Keys in aif360's order ``TPR, TNR, FPR, FNR, GTPR, GTNR, GFPR, "
        "GFNR, PPV, NPV, FDR, FOR, ACC``. Rates are fractions in [0, 1]. The first eight are ``nan`` "
        "on a zero denominator (NumPy ``RuntimeWarning``); the last five are ``0.0`` (silent guard, "
        "as aif360).",
        example=">>> pm = cm.performance_measures(privileged=False)\n>>> list(pm)[:4], float(pm['PPV'])\n"
        "(['TPR', 'TNR', 'FPR', 'FNR'], 0.3333333333333333)",
    )
    def performance_measures(self, privileged: bool | None = None) -> dict[str, np.float64]:
        return {k: getattr(self, name)(privileged=privileged) for k, name in _PERF.items()}

    # -- rates --------------------------------------------------------------------------------

    @_doc(
        "True positive rate (recall, sensitivity) of the selected rows (weighted).",
        formula="``TPR = TP / P``, a fraction in [0, 1].",
        returns="numpy.float64\n    ``nan`` when ``P = 0`` (no guard, NumPy ``RuntimeWarning``).",
        example=">>> print(cm.true_positive_rate(privileged=False))\n0.5",
    )
    def true_positive_rate(self, privileged: bool | None = None) -> np.float64:
        return self._metric("true_positive_rate", privileged)

    @_doc(
        "False positive rate of the selected rows (weighted).",
        formula="``FPR = FP / N``, a fraction in [0, 1].",
        returns="numpy.float64\n    ``nan`` when ``N = 0`` (no guard).",
        example=">>> print(cm.false_positive_rate(privileged=False))\n1.0",
    )
    def false_positive_rate(self, privileged: bool | None = None) -> np.float64:
        return self._metric("false_positive_rate", privileged)

    @_doc(
        "False negative rate of the selected rows (weighted).",
        formula="``FNR = FN / P``, a fraction in [0, 1].",
        returns="numpy.float64\n    ``nan`` when ``P = 0`` (no guard).",
        example=">>> print(cm.false_negative_rate(privileged=False))\n0.5",
    )
    def false_negative_rate(self, privileged: bool | None = None) -> np.float64:
        return self._metric("false_negative_rate", privileged)

    @_doc(
        "True negative rate (specificity) of the selected rows (weighted).",
        formula="``TNR = TN / N``, a fraction in [0, 1].",
        returns="numpy.float64\n    ``nan`` when ``N = 0`` (no guard).",
        example=">>> print(cm.true_negative_rate(privileged=True))\n0.5",
    )
    def true_negative_rate(self, privileged: bool | None = None) -> np.float64:
        return self._metric("true_negative_rate", privileged)

    @_doc(
        "Generalized (score-based) true positive rate (weighted).",
        formula="``GTPR = GTP / P``, in [0, 1].",
        returns="numpy.float64\n    ``nan`` when ``P = 0`` (no guard).",
        example=">>> print(cm.generalized_true_positive_rate())\n0.75",
    )
    def generalized_true_positive_rate(self, privileged: bool | None = None) -> np.float64:
        return self._metric("generalized_true_positive_rate", privileged)

    @_doc(
        "Generalized (score-based) false positive rate (weighted).",
        formula="``GFPR = GFP / N``, in [0, 1].",
        returns="numpy.float64\n    ``nan`` when ``N = 0`` (no guard).",
        example=">>> print(cm.generalized_false_positive_rate())\n0.75",
    )
    def generalized_false_positive_rate(self, privileged: bool | None = None) -> np.float64:
        return self._metric("generalized_false_positive_rate", privileged)

    @_doc(
        "Generalized (score-based) false negative rate (weighted).",
        formula="``GFNR = GFN / P``, in [0, 1].",
        returns="numpy.float64\n    ``nan`` when ``P = 0`` (no guard).",
        example=">>> print(cm.generalized_false_negative_rate())\n0.25",
    )
    def generalized_false_negative_rate(self, privileged: bool | None = None) -> np.float64:
        return self._metric("generalized_false_negative_rate", privileged)

    @_doc(
        "Generalized (score-based) true negative rate (weighted).",
        formula="``GTNR = GTN / N``, in [0, 1].",
        returns="numpy.float64\n    ``nan`` when ``N = 0`` (no guard).",
        example=">>> print(cm.generalized_true_negative_rate())\n0.25",
    )
    def generalized_true_negative_rate(self, privileged: bool | None = None) -> np.float64:
        return self._metric("generalized_true_negative_rate", privileged)

    @_doc(
        "Positive predictive value (precision) of the selected rows (weighted).",
        formula="``PPV = TP / (TP + FP)`` if ``TP + FP > 0`` else ``0.0``, in [0, 1].",
        returns="numpy.float64\n    ``0.0`` when nothing is predicted positive (aif360's guard, not ``nan``).",
        example=">>> print(cm.positive_predictive_value(privileged=True))\n0.6666666666666666",
    )
    def positive_predictive_value(self, privileged: bool | None = None) -> np.float64:
        return self._guarded("positive_predictive_value", privileged)

    @_doc(
        "False discovery rate of the selected rows (weighted).",
        formula="``FDR = FP / (FP + TP)`` if ``FP + TP > 0`` else ``0.0``, in [0, 1].",
        returns="numpy.float64\n    ``0.0`` when nothing is predicted positive (so PPV + FDR = 0 then).",
        example=">>> print(cm.false_discovery_rate(privileged=False))\n0.6666666666666666",
    )
    def false_discovery_rate(self, privileged: bool | None = None) -> np.float64:
        return self._guarded("false_discovery_rate", privileged)

    @_doc(
        "False omission rate of the selected rows (weighted).",
        formula="``FOR = FN / (FN + TN)`` if ``FN + TN > 0`` else ``0.0``, in [0, 1].",
        returns="numpy.float64\n    ``0.0`` when nothing is predicted negative.",
        example=">>> print(cm.false_omission_rate(privileged=False))\n1.0",
    )
    def false_omission_rate(self, privileged: bool | None = None) -> np.float64:
        return self._guarded("false_omission_rate", privileged)

    @_doc(
        "Negative predictive value of the selected rows (weighted).",
        formula="``NPV = TN / (TN + FN)`` if ``TN + FN > 0`` else ``0.0``, in [0, 1].",
        returns="numpy.float64\n    ``0.0`` when nothing is predicted negative.",
        example=">>> print(cm.negative_predictive_value(privileged=True))\n1.0",
    )
    def negative_predictive_value(self, privileged: bool | None = None) -> np.float64:
        return self._guarded("negative_predictive_value", privileged)

    @_doc(
        "Accuracy of the selected rows (weighted).",
        formula="``ACC = (TP + TN) / (P + N)`` if ``P + N > 0`` else ``0.0``, in [0, 1].",
        returns="numpy.float64\n    ``0.0`` for an empty group (aif360's guard).",
        example=">>> print(cm.accuracy(privileged=True))\n0.75",
    )
    def accuracy(self, privileged: bool | None = None) -> np.float64:
        return self._guarded("accuracy", privileged)

    @_doc(
        "Error rate of the selected rows (weighted).",
        formula="``ERR = 1 − accuracy`` (computed exactly so, as aif360), in [0, 1].",
        returns="numpy.float64\n    **1.0 for an empty group** (accuracy is guarded to 0.0).",
        example=">>> print(cm.error_rate(privileged=False))\n0.75",
    )
    def error_rate(self, privileged: bool | None = None) -> np.float64:
        return 1.0 - self.accuracy(privileged=privileged)

    # -- group comparisons --------------------------------------------------------------------

    @_doc(
        "Difference in true positive rates (equal opportunity difference).",
        formula="``TPR(unprivileged) − TPR(privileged)``; 0 is parity.",
        params=None,
        returns="numpy.float64\n    ``nan`` if either TPR is ``nan`` (a group without positives).",
        raises=_CMP_RAISES,
        example=">>> print(cm.true_positive_rate_difference())\n-0.5",
    )
    def true_positive_rate_difference(self) -> np.float64:
        return self.difference(self.true_positive_rate)

    @_doc(
        "Difference in false positive rates.",
        formula="``FPR(unprivileged) − FPR(privileged)``.",
        params=None,
        returns="numpy.float64\n    ``nan`` if either FPR is ``nan``.",
        raises=_CMP_RAISES,
        example=">>> print(cm.false_positive_rate_difference())\n0.5",
    )
    def false_positive_rate_difference(self) -> np.float64:
        return self.difference(self.false_positive_rate)

    @_doc(
        "Difference in false negative rates.",
        formula="``FNR(unprivileged) − FNR(privileged)``.",
        params=None,
        returns="numpy.float64\n    ``nan`` if either FNR is ``nan``.",
        raises=_CMP_RAISES,
        example=">>> print(cm.false_negative_rate_difference())\n0.5",
    )
    def false_negative_rate_difference(self) -> np.float64:
        return self.difference(self.false_negative_rate)

    @_doc(
        "Difference in false omission rates.",
        formula="``FOR(unprivileged) − FOR(privileged)`` (guarded FOR: 0.0 without predicted negatives).",
        params=None,
        returns="numpy.float64",
        raises=_CMP_RAISES,
        example=">>> print(cm.false_omission_rate_difference())\n1.0",
    )
    def false_omission_rate_difference(self) -> np.float64:
        return self.difference(self.false_omission_rate)

    @_doc(
        "Difference in false discovery rates.",
        formula="``FDR(unprivileged) − FDR(privileged)`` (guarded FDR: 0.0 without predicted positives).",
        params=None,
        returns="numpy.float64",
        raises=_CMP_RAISES,
        example=">>> print(round(cm.false_discovery_rate_difference(), 6))\n0.333333",
    )
    def false_discovery_rate_difference(self) -> np.float64:
        return self.difference(self.false_discovery_rate)

    @_doc(
        "Ratio of false positive rates.",
        formula="``FPR(unprivileged) / FPR(privileged)``.",
        params=None,
        returns="numpy.float64\n    ``inf`` if the privileged FPR is 0 (and the other is not), ``nan`` for 0/0.",
        raises=_CMP_RAISES,
        example=">>> print(cm.false_positive_rate_ratio())\n2.0",
    )
    def false_positive_rate_ratio(self) -> np.float64:
        return self.ratio(self.false_positive_rate)

    @_doc(
        "Ratio of false negative rates.",
        formula="``FNR(unprivileged) / FNR(privileged)``.",
        params=None,
        returns="numpy.float64\n    ``inf`` if the privileged FNR is 0 (and the other is not), ``nan`` for 0/0.",
        raises=_CMP_RAISES,
        example=">>> print(cm.false_negative_rate_ratio())\ninf",
    )
    def false_negative_rate_ratio(self) -> np.float64:
        return self.ratio(self.false_negative_rate)

    @_doc(
        "Ratio of false omission rates.",
        formula="``FOR(unprivileged) / FOR(privileged)`` (guarded FORs).",
        params=None,
        returns="numpy.float64\n    ``inf`` / ``nan`` on a zero privileged FOR.",
        raises=_CMP_RAISES,
        example=">>> print(cm.false_omission_rate_ratio())\ninf",
    )
    def false_omission_rate_ratio(self) -> np.float64:
        return self.ratio(self.false_omission_rate)

    @_doc(
        "Ratio of false discovery rates.",
        formula="``FDR(unprivileged) / FDR(privileged)`` (guarded FDRs).",
        params=None,
        returns="numpy.float64\n    ``inf`` / ``nan`` on a zero privileged FDR.",
        raises=_CMP_RAISES,
        example=">>> print(cm.false_discovery_rate_ratio())\n2.0",
    )
    def false_discovery_rate_ratio(self) -> np.float64:
        return self.ratio(self.false_discovery_rate)

    @_doc(
        "Average odds difference.",
        formula="``0.5 · (ΔFPR + ΔTPR)`` with ``Δ = unprivileged − privileged``.",
        params=None,
        returns="numpy.float64\n    ``nan`` if any of the four rates is ``nan``.",
        raises=_CMP_RAISES,
        example=">>> print(cm.average_odds_difference())\n0.0",
    )
    def average_odds_difference(self) -> np.float64:
        return 0.5 * (self.difference(self.false_positive_rate) + self.difference(self.true_positive_rate))

    @_doc(
        "Average absolute odds difference.",
        formula="``0.5 · (|ΔFPR| + |ΔTPR|)``.",
        params=None,
        returns="numpy.float64\n    ``nan`` if any of the four rates is ``nan``.",
        raises=_CMP_RAISES,
        example=">>> print(cm.average_abs_odds_difference())\n0.5",
    )
    def average_abs_odds_difference(self) -> np.float64:
        return 0.5 * (np.abs(self.difference(self.false_positive_rate)) + np.abs(self.difference(self.true_positive_rate)))

    @_doc(
        "Average predictive value difference.",
        formula="``0.5 · (ΔPPV + ΔFOR)``: aif360 averages PPV and the false **omission** rate (not NPV), "
        "so this is ``0.5 · (ΔPPV − ΔNPV)`` when both are defined; guarded zeros feed in.",
        params=None,
        returns="numpy.float64",
        raises=_CMP_RAISES,
        example=">>> print(round(cm.average_predictive_value_difference(), 6))\n0.333333",
    )
    def average_predictive_value_difference(self) -> np.float64:
        return 0.5 * (self.difference(self.positive_predictive_value) + self.difference(self.false_omission_rate))

    @_doc(
        "Equalized odds difference (aif360's): the larger absolute rate gap.",
        formula="``max(|ΔFPR|, |ΔTPR|)`` with Python's builtin ``max``.",
        params=None,
        returns="numpy.float64\n    Builtin-``max`` NaN order, as aif360: ``nan`` when ``|ΔFPR|`` is ``nan``, "
        "but ``|ΔFPR|`` when only ``|ΔTPR|`` is ``nan``.",
        raises=_CMP_RAISES,
        example=">>> print(cm.equalized_odds_difference())\n0.5",
    )
    def equalized_odds_difference(self) -> np.float64:
        return max(np.abs(self.difference(self.false_positive_rate)), np.abs(self.difference(self.true_positive_rate)))

    @_doc(
        "Generalized equalized odds difference: the larger absolute generalized-rate gap.",
        formula="``max(|ΔGFPR|, |ΔGTPR|)`` with Python's builtin ``max``.",
        params=None,
        returns="numpy.float64\n    Builtin-``max`` NaN order: ``nan`` when ``|ΔGFPR|`` is ``nan``, else a ``nan`` "
        "``|ΔGTPR|`` is ignored.",
        raises=_CMP_RAISES,
        example=">>> print(cm.generalized_equalized_odds_difference())\n0.5",
    )
    def generalized_equalized_odds_difference(self) -> np.float64:
        return max(
            np.abs(self.difference(self.generalized_false_positive_rate)),
            np.abs(self.difference(self.generalized_true_positive_rate)),
        )

    @_doc(
        "Difference in error rates.",
        formula="``ERR(unprivileged) − ERR(privileged)`` with ``ERR = 1 − ACC``.",
        params=None,
        returns="numpy.float64\n    An empty group has ERR = 1.0.",
        raises=_CMP_RAISES,
        example=">>> print(cm.error_rate_difference())\n0.5",
    )
    def error_rate_difference(self) -> np.float64:
        return self.difference(self.error_rate)

    @_doc(
        "Ratio of error rates.",
        formula="``ERR(unprivileged) / ERR(privileged)``.",
        params=None,
        returns="numpy.float64\n    ``inf`` when the privileged group makes no error (or, through the guard, "
        "is perfect), ``nan`` for 0/0.",
        raises=_CMP_RAISES,
        example=">>> print(cm.error_rate_ratio())\n3.0",
    )
    def error_rate_ratio(self) -> np.float64:
        return self.ratio(self.error_rate)

    @_doc(
        "Disparate impact of the predictions: ratio of selection rates.",
        formula="``selection_rate(unprivileged) / selection_rate(privileged)``; 1 is parity, < 1 "
        "disadvantages the unprivileged group.",
        params=None,
        returns="numpy.float64\n    ``inf`` when the privileged selection rate is 0, ``nan`` for 0/0.",
        raises=_CMP_RAISES,
        notes="Overrides the label-based version of BinaryLabelDatasetMetric (predictions here).",
        example=">>> print(cm.disparate_impact())\n1.0",
    )
    def disparate_impact(self) -> np.float64:
        return self.ratio(self.selection_rate)

    @_doc(
        "Statistical parity difference of the predictions: difference of selection rates.",
        formula="``selection_rate(unprivileged) − selection_rate(privileged)``, in [−1, 1].",
        params=None,
        returns="numpy.float64\n    ``nan`` if either selection rate is ``nan``.",
        raises=_CMP_RAISES,
        notes="Overrides the label-based version (predictions here); ``mean_difference`` follows.",
        example=">>> print(cm.statistical_parity_difference())\n0.0",
    )
    def statistical_parity_difference(self) -> np.float64:
        return self.difference(self.selection_rate)

    # -- entropy indices ------------------------------------------------------------------------

    def _ge(self, benefits: pl.DataFrame, alpha: float) -> np.float64:
        v = entropy.generalized_entropy_index(benefits, alpha)["value"]
        x = v.item() if v.len() else None
        return _F(np.nan if x is None else x)

    @_doc(
        "Generalized entropy index of the benefits ``b = 1 + ŷ − y`` of all individuals.",
        formula="``b_i ∈ {0 (FN), 1 (correct), 2 (FP)}``, ``μ = mean(b)``: ``GE(α) = mean((b/μ)^α − 1) / "
        "(α(α − 1))``; ``α = 1``: ``mean(ln((b/μ)^b) / μ)``; ``α = 0``: ``−mean(ln(b/μ) / μ)``. Unitless, ≥ 0.",
        params="alpha : float, default 2\n    The index's parameter (2: half the squared coefficient of "
        "variation; 1: Theil).",
        returns="numpy.float64\n    ``inf`` for α = 0 (or α < 0) whenever a false negative exists; ``nan`` if "
        "every row is a false negative (μ = 0).",
        raises="InvalidInputError\n    Invalid data (first call).",
        notes="**Unweighted and on hard labels** (scores and weights ignored), over all rows, ignoring the "
        "groups, as aif360. The α = 0 form carries aif360's extra ``1/μ`` (not the paper's formula). "
        "Computed from the cell table's counts of b = 0, 1, 2 (:func:`polfair.core.entropy.generalized_entropy_index`); "
        "equal to aif360 to ~1e-15 relative. Speicher et al. (2018), 'A unified approach to quantifying "
        "algorithmic unfairness', KDD.",
        example=">>> print(round(cm.generalized_entropy_index(), 6))\n0.14",
    )
    def generalized_entropy_index(self, alpha: float = 2) -> np.float64:
        self.cells  # noqa: B018
        return self._ge(entropy.benefit_of_individuals(self._cells), alpha)  # type: ignore[arg-type]

    @_doc(
        "Theil index of the benefits of all individuals: ``generalized_entropy_index(alpha=1)``.",
        formula="``mean((b/μ) ln(b/μ))`` computed as aif360's ``mean(ln((b/μ)^b) / μ)``; b = 0 terms are 0.",
        params=None,
        returns="numpy.float64\n    ≥ 0; ``nan`` if every row is a false negative.",
        raises="InvalidInputError\n    Invalid data (first call).",
        notes="Unweighted, hard labels, all rows.",
        example=">>> print(round(cm.theil_index(), 6))\n0.192745",
    )
    def theil_index(self) -> np.float64:
        return self.generalized_entropy_index(alpha=1)

    @_doc(
        "Coefficient of variation of the benefits of all individuals.",
        formula="``sqrt(2 · generalized_entropy_index(alpha=2))`` (aif360 ≥ 0.4.0; before 2022 it was "
        "``2·sqrt(GE(2))``).",
        params=None,
        returns="numpy.float64\n    ≥ 0; ``nan`` if every row is a false negative.",
        raises="InvalidInputError\n    Invalid data (first call).",
        notes="Unweighted, hard labels, all rows.",
        example=">>> print(round(cm.coefficient_of_variation(), 6))\n0.52915",
    )
    def coefficient_of_variation(self) -> np.float64:
        return np.sqrt(2 * self.generalized_entropy_index(alpha=2))

    def _between(self, alpha: float) -> np.float64:
        groups = [self._to_condition(False), self._to_condition(True)]
        self.cells  # noqa: B018
        arr = self._arrays
        nv = arr["tp_n"] + arr["fp_n"] + arr["tn_n"] + arr["fn_n"]
        bsum = arr["tp_n"] + arr["tn_n"] + 2 * arr["fp_n"]
        bs, cnts = [], []
        covered = np.zeros(nv.shape[0], dtype=bool)
        for tag in groups:
            m = self._mask(tag) & ~covered  # groups are disjoint (checked); a later group wins in aif360
            covered |= m
            k = int(nv[self._mask(tag)].sum())
            if k == 0:
                continue  # aif360 skips groups without rows
            bs.append(float(bsum[self._mask(tag)].sum()) / float(k))
            cnts.append(float(k))
        rest = float(nv[~covered].sum())
        bs.append(0.0)  # aif360 quirk: rows in neither group keep b = 0
        cnts.append(rest)
        return self._ge(pl.DataFrame({"b": bs, "cnt": cnts}), alpha)

    @_doc(
        "Between-group generalized entropy index: each row's benefit replaced by its group's mean.",
        formula="``b_i`` = mean of ``1 + ŷ − y`` over the row's group (unprivileged or privileged), **0 for "
        "rows in neither group** (aif360 quirk); then GE(α) of that length-n vector, as "
        ":meth:`generalized_entropy_index`.",
        params="alpha : float, default 2\n    The index's parameter.",
        returns="numpy.float64\n    ≥ 0; ``inf`` for α = 0 when some row is in neither group or a group mean is 0.",
        raises="AttributeError\n    ``privileged_groups`` or ``unprivileged_groups`` was not given.\n"
        "InvalidInputError\n    Invalid data (first call).",
        notes="Unweighted, hard labels. Rows outside both groups are kept with b = 0 (which inflates the "
        "index when the groups do not cover the data); empty groups are skipped. Speicher et al. (2018).",
        example=">>> print(round(cm.between_group_generalized_entropy_index(), 6))\n0.0",
    )
    def between_group_generalized_entropy_index(self, alpha: float = 2) -> np.float64:
        return self._between(alpha)

    @_doc(
        "Between-group Theil index: ``between_group_generalized_entropy_index(alpha=1)``.",
        formula="GE(1) of the group-mean benefit vector (rows in neither group: b = 0).",
        params=None,
        returns="numpy.float64",
        raises="AttributeError\n    A group definition was not given.\nInvalidInputError\n    Invalid data.",
        notes="Unweighted, hard labels.",
        example=">>> print(round(cm.between_group_theil_index(), 6))\n0.0",
    )
    def between_group_theil_index(self) -> np.float64:
        return self.between_group_generalized_entropy_index(alpha=1)

    @_doc(
        "Between-group coefficient of variation: ``sqrt(2 · between_group_generalized_entropy_index(2))``.",
        formula="``sqrt(2 · GE(2))`` of the group-mean benefit vector.",
        params=None,
        returns="numpy.float64",
        raises="AttributeError\n    A group definition was not given.\nInvalidInputError\n    Invalid data.",
        notes="Unweighted, hard labels.",
        example=">>> print(round(cm.between_group_coefficient_of_variation(), 6))\n0.0",
    )
    def between_group_coefficient_of_variation(self) -> np.float64:
        return np.sqrt(2 * self.between_group_generalized_entropy_index(alpha=2))

    @_doc(
        "Between-all-groups generalized entropy index: benefits averaged within every intersection.",
        formula="``b_i`` = mean of ``1 + ŷ − y`` over the row's cell of the cross product of ALL protected "
        "attributes; then GE(α) as :meth:`generalized_entropy_index`.",
        params="alpha : float, default 2\n    The index's parameter.",
        returns="numpy.float64\n    ≥ 0.",
        raises="InvalidInputError\n    Invalid data (first call).",
        notes="Unweighted, hard labels; ignores the metric's privileged/unprivileged groups (as aif360). "
        "Every row is in exactly one cell, so no b = 0 rows are added.",
        example=">>> print(round(cm.between_all_groups_generalized_entropy_index(), 6))\n0.0",
    )
    def between_all_groups_generalized_entropy_index(self, alpha: float = 2) -> np.float64:
        self.cells  # noqa: B018
        return self._ge(entropy.benefit_of_groups(self._cells), alpha)  # type: ignore[arg-type]

    @_doc(
        "Between-all-groups Theil index: ``between_all_groups_generalized_entropy_index(alpha=1)``.",
        formula="GE(1) of the cell-mean benefit vector.",
        params=None,
        returns="numpy.float64",
        raises="InvalidInputError\n    Invalid data (first call).",
        notes="Unweighted, hard labels.",
        example=">>> print(round(cm.between_all_groups_theil_index(), 6))\n0.0",
    )
    def between_all_groups_theil_index(self) -> np.float64:
        return self.between_all_groups_generalized_entropy_index(alpha=1)

    @_doc(
        "Between-all-groups coefficient of variation.",
        formula="``sqrt(2 · between_all_groups_generalized_entropy_index(alpha=2))``.",
        params=None,
        returns="numpy.float64",
        raises="InvalidInputError\n    Invalid data (first call).",
        notes="Unweighted, hard labels.",
        example=">>> print(round(cm.between_all_groups_coefficient_of_variation(), 6))\n0.0",
    )
    def between_all_groups_coefficient_of_variation(self) -> np.float64:
        return np.sqrt(2 * self.between_all_groups_generalized_entropy_index(alpha=2))

    @_doc(
        "Bias amplification: differential fairness of the predictions minus that of the true labels.",
        formula="``EDF(ŷ) − EDF(y)``, each the smoothed empirical differential fairness over all "
        "intersections of the protected attributes (see "
        ":meth:`~BinaryLabelDatasetMetric.smoothed_empirical_differential_fairness`). Positive: the "
        "classifier amplified the disparity (in nats).",
        params="concentration : float, default 1.0\n    Dirichlet smoothing ≥ 0.",
        returns="numpy.float64\n    ``inf − inf = nan`` at concentration 0 with pure cells.",
        raises="ValueError\n    ``concentration < 0``; a single observed intersection.\nInvalidInputError\n"
        "    Invalid data (first call).",
        notes="Weighted. Foulds et al. (2020), 'An intersectional definition of fairness', ICDE.",
        example=">>> print(round(cm.differential_fairness_bias_amplification(), 6))\n0.0",
    )
    def differential_fairness_bias_amplification(self, concentration: float = 1.0) -> np.float64:
        edf_clf = self._edf(self._smoothed_base_rates(METRICS["num_pred_positives"].numerator, concentration))
        edf_data = self.smoothed_empirical_differential_fairness(concentration)
        return edf_clf - edf_data

    # -- aliases ---------------------------------------------------------------------------------

    @_doc(
        "Alias of :meth:`true_positive_rate_difference`.",
        formula="``TPR(unprivileged) − TPR(privileged)``.",
        params=None,
        returns="numpy.float64",
        raises=_CMP_RAISES,
        example=">>> print(cm.equal_opportunity_difference())\n-0.5",
    )
    def equal_opportunity_difference(self) -> np.float64:
        return self.true_positive_rate_difference()

    @_doc(
        "Alias of :meth:`num_true_positives` (aif360's ``power`` is the TP **count**, not a rate).",
        formula="``TP = Σ w [y = fav, ŷ = fav]``.",
        returns="numpy.float64",
        example=">>> print(cm.power(privileged=True))\n2.0",
    )
    def power(self, privileged: bool | None = None) -> np.float64:
        return self.num_true_positives(privileged=privileged)

    @_doc(
        "Alias of :meth:`positive_predictive_value`.",
        formula="``TP / (TP + FP)``, 0.0 without predicted positives.",
        returns="numpy.float64",
        example=">>> print(cm.precision(privileged=False))\n0.3333333333333333",
    )
    def precision(self, privileged: bool | None = None) -> np.float64:
        return self.positive_predictive_value(privileged=privileged)

    @_doc(
        "Alias of :meth:`true_positive_rate`.",
        formula="``TP / P``, ``nan`` when P = 0.",
        returns="numpy.float64",
        example=">>> print(cm.recall(privileged=True))\n1.0",
    )
    def recall(self, privileged: bool | None = None) -> np.float64:
        return self.true_positive_rate(privileged=privileged)

    @_doc(
        "Alias of :meth:`true_positive_rate`.",
        formula="``TP / P``, ``nan`` when P = 0.",
        returns="numpy.float64",
        example=">>> print(cm.sensitivity())\n0.75",
    )
    def sensitivity(self, privileged: bool | None = None) -> np.float64:
        return self.true_positive_rate(privileged=privileged)

    @_doc(
        "Alias of :meth:`true_negative_rate`.",
        formula="``TN / N``, ``nan`` when N = 0.",
        returns="numpy.float64",
        example=">>> print(cm.specificity())\n0.25",
    )
    def specificity(self, privileged: bool | None = None) -> np.float64:
        return self.true_negative_rate(privileged=privileged)


_CONFUSION = {"TP": "true_positives", "FP": "false_positives", "TN": "true_negatives", "FN": "false_negatives"}
_GCONFUSION = {"GTP": "true_positives", "GFP": "false_positives", "GTN": "true_negatives", "GFN": "false_negatives"}
_PERF = {
    "TPR": "true_positive_rate", "TNR": "true_negative_rate", "FPR": "false_positive_rate",
    "FNR": "false_negative_rate", "GTPR": "generalized_true_positive_rate",
    "GTNR": "generalized_true_negative_rate", "GFPR": "generalized_false_positive_rate",
    "GFNR": "generalized_false_negative_rate", "PPV": "positive_predictive_value",
    "NPV": "negative_predictive_value", "FDR": "false_discovery_rate", "FOR": "false_omission_rate",
    "ACC": "accuracy",
}  # fmt: skip
