"""The partition logs a client may read and write through the node it is connected to: those the node leads.

Kafka's `ReplicaManager.getPartitionOrError`: a partition the cluster does not know is UNKNOWN_TOPIC_OR_PARTITION;
one that exists but is led by another node (or by none, while its leader is down) is NOT_LEADER_OR_FOLLOWER, so
the client refreshes its metadata and goes to the leader. Produce, Fetch, ListOffsets, OffsetForLeaderEpoch,
DeleteRecords and DescribeProducers all ask here. Every node of a test cluster shares the same storage; this is
what keeps each node to its own partitions. With one node it leads everything and this is the plain lookup.
"""

from __future__ import annotations

from broker.cluster import ClusterView
from protocol.errors import ErrorCode
from storage.log_manager import LogManager
from storage.partition_log import PartitionLog


class LeaderLogs:
    __slots__ = ("_cluster", "_logs")

    def __init__(self, logs: LogManager, cluster: ClusterView) -> None:
        self._logs = logs
        self._cluster = cluster

    @property
    def cluster(self) -> ClusterView:
        return self._cluster

    def lookup(self, topic: str, partition: int) -> tuple[PartitionLog | None, ErrorCode]:
        """The partition's log when this node leads it, else None and the error to answer."""
        partition_log = self._logs.get(topic, partition)
        if partition_log is None:
            return None, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        if not self._cluster.leads_here(topic, partition):
            return None, ErrorCode.NOT_LEADER_OR_FOLLOWER
        return partition_log, ErrorCode.NONE
