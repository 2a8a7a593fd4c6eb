"""The decoded tables: raw ``kafkalog`` rows into offset commits, generations, assignments and LEO history.

These are direct reshapes of what the log says, with no evaluation: every later table is computed from them, and
they are written to Parquet as they are so that others can query the log without decoding it again.
"""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from pipeline.consumer_groups import MEMBERS_TYPE, consumer_group_generations
from pipeline.decode import SKIP_COLUMNS, SKIPPED, TXN_ABORT, TXN_COMMIT
from pipeline.describe_rules import COMMIT_RECORDS, GROUP_RECORDS, LOG_START_TIME
from pipeline.layout import OFFSETS_TOPIC, list_segments
from pipeline.transactions import COMMITTED, transactional_commits

__all__ = [
    "LONG_MIN",
    "filter_groups",
    "group_assignments",
    "group_generations",
    "log_starts",
    "offset_commits",
    "read_raw",
    "skipped_ranges",
    "topic_batches",
    "topic_leo",
]

#: "Since forever": the time of a partition's log-start row in ``topic_leo`` (rule 4 of :mod:`pipeline.describe_rules`).
LONG_MIN = LOG_START_TIME


def read_raw(spark: SparkSession, data_dir: str, kind: str) -> DataFrame:
    """``kind`` = ``offsets`` or ``topics``; partitions sized so every core gets work."""
    parallelism = spark.sparkContext.defaultParallelism
    return (
        spark.read.format("kafkalog").option("kind", kind).option("minPartitions", str(2 * parallelism)).load(data_dir)
    )


def filter_groups(df: DataFrame, include: str | None, exclude: str | None) -> DataFrame:
    """Burrow's group allow/deny lists, as Java-compatible regexes matched against the whole group id.

    Skipped ranges belong to no group and are kept: damage is reported whichever groups are analysed. So are the
    end-transaction markers, which decide the transactional commits of the groups kept.
    """
    groupless = F.col("record_type").isin(SKIPPED, TXN_COMMIT, TXN_ABORT)
    if include is not None:
        df = df.where(F.col("group").rlike(f"^(?:{include})$") | groupless)
    if exclude is not None:
        df = df.where(~F.coalesce(F.col("group").rlike(f"^(?:{exclude})$"), F.lit(False)))
    return df


def skipped_ranges(raw_offsets: DataFrame, raw_batches: DataFrame) -> DataFrame:
    """The skipped-range rows of both raw tables as ``topic, partition, segment_base, skip_*``."""
    offsets = raw_offsets.where(F.col("record_type") == SKIPPED).select(
        F.lit(OFFSETS_TOPIC).alias("topic"), F.col("log_partition").alias("partition"), "segment_base", *SKIP_COLUMNS
    )
    topics = raw_batches.where(F.col("skip_kind").isNotNull()).select(
        "topic", "partition", "segment_base", *SKIP_COLUMNS
    )
    return offsets.unionByName(topics)


def topic_batches(raw_batches: DataFrame) -> DataFrame:
    """The valid topic batches (``topic_batches``): the raw rows without the skipped ranges and their columns."""
    return raw_batches.where(F.col("skip_kind").isNull()).drop(*SKIP_COLUMNS)


def offset_commits(raw: DataFrame) -> DataFrame:
    """One row per OffsetCommit record in effect (tombstones included, flagged); ``ts_ms`` is the commit time (log
    time for tombstones, which carry none).

    A transactional commit (:mod:`pipeline.transactions`) is in effect only once its transaction committed: it
    appears at the marker's position and time (``log_offset``, ``log_ts_ms``, ``ts_ms``), and of several commits
    of one partition in one transaction only the last. Aborted and open ones are not here: see
    :func:`pipeline.transactions.transactional_commits`.
    """
    plain = raw.where(F.col("record_type").isin(*COMMIT_RECORDS) & F.col("producer_id").isNull()).withColumn(
        "ts_ms", F.coalesce("commit_ts_ms", "log_ts_ms")
    )
    same = Window.partitionBy("group", "topic", "partition", "txn_end_offset").orderBy(F.desc("log_offset"))
    committed = (
        transactional_commits(raw)
        .where(F.col("txn_state") == COMMITTED)
        .withColumn("_last", F.row_number().over(same) == 1)
        .where(F.col("_last"))
        .withColumns(
            {
                "log_offset": F.col("txn_end_offset"),
                "log_ts_ms": F.col("txn_end_ts_ms"),
                "ts_ms": F.col("txn_end_ts_ms"),
            }
        )
        .select(*plain.columns)
    )
    return plain.unionByName(committed).select(
        "group",
        "topic",
        "partition",
        "committed_offset",
        "leader_epoch",
        "metadata",
        "commit_ts_ms",
        "expire_ts_ms",
        "log_partition",
        "log_offset",
        "log_ts_ms",
        (F.col("record_type") == "offset_tombstone").alias("is_tombstone"),
        "ts_ms",
        F.timestamp_millis("ts_ms").alias("commit_time"),
    )


#: The columns of ``group_generations`` taken as they are from either kind of record.
_GENERATION_COLUMNS = (
    "group",
    "generation",
    "protocol_type",
    "protocol",
    "leader",
    "state_ts_ms",
    "log_partition",
    "log_offset",
    "log_ts_ms",
)


def group_generations(raw: DataFrame, topic_names: Mapping[str, str]) -> DataFrame:
    """One row per GroupMetadata record (a completed rebalance, the group becoming Empty, or a tombstone) and per
    KIP-848 group epoch record (:mod:`pipeline.consumer_groups`; ``topic_names`` maps the topic ids of its
    assignments to names).

    ``ts_ms`` is when the record was written (the log time), which is when the assignment took effect;
    ``state_ts_ms`` is the classic coordinator's ``current_state_timestamp``.
    """
    classic = raw.where(F.col("record_type").isin(*GROUP_RECORDS)).select(
        *_GENERATION_COLUMNS, "members", (F.col("record_type") == "group_tombstone").alias("is_tombstone")
    )
    both = classic.unionByName(consumer_group_generations(raw, topic_names))
    return both.select(
        *_GENERATION_COLUMNS,
        F.col("log_ts_ms").alias("ts_ms"),
        F.coalesce(F.size("members"), F.lit(0)).alias("member_count"),
        F.coalesce("members", F.array().cast(MEMBERS_TYPE)).alias("members"),
        "is_tombstone",
    )


def group_assignments(generations: DataFrame) -> DataFrame:
    """Who owned which partition from when to when: one row per (group, generation, member, topic, partition).

    ``valid_to_ms`` is the time of the group's next metadata record (null while current).
    """
    w = Window.partitionBy("group").orderBy("log_partition", "log_offset")
    spans = generations.withColumn("valid_to_ms", F.lead("ts_ms").over(w)).where(~F.col("is_tombstone"))
    members = spans.select(
        "group", "generation", "valid_to_ms", F.col("ts_ms").alias("valid_from_ms"), F.explode("members").alias("m")
    )
    assigned = members.select("*", F.explode("m.assignment").alias("a"))
    return assigned.select(
        "group",
        "generation",
        F.col("m.member_id").alias("member_id"),
        F.col("m.group_instance_id").alias("group_instance_id"),
        F.col("m.client_id").alias("client_id"),
        F.col("m.client_host").alias("client_host"),
        F.col("a.topic").alias("topic"),
        F.explode("a.partitions").alias("partition"),
        "valid_from_ms",
        "valid_to_ms",
    )


def log_starts(spark: SparkSession, data_dir: str) -> DataFrame:
    """``topic, partition, log_start_offset`` (the oldest segment's base) of every topic partition on disk.

    Taken from the directory listing, not from batches, so an empty partition still has a known LEO (its start).
    """
    first: dict[tuple[str, int], int] = {}
    for s in list_segments(data_dir, "topics"):
        key = (s.topic, s.partition)
        first[key] = min(first.get(key, s.base_offset), s.base_offset)
    rows = [(t, p, base) for (t, p), base in sorted(first.items())]
    return spark.createDataFrame(rows, "topic string, partition int, log_start_offset long")


def topic_leo(batches: DataFrame, starts: DataFrame) -> DataFrame:
    """The log-end offset of every topic partition as a step function of time (rule 4 of
    :mod:`pipeline.describe_rules`).

    A batch's end offset counts from the running max of batch timestamps in offset order (so LEO never goes down
    when a producer's clock does). Each partition also gets a row at the beginning of time holding its log-start
    offset: history before the oldest segment was removed by retention and is unknown.
    """
    w = Window.partitionBy("topic", "partition").orderBy("base_offset").rowsBetween(Window.unboundedPreceding, 0)
    steps = (
        batches.withColumns({"ts_ms": F.max("max_ts_ms").over(w), "leo": F.col("last_offset") + 1})
        .groupBy("topic", "partition", "ts_ms")
        .agg(F.max("leo").alias("leo"))
    )
    start_rows = starts.select(
        "topic", "partition", F.lit(LONG_MIN).alias("ts_ms"), F.col("log_start_offset").alias("leo")
    )
    return steps.unionByName(start_rows).join(F.broadcast(starts), ["topic", "partition"])
