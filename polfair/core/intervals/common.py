"""Shared pieces of the interval methods: column names and dtypes, the expression types
(:class:`Interval`, :class:`Rate`, :class:`Test`), the :class:`Stager`, option checks and
normal critical values.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Literal, NamedTuple, overload

import numpy as np
import polars as pl
from scipy import special

from polfair.core.hashing import stable_hash
from polfair.exceptions import PolfairError

__all__ = [
    "z_expr",
    "seeded_generator",
    "staged",
    "CI_METHODS",
    "CI_METHOD_DTYPE",
    "INTERVAL_COLUMNS",
    "INTERVAL_DTYPES",
    "Interval",
    "Rate",
    "Distinct",
    "Segments",
    "SpreadInterval",
    "Stager",
    "TESTS",
    "TEST_DTYPE",
    "Test",
    "check_ci",
    "check_n_boot",
    "check_p_adjust",
    "distinct_rows",
    "sidak_level",
    "numpy_expr",
    "z_value",
    "z_values",
]

INTERVAL_COLUMNS = (
    "value_lo", "value_hi", "difference_lo", "difference_hi", "ratio_lo", "ratio_hi",
    "p_value", "p_value_adjusted", "n_eff", "ci_method", "test",
)  # fmt: skip
#: Their dtypes.
INTERVAL_DTYPES: dict[str, pl.DataType] = {
    c: (pl.String() if c in ("ci_method", "test") else pl.Float64()) for c in INTERVAL_COLUMNS
}
#: Values of the report's ``ci_method`` column.
CI_METHODS = ("score", "score_ess", "mover", "projection", "bootstrap_bc", "jackknife_t", "bound", "delta_bc", "scaled_chi2")
#: Values of the report's ``test`` column.
#: (``mc_exact``, the former Monte Carlo homogeneity test, is no longer produced; kept for stored reports.)
TESTS = ("chi2_n1", "fisher", "z_ess", "chi2_2df", "chi2_homogeneity", "mc_exact", "jackknife_t", "chi2_moments")
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
    >>> from polfair.core.intervals import newcombe_interval
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


def staged(x: Any) -> Any:
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
        The quantile (``scipy.special.ndtri``).

    Examples
    --------
    >>> round(z_value(0.95), 6)
    1.959964
    >>> round(z_value(0.95, 2), 4)
    2.2365
    """
    return float(z_values(check_ci(ci, required=True), np.array([k]))[0])


def z_values(ci: Any, k: Any) -> np.ndarray:
    """:func:`z_value` for many ``k`` (and levels ``ci``, broadcast) at once (numpy): the Šidák critical
    value of each; NaN where ``k < 1``.

    Examples
    --------
    >>> [round(v, 4) for v in z_values(0.95, [1, 2, 0]).tolist()]
    [1.96, 2.2365, nan]
    """
    k = np.asarray(k, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        alpha = -np.expm1(np.log(ci) / k)
        return np.where(k >= 1, special.ndtri(1.0 - alpha / 2.0), np.nan)


def numpy_expr(fn: Callable[..., Sequence[np.ndarray]], inputs: Sequence[Any], names: Sequence[str]) -> tuple[pl.Expr, ...]:
    """Expressions of the outputs of a numpy kernel over expression inputs (the Polars form of a method).

    ``fn(*arrays)`` receives each input as a Float64 array (null -> NaN; floats are broadcast) and
    returns one Float64 array per name (NaN -> null). One ``map_batches`` over a struct of the
    inputs: elementwise in a select, per group in ``group_by().agg``.

    Examples
    --------
    >>> import polars as pl
    >>> lo, hi = numpy_expr(lambda a, b: (a - b, a + b), [pl.col("x"), 1.0], ("lo", "hi"))
    >>> pl.DataFrame({"x": [1.0, None]}).select(lo, hi).rows()
    [(0.0, 2.0), (None, None)]
    """
    fields = [(e if isinstance(e, pl.Expr) else pl.lit(e)).cast(pl.Float64).alias(f"a{i}") for i, e in enumerate(inputs)]
    dtype = pl.Struct({name: pl.Float64 for name in names})

    def run(s: pl.Series) -> pl.Series:
        args = [s.struct.field(f"a{i}").fill_null(np.nan).to_numpy() for i in range(len(inputs))]
        outs = fn(*args)
        return pl.struct([pl.Series(name, np.asarray(o, dtype=np.float64), nan_to_null=True)
                          for name, o in zip(names, outs)], eager=True)  # fmt: skip

    e = pl.struct(fields).map_batches(run, return_dtype=dtype)
    return tuple(e.struct.field(name) for name in names)


def z_expr(ci: float, k: pl.Expr, *, scalar: bool) -> pl.Expr:
    """Expression: :func:`z_value` at the Šidák level ``ci**(1/k)`` for an integer expression ``k``.

    One Python call per batch or group; ``scalar`` inside ``group_by().agg``.
    """

    def f(s: pl.Series) -> pl.Series:
        ks = s.drop_nulls().unique().to_list()  # one quantile per distinct k, not per row
        table = {int(v): z_value(ci, int(v)) for v in ks if v}
        return s.cast(pl.Int64).replace_strict(list(table), list(table.values()), default=None, return_dtype=pl.Float64)

    return k.map_batches(f, return_dtype=pl.Float64, returns_scalar=scalar)


class Segments:
    """Rows tagged by a segment code in ``[0, count)`` (a family: the groups of one attribute row, ...):
    per-segment sums, counts and reductions over all segments at once (numpy; rows sorted by segment
    once when they are not already), never a loop over segments.

    Examples
    --------
    >>> s = Segments(np.array([1, 0, 1, 1]), 3)
    >>> s.reduce(np.fmax, np.array([5.0, 2.0, np.nan, 7.0])).tolist(), s.total(np.ones(4)).tolist()
    ([2.0, 7.0, nan], [1.0, 3.0, 0.0])
    """

    def __init__(self, codes: Any, count: int) -> None:
        self.codes = np.asarray(codes, dtype=np.int64)
        self.count = int(count)
        self.order = np.argsort(self.codes, kind="stable") if np.any(self.codes[1:] < self.codes[:-1]) else None
        self.sizes = np.bincount(self.codes, minlength=self.count)
        self.present = self.sizes > 0
        self.starts = (np.cumsum(self.sizes) - self.sizes)[self.present]

    def at(self, rows: np.ndarray) -> Segments:
        """The segments of some of the rows (same numbering)."""
        return Segments(self.codes[rows], self.count)

    def total(self, x: Any) -> np.ndarray:
        """Per-segment sum of ``x`` (rows added in row order)."""
        return np.bincount(self.codes, weights=np.asarray(x, dtype=np.float64), minlength=self.count)

    def reduce(self, ufunc: np.ufunc, x: Any) -> np.ndarray:
        """Per-segment ``ufunc.reduce`` of ``x`` (e.g. ``np.fmax``: NaN ignored); NaN for an empty segment."""
        x = np.asarray(x, dtype=np.float64)
        if self.order is not None:
            x = x[self.order]
        out = np.full(self.count, np.nan)
        if len(self.starts):
            out[self.present] = ufunc.reduceat(x, self.starts)
        return out


class Distinct(NamedTuple):
    """Rows grouped into classes of bitwise-equal values (:func:`distinct_rows`)."""

    #: Each class's first row, ascending (classes are numbered by first appearance).
    first: np.ndarray
    #: Each row's class.
    inverse: np.ndarray
    #: Each class's number of rows.
    counts: np.ndarray


#: :func:`distinct_rows` groups the rows only when there are at most this fraction as many classes as rows.
_DISTINCT_GAIN = 0.25
#: Fewer rows than this: :func:`distinct_rows` does not group them (the grouping costs more than it saves).
_DISTINCT_MIN_ROWS = 256
_MIX = np.uint64(0x9E3779B97F4A7C15)
#: Above ``4 ×`` this many rows, :func:`distinct_rows` first hashes about this many (evenly spaced): nearly
#: all distinct, it gives up (no classes) without hashing the rest.
_DISTINCT_SAMPLE = 2048


def distinct_rows(columns: Sequence[np.ndarray], *, gain: float = _DISTINCT_GAIN) -> Distinct | None:
    """The classes of rows whose values are the same bits in every column, or ``None`` when they
    are not worth it (fewer than :data:`_DISTINCT_MIN_ROWS` rows, or more than ``gain`` classes per row).

    ``columns``: 1-D arrays of one length (contiguous ones are read fastest), or 2-D ``(rows, k)``
    arrays (each of their columns): floats, integers or booleans. Rows are equal when every value
    has the same bits (a NaN equals a NaN of the same bits; ``0.0`` and ``-0.0`` differ), so an
    elementwise kernel gives every row of a class the bits it gives the first: the de-duplication
    of the small tables of many groups (compute on ``first``, gather back with ``inverse``). Exact:
    the rows are hashed, then every row is compared with its class's first row (``None`` on any
    collision).

    Examples
    --------
    >>> d = distinct_rows([np.tile([0.5, 0.25, 0.5, np.nan], 100)])
    >>> d.first.tolist(), d.inverse[:5].tolist(), d.counts.tolist()
    ([0, 1, 3], [0, 1, 0, 2, 0], [200, 100, 100])
    """
    words = [w for c in columns for w in _words(c)]
    h = words[0].size if words else 0
    if h < _DISTINCT_MIN_ROWS:
        return None
    words = [w for w in words if not (w == w[0]).all()]  # a column of one value splits no class
    if h >= 4 * _DISTINCT_SAMPLE:  # rows that barely repeat (e.g. weighted groups of many rows): a sample says so
        step = h // _DISTINCT_SAMPLE
        if np.unique(_hash([w[::step] for w in words], -(-h // step))).size > 0.9 * -(-h // step):
            return None
    key = _hash(words, h)
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    if first.size > gain * h:
        return None
    inverse = inverse.reshape(-1)
    rank = np.empty(first.size, dtype=np.int64)
    order = np.argsort(first)
    rank[order] = np.arange(first.size)
    first, inverse = first[order], rank[inverse]
    rep = first[inverse]
    if any(not np.array_equal(w, w[rep]) for w in words):  # a hash collision: no classes
        return None
    return Distinct(first, inverse, np.bincount(inverse, minlength=first.size))


def _hash(words: Sequence[np.ndarray], h: int) -> np.ndarray:
    """A 64-bit hash of each of the ``h`` rows of the word columns (equal rows, equal hashes)."""
    key = np.zeros(h, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for w in words:
            key ^= w
            key *= _MIX
            key ^= key >> np.uint64(29)
    return key


def _words(a: np.ndarray) -> list[np.ndarray]:
    """The columns of a 1-D or 2-D array as unsigned 8-byte words (their bits; booleans and
    narrower integers by value, narrower floats as Float64).
    """
    a = np.asarray(a)
    if a.dtype.kind == "f" and a.dtype.itemsize != 8:
        a = a.astype(np.float64)
    if a.dtype == np.bool_ or a.dtype.itemsize != 8:
        a = a.astype(np.uint64)
    a = a.view(np.uint64) if a.flags.c_contiguous or a.ndim == 1 and a.strides[0] == 8 else a.copy().view(np.uint64)
    return [a] if a.ndim == 1 else [a[:, j] for j in range(a.shape[1])]


def seeded_generator(seed: int, key: Any) -> np.random.Generator:
    """The random stream of one unit (a ``by`` value, a tested family): ``PCG64(SeedSequence([seed, stable_hash(key)]))``.

    Examples
    --------
    >>> float(seeded_generator(0, "a").random()) == float(seeded_generator(0, "a").random())
    True
    """
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([int(seed) & (2**63 - 1), stable_hash(key)])))
