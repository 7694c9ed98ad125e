"""The monitor's view of a request: ``fairness_report``'s config merged into its request, once.

:func:`plan_report` runs before the counting pass: it merges the config (columns, favorable,
thresholds, minimum sizes, statistics, monitored groups) into the door's
:class:`~polfair.core.request.AuditRequest` by one :func:`dataclasses.replace`, and samples the rows;
:class:`ReportPlan` (immutable) holds that request and what the monitor adds to it (groupwise
metrics, monitored groups, the config's source). :meth:`ReportPlan.finish` runs after the core report
(groupwise rows, thresholds). The core report knows nothing of either: :mod:`polfair.api` calls them
around it.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import polars as pl

from polfair.compat import yardstick as groupwise
from polfair.core._args import check_columns
from polfair.core.contract.inputs import is_foreign, to_lazyframe
from polfair.core.passes.counts import merge_counts
from polfair.core.reference import check_min_sample_size
from polfair.core.report.run_metadata import render_request
from polfair.core.report.status import check_sides
from polfair.core.request import STATISTICS_KEYWORDS, AuditRequest
from polfair.core.values import absent_values_message
from polfair.exceptions import PolfairError, ReferenceWarning, user_stacklevel
from polfair.monitor._values import check_size, column_or_sql, is_number
from polfair.monitor.config import FairnessConfig, parse_thresholds, preset_thresholds
from polfair.monitor.disclosure import suppress_small_groups
from polfair.monitor.sampling import sample_rows
from polfair.monitor.thresholds import apply_thresholds, format_threshold

__all__ = ["ReportPlan", "plan_report", "significance_as_level"]


@dataclass(frozen=True, eq=False)
class ReportPlan:
    """The monitor's view of one request (immutable): the request in effect and what the monitor adds.

    No option is copied here: every option is read from :attr:`request` (the config merged, the
    statistics in effect: ``request.thresholds`` holds the parsed bands, ``request.min_sample_size``
    and ``request.band`` the values in effect), the config hash from :attr:`asked`.
    """

    #: The request as the door built it (the run metadata's config hash reads it: :meth:`hashed`).
    asked: AuditRequest
    #: The request in effect: what the pass, the report builder, the monitor and the provenance read.
    request: AuditRequest
    #: The rows the pass reads (sampled to ``max_sample_size``; lazy with a config's monitored groups).
    data: Any
    #: The groupwise metrics (yardstick's): the door's ``metrics``/``user_metrics`` list, then the config's.
    metrics: tuple[groupwise.GroupwiseMetric, ...] = ()
    #: The monitored groups a config judges (attribute -> labels), or None.
    groups: Mapping[str, list[str]] | None = None
    #: The config (when one was given), loaded.
    config: FairnessConfig | None = None
    #: Column keys the config gave as SQL text (shown as written in the request).
    texts: Mapping[str, Any] = field(default_factory=dict)

    @property
    def config_source(self) -> str | None:
        """Where the config came from: its path, or None (given as an object or a mapping)."""
        config = self.asked.config
        return str(config) if isinstance(config, (str, Path)) else None

    @property
    def bands(self) -> dict[str, tuple[float, float]] | None:
        """The thresholds in effect (metric -> band), or None."""
        return cast("dict[str, tuple[float, float]] | None", self.request.thresholds)

    def finish(self, report: pl.DataFrame) -> pl.DataFrame:
        """Add the groupwise rows, ``threshold``/``status`` when thresholds are set, then drop small groups."""
        r = self.request
        report = groupwise.add_groupwise_rows(report, list(self.metrics))
        if self.bands is not None:
            report = apply_thresholds(report, self.bands, r.min_sample_size, groups=dict(self.groups or {}) or None,
                                      band=cast(str, r.band))  # fmt: skip
        return suppress_small_groups(report, r.min_group_size)

    def group_cells(self, cells: pl.DataFrame) -> pl.DataFrame:
        """A config's monitored/reference attributes in the cell table: check each value and range, then label.

        The pass grouped each config attribute by the index of the value or range a row matched
        (:meth:`FairnessConfig.part_exprs`), so here, on the small cell table, every monitored and
        reference value or range that matches no row is named (:class:`ReferenceWarning`, as a
        ``privileged`` value: :func:`polfair.core.values.absent_values_message`, with the values the
        column holds from a query on this warning path only); then the indices become the group
        labels and the cells are summed per label (:func:`polfair.merge_counts`).
        """
        cfg = self.config
        if cfg is None or not cfg.monitored:
            return cells
        out = cells
        for a in cfg.monitored:
            self._warn_absent_parts(a, set(out.get_column(a).drop_nulls().to_list()), cfg)
            out = out.with_columns(pl.col(a).replace_strict(cfg.part_labels(a), return_dtype=pl.String))
        return merge_counts([out]).collect()

    def _warn_absent_parts(self, a: str, present: set[int], cfg: FairnessConfig) -> None:
        parts = cfg.parts(a)
        for side, spec in (("monitored", cfg.monitored[a]), ("reference", cfg.reference[a])):
            idx = [i for i, (s, _) in enumerate(parts) if s == side]
            absent = [parts[i][1] for i in idx if i not in present]
            if not absent:
                continue
            label = cfg.group_labels()[a][0 if side == "monitored" else 1]
            what = (f"no row is in the {side} group, so every comparison with it is null" if len(absent) == len(idx)
                    else f"the {side} group {label!r} holds the other values only")  # fmt: skip
            msg = absent_values_message(f"config: {side}.{a} = {spec.label!r}", absent, a, self._seen(a), what)
            warnings.warn(msg, ReferenceWarning, stacklevel=user_stacklevel())

    def _seen(self, a: str) -> list[Any] | str:
        """Values of column ``a`` for a warning (a query on the warning path only): a few distinct
        values, or the range of a numeric column.
        """
        lf = to_lazyframe(self.data)
        try:
            if lf.collect_schema()[a].is_numeric():
                lo, hi = lf.select(pl.col(a).min(), pl.col(a).max().alias("__pf_hi")).collect().row(0)
                return f"from {lo} to {hi}"
            return lf.select(pl.col(a).drop_nulls().unique().sort().head(11)).collect().to_series().to_list()
        except Exception:  # pragma: no cover - the values are a courtesy; the warning stands
            return []

    def hashed(self) -> dict[str, Any]:
        """The options the run metadata's config hash reads: the door's, with the threshold in effect."""
        return self.asked.hashed(threshold=self.request.threshold)

    def provenance(self) -> dict[str, Any]:
        """The request in effect, JSON-able: the report's provenance (:func:`render_request`)."""
        r, cfg = self.request, self.config
        names = [p if isinstance(p, str) else p.meta.output_name() if isinstance(p, pl.Expr) else str(p)
                 for p in cast("list[Any]", r.protected)]  # fmt: skip
        bands = self.bands
        fields: dict[str, Any] = {
            "y_true": r.y_true, "y_pred": r.y_pred, "y_score": r.y_score, "threshold": r.threshold,
            "favorable": r.favorable if isinstance(r.favorable, (list, tuple)) else [r.favorable],
            "unfavorable": r.unfavorable, "score_label": r.score_label, "weight": r.weight, "by": r.by,
            "protected": names, "privileged": r.privileged, "reference": r.reference, "intersections": r.intersections,
            "thresholds": None if bands is None else {m: format_threshold(*b) for m, b in bands.items()},
            "band": r.band if bands else None, "min_sample_size": r.min_sample_size,
            "max_sample_size": r.max_sample_size, "ci": r.ci, "p_adjust": r.p_adjust, "cluster": r.cluster,
            "min_group_size": r.min_group_size, "metrics": [m.name for m in self.metrics] or None,
        }  # fmt: skip
        if cfg is not None and cfg.monitored:
            fields["monitored"] = {a: g.label for a, g in cfg.monitored.items()}
            fields["reference_groups"] = {a: g.label for a, g in cfg.reference.items()}
        if self.asked.config is not None:
            fields["config"] = self.config_source or type(self.asked.config).__name__
        fields.update(self.texts)  # the config's SQL text, as written
        return render_request(fields, version=True)


def significance_as_level(stats: dict[str, Any], given: Mapping[str, Any]) -> dict[str, Any]:
    """Map the deprecated ``significance=a`` to the interval level ``ci=1-a`` (with a ``FutureWarning``).

    Parameters
    ----------
    stats
        The statistics options in effect (defaults, config, keywords).
    given
        Those given explicitly (keywords and config): ``ci`` given with another level is a conflict.

    Returns
    -------
    dict
        ``stats`` with ``ci`` set from ``significance`` (unchanged without it).

    Raises
    ------
    PolfairError
        ``significance`` with ``ci=None`` or with another explicit ``ci``.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     significance_as_level({"ci": 0.95, "significance": 0.1}, {"significance": 0.1})["ci"]
    0.9
    """
    sig = stats.get("significance")
    if sig is None:
        return stats
    level = round(1.0 - float(sig), 12)
    if "ci" in given and given["ci"] is None:
        msg = f"significance={sig!r} sets the level of the intervals the status reads; it cannot go with ci=None"
        raise PolfairError(msg)
    if "ci" in given and abs(float(given["ci"]) - level) > 1e-12:
        msg = (
            f"significance={sig!r} means ci={level!r} (the level of the intervals the status reads), which "
            f"contradicts ci={given['ci']!r}: give ci only"
        )
        raise PolfairError(msg)
    warnings.warn(
        f"significance={sig!r} is deprecated: it now sets the level of the confidence intervals the status rule "
        f"reads (ci={level!r}); a breach is a violation when its whole interval lies outside the band, and p-values "
        f"no longer decide it. Pass ci={level!r} instead (docs/schema.md, version 3)",
        FutureWarning, stacklevel=user_stacklevel(),
    )  # fmt: skip
    return {**stats, "ci": level}


def _pick(name: str, given: Any, configured: Any) -> Any:
    if given is None:
        return configured
    if configured is not None and isinstance(given, str) and given != configured:
        msg = f"{name}={given!r} conflicts with the config's {name}={configured!r}; give it once"
        raise PolfairError(msg)
    return given


@dataclass
class _Draft:
    """The options a config may change, while :func:`plan_report` merges it (private; frozen into the request)."""

    data: Any
    y_true: Any
    y_pred: Any
    y_score: Any
    weight: Any
    by: Any
    protected: list[Any]
    favorable: Any
    score_label: Any
    privileged: dict[str, Any]
    intersections: Any
    thresholds: dict[str, tuple[float, float]] | None
    min_sample_size: int | None
    statistics: dict[str, Any]
    metrics: list[groupwise.GroupwiseMetric]
    selected: list[str] | None
    groups: dict[str, list[str]] | None = None
    texts: dict[str, Any] = field(default_factory=dict)


def plan_report(data: Any, request: AuditRequest) -> ReportPlan:
    """Merge ``request``'s config into it (once) and sample the rows: the request in effect.

    ``request.config`` may be a :class:`FairnessConfig`, a mapping, or a path to a ``.toml``/``.json``
    file. Explicit keywords win over the config where both can be told apart (``thresholds`` are
    merged, keywords first); contradictory column names or ``favorable`` values are errors.
    With a config, ``intersections`` defaults to 1 (OpenScale monitors each attribute alone).
    The statistics keywords given explicitly (:meth:`AuditRequest.given_statistics`) win over the
    config's ``[statistics]`` table; a deprecated ``significance`` sets ``ci``
    (:func:`significance_as_level`). Column keys of the config (``y_true``, ``y_pred``, ``y_score``,
    ``weight``, ``by``) are column names or SQL expressions, as the command line's flags
    (``y_pred = "decile_score >= 5"``). ``band``: ``"both"`` or ``"harm"`` (default: the config's, else
    ``"both"``). With ``protected_proba`` (an attribute estimated from proxies) ``protected`` may be
    empty. ``threshold``: the score threshold (default: the config's ``threshold``, else 0.5).
    ``metrics``: the metric selection (default: the config's ``metrics``, else every metric).

    Returns
    -------
    ReportPlan
        ``plan.request``: the request in effect (``thresholds`` as parsed bands, ``min_sample_size``,
        ``band``, ``max_sample_size`` and the statistics in effect); ``plan.asked``: ``request``.

    Raises
    ------
    PolfairError
        Conflicts between keywords and config, a config attribute missing from the data, a range
        on a non-numeric column, or a missing ``y_true``/``protected``.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": [1, 0], "age": [20, 40]})
    >>> cfg = {"monitored": {"age": [18, 25]}, "reference": {"age": [26, 99]}}
    >>> plan = plan_report(df, AuditRequest.of(y_true="y", config=cfg))
    >>> plan.request.privileged, plan.request.intersections
    ({'age': '[26, 99]'}, 1)
    """
    r = request
    cfg = _load_config(r.config)
    thresholds = r.thresholds
    preset = thresholds if isinstance(thresholds, str) else None  # a named policy: resolved below
    bands = None if thresholds is None or isinstance(thresholds, str) else parse_thresholds(thresholds)
    min_sample_size = check_min_sample_size(r.min_sample_size)
    max_sample_size = check_size(r.max_sample_size, "max_sample_size")
    gms = groupwise.resolve(r.groupwise_metrics)
    protected = r.protected
    d = _Draft(
        data=data, y_true=r.y_true, y_pred=r.y_pred, y_score=r.y_score, weight=r.weight, by=r.by,
        protected=[] if protected is None else [protected] if isinstance(protected, (str, pl.Expr)) else list(protected),
        favorable=r.favorable, score_label=r.score_label, privileged=dict(r.privileged or {}),
        intersections=r.intersections, thresholds=bands, min_sample_size=min_sample_size,
        statistics=r.given_statistics(), metrics=gms,
        selected=None if r.metrics is None else list(r.metrics),
    )  # fmt: skip
    seed = 0
    sides = r.band if r.band is not None else (cfg.band if cfg is not None else "both")
    try:
        band = check_sides(sides)
    except ValueError as exc:
        raise PolfairError(str(exc)) from None
    threshold = r.threshold if r.threshold is not None else (
        cfg.threshold if cfg is not None and cfg.threshold is not None else 0.5)
    if cfg is not None:
        _merge_keywords(d, cfg)
        _config_expressions(d, cfg)
        max_sample_size = max_sample_size if max_sample_size is not None else cfg.max_sample_size
        seed = cfg.seed
        if cfg.monitored:
            _monitored_groups(d, cfg)
    if preset is not None:  # keywords win over the config's bands
        named = preset_thresholds(preset, has_predictions=d.y_pred is not None or d.y_score is not None)
        d.thresholds = {**(d.thresholds or {}), **named}
    if d.y_true is None:
        msg = "y_true is required: name the label column (y_true='label'), or set y_true in the config"
        raise PolfairError(msg)
    proba = _merge_proba(r, cfg)
    if not d.protected and proba["protected_proba"] is None:
        msg = (
            "protected is required: protected= must name at least one column or expression, e.g. "
            "protected=['sex'] (with a config, its monitored/reference groups can supply them)"
        )
        raise PolfairError(msg)
    if max_sample_size is not None:
        d.data = sample_rows(d.data, max_sample_size, seed)
    if d.thresholds is None and d.min_sample_size is not None:
        d.thresholds = {}
    stats = significance_as_level({**AuditRequest.statistics_defaults(), **d.statistics}, d.statistics)
    run = dataclasses.replace(  # the config merged, once: every option in effect, read by name from here on
        r, y_true=d.y_true, y_pred=d.y_pred, y_score=d.y_score, threshold=threshold, protected=d.protected,
        favorable=d.favorable, weight=d.weight, by=d.by, score_label=d.score_label, privileged=d.privileged or None,
        intersections=d.intersections, metrics=d.selected, thresholds=d.thresholds, min_sample_size=d.min_sample_size,
        max_sample_size=max_sample_size, band=band, exact_sums=bool(stats["exact_sums"]), **proba,
        **{k: stats[k] for k in STATISTICS_KEYWORDS if k != "exact_sums"},
    )  # fmt: skip
    return ReportPlan(asked=r, request=run, data=d.data, metrics=tuple(d.metrics), groups=d.groups, config=cfg,
                      texts=d.texts)  # fmt: skip


def _merge_proba(r: AuditRequest, cfg: FairnessConfig | None) -> dict[str, Any]:
    """The estimated attribute in effect: the keywords', else the config's (given at both doors: an error)."""
    out = {"protected_proba": r.protected_proba, "proba_assignment": r.proba_assignment,
           "proba_tolerance": r.proba_tolerance}  # fmt: skip
    if cfg is None:
        return out
    defaults = {f.name: f.default for f in dataclasses.fields(AuditRequest) if f.name in out}
    for k, default in defaults.items():
        configured = getattr(cfg, k)
        if configured is None:
            continue
        if out[k] is not default and not (k != "protected_proba" and out[k] == default):
            msg = f"{k} is given as a keyword and in the config; give it once"
            raise PolfairError(msg)
        out[k] = configured
    return out


def _load_config(config: FairnessConfig | str | Path | Mapping[str, Any] | None) -> FairnessConfig | None:
    """The config as a :class:`FairnessConfig`: as given, from a mapping, or from a ``.toml``/``.json`` path."""
    if config is None or isinstance(config, FairnessConfig):
        return config
    if isinstance(config, Mapping):
        return FairnessConfig.from_dict(config)
    if isinstance(config, (str, Path)):
        is_json = str(config).lower().endswith(".json")
        return FairnessConfig.from_json(config) if is_json else FairnessConfig.from_toml(config)
    msg = f"config must be a FairnessConfig, a mapping or a .toml/.json path, got {type(config).__name__}"
    raise PolfairError(msg)


def _merge_keywords(plan: _Draft, cfg: FairnessConfig) -> None:
    """Fill the plan's unset keywords from the config; raise on contradictions (keywords win otherwise)."""
    plan.y_true = _pick("y_true", plan.y_true, cfg.y_true)
    plan.y_pred = _pick("y_pred", plan.y_pred, cfg.y_pred)
    plan.y_score = _pick("y_score", plan.y_score, cfg.y_score)
    plan.weight = _pick("weight", plan.weight, cfg.weight)
    if plan.by is None and cfg.by:
        plan.by = list(cfg.by)
    if cfg.favorable is not None:
        favorable = plan.favorable
        mine = tuple(favorable) if isinstance(favorable, (list, tuple, set)) else (favorable,)
        if mine != (1,) and mine != cfg.favorable:
            msg = f"favorable={favorable!r} conflicts with the config's favorable={list(cfg.favorable)!r}"
            raise PolfairError(msg)
        plan.favorable = list(cfg.favorable)
    if cfg.score_label is not None:
        if plan.score_label is not None and plan.score_label != cfg.score_label:
            msg = f"score_label={plan.score_label!r} conflicts with the config's score_label={cfg.score_label!r}"
            raise PolfairError(msg)
        plan.score_label = cfg.score_label
    if cfg.thresholds:
        cfg_bands = (preset_thresholds(cfg.thresholds, has_predictions=plan.y_pred is not None or plan.y_score is not None)
                     if isinstance(cfg.thresholds, str) else cfg.thresholds)  # fmt: skip
        plan.thresholds = {**cfg_bands, **(plan.thresholds or {})}
    plan.statistics = {**cfg.statistics, **plan.statistics}
    if plan.min_sample_size is None:
        plan.min_sample_size = cfg.min_sample_size
    names = {m.name for m in plan.metrics}
    plan.metrics += [m for m in groupwise.resolve(list(cfg.user_metrics)) if m.name not in names]
    if plan.selected is None and cfg.metrics:
        plan.selected = list(cfg.metrics)


def _config_expressions(plan: _Draft, cfg: FairnessConfig) -> None:
    """Column keys the config supplied that are not columns become SQL expressions (as the CLI's flags)."""
    keys = [k for k in ("y_true", "y_pred", "y_score", "weight") if isinstance(getattr(cfg, k), str)
            and getattr(plan, k) == getattr(cfg, k)]  # fmt: skip
    by_from_cfg = bool(cfg.by) and plan.by == list(cfg.by)
    if not keys and not by_from_cfg or is_foreign(plan.data):
        return  # Spark / DuckDB take column names only
    names = list(to_lazyframe(plan.data).collect_schema().names())
    for k in keys:
        text = getattr(cfg, k)
        if text not in names:
            setattr(plan, k, column_or_sql(text, names, f"config: {k} ="))
            plan.texts[k] = text
    if by_from_cfg:
        plan.by = [b if b in names else column_or_sql(b, names, "config: by =") for b in cfg.by]


def _monitored_groups(plan: _Draft, cfg: FairnessConfig) -> None:
    """Replace the config's attributes by their monitored/reference/other keys; judge the monitored groups."""
    lf = to_lazyframe(plan.data)
    schema = lf.collect_schema()
    privileged = dict(plan.privileged or {})
    for a in cfg.monitored:
        _check_attribute(a, schema, cfg)
        if a in privileged:
            msg = f"privileged names {a!r}, which the config's reference group already defines; give it once"
            raise PolfairError(msg)
        privileged[a] = cfg.reference[a].label
    plan.data = lf
    plan.privileged = privileged
    kept = []
    for p in plan.protected:
        if _key_name(p) in cfg.monitored:
            _check_config_key(p, cfg)  # the attribute's own column: the config's groups replace it
        else:
            kept.append(p)
    plan.protected = kept
    for b in [] if plan.by is None else [plan.by] if isinstance(plan.by, (str, pl.Expr)) else plan.by:
        name = _key_name(b)
        if name is not None and name in cfg.monitored:
            msg = (
                f"by names {name!r}, an attribute of the config's [monitored] table (config: [monitored] {name} = "
                f"{cfg.monitored[name].label}, [reference] {name} = {cfg.reference[name].label}): a column is either a by "
                "key or a monitored attribute; drop it from by, or from the config's [monitored] and [reference] tables"
            )
            raise PolfairError(msg)
    plan.protected += cfg.part_exprs()  # value/range indices: group_cells checks and labels them
    plan.groups = {a: [cfg.monitored[a].label] for a in cfg.monitored}
    if plan.intersections is None:
        plan.intersections = 1


def _key_name(key: Any) -> str | None:
    """The output name of a protected or by key (a column name, or a named expression's name)."""
    if isinstance(key, str):
        return key
    if isinstance(key, pl.Expr):
        try:
            return key.meta.output_name()
        except pl.exceptions.ComputeError:  # an expression without a name: the spec reports it
            return None
    return None


def _check_config_key(key: Any, cfg: FairnessConfig) -> None:
    """Accept a protected key named like a config attribute when it is that attribute's own column.

    The config's monitored/reference groups then replace it (a column name, or ``pl.col(name)``,
    as the command line's ``--protected name`` gives it). A named expression with the attribute's
    name is another key under the same name: an error naming the config's table.
    """
    if isinstance(key, str) or (isinstance(key, pl.Expr) and key.meta.is_column()):
        return
    a = str(_key_name(key))
    msg = (
        f"protected holds an expression named {a!r}, the name of an attribute of the config's [monitored] table "
        f"(config: [monitored] {a} = {cfg.monitored[a].label}): the config's monitored and reference groups define "
        f"{a!r}; name the expression differently (.alias() or SQL AS), or drop it from protected"
    )
    raise PolfairError(msg)


def _check_attribute(a: str, schema: pl.Schema, cfg: FairnessConfig) -> None:
    check_columns(pl.col(a), "config: monitored/reference attribute", list(schema.names()))
    dtype = schema[a]
    for side, g in (("monitored", cfg.monitored[a]), ("reference", cfg.reference[a])):
        numeric_needed = bool(g.ranges) or any(is_number(v) for v in g.values)
        if numeric_needed and not dtype.is_numeric():
            msg = (
                f"config: {side}.{a} = {g.label} is numeric, but column {a!r} has dtype {dtype}; "
                "give its values as strings (e.g. ['Female']) or cast the column"
            )
            raise PolfairError(msg)
        if any(isinstance(v, str) for v in g.values) and dtype.is_numeric():
            msg = (
                f"config: {side}.{a} = {g.label} lists strings, but column {a!r} is numeric ({dtype}); "
                "give numbers or a range such as [18, 25]"
            )
            raise PolfairError(msg)
