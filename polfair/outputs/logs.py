"""Machine-readable event logs for orchestrators: one JSON object per line on stderr.

A batch job writes its event stream unbuffered to stderr and lets the platform route it
(12factor "Logs"); JSON lines make it indexable (Airflow, Dagster, Kubernetes log collectors).
``polfair report --log-format json`` emits, in order: ``start``, ``warning`` (each Python warning,
e.g. missing values), ``pass_done``, ``report_written`` (per file), ``violations`` (with
thresholds), then ``done`` (with the exit code) or ``error``.

Every line has ``ts`` (UTC, ISO 8601 with milliseconds and ``Z``), ``level`` (``info``,
``warning``, ``error``), ``logger`` (``"polfair"``) and ``event``, then the event's fields.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import sys
from typing import IO, Any

__all__ = ["LOG_FORMATS", "EventLog"]

#: Values of ``--log-format``.
LOG_FORMATS = ("text", "json")


def _finite(value: Any) -> Any:
    """NaN and ±inf become null (strict JSON has no such numbers)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


class EventLog:
    """Writes events as JSON lines (``fmt="json"``), or nothing (``fmt="text"``).

    With ``"text"`` the command's own human-readable output is the log.

    Parameters
    ----------
    fmt
        ``"text"`` or ``"json"``.
    stream
        Where JSON lines go (default ``sys.stderr``, looked up at each event).

    Examples
    --------
    >>> import io, json
    >>> buf = io.StringIO()
    >>> log = EventLog("json", stream=buf)
    >>> log.event("report_written", path="r.parquet", rows=12)
    >>> line = json.loads(buf.getvalue())
    >>> line["event"], line["level"], line["rows"]
    ('report_written', 'info', 12)
    >>> EventLog("text").enabled
    False
    """

    def __init__(self, fmt: str = "text", stream: IO[str] | None = None) -> None:
        if fmt not in LOG_FORMATS:
            msg = f"log format must be one of {list(LOG_FORMATS)}, got {fmt!r}"
            raise ValueError(msg)
        self.fmt = fmt
        self._stream = stream

    @property
    def enabled(self) -> bool:
        """Whether events are written (JSON format)."""
        return self.fmt == "json"

    def event(self, name: str, *, level: str = "info", **fields: Any) -> None:
        """Write one event (a JSON object on one line, flushed) when enabled.

        Values that JSON cannot represent (datetimes, paths, expressions) are written as strings;
        NaN and infinities as null.
        """
        if not self.enabled:
            return
        now = dt.datetime.now(dt.UTC)
        record = {"ts": now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z",
                  "level": level, "logger": "polfair", "event": name, **fields}  # fmt: skip
        stream = self._stream or sys.stderr
        stream.write(json.dumps(_finite(record), default=str, ensure_ascii=False, allow_nan=False) + "\n")
        stream.flush()
