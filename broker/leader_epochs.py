"""The leader-epoch checks Kafka's Partition makes before serving a client (``checkCurrentLeaderEpoch``), shared by
Fetch, ListOffsets and OffsetForLeaderEpoch.

A client names the leader epoch it last saw (``current_leader_epoch``, -1 for "don't check"): an older one means
its metadata is stale (FENCED_LEADER_EPOCH: refresh and retry), a newer one means this broker has not caught up with
a leader change yet (UNKNOWN_LEADER_EPOCH: retry). The partition's epoch lives in its log's epoch cache
(:mod:`storage.leader_epoch`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from protocol.errors import ErrorCode

if TYPE_CHECKING:
    from storage.log_manager import LogManager
    from storage.partition_log import PartitionLog

__all__ = ["NO_EPOCH", "check_current_leader_epoch", "leader_epoch_of"]

#: Kafka's ``RecordBatch.NO_PARTITION_LEADER_EPOCH``: the request names no epoch, nothing is checked.
NO_EPOCH = -1


def check_current_leader_epoch(partition_log: PartitionLog, current_leader_epoch: int) -> ErrorCode:
    """NONE, FENCED_LEADER_EPOCH or UNKNOWN_LEADER_EPOCH for a request naming ``current_leader_epoch``."""
    if current_leader_epoch == NO_EPOCH:
        return ErrorCode.NONE
    ours = partition_log.leader_epoch
    if current_leader_epoch < ours:
        return ErrorCode.FENCED_LEADER_EPOCH
    if current_leader_epoch > ours:
        return ErrorCode.UNKNOWN_LEADER_EPOCH
    return ErrorCode.NONE


def leader_epoch_of(logs: LogManager, topic: str, partition: int) -> int:
    """The leader epoch Metadata and DescribeTopicPartitions report for a partition (0, a new partition's, when its
    log is not open)."""
    partition_log = logs.get(topic, partition)
    return partition_log.leader_epoch if partition_log is not None else 0
