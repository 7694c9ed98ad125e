"""The parity suite (issue 21): every hostile case through every door on Polars, DuckDB and Spark.

Each case (``parity_cases.py``) must give the same outcome on every engine: the same result (numbers
to 1e-9, same rows, same n) or the same clear error (class and message), and the same warnings.
Then the rooms that read rows on Polars only (reweighing, group thresholds, proxies, the
accumulator) must apply the same contract as the door they mirror, on the roles they read.
"""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest
from parity import Outcome, SparkBatch, assert_same, doors, run
from parity_cases import Case, cases
from spark_session import spark_session

import polfair as pf
from polfair.mitigation import group_thresholds, reweighing
from polfair.proxies import proxy_scan
from polfair.scores import score_counts

duckdb = pytest.importorskip("duckdb")
pytest.importorskip("narwhals")

CASES = cases()
IDS = [c.name for c in CASES]


def to_duckdb(df: pl.DataFrame) -> Any:
    return duckdb.connect().from_arrow(df.to_arrow())


def spark_frames(spark: Any, batch: list[Case]) -> dict[str, Any]:
    """Every case as a Spark DataFrame, from ONE ``createDataFrame`` (it costs seconds each): the cases
    side by side in a wide frame (padded rows masked), each selected back under its own names."""
    from pyspark.sql import functions as F  # noqa: N812

    height = max(c.df.height for c in batch)
    parts = []
    for i, c in enumerate(batch):
        pad = pl.DataFrame({n: pl.Series([None] * (height - c.df.height)).cast(t) for n, t in c.df.schema.items()})
        padded = pl.concat([c.df, pad])
        keep = pl.Series(f"c{i}__keep", [r < c.df.height for r in range(height)])
        parts.append(padded.rename({n: f"c{i}__{j}" for j, n in enumerate(c.df.columns)}).with_columns(keep))
    wide = spark.createDataFrame(pl.concat(parts, how="horizontal").to_arrow())
    out = {}
    for i, c in enumerate(batch):
        rows = wide.filter(F.col(f"c{i}__keep")) if c.df.height < height else wide
        out[c.name] = rows.select([F.col(f"c{i}__{j}").alias(n) for j, n in enumerate(c.df.columns)])
    return out


def spark_doors(case: Case) -> dict[str, Any]:
    """The doors run on Spark: the report for every case, and the score histogram where the case is
    about scores or weights (a Spark job costs seconds: the score pass's label and key rules are the
    report's, compiled by the same functions, and DuckDB runs every door of every case)."""
    scored = "y_score" in case.request or "weight" in case.request
    return {d: door for d, door in doors(case).items() if d == "report" or (d == "scores" and scored)}


@pytest.fixture(scope="module")
def polars_outcomes() -> dict[tuple[str, str], Outcome]:
    return {(c.name, d): run(door, c.df) for c in CASES for d, door in doors(c).items()}


@pytest.fixture(scope="module")
def spark_outcomes() -> dict[tuple[str, str], Outcome]:
    """Every door of every Spark case, with ONE Spark job for all their passes (see ``parity.py``)."""
    spark = spark_session()
    if spark is None:  # pragma: no cover - no JVM
        pytest.skip("no Java runtime for Spark")
    import polfair.engines.narwhals as engines_narwhals

    batch = SparkBatch()
    frames = spark_frames(spark, [c for c in CASES if "spark" in c.engines])
    outcomes: dict[tuple[str, str], Outcome] = {}
    mp = pytest.MonkeyPatch()
    mp.setattr(engines_narwhals, "foreign_frame", batch.frame_class())
    try:
        pending = []
        for c in CASES:
            if c.name not in frames:
                continue
            for d, door in spark_doors(c).items():
                got = batch.door(c.name, d, door, frames[c.name])
                if got is None:
                    pending.append((c, d, door))
                else:
                    outcomes[(c.name, d)] = got
        batch.collect()  # the one Spark job
        for c, d, door in pending:
            got = batch.door(c.name, d, door, frames[c.name])
            assert got is not None, (c.name, d)
            outcomes[(c.name, d)] = got
    finally:
        mp.undo()
    return outcomes  # the session stays up for the other Spark tests of this worker (stopped at exit)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_duckdb_agrees_with_polars(case: Case, polars_outcomes: dict) -> None:
    for d, door in doors(case).items():
        if "duckdb" not in case.engines:
            continue
        got = run(door, to_duckdb(case.df))
        assert_same(got, polars_outcomes[(case.name, d)], f"{case.name} / {d}: duckdb vs polars")


def test_spark_agrees_with_polars(polars_outcomes: dict, spark_outcomes: dict) -> None:
    # one test for every case (not one per case): under pytest-xdist the one Spark run stays in one worker
    failures = []
    for case in CASES:
        if "spark" not in case.engines:
            continue
        for d in spark_doors(case):
            try:
                assert_same(spark_outcomes[(case.name, d)], polars_outcomes[(case.name, d)],
                            f"{case.name} / {d}: spark vs polars", examples=False)  # fmt: skip
            except AssertionError as exc:
                failures.append(f"{case.name} / {d}: {exc}")
    assert not failures, "\n".join(failures)
    assert len({k[0] for k in spark_outcomes}) >= 50


def test_every_error_is_a_clear_polfair_error(polars_outcomes: dict) -> None:
    # never a raw Polars/pyarrow/Spark error: every failure names a role, an option or the input
    for (name, door), o in polars_outcomes.items():
        if o.error is None:
            continue
        assert o.error in ("InvalidInputError", "PolfairError", "ColumnNotFoundError", "PolarityError"), (
            name, door, o.message)  # fmt: skip
        assert "polars.exceptions" not in o.message and "Traceback" not in o.message, (name, door)


def test_the_cases_cover_both_outcomes(polars_outcomes: dict) -> None:
    # a parity suite whose cases all fail (or all pass) would compare little
    errors = sum(o.error is not None for o in polars_outcomes.values())
    warned = sum(bool(o.warnings) for o in polars_outcomes.values())
    assert errors >= 20 and len(polars_outcomes) - errors >= 60 and warned >= 10


# ---------------------------------------------------------------------------------------------
# rooms on Polars: the same contract as the door they mirror, on the roles they read


def _only(req: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: req[k] for k in keys if k in req}


def _kind(o: Outcome) -> tuple[Any, ...]:
    """Error class and the role the message names (``weight='w'``), and the warning categories."""
    role = o.message.split(":", 1)[0] if o.error and "=" in o.message.split(":", 1)[0] else None
    return o.error, role, tuple(sorted({w.split(":", 1)[0] for w in o.warnings if "Missing" in w}))


ROOMS = {
    # room -> (how to call it on a case's request, the door it mirrors on the same roles)
    "reweighing": (
        lambda d, r: reweighing(d, **_only(r, "y_true", "protected", "favorable", "weight")).table,
        lambda d, r: pf.fairness_report(d, **_only(r, "y_true", "protected", "favorable", "weight"), ci=None),
    ),
    "group_thresholds": (
        lambda d, r: group_thresholds(d, y_score=r.get("y_score", "s"), **_only(r, "y_true", "protected", "favorable",
                                                                                  "weight")).table,
        lambda d, r: score_counts(d, y_score=r.get("y_score", "s"), **_only(r, "y_true", "protected", "favorable",
                                                                          "weight")),
    ),
    "proxy_scan": (
        lambda d, r: proxy_scan(d, protected=r["protected"] if isinstance(r["protected"], str) else r["protected"][0],
                                features=["s"], **_only(r, "y_true", "y_pred", "favorable", "weight")),
        lambda d, r: pf.fairness_report(d, protected=r["protected"], **_only(r, "y_true", "y_pred", "favorable", "weight"),
                                        ci=None),
    ),
    "accumulator": (
        lambda d, r: pf.FairnessAccumulator(**r, ci=None).update(d).compute(),
        lambda d, r: pf.fairness_report(d, **r, ci=None),
    ),
}  # fmt: skip

#: Cases where a room reads a role differently by design (named in its docstring).
ROOM_EXCEPTIONS = {
    # group_thresholds needs a favorable and an unfavorable label in every group: a PolfairError of its own
    ("group_thresholds", "one row"), ("group_thresholds", "all-null Int label"), ("group_thresholds", "zero weights"),
    ("group_thresholds", "float labels with NaN"), ("group_thresholds", "string 'null' label next to real nulls"),
    # the accumulator skips an empty batch; compute() then says it has no rows (same error class)
    ("accumulator", "empty input"),
    # a proxy scan with no labelled group left: its own PolfairError
    ("proxy_scan", "all-null Int label"),
}  # fmt: skip


@pytest.mark.parametrize("room", list(ROOMS))
def test_rooms_apply_the_contract_of_their_door(room: str) -> None:
    call, mirror = ROOMS[room]
    checked = 0
    for case in CASES:
        req = case.request
        if room == "proxy_scan" and ("s" not in case.df.columns or "by" in req):
            continue
        if room == "group_thresholds" and "s" not in case.df.columns and "y_score" not in req:
            continue
        if (room, case.name) in ROOM_EXCEPTIONS:
            continue
        got = run(lambda d, r=req: call(d, r), case.df)
        want = run(lambda d, r=req: mirror(d, r), case.df)
        if want.error is None and got.error is not None and "PolfairError" == got.error:
            continue  # the room's own precondition (e.g. too few groups), not an input rule
        assert _kind(got)[:2] == _kind(want)[:2], (room, case.name, got.message, want.message)
        if want.error is None and got.error is None:
            assert _kind(got)[2] == _kind(want)[2], (room, case.name, got.warnings, want.warnings)
        checked += 1
    assert checked >= 25


def test_the_accumulator_gives_the_report(polars_outcomes: dict) -> None:
    # beyond the error kinds: the same numbers
    for case in CASES:
        want = polars_outcomes[(case.name, "report")]
        if want.error is not None or case.df.height == 0:
            continue
        got = run(lambda d, r=case.request: pf.FairnessAccumulator(**r, ci=None).update(d).compute(), case.df)
        assert_same(got, want, case.name)
