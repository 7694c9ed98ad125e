"""The ``fair`` namespace forwards to the functions (docs/expressions.md's examples run in tests/test_docs_run.py)."""

from __future__ import annotations

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polfair as pf
import polfair.compat.fairlearn as pfx
import polfair.namespace  # noqa: F401  (registers df.fair / lf.fair)
from polfair.compat.ignite import multiclass_report


def same(a: pl.DataFrame, b: pl.DataFrame) -> bool:
    # report_from_counts sums the entropy indices in a run-dependent order (last-bit noise)
    assert_frame_equal(a, b, rel_tol=1e-12, abs_tol=1e-15)
    return True

DF = pl.DataFrame({"y": [1, 0, 1, 1, 0, 0, 1, 0], "p": [1, 1, 0, 1, 0, 1, 1, 0],
                   "sex": ["f", "f", "f", "m", "m", "m", "f", "m"], "w": [1.0, 2, 1, 1, 3, 1, 1, 2]})


def test_dataframe_namespace_forwards() -> None:
    kw = dict(y_true="y", y_pred="p", protected="sex")
    assert same(DF.fair.report(**kw), pf.fairness_report(DF, **kw))
    assert DF.fair.counts(**kw, weight="w").equals(pf.confusion_counts(DF, **kw, weight="w").collect())
    assert same(DF.fair.multiclass_report(**kw), multiclass_report(DF, **kw))
    e = pfx.demographic_parity_difference("y", "p", sensitive_features="sex", sample_weight="w")
    assert DF.fair.demographic_parity_difference("y", "p", sensitive_features="sex", sample_weight="w") \
        == DF.select(e).item()  # fmt: skip
    e = pfx.equalized_odds_difference("y", "p", sensitive_features="sex", agg="mean")
    assert DF.fair.equalized_odds_difference("y", "p", sensitive_features="sex", agg="mean") == DF.select(e).item()


def test_lazyframe_namespace_stays_lazy() -> None:
    lf = DF.lazy()
    counts = lf.fair.counts(y_true="y", y_pred="p", protected="sex")
    assert isinstance(counts, pl.LazyFrame)
    assert counts.collect().equals(pf.confusion_counts(DF, y_true="y", y_pred="p", protected="sex").collect())
    assert same(lf.fair.report(y_true="y", y_pred="p", protected="sex"),
                pf.fairness_report(DF, y_true="y", y_pred="p", protected="sex"))


def test_namespace_methods_are_explicit() -> None:
    from polfair.namespace import FairFrame, FairLazyFrame

    for cls in (FairFrame, FairLazyFrame):
        assert "__getattr__" not in vars(cls)
        with pytest.raises(AttributeError):
            (DF.fair if cls is FairFrame else DF.lazy().fair).selection_ratee  # noqa: B018


def test_namespace_takes_every_keyword_of_the_function() -> None:
    import inspect

    from polfair.namespace import FairFrame, FairLazyFrame

    for method, fn in (("report", pf.fairness_report), ("counts", pf.confusion_counts),
                       ("multiclass_report", multiclass_report)):  # fmt: skip
        want = list(inspect.signature(fn).parameters)[1:]  # all but data
        for cls in (FairFrame, FairLazyFrame):
            assert list(inspect.signature(getattr(cls, method)).parameters)[1:] == want, (cls, method)
    # keywords the namespace did not forward before it was built from the functions
    kw = dict(y_true="y", y_pred="p", protected="sex", ci=None, shape="wide", min_group_size=1)
    assert same(DF.fair.report(**kw), pf.fairness_report(DF, **kw))
    assert same(DF.lazy().fair.report(**kw), pf.fairness_report(DF, **kw))


@pytest.mark.parametrize("name", ["demographic_parity_difference", "demographic_parity_ratio",
                                  "equalized_odds_difference", "equalized_odds_ratio",
                                  "equal_opportunity_difference", "equal_opportunity_ratio"])  # fmt: skip
def test_disparities_on_both_namespaces(name: str) -> None:
    e = getattr(pfx, name)("y", "p", sensitive_features="sex", sample_weight="w")
    want = DF.select(e).item()
    for ns in (DF.fair, DF.lazy().fair):
        assert getattr(ns, name)("y", "p", sensitive_features="sex", sample_weight="w") == want
    undefined = pl.DataFrame({"y": [1, 1], "p": [1, 0], "g": ["a", "b"]})  # no negatives: FPR undefined
    if "odds" in name:
        assert getattr(undefined.fair, name)("y", "p", sensitive_features="g") is None
