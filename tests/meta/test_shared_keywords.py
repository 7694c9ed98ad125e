"""The request travels (issue 38): no internal function re-declares the block of shared option keywords.

The public doors keep their flat keywords (``fairness_report(y_true=..., protected=..., weight=...)``);
below them one typed request travels (:class:`polfair.core.request.AuditRequest`, a
:class:`polfair.core.passes.spec.PassOptions`; :class:`polfair.core.report.build.ReportOptions`). A
function that takes five or more of the :data:`SHARED` keywords is a door (:data:`DOORS`: exported by
``polfair`` or a documented public module) or one of the few allowed internal ones
(:data:`RESIDUE`, :data:`PENDING`); any other one fails here: pass the request (or ``PassOptions``) instead.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "polfair"

#: The option keywords every door shares (issue 38's count: ``by`` was declared 75 times, ``ci`` 66, ...).
SHARED = frozenset({
    "y_true", "y_pred", "y_score", "protected", "weight", "by", "privileged", "reference", "favorable", "score_label",
    "threshold", "ci", "p_adjust", "min_sample_size", "on_missing", "intersections", "protected_proba", "cluster",
})  # fmt: skip
#: How many of them make a function re-declare the block.
AT_LEAST = 5

#: Public doors (flat keywords are the public interface): (module path, qualified name).
DOORS = frozenset({
    ("api.py", "confusion_counts"),
    ("api.py", "fairness_report"),
    ("compat/aif360/classification_metric.py", "ClassificationMetric.__init__"),
    ("compat/ignite/counts.py", "multiclass_counts"),
    ("core/regression/report.py", "regression_report_from_cells"),
    ("core/report/build.py", "report_batches"),
    ("core/report/build.py", "report_from_counts"),
    ("engines/accumulator.py", "FairnessAccumulator.__init__"),
    ("mitigation/thresholds.py", "group_thresholds"),
    ("outputs/html/render.py", "to_html"),
    ("proxies/scan.py", "proxy_counts"),
    ("proxies/scan.py", "proxy_report"),
    ("ranking/__init__.py", "ranking_report"),
    ("regression.py", "regression_report"),
    ("regulatory/adverse_impact.py", "adverse_impact"),
    ("scores/counts.py", "score_counts"),
    ("scores/curves.py", "roc_curve"),
    ("scores/curves.py", "score_report"),
    ("slices/scan.py", "slice_scan"),
})  # fmt: skip
#: The allowed internal residue (at most 4 internal functions in all, once :data:`PENDING` is empty).
RESIDUE = frozenset({
    ("compat/aif360/_base.py", "CellTableMetric._setup"),  # the aif360 facades' shared constructor (their signatures)
    ("compat/ignite/counts.py", "_resolve_inputs"),  # ignite's tensors or columns, resolved before the pass
})  # fmt: skip
#: Converted by the skeleton/rankperf branches (issue 38): the lead removes them from here after merging.
PENDING = frozenset({
})  # fmt: skip


def functions(root: Path = PKG) -> Iterator[tuple[str, str, int]]:
    """(module path under ``polfair/``, qualified name, shared keywords declared) of every function."""
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        rel = path.relative_to(root).as_posix()
        yield from _walk(tree, rel, "")


def _walk(node: ast.AST, rel: str, prefix: str) -> Iterator[tuple[str, str, int]]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.ClassDef):
            yield from _walk(child, rel, f"{prefix}{child.name}.")
        elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = child.args
            names = {x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs]}
            yield rel, f"{prefix}{child.name}", len(names & SHARED)
            yield from _walk(child, rel, f"{prefix}{child.name}.")


def blocks(root: Path = PKG) -> set[tuple[str, str]]:
    """The functions that declare :data:`AT_LEAST` or more shared keywords."""
    return {(rel, name) for rel, name, n in functions(root) if n >= AT_LEAST}


def test_no_new_internal_function_re_declares_the_shared_keywords() -> None:
    found = blocks()
    new = sorted(found - DOORS - RESIDUE - PENDING)
    assert not new, (
        f"{new} declare {AT_LEAST}+ of the shared option keywords: an internal function takes the request "
        "(polfair.core.request.AuditRequest) or a PassOptions/ReportOptions instead; a new public door goes in DOORS"
    )


def test_the_allow_lists_name_functions_that_still_exist() -> None:
    found = blocks()
    listed = DOORS | RESIDUE | PENDING
    assert not listed - found, sorted(listed - found)  # a converted one leaves its list


def test_at_most_four_internal_functions_once_the_pending_conversions_land() -> None:
    assert len(RESIDUE) + len(PENDING & blocks()) <= 4
    assert len(RESIDUE) <= 4


def test_a_planted_internal_function_fails(tmp_path: Path) -> None:
    (tmp_path / "planted.py").write_text(
        "def _layout(cells, *, protected, by, privileged, reference, ci, p_adjust):\n    return cells\n"
        "class Door:\n    def _prepare(self, y_true, y_pred, weight, favorable, score_label):\n        pass\n",
        encoding="utf-8",
    )
    assert blocks(tmp_path) == {("planted.py", "_layout"), ("planted.py", "Door._prepare")}


def test_the_doors_are_public() -> None:
    import importlib

    import polfair

    for rel, name in sorted(DOORS):
        module = "polfair." + rel.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        top = name.split(".")[0]
        mod = importlib.import_module(module)
        package = importlib.import_module(module.rsplit(".", 1)[0]) if module.count(".") > 1 else polfair
        exported = {*polfair.__all__, *getattr(mod, "__all__", ()), *getattr(package, "__all__", ())}
        assert top in exported, f"{module}.{name} is in DOORS but exported by neither polfair nor its module"
