"""One reconciliation step of a consumer-protocol member (KIP-848), as Kafka's CurrentAssignmentBuilder takes it.

Why a step function and not a group-wide rebalance: in the consumer protocol each heartbeat moves one member a
little closer to its share of the group's target assignment. The rules that make this safe without a barrier:

- revoke before assign: a member that must give partitions up stays at its epoch (UNREVOKED_PARTITIONS) until its
  heartbeat no longer reports them; only then does it move to the target epoch;
- never assign a partition that someone else still holds: a target partition that another member has assigned or
  pending revocation is withheld (UNRELEASED_PARTITIONS) and handed out on a later heartbeat, once released;
- the member epoch only moves forward, to the target epoch, and only when nothing is left to revoke.

The function is pure: it reads the member's state, the target and the heartbeat, and returns the next state (the
same object when nothing changes, so callers can skip writing a record). Logging the transition and persisting
it belong to the caller, which knows the group and member ids.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from coordinator.consumer_group.member_state import MemberAssignmentState, MemberState, Partitions, TopicPartition
from coordinator.errors import GroupError
from protocol.errors import ErrorCode

UNKNOWN_STATE_MESSAGE = (
    "The consumer group member is in a unknown state. The member must abandon all its partitions and rejoin."
)
"""Kafka's CurrentAssignmentBuilder wording (its grammar included), which clients may log or match."""

PartitionHeld = Callable[[TopicPartition], bool]
"""Whether a partition is still held by a member of the group at its current epoch (assigned to it or pending
its revocation). Kafka asks "what is the partition's current epoch, -1 if free"; only the yes/no matters here.
The answer may include the member being reconciled: its own pending revocations are never treated as unreleased."""


@dataclass(frozen=True, slots=True)
class TargetAssignment:
    """The group's target assignment epoch and this member's partitions in it."""

    epoch: int
    partitions: Partitions


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """What reconciliation needs from the member's ConsumerGroupHeartbeat and the group around it.

    `owned` is the TopicPartitions field, or None when the member left it out (it does when unchanged): then the
    member is assumed to still own everything it was asked to revoke, which is the only safe guess.
    `subscribed_topics` are the topic keys the member's subscription resolves to (names plus the topics its
    regular expression matched; an unresolved expression matches none); None means every target topic. Topics
    assigned but no longer subscribed are revoked. `enforce_subscription` asks for that check even when no new
    target is pending (Kafka does so when the member's subscription just changed).
    """

    owned: Partitions | None
    is_held: PartitionHeld
    subscribed_topics: frozenset[str] | None = None
    enforce_subscription: bool = False


def reconcile(member: MemberAssignmentState, target: TargetAssignment, heartbeat: Heartbeat) -> MemberAssignmentState:
    """The member's next state, or `member` itself when it cannot move yet.

    Raises GroupError(FENCED_MEMBER_EPOCH) for a member in the UNKNOWN state that still owns (or does not report)
    partitions: it must first drop everything and rejoin, as Kafka demands.
    """
    step = _Step(member, target, heartbeat)
    if member.state is MemberState.STABLE:
        if member.member_epoch != target.epoch:
            return step.towards_target(member.member_epoch)
        return step.drop_unsubscribed() if heartbeat.enforce_subscription else member
    if member.state is MemberState.UNREVOKED_PARTITIONS:
        if step.still_owns(member.partitions_pending_revocation):
            return step.drop_unsubscribed() if heartbeat.enforce_subscription else member
        return step.towards_target(member.member_epoch)
    if member.state is MemberState.UNRELEASED_PARTITIONS:
        return step.towards_target(member.member_epoch)
    if heartbeat.owned is None or heartbeat.owned:
        raise GroupError(ErrorCode.FENCED_MEMBER_EPOCH, UNKNOWN_STATE_MESSAGE)
    return step.towards_target(target.epoch)


@dataclass(frozen=True, slots=True)
class _Step:
    """The inputs of one reconciliation step, so that its two moves share them without long parameter lists."""

    member: MemberAssignmentState
    target: TargetAssignment
    heartbeat: Heartbeat

    def still_owns(self, revoking: Partitions) -> bool:
        """Whether the member has not yet confirmed giving up any of `revoking` (an unreported list counts)."""
        owned = self.heartbeat.owned
        return owned is None or not owned.isdisjoint(revoking)

    def subscribed(self, partitions: Partitions) -> Partitions:
        """`partitions` restricted to the member's subscribed topics."""
        topics = self.heartbeat.subscribed_topics
        if topics is None:
            return partitions
        return frozenset(tp for tp in partitions if tp[0] in topics)

    def towards_target(self, epoch_while_revoking: int) -> MemberAssignmentState:
        """Kafka's computeNextAssignment: keep what stays, revoke what goes, take what is free.

        While anything is left to revoke the member stays at `epoch_while_revoking` and gets no new partition;
        otherwise it moves to the target epoch with every free target partition, STABLE or, if some target
        partitions are still held elsewhere, UNRELEASED_PARTITIONS.
        """
        member = self.member
        target = self.subscribed(self.target.partitions)
        kept = member.assigned_partitions & target
        revoking = member.assigned_partitions - kept
        if revoking and self.still_owns(revoking):
            return member.advanced(epoch_while_revoking, MemberState.UNREVOKED_PARTITIONS, kept, revoking)
        wanted = target - kept
        unreleased = frozenset(
            tp for tp in wanted if tp not in member.partitions_pending_revocation and self.heartbeat.is_held(tp)
        )
        state = MemberState.UNRELEASED_PARTITIONS if unreleased else MemberState.STABLE
        return member.advanced(self.target.epoch, state, kept | (wanted - unreleased), frozenset())

    def drop_unsubscribed(self) -> MemberAssignmentState:
        """Kafka's updateCurrentAssignment: revoke assigned partitions of topics the member no longer subscribes
        to, without starting a new target. The epoch stays; the previous epoch catches up with it."""
        member = self.member
        assigned = self.subscribed(member.assigned_partitions)
        dropped = member.assigned_partitions - assigned
        if not dropped:
            return member
        pending = member.partitions_pending_revocation | dropped
        if self.still_owns(pending):
            return member.advanced(member.member_epoch, MemberState.UNREVOKED_PARTITIONS, assigned, pending)
        return member.advanced(member.member_epoch, member.state, assigned, member.partitions_pending_revocation)
