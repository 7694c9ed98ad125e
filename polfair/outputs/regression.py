"""Terminal summary of a regression report (:func:`polfair.regression_report`), for ``polfair report --task
regression`` and ``polfair demo --task regression``.

Plain text from the long report alone, at most 100 characters wide: per attribute, a table of the
groups (rows, mean outcome and prediction, mean error with its interval, MAE, RMSE, r², the KS
distance of the predictions to the reference's) and the differences to the reference group with
their intervals and adjusted p-values.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import polars as pl

from polfair.core.options import check_present
from polfair.outputs.summary import text_table

__all__ = ["summarize_regression"]

#: Group-table columns: (metric, header). Column widths follow the numbers (:func:`text_table`).
_COLUMNS = (
    ("mean_outcome", "mean y"), ("mean_prediction", "mean ŷ"), ("mean_error", "mean error [interval]"),
    ("mean_absolute_error", "MAE"), ("root_mean_squared_error", "RMSE"), ("r2_score", "r²"), ("ks_distance", "KS"),
)  # fmt: skip
#: Differences to the reference shown under each table.
_DIFFERENCES = ("mean_error", "mean_absolute_error", "mean_prediction")


def _num(x: Any, digits: int = 2) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    return f"{x:.{digits}f}"


def _interval(value: Any, lo: Any, hi: Any, digits: int = 2, sign: bool = True) -> str:
    f = f"{{:+.{digits}f}}" if sign else f"{{:.{digits}f}}"
    if value is None:
        return "–"
    text = f.format(value)
    if lo is not None and hi is not None:
        text += f" [{f.format(lo)}, {f.format(hi)}]"
    return text


def _label(group: Any, width: int = 20) -> str:
    text = "null" if group is None else str(group)
    return f"{text:<{width}}" if len(text) <= width else text[: width - 1] + "…"


def summarize_regression(report: pl.DataFrame, *, attributes: Sequence[str] | None = None, max_groups: int = 12) -> str:
    """A readable text summary of a regression report, at most 100 characters wide.

    Parameters
    ----------
    report
        The long report of :func:`polfair.regression_report` (with or without interval columns;
        with ``by`` columns the last ``by`` value in sort order is shown).
    attributes
        Attribute sets to show (default: every single attribute).
    max_groups
        Groups shown per attribute set (default 12): the reference first, then the largest; the
        rest are counted in one line.

    Returns
    -------
    str
        Per attribute set: the groups' ``n``, mean outcome (``mean y``), mean prediction
        (``mean ŷ``), mean error ŷ − y with its interval, MAE, RMSE, r² and the KS distance of the
        predictions to the reference group's; then, per group, the differences to the reference
        of the mean error, MAE and mean prediction with their intervals and BH-adjusted p-values.

    Examples
    --------
    >>> import polfair as pf
    >>> rep = pf.load_adult_regression().pipe(pf.regression_report, y_true="hours_per_week",
    ...                                       y_pred="predicted_hours", protected="sex", privileged={"sex": "Male"})
    >>> text = summarize_regression(rep)
    >>> "Female" in text and max(map(len, text.splitlines())) <= 100
    True
    """
    from polfair.outputs.html._view import by_columns

    by = by_columns(report, None)
    if by:
        last = report.select(by).unique().sort(by, nulls_last=True).row(-1, named=True)
        report = report.filter(*[pl.col(c).eq_missing(v) for c, v in last.items()])
    rep = report.with_columns(pl.col(c).cast(pl.String) for c in ("attribute", "metric"))
    has_ci = "value_lo" in rep.columns
    lines: list[str] = []
    if by:
        lines.append("shown: " + ", ".join(f"{c} = {v}" for c, v in last.items()))
    pop = rep.filter(pl.col("attribute").is_null())
    if pop.height:
        vals = dict(zip(pop["metric"], pop["value"], strict=True))
        n = int(pop["n"].cast(pl.Int64).max() or 0)  # type: ignore[arg-type]
        lines.append(f"population: {n:,} rows; mean outcome {_num(vals.get('mean_outcome'))}, mean prediction "
                     f"{_num(vals.get('mean_prediction'))}")  # fmt: skip
        lines.append(f"            mean error (ŷ − y) {_num(vals.get('mean_error'))}, MAE "
                     f"{_num(vals.get('mean_absolute_error'))}, RMSE {_num(vals.get('root_mean_squared_error'))}, "
                     f"r² {_num(vals.get('r2_score'), 3)}")  # fmt: skip
    sets = [a for a in rep["attribute"].drop_nulls().unique(maintain_order=True).to_list()]
    check_present("summarize", "attributes", attributes, sets)
    if attributes is None:
        sets = [a for a in sets if " & " not in a]
    else:
        sets = [a for a in attributes if a in sets]
    for attr in sets:
        part = rep.filter(pl.col("attribute") == attr, pl.col("group").is_not_null())
        wide = {(g, m): r for g, m, r in zip(part["group"], part["metric"], part.iter_rows(named=True), strict=True)}
        reference = part["reference_group"].drop_nulls().cast(pl.String)
        ref = reference[0] if reference.len() else None
        groups = part.filter(metric="mean_error").sort("n", descending=True)["group"].to_list()
        groups = sorted(groups, key=lambda g: g != ref)
        shown, rest = groups[:max_groups], groups[max_groups:]
        lines += ["", f"{attr} (reference: {ref})"]
        heads = [h if has_ci or m != "mean_error" else "mean error" for m, h in _COLUMNS]
        rows = []
        for g in shown:
            cells = []
            for m, _ in _COLUMNS:
                r = wide.get((g, m), {})
                if m == "mean_error":
                    cells.append(_interval(r.get("value"), r.get("value_lo"), r.get("value_hi")))
                else:
                    cells.append(_num(r.get("value"), 3 if m in ("r2_score", "ks_distance") else 2))
            n_rows = wide.get((g, "mean_error"), {}).get("n") or 0
            rows.append([_label(g).rstrip(), f"{n_rows:,}", *cells])
        lines += text_table(["group", "n", *heads], rows)
        if rest:
            lines.append(f"... and {len(rest)} more group(s)")
        diff = []
        for g in shown:
            if g == ref:
                continue
            for m in _DIFFERENCES:
                r = wide.get((g, m), {})
                if r.get("difference") is None:
                    continue
                text = _interval(r["difference"], r.get("difference_lo"), r.get("difference_hi"))
                p = r.get("p_value_adjusted")
                ptext = "" if p is None else ("< 1e-300" if p == 0 else f"{p:.2g}")
                diff.append([_label(g).rstrip(), m, text, ptext])
        if diff:
            lines += ["difference to the reference (group − reference" + (", 95% interval):" if has_ci else "):")]
            lines += ["  " + line for line in text_table(["group", "metric", "difference", "p_adj"], diff, width=98, left=2)]
    return "\n".join(lines)
