"""Fairness monitoring: monitored/reference groups, thresholds and sample sizes (Watson OpenScale).

A recurring fairness check over production decisions needs a policy next to the metrics: which
outcome is favorable, which groups are monitored and which are the reference, what value of each
metric is acceptable, and how many rows a group needs before anyone calls it fair or unfair. This
module holds that policy (:class:`FairnessConfig`, loadable from TOML or JSON) and applies it to a
fairness report (:func:`apply_thresholds`, :func:`alerts`). ``polfair.fairness_report`` takes the same
options as keywords (``config=``, ``thresholds=``, ``min_sample_size=``, ``max_sample_size=``).

Semantics follow IBM Watson OpenScale's fairness monitor (see ``docs/monitoring.md``):

* **favorable outcomes** are a set of label values (``favorable = [0]`` for "no recidivism");
* per attribute, **monitored** and **reference** groups are value sets (``race = ["African-American"]``)
  or inclusive numeric ranges (``age = [18, 25]``); rows in neither are the group ``"other"``; rows
  with a null attribute stay the group ``"null"``. The reference group is the report's reference,
  so OpenScale's fairness value ``%favorable(monitored) / %favorable(reference)`` is the
  monitored group's ``disparate_impact`` row (with ``favorable`` the favorable outcome);
* **thresholds** are inclusive bands per metric (``disparate_impact = [0.8, 1.25]``); each checked
  row gets ``status`` ``"ok"`` or ``"violation"``;
* **min_sample_size**: a checked row whose group (or, for a comparison, whose reference group) has
  fewer input rows gets ``"insufficient_data"``: it is never called fair or unfair. So does a
  row whose value is undefined (null: a zero denominator);
* **max_sample_size**: above it the report runs on a uniform random sample without replacement of
  exactly ``max_sample_size`` rows, drawn by ``numpy.random.default_rng(seed)`` over row positions
  (:func:`sample_rows`): the same input in the same row order with the same seed gives the same
  sample.
"""

from __future__ import annotations

import difflib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import polars as pl

from polfair.compat import yardstick as groupwise
from polfair.exceptions import PolfairError
from polfair.core.metrics import METRICS
from polfair.core.report import REPORT_COLUMNS as _REPORT_COLUMNS
from polfair.core._args import check_columns
from polfair.core.inputs import to_lazyframe

__all__ = [
    "OTHER",
    "STATUS_VALUES",
    "FairnessConfig",
    "GroupSpec",
    "alerts",
    "apply_thresholds",
    "format_threshold",
    "parse_thresholds",
    "sample_rows",
]

#: Group label of rows in neither the monitored nor the reference group of a config attribute.
OTHER = "other"
#: Values of the ``status`` column (null where no threshold applies).
STATUS_VALUES = ("ok", "violation", "insufficient_data")

_KEYS = (
    "favorable", "monitored", "reference", "thresholds", "min_sample_size", "max_sample_size",
    "seed", "metrics", "y_true", "y_pred", "y_score", "weight", "by",
)  # fmt: skip


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _num(x: float) -> str:
    if isinstance(x, int):
        return str(x)
    if math.isfinite(x) and x == int(x) and abs(x) < 1e15:
        return str(int(x))
    return repr(float(x)) if math.isfinite(x) else ("inf" if x > 0 else "-inf")


@dataclass(frozen=True)
class GroupSpec:
    """A monitored or reference group of one attribute: a set of values and/or inclusive ranges.

    Attributes
    ----------
    values
        Attribute values in the group (strings, numbers or booleans).
    ranges
        Inclusive numeric ranges ``(lo, hi)``; a value ``x`` is in the group if ``lo <= x <= hi``
        for one of them.

    Examples
    --------
    >>> GroupSpec.parse([18, 25]).label
    '[18, 25]'
    >>> GroupSpec.parse(["Female", "Non-Binary"]).label
    'Female|Non-Binary'
    >>> GroupSpec.parse({"values": [1, 3]}).values
    (1, 3)
    """

    values: tuple[Any, ...] = ()
    ranges: tuple[tuple[float, float], ...] = ()

    @classmethod
    def parse(cls, raw: Any, where: str = "group") -> GroupSpec:
        """Read a group from config syntax.

        Parameters
        ----------
        raw
            A scalar (one value); a list of two numbers (an inclusive range ``[lo, hi]``, as
            OpenScale's numeric features); a list of two-number lists (a union of ranges); a list
            of strings/booleans or of more than two numbers (a value set); or a table
            ``{values = [...]}`` / ``{range = [lo, hi]}`` / ``{ranges = [[lo, hi], ...]}`` to say
            which explicitly (``{values = [1, 3]}`` for two numeric codes).
        where
            Where the group sits in the config, for messages (e.g. ``"monitored.age"``).

        Returns
        -------
        GroupSpec

        Raises
        ------
        PolfairError
            Empty group, ``lo > hi``, a range that is not two numbers, unknown table keys, or
            values of mixed kinds (strings with numbers).
        """
        if isinstance(raw, GroupSpec):
            return raw
        if isinstance(raw, Mapping):
            unknown = set(raw) - {"values", "range", "ranges"}
            if unknown or not raw:
                msg = (
                    f"{where}: a group table takes the keys 'values', 'range' or 'ranges'; got "
                    f"{sorted(map(str, raw))}"
                )
                raise PolfairError(msg)
            vals = raw.get("values", ())
            vals = list(vals) if isinstance(vals, (list, tuple)) else [vals]
            ranges = list(raw.get("ranges", ()))
            if "range" in raw:
                ranges.append(raw["range"])
            return cls._make(vals, ranges, where)
        if isinstance(raw, (list, tuple)):
            items = list(raw)
            if items and all(isinstance(x, (list, tuple)) for x in items):
                return cls._make([], items, where)
            if len(items) == 2 and all(_is_number(x) for x in items):
                return cls._make([], [items], where)
            return cls._make(items, [], where)
        return cls._make([raw], [], where)

    @classmethod
    def _make(cls, vals: list[Any], ranges: list[Any], where: str) -> GroupSpec:
        if not vals and not ranges:
            msg = f"{where}: the group is empty; give values (e.g. ['Female']) or a range (e.g. [18, 25])"
            raise PolfairError(msg)
        for v in vals:
            if not isinstance(v, (str, int, float, bool)) or (isinstance(v, float) and math.isnan(v)):
                msg = f"{where}: group values must be strings, numbers or booleans, got {v!r}"
                raise PolfairError(msg)
        kinds = {"str" if isinstance(v, str) else "bool" if isinstance(v, bool) else "num" for v in vals}
        if len(kinds) > 1:
            msg = f"{where}: values {vals!r} mix strings, numbers and booleans; use the column's type"
            raise PolfairError(msg)
        out = []
        for r in ranges:
            if not (isinstance(r, (list, tuple)) and len(r) == 2 and all(_is_number(x) for x in r)):
                msg = f"{where}: a range must be two numbers [lo, hi], got {r!r}"
                raise PolfairError(msg)
            lo, hi = r
            if math.isnan(lo) or math.isnan(hi) or lo > hi:
                msg = f"{where}: range [{lo}, {hi}] needs lo <= hi"
                raise PolfairError(msg)
            out.append((lo, hi))
        if ranges and kinds - {"num"}:
            msg = f"{where}: numeric ranges cannot be mixed with non-numeric values {vals!r}"
            raise PolfairError(msg)
        return cls(tuple(dict.fromkeys(vals)), tuple(out))

    @property
    def label(self) -> str:
        """The group's name in the report: values and ``[lo, hi]`` ranges joined by ``"|"``."""
        parts = [v if isinstance(v, str) else str(v).lower() if isinstance(v, bool) else _num(v) for v in self.values]
        parts += [f"[{_num(lo)}, {_num(hi)}]" for lo, hi in self.ranges]
        return "|".join(parts)

    def overlaps(self, other: GroupSpec) -> bool:
        """Whether a value could belong to both groups."""
        if set(self.values) & set(other.values):
            return True
        for a, b in ((self, other), (other, self)):
            for v in a.values:
                if _is_number(v) and any(lo <= v <= hi for lo, hi in b.ranges):
                    return True
        return any(lo1 <= hi2 and lo2 <= hi1 for lo1, hi1 in self.ranges for lo2, hi2 in other.ranges)

    def condition(self, col: pl.Expr) -> pl.Expr:
        """Boolean expression: the value in ``col`` belongs to the group."""
        conds = []
        if self.values:
            if isinstance(self.values[0], str):
                conds.append(col.cast(pl.String).is_in(list(self.values)))
            else:
                conds.append(col.is_in(list(self.values)))
        conds += [(col >= lo) & (col <= hi) for lo, hi in self.ranges]
        out = conds[0]
        for c in conds[1:]:
            out = out | c
        return out


def format_threshold(lo: float, hi: float) -> str:
    """The ``threshold`` column's text for an inclusive band, e.g. ``"[0.8, 1.25]"``.

    Examples
    --------
    >>> format_threshold(0.8, 1.25), format_threshold(-0.1, float("inf"))
    ('[0.8, 1.25]', '[-0.1, inf]')
    """
    return f"[{_num(lo)}, {_num(hi)}]"


def parse_thresholds(raw: Mapping[str, Any] | None, where: str = "thresholds") -> dict[str, tuple[float, float]]:
    """Validate thresholds: metric name -> inclusive band ``(lo, hi)``.

    Parameters
    ----------
    raw
        Mapping metric name -> ``[lo, hi]`` (two numbers, ``lo <= hi``; ``inf`` allowed) or a table
        ``{min = lo}`` / ``{max = hi}`` / ``{min = lo, max = hi}`` for one-sided bands.
    where
        Prefix for messages.

    Returns
    -------
    dict of str to (float, float)
        One-sided bands are filled with ``-inf`` / ``inf``.

    Raises
    ------
    PolfairError
        A band that is not two numbers, ``lo > hi``, NaN, or unknown table keys.

    Examples
    --------
    >>> parse_thresholds({"disparate_impact": [0.8, 1.25], "accuracy": {"min": 0.7}})
    {'disparate_impact': (0.8, 1.25), 'accuracy': (0.7, inf)}
    """
    out: dict[str, tuple[float, float]] = {}
    for name, band in dict(raw or {}).items():
        w = f"{where}.{name}"
        if not isinstance(name, str):
            msg = f"{where}: metric names must be strings, got {name!r}"
            raise PolfairError(msg)
        if isinstance(band, Mapping):
            unknown = set(band) - {"min", "max"}
            if unknown or not band:
                msg = f"{w}: a one-sided band is a table with 'min' and/or 'max', got keys {sorted(map(str, band))}"
                raise PolfairError(msg)
            lo, hi = band.get("min", -math.inf), band.get("max", math.inf)
        elif isinstance(band, (list, tuple)) and len(band) == 2:
            lo, hi = band
        else:
            msg = f"{w}: a threshold is [lo, hi] (e.g. [0.8, 1.25]) or {{min = lo, max = hi}}, got {band!r}"
            raise PolfairError(msg)
        if not (_is_number(lo) and _is_number(hi)) or math.isnan(lo) or math.isnan(hi) or lo > hi:
            msg = f"{w}: the band needs two numbers with lo <= hi, got [{lo!r}, {hi!r}]"
            raise PolfairError(msg)
        out[name] = (float(lo), float(hi))
    return out


def _check_size(v: Any, where: str) -> int | None:
    if v is None:
        return None
    if not isinstance(v, int) or isinstance(v, bool) or v < 1:
        msg = f"{where} must be a positive integer (rows), got {v!r}"
        raise PolfairError(msg)
    return v


@dataclass
class FairnessConfig:
    """A fairness monitor's policy: favorable outcomes, groups, thresholds and sample sizes.

    Construct it directly, or with :meth:`from_toml`, :meth:`from_json` or :meth:`from_dict`; every
    field is validated and normalised on construction (clear :class:`~polfair.PolfairError` messages
    naming the key). Pass it as ``fairness_report(data, config=cfg, ...)``.

    Attributes
    ----------
    favorable
        Tuple of label values that are the favorable outcome (e.g. ``(0,)``), or ``None`` to keep
        ``fairness_report``'s ``favorable=``.
    monitored, reference
        Attribute name -> :class:`GroupSpec` (raw config syntax is accepted and parsed, see
        :meth:`GroupSpec.parse`). Every monitored attribute needs a reference and vice versa; the
        two must not overlap. Each attribute becomes a protected key whose groups are the
        monitored label, the reference label, ``"other"`` and ``"null"``.
    thresholds
        Metric name -> inclusive band ``(lo, hi)`` (see :func:`parse_thresholds`).
    min_sample_size
        Positive int or ``None``: rows a group needs before a threshold is judged.
    max_sample_size
        Positive int or ``None``: above it, the report runs on a seeded sample of this many rows.
    seed
        Int seed of that sample (default 0).
    metrics
        Names of built-in groupwise metrics to add (:data:`polfair.compat.yardstick.GROUPWISE`).
    y_true, y_pred, y_score, weight
        Optional column names, used when ``fairness_report`` is not given them.
    by
        Optional tuple of ``by`` column names, likewise.

    Raises
    ------
    PolfairError
        On construction, for any invalid field.

    Examples
    --------
    >>> cfg = FairnessConfig.from_dict({
    ...     "favorable": [0],
    ...     "monitored": {"age": [18, 25]}, "reference": {"age": [26, 100]},
    ...     "thresholds": {"disparate_impact": [0.8, 1.25]},
    ...     "min_sample_size": 100,
    ... })
    >>> cfg.monitored["age"].label, cfg.reference["age"].label, cfg.thresholds
    ('[18, 25]', '[26, 100]', {'disparate_impact': (0.8, 1.25)})
    """

    favorable: tuple[Any, ...] | None = None
    monitored: dict[str, GroupSpec] = field(default_factory=dict)
    reference: dict[str, GroupSpec] = field(default_factory=dict)
    thresholds: dict[str, tuple[float, float]] = field(default_factory=dict)
    min_sample_size: int | None = None
    max_sample_size: int | None = None
    seed: int = 0
    metrics: tuple[str, ...] = ()
    y_true: str | None = None
    y_pred: str | None = None
    y_score: str | None = None
    weight: str | None = None
    by: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.favorable is not None:
            fav = list(self.favorable) if isinstance(self.favorable, (list, tuple, set, frozenset)) else [self.favorable]
            if not fav or not all(isinstance(v, (str, int, float, bool)) for v in fav):
                msg = f"favorable must be a value or a non-empty list of values (e.g. [0]), got {self.favorable!r}"
                raise PolfairError(msg)
            self.favorable = tuple(fav)
        for name in ("monitored", "reference"):
            raw = getattr(self, name)
            if not isinstance(raw, Mapping):
                msg = f"{name} must be a table attribute -> group (e.g. {{age = [18, 25]}}), got {raw!r}"
                raise PolfairError(msg)
            setattr(self, name, {str(a): GroupSpec.parse(g, f"{name}.{a}") for a, g in raw.items()})
        only_m = sorted(set(self.monitored) - set(self.reference))
        only_r = sorted(set(self.reference) - set(self.monitored))
        if only_m or only_r:
            which = only_m or only_r
            side, other = ("monitored", "reference") if only_m else ("reference", "monitored")
            msg = f"{side} names {which} but {other} does not: give both groups for each attribute"
            raise PolfairError(msg)
        for a in self.monitored:
            if self.monitored[a].overlaps(self.reference[a]):
                msg = (
                    f"monitored.{a} ({self.monitored[a].label}) and reference.{a} "
                    f"({self.reference[a].label}) overlap: a row must belong to one group only"
                )
                raise PolfairError(msg)
        if not isinstance(self.thresholds, Mapping):
            msg = f"thresholds must be a table metric -> [lo, hi], got {self.thresholds!r}"
            raise PolfairError(msg)
        self.thresholds = parse_thresholds(self.thresholds)
        self.min_sample_size = _check_size(self.min_sample_size, "min_sample_size")
        self.max_sample_size = _check_size(self.max_sample_size, "max_sample_size")
        if self.min_sample_size and self.max_sample_size and self.max_sample_size < self.min_sample_size:
            msg = (
                f"max_sample_size ({self.max_sample_size}) is below min_sample_size ({self.min_sample_size}): "
                "every group would be insufficient_data"
            )
            raise PolfairError(msg)
        if not isinstance(self.seed, int) or isinstance(self.seed, bool):
            msg = f"seed must be an integer, got {self.seed!r}"
            raise PolfairError(msg)
        mets = [self.metrics] if isinstance(self.metrics, str) else list(self.metrics)
        groupwise.resolve(mets)  # validates names
        self.metrics = tuple(mets)
        for name in ("y_true", "y_pred", "y_score", "weight"):
            v = getattr(self, name)
            if v is not None and not isinstance(v, str):
                msg = f"{name} must be a column name (string), got {v!r}"
                raise PolfairError(msg)
        by = [self.by] if isinstance(self.by, str) else list(self.by)
        if not all(isinstance(b, str) for b in by):
            msg = f"by must be a column name or a list of them, got {self.by!r}"
            raise PolfairError(msg)
        self.by = tuple(by)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str = "config") -> FairnessConfig:
        """Build from a mapping (parsed TOML/JSON); unknown keys are errors.

        Parameters
        ----------
        data
            Mapping with the keys ``favorable``, ``monitored``, ``reference``, ``thresholds``,
            ``min_sample_size``, ``max_sample_size``, ``seed``, ``metrics``, ``y_true``, ``y_pred``,
            ``y_score``, ``weight``, ``by`` (all optional).
        source
            Name used in error messages (e.g. the file path).

        Returns
        -------
        FairnessConfig

        Raises
        ------
        PolfairError
            Unknown keys (with close names) or invalid values; the message starts with ``source``.

        Examples
        --------
        >>> FairnessConfig.from_dict({"favorable": 1, "min_sample_size": 30}).min_sample_size
        30
        """
        if not isinstance(data, Mapping):
            msg = f"{source}: the config must be a table/object, got {type(data).__name__}"
            raise PolfairError(msg)
        unknown = [k for k in data if k not in _KEYS]
        if unknown:
            hints = []
            for k in unknown:
                close = difflib.get_close_matches(str(k), _KEYS, n=1, cutoff=0.6)
                hints.append(f"{k!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
            msg = f"{source}: unknown key(s) {', '.join(hints)}; known keys: {', '.join(_KEYS)}"
            raise PolfairError(msg)
        try:
            return cls(**dict(data))
        except PolfairError as exc:
            raise PolfairError(f"{source}: {exc}") from None

    @classmethod
    def from_toml(cls, path: str | Path) -> FairnessConfig:
        """Load from a TOML file (stdlib ``tomllib``; Python < 3.11 needs the ``tomli`` package).

        Parameters
        ----------
        path
            Path to the file (see ``examples/fairness.toml``).

        Returns
        -------
        FairnessConfig

        Raises
        ------
        PolfairError
            Invalid TOML (with the parser's line/column) or invalid config.
        FileNotFoundError
            The file does not exist.

        Examples
        --------
        >>> import tempfile, os
        >>> p = os.path.join(tempfile.mkdtemp(), "f.toml")
        >>> _ = open(p, "w").write('favorable = [0]\\n[monitored]\\nage = [18, 25]\\n[reference]\\nage = [26, 100]\\n')
        >>> FairnessConfig.from_toml(p).reference["age"].ranges
        ((26, 100),)
        """
        try:
            import tomllib
        except ModuleNotFoundError:  # pragma: no cover - Python 3.10
            try:
                import tomli as tomllib  # type: ignore[no-redef]
            except ModuleNotFoundError as exc:
                msg = "reading TOML on Python < 3.11 needs tomli: pip install tomli (or use from_json)"
                raise ImportError(msg) from exc
        text = Path(path).read_bytes()
        try:
            data = tomllib.loads(text.decode("utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise PolfairError(f"{path}: invalid TOML: {exc}") from None
        return cls.from_dict(data, source=str(path))

    @classmethod
    def from_json(cls, path_or_text: str | Path) -> FairnessConfig:
        """Load from a JSON file, or from a JSON string (one that starts with ``{``).

        Parameters
        ----------
        path_or_text
            Path to a ``.json`` file, or the JSON text itself. JSON has no ``inf``: write one-sided
            thresholds as ``{"min": 0.8}``.

        Returns
        -------
        FairnessConfig

        Raises
        ------
        PolfairError
            Invalid JSON (with line/column) or invalid config.

        Examples
        --------
        >>> FairnessConfig.from_json('{"favorable": [1], "thresholds": {"disparate_impact": [0.8, 1.25]}}').favorable
        (1,)
        """
        s = str(path_or_text)
        is_text = s.lstrip().startswith("{")
        text = s if is_text else Path(s).read_text(encoding="utf-8")
        source = "config" if is_text else s
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise PolfairError(f"{source}: invalid JSON: {exc}") from None
        return cls.from_dict(data, source=source)

    def protected_exprs(self) -> list[pl.Expr]:
        """One protected-key expression per attribute: monitored / reference label, ``"other"``, null.

        Returns
        -------
        list of pl.Expr
            String expressions aliased to the attribute names.

        Examples
        --------
        >>> cfg = FairnessConfig(monitored={"age": [18, 25]}, reference={"age": [26, 100]})
        >>> pl.DataFrame({"age": [20, 30, 10, None]}).select(cfg.protected_exprs())["age"].to_list()
        ['[18, 25]', '[26, 100]', 'other', None]
        """
        out = []
        for a, m in self.monitored.items():
            r, col = self.reference[a], pl.col(a)
            e = (
                pl.when(col.is_null()).then(pl.lit(None, pl.String))
                .when(m.condition(col)).then(pl.lit(m.label))
                .when(r.condition(col)).then(pl.lit(r.label))
                .otherwise(pl.lit(OTHER))
            )  # fmt: skip
            out.append(e.alias(a))
        return out


# ---------------------------------------------------------------------------------------------
# thresholds on a report


def _by_columns(report: pl.DataFrame) -> list[str]:
    return [c for c in report.columns if c not in (*_REPORT_COLUMNS, "threshold", "status")]


def apply_thresholds(
    report: pl.DataFrame,
    thresholds: Mapping[str, Any],
    min_sample_size: int | None = None,
    *,
    groups: Mapping[str, Sequence[str]] | None = None,
) -> pl.DataFrame:
    """Judge a fairness report against thresholds: add ``threshold`` and ``status`` columns.

    Parameters
    ----------
    report
        A report of :func:`polfair.fairness_report` (any ``by`` columns are kept).
    thresholds
        Metric name -> inclusive band ``[lo, hi]`` or ``{min=, max=}`` (see
        :func:`parse_thresholds`). Names must be metrics present in the report.
    min_sample_size
        Optional positive int. A checked row whose group has fewer than this many input rows
        (``n``), or whose reference group does (comparisons), or, for an attribute-level row, whose
        smallest group does, gets ``"insufficient_data"``.
    groups
        Optional mapping attribute-set name -> group labels to judge; group rows of those
        attribute sets with other labels get no status (``fairness_report(config=...)`` passes the
        monitored group of each config attribute). Attribute sets not in the mapping are judged
        for all groups.

    Returns
    -------
    pl.DataFrame
        The report plus ``threshold`` (String, e.g. ``"[0.8, 1.25]"``) and ``status`` (String:
        ``"ok"`` if ``lo <= value <= hi``, ``"violation"`` otherwise, ``"insufficient_data"`` as
        above or when ``value`` is null; null where no threshold applies). Which rows are checked:
        every row of a threshold's metric, except the attribute-level rows of per-group metrics
        (:data:`polfair.core.metrics.METRICS`, whose ``value`` is null by design).

    Raises
    ------
    PolfairError
        A threshold names a metric that is not in the report (with close names), an invalid band
        or ``min_sample_size``, or a report without the report columns.

    Notes
    -----
    The band is inclusive on both ends, as OpenScale's and Aequitas' ``tau`` band
    (``0.8 <= disparate_impact <= 1.25``). A comparison with a pooled reference (several
    privileged values) or with ``reference="overall"`` checks only the group's own size.

    Examples
    --------
    >>> import polars as pl
    >>> import polfair as pf
    >>> df = pl.DataFrame({"y": [1, 0, 1, 0, 1, 1], "p": [1, 1, 1, 0, 0, 0],
    ...                    "g": ["a", "a", "a", "b", "b", "b"]})
    >>> rep = pf.fairness_report(df, y_true="y", y_pred="p", protected="g", privileged={"g": "a"})
    >>> out = apply_thresholds(rep, {"disparate_impact": [0.8, 1.25]}, min_sample_size=2)
    >>> out.filter(pl.col("status").is_not_null()).select("group", "value", "threshold", "status")
    shape: (2, 4)
    ┌───────┬───────┬─────────────┬───────────┐
    │ group ┆ value ┆ threshold   ┆ status    │
    │ ---   ┆ ---   ┆ ---         ┆ ---       │
    │ str   ┆ f64   ┆ str         ┆ str       │
    ╞═══════╪═══════╪═════════════╪═══════════╡
    │ a     ┆ 1.0   ┆ [0.8, 1.25] ┆ ok        │
    │ b     ┆ 0.0   ┆ [0.8, 1.25] ┆ violation │
    └───────┴───────┴─────────────┴───────────┘
    """
    missing = [c for c in _REPORT_COLUMNS if c not in report.columns]
    if missing:
        msg = f"apply_thresholds needs a fairness report (columns {list(_REPORT_COLUMNS)}); missing {missing}"
        raise PolfairError(msg)
    bands = parse_thresholds(thresholds)
    min_n = _check_size(min_sample_size, "min_sample_size")
    present = report["metric"].unique().drop_nulls().to_list()
    for name in bands:
        if name not in present:
            close = difflib.get_close_matches(name, present, n=3, cutoff=0.6)
            hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
            msg = (
                f"thresholds: {name!r} is not a metric of this report.{hint} Threshold a metric the "
                "report has (labels-only audits have no prediction metrics)"
            )
            raise PolfairError(msg)
    report = report.drop("threshold", "status", strict=False)
    by = _by_columns(report)
    table = pl.DataFrame(
        {
            "metric": list(bands),
            "__pf_lo": [b[0] for b in bands.values()],
            "__pf_hi": [b[1] for b in bands.values()],
            "threshold": [format_threshold(*b) for b in bands.values()],
        },
        schema={"metric": pl.String, "__pf_lo": pl.Float64, "__pf_hi": pl.Float64, "threshold": pl.String},
    )
    is_group = pl.col("group").is_not_null() & pl.col("attribute").is_not_null()
    is_attr = pl.col("group").is_null() & pl.col("attribute").is_not_null()
    keys = [*by, "attribute"]
    sizes = (
        report.filter(is_group).group_by([*keys, "group"]).agg(pl.col("n").first().alias("__pf_ref_n"))
    )
    smallest = report.filter(is_group).group_by(keys).agg(pl.col("n").min().alias("__pf_min_n"))
    out = report.with_row_index("__pf_row")
    out = out.join(table, on="metric", how="left", maintain_order="left")
    out = out.join(
        sizes.rename({"group": "reference_group"}), on=[*keys, "reference_group"], how="left",
        nulls_equal=True, maintain_order="left",
    )  # fmt: skip
    out = out.join(smallest, on=keys, how="left", nulls_equal=True, maintain_order="left")

    per_group_metric = pl.col("metric").is_in([*METRICS, "n_missing"])
    eligible = pl.col("__pf_lo").is_not_null() & ~(is_attr & per_group_metric)
    if groups:
        judged = pl.lit(False)
        named = pl.lit(False)
        for attr, labels in groups.items():
            labels = [labels] if isinstance(labels, str) else list(labels)
            here = pl.col("attribute") == attr
            named = named | here
            judged = judged | (here & pl.col("group").is_in(labels))
        eligible = eligible & (~is_group | ~named.fill_null(False) | judged.fill_null(False))
    if min_n is None:
        small = pl.lit(False)
    else:
        own = pl.when(is_attr).then(pl.col("__pf_min_n")).otherwise(pl.col("n"))
        small = (own < min_n).fill_null(False) | (is_group & (pl.col("__pf_ref_n") < min_n).fill_null(False))
    value = pl.col("value")
    undefined = value.is_null() | value.is_nan()
    inside = (value >= pl.col("__pf_lo")) & (value <= pl.col("__pf_hi"))
    status = (
        pl.when(~eligible).then(pl.lit(None, pl.String))
        .when(small | undefined).then(pl.lit("insufficient_data"))
        .when(inside).then(pl.lit("ok"))
        .otherwise(pl.lit("violation"))
    )  # fmt: skip
    out = out.sort("__pf_row").with_columns(
        pl.when(eligible).then(pl.col("threshold")).alias("threshold"), status.alias("status")
    )
    return out.select(*report.columns, "threshold", "status")


def alerts(report: pl.DataFrame) -> pl.DataFrame:
    """The violations of a judged report (rows with ``status == "violation"``).

    Parameters
    ----------
    report
        A report with a ``status`` column (``fairness_report(..., thresholds=...)``,
        ``fairness_report(..., config=...)`` or :func:`apply_thresholds`).

    Returns
    -------
    pl.DataFrame
        Those rows, all columns kept, in report order; empty (same schema) when all is well.

    Raises
    ------
    PolfairError
        The report has no ``status`` column (no thresholds were applied).

    Examples
    --------
    >>> import polars as pl
    >>> import polfair as pf
    >>> df = pl.DataFrame({"y": [1, 0, 1, 0], "p": [1, 1, 0, 0], "g": ["a", "a", "b", "b"]})
    >>> rep = pf.fairness_report(df, y_true="y", y_pred="p", protected="g",
    ...                          thresholds={"statistical_parity_difference": [-0.1, 0.1]})
    >>> alerts(rep).select("group", "metric", "value", "reference_group").rows()
    [('b', 'statistical_parity_difference', -1.0, 'a')]
    """
    if "status" not in report.columns:
        msg = (
            "alerts() needs a report with a status column: pass thresholds= or config= to "
            "fairness_report, or call apply_thresholds(report, thresholds)"
        )
        raise PolfairError(msg)
    return report.filter(pl.col("status") == "violation")


def sample_rows(data: Any, max_sample_size: int, seed: int = 0) -> pl.LazyFrame:
    """A seeded, reproducible uniform sample of at most ``max_sample_size`` rows (lazy).

    Parameters
    ----------
    data
        Any input of :func:`polfair.core.spec.to_lazyframe` (frame, pandas, arrow, path).
    max_sample_size
        Positive int. Inputs with at most this many rows are returned whole.
    seed
        Int seed of ``numpy.random.default_rng``.

    Returns
    -------
    pl.LazyFrame
        The input's columns; the rows at positions
        ``sort(default_rng(seed).choice(n_rows, max_sample_size, replace=False))`` in input order.

    Raises
    ------
    PolfairError
        ``max_sample_size`` is not a positive integer.

    Notes
    -----
    Counting the rows is a separate, cheap query (file metadata for parquet, a scan for CSV); the
    sample itself is a filter on the row position inside the report's one pass. The sample depends
    on the input's row order: re-ordered data gives a different (equally uniform) sample.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"x": list(range(10))})
    >>> sample_rows(df, 3, seed=1).collect()["x"].to_list() == sample_rows(df, 3, seed=1).collect()["x"].to_list()
    True
    >>> sample_rows(df, 3).collect().height
    3
    """
    size = _check_size(max_sample_size, "max_sample_size")
    assert size is not None
    lf = to_lazyframe(data)
    n = int(lf.select(pl.len()).collect().item())
    if n <= size:
        return lf
    idx = np.sort(np.random.default_rng(seed).choice(n, size=size, replace=False))
    row = "__pf_sample_row"
    return (
        lf.with_row_index(row)
        .filter(pl.col(row).cast(pl.Int64).is_in(pl.Series(idx, dtype=pl.Int64).implode()))
        .drop(row)
    )


# ---------------------------------------------------------------------------------------------
# fairness_report integration


@dataclass
class ReportPlan:
    """What ``fairness_report`` runs once the monitoring options are resolved (internal)."""

    data: Any
    y_true: Any
    y_pred: Any
    y_score: Any
    weight: Any
    by: Any
    protected: Any
    favorable: Any
    privileged: Mapping[str, Any] | None
    intersections: Any
    metrics: list[groupwise.GroupwiseMetric]
    thresholds: dict[str, tuple[float, float]] | None
    min_sample_size: int | None
    groups: dict[str, list[str]] | None

    def finish(self, report: pl.DataFrame) -> pl.DataFrame:
        """Add the groupwise rows and, when thresholds are set, ``threshold``/``status``."""
        report = groupwise.add_groupwise_rows(report, self.metrics)
        if self.thresholds is not None:
            report = apply_thresholds(report, self.thresholds, self.min_sample_size, groups=self.groups)
        return report


def _pick(name: str, given: Any, configured: Any) -> Any:
    if given is None:
        return configured
    if configured is not None and isinstance(given, str) and given != configured:
        msg = f"{name}={given!r} conflicts with the config's {name}={configured!r}; give it once"
        raise PolfairError(msg)
    return given


def plan_report(
    data: Any,
    *,
    config: FairnessConfig | str | Path | Mapping[str, Any] | None,
    y_true: Any,
    y_pred: Any,
    y_score: Any,
    weight: Any,
    by: Any,
    protected: Any,
    favorable: Any,
    privileged: Mapping[str, Any] | None,
    intersections: Any,
    thresholds: Mapping[str, Any] | None,
    min_sample_size: int | None,
    max_sample_size: int | None,
    metrics: Any,
) -> ReportPlan:
    """Resolve ``fairness_report``'s monitoring keywords and config into plain report arguments.

    ``config`` may be a :class:`FairnessConfig`, a mapping, or a path to a ``.toml``/``.json``
    file. Explicit keywords win over the config where both can be told apart (``thresholds`` are
    merged, keywords first); contradictory column names or ``favorable`` values are errors.
    With a config, ``intersections`` defaults to 1 (OpenScale monitors each attribute alone).

    Raises
    ------
    PolfairError
        Conflicts between keywords and config, a config attribute missing from the data, a range
        on a non-numeric column, or a missing ``y_true``/``protected``.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": [1, 0], "age": [20, 40]})
    >>> plan = plan_report(df, config={"monitored": {"age": [18, 25]}, "reference": {"age": [26, 99]}},
    ...     y_true="y", y_pred=None, y_score=None, weight=None, by=None, protected=None, favorable=1,
    ...     privileged=None, intersections=None, thresholds=None, min_sample_size=None,
    ...     max_sample_size=None, metrics=None)
    >>> plan.privileged, plan.intersections
    ({'age': '[26, 99]'}, 1)
    """
    cfg: FairnessConfig | None
    if config is None or isinstance(config, FairnessConfig):
        cfg = config
    elif isinstance(config, Mapping):
        cfg = FairnessConfig.from_dict(config)
    elif isinstance(config, (str, Path)):
        cfg = FairnessConfig.from_json(config) if str(config).lower().endswith(".json") else FairnessConfig.from_toml(config)
    else:
        msg = f"config must be a FairnessConfig, a mapping or a .toml/.json path, got {type(config).__name__}"
        raise PolfairError(msg)
    if thresholds is not None:
        thresholds = parse_thresholds(thresholds)
    min_sample_size = _check_size(min_sample_size, "min_sample_size")
    max_sample_size = _check_size(max_sample_size, "max_sample_size")
    gms = groupwise.resolve(metrics)
    seed = 0
    groups: dict[str, list[str]] | None = None
    protected_list = [] if protected is None else [protected] if isinstance(protected, (str, pl.Expr)) else list(protected)
    privileged = dict(privileged or {})
    if cfg is not None:
        y_true = _pick("y_true", y_true, cfg.y_true)
        y_pred = _pick("y_pred", y_pred, cfg.y_pred)
        y_score = _pick("y_score", y_score, cfg.y_score)
        weight = _pick("weight", weight, cfg.weight)
        if by is None and cfg.by:
            by = list(cfg.by)
        if cfg.favorable is not None:
            mine = tuple(favorable) if isinstance(favorable, (list, tuple, set)) else (favorable,)
            if mine != (1,) and mine != cfg.favorable:
                msg = f"favorable={favorable!r} conflicts with the config's favorable={list(cfg.favorable)!r}"
                raise PolfairError(msg)
            favorable = list(cfg.favorable)
        if cfg.thresholds:
            thresholds = {**cfg.thresholds, **(thresholds or {})}
        min_sample_size = min_sample_size if min_sample_size is not None else cfg.min_sample_size
        max_sample_size = max_sample_size if max_sample_size is not None else cfg.max_sample_size
        seed = cfg.seed
        names = {m.name for m in gms}
        gms += [m for m in groupwise.resolve(list(cfg.metrics)) if m.name not in names]
        if cfg.monitored:
            lf = to_lazyframe(data)
            schema = lf.collect_schema()
            for a in cfg.monitored:
                _check_attribute(a, schema, cfg)
                if a in privileged:
                    msg = f"privileged names {a!r}, which the config's reference group already defines; give it once"
                    raise PolfairError(msg)
                privileged[a] = cfg.reference[a].label
            data = lf
            protected_list = [p for p in protected_list if not (isinstance(p, str) and p in cfg.monitored)]
            protected_list += cfg.protected_exprs()
            groups = {a: [cfg.monitored[a].label] for a in cfg.monitored}
            if intersections is None:
                intersections = 1
    if y_true is None:
        msg = "y_true is required: name the label column (y_true='label'), or set y_true in the config"
        raise PolfairError(msg)
    if not protected_list:
        msg = (
            "protected is required: protected= must name at least one column or expression, e.g. "
            "protected=['sex'] (with a config, its monitored/reference groups can supply them)"
        )
        raise PolfairError(msg)
    if max_sample_size is not None:
        data = sample_rows(data, max_sample_size, seed)
    if thresholds is None and min_sample_size is not None:
        thresholds = {}
    return ReportPlan(
        data=data, y_true=y_true, y_pred=y_pred, y_score=y_score, weight=weight, by=by,
        protected=protected_list, favorable=favorable, privileged=privileged or None,
        intersections=intersections, metrics=gms, thresholds=thresholds,
        min_sample_size=min_sample_size, groups=groups,
    )  # fmt: skip


def _check_attribute(a: str, schema: pl.Schema, cfg: FairnessConfig) -> None:
    check_columns(pl.col(a), "config: monitored/reference attribute", list(schema.names()))
    dtype = schema[a]
    for side, g in (("monitored", cfg.monitored[a]), ("reference", cfg.reference[a])):
        numeric_needed = bool(g.ranges) or any(_is_number(v) for v in g.values)
        if numeric_needed and not dtype.is_numeric():
            msg = (
                f"config: {side}.{a} = {g.label} is numeric, but column {a!r} has dtype {dtype}; "
                "give its values as strings (e.g. ['Female']) or cast the column"
            )
            raise PolfairError(msg)
        if any(isinstance(v, str) for v in g.values) and dtype.is_numeric():
            msg = (
                f"config: {side}.{a} = {g.label} lists strings, but column {a!r} is numeric ({dtype}); "
                "give numbers or a range such as [18, 25]"
            )
            raise PolfairError(msg)
