"""Heartbeat (#26-#27) and LeaveGroup (#28-#31)."""

from __future__ import annotations

from coordinator.state import GroupState
from protocol.errors import ErrorCode
from tests.coordinator.harness import CoordinatorTestContext
from tests.coordinator.test_sync_group import completing, dead_group

NONE = ErrorCode.NONE


# -- #26 -----------------------------------------------------------------------------------------------------


def test_rule_26_heartbeat_errors_missing_dead_member_generation_empty() -> None:
    ctx = CoordinatorTestContext()
    assert ctx.heartbeat("missing", "m", 1) is ErrorCode.UNKNOWN_MEMBER_ID
    dead_group(ctx)
    assert ctx.heartbeat("dead", "m", 1) is ErrorCode.COORDINATOR_NOT_AVAILABLE
    ctx.store.auto_durable = True
    ctx.store.flush()
    g = ctx.join_with_n_members("g", 1)
    assert ctx.heartbeat("g", "stranger", g.generation_id) is ErrorCode.UNKNOWN_MEMBER_ID
    assert ctx.heartbeat("g", g.leader_id, g.generation_id + 1) is ErrorCode.ILLEGAL_GENERATION
    ctx.leave("g", (g.leader_id, None))
    assert ctx.state("g") is GroupState.EMPTY
    assert ctx.heartbeat("g", g.leader_id, g.generation_id + 1) is ErrorCode.UNKNOWN_MEMBER_ID


def test_rule_26_heartbeat_in_preparing_rebalance_resets_timer() -> None:
    ctx = CoordinatorTestContext()
    g = ctx.join_with_n_members("g", 2, rebalance_timeout_ms=60_000)
    ctx.join(group_id="g", member_id=g.leader_id, rebalance_timeout_ms=60_000)
    assert ctx.state("g") is GroupState.PREPARING_REBALANCE
    ctx.sleep(4_000)
    assert ctx.heartbeat("g", g.followers[0], g.generation_id) is ErrorCode.REBALANCE_IN_PROGRESS
    ctx.assert_heartbeat_deadline("g", g.followers[0], 14_000)


def test_rule_26_heartbeat_in_completing_rebalance_and_stable_is_none_and_resets_timer() -> None:
    ctx = CoordinatorTestContext()
    members, _leader, generation = completing(ctx, 2)
    ctx.sleep(3_000)
    assert ctx.heartbeat("g", members[1], generation) is NONE
    ctx.assert_heartbeat_deadline("g", members[1], 13_000)
    ctx2 = CoordinatorTestContext()
    g = ctx2.join_with_n_members("g", 1)
    ctx2.sleep(5_000)
    assert ctx2.heartbeat("g", g.leader_id, g.generation_id) is NONE
    ctx2.assert_heartbeat_deadline("g", g.leader_id, 15_000)


# -- #27 -----------------------------------------------------------------------------------------------------


def test_rule_27_session_expiry_removes_the_member_and_rebalances_a_stable_group() -> None:
    ctx = CoordinatorTestContext()
    g = ctx.join_with_n_members("g", 2, static=True)
    dead = g.followers[0]
    for _ in range(4):
        ctx.sleep(3_000)
        ctx.heartbeat("g", g.leader_id, g.generation_id)
    assert not ctx.group("g").has_member(dead)  # static members expire too
    assert ctx.events.of("member.expired")[0]["member"] == dead
    assert ctx.state("g") is GroupState.PREPARING_REBALANCE
    assert ctx.heartbeat("g", g.leader_id, g.generation_id) is ErrorCode.REBALANCE_IN_PROGRESS


def test_rule_27_expiry_during_preparing_rebalance_rechecks_join_completion() -> None:
    ctx = CoordinatorTestContext()
    g = ctx.join_with_n_members("g", 2, rebalance_timeout_ms=60_000)
    rejoin = ctx.join(group_id="g", member_id=g.leader_id, rebalance_timeout_ms=60_000)
    ctx.sleep(10_000)  # the follower neither rejoins nor heartbeats
    assert rejoin.done and rejoin.value.generation_id == g.generation_id + 1
    assert list(ctx.group("g").members) == [g.leader_id]


def test_rule_27_parked_join_or_sync_keeps_a_member_alive_but_not_a_brand_new_one() -> None:
    ctx = CoordinatorTestContext()
    g = ctx.join_with_n_members("g", 2, rebalance_timeout_ms=120_000)
    rejoin = ctx.join(group_id="g", member_id=g.leader_id, rebalance_timeout_ms=120_000)
    for _ in range(10):  # the follower heartbeats, never rejoins; the leader's parked join keeps it alive
        ctx.sleep(5_000)
        ctx.heartbeat("g", g.followers[0], g.generation_id)
    assert ctx.group("g").has_member(g.leader_id) and not rejoin.done
    assert ctx.heartbeat_deadline("g", g.leader_id) is not None  # always exactly one deadline


def test_rule_27_offset_commit_resets_the_session_timer_in_stable_and_preparing() -> None:
    ctx = CoordinatorTestContext()
    g = ctx.join_with_n_members("g", 1)
    ctx.sleep(8_000)
    ctx.commit(group_id="g", member_id=g.leader_id, generation_id=g.generation_id)
    ctx.assert_heartbeat_deadline("g", g.leader_id, 18_000)


# -- #28 -----------------------------------------------------------------------------------------------------


def test_rule_28_leave_v0_to_v2_reports_the_members_error_at_top_level() -> None:
    ctx = CoordinatorTestContext()
    g = ctx.join_with_n_members("g", 2)
    unknown = ctx.leave("g", ("nobody", None), version=1)
    assert unknown.error_code == ErrorCode.UNKNOWN_MEMBER_ID and unknown.members == []
    ok = ctx.leave("g", (g.followers[0], None), version=0)
    assert ok.error_code == NONE and ok.members == []
    assert not ctx.group("g").has_member(g.followers[0])


def test_rule_28_leave_v3_answers_per_member_with_top_level_none() -> None:
    ctx = CoordinatorTestContext()
    g = ctx.join_with_n_members("g", 3)
    response = ctx.leave("g", (g.followers[0], None), ("nobody", None), (g.followers[1], None), version=3)
    assert response.error_code == NONE
    assert [(m.member_id, m.error_code) for m in response.members] == [
        (g.followers[0], NONE),
        ("nobody", ErrorCode.UNKNOWN_MEMBER_ID),
        (g.followers[1], NONE),
    ]
    assert list(ctx.group("g").members) == [g.leader_id]


# -- #29 -----------------------------------------------------------------------------------------------------


def test_rule_29_admin_removal_by_instance_id_and_pending_members_can_leave() -> None:
    ctx = CoordinatorTestContext()
    g = ctx.join_with_n_members("g", 2, static=True)
    instance = g.instance_ids[g.followers[0]]
    response = ctx.leave("g", ("", instance), ("", "no-such-instance"))
    assert [(m.member_id, m.group_instance_id, m.error_code) for m in response.members] == [
        ("", instance, NONE),
        ("", "no-such-instance", ErrorCode.UNKNOWN_MEMBER_ID),
    ]
    assert not ctx.group("g").has_member(g.followers[0])
    pending = ctx.join(group_id="h", version=5).value.member_id
    assert ctx.group("h").is_pending_member(pending)
    assert ctx.leave("h", (pending, None)).members[0].error_code == NONE
    assert not ctx.group("h").is_pending_member(pending)
    assert ctx.heartbeat_deadline("h", pending) is None


# -- #30 -----------------------------------------------------------------------------------------------------


def test_rule_30_leave_of_unknown_group_and_dead_group() -> None:
    ctx = CoordinatorTestContext()
    response = ctx.leave("missing", ("a", None), ("b", "i"))
    assert response.error_code == NONE
    assert [(m.member_id, m.error_code) for m in response.members] == [
        ("a", ErrorCode.UNKNOWN_MEMBER_ID),
        ("b", ErrorCode.UNKNOWN_MEMBER_ID),
    ]
    assert ctx.leave("missing", ("a", None), version=2).error_code == ErrorCode.UNKNOWN_MEMBER_ID
    dead_group(ctx)
    dead = ctx.leave("dead", ("a", None))
    assert dead.error_code == ErrorCode.COORDINATOR_NOT_AVAILABLE and dead.members == []


# -- #31 -----------------------------------------------------------------------------------------------------


def test_rule_31_leave_triggers_a_rebalance_for_static_members_too() -> None:
    ctx = CoordinatorTestContext()
    g = ctx.join_with_n_members("g", 2, static=True)
    ctx.leave("g", (g.followers[0], g.instance_ids[g.followers[0]]))
    assert ctx.state("g") is GroupState.PREPARING_REBALANCE
    assert ctx.events.of("rebalance.started")[-1]["reason"].startswith("explicit LeaveGroup")
    members, leader, _generation = completing(ctx := CoordinatorTestContext(), 2)
    ctx.leave("g", (next(m for m in members if m != leader), None))
    assert ctx.state("g") is GroupState.PREPARING_REBALANCE


def test_rule_31_last_member_leaving_empties_the_group_and_persists_it() -> None:
    ctx = CoordinatorTestContext()
    g = ctx.join_with_n_members("g", 1)
    ctx.leave("g", (g.leader_id, None))
    group = ctx.group("g")
    assert group.state is GroupState.EMPTY and group.generation_id == g.generation_id + 1
    record = ctx.store.records(group.partition)[-1]
    assert record.value is not None and record.value.members == []  # type: ignore[union-attr]
    assert record.value.generation == 2  # type: ignore[union-attr]
