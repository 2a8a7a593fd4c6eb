"""Retention on the real log with virtual time: expired offsets are tombstoned durably, and data segments roll
and expire by the broker's clock.

The broker's clock is advanced past `offsets.retention.minutes` instead of waiting a minute; the coordinator's
retention timer fires, writes tombstones to `__consumer_offsets`, and the expiry survives a restart. Likewise
`segment.ms` and `retention.ms` of a topic follow the broker clock, so tests advance it instead of sleeping.
"""

from __future__ import annotations

from pathlib import Path

from broker.app import Broker
from protocol.errors import ErrorCode
from protocol.messages.create_topics import CreatableTopic, CreatableTopicConfig, CreateTopicsRequest
from protocol.records import NO_TIMESTAMP
from protocol.registry import ApiKey
from tests.broker.conftest import broker_config
from tests.durability.offsets_client import commit, connect, create_topic, fetch
from tests.support.data_plane import batch, produce

SETTINGS = {"offsets_retention_minutes": "1", "offsets_retention_check_interval_ms": "1000"}


async def _started(tmp_path: Path) -> Broker:
    broker = Broker(broker_config(tmp_path, **SETTINGS))
    await broker.start()
    await broker.loaded.wait()
    return broker


async def test_empty_group_offsets_expire_and_stay_expired_after_restart(tmp_path: Path) -> None:
    broker = await _started(tmp_path)
    try:
        client = await connect(broker.ports[0])
        await create_topic(client, "kept", 2)
        assert await commit(client, "short-lived", "kept", {0: 10, 1: 20})
        broker.advance_time(30_000)
        assert await fetch(client, "short-lived", "kept", [0, 1]) == {0: 10, 1: 20}  # not yet
        # past one minute since the commit, and a retention check is due; the tombstones go out in the next loop
        # turn (group commit), before the broker reads the OffsetFetch below
        broker.advance_time(31_000)
        assert await fetch(client, "short-lived", "kept", [0, 1]) == {0: -1, 1: -1}
        await client.close()
    finally:
        await broker.stop()
    restarted = await _started(tmp_path)
    try:
        client = await connect(restarted.ports[0])
        assert await fetch(client, "short-lived", "kept", [0, 1]) == {0: -1, 1: -1}
        await client.close()
    finally:
        await restarted.stop()


HOUR_MS = 3_600_000


async def test_virtual_time_rolls_segments_by_segment_ms_and_deletes_them_by_retention_ms(tmp_path: Path) -> None:
    broker = Broker(broker_config(tmp_path, log_retention_check_interval_ms="1000"))
    await broker.start()
    try:
        # The broker's clock runs an hour ahead of the OS clock: storage must not mix the two. The batches carry no
        # timestamp, so segment.ms and retention.ms go by the broker's clock.
        broker.advance_time(HOUR_MS)
        client = await connect(broker.ports[0])
        configs = [
            CreatableTopicConfig(name="segment.ms", value="60000"),
            CreatableTopicConfig(name="retention.ms", value="600000"),
        ]
        topic = CreatableTopic(name="timed", num_partitions=1, replication_factor=1, configs=configs)
        created = await client.call(ApiKey.CREATE_TOPICS, 4, CreateTopicsRequest(topics=[topic]))
        assert created.topics[0].error_code == ErrorCode.NONE
        log = broker.logs.get("timed", 0)
        assert log is not None
        assert (await produce(client, "timed", batch(b"v", timestamp=NO_TIMESTAMP))).error_code == ErrorCode.NONE
        assert (await produce(client, "timed", batch(b"v", timestamp=NO_TIMESTAMP))).error_code == ErrorCode.NONE
        assert log.segment_count == 1  # the segment is new by the broker's clock (an hour old by the OS clock)
        broker.advance_time(60_001)
        assert (await produce(client, "timed", batch(b"v", timestamp=NO_TIMESTAMP))).error_code == ErrorCode.NONE
        assert log.segment_count == 2  # segment.ms passed on the broker's clock: rolled
        broker.advance_time(2_000)  # a retention check runs: the closed segment is a minute old, kept
        assert (log.log_start_offset, log.segment_count) == (0, 2)
        broker.advance_time(540_000)  # the closed segment's last append is past retention.ms, the active one's not
        assert (log.log_start_offset, log.segment_count, log.log_end_offset) == (2, 1, 3)
        await client.close()
    finally:
        await broker.stop()
