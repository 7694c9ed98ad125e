"""Stage 2, *run*: execute the one pass for a :class:`~polfair.core.spec.Spec`, check the data, return the cell table.

The checks read only the pass's small result (the outcome-code table): invalid labels, predictions,
scores and weights raise :class:`~polfair.exceptions.InvalidInputError` with examples fetched by a
second query that runs only on that error path; null labels/predictions/scores/weights are counted
in ``n_missing`` and reported by a :class:`~polfair.exceptions.MissingValuesWarning`.
"""

from __future__ import annotations

import os
import threading
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

import polars as pl

from polfair.core._args import SMALL_COLLECT as _SMALL
from polfair.core._typing import OnMissing
from polfair.core.counts import code_counts, describe_code_problems, pivot_codes
from polfair.core.inputs import source_name
from polfair.core.spec import MAX_WEIGHT, Spec, check_on_missing
from polfair.exceptions import InvalidInputError, MissingValuesWarning

__all__ = ["check_not_empty", "collect_cells"]


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
    if total == 0:
        msg = "the input has no rows: there is nothing to audit (check filters applied before the report)"
        raise InvalidInputError(msg)


def collect_cells(
    spec: Spec,
    *,
    on_missing: OnMissing = "warn",
    engine: str = "streaming",
    codes: pl.DataFrame | None = None,
    allow_many_groups: bool = False,
) -> pl.DataFrame:
    """Run the one pass for ``spec``, validate the data, and return the cell table.

    Parameters
    ----------
    spec
        From :func:`polfair.core.spec.build_spec`.
    on_missing
        ``"warn"`` (default): warn with :class:`MissingValuesWarning` when rows have a null label,
        prediction, score or weight; ``"raise"``: raise instead; ``"ignore"``: say nothing. Either
        way such rows are counted in ``n_missing`` and excluded from every rate.
    engine
        Polars engine for the pass (``"streaming"`` default, ``"in-memory"``, ``"auto"``).
    codes
        The pass's result when it already ran elsewhere (a Spark/DuckDB engine,
        :func:`polfair.engines.narwhals.foreign_code_table`); then ``spec`` only describes it.
    allow_many_groups
        Accept a protected/``by`` column whose distinct values are a large share of the rows
        (more than 1000 values and more than half the rows): by default that is an error, since
        it is almost always a continuous column (an id, a score, a weight) passed by mistake.

    Returns
    -------
    pl.DataFrame
        The cell table (schema in :mod:`polfair.core.counts`).

    Raises
    ------
    InvalidInputError
        Empty input; labels neither favorable nor unfavorable (with ``unfavorable=``); predicted
        labels likewise; scores NaN or outside [0, 1]; weights negative, NaN or infinite; missing
        values with ``on_missing="raise"``. The message names the column, counts the rows and
        shows example values (fetched by a second query that only runs on this error path).
        A key column with too many distinct values (see ``allow_many_groups``); a weighted sum
        that overflows Float64 (every weight finite, their sum infinite); an input that cannot
        be read (a malformed CSV row, files of incompatible schemas: the message names the file
        or pattern, Polars' error is the ``__cause__``).
    """
    check_on_missing(on_missing)
    if codes is None:
        codes = _run_pass(spec, engine)
    total = int(codes["__pf_n"].sum() or 0)
    check_not_empty(total)
    if not allow_many_groups:
        _check_cardinality(spec, codes, total)
    problems = describe_code_problems(codes)
    if not spec.has_predictions:  # labels only: the "prediction" mirrors the label, say nothing of it
        problems["null_prediction"] = problems["invalid_prediction"] = 0
    _raise_invalid(spec, problems)
    _check_overflow(spec, codes)
    missing = {k: v for k, v in problems.items() if k.startswith("null_") and v}
    if missing and on_missing != "ignore":
        parts = ", ".join(f"{v} with a null {k[5:]}" for k, v in missing.items())
        cols = ", ".join(f"{r}={_describe(spec, r)}" for r in _roles_for(missing))
        msg = (
            f"{parts} (of {total} rows): these rows are counted in n_missing and excluded from all "
            f"rates ({cols}). Fill or drop them before the report to silence this, or pass "
            "on_missing='ignore'"
        )
        if on_missing == "raise":
            raise InvalidInputError(msg.replace("Fill or drop", "on_missing='raise': fill or drop"))
        warnings.warn(msg, MissingValuesWarning, stacklevel=3)
    return pivot_codes(codes.lazy(), spec).collect(**_SMALL)  # small: no streaming overhead


#: A key with more distinct values than this, that are also more than half the rows, is an error.
MANY_GROUPS = 1000


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


def _run_pass(spec: Spec, engine: str) -> pl.DataFrame:
    """Collect the pass; a Polars error while reading the input names the file or pattern."""
    try:
        with _room_for_groups(engine):
            return code_counts(spec).collect(engine=engine)  # type: ignore[call-overload]
    except pl.exceptions.PolarsError as exc:
        where = source_name(spec.source) if spec.source is not None else None
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        msg = (
            f"reading the input{f' {where!r}' if where else ''} failed: {first} "
            f"({type(exc).__name__}). Check the file(s) and the column types; Polars' full error "
            "is attached as the cause"
        )
        raise InvalidInputError(msg) from exc


def _check_cardinality(spec: Spec, codes: pl.DataFrame, total: int) -> None:
    if 2 * codes.height <= total:  # no key can have more distinct values than the code table has rows
        return
    for k in (*spec.by, *spec.keys):
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


def _check_overflow(spec: Spec, codes: pl.DataFrame) -> None:
    """Every weight is finite (infinite ones are invalid rows), so an infinite sum is an overflow."""
    if spec.weighted and codes.height and int(codes["__pf_n"].max()) >= 2**31:  # type: ignore[arg-type]
        msg = (
            f"weight={_describe(spec, 'weight')}: a cell has 2**31 rows or more, beyond the exact "
            "weighted sums (weights < 2**40, 128-bit integers); count the input in parts and merge the cell "
            "tables with polfair.merge_counts"
        )
        raise InvalidInputError(msg)
    for col in ("__pf_w", "__pf_ws", "__pf_w1s"):
        if col in codes.columns and codes.schema[col].is_float() and codes.get_column(col).is_infinite().any():
            msg = (
                f"weight={_describe(spec, 'weight')}: the weighted sum of a group overflows Float64 "
                "(each weight is finite, their sum is not); rescale the weights, e.g. divide them "
                "by their mean"
            )
            raise InvalidInputError(msg)


def _roles_for(kinds: Mapping[str, int]) -> list[str]:
    role = {"label": "y_true", "prediction": "y_pred", "weight": "weight", "score": "y_score"}
    return list(dict.fromkeys(role[k.split("_", 1)[1]] for k in kinds))


def _describe(spec: Spec, role: str) -> str:
    e = spec.roles.get(role)
    if e is None and role == "y_pred":
        e = spec.roles.get("y_score")
    if e is None:
        return "?"
    try:
        return repr(e.meta.output_name())
    except Exception:
        return str(e)


def _examples(spec: Spec, role: str, cond: pl.Expr) -> str:
    """A few offending values, fetched by a second query that runs only on this error path."""
    if spec.source is None:  # the pass ran in another engine (Spark, DuckDB): counts only
        return "(see the column in its engine)"
    e = spec.roles[role]
    rows = spec.source.select(e.alias("v"), cond.alias("bad")).filter(pl.col("bad")).select("v")
    return str(rows.unique().head(5).collect()["v"].to_list())


def _raise_invalid(spec: Spec, problems: dict[str, int]) -> None:
    fav, unf = list(spec.favorable), list(spec.unfavorable or [])
    if problems["invalid_label"]:
        e = spec.roles["y_true"]
        bad = e.is_not_null() & ~e.is_in(fav + unf)
        msg = (
            f"y_true={_describe(spec, 'y_true')}: {problems['invalid_label']} rows have labels that are "
            f"neither favorable {fav} nor unfavorable {unf}; found e.g. {_examples(spec, 'y_true', bad)}. "
            "Map them to one of the two, filter them out, or drop unfavorable= to treat every "
            "non-favorable label as unfavorable"
        )
        raise InvalidInputError(msg)
    if problems["invalid_prediction"]:
        e = spec.roles["y_pred"]
        bad = e.is_not_null() & ~e.is_in(fav + unf)
        msg = (
            f"y_pred={_describe(spec, 'y_pred')}: {problems['invalid_prediction']} rows have predicted "
            f"labels that are neither favorable {fav} nor unfavorable {unf}; found e.g. "
            f"{_examples(spec, 'y_pred', bad)}. Map them to one of the two or drop unfavorable="
        )
        raise InvalidInputError(msg)
    if problems["invalid_score"]:
        s = spec.roles["y_score"].cast(pl.Float64)
        bad = s.is_nan() | (s < 0) | (s > 1)
        msg = (
            f"y_score={_describe(spec, 'y_score')}: {problems['invalid_score']} rows have scores that are "
            f"NaN or outside [0, 1]; found e.g. {_examples(spec, 'y_score', bad)}. Scores are "
            "probabilities of the favorable label: rescale them (e.g. a sigmoid of logits) or clip"
        )
        raise InvalidInputError(msg)
    if problems["invalid_weight"]:
        w = spec.roles["weight"].cast(pl.Float64)
        bad = w.is_nan() | w.is_infinite() | (w < 0) | (w >= MAX_WEIGHT)
        msg = (
            f"weight={_describe(spec, 'weight')}: {problems['invalid_weight']} rows have weights that "
            f"are negative, NaN or infinite (or >= 2**40 ~ 1.1e12); found e.g. "
            f"{_examples(spec, 'weight', bad)}. Weights must be finite, >= 0 and below 2**40 (rescale "
            "huge weights, e.g. divide them by their mean: every rate is unchanged)"
        )
        raise InvalidInputError(msg)
