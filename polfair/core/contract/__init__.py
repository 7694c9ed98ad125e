"""The input contract: what every role accepts, written ONCE and compiled into every pass on every engine.

Every door of polfair (``fairness_report``, ``confusion_counts``, the score histograms and curves,
``group_thresholds``, ``reweighing``, ``proxy_scan``, ``adverse_impact``, ``multiclass_report``,
the accumulator, the peer facades and the CLI) reads raw rows only through this module. It holds
the rules (:data:`ROLES`, rendered as the table of ``docs/contract.md``) and the functions that
compile them into expressions. The functions take an :class:`Engine`, a thin adapter over an
expression namespace that mirrors Polars' API (``col``, ``lit``, ``when/then/otherwise``,
``is_null``, ``is_nan``, ``is_in``, ``cast``, ``sum``): :data:`POLARS` here, and the narwhals
engine that :mod:`polfair.engines.narwhals` passes in for Spark, DuckDB and other lazy frames.
So Polars, DuckDB and Spark run the same rules from the same code; the core never imports
narwhals. Dtypes come from the schema each engine reports, mapped to one vocabulary (Polars
dtypes; :func:`dtype_kind`).

The rules in short (the full table is :data:`ROLES` / ``docs/contract.md``):

* **labels** (``y_true``, ``y_pred``): ``favorable``/``unfavorable`` are matched in the column's
  dtype (:mod:`polfair.core.values`); null and NaN are missing; with ``unfavorable`` a value in
  neither set is invalid; a Float value that is not a whole number (``0.37``: a probability passed
  as a label) or is infinite is invalid, with the fix ``y_score=..., threshold=``.
* **scores** (``y_score``): numeric; null and NaN are missing; ±inf is invalid, and so is a value
  outside [0, 1] where a pass needs probabilities (the classification cells, Brier, ECE).
* **numeric outcomes** (``y_true``/``y_pred`` of a regression pass, issue 23): numeric, finite;
  null and NaN are missing; ±inf is invalid.
* **weights**: numeric; null and NaN are missing; negative and ±inf are invalid; with
  ``exact_sums=True`` a weight must be 0 or in [2**-16, 2**40) (what the fixed-point grid holds to
  2**-40 relative).
* **membership probabilities** (``protected_proba``, an attribute estimated from proxies such as
  BISG): numeric in [0, 1]; a null or NaN among a row's probabilities makes its group unknown
  (missing); a row's probabilities sum to 1 within a tolerance (or name a remainder group); each
  row's probabilities are divided by their sum (:func:`membership`; the pass:
  :mod:`polfair.core.proba`).
* **keys** (``protected``, ``by``): Boolean, integer, Float, Decimal, String, Categorical, Enum, Date,
  Datetime; Time/Duration/nested are refused (bin them). Null is its own group; NaN in a Float key
  is the null group too; ``-0.0`` is ``0.0``. The many-groups guard is about cardinality (after the
  pass), not dtype.

API for a pass (what a new pass composes; see :func:`polfair.core.passes.spec.build_spec` and
``polfair.scores.counts`` for two users)::

    eng = POLARS                                   # or the narwhals engine: same calls
    col = Column("y", pl.col("y"), dtype)          # the user's column, its dtype, its display name
    y   = label(eng, col, favorable=(1,), unfavorable=None, role="y_true")   # -> Compiled
    t   = numeric(eng, col, role="y_true")         # regression target: Compiled(value Float64, state)
    e   = loss(eng, col)                           # a per-row loss (slice search): Compiled(value, state)
    s   = score(eng, col, unit_interval=True)      # -> Compiled(value Float64, flag bits)
    w   = weight(eng, col, exact=False)            # -> Compiled(value Float64, flag bits)
    k   = key(eng, col, role="protected")          # normalised key expression (-0.0, NaN)
    o   = outcome_code(eng, y.state, p.state, [s.state, w.state])           # the one outcome code
    ... frame.group_by(keys + [CODE]).agg(len, sums) ...                    # the pass itself
    check_problems(code_problems(codes), roles, total=..., on_missing=...)  # the one post-pass check

A pass that should run on every engine takes its input through a frame adapter with one
interface, the :class:`Frame` protocol (:mod:`.frame`): :class:`PolarsFrame` here,
``polfair.engines.narwhals.ForeignFrame`` for Spark/DuckDB; ``polfair.engines.frame.frame_of(data)``
picks one.
``frame.eng`` is the engine, ``frame.column(x, role)`` the checked :class:`Column` of an argument,
``frame.aggregate(columns, group, aggs)`` runs ``select(columns).group_by(group).agg(aggs(ns))``
in the frame's engine and returns a Polars frame, and ``frame.examples(compiled)`` fetches example
values on the error path. ``polfair.scores.counts`` (the score histograms) is written that way.

The outcome code (``CODE``, one small integer per row) is ``a + 4·b + 16·flags`` with ``a`` the
state of ``y_true`` and ``b`` that of ``y_pred`` (0 unfavorable / value ok, 1 favorable,
:data:`MISSING`, :data:`INVALID`) and the flag bits :data:`FLAG_BAD_SCORE`, :data:`FLAG_BAD_WEIGHT`,
:data:`FLAG_NULL_WEIGHT`, :data:`FLAG_NULL_SCORE`. A regression pass puts its numeric states in
``a`` and ``b`` (0 ok) and reuses everything else.

**Polarity** (``docs/contract.md#polarity``): what ``y_score`` and a Boolean ``y_pred`` next to
non-Boolean labels mean relative to ``favorable``. scikit-learn's ``predict_proba(X)[:, 1]`` is the
probability of the larger label, aif360's scores are the favorable label's; where the two differ,
``score_label=`` (the label the score is the probability of, and a Boolean prediction's True stands
for) must say which: :func:`polarity` decides before the pass where the dtype or options tell, and
otherwise the pass checks the labels (the label's state field) and the post-pass check raises
:class:`~polfair.exceptions.PolarityError`. :func:`polarity_alarms` warns when the result looks
inverted anyway (accuracy below 0.5, scores higher on unfavorable labels).

The module re-exports the public names of four concept modules: the rules and the contract table
(:mod:`polfair.core.contract.rules`), the engine adapter and the compiled roles
(:mod:`polfair.core.contract.compile`), the polarity rule (:mod:`polfair.core.contract.polarity`),
and the post-pass check with the Polars frame adapter (:mod:`polfair.core.contract.check`).
"""

from __future__ import annotations

from polfair.core.contract import rules
from polfair.core.contract.check import (
    PROBA_BAD,
    PROBA_NULL,
    PROBA_SUM,
    W2_SHIFT,
    PolarsFrame,
    check_finite_sums,
    check_polarity,
    check_problems,
    code_problems,
    fetch_examples,
    label_values_warnings,
    seen_values,
    weight_range_message,
    weight_squares,
    weight_units,
)
from polfair.core.contract.compile import (
    MEMBERSHIP_OK,
    MEMBERSHIP_SUM,
    POLARS,
    Column,
    Compiled,
    Engine,
    Membership,
    check_dtype,
    key,
    label,
    loss,
    membership,
    numeric,
    outcome_code,
    score,
    weight,
)
from polfair.core.contract.frame import Frame
from polfair.core.contract.polarity import (
    Polarity,
    cell_alarms,
    compile_labels,
    decision_reading,
    polarity,
    polarity_alarms,
    polarity_table,
)
from polfair.core.contract.rules import *  # noqa: F403  (the rules' public names: rules.__all__)

__all__ = [
    *(n for n in rules.__all__ if n != "KINDS"),  # KINDS: importable, as before the split; not in __all__
    "MEMBERSHIP_OK",
    "MEMBERSHIP_SUM",
    "POLARS",
    "PROBA_BAD",
    "PROBA_NULL",
    "PROBA_SUM",
    "Polarity",
    "W2_SHIFT",
    "Column",
    "Compiled",
    "Engine",
    "Frame",
    "Membership",
    "PolarsFrame",
    "cell_alarms",
    "check_dtype",
    "check_finite_sums",
    "check_polarity",
    "check_problems",
    "code_problems",
    "compile_labels",
    "decision_reading",
    "fetch_examples",
    "key",
    "label",
    "loss",
    "membership",
    "label_values_warnings",
    "numeric",
    "outcome_code",
    "polarity",
    "polarity_alarms",
    "polarity_table",
    "score",
    "seen_values",
    "weight",
    "weight_range_message",
    "weight_squares",
    "weight_units",
]
