"""FairnessAccumulator: any split/order of batches and any merge tree equals one report."""

from __future__ import annotations

import numpy as np
import polars as pl
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import polfair as pf
from polfair.engines.accumulator import FairnessAccumulator
from polfair.exceptions import InvalidInputError, PolfairError

KW = dict(y_true="y", y_pred="p", protected=["sex", "race"])


@st.composite
def split_data(draw: st.DrawFn):
    n = draw(st.integers(1, 60))
    ints = lambda hi: st.lists(st.integers(0, hi), min_size=n, max_size=n)  # noqa: E731
    df = pl.DataFrame({
        "y": draw(ints(1)), "p": draw(ints(1)),
        "sex": draw(st.lists(st.sampled_from(["f", "m"]), min_size=n, max_size=n)),
        "race": draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=n, max_size=n)),
        "w": [float(v) for v in draw(ints(3))],
        "day": draw(ints(1)),
    })  # fmt: skip
    cuts = sorted(draw(st.lists(st.integers(0, n), max_size=4)))
    bounds = [0, *cuts, n]
    batches = [df[a:b] for a, b in zip(bounds, bounds[1:])]
    order = draw(st.permutations(range(len(batches))))
    return df, [batches[i] for i in order]


@settings(max_examples=30, deadline=None)
@given(d=split_data(), weighted=st.booleans(), by=st.booleans())
def test_batches_in_any_split_and_order_equal_one_report_exactly(d, weighted: bool, by: bool) -> None:
    df, batches = d
    kw = dict(KW, weight="w" if weighted else None, by="day" if by else None)
    acc = FairnessAccumulator(**kw)
    for b in batches:
        acc.update(b)
    # integer weights: every sum is exact, so the cell tables are identical ...
    assert acc.state().equals(pf.confusion_counts(df, **{k: v for k, v in kw.items()}).collect())
    _assert_same_report(acc.compute(), pf.fairness_report(df, **kw))


_ENTROPY = "entropy|theil|coefficient_of_variation"


def _assert_same_report(a: pl.DataFrame, b: pl.DataFrame) -> None:
    """... and so are the reports, bit for bit, except the entropy indices, which
    report_from_counts itself sums in a run-dependent order (last-bit noise, ~1e-16)."""
    exact = pl.col("metric").cast(pl.String).str.contains(_ENTROPY).not_()
    assert_frame_equal(a.filter(exact), b.filter(exact), check_exact=True)
    assert_frame_equal(a.filter(~exact), b.filter(~exact), rel_tol=1e-12, abs_tol=1e-15)


@settings(max_examples=20, deadline=None)
@given(d=split_data())
def test_merge_tree_equals_sequential(d) -> None:
    df, batches = d
    parts = [FairnessAccumulator(**KW).update(b) for b in batches]
    while len(parts) > 1:  # pairwise merge tree
        parts = [parts[i].merge(parts[i + 1]) if i + 1 < len(parts) else parts[i] for i in range(0, len(parts), 2)]
    assert parts[0].state().equals(pf.confusion_counts(df, **KW).collect())
    _assert_same_report(parts[0].compute(), pf.fairness_report(df, **KW))


def test_real_weights_agree_up_to_rounding() -> None:
    rng = np.random.default_rng(0)
    n = 1000
    df = pl.DataFrame({"y": rng.integers(0, 2, n), "p": rng.integers(0, 2, n), "sex": rng.choice(["f", "m"], n),
                       "race": rng.choice(["a", "b"], n), "w": rng.random(n)})  # fmt: skip
    acc = FairnessAccumulator(**KW, weight="w")
    for i in range(0, n, 137):
        acc.update(df[i : i + 137])
    assert_frame_equal(acc.compute(), pf.fairness_report(df, **KW, weight="w"), rel_tol=1e-9, abs_tol=1e-12)


def test_batch_types() -> None:
    df = pl.DataFrame({"y": [1, 0, 1, 0], "p": [1, 1, 0, 0], "sex": ["f", "f", "m", "m"], "race": ["a", "b", "a", "b"]})
    ref = pf.fairness_report(df, **KW)
    as_dict = {c: df[c].to_numpy() for c in df.columns}
    for batch in (df, df.lazy(), df.to_pandas(), df.to_arrow(), as_dict, {c: df[c].to_list() for c in df.columns}):
        _assert_same_report(FairnessAccumulator(**KW).update(batch).compute(), ref)


def test_torch_tensors() -> None:
    torch = pytest.importorskip("torch")
    y = torch.tensor([1, 0, 1, 0])
    p = torch.tensor([0.9, 0.7, 0.2, 0.1], requires_grad=True)
    acc = FairnessAccumulator(y_true="y", y_score="s", protected="g")
    acc.update({"y": y, "s": p, "g": np.array(["a", "a", "b", "b"])})
    ref = pf.fairness_report(pl.DataFrame({"y": [1, 0, 1, 0], "s": [0.9, 0.7, 0.2, 0.1], "g": ["a", "a", "b", "b"]}),
                             y_true="y", y_score="s", protected="g")  # fmt: skip
    assert_frame_equal(acc.compute(), ref, rel_tol=1e-6)  # float32 tensor scores


def test_state_roundtrips(tmp_path) -> None:
    df = pl.DataFrame({"y": [1, 0, 1, 0, 1], "p": [1, 1, 0, 0, 1], "sex": ["f", "f", "m", "m", None],
                       "race": ["a", "b", "a", "b", "a"]})  # fmt: skip
    acc = FairnessAccumulator(**KW).update(df)
    path = tmp_path / "state.parquet"
    acc.save(path)
    loaded = FairnessAccumulator.load(path, **KW)
    assert loaded.state().equals(acc.state())
    _assert_same_report(loaded.compute(), acc.compute())
    table = acc.to_arrow()
    assert isinstance(table, pa.Table) and b"polfair.engines.accumulator" in table.schema.metadata
    _assert_same_report(FairnessAccumulator.from_state(table, **KW).compute(), acc.compute())
    # the state is exactly the cell table of confusion_counts
    assert acc.state().equals(pf.confusion_counts(df, **KW).collect())
    # keep accumulating after a load
    more = loaded.update(df).compute()
    _assert_same_report(more, pf.fairness_report(pl.concat([df, df]), **KW))


def test_reset_empty_and_errors() -> None:
    acc = FairnessAccumulator(**KW)
    assert acc.is_empty and acc.state().height == 0
    with pytest.raises(InvalidInputError, match="no rows yet"):
        acc.compute()
    acc.update(pl.DataFrame({"y": [], "p": [], "sex": [], "race": []}))  # empty eager batch: skipped
    assert acc.is_empty
    acc.update({"y": [1], "p": [1], "sex": ["f"], "race": ["a"]})
    assert not acc.is_empty
    assert acc.reset().is_empty
    other = FairnessAccumulator(y_true="y", y_pred="p", protected="sex")
    with pytest.raises(PolfairError, match="same keys"):
        acc.merge(other)
    with pytest.raises(PolfairError, match="same keys"):
        FairnessAccumulator.from_state(FairnessAccumulator(**KW).update(
            {"y": [1], "p": [1], "sex": ["f"], "race": ["a"]}).to_arrow(), y_true="y", protected="sex")  # fmt: skip
    with pytest.raises(InvalidInputError, match="1-D"):
        acc.update({"y": np.zeros((2, 2)), "p": [1, 1], "sex": ["f", "f"], "race": ["a", "a"]})
    # an invalid batch raises and leaves the state as it was
    acc.update({"y": [1], "p": [1], "sex": ["f"], "race": ["a"]})
    before = acc.state()
    with pytest.raises(InvalidInputError, match="weight"):
        FairnessAccumulator(**KW, weight="w").update({"y": [1], "p": [1], "sex": ["f"], "race": ["a"], "w": [-1.0]})
    assert acc.state().equals(before)


def test_exact_sums_accumulate_bit_for_bit_in_any_split_and_order() -> None:
    # issue 21: with exact_sums=True the accumulator keeps the pass's integer sums, so any split of
    # the rows, in any order, and any tree of merges give the one-pass cell table and report bit for bit
    rng = np.random.default_rng(4)
    n = 6000
    df = pl.DataFrame({
        "y": rng.integers(0, 2, n), "p": rng.integers(0, 2, n), "s": rng.random(n),
        "w": (rng.exponential(1.0, n) + 0.02) * rng.choice([1e-3, 1.0, 1e4], n), "g": rng.choice(["a", "b", "c"], n),
    })  # fmt: skip
    kw = dict(y_true="y", y_pred="p", y_score="s", weight="w", protected="g")
    want = pf.confusion_counts(df, **kw, exact_sums=True).collect()
    report = pf.fairness_report(df, **kw, exact_sums=True)
    shuffled = df.sample(fraction=1.0, shuffle=True, seed=9)
    a = pf.FairnessAccumulator(**kw, exact_sums=True)
    b = pf.FairnessAccumulator(**kw, exact_sums=True)
    for i, start in enumerate(range(0, n, 777)):
        (a if i % 2 else b).update(shuffled[start : start + 777])
    merged = b.merge(a)
    assert_frame_equal(merged.state(), want, check_exact=True)
    assert_frame_equal(merged.compute(), report, check_exact=True)
    # Float64 sums (the default): the same up to the order of the additions
    c = pf.FairnessAccumulator(**kw)
    for start in range(0, n, 777):
        c.update(shuffled[start : start + 777])
    assert_frame_equal(c.state(), want, rel_tol=1e-12)
