"""Moved to :mod:`polfair.engines.accumulator` (this path keeps working; new code should import from there)."""

from polfair.engines.accumulator import *  # noqa: F403
from polfair.engines.accumulator import __all__ as __all__  # noqa: F401
