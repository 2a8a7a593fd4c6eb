"""Consumer group states and ConsumerGroupDescribe (rules K39-K42 of /work/notes/kip848-rules.md): the state a
group is in at each step of a rebalance, and what ConsumerGroupDescribe answers for unknown, classic and
consumer groups (epochs, assignor, each member's current and target assignment with topic names).

Epochs are Kafka 4.4's (KAFKA-20268): a new group starts at epoch 1, written nowhere, and its first join writes
epoch 2, so a lone first member answers epoch 2."""

from __future__ import annotations

from protocol.errors import ErrorCode
from tests.coordinator.consumer_group.harness import ConsumerGroupTestContext
from tests.coordinator.consumer_group.written import names

NO_AUTHORIZED_OPERATIONS = -2147483648


def test_k39_states_through_a_rebalance() -> None:
    """K39: Stable when every member holds its target at the assignment epoch, Reconciling while one has not,
    Assigning straight after a leave (the group epoch moved, the new target comes with the next heartbeat), Empty
    after the last leave (Kafka 4.4 moves the empty target to the new epoch with it)."""
    ctx = ConsumerGroupTestContext(topics={"foo": 2})
    ctx.join_cg(member_id="m1")
    states = [ctx.cg().state.value]
    ctx.join_cg(member_id="m2")
    states.append(ctx.cg().state.value)
    ctx.cg_heartbeat(member_id="m1", member_epoch=2, owned={"foo": [0, 1]})
    ctx.cg_heartbeat(member_id="m1", member_epoch=2, owned={"foo": [0]})
    ctx.cg_heartbeat(member_id="m2", member_epoch=3, owned={})
    states.append(ctx.cg().state.value)
    ctx.cg_heartbeat(member_id="m2", member_epoch=-1)
    states.append(ctx.cg().state.value)
    ctx.cg_heartbeat(member_id="m1", member_epoch=3, owned={"foo": [0]})
    states.append(ctx.cg().state.value)
    ctx.cg_heartbeat(member_id="m1", member_epoch=-1)
    states.append(ctx.cg().state.value)
    assert states == ["Stable", "Reconciling", "Stable", "Assigning", "Stable", "Empty"]
    assert (ctx.cg().group_epoch, ctx.cg().assignment_epoch) == (5, 5)
    assert [d.group_state for d in ctx.cg_describe("group")] == ["Empty"]


def test_k40_group_type_and_protocol_type() -> None:
    """K40: a consumer group's type and protocol type are both `consumer`; it is empty only without members."""
    ctx = ConsumerGroupTestContext(topics={"foo": 1})
    ctx.join_cg(member_id="m1")
    group = ctx.cg()
    assert (group.group_type, group.protocol_type, group.is_empty) == ("consumer", "consumer", False)
    ctx.cg_heartbeat(member_id="m1", member_epoch=-1)
    assert ctx.cg().is_empty


def test_k41_unknown_group() -> None:
    """K41: an unknown id answers GROUP_ID_NOT_FOUND "Group <id> not found." with every other field default."""
    ctx = ConsumerGroupTestContext()
    (described,) = ctx.cg_describe("nope")
    assert (described.group_id, described.error_code, described.error_message) == (
        "nope",
        ErrorCode.GROUP_ID_NOT_FOUND,
        "Group nope not found.",
    )
    assert (described.group_state, described.group_epoch, described.assignment_epoch, described.members) == (
        "",
        0,
        0,
        [],
    )
    assert described.authorized_operations == NO_AUTHORIZED_OPERATIONS


def test_k41_classic_group_is_not_a_consumer_group() -> None:
    """K41: a classic group's id answers GROUP_ID_NOT_FOUND "Group <id> is not a consumer group." (trunk wording;
    Kafka 4.0 sent no message)."""
    ctx = ConsumerGroupTestContext(topics={"foo": 1})
    ctx.join_with_n_members("classic", 1)
    (described,) = ctx.cg_describe("classic")
    assert (described.error_code, described.error_message) == (
        ErrorCode.GROUP_ID_NOT_FOUND,
        "Group classic is not a consumer group.",
    )


def test_k41_each_id_answered_in_request_order() -> None:
    """K41: one entry per requested id, in order; an error on one does not affect the others."""
    ctx = ConsumerGroupTestContext(topics={"foo": 1})
    ctx.join_cg(member_id="m1")
    described = ctx.cg_describe("nope", "group")
    assert [(d.group_id, d.error_code) for d in described] == [("nope", ErrorCode.GROUP_ID_NOT_FOUND), ("group", 0)]


def test_k42_describe_while_reconciling() -> None:
    """K42: epochs, assignor, and per member its ids, client, subscription, its current assignment and its target
    assignment (they differ while it revokes), with topic names."""
    ctx = ConsumerGroupTestContext(topics={"foo": 2})
    ctx.join_cg(member_id="m1", rack_id="r1", instance_id="i1")
    ctx.join_cg(member_id="m2", client_id="other")
    ctx.cg_heartbeat(member_id="m1", member_epoch=2, instance_id="i1", owned={"foo": [0, 1]})
    (described,) = ctx.cg_describe("group")
    assert (described.error_code, described.error_message, described.group_state) == (0, None, "Reconciling")
    assert (described.group_epoch, described.assignment_epoch, described.assignor_name) == (3, 3, "uniform")
    assert described.authorized_operations == NO_AUTHORIZED_OPERATIONS
    m1, m2 = described.members
    assert (m1.member_id, m1.instance_id, m1.rack_id, m1.member_epoch, m1.client_id, m1.client_host) == (
        "m1",
        "i1",
        "r1",
        2,
        "consumer",
        "/127.0.0.1",
    )
    assert (m1.subscribed_topic_names, m1.subscribed_topic_regex) == (["foo"], "")  # Kafka 4.4: absent is ""
    assert [t.topic_name for t in m1.assignment.topic_partitions] == ["foo"]
    assert names(m1.assignment.topic_partitions) == {"foo": [0]}
    assert names(m1.target_assignment.topic_partitions) == {"foo": [0]}
    assert (m2.member_id, m2.member_epoch, m2.client_id) == ("m2", 3, "other")
    assert names(m2.assignment.topic_partitions) == {}
    assert names(m2.target_assignment.topic_partitions) == {"foo": [1]}


def test_k42_describe_shows_a_regex_member() -> None:
    """K42: a regex subscriber is described with its regex and no topic names."""
    ctx = ConsumerGroupTestContext(topics={"foo1": 1})
    ctx.join_cg(member_id="m1", topics=(), subscribed_topic_names=None, subscribed_topic_regex="foo.*")
    (described,) = ctx.cg_describe("group")
    (member,) = described.members
    assert (member.subscribed_topic_names, member.subscribed_topic_regex) == ([], "foo.*")
    assert names(member.assignment.topic_partitions) == {"foo1": [0]}


def test_k41_empty_group_id() -> None:
    """K41 (UNVERIFIED in Kafka's source, following its other group APIs): an empty id is INVALID_GROUP_ID for
    that entry only."""
    ctx = ConsumerGroupTestContext(topics={"foo": 1})
    ctx.join_cg(member_id="m1")
    described = ctx.cg_describe("", "group")
    assert [(d.group_id, d.error_code) for d in described] == [("", ErrorCode.INVALID_GROUP_ID), ("group", 0)]
