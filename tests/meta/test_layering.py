"""The package's layering, checked by parsing its imports (as polars and narwhals check their import hygiene).

Rules (documented in ``docs/design.md``, "Layout"):

* R1 the core (``polfair.core.*``) imports from polfair only ``polfair.core.*`` and
  ``polfair.exceptions``, and from third parties only polars, numpy, pyarrow and scipy;
* R2 a room (``engines``, ``compat.<peer>``, ``monitor``, ``outputs``, ``scores``, ...) imports the core
  and ``polfair.exceptions``/``polfair.datasets``, not another room, except the documented edges in
  :data:`ROOM_EDGES`;
* R3 no import cycles among polfair modules, counting imports inside functions;
* R4 no ``from polfair.x import _name`` across modules, nor ``alias._name`` through a module alias
  (underscore *modules* such as ``polfair.core._args`` are package-internal and may be imported
  anywhere in polfair);
* R5 third-party packages other than polars, numpy, pyarrow and scipy are imported inside functions only
  (optional extras load lazily);
* R6 at run time, ``import polfair`` loads no optional extra, and ``import polfair.core`` loads no room;
* R7 the core's subpackages and leaves are layers (:data:`CORE_LAYERS`): each imports only from the
  layers below it (issue 38).
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "polfair"

#: Modules on top of the rooms: they may import anything of polfair.
TOP = {"polfair", "polfair.__main__", "polfair.api", "polfair.cli", "polfair.namespace"}
#: Modules every room may use besides the core.
SHARED = {"exceptions", "datasets"}
#: Documented room -> room edges (docs/design.md): the monitor's config names yardstick's groupwise
#: metrics; mitigation builds per-group thresholds, and the NYC LL144 preset its scoring rate, on the score
#: histograms of ``scores``; the HTML report reads the monitor's statuses; the score histogram runs
#: on Spark/DuckDB through the engines' frame adapter (``engines.frame.frame_of``, issue 21; issue 38), and so
#: does the regression pass (issue 23), the slice search (issue 33) and reweighing's fit (issue 30); the
#: terminal summary and the HTML section of a slice search recognise its result (``slices.is_slice_table``);
#: ``ranking_report(thresholds=)`` judges its report with the monitor's ``apply_thresholds`` (one reading of a
#: threshold, one status rule), and so does ``FairnessAccumulator(thresholds=)``'s ``compute()``.
ROOM_EDGES = {
    ("monitor", "compat.yardstick"),
    ("mitigation", "scores"),
    ("regulatory", "scores"),
    ("outputs", "monitor"),
    ("scores", "engines"),
    ("regression", "engines"),
    ("ranking", "engines"),
    ("ranking", "monitor"),
    ("engines", "monitor"),
    ("slices", "engines"),
    ("outputs", "slices"),
    ("mitigation", "engines"),
}
#: Third-party packages a module may import at module level.
EAGER_THIRD_PARTY = {"polars", "numpy", "pyarrow", "scipy"}
#: Optional extras that ``import polfair`` must not load.
OPTIONAL = ("pandas", "sklearn", "pyspark", "narwhals", "jinja2", "matplotlib", "statsmodels", "duckdb")


def modules() -> Iterator[tuple[str, Path]]:
    """Every module of the package as (dotted name, path)."""
    for path in sorted(PKG.rglob("*.py")):
        parts = path.relative_to(PKG.parent).with_suffix("").parts
        yield ".".join(parts[:-1] if parts[-1] == "__init__" else parts), path


def imports(path: Path) -> Iterator[tuple[str, list[str], int, bool]]:
    """(imported module, imported names, line, at module level) for every import, functions included."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top_level = {id(n) for n in tree.body}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module, [a.name for a in node.names], node.lineno, id(node) in top_level
        elif isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, [], node.lineno, id(node) in top_level


def room(mod: str) -> str:
    """The room of a polfair module: ``core``, ``compat.aif360``, ``monitor``, ``api``, ..."""
    parts = mod.split(".")[1:] or ["__init__"]
    if parts[0] == "compat" and len(parts) > 1:
        return "compat." + parts[1]
    return parts[0]


def _resolve(target: str, names: list[str]) -> list[str]:
    """``from polfair.core import entropy`` imports the module ``polfair.core.entropy``."""
    known = {m for m, _ in modules()}
    subs = [f"{target}.{n}" for n in names if f"{target}.{n}" in known]
    return subs or [target]


def test_core_and_rooms_import_in_the_allowed_directions():
    bad = []
    for mod, path in modules():
        me = room(mod)
        for target, names, line, _ in imports(path):
            if not target.startswith("polfair"):
                continue
            for tgt in _resolve(target, names):
                them = room(tgt)
                if mod in TOP or them == me or them in SHARED:
                    continue
                if me == "core":
                    bad.append(f"R1 {mod}:{line} the core imports {tgt}")
                elif me in SHARED:
                    bad.append(f"R2 {mod}:{line} {me} is shared by every room and imports {tgt}")
                elif them != "core" and (me, them) not in ROOM_EDGES:
                    bad.append(f"R2 {mod}:{line} room {me} imports room {them} ({tgt})")
    assert not bad, "\n".join(bad)


def test_no_private_names_across_modules():
    bad = []
    for mod, path in modules():
        for target, names, line, _ in imports(path):
            if not target.startswith("polfair") or target == mod:
                continue
            private = [n for n in names if n.startswith("_") and not n.startswith("__")]
            if private and f"{target}.{private[0]}" not in {m for m, _ in modules()}:
                bad.append(f"R4 {mod}:{line} imports private {private} from {target}")
        bad += [f"R4 {mod}:{line} uses private {name} of {target} through its module alias"
                for target, name, line in private_attributes(path, mod)]  # fmt: skip
    assert not bad, "\n".join(bad)


def private_attributes(path: Path, mod: str) -> Iterator[tuple[str, str, int]]:
    """``alias._name`` where ``alias`` is another polfair module (``from polfair.x import y as alias``,
    ``import polfair.x.y as alias``): the same private reach as importing ``_name``, spelled otherwise."""
    known = {m for m, _ in modules()}
    tree = ast.parse(path.read_text(encoding="utf-8"))
    alias: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and node.module.startswith("polfair"):
            alias |= {a.asname or a.name: f"{node.module}.{a.name}" for a in node.names
                      if f"{node.module}.{a.name}" in known}  # fmt: skip
        elif isinstance(node, ast.Import):
            alias |= {a.asname: a.name for a in node.names if a.asname and a.name in known}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in alias
                and alias[node.value.id] != mod and node.attr.startswith("_") and not node.attr.startswith("__")):
            yield alias[node.value.id], node.attr, node.lineno


def test_no_import_cycles():
    graph: dict[str, set[str]] = {}
    for mod, path in modules():
        edges = graph.setdefault(mod, set())
        for target, names, _, _ in imports(path):
            if target.startswith("polfair"):
                for tgt in _resolve(target, names):
                    # a package __init__ importing its own children (re-exports) is not a cycle
                    if tgt != mod and not tgt.startswith(mod + ".") and not mod.startswith(tgt + "."):
                        edges.add(tgt)
    seen: dict[str, int] = {}  # 1 on the stack, 2 done
    cycles: list[str] = []

    def visit(node: str, stack: list[str]) -> None:
        seen[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if nxt not in graph:
                continue
            if seen.get(nxt) == 1:
                cycles.append(" -> ".join([*stack[stack.index(nxt):], nxt]))
            elif nxt not in seen:
                visit(nxt, [*stack, nxt])
        seen[node] = 2

    for start in sorted(graph):
        if start not in seen:
            visit(start, [start])
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_optional_extras_are_imported_lazily():
    stdlib = set(sys.stdlib_module_names)
    bad = []
    for mod, path in modules():
        for target, _, line, top in imports(path):
            root = target.split(".")[0]
            if top and root not in stdlib and root != "polfair" and root not in EAGER_THIRD_PARTY:
                bad.append(f"R5 {mod}:{line} imports {target} at module level (optional: import it inside the function)")
    assert not bad, "\n".join(bad)


def _loaded_after(statement: str, prefixes: tuple[str, ...]) -> list[str]:
    code = f"import sys; {statement}; print(sorted(m for m in sys.modules if m.split('.')[0] in {prefixes!r} or m.startswith({prefixes!r})))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return eval(out.stdout)  # a printed list of module names


def test_import_polfair_loads_no_optional_extra():
    assert _loaded_after("import polfair", OPTIONAL) == []


def test_the_core_imports_alone():
    # a bare ``polfair`` package object (its __init__ would load the rooms): importing the core then
    # loads nothing outside it
    stub = (
        f"import types; p = types.ModuleType('polfair'); p.__path__ = [{str(PKG)!r}]; sys.modules['polfair'] = p; "
        "import polfair.core.report.build, polfair.core.passes.collect, polfair.core.passes.counts"
    )
    loaded = _loaded_after(stub, ("polfair", "narwhals", "pandas"))
    outside = [m for m in loaded if m != "polfair" and not m.startswith(("polfair.core", "polfair.exceptions"))]
    assert outside == []
    assert "polfair.core.report.build" in loaded


def test_old_shim_paths_are_gone():
    # removed after 0.1 (CHANGELOG.md, "Migration"): each name lives in its room's module (a file check:
    # an editable install of another checkout would still resolve the module names)
    for old in ("aif360", "expr", "sklearn", "groupwise", "multiclass", "accumulator", "metrics"):
        assert not (PKG / f"{old}.py").exists(), old
    assert {"FairnessConfig", "alerts", "apply_thresholds"} <= set(dir(__import__("polfair.monitor").monitor))


def test_public_names_are_in_all():
    # every public top-level function/class of a module is in its __all__ (underscore names are private)
    bad = []
    for mod, path in modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        listed = None
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
                try:
                    listed = set(ast.literal_eval(node.value))
                except ValueError:  # built from lists (polfair/__init__.py): read the module's value
                    listed = set(importlib.import_module(mod).__all__)
        public = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and not n.name.startswith("_")]
        if public and listed is None:
            bad.append(f"{mod}: no __all__ but public {public}")
        elif public:
            missing = [n for n in public if n not in listed]
            if missing:
                bad.append(f"{mod}: public but not in __all__: {missing} (add them, or make them _private)")
    assert not bad, "\n".join(bad)


#: The core's layout (issue 31): subpackages by concept and the shared leaves; a new module goes in
#: one of these (docs/design.md, "Layout"), not beside them with a leading underscore for a package.
CORE_PACKAGES = {"contract", "passes", "proba", "intervals", "entropy", "report", "regression"}
CORE_LEAVES = {"__init__.py", "request.py", "schema.py", "metrics.py", "values.py", "user_metrics.py", "glossary.py", "clustered.py",
               "hashing.py", "docstrings.py", "_typing.py", "_args.py", "options.py",
               "reference.py"}  # fmt: skip


def test_the_core_is_a_set_of_named_subpackages() -> None:
    core = PKG / "core"
    entries = {p.name for p in core.iterdir() if p.name != "__pycache__"}
    assert entries == CORE_PACKAGES | CORE_LEAVES
    for name in CORE_PACKAGES:
        init = core / name / "__init__.py"
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
        assert doc, f"core/{name}/__init__.py says what the package owns"


#: The core's layers, bottom first (issue 38): a module of the core imports only from its own
#: subpackage or leaf and from the layers below it, never from its layer or above (imports inside
#: functions count). The order is the request's way down and the report's way up: the shared leaves,
#: what each role accepts, estimated attributes' options, the request and the ONE pass (the cell
#: table), the entropy indices, the statistics on cells, the report, the regression report on it.
#: ``polfair.core.__init__`` (the core's re-exports) sits above them all.
CORE_LAYERS: tuple[frozenset[str], ...] = tuple(frozenset(layer) for layer in (
    {"_typing", "docstrings", "hashing", "schema", "values", "metrics", "options", "reference"},
    {"_args", "glossary", "user_metrics"},
    {"contract"},
    {"proba"},
    {"passes"},
    {"request"},
    {"entropy"},
    {"intervals"},
    {"clustered"},
    {"report"},
    {"regression"},
))  # fmt: skip


def core_unit(mod: str) -> str | None:
    """The subpackage or leaf of a core module (``passes`` for ``polfair.core.passes.spec``), else None."""
    parts = mod.split(".")
    return parts[2] if parts[:2] == ["polfair", "core"] and len(parts) > 2 else None


def core_layer_violations() -> list[str]:
    layer_of = {unit: i for i, layer in enumerate(CORE_LAYERS) for unit in layer}
    bad = []
    for mod, path in modules():
        me = core_unit(mod)
        if me is None:
            continue
        for target, names, line, _ in imports(path):
            for tgt in _resolve(target, names) if target.startswith("polfair.core.") else ():
                them = core_unit(tgt)
                if them is None or them == me:
                    continue
                if layer_of[them] >= layer_of[me]:
                    bad.append(f"{mod}:{line} imports {tgt}: {them!r} is not below {me!r} in CORE_LAYERS")
    return bad


def test_the_core_subpackages_are_layers() -> None:
    units = {p.stem for p in (PKG / "core").iterdir() if p.name not in ("__init__.py", "__pycache__")}
    assert units == set().union(*CORE_LAYERS), "every subpackage and leaf of the core has a layer"
    bad = core_layer_violations()
    assert not bad, "\n".join(bad)
