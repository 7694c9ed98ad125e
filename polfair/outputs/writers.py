"""File writers for reports: parquet, CSV, JSON or NDJSON, chosen by the file name's extension."""

from __future__ import annotations

import polars as pl

from polfair.exceptions import PolfairError

__all__ = ["write_report"]


def write_report(report: pl.DataFrame, path: str) -> None:
    """Write ``report`` to ``path``; the format follows the extension (.parquet/.csv/.json/.ndjson)."""
    lower = path.lower()
    if lower.endswith(".parquet"):
        report.write_parquet(path)
    elif lower.endswith(".csv"):
        report.write_csv(path)
    elif lower.endswith(".ndjson") or lower.endswith(".jsonl"):
        report.write_ndjson(path)
    elif lower.endswith(".json"):
        report.write_json(path)
    else:
        msg = f"--out {path!r}: use a .parquet, .csv, .json or .ndjson file name"
        raise PolfairError(msg)
