"""Stopping and starting the nodes of a several-node cluster, and moving leadership on purpose (`cluster.nodes`).

What a node failure does in Kafka, done in one process:

- stopping a node closes its listeners and drops its connections (clients see the node disappear);
- every partition it led elects another in-sync replica (`broker.leadership`), and each leader change bumps the
  partition's leader epoch in its log, as the controller does, so a client's fetch position is validated against
  the new epoch (OffsetForLeaderEpoch) and stale requests are fenced;
- the `__consumer_offsets` and `__transaction_state` partitions among them are unloaded from the coordinators
  (parked requests answer NOT_COORDINATOR) and loaded again from the shared log for their new leader
  (COORDINATOR_LOAD_IN_PROGRESS meanwhile), as a new coordinator node loads what it now leads;
- starting the node again binds the same ports, puts it back in sync, and gives it the partitions left without a
  leader; it leads nothing else until a preferred election or a move.

Replicas are simulated on the shared storage, so a leader change loses nothing acknowledged. Each change is one log
event (`node.stopped`, `node.started`, `partition.leader_changed` with its `cause`), sent through `events`, an
`EventTap` whose subscribers (the toolkit's timelines) see them as the log does.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any, Protocol

import structlog

from broker.cluster import NodesCluster
from broker.events import EventTap
from broker.leadership import NO_LEADER, LeaderChange, PartitionRef
from storage.log_manager import LogManager

log = structlog.get_logger("broker.nodes")
#: Why a partition's leader changed (`partition.leader_changed`'s `cause`).
NODE_STOPPED = "node_stopped"
NODE_STARTED = "node_started"
MOVED = "moved"


class Coordinator(Protocol):
    """What both coordinators offer for moving a partition (the group and the transaction coordinator)."""

    def begin_loading(self, partition: int) -> None: ...

    def unload_partition(self, partition: int, now_ms: int, wall_ms: int | None = None) -> None: ...


class NodeListeners(Protocol):
    """The broker's side of a node's listeners and connections."""

    def serve_node(self, index: int) -> None: ...

    def close_node(self, index: int) -> None: ...


class NodeControl:
    def __init__(
        self,
        cluster: NodesCluster,
        logs: LogManager,
        listeners: NodeListeners,
        coordinators: dict[str, tuple[Coordinator, Callable[[int], Coroutine[Any, Any, int]]]],
        clock: Callable[[], tuple[int, int]],
        spawn: Callable[[Coroutine[Any, Any, Any]], None],
        load_ms: int = 0,
    ) -> None:
        """`coordinators`: per coordinator topic, its coordinator and the coroutine that loads one of its
        partitions from the log; `clock`: (monotonic, wall) ms now; `load_ms` (`cluster.coordinator.load.ms`):
        how long, on the broker clock, a moved coordinator partition stays loading before its load starts."""
        self._cluster = cluster
        self._logs = logs
        self._listeners = listeners
        self._coordinators = coordinators
        self._clock = clock
        self._spawn = spawn
        self._load_ms = load_ms
        #: Loads waiting for their time (`load_ms`), per (coordinator topic, partition): their due time on the
        #: broker clock. The timer driver calls `tick` (virtual time: they start when a test advances past it).
        self._pending: dict[tuple[str, int], int] = {}
        self.stopped: set[int] = set()
        #: Every node event, logged and handed to the subscribers (`subscribe`): an extension point for timelines.
        self.events = EventTap(log)

    def _partitions(self) -> list[PartitionRef]:
        nodes = len(self._cluster.node_ids)
        return [
            (info.name, index, min(info.replication_factor, nodes))
            for info in self._logs.topics()
            for index in range(info.partitions)
        ]

    def check(self, node_id: int) -> None:
        """`ValueError` unless `node_id` is one of the nodes."""
        if node_id not in self._cluster.node_ids:
            raise ValueError(f"no node {node_id}: the nodes are {list(self._cluster.node_ids)}")

    def stop(self, node_id: int) -> list[LeaderChange]:
        """Stop a node: its listeners close, its connections drop, what it led moves; the leader changes."""
        self.check(node_id)
        if node_id in self.stopped:
            return []
        if len(self.stopped) + 1 == len(self._cluster.node_ids):
            raise ValueError("the last running node cannot be stopped")
        self.stopped.add(node_id)
        self._listeners.close_node(self._cluster.index_of(node_id))
        changes = self._cluster.leadership.stop(node_id, self._partitions())
        self._apply(changes, NODE_STOPPED)
        self.events.info("node.stopped", node=node_id, leaders_moved=len(changes))
        return changes

    def start(self, node_id: int) -> list[LeaderChange]:
        """Start a stopped node again on the same ports; the leader changes (partitions that had none)."""
        self.check(node_id)
        if node_id not in self.stopped:
            return []
        self._listeners.serve_node(self._cluster.index_of(node_id))
        self.stopped.discard(node_id)
        changes = self._cluster.leadership.start(node_id, self._partitions())
        self._apply(changes, NODE_STARTED)
        self.events.info("node.started", node=node_id, leaders_moved=len(changes))
        return changes

    def move_leader(self, topic: str, partition: int, node_id: int) -> LeaderChange | None:
        """Make `node_id` the leader of one partition (a live in-sync replica); None when it leads already."""
        self.check(node_id)
        info = self._logs.topic(topic)
        if info is None or not 0 <= partition < info.partitions:
            raise ValueError(f"no partition {topic}-{partition}")
        factor = min(info.replication_factor, len(self._cluster.node_ids))
        change = self._cluster.leadership.move(topic, partition, factor, node_id)
        if change is not None:
            self._apply([change], MOVED)
        return change

    def _apply(self, changes: list[LeaderChange], cause: str) -> None:
        """Bump each changed partition's leader epoch and move coordinator partitions to their new leader; `cause`:
        why they changed (a node stopped or started, or a move on purpose)."""
        monotonic_ms, wall_ms = self._clock()
        for change in changes:
            partition_log = self._logs.get(change.topic, change.partition)
            epoch = None
            if partition_log is not None:
                epoch = partition_log.leader_epoch + 1
                partition_log.become_leader(epoch)
            self.events.info(
                "partition.leader_changed",
                topic=change.topic,
                partition=change.partition,
                leader_before=change.before,
                leader=change.after,
                leader_epoch=epoch,
                cause=cause,
            )
            moved = self._coordinators.get(change.topic)
            if moved is None:
                continue
            coordinator, load = moved
            if change.before != NO_LEADER:
                coordinator.unload_partition(change.partition, monotonic_ms, wall_ms)
            self._pending.pop((change.topic, change.partition), None)
            if change.after != NO_LEADER:
                coordinator.begin_loading(change.partition)
                if self._load_ms > 0:
                    self._pending[change.topic, change.partition] = monotonic_ms + self._load_ms
                else:
                    self._spawn(load(change.partition))

    def next_deadline_ms(self) -> int | None:
        """When a delayed load is due (the broker's timer driver asks)."""
        return min(self._pending.values(), default=None)

    def tick(self, now_ms: int) -> None:
        """Start the loads that are due."""
        for key, due_ms in sorted(self._pending.items(), key=lambda item: item[1]):
            if due_ms <= now_ms:
                del self._pending[key]
                topic, partition = key
                self._spawn(self._coordinators[topic][1](partition))
