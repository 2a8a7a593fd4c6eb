"""Rebalance history: one row per GroupMetadata record, compared with the group's previous one.

A completed rebalance writes the new generation with its members; the last member leaving writes the group as
Empty (next generation, no members). So consecutive records give who joined and who left, how long each
generation lived, and - from the commits on either side in log order - how long the group went without
committing around the rebalance (the stop-the-world pause of the classic protocol). Members are matched by
``group.instance.id`` when static, else by member id.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

__all__ = ["rebalances"]


def rebalances(generations: DataFrame, commits: DataFrame, *, as_of_ms: int) -> DataFrame:
    gens = generations.where(~F.col("is_tombstone") & (F.col("ts_ms") <= as_of_ms))
    w = Window.partitionBy("group").orderBy("log_partition", "log_offset")
    ids = F.transform("members", lambda m: F.coalesce(m["group_instance_id"], m["member_id"]))
    gens = gens.withColumns(
        {"member_ids": F.array_sort(ids), "client_ids": F.transform("members", lambda m: m["client_id"])}
    )
    gens = gens.withColumns(
        {
            "prev_generation": F.lag("generation").over(w),
            "prev_ts_ms": F.lag("ts_ms").over(w),
            "next_ts_ms": F.lead("ts_ms").over(w),
            "prev_member_ids": F.lag("member_ids").over(w),
            "prev_member_count": F.lag("member_count").over(w),
            "prev_leader": F.lag("leader").over(w),
        }
    )
    prev_ids = F.coalesce(F.col("prev_member_ids"), F.array().cast("array<string>"))
    gens = gens.withColumns(
        {"joined": F.array_except("member_ids", prev_ids), "left": F.array_except(prev_ids, "member_ids")}
    )
    pauses = _commit_pauses(gens.select("group", "generation", "log_partition", "log_offset"), commits)
    out = gens.join(pauses, ["group", "log_partition", "log_offset"], "left")
    return out.select(
        "group",
        "generation",
        "prev_generation",
        "ts_ms",
        F.timestamp_millis("ts_ms").alias("time"),
        "prev_ts_ms",
        (F.col("ts_ms") - F.col("prev_ts_ms")).alias("prev_generation_lifetime_ms"),
        (F.coalesce(F.col("next_ts_ms"), F.lit(as_of_ms)) - F.col("ts_ms")).alias("lifetime_ms"),
        F.col("next_ts_ms").isNull().alias("is_current"),
        "member_count",
        F.coalesce("prev_member_count", F.lit(0)).alias("prev_member_count"),
        "member_ids",
        "joined",
        "left",
        F.size("joined").alias("joined_count"),
        F.size("left").alias("left_count"),
        "leader",
        (F.col("prev_leader").isNotNull() & ~F.col("leader").eqNullSafe(F.col("prev_leader"))).alias("leader_changed"),
        "protocol",
        (F.col("member_count") == 0).alias("became_empty"),
        "last_commit_before_ms",
        "first_commit_after_ms",
        (F.col("first_commit_after_ms") - F.col("last_commit_before_ms")).alias("commit_pause_ms"),
        "log_partition",
        "log_offset",
    )


def _commit_pauses(gens: DataFrame, commits: DataFrame) -> DataFrame:
    """Last commit before and first commit after each metadata record of the same group, in log order."""
    c = commits.where(~F.col("is_tombstone")).select(
        "group", "log_partition", "log_offset", F.col("ts_ms").alias("_c"), F.lit(1).alias("_k")
    )
    g = gens.select("group", "log_partition", "log_offset", F.lit(None).cast("long").alias("_c"), F.lit(0).alias("_k"))
    merged = c.unionByName(g)
    # Both look-ups are running frames (one forwards, one backwards): a frame reaching to the end of the group
    # would be recomputed for every row, quadratic in the commits per group.
    forward = Window.partitionBy("group").orderBy("log_partition", "log_offset")
    backward = Window.partitionBy("group").orderBy(F.desc("log_partition"), F.desc("log_offset"))
    before = Window.unboundedPreceding
    return (
        merged.withColumns(
            {
                "last_commit_before_ms": F.last("_c", ignorenulls=True).over(forward.rowsBetween(before, -1)),
                "first_commit_after_ms": F.last("_c", ignorenulls=True).over(backward.rowsBetween(before, -1)),
            }
        )
        .where(F.col("_k") == 0)
        .select("group", "log_partition", "log_offset", "last_commit_before_ms", "first_commit_after_ms")
    )
