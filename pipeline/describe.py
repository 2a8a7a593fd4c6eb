"""``kafka-consumer-groups.sh --describe`` as of any time, rebuilt from the log, and printed the way it prints.

At time T the broker would answer OffsetFetch with each partition's newest commit (unless a tombstone followed),
DescribeGroups with the members of the newest GroupMetadata record, and ListOffsets(latest) with LEO(T). Rows are
the assigned partitions (with their member) plus partitions with a committed offset and no owner (member columns
``-``), as ``ConsumerGroupCommand`` does; ``lag`` is ``LOG-END-OFFSET - CURRENT-OFFSET`` unclamped, null ("-")
without a committed offset.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from cli.describe_format import DESCRIBE_COLUMNS, format_describe
from pipeline.asof import with_leo

__all__ = ["DESCRIBE_COLUMNS", "describe", "format_describe"]


def describe(commits: DataFrame, generations: DataFrame, leo: DataFrame, *, as_of_ms: int) -> DataFrame:
    pos = F.struct("log_partition", "log_offset")
    latest_commit = (
        commits.where(F.col("log_ts_ms") <= as_of_ms)
        .groupBy("group", "topic", "partition")
        .agg(F.max_by(F.struct("committed_offset", "is_tombstone"), pos).alias("c"))
        .where(~F.col("c.is_tombstone"))
        .select("group", "topic", "partition", F.col("c.committed_offset").alias("current_offset"))
    )
    latest_gen = (
        generations.where(F.col("log_ts_ms") <= as_of_ms)
        .groupBy("group")
        .agg(F.max_by(F.struct("is_tombstone", "members"), pos).alias("g"))
    )
    dead = latest_gen.where(F.col("g.is_tombstone")).select("group")
    members = latest_gen.where(~F.col("g.is_tombstone")).select("group", F.explode("g.members").alias("m"))
    assigned = members.select("group", "m", F.explode("m.assignment").alias("a")).select(
        "group",
        F.col("a.topic").alias("topic"),
        F.explode("a.partitions").alias("partition"),
        F.col("m.member_id").alias("consumer_id"),
        F.col("m.client_host").alias("host"),
        F.col("m.client_id").alias("client_id"),
    )
    rows = assigned.join(latest_commit, ["group", "topic", "partition"], "full_outer").join(dead, "group", "left_anti")
    rows = with_leo(rows.withColumn("_t", F.lit(as_of_ms)), leo, "_t", "log_end_offset").drop("_t")
    rows = rows.withColumn("lag", F.col("log_end_offset") - F.col("current_offset"))
    return rows.select(*DESCRIBE_COLUMNS)
