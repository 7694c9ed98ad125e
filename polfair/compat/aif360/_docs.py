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

Most methods' docstrings are all pattern but for their summary, formula, edge case and one doctest
line: :func:`metric_doc` writes such a docstring from those four pieces.
"""

from __future__ import annotations

import inspect
import re
import textwrap
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["expand_docstrings", "metric_doc"]

C = TypeVar("C", bound=type)
F = TypeVar("F", bound=Callable[..., Any])

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


def metric_doc(formula: str, example: str, out: str, *, note: str | None = None, zero: bool = False) -> Callable[[F], F]:
    """Decorator: the docstring of a method returning one number, from what differs between methods.

    The method's own docstring is its one-line summary; the decorator adds the ``formula`` paragraph, the shared Parameters (a method taking
    ``privileged``), Returns (``numpy.float64``; ``note`` the edge case under it, ``zero=True``: a
    count, ``0.0`` for an empty group), Raises, Notes and Examples sections, and the doctest
    ``>>> print(<example>)`` answering ``out`` (``dm.`` in ``example``: the dataset metric's
    frame). It is written with ``{{key}}`` lines, which :func:`expand_docstrings` on the class expands.

    Examples
    --------
    >>> @expand_docstrings
    ... class Demo:
    ...     @metric_doc("``Σ w``.", "d.count()", "1.0", zero=True)
    ...     def count(self, privileged=None):
    ...         '''A count.'''
    ...         return 1.0
    >>> Demo.count.__doc__.splitlines()[4:7]
    ['        Parameters', '        ----------', '        privileged']
    """

    def decorate(method: F) -> F:
        one_group = "privileged" in inspect.signature(method).parameters
        keys = ("{{privileged}} " if one_group else "") + ("{{returns_zero}}" if zero else "{{returns_float}}")
        raises = "{{raises_privileged}}" if one_group else "{{raises_groups}}"
        examples = "{{examples_dataset}}" if re.search(r"\bdm\.", example) else "{{examples}}"
        edge = f"\n{textwrap.indent(note, _INDENT + '    ')}\n\n{_INDENT}" if note is not None else " "
        summary = method.__doc__ or ""
        if not summary or "\n" in summary:
            msg = f"{method.__qualname__}: @metric_doc wants a one-line docstring (the summary), got {summary!r}"
            raise ValueError(msg)
        lines = [f"{summary}\n", textwrap.indent(formula, _INDENT) + "\n",
                 f"{_INDENT}{keys}{edge}{raises} {{{{notes_source}}}} {examples}", f"{_INDENT}>>> print({example})",
                 f"{_INDENT}{out}", _INDENT]  # fmt: skip
        method.__doc__ = "\n".join(lines)
        return method

    return decorate


#: The indentation of a method's docstring lines (in the class body).
_INDENT = " " * 8
