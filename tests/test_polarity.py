"""Issue 29, end to end: on a fair-lending table with ``favorable=0`` (approval of a ``deny`` label),
every natural way of passing a model's output gives the approval rates, or an error or a warning
naming the polarity, never the inverted audit in silence; the value typos are named; the rows in
neither config group cannot be read as a real value; the four outputs tell one story with and
without thresholds. Python and the command line (the engines: ``tests/contract``)."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import polfair as pf
from polfair.cli import main as cli_main
from polfair.exceptions import PolarityError, PolarityWarning, ReferenceWarning

RACES = ["white", "black", "hispanic", "other"]


@pytest.fixture(scope="module")
def loans() -> pl.DataFrame:
    """A lending table: ``deny`` (1 = denied), a model's P(deny) and P(approve), race with a real value
    "other"; approval predicted when P(deny) < 0.5 (never exactly 0.5)."""
    rng = np.random.default_rng(29)
    n = 6000
    race = rng.choice(RACES, n, p=[0.6, 0.2, 0.12, 0.08])
    logit = -1.6 + 1.3 * (race != "white") + rng.normal(0, 1.2, n)
    p_deny = np.round(1 / (1 + np.exp(-logit)), 4)
    p_deny = np.where(p_deny == 0.5, 0.5001, p_deny)
    deny = (rng.random(n) < p_deny).astype(np.int8)
    return pl.DataFrame({"race": race, "deny": deny, "p_deny": p_deny}).with_columns(
        p_approve=1.0 - pl.col("p_deny"))


@pytest.fixture(scope="module")
def approval(loans: pl.DataFrame) -> dict[str, float]:
    """The approval rates by hand: P(predicted approved | race)."""
    t = loans.group_by("race").agg((pl.col("p_deny") < 0.5).mean().alias("rate"))
    return dict(t.iter_rows())


def rates(report: pl.DataFrame) -> dict[str, float]:
    sel = report.filter(pl.col("group").is_not_null(), metric="selection_rate", attribute="race")
    return {g: v for g, v in sel.select("group", "value").iter_rows()}


def audit(loans: pl.DataFrame, **kw: object) -> pl.DataFrame:
    return pf.fairness_report(loans, y_true="deny", protected="race", favorable=0, ci=None, **kw)


# ---- every natural way of passing the model's output -------------------------------------------


@pytest.mark.parametrize(
    ("output", "fix"),
    [
        ({"y_score": "p_approve"}, 0),  # the approval probability
        ({"y_score": "p_deny"}, 1),  # predict_proba(X)[:, 1] of the deny label
        ({"y_pred": pl.col("p_approve") >= 0.5}, 0),  # a Boolean "approved"
        ({"y_pred": pl.col("p_deny") >= 0.5}, 1),  # a Boolean "denied"
    ],
    ids=["p_approve", "p_deny", "approved>=0.5", "denied>=0.5"],
)
def test_an_ambiguous_output_stops_and_names_both_readings_then_gives_approval_rates(
    loans: pl.DataFrame, approval: dict[str, float], output: dict, fix: int
) -> None:
    with pytest.raises(PolarityError) as info:
        audit(loans, **output)
    msg = str(info.value)
    assert "score_label=0" in msg and "score_label=1" in msg and "favorable=0" in msg  # both readings, both fixes
    assert "\n" not in msg  # one line: the command line prints it whole
    with warnings.catch_warnings():
        warnings.simplefilter("error", PolarityWarning)  # the right reading raises no alarm
        got = rates(audit(loans, **output, score_label=fix))
    assert got == pytest.approx(approval, abs=1e-12)
    assert got["white"] > got["black"] + 0.1  # the approval audit: white applicants are approved more often


def test_integer_predictions_of_the_label_need_nothing(loans: pl.DataFrame, approval: dict[str, float]) -> None:
    got = rates(audit(loans, y_pred=(pl.col("p_deny") >= 0.5).cast(pl.Int8)))
    assert got == pytest.approx(approval, abs=1e-12)


@pytest.mark.parametrize(
    "output",
    [{"y_pred": (pl.col("p_approve") >= 0.5).cast(pl.Int8)},  # 0/1 predictions coded 1 = approved
     {"y_score": "p_deny", "score_label": 0}],  # the wrong score_label
    ids=["approved-as-1", "wrong-score_label"],
)
def test_an_inverted_reading_warns(loans: pl.DataFrame, output: dict) -> None:
    with pytest.warns(PolarityWarning, match=r"accuracy is 0\.\d+ \(below 0\.5\).*favorable=0") as rec:
        report = audit(loans, **output)
    assert pf.core.report.run_metadata.request_of(report)["polarity_warnings"] == [str(w.message) for w in rec
                                                                            if w.category is PolarityWarning]


def test_the_score_rooms_read_the_favorable_labels_score(loans: pl.DataFrame) -> None:
    kw = {"y_true": "deny", "protected": "race", "favorable": 0}
    with pytest.raises(PolarityError, match="score_label"):
        pf.score_report(loans, y_score="p_approve", **kw)
    with pytest.raises(PolarityError, match=r"y_score=1 - pl.col\('p_deny'\)"):  # P(deny): the fix is given
        pf.threshold_sweep(loans, y_score="p_deny", score_label=1, **kw)
    rep = pf.score_report(loans, y_score="p_approve", score_label=0, ci=None, **kw)
    auc = rep.filter(pl.col("attribute").is_null(), metric="roc_auc")["value"].item()
    assert auc > 0.6
    with pytest.warns(PolarityWarning, match="mean score"):  # P(deny) read as P(approve)
        pf.score_report(loans, y_score="p_deny", score_label=0, ci=None, **kw)


def test_adverse_impact_of_a_boolean_decision(loans: pl.DataFrame, approval: dict[str, float]) -> None:
    kw = {"y_pred": pl.col("p_approve") >= 0.5, "protected": "race", "intersections": 1}
    with pytest.raises(PolarityError, match="favorable=True"):
        pf.adverse_impact(loans, favorable=0, **kw)
    got = pf.adverse_impact(loans, favorable=0, score_label=0, **kw)
    assert dict(got.select("group", "selection_rate").iter_rows()) == pytest.approx(approval, abs=1e-12)
    assert got.filter(group="white")["impact_ratio"].item() == 1.0  # the advantaged group is the reference
    same = pf.adverse_impact(loans, favorable=True, **kw)
    assert same.equals(got)


def test_the_command_line(loans: pl.DataFrame, approval: dict[str, float], tmp_path: Path,
                          capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    data = tmp_path / "loans.parquet"
    loans.write_parquet(data)
    base = ["report", str(data), "--y-true", "deny", "--protected", "race", "--favorable", "0", "--no-ci"]
    for output, fix in ((["--y-score", "p_deny"], "1"), (["--y-pred", "p_approve >= 0.5"], "0")):
        assert cli_main([*base, *output]) == 2
        err = capsys.readouterr().err
        assert "PolarityError" not in err and "--score-label 0" in err and "--score-label 1" in err, err
        out = tmp_path / f"r{fix}.parquet"
        assert cli_main([*base, *output, "--score-label", fix, "--out", str(out)]) == 0
        assert rates(pl.read_parquet(out)) == pytest.approx(approval, abs=1e-12)
    # the EEOC table of the same decision
    ai = tmp_path / "ai.parquet"
    args = [*base, "--y-pred", "p_approve >= 0.5", "--adverse-impact", "eeoc", "--adverse-impact-out", str(ai)]
    assert cli_main(args) == 2
    assert cli_main([*args, "--score-label", "0"]) == 0
    table = pl.read_parquet(ai).filter(attribute="race")
    assert table.filter(group="white")["impact_ratio"].item() == 1.0


# ---- values that match nothing, and the rows in neither group ------------------------------------


def test_a_favorable_typo_is_named(loans: pl.DataFrame, tmp_path: Path) -> None:
    yes_no = loans.with_columns(approved=pl.when(pl.col("deny") == 0).then(pl.lit("yes")).otherwise(pl.lit("no")))
    with pytest.warns(ReferenceWarning, match=r"favorable='No': 'No' does not occur in column 'approved' "
                                              r"\(values: 'no', 'yes'\)"):  # fmt: skip
        pf.fairness_report(yes_no, y_true="approved", protected="race", favorable="No", ci=None)
    data = tmp_path / "yn.parquet"
    yes_no.write_parquet(data)
    with pytest.warns(ReferenceWarning, match=r"favorable='No': 'No' does not occur in column 'approved'"):
        assert cli_main(["report", str(data), "--y-true", "approved", "--protected", "race", "--favorable", "No"]) == 0
    from polfair.cli import flag_message  # how the command line prints it

    assert flag_message("y_true='approved', favorable='No': ...").startswith("--y-true approved, --favorable No:")


def test_a_monitored_typo_is_named_and_the_rest_is_no_real_value(loans: pl.DataFrame) -> None:
    cfg = {"monitored": {"race": ["black", "hispanc"]}, "reference": {"race": ["white"]}}
    with pytest.warns(ReferenceWarning, match=r"monitored\.race = 'black\|hispanc': 'hispanc' does not occur in "
                                              r"column 'race' \(values: 'black', 'hispanic', 'other', 'white'\)"):
        rep = pf.fairness_report(loans, y_true="deny", y_pred=(pl.col("p_deny") >= 0.5).cast(pl.Int8), favorable=0,
                                 config=cfg, ci=None)  # fmt: skip
    n = dict(rep.filter(pl.col("group").is_not_null(), metric="num_instances", attribute="race")
             .select("group", "n").iter_rows())  # fmt: skip
    counts = dict(loans.group_by("race").len().iter_rows())
    assert n == {"black|hispanc": counts["black"], "white": counts["white"],
                 "(neither group)": counts["hispanic"] + counts["other"]}  # the real "other" is not a group
    # a range that matches no row: named, with the column's range
    ranges = {"monitored": {"p_deny": [0.0, 0.2]}, "reference": {"p_deny": [[0.3, 0.5], [2, 3]]}}
    with pytest.warns(ReferenceWarning, match=r"reference\.p_deny = '\[0\.3, 0\.5\]\|\[2, 3\]': '\[2, 3\]' does "
                                              r"not occur in column 'p_deny' \(values from 0\.\d+ to 0\.\d+\); the "
                                              r"reference group .* holds the other values only"):
        pf.fairness_report(loans, y_true="deny", favorable=0, ci=None, config=ranges)


# ---- one story with and without thresholds ------------------------------------------------------


def _page_violations(page: str) -> set[tuple[str, str, str]]:
    found = re.findall(r'data-status="violation" data-metric="([^"]+)" data-attribute="([^"]+)" data-group="([^"]+)"',
                       page)  # fmt: skip
    return {(a, g, m) for m, a, g in found if " & " not in a}


def test_the_four_outputs_agree(loans: pl.DataFrame, tmp_path: Path) -> None:
    pytest.importorskip("jinja2")
    data = tmp_path / "loans.parquet"
    loans.write_parquet(data)
    kw = {"y_true": "deny", "y_pred": (pl.col("p_deny") >= 0.5).cast(pl.Int8), "protected": "race", "favorable": 0,
          "privileged": {"race": "white"}}  # fmt: skip
    cli = ["report", str(data), "--y-true", "deny", "--y-pred", "CAST(p_deny >= 0.5 AS TINYINT)", "--protected",
           "race", "--favorable", "0", "--privileged", "race=white", "--fail-on-violation"]  # fmt: skip
    # without thresholds: nothing is judged, by any output
    plain = pf.fairness_report(loans, **kw)
    text = pf.summarize(plain)
    assert "not judged (no thresholds)" in text and "thresholds='four_fifths'" in text
    assert not re.search(r"[\d\]][!?~](\s|$)", text)  # no verdict mark after any value or interval
    page = pf.to_html(plain)
    assert 'id="pf-not-judged"' in page and not _page_violations(page) and 'data-status="ok"' not in page
    with pytest.raises(pf.PolfairError, match="status column"):
        pf.alerts(plain)
    assert cli_main(cli) == 2
    # with the four-fifths policy: the same verdict everywhere
    judged = pf.fairness_report(loans, **kw, thresholds="four_fifths")
    alerts = pf.alerts(judged)
    flagged = {(a, g, m) for a, g, m in alerts.select(pl.col("attribute").cast(pl.String), "group",
                                                      pl.col("metric").cast(pl.String)).iter_rows()}  # fmt: skip
    assert flagged and {m for _, _, m in flagged} <= {"disparate_impact", "false_positive_rate_ratio",
                                                      "false_negative_rate_ratio"}  # fmt: skip
    assert _page_violations(pf.to_html(judged)) == flagged
    text = pf.summarize(judged)
    assert len(re.findall(r"[\d\]]!", text)) == len(flagged)  # one mark per violation (every group is shown)
    assert cli_main([*cli, "--thresholds", "four_fifths"]) == 1


# ---- the alarm on the page; the fairlearn facade's reading -----------------------------------------


def test_the_page_shows_the_polarity_warning(loans: pl.DataFrame) -> None:
    pytest.importorskip("jinja2")
    with pytest.warns(PolarityWarning) as rec:
        inverted = audit(loans, y_pred=(pl.col("p_approve") >= 0.5).cast(pl.Int8))  # 1 = approved: inverted
    page = pf.to_html(inverted)
    assert 'id="pf-polarity"' in page and "look inverted relative to the favorable outcome" in page
    from markupsafe import escape  # jinja's escaping

    assert str(escape(str(rec[0].message))) in page  # the warning itself, word for word
    right = audit(loans, y_pred=(pl.col("p_deny") >= 0.5).cast(pl.Int8))
    assert 'id="pf-polarity"' not in pf.to_html(right)


def test_the_fairlearn_facade_reads_y_pred_as_fairlearn_does(loans: pl.DataFrame) -> None:
    # fairlearn compares y_pred == pos_label (scikit-learn's reading: True == 1): the facade is fairlearn's
    fm = pytest.importorskip("fairlearn.metrics")
    import polfair.compat.fairlearn as pfx

    approved = loans.with_columns(approved=pl.col("p_approve") >= 0.5)
    y, p, g = (approved[c].to_numpy() for c in ("deny", "approved", "race"))
    for pos in (0, 1):  # a ratio: an inverted reading changes it (a difference would not)
        got = approved.select(pfx.demographic_parity_ratio("deny", "approved", sensitive_features="race",
                                                           pos_label=pos)).item()  # fmt: skip
        frame = fm.MetricFrame(metrics=lambda a, b, pos=pos: fm.selection_rate(a, b, pos_label=pos), y_true=y, y_pred=p,
                               sensitive_features=g)  # fmt: skip
        assert got == pytest.approx(frame.ratio(method="between_groups"), abs=1e-12)


def test_duckdb_follows_the_same_rule(loans: pl.DataFrame, approval: dict[str, float]) -> None:
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()
    rel = con.from_arrow(loans.with_columns(approved=pl.col("p_approve") >= 0.5).to_arrow())
    kw = {"y_true": "deny", "protected": "race", "favorable": 0, "ci": None}
    for output, fix in (({"y_score": "p_deny"}, 1), ({"y_pred": "approved"}, 0)):
        with pytest.raises(PolarityError, match="score_label=0 .*score_label=1"):
            pf.fairness_report(rel, **output, **kw)
        assert rates(pf.fairness_report(rel, **output, **kw, score_label=fix)) == pytest.approx(approval, abs=1e-12)
    with pytest.raises(PolarityError, match="favorable=True"):
        pf.adverse_impact(rel, y_pred="approved", protected="race", favorable=0)
    with pytest.warns(PolarityWarning, match="mean score"):
        pf.score_report(rel, y_true="deny", y_score="p_deny", protected="race", favorable=0, score_label=0, ci=None)
    yes_no = con.from_arrow(loans.with_columns(
        approved=pl.when(pl.col("deny") == 0).then(pl.lit("yes")).otherwise(pl.lit("no"))).to_arrow())
    with pytest.warns(ReferenceWarning, match=r"favorable='No': 'No' does not occur in column 'approved' "
                                              r"\(values: 'no', 'yes'\)"):  # fmt: skip
        pf.fairness_report(yes_no, y_true="approved", protected="race", favorable="No", ci=None)
