"""``fairness_report``'s monitoring keywords and config resolved into plain report arguments.

:func:`plan_report` runs before the counting pass (config, monitored groups, sampling);
:meth:`ReportPlan.finish` runs after the core report (groupwise rows, thresholds). The core report
knows nothing of either: :mod:`polfair.api` calls them around it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from polfair.compat import yardstick as groupwise
from polfair.core._args import check_columns
from polfair.core.inputs import to_lazyframe
from polfair.exceptions import PolfairError
from polfair.monitor._values import check_size, is_number
from polfair.monitor.config import FairnessConfig, parse_thresholds
from polfair.monitor.disclosure import suppress_small_groups
from polfair.monitor.sampling import sample_rows
from polfair.monitor.thresholds import apply_thresholds

__all__ = ["ReportPlan", "plan_report"]


@dataclass
class ReportPlan:
    """What ``fairness_report`` runs once the monitoring options are resolved (internal)."""

    data: Any
    y_true: Any
    y_pred: Any
    y_score: Any
    weight: Any
    by: Any
    protected: Any
    favorable: Any
    privileged: dict[str, Any] | None
    intersections: Any
    metrics: list[groupwise.GroupwiseMetric]
    thresholds: dict[str, tuple[float, float]] | None
    min_sample_size: int | None
    groups: dict[str, list[str]] | None
    #: Statistics options (``[statistics]`` of the config, then explicit keywords): ci, n_boot, seed,
    #: cluster, n_buckets, p_adjust for the report; significance and min_group_size for :meth:`finish`.
    statistics: dict[str, Any] = field(default_factory=dict)

    def finish(self, report: pl.DataFrame) -> pl.DataFrame:
        """Add the groupwise rows, ``threshold``/``status`` when thresholds are set, then drop small groups."""
        report = groupwise.add_groupwise_rows(report, self.metrics)
        if self.thresholds is not None:
            report = apply_thresholds(report, self.thresholds, self.min_sample_size, groups=self.groups,
                                      significance=self.statistics.get("significance"))  # fmt: skip
        return suppress_small_groups(report, self.statistics.get("min_group_size"))


def _pick(name: str, given: Any, configured: Any) -> Any:
    if given is None:
        return configured
    if configured is not None and isinstance(given, str) and given != configured:
        msg = f"{name}={given!r} conflicts with the config's {name}={configured!r}; give it once"
        raise PolfairError(msg)
    return given


def plan_report(
    data: Any,
    *,
    config: FairnessConfig | str | Path | Mapping[str, Any] | None,
    y_true: Any,
    y_pred: Any,
    y_score: Any,
    weight: Any,
    by: Any,
    protected: Any,
    favorable: Any,
    privileged: Mapping[str, Any] | None,
    intersections: Any,
    thresholds: Mapping[str, Any] | None,
    min_sample_size: int | None,
    max_sample_size: int | None,
    metrics: Any,
    statistics: Mapping[str, Any] | None = None,
) -> ReportPlan:
    """Resolve ``fairness_report``'s monitoring keywords and config into plain report arguments.

    ``config`` may be a :class:`FairnessConfig`, a mapping, or a path to a ``.toml``/``.json``
    file. Explicit keywords win over the config where both can be told apart (``thresholds`` are
    merged, keywords first); contradictory column names or ``favorable`` values are errors.
    With a config, ``intersections`` defaults to 1 (OpenScale monitors each attribute alone).
    ``statistics`` holds the statistics keywords the caller gave explicitly (``ci``, ``n_boot``,
    ``seed``, ``cluster``, ``n_buckets``, ``p_adjust``, ``significance``, ``min_group_size``); they
    win over the config's ``[statistics]`` table, merged into ``plan.statistics``.

    Raises
    ------
    PolfairError
        Conflicts between keywords and config, a config attribute missing from the data, a range
        on a non-numeric column, or a missing ``y_true``/``protected``.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": [1, 0], "age": [20, 40]})
    >>> plan = plan_report(df, config={"monitored": {"age": [18, 25]}, "reference": {"age": [26, 99]}},
    ...     y_true="y", y_pred=None, y_score=None, weight=None, by=None, protected=None, favorable=1,
    ...     privileged=None, intersections=None, thresholds=None, min_sample_size=None,
    ...     max_sample_size=None, metrics=None)
    >>> plan.privileged, plan.intersections
    ({'age': '[26, 99]'}, 1)
    """
    cfg = _load_config(config)
    bands = None if thresholds is None else parse_thresholds(thresholds)
    min_sample_size = check_size(min_sample_size, "min_sample_size")
    max_sample_size = check_size(max_sample_size, "max_sample_size")
    gms = groupwise.resolve(metrics)
    protected_list = (
        [] if protected is None else [protected] if isinstance(protected, (str, pl.Expr)) else list(protected)
    )
    plan = ReportPlan(
        data=data, y_true=y_true, y_pred=y_pred, y_score=y_score, weight=weight, by=by,
        protected=protected_list, favorable=favorable, privileged=dict(privileged or {}),
        intersections=intersections, metrics=gms, thresholds=bands,
        min_sample_size=min_sample_size, groups=None,
        statistics=dict(statistics or {}),
    )  # fmt: skip
    seed = 0
    if cfg is not None:
        _merge_keywords(plan, cfg)
        max_sample_size = max_sample_size if max_sample_size is not None else cfg.max_sample_size
        seed = cfg.seed
        if cfg.monitored:
            _monitored_groups(plan, cfg)
    if plan.y_true is None:
        msg = "y_true is required: name the label column (y_true='label'), or set y_true in the config"
        raise PolfairError(msg)
    if not plan.protected:
        msg = (
            "protected is required: protected= must name at least one column or expression, e.g. "
            "protected=['sex'] (with a config, its monitored/reference groups can supply them)"
        )
        raise PolfairError(msg)
    if max_sample_size is not None:
        plan.data = sample_rows(plan.data, max_sample_size, seed)
    if plan.thresholds is None and plan.min_sample_size is not None:
        plan.thresholds = {}
    plan.privileged = plan.privileged or None
    return plan


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


def _merge_keywords(plan: ReportPlan, cfg: FairnessConfig) -> None:
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
    if cfg.thresholds:
        plan.thresholds = {**cfg.thresholds, **(plan.thresholds or {})}
    plan.statistics = {**cfg.statistics, **plan.statistics}
    if plan.min_sample_size is None:
        plan.min_sample_size = cfg.min_sample_size
    names = {m.name for m in plan.metrics}
    plan.metrics += [m for m in groupwise.resolve(list(cfg.metrics)) if m.name not in names]


def _monitored_groups(plan: ReportPlan, cfg: FairnessConfig) -> None:
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
    plan.protected = [p for p in plan.protected if not (isinstance(p, str) and p in cfg.monitored)]
    plan.protected += cfg.protected_exprs()
    plan.groups = {a: [cfg.monitored[a].label] for a in cfg.monitored}
    if plan.intersections is None:
        plan.intersections = 1


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
