"""Confidence intervals and significance tests for every rate and disparity, from the cell table.

Everything here reads the cell table (or the report's rows built from it); nothing reads the
data again. Closed forms are **Polars expression builders**: they take expressions (a rate and
its effective size, or two of them) and return expressions, so the report evaluates them inside
its lazy plan, vectorised over rows. numpy is used only where a closed form does not exist:
Fisher's exact test (rows with an expected count < 1), χ² tails with a per-row number of degrees
of freedom, Monte Carlo exact homogeneity tests, the entropy-index bootstrap and the delete-a-group
jackknife. No scipy, no statsmodels (they are the test suite's oracles).

Methods (sources and measured coverage in ``docs/statistics.md``): Wilson score intervals for
rates (Wilson 1927), with Kish's effective size for weighted rows (Kish 1965); Newcombe's hybrid
score interval for differences (Newcombe 1998, method 10); MOVER-R with Wilson limits for ratios
(Donner & Zou 2012); the MOVER sum for averages of independent differences (Zou & Donner 2008);
projections of simultaneous (Šidák) intervals through ``|·|``, ``max`` and ``min`` for equalized
odds, spreads over groups, ``reference="best"`` and EDF (conservative by design); a
bias-corrected normal interval from the analytic (second-order delta) moments of the stratified
cell bootstrap for the entropy indices (:func:`entropy_delta`; :func:`entropy_bootstrap` draws the
replicates); the "N−1" χ² test with
Campbell's (2007) rule (two-sided Fisher when the smallest expected count is < 1); a 2-df χ² for
the odds-based disparities; a χ² homogeneity test (Monte Carlo exact when Cochran's rule fails);
Benjamini–Hochberg adjusted p-values; Kott's (2001) delete-a-group jackknife for clustered rows.

Which function gives which report column
----------------------------------------
``z = z_value(ci)``; a :class:`Rate` is ``(p̂, n_eff)`` (:func:`rate_inputs` builds it for a
metric from cell-table columns). Null rules: every builder returns null where its inputs are
null or a denominator is 0; the caller nulls the interval where the report's ``value``,
``difference`` or ``ratio`` is null, on the reference group's own row, and on count rows.

Each entry: report row kind -- function(s) -- ``ci_method`` -- ``test``. For families over
groups (spreads, fairlearn's equalized odds, EDF) the report should use the frame forms
:func:`spread_table`, :func:`equalized_odds_spread_table` and :func:`edf_table` (vectorised over
all families; the aggregation-expression forms cost a Python call per family and are for small
ad hoc tables).

* group row, rate metric (``value_lo/hi``) -- :func:`wilson_interval` -- ``score`` (weighted:
  ``score_ess``) -- none.
* group row, rate vs a privileged / largest reference (``difference_*``, ``ratio_*``, ``p_value``)
  -- :func:`newcombe_interval`, :func:`mover_ratio_interval`, :func:`two_proportion_test` --
  ``score`` / ``score_ess`` -- ``chi2_n1`` or ``fisher`` (weighted: ``z_ess``).
* group row, rate vs ``"overall"`` -- :func:`complement_rate`, :func:`overall_difference_interval`,
  :func:`overall_ratio_interval`, :func:`two_proportion_test` (group vs the rest) -- as above.
* group row, rate vs ``"best"`` -- :func:`best_reference_intervals` -- ``projection`` -- null.
* group row, ``statistical_parity_difference``, ``*_difference``, ``disparate_impact``,
  ``*_ratio`` (``value_lo/hi``) -- the underlying rate's difference / ratio interval -- as the rate.
* group row, ``average_odds_difference``, ``average_predictive_value_difference`` --
  :func:`average_difference_interval` (TPR & FPR; PPV & FOR) -- ``mover`` -- ``chi2_2df``
  (:func:`chi2_2df_test`).
* group row, ``equalized_odds_difference`` / ``average_abs_odds_difference`` --
  :func:`max_abs_difference_interval` / :func:`average_abs_difference_interval` -- ``projection``
  -- ``chi2_2df``.
* group row, generalized rates and generalized EOD -- :func:`wilson_interval`,
  :func:`max_abs_difference_interval` on ``(GTP/P, P)`` -- ``bound`` -- null.
* attribute row, spread of a rate (``difference_*``, ``ratio_*``), ``demographic_parity_*`` --
  :func:`spread_intervals` (aggregation) -- ``projection`` -- ``chi2_homogeneity`` or ``mc_exact``
  (:func:`homogeneity_test`).
* attribute row, fairlearn's ``equalized_odds_*`` -- :func:`equalized_odds_spread_intervals` --
  ``projection`` -- :func:`homogeneity_test` on TPR and FPR (2(k−1) df).
* attribute / population row, GE, Theil, CV -- :func:`entropy_delta` (the analytic moments of the cell
  bootstrap; :func:`entropy_bootstrap` draws it) -- ``delta_bc`` -- null.
* attribute / population row, EDF -- :func:`edf_interval` (aggregation) -- ``projection`` -- null.
* population row, bias amplification -- :func:`difference_of_intervals` of two :func:`edf_interval`
  at level ``1 − α/2`` -- ``projection`` -- null.
* population row, rate metric -- :func:`wilson_interval` -- ``score`` / ``score_ess`` -- null.
* ``p_value_adjusted`` -- :func:`p_adjust` ``.over(family)``, family = (by value, metric).
* any smooth quantity with ``cluster=`` -- :func:`jackknife_intervals` -- ``jackknife_t`` --
  ``jackknife_t``.
* count metrics, ``n_missing`` -- none (null) -- null -- null.

Determinism: the closed forms (and the report's entropy intervals, :func:`entropy_delta`) are
deterministic. The only random numbers (Monte Carlo exact tests; :func:`entropy_bootstrap` when
called) come from ``np.random.Generator(PCG64(SeedSequence([seed,
stable_hash(key)])))`` per ``by`` value (bootstrap) or per tested row (Monte Carlo), drawn in the
cell table's sorted order from its exact integer counts, so results do not depend on row order,
batch split or merge order (numpy guarantees its streams within a version, not across versions:
NEP 19).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from statistics import NormalDist
from typing import Any, Literal, NamedTuple, overload

import numpy as np
import polars as pl

from polfair.core.hashing import bucket_of, stable_hash
from polfair.exceptions import PolfairError

__all__ = [
    "CI_METHODS",
    "CI_METHOD_DTYPE",
    "INTERVAL_COLUMNS",
    "INTERVAL_DTYPES",
    "TESTS",
    "TEST_DTYPE",
    "Interval",
    "Rate",
    "SpreadInterval",
    "Stager",
    "Test",
    "abs_interval",
    "average_abs_difference_interval",
    "average_difference_interval",
    "best_reference_intervals",
    "bias_corrected_normal_interval",
    "bucket_of",
    "check_ci",
    "check_n_boot",
    "check_p_adjust",
    "chi2_2df_test",
    "chi2_sf",
    "complement_rate",
    "difference_of_intervals",
    "edf_interval",
    "edf_table",
    "equalized_odds_spread_table",
    "effective_size",
    "entropy_bootstrap",
    "entropy_delta",
    "equalized_odds_spread_intervals",
    "fisher_exact_two_sided",
    "ge_replicates",
    "homogeneity_table",
    "homogeneity_test",
    "jackknife_intervals",
    "max_abs_difference_interval",
    "mover_ratio_interval",
    "mover_sum_interval",
    "newcombe_interval",
    "overall_difference_interval",
    "overall_ratio_interval",
    "p_adjust",
    "rate_inputs",
    "sidak_level",
    "spread_intervals",
    "spread_table",
    "stable_hash",
    "t_quantile",
    "t_sf",
    "two_proportion_test",
    "wilson_interval",
    "z_value",
]

#: The report's interval columns (in order, after ``n``) when ``ci`` is set.
INTERVAL_COLUMNS = (
    "value_lo", "value_hi", "difference_lo", "difference_hi", "ratio_lo", "ratio_hi",
    "p_value", "p_value_adjusted", "n_eff", "ci_method", "test",
)  # fmt: skip
#: Their dtypes.
INTERVAL_DTYPES: dict[str, pl.DataType] = {
    c: (pl.String() if c in ("ci_method", "test") else pl.Float64()) for c in INTERVAL_COLUMNS
}
#: Values of the report's ``ci_method`` column.
CI_METHODS = ("score", "score_ess", "mover", "projection", "bootstrap_bc", "jackknife_t", "bound", "delta_bc")
#: Values of the report's ``test`` column.
TESTS = ("chi2_n1", "fisher", "z_ess", "chi2_2df", "chi2_homogeneity", "mc_exact", "jackknife_t")
#: Enum dtypes of the method and test names (cheap to build per row; the report stores them Categorical).
CI_METHOD_DTYPE = pl.Enum(CI_METHODS)
TEST_DTYPE = pl.Enum(TESTS)

IntoFloat = float | pl.Expr


class Interval(NamedTuple):
    """Lower and upper limit expressions (Float64; null where undefined or unbounded)."""

    lo: pl.Expr
    hi: pl.Expr


class Rate(NamedTuple):
    """A rate estimate ``p`` (fraction in [0, 1]) and its (effective) sample size ``n`` (Float64)."""

    p: pl.Expr
    n: pl.Expr


class Test(NamedTuple):
    """A p-value expression (Float64 in [0, 1]) and the name of the test (String)."""

    p_value: pl.Expr
    test: pl.Expr


Test.__test__ = False  # type: ignore[attr-defined]  # not a pytest test class (pytest collects polfair/)


class SpreadInterval(NamedTuple):
    """Intervals of ``max − min`` (``difference_lo/hi``) and ``min / max`` (``ratio_lo/hi``)."""

    difference_lo: pl.Expr
    difference_hi: pl.Expr
    ratio_lo: pl.Expr
    ratio_hi: pl.Expr


class Stager:
    """Materialises the intermediate intervals of many interval expressions as columns, in levels.

    The interval functions compose: a projection interval of equalized odds uses Newcombe
    intervals, which use Wilson limits, and each limit is used several times by the next step.
    As one expression tree, dozens of report columns grow to millions of nodes (Polars plans them
    slowly even on a few rows). While a stager is active (:meth:`active`), each interval function
    hands its result to the stager, which records it as a column ``__pf_s<i>`` and returns
    ``pl.col("__pf_s<i>")``: parents read plain columns and the trees stay small. Equal
    expressions share one column. :meth:`apply` then adds the columns, level by level (a column
    only reads columns of lower levels), so the final expressions can be evaluated on the result.

    Without an active stager every function returns plain expressions (the default).

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"p": [0.2], "n": [50.0], "q": [0.4], "m": [50.0]})
    >>> st = Stager()
    >>> with st.active():
    ...     lo, hi = newcombe_interval(Rate(pl.col("p"), pl.col("n")), Rate(pl.col("q"), pl.col("m")), 1.959963984540054)
    >>> [round(v, 4) for v in st.apply(df.lazy()).select(lo, hi.alias("hi")).collect().row(0)]
    [-0.3636, -0.0201]
    """

    def __init__(self, prefix: str = "__pf_s") -> None:
        self.prefix = prefix
        self._names: dict[str, str] = {}  # expression text -> column
        self._levels: dict[str, int] = {}  # column -> level
        self._exprs: list[tuple[int, pl.Expr]] = []

    def __call__(self, e: pl.Expr) -> pl.Expr:
        """Record ``e`` as a column (or find its equal) and return a reference to it."""
        try:
            key = e.meta.serialize(format="json")
        except Exception:  # an expression that does not serialise (a Python function): no sharing
            key = f"\x00{len(self._exprs)}"
        name = self._names.get(key)
        if name is None:
            name = f"{self.prefix}{len(self._exprs)}"
            level = 1 + max((self._levels.get(r, 0) for r in e.meta.root_names()), default=0)
            self._names[key], self._levels[name] = name, level
            self._exprs.append((level, e.alias(name)))
        return pl.col(name)

    @contextmanager
    def active(self) -> Iterator[Stager]:
        """Context in which the interval functions of this module stage their results here."""
        token = _STAGE.set(self)
        try:
            yield self
        finally:
            _STAGE.reset(token)

    def apply(self, frame: pl.LazyFrame) -> pl.LazyFrame:
        """``frame`` with the staged columns added, one ``with_columns`` per level."""
        for level in sorted({lv for lv, _ in self._exprs}):
            frame = frame.with_columns([e for lv, e in self._exprs if lv == level])
        return frame

    @property
    def columns(self) -> list[str]:
        """Names of the staged columns (drop them after use)."""
        return list(self._levels)


_STAGE: ContextVar[Stager | None] = ContextVar("polfair_interval_stager", default=None)


def _staged(x: Any) -> Any:
    """``x`` (an Interval, Test or Rate of expressions) with its members staged when a stager is active."""
    st = _STAGE.get()
    return x if st is None else type(x)(*(st(e) for e in x))


# ----------------------------------------------------------------------------------------------
# options


@overload
def check_ci(ci: Any, *, required: Literal[True]) -> float: ...
@overload
def check_ci(ci: Any, *, required: bool = False) -> float | None: ...
def check_ci(ci: Any, *, required: bool = False) -> float | None:
    """Validate a confidence level: ``None`` (unless ``required``) or a float strictly between 0 and 1.

    Raises
    ------
    PolfairError
        ``ci`` is not ``None`` and not a number in (0, 1) (e.g. ``95`` instead of ``0.95``), or
        ``ci`` is ``None`` where ``required`` (a function that only computes intervals).

    Examples
    --------
    >>> check_ci(0.9)
    0.9
    """
    if ci is None and required:
        msg = "ci must be a confidence level in (0, 1) such as 0.95 here (this function only computes intervals); got None"
        raise PolfairError(msg)
    if ci is None:
        return None
    if isinstance(ci, bool) or not isinstance(ci, (int, float)) or not 0.0 < float(ci) < 1.0:
        msg = f"ci must be a confidence level in (0, 1) such as 0.95, or None for no intervals; got {ci!r}"
        raise PolfairError(msg)
    return float(ci)


def check_n_boot(n_boot: Any) -> int:
    """Validate the number of bootstrap / Monte Carlo replicates: an int ≥ 2.

    Examples
    --------
    >>> check_n_boot(200)
    200
    """
    if isinstance(n_boot, bool) or not isinstance(n_boot, int) or n_boot < 2:
        msg = f"n_boot must be an integer >= 2 (Monte Carlo or bootstrap replicates), got {n_boot!r}"
        raise PolfairError(msg)
    return n_boot


def check_p_adjust(method: Any) -> str | None:
    """Validate ``p_adjust``: ``"bh"``, ``"by"``, ``"holm"`` or ``None``.

    Examples
    --------
    >>> check_p_adjust("holm")
    'holm'
    """
    if method not in (None, "bh", "by", "holm"):
        msg = f"p_adjust must be one of 'bh', 'by', 'holm' or None, got {method!r}"
        raise PolfairError(msg)
    return method


# ----------------------------------------------------------------------------------------------
# quantiles and tails


def sidak_level(ci: float, k: int) -> float:
    """The per-interval level ``ci**(1/k)`` that makes ``k`` independent intervals hold jointly.

    Examples
    --------
    >>> round(sidak_level(0.95, 2), 6)
    0.974679
    """
    return float(ci) ** (1.0 / k)


def z_value(ci: float, k: int = 1) -> float:
    """Two-sided standard normal critical value ``Φ⁻¹(1 − α/2)`` of level ``ci`` (Šidák over ``k``).

    Parameters
    ----------
    ci
        Confidence level in (0, 1).
    k
        Number of independent intervals that must hold simultaneously (default 1): each gets
        level ``ci**(1/k)``.

    Returns
    -------
    float
        The quantile (``statistics.NormalDist().inv_cdf``; equal to scipy's ``norm.ppf`` to 1e-15).

    Examples
    --------
    >>> round(z_value(0.95), 6)
    1.959964
    >>> round(z_value(0.95, 2), 4)
    2.2365
    """
    alpha = -math.expm1(math.log(check_ci(ci)) / k)  # type: ignore[arg-type]
    return NormalDist().inv_cdf(1.0 - alpha / 2.0)


def _z_expr(ci: float, k: pl.Expr, *, scalar: bool) -> pl.Expr:
    """Expression: :func:`z_value` at the Šidák level ``ci**(1/k)`` for an integer expression ``k``.

    One Python call per batch or group; ``scalar`` inside ``group_by().agg``.
    """

    def f(s: pl.Series) -> pl.Series:
        ks = s.drop_nulls().unique().to_list()  # one quantile per distinct k, not per row
        table = {int(v): z_value(ci, int(v)) for v in ks if v}
        return s.cast(pl.Int64).replace_strict(list(table), list(table.values()), default=None, return_dtype=pl.Float64)

    return k.map_batches(f, return_dtype=pl.Float64, returns_scalar=scalar)


def chi2_sf(x: Any, df: Any) -> np.ndarray:
    """Survival function of the χ² distribution with integer degrees of freedom (numpy, vectorised).

    Closed series: for even ``df``, ``Q = e^{−x/2} Σ_{j<df/2} (x/2)^j / j!``; for odd ``df``,
    ``Q = erfc(√(x/2)) + e^{−x/2} Σ_{j=1}^{(df−1)/2} (x/2)^{j−1/2} / Γ(j + 1/2)``, summed in log space.
    Equal to ``scipy.stats.chi2.sf`` to about 1e-14 (df 1…200).

    Parameters
    ----------
    x
        Statistic(s) ≥ 0 (array-like, Float64).
    df
        Degrees of freedom (positive integers, broadcast with ``x``).

    Returns
    -------
    numpy.ndarray
        Float64 p-values in [0, 1]; NaN where ``x`` is NaN or ``df < 1``.

    Examples
    --------
    >>> round(float(chi2_sf(3.841458820694124, 1)), 12)
    0.05
    >>> float(chi2_sf(2.0, 2)) == math.exp(-1.0)
    True
    """
    x, df = np.broadcast_arrays(np.asarray(x, dtype=np.float64), np.asarray(df, dtype=np.int64))
    out = np.full(x.shape, np.nan)
    flat_x, flat_df, flat_out = x.ravel(), df.ravel(), out.ravel()
    regular = np.isfinite(flat_x) & (flat_x > 0.0) & (flat_df >= 1)
    flat_out[~np.isnan(flat_x) & (flat_df >= 1) & (flat_x <= 0.0)] = 1.0
    flat_out[np.isposinf(flat_x) & (flat_df >= 1)] = 0.0
    for d in np.unique(flat_df[regular]).tolist():  # one vectorised series per distinct df
        idx = np.flatnonzero(regular & (flat_df == d))
        if idx.size * max(d // 2, 1) > 4_000_000:  # huge df and many values: one at a time
            for i in idx.tolist():
                flat_out[i] = _chi2_sf1(float(flat_x[i]), int(d))
            continue
        flat_out[idx] = _chi2_sf_many(flat_x[idx], int(d))
    return out


def _chi2_sf_many(x: np.ndarray, df: int) -> np.ndarray:
    """:func:`_chi2_sf1` for many finite ``x > 0`` with one ``df``, as (values × terms) arrays."""
    h = x / 2.0
    lh = np.log(h)[:, None]
    if df % 2 == 0:
        j = np.arange(df // 2, dtype=np.float64)
        logs = -h[:, None] + j * lh - _lgamma_table(df // 2, 1.0)
        base = np.zeros_like(h)
    else:
        j = np.arange(1, (df - 1) // 2 + 1, dtype=np.float64)
        logs = -h[:, None] + (j - 0.5) * lh - _lgamma_table((df - 1) // 2, 1.5)
        base = np.array([math.erfc(math.sqrt(v)) for v in h.tolist()])
    if logs.shape[1]:
        top = logs.max(axis=1)
        base = base + np.exp(top) * np.exp(logs - top[:, None]).sum(axis=1)
    return np.minimum(1.0, base)


def _chi2_sf1(x: float, df: int) -> float:
    if math.isnan(x) or df < 1:
        return math.nan
    if x <= 0.0:
        return 1.0
    if math.isinf(x):
        return 0.0
    h = x / 2.0
    lh = math.log(h)
    if df % 2 == 0:  # j = 0 … df/2 − 1: (x/2)^j / j!
        j = np.arange(df // 2, dtype=np.float64)
        logs = -h + j * lh - _lgamma_table(df // 2, 1.0)
        base = 0.0
    else:  # j = 1 … (df−1)/2: (x/2)^(j−½) / Γ(j + ½)
        j = np.arange(1, (df - 1) // 2 + 1, dtype=np.float64)
        logs = -h + (j - 0.5) * lh - _lgamma_table((df - 1) // 2, 1.5)
        base = math.erfc(math.sqrt(h))
    if logs.size:
        top = float(logs.max())
        base += math.exp(top) * float(np.exp(logs - top).sum())
    return min(1.0, base)


_LGAMMA: dict[float, np.ndarray] = {}


def _lgamma_table(k: int, start: float) -> np.ndarray:
    """``[lgamma(start), lgamma(start + 1), …]`` (``k`` values), from a cached table (math.lgamma each)."""
    table = _LGAMMA.get(start)
    if table is None or table.size < k:
        table = np.array([math.lgamma(start + i) for i in range(max(k, 64, 2 * (0 if table is None else table.size)))])
        _LGAMMA[start] = table
    return table[:k]


def _t_cdf_two_sided(t: float, df: int) -> float:
    """P(|T| < t) for Student's t with integer df (Abramowitz & Stegun 26.7.3, 26.7.4)."""
    theta = math.atan(t / math.sqrt(df))
    s, c2 = math.sin(theta), math.cos(theta) ** 2
    if df % 2 == 1:
        if df == 1:
            return 2.0 * theta / math.pi
        term, acc = 1.0, 1.0
        for j in range(1, (df - 3) // 2 + 1):
            term *= c2 * (2 * j) / (2 * j + 1)
            acc += term
        return 2.0 / math.pi * (theta + s * math.cos(theta) * acc)
    term, acc = 1.0, 1.0
    for j in range(1, (df - 2) // 2 + 1):
        term *= c2 * (2 * j - 1) / (2 * j)
        acc += term
    return s * acc


def t_sf(t: float, df: int) -> float:
    """Upper tail ``P(T > t)`` of Student's t with integer ``df ≥ 1`` (closed finite series).

    Examples
    --------
    >>> round(t_sf(2.093024054408263, 19), 10)
    0.025
    """
    if df < 1:
        msg = f"t_sf: df must be >= 1, got {df}"
        raise PolfairError(msg)
    a = _t_cdf_two_sided(abs(float(t)), int(df))
    return 0.5 * (1.0 - a) if t >= 0 else 1.0 - 0.5 * (1.0 - a)


def t_quantile(q: float, df: int) -> float:
    """Quantile of Student's t with integer ``df ≥ 1``, for the jackknife's ``t_{G−1}``.

    Bisection on the closed-form CDF of :func:`t_sf` (Abramowitz & Stegun 26.7.3–4) to machine
    precision; equal to ``scipy.stats.t.ppf`` to about 1e-12 (the Cornish–Fisher expansion the
    reference note mentions is only good to 1.4e-5 for df ≥ 9, and poor for small df).

    Examples
    --------
    >>> round(t_quantile(0.975, 19), 6)
    2.093024
    >>> round(t_quantile(0.975, 1), 6)
    12.706205
    """
    if not 0.0 < q < 1.0:
        msg = f"t_quantile: q must be in (0, 1), got {q!r}"
        raise PolfairError(msg)
    if q == 0.5:
        return 0.0
    upper = q > 0.5
    tail = 1.0 - q if upper else q  # upper-tail probability of |t|
    lo, hi = 0.0, 1.0
    while t_sf(hi, df) > tail:
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if t_sf(mid, df) > tail:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-15 * hi:
            break
    x = 0.5 * (lo + hi)
    return x if upper else -x


def fisher_exact_two_sided(x1: Any, n1: Any, x2: Any, n2: Any) -> np.ndarray:
    """Two-sided Fisher exact test of ``x1/n1`` vs ``x2/n2`` (numpy + ``math.lgamma``, vectorised).

    The p-value sums the hypergeometric probabilities (both margins fixed) of every table no
    more likely than the observed one (relative tolerance 1e-7, as R's ``fisher.test``), as
    ``scipy.stats.fisher_exact(alternative="two-sided")``; 1 when a margin is 0.

    Parameters
    ----------
    x1, n1, x2, n2
        Integer counts (array-like; ``0 ≤ x ≤ n``).

    Returns
    -------
    numpy.ndarray
        Float64 p-values; NaN where an input is missing or invalid.

    Examples
    --------
    >>> round(float(fisher_exact_two_sided(1, 10, 8, 10)), 10)  # scipy 1.17: 0.005477494641581329
    0.0054774946
    """
    arrs = np.broadcast_arrays(*(np.asarray(a, dtype=np.float64) for a in (x1, n1, x2, n2)))
    out = np.full(arrs[0].shape, np.nan)
    flat = [a.ravel() for a in arrs]
    o = out.ravel()
    for i in range(o.size):
        a, na, b, nb = (flat[j][i] for j in range(4))
        if not all(math.isfinite(v) for v in (a, na, b, nb)) or min(a, na, b, nb) < 0 or a > na or b > nb:
            continue
        o[i] = _fisher1(round(a), round(na), round(b), round(nb))
    return out


def _fisher1(a: int, na: int, b: int, nb: int) -> float:
    s, n = a + b, na + nb
    if na == 0 or nb == 0 or s == 0 or s == n:
        return 1.0
    lo, hi = max(0, s - nb), min(s, na)
    ks = np.arange(lo, hi + 1)
    lg = np.vectorize(math.lgamma, otypes=[float])
    logp = lg(na + 1.0) - lg(ks + 1.0) - lg(na - ks + 1.0) + lg(nb + 1.0) - lg(s - ks + 1.0) - lg(nb - s + ks + 1.0)
    logp -= math.lgamma(n + 1.0) - math.lgamma(s + 1.0) - math.lgamma(n - s + 1.0)
    p = np.exp(logp)
    p_obs = p[a - lo]
    return float(min(1.0, math.fsum(p[p <= p_obs * (1.0 + 1e-7)])))


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


def _ok(r: Rate) -> pl.Expr:
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
    >>> lo, hi = wilson_interval(Rate(pl.lit(0.3), pl.lit(10.0)), z_value(0.95))
    >>> [round(v, 4) for v in pl.select(lo, hi.alias("hi")).row(0)]
    [0.1078, 0.6032]
    """
    p, n = r.p.cast(pl.Float64), r.n.cast(pl.Float64)
    z = pl.lit(z) if not isinstance(z, pl.Expr) else z
    z2 = z * z
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2.0 * n)) / denom
    half = z / denom * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt()
    ok = _ok(r)
    lo = pl.when(ok).then(pl.when(p <= 0.0).then(0.0).otherwise((centre - half).clip(0.0, 1.0)))
    hi = pl.when(ok).then(pl.when(p >= 1.0).then(1.0).otherwise((centre + half).clip(0.0, 1.0)))
    return _staged(Interval(lo, hi))


def newcombe_interval(g: Rate, r: Rate, z: IntoFloat) -> Interval:
    r"""Newcombe's hybrid score interval (method 10) for the difference ``p_g − p_r`` of independent rates.

    .. math:: L = d - \sqrt{(\hat p_g - l_g)^2 + (u_r - \hat p_r)^2},\quad
       U = d + \sqrt{(u_g - \hat p_g)^2 + (\hat p_r - l_r)^2}

    with the Wilson limits ``(l, u)`` of each rate (:func:`wilson_interval`).

    Returns
    -------
    Interval
        Float64 limits in [−1, 1]; null when either rate or size is null/0.

    Notes
    -----
    Newcombe (1998), *Statistics in Medicine* 17, 873–890. Equal to statsmodels 0.15
    ``confint_proportions_2indep(method="newcomb")`` to 1e-15. Exact coverage 94.6–97.1% at 95%
    (down to a 10-row group against 500).

    Examples
    --------
    >>> import polars as pl
    >>> lo, hi = newcombe_interval(Rate(pl.lit(0.2), pl.lit(50.0)), Rate(pl.lit(0.4), pl.lit(50.0)), 1.959963984540054)
    >>> [round(v, 4) for v in pl.select(lo, hi.alias("hi")).row(0)]
    [-0.3636, -0.0201]
    """
    lg, ug = wilson_interval(g, z)
    lr, ur = wilson_interval(r, z)
    d = g.p - r.p
    lo = d - ((g.p - lg) ** 2 + (ur - r.p) ** 2).sqrt()
    hi = d + ((ug - g.p) ** 2 + (r.p - lr) ** 2).sqrt()
    return _staged(Interval(lo, hi))


def _mover_ratio_raw(g: Rate, r: Rate, z: IntoFloat) -> Interval:
    """MOVER-R limits with an unbounded upper limit as +inf (when ``p_r = 0``)."""
    lg, ug = wilson_interval(g, z)
    lr, ur = wilson_interval(r, z)
    p1, p2 = g.p, r.p
    b = p1 * p2
    a_lo = lg * (2.0 * p1 - lg)
    c_lo = ur * (2.0 * p2 - ur)
    lo = a_lo / (b + (b * b - a_lo * c_lo).clip(lower_bound=0.0).sqrt())
    lo = pl.when(p1 <= 0.0).then(0.0).otherwise(lo)
    a_hi = ug * (2.0 * p1 - ug)
    c_hi = lr * (2.0 * p2 - lr)
    hi = (b + (b * b - a_hi * c_hi).clip(lower_bound=0.0).sqrt()) / c_hi
    hi = pl.when(p2 <= 0.0).then(float("inf")).otherwise(hi)
    ok = _ok(g) & _ok(r) & ((p1 > 0.0) | (p2 > 0.0))
    return _staged(Interval(pl.when(ok).then(lo), pl.when(ok).then(hi)))


def mover_ratio_interval(g: Rate, r: Rate, z: IntoFloat) -> Interval:
    r"""MOVER-R interval with Wilson limits for the ratio ``p_g / p_r`` of independent rates.

    With ``θ̂ = p̂_g/p̂_r`` and ``b = p̂_g p̂_r``:

    .. math:: L = \frac{l_g(2\hat p_g - l_g)}{b + \sqrt{b^2 - l_g(2\hat p_g - l_g)\,u_r(2\hat p_r - u_r)}},\quad
       U = \frac{b + \sqrt{b^2 - u_g(2\hat p_g - u_g)\,l_r(2\hat p_r - l_r)}}{l_r(2\hat p_r - l_r)}

    (the lower limit in rationalised form, finite when ``u_r > 2p̂_r``; 0 when ``x_g = 0``).

    Returns
    -------
    Interval
        Float64 limits ≥ 0; null when ``p̂_r = 0`` (the ratio itself is then null by the report's
        policy, and the upper limit would be unbounded) or a size is 0.

    Notes
    -----
    Donner & Zou (2012); Zou & Donner (2008). Exact coverage 95.0–96.8% at 95% in six scenarios,
    defined with a zero numerator count (Katz's log interval is not). statsmodels has no MOVER-R;
    its Koopman score interval (``method="score"``) is a different method and is wrong in
    0.15.0 when a count equals its n.

    Examples
    --------
    >>> import polars as pl
    >>> g, r = Rate(pl.lit(0.2), pl.lit(50.0)), Rate(pl.lit(0.4), pl.lit(50.0))
    >>> lo, hi = mover_ratio_interval(g, r, 1.959963984540054)
    >>> [round(v, 4) for v in pl.select(lo, hi.alias("hi")).row(0)]
    [0.263, 0.9363]
    """
    lo, hi = _mover_ratio_raw(g, r, z)
    return _staged(Interval(pl.when(hi.is_finite()).then(lo), pl.when(hi.is_finite()).then(hi)))


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
    den_c = (den_ref - den_g).clip(lower_bound=0.0)
    num_c = (num_ref - num_g).clip(lower_bound=0.0)
    num_c = pl.min_horizontal(num_c, den_c)
    p_c = pl.when(den_c > 0).then(num_c / den_c)
    n_c = effective_size(den_c, (den2_ref - den2_g).clip(lower_bound=0.0))
    f = pl.when(den_ref > 0).then(den_g / den_ref)
    return _staged(Rate(p_c, n_c)), f


def overall_difference_interval(g: Rate, c: Rate, f: pl.Expr, z: IntoFloat) -> Interval:
    """Interval of ``p_g − p_ref`` where the reference contains the group (``reference="overall"``).

    ``p_ref = f·p_g + (1−f)·p_c`` exactly (``c`` = reference minus group, ``f`` = the group's
    share of the denominator; :func:`complement_rate`), so ``p_g − p_ref = (1−f)(p_g − p_c)`` and its
    interval is ``(1−f)`` times Newcombe's interval of ``p_g − p_c`` (independent rows).

    Returns
    -------
    Interval
        Null when the complement is empty (the group is the whole reference).

    Examples
    --------
    >>> import polars as pl
    >>> lo, hi = overall_difference_interval(Rate(pl.lit(0.2), pl.lit(50.0)), Rate(pl.lit(0.4), pl.lit(50.0)),
    ...                                      pl.lit(0.5), 1.959963984540054)
    >>> [round(v, 4) for v in pl.select(lo, hi.alias("hi")).row(0)]
    [-0.1818, -0.0101]
    """
    lo, hi = newcombe_interval(g, c, z)
    return _staged(Interval((1.0 - f) * lo, (1.0 - f) * hi))


def overall_ratio_interval(g: Rate, c: Rate, f: pl.Expr, z: IntoFloat) -> Interval:
    """Interval of ``p_g / p_ref`` where the reference contains the group (``reference="overall"``).

    ``p_g / p_ref = R / (f·R + 1 − f)`` with ``R = p_g / p_c``: an increasing map of ``R``, applied to
    the MOVER-R limits of ``R`` (an unbounded upper limit maps to ``1/f``).

    Returns
    -------
    Interval
        Null when ``p_g = p_c = 0`` (the ratio is undefined) or the complement is empty.

    Examples
    --------
    >>> import polars as pl
    >>> lo, hi = overall_ratio_interval(Rate(pl.lit(0.2), pl.lit(50.0)), Rate(pl.lit(0.0), pl.lit(50.0)),
    ...                                 pl.lit(0.5), 1.959963984540054)
    >>> [round(v, 4) for v in pl.select(lo, hi.alias("hi")).row(0)]
    [1.4319, 2.0]
    """
    lo, hi = _mover_ratio_raw(g, c, z)

    def m(x: pl.Expr) -> pl.Expr:
        return pl.when(x.is_infinite()).then(1.0 / f).otherwise(x / (f * x + 1.0 - f))

    ok = f.is_not_null() & (f < 1.0)
    return _staged(Interval(pl.when(ok).then(m(lo)), pl.when(ok).then(m(hi))))


def abs_interval(iv: Interval) -> Interval:
    """Projection of an interval of ``d`` through ``|d|``.

    ``[0, max(|L|, |U|)]`` if ``0 ∈ [L, U]``, else ``[min(|L|, |U|), max(|L|, |U|)]``.

    Examples
    --------
    >>> import polars as pl
    >>> lo, hi = abs_interval(Interval(pl.lit(-0.3), pl.lit(0.1)))
    >>> pl.select(lo, hi.alias("hi")).row(0)
    (0.0, 0.3)
    """
    lo, hi = iv
    top = pl.max_horizontal(lo.abs(), hi.abs())
    bottom = pl.when((lo <= 0.0) & (hi >= 0.0)).then(0.0).otherwise(pl.min_horizontal(lo.abs(), hi.abs()))
    ok = lo.is_not_null() & hi.is_not_null()
    return _staged(Interval(pl.when(ok).then(bottom), pl.when(ok).then(top)))


def mover_sum_interval(parts: Sequence[tuple[pl.Expr, Interval]], scale: float = 1.0) -> Interval:
    r"""MOVER interval of a sum of independent estimates, times ``scale``.

    .. math:: L = \sum d_i - \sqrt{\sum (d_i - L_i)^2},\quad U = \sum d_i + \sqrt{\sum (U_i - d_i)^2}

    Parameters
    ----------
    parts
        ``(estimate, Interval)`` of each independent part.
    scale
        Multiplies the result (0.5 for an average of two parts).

    Notes
    -----
    Zou & Donner (2008), *Statistics in Medicine* 27, 1693–1702.

    Examples
    --------
    >>> import polars as pl
    >>> lo, hi = mover_sum_interval([(pl.lit(0.1), Interval(pl.lit(0.0), pl.lit(0.2))),
    ...                              (pl.lit(0.1), Interval(pl.lit(0.0), pl.lit(0.2)))], 0.5)
    >>> [round(v, 6) for v in pl.select(lo, hi.alias("hi")).row(0)]
    [0.029289, 0.170711]
    """
    d = pl.sum_horizontal([e for e, _ in parts]) if len(parts) > 1 else parts[0][0]
    lo_sq = [(e - iv.lo) ** 2 for e, iv in parts]
    hi_sq = [(iv.hi - e) ** 2 for e, iv in parts]
    ok = pl.all_horizontal([e.is_not_null() & iv.lo.is_not_null() & iv.hi.is_not_null() for e, iv in parts])
    lo = d - (pl.sum_horizontal(lo_sq) if len(parts) > 1 else lo_sq[0]).sqrt()
    hi = d + (pl.sum_horizontal(hi_sq) if len(parts) > 1 else hi_sq[0]).sqrt()
    return _staged(Interval(pl.when(ok).then(scale * lo), pl.when(ok).then(scale * hi)))


def average_difference_interval(pairs: Sequence[tuple[Rate, Rate]], z: IntoFloat) -> Interval:
    """Interval of the average of rate differences over disjoint rows: the MOVER sum of Newcombe intervals, halved.

    ``average_odds_difference = ½(ΔFPR + ΔTPR)`` (negatives and positives: disjoint rows) and
    ``average_predictive_value_difference = ½(ΔPPV + ΔFOR)`` (predicted positives and negatives).

    Parameters
    ----------
    pairs
        ``[(group rate, reference rate), ...]`` for each part.
    z
        Critical value at the report's level (:func:`z_value`).

    Notes
    -----
    Coverage 94.1–96.3% at 95% (simulation; a 20-row group against 1000: the percentile
    bootstrap gives 88.4%).

    Examples
    --------
    >>> import polars as pl
    >>> r = lambda p, n: Rate(pl.lit(p), pl.lit(n))
    >>> lo, hi = average_difference_interval([(r(0.2, 50.0), r(0.4, 50.0)), (r(0.7, 40.0), r(0.8, 60.0))], 1.96)
    >>> [round(v, 3) for v in pl.select(lo, hi.alias("hi")).row(0)]
    [-0.27, -0.027]
    """
    parts = [(g.p - r.p, newcombe_interval(g, r, z)) for g, r in pairs]
    return mover_sum_interval(parts, 1.0 / len(pairs))


def max_abs_difference_interval(pairs: Sequence[tuple[Rate, Rate]], ci: float) -> Interval:
    """Projection interval of ``max_i |p_g,i − p_r,i|`` (``equalized_odds_difference`` on group rows).

    Each Newcombe interval at the Šidák level ``ci**(1/m)`` (``m`` = number of parts, independent),
    mapped through ``|·|`` (:func:`abs_interval`) and combined by ``max``: ``[max L_i, max U_i]``.
    Conservative by design (94.8–98.9% at 95% in simulation; the percentile bootstrap gives 0%
    when the true value is 0).

    Examples
    --------
    >>> import polars as pl
    >>> r = lambda p, n: Rate(pl.lit(p), pl.lit(n))
    >>> lo, hi = max_abs_difference_interval([(r(0.2, 50.0), r(0.4, 50.0)), (r(0.7, 40.0), r(0.8, 60.0))], 0.95)
    >>> [round(v, 3) for v in pl.select(lo, hi.alias("hi")).row(0)]
    [0.0, 0.384]
    """
    z = z_value(ci, len(pairs))
    ivs = [abs_interval(newcombe_interval(g, r, z)) for g, r in pairs]
    return _max_of(ivs)


def _max_of(ivs: Sequence[Interval]) -> Interval:
    ok = pl.all_horizontal([iv.lo.is_not_null() & iv.hi.is_not_null() for iv in ivs])
    lo = pl.max_horizontal([iv.lo for iv in ivs])
    hi = pl.max_horizontal([iv.hi for iv in ivs])
    return _staged(Interval(pl.when(ok).then(lo), pl.when(ok).then(hi)))


def _min_of(ivs: Sequence[Interval]) -> Interval:
    ok = pl.all_horizontal([iv.lo.is_not_null() & iv.hi.is_not_null() for iv in ivs])
    lo = pl.min_horizontal([iv.lo for iv in ivs])
    hi = pl.min_horizontal([iv.hi for iv in ivs])
    return _staged(Interval(pl.when(ok).then(lo), pl.when(ok).then(hi)))


def average_abs_difference_interval(pairs: Sequence[tuple[Rate, Rate]], ci: float) -> Interval:
    """Projection interval of ``mean_i |p_g,i − p_r,i|`` (``average_abs_odds_difference``).

    Šidák-level Newcombe intervals through ``|·|``, averaged limit by limit. Conservative by design.

    Examples
    --------
    >>> import polars as pl
    >>> r = lambda p, n: Rate(pl.lit(p), pl.lit(n))
    >>> lo, hi = average_abs_difference_interval([(r(0.2, 50.0), r(0.4, 50.0)), (r(0.7, 40.0), r(0.8, 60.0))], 0.95)
    >>> [round(v, 3) for v in pl.select(lo, hi.alias("hi")).row(0)]
    [0.0, 0.341]
    """
    z = z_value(ci, len(pairs))
    ivs = [abs_interval(newcombe_interval(g, r, z)) for g, r in pairs]
    ok = pl.all_horizontal([iv.lo.is_not_null() & iv.hi.is_not_null() for iv in ivs])
    m = float(len(ivs))
    lo = pl.sum_horizontal([iv.lo for iv in ivs]) / m
    hi = pl.sum_horizontal([iv.hi for iv in ivs]) / m
    return _staged(Interval(pl.when(ok).then(lo), pl.when(ok).then(hi)))


def difference_of_intervals(a: Interval, b: Interval) -> Interval:
    """Interval of ``A − B`` from intervals of ``A`` and ``B`` that hold jointly: ``[a.lo − b.hi, a.hi − b.lo]``.

    For ``differential_fairness_bias_amplification`` (EDF of predictions minus EDF of labels),
    give each EDF interval level ``1 − α/2`` (Bonferroni). A null (unbounded) limit gives null.

    Examples
    --------
    >>> import polars as pl
    >>> lo, hi = difference_of_intervals(Interval(pl.lit(1.0), pl.lit(2.0)), Interval(pl.lit(0.5), pl.lit(0.75)))
    >>> pl.select(lo, hi.alias("hi")).row(0)
    (0.25, 1.5)
    """
    return Interval(a.lo - b.hi, a.hi - b.lo)


# ----------------------------------------------------------------------------------------------
# references chosen from the data, spreads over groups, EDF (projections)


def best_reference_intervals(
    r: Rate, *, ci: float, higher_is_better: bool, over: Sequence[str] | str
) -> tuple[Interval, Interval]:
    r"""Window expressions: intervals of ``p_g − best`` and ``p_g / best`` for ``reference="best"``.

    The best group is chosen from the data (winner's curse), so it is not treated as fixed.
    With simultaneous Wilson limits ``(l_h, u_h)`` over the ``k`` groups of the window where the
    rate is defined (Šidák level ``ci**(1/k)``), and ``best = max_h p_h`` (``min`` when lower is
    better):

    .. math:: p_g - \max_h p_h \in [l_g - \max_h u_h,\ u_g - \max_h l_h],\quad
       p_g / \max_h p_h \in [l_g / \max_h u_h,\ u_g / \max_h l_h]

    Conservative by design (a projection).

    Parameters
    ----------
    r
        The group's :class:`Rate` (one row per group of the window).
    ci
        Confidence level.
    higher_is_better
        ``Metric.higher_is_better`` (``True``: best = max; ``False``: best = min).
    over
        Column(s) that define a family: (by value, attribute set, metric).

    Returns
    -------
    (Interval, Interval)
        Difference and ratio intervals; the ratio's upper limit is null when it is unbounded.
        Null where the group's rate is undefined. The caller nulls the best group's own row.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"m": ["tpr"] * 3, "p": [0.5, 0.6, 0.9], "n": [100.0, 100.0, 10.0]})
    >>> d, q = best_reference_intervals(Rate(pl.col("p"), pl.col("n")), ci=0.95, higher_is_better=True, over="m")
    >>> out = df.select(d.lo.alias("lo"), d.hi.alias("hi"))
    >>> [round(v, 3) for v in out.row(0)]
    [-0.603, 0.093]
    """
    over = [over] if isinstance(over, str) else list(over)
    ok = _ok(r)
    k = ok.sum().over(over)
    z = _z_expr(ci, k, scalar=False)
    lo, hi = wilson_interval(r, z)
    pick = (lambda e: e.max()) if higher_is_better else (lambda e: e.min())
    best_u = pick(pl.when(ok).then(hi)).over(over)
    best_l = pick(pl.when(ok).then(lo)).over(over)
    diff = Interval(lo - best_u, hi - best_l)
    ratio = Interval(pl.when(best_u > 0).then(lo / best_u), pl.when(best_l > 0).then(hi / best_l))
    return diff, ratio


def _defined(r: Rate) -> tuple[pl.Expr, pl.Expr, pl.Expr]:
    ok = _ok(r)
    return r.p.filter(ok).cast(pl.Float64), r.n.filter(ok).cast(pl.Float64), ok.sum()


def spread_intervals(r: Rate, ci: float, *, families: int = 1) -> SpreadInterval:
    r"""Aggregation expressions: intervals of ``max − min`` and ``min / max`` of a rate over the groups.

    Use in ``group_by(by, attribute set, metric).agg(...)`` over group rows. Only groups where the
    rate is defined (non-null, ``n > 0``) enter; ``k`` is their number. For ``k ≥ 3``: projection of
    simultaneous Wilson intervals (Šidák level ``ci**(1/(k·families))``, groups independent)

    .. math:: \max - \min \in [\max(0, \max_g l_g - \min_g u_g),\ \max_g u_g - \min_g l_g],\quad
       \min/\max \in [\min_g l_g / \max_g u_g,\ \min(1, \min_g u_g / \max_g l_g)]

    For ``k = 2`` the spread is ``|p_1 − p_2|``: the Newcombe interval (at level ``ci**(1/families)``)
    of the larger minus the smaller rate, through ``|·|``; the ratio is the MOVER-R interval of
    smaller / larger through ``x ↦ min(x, 1/x)``.

    Parameters
    ----------
    r
        :class:`Rate` expressions over the group rows.
    ci
        Confidence level.
    families
        Number of spreads that must hold jointly (2 for fairlearn's equalized odds: TPR and FPR).

    Returns
    -------
    SpreadInterval
        Four Float64 aggregation expressions; null for fewer than two defined groups, ratio
        limits null when the largest rate is 0 (ratio undefined) or the upper limit is unbounded.

    Notes
    -----
    The plug-in ``max − min`` is biased upward with many small groups, and bootstrap intervals of
    it do not cover (0% for 30 groups; fairlearn's ``difference_ci``). The projection covers
    99.7–100% at 95% (conservative by design); its lower limit is the useful statement ("the
    spread is at least ..."). For ``k = 2``: 94.0–94.6%.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"a": ["x"] * 3, "p": [0.2, 0.3, 0.5], "n": [100.0, 100.0, 100.0]})
    >>> s = spread_intervals(Rate(pl.col("p"), pl.col("n")), 0.95)
    >>> out = df.group_by("a").agg(s.difference_lo.alias("lo"), s.difference_hi.alias("hi"))
    >>> [round(v, 3) for v in out.select("lo", "hi").row(0)]
    [0.073, 0.494]
    """
    p, n, k = _defined(r)
    z = _z_expr(ci, k * families, scalar=True)
    lo, hi = wilson_interval(Rate(p, n), z)
    g_dlo = (lo.max() - hi.min()).clip(lower_bound=0.0)
    g_dhi = hi.max() - lo.min()
    g_rlo = pl.when(hi.max() > 0).then(lo.min() / hi.max())
    g_rhi = pl.when(lo.max() > 0).then(pl.min_horizontal(hi.min() / lo.max(), 1.0))
    # k = 2: the tight interval of |p1 − p2| and of min/max
    z2 = z_value(ci, families)
    big = Rate(p.max(), n.sort_by([p, n]).last())
    small = Rate(p.min(), n.sort_by([p, n]).first())
    d2 = abs_interval(newcombe_interval(big, small, z2))
    q_lo, q_hi = _mover_ratio_raw(small, big, z2)
    r2_lo = pl.when(q_hi >= 1.0).then(pl.min_horizontal(q_lo, 1.0 / q_hi)).otherwise(q_lo)
    r2_hi = pl.when(q_hi >= 1.0).then(1.0).otherwise(q_hi)
    defined_ratio = p.max() > 0

    def pick(two: pl.Expr, many: pl.Expr, extra: pl.Expr | None = None) -> pl.Expr:
        out = pl.when(k == 2).then(two).when(k > 2).then(many)
        return out if extra is None else pl.when(extra).then(out)

    return SpreadInterval(
        pick(d2.lo, g_dlo), pick(d2.hi, g_dhi), pick(r2_lo, g_rlo, defined_ratio), pick(r2_hi, g_rhi, defined_ratio)
    )


def equalized_odds_spread_intervals(tpr: Rate, fpr: Rate, ci: float) -> SpreadInterval:
    """Aggregation expressions: fairlearn's ``equalized_odds_difference`` / ``_ratio`` intervals on attribute rows.

    fairlearn's equalized odds difference is ``max(spread TPR, spread FPR)`` and the ratio
    ``min(ratio TPR, ratio FPR)``; each spread by :func:`spread_intervals` with ``families=2`` (2k
    simultaneous intervals), combined by ``max`` / ``min`` limit by limit. Null when either is null.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame(
    ...     {"a": ["x"] * 2, "tpr": [0.6, 0.8], "fpr": [0.1, 0.3], "np": [50.0, 50.0], "nn": [80.0, 80.0]}
    ... )
    >>> s = equalized_odds_spread_intervals(Rate(pl.col("tpr"), pl.col("np")), Rate(pl.col("fpr"), pl.col("nn")), 0.95)
    >>> out = df.group_by("a").agg(s.difference_lo.alias("lo"), s.difference_hi.alias("hi"))
    >>> [round(v, 3) for v in out.select("lo", "hi").row(0)]
    [0.059, 0.384]
    """
    t = spread_intervals(tpr, ci, families=2)
    f = spread_intervals(fpr, ci, families=2)
    d = _max_of([Interval(t.difference_lo, t.difference_hi), Interval(f.difference_lo, f.difference_hi)])
    q = _min_of([Interval(t.ratio_lo, t.ratio_hi), Interval(f.ratio_lo, f.ratio_hi)])
    # an unbounded ratio upper limit (null) of one part: the min is still bounded by the other
    q_hi = pl.when(t.ratio_lo.is_not_null() & f.ratio_lo.is_not_null()).then(pl.min_horizontal(t.ratio_hi, f.ratio_hi))
    return SpreadInterval(d.lo, d.hi, pl.when(q_hi.is_not_null()).then(q.lo), q_hi)


def _as_expr(e: str | pl.Expr) -> pl.Expr:
    return pl.col(e) if isinstance(e, str) else e


def spread_table(
    rows: pl.DataFrame | pl.LazyFrame,
    *,
    by: Sequence[str],
    p: str | pl.Expr,
    n: str | pl.Expr,
    ci: float,
    families: int = 1,
) -> pl.LazyFrame:
    """Spread intervals (max − min, min / max) of a rate over groups, for many families at once (fast path).

    The method of :func:`spread_intervals`, computed in three vectorised steps: the Šidák-level
    critical value of each family (one per distinct number of defined groups) and each group's
    Wilson limits as columns of ``rows``, then plain ``max``/``min`` aggregations per family, then the
    finishing arithmetic. Use this for the report (hundreds of families); the aggregation form costs
    a Python call per family.

    Parameters
    ----------
    rows
        One row per group (e.g. the report's group rows of one metric), with the family keys.
    by
        Columns that define a family, e.g. ``[*by, "attribute", "metric"]``.
    p, n
        Column names or expressions of the group's rate and (effective) size.
    ci
        Confidence level.
    families
        Number of spreads that must hold jointly (2 for fairlearn's equalized odds).

    Returns
    -------
    pl.LazyFrame
        Columns ``*by``, ``n_defined`` (UInt32: groups that entered), ``difference_lo``,
        ``difference_hi``, ``ratio_lo``, ``ratio_hi`` (Float64; null for fewer than two defined
        groups; ratio limits null when the largest rate is 0 or the upper limit is unbounded).

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"a": ["x"] * 3, "p": [0.2, 0.3, 0.5], "n": [100.0, 100.0, 100.0]})
    >>> out = spread_table(df, by=["a"], p="p", n="n", ci=0.95).collect()
    >>> [round(v, 3) for v in out.select("difference_lo", "difference_hi").row(0)]
    [0.073, 0.494]
    """
    by = list(by)
    pe, ne = _as_expr(p).cast(pl.Float64), _as_expr(n).cast(pl.Float64)
    lf = rows.lazy().select(*by, pe.alias("__pf_p"), ne.alias("__pf_n"))
    r = Rate(pl.col("__pf_p"), pl.col("__pf_n"))
    lf = lf.filter(_ok(r))
    lf = lf.with_columns(
        _z_expr(ci, pl.len().over(by) * families, scalar=False).alias("__pf_z") if by else _z_expr(
            ci, pl.len() * families, scalar=False
        ).alias("__pf_z")
    )
    for stage in _spread_inputs(r, wilson_interval(r, pl.col("__pf_z")), by):
        lf = lf.with_columns(stage)
    aggs = [pl.len().alias("n_defined"), *_spread_aggs()]
    agg = lf.group_by(by, maintain_order=True).agg(aggs) if by else lf.select(aggs)
    agg, limits = _spread_limits(agg, pl.col("n_defined"), z_value(ci, families))
    return agg.select(*by, "n_defined", *[e.alias(name) for name, e in limits.items()])


def _spread_inputs(r: Rate, wl: Interval, over: Sequence[str] | str) -> list[list[pl.Expr]]:
    """Row columns that :func:`_spread_aggs` aggregates, as successive ``with_columns`` stages: the
    group's rate, size and Wilson limits ``r``, ``wl`` (null where the group is not defined), and
    its size where its rate is the family's (``over``) largest or smallest.
    """
    p, n = pl.col("__pf_sp"), pl.col("__pf_sn")
    top, bottom = (p.max().over(over), p.min().over(over)) if over else (p.max(), p.min())
    return [
        [r.p.alias("__pf_sp"), r.n.alias("__pf_sn"), wl.lo.alias("__pf_slo"), wl.hi.alias("__pf_shi")],
        [pl.when(p == top).then(n).alias("__pf_snmax"), pl.when(p == bottom).then(n).alias("__pf_snmin")],
    ]


def _spread_aggs() -> list[pl.Expr]:
    """The aggregations :func:`_spread_limits` reads, over the :func:`_spread_inputs` columns (plain
    extremes: Polars' fast path).
    """
    c = pl.col
    return [
        c("__pf_slo").max().alias("__pf_maxl"), c("__pf_slo").min().alias("__pf_minl"),
        c("__pf_shi").max().alias("__pf_maxu"), c("__pf_shi").min().alias("__pf_minu"),
        c("__pf_sp").max().alias("__pf_pmax"), c("__pf_sp").min().alias("__pf_pmin"),
        # ties of p: the largest (smallest) size, so the choice does not depend on the row order
        c("__pf_snmax").max().alias("__pf_nmax"), c("__pf_snmin").min().alias("__pf_nmin"),
    ]  # fmt: skip


def _spread_limits(agg: pl.LazyFrame, k: pl.Expr, z2: IntoFloat) -> tuple[pl.LazyFrame, dict[str, pl.Expr]]:
    """The spread limits over the :func:`_spread_aggs` columns of ``agg`` (``k`` defined groups; two
    groups: Newcombe / MOVER-R at critical value ``z2``): ``agg`` with the staged two-group limits,
    and the expressions of ``difference_lo/hi``, ``ratio_lo/hi`` over it.
    """
    c = pl.col
    big, small = Rate(c("__pf_pmax"), c("__pf_nmax")), Rate(c("__pf_pmin"), c("__pf_nmin"))
    st = Stager("__pf_st")
    with st.active():  # the two-group limits as staged columns: small expression trees
        d2 = abs_interval(newcombe_interval(big, small, z2))
        q_lo, q_hi = _mover_ratio_raw(small, big, z2)
    agg = st.apply(agg)
    r2_lo = pl.when(q_hi >= 1.0).then(pl.min_horizontal(q_lo, 1.0 / q_hi)).otherwise(q_lo)
    r2_hi = pl.when(q_hi >= 1.0).then(1.0).otherwise(q_hi)
    g_dlo = (c("__pf_maxl") - c("__pf_minu")).clip(lower_bound=0.0)
    g_dhi = c("__pf_maxu") - c("__pf_minl")
    g_rlo = pl.when(c("__pf_maxu") > 0).then(c("__pf_minl") / c("__pf_maxu"))
    g_rhi = pl.when(c("__pf_maxl") > 0).then(pl.min_horizontal(c("__pf_minu") / c("__pf_maxl"), 1.0))
    defined_ratio = c("__pf_pmax") > 0

    def pick(two: pl.Expr, many: pl.Expr, extra: pl.Expr | None = None) -> pl.Expr:
        out = pl.when(k == 2).then(two).when(k > 2).then(many)
        return out if extra is None else pl.when(extra).then(out)

    return agg, {
        "difference_lo": pick(d2.lo, g_dlo), "difference_hi": pick(d2.hi, g_dhi),
        "ratio_lo": pick(r2_lo, g_rlo, defined_ratio), "ratio_hi": pick(r2_hi, g_rhi, defined_ratio),
    }  # fmt: skip


def equalized_odds_spread_table(
    rows: pl.DataFrame | pl.LazyFrame,
    *,
    by: Sequence[str],
    tpr: tuple[str | pl.Expr, str | pl.Expr],
    fpr: tuple[str | pl.Expr, str | pl.Expr],
    ci: float,
) -> pl.LazyFrame:
    """Intervals of fairlearn's ``equalized_odds_difference`` / ``_ratio`` for many families (fast path).

    :func:`spread_table` of TPR and of FPR with ``families=2``, combined limit by limit by ``max``
    (difference) and ``min`` (ratio), as :func:`equalized_odds_spread_intervals`.

    Parameters
    ----------
    rows
        One row per group with the family keys.
    by
        Family columns.
    tpr, fpr
        ``(rate, size)`` column names or expressions (size: positives, resp. negatives).
    ci
        Confidence level.

    Returns
    -------
    pl.LazyFrame
        Columns ``*by``, ``difference_lo``, ``difference_hi``, ``ratio_lo``, ``ratio_hi`` (Float64;
        null when either spread is null).

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"a": ["x"] * 2, "t": [0.6, 0.8], "f": [0.1, 0.3], "np": [50.0, 50.0], "nn": [80.0, 80.0]})
    >>> out = equalized_odds_spread_table(df, by=["a"], tpr=("t", "np"), fpr=("f", "nn"), ci=0.95).collect()
    >>> [round(v, 3) for v in out.select("difference_lo", "difference_hi").row(0)]
    [0.059, 0.384]
    """
    by = list(by)
    t = spread_table(rows, by=by, p=tpr[0], n=tpr[1], ci=ci, families=2)
    f = spread_table(rows, by=by, p=fpr[0], n=fpr[1], ci=ci, families=2)
    names = ("difference_lo", "difference_hi", "ratio_lo", "ratio_hi")
    both = t.join(f.select(*by, *[pl.col(c).alias(f"{c}__f") for c in names]), on=by, how="full", coalesce=True,
                  nulls_equal=True) if by else pl.concat([t, f.select([pl.col(c).alias(f"{c}__f") for c in names])],
                                                        how="horizontal")  # fmt: skip
    c = pl.col
    d = _max_of(
        [Interval(c("difference_lo"), c("difference_hi")), Interval(c("difference_lo__f"), c("difference_hi__f"))]
    )
    q = _min_of([Interval(c("ratio_lo"), c("ratio_hi")), Interval(c("ratio_lo__f"), c("ratio_hi__f"))])
    q_hi = pl.when(c("ratio_lo").is_not_null() & c("ratio_lo__f").is_not_null()).then(
        pl.min_horizontal(c("ratio_hi"), c("ratio_hi__f"))
    )
    return both.select(
        *by,
        d.lo.alias("difference_lo"),
        d.hi.alias("difference_hi"),
        pl.when(q_hi.is_not_null()).then(q.lo).alias("ratio_lo"),
        q_hi.alias("ratio_hi"),
    )


def edf_table(
    cells: pl.DataFrame | pl.LazyFrame,
    *,
    by: Sequence[str],
    positives: str | pl.Expr,
    total: str | pl.Expr,
    total_w2: str | pl.Expr | None,
    ci: float,
) -> pl.LazyFrame:
    """EDF projection intervals for many families at once (fast path of :func:`edf_interval`).

    Parameters
    ----------
    cells
        One row per cell (intersection) with the family keys.
    by
        Family columns (e.g. ``[*by, "attribute"]``; ``[*by]`` for the population EDF).
    positives, total, total_w2
        Each cell's (weighted) favorable count, total and Σw² (``None``: unweighted).
    ci
        Confidence level (``1 − (1 − ci)/2`` for each EDF of bias amplification).

    Returns
    -------
    pl.LazyFrame
        Columns ``*by``, ``value_lo`` (≥ 0), ``value_hi`` (null when unbounded) (Float64); null
        for fewer than two cells with rows.

    Examples
    --------
    >>> import polars as pl
    >>> cells = pl.DataFrame({"a": ["x", "x"], "pos": [30.0, 60.0], "tot": [100.0, 100.0]})
    >>> out = edf_table(cells, by=["a"], positives="pos", total="tot", total_w2=None, ci=0.95).collect()
    >>> [round(v, 3) for v in out.select("value_lo", "value_hi").row(0)]
    [0.175, 1.212]
    """
    by = list(by)
    pos, tot = _as_expr(positives).cast(pl.Float64), _as_expr(total).cast(pl.Float64)
    size = tot if total_w2 is None else effective_size(tot, _as_expr(total_w2))
    lf = cells.lazy().select(*by, pl.when(tot > 0).then(pos / tot).alias("__pf_p"), size.alias("__pf_n"))
    r = Rate(pl.col("__pf_p"), pl.col("__pf_n"))
    lf = lf.filter(_ok(r))
    k = pl.len().over(by) if by else pl.len()
    lf = lf.with_columns(_z_expr(ci, k, scalar=False).alias("__pf_z"))
    lo, hi = wilson_interval(r, pl.col("__pf_z"))
    lf = lf.with_columns(lo.alias("__pf_lo"), hi.alias("__pf_hi"))
    aggs = [pl.len().alias("__pf_k"), *_edf_aggs(Interval(pl.col("__pf_lo"), pl.col("__pf_hi")))]
    agg = lf.group_by(by, maintain_order=True).agg(aggs) if by else lf.select(aggs)
    value_lo, value_hi = _edf_limits(pl.col("__pf_k"))
    return agg.select(*by, value_lo.alias("value_lo"), value_hi.alias("value_hi"))


def _edf_aggs(wl: Interval) -> list[pl.Expr]:
    """The aggregations :func:`_edf_limits` reads: extremes of the log Wilson limits of the cells' rates and
    of their complements (``wl``: the cells' limits, over the cells with rows).
    """
    logs = {"__pf_ll": wl.lo.log(), "__pf_lu": wl.hi.log(), "__pf_l1u": (1.0 - wl.hi).log(),
            "__pf_l1l": (1.0 - wl.lo).log()}  # fmt: skip
    return [getattr(e, fn)().alias(f"{name}_{fn}") for name, e in logs.items() for fn in ("max", "min")]


def _edf_limits(k: pl.Expr) -> Interval:
    """EDF projection limits over the :func:`_edf_aggs` columns (``k`` cells with rows; null below two)."""
    c = pl.col
    low = pl.max_horizontal(
        pl.lit(0.0),
        (c("__pf_ll_max") - c("__pf_lu_min")).fill_nan(0.0),
        (c("__pf_l1u_max") - c("__pf_l1l_min")).fill_nan(0.0),
    )
    high = pl.max_horizontal(c("__pf_lu_max") - c("__pf_ll_min"), c("__pf_l1l_max") - c("__pf_l1u_min"))
    k2 = k >= 2
    return Interval(pl.when(k2).then(low), pl.when(k2 & high.is_finite()).then(high))


def edf_interval(positives: pl.Expr, total: pl.Expr, total_w2: pl.Expr | None, ci: float) -> Interval:
    r"""Aggregation expression: projection interval of the (unsmoothed) empirical differential fairness.

    Over the cells (rows) of one group: simultaneous Wilson limits ``(l_c, u_c)`` of every cell's
    favorable rate (Šidák over the ``k`` cells with rows; Kish size when ``total_w2`` is given),
    mapped to log rates:

    .. math:: \varepsilon \in [\max(0, \max\ln l - \min\ln u,\ \max\ln(1-u) - \min\ln(1-l)),\
       \max(\max\ln u - \min\ln l,\ \max\ln(1-l) - \min\ln(1-u))]

    Parameters
    ----------
    positives, total
        Each cell's (weighted) favorable count and total.
    total_w2
        Each cell's Σw² (``None``: unweighted counts, size = ``total``).
    ci
        Confidence level (use ``1 − (1 − ci)/2`` for each of the two EDFs of bias amplification).

    Returns
    -------
    Interval
        ``lo`` ≥ 0; ``hi`` null when unbounded (a cell with no, or only, favorable outcomes: small
        cells cannot bound EDF from above). Null for fewer than two cells.

    Notes
    -----
    Foulds, Islam, Keya & Pan (2020). The estimand is the population EDF; the smoothed estimate is
    far above it with small cells, and bootstrap intervals fail (0–98% coverage); the projection
    covers 99.2–100% at 95%.

    Examples
    --------
    >>> import polars as pl
    >>> cells = pl.DataFrame({"pos": [30.0, 60.0], "tot": [100.0, 100.0]})
    >>> lo, hi = edf_interval(pl.col("pos"), pl.col("tot"), None, 0.95)
    >>> [round(v, 3) for v in cells.select(lo, hi.alias("hi")).row(0)]
    [0.175, 1.212]
    """
    n = total.cast(pl.Float64) if total_w2 is None else effective_size(total, total_w2)
    r = Rate(pl.when(total > 0).then(positives / total), n)
    p, nn, k = _defined(r)
    lo, hi = wilson_interval(Rate(p, nn), _z_expr(ci, k, scalar=True))
    ll, lu, l1u, l1l = lo.log(), hi.log(), (1.0 - hi).log(), (1.0 - lo).log()
    low = pl.max_horizontal(pl.lit(0.0), (ll.max() - lu.min()).fill_nan(0.0), (l1u.max() - l1l.min()).fill_nan(0.0))
    high = pl.max_horizontal(lu.max() - ll.min(), l1l.max() - l1u.min())
    return Interval(pl.when(k >= 2).then(low), pl.when((k >= 2) & high.is_finite()).then(high))


# ----------------------------------------------------------------------------------------------
# tests


def _pooled_z(g: Rate, r: Rate) -> tuple[pl.Expr, pl.Expr, pl.Expr]:
    """Pooled two-proportion z (null variance -> z = 0), the total size, and validity."""
    n1, n2 = g.n.cast(pl.Float64), r.n.cast(pl.Float64)
    tot = n1 + n2
    pp = (g.p * n1 + r.p * n2) / tot
    var = pp * (1.0 - pp) * (1.0 / n1 + 1.0 / n2)
    z = pl.when(var > 0).then((g.p - r.p) / var.sqrt()).otherwise(0.0)
    return z, tot, _ok(g) & _ok(r)


def _fisher_batch(s: pl.Series) -> pl.Series:
    flag = s.struct.field("flag").fill_null(False).to_numpy()
    out = np.full(len(s), np.nan)
    if flag.any():
        cols = [s.struct.field(c).to_numpy()[flag] for c in ("x1", "n1", "x2", "n2")]
        out[flag] = fisher_exact_two_sided(*cols)
    return pl.Series(out, dtype=pl.Float64)


def two_proportion_test(g: Rate, r: Rate, *, weighted: bool = False) -> Test:
    """p-value of H0 ``p_g = p_r`` (independent groups) and the test's name, as expressions.

    Unweighted (Campbell 2007): the "N−1" χ² ``z²·(N−1)/N`` with the pooled z, 1 df,
    ``p = erfc(√(χ²/2))`` (test ``"chi2_n1"``), unless the smallest expected count of the 2×2
    table is < 1, then the two-sided Fisher exact test (``"fisher"``; numpy, on those rows only,
    through ``map_batches`` inside the plan). Weighted: the pooled z with Kish effective sizes,
    ``p = erfc(|z|/√2)`` (``"z_ess"``; Fisher does not apply).

    Parameters
    ----------
    g, r
        The two :class:`Rate` s; unweighted, ``n`` are the row counts (``x = round(p̂·n)``).
    weighted
        Whether the rates are weighted.

    Returns
    -------
    Test
        ``p_value`` (Float64 in [0, 1]; 1 when both rates are 0 or both 1; null when a rate or
        size is undefined) and ``test`` (String).

    Notes
    -----
    Type-I error at 5% (exact enumeration, 8 scenarios down to 8 vs 8 rows): 1.6–5.3%; the plain
    pooled z reaches 7.7% with tiny expected counts, Fisher alone is very conservative (0.7%).
    The pooled z equals statsmodels ``proportions_ztest``; Fisher equals scipy ``fisher_exact``.

    Examples
    --------
    >>> import polars as pl
    >>> t = two_proportion_test(Rate(pl.col("p1"), pl.col("n1")), Rate(pl.col("p2"), pl.col("n2")))
    >>> df = pl.DataFrame({"p1": [0.2, 0.0], "n1": [50.0, 10.0], "p2": [0.4, 0.02], "n2": [50.0, 100.0]})
    >>> out = df.select(t.p_value.round(6).alias("p"), t.test.alias("test"))
    >>> out.rows()
    [(0.029913, 'chi2_n1'), (1.0, 'fisher')]
    """
    z, tot, ok = _pooled_z(g, r)
    if weighted:
        p = (z.abs() / math.sqrt(2.0)).erfc()
        return _staged(Test(pl.when(ok).then(p.clip(0.0, 1.0)), pl.when(ok).then(pl.lit("z_ess", TEST_DTYPE))))
    stat = z * z * (tot - 1.0) / tot
    p = (stat / 2.0).sqrt().erfc().clip(0.0, 1.0)
    x1, x2 = (g.p * g.n).round(0), (r.p * r.n).round(0)
    succ = x1 + x2
    expected = pl.min_horizontal(g.n, r.n) * pl.min_horizontal(succ, tot - succ) / tot
    flag = ok & (expected < 1.0)
    fisher = pl.struct(
        x1.alias("x1"), g.n.round(0).alias("n1"), x2.alias("x2"), r.n.round(0).alias("n2"), flag.alias("flag")
    ).map_batches(_fisher_batch, return_dtype=pl.Float64)
    p_value = pl.when(ok).then(pl.when(flag).then(fisher).otherwise(p))
    test = pl.when(ok).then(pl.when(flag).then(pl.lit("fisher", TEST_DTYPE)).otherwise(pl.lit("chi2_n1", TEST_DTYPE)))
    return _staged(Test(p_value, test))


def chi2_2df_test(pairs: Sequence[tuple[Rate, Rate]]) -> Test:
    """p-value of H0 "every pair of rates is equal" for independent parts (odds-based disparities).

    ``x = Σ z_i²`` with the pooled z of each pair (effective sizes when weighted) is χ² with
    ``m`` df under H0; for the two parts of equalized odds / average odds (TPR on positives,
    FPR on negatives) ``p = exp(−x/2)`` (test ``"chi2_2df"``). Type-I 4.0–5.0% at 5% in simulation.

    Examples
    --------
    >>> import polars as pl
    >>> r = lambda p, n: Rate(pl.lit(p), pl.lit(n))
    >>> t = chi2_2df_test([(r(0.5, 100.0), r(0.5, 100.0)), (r(0.2, 100.0), r(0.2, 100.0))])
    >>> pl.select(t.p_value.alias("p"), t.test.alias("test")).row(0)
    (1.0, 'chi2_2df')
    """
    zs = [_pooled_z(g, r) for g, r in pairs]
    x = pl.sum_horizontal([z * z for z, _, _ in zs])
    ok = pl.all_horizontal([o for _, _, o in zs])
    if len(pairs) == 2:
        p = (-x / 2.0).exp()
    else:
        p = x.map_batches(lambda s: pl.Series(chi2_sf(s.to_numpy(), len(pairs))), return_dtype=pl.Float64)
    return _staged(Test(pl.when(ok).then(p), pl.when(ok).then(pl.lit("chi2_2df", TEST_DTYPE))))


def _generator(seed: int, key: Any) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([int(seed) & (2**63 - 1), stable_hash(key)])))


def _pearson(x: np.ndarray, n: np.ndarray) -> float:
    tot, succ = n.sum(), x.sum()
    pp = succ / tot
    if pp <= 0.0 or pp >= 1.0:
        return 0.0
    return float(np.sum((x - n * pp) ** 2 / n) / (pp * (1.0 - pp)))


def _homogeneity(
    parts: list[tuple[np.ndarray, np.ndarray]], weighted: bool, key: Any, seed: int, n_boot: int
) -> tuple[float | None, str]:
    stat, df, cochran_ok, used = 0.0, 0, True, []
    for x, n in parts:
        if len(n) < 2:
            return None, "chi2_homogeneity"
        stat += _pearson(x, n)
        df += len(n) - 1
        pp = x.sum() / n.sum()
        e = np.concatenate([n * pp, n * (1.0 - pp)])
        if e.min() < 1.0 or np.mean(e < 5.0) > 0.2:
            cochran_ok = False
        used.append((x, n))
    if cochran_ok or weighted:
        return float(chi2_sf(stat, df)), "chi2_homogeneity"
    # Monte Carlo exact test conditional on both margins: successes spread over groups by a
    # multivariate hypergeometric draw; p = (1 + #{X²* ≥ X²}) / (B + 1)
    rng = _generator(seed, key)
    sims = np.zeros(n_boot)
    for x, n in used:
        order = np.lexsort((x, n))  # canonical group order: the draws do not depend on row order
        x, n = x[order], n[order]
        ni = np.round(n).astype(np.int64)
        s = round(float(x.sum()))
        draws = rng.multivariate_hypergeometric(ni, s, size=n_boot).astype(np.float64)
        tot = ni.sum()
        pp = s / tot
        if 0.0 < pp < 1.0:
            sims += ((draws - ni * pp) ** 2 / ni).sum(axis=1) / (pp * (1.0 - pp))
    hits = int(np.sum(sims >= stat * (1.0 - 1e-12)))
    return (1.0 + hits) / (n_boot + 1.0), "mc_exact"


def homogeneity_test(
    parts: Sequence[Rate], key: pl.Expr, *, weighted: bool = False, seed: int = 0, n_boot: int = 200
) -> pl.Expr:
    """Aggregation expression: χ² homogeneity test of a rate across the groups of an attribute set.

    Use in ``group_by(by, attribute set, metric).agg(...)`` over group rows. Pearson's χ² of the
    k × 2 table of the defined groups, ``k − 1`` df (one part); for several parts (fairlearn's
    equalized odds: TPR and FPR) the statistics add, ``Σ(k_i − 1)`` df. p-value from the closed
    integer-df series (:func:`chi2_sf`; test ``"chi2_homogeneity"``). When Cochran's rule fails (an
    expected count < 1 or more than 20% of them < 5) and the rows are unweighted, a Monte Carlo
    exact test conditional on both margins (``n_boot`` multivariate hypergeometric tables,
    ``p = (1 + #{X²* ≥ X²}) / (n_boot + 1)``; test ``"mc_exact"``) from a stream seeded by
    ``[seed, stable_hash(key)]``. Weighted: effective counts ``(p̂·n_eff, n_eff)``, χ² only.

    Parameters
    ----------
    parts
        :class:`Rate` (s) over the group rows.
    key
        String expression naming the tested family (e.g. the by values, attribute set and metric
        joined); its first value seeds the Monte Carlo stream, so a row's p-value does not depend
        on which other rows exist.
    weighted, seed, n_boot
        As in the report.

    Returns
    -------
    pl.Expr
        A struct ``{p_value: Float64, test: String}`` per group (unnest it); null p-value for
        fewer than two defined groups.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"a": ["x"] * 3, "p": [0.2, 0.3, 0.5], "n": [100.0, 100.0, 100.0]})
    >>> t = homogeneity_test([Rate(pl.col("p"), pl.col("n"))], pl.col("a"))
    >>> out = df.group_by("a").agg(t.alias("t")).unnest("t")
    >>> round(out["p_value"].item(), 8), out["test"].item()
    (2.754e-05, 'chi2_homogeneity')
    """
    exprs: list[pl.Expr] = [key.cast(pl.String)]
    for r in parts:
        exprs += [r.p.cast(pl.Float64), r.n.cast(pl.Float64)]

    def run(series: Sequence[pl.Series]) -> dict[str, Any]:
        k = series[0].drop_nulls()
        kv = k[0] if len(k) else None
        arrays = []
        for i in range(len(parts)):
            p, n = series[1 + 2 * i].to_numpy(), series[2 + 2 * i].to_numpy()
            good = np.isfinite(p) & np.isfinite(n) & (n > 0)
            p, n = p[good].astype(np.float64), n[good].astype(np.float64)
            x = p * n if weighted else np.round(p * n)
            if not weighted:
                n = np.round(n)
            arrays.append((x, n))
        pv, name = _homogeneity(arrays, weighted, kv, seed, n_boot)
        return {"p_value": pv, "test": name if pv is not None else None}

    dtype = pl.Struct({"p_value": pl.Float64, "test": pl.String})
    return pl.map_groups(exprs, lambda s: pl.Series([run(s)], dtype=dtype), return_dtype=dtype, returns_scalar=True)


class _HomogeneitySums(NamedTuple):
    """Per-segment statistics of :func:`_homogeneity_segments` (arrays of one value per segment)."""

    stat: np.ndarray  # Pearson's χ² (0 where the pooled rate is 0 or 1)
    df: np.ndarray  # defined groups − 1 (Int64)
    few: np.ndarray  # fewer than two defined groups (bool)
    bad: np.ndarray  # Cochran's rule failed (bool)
    x: np.ndarray  # per row: the group's count (0 where not defined)
    n: np.ndarray  # per row: the group's size (0 where not defined)
    good: np.ndarray  # per row: the group is defined
    seg: np.ndarray  # per row: its segment


def _homogeneity_segments(p: np.ndarray, n: np.ndarray, seg: np.ndarray, segments: int, weighted: bool) -> _HomogeneitySums:
    """Pearson's χ² homogeneity statistic of many families at once, over rows tagged by segment.

    ``p``, ``n``: each group row's rate and (effective) size (Float64, NaN for null); ``seg``: its
    segment (Int64 in ``[0, segments)``; a segment is one family part, e.g. one rate of one
    attribute set and ``by`` value). A row enters where ``p`` and ``n`` are finite and ``n > 0``;
    unweighted counts are rounded (``x = round(p·n)``, ``n = round(n)``), weighted ones are the
    effective counts ``(p·n, n)``. Per segment: ``χ² = Σ (x − n·p̄)² / n / (p̄(1 − p̄))`` with
    ``p̄ = Σx / Σn`` (0 where ``p̄`` is 0 or 1), ``df = k − 1``, ``few = k < 2``, and Cochran's rule
    failed (an expected count below 1, or more than 20% below 5). Every sum adds the rows in order
    (``np.bincount``), so the result does not depend on threads: the report and
    :func:`homogeneity_table` give bit-identical statistics. Vectorised: O(rows), no per-segment work.
    """
    good = np.isfinite(p) & np.isfinite(n) & (n > 0)
    with np.errstate(invalid="ignore"):
        x = np.where(good, p * n if weighted else np.round(p * n), 0.0)
        nn = np.where(good, n if weighted else np.round(n), 0.0)
    k = np.bincount(seg, weights=good, minlength=segments)
    tot_x = np.bincount(seg, weights=x, minlength=segments)
    tot_n = np.bincount(seg, weights=nn, minlength=segments)
    with np.errstate(invalid="ignore", divide="ignore"):
        pp = tot_x / tot_n
        pr = pp[seg]
        e1, e2 = nn * pr, nn * (1.0 - pr)
        dev = np.where(good, (x - e1) ** 2 / nn, 0.0)
        inner = (pp > 0.0) & (pp < 1.0)
        stat = np.where(inner, np.bincount(seg, weights=dev, minlength=segments) / (pp * (1.0 - pp)), 0.0)
    below1 = np.bincount(seg, weights=good & ((e1 < 1.0) | (e2 < 1.0)), minlength=segments)
    below5 = np.bincount(seg, weights=np.where(good, (e1 < 5.0).astype(np.float64) + (e2 < 5.0), 0.0),
                         minlength=segments)  # fmt: skip
    with np.errstate(invalid="ignore", divide="ignore"):
        bad = (k == 0) | (below1 > 0) | (below5 / (2.0 * k) > 0.2)
    return _HomogeneitySums(stat, k.astype(np.int64) - 1, k < 2, bad, x, nn, good, seg)


def _segment_parts(sums: _HomogeneitySums) -> Callable[[int], tuple[np.ndarray, np.ndarray]]:
    """The defined groups' (counts, sizes) of segment ``i`` (for the rare Monte Carlo tests)."""
    order = np.argsort(sums.seg, kind="stable")
    bounds = np.searchsorted(sums.seg[order], np.arange(len(sums.stat) + 1))  # every segment, rows or not

    def of(i: int) -> tuple[np.ndarray, np.ndarray]:
        rows = order[bounds[i] : bounds[i + 1]]
        rows = rows[sums.good[rows]]
        return sums.x[rows], sums.n[rows]

    return of


def _homogeneity_results(
    stat: np.ndarray,
    df: np.ndarray,
    few: np.ndarray,
    bad: np.ndarray,
    parts: Callable[[int], list[tuple[np.ndarray, np.ndarray]]],
    keys: Sequence[str | None],
    *,
    weighted: bool,
    seed: int,
    n_boot: int,
) -> tuple[np.ndarray, list[str | None]]:
    """p-values (NaN where untested) and test names of families: the :func:`_homogeneity_segments`
    values ``stat``, ``df`` (summed over each family's parts), ``few``, ``bad`` (any part), one per family.
    The χ² tail for all at once; the Monte Carlo exact test (unweighted, Cochran's rule failed)
    on ``parts(i)`` (family ``i``'s counts and sizes per part), seeded by ``keys[i]``.
    """
    stat = stat.astype(np.float64)
    mc = bad & ~few & (not weighted)
    pv = np.full(len(stat), np.nan)
    chi_rows = ~few & ~mc
    if chi_rows.any():
        pv[chi_rows] = chi2_sf(stat[chi_rows], df[chi_rows])
    tests: list[str | None] = [
        None if f else ("mc_exact" if m else "chi2_homogeneity") for f, m in zip(few.tolist(), mc.tolist())
    ]
    for i in np.flatnonzero(mc).tolist():  # rare: the exact test, as homogeneity_test runs it
        pv[i], tests[i] = _homogeneity(parts(i), weighted, keys[i], seed, n_boot)
    return pv, tests


def homogeneity_table(
    rows: pl.DataFrame | pl.LazyFrame,
    *,
    by: Sequence[str],
    families: Mapping[str, Sequence[tuple[str | pl.Expr, str | pl.Expr]]],
    key: pl.Expr,
    weighted: bool = False,
    seed: int = 0,
    n_boot: int = 200,
) -> pl.DataFrame:
    """:func:`homogeneity_test` for many families at once, vectorised: one row per ``by`` value.

    The same test, p-values and Monte Carlo streams as :func:`homogeneity_test` (the family named
    ``name`` is seeded by the first value of ``key`` followed by ``name``), but Pearson's χ²,
    its degrees of freedom and Cochran's rule are plain aggregations of ``rows`` for every family
    in one ``group_by``; only the (few) unweighted families where Cochran's rule fails run the
    Monte Carlo exact test in Python. This is what the report uses: with ``by=`` a day column
    one Python call per (day, attribute set, metric) would dominate the report's cost.

    Parameters
    ----------
    rows
        Group rows (one per group), with the rate and size columns named in ``families``.
    by
        Columns whose values each hold one test per family (e.g. by values and attribute set).
    families
        ``name -> [(p, n), ...]``: the parts (rate, effective size) tested together; column
        names or expressions.
    key
        String expression naming the tested unit (seeds the Monte Carlo stream with ``name``).
    weighted, seed, n_boot
        As in :func:`homogeneity_test`.

    Returns
    -------
    polars.DataFrame
        ``by`` columns, then ``<name>__tp`` (Float64 p-value in [0, 1]; null with fewer than two
        defined groups) and ``<name>__tt`` (String: ``"chi2_homogeneity"`` or ``"mc_exact"``) for
        each family.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"a": ["x"] * 3, "p": [0.2, 0.3, 0.5], "n": [100.0, 100.0, 100.0]})
    >>> out = homogeneity_table(df, by=["a"], families={"m": [("p", "n")]}, key=pl.col("a"))
    >>> round(out["m__tp"].item(), 8), out["m__tt"].item()
    (2.754e-05, 'chi2_homogeneity')
    """
    by = list(by)
    fam, part = "__pf_fam", "__pf_part"
    if not families:
        return rows.lazy().select(by).unique(maintain_order=True).collect()
    # long form: one block of rows per (family, part), so every statistic is written once
    blocks = [
        rows.lazy().select(*by, pl.lit(name).alias(fam), pl.lit(j, pl.Int32).alias(part),
                           (pl.lit(None, pl.String) if j else key.cast(pl.String)).alias("__pf_hkey"),
                           _as_expr(p_).cast(pl.Float64).alias("__pf_p"), _as_expr(n_).cast(pl.Float64).alias("__pf_n"))
        for name, parts in families.items() for j, (p_, n_) in enumerate(parts)
    ]  # fmt: skip
    long = (
        pl.concat(blocks, how="vertical_relaxed")
        .with_row_index("__pf_seg")
        .with_columns(pl.col("__pf_seg").first().over([*by, fam, part]))
        .collect()
    )
    # segments (by, family, part) in order of first appearance; families (by, family) likewise
    first_rows, seg = np.unique(long["__pf_seg"].to_numpy(), return_inverse=True)
    sums = _homogeneity_segments(long["__pf_p"].fill_null(np.nan).to_numpy(), long["__pf_n"].fill_null(np.nan).to_numpy(),
                                seg.astype(np.int64), len(first_rows), weighted)  # fmt: skip
    per_part = long[first_rows].select(*by, fam, part).with_columns(
        pl.Series("__pf_i", np.arange(len(first_rows))), pl.Series("__pf_stat", sums.stat), pl.Series("__pf_df", sums.df),
        pl.Series("__pf_few", sums.few), pl.Series("__pf_bad", sums.bad),
    )  # fmt: skip
    hkey = long.group_by([*by, fam], maintain_order=True).agg(pl.col("__pf_hkey").drop_nulls().first())
    res = per_part.group_by([*by, fam], maintain_order=True).agg(
        pl.col("__pf_stat").sum(), pl.col("__pf_df").sum(), pl.col("__pf_few").any(), pl.col("__pf_bad").any(),
        pl.col("__pf_i"),
    ).join(hkey, on=[*by, fam], how="left", nulls_equal=True, maintain_order="left")  # fmt: skip
    keys = [None if kv is None else f"{kv}{name}" for kv, name in zip(res["__pf_hkey"].to_list(), res[fam].to_list())]
    segment = _segment_parts(sums)
    members = res["__pf_i"]

    def parts(i: int) -> list[tuple[np.ndarray, np.ndarray]]:
        return [segment(j) for j in members[i].to_list()]

    pv, tests = _homogeneity_results(
        res["__pf_stat"].to_numpy(), res["__pf_df"].to_numpy(), res["__pf_few"].to_numpy(), res["__pf_bad"].to_numpy(),
        parts, keys, weighted=weighted, seed=seed, n_boot=n_boot,
    )  # fmt: skip
    res = res.select(*by, fam).with_columns(
        pl.Series("__pf_tp", pv, dtype=pl.Float64, nan_to_null=True), pl.Series("__pf_tt", tests, dtype=pl.String)
    )
    ones = [
        res.filter(pl.col(fam) == name).select(*by, pl.col("__pf_tp").alias(f"{name}__tp"), pl.col("__pf_tt").alias(f"{name}__tt"))
        for name in families
    ]  # fmt: skip
    if not by:
        return pl.concat(ones, how="horizontal")
    out = res.select(by).unique(maintain_order=True)
    for one in ones:
        out = out.join(one, on=by, how="left", nulls_equal=True, maintain_order="left")
    return out


def p_adjust(p: pl.Expr, method: Literal["bh", "by", "holm"] = "bh") -> pl.Expr:
    """Expression: multiplicity-adjusted p-values within a family; apply ``.over(family)``.

    ``"bh"``: Benjamini–Hochberg step-up (FDR), ``p_(i)·m/i`` with a reverse cumulative minimum;
    ``"by"``: Benjamini–Yekutieli (any dependence), BH times ``Σ_{j≤m} 1/j``; ``"holm"``: Holm's
    step-down (FWER), ``(m − i + 1)·p_(i)`` with a cumulative maximum. Clipped at 1; null p-values
    are skipped (``m`` counts the non-null ones) and stay null.

    Returns
    -------
    pl.Expr
        Float64. Equal to statsmodels ``multipletests`` (``fdr_bh``, ``fdr_by``, ``holm``).

    Notes
    -----
    Benjamini & Hochberg (1995); Benjamini & Yekutieli (2001); Holm (1979). In the report the
    family is (by value, metric): 29 groups vs a reference under the global null flag at least
    one group in 75.5% of audits at raw p < 0.05, in 5.4% with BH.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"f": ["a"] * 4, "p": [0.01, 0.04, 0.03, None]})
    >>> df.select(p_adjust(pl.col("p")).over("f").round(4)).to_series().to_list()
    [0.03, 0.04, 0.04, None]
    """
    check_p_adjust(method)
    p = p.cast(pl.Float64)
    m = p.count().cast(pl.Float64)
    idx = pl.int_range(1, pl.len() + 1, dtype=pl.Int64).cast(pl.Float64)
    s = p.sort(nulls_last=True)
    if method == "holm":
        adj = ((m - idx + 1.0) * s).cum_max()
    else:
        adj = (s * m / idx).reverse().cum_min().reverse()
        if method == "by":
            adj = adj * (1.0 / pl.int_range(1, m.cast(pl.Int64) + 1, dtype=pl.Int64).cast(pl.Float64)).sum()
    adj = adj.clip(upper_bound=1.0)
    return adj.gather((p.rank("ordinal") - 1).cast(pl.UInt32))


# ----------------------------------------------------------------------------------------------
# resampling: entropy-index bootstrap, delete-a-group jackknife


_REP = "__pf_rep"
_CONFUSION_N = ("tp_n", "fp_n", "tn_n", "fn_n")


def bias_corrected_normal_interval(
    estimate: float, replicates: Any, ci: float, *, lower: float | None = 0.0
) -> tuple[float | None, float | None]:
    """Bias-corrected normal bootstrap interval ``θ̂ − (mean θ* − θ̂) ± z·sd(θ*)`` (clipped at ``lower``).

    Undefined replicates (NaN) are skipped; more than ``α/2`` of them gives ``(None, None)``.

    Examples
    --------
    >>> [round(v, 4) for v in bias_corrected_normal_interval(1.0, [1.1, 1.3, 1.2], 0.95)]
    [0.604, 0.996]
    """
    from polfair.core._bootstrap import bias_corrected_normal_intervals

    if estimate is None:
        return None, None
    reps = np.asarray(replicates, dtype=np.float64).reshape(1, -1)
    lo, hi, ok = bias_corrected_normal_intervals([estimate], reps, ci, z_value, lower=lower)
    return (float(lo[0]), float(hi[0])) if ok[0] else (None, None)


def entropy_bootstrap(
    cells: pl.DataFrame | pl.LazyFrame,
    *,
    protected: Sequence[str],
    by: Sequence[str] = (),
    sets: Sequence[Sequence[str]] | None = None,
    alpha: float = 2.0,
    ci: float = 0.95,
    n_boot: int = 200,
    seed: int = 0,
) -> pl.DataFrame:
    """Bias-corrected normal stratified cell-bootstrap intervals of the entropy indices.

    Per ``by`` value, each cell keeps its size and redraws its four confusion counts:
    ``(TP, FP, TN, FN)* ~ Multinomial(n_c; observed shares)`` (exactly a row bootstrap stratified
    by cell; the indices use unweighted counts, as aif360). The draws of all ``by`` values fill one
    replicate × cell array (``polfair.core._bootstrap``: FN binomial, FP given FN as two binomial
    pieces, TP + TN the rest, which is all the indices read); the replicate indices use the
    deviation form ``Σ cnt·((b/μ)^α − 1)`` of the :mod:`polfair.core.entropy` formulas, whose
    estimates the report keeps. The interval is ``θ̂ − (mean θ* − θ̂) ± z·sd(θ*)`` clipped at 0
    (:func:`bias_corrected_normal_interval`, vectorised over all rows).

    Parameters
    ----------
    cells
        A cell table (``bucket`` is summed away if present).
    protected
        Its protected-attribute columns.
    by
        Its ``by`` columns.
    sets
        Attribute sets (lists of protected names) for the between-group rows; default every
        non-empty subset.
    alpha
        α of the generalized entropy index.
    ci, n_boot, seed
        Level, replicates, seed.

    Returns
    -------
    pl.DataFrame
        Columns ``*by``, ``attribute`` (String; names joined by ``" & "``, null on population
        rows), ``metric`` (String: ``between_group_*`` on attribute rows; ``generalized_entropy_index``,
        ``theil_index``, ``coefficient_of_variation`` and ``between_all_groups_*`` on population
        rows), ``value`` (the estimate), ``value_lo``, ``value_hi`` (Float64, ≥ 0; null when more
        than α/2 of the replicates are undefined).

    Notes
    -----
    Deterministic: the generator of each ``by`` value is
    ``Generator(PCG64(SeedSequence([seed, stable_hash(by values)])))`` and draws in the cell
    table's sorted key order from its exact integer counts, so the intervals do not depend on row
    order, batch split or merge order, and adding a ``by`` value leaves the others unchanged.
    Coverage of GE(2) at 95%: 96.9–99.9% (the percentile bootstrap: 0–24%). Cost: O(cells ·
    n_boot), independent of the number of rows.

    Examples
    --------
    >>> import polars as pl
    >>> cells = pl.DataFrame({"g": ["a", "b"], "tp_n": [30, 10], "fp_n": [10, 20], "tn_n": [50, 60], "fn_n": [10, 10]},
    ...                      schema_overrides={c: pl.UInt64 for c in ("tp_n", "fp_n", "tn_n", "fn_n")})
    >>> out = entropy_bootstrap(cells, protected=["g"], n_boot=50)
    >>> out.filter(pl.col("metric") == "theil_index").select("value_lo", "value_hi").row(0)[0] > 0
    True
    """
    from polfair.core import _bootstrap

    ci = check_ci(ci, required=True)
    n_boot = check_n_boot(n_boot)
    return _bootstrap.entropy_bootstrap(
        cells, protected=protected, by=by, sets=sets, alpha=alpha, ci=ci, n_boot=n_boot, seed=seed,
        quantile=z_value, generator=_generator,
    )  # fmt: skip


def entropy_delta(
    cells: pl.DataFrame | pl.LazyFrame,
    *,
    protected: Sequence[str],
    by: Sequence[str] = (),
    sets: Sequence[Sequence[str]] | None = None,
    alpha: float = 2.0,
    ci: float = 0.95,
) -> pl.DataFrame:
    """Intervals on the entropy indices from the analytic moments of the cell bootstrap (the report's).

    The bias-corrected normal interval of :func:`entropy_bootstrap`,
    ``θ̂ − (E*θ* − θ̂) ± z·sd*(θ*)`` clipped at 0, with the bootstrap mean and SD replaced by their
    second-order delta-method values under the same law (each cell keeps its size and redraws
    its benefits as a multinomial sample): ``bias ≈ ½ Σ_g H_gg v_g`` and
    ``sd² ≈ Σ_g g_g² v_g + ½ Σ_gh H_gh² v_g v_h``, with ``v_g`` the exact variance of group ``g``'s
    mean benefit, ``g`` and ``H`` the index's gradient and Hessian in the group means (diagonal
    plus rank two for a between-group index: O(groups)). The second-order term keeps the SD
    positive when all groups have the same mean, where the first-order delta method gives 0. CV's
    limits are √(2·l), √(2·u) of GE(2)'s. No random numbers; O(cells), independent of the rows
    and of ``n_boot``. Formulas: :mod:`polfair.core._entropy_ci`.

    Parameters
    ----------
    cells
        A cell table (unweighted counts ``tp_n, fp_n, tn_n, fn_n``; ``bucket`` and other
        columns are summed away).
    protected
        Its protected-attribute columns.
    by
        Its ``by`` columns (one set of intervals per combination).
    sets
        Attribute sets (lists of protected names) for the between-group rows; default every
        non-empty subset.
    alpha
        α of the generalized entropy index (float; aif360's GE(0) and GE(1) forms at 0 and 1).
    ci
        Level, in (0, 1).

    Returns
    -------
    pl.DataFrame
        Columns ``*by``, ``attribute`` (String; names joined by ``" & "``, null on population
        rows), ``metric`` (String: ``between_group_*`` on attribute rows;
        ``generalized_entropy_index``, ``theil_index``, ``coefficient_of_variation`` and
        ``between_all_groups_*`` on population rows), ``value`` (the estimate, as the report),
        ``value_lo``, ``value_hi`` (Float64, ≥ 0), ``ci_method`` (String ``"delta_bc"``). Limits
        are null where the estimate is (no rows, a mean benefit of 0, GE(α ≤ 0) with a benefit
        of 0).

    Raises
    ------
    PolfairError
        ``ci`` not a level in (0, 1) (or None); a ``ValueError``.

    Notes
    -----
    Measured against the cell bootstrap with 4,000 replicates (``tests/core/test_entropy_ci.py``):
    limits within 6% of the interval's width; coverage of GE(2) in ``bench/coverage.py``. At the
    report's shapes it replaces an O(cells × n_boot) computation (e.g. 100,000 cells × 200
    replicates: ~4 s) by O(cells) (~0.02 s). Source: the bootstrap it approximates
    (``docs/statistics.md``); the delta method to second order (e.g. Lehmann & Casella, *Theory
    of Point Estimation*, §1.8).

    Examples
    --------
    >>> import polars as pl
    >>> cells = pl.DataFrame({"g": ["a", "b"], "tp_n": [30, 10], "fp_n": [10, 20], "tn_n": [50, 60], "fn_n": [10, 10]})
    >>> out = entropy_delta(cells, protected=["g"])
    >>> [round(v, 4) for v in out.filter(pl.col("metric") == "theil_index").select("value_lo", "value_hi").row(0)]
    [0.1023, 0.1964]
    """
    from polfair.core import _entropy_ci

    level = check_ci(ci, required=True)
    return _entropy_ci.entropy_intervals(
        cells, protected=protected, by=by, sets=sets, alpha=alpha, ci=level, limits=_entropy_ci.delta_limits,
        method="delta_bc",
    )  # fmt: skip


def ge_replicates(benefits: pl.DataFrame, alphas: dict[str, float], by: Sequence[str]) -> pl.DataFrame:
    """Generalized entropy indices of many benefit vectors at once, from plain per-group sums.

    The formula of :func:`polfair.core.entropy.generalized_entropy_indices` (aif360's, including its
    GE(1) and GE(0) forms) rewritten with ``S0 = Σcnt``, ``μ = Σ cnt·b / S0`` and one more sum per
    index: ``GE(α) = (Σ cnt·b^α / μ^α − S0) / (S0·α(α−1))``, ``GE(1) = (Σ cnt·b·ln b − μ S0 ln μ) / (μ S0)``
    (``b ln b = 0`` at ``b = 0``), ``GE(0) = (S0 ln μ − Σ cnt·ln b) / (μ S0)``. Plain sums take Polars'
    fast group-by path, which matters for thousands of bootstrap replicates; equal to
    ``generalized_entropy_indices`` to about 1e-15 relative (tested).

    Parameters
    ----------
    benefits
        Columns ``*by, b, cnt`` (rows with ``cnt = 0`` are skipped).
    alphas
        Output column name -> α.
    by
        Group columns (one benefit vector per combination).

    Returns
    -------
    pl.DataFrame
        Columns ``*by`` and one Float64 column per entry of ``alphas`` (NaN/inf as the formula gives).

    Examples
    --------
    >>> import polars as pl
    >>> b = pl.DataFrame({"k": [0, 0, 0], "b": [0.0, 1.0, 2.0], "cnt": [2.0, 6.0, 2.0]})
    >>> ge_replicates(b, {"ge2": 2.0}, ["k"])["ge2"].round(12).item()
    0.2
    """
    b, cnt = pl.col("b").cast(pl.Float64), pl.col("cnt").cast(pl.Float64)
    aggs = [cnt.sum().alias("__pf_s0"), (b * cnt).sum().alias("__pf_s1")]
    finish = []
    s0, mu = pl.col("__pf_s0"), pl.col("__pf_s1") / pl.col("__pf_s0")
    for i, (name, a) in enumerate(alphas.items()):
        part = f"__pf_sa{i}"
        a = float(a)
        if a == 1.0:
            aggs.append((cnt * pl.when(b > 0).then(b * b.log()).otherwise(0.0)).sum().alias(part))
            finish.append(((pl.col(part) - mu * s0 * mu.log()) / (mu * s0)).alias(name))
        elif a == 0.0:
            aggs.append((cnt * b.log()).sum().alias(part))
            finish.append(((s0 * mu.log() - pl.col(part)) / (mu * s0)).alias(name))
        else:
            aggs.append((cnt * b.pow(a)).sum().alias(part))
            finish.append(((pl.col(part) / mu.pow(a) - s0) / (s0 * a * (a - 1.0))).alias(name))
    out = benefits.filter(cnt > 0).group_by(list(by), maintain_order=True).agg(aggs)
    return out.select(*by, *finish)


def jackknife_intervals(
    cells: pl.DataFrame | pl.LazyFrame,
    statistic: Callable[[pl.DataFrame, list[str]], pl.DataFrame],
    *,
    by: Sequence[str] = (),
    bucket: str = "bucket",
    ci: float = 0.95,
    sums: Sequence[str] | None = None,
) -> pl.DataFrame:
    r"""Delete-a-group jackknife intervals over the ``bucket`` key of a clustered cell table.

    For each ``by`` value with ``G`` non-empty buckets, the statistic is recomputed on the table
    minus bucket ``b`` (``θ_(b)``, all replicates in one call, stacked as an extra key), and

    .. math:: v_J = \frac{G-1}{G} \sum_b (\theta_{(b)} - \bar\theta)^2,\quad
       \hat\theta \pm t_{G-1,\,1-\alpha/2} \sqrt{v_J}

    Parameters
    ----------
    cells
        A cell table with a ``bucket`` key column (from ``cluster=``).
    statistic
        ``f(table, keys) -> DataFrame``: computes the quantity (column ``value``) for every
        combination of ``keys`` in ``table`` (a cell table without ``bucket``; ``keys`` = the
        ``by`` columns plus a replicate key). Its other output columns identify rows (e.g.
        ``attribute``, ``group``, ``metric``). An optional ``null_value`` column gives the value
        under H0 for a Wald-t p-value.
    by
        The ``by`` columns.
    bucket
        Name of the bucket column.
    ci
        Confidence level.
    sums
        The additive columns (default: the cell table's count columns, ``*_w2`` included); every
        other column except ``bucket`` is a key.

    Returns
    -------
    pl.DataFrame
        The statistic's columns (estimate from the full table) plus ``value_lo``, ``value_hi``,
        ``se`` (Float64), ``n_buckets`` (Int64), and ``p_value`` (Float64; ``2·P(T_{G−1} > |θ̂ − θ0|/se)``
        when ``null_value`` is given, else null). Null limits with fewer than 2 non-empty buckets
        or an undefined replicate.

    Notes
    -----
    Kott (2001), *Journal of Official Statistics* 17(4). For smooth statistics (rates, differences,
    log ratios, AOD, entropy indices); inconsistent for max/min (Shao & Tu 1995). Coverage at 95%
    with 2 groups × 100 clusters × 10 rows: 94.9–95.6% for between-cluster SD 0–1 on the logit
    scale (Newcombe and the cell bootstrap: 78–90%).

    Examples
    --------
    >>> import polars as pl
    >>> cells = pl.DataFrame({"bucket": [0, 1, 2, 3], "x": [3.0, 5.0, 4.0, 6.0], "n": [10.0, 10.0, 10.0, 10.0]})
    >>> def share(t, keys):
    ...     return t.group_by(keys).agg(value=pl.col("x").sum() / pl.col("n").sum())
    >>> out = jackknife_intervals(cells, share, sums=["x", "n"])
    >>> round(out["value"].item(), 3), out["n_buckets"].item()
    (0.45, 4)
    """
    from polfair.core.counts import COUNT_COLUMNS

    ci = check_ci(ci, required=True)
    by = list(by)
    df = cells.lazy().collect()
    if bucket not in df.columns:
        msg = f"jackknife_intervals: the cell table has no {bucket!r} column (count with cluster= to get one)"
        raise PolfairError(msg)
    if sums is None:
        sums = [c for c in df.columns if c in COUNT_COLUMNS or c.endswith("_w2")]
    sums = list(sums)
    keys = [c for c in df.columns if c not in sums and c != bucket and c not in by]
    group = [*by, *keys]
    full = (
        df.group_by(group, maintain_order=True).agg([pl.col(c).sum() for c in sums])
        if group
        else df.select([pl.col(c).sum() for c in sums])
    )
    per_bucket = df.group_by([*by, bucket, *keys], maintain_order=True).agg([pl.col(c).sum() for c in sums])
    nonempty = per_bucket.group_by([*by, bucket]).agg(pl.lit(1).alias("__pf_one")).select(*by, bucket)
    g_count = (
        nonempty.group_by(by).agg(pl.len().alias("n_buckets")) if by else pl.DataFrame({"n_buckets": [nonempty.height]})
    )
    # replicate b = full minus bucket b (for the by value it belongs to); replicate -1 = full
    rep_keys = nonempty.rename({bucket: _REP}).with_columns(pl.col(_REP).cast(pl.Int32))
    base = full.join(rep_keys, on=by, how="inner") if by else full.join(rep_keys, how="cross")
    minus = per_bucket.rename({bucket: _REP}).with_columns(pl.col(_REP).cast(pl.Int32))
    base = base.join(minus, on=[*by, _REP, *keys], how="left", nulls_equal=True, suffix="__pf_b")
    base = base.with_columns([(pl.col(c) - pl.col(f"{c}__pf_b").fill_null(0)).alias(c) for c in sums]).select(
        *by, _REP, *keys, *sums
    )
    table = pl.concat([full.with_columns(pl.lit(-1, pl.Int32).alias(_REP)).select(*by, _REP, *keys, *sums), base])
    values = statistic(table, [*by, _REP])
    ids = [c for c in values.columns if c not in (*by, _REP, "value", "null_value")]
    est = values.filter(pl.col(_REP) == -1).drop(_REP)
    reps = values.filter(pl.col(_REP) >= 0)
    agg = reps.group_by([*by, *ids], maintain_order=True).agg(
        pl.col("value").cast(pl.Float64).alias("__pf_vals"),
    )
    if by or ids:
        out = est.join(agg, on=[*by, *ids], how="left", nulls_equal=True)
    else:
        out = pl.concat([est, agg], how="horizontal")
    out = (
        out.join(g_count, on=by, how="left", nulls_equal=True)
        if by
        else out.with_columns(pl.lit(g_count["n_buckets"][0], pl.UInt32).alias("n_buckets"))
    )
    lows: list[float | None] = []
    highs: list[float | None] = []
    ses: list[float | None] = []
    pvals: list[float | None] = []
    has_null = "null_value" in out.columns
    for row in out.iter_rows(named=True):
        vals = [v for v in (row["__pf_vals"] or []) if v is not None and math.isfinite(v)]
        g = int(row["n_buckets"] or 0)
        theta = row["value"]
        if theta is None or g < 2 or len(vals) != g or not math.isfinite(theta):
            for acc in (lows, highs, ses, pvals):
                acc.append(None)
            continue
        arr = np.asarray(vals)
        se = math.sqrt((g - 1) / g * float(np.sum((arr - arr.mean()) ** 2)))
        t = t_quantile(1.0 - (1.0 - ci) / 2.0, g - 1)
        lows.append(theta - t * se)
        highs.append(theta + t * se)
        ses.append(se)
        h0 = row.get("null_value") if has_null else None
        if h0 is None:
            pvals.append(None)
        elif se == 0.0:
            pvals.append(1.0 if theta == h0 else 0.0)
        else:
            pvals.append(min(1.0, 2.0 * t_sf(abs(theta - h0) / se, g - 1)))
    return out.drop("__pf_vals").with_columns(
        pl.Series("value_lo", lows, dtype=pl.Float64),
        pl.Series("value_hi", highs, dtype=pl.Float64),
        pl.Series("se", ses, dtype=pl.Float64),
        pl.col("n_buckets").cast(pl.Int64),
        pl.Series("p_value", pvals, dtype=pl.Float64),
    )
