"""Estimated protected attributes: membership probabilities (BISG, ...) as weights of the one pass.

When a protected attribute is not recorded (US lenders may not ask an applicant's race), an audit
estimates it from proxies: Bayesian Improved Surname Geocoding (BISG; CFPB 2014) gives each row a
probability of each group from its surname and address. ``protected_proba={"race": {"white":
"p_white", "black": "p_black", ...}}`` names the attribute, each group and the column (or
expression) of its probability. Two estimators:

* ``proba_assignment="weighted"`` (default): a row's membership probability is a weight on its
  contribution to a group. The group's confusion counts are ``Σ w·p_g`` over the rows of each
  outcome (``w`` the row's weight, 1 without ``weight=``), so every rate is the *weighted
  estimator* ``Σ w·p_g·1[outcome] / Σ w·p_g`` of Chen, Kallus, Mao, Svacha & Udell, "Fairness
  Under Unawareness: Assessing Disparity When Protected Class Is Unobserved" (FAT* 2019,
  arXiv:1811.11154). Its bias is the conditional covariance of the outcome with the true
  membership given the proxies (zero when the outcome is independent of the group given the
  proxies); the authors find it tends to *understate* disparities.
* ``proba_assignment="argmax"``: each row is assigned to its likeliest group (ties: the group
  named first), the threshold-based imputation Chen et al. analyse: its bias is generally upward
  (it exaggerates disparities) and varies strongly with the threshold. Offered so an auditor can
  show both.

The pass does not explode rows: it groups by ``by + observed protected keys + outcome code`` as
always and aggregates, per group ``g``, ``Σ w·p_g``, ``Σ w²·p_g`` and (with scores) ``Σ w·p_g·s``,
``Σ w·p_g·(1−s)`` as extra columns; :mod:`polfair.core.passes.estimated` reshapes that small result into
the ordinary code table of the cells ``(by, observed keys, estimated attribute)``, so the cell
table, every metric, interval, roll-up, intersection and output are the ordinary ones. This
module holds the request (:class:`ProbaSpec`, :func:`parse_protected_proba`) and the pass's
per-row columns (:func:`proba_columns`), written once for every engine (the contract's
:class:`~polfair.core.contract.Engine`); the rule for the probabilities is the contract's
(:func:`polfair.core.contract.membership`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import polars as pl

from polfair.core._typing import IntoExpr
from polfair.core.contract import (
    INVALID,
    MEMBERSHIP_SUM,
    MISSING,
    PROBA_BAD,
    PROBA_NULL,
    PROBA_SUM,
    W2_SHIFT,
    Column,
    Engine,
    Membership,
    membership,
)
from polfair.exceptions import PolfairError

__all__ = [
    "ASSIGNMENTS",
    "CITATION",
    "DEFAULT_TOLERANCE",
    "GROUP_INDEX",
    "ProbaSpec",
    "check_assignment",
    "check_proba_options",
    "compile_proba",
    "estimated_note",
    "group_weights",
    "parse_protected_proba",
    "proba_columns",
    "proba_sums",
    "q_column",
]

#: The estimators of ``proba_assignment``.
ASSIGNMENTS = ("weighted", "argmax")
#: Default tolerance of a row's probability sum (``proba_tolerance``).
DEFAULT_TOLERANCE = 1e-6
#: ``proba_assignment="argmax"``: the row's likeliest group (its index in ``labels``; null when the
#: row's probabilities are missing or invalid), a key of the pass.
GROUP_INDEX = "__pf_g"


def q_column(i: int, part: str = "") -> str:
    """Name of a pass column of group ``i``: ``part`` ``""`` Σw·p, ``"w2up"``/``"w2dn"`` Σw²·p in the two
    accumulators of :func:`polfair.core.contract.weight_squares` (scaled by 4^±300), ``"n"`` Σp,
    ``"s"`` Σw·p·s, ``"1s"`` Σw·p·(1−s).

    Examples
    --------
    >>> q_column(2), q_column(0, "w2up")
    ('__pf_q2', '__pf_q0_w2up')
    """
    return f"__pf_q{i}" + (f"_{part}" if part else "")


@dataclass(frozen=True)
class ProbaSpec:
    """An estimated protected attribute: what :func:`parse_protected_proba` checked, then compiled.

    Attributes
    ----------
    attribute
        The estimated attribute's name (a key of the cell table, after the observed ones).
    labels
        Its groups in the order given; a remainder group (mapped to ``None``) last.
    exprs
        The probability column of each named group (column name or expression), ``labels`` order.
    remainder
        Whether the last label is a remainder group (``1 -`` the sum of the others).
    assignment
        ``"weighted"`` or ``"argmax"``.
    tolerance
        How far a row's sum may be from 1.
    membership
        The compiled probabilities (:class:`polfair.core.contract.Membership`), once compiled in
        the pass's engine.
    weighted
        Whether a ``weight=`` column multiplies the probabilities (set with the pass).
    has_scores
        Whether ``y_score`` is given (set with the pass).
    fold
        The pass's folded-key layout (``by + observed keys`` and, for argmax, the group index):
        :attr:`polfair.core.passes.spec.Spec.fold` of the pass itself; empty: no fold.
    """

    attribute: str
    labels: tuple[str, ...]
    exprs: tuple[IntoExpr, ...]
    remainder: bool = False
    assignment: str = "weighted"
    tolerance: float = DEFAULT_TOLERANCE
    membership: Membership | None = None
    weighted: bool = False
    has_scores: bool = False
    fold: tuple[tuple[int, pl.DataType] | None, ...] = ()

    @property
    def dtype(self) -> pl.Enum:
        """The estimated attribute's dtype in the cell table: an Enum of the labels, in order."""
        return pl.Enum(list(self.labels))

    def describe(self) -> dict[str, Any]:
        """The request in plain values (the report's provenance; JSON-able).

        Examples
        --------
        >>> ps = parse_protected_proba({"race": {"white": "p_w", "other": None}})
        >>> ps.describe()["groups"], ps.describe()["columns"]
        (['white', 'other'], ['p_w', None])
        """
        shown = [e if isinstance(e, str) else str(e) for e in self.exprs]
        return {"attribute": self.attribute, "groups": list(self.labels),
                "columns": [*shown, *([None] if self.remainder else [])], "assignment": self.assignment,
                "tolerance": self.tolerance}  # fmt: skip


def check_assignment(assignment: Any) -> str:
    """Raise unless ``assignment`` is one of :data:`ASSIGNMENTS`; return it.

    Examples
    --------
    >>> check_assignment("argmax")
    'argmax'
    """
    if not isinstance(assignment, str) or assignment not in ASSIGNMENTS:
        msg = (
            f"proba_assignment must be 'weighted' (each row counts in every group with its probability: "
            f"the weighted estimator) or 'argmax' (each row in its likeliest group), got {assignment!r}"
        )
        raise PolfairError(msg)
    return assignment


def check_proba_options(protected_proba: Any, assignment: Any, tolerance: Any) -> None:
    """Raise when ``proba_assignment``/``proba_tolerance`` are given (not their defaults) without
    ``protected_proba``: they would change nothing, which is never what was meant.

    Examples
    --------
    >>> check_proba_options(None, "weighted", DEFAULT_TOLERANCE)
    >>> check_proba_options(None, "argmax", DEFAULT_TOLERANCE)
    Traceback (most recent call last):
    ...
    polfair.exceptions.PolfairError: proba_assignment='argmax' applies to protected_proba= (...), which is not given
    """
    if protected_proba is not None:
        return
    for name, value, default in (("proba_assignment", assignment, "weighted"), ("proba_tolerance", tolerance,
                                                                                DEFAULT_TOLERANCE)):  # fmt: skip
        if value != default:
            msg = (f"{name}={value!r} applies to protected_proba= (an attribute estimated from membership "
                   "probabilities), which is not given")  # fmt: skip
            raise PolfairError(msg)


def parse_protected_proba(
    protected_proba: Any, assignment: Any = "weighted", tolerance: Any = DEFAULT_TOLERANCE
) -> ProbaSpec:
    """Check ``protected_proba`` and its options; nothing is read.

    Parameters
    ----------
    protected_proba
        ``{attribute: {group label: column name or expression}}``, one attribute, at least two
        groups; at most one group may map to ``None``: the remainder, ``1 -`` the sum of the others.
    assignment
        ``"weighted"`` or ``"argmax"``.
    tolerance
        Float >= 0 (and < 1): how far a row's probabilities may sum from 1.

    Returns
    -------
    ProbaSpec
        Not yet compiled (``membership`` is ``None``).

    Raises
    ------
    PolfairError
        Not a mapping of one attribute to a mapping of groups, a label that is not a non-empty
        string or is given twice, fewer than two groups, two remainder groups, a bad assignment
        or tolerance.
    TypeError
        A probability that is neither a column name nor a Polars expression.

    Examples
    --------
    >>> ps = parse_protected_proba({"race": {"white": "p_white", "black": "p_black"}})
    >>> ps.attribute, ps.labels, ps.remainder
    ('race', ('white', 'black'), False)
    >>> parse_protected_proba({"race": {"white": "p_white"}})
    Traceback (most recent call last):
    ...
    polfair.exceptions.PolfairError: protected_proba['race'] names one group ('white'); ...
    """
    example = "{'race': {'white': 'p_white', 'black': 'p_black', 'hispanic': 'p_hispanic'}}"
    if not isinstance(protected_proba, Mapping) or len(protected_proba) == 0:
        msg = f"protected_proba must map an attribute to its groups' probability columns, e.g. {example}; got {protected_proba!r}"
        raise PolfairError(msg)
    if len(protected_proba) > 1:
        msg = (
            f"protected_proba names {len(protected_proba)} attributes ({', '.join(map(repr, protected_proba))}); "
            "one estimated attribute per report: their joint probabilities are not the product of the "
            "marginals unless they are independent given the proxies. Estimate the joint groups (e.g. "
            "'black female') as one attribute, or run one report per attribute"
        )
        raise PolfairError(msg)
    ((attribute, groups),) = protected_proba.items()
    if not isinstance(attribute, str) or not attribute:
        msg = f"protected_proba: the attribute name must be a non-empty string, got {attribute!r}"
        raise PolfairError(msg)
    if not isinstance(groups, Mapping):
        msg = f"protected_proba[{attribute!r}] must map each group label to its probability column, e.g. {example}"
        raise PolfairError(msg)
    labels: list[str] = []
    exprs: list[IntoExpr] = []
    rest: list[str] = []
    for label, x in groups.items():
        if not isinstance(label, str) or not label:
            msg = f"protected_proba[{attribute!r}]: group labels must be non-empty strings, got {label!r}"
            raise PolfairError(msg)
        if x is None:
            rest.append(label)
            continue
        if not isinstance(x, (str, pl.Expr)):
            msg = (f"protected_proba[{attribute!r}][{label!r}] must be a column name (str) or a polars expression "
                   f"(None: the remainder group), got {type(x).__name__}: {x!r}")  # fmt: skip
            raise TypeError(msg)
        labels.append(label)
        exprs.append(x)
    if len(rest) > 1:
        msg = f"protected_proba[{attribute!r}]: {rest} all map to None; at most one remainder group (1 - the others)"
        raise PolfairError(msg)
    if len(labels) + len(rest) < 2 or not labels:
        msg = (
            f"protected_proba[{attribute!r}] names one group ({(labels + rest)[0]!r}); give every group's "
            "probability (or the others and a remainder group mapped to None), e.g. " + example
        )
        raise PolfairError(msg)
    if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or not (0 <= tolerance < 1) or (
        not math.isfinite(tolerance)
    ):  # fmt: skip
        msg = f"proba_tolerance must be a number in [0, 1) (how far a row's probabilities may sum from 1), got {tolerance!r}"
        raise PolfairError(msg)
    return ProbaSpec(attribute, (*labels, *rest), tuple(exprs), remainder=bool(rest),
                     assignment=check_assignment(assignment), tolerance=float(tolerance))  # fmt: skip


def compile_proba(eng: Engine, ps: ProbaSpec, cols: Sequence[Column], *, weighted: bool, has_scores: bool,
                  fold: tuple[tuple[int, pl.DataType] | None, ...] = ()) -> ProbaSpec:  # fmt: skip
    """``ps`` with its probabilities compiled in engine ``eng`` (:func:`polfair.core.contract.membership`).

    Parameters
    ----------
    eng
        The pass's engine.
    ps
        From :func:`parse_protected_proba`.
    cols
        The probability columns of the named groups, in ``ps.labels`` order.
    weighted, has_scores
        Whether the pass has ``weight=`` and ``y_score``.
    fold
        The pass's folded-key layout for ``by + observed keys`` (argmax appends its group index).

    Returns
    -------
    ProbaSpec
    """
    m = membership(eng, cols, attribute=ps.attribute, labels=ps.labels, tolerance=ps.tolerance,
                   remainder=ps.remainder)  # fmt: skip
    if ps.assignment == "argmax" and fold:
        fold = (*fold, (len(ps.labels), ps.dtype))
    return replace(ps, membership=m, weighted=weighted, has_scores=has_scores, fold=fold)


def _small_count(eng: Engine, cond: Any) -> Any:
    """1 where ``cond``, else 0 (an integer column every engine sums; a cast is cheaper than when/then)."""
    return cond.cast(eng.ns.Int64)


def proba_columns(eng: Engine, ps: ProbaSpec, w: Any | None, s: Any | None) -> dict[str, Any]:
    """The pass's per-row columns of an estimated attribute (written once for every engine).

    Parameters
    ----------
    eng
        The engine.
    ps
        A compiled :class:`ProbaSpec`.
    w
        The row's Float64 weight expression (``None`` without ``weight=``).
    s
        The row's Float64 score expression (``None`` without ``y_score``).

    Returns
    -------
    dict
        Name -> expression. Always :data:`~polfair.core.contract.PROBA_NULL`,
        :data:`~polfair.core.contract.PROBA_BAD`, :data:`~polfair.core.contract.PROBA_SUM` (1 on rows
        whose probabilities are missing, outside [0, 1], or do not sum to 1). ``"weighted"``: per
        group ``i`` (:func:`q_column`) ``w·p`` and, with a weight, ``w²·p`` in the contract's two
        accumulators (``"w2up"``, ``"w2dn"``: weights of 1e-200 and 1e200 both fit) and ``p``
        (``"n"``), with scores ``w·p·s`` (``"s"``) and ``w·p·(1−s)`` (``"1s"``); ``p`` is the
        row's normalised probability, null when the row's state is not usable. ``"argmax"``:
        :data:`GROUP_INDEX` (UInt8 in Polars), the likeliest group (the first of ties).

    Examples
    --------
    >>> import polars as pl
    >>> from polfair.core.contract import POLARS
    >>> ps = parse_protected_proba({"race": {"a": "pa", "b": "pb"}})
    >>> cols = [Column(c, pl.col(c), pl.Float64) for c in ("pa", "pb")]
    >>> ps = compile_proba(POLARS, ps, cols, weighted=False, has_scores=False)
    >>> out = proba_columns(POLARS, ps, None, None)
    >>> pl.DataFrame({"pa": [0.25, 0.5], "pb": [0.75, None]}).select(**out)["__pf_q1"].to_list()
    [0.75, None]
    """
    m = ps.membership
    assert m is not None, "compile the ProbaSpec first (compile_proba)"
    out: dict[str, Any] = {
        PROBA_NULL: _small_count(eng, m.state == MISSING),
        PROBA_BAD: _small_count(eng, m.state == INVALID),
        PROBA_SUM: _small_count(eng, m.state == MEMBERSHIP_SUM),
    }
    if ps.assignment == "argmax":  # the first group whose probability is the row's largest
        index: Any = eng.small(len(m.raw) - 1)
        for i in range(len(m.raw) - 2, -1, -1):
            index = eng.ns.when(m.raw[i] == m.top).then(eng.small(i)).otherwise(index)
        out[GROUP_INDEX] = eng.ns.when(m.state == 0).then(index)  # null: missing or invalid probabilities
        return out
    for i, (a, q) in enumerate(zip(*group_weights(ps, w))):
        out[q_column(i)] = a
        if w is not None:
            hi, lo = 2.0**W2_SHIFT, 2.0**-W2_SHIFT  # Σw²·p as weight_squares holds Σw²
            out[q_column(i, "w2up")] = (w * hi) * (a * hi)
            out[q_column(i, "w2dn")] = (w * lo) * (a * lo)
            out[q_column(i, "n")] = q
        if s is not None:
            out[q_column(i, "s")] = a * s
            out[q_column(i, "1s")] = a * (1.0 - s)
    return out


def group_weights(ps: ProbaSpec, w: Any | None) -> tuple[list[Any], list[Any]]:
    """Each group's weight of a row, ``w·p_g``, and its normalised probability ``p_g`` (expressions of the
    pass's engine; null where the row's probabilities are not usable), ``ps.labels`` order.

    ``w / Σp`` is computed once per row and shared by the groups.
    """
    m = ps.membership
    assert m is not None, "compile the ProbaSpec first (compile_proba)"
    scaled = m.inverse if w is None else w * m.inverse
    return [x * scaled for x in m.raw], [x * m.inverse for x in m.raw]


def proba_sums(ps: ProbaSpec) -> list[str]:
    """The pass columns of :func:`proba_columns` that the pass sums (every one but the group index).

    Examples
    --------
    >>> proba_sums(parse_protected_proba({"race": {"a": "pa", "b": None}}))
    ['__pf_pnull', '__pf_pbad', '__pf_psum', '__pf_q0', '__pf_q1']
    """
    out = [PROBA_NULL, PROBA_BAD, PROBA_SUM]
    if ps.assignment == "argmax":
        return out
    parts = ["", *(["w2up", "w2dn", "n"] if ps.weighted else []), *(["s", "1s"] if ps.has_scores else [])]
    return out + [q_column(i, part) for part in parts for i in range(len(ps.labels))]


#: The reference for the estimators' bias (cited in the notes, the docs and the report's page).
CITATION = (
    "Chen, Kallus, Mao, Svacha & Udell, \"Fairness Under Unawareness: Assessing Disparity When Protected "
    "Class Is Unobserved\", FAT* 2019 (arXiv:1811.11154)"
)


def estimated_note(description: Mapping[str, Any] | None, *, intervals: bool = True) -> str | None:
    """The sentence a report's outputs show when its groups are estimated from proxies.

    Parameters
    ----------
    description
        :meth:`ProbaSpec.describe` (the report's request ``protected_proba``), or ``None``.
    intervals
        Whether the output has confidence intervals (then the note says what they cover).

    Returns
    -------
    str or None
        ``None`` without an estimated attribute.

    Examples
    --------
    >>> estimated_note(None) is None
    True
    >>> estimated_note(parse_protected_proba({"race": {"white": "p_w", "black": "p_b"}}).describe())[:60]
    "Groups of 'race' are estimated from proxies, not recorded: e"
    """
    if not description:
        return None
    attr = description.get("attribute")
    pairs = zip(description.get("groups") or [], description.get("columns") or [])
    cols = ", ".join(f"{g}: {c}" if c is not None else f"{g}: the remainder" for g, c in pairs)
    head = f"Groups of {attr!r} are estimated from proxies, not recorded"
    tail = "Its intervals describe sampling noise only, not this bias." if intervals else ""
    if description.get("assignment") == "argmax":
        return (f"{head}: each row is counted in its likeliest group ({cols}). {CITATION} show that this "
                "threshold-based assignment is biased, generally exaggerating disparities, by an amount that "
                "varies strongly with the threshold; compare with the weighted estimator "
                f"(proba_assignment='weighted'). {tail}").strip()  # fmt: skip
    return (f"{head}: each row counts in every group with its membership probability ({cols}), the weighted "
            f"estimator of {CITATION}. It is unbiased when the outcome is independent of the group given the "
            "proxies; otherwise its bias is their conditional covariance, and it tends to understate "
            f"disparities. {tail}").strip()  # fmt: skip
