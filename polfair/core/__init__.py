"""The engine: options -> expressions, ONE pass to the cell table, metrics, intervals, the long report.

Subpackages by concept, top-down: :mod:`~polfair.core.request` (the audit request, one frozen
object), :mod:`~polfair.core.contract` (what every role accepts), :mod:`~polfair.core.passes`
(options -> expressions -> the ONE pass -> the cell table), :mod:`~polfair.core.proba` (attributes
estimated from membership probabilities), :mod:`~polfair.core.intervals` (statistics from counts),
:mod:`~polfair.core.entropy` (entropy indices and differential fairness),
:mod:`~polfair.core.report` (the cell table -> the long report, the verdict, the schemas) and
:mod:`~polfair.core.regression` (the regression audit's engine); shared leaves beside them
(``metrics``, ``values``, ``user_metrics``, ``glossary``, ``clustered``, ``hashing``, ``docstrings``).

Everything here is arithmetic on the small cell table after one ``group_by``. The core imports only
polars, numpy, pyarrow, scipy, the standard library, ``polfair.core.*`` and ``polfair.exceptions``; the
rooms around it (``polfair.engines``, ``polfair.compat``, ``polfair.monitor``, ``polfair.outputs``)
import the core, never the reverse (``tests/meta/test_layering.py`` enforces it).
"""
