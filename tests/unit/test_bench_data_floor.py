"""The Produce and Fetch floor (bench/data_floor.py, served by bench/floors.py): batches appended at the next offset
with their base offset rewritten, fetched back as whole batches from the one holding the offset, a 1 MiB Produce
answered once however its bytes arrive, Metadata and CreateTopics as the load generator needs them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.data_floor import AUTO_PARTITIONS, DataFloor
from bench.floors import FloorConnection
from protocol import api
from protocol.messages.create_topics import CreatableTopic, CreateTopicsRequest
from protocol.messages.fetch import FetchPartition, FetchRequest, FetchTopic
from protocol.messages.metadata import MetadataRequest, MetadataRequestTopic
from protocol.messages.produce import PartitionProduceData, ProduceRequest, TopicProduceData
from protocol.records import Record, RecordBatch, decode_batch, encode_batch
from protocol.registry import ApiKey
from tests.unit.floor_wire import Transport, frame


def batch(count: int, size: int = 10) -> bytes:
    records = [Record(offset_delta=i, timestamp_delta=0, key=None, value=b"v" * size) for i in range(count)]
    return encode_batch(RecordBatch.from_records(records, base_timestamp=1_700_000_000_000))


def ask(floor: DataFloor, api_key: ApiKey, version: int, body: Any, correlation_id: int = 1) -> Any:
    parts = floor.answer(frame(api_key, version, body, correlation_id)[4:])
    assert parts is not None
    header, response = api.decode_response(api_key, version, b"".join(parts)[4:])
    assert header.correlation_id == correlation_id
    return response


def produce(topic: str, partition: int, records: bytes) -> ProduceRequest:
    data = [PartitionProduceData(index=partition, records=records)]
    return ProduceRequest(acks=1, timeout_ms=1000, topic_data=[TopicProduceData(name=topic, partition_data=data)])


def fetch(topic: str, partition: int, offset: int, max_bytes: int) -> FetchRequest:
    wanted = [FetchPartition(partition=partition, fetch_offset=offset, partition_max_bytes=max_bytes)]
    return FetchRequest(
        replica_id=-1,
        max_wait_ms=0,
        min_bytes=1,
        max_bytes=1 << 26,
        topics=[FetchTopic(topic=topic, partitions=wanted)],
    )


def test_batches_are_appended_at_the_next_offset_and_fetched_back_whole(tmp_path: Path) -> None:
    floor = DataFloor(tmp_path, "127.0.0.1", 9092)
    creation = CreateTopicsRequest(topics=[CreatableTopic(name="t", num_partitions=2)])
    assert [(t.name, t.error_code) for t in ask(floor, ApiKey.CREATE_TOPICS, 4, creation).topics] == [("t", 0)]
    shown = ask(floor, ApiKey.METADATA, 4, MetadataRequest(topics=[MetadataRequestTopic(name="t")]))
    assert len(shown.topics[0].partitions) == 2
    first, second = batch(3), batch(5)
    offsets = [
        ask(floor, ApiKey.PRODUCE, 8, produce("t", 1, b)).responses[0].partition_responses[0] for b in (first, second)
    ]
    assert [(r.index, r.error_code, r.base_offset) for r in offsets] == [(1, 0, 0), (1, 0, 3)]

    answer = ask(floor, ApiKey.FETCH, 11, fetch("t", 1, 4, 1 << 20)).responses[0].partitions[0]
    assert (answer.error_code, answer.high_watermark) == (0, 8)
    stored, end = decode_batch(answer.records, 0)  # the batch holding offset 4, its base offset rewritten to 3
    assert (stored.base_offset, len(stored.records), end) == (3, 5, len(answer.records))
    both = ask(floor, ApiKey.FETCH, 11, fetch("t", 1, 0, 1 << 20)).responses[0].partitions[0].records
    assert len(both) == len(first) + len(second)
    assert both[8 : len(first)] == first[8:] and both[len(first) + 8 :] == second[8:]  # stored as sent, but offsets
    one = ask(floor, ApiKey.FETCH, 11, fetch("t", 1, 0, len(first) + 1)).responses[0].partitions[0].records
    assert len(one) == len(first)  # whole batches only, at least one, up to the partition's max bytes
    assert ask(floor, ApiKey.FETCH, 11, fetch("t", 1, 8, 1 << 20)).responses[0].partitions[0].records == b""
    floor.close()


def test_metadata_creates_the_topics_it_is_asked_about(tmp_path: Path) -> None:
    floor = DataFloor(tmp_path, "127.0.0.1", 9092)
    body = MetadataRequest(topics=[MetadataRequestTopic(name="auto")], allow_auto_topic_creation=True)
    answer = ask(floor, ApiKey.METADATA, 4, body)
    assert [(b.node_id, b.host, b.port) for b in answer.brokers] == [(0, "127.0.0.1", 9092)]
    [topic] = answer.topics
    assert (topic.name, topic.error_code) == ("auto", 0)
    assert [(p.partition_index, p.leader_id) for p in topic.partitions] == [(p, 0) for p in range(AUTO_PARTITIONS)]
    floor.close()


def test_a_large_produce_in_many_reads_is_answered_once(tmp_path: Path) -> None:
    floor = DataFloor(tmp_path, "127.0.0.1", 9092)
    ask(floor, ApiKey.CREATE_TOPICS, 4, CreateTopicsRequest(topics=[CreatableTopic(name="big", num_partitions=1)]))
    connection, transport = FloorConnection(floor), Transport()
    connection.connection_made(transport)  # type: ignore[arg-type]
    data = frame(ApiKey.PRODUCE, 8, produce("big", 0, batch(1000, 1000)), 5)
    for start in range(0, len(data), 65536):
        connection.data_received(data[start : start + 65536])
    [written] = transport.writes
    header, response = api.decode_response(ApiKey.PRODUCE, 8, written[4:])
    assert header.correlation_id == 5 and response.responses[0].partition_responses[0].base_offset == 0
    assert (tmp_path / "big-0.log").stat().st_size == len(batch(1000, 1000))
    assert not transport.closed
    floor.close()
