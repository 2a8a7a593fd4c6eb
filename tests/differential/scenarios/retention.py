"""Offset retention, rule #36 of design/group-protocol.md, in real time: the one scenario that takes a minute.

Kafka's floor for ``offsets.retention.minutes`` is 1, so this scenario runs on a pair of brokers of its own with 1
minute, checked every second (`RETENTION_SETTINGS`), and waits the minute out, compared in the background from
collection on (`early`, tests/differential/early.py), so the suite hardly pays for it. Three groups
commit at the start: a simple group (expires by its last commit time), a consumer group that becomes Empty
(expires a minute after it emptied) and a Stable consumer group that keeps heartbeating, committed to one topic it
subscribes to and one it does not (only the unsubscribed topic's offsets expire). Asked once before the minute
and once after it, with the groups described at the end.
"""

from __future__ import annotations

from tests.differential.registry import scenario
from tests.differential.scenarios.common import describe
from tests.differential.scenarios.group_flow import heartbeating, leave, new_member, stable_group
from tests.differential.scenarios.group_state import commit, fetch_offsets, make_topic
from tests.differential.session import Session
from tests.reference.settings import RETENTION_SETTINGS

MARGIN_MS = 4000  # after the minute: a few of the once-a-second checks, on a busy machine
#: Kafka's pending member (MEMBER_ID_REQUIRED) must rejoin within its session; a loaded machine has made the
#: reference broker take longer than the suite's 6 s, so these members get the longest session both brokers allow.
SESSION_MS = 30_000


@scenario("#36", settings=RETENTION_SETTINGS, early=True)
async def offsets_expire_after_retention(s: Session) -> None:
    """Simple and emptied groups lose their offsets after the retention; a Stable group keeps its subscribed ones."""
    conn = await s.connect()
    subscribed, unsubscribed = s.name("kept-t"), s.name("dropped-t")
    await make_topic(s, conn, subscribed, 1)
    await make_topic(s, conn, unsubscribed, 1)
    simple, emptied, stable = s.name("ret-simple"), s.name("ret-emptied"), s.name("ret-stable")

    await commit(conn, simple, {(subscribed, 0): 5}, "simple group commits")
    # Each consumer group holds an offset before its member joins: an Empty group without offsets is deleted at
    # the next once-a-second check (on both brokers), which on a loaded machine can fall between a member's
    # MEMBER_ID_REQUIRED and its rejoin.
    for group in (emptied, stable):
        await commit(conn, group, {(subscribed, 0): 1}, f"{group}: an offset before the group forms")

    a = await new_member(s, emptied, "A", topics=(subscribed,), session_ms=SESSION_MS)
    await stable_group(s, emptied, [a], "emptied group forms")
    await commit(a.conn, emptied, {(subscribed, 0): 6}, "A commits", generation=a.generation, member_id=a.member_id)
    await leave(a.conn, emptied, a.member_id, "A leaves: the group is Empty")

    b = await new_member(s, stable, "B", topics=(subscribed,), session_ms=SESSION_MS)
    await stable_group(s, stable, [b], "stable group forms")
    offsets = {(subscribed, 0): 7, (unsubscribed, 0): 8}
    await commit(b.conn, stable, offsets, "B commits to both topics", generation=b.generation, member_id=b.member_id)

    retention_ms = s.setting("offsets.retention.minutes") * 60_000
    async with heartbeating(stable, b):
        await s.sleep_ms(retention_ms // 2)
        for group in (simple, emptied, stable):
            await fetch_offsets(conn, group, {subscribed: [0], unsubscribed: [0]}, f"{group}: before the retention")
        await s.sleep_ms(retention_ms // 2 + MARGIN_MS)
        for group in (simple, emptied, stable):
            await fetch_offsets(conn, group, {subscribed: [0], unsubscribed: [0]}, f"{group}: after the retention")
        for group in (simple, emptied, stable):
            await describe(conn, group, f"{group}: described")
