"""polfair.monitor: FairnessConfig, thresholds/status, alerts, seeded samples, report + CLI integration."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import polfair as pf
from polfair.cli import main as cli_main
from polfair.core.metrics import METRICS
from polfair.core.reference import DEFAULT_MIN_SAMPLE_SIZE
from polfair.exceptions import ColumnNotFoundError, PolfairError
from polfair.monitor import (
    OTHER,
    FairnessConfig,
    GroupSpec,
    alerts,
    apply_thresholds,
    parse_thresholds,
    sample_rows,
)

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "fairness.toml"

BASE = {
    "favorable": [0],
    "monitored": {"age": [18, 25], "race": ["African-American"]},
    "reference": {"age": [26, 100], "race": ["Caucasian"]},
    "thresholds": {"disparate_impact": [0.8, 1.25], "statistical_parity_difference": {"min": -0.1, "max": 0.1}},
    "min_sample_size": 100,
}


@pytest.fixture(scope="module")
def compas():
    return pf.load_compas().with_columns(predicted_recid=(pl.col("decile_score") >= 5).cast(pl.Int64))


# ---- config -----------------------------------------------------------------------------------


def test_example_toml_loads_and_equals_json_and_dict(tmp_path):
    cfg = FairnessConfig.from_toml(EXAMPLE)
    assert cfg.favorable == (0,)
    assert cfg.monitored["age"] == GroupSpec(ranges=((18, 25),))
    assert cfg.reference["race"] == GroupSpec(values=("Caucasian",))
    assert cfg.thresholds["disparate_impact"] == (0.8, 1.25)
    assert cfg.thresholds["equalized_odds"] == (-math.inf, 0.2)
    assert (cfg.min_sample_size, cfg.max_sample_size, cfg.seed) == (100, 100000, 42)
    assert cfg.y_true == "two_year_recid" and cfg.user_metrics == ("equalized_odds",) and cfg.metrics == ()
    p = tmp_path / "c.json"
    p.write_text(json.dumps(BASE))
    a, b, c = FairnessConfig.from_json(p), FairnessConfig.from_json(json.dumps(BASE)), FairnessConfig.from_dict(BASE)
    assert a == b == c
    t = tmp_path / "c.toml"
    t.write_text(
        'favorable = [0]\nmin_sample_size = 100\n[monitored]\nage = [18, 25]\nrace = ["African-American"]\n'
        '[reference]\nage = [26, 100]\nrace = ["Caucasian"]\n[thresholds]\ndisparate_impact = [0.8, 1.25]\n'
        "statistical_parity_difference = {min = -0.1, max = 0.1}\n"
    )
    assert FairnessConfig.from_toml(t) == c


def test_group_spec_forms():
    assert GroupSpec.parse([18, 25]) == GroupSpec(ranges=((18, 25),))
    assert GroupSpec.parse([[18, 25], [60, 99]]).label == "[18, 25]|[60, 99]"
    assert GroupSpec.parse({"values": [1, 3]}) == GroupSpec(values=(1, 3))
    assert GroupSpec.parse([1, 2, 3]) == GroupSpec(values=(1, 2, 3))
    assert GroupSpec.parse("Female") == GroupSpec(values=("Female",))
    assert GroupSpec.parse({"range": [0.5, 1.5], "values": [7]}).label == "7|[0.5, 1.5]"
    assert GroupSpec.parse([True]).label == "true"
    s = pl.Series("x", [17, 18, 25, 26, 60, None])
    got = pl.DataFrame(s).select(GroupSpec.parse([[18, 25], [60, 99]]).condition(pl.col("x")))["x"].to_list()
    assert got == [False, True, True, False, True, None]


@pytest.mark.parametrize(
    ("bad", "match"),
    [
        ({"favorit": [1]}, "did you mean 'favorable'"),
        ({"monitored": {"age": [18, 25]}}, "reference does not"),
        ({"reference": {"age": [18, 25]}}, "monitored does not"),
        ({"monitored": {"age": [18, 30]}, "reference": {"age": [26, 100]}}, "overlap"),
        ({"monitored": {"r": ["a", "b"]}, "reference": {"r": ["b"]}}, "overlap"),
        ({"monitored": {"age": [30, 18]}, "reference": {"age": [40, 50]}}, "lo <= hi"),
        ({"monitored": {"age": []}, "reference": {"age": [40, 50]}}, "empty"),
        ({"monitored": {"r": ["a", 1, 2]}, "reference": {"r": ["b"]}}, "mix"),
        ({"monitored": {"r": {"vals": [1]}}, "reference": {"r": ["b"]}}, "'values', 'range'"),
        ({"thresholds": {"disparate_impact": [1.25, 0.8]}}, "lo <= hi"),
        ({"thresholds": {"disparate_impact": 0.8}}, r"\[lo, hi\]"),
        ({"thresholds": {"disparate_impact": {"low": 0.8}}}, "'min' and/or 'max'"),
        ({"min_sample_size": -1}, "int >= 0"),
        ({"min_sample_size": 50, "max_sample_size": 10}, "below min_sample_size"),
        ({"metrics": ["equalised_odds"]}, "did you mean 'equalized_odds'"),
        ({"user_metrics": ["equalised_odds"]}, "not a built-in groupwise metric"),
        ({"favorable": []}, "non-empty"),
        ({"y_true": 3}, "column name"),
    ],
)
def test_config_validation_errors(bad, match):
    with pytest.raises(PolfairError, match=match):
        FairnessConfig.from_dict(bad, source="fairness.toml")


def test_invalid_toml_and_json_name_the_file(tmp_path):
    t = tmp_path / "bad.toml"
    t.write_text("favorable = [0\n")
    with pytest.raises(PolfairError, match=r"bad.toml: invalid TOML"):
        FairnessConfig.from_toml(t)
    with pytest.raises(PolfairError, match="invalid JSON"):
        FairnessConfig.from_json("{nope")
    with pytest.raises(PolfairError, match=r"^fairness.toml: "):
        FairnessConfig.from_dict({"min_sample_size": -1}, source="fairness.toml")


def test_parse_thresholds_one_sided():
    assert parse_thresholds({"a": {"max": 0.2}, "b": [0, float("inf")]}) == {"a": (-math.inf, 0.2), "b": (0.0, math.inf)}


# ---- thresholds on a report: property test against a row-by-row reference -----------------------


def ref_status(row, bands, min_n, sizes, smallest):
    m = row["metric"]
    is_group = row["group"] is not None and row["attribute"] is not None
    is_attr = row["group"] is None and row["attribute"] is not None
    if m not in bands or (is_attr and (m in METRICS or m == "n_missing")):
        return None, None
    lo, hi = bands[m]
    thr = f"[{lo:g}, {hi:g}]"
    small = False
    min_n = DEFAULT_MIN_SAMPLE_SIZE if min_n is None else min_n  # None: the small-group policy's default
    if min_n:
        own = smallest[row["attribute"]] if is_attr else row["n"]
        small = own < min_n
        if is_group and row["reference_group"] in sizes.get(row["attribute"], {}):
            small = small or sizes[row["attribute"]][row["reference_group"]] < min_n
    v = row["value"]
    if small or v is None or (isinstance(v, float) and math.isnan(v)):
        return thr, "insufficient_data"
    if lo <= v <= hi:
        return thr, "ok"
    # the interval rule (polfair.core.report.status): outside the band, the whole interval must be too
    vlo, vhi = row.get("value_lo"), row.get("value_hi")
    if vlo is None or vhi is None or math.isnan(vlo) or math.isnan(vhi):
        return thr, "violation"
    beyond = (v < lo and vhi < lo) or (v > hi and vlo > hi)
    return thr, "violation" if beyond else "inconclusive"


frames = st.integers(min_value=4, max_value=60).flatmap(
    lambda n: st.fixed_dictionaries(
        {
            "y": st.lists(st.integers(0, 1), min_size=n, max_size=n),
            "p": st.lists(st.integers(0, 1), min_size=n, max_size=n),
            "g": st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=n, max_size=n),
        }
    )
)
bands_st = st.fixed_dictionaries(
    {
        "disparate_impact": st.sampled_from([(0.8, 1.25), (0.5, 2.0), (0.9, 1.1)]),
        "statistical_parity_difference": st.sampled_from([(-0.1, 0.1), (-0.3, 0.3)]),
        "selection_rate": st.sampled_from([(0.2, 0.8), (0.0, 1.0)]),
        "demographic_parity_difference": st.sampled_from([(0.0, 0.1), (0.0, 0.5)]),
    }
)


@settings(max_examples=50, deadline=None)
@given(frames, bands_st, st.one_of(st.none(), st.integers(0, 20)), st.sampled_from([0.95, None]))
def test_apply_thresholds_matches_reference(d, bands, min_n, ci):
    df = pl.DataFrame(d)
    rep = pf.fairness_report(df, y_true="y", y_pred="p", protected="g", ci=ci)
    out = apply_thresholds(rep, {k: list(v) for k, v in bands.items()}, min_n)
    assert out.columns == [*rep.columns, "threshold", "status"]
    assert_frame_equal(out.drop("threshold", "status"), rep)
    groups = rep.filter(pl.col("group").is_not_null(), pl.col("metric") == "n_missing")
    sizes = {"g": dict(zip(groups["group"], groups["n"]))}
    smallest = {"g": min(groups["n"])}
    for row in out.iter_rows(named=True):
        thr, status = ref_status(row, bands, min_n, sizes, smallest)
        assert row["status"] == status, row
        assert row["threshold"] == thr
    allowed = {"ok", "violation", "insufficient_data"} | ({"inconclusive"} if ci else set())
    assert set(out["status"].drop_nulls()) <= allowed
    assert alerts(out).height == out.filter(pl.col("status") == "violation").height


def test_insufficient_data_is_never_ok_or_violation_and_groups_filter():
    # group c has 2 rows; min_sample_size=3 -> its rows (and comparisons against it) are insufficient
    df = pl.DataFrame({"y": [1] * 12, "p": [1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1], "g": list("aaaabbbbbbcc")})
    rep = pf.fairness_report(df, y_true="y", y_pred="p", protected="g", privileged={"g": "a"},
                             thresholds={"disparate_impact": [0.8, 1.25]}, min_sample_size=3)  # fmt: skip
    st_ = dict(rep.filter(pl.col("metric") == "disparate_impact").select("group", "status").rows())
    assert st_ == {"a": "ok", "b": "violation", "c": "insufficient_data"}
    # comparisons whose reference is too small are insufficient too
    rep = pf.fairness_report(df, y_true="y", y_pred="p", protected="g", privileged={"g": "c"},
                             thresholds={"disparate_impact": [0.8, 1.25]}, min_sample_size=3)  # fmt: skip
    assert set(rep.filter(pl.col("metric") == "disparate_impact")["status"]) == {"insufficient_data"}
    # groups=: only the listed groups are judged
    plain = pf.fairness_report(df, y_true="y", y_pred="p", protected="g", privileged={"g": "a"})
    out = apply_thresholds(plain, {"disparate_impact": [0.8, 1.25]}, 0, groups={"g": ["b"]})
    st_ = dict(out.filter(pl.col("metric") == "disparate_impact").select("group", "status").rows())
    assert st_ == {"a": None, "b": "violation", "c": None}
    # an undefined value is insufficient_data, never ok/violation
    z = pl.DataFrame({"y": [1, 1, 1, 1], "p": [0, 0, 1, 1], "g": list("aabb")})
    out = pf.fairness_report(z, y_true="y", y_pred="p", protected="g", privileged={"g": "a"},
                             thresholds={"disparate_impact": [0.8, 1.25]})  # fmt: skip
    assert out.filter(pl.col("metric") == "disparate_impact")["status"].to_list() == ["insufficient_data"] * 2


def test_threshold_errors_and_alerts_without_status():
    df = pl.DataFrame({"y": [1, 0, 1, 0], "p": [1, 1, 0, 0], "g": ["a", "a", "b", "b"]})
    rep = pf.fairness_report(df, y_true="y", y_pred="p", protected="g")
    with pytest.raises(PolfairError, match="Did you mean 'disparate_impact'"):
        apply_thresholds(rep, {"disparate_impakt": [0.8, 1.25]})
    with pytest.raises(PolfairError, match="needs a report with a status column"):
        alerts(rep)
    with pytest.raises(PolfairError, match="needs a fairness report"):
        apply_thresholds(pl.DataFrame({"a": [1]}), {})
    labels_only = pf.fairness_report(df, y_true="y", protected="g")
    with pytest.raises(PolfairError, match="labels-only"):
        apply_thresholds(labels_only, {"equal_opportunity_difference": [-0.1, 0.1]})
    # min_sample_size alone: status columns exist, but no threshold applies anywhere
    only = pf.fairness_report(df, y_true="y", y_pred="p", protected="g", min_sample_size=3)
    assert only["status"].null_count() == only.height


# ---- samples -----------------------------------------------------------------------------------


def test_sample_rows_is_seeded_exact_and_lazy(tmp_path):
    df = pl.DataFrame({"i": np.arange(1000), "x": np.arange(1000) % 7})
    a = sample_rows(df, 100, seed=3).collect()
    b = sample_rows(df, 100, seed=3).collect()
    c = sample_rows(df, 100, seed=4).collect()
    assert a.height == 100 and a.equals(b) and not a.equals(c)
    want = np.sort(np.random.default_rng(3).choice(1000, 100, replace=False))
    assert a["i"].to_list() == want.tolist()
    assert sample_rows(df, 5000).collect().equals(df)
    path = tmp_path / "d.parquet"
    df.write_parquet(path)
    lf = sample_rows(str(path), 100, seed=3)
    assert isinstance(lf, pl.LazyFrame) and lf.collect().equals(a)
    with pytest.raises(PolfairError, match="positive integer"):
        sample_rows(df, 0)


def test_report_on_a_sample(compas):
    rep = pf.fairness_report(compas, y_true="two_year_recid", y_pred="predicted_recid", protected="sex",
                             max_sample_size=1000)  # fmt: skip
    assert rep.filter(pl.col("attribute").is_null(), pl.col("metric") == "num_instances")["n"].item() == 1000
    again = pf.fairness_report(compas, y_true="two_year_recid", y_pred="predicted_recid", protected="sex",
                               max_sample_size=1000)  # fmt: skip
    assert_frame_equal(again, rep)
    sub = compas[np.sort(np.random.default_rng(0).choice(compas.height, 1000, replace=False))]
    direct = pf.fairness_report(sub, y_true="two_year_recid", y_pred="predicted_recid", protected="sex")
    a = rep.filter(pl.col("metric") == "selection_rate")["value"].to_list()
    b = direct.filter(pl.col("metric") == "selection_rate")["value"].to_list()
    assert a == pytest.approx(b)


# ---- fairness_report(config=...) ----------------------------------------------------------------


def test_openscale_value_on_compas_age_range(compas):
    cfg = FairnessConfig.from_dict({**BASE, "y_true": "two_year_recid", "y_pred": "predicted_recid"})
    rep = pf.fairness_report(compas, config=cfg)
    # OpenScale's fairness value: %favorable(monitored) / %favorable(reference), favorable = 0
    fav = compas.with_columns(f=(pl.col("predicted_recid") == 0).cast(pl.Float64))
    mon = fav.filter(pl.col("age").is_between(18, 25))["f"].mean()
    ref = fav.filter(pl.col("age").is_between(26, 100))["f"].mean()
    row = rep.filter(pl.col("attribute") == "age", pl.col("group") == "[18, 25]", pl.col("metric") == "disparate_impact")
    assert row["value"].item() == pytest.approx(mon / ref)
    assert row["reference_group"].item() == "[26, 100]"
    assert row["threshold"].item() == "[0.8, 1.25]" and row["status"].item() == "violation"
    # only monitored groups are judged; other rows keep the report
    judged = rep.filter(pl.col("status").is_not_null(), pl.col("group").is_not_null())
    assert set(judged["group"]) == {"[18, 25]", "African-American"}
    race_groups = set(rep.filter(pl.col("attribute") == "race")["group"].drop_nulls())
    assert race_groups == {"African-American", "Caucasian", OTHER}
    assert set(rep["attribute"].drop_nulls()) == {"age", "race"}  # intersections default to 1 with a config
    assert alerts(rep).height == 4


def test_config_from_path_and_keyword_precedence(compas, tmp_path):
    path = tmp_path / "f.json"
    path.write_text(json.dumps({**BASE, "thresholds": {"disparate_impact": [0.1, 10]}}))
    rep = pf.fairness_report(compas, y_true="two_year_recid", y_pred="predicted_recid", config=str(path),
                             thresholds={"statistical_parity_difference": [-0.5, 0.5]})  # fmt: skip
    thr = dict(rep.filter(pl.col("status").is_not_null()).select("metric", "threshold").unique().rows())
    assert thr == {"disparate_impact": "[0.1, 10]", "statistical_parity_difference": "[-0.5, 0.5]"}
    assert alerts(rep).height == 0
    # keyword protected attributes sit next to the config's
    rep = pf.fairness_report(compas, y_true="two_year_recid", y_pred="predicted_recid", protected=["sex", "age"],
                             config=BASE)  # fmt: skip
    assert set(rep["attribute"].drop_nulls()) == {"sex", "age", "race"}
    assert set(rep.filter(pl.col("attribute") == "age")["group"].drop_nulls()) == {"[18, 25]", "[26, 100]"}
    # groups of sex have no monitored group: all judged
    assert rep.filter(pl.col("attribute") == "sex", pl.col("metric") == "disparate_impact")["status"].null_count() == 0


def test_config_conflicts_and_data_errors(compas):
    kw = {"y_true": "two_year_recid", "y_pred": "predicted_recid"}
    with pytest.raises(PolfairError, match="favorable"):
        pf.fairness_report(compas, favorable=[1, 2], config=BASE, **kw)
    with pytest.raises(PolfairError, match="conflicts with the config's y_true"):
        pf.fairness_report(compas, config={**BASE, "y_true": "is_recid"}, **kw)
    with pytest.raises(PolfairError, match="privileged names 'age'"):
        pf.fairness_report(compas, privileged={"age": 30}, config=BASE, **kw)
    with pytest.raises(ColumnNotFoundError, match="'agee'"):
        pf.fairness_report(compas, config={"monitored": {"agee": [1, 2]}, "reference": {"agee": [3, 4]}}, **kw)
    with pytest.raises(PolfairError, match="dtype"):
        pf.fairness_report(compas, config={"monitored": {"sex": [1, 2]}, "reference": {"sex": [3, 4]}}, **kw)
    with pytest.raises(PolfairError, match="strings"):
        pf.fairness_report(compas, config={"monitored": {"age": ["x"]}, "reference": {"age": ["y"]}}, **kw)
    with pytest.raises(PolfairError, match="y_true is required"):
        pf.fairness_report(compas, config={"favorable": [0]}, protected="sex")
    with pytest.raises(PolfairError, match="protected is required"):
        pf.fairness_report(compas, y_true="two_year_recid")


def test_null_attribute_values_stay_null():
    df = pl.DataFrame({"y": [1, 0, 1, 0, 1], "p": [1, 0, 1, 1, 0], "age": [20, 30, None, 50, 10]})
    rep = pf.fairness_report(df, y_true="y", y_pred="p",
                             config={"monitored": {"age": [18, 25]}, "reference": {"age": [26, 100]}})  # fmt: skip
    assert set(rep.filter(pl.col("attribute") == "age")["group"].drop_nulls()) == {"[18, 25]", "[26, 100]", "null", OTHER}


# ---- CLI ---------------------------------------------------------------------------------------


def test_cli_fail_on_violation(compas, tmp_path, capsys):
    data = tmp_path / "compas.parquet"
    compas.write_parquet(data)
    assert cli_main(["report", str(data), "--config", str(EXAMPLE), "--fail-on-violation"]) == 1
    assert "threshold violation(s)" in capsys.readouterr().out
    loose = tmp_path / "loose.toml"
    loose.write_text(EXAMPLE.read_text().replace("[0.8, 1.25]", "[0.1, 10]").replace("[-0.1, 0.1]", "[-1, 1]")
                     .replace("{max = 0.2}", "{max = 1}"))  # fmt: skip
    assert cli_main(["report", str(data), "--config", str(loose), "--fail-on-violation"]) == 0
    assert "0 threshold violation(s)" in capsys.readouterr().out
    out = tmp_path / "rep.parquet"
    assert cli_main(["report", str(data), "--config", str(EXAMPLE), "--out", str(out)]) == 0
    assert {"threshold", "status"} <= set(pl.read_parquet(out).columns)
    assert cli_main(["report", str(data), "--y-true", "two_year_recid", "--protected", "sex",
                     "--fail-on-violation"]) == 2  # fmt: skip
    assert "needs thresholds" in capsys.readouterr().err


# ---- docs --------------------------------------------------------------------------------------


def test_docs_examples_run(monkeypatch, capsys):
    """Every ```python block of docs/monitoring.md runs, in order, from the repository root."""
    pytest.importorskip("sklearn")
    import re

    root = Path(__file__).resolve().parents[2]
    text = (root / "docs" / "monitoring.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) >= 6
    monkeypatch.chdir(root)
    ns: dict = {}
    for i, block in enumerate(blocks):
        exec(compile(block, f"docs/monitoring.md[block {i}]", "exec"), ns)  # noqa: S102
    assert "violation" in capsys.readouterr().out


# ---- issue 22: config expressions, values that match nothing, the request ----------------------------


def test_toml_takes_the_cli_expressions(tmp_path, compas):
    cfg = tmp_path / "c.toml"
    cfg.write_text('y_true = "two_year_recid"\ny_pred = "decile_score >= 5"\nfavorable = [0]\nscore_label = 1\n'
                   '[monitored]\nrace = ["African-American"]\n[reference]\nrace = ["Caucasian"]\n')  # fmt: skip
    rep = pf.fairness_report(pf.load_compas(), config=str(cfg))
    same = pf.fairness_report(pf.load_compas(), y_pred=pl.col("decile_score") >= 5, favorable=0, score_label=1,
                              config={"y_true": "two_year_recid", "monitored": {"race": ["African-American"]},
                                      "reference": {"race": ["Caucasian"]}})  # fmt: skip
    assert_frame_equal(rep, same)
    from polfair.core.report.run_metadata import request_of

    assert request_of(rep)["y_pred"] == "decile_score >= 5"  # as written in the file
    bad = tmp_path / "bad.toml"
    bad.write_text('y_true = "two_year_recid"\ny_pred = "decile_scor >="\n[monitored]\nrace = ["x"]\n'
                   '[reference]\nrace = ["Caucasian"]\n')  # fmt: skip
    with pytest.raises(PolfairError, match="config: y_pred = 'decile_scor >='"):
        pf.fairness_report(pf.load_compas(), config=str(bad))


def test_config_values_that_match_nothing_warn_as_privileged_does(compas):
    from polfair.exceptions import ReferenceWarning

    cfg = {"y_true": "two_year_recid", "y_pred": "predicted_recid", "monitored": {"race": ["black"]},
           "reference": {"race": ["Caucasian"]}, "thresholds": {"disparate_impact": [0.8, 1.25]}}  # fmt: skip
    with pytest.warns(ReferenceWarning, match=r"config: monitored.race = 'black': 'black' does not occur in column 'race' \(values: 'African"):
        pf.fairness_report(compas, config=cfg)
    with pytest.warns(ReferenceWarning, match=r"privileged=\{'race': \['black'\]\}: 'black' does not occur"):
        pf.fairness_report(compas, y_true="two_year_recid", y_pred="predicted_recid", protected="race",
                           privileged={"race": "black"})  # fmt: skip
    typo_ref = {**cfg, "monitored": {"race": ["African-American"]}, "reference": {"race": ["white"]}}
    with pytest.warns(ReferenceWarning, match="reference.race = 'white': 'white' does not occur in column 'race'"):
        pf.fairness_report(compas, config=typo_ref)


def test_the_cli_warns_for_a_config_typo(compas, tmp_path, capsys):
    data = tmp_path / "c.parquet"
    compas.write_parquet(data)
    cfg = tmp_path / "c.toml"
    cfg.write_text('y_true = "two_year_recid"\ny_pred = "decile_score >= 5"\n[monitored]\nrace = ["black"]\n'
                   '[reference]\nrace = ["Caucasian"]\n[thresholds]\ndisparate_impact = [0.8, 1.25]\n')  # fmt: skip
    from polfair.exceptions import ReferenceWarning

    with pytest.warns(ReferenceWarning, match="config: monitored.race = 'black': 'black' does not occur"):
        assert cli_main(["report", str(data), "--config", str(cfg), "--out", str(tmp_path / "r.parquet")]) == 0
