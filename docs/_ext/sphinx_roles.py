"""A griffe extension for the API reference: Sphinx roles become Markdown, grouped parameters stay grouped.

polfair's docstrings are numpydoc and cross-reference with Sphinx roles (``:func:`polfair.x```,
``:class:`~polfair.core.spec.Spec```), which mkdocstrings would print as they are. This extension
(``mkdocs.yml``: ``extensions``) rewrites each role to inline code, linked to the object's entry of
the API reference when the target is a public name ``polfair.<name>`` (one of ``polfair.__all__``).

numpydoc lets one entry describe several parameters (``y_true, y_pred, weight``: "as in
:func:`confusion_counts`"); griffe splits such an entry into one row per name with the same text
(and the first name's type). The extension joins them back into one row, typed from the signature
when all the names share one annotation.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

import polfair

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


class SphinxRoles(griffe.Extension):
    """Rewrite the Sphinx roles of every docstring griffe loads; keep grouped parameters in one row."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:  # noqa: D102
        if obj.docstring is None:
            return
        obj.docstring.value = ROLE.sub(markdown_role, obj.docstring.value)
        if obj.docstring.parser is None or not obj.is_function:  # a class's parameters come with its __init__ later
            return
        sections = obj.docstring.parse()
        for section in sections:
            if section.kind in (griffe.DocstringSectionKind.parameters, griffe.DocstringSectionKind.other_parameters):
                _grouped(obj, section)
        obj.docstring.__dict__["parsed"] = sections  # the cached property the templates read
