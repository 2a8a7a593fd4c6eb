"""A minimal raw OffsetCommit/OffsetFetch client for durability tests: exact requests, no client-side caching."""

from __future__ import annotations

import asyncio

from protocol.errors import ErrorCode
from protocol.messages.create_topics import CreatableTopic, CreateTopicsRequest
from protocol.messages.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
)
from protocol.messages.offset_fetch import OffsetFetchRequest, OffsetFetchRequestTopic
from protocol.registry import ApiKey
from tests.broker.wire import WireClient

RETRIABLE = {ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.COORDINATOR_NOT_AVAILABLE}


async def connect(port: int, attempts: int = 200) -> WireClient:
    for _ in range(attempts):
        try:
            return await WireClient.connect(port)
        except OSError:
            await asyncio.sleep(0.05)
    raise AssertionError(f"cannot connect to 127.0.0.1:{port}")


async def create_topic(client: WireClient, name: str, partitions: int) -> None:
    request = CreateTopicsRequest(topics=[CreatableTopic(name=name, num_partitions=partitions, replication_factor=1)])
    response = await client.call(ApiKey.CREATE_TOPICS, 4, request)
    assert response.topics[0].error_code in (ErrorCode.NONE, ErrorCode.TOPIC_ALREADY_EXISTS)


async def commit(client: WireClient, group: str, topic: str, offsets: dict[int, int]) -> bool:
    """A simple-consumer commit (generation -1); True when acknowledged, retrying while the coordinator loads."""
    for _ in range(400):
        errors = await commit_once(client, group, topic, offsets)
        if not errors & RETRIABLE:
            return errors == {ErrorCode.NONE}
        await asyncio.sleep(0.025)
    raise AssertionError("coordinator never finished loading")


async def commit_once(client: WireClient, group: str, topic: str, offsets: dict[int, int]) -> set[int]:
    """One OffsetCommit; the set of per-partition error codes in its answer."""
    request = OffsetCommitRequest(
        group_id=group,
        generation_id_or_member_epoch=-1,
        topics=[
            OffsetCommitRequestTopic(
                name=topic,
                partitions=[
                    OffsetCommitRequestPartition(partition_index=p, committed_offset=o, committed_metadata=f"m{o}")
                    for p, o in sorted(offsets.items())
                ],
            )
        ],
    )
    response = await client.call(ApiKey.OFFSET_COMMIT, 8, request)
    return {p.error_code for t in response.topics for p in t.partitions}


async def fetch(client: WireClient, group: str, topic: str, partitions: list[int]) -> dict[int, int]:
    """Committed offsets, retrying while the coordinator is still loading after a restart."""
    request = OffsetFetchRequest(
        group_id=group, topics=[OffsetFetchRequestTopic(name=topic, partition_indexes=partitions)]
    )
    for _ in range(400):
        response = await client.call(ApiKey.OFFSET_FETCH, 5, request)
        if response.error_code in RETRIABLE:
            await asyncio.sleep(0.025)
            continue
        assert response.error_code == ErrorCode.NONE, response
        return {p.partition_index: p.committed_offset for t in response.topics for p in t.partitions}
    raise AssertionError("coordinator never finished loading")
