"""The adapter under the aif360 classes: the cell table read with aif360's conventions.

:class:`CellTableMetric` runs the one pass (:func:`polfair.core.passes.collect.collect_cells`) on first use,
caches the cell table, turns aif360 group conditions (a list of dicts: OR across dicts, AND within
one) into boolean masks over its rows, and sums the counts under a mask. The metric methods of
:class:`~polfair.compat.aif360.BinaryLabelDatasetMetric` and
:class:`~polfair.compat.aif360.ClassificationMetric` are arithmetic on those sums, with aif360's
zero-division rules (:meth:`CellTableMetric._metric` unguarded, :meth:`CellTableMetric._guarded`
0.0 on a zero denominator). It also collects the few row-level columns the second pass needs.

The NumPy EDF here (:meth:`CellTableMetric._edf`) deliberately duplicates the Polars one of
:mod:`polfair.core.entropy`: it reproduces aif360's NaN order under Python's builtin ``max``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import polars as pl

from polfair.core._typing import IntoExpr
from polfair.core.metrics import METRICS, Counts
from polfair.core.passes.collect import collect_cells
from polfair.core.passes.spec import Spec, build_spec
from polfair.core.values import coerce_values, match_values

__all__ = ["CellTableMetric"]

_F = np.float64
_COUNT_COLS = ("w", "tp", "fp", "tn", "fn", "gtp", "gfp", "gtn", "gfn")
_N_COLS = ("tp_n", "fp_n", "tn_n", "fn_n")


def _is_number(v: Any) -> bool:
    return isinstance(v, (bool, int, float, np.number))


class CellTableMetric:
    """Base of the aif360 classes: the cached cell table, group masks, sums and aif360's guards.

    Not constructed directly: the subclasses' ``__init__`` call :meth:`_setup`. The only public
    member is :attr:`cells`; the private methods are the subclasses' toolkit.
    """

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
        # aif360 reads scores as the favorable label's probability: the facade says so (the polarity
        # rule, docs/contract.md#polarity), so no favorable label makes its scores ambiguous
        fav_one = favorable_label[0] if isinstance(favorable_label, (list, tuple)) else favorable_label
        self._spec: Spec = build_spec(
            data, y_true=y_true, y_pred=y_pred, y_score=y_score, protected=protected,
            favorable=favorable_label, unfavorable=unfavorable_label, weight=weight,
            allow_many_groups=True,  # aif360: every distinct value of a protected column is a group
            score_label=fav_one if y_score is not None else None,
        )  # fmt: skip
        plist = [protected] if isinstance(protected, (str, pl.Expr)) else list(protected)
        self._protected_exprs = [pl.col(e) if isinstance(e, str) else e for e in plist]
        self.favorable_label = favorable_label
        self.unfavorable_label = unfavorable_label
        self.protected_attribute_names = list(self._spec.keys)
        self.privileged_groups = self._check_groups(privileged_groups, "privileged_groups")
        self.unprivileged_groups = self._check_groups(unprivileged_groups, "unprivileged_groups")
        self._features = None if features is None else list(features)
        bad_features = isinstance(features, str) or not all(isinstance(f, str) for f in self._features or [])
        if self._features is not None and bad_features:
            msg = f"features must be a list of column names, got {features!r}"
            raise TypeError(msg)
        self._cells: pl.DataFrame | None = None
        self._masks: dict[Any, np.ndarray] = {}
        self._sums: dict[Any, dict[str, Any]] = {}
        self._rows: dict[str, Any] | None = None

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
            Schema of :mod:`polfair.core.passes.counts`: ``*protected, n, n_missing, n_invalid, w, tp, fp, tn,
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
            cells = collect_cells(self._spec, on_missing="raise", allow_many_groups=True)
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
        """``column == val`` in the column's dtype; ``None`` matches the null rows.

        Numbers compare as float64, as aif360 does (``1``, ``1.0`` and ``True`` are one value); a
        value the column cannot hold (``"a"`` in a numeric column, ``1`` in a string column) raises.
        """
        col = pl.col(name)
        if val is None:
            return col.is_null()
        if (dtype.is_numeric() or dtype == pl.Boolean) and _is_number(val):
            if isinstance(val, float) and np.isnan(val):
                return col.is_null()  # the input contract: NaN in a Float key is the null group
            return col.cast(pl.Float64) == float(val)
        if isinstance(dtype, (pl.String, pl.Categorical)) and isinstance(val, str):
            return col.cast(pl.String) == val
        return match_values(col, dtype, coerce_values(val, dtype, option="privileged_groups", column=name))

    def _mask(self, tag: Any) -> np.ndarray:
        """Boolean vector over the cell table for ``tag`` in {None, "priv", "unpriv"}."""
        if tag not in self._masks:
            cells = self.cells if self._cells is None else self._cells
            if tag is None:
                m = np.ones(cells.height, dtype=bool)
            else:
                cond = self.privileged_groups if tag == "priv" else self.unprivileged_groups
                selected = cells.with_columns(self._condition_expr(cond or []).alias("__pf_m"))["__pf_m"]
                m = selected.to_numpy().astype(bool)
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
        num = _F(m.numerator(c))  # type: ignore[arg-type]  # Counts bound to NumPy sums (typed for Expr)
        return num if m.denominator is None else num / _F(m.denominator(c))  # type: ignore[arg-type]

    def _guarded(self, name: str, privileged: Any) -> np.float64:
        """A rate guarded as aif360 guards PPV/NPV/FDR/FOR/ACC: ``0.0`` when ``den <= 0``."""
        m = METRICS[name]
        c = self._counts(privileged)
        den = _F(m.denominator(c))  # type: ignore[arg-type,misc]  # NumPy-bound Counts; rates have a denominator
        return _F(m.numerator(c)) / den if den > 0.0 else _F(0.0)  # type: ignore[arg-type]

    def _cell_arrays(self) -> Counts:
        self.cells  # noqa: B018
        return Counts(self._arrays.__getitem__)  # type: ignore[arg-type]  # Counts over NumPy arrays (duck-typed)

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

    def _raw_rows(self) -> dict[str, Any]:
        """Second pass (documented): features, raw labels and protected attributes, collected once."""
        if self._rows is None:
            spec = self._spec
            source = spec.source
            assert source is not None  # the facade's specs are Polars ones (build_spec)
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
                fav_label = self.favorable_label
                fav = list(fav_label) if isinstance(fav_label, (list, tuple)) else [fav_label]
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
