"""Records, loading and unloading: rules #44-#47 (and #11's over-capacity load)."""

from __future__ import annotations

from typing import Any

from broker.offsets_log import decode_record
from coordinator.events import Events
from coordinator.group import ClassicGroup
from coordinator.loader import replay
from coordinator.records import CoordinatorRecord, UnknownRecordKey
from coordinator.state import GroupState
from protocol import consumer_offsets
from protocol.errors import ErrorCode
from protocol.kafka_uuid import kafka_uuid_to_str
from protocol.messages.group_metadata_key import GroupMetadataKey
from protocol.messages.group_metadata_value import GroupMetadataValue, MemberMetadata
from protocol.messages.offset_commit_key import OffsetCommitKey
from protocol.messages.offset_commit_value import OffsetCommitValue
from tests.coordinator.harness import CoordinatorTestContext, EventRecorder, completing, subscription
from tests.support.consumer_group_records import TOPIC_ID, consumer_group_record_bytes

NONE = ErrorCode.NONE


def reload(ctx: CoordinatorTestContext, **kw: object) -> CoordinatorTestContext:
    """A second coordinator (another broker node) loading everything the first one wrote."""
    kw.setdefault("start_ms", ctx.now_ms)
    return CoordinatorTestContext(store=ctx.store, **kw)  # type: ignore[arg-type]


def roundtrip(record: CoordinatorRecord) -> CoordinatorRecord:
    """Through the storage layer's codec (protocol.consumer_offsets), as the durable log will do."""
    key_bytes = consumer_offsets.encode_key(record.key)  # type: ignore[arg-type]
    value_bytes = consumer_offsets.encode_value(record.value)
    key = consumer_offsets.decode_key(key_bytes)
    assert key is not None
    assert consumer_offsets.key_version(key_bytes) == record.key_version
    return CoordinatorRecord(
        key, record.key_version, consumer_offsets.decode_value(key, value_bytes), record.value_version
    )


# -- #44 -----------------------------------------------------------------------------------------------------


def test_rule_44_record_keys_and_tombstones() -> None:
    ctx = CoordinatorTestContext()
    g = ctx.join_with_n_members("g", 1)
    ctx.commit(group_id="g", member_id=g.leader_id, generation_id=g.generation_id, offsets={("t", 3): 1})
    ctx.leave("g", (g.leader_id, None))
    ctx.offset_delete("g", {"t": [3]})
    records = ctx.store.records(ctx.coordinator.partition_for("g"))
    kinds = [(type(r.key).__name__, r.key_version, r.value is None) for r in records]
    assert kinds == [
        ("GroupMetadataKey", 2, False),  # generation 1 with its assignment
        ("OffsetCommitKey", 1, False),
        ("GroupMetadataKey", 2, False),  # generation 2, Empty
        ("OffsetCommitKey", 1, True),  # tombstone
    ]
    assert records[1].key == OffsetCommitKey(group="g", topic="t", partition=3)
    for record in records:
        assert roundtrip(record) == record


def test_rule_44_unknown_record_types_are_skipped_with_a_warning_when_loading() -> None:
    ctx = CoordinatorTestContext(partitions=[])
    records = [
        CoordinatorRecord(UnknownRecordKey(3, b"\x00\x03..."), 3, None, -1),
        CoordinatorRecord(
            OffsetCommitKey(group="g", topic="t", partition=0), 0, OffsetCommitValue(offset=5, commit_timestamp=1), 0
        ),
    ]
    ctx.coordinator.load_partition(0, records, 0)
    assert ctx.group("g").offsets.get("t", 0) is not None
    skipped = ctx.events.of("partition.record_skipped")
    assert skipped == [{"partition": 0, "key_version": 3, "reason": "unknown record type"}]


# -- #45 -----------------------------------------------------------------------------------------------------


def test_rule_45_offset_commit_value_v3_or_v1_with_expire_timestamp() -> None:
    ctx = CoordinatorTestContext()
    ctx.commit(group_id="g", offsets={("t", 0): 10}, metadata=None, leader_epoch=7)
    ctx.commit(group_id="g", offsets={("t", 1): 11}, retention_time_ms=1_000, version=3)
    normal, explicit = ctx.store.records(ctx.group("g").partition)
    assert normal.value_version == 3
    assert normal.value == OffsetCommitValue(offset=10, leader_epoch=7, metadata="", commit_timestamp=ctx.wall_ms)
    assert explicit.value_version == 1
    assert explicit.value.expire_timestamp == ctx.wall_ms + 1_000  # type: ignore[union-attr]
    assert consumer_offsets.offset_commit_value_version(explicit.value) == 1  # type: ignore[arg-type]
    assert roundtrip(explicit) == explicit


# -- #46 -----------------------------------------------------------------------------------------------------


def test_rule_46_group_metadata_value_v3_carries_members_subscriptions_and_assignments() -> None:
    ctx = CoordinatorTestContext()
    g = ctx.join_with_n_members("g", 2, static=True, session_timeout_ms=12_000, rebalance_timeout_ms=34_000)
    record = ctx.store.records(ctx.group("g").partition)[-1]
    assert record.key == GroupMetadataKey(group="g") and record.value_version == 3
    value = record.value
    assert isinstance(value, GroupMetadataValue)
    assert (value.protocol_type, value.generation, value.protocol, value.leader) == (
        "consumer",
        g.generation_id,
        "range",
        g.leader_id,
    )
    assert value.current_state_timestamp == ctx.wall_ms
    assert value.members[0] == MemberMetadata(
        member_id=g.leader_id,
        group_instance_id="instance-0",
        client_id="consumer",
        client_host="/127.0.0.1",
        rebalance_timeout=34_000,
        session_timeout=12_000,
        subscription=subscription("topic"),
        assignment=b"assignment-0",
    )
    assert roundtrip(record) == record


def test_rule_46_loaded_groups_are_stable_or_empty_and_dead_members_expire() -> None:
    ctx = CoordinatorTestContext()
    g = ctx.join_with_n_members("g", 2, static=True)
    ctx.commit(group_id="g", member_id=g.leader_id, generation_id=g.generation_id, offsets={("t", 0): 42})
    e = ctx.join_with_n_members("e", 1)
    ctx.leave("e", (e.leader_id, None))
    ctx.commit(group_id="simple", offsets={("t", 0): 7})
    completing(ctx, 2, group_id="mid")  # a rebalance in flight is lost with the coordinator

    other = reload(ctx)
    group = other.group("g")
    assert group.state is GroupState.STABLE and group.generation_id == g.generation_id
    assert group.leader_id == g.leader_id and list(group.members) == g.member_ids
    assert group.member(g.leader_id).assignment == b"assignment-0"
    assert group.static_member_id("instance-1") == g.followers[0]
    assert group.subscribed_topics == frozenset({"topic"})
    assert other.committed_offset("g", "t", 0) == 42
    assert other.state("e") is GroupState.EMPTY and other.group("e").generation_id == 2
    assert other.state("simple") is GroupState.EMPTY and other.group("simple").protocol_type is None
    assert other.state("mid") is None  # never persisted: its members will find no group and rejoin
    # Members get fresh session timers: whoever does not heartbeat to the new coordinator expires.
    other.assert_heartbeat_deadline("g", g.leader_id, other.now_ms + 10_000)
    other.sleep(5_000)
    assert other.heartbeat("g", g.leader_id, g.generation_id, group_instance_id="instance-0") is NONE
    other.sleep(5_000)
    assert list(other.group("g").members) == [g.leader_id]
    assert other.state("g") is GroupState.PREPARING_REBALANCE


def test_rule_46_tombstones_and_last_write_wins_on_replay() -> None:
    ctx = CoordinatorTestContext()
    ctx.commit(group_id="a", offsets={("t", 0): 1})
    ctx.commit(group_id="a", offsets={("t", 0): 2})
    ctx.commit(group_id="b", offsets={("t", 0): 1})
    ctx.delete_groups("b")
    other = reload(ctx)
    assert other.committed_offset("a", "t", 0) == 2
    assert other.coordinator.group("b") is None


def test_rule_11_group_loaded_over_capacity_is_forced_to_rebalance() -> None:
    ctx = CoordinatorTestContext()
    g = ctx.join_with_n_members("g", 3)
    other = reload(ctx, group_max_size=2)
    assert other.state("g") is GroupState.PREPARING_REBALANCE
    replies = [other.join(group_id="g", member_id=m) for m in g.member_ids]
    errors = sorted(ErrorCode(r.value.error_code).name for r in replies if r.done)
    assert "GROUP_MAX_SIZE_REACHED" in errors


# -- #47 -----------------------------------------------------------------------------------------------------


def test_rule_47_unloading_a_partition_kills_its_groups_and_answers_parked_requests() -> None:
    ctx = CoordinatorTestContext(auto_durable=False)
    members, leader, generation = completing(ctx, 3)
    follower = next(m for m in members if m != leader)
    parked_sync = ctx.sync(group_id="g", member_id=follower, generation_id=generation)
    leader_sync = ctx.sync(group_id="g", member_id=leader, generation_id=generation)  # write in flight
    commit = ctx.commit(group_id="g", member_id=leader, generation_id=generation)
    partition = ctx.coordinator.partition_for("g")
    ctx.coordinator.unload_partition(partition, ctx.now_ms)
    assert parked_sync.value.error_code == ErrorCode.NOT_COORDINATOR
    assert leader_sync.value.error_code == ErrorCode.NOT_COORDINATOR
    assert commit.value.topics[0].partitions[0].error_code == ErrorCode.REBALANCE_IN_PROGRESS  # validated first
    assert ctx.coordinator.group("g") is None
    assert all(ctx.heartbeat_deadline("g", m) is None for m in members)
    assert ctx.heartbeat("g", leader, generation) is ErrorCode.NOT_COORDINATOR
    ctx.store.flush()  # a late durability notice for the unloaded partition changes nothing


def test_rule_47_parked_joins_get_not_coordinator_and_inflight_commits_too() -> None:
    ctx = CoordinatorTestContext(initial_rebalance_delay_ms=3_000)
    join = ctx.join_dynamic("g")
    assert not join.done
    ctx.store.auto_durable = False
    commit = ctx.commit(group_id="simple-" + "x", offsets={("t", 0): 1})
    ctx.coordinator.unload_partition(ctx.coordinator.partition_for("g"), ctx.now_ms)
    assert join.value.error_code == ErrorCode.NOT_COORDINATOR
    ctx.coordinator.unload_partition(ctx.coordinator.partition_for("simple-x"), ctx.now_ms)
    assert commit.value.topics[0].partitions[0].error_code == ErrorCode.NOT_COORDINATOR
    assert ctx.join_deadline("g") is None


def test_a_partition_moves_between_two_coordinators_sharing_one_log() -> None:
    """Two broker nodes in one process: node A leads every partition, then hands the group's over to node B."""
    node_a = CoordinatorTestContext()
    g = node_a.join_with_n_members("g", 2)
    node_a.commit(group_id="g", member_id=g.leader_id, generation_id=g.generation_id, offsets={("t", 0): 5})
    partition = node_a.coordinator.partition_for("g")
    node_b = CoordinatorTestContext(store=node_a.store, partitions=[], start_ms=node_a.now_ms)
    assert node_b.heartbeat("g", g.leader_id, g.generation_id) is ErrorCode.NOT_COORDINATOR

    node_a.coordinator.unload_partition(partition, node_a.now_ms)
    node_b.coordinator.begin_loading(partition)
    assert node_b.heartbeat("g", g.leader_id, g.generation_id) is NONE  # loading: answered blindly (#4)
    node_b.coordinator.load_partition(partition, node_a.store.records(partition), node_b.now_ms)

    assert node_a.heartbeat("g", g.leader_id, g.generation_id) is ErrorCode.NOT_COORDINATOR
    assert node_b.heartbeat("g", g.leader_id, g.generation_id) is NONE
    assert node_b.state("g") is GroupState.STABLE
    assert node_b.committed_offset("g", "t", 0) == 5
    sync = node_b.sync(group_id="g", member_id=g.followers[0], generation_id=g.generation_id)
    assert sync.value.assignment == b"assignment-1"


# -- #44, KIP-848 records (#14): known, but nothing loads them yet -------------------------------------------


def _consumer_group_records(group_id: str) -> list[CoordinatorRecord]:
    """Every consumer-group record type (keys 3-8) and a tombstone, read back by the storage layer's reader."""
    out = [decode_record(key, value) for key, value in consumer_group_record_bytes(group_id)]
    return [r for r in out if r is not None]


def _loaded(groups: dict[str, ClassicGroup]) -> dict[str, Any]:
    return {
        gid: (
            g.state,
            g.generation_id,
            g.protocol_type,
            g.protocol_name,
            g.leader_id,
            {mid: (m.assignment, m.protocols) for mid, m in g.members.items()},
            sorted((t, p, o.offset) for t, p, o in g.offsets.items()),
        )
        for gid, g in groups.items()
    }


def test_rule_44_consumer_group_records_load_a_consumer_group_and_classic_groups_load_unchanged() -> None:
    """K56: the KIP-848 record types, interleaved with classic records, rebuild the consumer group (epochs, the
    member's subscription, target and reconciliation state); the classic groups load exactly as without them."""
    ctx = CoordinatorTestContext()
    g = ctx.join_with_n_members("g", 2)
    ctx.commit(group_id="g", member_id=g.leader_id, generation_id=g.generation_id, offsets={("t", 0): 42})
    ctx.commit(group_id="simple", offsets={("t", 1): 7})
    partition = ctx.coordinator.partition_for("g")
    classic = [r for r in ctx.store.records(partition)]
    kip848 = _consumer_group_records("cg")
    mixed = [kip848[0], *classic[:1], *kip848[1:4], *classic[1:], *kip848[4:]]

    baseline = replay(partition, classic, Events(EventRecorder()))
    recorder = EventRecorder()
    loaded = replay(partition, mixed, Events(recorder))

    assert _loaded(loaded.groups) == _loaded(baseline.groups) and "cg" not in loaded.groups
    assert (loaded.records, loaded.skipped) == (len(mixed), 0)
    group = loaded.consumer_groups["cg"]
    assert (group.group_epoch, group.assignment_epoch) == (3, 3)
    assert list(group.members) == ["m1"]
    member = group.members["m1"]
    assert (member.subscribed_topic_names, member.server_assignor, member.client_id) == (("orders",), "uniform", "c1")
    assert member.classic is not None and member.classic.protocols == (("range", b"\x01\x02"),)
    topic = kafka_uuid_to_str(TOPIC_ID)
    assert (member.member_epoch, member.assignment.previous_member_epoch) == (3, 2)
    assert member.assignment.assigned_partitions == {(topic, 0)}
    assert member.assignment.partitions_pending_revocation == {(topic, 1)}
    assert group.target == {"m1": {topic: frozenset({0, 1})}}
    assert group.subscription_metadata["orders"].partitions == 2
    assert group.state.value == "Stable"  # K39 reads the state byte (0) and the epochs, all at 3
    assert recorder.of("partition.record_skipped") == []  # not reported as unknown or malformed
