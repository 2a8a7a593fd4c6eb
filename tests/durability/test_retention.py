"""Offset retention (KIP-211, rule #36) on the real log with virtual time: expired offsets are tombstoned durably.

The broker's clock is advanced past `offsets.retention.minutes` instead of waiting a minute; the coordinator's
retention timer fires, writes tombstones to `__consumer_offsets`, and the expiry survives a restart.
"""

from __future__ import annotations

from pathlib import Path

from broker.app import Broker
from tests.broker.conftest import broker_config
from tests.durability.offsets_client import commit, connect, create_topic, fetch

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
