"""The report: the cell table to the long report (:mod:`.build`, rows laid out once in :mod:`.rows`,
intervals and tests in :mod:`.intervals`), the verdict on a row (:mod:`.status`), the output contract
(:mod:`.schema`), the wide form (:mod:`.wide`) and the run metadata (:mod:`.run_metadata`).

This ``__init__`` imports nothing, so the light leaves (schema, run metadata, wide form) load
without the statistics.
"""
