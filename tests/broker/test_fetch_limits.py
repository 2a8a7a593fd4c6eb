"""Fetch limits as Kafka applies them, byte for byte, and memory that stays bounded under large fetches.

Kafka (KafkaApis.handleFetchRequest, ReplicaManager.readFromLog): the response budget is the request's max_bytes
capped by the broker's `fetch.max.bytes` (KIP-541); each partition reads at most min(partition_max_bytes, what is
left of the budget); the first partition that returns data returns at least one whole batch even if it is larger
than both limits (KIP-74), later ones only what fits. This broker sends whole batches only (see the README).
"""

from __future__ import annotations

import asyncio
import struct
import tracemalloc
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from broker.app import Broker
from protocol import api
from protocol.errors import ErrorCode
from protocol.messages.fetch import FetchRequest
from protocol.registry import ApiKey
from tests.broker.conftest import broker_config
from tests.broker.fetch_wire import INT32_MAX, filled, request
from tests.broker.wire import WireClient
from tests.support.data_plane import FETCH_VERSION, batch

FETCH_MAX = 4096  # the broker's fetch.max.bytes in these tests
VALUE = b"v" * 900
BATCH = len(batch(VALUE))  # every batch below has this size


@pytest.fixture
async def capped(tmp_path: Path) -> AsyncIterator[Broker]:
    instance = Broker(broker_config(tmp_path, **{"fetch.max.bytes": str(FETCH_MAX)}))
    await instance.start()
    yield instance
    await instance.stop()


async def record_bytes(client: WireClient, fetch: FetchRequest) -> list[int]:
    """How many record bytes each partition of the response carries."""
    response = await client.call(ApiKey.FETCH, FETCH_VERSION, fetch)
    assert response.error_code == ErrorCode.NONE
    partitions = response.responses[0].partitions
    assert all(p.error_code == ErrorCode.NONE for p in partitions)
    return [len(p.records or b"") for p in partitions]


async def test_fetch_max_bytes_caps_a_huge_request_max_bytes(capped: Broker) -> None:
    client = await filled(capped, "capped", {0: [VALUE] * 10})
    assert BATCH * 4 <= FETCH_MAX < BATCH * 5
    assert await record_bytes(client, request("capped", [0])) == [BATCH * 4]  # not 10 batches: 4 fit in 4096
    assert await record_bytes(client, request("capped", [0], max_bytes=BATCH * 2)) == [BATCH * 2]  # below the cap
    await client.close()


async def test_partition_max_bytes_and_the_shared_budget(capped: Broker) -> None:
    client = await filled(capped, "split", {0: [VALUE] * 5, 1: [VALUE] * 5, 2: [VALUE] * 5})
    # each partition at most 2 batches; the budget (3.5 batches) leaves the third partition nothing that fits
    sizes = await record_bytes(
        client, request("split", [0, 1, 2], max_bytes=BATCH * 3 + BATCH // 2, partition_max_bytes=BATCH * 2 + 10)
    )
    assert sizes == [BATCH * 2, BATCH, 0]
    await client.close()


async def test_only_the_first_partition_with_data_gets_a_batch_larger_than_the_limits(capped: Broker) -> None:
    big = b"B" * 6000  # one batch larger than fetch.max.bytes, max_bytes and partition_max_bytes
    client = await filled(capped, "large", {0: [], 1: [big], 2: [big]})
    big_batch = len(batch(big))
    sizes = await record_bytes(client, request("large", [0, 1, 2], max_bytes=1000, partition_max_bytes=1000))
    assert sizes == [0, big_batch, 0]  # partition 0 has no data, so partition 1 is the first with data
    await client.close()


async def test_a_zero_max_bytes_still_returns_one_batch(capped: Broker) -> None:
    client = await filled(capped, "zero", {0: [VALUE, VALUE]})
    assert await record_bytes(client, request("zero", [0], max_bytes=0, partition_max_bytes=0)) == [BATCH]
    await client.close()


def test_kafkas_default() -> None:
    from broker.config import BrokerConfig, ConfigError

    assert BrokerConfig()["fetch.max.bytes"] == 55 * 1024 * 1024  # ServerConfigs.FETCH_MAX_BYTES_DEFAULT
    with pytest.raises(ConfigError, match=r"'fetch\.max\.bytes'.*at least 1024"):
        BrokerConfig({"fetch.max.bytes": "1000"})


# ---------------------------------------------------------------------------------------------------------------
# Bounded memory: large record sections are streamed from the segment files, not built in memory
# ---------------------------------------------------------------------------------------------------------------

MB = 1 << 20
PARTITION_MB = 24
CONCURRENT = 4


async def read_slowly(client: WireClient, fetch: FetchRequest) -> int:
    """Send one Fetch and read its response in small pieces, yielding between them, like a slow consumer."""
    correlation_id, frame = client.frame(ApiKey.FETCH, FETCH_VERSION, fetch)
    client.writer.write(frame)
    await client.writer.drain()
    size = struct.unpack(">i", await client.reader.readexactly(4))[0]
    head = await client.reader.readexactly(4)
    assert struct.unpack(">i", head)[0] == correlation_id
    left = size - 4
    while left:
        left -= len(await client.reader.read(min(left, 256 * 1024)))
        await asyncio.sleep(0)
    return size


async def test_concurrent_huge_fetches_do_not_hold_their_responses_in_memory(tmp_path: Path) -> None:
    big = Broker(broker_config(tmp_path, **{"fetch.max.bytes": str(1 << 30)}))  # let the whole partition through
    await big.start()
    try:
        value = b"x" * (MB - 200)
        client = await filled(big, "huge", {0: [value] * PARTITION_MB})
        await client.close()
        partition_bytes = big.logs.get("huge", 0).size_in_bytes
        clients = [await WireClient.connect(big.ports[0]) for _ in range(CONCURRENT)]
        tracemalloc.start()
        try:
            baseline = tracemalloc.get_traced_memory()[0]
            sizes = await asyncio.gather(*(read_slowly(c, request("huge", [0])) for c in clients))
            peak = tracemalloc.get_traced_memory()[1] - baseline
        finally:
            tracemalloc.stop()
        assert all(size > partition_bytes for size in sizes)  # every response carried the whole partition
        # Materialised, each response is the partition at least once (4 x 24 MB, plus copies). Streamed, what is
        # in memory at once is a few chunks per connection plus what the test client itself buffers.
        print(f"peak traced {peak / MB:.1f} MB")
        assert peak < 16 * MB, f"peak {peak / MB:.1f} MB for {CONCURRENT} x {partition_bytes / MB:.0f} MB responses"
        for c in clients:
            await c.close()
    finally:
        await big.stop()


async def test_a_streamed_response_decodes_to_the_same_records(tmp_path: Path) -> None:
    big = Broker(broker_config(tmp_path))
    await big.start()
    try:
        values = [bytes([65 + i]) * (300 * 1024) for i in range(8)]  # 2.4 MB over several chunks
        client = await filled(big, "same", {0: values})
        response = await client.call(ApiKey.FETCH, FETCH_VERSION, request("same", [0]))
        [partition] = response.responses[0].partitions
        expected = big.logs.get("same", 0).read(0, INT32_MAX)
        assert partition.records == expected
        # and a request pipelined behind it is answered after it, in order
        first_id, first = client.frame(ApiKey.FETCH, FETCH_VERSION, request("same", [0]))
        second_id, second = client.frame(ApiKey.FETCH, FETCH_VERSION, request("same", [0], max_bytes=10))
        client.writer.write(first + second)
        header, one = api.decode_response(ApiKey.FETCH, FETCH_VERSION, await client.read_frame())
        assert header.correlation_id == first_id and one.responses[0].partitions[0].records == expected
        header, two = api.decode_response(ApiKey.FETCH, FETCH_VERSION, await client.read_frame())
        assert header.correlation_id == second_id and len(two.responses[0].partitions[0].records) == len(
            batch(values[0])
        )
        await client.close()
    finally:
        await big.stop()
