"""The timelines T1-T5 of design/group-protocol.md (section 1.4), in real time: one second of the spec is about
100-200 ms here, session timeouts are at least 1 s, and every event the outcome depends on is 300 ms or more away
from the deadline it is checked against. Group state is read on a connection with nothing parked on it."""

from __future__ import annotations

from tests.differential.registry import scenario
from tests.differential.scenarios.common import heartbeat, one_partition_plan, sync
from tests.differential.scenarios.group_flow import (
    Member,
    collect_join,
    group_state,
    join_in_order,
    new_member,
    park_sync,
    send_member_join,
    stable_group,
)
from tests.differential.session import Pending, Session

LONG_REBALANCE_MS = 10_000
"""Rebalance timeouts the timelines never reach (so only session timeouts decide)."""


@scenario("T1")
async def t1_deadlines_move_with_every_interaction(s: Session) -> None:
    """A member's SyncGroup pushes its session deadline forward; with nothing after it, the member is removed at the
    new deadline."""
    group = s.name("t1")
    c1 = await new_member(s, group, "C1", session_ms=1000, rebalance_ms=LONG_REBALANCE_MS)
    await join_in_order(s, group, [c1], "join")
    observer = await s.connect()
    await s.sleep_ms(600)
    await sync(c1.conn, group, 1, c1.member_id, "C1 syncs at 0.6 s", plan=one_partition_plan("orders", c1.member_id))
    await s.sleep_ms(700)
    await group_state(s, observer, group, "at 1.3 s, past the first deadline")
    await s.sleep_ms(800)
    await group_state(s, observer, group, "at 2.1 s, past the second deadline")


@scenario("T2")
async def t2_parked_sync_keeps_a_member_alive(s: Session) -> None:
    """A member waiting in SyncGroup for the leader outlives its session timeout; its session restarts when the
    assignment goes out (#25); a member syncing late in Stable is answered at once."""
    group = s.name("t2")
    c2 = await new_member(s, group, "C2", session_ms=2500, rebalance_ms=LONG_REBALANCE_MS)
    c1 = await new_member(s, group, "C1", session_ms=1000, rebalance_ms=LONG_REBALANCE_MS)
    c3 = await new_member(s, group, "C3", session_ms=4000, rebalance_ms=LONG_REBALANCE_MS)
    await join_in_order(s, group, [c2, c1, c3], "join")
    observer = await s.connect()
    await s.sleep_ms(300)
    pending = await park_sync(group, c1, "C1 syncs at 0.3 s and waits past its session timeout", 1500)
    plan = one_partition_plan("orders", c2.member_id, c1.member_id, c3.member_id)
    await sync(c2.conn, group, 1, c2.member_id, "the leader C2 syncs at 1.8 s", plan=plan)
    await c1.conn.reply(pending, "C1's assignment")
    await s.sleep_ms(500)
    await sync(c3.conn, group, 1, c3.member_id, "C3 syncs at 2.3 s")
    await group_state(s, observer, group, "all three in Stable")


async def _t3_start(s: Session, group: str) -> tuple[Member, Member, Member, Pending, Pending]:
    """T3 and T4 up to t=0.3 s: C1 (session 1 s) and C2 (2 s) Stable; C3 joins at 0.2 s, C1 rejoins at 0.3 s."""
    c1 = await new_member(s, group, "C1", session_ms=1000, rebalance_ms=LONG_REBALANCE_MS)
    c2 = await new_member(s, group, "C2", session_ms=2000, rebalance_ms=LONG_REBALANCE_MS)
    await stable_group(s, group, [c1, c2])
    await s.sleep_ms(200)
    c3 = await new_member(s, group, "C3", session_ms=4000, rebalance_ms=LONG_REBALANCE_MS)
    joining = send_member_join(group, c3)
    await c3.conn.parked(joining, "C3 joins at 0.2 s", 100)
    rejoining = send_member_join(group, c1)
    return c1, c2, c3, joining, rejoining


@scenario("T3")
async def t3_parked_join_keeps_a_member_alive(s: Session) -> None:
    """A member waiting in JoinGroup outlives its session timeout; the join completes when the last member rejoins,
    with all three."""
    group = s.name("t3")
    c1, c2, c3, joining, rejoining = await _t3_start(s, group)
    await c1.conn.parked(rejoining, "C1 rejoins at 0.3 s and waits past its session timeout", 1200)
    await collect_join(s, c2, send_member_join(group, c2), "C2 rejoins at 1.5 s")
    await collect_join(s, c1, rejoining, "C1 joined")
    await collect_join(s, c3, joining, "C3 joined")


@scenario("T4")
async def t4_member_that_never_rejoins_is_dropped(s: Session) -> None:
    """As T3, but C2 neither rejoins nor heartbeats: it is removed at its session timeout and the join completes
    then, with C1 and C3."""
    group = s.name("t4")
    c1, c2, c3, joining, rejoining = await _t3_start(s, group)
    await c1.conn.parked(rejoining, "C1 rejoins at 0.3 s and waits past its session timeout", 1200)
    await collect_join(s, c1, rejoining, "C1 joined")
    await collect_join(s, c3, joining, "C3 joined")
    await heartbeat(c2.conn, group, 1, c2.member_id, "C2's heartbeat afterwards")


@scenario("T5")
async def t5_rebalance_timeout_is_the_largest(s: Session) -> None:
    """The join phase waits the group's rebalance timeout, the largest of its members' (1.5 s and 0.5 s here), then
    completes without the member that did not rejoin."""
    group = s.name("t5")
    a = await new_member(s, group, "A", rebalance_ms=1500)
    b = await new_member(s, group, "B", rebalance_ms=500)
    await stable_group(s, group, [a, b])
    pending = send_member_join(group, a)
    await a.conn.parked(pending, "A (the leader) rejoins and waits past B's rebalance timeout", 1000)
    await collect_join(s, a, pending, "A joined alone")
    await heartbeat(b.conn, group, 1, b.member_id, "B's heartbeat afterwards")
