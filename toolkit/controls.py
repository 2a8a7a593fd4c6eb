"""Everything a test (or an operator) can do to a running broker, in one facade.

The pytest plugin calls these methods directly on an in-process broker; the HTTP control API exposes the same
methods to tests in any language. Each control takes Kafka's own code path (a session expiry, a partition
unload, an append error), so clients react exactly as they would in production, only on demand.
"""

from __future__ import annotations

import asyncio
from typing import Any

import structlog

from broker.app import Broker
from broker.context import RequestContext
from broker.dispatch import Handler, Route
from coordinator.controls import MemberView
from coordinator.hashing import partition_for
from protocol.errors import ErrorCode
from protocol.registry import ApiKey
from toolkit.faults import Faults

log = structlog.get_logger("toolkit.controls")
GROUP_KEY_TYPE = 0


def api_key_of(api: str | int) -> ApiKey:
    """`"OffsetCommit"`, `"OFFSET_COMMIT"`, `"offset_commit"` or `8`."""
    if isinstance(api, int):
        return ApiKey(api)
    normalized = "".join(ch for ch in api if ch.isalnum()).lower()
    for key in ApiKey:
        if key.name.replace("_", "").lower() == normalized:
            return key
    raise ValueError(f"unknown API {api!r}")


def error_of(error: str | int) -> ErrorCode:
    return ErrorCode(error) if isinstance(error, int) else ErrorCode[error.upper()]


class BrokerControls:
    def __init__(self, broker: Broker, faults: Faults) -> None:
        self.broker = broker
        self.faults = faults
        self.moved_partitions: set[int] = set()

    def _now(self) -> int:
        return self.broker.clock.monotonic_ms()

    def _partition(self, group_id: str) -> int:
        return partition_for(group_id, self.broker.config["offsets.topic.num.partitions"])

    # -- time ----------------------------------------------------------------------------------------------------

    def advance(self, ms: int) -> None:
        self.broker.advance_time(ms)

    def freeze_time(self) -> None:
        self.broker.clock.freeze()
        self.broker.rearm_timers()

    # -- faults --------------------------------------------------------------------------------------------------

    def inject_error(
        self,
        api: str | int,
        error: str | int,
        count: int = 1,
        *,
        group_id: str | None = None,
        client_id: str | None = None,
    ) -> None:
        self.faults.inject_error(api_key_of(api), error_of(error), count, group_id=group_id, client_id=client_id)

    def add_latency(self, api: str | int, delay_ms: int, count: int | None = None) -> None:
        self.faults.add_latency(api_key_of(api), delay_ms, count)

    def clear_faults(self) -> None:
        self.faults.clear()

    def drop_connections(self, client_id: str | None = None) -> int:
        """Close client connections (all, or those of one client id) as a network failure would."""
        dropped = 0
        for connection in list(self.broker.connections):
            if client_id is None or connection.session.client_id == client_id:
                connection.close()
                dropped += 1
        log.info("controls.connections_dropped", client_id=client_id, count=dropped)
        return dropped

    def fail_next_offsets_append(self, error: str | int = ErrorCode.NOT_LEADER_OR_FOLLOWER, count: int = 1) -> None:
        """The next appends to `__consumer_offsets` fail; the coordinator remaps the error as Kafka does."""
        self.faults.offsets_append_errors.extend([error_of(error)] * count)

    # -- groups --------------------------------------------------------------------------------------------------

    def expire_member(self, group_id: str, member_id: str) -> bool:
        done = self.broker.coordinator.expire_member_now(group_id, member_id, self._now())
        self.broker.rearm_timers()
        return done

    def force_rebalance(self, group_id: str, reason: str = "forced by operator") -> bool:
        done = self.broker.coordinator.force_rebalance(group_id, self._now(), reason)
        self.broker.rearm_timers()
        return done

    def move_coordinator(self, group_id: str) -> int:
        """The group's coordinator moves away: its requests get NOT_COORDINATOR until a client looks the
        coordinator up again (FindCoordinator), which finds it loaded afresh from `__consumer_offsets`."""
        partition = self._partition(group_id)
        self.broker.coordinator.unload_partition(partition, self._now(), self.broker.clock.wall_ms())
        self.moved_partitions.add(partition)
        self.broker.rearm_timers()
        return partition

    async def coordinator_moves(self, ctx: RequestContext, route: Route, request: Any, call_next: Handler) -> Any:
        """A dispatch middleware: a FindCoordinator for a group whose coordinator moved finds it loaded afresh."""
        if route.api_key == ApiKey.FIND_COORDINATOR and self.moved_partitions and request.key_type == GROUP_KEY_TYPE:
            for key in request.coordinator_keys if ctx.api_version >= 4 else [request.key]:
                self.on_find_coordinator(key)
        return await call_next(ctx, request)

    def on_find_coordinator(self, group_id: str) -> None:
        partition = self._partition(group_id)
        if partition in self.moved_partitions:
            self.moved_partitions.discard(partition)
            self._reload(partition)

    def load_partition_for(self, group_id: str, duration_ms: int) -> int:
        """Put the group's `__consumer_offsets` partition into loading: COORDINATOR_LOAD_IN_PROGRESS for a while."""
        partition = self._partition(group_id)
        self.broker.coordinator.unload_partition(partition, self._now(), self.broker.clock.wall_ms())
        self.broker.coordinator.begin_loading(partition)
        asyncio.get_running_loop().call_later(duration_ms / 1000, self._finish_loading, partition)
        return partition

    def _finish_loading(self, partition: int) -> None:
        records = self.broker.offsets_log.read_all(partition)
        self.broker.coordinator.load_partition(partition, records, self._now(), self.broker.clock.wall_ms())
        self.broker.rearm_timers()

    def _reload(self, partition: int) -> None:
        self.broker.coordinator.begin_loading(partition)
        self._finish_loading(partition)

    # -- inspection ----------------------------------------------------------------------------------------------

    def group_snapshot(self, group_id: str) -> dict[str, Any] | None:
        group = self.broker.coordinator.group(group_id)
        if group is None:
            return None
        members: list[MemberView] = self.broker.coordinator.member_views(group_id)
        return {
            "group_id": group_id,
            "state": group.state.value,
            "generation": group.generation_id,
            "protocol_type": group.protocol_type,
            "protocol": group.protocol_name,
            "leader": group.leader_id,
            "members": [m.member_id for m in members],
            "waiting_for": self.broker.coordinator.waiting_for(group_id),
            "member_details": [
                {
                    "member_id": m.member_id,
                    "group_instance_id": m.group_instance_id,
                    "client_id": m.client_id,
                    "client_host": m.client_host,
                    "awaiting_join": m.awaiting_join,
                    "awaiting_sync": m.awaiting_sync,
                    "session_deadline_ms": m.session_deadline_ms,
                }
                for m in members
            ],
        }
