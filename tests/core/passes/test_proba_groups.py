"""Groups estimated from proxies (issue 34): ``protected_proba`` (BISG probabilities) in the one pass.

The acceptance test: on a synthetic lending book with BISG probabilities from census-like tables
and a known true race (``pf.make_bisg_lending``), ``fairness_report(protected_proba=...)`` equals
the weighted estimator computed by hand (numpy, ``tests/reference.py``'s independent metric
definitions) to 1e-12 for every count, rate, score and disparity, has an interval on every row
the observed-attribute report has one, and reads its input once. DuckDB and Spark:
``tests/engines/test_proba_engines.py``.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import polars as pl
import pytest
from counting_source import CountingSource
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import disparity_values, div, metric_values, sub

import polfair as pf
from polfair.core.passes.estimated import apportion, row_offset
from polfair.datasets import BISG_GROUPS
from polfair.scores import score_counts

PROBA = {"race": {g: f"p_{g}" for g in BISG_GROUPS}}
PRIVILEGED = {"race": "white", "sex": "male"}
TOL = 1e-12


def _book(n: int = 20_000, seed: int = 3) -> pl.DataFrame:
    df = pf.make_bisg_lending(n, seed=seed)
    rng = np.random.default_rng(seed)
    return df.with_columns(pl.Series("amount", np.round(rng.lognormal(2.0, 0.6, n), 2)))  # a loan-size weight


def _counts(a: np.ndarray, y: np.ndarray, yhat: np.ndarray, s: np.ndarray) -> dict[str, float]:
    """The weighted confusion counts of one group, ``a`` the rows' weights in it."""
    return {
        "w": float(a.sum()), "tp": float(a[y & yhat].sum()), "fp": float(a[~y & yhat].sum()),
        "tn": float(a[~y & ~yhat].sum()), "fn": float(a[y & ~yhat].sum()),
        "gtp": float((a * s)[y].sum()), "gfp": float((a * s)[~y].sum()),
        "gtn": float((a * (1 - s))[~y].sum()), "gfn": float((a * (1 - s))[y].sum()),
    }  # fmt: skip


def _by_hand(df: pl.DataFrame, weight: str | None, assignment: str = "weighted") -> dict[tuple, dict[str, float | None]]:
    """(attribute, group, kind) -> metric values, by the weighted estimator's definition.

    ``kind``: ``"value"`` (group and population rows), ``"difference"`` / ``"ratio"`` (a group
    against its reference; on attribute rows max − min and min / max over the groups).
    """
    p = df.select(f"p_{g}" for g in BISG_GROUPS).to_numpy()
    q = p / p.sum(axis=1, keepdims=True)  # each row's probabilities divided by their sum
    if assignment == "argmax":  # each row in its likeliest group
        q = (np.arange(len(BISG_GROUPS))[None, :] == q.argmax(axis=1)[:, None]).astype(float)
    w = np.ones(df.height) if weight is None else df[weight].to_numpy()
    y, yhat = df["repaid"].to_numpy() == 1, df["approved"].to_numpy() == 1
    s = df["score"].to_numpy()
    sex = df["sex"].to_numpy()
    sets: dict[str, dict[str, np.ndarray]] = {
        "sex": {v: w * (sex == v) for v in ("female", "male")},
        "race": {g: w * q[:, i] for i, g in enumerate(BISG_GROUPS)},
        "sex & race": {f"{v} & {g}": w * (sex == v) * q[:, i] for v in ("female", "male") for i, g in enumerate(BISG_GROUPS)},
    }
    refs = {"sex": "male", "race": "white", "sex & race": "male & white"}
    out: dict[tuple, dict[str, float | None]] = {(None, None, "value"): metric_values(_counts(w, y, yhat, s))}
    for attr, groups in sets.items():
        values = {g: metric_values(_counts(a, y, yhat, s)) for g, a in groups.items()}
        ref = values[refs[attr]]
        for g, v in values.items():
            out[(attr, g, "value")] = {**v, **disparity_values(v, ref)}
            out[(attr, g, "difference")] = {m: sub(v[m], ref[m]) for m in v}
            out[(attr, g, "ratio")] = {m: div(v[m], ref[m]) for m in v}
        spread: dict[str, float | None] = {}
        ratio: dict[str, float | None] = {}
        for m in ref:
            col = [values[g][m] for g in groups]
            defined = all(x is not None for x in col)
            spread[m] = max(col) - min(col) if defined else None  # type: ignore[type-var, operator]
            ratio[m] = div(min(col), max(col)) if defined else None  # type: ignore[type-var]
        spread |= {"demographic_parity_difference": spread["selection_rate"],
                   "equalized_odds_difference": max(spread["true_positive_rate"], spread["false_positive_rate"])}  # type: ignore[type-var]
        spread |= {"demographic_parity_ratio": ratio["selection_rate"],
                   "equalized_odds_ratio": min(ratio["true_positive_rate"], ratio["false_positive_rate"])}  # type: ignore[type-var]
        out[(attr, None, "difference")] = spread
        out[(attr, None, "ratio")] = ratio
    return out


def _close(got: float | None, want: float | None) -> bool:
    if got is None or want is None or (isinstance(got, float) and math.isnan(got)):
        return got is None and want is None
    return abs(got - want) <= TOL * max(1.0, abs(want))


def _compare(report: pl.DataFrame, hand: dict[tuple, dict[str, float | None]]) -> int:
    """Every (row, column) the hand computation defines, compared; returns how many."""
    checked = 0
    for row in report.iter_rows(named=True):
        attr = None if row["attribute"] is None else str(row["attribute"])
        metric = str(row["metric"])
        if attr is not None and row["group"] is None:  # attribute rows: the spreads
            pairs = [("difference", row["difference"]), ("ratio", row["ratio"])]
            if metric in ("demographic_parity_difference", "equalized_odds_difference"):
                pairs = [("difference", row["value"])]
            elif metric in ("demographic_parity_ratio", "equalized_odds_ratio"):
                pairs = [("ratio", row["value"])]
        else:
            pairs = [("value", row["value"])]
            if attr is not None and metric in hand[(attr, row["group"], "difference")]:
                pairs += [("difference", row["difference"]), ("ratio", row["ratio"])]
        for kind, got in pairs:
            want_all = hand[(attr, row["group"], kind)]
            if metric not in want_all:
                continue
            want = want_all[metric]
            assert _close(got, want), (attr, row["group"], metric, kind, got, want)
            checked += 1
    return checked


@pytest.mark.parametrize("weight", [None, "amount"])
def test_report_equals_the_weighted_estimator_by_hand(weight: str | None) -> None:
    """Issue 34's acceptance test: every count, rate, score and disparity, to 1e-12."""
    df = _book()
    report = pf.fairness_report(df, y_true="repaid", y_pred="approved", y_score="score", weight=weight,
                                protected="sex", protected_proba=PROBA, privileged=PRIVILEGED)  # fmt: skip
    checked = _compare(report, _by_hand(df, weight))
    groups = 1 + 2 + 5 + 10  # population, sex, race, sex & race
    assert checked > 40 * groups  # every metric of every group, its difference and ratio, the spreads
    # the estimated attribute is a key like an observed one: groups in the order given
    assert report.filter(attribute="race", metric="selection_rate")["group"].drop_nulls().to_list() == list(BISG_GROUPS)


def test_argmax_equals_the_likeliest_group_by_hand() -> None:
    df = _book(8_000, seed=5)
    report = pf.fairness_report(df, y_true="repaid", y_pred="approved", y_score="score", protected="sex",
                                protected_proba=PROBA, proba_assignment="argmax", privileged=PRIVILEGED)  # fmt: skip
    assert _compare(report, _by_hand(df, None, "argmax")) > 500


def test_interval_on_every_row_as_for_an_observed_attribute() -> None:
    """The same rows have intervals as in the report of the (true) observed race: every rate,
    comparison, spread and population statistic that has one there."""
    df = _book(8_000)
    kw = dict(y_true="repaid", y_pred="approved", y_score="score", weight="amount", privileged=PRIVILEGED)
    est = pf.fairness_report(df, protected="sex", protected_proba=PROBA, **kw)
    obs = pf.fairness_report(df, protected=["sex", "race"], **kw)
    key = ["attribute", "group", "metric"]
    cols = ["value_lo", "value_hi", "difference_lo", "difference_hi", "p_value", "n_eff"]
    shape = lambda r: r.sort(key, nulls_last=True).select(*key, *[pl.col(c).is_not_null() for c in cols])  # noqa: E731
    e, o = shape(est), shape(obs)
    assert e.select(key).equals(o.select(key))
    assert e.equals(o)
    assert est.filter(pl.col("value_lo").is_not_null()).height > 300
    # n_eff of an estimated group's rate: Kish (Σ w·p)² / Σ w²·p over the denominator's rows
    p = df["p_black"].to_numpy() / df.select(pl.sum_horizontal(pl.col("^p_.*$"))).to_series().to_numpy()
    w = df["amount"].to_numpy()
    want = (w * p).sum() ** 2 / (w * w * p).sum()
    got = est.filter(attribute="race", group="black", metric="selection_rate")["n_eff"].item()
    assert got == pytest.approx(want, rel=1e-12)


def test_reads_the_input_once() -> None:
    df = _book(5_000)
    src = CountingSource(df)
    report = pf.fairness_report(src.lazy(), y_true="repaid", y_pred="approved", y_score="score", weight="amount",
                                protected="sex", protected_proba=PROBA, by=pl.col("tract").str.slice(0, 3))  # fmt: skip
    assert src.scans == 1
    assert src.rows_read == df.height
    assert report.filter(pl.col("attribute") == "sex & race").height > 0
    lazy = pf.confusion_counts(src.lazy(), y_true="repaid", y_pred="approved", protected_proba=PROBA)
    assert isinstance(lazy, pl.LazyFrame) and src.scans == 1  # still lazy
    assert lazy.collect()["n"].sum() == df.height and src.scans == 2


def test_observed_attribute_and_population_rows_are_unchanged() -> None:
    """Roll-ups over the estimated attribute give the observed-attribute and population rows of the
    report without it (Σ_g p_g = 1): values, Σw² and intervals (to rounding), and whole row counts."""
    df = _book(6_000)
    kw = dict(y_true="repaid", y_pred="approved", y_score="score", weight="amount", protected="sex")
    est = pf.fairness_report(df, **kw, protected_proba=PROBA, privileged={"sex": "male"})
    obs = pf.fairness_report(df, **kw, privileged={"sex": "male"})
    # (the population's statistics over all cells, between_all_groups_* and EDF, involve the estimated attribute)
    all_cells = pl.col("metric").cast(pl.String).str.contains("between_all_groups|differential_fairness")
    pick = lambda r: r.filter(pl.col("attribute").is_null() | (pl.col("attribute") == "sex"), ~all_cells).sort(  # noqa: E731
        "attribute", "group", "metric", nulls_last=True).select("attribute", "group", "metric", "value", "n",
                                                                "value_lo", "value_hi", "n_eff", "p_value")  # fmt: skip
    a, b = pick(est), pick(obs)
    assert a["n"].equals(b["n"])  # whole rows: apportioned rows add up
    # (the entropy indices' intervals are a cell bootstrap's: they read the finer cells' benefit variances)
    entropy = a["metric"].cast(pl.String).str.contains("entropy|theil|coefficient_of_variation")
    for c in ("value", "value_lo", "value_hi", "n_eff", "p_value"):
        x, y = a[c].to_numpy().astype(float), b[c].to_numpy().astype(float)
        if c in ("value_lo", "value_hi"):  # the entropy indices' intervals read per-cell benefit variances
            x, y = x[~entropy.to_numpy()], y[~entropy.to_numpy()]
        assert np.allclose(x, y, rtol=1e-12, atol=1e-12, equal_nan=True), c


def test_one_hot_probabilities_give_the_observed_attribute_report() -> None:
    """Hard memberships (probabilities 0 or 1) are an observed attribute: the same cell table."""
    df = _book(4_000)
    hot = df.with_columns([(pl.col("race") == g).cast(pl.Float64).alias(f"p_{g}") for g in BISG_GROUPS])
    kw = dict(y_true="repaid", y_pred="approved", y_score="score", weight="amount", protected="sex")
    est = pf.confusion_counts(hot, **kw, protected_proba=PROBA).collect()
    obs = pf.confusion_counts(hot.with_columns(pl.col("race").cast(pl.Enum(list(BISG_GROUPS)))),
                              **{**kw, "protected": ["sex", "race"]}).collect()  # fmt: skip
    from polars.testing import assert_frame_equal

    assert_frame_equal(est, obs, check_exact=False, rel_tol=1e-12)  # (Float64 sums: up to summation order)
    whole = [c for c in obs.columns if obs.schema[c] == pl.UInt64]
    assert est.select(whole).equals(obs.select(whole))


def test_row_counts_are_apportioned_whole_rows() -> None:
    df = _book(3_000)
    cells = pf.confusion_counts(df, y_true="repaid", y_pred="approved", protected="sex", protected_proba=PROBA).collect()
    # every row counted once over the estimated groups, per observed cell
    per_sex = cells.group_by("sex").agg(pl.col("n").sum()).sort("sex")
    assert per_sex["n"].to_list() == df.group_by("sex").len().sort("sex")["len"].to_list()
    # a group's rows are about its expected size Σ p (within one row per outcome code)
    for g in BISG_GROUPS:
        expected = df.filter(sex="female")[f"p_{g}"].sum()
        got = cells.filter(sex="female", race=g)["n"].item()
        assert abs(got - expected) < 4


@settings(max_examples=200, deadline=None)
@given(
    rows=st.lists(st.tuples(st.integers(0, 40), st.lists(st.floats(0, 1), min_size=3, max_size=3),
                            st.floats(0, 1, exclude_max=True)), min_size=1, max_size=6),
)  # fmt: skip
def test_apportion_adds_up_and_is_within_one_row(rows: list[tuple[int, list[float], float]]) -> None:
    long = pl.DataFrame(
        [{"r": i, "n": n, "s": s, "u": u} for i, (n, shares, u) in enumerate(rows) for s in shares],
        schema={"r": pl.Int64, "n": pl.Int64, "s": pl.Float64, "u": pl.Float64},
    )
    got = long.with_columns(apportion(pl.col("n"), pl.col("s"), "r", pl.col("u")).alias("k"))
    for i, (n, shares, _) in enumerate(rows):
        k = got.filter(r=i)["k"].to_list()
        total = sum(shares)
        assert min(k) >= 0
        if total > 0:
            assert sum(k) == n
            assert all(abs(kk - n * s / total) <= 1 for kk, s in zip(k, shares))  # (< 1 in exact arithmetic)
        else:
            assert sum(k) == 0


def test_apportioned_single_rows_do_not_all_go_to_the_likeliest_group() -> None:
    """Rows of one (exact score bins): each goes to one group, and over many rows every group gets
    about its expected share (largest remainder would give them all to the likeliest group)."""
    n = 10_000
    long = pl.DataFrame({"r": np.repeat(np.arange(n), 3), "n": 1, "s": np.tile([0.7, 0.2, 0.1], n)})
    got = long.with_columns(apportion(pl.col("n"), pl.col("s"), "r", row_offset(pl.col("r"))).alias("k"))
    totals = got.with_columns(g=pl.int_range(pl.len()) % 3).group_by("g").agg(pl.col("k").sum()).sort("g")["k"]
    assert all(abs(a - b) <= 2 for a, b in zip(totals.to_list(), [7000, 2000, 1000]))  # golden-ratio offsets
    h = score_counts(_book(4_000), y_true="repaid", y_score="score", protected=None, protected_proba=PROBA)
    expected = _book(4_000).select(pl.col(f"p_{g}").sum() for g in BISG_GROUPS).row(0)
    got_n = [h.filter(race=g)["n"].sum() for g in BISG_GROUPS]
    assert all(abs(a - b) < 3 * math.sqrt(b) + 2 for a, b in zip(got_n, expected)), (got_n, expected)


# -- the contract of the probabilities ----------------------------------------------------------


def _small() -> pl.DataFrame:
    return pl.DataFrame({
        "y": [1, 0, 1, 0, 1, 1], "p": [1, 1, 0, 0, 1, 0], "sex": ["f", "m", "f", "m", "f", "m"],
        "pa": [0.7, 0.2, 0.5, 1.0, 0.0, 0.3], "pb": [0.3, 0.8, 0.5, 0.0, 1.0, 0.7],
    })  # fmt: skip


SMALL = {"g": {"a": "pa", "b": "pb"}}


def test_out_of_range_probabilities_raise_naming_the_columns() -> None:
    df = _small().with_columns(pa=pl.when(pl.int_range(6) == 1).then(1.2).otherwise(pl.col("pa")))
    with pytest.raises(pf.InvalidInputError, match=r"protected_proba='g: pa, pb': 1 rows \(of 6\) have membership "
                       r"probabilities outside \[0, 1\].*found e.g. \[1.2\]"):  # fmt: skip
        pf.fairness_report(df, y_true="y", y_pred="p", protected_proba=SMALL)
    inf = _small().with_columns(pb=pl.when(pl.int_range(6) == 0).then(float("inf")).otherwise(pl.col("pb")))
    with pytest.raises(pf.InvalidInputError, match="outside"):
        pf.fairness_report(inf, y_true="y", y_pred="p", protected_proba=SMALL)
    # confusion_counts counts them (n_invalid of the null group)
    cells = pf.confusion_counts(df, y_true="y", y_pred="p", protected_proba=SMALL).collect()
    assert cells.filter(pl.col("g").is_null())["n_invalid"].item() == 1 and cells["n"].sum() == 6


def test_rows_not_summing_to_one_raise_with_the_fix() -> None:
    df = _small().with_columns(pb=pl.col("pb") * 0.9)
    with pytest.raises(pf.InvalidInputError, match=r"whose sum is not 1 \(within 1e-06.*found e.g. \[0.9"
                       r".*remainder group.*proba_tolerance"):  # fmt: skip
        pf.fairness_report(df, y_true="y", y_pred="p", protected_proba=SMALL)
    # a wider tolerance accepts them (each row divided by its sum), a remainder group takes the rest
    loose = pf.fairness_report(df, y_true="y", y_pred="p", protected_proba=SMALL, proba_tolerance=0.1)
    rest = pf.fairness_report(df, y_true="y", y_pred="p", protected_proba={"g": {"a": "pa", "b": "pb", "c": None}})
    assert loose.filter(attribute="g")["group"].drop_nulls().unique().sort().to_list() == ["a", "b"]
    a = loose.filter(attribute="g", group="a", metric="num_instances")["value"].item()
    assert a == pytest.approx((df["pa"] / (df["pa"] + df["pb"])).sum(), rel=1e-12)  # each row divided by its sum
    c = rest.filter(attribute="g", group="c", metric="num_instances")["value"].item()
    assert c == pytest.approx(0.1 * (0.3 + 0.8 + 0.5 + 0.0 + 1.0 + 0.7))


def test_missing_probabilities_are_the_null_group_and_warn() -> None:
    df = _small().with_columns(pa=pl.when(pl.int_range(6) == 2).then(float("nan")).otherwise(pl.col("pa")))
    with pytest.warns(pf.MissingValuesWarning, match=r"1 with a null probability .*protected_proba='g: pa, pb'"):
        rep = pf.fairness_report(df, y_true="y", y_pred="p", protected="sex", protected_proba=SMALL)
    null = rep.filter(attribute="g", group="null", metric="n_missing")
    assert null["value"].item() == 1.0 and null["n"].item() == 1
    assert rep.filter(pl.col("attribute").is_null(), metric="num_instances")["value"].item() == 5.0
    assert rep.filter(pl.col("attribute").is_null(), metric="num_instances")["n"].item() == 6  # every row
    with pytest.raises(pf.InvalidInputError, match="null probability"):
        pf.fairness_report(df, y_true="y", y_pred="p", protected_proba=SMALL, on_missing="raise")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pf.fairness_report(df, y_true="y", y_pred="p", protected_proba=SMALL, on_missing="ignore")


def test_bad_requests_are_clear_errors() -> None:
    df = _small()
    kw = dict(y_true="y", y_pred="p")
    with pytest.raises(pf.ColumnNotFoundError, match="protected_proba: column 'pc'"):
        pf.fairness_report(df, **kw, protected_proba={"g": {"a": "pa", "c": "pc"}})
    with pytest.raises(pf.InvalidInputError, match="protected_proba: column 'sex' has dtype String"):
        pf.fairness_report(df, **kw, protected_proba={"g": {"a": "pa", "s": "sex"}})
    with pytest.raises(pf.PolfairError, match="one estimated attribute per report"):
        pf.fairness_report(df, **kw, protected_proba={"g": {"a": "pa", "b": "pb"}, "h": {"a": "pa", "b": "pb"}})
    with pytest.raises(pf.PolfairError, match="names one group"):
        pf.fairness_report(df, **kw, protected_proba={"g": {"a": "pa"}})
    with pytest.raises(pf.PolfairError, match="at most one remainder"):
        pf.fairness_report(df, **kw, protected_proba={"g": {"a": "pa", "b": None, "c": None}})
    with pytest.raises(pf.PolfairError, match="given twice"):
        pf.fairness_report(df, **kw, protected="sex", protected_proba={"sex": {"a": "pa", "b": "pb"}})
    with pytest.raises(pf.PolfairError, match="proba_assignment must be"):
        pf.fairness_report(df, **kw, protected_proba=SMALL, proba_assignment="soft")
    with pytest.raises(pf.PolfairError, match="proba_assignment='argmax' applies to protected_proba"):
        pf.fairness_report(df, **kw, protected="sex", proba_assignment="argmax")
    with pytest.raises(pf.PolfairError, match="proba_tolerance"):
        pf.confusion_counts(df, **kw, protected="sex", proba_tolerance=0.01)
    with pytest.raises(pf.PolfairError, match="exact_sums=True is not available with protected_proba"):
        pf.fairness_report(df, **kw, protected_proba=SMALL, exact_sums=True)
    with pytest.raises(pf.PolfairError, match="protected is required"):
        pf.fairness_report(df, **kw)
    with pytest.raises(TypeError, match=r"protected_proba\['g'\]\['b'\] must be a column name"):
        pf.fairness_report(df, **kw, protected_proba={"g": {"a": "pa", "b": 0.3}})


def test_expressions_and_the_provenance() -> None:
    df = _small()
    rep = pf.fairness_report(df, y_true="y", y_pred="p", protected_proba={"g": {"a": pl.col("pa"), "b": 1 - pl.col("pa")}},
                             proba_assignment="argmax")  # fmt: skip
    from polfair.core.report.run_metadata import request_of

    req = request_of(rep)
    assert req["protected_proba"]["attribute"] == "g"
    assert req["protected_proba"]["assignment"] == "argmax"
    assert req["protected_proba"]["groups"] == ["a", "b"]


def test_batches_clusters_thresholds_and_the_wide_shape() -> None:
    df = _book(3_000)
    kw = dict(y_true="repaid", y_pred="approved", protected="sex", protected_proba=PROBA)
    whole = pf.fairness_report(df, **kw)
    from polars.testing import assert_frame_equal

    # (Float64 sums of the streaming engine: the same up to summation order, docs/design.md)
    assert_frame_equal(pl.concat(list(pf.fairness_report_batches(df, **kw, batch_rows=100))), whole,
                       check_exact=False, rel_tol=1e-12, abs_tol=1e-12)  # fmt: skip
    clustered = pf.fairness_report(df, **kw, cluster="tract")  # jackknife over tracts: same rates
    rates = pl.col("metric").cast(pl.String).str.ends_with("_rate")
    assert np.allclose(clustered.filter(rates)["value"].to_numpy().astype(float),
                       whole.filter(rates)["value"].to_numpy().astype(float), rtol=1e-12, equal_nan=True)  # fmt: skip
    assert "jackknife_t" in clustered.filter(attribute="race")["ci_method"].cast(pl.String).to_list()
    judged = pf.fairness_report(df, **kw, thresholds={"disparate_impact": [0.8, 1.25]}, privileged={"race": "white"})
    assert judged.filter(attribute="race", metric="disparate_impact")["status"].drop_nulls().len() == 5
    wide = pf.fairness_report(df, **kw, shape="wide")
    assert wide.filter(attribute="race").height == 6  # the five groups and the attribute row


def test_interval_coverage_fast_slice() -> None:
    """A seeded slice of ``bench/coverage.py --bisg``: 150 replicates of 1,000 applicants, one report
    (``by="rep"``); the outcome depends on race only through the proxies, so the weighted estimator
    is unbiased and its 95% intervals must cover the true selection rates (measured: 97.7%)."""
    reps, n = 150, 1_000
    truth = pf.fairness_report(pf.make_bisg_lending(400_000, seed=99), y_true="repaid", y_pred="approved",
                               protected="race", ci=None)  # fmt: skip
    true = dict(truth.filter(pl.col("group").is_not_null(), metric="selection_rate").select("group", "value").iter_rows())
    df = pf.make_bisg_lending(reps * n, seed=7, direct_effect=0.0).with_columns((pl.int_range(pl.len()) // n).alias("rep"))
    rep = pf.fairness_report(df, y_true="repaid", y_pred="approved", protected_proba=PROBA, by="rep")
    rows = rep.filter(pl.col("group").is_not_null(), attribute="race", metric="selection_rate")
    covered = [lo <= true[g] <= hi for g, lo, hi in rows.select("group", "value_lo", "value_hi").iter_rows()]
    assert len(covered) == 5 * reps
    assert 0.93 <= float(np.mean(covered)) <= 0.995
