"""A torn tail in `__consumer_offsets` (a partial or corrupt last batch) is cut off at restart, never served."""

from __future__ import annotations

from pathlib import Path

import pytest

from coordinator.hashing import partition_for
from tests.durability.offsets_client import commit, connect, create_topic, fetch
from tests.support.broker_process import FAST_GROUPS, BrokerProcess

GROUP = "torn-group"
TOPIC = "torn-topic"


def _last_segment(data_dir: Path) -> Path:
    partition = partition_for(GROUP, int(FAST_GROUPS["offsets.topic.num.partitions"]))
    return sorted((data_dir / f"__consumer_offsets-{partition}").glob("*.log"))[-1]


def _truncate_last_batch(segment: Path) -> None:
    data = segment.read_bytes()
    segment.write_bytes(data[:-7])  # the last batch loses its tail: a partial write


def _corrupt_last_batch(segment: Path) -> None:
    data = bytearray(segment.read_bytes())
    data[-3] ^= 0xFF  # a byte covered by the last batch's CRC
    segment.write_bytes(bytes(data))


@pytest.mark.parametrize("damage", [_truncate_last_batch, _corrupt_last_batch], ids=["truncated", "corrupt-crc"])
async def test_restart_recovers_to_the_last_valid_batch(tmp_path: Path, damage: object) -> None:
    data_dir = tmp_path / "data"
    broker = BrokerProcess(data_dir)
    broker.start()
    try:
        client = await connect(broker.port)
        await create_topic(client, TOPIC, 2)
        assert await commit(client, GROUP, TOPIC, {0: 100, 1: 200})
        assert await commit(client, GROUP, TOPIC, {0: 101})
        await client.close()
        broker.kill()
        damage(_last_segment(data_dir))  # type: ignore[operator]
        broker.start()
        client = await connect(broker.port)
        assert await fetch(client, GROUP, TOPIC, [0, 1]) == {0: 100, 1: 200}
        # the log accepts new writes after the cut, and they survive another crash
        assert await commit(client, GROUP, TOPIC, {0: 102})
        await client.close()
        broker.kill()
        broker.start()
        client = await connect(broker.port)
        assert await fetch(client, GROUP, TOPIC, [0, 1]) == {0: 102, 1: 200}
        await client.close()
    finally:
        broker.kill()
