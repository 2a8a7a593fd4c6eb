"""The cluster as clients see it: nodes, the controller, and which node leads what.

`ClusterView` is the one interface routing goes through (Metadata's leaders, FindCoordinator's coordinator,
DescribeConfigs' broker id). It assumes nothing about there being one node: several nodes in one process, and
coordinator moves, are another implementation of it, not a change to the handlers. `NodesCluster` is the
implementation this broker runs: one node by default, several with `cluster.nodes`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from broker.leadership import NO_LEADER, Leadership, PartitionState
from broker.listeners import current_node
from broker.offsets_log import OFFSETS_TOPIC


@dataclass(frozen=True, slots=True)
class Node:
    node_id: int
    host: str
    port: int
    rack: str | None = None


class ClusterView(Protocol):
    """What the handlers may ask about the cluster; every answer may differ per node and change over time."""

    @property
    def cluster_id(self) -> str: ...

    @property
    def controller_id(self) -> int: ...

    @property
    def local(self) -> Node:
        """The node this server answers as."""
        ...

    def nodes(self) -> Sequence[Node]:
        """Every live node, as Metadata lists them."""
        ...

    def leader_of(self, topic: str, partition: int) -> Node | None:
        """The leader of a partition; None when it has no live leader."""
        ...

    def leader_of_offsets_partition(self, partition: int) -> Node | None:
        """The leader of a `__consumer_offsets` partition (the coordinator of its groups); None when none is live."""
        ...

    def partition_state(self, topic: str, partition: int) -> PartitionState:
        """Replicas, leader (-1: none live) and in-sync replicas of a partition, as Metadata reports them."""
        ...

    def offline_replicas(self, state: PartitionState) -> list[int]:
        """The replicas of `state` on nodes that are not running."""
        ...

    def leads_here(self, topic: str, partition: int) -> bool:
        """Whether the node serving the current connection leads the partition."""
        ...


class NodesCluster:
    """The nodes this process runs (`cluster.nodes`, one by default), with their partitions' leaders.

    Node ids are `node.id`, `node.id + 1`, ...; each has its own listeners (`listeners.AdvertisedListeners` gives
    node i's address). With one node it leads everything, as before clusters existed. With several, the partition
    table (`broker.leadership`) says who leads what; the controller is the lowest live node id, as a KRaft quorum
    of combined nodes would elect one of them. The node answering is the one whose listener the current connection
    came in on (`listeners.current_node`)."""

    def __init__(
        self,
        cluster_id: str,
        node_ids: Sequence[int],
        address: Callable[[str | None, int], tuple[str, int]],
        leadership: Leadership,
        replication_factor: Callable[[str], int],
    ) -> None:
        self.cluster_id = cluster_id
        self.node_ids = tuple(node_ids)
        self.leadership = leadership
        self._index = {node_id: index for index, node_id in enumerate(self.node_ids)}
        self._single = len(self.node_ids) == 1
        #: The state of every partition of a one-node cluster (PartitionState is frozen: one shared value).
        self._only = PartitionState((self.node_ids[0],), self.node_ids[0], (self.node_ids[0],))
        self._address = address
        self._replication_factor = replication_factor

    @property
    def several(self) -> bool:
        """More than one node: leaders and coordinators may be elsewhere."""
        return not self._single

    @property
    def controller_id(self) -> int:
        live = self.leadership.live
        return min(live) if live else self.node_ids[0]

    @property
    def local(self) -> Node:
        node_id = current_node.get()
        return self.node(self.node_ids[0] if node_id is None else node_id)

    def node(self, node_id: int) -> Node:
        """A node's address on the listener of the current connection."""
        host, port = self._address(None, self._index[node_id])
        return Node(node_id, host, port)

    def index_of(self, node_id: int) -> int:
        return self._index[node_id]

    def nodes(self) -> Sequence[Node]:
        if self._single:
            return (self.local,)
        live = self.leadership.live
        return tuple(self.node(node_id) for node_id in self.node_ids if node_id in live)

    def partition_state(self, topic: str, partition: int) -> PartitionState:
        """Replicas, leader and ISR of a partition (every one is this node's with one node)."""
        if self._single:
            return self._only
        factor = min(self._replication_factor(topic), len(self.node_ids))
        return self.leadership.state(topic, partition, factor)

    def offline_replicas(self, state: PartitionState) -> list[int]:
        live = self.leadership.live
        return [replica for replica in state.replicas if replica not in live]

    def leader_id(self, topic: str, partition: int) -> int:
        """The leader's node id, or -1 (`leadership.NO_LEADER`) when it has no live leader."""
        return self.node_ids[0] if self._single else self.partition_state(topic, partition).leader

    def leads_here(self, topic: str, partition: int) -> bool:
        """Whether the node serving the current connection leads the partition: always on one node, and for the
        broker's own calls (no connection: no node asking)."""
        if self._single:
            return True
        node_id = current_node.get()
        return node_id is None or self.partition_state(topic, partition).leader == node_id

    def leader_of(self, topic: str, partition: int) -> Node | None:
        if self._single:
            return self.local
        leader = self.partition_state(topic, partition).leader
        return None if leader == NO_LEADER else self.node(leader)

    def leader_of_offsets_partition(self, partition: int) -> Node | None:
        return self.leader_of(OFFSETS_TOPIC, partition)
