"""Fairness monitoring that *wraps* reports (IBM Watson OpenScale): config, groups, thresholds, sampling.

A recurring fairness check over production decisions needs a policy next to the metrics: which
outcome is favorable, which groups are monitored and which are the reference, what value of each
metric is acceptable, and how many rows a group needs before anyone calls it fair or unfair. This
package holds that policy (:class:`FairnessConfig`, loadable from TOML or JSON) and applies it to a
fairness report (:func:`apply_thresholds`, :func:`alerts`). ``polfair.fairness_report`` takes the same
options as keywords (``config=``, ``thresholds=``, ``min_sample_size=``, ``max_sample_size=``). The
core report knows nothing of it.

Semantics follow IBM Watson OpenScale's fairness monitor (see ``docs/monitoring.md``):

* **favorable outcomes** are a set of label values (``favorable = [0]`` for "no recidivism");
* per attribute, **monitored** and **reference** groups are value sets (``race = ["African-American"]``)
  or inclusive numeric ranges (``age = [18, 25]``); rows in neither are the group ``"(neither group)"``; rows
  with a null attribute stay the group ``"null"``. The reference group is the report's reference,
  so OpenScale's fairness value ``%favorable(monitored) / %favorable(reference)`` is the
  monitored group's ``disparate_impact`` row (with ``favorable`` the favorable outcome);
* **thresholds** are inclusive bands per metric (``disparate_impact = [0.8, 1.25]``), judged on both
  sides (``band="both"``) or only on the side that disadvantages the group (``band="harm"``); each
  checked row gets the ``status`` of the one rule of :mod:`polfair.core.report.status`: ``"ok"`` inside the
  band, ``"violation"`` outside it with the whole confidence interval outside too (the value alone
  without intervals), ``"inconclusive"`` outside with the interval reaching in;
* **min_sample_size**: a checked row whose group (or, for a comparison, whose reference group) has
  fewer input rows gets ``"insufficient_data"``: it is never called fair or unfair. So does a
  row whose value is undefined (null: a zero denominator);
* **max_sample_size**: above it the report runs on a uniform random sample without replacement of
  exactly ``max_sample_size`` rows, drawn by ``numpy.random.default_rng(seed)`` over row positions
  (:func:`sample_rows`): the same input in the same row order with the same seed gives the same
  sample.

Modules: :mod:`~polfair.monitor.config` (``FairnessConfig``, ``GroupSpec``, ``parse_thresholds``),
:mod:`~polfair.monitor.thresholds` (``apply_thresholds``, ``alerts``, ``default_verdict``,
``format_threshold``, ``STATUS_VALUES``), :mod:`~polfair.monitor.sampling` (``sample_rows``) and
:mod:`~polfair.monitor.plan` (``plan_report``, ``ReportPlan``: the config merged once into
``fairness_report``'s request, and what the monitor adds before and after the core report) and
:mod:`~polfair.monitor.drift` (``compare_reports``: changes between runs or periods, with two-sample tests).
"""

from polfair.monitor.config import OTHER, FairnessConfig, GroupSpec, parse_thresholds
from polfair.monitor.drift import NoMatchWarning, compare_reports
from polfair.monitor.plan import ReportPlan, plan_report
from polfair.monitor.sampling import sample_rows
from polfair.monitor.thresholds import STATUS_VALUES, alerts, apply_thresholds, default_verdict, format_threshold

__all__ = [
    "OTHER",
    "STATUS_VALUES",
    "FairnessConfig",
    "GroupSpec",
    "NoMatchWarning",
    "ReportPlan",
    "alerts",
    "apply_thresholds",
    "compare_reports",
    "default_verdict",
    "format_threshold",
    "parse_thresholds",
    "plan_report",
    "sample_rows",
]
