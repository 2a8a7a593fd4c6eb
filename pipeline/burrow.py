"""Burrow's evaluation replayed over the whole log, at every tick of a time grid, as Spark operations.

Burrow keeps, per (group, topic, partition), a ring of the last ``intervals`` commits and evaluates it against
the broker's recent log-end offsets whenever asked. Replaying the log gives the ring after each commit; the ring
after commit *i* is what Burrow would have answered with at any time between commit *i* and the next one, so each
grid tick between the two reuses it (an ``explode`` over a ``sequence``, no cross join). What Burrow's storage
does is reproduced:

* ``min-distance``: a commit closer than that to the newest stored one replaces it, keeping the older timestamp
  (with the default 0 this only happens to a commit stamped earlier than the newest stored one);
* ``expire-group``: commits older than that at arrival are dropped, and a group whose last commit is older than
  that is forgotten (NOTFOUND) and starts from an empty ring when it commits again;
* a GroupMetadata tombstone deletes the group (offset tombstones are ignored, as Burrow does);
* commits for partitions the broker does not have are dropped;
* stored lag = LEO at arrival - committed offset (>= 0); current lag = LEO now - last committed (>= 0); the broker
  ring = LEO at ``now - k * offset-refresh`` for k < ``intervals``.

Deliberate difference: Burrow samples broker offsets every ``offset-refresh`` seconds, so its stored lags can be up
to that stale; here the LEO comes from the log at the exact time, which is what Burrow would see with an
instantaneous refresh.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd  # type: ignore[import-untyped]
from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from pipeline.asof import with_leo
from pipeline.config import BurrowConfig
from pipeline.rules_sql import STATUS_RANK, status_rank, with_status

__all__ = ["StatusTables", "evaluate", "tick_array"]

_INF = 2**62
_KEY = ["group", "topic", "partition", "epoch"]


@dataclass
class StatusTables:
    status_history: DataFrame  # partition level, one row per tick
    partition_status: DataFrame  # partition level at the as-of time
    group_status_history: DataFrame
    group_status: DataFrame
    status_transitions: DataFrame


def _group_events(commits: DataFrame, generations: DataFrame, cfg: BurrowConfig, tick_ms: int) -> DataFrame:
    """Commits with ``seen_ms`` (arrival), ``epoch`` (group incarnation in Burrow's memory) and drops applied."""
    expire = cfg.expire_group_s * 1000
    c = commits.where(~F.col("is_tombstone")).select(
        "group",
        "topic",
        "partition",
        F.col("committed_offset").alias("offset"),
        F.col("commit_ts_ms").alias("ts"),
        "log_partition",
        "log_offset",
        F.lit(False).alias("is_tomb"),
    )
    tombs = generations.where(F.col("is_tombstone")).select(
        "group", F.col("ts_ms").alias("ts"), "log_partition", "log_offset", F.lit(True).alias("is_tomb")
    )
    ev = c.unionByName(tombs, allowMissingColumns=True)
    wg = Window.partitionBy("group").orderBy("log_partition", "log_offset")
    before = wg.rowsBetween(Window.unboundedPreceding, -1)
    ev = ev.withColumns(
        {
            "seen_ms": F.max("ts").over(wg.rowsBetween(Window.unboundedPreceding, 0)),
            "prev_commit_ts": F.last(F.when(~F.col("is_tomb"), F.col("ts")), ignorenulls=True).over(before),
            "prev_tomb": F.last(F.when(F.col("is_tomb"), F.col("log_offset")), ignorenulls=True).over(before),
            "prev_commit_offset": F.last(F.when(~F.col("is_tomb"), F.col("log_offset")), ignorenulls=True).over(before),
        }
    )
    # Purged before this commit: some tick after the group's previous commit aged past expire-group came before
    # this commit arrived (and no tombstone already ended that incarnation).
    first_expired_tick = (F.floor((F.col("prev_commit_ts") + expire) / tick_ms) + 1) * tick_ms
    purged = (
        ~F.col("is_tomb")
        & F.col("prev_commit_ts").isNotNull()
        & (F.coalesce(F.col("prev_tomb"), F.lit(-1)) < F.col("prev_commit_offset"))
        & (first_expired_tick < F.col("seen_ms"))
    )
    ev = ev.withColumn(
        "epoch", F.sum((F.col("is_tomb") | purged).cast("int")).over(wg.rowsBetween(Window.unboundedPreceding, 0))
    )
    starts = ev.groupBy("group", "epoch").agg(F.min("seen_ms").alias("epoch_start"))
    starts = starts.withColumn("epoch_end", F.lead("epoch_start").over(Window.partitionBy("group").orderBy("epoch")))
    kept = ev.where(~F.col("is_tomb") & (F.col("ts") >= F.col("seen_ms") - expire))
    return kept.join(starts, ["group", "epoch"]).drop("is_tomb", "prev_tomb", "prev_commit_offset", "prev_commit_ts")


def _slots_min_distance(events: DataFrame, min_distance_ms: int) -> DataFrame:
    """Slot numbers under a positive ``min-distance``: a sequential rule per partition, run per key in pandas."""
    schema = T.StructType([*events.schema.fields, T.StructField("slot", T.LongType())])

    def assign(pdf: pd.DataFrame) -> pd.DataFrame:
        pdf = pdf.sort_values(["log_partition", "log_offset"])
        slots: list[int] = []
        slot, anchor = -1, None
        for ts in pdf["ts"].tolist():
            if anchor is None or ts - anchor >= min_distance_ms:
                slot, anchor = slot + 1, ts
            slots.append(slot)
        return pdf.assign(slot=slots)

    return events.groupBy(*_KEY).applyInPandas(assign, schema=schema)


def _windows(events: DataFrame, cfg: BurrowConfig) -> DataFrame:
    """Each commit with ``win``: the ring contents right after Burrow stored it (oldest first)."""
    n = cfg.intervals
    wk = Window.partitionBy(*_KEY).orderBy("log_partition", "log_offset")
    if cfg.min_distance_s > 0:
        slotted = _slots_min_distance(events, cfg.min_distance_s * 1000)
    else:
        prev_max = F.max("ts").over(wk.rowsBetween(Window.unboundedPreceding, -1))
        new_slot = (prev_max.isNull() | (F.col("ts") >= prev_max)).cast("long")
        slotted = events.withColumn("slot", F.sum(new_slot).over(wk.rowsBetween(Window.unboundedPreceding, 0)) - 1)
    ws = Window.partitionBy(*_KEY, "slot").orderBy("log_partition", "log_offset")
    slotted = slotted.withColumn("anchor_ts", F.first("ts").over(ws.rowsBetween(Window.unboundedPreceding, 0)))
    slotted = slotted.persist(StorageLevel.MEMORY_AND_DISK)  # read twice: the merge check, then the windows
    entry = F.struct(F.col("offset"), F.col("anchor_ts").alias("ts"), F.col("lag"))
    merges = slotted.groupBy(*_KEY, "slot").count().where(F.col("count") > 1).limit(1).count()
    if merges == 0:
        return slotted.withColumn("win", F.collect_list(entry).over(wk.rowsBetween(-(n - 1), 0)))
    # Some commits replaced the newest slot: the ring is the final content of the previous n-1 slots plus this one.
    final = slotted.withColumn("_e", entry).groupBy(*_KEY, "slot").agg(F.max_by("_e", "log_offset").alias("_e"))
    wslot = Window.partitionBy(*_KEY).orderBy("slot").rowsBetween(-(n - 1), -1)
    prev = final.withColumn("_prev", F.collect_list("_e").over(wslot)).drop("_e")
    return slotted.join(prev, [*_KEY, "slot"]).withColumn("win", F.concat("_prev", F.array(entry))).drop("_prev")


def tick_array(valid_from: Column, valid_to: Column, as_of_ms: int, tick_ms: int) -> Column:
    """Grid ticks t with valid_from <= t < valid_to and t <= as_of, plus as_of itself when inside."""
    first = F.ceil(valid_from / F.lit(tick_ms)) * tick_ms
    last = F.floor(F.least(valid_to - 1, F.lit(as_of_ms)) / F.lit(tick_ms)) * tick_ms
    grid = F.when(first <= last, F.sequence(first, last, F.lit(tick_ms).cast("long"))).otherwise(
        F.array().cast("array<long>")
    )
    inside = (valid_from <= F.lit(as_of_ms)) & (F.lit(as_of_ms) < valid_to)
    extra = F.when(inside & (F.lit(as_of_ms) % tick_ms != 0), F.array(F.lit(as_of_ms).cast("long"))).otherwise(
        F.array().cast("array<long>")
    )
    return F.concat(grid, extra)


def _ring(rows: DataFrame, leo: DataFrame, cfg: BurrowConfig) -> DataFrame:
    """``brokers`` (LEO at tick - k * offset-refresh, k < intervals) and ``leo_now`` per (topic, partition, tick)."""
    ticks = rows.select("topic", "partition", "tick_ms").distinct()
    probes = ticks.withColumn("k", F.explode(F.sequence(F.lit(0), F.lit(cfg.intervals - 1)))).withColumn(
        "probe_ms", F.col("tick_ms") - F.col("k") * F.lit(cfg.offset_refresh_s * 1000)
    )
    probed = with_leo(probes, leo, "probe_ms", "probe_leo")
    return probed.groupBy("topic", "partition", "tick_ms").agg(
        F.collect_list("probe_leo").alias("brokers"),
        F.max(F.when(F.col("k") == 0, F.col("probe_leo"))).alias("leo_now"),
    )


def _status_name(rank: Column) -> Column:
    names = [name for name, _ in sorted(STATUS_RANK.items(), key=lambda kv: kv[1])]
    return F.element_at(F.array(*[F.lit(n) for n in names]), rank + 1)


def evaluate(
    commits: DataFrame,
    generations: DataFrame,
    assignments: DataFrame,
    leo: DataFrame,
    cfg: BurrowConfig,
    *,
    as_of_ms: int,
    tick_ms: int,
) -> StatusTables:
    known = leo.select("topic", "partition").distinct()
    events = _group_events(
        commits.join(F.broadcast(known), ["topic", "partition"], "left_semi"), generations, cfg, tick_ms
    )
    events = with_leo(events, leo, "seen_ms", "leo_at_commit").withColumn(
        "lag", F.greatest(F.lit(0).cast("long"), F.col("leo_at_commit") - F.col("offset"))
    )
    windows = _windows(events, cfg)
    wk = Window.partitionBy(*_KEY).orderBy("log_partition", "log_offset")
    windows = windows.withColumn(
        "valid_to",
        F.least(F.coalesce(F.lead("seen_ms").over(wk), F.lit(_INF)), F.coalesce(F.col("epoch_end"), F.lit(_INF))),
    )
    rows = windows.select(
        "group",
        "topic",
        "partition",
        "epoch",
        "win",
        F.col("ts").alias("last_commit_ts"),
        F.explode(tick_array(F.col("seen_ms"), F.col("valid_to"), as_of_ms, tick_ms)).alias("tick_ms"),
    )
    # expire-group: at a tick where the group's newest commit is older than that, Burrow has forgotten the group.
    group_last = F.max("last_commit_ts").over(Window.partitionBy("group", "tick_ms"))
    rows = rows.withColumn("_group_last", group_last)
    rows = rows.where(F.col("_group_last") >= F.col("tick_ms") - cfg.expire_group_s * 1000).drop("_group_last")
    rows = rows.join(_ring(rows, leo, cfg), ["topic", "partition", "tick_ms"])
    last = F.element_at("win", -1)
    rows = rows.withColumns(
        {
            "now_ms": F.col("tick_ms"),
            "brokers": F.filter("brokers", lambda b: b.isNotNull()),
            "cur": F.greatest(F.lit(0).cast("long"), F.col("leo_now") - last["offset"]),
        }
    )
    evaluated = with_status(
        rows, allowed_lag=cfg.allowed_lag, minimum_complete=cfg.minimum_complete, intervals=cfg.intervals
    )
    owners = assignments.select(
        F.col("group").alias("_o_group"),
        F.col("topic").alias("_o_topic"),
        F.col("partition").alias("_o_partition"),
        "member_id",
        "client_id",
        "client_host",
        "valid_from_ms",
        "valid_to_ms",
    )
    cond = [
        F.col("group") == F.col("_o_group"),
        F.col("topic") == F.col("_o_topic"),
        F.col("partition") == F.col("_o_partition"),
        F.col("valid_from_ms") <= F.col("tick_ms"),
        F.coalesce(F.col("valid_to_ms"), F.lit(_INF)) > F.col("tick_ms"),
    ]
    evaluated = evaluated.join(owners, cond, "left")
    history = evaluated.select(
        "tick_ms",
        F.timestamp_millis("tick_ms").alias("tick_time"),
        "group",
        "topic",
        "partition",
        "status",
        "rule",
        F.col("cur").alias("current_lag"),
        "complete",
        F.size("win").alias("window_size"),
        F.col("win")[0]["offset"].alias("start_offset"),
        F.col("win")[0]["ts"].alias("start_ts_ms"),
        F.col("win")[0]["lag"].alias("start_lag"),
        last["offset"].alias("end_offset"),
        last["ts"].alias("end_ts_ms"),
        last["lag"].alias("end_lag"),
        F.col("leo_now").alias("log_end_offset"),
        "brokers",
        F.col("member_id").alias("owner_member_id"),
        F.col("client_id").alias("owner_client_id"),
        F.col("client_host").alias("owner_host"),
        "f_current_lag_ok",
        "f_stopped",
        "f_recent_lag_zero",
        "rewind_index",
        "f_rewind_recovered",
        "f_lag_always_nonzero",
        "f_stalled",
        "f_lag_not_decreasing",
        F.col("win").alias("window"),
    ).cache()
    partition_status = history.where(F.col("tick_ms") == as_of_ms).withColumnRenamed("tick_ms", "as_of_ms")
    group_history = _group_history(history, generations, commits, as_of_ms, tick_ms).cache()
    group_status = group_history.where(F.col("tick_ms") == as_of_ms).withColumnRenamed("tick_ms", "as_of_ms")
    return StatusTables(
        status_history=history.drop("window", "brokers"),
        partition_status=partition_status,
        group_status_history=group_history,
        group_status=group_status,
        status_transitions=_transitions(history, group_history),
    )


def _group_history(
    history: DataFrame, generations: DataFrame, commits: DataFrame, as_of_ms: int, tick_ms: int
) -> DataFrame:
    """Burrow's group roll-up at every tick; a known group with nothing live at a tick is NOTFOUND."""
    per_tick = (
        history.withColumn("_rank", status_rank(F.col("status")))
        .groupBy("group", "tick_ms")
        .agg(
            F.max("_rank").alias("_worst"),
            F.sum("current_lag").alias("total_lag"),
            F.count(F.lit(1)).alias("partition_count"),
            F.avg((F.col("complete") >= 1.0).cast("double")).alias("complete"),
            # Burrow keeps the first partition with the largest lag in map order (random on ties); here ties go to
            # the smallest (topic, partition) so reruns agree.
            F.min_by(
                F.struct("topic", "partition", "current_lag"), F.struct(-F.col("current_lag"), "topic", "partition")
            ).alias("_max"),
            *[
                F.sum((F.col("status") == s).cast("int")).alias(f"n_{s.lower()}")
                for s in ("OK", "WARN", "STOP", "STALL", "REWIND")
            ],
        )
    )
    per_tick = per_tick.withColumn("status", _status_name(F.least(F.col("_worst"), F.lit(STATUS_RANK["ERR"]))))
    first_seen = (
        commits.select("group", "ts_ms")
        .unionByName(generations.select("group", "ts_ms"))
        .groupBy("group")
        .agg(F.min("ts_ms").alias("first_ms"))
    )
    grid = first_seen.select(
        "group", F.explode(tick_array(F.col("first_ms"), F.lit(_INF), as_of_ms, tick_ms)).alias("tick_ms")
    )
    out = grid.join(per_tick, ["group", "tick_ms"], "left")
    return out.select(
        "tick_ms",
        F.timestamp_millis("tick_ms").alias("tick_time"),
        "group",
        F.coalesce("status", F.lit("NOTFOUND")).alias("status"),
        F.coalesce("complete", F.lit(0.0)).alias("complete"),
        F.coalesce("total_lag", F.lit(0)).alias("total_lag"),
        F.coalesce("partition_count", F.lit(0)).alias("partition_count"),
        F.col("_max.topic").alias("maxlag_topic"),
        F.col("_max.partition").alias("maxlag_partition"),
        F.col("_max.current_lag").alias("maxlag_lag"),
        *[F.coalesce(f"n_{s}", F.lit(0)).alias(f"n_{s}") for s in ("ok", "warn", "stop", "stall", "rewind")],
    )


def _transitions(history: DataFrame, group_history: DataFrame) -> DataFrame:
    """Rows where a status differs from the previous tick's (the first tick counts as a change from nothing)."""
    wp = Window.partitionBy("group", "topic", "partition").orderBy("tick_ms")
    parts = history.withColumn("from_status", F.lag("status").over(wp)).where(
        F.col("from_status").isNull() | (F.col("from_status") != F.col("status"))
    )
    parts = parts.select(
        F.lit("partition").alias("level"),
        "group",
        "topic",
        "partition",
        "tick_ms",
        "from_status",
        F.col("status").alias("to_status"),
        "rule",
        "current_lag",
    )
    wg = Window.partitionBy("group").orderBy("tick_ms")
    groups = group_history.withColumn("from_status", F.lag("status").over(wg)).where(
        F.col("from_status").isNull() | (F.col("from_status") != F.col("status"))
    )
    groups = groups.select(
        F.lit("group").alias("level"),
        "group",
        F.lit(None).cast("string").alias("topic"),
        F.lit(None).cast("int").alias("partition"),
        "tick_ms",
        "from_status",
        F.col("status").alias("to_status"),
        F.lit(None).cast("string").alias("rule"),
        F.col("total_lag").alias("current_lag"),
    )
    return parts.unionByName(groups).withColumn("at_time", F.timestamp_millis("tick_ms"))
