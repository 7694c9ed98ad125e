"""A lazy frame whose every scan is counted: the tests that a pass reads its input once (one helper for
every room's single-pass test)."""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl
from polars.io.plugins import register_io_source


class CountingSource:
    """A lazy frame over ``df`` whose every scan (every call of the IO source) is counted."""

    def __init__(self, df: pl.DataFrame, batch_size: int = 1000) -> None:
        self.df = df
        self.scans = 0
        self.rows_read = 0
        self.batch_size = batch_size

    def lazy(self) -> pl.LazyFrame:
        def source(
            with_columns: list[str] | None, predicate: pl.Expr | None, n_rows: int | None, batch_size: int | None
        ) -> Iterator[pl.DataFrame]:
            self.scans += 1
            df = self.df if with_columns is None else self.df.select(with_columns)
            if predicate is not None:
                df = df.filter(predicate)
            if n_rows is not None:
                df = df.head(n_rows)
            for chunk in df.iter_slices(self.batch_size):
                self.rows_read += chunk.height
                yield chunk

        return register_io_source(source, schema=self.df.schema, explain_name="counting")
