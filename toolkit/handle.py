"""What a test holds of an embedded broker: its address, virtual time, faults, groups and the recorder.

Every call is marshalled onto the broker's own loop. Imports of the server stay out of module import time, so the
pytest plugin that re-exports this stays a leaf.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolkit.embedded import EmbeddedBroker
    from toolkit.recorder import Exchange


class GroupNotReadyError(AssertionError):
    """`wait_for_group` timed out; the message shows the group as it was."""


class GroupBrokerHandle:
    """What a test holds: the address, virtual time, fault injection, group inspection and the recorder."""

    def __init__(self, embedded: EmbeddedBroker) -> None:
        self._embedded = embedded
        self._controls = embedded.kit.controls

    @property
    def bootstrap_servers(self) -> str:
        return self._embedded.bootstrap_servers

    @property
    def data_dir(self) -> str:
        return str(self._embedded.data_dir)

    def _call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        return self._embedded.call(lambda: fn(*args, **kwargs))

    # -- time ----------------------------------------------------------------------------------------------------

    def advance(self, ms: int) -> None:
        """Move the broker's clock forward by `ms` and fire every timer now due (sessions, rebalance and sync
        timeouts, the initial delay, offset retention, log retention)."""
        self._call(self._controls.advance, ms)

    def freeze_time(self) -> None:
        """Stop the broker's clock: from now on it moves only by `advance` (virtual time alone)."""
        self._call(self._controls.freeze_time)

    # -- groups --------------------------------------------------------------------------------------------------

    def group(self, group_id: str) -> dict[str, Any] | None:
        """The group as the coordinator sees it: state, generation, leader, members, who a rebalance waits for."""
        snapshot: dict[str, Any] | None = self._call(self._controls.group_snapshot, group_id)
        return snapshot

    def _matches(self, group_id: str, state: str | None, members: int | None, generation_at_least: int | None) -> Any:
        snapshot = self.group(group_id)
        if snapshot is None:
            return None, None
        ok = (
            (state is None or snapshot["state"] == state)
            and (members is None or len(snapshot["members"]) == members)
            and (generation_at_least is None or snapshot["generation"] >= generation_at_least)
        )
        return ok, snapshot

    async def wait_for_group(
        self,
        group_id: str,
        *,
        state: str | None = None,
        members: int | None = None,
        generation_at_least: int | None = None,
        timeout_s: float = 15.0,
    ) -> dict[str, Any]:
        """Wait (without blocking the caller's event loop) until the group matches; returns its snapshot."""
        import asyncio  # here, not at import time: the plugin module stays a leaf

        snapshot: dict[str, Any] = await asyncio.to_thread(
            self.wait_for_group_blocking,
            group_id,
            state=state,
            members=members,
            generation_at_least=generation_at_least,
            timeout_s=timeout_s,
        )
        return snapshot

    def wait_for_group_blocking(
        self,
        group_id: str,
        *,
        state: str | None = None,
        members: int | None = None,
        generation_at_least: int | None = None,
        timeout_s: float = 15.0,
    ) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        while True:
            ok, snapshot = self._matches(group_id, state, members, generation_at_least)
            if ok:
                return dict(snapshot)
            if time.monotonic() > deadline:
                raise GroupNotReadyError(f"group {group_id!r} not as expected within {timeout_s}s: {snapshot}")
            time.sleep(0.02)

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
        """Answer the next `count` requests of `api` (optionally of one group or client id) with `error`."""
        self._call(self._controls.inject_error, api, error, count, group_id=group_id, client_id=client_id)

    def add_latency(self, api: str | int, delay_ms: int, count: int | None = None) -> None:
        self._call(self._controls.add_latency, api, delay_ms, count)

    def clear_faults(self) -> None:
        self._call(self._controls.clear_faults)

    def drop_connections(self, client_id: str | None = None) -> int:
        dropped: int = self._call(self._controls.drop_connections, client_id)
        return dropped

    def expire_member(self, group_id: str, member_id: str) -> bool:
        done: bool = self._call(self._controls.expire_member, group_id, member_id)
        return done

    def force_rebalance(self, group_id: str, reason: str = "forced by test") -> bool:
        done: bool = self._call(self._controls.force_rebalance, group_id, reason)
        return done

    def move_coordinator(self, group_id: str) -> None:
        self._call(self._controls.move_coordinator, group_id)

    def fail_next_offsets_append(self, error: str | int = "NOT_LEADER_OR_FOLLOWER", count: int = 1) -> None:
        self._call(self._controls.fail_next_offsets_append, error, count)

    def load_partition_for(self, group_id: str, duration_ms: int) -> None:
        self._call(self._controls.load_partition_for, group_id, duration_ms)

    # -- recorder ------------------------------------------------------------------------------------------------

    def requests(
        self, *, api: str | int | None = None, client_id: str | None = None, group_id: str | None = None
    ) -> list[Exchange]:
        """Every request/response recorded so far (API, version, error codes, decoded bodies)."""
        from toolkit.controls import api_key_of

        key = None if api is None else api_key_of(api)
        recorder = self._embedded.kit.recorder
        exchanges: list[Exchange] = self._call(recorder.exchanges, api=key, client_id=client_id, group_id=group_id)
        return exchanges
