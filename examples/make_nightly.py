"""Write a synthetic nightly decision table: 30 days of loan decisions with a drifting disparity.

Usage: ``python examples/make_nightly.py nightly.parquet [--rows-per-day 4000]``

Columns: ``date`` (Date), ``sex`` (F/M), ``race`` (A/B/C/D; D is small), ``age`` (Int64), ``repaid``
(the label, 1 = repaid: the favorable outcome), ``approved`` (the decision, 1 = approved: predicted
favorable). Women's approval rate drifts around four fifths of men's, so some days are violations,
some inconclusive, some ok; group D is small enough for wide intervals. Seeded: the same file every
time.
"""

from __future__ import annotations

import argparse
import datetime as dt

import numpy as np
import polars as pl


def nightly(rows_per_day: int = 4000, days: int = 30, seed: int = 7) -> pl.DataFrame:
    """The table (see the module docstring)."""
    rng = np.random.default_rng(seed)
    parts = []
    for d in range(days):
        n = rows_per_day
        sex = rng.choice(["F", "M"], n, p=[0.4, 0.6])
        race = rng.choice(["A", "B", "C", "D"], n, p=[0.5, 0.3, 0.17, 0.03])
        age = rng.integers(18, 80, n)
        repaid = (rng.random(n) < 0.7).astype(np.int64)
        # men are approved at 55%; women at 0.72-0.92 of that, drifting over the month
        ratio_f = 0.82 + 0.09 * np.sin(d / 4.0)
        base = np.where(sex == "F", 0.55 * ratio_f, 0.55)
        base = base * np.where(race == "C", 0.9, 1.0) * np.where(race == "D", 0.8, 1.0)
        approved = (rng.random(n) < base + 0.15 * (repaid - 0.7)).astype(np.int64)
        parts.append(pl.DataFrame({
            "date": [dt.date(2026, 5, 1) + dt.timedelta(days=d)] * n, "sex": sex, "race": race, "age": age,
            "repaid": repaid, "approved": approved,
        }))  # fmt: skip
    return pl.concat(parts)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", help="output parquet file")
    parser.add_argument("--rows-per-day", type=int, default=4000)
    args = parser.parse_args()
    table = nightly(args.rows_per_day)
    table.write_parquet(args.path)
    print(f"wrote {table.height:,} rows ({table['date'].n_unique()} days) to {args.path}")
