"""Issue 22, "Done when": one verdict for one number in every output.

Data on three days with, against the four-fifths band on disparate impact and min_sample_size 30:
a group clearly outside the band (``far``: violation), one outside with an interval reaching in
(``edge``: inconclusive), one inside (``inside``: ok) and one below min_sample_size (``tiny``:
insufficient data); on the third day ``far`` comes back inside. The report's ``status`` column,
``alerts``, the CLI summary's marks, its violation lines and exit code, and the HTML page's verdict
elements (``data-status``/``-metric``/``-attribute``/``-group``/``-period``) must say the same
thing for every (period, attribute, group, metric).
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import polars as pl
import pytest

import polfair as pf
from polfair.cli import main
from polfair.monitor import alerts

pytest.importorskip("jinja2")
pytest.importorskip("matplotlib")

MARKS = {"violation": "!", "inconclusive": "?", "insufficient_data": "~", "ok": ""}
#: group -> (rows, predicted favorable) per day; ref selects 50%
PLAN = {
    1: {"ref": (2000, 1000), "far": (2000, 500), "edge": (60, 21), "inside": (500, 250), "tiny": (10, 1)},
    2: {"ref": (2000, 1000), "far": (2000, 520), "edge": (60, 20), "inside": (500, 245), "tiny": (10, 1)},
    3: {"ref": (2000, 1000), "far": (2000, 900), "edge": (60, 21), "inside": (500, 255), "tiny": (10, 2)},
}
EXPECTED = {
    (1, "far"): "violation", (2, "far"): "violation", (3, "far"): "ok",
    **{(d, "edge"): "inconclusive" for d in PLAN}, **{(d, "inside"): "ok" for d in PLAN},
    **{(d, "tiny"): "insufficient_data" for d in PLAN}, **{(d, "ref"): "ok" for d in PLAN},
}


def _data() -> pl.DataFrame:
    parts = []
    for day, groups in PLAN.items():
        for g, (n, sel) in groups.items():
            parts.append(pl.DataFrame({
                "day": [day] * n, "grp": [g] * n, "p": [1] * sel + [0] * (n - sel),
                "y": [i % 2 for i in range(n)],
            }))  # fmt: skip
    return pl.concat(parts)


class _Verdicts(HTMLParser):
    """Every element of the page that carries data-group: (period, attribute, group, metric) -> statuses."""

    def __init__(self) -> None:
        super().__init__()
        self.found: dict[tuple[str | None, str, str, str], set[str]] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if "data-group" in a:
            key = (a.get("data-period"), str(a["data-attribute"]), str(a["data-group"]), str(a["data-metric"]))
            self.found.setdefault(key, set()).add(str(a["data-status"]))


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    folder = tmp_path_factory.mktemp("verdict")
    data = folder / "decisions.parquet"
    _data().write_parquet(data)
    config = folder / "monitor.toml"
    config.write_text('y_true = "y"\ny_pred = "p"\nmin_sample_size = 30\n'
                      "[thresholds]\ndisparate_impact = [0.8, 1.25]\n", encoding="utf-8")  # fmt: skip
    base = ["report", str(data), "--protected", "grp", "--privileged", "grp=ref", "--by", "day",
            "--config", str(config), "--fail-on-violation", "--run-id", "nightly"]  # fmt: skip
    out, page = folder / "report.parquet", folder / "page.html"
    import contextlib
    import io

    written = main([*base, "--out", str(out), "--html", str(page)])
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        printed = main(base)
    return {"written": written, "printed": printed, "summary": text.getvalue(), "report": pl.read_parquet(out),
            "page": page.read_text(encoding="utf-8"), "data": data, "config": config}  # fmt: skip


def _judged(report: pl.DataFrame) -> dict[tuple[int, str, str, str], str]:
    rows = report.filter(pl.col("status").is_not_null()).select(
        "day", pl.col("attribute").cast(pl.String), "group", pl.col("metric").cast(pl.String), "status")
    return {(d, a, g, m): s for d, a, g, m, s in rows.iter_rows()}


def test_the_report_has_the_four_statuses(run: dict[str, object]) -> None:
    judged = _judged(run["report"])  # type: ignore[arg-type]
    assert {(d, g): s for (d, _, g, m), s in judged.items() if m == "disparate_impact"} == EXPECTED
    # same numbers through the Python API with the same config
    rep = pf.fairness_report(run["data"], protected="grp", privileged={"grp": "ref"}, by="day", config=run["config"])
    assert _judged(rep) == judged


def test_alerts_and_the_exit_code(run: dict[str, object]) -> None:
    report = run["report"]
    assert isinstance(report, pl.DataFrame)
    shown = alerts(report)
    assert {(d, g) for d, g in shown.select("day", "group").iter_rows()} == {
        k for k, s in EXPECTED.items() if s == "violation"}  # fmt: skip
    assert run["written"] == 1 and run["printed"] == 1  # --fail-on-violation


def test_the_cli_summary_says_the_same(run: dict[str, object]) -> None:
    text = str(run["summary"])
    judged = _judged(run["report"])  # type: ignore[arg-type]
    seen = 0
    for block in text.split("\n== period day = ")[1:]:
        day = int(block.split("\n", 1)[0])
        header: list[str] = []
        for line in block.splitlines()[1:]:
            if line.startswith("group"):
                header = re.split(r"\s{2,}", line.strip())
                continue
            m = re.match(r"^(ref|far|edge|inside|tiny)\s+(.*)$", line)
            if not m or not header:
                continue
            cells = re.findall(r"-?\d+\.\d\d(?: \[-?\d+\.\d\d, -?\d+\.\d\d\])?([!?~]?)", m.group(2))
            mark = dict(zip(header[1:], cells)).get("DI")
            if mark is None:
                continue
            status = judged[(day, "grp", m.group(1), "disparate_impact")]
            assert mark == MARKS[status], (day, m.group(1), status, mark)
            seen += 1
    assert seen == len(EXPECTED)  # every (period, group) of every period, labelled
    # the violation lines: one per violation, period and every field on the line
    lines = [line.strip() for line in text.splitlines() if "band [0.8, 1.25]" in line]
    assert sorted(lines) == sorted(
        f"day = {d}  grp = {g}  disparate_impact {v:.2f} [{lo:.2f}, {hi:.2f}]  band [0.8, 1.25]  violation (group "
        "disadvantaged)"
        for d, g, v, lo, hi in alerts(run["report"]).select("day", "group", "value", "value_lo", "value_hi").iter_rows()  # type: ignore[arg-type]
    )  # fmt: skip
    assert "2 threshold violation(s); 3 inconclusive" in text


def test_the_html_page_says_the_same(run: dict[str, object]) -> None:
    parser = _Verdicts()
    parser.feed(str(run["page"]))
    found = parser.found
    judged = _judged(run["report"])  # type: ignore[arg-type]
    for (day, a, g, m), status in judged.items():
        assert found.get((str(day), a, g, m)) == {status}, (day, a, g, m, status, found.get((str(day), a, g, m)))
    # and the page shows nothing the report does not say
    for (period, a, g, m), statuses in found.items():
        assert period is not None and statuses == {judged[(int(period), a, g, m)]}
    page = str(run["page"])
    # per attribute set and metric: periods in violation / inconclusive / ok and the latest status
    assert 'data-periods-violation="2" data-periods-inconclusive="1" data-periods-ok="0"' in page
    assert "2 of 3 periods with a violation" in page  # the over-time chart marks them
    # the effective configuration and the favorable outcome, without repeating any option
    assert "&#34;disparate_impact&#34;: &#34;[0.8, 1.25]&#34;" in page or '"disparate_impact": "[0.8, 1.25]"' in page
    assert "Favorable outcome:</strong> y = 1" in page


def test_a_report_written_in_python_shows_its_provenance(run: dict[str, object], tmp_path: Path) -> None:
    rep = pf.fairness_report(run["data"], protected="grp", privileged={"grp": "ref"}, by="day", config=run["config"])
    page = pf.to_html(rep)
    text = " ".join(re.sub(r"<[^>]+>", " ", page).split())
    for label in ("label (y_true) y", "prediction (y_pred) p", "thresholds (bands) disparate_impact = [0.8, 1.25]",
                  "minimum sample size 30", "confidence level 0.95", "privileged / reference groups grp = ref"):
        assert label in text, label
