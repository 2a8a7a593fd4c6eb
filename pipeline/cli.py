"""``python -m pipeline {analyze,decode,describe,report,stream}``; also runnable as a file by ``spark-submit``.

``--master`` defaults to ``local[*]`` unless ``spark-submit`` already chose one. Arguments, inputs and Java are
checked before Spark starts (:mod:`pipeline.preflight`): a mistake is one sentence on stderr and exit status 2 (1
for a group that does not exist, 130 for Ctrl-C). Damage found in the log (:mod:`pipeline.damage`) is one line per
skipped range or truncated partition on stderr; ``--strict`` then exits 3, after the output was written. Progress
goes to stderr, the command's output to stdout. ``describe`` on a small log (``--engine auto``) runs without Spark
at all (:mod:`pipeline.describe_python`).
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import re
import signal
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

if __package__ in (None, ""):  # run as a file (spark-submit pipeline/cli.py): make the package importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cli.describe_format import format_describe
from pipeline.config import AnalysisConfig, BurrowConfig, parse_duration_ms
from pipeline.damage import SkippedRange, TruncatedPartition, check_strict, skipped_from_rows, truncated_from_rows
from pipeline.describe_rules import ENGINE_AUTO_MAX_BYTES, ENGINES, choose_engine, group_pattern
from pipeline.preflight import (
    PipelineError,
    check_as_of,
    check_data_dir,
    check_java,
    check_report_inputs,
    pending_stream_kinds,
)
from pipeline.progress import Progress

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from pipeline.inputs import InputSummary

__all__ = ["main"]


def _common(p: argparse.ArgumentParser, *, data: bool = True, out: bool = True) -> None:
    if data:
        p.add_argument("--data-dir", required=True, help="the broker's log directory (log.dirs)")
    if out:
        p.add_argument("--out", required=True, type=Path, help="output directory")
    p.add_argument("--master", default=None, help="Spark master (default local[*], or what spark-submit set)")
    p.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", help="extra Spark settings")


def _analysis_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--as-of", default="max", help="max (latest time in the logs), now, or an ISO-8601 time")
    p.add_argument("--intervals", type=int, default=10, help="Burrow: commits kept per partition (10)")
    p.add_argument("--min-distance", type=int, default=0, help="Burrow: seconds between stored commits (0)")
    p.add_argument("--expire-group", type=int, default=604800, help="Burrow: forget a silent group after (s)")
    p.add_argument("--allowed-lag", type=int, default=0, help="Burrow: lag treated as zero (0)")
    p.add_argument("--minimum-complete", type=float, default=0.0, help="Burrow: window share needed (0.0)")
    p.add_argument("--offset-refresh", type=int, default=10, help="Burrow: broker offset ring spacing (s)")
    p.add_argument("--tick", default="60s", help="status history grid (e.g. 60s, 5m)")
    p.add_argument("--rate-window", default="60s", help="width of rate windows")
    p.add_argument("--groups", default=None, help="only groups matching this regex")
    p.add_argument("--exclude-groups", default=None, help="skip groups matching this regex")
    p.add_argument("--no-plots", action="store_true", help="skip lag.png and rebalances.png")
    _strict_option(p)


def _strict_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--strict",
        action="store_true",
        help="exit 3 if the log is damaged (a skipped byte range or a truncated partition), after writing the output",
    )


def _config(args: argparse.Namespace) -> AnalysisConfig:
    return AnalysisConfig(
        burrow=BurrowConfig(
            intervals=args.intervals,
            min_distance_s=args.min_distance,
            expire_group_s=args.expire_group,
            allowed_lag=args.allowed_lag,
            minimum_complete=args.minimum_complete,
            offset_refresh_s=args.offset_refresh,
        ),
        tick_ms=parse_duration_ms(args.tick),
        rate_window_ms=parse_duration_ms(args.rate_window),
        as_of=args.as_of,
        groups=args.groups,
        exclude_groups=args.exclude_groups,
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m pipeline", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("analyze", help="every table, report.txt, lag.png, rebalances.png")
    _common(p)
    _analysis_options(p)
    p = sub.add_parser(
        "decode", help="only the decoded tables (commits, transactional commits, generations, assignments, LEO)"
    )
    _common(p)
    p.add_argument("--groups", default=None)
    p.add_argument("--exclude-groups", default=None)
    p = sub.add_parser("describe", help="print kafka-consumer-groups --describe as of a time")
    _common(p, out=False)
    p.add_argument("--group", default=None, help="only this group")
    p.add_argument("--as-of", default="max", help="max (latest time in the logs), now, or an ISO-8601 time")
    p.add_argument(
        "--engine",
        choices=ENGINES,
        default="auto",
        help=f"python: read the log in this process, no Spark (about a second on a few MB); spark: decode on "
        f"Spark (20-30 s to start, for big logs); auto (default): python when the segment files total under "
        f"{ENGINE_AUTO_MAX_BYTES // (1024 * 1024)} MiB, else spark",
    )
    _strict_option(p)
    p = sub.add_parser("report", help="re-render report.txt and the pictures from an --out directory")
    p.add_argument("--out", required=True, type=Path)
    p.add_argument("--no-plots", action="store_true")
    p = sub.add_parser("stream", help="decode only what was appended since the last run, then analyse")
    _common(p)
    _analysis_options(p)
    p.add_argument("--checkpoint", type=Path, default=None, help="default OUT/_checkpoints")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--once", action="store_true", help="one run, then exit (default)")
    mode.add_argument("--interval", default=None, help="keep running, one run per interval (e.g. 60s)")
    p.add_argument("--no-analyze", action="store_true", help="only ingest new records")
    return parser


class GroupNotFoundError(PipelineError):
    """``describe --group`` named a group the log never saw (Kafka's tool: exit 1)."""

    exit_code = 1


def _spark(args: argparse.Namespace, progress: Progress) -> SparkSession:
    from pipeline.session import build_session

    conf = dict(item.split("=", 1) for item in args.conf)
    with progress.stage("starting Spark"):
        return build_session(args.master, conf)


def _finish(out: Path, plots: bool, progress: Progress) -> None:
    from pipeline.report import render_outputs, write_report

    with progress.stage("writing report.txt" + (" and pictures" if plots else "")):
        paths = render_outputs(out) if plots else [write_report(out)]
    for path in paths:
        print(f"wrote {path}")


def _judge(skipped: list[SkippedRange], truncated: list[TruncatedPartition], strict: bool, progress: Progress) -> None:
    """Damage is always said on stderr (one line per range or partition); ``--strict`` then exits 3."""
    for r in skipped:
        progress.note(f"skipped {r.text()}")
    for p in truncated:
        progress.note(f"truncated {p.text()}")
    if strict:
        check_strict(skipped, truncated)


def _judge_summary(summary: InputSummary, strict: bool, progress: Progress) -> None:
    skipped = [SkippedRange(**r) for r in summary.skipped]
    _judge(skipped, [TruncatedPartition(**p) for p in summary.truncated], strict, progress)


def _analyze(args: argparse.Namespace, progress: Progress) -> int:
    from pipeline.analyze import analyze

    spark = _spark(args, progress)
    analysis = analyze(spark, args.data_dir, args.out, _config(args), progress=progress)
    print(f"tables in {args.out / 'tables'} ({', '.join(f'{k} {v:.1f}s' for k, v in analysis.timings.items())})")
    _finish(args.out, not args.no_plots, progress)
    progress.summary(len(analysis.timings) - 1, sum(analysis.summary.records.values()))
    _judge_summary(analysis.summary, args.strict, progress)
    return 0


def _decode(args: argparse.Namespace, progress: Progress) -> int:
    from pipeline.analyze import decode_tables, write_table

    spark = _spark(args, progress)
    cfg = AnalysisConfig(groups=args.groups, exclude_groups=args.exclude_groups)
    t = decode_tables(spark, args.data_dir, cfg)
    tables = {
        "offset_commits": t.commits,
        "txn_offset_commits": t.txn_commits,
        "group_generations": t.generations,
        "group_assignments": t.assignments,
        "topic_batches": t.batches,
        "topic_leo": t.leo,
    }
    with progress.stage(f"decoding {len(check_data_dir(args.data_dir))} segments and writing tables"):
        for name, df in tables.items():
            write_table(df, args.out, name)
            print(f"wrote {args.out / 'tables' / name}")
    progress.summary(len(tables))
    _judge(skipped_from_rows(r.asDict() for r in t.skipped.collect()), [], strict=False, progress=progress)
    return 0


def _describe(args: argparse.Namespace, progress: Progress) -> int:
    segments = check_data_dir(args.data_dir)
    stage = f"decoding {len(segments)} segments and describing"
    if args.engine == "python":
        from pipeline.describe_python import describe_python_checked

        with progress.stage(stage):
            found, skipped = describe_python_checked(args.data_dir, args.as_of, args.group)
    else:
        from pipeline.analyze import decode_tables
        from pipeline.describe import describe_tables

        spark = _spark(args, progress)
        pattern = None if args.group is None else group_pattern(args.group)
        with progress.stage(stage):
            tables = decode_tables(spark, args.data_dir, AnalysisConfig(groups=pattern))
            found = describe_tables(tables, args.as_of, args.group)
            skipped = skipped_from_rows(r.asDict() for r in tables.skipped.collect())
    if args.group is not None and not found:
        raise GroupNotFoundError(f"Consumer group '{args.group}' does not exist.")
    print(format_describe(found), end="", flush=True)
    _judge(skipped, truncated_from_rows(found), args.strict, progress)
    return 0


def _report(args: argparse.Namespace, progress: Progress) -> int:
    _finish(args.out, not args.no_plots, progress)
    return 0


def _stream(args: argparse.Namespace, progress: Progress) -> int:
    from pipeline.stream import RAW_TABLES, ingest_once, raw_tables

    checkpoints = args.checkpoint or args.out / "_checkpoints"
    if args.interval is None and not pending_stream_kinds(args.data_dir, checkpoints, RAW_TABLES):
        progress.note(f"nothing new since {checkpoints}")
        return 0
    from pipeline.analyze import analyze, decode_tables

    spark = _spark(args, progress)
    cfg = _config(args)
    interval = None if args.interval is None else parse_duration_ms(args.interval) / 1000
    while True:
        with progress.stage("ingesting appended batches"):
            added = ingest_once(spark, args.data_dir, args.out, args.checkpoint)
        print("ingested " + ", ".join(f"{v} new {k} rows" for k, v in added.items()), flush=True)
        if not args.no_analyze:
            offsets, batches = raw_tables(spark, args.out)
            tables = decode_tables(spark, args.data_dir, cfg, raw_offsets=offsets, raw_batches=batches)
            analysis = analyze(spark, args.data_dir, args.out, cfg, tables, progress=progress)
            _finish(args.out, not args.no_plots, progress)
            _judge_summary(analysis.summary, args.strict, progress)
        if interval is None:
            return 0
        time.sleep(interval)


def _preflight(args: argparse.Namespace) -> bool:
    """Every check that needs no Spark; returns whether the command needs Spark at all.

    ``describe --engine auto`` is resolved here (``args.engine`` becomes ``python`` or ``spark``), so the Spark
    checks only run when Spark will.
    """
    if getattr(args, "as_of", None) is not None:
        check_as_of(args.as_of)
    try:
        if args.command in ("analyze", "stream"):
            _config(args)
        if args.command == "stream" and args.interval is not None:
            parse_duration_ms(args.interval)
    except (ValueError, re.error) as exc:
        raise PipelineError(str(exc)) from None
    if args.command == "report":
        check_report_inputs(args.out)
        return False
    segments = check_data_dir(args.data_dir)
    if args.command == "describe":
        args.engine = choose_engine(args.engine, segments)
        if args.engine == "python":
            return False
    if importlib.util.find_spec("pyspark") is None:
        raise PipelineError("the pipeline needs its optional dependencies: pip install '.[pipeline]'")
    check_java()
    return True


def _stop_spark_quietly() -> None:
    """After Ctrl-C the JVM (same process group) is dying too: stop what is left and say nothing about it."""
    logging.getLogger("py4j").setLevel(logging.CRITICAL)
    if "pyspark" not in sys.modules:
        return
    from pyspark.sql import SparkSession

    try:
        active = SparkSession.getActiveSession()
        if active is not None:
            active.stop()
    except Exception:  # noqa: S110 (the gateway may already be gone; nothing useful to add)
        pass


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    handlers = {
        "analyze": _analyze,
        "decode": _decode,
        "describe": _describe,
        "report": _report,
        "stream": _stream,
    }
    progress = Progress()
    interrupts: list[int] = []

    def on_interrupt(signum: int, frame: FrameType | None) -> None:
        interrupts.append(signum)
        signal.default_int_handler(signum, frame)

    on_main_thread = threading.current_thread() is threading.main_thread()  # signal handlers live there only
    previous = signal.signal(signal.SIGINT, on_interrupt) if on_main_thread else None
    try:
        _preflight(args)
        return handlers[args.command](args, progress)
    except PipelineError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return exc.exit_code
    except (KeyboardInterrupt, Exception) as exc:
        # Ctrl-C also reaches the JVM, so a py4j call in flight may fail with a gateway error instead of
        # KeyboardInterrupt: after a SIGINT either way is the interrupt, and only that is said.
        if not interrupts and not isinstance(exc, KeyboardInterrupt):
            raise
        _stop_spark_quietly()
        print("interrupted", file=sys.stderr)
        return 130
    finally:
        if on_main_thread:
            signal.signal(signal.SIGINT, previous)


if __name__ == "__main__":
    sys.exit(main())
