"""Which node leads each partition, and which replicas are in sync, as nodes stop, start and leaders move.

This is the controller's partition table of a test cluster whose replicas share one storage: a replica is always
caught up, so a node that starts again rejoins the ISR of its partitions at once. The rules are Kafka's (KRaft's
`PartitionChangeBuilder` with unclean election off):

- a stopped node leaves every ISR; a partition it led elects the first replica, in replica order, still in the ISR;
- when the stopped node was the last one in sync, the partition has no leader (-1) and its ISR keeps that node, so
  only it can lead again (a clean election), as Kafka keeps the last leader in the ISR;
- a node that starts rejoins the ISR of its partitions, and leads those that had no leader;
- leadership does not move back by itself (Kafka waits for `auto.leader.rebalance.enable`'s check); a preferred
  election or an explicit move does it.

Each change is returned as a `LeaderChange` so the broker can bump the partition's leader epoch and log it. The
table is pure (no storage, no clock): the broker passes the partitions in question.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from broker.placement import replicas_for

#: No live leader (Kafka's -1 in Metadata).
NO_LEADER = -1


@dataclass(frozen=True, slots=True)
class PartitionState:
    replicas: tuple[int, ...]
    leader: int
    isr: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class LeaderChange:
    topic: str
    partition: int
    before: int
    after: int


#: A partition the broker asks about: (topic, partition index, replication factor).
PartitionRef = tuple[str, int, int]


class Leadership:
    def __init__(self, nodes: Sequence[int]) -> None:
        self.nodes = tuple(nodes)
        self.live: set[int] = set(nodes)
        self._states: dict[tuple[str, int], PartitionState] = {}

    def state(self, topic: str, partition: int, replication_factor: int) -> PartitionState:
        """The partition's state; a partition never asked about before starts with its placement's replicas."""
        key = (topic, partition)
        found = self._states.get(key)
        if found is None:
            replicas = replicas_for(partition, replication_factor, self.nodes)
            isr = tuple(r for r in replicas if r in self.live)
            found = self._states[key] = PartitionState(replicas, isr[0] if isr else NO_LEADER, isr)
        return found

    def leader(self, topic: str, partition: int, replication_factor: int) -> int:
        return self.state(topic, partition, replication_factor).leader

    def forget(self, topic: str) -> None:
        """A deleted topic: a topic created later under the same name is placed afresh."""
        for key in [key for key in self._states if key[0] == topic]:
            del self._states[key]

    def stop(self, node: int, partitions: Iterable[PartitionRef]) -> list[LeaderChange]:
        """`node` stopped: it leaves every ISR, and what it led elects another in-sync replica (or none)."""
        before = [(topic, partition, self.state(topic, partition, factor)) for topic, partition, factor in partitions]
        self.live.discard(node)
        changes: list[LeaderChange] = []
        for topic, partition, state in before:
            if node not in state.isr:
                continue
            isr = tuple(r for r in state.isr if r != node) or (node,)
            leader = state.leader
            if leader == node:
                leader = next((r for r in isr if r in self.live), NO_LEADER)
            self._set(topic, partition, PartitionState(state.replicas, leader, isr), state, changes)
        return changes

    def start(self, node: int, partitions: Iterable[PartitionRef]) -> list[LeaderChange]:
        """`node` started: it is in sync again for its partitions, and leads those that had no leader."""
        before = [(topic, partition, self.state(topic, partition, factor)) for topic, partition, factor in partitions]
        self.live.add(node)
        changes: list[LeaderChange] = []
        for topic, partition, state in before:
            if node not in state.replicas:
                continue
            isr = tuple(r for r in state.replicas if r in state.isr or r == node)
            leader = state.leader
            if leader == NO_LEADER:
                leader = next((r for r in isr if r in self.live), NO_LEADER)
            self._set(topic, partition, PartitionState(state.replicas, leader, isr), state, changes)
        return changes

    def move(self, topic: str, partition: int, replication_factor: int, node: int) -> LeaderChange | None:
        """Make `node` the leader (it must be a live, in-sync replica); None when it leads already."""
        state = self.state(topic, partition, replication_factor)
        if node not in state.isr or node not in self.live:
            raise ValueError(f"node {node} is not a live in-sync replica of {topic}-{partition} (ISR {state.isr})")
        changes: list[LeaderChange] = []
        self._set(topic, partition, PartitionState(state.replicas, node, state.isr), state, changes)
        return changes[0] if changes else None

    def preferred(self, topic: str, partition: int, replication_factor: int) -> LeaderChange | None:
        """A preferred election: the first replica leads when it is live and in sync; None when nothing changes."""
        state = self.state(topic, partition, replication_factor)
        first = state.replicas[0]
        if first == state.leader or first not in state.isr or first not in self.live:
            return None
        return self.move(topic, partition, replication_factor, first)

    def _set(
        self, topic: str, partition: int, state: PartitionState, before: PartitionState, changes: list[LeaderChange]
    ) -> None:
        self._states[(topic, partition)] = state
        if state.leader != before.leader:
            changes.append(LeaderChange(topic, partition, before.leader, state.leader))
