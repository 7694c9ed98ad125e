"""Moved to :mod:`polfair.core.metrics` (this path keeps working; new code should import from there)."""

from polfair.core.metrics import *  # noqa: F403
from polfair.core.metrics import __all__ as __all__  # noqa: F401
