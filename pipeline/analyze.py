"""The whole analysis: decode once, derive every table, write Parquet, then the report and the pictures.

Decoded rows are cached (the Python data source would otherwise decode again for every table), and each table is
written as soon as it is computed. Everything that scales with the data stays in Spark; the driver only collects
bounded summaries, and the report and plots are rendered from the Parquet files afterwards.
"""

from __future__ import annotations

import dataclasses
import io
import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from pipeline import extract
from pipeline.burrow import evaluate
from pipeline.config import AnalysisConfig, parse_as_of
from pipeline.damage import TruncatedPartition, truncated_from_rows
from pipeline.describe import describe
from pipeline.inputs import InputSummary, summarize
from pipeline.lag import lag_timeseries
from pipeline.layout import list_segments
from pipeline.picture_data import picture_tables
from pipeline.progress import Progress
from pipeline.rates import commit_rates, produce_rates
from pipeline.rebalances import rebalances
from pipeline.report_data import report_tables
from pipeline.topic_ids import topic_names
from pipeline.transactions import txn_offset_commits

__all__ = ["Analysis", "DecodedTables", "analyze", "decode_tables", "truncated_partitions", "write_table"]


@dataclass
class DecodedTables:
    raw_offsets: DataFrame
    batches: DataFrame
    commits: DataFrame
    generations: DataFrame
    assignments: DataFrame
    leo: DataFrame
    #: Skipped byte ranges of both kinds of segment (:func:`pipeline.extract.skipped_ranges`).
    skipped: DataFrame
    #: Every transactional commit with how its transaction ended (:func:`pipeline.transactions.txn_offset_commits`).
    txn_commits: DataFrame


@dataclass
class Analysis:
    out_dir: Path
    summary: InputSummary
    timings: dict[str, float] = field(default_factory=dict)


#: Upper bound on grid ticks per analysis: each partition gets a status row per tick, so an as-of far from the
#: data (``--as-of now`` on an old log) must not explode into millions of rows.
MAX_TICKS = 10_000


def bounded_tick(tick_ms: int, earliest_ms: int | None, as_of_ms: int) -> int:
    """``tick_ms``, widened to a whole number of seconds if the span would need more than ``MAX_TICKS`` ticks."""
    span = as_of_ms - (earliest_ms if earliest_ms is not None else as_of_ms)
    if span <= tick_ms * MAX_TICKS:
        return tick_ms
    return -(-span // (MAX_TICKS * 1000)) * 1000


def write_table(df: DataFrame, out_dir: Path, name: str) -> None:
    df.write.mode("overwrite").parquet(str(out_dir / "tables" / name))


def summaries(spark: SparkSession, out_dir: Path, as_of_ms: int) -> dict[str, DataFrame]:
    """The small ``picture_*`` and ``report_*`` tables, aggregated from the tables already written."""
    names = (
        "group_lag",
        "group_status_history",
        "status_history",
        "rebalances",
        "group_status",
        "partition_status",
        "commit_rates",
        "produce_rates",
    )
    written = {name: spark.read.parquet(str(out_dir / "tables" / name)) for name in names}
    pictures = picture_tables(
        written["group_lag"],
        written["group_status_history"],
        written["status_history"],
        written["rebalances"],
        as_of_ms,
    )
    return {**pictures, **report_tables(written)}


def decode_tables(
    spark: SparkSession,
    data_dir: str,
    cfg: AnalysisConfig,
    raw_offsets: DataFrame | None = None,
    raw_batches: DataFrame | None = None,
) -> DecodedTables:
    """The decoded tables, from the log directory or from raw rows a streaming run accumulated."""
    raw = raw_offsets if raw_offsets is not None else extract.read_raw(spark, data_dir, "offsets")
    raw = extract.filter_groups(raw, cfg.groups, cfg.exclude_groups).persist(StorageLevel.MEMORY_AND_DISK)
    raw_topics = raw_batches if raw_batches is not None else extract.read_raw(spark, data_dir, "topics")
    raw_topics = raw_topics.persist(StorageLevel.MEMORY_AND_DISK)
    batches = extract.topic_batches(raw_topics)
    commits = extract.offset_commits(raw).persist(StorageLevel.MEMORY_AND_DISK)
    generations = extract.group_generations(raw, topic_names(data_dir)).persist(StorageLevel.MEMORY_AND_DISK)
    assignments = extract.group_assignments(generations).persist(StorageLevel.MEMORY_AND_DISK)
    leo = extract.topic_leo(batches, extract.log_starts(spark, data_dir)).persist(StorageLevel.MEMORY_AND_DISK)
    skipped = extract.skipped_ranges(raw, raw_topics)
    return DecodedTables(raw, batches, commits, generations, assignments, leo, skipped, txn_offset_commits(raw))


def truncated_partitions(describe_rows: DataFrame) -> list[TruncatedPartition]:
    """The ``describe`` rows whose committed offset is above the log end (a truncated topic partition)."""
    return truncated_from_rows(r.asDict() for r in describe_rows.where(F.col("lag") < 0).collect())


def latest_time(t: DecodedTables) -> int:
    """The newest timestamp anywhere in the logs: ``--as-of max``."""
    a = t.raw_offsets.agg(F.max(F.greatest("log_ts_ms", F.coalesce("commit_ts_ms", F.lit(0))))).collect()[0][0]
    b = t.batches.agg(F.max("max_ts_ms")).collect()[0][0]
    return int(max(a or 0, b or 0))


def analyze(
    spark: SparkSession,
    data_dir: str,
    out_dir: Path,
    cfg: AnalysisConfig,
    tables: DecodedTables | None = None,
    progress: Progress | None = None,
) -> Analysis:
    """Every table under ``out_dir/tables`` plus ``inputs.json``; each stage reported on ``progress``."""
    progress = progress if progress is not None else Progress(io.StringIO())
    timings: dict[str, float] = {}
    clock = time.monotonic()

    def lap(name: str) -> None:
        nonlocal clock
        now = time.monotonic()
        timings[name] = now - clock
        clock = now

    def write(df: DataFrame, name: str) -> None:
        write_table(df, out_dir, name)
        lap(name)

    segments = len(list_segments(data_dir))
    with progress.stage(f"decoding {segments} segments"):
        t = tables if tables is not None else decode_tables(spark, data_dir, cfg)
        summary = summarize(data_dir, t.raw_offsets, t.batches, t.skipped)
    as_of_ms = summary.as_of_ms = parse_as_of(cfg.as_of, summary.latest_ms)
    summary.tick_ms = bounded_tick(cfg.tick_ms, summary.earliest_ms, as_of_ms)
    if summary.tick_ms != cfg.tick_ms:
        summary.caveats.append(
            f"the status grid was widened from {cfg.tick_ms / 1000:g}s to {summary.tick_ms / 1000:g}s so that "
            f"the {((as_of_ms - (summary.earliest_ms or as_of_ms)) / 3_600_000):.1f} hours analysed stay within "
            f"{MAX_TICKS} ticks"
        )
    cfg = dataclasses.replace(cfg, tick_ms=summary.tick_ms)
    lap("decode")
    with progress.stage("writing decoded tables"):
        write(t.commits, "offset_commits")
        write(t.txn_commits, "txn_offset_commits")
        write(t.generations, "group_generations")
        write(t.assignments, "group_assignments")
        write(t.batches, "topic_batches")
        write(t.leo, "topic_leo")
    with progress.stage("evaluating status"):
        status = evaluate(
            t.commits, t.generations, t.assignments, t.leo, cfg.burrow, as_of_ms=as_of_ms, tick_ms=cfg.tick_ms
        )
        write(status.status_history, "status_history")
        write(status.partition_status.drop("brokers"), "partition_status")
        write(status.group_status_history, "group_status_history")
        write(status.group_status, "group_status")
        write(status.status_transitions, "status_transitions")
    with progress.stage("writing lag, rebalances, rates and describe"):
        write(lag_timeseries(t.commits, t.leo, t.batches, as_of_ms=as_of_ms, tick_ms=cfg.tick_ms), "lag_timeseries")
        group_lag = (
            spark.read.parquet(str(out_dir / "tables" / "lag_timeseries"))
            .where(F.col("event") == "tick")
            .groupBy("group", "ts_ms")
            .agg(F.sum("lag_clamped").alias("total_lag"), F.count(F.lit(1)).alias("partitions"))
        )
        write(group_lag, "group_lag")
        write(rebalances(t.generations, t.commits, as_of_ms=as_of_ms), "rebalances")
        write(commit_rates(t.commits, width_ms=cfg.rate_window_ms, as_of_ms=as_of_ms), "commit_rates")
        write(produce_rates(t.batches, width_ms=cfg.rate_window_ms, as_of_ms=as_of_ms), "produce_rates")
        write(describe(t.commits, t.generations, t.leo, as_of_ms=as_of_ms), "describe")
    truncated = truncated_partitions(spark.read.parquet(str(out_dir / "tables" / "describe")))
    summary.truncated = [p.to_json() for p in truncated]
    summary.caveats += [p.text() for p in truncated]
    with progress.stage("aggregating for the report and pictures"):
        for name, df in summaries(spark, out_dir, as_of_ms).items():
            write(df, name)
    (out_dir / "inputs.json").write_text(json.dumps(summary.to_json(), indent=2) + "\n", encoding="utf-8")
    return Analysis(out_dir, summary, timings)
