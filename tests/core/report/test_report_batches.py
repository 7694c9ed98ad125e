"""report_batches: the report in consecutive batches equals report_from_counts, whatever the batch size."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polfair as pf
from polfair.core.report.build import report_batches
from polfair.exceptions import PolfairError


def _cells(weighted: bool, by: bool, seed: int = 3) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    n = 900
    df = pl.DataFrame({
        "y": rng.binomial(1, 0.3, n), "p": rng.binomial(1, 0.25, n), "s": rng.uniform(0, 1, n),
        "a": rng.choice(["x", "y", "z", "w"], n, p=[0.5, 0.3, 0.15, 0.05]), "b": rng.choice(["u", "v"], n),
        "d": rng.integers(0, 3, n), "w": rng.lognormal(0, 0.4, n),
    })  # fmt: skip
    return pf.confusion_counts(df, y_true="y", y_pred="p", y_score="s", protected=["a", "b"], by="d" if by else None,
                               weight="w" if weighted else None).collect()  # fmt: skip


CASES = [
    dict(),
    dict(reference="best"),
    dict(reference="overall", p_adjust="holm"),
    dict(privileged={"a": "x", "b": "u"}, p_adjust="by"),
    dict(ci=None),
    dict(intersections=1, p_adjust=None),
]


@pytest.mark.parametrize("kw", CASES)
@pytest.mark.parametrize(("weighted", "by"), [(False, False), (True, True)])
def test_batches_equal_the_report(kw: dict, weighted: bool, by: bool) -> None:
    cells = _cells(weighted, by)
    args = dict(protected=["a", "b"], by="d" if by else None, **kw)
    want = pf.report_from_counts(cells, **args)
    # one row per batch (every entity its own batch) once; otherwise a few batches and one
    for rows in ((1, 37, 10**7) if not kw and not by else (37, 10**7)):
        got = list(report_batches(cells, **args, batch_rows=rows))
        assert len(got) >= (2 if rows < want.height // 2 else 1)
        assert max(g.height for g in got) <= rows + 60  # a batch ends with an entity's rows
        assert pl.concat(got).equals(want), (kw, rows)


def test_batches_of_a_labels_only_report() -> None:
    cells = _cells(False, True).with_columns()
    want = pf.report_from_counts(cells, protected=["a", "b"], by="d", has_predictions=False)
    got = pl.concat(report_batches(cells, protected=["a", "b"], by="d", has_predictions=False, batch_rows=40))
    assert got.equals(want)


@settings(max_examples=6, deadline=None)
@given(rows=st.integers(20, 3000), seed=st.integers(0, 5))
def test_any_batch_size(rows: int, seed: int) -> None:
    cells = _cells(bool(seed % 2), True, seed)
    args = dict(protected=["a", "b"], by="d", reference="best" if seed % 3 == 0 else None)
    assert pl.concat(report_batches(cells, **args, batch_rows=rows)).equals(pf.report_from_counts(cells, **args))


def test_batch_rows_is_checked() -> None:
    with pytest.raises(PolfairError, match="batch_rows"):
        next(report_batches(_cells(False, False), protected=["a"], batch_rows=0))


def test_user_metrics_come_as_one_batch_equal_to_the_report() -> None:
    cells = _cells(False, True)
    args = dict(protected=["a", "b"], by="d", metrics={"positives": pl.col("tp") + pl.col("fn")})
    got = list(report_batches(cells, **args, batch_rows=30))
    want = pf.report_from_counts(cells, **args)
    assert len(got) == 1 and got[0].equals(want) and "positives" in want["metric"].cast(pl.String).to_list()
