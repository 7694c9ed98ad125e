"""The report: the cell table to the long report (:mod:`.build`, rows laid out once in :mod:`.rows`,
intervals and tests in :mod:`.intervals`), the verdict on a row (:mod:`.status`), the wide form
(:mod:`.wide`) and the run metadata (:mod:`.run_metadata`). The output contract they write is
:mod:`polfair.core.schema`, a leaf below the pass and the report (the pass reserves its names).

``polfair.core.report.schema``, the contract's path before 0.3, still imports (the same module object,
registered here; CHANGELOG.md, "Migration"). Otherwise this ``__init__`` imports nothing, so the light
leaves (run metadata, wide form) load without the statistics.
"""

import sys as _sys

from polfair.core import schema

_sys.modules[__name__ + ".schema"] = schema
