"""Stage 2, *run*: execute the one pass for a :class:`~polfair.core.passes.spec.Spec`, check the data, return the cell table.

The checks read only the pass's small result (the outcome-code table): invalid labels, predictions,
scores and weights raise :class:`~polfair.exceptions.InvalidInputError` with examples fetched by a
second query that runs only on that error path; null labels/predictions/scores/weights are counted
in ``n_missing`` and reported by a :class:`~polfair.exceptions.MissingValuesWarning`.
"""

from __future__ import annotations

import os
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TypedDict, Unpack

import polars as pl

from polfair.core._args import SMALL_COLLECT as _SMALL
from polfair.core._typing import OnMissing
from polfair.core.contract import check_finite_sums, weight_units
from polfair.core.contract.check import W2_SHIFT
from polfair.core.contract.inputs import source_name
from polfair.core.passes.counts import (
    COUNTED_CODES,
    W2_DOWN,
    W2_ONE,
    W2_UP,
    WEIGHT_EXP,
    code_counts,
    describe_code_problems,
    pivot_codes,
)
from polfair.core.passes.estimated import code_counts as proba_code_counts
from polfair.core.passes.estimated import expand_codes
from polfair.core.passes.skeleton import check_cardinality, check_not_empty, check_rows
from polfair.core.passes.spec import CODE, W1S, WS, Spec, W, check_on_missing, favorable_value_columns
from polfair.exceptions import InvalidInputError

__all__ = [
    "ONE_SQUARE_MIN", "CollectOptions", "cells_of_codes", "check_cardinality", "check_not_empty", "collect_cells",
    "collect_codes",
]  # fmt: skip


class CollectOptions(TypedDict, total=False):
    """The keywords of :func:`collect_codes` and :func:`collect_cells` (see :func:`collect_codes`; the
    request's are :class:`~polfair.core.passes.spec.PassOptions`).
    """

    on_missing: OnMissing
    engine: str
    codes: pl.DataFrame | None
    allow_many_groups: bool
    check_values: bool


def collect_cells(spec: Spec, *, relative: bool = False, **options: Unpack[CollectOptions]) -> pl.DataFrame:
    """Run the one pass for ``spec``, validate the data, and return the cell table.

    Parameters
    ----------
    spec
        From :func:`polfair.core.passes.spec.build_spec`.
    relative
        ``False``: the cell table in the data's units (Σw² of weights beyond about 1e±150 is an
        error). ``True``: for the reports, whose statistics are free of the weights' scale: weights
        beyond that range are held in units of a power of two (:func:`polfair.core.contract.weight_units`),
        and the table then has one more column, ``__pf_wexp`` (the exponent; only then).
    **options
        ``on_missing``, ``engine``, ``codes``, ``allow_many_groups``: as :func:`collect_codes`.

    Returns
    -------
    pl.DataFrame
        The cell table (schema in :mod:`polfair.core.passes.counts`).

    Raises
    ------
    InvalidInputError
        As :func:`collect_codes`; squared weights Float64 cannot hold (naming the weight column).

    Examples
    --------
    >>> import polars as pl
    >>> from polfair.core.passes.spec import build_spec
    >>> df = pl.DataFrame({"y": [1, 0], "p": [1, 1], "g": ["a", "b"]})
    >>> collect_cells(build_spec(df, y_true="y", y_pred="p", protected="g"))["fp"].to_list()
    [0.0, 1.0]
    """
    return cells_of_codes(collect_codes(spec, **options), spec, relative=relative)


def cells_of_codes(codes: pl.DataFrame, spec: Spec, *, relative: bool = False) -> pl.DataFrame:
    """The cell table of a checked code table of ``spec`` (:func:`collect_codes`): :func:`collect_cells`
    after the pass (also of an accumulator's merged code tables).
    """
    codes, k = weight_units(codes, w=W, up=W2_UP, down=W2_DOWN, out="__pf_w2", scaled=[WS, W1S],
                            weight_=spec.compiled.get("weight"), relative=relative)  # fmt: skip
    cells = pivot_codes(codes.lazy(), spec).collect(**_SMALL)  # small: no streaming overhead
    return cells.with_columns(pl.lit(k, pl.Int32).alias(WEIGHT_EXP)) if k else cells


def collect_codes(
    spec: Spec,
    *,
    on_missing: OnMissing = "warn",
    engine: str = "streaming",
    codes: pl.DataFrame | None = None,
    allow_many_groups: bool = False,
    check_values: bool = True,
    expand: bool = True,
) -> pl.DataFrame:
    """Run the one pass for ``spec`` and validate the data: the pass's code table (per cell and code).

    :func:`collect_cells` pivots it to the cell table. With ``exact_sums`` its sums are integers
    (UInt128), which merge exactly (:class:`polfair.engines.accumulator.FairnessAccumulator` keeps them).

    Parameters
    ----------
    spec
        From :func:`polfair.core.passes.spec.build_spec`.
    on_missing
        ``"warn"`` (default): warn with :class:`MissingValuesWarning` when rows have a null (or
        NaN) label, prediction, score or weight; ``"raise"``: raise instead; ``"ignore"``: say
        nothing. Either way such rows are counted in ``n_missing`` and excluded from every rate.
    engine
        Polars engine for the pass (``"streaming"`` default, ``"in-memory"``, ``"auto"``).
    codes
        The pass's result when it already ran elsewhere (a Spark/DuckDB engine,
        :func:`polfair.engines.narwhals.foreign_code_table`); then ``spec`` only describes it.
    allow_many_groups
        Accept a protected/``by`` column whose distinct values are a large share of the rows
        (more than 1000 values and more than half the rows): by default that is an error, since
        it is almost always a continuous column (an id, a score, a weight) passed by mistake.
    check_values
        Warn when ``favorable`` / ``unfavorable`` match no row
        (:func:`polfair.core.contract.check_problems`); ``False`` for one batch of a stream.
    expand
        With an estimated attribute: ``False`` returns the pass's result before
        :func:`~polfair.core.passes.estimated.expand_codes` (its sums per observed cell and code,
        rows not yet apportioned: what an accumulator adds up), after the same checks.

    Returns
    -------
    pl.DataFrame
        Keys, ``__pf_o`` (the outcome code), ``__pf_n`` and the sums of :func:`polfair.core.passes.counts.code_counts`
        (with an estimated attribute: the pass's result reshaped by
        :func:`polfair.core.passes.estimated.expand_codes` after the checks).

    Raises
    ------
    InvalidInputError
        Empty input; invalid values of any role (the input contract,
        :mod:`polfair.core.contract`: labels or predictions that are not labels, scores that are
        infinite or outside [0, 1], weights negative or infinite or, with ``exact_sums``, outside
        the fixed-point range); missing values with ``on_missing="raise"``. The message names the
        column, counts the rows and shows example values (fetched by a second query that only
        runs on this error path). A key column with too many distinct values (see
        ``allow_many_groups``); a weighted sum that overflows Float64; an input that cannot be
        read (a malformed CSV row, files of incompatible schemas: the message names the file or
        pattern, Polars' error is the ``__cause__``).

    Examples
    --------
    >>> import polars as pl
    >>> from polfair.core.passes.spec import build_spec
    >>> df = pl.DataFrame({"y": [1, 0], "g": ["a", "b"]})
    >>> collect_codes(build_spec(df, y_true="y", protected="g"))["__pf_n"].to_list()
    [1, 1]
    """
    check_on_missing(on_missing)
    if codes is None:
        codes = _run_pass(spec, engine)
    check_rows(codes, spec.compiled, count="__pf_n", on_missing=on_missing, examples=spec.examples,
               excluded_from="counted in n_missing and excluded from all rates", stacklevel=5, check_values=check_values,
               keys=None if allow_many_groups else [*spec.by, *spec.keys], problems=describe_code_problems(codes))  # fmt: skip
    if check_values:  # (a batch of an accumulator may lack a value that the whole data holds)
        _check_favorable_values(spec, codes)
    if spec.proba is not None:  # an estimated attribute: the ordinary code table of its cells
        expanded = expand_codes(codes.lazy(), spec).collect(**_SMALL)
        _check_overflow(spec, expanded)
        return expanded if expand else codes
    _check_overflow(spec, codes)
    return codes


#: Polars' streaming group-by pre-aggregates each thread's groups in a "hot" table that grows to at
#: most POLARS_MAX_HOT_TABLE_SIZE groups (an environment-only setting, below 10^5 by default); the
#: rows of every further group are buffered raw until the end. A pass over a high-cardinality key
#: (a 50k-value String attribute x sex x outcome codes: 4e5 groups) then holds every row, its keys
#: and its sum inputs: 2.1 GiB peak for 2e7 rows, 0.7-0.8 GiB with room for 2**20 groups, and no
#: slower (bench/pass_sums.py --big50k). The pass raises the cap while it runs, unless the user
#: set it; the cap only bounds memory (a hot group holds one row of sums), results are unchanged.
_HOT_TABLE_ENV = "POLARS_MAX_HOT_TABLE_SIZE"
_HOT_TABLE_GROUPS = 2**20
_hot_lock = threading.Lock()
_hot_users = 0  # passes running with the raised cap (the cap is set by the first, removed by the last)


@contextmanager
def _room_for_groups(engine: str) -> Iterator[None]:
    """Raise Polars' hot-table cap for a streaming pass (see ``_HOT_TABLE_ENV``), then restore it."""
    global _hot_users
    with _hot_lock:
        mine = engine != "in-memory" and (_hot_users > 0 or _HOT_TABLE_ENV not in os.environ)
        if mine:
            if _hot_users == 0:
                os.environ[_HOT_TABLE_ENV] = str(_HOT_TABLE_GROUPS)
                pl.Config.reload_env_vars()
            _hot_users += 1
    try:
        yield
    finally:
        if mine:
            with _hot_lock:
                _hot_users -= 1
                if _hot_users == 0:
                    os.environ.pop(_HOT_TABLE_ENV, None)
                    pl.Config.reload_env_vars()


#: A one-accumulator Σw² at least this large (or of no weight) holds Σw² to Float64's precision: even
#: 2**32 subnormal terms (weights below about 1e-154) lose less than 2**-80 of it.
ONE_SQUARE_MIN = 2.0**-958


def _one_square_holds(codes: pl.DataFrame) -> pl.DataFrame | None:
    """The pass's code table with its one Σw² accumulator as the two scaled ones
    (:func:`polfair.core.contract.weight_squares`: ``4^±300·Σw²``, exactly, as the two would have
    summed them), or ``None`` where some Σw² left the range one Float64 sum holds.

    Scaling by a power of two is exact and rounding is scale-free for normal numbers, so the two
    accumulators' sums are ``4^±300`` times the one's, bit for bit, wherever every term is normal;
    the check keeps every row whose Σw² is finite and at least :data:`ONE_SQUARE_MIN` (or whose
    Σw is 0): there the "up" form (finite below about 4e127) or the "down" form (normal above
    about 2e-127) is exact, and the report reads that one.
    """
    a, w = pl.col(W2_ONE), pl.col(W)
    ok = codes.select(((a.is_finite() & (a >= ONE_SQUARE_MIN)) | (w == 0) | w.is_null()).all()).item()
    if not ok:
        return None
    at = codes.columns.index(W2_ONE)
    order = [*codes.columns[:at], W2_UP, W2_DOWN, *codes.columns[at + 1 :]]  # the two's place in the table
    return codes.with_columns((a * 4.0**W2_SHIFT).alias(W2_UP), (a * 4.0**-W2_SHIFT).alias(W2_DOWN)).select(order)


def _run_pass(spec: Spec, engine: str) -> pl.DataFrame:
    """Collect the pass; a Polars error while reading the input names the file or pattern."""
    try:
        with _room_for_groups(engine):
            if spec.proba is not None:
                return proba_code_counts(spec).collect(engine=engine)  # type: ignore[call-overload]
            one = spec.weighted and not spec.exact
            codes = code_counts(spec, one_square=one).collect(engine=engine)  # type: ignore[call-overload]
            if one:
                held = _one_square_holds(codes)
                if held is not None:
                    return held
                # Σw² beyond the one accumulator's range (weights beyond about 1e±144): recount with the two
                return code_counts(spec).collect(engine=engine)  # type: ignore[call-overload]
            return codes
    except pl.exceptions.PolarsError as exc:
        where = source_name(spec.source) if spec.source is not None else None
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        msg = (
            f"reading the input{f' {where!r}' if where else ''} failed: {first} "
            f"({type(exc).__name__}). Check the file(s) and the column types; Polars' full error "
            "is attached as the cause"
        )
        raise InvalidInputError(msg) from exc


def _check_overflow(spec: Spec, codes: pl.DataFrame) -> None:
    """Exact sums: a cell of 2**31 rows or more is beyond them. Float64 sums: an infinite sum of
    counted rows (every counted weight is finite) is an overflow; both raise naming the fix.
    """
    if not spec.weighted or not codes.height:
        return
    if spec.exact:
        if int(codes["__pf_n"].max()) >= 2**31:  # type: ignore[arg-type]
            msg = (
                f"weight={_describe(spec, 'weight')}: a cell has 2**31 rows or more, beyond exact_sums=True "
                "(weights < 2**40, 128-bit integers); count the input in parts and merge the cell tables "
                "with polfair.merge_counts, or pass exact_sums=False"
            )
            raise InvalidInputError(msg)
        return
    counted = codes.filter(pl.col(CODE).is_in(COUNTED_CODES))
    check_finite_sums(counted, ["__pf_w", "__pf_w2", "__pf_ws", "__pf_w1s"], spec.compiled.get("weight"))


def _check_favorable_values(spec: Spec, codes: pl.DataFrame) -> None:
    """A value of a ``favorable`` list that matches no row is named (a :class:`ReferenceWarning`, as
    a ``privileged`` value that matches no group), from the pass's per-value counts (:data:`FV`);
    a list none of whose values occurs is the contract's own warning (no favorable row).
    """
    fvs = favorable_value_columns(codes.columns)
    c = spec.compiled.get("y_true")
    if not fvs or c is None or c.labels is None:
        return
    rows = [int(codes[f].sum() or 0) for f in fvs]
    absent = [v for v, n in zip(c.labels[0], rows) if n == 0]
    if absent and len(absent) < len(rows):
        from polfair.core.contract.check import seen_values
        from polfair.core.values import absent_values_message
        from polfair.exceptions import ReferenceWarning

        fav = list(c.labels[0])
        msg = absent_values_message(f"{c.role}={c.column!r}, favorable={fav!r}", absent, c.column,
                                    seen_values(c, spec.examples), "the favorable outcome is the other values only")  # fmt: skip
        warnings.warn(msg, ReferenceWarning, stacklevel=6)


def _describe(spec: Spec, role: str) -> str:
    c = spec.compiled.get(role)
    return "?" if c is None else repr(c.column)
