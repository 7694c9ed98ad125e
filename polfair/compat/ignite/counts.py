"""The class cell table of multiclass/multilabel classifiers (pytorch-ignite's inputs), from one pass.

Inputs (``y_true`` / ``y_pred``):

* **class labels**: two columns holding one of K classes per row (any dtype: int, string, ...);
  the classes are every value seen in either column (or ``classes=``).
* **class scores**: ``y_pred`` is a List/Array column of K scores per row and ``y_true`` the class
  index ``0 .. K-1``; the predicted class is the argmax (first maximum on ties, as ``torch.argmax``).
* **multilabel** (``multilabel=True``): both are List/Array columns of K 0/1 (or boolean) values.

The pass is one ``group_by`` over the rows (multilabel rows are exploded to one row per label
inside the same lazy query) to a small table of (cell, true class, predicted class) counts, which
is then turned into the **class cell table**: the binary cell table of :mod:`polfair.core.passes.counts`, one
*one-vs-rest* problem per class, with the key ``class`` after ``by`` and the protected keys, plus
``n_correct`` (UInt64) and ``w_correct`` (Float64), the rows whose whole prediction is right (the
predicted class, or for multilabel every label: exact match, as ignite's ``Accuracy``). With no
scores, ``gtp, gfp, gtn, gfn`` equal ``tp, fp, tn, fn``.

Definitions (ignite 0.5.4 ``ignite.metrics.fairness``):

* ``demographic_parity_difference`` = ``max_c (max_g SR_gc − min_g SR_gc)`` with ``SR_gc`` the share
  of group g's rows predicted class c (multilabel: with label c set). Per class, then the max
  over classes; not a mean. For 0/1 labels it equals the binary value.
* ``subgroup_accuracy_difference`` = ``max_g acc_g − min_g acc_g`` with ``acc_g`` the accuracy
  (multilabel: exact-match ratio) of group g.

Differences from ignite: groups are every observed value (null included) instead of a declared
list; rows may be weighted; fewer than two groups gives 0.0 (ignite raises).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from polfair.core._args import as_expr, as_list, check_columns, output_name
from polfair.core._typing import IntoExpr
from polfair.core.contract import FLAG_BAD_WEIGHT, FLAG_NULL_WEIGHT, POLARS, Column, key
from polfair.core.contract import weight as weight_rule
from polfair.core.contract.inputs import to_lazyframe
from polfair.core.passes.collect import check_not_empty
from polfair.core.passes.counts import COUNT_COLUMNS, COUNT_DTYPES
from polfair.core.passes.spec import check_key_names, check_on_missing, protected_exprs
from polfair.exceptions import InvalidInputError, MissingValuesWarning, PolfairError, user_stacklevel

__all__ = ["CLASS", "multiclass_counts"]

#: Name of the class key column of the class cell table and the multiclass report.
CLASS = "class"

_T, _P, _K, _OK, _EX, _ST, _N, _W = ("__pf_t", "__pf_p", "__pf_k", "__pf_ok", "__pf_ex", "__pf_st",
                                     "__pf_n", "__pf_w")  # fmt: skip
_W2 = "__pf_w2"  # Σw², for the *_w2 count columns of the cell table (when COUNT_COLUMNS has them)
_VALID, _MISSING, _INVALID = 0, 1, 2


def _is_list(dtype: pl.DataType) -> bool:
    return isinstance(dtype, (pl.List, pl.Array))


def _list(e: pl.Expr, dtype: pl.DataType) -> pl.Expr:
    """Array columns as lists (one code path for both)."""
    return e.arr.to_list() if isinstance(dtype, pl.Array) else e


def _common_dtype(a: pl.DataType, b: pl.DataType) -> pl.DataType:
    """The dtype both label columns are compared in; raises for labels of different kinds."""
    if a == b:
        return a
    stringy = (pl.String, pl.Categorical, pl.Enum)
    if isinstance(a, stringy) and isinstance(b, stringy):
        return pl.String()
    if (a.is_numeric() or a == pl.Boolean) and (b.is_numeric() or b == pl.Boolean):
        frames = [pl.DataFrame({"c": pl.Series([], dtype=d)}) for d in (a, b)]
        out = pl.concat(frames, how="vertical_relaxed").schema["c"]
        return pl.Int64() if out == pl.Boolean else out
    msg = f"y_true (dtype {a}) and y_pred (dtype {b}) hold classes of different types; cast one to the other's type"
    raise InvalidInputError(msg)


def _present(e: pl.Expr, dtype: pl.DataType) -> pl.Expr:
    """Not null, and not NaN in a Float column (the input contract: NaN is a missing value)."""
    return e.is_not_null() & ~e.is_nan() if dtype.is_float() else e.is_not_null()


def _state(ok: pl.Expr, present: pl.Expr) -> pl.Expr:
    return pl.when(~present).then(_MISSING).when(~ok).then(_INVALID).otherwise(_VALID).cast(pl.UInt8)


def multiclass_counts(
    data: Any,
    *,
    y_true: IntoExpr,
    y_pred: IntoExpr,
    protected: IntoExpr | Sequence[IntoExpr],
    multilabel: bool = False,
    by: IntoExpr | Sequence[IntoExpr] | None = None,
    weight: IntoExpr | None = None,
    classes: Sequence[Any] | None = None,
    on_missing: str = "warn",
) -> pl.DataFrame:
    """The class cell table: one-vs-rest confusion counts per cell and class, in one pass.

    Parameters
    ----------
    data
        ``pl.DataFrame``, ``pl.LazyFrame``, pandas DataFrame, pyarrow Table, dict of columns, or a
        parquet/CSV path.
    y_true
        Column name or expression: the true class (labels or scores input), or a List/Array of
        K 0/1 values (``multilabel=True``).
    y_pred
        Column name or expression: the predicted class, a List/Array of K class scores (argmax is
        taken), or a List/Array of K 0/1 values (``multilabel=True``).
    protected
        One or more column names or named expressions; null is its own group.
    multilabel
        ``True`` for multilabel 0/1 matrices (ignite's ``is_multilabel``).
    by
        Optional column name(s) or expressions; one independent table per ``by`` value.
    weight
        Optional column name or expression of finite, non-negative row weights (null and NaN are
        missing, as for labels: the input contract, ``docs/contract.md``).
    classes
        Optional list of the classes (labels input): classes never seen still get rows (rate 0).
        Default: every value seen in ``y_true`` or ``y_pred``; ``0 .. K-1`` for scores/multilabel.
    on_missing
        ``"warn"`` (default), ``"raise"`` or ``"ignore"``: rows with a null label, prediction or
        weight are counted in ``n_missing`` and left out of every count.

    Returns
    -------
    pl.DataFrame
        Columns ``*by, *protected, class`` then the count columns of :mod:`polfair.core.passes.counts`
        (``n, n_missing, n_invalid`` UInt64; ``w, tp, fp, tn, fn`` Float64; ``tp_n .. fn_n``
        UInt64; ``gtp .. gfn`` Float64) and ``n_correct`` (UInt64), ``w_correct`` (Float64). One row
        per observed cell and class, sorted by the keys. ``n``/``n_missing`` are the cell's rows
        (the same for every class); ``tp`` etc. are of the one-vs-rest problem of the class.

    Raises
    ------
    ColumnNotFoundError
        A named column is missing.
    InvalidInputError
        Empty input; a class index outside ``0 .. K-1`` (scores input); score or label lists of
        different lengths; multilabel values other than 0/1; negative or infinite weights; labels and
        predictions of incompatible dtypes; missing values with ``on_missing="raise"``.
    PolfairError
        Invalid options (reserved or duplicate key names, ``multilabel`` without list columns).

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": [0, 1, 2, 0], "p": [0, 1, 0, 2], "g": ["a", "a", "b", "b"]})
    >>> t = multiclass_counts(df, y_true="y", y_pred="p", protected="g")
    >>> t.select("g", "class", "n", "tp", "fp", "fn", "n_correct").head(3)
    shape: (3, 7)
    ┌─────┬───────┬─────┬─────┬─────┬─────┬───────────┐
    │ g   ┆ class ┆ n   ┆ tp  ┆ fp  ┆ fn  ┆ n_correct │
    │ --- ┆ ---   ┆ --- ┆ --- ┆ --- ┆ --- ┆ ---       │
    │ str ┆ i64   ┆ u64 ┆ f64 ┆ f64 ┆ f64 ┆ u64       │
    ╞═════╪═══════╪═════╪═════╪═════╪═════╪═══════════╡
    │ a   ┆ 0     ┆ 2   ┆ 1.0 ┆ 0.0 ┆ 0.0 ┆ 2         │
    │ a   ┆ 1     ┆ 2   ┆ 1.0 ┆ 0.0 ┆ 0.0 ┆ 2         │
    │ a   ┆ 2     ┆ 2   ┆ 0.0 ┆ 0.0 ┆ 0.0 ┆ 2         │
    └─────┴───────┴─────┴─────┴─────┴─────┴───────────┘
    """
    check_on_missing(on_missing)
    inp = _resolve_inputs(data, y_true=y_true, y_pred=y_pred, protected=protected, by=by, weight=weight)
    if multilabel:
        small, width = _multilabel_table(inp)
    elif _is_list(inp.pdt):
        small, class_values = _scores_table(inp)
    else:
        small, class_values = _labels_table(inp, classes)
    total = int(small[_N].sum() or 0)
    check_not_empty(total)
    if multilabel:
        per_row, class_values, expanded = _multilabel_classes(small, width)
    else:
        per_row, expanded = small, _one_vs_rest(small, class_values)
    _check_states(per_row, small, on_missing, total)
    return _class_cells(per_row, expanded, class_values, inp.group)


@dataclass(frozen=True)
class _Inputs:
    """A checked request: the rows, label/prediction expressions and dtypes, weight, key columns."""

    lf: pl.LazyFrame
    yt: pl.Expr
    yp: pl.Expr
    tdt: pl.DataType
    pdt: pl.DataType
    wf: pl.Expr  # Float64 weight (1.0 without weights)
    w_ok: pl.Expr  # the weight is finite and >= 0
    w_present: pl.Expr  # the weight is not null
    cols: list[pl.Expr]  # the by and protected key expressions, aliased to their names
    group: list[str]  # their names: by first, then protected


def _resolve_inputs(
    data: Any,
    *,
    y_true: IntoExpr,
    y_pred: IntoExpr,
    protected: IntoExpr | Sequence[IntoExpr],
    by: IntoExpr | Sequence[IntoExpr] | None,
    weight: IntoExpr | None,
) -> _Inputs:
    """Roles, columns and key names checked through the core helpers; dtypes probed (no data read)."""
    lf = to_lazyframe(data)
    names = lf.collect_schema().names()
    yt, yp = as_expr(y_true, "y_true"), as_expr(y_pred, "y_pred")
    w = None if weight is None else as_expr(weight, "weight")
    key_exprs = protected_exprs(protected)
    by_exprs = [as_expr(b, "by") for b in as_list(by)]
    for role, e in (("y_true", yt), ("y_pred", yp), ("weight", w)):
        if e is not None:
            check_columns(e, role, names)
    for e in key_exprs:
        check_columns(e, "protected", names)
    for e in by_exprs:
        check_columns(e, "by", names)
    keys = [output_name(e, "protected") for e in key_exprs]
    by_names = [output_name(e, "by") for e in by_exprs]
    check_key_names(by_names, keys, also_reserved=(CLASS, "n_correct", "w_correct"))

    probe = lf.select(yt.alias("t"), yp.alias("p"), *([w.alias("w")] if w is not None else [])).collect_schema()
    # weights and keys by the input contract (docs/contract.md): a null or NaN weight is missing, a
    # negative or infinite one invalid; NaN in a Float key is the null group, -0.0 is 0.0
    wc = None if w is None else weight_rule(POLARS, Column(output_name(w, "weight"), w, probe["w"]))
    key_schema = lf.select([e.alias(f"__pf_k{i}") for i, e in enumerate([*by_exprs, *key_exprs])]).collect_schema()
    roles = [*(("by", n) for n in by_names), *(("protected", k) for k in keys)]
    cols = [key(POLARS, Column(n, e, dt), role=r).alias(n)
            for (r, n), e, dt in zip(roles, [*by_exprs, *key_exprs], key_schema.values())]  # fmt: skip
    return _Inputs(
        lf=lf, yt=yt, yp=yp, tdt=probe["t"], pdt=probe["p"], wf=pl.lit(1.0) if wc is None else wc.value,
        w_ok=pl.lit(True) if wc is None else wc.state != FLAG_BAD_WEIGHT,
        w_present=pl.lit(True) if wc is None else wc.state != FLAG_NULL_WEIGHT,
        cols=cols, group=[*by_names, *keys],
    )  # fmt: skip


def _multilabel_table(inp: _Inputs) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The pass for multilabel 0/1 lists: rows exploded to (row, label), counted per label state.

    Returns the small table (keys, label index, true/predicted 0/1, exact match, state, counts) and
    a one-row frame ``k`` (labels per row), ``c`` (valid row-label pairs).
    """
    yt, yp, tdt, pdt = inp.yt, inp.yp, inp.tdt, inp.pdt
    if not (_is_list(tdt) and _is_list(pdt)):
        msg = (
            f"multilabel=True needs y_true and y_pred as List/Array columns of 0/1 values; found "
            f"dtypes {tdt} and {pdt}"
        )
        raise PolfairError(msg)
    lt, lp = _list(yt, tdt), _list(yp, pdt)
    no_null_items = (lt.list.eval(pl.element().null_count()).list.first() == 0) & (
        lp.list.eval(pl.element().null_count()).list.first() == 0
    )
    present = lt.is_not_null() & lp.is_not_null() & inp.w_present & no_null_items
    ok = (lt.list.len() == lp.list.len()) & (lt.list.len() > 0) & inp.w_ok
    state = _state(ok, present)
    good = state == _VALID
    as01 = lambda e: e.list.eval(pl.element().cast(pl.Float64))  # noqa: E731
    rows = inp.lf.select(
        *inp.cols,
        pl.when(good).then(as01(lt)).otherwise(pl.lit([None], pl.List(pl.Float64))).alias(_T),
        pl.when(good).then(as01(lp)).otherwise(pl.lit([None], pl.List(pl.Float64))).alias(_P),
        pl.when(good).then(pl.int_ranges(0, lt.list.len(), dtype=pl.Int64)).otherwise(
            pl.lit([None], pl.List(pl.Int64))).alias(_K),
        pl.when(good).then(as01(lt) == as01(lp)).alias(_EX),
        state.alias(_ST),
        inp.wf.alias(_W),
    ).explode([_T, _P, _K])
    # a value other than 0/1 makes its (row, label) invalid
    bad01 = pl.col(_T).is_not_null() & ~(pl.col(_T).is_in([0.0, 1.0]) & pl.col(_P).is_in([0.0, 1.0]))
    rows = rows.with_columns(pl.when(bad01).then(pl.lit(_INVALID, pl.UInt8)).otherwise(pl.col(_ST)).alias(_ST))
    small = rows.group_by([*inp.group, _K, _T, _P, _EX, _ST]).agg(
        pl.len().cast(pl.UInt64).alias(_N), pl.col(_W).sum(), (pl.col(_W) * pl.col(_W)).sum().alias(_W2)
    ).collect()
    width = small.filter(pl.col(_K).is_not_null()).select(
        (pl.col(_K).max() + 1).alias("k"), pl.col(_K).count().alias("c")
    )
    return small, width


def _single_label_table(
    inp: _Inputs, t_expr: pl.Expr, p_expr: pl.Expr, k_expr: pl.Expr, ok: pl.Expr, present: pl.Expr
) -> pl.DataFrame:
    """The pass for one class per row: counts per (keys, true class, predicted class, state)."""
    state = _state(ok, present)
    rows = inp.lf.select(
        *inp.cols, t_expr.alias(_T), p_expr.alias(_P), k_expr.alias(_K), state.alias(_ST), inp.wf.alias(_W)
    )
    return rows.group_by([*inp.group, _T, _P, _ST]).agg(
        pl.len().cast(pl.UInt64).alias(_N), pl.col(_W).sum(), (pl.col(_W) * pl.col(_W)).sum().alias(_W2),
        pl.col(_K).min().alias("__pf_kmin"), pl.col(_K).max().alias("__pf_kmax"),
    ).collect()  # fmt: skip


def _scores_table(inp: _Inputs) -> tuple[pl.DataFrame, pl.Series]:
    """The pass for List/Array class scores (argmax, as ``torch.argmax``) and the classes ``0 .. K-1``."""
    yt, tdt, pdt = inp.yt, inp.tdt, inp.pdt
    lp = _list(inp.yp, pdt)
    if not tdt.is_integer():
        msg = (
            f"y_pred holds class scores (dtype {pdt}), so y_true must be the integer class index "
            f"0..K-1; found dtype {tdt}"
        )
        raise InvalidInputError(msg)
    t_expr, p_expr = yt.cast(pl.Int64), lp.list.arg_max().cast(pl.Int64)
    present = _present(yt, tdt) & lp.is_not_null() & inp.w_present
    ok = inp.w_ok & (t_expr >= 0) & (lp.list.len() > 0) & (lp.list.eval(pl.element().null_count()).list.first() == 0)
    small = _single_label_table(inp, t_expr, p_expr, lp.list.len(), ok, present)
    kmin, kmax = small.select(pl.col("__pf_kmin").min(), pl.col("__pf_kmax").max()).row(0)
    if kmin is not None and kmin != kmax:
        msg = f"y_pred: score lists have different lengths ({kmin} to {kmax}); every row needs K scores"
        raise InvalidInputError(msg)
    k = int(kmax or 0)
    out_of_range = small.filter((pl.col(_ST) == _VALID) & (pl.col(_T) >= k))[_N].sum()
    if out_of_range:
        msg = f"y_true: {out_of_range} rows have a class index outside 0..{k - 1} (K = {k} scores per row)"
        raise InvalidInputError(msg)
    small = small.with_columns(
        pl.when(pl.col(_T) < 0).then(pl.lit(_INVALID, pl.UInt8)).otherwise(pl.col(_ST)).alias(_ST)
    )
    return small.drop("__pf_kmin", "__pf_kmax"), pl.Series(CLASS, range(k), dtype=pl.Int64)


def _labels_table(inp: _Inputs, classes: Sequence[Any] | None) -> tuple[pl.DataFrame, pl.Series]:
    """The pass for class labels; the classes are ``classes`` then every value seen (in order)."""
    yt, yp, tdt, pdt = inp.yt, inp.yp, inp.tdt, inp.pdt
    if _is_list(tdt):
        msg = f"y_true is a list column (dtype {tdt}) but y_pred is not: pass multilabel=True for 0/1 matrices"
        raise PolfairError(msg)
    super_dt = _common_dtype(tdt, pdt)
    present = _present(yt, tdt) & _present(yp, pdt) & inp.w_present
    small = _single_label_table(
        inp, yt.cast(super_dt), yp.cast(super_dt), pl.lit(None, pl.UInt32), inp.w_ok, present
    )
    found = pl.concat([small.filter(pl.col(_ST) == _VALID)[c] for c in (_T, _P)]).drop_nulls().unique().sort()
    if classes is not None:
        given = pl.Series(CLASS, list(classes))
        class_values = given.cast(found.dtype) if found.len() else given
        class_values = pl.concat([class_values, found]).unique(maintain_order=True)
    else:
        class_values = found
    return small.drop("__pf_kmin", "__pf_kmax"), class_values.alias(CLASS)


def _multilabel_classes(small: pl.DataFrame, width: pl.DataFrame) -> tuple[pl.DataFrame, pl.Series, pl.DataFrame]:
    """Multilabel: each row once (label 0), the classes ``0 .. K-1``, and the per-label 0/1 states."""
    k, _count = width.row(0)
    k = int(k or 0)
    per_row = small.filter(pl.col(_K).is_null() | (pl.col(_K) == 0))  # each row once
    n_lab = small.filter(pl.col(_ST) == _VALID).group_by(_K).agg(pl.col(_N).sum())
    if n_lab.height and n_lab[_N].n_unique() > 1:
        msg = "y_true/y_pred: label lists have different lengths across rows; every row needs K labels"
        raise InvalidInputError(msg)
    class_values = pl.Series(CLASS, range(k), dtype=pl.Int64)
    expanded = small.filter(pl.col(_K).is_not_null()).with_columns(
        pl.col(_K).alias(CLASS), (pl.col(_T) == 1.0).alias(_T), (pl.col(_P) == 1.0).alias(_P)
    )
    return per_row, class_values, expanded


def _one_vs_rest(small: pl.DataFrame, class_values: pl.Series) -> pl.DataFrame:
    """One class per row: every (row kind, class) pair with "true is c" / "predicted is c" / exact match."""
    cls = pl.DataFrame([class_values])
    return small.join(cls, how="cross").with_columns(
        (pl.col(_T) == pl.col(_P)).fill_null(False).alias(_EX),
        (pl.col(_T) == pl.col(CLASS)).fill_null(False).alias(_T),
        (pl.col(_P) == pl.col(CLASS)).fill_null(False).alias(_P),
    )


def _class_cells(
    per_row: pl.DataFrame, expanded: pl.DataFrame, class_values: pl.Series, group: list[str]
) -> pl.DataFrame:
    """The class cell table: one-vs-rest sums per (keys, class) on the full grid of cells x classes."""
    t, p, v = pl.col(_T), pl.col(_P), pl.col(_ST) == _VALID
    n, wt = pl.col(_N), pl.col(_W)

    def s(x: pl.Expr, mask: pl.Expr) -> pl.Expr:
        return x.filter(mask).sum()

    conf = {"tp": t & p, "fp": ~t & p, "tn": ~t & ~p, "fn": t & ~p}
    aggs = [s(wt, v).alias("w")]
    aggs += [s(wt, v & m).alias(name) for name, m in conf.items()]
    aggs += [s(n, v & m).alias(f"{name}_n") for name, m in conf.items()]
    aggs += [s(pl.col(_W2), v & m).alias(f"{name}_w2") for name, m in conf.items()]
    aggs += [s(n, v & pl.col(_EX)).alias("n_correct"), s(wt, v & pl.col(_EX)).alias("w_correct")]
    per_class = expanded.group_by([*group, CLASS]).agg(aggs)
    cell_aggs = [n.sum().alias("n"), s(n, pl.col(_ST) == _MISSING).alias("n_missing"),
                 s(n, pl.col(_ST) == _INVALID).alias("n_invalid")]  # fmt: skip
    cells = per_row.group_by(group).agg(cell_aggs) if group else per_row.select(cell_aggs)
    grid = cells.join(pl.DataFrame([class_values]), how="cross")
    out = grid.join(per_class, on=[*group, CLASS], how="left", nulls_equal=True)
    counts = [c for c in COUNT_COLUMNS if c not in ("n", "n_missing", "n_invalid", "gtp", "gfp", "gtn", "gfn")]
    out = out.with_columns(
        *[pl.col(c).fill_null(0).cast(COUNT_DTYPES[c]) for c in counts],
        pl.col("n", "n_missing", "n_invalid").cast(pl.UInt64),
        pl.col("n_correct").fill_null(0).cast(pl.UInt64),
        pl.col("w_correct").fill_null(0).cast(pl.Float64),
    ).with_columns(gtp=pl.col("tp"), gfp=pl.col("fp"), gtn=pl.col("tn"), gfn=pl.col("fn"))
    order = {c: i for i, c in enumerate(class_values.to_list())}
    out = out.with_columns(pl.col(CLASS).replace_strict(order, return_dtype=pl.Int64).alias("__pf_co"))
    out = out.sort([*group, "__pf_co"], nulls_last=False)
    return out.select(*group, CLASS, *COUNT_COLUMNS, "n_correct", "w_correct")


def _check_states(per_row: pl.DataFrame, small: pl.DataFrame, on_missing: str, total: int) -> None:
    invalid = int(small.filter(pl.col(_ST) == _INVALID)[_N].sum() or 0)  # multilabel: (row, label) pairs
    if invalid:
        msg = (
            f"{invalid} rows (multilabel: row-label pairs) of {total} are invalid: negative or infinite "
            "weights, empty or null-holding score lists, negative class indices, multilabel values other than 0/1, or "
            "label lists whose lengths differ between y_true and y_pred. Fix or filter them"
        )
        raise InvalidInputError(msg)
    missing = int(per_row.filter(pl.col(_ST) == _MISSING)[_N].sum() or 0)
    if missing and on_missing != "ignore":
        msg = (
            f"{missing} of {total} rows have a null label, prediction or weight: they are counted in "
            "n_missing and left out of every rate. Fill or drop them, or pass on_missing='ignore'"
        )
        if on_missing == "raise":
            raise InvalidInputError(msg)
        warnings.warn(msg, MissingValuesWarning, stacklevel=user_stacklevel())
