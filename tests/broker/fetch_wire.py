"""Fetch helpers the broker's wire tests share: a topic filled with one batch per value, and a Fetch of whole
partitions from offset 0 with the byte limits a test sets (tests/broker/test_fetch_limits.py, test_tls_wire.py)."""

from __future__ import annotations

from broker.app import Broker
from protocol.errors import ErrorCode
from protocol.messages.fetch import FetchPartition, FetchRequest, FetchTopic
from tests.broker.wire import WireClient
from tests.support.data_plane import batch, produce

INT32_MAX = 2**31 - 1


def request(
    topic: str, partitions: list[int], *, max_bytes: int = INT32_MAX, partition_max_bytes: int = INT32_MAX
) -> FetchRequest:
    wanted = [FetchPartition(partition=p, fetch_offset=0, partition_max_bytes=partition_max_bytes) for p in partitions]
    return FetchRequest(
        max_wait_ms=0, min_bytes=1, max_bytes=max_bytes, topics=[FetchTopic(topic=topic, partitions=wanted)]
    )


async def filled(broker: Broker, topic: str, batches: dict[int, list[bytes]]) -> WireClient:
    broker.create_topic(topic, len(batches), {})
    client = await WireClient.connect(broker.ports[0])
    for partition, values in batches.items():
        for value in values:
            assert (await produce(client, topic, batch(value), partition=partition)).error_code == ErrorCode.NONE
    return client
