"""``kafka-consumer-groups.sh --describe`` as of any time, rebuilt from the log, and printed the way it prints.

At time T the broker would answer OffsetFetch with each partition's newest commit (unless a tombstone followed),
DescribeGroups with the members of the newest GroupMetadata record, and ListOffsets(latest) with LEO(T). Rows are
the assigned partitions (with their member) plus partitions with a committed offset and no owner (member columns
``-``), as ``ConsumerGroupCommand`` does; ``lag`` is ``LOG-END-OFFSET - CURRENT-OFFSET`` unclamped, null ("-")
without a committed offset.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from pipeline.asof import with_leo

__all__ = ["DESCRIBE_COLUMNS", "describe", "format_describe"]

DESCRIBE_COLUMNS = (
    "group",
    "topic",
    "partition",
    "current_offset",
    "log_end_offset",
    "lag",
    "consumer_id",
    "host",
    "client_id",
)
_HEADERS = (
    "GROUP",
    "TOPIC",
    "PARTITION",
    "CURRENT-OFFSET",
    "LOG-END-OFFSET",
    "LAG",
    "CONSUMER-ID",
    "HOST",
    "CLIENT-ID",
)


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


def format_describe(rows: Sequence[Mapping[str, Any]]) -> str:
    """Kafka's layout: group, topic, consumer id and host padded to max(15, longest), numbers to 15, partition to
    10, ``-`` for missing values, a blank line between groups."""

    def cell(value: Any) -> str:
        return "-" if value is None else str(value)

    ordered = sorted(rows, key=lambda r: (r["group"], r["topic"], r["partition"]))
    if not ordered:
        return ""
    widths = {
        name: max(15, *(len(cell(r[name])) for r in ordered), len(header))
        for name, header in (("group", "GROUP"), ("topic", "TOPIC"), ("consumer_id", "CONSUMER-ID"), ("host", "HOST"))
    }

    def line(values: Sequence[str]) -> str:
        g, t, p, cur, leo, lag, cid, host, client = values
        return (
            f"{g:<{widths['group']}} {t:<{widths['topic']}} {p:<10} {cur:<15} {leo:<15} {lag:<15} "
            f"{cid:<{widths['consumer_id']}} {host:<{widths['host']}} {client}"
        ).rstrip()

    out: list[str] = []
    current = None
    for r in ordered:
        if r["group"] != current:
            if current is not None:
                out.append("")
            out.append(line(_HEADERS))
            current = r["group"]
        out.append(line([cell(r[c]) for c in DESCRIBE_COLUMNS]))
    return "\n".join(out) + "\n"
