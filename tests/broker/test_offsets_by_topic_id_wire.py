"""OffsetCommit v10 and OffsetFetch v10 over the wire: topics named by id (KIP-848), resolved at the broker edge
(broker/handlers/offsets_by_id.py); an id the broker does not know is UNKNOWN_TOPIC_ID, as in Kafka 4.4 (the
differential suite's every_version_offset_* scenarios compare the same cases with Kafka)."""

from __future__ import annotations

import uuid

import pytest

from broker.app import Broker
from protocol.errors import ErrorCode
from protocol.messages.create_topics import CreatableTopic, CreateTopicsRequest
from protocol.messages.offset_commit import OffsetCommitRequest, OffsetCommitRequestPartition, OffsetCommitRequestTopic
from protocol.messages.offset_fetch import OffsetFetchRequest, OffsetFetchRequestGroup, OffsetFetchRequestTopics
from protocol.registry import ApiKey
from tests.broker.wire import WireClient

GHOST_ID = uuid.UUID("0f0f0f0f-0000-4000-8000-000000000001")


@pytest.fixture(autouse=True)
async def _offsets_loaded(broker: Broker) -> None:
    await broker.loaded.wait()


async def _topic(client: WireClient, name: str) -> uuid.UUID:
    body = CreateTopicsRequest(topics=[CreatableTopic(name=name, num_partitions=2, replication_factor=1)])
    [created] = (await client.call(ApiKey.CREATE_TOPICS, 7, body)).topics
    assert created.error_code == ErrorCode.NONE
    return created.topic_id


def _commit(group: str, *topics: tuple[uuid.UUID, int], name: str = "") -> OffsetCommitRequest:
    return OffsetCommitRequest(
        group_id=group,
        generation_id_or_member_epoch=-1,
        member_id="",
        topics=[
            OffsetCommitRequestTopic(
                name=name,
                topic_id=topic_id,
                partitions=[OffsetCommitRequestPartition(partition_index=0, committed_offset=offset)],
            )
            for topic_id, offset in topics
        ],
    )


def _fetch(group: str, topic_ids: list[uuid.UUID] | None) -> OffsetFetchRequest:
    topics = (
        None if topic_ids is None else [OffsetFetchRequestTopics(topic_id=t, partition_indexes=[0]) for t in topic_ids]
    )
    return OffsetFetchRequest(groups=[OffsetFetchRequestGroup(group_id=group, topics=topics)])


async def test_offset_commit_v10_resolves_ids_and_answers_unknown_ones_first(broker: Broker) -> None:
    """A known id is committed under its topic's name (what v9 fetches by name) and answered with its id; an unknown
    id is UNKNOWN_TOPIC_ID, listed before the coordinator's answers, as Kafka's response builder does."""
    client = await WireClient.connect(broker.ports[0])
    orders = await _topic(client, "orders")
    response = await client.call(ApiKey.OFFSET_COMMIT, 10, _commit("g", (orders, 5), (GHOST_ID, 6)))
    assert [(t.topic_id, [(p.partition_index, p.error_code) for p in t.partitions]) for t in response.topics] == [
        (GHOST_ID, [(0, ErrorCode.UNKNOWN_TOPIC_ID)]),
        (orders, [(0, ErrorCode.NONE)]),
    ]
    by_name = OffsetFetchRequest(
        groups=[
            OffsetFetchRequestGroup(
                group_id="g", topics=[OffsetFetchRequestTopics(name="orders", partition_indexes=[0])]
            )
        ]
    )
    [group] = (await client.call(ApiKey.OFFSET_FETCH, 9, by_name)).groups
    assert group.topics[0].partitions[0].committed_offset == 5
    only_unknown = await client.call(ApiKey.OFFSET_COMMIT, 10, _commit("", (GHOST_ID, 1)))
    # No known topic: the coordinator is not asked, so not even the empty group id is an error.
    assert [p.error_code for t in only_unknown.topics for p in t.partitions] == [ErrorCode.UNKNOWN_TOPIC_ID]
    await client.close()


async def test_offset_fetch_v10_by_id_and_all_topics_by_id(broker: Broker) -> None:
    """Asked by id: the group's offsets by id, unknown ids after them as UNKNOWN_TOPIC_ID (offset -1); asked for
    all topics: each named by its id."""
    client = await WireClient.connect(broker.ports[0])
    orders, payments = await _topic(client, "orders"), await _topic(client, "payments")
    await client.call(ApiKey.OFFSET_COMMIT, 10, _commit("g", (orders, 5), (payments, 7)))
    [group] = (await client.call(ApiKey.OFFSET_FETCH, 10, _fetch("g", [GHOST_ID, payments]))).groups
    assert [(t.name, t.topic_id, [(p.committed_offset, p.error_code) for p in t.partitions]) for t in group.topics] == [
        ("", payments, [(7, ErrorCode.NONE)]),
        ("", GHOST_ID, [(-1, ErrorCode.UNKNOWN_TOPIC_ID)]),
    ]
    [everything] = (await client.call(ApiKey.OFFSET_FETCH, 10, _fetch("g", None))).groups
    assert sorted((t.topic_id, t.partitions[0].committed_offset) for t in everything.topics) == sorted(
        [(orders, 5), (payments, 7)]
    )
    [empty_id] = (await client.call(ApiKey.OFFSET_FETCH, 10, _fetch("", [GHOST_ID]))).groups
    assert empty_id.error_code == ErrorCode.NONE  # Kafka 4.4 has no group error for "" in OffsetFetch
    assert [(t.topic_id, t.partitions[0].error_code) for t in empty_id.topics] == [
        (GHOST_ID, ErrorCode.UNKNOWN_TOPIC_ID)
    ]
    await client.close()
