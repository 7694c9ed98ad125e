"""The regression report: a regression cell table to the fairness report's long rows.

The report's metrics, intervals and tests are described in :mod:`polfair.core.regression` (the public
module, which re-exports this one's public names) and in :func:`regression_report_from_cells`. Here:
the roll-ups of every attribute set, the references, the group, population and attribute rows
(the statistics come from :mod:`polfair.core.regression.stats`), and the cell table kept on a
report for the HTML page (:func:`attach_regression_cells`, :func:`regression_cells_of`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np
import polars as pl

from polfair.core import intervals as iv
from polfair.core._args import as_list
from polfair.core.passes.counts import check_counted
from polfair.core.reference import largest_reference, resolve_min_sample_size, warn_small_reference
from polfair.core.regression.moments import LO_COLUMNS, combine, common_units
from polfair.core.regression.passes import (
    REGRESSION_CELL_COLUMNS,
    check_regression_cells,
    regression_cells,  # noqa: F401 (the doctests use it)
)
from polfair.core.regression.stats import (
    ESTIMATED_METRICS,
    LOG_T_METRICS,
    MEAN_MOMENTS,
    REGRESSION_ATTRIBUTE_METRICS,
    REGRESSION_METRICS,
    Moments,
    attribute_spread,
    group_moments,
    ks_batch,
    ks_p_value,
    mean_difference,
    mean_interval,
    mean_parts,
    metric_values,
    r2_parts,
    safe_div,
    scipy_stats,
    t_quantile,
    value_limits,
    welch_test,
)
from polfair.core.report.build import (
    GROUP_KEY,
    SEPARATOR,
    Intersections,
    ReportOptions,
    attribute_sets,
    check_protected_names,
    check_reference,
    group_label,
    value_label,
    warn_absent_privileged,
)
from polfair.core.values import coerce_values, match_values
from polfair.exceptions import InvalidInputError, PolfairError

__all__ = ["attach_regression_cells", "regression_cells_of", "regression_report_from_cells",
           "report_rows"]  # fmt: skip

_F64 = pl.Float64
#: The cell table's value columns the report carries: the schema's and the means' compensations.
_CELL = (*REGRESSION_CELL_COLUMNS, *LO_COLUMNS)


# ----------------------------------------------------------------------------------------------
# the report


_SA, _SG, _GL, _PRIV, _MODE, _ALL = "__pf_sa", "__pf_sg", "__pf_group", "__pf_priv", "__pf_mode", "__pf_all"
_CI_FLOATS = ("value_lo", "value_hi", "difference_lo", "difference_hi", "ratio_lo", "ratio_hi", "p_value",
              "p_value_adjusted", "n_eff")  # fmt: skip


def regression_report_from_cells(
    cells: pl.DataFrame | pl.LazyFrame,
    *,
    protected: str | Sequence[str],
    by: str | Sequence[str] | None = (),
    privileged: Mapping[str, Any] | None = None,
    reference: Literal["privileged", "largest", "overall"] | None = None,
    intersections: Intersections = None,
    ci: float | None = 0.95,
    p_adjust: Literal["bh", "by", "holm"] | None = "bh",
    min_sample_size: int | None = None,
) -> pl.DataFrame:
    """The regression fairness report from a regression cell table (:func:`regression_cells`).

    Parameters
    ----------
    cells
        A regression cell table (or a merge of them), eager or lazy.
    protected
        Its protected-attribute columns, in order (one name or a list).
    by
        Its ``by`` columns (one report per ``by`` value).
    privileged
        ``{attribute: value or values}``: an attribute set whose attributes all have privileged
        values is compared with that group (the union of the values); others with the largest.
    reference
        ``None`` (privileged where given, else the largest group by weight), ``"privileged"``,
        ``"largest"`` or ``"overall"`` (the whole population: a group is then compared with the
        rest of the population, whose difference scales by ``1 − W_g/W``).
    intersections
        The attribute sets, as :func:`polfair.fairness_report`.
    ci
        Confidence level in (0, 1) or ``None`` (no interval columns).
    p_adjust
        ``"bh"`` (default), ``"by"``, ``"holm"`` or ``None`` (``p_value_adjusted`` = ``p_value``):
        ``p_value_adjusted`` within each (``by`` value, metric) family of group rows and of attribute rows.
    min_sample_size
        Input rows a group needs to be the comparison group (:mod:`polfair.core.reference`):
        the largest group is chosen among those that meet it; a privileged group below it warns.
        ``None``: 30 rows; ``0``: no minimum.

    Returns
    -------
    pl.DataFrame
        The fairness report's long schema (:mod:`polfair.core.report.build`): ``*by, attribute,
        group, metric, value, reference_group, difference, ratio, n``, with ``ci`` the interval
        columns ``value_lo … n_eff`` (Float64) and ``ci_method, test`` (Categorical), then
        ``n_groups``, ``excluded_groups``, ``group_key``. Metrics: group and population rows
        :data:`REGRESSION_METRICS` and ``n_missing``; group rows also ``ks_distance`` (the
        Kolmogorov–Smirnov distance of the group's predictions to the reference's) and
        ``ks_distance_bound`` (its histogram error bound); attribute rows each metric's spread
        (``difference`` = max − min, ``ratio`` = min ÷ max, fairlearn's ``between_groups``) and
        :data:`REGRESSION_ATTRIBUTE_METRICS` (fairlearn's ``group_max``/``group_min``, the
        bounded group loss = the largest group MSE, the largest ``ks_distance``).

    Raises
    ------
    PolfairError
        Not a regression cell table, bad ``reference``/``privileged``/``intersections``/``ci``.
    InvalidInputError
        A value that does not fit Float64 in the data's units.

    Warns
    -----
    ReferenceWarning
        A ``privileged`` value found in no cell (a misspelling or another dtype): its comparisons
        would be null (the check of :func:`polfair.fairness_report`).

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": [1.0, 2.0, 3.0, 4.0, 5.0, 7.0], "p": [1.5, 2.0, 2.5, 4.0, 5.5, 6.0],
    ...                    "g": ["a", "a", "a", "b", "b", "b"]})
    >>> cells = regression_cells(df.lazy(), y_true="y", y_pred="p", keys=["g"])
    >>> rep = regression_report_from_cells(cells, protected="g", privileged={"g": "a"})
    >>> rep.filter(group="b", metric="mean_absolute_error").select("value", "difference").row(0)
    (0.5, 0.16666666666666666)
    """
    return report_rows(cells, ReportOptions.of_keywords(locals()), stacklevel=5)


def report_rows(cells: pl.DataFrame | pl.LazyFrame, options: ReportOptions, *, stacklevel: int = 4) -> pl.DataFrame:
    """:func:`regression_report_from_cells`, for the doors that call it for their user
    (``stacklevel`` of the warnings: 4 names the caller of the door that calls this).
    """
    keys, by_n = [str(x) for x in as_list(options.protected)], [str(x) for x in as_list(options.by)]
    reference, ci, p_adjust, privileged = options.reference, options.ci, options.p_adjust, dict(options.privileged or {})
    intersections, min_sample_size = options.intersections, options.min_sample_size
    check_reference(reference)
    if reference == "best":
        msg = "reference='best' is not available for regression reports; use 'privileged', 'largest' or 'overall'"
        raise PolfairError(msg)
    check_protected_names(keys)
    level = iv.check_ci(ci)
    method = iv.check_p_adjust(p_adjust)
    table = cells.collect() if isinstance(cells, pl.LazyFrame) else cells
    check_regression_cells(table, [*by_n, *keys])
    total, missing = table.select(pl.sum_horizontal(pl.col("n", "n_missing", "n_invalid").sum()), pl.col("n_missing").sum()).row(0)
    check_counted(int(total or 0), int(missing or 0), what="outcome, prediction or weight")
    for k in privileged:
        if k not in keys:
            msg = f"privileged names {k!r}, which is not a protected attribute {keys}"
            raise PolfairError(msg)
    ib = [f"__pf_by{i}" for i in range(len(by_n))] or [_ALL]
    schema = table.schema
    table, w_exp, y_exp = common_units(table)
    table = table.rename(dict(zip(by_n, ib)))
    if not by_n:
        table = table.with_columns(pl.lit(0, pl.Int8).alias(_ALL))
    typed = {a: coerce_values(privileged[a], schema[a], option="privileged", column=a) for a in privileged}
    warn_absent_privileged(table.lazy(), schema, typed, stacklevel=stacklevel)
    sets = attribute_sets(keys, intersections)
    weighted = bool(table.select((pl.col("w") != pl.col("w2")).any()).item())
    ctx = _Context(table, keys, ib, sets, schema, typed, reference, level, weighted, method,
                   resolve_min_sample_size(min_sample_size), stacklevel)  # fmt: skip
    rows = _unscale(ctx.rows(), w_exp, y_exp)
    ordered = rows.sort([*ib, _SA, _SG, "__pf_m"], nulls_last=False)
    floats = list(_CI_FLOATS) if level is not None else []
    cats = ["ci_method", "test"] if level is not None else []
    return ordered.select(
        *[pl.col(i).alias(b) for i, b in zip(ib, by_n)],
        pl.col("attribute").cast(pl.Categorical), "group", pl.col("metric").cast(pl.Categorical), "value",
        pl.col("reference_group").cast(pl.Categorical), "difference", "ratio", pl.col("n").cast(pl.Int64),
        *floats, *[pl.col(c).cast(pl.Categorical) for c in cats],
        pl.col("n_groups").cast(pl.Int64), pl.col("excluded_groups").cast(pl.String), GROUP_KEY,
    )  # fmt: skip


#: Each metric's units: (degree in the weights, degree in the values) of its value and difference.
_METRIC_UNITS: dict[str, tuple[int, int]] = {
    "num_instances": (1, 0), "mean_outcome": (0, 1), "mean_prediction": (0, 1), "mean_error": (0, 1),
    "mean_absolute_error": (0, 1), "mean_squared_error": (0, 2), "root_mean_squared_error": (0, 1),
    "bounded_group_loss": (0, 2),
}  # fmt: skip


def _unscale(rows: pl.DataFrame, w_exp: int, y_exp: int) -> pl.DataFrame:
    """The report's values back in the data's units (the table's moments are on the units
    ``2^w_exp`` for weights, ``2^y_exp`` for values: :mod:`polfair.core.regression.moments`).

    Raises
    ------
    InvalidInputError
        A value or difference that is finite on the table's units is not in the data's (beyond Float64).
    """
    if not (w_exp or y_exp):
        return rows
    units = {f"{m}{s}": u for m, u in _METRIC_UNITS.items() for s in ("", "_group_max", "_group_min")}
    metric = pl.col("metric").cast(pl.String)
    power = metric.replace_strict({m: a * w_exp + b * y_exp for m, (a, b) in units.items()}, default=0,
                                  return_dtype=pl.Float64)  # fmt: skip
    cols = [c for c in ("value", "value_lo", "value_hi", "difference", "difference_lo", "difference_hi") if c in rows.columns]
    out = rows.with_columns([(pl.col(c) * pl.lit(2.0).pow(power)).alias(c) for c in cols])
    gone = out.select(pl.any_horizontal([pl.col(c).is_infinite() & rows[c].is_finite() for c in cols]).any()).item()
    if gone:
        msg = (
            "the regression report's values overflow Float64 in the data's units (outcomes or predictions near "
            "1e308, or weights summing beyond it); rescale the outcome and the prediction (divide both by the same "
            "power of ten), or the weights"
        )
        raise InvalidInputError(msg)
    return out


_ORDER: dict[str, int] = {}
for _m in ("n_missing", *REGRESSION_METRICS, "ks_distance", "ks_distance_bound", *REGRESSION_ATTRIBUTE_METRICS):
    _ORDER.setdefault(_m, len(_ORDER))


class _Context:
    """One report's computation: roll-ups, references, values, intervals, long rows."""

    def __init__(
        self,
        table: pl.DataFrame,
        keys: list[str],
        ib: list[str],
        sets: list[tuple[str, ...]],
        schema: pl.Schema,
        typed: dict[str, tuple[Any, ...]],
        reference: str | None,
        ci: float | None,
        weighted: bool,
        p_adjust: str | None,
        min_n: int = 0,
        stacklevel: int = 4,
    ) -> None:
        self.table, self.keys, self.ib, self.sets, self.schema = table, keys, ib, sets, schema
        self.typed, self.reference, self.ci, self.weighted, self.p_adjust = typed, reference, ci, weighted, p_adjust
        self.min_n, self.stacklevel = min_n, stacklevel

    # ---- roll-ups ---------------------------------------------------------------------------
    def _groups(self) -> tuple[pl.DataFrame, pl.DataFrame]:
        """One row per (by, attribute set, group) with sums, and its histogram per bin."""
        frames, hists = [], []
        keys, ib, schema = self.keys, self.ib, self.schema
        for ai, attrs in enumerate(self.sets):
            covered = bool(self.typed) and all(a in self.typed for a in attrs)
            mode = self.reference or ("privileged" if covered else "largest")
            is_priv = pl.lit(False)
            if mode == "privileged" and covered:
                is_priv = pl.lit(True)
                for a in attrs:
                    is_priv = is_priv & match_values(pl.col(a), schema[a], self.typed[a])
            key = pl.struct([pl.col(k) if k in attrs else pl.lit(None, schema[k]).alias(k) for k in keys])
            g = (
                combine(self.table, [*ib, *attrs]).sort([*ib, *attrs], nulls_last=False)
                .select(*ib, *attrs, pl.lit(ai, pl.Int64).alias(_SA), pl.lit(SEPARATOR.join(attrs)).alias("attribute"),
                        group_label(list(attrs)).alias(_GL), key.alias(GROUP_KEY), is_priv.alias(_PRIV),
                        pl.lit(mode).alias(_MODE), *_CELL)
            )  # fmt: skip
            frames.append(g)
        groups = pl.concat(frames, how="diagonal_relaxed").with_row_index(_SG).with_columns(pl.col(_SG).cast(pl.Int64))
        for ai, attrs in enumerate(self.sets):
            h = (
                self.table.filter(pl.col("bin").is_not_null())
                .group_by([*ib, *attrs, "bin"])
                .agg(pl.col("w").sum(), pl.col("n").sum(), pl.col("p_min").min(), pl.col("p_max").max())
                .with_columns(pl.lit(ai, pl.Int64).alias(_SA))
            )
            sel = groups.filter(pl.col(_SA) == ai).select(*ib, *attrs, _SG)
            hists.append(h.join(sel, on=[*ib, *attrs], nulls_equal=True).select(_SG, "bin", "w", "n", "p_min", "p_max"))
        return groups, pl.concat(hists)

    def rows(self) -> pl.DataFrame:
        ib = self.ib
        groups, hist = self._groups()
        pop = combine(self.table, ib).sort(ib, nulls_last=False)
        pop = pop.with_row_index("__pf_pi").with_columns(pl.col("__pf_pi").cast(pl.Int64))
        pop_hist = (
            self.table.filter(pl.col("bin").is_not_null()).join(pop.select(*ib, "__pf_pi"), on=ib, nulls_equal=True)
            .group_by("__pf_pi", "bin").agg(pl.col("w").sum(), pl.col("p_min").min(), pl.col("p_max").max())
        )  # fmt: skip
        g_pop = groups.join(pop.select(*ib, "__pf_pi"), on=ib, how="left", nulls_equal=True, maintain_order="left")
        pop_index = g_pop["__pf_pi"].to_numpy()
        ref_index, ref_label, ref_rows = self._references(groups)
        mg, mp = group_moments(groups), group_moments(pop)
        parts = [
            self._population_rows(pop, mp),
            self._group_rows(groups, mg, mp, pop_index, ref_index, ref_label, ref_rows, hist, pop_hist),
        ]
        parts.append(self._attribute_rows(groups, parts[1], pop))
        return pl.concat(parts, how="diagonal_relaxed")

    def _references(self, groups: pl.DataFrame) -> tuple[np.ndarray, list[str | None], pl.DataFrame]:
        """Per group: the index of its reference row in ``ref_rows`` (−1: none), its label; and
        ``ref_rows``: one row of sums per (by, attribute set) with a privileged or largest reference.
        """
        sk = [*self.ib, _SA]
        frames = []
        priv = groups.filter(pl.col(_MODE) == "privileged")
        if priv.height:
            labels = {
                ai: SEPARATOR.join("|".join(value_label(v) for v in self.typed[a]) for a in attrs)
                for ai, attrs in enumerate(self.sets) if all(a in self.typed for a in attrs)
            }  # fmt: skip
            chosen = priv.filter(pl.col(_PRIV))
            p = (
                combine(chosen.select(*sk, *_CELL), sk)
                .join(chosen.group_by(sk).agg(pl.col(_SG).alias("__pf_members")), on=sk, nulls_equal=True)
                .with_columns(pl.col(_SA).replace_strict(labels, default=None, return_dtype=pl.String).alias("__pf_label"))
            )  # fmt: skip
            frames.append(p)
            named = p.filter(pl.col("__pf_label").is_not_null()).select("__pf_label", "n")
            warn_small_reference(named, label="__pf_label", size="n", min_sample_size=self.min_n,
                                 stacklevel=self.stacklevel + 2)  # fmt: skip
        largest = groups.filter(pl.col(_MODE) == "largest")
        if largest.height:  # the largest group meeting the minimum (polfair.core.reference)
            first = largest_reference(largest, sk, order=_SG, weight="w", size="n", min_sample_size=self.min_n)
            lg = largest.join(first.collect().select(_SG), on=_SG, how="semi").select(
                *sk, *_CELL, pl.concat_list(_SG).alias("__pf_members"),
                pl.col(_GL).alias("__pf_label"),
            )  # fmt: skip
            frames.append(lg)
        if not frames:
            return np.full(groups.height, -1), [None] * groups.height, pl.DataFrame()
        ref_rows = pl.concat(frames, how="diagonal_relaxed").with_row_index("__pf_ri")
        joined = groups.select(*sk, _SG).join(
            ref_rows.select(*sk, "__pf_ri", "__pf_label", "__pf_members"), on=sk, how="left", nulls_equal=True,
            maintain_order="left",
        )  # fmt: skip
        idx = joined["__pf_ri"].fill_null(-1).cast(pl.Int64).to_numpy()
        labels_out = joined["__pf_label"].to_list()
        return idx, labels_out, ref_rows

    # ---- rows -------------------------------------------------------------------------------
    def _value_intervals(self, m: Moments, vals: dict[str, np.ndarray]) -> dict[str, dict[str, np.ndarray]]:
        """Per estimated metric: value_lo/hi, n_eff and the (value, variance, df) used by comparisons."""
        out: dict[str, dict[str, np.ndarray]] = {}
        ci = self.ci if self.ci is not None else 0.95
        neff = m.neff
        for name in MEAN_MOMENTS:
            mean, v, df = mean_interval(m, name)
            out[name] = {"est": mean, "var": v, "df": df, "n_eff": neff}
        mse = out["mean_squared_error"]
        rm = vals["root_mean_squared_error"]
        with np.errstate(divide="ignore", invalid="ignore"):
            v_rmse = np.where(rm > 0, mse["var"] / (4 * mse["est"]), np.nan)
        out["root_mean_squared_error"] = {"est": rm, "var": v_rmse, "df": mse["df"], "n_eff": neff}
        r2, v, df = r2_parts(m)
        out["r2_score"] = {"est": r2, "var": v, "df": df, "n_eff": neff}
        for name, d in out.items():
            d["lo"], d["hi"] = value_limits(name, d["est"], d["var"], d["df"], ci)
        for d in out.values():
            bad = ~np.isfinite(d["est"]) | ~np.isfinite(d["var"])
            d["lo"], d["hi"] = np.where(bad, np.nan, d["lo"]), np.where(bad, np.nan, d["hi"])
        return out

    def _methods(self) -> dict[str, tuple[str, str | None]]:
        wt = "_ess" if self.weighted else ""
        out: dict[str, tuple[str, str | None]] = {m: (f"t{wt}", f"welch{wt}") for m in MEAN_MOMENTS}
        for m in LOG_T_METRICS:
            out[m] = (f"log_t{wt}", f"welch{wt}")
        out["r2_score"] = ("delta", "z_delta")
        return out

    def _long(self, entities: pl.DataFrame, metric: str, cols: Mapping[str, Any]) -> pl.DataFrame:
        data = {k: (pl.Series(k, v, dtype=_F64, nan_to_null=True) if isinstance(v, np.ndarray) and v.dtype.kind == "f"
                    else pl.Series(k, v)) for k, v in cols.items()}  # fmt: skip
        return entities.with_columns(
            pl.lit(metric).alias("metric"), pl.lit(_ORDER[metric], pl.Int64).alias("__pf_m"), *data.values()
        )

    def _population_rows(self, pop: pl.DataFrame, mp: Moments) -> pl.DataFrame:
        ib = self.ib
        ent = pop.select(
            *ib, pl.lit(-1, pl.Int64).alias(_SA), pl.lit(-1, pl.Int64).alias(_SG), pl.lit(None, pl.String).alias("attribute"),
            pl.lit(None, pl.String).alias("group"), (pl.col("n") + pl.col("n_missing")).alias("n"),
        )  # fmt: skip
        vals = metric_values(mp)
        ivs = self._value_intervals(mp, vals)
        meth = self._methods()
        out = [self._long(ent, "n_missing", {"value": pop["n_missing"].cast(_F64).to_numpy()})]
        for name in REGRESSION_METRICS:
            cols: dict[str, Any] = {"value": vals[name]}
            if self.ci is not None and name in ivs:
                d = ivs[name]
                cols |= {"value_lo": d["lo"], "value_hi": d["hi"], "n_eff": d["n_eff"],
                         "ci_method": [meth[name][0]] * pop.height}  # fmt: skip
            out.append(self._long(ent, name, cols))
        return pl.concat(out, how="diagonal_relaxed")

    def _group_rows(
        self,
        groups: pl.DataFrame,
        mg: Moments,
        mp: Moments,
        pop_index: np.ndarray,
        ref_index: np.ndarray,
        ref_label: list[str | None],
        ref_rows: pl.DataFrame,
        hist: pl.DataFrame,
        pop_hist: pl.DataFrame,
    ) -> pl.DataFrame:
        ib, h = self.ib, groups.height
        ent = groups.select(
            *ib, _SA, _SG, "attribute", pl.col(_GL).alias("group"), (pl.col("n") + pl.col("n_missing")).alias("n"),
            GROUP_KEY,
        )  # fmt: skip
        overall = (groups[_MODE] == "overall").to_numpy()
        mr_rows = group_moments(ref_rows) if ref_rows.height else None
        # the reference's moments per group (privileged / largest) or the population's (overall)
        mref = mr_rows.take(ref_index) if mr_rows is not None else Moments({k: np.full(h, np.nan) for k in mg.sums})
        mpop = mp.take(pop_index)
        for k in mref.sums:
            mref.sums[k] = np.where(overall, mpop[k], mref[k])
        labels = np.array([("overall" if o else lab) for o, lab in zip(overall, ref_label)], dtype=object)
        # a group that is (part of) its own reference has no comparison
        own = np.zeros(h, dtype=bool)
        if ref_rows.height:  # the groups that are (part of) their set's reference: a semi-join
            pairs = ref_rows.select(pl.col("__pf_ri").cast(pl.Int64), pl.col("__pf_members").alias(_SG)).explode(_SG)
            mine = pl.DataFrame({"__pf_ri": ref_index.astype(np.int64), _SG: groups[_SG].cast(pl.Int64)})
            own = (
                mine.join(
                    pairs.with_columns(pl.col(_SG).cast(pl.Int64), pl.lit(True).alias("__pf_own")),
                    on=["__pf_ri", _SG],
                    how="left",
                    maintain_order="left",
                )["__pf_own"]
                .fill_null(False)
                .to_numpy()
            )
            own = own & ~overall
        mcomp = mpop - mg  # the rest of the population (for "overall")
        vg, vr = metric_values(mg), metric_values(mref)
        f = safe_div(mg["w"], mpop["w"])
        ig, ir, ic = self._value_intervals(mg, vg), self._value_intervals(mref, vr), None
        if overall.any():
            ic = self._value_intervals(mcomp, metric_values(mcomp))
        meth = self._methods()
        ci = self.ci if self.ci is not None else 0.95
        out = [self._long(ent, "n_missing", {"value": groups["n_missing"].cast(_F64).to_numpy()})]
        done: dict[str, dict[str, Any]] = {}
        for name in REGRESSION_METRICS:
            v, r = vg[name], vr[name]
            exact = None  # the difference of two means from their double-double parts (a 1e12 level keeps its digits)
            if name in MEAN_MOMENTS:
                diff = np.where(np.isfinite(v) & np.isfinite(r), mean_difference(mg, mref, name), v - r)
                if self.ci is not None:
                    rest = mean_difference(mg, mcomp, name) if overall.any() else diff
                    exact = np.where(overall, rest, diff)
            else:
                diff = v - r
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                ratio = np.where(r != 0, v / np.where(r != 0, r, 1.0), np.nan)
            cols: dict[str, Any] = {"value": v, "difference": diff, "ratio": ratio,
                                    "reference_group": list(labels)}  # fmt: skip
            if self.ci is not None and name in ig:
                cols |= self._comparison(name, ig[name], ir[name], ic[name] if ic else None, overall, own, f, ci,
                                         meth[name], v, r, exact)  # fmt: skip
                if name == "root_mean_squared_error":  # RMSE_g / RMSE_r = √(MSE_g / MSE_r); equal RMSE <=> equal MSE
                    mse = done["mean_squared_error"]
                    cols["ratio_lo"], cols["ratio_hi"] = np.sqrt(mse["ratio_lo"]), np.sqrt(mse["ratio_hi"])
                    cols["p_value"], cols["test"] = mse["p_value"], mse["test"]
                done[name] = cols
            out.append(self._long(ent, name, cols))
        out.append(self._ks_rows(ent, groups, hist, pop_hist, pop_index, ref_index, ref_rows, overall, own,
                                 labels, mg, mpop))  # fmt: skip
        rows = pl.concat(out, how="diagonal_relaxed")
        if self.ci is not None:  # p_adjust=None: the identity adjustment, as fairness_report
            adj = pl.col("p_value") if self.p_adjust is None else iv.p_adjust(pl.col("p_value"), self.p_adjust)  # type: ignore[arg-type]
            rows = rows.with_columns(adj.over([*ib, "metric"]).alias("p_value_adjusted"))
        return rows

    def _comparison(
        self,
        name: str,
        g: dict[str, np.ndarray],
        r: dict[str, np.ndarray],
        c: dict[str, np.ndarray] | None,
        overall: np.ndarray,
        own: np.ndarray,
        f: np.ndarray,
        ci: float,
        methods: tuple[str, str | None],
        v: np.ndarray,
        ref: np.ndarray,
        exact: np.ndarray | None = None,
    ) -> dict[str, Any]:
        """Intervals of the value, the difference and the ratio, and the test, of one metric
        (``exact``: the compensated difference to the comparison partner, for the five means).
        """
        h = len(v)
        cols: dict[str, Any] = {"value_lo": g["lo"], "value_hi": g["hi"], "n_eff": g["n_eff"]}
        # the comparison partner: the reference, or the rest of the population under "overall"
        other = {k: np.where(overall, c[k], r[k]) if c is not None else r[k] for k in ("est", "var", "df")}
        scale = np.where(overall, 1.0 - f, 1.0)
        d, vd, nu, p = welch_test(g["est"], g["var"], g["df"], other["est"], other["var"], other["df"], exact)
        if name == "r2_score":  # the delta method: normal
            with np.errstate(invalid="ignore", divide="ignore"):
                p = np.where(vd > 0, 2.0 * scipy_stats().norm.sf(np.abs(d) / np.sqrt(vd)), np.nan)
            q = np.full(h, scipy_stats().norm.ppf(0.5 + ci / 2.0))
            p = np.where(overall, np.nan, p)  # r² of everyone is not a mixture of the parts': no test vs overall
        else:
            q = t_quantile(ci, nu)
        half = q * np.sqrt(vd)
        dlo, dhi = scale * (d - half), scale * (d + half)
        if name == "r2_score":
            dlo, dhi = np.where(overall, np.nan, dlo), np.where(overall, np.nan, dhi)
        # ratio: log-scale delta method when both estimates are positive (a near-zero estimate: an
        # unbounded upper limit, inf)
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            rg, ro = g["var"] / g["est"] ** 2, other["var"] / other["est"] ** 2
            vl = rg + ro
            nul = vl * vl / (rg * rg / g["df"] + ro * ro / other["df"])
            ql = scipy_stats().norm.ppf(0.5 + ci / 2.0) if name == "r2_score" else t_quantile(ci, nul)
            R = g["est"] / other["est"]
            pos = (g["est"] > 0) & (other["est"] > 0) & (vl > 0)
            rlo, rhi = R * np.exp(-ql * np.sqrt(vl)), R * np.exp(ql * np.sqrt(vl))
            # "overall": value / population = R / (f R + 1 − f), increasing in R
            rlo = np.where(overall, rlo / (f * rlo + 1 - f), rlo)
            rhi = np.where(overall, rhi / (f * rhi + 1 - f), rhi)
        rlo, rhi = np.where(pos, rlo, np.nan), np.where(pos, rhi, np.nan)
        none = own | ~np.isfinite(v - ref)
        cols |= {
            "difference_lo": np.where(none, np.nan, dlo), "difference_hi": np.where(none, np.nan, dhi),
            "ratio_lo": np.where(none, np.nan, rlo), "ratio_hi": np.where(none, np.nan, rhi),
            "p_value": np.where(none, np.nan, p),
            "ci_method": [methods[0]] * h,
            "test": [None if (x or not np.isfinite(pv)) else methods[1] if name != "r2_score" else "z_delta"
                     for x, pv in zip(none, np.where(none, np.nan, p))],
        }  # fmt: skip
        return cols

    def _ks_rows(
        self,
        ent: pl.DataFrame,
        groups: pl.DataFrame,
        hist: pl.DataFrame,
        pop_hist: pl.DataFrame,
        pop_index: np.ndarray,
        ref_index: np.ndarray,
        ref_rows: pl.DataFrame,
        overall: np.ndarray,
        own: np.ndarray,
        labels: np.ndarray,
        mg: Moments,
        mpop: Moments,
    ) -> pl.DataFrame:
        """``ks_distance`` and ``ks_distance_bound`` of every group against its reference."""
        h = groups.height
        sg = np.arange(h)
        hg = hist.select(pl.col(_SG).alias("__pf_k"), "bin", "w", "p_min", "p_max")
        parts = []
        if ref_rows.height:  # the reference's histogram: its member groups' bins summed
            members = ref_rows.select("__pf_ri", pl.col("__pf_members").alias(_SG)).explode(_SG)
            rh = (hist.join(members, on=_SG).group_by("__pf_ri", "bin")
                  .agg(pl.col("w").sum(), pl.col("p_min").min(), pl.col("p_max").max()))  # fmt: skip
            pairs = pl.DataFrame({"__pf_k": sg, "__pf_ri": ref_index}).filter(
                (pl.col("__pf_ri") >= 0) & ~pl.Series(overall)
            )
            parts.append(pairs.join(rh, on="__pf_ri").drop("__pf_ri"))
        if overall.any():
            pairs = pl.DataFrame({"__pf_k": sg, "__pf_pi": pop_index}).filter(pl.Series(overall))
            parts.append(pairs.join(pop_hist, on="__pf_pi").drop("__pf_pi"))
        if parts:
            hr = pl.concat([p.select("__pf_k", "bin", "w", "p_min", "p_max") for p in parts])
            hr = hr.with_columns(pl.col("__pf_k").cast(pl.Int64))
            d, b = ks_batch(hg.with_columns(pl.col("__pf_k").cast(pl.Int64)), hr, "__pf_k")
            d, b = np.resize(d, h) if len(d) != h else d, np.resize(b, h) if len(b) != h else b
            has_ref = np.isin(sg, hr["__pf_k"].unique().to_numpy()) & np.isin(sg, hg["__pf_k"].unique().to_numpy())
            d, b = np.where(has_ref, d, np.nan), np.where(has_ref, b, np.nan)
        else:
            d, b = np.full(h, np.nan), np.full(h, np.nan)
        d, b = np.where(own, np.nan, d), np.where(own, np.nan, b)
        cols: dict[str, Any] = {"value": d, "reference_group": list(labels)}
        if self.ci is not None:
            # the p-value: group vs reference; under "overall" group vs the rest (D = (1 − f)·D(g, rest))
            f = safe_div(mg["w"], mpop["w"])
            n1 = mg.neff
            ref_m = group_moments(ref_rows).take(ref_index) if ref_rows.height else None
            n2 = ref_m.neff if ref_m is not None else np.full(h, np.nan)
            rest = mpop - mg
            n2 = np.where(overall, rest.neff, n2)
            with np.errstate(divide="ignore", invalid="ignore"):
                dd = np.where(overall, np.minimum(d / (1.0 - f), 1.0), d)
            p = ks_p_value(dd, n1, n2)
            cols |= {"p_value": p, "test": [("ks_asymptotic" if np.isfinite(x) else None) for x in p]}
        return pl.concat([
            self._long(ent, "ks_distance", cols),
            self._long(ent, "ks_distance_bound", {"value": b, "reference_group": list(labels)}),
        ], how="diagonal_relaxed")  # fmt: skip

    def _attribute_rows(self, groups: pl.DataFrame, group_rows: pl.DataFrame, pop: pl.DataFrame) -> pl.DataFrame:
        """Per (by, attribute set): each metric's spread, group max/min, bounded group loss, max KS."""
        ib = self.ib
        sk = [*ib, _SA]
        ent = (
            groups.group_by(sk, maintain_order=True).agg(pl.col("attribute").first())
            .join(pop.select(*ib, (pl.col("n") + pl.col("n_missing")).alias("n")), on=ib, how="left", nulls_equal=True,
                  maintain_order="left")
            .with_columns(pl.lit(-1, pl.Int64).alias(_SG), pl.lit(None, pl.String).alias("group"))
        )  # fmt: skip
        mg = group_moments(groups)
        vals = metric_values(mg)
        ivs = self._value_intervals(mg, vals) if self.ci is not None else {}
        codes = groups.select(pl.struct(sk).rank("dense").cast(pl.Int64) - 1).to_series().to_numpy()
        ent = ent.with_columns(pl.struct(sk).rank("dense").cast(pl.Int64).alias("__pf_code") - 1).sort("__pf_code")
        k_sets = ent.height
        labels = groups[_GL].to_list()
        out = []
        for name in ESTIMATED_METRICS:
            x = vals[name]
            # the additive means' differences from their double-double parts (the log-scale ones are ratios)
            lo = mean_parts(mg, name)[1] if name in MEAN_MOMENTS and name not in LOG_T_METRICS else None
            res = attribute_spread(
                x, codes, k_sets, labels, ivs.get(name), self.ci, name, self.weighted, ivs.get("mean_squared_error"), lo
            )
            out.append(self._long(ent, name, res["spread"]))
            out.append(self._long(ent, f"{name}_group_max", res["max"]))
            out.append(self._long(ent, f"{name}_group_min", res["min"]))
        mse = [r for r in out if r["metric"][0] == "mean_squared_error_group_max"][0]
        out.append(mse.with_columns(pl.lit("bounded_group_loss").alias("metric"),
                                    pl.lit(_ORDER["bounded_group_loss"], pl.Int64).alias("__pf_m")))  # fmt: skip
        ks = group_rows.filter(pl.col("metric") == "ks_distance").select(*sk, "value")
        ks_max = ks.group_by(sk).agg(pl.when(pl.col("value").count() > 0).then(pl.col("value").max()).alias("value"))
        ks_ent = ent.join(ks_max, on=sk, how="left", nulls_equal=True, maintain_order="left")
        out.append(self._long(ks_ent.drop("value"), "ks_distance", {"value": ks_ent["value"].cast(_F64).to_numpy()}))
        rows = pl.concat(out, how="diagonal_relaxed").drop("__pf_code")
        if self.ci is not None and "p_value" in rows.columns:  # p_adjust=None: the identity adjustment
            adj = pl.col("p_value") if self.p_adjust is None else iv.p_adjust(pl.col("p_value"), self.p_adjust)  # type: ignore[arg-type]
            rows = rows.with_columns(adj.over([*ib, "metric"]).alias("p_value_adjusted"))
        return rows


#: The attribute under which a report keeps its regression cell table (in memory only).
_CELLS_ATTR = "_polfair_regression_cells"


def attach_regression_cells(report: pl.DataFrame, cells: pl.DataFrame) -> pl.DataFrame:
    """Keep the cell table a regression report was computed from on the report object; returns it.

    In memory only: frames derived from the report (``filter``, ``select`` ...) and files do not
    carry it. The HTML page draws the prediction distributions from it
    (:func:`regression_cells_of`).
    """
    try:
        setattr(report, _CELLS_ATTR, cells)
    except AttributeError:  # pragma: no cover - a frame type without instance attributes
        pass
    return report


def regression_cells_of(report: Any) -> pl.DataFrame | None:
    """The regression cell table attached to a report (:func:`attach_regression_cells`), or ``None``.

    Examples
    --------
    >>> import polars as pl
    >>> import polfair as pf
    >>> df = pl.DataFrame({"y": [1.0, 2.0, 4.0], "p": [1.5, 2.5, 3.0], "g": ["a", "a", "b"]})
    >>> rep = pf.regression_report(df, y_true="y", y_pred="p", protected="g", ci=None)
    >>> int(regression_cells_of(rep)["n"].sum()), regression_cells_of(rep.filter(pl.col("group") == "a"))
    (3, None)
    """
    got = getattr(report, _CELLS_ATTR, None)
    return got if isinstance(got, pl.DataFrame) else None
