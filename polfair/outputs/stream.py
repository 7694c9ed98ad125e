"""Write a report that arrives in batches (:func:`polfair.fairness_report_batches`) to one file,
holding one batch at a time: parquet (one row group per batch), CSV, NDJSON or JSON (an array of
row objects), atomically like :func:`polfair.outputs.writers.write_report` (a temporary file renamed
over the target), with the same contents as writing the concatenated report.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import polars as pl

from polfair.core.docstrings import shares_parameters
from polfair.core.report.run_metadata import request_of
from polfair.exceptions import PolfairError
from polfair.outputs.writers import for_text_formats, report_format, report_metadata, write_atomic, write_report

__all__ = ["write_report_batches"]

_TEXT = {".csv": "csv", ".ndjson": "ndjson", ".jsonl": "ndjson", ".json": "json"}


@shares_parameters(write_report, name="polfair.outputs.writers.write_report", section="Raises")
def write_report_batches(batches: Iterable[pl.DataFrame], path: str | Path,
                         request: Mapping[str, Any] | None = None) -> int:
    """Write consecutive report batches to ``path`` as one report; the format follows the extension.

    Parameters
    ----------
    batches
        Frames of one schema, in row order (e.g. :func:`polfair.fairness_report_batches`); consumed
        one at a time, so memory holds one batch (plus the writer's buffers), whatever the total.
    path
        ``.parquet``, ``.csv``, ``.json`` or ``.ndjson``/``.jsonl``. CSV writes nested columns as JSON
        strings (:func:`polfair.outputs.writers.for_text_formats`).
    request
        The report's request, stored in a parquet file's key-value metadata as
        :func:`polfair.outputs.writers.write_report` does (``None``: the first batch's,
        :func:`polfair.core.report.run_metadata.request_of`).

    Returns
    -------
    int
        Rows written.

    Raises
    ------
    PolfairError
        Unknown extension, or a batch whose columns differ from the first's.
    FileNotFoundError
        As in :func:`polfair.outputs.writers.write_report`.

    Examples
    --------
    >>> import os, tempfile
    >>> import polars as pl
    >>> p = os.path.join(tempfile.mkdtemp(), "r.parquet")
    >>> write_report_batches([pl.DataFrame({"metric": ["a"], "value": [0.5]}), pl.DataFrame({"metric": ["b"], "value": [1.0]})], p)
    2
    >>> pl.read_parquet(p)["metric"].to_list()
    ['a', 'b']
    """
    name = str(path)
    ext = report_format(name)
    written = 0

    def check(first: pl.DataFrame | None, batch: pl.DataFrame) -> None:
        if first is not None and batch.schema != first.schema:
            msg = f"write_report_batches: a batch's columns {batch.schema} differ from the first's {first.schema}"
            raise PolfairError(msg)

    def write(tmp: str) -> None:
        nonlocal written
        first: pl.DataFrame | None = None
        if ext == ".parquet":
            import pyarrow.parquet as pq

            writer: Any = None
            try:
                for batch in batches:
                    check(first, batch)
                    table = batch.to_arrow()
                    if writer is None:
                        req = request if request is not None else request_of(batch)
                        schema = table.schema
                        meta = report_metadata(req)  # the request, as write_report stores it (read_report)
                        if meta is not None:
                            schema = schema.with_metadata({**(schema.metadata or {}),
                                                           **{k.encode(): v.encode() for k, v in meta.items()}})  # fmt: skip
                        first, writer = batch.clear(), pq.ParquetWriter(tmp, schema, compression="zstd")
                    writer.write_table(table.cast(writer.schema) if table.schema != writer.schema else table)
                    written += batch.height
                if writer is None:  # no batch: an empty file of no columns
                    pl.DataFrame().write_parquet(tmp)
            finally:
                if writer is not None:
                    writer.close()
            return
        kind = _TEXT[ext]
        with open(tmp, "wb") as fh:
            if kind == "json":
                fh.write(b"[")
            for batch in batches:
                check(first, batch)
                if kind == "csv":
                    for_text_formats(batch).write_csv(fh, include_header=first is None)
                elif kind == "ndjson":
                    batch.write_ndjson(fh)
                elif batch.height:  # JSON: the rows' objects, comma-separated across batches
                    rows = batch.write_ndjson().rstrip("\n").replace("\n", ",")
                    fh.write((b"," if written else b"") + rows.encode())
                first = batch.clear() if first is None else first
                written += batch.height
            if kind == "json":
                fh.write(b"]")

    write_atomic(name, write)
    return written
