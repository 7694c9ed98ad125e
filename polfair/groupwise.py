"""Moved to :mod:`polfair.compat.yardstick` (this path keeps working; new code should import from there)."""

from polfair.compat.yardstick import *  # noqa: F403
from polfair.compat.yardstick import __all__ as __all__  # noqa: F401
