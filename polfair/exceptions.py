"""Exceptions and warnings raised by polfair."""

from __future__ import annotations

__all__ = [
    "ColumnNotFoundError",
    "InvalidInputError",
    "MissingValuesWarning",
    "PolarityError",
    "PolarityWarning",
    "PolfairError",
    "ReferenceWarning",
    "WeightRangeWarning",
    "ReportSizeWarning",
    "SchemaMismatchError",
    "UnknownOptionError",
]


class PolfairError(ValueError):
    """Base class of polfair's errors (a ``ValueError``, so generic handlers still catch it)."""


class ColumnNotFoundError(PolfairError):
    """A column named in an argument is not in the input; the message suggests close names."""


class InvalidInputError(PolfairError):
    """The input data violates a precondition (labels, scores, weights, empty input ...)."""


class PolarityError(InvalidInputError):
    """A score or a Boolean prediction can be read two ways relative to ``favorable``; say which with
    ``score_label=`` (the message names both readings and the fix for each; ``docs/contract.md``).
    """


class UnknownOptionError(PolfairError, TypeError):
    """A keyword or option no door of that name takes; the message names the close one ("did you
    mean"). A ``TypeError`` too, as Python's own error for an unexpected keyword is.
    """


class SchemaMismatchError(PolfairError):
    """A report does not match the schema of the table it is appended to (columns or dtypes differ)."""


class MissingValuesWarning(UserWarning):
    """Rows with a null label, prediction, score or weight were excluded from the rates."""


class PolarityWarning(UserWarning):
    """The predictions or scores look inverted relative to ``favorable`` (accuracy below 0.5, or the
    scores higher on unfavorable labels than on favorable ones): check ``favorable`` and ``score_label``.
    """


class ReportSizeWarning(UserWarning):
    """The report will have millions of rows (many attribute sets or high-cardinality groups)."""


class ReferenceWarning(UserWarning):
    """A value the user named occurs in no row: a ``privileged`` value (comparisons with that group are
    null), ``favorable`` / ``unfavorable`` (every favorable rate is 0), or a config's monitored or
    reference value or range. The message names the value and the values the column holds.
    """


class WeightRangeWarning(UserWarning):
    """Some groups' weights differ from the others' by more than Float64 can hold in one unit (beyond
    about 1e180): their sums of squared weights, and so their interval columns, are null.
    """
