"""Commit, consume and produce rates in fixed windows of time.

``offsets_advanced`` sums how far each committed offset moved forward since the same partition's previous commit
(so it counts records consumed, not commits); a move backwards is counted in ``rewinds`` instead.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

__all__ = ["commit_rates", "produce_rates"]


def _window_start(ts: str, width_ms: int) -> Column:
    return F.floor(F.col(ts) / width_ms) * width_ms


def commit_rates(commits: DataFrame, *, width_ms: int, as_of_ms: int) -> DataFrame:
    w = Window.partitionBy("group", "topic", "partition").orderBy("log_partition", "log_offset")
    c = commits.where(~F.col("is_tombstone") & (F.col("ts_ms") <= as_of_ms))
    c = c.withColumn("_delta", F.col("committed_offset") - F.lag("committed_offset").over(w))
    out = (
        c.withColumn("window_start_ms", _window_start("ts_ms", width_ms))
        .groupBy("group", "window_start_ms")
        .agg(
            F.count(F.lit(1)).alias("commits"),
            F.countDistinct("topic", "partition").alias("partitions_committed"),
            F.coalesce(F.sum(F.when(F.col("_delta") > 0, F.col("_delta"))), F.lit(0)).alias("offsets_advanced"),
            F.sum((F.col("_delta") < 0).cast("int")).alias("rewinds"),
        )
    )
    seconds = width_ms / 1000.0
    return out.select(
        "group",
        "window_start_ms",
        (F.col("window_start_ms") + width_ms).alias("window_end_ms"),
        F.timestamp_millis("window_start_ms").alias("window_start"),
        "commits",
        "partitions_committed",
        (F.col("commits") / seconds).alias("commits_per_s"),
        "offsets_advanced",
        (F.col("offsets_advanced") / seconds).alias("consume_rate_per_s"),
        "rewinds",
    )


def produce_rates(batches: DataFrame, *, width_ms: int, as_of_ms: int) -> DataFrame:
    b = batches.where(~F.col("is_control") & (F.col("max_ts_ms") <= as_of_ms))
    out = (
        b.withColumn("window_start_ms", _window_start("max_ts_ms", width_ms))
        .groupBy("topic", "window_start_ms")
        .agg(F.count(F.lit(1)).alias("batches"), F.sum("record_count").alias("records"))
    )
    return out.select(
        "topic",
        "window_start_ms",
        (F.col("window_start_ms") + width_ms).alias("window_end_ms"),
        F.timestamp_millis("window_start_ms").alias("window_start"),
        "batches",
        "records",
        (F.col("records") / (width_ms / 1000.0)).alias("records_per_s"),
    )
