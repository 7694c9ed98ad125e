"""Issue 41: the interval kernels once per class of equal small tables (``distinct_rows``), the same floats."""

from __future__ import annotations

import warnings

import numpy as np
import polars as pl
import pytest

import polfair as pf
from polfair.core.intervals import common
from polfair.core.intervals.common import Segments, distinct_rows
from polfair.core.intervals.homogeneity import homogeneity_segments
from polfair.core.intervals.spreads import edf_limits, spread_limits
from polfair.core.report import intervals as report_intervals
from polfair.exceptions import ReportSizeWarning


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.float64).view(np.uint64)


def test_classes_are_the_rows_of_equal_bits_numbered_by_first_appearance():
    rng = np.random.default_rng(0)
    x = rng.integers(0, 4, (600, 2)).astype(np.float64)
    x[::7, 0] = np.nan
    y = rng.integers(0, 2, 600).astype(bool)
    d = distinct_rows([x, y])
    assert d is not None
    keys = [(*map(float.hex, r), bool(b)) for r, b in zip(x.tolist(), y.tolist())]
    firsts = list(dict.fromkeys(keys))  # the distinct rows in order of first appearance
    assert d.first.tolist() == [keys.index(k) for k in firsts]
    assert d.inverse.tolist() == [firsts.index(k) for k in keys]
    assert d.counts.tolist() == [keys.count(k) for k in firsts]
    # 0.0 and -0.0 differ (their kernels' results may)
    z = np.zeros(600)
    z[1::2] = -0.0
    assert distinct_rows([z]).counts.tolist() == [300, 300]  # type: ignore[union-attr]


def test_no_classes_for_few_rows_many_classes_or_a_hash_collision(monkeypatch):
    assert distinct_rows([np.zeros(10)]) is None
    assert distinct_rows([np.arange(1000.0)]) is None  # every row distinct: no gain
    x = np.tile(np.arange(4.0), 250)
    assert distinct_rows([x]) is not None
    assert distinct_rows([np.zeros(1000), np.ones(1000)]).counts.tolist() == [1000]  # type: ignore[union-attr]
    # many rows: an evenly spaced sample that barely repeats gives up early; one that repeats goes on
    hashed: list[int] = []
    real = common._hash
    monkeypatch.setattr(common, "_hash", lambda words, h: hashed.append(h) or real(words, h))
    assert distinct_rows([np.arange(20_000.0)]) is None
    assert hashed and max(hashed) < 3000  # (the sample's rows only)
    monkeypatch.undo()
    assert distinct_rows([np.r_[np.arange(4_000.0), np.zeros(16_000)]]).counts.tolist()[0] == 16_001  # type: ignore[union-attr]
    monkeypatch.setattr(common, "_MIX", np.uint64(0))  # every row the same hash: the check finds it
    assert distinct_rows([x]) is None


def test_spread_and_edf_limits_of_classes_with_counts_equal_every_row():
    rng = np.random.default_rng(1)
    h = 3000
    n = rng.integers(0, 5, h).astype(np.float64)
    p = np.where(n > 0, rng.integers(0, 5, h) / np.maximum(n, 1), np.nan)
    p = np.where(p > 1, 1.0, p)
    fam = np.sort(rng.integers(0, 3, h))
    d = distinct_rows([fam, p, n])
    assert d is not None and d.first.size < h // 10
    f = d.first
    for ci, families in ((0.95, 1), (0.9, np.array([1.0, 2.0, 2.0]))):
        full = spread_limits(p, n, Segments(fam, 3), ci, families)
        once = spread_limits(p[f], n[f], Segments(fam[f], 3), ci, families, counts=d.counts)
        for key in full:
            assert np.array_equal(_bits(full[key]), _bits(once[key])), key
        full = edf_limits(p, n, Segments(fam, 3), ci)
        once = edf_limits(p[f], n[f], Segments(fam[f], 3), ci, counts=d.counts)
        for key in full:
            assert np.array_equal(_bits(full[key]), _bits(once[key])), key


@pytest.mark.parametrize("weighted", [False, True])
def test_homogeneity_sums_of_classes_equal_every_row(weighted):
    rng = np.random.default_rng(2)
    h = 4000
    n = rng.choice([0.0, 1.0, 2.0, 3.0, 1.5], h)  # (1.5: an effective size)
    p = np.where(n > 0, rng.integers(0, 4, h) / np.maximum(n, 1), np.nan)
    p = np.clip(p, 0.0, 1.0)
    seg = np.sort(rng.integers(0, 4, h))
    d = distinct_rows([seg, p, n])
    assert d is not None and d.first.size < h // 10
    f = d.first
    full = homogeneity_segments(p, n, seg, 4, weighted)
    once = homogeneity_segments(p[f], n[f], seg[f], 4, weighted, classes=(d.inverse, d.counts))
    for a, b in zip(full, once):
        assert a.dtype == b.dtype and np.array_equal(a, b) if a.dtype != np.float64 else np.array_equal(_bits(a), _bits(b))
    assert full.stat.min() > 0  # (the statistics are not trivial)


def _cells(weighted: bool, by: bool) -> pl.DataFrame:
    rng = np.random.default_rng(5)
    rows = 4000
    lvl = rng.integers(0, 2500, rows)
    y = rng.integers(0, 2, rows)
    score = np.round(rng.random(rows) * 64) / 64  # dyadic: the cells' sums are exact in any order
    df = pl.DataFrame({
        "lvl": np.char.add("z", lvl.astype(str)), "sex": rng.choice(["f", "m"], rows), "y": y,
        "s": score, "pred": (score >= 0.5).astype(np.int64), "w": rng.choice([0.5, 1.0, 2.0], rows),
        "b": rng.integers(0, 2, rows),
    })  # fmt: skip
    return pf.confusion_counts(df, y_true="y", y_pred="pred", y_score="s", protected=["lvl", "sex"],
                               weight="w" if weighted else None, by="b" if by else None,
                               allow_many_groups=True).collect()  # fmt: skip


@pytest.mark.parametrize(
    ("weighted", "by", "extra"),
    [
        (False, False, {}),
        (False, True, {"reference": "overall"}),
        (False, False, {"reference": "best", "min_sample_size": 2}),
        (True, True, {"privileged": {"sex": "m"}}),
        (False, False, {"max_groups_per_attribute": None}),
    ],
)
def test_reports_with_classes_equal_the_reports_of_every_row(monkeypatch, weighted, by, extra):
    cells = _cells(weighted, by)
    kw = dict(protected=["lvl", "sex"], by="b" if by else None, **extra)
    used: list[int] = []
    real = report_intervals.distinct_rows

    def counted(cols, **k):
        d = real(cols, **k)
        used.append(0 if d is None else int(d.inverse.size))
        return d

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReportSizeWarning)
        monkeypatch.setattr(report_intervals, "distinct_rows", counted)
        rep = pf.report_from_counts(cells, **kw)
        monkeypatch.setattr(report_intervals, "distinct_rows", lambda cols, **k: None)
        every = pf.report_from_counts(cells, **kw)
    # classes were found: the attribute rows' (and, where the sets are limited, the screen's) group
    # rows, and the population's cells
    assert sum(1 for u in used if u > 1000) >= (2 if extra.get("max_groups_per_attribute", 1) is None else 3)
    assert rep.columns == every.columns and rep.height == every.height
    # (the between-group entropy indices' limits of a rolled-up set move in the last bits from run to
    # run, with or without classes: the roll-up's float sums of the benefits' variances)
    noisy = rep["metric"].cast(pl.String).is_in(_ENTROPY).to_numpy() & rep["group"].is_null().to_numpy()
    for c in rep.columns:
        a, b = rep[c], every[c]
        if a.dtype == pl.Float64:
            x, y = a.fill_null(7.0).to_numpy(), b.fill_null(7.0).to_numpy()
            assert np.array_equal(_bits(x[~noisy]), _bits(y[~noisy])), c
            assert np.allclose(x[noisy], y[noisy], rtol=1e-12, atol=0.0), c
            assert a.is_null().equals(b.is_null()), c
        else:
            assert a.equals(b), c


_ENTROPY = [f"between_group_{m}" for m in ("coefficient_of_variation", "generalized_entropy_index", "theil_index")]
