"""The sections the aif360 facade's method docstrings repeat, written once.

A method's docstring names a shared section by a line holding only ``{{key}}`` (indented like the
docstring), or several (``{{raises_groups}} {{notes_source}} {{examples}}``: the sections a blank line
apart); :func:`expand_docstrings` replaces each such line, when the module is imported, by the
sections' text at that indentation. ``help()``, the doctests and the API reference (which reads the
live objects: ``force_inspection`` in ``mkdocs.yml``) show the full text; the source holds it once.

Keys: ``{{privileged}}`` (the Parameters section of a method taking ``privileged``),
``{{raises_privileged}}`` and ``{{raises_groups}}`` (the Raises sections of a one-group and a
two-group method), ``{{returns_float}}`` (the Returns heading of a ``numpy.float64``, its
description, if any, on the next lines) and ``{{returns_zero}}`` (that of a count: ``0.0`` for an
empty group), ``{{notes_source}}`` (a Notes section naming the aif360 method it mirrors, from
the class and method names), ``{{examples}}`` and ``{{examples_dataset}}`` (the Examples heading and
the shared 8-row frame and metric, a ``ClassificationMetric`` or a ``BinaryLabelDatasetMetric``, that
each method's doctest then calls).
"""

from __future__ import annotations

import re
import textwrap
from typing import TypeVar

__all__ = ["expand_docstrings"]

C = TypeVar("C", bound=type)

_RAISES = "Raises\n------\n"
_INVALID = """\
InvalidInputError
    On the first call, if the data are invalid (see the module notes); ``ValueError`` if the
    privileged and unprivileged groups overlap.
"""


def _examples(cls: str, var: str, columns: list[str], roles: str) -> str:
    """The Examples heading, a doctest's shared frame (``sex`` and ``columns``) and its metric ``var``."""
    call = f">>> {var} = {cls}("
    lines = [
        "Examples", "--------", ">>> import polars as pl", f">>> from polfair.compat.aif360 import {cls}",
        '>>> df = pl.DataFrame({"sex": [0, 0, 0, 0, 1, 1, 1, 1],', *("..." + " " * 20 + c for c in columns),
        f'{call}df, {roles}protected="sex",',
        "..." + " " * (len(call) - 3) + 'unprivileged_groups=[{"sex": 0}], privileged_groups=[{"sex": 1}])',
    ]  # fmt: skip
    return "\n".join(lines) + "\n"


_FLOAT = "Returns\n-------\nnumpy.float64\n"
_SECTIONS = {
    "returns_float": _FLOAT,
    "returns_zero": _FLOAT + "    ``0.0`` for an empty group.\n",
    "privileged": '''\
Parameters
----------
privileged
    ``None``: every row; ``True``: the rows matching ``privileged_groups``; ``False``: the rows
    matching ``unprivileged_groups``. aif360 quirk kept: another truthy/falsy value (``1``,
    ``0``) selects the same groups but skips the "not provided" check, so ``privileged=1`` on a
    metric built without groups silently means every row.
''',
    "raises_privileged": _RAISES + '''\
AttributeError
    ``privileged=True`` (``False``) but ``privileged_groups`` (``unprivileged_groups``) was not
    given: "'privileged_groups' was not provided when this object was initialized."
''' + _INVALID,
    "raises_groups": _RAISES + '''\
AttributeError
    ``privileged_groups`` or ``unprivileged_groups`` was not given.
''' + _INVALID,
    "examples": _examples("ClassificationMetric", "cm", [
        '"y":   [1, 1, 0, 0, 1, 1, 0, 0],', '"p":   [1, 0, 1, 1, 1, 1, 0, 1]})'], 'y_true="y", y_pred="p", '),
    "examples_dataset": _examples("BinaryLabelDatasetMetric", "dm", [
        '"age": [20, 30, 40, 50, 20, 30, 40, 50],', '"y":   [1, 0, 0, 0, 1, 1, 1, 0]})'], 'y="y", '),
}
#: The width the written docstrings wrap at (indentation included).
_WIDTH = 110
_PLACEHOLDER = re.compile(r"^(?P<indent>[ \t]*)(?P<keys>\{\{\w+\}\}(?: \{\{\w+\}\})*)\n", re.M)


def _section(key: str, cls: str, name: str, indent: str) -> str:
    if key == "notes_source":
        source = f"Source: aif360 0.6.1 ``{cls}.{name}`` (same value, same NaN/inf cases)."
        body = textwrap.fill(source, _WIDTH, initial_indent=indent, subsequent_indent=indent,
                             break_long_words=False, break_on_hyphens=False)  # fmt: skip
        return f"{indent}Notes\n{indent}-----\n{body}\n"
    try:
        text = _SECTIONS[key]
    except KeyError:
        msg = f"{cls}.{name}: unknown docstring section {{{{{key}}}}} (known: notes_source, {', '.join(_SECTIONS)})"
        raise ValueError(msg) from None
    return textwrap.indent(text, indent)


def expand_docstrings(cls: C) -> C:
    """Expand the ``{{key}}`` lines of the docstrings of ``cls``'s own methods (see the module).

    Examples
    --------
    >>> class Demo:
    ...     def rate(self, privileged=None):
    ...         '''A rate.
    ...
    ...         {{notes_source}}
    ...         '''
    >>> expand_docstrings(Demo).rate.__doc__.split("-----")[1].strip()
    'Source: aif360 0.6.1 ``Demo.rate`` (same value, same NaN/inf cases).'
    """
    for name, member in vars(cls).items():
        doc = getattr(member, "__doc__", None)
        if callable(member) and doc and "{{" in doc:
            member.__doc__ = _expand(doc, cls.__name__, name)
    return cls


def _expand(doc: str, cls: str, name: str) -> str:
    def sections(m: re.Match[str]) -> str:  # several keys on one line: their sections, a blank line apart
        keys = re.findall(r"\{\{(\w+)\}\}", m["keys"])
        return "\n".join(_section(key, cls, name, m["indent"]) for key in keys)

    return _PLACEHOLDER.sub(sections, doc)
