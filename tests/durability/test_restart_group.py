"""A Stable group survives a broker restart: members that keep heartbeating stay, with no new generation.

The group's metadata (members, assignment, generation) is in `__consumer_offsets`; the restarted broker loads it
back as Stable with fresh session timers (rule #46), so real consumers that reconnect within their session timeout
just carry on.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from tests.support.broker_process import BrokerProcess, wait_until_async

TOPIC = "restart-topic"
GROUP = "restart-group"


def _events(broker: BrokerProcess, name: str) -> list[dict[str, object]]:
    events = []
    for line in broker.log_lines():
        if line.startswith("{"):
            event = json.loads(line)
            if event.get("event") == name and event.get("group") == GROUP:
                events.append(event)
    return events


def _generation_of_all(broker: BrokerProcess, members: int) -> object:
    """The generation of the last completed rebalance if it had every member, else None."""
    done = _events(broker, "rebalance.completed")
    members_of_last = done[-1]["members"] if done else []
    return done[-1]["generation"] if isinstance(members_of_last, list) and len(members_of_last) == members else None


async def _consume(consumer: AIOKafkaConsumer, seen: list[bytes]) -> None:
    with contextlib.suppress(asyncio.CancelledError):
        while True:
            batches = await consumer.getmany(timeout_ms=200)
            for messages in batches.values():
                seen.extend(m.value for m in messages)


async def test_stable_group_of_three_continues_across_a_restart_without_a_new_generation(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "data")
    bootstrap = broker.start()
    consumers: list[AIOKafkaConsumer] = []
    tasks: list[asyncio.Task[None]] = []
    seen: list[bytes] = []
    try:
        admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
        await admin.start()
        await admin.create_topics([NewTopic(TOPIC, 6, 1)])
        await admin.close()
        for _ in range(3):
            consumer = AIOKafkaConsumer(
                TOPIC,
                bootstrap_servers=bootstrap,
                group_id=GROUP,
                auto_offset_reset="earliest",
                session_timeout_ms=30_000,  # a restart on a loaded machine has taken more than 10 s
                heartbeat_interval_ms=500,
                retry_backoff_ms=50,
            )
            await consumer.start()
            consumers.append(consumer)
            tasks.append(asyncio.ensure_future(_consume(consumer, seen)))
        await wait_until_async(lambda: sorted(len(c.assignment()) for c in consumers) == [2, 2, 2])
        # The generation all three are in: a third consumer joining late makes one more generation, whose log line
        # may be read a moment after the consumers see their assignments.
        await wait_until_async(lambda: _generation_of_all(broker, 3) is not None)
        generation = _generation_of_all(broker, 3)
        assignments = [sorted(c.assignment()) for c in consumers]

        broker.stop()
        broker.start()  # same port, same log dir, well within the 30 s session timeout

        producer = AIOKafkaProducer(bootstrap_servers=bootstrap)
        await producer.start()
        for i in range(60):
            await producer.send_and_wait(TOPIC, key=str(i).encode(), value=f"after-restart-{i}".encode())
        await producer.stop()
        await wait_until_async(lambda: len([v for v in seen if v.startswith(b"after-restart")]) == 60)

        loaded = _events(broker, "group.loaded")
        assert loaded and loaded[-1]["generation"] == generation and loaded[-1]["state"] == "Stable"
        assert _events(broker, "rebalance.started") == []  # the restarted broker never rebalanced the group
        assert [sorted(c.assignment()) for c in consumers] == assignments
    finally:
        for task in tasks:
            task.cancel()
        for consumer in consumers:
            await consumer.stop()
        broker.kill()
