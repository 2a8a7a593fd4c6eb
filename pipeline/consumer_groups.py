"""KIP-848 consumer groups as generations: the group epoch plays the classic generation's part.

A classic group writes one GroupMetadata record per completed rebalance, members and assignments included. A
KIP-848 group writes them apart: the group epoch (ConsumerGroupMetadata) bumps whenever membership or
subscriptions change, each member has its own metadata record, and each member's current assignment record moves
on as the member reconciles to the target assignment, one member epoch at a time. So one generation row is built
per group epoch, with the members and current assignments as they stand at the end of that epoch (the last
member and current-assignment records before the next epoch record, or the end of the log): what the epoch
converged to. A tombstone of the epoch record (the group deleted) is a tombstone generation, as in the classic
table. Topic ids in assignments become names through the topic catalogue (:mod:`pipeline.topic_ids`); an id the
catalogue does not know (a deleted topic) is kept as the id.
"""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from pipeline.decode import TOMBSTONE_SUFFIX
from pipeline.describe_rules import ASSIGNMENT_RECORD, EPOCH_RECORD, MEMBER_RECORD

__all__ = ["MEMBERS_TYPE", "consumer_group_generations"]

#: The ``members`` column's type (:mod:`pipeline.schemas`), for an empty or rebuilt member list.
MEMBERS_TYPE = (
    "array<struct<member_id:string,group_instance_id:string,"
    "client_id:string,client_host:string,session_timeout_ms:int,rebalance_timeout_ms:int,"
    "subscribed_topics:array<string>,assignment:array<struct<topic:string,partitions:array<int>>>>>"
)
#: The member struct's fields between ``member_id`` and ``assignment``, as the member record gives them.
_MEMBER_FIELDS = (
    "group_instance_id",
    "client_id",
    "client_host",
    "session_timeout_ms",
    "rebalance_timeout_ms",
    "subscribed_topics",
)
#: "Until the end of the log" for the span of a group's last epoch.
_END = 2**63 - 1


def consumer_group_generations(raw: DataFrame, names: Mapping[str, str]) -> DataFrame:
    """One row per group epoch record, in the columns of the classic generations (before their ``ts_ms``,
    ``member_count`` and ``members``, which :func:`pipeline.extract.group_generations` adds alike)."""
    w = Window.partitionBy("group").orderBy("log_partition", "log_offset")
    epochs = raw.where(F.col("record_type").isin(EPOCH_RECORD, EPOCH_RECORD + TOMBSTONE_SUFFIX)).select(
        "group",
        "generation",
        "log_partition",
        "log_offset",
        "log_ts_ms",
        F.coalesce(F.lead("batch_offset").over(w), F.lit(_END)).alias("_until"),
        (F.col("record_type") != EPOCH_RECORD).alias("is_tombstone"),
    )
    spans = epochs.where(~F.col("is_tombstone")).select("group", "log_partition", "log_offset", "_until")
    keys = ["group", "log_partition", "log_offset", "member_id"]
    members = _latest(raw, spans, MEMBER_RECORD)
    assignments = _latest(raw, spans, ASSIGNMENT_RECORD).select(*keys, F.col("m.assignment").alias("assignment"))
    member = F.struct(
        F.col("member_id"),
        *[F.col(f"m.{name}").alias(name) for name in _MEMBER_FIELDS],
        _named(F.coalesce("assignment", F.col("m.assignment")), names).alias("assignment"),
    )
    per_epoch = (
        members.join(assignments, keys, "left")
        .groupBy("group", "log_partition", "log_offset")
        .agg(F.array_sort(F.collect_list(member)).alias("members"))
    )
    return (
        epochs.drop("_until")
        .join(per_epoch, ["group", "log_partition", "log_offset"], "left")
        .select(
            "group",
            "generation",
            F.lit("consumer").alias("protocol_type"),
            F.lit(None).cast("string").alias("protocol"),
            F.lit(None).cast("string").alias("leader"),
            F.lit(None).cast("long").alias("state_ts_ms"),
            "log_partition",
            "log_offset",
            "log_ts_ms",
            F.col("members").cast(MEMBERS_TYPE).alias("members"),
            "is_tombstone",
        )
    )


def _latest(raw: DataFrame, spans: DataFrame, record_type: str) -> DataFrame:
    """``group, log_partition, log_offset`` (of the epoch), ``member_id`` and ``m`` (the member struct) of the
    last ``record_type`` record of each member before the epoch's span ends, members whose last one is a
    tombstone left out."""
    records = raw.where(F.col("record_type").isin(record_type, record_type + TOMBSTONE_SUFFIX)).select(
        F.col("group").alias("_group"),
        F.col("log_offset").alias("_at"),
        F.col("members")[0].alias("m"),
        (F.col("record_type") != record_type).alias("_gone"),
    )
    within = spans.join(records, (F.col("group") == F.col("_group")) & (F.col("_at") < F.col("_until")))
    latest = within.groupBy("group", "log_partition", "log_offset", F.col("m.member_id").alias("member_id")).agg(
        F.max_by(F.struct("_gone", "m"), "_at").alias("_last")
    )
    return latest.where(~F.col("_last._gone")).select(
        "group", "log_partition", "log_offset", "member_id", F.col("_last.m").alias("m")
    )


def _named(assignment: Column, names: Mapping[str, str]) -> Column:
    """The assignment with topic ids replaced by names (unknown ids kept)."""
    if not names:
        return assignment
    lookup = F.create_map(*[F.lit(x) for pair in sorted(names.items()) for x in pair])
    return F.transform(
        assignment,
        lambda a: F.struct(
            F.coalesce(lookup[a["topic"]], a["topic"]).alias("topic"), a["partitions"].alias("partitions")
        ),
    )
