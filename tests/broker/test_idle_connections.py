"""`connections.max.idle.ms`: connections with no bytes read or written for that long are closed, as Kafka's
Selector closes them, including ones stalled mid-frame (slowloris); a connection whose request is parked in the
broker (a JoinGroup waiting for a rebalance) is waiting on us, not idle, and stays open.

Time is the broker clock, moved with `advance_time`, so nothing here sleeps.
"""

from __future__ import annotations

import asyncio
import struct
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from broker.app import Broker
from protocol import api
from protocol.errors import ErrorCode
from protocol.messages.api_versions import ApiVersionsRequest
from protocol.registry import ApiKey
from tests.broker.conftest import broker_config
from tests.broker.group_wire import describe, join_and_sync, join_request
from tests.broker.wire import WireClient
from tests.support.broker_process import wait_until_async

MAX_IDLE_MS = 5_000  # below the 10 s sessions of the group tests: advancing past it expires no member
STALLED_BYTES = 7  # the size prefix and 3 bytes of the body


@pytest.fixture
async def idle_broker(tmp_path: Path) -> AsyncIterator[Broker]:
    instance = Broker(broker_config(tmp_path, **{"connections.max.idle.ms": str(MAX_IDLE_MS)}))
    await instance.start()
    await instance.loaded.wait()
    yield instance
    await instance.stop()


async def stalled_mid_frame(broker: Broker) -> WireClient:
    """A slowloris client: a size prefix promising 100 bytes and 3 of them, then nothing."""
    client = await WireClient.connect(broker.ports[0])
    client.writer.write(struct.pack(">i", 100) + b"\x00\x12\x00")
    await client.writer.drain()
    return client


def closed_events(logs: list[dict[str, object]]) -> list[dict[str, object]]:
    return [entry for entry in logs if entry["event"] == "connection.idle_closed"]


async def test_idle_and_half_sent_connections_are_closed_after_max_idle(idle_broker: Broker) -> None:
    assert idle_broker.clock is not None
    idle_broker.clock.freeze()  # idle times are exact: only `advance_time` moves the clock
    quiet = await WireClient.connect(idle_broker.ports[0])
    assert (await quiet.call(ApiKey.API_VERSIONS, 0, ApiVersionsRequest())).error_code == ErrorCode.NONE
    slow = await stalled_mid_frame(idle_broker)
    await wait_until_async(lambda: sum(c.pending_bytes for c in idle_broker.connections) == STALLED_BYTES)

    with capture_logs() as logs:
        idle_broker.advance_time(MAX_IDLE_MS - 1)
        assert len(idle_broker.connections) == 2 and not closed_events(logs)  # not yet
        idle_broker.advance_time(1)
        assert await quiet.closed_by_peer()
        assert await slow.closed_by_peer()
    events = closed_events(logs)
    assert sorted((e["log_level"], e["pending_bytes"]) for e in events) == [("info", 0), ("info", STALLED_BYTES)]
    assert all(e["idle_ms"] == MAX_IDLE_MS and "conn_id" in e for e in events)
    await wait_until_async(lambda: not idle_broker.connections)
    for client in (quiet, slow):
        await client.close()


async def test_activity_restarts_the_idle_clock(idle_broker: Broker) -> None:
    client = await WireClient.connect(idle_broker.ports[0])
    await wait_until_async(lambda: len(idle_broker.connections) == 1)
    idle_broker.advance_time(MAX_IDLE_MS - 10)
    assert (await client.call(ApiKey.API_VERSIONS, 0, ApiVersionsRequest())).error_code == ErrorCode.NONE
    idle_broker.advance_time(MAX_IDLE_MS - 10)
    assert (await client.call(ApiKey.API_VERSIONS, 0, ApiVersionsRequest())).error_code == ErrorCode.NONE
    await client.close()


async def test_a_connection_with_a_parked_join_group_is_not_idle(idle_broker: Broker) -> None:
    first = await WireClient.connect(idle_broker.ports[0])
    second = await WireClient.connect(idle_broker.ports[0])
    group = "parked"
    session_ms = 10 * MAX_IDLE_MS  # no member expires while the clock moves past the idle limit
    member_1, generation = await join_and_sync(first, group)
    member_2 = (await second.call(ApiKey.JOIN_GROUP, 5, join_request(group, session_ms=session_ms))).member_id
    correlation, frame = second.frame(ApiKey.JOIN_GROUP, 5, join_request(group, member_2, session_ms=session_ms))
    second.writer.write(frame)
    await second.writer.drain()
    answer = asyncio.create_task(second.read_frame())
    observer = await WireClient.connect(idle_broker.ports[0])

    async def parked() -> None:  # the second JoinGroup is in the group, parked in PreparingRebalance
        while len((await describe(observer, group)).members) < 2:
            assert not answer.done()

    await asyncio.wait_for(parked(), 10)  # a bound for a broken broker, not a timing assertion
    await observer.close()
    await wait_until_async(lambda: len(idle_broker.connections) == 2)  # the observer's close has been seen

    with capture_logs() as logs:
        idle_broker.advance_time(MAX_IDLE_MS + 1_000)
        assert await first.closed_by_peer()  # idle: closed
    assert len(closed_events(logs)) == 1
    assert not answer.done()

    rejoin = await WireClient.connect(idle_broker.ports[0])
    rejoined = await rejoin.call(ApiKey.JOIN_GROUP, 5, join_request(group, member_1))
    assert (rejoined.error_code, rejoined.generation_id) == (ErrorCode.NONE, generation + 1)
    header, joined = api.decode_response(ApiKey.JOIN_GROUP, 5, await answer)
    assert header.correlation_id == correlation and joined.error_code == ErrorCode.NONE  # answered, never dropped
    assert (await describe(second, group)).group_state == "CompletingRebalance"
    for client in (first, second, rejoin):
        await client.close()


async def test_a_thousand_slowloris_connections_do_not_stop_a_bystander(idle_broker: Broker) -> None:
    stalled = [await stalled_mid_frame(idle_broker) for _ in range(1000)]
    bystander = await WireClient.connect(idle_broker.ports[0])
    assert (await bystander.call(ApiKey.API_VERSIONS, 0, ApiVersionsRequest())).error_code == ErrorCode.NONE
    await wait_until_async(lambda: sum(c.pending_bytes for c in idle_broker.connections) == STALLED_BYTES * 1000)

    with capture_logs() as logs:
        idle_broker.advance_time(MAX_IDLE_MS)
        await wait_until_async(lambda: len(idle_broker.connections) == 0)
    assert len(closed_events(logs)) == 1001
    for client in [*stalled, bystander]:
        assert await client.closed_by_peer()
        await client.close()
    fresh = await WireClient.connect(idle_broker.ports[0])
    assert (await fresh.call(ApiKey.API_VERSIONS, 0, ApiVersionsRequest())).error_code == ErrorCode.NONE
    await fresh.close()


async def test_idle_expiry_can_be_turned_off(tmp_path: Path) -> None:
    instance = Broker(broker_config(tmp_path, **{"connections.max.idle.ms": "-1"}))
    await instance.start()
    try:
        client = await WireClient.connect(instance.ports[0])
        await wait_until_async(lambda: len(instance.connections) == 1)
        instance.advance_time(365 * 24 * 3_600_000)
        assert (await client.call(ApiKey.API_VERSIONS, 0, ApiVersionsRequest())).error_code == ErrorCode.NONE
        await client.close()
    finally:
        await instance.stop()


def test_kafkas_default_is_ten_minutes() -> None:
    from broker.config import BrokerConfig

    assert BrokerConfig()["connections.max.idle.ms"] == 600_000
