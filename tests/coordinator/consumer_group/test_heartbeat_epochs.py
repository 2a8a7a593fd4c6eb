"""Member lookup, epoch fencing and leaving with -1 (rules K13, K14, K20, K30, K35, K36 of
/work/notes/kip848-rules.md), with Kafka's exact errors and the records a leave writes.

Epochs are Kafka 4.4's (KAFKA-20268): a new group starts at epoch 1, written nowhere, and its first join writes
epoch 2, so a lone first member answers epoch 2."""

from __future__ import annotations

from coordinator.consumer_group.keys import session_key
from protocol.errors import ErrorCode
from tests.coordinator.consumer_group.harness import ConsumerGroupTestContext, by_name
from tests.coordinator.consumer_group.written import Written, kind, left

GREATER = (
    "The consumer group member has a greater member epoch ({r}) than the one known by the group coordinator ({k})."
    " The member must abandon all its partitions and rejoin."
)
SMALLER = (
    "The consumer group member has a smaller member epoch ({r}) than the one known by the group coordinator ({k})."
    " The member must abandon all its partitions and rejoin."
)


def at_epoch_two() -> ConsumerGroupTestContext:
    """m1 subscribed to foo and bar; bar is created after the join, so m1 is at epoch 3 (previous epoch 2;
    Kafka 4.4: a new group starts at epoch 1 and the first join writes 2)
    owning foo 0-2 and bar 0-1."""
    ctx = ConsumerGroupTestContext(topics={"foo": 3})
    ctx.join_cg(member_id="m1", topics=["foo", "bar"])
    ctx.create_topic("bar", 2)
    response = ctx.cg_heartbeat(member_id="m1", member_epoch=2, owned={"foo": [0, 1, 2]}).value
    assert (response.member_epoch, by_name(response, "foo", "bar")) == (3, {"foo": [0, 1, 2], "bar": [0, 1]})
    return ctx


def test_k13_unknown_dynamic_member() -> None:
    """K13: epoch > 0 with a member id the group does not know is UNKNOWN_MEMBER_ID."""
    ctx = ConsumerGroupTestContext(topics={"foo": 1})
    ctx.join_cg(member_id="m1")
    response = ctx.cg_heartbeat(member_id="ghost", member_epoch=2).value
    assert (response.error_code, response.error_message) == (
        ErrorCode.UNKNOWN_MEMBER_ID,
        "Member ghost is not a member of group group.",
    )


def test_k14_greater_epoch_is_fenced_and_changes_nothing() -> None:
    """K14: an epoch above the known one is FENCED_MEMBER_EPOCH; nothing is written and the session deadline
    is not pushed."""
    ctx = at_epoch_two()
    written = Written(ctx)
    deadline = ctx.coordinator.timer.deadline(session_key("group", "m1"))
    ctx.advance(1000)
    response = ctx.cg_heartbeat(member_id="m1", member_epoch=4).value
    assert (response.error_code, response.error_message) == (ErrorCode.FENCED_MEMBER_EPOCH, GREATER.format(r=4, k=3))
    assert written.new() == []
    assert ctx.coordinator.timer.deadline(session_key("group", "m1")) == deadline


def test_k14_previous_epoch_is_tolerated_when_owned_partitions_are_assigned() -> None:
    """K14: a heartbeat at the previous epoch (its last response was lost) passes when every partition it
    reports is still assigned to it; the answer carries the current epoch and the full assignment."""
    ctx = at_epoch_two()
    response = ctx.cg_heartbeat(
        member_id="m1",
        member_epoch=2,
        rebalance_timeout_ms=30_000,
        subscribed_topic_names=["foo", "bar"],
        owned={"foo": [0, 1, 2]},
    ).value
    assert (response.error_code, response.member_epoch) == (0, 3)
    assert by_name(response, "foo", "bar") == {"foo": [0, 1, 2], "bar": [0, 1]}


def test_k14_previous_epoch_without_owned_partitions_is_fenced() -> None:
    """K14: the previous epoch with TopicPartitions null is always fenced (smaller epoch)."""
    ctx = at_epoch_two()
    response = ctx.cg_heartbeat(member_id="m1", member_epoch=2).value
    assert (response.error_code, response.error_message) == (ErrorCode.FENCED_MEMBER_EPOCH, SMALLER.format(r=2, k=3))


def test_k14_previous_epoch_owning_unassigned_partitions_is_fenced() -> None:
    """K14: the previous epoch reporting a partition not assigned to the member is fenced."""
    ctx = at_epoch_two()
    ctx.create_topic("baz", 1)
    response = ctx.cg_heartbeat(member_id="m1", member_epoch=2, owned={"foo": [0], "baz": [0]}).value
    assert (response.error_code, response.error_message) == (ErrorCode.FENCED_MEMBER_EPOCH, SMALLER.format(r=2, k=3))


def test_k14_an_older_epoch_than_the_previous_is_fenced() -> None:
    """K14: only the previous epoch is tolerated; a rejoin at epoch 0 of a known member is fenced as smaller."""
    ctx = at_epoch_two()
    response = ctx.cg_heartbeat(
        member_id="m1",
        member_epoch=0,
        rebalance_timeout_ms=30_000,
        subscribed_topic_names=["foo"],
        topic_partitions=[],
    ).value
    assert (response.error_code, response.error_message) == (ErrorCode.FENCED_MEMBER_EPOCH, SMALLER.format(r=0, k=3))


def test_k30_typical_epochs_when_the_topic_comes_later() -> None:
    """K30 (Kafka 4.4): the first member of a new group (created at epoch 1) gets epoch 2 and an empty assignment
    while its topic does not exist; creating the topic bumps the group to epoch 3 and the next heartbeat brings
    the partitions."""
    ctx = ConsumerGroupTestContext()
    first = ctx.join_cg(member_id="m1")
    assert (first.member_epoch, by_name(first, "foo")) == (2, {})
    ctx.create_topic("foo", 2)
    second = ctx.cg_heartbeat(member_id="m1", member_epoch=2).value
    assert (second.member_epoch, by_name(second, "foo")) == (3, {"foo": [0, 1]})
    group = ctx.cg()
    assert (group.group_epoch, group.assignment_epoch) == (3, 3)


def test_k35_leave_of_unknown_group_and_member() -> None:
    """K35: leaving an unknown group is GROUP_ID_NOT_FOUND "Group <id> not found."; an unknown member id is
    UNKNOWN_MEMBER_ID."""
    ctx = ConsumerGroupTestContext(topics={"foo": 1})
    response = ctx.cg_heartbeat(member_id="m1", member_epoch=-1).value
    assert (response.error_code, response.error_message) == (ErrorCode.GROUP_ID_NOT_FOUND, "Group group not found.")
    ctx.join_cg(member_id="m1")
    response = ctx.cg_heartbeat(member_id="ghost", member_epoch=-1).value
    assert (response.error_code, response.error_message) == (
        ErrorCode.UNKNOWN_MEMBER_ID,
        "Member ghost is not a member of group group.",
    )


def test_k35_leave_checks_no_epoch() -> None:
    """K35: -1 needs no epoch match: a member at epoch 3 (Kafka 4.4 numbering) leaves with -1."""
    ctx = at_epoch_two()
    response = ctx.cg_heartbeat(member_id="m1", member_epoch=-1).value
    assert (response.error_code, response.member_id, response.member_epoch) == (0, "m1", -1)


def test_k36_leave_records_response_and_timers() -> None:
    """K36/K20/K55/K21: a -1 leave tombstones the member's current assignment, target and metadata (in that order),
    then bumps the group epoch; the new target is left to the survivor's next heartbeat (Kafka 4.4's
    consumerGroupFenceMembers), so the group is Assigning meanwhile. The answer is epoch -1, heartbeat interval 0,
    no assignment; the member's session timer is gone."""
    ctx = ConsumerGroupTestContext(topics={"foo": 2})
    ctx.join_cg(member_id="m1")
    ctx.join_cg(member_id="m2")
    written = Written(ctx)
    response = ctx.cg_heartbeat(member_id="m1", member_epoch=-1).value
    assert (response.error_code, response.error_message, response.member_id, response.member_epoch) == (
        0,
        None,
        "m1",
        -1,
    )
    assert (response.heartbeat_interval_ms, response.assignment) == (0, None)
    records = written.new()
    assert [kind(r) for r in records] == left("m1")
    assert records[3].value.epoch == 4  # type: ignore[union-attr]
    group = ctx.cg()
    assert (group.group_epoch, group.assignment_epoch, group.state.value) == (4, 3, "Assigning")
    assert not ctx.coordinator.timer.contains(session_key("group", "m1"))


def test_k36_last_member_leaving_empties_the_group() -> None:
    """K36/K39/K58: when the last member leaves the group epoch still moves and the group is Empty (not deleted);
    Kafka 4.4 moves the (empty) target to the new epoch at once, so only TargetAssignmentMetadata follows it.
    group-broker writes Kafka 4.0's PartitionMetadata record (now no subscribed topic) before the epoch, where
    trunk would carry a metadata hash in the epoch record instead."""
    ctx = ConsumerGroupTestContext(topics={"foo": 2})
    ctx.join_cg(member_id="m1")
    written = Written(ctx)
    assert ctx.cg_heartbeat(member_id="m1", member_epoch=-1).value.error_code == 0
    assert written.kinds() == [*left("m1")[:3], "PartitionMetadata", "Metadata", "TargetAssignmentMetadata"]
    group = ctx.cg()
    assert (group.group_epoch, group.assignment_epoch, group.state.value, dict(group.members)) == (3, 3, "Empty", {})


def test_k35_leave_of_a_classic_group_id() -> None:
    """K35: a -1 leave naming a classic group is GROUP_ID_NOT_FOUND "Group <id> is not a consumer group."."""
    ctx = ConsumerGroupTestContext(topics={"foo": 1})
    ctx.join_with_n_members("classic", 1)
    response = ctx.cg_heartbeat("classic", member_id="m1", member_epoch=-1).value
    assert (response.error_code, response.error_message) == (
        ErrorCode.GROUP_ID_NOT_FOUND,
        "Group classic is not a consumer group.",
    )
