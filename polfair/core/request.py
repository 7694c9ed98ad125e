"""The request of an audit: one typed, frozen object built once from a call's keywords.

:func:`polfair.fairness_report` (and :func:`polfair.fairness_report_batches`, the CLI) turn their
keywords into an :class:`AuditRequest` at the door (:meth:`AuditRequest.of`: a mistyped option fails
before any data is read). The config is merged into it once, by one :func:`dataclasses.replace`
(:func:`polfair.monitor.plan.plan_report`, which returns the request in effect inside a
:class:`~polfair.monitor.plan.ReportPlan`), and from there every stage reads an option by its name
(``request.weight``, ``request.ci``), never from a dict of strings: the pass takes the request
itself (it is a :class:`~polfair.core.passes.spec.PassOptions`: :func:`~polfair.core.passes.spec.build_spec`,
:func:`polfair.engines.narwhals.foreign_code_table`), the report builder reads it
(:meth:`polfair.core.report.build.ReportOptions.of`), the monitor reads its thresholds, minimum
sizes and monitored groups, and the provenance (:func:`polfair.core.report.run_metadata.render_request`)
and the config hash (:meth:`AuditRequest.hashed`) are rendered from it.

The fields are ``fairness_report``'s keywords with its defaults (a test keeps the two equal).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import polars as pl

from polfair.core._typing import Reference
from polfair.core.options import refuse_unused_threshold
from polfair.core.passes.spec import PASS_ONLY, PassOptions, check_threshold
from polfair.core.proba import check_proba_options
from polfair.core.values import check_option_types
from polfair.exceptions import PolfairError

__all__ = ["STATISTICS_KEYWORDS", "AuditRequest", "task_hashed"]

#: The statistics keywords a config's ``[statistics]`` table may set (a keyword given with another
#: value than its default wins over the config).
STATISTICS_KEYWORDS = ("ci", "n_boot", "seed", "cluster", "n_buckets", "p_adjust", "significance", "min_group_size",
                       "exact_sums")  # fmt: skip


@dataclasses.dataclass(frozen=True, eq=False)
class AuditRequest(PassOptions):
    """The options of one audit (``fairness_report``'s keywords), validated once, read by name.

    Frozen: a stage that resolves an option (the config's values, the statistics in effect) makes a
    new request with :func:`dataclasses.replace` (:func:`polfair.monitor.plan.plan_report`), so the request a report says it
    answers (its provenance and config hash) is the one that ran. ``eq=False``: options may be Polars
    expressions, which do not compare to booleans.

    Examples
    --------
    >>> r = AuditRequest.of(y_true="y", y_pred="p", protected="g", weight="w")
    >>> r.weight, r.ci, isinstance(r, PassOptions)  # the pass reads the request itself
    ('w', 0.95, True)
    >>> AuditRequest.of(significance=2.0)
    Traceback (most recent call last):
    ...
    polfair.exceptions.PolfairError: significance must be a level in (0, 1) such as 0.05, or None; got 2.0
    """

    # the pass's fields (roles, labels, keys, sums) are :class:`PassOptions`'s; these are the report's
    threshold: float | None = None
    privileged: Mapping[str, Any] | None = None
    reference: Reference | None = None
    intersections: int | Literal["all"] | Sequence[Sequence[str]] | None = None
    alpha: float = 2.0
    concentration: float = 1.0
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
    ci: float | None = 0.95
    ci_method: Literal["auto"] = "auto"
    n_boot: int = 200
    seed: int = 0
    p_adjust: Literal["bh", "by", "holm"] | None = "bh"
    significance: float | None = None
    min_group_size: int | None = None
    band: Literal["both", "harm"] | None = None

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
        names = set(cls.option_names())
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

    @classmethod
    def option_names(cls) -> list[str]:
        """The request's options (its fields but a pass's own switches, :data:`~polfair.core.passes.spec.PASS_ONLY`)."""
        return [f.name for f in dataclasses.fields(cls) if not f.metadata.get(PASS_ONLY)]

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

    def hashed(self, threshold: float | None = None) -> dict[str, Any]:
        """The options as the run metadata's config hash reads them (:func:`polfair.core.report.run_metadata.config_hash`).

        Every option, except those that did not exist before an option was added and were left
        at their default (``band``, the ``protected_proba`` options, ``user_metrics``,
        ``max_intersection_groups``, ``max_groups_per_attribute`` and ``worst_k``), so a call without
        them keeps its hash; user metrics by name
        (under ``metrics``, their name before ``user_metrics``, when no selection is given);
        ``threshold`` the one in effect when given.
        """
        out = {name: getattr(self, name) for name in self.option_names()}
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



def task_hashed(task: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """The options a task's config hash reads (:func:`polfair.core.report.run_metadata.config_hash`), for a
    door whose request is its keywords (the CLI's ``report --task regression``): ``task`` with the options,
    an expression as its text. The classification request's is :meth:`AuditRequest.hashed`; both live
    here, so every door's hash is rendered in this module (and stays the one ETL jobs stored).

    Examples
    --------
    >>> task_hashed("regression", {"y_true": "y", "y_pred": pl.col("p") * 2, "ci": None})
    {'task': 'regression', 'y_true': 'y', 'y_pred': '[(col("p")) * (dyn int: 2)]', 'ci': None}
    """
    return {"task": task, **{k: (str(v) if isinstance(v, pl.Expr) else v) for k, v in options.items()}}
