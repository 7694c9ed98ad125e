"""The request of an audit: one typed, frozen object built once from a call's keywords.

:func:`polfair.fairness_report` (and :func:`polfair.fairness_report_batches`) turn their keywords
into an :class:`AuditRequest` at the door; the config is merged into it once
(:meth:`AuditRequest.resolved`, after :func:`polfair.monitor.plan.plan_report`), and from there every
stage reads an option by its name (``request.weight``, ``request.ci``), not from a dict of strings:
the pass (:meth:`AuditRequest.pass_keywords` names exactly what :func:`polfair.core.passes.spec.build_spec`
takes), the statistics (:meth:`AuditRequest.statistics`) and the run metadata's config hash
(:meth:`AuditRequest.hashed`). The CLI passes its keywords to ``fairness_report``, which builds the
request at its door (:meth:`AuditRequest.of`), so a mistyped option fails before any data is read.

The fields are ``fairness_report``'s keywords with its defaults (a test keeps the two equal).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import polars as pl

from polfair.core._typing import IntoExpr, OnMissing, Reference
from polfair.core.options import refuse_unused_threshold
from polfair.core.passes.spec import check_threshold
from polfair.core.proba import DEFAULT_TOLERANCE, check_proba_options
from polfair.core.values import check_option_types
from polfair.exceptions import PolfairError

__all__ = ["STATISTICS_KEYWORDS", "AuditRequest"]

#: The statistics keywords a config's ``[statistics]`` table may set (a keyword given with another
#: value than its default wins over the config).
STATISTICS_KEYWORDS = ("ci", "n_boot", "seed", "cluster", "n_buckets", "p_adjust", "significance", "min_group_size",
                       "exact_sums")  # fmt: skip


@dataclasses.dataclass(frozen=True, eq=False)
class AuditRequest:
    """The options of one audit (``fairness_report``'s keywords), validated once, read by name.

    Frozen: a stage that resolves an option (the config's values, the statistics in effect) makes a
    new request with :func:`dataclasses.replace` (:meth:`resolved`), so the request a report says it
    answers (its provenance and config hash) is the one that ran. ``eq=False``: options may be Polars
    expressions, which do not compare to booleans.

    Examples
    --------
    >>> r = AuditRequest.of(y_true="y", y_pred="p", protected="g", weight="w")
    >>> r.weight, r.ci, r.pass_keywords()["weight"]
    ('w', 0.95, 'w')
    >>> AuditRequest.of(significance=2.0)
    Traceback (most recent call last):
    ...
    polfair.exceptions.PolfairError: significance must be a level in (0, 1) such as 0.05, or None; got 2.0
    """

    y_true: IntoExpr | None = None
    y_pred: IntoExpr | None = None
    y_score: IntoExpr | None = None
    threshold: float | None = None
    protected: IntoExpr | Sequence[IntoExpr] | None = None
    favorable: Any = 1
    unfavorable: Any = None
    score_label: Any = None
    privileged: Mapping[str, Any] | None = None
    reference: Reference | None = None
    weight: IntoExpr | None = None
    by: IntoExpr | Sequence[IntoExpr] | None = None
    intersections: int | Literal["all"] | Sequence[Sequence[str]] | None = None
    alpha: float = 2.0
    concentration: float = 1.0
    on_missing: OnMissing = "warn"
    engine: str = "streaming"
    thresholds: Mapping[str, Any] | str | None = None
    min_sample_size: int | None = None
    max_sample_size: int | None = None
    config: Any = None
    metrics: Sequence[str] | None = None
    user_metrics: Sequence[Any] | Mapping[str, Any] | None = None
    max_intersection_groups: int = 1000
    max_groups_per_attribute: int | None = 1000
    worst_k: int = 20
    allow_many_groups: bool = False
    ci: float | None = 0.95
    ci_method: Literal["auto"] = "auto"
    n_boot: int = 200
    seed: int = 0
    p_adjust: Literal["bh", "by", "holm"] | None = "bh"
    cluster: IntoExpr | None = None
    n_buckets: int = 20
    significance: float | None = None
    min_group_size: int | None = None
    exact_sums: bool = False
    band: Literal["both", "harm"] | None = None
    protected_proba: Mapping[str, Mapping[str, IntoExpr | None]] | None = None
    proba_assignment: Literal["weighted", "argmax"] = "weighted"
    proba_tolerance: float = DEFAULT_TOLERANCE

    @classmethod
    def of(cls, **options: Any) -> AuditRequest:
        """The request of these keywords, checked: unknown names, types and ranges raise here.

        Raises
        ------
        PolfairError
            An unknown option (with the close name), or ``significance`` outside (0, 1).
        TypeError
            A value of the wrong type (:func:`polfair.core.values.check_option_types`).
        """
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(options) - names)
        if unknown:
            from polfair.core.options import check_known

            check_known(unknown, names, door="fairness_report")
        request = cls(**options)
        request.check()
        return request

    def check(self) -> None:
        """Check every option's type and range once (the pass then trusts them)."""
        if self.protected_proba is None:
            check_proba_options(None, self.proba_assignment, self.proba_tolerance)
        check_option_types({k: v for k, v in self.hashed().items() if not (k == "threshold" and v is None)})
        if self.threshold is not None:  # its value first, then whether it is used
            check_threshold(self.threshold)
        refuse_unused_threshold("fairness_report", self.threshold, y_pred=self.y_pred)
        s = self.significance
        if not (s is None or (isinstance(s, (int, float)) and not isinstance(s, bool) and 0 < s < 1)):
            msg = f"significance must be a level in (0, 1) such as 0.05, or None; got {s!r}"
            raise PolfairError(msg)

    @property
    def custom_metrics(self) -> Mapping[str, Any] | None:
        """A mapping of ``user_metrics``: metrics the user defines (:mod:`polfair.core.user_metrics`)."""
        return self.user_metrics if isinstance(self.user_metrics, Mapping) else None

    @property
    def groupwise_metrics(self) -> Sequence[Any] | None:
        """A list of ``user_metrics``: groupwise metrics (yardstick's, added by the monitor)."""
        return None if isinstance(self.user_metrics, Mapping) else self.user_metrics

    @classmethod
    def statistics_defaults(cls) -> dict[str, Any]:
        """The statistics keywords' defaults (:data:`STATISTICS_KEYWORDS`)."""
        return {f.name: f.default for f in dataclasses.fields(cls) if f.name in STATISTICS_KEYWORDS}

    def given_statistics(self) -> dict[str, Any]:
        """The statistics keywords given with another value than their default (these win over a config's)."""
        out = {}
        for k, default in self.statistics_defaults().items():
            v = getattr(self, k)
            if not (v is default or (not isinstance(v, pl.Expr) and v == default)):
                out[k] = v
        return out

    def resolved(self, plan: Any, stats: Mapping[str, Any]) -> AuditRequest:
        """The request with the config merged (``plan``: a :class:`polfair.monitor.plan.ReportPlan`) and
        the statistics in effect (``stats``: defaults, config, keywords).
        """
        return dataclasses.replace(
            self, y_true=plan.y_true, y_pred=plan.y_pred, y_score=plan.y_score, threshold=plan.threshold,
            protected=plan.protected, favorable=plan.favorable, weight=plan.weight, by=plan.by,
            score_label=plan.score_label, privileged=plan.privileged, intersections=plan.intersections,
            metrics=plan.selected,
            ci=stats["ci"], n_boot=stats["n_boot"], seed=stats["seed"], p_adjust=stats["p_adjust"],
            cluster=stats["cluster"], n_buckets=stats["n_buckets"], min_group_size=stats["min_group_size"],
            exact_sums=bool(stats["exact_sums"]),
        )  # fmt: skip

    def pass_keywords(self) -> dict[str, Any]:
        """What the one pass takes (:func:`polfair.core.passes.spec.build_spec`,
        :func:`polfair.engines.narwhals.foreign_code_table`), by name.
        """
        out = dict(y_true=self.y_true, y_pred=self.y_pred, y_score=self.y_score, threshold=self.threshold,
                   protected=self.protected, favorable=self.favorable, unfavorable=self.unfavorable,
                   weight=self.weight, by=self.by, score_label=self.score_label,
                   exact_sums=self.exact_sums)  # fmt: skip
        if self.protected_proba is not None:
            out |= {"protected_proba": self.protected_proba, "proba_assignment": self.proba_assignment,
                    "proba_tolerance": self.proba_tolerance}  # fmt: skip
        if self.cluster is not None:
            out |= {"cluster": self.cluster, "n_buckets": self.n_buckets}
        return out

    def statistics(self) -> dict[str, Any]:
        """The interval keywords of :func:`polfair.core.report.build.report_from_counts`."""
        return {"ci": self.ci, "ci_method": self.ci_method, "n_boot": self.n_boot, "seed": self.seed,
                "p_adjust": self.p_adjust}  # fmt: skip

    def hashed(self, threshold: float | None = None) -> dict[str, Any]:
        """The options as the run metadata's config hash reads them (:func:`polfair.core.report.run_metadata.config_hash`).

        Every option, except those that did not exist before an option was added and were left
        at their default (``band``, the ``protected_proba`` options, ``user_metrics``,
        ``max_intersection_groups``, ``max_groups_per_attribute`` and ``worst_k``), so a call without
        them keeps its hash; user metrics by name
        (under ``metrics``, their name before ``user_metrics``, when no selection is given);
        ``threshold`` the one in effect when given.
        """
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        if self.band is None:
            del out["band"]
        if self.max_intersection_groups == 1000:
            del out["max_intersection_groups"]
        if self.max_groups_per_attribute == 1000 and self.worst_k == 20:  # issue 41's worst groups, at their defaults
            del out["max_groups_per_attribute"], out["worst_k"]
        user = sorted(self.custom_metrics) if self.custom_metrics is not None else self.user_metrics
        del out["user_metrics"]
        if user is not None:
            out["user_metrics" if self.metrics is not None else "metrics"] = user
        if self.protected_proba is None:
            for k in ("protected_proba", "proba_assignment", "proba_tolerance"):
                del out[k]
        if threshold is not None:
            out["threshold"] = threshold
        return out

