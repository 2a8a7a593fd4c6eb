"""Produce requests Kafka refuses as a whole (issue #16): transactional batches of more than one producer, at every
Produce version both brokers serve, and the checks around that one (which batches count, what comes first).

Kafka answers a whole-request refusal partition by partition in a Java HashMap's order, and ListOffsets too: the
transcript records the topics and partitions sorted.
"""

from __future__ import annotations

import uuid
from typing import Any

from protocol.messages.list_offsets import ListOffsetsPartition, ListOffsetsRequest, ListOffsetsTopic
from protocol.messages.metadata import MetadataRequest, MetadataRequestTopic
from protocol.messages.produce import PartitionProduceData, ProduceRequest, TopicProduceData
from protocol.registry import ApiKey
from tests.differential.normalize import plain
from tests.differential.registry import scenario
from tests.differential.scenarios.group_state import ask, call_unordered, make_topic
from tests.differential.scenarios.per_version import common_versions
from tests.differential.session import Conn, Session
from tests.support.data_plane import batch

TXN_ID = "two-producers"
TOPIC_IDS_VERSION = 13
#: A topic id neither broker knows (v13+).
GHOST = uuid.UUID("0f0f0f0f-0000-4000-8000-000000000016")


def _txn(pid: int, epoch: int = 0) -> bytes:
    return batch(b"x", producer_id=pid, epoch=epoch, sequence=0, transactional=True)


def _request(
    topic: str,
    topic_id: uuid.UUID,
    version: int,
    partitions: list[tuple[int, bytes]],
    *,
    acks: int = -1,
    transactional_id: str | None = TXN_ID,
) -> ProduceRequest:
    named = TopicProduceData(
        name="" if version >= TOPIC_IDS_VERSION else topic,
        topic_id=topic_id if version >= TOPIC_IDS_VERSION else uuid.UUID(int=0),
        partition_data=[PartitionProduceData(index=index, records=records) for index, records in partitions],
    )
    return ProduceRequest(transactional_id=transactional_id, acks=acks, timeout_ms=5000, topic_data=[named])


def _sorted(response: Any) -> Any:
    answer = plain(response)
    for topic in answer["responses"]:
        topic["partition_responses"].sort(key=lambda p: p["index"])
    # By name, then the unknown id last: each broker gives the real topic its own random id, so sorting by id
    # would order the two topics differently on the two brokers.
    answer["responses"].sort(key=lambda t: (t["name"], str(t["topic_id"]) == str(GHOST)))
    return answer


async def _produce(s: Session, conn: Conn, version: int, request: ProduceRequest, step: str) -> None:
    response = await ask(conn, ApiKey.PRODUCE, version, request)
    s.note(f"v{version} {step}", {"closed": True} if response is None else _sorted(response))


async def _topic_id(conn: Conn, topic: str) -> uuid.UUID:
    described = await ask(conn, ApiKey.METADATA, 12, MetadataRequest(topics=[MetadataRequestTopic(name=topic)]))
    return described.topics[0].topic_id if described is not None else uuid.UUID(int=0)


@scenario("#16 Produce of two transactional producers")
async def produce_of_two_transactional_producers(s: Session) -> None:
    """Produce v3-v13 whose transactional batches come from two producers, and from one producer at two epochs:
    INVALID_PRODUCER_ID_MAPPING on every partition of the request, an unknown partition (and at v13 an unknown
    topic id) included. Batches that do not count: a transactional one on an unknown partition or in a record set
    of two batches, idempotent ones. No transactional id is refused first; invalid acks come after; acks=0 loses
    its connection. Nothing of the refused requests is written."""
    conn = await s.connect()
    topic = s.name("two-pids")
    await make_topic(s, conn, topic, 3)
    topic_id = await _topic_id(conn, topic)
    for version in common_versions(ApiKey.PRODUCE):
        two = _request(topic, topic_id, version, [(0, _txn(5)), (1, _txn(6)), (9, batch(b"y"))])
        if version >= TOPIC_IDS_VERSION:
            two.topic_data.append(
                TopicProduceData(topic_id=GHOST, partition_data=[PartitionProduceData(index=0, records=_txn(7))])
            )
        await _produce(s, conn, version, two, "two transactional producers")
        epochs = _request(topic, topic_id, version, [(0, _txn(5)), (1, _txn(5, 1))])
        await _produce(s, conn, version, epochs, "one producer at two epochs")
    uncounted = _request(topic, topic_id, 9, [(0, _txn(5) + _txn(6)), (9, _txn(7))])
    await _produce(s, conn, 9, uncounted, "two producers in batches that fail KafkaApis' checks")
    anonymous = _request(topic, topic_id, 9, [(0, _txn(5)), (1, _txn(6))], transactional_id=None)
    await _produce(s, conn, 9, anonymous, "two producers without a transactional id")
    bad_acks = _request(topic, topic_id, 9, [(0, _txn(5)), (1, _txn(6))], acks=2)
    await _produce(s, conn, 9, bad_acks, "two producers with acks=2")
    silent = await s.connect("acks-0")
    silent.send(ApiKey.PRODUCE, 9, _request(topic, topic_id, 9, [(0, _txn(5)), (1, _txn(6))], acks=0))
    await silent.closed_within("v9 two producers with acks=0")
    latest = ListOffsetsRequest(
        replica_id=-1,
        topics=[
            ListOffsetsTopic(
                name=topic, partitions=[ListOffsetsPartition(partition_index=p, timestamp=-1) for p in range(3)]
            )
        ],
    )
    await call_unordered(s, conn, ApiKey.LIST_OFFSETS, 7, latest, "nothing was written")
    idempotent = [(p, batch(b"i", producer_id=6 + p, epoch=0, sequence=0)) for p in (0, 1)]
    await _produce(s, conn, 9, _request(topic, topic_id, 9, idempotent), "two idempotent producers")
