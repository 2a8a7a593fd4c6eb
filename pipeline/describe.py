"""``kafka-consumer-groups.sh --describe`` as of any time, rebuilt from the log on Spark.

The rules (which commit, which members, which rows, LEO with its ties, lag) are stated once in
:mod:`pipeline.describe_rules`; this is their Spark implementation, and :mod:`pipeline.describe_python` the
in-process one. Rule numbers below refer to that module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from cli.describe_format import DESCRIBE_COLUMNS, format_describe
from pipeline.asof import with_leo
from pipeline.config import parse_as_of
from pipeline.describe_rules import POSITION

if TYPE_CHECKING:
    from pipeline.analyze import DecodedTables

__all__ = ["DESCRIBE_COLUMNS", "describe", "describe_tables", "format_describe"]


def describe(commits: DataFrame, generations: DataFrame, leo: DataFrame, *, as_of_ms: int) -> DataFrame:
    pos = F.struct(*POSITION)
    latest_commit = (  # rule 1
        commits.where(F.col("log_ts_ms") <= as_of_ms)
        .groupBy("group", "topic", "partition")
        .agg(F.max_by(F.struct("committed_offset", "is_tombstone"), pos).alias("c"))
        .where(~F.col("c.is_tombstone"))
        .select("group", "topic", "partition", F.col("c.committed_offset").alias("current_offset"))
    )
    latest_gen = (  # rule 2
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
    rows = with_leo(rows.withColumn("_t", F.lit(as_of_ms)), leo, "_t", "log_end_offset").drop("_t")  # rule 4
    rows = rows.withColumn("lag", F.col("log_end_offset") - F.col("current_offset"))  # rule 5
    return rows.select(*DESCRIBE_COLUMNS)


def describe_tables(tables: DecodedTables, as_of: str, group: str | None = None) -> list[dict[str, Any]]:
    """The ``--describe`` rows as of ``as_of`` (``max``, ``now`` or ISO-8601; rule 6), collected to the driver.

    ``tables`` should already be filtered to ``group`` (``AnalysisConfig(groups=group_pattern(group))``) so that
    ``max`` is that group's latest time, as the pure-Python engine computes it.
    """
    from pipeline.analyze import latest_time  # analyze imports this module for describe()

    as_of_ms = parse_as_of(as_of, latest_time(tables) if as_of == "max" else 0)
    rows = describe(tables.commits, tables.generations, tables.leo, as_of_ms=as_of_ms)
    if group is not None:
        rows = rows.where(F.col("group") == group)
    return [r.asDict() for r in rows.collect()]
