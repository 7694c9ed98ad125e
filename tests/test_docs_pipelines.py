"""docs/schema.md and docs/pipelines.md: every python block runs (in order, warnings as errors), and the
schema page's tables list exactly the columns of polfair.core.schema."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

from polfair.core.schema import CELL_SCHEMA, REPORT_SCHEMA

DOCS = Path(__file__).resolve().parents[1] / "docs"


@pytest.mark.parametrize("name", ["schema.md", "pipelines.md"])
def test_python_blocks_run(name: str) -> None:
    text = (DOCS / name).read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks
    for block in blocks:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            exec(compile(block, name, "exec"), {})  # noqa: S102


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
