"""The counting passes on engines other than Polars (PySpark, DuckDB, sqlframe, ...), via narwhals.

For a frame that lives in another engine, polfair runs the same single pass *inside that engine*:
the input contract of :mod:`polfair.core.contract` is compiled by the very functions the Polars
pass uses (:func:`polfair.core.passes.spec.classification_columns`, ``contract.label/score/weight/key``),
given the narwhals :func:`engine` instead of Polars; the engine runs one
``group_by(by + protected keys + [code]).agg(sums)``, and only that small code table is collected
into Polars. The pivot to the cell table, the post-pass check and every metric then run in Polars
exactly as for a Polars input.

Column arguments must be column names here (Polars expressions cannot run in another engine).
Names are passed as names: the columns are renamed positionally to internal names first, so dots,
spaces and quotes work on every engine (Spark reads ``a.b`` as a struct field otherwise), and the
keys get their names back on the small result. Optional dependency: ``narwhals``
(``pip install 'polfair[spark]'`` installs it with pyspark).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import polars as pl

from polfair.core._args import check_columns
from polfair.core.contract import (
    CODE,
    PROBA_BAD,
    PROBA_NULL,
    PROBA_SUM,
    Column,
    Compiled,
    Engine,
    fetch_examples,
    key,
    weight_squares,
)  # fmt: skip
from polfair.core.contract.frame import Aggs, Stages
from polfair.core.contract.inputs import is_foreign
from polfair.core.hashing import bucket_expr, bucket_kind, check_n_buckets
from polfair.core.passes.counts import BUCKET, W2_DOWN, W2_UP, combine_limbs, exact_limb_columns
from polfair.core.passes.spec import (
    W1S,
    WS,
    Spec,
    W,
    check_key_names,
    check_threshold,
    classification_columns,
    label_values,
)
from polfair.core.proba import (
    DEFAULT_TOLERANCE,
    GROUP_INDEX,
    compile_proba,
    parse_protected_proba,
    proba_columns,
    proba_sums,
)
from polfair.exceptions import PolfairError

_W2 = "__pf_w2"  # an estimated attribute's pass: Σw² as polfair.core.passes.estimated expands it

__all__ = ["ForeignFrame", "engine", "foreign_code_table", "foreign_frame", "is_foreign", "polars_dtype"]

_N = "__pf_n"


def _narwhals(data: Any) -> Any:
    try:
        import narwhals as nw
    except ImportError as exc:  # exercised without the extra (tests/engines/test_foreign_extra.py)
        eng = type(data).__module__.split(".")[0]
        extra = "duckdb" if eng == "duckdb" else "spark"
        msg = (
            f"{type(data).__name__} frames ({eng}) need the optional extra: pip install "
            f"'polfair[{extra}]' (it installs narwhals), or convert the frame to polars first"
        )
        raise ImportError(msg) from exc
    return nw


def engine() -> Engine:
    """The narwhals engine of the input contract (:class:`polfair.core.contract.Engine`).

    Raises
    ------
    ImportError
        narwhals is not installed.

    Examples
    --------
    >>> engine().name  # doctest: +SKIP
    'narwhals'
    """
    import narwhals as nw

    return Engine("narwhals", nw)


def polars_dtype(dtype: Any, native: str = "") -> pl.DataType:
    """A narwhals dtype in the contract's vocabulary (Polars dtypes).

    Parameters
    ----------
    dtype
        A narwhals dtype (from ``collect_schema()``).
    native
        The engine's own type name, used where narwhals says ``Unknown`` (DuckDB ``NULL``, Spark
        ``void``: an all-null column of unknown type; DuckDB ``TIME_NS``; intervals).

    Returns
    -------
    pl.DataType
        ``pl.Object`` for a type without a Polars counterpart (refused by every role).

    Examples
    --------
    >>> import narwhals as nw  # doctest: +SKIP
    >>> polars_dtype(nw.Enum(["a", "b"]))  # doctest: +SKIP
    Enum(categories=['a', 'b'])
    """
    name = type(dtype).__name__ if not isinstance(dtype, type) else dtype.__name__
    simple = {"Int8", "Int16", "Int32", "Int64", "Int128", "UInt8", "UInt16", "UInt32", "UInt64", "UInt128",
              "Float32", "Float64", "Boolean", "String", "Date", "Time", "Binary", "Categorical"}  # fmt: skip
    if name in simple:
        return getattr(pl, name)()
    if name == "Float16":
        return pl.Float32()
    if name == "Enum":
        return pl.Enum(list(dtype.categories))
    if name == "Datetime":
        return pl.Datetime(getattr(dtype, "time_unit", "us") or "us", getattr(dtype, "time_zone", None))
    if name == "Duration":
        return pl.Duration(getattr(dtype, "time_unit", "us") or "us")
    if name == "Decimal":
        return pl.Decimal(getattr(dtype, "precision", 38) or 38, getattr(dtype, "scale", 0) or 0)
    if name in ("List", "Array"):
        return pl.List(pl.Null)
    if name in ("Struct", "Map"):
        return pl.Struct([])
    if name == "Unknown":  # narwhals has no word for it: the engine's own type name decides
        t = native.strip('"').lower()
        if t in ("null", "void", "nulltype"):
            return pl.Null()
        if t.startswith("time") and not t.startswith("timestamp"):  # DuckDB TIME_NS, TIME WITH TIME ZONE
            return pl.Time()
        if t.startswith("interval") or "interval" in t:
            return pl.Duration()
    return pl.Object()


def _names(x: str | Sequence[str] | None, role: str) -> list[str]:
    items = [] if x is None else [x] if isinstance(x, (str, pl.Expr)) else list(x)
    for item in items:
        if not isinstance(item, str):
            msg = (
                f"{role}: a {{Spark, DuckDB, ...}} frame takes column names only (str), not "
                f"{type(item).__name__}; compute derived columns in that engine first"
            )
            raise TypeError(msg)
    return items


class ForeignFrame:
    """A foreign frame with positionally renamed columns, its dtypes, and the contract's engine.

    Attributes
    ----------
    nf
        The narwhals lazy frame whose columns are named ``__pf_c0, __pf_c1, ...``.
    names
        The user's column names, in order.
    eng
        The narwhals :class:`~polfair.core.contract.Engine`.
    """

    def __init__(self, data: Any) -> None:
        nw = _narwhals(data)
        self.eng = engine()
        original = nw.from_native(data)
        schema = original.collect_schema()
        self.names: list[str] = list(schema.names())
        self._safe = {n: f"__pf_c{i}" for i, n in enumerate(self.names)}
        natives = _native_types(data, self.names)
        self._dtypes = {n: polars_dtype(schema[n], natives.get(n, "")) for n in self.names}
        module = type(data).__module__.split(".")[0]
        #: Spark TIMESTAMP (with local time zone) columns: instants, shown in the session's time zone
        self._spark_ltz: set[str] = set()
        self._spark: Any = None
        if module == "pyspark":  # Spark parses dots in names: rename by position (toDF)
            self.nf = nw.from_native(data.toDF(*self._safe.values()))
            self._spark_ltz = {n for n in self.names if natives.get(n) == "TimestampType"}
            self._spark = data.sparkSession if self._spark_ltz else None
        else:
            self.nf = original.rename(self._safe)
        #: DuckDB TIMESTAMPTZ columns: instants, returned in the connection's TimeZone; reported in UTC
        self._utc = {n for n in self.names if natives.get(n, "").upper().startswith("TIMESTAMP WITH TIME ZONE")}
        self.nf = self.nf.lazy() if hasattr(self.nf, "lazy") else self.nf

    def column(self, name: Any, role: str) -> Column:
        """The :class:`~polfair.core.contract.Column` of a user column (internal name, Polars dtype).

        Raises
        ------
        TypeError
            ``name`` is not a column name (expressions cannot run in another engine).
        ColumnNotFoundError
            No such column (close names suggested).
        """
        (name,) = _names(name, role)
        check_columns(pl.col(name), role, self.names)
        return Column(name, self.eng.ns.col(self._safe[name]), self._dtypes[name])

    def string_key(self, name: str) -> Any:
        """The Int64 key of a string column computed by the engine's own SQL
        (:func:`polfair.core.hashing.string_key_sql`: the key Polars computes, from the UTF-8 bytes);
        a column added to the frame, returned as a narwhals expression.

        Raises
        ------
        PolfairError
            An engine other than Spark and DuckDB.
        """
        import narwhals as nw

        from polfair.core.hashing import string_key_sql

        inner, out = self._safe[name], f"__pf_skey_{self._safe[name]}"
        native = self.nf.to_native()
        module = type(native).__module__.split(".")[0]
        if module == "pyspark":
            from pyspark.sql import functions as F  # noqa: N812

            native = native.withColumn(out, F.expr(string_key_sql(f"`{inner}`", "spark")))
        elif module == "duckdb":
            native = native.project(f'*, ({string_key_sql(chr(34) + inner + chr(34), "duckdb")}) AS "{out}"')
        else:
            msg = f"cluster={name!r}: string cluster ids need Spark, DuckDB or Polars; map them to integers first"
            raise PolfairError(msg)
        self.nf = nw.from_native(native).lazy()
        return nw.col(out)

    def examples(self, c: Compiled) -> list[Any]:
        """A few offending values of a compiled role (a second query in the engine, error path only)."""
        return fetch_examples(self.nf, self.eng.ns, c, lambda q: q.collect(backend="polars").to_native())

    def plan(
        self, columns: Mapping[str, Any], group: Sequence[str], aggs: Callable[[Any], list[Any]]
    ) -> tuple[Any, list[str], dict[str, str]]:
        """The row-level query of :meth:`aggregate` (not run), its group keys, and the renaming back.

        Returns
        -------
        (narwhals.LazyFrame, list of str, dict)
            ``select(columns)`` in the engine with engine-safe names, the keys' names in it, and
            internal output name -> the name to give it back. :meth:`aggregate` groups it by the
            keys and applies ``aggs``; a test may batch several plans into one query.
        """
        del aggs
        inner = {n: (n if n.startswith("__pf_") else f"__pf_a{i}") for i, n in enumerate(columns)}
        planned = self.nf.select(**{inner[n]: e for n, e in columns.items()})
        return planned, [inner[g] for g in group], {v: k for k, v in inner.items() if v != k}

    def aggregate(self, columns: Mapping[str, Any], group: Sequence[str], aggs: Aggs, engine: str = "auto",
                  stages: Stages | None = None) -> pl.DataFrame:  # fmt: skip
        """``select(columns).group_by(group).agg(aggs(nw))`` in the frame's engine, collected to Polars.

        Output names that are not polfair's internal ``__pf_*`` ones (the user's key names, which may
        hold dots) are renamed for the engine and back on the small result. ``aggs`` and ``stages``
        (``with_columns`` steps before the ``group_by``, given the engine's names of the group
        columns for their windows) refer to internal names only. ``engine`` (a Polars engine name)
        is ignored.
        """
        del engine
        planned, keys, back = self.plan(columns, group, aggs)
        for stage in stages(self.eng.ns, keys) if stages else []:
            planned = planned.with_columns(**dict(stage))
        table = planned.group_by(*keys).agg(*aggs(self.eng.ns)) if keys else planned.select(*aggs(self.eng.ns))
        with self._session_in_utc() as session_tz:
            native = table.collect(backend="polars").to_native()
        native = native.rename({k: v for k, v in back.items() if k in native.columns})
        return self._wall_time(native, session_tz)

    @contextlib.contextmanager
    def _session_in_utc(self) -> Iterator[str | None]:
        """Spark with TIMESTAMP keys: the session's time zone pinned to UTC while the pass runs (the
        instants then come back as UTC whatever the JVM's or the session's zone); yields the
        session's own zone (``None`` for other engines).
        """
        if self._spark is None:
            yield None
            return
        conf = self._spark.conf
        zone = str(conf.get("spark.sql.session.timeZone"))
        conf.set("spark.sql.session.timeZone", "UTC")
        try:
            yield zone
        finally:
            conf.set("spark.sql.session.timeZone", zone)

    def _wall_time(self, native: pl.DataFrame, session_tz: str | None) -> pl.DataFrame:
        """DuckDB TIMESTAMPTZ keys in UTC; Spark TIMESTAMP keys as the wall-clock time Spark shows in the
        session's time zone (naive):
        a Polars frame of naive datetimes given to Spark (read as local times of the session)
        then gives the groups it gives in Polars, in any session time zone.
        """
        utc = [c for c in self._utc if c in native.columns and getattr(native.schema[c], "time_zone", None)]
        if utc:  # DuckDB TIMESTAMPTZ: the same instants in UTC, whatever the connection's TimeZone
            native = native.with_columns([pl.col(c).dt.convert_time_zone("UTC") for c in utc])
        cols = [c for c in self._spark_ltz if c in native.columns and isinstance(native.schema[c], pl.Datetime)]
        if not cols or session_tz is None:
            return native
        out = []
        for c in cols:
            x = pl.col(c)
            if native.schema[c].time_zone is None:  # type: ignore[attr-defined]
                x = x.dt.replace_time_zone("UTC")  # pinned session: UTC wall time
            out.append(x.dt.convert_time_zone(session_tz).dt.replace_time_zone(None).alias(c))
        return native.with_columns(out)


def _native_types(data: Any, names: list[str]) -> dict[str, str]:
    """The engine's own type names (where narwhals reports ``Unknown``, and the time zone semantics of timestamps)."""
    try:
        if type(data).__module__.split(".")[0] == "duckdb":
            return {n: str(t) for n, t in zip(names, data.dtypes)}
        if type(data).__module__.split(".")[0] == "pyspark":
            return {f.name: type(f.dataType).__name__ for f in data.schema.fields}
    except Exception:  # pragma: no cover - best effort; Unknown then stays an unsupported type
        return {}
    return {}


def foreign_frame(data: Any) -> ForeignFrame:
    """Wrap a Spark/DuckDB/... frame for a pass (see :class:`ForeignFrame`).

    Raises
    ------
    ImportError
        narwhals is not installed (the message names the extra).
    """
    return ForeignFrame(data)


def foreign_code_table(
    data: Any,
    *,
    y_true: str,
    y_pred: str | None = None,
    y_score: str | None = None,
    threshold: float = 0.5,
    protected: str | Sequence[str],
    favorable: Any = 1,
    unfavorable: Any = None,
    weight: str | None = None,
    by: str | Sequence[str] | None = None,
    cluster: str | None = None,
    n_buckets: int = 20,
    exact_sums: bool = False,
    protected_proba: Mapping[str, Mapping[str, str | None]] | None = None,
    proba_assignment: str = "weighted",
    proba_tolerance: float = DEFAULT_TOLERANCE,
    score_label: Any = None,
) -> tuple[pl.DataFrame, Spec]:
    """Run the counting pass inside the frame's own engine; return the code table and the spec.

    Parameters
    ----------
    data
        A PySpark DataFrame, DuckDB relation, or another frame narwhals supports lazily.
    y_true, y_pred, y_score, threshold, protected, favorable, unfavorable, weight, by, exact_sums, score_label
        As in :func:`polfair.confusion_counts`, but column names only.
    protected_proba, proba_assignment, proba_tolerance
        An attribute estimated from membership probabilities (column names), as in
        :func:`polfair.confusion_counts`: the pass sums the probabilities' columns
        (:func:`polfair.core.proba.proba_columns`, the same code as for Polars) and the returned code
        table is the pass's result; :func:`polfair.core.passes.estimated.expand_codes` turns it into
        the cells' code table (``collect_cells`` does).
    cluster, n_buckets
        The jackknife's cluster id (a name) and number of buckets, as for Polars: the ``bucket`` key
        is computed in the engine with the integers Polars computes (:func:`polfair.core.hashing.bucket_expr`);
        integer, Boolean and string ids (others raise).

    Returns
    -------
    (pl.DataFrame, Spec)
        The per-(by, keys, outcome code) counts, collected into Polars (small; the same columns
        and integers as the Polars pass's, :func:`polfair.core.passes.counts.code_counts`), and the spec
        (``lf`` and ``source`` are ``None``).

    Raises
    ------
    ImportError
        narwhals is not installed.
    ColumnNotFoundError, PolfairError, InvalidInputError, TypeError
        As for Polars inputs (the same contract); expressions instead of names raise ``TypeError``.

    Examples
    --------
    >>> import duckdb  # doctest: +SKIP
    >>> rel = duckdb.sql("select * from (values (1, 1, 'a'), (0, 1, 'b')) t(y, p, g)")  # doctest: +SKIP
    >>> codes, spec = foreign_code_table(rel, y_true="y", y_pred="p", protected="g")  # doctest: +SKIP
    """
    _narwhals(data)
    check_threshold(threshold)
    ff = foreign_frame(data)
    given = {"y_true": y_true, "y_pred": y_pred, "y_score": y_score, "weight": weight}
    roles: dict[str, str] = {r: _names(v, r)[0] for r, v in given.items() if v is not None}
    keys, by_names = _names(protected, "protected"), _names(by, "by")
    ps = None if protected_proba is None else parse_protected_proba(protected_proba, proba_assignment, proba_tolerance)
    if not keys and ps is None:
        msg = "protected must name at least one column, e.g. protected=['sex']"
        raise PolfairError(msg)
    for role, name in [*roles.items(), *(("protected", k) for k in keys), *(("by", b) for b in by_names)]:
        ff.column(name, role)
    if y_true in keys:
        msg = f"protected attribute {y_true!r} is the label column y_true; pass the demographic columns as protected="
        raise PolfairError(msg)
    check_key_names(by_names, keys if ps is None else [*keys, ps.attribute])
    if ps is not None and exact_sums:
        msg = "exact_sums=True is not available with protected_proba; use the default Float64 sums"
        raise PolfairError(msg)
    fav, unfav = label_values(favorable, unfavorable)
    eng = ff.eng
    compiled, columns, pol = classification_columns(eng, {r: ff.column(n, r) for r, n in roles.items()}, fav, unfav,
                                                    threshold=threshold, exact=exact_sums,
                                                    score_label=score_label)  # fmt: skip
    group = [*by_names, *keys]
    select: dict[str, Any] = {g: key(eng, ff.column(g, "by" if g in by_names else "protected"),
                                     role="by" if g in by_names else "protected") for g in group}  # fmt: skip
    if cluster is not None:  # the jackknife bucket, computed in the engine (the Polars integers: core.hashing)
        select[BUCKET] = _bucket(ff, cluster, n_buckets, [*by_names, *keys])
        group.append(BUCKET)
    select[CODE] = columns[CODE]
    weighted = weight is not None
    if ps is not None:  # an estimated attribute: its probability columns, compiled as for Polars
        pcols = [ff.column(e, "protected_proba") for e in ps.exprs]  # names only (column() says so otherwise)
        ps = compile_proba(eng, ps, pcols, weighted=weighted, has_scores=y_score is not None)
        assert ps.membership is not None
        compiled |= ps.membership.checks
        w, s = compiled.get("weight"), compiled.get("y_score")
        pcolumns = proba_columns(eng, ps, None if w is None else w.value, None if s is None else s.value)
        if ps.assignment == "weighted":
            columns = {}
            weighted = True
        else:
            group.append(GROUP_INDEX)
        select |= pcolumns
    if exact_sums:
        w = compiled.get("weight")
        s = compiled.get("y_score")
        ok_w = eng.lit(True) if w is None else w.state == 0
        ok_ws = ok_w if s is None else ok_w & (s.state == 0)
        limbs = exact_limb_columns(eng, None if w is None else w.value, columns.get(WS), ok_w, ok_ws)
        select |= limbs
        sums = list(limbs)
    else:
        for c in (W, WS, W1S):
            if c in columns:
                select[c] = columns[c]
        if W in columns and ps is not None:  # an estimated attribute's pass: Σw² as proba_cells expands it
            select[_W2] = columns[W] * columns[W]
        elif W in columns:  # Σw² per (cell, code): Kish effective sizes, in the contract's two accumulators
            select[W2_UP], select[W2_DOWN] = weight_squares(columns[W])
        sums = [c for c in (W, _W2, W2_UP, W2_DOWN, WS, W1S) if c in select]
        sums += [] if ps is None else proba_sums(ps)
    native = ff.aggregate(select, [*group, CODE], lambda ns: [ns.len().alias(_N), *(ns.col(c).sum() for c in sums)])
    casts = {CODE: pl.UInt8, _N: pl.UInt64, W: pl.Float64, _W2: pl.Float64, W2_UP: pl.Float64, W2_DOWN: pl.Float64,
             WS: pl.Float64, W1S: pl.Float64, BUCKET: pl.UInt8}  # fmt: skip
    if ps is not None:
        casts |= {c: pl.UInt64 if c in (PROBA_NULL, PROBA_BAD, PROBA_SUM) else pl.Float64 for c in proba_sums(ps)}
        casts[GROUP_INDEX] = pl.UInt8
    codes = native.with_columns([pl.col(c).cast(t) for c, t in casts.items() if c in native.columns])
    if exact_sums:
        codes = combine_limbs(codes)
    spec = Spec(
        lf=None,
        source=None,
        by=tuple(by_names),
        keys=tuple(keys) if ps is None else (*keys, ps.attribute),
        has_predictions=y_pred is not None or y_score is not None,
        has_scores=y_score is not None,
        weighted=weighted,
        roles={r: pl.col(n) for r, n in roles.items()},
        favorable=fav,
        unfavorable=unfav,
        threshold=float(threshold),
        compiled=compiled,
        exact=bool(exact_sums),
        examples=ff.examples,
        proba=ps,
        polarity=pol,
        bucket=cluster is not None,
    )
    return codes, spec


def _bucket(ff: ForeignFrame, cluster: Any, n_buckets: int, keys: Sequence[str]) -> Any:
    """The jackknife bucket of a cluster column in the engine: the integers of
    :func:`polfair.core.hashing.bucket_of` (integer and Boolean ids directly, string ids through
    their byte key); other dtypes are refused (their Polars hash has no SQL twin).
    """
    (name,) = _names(cluster, "cluster")
    check_n_buckets(n_buckets)
    c = ff.column(name, "cluster")
    if name in keys:
        msg = f"cluster={name!r} is also a by/protected column; pass the cluster id (e.g. a user id)"
        raise PolfairError(msg)
    kind = bucket_kind(c.dtype)
    if kind == "integer":
        key_expr = c.expr.cast(ff.eng.ns.Int64)
    elif kind == "string":
        key_expr = ff.string_key(name)
    else:
        msg = (
            f"cluster={name!r} has dtype {c.dtype}: on Spark/DuckDB cluster ids must be integers, Booleans or "
            "strings (the bucket hash every engine computes identically); cast the column in the engine first"
        )
        raise PolfairError(msg)
    return bucket_expr(ff.eng.ns, key_expr, n_buckets)
