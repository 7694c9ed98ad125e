"""Shared fixtures and hypothesis strategies: random audit cases as (Polars frame, reference rows)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any

import polars as pl
import pytest
from hypothesis import settings
from hypothesis import strategies as st
from reference import Rows

# The property tests draw the same examples on every run by default, so a run of the test command
# (and CI) is reproducible: a failure is never a new random find that the run before did not see.
# To explore new examples, run with POLFAIR_HYPOTHESIS_PROFILE=explore (random draws; failures are
# kept in the local .hypothesis/ database and replayed first); pin each find with @example.
settings.register_profile("deterministic", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("POLFAIR_HYPOTHESIS_PROFILE", "deterministic"))

#: label encodings: name -> (value of the favorable state, value of the unfavorable state, dtype)
LABEL_KINDS = {
    "int": (1, 0, pl.Int64),
    "int_fav0": (0, 1, pl.Int64),
    "bool": (True, False, pl.Boolean),
    "str": ("yes", "no", pl.String),
}

SCORES = [0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0]
# Under reference="best" the report names the group with the best value. Groups whose values tie in
# exact arithmetic can differ in the last bit with non-dyadic scores (polfair sums per cell, then
# over cells; the reference sums per row), so the pick would follow rounding. With dyadic scores
# (and WEIGHTS, which are dyadic) every sum is exact and such ties stay ties on both sides.
DYADIC_SCORES = [0.0, 0.125, 0.25, 0.5, 0.75, 0.875, 1.0]
WEIGHTS = [0.0, 0.5, 1.0, 2.0, 3.25]


@dataclass
class Case:
    """One random audit: the frame, its reference rows, and the keyword arguments of the report."""

    df: pl.DataFrame
    rows: Rows
    kwargs: dict[str, Any]  # data columns: y_true, y_pred, y_score, weight, protected, by, favorable
    options: dict[str, Any]  # privileged, reference, intersections, alpha, concentration
    label_kind: str

    @property
    def by(self) -> list[str]:
        return list(self.rows.by)


def _encode(states: list, kind: str) -> list:
    fav, unf, _ = LABEL_KINDS[kind]
    return [None if s is None else (fav if s == 1 else unf) for s in states]


@st.composite
def audit_cases(
    draw: st.DrawFn,
    *,
    min_rows: int = 1,
    max_rows: int = 40,
    by: bool | None = None,
    predictions: str | None = None,
    nulls: bool | None = None,
    weights: bool | None = None,
    label_kinds: tuple[str, ...] = tuple(LABEL_KINDS),
    options: bool = True,
) -> Case:
    """A random frame with 1-4 protected attributes of 2-6 levels (some unobserved), optional null
    keys, labels of any kind, optional predictions/scores/weights/by, optional null values."""
    n = draw(st.integers(min_rows, max_rows))
    allow_nulls = draw(st.booleans()) if nulls is None else nulls
    k = draw(st.integers(1, 4))
    keys: dict[str, list] = {}
    schema: dict[str, pl.DataType] = {}
    for j in range(k):
        levels = draw(st.integers(2, 6))
        if draw(st.booleans()):
            pool: list = [f"{chr(97 + j)}{i}" for i in range(levels)]
            schema[f"k{j}"] = pl.String
        else:
            pool = list(range(levels))
            schema[f"k{j}"] = pl.Int64
        if allow_nulls and draw(st.booleans()):
            pool = [*pool, None]
        keys[f"k{j}"] = draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n))

    kind = draw(st.sampled_from(label_kinds))
    state_pool = [0, 1, None] if allow_nulls and draw(st.booleans()) else [0, 1]
    y = draw(st.lists(st.sampled_from(state_pool), min_size=n, max_size=n))
    data: dict[str, list] = {**keys, "y": _encode(y, kind)}
    schema["y"] = LABEL_KINDS[kind][2]
    kwargs: dict[str, Any] = {"y_true": "y", "protected": list(keys), "favorable": LABEL_KINDS[kind][0]}

    mode = predictions or draw(st.sampled_from(["none", "pred", "score", "pred+score"]))
    p = s = None
    if "pred" in mode:
        pool = [0, 1, None] if allow_nulls and draw(st.booleans()) else [0, 1]
        p = draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n))
        data["yhat"], schema["yhat"] = _encode(p, kind), LABEL_KINDS[kind][2]
        kwargs["y_pred"] = "yhat"
    reference = draw(st.sampled_from([None, None, "largest", "overall", "best", "privileged"])) if options else None
    if "score" in mode:
        scores = DYADIC_SCORES if reference == "best" else SCORES
        pool = [*scores, None] if allow_nulls and draw(st.booleans()) else scores
        s = draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n))
        data["score"], schema["score"] = s, pl.Float64
        kwargs["y_score"] = "score"
        kwargs["score_label"] = LABEL_KINDS[kind][0]  # the reference reads the score as P(favorable)
    threshold = draw(st.sampled_from([0.5, 0.25, 0.75])) if mode == "score" else 0.5
    if mode == "score":
        kwargs["threshold"] = threshold

    wt = None
    if weights if weights is not None else draw(st.booleans()):
        pool = [*WEIGHTS, None] if allow_nulls and draw(st.booleans()) else WEIGHTS
        wt = draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n))
        data["wt"], schema["wt"] = wt, pl.Float64
        kwargs["weight"] = "wt"

    by_cols: dict[str, list] = {}
    if by if by is not None else draw(st.booleans()):
        pool = ["x", "y", "z"][: draw(st.integers(1, 3))]
        if allow_nulls and draw(st.booleans()):
            pool = [*pool, None]
        by_cols["bcol"] = draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n))
        data["bcol"], schema["bcol"] = by_cols["bcol"], pl.String
        kwargs["by"] = ["bcol"]

    opts: dict[str, Any] = {}
    if options:
        privileged: dict[str, Any] = {}
        for name in keys:
            if draw(st.booleans()):
                values = sorted({v for v in keys[name] if v is not None}) or [None]
                choice = draw(st.sampled_from([*values, "list"]))
                privileged[name] = values[:2] if choice == "list" else choice
        intersections = draw(st.sampled_from([None, None, 1, 2, "explicit"]))
        if intersections == "explicit":
            names = list(keys)
            intersections = [draw(st.sampled_from(names)), names]
        opts = {
            "privileged": privileged or None,
            "reference": reference,
            "intersections": intersections,
            "alpha": draw(st.sampled_from([2.0, 1.0, 0.5, 3.0, 0.0])),
            "concentration": draw(st.sampled_from([1.0, 0.5, 2.0, 0.0])),
        }

    df = pl.DataFrame(data, schema=schema)
    rows = Rows(y=y, p=p, s=s, wt=wt, keys=keys, by=by_cols, threshold=threshold)
    return Case(df=df, rows=rows, kwargs=kwargs, options=opts, label_kind=kind)


@pytest.fixture(scope="session")
def compas() -> pl.DataFrame:
    """COMPAS two-year data with ProPublica's filter (6,172 rows), bundled with polfair."""
    import polfair as pf

    return pf.load_compas()


# ---------------------------------------------------------------------------------------------
# Lanes (issue 38): every test that starts the JVM (a module calling ``spark_session()`` or taking the
# ``spark`` fixture below, a docs page
# that builds a SparkSession) is marked ``spark`` and ``slow``; ``python -m pytest -m "not slow"`` is
# the fast lane for development. Under ``-n N`` (xdist's default ``--dist load``) the Spark tests go to
# ONE worker as one unit, so one JVM starts instead of one per worker, and a docs page's blocks (which
# run in order, on the worker that asks first) stay on one worker; every other test is its own unit.

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _uses_spark(path: str) -> bool:
    """Whether a test module, or a docs page, starts Spark (read once per file)."""
    if path not in _SPARK_FILES:
        try:
            with open(os.path.join(_ROOT, path), encoding="utf-8") as f:
                text = f.read()
        except OSError:
            text = ""
        _SPARK_FILES[path] = ("spark_session(" in text or "SparkSession.builder" in text
                              or _SPARK_FIXTURE.search(text) is not None)  # fmt: skip
    return _SPARK_FILES[path]


_SPARK_FIXTURE = re.compile(r"^def test\w*\([^)]*\bspark\b", re.MULTILINE)  # a test taking the `spark` fixture


@pytest.fixture(scope="session")
def spark() -> Any:
    """The shared local SparkSession (``tests/spark_session.py``); skips without pyspark or Java."""
    pytest.importorskip("pyspark")
    from spark_session import spark_session

    session = spark_session()
    if session is None:  # pragma: no cover
        pytest.skip("no Java runtime for Spark")
    return session  # shared with the worker's other Spark tests; stopped at exit


_SPARK_FILES: dict[str, bool] = {}
_DOCS_BLOCK = "tests/test_docs_run.py::test_code_block_runs["


def _lane(nodeid: str) -> str:
    """The unit a test is scheduled in: ``spark``, ``docs:<page>``, or the test itself."""
    path = nodeid.split("::", 1)[0]
    if nodeid.startswith(_DOCS_BLOCK):
        page = nodeid[len(_DOCS_BLOCK) :].split(":", 1)[0]
        return "spark" if _uses_spark(f"docs/{page}") else f"docs:{page}"
    return "spark" if path.startswith("tests/") and _uses_spark(path) else nodeid


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if _lane(item.nodeid) == "spark":
            item.add_marker(pytest.mark.spark)
            item.add_marker(pytest.mark.slow)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    if getattr(config.option, "dist", "load") != "load":  # an explicit --dist is the user's choice
        return None
    from xdist.scheduler import LoadScopeScheduling

    class Lanes(LoadScopeScheduling):
        """xdist's scope scheduling with :func:`_lane` as the scope (largest unit first)."""

        def _split_scope(self, nodeid: str) -> str:
            return _lane(nodeid)

    return Lanes(config, log)
