"""Hypothesis: hostile values in every role, the pass on Polars and DuckDB against a naive reference
of the contract (``docs/contract.md``) written row by row in Python."""

from __future__ import annotations

import math
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polfair as pf
from polfair.exceptions import InvalidInputError

duckdb = pytest.importorskip("duckdb")
pytest.importorskip("narwhals")

LABELS = st.sampled_from([0.0, 1.0, 1.0, 0.0, 2.0, None, math.nan, 0.5, math.inf, -0.0])
SCORES = st.sampled_from([0.0, 0.25, 1.0, None, math.nan, 1.5, -0.1, math.inf])
WEIGHTS = st.sampled_from([1.0, 0.5, 0.0, 3.0, None, math.nan, -1.0, math.inf, 1e-9, 1e15])
KEYS = st.sampled_from(["a", "null", None, "x & y"])
FLOAT_KEYS = st.sampled_from([0.0, -0.0, 1.0, math.nan, None])
ROWS = st.lists(st.tuples(LABELS, LABELS, SCORES, WEIGHTS, KEYS, FLOAT_KEYS), min_size=1, max_size=30)


def _label(v: Any) -> str:
    """The contract's label state of a Float label with favorable=1, unfavorable=None."""
    if v is None or math.isnan(v):
        return "missing"
    if v == 1.0:
        return "fav"
    if math.isinf(v) or v != math.floor(v):
        return "invalid"
    return "unfav"


def _value(v: Any, ok: Any) -> str:
    if v is None or math.isnan(v):
        return "missing"
    return "ok" if ok(v) else "invalid"


def reference(rows: list[tuple]) -> dict[tuple[Any, Any], dict[str, int]]:
    """(g, k) -> n, n_missing, n_invalid, tp_n, fp_n, tn_n, fn_n: the rules, row by row."""
    out: dict[tuple[Any, Any], dict[str, int]] = {}
    for y, p, s, w, g, k in rows:
        key = (g, None if k is None or math.isnan(k) else abs(k))
        c = out.setdefault(key, dict.fromkeys(("n", "n_missing", "n_invalid", "tp_n", "fp_n", "tn_n", "fn_n"), 0))
        states = [_label(y), _label(p), _value(s, lambda x: 0 <= x <= 1), _value(w, lambda x: 0 <= x < math.inf)]
        c["n"] += 1
        if "invalid" in states:
            c["n_invalid"] += 1
        elif "missing" in states:
            c["n_missing"] += 1
        else:
            cls = {("fav", "fav"): "tp_n", ("unfav", "fav"): "fp_n", ("unfav", "unfav"): "tn_n", ("fav", "unfav"): "fn_n"}
            c[cls[(states[0], states[1])]] += 1
    return out


def frame(rows: list[tuple]) -> pl.DataFrame:
    y, p, s, w, g, k = zip(*rows)
    return pl.DataFrame({"y": y, "p": p, "s": s, "w": w, "g": g, "k": k},
                        schema={"y": pl.Float64, "p": pl.Float64, "s": pl.Float64, "w": pl.Float64, "g": pl.String,
                                "k": pl.Float64})  # fmt: skip


# score_label=1: the score's reading is said (labels 2.0 would otherwise stop the pass: tests/test_polarity.py)
KW = {"y_true": "y", "y_pred": "p", "y_score": "s", "weight": "w", "protected": ["g", "k"], "score_label": 1}


@given(rows=ROWS)
@settings(max_examples=40, deadline=None)
def test_the_pass_follows_the_contract_on_polars_and_duckdb(rows: list[tuple]) -> None:
    df = frame(rows)
    want = reference(rows)
    cols = ["g", "k", "n", "n_missing", "n_invalid", "tp_n", "fp_n", "tn_n", "fn_n"]
    for data in (df, duckdb.connect().from_arrow(df.to_arrow())):
        got = pf.confusion_counts(data, **KW).collect()
        as_dict = {(r[0], r[1]): dict(zip(cols[2:], r[2:])) for r in got.select(cols).iter_rows()}
        assert as_dict == want
        assert all(k is None or math.copysign(1.0, k) == 1.0 for k in got["k"])  # -0.0 is 0.0
        # the report: an error naming a role exactly when a row is invalid, else the same counts
        invalid = sum(c["n_invalid"] for c in want.values())
        try:
            rep = pf.fairness_report(data, **KW, ci=None, on_missing="ignore")
        except InvalidInputError as exc:
            missing = sum(c["n_missing"] for c in want.values())
            if not invalid and missing == sum(c["n"] for c in want.values()):  # every row missing (issue 38)
                assert "nothing to audit" in str(exc), str(exc)
                continue
            assert invalid and str(exc).split("=")[0] in ("y_true", "y_pred", "y_score", "weight"), str(exc)
            continue
        assert not invalid
        n_missing = rep.filter(pl.col("attribute").is_null(), metric="n_missing")["value"].item()
        assert n_missing == sum(c["n_missing"] for c in want.values())


def test_docs_contract_page_shows_the_contract_table() -> None:
    # docs/contract.md is the contract's one page: its table is contract_table(), row for row
    from pathlib import Path

    from polfair.core.contract import contract_table

    page = (Path(__file__).resolve().parents[2] / "docs" / "contract.md").read_text(encoding="utf-8")
    for r in contract_table().iter_rows(named=True):
        row = "| `" + r["role"] + "` | " + " | ".join(r[c] for c in ("dtypes", "null", "nan", "outside", "error")) + " |"
        assert row in page, r["role"]


def test_exact_sums_from_the_config_and_the_cli_flag_message() -> None:
    # the [statistics] table sets exact_sums like the keyword; a wrong value names the key
    from polfair.cli import flag_message

    df = pl.DataFrame({"y": [1, 0, 1, 0], "g": ["a", "a", "b", "b"], "w": [0.1, 0.2, 0.3, 1e-9]})
    with pytest.raises(InvalidInputError, match="exact_sums=True"):
        pf.fairness_report(df, y_true="y", protected="g", weight="w", config={"statistics": {"exact_sums": True}})
    with pytest.raises(pf.PolfairError, match=r"statistics\.exact_sums: exact_sums must be true or false"):
        pf.fairness_report(df, y_true="y", protected="g", weight="w", config={"statistics": {"exact_sums": "yes"}})
    ok = df.with_columns(pl.col("w").clip(0.01))
    want = pf.fairness_report(ok, y_true="y", protected="g", weight="w", exact_sums=True)
    got = pf.fairness_report(ok, y_true="y", protected="g", weight="w", config={"statistics": {"exact_sums": True}})
    assert got.equals(want)
    assert flag_message("or pass exact_sums=False (Float64 sums)") == "or pass no --exact-sums (Float64 sums)"
