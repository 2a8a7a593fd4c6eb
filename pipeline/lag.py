"""Kafka-style lag over time: at every commit and every tick, committed offset vs. the log-end offset then.

Unlike Burrow's stored lag (frozen at commit time), this follows the LEO between commits, so a consumer that
stops committing shows its lag growing (Burrow issues #287/#446). ``lag`` is ``LEO - committed`` unclamped, as
``kafka-consumer-groups`` prints it; ``lag_clamped`` is Burrow's ``max(0, ...)``. ``time_lag_ms`` is how old the
first unconsumed batch is (the age of the oldest unread data, batch-granular), 0 when caught up.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from pipeline.asof import with_leo
from pipeline.burrow import tick_array

__all__ = ["lag_timeseries"]

_INF = 2**62


def lag_timeseries(commits: DataFrame, leo: DataFrame, batches: DataFrame, *, as_of_ms: int, tick_ms: int) -> DataFrame:
    w = Window.partitionBy("group", "topic", "partition").orderBy("log_partition", "log_offset")
    spans = commits.withColumn("valid_to", F.coalesce(F.lead("ts_ms").over(w), F.lit(_INF))).where(
        ~F.col("is_tombstone") & (F.col("ts_ms") <= as_of_ms)
    )
    at_commit = spans.select(
        "group", "topic", "partition", "committed_offset", F.col("ts_ms"), F.lit("commit").alias("event")
    )
    at_tick = spans.select(
        "group",
        "topic",
        "partition",
        "committed_offset",
        F.explode(tick_array(F.col("ts_ms"), F.col("valid_to"), as_of_ms, tick_ms)).alias("ts_ms"),
        F.lit("tick").alias("event"),
    )
    rows = with_leo(at_commit.unionByName(at_tick), leo, "ts_ms", "log_end_offset")
    rows = rows.withColumns(
        {
            "lag": F.col("log_end_offset") - F.col("committed_offset"),
            "lag_clamped": F.greatest(F.lit(0).cast("long"), F.col("log_end_offset") - F.col("committed_offset")),
        }
    )
    return _with_time_lag(rows, batches).withColumn("time", F.timestamp_millis("ts_ms"))


def _with_time_lag(rows: DataFrame, batches: DataFrame) -> DataFrame:
    """Age of the batch holding the first unconsumed offset: an as-of lookup on offsets instead of times."""
    starts = batches.select(
        "topic", "partition", F.col("base_offset").alias("_o"), F.lit(0).alias("_k"), F.col("first_ts_ms").alias("_b")
    )
    q = rows.withColumns({"_o": F.col("committed_offset"), "_k": F.lit(1), "_b": F.lit(None).cast("long")})
    merged = q.unionByName(starts, allowMissingColumns=True)
    w = Window.partitionBy("topic", "partition").orderBy("_o", "_k").rowsBetween(Window.unboundedPreceding, 0)
    merged = merged.withColumn("_b", F.last("_b", ignorenulls=True).over(w)).where(F.col("_k") == 1)
    age = F.when(F.col("lag_clamped") > 0, F.greatest(F.lit(0).cast("long"), F.col("ts_ms") - F.col("_b")))
    return merged.withColumn("time_lag_ms", F.coalesce(age, F.lit(0).cast("long"))).drop("_o", "_k", "_b")
