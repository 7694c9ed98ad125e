"""The input contract after the pass: the one post-pass check, and the Polars frame adapter.

Part of :mod:`polfair.core.contract` (the public module, which re-exports this one's public names and
describes the contract as a whole). Here: the problem counts of a collected code table
(:func:`code_problems`), the one check that raises on invalid values and warns about missing
ones (:func:`check_problems`), the Float64 overflow check (:func:`check_finite_sums`), the error
path's example values (:func:`fetch_examples`), and :class:`PolarsFrame`, the frame adapter a pass
reads a Polars-readable input through.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import polars as pl

from polfair.core._args import as_expr, check_columns, output_name
from polfair.core.contract.compile import (
    POLARS,
    Column,
    Compiled,
    Engine,
    weight,  # noqa: F401 (the doctests use it)
)
from polfair.core.contract.frame import Aggs, Stages
from polfair.core.contract.inputs import to_lazyframe
from polfair.core.contract.rules import (
    CODE,
    FLAG_BAD_SCORE,
    FLAG_BAD_WEIGHT,
    FLAG_NULL_SCORE,
    FLAG_NULL_WEIGHT,
    INVALID,
    MISSING,
)
from polfair.exceptions import (
    InvalidInputError,
    MissingValuesWarning,
    PolfairError,
    WeightRangeWarning,
    user_stacklevel,
)

__all__ = [
    "PROBA_BAD", "PROBA_NULL", "PROBA_SUM", "W2_SHIFT", "PolarsFrame", "check_finite_sums", "check_polarity",
    "check_problems", "code_problems", "fetch_examples", "label_values_warnings", "seen_values", "weight_range_message",
    "weight_squares", "weight_units",
]  # fmt: skip

#: Columns of a membership-probability pass (:mod:`polfair.core.proba`) that count, per row of the
#: code table, the rows whose probabilities are missing, outside [0, 1], or do not sum to 1.
PROBA_NULL, PROBA_BAD, PROBA_SUM = "__pf_pnull", "__pf_pbad", "__pf_psum"


# ---------------------------------------------------------------------------------------------
# the one post-pass check


def code_problems(codes: pl.DataFrame, count: str = "__pf_n") -> dict[str, int]:
    """Row totals per problem kind of a collected code table (column :data:`CODE` and a row count).

    Returns
    -------
    dict
        ``favorable_label``, ``unfavorable_label``, ``favorable_prediction``,
        ``unfavorable_prediction`` (rows in each label / prediction state, whatever the other
        fields), ``invalid_label``, ``invalid_prediction``, ``invalid_score``, ``invalid_weight``,
        ``null_label``, ``null_prediction``, ``null_weight``, ``null_score`` -> rows; ``missing``:
        the rows left out as missing (a null/NaN value somewhere, no invalid one). With the columns
        :data:`PROBA_NULL`, :data:`PROBA_BAD`, :data:`PROBA_SUM` of a membership-probability pass
        (:mod:`polfair.core.proba`), also ``null_probability``, ``invalid_probability`` (outside
        [0, 1]) and ``invalid_probability_sum`` (not summing to 1); rows of a counted outcome whose
        probabilities are missing are added to ``missing``.

    Examples
    --------
    >>> import polars as pl
    >>> codes = pl.DataFrame({CODE: [5, 3 + 4 * 3, 5 + 16 * 4], "__pf_n": [10, 2, 1]})
    >>> {k: v for k, v in code_problems(codes).items() if v and "favorable" not in k}
    {'invalid_label': 2, 'invalid_prediction': 2, 'null_weight': 1, 'missing': 1}
    """
    o = pl.col(CODE).cast(pl.Int32)
    a, b, flags = o % 4, (o // 4) % 4, o // 16
    kinds = {
        "favorable_label": a == 1,
        "unfavorable_label": a == 0,
        "favorable_prediction": b == 1,
        "unfavorable_prediction": b == 0,
        "invalid_label": a == INVALID,
        "invalid_prediction": b == INVALID,
        "invalid_score": ((flags // FLAG_BAD_SCORE) % 2) == 1,
        "invalid_weight": ((flags // FLAG_BAD_WEIGHT) % 2) == 1,
        "null_label": a == MISSING,
        "null_prediction": b == MISSING,
        "null_weight": ((flags // FLAG_NULL_WEIGHT) % 2) == 1,
        "null_score": ((flags // FLAG_NULL_SCORE) % 2) == 1,
        # rows left out as missing: a missing value and no invalid one
        "missing": ((a == MISSING) | (b == MISSING) | (flags >= FLAG_NULL_WEIGHT))
        & (a != INVALID)
        & (b != INVALID)
        & ((flags % 4) == 0),
    }
    extra = []
    if PROBA_NULL in codes.columns:  # a pass of membership probabilities (polfair.core.proba)
        excluded = ~kinds["missing"] & (a != INVALID) & (b != INVALID) & ((flags % 4) == 0)  # rows counted so far
        extra = [pl.col(PROBA_NULL).sum().alias("null_probability"), pl.col(PROBA_BAD).sum().alias("invalid_probability"),
                 pl.col(PROBA_SUM).sum().alias("invalid_probability_sum"),
                 pl.col(PROBA_NULL).filter(excluded).sum().alias("__pf_more_missing")]  # fmt: skip
    row = codes.select(*[pl.col(count).filter(m).sum().alias(k) for k, m in kinds.items()], *extra).row(0, named=True)
    out = {k: int(v or 0) for k, v in row.items()}
    out["missing"] += out.pop("__pf_more_missing", 0)
    return out


#: Problem kind -> the role whose value it is about.
_KIND_ROLE = {"label": "y_true", "prediction": "y_pred", "score": "y_score", "weight": "weight",
              "probability": "protected_proba", "probability_sum": "protected_proba_sum"}  # fmt: skip
#: A role compiled into another role's field -> the noun of its values in messages.
_NOUNS = {"errors": "error"}


def check_problems(
    problems: Mapping[str, int],
    roles: Mapping[str, Compiled],
    *,
    total: int,
    on_missing: str = "warn",
    examples: Callable[[Compiled], list[Any]] | None = None,
    excluded_from: str = "counted in n_missing and excluded from all rates",
    stacklevel: int = 3,
    check_values: bool = True,
) -> None:
    """The one post-pass check: invalid values raise, missing values warn (or raise, or pass), and
    label values that match no row warn.

    Parameters
    ----------
    problems
        From :func:`code_problems` (kinds the pass cannot produce may be left at 0).
    roles
        The compiled roles of the pass (``"y_true"``, ``"y_pred"``, ``"y_score"``, ``"weight"``);
        a problem of a role that is absent is ignored (without ``y_pred`` the prediction mirrors
        the label or follows the score).
    total
        Rows the pass counted.
    on_missing
        ``"warn"``, ``"raise"`` or ``"ignore"``.
    examples
        Fetches a few offending values of a role (a second query that runs only on this error
        path); ``None``: the message has counts only.
    excluded_from
        How the message says what happens to missing rows.
    stacklevel
        Unused (kept for callers): the warning names the first frame outside polfair
        (:func:`polfair.exceptions.user_stacklevel`), whatever the path to it.
    check_values
        Warn (:class:`~polfair.exceptions.ReferenceWarning`) when ``favorable`` (or ``unfavorable=``)
        matches no row of the label (of the decision in a pass without labels), naming the values
        that exist (a query on this warning path only). ``False`` for a batch of a stream (the
        accumulator checks the whole).

    Raises
    ------
    InvalidInputError
        Invalid values (the first role in the order y_true, y_pred, y_score, weight), naming the
        column, the count, example values and the fix; missing values with ``on_missing="raise"``.

    Warns
    -----
    MissingValuesWarning
        Rows with a null or NaN label, prediction, score or weight (``on_missing="warn"``).
    ReferenceWarning
        ``favorable`` / ``unfavorable`` match no row (``check_values``).

    Examples
    --------
    >>> import polars as pl
    >>> w = weight(POLARS, Column("w", pl.col("w"), pl.Float64))
    >>> check_problems({"invalid_weight": 2}, {"weight": w}, total=10)
    Traceback (most recent call last):
    ...
    polfair.exceptions.InvalidInputError: weight='w': 2 rows (of 10) have weights that are negative or infinite. ...
    """
    for kind, role in _KIND_ROLE.items():
        n = problems.get(f"invalid_{kind}", 0)
        c = roles.get(role)
        if not n or c is None:
            continue
        if c.mark is not None and c.polarity is not None:
            check_polarity(c, examples)  # raises unless the rows are invalid labels (told apart here)
        found = ""
        if examples is not None:
            try:
                found = f"; found e.g. {examples(c)}"
            except Exception:  # pragma: no cover - the examples are a courtesy; the counts are the error
                found = ""
        name = "protected_proba" if "protected_proba_sum" in (role, c.role) else c.role  # one option, two kinds of problems
        msg = f"{name}={c.column!r}: {n} rows (of {total}) have {c.what}{found}. {c.fix}"
        raise InvalidInputError(msg)
    if check_values:
        _check_label_values(problems, roles, examples, stacklevel + 1)
    missing = {k: problems.get(f"null_{k}", 0) for k in _KIND_ROLE if _KIND_ROLE[k] in roles}
    if "y_pred" not in roles or roles["y_pred"].role != "y_pred":
        missing.pop("prediction", None)  # it mirrors the label, or is the score's (counted there)
    missing = {k: v for k, v in missing.items() if v}
    if not missing or on_missing == "ignore":
        return
    # a role compiled under another name (a slice search's errors in the label field) is named as such
    noun = {k: _NOUNS.get(roles[_KIND_ROLE[k]].role, k) for k in missing}
    parts = ", ".join(f"{v} with a null {noun[k]}" for k, v in missing.items())
    cols = ", ".join(f"{roles[_KIND_ROLE[k]].role}={roles[_KIND_ROLE[k]].column!r}" for k in missing)
    tail = ("on_missing='raise': fill or drop them before the report, or pass on_missing='ignore'"
            if on_missing == "raise" else
            "Fill or drop them before the report to silence this, or pass on_missing='ignore'")  # fmt: skip
    rows = problems.get("missing", 0)
    these = f"these {rows} rows" if rows else "these rows"
    msg = f"{parts} (of {total} rows; NaN counts as null): {these} are {excluded_from} ({cols}). {tail}"
    if on_missing == "raise":
        raise InvalidInputError(msg)
    warnings.warn(msg, MissingValuesWarning, stacklevel=user_stacklevel())


def _check_label_values(problems: Mapping[str, int], roles: Mapping[str, Compiled],
                        examples: Callable[[Compiled], list[Any]] | None, stacklevel: int) -> None:  # fmt: skip
    """Warn when the favorable (or the given unfavorable) values match no row of the label: the
    decision's own values in a pass without labels (:func:`label_values_warnings`).
    """
    from polfair.exceptions import ReferenceWarning

    role, field = ("y_true", "label") if "y_true" in roles else ("y_pred", "prediction")
    c = roles.get(role)
    if c is None or c.labels is None:
        return
    fav_rows, unf_rows = problems.get(f"favorable_{field}", 0), problems.get(f"unfavorable_{field}", 0)
    if fav_rows + unf_rows == 0:
        return  # no usable value at all: the missing-values message says so
    for text in label_values_warnings(c, fav_rows, unf_rows, lambda: seen_values(c, examples)):
        warnings.warn(text, ReferenceWarning, stacklevel=user_stacklevel())


def seen_values(c: Compiled, examples: Callable[[Compiled], list[Any]] | None) -> list[Any]:
    """A few values the column of ``c`` holds (a query on a warning path only; empty if it fails)."""
    from dataclasses import replace

    if examples is None:
        return []
    try:
        return examples(replace(c, invalid=~c.source.expr.is_null()))
    except Exception:  # pragma: no cover - the values are a courtesy; the warning stands
        return []


def label_values_warnings(c: Compiled, favorable_rows: int, unfavorable_rows: int,
                          seen: Callable[[], list[Any]]) -> list[str]:  # fmt: skip
    """The warnings of label values that match no row (:func:`polfair.core.values.absent_values_message`,
    as ``privileged``): ``favorable`` when no row has it, ``unfavorable=`` (when given) likewise.

    Parameters
    ----------
    c
        The compiled label (its ``labels``: favorable and unfavorable values in its dtype).
    favorable_rows, unfavorable_rows
        Rows with a favorable / an unfavorable label.
    seen
        Fetches a few values the column holds (called only when a warning is due).

    Returns
    -------
    list of str
    """
    from polfair.core.values import absent_values_message

    if c.labels is None:
        return []
    fav, unf = c.labels
    absent = []
    if not favorable_rows:
        absent.append((f"favorable={list(fav) if len(fav) > 1 else fav[0]!r}", fav,
                       "no row has the favorable outcome, so every favorable rate is 0"))  # fmt: skip
    if unf is not None and not unfavorable_rows:
        absent.append((f"unfavorable={list(unf) if len(unf) > 1 else unf[0]!r}", unf, "no row has an unfavorable label"))
    if not absent:
        return []
    values = seen()
    return [absent_values_message(f"{c.role}={c.column!r}, {option}", list(vals), c.column, values, consequence)
            for option, vals, consequence in absent]  # fmt: skip


def check_polarity(c: Compiled, examples: Callable[[Compiled], list[Any]] | None) -> None:
    """Invalid-state label rows of a pass that checked the polarity rule: raise the polarity error,
    unless some are invalid labels (a Float label that is not a whole number), which the caller
    reports. The error path's queries tell the two apart and fetch the labels found.

    Parameters
    ----------
    c
        The compiled label (``c.mark`` and ``c.polarity`` set).
    examples
        Fetches offending values (a query on the error path).

    Raises
    ------
    PolarityError
        The labels break the polarity rule's reading (the message names them and the fix).
    """
    from dataclasses import replace

    from polfair.exceptions import PolarityError

    def fetch(mask: Any) -> list[Any]:
        if examples is None:
            return []
        try:
            return examples(replace(c, invalid=mask))
        except Exception:  # pragma: no cover - the examples are a courtesy; the error stands
            return []

    if c.source.dtype.is_float() and (examples is None or fetch(c.invalid)):
        return  # invalid labels: the caller's message (they may hide polarity rows: fixed first)
    found = fetch(c.mark)
    pol = c.polarity
    if pol.check == "other":
        raise PolarityError(pol.others_message(found))
    raise PolarityError(pol.ambiguity(found[-1] if found else None, found))


def check_finite_sums(sums: pl.DataFrame, columns: Sequence[str], weight_: Compiled | None) -> None:
    """The Float64 overflow check of a pass: every counted weight is finite, so an infinite sum (or
    sum of squares) of counted rows is an overflow; raise naming the weight column and the fix.

    Parameters
    ----------
    sums
        The pass's result, restricted to counted rows.
    columns
        Its Float64 sum columns (``w2``-like names: a sum of squared weights).
    weight_
        The compiled weight role (``None``: unweighted, nothing to check).

    Raises
    ------
    InvalidInputError
        A sum is infinite.

    Examples
    --------
    >>> import polars as pl
    >>> w = weight(POLARS, Column("w", pl.col("w"), pl.Float64))
    >>> check_finite_sums(pl.DataFrame({"s": [1.0]}), ["s"], w)
    >>> check_finite_sums(pl.DataFrame({"s": [float("inf")]}), ["s"], w)
    Traceback (most recent call last):
    ...
    polfair.exceptions.InvalidInputError: weight='w': the weighted sum of a group overflows Float64 ...
    """
    if weight_ is None or not sums.height:
        return
    for col in columns:
        if col in sums.columns and sums.schema[col].is_float() and sums.get_column(col).is_infinite().any():
            what = "the sum of squared weights (Kish sizes)" if "2" in col else "the weighted sum"
            msg = (
                f"weight={weight_.column!r}: {what} of a group overflows Float64 (each weight is finite, the "
                "sum is not); rescale the weights, e.g. divide them by their mean: every rate is unchanged"
            )
            raise InvalidInputError(msg)


#: The pass sums the squared weights twice, scaled by 2**±W2_SHIFT (:func:`weight_squares`).
W2_SHIFT = 300
_TINY = 2.0**-1000  # a sum of squares below this has lost digits to Float64's range (or is about to)


def weight_squares(w: Any) -> tuple[Any, Any]:
    """The pass's two accumulators of Σw² (expressions in any engine's namespace): Σ(w·2^300)² and
    Σ(w·2^-300)².

    One Float64 sum of w² cannot hold weights of 1e-200 (w² underflows to 0) and 1e200 (w²
    overflows); between them the two sums hold every weight in about [1e-240, 1e240], each exactly
    ``4^±300·Σw²`` wherever it is finite and normal (scaling by a power of two is exact).
    :func:`weight_units` turns them into Σw² after the pass.

    Examples
    --------
    >>> import polars as pl
    >>> up, down = weight_squares(pl.col("w"))
    >>> pl.DataFrame({"w": [3.0]}).select(up.alias("u"), down.alias("d")).row(0) == (9.0 * 4.0**300, 9.0 * 4.0**-300)
    True
    """
    hi, lo = w * (2.0**W2_SHIFT), w * (2.0**-W2_SHIFT)
    # SQL engines raise on a float product that overflows or underflows to 0 (PostgreSQL): the
    # products are taken only where they are finite and nonzero, the rest is what Float64 gives
    # (inf; 0 below the smallest subnormal). NaN weights are flagged missing, their sums unread.
    a = w.abs()
    up = _ns_when(w, a >= 2.0**212, math.inf, _ns_when(w, a < 2.0**-837, 0.0, hi * hi))
    down = _ns_when(w, a >= 2.0**812, math.inf, _ns_when(w, a < 2.0**-237, 0.0, lo * lo))
    return up, down


def _ns_when(w: Any, cond: Any, then: float, otherwise: Any) -> Any:
    """``when(cond).then(then).otherwise(otherwise)`` in the namespace of the expression ``w``."""
    ns = _namespace(w)
    return ns.when(cond).then(ns.lit(then)).otherwise(otherwise)


def _namespace(expr: Any) -> Any:
    if isinstance(expr, pl.Expr):
        return pl
    import importlib

    return importlib.import_module(type(expr).__module__.split(".")[0])


def weight_units(
    table: pl.DataFrame,
    *,
    w: str,
    up: str,
    down: str,
    out: str,
    scaled: Sequence[str],
    weight_: Compiled | None,
    relative: bool,
    stacklevel: int = 5,
) -> tuple[pl.DataFrame, int]:
    """Σw² of a pass's result from its two accumulators (:func:`weight_squares`), and the table's weight unit.

    Parameters
    ----------
    table
        The pass's (small) result: per row Σw (column ``w``) and the accumulators ``up``, ``down``.
    w, up, down
        Their columns.
    out
        The column Σw² is written to (``up`` and ``down`` are dropped).
    scaled
        The other weighted-sum columns (Σw·s, ...), scaled with ``w`` when ``relative``.
    weight_
        The compiled weight role (for the messages).
    relative
        ``False``: ``out`` is Σw² in the data's units (the public tables); ``True``: every weighted
        column (``w``, ``scaled``, ``out``) is in units of ``2^K`` (``4^K`` for Σw²), ``K`` in
        {−300, 0, 300} chosen so that Σw² is a normal Float64 (0 unless the weights are beyond
        about 2^±450): what the reports read, whose statistics are all free of the weights' scale.
        Rows whose Σw² the unit cannot hold get a null Σw² (unknown: their intervals are null) and
        one :class:`~polfair.exceptions.WeightRangeWarning` naming the weight column (in the data's
        units: weights beyond about 1e±150; in the reports' units: beyond about 1e±240, or groups
        whose weights differ by a factor beyond about 1e180).
    stacklevel
        Unused (kept for callers): the warning names the first frame outside polfair
        (:func:`polfair.exceptions.user_stacklevel`), whatever the path to it.

    Returns
    -------
    (pl.DataFrame, int)
        The table and ``K``.

    Warns
    -----
    WeightRangeWarning
        Σw² of some rows cannot be held (then null), naming the weight column and the fix.

    Examples
    --------
    >>> import polars as pl
    >>> up, down = weight_squares(pl.col("v"))
    >>> t = pl.DataFrame({"v": [1e-200, 3e-200]}).select(pl.col("v").sum().alias("w"), up.sum().alias("a"),
    ...                                                    down.sum().alias("b"))
    >>> rel, k = weight_units(t, w="w", up="a", down="b", out="w2", scaled=[], weight_=None, relative=True)
    >>> k, round(rel["w"][0] ** 2 / rel["w2"][0], 12)  # Kish's effective size: W²/Σw²
    (-300, 1.6)
    """
    if up not in table.columns:
        return table, 0
    A, B, W = (table.get_column(c).cast(pl.Float64) for c in (up, down, w))
    counted = W.is_finite() & (W > 0)
    k = 0
    if relative and counted.any():  # another unit only where it holds what the data's units cannot
        if (A.is_infinite() & (B >= _TINY) & counted).any():
            k = W2_SHIFT
        elif ((A * 4.0**-W2_SHIFT < _TINY) & (A >= _TINY) & counted).any():
            k = -W2_SHIFT
    if k > 0:
        w2 = B
    elif k < 0:
        w2 = A
    else:
        w2 = (A * 4.0**-W2_SHIFT).zip_with(A.is_finite(), B * 4.0**W2_SHIFT)
    bad = counted & (w2.is_infinite() | w2.is_nan() | (w2 < (_TINY if k else 2.0**-1022)))
    if bad.any():  # Σw² the unit cannot hold: unknown (null), said once
        warnings.warn(weight_range_message(weight_, int(bad.sum())), WeightRangeWarning, stacklevel=user_stacklevel())
        w2 = w2.zip_with(~bad, pl.Series([None] * len(w2), dtype=pl.Float64))
    factor = 2.0**-k
    cols = [pl.Series(out, w2)]
    if k:
        cols += [(table.get_column(c) * factor).alias(c) for c in (w, *scaled) if c in table.columns]
    return table.drop(up, down).with_columns(cols), k


def weight_range_message(weight_: Compiled | None, cells: int) -> str:
    """The :class:`~polfair.exceptions.WeightRangeWarning` of :func:`weight_units`, naming the weight column.

    Examples
    --------
    >>> weight_range_message(None, 2)[:70]
    "the weights: 2 cells' sums of squared weights (Kish's effective sizes)"
    """
    name = f"weight={weight_.column!r}" if weight_ is not None else "the weights"
    return (
        f"{name}: {cells} cells' sums of squared weights (Kish's effective sizes) cannot be held in Float64 (weights "
        "below about 1e-150 or above 1e150 in a cell table, beyond 1e-240 or 1e240 in the reports, which rescale "
        "them, or a factor beyond about 1e180 from the other groups'): they are null, and so are the interval "
        "columns that need them; rescale the weights, e.g. divide them by their mean (every rate is unchanged)"
    )


def fetch_examples(frame: Any, ns: Any, c: Compiled, collect: Callable[[Any], pl.DataFrame]) -> list[Any]:
    """Up to five distinct offending values of a compiled role, sorted: the error path's second query.

    Parameters
    ----------
    frame, ns
        The input as a lazy frame of the engine, and its namespace (``pl`` or ``narwhals``).
    c
        The compiled role (its column expression and its ``invalid`` mask).
    collect
        Runs the small query and returns a Polars frame.

    Examples
    --------
    >>> import polars as pl
    >>> w = weight(POLARS, Column("w", pl.col("w"), pl.Float64))
    >>> fetch_examples(pl.LazyFrame({"w": [1.0, -2.0, -1.0, -2.0]}), pl, w, lambda q: q.collect())
    [-2.0, -1.0]
    """
    q = frame.select(c.source.expr.alias("v"), c.invalid.alias("b")).filter(ns.col("b")).select("v").unique()
    vals = collect(q.head(50))["v"].to_list()
    try:
        vals = sorted(vals)
    except TypeError:  # pragma: no cover - one column holds one type
        pass
    return vals[:5]


# ---------------------------------------------------------------------------------------------
# the Polars frame adapter (the narwhals one is polfair.engines.narwhals.ForeignFrame)


class PolarsFrame:
    """A Polars-readable input seen by a pass: checked columns, the pass, example values.

    Parameters
    ----------
    data
        Anything :func:`polfair.core.contract.inputs.to_lazyframe` reads.

    Attributes
    ----------
    lf
        The input as a lazy frame.
    names
        Its column names.
    eng
        :data:`POLARS`.

    Examples
    --------
    >>> import polars as pl
    >>> f = PolarsFrame(pl.DataFrame({"y": [1, 0], "g": ["a", "b"]}))
    >>> f.column("y", "y_true").dtype
    Int64
    >>> f.aggregate({"g": pl.col("g")}, ["g"], lambda ns: [ns.len().alias("n")]).sort("g")["n"].to_list()
    [1, 1]
    """

    eng: Engine = POLARS

    def __init__(self, data: Any) -> None:
        self.lf = to_lazyframe(data)
        self.names: list[str] = self.lf.collect_schema().names()

    def column(self, x: Any, role: str) -> Column:
        """The :class:`Column` of a role's argument (a name or a named expression), checked.

        Raises
        ------
        ColumnNotFoundError
            A named column is missing (close names suggested).
        PolfairError
            The expression does not type-check on the input, or has no name.
        TypeError
            ``x`` is neither a name nor an expression.
        """
        e = as_expr(x, role)
        check_columns(e, role, self.names)
        name = output_name(e, role)
        try:
            dtype = self.lf.select(e.alias("__pf_v")).collect_schema()["__pf_v"]
        except pl.exceptions.PolarsError as exc:
            msg = f"cannot evaluate the column expression {role}={e} on the input: {exc}"
            raise PolfairError(msg) from exc
        return Column(name, e, dtype)

    def examples(self, c: Compiled) -> list[Any]:
        """A few offending values of a compiled role (a second query; runs only on the error path)."""
        return fetch_examples(self.lf, pl, c, lambda q: q.collect())

    def aggregate(self, columns: Mapping[str, Any], group: Sequence[str], aggs: Aggs, engine: str = "auto",
                  stages: Stages | None = None) -> pl.DataFrame:  # fmt: skip
        """``select(columns).group_by(group).agg(aggs(pl))``, collected (the pass).

        ``stages(ns, group)``: ``with_columns`` steps between the select and the ``group_by``
        (window functions over ``group``, e.g. a cell's mean), each a mapping name -> expression.
        """
        planned = self.lf.select([e.alias(n) for n, e in columns.items()])
        for stage in stages(pl, list(group)) if stages else []:
            planned = planned.with_columns([e.alias(n) for n, e in stage.items()])
        out = planned.group_by(list(group)).agg(aggs(pl)) if group else planned.select(aggs(pl))
        return out.collect(engine=engine)  # type: ignore[call-overload]
