"""Type aliases of the core, defined once (``IntoExpr``, ``OnMissing``, ``Reference``)."""

from __future__ import annotations

from typing import Literal, TypeAlias

import polars as pl

__all__ = ["IntoExpr", "OnMissing", "Reference"]

#: A column name or a Polars expression.
IntoExpr: TypeAlias = str | pl.Expr

#: What to do about rows with a null label, prediction, score or weight.
OnMissing = Literal["warn", "raise", "ignore"]

#: The reference-group modes of the report.
Reference = Literal["privileged", "largest", "overall", "best"]
