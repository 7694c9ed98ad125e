"""Command line: ``polfair demo``, ``polfair report PATH ...`` and ``polfair slices PATH ...``.

``polfair demo`` audits ProPublica's COMPAS data shipped with polfair (standard filter, prediction
``decile_score >= 5``) and prints a summary. ``polfair report`` does the same for any parquet/CSV
file and writes the full report (parquet, CSV, JSON or NDJSON, chosen by the output's extension).
Column arguments are column names or SQL expressions (``"decile_score >= 5"``,
``"CASE WHEN age < 25 THEN 'young' ELSE 'older' END AS age_band"``), parsed by ``polars.sql_expr``.
"""

from __future__ import annotations

import argparse
import itertools
import os
import re
import sys
import time
import uuid
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, cast

import polars as pl

from polfair.core.contract.inputs import to_lazyframe
from polfair.core.options import close_names
from polfair.core.reference import DEFAULT_MIN_SAMPLE_SIZE
from polfair.core.report.run_metadata import attach_request, render_request, request_of
from polfair.core.report.status import THRESHOLD_PRESETS
from polfair.core.report.wide import to_wide
from polfair.exceptions import PolfairError
from polfair.outputs.logs import EventLog
from polfair.outputs.summary import summarize, violation_lines
from polfair.outputs.writers import (
    RunExistsError,
    append_report,
    check_append_target,
    check_writable,
    table_run_files,
    write_report,
)

if TYPE_CHECKING:
    from polfair.core.request import AuditRequest

__all__ = ["EXIT_CODES_HELP", "check_output_path", "flag_message", "main", "parse_protected_proba_flag", "summarize"]

#: The demo's policy: the four-fifths band on the headline ratios, groups of at least 30 rows (the
#: small-group policy's default, polfair.core.reference).
DEMO_THRESHOLDS = {m: [0.8, 1.25] for m in ("disparate_impact", "false_positive_rate_ratio", "false_negative_rate_ratio")}
DEMO_MIN_SAMPLE_SIZE = DEFAULT_MIN_SAMPLE_SIZE


def _column_or_sql(text: str, names: Sequence[str], flag: str = "") -> pl.Expr:
    from polfair.monitor._values import column_or_sql  # the monitor loads scipy: not at `polfair --help`

    return cast(pl.Expr, column_or_sql(text, list(names), flag or "the argument"))


def _coerce(value: str, dtype: pl.DataType | None) -> Any:
    """Turn a command-line string into a value of the column's type."""
    if dtype is None:
        return value
    if dtype == pl.Boolean:
        low = value.lower()
        if low in ("true", "1", "yes"):
            return True
        if low in ("false", "0", "no"):
            return False
    if dtype.is_integer():
        try:
            return int(value)
        except ValueError:
            pass
    if dtype.is_float():
        try:
            return float(value)
        except ValueError:
            pass
    return value


def _privileged(pairs: Sequence[str], schema: pl.Schema) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pair in pairs:
        if "=" not in pair:
            msg = f"--privileged takes ATTRIBUTE=VALUE (e.g. race=Caucasian), got {pair!r}"
            raise PolfairError(msg)
        k, v = pair.split("=", 1)
        out.setdefault(k, []).append(_coerce(v, schema.get(k)))
    return {k: v[0] if len(v) == 1 else v for k, v in out.items()}


class _Parser(argparse.ArgumentParser):
    """argparse, with "did you mean" for a misspelled option (the doors' keyword check, issue 38)."""

    def error(self, message: str) -> NoReturn:
        head = "unrecognized arguments: "
        if message.startswith(head):
            known = {o for a in _all_actions(self) for o in a.option_strings if o.startswith("--")}
            given = [w.split("=", 1)[0] for w in message[len(head):].split() if w.startswith("--")]
            hints = [f"{g} (did you mean {c[0]}?)" for g in given if (c := close_names(g, known))]
            if hints:
                message = f"{message}; " + ", ".join(hints)
        super().error(message)


def _all_actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The parser's actions and those of its sub-commands' parsers."""
    out = list(parser._actions)
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            for sub in a.choices.values():
                out.extend(_all_actions(sub))
    return out


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="polfair", description="Fairness audits as one Polars group-by.",
                                epilog=EXIT_CODES_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="audit COMPAS (bundled): race, sex, age band; prediction decile_score >= 5")
    demo.add_argument("--task", choices=["classification", "regression"], default="classification",
                      help="classification (default: COMPAS) or regression (UCI Adult: weekly hours predicted by "
                      "least squares, pf.load_adult_regression)")
    demo.add_argument("--out", help="also write the full report (.parquet/.csv/.json/.ndjson)")
    demo.add_argument("--html", metavar="PATH", help="also write the report as one self-contained HTML page")
    demo.add_argument("--min-group-size", type=int, metavar="N",
                      help="drop groups with fewer than N rows from the shown and written report (disclosure control)")
    rep = sub.add_parser("report", help="audit a parquet/CSV file and write the report", epilog=EXIT_CODES_HELP,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    rep.add_argument("path", help="parquet/CSV file, glob, or hive-partitioned directory")
    rep.add_argument("--task", choices=["classification", "regression"], default="classification",
                     help="classification (default): a label and a decision or score; regression: a numeric outcome "
                     "(--y-true) and prediction (--y-pred), pf.regression_report (docs/regression.md)")
    rep.add_argument("--y-true", help="label column (required unless the --config file names y_true)")
    rep.add_argument("--y-pred", help="predicted-label column or SQL expression (e.g. 'score >= 0.5')")
    rep.add_argument("--y-score", help="score column in [0, 1]: P(favorable), or P(--score-label)")
    rep.add_argument("--threshold", type=float,
                     help="threshold for --y-score (default: the --config file's threshold, else 0.5)")
    rep.add_argument("--protected", nargs="+", default=[], help="protected columns or SQL expressions")
    rep.add_argument("--protected-proba", metavar="ATTR=GROUP:COLUMN,...",
                     help="a protected attribute estimated from proxies (BISG): each group's membership-probability "
                     "column, e.g. race=white:p_white,black:p_black,hispanic:p_hispanic,other (a group without a "
                     "column: the remainder, 1 - the others); docs/proxy-groups.md")
    rep.add_argument("--proba-assignment", choices=["weighted", "argmax"],
                     help="with --protected-proba: weighted estimator (default) or each row in its likeliest group")
    rep.add_argument("--proba-tolerance", type=float, metavar="TOL",
                     help="with --protected-proba: how far a row's probabilities may sum from 1 (default 1e-6)")
    rep.add_argument("--favorable", nargs="+", help="favorable label value(s) (default 1)")
    rep.add_argument("--unfavorable", nargs="+", help="unfavorable label value(s); others then raise")
    rep.add_argument("--score-label", metavar="LABEL",
                     help="the label --y-score is the probability of, and a Boolean --y-pred's True stands for "
                     "(e.g. 1 for predict_proba[:, 1] with 0/1 labels); needed where favorable is not the larger "
                     "label (docs/contract.md#polarity)")
    rep.add_argument("--privileged", nargs="+", default=[], metavar="ATTR=VALUE", help="reference groups")
    rep.add_argument("--reference", choices=["privileged", "largest", "overall", "best"],
                     help="reference group policy (regression: privileged, largest or overall)")
    rep.add_argument("--weight", help="instance-weight column")
    rep.add_argument("--by", nargs="+", default=[], help="one report per value of these columns")
    rep.add_argument("--intersections", type=_intersections_flag, metavar="K|all|none",
                     help="largest attribute-set size, 'all' (every subset) or 'none' (each attribute alone); default: "
                          "the default sets under the intersection budget (--max-intersection-groups)")
    rep.add_argument("--max-intersection-groups", type=int, metavar="N",
                     help="intersection budget of the default sets (default 1000 intersection groups; docs/scale.md)")
    rep.add_argument("--max-groups-per-attribute", type=_groups_flag, metavar="N|none", default=False,
                     help="an attribute set with more groups shows its --worst-k worst groups' rows (default 1000; "
                          "'none': every group; docs/scale.md)")
    rep.add_argument("--worst-k", type=int, metavar="K", help="worst groups shown of such a set (default 20)")
    rep.add_argument("--metrics", nargs="+", metavar="METRIC",
                     help="compute only these metrics, e.g. selection_rate false_positive_rate (default: every metric)")
    rep.add_argument("--on-missing", choices=["warn", "raise", "ignore"], default="warn")
    rep.add_argument("--ci", type=float, metavar="LEVEL",
                     help="confidence level of the intervals (default 0.95; docs/statistics.md)")
    rep.add_argument("--no-ci", action="store_true", help="no interval and test columns (faster; the older schema)")
    rep.add_argument("--n-boot", type=int, metavar="B", help="kept for compatibility (the report uses no replicates)")
    rep.add_argument("--seed", type=int, help="kept for compatibility (the report uses no random numbers)")
    rep.add_argument("--cluster", metavar="COLUMN",
                     help="cluster id column (several rows per person): cluster-robust jackknife intervals")
    rep.add_argument("--min-group-size", type=int, metavar="N",
                     help="drop groups with fewer than N rows from the shown and written report (disclosure control)")
    rep.add_argument("--significance", type=float, metavar="ALPHA",
                     help="deprecated: the same as --ci 1-ALPHA (the level of the intervals the status reads)")
    rep.add_argument("--band", choices=["both", "harm"],
                     help="judge both sides of each threshold band (default) or only the side that disadvantages "
                     "the group (harm: the EEOC reading of the four-fifths rule)")
    rep.add_argument("--allow-many-groups", action="store_true",
                     help="accept protected/by columns with about a group per row (ids, continuous values; default: error)")
    rep.add_argument("--exact-sums", action="store_true",
                     help="exact fixed-point weighted sums: the whole report bit-identical in any order, chunking "
                     "and engine (weights 0 or in [2**-16, 2**40)); default: Float64 sums")
    rep.add_argument("--out", help="output file (.parquet/.csv/.json/.ndjson); default: print a summary")
    rep.add_argument("--html", metavar="PATH", help="also write the report as one self-contained HTML page")
    rep.add_argument("--explain", action="store_true",
                     help="print the one counting query (SQL, for --dialect) instead of running the audit: the file's "
                          "schema only is read (the table is named after the file); run it in the warehouse and feed "
                          "the result to pf.cells_from_sql / pf.report_from_counts (docs/warehouse.md)")
    rep.add_argument("--dialect", choices=list(_dialects()), default="postgres",
                     help="the SQL dialect of --explain (default postgres)")
    rep.add_argument("--adverse-impact", choices=["eeoc", "nyc_ll144"],
                     help="also run the adverse-impact battery (EEOC four-fifths, z, Fisher, shortfall; or NYC "
                     "LL144: with --y-score, the scoring rate above the median) and print it; with --html, the page "
                     "gets its section")
    rep.add_argument("--adverse-impact-out", metavar="PATH",
                     help="write the adverse-impact table (.parquet/.csv/.json) instead of printing it")
    rep.add_argument("--adverse-impact-min-size", type=int, metavar="N",
                     help="leave groups of fewer than N candidates out of the adverse-impact comparisons (default: "
                     "--min-sample-size, else 30)")
    rep.add_argument("--adverse-impact-sets", nargs="+", metavar="SET",
                     help="attribute sets of the adverse-impact battery, e.g. race sex 'race & sex' (default: every "
                     "attribute and intersection)")
    rep.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                     help="spinner with elapsed time and rows/s on stderr (default: when stderr is a terminal)")
    rep.add_argument("--config", help="fairness monitor config (.toml/.json): groups, thresholds, sample sizes")
    rep.add_argument("--thresholds", choices=sorted(THRESHOLD_PRESETS), metavar="POLICY",
                     help="a named threshold policy: four_fifths = the band [0.8, 1.25] on DI and the FPR/FNR ratios "
                     "(without thresholds nothing is judged; a --config's [thresholds] give your own bands)")
    rep.add_argument("--min-sample-size", type=int, metavar="N",
                     help="the small-group policy (default 30; 0: none): groups (or references) of fewer than N rows "
                     "are insufficient_data and never the comparison group, in the report and the adverse-impact "
                     "battery")
    rep.add_argument("--fail-on-violation", action="store_true",
                     help="exit with status 1 when the report's status has a violation (needs --thresholds or a "
                     "--config with thresholds)")
    rep.add_argument("--append", metavar="TABLE",
                     help="append the report to a parquet table: TABLE.parquet (rewritten) or a directory (one new "
                     "file per run); new columns are added, other schema changes refused; a run id already in the "
                     "table, or --by periods the table already holds from another run, are refused (exit 2) unless "
                     "--replace-run (docs/pipelines.md)")
    rep.add_argument("--replace-run", action="store_true",
                     help="with --append: replace the rows of this --run-id, and other runs' rows of the report's "
                     "--by periods, if the table has them (a retried or rerun job)")
    rep.add_argument("--shape", choices=["long", "wide"], default="long",
                     help="layout of --out/--append: long (one row per metric, default) or wide (one row per group)")
    rep.add_argument("--run-metadata", action=argparse.BooleanOptionalAction, default=True,
                     help="add run_id, run_at, polfair_version, schema_version, config_hash columns (default: on)")
    rep.add_argument("--run-id", help="the run_id column's value (default: a random uuid4 hex)")
    rep.add_argument("--log-format", choices=["text", "json"], default="text",
                     help="json: one JSON object per event on stderr (start, pass_done, report_written, "
                     "violations, done, error) for orchestrators")
    _record_given(rep)
    _slices_parser(sub)
    _ranking_parser(sub)
    return p


def _record_given(parser: argparse.ArgumentParser) -> None:
    """Make every option of ``parser`` record its ``dest`` in ``namespace._given`` when it appears on
    the command line (whatever its value: ``--threshold 0.5`` is given even at the default), so a
    door can refuse options it does not take. argparse calls an action only for options present in
    the arguments (abbreviations and ``--opt=value`` included).
    """
    for action in parser._actions:
        if not action.option_strings:
            continue
        base = type(action)

        def call(self: Any, parser: Any, namespace: Any, values: Any, option_string: Any = None,
                 _base: Any = base) -> None:  # fmt: skip
            given = getattr(namespace, "_given", None)
            if given is None:
                given = set()
                namespace._given = given
            given.add(self.dest)
            _base.__call__(self, parser, namespace, values, option_string)

        action.__class__ = type(f"Given{base.__name__}", (base,), {"__call__": call})


def _known_rows(path: str, lf: pl.LazyFrame) -> int | None:
    """Row count from parquet metadata (no data read); None for other sources."""
    if not (path.lower().endswith(".parquet") or Path(path).is_dir() or "*" in path):
        return None
    try:
        return int(lf.select(pl.len()).collect().item())
    except Exception:  # unreadable metadata: just no rate
        return None


def _with_progress(run: Any, path: str, lf: pl.LazyFrame, progress: bool | None) -> pl.DataFrame:
    """Run ``run()`` (the report) while a spinner shows elapsed time on stderr; then rows/s."""
    import threading
    import time

    show = sys.stderr.isatty() if progress is None else progress
    if not show:
        return run()
    rows = _known_rows(path, lf)
    done = threading.Event()
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["out"] = run()
        except BaseException as exc:  # re-raised in the caller's thread
            box["err"] = exc
        finally:
            done.set()

    t0 = time.perf_counter()
    threading.Thread(target=work, daemon=True).start()
    frames = "|/-\\"
    i = 0
    size = f"{rows:,} rows" if rows is not None else "rows"
    while not done.wait(0.2):
        print(f"\r{frames[i % 4]} polfair: counting {size} ... {time.perf_counter() - t0:6.1f} s",
              end="", file=sys.stderr, flush=True)  # fmt: skip
        i += 1
    elapsed = time.perf_counter() - t0
    rate = f" ({rows / elapsed:,.0f} rows/s)" if rows else ""
    print(f"\rpolfair: audited {size} in {elapsed:.1f} s{rate}" + " " * 10, file=sys.stderr, flush=True)
    if "err" in box:
        raise box["err"]
    return box["out"]


#: The first lines of ``polfair demo``: what "favorable" means here and where ProPublica's numbers are.
DEMO_INTRO = """polfair demo: ProPublica COMPAS two-year recidivism, Broward County 2013-14
{rows} defendants (ProPublica's filter). Favorable outcome (aif360's convention for COMPAS): no
recidivism, two_year_recid = 0; the prediction is COMPAS decile_score >= 5 (medium/high risk =
predicted recidivism), so "selected" = rated low risk. ProPublica's false positives (rated
medium/high risk, did not reoffend) are this report's false NEGATIVES (false_negative_rate_ratio
~1.9 for African-American defendants); its false negatives (rated low risk, reoffended) are false
positives. Thresholds: the four-fifths band [0.8, 1.25] on DI and the FPR/FNR ratios, both sides
(--band harm: the disadvantaged side only); groups or references under {min_n} rows are
insufficient data."""


def _check_extras(args: argparse.Namespace) -> None:
    """Before the pass: the optional extras the asked-for outputs need (``--html``: ``polfair[report]``)."""
    if getattr(args, "html", None):
        from polfair.outputs.html import require_extra

        try:
            require_extra()
        except ImportError as exc:
            raise PolfairError(f"--html {args.html}: {exc}; nothing was computed or written") from exc


def _run_demo(args: argparse.Namespace) -> int:
    for flag in ("out", "html"):
        if getattr(args, flag, None):
            check_output_path(getattr(args, flag), "--" + flag)
    _check_extras(args)
    if getattr(args, "task", "classification") == "regression":
        return _run_regression_demo(args)
    from polfair.api import fairness_report
    from polfair.datasets import load_compas

    df = cast(pl.DataFrame, load_compas())
    age_band = _age_band()
    report = df.pipe(
        fairness_report,
        y_true="two_year_recid",
        y_pred=pl.col("decile_score") >= 5,
        protected=["race", "sex", age_band],
        favorable=0,
        score_label=1,  # True of decile_score >= 5 is label 1, re-arrest (docs/contract.md#polarity)
        privileged={"race": "Caucasian", "sex": "Male", "age_band": "25-45"},
        ci=0.95,
        thresholds=DEMO_THRESHOLDS,
        min_sample_size=DEMO_MIN_SAMPLE_SIZE,
        min_group_size=args.min_group_size,
    )
    attach_request(report, _as_written(
        report, y_true="two_year_recid (0 = no re-arrest within two years: the favorable outcome)",
        y_pred="decile_score >= 5 (COMPAS medium or high risk: predicted recidivism)",
        source="pf.load_compas() (ProPublica, Broward County 2013-14; ProPublica's filter)",
        favorable_meaning="no recidivism within two years (two_year_recid = 0); predicted favorable = "
        "COMPAS low risk (decile_score < 5). ProPublica's false positives (rated medium/high risk, did "
        "not reoffend) are this report's false negatives, and its false negatives are false positives."))  # fmt: skip
    print(DEMO_INTRO.format(rows=df.height, min_n=DEMO_MIN_SAMPLE_SIZE))
    print(summarize(report, attributes=["race", "sex", "age_band"]))
    _print_violations(report)
    _demo_outputs(report, args, "COMPAS: two-year recidivism (polfair demo)", df.height, "polfair demo --html compas.html")
    return 0


def _age_band() -> pl.Expr:
    """The demos' age band: <25, 25-45, >45 (aif360's COMPAS bands)."""
    return (
        pl.when(pl.col("age") < 25).then(pl.lit("<25")).when(pl.col("age") <= 45).then(pl.lit("25-45"))
        .otherwise(pl.lit(">45")).alias("age_band")
    )  # fmt: skip


def _demo_outputs(report: pl.DataFrame, args: argparse.Namespace, title: str, rows: int, hint: str) -> None:
    """A demo's ``--out`` and ``--html``; without ``--html``, how to get the page."""
    if args.out:
        write_report(report, args.out)
        print(f"wrote {report.height} rows to {args.out}")
    if args.html:
        _write_html(report, args.html, title=title, rows=rows)
    else:
        print(f"See it as a page with charts: {hint}")


def _print_violations(report: pl.DataFrame) -> int:
    """The on-call list: one line per violation (and the count of inconclusive rows); returns the count."""
    if "status" not in report.columns:
        return 0
    lines = violation_lines(report)
    count = int((report["status"] == "violation").sum())
    unsure = int((report["status"] == "inconclusive").sum())
    print(f"\n{count} threshold violation(s){f'; {unsure} inconclusive' if unsure else ''}")
    for line in lines:
        print("  " + line)
    return count


def _write_html(report: pl.DataFrame, path: str, **provenance: Any) -> None:
    """Write the HTML report (extra ``polfair[report]``) atomically; a missing extra is a clean CLI error."""
    from polfair.outputs.html import write_html

    try:
        out = write_html(report, path, **provenance)
    except ImportError as exc:
        raise PolfairError(str(exc)) from exc
    print(f"wrote the HTML report to {out}")


def _check_append(args: argparse.Namespace, run_id: str) -> None:
    """Before the pass: a parquet table, and this run id not in it yet (unless --replace-run)."""
    if args.replace_run and not args.append:
        raise PolfairError("--replace-run replaces a run's rows in an --append table: give --append TABLE")
    if not args.append:
        return
    check_append_target(args.append)
    if not args.run_metadata:
        if args.replace_run:
            raise PolfairError("--replace-run needs run ids: drop --no-run-metadata")
        return
    from pathlib import Path as _Path

    if args.run_id and _Path(args.append).exists() and not args.replace_run and table_run_files(args.append, [run_id]):
        msg = (
            f"the table {args.append!r} already holds run {run_id!r}; appending it again would duplicate its rows. "
            "Give a new --run-id, or --replace-run to replace that run's rows"
        )
        raise RunExistsError(msg)


def _run_report(args: argparse.Namespace) -> int:
    for flag in ("out", "html", "adverse_impact_out"):
        if getattr(args, flag, None):
            check_output_path(getattr(args, flag), "--" + flag.replace("_", "-"))
    _check_extras(args)
    run_id = args.run_id or uuid.uuid4().hex
    _check_append(args, run_id)
    if getattr(args, "explain", False):
        return _explain(args)
    if "dialect" in getattr(args, "_given", set()):
        raise PolfairError("--dialect is the SQL dialect of --explain: add --explain, or drop --dialect")
    if getattr(args, "task", "classification") == "regression":
        return _run_regression_report(args, run_id)
    lf = to_lazyframe(args.path)
    schema = lf.collect_schema()
    names = schema.names()
    protected = [_column_or_sql(t, names, "--protected") for t in args.protected]
    label_dtype = schema.get(args.y_true) if args.y_true else None
    kwargs: dict[str, Any] = {
        "y_true": args.y_true,
        "y_pred": None if args.y_pred is None else _column_or_sql(args.y_pred, names, "--y-pred"),
        "y_score": args.y_score,
        "threshold": args.threshold,
        "protected": protected or None,
        "favorable": [_coerce(v, label_dtype) for v in args.favorable] if args.favorable else 1,
        "unfavorable": None if not args.unfavorable else [_coerce(v, label_dtype) for v in args.unfavorable],
        "score_label": None if args.score_label is None else _coerce(args.score_label, label_dtype),
        "privileged": _privileged(args.privileged, schema) or None,
        "reference": args.reference,
        "weight": args.weight,
        "by": args.by or None,
        "intersections": args.intersections,
        "on_missing": args.on_missing,
        "config": args.config,
    }
    if args.allow_many_groups:
        kwargs["allow_many_groups"] = True
    if getattr(args, "metrics", None):
        kwargs["metrics"] = list(args.metrics)
    if getattr(args, "max_intersection_groups", None) is not None:
        kwargs["max_intersection_groups"] = args.max_intersection_groups
    if getattr(args, "max_groups_per_attribute", False) is not False:  # None: every group's rows
        kwargs["max_groups_per_attribute"] = args.max_groups_per_attribute
    if getattr(args, "worst_k", None) is not None:
        kwargs["worst_k"] = args.worst_k
    if getattr(args, "exact_sums", False):
        kwargs["exact_sums"] = True
    if getattr(args, "protected_proba", None):  # an attribute estimated from proxies (docs/proxy-groups.md)
        kwargs["protected_proba"] = parse_protected_proba_flag(args.protected_proba)
    for flag in ("proba_assignment", "proba_tolerance"):
        if getattr(args, flag, None) is not None:
            kwargs[flag] = getattr(args, flag)
    # statistics (issue 11): passed only when given, so the report's own defaults apply otherwise
    for flag in ("ci", "n_boot", "seed", "cluster", "min_group_size", "significance", "band", "thresholds",
                 "min_sample_size"):
        if getattr(args, flag, None) is not None:
            kwargs[flag] = getattr(args, flag)
    if getattr(args, "no_ci", False):
        if args.ci is not None:
            raise PolfairError("--ci and --no-ci contradict each other: give one")
        kwargs["ci"] = None
    log = _event_log(args)
    run_metadata: bool | dict[str, Any] = {"run_id": run_id} if args.run_metadata else False
    log.event("start", command="report", path=args.path, run_id=run_id,
              options={k: v for k, v in kwargs.items() if v is not None})  # fmt: skip
    from polfair.api import audit_request, run_request, run_request_batches

    # one request, built (and checked) once, handed to every section: the report, its batches, the battery
    request = audit_request(**kwargs)
    # outputs that read the whole report at once (the page, an append, a config's groups, the violations)
    whole = bool(args.html or args.append or args.config or args.thresholds or args.fail_on_violation
                 or args.adverse_impact or args.adverse_impact_out)  # fmt: skip
    # --out alone: the report is written in batches as it is computed (memory does not grow with its rows)
    stream = bool(args.out) and not (whole or args.shape == "wide" or args.min_group_size is not None)
    # the summary alone: folded over the same batches (the rows of the groups it shows, not the report)
    if not (args.out or whole):
        text = _logged_pass(lambda: summarize(run_request_batches(lf, request, run_metadata=run_metadata)), args, lf, log)
        print(text)
        log.event("done", exit_code=0)
        return 0
    if stream:
        from polfair.outputs.stream import write_report_batches

        def write() -> int:
            batches = run_request_batches(lf, request, run_metadata=run_metadata)
            first = next(batches)
            provenance = _as_written(first, y_pred=args.y_pred, protected=args.protected, source=args.path)  # as below
            return write_report_batches(itertools.chain([first], batches), args.out, provenance)

        rows = cast(int, _logged_pass(write, args, lf, log))
        print(f"wrote {rows} report rows to {args.out}")
        log.event("report_written", path=args.out, rows=rows, mode="write")
        log.event("done", exit_code=0)
        return 0
    ran: list[AuditRequest] = []  # the request in effect (its config merged): the battery's minimum

    def whole_report() -> pl.DataFrame:
        report, run = run_request(lf, request, run_metadata=run_metadata)
        ran.append(run)
        return report

    report = cast(pl.DataFrame, _logged_pass(whole_report, args, lf, log))
    # the request as the user wrote it (SQL text, not the parsed expressions), with the input
    provenance = _as_written(report, y_pred=args.y_pred, protected=args.protected, source=args.path)
    attach_request(report, provenance)
    violations = _violations(report, args)
    table = to_wide(report) if args.shape == "wide" else report
    attach_request(table, provenance)
    # the adverse-impact battery (its own pass) before any output is written: its table is a section of --html
    adverse = _adverse_impact_table(lf, args, request, ran[0]) if args.adverse_impact or args.adverse_impact_out else None
    _write_outputs(report, table, args, log, f"Fairness report: {Path(args.path).name}", summarize, adverse)
    if adverse is not None:
        _show_adverse_impact(adverse, args)
    if violations is not None:
        log.event("violations", level="warning" if violations.height else "info", count=violations.height,
                  violations=violations.head(100).with_columns(pl.selectors.categorical().cast(pl.String))
                  .drop("group_key", strict=False).to_dicts())  # fmt: skip
        _print_violations(report)
        if args.fail_on_violation and violations.height:
            log.event("done", exit_code=1)
            return 1
    log.event("done", exit_code=0)
    return 0


def _as_written(report: pl.DataFrame, **written: Any) -> dict[str, Any]:
    """A report's provenance with what the user wrote (SQL text, not the parsed expressions; the input; a demo's
    meanings; empty values left out), rendered by the one renderer (:func:`render_request`).
    """
    return render_request({**(request_of(report) or {}), **{k: v for k, v in written.items() if v}})


#: Flags of ``polfair report`` that only a classification report takes (with their default values).
_CLASSIFICATION_ONLY = (
    "y_score", "threshold", "favorable", "unfavorable", "score_label", "n_boot", "seed", "cluster", "min_group_size",
    "significance", "band", "config", "thresholds", "min_sample_size", "fail_on_violation", "adverse_impact",
    "adverse_impact_out", "adverse_impact_min_size", "adverse_impact_sets", "exact_sums", "protected_proba",
    "proba_assignment", "proba_tolerance",
)  # fmt: skip

#: ``polfair demo --task regression``: what the data and the model are.
REGRESSION_DEMO_INTRO = """polfair demo --task regression: UCI Adult (census 1994), weekly working hours
{rows:,} people. Outcome y: hours_per_week; prediction ŷ: predicted_hours, an ordinary least-squares
fit on the training split (age, education, occupation, ...; pf.load_adult_regression). mean error
= mean(ŷ − y): positive = the group's hours are over-predicted. Intervals: Student t / Welch from
the one pass's moments (docs/regression.md); KS: Kolmogorov-Smirnov distance of the group's
predictions to the reference group's."""


def _dialects() -> tuple[str, ...]:
    from polfair.engines.sql import DIALECTS

    return DIALECTS


#: The report flags --explain takes (the counting pass's); any other given is refused by name.
_EXPLAIN_FLAGS = {"y_true", "y_pred", "y_score", "threshold", "protected", "favorable", "unfavorable", "score_label",
                  "weight", "by", "min_group_size", "cluster", "exact_sums", "task", "dialect", "explain", "path",
                  "command", "on_missing", "run_metadata", "log_format", "shape", "progress"}  # fmt: skip


def _explain(args: argparse.Namespace) -> int:
    """``polfair report --explain``: print :func:`polfair.counting_sql` for the file's schema and ``--dialect``."""
    if getattr(args, "task", "classification") != "classification":
        raise PolfairError("--explain writes the classification pass's query; drop --task regression")
    given = sorted(f for f in getattr(args, "_given", set()) if f not in _EXPLAIN_FLAGS)
    if given:
        shown = ", ".join("--" + f.replace("_", "-") for f in given)
        raise PolfairError(f"--explain prints the counting query only; {shown} would need the audit: drop them")
    try:
        import ibis
        from ibis.expr.schema import Schema
    except ImportError as exc:
        raise ImportError("--explain needs Ibis and sqlglot: pip install 'polfair[sql]'") from exc
    from polfair.engines.sql import counting_sql

    schema = to_lazyframe(args.path).collect_schema()
    for flag, texts in (("--y-true", [args.y_true]), ("--y-pred", [args.y_pred]), ("--y-score", [args.y_score]),
                        ("--weight", [args.weight]), ("--protected", args.protected), ("--by", args.by),
                        ("--cluster", [args.cluster])):  # fmt: skip
        for text in texts:
            if text is not None and text not in schema:
                close = close_names(text, schema.names())
                hint = f"; did you mean {close}?" if close else ""
                raise PolfairError(f"{flag} {text!r}: --explain takes column names of the file{hint} (an expression "
                                   "can be a column of a view in the warehouse)")  # fmt: skip
    if not args.y_true:
        raise PolfairError("--y-true is required")
    label = schema.get(args.y_true)
    request: dict[str, Any] = {"y_true": args.y_true, "y_pred": args.y_pred, "y_score": args.y_score,
                               "protected": list(args.protected), "weight": args.weight, "by": args.by or None}
    if args.threshold is not None:
        request["threshold"] = args.threshold
    if args.favorable:
        request["favorable"] = [_coerce(v, label) for v in args.favorable]
    if args.unfavorable:
        request["unfavorable"] = [_coerce(v, label) for v in args.unfavorable]
    if args.score_label is not None:
        request["score_label"] = _coerce(args.score_label, label)
    for flag in ("min_group_size", "cluster"):
        if getattr(args, flag, None) is not None:
            request[flag] = getattr(args, flag)
    if getattr(args, "exact_sums", False):
        request["exact_sums"] = True
    name = Path(args.path.rstrip("/")).name.split(".")[0] or "input"
    table = ibis.table(Schema.from_polars(schema), name=name)
    print(counting_sql(table, args.dialect, **{k: v for k, v in request.items() if v is not None}))
    return 0


def _run_regression_report(args: argparse.Namespace, run_id: str) -> int:
    """``polfair report --task regression``: :func:`polfair.regression_report` on a file."""
    from polfair.regression import regression_report

    given = [f"--{k.replace('_', '-')}" for k in _CLASSIFICATION_ONLY if k in getattr(args, "_given", ())]
    if given:
        exact = (" (--exact-sums: the regression moments are Float64 sums, equal in any order up to rounding; exact "
                 "fixed-point sums are for the classification counts)") if "--exact-sums" in given else ""  # fmt: skip
        msg = (
            f"--task regression does not take {', '.join(given)} (classification options, refused whatever their "
            f"value){exact}; a regression report needs --y-true (numeric outcome), --y-pred (numeric prediction) "
            "and --protected"
        )
        raise PolfairError(msg)
    if not args.y_true or not args.y_pred:
        raise PolfairError("--task regression needs --y-true (the numeric outcome) and --y-pred (the prediction)")
    if not args.protected:
        raise PolfairError("--task regression needs --protected (one or more protected columns)")
    if args.reference == "best":
        raise PolfairError("--reference best is for classification; regression takes privileged, largest or overall")
    lf = to_lazyframe(args.path)
    schema = lf.collect_schema()
    names = schema.names()
    kwargs: dict[str, Any] = {
        "y_true": _column_or_sql(args.y_true, names, "--y-true"),
        "y_pred": _column_or_sql(args.y_pred, names, "--y-pred"),
        "protected": [_column_or_sql(t, names, "--protected") for t in args.protected],
        "weight": None if args.weight is None else _column_or_sql(args.weight, names, "--weight"),
        "by": args.by or None,
        "privileged": _privileged(args.privileged, schema) or None,
        "reference": args.reference,
        "intersections": args.intersections,
        "on_missing": args.on_missing,
        "allow_many_groups": args.allow_many_groups,
    }
    if args.no_ci:
        if args.ci is not None:
            raise PolfairError("--ci and --no-ci contradict each other: give one")
        kwargs["ci"] = None
    elif args.ci is not None:
        kwargs["ci"] = args.ci
    log = _event_log(args)
    log.event("start", command="report", task="regression", path=args.path, run_id=run_id,
              options={k: v for k, v in kwargs.items() if v is not None})  # fmt: skip
    report = _logged_pass(lambda: regression_report(lf, **kwargs), args, lf, log)
    request = _as_written(report, y_true=args.y_true, y_pred=args.y_pred, protected=args.protected, weight=args.weight,
                          source=args.path)  # fmt: skip
    attach_request(report, request)
    table = report
    if args.run_metadata:
        from polfair.core.report.run_metadata import with_run_metadata
        from polfair.core.request import task_hashed

        table = with_run_metadata(table, run_id=run_id, config=task_hashed("regression", kwargs))
    table = to_wide(table) if args.shape == "wide" else table
    attach_request(table, request)
    from polfair.outputs.regression import summarize_regression

    _write_outputs(report, table, args, log, f"Regression fairness report: {Path(args.path).name}",
                   summarize_regression)  # fmt: skip
    log.event("done", exit_code=0)
    return 0


def _run_regression_demo(args: argparse.Namespace) -> int:
    """``polfair demo --task regression``: the bundled Adult regression data."""
    from polfair.datasets import load_adult_regression
    from polfair.outputs.regression import summarize_regression
    from polfair.regression import regression_report

    if args.min_group_size is not None:
        raise PolfairError("--min-group-size is not available with --task regression yet")
    df = cast(pl.DataFrame, load_adult_regression())
    age_band = _age_band()
    report = df.pipe(
        regression_report, y_true="hours_per_week", y_pred="predicted_hours", protected=["sex", "race", age_band],
        privileged={"sex": "Male", "race": "White", "age_band": "25-45"}, intersections=2,
    )  # fmt: skip
    attach_request(report, _as_written(
        report, source="pf.load_adult_regression() (UCI Adult, CC BY 4.0; OLS prediction of hours_per_week)",
        y_true="hours_per_week (usual weekly working hours)", y_pred="predicted_hours (least squares on the training split)",
        protected=["sex", "race", "age_band (<25, 25-45, >45 from age)"]))  # fmt: skip
    print(REGRESSION_DEMO_INTRO.format(rows=df.height))
    print()
    print(summarize_regression(report, attributes=["sex", "race", "age_band"]))
    _demo_outputs(report, args, "UCI Adult: weekly hours (polfair regression demo)", df.height,
                  "polfair demo --task regression --html adult-regression.html")  # fmt: skip
    return 0


def _logged_pass(run: Any, args: argparse.Namespace, lf: pl.LazyFrame, log: EventLog) -> Any:
    """Run the report (with ``--progress``); every warning an event under ``--log-format json``.
    ``run`` returns the report, the number of rows it wrote (``--out`` in batches), or the summary's text.
    """
    progress = False if log.enabled and args.progress is None else args.progress
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=log.enabled) as caught:
        if log.enabled:  # every warning becomes a "warning" event, none goes to stderr as text
            warnings.simplefilter("always")
        report = _with_progress(run, args.path, lf, progress)
    for w in caught or []:
        log.event("warning", level="warning", category=w.category.__name__, message=str(w.message))
    rows = report if isinstance(report, int) else None if isinstance(report, str) else report.height
    done: dict[str, Any] = {"seconds": round(time.perf_counter() - t0, 3)}
    if rows is not None:
        done["report_rows"] = rows
    log.event("pass_done", **done)
    return report


def _write_outputs(report: pl.DataFrame, table: pl.DataFrame, args: argparse.Namespace, log: EventLog, title: str,
                   summary: Any, adverse: pl.DataFrame | None = None) -> None:  # fmt: skip
    """``--append`` / ``--out`` (the table, long or wide) and ``--html`` (the report, with the
    adverse-impact section when ``--adverse-impact`` ran); else the summary.
    """
    if args.append:
        written = append_report(table, args.append, replace_run=args.replace_run)
        print(f"appended {table.height} report rows to {args.append} ({written})")
        log.event("report_written", path=str(written), table=args.append, rows=table.height, mode="append")
    if args.out:
        write_report(table, args.out)
        print(f"wrote {table.height} report rows to {args.out}")
        log.event("report_written", path=args.out, rows=table.height, mode="write")
    if args.html:
        _write_html(report, args.html, title=title, **({} if adverse is None else {"adverse_impact": adverse}))
    if not (args.out or args.html or args.append):
        print(summary(report))


def _event_log(args: argparse.Namespace) -> EventLog:
    """The run's event log (``--log-format``; plain text writes nothing extra)."""
    return EventLog(getattr(args, "log_format", "text"))


def parse_protected_proba_flag(text: str) -> dict[str, dict[str, str | None]]:
    """``--protected-proba race=white:p_white,black:p_black,other`` -> ``{"race": {"white": "p_white", ...}}``.

    A group without ``:COLUMN`` is the remainder group (``None``: 1 - the others).

    Raises
    ------
    PolfairError
        Not ``ATTR=GROUP:COLUMN,...``, or a group given twice.

    Examples
    --------
    >>> parse_protected_proba_flag("race=white:p_white,black:p_black,other")
    {'race': {'white': 'p_white', 'black': 'p_black', 'other': None}}
    """
    attr, sep, rest = text.partition("=")
    groups: dict[str, str | None] = {}
    for part in rest.split(",") if sep else []:
        group, colon, column = (x.strip() for x in part.partition(":"))
        if not group or (colon and not column) or group in groups:
            groups = {}
            break
        groups[group] = column if colon else None
    if not attr.strip() or not groups:
        msg = (
            f"--protected-proba {text!r}: write ATTR=GROUP:COLUMN,GROUP:COLUMN,... (each group once; a group "
            "without a column is the remainder), e.g. --protected-proba race=white:p_white,black:p_black,other"
        )
        raise PolfairError(msg)
    return {attr.strip(): groups}


def _sets(texts: Sequence[str] | None) -> list[list[str]] | None:
    """``--adverse-impact-sets race 'race & sex' race,sex`` -> [["race"], ["race", "sex"], ["race", "sex"]]."""
    if not texts:
        return None
    return [[part.strip() for part in re.split(r"[&,]", t) if part.strip()] for t in texts]


def _adverse_impact_table(lf: pl.LazyFrame, args: argparse.Namespace, request: AuditRequest,
                          run: AuditRequest) -> pl.DataFrame:  # fmt: skip
    """``--adverse-impact PRESET``: the adverse-impact table (its own pass) of the report's request.

    ``request`` is the request as the command built it (the roles as given), ``run`` the same request in
    effect after the report merged its config: the battery's minimum is the report's (``--min-sample-size``
    or the config's ``min_sample_size``) unless ``--adverse-impact-min-size`` says otherwise (one policy
    for every section, docs/status.md).
    """
    from polfair.regulatory import adverse_impact

    preset = args.adverse_impact or "eeoc"
    use_score = request.y_pred is None and preset == "nyc_ll144"
    if request.y_pred is None and not use_score:
        msg = "--adverse-impact eeoc needs --y-pred (the selection decision); NYC LL144 also takes --y-score"
        raise PolfairError(msg)
    sets = _sets(args.adverse_impact_sets)
    minimum = args.adverse_impact_min_size if args.adverse_impact_min_size is not None else run.min_sample_size
    # the scoring rate (--y-score) reads no favorable label
    table = adverse_impact(
        lf, y_pred=None if use_score else request.y_pred, y_score=request.y_score if use_score else None,
        protected=request.protected or [], preset=cast(Any, preset), by=request.by,
        favorable=None if use_score else request.favorable, score_label=None if use_score else request.score_label,
        intersections=sets if sets is not None else request.intersections,
        min_sample_size=None if minimum is None else int(minimum), protected_proba=request.protected_proba,
        proba_assignment=request.proba_assignment, proba_tolerance=request.proba_tolerance,
    )  # fmt: skip
    return table


def _show_adverse_impact(table: pl.DataFrame, args: argparse.Namespace) -> None:
    """The adverse-impact table written (``--adverse-impact-out``) or printed."""
    preset = args.adverse_impact or "eeoc"
    caveat = (request_of(table) or {}).get("caveat")
    if caveat:  # groups estimated from proxies: the battery's caveat, before the table
        print("adverse impact: " + caveat)
    out = args.adverse_impact_out
    if out:
        suffix = Path(out).suffix.lower()
        if suffix not in (".parquet", ".csv", ".json"):
            msg = f"--adverse-impact-out: use a .parquet, .csv or .json path, got {out!r}"
            raise PolfairError(msg)
        write_report(table, out)  # atomic, as every file the command writes
        print(f"wrote {table.height} adverse-impact rows to {out}")
        return
    from polfair.outputs.summaries import summarize as summarize_any  # every section through pf.summarize

    print(f"adverse impact ({preset}):")
    print(summarize_any(table))


def _violations(report: pl.DataFrame, args: argparse.Namespace) -> pl.DataFrame | None:
    """The report's violations (its status column) when thresholds were applied (``--config``), else ``None``."""
    from polfair.monitor import alerts

    if "status" not in report.columns:
        if args.fail_on_violation:
            msg = ("--fail-on-violation needs thresholds (without them nothing is judged): give --thresholds "
                   "four_fifths, or a --config file with a [thresholds] table")  # fmt: skip
            raise PolfairError(msg)
        return None
    return alerts(report)


EXIT_CODES_HELP = """exit status:
  0  success (the report was computed and written/printed)
  1  the report's status has a violation, under --fail-on-violation
  2  a usage or input error: bad option, missing/malformed file, bad expression, unwritable output,
     an --append refused (schema, a run id already in the table, a lock held too long)
  3  an unexpected internal error (a bug: the traceback is printed; please report it)
  141  the reader of standard output closed it early (e.g. | head): nothing more is printed"""

def _intersections_flag(text: str) -> int | str:
    """``--intersections``: an int (largest attribute-set size), ``all`` or ``none``."""
    if text in ("all", "none"):
        return text
    try:
        return int(text)
    except ValueError:
        msg = f"expected an int (largest attribute-set size), 'all' or 'none', got {text!r}"
        raise argparse.ArgumentTypeError(msg) from None


def _groups_flag(text: str) -> int | None:
    """``--max-groups-per-attribute``: an int, or ``none`` (every group's rows)."""
    word = text.strip().lower()
    if word != "none" and not word.lstrip("-").isdigit():
        msg = f"expected an int (groups of an attribute set shown one by one) or 'none', got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return None if word == "none" else int(word)


#: Python keywords of the API -> the command line's flags, for messages raised by the library.
_FLAGS = {
    "y_true": "--y-true", "y_pred": "--y-pred", "y_score": "--y-score", "weight": "--weight",
    "protected": "--protected", "favorable": "--favorable", "unfavorable": "--unfavorable",
    "score_label": "--score-label",
    "privileged": "--privileged", "reference": "--reference", "by": "--by", "threshold": "--threshold",
    "intersections": "--intersections", "on_missing": "--on-missing", "allow_many_groups": "--allow-many-groups",
    "ci": "--ci", "n_boot": "--n-boot", "seed": "--seed", "cluster": "--cluster",
    "min_group_size": "--min-group-size", "significance": "--significance", "exact_sums": "--exact-sums", "band": "--band",
    "protected_proba": "--protected-proba", "proba_assignment": "--proba-assignment",
    "proba_tolerance": "--proba-tolerance", "thresholds": "--thresholds", "min_sample_size": "--min-sample-size",
    "metrics": "--metrics", "max_intersection_groups": "--max-intersection-groups",
    "max_groups_per_attribute": "--max-groups-per-attribute", "worst_k": "--worst-k",
}  # fmt: skip
_FLAGS |= {  # polfair slices (issue 33)
    "errors": "--errors", "features": "--features", "metric": "--metric", "alpha": "--alpha", "k": "--k",
    "max_level": "--max-level", "min_support": "--min-support", "bins": "--bins", "p_adjust": "--p-adjust",
}  # fmt: skip
_FLAG_RE = re.compile(r"(?<![\w.-])(" + "|".join(_FLAGS) + r")=('[^']*'|\"[^\"]*\"|[^\s,;:)]+)?")


def flag_message(text: str) -> str:
    """A library message in the command line's words.

    ``favorable='x'`` -> ``--favorable x``, ``on_missing='ignore'`` -> ``--on-missing ignore``,
    ``allow_many_groups=True`` -> ``--allow-many-groups``.

    Examples
    --------
    >>> print(flag_message("favorable='yes' cannot match; pass on_missing='ignore' or allow_many_groups=True"))
    --favorable yes cannot match; pass --on-missing ignore or --allow-many-groups
    """

    def sub(m: re.Match[str]) -> str:
        flag, value = _FLAGS[m.group(1)], m.group(2)
        if value is None:
            return flag
        if m.group(1) == "allow_many_groups":
            return flag
        if m.group(1) == "exact_sums":
            return flag if value == "True" else f"no {flag}"
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        return f"{flag} {value}"

    return _FLAG_RE.sub(sub, text)


def check_output_path(path: str, flag: str) -> None:
    """Fail before the pass when ``path`` cannot be written.

    That is: a directory, a missing or read-only parent directory, a read-only existing file, or
    (for ``--out``) an unknown extension.

    Raises
    ------
    PolfairError
        Naming the flag, the path and the fix.

    Examples
    --------
    >>> check_output_path("report.parquet", "--out")
    >>> check_output_path(".", "--out")
    Traceback (most recent call last):
    ...
    polfair.exceptions.PolfairError: --out '.' is a directory; give a file name such as ./report.parquet
    """
    import os

    p = Path(path)
    if p.is_dir():
        msg = f"{flag} {path!r} is a directory; give a file name such as {os.path.join(path, 'report.parquet')}"
        raise PolfairError(msg)
    if flag in ("--out", "--adverse-impact-out") and not path.lower().endswith(
        (".parquet", ".csv", ".json", ".ndjson", ".jsonl")
    ):
        msg = f"{flag} {path!r}: use a .parquet, .csv, .json or .ndjson file name"
        raise PolfairError(msg)
    check_writable(flag, path, p, p.parent if str(p.parent) else Path("."))


def _one_line_warning(message: Warning | str, category: type[Warning], *args: Any, **kwargs: Any) -> str:
    return f"polfair: warning: {flag_message(str(message))}\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``polfair`` command; returns the exit status.

    0 success, 1 a violation under ``--fail-on-violation``, 2 a usage or input error (one line on
    stderr, no traceback), 3 an unexpected internal error (with the traceback), 141 when the reader of
    standard output closed it (``polfair demo | head``; nothing printed, as for SIGPIPE); see
    ``polfair --help``.
    """
    args = _parser().parse_args(argv)  # usage errors: argparse exits with status 2
    saved = warnings.formatwarning
    warnings.formatwarning = _one_line_warning
    try:
        if args.command == "demo":
            return _run_demo(args)
        if args.command == "slices":
            return _run_slices(args)
        if args.command == "ranking":
            return _run_ranking(args)
        return _run_report(args)
    except BrokenPipeError:  # `polfair demo | head`: the reader left; stop quietly, as a SIGPIPE'd tool does
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the interpreter's final flush must not raise again
        return 141
    except (PolfairError, TypeError, ValueError, OSError, ImportError, pl.exceptions.PolarsError) as exc:
        # user errors: bad options, unreadable/malformed input, bad expressions, unwritable output,
        # an optional extra that is not installed (the message names it)
        text = flag_message(str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__)
        if isinstance(exc, OSError) and not isinstance(exc, PolfairError) and exc.filename:
            text = f"{exc.strerror or exc}: {exc.filename!r}"
        log = _event_log(args)
        log.event("error", level="error", type=type(exc).__name__, message=text, exit_code=2)
        if not log.enabled:
            print(f"polfair: error: {text}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("polfair: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug: show everything
        import traceback

        traceback.print_exc()
        _event_log(args).event("error", level="error", type=type(exc).__name__, message=str(exc), exit_code=3)
        print(f"polfair: internal error ({type(exc).__name__}): {exc}; please report it with the traceback above",
              file=sys.stderr)  # fmt: skip
        return 3
    finally:
        warnings.formatwarning = saved


# ---------------------------------------------------------------------------------------------
# polfair slices (issue 33): the worst slices of a file, SliceLine one scan per lattice level


def _slices_parser(sub: Any) -> None:
    """The ``polfair slices`` subcommand's options."""
    sl = sub.add_parser("slices", help="find the slices (feature-value combinations) where the model errs most",
                        epilog=EXIT_CODES_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    sl.add_argument("path", help="parquet/CSV file, glob, or hive-partitioned directory")
    sl.add_argument("--features", nargs="+", required=True, help="columns or SQL expressions to slice on")
    sl.add_argument("--errors", help="per-row loss: a column or SQL expression (e.g. 'y != pred', '(y - p) * (y - p)')")
    sl.add_argument("--y-true", help="instead of --errors: the label column (with --y-pred or --y-score, --metric)")
    sl.add_argument("--y-pred", help="predicted-label column or SQL expression (e.g. 'score >= 0.5')")
    sl.add_argument("--y-score", help="score column in [0, 1]: P(favorable), or P(--score-label)")
    sl.add_argument("--threshold", type=float, help="threshold for --y-score (default 0.5)")
    sl.add_argument("--metric", default="error_rate",
                    help="with labels: the rate whose worst slices to find (default error_rate; false_positive_rate, "
                    "false_negative_rate, selection_rate, ...)")
    sl.add_argument("--favorable", nargs="+", help="favorable label value(s) (default 1)")
    sl.add_argument("--score-label", metavar="LABEL",
                    help="the label --y-score is the probability of, and a Boolean --y-pred's True stands for "
                    "(docs/contract.md#polarity)")
    sl.add_argument("--weight", help="instance-weight column")
    sl.add_argument("--alpha", type=float, default=0.95, help="SliceLine's weight of the error term (default 0.95)")
    sl.add_argument("--k", type=int, default=10, help="slices to return (default 10; more on ties)")
    sl.add_argument("--max-level", type=int, default=3, help="the most predicates in a slice (default 3)")
    sl.add_argument("--min-support", type=float, default=32,
                    help="fewest rows of a slice (default 32); below 1: a fraction of the rows")
    sl.add_argument("--bins", type=int, default=10,
                    help="quantile bins of numeric features with more distinct values (default 10; 0: no bins)")
    sl.add_argument("--ci", type=float, metavar="LEVEL", default=0.95, help="confidence level (default 0.95)")
    sl.add_argument("--no-ci", action="store_true", help="no intervals (the tests remain)")
    sl.add_argument("--p-adjust", choices=["holm", "bh", "by", "none"], default="holm",
                    help="adjustment of the p-values over every evaluated slice (default holm)")
    sl.add_argument("--on-missing", choices=["warn", "raise", "ignore"], default="warn")
    sl.add_argument("--out", help="write the slice table (.parquet/.csv/.json/.ndjson); default: print a summary")
    sl.add_argument("--html", metavar="PATH", help="also write the slices as one self-contained HTML page")


def _run_slices(args: argparse.Namespace) -> int:
    """``polfair slices PATH --features ... --errors ...``: :func:`polfair.slice_scan` on a file."""
    from polfair.outputs.slices import summarize_slices
    from polfair.slices import slice_scan

    for flag in ("out", "html"):
        if getattr(args, flag, None):
            check_output_path(getattr(args, flag), "--" + flag)
    if args.errors is None and args.y_true is None:
        raise PolfairError("polfair slices needs --errors (a per-row loss) or --y-true with --y-pred/--y-score")
    if args.no_ci and args.ci != 0.95:
        raise PolfairError("--ci and --no-ci contradict each other: give one")
    lf = to_lazyframe(args.path)
    schema = lf.collect_schema()
    names = schema.names()
    label_dtype = schema.get(args.y_true) if args.y_true else None
    support = args.min_support
    kwargs: dict[str, Any] = {
        "features": [_column_or_sql(t, names, "--features") for t in args.features],
        "errors": None if args.errors is None else _column_or_sql(args.errors, names, "--errors"),
        "y_true": args.y_true,
        "y_pred": None if args.y_pred is None else _column_or_sql(args.y_pred, names, "--y-pred"),
        "y_score": args.y_score, "threshold": args.threshold, "weight": args.weight,
        "favorable": [_coerce(v, label_dtype) for v in args.favorable] if args.favorable else 1,
        "score_label": None if args.score_label is None else _coerce(args.score_label, label_dtype),
        "alpha": args.alpha, "k": args.k, "max_level": args.max_level,
        "min_support": int(support) if support >= 1 and float(support).is_integer() else support,
        "bins": args.bins or None, "ci": None if args.no_ci else args.ci,
        "p_adjust": None if args.p_adjust == "none" else args.p_adjust, "on_missing": args.on_missing,
    }  # fmt: skip
    if args.errors is None:
        kwargs["metric"] = args.metric
    elif args.metric != "error_rate":
        raise PolfairError("--metric needs labels (--y-true with --y-pred or --y-score), not --errors")
    if kwargs["errors"] is not None and args.errors not in names:
        kwargs["errors"] = kwargs["errors"].alias(args.errors)  # named by its SQL text
    result = slice_scan(lf, **kwargs)
    if args.out:
        write_report(result, args.out)
        print(f"wrote {result.height} slices to {args.out}")
    if args.html:
        _write_html(result, args.html, title=f"Slices: {Path(args.path).name}", source=args.path)
    if not (args.out or args.html):
        print(summarize_slices(result))
    return 0



# ---------------------------------------------------------------------------------------------
# polfair ranking (issue 43): group exposure of the rankings in a file


def _ranking_parser(sub: Any) -> None:
    """The ``polfair ranking`` subcommand's options."""
    rk = sub.add_parser("ranking", help="who is seen in rankings: group exposure, AWRF, NDKL, nDCG by query group",
                        epilog=EXIT_CODES_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    rk.add_argument("path", help="parquet/CSV file, glob, or hive-partitioned directory: one row per ranked item")
    rk.add_argument("--query", required=True, help="the query (ranking) id column")
    rk.add_argument("--rank", required=True, help="integer positions, 1 = top; ties as competition ranks (1, 2, 2, 4)")
    rk.add_argument("--protected", nargs="+", help="item attribute columns")
    rk.add_argument("--query-protected", nargs="+", help="query attribute columns (nDCG by group of queries)")
    rk.add_argument("--relevance", help="non-negative relevance column")
    rk.add_argument("--k", type=int, help="cut-off: positions beyond k get no exposure (default: none)")
    rk.add_argument("--weight", help="query weight column (constant within a query)")
    rk.add_argument("--by", nargs="+", help="one report per value of these columns")
    rk.add_argument("--position-weight", choices=["log", "geometric", "reciprocal"], default="log")
    rk.add_argument("--p", type=float, default=0.5, help="geometric attention's first-position share (default 0.5)")
    rk.add_argument("--privileged", nargs="+", default=[], metavar="ATTRIBUTE=VALUE", help="reference groups")
    rk.add_argument("--ci", type=float, metavar="LEVEL", default=0.95, help="confidence level (default 0.95)")
    rk.add_argument("--no-ci", action="store_true", help="no intervals")
    rk.add_argument("--min-sample-size", type=int, metavar="N",
                    help="the small-group policy (default 30; 0: none): groups of fewer than N rows are never the "
                    "comparison group, and with --thresholds their rows are insufficient_data")
    rk.add_argument("--thresholds", nargs="+", metavar="METRIC=LO:HI",
                    help="inclusive bands to judge (threshold and status columns), e.g. exposure_share=0.2:0.5 "
                    "awrf=0.8: (an empty side is open)")
    rk.add_argument("--fail-on-violation", action="store_true",
                    help="exit with status 1 when the report's status has a violation (needs --thresholds)")
    rk.add_argument("--streaming", action="store_true", help="stream the file (larger than memory)")
    rk.add_argument("--out", help="write the report (.parquet/.csv/.json/.ndjson); default: print a summary")


def _ranking_bands(items: list[str] | None) -> dict[str, dict[str, float]] | None:
    """``--thresholds exposure_share=0.2:0.5 awrf=0.8:`` -> ``{metric: {"min": lo, "max": hi}}`` (an empty side is open)."""
    if not items:
        return None
    out: dict[str, dict[str, float]] = {}
    for item in items:
        metric, eq, band = item.partition("=")
        lo, colon, hi = band.partition(":")
        try:
            sides = {k: float(v) for k, v in (("min", lo), ("max", hi)) if v.strip()}
        except ValueError:
            sides = {}
        if not (eq and colon and metric.strip() and sides):
            msg = f"--thresholds {item!r}: give METRIC=LO:HI with at least one number, e.g. exposure_share=0.2:0.5 or awrf=0.8:"
            raise PolfairError(msg)
        out[metric.strip()] = sides
    return out


def _run_ranking(args: argparse.Namespace) -> int:
    """``polfair ranking PATH --query Q --rank R --protected ...``: :func:`polfair.ranking_report` on a file."""
    from polfair.outputs.ranking import summarize_ranking
    from polfair.ranking import ranking_report

    if args.out:
        check_output_path(args.out, "--out")
    if args.no_ci and args.ci != 0.95:
        raise PolfairError("--ci and --no-ci contradict each other: give one")
    if args.fail_on_violation and not args.thresholds:  # before the pass: without bands nothing is judged
        msg = "--fail-on-violation needs thresholds (without them nothing is judged): give --thresholds METRIC=LO:HI"
        raise PolfairError(msg)
    lf = to_lazyframe(args.path)
    schema = lf.collect_schema()
    report = ranking_report(
        lf, query=args.query, rank=args.rank, protected=args.protected, query_protected=args.query_protected,
        relevance=args.relevance, k=args.k, weight=args.weight, by=args.by, position_weight=args.position_weight,
        p=args.p, privileged=_privileged(args.privileged, schema) or None, ci=None if args.no_ci else args.ci,
        min_sample_size=args.min_sample_size, thresholds=_ranking_bands(args.thresholds),
        engine="streaming" if args.streaming else "auto",
    )  # fmt: skip
    request = request_of(report) or {}
    request["source"] = args.path
    attach_request(report, request)
    violations = _violations(report, args)  # as report's: the rows its thresholds judged violations
    if args.out:
        write_report(report, args.out)
        print(f"polfair: wrote {report.height:,} report rows to {args.out}", file=sys.stderr)
    else:
        print(summarize_ranking(report))
    if args.fail_on_violation and violations is not None and violations.height:
        _print_violations(report)  # the on-call list, then exit 1, as report's
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
