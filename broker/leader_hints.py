"""KIP-951: a NOT_LEADER_OR_FOLLOWER answer names the current leader, so a client goes straight to it.

Kafka's `KafkaApis` fills, for each partition refused with NOT_LEADER_OR_FOLLOWER, the partition's `CurrentLeader`
(leader id and epoch; -1 and -1 when none is live) and lists each named leader once in the response's
`NodeEndpoints` (its address on the listener the request came in on): Produce from v10, Fetch from v16. A client
then updates its metadata without asking for it. Only a several-node cluster can answer NOT_LEADER_OR_FOLLOWER.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from broker.cluster import ClusterView, Node
from broker.leader_epochs import leader_epoch_of
from broker.leadership import NO_LEADER
from storage.log_manager import LogManager

#: The first versions whose responses carry the current leader and the node endpoints.
PRODUCE_LEADER_HINTS_VERSION = 10
FETCH_LEADER_HINTS_VERSION = 16
E = TypeVar("E")


class LeaderHints:
    """The current leaders named in one response, and the endpoints of the nodes they are."""

    __slots__ = ("_cluster", "_logs", "nodes")

    def __init__(self, cluster: ClusterView, logs: LogManager) -> None:
        self._cluster = cluster
        self._logs = logs
        self.nodes: dict[int, Node] = {}

    def leader(self, topic: str, partition: int) -> tuple[int, int]:
        """The partition's (leader id, leader epoch), (-1, -1) when it has no live leader; its node is noted."""
        leader = self._cluster.partition_state(topic, partition).leader
        if leader == NO_LEADER:
            return NO_LEADER, -1
        node = self._cluster.leader_of(topic, partition)
        if node is not None:
            self.nodes[node.node_id] = node
        return leader, leader_epoch_of(self._logs, topic, partition)

    def endpoints(self, endpoint: Callable[..., E]) -> list[E]:
        """The nodes named, by id, as the response's `NodeEndpoint` (Produce's and Fetch's are distinct classes)."""
        return [
            endpoint(node_id=node.node_id, host=node.host, port=node.port, rack=node.rack)
            for node in (self.nodes[node_id] for node_id in sorted(self.nodes))
        ]
