"""The polarity rule of the input contract (``docs/contract.md#polarity``), case by case: where it is
decided (before the pass, or by the pass's label check), what each ``score_label`` means, the
messages, the decision doors, the score rooms, the alarms and the table on the docs page."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

import polfair as pf
from polfair.core.contract import Polarity, polarity, polarity_alarms, polarity_table
from polfair.exceptions import InvalidInputError, PolarityError, PolarityWarning, ReferenceWarning

S = [0.9, 0.2, 0.7, 0.4, 0.1, 0.8, 0.6, 0.3]
G = ["a", "a", "a", "a", "b", "b", "b", "b"]


def frame(y: list, **cols: list) -> pl.DataFrame:
    return pl.DataFrame({"y": y, "s": S, "g": G, **cols})


def cells(df: pl.DataFrame, **kw: object) -> pl.DataFrame:
    return pf.confusion_counts(df, y_true="y", protected="g", **kw).collect()


# ---- where the rule decides ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("y", "kw", "larger"),
    [
        ([0, 1] * 4, {"favorable": 0}, "the larger label, 1 on 0/1 labels"),  # a number <= 0
        ([True, False] * 4, {"favorable": False}, "the larger label True"),  # Boolean labels
        (pl.Series(["approve", "deny"] * 4, dtype=pl.Enum(["approve", "deny"])), {"favorable": "approve"},
         "the larger label 'deny'"),  # Enum categories  # fmt: skip
        (["yes", "no"] * 4, {"favorable": "no", "unfavorable": "yes"}, "the larger label 'yes'"),  # both given
    ],
    ids=["favorable=0", "favorable=False", "enum", "unfavorable="],
)
def test_decided_before_the_pass(y: list, kw: dict, larger: str) -> None:
    df = frame(y)
    with pytest.raises(PolarityError, match=larger):
        pf.confusion_counts(df, y_true="y", y_score="s", protected="g", **kw)  # the lazy door: at call time


@pytest.mark.parametrize(
    ("y", "kw", "found"),
    [
        ([1, 2] * 4, {}, "it holds 2 above it"),  # German credit's 1/2 labels with favorable=1
        ([1.0, 2.0] * 4, {}, "it holds 2.0 above it"),  # Float labels
        (["yes", "no"] * 4, {"favorable": "no"}, "it holds 'yes' above it"),  # String labels
        (pl.Series(["no", "yes"] * 4).cast(pl.Categorical), {"favorable": "no"}, "it holds 'yes' above it"),
    ],
    ids=["1/2", "1.0/2.0", "string", "categorical"],
)
def test_decided_by_the_pass(y: list, kw: dict, found: str) -> None:
    df = frame(y)
    lazy = pf.confusion_counts(df, y_true="y", y_score="s", protected="g", **kw)  # no error before the pass
    with pytest.raises(PolarityError, match=found):
        lazy.collect()
    with pytest.raises(PolarityError, match=found):
        pf.fairness_report(df, y_true="y", y_score="s", protected="g", **kw)
    # the same labels in the favorable label's order need nothing
    fine = frame([0, 1] * 4) if found.startswith("it holds 2") else frame(["yes", "no"] * 4)
    pf.fairness_report(fine, y_true="y", y_score="s", protected="g", favorable=1 if "2" in found else "yes", ci=None)


def test_an_invalid_float_label_is_reported_before_the_reading() -> None:
    df = frame([1.0, 2.0, 0.5, 1.0, 0.0, 1.0, 0.0, 1.0])
    with pytest.raises(InvalidInputError, match=r"whole-number label.*found e\.g\. \[0\.5\]") as info:
        pf.fairness_report(df, y_true="y", y_score="s", protected="g")
    assert not isinstance(info.value, PolarityError)


def test_a_boolean_prediction_is_read_by_the_same_rule() -> None:
    p = [True, False, True, False, True, True, False, False]
    with pytest.raises(PolarityError, match=r"the Boolean y_pred='p' is ambiguous.*True = 0\).*True = 1\)"):
        pf.fairness_report(frame([0, 1] * 4, p=p), y_true="y", y_pred="p", protected="g", favorable=0)
    as_one = cells(frame([0, 1] * 4, p=p), y_pred="p", favorable=0, score_label=1)  # True = label 1
    as_int = cells(frame([0, 1] * 4, p=[int(v) for v in p]), y_pred="p", favorable=0)
    assert as_one.equals(as_int)
    as_zero = cells(frame([0, 1] * 4, p=p), y_pred="p", favorable=0, score_label=0)  # True = label 0
    as_int0 = cells(frame([0, 1] * 4, p=[int(not v) for v in p]), y_pred="p", favorable=0)
    assert as_zero.equals(as_int0)
    # next to Boolean labels a Boolean prediction is matched in its dtype: no question
    cells(frame([True, False] * 4, p=p), y_pred="p", favorable=False)


def test_score_label_of_the_unfavorable_label_reads_its_complement() -> None:
    df = frame([0, 1] * 4)
    fav = cells(df.with_columns(q=1 - pl.col("s")), y_score="q", favorable=0, score_label=0, threshold=0.5)
    unf = cells(df, y_score="s", favorable=0, score_label=1, threshold=0.5)
    counts = ["tp", "fp", "tn", "fn"]
    assert unf.select(counts).equals(fav.select(counts))  # no score is exactly 0.5
    assert np.allclose(unf.select("gtp", "gfp", "gtn", "gfn").to_numpy(), fav.select("gtp", "gfp", "gtn", "gfn").to_numpy())
    # the threshold is on the score as given: y_score >= threshold predicts score_label
    low = cells(df, y_score="s", favorable=0, score_label=1, threshold=0.25)
    assert low["tp"].sum() + low["fp"].sum() == sum(s < 0.25 for s in S)  # approved: P(deny) below 0.25


def test_score_label_of_one_unfavorable_label_among_several() -> None:
    with pytest.raises(PolarityError, match=r"also has the unfavorable label\(s\) 2"):
        pf.fairness_report(frame([0, 1, 2, 0, 1, 2, 0, 1]), y_true="y", y_score="s", protected="g", favorable=0,
                           score_label=1)  # fmt: skip
    with pytest.raises(PolarityError, match="also has the unfavorable label"):  # known before the pass
        pf.confusion_counts(frame([0, 1, 2, 0, 1, 2, 0, 1]), y_true="y", y_score="s", protected="g", favorable=0,
                            unfavorable=[1, 2], score_label=1)  # fmt: skip
    with pytest.raises(InvalidInputError, match="score_label=3 is neither favorable"):
        pf.confusion_counts(frame([0, 1] * 4), y_true="y", y_score="s", protected="g", favorable=0, unfavorable=1,
                            score_label=3)  # fmt: skip
    with pytest.raises(InvalidInputError, match="score_label='1' cannot match column 'y' of dtype Int64"):
        pf.confusion_counts(frame([0, 1] * 4), y_true="y", y_score="s", protected="g", score_label="1")
    with pytest.raises(TypeError, match="score_label must be one label value"):
        pf.fairness_report(frame([0, 1] * 4), y_true="y", y_score="s", protected="g", score_label=[0, 1])


def test_the_rule_object() -> None:
    pol = polarity(pl.Int64, (1,), None, score="s")
    assert isinstance(pol, Polarity) and pol.check == "above" and pol.score_favorable
    assert polarity(pl.Int64, (1,), None).check is None  # nothing reads a score: nothing to check
    assert polarity(pl.Int64, (1,), None, 1, score="s").check is None  # said: nothing to check
    assert polarity(pl.Int64, (0,), None, 1, score="s").check == "other"
    assert polarity(pl.Boolean, (True,), None, score="s").check is None
    assert not polarity(pl.Boolean, (False,), None, True, score="s").score_favorable
    assert "P(y = 0)" in polarity(pl.Int64, (0,), None, 0, score="s", label="deny").reading()


# ---- doors without labels and the score rooms --------------------------------------------------


def test_a_decision_without_labels() -> None:
    df = pl.DataFrame({"d": [True, False, True, True], "g": ["a", "a", "b", "b"]})
    with pytest.raises(PolarityError, match="favorable=True / favorable=False"):
        pf.adverse_impact(df, y_pred="d", protected="g", favorable=0)
    want = pf.adverse_impact(df, y_pred="d", protected="g", favorable=False)
    assert pf.adverse_impact(df, y_pred="d", protected="g", favorable=0, score_label=1).equals(want)
    assert pf.adverse_impact(df, y_pred="d", protected="g", favorable=1).equals(
        pf.adverse_impact(df, y_pred="d", protected="g", favorable=True))
    with pytest.raises(PolarityError):
        pf.proxy_scan(df.with_columns(y=pl.lit(0)), protected="g", features=["d"], y_true="y", y_pred="d", favorable=0)


def test_the_score_rooms() -> None:
    df = frame([0, 1] * 4)
    for room in (pf.score_counts, pf.score_report, pf.threshold_sweep, pf.roc_curve):
        with pytest.raises(PolarityError, match="score_label"):
            room(df, y_true="y", y_score="s", protected="g", favorable=0)
        with pytest.raises(PolarityError, match=r"y_score=1 - pl.col\('s'\)"):
            room(df, y_true="y", y_score="s", protected="g", favorable=0, score_label=1)
    with pytest.raises(PolarityError, match=r"y_score=1 - pl.col\('s'\)"):
        pf.group_thresholds(df, y_true="y", y_score="s", protected="g", favorable=0, score_label=1)
    a = pf.score_counts(df, y_true="y", y_score="s", protected="g", favorable=0, score_label=0)
    b = pf.score_counts(df.with_columns(y=1 - pl.col("y")), y_true="y", y_score="s", protected="g")
    assert a.equals(b)


def test_the_aif360_facades_state_aif360s_reading() -> None:
    df = frame([0, 1] * 4)  # favorable_label=0: aif360 reads the scores as P(0), with no question
    m = pf.ClassificationMetric(df, y_true="y", y_pred=pl.col("s") < 0.5, y_score="s", protected="g",
                                favorable_label=0, unfavorable_label=1,
                                privileged_groups=[{"g": "a"}], unprivileged_groups=[{"g": "b"}])  # fmt: skip
    assert m.generalized_true_positive_rate() == pytest.approx(np.mean([s for s, y in zip(S, [0, 1] * 4) if y == 0]))


# ---- alarms, values that match nothing ---------------------------------------------------------


def test_alarms_need_evidence() -> None:
    pol = polarity(pl.Int64, (1,), None, 1, score="s")
    assert polarity_alarms(pol, accuracy=(0.3, 10)) == []  # a handful of rows: noise
    assert len(polarity_alarms(pol, accuracy=(0.3, 1000))) == 1
    assert polarity_alarms(pol, accuracy=(0.499, 1000)) == []  # at chance: no alarm
    assert polarity_alarms(pol, scores=((0.4, 0.01, 100), (0.6, 0.01, 100)))
    assert not polarity_alarms(pol, scores=((0.6, 0.01, 100), (0.4, 0.01, 100)))
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 2000)
    df = pl.DataFrame({"y": y, "p": 1 - y, "g": rng.choice(["a", "b"], 2000)})
    with pytest.warns(PolarityWarning, match=r"accuracy is 0\.000"):
        pf.FairnessAccumulator(y_true="y", y_pred="p", protected="g", ci=None).update(df).compute()


def test_label_values_that_match_nothing_warn_once_per_report() -> None:
    df = frame(["yes", "no"] * 4)
    with pytest.warns(ReferenceWarning, match=r"unfavorable='No': 'No' does not occur in column 'y' "
                                              r"\(values: 'yes'\); no row has an unfavorable label"):  # fmt: skip
        pf.fairness_report(df.with_columns(y=pl.lit("yes")), y_true="y", protected="g", favorable="yes",
                           unfavorable="No", ci=None)  # fmt: skip
    acc = pf.FairnessAccumulator(y_true="y", protected="g", favorable="Yes", ci=None)
    acc.update(df.head(4)).update(df.tail(4))  # no warning per batch
    with pytest.warns(ReferenceWarning, match=r"favorable='Yes': 'Yes' does not occur in column 'y' \(values: 'no', "
                                              r"'yes'\)"):  # fmt: skip
        acc.compute()


def test_the_docs_page_shows_the_polarity_table() -> None:
    page = (Path(__file__).resolve().parents[3] / "docs" / "contract.md").read_text(encoding="utf-8")
    for r in polarity_table().iter_rows(named=True):
        assert f"| {r['label dtype']} | {r['without score_label']} | {r['score_label']} |" in page
