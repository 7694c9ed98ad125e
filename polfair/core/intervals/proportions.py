"""One rate: Kish effective sizes, a metric's (rate, size) from the cell table, the Wilson
score interval, and the complement of a group within a reference that contains it.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import polars as pl

from polfair.core.intervals.common import Interval, IntoFloat, Rate, numpy_expr, staged
from polfair.exceptions import PolfairError

__all__ = [
    "complement_limits",
    "defined",
    "kish_size",
    "wilson_limits",
    "rate_defined",
    "complement_rate",
    "effective_size",
    "rate_inputs",
    "wilson_interval",
]

# ----------------------------------------------------------------------------------------------
# sizes and rates


def effective_size(w: IntoFloat, w2: IntoFloat) -> pl.Expr:
    """Expression: Kish's effective sample size ``(Σw)² / Σw²`` (Float64).

    Parameters
    ----------
    w, w2
        Expressions (or column names) of Σw and Σw² over the rows of a rate's denominator; for
        unweighted rows both are the row count, and the result is exactly that count.

    Returns
    -------
    pl.Expr
        Float64; null where ``Σw²`` is 0 or null (no rows).

    Notes
    -----
    Kish (1965), *Survey Sampling*. Frequency (replication) weights would use ``n = Σw`` instead.

    Examples
    --------
    >>> import polars as pl
    >>> pl.DataFrame({"w": [3.0, 4.0], "w2": [3.0, 8.0]}).select(effective_size("w", "w2")).to_series().to_list()
    [3.0, 2.0]
    """
    w = pl.col(w) if isinstance(w, str) else pl.lit(w) if isinstance(w, (int, float)) else w
    w2 = pl.col(w2) if isinstance(w2, str) else pl.lit(w2) if isinstance(w2, (int, float)) else w2
    w, w2 = w.cast(pl.Float64), w2.cast(pl.Float64)
    return pl.when(w2 > 0).then(pl.when(w == w2).then(w).otherwise(w * w / w2))


@functools.lru_cache(maxsize=256)  # expressions are immutable: each metric's built once
def rate_inputs(metric: str, *, w2: bool = True) -> Rate:
    """A metric's :class:`Rate` (value and Kish effective size of its denominator) from cell-table columns.

    Parameters
    ----------
    metric
        A rate metric of :data:`polfair.core.metrics.METRICS` (e.g. ``"true_positive_rate"``).
    w2
        ``True`` (default): the effective size uses the ``*_w2`` columns (Σw² per confusion class,
        equal to the counts when unweighted). ``False``: the table has no ``*_w2`` columns (an old
        accumulator state): the effective size is null (weighted intervals cannot be computed).

    Returns
    -------
    Rate
        ``p``: the metric's value (null on a zero denominator); ``n``: effective size (Float64).

    Raises
    ------
    PolfairError
        ``metric`` is not a rate metric.

    Examples
    --------
    >>> import polars as pl
    >>> t = pl.DataFrame({"tp": [3.0], "fn": [1.0], "tp_w2": [3.0], "fn_w2": [1.0]})
    >>> r = rate_inputs("true_positive_rate")
    >>> t.select(r.p, r.n.alias("n")).row(0)
    (0.75, 4.0)
    """
    from polfair.core.metrics import METRICS, Counts

    m = METRICS.get(metric)
    if m is None or m.denominator is None:
        rates = [k for k, v in METRICS.items() if v.denominator is not None]
        msg = f"rate_inputs: {metric!r} is not a rate metric; rates are {rates}"
        raise PolfairError(msg)
    den = m.denominator(Counts())
    if not w2:
        return Rate(m.expr(Counts()), pl.lit(None, pl.Float64))
    den2 = m.denominator(Counts(lambda c: pl.col(f"{c}_w2")))
    return Rate(m.expr(Counts()), effective_size(den, den2))


def rate_defined(r: Rate) -> pl.Expr:
    """Expression: whether a :class:`Rate` is defined (``p`` not null or NaN, ``n`` not null and > 0).

    Examples
    --------
    >>> import polars as pl
    >>> pl.select(rate_defined(Rate(pl.lit(0.5), pl.lit(0.0)))).item()
    False
    """
    return r.p.is_not_null() & r.p.is_not_nan() & r.n.is_not_null() & (r.n > 0)


def wilson_interval(r: Rate, z: IntoFloat) -> Interval:
    r"""Wilson score interval of a rate (Kish effective size when weighted).

    .. math:: \frac{\hat p + z^2/2n}{1 + z^2/n} \mp \frac{z}{1 + z^2/n}
       \sqrt{\frac{\hat p(1-\hat p)}{n} + \frac{z^2}{4n^2}}

    Parameters
    ----------
    r
        :class:`Rate` ``(p̂, n)``; ``n`` may be an effective (non-integer) size.
    z
        Critical value (:func:`z_value`), a float or a per-row/per-group expression.

    Returns
    -------
    Interval
        Float64 limits in [0, 1]; exactly 0 when ``p̂ = 0`` and 1 when ``p̂ = 1``; null when
        ``n`` is 0 or null or ``p̂`` is null.

    Notes
    -----
    Wilson (1927); Brown, Cai & DasGupta (2001). Equal to statsmodels 0.15
    ``proportion_confint(method="wilson")`` to 1e-15. Exact coverage: mean 95.0–95.4% at 95% for
    n = 10…200 (minimum 86% at n = 10 near p = 0 or 1). With weights, Wilson at ``(p̂_w, n_eff)``:
    94.7–95.7% in simulation (naive row counts: 75–79%).

    Examples
    --------
    >>> import polars as pl
    >>> from polfair.core.intervals import z_value
    >>> lo, hi = wilson_interval(Rate(pl.lit(0.3), pl.lit(10.0)), z_value(0.95))
    >>> [round(v, 4) for v in pl.select(lo, hi.alias("hi")).row(0)]
    [0.1078, 0.6032]
    """
    return staged(Interval(*numpy_expr(wilson_limits, [r.p, r.n, z], ("lo", "hi"))))


def wilson_limits(p: Any, n: Any, z: Any) -> tuple[np.ndarray, np.ndarray]:
    """:func:`wilson_interval` on arrays (numpy; the definition the expression form wraps).

    ``p``, ``n``, ``z`` broadcast; NaN marks a missing value. Returns ``(lo, hi)``, NaN where the
    rate is undefined (``p`` NaN, ``n`` not > 0).

    Examples
    --------
    >>> [round(float(v), 4) for v in wilson_limits(0.3, 10.0, 1.959963984540054)]
    [0.1078, 0.6032]
    """
    p, n, z = (np.asarray(v, dtype=np.float64) for v in (p, n, z))
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        z2 = z * z
        denom = 1.0 + z2 / n
        centre = (p + z2 / (2.0 * n)) / denom
        half = z / denom * np.sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n))
        ok = defined(p, n)
        lo = np.where(ok, np.where(p <= 0.0, 0.0, np.clip(centre - half, 0.0, 1.0)), np.nan)
        hi = np.where(ok, np.where(p >= 1.0, 1.0, np.clip(centre + half, 0.0, 1.0)), np.nan)
    return lo, hi


def defined(p: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Whether rates are defined (numpy form of :func:`rate_defined`): ``p`` not NaN and ``n > 0``.

    Examples
    --------
    >>> defined(np.array([0.5, np.nan, 0.5]), np.array([2.0, 2.0, 0.0])).tolist()
    [True, False, False]
    """
    with np.errstate(invalid="ignore"):
        return ~np.isnan(p) & (n > 0)


def kish_size(w: np.ndarray, w2: np.ndarray) -> np.ndarray:
    """:func:`effective_size` on arrays: ``(Σw)² / Σw²`` (``Σw`` itself where the two are equal); NaN where ``Σw² ≤ 0``.

    Examples
    --------
    >>> kish_size(np.array([3.0, 4.0, 0.0]), np.array([3.0, 8.0, 0.0])).tolist()
    [3.0, 2.0, nan]
    """
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        return np.where(w2 > 0, np.where(w == w2, w, w * w / w2), np.nan)


def complement_rate(
    num_g: pl.Expr, den_g: pl.Expr, den2_g: pl.Expr, num_ref: pl.Expr, den_ref: pl.Expr, den2_ref: pl.Expr
) -> tuple[Rate, pl.Expr]:
    """The rest of a reference that contains the group (``reference="overall"``): its rate and the group's share.

    Parameters
    ----------
    num_g, den_g, den2_g
        The group's numerator, denominator and Σw² of the denominator (weighted sums).
    num_ref, den_ref, den2_ref
        The same for the reference (e.g. the whole population).

    Returns
    -------
    (Rate, pl.Expr)
        The complement's rate ``(num_ref − num_g)/(den_ref − den_g)`` with effective size
        ``(den_ref − den_g)² / (den2_ref − den2_g)``, and the group's share ``f = den_g / den_ref``.

    Examples
    --------
    >>> import polars as pl
    >>> c, f = complement_rate(pl.lit(2.0), pl.lit(4.0), pl.lit(4.0), pl.lit(5.0), pl.lit(10.0), pl.lit(10.0))
    >>> pl.select(c.p, c.n.alias("n"), f.alias("f")).row(0)
    (0.5, 6.0, 0.4)
    """
    p_c, n_c, f = numpy_expr(complement_limits, [num_g, den_g, den2_g, num_ref, den_ref, den2_ref], ("p", "n", "f"))
    return staged(Rate(p_c, n_c)), f


def complement_limits(num_g: Any, den_g: Any, den2_g: Any, num_ref: Any, den_ref: Any, den2_ref: Any
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """:func:`complement_rate` on arrays: the complement's rate and effective size, and the group's share.

    Examples
    --------
    >>> [float(v) for v in complement_limits(2.0, 4.0, 4.0, 5.0, 10.0, 10.0)]
    [0.5, 6.0, 0.4]
    """
    num_g, den_g, den2_g, num_ref, den_ref, den2_ref = (
        np.asarray(v, dtype=np.float64) for v in (num_g, den_g, den2_g, num_ref, den_ref, den2_ref))  # fmt: skip
    with np.errstate(invalid="ignore", divide="ignore"):
        den_c = np.maximum(den_ref - den_g, 0.0)
        num_c = np.fmin(np.maximum(num_ref - num_g, 0.0), den_c)
        p_c = np.where(den_c > 0, num_c / den_c, np.nan)
        n_c = kish_size(den_c, np.maximum(den2_ref - den2_g, 0.0))
        f = np.where(den_ref > 0, den_g / den_ref, np.nan)
    return p_c, n_c, f
