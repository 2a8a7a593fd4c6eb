"""The cluster as clients see it: nodes, the controller, and which node leads what.

A single process serves one node today, but nothing above this module assumes that: Metadata and FindCoordinator
ask the cluster view who leads a partition, so several nodes in one process (and coordinator moves, answered with
NOT_COORDINATOR) only change this module.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Node:
    node_id: int
    host: str
    port: int
    rack: str | None = None


class ClusterView:
    def __init__(self, cluster_id: str, local: Node) -> None:
        self.cluster_id = cluster_id
        self.local = local
        self.nodes: dict[int, Node] = {local.node_id: local}
        self.controller_id = local.node_id
        # Partitions of __consumer_offsets led by another node (a coordinator move); empty on a single node.
        self.offsets_partition_leaders: dict[int, int] = {}

    def leader_of_offsets_partition(self, partition: int) -> Node:
        return self.nodes[self.offsets_partition_leaders.get(partition, self.local.node_id)]

    def leader_of(self, topic: str, partition: int) -> Node:
        return self.local
