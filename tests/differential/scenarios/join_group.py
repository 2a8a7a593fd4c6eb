"""JoinGroup rules #6-#16 of design/group-protocol.md."""

from __future__ import annotations

import time

from protocol.registry import ApiKey
from tests.differential.registry import scenario
from tests.differential.scenarios.common import JOIN_V, join, join_body, member_id_of, send_join
from tests.differential.session import Session


@scenario("#6")
async def session_timeout_out_of_bounds(s: Session) -> None:
    """Session timeouts below group.min / above group.max are INVALID_SESSION_TIMEOUT, the member id echoed."""
    conn = await s.connect()
    group = s.name("bounds")
    low = s.setting("group.min.session.timeout.ms") - 1
    high = s.setting("group.max.session.timeout.ms") + 1
    await conn.call(ApiKey.JOIN_GROUP, JOIN_V, join_body(group, session_ms=low), "below the minimum")
    await conn.call(ApiKey.JOIN_GROUP, JOIN_V, join_body(group, "someone", session_ms=high), "above the maximum")


@scenario("#8")
async def unknown_group_with_member_id(s: Session) -> None:
    """A non-empty member id for a group that does not exist is UNKNOWN_MEMBER_ID."""
    conn = await s.connect()
    await conn.call(ApiKey.JOIN_GROUP, JOIN_V, join_body(s.name("nogroup"), "ghost-member"), "join as ghost")


@scenario("#9")
async def member_id_required_then_join(s: Session) -> None:
    """v4+: an empty member id gets MEMBER_ID_REQUIRED with the id filled in; v3 is admitted at once."""
    conn = await s.connect()
    await join(s, conn, s.name("kip394"), "A", "v9 member")
    old = await conn.call(ApiKey.JOIN_GROUP, 3, join_body(s.name("kip394-v3")), "v3 member")
    s.alias("B", old.member_id)


@scenario("#12")
async def initial_delay_gathers_members(s: Session) -> None:
    """Two members joining a new group within the initial delay both land in generation 1 (KIP-134)."""
    a, b = await s.connect("client-a"), await s.connect("client-b")
    group = s.name("delay")
    ida = await member_id_of(s, a, group, "A", "A gets an id")
    idb = await member_id_of(s, b, group, "B", "B gets an id")
    started = time.monotonic()
    pa = send_join(a, group, ida)
    await a.parked(pa, "A waits for the delay", 50)  # A is first (the leader), B joins within the delay
    pb = send_join(b, group, idb)
    await a.reply(pa, "A joined")
    await b.reply(pb, "B joined")
    waited = (time.monotonic() - started) * 1000
    s.note("answered after the initial delay", waited >= s.setting("group.initial.rebalance.delay.ms") * 0.9)
