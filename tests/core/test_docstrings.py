"""Shared parameter descriptions: written once, shown in every function that takes the parameter."""

from __future__ import annotations

import pytest

import polfair as pf
from polfair.core.docstrings import parameter_entries, shares_parameters

SHARED = ["y_true", "y_pred", "y_score", "protected", "favorable", "unfavorable", "weight", "by"]


def test_fairness_report_shows_confusion_counts_own_descriptions() -> None:
    doc = pf.fairness_report.__doc__ or ""
    assert "As in :func:`polfair.confusion_counts`." not in doc
    mine, theirs = parameter_entries(pf.fairness_report), parameter_entries(pf.confusion_counts)
    for name in SHARED:
        assert mine[name] == theirs[name], name
    # every parameter of the signature is described, each once
    import inspect

    params = [p for p in inspect.signature(pf.fairness_report).parameters if p != "data"]
    assert not [p for p in params if p not in mine], "undocumented parameters"


def _source(a: int, b: int) -> None:
    """Source.

    Parameters
    ----------
    a
        Apples.
    b
        Pears.
    """


@pytest.mark.parametrize(
    ("doc", "match"),
    [
        ("U.\n\n    Parameters\n    ----------\n    a\n        As in :func:`src`. And more.\n", "more text"),
        ("U.\n\n    Parameters\n    ----------\n    a, z\n        As in :func:`src`.\n", r"does not describe \['z'\]"),
        ("U.\n\n    Parameters\n    ----------\n    a\n        Apples.\n", "no parameter entry says"),
        ("U.\n", "no Parameters section"),
    ],
)
def test_a_pointer_that_cannot_be_filled_fails_at_import(doc: str, match: str) -> None:
    def user(a: int, z: int) -> None: ...

    user.__doc__ = doc
    with pytest.raises(ValueError, match=match):
        shares_parameters(_source, name="src")(user)


def test_the_pointer_keeps_the_sections_after_it() -> None:
    def user(a: int, b: int) -> None: ...

    user.__doc__ = "U.\n\n    Parameters\n    ----------\n    a, b\n        As in :func:`src`.\n\n    Returns\n    -------\n    None\n"
    shares_parameters(_source, name="src")(user)
    assert user.__doc__ == (
        "U.\n\n    Parameters\n    ----------\n    a\n        Apples.\n    b\n        Pears.\n\n"
        "    Returns\n    -------\n    None\n"
    )


def test_another_section_is_shared_the_same_way() -> None:
    def source() -> None:
        """S.

        Raises
        ------
        KeyError
            A missing key.
        """

    def user() -> None:
        """U.

        Raises
        ------
        KeyError
            As in :func:`src`.
        ValueError
            Mine.
        """

    shares_parameters(source, name="src", section="Raises")(user)
    assert parameter_entries(user, section="Raises") == {"KeyError": "KeyError\n    A missing key.\n",
                                                         "ValueError": "ValueError\n    Mine.\n"}
    with pytest.raises(ValueError, match="no Returns section"):
        shares_parameters(source, name="src", section="Returns")(user)


def test_an_example_setup_is_written_once_and_an_unknown_one_fails() -> None:
    from polfair.core.docstrings import SETUPS, with_setup
    from polfair.monitor.disclosure import suppress_small_groups

    assert "{{" not in (suppress_small_groups.__doc__ or "")
    assert "\n".join(ln.strip() for ln in SETUPS["toy_report"].split("\n")) in "\n".join(
        ln.strip() for ln in (suppress_small_groups.__doc__ or "").split("\n"))

    def step() -> None:
        """S.

        {{toy_reprt}}
        """

    with pytest.raises(ValueError, match="no example setup 'toy_reprt'"):
        with_setup(step)
