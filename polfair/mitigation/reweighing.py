"""Reweighing (Kamiran & Calders 2012), exact from the cell table, as a Polars expression.

Kamiran, F. and Calders, T., "Data preprocessing techniques for classification without
discrimination", Knowledge and Information Systems 33 (2012) 1–33, § 4.2 (Reweighing); aif360's
``Reweighing`` (0.6.1). Each (group, label) cell gets the weight

    w(g, y) = P(g) · P(y) / P(g, y) = W_g · W_y / (W · W_gy)

(``W`` weighted totals), which makes the label statistically independent of the group under the
new weights while keeping every group's and every label's total weight. A group whose rows all
have the same label cannot be balanced: its one cell gets ``W_y / W`` (as in aif360), so its total
weight changes. The weights come from the
core's cell table (:func:`polfair.core.passes.counts.cell_table`: one pass) and join back to rows as a
``when/then`` expression, so an ETL job writes them next to the rows without a second pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from polfair.core._args import output_name
from polfair.core._typing import IntoExpr
from polfair.core.contract.inputs import is_foreign
from polfair.core.passes.collect import collect_cells
from polfair.core.passes.counts import WEIGHT_EXP, check_counted
from polfair.core.passes.spec import build_spec, check_key_names
from polfair.core.report.build import group_label
from polfair.exceptions import PolfairError

__all__ = ["Reweighing", "reweighing", "reweighing_from_counts"]


@dataclass(frozen=True)
class Reweighing:
    """Reweighing weights per (group, label) cell.

    Attributes
    ----------
    table
        The protected keys, ``group`` (String), ``label`` (Boolean, favorable), ``n`` (Int64 rows),
        ``observed`` (Float64 W_gy), ``expected`` (Float64 W_g W_y / W) and ``weight`` (Float64
        expected / observed, the multiplier of each row's weight).
    """

    table: pl.DataFrame
    keys: tuple[pl.Expr, ...] = field(repr=False)
    label: pl.Expr = field(repr=False)
    weight: pl.Expr | None = field(repr=False, default=None)
    weight_ok: pl.Expr | None = field(repr=False, default=None)

    def to_expr(self) -> pl.Expr:
        """The new row weight: the cell's multiplier times the row's weight (if one was given).

        The row's label, keys and weight are read by the input contract, as when fitting
        (:mod:`polfair.core.contract`): ``label`` is the compiled label state (0 unfavorable,
        1 favorable, 2 missing, 3 invalid), the keys are normalised (NaN in a Float key is the
        null group), ``weight_ok`` says the weight is usable (finite, >= 0).

        Returns
        -------
        pl.Expr
            Float64 named ``"reweighing_weight"``; null for a row whose (group, label) cell was not
            seen when fitting, with a null, NaN or invalid label, or with a null, NaN, negative or
            infinite weight (such a row has no weight to multiply).

        Examples
        --------
        >>> import polars as pl
        >>> import polfair as pf
        >>> from polfair.mitigation import reweighing
        >>> df = pf.load_compas()
        >>> rw = reweighing(df, y_true="two_year_recid", protected="race")
        >>> w = df.with_columns(rw.to_expr())
        >>> round(w["reweighing_weight"].sum(), 6) == df.height   # total weight is kept
        True
        """
        names = [output_name(k, "protected") for k in self.keys]
        out: Any = None
        for r in self.table.iter_rows(named=True):
            m = self.label == (1 if r["label"] else 0)
            for k, name in zip(self.keys, names):
                m = m & (k.is_null() if r[name] is None else (k == r[name]))
            out = pl.when(m).then(r["weight"]) if out is None else out.when(m).then(r["weight"])
        expr = pl.lit(None, pl.Float64) if out is None else out.otherwise(None).cast(pl.Float64)
        if self.weight is not None and self.weight_ok is not None:
            expr = pl.when(self.weight_ok).then(expr * self.weight)
        return expr.alias("reweighing_weight")


#: The reweighing table's own columns (after the keys): no protected key may take their names.
_TABLE_COLUMNS = ("group", "label", "n", "observed", "expected", "weight")


def reweighing_from_counts(cells: pl.DataFrame | pl.LazyFrame, *, protected: Sequence[str]) -> pl.DataFrame:
    """Reweighing table from a cell table (no ``by``): one row per (group, label) cell.

    Parameters
    ----------
    cells
        The core's cell table (:func:`polfair.confusion_counts` / ``merge_counts``), labels only
        or with predictions (only the label margins are used: positives = tp + fn, negatives =
        fp + tn).
    protected
        Its protected key columns.

    Returns
    -------
    pl.DataFrame
        As :attr:`Reweighing.table`. A (group, label) cell whose rows all have weight 0 gets the
        multiplier 0.0 (its rows' new weight is 0 whatever the multiplier; null would lose them).

    Examples
    --------
    >>> import polars as pl
    >>> import polfair as pf
    >>> from polfair.mitigation.reweighing import reweighing_from_counts
    >>> cells = pf.confusion_counts(pf.load_compas(), y_true="two_year_recid", protected="sex")
    >>> reweighing_from_counts(cells, protected=["sex"]).select("sex", "label", pl.col("weight").round(4)).rows()
    [('Female', False, 0.8402), ('Female', True, 1.2948), ('Male', False, 1.0468), ('Male', True, 0.9492)]
    """
    c = cells.collect() if isinstance(cells, pl.LazyFrame) else cells
    unit = 1.0  # a table of collect_cells(relative=True): weights in units of 2**exponent
    if WEIGHT_EXP in c.columns:
        unit = 2.0 ** int(c[WEIGHT_EXP].max() or 0)  # type: ignore[arg-type]
        c = c.drop(WEIGHT_EXP)
    keys = list(protected)
    check_key_names((), keys, also_reserved=_TABLE_COLUMNS)
    g = c.group_by(keys, maintain_order=True).agg(
        (pl.col("tp") + pl.col("fn")).sum().alias("pos"),
        (pl.col("fp") + pl.col("tn")).sum().alias("neg"),
        (pl.col("tp_n") + pl.col("fn_n")).sum().cast(pl.Int64).alias("n_pos"),
        (pl.col("fp_n") + pl.col("tn_n")).sum().cast(pl.Int64).alias("n_neg"),
    )
    W = float(g["pos"].sum()) + float(g["neg"].sum())
    check_counted(int(c["n"].sum() or 0), int(c["n_missing"].sum() or 0), what="label or weight")  # the one error
    if W <= 0:
        msg = ("reweighing: the rows with a label and a weight weigh 0 in total (no row counts, or every weight is 0 "
               "or missing): there is nothing to reweigh")  # fmt: skip
        raise PolfairError(msg)
    Wpos, Wneg = float(g["pos"].sum()), float(g["neg"].sum())
    # W_g · (W_y / W): the share first, so no product of two weights leaves Float64 (weights of 1e-200)
    long = pl.concat([
        g.select(*keys, pl.lit(True).alias("label"), pl.col("n_pos").alias("n"), pl.col("pos").alias("observed"),
                 ((pl.col("pos") + pl.col("neg")) * (Wpos / W)).alias("expected")),
        g.select(*keys, pl.lit(False).alias("label"), pl.col("n_neg").alias("n"), pl.col("neg").alias("observed"),
                 ((pl.col("pos") + pl.col("neg")) * (Wneg / W)).alias("expected")),
    ])  # fmt: skip
    return (
        long.filter(pl.col("n") > 0)
        .with_columns(
            group_label(keys).alias("group"),
            pl.when(pl.col("observed") > 0).then(pl.col("expected") / pl.col("observed")).otherwise(0.0).alias("weight"),
        )
        .with_columns(pl.col("observed", "expected") * unit)
        .select(*keys, "group", "label", "n", "observed", "expected", "weight")
        .sort([*keys, "label"], nulls_last=True)
    )


def reweighing(
    data: Any,
    *,
    y_true: IntoExpr,
    protected: IntoExpr | Sequence[IntoExpr],
    favorable: Any = 1,
    weight: IntoExpr | None = None,
) -> Reweighing:
    """Kamiran–Calders reweighing weights, exact from one pass, joinable back to rows.

    Parameters
    ----------
    data
        Training rows (polars/pandas/pyarrow frame, dict or parquet/CSV path), or a Spark / DuckDB
        frame (the pass runs in that engine, column names only; ``to_expr()`` then reads a Polars
        frame with the same columns).
    y_true
        Label column or expression; ``favorable`` its favorable value(s).
    protected
        Protected attribute(s); a group is a cell of their joint values.
    favorable
        Favorable label value(s).
    weight
        Optional existing row weights (the new weight multiplies them, as aif360 does).

    Returns
    -------
    Reweighing
        ``.table`` (one row per group and label: observed and expected weight, multiplier) and
        ``.to_expr()`` (the new row weight as a Polars expression).

    Raises
    ------
    PolfairError, ColumnNotFoundError, InvalidInputError
        As :func:`polfair.fairness_report`: the input contract (``docs/contract.md``) applies, so a
        negative or infinite weight, or a label that is not a label, is an error naming the
        column; rows with a null or NaN label or weight are left out with a
        :class:`~polfair.exceptions.MissingValuesWarning`.

    Notes
    -----
    Equal to aif360's ``Reweighing(unprivileged_groups, privileged_groups).fit_transform(ds)``
    instance weights when the two groups are the two values of one attribute (tested); with more
    groups, aif360 pools all unprivileged groups into one while this keeps every cell.

    Examples
    --------
    >>> import polfair as pf
    >>> from polfair.mitigation import reweighing
    >>> rw = reweighing(pf.load_adult(), y_true="income_gt_50k", protected="sex")
    >>> rw.table.filter(sex="Female", label=True)["weight"].round(4).item()
    2.1902
    """
    if is_foreign(data):  # Spark, DuckDB, ...: the pass runs in that engine, under the same contract
        return _foreign_reweighing(data, y_true=y_true, protected=protected, favorable=favorable, weight=weight)
    spec = build_spec(data, y_true=y_true, protected=protected, favorable=favorable, weight=weight,
                      allow_many_groups=True)  # fmt: skip
    cells = collect_cells(spec, allow_many_groups=True, relative=True)
    table = reweighing_from_counts(cells, protected=list(spec.keys))
    w = spec.compiled.get("weight")
    return Reweighing(table, spec.key_exprs, spec.compiled["y_true"].state, None if w is None else w.value,
                      None if w is None else w.state == 0)  # fmt: skip


def _foreign_reweighing(data: Any, *, y_true: Any, protected: Any, favorable: Any, weight: Any) -> Reweighing:
    """:func:`reweighing` of a Spark/DuckDB/... frame: its cell table from the engine's own pass
    (the contract's checks included), and ``to_expr()`` compiled in Polars for the same columns.
    """
    from polfair.core import contract as ct
    from polfair.core.passes.spec import label_values
    from polfair.engines.narwhals import foreign_code_table, foreign_frame

    codes, spec = foreign_code_table(data, y_true=y_true, protected=protected, favorable=favorable, weight=weight)
    cells = collect_cells(spec, codes=codes, allow_many_groups=True, relative=True)
    table = reweighing_from_counts(cells, protected=list(spec.keys))
    ff = foreign_frame(data)

    def column(name: str, role: str) -> ct.Column:
        return ct.Column(name, pl.col(name), ff.column(name, role).dtype)

    fav, _ = label_values(favorable, None)
    label = ct.label(ct.POLARS, column(y_true, "y_true"), fav, None, role="y_true")
    keys = tuple(ct.key(ct.POLARS, column(k, "protected"), role="protected").alias(k) for k in spec.keys)
    w = None if weight is None else ct.weight(ct.POLARS, column(weight, "weight"))
    return Reweighing(table, keys, label.state, None if w is None else w.value, None if w is None else w.state == 0)
