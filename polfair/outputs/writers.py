"""File writers for reports: parquet, CSV, JSON or NDJSON (by extension), atomic, and appends.

Every write goes to a temporary file in the target's directory, which is then renamed over the
target (``os.replace``, atomic on POSIX and Windows within one file system): a failed or
interrupted write never leaves a partial report where a reader could find it. Temporary names
start with ``.`` and end with ``.tmp``, so readers of ``*.parquet`` globs never see them.

:func:`append_report` adds a report to a table that grows run after run: a single parquet file
(rewritten with the new rows, atomically) or a directory of parquet files (one new file per
append, the usual layout of data-lake tables, cheap at any size). Either way it refuses a report
whose columns or dtypes differ from the table's (:class:`polfair.exceptions.SchemaMismatchError`),
naming each difference, as Delta Lake's schema enforcement does.
"""

from __future__ import annotations

import datetime as dt
import os
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path

import polars as pl

from polfair.core.schema import schema_differences
from polfair.exceptions import PolfairError, SchemaMismatchError

__all__ = ["append_report", "for_text_formats", "write_atomic", "write_report"]

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


def _format(path: str) -> str:
    lower = path.lower()
    for ext in _FORMATS:
        if lower.endswith(ext):
            return ext
    msg = f"--out {path!r}: use a .parquet, .csv, .json or .ndjson file name"
    raise PolfairError(msg)


def write_report(report: pl.DataFrame, path: str) -> None:
    """Write ``report`` to ``path`` atomically; the format follows the extension.

    Parameters
    ----------
    report
        Any report frame (long, wide, a comparison).
    path
        ``.parquet``, ``.csv``, ``.json`` or ``.ndjson``/``.jsonl``. CSV writes nested columns (the
        typed group key) as JSON strings (:func:`for_text_formats`).

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
    ext = _format(path)
    if ext == ".parquet":
        write_atomic(path, report.write_parquet)
    elif ext == ".csv":
        text = for_text_formats(report)
        write_atomic(path, text.write_csv)
    elif ext in (".ndjson", ".jsonl"):
        write_atomic(path, report.write_ndjson)
    else:
        write_atomic(path, report.write_json)


def _table_schema(path: Path) -> tuple[dict[str, pl.DataType] | None, Path | None]:
    """The schema of an existing table (file, or the newest file of a directory), and that file."""
    if path.is_dir():
        files = sorted(p for p in path.rglob("*.parquet") if not p.name.startswith("."))
        if not files:
            return None, None
        newest = max(files, key=lambda p: (p.stat().st_mtime_ns, p.name))
        return pl.read_parquet_schema(newest), newest
    if path.exists():
        return pl.read_parquet_schema(path), path
    return None, None


def append_report(report: pl.DataFrame, table: str | Path) -> Path:
    """Append ``report`` to a parquet table, refusing a schema mismatch; atomic.

    Parameters
    ----------
    report
        The rows to append (usually with run metadata, :func:`polfair.with_run_metadata`).
    table
        ``"name.parquet"``: a single file, created if absent, else rewritten as old rows + new rows
        (atomically; cost grows with the table, fine for small tables). A directory (existing, or
        a path without the ``.parquet`` suffix, created): one new file
        ``part-<UTC time>-<random>.parquet`` per append, cost independent of the table's size;
        read it back with ``pl.scan_parquet("table/*.parquet")`` (or ``"table/**/*.parquet"``).

    Returns
    -------
    pathlib.Path
        The file written.

    Raises
    ------
    SchemaMismatchError
        The table exists and the report's columns or dtypes differ; the message lists each
        difference (``column 'p_value': absent here, Float64 expected``). Columns in another order
        are not a mismatch: the report is reordered to the table's order.
    PolfairError
        ``table`` names a file that is not ``.parquet``.

    Examples
    --------
    >>> import os, tempfile
    >>> import polars as pl
    >>> d = os.path.join(tempfile.mkdtemp(), "fairness")
    >>> rep = pl.DataFrame({"metric": ["selection_rate"], "value": [0.5]})
    >>> _ = append_report(rep, d)
    >>> _ = append_report(rep, d)
    >>> pl.scan_parquet(os.path.join(d, "*.parquet")).collect().height
    2
    """
    path = Path(table)
    if path.exists() and not path.is_dir() and path.suffix.lower() != ".parquet":
        msg = f"--append {str(table)!r}: use a .parquet file or a directory of parquet files"
        raise PolfairError(msg)
    existing, source = _table_schema(path)
    if existing is not None:
        diffs = schema_differences(report.schema, existing)
        if diffs:  # one line: command-line error handlers print the first line only
            msg = (
                f"cannot append to {str(table)!r}: the report's schema differs from the table's "
                f"(read from {str(source)!r}): {'; '.join(diffs)}. Write to a new table, or migrate the table "
                "(docs/schema.md: new columns are appended and nullable; add them to the old rows as nulls)"
            )
            raise SchemaMismatchError(msg)
        report = report.select(list(existing))
    if path.is_dir() or (not path.exists() and path.suffix.lower() != ".parquet"):
        path.mkdir(parents=True, exist_ok=True)
        stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")
        target = path / f"part-{stamp}-{uuid.uuid4().hex[:8]}.parquet"
        write_atomic(target, report.write_parquet)
        return target
    if existing is None:
        write_atomic(path, report.write_parquet)
        return path
    combined = pl.concat([pl.read_parquet(path), report], how="vertical")
    write_atomic(path, combined.write_parquet)
    return path
