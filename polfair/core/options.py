"""Keyword checks shared by every public door: an unknown keyword names the close one, and an option
given where the door would not use it is refused by name (issue 38).

Python's own ``TypeError`` for an unexpected keyword names no alternative; the decorator
:func:`checks_keywords` raises first, with the same "did you mean" every door and the CLI give.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import re
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from polfair.exceptions import ColumnNotFoundError, InvalidInputError, UnknownOptionError

__all__ = ["check_known", "check_present", "checks_keywords", "close_names", "keywords_of", "refuse_unused",
           "refuse_unused_threshold", "unknown_names_message"]

F = TypeVar("F", bound=Callable[..., Any])


def close_names(name: str, known: Iterable[str], *, n: int = 1, cutoff: float = 0.6) -> list[str]:
    """The known names closest to ``name`` (``difflib``; case-insensitive; at most ``n``).

    >>> close_names("protectd", ["protected", "weight"])
    ['protected']
    """
    known = list(known)
    lowered = {k.lower(): k for k in known}
    return [lowered[c] for c in difflib.get_close_matches(str(name).lower(), list(lowered), n=n, cutoff=cutoff)]


def unknown_names_message(unknown: Iterable[str], known: Iterable[str], *, noun: str = "option") -> str:
    """``"'x' (did you mean 'y'?), 'z'"``: every unknown name, with its close known one where there is one.

    >>> unknown_names_message(["y_prd"], ["y_pred", "y_true"])
    "'y_prd' (did you mean 'y_pred'?)"
    """
    known = sorted(set(known))
    said = []
    for u in unknown:
        close = close_names(u, known)
        said.append(f"{u!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    return ", ".join(said)


def checks_keywords(func: F) -> F:
    """Refuse an unknown keyword before the call, naming the close one.

    A function or a class's ``__init__`` whose signature has no ``**kwargs``: a keyword it does not
    declare raises :class:`~polfair.exceptions.UnknownOptionError` (a ``TypeError`` and a
    ``PolfairError``) saying ``"<door> got an unknown keyword 'protectd' (did you mean 'protected'?)"``.
    A door whose keywords are a shared block ``**options: Unpack[SomeTypedDict]`` (PEP 692: one
    definition, and type checkers still see every keyword) knows the block's keys too, and a
    missing required key is Python's own ``TypeError`` for a missing keyword. Other signatures with
    ``**kwargs`` are returned unchanged. The wrapper keeps the signature and docstring.

    >>> @checks_keywords
    ... def door(data, *, protected=None, weight=None):
    ...     return protected
    >>> door(1, protectd="g")
    Traceback (most recent call last):
    ...
    polfair.exceptions.UnknownOptionError: door got an unknown keyword 'protectd' (did you mean 'protected'?)
    """
    sig = inspect.signature(func)
    params = sig.parameters.values()
    block = next((p for p in params if p.kind is inspect.Parameter.VAR_KEYWORD), None)
    shared = None if block is None else _unpacked(block.annotation, func.__globals__)
    if block is not None and shared is None:
        return func
    required = frozenset() if shared is None else _required_keys(shared)
    names = frozenset(p.name for p in params if p.kind in (inspect.Parameter.KEYWORD_ONLY,
                                                           inspect.Parameter.POSITIONAL_OR_KEYWORD))
    names |= frozenset(shared.__annotations__) if shared is not None else frozenset()
    door = func.__qualname__.removesuffix(".__init__")
    check = check_known

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        for k in kwargs:
            if k not in names:
                check(kwargs, names, door=door)
        for k in required:
            if k not in kwargs:
                missing = ", ".join(repr(r) for r in sorted(required - set(kwargs)))
                raise TypeError(f"{door}() missing required keyword argument(s): {missing}")
        return func(*args, **kwargs)

    # the wrapper lives in the door's module (its globals), so doctest still finds the door's examples
    moved = types.FunctionType(wrapper.__code__, func.__globals__, func.__name__, None, wrapper.__closure__)
    return functools.update_wrapper(moved, func)  # type: ignore[return-value]


def keywords_of(source: Callable[..., Any]) -> Callable[[F], F]:
    """Decorator: a door whose ``**options: Unpack[SomeTypedDict]`` block is keywords of ``source``.

    One definition of the shared keywords, ``source``'s signature (its annotations and defaults);
    the TypedDict is its static mirror (PEP 692: type checkers and IDEs still see every keyword),
    checked here at import: a key that ``source`` does not take raises ``TypeError``. The door is
    :func:`checks_keywords`'s (an unknown keyword names the close one) and its signature, what
    ``help()`` and the API reference show, lists the block's keywords flat, as ``source`` declares them.

    Examples
    --------
    >>> from typing import TypedDict, Unpack
    >>> def counts(data, *, protected, weight=None): ...
    >>> class Rows(TypedDict, total=False):
    ...     protected: object
    ...     weight: object
    >>> @keywords_of(counts)
    ... def scan(data, *, measure="v", **rows: Unpack[Rows]): ...
    >>> import inspect; str(inspect.signature(scan))
    "(data, *, measure='v', protected, weight=None)"
    """

    def decorate(func: F) -> F:
        sig = inspect.signature(func)
        block = next(p for p in sig.parameters.values() if p.kind is inspect.Parameter.VAR_KEYWORD)
        shared = _unpacked(block.annotation, func.__globals__)
        declared = inspect.signature(source).parameters
        foreign = [k for k in getattr(shared, "__annotations__", ()) if k not in declared]
        if shared is None or foreign:
            msg = f"{func.__qualname__}: **{block.name} must be Unpack[<TypedDict of {source.__name__}'s keywords>]"
            raise TypeError(msg + (f"; {source.__name__} takes no {foreign}" if foreign else ""))
        door = checks_keywords(func)
        own = [p for p in sig.parameters.values() if p is not block]
        required = _required_keys(shared)  # a key the door requires shows no default, whatever the source's, and its type
        flat = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY, default=p.empty, annotation=_required_type(shared, k, p))
                if k in required else p.replace(kind=inspect.Parameter.KEYWORD_ONLY)
                for k, p in declared.items() if k in shared.__annotations__]  # fmt: skip
        for f in (func, door):  # the door and what it wraps (tools that unwrap, e.g. the API reference, read this)
            f.__signature__ = sig.replace(parameters=[*own, *flat])  # type: ignore[attr-defined]
        return door

    return decorate


def _required_keys(shared: Any) -> frozenset[str]:
    """The required keys of a TypedDict (``Required[...]`` read from the text under postponed annotations)."""
    return frozenset(shared.__required_keys__) | frozenset(
        k for k, v in shared.__annotations__.items() if str(getattr(v, "__forward_arg__", v)).startswith("Required["))


def _required_type(shared: Any, key: str, source: inspect.Parameter) -> Any:
    """The type of a ``Required[T]`` key of a TypedDict (``T``, as text under postponed annotations), else the source's."""
    m = re.fullmatch(r"(?:typing\.)?Required\[(.*)\]", str(getattr(shared.__annotations__[key], "__forward_arg__", "")))
    return m[1] if m else source.annotation


def _unpacked(annotation: Any, namespace: Mapping[str, Any]) -> Any:
    """The TypedDict of a ``**options: Unpack[TD]`` annotation (a string under postponed annotations), or None."""
    if isinstance(annotation, str):
        m = re.fullmatch(r"(?:typing\.)?Unpack\[(\w+)\]", annotation.strip())
        annotation = namespace.get(m[1]) if m else None
    elif typing.get_origin(annotation) is typing.Unpack:
        annotation = typing.get_args(annotation)[0]
    return annotation if typing.is_typeddict(annotation) else None


def check_known(given: Iterable[str], known: Iterable[str], *, door: str, noun: str = "keyword") -> None:
    """Raise :class:`UnknownOptionError` naming every name of ``given`` not in ``known`` (with hints)."""
    known = set(known)
    unknown = [g for g in given if g not in known]
    if unknown:
        s = "s" if len(unknown) > 1 else ""
        a = "" if s else "an "
        msg = f"{door} got {a}unknown {noun}{s} {unknown_names_message(unknown, known)}"
        raise UnknownOptionError(msg)


def refuse_unused(door: str, given: Mapping[str, Any], *, because: str) -> None:
    """Refuse options a door accepts but would not use here (``given``: name -> value, ``None`` unset).

    >>> refuse_unused("fairness_report", {"threshold": 0.3}, because="y_pred holds predicted labels")
    Traceback (most recent call last):
    ...
    polfair.exceptions.InvalidInputError: fairness_report: threshold=0.3 is not used because y_pred holds predicted labels; remove it
    """
    used = {k: v for k, v in given.items() if v is not None}
    if used:
        said = ", ".join(f"{k}={v!r}" for k, v in used.items())
        verb = "is" if len(used) == 1 else "are"
        pron = "it" if len(used) == 1 else "them"
        msg = f"{door}: {said} {verb} not used because {because}; remove {pron}"
        raise InvalidInputError(msg)


def refuse_unused_threshold(door: str, threshold: Any, **predictions: Any) -> None:
    """Refuse ``threshold=`` next to a given prediction column (``y_pred=``, ``errors=``): the threshold
    turns ``y_score`` into predictions only where none is given.

    >>> refuse_unused_threshold("fairness_report", 0.3, y_pred="p")
    Traceback (most recent call last):
    ...
    polfair.exceptions.InvalidInputError: fairness_report: threshold=0.3 is not used because y_pred='p' gives the ...
    """
    given = {k: v for k, v in predictions.items() if v is not None}
    if threshold is not None and given:
        k, v = next(iter(given.items()))
        refuse_unused(door, {"threshold": threshold},
                      because=f"{k}={v!r} gives the predictions (threshold makes them from y_score only without {k})")


def check_present(door: str, option: str, given: Iterable[Any] | None, present: Iterable[Any], *,
                  what: str = "attribute set of the report") -> None:  # fmt: skip
    """Refuse names a filter option gives that match nothing in the output (a typo'd attribute).

    >>> check_present("summarize", "attributes", ["Maritl"], ["marital", "sex"])
    Traceback (most recent call last):
    ...
    polfair.exceptions.ColumnNotFoundError: summarize: attributes=['Maritl']: 'Maritl' (did you mean 'marital'?) is no ...
    """
    if given is None:
        return
    have = [str(p) for p in present]
    missing = [g for g in given if str(g) not in have]
    if missing:
        shown = ", ".join(repr(h) for h in have[:12]) + (", ..." if len(have) > 12 else "")
        verb = "is no" if len(missing) == 1 else "are no"
        msg = (f"{door}: {option}={list(given)!r}: {unknown_names_message([str(m) for m in missing], have)} {verb} "
               f"{what}; it has {shown or 'none'}")  # fmt: skip
        raise ColumnNotFoundError(msg)
