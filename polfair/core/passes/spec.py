"""Stage 1, *spec*: validate the user's columns and options once and turn them into expressions.

The output of this stage is a :class:`Spec`: a lazy frame holding only the normalised columns the
counting pass needs (``by`` keys, protected keys, one ``UInt8`` outcome code and, when needed, the
weight and weighted score columns), plus the facts later stages need to name things in messages.
Nothing here reads the data: every check that needs the data is folded into the outcome code and
checked on the (small) result of the counting pass, so the whole report still reads the input once.

What each role accepts, and the outcome code, are the input contract's
(:mod:`polfair.core.contract`): :func:`classification_columns` compiles a request with it, for
Polars here and for Spark/DuckDB in :mod:`polfair.engines.narwhals` (the same function). Outcome
code (``__pf_o``, UInt8), one value per row::

    label state      = code % 4          0 unfavorable, 1 favorable, 2 null/NaN, 3 invalid
    prediction state = code // 4 % 4    same values for the predicted label
    flags            = code // 16        bit 0: score ±inf or outside [0, 1]   (invalid)
                                         bit 1: weight negative or ±inf       (invalid; with
                                                exact_sums also in (0, 2**-16) or >= 2**40)
                                         bit 2: weight null or NaN            (missing)
                                         bit 3: score null or NaN             (missing)
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping, Sequence, Set
from dataclasses import dataclass, field
from typing import Any, Literal, cast

import polars as pl

from polfair.core._args import as_expr, as_list, as_values, check_columns, output_name
from polfair.core._typing import IntoExpr, OnMissing
from polfair.core.contract import (
    CODE,
    EXACT_SCALE,
    FLAG_BAD_SCORE,
    FLAG_BAD_WEIGHT,
    FLAG_NULL_SCORE,
    FLAG_NULL_WEIGHT,
    MISSING,
    POLARS,
    Column,
    Compiled,
    Engine,
    Polarity,
    PolarsFrame,
    compile_labels,
    key,
    outcome_code,
    score,
    weight,
)
from polfair.core.contract.inputs import to_lazyframe
from polfair.core.proba import (
    DEFAULT_TOLERANCE,
    ProbaSpec,
    check_proba_options,
    compile_proba,
    parse_protected_proba,
    proba_columns,
)
from polfair.core.schema import CELL_SCHEMA, REPORT_SCHEMA
from polfair.exceptions import PolfairError

__all__ = [
    "FV",
    "IntoExpr",
    "PassOptions",
    "SF",
    "Spec",
    "build_spec",
    "check_exact_sums",
    "check_key_names",
    "check_on_missing",
    "check_threshold",
    "classification_columns",
    "key_columns",
    "pass_keys",
    "favorable_value_columns",
    "fold_layout",
    "fold_values",
    "label_values",
    "protected_exprs",
    "to_lazyframe",
]

#: Private column names of the normalised frame. They never reach the user. (``CODE``, the outcome
#: code, is :data:`polfair.core.contract.CODE`.)
W = "__pf_w"
WS = "__pf_ws"
W1S = "__pf_w1s"
#: The favorable label's probability of a row (the polarity rule applied once: ``y_score``, or
#: ``1 - y_score`` for a score of an unfavorable ``score_label``); every pass that reads a score
#: (reports, estimated groups, slices) reads this column of :func:`classification_columns`, never the raw score.
SF = "__pf_sf"
#: Prefix of the per-value counts of a ``favorable`` list (``__pf_fv0``, ...: 1 where the label is that
#: value): summed in the pass, so a misspelled value inside the list is named after it, as ``privileged``'s.
FV = "__pf_fv"

#: Metadata key of a :class:`PassOptions` field that is a pass's own switch, not a door's option
#: (no request hashes, renders or accepts it as a keyword).
PASS_ONLY = "pass_only"

__all__ += ["CODE", "EXACT_SCALE", "FLAG_BAD_SCORE", "FLAG_BAD_WEIGHT", "FLAG_NULL_SCORE", "FLAG_NULL_WEIGHT"]

@dataclass(frozen=True, eq=False)
class PassOptions:
    """What a counting pass reads of a request (typed, frozen): every pass's one options type.

    The classification pass (:func:`build_spec`, :func:`polfair.engines.narwhals.foreign_code_table`),
    the regression pass, the score histograms, slices and proxies read it; the skeleton's steps
    (:mod:`polfair.core.passes.skeleton`) read its keys and policies.
    :class:`polfair.core.request.AuditRequest` is one (it adds the report's options), so the request a
    door builds travels into the pass as it is, never exploded into keywords. The defaults are
    :func:`polfair.confusion_counts`'s. ``eq=False``: options may be Polars expressions, which do not
    compare to booleans.

    Attributes
    ----------
    y_true, y_pred, y_score, weight
        Column arguments of the roles (names, or on Polars named expressions); ``None`` when not given.
    threshold
        The decision threshold of ``y_score`` without ``y_pred``.
    protected, by
        Key column arguments (one, or a list), in order; :attr:`protected_keys`/:attr:`by_keys` as tuples.
    favorable, unfavorable, score_label
        The label values taken as favorable / unfavorable, and the label a score (or a Boolean
        decision) is about (``docs/contract.md#polarity``).
    cluster, n_buckets, exact_sums
        The ``bucket`` key of the clustered intervals; the fixed-point sums.
    allow_many_groups
        Skip the check of keys with about one group per row.
    protected_proba, proba_assignment, proba_tolerance
        An attribute estimated from membership probabilities (:mod:`polfair.core.proba`), a stage of the pass.
    on_missing
        ``"warn"``, ``"raise"`` or ``"ignore"``: rows with a missing value (the contract's post-pass check).
    engine
        Polars engine of the pass (Polars input only).
    judge
        ``False``: no post-pass judgement of the values (invalid rows only counted; a stream's batch).
        A pass's own switch, not an option of a door: no request hashes or renders it.

    Examples
    --------
    >>> PassOptions(y_true="y", protected="g").threshold
    0.5
    >>> PassOptions.of(y_true="y", protected="g").protected_keys
    ('g',)
    """

    y_true: IntoExpr | None = None
    y_pred: IntoExpr | None = None
    y_score: IntoExpr | None = None
    threshold: float | None = 0.5
    protected: IntoExpr | Sequence[IntoExpr] | None = None
    favorable: Any = 1
    unfavorable: Any = None
    score_label: Any = None
    weight: IntoExpr | None = None
    by: IntoExpr | Sequence[IntoExpr] | None = None
    cluster: IntoExpr | None = None
    n_buckets: int = 20
    exact_sums: bool = False
    allow_many_groups: bool = False
    protected_proba: Mapping[str, Mapping[str, IntoExpr | None]] | None = None
    proba_assignment: Literal["weighted", "argmax"] = "weighted"
    proba_tolerance: float = DEFAULT_TOLERANCE
    on_missing: OnMissing = "warn"
    engine: str = "auto"
    judge: bool = field(default=True, metadata={PASS_ONLY: True})

    @property
    def protected_keys(self) -> tuple[Any, ...]:
        """``protected`` as a tuple (one column, or a list of them; ``None``: none)."""
        return _items(self.protected)

    @property
    def by_keys(self) -> tuple[Any, ...]:
        """``by`` as a tuple (one column, or a list of them; ``None``: none)."""
        return _items(self.by)

    @classmethod
    def of(cls, **options: Any) -> PassOptions:
        """The options of a door's keywords, checked: an unknown name (with the close one) and the
        ``protected_proba`` options raise here.

        Examples
        --------
        >>> PassOptions.of(protectd="g")
        Traceback (most recent call last):
        ...
        polfair.exceptions.UnknownOptionError: PassOptions got an unknown keyword 'protectd' (did you mean 'protected'?)
        """
        from polfair.core.options import check_known

        check_known(options, cls.__dataclass_fields__, door=cls.__name__)
        check_on_missing(options.get("on_missing", "warn"))
        check_proba_options(options.get("protected_proba"), options.get("proba_assignment", "weighted"),
                            options.get("proba_tolerance", DEFAULT_TOLERANCE))  # fmt: skip
        return cls(**options)

    @classmethod
    def of_request(cls, request: Any, **overrides: Any) -> PassOptions:
        """The pass's part of a door's request object (any object with these fields by name, e.g.
        :class:`polfair.core.request.AuditRequest`), with ``overrides``.

        Examples
        --------
        >>> from polfair.core.request import AuditRequest
        >>> PassOptions.of_request(AuditRequest(y_true="y", protected="g"), engine="auto").protected_keys
        ('g',)
        """
        fields = {f: getattr(request, f) for f in cls.__dataclass_fields__ if hasattr(request, f)}
        return cls.of(**(fields | overrides))


def _items(x: Any) -> tuple[Any, ...]:
    """One key argument or a sequence of them, as a tuple (an Ibis or Spark column is one item)."""
    if x is None:
        return ()
    if isinstance(x, (str, pl.Expr)) or not isinstance(x, (Sequence, Set, Iterator)):
        return (x,)
    return tuple(x)


#: Names no key (``by`` or protected) may take: the cell table's own columns (:data:`~polfair.core.schema.CELL_SCHEMA`).
CELL_COLUMNS = frozenset(c.name for c in CELL_SCHEMA)
#: Names a ``by`` key may not take: the cell table's and the report's columns
#: (:data:`~polfair.core.schema.REPORT_SCHEMA`; a ``by`` key is a column of the report). A protected
#: attribute may take a report column's name: it reaches the report as ``attribute``/``group``
#: labels and as a field of ``group_key``, never as a column.
RESERVED = CELL_COLUMNS | frozenset(c.name for c in REPORT_SCHEMA)

@dataclass(frozen=True)
class Spec:
    """The validated, normalised form of a report request (output of :func:`build_spec`).

    Attributes
    ----------
    lf
        Lazy frame with columns ``by + keys + [CODE]`` and, where needed, ``W``, ``WS``, ``W1S``
        (``None`` for a pass that ran in another engine: :mod:`polfair.engines.narwhals`).
    source
        The user's input as a lazy frame (``None`` for another engine's frame).
    by, keys
        Output names of the ``by`` columns and of the protected attributes, in the order given.
    has_predictions, has_scores, weighted
        Which inputs were given. Without predictions the prediction state mirrors the label.
    roles
        Role name (``"y_true"``, ``"y_pred"``, ``"y_score"``, ``"weight"``) -> the user's Polars
        expression (for a foreign frame, ``pl.col`` of the column's name).
    compiled
        Role name -> the role compiled by the contract (:class:`polfair.core.contract.Compiled`),
        in the pass's engine: what the post-pass check reports.
    favorable, unfavorable
        The label values taken as favorable / unfavorable (``unfavorable=None``: everything else).
    threshold
        Score threshold used when predictions come from ``y_score``.
    fold
        When some ``by`` or protected key has a small known set of values (Enum, Boolean, or a
        Categorical column of an in-memory frame): per key, in ``by + keys`` order, ``(number of
        values, dtype)``, or ``None`` for a key whose values are not known (a date, a String): the
        pass then groups on those keys and ONE integer folded from the known ones and the outcome
        code (about 15% cheaper with every key known, 10-25% beside a ``by=day`` date, see
        ``docs/design.md``). Empty when no key is known.
    bucket
        ``True`` when ``cluster=`` was given: ``lf`` has a ``bucket`` (UInt8) column, one more key
        of the pass after the protected attributes (:func:`polfair.core.intervals.bucket_of`).
    exact
        ``exact_sums=True``: the pass sums weights in fixed point (bit-identical in any order,
        chunking and engine); else Float64 sums.
    examples
        Fetches a few offending values of a compiled role (a second query on the error path).
    key_exprs
        The ``by`` and protected keys as normalised Polars expressions of the input, named (NaN in
        a Float key is null, -0.0 is 0.0): what a room applies to new rows (``to_expr()``).
    proba
        An attribute estimated from membership probabilities (``protected_proba``,
        :class:`polfair.core.proba.ProbaSpec`), the last of ``keys``; ``None`` otherwise. The pass
        is then :func:`polfair.core.passes.estimated.code_counts`: ``lf`` holds ``by`` and the observed
        keys, the code and the probability columns of :func:`polfair.core.proba.proba_columns`.
    polarity
        How the pass reads ``y_score`` and a Boolean ``y_pred`` against ``favorable`` (the polarity
        rule, :func:`polfair.core.contract.polarity`); ``None`` without labels.
    """

    lf: pl.LazyFrame | None
    source: pl.LazyFrame | None
    by: tuple[str, ...]
    keys: tuple[str, ...]
    has_predictions: bool
    has_scores: bool
    weighted: bool
    roles: dict[str, pl.Expr]
    favorable: tuple[Any, ...]
    unfavorable: tuple[Any, ...] | None
    threshold: float
    fold: tuple[tuple[int, pl.DataType] | None, ...] = ()
    bucket: bool = False
    compiled: dict[str, Compiled] = field(default_factory=dict)
    exact: bool = False
    examples: Callable[[Compiled], list[Any]] | None = None
    key_exprs: tuple[pl.Expr, ...] = ()
    proba: ProbaSpec | None = None
    polarity: Polarity | None = None


#: The folded key (keys' value slots and the outcome code in one integer) must fit in UInt64.
_FOLD_LIMIT = 2**64
#: How many values the UInt8 outcome code can take.
CODE_VALUES = 256


def fold_values(fold: Sequence[tuple[int, pl.DataType] | None]) -> int:
    """How many values the folded key of a ``Spec.fold`` layout takes: the outcome codes times,
    per folded key, its values plus a null slot (a key left out, ``None``, takes none).
    """
    total = CODE_VALUES
    for entry in fold:
        if entry is not None:
            total *= entry[0] + 1
    return total


def _value_count(expr: pl.Expr, dtype: pl.DataType, in_memory: bool) -> int | None:
    """How many distinct non-null physical values a key can hold, if known without reading it."""
    if isinstance(dtype, pl.Enum):
        return len(dtype.categories)
    if dtype == pl.Boolean:
        return 2
    if isinstance(dtype, pl.Categorical) and in_memory and expr.meta.undo_aliases().meta.is_column():
        # an in-memory column's values are already interned: their ids are below the bound.
        # (A scan or a derived expression may intern new values while it runs: not foldable.)
        try:
            return int(dtype.categories._categories.num_cats_upper_bound())
        except AttributeError:  # pragma: no cover - a Polars without this internal
            return None
    return None


def fold_layout(
    source: pl.LazyFrame, exprs: Sequence[pl.Expr], in_memory: bool
) -> tuple[tuple[int, pl.DataType] | None, ...]:
    """``Spec.fold`` for the key expressions ``exprs`` of ``source`` (empty: do not fold).

    Parameters
    ----------
    source
        The user's input as a lazy frame (only its schema is read).
    exprs
        The ``by`` and protected key expressions, in that order.
    in_memory
        Whether ``source`` is an in-memory frame (then its Categorical columns can be folded).

    Returns
    -------
    tuple of (int, pl.DataType) or None
        Per key: its number of non-null values and its dtype, or ``None`` where the key is not
        foldable (String, numeric, a date, a derived or scanned Categorical: the pass groups on it
        beside the folded integer); ``()`` when no key is foldable or when the folded key,
        ``256 · Π(size + 1)`` values over the foldable keys, would not fit in UInt64.

    Examples
    --------
    >>> import polars as pl
    >>> lf = pl.LazyFrame(schema={"g": pl.Enum(["a", "b"]), "s": pl.String})
    >>> fold_layout(lf, [pl.col("g")], in_memory=False)
    ((2, Enum(categories=['a', 'b'])),)
    >>> fold_layout(lf, [pl.col("s"), pl.col("g")], in_memory=True)
    (None, (2, Enum(categories=['a', 'b'])))
    >>> fold_layout(lf, [pl.col("s")], in_memory=True)
    ()
    """
    if not exprs:
        return ()
    schema = source.select(exprs).collect_schema()
    out: list[tuple[int, pl.DataType] | None] = []
    for e, dtype in zip(exprs, schema.values()):
        size = _value_count(e, dtype, in_memory)
        out.append(None if size is None else (size, dtype))
    if all(entry is None for entry in out) or fold_values(out) > _FOLD_LIMIT:
        return ()
    return tuple(out)


#: The one message of a pass without a protected attribute (observed or estimated).
NO_PROTECTED = "protected must name at least one column or expression, e.g. protected=['sex']"


def protected_exprs(protected: IntoExpr | Sequence[IntoExpr]) -> list[pl.Expr]:
    """The protected attributes as expressions; raise if there are none."""
    key_exprs = [as_expr(p, "protected") for p in as_list(protected)]
    if not key_exprs:
        raise PolfairError(NO_PROTECTED)
    return key_exprs


def check_exact_sums(options: PassOptions) -> None:
    """Raise when ``exact_sums=True`` comes with ``protected_proba`` (every engine's one message)."""
    if options.protected_proba is not None and options.exact_sums:
        msg = (
            "exact_sums=True is not available with protected_proba: membership probabilities times weights "
            "are often below 2**-16, which the fixed-point sums cannot hold; use the default Float64 sums"
        )
        raise PolfairError(msg)


def check_on_missing(on_missing: str) -> None:
    """Raise unless ``on_missing`` is ``"warn"``, ``"raise"`` or ``"ignore"``."""
    if on_missing not in ("warn", "raise", "ignore"):
        msg = f"on_missing must be one of {{'warn', 'raise', 'ignore'}}, got {on_missing!r}"
        raise PolfairError(msg)


def check_threshold(threshold: float) -> None:
    """Raise unless ``threshold`` is a number in [0, 1] (shared by every backend)."""
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not hasattr(threshold, "__float__"):
        msg = f"threshold must be a number in [0, 1], got {type(threshold).__name__}: {threshold!r}"
        raise TypeError(msg)
    if not 0.0 <= float(threshold) <= 1.0:
        msg = f"threshold must be in [0, 1], got {threshold!r}"
        raise PolfairError(msg)


def check_key_names(by_names: Sequence[str], keys: Sequence[str], also_reserved: Sequence[str] = ()) -> None:
    """Raise if a ``by``/protected name is given twice or is reserved for polfair's columns
    (``by``: :data:`RESERVED`; protected: :data:`CELL_COLUMNS`; both: ``__pf_*`` and
    ``also_reserved``, for callers with more output columns).
    """
    seen: set[str] = set()
    for i, k in enumerate((*by_names, *keys)):
        if k in seen:
            msg = f"column {k!r} is given twice among by= and protected=; give each once (or .alias() one)"
            raise PolfairError(msg)
        if k in (RESERVED if i < len(by_names) else CELL_COLUMNS) or k in also_reserved or k.startswith("__pf_"):
            msg = (
                f"key name {k!r} is reserved for polfair's output columns; rename it, e.g. "
                f"pl.col({k!r}).alias('{k}_attr') (or in the source engine)"
            )
            raise PolfairError(msg)
        seen.add(k)


def key_columns(frame: Any, request: PassOptions) -> list[tuple[str, Column]]:
    """The checked key columns of a pass: ``(role, column)`` for the ``by`` keys, then the protected ones."""
    return [(role, frame.column(x, role)) for role, items in (("by", request.by_keys), ("protected", request.protected_keys))
            for x in items]  # fmt: skip


def pass_keys(frame: Any, request: PassOptions, label: Column | None = None, reserved: Collection[str] = (), *,
              required: bool = True) -> list[tuple[str, Column]]:  # fmt: skip
    """The keys of a pass (:func:`key_columns`), checked once for every engine and room.

    A protected attribute is given (or estimated: ``protected_proba``; ``required=False``: a pass of
    counts that may be the population's only, e.g. a score histogram), none is the label column
    ``label`` (by name or, on Polars, by expression), and no key name is given twice or reserved
    (:func:`~polfair.core.passes.spec.check_key_names`, with ``reserved``).

    Raises
    ------
    PolfairError
        No protected attribute, a protected attribute that is the label, or a name clash.

    Examples
    --------
    >>> import polars as pl
    >>> from polfair.core.contract import PolarsFrame
    >>> f = PolarsFrame(pl.DataFrame({"y": [1], "g": ["a"], "m": [1]}))
    >>> [(r, c.name) for r, c in pass_keys(f, PassOptions(protected="g", by="m"))]
    [('by', 'm'), ('protected', 'g')]
    >>> pass_keys(f, PassOptions(protected="y"), f.column("y", "y_true"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    polfair.exceptions.PolfairError: protected attribute 'y' is the label column y_true='y'; a label cannot be ...
    """
    if required and not request.protected_keys and request.protected_proba is None:
        raise PolfairError(NO_PROTECTED)
    cols = key_columns(frame, request)
    for role, c in cols:
        # undo_aliases: pl.col("label").alias("x") is still the label column
        same = label is not None and (c.name == label.name or (
            isinstance(c.expr, pl.Expr) and c.expr.meta.undo_aliases().meta.eq(label.expr.meta.undo_aliases())))
        if role == "protected" and same:
            assert label is not None
            msg = (
                f"protected attribute {c.name!r} is the label column y_true={label.name!r}; a label "
                "cannot be its own protected attribute: pass the demographic columns as protected="
            )
            raise PolfairError(msg)
    check_key_names([c.name for r, c in cols if r == "by"], [c.name for r, c in cols if r != "by"],
                    also_reserved=sorted(reserved))  # fmt: skip
    return cols


def label_values(favorable: Any, unfavorable: Any) -> tuple[tuple[Any, ...], tuple[Any, ...] | None]:
    """``favorable`` / ``unfavorable`` as tuples; raise if they overlap."""
    fav = as_values(favorable)
    unfav = None if unfavorable is None else as_values(unfavorable)
    for arg, vals in (("favorable", fav), ("unfavorable", unfav)):
        if vals is None:
            continue
        if not vals or any(v is None for v in vals):
            msg = (
                f"{arg}={vals if len(vals) != 1 else vals[0]!r}: give the label value(s) of that "
                "outcome (null labels are always missing, counted in n_missing)"
            )
            raise PolfairError(msg)
    if unfav is not None and set(fav) & set(unfav):
        msg = f"favorable={list(fav)!r} and unfavorable={list(unfav)!r} overlap; a label is one or the other"
        raise PolfairError(msg)
    return fav, unfav


def _schema_of(source: pl.LazyFrame, exprs: dict[str, pl.Expr]) -> pl.Schema:
    """The output schema of named expressions over ``source``; a Polars error (an expression that
    does not type-check, e.g. ``pl.col("s") + 1`` on a string) becomes a PolfairError naming it.
    """
    try:
        return source.select([e.alias(r) for r, e in exprs.items()]).collect_schema()
    except pl.exceptions.PolarsError as exc:
        roles = ", ".join(f"{r}={e}" for r, e in exprs.items() if not r.startswith("__pf_"))
        msg = f"cannot evaluate the column expressions{' (' + roles + ')' if roles else ''} on the input: {exc}"
        raise PolfairError(msg) from exc


def classification_columns(
    eng: Engine,
    cols: dict[str, Column],
    favorable: tuple[Any, ...],
    unfavorable: tuple[Any, ...] | None,
    *,
    threshold: float,
    exact: bool = False,
    score_label: Any = None,
) -> tuple[dict[str, Compiled], dict[str, Any], Polarity | None]:
    """The classification pass's per-row columns, compiled by the contract in engine ``eng``.

    Written once for every engine: :func:`build_spec` calls it with
    :data:`polfair.core.contract.POLARS`, :mod:`polfair.engines.narwhals` with the narwhals engine.

    Parameters
    ----------
    eng
        The engine.
    cols
        Role -> :class:`polfair.core.contract.Column` for ``y_true`` and any of ``y_pred``,
        ``y_score``, ``weight``.
    favorable, unfavorable
        From :func:`label_values`.
    threshold
        The decision threshold of ``y_score`` when there is no ``y_pred``.
    exact
        ``exact_sums=True`` (the weight range of the fixed-point sums; no ``W1S`` column, since
        Σw·(1−s) is then Σw − Σw·s exactly).
    score_label
        The label ``y_score`` is the probability of, and a Boolean ``y_pred``'s True stands for (the
        polarity rule, :func:`polfair.core.contract.polarity`).

    Returns
    -------
    (dict, dict, Polarity or None)
        The compiled roles; the pass's columns: ``CODE`` and, where needed, ``W`` (Float64
        weight), ``WS`` (w·s, s the favorable label's probability), ``W1S`` (w·(1−s)), ``SF`` (s
        itself, for the passes that combine it with other per-row weights: estimated groups,
        slices; not a column of the report's pass), ``FV0, FV1, ...`` (a ``favorable`` list's values,
        1 on the rows of each); and the polarity rule's decision.

    Examples
    --------
    >>> import polars as pl
    >>> from polfair.core.contract import POLARS, Column
    >>> cols = {"y_true": Column("y", pl.col("y"), pl.Int64()), "y_pred": Column("p", pl.col("p"), pl.Int64())}
    >>> compiled, out, _ = classification_columns(POLARS, cols, (1,), None, threshold=0.5)
    >>> pl.DataFrame({"y": [1, 0], "p": [1, 1]}).select(out[CODE])["literal"].to_list()
    [5, 4]
    """
    compiled, pol = compile_labels(eng, y_true=cols["y_true"], y_pred=cols.get("y_pred"), favorable=favorable,
                                   unfavorable=unfavorable, score_label=score_label,
                                   score=cols["y_score"].name if "y_score" in cols else None)  # fmt: skip
    flags = []
    fv: dict[str, Any] = {}
    s = None
    sf = None  # the favorable label's probability (1 - y_score for a score of the unfavorable score_label)
    if "y_score" in cols:
        s = compiled["y_score"] = score(eng, cols["y_score"], unit_interval=True)
        flags.append(s.state)
        sf = pol.favorable_score(s.value) if pol is not None else s.value
    pred_state = compiled["y_pred"].state if "y_pred" in cols else None
    if pred_state is None and s is not None:
        # the prediction is score >= threshold, a prediction of score_label (favorable by default); a
        # missing score is counted as the score's
        hit, miss = (1, 0) if pol is None or pol.score_favorable else (0, 1)
        v = s.value
        pred_state = eng.cases([(v.is_null() | v.is_nan(), eng.small(MISSING)), (v >= float(threshold), eng.small(hit))],
                               eng.small(miss))  # fmt: skip
    yt = compiled.get("y_true")
    if yt is not None and yt.labels is not None and len(yt.labels[0]) > 1:  # each listed favorable value's rows
        for i, v in enumerate(yt.labels[0]):
            out_fv = eng.is_in(yt.source.expr, yt.source.dtype, (v,))
            fv[f"{FV}{i}"] = out_fv.cast(eng.ns.Int64)
    w = None
    if "weight" in cols:
        w = compiled["weight"] = weight(eng, cols["weight"], exact=exact)
        flags.append(w.state)
    out: dict[str, Any] = {CODE: outcome_code(eng, compiled["y_true"].state, pred_state, flags), **fv}
    if w is not None:
        out[W] = w.value
    if sf is not None:
        out[SF] = sf
        out[WS] = sf if w is None else w.value * sf
        if not exact:
            out[W1S] = (1.0 - sf) if w is None else w.value * (1.0 - sf)
    return compiled, out, pol


def favorable_value_columns(names: Sequence[str]) -> list[str]:
    """The per-value counts of a ``favorable`` list among ``names`` (:data:`FV`)."""
    return [n for n in names if n.startswith(FV)]


def build_spec(data: Any, options: PassOptions | None = None, /, **keywords: Any) -> Spec:
    """Validate a report request and build the normalised lazy frame (stage 1).

    ``options`` is the request (:class:`PassOptions`, or the :class:`~polfair.core.request.AuditRequest`
    a door built); without it, ``keywords`` are :class:`PassOptions`'s fields (those of
    :func:`polfair.confusion_counts`; see there). ``protected_proba``,
    ``proba_assignment`` and ``proba_tolerance`` add an attribute estimated from membership
    probabilities (:mod:`polfair.core.proba`; ``protected`` may then be empty). ``allow_many_groups`` is
    accepted for symmetry (the many-groups guard runs after the pass, in
    :func:`polfair.core.passes.collect.collect_cells`). ``cluster`` (a column name or expression of
    cluster ids, e.g. a user id) adds the ``bucket`` key, the hash of the id modulo ``n_buckets``
    (:func:`polfair.core.intervals.bucket_of`), to the same pass. ``exact_sums`` selects the
    fixed-point sums (:mod:`polfair.core.passes.counts`).

    Returns
    -------
    Spec

    Raises
    ------
    ColumnNotFoundError
        A named column is missing (the message suggests close names).
    PolfairError
        An option is invalid, a protected attribute is the label, or names collide.
    InvalidInputError
        A column's dtype is not allowed for its role, or ``favorable``/``unfavorable`` cannot be
        held by the label's dtype (:mod:`polfair.core.contract`).
    TypeError
        An argument is neither a column name nor an expression.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": [1, 0], "p": [1, 1], "g": ["a", "b"]})
    >>> build_spec(df, y_true="y", y_pred="p", protected="g").keys
    ('g',)
    """
    o = options if options is not None else PassOptions(**keywords)  # the guard allow_many_groups runs after the pass
    y_true, y_pred, y_score, weight = o.y_true, o.y_pred, o.y_score, o.weight
    threshold, cluster, exact_sums = cast(float, o.threshold), o.cluster, o.exact_sums
    frame = PolarsFrame(data)
    source, names = frame.lf, frame.names
    check_threshold(threshold)

    given = {"y_true": as_expr(cast("IntoExpr", y_true), "y_true"), "y_pred": y_pred, "y_score": y_score, "weight": weight}
    cols = {r: frame.column(v, r) for r, v in given.items() if v is not None}
    roles: dict[str, pl.Expr] = {r: c.expr for r, c in cols.items()}
    key_list = pass_keys(frame, o, cols["y_true"])
    by_names = tuple(c.name for r, c in key_list if r == "by")
    keys = tuple(c.name for r, c in key_list if r != "by")
    by_exprs = [c.expr for r, c in key_list if r == "by"]
    key_exprs = [c.expr for r, c in key_list if r != "by"]
    ps = None if o.protected_proba is None else parse_protected_proba(o.protected_proba, o.proba_assignment,
                                                                      o.proba_tolerance)  # fmt: skip
    if ps is not None:
        check_key_names(by_names, (*keys, ps.attribute))
    check_exact_sums(o)
    fav, unfav = label_values(o.favorable, o.unfavorable)
    key_cols = [key(POLARS, c, role=role).alias(c.name) for role, c in key_list]
    compiled, columns, pol = classification_columns(POLARS, cols, fav, unfav, threshold=threshold, exact=exact_sums,
                                                    score_label=o.score_label)  # fmt: skip

    sf = columns.pop(SF, None)  # the favorable label's probability (the polarity rule's reading of y_score)
    out = [*key_cols, columns.pop(CODE).alias(CODE)]
    if cluster is not None:
        from polfair.core.hashing import bucket_kind, bucket_of

        ce = as_expr(cluster, "cluster")
        check_columns(ce, "cluster", names)
        if output_name(ce, "cluster") in (*by_names, *keys):
            msg = f"cluster={output_name(ce, 'cluster')!r} is also a by/protected column; pass the cluster id (e.g. a user id)"
            raise PolfairError(msg)
        kind = bucket_kind(_schema_of(source, {"c": ce})["c"])
        out.append(bucket_of(ce, o.n_buckets, kind=kind).alias("bucket"))
    fold = fold_layout(source, [*by_exprs, *key_exprs], in_memory=isinstance(data, pl.DataFrame))
    weighted = "weight" in roles
    if ps is not None:  # an estimated attribute: its probability columns (polfair.core.proba)
        pexprs = [as_expr(e, "protected_proba") for e in ps.exprs]
        for e in pexprs:
            check_columns(e, "protected_proba", names)
        pschema = _schema_of(source, {f"__pf_p{i}": e for i, e in enumerate(pexprs)})
        pcols = [Column(output_name(e, "protected_proba"), e, dt) for e, dt in zip(pexprs, pschema.values())]
        ps = compile_proba(POLARS, ps, pcols, weighted=weighted, has_scores="y_score" in roles, fold=fold)
        assert ps.membership is not None
        compiled |= ps.membership.checks
        w_value = compiled["weight"].value if weighted else None
        if ps.assignment == "weighted":  # the probabilities' sums replace Σw, Σw·s, Σw·(1−s)
            columns = {}
            weighted = True
        columns |= proba_columns(POLARS, ps, w_value, sf)
        keys, fold = (*keys, ps.attribute), ()
    out += [e.alias(n) for n, e in columns.items()]
    return Spec(
        lf=source.select(out),
        source=source,
        by=by_names,
        keys=keys,
        has_predictions=("y_pred" in roles or "y_score" in roles),
        has_scores="y_score" in roles,
        weighted=weighted,
        roles=roles,
        favorable=fav,
        unfavorable=unfav,
        threshold=float(threshold),
        fold=fold,
        bucket=cluster is not None,
        compiled=compiled,
        exact=bool(exact_sums),
        examples=PolarsFrame(source).examples,
        key_exprs=tuple(key_cols),
        proba=ps,
        polarity=pol,
    )
