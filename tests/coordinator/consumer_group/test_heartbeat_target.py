"""Group epoch, target assignment and reconciliation (rules K17-K29, K53, K54 of /work/notes/kip848-rules.md):
which heartbeat bumps the epoch, what the target becomes, how a member walks to it one heartbeat at a time
(revoke before assign, never a partition someone else holds) and the exact records each step writes.

Epochs are Kafka 4.4's (KAFKA-20268): a new group starts at epoch 1, written nowhere, and its first join writes
epoch 2, so a lone first member answers epoch 2."""

from __future__ import annotations

from dataclasses import replace

import pytest

from coordinator.consumer_group.member_state import MemberState
from coordinator.persistence import InMemoryRecordStore
from protocol.errors import ErrorCode
from tests.coordinator.consumer_group.harness import ConsumerGroupTestContext, by_name
from tests.coordinator.consumer_group.written import (
    Written,
    current_assignment,
    kind,
    left,
    new_target,
    subscribed,
    target_partitions,
)

STABLE, UNREVOKED, UNRELEASED = 0, 1, 2


def two_members_on_six() -> tuple[ConsumerGroupTestContext, Written]:
    """m1 owns foo 0-5 at epoch 2 (Kafka 4.4: a new group starts at 1, the first join writes 2); m2 joins: epoch
    3, target m1 = 0-2, m2 = 3-5, m2 waits (UNRELEASED)."""
    ctx = ConsumerGroupTestContext(topics={"foo": 6})
    ctx.join_cg(member_id="m1")
    written = Written(ctx)
    response = ctx.join_cg(member_id="m2")
    assert (response.member_epoch, by_name(response, "foo")) == (3, {})
    return ctx, written


def test_k54_first_join_records() -> None:
    """K54/K53 (Kafka 4.4, KAFKA-20268): a new group starts at epoch 1 (written nowhere); its first member writes
    MemberMetadata, (4.0's) PartitionMetadata, GroupMetadata epoch 2, its TargetAssignmentMember,
    TargetAssignmentMetadata 2 and CurrentMemberAssignment(2, previous 0, STABLE). Nothing is written for epoch 1."""
    ctx = ConsumerGroupTestContext(topics={"foo": 3})
    written = Written(ctx)
    response = ctx.join_cg(member_id="m1", rebalance_timeout_ms=5000)
    assert (response.member_id, response.member_epoch, by_name(response, "foo")) == ("m1", 2, {"foo": [0, 1, 2]})
    records = written.new()
    assert [kind(r) for r in records] == subscribed("m1")
    member = records[0].value
    assert (member.client_id, member.client_host, member.subscribed_topic_names, member.rebalance_timeout_ms) == (  # type: ignore[union-attr]
        "consumer",
        "/127.0.0.1",
        ["foo"],
        5000,
    )
    assert records[2].value.epoch == 2  # type: ignore[union-attr]
    assert target_partitions(records[3]) == {"foo": [0, 1, 2]}
    assert records[4].value.assignment_epoch == 2  # type: ignore[union-attr]
    assert current_assignment(records[5]) == (2, 0, STABLE, {"foo": [0, 1, 2]}, {})


def test_k53_second_member_join_records_only_changed_targets() -> None:
    """K53/K18/K21: a second member bumps the epoch; both targets change so both get a TargetAssignmentMember
    record, then TargetAssignmentMetadata, then the joiner's CurrentMemberAssignment. The topic metadata did not
    change, so no PartitionMetadata record."""
    _, written = two_members_on_six()
    records = written.new()
    assert [kind(r) for r in records] == [
        "MemberMetadata(m2)",
        "Metadata",
        "TargetAssignmentMember(m1)",
        "TargetAssignmentMember(m2)",
        "TargetAssignmentMetadata",
        "CurrentMemberAssignment(m2)",
    ]
    assert records[1].value.epoch == 3  # type: ignore[union-attr]
    assert target_partitions(records[2]) == {"foo": [0, 1, 2]}
    assert target_partitions(records[3]) == {"foo": [3, 4, 5]}
    assert current_assignment(records[5]) == (3, 0, UNRELEASED, {}, {})


def test_k25_k26_revoke_before_assign() -> None:
    """K25/K26: the previous owner must confirm revoking before the new owner gets a partition. m1 stays at
    epoch 2 (UNREVOKED) and its answer drops 3-5; m2 gets nothing while m1 still lists them; once m1's heartbeat
    stops listing them m1 moves to epoch 3 and m2 gets 3-5 on its next heartbeat."""
    ctx, written = two_members_on_six()
    written.new()
    m1 = ctx.cg_heartbeat(member_id="m1", member_epoch=2, owned={"foo": range(6)}).value
    assert (m1.member_epoch, by_name(m1, "foo")) == (2, {"foo": [0, 1, 2]})
    (record,) = written.new()
    assert current_assignment(record) == (2, 2, UNREVOKED, {"foo": [0, 1, 2]}, {"foo": [3, 4, 5]})

    m2 = ctx.cg_heartbeat(member_id="m2", member_epoch=3, owned={}).value
    assert (m2.member_epoch, m2.assignment) == (3, None)
    (record,) = written.new()  # Kafka's updateMemberEpoch: the previous epoch catches up (0 -> 3)
    assert current_assignment(record) == (3, 3, UNRELEASED, {}, {})
    ctx.cg_heartbeat(member_id="m2", member_epoch=3, owned={})
    assert written.new() == []

    still = ctx.cg_heartbeat(member_id="m1", member_epoch=2, owned={"foo": [0, 1, 2, 3]}).value
    assert (still.member_epoch, still.assignment) == (2, None)
    assert written.new() == []

    done = ctx.cg_heartbeat(member_id="m1", member_epoch=2, owned={"foo": [0, 1, 2]}).value
    assert (done.member_epoch, done.assignment) == (3, None)
    (record,) = written.new()
    assert current_assignment(record) == (3, 2, STABLE, {"foo": [0, 1, 2]}, {})
    assert ctx.cg().state.value == "Reconciling"

    m2 = ctx.cg_heartbeat(member_id="m2", member_epoch=3, owned={}).value
    assert (m2.member_epoch, by_name(m2, "foo")) == (3, {"foo": [3, 4, 5]})
    (record,) = written.new()
    assert current_assignment(record) == (3, 3, STABLE, {"foo": [3, 4, 5]}, {})
    assert ctx.cg().state.value == "Stable"


def test_k26_null_owned_partitions_count_as_still_owned() -> None:
    """K26(a): a heartbeat without TopicPartitions is assumed to still own what it must revoke."""
    ctx, written = two_members_on_six()
    ctx.cg_heartbeat(member_id="m1", member_epoch=2, owned={"foo": range(6)})
    written.new()
    response = ctx.cg_heartbeat(member_id="m1", member_epoch=2).value
    assert (response.member_epoch, response.assignment) == (2, None)
    assert written.new() == []
    assert ctx.cg().members["m1"].state.name == "UNREVOKED_PARTITIONS"


def test_k27_unknown_state_member_is_fenced_with_kafkas_message() -> None:
    """K27: a member loaded with a state byte this coordinator does not know (set here as the loader maps it:
    loading consumer groups is not wired yet) is fenced (FENCED_MEMBER_EPOCH,
    Kafka's message) while it reports partitions (or none at all), and reconciled from scratch at the target epoch
    once it reports owning nothing."""
    reloaded = ConsumerGroupTestContext(topics={"foo": 2})
    reloaded.join_cg(member_id="m1")
    group = reloaded.cg()
    member = group.members["m1"]
    # What the loader makes of a CurrentMemberAssignment whose state byte is unknown (K57).
    group.put_member(member.with_assignment(replace(member.assignment, state=MemberState.from_value(9))))
    assert reloaded.cg().members["m1"].state is MemberState.UNKNOWN
    message = "The consumer group member is in a unknown state. The member must abandon all its partitions and rejoin."
    for owned in ({"foo": [0, 1]}, None):
        response = reloaded.cg_heartbeat(member_id="m1", member_epoch=2, owned=owned).value
        assert (response.error_code, response.error_message) == (ErrorCode.FENCED_MEMBER_EPOCH, message)
    written = Written(reloaded)
    response = reloaded.cg_heartbeat(member_id="m1", member_epoch=2, owned={}).value
    # Assigned partitions are unchanged (Kafka's computeNextAssignment keeps them), so no Assignment field (K29).
    assert (response.error_code, response.member_epoch, response.assignment) == (0, 2, None)
    (record,) = written.new()
    assert current_assignment(record) == (2, 2, STABLE, {"foo": [0, 1]}, {})


def test_k17_k18_changed_metadata_without_subscription_change_does_not_bump() -> None:
    """K17/K18: a new RackId, ClientId or RebalanceTimeout writes only a MemberMetadata record; the group epoch
    stays."""
    ctx = ConsumerGroupTestContext(topics={"foo": 2})
    ctx.join_cg(member_id="m1")
    written = Written(ctx)
    response = ctx.cg_heartbeat(
        member_id="m1", member_epoch=2, rack_id="rack-a", rebalance_timeout_ms=9000, client_id="other-client"
    ).value
    assert (response.error_code, response.member_epoch) == (0, 2)
    records = written.new()
    assert [kind(r) for r in records] == ["MemberMetadata(m1)"]
    value = records[0].value
    assert (value.rack_id, value.rebalance_timeout_ms, value.client_id) == ("rack-a", 9000, "other-client")  # type: ignore[union-attr]
    assert ctx.cg().group_epoch == 2


def test_k18_server_assignor_change_alone_does_not_bump() -> None:
    """K18: switching ServerAssignor writes the member record but does not bump the group epoch."""
    ctx = ConsumerGroupTestContext(topics={"foo": 2})
    ctx.join_cg(member_id="m1")
    written = Written(ctx)
    response = ctx.cg_heartbeat(member_id="m1", member_epoch=2, server_assignor="range").value
    assert (response.error_code, response.member_epoch) == (0, 2)
    assert written.kinds() == ["MemberMetadata(m1)"]
    assert ctx.cg().group_epoch == 2


def test_k18_unchanged_heartbeat_writes_nothing() -> None:
    """K17/K24: a heartbeat that changes nothing writes no record and keeps every epoch."""
    ctx = ConsumerGroupTestContext(topics={"foo": 2})
    ctx.join_cg(member_id="m1")
    written = Written(ctx)
    response = ctx.cg_heartbeat(member_id="m1", member_epoch=2, owned={"foo": [0, 1]}).value
    assert (response.error_code, response.member_epoch, response.assignment) == (0, 2, None)
    assert written.new() == []


def test_k18_subscription_change_bumps_and_revokes_unsubscribed_topics() -> None:
    """K18/K25: a new topic list bumps the group epoch; partitions of a dropped topic must be revoked first."""
    ctx = ConsumerGroupTestContext(topics={"foo": 1, "bar": 1})
    ctx.join_cg(member_id="m1", topics=["foo", "bar"])
    written = Written(ctx)
    response = ctx.cg_heartbeat(
        member_id="m1", member_epoch=2, subscribed_topic_names=["foo"], owned={"foo": [0], "bar": [0]}
    ).value
    assert (response.member_epoch, by_name(response, "foo", "bar")) == (2, {"foo": [0]})
    records = written.new()
    assert [kind(r) for r in records] == subscribed("m1")
    assert records[2].value.epoch == 3  # type: ignore[union-attr]
    assert current_assignment(records[-1]) == (2, 2, UNREVOKED, {"foo": [0]}, {"bar": [0]})
    done = ctx.cg_heartbeat(member_id="m1", member_epoch=2, owned={"foo": [0]}).value
    assert (done.member_epoch, done.assignment) == (3, None)


def test_k18_partitions_added_bump_at_next_heartbeat() -> None:
    """K18/K60: more partitions on a subscribed topic bump the group epoch at the next heartbeat, which brings
    them."""
    ctx = ConsumerGroupTestContext(topics={"foo": 1})
    ctx.join_cg(member_id="m1")
    ctx.create_topic("foo", 3)
    written = Written(ctx)
    response = ctx.cg_heartbeat(member_id="m1", member_epoch=2, owned={"foo": [0]}).value
    assert (response.member_epoch, by_name(response, "foo")) == (3, {"foo": [0, 1, 2]})
    assert written.kinds() == ["PartitionMetadata", "Metadata", *new_target("m1")]


def _stable_pair_on_two() -> ConsumerGroupTestContext:
    """m1 and m2 on foo(2), reconciled: m1 owns 0, m2 owns 1, group Stable at epoch 3."""
    ctx = ConsumerGroupTestContext(topics={"foo": 2})
    ctx.join_cg(member_id="m1")
    ctx.join_cg(member_id="m2")
    ctx.cg_heartbeat(member_id="m1", member_epoch=2, owned={"foo": [0, 1]})
    ctx.cg_heartbeat(member_id="m1", member_epoch=2, owned={"foo": [0]})
    ctx.cg_heartbeat(member_id="m2", member_epoch=3, owned={})
    assert ctx.cg().state.value == "Stable"
    return ctx


def test_k21_after_a_leave_the_next_heartbeat_computes_the_new_target() -> None:
    """K21/K39 (Kafka 4.4's consumerGroupFenceMembers): a leave only bumps the group epoch, so the group is
    Assigning; the survivor's next heartbeat computes the new target and reconciles to it in the same write."""
    ctx = _stable_pair_on_two()
    ctx.cg_heartbeat(member_id="m2", member_epoch=-1)
    assert (ctx.cg().state.value, ctx.cg().group_epoch, ctx.cg().assignment_epoch) == ("Assigning", 4, 3)
    written = Written(ctx)
    response = ctx.cg_heartbeat(member_id="m1", member_epoch=3, owned={"foo": [0]}).value
    assert (response.member_epoch, by_name(response, "foo")) == (4, {"foo": [0, 1]})
    assert written.kinds() == [
        "TargetAssignmentMember(m1)",
        "TargetAssignmentMetadata",
        "CurrentMemberAssignment(m1)",
    ]
    assert ctx.cg().state.value == "Stable"


def test_k21_a_loaded_group_behind_its_epoch_is_assigning() -> None:
    """K21/K39/K56: a group whose log ends with a group epoch ahead of its target epoch (a leave written without
    its target, as a leave is written) loads as Assigning, and the next heartbeat of any member computes the
    target."""
    before = _stable_pair_on_two()
    partition = before.coordinator.partition_for("group")
    mark = len(before.store.records(partition))
    before.cg_heartbeat(member_id="m2", member_epoch=-1)
    leave = before.store.records(partition)[mark:]
    assert [kind(r) for r in leave] == left("m2")
    old_log = InMemoryRecordStore()
    old_log.append(partition, before.store.records(partition)[: mark + 4], lambda _error: None)
    ctx = ConsumerGroupTestContext(topics={"foo": 2}, store=old_log, start_ms=before.now_ms)
    assert (ctx.cg().state.value, ctx.cg().group_epoch, ctx.cg().assignment_epoch) == ("Assigning", 4, 3)
    written = Written(ctx)
    response = ctx.cg_heartbeat(member_id="m1", member_epoch=3, owned={"foo": [0]}).value
    assert (response.member_epoch, by_name(response, "foo")) == (4, {"foo": [0, 1]})
    assert written.kinds() == new_target("m1")
    assert ctx.cg().state.value == "Stable"


@pytest.mark.parametrize(
    ("assignors", "expected"),
    [((None, None), "uniform"), (("range", None), "range"), (("range", "uniform"), "uniform")],
)
def test_k22_the_most_requested_assignor_wins(assignors: tuple[str | None, str | None], expected: str) -> None:
    """K22: the assignor most members name wins, else the first of group.consumer.assignors (uniform).
    group-broker breaks a tie by the configured order (Kafka's choice is HashMap order)."""
    ctx = ConsumerGroupTestContext(topics={"foo": 2})
    for member_id, assignor in zip(("m1", "m2"), assignors, strict=True):
        ctx.join_cg(member_id=member_id, server_assignor=assignor)
    (described,) = ctx.cg_describe("group")
    assert described.assignor_name == expected


def test_k22_range_assignor_is_used_when_requested() -> None:
    """K22: with range chosen, two members on foo(3) get Kafka's range split (0-1 and 2)."""
    ctx = ConsumerGroupTestContext(topics={"foo": 3})
    ctx.join_cg(member_id="m1", server_assignor="range")
    ctx.join_cg(member_id="m2", server_assignor="range")
    target = ctx.cg().target
    assert {m: {t: sorted(p) for t, p in a.items()} for m, a in target.items()} == {
        "m1": {ctx.topics.by_name("foo").topic_id: [0, 1]},  # type: ignore[union-attr]
        "m2": {ctx.topics.by_name("foo").topic_id: [2]},  # type: ignore[union-attr]
    }


def test_k28_heartbeat_interval_comes_from_the_config() -> None:
    """K28: HeartbeatIntervalMs is group.consumer.heartbeat.interval.ms on every answer, reconciling or not."""
    ctx = ConsumerGroupTestContext(
        topics={"foo": 2}, consumer_group_heartbeat_interval_ms=6000, consumer_group_min_heartbeat_interval_ms=5000
    )
    assert ctx.join_cg(member_id="m1").heartbeat_interval_ms == 6000
    assert ctx.join_cg(member_id="m2").heartbeat_interval_ms == 6000
    response = ctx.cg_heartbeat(member_id="m1", member_epoch=2, owned={"foo": [0, 1]}).value
    assert (response.heartbeat_interval_ms, response.error_message) == (6000, None)


def test_k29_assignment_field_only_when_needed() -> None:
    """K29: the Assignment field is set on a join, on a full request and when the assigned partitions change;
    otherwise null. A revocation is signalled by an assignment without the partitions to revoke."""
    ctx, _ = two_members_on_six()
    plain = ctx.cg_heartbeat(member_id="m2", member_epoch=3, owned={}).value
    assert plain.assignment is None
    full = ctx.cg_heartbeat(
        member_id="m2", member_epoch=3, rebalance_timeout_ms=30_000, subscribed_topic_names=["foo"], owned={}
    ).value
    assert by_name(full, "foo") == {}
    revoking = ctx.cg_heartbeat(member_id="m1", member_epoch=2, owned={"foo": range(6)}).value
    assert by_name(revoking, "foo") == {"foo": [0, 1, 2]}


def test_k23_heterogeneous_subscriptions_assign_each_topic_to_its_subscribers_only() -> None:
    """K23: members subscribed to different topic sets (heterogeneous) get partitions only of their own topics;
    every partition of a subscribed topic has exactly one owner in the target."""
    ctx = ConsumerGroupTestContext(topics={"foo": 2, "bar": 2})
    ctx.join_cg(member_id="m1", topics=["foo"])
    ctx.join_cg(member_id="m2", topics=["foo", "bar"])
    foo, bar = ctx.topics.by_name("foo"), ctx.topics.by_name("bar")
    assert foo is not None and bar is not None
    target = ctx.cg().target
    assert set(target["m1"]) == {foo.topic_id}
    assert sorted(target["m2"].get(bar.topic_id, ())) == [0, 1]
    owned_foo = sorted([*target["m1"][foo.topic_id], *target["m2"].get(foo.topic_id, ())])
    assert owned_foo == [0, 1]


def test_k53_a_new_member_with_an_empty_target_still_gets_its_target_record() -> None:
    """Kafka's TargetAssignmentBuilder writes a TargetAssignmentMember record for every member that had no target
    before, even when its new share is empty (here: one partition, already m1's)."""
    ctx = ConsumerGroupTestContext({"foo": 1})
    ctx.join_cg(member_id="m1", topics=["foo"])
    written = Written(ctx)
    ctx.join_cg(member_id="m2", topics=["foo"])
    records = written.new()
    assert [kind(r) for r in records] == [
        "MemberMetadata(m2)",
        "Metadata",
        "TargetAssignmentMember(m2)",
        "TargetAssignmentMetadata",
        "CurrentMemberAssignment(m2)",
    ]
    assert target_partitions(records[2]) == {}
