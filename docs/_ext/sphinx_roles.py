"""A griffe extension for the API reference: roles become Markdown, grouped parameters stay grouped, constants get their ``#:`` docs.

polfair's docstrings are numpydoc and cross-reference with Sphinx roles (``:func:`polfair.x```,
``:class:`~polfair.core.passes.spec.Spec```), which mkdocstrings would print as they are. This extension
(``mkdocs.yml``: ``extensions``) rewrites each role to inline code, linked to the object's entry of
the API reference when the target is a public name ``polfair.<name>`` (one of ``polfair.__all__``).

numpydoc lets one entry describe several parameters (``y_true, y_pred, weight``: "as in
:func:`confusion_counts`"); griffe splits such an entry into one row per name with the same text
(and the first name's type). The extension joins them back into one row, typed from the signature
when all the names share one annotation.

The site reads live objects (``force_inspection``), which know nothing of the ``#:`` comment that
documents a module constant (``SCHEMA_VERSION``, ``METRICS``, ``diff_range``, ...): an inspected
``int`` even carries ``int``'s own docstring. For such attributes the extension reads the comment
block above the assignment in the module's source as the docstring, and drops a value whose repr
is long or holds a memory address (a dict of metric objects, an expression).
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import re
import typing
from pathlib import Path
from typing import Any

import griffe

import polfair
import polfair.core._typing

ROLE = re.compile(r":(?:py:)?(?:func|class|mod|data|meth|attr|exc|obj):`(~?)([^`]+)`")
PUBLIC = {f"polfair.{name}" for name in polfair.__all__}


def markdown_role(m: re.Match[str]) -> str:
    """``:func:`polfair.x``` -> a link to ``polfair.x`` in the API reference; other targets -> code."""
    tilde, target = m.group(1), m.group(2).strip()
    shown = target.rsplit(".", 1)[-1] if tilde else target
    if target in PUBLIC:
        return f"[`{shown}`][{target}]"
    return f"`{shown}`"


def _annotation(obj: griffe.Object, names: list[str]) -> Any:
    params = getattr(obj, "parameters", None)
    found = {str(params[n].annotation) for n in names if params is not None and n in params}
    return params[names[0]].annotation if len(found) == 1 and params is not None and names[0] in params else None


def _default(obj: griffe.Object, names: list[str]) -> Any:
    params = getattr(obj, "parameters", None)
    if params is None or any(n not in params for n in names):
        return None
    if len(names) == 1:
        return params[names[0]].default
    defaults = [params[n].default for n in names]
    return "see the signature" if any(d is not None for d in defaults) else None


def _grouped(obj: griffe.Object, section: griffe.DocstringSection) -> None:
    rows: list[tuple[list[str], str]] = []
    for p in section.value:
        if rows and p.description and rows[-1][1] == p.description:
            rows[-1][0].append(p.name)
        else:
            rows.append(([p.name], p.description))
    section.value = [
        griffe.DocstringParameter(", ".join(names), description=text, annotation=_annotation(obj, names),
                                  value=_default(obj, names))
        for names, text in rows
    ]


def _comment_doc(obj: griffe.Object) -> str | None:
    """The ``#:`` lines right above ``name = ...`` (or ``name: T = ...``) where the constant is defined.

    That is the object's module, or, for a name re-exported by a package (``polfair.METRICS``), the
    module its ``from ... import`` names.
    """
    path = getattr(obj.parent, "filepath", None)
    for _ in range(3):  # the module, then where it imported the name from, and so on
        if not isinstance(path, Path) or not path.exists():
            return None
        source = path.read_text(encoding="utf-8")
        lines = source.splitlines()
        at = next((i for i, ln in enumerate(lines) if re.match(rf"{re.escape(obj.name)}\s*[:=]", ln)), None)
        if at is not None:
            doc: list[str] = []
            while at > 0 and lines[at - 1].startswith("#:"):
                at -= 1
                doc.insert(0, lines[at][2:].strip())
            return " ".join(doc) or None
        origin = next((n.module for n in ast.walk(ast.parse(source)) if isinstance(n, ast.ImportFrom) and n.module
                       and any(a.name == obj.name for a in n.names)), None)  # fmt: skip
        spec = importlib.util.find_spec(origin) if origin else None
        path = Path(spec.origin) if spec and spec.origin else None
    return None


#: The core's ``Literal`` aliases (``OnMissing``, ``Reference``): an inspected signature shows them as a bare
#: ``Literal``; the extension writes their values instead (``Literal["warn", "raise", "ignore"]``).
LITERALS = {
    name: "Literal[" + ", ".join(f'"{v}"' for v in typing.get_args(value)) + "]"
    for name, value in vars(polfair.core._typing).items() if typing.get_origin(value) is typing.Literal
}


def _live(path: str) -> Any:
    """The Python object at a dotted path (the longest importable module, then attributes)."""
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for name in parts[i:]:
            obj = getattr(obj, name)
        return obj
    return None


def _expand_literals(obj: griffe.Object) -> None:
    """Parameters annotated with a ``Literal`` alias of the core show its values."""
    try:
        signature = inspect.signature(_live(obj.path))
    except (TypeError, ValueError, AttributeError):
        return
    for param in getattr(obj, "parameters", []):
        raw = signature.parameters[param.name].annotation if param.name in signature.parameters else None
        if isinstance(raw, str) and any(re.search(rf"\b{a}\b", raw) for a in LITERALS):
            param.annotation = re.sub(r"\b(" + "|".join(LITERALS) + r")\b", lambda m: LITERALS[m.group(1)], raw)


class SphinxRoles(griffe.Extension):
    """Rewrite the Sphinx roles of every docstring griffe loads; keep grouped parameters in one row."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:  # noqa: D102
        if obj.is_function:
            _expand_literals(obj)
        if obj.is_attribute:
            text = _comment_doc(obj)
            obj.docstring = griffe.Docstring(text, parent=obj) if text else None
            value = str(getattr(obj, "value", "") or "")
            if " at 0x" in value or len(value) > 300:
                obj.value = None  # type: ignore[attr-defined]
        if obj.docstring is None:
            return
        obj.docstring.value = ROLE.sub(markdown_role, obj.docstring.value)
        if obj.docstring.parser is None or not obj.is_function:  # a class's parameters come with its __init__ later
            return
        _group_sections(obj)

    def on_class_members(self, *, cls: griffe.Class, **kwargs: Any) -> None:  # noqa: D102
        # a class's docstring documents its __init__'s parameters (merge_init_into_class): known now
        if cls.docstring is not None and cls.docstring.parser is not None and "__init__" in cls.members:
            _group_sections(cls)


def _group_sections(obj: griffe.Object) -> None:
    """Group the parameter rows of ``obj``'s docstring (types and defaults from its signature)."""
    assert obj.docstring is not None
    sections = obj.docstring.parse()
    for section in sections:
        if section.kind in (griffe.DocstringSectionKind.parameters, griffe.DocstringSectionKind.other_parameters):
            _grouped(obj, section)
    obj.docstring.__dict__["parsed"] = sections  # the cached property the templates read
