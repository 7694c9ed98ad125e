"""Issue 42: the engine-parity cases through Ibis on a real PostgreSQL server give the Polars outcome.

Each case of ``tests/contract/parity_cases.py`` is loaded into PostgreSQL (8 rows each, one table per
case) and every door runs on the Ibis table: the same report (numbers to 1e-9 relative) or the same
clear error as on Polars.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "contract"))
from parity import Outcome, assert_same, doors, run  # noqa: E402
from parity_cases import Case, cases  # noqa: E402

CASES = cases()

#: Cases whose dtypes PostgreSQL (through Ibis) cannot hold: an untyped all-null column, a Duration.
NO_POSTGRES_TYPE = {"all-null label column", "duration key"}

#: Cases where PostgreSQL differs by design: a float sum past Float64 is an error there ("value out of
#: range: overflow"), where Polars sums to inf; the cell table of such weights then raises the clear
#: overflow error the report raises on every engine, instead of holding an infinite Σw.
DIFFERENT = {("overflowing weights", "cells")}


@pytest.fixture(scope="module")
def tables(postgres: Any) -> dict[str, Any]:
    con = postgres.ibis()
    out = {}
    for i, case in enumerate(CASES):
        if case.name in NO_POSTGRES_TYPE:
            continue
        con.create_table(f"parity_{i}", case.df.to_arrow(), overwrite=True)
        out[case.name] = con.table(f"parity_{i}")
    return out


def _doors(case: Case) -> dict[str, Any]:
    """Every door but the cell table's, whose pass the report runs too (the server's time is the
    suite's); the cell table's door runs on the cases that fail or warn, where its message counts."""
    out = {d: door for d, door in doors(case).items() if (case.name, d) not in DIFFERENT}
    return out if case.name in CELLS_TOO else {d: door for d, door in out.items() if d != "cells"}


#: Cases whose cell table also runs on PostgreSQL: weights at the edges of Float64 and the flagged rows.
CELLS_TOO = {"tiny weights", "huge weights", "negative weight", "NaN and null weights", "infinite weight", "weights",
             "zero weights", "one row", "float key: 0/1, -0.0, NaN", "dotted, spaced and quoted names"}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_postgres_agrees_with_polars(case: Case, tables: dict[str, Any]) -> None:
    if case.name in NO_POSTGRES_TYPE:
        pytest.skip("PostgreSQL has no such column type")
    for d, door in _doors(case).items():
        want: Outcome = run(door, case.df)
        got = run(door, tables[case.name])
        assert_same(got, want, f"{case.name} / {d}: postgres vs polars")


def test_overflowing_weights_are_a_clear_error_on_postgres(tables: dict[str, Any]) -> None:
    import polfair as pf

    with pytest.raises(pf.InvalidInputError, match=r"weight='w': the weighted sum of a group overflows Float64"):
        pf.confusion_counts(tables["overflowing weights"], y_true="y", y_pred="p", protected="g", weight="w")


def test_nearly_every_case_runs(tables: dict[str, Any]) -> None:
    assert len(tables) >= len(CASES) - len(NO_POSTGRES_TYPE) and len(tables) >= 60
