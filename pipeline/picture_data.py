"""The small frames the two pictures are drawn from, aggregated in Spark from the written tables.

The per-tick tables grow with groups x partitions x ticks, so the driver never loads them: Spark picks the
groups worth drawing (top-N with ``orderBy().limit()``, a distributed top-k), folds the status history into
runs of one status (a band is a run, not a tick), and keeps only the marker times. What is left is bounded by
``MAX_GROUPS`` groups and the tick grid (at most ``MAX_TICKS`` ticks per group), and is written as small
``picture_*`` tables so ``python -m pipeline report`` redraws the pictures without Spark.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

__all__ = [
    "MAX_GENERATIONS",
    "MAX_GROUPS",
    "detailed_status",
    "lag_picture_groups",
    "lag_points",
    "markers",
    "picture_tables",
    "rebalance_picture_rows",
    "status_bands",
    "top_groups",
]

#: Groups per picture: one panel each, so more would not be readable.
MAX_GROUPS = 8
#: Generations drawn per group (the newest): at 100 they are still told apart, at thousands only as a texture.
MAX_GENERATIONS = 500


def top_groups(scores: DataFrame, n: int = MAX_GROUPS) -> DataFrame:
    """``(group, score)`` rows -> the ``n`` best as ``(group, rank)``, rank 0 first; ties go to the smaller name."""
    best = scores.orderBy(F.desc("score"), "group").limit(n)
    return best.withColumn("rank", F.row_number().over(Window.orderBy(F.desc("score"), "group")) - 1).drop("score")


def detailed_status(history: DataFrame) -> Column:
    """The group's status with ERR spelt out: the worst partition status (REWIND > STALL > STOP), as Burrow ranks them.

    Burrow folds STOP, STALL and REWIND into ERR at group level; the ``n_*`` counts of ``group_status_history``
    keep which one it was, and that is what a reader of the picture needs.
    """
    return (
        F.when(history["n_rewind"] > 0, F.lit("REWIND"))
        .when(history["n_stall"] > 0, F.lit("STALL"))
        .when(history["n_stop"] > 0, F.lit("STOP"))
        .otherwise(history["status"])
    )


def status_bands(group_history: DataFrame, groups: DataFrame, as_of_ms: int) -> DataFrame:
    """Runs of one detailed status per group: ``(group, status, start_ms, end_ms)``, the last run ending at as-of.

    A tick's status holds until the next tick; the grid's last tick is the as-of time itself, so the last run
    ends there and no band reaches past it.
    """
    h = group_history.join(F.broadcast(groups.select("group")), "group", "left_semi")
    h = h.where(F.col("tick_ms") <= as_of_ms).select("group", "tick_ms", detailed_status(h).alias("status"))
    by_tick = Window.partitionBy("group").orderBy("tick_ms")
    changed = F.coalesce(F.lag("status").over(by_tick) != F.col("status"), F.lit(True)).cast("int")
    h = h.withColumn("_run", F.sum(changed).over(by_tick.rowsBetween(Window.unboundedPreceding, 0)))
    runs = h.groupBy("group", "_run").agg(F.first("status").alias("status"), F.min("tick_ms").alias("start_ms"))
    next_start = F.lead("start_ms").over(Window.partitionBy("group").orderBy("_run"))
    return runs.select(
        "group", "status", "start_ms", F.least(F.coalesce(next_start, F.lit(as_of_ms)), F.lit(as_of_ms)).alias("end_ms")
    )


def lag_picture_groups(group_lag: DataFrame, group_history: DataFrame) -> DataFrame:
    """The groups with the most lag (every group with a status competes, at lag 0 if it has no lag rows)."""
    lag = group_lag.groupBy("group").agg(F.max("total_lag").alias("_lag"))
    scores = group_history.select("group").distinct().join(lag, "group", "left")
    return top_groups(scores.select("group", F.coalesce("_lag", F.lit(0)).alias("score")))


def lag_points(group_lag: DataFrame, groups: DataFrame) -> DataFrame:
    """Total lag per tick of the chosen groups (bounded by the tick grid)."""
    return group_lag.join(F.broadcast(groups), "group").select("group", "rank", "ts_ms", "total_lag")


def markers(rebalances: DataFrame, status_history: DataFrame, groups: DataFrame) -> DataFrame:
    """``(group, kind, ts_ms, generation)``: each generation change, and each partition's last commit before STOP.

    A commit stop is marked where the commits stopped (the newest commit in the window when STOP first fired),
    which is earlier than the tick that detected it: the band shows the detection, the marker the cause.
    """
    chosen = F.broadcast(groups.select("group"))
    gens = rebalances.join(chosen, "group", "left_semi").select(
        "group", F.lit("rebalance").alias("kind"), "ts_ms", "generation"
    )
    by_tick = Window.partitionBy("group", "topic", "partition").orderBy("tick_ms")
    history = status_history.join(chosen, "group", "left_semi")
    stops = history.withColumn("_prev", F.lag("status").over(by_tick)).where(
        (F.col("status") == "STOP") & ~F.coalesce(F.col("_prev") == "STOP", F.lit(False))
    )
    stops = stops.select(
        "group",
        F.lit("commit-stop").alias("kind"),
        F.col("end_ts_ms").alias("ts_ms"),
        F.lit(None).cast("int").alias("generation"),
    ).distinct()
    return gens.unionByName(stops)


def rebalance_picture_rows(rebalances: DataFrame) -> DataFrame:
    """The newest ``MAX_GENERATIONS`` generations of the groups with the most, with who joined and who left.

    ``generations`` carries the group's total, so the picture can say how many it leaves out.
    """
    groups = top_groups(rebalances.groupBy("group").agg(F.count(F.lit(1)).alias("score")))
    chosen = rebalances.join(F.broadcast(groups), "group")
    newest = Window.partitionBy("group").orderBy(F.desc("log_partition"), F.desc("log_offset"))
    chosen = chosen.withColumns(
        {"_n": F.row_number().over(newest), "generations": F.count(F.lit(1)).over(Window.partitionBy("group"))}
    )
    return chosen.where(F.col("_n") <= MAX_GENERATIONS).select(
        "group",
        "rank",
        "generations",
        "generation",
        "ts_ms",
        "lifetime_ms",
        "member_count",
        "member_ids",
        "joined",
        "left",
        "became_empty",
    )


def picture_tables(
    group_lag: DataFrame, group_history: DataFrame, status_history: DataFrame, rebalances: DataFrame, as_of_ms: int
) -> dict[str, DataFrame]:
    """Every ``picture_*`` table by name."""
    groups = lag_picture_groups(group_lag, group_history).cache()
    return {
        "picture_lag": lag_points(group_lag, groups),
        "picture_bands": status_bands(group_history, groups, as_of_ms).join(F.broadcast(groups), "group"),
        "picture_markers": markers(rebalances, status_history, groups),
        "picture_generations": rebalance_picture_rows(rebalances),
    }
