"""An IBM Watson OpenScale-style monitor that *wraps* reports: config (TOML/JSON), monitored and reference
groups, thresholds, statuses, alerts and seeded sampling. The core report knows nothing of it."""

from polfair.monitor.monitor import (
    OTHER,
    STATUS_VALUES,
    FairnessConfig,
    GroupSpec,
    alerts,
    apply_thresholds,
    format_threshold,
    parse_thresholds,
    sample_rows,
)

__all__ = [
    "OTHER",
    "STATUS_VALUES",
    "FairnessConfig",
    "GroupSpec",
    "alerts",
    "apply_thresholds",
    "format_threshold",
    "parse_thresholds",
    "sample_rows",
]
