"""The engine: options -> expressions, ONE pass to the cell table, metrics, intervals, the long report.

Stages: spec (options -> expressions), counts and collect (the ONE pass to the cell table), metrics
and disparities, entropy indices and differential fairness (entropy), intervals and tests
(intervals), and the cell table -> long report computation (report).

Everything here is arithmetic on the small cell table after one ``group_by``. The core imports only
polars, numpy, pyarrow, scipy, the standard library, ``polfair.core.*`` and ``polfair.exceptions``; the
rooms around it (``polfair.engines``, ``polfair.compat``, ``polfair.monitor``, ``polfair.outputs``)
import the core, never the reverse (``tests/meta/test_layering.py`` enforces it).
"""
