"""Static members of consumer groups (rules K15, K16, K33, K34, K37, K38 of /work/notes/kip848-rules.md):
instance-id ownership errors, the temporary leave with epoch -2 and the replacement that gets the same partitions
back, as Kafka's testStaticMemberGetsBackAssignmentUponRejoin writes them.

Epochs are Kafka 4.4's (KAFKA-20268): a new group starts at epoch 1, written nowhere, and its first join writes
epoch 2, so a lone first member answers epoch 2."""

from __future__ import annotations

import pytest

from coordinator.consumer_group.keys import session_key
from protocol.errors import ErrorCode
from tests.coordinator.consumer_group.harness import ConsumerGroupTestContext, by_name
from tests.coordinator.consumer_group.written import (
    Written,
    current_assignment,
    kind,
    left,
    replaced,
    target_partitions,
)

STABLE = 0


def static_pair() -> ConsumerGroupTestContext:
    """Static members m1 (i1) and m2 (i2) reconciled on foo(4): m1 0-1, m2 2-3, group Stable at epoch 3
    (Kafka 4.4: a new group starts at 1, the first join writes 2)."""
    ctx = ConsumerGroupTestContext(topics={"foo": 4})
    ctx.join_cg(member_id="m1", instance_id="i1")
    ctx.join_cg(member_id="m2", instance_id="i2")
    ctx.cg_heartbeat(member_id="m1", member_epoch=2, instance_id="i1", owned={"foo": range(4)})
    ctx.cg_heartbeat(member_id="m1", member_epoch=2, instance_id="i1", owned={"foo": [0, 1]})
    response = ctx.cg_heartbeat(member_id="m2", member_epoch=3, instance_id="i2", owned={}).value
    assert by_name(response, "foo") == {"foo": [2, 3]}
    assert ctx.cg().state.value == "Stable"
    return ctx


@pytest.mark.parametrize("member_id", ["m1b", "m1"])
def test_k15_instance_id_owned_by_an_active_member(member_id: str) -> None:
    """K15: joining (epoch 0) with an instance id whose owner is not at epoch -2 is UNRELEASED_INSTANCE_ID, for a
    new member id and for the owner's own id alike (Kafka's throwIfInstanceIdIsUnreleased has no exemption)."""
    ctx = static_pair()
    written = Written(ctx)
    response = ctx.cg_heartbeat(
        member_id=member_id,
        instance_id="i1",
        rebalance_timeout_ms=5000,
        subscribed_topic_names=["foo"],
        topic_partitions=[],
    ).value
    assert (response.error_code, response.error_message) == (
        ErrorCode.UNRELEASED_INSTANCE_ID,
        f"Static member {member_id} with instance id i1 cannot join the group because the instance id is owned by"
        " m1 member.",
    )
    assert written.new() == []


def test_k16_unknown_instance_id() -> None:
    """K16: epoch > 0 with an instance id nobody owns is UNKNOWN_MEMBER_ID "Instance id <iid> is unknown."."""
    ctx = static_pair()
    response = ctx.cg_heartbeat(member_id="m1", member_epoch=2, instance_id="i9").value
    assert (response.error_code, response.error_message) == (ErrorCode.UNKNOWN_MEMBER_ID, "Instance id i9 is unknown.")


def test_k16_instance_id_of_another_member_is_fenced() -> None:
    """K16: epoch > 0 with an instance id owned by another member id is FENCED_INSTANCE_ID."""
    ctx = static_pair()
    response = ctx.cg_heartbeat(member_id="m2", member_epoch=3, instance_id="i1").value
    assert (response.error_code, response.error_message) == (
        ErrorCode.FENCED_INSTANCE_ID,
        "Static member m2 with instance id i1 was fenced by member m1.",
    )


def test_k37_static_leave_keeps_the_partitions() -> None:
    """K37: -2 writes one CurrentMemberAssignment with epoch -2 (previous epoch, state and partitions kept); no
    epoch bump, no new target. The answer is the member's id and epoch -2."""
    ctx = static_pair()
    written = Written(ctx)
    response = ctx.cg_heartbeat(member_id="m2", member_epoch=-2, instance_id="i2").value
    assert (response.error_code, response.member_id, response.member_epoch, response.assignment) == (
        0,
        "m2",
        -2,
        None,
    )
    (record,) = written.new()
    assert kind(record) == "CurrentMemberAssignment(m2)"
    assert current_assignment(record) == (-2, 3, STABLE, {"foo": [2, 3]}, {})
    group = ctx.cg()
    assert (group.group_epoch, group.assignment_epoch) == (3, 3)


def test_k38_a_departed_static_member_still_counts_and_holds_its_partitions() -> None:
    """K38/K37: after -2 the group is Reconciling, not Empty; the member's partitions count as held, so a joiner
    whose target takes one of them waits (UNRELEASED_PARTITIONS) and does not get it; a heartbeat of the old id
    at epoch 3 is fenced (3 > -2)."""
    ctx = static_pair()
    ctx.cg_heartbeat(member_id="m2", member_epoch=-2, instance_id="i2")
    assert ctx.cg().state.value == "Reconciling"
    joiner = ctx.join_cg(member_id="m3")
    assert sorted(next(iter(ctx.cg().target["m3"].values()))) == [3]  # taken from m2 by the new target
    assert (joiner.member_epoch, by_name(joiner, "foo")) == (4, {})
    assert ctx.cg().members["m3"].state.name == "UNRELEASED_PARTITIONS"
    again = ctx.cg_heartbeat(member_id="m3", member_epoch=4, owned={}).value
    assert (again.member_epoch, again.assignment) == (4, None)
    response = ctx.cg_heartbeat(member_id="m2", member_epoch=3, instance_id="i2").value
    assert (response.error_code, response.error_message) == (
        ErrorCode.FENCED_MEMBER_EPOCH,
        "The consumer group member has a greater member epoch (3) than the one known by the group coordinator (-2)."
        " The member must abandon all its partitions and rejoin.",
    )


def test_k34_replacement_gets_the_same_partitions_back() -> None:
    """K34/K53: the instance rejoining under a new member id (epoch 0) takes the departed member's place: the old
    member's three records are tombstoned, the copy is written (metadata, target, current at epoch 0), then its
    reconciliation to the target epoch; the answer carries the same partitions at epoch 3 (Kafka 4.4) and no epoch
    bump."""
    ctx = static_pair()
    ctx.cg_heartbeat(member_id="m2", member_epoch=-2, instance_id="i2")
    written = Written(ctx)
    response = ctx.join_cg(member_id="m2b", instance_id="i2")
    assert (response.member_id, response.member_epoch, by_name(response, "foo")) == ("m2b", 3, {"foo": [2, 3]})
    records = written.new()
    assert [kind(r) for r in records] == [*replaced("m2", "m2b"), "CurrentMemberAssignment(m2b)"]
    assert records[3].value.instance_id == "i2"  # type: ignore[union-attr]
    assert target_partitions(records[4]) == {"foo": [2, 3]}
    assert current_assignment(records[5]) == (0, 0, STABLE, {"foo": [2, 3]}, {})
    assert current_assignment(records[6]) == (3, 0, STABLE, {"foo": [2, 3]}, {})
    group = ctx.cg()
    assert (group.group_epoch, list(group.members), group.static_members["i2"]) == (3, ["m1", "m2b"], "m2b")
    assert group.state.value == "Stable"


def test_k34_replacement_with_a_new_subscription_bumps_the_epoch() -> None:
    """K34/K18: a replacement subscribing to more topics is copied first, then its subscription change bumps
    the group epoch and computes a new target (Kafka's testStaticMemberRejoinsWithNewSubscribedTopics)."""
    ctx = static_pair()
    ctx.create_topic("bar", 1)
    ctx.cg_heartbeat(member_id="m2", member_epoch=-2, instance_id="i2")
    written = Written(ctx)
    response = ctx.join_cg(member_id="m2b", instance_id="i2", topics=["foo", "bar"])
    assert (response.member_epoch, by_name(response, "foo", "bar")) == (4, {"foo": [2, 3], "bar": [0]})
    kinds = written.kinds()
    assert kinds[:6] == replaced("m2", "m2b")
    assert kinds[6:9] == ["MemberMetadata(m2b)", "PartitionMetadata", "Metadata"]
    assert kinds[-2:] == ["TargetAssignmentMetadata", "CurrentMemberAssignment(m2b)"]


def test_k33_static_member_that_never_returns_is_fenced_by_its_session() -> None:
    """K33/K38/K36: -2 neither cancels nor re-arms the session timer (the deadline set by the member's last
    heartbeat stands); when it fires the member is removed with the leave records, its partitions are released
    and the group epoch moves; Kafka 4.4 gives them to m1 in the target computed at once."""
    ctx = static_pair()
    ctx.advance(10_000)
    ctx.cg_heartbeat(member_id="m1", member_epoch=3, instance_id="i1")
    ctx.cg_heartbeat(member_id="m2", member_epoch=-2, instance_id="i2")
    assert ctx.coordinator.timer.deadline(session_key("group", "m2")) == 45_000
    ctx.sleep_until(44_999)
    written = Written(ctx)
    ctx.sleep(1)
    assert written.kinds() == left("m2")
    group = ctx.cg()
    assert ("m2" in group.members, "i2" in group.static_members, group.group_epoch) == (False, False, 4)
    response = ctx.cg_heartbeat(member_id="m1", member_epoch=3, instance_id="i1", owned={"foo": [0, 1]}).value
    assert (response.member_epoch, by_name(response, "foo")) == (4, {"foo": [0, 1, 2, 3]})


def test_k36_static_member_leaving_with_minus_one_frees_its_instance_id() -> None:
    """K36: a static member leaving with -1 is removed like a dynamic one (records, epoch bump and, Kafka 4.4, the
    new target); its instance id is free, so a new member id can join with it at once."""
    ctx = static_pair()
    written = Written(ctx)
    response = ctx.cg_heartbeat(member_id="m2", member_epoch=-1, instance_id="i2").value
    assert (response.error_code, response.member_id, response.member_epoch) == (0, "m2", -1)
    assert written.kinds() == left("m2")
    assert "i2" not in ctx.cg().static_members
    rejoin = ctx.join_cg(member_id="m2b", instance_id="i2")
    assert (rejoin.member_id, rejoin.member_epoch) == ("m2b", 5)


def test_k35_static_leave_lookups() -> None:
    """K35: a static leave names an instance id: unknown → UNKNOWN_MEMBER_ID "Instance id <iid> is unknown.";
    owned by another member id → FENCED_INSTANCE_ID; nothing is written either way."""
    ctx = static_pair()
    written = Written(ctx)
    for epoch in (-1, -2):
        unknown = ctx.cg_heartbeat(member_id="m2", member_epoch=epoch, instance_id="i9").value
        assert (unknown.error_code, unknown.error_message) == (
            ErrorCode.UNKNOWN_MEMBER_ID,
            "Instance id i9 is unknown.",
        )
        fenced = ctx.cg_heartbeat(member_id="m2", member_epoch=epoch, instance_id="i1").value
        assert (fenced.error_code, fenced.error_message) == (
            ErrorCode.FENCED_INSTANCE_ID,
            "Static member m2 with instance id i1 was fenced by member m1.",
        )
    assert written.new() == []


def test_k34_static_member_rejoining_with_the_same_id_after_leaving_gets_its_partitions_back() -> None:
    """K34: a static member that left with -2 and rejoins (epoch 0) with the same member id is replaced by its
    own copy, exactly as with a new id (Kafka's replaceMember: tombstones, then the copy at epoch 0), and gets the
    same partitions at the assignment epoch; it is not fenced for "epoch 0 > -2"."""
    ctx = static_pair()
    ctx.cg_heartbeat(member_id="m2", member_epoch=-2, instance_id="i2")
    written = Written(ctx)
    response = ctx.join_cg(member_id="m2", instance_id="i2")
    assert (response.error_code, response.member_id, response.member_epoch) == (0, "m2", 3)
    assert by_name(response, "foo") == {"foo": [2, 3]}
    records = written.new()
    assert [kind(r) for r in records] == [*replaced("m2", "m2"), "CurrentMemberAssignment(m2)"]
    assert current_assignment(records[5]) == (0, 0, STABLE, {"foo": [2, 3]}, {})
    assert current_assignment(records[6]) == (3, 0, STABLE, {"foo": [2, 3]}, {})
    group = ctx.cg()
    assert (group.group_epoch, group.static_members["i2"], group.state.value) == (3, "m2", "Stable")
    assert ctx.coordinator.timer.contains(session_key("group", "m2"))
