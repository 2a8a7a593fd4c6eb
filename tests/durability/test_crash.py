"""Nothing acknowledged is ever lost: an OffsetCommit answered without error survives kill -9 of the broker.

The broker writes the commit's record to the `__consumer_offsets` log (to the OS) before it answers, so a SIGKILL
right after the answer, or at any moment while commits are in flight, must leave every acknowledged commit
readable after a restart on the same log directory, and nothing that was never sent.
"""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import pytest

from tests.durability.offsets_client import commit, commit_once, connect, create_topic, fetch
from tests.support.broker_process import BrokerProcess
from tests.support.campaign import FULL

GROUPS = ["crash-a", "crash-b", "crash-c", "crash-d"]
TOPIC = "crash-topic"
PARTITIONS = [0, 1, 2, 3, 4]
#: Kill -9 rounds: `make campaigns` runs fifty, `make test` a sample of ten (each round is a restart).
ROUNDS = 50 if FULL else 10


@pytest.mark.campaign
async def test_kill9_rounds_keep_exactly_the_acknowledged_offsets(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "data")
    broker.start()
    rng = random.Random(1234)
    acknowledged: dict[str, dict[int, int]] = {}
    try:
        for round_number in range(ROUNDS):
            client = await connect(broker.port)
            if round_number == 0:
                await create_topic(client, TOPIC, len(PARTITIONS))
            for group in GROUPS:
                offsets = {p: rng.randrange(0, 10**9) for p in rng.sample(PARTITIONS, 3)}
                assert await commit(client, group, TOPIC, offsets)
                acknowledged.setdefault(group, {}).update(offsets)
            await client.close()
            broker.kill()
            broker.start()
            client = await connect(broker.port)
            for group in GROUPS:
                fetched = await fetch(client, group, TOPIC, PARTITIONS)
                expected = {p: acknowledged[group].get(p, -1) for p in PARTITIONS}
                assert fetched == expected, f"round {round_number}, group {group}"
            await client.close()
    finally:
        broker.kill()


async def _commit_forever(port: int, group: str, sent: dict[int, list[int]], acked: dict[int, int]) -> None:
    client = await connect(port)
    offset = max((max(v) for v in sent.values() if v), default=0)  # never reuse a value: each is traceable
    try:
        while True:
            offset += 1
            partition = offset % len(PARTITIONS)
            sent.setdefault(partition, []).append(offset)
            if await commit_once(client, group, TOPIC, {partition: offset}) == {0}:
                acked[partition] = max(acked.get(partition, -1), offset)
    except (ConnectionError, asyncio.IncompleteReadError, OSError):
        return  # the broker was killed mid-request
    finally:
        client.writer.close()


async def test_kill9_at_random_points_while_commits_are_in_flight(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "data")
    broker.start()
    rng = random.Random(99)
    try:
        client = await connect(broker.port)
        await create_topic(client, TOPIC, len(PARTITIONS))
        await client.close()
        sent: dict[str, dict[int, list[int]]] = {g: {} for g in GROUPS[:2]}  # every value ever sent
        for round_number in range(8):
            acked: dict[str, dict[int, int]] = {g: {} for g in GROUPS[:2]}
            tasks = [asyncio.ensure_future(_commit_forever(broker.port, g, sent[g], acked[g])) for g in GROUPS[:2]]
            # let some commits through, then kill at a random moment while requests are in flight
            while sum(len(a) for a in acked.values()) < 2 * len(PARTITIONS):  # noqa: ASYNC110 - polling shared dicts
                await asyncio.sleep(0.01)
            await asyncio.sleep(rng.uniform(0, 0.2))
            broker.kill()
            await asyncio.gather(*tasks)
            broker.start()
            client = await connect(broker.port)
            for group in GROUPS[:2]:
                fetched = await fetch(client, group, TOPIC, PARTITIONS)
                for partition in PARTITIONS:
                    value = fetched[partition]
                    assert value >= acked[group].get(partition, -1), f"round {round_number}: acked commit lost"
                    if value != -1:
                        assert value in sent[group].get(partition, []), f"round {round_number}: invented offset"
            await client.close()
    finally:
        broker.kill()
