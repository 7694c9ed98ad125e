"""``checks_keywords`` on a door whose keywords are a shared block ``**rows: Unpack[TypedDict]`` (PEP 692)."""

from __future__ import annotations

from typing import Any, Required, TypedDict, Unpack

import polars as pl
import pytest

import polfair as pf
from polfair.core.options import checks_keywords
from polfair.exceptions import UnknownOptionError


class _Rows(TypedDict, total=False):
    query: Required[Any]
    protected: Any


@checks_keywords
def _door(data: Any, *, ci: float = 0.95, **rows: Unpack[_Rows]) -> dict[str, Any]:
    return {"ci": ci, **rows}


def test_the_block_keys_are_known_and_a_misspelled_one_names_the_close_one() -> None:
    assert _door(1, query="q", ci=0.9) == {"ci": 0.9, "query": "q"}
    with pytest.raises(UnknownOptionError, match=r"_door got an unknown keyword 'protectd' \(did you mean 'protected'\?\)"):
        _door(1, query="q", protectd="g")


def test_a_missing_required_key_is_the_missing_keyword_type_error() -> None:
    with pytest.raises(TypeError, match=r"_door\(\) missing required keyword argument\(s\): 'query'"):
        _door(1, protected="g")


def test_ranking_counts_takes_the_block() -> None:
    df = pl.DataFrame({"q": [1, 1, 1], "r": [1, 2, 3], "g": ["a", "b", "a"]})
    assert pf.ranking_counts(df, query="q", rank="r", protected="g", k=1).height == 3
    with pytest.raises(UnknownOptionError, match="did you mean 'protected'"):
        pf.ranking_counts(df, query="q", rank="r", protectd="g")
    with pytest.raises(UnknownOptionError, match="unknown keyword 'ci'"):  # a report option, not the pass's
        pf.ranking_counts(df, query="q", rank="r", protected="g", ci=None)
    with pytest.raises(TypeError, match="missing required keyword argument.*'rank'"):
        pf.ranking_counts(df, query="q", protected="g")


def test_adverse_impact_from_counts_takes_the_battery_block_with_adverse_impact_defaults() -> None:
    from polfair.regulatory.adverse_impact import adverse_impact_from_counts
    from polfair.scores import score_counts

    df = pl.DataFrame({"sex": ["f"] * 30 + ["m"] * 30, "hired": [1] * 6 + [0] * 24 + [1] * 18 + [0] * 12})
    h = score_counts(df, y_true=None, y_score="hired", protected="sex")
    assert adverse_impact_from_counts(h).equals(adverse_impact_from_counts(h, alpha=0.05, variance="pooled"))
    with pytest.raises(UnknownOptionError, match="did you mean 'alpha'"):
        adverse_impact_from_counts(h, alpa=0.1)


def test_the_sweep_steps_take_the_cuts_block() -> None:
    from polfair.scores import score_counts
    from polfair.scores.sweep import sweep_counts, threshold_sweep_from_counts

    df = pl.DataFrame({"y": [1, 0, 1, 0], "s": [0.9, 0.2, 0.4, 0.7], "g": ["a", "a", "b", "b"]})
    h = score_counts(df, y_true="y", y_score="s", protected="g")
    assert sweep_counts(h, thresholds=[0.5]).height == threshold_sweep_from_counts(h, thresholds=[0.5], ci=None,
                                                                                metrics=["selection_rate"]).height
    with pytest.raises(UnknownOptionError, match="did you mean 'thresholds'"):
        threshold_sweep_from_counts(h, threshold=[0.5])


def test_keywords_of_shows_the_block_flat_with_the_source_defaults_and_refuses_a_foreign_key() -> None:
    import inspect

    from polfair.core.options import keywords_of

    sig = inspect.signature(pf.proxy_scan)
    assert sig.parameters["weight"].default is None and sig.parameters["favorable"].default == 1
    assert sig.parameters["protected"].default is inspect.Parameter.empty
    assert not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in sig.parameters.values())

    def source(data: Any, *, query: Any) -> None: ...

    with pytest.raises(TypeError, match=r"source takes no \['protected'\]"):
        keywords_of(source)(_door.__wrapped__)  # type: ignore[attr-defined]
