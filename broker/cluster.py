"""The cluster as clients see it: nodes, the controller, and which node leads what.

`ClusterView` is the one interface routing goes through (Metadata's leaders, FindCoordinator's coordinator,
DescribeConfigs' broker id). It assumes nothing about there being one node: several nodes in one process, and
coordinator moves, are another implementation of it, not a change to the handlers. `SingleNodeCluster` is the
implementation this broker runs today.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol


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


class SingleNodeCluster:
    """One node leads everything. Its advertised address is read when asked: it is the address of the listener
    the current request came in on (`broker.listeners`), and port 0 is only resolved once the listener is bound."""

    def __init__(self, cluster_id: str, node_id: int, address: Callable[[], tuple[str, int]]) -> None:
        self.cluster_id = cluster_id
        self.controller_id = node_id
        self._node_id = node_id
        self._address = address

    @property
    def local(self) -> Node:
        host, port = self._address()
        return Node(self._node_id, host, port)

    def nodes(self) -> Sequence[Node]:
        return (self.local,)

    def leader_of(self, topic: str, partition: int) -> Node | None:
        return self.local

    def leader_of_offsets_partition(self, partition: int) -> Node | None:
        return self.local
