"""pytorch-ignite's multiclass / multilabel fairness metrics from one pass (a class key in the cell table).

:mod:`~polfair.compat.ignite.counts` builds the class cell table (:func:`multiclass_counts`);
:mod:`~polfair.compat.ignite.report` turns it into a report (:func:`multiclass_report`) and ignite's
two metrics.
"""

from polfair.compat.ignite.counts import CLASS, multiclass_counts
from polfair.compat.ignite.report import (
    multiclass_demographic_parity_difference,
    multiclass_report,
    subgroup_accuracy_difference,
)

__all__ = [
    "CLASS",
    "multiclass_counts",
    "multiclass_demographic_parity_difference",
    "multiclass_report",
    "subgroup_accuracy_difference",
]
