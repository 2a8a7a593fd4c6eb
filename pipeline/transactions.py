"""Transactional offset commits (TxnOffsetCommit), decided by their producer's end-transaction marker.

A transactional producer's commits are written to ``__consumer_offsets`` in its transactional batches and take
effect only when the COMMIT marker of its transaction follows in the same partition; an ABORT marker discards
them. The marker deciding a commit is the producer's first marker after it. So a committed one counts as a commit
at the marker's position and time (when Kafka applies it), an aborted one never counts, and one still open at the
end of the log (no marker yet) does not count either: it may yet be aborted, and Kafka itself does not expose it.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from pipeline.decode import TXN_ABORT, TXN_COMMIT
from pipeline.describe_rules import COMMIT_RECORDS

__all__ = ["ABORTED", "COMMITTED", "OPEN", "transactional_commits", "txn_offset_commits"]

#: ``txn_state`` of a transactional commit.
COMMITTED, ABORTED, OPEN = "committed", "aborted", "open"


def transactional_commits(raw: DataFrame) -> DataFrame:
    """The raw rows of the transactional commits (``producer_id`` set) with ``txn_state`` and the deciding
    marker's ``txn_end_offset`` and ``txn_end_ts_ms`` (null while open)."""
    commits = raw.where(F.col("record_type").isin(*COMMIT_RECORDS) & F.col("producer_id").isNotNull())
    markers = raw.where(F.col("record_type").isin(TXN_COMMIT, TXN_ABORT)).select(
        "log_partition",
        "producer_id",
        "log_offset",
        F.struct(
            F.col("record_type").alias("kind"), F.col("log_offset").alias("offset"), F.col("log_ts_ms").alias("ts_ms")
        ).alias("_end"),
        F.lit(True).alias("_marker"),
    )
    merged = commits.withColumn("_marker", F.lit(False)).unionByName(markers, allowMissingColumns=True)
    # The nearest marker after each commit: a running frame walking backwards (a frame to the partition's end
    # would be recomputed for every row).
    after = (
        Window.partitionBy("log_partition", "producer_id")
        .orderBy(F.desc("log_offset"))
        .rowsBetween(Window.unboundedPreceding, -1)
    )
    decided = merged.withColumn("_end", F.last("_end", ignorenulls=True).over(after)).where(~F.col("_marker"))
    state = (
        F.when(F.col("_end").isNull(), F.lit(OPEN))
        .when(F.col("_end.kind") == TXN_ABORT, F.lit(ABORTED))
        .otherwise(F.lit(COMMITTED))
    )
    return decided.select(
        *commits.columns,
        state.alias("txn_state"),
        F.col("_end.offset").alias("txn_end_offset"),
        F.col("_end.ts_ms").alias("txn_end_ts_ms"),
    )


def txn_offset_commits(raw: DataFrame) -> DataFrame:
    """The ``txn_offset_commits`` table: every transactional commit as written, with how its transaction ended
    (the aborted and open ones are only here, never in ``offset_commits``)."""
    return transactional_commits(raw).select(
        "group",
        "topic",
        "partition",
        "committed_offset",
        "commit_ts_ms",
        "log_partition",
        "log_offset",
        "log_ts_ms",
        (F.col("record_type") == "offset_tombstone").alias("is_tombstone"),
        "producer_id",
        "txn_state",
        "txn_end_offset",
        "txn_end_ts_ms",
    )
