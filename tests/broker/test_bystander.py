"""One client never hurts the others: a consumer group keeps its generation, with no rebalance, while another
client runs huge Fetches and holds 1,000 slowloris connections open."""

from __future__ import annotations

import asyncio
import struct
from pathlib import Path

from broker.app import Broker
from protocol.errors import ErrorCode
from protocol.messages.heartbeat import HeartbeatRequest
from protocol.registry import ApiKey
from tests.broker.conftest import broker_config
from tests.broker.test_fetch_limits import filled, read_slowly, request
from tests.broker.test_groups_wire import describe, join_and_sync
from tests.broker.wire import WireClient

MB = 1 << 20


async def test_a_group_keeps_its_generation_through_huge_fetches_and_slowloris(tmp_path: Path) -> None:
    broker = Broker(broker_config(tmp_path, **{"fetch.max.bytes": str(1 << 30)}))
    await broker.start()
    await broker.loaded.wait()
    try:
        loader = await filled(broker, "huge", {0: [b"x" * (MB - 200)] * 16})
        await loader.close()
        member_client = await WireClient.connect(broker.ports[0])
        member, generation = await join_and_sync(member_client, "bystanders")  # 10 s session
        stop = asyncio.Event()
        answers: list[int] = []

        async def heartbeat() -> None:
            beat = HeartbeatRequest(group_id="bystanders", generation_id=generation, member_id=member)
            while not stop.is_set():
                answers.append((await member_client.call(ApiKey.HEARTBEAT, 3, beat)).error_code)
                await asyncio.sleep(0.2)

        beating = asyncio.create_task(heartbeat())
        stalled = []
        for _ in range(1000):
            slow = await WireClient.connect(broker.ports[0])
            slow.writer.write(struct.pack(">i", 1000) + b"\x00\x01")
            stalled.append(slow)
        fetchers = [await WireClient.connect(broker.ports[0]) for _ in range(4)]
        for _ in range(2):
            await asyncio.gather(*(read_slowly(c, request("huge", [0])) for c in fetchers))
        stop.set()
        await beating

        assert answers and set(answers) == {ErrorCode.NONE}  # same generation throughout: no rebalance
        described = await describe(member_client, "bystanders")
        assert (described.group_state, len(described.members)) == ("Stable", 1)
        for client in [member_client, *stalled, *fetchers]:
            await client.close()
    finally:
        await broker.stop()
