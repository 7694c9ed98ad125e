"""examples/: every command of examples/README.md runs as written (issue 22), in order, in a scratch folder."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "examples" / "README.md"


def commands() -> list[tuple[str, int]]:
    """(command, expected exit status) of every line of the ```bash blocks; ``# exit N`` sets the status."""
    text = README.read_text(encoding="utf-8")
    out = []
    for block in re.findall(r"```bash\n(.*?)```", text, re.S):
        for line in block.splitlines():
            if not line.strip():
                continue
            m = re.search(r"#\s*exit (\d+)\s*$", line)
            out.append((line.split("#")[0].strip(), int(m.group(1)) if m else 0))
    return out


def test_the_readme_has_commands() -> None:
    assert len(commands()) >= 7
    assert any("--config examples/fairness.toml" in c for c, _ in commands())


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX shell words")
def test_every_example_command_runs_as_written(tmp_path: Path) -> None:
    pytest.importorskip("jinja2")
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    for command, status in commands():
        words = shlex.split(command)
        if words[0] == "polfair":
            words = [sys.executable, "-m", "polfair", *words[1:]]
        elif words[0] == "python":
            words = [sys.executable, *words[1:]]
        done = subprocess.run(words, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600, check=False)
        assert done.returncode == status, f"{command}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    # what they wrote
    assert (tmp_path / "compas.html").stat().st_size > 10_000 and (tmp_path / "nightly.html").exists()
    table = pl.read_parquet(tmp_path / "fairness" / "*.parquet")
    assert table["run_id"].unique().to_list() == ["2026-05-30"]  # replaced, not duplicated
    assert table["date"].n_unique() == 30
