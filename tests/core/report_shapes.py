"""Call shapes whose reports must stay bit-identical across the issue-41 changes (metric selection,
intersection budget): :func:`digests` of each, and ``data/report_digests_base.json`` holds the digests
the code before issue 41 gave for them (``python tests/core/report_shapes.py >
tests/core/data/report_digests_base.json`` run there: first at 0f974c0; regenerated at c070dca, the
integration of issue 39's deliberate changes (noise-corrected variance rows, the 30-row minimum) before
issue 41 was merged, and checked equal to the merged code's digests).

Not a test module itself (no ``test_`` prefix): tests/core/test_report_selection.py reads it.
"""

from __future__ import annotations

import hashlib
import json
import sys
import warnings
from typing import Any

import numpy as np
import polars as pl


def frame(n: int = 3000, seed: int = 5) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    return pl.DataFrame({
        "a": rng.choice(["x", "y", "z"], n), "b": rng.choice(["p", "q"], n), "c": rng.integers(0, 4, n),
        "e": rng.choice(["u", "v"], n), "d": rng.integers(0, 3, n), "y": rng.integers(0, 2, n),
        "p": rng.integers(0, 2, n), "s": rng.random(n), "w": rng.gamma(2.0, 0.5, n),
    })  # fmt: skip


#: name -> fairness_report keywords (user metrics under "__user__": metrics= before, user_metrics= after)
SHAPES: dict[str, dict[str, Any]] = {
    "basic": dict(y_true="y", y_pred="p", protected=["a", "b"]),
    "weighted_scores_by": dict(y_true="y", y_pred="p", y_score="s", weight="w", exact_sums=True, protected=["a", "b"],
                               by="d"),
    "best_no_ci": dict(y_true="y", y_pred="p", protected=["a", "c"], reference="best", ci=None),
    "overall_all_sets": dict(y_true="y", y_pred="p", protected=["a", "b", "c"], privileged={"a": "x"},
                             reference="overall", intersections="all"),
    "privileged": dict(y_true="y", y_pred="p", protected=["a", "b"], privileged={"a": "x", "b": "q"}),
    "labels_only": dict(y_true="y", protected=["a", "b"]),
    "four_attributes_default": dict(y_true="y", y_pred="p", y_score="s", exact_sums=True, protected=["a", "b", "c", "e"]),
    "user_metrics": dict(y_true="y", y_pred="p", protected=["a", "b"],
                         __user__={"hit": pl.col("tp") / pl.col("n")}),
    "wide": dict(y_true="y", y_pred="p", protected=["a", "b"], shape="wide"),
}


def canonical(df: pl.DataFrame) -> str:
    """A digest of every value of a frame, bit for bit (floats by their hex form), independent of
    Categorical codes and of the in-memory layout."""
    h = hashlib.sha256()
    h.update(json.dumps(df.columns).encode())
    for name in df.columns:
        s = df.get_column(name)
        if s.dtype == pl.Categorical or isinstance(s.dtype, pl.Enum):
            s = s.cast(pl.String)
        elif isinstance(s.dtype, pl.Struct):
            s = s.struct.json_encode()
        h.update(f"{name}:{s.dtype}".encode())
        for v in s.to_list():
            h.update((v.hex() if isinstance(v, float) else repr(v)).encode() + b"\x1f")
    return h.hexdigest()


def report(name: str, user_keyword: str = "user_metrics") -> pl.DataFrame:
    import polfair as pf

    kw = dict(SHAPES[name])
    user = kw.pop("__user__", None)
    if user is not None:
        kw[user_keyword] = user
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pf.fairness_report(frame(), **kw)


def digests(user_keyword: str = "user_metrics") -> dict[str, str]:
    return {name: canonical(report(name, user_keyword)) for name in SHAPES}


if __name__ == "__main__":  # run at the base commit: user metrics were metrics= then
    json.dump(digests(sys.argv[1] if len(sys.argv) > 1 else "metrics"), sys.stdout, indent=1, sort_keys=True)
    print()
