"""Slice discovery (issue 33): the subgroups nobody declared, where the model errs most.

:func:`slice_scan` runs SliceLine (Sagadeeva & Boehm, SIGMOD 2021), with the semantics of the PyPI
package ``sliceline``, one scan of the input per lattice level, and gives each returned slice its
interval, its difference to the rest with a test, and p-values adjusted over every slice the search
evaluated. Imports the core (and :mod:`polfair.engines` for Spark/DuckDB inputs).
"""

from polfair.slices.scan import SLICE_COLUMNS, is_slice_table, slice_scan

__all__ = ["SLICE_COLUMNS", "is_slice_table", "slice_scan"]
