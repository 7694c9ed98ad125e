"""Every ```python block of README.md and docs/*.md runs, in order per file, with warnings as errors.

Blocks of one file share a namespace (a later block may use an earlier block's names) and run in a
temporary working directory. Fence snippets that are not meant to run as ```text or ```bash.
"""

from __future__ import annotations

import os
import re
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", re.S | re.M)


def blocks(path: Path) -> list[tuple[int, str]]:
    """(line number, source) of every ```python block."""
    text = path.read_text(encoding="utf-8")
    return [(text.count("\n", 0, m.start()) + 1, m.group(1)) for m in FENCE.finditer(text)]


def test_the_fence_pattern_finds_blocks() -> None:
    found = blocks_of_text("intro\n```python\nx = 1\n```\n```text\nnot code\n```\n```python\ny = x\n```\n")
    assert [src for _, src in found] == ["x = 1\n", "y = x\n"]


def blocks_of_text(text: str) -> list[tuple[int, str]]:
    return [(text.count("\n", 0, m.start()) + 1, m.group(1)) for m in FENCE.finditer(text)]


@pytest.mark.parametrize("path", [p for p in DOCS if blocks(p)], ids=lambda p: p.name)
def test_code_blocks_run(path: Path, tmp_path, monkeypatch) -> None:
    for shared in ("examples",):  # the docs read the repository's example files by relative path
        if (ROOT / shared).exists():
            (tmp_path / shared).symlink_to(ROOT / shared)
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__docs__"}
    for line, source in blocks(path):
        code = compile(source, f"{path.name}:{line}", "exec")
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            try:
                exec(code, namespace)  # noqa: S102 - the docs' own examples
            except ModuleNotFoundError as exc:  # an optional extra not installed here
                pytest.skip(f"{path.name}:{line} needs {exc.name}")
            except Exception as exc:
                msg = f"{path.relative_to(ROOT)}:{line}: the python block fails: {type(exc).__name__}: {exc}"
                raise AssertionError(msg) from exc
    assert os.getcwd() == str(tmp_path)
