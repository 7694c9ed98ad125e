"""The terminal summary of a slice search (:func:`polfair.slice_scan`): the worst slices, with intervals.

Plain text within 100 columns: a header with the search (what the error is, SliceLine's parameters,
the rows, the overall mean error, how many slices were evaluated and how the p-values are
adjusted), the slices' predicates, numbered, and one table of their numbers: level, rows, mean
error with its interval, the rest's mean, the difference with its interval, the adjusted p-value
and the score. It reads the result table alone (and the search's request, attached by
:func:`polfair.slice_scan`, when present).
"""

from __future__ import annotations

import math
import textwrap
from typing import Any

import polars as pl

from polfair.core.report.run_metadata import request_of
from polfair.outputs.summary import favorable_statement
from polfair.slices import is_slice_table

__all__ = ["format_number", "format_p", "summarize_slices"]

WIDTH = 100


def format_number(v: Any, digits: int = 3, sign: bool = False, missing: str = "-") -> str:
    """A slice statistic as text: ``digits`` decimals (``sign``: always signed), ``missing`` for null or NaN.

    Examples
    --------
    >>> format_number(0.12345), format_number(0.1, sign=True), format_number(None)
    ('0.123', '+0.100', '-')
    """
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return missing
    return f"{v:+.{digits}f}" if sign else f"{v:.{digits}f}"


_num = format_number


def _interval(lo: Any, hi: Any, sign: bool = False) -> str:
    if lo is None or hi is None:
        return ""
    return f" [{_num(lo, sign=sign)}, {_num(hi, sign=sign)}]"


def format_p(v: Any, missing: str = "-") -> str:
    """A p-value as text: 3 decimals, 2 significant digits below 0.001, ``<1e-300`` for one that underflows to 0.

    Examples
    --------
    >>> format_p(0.0412), format_p(3.2e-9), format_p(0.0)
    ('0.041', '3.2e-09', '<1e-300')
    """
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return missing
    if v == 0.0:
        return "<1e-300"
    return f"{v:.2g}" if v < 0.001 else f"{v:.3f}"


_p = format_p


def _wrap(text: str, first: str, width: int = WIDTH) -> list[str]:
    """``first`` + ``text`` over lines of ``width``, continuation lines indented like ``first``, broken at ``&``."""
    out, line = [], first
    for i, part in enumerate(text.split(" & ")):
        piece = part if i == 0 else f"& {part}"
        if line.strip() and len(line) + len(piece) + 1 > width:
            out.append(line.rstrip())
            line = " " * len(first)
        line += ("" if line.endswith(" ") or not line.strip() else " ") + piece
    out.append(line.rstrip())
    return out


def summarize_slices(result: pl.DataFrame, *, max_slices: int = 20) -> str:
    """A terminal summary of a :func:`polfair.slice_scan` result.

    Parameters
    ----------
    result
        The slice table (its columns end with :data:`polfair.slices.SLICE_COLUMNS`).
    max_slices
        Slices shown (the best ones; the rest are counted).

    Returns
    -------
    str
        Text within 100 columns.

    Raises
    ------
    TypeError
        ``result`` is not a slice table.

    Examples
    --------
    >>> import polars as pl
    >>> import polfair as pf
    >>> df = pl.DataFrame({"a": ["x", "x", "y", "y"] * 25, "b": ["u", "v"] * 50, "err": [1, 0, 0, 0] * 25})
    >>> text = summarize_slices(pf.slice_scan(df, features=["a", "b"], errors="err", min_support=10, k=1))
    >>> print(text.splitlines()[4])
     1  a = x & b = u
    """
    if not is_slice_table(result):
        msg = "summarize_slices takes the result of polfair.slice_scan (a DataFrame of slices)"
        raise TypeError(msg)
    req = request_of(result) or {}
    rate = req["metric"].replace("_", " ") if req.get("metric") else None
    what = f"errors={req['errors']}" if req.get("errors") else f"metric={req['metric']}" if rate else ""
    lines = ["Worst slices by SliceLine score" + (f": {what}" if what else "")]
    facts = []
    if "alpha" in req:
        facts.append(f"alpha {req['alpha']}")
    if "max_level" in req:
        facts.append(f"up to {req['max_level']} features")
    if "min_support_rows" in req:
        facts.append(f"support >= {req['min_support_rows']:,} rows")
    if "rows" in req:
        facts.append(f"{req['rows']:,} rows")
    if req.get("error_mean") is not None:
        facts.append(f"{rate or 'mean error'} {_num(req['error_mean'])}")
    n_eval = int(result["n_evaluated"][0]) if result.height else int(req.get("n_evaluated", 0))
    facts.append(f"{n_eval:,} slices evaluated")
    if result.height and result["p_value_adjusted"].null_count() < result.height:
        facts.append(f"p-values adjusted ({req.get('p_adjust', 'holm')}) over all of them")
    favorable = favorable_statement(req) if rate else None  # a rate of labels: its favorable outcome
    if favorable:
        facts.append(f"favorable outcome: {favorable}")
    lines += textwrap.wrap("; ".join(facts) + ".", WIDTH)
    if not result.height:
        lines.append("No slice has at least the minimum support and a positive score: nothing stands out.")
        lines.append("(A higher alpha or a lower min_support lets smaller slices with higher errors score.)")
        return "\n".join(lines)
    shown = result.head(max_slices)
    lines.append("")
    for i, text in enumerate(shown["slice"].to_list(), 1):
        lines += _wrap(text, f"{i:>2}  ")
    ci = shown["value_lo"].null_count() < shown.height
    header = ["#", "level", "n", "error" + (" [CI]" if ci else ""), "rest", "difference" + (" [CI]" if ci else ""),
              "p adj", "score"]  # fmt: skip
    rows = []
    for i, r in enumerate(shown.iter_rows(named=True), 1):
        rows.append([
            str(i), str(r["level"]), f"{r['n']:,}", _num(r["error_mean"]) + _interval(r["value_lo"], r["value_hi"]),
            _num(r["rest_error_mean"]),
            _num(r["difference"], sign=True) + _interval(r["difference_lo"], r["difference_hi"], sign=True),
            _p(r["p_value_adjusted"] if r["p_value_adjusted"] is not None else r["p_value"]), _num(r["score"]),
        ])  # fmt: skip
    widths = [max(len(x[i]) for x in [header, *rows]) for i in range(len(header))]
    lines.append("")
    for cells in [header, ["-" * w for w in widths], *rows]:
        lines.append("  ".join(c.rjust(w) for c, w in zip(cells, widths)).rstrip())
    if result.height > shown.height:
        lines.append(f"... and {result.height - shown.height} more slices (the table has them all)")
    lines.append("")
    error = f"the slice's {rate}" if rate else "the slice's mean error" + (
        " (0/1 errors: a rate)" if req.get("binary_errors", True) else "")
    lines += textwrap.wrap(f"error = {error}; rest = the other rows' mean; difference = error - rest. p adj: the test "
                           "of no difference, adjusted over every evaluated slice (the search picks the most extreme of "
                           "them). score > 0: worse than average and large enough (SliceLine).", WIDTH)  # fmt: skip
    return "\n".join(lines)
