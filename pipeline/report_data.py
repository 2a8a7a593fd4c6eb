"""The report's per-group and per-topic summaries, aggregated in Spark from the written tables.

``report.txt`` prints one line per group (status, rebalances, rates) and one per topic; those lines are computed
here as ``report_*`` tables, so the driver reads rows it prints rather than the partition-level status and rate
tables they come from. ``python -m pipeline report`` then re-renders the text from them without Spark.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from pipeline.rules_sql import status_rank

__all__ = ["report_tables", "status_summary"]


def status_summary(group_status: DataFrame, partition_status: DataFrame) -> DataFrame:
    """Each group's status with its worst partition (highest status, then most lag; ties to the smallest name)."""
    worst = F.struct(
        F.col("topic").alias("worst_topic"),
        F.col("partition").alias("worst_partition"),
        F.col("status").alias("worst_status"),
        F.col("rule").alias("worst_rule"),
    )
    order = F.struct(-status_rank(F.col("status")), -F.col("current_lag"), "topic", "partition")
    per_group = partition_status.groupBy("group").agg(F.min_by(worst, order).alias("_w"))
    columns = ["group", "status", "total_lag", "partition_count", "complete"]
    return group_status.join(per_group, "group", "left").select(*columns, "_w.*")


def rebalance_summary(rebalances: DataFrame) -> DataFrame:
    last = F.max_by(F.struct("generation", "ts_ms"), F.struct("ts_ms", "log_partition", "log_offset"))
    return rebalances.groupBy("group").agg(
        F.count(F.lit(1)).alias("generations"),
        F.sum((F.col("member_count") > 0).cast("int")).alias("rebalances"),
        F.sum("joined_count").alias("joins"),
        F.sum("left_count").alias("leaves"),
        F.avg("lifetime_ms").alias("mean_lifetime_ms"),
        F.max("lifetime_ms").alias("max_lifetime_ms"),
        F.max("commit_pause_ms").alias("max_commit_pause_ms"),
        last["generation"].alias("last_generation"),
        last["ts_ms"].alias("last_ts_ms"),
    )


def commit_rate_summary(commit_rates: DataFrame) -> DataFrame:
    return commit_rates.groupBy("group").agg(
        F.sum("commits").alias("commits"),
        F.avg("commits_per_s").alias("commits_per_s"),
        F.avg("consume_rate_per_s").alias("consume_per_s"),
        F.max("consume_rate_per_s").alias("peak_consume_per_s"),
        F.sum("rewinds").alias("rewinds"),
    )


def produce_rate_summary(produce_rates: DataFrame) -> DataFrame:
    return produce_rates.groupBy("topic").agg(
        F.sum("records").alias("records"),
        F.avg("records_per_s").alias("records_per_s"),
        F.max("records_per_s").alias("peak_records_per_s"),
    )


def report_tables(tables: dict[str, DataFrame]) -> dict[str, DataFrame]:
    """Every ``report_*`` table by name, from the written tables by name."""
    return {
        "report_status": status_summary(tables["group_status"], tables["partition_status"]),
        "report_rebalances": rebalance_summary(tables["rebalances"]),
        "report_commit_rates": commit_rate_summary(tables["commit_rates"]),
        "report_produce_rates": produce_rate_summary(tables["produce_rates"]),
    }
