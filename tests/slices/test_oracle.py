"""slice_scan against the PyPI package ``sliceline`` 0.3.0 (the oracle): the same top k, bit for bit.

On data nobody here wrote (UCI Adult and ProPublica's COMPAS, bundled), with the same features, errors,
alpha, k, max_level (``max_l``) and min_support (``min_sup``), slice_scan returns the slices sliceline
returns, in its order, with the same scores (to 1e-9), sizes, error sums and largest errors; the same
holds for random frames (hypothesis) and through DuckDB.
"""

from __future__ import annotations

import warnings

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polfair as pf

sliceline = pytest.importorskip("sliceline.slicefinder")


def oracle(df: pl.DataFrame, features: list[str], errors: str, **kw: object) -> list[tuple]:
    X = df.select(features).to_pandas()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sliceline warns that numba is not installed
        sf = sliceline.Slicefinder(verbose=False, **kw).fit(X, df[errors].cast(pl.Float64).to_numpy())
    return [
        (tuple(s), st["slice_score"], st["sum_slice_error"], st["max_slice_error"], int(st["slice_size"]))
        for s, st in zip(sf.top_slices_.tolist(), sf.top_slices_statistics_)
    ]


def ours(data: object, features: list[str], errors: str, *, alpha: float, k: int, max_l: int, min_sup: float) -> list[tuple]:
    out = pf.slice_scan(data, features=features, errors=errors, alpha=alpha, k=k, max_level=max_l, min_support=min_sup,
                        bins=None, ci=None, p_adjust=None)  # fmt: skip
    return [(tuple(r[f] for f in features), r["score"], r["error_sum"], r["error_max"], r["n"]) for r in out.iter_rows(named=True)]


def assert_same(got: list[tuple], want: list[tuple]) -> None:
    assert [g[0] for g in got] == [w[0] for w in want]
    for g, w in zip(got, want):
        assert g[1] == pytest.approx(w[1], abs=1e-9, rel=0)
        assert g[2] == pytest.approx(w[2], abs=1e-9, rel=0)
        assert g[3] == w[3]
        assert g[4] == w[4]


@pytest.fixture(scope="module")
def adult() -> pl.DataFrame:
    a = pf.load_adult()
    cats = ["workclass", "education", "marital_status", "occupation", "relationship", "race", "sex", "native_country"]
    return a.select(
        *[pl.col(c).cast(pl.String).fill_null("?") for c in cats],  # sliceline refuses missing values
        (pl.col("age") // 10 * 10).alias("age10"),
        (pl.col("hours_per_week") // 10 * 10).alias("hours10"),
        # a model: "more than 50K" predicted for a bachelor's degree or more
        ((pl.col("education_num") >= 13).cast(pl.Int8) != pl.col("income_gt_50k")).cast(pl.Int64).alias("err"),
    )


@pytest.fixture(scope="module")
def compas() -> pl.DataFrame:
    c = pf.load_compas()
    return c.select(
        pl.col("race", "sex", "age_cat", "c_charge_degree").cast(pl.String),
        pl.col("priors_count").clip(upper_bound=10),
        pl.col("juv_fel_count").clip(upper_bound=2),
        ((pl.col("decile_score") >= 5).cast(pl.Int64) != pl.col("two_year_recid")).cast(pl.Int64).alias("err"),
        # a squared error of the decile as a score (dyadic: every sum exact, so ties are ties on both sides)
        ((pl.col("decile_score") / 8 - pl.col("two_year_recid")) ** 2).alias("sq"),
    )


ADULT = ["workclass", "education", "marital_status", "occupation", "relationship", "race", "sex", "native_country",
         "age10", "hours10"]  # fmt: skip
COMPAS = ["race", "sex", "age_cat", "c_charge_degree", "priors_count", "juv_fel_count"]


@pytest.mark.slow
@pytest.mark.parametrize("params", [dict(alpha=0.95, k=10, max_l=2, min_sup=32), dict(alpha=0.9, k=4, max_l=2, min_sup=0.01)])
def test_adult_level_2_equals_sliceline(adult: pl.DataFrame, params: dict) -> None:
    want = oracle(adult, ADULT, "err", **params)
    assert len(want) >= params["k"]
    assert_same(ours(adult, ADULT, "err", **params), want)


@pytest.mark.slow
def test_adult_level_3_equals_sliceline(adult: pl.DataFrame) -> None:
    feats = ["education", "marital_status", "relationship", "race", "sex", "age10"]
    params = dict(alpha=0.9, k=12, max_l=3, min_sup=50)
    want = oracle(adult, feats, "err", **params)
    assert any(len([v for v in w[0] if v is not None]) == 3 for w in want)  # the search reaches level 3
    assert_same(ours(adult, feats, "err", **params), want)


@pytest.mark.parametrize("errors", ["err", "sq"])
@pytest.mark.parametrize(
    "params",
    [dict(alpha=0.95, k=10, max_l=3, min_sup=32), dict(alpha=0.99, k=3, max_l=4, min_sup=10),
     dict(alpha=0.97, k=25, max_l=3, min_sup=0.02), dict(alpha=1.0, k=5, max_l=2, min_sup=0)],
)  # fmt: skip
def test_compas_equals_sliceline(compas: pl.DataFrame, errors: str, params: dict) -> None:
    want = oracle(compas, COMPAS, errors, **params)
    assert want, "the case must return slices to compare"
    assert_same(ours(compas, COMPAS, errors, **params), want)


def test_compas_through_duckdb_and_a_lazy_frame_equals_sliceline(compas: pl.DataFrame) -> None:
    duckdb = pytest.importorskip("duckdb")
    pytest.importorskip("narwhals")
    params = dict(alpha=0.95, k=10, max_l=3, min_sup=20)
    want = oracle(compas, COMPAS, "sq", **params)
    assert_same(ours(duckdb.from_arrow(compas.to_arrow()), COMPAS, "sq", **params), want)
    assert_same(ours(compas.lazy(), COMPAS, "sq", **params), want)


def test_ties_at_the_kth_score_are_all_kept_in_sliceline_order() -> None:
    # four symmetric slices tie at the top: k=1 returns all of them, ordered as sliceline orders them
    a, b = ["x", "y"] * 50, ["u"] * 50 + ["v"] * 50
    df = pl.DataFrame({"a": a, "b": b, "err": [int((p, q) in (("x", "u"), ("y", "v"))) for p, q in zip(a, b)]})
    params = dict(alpha=0.95, k=1, max_l=2, min_sup=1)
    want = oracle(df, ["a", "b"], "err", **params)
    assert len(want) > 1
    assert_same(ours(df, ["a", "b"], "err", **params), want)


@st.composite
def frames(draw: st.DrawFn) -> tuple[pl.DataFrame, list[str], dict]:
    n = draw(st.integers(20, 250))
    n_features = draw(st.integers(1, 5))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    cols = {f"f{j}": rng.integers(0, draw(st.integers(1, 5)), n) for j in range(n_features)}
    hot = (cols["f0"] == 1) if n_features else np.zeros(n, bool)
    p = 0.15 + 0.5 * hot
    # dyadic errors (exact sums: a tie is a tie in both implementations)
    err = (rng.random(n) < p) * np.floor(rng.random(n) * 8 + draw(st.sampled_from([1, 8]))) / 8
    df = pl.DataFrame(cols | {"err": np.minimum(err, 1.0)})
    params = dict(
        alpha=draw(st.sampled_from([0.5, 0.8, 0.95, 1.0])), k=draw(st.integers(1, 8)), max_l=draw(st.integers(1, 4)),
        min_sup=draw(st.one_of(st.integers(0, 25), st.sampled_from([0.01, 0.05, 0.2]))),
    )  # fmt: skip
    return df, list(cols), params


@settings(max_examples=60, deadline=None)
@given(frames())
def test_random_frames_equal_sliceline(case: tuple[pl.DataFrame, list[str], dict]) -> None:
    df, feats, params = case
    assert_same(ours(df, feats, "err", **params), oracle(df, feats, "err", **params))
