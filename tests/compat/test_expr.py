"""polfair.compat.fairlearn against a naive NumPy reference; contexts (select, group_by, over, lazy); edge cases."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import polfair.compat.fairlearn as pfx
from polfair.core.metrics import METRICS
from polfair.exceptions import PolfairError

SETTINGS = settings(max_examples=60, deadline=None)

RATES = ["selection_rate", "base_rate", "true_positive_rate", "true_negative_rate", "false_positive_rate",
         "false_negative_rate", "positive_predictive_value", "negative_predictive_value",
         "false_discovery_rate", "false_omission_rate", "accuracy", "error_rate"]  # fmt: skip


# ---- naive NumPy reference (written independently of polfair.core.metrics) ----------------------


def np_rate(name: str, y: np.ndarray, p: np.ndarray, w: np.ndarray) -> float | None:
    t, q = y == 1, p == 1
    sums = {
        "selection_rate": (w[q].sum(), w.sum()),
        "base_rate": (w[t].sum(), w.sum()),
        "true_positive_rate": (w[t & q].sum(), w[t].sum()),
        "true_negative_rate": (w[~t & ~q].sum(), w[~t].sum()),
        "false_positive_rate": (w[~t & q].sum(), w[~t].sum()),
        "false_negative_rate": (w[t & ~q].sum(), w[t].sum()),
        "positive_predictive_value": (w[t & q].sum(), w[q].sum()),
        "negative_predictive_value": (w[~t & ~q].sum(), w[~q].sum()),
        "false_discovery_rate": (w[~t & q].sum(), w[q].sum()),
        "false_omission_rate": (w[t & ~q].sum(), w[~q].sum()),
        "accuracy": (w[t == q].sum(), w.sum()),
        "error_rate": (w[t != q].sum(), w.sum()),
    }
    num, den = sums[name]
    return None if den <= 0 else num / den


def np_groups(name: str, y, p, w, g) -> dict:
    return {k: np_rate(name, y[g == k], p[g == k], w[g == k]) for k in np.unique(g)}


def np_difference(name, y, p, w, g, method):
    vals = list(np_groups(name, y, p, w, g).values())
    if any(v is None for v in vals):
        return None
    if method == "between_groups":
        return max(vals) - min(vals)
    overall = np_rate(name, y, p, w)
    return None if overall is None else max(abs(v - overall) for v in vals)


def np_ratio(name, y, p, w, g, method):
    vals = list(np_groups(name, y, p, w, g).values())
    if any(v is None for v in vals):
        return None
    if method == "between_groups":
        return None if max(vals) == 0 else min(vals) / max(vals)
    overall = np_rate(name, y, p, w)
    if not overall:
        return None
    r = [v / overall for v in vals]
    return min(x if x <= 1 else 1 / x for x in r)


def np_multiclass_dpd(p, w, g) -> float:
    """ignite: per class, max - min over groups of the selection rate; max over classes."""
    groups, classes = np.unique(g), np.unique(p)
    rates = np.array([[w[(g == k) & (p == c)].sum() / w[g == k].sum() for c in classes] for k in groups])
    return float((rates.max(axis=0) - rates.min(axis=0)).max())


@st.composite
def data(draw: st.DrawFn, k: int = 2) -> tuple[pl.DataFrame, dict]:
    n = draw(st.integers(1, 50))
    ints = lambda hi: st.lists(st.integers(0, hi), min_size=n, max_size=n)  # noqa: E731
    y, p, g = draw(ints(k - 1)), draw(ints(k - 1)), draw(ints(3))
    w = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    df = pl.DataFrame({"y": y, "p": p, "g": g, "w": w}, schema_overrides={"w": pl.Float64})
    arrs = {c: df[c].to_numpy() for c in df.columns}
    return df, arrs


def _eq(ours: float | None, ref: float | None) -> bool:
    if ref is None or ours is None:
        return ours is None and ref is None
    return math.isclose(ours, ref, rel_tol=1e-12, abs_tol=1e-12)


@SETTINGS
@given(d=data(), weighted=st.booleans())
def test_rates_equal_numpy_reference(d, weighted: bool) -> None:
    df, a = d
    w = a["w"] if weighted else np.ones(df.height)
    sw = "w" if weighted else None
    out = df.select([getattr(pfx, n)("y", "p", sample_weight=sw) for n in RATES]).row(0, named=True)
    by = df.group_by("g").agg([getattr(pfx, n)("y", "p", sample_weight=sw) for n in RATES])
    for n in RATES:
        assert _eq(out[n], np_rate(n, a["y"], a["p"], w)), n
        for k, ref in np_groups(n, a["y"], a["p"], w, a["g"]).items():
            assert _eq(by.filter(g=k)[n].item(), ref), (n, k)


@SETTINGS
@given(d=data(), weighted=st.booleans(), method=st.sampled_from(["between_groups", "to_overall"]))
def test_group_aggregates_equal_numpy_reference(d, weighted: bool, method: str) -> None:
    df, a = d
    w = a["w"] if weighted else np.ones(df.height)
    sw = "w" if weighted else None
    for n in ("selection_rate", "true_positive_rate", "false_positive_rate", "positive_predictive_value"):
        kw = dict(sensitive_features="g", sample_weight=sw, method=method)
        got = df.select(pfx.group_difference(n, "y", "p", **kw), pfx.group_ratio(n, "y", "p", **kw)).row(0)
        assert _eq(got[0], np_difference(n, a["y"], a["p"], w, a["g"], method)), n
        assert _eq(got[1], np_ratio(n, a["y"], a["p"], w, a["g"], method)), n


@SETTINGS
@given(d=data(k=4), weighted=st.booleans())
def test_multiclass_dpd_equals_numpy_reference(d, weighted: bool) -> None:
    df, a = d
    w = a["w"] + 1.0 if weighted else np.ones(df.height)  # positive weights: every group defined
    df = df.with_columns(w=pl.Series(w))
    e = pfx.demographic_parity_difference("y", "p", sensitive_features="g", pos_label=None,
                                          sample_weight="w" if weighted else None)  # fmt: skip
    got = df.select(e).item()
    assert math.isclose(got, np_multiclass_dpd(a["p"], w, a["g"]), abs_tol=1e-12)
    # per model (group_by) and as a window: same value per model
    two = pl.concat([df.with_columns(m=pl.lit(0)), df.with_columns(m=pl.lit(1), p=pl.lit(0, pl.Int64))])
    per = two.group_by("m").agg(e).sort("m")["demographic_parity_difference"].to_list()
    assert math.isclose(per[0], got, abs_tol=1e-12) and per[1] == 0.0
    assert two.select(e.over("m"))["demographic_parity_difference"].to_list() == [per[0]] * df.height + [0.0] * df.height


@SETTINGS
@given(d=data(k=2))
def test_multiclass_dpd_on_binary_equals_binary_dpd(d) -> None:
    df, _ = d
    binary = df.select(pfx.demographic_parity_difference("y", "p", sensitive_features="g")).item()
    every = df.select(pfx.demographic_parity_difference("y", "p", sensitive_features="g", pos_label=None)).item()
    assert math.isclose(binary, every, abs_tol=1e-12)


def test_ignite_documented_multiclass_example() -> None:
    # peers.md §2: G0 rates [0.5, 0.5, 0], G1 rates [0.5, 0, 0.5] -> per class [0, 0.5, 0.5] -> 0.5
    df = pl.DataFrame({"y": [0, 0, 0, 0], "p": [0, 1, 0, 2], "g": [0, 0, 1, 1]})
    assert df.select(pfx.demographic_parity_difference("y", "p", sensitive_features="g", pos_label=None)).item() == 0.5


@pytest.fixture
def frame() -> pl.DataFrame:
    rng = np.random.default_rng(0)
    n = 400
    return pl.DataFrame({
        "y": rng.integers(0, 2, n), "p": rng.integers(0, 2, n), "sex": rng.choice(["f", "m"], n),
        "race": rng.choice(["a", "b", "c"], n), "model": rng.choice(["m1", "m2"], n), "w": rng.random(n),
    })  # fmt: skip


def test_contexts_agree(frame: pl.DataFrame) -> None:
    e = pfx.equalized_odds_difference("y", "p", sensitive_features=["sex", "race"], sample_weight="w")
    per_model = frame.group_by("model").agg(e).sort("model")
    lazy = frame.lazy().group_by("model").agg(e).sort("model").collect(engine="streaming")
    assert_frame_equal(per_model, lazy)
    direct = [frame.filter(model=m).select(e).item() for m in ("m1", "m2")]
    assert per_model["equalized_odds_difference"].to_list() == pytest.approx(direct, abs=1e-12)
    windowed = frame.with_columns(e.over("model")).group_by("model").agg(pl.col("equalized_odds_difference").first())
    assert windowed.sort("model")["equalized_odds_difference"].to_list() == pytest.approx(direct, abs=1e-12)


def test_intersectional_groups_equal_concatenated_key(frame: pl.DataFrame) -> None:
    two = frame.select(pfx.demographic_parity_difference("y", "p", sensitive_features=["sex", "race"])).item()
    key = frame.with_columns(k=pl.concat_str("sex", "race"))
    one = key.select(pfx.demographic_parity_difference("y", "p", sensitive_features="k")).item()
    assert two == one


def test_expressions_as_inputs(frame: pl.DataFrame) -> None:
    df = frame.with_columns(score=pl.col("p") * 0.8 + 0.1, label=pl.when(pl.col("y") == 1).then(pl.lit("yes")).otherwise(pl.lit("no")))
    ref = df.select(pfx.true_positive_rate("y", "p")).item()
    assert df.select(pfx.true_positive_rate("y", pl.col("score") >= 0.5)).item() == ref
    yes_pred = pl.when(pl.col("p") == 1).then(pl.lit("yes")).otherwise(pl.lit("no"))
    assert df.select(pfx.true_positive_rate("label", yes_pred, pos_label="yes")).item() == ref
    assert df.select(pfx.demographic_parity_difference("y", "p", sensitive_features=pl.col("race") == "a")).item() \
        == df.with_columns(ra=pl.col("race") == "a").select(pfx.demographic_parity_difference("y", "p", sensitive_features="ra")).item()  # fmt: skip


def test_nulls_are_left_out_and_null_group_is_a_group() -> None:
    df = pl.DataFrame({"y": [1, 1, None, 0, 1], "p": [1, 0, 1, None, 1], "g": ["a", "a", "a", "b", None]})
    assert df.select(pfx.true_positive_rate("y", "p")).item() == pytest.approx(2 / 3)
    assert df.select(pfx.selection_rate("y", "p")).item() == pytest.approx(2 / 3)
    by = df.group_by("g").agg(pfx.selection_rate("y", "p")).sort("g", nulls_last=False)
    # null is its own group; "b" has no valid row, so its rate is undefined (null)
    assert by["selection_rate"].to_list() == [1.0, 0.5, None]
    assert df.select(pfx.demographic_parity_difference("y", "p", sensitive_features="g")).item() is None


def test_zero_weights_make_rates_undefined() -> None:
    df = pl.DataFrame({"y": [1, 0], "p": [1, 0], "w": [0.0, 0.0]})
    assert df.select(pfx.selection_rate("y", "p", sample_weight="w")).item() is None


def test_metric_and_aliases_match_named_functions(frame: pl.DataFrame) -> None:
    assert frame.select(pfx.metric("recall", "y", "p")).item() == frame.select(pfx.true_positive_rate("y", "p")).item()
    assert frame.select(pfx.metric("precision", "y", "p")).item() == frame.select(
        pfx.positive_predictive_value("y", "p")).item()  # fmt: skip
    counts = frame.select(pfx.metric("num_true_positives", "y", "p")).item()
    assert counts == float(((frame["y"] == 1) & (frame["p"] == 1)).sum())
    # every rate of the registry (bar the score-based ones) has an expression
    assert set(RATES) <= set(pfx.EXPR_METRICS) <= set(METRICS)


def test_output_names_do_not_collide(frame: pl.DataFrame) -> None:
    out = frame.select(
        pfx.demographic_parity_difference("y", "p", sensitive_features="sex"),
        pfx.demographic_parity_ratio("y", "p", sensitive_features="sex"),
        pfx.equalized_odds_difference("y", "p", sensitive_features="sex"),
        pfx.equalized_odds_ratio("y", "p", sensitive_features="sex"),
        pfx.equal_opportunity_difference("y", "p", sensitive_features="sex"),
        pfx.equal_opportunity_ratio("y", "p", sensitive_features="sex"),
    )
    assert out.width == 6


def test_errors_name_the_argument() -> None:
    with pytest.raises(PolfairError, match="method must be one of"):
        pfx.demographic_parity_difference("y", "p", sensitive_features="g", method="pairwise")  # type: ignore[arg-type]
    with pytest.raises(PolfairError, match="agg must be one of"):
        pfx.equalized_odds_difference("y", "p", sensitive_features="g", agg="max")  # type: ignore[arg-type]
    with pytest.raises(PolfairError, match="unknown metric 'recal'"):
        pfx.metric("recal", "y", "p")
    with pytest.raises(PolfairError, match="pos_label=None"):
        pfx.true_positive_rate("y", "p", pos_label=None)
    with pytest.raises(PolfairError, match="between_groups"):
        pfx.demographic_parity_difference("y", "p", sensitive_features="g", pos_label=None, method="to_overall")
    with pytest.raises(PolfairError, match="sensitive_features must name at least one"):
        pfx.demographic_parity_difference("y", "p", sensitive_features=[])
    with pytest.raises(TypeError, match="y_pred must be a column name"):
        pfx.selection_rate("y", 3)  # type: ignore[arg-type]
