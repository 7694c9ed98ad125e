"""Parameter descriptions written once and shown wherever the parameter is taken.

Several public functions take the same parameters with the same meaning (``fairness_report``
reads its label, prediction, score, protected attributes, weights and ``by`` exactly as
``confusion_counts`` does). Their descriptions are written once, in the function that defines
them; a function that takes them too writes one numpydoc entry naming them and pointing there::

    y_true, y_pred, weight
        As in :func:`polfair.confusion_counts`.

and is decorated with :func:`shares_parameters`, which replaces that entry, when the module is
imported, by the source's own entries for those names. ``help()``, the doctests and the API
reference (which reads the live objects) then show each parameter's real description in both
places, and the text cannot drift apart. A name the source does not describe, or a pointer with
more text after it, is an error at import time (an author finds out at once, not a reader later).
Any other numpydoc section of entries is shared the same way (``section="Raises"``), and an
example's setup by :func:`with_setup`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["SETUPS", "parameter_entries", "shares_parameters", "with_setup"]

T = TypeVar("T")

#: Example setups written once: a toy table of six rows (label ``y``, decision ``p``, group ``g``) and its report.
SETUPS = {
    "toy_report": """>>> import polars as pl
>>> import polfair as pf
>>> df = pl.DataFrame({"y": [1, 0, 1, 0, 1, 1], "p": [1, 1, 1, 0, 0, 0],
...                    "g": ["a", "a", "a", "a", "b", "b"]})
>>> rep = pf.fairness_report(df, y_true="y", y_pred="p", protected="g")""",
}


def _section(doc: str, section: str = "Parameters") -> tuple[int, int, str]:
    """(start, end, indent) of the body of the ``section`` section (numpydoc) of ``doc``."""
    m = re.compile(rf"^(?P<indent>[ \t]*){section}\n(?P=indent)-+\n", re.M).search(doc)
    if m is None:
        msg = f"the docstring has no {section} section"
        raise ValueError(msg)
    indent = m.group("indent")
    header = re.compile(rf"^{re.escape(indent)}\S[^\n]*\n{re.escape(indent)}-{{3,}}\n", re.M)  # the next section
    nxt = header.search(doc, m.end())
    return m.end(), nxt.start() if nxt else len(doc), indent


def _entries(body: str, indent: str) -> list[tuple[list[str], str]]:
    """The entries of a Parameters body: (names, the entry's lines as written)."""
    entries: list[tuple[list[str], str]] = []
    for line in body.splitlines(keepends=True):
        is_header = line.startswith(indent) and line[len(indent) : len(indent) + 1] not in ("", " ", "\t", "\n")
        if is_header:
            names = [n.strip() for n in line.strip().split(" : ")[0].split(",")]
            entries.append((names, line))
        elif entries:
            entries[-1] = (entries[-1][0], entries[-1][1] + line)
    return entries


def parameter_entries(obj: Any, *, section: str = "Parameters") -> dict[str, str]:
    r"""Parameter name -> its numpydoc entry (header and description lines, unindented) in ``obj``'s docstring.

    An entry that describes several names (``cluster, n_buckets``) is returned under each of them.
    ``section``: the entries of another section (``"Raises"``: exception name -> entry).

    Examples
    --------
    >>> def f(a, b, c):
    ...     '''Do.
    ...
    ...     Parameters
    ...     ----------
    ...     a : int
    ...         The first.
    ...     b, c
    ...         The others.
    ...     '''
    >>> parameter_entries(f)["c"]
    'b, c\n    The others.\n'
    """
    doc = obj.__doc__ or ""
    start, end, indent = _section(doc, section)
    out = {}
    for names, text in _entries(doc[start:end], indent):
        lines = [ln[len(indent) :] if ln.startswith(indent) else ln.lstrip(" ") for ln in text.rstrip("\n").split("\n")]
        while lines and not lines[-1].strip():
            lines.pop()
        for n in names:
            out[n] = "\n".join(lines) + "\n"
    return out


def shares_parameters(source: Any, *, name: str | None = None, section: str = "Parameters") -> Callable[[T], T]:
    """Decorator: the entry ``names / As in :func:`<name>`.`` becomes ``source``'s entries for those names.

    Parameters
    ----------
    source : function or class
        The object whose docstring describes the parameters.
    name : str, optional
        How the pointer names ``source`` (default ``polfair.<source.__name__>``).
    section : str, optional
        The numpydoc section whose entries are shared (default ``"Parameters"``; e.g. ``"Raises"``).

    Returns
    -------
    Callable
        The decorator; it sets the decorated object's ``__doc__`` and returns the object.

    Raises
    ------
    ValueError
        At import: the decorated docstring has no such pointer entry, the pointer has more text
        than the one sentence, or ``source`` does not describe one of the names.

    Examples
    --------
    >>> def source(a, b):
    ...     '''Source.
    ...
    ...     Parameters
    ...     ----------
    ...     a : int
    ...         The count of apples.
    ...     b
    ...         Pears.
    ...     '''
    >>> @shares_parameters(source, name="source")
    ... def user(a, z):
    ...     '''User.
    ...
    ...     Parameters
    ...     ----------
    ...     a
    ...         As in :func:`source`.
    ...     z
    ...         Zebras.
    ...     '''
    >>> print(user.__doc__.split("----------")[1].rstrip())
    <BLANKLINE>
        a : int
            The count of apples.
        z
            Zebras.
    """
    target = name or f"polfair.{source.__name__}"
    pointer = f"As in :func:`{target}`."

    def decorate(obj: T) -> T:
        shared = parameter_entries(source, section=section)
        doc = obj.__doc__ or ""
        start, end, indent = _section(doc, section)
        body, found = [], False
        for names, text in _entries(doc[start:end], indent):
            description = " ".join(text.split("\n", 1)[1].split()) if "\n" in text else ""
            if pointer not in description:
                body.append(text)
                continue
            if description != pointer:
                msg = f"{obj.__qualname__}: the entry for {', '.join(names)} has more text than {pointer!r}: {description!r}"  # type: ignore[attr-defined]
                raise ValueError(msg)
            missing = [n for n in names if n not in shared]
            if missing:
                msg = f"{obj.__qualname__}: {target} does not describe {missing}"  # type: ignore[attr-defined]
                raise ValueError(msg)
            found, done = True, set()
            for n in names:
                entry = shared[n]
                if entry in done:  # an entry naming several parameters, copied once
                    continue
                done.add(entry)
                body.append("".join(indent + ln + "\n" if ln else "\n" for ln in entry.rstrip("\n").split("\n")))
            if text.endswith("\n\n"):
                body.append("\n")
        if not found:
            msg = f"{obj.__qualname__}: no parameter entry says {pointer!r}"  # type: ignore[attr-defined]
            raise ValueError(msg)
        obj.__doc__ = doc[:start] + "".join(body) + doc[end:]
        return obj

    return decorate


def with_setup(obj: T) -> T:
    """Decorator: a docstring line ``{{name}}`` becomes the example setup ``SETUPS[name]`` (at its indent).

    For the examples of steps on a report: the doctests and ``help()`` read the setup in full. An
    unknown name is an error at import.

    Examples
    --------
    >>> with_setup(type("Step", (), {"__doc__": "    {{toy_report}}"})).__doc__.splitlines()[0]
    '    >>> import polars as pl'
    """

    def setup(m: re.Match[str]) -> str:
        if m[2] not in SETUPS:
            msg = f"{obj.__qualname__}: no example setup {m[2]!r}; known: {sorted(SETUPS)}"  # type: ignore[attr-defined]
            raise ValueError(msg)
        return "\n".join(m[1] + line for line in SETUPS[m[2]].split("\n"))

    obj.__doc__ = re.sub(r"^([ \t]*)\{\{(\w+)\}\}$", setup, obj.__doc__ or "", flags=re.M)
    return obj
