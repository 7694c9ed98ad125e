"""Metrics users define: expressions over the cell table's count columns, reported like the built-ins.

``fairness_report(..., user_metrics={"f_half": <expr>})`` adds, for every name, the rows every built-in
group metric gets, from the same cell table and with the report's own reference groups:

* group rows: ``value`` (the expression over the group's summed counts), ``difference`` and
  ``ratio`` against the attribute set's reference group (the report's privileged, largest or
  overall reference; for ``reference="best"`` the group with the highest value, or the lowest with
  ``higher_is_better=False``), ``reference_group``;
* attribute rows: the spread over the groups where the value is defined (``difference`` = max − min,
  ``ratio`` = min ÷ max, fairlearn's ``between_groups``), ``n_groups`` and ``excluded_groups``;
* population rows: the value of everyone.

A definition is a Polars expression over the documented count columns (:data:`USER_METRIC_COLUMNS`:
``tp, fp, tn, fn`` (weighted), their unweighted ``_n`` and ``_w2`` (Σw²) forms, ``w``, ``n``,
``gtp, gfp, gtn, gfn``), evaluated with every column as Float64; a function of a
:class:`~polfair.core.metrics.Counts` accessor (``lambda c: 2 * c.tp / (2 * c.tp + c.fp + c.fn)``);
or a mapping ``{"expr": ..., "higher_is_better": bool, "description": str}``. Division by zero:
write ``polfair.core.metrics.rate(num, den)`` (null when ``den`` is 0, the report's policy) — a
plain ``/`` gives inf or NaN, which the report keeps as the expression's value. User metrics have
no interval columns (null): a general function of the counts has no closed form here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from polfair.core.metrics import ALIASES, DISPARITIES, METRICS, Counts, rate
from polfair.core.reference import best_value, eligible
from polfair.core.schema import REPORT_SCHEMA
from polfair.exceptions import PolfairError

__all__ = ["USER_METRIC_COLUMNS", "UserMetric", "check_row_wise", "check_user_metrics", "user_metric_parts"]

#: The cell-table columns a user metric may read (every one as Float64).
USER_METRIC_COLUMNS = (
    "n", "w", "tp", "fp", "tn", "fn", "tp_n", "fp_n", "tn_n", "fn_n", "tp_w2", "fp_w2", "tn_w2", "fn_w2",
    "gtp", "gfp", "gtn", "gfn",
)  # fmt: skip


@dataclass(frozen=True)
class UserMetric:
    """A validated user metric: its name, value expression over Float64 count columns, and direction."""

    name: str
    expr: pl.Expr
    higher_is_better: bool = True
    description: str = ""


def _as_expr(name: str, value: Any) -> pl.Expr:
    if isinstance(value, pl.Expr):
        return value
    if callable(value):
        out = value(Counts())
        if isinstance(out, pl.Expr):
            return out
        msg = f"metrics[{name!r}]: the function must return a Polars expression, got {type(out).__name__}"
        raise PolfairError(msg)
    msg = (
        f"metrics[{name!r}] must be a Polars expression over the count columns (e.g. "
        "2 * pl.col('tp') / (2 * pl.col('tp') + pl.col('fp') + pl.col('fn'))), a function of a Counts accessor, "
        f"or a mapping {{'expr': ..., 'higher_is_better': ...}}; got {type(value).__name__}"
    )
    raise PolfairError(msg)


def check_user_metrics(
    metrics: Mapping[str, Any] | None, reserved: Sequence[str] = (), columns: Sequence[str] = ()
) -> list[UserMetric]:
    """Validate ``fairness_report(user_metrics={...})``: names, expressions and the columns they read.

    Parameters
    ----------
    metrics
        ``{name: expression | function | {"expr", "higher_is_better", "description"}}``.
    reserved
        More metric names the report already uses (besides the built-in metrics and disparities).
    columns
        More column names of the report (its ``by`` columns).

    Returns
    -------
    list of UserMetric
        In the mapping's order.

    Raises
    ------
    PolfairError
        A name that is empty, not a string, a built-in metric's name, a column of the report or of
        its wide form (``attribute``, ``n``, ``value``, a ``by`` column, a count column, a name
        with ``__``: the wide form's separator); a value that is no expression; an expression
        reading a column that is not in :data:`USER_METRIC_COLUMNS`; an expression that is not
        computed row by row from one group's counts (an aggregation such as ``.sum()``, a window
        such as ``.cum_sum()``, a literal alone: :func:`check_row_wise`); unknown keys in a mapping.

    Examples
    --------
    >>> import polars as pl
    >>> [m.name for m in check_user_metrics({"f_half": 1.25 * pl.col("tp") / (1.25 * pl.col("tp") + pl.col("fn"))})]
    ['f_half']
    """
    out: list[UserMetric] = []
    builtin = {*METRICS, *ALIASES, *DISPARITIES, "n_missing", *reserved}
    taken = {*(c.name for c in REPORT_SCHEMA), *USER_METRIC_COLUMNS, *columns}
    for name, spec in dict(metrics or {}).items():
        if not isinstance(name, str) or not name or name.startswith("__pf"):
            msg = f"metrics: a user metric's name must be a non-empty string, got {name!r}"
            raise PolfairError(msg)
        if name in builtin:
            msg = f"metrics: {name!r} is the name of a built-in report metric; choose another name for your metric"
            raise PolfairError(msg)
        if name in taken or "__" in name:
            what = ("contains '__', the separator of the wide form's columns" if "__" in name
                    else "is taken by a column of the report or of its wide form")  # fmt: skip
            msg = (
                f"metrics: {name!r} {what} (shape='wide': attribute, group, n, "
                "the by columns, the count columns, and <metric>__<statistic>); choose another name, e.g. "
                f"{name.strip('_').replace('__', '_') + '_metric'!r}"
            )
            raise PolfairError(msg)
        hib, desc = True, ""
        if isinstance(spec, Mapping):
            unknown = sorted(set(spec) - {"expr", "higher_is_better", "description"})
            if unknown or "expr" not in spec:
                msg = (
                    f"metrics[{name!r}]: a mapping needs 'expr' (and optionally 'higher_is_better', 'description'); "
                    f"got keys {sorted(spec)}"
                )
                raise PolfairError(msg)
            hib, desc, spec = bool(spec.get("higher_is_better", True)), str(spec.get("description", "")), spec["expr"]
        expr = _as_expr(name, spec)
        bad = [c for c in expr.meta.root_names() if c not in USER_METRIC_COLUMNS]
        if bad:
            msg = (
                f"metrics[{name!r}] reads {bad}, which are not count columns of the cell table; use "
                f"{list(USER_METRIC_COLUMNS)}"
            )
            raise PolfairError(msg)
        check_row_wise(name, expr)
        out.append(UserMetric(name, expr.alias(name), hib, desc))
    return out


def check_row_wise(name: str, expr: pl.Expr) -> None:
    """Raise unless ``expr`` is computed row by row: each group's value from its own counts only.

    The report evaluates a user metric on a frame with one row per group; an aggregation
    (``pl.col("tp").sum()``), a window (``.cum_sum()``, ``.shift()``, ``.over()``), a sort or a
    literal alone would mix groups or change the number of rows. The check evaluates ``expr`` on a
    probe of three rows at once and on each row alone: the values must agree row by row.

    Raises
    ------
    PolfairError
        Naming the metric, what was found and the fix.

    Examples
    --------
    >>> import polars as pl
    >>> check_row_wise("ok", pl.col("tp") / pl.col("w"))
    >>> check_row_wise("share", pl.col("tp") / pl.col("tp").sum())
    Traceback (most recent call last):
    ...
    polfair.exceptions.PolfairError: metrics['share'] is not computed row by row ...
    """
    probe = pl.DataFrame({c: [1.5 + i, 7.25 + 3 * i, 19.0 + 5 * i] for i, c in enumerate(USER_METRIC_COLUMNS)})
    why = ""
    try:
        whole = probe.select(expr.cast(pl.Float64).alias("v"))["v"]
        alone = [probe.slice(i, 1).select(expr.cast(pl.Float64).alias("v"))["v"] for i in range(probe.height)]
    except pl.exceptions.PolarsError as exc:
        msg = f"metrics[{name!r}] cannot be evaluated on the count columns: {exc}"
        raise PolfairError(msg) from exc
    if whole.len() != probe.height or any(a.len() != 1 for a in alone):
        why = f"it gives {whole.len()} value(s) for {probe.height} groups (an aggregation or a literal alone)"
    elif not all(pl.Series([whole[i]]).eq_missing(a).all() or (a.is_nan().all() and whole.is_nan()[i])
                 for i, a in enumerate(alone)):  # fmt: skip
        why = "a group's value depends on the other groups (a window, shift, rank or sort)"
    if why:
        msg = (
            f"metrics[{name!r}] is not computed row by row from one group's counts: {why}. Write it with the "
            "count columns and arithmetic only (e.g. pl.col('tp') / (pl.col('tp') + pl.col('fn'))), without "
            ".sum(), .mean(), .first(), windows or literals alone"
        )
        raise PolfairError(msg)


def _values(frame: pl.DataFrame, metrics: Sequence[UserMetric]) -> pl.DataFrame:
    """Each user metric over ``frame``'s count columns as Float64 (Float64 results; NaN stays NaN)."""
    counts = frame.select([pl.col(c).cast(pl.Float64) for c in USER_METRIC_COLUMNS if c in frame.columns])
    try:
        return counts.select([m.expr.cast(pl.Float64) for m in metrics])
    except pl.exceptions.PolarsError as exc:
        msg = f"metrics: a user metric could not be evaluated on the cell table: {exc}"
        raise PolfairError(msg) from exc


def user_metric_parts(
    metrics: Sequence[UserMetric],
    groups: pl.DataFrame,
    pop: pl.DataFrame,
    ref: pl.DataFrame,
    *,
    sk: list[str],
    ib: list[str],
    columns: Mapping[str, str],
    make_part: Callable[..., Any],
    min_sample_size: int = 0,
) -> list[Any]:
    """The group, attribute and population parts of the user metrics (laid out with the report's rows).

    ``reference="best"`` picks among the groups with at least ``min_sample_size`` rows, as the
    built-in metrics (:mod:`polfair.core.reference`).

    ``groups``/``pop``/``ref`` are the report's group table (sums, labels, privileged flags and
    modes), population table and reference table; ``columns`` names the report's working columns
    (``sort_a``, ``sort_g``, ``group``, ``key``, ``priv``, ``mode``, ``ref_label``: a reference-name
    column of ``ref``); ``make_part`` builds a report part from its entities and wide frames.
    """
    sa, sg, gl, gk = columns["sort_a"], columns["sort_g"], columns["group"], columns["key"]

    def entities(frame: pl.DataFrame, sort_a: pl.Expr, sort_g: pl.Expr, *extra: pl.Expr | str) -> pl.DataFrame:
        return frame.select(*ib, sort_a.cast(pl.Int64).alias(sa), sort_g.cast(pl.Int64).alias(sg), *extra)

    priv, mode, refname = columns["priv"], columns["mode"], columns["ref_label"]
    names = [m.name for m in metrics]
    vals = _values(groups, metrics)
    g = groups.select(*sk, sg, gl, priv, pl.col(mode).cast(pl.String).alias(mode), "w", "n").hstack(vals)
    g = g.join(ref.select(*sk, pl.col(refname).cast(pl.String).alias("__pf_rl")), on=sk, how="left", nulls_equal=True,
               maintain_order="left")  # fmt: skip
    # the reference's value of each metric, by mode
    refs = []
    if (g[mode] == "privileged").any():  # the privileged rows' counts summed, then the metric
        p = groups.filter(pl.col(mode).cast(pl.String) == "privileged")
        sums = p.group_by(sk, maintain_order=True).agg(
            pl.col(priv).any().alias("__pf_has"),
            *[pl.col(c).filter(pl.col(priv)).sum() for c in USER_METRIC_COLUMNS if c in p.columns],
        )  # fmt: skip
        pv = sums.select(*sk, "__pf_has").hstack(_values(sums, metrics))
        refs.append(pv.select(*sk, *[pl.when(pl.col("__pf_has")).then(pl.col(n)).alias(f"{n}__ref") for n in names],
                              *[pl.col("__pf_has").alias("__pf_x")]).drop("__pf_x"))  # fmt: skip
    if (g[mode] == "largest").any():  # the group named by the report's reference table
        lg = g.filter((pl.col(mode) == "largest") & (pl.col(gl).cast(pl.String) == pl.col("__pf_rl")))
        refs.append(lg.group_by(sk, maintain_order=True).agg([pl.col(n).first().alias(f"{n}__ref") for n in names]))
    if (g[mode] == "overall").any():
        ov = g.filter(pl.col(mode) == "overall").select(sk).unique(maintain_order=True)
        pv = pop.select(ib).hstack(_values(pop, metrics))
        refs.append(ov.join(pv, on=ib, how="left", nulls_equal=True).select(
            *sk, *[pl.col(n).alias(f"{n}__ref") for n in names]))  # fmt: skip
    best_names: list[pl.Expr] = []
    if (g[mode] == "best").any():  # per metric: the best value among the set's groups meeting the minimum
        b = g.filter(pl.col(mode) == "best")
        aggs = []
        ok = eligible("n", min_sample_size)
        for m in metrics:
            pick = best_value(pl.col(m.name), bool(m.higher_is_better), ok)
            chosen = (pl.col(m.name) == pick) & (ok | ~ok.any())
            aggs += [pick.alias(f"{m.name}__ref"),
                     pl.col(gl).filter(chosen).first().alias(f"{m.name}__bestname")]  # fmt: skip
        refs.append(b.group_by(sk, maintain_order=True).agg(aggs))
        best_names = [pl.col(f"{m.name}__bestname") for m in metrics]
    wide = g
    if refs:
        r = pl.concat(refs, how="diagonal_relaxed")
        wide = g.join(r, on=sk, how="left", nulls_equal=True, maintain_order="left")
    for n in names:
        if f"{n}__ref" not in wide.columns:
            wide = wide.with_columns(pl.lit(None, pl.Float64).alias(f"{n}__ref"))
    label = pl.when(pl.col(mode) == "overall").then(pl.lit("overall")).otherwise(pl.col("__pf_rl"))

    def ref_label(i: int, n: str) -> pl.Expr:
        if best_names:
            return pl.when(pl.col(mode) == "best").then(best_names[i]).otherwise(label).cast(pl.Categorical).alias(n)
        return label.cast(pl.Categorical).alias(n)

    group_ent = entities(groups, pl.col(sa), pl.col(sg), pl.col("attribute").cast(pl.Categorical),
                         pl.col(gl).alias("group"), pl.col("n").cast(pl.Int64), gk)  # fmt: skip
    group_part = make_part(
        group_ent, names,
        floats={
            "value": wide.select(names),
            "difference": wide.select([(pl.col(n) - pl.col(f"{n}__ref")).alias(n) for n in names]),
            # + 0·row index: a per-row column, so Polars divides (not multiplies by a broadcast reciprocal)
            "ratio": wide.select([rate(pl.col(n), pl.col(f"{n}__ref") + 0.0 * pl.col(sg)).alias(n) for n in names]),
        },
        cats={"reference_group": wide.select([ref_label(i, n) for i, n in enumerate(names)])},
    )  # fmt: skip
    # attribute rows: the spread over the groups where the metric is defined (finite)
    spread = []
    for n in names:
        v = pl.when(pl.col(n).is_finite()).then(pl.col(n))
        two = v.count() >= 2
        left = pl.concat_str([pl.col(gl).filter(v.is_null()), pl.lit(" (undefined)")]).str.join("; ")
        spread += [
            pl.when(two).then(v.max() - v.min()).alias(f"{n}__d"),
            pl.when(two).then(rate(v.min(), v.max())).alias(f"{n}__r"),
            v.count().cast(pl.Float64).alias(f"{n}__k"),
            pl.when(v.is_null().any()).then(left).alias(f"{n}__x"),
        ]
    att = (
        g.group_by(sk, maintain_order=True).agg(pl.col("__pf_rl").first(), *spread)
        .join(groups.group_by(sk, maintain_order=True).agg(pl.col("attribute").first()), on=sk, how="left",
              nulls_equal=True, maintain_order="left")
        .join(pop.select(*ib, pl.col("n").cast(pl.Int64)), on=ib, how="left", nulls_equal=True, maintain_order="left")
    )  # fmt: skip
    att_part = make_part(
        entities(att, pl.col(sa), pl.lit(-1), pl.col("attribute").cast(pl.Categorical), "n"), names,
        floats={
            "difference": att.select([pl.col(f"{n}__d").alias(n) for n in names]),
            "ratio": att.select([pl.col(f"{n}__r").alias(n) for n in names]),
            "n_groups": att.select([pl.col(f"{n}__k").alias(n) for n in names]),
        },
        cats={"excluded_groups": att.select([pl.col(f"{n}__x").cast(pl.Categorical).alias(n) for n in names])},
    )  # fmt: skip
    pop_part = make_part(
        entities(pop, pl.lit(-1), pl.lit(-1), pl.col("n").cast(pl.Int64)), names,
        floats={"value": _values(pop, metrics)},
    )  # fmt: skip
    return [pop_part, att_part, group_part]
