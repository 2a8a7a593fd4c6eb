"""One member of a KIP-848 consumer group: what it subscribes to and where its reconciliation stands.

The value is immutable: a heartbeat computes the member's next value, compares it with the current one to decide
which records to write (MemberMetadata when the subscription changed, CurrentMemberAssignment when the
reconciliation moved), and a failed write can restore the previous value exactly. The fields are those Kafka
persists in ConsumerGroupMemberMetadataValue and ConsumerGroupCurrentMemberAssignmentValue.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from coordinator.consumer_group.member_state import MemberAssignmentState, MemberState

LEAVE_GROUP_MEMBER_EPOCH = -1
"""A member leaving for good sends -1 and gets -1 back."""
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2
"""A static member leaving temporarily (it will rejoin under the same instance id) sends -2: its assignment is
kept for its successor until the session timeout removes it."""
JOIN_GROUP_MEMBER_EPOCH = 0


@dataclass(frozen=True, slots=True)
class ClassicProtocols:
    """What a classic (JoinGroup) member of a consumer group declared: its session timeout and protocols, kept so
    that the group can be converted back to a classic group (online migration)."""

    session_timeout_ms: int
    protocols: tuple[tuple[str, bytes], ...]


@dataclass(frozen=True, slots=True)
class ConsumerGroupMember:
    """A member's metadata and reconciliation state (Kafka's `ConsumerGroupMember`)."""

    member_id: str
    instance_id: str | None = None
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: tuple[str, ...] = ()
    """Sorted, without duplicates."""
    subscribed_topic_regex: str | None = None
    rebalance_timeout_ms: int = -1
    server_assignor: str | None = None
    assignment: MemberAssignmentState = field(default_factory=MemberAssignmentState)
    classic: ClassicProtocols | None = None
    """Set for a member that speaks the classic protocol (JoinGroup/SyncGroup) inside a consumer group."""

    @property
    def member_epoch(self) -> int:
        return self.assignment.member_epoch

    @property
    def state(self) -> MemberState:
        return self.assignment.state

    @property
    def uses_classic_protocol(self) -> bool:
        return self.classic is not None

    def with_assignment(self, assignment: MemberAssignmentState) -> ConsumerGroupMember:
        return replace(self, assignment=assignment)

    def same_metadata(self, other: ConsumerGroupMember) -> bool:
        """Whether the persisted metadata (ConsumerGroupMemberMetadataValue) is unchanged."""
        return replace(self, assignment=other.assignment) == other
