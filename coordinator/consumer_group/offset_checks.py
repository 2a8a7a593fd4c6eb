"""What a consumer group asks of offset requests (Kafka's `ConsumerGroup.validateOffsetCommit/Fetch/Delete`,
rules K46-K51): in the consumer protocol the member epoch plays the generation's part, and there is no
group-wide barrier, so a commit is checked against the committing member's own epoch only."""

from __future__ import annotations

from coordinator.consumer_group.group import ConsumerGroup
from coordinator.consumer_group.member import ConsumerGroupMember
from coordinator.errors import GroupError
from protocol.errors import ErrorCode

CONSUMER_PROTOCOL_COMMIT_VERSION = 9
"""KIP-848 members must commit with OffsetCommit v9+ (the version that names the field a member epoch)."""


def _member(group: ConsumerGroup, member_id: str | None) -> ConsumerGroupMember:
    member = group.member(member_id or "")
    if member is None:
        raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {group.group_id}.")
    return member


def _check_epoch(member: ConsumerGroupMember, received: int) -> None:
    """Only the member's current epoch is accepted; a classic member (online migration) hears about its
    generation instead."""
    expected = member.member_epoch
    if received == expected:
        return
    if member.uses_classic_protocol:
        raise GroupError(
            ErrorCode.ILLEGAL_GENERATION,
            f"The received generation id {received} does not match the expected member epoch {expected}.",
        )
    raise GroupError(
        ErrorCode.STALE_MEMBER_EPOCH,
        f"The received member epoch {received} does not match the expected member epoch {expected}.",
    )


def validate_offset_commit(
    group: ConsumerGroup,
    member_id: str,
    epoch: int,
    api_version: int,
    *,
    instance_id: str | None = None,
    transactional: bool = False,
) -> None:
    """K46/K48, as Kafka 4.4's ConsumerGroup.validateOffsetCommit: an admin or standalone commit (epoch < 0) only
    into a group without members, a transactional one without member (TxnOffsetCommit with no member id, epoch -1,
    no instance id) always; otherwise a member, on OffsetCommit v9+ unless it speaks the classic protocol or the
    commit is transactional, at its current epoch. A newer epoch has Kafka's own message.

    Kafka 4.4 also accepts an older epoch for the partitions the member has held since that epoch (per-partition
    assignment epochs); group-broker keeps no per-partition epochs and refuses it (README, Differences)."""
    if epoch < 0 and group.is_empty:
        return
    if transactional and epoch == -1 and member_id == "" and instance_id is None:
        return
    member = _member(group, member_id)
    if not transactional and not member.uses_classic_protocol and api_version < CONSUMER_PROTOCOL_COMMIT_VERSION:
        raise GroupError(
            ErrorCode.UNSUPPORTED_VERSION,
            "OffsetCommit version 9 or above must be used by members using the consumer group protocol",
        )
    if epoch > member.member_epoch:
        kind = "generation id" if member.uses_classic_protocol else "member epoch"
        code = ErrorCode.ILLEGAL_GENERATION if member.uses_classic_protocol else ErrorCode.STALE_MEMBER_EPOCH
        raise GroupError(code, f"Received {kind} {epoch} is newer than current member epoch {member.member_epoch}.")
    _check_epoch(member, epoch)


def validate_offset_fetch(group: ConsumerGroup, member_id: str | None, epoch: int) -> None:
    """K49: an OffsetFetch naming no member (admin) is answered; one naming a member needs its current epoch."""
    if member_id is None and epoch < 0:
        return
    _check_epoch(_member(group, member_id), epoch)


def is_subscribed_to_topic(group: ConsumerGroup, topic: str) -> bool:
    """K51: whether any member subscribes to `topic`, by name or through a resolved regular expression."""
    return any(topic in group.subscribed_topic_names(member) for member in group.members.values())
