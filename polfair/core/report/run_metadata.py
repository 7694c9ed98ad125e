"""Run identity and provenance of reports: ``run_id``, ``run_at``, versions, a config hash, the request.

A report appended run after run to one table (a parquet directory, a warehouse table) needs to say
which run each row came from (Great Expectations' run id, Databricks' window and model id). These
columns are optional (:data:`polfair.core.schema.RUN_METADATA_COLUMNS`), last in the report, and
on by default in the ``polfair report`` command.

The *request* of a report (label, prediction or score and threshold, favorable values, privileged
and monitored groups, bands, ``ci``, weight, polfair version: what was asked for, after a config
file was merged) travels with the returned frame as metadata (:func:`attach_request`,
:func:`request_of`), and the writers store it in the parquet file's key-value metadata under
:data:`REQUEST_METADATA_KEY`, so an output shows it without being told again.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import json
import re
import uuid
from collections.abc import Mapping
from typing import Any

import polars as pl

from polfair.core.reference import resolve_min_sample_size
from polfair.core.schema import REPORT_SCHEMA, RUN_METADATA_COLUMNS, SCHEMA_VERSION
from polfair.exceptions import PolfairError

__all__ = [
    "REQUEST_METADATA_KEY",
    "attach_request",
    "config_hash",
    "expr_text",
    "package_version",
    "render_request",
    "request_json",
    "request_of",
    "with_run_metadata",
]

#: The parquet key-value metadata key of a report's request (a JSON object).
REQUEST_METADATA_KEY = "polfair.request"
_ATTR = "_polfair_request"


@functools.lru_cache(maxsize=1)
def package_version() -> str:
    """The installed polfair version (``importlib.metadata``), ``"unknown"`` when not installed.

    Read once per process (the metadata lookup costs ~3 ms, and every report's request records it).

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
        The request attached to ``report`` (:func:`request_of`) stays attached.

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
    ('r1', datetime.datetime(2026, 1, 1, 0, 0, tzinfo=zoneinfo.ZoneInfo(key='UTC')), 5)
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
    out = report.select(*keep, *[pl.lit(values[c], dtype=dtypes[c]).alias(c) for c in RUN_METADATA_COLUMNS])
    return attach_request(out, request_of(report))  # the request travels on


def expr_text(value: Any) -> Any:
    """A column name as is; a Polars expression as readable text (``(decile_score) >= (5)``).

    Examples
    --------
    >>> import polars as pl
    >>> expr_text("label"), expr_text(pl.col("decile_score") >= 5)
    ('label', '(decile_score) >= (5)')
    """
    if isinstance(value, pl.Expr):
        text = str(value)
        text = re.sub(r"dyn \w+: ", "", text)
        text = re.sub(r'col\("((?:[^"\\]|\\.)*)"\)', r"\1", text)
        text = re.sub(r'String\((.*?)\)', r"'\1'", text)
        if text.startswith("[") and text.endswith("]"):
            text = text[1:-1]
        return text
    if isinstance(value, (list, tuple)):
        return [expr_text(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): expr_text(v) for k, v in value.items()}
    return value


def render_request(
    fields: Mapping[str, Any], *, task: str | None = None, version: bool = False, p_values_need_ci: bool = True,
) -> dict[str, Any]:
    """A report's provenance (its request, JSON-able), rendered by one rule per option for every door.

    Every door (:func:`polfair.fairness_report`, :func:`polfair.slice_scan`, :func:`polfair.regression_report`,
    the ranking report, the CLI) hands the options it ran with, by name; this is the one place that
    writes them: expressions as text (:func:`expr_text`), one ``protected``/``by`` name as a list,
    ``threshold`` only where a score is read without ``y_pred``, ``p_adjust`` only with intervals
    (unless ``p_values_need_ci=False``: a door whose p-values come without ``ci``),
    ``min_sample_size`` as the minimum in effect (:func:`polfair.core.reference.resolve_min_sample_size`),
    and options that are ``None`` left out.

    Parameters
    ----------
    fields
        Option name -> the value in effect (after a config was merged).
    task
        The report's task (``"slices"``, ``"regression"``, ...), written first; ``None``: no ``task`` key
        (a classification report).
    version
        Add ``polfair_version`` (:func:`package_version`).
    p_values_need_ci
        Whether the door's p-values exist only with intervals (``p_adjust`` dropped when ``ci`` is None).

    Returns
    -------
    dict
        The provenance, for :func:`attach_request`.

    Examples
    --------
    >>> import polars as pl
    >>> render_request({"y_true": "y", "y_pred": pl.col("s") >= 5, "threshold": 0.5, "by": "month", "ci": None,
    ...                 "p_adjust": "bh", "weight": None}, task="demo")
    {'task': 'demo', 'y_true': 'y', 'y_pred': '(s) >= (5)', 'by': ['month']}
    """
    out = dict(fields)
    if "threshold" in out and not (out.get("y_score") is not None and out.get("y_pred") is None):
        out["threshold"] = None  # a threshold reads a score; with y_pred it is not used
    if p_values_need_ci and "p_adjust" in out and out.get("ci") is None:
        out["p_adjust"] = None
    if "min_sample_size" in out:
        out["min_sample_size"] = resolve_min_sample_size(out["min_sample_size"])
    for k in ("protected", "by"):
        if isinstance(out.get(k), (str, pl.Expr)):
            out[k] = [out[k]]
    head: dict[str, Any] = {} if task is None else {"task": task}
    if version:
        head["polfair_version"] = package_version()
    return {k: expr_text(v) for k, v in {**head, **out}.items() if v is not None}


def request_json(request: Mapping[str, Any]) -> str:
    """A request as JSON text (keys sorted; expressions as text; non-finite numbers as strings).

    Examples
    --------
    >>> request_json({"y_true": "y", "ci": 0.95})
    '{"ci": 0.95, "y_true": "y"}'
    """

    def clean(v: Any) -> Any:
        if isinstance(v, float) and v != v:
            return "nan"
        if isinstance(v, float) and v in (float("inf"), float("-inf")):
            return "inf" if v > 0 else "-inf"
        if isinstance(v, Mapping):
            return {str(k): clean(x) for k, x in v.items()}
        if isinstance(v, (list, tuple, set, frozenset)):
            return [clean(x) for x in v]
        if v is None or isinstance(v, (bool, int, float, str)):
            return v
        return str(expr_text(v))

    return json.dumps(clean(dict(request)), sort_keys=True, ensure_ascii=False, allow_nan=False)


def attach_request(frame: pl.DataFrame, request: Mapping[str, Any] | None) -> pl.DataFrame:
    """Attach a report's request to the frame (in memory); returns the same frame.

    The request travels with this frame object (not with frames derived from it by ``filter``,
    ``select`` ...: pass the report itself to outputs). The writers of :mod:`polfair.outputs`
    store it in the parquet file's key-value metadata.

    Parameters
    ----------
    frame
        A report.
    request
        JSON-able mapping (expressions are stored as text), or ``None`` (nothing attached).

    Examples
    --------
    >>> import polars as pl
    >>> rep = attach_request(pl.DataFrame({"metric": ["selection_rate"]}), {"y_true": "y"})
    >>> request_of(rep)
    {'y_true': 'y'}
    """
    if request is not None:
        try:
            setattr(frame, _ATTR, json.loads(request_json(request)))
        except AttributeError:  # pragma: no cover - a frame type without instance attributes
            pass
    return frame


def request_of(frame: Any) -> dict[str, Any] | None:
    """The request attached to a report (:func:`attach_request`), or ``None``.

    Examples
    --------
    >>> import polars as pl
    >>> request_of(pl.DataFrame({"a": [1]})) is None
    True
    """
    got = getattr(frame, _ATTR, None)
    return dict(got) if isinstance(got, Mapping) else None
