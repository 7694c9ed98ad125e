"""The hostile cases of the parity suite (issue 21): one small frame and one request each.

Every case runs through every door (``fairness_report``, ``confusion_counts``, ``score_counts``,
``adverse_impact``; and the Polars-only rooms: ``reweighing``, ``group_thresholds``, ``proxy_scan``,
``FairnessAccumulator``, ``multiclass_report``) on every engine (Polars, DuckDB; Spark where pyspark
runs). The expected behaviour is not written here: the engines and doors must agree with each other
(``test_parity.py``), and the contract's own tests (``tests/core``) pin the rules.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field
from typing import Any

import polars as pl

Y = [1, 0, 1, 1, 0, 0, 1, 0]
P = [1, 1, 0, 1, 0, 1, 1, 0]
S = [0.9, 0.6, 0.2, 0.7, 0.1, 0.5, 0.8, 0.3]
W = [1.0, 2.0, 0.5, 1.0, 3.0, 1.0, 0.25, 1.0]
G = ["a", "a", "a", "b", "b", "b", "b", "a"]
NAN = math.nan


def base(**cols: Any) -> pl.DataFrame:
    """The 8-row base frame (labels y, predictions p, scores s, weights w, group g), with changes."""
    df = pl.DataFrame({"y": Y, "p": P, "s": S, "w": W, "g": G})
    return df.with_columns(**{k: (v if isinstance(v, pl.Series) else pl.Series(k, v)) for k, v in cols.items()})


@dataclass
class Case:
    """A hostile case: the frame, the request's keywords, and where it can run.

    ``spark_door``: run the public doors on Spark for this case one by one (cases whose outcome is
    decided before the pass, from the schema: cheap on Spark); every case's pass also runs on Spark
    batched with the others of its schema (``test_parity.test_batched_passes_agree``).
    ``engines``: the engines the case's dtypes exist in.
    """

    name: str
    df: pl.DataFrame
    kw: dict[str, Any] = field(default_factory=dict)
    spark_door: bool = False
    engines: tuple[str, ...] = ("polars", "duckdb", "spark")

    @property
    def request(self) -> dict[str, Any]:
        out = {"y_true": "y", "y_pred": "p", "protected": "g", **self.kw}
        return {k: v for k, v in out.items() if v is not None}


def cases() -> list[Case]:
    """The table (names are test ids)."""
    f64 = pl.Float64
    return [
        # --- labels and predictions: dtypes, favorable spellings, NaN, probabilities passed as labels
        Case("int labels", base()),
        Case("bool labels, favorable=1", base(y=pl.Series(Y).cast(pl.Boolean), p=pl.Series(P).cast(pl.Boolean))),
        Case("bool labels, int predictions, favorable=True", base(y=pl.Series(Y).cast(pl.Boolean)), {"favorable": True}),
        Case("int labels, favorable=True", base(), {"favorable": True}),
        Case("float labels with NaN", base(y=pl.Series([1.0, NAN, 1, 1, 0, 0, 1, 0]),
                                           p=pl.Series([1.0, 1, 0, NAN, 0, 1, 1, 0]))),  # fmt: skip
        Case("whole float labels", base(y=pl.Series(Y).cast(f64), p=pl.Series(P).cast(f64))),
        Case("probabilities passed as y_pred", base(p=pl.Series(S))),
        Case("probabilities as y_pred, unfavorable=0", base(p=pl.Series(S)), {"unfavorable": 0}),
        Case("fractional y_true", base(y=pl.Series([1.0, 0.5, 1, 1, 0, 0, 1, 0]))),
        Case("infinite label", base(y=pl.Series([1.0, math.inf, 1, 1, 0, 0, 1, 0]))),
        Case("string labels", base(y=pl.Series(["yes", "no"] * 4), p=pl.Series(["no", "no", "yes", "yes"] * 2)),
             {"favorable": "yes"}),
        Case("string labels, neither favorable nor unfavorable",
             base(y=pl.Series(["yes", "no", "maybe", "no"] * 2), p=pl.Series(["no", "yes"] * 4)),
             {"favorable": "yes", "unfavorable": "no"}),
        Case("string 'null' label next to real nulls", base(y=pl.Series(["yes", "null", None, "no"] * 2),
                                                              p=pl.Series(["no", "yes"] * 4)),
             {"favorable": "yes"}),
        Case("favorable='yes' on a Boolean label", base(y=pl.Series(Y).cast(pl.Boolean)), {"favorable": "yes"}, True),
        Case("favorable=2 on a Boolean label", base(y=pl.Series(Y).cast(pl.Boolean)), {"favorable": 2}, True),
        Case("favorable=1.5 on an Int label", base(), {"favorable": 1.5}, True),
        Case("favorable='1' on an Int label", base(), {"favorable": "1"}, True),
        Case("favorable=1 on a String label", base(y=pl.Series(["1", "0"] * 4), p=pl.Series(["1", "1"] * 4)), {}, True),
        Case("favorable=1 on an Enum label", base(y=pl.Series(["1", "0"] * 4, dtype=pl.Enum(["0", "1"])),
                                                  p=pl.Series(["1", "1"] * 4, dtype=pl.Enum(["0", "1"]))), {}, True),
        Case("all-null label column", base(y=pl.Series([None] * 8, dtype=pl.Null)), {}, True),
        Case("all-null Int label", base(y=pl.Series([None] * 8, dtype=pl.Int64))),
        Case("list label", base(y=pl.Series([[1]] * 8)), {}, True),
        Case("date label", base(y=pl.Series([dt.date(2020, 1, 1)] * 8)), {}, True),
        # --- polarity (issue 29): what a score and a Boolean prediction mean relative to favorable
        Case("favorable=0 with a score", base(), {"favorable": 0, "y_score": "s"}, True),
        Case("favorable=0, score_label=1", base(), {"favorable": 0, "y_score": "s", "score_label": 1}),
        Case("favorable=0, score_label=0", base(), {"favorable": 0, "y_score": "s", "score_label": 0}),
        Case("Boolean predictions, favorable=0", base(p=pl.Series(P).cast(pl.Boolean)), {"favorable": 0}, True),
        Case("Boolean predictions, favorable=0, score_label=1", base(p=pl.Series(P).cast(pl.Boolean)),
             {"favorable": 0, "score_label": 1}),
        Case("bool labels, favorable=False, a score", base(y=pl.Series(Y).cast(pl.Boolean)),
             {"favorable": False, "y_score": "s"}, True),
        Case("enum labels, favorable below another category", base(
            y=pl.Series(["approve", "deny"] * 4, dtype=pl.Enum(["approve", "deny"])),
            p=pl.Series(["approve", "approve", "deny", "deny"] * 2, dtype=pl.Enum(["approve", "deny"]))),
             {"favorable": "approve", "y_score": "s"}, True, ("polars", "duckdb")),  # Spark: String, checked in the pass
        Case("score_label that is no label", base(), {"y_score": "s", "score_label": "1"}, True),
        # decided in the pass (the data shows a label above the favorable one): the error path fetches
        # the labels, which the batched Spark run does not (tests/engines/test_spark.py runs one)
        Case("1/2 labels with a score", base(y=pl.Series([1, 2, 1, 1, 2, 2, 1, 2]), p=pl.Series([1, 1, 2, 1, 2, 1, 1, 2])),
             {"y_score": "s"}, engines=("polars", "duckdb")),
        Case("1/2 labels, score_label=2", base(y=pl.Series([1, 2, 1, 1, 2, 2, 1, 2]),
                                               p=pl.Series([1, 1, 2, 1, 2, 1, 1, 2])),
             {"y_score": "s", "score_label": 2}),
        Case("0/1/2 labels, score_label=1 of favorable=0", base(y=pl.Series([0, 2, 1, 0, 1, 2, 0, 1])),
             {"y_score": "s", "favorable": 0, "score_label": 1}, engines=("polars", "duckdb")),
        Case("string labels, favorable='no', a score", base(y=pl.Series(["yes", "no"] * 4),
                                                          p=pl.Series(["no", "no", "yes", "yes"] * 2)),
             {"favorable": "no", "y_score": "s"}, engines=("polars", "duckdb")),
        Case("string labels, favorable='yes', a score", base(y=pl.Series(["yes", "no"] * 4),
                                                           p=pl.Series(["no", "no", "yes", "yes"] * 2)),
             {"favorable": "yes", "y_score": "s"}),
        Case("favorable matches no label", base(y=pl.Series(["yes", "no"] * 4), p=pl.Series(["no", "yes"] * 4)),
             {"favorable": "No"}, engines=("polars", "duckdb")),
        # --- scores
        Case("scores with NaN and null", base(s=pl.Series([0.9, NAN, None, 0.7, 0.1, 0.5, 0.8, 0.3])), {"y_score": "s"}),
        Case("infinite score", base(s=pl.Series([0.9, math.inf, 0.2, 0.7, 0.1, 0.5, 0.8, 0.3])), {"y_score": "s"}),
        Case("score above 1", base(s=pl.Series([0.9, 1.5, 0.2, 0.7, 0.1, 0.5, 0.8, 0.3])), {"y_score": "s"}),
        Case("scores without predictions", base(), {"y_score": "s", "y_pred": None}),
        Case("string scores", base(s=pl.Series(["0.1"] * 8)), {"y_score": "s"}, True),
        Case("boolean scores", base(s=pl.Series([True, False] * 4)), {"y_score": "s"}, True),
        Case("integer 0/1 scores", base(s=pl.Series(P)), {"y_score": "s"}),
        # --- weights
        Case("weights", base(), {"weight": "w", "y_score": "s"}),
        Case("zero weights", base(w=pl.Series([0.0] * 8)), {"weight": "w"}),
        Case("tiny weights", base(w=pl.Series([1e-300, 1e-9] * 4)), {"weight": "w"}),
        Case("huge weights", base(w=pl.Series([1e15, 2.0**40] * 4)), {"weight": "w"}),
        Case("negative weight", base(w=pl.Series([1.0, -1.0, 1, 1, 1, 1, 1, 1])), {"weight": "w"}),
        Case("NaN and null weights", base(w=pl.Series([1.0, NAN, None, 1, 1, 1, 1, 1])), {"weight": "w"}),
        Case("infinite weight", base(w=pl.Series([1.0, math.inf, 1, 1, 1, 1, 1, 1])), {"weight": "w"}),
        Case("overflowing weights", base(w=pl.Series([1e308] * 8)), {"weight": "w"}),
        Case("string weights", base(w=pl.Series(["1"] * 8)), {"weight": "w"}, True),
        Case("boolean weights", base(w=pl.Series([True] * 8)), {"weight": "w"}, True),
        Case("exact sums, weights in range", base(), {"weight": "w", "y_score": "s", "exact_sums": True}),
        Case("exact sums, tiny weight", base(w=pl.Series([1.0, 1e-9, 1, 1, 1, 1, 1, 1])),
             {"weight": "w", "exact_sums": True}),
        # --- keys
        Case("string 'null' next to real nulls", base(g=pl.Series(["null", None, "a", "null", None, "a", "b", "b"]))),
        Case("' & ' in values", base(g=pl.Series(["x & y", "x", "y", "x & y", "x", "y", "x & y", "x"]))),
        Case("boolean key", base(g=pl.Series([True, False, None, True] * 2)), {"privileged": {"g": 1}}),
        Case("int key", base(g=pl.Series([3, 1, 2, 3, 1, 2, 3, 1])), {"privileged": {"g": 3.0}}),
        Case("date key", base(g=pl.Series([dt.date(2020, 1, 1), dt.date(2021, 1, 1)] * 4)),
             {"privileged": {"g": dt.date(2021, 1, 1)}}),
        Case("enum key", base(g=pl.Series(["a", "b", "c", "a"] * 2, dtype=pl.Enum(["a", "b", "c"]))),
             {"privileged": {"g": "b"}}),
        Case("float key: 0/1, -0.0, NaN", base(g=pl.Series([0.0, -0.0, 1.0, NAN, 1.0, 0.0, None, -0.0])),
             {"privileged": {"g": 1}}),
        Case("two keys and a by column", base(h=pl.Series(["x", "y"] * 4), m=pl.Series([1, 1, 2, 2] * 2)),
             {"protected": ["g", "h"], "by": "m"}),
        Case("time key", base(g=pl.Series([dt.time(1), dt.time(2)] * 4)), {}, True, ("polars", "duckdb")),
        Case("duration key", base(g=pl.Series([dt.timedelta(1), dt.timedelta(2)] * 4)), {}, True, ("polars", "duckdb")),
        # --- shapes and names
        Case("one row", base().head(1)),
        Case("empty input", base().head(0)),
        Case("dotted, spaced and quoted names",
             base().rename({"y": "y.true", "p": "p red", "g": "sex.code", "w": "w'q"}).with_columns(
                 pl.Series("by.col", ["x", "y"] * 4)),
             {"y_true": "y.true", "y_pred": "p red", "protected": "sex.code", "weight": "w'q", "by": "by.col"}),
    ]  # fmt: skip
