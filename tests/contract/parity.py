"""Machinery of the parity suite: engines, doors, outcomes, and the batched Spark run.

An *outcome* of a door on an engine is what a user sees: the result frame, or the error (class and
message), plus the warnings. Outcomes are normalised (rows sorted, keys as text, engine dtype names
and fetched example values masked where engines legitimately differ) and compared exactly, numbers
to 1e-9.

Spark runs every door of every case with ONE Spark job for all their passes: a first round records
each door's pass (``ForeignFrame.plan``) instead of running it, the passes are cast to text and
unioned into one query, collected once, and a second round runs the doors again, each pass
answered from that result (the doors' own code after the pass runs as usual). Example values of
error messages are a second query on the error path; the batched round does not fetch them
(``tests/engines/test_spark.py`` checks them on Spark).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import polars as pl
from parity_cases import Case
from polars.testing import assert_frame_equal

import polfair as pf
from polfair.exceptions import PolfairError
from polfair.regulatory import adverse_impact
from polfair.scores import score_counts

#: Keywords each door takes (the rest of a case's request is dropped for it).
CLASSIFICATION = ("y_true", "y_pred", "y_score", "threshold", "protected", "favorable", "unfavorable", "weight", "by",
                  "exact_sums", "score_label")  # fmt: skip


def doors(case: Case) -> dict[str, Callable[[Any], Any]]:
    """The public doors a case runs through on every engine."""
    req = case.request
    cells_kw = {k: v for k, v in req.items() if k in CLASSIFICATION}
    score_kw = {k: req[k] for k in ("y_true", "protected", "favorable", "weight", "by", "score_label") if k in req}
    score_kw["y_score"] = req.get("y_score", "s")
    out: dict[str, Callable[[Any], Any]] = {
        "report": lambda d: pf.fairness_report(d, **req, ci=None),
        "cells": lambda d: pf.confusion_counts(d, **cells_kw).collect(),
    }
    if "s" in case.df.columns or "y_score" in req:
        out["scores"] = lambda d: score_counts(d, **score_kw)
    if "y_pred" in req:
        dk = {"y_pred": req["y_pred"], "protected": req["protected"], "favorable": req.get("favorable", 1),
              "by": req.get("by"), "score_label": req.get("score_label")}  # fmt: skip
        out["decision"] = lambda d: adverse_impact(d, **dk)
    return out


@dataclass
class Outcome:
    """What a door gave: a frame, or an error; and the warnings."""

    frame: pl.DataFrame | None = None
    error: str | None = None
    message: str = ""
    warnings: tuple[str, ...] = ()
    raw: BaseException | None = field(default=None, repr=False)


_EXAMPLES = re.compile(r"; found e\.g\. \[.*?\](?=\. )")
_DTYPES = re.compile(
    r"\b(Enum\(categories=\[[^\]]*\]\)|Categorical(\([^)]*\))?|String|Int(8|16|32|64|128)|UInt(8|16|32|64)|"
    r"Float(32|64)|Boolean|Decimal\([^)]*\)|Datetime\([^)]*\)|List\([^)]*\)|Null|Object|Struct\([^)]*\))"
)


def normalise_message(msg: str, *, examples: bool = True) -> str:
    """A message with engine dtype names masked (and, unless ``examples``, example values dropped)."""
    if not examples:
        msg = _EXAMPLES.sub("", msg)
    return _DTYPES.sub("<dtype>", msg)


def _frame(out: Any) -> pl.DataFrame:
    """A door's result as a comparable frame: keys as text, rows sorted."""
    df = out if isinstance(out, pl.DataFrame) else out.collect()
    casts = []
    for c, t in df.schema.items():
        if isinstance(t, pl.Struct):
            casts.append(pl.col(c).struct.json_encode())
        elif isinstance(t, (pl.List, pl.Array)):
            casts.append(pl.col(c).map_elements(repr, return_dtype=pl.String))
        elif not (t.is_numeric() or t == pl.Boolean):
            casts.append(pl.col(c).cast(pl.String))
        elif t.is_integer():
            casts.append(pl.col(c).cast(pl.Int64))
    df = df.with_columns(casts)
    return df.sort(df.columns, nulls_last=True)


def run(door: Callable[[Any], Any], data: Any) -> Outcome:
    """Run one door; a polfair error is an outcome, any other exception fails the test."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = door(data)
        except (PolfairError, TypeError) as exc:
            return Outcome(error=type(exc).__name__, message=str(exc), raw=exc,
                           warnings=_warned(caught))  # fmt: skip
    return Outcome(frame=_frame(out), warnings=_warned(caught))


def _warned(caught: list[warnings.WarningMessage]) -> tuple[str, ...]:
    keep = (pf.MissingValuesWarning, pf.ReferenceWarning, UserWarning)
    return tuple(sorted(f"{w.category.__name__}: {w.message}" for w in caught if issubclass(w.category, keep)
                        and not issubclass(w.category, (DeprecationWarning, FutureWarning))))  # fmt: skip


def assert_same(a: Outcome, b: Outcome, what: str, *, examples: bool = True) -> None:
    """The two outcomes are the same: frames (numbers to 1e-9), or error class and message; warnings."""
    assert (a.error, normalise_message(a.message, examples=examples)) == (
        b.error, normalise_message(b.message, examples=examples)), what  # fmt: skip
    wa = tuple(normalise_message(w, examples=examples) for w in a.warnings)
    wb = tuple(normalise_message(w, examples=examples) for w in b.warnings)
    assert wa == wb, what
    if a.frame is not None or b.frame is not None:
        assert a.frame is not None and b.frame is not None, what
        assert_frame_equal(a.frame, b.frame, check_dtypes=False, rel_tol=1e-9, abs_tol=1e-12), what


# ---------------------------------------------------------------------------------------------
# Spark: record every pass, run them as one job, replay


class _Deferred(BaseException):
    """Raised by the recording frame instead of running a pass (a BaseException: no door catches it)."""


@dataclass
class SparkBatch:
    """Passes recorded per (case, door, call), and their results once the one job ran."""

    plans: dict[tuple[str, str, int], tuple[Any, list[str], Callable[[Any], list[Any]], dict[str, str]]] = field(
        default_factory=dict
    )
    results: dict[tuple[str, str, int], pl.DataFrame] = field(default_factory=dict)
    current: tuple[str, str] = ("", "")
    calls: int = 0

    def frame_class(self) -> type:
        from polfair.engines.narwhals import ForeignFrame

        batch = self

        class Recording(ForeignFrame):  # type: ignore[misc, valid-type]
            def aggregate(self, columns: Any, group: Any, aggs: Any, engine: str = "auto", stages: Any = None) -> pl.DataFrame:
                key = (*batch.current, batch.calls)
                batch.calls += 1
                if key in batch.results:
                    return batch.results[key]
                planned, keys, back = self.plan(columns, group, aggs)
                batch.plans[key] = (planned, keys, aggs, back)
                raise _Deferred

            def examples(self, c: Any) -> list[Any]:
                raise RuntimeError("the batched Spark run does not fetch example values")

        return Recording

    def door(self, case: str, name: str, door: Callable[[Any], Any], data: Any) -> Outcome | None:
        """Run a door; ``None`` when its pass was recorded (run it again after :meth:`collect`)."""
        self.current, self.calls = (case, name), 0
        try:
            return run(door, data)
        except _Deferred:
            return None

    def collect(self) -> None:
        """Every recorded pass in ONE Spark job: the passes' rows (keys as text, a pass id) unioned,
        ONE ``group_by(pass id, keys)`` with every pass's aggregations, collected, split, parsed back."""
        import narwhals as nw

        from polfair.engines.narwhals import polars_dtype

        items = list(self.plans.items())
        if not items:
            return
        schemas = [planned.collect_schema() for _, (planned, *_rest) in items]
        width = max(len(keys) for _, (_, keys, _, _) in items)
        values: dict[str, Any] = {}  # value column -> a dtype every pass's column casts to exactly
        for (_, (_, keys, _, _)), schema in zip(items, schemas):
            for c, t in schema.items():
                if c not in keys:
                    values[c] = nw.Float64 if (t.is_float() or values.get(c) == nw.Float64) else nw.Int64
        parts = []
        for i, ((_, (planned, keys, _, _)), schema) in enumerate(zip(items, schemas)):
            cols = [nw.lit(i).cast(nw.Int64).alias("__case")]
            cols += [nw.col(k).cast(nw.String).alias(f"__k{j}") for j, k in enumerate(keys)]
            cols += [nw.lit(None).cast(nw.String).alias(f"__k{j}") for j in range(len(keys), width)]
            cols += [(nw.col(c) if c in schema else nw.lit(None)).cast(t).alias(c) for c, t in values.items()]
            parts.append(planned.select(*cols))
        aggs: dict[str, Any] = {}
        names: list[list[str]] = []
        for (_, (_, keys, agg, _)), schema in zip(items, schemas):
            # the output names of the pass's aggregations: the same query on an empty Polars frame
            empty = nw.from_native(pl.LazyFrame(schema={c: polars_dtype(t) for c, t in schema.items()}))
            names.append(empty.group_by(*keys).agg(*agg(nw)).collect_schema().names()[len(keys):])
            aggs |= dict(zip(names[-1], agg(nw)))
        union = _tree_union(parts)
        out = union.group_by("__case", *[f"__k{j}" for j in range(width)]).agg(*aggs.values())
        out = out.collect(backend="polars").to_native()
        for i, ((key, (_, keys, _, back)), schema) in enumerate(zip(items, schemas)):
            part = out.filter(pl.col("__case") == i)
            cols = [_parse(pl.col(f"__k{j}"), polars_dtype(schema[k])).alias(k) for j, k in enumerate(keys)]
            cols += [pl.col(n) for n in names[i]]
            frame = part.select(cols)
            self.results[key] = frame.rename({k: n for k, n in back.items() if k in frame.columns})


def _tree_union(parts: list[Any]) -> Any:
    """``concat`` of many lazy frames as a balanced tree of unions (Spark analyses a union chain of
    n frames in O(n²): a tree keeps the one query's planning to seconds)."""
    import narwhals as nw

    while len(parts) > 1:
        parts = [nw.concat(parts[i : i + 2], how="vertical") if i + 1 < len(parts) else parts[i]
                 for i in range(0, len(parts), 2)]  # fmt: skip
    return parts[0]


def _parse(v: pl.Expr, dtype: pl.DataType) -> pl.Expr:
    """A key cast to text by Spark, back in its dtype."""
    if dtype == pl.Boolean:
        return pl.when(v.is_not_null()).then(v == "true")
    if dtype == pl.Date:
        return v.str.to_date()
    if dtype == pl.Null:
        return pl.lit(None)
    return v.cast(dtype)
