"""The front doors: :func:`fairness_report` and :func:`confusion_counts` (thin orchestrators).

``fairness_report`` builds ONE request (:func:`audit_request`, :class:`~polfair.core.request.AuditRequest`)
-> the monitor merges the config into it once (:func:`polfair.monitor.plan.plan_report`) -> the request
in effect is the spec's input (:mod:`polfair.core.passes.spec`) -> ONE pass (in Polars, or in
Spark/DuckDB via :mod:`polfair.engines.narwhals`) -> the core report of the same request
(:class:`~polfair.core.report.build.ReportOptions`, :func:`polfair.core.report.build.report_of`) ->
optional monitor annotations (thresholds, statuses, groupwise rows). The core knows nothing of the
monitor or of foreign engines; this module is where they meet. The CLI builds the request once and
hands it to :func:`run_request` / :func:`run_request_batches` and to its other sections.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import inspect
import uuid
import warnings
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, NamedTuple

import polars as pl

from polfair.compat.yardstick import split_metrics
from polfair.core._typing import IntoExpr, OnMissing, Reference
from polfair.core.clustered import clustered_report, sum_buckets
from polfair.core.contract import cell_alarms
from polfair.core.contract.inputs import is_foreign
from polfair.core.docstrings import shares_parameters
from polfair.core.options import check_known, checks_keywords
from polfair.core.passes.collect import collect_cells
from polfair.core.passes.counts import BUCKET, cell_table, checked_polarity, pivot_codes
from polfair.core.passes.estimated import cell_table as proba_cell_table
from polfair.core.passes.estimated import expand_codes
from polfair.core.passes.spec import Spec, build_spec
from polfair.core.proba import DEFAULT_TOLERANCE, check_proba_options
from polfair.core.report.build import (
    SEPARATOR,
    ReportOptions,
    attribute_sets,
    budget_message,
    budget_sets,
    report_batches_of,
    report_of,
)
from polfair.core.report.run_metadata import attach_request, request_of, with_run_metadata
from polfair.core.report.selection import SELECTABLE
from polfair.core.report.wide import to_wide
from polfair.core.report.worst import check_worst_options, groups_limited
from polfair.core.request import AuditRequest
from polfair.core.values import check_option_types
from polfair.engines.narwhals import foreign_code_table
from polfair.exceptions import PolarityWarning, PolfairError, ReportSizeWarning, user_stacklevel
from polfair.monitor.plan import ReportPlan, plan_report

__all__ = [
    "LazyReport",
    "audit_request",
    "confusion_counts",
    "fairness_report",
    "fairness_report_batches",
    "lazy_report",
    "run_request",
    "run_request_batches",
]


def confusion_counts(
    data: Any,
    *,
    y_true: IntoExpr,
    y_pred: IntoExpr | None = None,
    y_score: IntoExpr | None = None,
    threshold: float = 0.5,
    protected: IntoExpr | Sequence[IntoExpr] | None = None,
    favorable: Any = 1,
    unfavorable: Any = None,
    score_label: Any = None,
    weight: IntoExpr | None = None,
    by: IntoExpr | Sequence[IntoExpr] | None = None,
    cluster: IntoExpr | None = None,
    n_buckets: int = 20,
    allow_many_groups: bool = False,
    exact_sums: bool = False,
    protected_proba: Mapping[str, Mapping[str, IntoExpr | None]] | None = None,
    proba_assignment: Literal["weighted", "argmax"] = "weighted",
    proba_tolerance: float = DEFAULT_TOLERANCE,
) -> pl.LazyFrame:
    """Weighted confusion counts per cell of every protected-attribute combination, in one pass.

    Builds (does not run) ONE ``group_by`` over the input that yields the sufficient statistics
    of every group metric polfair computes: the *cell table*. Collect it with
    ``.collect(engine="streaming")`` to run out of core.

    Parameters
    ----------
    data
        ``pl.DataFrame``, ``pl.LazyFrame``, pandas DataFrame, pyarrow Table, dict of columns, a
        path/glob/hive directory of parquet or CSV files (scanned lazily), or a PySpark DataFrame /
        DuckDB relation (the pass then runs inside that engine at call time, via narwhals, and only
        the small result is collected; column arguments must be names; see :mod:`polfair.engines.narwhals`).
    y_true
        Column name or expression of the true labels, one per row. Integer, boolean or string.
    y_pred
        Column name or expression of the predicted labels (same values as ``y_true``), or a boolean
        expression such as ``pl.col("decile_score") >= 5``. A boolean next to non-Boolean labels
        stands for a label (the polarity rule, ``docs/contract.md#polarity``): True is the
        favorable label where that is unambiguous (it sorts above every unfavorable label: 1 of
        0/1 labels, ``"yes"`` of ``"no"``/``"yes"``); elsewhere (``favorable=0``, ``favorable="no"``,
        1/2 labels) ``score_label`` must say which label True stands for, else
        :class:`~polfair.exceptions.PolarityError`.
    y_score
        Column name or expression of scores in [0, 1]: the probability of the label ``score_label``
        (default: the favorable label, under the same rule as a Boolean ``y_pred``). Used for the
        generalized counts and, when ``y_pred`` is not given, for the prediction
        ``score >= threshold`` (a prediction of ``score_label``).
    threshold
        Float in [0, 1]; the decision threshold for ``y_score``. Default 0.5.
    protected
        One or more column names or named expressions (bin numerics with e.g.
        ``pl.when(pl.col("age") < 25).then(pl.lit("<25")).otherwise(pl.lit(">=25")).alias("age_band")``). Null values are kept as a group.
    favorable
        Label value, or list of values, that is the favorable outcome. Default ``1``.
    unfavorable
        Optional label value(s) that are unfavorable. When given, a label that is neither is an
        error (counted in ``n_invalid``); when omitted every other value is unfavorable.
    score_label
        The label value ``y_score`` is the probability of, and that a Boolean ``y_pred``'s True
        stands for. ``None`` (default): the favorable label, where aif360's reading (scores of the
        favorable label) and scikit-learn's (``predict_proba(X)[:, 1]``, the larger label) agree:
        every favorable label sorts above every unfavorable one (decided before the pass where the
        dtype or the options tell, else checked in the pass); where they differ, a
        :class:`~polfair.exceptions.PolarityError` names both readings. A favorable value: the
        score is P(favorable), True = favorable (aif360's reading). An unfavorable value ``u``
        (e.g. ``score_label=1`` for ``predict_proba(X)[:, 1]`` of a denial label with
        ``favorable=0``): the score is P(y = ``u``), polfair reads P(favorable) = 1 − score, and
        ``score >= threshold`` (or True) predicts ``u``; ``u`` must be the only unfavorable label.
    weight
        Optional column name or expression of non-negative instance weights (Float64).
    by
        Optional column name(s) or expressions; one independent set of cells per ``by`` value.
    cluster
        Optional column name or expression of a cluster id (several rows per person, session,
        hospital ...): adds the key ``bucket`` (UInt8) = hash(id) mod ``n_buckets`` to the same
        pass, for cluster-robust (delete-a-group jackknife) intervals. Integer ids use a fixed
        multiplicative hash; other ids Polars' hash (stable within one Polars version).
    n_buckets
        Int in 2…255, the number of jackknife buckets (default 20).
    allow_many_groups
        Bool, default ``False``. Accepted for symmetry with :func:`fairness_report`, which applies
        the many-groups guard to the counted table (``confusion_counts`` only builds the plan).
    exact_sums
        Bool, default ``False``: weighted sums are Float64 (fast; reproducible to about 1e-13
        relative from run to run, unweighted counts exactly). ``True``: exact fixed-point sums
        (Σw, Σw·s and Σw² on a 2**-56 / 2**-80 grid, summed as 128-bit integers), so the cell table
        and everything computed from it are bit-identical in any row order, chunking, thread
        count and engine; a weight must then be 0 or in [2**-16, 2**40) (else an error naming
        this option), about 1.5x the cost of the Float64 pass. See ``docs/contract.md``.
    protected_proba
        Optional protected attribute *estimated from proxies* (BISG, ...): ``{attribute: {group:
        probability column or expression}}``, e.g. ``{"race": {"white": "p_white", "black":
        "p_black", "hispanic": "p_hispanic", "other": None}}`` (``None``: the remainder group,
        1 − the others). One attribute; it becomes the last protected key of the cell table (an
        Enum of the groups, in this order), alongside observed ``protected`` attributes
        (``protected`` may then be omitted) and intersected with them. Each probability is in
        [0, 1]; a row's probabilities sum to 1 within ``proba_tolerance`` and are divided by their
        sum; a null/NaN among them makes the row's group unknown (the attribute's null group,
        counted in ``n_missing``); anything else is invalid (``n_invalid`` here, an error in
        :func:`fairness_report`). Not with ``exact_sums=True``. See :mod:`polfair.core.proba` and
        ``docs/proxy-groups.md``.
    proba_assignment
        ``"weighted"`` (default): the weighted estimator: a row counts in every group with
        weight ``w·p_g``, so each rate is ``Σ w·p_g·1[outcome] / Σ w·p_g`` (Chen, Kallus, Mao,
        Svacha & Udell, FAT* 2019: unbiased when the outcome is independent of the group given the
        proxies; otherwise biased by their conditional covariance, typically *understating*
        disparities). Weighted counts are the probability sums, ``tp_w2 ...`` are ``Σ w²·p_g``, and
        the row counts (``n``, ``tp_n`` ...) are the rows apportioned to the groups by their
        probabilities (whole rows, adding up to the input's rows; :mod:`polfair.core.passes.estimated`).
        ``"argmax"``: each row in its likeliest group (ties: the group named first), an ordinary
        cell table of the imputed attribute. **Warning**: Chen et al. show this threshold-based
        imputation is biased, generally *exaggerating* disparities, by an amount that varies
        strongly with the threshold; use it to compare, not as the estimate.
    proba_tolerance
        Float in [0, 1), default 1e-6: how far a row's probabilities may sum from 1 (raise it
        for rounded probabilities, e.g. 1e-3 for three decimals).

    Returns
    -------
    pl.LazyFrame
        The cell table. Columns: ``*by``, ``*protected`` (input dtypes), ``bucket`` (UInt8, only
        with ``cluster``), then ``n, n_missing, n_invalid`` (UInt64), ``w, tp, fp, tn, fn``
        (Float64), ``tp_n, fp_n, tn_n, fn_n`` (UInt64), ``gtp, gfp, gtn, gfn`` (Float64),
        ``tp_w2, fp_w2, tn_w2, fn_w2`` (Float64, Σw² per class; the counts when unweighted); one
        row per observed cell, sorted by the keys (nulls first). See :mod:`polfair.core.passes.counts`.

    Raises
    ------
    ColumnNotFoundError
        A named column is missing (at call time).
    PolfairError
        Invalid options (at call time). Data problems (labels outside favorable/unfavorable,
        scores outside [0, 1], negative weights) are *counted* in ``n_invalid`` here;
        :func:`polfair.fairness_report` raises on them.
    PolarityError
        ``y_score`` or a Boolean ``y_pred`` can be read two ways and ``score_label`` does not say
        which (at call time where the dtype or options tell; labels that only the data shows to
        be ambiguous, such as 1/2 labels with ``favorable=1``, are counted in ``n_invalid`` here
        and raise in :func:`polfair.fairness_report`).

    Notes
    -----
    Counts are exact 64-bit integers when unweighted; weighted sums are Float64 and may differ in
    the last bits between runs of the streaming engine (summation order; about 1e-13 relative),
    unless ``exact_sums=True``. Every role follows the input contract (``docs/contract.md``). With
    ``y_pred`` and ``y_score`` both absent, the prediction mirrors the label (``fp = fn = 0``), so
    the label-side metrics (base rates) are what remains meaningful.

    Examples
    --------
    >>> import polars as pl
    >>> import polfair as pf
    >>> df = pl.DataFrame({"y": [1, 0, 1, 1], "p": [1, 1, 0, 1], "sex": ["f", "f", "m", "m"]})
    >>> cells = pf.confusion_counts(df, y_true="y", y_pred="p", protected="sex").collect()
    >>> cells.select("sex", "n", "tp", "fp", "tn", "fn")
    shape: (2, 6)
    ┌─────┬─────┬─────┬─────┬─────┬─────┐
    │ sex ┆ n   ┆ tp  ┆ fp  ┆ tn  ┆ fn  │
    │ --- ┆ --- ┆ --- ┆ --- ┆ --- ┆ --- │
    │ str ┆ u64 ┆ f64 ┆ f64 ┆ f64 ┆ f64 │
    ╞═════╪═════╪═════╪═════╪═════╪═════╡
    │ f   ┆ 2   ┆ 1.0 ┆ 1.0 ┆ 0.0 ┆ 0.0 │
    │ m   ┆ 2   ┆ 1.0 ┆ 0.0 ┆ 0.0 ┆ 1.0 │
    └─────┴─────┴─────┴─────┴─────┴─────┘
    """
    kwargs = dict(y_true=y_true, y_pred=y_pred, y_score=y_score, threshold=threshold, protected=protected,
                  favorable=favorable, unfavorable=unfavorable, weight=weight, by=by)  # fmt: skip
    check_option_types(kwargs | {"allow_many_groups": allow_many_groups, "exact_sums": exact_sums,
                                 "score_label": score_label})  # fmt: skip
    kwargs["exact_sums"] = exact_sums
    kwargs["score_label"] = score_label
    if cluster is not None:
        kwargs |= {"cluster": cluster, "n_buckets": n_buckets}
    check_proba_options(protected_proba, proba_assignment, proba_tolerance)
    if protected_proba is not None:
        kwargs |= {"protected_proba": protected_proba, "proba_assignment": proba_assignment,
                   "proba_tolerance": proba_tolerance}  # fmt: skip
    if is_foreign(data):  # Spark, DuckDB, ...: the pass runs now, in that engine
        codes, fspec = foreign_code_table(data, **kwargs)
        lazy = checked_polarity(codes.lazy(), fspec)
        return pivot_codes(lazy if fspec.proba is None else expand_codes(lazy, fspec), fspec)
    if protected_proba is not None:
        return proba_cell_table(data, **kwargs, allow_many_groups=allow_many_groups)
    return cell_table(data, **kwargs, allow_many_groups=allow_many_groups)


@shares_parameters(confusion_counts)
@checks_keywords
def fairness_report(
    data: Any,
    *,
    y_true: IntoExpr | None = None,
    y_pred: IntoExpr | None = None,
    y_score: IntoExpr | None = None,
    threshold: float | None = None,
    protected: IntoExpr | Sequence[IntoExpr] | None = None,
    favorable: Any = 1,
    unfavorable: Any = None,
    score_label: Any = None,
    privileged: Mapping[str, Any] | None = None,
    reference: Reference | None = None,
    weight: IntoExpr | None = None,
    by: IntoExpr | Sequence[IntoExpr] | None = None,
    intersections: int | Literal["all", "none"] | Sequence[Sequence[str]] | None = None,
    alpha: float = 2.0,
    concentration: float = 1.0,
    on_missing: OnMissing = "warn",
    engine: str = "streaming",
    thresholds: Mapping[str, Any] | str | None = None,
    min_sample_size: int | None = None,
    max_sample_size: int | None = None,
    config: Any = None,
    metrics: Sequence[str] | None = None,
    user_metrics: Sequence[Any] | Mapping[str, Any] | None = None,
    max_intersection_groups: int = 1000,
    max_groups_per_attribute: int | None = 1000,
    worst_k: int = 20,
    shape: Literal["long", "wide"] = "long",
    run_metadata: bool | Mapping[str, Any] = False,
    allow_many_groups: bool = False,
    ci: float | None = 0.95,
    ci_method: Literal["auto"] = "auto",
    n_boot: int = 200,
    seed: int = 0,
    p_adjust: Literal["bh", "by", "holm"] | None = "bh",
    cluster: IntoExpr | None = None,
    n_buckets: int = 20,
    significance: float | None = None,
    min_group_size: int | None = None,
    exact_sums: bool = False,
    band: Literal["both", "harm"] | None = None,
    protected_proba: Mapping[str, Mapping[str, IntoExpr | None]] | None = None,
    proba_assignment: Literal["weighted", "argmax"] = "weighted",
    proba_tolerance: float = DEFAULT_TOLERANCE,
) -> pl.DataFrame:
    """Audit a classifier's decisions (or a dataset's labels) for group fairness, in one pass.

    Reads the input once (one ``group_by`` to the cell table, :func:`polfair.confusion_counts`),
    then computes every group metric for every protected attribute, every intersection of them and
    the whole population, compares each group with a reference group, and adds the entropy
    indices and differential fairness, all from the cell table. Use it as
    ``df.pipe(pf.fairness_report, ...)``.

    Parameters
    ----------
    data
        ``pl.DataFrame``, ``pl.LazyFrame``, pandas DataFrame, pyarrow Table, a parquet/CSV path
        (scanned lazily), or a PySpark DataFrame / DuckDB relation (the counting pass runs inside
        that engine; only the cell table is collected; column arguments must be names).
    y_true, y_pred, y_score, protected, favorable, unfavorable, score_label, weight, by
        As in :func:`polfair.confusion_counts`.
    threshold
        Float in [0, 1]; the decision threshold for ``y_score`` (ŷ = score >= threshold) when
        ``y_pred`` is not given. Default: the config's ``threshold``, else 0.5.
    protected_proba, proba_assignment, proba_tolerance
        A protected attribute estimated from proxies (BISG probabilities of race, ...), as in
        :func:`polfair.confusion_counts`: every metric, interval, intersection with the observed
        ``protected`` attributes and output follows (weighted estimator by default, the likeliest
        group with ``"argmax"``). The intervals account for fractional membership through Kish
        effective sizes ``(Σ w·p)² / Σ w²·p``; they describe sampling noise only, not the bias of
        the estimator (``docs/proxy-groups.md``). The request (``request_of``) and the HTML page say
        the groups are estimated.
    privileged
        Optional mapping attribute -> privileged value (or list of values), e.g.
        ``{"race": "Caucasian", "sex": "Male"}``. An attribute set whose attributes all have a
        privileged value is compared with that group; others fall back to the largest group. A
        value found in no row warns (:class:`polfair.exceptions.ReferenceWarning`).
    reference
        ``None`` (default: privileged where given, else largest), ``"privileged"`` (require
        ``privileged`` for every attribute set; others get null comparisons), ``"largest"``
        (the group with the largest total weight), ``"overall"`` (the whole population), or
        ``"best"`` (per metric, the group with the best value: highest for rates where higher is
        better, lowest for error rates; highest for counts).
    intersections
        ``None`` (default): every non-empty subset of up to 3 protected attributes; with more,
        every single attribute, every pair and the full intersection (``k + k(k−1)/2 + 1`` sets
        instead of ``2^k − 1``: 37 instead of 255 for 8 attributes), the intersections under the
        budget ``max_intersection_groups``. ``"all"``: every non-empty subset. ``"none"``: every
        attribute alone. An int ``k``: subsets of at most ``k`` attributes. Or an explicit list of
        attribute-name lists. A report of more than 5 million rows warns
        (:class:`polfair.exceptions.ReportSizeWarning`).
    alpha
        Float, the α of ``generalized_entropy_index`` (default 2).
    concentration
        Float ≥ 0, the smoothing of ``smoothed_empirical_differential_fairness`` (default 1).
    on_missing
        ``"warn"`` | ``"raise"`` | ``"ignore"``: what to do about rows with a null label,
        prediction, score or weight (always counted in ``n_missing`` and excluded from rates).
    engine
        Polars engine for the pass; default ``"streaming"`` (bounded memory).
    thresholds
        Optional mapping metric -> inclusive band ``[lo, hi]`` (or ``{"min": lo}``/``{"max": hi}``),
        e.g. ``{"disparate_impact": [0.8, 1.25]}``; adds ``threshold`` and ``status`` columns
        (:func:`polfair.monitor.apply_thresholds`; list violations with :func:`polfair.monitor.alerts`).
        Or a policy name: ``"four_fifths"`` is the four-fifths band [0.8, 1.25] on
        ``disparate_impact`` and (with predictions) the FPR and FNR ratios. Without thresholds the
        report has no ``status`` and no output judges it (``docs/status.md``).
        The status is the rule of :mod:`polfair.core.report.status`: ``ok`` inside the band;
        ``violation`` when the value and (with ``ci``) its whole interval lie outside it;
        ``inconclusive`` when the value lies outside but its interval reaches in;
        ``insufficient_data`` below ``min_sample_size`` or for an undefined value.
    band
        ``"both"`` (default; the config's ``band`` otherwise): judge both sides of every band.
        ``"harm"``: only the side that disadvantages the group (the ``harm`` direction of the
        metric): ``disparate_impact = [0.8, 1.25]`` flags only ratios below 0.8, as the US EEOC
        reads the four-fifths rule; ``false_negative_rate_ratio`` only ratios above 1.25.
    min_sample_size
        Input rows a group needs for a verdict and to be a comparison group: the small-group
        policy (:mod:`polfair.core.reference`; ``docs/status.md``). ``None`` (default): the
        config's, else 30 rows; ``0``: no minimum. A judged row whose group or reference has fewer
        rows gets ``status="insufficient_data"``, never ok/violation; ``reference="largest"`` and
        ``"best"`` choose among the groups that meet it; a named ``privileged`` group below it warns
        (:class:`~polfair.exceptions.ReferenceWarning`).
    max_sample_size
        Optional int: above it, audit a seeded uniform sample of this many rows
        (:func:`polfair.monitor.sample_rows`, seed from ``config`` or 0).
    config
        Optional :class:`polfair.monitor.FairnessConfig`, mapping, or ``.toml``/``.json`` path:
        favorable outcomes, monitored/reference groups (value sets or numeric ranges; they become
        protected keys and ``privileged``), thresholds, sample sizes, groupwise metrics and column
        names. Keywords given here win; see ``docs/monitoring.md``.
    metrics
        Optional list of the report's metric names to compute, e.g. ``["selection_rate",
        "false_positive_rate"]``: group metrics (their group rows, their spreads on the attribute
        rows, their population rows), named disparities (``"disparate_impact"``), fairlearn's
        attribute-level disparities, the entropy indices and EDF, ``"n_missing"``
        (:data:`polfair.core.report.selection.SELECTABLE`). The report then holds only their rows,
        equal to the full report's rows of them (intervals included), and computes only what they
        need. ``None`` (default): every metric. An unknown name is an error naming the closest.
        Before this release ``metrics=`` held user metrics; that form (a mapping, groupwise
        metrics or their names) still works for one version with a ``DeprecationWarning``: use
        ``user_metrics=``.
    user_metrics
        Optional list of :class:`polfair.compat.yardstick.GroupwiseMetric` (or built-in names such as
        ``"equalized_odds"``); each adds one attribute-level row per attribute set and ``by`` group.
        Or a mapping of **user metrics** ``{name: expression}`` over the cell table's count columns
        (``tp, fp, tn, fn``, their ``_n`` (unweighted) and ``_w2`` (Σw²) forms, ``w``, ``n``,
        ``gtp, gfp, gtn, gfn``), e.g. ``{"f_half": 1.25 * pl.col("tp") / (1.25 * pl.col("tp") +
        0.25 * pl.col("fn") + pl.col("fp"))}``, a function of a
        :class:`~polfair.core.metrics.Counts` accessor, or ``{"expr": ..., "higher_is_better":
        False}``: each gets group rows (value, difference and ratio against the reference group),
        attribute rows (spreads) and population rows, like a built-in metric, without intervals
        (:mod:`polfair.core.user_metrics`).
    max_intersection_groups
        Int >= 0, default 1,000: the intersection budget of the default ``intersections``. Every
        attribute is audited alone; the default intersections are audited, in report order, while
        the intersection groups they hold together stay within the budget; an intersection over it
        (a 10k-level zip code × sex) is skipped, said once (a
        :class:`~polfair.exceptions.ReportSizeWarning`) and listed in the report's request
        (``intersections_skipped``: attributes, groups, reason). ``intersections="all"`` (or an int,
        or a list) audits what it names, whatever the budget (``docs/scale.md``).
    max_groups_per_attribute, worst_k
        Int >= 1 or None (default 1,000) and int >= 0 (default 20): an attribute set with more
        than ``max_groups_per_attribute`` groups in a ``by`` value (a zip code) keeps its attribute
        rows over every group and shows the group rows of its ``worst_k`` worst groups by the
        interval rule (the largest one-sided confidence bound of a rate's difference from the
        reference on its harmful side) and of its reference groups; said once (a
        :class:`~polfair.exceptions.ReportSizeWarning`) and listed in the report's request
        (``groups_limited``). ``None``: every group's rows (:mod:`polfair.core.report.worst`).
    allow_many_groups
        Bool, default ``False``: a Float ``protected``/``by`` column, or one with more than 1000
        distinct values that are more than half the rows (an id, score or weight passed by
        mistake), is an error suggesting binning. ``True`` audits every distinct value as a group.
    ci
        Confidence level in (0, 1), default ``0.95``: adds the interval and test columns
        ``value_lo, value_hi, difference_lo, difference_hi, ratio_lo, ratio_hi, p_value,
        p_value_adjusted, n_eff`` (Float64) and ``ci_method, test`` (Categorical) after ``n``
        (methods in :mod:`polfair.core.intervals`; from the cell table, no second pass; a fixed
        cost of roughly 0.1–0.3 s per report, independent of the number of rows). ``None``: no
        interval columns (the schema of polfair before intervals, and the fastest report).
    ci_method
        ``"auto"``: Wilson / Newcombe / MOVER-R closed forms, projections for spreads, equalized
        odds and EDF, a bias-corrected normal interval from the analytic moments of the cell
        bootstrap for the entropy indices (``delta_bc``).
    n_boot, seed
        Kept for compatibility: the report uses no random numbers (closed forms, exact-moment
        homogeneity tests, analytic entropy intervals), so they change nothing in it.
    p_adjust
        ``"bh"`` (Benjamini–Hochberg, default), ``"by"``, ``"holm"`` or ``None``: ``p_value_adjusted``
        within each (``by`` value, row kind, metric) family: group rows and attribute rows are
        adjusted separately.
    cluster, n_buckets
        Optional cluster id column (several rows per person, session, ...) and the number of
        hashed buckets (2…255, default 20), as in :func:`polfair.confusion_counts`: the cell table
        of the pass gains the ``bucket`` key. The report's numbers do not change (the bucket is
        summed away before the core report). With ``ci``, the intervals and tests of the group
        rows become cluster-robust delete-a-group jackknife ones (``ci_method="jackknife_t"``,
        ``test="jackknife_t"``; :func:`polfair.core.clustered.jackknife_report_intervals`); the
        attribute-level and population rows keep their methods (the jackknife is inconsistent
        for the max/min spreads). Same schema.
    significance
        Deprecated (``FutureWarning``): ``significance=a`` is ``ci=1-a``, the level of the
        intervals the status rule reads (a violation's whole interval lies outside the band).
        It no longer compares p-values with ``a`` (``docs/schema.md``, version 3). Giving it with
        another ``ci`` is an error.
    min_group_size
        Optional positive int: small-cell disclosure control. Group rows of groups with fewer
        than this many input rows (``n``) are removed from the returned report (so from what is
        displayed and written), and comparisons against a removed reference group are nulled;
        every other number is unchanged (:func:`polfair.monitor.disclosure.suppress_small_groups`).
        Thresholds are judged before the removal.
    exact_sums
        Bool, default ``False`` (Float64 weighted sums, reproducible to about 1e-13 relative).
        ``True``: exact fixed-point sums, so the ENTIRE report, interval columns included, is
        bit-identical in any row order, chunking, thread count and engine (Polars, DuckDB, Spark);
        weights must be 0 or in [2**-16, 2**40). As in :func:`polfair.confusion_counts`; the
        config's ``[statistics]`` table and the CLI's ``--exact-sums`` set it too.
    shape
        ``"long"`` (default: one row per metric, for ETL and appends) or ``"wide"``: one row per
        (by, attribute set, group), one column per metric and ``<metric>__<statistic>`` columns
        (:func:`polfair.core.report.wide.to_wide`; same numbers).
    run_metadata
        ``True``: append ``run_id``, ``run_at`` (UTC), ``polfair_version``, ``schema_version`` and
        ``config_hash`` (the hash of this call's options) columns
        (:func:`polfair.core.report.run_metadata.with_run_metadata`); a mapping such as
        ``{"run_id": "nightly-2026-05-01"}`` also sets them. Default ``False``.

    Returns
    -------
    pl.DataFrame
        Long/tidy report with columns ``*by, attribute, group, metric, value, reference_group,
        difference, ratio, n``; see :mod:`polfair.core.report.build` for the schema and row kinds. Rates
        are fractions in [0, 1]; counts are weighted when ``weight`` is given. With
        ``thresholds``/``min_sample_size``/``config``, also ``threshold`` (String, the band
        applied) and ``status`` (``"ok" | "violation" | "inconclusive" | "insufficient_data"``,
        null where no threshold applies). ``harm`` (String) says which side of each directed
        comparison is disadvantaged (``"group"``, ``"reference"``, ``"none"``). With
        ``run_metadata``, the run columns come last (``docs/schema.md``); with ``shape="wide"``,
        the wide form (:func:`polfair.core.report.wide.to_wide`) of all of it. The returned frame
        carries the request (label, prediction, favorable, groups, bands, ci, weight, version)
        as metadata: :func:`polfair.core.report.run_metadata.request_of`; the writers store it in
        parquet key-value metadata and :func:`polfair.write_html` shows it.

    Raises
    ------
    ColumnNotFoundError
        A named column is missing (suggests close names).
    InvalidInputError
        Empty input, invalid labels/scores/weights, or missing values with ``on_missing="raise"``.
    PolarityError
        ``y_score`` or a Boolean ``y_pred`` can be read two ways relative to ``favorable``; the
        message names both and the ``score_label`` of each (``docs/contract.md#polarity``).
    PolfairError
        Invalid options, or a protected attribute that is the label.

    Warns
    -----
    MissingValuesWarning
        Rows with a null label, prediction, score or weight (with ``on_missing="warn"``).
    ReferenceWarning
        A ``privileged`` value that occurs in no row of its column (a misspelling, or another
        type: ``"1"`` for ``1``); with none of an attribute's values present, every comparison
        with the privileged group is null.
    ReportSizeWarning
        A report of more than 5 million rows (see ``intersections``).
    PolarityWarning
        The population's predictions or scores look inverted relative to ``favorable`` (accuracy
        below 0.5, or a mean score lower on favorable than on unfavorable labels); also in the
        report's request (``polarity_warnings``, shown on the HTML page).

    Notes
    -----
    Without ``y_pred`` and ``y_score`` the report audits the labels alone (base rates; statistical
    parity and disparate impact on base rates; EDF), as aif360's ``BinaryLabelDatasetMetric`` does.

    Policies. Signs: ``difference = group − reference``, ``ratio = group / reference`` (aif360's
    unprivileged − privileged when the reference is the privileged group). Undefined values
    (zero denominators, ratios to a 0 reference) are null, never 0 or inf; where aif360 returns
    0.0 (PPV/NPV/FDR/FOR/accuracy of an empty group) or inf (x/0 ratios), the report returns null
    on purpose; the aif360-compatible classes reproduce aif360. ``equalized_odds_difference`` is
    null when either rate difference is undefined (aif360's builtin ``max`` would return one of
    them depending on argument order). The entropy indices are unweighted and use hard
    predictions (as aif360). A null protected value is its own group, shown as ``"null"``.

    Examples
    --------
    >>> import polars as pl
    >>> import polfair as pf
    >>> df = pl.DataFrame({
    ...     "y": [1, 0, 1, 1, 0, 0], "p": [1, 1, 0, 1, 0, 1],
    ...     "sex": ["f", "f", "f", "m", "m", "m"]})
    >>> rep = df.pipe(pf.fairness_report, y_true="y", y_pred="p", protected="sex",
    ...               privileged={"sex": "m"})
    >>> rep.filter(pl.col("metric") == "selection_rate", pl.col("group").is_not_null()).select(
    ...     "group", "value", "reference_group", "difference", "ratio")
    shape: (2, 5)
    ┌───────┬──────────┬─────────────────┬────────────┬───────┐
    │ group ┆ value    ┆ reference_group ┆ difference ┆ ratio │
    │ ---   ┆ ---      ┆ ---             ┆ ---        ┆ ---   │
    │ str   ┆ f64      ┆ cat             ┆ f64        ┆ f64   │
    ╞═══════╪══════════╪═════════════════╪════════════╪═══════╡
    │ f     ┆ 0.666667 ┆ m               ┆ 0.0        ┆ 1.0   │
    │ m     ┆ 0.666667 ┆ m               ┆ 0.0        ┆ 1.0   │
    └───────┴──────────┴─────────────────┴────────────┴───────┘
    """
    request = audit_request(**{k: v for k, v in locals().items() if k not in ("data", "shape", "run_metadata")})
    return run_request(data, request, shape=shape, run_metadata=run_metadata)[0]


def run_request(data: Any, request: AuditRequest, *, shape: str = "long",
                run_metadata: bool | Mapping[str, Any] = False) -> tuple[pl.DataFrame, AuditRequest]:  # fmt: skip
    """:func:`fairness_report` of a request built at a door (:func:`audit_request`): the report and the request in effect.

    The CLI builds one request and hands it to every section it prints: the report (here) and the
    adverse-impact battery, which reads the request in effect (the config merged: its minimum size).

    Returns
    -------
    (pl.DataFrame, AuditRequest)
        :func:`fairness_report`'s report, and ``request`` with its config merged (:func:`polfair.monitor.plan.plan_report`).
    """
    _check_shape(shape, run_metadata)
    prep = _prepare(data, request)
    return _finish(prep, shape, run_metadata), prep.plan.request


def _finish(prep: _Prepared, shape: str, run_metadata: Any) -> pl.DataFrame:
    """The report of a prepared request: the core report, cluster-robust intervals, the monitor, the stamp."""
    options = prep.options
    # cluster=: the buckets summed, then cluster-robust intervals on the group rows (as every door)
    report = report_of(prep.cells, options) if prep.bucketed is None else clustered_report(prep.bucketed, options, report_of)
    report = prep.plan.finish(report)
    if prep.hidden:  # metrics a selection did not name, computed for the groupwise metrics that read them
        report = report.filter(~pl.col("metric").cast(pl.String).is_in(prep.hidden))
    return attach_request(_shape_and_stamp(report, shape, run_metadata, prep.plan.hashed()), prep.provenance)

def fairness_report_batches(data: Any, *, batch_rows: int = 250_000, **kwargs: Any) -> Iterator[pl.DataFrame]:
    """:func:`fairness_report`'s long report in consecutive batches, each built as it is yielded (bounded memory).

    The same pass, options and rows as ``fairness_report(data, **kwargs)`` (their concatenation is
    that report, run metadata included, with one ``run_id`` and ``run_at``), but the rows are laid out
    ``batch_rows`` at a time (:func:`polfair.core.report.build.report_batches`), so a report of millions of
    rows can be written without holding it: ``polfair report ... --out`` uses it. Options that need the
    whole report at once (``cluster=`` with intervals, thresholds, ``min_group_size``, groupwise or
    user ``metrics``, a config's monitored groups, ``shape="wide"``) give the whole report as one batch.

    Parameters
    ----------
    data
        As in :func:`fairness_report`.
    batch_rows
        Report rows per batch (about: a batch ends with an entity's rows). 250,000 rows (~40 MiB with
        intervals) keep a batch well below the pass's own peak; larger batches save little time.
    **kwargs
        :func:`fairness_report`'s keywords.

    Returns
    -------
    Iterator[pl.DataFrame]
        Frames with :func:`fairness_report`'s schema, in its row order.

    Raises
    ------
    PolfairError
        As :func:`fairness_report` (raised when the first batch is asked for).

    Examples
    --------
    >>> import polars as pl
    >>> import polfair as pf
    >>> df = pl.DataFrame({"y": [1, 0, 1, 1, 0, 0], "p": [1, 1, 0, 1, 0, 1], "sex": ["f", "f", "f", "m", "m", "m"]})
    >>> batches = list(fairness_report_batches(df, y_true="y", y_pred="p", protected="sex", batch_rows=30))
    >>> len(batches) > 1, pl.concat(batches).equals(pf.fairness_report(df, y_true="y", y_pred="p", protected="sex"))
    (True, True)
    """
    check_known(kwargs, [*inspect.signature(fairness_report).parameters, "batch_rows"], door="fairness_report_batches")
    bound = inspect.signature(fairness_report).bind(data, **kwargs)
    bound.apply_defaults()
    args = dict(bound.arguments)
    data, shape, run_metadata = args.pop("data"), args.pop("shape"), args.pop("run_metadata")
    yield from run_request_batches(data, audit_request(**args), batch_rows=batch_rows, shape=shape,
                                   run_metadata=run_metadata)  # fmt: skip


def run_request_batches(data: Any, request: AuditRequest, *, batch_rows: int = 250_000, shape: str = "long",
                        run_metadata: bool | Mapping[str, Any] = False) -> Iterator[pl.DataFrame]:  # fmt: skip
    """:func:`fairness_report_batches` of a request built at a door (:func:`audit_request`)."""
    whole_metadata = run_metadata
    if run_metadata is not False:  # one run_id and run_at for every batch
        fixed = dict(run_metadata) if isinstance(run_metadata, Mapping) else {}
        fixed.setdefault("run_id", uuid.uuid4().hex)
        fixed.setdefault("run_at", dt.datetime.now(dt.UTC))
        run_metadata = fixed
    _check_shape(shape, run_metadata)
    prep = _prepare(data, request)
    plan, run = prep.plan, prep.plan.request
    # a config's monitored groups are checked (and warned about) on the whole report
    whole = (shape != "long" or (prep.bucketed is not None and run.ci is not None) or plan.metrics
             or plan.bands is not None or run.min_group_size is not None
             or (plan.config is not None and bool(plan.config.monitored)))  # fmt: skip
    if whole:
        yield _finish(prep, shape, whole_metadata)
        return
    for batch in report_batches_of(prep.cells, prep.options, batch_rows):
        yield attach_request(_shape_and_stamp(plan.finish(batch), shape, run_metadata, plan.hashed()), prep.provenance)


def audit_request(**options: Any) -> AuditRequest:
    """The request of :func:`fairness_report`'s keywords (checked: :meth:`AuditRequest.of`); ``metrics=`` as a
    selection, its old form (groupwise metrics, user metrics) moved to ``user_metrics=``.
    """
    options["metrics"], options["user_metrics"] = split_metrics(options.get("metrics"), options.get("user_metrics"))
    return AuditRequest.of(**options)


class _Prepared(NamedTuple):
    #: The monitor's view: the request in effect (``plan.request``), the door's (``plan.asked``), the rows.
    plan: ReportPlan
    spec: Spec
    cells: pl.DataFrame
    bucketed: pl.DataFrame | None
    #: What the core report builder reads (:meth:`polfair.core.report.build.ReportOptions.of`).
    options: ReportOptions
    #: The report's provenance (:func:`polfair.core.report.run_metadata.attach_request`), JSON-able.
    provenance: dict[str, Any]
    #: Metrics computed for groupwise metrics but not selected (``metrics=``): dropped after them.
    hidden: list[str]


def _prepare(data: Any, request: AuditRequest) -> _Prepared:
    """Merge the config into the request (:func:`plan_report`) and run the pass: the cell table and the report's options."""
    plan = plan_report(data, request)
    run = plan.request  # every option in effect, read by name from here on
    spec: Spec
    if is_foreign(plan.data):  # Spark, DuckDB, ...: the pass runs in that engine, the rest here
        codes, spec = foreign_code_table(plan.data, run)
        cells = collect_cells(spec, on_missing=run.on_missing, engine=run.engine, codes=codes,
                              allow_many_groups=run.allow_many_groups, relative=True)  # fmt: skip
    else:
        spec = build_spec(plan.data, run)
        cells = collect_cells(spec, on_missing=run.on_missing, engine=run.engine, allow_many_groups=run.allow_many_groups,
                              relative=True)  # weights beyond 1e±150: a power-of-two unit, the counts scaled back
    cells = plan.group_cells(cells)  # a config's monitored/reference values: checked, then labelled
    bucketed = cells if BUCKET in cells.columns else None
    if bucketed is not None:  # cluster=: the core report reads the table without buckets
        cells = sum_buckets(bucketed)
    alarms = cell_alarms(cells, spec.polarity, has_predictions=spec.has_predictions, has_scores=spec.has_scores)
    for text in alarms:
        warnings.warn(text, PolarityWarning, stacklevel=user_stacklevel())
    # the intersection budget (default intersections only): what is skipped is said once, here and in the provenance
    intersections, skipped = budget_sets(cells, spec.keys, run.intersections, run.max_intersection_groups)
    if skipped:  # said here, once (the core then gets the sets kept)
        warnings.warn(budget_message(skipped, run.max_intersection_groups), ReportSizeWarning, stacklevel=user_stacklevel())
    select, hidden = run.metrics, []
    if select is not None:  # groupwise metrics read their metrics' group rows: computed, then dropped
        hidden = list(dict.fromkeys(m for gm in plan.metrics for m in gm.metrics if m not in select))
        select = [*select, *hidden]
    options = ReportOptions.of(run, spec, intersections=intersections, select=select)
    provenance = plan.provenance()
    if spec.proba is not None:  # the provenance says which groups are estimated, and how
        provenance["protected_proba"] = spec.proba.describe()
    if alarms:
        provenance["polarity_warnings"] = alarms
    if skipped:
        provenance["intersections_skipped"] = skipped
    # the high-cardinality sets whose group rows are their worst groups (the core warns once)
    # (cluster= intervals: every group's rows, since the jackknife adjusts the p-values over the rows it gets)
    clustered = bucketed is not None and run.ci is not None
    check_worst_options(run.max_groups_per_attribute, run.worst_k)
    if clustered:
        options = dataclasses.replace(options, max_groups_per_attribute=None)
    limited = groups_limited(cells, list(spec.by), attribute_sets(spec.keys, intersections),
                             None if clustered else run.max_groups_per_attribute, run.worst_k)  # fmt: skip
    if limited:
        provenance["groups_limited"] = limited
    if run.metrics is not None:
        provenance["selected_metrics"] = list(run.metrics)
    return _Prepared(plan, spec, cells, bucketed, options, provenance, hidden)


def _check_shape(shape: Any, run_metadata: Any) -> None:
    if shape not in ("long", "wide"):
        msg = f"shape must be 'long' (one row per metric) or 'wide' (one row per group), got {shape!r}"
        raise PolfairError(msg)
    if not isinstance(run_metadata, (bool, Mapping)):
        msg = f"run_metadata must be True/False or a mapping like {{'run_id': '...'}}, got {run_metadata!r}"
        raise PolfairError(msg)
    unknown = sorted(set(run_metadata) - {"run_id", "run_at", "polfair_version"}) if isinstance(run_metadata, Mapping) else []
    if unknown:
        msg = f"run_metadata: unknown keys {unknown}; use run_id, run_at, polfair_version"
        raise PolfairError(msg)


def _shape_and_stamp(report: pl.DataFrame, shape: str, run_metadata: Any, options: Mapping[str, Any]) -> pl.DataFrame:
    """Append run metadata (hash of the call's options) and reshape, as asked."""
    if run_metadata is not False:
        extra = dict(run_metadata) if isinstance(run_metadata, Mapping) else {}
        report = with_run_metadata(report, config=options, **extra)
    return to_wide(report) if shape == "wide" else report


# ---- the lazy report (issue 41) ----------------------------------------------------------------------


def _names(value: Any, what: str) -> tuple[str, ...]:
    items = [value] if isinstance(value, str) else list(value)
    if not items or not all(isinstance(v, str) for v in items):
        msg = f"LazyReport.filter({what}=...) takes a name or a non-empty list of names, got {value!r}"
        raise PolfairError(msg)
    return tuple(items)


@dataclasses.dataclass(frozen=True)
class LazyReport:
    """A fairness report not built yet (:func:`lazy_report`): filters on metric and attribute push down.

    Attributes
    ----------
    data
        The input (as :func:`polfair.fairness_report` takes it).
    options
        :func:`polfair.fairness_report`'s keywords.
    metrics, attributes, groups, by_values
        The filters so far (``None``: no filter), each the intersection of the filters given.
    predicates
        Polars expressions applied to the built rows.
    """

    data: Any
    options: dict[str, Any]
    metrics: tuple[str, ...] | None = None
    attributes: tuple[str, ...] | None = None
    groups: tuple[str, ...] | None = None
    by_values: dict[str, tuple[Any, ...]] = dataclasses.field(default_factory=dict)
    predicates: tuple[pl.Expr, ...] = ()

    def filter(self, *predicates: pl.Expr, metric: str | Sequence[str] | None = None,
               attribute: str | Sequence[str] | None = None, group: str | Sequence[str] | None = None,
               **by: Any) -> LazyReport:  # fmt: skip
        """The report narrowed to these metrics, attribute sets, groups, ``by`` values and predicates.

        Parameters
        ----------
        *predicates
            Polars expressions over the report's columns (applied to the built rows).
        metric
            A metric name or list of names (pushed down as the metric selection when every name is
            a built-in metric; user and groupwise metric names filter the built rows).
        attribute
            An attribute-set name (``"sex"``, ``"race & sex"``) or list of them (pushed down as
            ``intersections=``).
        group
            A group label or list of labels (filters the built rows).
        **by
            ``by`` column -> value or list of values (filters the built rows).

        Returns
        -------
        LazyReport

        Examples
        --------
        >>> import polars as pl
        >>> import polfair as pf
        >>> df = pl.DataFrame({"y": [1, 0, 1, 1, 0, 0], "p": [1, 1, 0, 1, 0, 1], "sex": list("fffmmm")})
        >>> lr = pf.lazy_report(df, y_true="y", y_pred="p", protected="sex").filter(metric="disparate_impact")
        >>> lr.collect().select("group", "value").rows()
        [('f', 1.0), ('m', 1.0)]
        """
        new: dict[str, Any] = {}
        if metric is not None:
            m = _names(metric, "metric")
            new["metrics"] = m if self.metrics is None else tuple(x for x in self.metrics if x in m)
        if attribute is not None:
            a = _names(attribute, "attribute")
            new["attributes"] = a if self.attributes is None else tuple(x for x in self.attributes if x in a)
        if group is not None:
            g = _names(group, "group")
            new["groups"] = g if self.groups is None else tuple(x for x in self.groups if x in g)
        if by:
            merged = dict(self.by_values)
            for k, v in by.items():
                vals = tuple(v) if isinstance(v, (list, tuple, set)) else (v,)
                merged[k] = vals if k not in merged else tuple(x for x in merged[k] if x in vals)
            new["by_values"] = merged
        if predicates:
            new["predicates"] = (*self.predicates, *predicates)
        return dataclasses.replace(self, **new)

    def pushed_down(self) -> dict[str, Any]:
        """The keywords the filters add to :func:`polfair.fairness_report` (what construction sees).

        Examples
        --------
        >>> lr = LazyReport(None, {"protected": ["sex", "race"]}).filter(metric="selection_rate", attribute="sex")
        >>> lr.pushed_down()
        {'metrics': ['selection_rate'], 'intersections': [['sex']]}
        """
        out: dict[str, Any] = {}
        if self.metrics is not None and all(m in SELECTABLE for m in self.metrics):
            given = self.options.get("metrics")
            wanted = list(self.metrics)
            if given is not None and not isinstance(given, (str, dict)) and all(isinstance(m, str) for m in given):
                wanted = [m for m in wanted if m in given]  # already narrowed by the call's own selection
            out["metrics"] = wanted
        if self.attributes is not None:
            out["intersections"] = [a.split(SEPARATOR) for a in self.attributes]
        return out

    def _keywords(self) -> dict[str, Any]:
        kw = {**self.options, **self.pushed_down()}
        if kw.get("metrics") == [] or kw.get("intersections") == []:
            msg = "LazyReport: the filters leave no metric or attribute set (their intersection is empty)"
            raise PolfairError(msg)
        return kw

    def _residual(self) -> list[pl.Expr]:
        out: list[pl.Expr] = list(self.predicates)
        if self.metrics is not None:
            out.append(pl.col("metric").cast(pl.String).is_in(list(self.metrics)))
        if self.attributes is not None:
            out.append(pl.col("attribute").cast(pl.String).is_in(list(self.attributes)))
        if self.groups is not None:
            out.append(pl.col("group").is_in(list(self.groups)))
        for k, vals in self.by_values.items():
            out.append(pl.col(k).is_in(list(vals)))
        return out

    def _narrow(self, frame: pl.DataFrame) -> pl.DataFrame:
        residual = self._residual()
        if not residual:
            return frame
        return attach_request(frame.filter(*residual), request_of(frame))

    def collect(self) -> pl.DataFrame:
        """Build the report with the filters pushed down, then apply the others.

        Returns
        -------
        pl.DataFrame
            :func:`polfair.fairness_report`'s report (and request), filtered.
        """
        return self._narrow(fairness_report(self.data, **self._keywords()))

    def collect_batches(self, batch_rows: int = 250_000) -> Iterator[pl.DataFrame]:
        """The filtered report in batches built as they are yielded (:func:`polfair.fairness_report_batches`)."""
        for batch in fairness_report_batches(self.data, batch_rows=batch_rows, **self._keywords()):
            yield self._narrow(batch)

    def sink(self, path: str | Path, batch_rows: int = 250_000) -> int:
        """Write the filtered report to ``path`` batch by batch (:func:`polfair.outputs.stream.write_report_batches`).

        Returns
        -------
        int
            Rows written.
        """
        from polfair.outputs.stream import write_report_batches  # the writers load on first use

        return write_report_batches(self.collect_batches(batch_rows), path)


def lazy_report(data: Any, **options: Any) -> LazyReport:
    """:func:`polfair.fairness_report` as a :class:`LazyReport`: nothing is read until ``.collect()``.

    The keywords are checked now (an unknown or mistyped option raises here), the data is read by
    ``.collect()``, ``.collect_batches()`` or ``.sink()``. Filters on metric and attribute push down
    into the report's construction (:func:`lazy_report`).

    Parameters
    ----------
    data
        As :func:`polfair.fairness_report`.
    **options
        :func:`polfair.fairness_report`'s keywords.

    Returns
    -------
    LazyReport

    Raises
    ------
    PolfairError
        An unknown option (with the close name), or an option's bad value.

    Examples
    --------
    >>> import polars as pl
    >>> import polfair as pf
    >>> df = pl.DataFrame({"y": [1, 0, 1, 1], "p": [1, 1, 0, 1], "g": ["a", "a", "b", "b"]})
    >>> rep = pf.lazy_report(df, y_true="y", y_pred="p", protected="g").filter(metric="selection_rate").collect()
    >>> rep.filter(pl.col("group") == "b")["value"].item()
    0.5
    """
    audit_request(**{k: v for k, v in options.items() if k not in ("shape", "run_metadata")})  # checked now, not at collect
    return LazyReport(data, dict(options))
