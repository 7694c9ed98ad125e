"""Fairness of rankings: ``ranking_report`` (issue 43).

Who is *seen* in search results, feeds, recommendations and shortlists: the position-weighted
exposure of each group of items, its share against the group's share of items and of relevance,
the top-k share, AWRF and NDKL per query, and the nDCG of each group of queries. ONE ``group_by``
of the rows to the ranking cell table (:mod:`polfair.ranking.cells`), then arithmetic
(:mod:`polfair.ranking.report`). Definitions and sources: ``docs/ranking.md``.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any, Literal, Required, TypedDict, Unpack

import polars as pl

from polfair.core._args import as_list
from polfair.core.options import keywords_of
from polfair.core.reference import resolve_min_sample_size
from polfair.core.report.build import Intersections, check_protected_names
from polfair.core.report.run_metadata import attach_request, render_request
from polfair.exceptions import PolfairError
from polfair.ranking.cells import RANKING_CELL_COLUMNS, ranking_pass
from polfair.ranking.report import POSITION_WEIGHTS, RANKING_METRICS, RankingOptions, position_weight_expr, ranking_rows

__all__ = ["POSITION_WEIGHTS", "RANKING_CELL_COLUMNS", "RANKING_METRICS", "RankingAccumulator", "RankingRows",
           "position_weight_expr", "ranking_counts", "ranking_report"]  # fmt: skip


def _check_options(k: Any, position_weight: Any, p: Any, n_buckets: Any) -> None:
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
        raise PolfairError(f"k={k!r}: give a positive int (the cut-off of the ranking) or None (every position)")
    if position_weight not in POSITION_WEIGHTS:
        raise PolfairError(f"position_weight={position_weight!r}: choose one of {list(POSITION_WEIGHTS)}")
    if not (isinstance(p, (int, float)) and 0.0 < float(p) < 1.0):
        raise PolfairError(f"p={p!r}: the geometric attention's first-position share must lie in (0, 1)")
    if isinstance(n_buckets, bool) or not isinstance(n_buckets, int) or n_buckets < 2:
        raise PolfairError(f"n_buckets={n_buckets!r}: give an int >= 2 (buckets of queries for the jackknife)")


def ranking_report(
    data: Any,
    *,
    query: Any,
    rank: Any,
    protected: Any = None,
    query_protected: Any = None,
    relevance: Any = None,
    k: int | None = None,
    weight: Any = None,
    by: Any = None,
    position_weight: Literal["log", "geometric", "reciprocal"] = "log",
    p: float = 0.5,
    privileged: Mapping[str, Any] | None = None,
    intersections: Intersections = None,
    ci: float | None = 0.95,
    p_adjust: Literal["bh", "by", "holm"] | None = "bh",
    n_buckets: int = 20,
    min_sample_size: int | None = None,
    thresholds: Mapping[str, Any] | None = None,
    engine: Literal["auto", "in-memory", "streaming"] = "auto",
) -> pl.DataFrame:
    r"""Audit rankings for group fairness of exposure, in one pass: who is *seen*, against who is ranked and who is relevant.

    Reads a long table of ranked items, one row per (query, item): search results, feeds,
    recommendations, shortlists, impression logs. Reads the input once (:func:`ranking_counts`)
    and reports, for every protected attribute, intersection and ``by`` value, in the fairness
    report's long schema:

    * ``exposure`` (group rows): the mean position weight per item of the group, pooled over
      queries, :math:`\sum_{i \in g} w_i / n_g` (Singh & Joachims, KDD 2018); the population row
      is everyone's. With ties, an item's :math:`w_i` is the mean weight of the positions its tie
      spans (its expected exposure under random tie-breaking, Diaz et al., CIKM 2020).
    * ``exposure_share`` = :math:`\sum_{i\in g} w_i / \sum_i w_i` and ``item_share`` =
      :math:`n_g / N`: compare them (a fair share of attention is the share of items).
    * ``exposure_per_relevance`` (with ``relevance``): exposure ÷ the group's mean relevance, Singh
      & Joachims' disparate treatment (FairRankTune's EXPU per group).
    * ``top_k_share`` (with ``k``): the group's share of the top-k slots,
      :math:`\sum_{i\in g} P(\mathrm{pos}_i \le k) / \sum_q \min(k, n_q)` (a tie straddling k
      counts fractionally).
    * ``awrf`` (attribute rows): per query, min over groups ÷ max over groups of the mean attention
      per item, averaged over queries (Sapiezynski et al., WWW 2019; FairRankTune's AWRF
      ``MinMaxRatio`` with ``position_weight="geometric"``).
    * ``ndkl`` (attribute rows): Geyik et al.'s (KDD 2019) NDKL@k of each query against its own
      group shares, in nats, averaged over queries (0 = every prefix has the query's shares).
    * ``ndcg_at_k`` (group rows of ``query_protected`` attributes, with ``relevance``): the mean
      nDCG@k of the group's queries (trec_eval's / ir-measures': linear gain, log discount, ideal
      from every item of the query, 0 without a relevant item): consumer-side fairness.

    Group rows carry the difference and ratio to the reference group; attribute rows the spread
    (difference max − min, ratio min ÷ max). Queries where an attribute set has a single group
    are left out of its ``awrf`` and ``ndkl`` and counted in the provenance
    (``request["queries_left_out"]``).

    Parameters
    ----------
    data
        ``pl.DataFrame``, ``pl.LazyFrame``, a parquet/CSV path (scanned lazily, streamed with
        ``engine="streaming"``), pandas, pyarrow, or a Spark / DuckDB lazy frame (the pass runs in
        that engine through narwhals; column arguments are then names).
    query
        The query (ranking) id: a column name or a named expression; never null.
    rank
        Integer positions within the query, 1 = top. Ties as competition ranks (1, 2, 2, 4; SQL
        ``RANK()``, ``rank("min")``); other ranks are an error naming the queries.
    protected
        Attribute(s) of the ranked items (names or named expressions).
    query_protected
        Attribute(s) of the query (the user's group, the job's city): constant within a query
        (checked); with ``relevance`` they get ``ndcg_at_k``.
    relevance
        Optional non-negative relevance of each item (graded or binary).
    k
        Cut-off: positions beyond k get weight 0 (``None``: every position; the cell table then
        keeps every rank). Needed for ``top_k_share``; NDKL and nDCG are @k.
    weight
        Optional query weight (how often the ranking was shown): constant within a query
        (checked); every pooled sum and per-query mean is weighted by it.
    by
        Column(s): one report per value (e.g. a day).
    position_weight
        ``"log"`` (1/log2(1 + pos), default), ``"geometric"`` (p·(1 − p)^(pos − 1)) or
        ``"reciprocal"`` (1/pos): the attention of ``exposure``, its shares and ``awrf``.
        ``ndkl`` and ``ndcg_at_k`` always use the log discount (their definitions).
    p
        The geometric attention's share of the first position (default 0.5).
    privileged
        ``{attribute: value}``: the reference group of every set whose attributes all have one
        (else the largest group: most items, or most queries for ``query_protected``).
    intersections
        As :func:`polfair.fairness_report` (default: every subset of up to 3 attributes).
    ci
        Confidence level (default 0.95) or ``None``: delete-a-group jackknife-t intervals over
        ``n_buckets`` buckets of queries (queries are the sampling unit), and Wald-t p-values of no
        difference on group rows.
    p_adjust
        ``"bh"`` (default), ``"by"``, ``"holm"`` or ``None``, within each (``by`` value, metric).
    n_buckets
        Buckets of queries (a hash of the query id) for the jackknife (default 20).
    min_sample_size
        Input rows a group needs to be the comparison group and to get a verdict: the small-group
        policy of every report (:mod:`polfair.core.reference`, ``docs/status.md``).
        ``None`` (default): 30 rows; ``0``: no minimum. The largest group is chosen among the
        groups that meet it (the largest of all when none does); a ``privileged`` group below it
        warns (:class:`~polfair.exceptions.ReferenceWarning`). Recorded in the request, where
        :func:`polfair.monitor.apply_thresholds` reads it: a thresholded row whose group or
        reference has fewer rows is ``insufficient_data``.
    thresholds
        Optional ``{metric: [lo, hi] or {"min": lo, "max": hi}}`` (inclusive bands) on the report's
        metrics, e.g. ``{"exposure_share": [0.2, 0.5], "awrf": {"min": 0.8}}``: the report gets
        ``threshold`` and ``status`` columns, judged by the one status rule of every polfair report
        (:func:`polfair.monitor.apply_thresholds` on this report, with its ``min_sample_size``;
        ``docs/status.md``): group rows of a threshold's metric and the ``awrf`` / ``ndkl`` rows
        (the spread rows of per-group metrics have no value and no status). Recorded in the request.
    engine
        Polars engine of the pass (``"streaming"`` for larger-than-memory files).

    Returns
    -------
    pl.DataFrame
        ``*by, attribute, group, metric, value, reference_group, difference, ratio, n`` (``n``:
        the group's rows, or all rows), with ``ci`` ``value_lo … p_value_adjusted, n_eff``
        (``n_eff``: the number of queries) and ``ci_method, test``, then ``n_groups``,
        ``excluded_groups``, ``group_key``, then with ``thresholds`` ``threshold`` (String) and
        ``status`` (String). Population rows have null ``attribute``.

    Raises
    ------
    ColumnNotFoundError
        A named column is missing.
    InvalidInputError
        A non-integer, null or non-positive rank; ranks that are not competition ranks; a null
        query; a null/NaN/negative/infinite relevance or weight; a weight or ``query_protected``
        value that changes within a query.
    PolfairError
        Bad options; neither ``protected`` nor ``query_protected``; a threshold on a metric the
        report does not have (with the close names), or a band that is not ``lo <= hi``.

    Notes
    -----
    Equal to FairRankTune 0.0.7's EXP/EXPU/AWRF (per group and ``MinMaxRatio``) and NDKL (which adds
    1e-7 to both distributions: equal to ~1e-6; to the paper's formula to 1e-12), and to ir-measures'
    nDCG@k, on rankings from UCI Adult (``tests/ranking``).

    Examples
    --------
    >>> import polars as pl
    >>> import polfair as pf
    >>> df = pl.DataFrame({"q": [1, 1, 1, 1], "r": [1, 2, 2, 4], "g": ["a", "b", "a", "b"]})
    >>> rep = pf.ranking_report(df, query="q", rank="r", protected="g", ci=None)
    >>> round(rep.filter(group="a", metric="exposure")["value"].item(), 4)
    0.7827
    """
    args = dict(locals())
    args.pop("data")
    _checked_args(args)
    cells, names = _pass(data, args)
    return _report(cells, names, args)


class RankingRows(TypedDict, total=False):
    """The keywords of :func:`ranking_counts`: those of :func:`ranking_report` that the pass reads.

    ``query`` and ``rank`` (required), ``protected``, ``query_protected``, ``relevance``, ``k``,
    ``weight``, ``by`` and ``engine``: each as in :func:`ranking_report`, with its default there.
    """

    query: Required[Any]
    rank: Required[Any]
    protected: Any
    query_protected: Any
    relevance: Any
    k: int | None
    weight: Any
    by: Any
    engine: Literal["auto", "in-memory", "streaming"]


@keywords_of(ranking_report)
def ranking_counts(data: Any, **rows: Unpack[RankingRows]) -> pl.DataFrame:
    """The ranking cell table of the rows: ONE ``group_by(by + query + rank + protected + query_protected)``.

    Ranks beyond ``k`` are pooled into the rank ``k + 1`` of each query (the table has at most
    queries × (k + 1) × groups rows); with ``query_protected`` and ``relevance`` the relevance
    value is a key too (nDCG's ideal ordering). Parameters as :func:`ranking_report`.

    Returns
    -------
    pl.DataFrame
        ``*by, query, __pf_rank, *protected, *query_protected[, __pf_relkey]``, then ``n`` (Int64
        rows), with ``relevance`` ``rel`` (Float64 Σ relevance), with ``weight`` ``qw_min``,
        ``qw_max`` (Float64: the query weight's extremes, equal when the weight is constant within
        the query, as required).

    Examples
    --------
    >>> import polars as pl
    >>> import polfair as pf
    >>> df = pl.DataFrame({"q": [1, 1, 1], "r": [1, 2, 3], "g": ["a", "b", "a"]})
    >>> pf.ranking_counts(df, query="q", rank="r", protected="g", k=1).sort("__pf_rank", "g")["n"].to_list()
    [1, 1, 1]
    """
    args = inspect.signature(ranking_report).bind(data, **rows)  # with ranking_report's defaults
    args.apply_defaults()
    _check_options(args.arguments["k"], "log", 0.5, 20)
    return _pass(data, args.arguments)[0]


def _checked_args(args: dict[str, Any]) -> None:
    """Check ranking_report's options (before any pass)."""
    _check_options(args["k"], args["position_weight"], args["p"], args["n_buckets"])
    resolve_min_sample_size(args["min_sample_size"])
    if not as_list(args["protected"]) and not as_list(args["query_protected"]):
        raise PolfairError("ranking_report needs protected= (item attributes) or query_protected= (query attributes)")


def _pass(data: Any, args: Mapping[str, Any]) -> tuple[pl.DataFrame, dict[str, list[str]]]:
    """The ranking pass of ``data`` with ranking_report's arguments."""
    qprot = as_list(args["query_protected"])
    return ranking_pass(
        data, query=args["query"], rank=args["rank"], protected=as_list(args["protected"]), query_protected=qprot,
        relevance=args["relevance"], weight=args["weight"], by=as_list(args["by"]), k=args["k"],
        relevance_key=bool(qprot) and args["relevance"] is not None, engine=args["engine"],
    )  # fmt: skip


def _report(cells: pl.DataFrame, names: dict[str, list[str]], args: Mapping[str, Any]) -> pl.DataFrame:
    """The report of a ranking cell table, with its request (and statuses with ``thresholds``)."""
    a = args
    min_n = resolve_min_sample_size(a["min_sample_size"])
    prot, qprot = as_list(a["protected"]), as_list(a["query_protected"])
    check_protected_names([*names["protected"], *names["query_protected"]])
    options = RankingOptions(k=a["k"], position_weight=a["position_weight"], p=a["p"], relevance=a["relevance"] is not None,
                             privileged=a["privileged"], intersections=a["intersections"], ci=a["ci"], p_adjust=a["p_adjust"],
                             n_buckets=a["n_buckets"], min_sample_size=min_n)  # fmt: skip
    report, left_out = ranking_rows(cells, names, dict(cells.schema), options)
    ci, privileged, intersections = a["ci"], a["privileged"], a["intersections"]
    fields = {
        "query": a["query"], "rank": a["rank"], "protected": prot or None, "query_protected": qprot or None,
        "relevance": a["relevance"], "k": a["k"], "weight": a["weight"], "by": as_list(a["by"]) or None,
        "position_weight": a["position_weight"], "p": a["p"] if a["position_weight"] == "geometric" else None,
        "privileged": dict(privileged) if privileged else None, "intersections": intersections, "ci": ci,
        "p_adjust": a["p_adjust"], "n_buckets": a["n_buckets"] if ci is not None else None,
        "queries_left_out": left_out or None, "min_sample_size": min_n,
    }  # fmt: skip
    thresholds = a["thresholds"]
    if thresholds is None:
        return attach_request(report, render_request(fields, task="ranking"))
    # judged as every report is: the monitor's apply_thresholds, the one reading of a threshold (the documented
    # layering edge ranking -> monitor); the status itself is polfair.core.report.status's rule
    from polfair.monitor import apply_thresholds
    from polfair.monitor.config import parse_thresholds
    from polfair.monitor.thresholds import format_threshold

    fields["thresholds"] = {m: format_threshold(*b) for m, b in parse_thresholds(thresholds).items()}
    report = attach_request(report, render_request(fields, task="ranking"))
    return apply_thresholds(report, thresholds, min_n)


class RankingAccumulator:
    """:func:`ranking_report` of rows that arrive in batches (a day's impression log read hour by hour, a stream).

    ``update(batch)`` runs the ranking pass on the batch and adds its cell table to the running one;
    ``report()`` is the report of every row seen so far. The cell table is a sum over rows (rows and
    relevance per key, the query weight's min and max), so the tables of batches add up to the table
    of their union: ``report()`` equals ``ranking_report`` of the concatenated batches (to the rounding
    of the sums' order), also when a query's rows are split across batches. Memory: the running cell
    table (about queries × (k + 1) × groups rows), not the rows.

    Parameters
    ----------
    **options
        :func:`ranking_report`'s keywords (``query=``, ``rank=``, ``protected=``, ...; without ``data``), with its
        defaults; checked here, before any batch.

    Raises
    ------
    PolfairError
        Bad or unknown options (at construction); ``report()`` before any ``update``; a batch whose columns give other key
        names than the first batch's. Each batch's rows are checked as :func:`ranking_report` checks them.

    Examples
    --------
    >>> import polars as pl
    >>> import polfair as pf
    >>> from polfair.ranking import RankingAccumulator
    >>> df = pl.DataFrame({"q": [1, 1, 1, 1, 2, 2], "r": [1, 2, 2, 4, 1, 2], "g": ["a", "b", "a", "b", "b", "a"]})
    >>> acc = RankingAccumulator(query="q", rank="r", protected="g", ci=None)
    >>> rep = acc.update(df.head(3)).update(df.tail(3)).report()
    >>> one = pf.ranking_report(df, query="q", rank="r", protected="g", ci=None)
    >>> rep["value"].equals(one["value"])
    True
    """

    def __init__(self, **options: Any) -> None:
        # ranking_report's keywords and defaults, bound to its own signature (one signature, not a copy)
        try:
            bound = inspect.signature(ranking_report).bind(None, **options)
        except TypeError as exc:
            msg = f"RankingAccumulator takes ranking_report's keywords (without data): {exc}"
            raise PolfairError(msg) from None
        bound.apply_defaults()
        args = dict(bound.arguments)
        args.pop("data")
        _checked_args(args)
        self._args = args
        self._cells: pl.DataFrame | None = None
        self._names: dict[str, list[str]] = {}

    def update(self, batch: Any) -> RankingAccumulator:
        """Add a batch of rows (any input :func:`ranking_report` takes); returns the accumulator."""
        cells, names = _pass(batch, self._args)
        if self._cells is None:
            self._cells, self._names = cells, names
            return self
        if names != self._names:
            msg = f"RankingAccumulator.update: this batch's key columns {names} differ from the first batch's {self._names}"
            raise PolfairError(msg)
        sums = {"n": pl.col("n").sum(), "rel": pl.col("rel").sum(), "qw_min": pl.col("qw_min").min(),
                "qw_max": pl.col("qw_max").max()}  # fmt: skip
        keys = [c for c in cells.columns if c not in sums]
        both = pl.concat([self._cells, cells.select(self._cells.columns)], how="vertical_relaxed")
        self._cells = both.group_by(keys).agg([e for c, e in sums.items() if c in cells.columns]).select(self._cells.columns)
        return self

    @property
    def cells(self) -> pl.DataFrame | None:
        """The running cell table: :func:`ranking_counts` of every row seen (``None`` before the first batch)."""
        return self._cells

    def report(self) -> pl.DataFrame:
        """The report of every row seen: :func:`ranking_report`'s long report, request and statuses."""
        if self._cells is None:
            msg = "RankingAccumulator.report: no rows yet; call update(batch) first"
            raise PolfairError(msg)
        return _report(self._cells, self._names, self._args)
