"""Run identity for reports appended to a table: ``run_id``, ``run_at``, versions and a config hash.

A report appended run after run to one table (a parquet directory, a warehouse table) needs to say
which run each row came from (Great Expectations' run id, Databricks' window and model id). These
columns are optional (:data:`polfair.core.schema.RUN_METADATA_COLUMNS`), last in the report, and
on by default in the ``polfair report`` command.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import uuid
from collections.abc import Mapping
from typing import Any

import polars as pl

from polfair.core.schema import REPORT_SCHEMA, RUN_METADATA_COLUMNS, SCHEMA_VERSION
from polfair.exceptions import PolfairError

__all__ = ["config_hash", "package_version", "with_run_metadata"]


def package_version() -> str:
    """The installed polfair version (``importlib.metadata``), ``"unknown"`` when not installed.

    Examples
    --------
    >>> isinstance(package_version(), str)
    True
    """
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("polfair")
    except PackageNotFoundError:  # pragma: no cover - running from a bare source tree
        return "unknown"


def _canonical(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, Mapping):
        return {str(k): _canonical(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (set, frozenset)):
        return sorted((_canonical(v) for v in value), key=repr)
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    if isinstance(value, pl.Expr):
        return {"expr": str(value)}
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    return {"repr": repr(value)}


def config_hash(options: Mapping[str, Any]) -> str:
    """A short, stable hash of a report's options: equal options give equal hashes.

    Parameters
    ----------
    options
        The options of a report (keyword -> value): column names, expressions, favorable values,
        privileged groups, thresholds, ... Keys are sorted; expressions hash by their text
        (``str(expr)``), sets by their sorted members; ``None`` values are dropped, so adding a
        new keyword with a ``None`` default does not change the hash of existing configurations.

    Returns
    -------
    str
        The first 16 hex digits of the SHA-256 of the options' canonical JSON.

    Examples
    --------
    >>> config_hash({"y_true": "y", "protected": ["sex"]}) == config_hash({"protected": ["sex"], "y_true": "y"})
    True
    >>> len(config_hash({"y_true": "y"}))
    16
    """
    clean = {k: v for k, v in options.items() if v is not None}
    text = json.dumps(_canonical(clean), sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def with_run_metadata(
    report: pl.DataFrame,
    *,
    run_id: str | None = None,
    run_at: dt.datetime | None = None,
    config: Mapping[str, Any] | str | None = None,
    polfair_version: str | None = None,
) -> pl.DataFrame:
    """Append the run-metadata columns to a report (the same values on every row).

    Parameters
    ----------
    report
        A report (:func:`polfair.fairness_report`) or any frame (a wide report, a comparison).
    run_id
        Identifier of the run (String); default a random ``uuid4().hex``. Orchestrators usually
        pass their own (Airflow's ``run_id``, a dbt invocation id).
    run_at
        When the run started; default now. A naive datetime is taken as UTC; an aware one is
        converted to UTC.
    config
        The report's options (keyword -> value, hashed with :func:`config_hash`), or a ready hash
        string; default ``None`` (``config_hash`` null).
    polfair_version
        Default: the installed version (:func:`package_version`).

    Returns
    -------
    pl.DataFrame
        ``report`` with, last, ``run_id`` (String), ``run_at`` (Datetime[μs, UTC]),
        ``polfair_version`` (String), ``schema_version`` (Int32, :data:`SCHEMA_VERSION`),
        ``config_hash`` (String). Existing columns of these names are replaced (moved last).

    Raises
    ------
    PolfairError
        ``run_id`` is not a string, or ``run_at`` is not a datetime.

    Examples
    --------
    >>> import datetime as dt
    >>> import polars as pl
    >>> rep = pl.DataFrame({"attribute": ["sex"], "metric": ["selection_rate"], "value": [0.5]})
    >>> out = with_run_metadata(rep, run_id="r1", run_at=dt.datetime(2026, 1, 1), config={"y_true": "y"})
    >>> out.select("run_id", "run_at", "schema_version").row(0)
    ('r1', datetime.datetime(2026, 1, 1, 0, 0, tzinfo=zoneinfo.ZoneInfo(key='UTC')), 2)
    """
    if run_id is not None and not isinstance(run_id, str):
        msg = f"run_id must be a string, got {type(run_id).__name__} {run_id!r}"
        raise PolfairError(msg)
    if run_at is not None and not isinstance(run_at, dt.datetime):
        msg = f"run_at must be a datetime.datetime (UTC), got {type(run_at).__name__} {run_at!r}"
        raise PolfairError(msg)
    when = run_at or dt.datetime.now(dt.UTC)
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    when = when.astimezone(dt.UTC)
    digest = config if isinstance(config, str) or config is None else config_hash(config)
    dtypes = {c.name: c.dtype for c in REPORT_SCHEMA if c.kind == "run"}
    values = {
        "run_id": run_id or uuid.uuid4().hex,
        "run_at": when,
        "polfair_version": polfair_version or package_version(),
        "schema_version": SCHEMA_VERSION,
        "config_hash": digest,
    }
    keep = [c for c in report.columns if c not in RUN_METADATA_COLUMNS]
    return report.select(
        *keep, *[pl.lit(values[c], dtype=dtypes[c]).alias(c) for c in RUN_METADATA_COLUMNS]
    )
