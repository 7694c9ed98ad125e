"""apply_thresholds(significance=): violation only when the breach is significant, else inconclusive."""

from __future__ import annotations

import polars as pl
import pytest

from polfair.monitor.thresholds import alerts, apply_thresholds


def _report() -> pl.DataFrame:
    rows = [
        # group, value, value_lo, value_hi, p_value_adjusted
        ("big", 0.62, 0.60, 0.66, 1e-60),  # breach, significant (interval below 0.8, tiny p)
        ("small", 0.41, 0.15, 0.85, 0.20),  # breach by point value, interval reaches into the band
        ("tiny_p", 0.75, 0.70, 0.82, 0.01),  # breach, interval overlaps the band but p is small
        ("wide_ok", 1.0, 0.5, 1.9, 0.9),  # inside the band
        ("no_ci", 0.5, None, None, None),  # no interval: point rule
    ]
    return pl.DataFrame(
        {
            "attribute": ["race"] * len(rows),
            "group": [r[0] for r in rows],
            "metric": ["disparate_impact"] * len(rows),
            "value": [r[1] for r in rows],
            "reference_group": ["white"] * len(rows),
            "difference": [None] * len(rows),
            "ratio": [None] * len(rows),
            "n": [3000, 11, 500, 40, 100],
            "value_lo": [r[2] for r in rows],
            "value_hi": [r[3] for r in rows],
            "p_value_adjusted": [r[4] for r in rows],
        },
        schema_overrides={"difference": pl.Float64, "ratio": pl.Float64},
    )


def test_significance_splits_violations():
    rep = _report()
    point = apply_thresholds(rep, {"disparate_impact": [0.8, 1.25]})
    assert point["status"].to_list() == ["violation", "violation", "violation", "ok", "violation"]
    sig = apply_thresholds(rep, {"disparate_impact": [0.8, 1.25]}, significance=0.05)
    assert sig["status"].to_list() == ["violation", "inconclusive", "violation", "ok", "violation"]
    shown = alerts(sig)
    assert shown["group"].to_list() == ["big", "tiny_p", "no_ci"]
    assert shown.columns[shown.columns.index("value") + 1] == "interval"
    assert shown["interval"].to_list() == ["[0.6, 0.66]", "[0.7, 0.82]", None]


def test_significance_needs_intervals_and_a_level():
    rep = _report()
    with pytest.raises(ValueError, match="ci=0.95"):
        apply_thresholds(rep.drop("value_lo"), {"disparate_impact": [0.8, 1.25]}, significance=0.05)
    with pytest.raises(ValueError, match="significance"):
        apply_thresholds(rep, {"disparate_impact": [0.8, 1.25]}, significance=5)
