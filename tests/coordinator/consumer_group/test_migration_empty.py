"""Online migration of EMPTY groups (KIP-848; rules M40-M42 of the migration table): a ConsumerGroupHeartbeat
replaces an empty classic group by a consumer group, and a classic JoinGroup replaces an empty consumer group by a
classic group, under every `group.consumer.migration.policy`, keeping the committed offsets and writing the old
group's tombstones first. Checked against Kafka 4.4.0 over the wire (offsets carried over in both directions)."""

from __future__ import annotations

import pytest

from coordinator.offsets import OffsetAndMetadata
from coordinator.records import CoordinatorRecord
from coordinator.state import GroupState
from protocol.errors import ErrorCode
from protocol.messages.consumer_group_member_metadata_key import ConsumerGroupMemberMetadataKey
from protocol.messages.consumer_group_metadata_key import ConsumerGroupMetadataKey
from protocol.messages.consumer_group_target_assignment_metadata_key import (
    ConsumerGroupTargetAssignmentMetadataKey,
)
from protocol.messages.group_metadata_key import GroupMetadataKey
from tests.coordinator.consumer_group.harness import ConsumerGroupTestContext

POLICIES = ("disabled", "upgrade", "downgrade", "bidirectional")
GROUP = "group"


def _context(policy: str = "bidirectional") -> ConsumerGroupTestContext:
    return ConsumerGroupTestContext({"foo": 3}, consumer_group_migration_policy=policy)


def _log(ctx: ConsumerGroupTestContext) -> list[CoordinatorRecord]:
    return ctx.store.records(ctx.coordinator.partition_for(GROUP))


def _empty_classic_group_with_offsets(ctx: ConsumerGroupTestContext) -> None:
    """A classic group whose only member joined, committed and left: Empty, protocol type consumer, offsets."""
    joined = ctx.join_with_n_members(GROUP, 1, topics=("foo",))
    member = joined.member_ids[0]
    commit = ctx.commit(group_id=GROUP, offsets={("foo", 0): 42}, member_id=member, generation_id=joined.generation_id)
    assert ctx.commit_errors(commit) == {("foo", 0): ErrorCode.NONE}
    ctx.leave(GROUP, (member, None))
    assert ctx.state(GROUP) is GroupState.EMPTY


def _empty_consumer_group_with_offsets(ctx: ConsumerGroupTestContext) -> None:
    """A consumer group whose only member joined and left (-1): Empty, with an offset (put in place directly:
    committing to consumer groups is the offset manager's part)."""
    ctx.join_cg(GROUP, "m1", ["foo"])
    left = ctx.cg_heartbeat(GROUP, "m1", -1).value
    assert left.error_code == ErrorCode.NONE
    group = ctx.cg(GROUP)
    assert group.is_empty
    group.offsets.put("foo", 0, OffsetAndMetadata(offset=7, leader_epoch=-1, metadata="", commit_timestamp_ms=0))


@pytest.mark.parametrize("policy", POLICIES)
def test_m40_heartbeat_replaces_an_empty_classic_group_under_every_policy(policy: str) -> None:
    """M40/K11: epoch 0 on an EMPTY classic group converts it whatever the policy; the committed offsets are the
    consumer group's now (Kafka 4.4: OffsetFetch after the conversion still returns them)."""
    ctx = _context(policy)
    _empty_classic_group_with_offsets(ctx)
    offsets = ctx.group(GROUP).offsets

    response = ctx.join_cg(GROUP, "m1", ["foo"])

    # The classic group is replaced by a NEW consumer group, which starts at epoch 1 (Kafka 4.4, KAFKA-20268).
    assert response.member_epoch == 2
    assert ctx.coordinator.group(GROUP) is None
    group = ctx.cg(GROUP)
    assert group.offsets is offsets
    assert offsets.get("foo", 0) is not None and offsets.get("foo", 0).offset == 42  # type: ignore[union-attr]
    assert group.group_epoch == 2 and group.state.value == "Stable"


def test_m40_classic_tombstone_is_written_first_in_the_heartbeat_batch() -> None:
    """M40/M6: the classic group's GroupMetadata tombstone precedes the consumer group's records, in one append."""
    ctx = _context()
    _empty_classic_group_with_offsets(ctx)
    before = len(_log(ctx))
    appends = ctx.store.appends

    ctx.join_cg(GROUP, "m1", ["foo"])

    written = _log(ctx)[before:]
    assert ctx.store.appends == appends + 1
    assert isinstance(written[0].key, GroupMetadataKey) and written[0].is_tombstone
    assert isinstance(written[1].key, ConsumerGroupMemberMetadataKey)
    assert not any(r.is_tombstone for r in written[1:])


def test_m40_simple_offsets_only_group_becomes_a_consumer_group() -> None:
    """M40 (Kafka's testUpgradeFromSimpleGroupToConsumerGroup): an OffsetCommit with generation -1 made a simple
    classic group (no protocol type); a joining heartbeat turns it into a Stable consumer group with the offsets."""
    ctx = _context("disabled")
    ctx.commit(group_id=GROUP, offsets={("foo", 1): 5})
    simple = ctx.group(GROUP)
    assert simple.protocol_type is None

    response = ctx.join_cg(GROUP, "m1", ["foo"])

    assert response.error_code == ErrorCode.NONE
    assert ctx.coordinator.group(GROUP) is None
    assert ctx.cg(GROUP).offsets.get("foo", 1).offset == 5  # type: ignore[union-attr]
    assert ctx.cg(GROUP).state.value == "Stable"


def test_m40_failed_write_puts_the_classic_group_back() -> None:
    """M40: the conversion is part of the heartbeat's write; if it fails the classic group (and its offsets) is
    served again and no consumer group remains."""
    ctx = _context()
    _empty_classic_group_with_offsets(ctx)
    classic = ctx.group(GROUP)
    ctx.store.fail_next(ErrorCode.KAFKA_STORAGE_ERROR)

    response = ctx.cg_heartbeat(
        GROUP, "m1", 0, rebalance_timeout_ms=30_000, subscribed_topic_names=["foo"], topic_partitions=[]
    ).value

    assert response.error_code != ErrorCode.NONE
    assert ctx.coordinator.group(GROUP) is classic
    assert ctx.coordinator.consumer_group(GROUP) is None
    assert classic.offsets.get("foo", 0).offset == 42  # type: ignore[union-attr]
    assert ctx.join_dynamic(group_id=GROUP, topics=("foo",)).value.error_code == ErrorCode.NONE


def test_m40_rejected_heartbeat_leaves_the_classic_group_in_place() -> None:
    """M40: a joining heartbeat that fails validation in the group (full consumer group) writes nothing and the
    empty classic group stays (Kafka discards the records of a failed request)."""
    ctx = ConsumerGroupTestContext({"foo": 3}, consumer_group_max_size=1)
    _empty_classic_group_with_offsets(ctx)
    ctx.store.fail_next(ErrorCode.NOT_LEADER_OR_FOLLOWER)  # would fail the write, if any were attempted
    appends = ctx.store.appends
    # An unknown regex error: the heartbeat fails inside the group after the conversion was set up.
    response = ctx.cg_heartbeat(
        GROUP, "m1", 0, rebalance_timeout_ms=30_000, subscribed_topic_regex="(", topic_partitions=[]
    ).value
    assert response.error_code == ErrorCode.INVALID_REGULAR_EXPRESSION
    assert ctx.store.appends == appends
    assert ctx.group(GROUP).state is GroupState.EMPTY
    assert ctx.coordinator.consumer_group(GROUP) is None


def test_m42_non_zero_epoch_or_leave_on_a_classic_group_is_group_id_not_found() -> None:
    """M42 (verified on Kafka 4.4.0): epoch > 0 and leave (-1) on a classic group answer GROUP_ID_NOT_FOUND
    "Group <id> is not a consumer group." and change nothing."""
    ctx = _context()
    _empty_classic_group_with_offsets(ctx)
    for epoch in (5, -1):
        response = ctx.cg_heartbeat(GROUP, "m1", epoch).value
        assert response.error_code == ErrorCode.GROUP_ID_NOT_FOUND
        assert response.error_message == f"Group {GROUP} is not a consumer group."
    assert ctx.group(GROUP).state is GroupState.EMPTY


@pytest.mark.parametrize("policy", POLICIES)
def test_m41_classic_join_replaces_an_empty_consumer_group_under_every_policy(policy: str) -> None:
    """M41 (Kafka's testDowngradeFromEmptyConsumerToClassicGroupWith*Policy, and Kafka 4.4.0 over the wire): a
    classic JoinGroup on an EMPTY consumer group deletes it and joins a new classic group as for an unknown group
    (MEMBER_ID_REQUIRED, then generation 1); the committed offsets are kept."""
    ctx = _context(policy)
    _empty_consumer_group_with_offsets(ctx)
    offsets = ctx.cg(GROUP).offsets

    joined = ctx.join_dynamic(group_id=GROUP, topics=("foo",)).value

    assert joined.error_code == ErrorCode.NONE and joined.generation_id == 1
    assert ctx.coordinator.consumer_group(GROUP) is None
    classic = ctx.group(GROUP)
    assert classic.offsets is offsets and offsets.get("foo", 0).offset == 7  # type: ignore[union-attr]
    assert classic.state is GroupState.COMPLETING_REBALANCE


def test_m41_consumer_group_tombstones_are_written_before_the_classic_group() -> None:
    """M41: the empty consumer group's tombstones (target assignment metadata ... group metadata) reach the log
    before anything of the new classic group."""
    ctx = _context()
    _empty_consumer_group_with_offsets(ctx)
    before = len(_log(ctx))

    ctx.join_dynamic(group_id=GROUP, topics=("foo",))
    ctx.sync(group_id=GROUP, member_id=ctx.group(GROUP).leader_id or "", generation_id=1)

    written = _log(ctx)[before:]
    keys = [type(r.key) for r in written]
    assert keys.index(ConsumerGroupTargetAssignmentMetadataKey) < keys.index(ConsumerGroupMetadataKey)
    assert keys.index(ConsumerGroupMetadataKey) < keys.index(GroupMetadataKey)
    assert all(r.is_tombstone for r in written[: keys.index(ConsumerGroupMetadataKey) + 1])


def test_m41_join_with_a_member_id_into_an_empty_consumer_group_is_unknown_member() -> None:
    """M41: a JoinGroup with a non-empty member id cannot create a group: UNKNOWN_MEMBER_ID, and (as in Kafka,
    whose records are discarded with the failed request) the empty consumer group stays."""
    ctx = _context()
    _empty_consumer_group_with_offsets(ctx)
    appends = ctx.store.appends

    reply = ctx.join(group_id=GROUP, member_id="someone", topics=("foo",))

    assert reply.value.error_code == ErrorCode.UNKNOWN_MEMBER_ID
    assert ctx.store.appends == appends
    assert ctx.coordinator.group(GROUP) is None
    assert ctx.cg(GROUP).offsets.get("foo", 0).offset == 7  # type: ignore[union-attr]


def test_m41_failed_tombstones_put_the_consumer_group_back() -> None:
    """M41: if the consumer group's tombstones cannot be written, the consumer group (and offsets) is restored
    as long as the new classic group has no member yet."""
    ctx = _context()
    _empty_consumer_group_with_offsets(ctx)
    consumer = ctx.cg(GROUP)
    ctx.store.fail_next(ErrorCode.KAFKA_STORAGE_ERROR)

    reply = ctx.join(group_id=GROUP, topics=("foo",))

    assert reply.value.error_code == ErrorCode.MEMBER_ID_REQUIRED
    assert ctx.coordinator.consumer_group(GROUP) is consumer
    assert ctx.coordinator.group(GROUP) is None
    assert consumer.offsets.get("foo", 0).offset == 7  # type: ignore[union-attr]
