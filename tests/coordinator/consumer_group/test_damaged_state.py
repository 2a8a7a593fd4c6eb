"""State no handler could serve, whether it comes from a damaged log or a classic group converted online, is
refused where it enters, never left to raise later inside a heartbeat or a timer.

- A member record with classic metadata but no protocol is skipped on load and reported (`partition.record_
  skipped`), as the loader skips every damaged record; the rest of the group loads.
- Two members holding the same partition break reconciliation's one-owner rule: Kafka's replay throws
  IllegalStateException (`addPartitionEpochs`), so the load fails and the partition is FAILED with the reason,
  and the online upgrade of a classic group whose members' assignments overlap is refused the same way
  (UNKNOWN_SERVER_ERROR, the classic group untouched).
- Classic members that share no protocol (only a damaged log can hold them: joins check it) keep the group a
  consumer group instead of downgrading it to a classic group that could select no protocol."""

from __future__ import annotations

from dataclasses import replace

from coordinator.consumer_group.member import ClassicProtocols, ConsumerGroupMember
from coordinator.consumer_group.member_state import MemberAssignmentState, MemberState
from coordinator.consumer_group.records import (
    current_assignment_record,
    group_epoch_record,
    member_metadata_record,
    target_epoch_record,
)
from coordinator.persistence import InMemoryRecordStore
from coordinator.records import CoordinatorRecord
from coordinator.state import GroupState
from protocol.errors import ErrorCode
from tests.coordinator.consumer_group.harness import ConsumerGroupTestContext, topic_id
from tests.coordinator.consumer_group.migration_helpers import GROUP, mixed_group, stable_classic_group

FOO = topic_id("foo")


def _member(member_id: str, partitions: set[int], classic: ClassicProtocols | None = None) -> ConsumerGroupMember:
    return ConsumerGroupMember(
        member_id=member_id,
        subscribed_topic_names=("foo",),
        rebalance_timeout_ms=30_000,
        assignment=MemberAssignmentState(
            member_epoch=2,
            previous_member_epoch=1,
            state=MemberState.STABLE,
            assigned_partitions=frozenset((FOO, p) for p in partitions),
        ),
        classic=classic,
    )


def _loaded(members: list[ConsumerGroupMember]) -> ConsumerGroupTestContext:
    """A coordinator loading a log that holds `members` in group GROUP at epoch 2."""
    ctx = ConsumerGroupTestContext({"foo": 3})
    records: list[CoordinatorRecord] = [group_epoch_record(GROUP, 2), target_epoch_record(GROUP, 2)]
    for member in members:
        records.append(member_metadata_record(GROUP, member))
        records.append(current_assignment_record(GROUP, member.member_id, member.assignment))
    partition = ctx.coordinator.partition_for(GROUP)
    store = InMemoryRecordStore()
    store.append(partition, records, lambda _error: None)
    loaded = ConsumerGroupTestContext({"foo": 3}, store=store, partitions=[])
    loaded.coordinator.load_partition(partition, store.records(partition), loaded.now_ms, loaded.wall_ms)
    return loaded


def test_a_member_with_classic_metadata_but_no_protocol_is_skipped_and_reported_on_load() -> None:
    broken = _member("broken", {1}, ClassicProtocols(10_000, ()))
    ctx = _loaded([_member("m1", {0}), broken])
    group = ctx.cg(GROUP)
    assert list(group.members) == ["m1"]
    [skipped] = ctx.events.of("partition.record_skipped")
    assert skipped["reason"] == "consumer group member with classic metadata but no protocol"
    assert ctx.coordinator.load_failures() == {}
    assert ctx.cg_heartbeat(GROUP, "m1", 2).value.error_code == ErrorCode.NONE


def test_two_members_holding_one_partition_fail_the_load_with_the_reason() -> None:
    ctx = _loaded([_member("m1", {0, 1}), _member("m2", {1, 2})])
    partition = ctx.coordinator.partition_for(GROUP)
    assert ctx.coordinator.consumer_group(GROUP) is None
    reason = ctx.coordinator.load_failures()[partition]
    assert "held by both m1 and m2" in reason
    answer = ctx.cg_heartbeat(GROUP, "m1", 2).value
    assert answer.error_code == ErrorCode.NOT_COORDINATOR


def test_an_upgrade_of_a_classic_group_whose_assignments_overlap_is_refused() -> None:
    ctx = ConsumerGroupTestContext({"foo": 3}, consumer_group_migration_policy="bidirectional")
    stable_classic_group(ctx, [{"foo": [0, 1]}, {"foo": [1, 2]}])
    answer = ctx.cg_heartbeat(
        GROUP, "new", 0, rebalance_timeout_ms=30_000, subscribed_topic_names=["foo"], topic_partitions=[]
    ).value
    assert answer.error_code == ErrorCode.UNKNOWN_SERVER_ERROR
    assert answer.error_message is not None and "is assigned to both" in answer.error_message
    assert ctx.state(GROUP) is GroupState.STABLE and ctx.coordinator.consumer_group(GROUP) is None


def test_classic_members_sharing_no_protocol_keep_the_group_a_consumer_group_when_the_last_consumer_leaves() -> None:
    ctx, setup = mixed_group()
    group = ctx.cg(GROUP)
    first, second = (group.members[m] for m in setup.member_ids)
    assert first.classic is not None and second.classic is not None
    # what only a damaged log could hold: the two classic members have no protocol in common
    group.put_member(replace(second, classic=ClassicProtocols(second.classic.session_timeout_ms, (("other", b""),))))
    left = ctx.cg_heartbeat(GROUP, "new", -1).value
    assert left.error_code == ErrorCode.NONE
    assert ctx.coordinator.consumer_group(GROUP) is not None and ctx.coordinator.group(GROUP) is None
    assert ctx.events.of("group.conversion_skipped")[-1]["reason"] == "its classic members share no protocol"
