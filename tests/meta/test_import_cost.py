"""``import polfair`` and ``polfair --help`` load Polars and polfair's light modules, nothing heavy.

The public names load on first use (``polfair.__getattr__``, PEP 562) and the ``df.fair`` methods
on first lookup (``polfair.namespace._Method``). The time itself is measured by
``bench/import_time.py`` (a ratio to ``import polars``), never here.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import polfair

#: Modules that must not load with ``import polfair`` (each costs 0.05-0.5 s or more).
HEAVY = ("scipy", "narwhals", "jinja2", "matplotlib", "pandas", "pyarrow", "duckdb", "pyspark",
         "polfair.api", "polfair.compat", "polfair.core.report.build", "polfair.core.intervals")  # fmt: skip


def _loaded_after(code: str) -> list[str]:
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    names = json.loads(out.strip().splitlines()[-1])
    return sorted({h for h in HEAVY for m in names if m == h or m.startswith(h + ".")})


def test_import_polfair_loads_nothing_heavy() -> None:
    assert _loaded_after("import polfair") == []


def test_cli_help_loads_nothing_heavy() -> None:
    code = (
        "import contextlib, io\nfrom polfair.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n    main(['--help'])"
    )
    assert _loaded_after(code) == []


def test_first_use_loads_the_name() -> None:
    code = "import polfair\npolfair.fairness_report"
    assert "polfair.api" in _loaded_after(code)


def test_every_public_name_resolves() -> None:
    for name in polfair.__all__:
        assert getattr(polfair, name) is not None, name
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        polfair.no_such_name  # noqa: B018


def test_the_lazy_table_is_the_type_checking_imports() -> None:
    """``__getattr__`` loads exactly the ``if TYPE_CHECKING:`` imports (what mypy and IDEs see), and ``__all__``."""
    tree = ast.parse(Path(polfair.__file__).read_text())
    block = next(n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING")
    seen: dict[str, str] = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom) and node.module
        seen.update({a.name: node.module for a in node.names if a.asname is None})
    assert seen == polfair._where()
    assert set(polfair._where()) | {"__version__"} == set(polfair.__all__)


def test_public_names_load_from_a_zipped_package(tmp_path: Path) -> None:
    """The lazy table is read through the package's loader: it also works where ``__init__.py`` is
    no file on disk (a zip on ``sys.path``, as zipapps and some bundlers ship packages)."""
    import zipfile

    root = Path(polfair.__file__).parent
    archive = tmp_path / "polfair.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for path in root.rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                z.write(path, Path("polfair") / path.relative_to(root))
    code = (f"import sys; sys.path.insert(0, {str(archive)!r}); import polfair as pf; "
            "print(pf.__file__.startswith(sys.path[0]), pf.fairness_report.__module__)")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["True", "polfair.api"]
