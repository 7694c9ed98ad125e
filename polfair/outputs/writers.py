"""File writers for reports: parquet, CSV, JSON or NDJSON (by extension), atomic, and appends.

Every write goes to a temporary file in the target's directory, which is then renamed over the
target (``os.replace``, atomic on POSIX and Windows within one file system): a failed or
interrupted write never leaves a partial report where a reader could find it. Temporary names
start with ``.`` and end with ``.tmp``, so readers of ``*.parquet`` globs never see them.

:func:`append_report` adds a report to a table that grows run after run: a single parquet file
(rewritten with the new rows, atomically) or a directory of parquet files (one new file per
append, the usual layout of data-lake tables, cheap at any size). The table's schema evolves as
``docs/schema.md`` allows (dbt's ``append_new_columns``, Delta Lake's ``mergeSchema``): a report
with a column the table lacks (a newer polfair's column, intervals, a new field of the typed
``group_key``) is appended and older rows read back null there (:func:`read_table`); a report
lacking an optional column gets nulls. Any other difference (a retyped column, another ``by``
column, a missing core or run column, an unknown column) is refused
(:class:`polfair.exceptions.SchemaMismatchError`), naming each difference. Appends are serialised
by a lock file beside the table (:func:`table_lock`); a run whose ``run_id`` is already in the
table is refused (:class:`RunExistsError`) unless ``replace_run=True``, which replaces that run's
rows; so is a report whose ``by`` periods the table already holds from another run
(:class:`PeriodExistsError`: a rerun of a nightly job without a ``run_id`` would add a second
copy of the day), unless ``replace_run=True``, which replaces those periods' rows. Each parquet
file carries the report's request (:mod:`polfair.core.report.run_metadata`) in its key-value metadata:
:func:`read_report` attaches it again.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from polfair.core.report.run_metadata import REQUEST_METADATA_KEY, attach_request, request_json, request_of
from polfair.core.schema import REPORT_SCHEMA
from polfair.exceptions import PolfairError, SchemaMismatchError

__all__ = [
    "PeriodExistsError",
    "RunExistsError",
    "TableLockedError",
    "append_report",
    "check_append_target",
    "check_writable",
    "for_text_formats",
    "read_report",
    "read_table",
    "report_format",
    "report_metadata",
    "table_lock",
    "table_run_files",
    "write_atomic",
    "write_report",
]

#: Key of a single-file table's parquet metadata: JSON object run_id -> that run's request.
REQUESTS_METADATA_KEY = "polfair.requests"
#: Extensions of other file formats: ``--append`` to such a path is refused (parquet tables only).
_OTHER_FORMATS = (".csv", ".tsv", ".txt", ".json", ".ndjson", ".jsonl", ".arrow", ".ipc", ".feather", ".avro",
                  ".orc", ".xlsx", ".xls", ".html", ".htm")  # fmt: skip


class RunExistsError(PolfairError):
    """The table already holds rows of this ``run_id`` (append with ``replace_run=True`` to replace them)."""


class PeriodExistsError(RunExistsError):
    """The table already holds rows of the report's ``by`` periods from another run.

    Rows are the same when their ``by`` values, ``attribute``, ``group`` and ``metric`` are (the
    key :func:`polfair.compare_reports` needs to be unique; group and attribute-set rows): a rerun
    of a job without its ``run_id``. Append with ``replace_run=True`` (``--replace-run``) to replace those periods' rows.
    """


class TableLockedError(PolfairError):
    """Another process held the table's lock for longer than the timeout."""

_FORMATS = (".parquet", ".csv", ".ndjson", ".jsonl", ".json")


def for_text_formats(report: pl.DataFrame) -> pl.DataFrame:
    """Make nested columns writable as CSV: each Struct / List / Array value becomes a JSON string.

    The typed group key (a Struct column such as ``{"race": "Caucasian", "sex": "Male"}``) is
    written to CSV as one JSON object per row, e.g. ``{"race":"Caucasian","sex":"Male"}``, null
    where the key is null (attribute and population rows). JSON/NDJSON and parquet keep the
    nesting and need no conversion.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"group_key": [{"sex": "f"}, None], "v": [1, 2]})
    >>> for_text_formats(df)["group_key"].to_list()
    ['{"sex":"f"}', None]
    """
    nested = [c for c, t in report.schema.items() if t.is_nested()]
    if not nested:
        return report
    out = []
    for c in nested:
        expr = pl.col(c)
        if report.schema[c].base_type() != pl.Struct:
            expr = pl.struct(expr.alias("v")).struct.json_encode().str.slice(5).str.head(-1)
        else:
            expr = expr.struct.json_encode()
        out.append(pl.when(pl.col(c).is_not_null()).then(expr).alias(c))
    return report.with_columns(out)


def write_atomic(path: str | Path, write: Callable[[str], None]) -> None:
    """Run ``write(tmp)`` on a temporary file beside ``path``, fsync it, then rename it to ``path``.

    Parameters
    ----------
    path
        The final file.
    write
        Writes the whole file to the path it is given.

    Raises
    ------
    FileNotFoundError
        ``path``'s directory does not exist.

    Notes
    -----
    On any exception (including ``KeyboardInterrupt``) the temporary file is removed and ``path``
    is left as it was. ``os.replace`` is atomic within one file system (POSIX ``rename``).

    Examples
    --------
    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> write_atomic(os.path.join(d, "x.txt"), lambda p: open(p, "w").write("hi"))
    >>> open(os.path.join(d, "x.txt")).read()
    'hi'
    """
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        msg = f"cannot write {str(path)!r}: the directory {str(folder)!r} does not exist"
        raise FileNotFoundError(msg)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{target.name}.", suffix=".tmp")
    os.close(fd)
    try:
        # mkstemp makes the file 0600; give the report the mode a plain open() would have
        os.chmod(tmp, target.stat().st_mode & 0o7777 if target.exists() else 0o666 & ~_umask())
        write(tmp)
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def report_format(path: str) -> str:
    """The file format of a report path, read from its extension.

    Parameters
    ----------
    path : str
        The file the report is written to (``--out``); the extension is matched case-insensitively.

    Returns
    -------
    str
        The matched extension: ``".parquet"``, ``".csv"``, ``".ndjson"``, ``".jsonl"`` or ``".json"``.

    Raises
    ------
    PolfairError
        When the extension is none of these; the message names ``--out`` and the formats accepted.

    Notes
    -----
    :func:`write_report` and the batched writer (``polfair report --out``) both call this, so every
    door accepts the same file names.

    Examples
    --------
    >>> report_format("runs/2026-11-26.PARQUET")
    '.parquet'
    >>> report_format("report.xlsx")
    Traceback (most recent call last):
    ...
    polfair.exceptions.PolfairError: --out 'report.xlsx': use a .parquet, .csv, .json or .ndjson file name
    """
    lower = path.lower()
    for ext in _FORMATS:
        if lower.endswith(ext):
            return ext
    msg = f"--out {path!r}: use a .parquet, .csv, .json or .ndjson file name"
    raise PolfairError(msg)


def report_metadata(request: Mapping[str, Any] | None, extra: Mapping[str, str] | None = None) -> dict[str, str] | None:
    """The parquet key-value metadata stored with a report: its request, plus ``extra``.

    Parameters
    ----------
    request : Mapping[str, Any] or None
        The request that produced the report (``report.attrs``-style mapping of the call's options), or
        None when it has none.
    extra : Mapping[str, str] or None, default None
        Further string keys and values to store (for example provenance).

    Returns
    -------
    dict[str, str] or None
        ``extra`` plus, when ``request`` is given, the key ``"polfair.request"`` holding the request as
        JSON (read back by :func:`read_report`); None when there is nothing to store.

    Examples
    --------
    >>> report_metadata(None) is None
    True
    >>> sorted(report_metadata({"metrics": ["disparate_impact"]}, {"run": "a"}))
    ['polfair.request', 'run']
    """
    out = dict(extra or {})
    if request is not None:
        out[REQUEST_METADATA_KEY] = request_json(request)
    return out or None


def _write_parquet(frame: pl.DataFrame, metadata: Mapping[str, str] | None) -> Callable[[str], None]:
    def write(tmp: str) -> None:
        if metadata:
            frame.write_parquet(tmp, metadata=dict(metadata))
        else:
            frame.write_parquet(tmp)

    return write


def write_report(report: pl.DataFrame, path: str | Path) -> None:
    """Write ``report`` to ``path`` atomically; the format follows the extension.

    Parameters
    ----------
    report
        Any report frame (long, wide, a comparison).
    path
        ``.parquet``, ``.csv``, ``.json`` or ``.ndjson``/``.jsonl``. CSV writes nested columns (the
        typed group key) as JSON strings (:func:`for_text_formats`). Parquet stores the report's
        request (:func:`polfair.core.report.run_metadata.request_of`) in its key-value metadata.

    Raises
    ------
    PolfairError
        Unknown extension.
    FileNotFoundError
        The directory does not exist.

    Examples
    --------
    >>> import os, tempfile
    >>> import polars as pl
    >>> p = os.path.join(tempfile.mkdtemp(), "r.parquet")
    >>> write_report(pl.DataFrame({"metric": ["selection_rate"], "value": [0.5]}), p)
    >>> pl.read_parquet(p).height
    1
    """
    path = os.fspath(path)  # a pathlib.Path as well as a str
    ext = report_format(path)
    if ext == ".parquet":  # with the report's request in the key-value metadata (read_report)
        write_atomic(path, _write_parquet(report, report_metadata(request_of(report))))
    elif ext == ".csv":
        text = for_text_formats(report)
        write_atomic(path, text.write_csv)
    elif ext in (".ndjson", ".jsonl"):
        write_atomic(path, report.write_ndjson)
    else:
        write_atomic(path, report.write_json)


def read_report(path: str | Path) -> pl.DataFrame:
    """Read a report file written by :func:`write_report` (parquet), with its request attached again.

    Parameters
    ----------
    path
        A ``.parquet`` report file (or a single-file table: the latest run's request is attached).

    Returns
    -------
    pl.DataFrame
        The report; :func:`polfair.core.report.run_metadata.request_of` gives the request stored with it
        (``None`` for files written without one).

    Examples
    --------
    >>> import os, tempfile
    >>> import polars as pl
    >>> from polfair.core.report.run_metadata import attach_request, request_of
    >>> p = os.path.join(tempfile.mkdtemp(), "r.parquet")
    >>> write_report(attach_request(pl.DataFrame({"metric": ["selection_rate"]}), {"y_true": "y"}), p)
    >>> request_of(read_report(p))
    {'y_true': 'y'}
    """
    frame = pl.read_parquet(path)
    meta = pl.read_parquet_metadata(path)
    text = meta.get(REQUEST_METADATA_KEY)
    if text:
        attach_request(frame, json.loads(text))
    return frame


def _files(path: Path) -> list[Path]:
    """The parquet files of a directory table (hidden and temporary files excluded), oldest first."""
    files = [p for p in path.rglob("*.parquet") if not any(part.startswith(".") for part in p.relative_to(path).parts)]
    return sorted(files, key=lambda p: (p.stat().st_mtime_ns, p.name))


def _struct_union(a: pl.DataType, b: pl.DataType) -> pl.DataType | None:
    """The Struct holding the fields of both (a's order, then b's new fields); None on a field conflict."""
    if not (isinstance(a, pl.Struct) and isinstance(b, pl.Struct)):
        return None
    fields = {f.name: f.dtype for f in a.fields}
    for f in b.fields:
        if f.name in fields and fields[f.name] != f.dtype:
            return None
        fields.setdefault(f.name, f.dtype)
    return pl.Struct(fields)


def _unify(schemas: Sequence[Mapping[str, pl.DataType]]) -> dict[str, pl.DataType]:
    """The union of several files' schemas (column order of the first, then new columns), Structs merged."""
    out: dict[str, pl.DataType] = {}
    for schema in schemas:
        for name, dtype in schema.items():
            if name not in out:
                out[name] = dtype
            elif out[name] != dtype:
                merged = _struct_union(out[name], dtype)
                if merged is None:
                    msg = f"the table's files disagree on column {name!r}: {out[name]} and {dtype}"
                    raise SchemaMismatchError(msg)
                out[name] = merged
    return out


def _table_schema(path: Path) -> tuple[dict[str, pl.DataType] | None, list[Path]]:
    """The schema of an existing table (the union over a directory's files) and its files."""
    if path.is_dir():
        files = _files(path)
        if not files:
            return None, []
        return _unify([pl.read_parquet_schema(f) for f in files]), files
    if path.exists():
        return dict(pl.read_parquet_schema(path)), [path]
    return None, []


def read_table(table: str | Path) -> pl.LazyFrame:
    """Scan a table written by :func:`append_report`, whatever schema each run wrote.

    Parameters
    ----------
    table
        A ``.parquet`` file or a directory of parquet files.

    Returns
    -------
    pl.LazyFrame
        Every row of every run, with the union of the runs' columns: a column (or a ``group_key``
        field) that a run did not write is null on its rows (``docs/schema.md``).

    Raises
    ------
    FileNotFoundError
        No such table, or a directory without parquet files.

    Examples
    --------
    >>> import os, tempfile
    >>> import polars as pl
    >>> d = os.path.join(tempfile.mkdtemp(), "t")
    >>> _ = append_report(pl.DataFrame({"attribute": ["a"], "metric": ["m"], "group_key": [{"race": "x"}]}), d)
    >>> _ = append_report(pl.DataFrame({"attribute": ["a"], "metric": ["m"],
    ...                                 "group_key": [{"race": "y", "sex": "f"}]}), d)
    >>> sorted(read_table(d).collect()["group_key"].to_list(), key=str)
    [{'race': 'x', 'sex': None}, {'race': 'y', 'sex': 'f'}]
    """
    path = Path(table)
    schema, files = _table_schema(path)
    if schema is None:
        msg = f"no table at {str(table)!r} (no parquet file there)"
        raise FileNotFoundError(msg)
    return pl.scan_parquet(
        [str(f) for f in files], schema=schema, missing_columns="insert", extra_columns="ignore",
        cast_options=pl.ScanCastOptions(missing_struct_fields="insert"),
    )  # fmt: skip


def _conform(frame: pl.DataFrame, schema: Mapping[str, pl.DataType]) -> pl.DataFrame:
    """``frame`` in ``schema``'s columns and order: absent columns null, Structs widened to the union."""
    cols = []
    for name, dtype in schema.items():
        if name not in frame.columns:
            cols.append(pl.lit(None, dtype).alias(name))
        elif frame.schema[name] != dtype and isinstance(dtype, pl.Struct):
            current = frame.schema[name]
            have = {f.name for f in current.fields} if isinstance(current, pl.Struct) else set()
            fields = [pl.col(name).struct.field(f.name) if f.name in have else pl.lit(None, f.dtype).alias(f.name)
                      for f in dtype.fields]  # fmt: skip
            cols.append(pl.when(pl.col(name).is_not_null()).then(pl.struct(fields)).alias(name))
        else:
            cols.append(pl.col(name))
    return frame.select(cols)


_KNOWN = {c.name: c for c in REPORT_SCHEMA}


def _evolve(report: Mapping[str, pl.DataType], table: Mapping[str, pl.DataType]) -> tuple[dict[str, pl.DataType], list[str]]:
    """The table's schema after appending ``report``, and the refused differences (empty: accepted).

    Accepted (``docs/schema.md``, version 3): a column the table lacks that is a report column
    (any column of a wide table); a report lacking an optional column (intervals, monitor, the
    version >= 2 core columns; any statistic of a wide table); a ``group_key`` (Struct) with other
    fields (the union). Refused: another dtype, other ``by`` columns, a report lacking a version-1
    core or a run column, an unknown column in a long table.
    """
    refused: list[str] = []
    wide = "metric" not in table and "metric" not in report
    # a long report's columns other than the schema's are its by columns: they must be the table's
    by_r = [c for c in report if c not in _KNOWN]
    by_t = [c for c in table if c not in _KNOWN]
    if not wide:
        refused += [f"column {c!r}: {report[c]} here, absent expected (another by column)" for c in by_r if c not in table]
        refused += [f"column {c!r}: absent here, {table[c]} expected (a by column)" for c in by_t if c not in report]
    merged = dict(table)
    for name, dtype in report.items():
        have = table.get(name)
        if have is None:
            if name in _KNOWN or wide:
                merged[name] = dtype
            continue
        if have == dtype:
            continue
        union = _struct_union(have, dtype)
        if union is not None:
            merged[name] = union
        else:
            refused.append(f"column {name!r}: {dtype} here, {have} expected")
    for name, dtype in table.items():
        if name in report or (name in by_t and not wide):
            continue
        col = _KNOWN.get(name)
        optional = wide if col is None else (col.nullable and col.kind != "run" and not (col.kind == "core" and col.since == 1))
        if not optional:
            refused.append(f"column {name!r}: absent here, {dtype} expected")
    return merged, refused


def check_append_target(table: str | Path, flag: str = "--append") -> Path:
    """Refuse, before any work, a table path that is not a parquet file or a directory, or cannot be written.

    Raises
    ------
    PolfairError
        An existing file that is not ``.parquet``, or a path ending in another format's extension
        (``.csv``, ``.json`` ...), which would otherwise become a directory; a new ``.parquet``
        file in a directory that does not exist; a place that is not writable.

    Examples
    --------
    >>> check_append_target("fairness.parquet").name
    'fairness.parquet'
    >>> check_append_target("report.csv")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    polfair.exceptions.PolfairError: --append 'report.csv': use a .parquet file or a directory of parquet files ...
    """
    path = Path(table)
    suffix = path.suffix.lower()
    if (path.exists() and not path.is_dir() and suffix != ".parquet") or (not path.exists() and suffix in _OTHER_FORMATS):
        msg = (f"{flag} {str(table)!r}: use a .parquet file or a directory of parquet files (appends are parquet "
               "tables; write a CSV with --out)")  # fmt: skip
        raise PolfairError(msg)
    # where the table (a new file) or its lock file goes must be a writable directory, as --out's
    # (a new directory table is created with its parents: its nearest existing ancestor must be writable)
    if path.exists():
        where = path if path.is_dir() else (path.parent if str(path.parent) else Path("."))
    elif suffix == ".parquet":
        where = path.parent if str(path.parent) else Path(".")
    else:
        where = next((a for a in path.absolute().parents if a.exists()), Path("/"))
        if not where.is_dir():
            msg = f"{flag} {str(table)!r}: {str(where)!r} is a file, so the directory table cannot be created there"
            raise PolfairError(msg)
    check_writable(flag, str(table), path, where)
    return path


def check_writable(flag: str, given: str, path: Path, where: Path) -> None:
    """Refuse, before any work, a missing or read-only directory ``where`` or a read-only file ``path``.

    The one check behind ``--out`` and ``--append``: the message names the flag, the path as the user
    gave it, and the fix.

    Raises
    ------
    PolfairError
        ``where`` does not exist, or it (or an existing ``path``) cannot be written.

    Examples
    --------
    >>> from pathlib import Path
    >>> check_writable("--out", "nope/r.csv", Path("nope/r.csv"), Path("nope"))
    Traceback (most recent call last):
    ...
    polfair.exceptions.PolfairError: --out 'nope/r.csv': the directory 'nope' does not exist; create it first
    """
    import os

    if not where.is_dir():
        msg = f"{flag} {given!r}: the directory {str(where)!r} does not exist; create it first"
        raise PolfairError(msg)
    if not os.access(where, os.W_OK) or (path.is_file() and not os.access(path, os.W_OK)):
        msg = f"{flag} {given!r} is not writable (permission denied in {str(where)!r}); choose another location"
        raise PolfairError(msg)


def _lock_path(path: Path) -> Path:
    if path.is_dir() or (not path.exists() and path.suffix.lower() != ".parquet"):
        path.mkdir(parents=True, exist_ok=True)
        return path / ".polfair-append.lock"
    return path.with_name(f".{path.name}.lock")


@contextlib.contextmanager
def table_lock(table: str | Path, timeout: float = 60.0) -> Iterator[Path]:
    """Hold the table's append lock (an OS file lock on a hidden file beside it) for the block.

    Two processes appending to one table run one after the other: the second waits up to
    ``timeout`` seconds, then gets a :class:`TableLockedError` naming the lock file. The lock is
    released when the block ends or the process dies (``fcntl.flock``; ``msvcrt.locking`` on
    Windows); the lock file itself stays (hidden: ``*.parquet`` globs do not see it).

    Parameters
    ----------
    table
        The table (``.parquet`` file or directory; a directory is created).
    timeout
        Seconds to wait for another append to finish (default 60).

    Yields
    ------
    pathlib.Path
        The lock file.

    Examples
    --------
    >>> import os, tempfile
    >>> with table_lock(os.path.join(tempfile.mkdtemp(), "t.parquet")) as lock:
    ...     lock.name
    '.t.parquet.lock'
    """
    lock = _lock_path(Path(table))
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + timeout
        while not _try_lock(fd):
            if time.monotonic() >= deadline:
                msg = (
                    f"another process is appending to {str(table)!r} (its lock {str(lock)!r} was held for more than "
                    f"{timeout:g} s); retry when it has finished"
                )
                raise TableLockedError(msg)
            time.sleep(0.05)
        try:
            yield lock
        finally:
            _unlock(fd)
    finally:
        os.close(fd)


def _try_lock(fd: int) -> bool:
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
        except OSError:
            return False
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _unlock(fd: int) -> None:
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        import msvcrt

        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)  # type: ignore[attr-defined]
        return
    fcntl.flock(fd, fcntl.LOCK_UN)


def table_run_files(table: str | Path, run_ids: Sequence[str]) -> dict[str, list[Path]]:
    """Which files of a table hold rows of these run ids (reads only the ``run_id`` column).

    Returns
    -------
    dict
        run_id -> the files holding it (only run ids found).

    Examples
    --------
    >>> import os, tempfile
    >>> import polars as pl
    >>> d = os.path.join(tempfile.mkdtemp(), "t")
    >>> _ = append_report(pl.DataFrame({"attribute": ["a"], "metric": ["m"], "run_id": ["r1"]}), d)
    >>> list(table_run_files(d, ["r1", "r2"]))
    ['r1']
    """
    path = Path(table)
    _, files = _table_schema(path)
    out: dict[str, list[Path]] = {}
    wanted = [r for r in run_ids if r is not None]
    for f in files:
        if not wanted or "run_id" not in pl.read_parquet_schema(f):
            continue
        found = pl.scan_parquet(f).filter(pl.col("run_id").is_in(wanted)).select(pl.col("run_id").unique()).collect()
        for r in found["run_id"].to_list():
            out.setdefault(r, []).append(f)
    return out


def _requests(path: Path) -> dict[str, Any]:
    """The run_id -> request map stored in a single-file table's metadata."""
    meta = pl.read_parquet_metadata(path)
    try:
        return dict(json.loads(meta.get(REQUESTS_METADATA_KEY) or "{}"))
    except (ValueError, TypeError):
        return {}


def append_report(
    report: pl.DataFrame, table: str | Path, *, replace_run: bool = False, lock_timeout: float = 60.0
) -> Path:
    """Append ``report`` to a parquet table: schema evolution by the rules, run ids once, atomic, locked.

    Parameters
    ----------
    report
        The rows to append (usually with run metadata, :func:`polfair.with_run_metadata`).
    table
        ``"name.parquet"``: a single file, created if absent, else rewritten as old rows + new rows
        (atomically; cost grows with the table, fine for small tables). A directory (existing, or
        a path without an extension, created): one new file ``part-<UTC time>-<random>.parquet``
        per append, cost independent of the table's size; read it back with :func:`read_table`
        (or ``pl.scan_parquet("table/*.parquet")`` while every run has the same schema).
    replace_run
        ``False`` (default): a report whose ``run_id`` is already in the table is refused
        (:class:`RunExistsError`; a retried job must not add its rows twice), and so is a report
        with ``by`` columns whose periods the table already holds from another run
        (:class:`PeriodExistsError`: the same ``by`` values, ``attribute``, ``group`` and
        ``metric``; a rerun without its run id). ``True``: that run's rows are replaced by the
        report's (single file: one atomic rewrite; directory: the run's file is replaced by an
        atomic rename when the run is in one file, the usual case), and the other runs' rows of
        those periods are removed (single file: in the same rewrite; directory: each file holding
        them is rewritten after the new rows are written, so a crash leaves a copy, never a gap).
    lock_timeout
        Seconds to wait for another append to the same table (:func:`table_lock`).

    Returns
    -------
    pathlib.Path
        The file written.

    Raises
    ------
    SchemaMismatchError
        The report's columns or dtypes differ from the table's beyond the evolution rules
        (``docs/schema.md``): the message lists each difference (``column 'n': Int32 here, Int64
        expected``). Columns in another order are not a mismatch.
    RunExistsError
        The table holds the report's ``run_id`` and ``replace_run`` is false.
    PeriodExistsError
        The table holds rows of the report's ``by`` periods from another run and ``replace_run``
        is false; the message names the periods and their runs. The table is unchanged.
    TableLockedError
        Another append held the table's lock for more than ``lock_timeout`` seconds.
    PolfairError
        ``table`` names a file that is not ``.parquet`` (:func:`check_append_target`).

    Examples
    --------
    >>> import os, tempfile
    >>> import polars as pl
    >>> d = os.path.join(tempfile.mkdtemp(), "fairness")
    >>> rep = pl.DataFrame({"attribute": ["sex"], "metric": ["selection_rate"], "value": [0.5]})
    >>> _ = append_report(rep, d)
    >>> _ = append_report(rep, d)
    >>> read_table(d).collect().height
    2
    """
    path = check_append_target(table)
    with table_lock(path, lock_timeout):
        existing, files = _table_schema(path)
        target_schema = dict(report.schema)
        if existing is not None:
            target_schema, refused = _evolve(report.schema, existing)
            if refused:  # one line: command-line error handlers print the first line only
                msg = (
                    f"cannot append to {str(table)!r}: the report's schema differs from the table's beyond adding "
                    f"columns: {'; '.join(refused)}. Write to a new table, or migrate the table (docs/schema.md)"
                )
                raise SchemaMismatchError(msg)
        run_ids = report["run_id"].unique().to_list() if "run_id" in report.columns else []
        holding = table_run_files(path, run_ids) if existing is not None and run_ids else {}
        if holding and not replace_run:
            runs = ", ".join(repr(r) for r in holding)
            msg = (
                f"the table {str(table)!r} already holds run {runs}; appending it again would duplicate its rows. "
                "Give a new run id, or replace that run's rows (--replace-run, append_report(..., replace_run=True))"
            )
            raise RunExistsError(msg)
        periods = _held_periods(path, report, skip_runs=run_ids) if existing is not None else None
        if periods is not None and periods.height and not replace_run:
            raise PeriodExistsError(_periods_message(table, periods))
        new = _conform(report, target_schema)
        if path.is_dir() or (not path.exists() and path.suffix.lower() != ".parquet"):
            written = _append_to_directory(new, path, holding, target_schema, report_metadata(request_of(report)))
            if periods is not None and periods.height:  # after the new rows are in: a crash leaves a copy, not a gap
                _drop_periods(files, periods)
            return written
        requests = _requests(path) if path.exists() else {}
        request = request_of(report)
        requests = {r: q for r, q in requests.items() if r not in holding or not replace_run}
        for r in run_ids:
            requests.pop(r, None)
            if request is not None:
                requests[r] = request
        meta = report_metadata(request, {REQUESTS_METADATA_KEY: json.dumps(requests, sort_keys=True)} if requests else None)
        if existing is None:
            write_atomic(path, _write_parquet(new, meta))
            return path
        old = pl.read_parquet(path)
        if holding:
            old = old.filter(~pl.col("run_id").is_in(list(holding)))
        if periods is not None and periods.height:
            old = old.filter(~_in_periods(old, periods))
        combined = pl.concat([_conform(old, target_schema), new], how="vertical")
        write_atomic(path, _write_parquet(combined, meta))
        return path


_REPORT_NAMES = frozenset(c.name for c in REPORT_SCHEMA)
#: Columns that, with the ``by`` columns, identify a report row (what one run holds once per period).
_ROW_KEY = ("attribute", "group", "metric")


def _held_periods(path: Path, report: pl.DataFrame, *, skip_runs: Sequence[Any] = ()) -> pl.DataFrame | None:
    """The ``by`` periods (and the runs) of ``report`` whose rows the table already holds; ``None`` without ``by``.

    A table row matches a report row when their ``by`` values and ``attribute``, ``group`` and
    ``metric`` (those of them both have) are equal, compared as text (nulls equal); population
    rows (``attribute`` null) are left out, as two jobs auditing other attributes share them. Rows of the
    runs in ``skip_runs`` (the report's own run ids: replaced or refused by the run-id check) do
    not count. Reads only those columns of the table's rows in the report's periods.
    """
    from polfair.core.schema import by_columns

    try:  # the columns before attribute, less any of the report's own (a report with its columns reordered)
        by = [c for c in by_columns(report.columns) if c not in _REPORT_NAMES]
    except ValueError:  # not a report (no attribute column): no periods to compare
        return None
    table = read_table(path)
    names = table.collect_schema().names()
    if not by or any(b not in names for b in by):
        return None
    keys = [*by, *(k for k in _ROW_KEY if k in report.columns and k in names)]
    text = [pl.col(k).cast(pl.String) for k in keys]
    mine = report.lazy().select(text).unique()
    if "attribute" in keys:  # population rows (attribute null) look alike in every job's report: not a sign
        mine = mine.filter(pl.col("attribute").is_not_null())
    runs = "run_id" in names
    held = table.select(*text, *([pl.col("run_id")] if runs else []))
    if runs and skip_runs:
        held = held.filter(~pl.col("run_id").is_in(list(skip_runs)) | pl.col("run_id").is_null())
    held = held.join(mine, on=keys, how="semi", nulls_equal=True)
    out = held.group_by(by).agg(pl.col("run_id").unique().sort() if runs else pl.len().alias("rows")).sort(by)
    return out.collect()


def _in_periods(frame: pl.DataFrame, periods: pl.DataFrame) -> pl.Expr:
    """Rows of ``frame`` in one of ``periods``' ``by`` values and of one of its runs (any run without ``run_id``)."""
    by = [c for c in periods.columns if c not in ("run_id", "rows")]
    key = pl.concat_str([pl.col(b).cast(pl.String).fill_null("\x00") for b in by], separator="\x1f")
    wanted = periods.select(pl.concat_str([pl.col(b).fill_null("\x00") for b in by], separator="\x1f"))
    hit = key.is_in(wanted.to_series().to_list())
    if "run_id" in periods.columns and "run_id" in frame.columns:
        runs = {r for rs in periods["run_id"].to_list() for r in rs}
        hit = hit & pl.col("run_id").is_in(sorted(runs, key=str))
    return hit


def _drop_periods(files: Sequence[Path], periods: pl.DataFrame) -> None:
    """Remove the rows of ``periods`` from a directory table's earlier files (each rewritten atomically)."""
    for f in files:
        frame = pl.read_parquet(f)
        drop = frame.select(_in_periods(frame, periods)).to_series()
        if not drop.any():
            continue
        keep = frame.filter(~drop)
        if keep.height:
            meta = {k: v for k, v in pl.read_parquet_metadata(f).items() if k.startswith("polfair.")}
            write_atomic(f, _write_parquet(keep, meta or None))
        else:
            f.unlink()


def _periods_message(table: str | Path, periods: pl.DataFrame) -> str:
    by = [c for c in periods.columns if c not in ("run_id", "rows")]
    shown = ", ".join(
        " ".join(f"{b}={r[b]}" for b in by) + (f" (run {', '.join(map(repr, r['run_id']))})" if "run_id" in r else "")
        for r in periods.head(3).iter_rows(named=True)
    )
    more = f" and {periods.height - 3} more" if periods.height > 3 else ""
    return (
        f"the table {str(table)!r} already holds rows of {periods.height} of this report's {', '.join(by)} "
        f"period(s): {shown}{more}; appending would add a second copy of them (a rerun without its run id). "
        "Replace those periods' rows (--replace-run, append_report(..., replace_run=True)), or leave them out"
    )


def _append_to_directory(
    new: pl.DataFrame, path: Path, holding: Mapping[str, list[Path]], schema: Mapping[str, pl.DataType],
    meta: Mapping[str, str] | None,
) -> Path:
    """One new part file; replacing a run: over the run's (first) file by an atomic rename."""
    path.mkdir(parents=True, exist_ok=True)
    files = sorted({f for fs in holding.values() for f in fs})
    if not files:
        stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")
        target = path / f"part-{stamp}-{uuid.uuid4().hex[:8]}.parquet"
        write_atomic(target, _write_parquet(new, meta))
        return target
    runs = list(holding)
    target, *rest = files
    keep = pl.read_parquet(target).filter(~pl.col("run_id").is_in(runs))
    out = pl.concat([_conform(keep, schema), new], how="vertical") if keep.height else new
    write_atomic(target, _write_parquet(out, meta))  # the run's rows change in one rename
    for f in rest:  # a run spread over several files (tables written before run ids were checked)
        others = pl.read_parquet(f).filter(~pl.col("run_id").is_in(runs))
        if others.height:
            write_atomic(f, others.write_parquet)
        else:
            f.unlink()
    return target
