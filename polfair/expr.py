"""Moved to :mod:`polfair.compat.fairlearn` (this path keeps working; new code should import from there)."""

from polfair.compat.fairlearn import *  # noqa: F403
from polfair.compat.fairlearn import __all__ as __all__  # noqa: F401
