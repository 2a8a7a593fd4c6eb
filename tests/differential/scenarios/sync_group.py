"""SyncGroup rules #20-#25 of design/group-protocol.md."""

from __future__ import annotations

import dataclasses

from protocol.registry import ApiKey
from tests.differential.registry import Known, scenario
from tests.differential.scenarios.common import SYNC_V, heartbeat, one_partition_plan, sync, sync_body
from tests.differential.scenarios.group_flow import (
    NO_ANSWER,
    Member,
    collect_join,
    error_within,
    group_state,
    join_in_order,
    leave,
    new_member,
    pair,
    park_sync,
    send_member_join,
    stable_group,
)
from tests.differential.session import Pending, Session


@scenario("#20")
async def sync_validation_order(s: Session) -> None:
    """SyncGroup checks the member first, then the generation, then (v5+) the protocol type and name, which must be
    present and match the group's; else UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION, INCONSISTENT_GROUP_PROTOCOL."""
    group = s.name("sync-validate")
    a = await new_member(s, group, "A")
    await stable_group(s, group, [a])
    conn = await s.connect()
    await sync(conn, group, 7, "stranger", "unknown member, wrong generation")
    await sync(conn, group, 7, a.member_id, "wrong generation")
    await sync(conn, group, 7, a.member_id, "wrong generation, bad protocol type")
    base = sync_body(group, 1, a.member_id)
    cases = {
        "another protocol type": dataclasses.replace(base, protocol_type="connect"),
        "another protocol name": dataclasses.replace(base, protocol_name="roundrobin"),
        "no protocol type": dataclasses.replace(base, protocol_type=None),
        "no protocol name": dataclasses.replace(base, protocol_name=None),
    }
    for label, body in cases.items():
        await conn.call(ApiKey.SYNC_GROUP, SYNC_V, body, f"v5, {label}")
    older = dataclasses.replace(base, protocol_type=None, protocol_name=None)
    await conn.call(ApiKey.SYNC_GROUP, 4, older, "v4 carries neither")


@scenario("#21")
async def sync_outside_a_rebalance(s: Session) -> None:
    """SyncGroup to a missing or Empty group is UNKNOWN_MEMBER_ID; during PreparingRebalance REBALANCE_IN_PROGRESS."""
    conn = await s.connect()
    await sync(conn, s.name("sync-nogroup"), 1, "ghost", "missing group")
    group = s.name("sync-states")
    a, b = await pair(s, group)
    pending = send_member_join(group, a, topics=("orders", "payments"))
    await a.conn.parked(pending, "A rejoins with a new subscription", 300)
    await sync(b.conn, group, 1, b.member_id, "B syncs during the rebalance")
    await leave(b.conn, group, b.member_id, "B leaves")
    await a.conn.reply(pending, "A joined alone")
    await leave(b.conn, group, a.member_id, "A leaves")
    await sync(conn, group, 2, a.member_id, "Empty group")


async def _followers_wait_for_the_leader(s: Session, group: str) -> tuple[Member, Member, Member, Pending, Pending]:
    """A (the leader), B and C in generation 1; B's and C's SyncGroups parked, waiting for A's."""
    a, b, c = [await new_member(s, group, name) for name in "ABC"]
    await join_in_order(s, group, [a, b, c], "form")
    pending_b = await park_sync(group, b, "B syncs before the leader")
    pending_c = await park_sync(group, c, "C syncs before the leader")
    return a, b, c, pending_b, pending_c


@scenario("#22")
async def leader_sync_completes_parked_syncs(s: Session) -> None:
    """In CompletingRebalance every SyncGroup waits for the leader's; a member the leader leaves out of its plan gets
    an empty assignment; the group is then Stable."""
    group = s.name("sync-complete")
    a, b, c, pending_b, pending_c = await _followers_wait_for_the_leader(s, group)
    plan = one_partition_plan("orders", a.member_id, b.member_id)
    await sync(a.conn, group, 1, a.member_id, "the leader leaves C out", plan=plan)
    await b.conn.reply(pending_b, "B's assignment")
    await c.conn.reply(pending_c, "C's assignment")
    await group_state(s, a.conn, group, "stable")


@scenario("#23")
async def stable_sync_repeats_the_assignment(s: Session) -> None:
    """In Stable any member's SyncGroup, repeated or not, gets its current assignment at once (a new plan from the
    leader is ignored)."""
    group = s.name("sync-stable")
    a, b = await pair(s, group)
    await sync(b.conn, group, 1, b.member_id, "B again")
    plan = one_partition_plan("orders", b.member_id, a.member_id)
    await sync(a.conn, group, 1, a.member_id, "the leader again with another plan", plan=plan)
    await sync(b.conn, group, 1, b.member_id, "B once more")


@scenario("#24")
async def members_that_never_sync_are_removed(s: Session) -> None:
    """A member that got its JoinGroup answer but never sends SyncGroup is removed at the rebalance timeout, and a
    new rebalance starts."""
    group = s.name("sync-expire")
    a = await new_member(s, group, "A", rebalance_ms=1000)
    b = await new_member(s, group, "B", rebalance_ms=1000)
    await join_in_order(s, group, [a, b], "form")
    await sync(a.conn, group, 1, a.member_id, "A syncs", plan=one_partition_plan("orders", a.member_id, b.member_id))
    await s.sleep_ms(1500)  # B's sync deadline is at 1 s, the next rebalance's at 2 s
    await heartbeat(a.conn, group, 1, a.member_id, "A's heartbeat after B's sync deadline")
    await heartbeat(b.conn, group, 1, b.member_id, "B's heartbeat")
    await group_state(s, a.conn, group, "B is gone")
    await collect_join(s, a, send_member_join(group, a), "A rejoins")


@scenario("#24")
async def new_rebalance_answers_parked_syncs(s: Session) -> None:
    """A rebalance that starts while SyncGroups are parked answers them REBALANCE_IN_PROGRESS with no assignment."""
    group = s.name("sync-restart")
    a, b = await pair(s, group, stable=False)
    pending = await park_sync(group, b, "B syncs before the leader", 300)
    rejoin = send_member_join(group, a, topics=("orders", "payments"))
    await a.conn.parked(rejoin, "A rejoins with a new subscription", 300)
    await b.conn.reply(pending, "B's parked sync")


@scenario("#22")
async def leader_plan_with_strangers(s: Session) -> None:
    """The leader's plan naming a member that is not in the group, or naming a member twice: what each broker
    hands out."""
    group = s.name("sync-strangers")
    a, b = await pair(s, group, stable=False)
    body = sync_body(group, 1, a.member_id, one_partition_plan("orders", a.member_id, "stranger", b.member_id))
    body.assignments.append(dataclasses.replace(body.assignments[0], assignment=b"second"))
    await a.conn.call(ApiKey.SYNC_GROUP, SYNC_V, body, "the leader's plan")
    await sync(b.conn, group, 1, b.member_id, "B's assignment")
    await group_state(s, a.conn, group, "stable")


@scenario("#20")
async def sync_wrong_generation_while_completing(s: Session) -> None:
    """In CompletingRebalance a SyncGroup of another generation is ILLEGAL_GENERATION at once, not parked."""
    group = s.name("sync-gen")
    _, b = await pair(s, group, stable=False)
    await sync(b.conn, group, 0, b.member_id, "B with generation 0")
    await sync(b.conn, group, 2, b.member_id, "B with generation 2")


@scenario("#20")
async def sync_wrong_generation_while_preparing(s: Session) -> None:
    """During PreparingRebalance a SyncGroup of another generation is ILLEGAL_GENERATION (the generation is checked
    before the state)."""
    group = s.name("sync-gen-prep")
    a, b = await pair(s, group)
    pending = send_member_join(group, a, topics=("orders", "payments"))
    await a.conn.parked(pending, "A rejoins with a new subscription", 300)
    await sync(b.conn, group, 0, b.member_id, "B with generation 0")
    await sync(b.conn, group, 1, b.member_id, "B with generation 1")


@scenario(
    "#22",
    known=(
        Known(
            "C's parked sync",
            {"error_code": 25},
            NO_ANSWER,
            "Kafka 4.4 never answers the parked SyncGroup of a member removed while it waits (the client waits out "
            "its request timeout); group-broker answers it UNKNOWN_MEMBER_ID at once, so the client rejoins.",
        ),
    ),
)
async def member_removed_while_its_sync_is_parked(s: Session) -> None:
    """A member removed (LeaveGroup from elsewhere) while its SyncGroup waits for the leader, and the other parked
    syncs: what each is answered."""
    group = s.name("sync-removed")
    a, b, c, pending_b, pending_c = await _followers_wait_for_the_leader(s, group)
    await leave(a.conn, group, c.member_id, "C is made to leave")
    await error_within(s, pending_c, "C's parked sync")
    await b.conn.reply(pending_b, "B's parked sync")
    await group_state(s, a.conn, group, "after the leave")


@scenario(
    "#22",
    known=(
        Known(
            "B's first sync",
            {"error_code": 27},
            NO_ANSWER,
            "Kafka 4.4 replaces a member's parked SyncGroup by its newer one and never answers the first (that "
            "client waits out its request timeout); group-broker answers it REBALANCE_IN_PROGRESS, so every parked "
            "request gets exactly one answer.",
        ),
    ),
)
async def second_sync_while_the_first_is_parked(s: Session) -> None:
    """A follower whose SyncGroup is parked sends another one on a second connection: what each is answered when
    the leader's arrives."""
    group = s.name("double-sync")
    a, b = await pair(s, group, stable=False)
    first = await park_sync(group, b, "B syncs and waits")
    retry = Member("B", await s.connect("client-b"), b.member_id, generation=b.generation)
    second = await park_sync(group, retry, "B syncs again and waits")
    plan = one_partition_plan("orders", a.member_id, b.member_id)
    await sync(a.conn, group, 1, a.member_id, "the leader syncs", plan=plan)
    await error_within(s, first, "B's first sync")
    await retry.conn.reply(second, "B's second sync")
