"""Exceptions and warnings raised by polfair."""

from __future__ import annotations

__all__ = [
    "ColumnNotFoundError",
    "InvalidInputError",
    "MissingValuesWarning",
    "PolfairError",
    "ReferenceWarning",
    "WeightRangeWarning",
    "ReportSizeWarning",
    "SchemaMismatchError",
]


class PolfairError(ValueError):
    """Base class of polfair's errors (a ``ValueError``, so generic handlers still catch it)."""


class ColumnNotFoundError(PolfairError):
    """A column named in an argument is not in the input; the message suggests close names."""


class InvalidInputError(PolfairError):
    """The input data violates a precondition (labels, scores, weights, empty input ...)."""


class SchemaMismatchError(PolfairError):
    """A report does not match the schema of the table it is appended to (columns or dtypes differ)."""


class MissingValuesWarning(UserWarning):
    """Rows with a null label, prediction, score or weight were excluded from the rates."""


class ReportSizeWarning(UserWarning):
    """The report will have millions of rows (many attribute sets or high-cardinality groups)."""


class ReferenceWarning(UserWarning):
    """A ``privileged`` value does not occur in the data: comparisons with that group are null."""


class WeightRangeWarning(UserWarning):
    """Some groups' weights differ from the others' by more than Float64 can hold in one unit (beyond
    about 1e180): their sums of squared weights, and so their interval columns, are null.
    """
