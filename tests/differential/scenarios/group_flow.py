"""Forming groups for the JoinGroup, SyncGroup and timeline scenarios: members that join in a fixed order (so the
leader is the same on both brokers), a whole group taken to Stable, and heartbeats sent only to keep a member alive.

No scenarios here; only helpers (the registry imports every module of the package, which is harmless).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from protocol import api
from protocol.messages.describe_groups import DescribeGroupsRequest
from protocol.messages.heartbeat import HeartbeatRequest
from protocol.messages.leave_group import LeaveGroupRequest, MemberIdentity
from protocol.registry import ApiKey
from tests.differential.scenarios.common import (
    DESCRIBE_V,
    HEARTBEAT_V,
    JOIN_V,
    SYNC_V,
    member_id_of,
    one_partition_plan,
    send_join,
    sync,
    sync_body,
)
from tests.differential.session import CLOSED, REPLY_TIMEOUT_S, Conn, Pending, Session

ORDER_WINDOW_MS = 100
"""How long one member's parked join is watched before the next member sends its own: the join order (and so the
leader) is then the same on both brokers, and the window is recorded as ``{"parked_ms": ...}`` on both. Short
enough that every member of a new group arrives well within the 300 ms initial delay its predecessor started (each
arrival extends it), which a busy machine needs: at 150 ms Kafka once completed a generation without the second."""

LEAVE_V = 4


@dataclass(slots=True)
class Member:
    """One member of a scenario's group: its name in the transcript, its connection, what it sends when it joins."""

    name: str
    conn: Conn
    member_id: str = ""
    instance_id: str | None = None
    join_kw: dict[str, Any] = field(default_factory=dict)
    generation: int = -1


async def new_member(s: Session, group: str, name: str, *, static: bool = False, **join_kw: Any) -> Member:
    """A member on its own connection. A dynamic one gets its id now (MEMBER_ID_REQUIRED, recorded); a static one
    (instance id ``<group>-<name>``) gets its id from its first join, as Kafka admits static members at once."""
    conn = await s.connect(f"client-{name.lower()}")
    member = Member(name, conn, instance_id=f"{group}-{name}" if static else None, join_kw=join_kw)
    if not static:
        member.member_id = await member_id_of(s, conn, group, name, f"{name} gets an id", **join_kw)
    return member


def send_member_join(group: str, member: Member, version: int = JOIN_V, **override: Any) -> Pending:
    """``member``'s JoinGroup with its own settings (``override`` changes some of them for this join only)."""
    kw = {**member.join_kw, **override}
    return send_join(member.conn, group, member.member_id, version, instance_id=member.instance_id, **kw)


async def collect_join(s: Session, member: Member, pending: Pending, step: str) -> Any:
    """Record a join's answer and learn the member id and generation it carries."""
    answer = await member.conn.reply(pending, step)
    if answer is not None and answer.error_code == 0:
        member.member_id = s.alias(member.name, answer.member_id) or member.member_id
        member.generation = answer.generation_id
    return answer


async def send_in_order(group: str, members: Sequence[Member], step: str) -> list[Pending]:
    """Every member sends its JoinGroup, one after the other, each watched for ``ORDER_WINDOW_MS`` before the next
    goes out (so the first is the leader on both brokers); the answers are left to collect."""
    pending: list[Pending] = []
    for member in members:
        sent = send_member_join(group, member)
        pending.append(sent)
        if member is not members[-1]:
            await member.conn.parked(sent, f"{step}: {member.name} waits", ORDER_WINDOW_MS)
    return pending


async def collect_in_order(s: Session, members: Sequence[Member], pending: Sequence[Pending], step: str) -> list[Any]:
    return [
        await collect_join(s, member, sent, f"{step}: {member.name} joined")
        for member, sent in zip(members, pending, strict=True)
    ]


async def join_in_order(s: Session, group: str, members: Sequence[Member], step: str) -> list[Any]:
    """`send_in_order`, then every answer recorded in the same order."""
    return await collect_in_order(s, members, await send_in_order(group, members, step), step)


async def sync_all(group: str, topic: str, leader: Member, members: Sequence[Member], step: str) -> None:
    """The leader's SyncGroup with partition i to the i-th member, then every follower's (answered at once)."""
    plan = one_partition_plan(topic, *(m.member_id for m in members))
    await sync(leader.conn, group, leader.generation, leader.member_id, f"{step}: {leader.name} syncs", plan=plan)
    for member in members:
        if member is not leader:
            await sync(member.conn, group, member.generation, member.member_id, f"{step}: {member.name} syncs")


async def park_sync(group: str, member: Member, step: str, window_ms: int = 200) -> Pending:
    """A follower's SyncGroup (empty plan) for its generation, watched for ``window_ms`` while it waits for the
    leader's; the answer is left to collect."""
    body = sync_body(group, member.generation, member.member_id, instance_id=member.instance_id)
    pending = member.conn.send(ApiKey.SYNC_GROUP, SYNC_V, body)
    await member.conn.parked(pending, step, window_ms)
    return pending


async def stable_group(s: Session, group: str, members: Sequence[Member], step: str = "form") -> None:
    """Take a new group to Stable: everyone joins in order (the first leads), the leader assigns, all sync."""
    await join_in_order(s, group, members, step)
    await sync_all(group, "orders", members[0], members, step)


async def pair(s: Session, group: str, *, stable: bool = True) -> tuple[Member, Member]:
    """Two dynamic members, A (the leader) and B, in generation 1: Stable, or (``stable=False``) joined but not
    synced, so the group is CompletingRebalance."""
    a, b = await new_member(s, group, "A"), await new_member(s, group, "B")
    if stable:
        await stable_group(s, group, [a, b])
    else:
        await join_in_order(s, group, [a, b], "form")
    return a, b


async def leave(conn: Conn, group: str, member_id: str, step: str, instance_id: str | None = None) -> Any:
    who = MemberIdentity(member_id=member_id, group_instance_id=instance_id)
    body = LeaveGroupRequest(group_id=group, members=[who])
    return await conn.call(ApiKey.LEAVE_GROUP, LEAVE_V, body, step)


def _decoded(s: Session, pending: Pending, step: str) -> Any:
    """The decoded answer of a request whose future is done, or None (recorded as ``closed``) if the connection
    closed instead."""
    frame = pending.future.result()
    if frame is None:
        s.record(step, CLOSED)
        return None
    return api.decode_response(pending.api_key, pending.version, frame)[1]


async def group_state(s: Session, conn: Conn, group: str, step: str) -> None:
    """Record only the group's state and its members (with their instance ids) as DescribeGroups shows them: what
    the join and sync rules decide. The rest of the answer is DescribeGroups' own rule (#40), compared there.
    Use a connection with nothing parked on it: a broker answers a connection's requests in order."""
    pending = conn.send(ApiKey.DESCRIBE_GROUPS, DESCRIBE_V, DescribeGroupsRequest(groups=[group]))
    await asyncio.wait_for(asyncio.shield(pending.future), REPLY_TIMEOUT_S)
    response = _decoded(s, pending, step)
    if response is not None:
        [described] = response.groups
        members = sorted((m.member_id, m.group_instance_id) for m in described.members)
        s.note(step, {"state": described.group_state, "members": [list(m) for m in members]})


NO_ANSWER = "no answer"


async def error_within(s: Session, pending: Pending, step: str, window_ms: int = 2000) -> None:
    """Record only the error code of a parked request's answer, or ``"no answer"`` if none came within the window:
    for requests a broker may never answer, so the scenario does not wait out the reply timeout."""
    done, _ = await asyncio.wait({pending.future}, timeout=window_ms / 1000)
    if not done:
        s.note(step, NO_ANSWER)
        return
    response = _decoded(s, pending, step)
    if response is not None:
        s.note(step, {"error_code": response.error_code})


@contextlib.asynccontextmanager
async def heartbeating(group: str, member: Member, every_ms: int = 150) -> AsyncIterator[None]:
    """Keep ``member`` alive in the background without recording anything (how many heartbeats go out is timing,
    not behaviour); scenarios record a heartbeat of their own where its answer matters."""

    async def beat() -> None:
        while True:
            body = HeartbeatRequest(
                group_id=group,
                generation_id=member.generation,
                member_id=member.member_id,
                group_instance_id=member.instance_id,
            )
            member.conn.send(ApiKey.HEARTBEAT, HEARTBEAT_V, body)
            await asyncio.sleep(every_ms / 1000)

    task = asyncio.create_task(beat())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
