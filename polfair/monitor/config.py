"""The monitor's policy: :class:`FairnessConfig` (TOML/JSON), :class:`GroupSpec`, :func:`parse_thresholds`.

A config says which outcome is favorable, which groups of each attribute are monitored and which are
the reference (value sets or inclusive numeric ranges), the thresholds per metric and the sample
sizes. Every field is validated on construction; ``polfair.fairness_report(config=...)`` reads it
through :func:`polfair.monitor.plan.plan_report`.
"""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from polfair.compat import yardstick as groupwise
from polfair.core.options import unknown_names_message
from polfair.core.reference import check_min_sample_size
from polfair.core.report.selection import select_metrics
from polfair.core.report.status import FOUR_FIFTHS, THRESHOLD_PRESETS
from polfair.exceptions import PolfairError
from polfair.monitor._values import check_size, format_number, is_number

__all__ = [
    "FOUR_FIFTHS", "OTHER", "STATISTICS_KEYS", "THRESHOLD_PRESETS", "FairnessConfig", "GroupSpec", "check_statistics",
    "parse_thresholds", "preset_thresholds",
]  # fmt: skip

#: Group label of rows in neither the monitored nor the reference group of a config attribute. In
#: parentheses, as no attribute value is spelled (before version 4 of the report schema: ``"other"``,
#: which read like a real value ``other`` of the column); a monitored or reference label spelled
#: the same gets more parentheses (:meth:`FairnessConfig.group_labels`).
OTHER = "(neither group)"

_KEYS = (
    "favorable", "score_label", "monitored", "reference", "thresholds", "min_sample_size", "max_sample_size",
    "seed", "metrics", "user_metrics", "y_true", "y_pred", "y_score", "threshold", "weight", "by", "statistics", "band",
    "protected_proba", "proba_assignment", "proba_tolerance",
)  # fmt: skip

#: Keys of the ``[statistics]`` table: ``fairness_report`` keywords (explicit keywords win).
STATISTICS_KEYS = (
    "ci", "n_boot", "seed", "cluster", "n_buckets", "p_adjust", "significance", "min_group_size", "exact_sums",
)  # fmt: skip


def check_statistics(raw: Any, where: str = "statistics") -> dict[str, Any]:
    """Validate a ``[statistics]`` table: interval, test and disclosure options of the report.

    Parameters
    ----------
    raw
        Mapping with any of the keys ``ci`` (confidence level in (0, 1), or ``false`` for no
        intervals), ``n_boot`` (int >= 2), ``seed`` (int), ``cluster`` (column name), ``n_buckets``
        (int in 2..255), ``p_adjust`` (``"bh"``, ``"by"``, ``"holm"`` or ``"none"``),
        ``significance`` (float in (0, 1)), ``min_group_size`` (positive int) and ``exact_sums``
        (boolean: exact fixed-point weighted sums, ``docs/contract.md``); each is the
        :func:`polfair.fairness_report` keyword of that name. ``None`` gives ``{}``.
    where
        Where the table sits, for messages.

    Returns
    -------
    dict
        The options with normalised values (``ci = false`` -> ``None``, ``p_adjust = "none"`` ->
        ``None``).

    Raises
    ------
    PolfairError
        Unknown keys (with close names) or invalid values.

    Examples
    --------
    >>> check_statistics({"ci": 0.9, "p_adjust": "none", "min_group_size": 10})
    {'ci': 0.9, 'p_adjust': None, 'min_group_size': 10}
    """
    from polfair.core.intervals import check_ci, check_n_boot, check_p_adjust

    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        msg = f"{where} must be a table such as {{ci = 0.95, min_group_size = 10}}, got {raw!r}"
        raise PolfairError(msg)
    out: dict[str, Any] = {}
    for k, v in raw.items():
        if k not in STATISTICS_KEYS:
            msg = f"{where}: unknown key {unknown_names_message([k], STATISTICS_KEYS)}; known keys: {', '.join(STATISTICS_KEYS)}"
            raise PolfairError(msg)
        try:
            if k == "ci":
                v = None if v is False else check_ci(v)
            elif k == "n_boot":
                v = check_n_boot(v)
            elif k == "p_adjust":
                v = check_p_adjust(None if v in ("none", False) else v)
            elif k == "min_group_size":
                v = check_size(v, "min_group_size")
            elif k == "seed" and (isinstance(v, bool) or not isinstance(v, int)):
                raise PolfairError(f"seed must be an integer, got {v!r}")
            elif k == "exact_sums" and not isinstance(v, bool):
                raise PolfairError(f"exact_sums must be true or false, got {v!r}")
            elif k == "cluster" and not isinstance(v, str):
                raise PolfairError(f"cluster must be a column name (string), got {v!r}")
            elif k == "n_buckets" and (isinstance(v, bool) or not isinstance(v, int) or not 2 <= v <= 255):
                raise PolfairError(f"n_buckets must be an integer in 2..255, got {v!r}")
            elif k == "significance" and (
                isinstance(v, bool) or not isinstance(v, (int, float)) or not 0.0 < float(v) < 1.0
            ):
                raise PolfairError(f"significance must be a level in (0, 1) such as 0.05, got {v!r}")
        except PolfairError as exc:
            raise PolfairError(f"{where}.{k}: {exc}") from None
        out[k] = v
    return out


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
            if len(items) == 2 and all(is_number(x) for x in items):
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
            if not (isinstance(r, (list, tuple)) and len(r) == 2 and all(is_number(x) for x in r)):
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
        parts = [
            v if isinstance(v, str) else str(v).lower() if isinstance(v, bool) else format_number(v)
            for v in self.values
        ]
        parts += [f"[{format_number(lo)}, {format_number(hi)}]" for lo, hi in self.ranges]
        return "|".join(parts)

    def overlaps(self, other: GroupSpec) -> bool:
        """Whether a value could belong to both groups."""
        if set(self.values) & set(other.values):
            return True
        for a, b in ((self, other), (other, self)):
            for v in a.values:
                if is_number(v) and any(lo <= v <= hi for lo, hi in b.ranges):
                    return True
        return any(lo1 <= hi2 and lo2 <= hi1 for lo1, hi1 in self.ranges for lo2, hi2 in other.ranges)

    def parts(self, col: pl.Expr) -> list[tuple[Any, pl.Expr]]:
        """Each value and each range of the group with its Boolean condition on ``col``: the value
        (``"[lo, hi]"`` text for a range) and the expression.

        Examples
        --------
        >>> [p for p, _ in GroupSpec.parse({"values": [1, 3], "range": [18, 25]}).parts(pl.col("age"))]
        [1, 3, '[18, 25]']
        """
        out: list[tuple[Any, pl.Expr]] = []
        for v in self.values:
            if isinstance(v, str):
                out.append((v, col.cast(pl.String) == v))
            elif isinstance(v, bool):
                out.append((v, col == v))
            else:  # numbers compare as numbers: 1 matches 1.0 in a Float column and 1.0 matches 1
                out.append((v, col.cast(pl.Float64) == float(v)))
        out += [(f"[{format_number(lo)}, {format_number(hi)}]", (col >= lo) & (col <= hi)) for lo, hi in self.ranges]
        return out

    def condition(self, col: pl.Expr) -> pl.Expr:
        """Boolean expression: the value in ``col`` belongs to the group."""
        conds = [c for _, c in self.parts(col)]
        out = conds[0]
        for c in conds[1:]:
            out = out | c
        return out



def preset_thresholds(name: str, *, has_predictions: bool, where: str = "thresholds") -> dict[str, tuple[float, float]]:
    """The bands of a named threshold policy (:data:`THRESHOLD_PRESETS`).

    ``"four_fifths"``: the four-fifths band [0.8, 1.25] on the headline ratios, ``disparate_impact``
    and, with predictions, ``false_positive_rate_ratio`` and ``false_negative_rate_ratio`` (the
    verdict polfair's outputs showed by default before ``docs/status.md``'s one story).

    Parameters
    ----------
    name
        The policy's name.
    has_predictions
        Whether the report has predictions (a labels-only audit has no FPR/FNR ratios).
    where
        Prefix for messages.

    Returns
    -------
    dict of str to (float, float)

    Raises
    ------
    PolfairError
        An unknown name (the message lists the names).

    Examples
    --------
    >>> preset_thresholds("four_fifths", has_predictions=False)
    {'disparate_impact': (0.8, 1.25)}
    """
    if name not in THRESHOLD_PRESETS:
        close = difflib.get_close_matches(str(name), list(THRESHOLD_PRESETS), n=1, cutoff=0.5)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        msg = (f"{where}={name!r} is not a named policy{hint}: give one of {sorted(THRESHOLD_PRESETS)} or a mapping "
               "metric -> [lo, hi]")  # fmt: skip
        raise PolfairError(msg)
    band, with_predictions, labels_only = THRESHOLD_PRESETS[name]
    return {m: band for m in (with_predictions if has_predictions else labels_only)}


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
        if not (is_number(lo) and is_number(hi)) or math.isnan(lo) or math.isnan(hi) or lo > hi:
            msg = f"{w}: the band needs two numbers with lo <= hi, got [{lo!r}, {hi!r}]"
            raise PolfairError(msg)
        out[name] = (float(lo), float(hi))
    return out



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
    score_label
        The label value ``y_score`` is the probability of, and a Boolean ``y_pred``'s True stands
        for (``fairness_report``'s ``score_label``; the polarity rule of ``docs/contract.md``), or
        ``None``.
    monitored, reference
        Attribute name -> :class:`GroupSpec` (raw config syntax is accepted and parsed, see
        :meth:`GroupSpec.parse`). Every monitored attribute needs a reference and vice versa; the
        two must not overlap. Each attribute becomes a protected key whose groups are the
        monitored label, the reference label, ``"(neither group)"`` (:data:`OTHER`) and ``"null"``.
    thresholds
        Metric name -> inclusive band ``(lo, hi)`` (see :func:`parse_thresholds`), or a policy name
        (:data:`THRESHOLD_PRESETS`: ``"four_fifths"``), resolved per report (:func:`preset_thresholds`).
    min_sample_size
        Int >= 0 or ``None``: rows a group needs before a threshold is judged and to be a
        comparison group (``None``: the default, 30 rows; ``0``: no minimum;
        :mod:`polfair.core.reference`).
    max_sample_size
        Positive int or ``None``: above it, the report runs on a seeded sample of this many rows.
    seed
        Int seed of that sample (default 0).
    metrics
        Names of the report's metrics to compute (``fairness_report``'s ``metrics=``, the CLI's
        ``--metrics``; :data:`polfair.core.report.selection.SELECTABLE`); empty: every metric. Names
        of groupwise metrics here are the old form (``DeprecationWarning``), moved to ``user_metrics``.
    user_metrics
        Names of built-in groupwise metrics to add (:data:`polfair.compat.yardstick.GROUPWISE`).
    y_true, y_pred, y_score, weight
        Optional column names or SQL expressions (as the command line's flags:
        ``y_pred = "decile_score >= 5"``), used when ``fairness_report`` is not given them.
    threshold
        Optional number in [0, 1]: the decision threshold for ``y_score`` (ŷ = score >= threshold),
        used when ``fairness_report`` (or ``polfair report --threshold``) is not given one; else 0.5.
    by
        Optional tuple of ``by`` column names (or SQL expressions), likewise.
    protected_proba, proba_assignment, proba_tolerance
        Optional attribute estimated from membership probabilities, as ``fairness_report``'s keywords
        (``{attribute: {group: probability column}}``, column names; ``"weighted"``/``"argmax"``; the
        tolerance of the rows' sums), used when ``fairness_report`` is not given them.
    band
        ``"both"`` (default: judge both sides of every threshold band) or ``"harm"`` (only the
        side that disadvantages the group; :func:`polfair.core.report.status.sided_band`).
    statistics
        Interval, test and disclosure options (the ``[statistics]`` table; see
        :func:`check_statistics`): ``ci``, ``n_boot``, ``seed``, ``cluster``, ``n_buckets``,
        ``p_adjust``, ``significance``, ``min_group_size``. ``fairness_report`` keywords given
        explicitly (different from their defaults) win.

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
    score_label: Any = None
    monitored: dict[str, GroupSpec] = field(default_factory=dict)
    reference: dict[str, GroupSpec] = field(default_factory=dict)
    thresholds: dict[str, tuple[float, float]] | str = field(default_factory=dict)
    min_sample_size: int | None = None
    max_sample_size: int | None = None
    seed: int = 0
    metrics: tuple[str, ...] = ()
    user_metrics: tuple[str, ...] = ()
    y_true: str | None = None
    y_pred: str | None = None
    y_score: str | None = None
    weight: str | None = None
    by: tuple[str, ...] = ()
    statistics: dict[str, Any] = field(default_factory=dict)
    band: str = "both"
    # not in the repr: config hashes of configs given as objects stay those of the versions before the key
    # (the threshold in effect is hashed as the report's own ``threshold`` option)
    threshold: float | None = field(default=None, repr=False)
    # not in the repr either (config hashes of the configs before these keys stay theirs)
    protected_proba: dict[str, dict[str, str | None]] | None = field(default=None, repr=False)
    proba_assignment: str | None = field(default=None, repr=False)
    proba_tolerance: float | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.favorable is not None:
            given = self.favorable
            fav = list(given) if isinstance(given, (list, tuple, set, frozenset)) else [given]
            if not fav or not all(isinstance(v, (str, int, float, bool)) for v in fav):
                msg = f"favorable must be a value or a non-empty list of values (e.g. [0]), got {self.favorable!r}"
                raise PolfairError(msg)
            self.favorable = tuple(fav)
        if self.score_label is not None and not isinstance(self.score_label, (str, int, float, bool)):
            msg = f"score_label must be one label value (e.g. 1 or 'yes'), got {self.score_label!r}"
            raise PolfairError(msg)
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
        if isinstance(self.thresholds, str):
            preset_thresholds(self.thresholds, has_predictions=True)  # validates the name; resolved per report
        elif not isinstance(self.thresholds, Mapping):
            msg = f"thresholds must be a table metric -> [lo, hi] or a policy name such as 'four_fifths', got {self.thresholds!r}"
            raise PolfairError(msg)
        else:
            self.thresholds = parse_thresholds(self.thresholds)
        self.min_sample_size = check_min_sample_size(self.min_sample_size)
        self.max_sample_size = check_size(self.max_sample_size, "max_sample_size")
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
        users = [self.user_metrics] if isinstance(self.user_metrics, str) else list(self.user_metrics)
        selected, old = groupwise.split_metrics(mets or None, users or None, where="config")
        groupwise.resolve(old)  # validates names
        if selected is not None:
            select_metrics(selected, True, option="config metrics")  # validates names (did you mean)
        self.metrics, self.user_metrics = tuple(selected or ()), tuple(old or ())
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
        self.statistics = check_statistics(self.statistics)
        if self.threshold is not None:
            from polfair.core.passes.spec import check_threshold

            try:
                check_threshold(self.threshold)
            except (TypeError, PolfairError) as exc:
                raise PolfairError(f"{exc} (config key threshold)") from None
            self.threshold = float(self.threshold)
        self._check_proba()
        from polfair.core.report.status import check_sides

        try:
            self.band = check_sides(self.band)
        except ValueError as exc:
            raise PolfairError(str(exc)) from None

    def _check_proba(self) -> None:
        """Check the estimated attribute's keys as ``fairness_report`` checks its keywords (column names only)."""
        from polfair.core.proba import DEFAULT_TOLERANCE, check_proba_options, parse_protected_proba

        proba = self.protected_proba
        assignment = "weighted" if self.proba_assignment is None else self.proba_assignment
        tolerance = DEFAULT_TOLERANCE if self.proba_tolerance is None else self.proba_tolerance
        try:
            check_proba_options(proba, assignment, tolerance)
            if proba is None:
                return
            if not isinstance(proba, Mapping) or not all(
                    isinstance(g, Mapping) and all(c is None or isinstance(c, str) for c in g.values())
                    for g in proba.values()):  # fmt: skip
                msg = (f"protected_proba must be a table attribute -> {{group = probability column name}}, "
                       f"got {proba!r}")  # fmt: skip
                raise PolfairError(msg)
            parse_protected_proba(proba, assignment, tolerance)
        except (TypeError, PolfairError) as exc:
            raise PolfairError(f"{exc} (config key protected_proba)") from None
        self.protected_proba = {str(a): dict(g) for a, g in proba.items()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str = "config") -> FairnessConfig:
        """Build from a mapping (parsed TOML/JSON); unknown keys are errors.

        Parameters
        ----------
        data
            Mapping with the keys ``favorable``, ``score_label``, ``monitored``, ``reference``, ``thresholds``,
            ``min_sample_size``, ``max_sample_size``, ``seed``, ``metrics``, ``y_true``, ``y_pred``,
            ``y_score``, ``threshold``, ``weight``, ``by``, ``statistics``, ``band``, ``protected_proba``,
            ``proba_assignment``, ``proba_tolerance`` (all optional).
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
            msg = f"{source}: unknown key(s) {unknown_names_message(unknown, _KEYS)}; known keys: {', '.join(_KEYS)}"
            raise PolfairError(msg)
        try:
            return cls(**dict(data))
        except PolfairError as exc:
            raise PolfairError(f"{source}: {exc}") from None

    @classmethod
    def from_toml(cls, path: str | Path) -> FairnessConfig:
        r"""Load from a TOML file (read with the standard library's ``tomllib``).

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
        >>> _ = open(p, "w").write('favorable = [0]\n[monitored]\nage = [18, 25]\n[reference]\nage = [26, 100]\n')
        >>> FairnessConfig.from_toml(p).reference["age"].ranges
        ((26, 100),)
        """
        import tomllib  # stdlib (Python >= 3.11); imported here as only this method reads TOML

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
        """One protected-key expression per attribute: monitored / reference label, :data:`OTHER`, null.

        The label of rows in neither group is ``"(neither group)"`` (:data:`OTHER`), which no column
        value is mistaken for (a real value ``other`` of the column is in that group, labelled as
        such); a monitored/reference label spelled the same gets more parentheses. Monitored and
        reference groups whose labels coincide get `` (monitored)`` / `` (reference)`` suffixes.

        Returns
        -------
        list of pl.Expr
            String expressions aliased to the attribute names.

        Examples
        --------
        >>> cfg = FairnessConfig(monitored={"age": [18, 25]}, reference={"age": [26, 100]})
        >>> pl.DataFrame({"age": [20, 30, 10, None]}).select(cfg.protected_exprs())["age"].to_list()
        ['[18, 25]', '[26, 100]', '(neither group)', None]
        """
        return [e.replace_strict(self.part_labels(a), return_dtype=pl.String).alias(a)
                for a, e in zip(self.monitored, self.part_exprs())]  # fmt: skip

    def parts(self, a: str) -> list[tuple[str, Any]]:
        """The monitored, then the reference values and ranges of attribute ``a``, in the order of
        :meth:`part_exprs`' indices: ``(side, value or "[lo, hi]")``.

        Examples
        --------
        >>> FairnessConfig(monitored={"age": [18, 25]}, reference={"age": [26, 100]}).parts("age")
        [('monitored', '[18, 25]'), ('reference', '[26, 100]')]
        """
        col = pl.col(a)
        return [(side, v) for side, g in (("monitored", self.monitored[a]), ("reference", self.reference[a]))
                for v, _ in g.parts(col)]  # fmt: skip

    def part_exprs(self) -> list[pl.Expr]:
        """One Int16 key per attribute: the index of the value or range a row matches in :meth:`parts`
        (monitored first), ``len(parts)`` for a row in neither group, null for a null value. A pass
        grouped by these keys shows which values and ranges match rows; :meth:`part_labels` maps
        the indices to the report's group labels (the cells are then summed per label).

        Examples
        --------
        >>> cfg = FairnessConfig(monitored={"g": ["a", "b"]}, reference={"g": ["c"]})
        >>> pl.DataFrame({"g": ["b", "c", "x", None]}).select(cfg.part_exprs())["g"].to_list()
        [1, 2, 3, None]
        """
        out = []
        for a in self.monitored:
            col = pl.col(a)
            conds = [c for _, g in (("m", self.monitored[a]), ("r", self.reference[a])) for _, c in g.parts(col)]
            e: Any = pl.when(col.is_null()).then(pl.lit(None, pl.Int16))
            for i, c in enumerate(conds):
                e = e.when(c).then(pl.lit(i, pl.Int16))
            out.append(e.otherwise(pl.lit(len(conds), pl.Int16)).alias(a))
        return out

    def part_labels(self, a: str) -> dict[int, str]:
        """Index of :meth:`part_exprs` -> the report's group label (monitored, reference, :data:`OTHER`).

        Examples
        --------
        >>> FairnessConfig(monitored={"g": ["a", "b"]}, reference={"g": ["c"]}).part_labels("g")
        {0: 'a|b', 1: 'a|b', 2: 'c', 3: '(neither group)'}
        """
        m_label, r_label, other = self.group_labels()[a]
        sides = [side for side, _ in self.parts(a)]
        out = {i: m_label if side == "monitored" else r_label for i, side in enumerate(sides)}
        out[len(sides)] = other
        return out

    def group_labels(self) -> dict[str, tuple[str, str, str]]:
        """Per config attribute, the report's labels of its monitored, reference and other groups.

        Examples
        --------
        >>> FairnessConfig(monitored={"race": ["(neither group)"]}, reference={"race": ["White"]}).group_labels()
        {'race': ('(neither group)', 'White', '((neither group))')}
        """
        out = {}
        for a, m in self.monitored.items():
            m_label, r_label = m.label, self.reference[a].label
            if m_label == r_label:  # e.g. monitored ["a|b"], reference ["a", "b"]: keep two groups
                m_label, r_label = f"{m_label} (monitored)", f"{r_label} (reference)"
            other = OTHER
            while other in (m_label, r_label):  # a monitored value spelled so stays its own group
                other = f"({other})"
            out[a] = (m_label, r_label, other)
        return out
