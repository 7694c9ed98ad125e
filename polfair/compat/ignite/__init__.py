"""pytorch-ignite's multiclass / multilabel fairness metrics from one pass (a class key in the cell table)."""

from polfair.compat.ignite.multiclass import (
    CLASS,
    multiclass_counts,
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
