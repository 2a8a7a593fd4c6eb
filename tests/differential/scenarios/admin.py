"""Admin APIs, rules #40-#43 of design/group-protocol.md: DescribeGroups, ListGroups, DeleteGroups, OffsetDelete."""

from __future__ import annotations

from protocol.messages.delete_groups import DeleteGroupsRequest
from protocol.messages.describe_groups import DescribeGroupsRequest
from protocol.messages.list_groups import ListGroupsRequest
from protocol.messages.offset_delete import OffsetDeleteRequest, OffsetDeleteRequestPartition, OffsetDeleteRequestTopic
from protocol.registry import ApiKey
from tests.differential.registry import scenario
from tests.differential.scenarios.common import describe, join, join_body, member_id_of, send_join, sync_body
from tests.differential.scenarios.group_state import (
    ask,
    call_unordered,
    commit,
    fetch_offsets,
    make_topic,
    stable_group,
)
from tests.differential.session import Conn, Session


@scenario("#40")
async def describe_in_every_state(s: Session) -> None:
    """DescribeGroups of an unknown group (Dead), an Empty simple group, CompletingRebalance, Stable and
    PreparingRebalance, several groups in one request, and v0 (no instance ids)."""
    a, b = await s.connect("client-a"), await s.connect("client-b")
    group, simple = s.name("described"), s.name("described-simple")
    await describe(a, s.name("described-missing"), "unknown group")
    await commit(a, simple, {("orders", 0): 1}, "commit to an unknown topic only")
    await describe(a, simple, "no group was created")
    topic = s.name("described-t")
    await make_topic(s, a, topic, 1)
    await commit(a, simple, {(topic, 0): 1}, "simple group commit")
    await describe(a, simple, "Empty simple group")
    joined = await join(s, a, group, "A", "A joins", instance_id="inst-a")
    await describe(a, group, "CompletingRebalance")
    body = sync_body(
        group, joined.generation_id, joined.member_id, plan={joined.member_id: b"plan-a"}, instance_id="inst-a"
    )
    await a.call(ApiKey.SYNC_GROUP, 5, body, "A syncs")
    await describe(a, group, "Stable")
    idb = await member_id_of(s, b, group, "B", "B gets an id")
    pb = send_join(b, group, idb)
    await b.parked(pb, "B waits for A", 200)
    await describe(a, group, "PreparingRebalance")
    many = DescribeGroupsRequest(groups=[group, s.name("described-missing"), simple, ""])
    await call_unordered(s, a, ApiKey.DESCRIBE_GROUPS, 5, many, "several groups")
    await a.call(ApiKey.DESCRIBE_GROUPS, 0, DescribeGroupsRequest(groups=[group]), "v0")
    with_ops = DescribeGroupsRequest(groups=[group, s.name("described-missing")], include_authorized_operations=True)
    await call_unordered(s, a, ApiKey.DESCRIBE_GROUPS, 3, with_ops, "v3 with authorized operations")
    await a.call(ApiKey.JOIN_GROUP, 9, join_body(group, joined.member_id, instance_id="inst-a"), "A rejoins")
    await b.reply(pb, "B joined")


async def _list(
    s: Session,
    conn: Conn,
    version: int,
    step: str,
    mine: set[str],
    states: tuple[str, ...] = (),
    types: tuple[str, ...] = (),
) -> None:
    """ListGroups shows every group on the broker, other runs' too: record the error and this run's groups only."""
    listed = await ask(
        conn, ApiKey.LIST_GROUPS, version, ListGroupsRequest(states_filter=list(states), types_filter=list(types))
    )
    if listed is None:
        s.note(step, {"closed": True})
        return
    groups = sorted((g for g in listed.groups if g.group_id in mine), key=lambda g: g.group_id)
    s.note(step, {"error_code": listed.error_code, "groups": groups})


@scenario("#41")
async def list_groups_with_filters(s: Session) -> None:
    """ListGroups v0-v5: a Stable consumer group and an Empty simple group; v4 filters by state (any case), v5
    by type (classic, consumer)."""
    conn = await s.connect()
    stable, simple = s.name("listed-stable"), s.name("listed-simple")
    mine = {stable, simple}
    await stable_group(s, conn, stable, "A", "A forms a group")
    topic = s.name("listed-t")
    await make_topic(s, conn, topic, 1)
    await commit(conn, simple, {(topic, 0): 1}, "simple group commit")
    for version in (0, 3, 4, 5):
        await _list(s, conn, version, f"v{version}", mine)
    await _list(s, conn, 4, "v4 Stable", mine, states=("Stable",))
    await _list(s, conn, 4, "v4 empty (lower case)", mine, states=("empty",))
    await _list(s, conn, 4, "v4 unknown state", mine, states=("Sleepy",))
    await _list(s, conn, 5, "v5 classic", mine, types=("classic",))
    await _list(s, conn, 5, "v5 Consumer", mine, types=("Consumer",))
    await _list(s, conn, 5, "v5 classic and Empty", mine, types=("classic",), states=("Empty",))


@scenario("#42")
async def delete_groups_by_state(s: Session) -> None:
    """DeleteGroups: an Empty group is deleted with its offsets, a Stable one is NON_EMPTY_GROUP, a missing one
    GROUP_ID_NOT_FOUND; one answer per group in one request."""
    conn = await s.connect()
    topic, empty, stable = s.name("del-t"), s.name("del-empty"), s.name("del-stable")
    await make_topic(s, conn, topic, 1)
    await commit(conn, empty, {(topic, 0): 4}, "commit to the Empty group")
    await stable_group(s, conn, stable, "A", "A forms a group")
    body = DeleteGroupsRequest(groups_names=[empty, stable, s.name("del-missing")])
    await call_unordered(s, conn, ApiKey.DELETE_GROUPS, 2, body, "v2 delete three")
    await describe(conn, empty, "the deleted group")
    await fetch_offsets(conn, empty, {topic: [0]}, "its offsets")
    await conn.call(ApiKey.DELETE_GROUPS, 0, DeleteGroupsRequest(groups_names=[empty]), "v0 delete it again")


def _offset_delete(group: str, topics: dict[str, list[int]]) -> OffsetDeleteRequest:
    return OffsetDeleteRequest(
        group_id=group,
        topics=[
            OffsetDeleteRequestTopic(name=t, partitions=[OffsetDeleteRequestPartition(partition_index=p) for p in ps])
            for t, ps in topics.items()
        ],
    )


@scenario("#43")
async def offset_delete_by_state(s: Session) -> None:
    """OffsetDelete: missing group GROUP_ID_NOT_FOUND; Empty group deletes what is asked; a Stable consumer group
    refuses the topics it subscribes to (GROUP_SUBSCRIBED_TO_TOPIC) and deletes the rest."""
    conn = await s.connect()
    subscribed, other = s.name("od-sub"), s.name("od-other")
    empty, stable = s.name("od-empty"), s.name("od-stable")
    await make_topic(s, conn, subscribed, 2)
    await make_topic(s, conn, other, 1)
    await conn.call(ApiKey.OFFSET_DELETE, 0, _offset_delete(s.name("od-missing"), {other: [0]}), "missing group")
    await commit(conn, empty, {(subscribed, 0): 1, (subscribed, 1): 2, (other, 0): 3}, "commit to the Empty group")
    await conn.call(ApiKey.OFFSET_DELETE, 0, _offset_delete(empty, {subscribed: [0, 7]}), "Empty group")
    await fetch_offsets(conn, empty, None, "Empty group's offsets afterwards")
    ida, generation = await stable_group(s, conn, stable, "A", "A forms a group", topics=(subscribed,))
    offsets = {(subscribed, 0): 1, (other, 0): 3}
    await commit(conn, stable, offsets, "A commits", generation=generation, member_id=ida)
    both = {subscribed: [0], other: [0]}
    await conn.call(ApiKey.OFFSET_DELETE, 0, _offset_delete(stable, both), "Stable consumer group")
    await fetch_offsets(conn, stable, None, "Stable group's offsets afterwards")
