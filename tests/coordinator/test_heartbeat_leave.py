"""Heartbeat (#26-#27) and LeaveGroup (#28-#31)."""

from __future__ import annotations

from coordinator.state import GroupState
from protocol.errors import ErrorCode
from tests.coordinator.harness import CoordinatorTestContext, completing, dead_group

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


def test_rule_27_offset_commit_in_preparing_rebalance_moves_the_session_deadline() -> None:
    """PreparingRebalance accepts the previous generation's commit (#32) and, as in Stable, it proves liveness: the
    follower that never heartbeats survives its old deadline and expires exactly one session after the commit."""
    ctx = CoordinatorTestContext()
    g = ctx.join_with_n_members("g", 2, rebalance_timeout_ms=60_000)
    follower = g.followers[0]
    rejoin = ctx.join(group_id="g", member_id=g.leader_id, rebalance_timeout_ms=60_000)
    assert ctx.state("g") is GroupState.PREPARING_REBALANCE and not rejoin.done
    ctx.assert_heartbeat_deadline("g", follower, 10_000)
    ctx.sleep(8_000)
    commit = ctx.commit(group_id="g", member_id=follower, generation_id=g.generation_id)
    assert ctx.commit_errors(commit) == {("topic", 0): ErrorCode.NONE}
    ctx.assert_heartbeat_deadline("g", follower, 18_000)
    ctx.sleep_until(17_999)
    assert ctx.group("g").has_member(follower) and not rejoin.done  # alive past its old deadline of 10_000
    ctx.sleep(1)
    assert not ctx.group("g").has_member(follower)
    assert [e["member"] for e in ctx.events.of("member.expired")] == [follower]
    assert rejoin.done and rejoin.value.generation_id == g.generation_id + 1  # the join completes without it


def test_rule_27_a_parked_sync_group_keeps_a_member_alive_past_its_session() -> None:
    ctx = CoordinatorTestContext()
    ctx.auto_tick = False
    joins = [ctx.join_dynamic("g", rebalance_timeout_ms=60_000) for _ in range(2)]
    ctx.auto_tick = True
    ctx.tick()
    leader, generation = joins[0].value.leader, joins[0].value.generation_id
    follower = next(r.value.member_id for r in joins if r.value.member_id != leader)
    ctx.sleep(1_000)
    parked = ctx.sync(group_id="g", member_id=follower, generation_id=generation)
    ctx.assert_heartbeat_deadline("g", follower, 11_000)  # SyncGroup restarts the session (Part 1.3)
    for _ in range(6):  # the leader heartbeats but does not sync yet; the follower's connection is muted
        ctx.sleep(5_000)
        assert ctx.heartbeat("g", leader, generation) is ErrorCode.NONE
    assert ctx.now_ms == 31_000 and not parked.done
    assert ctx.group("g").has_member(follower)  # its session passed at 11_000 and 21_000: the parked sync counts
    ctx.assert_heartbeat_deadline("g", follower, 41_000)  # re-armed at 31_000 (documented deviation)
    assert ctx.events.of("member.expired") == []
    lead = ctx.sync(group_id="g", member_id=leader, generation_id=generation, assignments={follower: b"f"})
    assert lead.value.error_code == ErrorCode.NONE and parked.value.assignment == b"f"
    ctx.assert_heartbeat_deadline("g", follower, 41_000)  # the answer restarts it from now (#25)


def test_rule_27_a_brand_new_members_parked_join_does_not_keep_it_past_the_new_member_timeout() -> None:
    """KAFKA-7610: a member whose first JoinGroup is parked is not kept alive by it; it is dropped after the
    new-member join timeout (not its session timeout) and answered UNKNOWN_MEMBER_ID with an empty member id."""
    ctx = CoordinatorTestContext(new_member_join_timeout_ms=30_000)
    g = ctx.join_with_n_members("g", 1, rebalance_timeout_ms=60_000)
    ctx.sleep(1_000)
    newcomer = ctx.join_dynamic("g", session_timeout_ms=10_000, rebalance_timeout_ms=60_000)
    assert not newcomer.done and ctx.state("g") is GroupState.PREPARING_REBALANCE
    newcomer_id = next(m for m in ctx.group("g").members if m != g.leader_id)
    ctx.assert_heartbeat_deadline("g", newcomer_id, 31_000)  # 1_000 + new-member join timeout, not + session
    while ctx.now_ms + 5_000 < 31_000:  # the old member heartbeats (never rejoins): the join cannot complete
        ctx.sleep(5_000)
        assert ctx.heartbeat("g", g.leader_id, g.generation_id) is ErrorCode.REBALANCE_IN_PROGRESS
    ctx.sleep_until(30_999)
    assert ctx.group("g").has_member(newcomer_id) and not newcomer.done
    ctx.sleep(1)
    assert not ctx.group("g").has_member(newcomer_id)
    assert newcomer.value.error_code == ErrorCode.UNKNOWN_MEMBER_ID and newcomer.value.member_id == ""
    assert ctx.heartbeat_deadline("g", newcomer_id) is None
    assert [e["member"] for e in ctx.events.of("member.expired")] == [newcomer_id]


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
