"""One member of a classic group: what it told us in its last JoinGroup, its assignment and its parked replies.

This is Part 1.2's member metadata. The two parked-response slots (`awaiting_join`, `awaiting_sync`) are the
liveness rule of Part 1.3: a member whose JoinGroup or SyncGroup is parked is alive even without heartbeats,
because its connection is muted while it waits and it *cannot* heartbeat. Brand-new members (`is_new`) are the
exception (KAFKA-7610): their parked JoinGroup does not keep them alive past the new-member join timeout.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field

from coordinator.reply import Reply
from protocol.messages.join_group import JoinGroupResponse
from protocol.messages.sync_group import SyncGroupResponse

#: A member's supported protocols in its preference order: (name, metadata), metadata being its subscription.
Protocols = tuple[tuple[str, bytes], ...]


@dataclass(slots=True, eq=False)
class ClassicMember:
    """A classic-protocol member (Kafka `ClassicGroupMember`)."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: Protocols
    assignment: bytes = b""
    awaiting_join: Reply[JoinGroupResponse] | None = None
    """The parked JoinGroup reply, while the join phase is not complete."""
    awaiting_sync: Reply[SyncGroupResponse] | None = None
    """The parked SyncGroup reply, while the leader's assignment is not yet durable."""
    is_new: bool = False
    """Joined in the current rebalance and has not yet received a JoinGroup response."""
    heartbeat_key: Hashable = None
    """This member's key in the timer (set by the coordinator, built once to keep heartbeats cheap)."""
    heartbeat_op: Callable[[], None] = field(default=lambda: None, repr=False)
    """The expiry operation for this member (built once for the same reason)."""

    @property
    def is_static(self) -> bool:
        return self.group_instance_id is not None

    @property
    def is_awaiting_join(self) -> bool:
        return self.awaiting_join is not None

    @property
    def is_awaiting_sync(self) -> bool:
        return self.awaiting_sync is not None

    def protocol_names(self) -> list[str]:
        return [name for name, _ in self.protocols]

    def metadata(self, protocol_name: str) -> bytes:
        """This member's metadata (subscription) for `protocol_name`; it must support that protocol."""
        for name, metadata in self.protocols:
            if name == protocol_name:
                return metadata
        raise KeyError(f"member {self.member_id} does not support protocol {protocol_name!r}")

    def vote(self, candidates: Iterable[str]) -> str:
        """The first protocol of this member's preference list that every member supports (rule #14)."""
        allowed = set(candidates)
        for name, _ in self.protocols:
            if name in allowed:
                return name
        raise ValueError(f"member {self.member_id} supports none of the candidate protocols {sorted(allowed)}")

    def matches(self, protocols: Protocols) -> bool:
        """Same protocols, same order, byte-equal metadata: a rejoin that changes nothing (rule #15)."""
        return self.protocols == protocols

    def has_satisfied_heartbeat(self) -> bool:
        """At heartbeat expiry: is this member alive without a heartbeat? (Part 1.3 liveness, rule #27)."""
        if self.is_new:
            return False
        return self.awaiting_join is not None or self.awaiting_sync is not None
