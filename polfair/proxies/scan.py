"""Indirect bias: which features act as proxies of a protected attribute the model does not use.

IBM Watson OpenScale calls this *indirect bias*: "Indirect bias occurs when one feature can be used
to stand for another ... race can sometimes track closely with postal code"; the protected
attributes are *meta fields*, kept in the training data and the payload but not used by the model,
and OpenScale first identifies the features correlated with them, then evaluates bias on those
(IBM Cloud Pak for Data docs, "Configuring fairness evaluations for indirect bias"; M. Bhide,
"Indirect Bias support in IBM Watson OpenScale", 2020: a two-step process, *correlation
identification* then *indirect bias detection*). OpenScale needs more than 4000 records to find
correlations; polfair reports the counts and leaves the judgement to the user.

polfair does both steps from counts. ONE pass (:func:`proxy_counts`) unpivots the candidate
features to (feature, value) and groups by (feature, value, protected group, label, prediction):
the contingency table of every feature with the protected attribute and the confusion counts of
every feature value. Then, per feature (:func:`proxy_scan_from_counts`):

* numeric features with more than ``max_levels`` distinct values are binned at their quantiles
  (``numeric_bins`` bins, exact quantiles of the observed values, from the counts);
* **Cramér's V** = √(χ² / (N (min(r, c) − 1))) of the weighted contingency table (no bias
  correction; scipy's ``contingency.association(method="cramer")``) and the **normalised mutual
  information** I(G; V) / ((H(G) + H(V)) / 2) (scikit-learn's ``normalized_mutual_info_score``,
  arithmetic mean);
* per protected group, the feature value most indicative of it: the value ``v`` (with at least
  ``min_support`` of the rows) maximising P(group | v), reported with that share, its lift
  P(group | v) / P(group) and its row count ("occupation = Craft-repair → 94% Male");
* with labels (and predictions), the fairness report of the proxy-defined groups (each value of
  each feature is a group: :func:`proxy_report_from_counts`, the core's report on a cell table
  built from the same counts), summarised in :func:`proxy_scan` by the demographic parity and
  equalized odds spreads.
"""

from __future__ import annotations

import inspect
import itertools
import math
from collections.abc import Sequence
from typing import Any, Literal, Required, TypedDict, Unpack

import numpy as np
import polars as pl

from polfair.core import contract
from polfair.core._typing import IntoExpr
from polfair.core.contract import CODE, MISSING, POLARS, Compiled
from polfair.core.docstrings import shares_parameters
from polfair.core.options import keywords_of
from polfair.core.passes.collect import check_not_empty
from polfair.core.passes.counts import COUNT_COLUMNS, COUNT_DTYPES, check_counted
from polfair.core.passes.skeleton import check_rows, feature_columns
from polfair.core.passes.spec import label_values
from polfair.core.report.build import group_label, report_from_counts
from polfair.exceptions import PolfairError

__all__ = ["Measures", "ProxyRows", "proxy_counts", "proxy_report", "proxy_report_from_counts", "proxy_scan", "proxy_scan_from_counts"]

_P = "protected_group"
_V = "proxy_value"  # the report's key column ('value' is a report column)
_TOP = pl.Struct(
    {"protected_group": pl.String, "value": pl.String, "share": pl.Float64, "lift": pl.Float64, "n": pl.Int64}
)


def proxy_counts(
    data: Any,
    *,
    protected: IntoExpr,
    features: Sequence[IntoExpr],
    y_true: IntoExpr | None = None,
    y_pred: IntoExpr | None = None,
    favorable: Any = 1,
    weight: IntoExpr | None = None,
    on_missing: Literal["warn", "raise", "ignore"] = "warn",
    score_label: Any = None,
) -> pl.DataFrame:
    """ONE pass: counts per (feature, value, protected group, label, prediction).

    Parameters
    ----------
    data
        Rows (polars/pandas/pyarrow frame, dict or parquet/CSV path).
    protected
        The protected attribute (a meta field the model does not use): name or named expression.
    features
        Candidate proxy features (names or named expressions). Continuous features with very many
        distinct values make a table as large as their distinct values: round or bin them in the
        expression (e.g. ``pl.col("income").round(-3)``).
    y_true, y_pred
        Optional label and decision; ``favorable`` gives their favorable value(s).
    favorable
        Favorable value(s) of ``y_true`` and ``y_pred``.
    score_label
        The label a Boolean ``y_pred``'s True stands for (the polarity rule,
        ``docs/contract.md#polarity``; needed where True could be either label).
    weight
        Optional finite, non-negative weights (the input contract, ``docs/contract.md``: null and
        NaN weights are missing, so their rows are left out; negative or infinite ones raise).
    on_missing
        ``"warn"`` (default), ``"raise"`` or ``"ignore"``: rows with a null or NaN label,
        decision or weight (a :class:`~polfair.exceptions.MissingValuesWarning`).

    Returns
    -------
    pl.DataFrame
        ``feature`` (String), ``value`` (String; numbers in Polars' shortest round-trip form;
        ``null`` for missing, NaN included), ``protected_group`` (String: the group's label as in
        the report, ``"null"`` for a null value and ``'"null"'`` for the string "null"), ``label``,
        ``pred`` (Boolean; null when not given or missing), ``n`` (Int64 rows), ``w`` (Float64 Σw), ``w2`` (Float64 Σw²),
        sorted. The attribute
        ``dtypes`` of the features are in the column ``numeric`` (Boolean). Additive: tables of
        partitions merge by summing ``n``, ``w`` and ``w2`` per key.

    Raises
    ------
    ColumnNotFoundError, InvalidInputError, PolfairError
        A missing column, a non-numeric, negative or infinite weight, ``favorable`` that the
        label's dtype cannot hold, a label that is not a label (a fractional Float), no features.

    Examples
    --------
    >>> import polfair as pf
    >>> c = proxy_counts(pf.load_adult(), protected="sex", features=["relationship"])
    >>> c.filter(value="Husband").select("protected_group", "n").sort("n").rows()
    [('Female', 1), ('Male', 19715)]
    """
    frame = contract.PolarsFrame(data)
    pcol = frame.column(protected, "protected")
    fcols = feature_columns(frame, features, example="candidate proxy column, e.g. features=['zip', 'occupation']")
    fnames = [c.name for c in fcols]
    numeric = {c.name: c.dtype.is_numeric() for c in fcols}
    # the input contract (docs/contract.md): labels/decisions matched in their dtype, null/NaN missing;
    # weights finite and >= 0, null/NaN missing; keys normalised (NaN in a Float key is null)
    fav, _ = label_values(favorable, None)
    compiled: dict[str, Compiled]
    compiled, _ = contract.compile_labels(
        POLARS, y_true=None if y_true is None else frame.column(y_true, "y_true"),
        y_pred=None if y_pred is None else frame.column(y_pred, "y_pred"), favorable=fav, unfavorable=None,
        score_label=score_label,
    )  # fmt: skip
    flags = []
    w = pl.lit(1.0)
    if weight is not None:
        compiled["weight"] = contract.weight(POLARS, frame.column(weight, "weight"))
        flags.append(compiled["weight"].state)
        w = compiled["weight"].value
    truth = compiled["y_true"].state if y_true is not None else pl.lit(0, pl.UInt8)
    pred = compiled["y_pred"].state if y_pred is not None else None
    cols = [contract.key(POLARS, pcol, role="protected").alias(_P), contract.outcome_code(POLARS, truth, pred, flags).alias(CODE),
            w.alias("__pf_w")]  # fmt: skip
    values = [contract.key(POLARS, c, role="features").cast(pl.String).alias(c.name) for c in fcols]
    long = (
        frame.lf.select(*cols, *values)
        .with_columns(group_label([_P]).alias(_P))  # null -> "null", the string "null" -> '"null"' (as the report)
        .unpivot(index=[_P, CODE, "__pf_w"], on=fnames, variable_name="feature", value_name="value")
    )
    out = (
        long.group_by(["feature", "value", _P, CODE])
        .agg(
            pl.len().cast(pl.Int64).alias("n"),
            pl.col("__pf_w").sum().alias("w"),
            (pl.col("__pf_w") * pl.col("__pf_w")).sum().alias("w2"),
        )  # fmt: skip
        .collect()
    )
    check_rows(out.filter(pl.col("feature") == fnames[0]), compiled, count="n", on_missing=on_missing,  # each row once
               examples=frame.examples, excluded_from="left out of the proxy report's rates (a missing weight: of "
               "the counts too)", stacklevel=3, not_empty=False)  # fmt: skip
    o = pl.col(CODE).cast(pl.Int32)
    out = out.filter(o // 16 == 0)  # a missing weight: the row has no weight to count
    contract.check_finite_sums(out, ["w", "w2"], compiled.get("weight"))
    out = out.with_columns(  # a missing weight: the row has no weight to count
        (pl.when(o % 4 != MISSING).then(o % 4 == 1) if y_true is not None else pl.lit(None, pl.Boolean)).alias("label"),
        (pl.when(o // 4 % 4 != MISSING).then(o // 4 % 4 == 1) if y_pred is not None else pl.lit(None, pl.Boolean))
        .alias("pred"),
    )  # fmt: skip
    out = out.group_by(["feature", "value", _P, "label", "pred"]).agg(pl.col("n", "w", "w2").sum())
    order = {n: i for i, n in enumerate(fnames)}
    return (
        out.with_columns(
            pl.col("feature").replace_strict(numeric, return_dtype=pl.Boolean).alias("numeric"),
            pl.col("feature").replace_strict(order, return_dtype=pl.Int64).alias("__pf_f"),
        )
        .sort(["__pf_f", "value", _P, "label", "pred"], nulls_last=True)
        .drop("__pf_f")
        .select("feature", "value", _P, "label", "pred", "n", "w", "w2", "numeric")
    )


def _fmt(v: float) -> str:
    return f"{v:g}"


def _binned(part: pl.DataFrame, numeric_bins: int, max_levels: int) -> pl.DataFrame:
    """Bin a numeric feature's values at quantiles when it has more than ``max_levels`` values."""
    vals = part.filter(pl.col("value").is_not_null()).group_by("value").agg(pl.col("n").sum())
    if not part["numeric"][0] or vals.height <= max_levels:
        return part
    v = vals.with_columns(pl.col("value").cast(pl.Float64).alias("x")).sort("x")
    x, n = v["x"].to_numpy(), v["n"].to_numpy()
    cum = np.cumsum(n) / n.sum()
    edges = sorted({float(x[int(np.searchsorted(cum, q / numeric_bins, side="left"))]) for q in range(1, numeric_bins)})
    edges = [e for e in edges if e > x[0]]  # the first bin is never empty
    labels = []
    bounds = [-math.inf, *edges, math.inf]
    for lo, hi in itertools.pairwise(bounds):
        if math.isinf(lo):
            labels.append(f"< {_fmt(hi)}" if not math.isinf(hi) else "all")
        elif math.isinf(hi):
            labels.append(f">= {_fmt(lo)}")
        else:
            labels.append(f"[{_fmt(lo)}, {_fmt(hi)})")
    xs = part["value"].cast(pl.Float64).to_numpy()
    idx = np.searchsorted(np.array(edges), xs, side="right")
    lab = [None if np.isnan(xv) else labels[i] for xv, i in zip(xs, idx)]
    return (
        part.with_columns(pl.Series("value", lab, dtype=pl.String))
        .group_by(["feature", "value", _P, "label", "pred", "numeric"], maintain_order=True)
        .agg(pl.col("n").sum(), pl.col("w").sum(), pl.col("w2").sum())
        .select(part.columns)
    )


def _association(table: np.ndarray) -> tuple[float | None, float | None]:
    """Cramér's V and arithmetic-mean NMI of a weighted contingency table (rows: groups)."""
    N = table.sum()
    if N <= 0:
        return None, None
    r, c = table.sum(1), table.sum(0)
    table = table[r > 0][:, c > 0]
    r, c = table.sum(1), table.sum(0)
    k = min(len(r), len(c))
    E = np.outer(r, c) / N
    chi2 = float(((table - E) ** 2 / E).sum())
    v = math.sqrt(chi2 / N / (k - 1)) if k > 1 else None
    p = table / N
    pr, pc = r / N, c / N
    nz = p > 0
    mi = float((p[nz] * np.log(p[nz] / np.outer(pr, pc)[nz])).sum())
    hr = float(-(pr * np.log(pr)).sum())
    hc = float(-(pc * np.log(pc)).sum())
    if len(r) == 1 and len(c) == 1:
        nmi = 1.0
    elif mi <= 0 or hr + hc <= 0:
        nmi = 0.0
    else:
        nmi = mi / ((hr + hc) / 2)
    return v, nmi


def proxy_report_from_counts(
    counts: pl.DataFrame, *, numeric_bins: int = 5, max_levels: int = 10, **report_options: Any
) -> pl.DataFrame:
    """The fairness report of the proxy-defined groups (every value of every feature is a group).

    Builds the core's cell table from the counts (keys: ``feature`` as a ``by`` column, ``value``
    as the protected attribute; the score of the generalized counts is the 0/1 decision) and runs
    :func:`polfair.core.report.build.report_from_counts` on it (one report per feature).

    Parameters
    ----------
    counts
        :func:`proxy_counts` output with labels (``y_true``).
    numeric_bins, max_levels
        As :func:`proxy_scan`.
    **report_options
        ``reference``, ``intersections``, ... of the report (``privileged`` keys are
        ``"proxy_value"``).

    Returns
    -------
    pl.DataFrame
        The fairness report schema, with ``feature`` (String) first: ``attribute`` is the
        feature's name (null on population rows), ``group`` the feature's value (or bin).

    Raises
    ------
    PolfairError
        If the counts have no labels.

    Examples
    --------
    >>> import polfair as pf
    >>> c = proxy_counts(pf.load_adult(), protected="sex", features=["relationship"], y_true="income_gt_50k")
    >>> rep = proxy_report_from_counts(c)
    >>> round(rep.filter(group="Wife", metric="base_rate")["value"].item(), 4)
    0.4689
    """
    if counts["label"].null_count() == counts.height:
        msg = "proxy report needs labels: give y_true= (and y_pred=) to proxy_counts / proxy_scan"
        raise PolfairError(msg)
    has_pred = counts["pred"].null_count() < counts.height
    parts = [_binned(p, numeric_bins, max_levels) for _, p in counts.group_by("feature", maintain_order=True)]
    c = pl.concat(parts)
    lab = pl.col("label")
    pred = pl.col("pred") if has_pred else lab
    ok = lab.is_not_null() & pred.is_not_null()
    cells = {
        "tp": ok & lab & pred, "fp": ok & ~lab & pred, "tn": ok & ~lab & ~pred, "fn": ok & lab & ~pred,
    }  # fmt: skip
    aggs = [pl.col("n").sum().alias("n"), pl.col("n").filter(~ok).sum().alias("n_missing"),
            pl.lit(0).alias("n_invalid"), pl.col("w").filter(ok).sum().alias("w")]  # fmt: skip
    for k, cond in cells.items():
        aggs.append(pl.col("w").filter(cond).sum().alias(k))
        aggs.append(pl.col("n").filter(cond).sum().alias(f"{k}_n"))
        aggs.append(pl.col("w2").filter(cond).sum().alias(f"{k}_w2"))  # Σw² (Kish effective sizes)
    table = (
        c.group_by(["feature", "value"], maintain_order=True)
        .agg(aggs)
        .with_columns(
            pl.col("tp").alias("gtp"), pl.col("fp").alias("gfp"), pl.col("tn").alias("gtn"), pl.col("fn").alias("gfn")
        )
        .select("feature", pl.col("value").alias(_V), *[pl.col(k).cast(COUNT_DTYPES[k]) for k in COUNT_COLUMNS])
        .sort(["feature", _V], nulls_last=False)
    )
    rep = report_from_counts(table, protected=[_V], by=["feature"], has_predictions=has_pred,
                             **{"max_groups_per_attribute": None, **report_options})  # every level of a feature
    # the attribute of a proxy group is its feature
    return rep.with_columns(pl.when(pl.col("attribute").is_not_null()).then(pl.col("feature")).alias("attribute"))


def _rows(c: pl.DataFrame) -> int:
    """The input rows of a :func:`proxy_counts` table (each row is in every feature's counts)."""
    return int(c.filter(pl.col("feature") == c["feature"].first())["n"].sum() or 0) if c.height else 0


def proxy_report(
    data: Any,
    *,
    protected: IntoExpr,
    features: Sequence[IntoExpr],
    y_true: IntoExpr,
    y_pred: IntoExpr | None = None,
    favorable: Any = 1,
    weight: IntoExpr | None = None,
    numeric_bins: int = 5,
    max_levels: int = 10,
    score_label: Any = None,
    on_missing: Literal["warn", "raise", "ignore"] = "warn",
    **report_options: Any,
) -> pl.DataFrame:
    """Fairness report of the groups defined by candidate proxy features, from one pass.

    Parameters are those of :func:`proxy_scan` (``y_true`` required); ``report_options`` go to
    the report (``reference=``, ...).

    Returns
    -------
    pl.DataFrame
        As :func:`proxy_report_from_counts`.

    Examples
    --------
    >>> import polars as pl
    >>> import polfair as pf
    >>> rep = proxy_report(pf.load_compas(), protected="race", features=["age_cat"], y_true="two_year_recid",
    ...                    y_pred=pl.col("decile_score") >= 5)
    >>> rep.filter(group="Less than 25", metric="selection_rate")["value"].round(3).item()
    0.643
    """
    c = proxy_counts(data, protected=protected, features=features, y_true=y_true, y_pred=y_pred,
                     favorable=favorable, weight=weight, score_label=score_label, on_missing=on_missing)  # fmt: skip
    check_not_empty(_rows(c))
    return proxy_report_from_counts(c, numeric_bins=numeric_bins, max_levels=max_levels, **report_options)


class ProxyRows(TypedDict, total=False):
    """The keywords of :func:`proxy_counts` (what the proxy pass reads), as :func:`proxy_scan` passes them on.

    ``protected`` and ``features`` (required), ``y_true``, ``y_pred``, ``favorable``, ``weight``,
    ``on_missing`` and ``score_label``: each as in :func:`proxy_counts`, with its default there.
    """

    protected: Required[IntoExpr]
    features: Required[Sequence[IntoExpr]]
    y_true: IntoExpr | None
    y_pred: IntoExpr | None
    favorable: Any
    weight: IntoExpr | None
    on_missing: Literal["warn", "raise", "ignore"]
    score_label: Any


@keywords_of(proxy_counts)
@shares_parameters(proxy_counts, name="polfair.proxies.proxy_counts")
def proxy_scan(
    data: Any,
    *,
    measure: str = "cramers_v",
    numeric_bins: int = 5,
    max_levels: int = 10,
    min_support: float = 0.01,
    **rows: Unpack[ProxyRows],
) -> pl.DataFrame:
    """Rank candidate features as proxies of a protected attribute (OpenScale's indirect bias), one pass.

    Parameters
    ----------
    data
        As in :func:`polfair.proxies.proxy_counts`.
    protected
        The protected attribute (a meta field the model does not use), e.g. ``"sex"``.
    features
        Candidate proxy features: the model's inputs (names or named expressions).
    y_true, y_pred
        Optional label and decision: adds the fairness spreads of the proxy-defined groups.
    favorable
        Favorable value(s) of ``y_true`` / ``y_pred``.
    score_label
        The label a Boolean ``y_pred``'s True stands for (``docs/contract.md#polarity``).
    on_missing
        Rows with a missing label, prediction, score or weight: ``"warn"`` (default), ``"raise"`` or
        ``"ignore"``, as in :func:`polfair.fairness_report`.
    weight
        Optional non-negative weights (association on weighted counts).
    measure
        The ``association`` column: ``"cramers_v"`` (default) or ``"normalized_mutual_info"``.
    numeric_bins
        Quantile bins of numeric features with more than ``max_levels`` distinct values.
    max_levels
        Numeric features with at most this many distinct values are categorical.
    min_support
        Smallest share of rows of a feature value listed in ``top_values`` (default 0.01).

    Returns
    -------
    pl.DataFrame
        One row per feature, sorted by ``association`` descending: ``feature`` (String),
        ``association`` (Float64 in [0, 1]), ``cramers_v``, ``normalized_mutual_info`` (Float64),
        ``kind`` (``"categorical"`` / ``"numeric"``), ``levels`` (Int64 values or bins), ``n``
        (Int64 rows), ``top_values`` (List of Struct ``protected_group``, ``value``, ``share`` =
        P(group | value), ``lift`` = share / P(group), ``n``: per protected group, its most
        indicative value; sorted by share), ``summary`` (String: the first three entries, e.g.
        ``"relationship = Husband → 100% Male"``). With ``y_true``:
        ``demographic_parity_difference`` / ``demographic_parity_ratio`` (Float64: max − min and
        min / max over the feature's groups of the selection rate, or of the base rate without
        ``y_pred``) and with ``y_pred`` ``equalized_odds_difference`` (fairlearn's definition).

    Raises
    ------
    PolfairError, ColumnNotFoundError, InvalidInputError
        As :func:`proxy_counts`; an unknown ``measure``.

    Examples
    --------
    >>> import polfair as pf
    >>> scan = proxy_scan(pf.load_adult(), protected="sex",
    ...                   features=["relationship", "occupation", "age", "hours_per_week", "race"])
    >>> scan["feature"].to_list()
    ['relationship', 'occupation', 'hours_per_week', 'age', 'race']
    >>> scan["summary"][0]
    'relationship = Husband → 100% Male; relationship = Wife → 100% Female'
    """
    c = proxy_counts(data, **rows)
    check_not_empty(_rows(c))
    y_true, y_pred = rows.get("y_true"), rows.get("y_pred")
    scan = proxy_scan_from_counts(c, measure=measure, numeric_bins=numeric_bins, max_levels=max_levels,
                                  min_support=min_support)  # fmt: skip
    if y_true is None:
        return scan
    if c["label"].null_count() == c.height:  # labels given, every one missing: the reports' one error
        check_counted(_rows(c), _rows(c), what="label or prediction")
    rep = proxy_report_from_counts(c, numeric_bins=numeric_bins, max_levels=max_levels)
    rate = "selection_rate" if y_pred is not None else "base_rate"
    att = rep.filter(pl.col("group").is_null(), pl.col("attribute").is_not_null())
    spread = att.filter(metric=rate).select(
        "feature",
        pl.col("difference").alias("demographic_parity_difference"),
        pl.col("ratio").alias("demographic_parity_ratio"),
    )
    out = scan.join(spread, on="feature", how="left", maintain_order="left")
    if y_pred is not None:
        eo = att.filter(metric="equalized_odds_difference").select(
            "feature", pl.col("value").alias("equalized_odds_difference")
        )
        out = out.join(eo, on="feature", how="left", maintain_order="left")
    return out


class Measures(TypedDict, total=False):
    """The keywords of :func:`proxy_scan` that measure and describe the association (each with its default there)."""

    measure: str
    numeric_bins: int
    max_levels: int
    min_support: float


@keywords_of(proxy_scan)
def proxy_scan_from_counts(counts: pl.DataFrame, **scan: Unpack[Measures]) -> pl.DataFrame:
    """:func:`proxy_scan` from :func:`proxy_counts` (or a merge of them).

    Examples
    --------
    >>> import polars as pl
    >>> import polfair as pf
    >>> c = proxy_counts(pf.load_adult(), protected="sex", features=["relationship", "race"])
    >>> proxy_scan_from_counts(c).select("feature", pl.col("association").round(3)).rows()
    [('relationship', 0.647), ('race', 0.114)]
    """
    options = inspect.signature(proxy_scan).bind_partial(**scan)  # with proxy_scan's defaults
    options.apply_defaults()
    measure, numeric_bins, max_levels, min_support = (options.arguments[k] for k in Measures.__annotations__)
    if measure not in ("cramers_v", "normalized_mutual_info"):
        msg = f"measure must be 'cramers_v' or 'normalized_mutual_info', got {measure!r}"
        raise PolfairError(msg)
    if numeric_bins < 2 or max_levels < 1 or not 0 <= min_support < 1:
        msg = "numeric_bins must be >= 2, max_levels >= 1 and min_support in [0, 1)"
        raise PolfairError(msg)
    rows = []
    for (feature,), part in counts.group_by("feature", maintain_order=True):
        part = _binned(part, numeric_bins, max_levels)
        ct = part.group_by(["value", _P]).agg(pl.col("w").sum(), pl.col("n").sum())
        piv = ct.pivot(on=_P, index="value", values="w").fill_null(0.0).sort("value", nulls_last=True)
        groups = [c for c in piv.columns if c != "value"]
        table = piv.select(groups).to_numpy().T.astype(float)  # rows: protected groups
        v, nmi = _association(table)
        N = float(table.sum())
        nv = ct.group_by("value").agg(pl.col("n").sum().alias("nv"), pl.col("w").sum().alias("wv"))
        top = []
        total_n = int(ct["n"].sum())
        for g in groups:
            pg = float(ct.filter(pl.col(_P).eq_missing(g))["w"].sum()) / N if N else 0.0
            cand = (
                ct.filter(pl.col(_P).eq_missing(g))
                .join(nv, on="value", how="left", nulls_equal=True)
                .filter(pl.col("nv") >= max(1.0, min_support * total_n))
                .with_columns((pl.col("w") / pl.col("wv")).alias("share"))
                .sort(["share", "nv"], descending=True, nulls_last=True)
            )
            if cand.height and pg > 0:
                r = cand.row(0, named=True)
                top.append({"protected_group": g, "value": r["value"], "share": r["share"],
                            "lift": r["share"] / pg, "n": int(r["nv"])})  # fmt: skip
        top.sort(key=lambda t: (-t["share"], -t["lift"]))
        summary = "; ".join(f"{feature} = {t['value']} → {t['share']:.0%} {t['protected_group']}" for t in top[:3])
        rows.append({"feature": feature, "kind": "numeric" if part["numeric"][0] else "categorical",
                     "levels": piv.height, "n": total_n, "cramers_v": v, "normalized_mutual_info": nmi,
                     "top_values": top, "summary": summary})  # fmt: skip
    out = pl.DataFrame(rows, schema={
        "feature": pl.String, "kind": pl.String, "levels": pl.Int64, "n": pl.Int64, "cramers_v": pl.Float64,
        "normalized_mutual_info": pl.Float64, "top_values": pl.List(_TOP), "summary": pl.String,
    })  # fmt: skip
    return (
        out.with_columns(pl.col(measure).alias("association"))
        .sort("association", descending=True, nulls_last=True, maintain_order=True)
        .select(
            "feature",
            "association",
            "cramers_v",
            "normalized_mutual_info",
            "kind",
            "levels",
            "n",
            "top_values",
            "summary",
        )
    )
