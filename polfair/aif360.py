"""Moved to :mod:`polfair.compat.aif360` (this path keeps working; new code should import from there)."""

from polfair.compat.aif360 import *  # noqa: F403
from polfair.compat.aif360 import __all__ as __all__  # noqa: F401
