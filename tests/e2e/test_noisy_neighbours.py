"""One client never hurts the others: a bystander consumer group keeps its generation while another client runs an
oversized CreateTopics, huge Fetches and a crowd of slowloris connections at the same time.

Each of these used to break a bystander on its own (issue #10): a 19,000-partition CreateTopics blocked the event
loop for seconds, so members' sessions expired; a 2 GB `max_bytes` Fetch returned a whole partition in one
response; half-sent frames were held forever. The bystander is a confluent-kafka consumer, whose heartbeats run on
librdkafka's own threads, so any rebalance it sees is the broker's doing, not the test process's.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from confluent_kafka import Consumer

from protocol.errors import ErrorCode
from protocol.messages.create_topics import CreatableTopic, CreateTopicsRequest
from protocol.messages.fetch import FetchPartition, FetchRequest, FetchTopic
from protocol.messages.produce import PartitionProduceData, ProduceRequest, TopicProduceData
from protocol.records import Record, RecordBatch, encode_batch
from protocol.registry import ApiKey
from tests.broker.wire import WireClient
from tests.durability.offsets_client import connect, create_topic
from tests.support.broker_process import BrokerProcess, wait_until

pytestmark = [pytest.mark.integration, pytest.mark.slow]

GROUP = "bystander"
BYSTANDER_TOPIC = "bystander-orders"
BIG_TOPIC = "big"
#: The broker's default fetch.max.bytes (Kafka's 55 MiB): the most one Fetch answer may carry, since no batch here is
#: larger than the limit on its own.
FETCH_MAX_BYTES = 57_671_680
BATCH_VALUE_BYTES = 1_000_000
BIG_BATCHES = 80  # ~80 MB in the big partition: more than one Fetch answer may carry
HUGE_PARTITIONS = 20_000
SLOWLORIS = 1_000
FETCHERS = 8
INT32_MAX = 2**31 - 1


def _produce_request(records: bytes) -> ProduceRequest:
    return ProduceRequest(
        acks=1,
        timeout_ms=30_000,
        topic_data=[TopicProduceData(name=BIG_TOPIC, partition_data=[PartitionProduceData(index=0, records=records)])],
    )


async def _fill_big_partition(port: int) -> None:
    client = await connect(port)
    await create_topic(client, BIG_TOPIC, 1)
    one_batch = Record(offset_delta=0, timestamp_delta=0, key=None, value=b"v" * BATCH_VALUE_BYTES)
    records = encode_batch(RecordBatch.from_records([one_batch]))  # the broker assigns the offsets
    for _ in range(BIG_BATCHES):
        response = await client.call(ApiKey.PRODUCE, 9, _produce_request(records))
        assert response.responses[0].partition_responses[0].error_code == ErrorCode.NONE
    await client.close()


async def _huge_fetch(port: int) -> int:
    """One Fetch from offset 0 asking for 2 GB; the size of the record set answered."""
    client = await connect(port)
    try:
        wanted = FetchTopic(
            topic=BIG_TOPIC, partitions=[FetchPartition(partition=0, fetch_offset=0, partition_max_bytes=INT32_MAX)]
        )
        request = FetchRequest(max_wait_ms=0, min_bytes=1, max_bytes=INT32_MAX, topics=[wanted])
        response = await client.call(ApiKey.FETCH, 12, request)
        [partition] = response.responses[0].partitions
        assert partition.error_code == ErrorCode.NONE
        return len(partition.records or b"")
    finally:
        await client.close()


async def _huge_create_topics(port: int) -> int:
    client = await connect(port)
    try:
        request = CreateTopicsRequest(
            topics=[CreatableTopic(name="huge", num_partitions=HUGE_PARTITIONS, replication_factor=1)],
            timeout_ms=600_000,
        )
        response = await client.call(ApiKey.CREATE_TOPICS, 4, request)
        return int(response.topics[0].error_code)
    finally:
        await client.close()


def _slowloris(port: int, count: int) -> list[socket.socket]:
    """Connections that send a size prefix and two bytes of a request, then nothing."""
    held = []
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", port))
        sock.sendall(b"\x00\x00\x00\x40\x00\x12")
        held.append(sock)
    return held


class _Bystander:
    """A confluent-kafka group member polling on its own thread; counts the assignments it is given."""

    def __init__(self, bootstrap: str) -> None:
        self.assignments = 0
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": GROUP,
                "client.id": "bystander",
                "session.timeout.ms": 3000,
                "heartbeat.interval.ms": 300,
                "enable.auto.commit": False,
                "error_cb": lambda error: self.errors.append(str(error)),
            }
        )
        self._consumer.subscribe([BYSTANDER_TOPIC], on_assign=self._on_assign)
        self._thread = threading.Thread(target=self._run, name="bystander", daemon=True)
        self._thread.start()

    def _on_assign(self, consumer: Consumer, partitions: list[object]) -> None:
        self.assignments += 1

    def _run(self) -> None:
        while not self._stop.is_set():
            self._consumer.poll(0.1)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(10)
        self._consumer.close()


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[BrokerProcess]:
    process = BrokerProcess(tmp_path / "data")
    process.start()
    try:
        yield process
    finally:
        process.kill()


def _completed_generations(broker: BrokerProcess) -> list[str]:
    return [line for line in broker.log_lines() if '"rebalance.completed"' in line and f'"{GROUP}"' in line]


async def test_a_bystander_group_keeps_its_generation_through_oversized_requests(broker: BrokerProcess) -> None:
    setup = await connect(broker.port)
    await create_topic(setup, BYSTANDER_TOPIC, 3)
    await setup.close()
    await _fill_big_partition(broker.port)

    with ExitStack() as stack:
        bystander = _Bystander(broker.bootstrap)
        stack.callback(bystander.close)
        wait_until(lambda: bystander.assignments == 1 and len(_completed_generations(broker)) == 1, 30)

        held = await asyncio.to_thread(_slowloris, broker.port, SLOWLORIS)
        for sock in held:
            stack.callback(sock.close)
        created, *fetched = await asyncio.gather(
            _huge_create_topics(broker.port), *(_huge_fetch(broker.port) for _ in range(FETCHERS))
        )

        assert created == ErrorCode.NONE
        for size in fetched:
            assert 0 < size <= FETCH_MAX_BYTES
        # A bystander request still gets its answer while every slowloris connection is held open.
        probe = await WireClient.connect(broker.port)
        await create_topic(probe, "after-the-storm", 1)
        await probe.close()

        assert bystander.assignments == 1, "the bystander was rebalanced"
        assert len(_completed_generations(broker)) == 1, "the bystander group got a new generation"
        assert broker.process is not None and broker.process.poll() is None
