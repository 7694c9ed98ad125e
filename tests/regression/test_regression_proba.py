"""Estimated groups (``protected_proba``) in the regression room: a stage of the one pass (issue 38).

The reference is the weighted estimator computed by hand: every row expanded into one row per group,
weighted by the row's weight times its probability, and audited as an ordinary attribute.
"""

from __future__ import annotations

import warnings

import numpy as np
import polars as pl
import pytest

import polfair as pf
from polfair.exceptions import InvalidInputError, MissingValuesWarning

PP = {"race": {"a": "pa", "b": "pb", "c": None}}
KEYS = ["attribute", "group", "metric"]


def _data(n: int = 3000, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    pa = rng.uniform(0, 1, n)
    pb = rng.uniform(0, 1 - pa)
    sex = rng.choice(["f", "m"], n)
    y = rng.normal(10, 3, n) + (sex == "f") * 1.5 + pa * 2.0
    return pl.DataFrame({
        "y": y, "p": y + rng.normal(0.3, 2, n) * (1 + pb), "sex": sex, "month": rng.integers(1, 3, n),
        "pa": pa, "pb": pb, "w": rng.uniform(0.5, 2, n),
    })  # fmt: skip


def _expanded(df: pl.DataFrame, weight: str | None) -> pl.DataFrame:
    """Each row once per group of the estimated attribute, weighted by (its weight times) the probability."""
    pc = df.with_columns(pc=1.0 - pl.col("pa") - pl.col("pb"))
    w = pl.col(weight) if weight else pl.lit(1.0)
    return pl.concat([pc.with_columns(race=pl.lit(g), __w=w * pl.col(c)) for g, c in (("a", "pa"), ("b", "pb"),
                                                                                       ("c", "pc"))])  # fmt: skip


def _joined(got: pl.DataFrame, want: pl.DataFrame, keys: list[str] = KEYS) -> pl.DataFrame:
    got = got.with_columns(pl.col("attribute", "group", "metric").cast(pl.String))
    want = want.with_columns(pl.col("attribute", "group", "metric").cast(pl.String))
    j = got.join(want, on=keys, suffix="_r", nulls_equal=True)
    assert j.height == got.height == want.height
    return j


def _max_diff(j: pl.DataFrame, col: str) -> float:
    d = (pl.col(col) - pl.col(f"{col}_r")).abs() / pl.max_horizontal(pl.col(f"{col}_r").abs(), pl.lit(1.0))
    return float(j.select(d.max()).item() or 0.0)


@pytest.mark.parametrize("weight", [None, "w"])
@pytest.mark.parametrize("by", [None, "month"])
def test_weighted_estimator_equals_the_hand_expanded_report(weight: str | None, by: str | None) -> None:
    df = _data()
    got = pf.regression_report(df, y_true="y", y_pred="p", protected="sex", weight=weight, by=by,
                               protected_proba=PP, ci=None)  # fmt: skip
    want = pf.regression_report(_expanded(df, weight), y_true="y", y_pred="p", protected=["sex", "race"], weight="__w",
                                by=by, ci=None)  # fmt: skip
    j = _joined(got, want, KEYS if by is None else ["month", *KEYS])
    for col in ("value", "difference", "ratio"):
        assert _max_diff(j, col) < 1e-12, col
    # every input row is counted once: the apportioned rows of the groups add up to the rows
    groups = got.filter(attribute="race", metric="mean_error").filter(pl.col("group").is_not_null())
    assert int(groups["n"].sum()) == df.height
    assert got.filter(attribute="race")["group"].drop_nulls().unique().sort().to_list() == ["a", "b", "c"]


def test_intervals_use_the_effective_sizes_of_the_classification_cells() -> None:
    """Σw²·p_g (not Σ(w·p_g)²): the effective size of an estimated group is (Σ w·p_g)² / Σ w²·p_g."""
    df = _data()
    cells = pf.regression_counts(df, y_true="y", y_pred="p", weight="w", protected_proba=PP)
    g = cells.group_by("race").agg(pl.col("w", "w2").sum(), pl.col("w_exp").max()).sort("race").filter(
        pl.col("race").is_not_null())  # fmt: skip
    pc = 1.0 - df["pa"] - df["pb"]
    for label, p in (("a", df["pa"]), ("b", df["pb"]), ("c", pc)):
        row = g.filter(race=label).row(0, named=True)
        scale = 2.0 ** row["w_exp"]
        assert abs(row["w"] * scale - float((df["w"] * p).sum())) < 1e-9 * float((df["w"] * p).sum())
        assert abs(row["w2"] * scale * scale - float((df["w"] ** 2 * p).sum())) < 1e-9 * float((df["w"] ** 2 * p).sum())


def test_argmax_equals_the_report_of_the_likeliest_group() -> None:
    df = _data().with_columns(pc=1.0 - pl.col("pa") - pl.col("pb"))
    likeliest = (pl.when((pl.col("pa") >= pl.col("pb")) & (pl.col("pa") >= pl.col("pc"))).then(pl.lit("a"))
                 .when(pl.col("pb") >= pl.col("pc")).then(pl.lit("b")).otherwise(pl.lit("c")))  # fmt: skip
    got = pf.regression_report(df, y_true="y", y_pred="p", protected="sex", protected_proba=PP,
                               proba_assignment="argmax")  # fmt: skip
    want = pf.regression_report(df.with_columns(race=likeliest), y_true="y", y_pred="p", protected=["sex", "race"])
    j = _joined(got, want)
    assert (j["n"] == j["n_r"]).all()
    for col in ("value", "difference", "value_lo", "value_hi", "p_value"):
        assert _max_diff(j, col) < 1e-12, col


def test_missing_probabilities_are_the_null_group_and_invalid_ones_raise() -> None:
    df = _data(400).with_columns(pa=pl.when(pl.int_range(pl.len()) < 7).then(None).otherwise(pl.col("pa")))
    with pytest.warns(MissingValuesWarning, match="7"):
        cells = pf.regression_counts(df, y_true="y", y_pred="p", protected_proba=PP)
    null = cells.filter(pl.col("race").is_null())
    assert int(null["n_missing"].sum()) == 7 and int(null["n"].sum()) == 0
    assert int(cells["n"].sum() + cells["n_missing"].sum()) == df.height
    bad = _data(50).with_columns(pa=pl.when(pl.int_range(pl.len()) == 3).then(1.5).otherwise(pl.col("pa")))
    with pytest.raises(InvalidInputError, match="protected_proba"):
        pf.regression_report(bad, y_true="y", y_pred="p", protected="sex", protected_proba=PP)
    # without the check (regression_cells, a stream's batch) they are counted, in the null group's n_invalid
    from polfair.core.regression import regression_cells

    assert regression_cells(bad.lazy(), y_true="y", y_pred="p").height  # (no estimated attribute: unchanged)


def _batches(df: pl.DataFrame, k: int) -> list[pl.DataFrame]:
    """``k`` batches of uneven sizes, in order."""
    cuts = sorted(np.random.default_rng(k).choice(np.arange(1, df.height), k - 1, replace=False).tolist())
    return [df[a:b] for a, b in zip([0, *cuts], [*cuts, df.height])]


def _hostile(df: pl.DataFrame) -> pl.DataFrame:
    """Unknown probabilities (the null group) and missing outcomes (n_missing of every group)."""
    i = pl.int_range(pl.len())
    return df.with_columns(pl.when(i % 97 == 0).then(None).otherwise(pl.col("pa")).alias("pa"),
                           pl.when(i % 89 == 0).then(None).otherwise(pl.col("y")).alias("y"))  # fmt: skip


def _same_report(got: pl.DataFrame, one: pl.DataFrame, by: str | None) -> None:
    j = _joined(got, one, [*([by] if by else []), *KEYS])
    assert (j["n"] == j["n_r"]).all()  # the rows are apportioned once, from the summed shares: one pass's counts
    for col in ("value", "difference", "ratio", "value_lo", "value_hi", "difference_lo", "difference_hi", "p_value",
                "p_value_adjusted", "n_eff"):  # fmt: skip
        if col in one.columns:
            assert j.filter(pl.col(col).is_null() != pl.col(f"{col}_r").is_null()).height == 0, col
            assert _max_diff(j, col) < 1e-12, col


@pytest.mark.parametrize("k", [1, 3, 7])
@pytest.mark.parametrize(("weight", "by"), [(None, None), ("w", None), (None, "month"), ("w", "month")])
def test_accumulator_over_batches_equals_the_one_shot_report(k: int, weight: str | None, by: str | None) -> None:
    df = _hostile(_data())
    kw = dict(y_true="y", y_pred="p", protected="sex", weight=weight, by=by, protected_proba=PP, on_missing="ignore")
    one = pf.regression_report(df, **kw)
    acc = pf.RegressionAccumulator(**kw)
    for batch in _batches(df, k):
        acc.update(batch)
    whole = pf.regression_counts(df, **kw)
    state = acc.state
    assert state is not None and state.select(pl.selectors.integer()).equals(whole.select(pl.selectors.integer()))
    assert int(state["n"].sum() + state["n_missing"].sum() + state["n_invalid"].sum()) == df.height
    _same_report(acc.compute(), one, by)


def test_accumulator_merge_and_state_keep_the_one_pass_counts() -> None:
    df = _hostile(_data())
    kw = dict(y_true="y", y_pred="p", protected="sex", weight="w", protected_proba=PP, on_missing="ignore")
    one = pf.regression_report(df, **kw)
    parts = _batches(df, 4)
    right = pf.RegressionAccumulator(**kw).update(parts[3]).merge(pf.RegressionAccumulator(**kw).update(parts[2]))
    acc = pf.RegressionAccumulator(**kw).update(parts[1]).merge(right).merge(pf.RegressionAccumulator(**kw).update(parts[0]))
    _same_report(acc.compute(), one, None)
    # a saved table is taken as it is: the rows it holds are apportioned already
    loaded = pf.RegressionAccumulator(**kw).load_state(acc.state)  # type: ignore[arg-type]
    assert loaded.state is not None and loaded.state.equals(acc.state)
    _same_report(loaded.compute(), one, None)


def test_the_estimated_attribute_name_is_checked_like_a_key() -> None:
    with pytest.raises(pf.PolfairError, match="bin"):
        pf.regression_counts(_data(20), y_true="y", y_pred="p", protected_proba={"bin": PP["race"]})
    with pytest.raises(pf.PolfairError, match="proba_assignment"):
        pf.regression_report(_data(20), y_true="y", y_pred="p", protected="sex", proba_assignment="argmax")


def test_duckdb_runs_the_same_stage() -> None:
    duckdb = pytest.importorskip("duckdb")
    pytest.importorskip("narwhals")
    df = _data(1000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = pf.regression_report(duckdb.from_arrow(df.to_arrow()), y_true="y", y_pred="p", protected="sex",
                                   weight="w", protected_proba=PP)  # fmt: skip
    want = pf.regression_report(df, y_true="y", y_pred="p", protected="sex", weight="w", protected_proba=PP)
    j = _joined(got, want)
    assert (j["n"] == j["n_r"]).all()
    for col in ("value", "difference", "value_lo", "p_value"):
        assert _max_diff(j, col) < 1e-9, col


def test_protected_may_be_omitted_with_an_estimated_attribute() -> None:
    df = _data(500)
    alone = pf.regression_report(df, y_true="y", y_pred="p", protected_proba=PP)
    assert alone["attribute"].drop_nulls().unique().to_list() == ["race"]
    with_sex = pf.regression_report(df, y_true="y", y_pred="p", protected="sex", protected_proba=PP)
    j = _joined(alone, with_sex.filter(pl.col("attribute").is_null() | (pl.col("attribute") == "race")))
    assert _max_diff(j, "value") < 1e-12
    with pytest.raises(pf.PolfairError, match="protected_proba"):
        pf.regression_report(df, y_true="y", y_pred="p")
