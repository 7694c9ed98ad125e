"""Where the pass runs besides in-process Polars: Spark/DuckDB via narwhals, and the accumulator.

The Spark/DuckDB/... path is :mod:`polfair.engines.narwhals`; the streaming accumulator is
:mod:`polfair.engines.accumulator`.

Polars itself (in memory, streaming, paths and globs) is the core's own engine (:mod:`polfair.core`).
"""
