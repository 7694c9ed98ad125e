"""Naive NumPy reference of polfair's cell table and fairness report (tests only).

Written from the documented definitions (``polfair.core.report.build``'s module docstring,
``fairness_report``'s docstring, and aif360 0.6.1's formulas as specified in the project's
aif360 notes), **not** from polfair's code: everything here works on row-level boolean masks
over plain Python/NumPy arrays, with no Polars at all. It is slow on purpose and only meant for
small random frames.

Conventions reproduced (the report's documented policies):

* a row is *counted* when its label, prediction, score and weight are all non-null; other rows are
  *missing* (in ``n`` and ``n_missing``, nowhere else);
* rates with a zero denominator are ``None``; ``ratio`` is ``None`` when the reference is 0/None;
* groups are the observed value combinations of each attribute subset (a null value is a group
  shown ``"null"``); the population rows have ``attribute = group = None``;
* entropy indices are unweighted and use hard predictions (aif360); EDF is weighted.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

# --------------------------------------------------------------------------------------------
# Metric definitions (written independently from polfair.core.metrics)
# --------------------------------------------------------------------------------------------

#: count metrics -> function of the count dict
COUNT_METRICS = {
    "num_instances": lambda c: c["tp"] + c["fp"] + c["tn"] + c["fn"],
    "num_positives": lambda c: c["tp"] + c["fn"],
    "num_negatives": lambda c: c["fp"] + c["tn"],
    "num_pred_positives": lambda c: c["tp"] + c["fp"],
    "num_pred_negatives": lambda c: c["tn"] + c["fn"],
    "num_true_positives": lambda c: c["tp"],
    "num_false_positives": lambda c: c["fp"],
    "num_true_negatives": lambda c: c["tn"],
    "num_false_negatives": lambda c: c["fn"],
    "num_generalized_true_positives": lambda c: c["gtp"],
    "num_generalized_false_positives": lambda c: c["gfp"],
    "num_generalized_true_negatives": lambda c: c["gtn"],
    "num_generalized_false_negatives": lambda c: c["gfn"],
}

#: rate metrics -> (numerator, denominator, higher_is_better)
RATE_METRICS = {
    "base_rate": (lambda c: c["tp"] + c["fn"], lambda c: c["w"], True),
    "selection_rate": (lambda c: c["tp"] + c["fp"], lambda c: c["w"], True),
    "true_positive_rate": (lambda c: c["tp"], lambda c: c["tp"] + c["fn"], True),
    "true_negative_rate": (lambda c: c["tn"], lambda c: c["fp"] + c["tn"], True),
    "false_positive_rate": (lambda c: c["fp"], lambda c: c["fp"] + c["tn"], False),
    "false_negative_rate": (lambda c: c["fn"], lambda c: c["tp"] + c["fn"], False),
    "positive_predictive_value": (lambda c: c["tp"], lambda c: c["tp"] + c["fp"], True),
    "negative_predictive_value": (lambda c: c["tn"], lambda c: c["tn"] + c["fn"], True),
    "false_discovery_rate": (lambda c: c["fp"], lambda c: c["tp"] + c["fp"], False),
    "false_omission_rate": (lambda c: c["fn"], lambda c: c["tn"] + c["fn"], False),
    "accuracy": (lambda c: c["tp"] + c["tn"], lambda c: c["w"], True),
    "generalized_true_positive_rate": (lambda c: c["gtp"], lambda c: c["tp"] + c["fn"], True),
    "generalized_true_negative_rate": (lambda c: c["gtn"], lambda c: c["fp"] + c["tn"], True),
    "generalized_false_positive_rate": (lambda c: c["gfp"], lambda c: c["fp"] + c["tn"], False),
    "generalized_false_negative_rate": (lambda c: c["gfn"], lambda c: c["tp"] + c["fn"], False),
}

LABEL_METRICS = ("num_instances", "num_positives", "num_negatives", "base_rate")


def _mcc(c: Mapping[str, float]) -> float | None:
    tp, fp, tn, fn = (float(c[k]) for k in ("tp", "fp", "tn", "fn"))
    margins = [tp + fp, tp + fn, tn + fp, tn + fn]
    if min(margins) <= 0:
        return None
    return (tp * tn - fp * fn) / (margins[0] * margins[1] * margins[2] * margins[3]) ** 0.5


def _balanced(c: Mapping[str, float]) -> float | None:
    p, n = c["tp"] + c["fn"], c["fp"] + c["tn"]
    return None if not (p > 0 and n > 0) else (c["tp"] / p + c["tn"] / n) / 2


#: scores (neither counts nor proportions) -> function of the count dict (None where undefined)
SCORE_METRICS = {
    "f1_score": lambda c: div(2.0 * c["tp"], 2.0 * c["tp"] + c["fp"] + c["fn"]),
    "balanced_accuracy": _balanced,
    "matthews_corrcoef": _mcc,
}


def div(a: float | None, b: float | None) -> float | None:
    """``a / b``; ``None`` when either is ``None`` or ``b`` is not > 0 (the report's policy)."""
    if a is None or b is None or not b > 0:
        return None
    return a / b


def sub(a: float | None, b: float | None) -> float | None:
    if a is None or b is None:
        return None
    return a - b


def metric_values(c: Mapping[str, float], predictions: bool = True) -> dict[str, float | None]:
    """Every group metric of one count dict (``w, tp, fp, tn, fn, gtp, gfp, gtn, gfn``)."""
    out: dict[str, float | None] = {}
    for name, f in COUNT_METRICS.items():
        out[name] = float(f(c))
    for name, (num, den, _) in RATE_METRICS.items():
        out[name] = div(float(num(c)), float(den(c)))
    acc = out["accuracy"]
    out["error_rate"] = None if acc is None else 1.0 - acc
    for name, f in SCORE_METRICS.items():
        out[name] = f(c)
    if not predictions:
        out = {k: v for k, v in out.items() if k in LABEL_METRICS}
    return out


def higher_is_better(metric: str) -> bool:
    """Direction for ``reference="best"``: counts count as 'higher is better'."""
    if metric in COUNT_METRICS:
        return True
    if metric == "error_rate":
        return False
    if metric in SCORE_METRICS:
        return True
    return RATE_METRICS[metric][2]


def disparity_values(g: Mapping[str, Any], r: Mapping[str, Any], predictions: bool = True) -> dict[str, Any]:
    """Named disparities of a group's metric values ``g`` against the reference's ``r``."""
    if not predictions:
        return {
            "statistical_parity_difference": sub(g["base_rate"], r["base_rate"]),
            "disparate_impact": div(g["base_rate"], r["base_rate"]),
        }

    def d(m: str) -> float | None:
        return sub(g[m], r[m])

    def half(a: float | None, b: float | None) -> float | None:
        return None if a is None or b is None else 0.5 * (a + b)

    def absmax(a: float | None, b: float | None) -> float | None:
        return None if a is None or b is None else max(abs(a), abs(b))

    dfpr, dtpr = d("false_positive_rate"), d("true_positive_rate")
    out = {
        "statistical_parity_difference": d("selection_rate"),
        "disparate_impact": div(g["selection_rate"], r["selection_rate"]),
        "equal_opportunity_difference": dtpr,
        "average_odds_difference": half(dfpr, dtpr),
        "average_abs_odds_difference": None if dfpr is None or dtpr is None else 0.5 * (abs(dfpr) + abs(dtpr)),
        "equalized_odds_difference": absmax(dfpr, dtpr),
        "average_predictive_value_difference": half(
            d("positive_predictive_value"), d("false_omission_rate")
        ),
        "generalized_equalized_odds_difference": absmax(
            d("generalized_false_positive_rate"), d("generalized_true_positive_rate")
        ),
    }
    for m in ("error_rate", "false_positive_rate", "false_negative_rate", "false_discovery_rate",
              "false_omission_rate"):  # fmt: skip
        out[f"{m}_difference"] = d(m)
        out[f"{m}_ratio"] = div(g[m], r[m])
    return out


#: metrics each disparity reads (for the reference-group name under reference="best")
DISPARITY_RATES = {
    "statistical_parity_difference": ("selection_rate",),
    "disparate_impact": ("selection_rate",),
    "equal_opportunity_difference": ("true_positive_rate",),
    "average_odds_difference": ("false_positive_rate", "true_positive_rate"),
    "average_abs_odds_difference": ("false_positive_rate", "true_positive_rate"),
    "equalized_odds_difference": ("false_positive_rate", "true_positive_rate"),
    "average_predictive_value_difference": ("positive_predictive_value", "false_omission_rate"),
    "generalized_equalized_odds_difference": (
        "generalized_false_positive_rate", "generalized_true_positive_rate"),
    **{f"{m}_{k}": (m,) for m in ("error_rate", "false_positive_rate", "false_negative_rate",
                                  "false_discovery_rate", "false_omission_rate")
       for k in ("difference", "ratio")},
}  # fmt: skip


# --------------------------------------------------------------------------------------------
# Entropy indices (aif360 0.6.1 formulas, on explicit per-row benefit vectors)
# --------------------------------------------------------------------------------------------


def ge_index(b: np.ndarray, alpha: float) -> float | None:
    """aif360's generalized_entropy_index of a benefit vector; None for empty/undefined."""
    b = np.asarray(b, dtype=np.float64)
    if b.size == 0:
        return None
    with np.errstate(divide="ignore", invalid="ignore"):
        mu = np.mean(b)
        if alpha == 1:
            v = np.mean(np.log((b / mu) ** b) / mu)
        elif alpha == 0:
            v = -np.mean(np.log(b / mu) / mu)
        else:
            v = np.mean((b / mu) ** alpha - 1) / (alpha * (alpha - 1))
    return None if np.isnan(v) else float(v)


def edf(pos: Sequence[float], tot: Sequence[float], concentration: float) -> float | None:
    """Smoothed EDF over cells (pairwise definition); None with < 2 cells or only NaN terms."""
    if len(pos) < 2:
        return None
    c = concentration
    with np.errstate(divide="ignore", invalid="ignore"):
        s = (np.asarray(pos, float) + c / 2) / (np.asarray(tot, float) + c)
        lp, ln = np.log(s), np.log(1 - s)
    best = None
    for i in range(len(s)):
        for j in range(len(s)):
            if i == j:
                continue
            with np.errstate(invalid="ignore"):
                terms = (abs(lp[i] - lp[j]), abs(ln[i] - ln[j]))
            for t in terms:
                if np.isnan(t):
                    continue
                best = t if best is None else max(best, t)
    return None if best is None else float(best)


# --------------------------------------------------------------------------------------------
# The data, as row-level arrays
# --------------------------------------------------------------------------------------------


def fmt(v: Any) -> str:
    """How a key value is shown in the report's ``group`` column."""
    if v is None:
        return "null"
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    text = str(v)
    # the report quotes (JSON) a value that could be read as a null, a separator or a quoted value
    if text == "null" or " & " in text or text.startswith(('"', "& ")) or text.endswith(" &"):
        return json.dumps(text, ensure_ascii=False)
    return text


def sort_key(t: tuple) -> tuple:
    """Sort key of a key tuple: nulls first, then natural order."""
    return tuple((v is not None, v) for v in t)


@dataclass
class Rows:
    """A small data set in row form.

    ``y``/``p`` are label/prediction *states*: 1 favorable, 0 unfavorable, None null.
    ``s`` are scores (None null) or None when there are no scores; ``wt`` weights likewise.
    ``keys`` / ``by`` map column name -> list of values (None null).
    """

    y: list
    p: list | None = None
    s: list | None = None
    wt: list | None = None
    keys: dict[str, list] = field(default_factory=dict)
    by: dict[str, list] = field(default_factory=dict)
    threshold: float = 0.5

    @property
    def n(self) -> int:
        return len(self.y)

    @property
    def has_predictions(self) -> bool:
        return self.p is not None or self.s is not None

    def arrays(self) -> dict[str, np.ndarray]:
        n = self.n
        y = np.array([-1 if v is None else int(v) for v in self.y])
        if self.p is not None:
            p = np.array([-1 if v is None else int(v) for v in self.p])
        elif self.s is not None:
            p = np.array([-1 if v is None else int(v >= self.threshold) for v in self.s])
        else:
            p = y.copy()
        valid = (y >= 0) & (p >= 0)
        if self.s is not None:
            s = np.array([np.nan if v is None else float(v) for v in self.s])
            valid &= ~np.isnan(s)
        else:
            s = (p == 1).astype(float)
        if self.wt is not None:
            w = np.array([np.nan if v is None else float(v) for v in self.wt])
            valid &= ~np.isnan(w)
        else:
            w = np.ones(n)
        return {"y": y, "p": p, "s": s, "w": w, "valid": valid}


def counts(a: Mapping[str, np.ndarray], mask: np.ndarray) -> dict[str, float]:
    """The cell-table counts of the rows in ``mask``."""
    v = mask & a["valid"]
    y, p, w, s = a["y"], a["p"], a["w"], a["s"]
    out: dict[str, float] = {
        "n": int(mask.sum()),
        "n_missing": int((mask & ~a["valid"]).sum()),
        "n_invalid": 0,
        "w": float(w[v].sum()),
    }
    for name, yy, pp in (("tp", 1, 1), ("fp", 0, 1), ("tn", 0, 0), ("fn", 1, 0)):
        m = v & (y == yy) & (p == pp)
        out[name] = float(w[m].sum())
        out[f"{name}_n"] = int(m.sum())
    out["gtp"] = float((w * s)[v & (y == 1)].sum())
    out["gfp"] = float((w * s)[v & (y == 0)].sum())
    out["gtn"] = float((w * (1 - s))[v & (y == 0)].sum())
    out["gfn"] = float((w * (1 - s))[v & (y == 1)].sum())
    return out


def _mask(col: list, value: Any) -> np.ndarray:
    return np.array([(x is None and value is None) or (x is not None and value is not None and x == value)
                     for x in col], dtype=bool)  # fmt: skip


def ref_cells(rows: Rows) -> dict[tuple, dict[str, float]]:
    """Reference cell table: (by values..., key values...) -> counts (only observed cells)."""
    a = rows.arrays()
    cols = [*rows.by.values(), *rows.keys.values()]
    tuples = sorted({tuple(c[i] for c in cols) for i in range(rows.n)}, key=sort_key)
    out = {}
    for t in tuples:
        m = np.ones(rows.n, dtype=bool)
        for c, v in zip(cols, t):
            m &= _mask(c, v)
        out[t] = counts(a, m)
    return out


# --------------------------------------------------------------------------------------------
# The report
# --------------------------------------------------------------------------------------------

Row = dict  # value, reference_group, difference, ratio, n


def _attribute_sets(names: list[str], intersections: Any) -> list[tuple[str, ...]]:
    if intersections is None and len(names) > 3:  # default: singles, pairs, the full intersection
        return [s for k in (1, 2) for s in itertools.combinations(names, k)] + [tuple(names)]
    if intersections in (None, "all") or isinstance(intersections, int):
        top = len(names) if intersections in (None, "all") else intersections
        return [s for k in range(1, min(top, len(names)) + 1) for s in itertools.combinations(names, k)]
    sets = [(s,) if isinstance(s, str) else tuple(s) for s in intersections]
    return list(dict.fromkeys(tuple(k for k in names if k in s) for s in sets))


def ref_report(
    rows: Rows,
    *,
    privileged: Mapping[str, Any] | None = None,
    reference: str | None = None,
    intersections: Any = None,
    alpha: float = 2.0,
    concentration: float = 1.0,
) -> dict[tuple, Row]:
    """Reference report: (by tuple, attribute, group, metric) -> row dict."""
    a = rows.arrays()
    preds = rows.has_predictions
    names = list(rows.keys)
    privileged = dict(privileged or {})
    by_cols = list(rows.by.values())
    by_vals = sorted({tuple(c[i] for c in by_cols) for i in range(rows.n)}, key=sort_key)
    out: dict[tuple, Row] = {}

    def put(bt, attr, grp, metric, value, ref=None, diff=None, ratio=None, n=None):
        key = (bt, attr, grp, metric)
        assert key not in out, key
        out[key] = {"value": value, "reference_group": ref, "difference": diff, "ratio": ratio, "n": n}

    for bt in by_vals:
        bmask = np.ones(rows.n, dtype=bool)
        for c, v in zip(by_cols, bt):
            bmask &= _mask(c, v)
        pop_c = counts(a, bmask)
        pop_m = metric_values(pop_c, preds)
        N = pop_c["n"]
        put(bt, None, None, "n_missing", float(pop_c["n_missing"]), n=N)
        for m, v in pop_m.items():
            put(bt, None, None, m, v, n=N)

        # cells of the full intersection (for between_all_groups and the population EDF)
        def groups_of(attrs: Sequence[str]):
            cols = [rows.keys[k] for k in attrs]
            ts = sorted({tuple(c[i] for c in cols) for i in range(rows.n) if bmask[i]}, key=sort_key)  # noqa: B023
            res = []
            for t in ts:
                m = bmask.copy()  # noqa: B023 (called within the same iteration)
                for c, v in zip(cols, t):
                    m &= _mask(c, v)
                res.append((t, m))
            return res

        def between(groups, alpha_):
            """Benefit vector where each counted row gets its group's mean benefit."""
            bs = []
            for _, m in groups:
                v = m & a["valid"]
                if v.sum() == 0:
                    continue
                b = 1.0 + a["p"][v] - a["y"][v]
                bs.append(np.full(int(v.sum()), b.mean()))
            if len(bs) < 2:  # policy: a between-group index needs two groups with counted rows
                return None
            vec = np.concatenate(bs) if bs else np.array([])
            return ge_index(vec, alpha_)

        def corrected_variance(groups, column: str):
            """Lum, Zhang & Bower's double-corrected variance of the groups' rates (Kish sizes)."""
            ps, ns = [], []
            for _, m in groups:
                v = m & a["valid"]
                w = a["w"][v]
                if w.sum() <= 0:
                    continue
                n_eff = w.sum() ** 2 / (w * w).sum()
                if n_eff <= 1:
                    continue
                ps.append(float((w * a[column][v]).sum() / w.sum()))
                ns.append(float(n_eff))
            if len(ps) < 2:
                return None
            k = len(ps)
            mean = sum(ps) / k
            naive = sum((x - mean) ** 2 for x in ps) / (k - 1)
            return naive - sum(x * (1 - x) / (n - 1) for x, n in zip(ps, ns)) / k

        def edf_of(groups, on: str):
            pos, tot = [], []
            for _, m in groups:
                v = m & a["valid"]
                if v.sum() == 0:
                    continue
                lab = a["y"] if on == "labels" else a["p"]
                pos.append(float(a["w"][v & (lab == 1)].sum()))
                tot.append(float(a["w"][v].sum()))
            return edf(pos, tot, concentration)

        full = groups_of(names)
        e_lab = edf_of(full, "labels")
        put(bt, None, None, "smoothed_empirical_differential_fairness", e_lab, n=N)
        if preds:
            v = bmask & a["valid"]
            b = 1.0 + a["p"][v] - a["y"][v]
            ge2 = ge_index(b, 2.0)
            put(bt, None, None, "generalized_entropy_index", ge_index(b, alpha), n=N)
            put(bt, None, None, "theil_index", ge_index(b, 1.0), n=N)
            put(bt, None, None, "coefficient_of_variation", None if ge2 is None else math.sqrt(max(2 * ge2, 0.0)), n=N)
            bg2 = between(full, 2.0)
            put(bt, None, None, "between_all_groups_generalized_entropy_index", between(full, alpha), n=N)
            put(bt, None, None, "between_all_groups_theil_index", between(full, 1.0), n=N)
            put(bt, None, None, "between_all_groups_coefficient_of_variation",
                None if bg2 is None else math.sqrt(max(2 * bg2, 0.0)), n=N)  # fmt: skip
            e_pred = edf_of(full, "predictions")
            put(bt, None, None, "smoothed_empirical_differential_fairness_predictions", e_pred, n=N)
            put(bt, None, None, "differential_fairness_bias_amplification", sub(e_pred, e_lab), n=N)

        for attrs in _attribute_sets(names, intersections):
            attr = " & ".join(attrs)
            groups = groups_of(attrs)
            gnames = [" & ".join(fmt(v) for v in t) for t, _ in groups]
            gcounts = [counts(a, m) for _, m in groups]
            gmetrics = [metric_values(c, preds) for c in gcounts]
            mnames = list(gmetrics[0])

            # the reference: per metric a value and a name
            mode = reference
            if mode is None:
                mode = "privileged" if privileged and all(k in privileged for k in attrs) else "largest"
            refv: dict[str, float | None]
            refn: dict[str, str | None]
            if mode == "privileged" and not all(k in privileged for k in attrs):
                refv = dict.fromkeys(mnames)
                refn = dict.fromkeys(mnames)
            elif mode == "privileged":
                m = bmask.copy()
                labels = []
                for k in attrs:
                    pv = privileged[k]
                    pv = list(pv) if isinstance(pv, (list, tuple, set)) else [pv]
                    m &= np.array([fmt(x) in {fmt(q) for q in pv} for x in rows.keys[k]])
                    labels.append("|".join(fmt(q) for q in pv))
                # no privileged row in this by group: the reference is undefined (all None)
                refv = metric_values(counts(a, m), preds) if m.any() else dict.fromkeys(mnames)
                refn = dict.fromkeys(mnames, " & ".join(labels))
            elif mode == "overall":
                refv, refn = pop_m, dict.fromkeys(mnames, "overall")
            elif mode == "largest":
                ws = [c["w"] for c in gcounts]
                i = int(np.argmax(ws))  # first maximum in sort order
                refv, refn = gmetrics[i], dict.fromkeys(mnames, gnames[i])
            else:  # best
                refv, refn = {}, {}
                for mname in mnames:
                    vals = [g[mname] for g in gmetrics]
                    present = [v for v in vals if v is not None]
                    if not present:
                        refv[mname], refn[mname] = None, None
                        continue
                    pick = max(present) if higher_is_better(mname) else min(present)
                    refv[mname] = pick
                    refn[mname] = gnames[vals.index(pick)]

            for gname, c, gm in zip(gnames, gcounts, gmetrics):
                n = c["n"]
                put(bt, attr, gname, "n_missing", float(c["n_missing"]), n=n)
                for mname in mnames:
                    put(bt, attr, gname, mname, gm[mname], refn[mname], sub(gm[mname], refv[mname]),
                        div(gm[mname], refv[mname]), n)  # fmt: skip
                for dname, dv in disparity_values(gm, refv, preds).items():
                    rates = DISPARITY_RATES[dname] if preds else ("base_rate",)
                    rn = [refn[r] for r in rates]
                    name = None if any(x is None for x in rn) else " / ".join(dict.fromkeys(rn))
                    put(bt, attr, gname, dname, dv, name, n=n)

            # attribute rows
            spreads = {}
            for mname in mnames:
                # policy: over the groups where the metric is defined; null with fewer than two
                vals = [g[mname] for g in gmetrics if g[mname] is not None]
                if len(vals) < 2:
                    spreads[mname] = (None, None)
                else:
                    spreads[mname] = (max(vals) - min(vals), div(min(vals), max(vals)))
                put(bt, attr, None, mname, None, None, *spreads[mname], n=N)
            if preds:
                sd, sr = spreads["selection_rate"]
                put(bt, attr, None, "demographic_parity_difference", sd, n=N)
                put(bt, attr, None, "demographic_parity_ratio", sr, n=N)
                (td, tr), (fd, fr) = spreads["true_positive_rate"], spreads["false_positive_rate"]
                put(bt, attr, None, "equalized_odds_difference",
                    None if td is None or fd is None else max(td, fd), n=N)  # fmt: skip
                put(bt, attr, None, "equalized_odds_ratio",
                    None if tr is None or fr is None else min(tr, fr), n=N)  # fmt: skip
                put(bt, attr, None, "between_group_variance_selection_rate", corrected_variance(groups, "p"), n=N)
                bg2 = between(groups, 2.0)
                put(bt, attr, None, "between_group_generalized_entropy_index", between(groups, alpha), n=N)
                put(bt, attr, None, "between_group_theil_index", between(groups, 1.0), n=N)
                put(bt, attr, None, "between_group_coefficient_of_variation",
                    None if bg2 is None else math.sqrt(max(2 * bg2, 0.0)), n=N)  # fmt: skip
                put(bt, attr, None, "smoothed_empirical_differential_fairness_predictions",
                    edf_of(groups, "predictions"), n=N)  # fmt: skip
            put(bt, attr, None, "smoothed_empirical_differential_fairness", edf_of(groups, "labels"), n=N)
            put(bt, attr, None, "between_group_variance_base_rate", corrected_variance(groups, "y"), n=N)
    return out


# --------------------------------------------------------------------------------------------
# Comparison helpers
# --------------------------------------------------------------------------------------------


def close(x: float | None, y: float | None, rel: float = 1e-9, abs_: float = 1e-12) -> bool:
    if x is None or y is None:
        return x is None and y is None
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    if math.isinf(x) or math.isinf(y):
        return x == y
    return math.isclose(x, y, rel_tol=rel, abs_tol=abs_)


def report_as_dict(report: Any, by: Sequence[str] = ()) -> dict[tuple, Row]:
    """A polfair report (pl.DataFrame) as (by tuple, attribute, group, metric) -> row dict."""
    out = {}
    for r in report.iter_rows(named=True):
        key = (tuple(r[b] for b in by), r["attribute"], r["group"], r["metric"])
        assert key not in out, f"duplicate report row {key}"
        out[key] = {k: r[k] for k in ("value", "reference_group", "difference", "ratio", "n")}
    return out


def compare_reports(got: Mapping[tuple, Row], want: Mapping[tuple, Row], rel: float = 1e-9) -> list[str]:
    """Differences between two report dicts, as readable lines (empty: equal)."""
    problems = []
    missing, extra = set(want) - set(got), set(got) - set(want)
    if missing:
        problems.append(f"rows missing from polfair: {sorted(map(str, missing))[:10]}")
    if extra:
        problems.append(f"unexpected rows in polfair: {sorted(map(str, extra))[:10]}")
    for k in sorted(set(got) & set(want), key=str):
        g, w = got[k], want[k]
        for f in ("value", "difference", "ratio"):
            gv, wv = g[f], w[f]
            if "coefficient_of_variation" in k[3] and gv is not None and wv is not None:
                # sqrt(2·GE) amplifies rounding noise near 0 (GE ~ 1e-16 gives CV ~ 1e-8): compare CV²
                gv, wv = gv * gv, wv * wv
            if not close(gv, wv, rel=rel):
                problems.append(f"{k} {f}: polfair {g[f]!r} != reference {w[f]!r}")
        for f in ("reference_group", "n"):
            if g[f] != w[f]:
                problems.append(f"{k} {f}: polfair {g[f]!r} != reference {w[f]!r}")
    return problems
