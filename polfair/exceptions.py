"""Exceptions and warnings raised by polfair."""

from __future__ import annotations

import os
import sys

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
    "user_stacklevel",
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


_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def user_stacklevel() -> int:
    """The ``stacklevel`` that makes a warning name the first frame outside polfair (the user's call).

    Call it in the ``warnings.warn(...)`` call itself: counted from that frame, so a door reached
    through shared helpers, wrappers (:func:`polfair.core.options.checks_keywords`) or another door
    still points at the user's line rather than at polfair's internals.
    """
    frame = sys._getframe(1)
    level = 1
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level
