"""User-defined metrics (fairness_report(user_metrics={...})): every group, intersection, disparity and spread,
equal to the built-in metric of the same formula under every reference mode."""

from __future__ import annotations

import polars as pl
import pytest

import polfair as pf
from polfair.core.metrics import rate
from polfair.exceptions import PolfairError

COLS = ["attribute", "group", "value", "reference_group", "difference", "ratio", "n", "n_groups", "excluded_groups"]
F1 = 2 * pl.col("tp") / (2 * pl.col("tp") + pl.col("fp") + pl.col("fn"))


@pytest.fixture(scope="module")
def compas() -> pl.DataFrame:
    df = pf.load_compas()
    assert isinstance(df, pl.DataFrame)
    return df.with_columns((pl.col("decile_score") >= 5).cast(pl.Int8).alias("p"))


@pytest.mark.parametrize("reference", [None, "largest", "overall", "best", "privileged"])
def test_user_metric_equals_the_builtin_of_the_same_formula(compas: pl.DataFrame, reference: str | None) -> None:
    rep = pf.fairness_report(compas, y_true="two_year_recid", y_pred="p", protected=["race", "sex"],
                             privileged={"sex": "Male", "race": "Caucasian"}, reference=reference,
                             user_metrics={"f1": F1, "bal": lambda c: (rate(c.tp, c.tp + c.fn) + rate(c.tn, c.tn + c.fp)) / 2})  # fmt: skip
    for mine, builtin in (("f1", "f1_score"), ("bal", "balanced_accuracy")):
        a = rep.filter(metric=mine).select(COLS)
        b = rep.filter(metric=builtin).select(COLS)
        assert a.height == b.height == 1 + 3 + 6 + 2 + 12  # population, 3 attribute sets, 6 + 2 + 12 groups
        assert a.equals(b), (mine, reference)


def test_rows_sit_with_their_group_and_the_list_form_still_works(compas: pl.DataFrame) -> None:
    rep = pf.fairness_report(compas, y_true="two_year_recid", y_pred="p", protected="sex", ci=None,
                             user_metrics={"tp_share": pl.col("tp") / pl.col("w")})  # fmt: skip
    female = rep.filter(group="Female")["metric"].cast(pl.String).to_list()
    assert female[-1] == "tp_share"  # after the group's built-in rows, before the next group's
    listed = pf.fairness_report(compas, y_true="two_year_recid", y_pred="p", protected="sex", ci=None,
                                user_metrics=["equalized_odds"])  # fmt: skip
    assert "tp_share" not in listed["metric"].cast(pl.String).to_list()


def test_weighted_and_unweighted_forms(compas: pl.DataFrame) -> None:
    df = compas.with_columns((pl.col("priors_count") % 3 + 1.0).alias("w"))
    rep = pf.fairness_report(df, y_true="two_year_recid", y_pred="p", protected="sex", weight="w", ci=None,
                             user_metrics={"tpr_rows": pl.col("tp_n") / (pl.col("tp_n") + pl.col("fn_n")),
                                      "neff": pl.col("w") ** 2 / (pl.col("tp_w2") + pl.col("fp_w2") + pl.col("tn_w2")
                                                                  + pl.col("fn_w2"))})  # fmt: skip
    fem = df.filter(sex="Female")
    pos = fem.filter(two_year_recid=1)
    assert rep.filter(group="Female", metric="tpr_rows")["value"].item() == pytest.approx(pos["p"].mean())
    w = fem["w"].to_numpy()
    assert rep.filter(group="Female", metric="neff")["value"].item() == pytest.approx(w.sum() ** 2 / (w**2).sum())


def test_bad_definitions_raise_clearly(compas: pl.DataFrame) -> None:
    kw = dict(y_true="two_year_recid", y_pred="p", protected="sex", ci=None)
    with pytest.raises(PolfairError, match="built-in"):
        pf.fairness_report(compas, **kw, user_metrics={"accuracy": F1})
    with pytest.raises(PolfairError, match="not count columns"):
        pf.fairness_report(compas, **kw, user_metrics={"x": pl.col("decile_score").mean()})
    with pytest.raises(PolfairError, match="Polars expression"):
        pf.fairness_report(compas, **kw, user_metrics={"x": 0.5})
    with pytest.raises(PolfairError, match="'expr'"):
        pf.fairness_report(compas, **kw, user_metrics={"x": {"formula": F1}})


def test_higher_is_better_false_picks_the_lowest_for_best(compas: pl.DataFrame) -> None:
    err = {"expr": (pl.col("fp") + pl.col("fn")) / pl.col("w"), "higher_is_better": False}
    rep = pf.fairness_report(compas, y_true="two_year_recid", y_pred="p", protected="race", reference="best", ci=None,
                             user_metrics={"err": err})  # fmt: skip
    a = rep.filter(metric="err", attribute="race").filter(pl.col("group").is_not_null())
    b = rep.filter(metric="error_rate", attribute="race").filter(pl.col("group").is_not_null())
    assert a["reference_group"].cast(pl.String).to_list() == b["reference_group"].cast(pl.String).to_list()
    assert a["difference"].to_list() == pytest.approx(b["difference"].to_list())
