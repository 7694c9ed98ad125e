"""The pass of an estimated attribute (a stage of the one pass), and the reshape of its small result into ordinary cells.

:mod:`polfair.core.proba` explains the estimators. Here:

* :func:`code_counts`: the pass. One ``group_by(by + observed keys + outcome code)`` (argmax: plus
  the likeliest group's index) that aggregates the usual row count and, per group ``g`` of the
  estimated attribute, ``Σ w·p_g``, ``Σ w²·p_g``, ``Σ p_g`` (with a weight) and ``Σ w·p_g·s``,
  ``Σ w·p_g·(1−s)`` (with scores) as extra columns, and the rows whose probabilities are missing
  or invalid (the contract's check, :func:`polfair.core.contract.code_problems`). Rows are not
  exploded: the input is read once, as always.
* :func:`expand_codes`: the small result unpivoted into the **ordinary code table** of the cells
  ``(by, observed keys, estimated attribute)``, so :func:`polfair.core.passes.counts.pivot_codes` makes the
  ordinary cell table and every metric, interval, roll-up and output follows unchanged.

What the cell table of an estimated group holds (``proba_assignment="weighted"``):

* the weighted counts (``w, tp, fp, tn, fn, gtp, ...``) are ``Σ w·p_g`` over the rows of each
  outcome: every rate is the weighted estimator, exactly;
* ``tp_w2 ... fn_w2`` are ``Σ w²·p_g`` (summed in the contract's two accumulators, like every Σw²,
  so weights of 1e-200 and 1e200 give the results of weights near 1): the Kish effective size of a group is then
  ``(Σ w·p_g)² / Σ w²·p_g``, the expected Kish size of the group when memberships are drawn from
  the probabilities. It is chosen because it **adds up**: summed over the groups of the estimated
  attribute it is ``Σ w²``, so observed-attribute and population rows (roll-ups over the
  estimated attribute) keep their exact effective sizes; ``Σ (w·p_g)²`` (the weighted estimator's
  own sampling variance, birdie's analytical standard error) would shrink them. For the estimated
  groups it is conservative: ``bench/coverage.py --bisg`` measures the coverage;
* the row counts (``n, n_missing, n_invalid, tp_n, ...``, UInt64) are the rows **apportioned** to
  the group by their probabilities: within each row of the pass's result (one ``by`` value,
  observed cell and outcome), the rows are split over the groups in proportion to ``Σ p_g`` and
  rounded to whole rows by systematic rounding (:func:`apportion`, with deterministic offsets
  spread over [0, 1)), so they add up to the input's rows over the groups (every row is
  accounted for once), each is within one row of its share, and a group's ``n`` is close to its
  expected size ``Σ p_g`` (the roundings do not all favour the likeliest group). aif360's
  unweighted entropy indices read them (between-group indices are then approximate; the
  all-individuals indices, which sum over every group, are exact). The rounding is done once,
  on the pass's result over all the rows: an accumulator adds the batches' un-apportioned results
  (:func:`merge_codes`) and apportions their sums, so its row counts are one pass's;
* rows whose probabilities are missing (a null or NaN among them) are in the estimated
  attribute's **null group**, counted in its ``n_missing``; rows with invalid probabilities in its
  ``n_invalid`` (``fairness_report`` raises on them before).

With ``proba_assignment="argmax"`` the pass groups by the likeliest group's index instead, and
the cell table is the ordinary one of that imputed attribute (whole counts, ``Σw²``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import polars as pl

from polfair.core._args import SMALL_COLLECT
from polfair.core.contract import (
    CODE,
    FLAG_BAD_WEIGHT,
    FLAG_NULL_WEIGHT,
    PROBA_BAD,
    PROBA_NULL,
    PROBA_SUM,
    W2_SHIFT,
    weight_squares,
)
from polfair.core.passes.counts import BUCKET, CODE_ROWS, W2_DOWN, W2_UP, checked_polarity, grouped_by_code, pivot_codes
from polfair.core.passes.spec import W1S, WS, Spec, W, build_spec
from polfair.core.proba import GROUP_INDEX, ProbaSpec, parse_protected_proba, proba_sums, q_column  # noqa: F401 (doctests)

__all__ = [
    "apportion", "cell_table", "code_counts", "expand_codes", "expand_sums", "merge_codes", "pass_keys", "row_offset",
]  # fmt: skip

_R, _L, _GI, _SHARE, _FIXED, _FLAG = "__pf_r", "__pf_list", "__pf_gi", "__pf_share", "__pf_fixed", "__pf_flag"


def _proba(spec: Spec, *, compiled: bool = True) -> ProbaSpec:
    """The estimated attribute of ``spec`` (``compiled``: its probabilities compiled for a pass)."""
    ps = spec.proba
    assert ps is not None and (ps.membership is not None or not compiled), "not a spec with an estimated attribute"
    return ps


def pass_keys(spec: Spec) -> list[str]:
    """The keys of the pass of an estimated attribute: ``by``, the observed protected keys, the
    jackknife bucket (``cluster=``), and for argmax the likeliest group's index.
    """
    ps = _proba(spec, compiled=False)
    return [*spec.by, *spec.keys[:-1], *([BUCKET] if spec.bucket else []),
            *([GROUP_INDEX] if ps.assignment == "argmax" else [])]  # fmt: skip


def code_counts(spec: Spec) -> pl.LazyFrame:
    """The pass over the data of a spec with an estimated attribute (Polars; nothing runs yet).

    Parameters
    ----------
    spec
        From :func:`polfair.core.passes.spec.build_spec` with ``protected_proba``.

    Returns
    -------
    pl.LazyFrame
        Per (``by``, observed keys, [bucket], [group index], outcome code): ``__pf_n`` and the sums
        of :func:`polfair.core.proba.proba_sums` (argmax: also the ordinary weight sums). Turn it
        into the ordinary code table with :func:`expand_codes`.
    """
    ps = _proba(spec)
    aggs = [pl.len().cast(pl.UInt64).alias(CODE_ROWS)]
    aggs += [pl.col(c).cast(pl.UInt64).sum() for c in (PROBA_NULL, PROBA_BAD, PROBA_SUM)]
    aggs += [pl.col(c).sum() for c in proba_sums(ps)[3:]]
    if ps.assignment == "argmax":  # the ordinary sums of the imputed attribute's cells
        if spec.weighted:
            up, down = weight_squares(pl.col(W))  # Σw² in the contract's two accumulators
            aggs += [pl.col(W).sum(), up.sum().alias(W2_UP), down.sum().alias(W2_DOWN)]
        if spec.has_scores:
            aggs += [pl.col(WS).sum(), pl.col(W1S).sum()]
    observed = spec.keys[:-1]
    pass_spec = replace(spec, keys=(*observed, *([GROUP_INDEX] if ps.assignment == "argmax" else [])),
                        fold=ps.fold, proba=None)  # fmt: skip
    return grouped_by_code(pass_spec, aggs)


def merge_codes(tables: Sequence[pl.DataFrame], spec: Spec) -> pl.DataFrame:
    """The pass's results (:func:`code_counts`) over parts of the data as its result over all of them.

    Every column but the keys is a sum (row and problem counts, ``Σ p_g``, ``Σ w·p_g``, ...), so the
    merge adds them per (``by``, observed keys, [bucket], outcome code): the rows are still not
    apportioned. :func:`expand_codes` of the merged table apportions them once, as it does the
    one pass's result, and gives the same whole rows (up to the summation order of the shares,
    about 1e-16 relative: a row lands elsewhere only where a bound of :func:`apportion` is that
    close to a whole number). An accumulator keeps this table (:class:`polfair.FairnessAccumulator`).

    Parameters
    ----------
    tables
        Results of :func:`code_counts` of one ``spec`` (or specs of the same request), same columns.
    spec
        Their spec (``spec.proba`` set).

    Returns
    -------
    pl.DataFrame
        The columns of ``tables[0]``, one row per (pass keys, code), sorted by them.

    Examples
    --------
    >>> import polars as pl
    >>> from polfair.core.passes.collect import collect_codes
    >>> df = pl.DataFrame({"y": [1, 0, 1], "p": [1, 1, 0], "pa": [1.0, 0.5, 0.0]})
    >>> spec = build_spec(df, y_true="y", y_pred="p", protected_proba={"g": {"a": "pa", "b": None}})
    >>> parts = [collect_codes(spec, codes=None, expand=False, check_values=False)] * 2
    >>> merge_codes(parts, spec)["__pf_n"].to_list()
    [2, 2, 2]
    """
    keys = [*pass_keys(spec), CODE]
    first = tables[0]
    both = pl.concat([first, *[t.select(first.columns) for t in tables[1:]]], how="vertical_relaxed")
    return both.group_by(keys).agg(pl.exclude(keys).sum()).select(first.columns).sort(keys, nulls_last=False)


#: The golden ratio's fractional part: the offsets of :func:`apportion` are ``frac(0.5 + i·φ⁻¹)``,
#: a low-discrepancy sequence over the rows split (sorted by their keys, so deterministic).
_PHI = 0.6180339887498949


def row_offset(index: pl.Expr) -> pl.Expr:
    """The rounding offset in [0, 1) of the ``index``-th row split by :func:`apportion` (deterministic).

    Examples
    --------
    >>> import polars as pl
    >>> [round(x, 3) for x in pl.select(row_offset(pl.int_range(3))).to_series().to_list()]
    [0.5, 0.118, 0.736]
    """
    x = 0.5 + index.cast(pl.Float64) * _PHI
    return x - x.floor()


def apportion(total: pl.Expr, share: pl.Expr, over: str, offset: pl.Expr) -> pl.Expr:
    """Whole rows per group: ``total`` rows split in proportion to ``share`` within each ``over``
    group of rows (the groups in row order), by systematic rounding with the row's ``offset``.

    Group ``g`` gets ``b_g − b_{g−1}`` rows, ``b_g = floor(total · C_g / C + offset)`` with ``C_g``
    the cumulative share up to ``g`` and ``C`` the total share (``b = total`` from the last group on),
    so the counts add up to ``total`` exactly, each is within one row of its exact share
    ``total · share / C``, and over many rows split with offsets spread over [0, 1)
    (:func:`row_offset`) a group's total stays close to the sum of its exact shares: with rows of
    one, each row goes to one group with probabilities proportional to the shares, not always to
    the likeliest (largest-remainder rounding would, and would inflate the largest group).

    Parameters
    ----------
    total
        The rows to split (an integer, the same on every row of an ``over`` group).
    share
        Each group's share (any non-negative scale; all zero: nothing is assigned).
    over
        The column that identifies the rows split together.
    offset
        A Float64 in [0, 1), the same on every row of an ``over`` group.

    Returns
    -------
    pl.Expr
        Int64 counts, named as ``total``.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"r": [0, 0, 0, 1, 1], "n": [10, 10, 10, 3, 3], "s": [1.0, 1.0, 1.0, 0.5, 0.5],
    ...                    "u": [0.5, 0.5, 0.5, 0.1, 0.1]})
    >>> df.select(apportion(pl.col("n"), pl.col("s"), "r", pl.col("u")))["n"].to_list()
    [3, 4, 3, 1, 2]
    """
    s = share.fill_null(0.0).clip(lower_bound=0.0)
    whole, cum = s.sum().over(over), s.cum_sum().over(over)
    n = total.cast(pl.Float64)
    bound = (
        pl.when(whole <= 0).then(0.0)
        .when(cum >= whole * (1.0 - 1e-12)).then(n)  # from the last group with a share on: every row
        .otherwise((n * cum / whole + offset).floor().clip(0.0, n))
    )  # fmt: skip
    return (bound - bound.shift(1, fill_value=0.0).over(over)).cast(pl.Int64).alias(total.meta.output_name())


def _sum_columns(spec: Spec) -> list[str]:
    """The code table's sum columns that :func:`polfair.core.passes.counts.pivot_codes` reads for ``spec``."""
    return [*([W, W2_UP, W2_DOWN] if spec.weighted else []), *([WS, W1S] if spec.has_scores else [])]


def expand_codes(codes: pl.LazyFrame, spec: Spec) -> pl.LazyFrame:
    """The pass's result (:func:`code_counts`, or a Spark/DuckDB pass) as the ordinary code table.

    Runs on the small result only. Per row of ``codes``, each group of the estimated attribute gets
    its sums (``Σ w·p_g`` as ``Σw``, ``Σ w²·p_g`` as ``Σw²``, ``Σ w·p_g·s``, ``Σ w·p_g·(1−s)``) and its
    apportioned rows (:func:`apportion` of the rows with usable probabilities by ``Σ p_g``); rows
    whose probabilities are missing go to the null group with a missing outcome code, rows whose
    probabilities are invalid with an invalid one. Argmax: the group index becomes the attribute.

    Parameters
    ----------
    codes
        The pass's result (lazy).
    spec
        Its spec (``spec.proba`` set).

    Returns
    -------
    pl.LazyFrame
        Columns ``by``, the protected keys with the estimated attribute last (Enum of its labels),
        ``bucket`` (with ``cluster=``), the outcome code, ``__pf_n`` (UInt64) and the sums
        :func:`polfair.core.passes.counts.pivot_codes` reads; one row per (cell, code).
    """
    ps = _proba(spec, compiled=False)  # the small result only: the labels and the sums' layout
    keep = [k for k in pass_keys(spec) if k != GROUP_INDEX]
    k = len(ps.labels)
    sums = _sum_columns(spec)
    n = pl.col(CODE_ROWS).cast(pl.Int64)
    bad = [pl.col(c).fill_null(0).cast(pl.Int64) for c in (PROBA_NULL, PROBA_BAD, PROBA_SUM)]
    valid = n - bad[0] - bad[1] - bad[2]
    zero = pl.lit(0.0)

    def item(index: pl.Expr, share: pl.Expr, rows: pl.Expr | None, flag: int, values: dict[str, pl.Expr]) -> pl.Expr:
        """One output row per input row and group: the group's index (null: the null group), its
        share of the usable rows (apportioned) or its own row count, the code's added flag, the sums.
        """
        return pl.struct(index.alias(_GI), share.alias(_SHARE), (rows if rows is not None else pl.lit(None, pl.Int64))
                         .alias(_FIXED), pl.lit(flag, pl.UInt8).alias(_FLAG), *[v.alias(c) for c, v in values.items()])  # fmt: skip

    # rows whose probabilities are missing / invalid: the null group, with a missing / invalid code
    null_items = [item(pl.lit(None, pl.UInt8), zero, bad[0], FLAG_NULL_WEIGHT * 16, dict.fromkeys(sums, zero)),
                  item(pl.lit(None, pl.UInt8), zero, bad[1] + bad[2], FLAG_BAD_WEIGHT * 16, dict.fromkeys(sums, zero))]  # fmt: skip
    if ps.assignment == "weighted":  # every group gets its sums and its share of the rows
        parts = {W: "", W2_UP: "w2up", W2_DOWN: "w2dn", WS: "s", W1S: "1s"}
        share = "n" if ps.weighted else ""

        def part(i: int, c: str) -> pl.Expr:  # unweighted: Σw²·p is Σp, in the accumulators' scales
            if not ps.weighted and c in (W2_UP, W2_DOWN):
                return pl.col(q_column(i)) * 4.0 ** (W2_SHIFT if c == W2_UP else -W2_SHIFT)
            return pl.col(q_column(i, parts[c]))

        items = [item(pl.lit(i, pl.UInt8), pl.col(q_column(i, share)), None, 0, {c: part(i, c) for c in sums})
                 for i in range(k)]  # fmt: skip
    else:  # argmax: the group index is the key (null on the unusable rows, which the null items hold)
        index = pl.col(GROUP_INDEX).to_physical().cast(pl.UInt8)  # the folded pass decodes it to an Enum
        items = [item(index, zero, pl.when(index.is_not_null()).then(valid).otherwise(0), 0,
                      {c: pl.col(c) for c in sums})]  # fmt: skip
    # one select and one explode of the pass's result (a lazy pass is then read once)
    long = (
        codes.sort([*keep, CODE], nulls_last=False)  # a deterministic order: the rounding offsets follow it
        .with_row_index(_R)
        .select(_R, *keep, CODE, valid.alias(CODE_ROWS), pl.concat_list([*items, *null_items]).alias(_L))
        .explode(_L)
        .unnest(_L)
        .with_columns(
            # null items come after the groups (share 0): apportion gives them no row
            pl.when(pl.col(_FIXED).is_null()).then(apportion(pl.col(CODE_ROWS), pl.col(_SHARE), _R, row_offset(pl.col(_R))))
            .otherwise(pl.col(_FIXED)).alias(CODE_ROWS),
            (pl.col(CODE) | pl.col(_FLAG)).alias(CODE),
            *[pl.col(c).fill_null(0.0) for c in sums],
        )
    )  # fmt: skip
    nonzero = pl.col(CODE_ROWS) > 0
    for c in sums:
        nonzero = nonzero | (pl.col(c) != 0.0)
    label = pl.col(_GI).replace_strict(list(range(k)), list(ps.labels), default=None, return_dtype=ps.dtype)
    cells = [*spec.by, *spec.keys, *([BUCKET] if spec.bucket else [])]
    return (
        long.filter(nonzero)
        .with_columns(label.alias(ps.attribute))
        .group_by([*cells, CODE])
        .agg(pl.col(CODE_ROWS).sum().cast(pl.UInt64), *[pl.col(c).sum().cast(pl.Float64) for c in sums])
        .select(*cells, CODE, CODE_ROWS, *sums)
    )


def expand_sums(
    table: pl.DataFrame, ps: ProbaSpec, *, keep: Sequence[str], count: str, sums: Mapping[str, str], share: str,
    values: Mapping[str, str] | None = None,
) -> pl.DataFrame:
    """A pass's result with per-group sum columns, one row per (row, group): the reshape of
    :func:`expand_codes` for other passes (the score histograms), whose unusable rows are left out.

    Parameters
    ----------
    table
        The pass's result: ``keep`` columns, the row count ``count``, the problem counts
        (:data:`~polfair.core.contract.PROBA_NULL` ...) and, per group ``i``, the columns
        ``template.format(i)`` of ``sums`` and ``share``.
    ps
        The compiled :class:`~polfair.core.proba.ProbaSpec` (``"weighted"``).
    keep
        Columns copied to every group's row (keys, the score bin, minima and maxima).
    count
        The row count: the rows with usable probabilities, apportioned by the shares.
    sums
        Output column -> the name template of its per-group columns (``"__pf_h{}_w"``).
    share
        The name template of each group's ``Σ p`` (the apportioning shares).
    values
        Output column -> the name template of per-group columns copied as they are (a group's mean,
        minimum, unit: not sums, so neither filled with 0 nor read to drop a row).

    Returns
    -------
    pl.DataFrame
        ``keep``, the estimated attribute (Enum of its labels), ``count`` (Int64), the ``sums``, the
        ``values``; rows without rows or weight dropped.

    Examples
    --------
    >>> import polars as pl
    >>> ps = parse_protected_proba({"g": {"a": "pa", "b": None}})
    >>> t = pl.DataFrame({"k": [1], "n": [3], "__pf_pnull": [1], "__pf_pbad": [0], "__pf_psum": [0],
    ...                   "s0": [1.5], "s1": [0.5], "w0": [3.0], "w1": [1.0]})
    >>> expand_sums(t, ps, keep=["k"], count="n", sums={"weight": "w{}"}, share="s{}").rows()
    [(1, 'a', 2, 3.0), (1, 'b', 0, 1.0)]
    """
    k = len(ps.labels)
    bad = [pl.col(c).fill_null(0).cast(pl.Int64) for c in (PROBA_NULL, PROBA_BAD, PROBA_SUM)]
    items = [pl.struct(pl.lit(i, pl.UInt8).alias(_GI), pl.col(share.format(i)).alias(_SHARE),
                       *[pl.col(t.format(i)).alias(c) for c, t in {**sums, **(values or {})}.items()])
             for i in range(k)]  # fmt: skip
    nonzero = pl.col(count) > 0
    for c in sums:
        nonzero = nonzero | (pl.col(c) != 0.0)
    label = pl.col(_GI).replace_strict(list(range(k)), list(ps.labels), default=None, return_dtype=ps.dtype)
    return (
        table.lazy().sort(list(keep), nulls_last=False).with_row_index(_R)  # deterministic rounding offsets
        .select(_R, *keep, (pl.col(count).cast(pl.Int64) - bad[0] - bad[1] - bad[2]).alias(count),
                pl.concat_list(items).alias(_L))
        .explode(_L).unnest(_L)
        .with_columns(apportion(pl.col(count), pl.col(_SHARE), _R, row_offset(pl.col(_R))),
                      *[pl.col(c).fill_null(0.0) for c in sums])
        .filter(nonzero)
        .select(*keep, label.alias(ps.attribute), count, *sums, *(values or {}))
        .collect(**SMALL_COLLECT)
    )  # fmt: skip


def cell_table(data: Any, **request: Any) -> pl.LazyFrame:
    """The cell table of a Polars-readable input with an estimated attribute (lazy: nothing runs yet).

    :func:`polfair.core.passes.counts.cell_table` for ``protected_proba`` requests: ``build_spec`` ->
    :func:`code_counts` -> :func:`expand_codes` -> :func:`~polfair.core.passes.counts.pivot_codes`.

    Parameters
    ----------
    data
        Anything :func:`polfair.core.contract.inputs.to_lazyframe` reads.
    **request
        The keywords of :func:`polfair.core.passes.spec.build_spec`, ``protected_proba`` among them.

    Returns
    -------
    pl.LazyFrame
        The cell table, the estimated attribute the last protected key (Enum of its groups).

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": [1, 0, 1], "p": [1, 1, 0], "pa": [1.0, 0.5, 0.0]})
    >>> t = cell_table(df, y_true="y", y_pred="p", protected_proba={"g": {"a": "pa", "b": None}}).collect()
    >>> t.select("g", "n", "w", "tp", "fp", "fn").rows()
    [('a', 1, 1.5, 1.0, 0.5, 0.0), ('b', 2, 1.5, 0.0, 0.5, 1.0)]
    """
    spec = build_spec(data, **request)
    if spec.proba is None:  # pragma: no cover - the callers pass protected_proba
        msg = "cell_table of polfair.core.passes.estimated needs protected_proba="
        raise ValueError(msg)
    return pivot_codes(expand_codes(checked_polarity(code_counts(spec), spec), spec), spec)

