"""Where the pass runs besides in-process Polars: the Spark/DuckDB/... path through narwhals
(:mod:`polfair.engines.narwhals`) and the streaming accumulator (:mod:`polfair.engines.accumulator`).

Polars itself (in memory, streaming, paths and globs) is the core's own engine (:mod:`polfair.core`).
"""
