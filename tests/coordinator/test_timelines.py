"""Part 1.4's timelines T1-T5, second by second (times in ms)."""

from __future__ import annotations

from coordinator.state import GroupState
from protocol.errors import ErrorCode
from tests.coordinator.harness import CoordinatorTestContext


def test_timeline_t1_deadlines_move_with_every_interaction() -> None:
    ctx = CoordinatorTestContext(auto_durable=False, group_min_session_timeout_ms=1_000)
    c1 = ctx.join_dynamic("g", session_timeout_ms=5_000, rebalance_timeout_ms=5_000)
    member = c1.value.member_id
    ctx.assert_heartbeat_deadline("g", member, 5_000)  # join completes at t=0
    ctx.sleep(1_000)
    sync = ctx.sync(group_id="g", member_id=member, generation_id=1)
    ctx.assert_heartbeat_deadline("g", member, 6_000)  # SyncGroup at t=1
    ctx.sleep(2_000)
    ctx.store.flush()  # SyncGroup response at t=3
    assert sync.value.error_code == ErrorCode.NONE
    ctx.assert_heartbeat_deadline("g", member, 8_000)
    ctx.sleep(4_999)
    assert ctx.group("g").has_member(member)
    ctx.sleep(1)  # nothing arrived by the deadline
    assert not ctx.group("g").has_member(member)
    assert ctx.events.of("member.expired")[0]["member"] == member


def test_timeline_t2_a_parked_sync_group_keeps_a_member_alive() -> None:
    ctx = CoordinatorTestContext(auto_durable=False, offsets_commit_timeout_ms=60_000, auto_tick=False)
    c2 = ctx.join_dynamic("g", session_timeout_ms=20_000, rebalance_timeout_ms=20_000)  # first: the leader
    c1 = ctx.join_dynamic("g", session_timeout_ms=10_000, rebalance_timeout_ms=10_000)
    c3 = ctx.join_dynamic("g", session_timeout_ms=40_000, rebalance_timeout_ms=40_000)
    ctx.auto_tick = True
    ctx.tick()  # join completes at t=0
    m1, m2, m3 = (r.value.member_id for r in (c1, c2, c3))
    assert c2.value.leader == m2
    for member, deadline in ((m1, 10_000), (m2, 20_000), (m3, 40_000)):
        ctx.assert_heartbeat_deadline("g", member, deadline)
    ctx.sleep(3_000)
    s1 = ctx.sync(group_id="g", member_id=m1, generation_id=1)
    ctx.assert_heartbeat_deadline("g", m1, 13_000)
    ctx.sleep_until(13_000)  # C1's deadline passes, but its SyncGroup is parked: it stays
    assert ctx.group("g").has_member(m1) and not ctx.events.of("member.expired")
    ctx.sleep_until(19_999)
    ctx.advance(1)  # the leader's SyncGroup arrives at t=20, as its deadline falls due
    s2 = ctx.sync(group_id="g", member_id=m2, generation_id=1, assignments={m1: b"a1", m2: b"a2", m3: b"a3"})
    ctx.assert_heartbeat_deadline("g", m2, 40_000)
    ctx.sleep_until(25_000)
    ctx.store.flush()  # assignment persisted; responses to C1 and C2 at t=25
    assert (s1.value.assignment, s2.value.assignment) == (b"a1", b"a2")
    ctx.assert_heartbeat_deadline("g", m1, 35_000)
    ctx.assert_heartbeat_deadline("g", m2, 45_000)
    ctx.sleep_until(35_000 - 1)
    ctx.heartbeat("g", m1, 1)
    ctx.advance(40_000 - ctx.now_ms)  # C3's SyncGroup arrives at t=40, as its deadline falls due
    s3 = ctx.sync(group_id="g", member_id=m3, generation_id=1)
    assert s3.done and s3.value.assignment == b"a3"  # Stable: answered at once
    ctx.assert_heartbeat_deadline("g", m3, 80_000)
    assert ctx.state("g") is GroupState.STABLE and len(ctx.group("g").members) == 3


def _t3_setup() -> tuple[CoordinatorTestContext, str, str]:
    ctx = CoordinatorTestContext(auto_tick=False)
    c1 = ctx.join_dynamic("g", session_timeout_ms=10_000, rebalance_timeout_ms=60_000)
    c2 = ctx.join_dynamic("g", session_timeout_ms=20_000, rebalance_timeout_ms=60_000)
    ctx.auto_tick = True
    ctx.tick()
    m1, m2 = c1.value.member_id, c2.value.member_id
    ctx.sync(group_id="g", member_id=m1, generation_id=1, assignments={m1: b"1", m2: b"2"})
    ctx.sync(group_id="g", member_id=m2, generation_id=1)
    assert ctx.state("g") is GroupState.STABLE  # since t=0
    ctx.assert_heartbeat_deadline("g", m1, 10_000)
    ctx.assert_heartbeat_deadline("g", m2, 20_000)
    return ctx, m1, m2


def test_timeline_t3_a_parked_join_group_keeps_a_member_alive() -> None:
    ctx, m1, m2 = _t3_setup()
    ctx.sleep_until(2_000)
    c3 = ctx.join_dynamic("g", session_timeout_ms=40_000, rebalance_timeout_ms=60_000)
    assert ctx.state("g") is GroupState.PREPARING_REBALANCE
    ctx.sleep_until(3_000)
    r1 = ctx.join(group_id="g", member_id=m1, session_timeout_ms=10_000, rebalance_timeout_ms=60_000)
    ctx.assert_heartbeat_deadline("g", m1, 10_000)  # JoinGroup does not reschedule
    ctx.sleep_until(10_000)
    assert ctx.group("g").has_member(m1) and not r1.done  # alive by its parked JoinGroup
    ctx.sleep_until(15_000)
    r2 = ctx.join(group_id="g", member_id=m2, session_timeout_ms=20_000, rebalance_timeout_ms=60_000)
    assert r1.done and r2.done and c3.done
    m3 = c3.value.member_id
    ctx.assert_heartbeat_deadline("g", m1, 25_000)
    ctx.assert_heartbeat_deadline("g", m2, 35_000)
    ctx.assert_heartbeat_deadline("g", m3, 55_000)


def test_timeline_t4_a_member_that_never_rejoins_is_dropped() -> None:
    ctx, m1, m2 = _t3_setup()
    ctx.sleep_until(2_000)
    c3 = ctx.join_dynamic("g", session_timeout_ms=40_000, rebalance_timeout_ms=60_000)
    ctx.sleep_until(3_000)
    r1 = ctx.join(group_id="g", member_id=m1, session_timeout_ms=10_000, rebalance_timeout_ms=60_000)
    ctx.sleep_until(19_999)
    assert not r1.done
    ctx.sleep_until(20_000)  # C2's session expires: removed, and the join completes without it
    assert not ctx.group("g").has_member(m2)
    assert r1.done and c3.done
    assert sorted(m.member_id for m in r1.value.members) == sorted([m1, c3.value.member_id])
    ctx.assert_heartbeat_deadline("g", m1, 30_000)
    ctx.assert_heartbeat_deadline("g", c3.value.member_id, 60_000)


def test_timeline_t5_rebalance_timeout_is_the_largest_members() -> None:
    ctx = CoordinatorTestContext(group_min_session_timeout_ms=1_000)
    g = ctx.join_with_n_members("g", 1, session_timeout_ms=10_000, version=0)
    other = ctx.join(group_id="g", version=0, session_timeout_ms=5_000)  # v0: rebalance timeout = session
    assert ctx.join(group_id="g", version=0, member_id=g.leader_id, session_timeout_ms=10_000).done
    assert other.done
    gen = other.value.generation_id
    ctx.sync(group_id="g", member_id=g.leader_id, generation_id=gen, version=0)
    ctx.sync(group_id="g", member_id=other.value.member_id, generation_id=gen, version=0)
    assert ctx.state("g") is GroupState.STABLE
    leader_rejoin = ctx.join(group_id="g", version=0, member_id=g.leader_id, session_timeout_ms=10_000)
    assert ctx.join_deadline("g") == ctx.now_ms + 10_000  # max(10 s, 5 s)
    start = ctx.now_ms
    for _ in range(3):  # the 5 s member stays alive by heartbeating, but never rejoins
        ctx.sleep(3_000)
        ctx.heartbeat("g", other.value.member_id, gen, version=0)
    ctx.sleep_until(start + 9_999)
    assert not leader_rejoin.done
    ctx.sleep(1)
    assert leader_rejoin.done and leader_rejoin.value.members[0].member_id == g.leader_id
    assert list(ctx.group("g").members) == [g.leader_id]
