"""The counting passes on engines other than Polars (PySpark, DuckDB, sqlframe, ...), via narwhals.

For a frame that lives in another engine, polfair runs the same single pass *inside that engine*:
the input contract of :mod:`polfair.core.contract` is compiled by the very functions the Polars
pass uses (:func:`polfair.core.passes.spec.classification_columns`, ``contract.label/score/weight/key``),
given the narwhals :func:`engine` instead of Polars; the engine runs one
``group_by(by + protected keys + [code]).agg(sums)``, and only that small code table is collected
into Polars. The pivot to the cell table, the post-pass check and every metric then run in Polars
exactly as for a Polars input.

Column arguments must be column names here (Polars expressions cannot run in another engine); an
Ibis table (PostgreSQL, DuckDB, ...) also takes Ibis expressions and SQL expression strings
(:meth:`ForeignFrame.derive`), and its query runs as dialect-proof SQL (:mod:`polfair.engines.dialects`).
Names are passed as names: the columns are renamed positionally to internal names first, so dots,
spaces and quotes work on every engine (Spark reads ``a.b`` as a struct field otherwise), and the
keys get their names back on the small result. Optional dependency: ``narwhals``
(``pip install 'polfair[spark]'`` installs it with pyspark).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, cast

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
from polfair.core.contract.check import W2_SHIFT
from polfair.core.contract.frame import Aggs, Stages
from polfair.core.contract.inputs import is_foreign
from polfair.core.hashing import bucket_expr, bucket_kind, check_n_buckets
from polfair.core.passes.collect import ONE_SQUARE_MIN
from polfair.core.passes.counts import BUCKET, W2_DOWN, W2_UP, combine_limbs, exact_limb_columns
from polfair.core.passes.skeleton import estimated_stage, pass_keys
from polfair.core.passes.spec import (
    SF,
    W1S,
    WS,
    PassOptions,
    Spec,
    W,
    check_exact_sums,
    check_threshold,
    classification_columns,
    favorable_value_columns,
    label_values,
)
from polfair.core.proba import (
    GROUP_INDEX,
    proba_columns,
    proba_sums,
)
from polfair.exceptions import InvalidInputError, PolfairError

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

    #: Whether a weighted SQL pass may sum w² plainly and run a second query where a weight is beyond
    #: 1e±63 (:func:`_flags_as_aggregates`); ``False``: the two accumulators in the one query (the
    #: query of :func:`polfair.counting_sql`, which must be complete in itself).
    ranged_sums = True

    def __init__(self, data: Any) -> None:
        nw = _narwhals(data)
        _refuse_sqlframe(data)
        self.eng = engine()
        self._source = data
        original = nw.from_native(data)
        schema = original.collect_schema()
        self.names: list[str] = list(schema.names())
        self._safe = {n: f"__pf_c{i}" for i, n in enumerate(self.names)}
        natives = _native_types(data, self.names)
        self._dtypes = {n: polars_dtype(schema[n], natives.get(n, "")) for n in self.names}
        module = type(data).__module__.split(".")[0]
        self._ibis = module == "ibis"
        self._weight: str | None = None  # the weight column's name, for the overflow message
        self._stored: dict[str, str] = {}  # a derived column's display name -> its name in the database
        #: Spark TIMESTAMP (with local time zone) columns: instants, shown in the session's time zone
        self._spark_ltz: set[str] = set()
        self._spark: Any = None
        if module == "pyspark":  # Spark parses dots in names: rename by position (toDF)
            self.nf = nw.from_native(data.toDF(*self._safe.values()))
            self._spark_ltz = {n for n in self.names if natives.get(n) == "TimestampType"}
            self._spark = data.sparkSession if self._spark_ltz else None
            for n in self._spark_ltz:  # their keys come back as wall-clock times (naive): so is their dtype
                dt = self._dtypes[n]
                self._dtypes[n] = pl.Datetime(getattr(dt, "time_unit", "us") or "us")
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
        name = self.derive(name, role)
        (name,) = _names(name, role)
        check_columns(pl.col(name), role, self.names)
        if role == "weight":
            self._weight = name
        return Column(name, self.eng.ns.col(self._safe[name]), self._dtypes[name])

    def derive(self, item: Any, role: str) -> Any:
        """An Ibis table's derived column: an Ibis expression (``t.decile_score >= 5``, ``ibis._.x + 1``)
        or a SQL expression string (``"decile_score >= 5"``, ``"CASE ... END AS band"``) is added to
        the table (computed in the database) and its name returned; anything else is returned as is.

        Raises
        ------
        PolfairError
            The SQL text does not parse, or names no column of the table (the database's message).
        """
        if not self._ibis or isinstance(item, pl.Expr) or (isinstance(item, str) and item in self.names):
            return item
        import narwhals as nw

        if isinstance(item, str) and not any(ch in item for ch in " ()<>=+-*/'|!"):
            return item  # a mistyped name: column() names close ones
        column = f"pf_derived{len(self.names)}"  # its name in the database (a display name may be long)
        try:
            if isinstance(item, str):
                name, self._source = _sql_column(self._source, item, role, self.names, column)
            else:
                getter = getattr(item, "get_name", None)
                try:
                    name = str(getter()) if getter is not None else f"{role}_expr"
                except Exception:  # an unnamed Ibis expression
                    name = f"{role}_expr"
                name = f"{name} ({role})" if name in self.names else name
                self._source = self._source.mutate(**{column: item})
            schema = nw.from_native(self._source).collect_schema()
        except PolfairError:
            raise
        except Exception as exc:
            msg = f"{role}={item!r}: the expression cannot be computed on this table: {exc}"
            raise PolfairError(msg) from exc
        self._safe[name] = f"__pf_c{len(self.names)}"
        self._stored[name] = column
        self.names.append(name)
        self._dtypes[name] = polars_dtype(schema[column])
        self.nf = nw.from_native(self._source).rename({self._stored.get(n, n): s for n, s in self._safe.items()}).lazy()
        return name

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
        return fetch_examples(self.nf, self.eng.ns, c, self._collect)

    def _collect(self, q: Any) -> pl.DataFrame:
        """Run a (small) narwhals query in the engine and return it in Polars; an Ibis query runs as
        dialect-proof SQL (:func:`polfair.engines.sql.typed_sql`), and a numeric overflow raised by
        the database (PostgreSQL refuses a float sum past Float64) becomes the contract's message.
        """
        if self._ibis:
            from polfair.engines.dialects import ibis_collect

            try:
                return ibis_collect(q.to_native())
            except Exception as exc:
                text = str(exc).lower()
                if "out of range" in text and ("overflow" in text or "underflow" in text) and self._weight:
                    msg = (f"weight={self._weight!r}: the weighted sum of a group overflows Float64 (each weight is "
                           "finite, the sum is not); rescale the weights, e.g. divide them by their mean: every "
                           "rate is unchanged")  # fmt: skip
                    raise InvalidInputError(msg) from exc
                raise
        return q.collect(backend="polars").to_native()

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
            native = self._collect(table)
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


def _sql_column(table: Any, text: str, role: str, taken: Sequence[str], column: str) -> tuple[str, Any]:
    """A SQL expression string (``"decile_score >= 5"``, ``"CASE ... END AS band"``) computed on an
    Ibis ``table``: its name (the ``AS`` alias, or the text) and the table with that column added.
    """
    try:
        import sqlglot
        from sqlglot import exp

        tree = sqlglot.parse_one(text, dialect="postgres")
    except Exception as exc:
        msg = f"{role}={text!r} is neither a column nor a SQL expression that parses: {exc}"
        raise PolfairError(msg) from exc
    name = tree.alias if isinstance(tree, exp.Alias) else text
    name = f"{name} ({role})" if name in taken else name
    body = (tree.this if isinstance(tree, exp.Alias) else tree).sql(dialect="postgres")
    quoted = f'"{column}"'
    try:
        alias = f"pf_input{len(taken)}"
        con = table._find_backend()
        if con.name == "duckdb":  # Ibis 12's Table.sql asks DuckDB 2 for a method it no longer has: type it here
            import ibis
            from ibis.backends.sql.datatypes import DuckDBType

            inner = (tree.this if isinstance(tree, exp.Alias) else tree).sql(dialect="duckdb")
            query = f"SELECT *, {inner} AS {quoted} FROM ({con.compile(table)}) AS {alias}"
            rel = con.con.sql(query)
            schema = ibis.schema({n: DuckDBType.from_string(str(t)) for n, t in zip(rel.columns, rel.types)})
            return name, con.sql(query, schema=schema, dialect="duckdb")
        return name, table.alias(alias).sql(f"SELECT *, {body} AS {quoted} FROM {alias}", dialect="postgres")
    except Exception as exc:
        msg = f"{role}={text!r}: the database cannot compute this expression: {exc}"
        raise PolfairError(msg) from exc


def _refuse_sqlframe(data: Any) -> None:
    """Refuse SQLFrame frames other than its DuckDB and Databricks ones, naming the way that works.

    They cannot be collected through narwhals (no Arrow export).
    """
    mod = type(data).__module__
    if mod.split(".")[0] == "sqlframe" and not mod.startswith(("sqlframe.duckdb", "sqlframe.databricks")):
        backend = mod.split(".")[1] if "." in mod else "this"
        msg = (
            f"SQLFrame {backend} DataFrames cannot be collected through narwhals (no Arrow export); pass an "
            f"Ibis table of the same database instead, e.g. ibis.{backend}.connect(...).table('name') "
            "(pip install 'polfair[sql]'), or a SQLFrame DuckDB DataFrame"
        )
        raise PolfairError(msg)


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
    data: Any, options: PassOptions | None = None, /, *, frame_class: type[ForeignFrame] | None = None, **keywords: Any,
) -> tuple[pl.DataFrame, Spec]:
    """Run the counting pass inside the frame's own engine; return the code table and the spec.

    Parameters
    ----------
    data
        A PySpark DataFrame, DuckDB relation, or another frame narwhals supports lazily.
    options
        The request (:class:`~polfair.core.passes.spec.PassOptions`, or the
        :class:`~polfair.core.request.AuditRequest` a door built); without it, ``keywords`` are its fields.
    **keywords
        Without ``options``, its fields by name (column names only). ``y_true, y_pred, y_score,
        threshold, protected, favorable, unfavorable, weight, by, exact_sums, score_label``: as in
        :func:`polfair.confusion_counts`. ``protected_proba, proba_assignment, proba_tolerance``: an
        attribute estimated from membership probabilities (column names), as in
        :func:`polfair.confusion_counts`: the pass sums the probabilities' columns
        (:func:`polfair.core.proba.proba_columns`, the same code as for Polars) and the returned code
        table is the pass's result; :func:`polfair.core.passes.estimated.expand_codes` turns it into
        the cells' code table (``collect_cells`` does). ``cluster, n_buckets``: the jackknife's
        cluster id (a name) and number of buckets, as for Polars: the ``bucket`` key is computed in
        the engine with the integers Polars computes (:func:`polfair.core.hashing.bucket_expr`);
        integer, Boolean and string ids (others raise).
    frame_class
        The frame adapter (default :class:`ForeignFrame`; :mod:`polfair.engines.sql` records the
        pass's query with a subclass instead of running it).

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
    o = options if options is not None else PassOptions(**keywords)
    y_true, y_pred, y_score, weight = o.y_true, o.y_pred, o.y_score, o.weight
    threshold, cluster, exact_sums, score_label = cast(float, o.threshold), o.cluster, o.exact_sums, o.score_label
    _narwhals(data)
    check_threshold(threshold)
    ff = foreign_frame(data) if frame_class is None else frame_class(data)
    given = {"y_true": y_true, "y_pred": y_pred, "y_score": y_score, "weight": weight}
    roles: dict[str, str] = {r: _names(ff.derive(v, r), r)[0] for r, v in given.items() if v is not None}
    role_cols = {r: ff.column(n, r) for r, n in roles.items()}
    # the skeleton's keys (by, then protected), checked as for Polars: one rule, one message
    key_list = pass_keys(ff, o, role_cols.get("y_true"))
    by_names = [c.name for r, c in key_list if r == "by"]
    keys = [c.name for r, c in key_list if r != "by"]
    check_exact_sums(o)
    fav, unfav = label_values(o.favorable, o.unfavorable)
    eng = ff.eng
    compiled, columns, pol = classification_columns(eng, role_cols, fav, unfav, threshold=threshold, exact=exact_sums,
                                                    score_label=score_label)  # fmt: skip
    group = [*by_names, *keys]
    select: dict[str, Any] = {c.name: key(eng, c, role=role) for role, c in key_list}
    if cluster is not None:  # the jackknife bucket, computed in the engine (the Polars integers: core.hashing)
        select[BUCKET] = _bucket(ff, cluster, o.n_buckets, [*by_names, *keys])
        group.append(BUCKET)
    select[CODE] = columns[CODE]
    weighted = weight is not None
    # an estimated attribute: the skeleton's stage (its probabilities compiled as for Polars)
    ps = estimated_stage(ff, o, [*by_names, *keys], compiled, weighted=weighted, has_scores=y_score is not None)
    if ps is not None:
        w = compiled.get("weight")  # the score as the polarity rule reads it (P(favorable)), never the raw one
        pcolumns = proba_columns(eng, ps, None if w is None else w.value, columns.get(SF))
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
        if W in columns:  # Σw² per (cell, code): Kish effective sizes, in the contract's two accumulators
            select[W2_UP], select[W2_DOWN] = weight_squares(columns[W])
        sums = [c for c in (W, _W2, W2_UP, W2_DOWN, WS, W1S) if c in select]
        sums += [] if ps is None else proba_sums(ps)
    fvs = favorable_value_columns(list(columns))  # a favorable list's per-value rows (as the Polars pass)
    select |= {c: columns[c] for c in fvs}
    sums = [*sums, *fvs]
    scored = None
    if ff._ibis and ps is None and not exact_sums and "y_score" in roles and "y_pred" not in roles and not fvs:
        role_cols = {r: ff.column(n, r) for r, n in roles.items()}
        scored = _score_common_case(ff, compiled, role_cols, select, group, sums, (fav, unfav, threshold, score_label))
    if scored is not None:
        native = scored
    elif _split_flags(ff, ps, exact_sums, roles):
        labels: dict[str, Column] = {r: ff.column(roles[r], r) for r in ("y_true", "y_pred") if r in roles}
        relabel = _relabel(labels, fav, unfav, threshold, score_label)
        native = _flags_as_aggregates(ff, compiled, select, [*group, CODE], sums, relabel)
    else:
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


_OK, _BAD, _W2P, _MIN = "__pf_wok", "__pf_wbad", "__pf_w2plain", "__pf_wmin"


def _split_flags(ff: ForeignFrame, ps: Any, exact_sums: bool, roles: Mapping[str, str]) -> bool:
    """Whether the pass groups only on the keys and the label/prediction states, the weight's
    validity being counted by aggregates (:func:`_flags_as_aggregates`): SQL databases (Ibis tables),
    a weighted pass of labels and predictions (a score's states depend on a continuous column too).
    """
    return ff._ibis and ps is None and not exact_sums and "weight" in roles and "y_score" not in roles


def _flags_as_aggregates(ff: ForeignFrame, compiled: Mapping[str, Compiled], select: dict[str, Any],
                         group: list[str], sums: list[str],
                         relabel: _Relabel | None = None) -> pl.DataFrame:  # fmt: skip
    """The code table of a weighted pass, computed with the weight's validity as aggregates.

    A database estimates the groups of a key from the columns it reads: a code that folds in the
    weight's check reads the (continuous) weight, so PostgreSQL expects one group per row and plans
    a serial aggregate. Here the query groups on the keys and the label/prediction code only
    (discrete columns), counts the rows of each weight state with ``SUM(CASE ...)`` and sums the
    weights of the valid rows only; the rows of the usual code table (code + 16·flag) are rebuilt
    from that small result. The numbers are the same: the sums of flagged rows are never read.

    The common case runs first (:func:`_common_case`: no per-row ``CASE``); this checked query
    only where it cannot answer.
    """
    from polfair.core.contract import outcome_code
    from polfair.core.contract.rules import FLAG_BAD_WEIGHT, FLAG_NULL_WEIGHT

    eng = ff.eng
    pred = compiled["y_pred"].state if "y_pred" in compiled else None
    w = compiled["weight"].value
    select = dict(select)
    select[CODE] = outcome_code(eng, compiled["y_true"].state, pred)
    # usable: 0 <= w < inf (False for null, NaN in Polars, and NaN in PostgreSQL, where NaN > inf is false
    # but NaN < inf is too); missing: null or NaN; the rest (negative, inf) is invalid
    # (counts as COUNT(expr) of a value null elsewhere: no Boolean or integer sums, one CASE per use)
    usable = (w >= 0.0) & (w < math.inf)
    select[_OK] = eng.ns.when(usable).then(w)
    # invalid: negative or inf (NaN < 0 and NaN = inf are false in Polars and in PostgreSQL alike)
    select[_BAD] = eng.ns.when((w < 0.0) | (w == math.inf)).then(eng.ns.lit(1))

    # Σw² where it is cheap: one plain sum of w² over the weights in [2**-211, 2**211] (or 0), whose
    # squares scaled by 4**±300 are exactly the two accumulators' terms (weight_squares); a usable
    # weight beyond makes its cell's sum NaN, and only then does the pass run again with the accumulators
    ranged = W2_UP in sums and W2_DOWN in sums and ff.ranged_sums
    if ranged:
        inside = (w == 0.0) | ((w >= 2.0**-211) & (w <= 2.0**211))
        # (inside implies usable: NaN <= 2**211 is false); a usable weight outside makes the cell's sum NaN
        select[_W2P] = eng.ns.when(inside).then(w * w).when(usable).then(eng.ns.lit(math.nan))
    plain = [c for c in sums if not (ranged and c in (W2_UP, W2_DOWN))] + ([_W2P] if ranged else [])

    def aggs(ns: Any, plain: list[str] = plain, ranged: bool = ranged) -> list[Any]:
        def total(c: str) -> Any:
            if c == W:
                return ns.col(_OK).sum().alias(W)
            return ns.col(c).sum() if c == _W2P else ns.when(~ns.col(_OK).is_null()).then(ns.col(c)).sum().alias(c)

        return [ns.len().alias(_N), ns.col(_OK).count(), ns.col(_BAD).count(), *(total(c) for c in plain)]

    table = None
    if ranged and plain == [W, _W2P]:
        table = _common_case(ff, select, group, relabel)
    if table is None:
        table = ff.aggregate(select, group, aggs)
    if ranged and table[_W2P].cast(pl.Float64).is_nan().any():  # a weight beyond 1e±63: the accumulators, again
        table = ff.aggregate(select, group, lambda ns: aggs(ns, sums, False))
    elif ranged:
        w2 = pl.col(_W2P).cast(pl.Float64)
        table = table.with_columns((w2 * 2.0 ** (2 * W2_SHIFT)).alias(W2_UP), (w2 * 2.0 ** (-2 * W2_SHIFT)).alias(W2_DOWN))
        table = table.drop(_W2P)
    counts = {0: pl.col(_OK), FLAG_BAD_WEIGHT: pl.col(_BAD), FLAG_NULL_WEIGHT: pl.col(_N) - pl.col(_OK) - pl.col(_BAD)}
    parts = []
    for f, n in counts.items():
        part = table.with_columns(n.cast(pl.Int64).alias(_N)).filter(pl.col(_N) > 0)
        part = part.with_columns((pl.col(CODE).cast(pl.Int64) + 16 * f).alias(CODE))
        if f:
            part = part.with_columns([pl.lit(None, pl.Float64).alias(c) for c in sums])
        parts.append(part.drop(_OK, _BAD))
    return pl.concat(parts, how="vertical_relaxed")


_RAW = "__pf_raw_"  # the raw label/prediction values of the common-case query, by role
_W2SQ = "__pf_w2sq"
_RAW_KINDS = (pl.Boolean, pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32, pl.UInt64)


_Relabel = tuple[dict[str, Any], Callable[[pl.DataFrame], pl.DataFrame]]


def _relabel(labels: Mapping[str, Column], fav: Any, unfav: Any, threshold: float,
             score_label: Any) -> _Relabel | None:  # fmt: skip
    """Where the label and the prediction are integer or Boolean columns: their engine expressions
    (named ``__pf_raw_<role>``) and a function that turns the
    common-case result grouped on their raw values into one with the
    outcome code, the contract compiled on Polars for the same columns
    (:func:`polfair.core.passes.spec.classification_columns`, :func:`polfair.core.contract.outcome_code`):
    the very code the database would have computed per row. ``None`` otherwise (a string or float
    label keeps the code in the query).
    """
    if "y_pred" not in labels or not all(isinstance(c.dtype, _RAW_KINDS) for c in labels.values()):
        return None
    from polfair.core.contract import POLARS, outcome_code

    cols = {r: Column(c.name, pl.col(_RAW + r).cast(c.dtype), c.dtype) for r, c in labels.items()}
    compiled, _, _ = classification_columns(POLARS, cols, fav, unfav, threshold=threshold, score_label=score_label)
    code = outcome_code(POLARS, compiled["y_true"].state, compiled["y_pred"].state).cast(pl.Int64).alias(CODE)

    def coded(table: pl.DataFrame) -> pl.DataFrame:
        return table.with_columns(code).drop([_RAW + r for r in labels])

    return {_RAW + r: c.expr for r, c in labels.items()}, coded


def _common_case(ff: ForeignFrame, select: Mapping[str, Any], group: list[str],
                 relabel: _Relabel | None) -> pl.DataFrame | None:  # fmt: skip
    """The weighted code table from one query with no per-row ``CASE``, or ``None`` where it cannot
    answer (then the checked query of :func:`_flags_as_aggregates` runs).

    Per group: ``COUNT(*)``, ``COUNT(w)``, ``SUM(w)``, ``MIN(w)`` and ``SUM(w * w)``. Every weight set
    is usable when the cells' ``MIN(w) >= 0`` and ``SUM(w)`` is finite (a NaN or infinite weight makes
    the sum NaN or infinite; a finite sum past Float64 is the database's error): the usable weights
    are the non-null ones. Σw² is the one plain sum the Polars pass takes
    (:func:`polfair.core.passes.collect._one_square_holds` decides where it holds; PostgreSQL refuses a
    square past Float64's range: then the checked query runs too). With :func:`_relabel`, the query
    groups on the raw label and prediction values instead of the outcome code (no ``CASE`` per row:
    the code is computed on the small result, as the contract computes it).
    """
    select = dict(select)
    weight = select[W]
    select[_W2SQ] = weight * weight
    keys = [g for g in group if g != CODE]
    if relabel is not None:
        raw, recode = relabel
        select.pop(CODE)
        select |= raw
        by = [*keys, *raw]
    else:
        by = group

    def aggs(ns: Any) -> list[Any]:
        return [ns.len().alias(_N), ns.col(W).count().alias(_OK), ns.col(W).sum().alias(W),
                ns.col(W).min().alias(_MIN), ns.col(_W2SQ).sum().alias(_W2P)]  # fmt: skip

    try:
        quick = ff.aggregate({k: v for k, v in select.items() if k in (*by, W, _W2SQ)}, by, aggs)
    except Exception:  # a square beyond Float64 (PostgreSQL: "value out of range"): the checked query
        return None
    lo = quick[_MIN].cast(pl.Float64).fill_null(0.0)
    sw, w2 = quick[W].cast(pl.Float64), quick[_W2P].cast(pl.Float64)
    if not (bool((lo >= 0.0).all()) and not lo.is_nan().any() and bool(sw.is_finite().all())):
        return None
    if not bool(((w2.is_finite() & (w2 >= ONE_SQUARE_MIN)) | (sw == 0.0)).all()):
        return None
    if relabel is not None:
        nums = [pl.col(c).cast(pl.Float64 if c in (W, _W2P) else pl.Int64).sum() for c in (_N, _OK, W, _W2P)]
        quick = recode(quick).group_by(group, maintain_order=True).agg(nums)
    return quick.drop(_MIN, strict=False).with_columns(pl.lit(0, pl.Int64).alias(_BAD))


_SHI, _SN, _SMIN, _SMAX, _WMAX = "__pf_shi", "__pf_sn", "__pf_smin", "__pf_smax", "__pf_wmax"


def _score_common_case(ff: ForeignFrame, compiled: Mapping[str, Compiled], cols: Mapping[str, Column],
                       select: Mapping[str, Any], group: list[str], sums: list[str],
                       request: tuple[Any, Any, float, Any]) -> pl.DataFrame | None:  # fmt: skip
    """A score pass's code table from one query whose key reads no continuous column, or ``None``
    (then the pass groups on the code as before).

    A code that reads the score (its state, its range check) makes PostgreSQL expect one group per
    row (a serial plan). Here the query groups on the keys, the raw integer/Boolean label and the
    Boolean ``state == 1`` of the compiled score (a Boolean expression counts as 2 values), with
    ``COUNT``, ``MIN`` and ``MAX`` of the score (and of the weight) and the pass's sums. Per group, the
    contract compiled on Polars gives the outcome code of its smallest and of its largest score
    (and weight): the score's and the weight's rules are intervals (``[0, 1]``, ``>= threshold``,
    ``[0, inf)``), so where both codes agree and carry no flag, and no score or weight is null, every
    row of the group has that code (the Boolean split is only a hint: where it cut otherwise than the
    contract, the codes differ and the usual query runs). Anywhere else: ``None``.
    """
    from polfair.core.contract import POLARS
    y, sc = cols["y_true"], cols["y_score"]
    wc = cols.get("weight")
    if not isinstance(y.dtype, _RAW_KINDS):
        return None
    weighted = wc is not None and W in select
    ranged = weighted and W2_UP in sums and W2_DOWN in sums
    if weighted and not ranged:
        return None
    other = [c for c in sums if c not in (W, W2_UP, W2_DOWN, WS, W1S)]
    if other:
        return None
    keys = list(group)
    sel: dict[str, Any] = {k: select[k] for k in keys}
    sel[_RAW + "y_true"] = y.expr
    # the partition is a hint (the codes of each part's extremes decide, below): score >= threshold
    sel[_SHI] = compiled["y_score"].value >= float(request[2])
    sel[_SN] = sc.expr
    plain = [c for c in (WS, W1S) if c in sums]
    sel |= {c: select[c] for c in plain}
    if weighted:
        sel[W] = select[W]
        sel[_W2SQ] = select[W] * select[W]
    by = [*keys, _RAW + "y_true", _SHI]

    def aggs(ns: Any) -> list[Any]:
        out = [ns.len().alias(_N), ns.col(_SN).count().alias(_OK), ns.col(_SN).min().alias(_SMIN),
               ns.col(_SN).max().alias(_SMAX), *(ns.col(c).sum().alias(c) for c in plain)]  # fmt: skip
        if weighted:
            out += [ns.col(W).count().alias(_BAD), ns.col(W).min().alias(_MIN), ns.col(W).max().alias(_WMAX),
                    ns.col(W).sum().alias(W), ns.col(_W2SQ).sum().alias(_W2P)]  # fmt: skip
        return out

    try:
        quick = ff.aggregate(sel, by, aggs)
    except Exception:  # a square beyond Float64 (PostgreSQL: "value out of range"): the usual query
        return None
    fav, unfav, threshold, score_label = request

    def code(s_col: str, w_col: str) -> pl.Expr:
        c = {"y_true": Column(y.name, pl.col(_RAW + "y_true").cast(y.dtype), y.dtype),
             "y_score": Column(sc.name, pl.col(s_col).cast(sc.dtype), sc.dtype)}  # fmt: skip
        if weighted and wc is not None:
            c["weight"] = Column(wc.name, pl.col(w_col).cast(wc.dtype), wc.dtype)
        _, columns, _ = classification_columns(POLARS, c, fav, unfav, threshold=threshold, score_label=score_label)
        return columns[CODE].cast(pl.Int64)

    lo, hi = code(_SMIN, _MIN), code(_SMAX, _WMAX)
    full = pl.col(_OK) == pl.col(_N)
    if weighted:
        full = full & (pl.col(_BAD) == pl.col(_N))
    checked = quick.with_columns(lo.alias("__pf_lo"), hi.alias("__pf_hi"))
    ok = checked.select(((pl.col("__pf_lo") == pl.col("__pf_hi")) & (pl.col("__pf_lo") < 16) & full).all()).item()
    if not ok:
        return None
    nums = [pl.col(_N).cast(pl.Int64).sum(), *(pl.col(c).cast(pl.Float64).sum() for c in plain)]
    if weighted:
        nums += [pl.col(W).cast(pl.Float64).sum(), pl.col(_W2P).cast(pl.Float64).sum()]
    table = checked.with_columns(pl.col("__pf_lo").alias(CODE)).group_by([*keys, CODE], maintain_order=True).agg(nums)
    if weighted:
        sw, w2 = table[W], table[_W2P]
        if not bool(((w2.is_finite() & (w2 >= ONE_SQUARE_MIN)) | (sw == 0.0)).all()):
            return None
        a = pl.col(_W2P)
        table = table.with_columns((a * 4.0**W2_SHIFT).alias(W2_UP), (a * 4.0**-W2_SHIFT).alias(W2_DOWN))
    return table.select([*keys, CODE, _N, *(c for c in sums)])


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
