"""The whole report reads its input exactly once (a source that counts its scans)."""

from __future__ import annotations

import polars as pl
import pytest
from counting_source import CountingSource

import polfair as pf


def _frame(n: int = 5000) -> pl.DataFrame:
    i = pl.int_range(n, eager=True)
    return pl.DataFrame(
        {
            "race": (i % 3).replace_strict({0: "a", 1: "b", 2: "c"}, return_dtype=pl.String),
            "sex": (i % 2).replace_strict({0: "f", 1: "m"}, return_dtype=pl.String),
            "age": (i % 70 + 18),
            "month": i % 4,
            "y": ((i * 7) % 5 < 2).cast(pl.Int64),
            "p": ((i * 11) % 3 == 0).cast(pl.Int64),
            "s": ((i * 13) % 101) / 100.0,
            "w": (i % 3 + 1).cast(pl.Float64),
        }
    )


FULL = dict(
    y_true="y",
    y_pred="p",
    y_score="s",
    protected=[
        "race",
        "sex",
        pl.when(pl.col("age") < 25).then(pl.lit("<25")).when(pl.col("age") < 45).then(pl.lit("25-44"))
        .otherwise(pl.lit("45+")).alias("age_band"),
    ],
    weight="w",
    by="month",
    privileged={"race": "a", "sex": "m"},
)  # fmt: skip


@pytest.mark.parametrize("engine", ["streaming", "in-memory"])
def test_fairness_report_scans_once(engine: str) -> None:
    df = _frame()
    src = CountingSource(df)
    rep = pf.fairness_report(src.lazy(), **FULL, engine=engine)
    assert src.scans == 1
    assert src.rows_read == df.height
    # the report has every kind of row: groups of every attribute set, intersections, population
    # rows with entropy indices and EDF, for every by value
    assert set(rep["attribute"].drop_nulls().unique()) == {
        "race", "sex", "age_band", "race & sex", "race & age_band", "sex & age_band", "race & sex & age_band"
    }  # fmt: skip
    pop = set(rep.filter(pl.col("attribute").is_null())["metric"])
    assert {"generalized_entropy_index", "between_all_groups_theil_index",
            "smoothed_empirical_differential_fairness", "differential_fairness_bias_amplification"} <= pop  # fmt: skip
    assert rep["month"].n_unique() == 4
    # and it equals the report from the plain DataFrame (weighted sums up to summation order)
    from polars.testing import assert_frame_equal

    assert_frame_equal(rep, pf.fairness_report(df, **FULL, engine=engine), check_exact=False, rel_tol=1e-12)


def test_labels_only_report_scans_once() -> None:
    src = CountingSource(_frame())
    pf.fairness_report(src.lazy(), y_true="y", protected=["race", "sex"])
    assert src.scans == 1


def test_missing_values_still_one_scan() -> None:
    df = _frame().with_columns(pl.when(pl.col("age") == 30).then(None).otherwise(pl.col("y")).alias("y"))
    src = CountingSource(df)
    with pytest.warns(pf.MissingValuesWarning):
        pf.fairness_report(src.lazy(), y_true="y", y_pred="p", protected="race")
    assert src.scans == 1


def test_confusion_counts_is_lazy_and_one_scan() -> None:
    src = CountingSource(_frame())
    lf = pf.confusion_counts(src.lazy(), **{k: v for k, v in FULL.items() if k != "privileged"})
    assert isinstance(lf, pl.LazyFrame)
    assert src.scans == 0, "confusion_counts must not read the data before .collect()"
    cells = lf.collect()
    assert src.scans == 1
    assert cells["n"].sum() == 5000
    # the plan holds exactly one scan of the source and one group_by over it
    plan = pf.confusion_counts(src.lazy(), y_true="y", y_pred="p", protected="race").explain()
    assert plan.count("counting") == 1, plan


def test_parquet_path_is_scanned_lazily(tmp_path) -> None:
    path = tmp_path / "d.parquet"
    _frame().write_parquet(path)
    lf = pf.confusion_counts(str(path), y_true="y", y_pred="p", protected="race")
    plan = lf.explain()
    assert plan.count("Parquet SCAN") == 1, plan
    assert lf.collect()["n"].sum() == 5000


def test_error_path_may_read_again_but_valid_path_does_not() -> None:
    """Invalid data raises after the one pass; fetching example values is a documented 2nd query."""
    df = _frame().with_columns(pl.when(pl.col("age") == 30).then(1.5).otherwise(pl.col("s")).alias("s"))
    src = CountingSource(df)
    with pytest.raises(pf.InvalidInputError, match="y_score"):
        pf.fairness_report(src.lazy(), y_true="y", y_score="s", protected="race")
    assert src.scans <= 2
