"""Helpers the heartbeat, leave, offset and admin scenarios share: a Stable group in one call, commits, fetches,
and requests whose answer is recorded only in part (ListGroups sees every run's groups, not just this one's)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from protocol import api
from protocol.messages.create_topics import CreatableTopic, CreateTopicsRequest
from protocol.messages.list_offsets import ListOffsetsPartition, ListOffsetsRequest, ListOffsetsTopic
from protocol.messages.metadata import MetadataRequest, MetadataRequestTopic
from protocol.messages.offset_commit import OffsetCommitRequest
from protocol.messages.offset_fetch import OffsetFetchRequest, OffsetFetchRequestTopic
from protocol.registry import ApiKey
from tests.coordinator.harness import CoordinatorTestContext
from tests.differential.normalize import plain
from tests.differential.scenarios.common import join, member_id_of, one_partition_plan, send_join, sync, sync_body
from tests.differential.session import Conn, Session

COMMIT_V = 8
FETCH_V = 7


async def stable_group(s: Session, conn: Conn, group: str, name: str, step: str, **kw: Any) -> tuple[str, int]:
    """One dynamic member joins a new group (after the initial delay) and syncs as leader: the group is Stable.
    Returns the member id (called ``<name>``) and the generation."""
    joined = await join(s, conn, group, name, step, **kw)
    plan = one_partition_plan("orders", joined.member_id)
    await sync(conn, group, joined.generation_id, joined.member_id, f"{step}: sync", plan=plan)
    return joined.member_id, joined.generation_id


async def stable_pair(s: Session, a: Conn, b: Conn, group: str, step: str, **kw: Any) -> tuple[str, str, int]:
    """Members A (leader, joins first) and B in one generation, both synced: a Stable group of two."""
    ida = await member_id_of(s, a, group, "A", f"{step}: A gets an id", **kw)
    idb = await member_id_of(s, b, group, "B", f"{step}: B gets an id", **kw)
    pa = send_join(a, group, ida, **kw)
    await a.parked(pa, f"{step}: A waits for the delay", 100)
    pb = send_join(b, group, idb, **kw)
    ja = await a.reply(pa, f"{step}: A joined")
    await b.reply(pb, f"{step}: B joined")
    generation = ja.generation_id
    pb_sync = b.send(ApiKey.SYNC_GROUP, 5, sync_body(group, generation, idb))
    await sync(a, group, generation, ida, f"{step}: A syncs", plan=one_partition_plan("orders", ida, idb))
    await b.reply(pb_sync, f"{step}: B syncs")
    return ida, idb, generation


def commit_body(
    group: str,
    offsets: dict[tuple[str, int], int],
    *,
    generation: int = -1,
    member_id: str = "",
    instance_id: str | None = None,
    metadata: str | None = "",
    retention_ms: int = -1,
) -> OffsetCommitRequest:
    """The coordinator tests' request builder, under the names the scenarios use."""
    return CoordinatorTestContext.commit_request(
        group,
        offsets,
        member_id=member_id,
        generation_id=generation,
        group_instance_id=instance_id,
        metadata=metadata,
        retention_time_ms=retention_ms,
    )


async def commit(
    conn: Conn, group: str, offsets: dict[tuple[str, int], int], step: str, version: int = COMMIT_V, **kw: Any
) -> Any:
    return await conn.call(ApiKey.OFFSET_COMMIT, version, commit_body(group, offsets, **kw), step)


async def fetch_offsets(
    conn: Conn,
    group: str,
    topics: dict[str, list[int]] | None,
    step: str,
    version: int = FETCH_V,
    require_stable: bool = False,
) -> Any:
    """OffsetFetch v1-v7 for one group; ``topics=None`` asks for every committed partition (v2+)."""
    wanted = None
    if topics is not None:
        wanted = [OffsetFetchRequestTopic(name=t, partition_indexes=p) for t, p in topics.items()]
    body = OffsetFetchRequest(group_id=group, topics=wanted, require_stable=require_stable)
    if topics is None:
        return await call_unordered(conn.session, conn, ApiKey.OFFSET_FETCH, version, body, step)
    return await conn.call(ApiKey.OFFSET_FETCH, version, body, step)


async def ask(conn: Conn, api_key: int, version: int, body: Any) -> Any:
    """A request whose answer the scenario records itself (in part); None if the connection closed."""
    frame = await conn.send(api_key, version, body).future
    return None if frame is None else api.decode_response(api_key, version, frame)[1]


async def make_topic(s: Session, conn: Conn, topic: str, partitions: int) -> None:
    """CreateTopics, recording only the error code: the topic is a prop here, its configs are another area's."""
    body = CreateTopicsRequest(
        topics=[CreatableTopic(name=topic, num_partitions=partitions, replication_factor=1)], timeout_ms=10_000
    )
    created = await ask(conn, ApiKey.CREATE_TOPICS, 5, body)
    s.note(f"create {partitions}-partition topic", None if created is None else created.topics[0].error_code)
    s.note("the topic's partitions are known", await _partitions_known(conn, topic, partitions))


async def _partitions_known(conn: Conn, topic: str, partitions: int, window_s: float = 10.0) -> bool:
    """Kafka answers CreateTopics when the controller has the topic; its own metadata cache (what OffsetCommit
    checks) may lag a moment behind. Wait until Metadata shows every partition and each one's leader serves
    (`leaders_serve`), as a client that retries would."""
    metadata = MetadataRequest(topics=[MetadataRequestTopic(name=topic)], allow_auto_topic_creation=False)
    deadline = time.monotonic() + window_s
    while time.monotonic() < deadline:
        answer = await ask(conn, ApiKey.METADATA, 12, metadata)
        listed = answer is not None and answer.topics and len(answer.topics[0].partitions) == partitions
        if listed and await leaders_serve(lambda *request: ask(conn, *request), topic, partitions):
            return True
        await conn.session.sleep_ms(50)
    return False


async def leaders_serve(asking: Callable[[int, int, Any], Awaitable[Any]], topic: str, partitions: int) -> bool:
    """Whether ListOffsets answers every partition of ``topic`` without an error. Kafka's replica manager (what
    Produce and Fetch ask) becomes leader a moment after its metadata cache lists the partition with its leader:
    a Produce in that moment gets NOT_LEADER_OR_FOLLOWER. ListOffsets asks the replica manager too."""
    latest = ListOffsetsRequest(
        replica_id=-1,
        topics=[
            ListOffsetsTopic(
                name=topic,
                partitions=[ListOffsetsPartition(partition_index=i, timestamp=-1) for i in range(partitions)],
            )
        ],
    )
    offsets = await asking(ApiKey.LIST_OFFSETS, 7, latest)
    return offsets is not None and all(p.error_code == 0 for t in offsets.topics for p in t.partitions)


ORDER_KEYS = ("group_id", "name", "partition_index")


def _in_order(value: Any) -> Any:
    """Lists of groups, topics or partitions sorted by id, name or index, recursively."""
    if isinstance(value, dict):
        return {k: _in_order(v) for k, v in value.items()}
    if isinstance(value, list):
        items = [_in_order(v) for v in value]
        for key in ORDER_KEYS:
            if items and all(isinstance(v, dict) and key in v for v in items):
                return sorted(items, key=lambda v: v[key])
        return items
    return value


async def call_unordered(s: Session, conn: Conn, api_key: int, version: int, body: Any, step: str) -> Any:
    """A request whose answer lists groups, topics or partitions in no promised order, recorded sorted. Kafka
    answers batched groups (DescribeGroups, DeleteGroups, OffsetFetch v8) grouped by `__consumer_offsets`
    partition in a Java HashMap's order, and every committed partition in its offsets map's order; which partition
    a group lands on depends on the run's random names, so not even a pinned order would be stable."""
    response = await ask(conn, api_key, version, body)
    s.note(step, {"closed": True} if response is None else _in_order(plain(response)))
    return response
