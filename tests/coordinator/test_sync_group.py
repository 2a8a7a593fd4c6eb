"""SyncGroup: rules #20-#25."""

from __future__ import annotations

import pytest

from coordinator.state import GroupState
from protocol.errors import ErrorCode
from tests.coordinator.harness import CoordinatorTestContext, completing, dead_group

NONE = ErrorCode.NONE


def code(reply: object) -> ErrorCode:
    return ErrorCode(reply.value.error_code)  # type: ignore[attr-defined]


# -- #20 -----------------------------------------------------------------------------------------------------


def test_rule_20_sync_validation_order_dead_member_generation_protocol() -> None:
    ctx = CoordinatorTestContext()
    dead_group(ctx)
    assert code(ctx.sync(group_id="dead", member_id="m", generation_id=0)) is ErrorCode.COORDINATOR_NOT_AVAILABLE
    ctx.store.auto_durable = True
    ctx.store.flush()
    g = ctx.join_with_n_members("g", 2)
    assert code(ctx.sync(group_id="g", member_id="nobody", generation_id=9)) is ErrorCode.UNKNOWN_MEMBER_ID
    assert code(ctx.sync(group_id="g", member_id=g.leader_id, generation_id=9)) is ErrorCode.ILLEGAL_GENERATION
    wrong_type = ctx.sync(group_id="g", member_id=g.leader_id, generation_id=g.generation_id, protocol_type="connect")
    assert code(wrong_type) is ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    wrong_name = ctx.sync(group_id="g", member_id=g.leader_id, generation_id=g.generation_id, protocol_name="rr")
    assert code(wrong_name) is ErrorCode.INCONSISTENT_GROUP_PROTOCOL


def test_rule_20_sync_v5_requires_protocol_type_and_name_older_versions_do_not() -> None:
    ctx = CoordinatorTestContext()
    g = ctx.join_with_n_members("g", 1)
    for missing in ({"protocol_type": None}, {"protocol_name": None}):
        reply = ctx.sync(group_id="g", member_id=g.leader_id, generation_id=g.generation_id, version=5, **missing)
        assert code(reply) is ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    old = ctx.sync(
        group_id="g",
        member_id=g.leader_id,
        generation_id=g.generation_id,
        version=4,
        protocol_type=None,
        protocol_name=None,
    )
    assert code(old) is NONE


# -- #21 -----------------------------------------------------------------------------------------------------


def test_rule_21_sync_to_missing_or_empty_group_is_unknown_member_and_preparing_is_rebalancing() -> None:
    ctx = CoordinatorTestContext()
    assert code(ctx.sync(group_id="missing", member_id="m", generation_id=1)) is ErrorCode.UNKNOWN_MEMBER_ID
    g = ctx.join_with_n_members("g", 2)
    ctx.join(group_id="g", member_id=g.leader_id)
    assert ctx.state("g") is GroupState.PREPARING_REBALANCE
    reply = ctx.sync(group_id="g", member_id=g.followers[0], generation_id=g.generation_id)
    assert code(reply) is ErrorCode.REBALANCE_IN_PROGRESS
    ctx.leave("g", (g.leader_id, None), (g.followers[0], None))
    assert ctx.state("g") is GroupState.EMPTY
    assert code(ctx.sync(group_id="g", member_id=g.leader_id, generation_id=g.generation_id + 1)) is (
        ErrorCode.UNKNOWN_MEMBER_ID
    )


# -- #22 -----------------------------------------------------------------------------------------------------


def test_rule_22_syncs_park_until_the_leaders_assignment_is_durable() -> None:
    ctx = CoordinatorTestContext(auto_durable=False)
    members, leader, generation = completing(ctx, 3)
    follower1, follower2 = (m for m in members if m != leader)
    f1 = ctx.sync(group_id="g", member_id=follower1, generation_id=generation)
    assert not f1.done
    # The leader leaves follower2 out of its assignment: it gets an empty one.
    lead = ctx.sync(
        group_id="g", member_id=leader, generation_id=generation, assignments={leader: b"L", follower1: b"F1"}
    )
    assert not lead.done and not f1.done  # persisted first ...
    assert ctx.state("g") is GroupState.COMPLETING_REBALANCE
    assert ctx.store.pending_appends == 1
    ctx.store.flush()  # ... then answered
    assert ctx.state("g") is GroupState.STABLE
    assert (lead.value.assignment, f1.value.assignment) == (b"L", b"F1")
    assert lead.value.protocol_type == "consumer" and lead.value.protocol_name == "range"
    late = ctx.sync(group_id="g", member_id=follower2, generation_id=generation)
    assert code(late) is NONE and late.value.assignment == b""
    record = ctx.store.records(ctx.group("g").partition)[-1]
    assert {m.member_id: m.assignment for m in record.value.members} == {  # type: ignore[union-attr]
        leader: b"L",
        follower1: b"F1",
        follower2: b"",
    }


def test_rule_22_durability_after_the_group_moved_on_changes_nothing() -> None:
    ctx = CoordinatorTestContext(auto_durable=False)
    members, leader, generation = completing(ctx, 2)
    follower = next(m for m in members if m != leader)
    lead = ctx.sync(group_id="g", member_id=leader, generation_id=generation, assignments={leader: b"L"})
    rejoin = ctx.join(group_id="g", member_id=follower, topics=("new-topic",))  # a new rebalance starts
    assert code(lead) is ErrorCode.REBALANCE_IN_PROGRESS  # parked syncs answered by the new rebalance
    assert not rejoin.done
    ctx.store.flush()
    assert ctx.state("g") is GroupState.PREPARING_REBALANCE
    assert ctx.group("g").member(leader).assignment == b""


@pytest.mark.parametrize(
    ("append_error", "answered"),
    [
        (ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.NOT_COORDINATOR),
        (ErrorCode.KAFKA_STORAGE_ERROR, ErrorCode.NOT_COORDINATOR),
        (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.COORDINATOR_NOT_AVAILABLE),
        (ErrorCode.NOT_ENOUGH_REPLICAS, ErrorCode.COORDINATOR_NOT_AVAILABLE),
        # Kafka 4 (GroupMetadataManager's appendGroupMetadataErrorToResponseError): a timed-out write is
        # COORDINATOR_NOT_AVAILABLE, as for every coordinator write (the Scala coordinator answered 27).
        (ErrorCode.REQUEST_TIMED_OUT, ErrorCode.COORDINATOR_NOT_AVAILABLE),
        (ErrorCode.MESSAGE_TOO_LARGE, ErrorCode.UNKNOWN_SERVER_ERROR),
        (ErrorCode.RECORD_LIST_TOO_LARGE, ErrorCode.UNKNOWN_SERVER_ERROR),
        (ErrorCode.INVALID_FETCH_SIZE, ErrorCode.UNKNOWN_SERVER_ERROR),
    ],
)
def test_rule_22_failed_assignment_write_is_mapped_and_starts_a_new_rebalance(
    append_error: ErrorCode, answered: ErrorCode
) -> None:
    ctx = CoordinatorTestContext(auto_durable=False)
    members, leader, generation = completing(ctx, 2)
    follower = next(m for m in members if m != leader)
    f = ctx.sync(group_id="g", member_id=follower, generation_id=generation)
    lead = ctx.sync(group_id="g", member_id=leader, generation_id=generation)
    ctx.store.fail_pending(append_error)
    assert code(lead) is answered and code(f) is answered
    assert lead.value.assignment == b""
    assert ctx.state("g") is GroupState.PREPARING_REBALANCE
    assert "offsets_log.append_failed" in ctx.events.names()


def test_rule_22_assignment_write_that_never_becomes_durable_times_out() -> None:
    ctx = CoordinatorTestContext(auto_durable=False, offsets_commit_timeout_ms=5_000)
    _members, leader, generation = completing(ctx, 1)
    lead = ctx.sync(group_id="g", member_id=leader, generation_id=generation)
    ctx.sleep(4_999)
    assert not lead.done
    ctx.sleep(1)
    assert code(lead) is ErrorCode.COORDINATOR_NOT_AVAILABLE  # offsets.commit.timeout.ms, mapped as Kafka 4 does
    ctx.store.flush()  # a durability notice after the timeout is ignored
    assert ctx.state("g") is GroupState.PREPARING_REBALANCE
    assert ctx.group("g").member(leader).assignment == b""
    rejoin = ctx.join(group_id="g", member_id=leader)
    assert code(rejoin) is NONE and rejoin.value.generation_id == generation + 1


# -- #23 -----------------------------------------------------------------------------------------------------


def test_rule_23_sync_in_stable_returns_the_current_assignment_every_time() -> None:
    ctx = CoordinatorTestContext()
    g = ctx.join_with_n_members("g", 3)
    for member_id in g.member_ids * 2:
        reply = ctx.sync(group_id="g", member_id=member_id, generation_id=g.generation_id)
        assert code(reply) is NONE
        assert reply.value.assignment == f"assignment-{g.member_ids.index(member_id)}".encode()
        assert (reply.value.protocol_type, reply.value.protocol_name) == ("consumer", "range")


# -- #24 -----------------------------------------------------------------------------------------------------


def test_rule_24_members_that_never_sync_are_removed_and_a_new_rebalance_starts() -> None:
    ctx = CoordinatorTestContext()
    members, leader, generation = completing(ctx, 3)
    lazy = [m for m in members if m != leader]
    assert ctx.sync_deadline("g") == 10_000  # the rebalance timeout
    lead = ctx.sync(group_id="g", member_id=leader, generation_id=generation)
    assert lead.done and ctx.state("g") is GroupState.STABLE  # Stable, but two members never synced
    ctx.sleep(5_000)
    for m in members:
        ctx.heartbeat("g", m, generation)  # heartbeats do not count as syncing
    ctx.sleep(5_000)
    group = ctx.group("g")
    assert all(not group.has_member(m) for m in lazy)
    assert group.has_member(leader)
    expired = [e["member"] for e in ctx.events.of("member.expired")]
    assert sorted(expired) == sorted(lazy)
    assert ctx.state("g") is GroupState.PREPARING_REBALANCE
    rejoin = ctx.join(group_id="g", member_id=leader)
    assert code(rejoin) is NONE and rejoin.value.generation_id == generation + 1


def test_rule_24_the_sync_timer_fires_at_the_group_rebalance_timeout_and_removes_only_who_never_synced() -> None:
    ctx = CoordinatorTestContext()
    ctx.auto_tick = False
    joins = [ctx.join_dynamic("g", rebalance_timeout_ms=timeout) for timeout in (20_000, 30_000, 25_000)]
    ctx.auto_tick = True
    ctx.advance(1_000)
    ctx.tick()  # the join completes at 1_000
    assert ctx.state("g") is GroupState.COMPLETING_REBALANCE
    leader, generation = joins[0].value.leader, joins[0].value.generation_id
    members = [r.value.member_id for r in joins]
    synced, lazy = members[1], members[2]
    assert ctx.sync_deadline("g") == 31_000  # join completion + the group's (largest) rebalance timeout
    ctx.sleep(1_000)
    parked = ctx.sync(group_id="g", member_id=synced, generation_id=generation)
    assert not parked.done
    while ctx.now_ms + 5_000 < 31_000:  # the leader and the lazy member heartbeat (NONE in CompletingRebalance)
        ctx.sleep(5_000)
        assert ctx.heartbeat("g", leader, generation) is NONE
        assert ctx.heartbeat("g", lazy, generation) is NONE
    ctx.sleep_until(30_999)
    assert sorted(ctx.group("g").members) == sorted(members) and not parked.done
    ctx.sleep(1)
    group = ctx.group("g")
    assert list(group.members) == [synced]  # the two that never sent SyncGroup are removed, the synced one stays
    expired = ctx.events.of("member.expired")
    assert sorted(e["member"] for e in expired) == sorted([leader, lazy])
    assert {e["reason"] for e in expired} == {"no SyncGroup within the rebalance timeout"}
    assert code(parked) is ErrorCode.REBALANCE_IN_PROGRESS and parked.value.assignment == b""
    assert ctx.state("g") is GroupState.PREPARING_REBALANCE and group.leader_id == synced
    assert ctx.sync_deadline("g") is None
    assert ctx.join_deadline("g") == 31_000 + 30_000  # the new rebalance waits the remaining member's timeout


def test_rule_24_sync_timer_is_cancelled_once_everyone_synced() -> None:
    ctx = CoordinatorTestContext()
    g = ctx.join_with_n_members("g", 2)
    assert ctx.sync_deadline("g") is None
    assert g.generation_id == 1


def test_rule_24_a_new_rebalance_answers_parked_syncs_with_rebalance_in_progress() -> None:
    ctx = CoordinatorTestContext()
    members, leader, generation = completing(ctx, 2)
    follower = next(m for m in members if m != leader)
    parked = ctx.sync(group_id="g", member_id=follower, generation_id=generation)
    ctx.join_dynamic("g")  # a new member: rebalance
    assert code(parked) is ErrorCode.REBALANCE_IN_PROGRESS
    assert parked.value.assignment == b"" and parked.value.protocol_name is None


# -- #25 -----------------------------------------------------------------------------------------------------


def test_rule_25_session_timers_restart_when_assignments_go_out() -> None:
    ctx = CoordinatorTestContext(auto_durable=False)
    members, leader, generation = completing(ctx, 2)
    follower = next(m for m in members if m != leader)
    ctx.sleep(1_000)
    ctx.sync(group_id="g", member_id=follower, generation_id=generation)
    ctx.assert_heartbeat_deadline("g", follower, 11_000)
    ctx.sleep(1_000)
    ctx.sync(group_id="g", member_id=leader, generation_id=generation)
    ctx.sleep(4_000)
    ctx.store.flush()  # assignments go out at t=6000 (within offsets.commit.timeout.ms)
    ctx.assert_heartbeat_deadline("g", follower, 16_000)
    ctx.assert_heartbeat_deadline("g", leader, 16_000)
