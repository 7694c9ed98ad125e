"""IBM aif360 0.6.1-compatible metric classes computed from the cell table (one cached pass)."""

from polfair.compat.aif360.classification_metric import BinaryLabelDatasetMetric, ClassificationMetric

__all__ = ["BinaryLabelDatasetMetric", "ClassificationMetric"]
