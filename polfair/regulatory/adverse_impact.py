"""Adverse-impact batteries: US EEOC Uniform Guidelines and NYC Local Law 144 bias audits.

One pass over the rows (a score histogram of the decision or the score, via
:func:`polfair.scores.counts.score_counts`: the documented edge ``regulatory -> scores``); every
statistic below is closed-form arithmetic on the per-group counts.

**Uniform Guidelines on Employee Selection Procedures, 29 CFR § 1607.4(D)**: "A selection rate for
any race, sex, or ethnic group which is less than four-fifths (4/5) (or eighty percent) of the rate
for the group with the highest rate will generally be regarded by the Federal enforcement agencies
as evidence of adverse impact, while a greater than four-fifths rate will generally not be regarded
by Federal enforcement agencies as evidence of adverse impact. Smaller differences in selection
rate may nevertheless constitute adverse impact, where they are significant in both statistical
and practical terms ...". The agencies' Questions and Answers (1979, Q. 12) work the example of
hiring rates 60 % (whites), 45 % (American Indians), 48 % (Hispanics), 51 % (Blacks): impact ratios
75 %, 80 %, 85 %, adverse impact indicated for American Indians only (80 % is not *less than*
four-fifths). Practice adds significance tests (the two-standard-deviation z test of Hazelwood
School District v. United States, 433 U.S. 299 (1977); Fisher's exact test for small groups) and
practical significance: the **shortfall** (expected selections at the overall rate minus actual
selections) and the "flip" checks (Biddle, Adverse Impact Toolkit; Waisome v. Port Authority, 948
F.2d 1370 (2d Cir. 1991)).

**NYC Local Law 144 of 2021, rules of the Department of Consumer and Worker Protection, 6 RCNY
§ 5-300 – 5-301**: a bias audit calculates, for sex categories, race/ethnicity categories and their
intersections, the *selection rate* ("the rate at which individuals in a category are either
selected to move forward in the hiring process or assigned a classification"), or for tools that
only score, the *scoring rate* ("the rate at which individuals in a category receive a score above
the sample's median score"), and the *impact ratio* ("(1) the selection rate for a category divided
by the selection rate of the most selected category or (2) the scoring rate for a category divided
by the scoring rate for the highest scoring category"). An independent auditor "may exclude a
category that represents less than 2% of the data being used for the bias audit from the required
calculations for impact ratio" (§ 5-301(d)), and the summary must state "the number of individuals
the AEDT assessed that are not included in the required calculations because they fall within an
unknown category" (§ 5-301(b)(5), (c)(5)).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypedDict, Unpack

import polars as pl

from polfair.core._args import as_list
from polfair.core._typing import IntoExpr
from polfair.core.docstrings import shares_parameters
from polfair.core.options import checks_keywords, keywords_of, refuse_unused
from polfair.core.passes.spec import PassOptions
from polfair.core.proba import DEFAULT_TOLERANCE, estimated_note, parse_protected_proba
from polfair.core.reference import resolve_min_sample_size
from polfair.core.report.build import attribute_sets, group_label
from polfair.core.report.run_metadata import attach_request
from polfair.exceptions import PolfairError
from polfair.regulatory.statistics import (
    fisher_exact_two_sided,
    flip_to_nonsignificance,
    normal_two_sided_p,
    two_proportion_z,
)
from polfair.scores.counts import SCORE_COUNT_COLUMNS, decision_counts, score_counts
from polfair.scores.curves import score_report, split_missing

__all__ = ["ADVERSE_IMPACT_COLUMNS", "PRESETS", "Battery", "adverse_impact", "adverse_impact_from_counts"]

#: Presets of :func:`adverse_impact`.
PRESETS = ("eeoc", "nyc_ll144")

#: Columns of :func:`adverse_impact` after the ``by`` columns, in order.
ADVERSE_IMPACT_COLUMNS = (
    "attribute", "group", "n", "selected", "selection_rate", "impact_ratio", "reference_group",
    "four_fifths_pass", "z", "p_value", "significant", "fisher_p_value", "shortfall",
    "flip_four_fifths", "flip_significance", "excluded", "excluded_reason", "median_score",
)  # fmt: skip

_SCHEMA = {
    "attribute": pl.String, "group": pl.String, "n": pl.Int64, "selected": pl.Int64,
    "selection_rate": pl.Float64, "impact_ratio": pl.Float64, "reference_group": pl.String,
    "four_fifths_pass": pl.Boolean, "z": pl.Float64, "p_value": pl.Float64, "significant": pl.Boolean,
    "fisher_p_value": pl.Float64, "shortfall": pl.Float64, "flip_four_fifths": pl.Int64,
    "flip_significance": pl.Int64, "excluded": pl.Boolean, "excluded_reason": pl.String,
    "median_score": pl.Float64,
}  # fmt: skip

_UNKNOWN = "unknown demographics"
_SMALL = "under {:.4g} of the data"
#: The reason of a group below the minimum sample size: no verdict, no comparison group (docs/status.md).
_TOO_SMALL = "insufficient_data: fewer than {} candidates"


def _median(scores: pl.DataFrame) -> float | None:
    """Sample median (mean of the two middle values for an even count) from (score, n) rows."""
    s = scores.group_by("score").agg(pl.col("n").sum()).sort("score")
    total = int(s["n"].sum())
    if total == 0:
        return None
    cum = s["n"].cum_sum().to_list()
    vals = s["score"].to_list()

    def at(i: int) -> float:  # the i-th (0-based) smallest score
        for v, c in zip(vals, cum):
            if c > i:
                return float(v)
        return float(vals[-1])

    if total % 2:
        return at(total // 2)
    return (at(total // 2 - 1) + at(total // 2)) / 2


def _rows_for_set(
    g: pl.DataFrame, exclude_below: float | None, alpha: float, variance: str, shortfall_rate: str,
    min_size: int | None = None,
) -> list[dict[str, Any]]:
    """Statistics of the groups of one attribute set (``g``: group, n, selected, unknown)."""
    known = g.filter(~pl.col("unknown"))
    N = int(known["n"].sum())
    rows: list[dict[str, Any]] = []
    for r in g.iter_rows(named=True):
        rate = r["selected"] / r["n"] if r["n"] else None
        reason = None
        if r["unknown"]:
            reason = _UNKNOWN
        elif exclude_below is not None and N and r["n"] < exclude_below * N:
            reason = _SMALL.format(exclude_below)
        elif min_size and r["n"] < min_size:  # the small-group policy (polfair.core.reference)
            reason = _TOO_SMALL.format(min_size)
        rows.append({"group": r["group"], "n": r["n"], "selected": r["selected"], "selection_rate": rate,
                     "excluded": reason is not None, "excluded_reason": reason})  # fmt: skip
    cand = [r for r in rows if not r["excluded"] and r["n"] > 0]
    if not cand:
        return rows
    # the comparison group: highest rate among the groups that meet the minimum (ties: the larger
    # group, then the first); 29 CFR 1607.4(D): differences "based on small numbers" are no evidence
    best = max(cand, key=lambda r: (r["selected"] * 1.0 / r["n"], r["n"]))
    xh, nh = best["selected"], best["n"]
    S = sum(r["selected"] for r in cand)
    Nc = sum(r["n"] for r in cand)
    crit = _critical(alpha)
    for r in rows:
        r["reference_group"] = best["group"]
        if r["excluded"]:
            continue
        x, n = r["selected"], r["n"]
        expected_rate = S / Nc if shortfall_rate == "overall" else xh / nh
        r["shortfall"] = n * expected_rate - x
        if xh == 0:
            continue  # nobody selected: no ratio
        r["impact_ratio"] = (x / n) / (xh / nh)
        r["four_fifths_pass"] = 5 * x * nh >= 4 * xh * n  # exact: rate >= 4/5 of the highest
        r["flip_four_fifths"] = max(0, math.ceil((4 * xh * n - 5 * x * nh) / (5 * nh)))
        if r is best:
            continue
        z = two_proportion_z(x, n, xh, nh, variance)
        r["z"] = z
        r["p_value"] = None if z is None else normal_two_sided_p(z)
        r["significant"] = None if z is None else r["p_value"] < alpha
        r["fisher_p_value"] = fisher_exact_two_sided(x, n - x, xh, nh - xh)
        r["flip_significance"] = flip_to_nonsignificance(x, n, xh, nh, crit, variance)
    return rows


def _min_size(min_sample_size: Any, min_size: Any) -> int:
    """The minimum in force: ``min_sample_size``, or its older name ``min_size``, else the policy's default."""
    if min_sample_size is not None and min_size is not None and min_sample_size != min_size:
        msg = f"min_size={min_size!r} and min_sample_size={min_sample_size!r} are the same option: give one"
        raise PolfairError(msg)
    given = min_sample_size if min_sample_size is not None else min_size
    return resolve_min_sample_size(given, "min_sample_size" if min_sample_size is not None else "min_size")


def _critical(alpha: float) -> float:
    """Two-sided normal critical value for ``alpha``: ``Φ⁻¹(1 − α/2)`` (``scipy.special.ndtri``)."""
    from scipy import special

    return float(special.ndtri(1.0 - alpha / 2.0))


@shares_parameters(score_report, name="polfair.scores.score_report")
@checks_keywords
def adverse_impact(
    data: Any,
    *,
    y_pred: IntoExpr | None = None,
    y_score: IntoExpr | None = None,
    protected: IntoExpr | Sequence[IntoExpr] | None = None,
    preset: Literal["eeoc", "nyc_ll144"] = "eeoc",
    favorable: Any = None,
    by: IntoExpr | Sequence[IntoExpr] | None = None,
    intersections: int | Sequence[Sequence[str]] | None = None,
    exclude_below: float | None = None,
    alpha: float = 0.05,
    variance: Literal["pooled", "hypergeometric"] = "pooled",
    shortfall_rate: Literal["overall", "highest"] = "overall",
    min_size: int | None = None,
    min_sample_size: int | None = None,
    protected_proba: Mapping[str, Mapping[str, IntoExpr | None]] | None = None,
    proba_assignment: Literal["weighted", "argmax"] = "weighted",
    proba_tolerance: float = DEFAULT_TOLERANCE,
    score_label: Any = None,
    on_missing: Literal["warn", "raise", "ignore"] = "warn",
) -> pl.DataFrame:
    """Adverse-impact table: selection (or scoring) rates, impact ratios, four-fifths, z, Fisher, shortfall.

    Parameters
    ----------
    data
        Rows: polars/pandas/pyarrow frame, dict or parquet/CSV path, or a PySpark / DuckDB frame
        (column names only; the pass runs in its engine, under the same input contract). One row
        per candidate.
    y_pred
        The decision (selected / moved forward): a column or expression; ``favorable`` gives the
        selected value(s), matched in the column's dtype (default ``1``; ``True`` and ``1`` both
        match a Boolean column). A null or NaN decision is missing (left out, with a
        :class:`~polfair.exceptions.MissingValuesWarning`); a Float value that is not a whole
        number (a probability) is an error suggesting ``y_score=``.
    y_score
        Instead of ``y_pred`` with ``preset="nyc_ll144"``: the tool's score; a candidate counts as
        selected when the score is strictly above the sample median (NYC's *scoring rate*), per
        ``by`` value.
    protected
        Categories: sex, race/ethnicity, ... (names or named expressions). Rows with a null
        category form the "unknown" groups, reported and excluded from the comparisons.
    preset
        ``"eeoc"`` (29 CFR § 1607.4(D)) or ``"nyc_ll144"`` (6 RCNY § 5-301). Both compute every
        column; ``nyc_ll144`` also accepts ``y_score``.
    favorable
        Selected value(s) of ``y_pred``. For a Boolean decision give ``True``/``False``; a label
        value there is read by the polarity rule (``docs/contract.md#polarity``): ``favorable=1``
        means True is selected, ``favorable=0`` is ambiguous (False, or the favorable label that
        True stands for?) and needs ``score_label``. Default 1. Refused with ``y_score`` (the
        scoring rate reads no label), as ``score_label`` is.
    score_label
        The label a Boolean ``y_pred``'s True stands for (e.g. ``score_label=0`` with
        ``favorable=0`` when True means "approved" and approval is label 0).
    by
        Optional column(s): one audit per value (job posting, year, ...), same pass.
    intersections
        Largest attribute-set size, or explicit sets (default: every attribute and every
        intersection, as LL144 requires).
    exclude_below
        Exclude categories with fewer than this fraction of the known rows of their attribute set
        from the comparisons (NYC LL144 § 5-301(d) allows ``0.02``). Excluded rows stay in the
        table with ``excluded=True`` and the reason. Default None (no exclusion).
    min_sample_size
        The small-group policy (``docs/status.md``; the same option as
        :func:`polfair.fairness_report`'s and the command line's ``--min-sample-size``): groups with
        fewer candidates are excluded from the comparisons (``excluded=True``, reason
        ``"insufficient_data: fewer than N candidates"``): they get no impact
        ratio, no four-fifths verdict and no test, and are never the highest-rate comparison group
        (29 CFR § 1607.4(D): differences "based on small numbers" are not evidence of adverse
        impact; a 2-person intersection is no comparison group). ``None`` (default): 30
        candidates; ``0``: no minimum.
    min_size
        The older name of ``min_sample_size`` (the same policy; give one of them).
    alpha
        Significance level of ``significant`` and of ``flip_significance`` (default 0.05, i.e.
        |z| >= 1.96: the "two standard deviations" rule).
    variance
        ``"pooled"`` two-sample z (default) or ``"hypergeometric"`` (Biddle's estimated test).
    shortfall_rate
        The rate of the expected selections of the shortfall: ``"overall"`` (the attribute set's
        selection rate over compared groups; default) or ``"highest"`` (the comparison group's).
    protected_proba, proba_assignment, proba_tolerance
        A category estimated from proxies (BISG race/ethnicity), as in
        :func:`polfair.confusion_counts` (``protected`` may then be omitted). The battery counts
        whole candidates, so a group's ``n`` and ``selected`` are the candidates apportioned to it
        by their probabilities (its expected candidates, rounded to whole ones within each
        decision; ``"argmax"``: the candidates whose likeliest group it is). **Caveat**, attached to
        the returned table (``polfair.core.report.run_metadata.request_of(table)["caveat"]``, stored by the
        writers, printed by the command line): the z and Fisher tests then treat estimated
        memberships as known, and the estimators' biases apply (the weighted estimator tends to
        understate disparities, the likeliest group to exaggerate them; Chen et al., FAT* 2019).
    on_missing
        As in :func:`polfair.scores.score_report`.

    Returns
    -------
    pl.DataFrame
        One row per (``by`` value, attribute set, group): ``*by``, ``attribute`` (String),
        ``group`` (String), ``n`` (Int64 candidates), ``selected`` (Int64), ``selection_rate``
        (Float64, selected / n; the scoring rate with ``y_score``), ``impact_ratio`` (Float64, the
        rate / the highest rate), ``reference_group`` (String: the group with the highest rate
        among compared groups), ``four_fifths_pass`` (Boolean: rate >= 4/5 of the highest, exact
        in integers), ``z`` (Float64, vs the highest group; negative when lower), ``p_value``
        (Float64, two-sided normal), ``significant`` (Boolean, p < alpha), ``fisher_p_value``
        (Float64, two-sided Fisher exact vs the highest group), ``shortfall`` (Float64, expected
        minus actual selections), ``flip_four_fifths`` (Int64: extra selections the group needs to
        pass the four-fifths rule), ``flip_significance`` (Int64: extra selections that make the z
        test non-significant; a value <= 2 fails Biddle's practical-significance check),
        ``excluded`` (Boolean), ``excluded_reason`` (String: ``"unknown demographics"`` or
        ``"under 0.02 of the data"``), ``median_score`` (Float64, the median used for scoring
        rates; null with ``y_pred``). Comparison columns are null on the reference group's row
        (``z``, p-values, flips) and on excluded rows.

    Raises
    ------
    PolfairError
        Unknown preset, both or neither of ``y_pred`` / ``y_score``, ``y_score`` with the eeoc
        preset, invalid ``alpha`` / ``exclude_below``.
    ColumnNotFoundError, InvalidInputError, PolarityError
        As :func:`~polfair.scores.counts.score_counts` and
        :func:`~polfair.scores.counts.decision_counts`.

    Notes
    -----
    See the module docstring for the regulation text. The tests reproduce the Uniform Guidelines
    Q&A 12 example and published worked examples, and compare Fisher's test with scipy.

    Examples
    --------
    >>> import polars as pl
    >>> import polfair as pf
    >>> from polfair.regulatory import adverse_impact
    >>> t = adverse_impact(pf.load_compas(), y_pred=pl.col("decile_score") < 5, favorable=True,
    ...                    protected=["race", "sex"], intersections=1)
    >>> aa = t.filter(attribute="race", group="African-American")
    >>> aa.select("selection_rate", "impact_ratio", "four_fifths_pass").row(0)
    (0.4239370078740157, 0.532638804764789, False)
    """
    if preset not in PRESETS:
        msg = f"preset must be one of {PRESETS}, got {preset!r}"
        raise PolfairError(msg)
    if (y_pred is None) == (y_score is None):
        msg = "give exactly one of y_pred= (the decision) or y_score= (nyc_ll144 scoring rate)"
        raise PolfairError(msg)
    if y_score is not None and preset != "nyc_ll144":
        msg = "y_score (scoring rate above the median) is NYC LL144's measure: use preset='nyc_ll144', or give y_pred"
        raise PolfairError(msg)
    if y_score is not None:  # the scoring rate reads the score itself: no label to be favorable
        refuse_unused("adverse_impact", {"favorable": favorable, "score_label": score_label},
                      because="y_score= is read as NYC LL144's scoring rate (a score above the overall median), which reads "
                      "no label (favorable and score_label read a decision, y_pred=)")  # fmt: skip
    favorable = 1 if favorable is None else favorable
    # one pass on any engine (Polars, Spark, DuckDB): the decision is read by the input contract's
    # label rules (favorable in the column's dtype, null/NaN missing, a fractional Float an error)
    proba: dict[str, Any] = {"protected_proba": protected_proba, "proba_assignment": proba_assignment,
                             "proba_tolerance": proba_tolerance, "on_missing": on_missing}  # fmt: skip
    if y_pred is not None:
        request = PassOptions.of(y_pred=y_pred, protected=protected, favorable=favorable, by=by,
                                 score_label=score_label, **proba)  # fmt: skip
        hist = decision_counts(data, request, with_missing=True)
        cut: float | None = 0.5
    else:
        assert y_score is not None  # checked above: exactly one of y_pred / y_score
        hist = score_counts(data, y_true=None, y_score=y_score, protected=protected, by=by, with_missing=True, **proba)
        cut = None
    hist = split_missing(hist, what="decision" if y_pred is not None else "score")[1]  # all missing: the one error
    by_n = hist.columns[: len(as_list(by))]
    battery: Battery = {"intersections": intersections, "exclude_below": exclude_below, "alpha": alpha,
                        "variance": variance, "shortfall_rate": shortfall_rate, "min_size": min_size,
                        "min_sample_size": min_sample_size}  # fmt: skip
    table = adverse_impact_from_counts(hist, by=by_n, cut=cut, **battery)
    if protected_proba is None:
        return table
    described = parse_protected_proba(protected_proba, proba_assignment, proba_tolerance).describe()
    caveat = (
        f"{estimated_note(described, intervals=False)} The four-fifths rule, the z and Fisher tests count each group's candidates "
        "apportioned by their probabilities as if memberships were known."
    )
    return attach_request(table, {"protected_proba": described, "caveat": caveat})


class Battery(TypedDict, total=False):
    """The battery's options: the keywords of :func:`adverse_impact` that :func:`adverse_impact_from_counts` takes.

    ``intersections``, ``exclude_below``, ``alpha``, ``variance``, ``shortfall_rate``, ``min_size``
    and ``min_sample_size``: each as in :func:`adverse_impact`, with its default there.
    """

    intersections: int | Sequence[Sequence[str]] | None
    exclude_below: float | None
    alpha: float
    variance: Literal["pooled", "hypergeometric"]
    shortfall_rate: Literal["overall", "highest"]
    min_size: int | None
    min_sample_size: int | None


@keywords_of(adverse_impact)
@shares_parameters(adverse_impact, name="adverse_impact")
def adverse_impact_from_counts(
    hist: pl.DataFrame, *, by: str | Sequence[str] | None = None, cut: float | None = 0.5, **battery: Unpack[Battery]
) -> pl.DataFrame:
    """:func:`adverse_impact` from a score histogram of the decision (or of the score).

    Parameters
    ----------
    hist
        :func:`~polfair.scores.counts.score_counts` output (``y_true=None``) whose ``score`` is the
        0/1 decision (``cut=0.5``) or a score (``cut=None``: the sample median per ``by`` value,
        NYC's scoring rate). A row is selected when its score is strictly above the cut.
    by
        The histogram's ``by`` column names.
    intersections, exclude_below, alpha, variance, shortfall_rate, min_sample_size, min_size
        As in :func:`adverse_impact`.

    Returns
    -------
    pl.DataFrame
        As :func:`adverse_impact`.

    Examples
    --------
    >>> import polars as pl
    >>> from polfair.scores import score_counts
    >>> df = pl.DataFrame({"sex": ["f"] * 30 + ["m"] * 30, "hired": [1] * 6 + [0] * 24 + [1] * 18 + [0] * 12})
    >>> h = score_counts(df, y_true=None, y_score="hired", protected="sex")
    >>> adverse_impact_from_counts(h).select("group", "impact_ratio", "four_fifths_pass").rows()
    [('f', 0.33333333333333337, False), ('m', 1.0, True)]
    """
    options = inspect.signature(adverse_impact).bind(None, **battery)  # with adverse_impact's defaults
    options.apply_defaults()
    alpha, exclude_below, shortfall_rate, min_sample_size, min_size, variance, intersections = (
        options.arguments[k]
        for k in ("alpha", "exclude_below", "shortfall_rate", "min_sample_size", "min_size", "variance", "intersections")
    )
    if not 0 < alpha < 1:
        msg = f"alpha must be in (0, 1), got {alpha!r}"
        raise PolfairError(msg)
    if exclude_below is not None and not 0 <= exclude_below < 1:
        msg = f"exclude_below must be a fraction in [0, 1) (NYC LL144 allows 0.02), got {exclude_below!r}"
        raise PolfairError(msg)
    if shortfall_rate not in ("overall", "highest"):
        msg = f"shortfall_rate must be 'overall' or 'highest', got {shortfall_rate!r}"
        raise PolfairError(msg)
    min_size = _min_size(min_sample_size, min_size)
    if variance not in ("pooled", "hypergeometric"):
        msg = f"variance must be 'pooled' or 'hypergeometric', got {variance!r}"
        raise PolfairError(msg)
    by_n = [str(b) for b in as_list(by)]
    keys = [c for c in hist.columns if c not in (*by_n, "score", "label", *SCORE_COUNT_COLUMNS)]
    if not keys:
        msg = "adverse_impact needs at least one protected attribute"
        raise PolfairError(msg)
    out: list[dict[str, Any]] = []
    by_parts = hist.partition_by(by_n, maintain_order=True, as_dict=True) if by_n else {(): hist}
    for by_key, part in by_parts.items():
        med = _median(part) if cut is None else None
        threshold = med if cut is None else cut
        sel = part.with_columns((pl.col("n") * (pl.col("score") > threshold).cast(pl.Int64)).alias("__sel"))
        for attrs in attribute_sets(keys, intersections):
            a = list(attrs)
            g = (
                sel.group_by(a)
                .agg(pl.col("n").sum(), pl.col("__sel").sum().alias("selected"))
                .with_columns(
                    group_label(a).alias("group"),
                    pl.any_horizontal([pl.col(k).is_null() for k in a]).alias("unknown"),
                )
                .sort(["unknown", "group"])
            )
            for r in _rows_for_set(g, exclude_below, alpha, variance, shortfall_rate, min_size):
                out.append({**dict(zip(by_n, by_key)), "attribute": " & ".join(a), **r, "median_score": med})
    schema: dict[str, Any] = {**{b: hist.schema[b] for b in by_n}, **_SCHEMA}
    return pl.DataFrame(out, schema=schema).select(*by_n, *ADVERSE_IMPACT_COLUMNS)
