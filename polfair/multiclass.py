"""Moved to :mod:`polfair.compat.ignite` (this path keeps working; new code should import from there)."""

from polfair.compat.ignite import *  # noqa: F403
from polfair.compat.ignite import __all__ as __all__  # noqa: F401
