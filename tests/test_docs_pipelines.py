"""docs/schema.md: the schema page's tables list exactly the columns of polfair.core.schema (the page's
python blocks, like every page's, run in tests/test_docs_run.py)."""

from __future__ import annotations

from pathlib import Path

from polfair.core.schema import CELL_SCHEMA, REPORT_SCHEMA

DOCS = Path(__file__).resolve().parents[1] / "docs"


def _table(text: str, heading: str) -> list[list[str]]:
    part = text.split(heading, 1)[1]
    rows = [line for line in part.splitlines() if line.startswith("| `")]
    end = part.index("\n\n", part.index("| `"))
    block = part[:end]
    return [[c.strip() for c in line.strip("|").split("|")] for line in rows if line in block]


def test_schema_page_lists_the_schema() -> None:
    text = (DOCS / "schema.md").read_text(encoding="utf-8")
    report = _table(text, "## The long report")
    assert [r[0].strip("`") for r in report] == [c.name for c in REPORT_SCHEMA]
    assert [int(r[2]) for r in report] == [c.since for c in REPORT_SCHEMA]
    assert [r[3] for r in report] == [c.kind for c in REPORT_SCHEMA]
    cells = _table(text, "## The cell table")
    names = [n.strip().strip("`") for r in cells for n in r[0].split(",")]
    assert names == [c.name for c in CELL_SCHEMA]
