"""ConsumerGroupHeartbeat request validation, group lookup and group size (rules K2-K7, K10, K12 of
/work/notes/kip848-rules.md), as Kafka's GroupMetadataManagerTest checks them: exact error code and message, and
nothing written, no group left behind by a refused request.

Epochs are Kafka 4.4's (KAFKA-20268): a new group starts at epoch 1, written nowhere, and its first join writes
epoch 2, so a lone first member answers epoch 2."""

from __future__ import annotations

import pytest

from protocol.errors import ErrorCode
from tests.coordinator.consumer_group.harness import ConsumerGroupTestContext
from tests.coordinator.consumer_group.written import Written

JOIN = {"rebalance_timeout_ms": 5000, "subscribed_topic_names": ["foo"], "topic_partitions": []}


def refused(ctx: ConsumerGroupTestContext, code: ErrorCode, message: str, **kw: object) -> None:
    """Send a heartbeat that must fail with (code, message), with default member id and epoch fields."""
    response = ctx.cg_heartbeat(**kw).value  # type: ignore[arg-type]
    assert (response.error_code, response.error_message) == (code, message)
    assert (response.member_id, response.member_epoch, response.assignment) == (None, 0, None)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"member_id": "", "member_epoch": 0, **JOIN}, "MemberId can't be empty."),
        ({"member_id": "m1", "group_id": "", **JOIN}, "GroupId can't be empty."),
        ({"member_id": "m1", "instance_id": "", **JOIN}, "InstanceId can't be empty."),
        ({"member_id": "m1", "rack_id": "", **JOIN}, "RackId can't be empty."),
    ],
)
def test_k2_identity_fields_must_not_be_empty(fields: dict[str, object], message: str) -> None:
    """K2: v1 needs a client-generated member id; an empty group id is INVALID_REQUEST (not INVALID_GROUP_ID);
    instance and rack ids may be null but never empty."""
    ctx = ConsumerGroupTestContext(topics={"foo": 1})
    refused(ctx, ErrorCode.INVALID_REQUEST, message, **fields)
    assert ctx.coordinator.consumer_group("group") is None


def test_k2_first_failure_wins() -> None:
    """K2: the member id is checked before the group id, which is checked before the instance id."""
    ctx = ConsumerGroupTestContext()
    refused(ctx, ErrorCode.INVALID_REQUEST, "MemberId can't be empty.", group_id="", member_id="", instance_id="")
    refused(ctx, ErrorCode.INVALID_REQUEST, "GroupId can't be empty.", group_id="", member_id="m", instance_id="")


@pytest.mark.parametrize("epoch", [1, -1])
def test_k2_v0_needs_a_member_id_once_past_the_join(epoch: int) -> None:
    """K2: in v0 the member id may be empty only on the joining heartbeat (epoch 0); epoch > 0 or -1 needs one."""
    ctx = ConsumerGroupTestContext()
    refused(ctx, ErrorCode.INVALID_REQUEST, "MemberId can't be empty.", member_id="", member_epoch=epoch, version=0)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (
            {"subscribed_topic_names": ["foo"], "topic_partitions": []},
            "RebalanceTimeoutMs must be provided in first request.",
        ),
        (
            {"rebalance_timeout_ms": 5000, "subscribed_topic_names": ["foo"]},
            "TopicPartitions must be empty when (re-)joining.",
        ),
        (
            {
                "rebalance_timeout_ms": 5000,
                "subscribed_topic_names": ["foo"],
                "topic_partitions": None,
                "owned": {"foo": [0]},
            },
            "TopicPartitions must be empty when (re-)joining.",
        ),
        (
            {"rebalance_timeout_ms": 5000, "topic_partitions": []},
            "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.",
        ),
    ],
)
def test_k3_joining_heartbeat_requirements(fields: dict[str, object], message: str) -> None:
    """K3: a join (epoch 0) must carry a rebalance timeout, an empty (non-null) TopicPartitions and a subscription."""
    ctx = ConsumerGroupTestContext(topics={"foo": 1})
    refused(ctx, ErrorCode.INVALID_REQUEST, message, member_id="m1", member_epoch=0, **fields)
    assert ctx.coordinator.consumer_group("group") is None


@pytest.mark.parametrize("subscription", [{"subscribed_topic_names": []}, {"subscribed_topic_regex": ""}])
def test_k3_an_empty_subscription_is_accepted(subscription: dict[str, object]) -> None:
    """K3: an empty topic list or an empty regex is a member subscribed to nothing: it joins with no partitions.
    Kafka 4.4: its subscription equals a new member's (empty), so the group epoch does not move and the member
    reconciles to the new group's initial epoch 1 (the empty target, KAFKA-20268)."""
    ctx = ConsumerGroupTestContext(topics={"foo": 1})
    response = ctx.cg_heartbeat(member_id="m1", rebalance_timeout_ms=5000, topic_partitions=[], **subscription).value
    assert (response.error_code, response.member_epoch) == (0, 1)
    assert response.assignment is not None and response.assignment.topic_partitions == []


def test_k4_static_leave_needs_an_instance_id() -> None:
    """K4: epoch -2 without InstanceId is INVALID_REQUEST."""
    ctx = ConsumerGroupTestContext()
    refused(ctx, ErrorCode.INVALID_REQUEST, "InstanceId can't be null.", member_id="m1", member_epoch=-2)


@pytest.mark.parametrize("epoch", [-3, -100])
def test_k4_epochs_below_minus_two_are_invalid(epoch: int) -> None:
    """K4: any epoch < -2 is INVALID_REQUEST "MemberEpoch is invalid."."""
    ctx = ConsumerGroupTestContext()
    refused(ctx, ErrorCode.INVALID_REQUEST, "MemberEpoch is invalid.", member_id="m1", member_epoch=epoch)


def test_k4_later_heartbeats_need_no_fields() -> None:
    """K4: epoch > 0 requires nothing beyond the ids (null fields mean unchanged)."""
    ctx = ConsumerGroupTestContext(topics={"foo": 1})
    ctx.join_cg(member_id="m1")
    response = ctx.cg_heartbeat(member_id="m1", member_epoch=2).value
    assert (response.error_code, response.error_message, response.member_epoch) == (0, None, 2)


@pytest.mark.parametrize("epoch", [0, 1, -1])
def test_k5_unknown_server_assignor(epoch: int) -> None:
    """K5: a ServerAssignor not in group.consumer.assignors is UNSUPPORTED_ASSIGNOR with Kafka's message, checked
    at every epoch after the field checks."""
    ctx = ConsumerGroupTestContext(topics={"foo": 1})
    fields = JOIN if epoch == 0 else {}
    refused(
        ctx,
        ErrorCode.UNSUPPORTED_ASSIGNOR,
        "ServerAssignor sticky is not supported. Supported assignors: uniform, range.",
        member_id="m1",
        member_epoch=epoch,
        server_assignor="sticky",
        **fields,
    )


def test_k5_field_checks_come_before_the_assignor_check() -> None:
    """K5: an invalid field wins over an unsupported assignor."""
    ctx = ConsumerGroupTestContext()
    refused(ctx, ErrorCode.INVALID_REQUEST, "RackId can't be empty.", member_id="m1", rack_id="", server_assignor="x")


def test_k6_v0_join_gets_a_generated_member_id() -> None:
    """K6: in v0 a joining member may send an empty id; the coordinator generates a 22-character Kafka UUID and
    returns it, and the member is known under it."""
    ctx = ConsumerGroupTestContext(topics={"foo": 1})
    response = ctx.cg_heartbeat(member_id="", version=0, **JOIN).value
    assert response.error_code == 0
    assert response.member_id is not None and len(response.member_id) == 22
    assert list(ctx.cg().members) == [response.member_id]
    again = ctx.cg_heartbeat(member_id=response.member_id, member_epoch=2, version=0).value
    assert (again.error_code, again.member_id, again.member_epoch) == (0, response.member_id, 2)


@pytest.mark.parametrize("version", [0, 1])
def test_k6_a_client_member_id_is_used_as_is(version: int) -> None:
    """K6: whatever non-empty id the client sends is the member's id, in both versions."""
    ctx = ConsumerGroupTestContext(topics={"foo": 1})
    response = ctx.cg_heartbeat(member_id="my-own-id", version=version, **JOIN).value
    assert (response.error_code, response.member_id, response.member_epoch) == (0, "my-own-id", 2)


def test_k7_invalid_regex_is_refused_and_leaves_nothing() -> None:
    """K7: a new regex that RE2/J cannot compile is INVALID_REGULAR_EXPRESSION with Kafka's message; the refused
    first heartbeat neither writes a record nor leaves the group it would have created."""
    ctx = ConsumerGroupTestContext(topics={"foo": 1})
    written = Written(ctx)
    response = ctx.cg_heartbeat(
        member_id="m1", rebalance_timeout_ms=5000, topic_partitions=[], subscribed_topic_regex="foo["
    ).value
    assert response.error_code == ErrorCode.INVALID_REGULAR_EXPRESSION
    assert response.error_message is not None
    assert response.error_message.startswith("SubscribedTopicRegex `foo[` is not a valid regular expression: ")
    assert written.new() == []
    assert ctx.coordinator.consumer_group("group") is None


def test_k7_invalid_regex_on_an_existing_member_changes_nothing() -> None:
    """K7: switching an existing member to an invalid regex is refused; its subscription and epoch stay."""
    ctx = ConsumerGroupTestContext(topics={"foo": 1})
    ctx.join_cg(member_id="m1")
    written = Written(ctx)
    response = ctx.cg_heartbeat(member_id="m1", member_epoch=2, subscribed_topic_regex="(").value
    assert response.error_code == ErrorCode.INVALID_REGULAR_EXPRESSION
    assert written.new() == []
    member = ctx.cg().members["m1"]
    assert (member.subscribed_topic_names, member.subscribed_topic_regex, member.member_epoch) == (("foo",), None, 2)


def test_k10_heartbeat_to_an_unknown_group() -> None:
    """K10: only a join (epoch 0) creates a group; epoch > 0 on an unknown id is GROUP_ID_NOT_FOUND."""
    ctx = ConsumerGroupTestContext()
    refused(ctx, ErrorCode.GROUP_ID_NOT_FOUND, "Consumer group group not found.", member_id="m1", member_epoch=2)
    assert ctx.coordinator.consumer_group("group") is None


def test_k12_a_full_group_refuses_a_new_member() -> None:
    """K12: with group.consumer.max.size members, a new member id is GROUP_MAX_SIZE_REACHED; the members already
    in keep heartbeating."""
    ctx = ConsumerGroupTestContext(topics={"foo": 2}, consumer_group_max_size=1)
    ctx.join_cg(member_id="m1")
    written = Written(ctx)
    refused(
        ctx,
        ErrorCode.GROUP_MAX_SIZE_REACHED,
        "The consumer group has reached its maximum capacity of 1 members.",
        member_id="m2",
        **JOIN,
    )
    assert written.new() == []
    response = ctx.cg_heartbeat(member_id="m1", member_epoch=2).value
    assert (response.error_code, response.member_epoch) == (0, 2)
    rejoin = ctx.cg_heartbeat(member_id="m1", member_epoch=2, rebalance_timeout_ms=5000).value
    assert rejoin.error_code == 0


def test_k12_a_full_group_refuses_even_a_replacing_static_member() -> None:
    """K12: the size check comes before member lookup, so a new member id taking over a static instance (K34) is
    refused too when the group is full."""
    ctx = ConsumerGroupTestContext(topics={"foo": 2}, consumer_group_max_size=1)
    ctx.join_cg(member_id="m1", instance_id="i1")
    assert ctx.cg_heartbeat(member_id="m1", member_epoch=-2, instance_id="i1").value.error_code == 0
    refused(
        ctx,
        ErrorCode.GROUP_MAX_SIZE_REACHED,
        "The consumer group has reached its maximum capacity of 1 members.",
        member_id="m1b",
        instance_id="i1",
        **JOIN,
    )
