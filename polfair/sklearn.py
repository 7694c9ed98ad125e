"""Moved to :mod:`polfair.compat.sklego` (this path keeps working; new code should import from there)."""

from polfair.compat.sklego import *  # noqa: F403
from polfair.compat.sklego import __all__ as __all__  # noqa: F401
