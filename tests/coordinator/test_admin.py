"""DescribeGroups (#40), ListGroups (#41), DeleteGroups (#42), OffsetDelete (#43)."""

from __future__ import annotations

from coordinator.state import GroupState
from protocol.errors import ErrorCode
from protocol.messages.group_metadata_key import GroupMetadataKey
from tests.coordinator.harness import CoordinatorTestContext, completing, dead_group, subscription

NONE = ErrorCode.NONE


# -- #40 -----------------------------------------------------------------------------------------------------


def test_rule_40_describe_unknown_group_is_dead_with_no_error() -> None:
    """Up to DescribeGroups v5; v6 answers GROUP_ID_NOT_FOUND (below)."""
    ctx = CoordinatorTestContext()
    (described,) = ctx.describe("nobody", version=5)
    assert (described.error_code, described.group_state, described.protocol_type, described.members) == (
        NONE,
        "Dead",
        "",
        [],
    )


def test_rule_40_describe_v6_unknown_group_is_group_id_not_found_with_kafkas_message() -> None:
    """KIP-1043: from DescribeGroups v6 an unknown (or deleted) group is GROUP_ID_NOT_FOUND with Kafka's message,
    still in state Dead; a known group is described as before, with no message."""
    ctx = CoordinatorTestContext()
    ctx.join_with_n_members("g", 1)
    unknown, known = ctx.describe("nobody", "g", version=6)
    assert (unknown.error_code, unknown.error_message, unknown.group_state, unknown.members) == (
        ErrorCode.GROUP_ID_NOT_FOUND,
        "Group nobody not found.",
        "Dead",
        [],
    )
    assert (known.error_code, known.error_message, known.group_state) == (NONE, None, "Stable")


def test_rule_40_describe_stable_group_shows_protocol_metadata_and_assignment() -> None:
    ctx = CoordinatorTestContext()
    g = ctx.join_with_n_members("g", 2, static=True)
    (described,) = ctx.describe("g")
    assert (described.group_state, described.protocol_type, described.protocol_data) == ("Stable", "consumer", "range")
    assert [m.member_id for m in described.members] == g.member_ids
    first = described.members[0]
    assert first.group_instance_id == "instance-0"
    assert (first.client_id, first.client_host) == ("consumer", "/127.0.0.1")
    assert first.member_metadata == subscription("topic") and first.member_assignment == b"assignment-0"


def test_rule_40_describe_non_stable_group_hides_metadata_and_assignment() -> None:
    ctx = CoordinatorTestContext()
    completing(ctx, 2)
    (described,) = ctx.describe("g")
    assert described.group_state == "CompletingRebalance" and described.protocol_data == ""
    assert all(m.member_metadata == b"" and m.member_assignment == b"" for m in described.members)
    assert len(described.members) == 2
    ctx.join_dynamic("g")
    assert ctx.describe("g")[0].group_state == "PreparingRebalance"
    ctx.commit(group_id="simple")
    assert ctx.describe("simple")[0].group_state == "Empty"


def test_rule_40_describe_rebalancing_group_keeps_each_members_current_assignment() -> None:
    """Kafka 4.4 (ClassicGroupMember.describeNoMetadata) hides the metadata of a group that is not Stable but still
    shows each member's assignment from the last generation (found by the differential suite)."""
    ctx = CoordinatorTestContext()
    g = ctx.join_with_n_members("g", 2)
    ctx.join_dynamic("g")
    (described,) = ctx.describe("g")
    assert described.group_state == "PreparingRebalance" and described.protocol_data == ""
    by_id = {m.member_id: m for m in described.members}
    assert [by_id[m].member_assignment for m in g.member_ids] == [b"assignment-0", b"assignment-1"]
    assert all(m.member_metadata == b"" for m in described.members)


# -- #41 -----------------------------------------------------------------------------------------------------


def test_rule_41_list_groups_with_case_insensitive_state_and_type_filters() -> None:
    ctx = CoordinatorTestContext()
    ctx.join_with_n_members("stable", 1)
    ctx.commit(group_id="simple")
    listed = ctx.list_groups()
    assert listed.error_code == NONE
    assert [(g.group_id, g.protocol_type, g.group_state, g.group_type) for g in listed.groups] == [
        ("simple", "", "Empty", "classic"),
        ("stable", "consumer", "Stable", "classic"),
    ]
    assert [g.group_id for g in ctx.list_groups(states=["STABLE"]).groups] == ["stable"]
    assert [g.group_id for g in ctx.list_groups(states=["empty", "dead"]).groups] == ["simple"]
    assert len(ctx.list_groups(types=["Classic"]).groups) == 2
    assert ctx.list_groups(types=["consumer"]).groups == []


def test_rule_41_list_groups_while_a_partition_loads_returns_groups_with_error_14() -> None:
    ctx = CoordinatorTestContext(partitions=[0, 1])
    group_id = next(f"g{i}" for i in range(200) if ctx.coordinator.partition_for(f"g{i}") == 0)
    ctx.commit(group_id=group_id)
    ctx.coordinator.begin_loading(2)
    listed = ctx.list_groups()
    assert listed.error_code == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
    assert [g.group_id for g in listed.groups] == [group_id]
    ctx.coordinator.shutdown(ctx.now_ms)
    assert ctx.list_groups().error_code == ErrorCode.COORDINATOR_NOT_AVAILABLE


# -- #42 -----------------------------------------------------------------------------------------------------


def test_rule_42_delete_groups_by_state() -> None:
    ctx = CoordinatorTestContext()
    ctx.join_with_n_members("active", 1)
    ctx.commit(group_id="empty", offsets={("t", 0): 1, ("t", 1): 2})
    dead_group(ctx, "dying")
    ctx.store.auto_durable = True
    reply = ctx.delete_groups("active", "empty", "missing", "dying", "")
    ctx.store.flush()  # the tombstones of "dying" (from its own deletion) were still in flight
    results = {r.group_id: ErrorCode(r.error_code) for r in reply.value.results}
    assert results == {
        "active": ErrorCode.NON_EMPTY_GROUP,
        "empty": NONE,
        "missing": ErrorCode.GROUP_ID_NOT_FOUND,
        "dying": ErrorCode.GROUP_ID_NOT_FOUND,
        "": ErrorCode.GROUP_ID_NOT_FOUND,  # the empty id is a valid id here, just not an existing group
    }
    assert ctx.coordinator.group("empty") is None and ctx.coordinator.group("dying") is None
    assert ctx.committed_offset("empty", "t", 0) == -1
    tombstones = [r for r in ctx.store.records(ctx.coordinator.partition_for("empty")) if r.value is None]
    assert sorted((r.key.topic, r.key.partition) for r in tombstones if r.key_version == 1) == [  # type: ignore[union-attr]
        ("t", 0),
        ("t", 1),
    ]


def test_rule_42_deleting_a_simple_group_tombstones_its_offsets_then_its_group_record() -> None:
    """Kafka 4.4 (ClassicGroup.createGroupTombstoneRecords) ends every deletion with a GroupMetadata tombstone, even
    for a group that never wrote a group record (a simple group, generation 0): found by the differential suite."""
    ctx = CoordinatorTestContext()
    ctx.commit(group_id="simple", offsets={("t", 0): 1, ("t", 1): 2})
    before = len(ctx.store.records(ctx.coordinator.partition_for("simple")))
    assert ctx.delete_groups("simple").value.results[0].error_code == NONE
    written = ctx.store.records(ctx.coordinator.partition_for("simple"))[before:]
    assert [(r.key_version, r.value) for r in written] == [(1, None), (1, None), (2, None)]
    assert written[-1].key == GroupMetadataKey(group="simple")


def test_rule_42_delete_is_answered_once_tombstones_are_durable_and_group_is_dead_meanwhile() -> None:
    ctx = CoordinatorTestContext()
    g = ctx.join_with_n_members("g", 1)
    ctx.leave("g", (g.leader_id, None))
    ctx.store.auto_durable = False
    reply = ctx.delete_groups("g")
    assert not reply.done and ctx.state("g") is GroupState.DEAD
    assert ctx.join_dynamic("g").value.error_code == ErrorCode.COORDINATOR_NOT_AVAILABLE
    ctx.store.flush()
    assert reply.value.results[0].error_code == NONE
    records = ctx.store.records(ctx.coordinator.partition_for("g"))
    assert records[-1].key_version == 2 and records[-1].value is None  # group tombstone (generation > 0)
    assert ctx.join_dynamic("g").value.error_code == NONE  # a fresh group


# -- #43 -----------------------------------------------------------------------------------------------------


def test_rule_43_offset_delete_by_group_state_and_subscription() -> None:
    ctx = CoordinatorTestContext()
    assert ctx.offset_delete("missing", {"t": [0]}).value.error_code == ErrorCode.GROUP_ID_NOT_FOUND
    g = ctx.join_with_n_members("g", 1, topics=("subscribed",))
    ctx.commit(
        group_id="g",
        member_id=g.leader_id,
        generation_id=g.generation_id,
        offsets={("subscribed", 0): 1, ("other", 0): 2, ("other", 1): 3},
    )
    reply = ctx.offset_delete("g", {"subscribed": [0], "other": [0, 5]})
    response = reply.value
    assert response.error_code == NONE
    assert {(t.name, p.partition_index): p.error_code for t in response.topics for p in t.partitions} == {
        ("subscribed", 0): ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC,
        ("other", 0): NONE,
        ("other", 5): NONE,
    }
    assert ctx.fetched("g", None) == {("subscribed", 0): (1, -1, "", NONE), ("other", 1): (3, -1, "", NONE)}
    ctx.leave("g", (g.leader_id, None))
    assert ctx.offset_delete("g", {"subscribed": [0]}).value.topics[0].partitions[0].error_code == NONE
    assert ctx.committed_offset("g", "subscribed", 0) == -1


def test_rule_43_unknown_topics_and_partitions_are_rejected_first_as_in_kafka() -> None:
    """KafkaApis rejects partitions missing from the metadata with UNKNOWN_TOPIC_OR_PARTITION before the
    coordinator sees the request, and answers them first (OffsetDeleteResponse.Builder merges the coordinator's
    answers by topic name); their offsets are kept (found by the differential suite)."""
    ctx = CoordinatorTestContext(known_partition=lambda topic, partition: topic != "ghost" and partition < 2)
    ctx.commit(group_id="g", offsets={("t", 0): 1, ("t", 1): 2, ("u", 0): 3})
    response = ctx.offset_delete("g", {"u": [0], "t": [0, 7], "ghost": [0]}).value
    assert response.error_code == NONE
    assert [(t.name, [(p.partition_index, p.error_code) for p in t.partitions]) for t in response.topics] == [
        ("t", [(7, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION), (0, NONE)]),
        ("ghost", [(0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)]),
        ("u", [(0, NONE)]),
    ]
    assert ctx.fetched("g", {"t": [0, 1]}) == {("t", 0): (-1, -1, "", NONE), ("t", 1): (2, -1, "", NONE)}
    missing = ctx.offset_delete("missing", {"ghost": [0]}).value
    assert (missing.error_code, missing.topics) == (ErrorCode.GROUP_ID_NOT_FOUND, [])


def test_rule_43_active_non_consumer_group_is_non_empty_and_unparsable_subscriptions_protect_everything() -> None:
    ctx = CoordinatorTestContext()
    g = ctx.join_dynamic("connect", protocol_type="connect", protocols=[("default", b"whatever")])
    ctx.sync(
        group_id="connect",
        member_id=g.value.member_id,
        generation_id=1,
        protocol_type="connect",
        protocol_name="default",
    )
    assert ctx.offset_delete("connect", {"t": [0]}).value.error_code == ErrorCode.NON_EMPTY_GROUP
    bad = ctx.join_dynamic("bad", protocols=[("range", b"\x00\x07garbage")])
    ctx.sync(group_id="bad", member_id=bad.value.member_id, generation_id=1)
    assert ctx.group("bad").subscribed_topics is None
    response = ctx.offset_delete("bad", {"anything": [0]}).value
    assert response.topics[0].partitions[0].error_code == ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC
