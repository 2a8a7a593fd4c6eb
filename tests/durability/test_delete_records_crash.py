"""An acknowledged DeleteRecords survives kill -9: the log start it answered (the low watermark) is what Fetch and
ListOffsets report after a restart on the same log directory, and the offsets below it stay unreadable.

The partition log writes ``log-start-offset`` (temporary file, fsync, rename) before the answer goes out, so a
SIGKILL right after it, or while deletions are in flight, never brings deleted records back.
"""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

from protocol.errors import ErrorCode
from protocol.messages.delete_records import DeleteRecordsPartition, DeleteRecordsRequest, DeleteRecordsTopic
from protocol.messages.list_offsets import ListOffsetsPartition, ListOffsetsRequest, ListOffsetsTopic
from protocol.registry import ApiKey
from tests.broker.wire import WireClient
from tests.durability.offsets_client import connect, create_topic
from tests.support.broker_process import BrokerProcess
from tests.support.data_plane import batch, fetch, produce

TOPIC = "deleted-records"


async def _delete(client: WireClient, offset: int) -> tuple[int, int]:
    request = DeleteRecordsRequest(
        topics=[DeleteRecordsTopic(name=TOPIC, partitions=[DeleteRecordsPartition(partition_index=0, offset=offset)])],
        timeout_ms=5000,
    )
    [result] = (await client.call(ApiKey.DELETE_RECORDS, 2, request)).topics[0].partitions
    return result.error_code, result.low_watermark


async def _earliest(client: WireClient) -> int:
    request = ListOffsetsRequest(
        replica_id=-1,
        topics=[ListOffsetsTopic(name=TOPIC, partitions=[ListOffsetsPartition(partition_index=0, timestamp=-2)])],
    )
    [answer] = (await client.call(ApiKey.LIST_OFFSETS, 11, request)).topics[0].partitions
    assert answer.error_code == ErrorCode.NONE
    return int(answer.offset)


async def test_acknowledged_log_start_survives_kill9(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "data")
    broker.start()
    rng = random.Random(2026)
    low = 0
    try:
        client = await connect(broker.port)
        await create_topic(client, TOPIC, 1)
        await client.close()
        for round_number in range(12):
            client = await connect(broker.port)
            for i in range(rng.randrange(1, 6)):
                assert (await produce(client, TOPIC, batch(b"r%d-%d" % (round_number, i)))).error_code == 0
            end = (await fetch(client, TOPIC, low)).high_watermark
            target = rng.randrange(low, end + 1)
            error, answered = await _delete(client, target)
            assert (error, answered) == (ErrorCode.NONE, max(low, target))
            low = answered
            await client.close()
            broker.kill()  # SIGKILL right after the answer
            broker.start()
            client = await connect(broker.port)
            assert await _earliest(client) == low, f"round {round_number}"
            if low > 0:
                below = await fetch(client, TOPIC, low - 1)
                assert below.error_code == ErrorCode.OFFSET_OUT_OF_RANGE, f"round {round_number}"
            assert (await fetch(client, TOPIC, low)).log_start_offset == low
            await client.close()
    finally:
        broker.kill()


async def _delete_forever(port: int, acked: list[int]) -> None:
    """DeleteRecords one offset further each time, noting every acknowledged low watermark, until the kill."""
    client = await connect(port)
    try:
        while True:
            error, answered = await _delete(client, (acked[-1] if acked else 0) + 1)
            if error == ErrorCode.NONE:
                acked.append(answered)
            else:
                assert error == ErrorCode.OFFSET_OUT_OF_RANGE  # caught up with the high watermark
                assert (await produce(client, TOPIC, batch(b"more"))).error_code == 0
    except (ConnectionError, asyncio.IncompleteReadError, OSError):
        return  # the broker was killed mid-request
    finally:
        client.writer.close()


async def test_kill9_while_deletions_are_in_flight(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "data")
    broker.start()
    rng = random.Random(7)
    try:
        client = await connect(broker.port)
        await create_topic(client, TOPIC, 1)
        for i in range(50):
            await produce(client, TOPIC, batch(b"v%d" % i))
        await client.close()
        acked: list[int] = []
        for round_number in range(5):
            task = asyncio.ensure_future(_delete_forever(broker.port, acked))
            floor = len(acked) + 3
            while len(acked) < floor:  # noqa: ASYNC110 - polling a list the task fills
                await asyncio.sleep(0.01)
            await asyncio.sleep(rng.uniform(0, 0.1))
            broker.kill()
            await task
            broker.start()
            client = await connect(broker.port)
            # every acknowledged deletion holds; one in flight at the kill may or may not have happened
            earliest = await _earliest(client)
            assert acked[-1] <= earliest <= acked[-1] + 1, f"round {round_number}"
            acked.append(earliest)
            await client.close()
    finally:
        broker.kill()
