"""Heartbeat and liveness rules #26-#27 and LeaveGroup rules #28-#31 of design/group-protocol.md."""

from __future__ import annotations

import time

from protocol.messages.heartbeat import HeartbeatRequest
from protocol.messages.leave_group import LeaveGroupRequest, MemberIdentity
from protocol.registry import ApiKey
from tests.differential.registry import scenario
from tests.differential.scenarios.common import (
    describe,
    heartbeat,
    join,
    join_body,
    member_id_of,
    send_join,
    sync_body,
)
from tests.differential.scenarios.group_state import ask, commit, make_topic, stable_group, stable_pair
from tests.differential.session import Conn, Session

BEAT_MS = 250


@scenario("#26")
async def heartbeat_in_every_state(s: Session) -> None:
    """Heartbeat: missing group, Empty (simple) group, CompletingRebalance, Stable, wrong generation, unknown
    member, PreparingRebalance (REBALANCE_IN_PROGRESS)."""
    a, b = await s.connect("client-a"), await s.connect("client-b")
    group = s.name("beat")
    await heartbeat(a, s.name("beat-missing"), 1, "ghost", "missing group")
    simple = s.name("beat-simple")
    topic = s.name("beat-t")
    await make_topic(s, a, topic, 1)
    await commit(a, simple, {(topic, 0): 1}, "simple group commit")
    await heartbeat(a, simple, 0, "ghost", "Empty group, unknown member")
    joined = await join(s, a, group, "A", "A joins")
    ida, generation = joined.member_id, joined.generation_id
    await heartbeat(a, group, generation, ida, "CompletingRebalance")
    await a.call(ApiKey.SYNC_GROUP, 5, sync_body(group, generation, ida, plan={ida: b""}), "A syncs")
    await heartbeat(a, group, generation, ida, "Stable")
    await heartbeat(a, group, generation + 1, ida, "Stable, wrong generation")
    await heartbeat(a, group, generation, "ghost", "Stable, unknown member")
    idb = await member_id_of(s, b, group, "B", "B gets an id")
    await heartbeat(b, group, generation, idb, "Stable, pending member B")
    pb = send_join(b, group, idb)
    await b.parked(pb, "B waits for A", 200)
    await heartbeat(a, group, generation, ida, "PreparingRebalance")
    await heartbeat(a, group, generation + 1, ida, "PreparingRebalance, wrong generation")
    await describe(a, group, "described while preparing")
    pa = send_join(a, group, ida)
    await a.reply(pa, "A rejoins")
    await b.reply(pb, "B joined")


async def _beat_until_told(conn: Conn, group: str, generation: int, member_id: str, window_ms: int) -> int:
    """Heartbeat every BEAT_MS until an answer is not NONE or the window ends; the last error code (unrecorded:
    how many beats it takes is timing, the answer is behaviour)."""
    deadline = time.monotonic() + window_ms / 1000
    code = 0
    while time.monotonic() < deadline:
        body = HeartbeatRequest(group_id=group, generation_id=generation, member_id=member_id)
        code = (await ask(conn, ApiKey.HEARTBEAT, 4, body)).error_code
        if code != 0:
            return int(code)
        await conn.session.sleep_ms(BEAT_MS)
    return code


@scenario("#26")
async def rebalance_heartbeats_keep_a_member_alive(s: Session) -> None:
    """A member told REBALANCE_IN_PROGRESS by its heartbeats stays alive past its session timeout: the heartbeat
    still resets the timer, so its late rejoin lands in the new generation with the newcomer."""
    a, b = await s.connect("client-a"), await s.connect("client-b")
    group = s.name("beat-alive")
    ida, generation = await stable_group(s, a, group, "A", "A forms the group", session_ms=1000)
    idb = await member_id_of(s, b, group, "B", "B gets an id")
    pb = send_join(b, group, idb)
    await b.parked(pb, "B waits for A", 200)
    started = time.monotonic()
    told = []
    while time.monotonic() - started < 2.0:  # twice A's session timeout
        told.append(await _beat_until_told(a, group, generation, ida, BEAT_MS))
        await s.sleep_ms(BEAT_MS)
    s.note("every heartbeat said REBALANCE_IN_PROGRESS", set(told) == {27})
    await b.parked(pb, "B still waits for A", 100)
    pa = send_join(a, group, ida, session_ms=1000)
    await a.reply(pa, "A rejoins")
    await b.reply(pb, "B joined")


@scenario("#27")
async def session_expiry_removes_member(s: Session) -> None:
    """A member that stops heartbeating is removed after its session timeout and the group rebalances: the other
    member's heartbeat says REBALANCE_IN_PROGRESS and its rejoin forms the next generation alone."""
    a, b = await s.connect("client-a"), await s.connect("client-b")
    group = s.name("expiry")
    ida, _, generation = await stable_pair(s, a, b, group, "A and B form the group", session_ms=1000)
    code = await _beat_until_told(a, group, generation, ida, 5000)
    s.note("A is told to rebalance", code)
    await describe(a, group, "described after B expired")
    await join(s, a, group, "A", "A rejoins alone", session_ms=1000)


@scenario("#27")
async def static_member_session_expiry(s: Session) -> None:
    """A static member that stops heartbeating is removed after its session timeout too, and the group
    rebalances without it."""
    a, b = await s.connect("client-a"), await s.connect("client-b")
    group = s.name("static-expiry")
    ida = await member_id_of(s, a, group, "A", "A gets an id", session_ms=6000)
    pa = send_join(a, group, ida, session_ms=6000)
    await a.parked(pa, "A waits for the delay", 100)
    pb = send_join(b, group, "", instance_id="inst-b", session_ms=1000)
    joined = await a.reply(pa, "A joined")
    answer = await b.reply(pb, "static B joined")
    s.alias("B", answer.member_id)
    generation = joined.generation_id
    pb_sync = b.send(ApiKey.SYNC_GROUP, 5, sync_body(group, generation, answer.member_id, instance_id="inst-b"))
    plan = {ida: b"plan-a", answer.member_id: b"plan-b"}
    await a.call(ApiKey.SYNC_GROUP, 5, sync_body(group, generation, ida, plan=plan), "A syncs")
    await b.reply(pb_sync, "B syncs")
    s.note("A is told to rebalance", await _beat_until_told(a, group, generation, ida, 5000))
    await describe(a, group, "described after B expired")


def _leave(group: str, member_id: str = "", members: list[MemberIdentity] | None = None) -> LeaveGroupRequest:
    return LeaveGroupRequest(group_id=group, member_id=member_id, members=members or [])


@scenario("#28")
async def leave_v0_to_v2_single_member(s: Session) -> None:
    """v0-2 carry one member id; its error is the top-level error code."""
    conn = await s.connect()
    group = s.name("leave-old")
    ida, _ = await stable_group(s, conn, group, "A", "A forms the group")
    for version in (0, 1, 2):
        await conn.call(ApiKey.LEAVE_GROUP, version, _leave(group, "ghost"), f"v{version} unknown member")
    await conn.call(ApiKey.LEAVE_GROUP, 1, _leave(s.name("leave-nogroup"), "ghost"), "v1 unknown group")
    await conn.call(ApiKey.LEAVE_GROUP, 2, _leave(group, ida), "v2 A leaves")
    await describe(conn, group, "described after A left")


@scenario("#29")
async def leave_v3_batch_and_static_removal(s: Session) -> None:
    """v3+ take a batch and answer per member (top level NONE); member id "" plus an instance id removes that
    static member; an unknown instance id is UNKNOWN_MEMBER_ID for that entry only."""
    a, b = await s.connect("client-a"), await s.connect("client-b")
    group = s.name("leave-batch")
    await stable_pair(s, a, b, group, "A and B form the group", instance_id=None)
    ida = next(real for real, name in s.aliases.items() if name == "A")
    batch = [
        MemberIdentity(member_id=ida, reason="done"),
        MemberIdentity(member_id="ghost"),
        MemberIdentity(member_id="", group_instance_id="nobody"),
    ]
    for version in (3, 5):
        body = _leave(group, members=batch if version == 5 else batch[1:])
        await a.call(ApiKey.LEAVE_GROUP, version, body, f"v{version} batch")
    await describe(a, group, "described after the batch")


@scenario("#29")
async def leave_static_member_by_instance_id(s: Session) -> None:
    """An administrative LeaveGroup (member id "", instance id set) removes a static member and rebalances."""
    a = await s.connect("client-a")
    group = s.name("leave-static")
    await stable_group(s, a, group, "A", "static A forms the group", instance_id="inst-a")
    removal = [MemberIdentity(member_id="", group_instance_id="inst-a")]
    await a.call(ApiKey.LEAVE_GROUP, 4, _leave(group, members=removal), "remove inst-a")
    await describe(a, group, "described after the removal")


@scenario("#29")
async def pending_member_leaves(s: Session) -> None:
    """A member that only got MEMBER_ID_REQUIRED (pending) can leave; its id is unknown afterwards."""
    conn = await s.connect()
    group = s.name("leave-pending")
    await stable_group(s, conn, group, "A", "A forms the group")
    idp = await member_id_of(s, conn, group, "P", "P gets an id")
    await conn.call(ApiKey.LEAVE_GROUP, 5, _leave(group, members=[MemberIdentity(member_id=idp)]), "P leaves")
    await describe(conn, group, "described after P left")
    await conn.call(ApiKey.JOIN_GROUP, 9, join_body(group, idp), "P joins with its old id")


@scenario("#30")
async def leave_unknown_group(s: Session) -> None:
    """A LeaveGroup for a group that does not exist: top-level NONE, every member UNKNOWN_MEMBER_ID (v3+)."""
    conn = await s.connect()
    members = [MemberIdentity(member_id="ghost"), MemberIdentity(member_id="", group_instance_id="nobody")]
    await conn.call(ApiKey.LEAVE_GROUP, 3, _leave(s.name("leave-missing"), members=members), "v3 unknown group")
    await conn.call(ApiKey.LEAVE_GROUP, 0, _leave(s.name("leave-missing"), "ghost"), "v0 unknown group")


@scenario("#31")
async def leave_triggers_rebalance(s: Session) -> None:
    """A member leaving a Stable group starts a rebalance: the remaining member's heartbeat says so."""
    a, b = await s.connect("client-a"), await s.connect("client-b")
    group = s.name("leave-rebalance")
    _, idb, generation = await stable_pair(s, a, b, group, "A and B form the group")
    await b.call(ApiKey.LEAVE_GROUP, 5, _leave(group, members=[MemberIdentity(member_id=idb)]), "B leaves")
    ida = next(real for real, name in s.aliases.items() if name == "A")
    await heartbeat(a, group, generation, ida, "A heartbeats")
    await describe(a, group, "described after B left")
