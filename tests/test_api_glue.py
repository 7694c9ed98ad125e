"""fairness_report's statistics glue: cluster=/n_buckets=, significance=, min_group_size=, [statistics]."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

import polfair as pf
from polfair.exceptions import PolfairError
from polfair.monitor.config import FairnessConfig, check_statistics
from polfair.monitor.disclosure import suppress_small_groups

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "fairness.toml"


@pytest.fixture(scope="module")
def data() -> pl.DataFrame:
    # group c is small (4 rows); several rows per person (pid)
    g = ["a"] * 40 + ["b"] * 30 + ["c"] * 4
    y = [i % 2 for i in range(40)] + [int(i % 3 == 0) for i in range(30)] + [1, 0, 1, 1]
    p = [int(i % 4 != 0) for i in range(40)] + [int(i % 5 == 0) for i in range(30)] + [0, 1, 0, 1]
    return pl.DataFrame({"y": y, "p": p, "g": g, "pid": [i // 3 for i in range(len(g))]})


KW = dict(y_true="y", y_pred="p", protected="g")


# ---- cluster= / n_buckets= ------------------------------------------------------------------


def test_cluster_keeps_the_report_and_adds_buckets_to_the_cell_table(data):
    plain = pf.fairness_report(data, **KW)
    clustered = pf.fairness_report(data, **KW, cluster="pid", n_buckets=7)
    # the point report is unchanged; the group rows' intervals become the clusters' jackknife ones
    point = ["attribute", "group", "metric", "value", "reference_group", "difference", "ratio", "n"]
    assert clustered.select(point).equals(plain.select(point))
    assert pf.fairness_report(data, **KW, cluster="pid", n_buckets=7, ci=None).equals(pf.fairness_report(data, **KW, ci=None))
    cells = pf.confusion_counts(data, **KW, cluster="pid", n_buckets=7).collect()
    assert "bucket" in cells.columns and cells["bucket"].max() < 7


def test_cluster_errors_name_the_option(data):
    with pytest.raises(Exception, match="pd"):
        pf.fairness_report(data, **KW, cluster="pd")  # missing column: suggests 'pid'
    with pytest.raises(PolfairError, match="n_buckets"):
        pf.fairness_report(data, **KW, cluster="pid", n_buckets=1)


# ---- min_group_size= ------------------------------------------------------------------------


def test_min_group_size_drops_small_group_rows_only(data):
    full = pf.fairness_report(data, **KW)
    kept = pf.fairness_report(data, **KW, min_group_size=5)
    groups = kept.filter(pl.col("group").is_not_null())
    assert "c" not in groups["group"].to_list() and groups["n"].min() >= 5
    assert kept.filter(pl.col("group").is_null()).equals(full.filter(pl.col("group").is_null()))
    # the other rows are unchanged
    same = full.filter(pl.col("group").is_in(["a", "b"]))
    assert groups.equals(same)
    assert pf.fairness_report(data, **KW, min_group_size=None).equals(full)


def test_min_group_size_nulls_comparisons_against_a_suppressed_reference(data):
    rep = pf.fairness_report(data, **KW, privileged={"g": "c"}, min_group_size=5)
    rows = rep.filter(pl.col("group") == "a", pl.col("metric") == "selection_rate")
    assert rows["value"].item() == pytest.approx(30 / 40)
    assert rows["difference"].item() is None and rows["ratio"].item() is None
    assert rep.filter(pl.col("group") == "c").height == 0


@pytest.mark.parametrize("bad", [0, -3, 2.5, True, "10"])
def test_min_group_size_must_be_a_positive_int(data, bad):
    with pytest.raises(PolfairError, match="min_group_size"):
        pf.fairness_report(data, **KW, min_group_size=bad)


def test_suppress_small_groups_needs_a_report():
    with pytest.raises(PolfairError, match="missing"):
        suppress_small_groups(pl.DataFrame({"group": ["a"], "n": [1]}), 2)


# ---- significance= ----------------------------------------------------------------------------


def test_significance_makes_breaches_of_small_groups_inconclusive(data):
    # issue 22: the interval rule decides by default (ci=0.95); significance= is the deprecated name of its level
    th = {"disparate_impact": [0.8, 1.25]}
    # min_sample_size=0: the interval rule on its own (group c has 4 people, below the policy's 30)
    rep = pf.fairness_report(data, **KW, privileged={"g": "a"}, thresholds=th, ci=0.95, min_sample_size=0)
    with pytest.warns(FutureWarning, match="ci=0.95"):
        sig = pf.fairness_report(data, **KW, privileged={"g": "a"}, thresholds=th, ci=0.95, significance=0.05,
                                 min_sample_size=0)  # fmt: skip
    assert sig["status"].equals(rep["status"])
    point = pf.monitor.apply_thresholds(sig.drop("value_lo", "value_hi"), th, 0)  # OpenScale's point rule
    di = (pl.col("metric") == "disparate_impact") & pl.col("status").is_not_null()
    assert point.filter(di, pl.col("group") == "c")["value"].item() == pytest.approx(0.5 / 0.75)
    assert point.filter(di, pl.col("group") == "c")["status"].item() == "violation"  # point breach
    assert sig.filter(di, pl.col("group") == "c")["status"].item() == "inconclusive"  # 4 people cannot tell
    assert sig.filter(di, pl.col("group") == "b")["status"].item() == "violation"  # 30 people: significant
    assert "inconclusive" not in point["status"].drop_nulls().to_list()


def test_significance_is_validated(data):
    with pytest.raises(PolfairError, match="significance"):
        pf.fairness_report(data, **KW, significance=5)


# ---- [statistics] in the config ----------------------------------------------------------------


def test_statistics_table_validation():
    assert check_statistics({"ci": False, "p_adjust": "none", "cluster": "pid"}) == {
        "ci": None, "p_adjust": None, "cluster": "pid"}  # fmt: skip
    with pytest.raises(PolfairError, match=r"did you mean 'min_group_size'"):
        check_statistics({"min_group_sise": 3})
    with pytest.raises(PolfairError, match=r"statistics\.ci: ci must be"):
        check_statistics({"ci": 95})
    with pytest.raises(PolfairError, match="n_buckets"):
        FairnessConfig.from_dict({"statistics": {"n_buckets": 300}})
    with pytest.raises(PolfairError, match="significance"):
        FairnessConfig.from_json(json.dumps({"statistics": {"significance": 0}}))


def test_example_toml_has_a_statistics_table():
    assert FairnessConfig.from_toml(EXAMPLE).statistics == {"min_group_size": 10}


def test_config_statistics_apply_and_explicit_keywords_win(data, tmp_path):
    cfg = tmp_path / "s.toml"
    cfg.write_text("[statistics]\nmin_group_size = 5\ncluster = \"pid\"\nn_buckets = 4\n")
    from_cfg = pf.fairness_report(data, **KW, config=str(cfg))
    assert "c" not in from_cfg["group"].drop_nulls().to_list()
    assert from_cfg.equals(pf.fairness_report(data, **KW, min_group_size=5, cluster="pid", n_buckets=4))
    explicit = pf.fairness_report(data, **KW, config=str(cfg), min_group_size=2)  # the keyword wins
    assert "c" in explicit["group"].drop_nulls().to_list()


# ---- cluster= with ci=: jackknife intervals on the group rows ---------------------------------


def test_cluster_gives_jackknife_intervals_that_ignore_duplicated_rows():
    n = 400
    one = pl.DataFrame({
        "y": [int(i % 3 == 0) for i in range(n)], "p": [int(i % 5 < 2) for i in range(n)],
        "g": ["a" if i % 4 else "b" for i in range(n)], "pid": list(range(n)),
    })  # fmt: skip
    three = pl.concat([one, one, one])  # every person three times: the rows are not independent
    iid1 = pf.fairness_report(one, **KW, ci=0.95)
    iid3 = pf.fairness_report(three, **KW, ci=0.95)
    jk3 = pf.fairness_report(three, **KW, ci=0.95, cluster="pid", n_buckets=20)
    assert jk3.schema == iid3.schema
    assert jk3.select(pl.exclude(_CI_COLUMNS)).equals(iid3.select(pl.exclude(_CI_COLUMNS)))
    sel = (pl.col("group") == "b") & (pl.col("metric") == "selection_rate")

    def width(rep: pl.DataFrame) -> float:
        return rep.filter(sel).select(pl.col("value_hi") - pl.col("value_lo")).item()

    assert width(iid3) < 0.7 * width(iid1)  # iid methods: overconfident by about sqrt(3)
    assert 0.75 * width(iid1) < width(jk3) < 1.4 * width(iid1)  # jackknife: about right
    rows = jk3.filter(pl.col("group").is_not_null(), pl.col("value_lo").is_not_null())
    assert set(rows["ci_method"].cast(pl.String).to_list()) == {"jackknife_t"}
    attr_rows = jk3.filter(pl.col("group").is_null(), pl.col("ci_method").is_not_null())
    assert "jackknife_t" not in attr_rows["ci_method"].cast(pl.String).to_list()  # spreads keep projections


_CI_COLUMNS = ["value_lo", "value_hi", "difference_lo", "difference_hi", "ratio_lo", "ratio_hi", "p_value",
               "p_value_adjusted", "ci_method", "test"]  # fmt: skip
