"""Produce and Fetch over raw requests, for the tests that drive a broker's data plane: batches built as a
producer builds them, responses decoded back into (offset, timestamp, value)."""

from __future__ import annotations

import uuid
from typing import Any

from protocol.errors import ErrorCode
from protocol.messages.fetch import FetchPartition, FetchRequest, FetchTopic
from protocol.messages.produce import PartitionProduceData, ProduceRequest, TopicProduceData
from protocol.records import Record, RecordBatch, decode_batch, encode_batch
from protocol.registry import ApiKey
from tests.broker.wire import WireClient

PRODUCE_VERSION = 9
FETCH_VERSION = 12
BASE_TS = 1_700_000_000_000


def batch(
    *values: bytes,
    timestamp: int = BASE_TS,
    producer_id: int = -1,
    epoch: int = -1,
    sequence: int = -1,
    timestamp_step: int = 0,
    transactional: bool = False,
) -> bytes:
    records = [
        Record(offset_delta=i, timestamp_delta=i * timestamp_step, key=None, value=v) for i, v in enumerate(values)
    ]
    return encode_batch(
        RecordBatch.from_records(
            records,
            base_timestamp=timestamp,
            producer_id=producer_id,
            producer_epoch=epoch,
            base_sequence=sequence,
            is_transactional=transactional,
        )
    )


def produce_request(
    topic: str, records: bytes | None, *, partition: int = 0, acks: int = -1, transactional_id: str | None = None
) -> ProduceRequest:
    return ProduceRequest(
        transactional_id=transactional_id,
        acks=acks,
        timeout_ms=5000,
        topic_data=[
            TopicProduceData(name=topic, partition_data=[PartitionProduceData(index=partition, records=records)])
        ],
    )


async def produce(
    client: WireClient,
    topic: str,
    records: bytes | None,
    *,
    partition: int = 0,
    version: int = PRODUCE_VERSION,
    transactional_id: str | None = None,
) -> Any:
    request = produce_request(topic, records, partition=partition, transactional_id=transactional_id)
    response = await client.call(ApiKey.PRODUCE, version, request)
    [topic_response] = response.responses
    assert topic_response.name == topic
    [result] = topic_response.partition_responses
    assert result.index == partition
    return result


def fetch_request(
    topic: str,
    offset: int = 0,
    *,
    max_wait_ms: int = 0,
    min_bytes: int = 1,
    topic_id: uuid.UUID | None = None,
    isolation_level: int = 0,
) -> FetchRequest:
    wanted = FetchTopic(
        topic=topic,
        topic_id=topic_id or uuid.UUID(int=0),
        partitions=[FetchPartition(partition=0, fetch_offset=offset, partition_max_bytes=1 << 20)],
    )
    return FetchRequest(
        max_wait_ms=max_wait_ms,
        min_bytes=min_bytes,
        max_bytes=1 << 22,
        isolation_level=isolation_level,
        topics=[wanted],
    )


async def fetch(client: WireClient, topic: str, offset: int = 0, *, version: int = FETCH_VERSION, **kw: Any) -> Any:
    response = await client.call(ApiKey.FETCH, version, fetch_request(topic, offset, **kw))
    assert response.error_code == ErrorCode.NONE
    [partition] = response.responses[0].partitions
    return partition


def decoded(records: bytes | None) -> list[tuple[int, int, bytes | None]]:
    """(offset, timestamp, value) of every record in a fetched record set."""
    out = []
    data = records or b""
    pos = 0
    while pos < len(data):
        one, pos = decode_batch(data, pos)
        out += [(offset, ts, record.value) for offset, ts, record in one.absolute()]
    return out
