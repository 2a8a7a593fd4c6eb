"""Online upgrade of a non-empty classic group to a consumer group (KIP-848; migration rules M1-M11): the first
consumer-protocol member's joining heartbeat converts the group when `group.consumer.migration.policy` allows it,
carrying the classic generation, members and assignments over; otherwise GROUP_ID_NOT_FOUND with Kafka's exact
message (verified against Kafka 4.4.0 for the disabled policy)."""

from __future__ import annotations

import pytest

from coordinator.consumer_group.keys import session_key
from coordinator.consumer_group.member_state import MemberState
from coordinator.state import GroupState
from protocol.errors import ErrorCode
from protocol.messages.consumer_group_current_member_assignment_key import ConsumerGroupCurrentMemberAssignmentKey
from protocol.messages.consumer_group_member_metadata_key import ConsumerGroupMemberMetadataKey
from protocol.messages.consumer_group_metadata_key import ConsumerGroupMetadataKey
from protocol.messages.consumer_group_target_assignment_member_key import ConsumerGroupTargetAssignmentMemberKey
from protocol.messages.consumer_group_target_assignment_metadata_key import (
    ConsumerGroupTargetAssignmentMetadataKey,
)
from protocol.messages.group_metadata_key import GroupMetadataKey
from tests.coordinator.consumer_group.harness import ConsumerGroupTestContext, topic_id
from tests.coordinator.consumer_group.migration_helpers import (
    GROUP,
    classic_assignment,
    classic_subscription,
    log_of,
    stable_classic_group,
)

ONE_EACH = ({"foo": [0, 1]}, {"foo": [2]})


def _context(**config: object) -> ConsumerGroupTestContext:
    config.setdefault("consumer_group_migration_policy", "bidirectional")
    return ConsumerGroupTestContext({"foo": 3}, **config)


def _heartbeat(ctx: ConsumerGroupTestContext, member_id: str = "new") -> tuple[int, str | None, int]:
    response = ctx.cg_heartbeat(
        GROUP, member_id, 0, rebalance_timeout_ms=30_000, subscribed_topic_names=["foo"], topic_partitions=[]
    ).value
    return response.error_code, response.error_message, response.member_epoch


def _assert_upgrade_refused(ctx: ConsumerGroupTestContext, because: str) -> None:
    """M3: GROUP_ID_NOT_FOUND with Kafka's message; the group stays classic (and Stable), no consumer group."""
    code, message, _ = _heartbeat(ctx)
    assert code == ErrorCode.GROUP_ID_NOT_FOUND
    assert message == f"Cannot upgrade classic group {GROUP} to consumer group because {because}"
    assert ctx.state(GROUP) is GroupState.STABLE and ctx.coordinator.consumer_group(GROUP) is None


@pytest.mark.parametrize("policy", ["disabled", "downgrade"])
def test_m3_m37_upgrade_refused_when_the_policy_does_not_allow_it(policy: str) -> None:
    """M3(1)/M37 (Kafka 4.4.0 over the wire: same code and message): the group stays classic and Stable."""
    ctx = _context(consumer_group_migration_policy=policy)
    stable_classic_group(ctx, ONE_EACH)
    _assert_upgrade_refused(ctx, "online upgrade is disabled.")


def test_m3_upgrade_refused_for_a_group_not_using_the_consumer_protocol() -> None:
    """M3(2): protocol type other than "consumer"."""
    ctx = _context()
    stable_classic_group(ctx, ONE_EACH, protocol_type="connect")
    _assert_upgrade_refused(ctx, "the group does not use the consumer embedded protocol.")


def test_m3_upgrade_refused_when_the_classic_group_exceeds_the_consumer_max_size() -> None:
    """M3(3)."""
    ctx = _context(consumer_group_max_size=1)
    stable_classic_group(ctx, ONE_EACH)
    _assert_upgrade_refused(ctx, "the group size exceeds the consumer group maximum size.")


def test_m4_group_exactly_at_the_consumer_max_size_passes_m3_but_the_new_member_is_refused() -> None:
    """M4: GROUP_MAX_SIZE_REACHED for the joining member; the conversion is discarded, the group stays classic."""
    ctx = _context(consumer_group_max_size=2)
    stable_classic_group(ctx, ONE_EACH)
    appends = ctx.store.appends
    code, message, _ = _heartbeat(ctx)
    assert code == ErrorCode.GROUP_MAX_SIZE_REACHED
    assert message == "The consumer group has reached its maximum capacity of 2 members."
    assert ctx.store.appends == appends
    assert ctx.state(GROUP) is GroupState.STABLE and ctx.coordinator.consumer_group(GROUP) is None


def test_m7_malformed_assignment_refuses_the_upgrade() -> None:
    """M7: assignment bytes that are not a ConsumerProtocol assignment."""
    ctx = _context()
    stable_classic_group(ctx, ONE_EACH, raw_assignments=[b"\x00", classic_assignment({"foo": [2]})])
    _assert_upgrade_refused(ctx, "the embedded consumer protocol is malformed.")


def test_m7_assignment_user_data_means_a_custom_assignor_and_refuses_the_upgrade() -> None:
    """M7 (Kafka's testOnlineMigrationWithNonEmptyUserDataInAssignment): exact message; group stays classic."""
    ctx = _context()
    stable_classic_group(
        ctx,
        ONE_EACH,
        raw_assignments=[classic_assignment({"foo": [0, 1]}, user_data=b"x"), classic_assignment({"foo": [2]})],
    )
    _assert_upgrade_refused(
        ctx,
        "an unsupported custom assignor is in use. Please refer to the documentation or switch to a default"
        " assignor before re-attempting the upgrade.",
    )


def test_m8_m10_converted_group_keeps_generation_members_and_assignments() -> None:
    """M8/M10: group epoch = assignment epoch = member epochs = generation; members STABLE with their classic
    partitions and classic metadata; the joiner bumps the epoch to generation + 1 and gets only free partitions
    (none here: every partition is still held by a classic member)."""
    ctx = _context()
    setup = stable_classic_group(ctx, ONE_EACH, session_timeout_ms=12_000)
    generation = setup.generation_id
    offsets = ctx.group(GROUP).offsets

    code, _, epoch = _heartbeat(ctx)

    assert code == ErrorCode.NONE and epoch == generation + 1
    assert ctx.coordinator.group(GROUP) is None
    group = ctx.cg(GROUP)
    assert group.offsets is offsets
    assert group.group_epoch == generation + 1 and group.assignment_epoch == generation + 1
    foo = topic_id("foo")
    for member_id, partitions in zip(setup.member_ids, ONE_EACH, strict=True):
        member = group.member(member_id)
        assert member is not None and member.uses_classic_protocol
        assert member.classic is not None and member.classic.session_timeout_ms == 12_000
        assert member.member_epoch == generation and member.state is MemberState.STABLE
        assert member.assignment.assigned_partitions == {(foo, p) for p in partitions["foo"]}
        assert member.subscribed_topic_names == ("foo",)
    joiner = group.member("new")
    assert joiner is not None and not joiner.uses_classic_protocol
    assert joiner.assignment.assigned_partitions == frozenset()


def test_m6_m9_records_classic_tombstone_then_the_converted_group_then_the_heartbeat() -> None:
    """M6/M9: one append: GroupMetadata tombstone; MemberMetadata per member, ConsumerGroupMetadata(generation),
    TargetAssignmentMember per member, TargetAssignmentMetadata(generation), CurrentMemberAssignment per member;
    then the joining member's own records."""
    ctx = _context()
    stable_classic_group(ctx, ONE_EACH)
    before, appends = len(log_of(ctx)), ctx.store.appends

    _heartbeat(ctx)

    assert ctx.store.appends == appends + 1
    kinds = [type(r.key) for r in log_of(ctx)[before:]]
    assert kinds[:10] == [
        GroupMetadataKey,
        ConsumerGroupMemberMetadataKey,
        ConsumerGroupMemberMetadataKey,
        ConsumerGroupMetadataKey,
        ConsumerGroupTargetAssignmentMemberKey,
        ConsumerGroupTargetAssignmentMemberKey,
        ConsumerGroupTargetAssignmentMetadataKey,
        ConsumerGroupCurrentMemberAssignmentKey,
        ConsumerGroupCurrentMemberAssignmentKey,
        ConsumerGroupMemberMetadataKey,
    ]


def test_m9b_converted_members_keep_their_classic_session_timeout() -> None:
    """M9b: each converted member's session timer is its classic session timeout; when it fires the member is
    fenced from the consumer group."""
    ctx = _context()
    setup = stable_classic_group(ctx, ONE_EACH, session_timeout_ms=12_000)
    _heartbeat(ctx)
    for member_id in setup.member_ids:
        assert ctx.coordinator.timer.deadline(session_key(GROUP, member_id)) == ctx.now_ms + 12_000
    ctx.sleep(12_000)
    assert all(ctx.cg(GROUP).member(m) is None for m in setup.member_ids)


def test_m5_parked_join_of_a_rebalancing_classic_group_is_answered_rebalance_in_progress() -> None:
    """M5: no state check on the classic group; a JoinGroup parked in PreparingRebalance is answered
    REBALANCE_IN_PROGRESS by the conversion, so the member rejoins into the consumer group."""
    ctx = _context()
    setup = stable_classic_group(ctx, ONE_EACH)
    parked = ctx.join(
        group_id=GROUP,
        member_id=setup.member_ids[0],
        protocols=[("range", classic_subscription(owned={"foo": [0, 1]}))],
    )
    assert ctx.state(GROUP) is GroupState.PREPARING_REBALANCE and not parked.done

    code, _, _ = _heartbeat(ctx)

    assert code == ErrorCode.NONE
    assert parked.done and parked.value.error_code == ErrorCode.REBALANCE_IN_PROGRESS


def test_m6_failed_write_puts_the_classic_group_back() -> None:
    """M6: the conversion is part of the heartbeat's write; if the write fails, the classic group is served again
    (Stable, same generation) and its members' heartbeats succeed."""
    ctx = _context()
    setup = stable_classic_group(ctx, ONE_EACH)
    ctx.store.fail_next(ErrorCode.KAFKA_STORAGE_ERROR)

    code, _, _ = _heartbeat(ctx)

    assert code != ErrorCode.NONE
    assert ctx.coordinator.consumer_group(GROUP) is None
    assert ctx.state(GROUP) is GroupState.STABLE
    for member_id in setup.member_ids:
        assert ctx.heartbeat(GROUP, member_id, setup.generation_id) == ErrorCode.NONE
