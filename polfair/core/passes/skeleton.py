"""The one pass skeleton, on the :class:`~polfair.core.contract.Frame` protocol.

Every counting pass of polfair has the same shape::

    roles -> keys -> outcome code -> [estimated groups] -> aggregate -> code problems
          -> check problems -> not-empty -> finite sums

A task (classification cells, regression moments, score histograms, slices, proxies) compiles its
own roles into an outcome code and adds its own aggregations; the steps around them are written
here once:

* :class:`~polfair.core.passes.spec.PassOptions`: the part of a request a pass reads (roles, keys,
  the missing-value policy, the engine, an estimated attribute), every pass's one options type (the
  request of :mod:`polfair.core.request` is one);
* :func:`key_columns` / :func:`pass_keys` (written in :mod:`polfair.core.passes.spec`, the stage
  that checks a request's columns) and :func:`feature_columns`: the ``by``/``protected`` keys and the
  ``features`` role, checked once for every room and engine;
* :func:`estimated_stage` and :func:`group_shares`: the estimated groups (``protected_proba``) as a
  stage of the pass: the probabilities are compiled by the contract, their problems counted in the
  same ``group_by``, and each group's share of a row's weight is an expression every task sums;
  :func:`polfair.core.passes.estimated.expand_sums` reshapes the small result afterwards;
* :func:`aggregate`: the one ``group_by`` through the frame adapter, its row count and code typed;
* :func:`check_rows`: the post-pass judgement of the small result (not-empty, too many groups, the
  contract's one :func:`~polfair.core.contract.check_problems`); finite sums are
  :func:`polfair.core.contract.check_finite_sums`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace
from typing import Any

import polars as pl

from polfair.core import contract
from polfair.core._args import as_list
from polfair.core.contract import CODE, Column, Compiled
from polfair.core.passes.counts import check_counted
from polfair.core.passes.spec import PassOptions, check_key_names, key_columns, pass_keys
from polfair.core.proba import (
    GROUP_INDEX,
    ProbaSpec,
    compile_proba,
    group_weights,
    parse_protected_proba,
    proba_columns,
)
from polfair.exceptions import InvalidInputError, PolfairError

__all__ = [
    "MANY_GROUPS",
    "aggregate",
    "check_cardinality",
    "check_not_empty",
    "check_rows",
    "estimated_stage",
    "feature_columns",
    "group_shares",
    "key_columns",
    "pass_keys",
    "problem_columns",
]


def feature_columns(frame: Any, features: Any, *, example: str, reserved: Sequence[str] = ()) -> list[Column]:
    """The ``features`` role, checked once for every room (slices, proxies).

    Parameters
    ----------
    frame
        The :class:`~polfair.core.contract.Frame`.
    features
        One column argument or a list of them.
    example
        What the room's features are, for the message of an empty list (``"column to slice on"``).
    reserved
        Names of the room's output columns that a feature may not take.

    Returns
    -------
    list of Column
        One checked column per feature (dtypes a key accepts).

    Raises
    ------
    PolfairError
        No feature, a feature given twice, or named like one of ``reserved``.

    Examples
    --------
    >>> import polars as pl
    >>> from polfair.core.contract import PolarsFrame
    >>> [c.name for c in feature_columns(PolarsFrame(pl.DataFrame({"a": [1]})), "a", example="column")]
    ['a']
    """
    cols = [frame.column(f, "features") for f in as_list(features)]
    if not cols:
        msg = f"features must name at least one {example}"
        raise PolfairError(msg)
    names = [c.name for c in cols]
    if len(set(names)) != len(names):
        msg = f"features are given twice: {names}"
        raise PolfairError(msg)
    clash = [n for n in names if n in reserved]
    if clash:
        msg = f"features {clash} are named like columns of the result ({', '.join(reserved)}): rename them"
        raise PolfairError(msg)
    for c in cols:
        contract.check_dtype("features", c)
    return cols


def estimated_stage(frame: Any, request: PassOptions, names: Sequence[str], compiled: dict[str, Compiled], *,
                    weighted: bool, has_scores: bool, reserved: Collection[str] = ()) -> ProbaSpec | None:  # fmt: skip
    """The estimated attribute of a request, compiled for the pass (``None`` without ``protected_proba``).

    Its key comes after the observed ones (``names``) and is checked against them and ``reserved``;
    its two invalid kinds join ``compiled`` (in place), so the pass's one post-pass check judges its
    probabilities (:func:`polfair.core.contract.code_problems` reads the problem counts of
    :func:`problem_columns`).
    """
    if request.protected_proba is None:
        return None
    ps = parse_protected_proba(request.protected_proba, request.proba_assignment, request.proba_tolerance)
    check_key_names([], [*names, ps.attribute], also_reserved=sorted(reserved))
    cols = [frame.column(e, "protected_proba") for e in ps.exprs]
    ps = compile_proba(frame.eng, ps, cols, weighted=weighted, has_scores=has_scores)
    assert ps.membership is not None
    compiled |= ps.membership.checks
    return ps


def problem_columns(eng: Any, ps: ProbaSpec) -> dict[str, Any]:
    """The per-row problem counts of an estimated attribute (summed by the pass) and, argmax, its group index."""
    return proba_columns(eng, replace(ps, assignment="argmax"), None, None)


def group_shares(eng: Any, ps: ProbaSpec, w: Any | None) -> tuple[list[Any], list[Any]]:
    """Each group's share of a row, for every assignment: ``(w·p_g, p_g)`` per group (``ps.labels`` order).

    ``"weighted"``: the row's normalised probabilities (:func:`polfair.core.proba.group_weights`);
    ``"argmax"``: 1 for the likeliest group (the first of ties), 0 for the others. Null where the
    row's probabilities are not usable (the row is in no group; its count is a problem of the pass).
    """
    if ps.assignment == "weighted":
        return group_weights(ps, w)
    index = problem_columns(eng, ps)[GROUP_INDEX]
    one = [eng.ns.when(index == eng.small(i)).then(eng.lit(1.0)).otherwise(eng.lit(0.0)) for i in range(len(ps.labels))]
    return [p if w is None else w * p for p in one], one


def check_not_empty(total: int) -> None:
    """Raise when a pass saw no rows: the one "nothing to audit" error of every counting pass.

    Parameters
    ----------
    total
        Rows the pass counted (valid, missing and invalid together).

    Raises
    ------
    InvalidInputError
        ``total == 0``.

    Examples
    --------
    >>> check_not_empty(3)
    >>> check_not_empty(0)
    Traceback (most recent call last):
    ...
    polfair.exceptions.InvalidInputError: the input has no rows: there is nothing to audit (check filters applied before the report)
    """
    check_counted(total)



#: A key with more distinct values than this, that are also more than half the rows, is an error.
MANY_GROUPS = 1000


def check_cardinality(keys: list[str], codes: pl.DataFrame, total: int) -> None:
    """The many-groups guard: raise when a key has more than :data:`MANY_GROUPS` distinct values
    that are also more than half of the ``total`` rows (a continuous column, an id), whatever its
    dtype: a Float key with a few values (0.0/1.0) is a group column like an integer one.

    Parameters
    ----------
    keys
        The key columns of ``codes`` (``by`` and protected).
    codes
        A pass's result grouped by the keys (any table with one row per observed key combination
        at least).
    total
        Rows the pass read.

    Raises
    ------
    InvalidInputError
        Naming the column, its distinct values, and the fix (bin it, or ``allow_many_groups=True``).

    Examples
    --------
    >>> import polars as pl
    >>> check_cardinality(["g"], pl.DataFrame({"g": [0.0, 1.0]}), 10)
    """
    if 2 * codes.height <= total:  # no key can have more distinct values than the code table has rows
        return
    for k in keys:
        if k not in codes.columns:
            continue
        distinct = codes.get_column(k).n_unique()
        if distinct > MANY_GROUPS and 2 * distinct > total:
            msg = (
                f"protected/by column {k!r} has {distinct} distinct values in {total} rows: one group "
                "per value is almost surely a mistake (an id, score or weight column?). Bin it, e.g. "
                f"pl.col({k!r}).bin_intervals([...], labels=[...]) or pl.when(...).then(...), or pass "
                "allow_many_groups=True to audit every value"
            )
            raise InvalidInputError(msg)



def aggregate(frame: Any, columns: Mapping[str, Any], group: Sequence[str], aggs: Callable[[Any], list[Any]], *,
              count: str, engine: str = "auto", stages: Any = None) -> pl.DataFrame:  # fmt: skip
    """The pass's one ``group_by`` (:meth:`~polfair.core.contract.Frame.aggregate`), its row count Int64 and code Int32."""
    out = frame.aggregate(columns, list(group), aggs, engine, stages=stages)
    return out.with_columns(pl.col(count).cast(pl.Int64), pl.col(CODE).cast(pl.Int32))


def check_rows(
    out: pl.DataFrame,
    compiled: Mapping[str, Compiled],
    *,
    count: str,
    on_missing: str,
    examples: Callable[[Compiled], list[Any]] | None,
    excluded_from: str,
    stacklevel: int,
    keys: Sequence[str] | None = None,
    check: bool = True,
    check_values: bool = True,
    problems: Mapping[str, int] | None = None,
    not_empty: bool = True,
) -> int:
    """The post-pass judgement of a pass's small result; returns its rows (valid, missing and invalid).

    In order: no row is an error (:func:`~polfair.core.passes.collect.check_not_empty`); ``keys``
    with about one group per row are an error (:func:`~polfair.core.passes.collect.check_cardinality`;
    ``None`` skips it); the contract's one check of the problem counts
    (:func:`~polfair.core.contract.check_problems`: invalid values raise, missing ones warn or raise).
    ``check=False`` keeps only the cardinality check; ``not_empty=False`` accepts no row (a table of
    counts that may be empty, merged with others later).

    Examples
    --------
    >>> import polars as pl
    >>> check_rows(pl.DataFrame({CODE: [5], "n": [3]}), {}, count="n", on_missing="warn", examples=None,
    ...            excluded_from="left out", stacklevel=2)
    3
    """
    total = int(out[count].sum() or 0)
    if check and not_empty:
        check_not_empty(total)
    if keys is not None:
        check_cardinality(list(keys), out, total)
    if check:
        contract.check_problems(contract.code_problems(out, count) if problems is None else problems, compiled,
                                total=total, on_missing=on_missing, examples=examples, excluded_from=excluded_from,
                                stacklevel=stacklevel + 1, check_values=check_values)  # fmt: skip
    return total
