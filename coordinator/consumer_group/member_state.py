"""What the coordinator remembers about one consumer-protocol member's reconciliation (KIP-848).

In the consumer protocol there is no group-wide barrier: each member walks from its current assignment to its
share of the group's target assignment on its own, one heartbeat at a time. The walk is safe only because a
partition is handed to its new owner after the old owner has confirmed it stopped consuming it. This module holds
the per-member facts that walk needs, as an immutable value so that a step can be computed, compared with the
previous one and persisted (CurrentMemberAssignment record) without aliasing surprises.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

TopicPartition = tuple[str, int]
"""(topic key, partition index). The key is whatever the caller identifies topics by (Kafka uses the topic id);
reconciliation only compares keys, it never resolves them."""

Partitions = frozenset[TopicPartition]


class MemberState(enum.IntEnum):
    """Where a member is in its reconciliation, with the byte Kafka stores in CurrentMemberAssignment.State."""

    STABLE = 0
    """Fully reconciled: the member holds exactly its target partitions at the target epoch. Only from here (or
    after revocations) can a newer target be started, so a member never works towards two targets at once."""

    UNREVOKED_PARTITIONS = 1
    """The member must first give partitions up. It stays at its old epoch until its heartbeat's owned partitions
    no longer list them: advancing earlier would let the new owner start while this one still consumes."""

    UNRELEASED_PARTITIONS = 2
    """The member is at the target epoch but some of its target partitions are still held (assigned or pending
    revocation) by another member. It waits for their release rather than being handed a partition twice."""

    UNKNOWN = 127
    """A state byte this version does not know (written by a newer coordinator, then downgraded). The only safe
    recovery is to fence the member so that it rejoins without partitions and reconciles from scratch."""

    @classmethod
    def from_value(cls, value: int) -> MemberState:
        """The state for a stored byte; an unknown byte maps to UNKNOWN instead of failing the group's load."""
        try:
            return cls(value)
        except ValueError:
            return cls.UNKNOWN


@dataclass(frozen=True, slots=True)
class MemberAssignmentState:
    """The reconciliation facts of one member, exactly the fields Kafka persists for it.

    `assigned_partitions` are the partitions the member may consume now (what its heartbeat response lists);
    `partitions_pending_revocation` are partitions it was told to give up and has not yet confirmed releasing.
    Both count as "held" for everyone else until released. `previous_member_epoch` is kept because Kafka accepts
    a heartbeat carrying the previous epoch (its response was lost in flight) instead of fencing the member.
    """

    member_epoch: int = 0
    previous_member_epoch: int = 0
    state: MemberState = MemberState.STABLE
    assigned_partitions: Partitions = frozenset()
    partitions_pending_revocation: Partitions = frozenset()

    def advanced(
        self,
        member_epoch: int,
        state: MemberState,
        assigned: Partitions,
        pending_revocation: Partitions,
    ) -> MemberAssignmentState:
        """The next step at `member_epoch`, whose previous epoch is the current one (Kafka's `updateMemberEpoch`).
        The previous epoch moves even when the epoch does not: it always records the epoch the member held before
        this step."""
        return MemberAssignmentState(
            member_epoch=member_epoch,
            previous_member_epoch=self.member_epoch,
            state=state,
            assigned_partitions=assigned,
            partitions_pending_revocation=pending_revocation,
        )

    def holds(self, partition: TopicPartition) -> bool:
        """Whether this member still keeps `partition` from anyone else (assigned or not yet revoked)."""
        return partition in self.assigned_partitions or partition in self.partitions_pending_revocation
