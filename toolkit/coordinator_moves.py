"""A group's coordinator moving away and coming back, or its `__consumer_offsets` partition loading for a while.

Both take Kafka's own paths: the partition is unloaded (requests get NOT_COORDINATOR) and loaded again from the
log (COORDINATOR_LOAD_IN_PROGRESS meanwhile). A moved coordinator comes back when a client looks it up again: the
dispatch middleware below sees the FindCoordinator and reloads the partition before the lookup is answered.
"""

from __future__ import annotations

import asyncio
from typing import Any

from broker.app import Broker
from broker.context import RequestContext
from broker.dispatch import Handler, Route
from coordinator.routing import GROUP_KEY_TYPE
from protocol.registry import ApiKey


class CoordinatorMoves:
    def __init__(self, broker: Broker) -> None:
        self._broker = broker
        self.moved_partitions: set[int] = set()

    def partition_for(self, group_id: str) -> int:
        return self._broker.coordinator.partition_for(group_id)

    def move(self, group_id: str) -> int:
        """Unload the group's partition until a client's FindCoordinator for it; returns the partition."""
        partition = self._unload(group_id)
        self.moved_partitions.add(partition)
        self._broker.rearm_timers()
        return partition

    def load_for(self, group_id: str, duration_ms: int) -> int:
        """Unload the group's partition and load it again after `duration_ms`; returns the partition."""
        partition = self._unload(group_id)
        self._broker.coordinator.begin_loading(partition)
        asyncio.get_running_loop().call_later(duration_ms / 1000, self._finish_loading, partition)
        return partition

    def wraps(self, route: Route) -> bool:
        """Only FindCoordinator needs this middleware."""
        return route.api_key == ApiKey.FIND_COORDINATOR

    async def __call__(self, ctx: RequestContext, route: Route, request: Any, call_next: Handler) -> Any:
        """A dispatch middleware: a FindCoordinator for a group whose coordinator moved finds it loaded afresh."""
        if route.api_key == ApiKey.FIND_COORDINATOR and self.moved_partitions and request.key_type == GROUP_KEY_TYPE:
            for key in request.coordinator_keys if ctx.api_version >= 4 else [request.key]:
                self._on_find_coordinator(key)
        return await call_next(ctx, request)

    def _on_find_coordinator(self, group_id: str) -> None:
        partition = self.partition_for(group_id)
        if partition in self.moved_partitions:
            self.moved_partitions.discard(partition)
            self._broker.coordinator.begin_loading(partition)
            self._finish_loading(partition)

    def _unload(self, group_id: str) -> int:
        partition = self.partition_for(group_id)
        clock = self._broker.clock
        self._broker.coordinator.unload_partition(partition, clock.monotonic_ms(), clock.wall_ms())
        return partition

    def _finish_loading(self, partition: int) -> None:
        records = self._broker.offsets_log.read_all(partition)
        clock = self._broker.clock
        self._broker.coordinator.load_partition(partition, records, clock.monotonic_ms(), clock.wall_ms())
        self._broker.rearm_timers()
