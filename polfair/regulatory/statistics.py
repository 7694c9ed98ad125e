"""Closed-form tests of two selection rates used in adverse-impact analysis (scipy for the tails).

* :func:`two_proportion_z`: the "two standard deviations" test (Hazelwood School District v. United
  States, 433 U.S. 299 (1977); Castaneda v. Partida, 430 U.S. 482 (1977)): the pooled two-sample
  z statistic, or its hypergeometric-variance form (Biddle's Adverse Impact Toolkit, "estimated
  two-tail" test), with the two-sided normal p-value.
* :func:`fisher_exact_two_sided`: Fisher's exact test of a 2x2 table, two-sided (tables no more
  probable than the observed one), the core's vectorised test
  (:func:`polfair.core.intervals.fisher_exact_two_sided`, equal to ``scipy.stats.fisher_exact``).
* :func:`flip_to_nonsignificance`: the smallest number of extra selections in the focal group that
  makes the z test non-significant (Biddle's practical-significance "flip" check: a result that
  turns non-significant "if just two more persons from the disadvantaged group would have passed"
  is not practically significant; Waisome v. Port Authority, 948 F.2d 1370 (2d Cir. 1991)).
"""

from __future__ import annotations

import math

from scipy import special

from polfair.core import intervals

__all__ = ["fisher_exact_two_sided", "flip_to_nonsignificance", "normal_two_sided_p", "two_proportion_z"]


def normal_two_sided_p(z: float) -> float:
    """Two-sided p-value of a standard normal statistic: ``P(|Z| >= |z|) = 2·Φ(−|z|)`` (``scipy.special.ndtr``).

    Examples
    --------
    >>> round(normal_two_sided_p(1.959963984540054), 6)
    0.05
    """
    return float(2.0 * special.ndtr(-abs(z)))


def two_proportion_z(x1: float, n1: float, x2: float, n2: float, variance: str = "pooled") -> float | None:
    """Z statistic of the difference of two selection rates ``x1/n1 − x2/n2``.

    Parameters
    ----------
    x1, n1
        Selected and total of the focal group.
    x2, n2
        Selected and total of the comparison group.
    variance
        ``"pooled"``: ``SE² = p(1 − p)(1/n1 + 1/n2)`` with ``p = (x1 + x2)/(n1 + n2)`` (the usual
        two-sample z, "2 standard deviations" rule). ``"hypergeometric"``: the variance of ``x1``
        given both margins, ``n1 n2 S F / (N² (N − 1))`` (``S`` selected, ``F`` not selected,
        ``N = n1 + n2``), i.e. the pooled z times ``√((N − 1)/N)``.

    Returns
    -------
    float or None
        Negative when the focal group's rate is lower; None when undefined (an empty group, or
        everybody / nobody selected).

    Examples
    --------
    >>> round(two_proportion_z(40, 100, 60, 100), 4)
    -2.8284
    >>> round(two_proportion_z(40, 100, 60, 100, "hypergeometric"), 4)
    -2.8213
    """
    if variance not in ("pooled", "hypergeometric"):
        msg = f"variance must be 'pooled' or 'hypergeometric', got {variance!r}"
        raise ValueError(msg)
    N = n1 + n2
    if n1 <= 0 or n2 <= 0:
        return None
    p = (x1 + x2) / N
    if p <= 0 or p >= 1:
        return None
    z = (x1 / n1 - x2 / n2) / math.sqrt(p * (1 - p) * (1 / n1 + 1 / n2))
    if variance == "hypergeometric":
        if N <= 1:
            return None
        z *= math.sqrt((N - 1) / N)
    return z


def fisher_exact_two_sided(a: int, b: int, c: int, d: int) -> float:
    """Two-sided Fisher exact p-value of the 2x2 table ``[[a, b], [c, d]]``.

    The sum of the hypergeometric probabilities of every table with the same margins whose
    probability is at most the observed table's: ``scipy.stats.fisher_exact``'s p-value, from
    :func:`polfair.core.intervals.fisher_exact_two_sided`.

    Parameters
    ----------
    a, b, c, d
        Non-negative integer counts (focal selected, focal not selected, comparison selected,
        comparison not selected).

    Returns
    -------
    float
        In (0, 1].

    Raises
    ------
    ValueError
        If a count is negative or not an integer.

    Examples
    --------
    >>> round(fisher_exact_two_sided(1, 9, 11, 3), 6)  # scipy.stats.fisher_exact: 0.002759
    0.002759
    """
    for v in (a, b, c, d):
        if v < 0 or v != int(v):
            msg = f"Fisher's exact test needs non-negative integer counts, got {(a, b, c, d)}"
            raise ValueError(msg)
    a, b, c, d = int(a), int(b), int(c), int(d)
    return float(intervals.fisher_exact_two_sided(a, a + b, c, c + d))


def flip_to_nonsignificance(
    x1: int, n1: int, x2: int, n2: int, critical: float = 1.959963984540054, variance: str = "pooled"
) -> int | None:
    """Smallest ``k >= 0`` with ``|z(x1 + k, n1, x2, n2)| < critical`` (extra selections of the focal group).

    0 when the comparison is not significant already; None when the focal group's rate is not
    below the comparison group's (no adverse impact to flip) or when no ``k <= n1 − x1`` suffices.

    Examples
    --------
    >>> flip_to_nonsignificance(40, 100, 60, 100)
    7
    """
    z0 = two_proportion_z(x1, n1, x2, n2, variance)
    if z0 is None or x1 * n2 >= x2 * n1:
        return None if z0 is None or x1 * n2 > x2 * n1 else 0
    if abs(z0) < critical:
        return 0

    def significant(k: int) -> bool:
        z = two_proportion_z(x1 + k, n1, x2, n2, variance)
        return z is not None and z <= -critical

    lo, hi = 0, int(n1 - x1)
    if significant(hi):
        return None
    while hi - lo > 1:  # invariant: significant(lo), not significant(hi); z increases with k
        mid = (lo + hi) // 2
        if significant(mid):
            lo = mid
        else:
            hi = mid
    return hi
