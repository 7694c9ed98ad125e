"""The verdict on a report row, decided once: its ``status`` and its direction of harm.

Every output of polfair (the report's ``status`` column, :func:`polfair.monitor.alerts`, the
``--fail-on-violation`` exit code, the terminal summary's marks, the HTML page's verdicts) reads
the status this module decides; none judges on its own.

**The status rule** (:func:`status_expr`; :func:`status` for one row). A row judged against an
inclusive band ``[band_lo, band_hi]`` is

* ``insufficient_data`` when its group, or its reference group, has fewer than ``min_sample_size``
  input rows, or its value is undefined (null or NaN): it is never called fair or unfair;
* ``ok`` when its value lies inside the band;
* ``violation`` when its value lies outside the band and, if the row has a confidence interval,
  the whole interval lies outside the band on the same side (the data exclude every value the
  band accepts); without an interval (``ci=None``, or a row that has none), the value outside
  the band is enough (IBM Watson OpenScale's point rule);
* ``inconclusive`` when its value lies outside the band but its interval reaches into it (or lies
  on the other side): the data cannot tell.

The interval is the report's ``[value_lo, value_hi]`` at the report's level (``ci=0.95``); the
rule reads no p-value. A row without a band has no status (null).

**Direction of harm** (:func:`with_harm`). polfair's favorable outcome is the
positive class, so a group is disadvantaged by a *lower* rate of favorable decisions
(``selection_rate``, ``true_positive_rate``, ``false_positive_rate`` = P(ŷ favorable | y
unfavorable), ``negative_predictive_value``, ``false_discovery_rate``, ``accuracy``, and the base
rate of favorable labels) and by a *higher* rate of unfavorable ones or of errors
(``false_negative_rate``, ``true_negative_rate``, ``positive_predictive_value``,
``false_omission_rate``, ``error_rate``): :attr:`polfair.core.metrics.Metric.harm` and
:attr:`polfair.core.metrics.Disparity.harm`. The report's ``harm`` column says, on every group row
of a metric with a direction, which side of the comparison is disadvantaged: ``"group"``,
``"reference"``, or ``"none"`` (no difference); null elsewhere (counts, unsigned disparities such
as ``equalized_odds_difference``, attribute and population rows, undefined values).

**One-sided bands** (:func:`sided_band`): ``band="harm"`` judges only the disadvantaged side, as
the US EEOC reads the four-fifths rule (a selection-rate ratio below 0.8 is adverse impact; one
above 1.25 is not): ``[0.8, 1.25]`` becomes ``[0.8, inf]`` for ``disparate_impact`` and
``[-inf, 1.25]`` for ``false_negative_rate_ratio``. The default ``band="both"`` judges both sides
(OpenScale's and Aequitas' symmetric band).
"""

from __future__ import annotations

import functools
import math
from typing import Any, Literal

import numpy as np
import polars as pl

from polfair.core.metrics import DISPARITIES, METRICS, Harm

__all__ = [
    "FOUR_FIFTHS",
    "THRESHOLD_PRESETS",
    "BAND_SIDES",
    "HARM_ROUNDING",
    "HARM_VALUES",
    "STATUS_VALUES",
    "check_sides",
    "harm_directions",
    "is_ratio_metric",
    "sided_band",
    "status",
    "status_expr",
    "with_harm",
]

#: The four-fifths band (US EEOC Uniform Guidelines, 29 CFR 1607.4(D)), symmetric on the log scale.
FOUR_FIFTHS = (0.8, 1.25)

#: Named threshold policies (``thresholds="four_fifths"``, ``--thresholds four_fifths``, a config's
#: ``thresholds = "four_fifths"``): name -> (band, metrics of a report with predictions, of a labels-only one).
#: Defined with the verdict (light: the CLI's ``--help`` lists the names).
THRESHOLD_PRESETS: dict[str, tuple[tuple[float, float], tuple[str, ...], tuple[str, ...]]] = {
    "four_fifths": (FOUR_FIFTHS, ("disparate_impact", "false_positive_rate_ratio", "false_negative_rate_ratio"),
                    ("disparate_impact",)),
}  # fmt: skip

#: Values of the ``status`` column, worst first (null where no band applies).
STATUS_VALUES = ("violation", "inconclusive", "insufficient_data", "ok")
#: Values of the ``harm`` column (null where the metric has no direction).
HARM_VALUES = ("group", "reference", "none")
#: Values of the ``band=`` option: judge both sides of the band, or only the disadvantaged side.
BAND_SIDES = ("both", "harm")

BandSides = Literal["both", "harm"]


def is_ratio_metric(metric: str) -> bool:
    """Whether a named comparison is a ratio (no difference = 1), not a difference (no difference = 0).

    Examples
    --------
    >>> is_ratio_metric("disparate_impact"), is_ratio_metric("statistical_parity_difference")
    (True, False)
    """
    return metric == "disparate_impact" or metric.endswith("_ratio")


def harm_directions() -> dict[str, Harm]:
    """Metric name -> the side that disadvantages the group (``"lower"`` / ``"higher"``).

    From :data:`polfair.core.metrics.METRICS` (rates; on group rows the comparison is their
    ``difference``) and :data:`polfair.core.metrics.DISPARITIES` (named comparisons; their
    ``value``). Counts and unsigned disparities have no entry.

    Examples
    --------
    >>> d = harm_directions()
    >>> d["disparate_impact"], d["false_negative_rate_ratio"], "equalized_odds_difference" in d
    ('lower', 'higher', False)
    """
    out: dict[str, Harm] = {m.name: m.harm for m in METRICS.values() if m.harm is not None}
    out.update({d.name: d.harm for d in DISPARITIES.values() if d.harm is not None})
    return out


def _known(e: pl.Expr) -> pl.Expr:
    return e.is_not_null() & ~e.cast(pl.Float64).is_nan()


def status_expr(
    value: pl.Expr,
    lo: pl.Expr | None,
    hi: pl.Expr | None,
    band_lo: pl.Expr,
    band_hi: pl.Expr,
    *,
    n: pl.Expr | None = None,
    n_ref: pl.Expr | None = None,
    min_sample_size: int | None = None,
) -> pl.Expr:
    """THE status rule, as one Polars expression (see the module docstring).

    Parameters
    ----------
    value
        Float expression: the judged value.
    lo, hi
        Float expressions of its confidence interval, or ``None`` (no intervals): the point rule.
        A row whose ``lo`` or ``hi`` is null or NaN is judged by the point rule.
    band_lo, band_hi
        Float expressions of the inclusive band (``-inf`` / ``inf`` for one-sided bands); a null
        band gives a null status.
    n, n_ref
        Int expressions: input rows of the group and of its reference group (null: not checked).
    min_sample_size
        Optional positive int: below it (``n`` or ``n_ref``), ``insufficient_data``.

    Returns
    -------
    pl.Expr
        String: ``"ok"``, ``"violation"``, ``"inconclusive"``, ``"insufficient_data"`` or null.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"v": [1.0, 0.6, 0.6, 0.6, None], "lo": [0.9, 0.5, 0.7, None, None],
    ...                    "hi": [1.1, 0.7, 0.9, None, None]})
    >>> e = status_expr(pl.col("v"), pl.col("lo"), pl.col("hi"), pl.lit(0.8), pl.lit(1.25))
    >>> df.select(e.alias("status"))["status"].to_list()
    ['ok', 'violation', 'inconclusive', 'violation', 'insufficient_data']
    """
    value = value.cast(pl.Float64)
    small = pl.lit(False)
    if min_sample_size is not None:
        for size in (n, n_ref):
            if size is not None:
                small = small | (size < min_sample_size).fill_null(False)
    below, above = value < band_lo, value > band_hi
    if lo is None or hi is None:
        beyond: pl.Expr = pl.lit(True)
    else:
        lo, hi = lo.cast(pl.Float64), hi.cast(pl.Float64)
        has_interval = _known(lo) & _known(hi)
        beyond = ~has_interval | (below & (hi < band_lo)) | (above & (lo > band_hi))
    return (
        pl.when(band_lo.is_null() | band_hi.is_null()).then(pl.lit(None, pl.String))
        .when(small | ~_known(value)).then(pl.lit("insufficient_data"))
        .when(~below & ~above).then(pl.lit("ok"))
        .when(beyond).then(pl.lit("violation"))
        .otherwise(pl.lit("inconclusive"))
    )  # fmt: skip


def status(
    value: float | None,
    lo: float | None = None,
    hi: float | None = None,
    band: tuple[float, float] = (-math.inf, math.inf),
    *,
    n: int | None = None,
    n_ref: int | None = None,
    min_sample_size: int | None = None,
) -> str:
    """The status of one row: :func:`status_expr` evaluated on it (the same rule, not a copy).

    Parameters
    ----------
    value
        The judged value (``None`` or NaN: undefined).
    lo, hi
        Its confidence interval, or ``None`` (the point rule).
    band
        Inclusive ``(lo, hi)``; ``inf`` for one-sided bands.
    n, n_ref, min_sample_size
        Rows of the group and of its reference, and the minimum (see :func:`status_expr`).

    Returns
    -------
    str
        ``"ok"``, ``"violation"``, ``"inconclusive"`` or ``"insufficient_data"``.

    Examples
    --------
    >>> status(1.33, 1.14, 1.52, (0.8, 1.25))  # outside, interval reaching into the band
    'inconclusive'
    >>> status(0.62, 0.49, 0.76, (0.8, 1.25)), status(0.9, 0.5, 1.3, (0.8, 1.25))
    ('violation', 'ok')
    >>> status(0.5, band=(0.8, 1.25), n=12, min_sample_size=30)
    'insufficient_data'
    """
    row = pl.DataFrame(
        {"v": [value], "lo": [lo], "hi": [hi], "blo": [float(band[0])], "bhi": [float(band[1])],
         "n": [n], "nr": [n_ref]},
        schema={"v": pl.Float64, "lo": pl.Float64, "hi": pl.Float64, "blo": pl.Float64, "bhi": pl.Float64,
                "n": pl.Int64, "nr": pl.Int64},
    )  # fmt: skip
    e = status_expr(pl.col("v"), pl.col("lo"), pl.col("hi"), pl.col("blo"), pl.col("bhi"), n=pl.col("n"),
                    n_ref=pl.col("nr"), min_sample_size=min_sample_size)  # fmt: skip
    return str(row.select(e).item())


@functools.lru_cache(maxsize=1)
def _split() -> dict[str, list[str]]:
    """Directed metrics by how their comparison is read: rates (``difference``), ratios, differences."""
    out: dict[str, list[str]] = {"lower": [], "higher": [], "rate": [], "ratio": [], "difference": []}
    for name, d in harm_directions().items():
        out[d].append(name)
        out["rate" if name in METRICS else "ratio" if is_ratio_metric(name) else "difference"].append(name)
    return out


#: A signed distance from "no difference" within this is zero for ``harm`` (rates, differences and
#: ratios of rates are of order 1: their rounding is about 1e-16; the report's rows must not flip
#: with the order in which weighted sums were added).
HARM_ROUNDING = 1e-12


def with_harm(report: pl.DataFrame) -> pl.DataFrame:
    """The report with its ``harm`` column (String), replacing any: which side of a comparison is disadvantaged.

    On a group row of a metric with a direction (:func:`harm_directions`), the signed distance
    from "no difference" (``value - 1`` for ratios, ``value`` for named differences, the
    ``difference`` column for rates), times the direction (lower: -1, higher: +1), is positive
    when the group is on the disadvantaged side: ``"group"``; negative: ``"reference"``; zero
    (within :data:`HARM_ROUNDING`, the rounding of rates from weighted sums added in another order):
    ``"none"``; null elsewhere (counts, unsigned disparities, attribute and population rows,
    undefined values). The metric's direction is looked up by its Categorical's physical code,
    not by a string test per row (a report of 480,000 rows: about 0.08 s, 5% of the report), and
    the report's chunks are kept.

    Parameters
    ----------
    report
        A long report (columns ``metric``, ``group``, ``value``, ``difference``).

    Returns
    -------
    pl.DataFrame
        The same rows in the same order; ``harm`` after the existing columns (or in its place).

    Examples
    --------
    >>> import polars as pl
    >>> rep = pl.DataFrame({"group": ["a", "a", "a", "a"], "value": [1.3, 1.3, 0.3, 0.2],
    ...                     "metric": ["disparate_impact", "false_negative_rate_ratio", "selection_rate",
    ...                                "equalized_odds_difference"], "difference": [None, None, 0.0, None]})
    >>> with_harm(rep)["harm"].to_list()
    ['reference', 'group', 'none', None]
    """
    k = _split()
    directed = [*k["lower"], *k["higher"]]
    kind_of = {m: 3 if m in k["rate"] else 1 if m in k["ratio"] else 2 for m in directed}
    dtype = report.schema["metric"]
    if isinstance(dtype, (pl.Categorical, pl.Enum)):
        # look the metric's physical code up in two small arrays (no string test per row)
        codes = pl.Series(directed, dtype=pl.String).cast(dtype, strict=False).to_physical().to_list()
        phys = pl.col("metric").to_physical()
        top: Any = report.get_column("metric").to_physical().max()  # a Series method: no plan
        top = 0 if top is None else top
        size = max([c for c in codes if c is not None] + [int(top)]) + 1
        kinds, signs = [0] * size, [0] * size
        for m, c in zip(directed, codes):
            if c is not None:
                kinds[c], signs[c] = kind_of[m], -1 if m in k["lower"] else 1
        kind = pl.lit(pl.Series(kinds, dtype=pl.Int8)).gather(phys)
        sign = pl.lit(pl.Series(signs, dtype=pl.Int8)).gather(phys)
    else:  # a String metric column (a report read back from CSV)
        metric = pl.col("metric").cast(pl.String)
        kind = metric.replace_strict(kind_of, default=0, return_dtype=pl.Int8)
        sign = metric.replace_strict({m: -1 if m in k["lower"] else 1 for m in directed}, default=0,
                                     return_dtype=pl.Int8)  # fmt: skip
    small = isinstance(dtype, (pl.Categorical, pl.Enum)) and report.height <= _NUMPY_HARM_ROWS
    value = pl.col("value").cast(pl.Float64)
    k_, s_, x_ = pl.col("__pf_kind"), pl.col("__pf_sign"), pl.col("__pf_signed")
    signed = (
        pl.when(k_ == 1).then(value - 1.0).when(k_ == 2).then(value)
        .when(k_ == 3).then(pl.col("difference").cast(pl.Float64))
    ) * s_  # fmt: skip
    # staged, each expression evaluated once, and a code gathered into the three labels (no string
    # built per row): 0.95 -> 0.15 s on a report of 6.3 M rows
    code = pl.when(pl.col("group").is_null() | ~_known(x_)).then(None).otherwise(
        (x_ > HARM_ROUNDING).cast(pl.UInt32) + 2 * (x_ < -HARM_ROUNDING).cast(pl.UInt32))  # fmt: skip
    if small:
        column = _harm_small(report, kinds, signs)
    else:
        codes_ = (report.lazy().select("group", "value", "difference", kind.alias("__pf_kind"), sign.alias("__pf_sign"))
                  .select("group", signed.alias("__pf_signed")).select(code.alias("harm")).collect().to_series())  # fmt: skip
        column = pl.Series("harm", ["none", "group", "reference"]).gather(codes_).rechunk()
    # the long layout is zero-copy chunks of the report's parts: keep harm in the same chunks
    lengths = [c.len() for c in report.get_column("metric").get_chunks()] if report.width else []
    if len(lengths) > 1:
        starts = [sum(lengths[:i]) for i in range(len(lengths))]
        column = pl.concat([column.slice(a, n) for a, n in zip(starts, lengths)], rechunk=False)
    return report.with_columns(column)


#: Up to this many rows, :func:`with_harm` computes the codes in numpy (a Polars plan costs more
#: than a small report's data); above, one multi-threaded Polars plan. Both give the same column.
_NUMPY_HARM_ROWS = 4096


def _harm_small(report: pl.DataFrame, kinds: list[int], signs: list[int]) -> pl.Series:
    """:func:`with_harm`'s column of a small report with a Categorical metric, in numpy (same numbers)."""
    import pyarrow as pa  # (here: the CLI's --help loads no pyarrow)

    phys = report.get_column("metric").to_physical()
    missing = phys.is_null().to_numpy()
    idx = phys.fill_null(0).cast(pl.Int64).to_numpy()
    kind = np.asarray(kinds, dtype=np.int8)[idx]
    sign = np.asarray(signs, dtype=np.int8)[idx].astype(np.float64)
    value = report.get_column("value").cast(pl.Float64).to_numpy()  # null -> NaN: both unknown below
    diff = report.get_column("difference").cast(pl.Float64).to_numpy()
    with np.errstate(invalid="ignore"):
        signed = np.where(kind == 1, value - 1.0, np.where(kind == 2, value, np.where(kind == 3, diff, np.nan))) * sign
        code = (signed > HARM_ROUNDING).astype(np.uint32) + 2 * (signed < -HARM_ROUNDING).astype(np.uint32)
    unknown = missing | report.get_column("group").is_null().to_numpy() | np.isnan(signed)
    codes = pl.Series("harm", pa.array(code, type=pa.uint32(), mask=unknown))
    return pl.Series("harm", ["none", "group", "reference"]).gather(codes).rechunk()


def sided_band(
    metric: pl.Expr, band_lo: pl.Expr, band_hi: pl.Expr, sides: BandSides = "both"
) -> tuple[pl.Expr, pl.Expr]:
    """The band a row is judged against: as given (``"both"``), or only its harmful side (``"harm"``).

    Parameters
    ----------
    metric
        String/Categorical expression of the metric name.
    band_lo, band_hi
        Float expressions of the configured band.
    sides
        ``"both"`` (default): unchanged. ``"harm"``: for metrics whose lower values disadvantage
        the group, ``[band_lo, inf]``; for those whose higher values do, ``[-inf, band_hi]``;
        metrics without a direction keep both sides.

    Returns
    -------
    tuple of pl.Expr
        ``(lo, hi)``.

    Raises
    ------
    ValueError
        ``sides`` is not ``"both"`` or ``"harm"``.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"metric": ["disparate_impact", "false_negative_rate_ratio", "equalized_odds"]})
    >>> lo, hi = sided_band(pl.col("metric"), pl.lit(0.8), pl.lit(1.25), "harm")
    >>> df.select(lo.alias("lo"), hi.alias("hi")).rows()
    [(0.8, inf), (-inf, 1.25), (0.8, 1.25)]
    """
    check_sides(sides)
    if sides == "both":
        return band_lo, band_hi
    k = _split()
    mc = metric.cast(pl.String)
    lo = pl.when(mc.is_in(k["higher"])).then(pl.lit(-math.inf)).otherwise(band_lo)
    hi = pl.when(mc.is_in(k["lower"])).then(pl.lit(math.inf)).otherwise(band_hi)
    return lo, hi


def check_sides(sides: Any) -> BandSides:
    """Validate ``band=``: ``"both"`` or ``"harm"``.

    Raises
    ------
    ValueError
        Any other value (the message names both).

    Examples
    --------
    >>> check_sides("harm")
    'harm'
    """
    if sides not in BAND_SIDES:
        msg = (
            f"band must be 'both' (judge both sides of each threshold band, the default) or 'harm' (only the "
            f"side that disadvantages the group, as the EEOC reads the four-fifths rule); got {sides!r}"
        )
        raise ValueError(msg)
    return sides
