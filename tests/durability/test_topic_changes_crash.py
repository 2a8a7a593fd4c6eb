"""kill -9 at random moments while a topic is deleted, or while a topic of many partitions is created.

After each restart nothing acknowledged is lost, no other topic is touched, the topic in question is either there
with every partition or not there at all (never half a topic), and deleting or creating it again works.
"""

from __future__ import annotations

import asyncio
import os
import random
from pathlib import Path

from protocol.errors import ErrorCode
from protocol.messages.create_topics import CreatableTopic, CreateTopicsRequest
from protocol.messages.delete_topics import DeleteTopicsRequest
from protocol.messages.metadata import MetadataRequest, MetadataRequestTopic
from protocol.registry import ApiKey
from tests.broker.wire import WireClient
from tests.durability.offsets_client import commit, connect, create_topic, fetch
from tests.support.broker_process import BrokerProcess

KEPT = "kept"
GROUP = "bystander"
DOOMED_PARTITIONS = 300


async def partition_count(client: WireClient, topic: str) -> int | None:
    """The topic's partition count as Metadata serves it, or None when it does not exist."""
    request = MetadataRequest(topics=[MetadataRequestTopic(name=topic)], allow_auto_topic_creation=False)
    [answer] = (await client.call(ApiKey.METADATA, 12, request)).topics
    if answer.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
        return None
    assert answer.error_code == ErrorCode.NONE
    return len(answer.partitions)


def served_dirs(data_dir: Path, topic: str) -> set[int]:
    """Partition numbers of ``<topic>-<n>`` directories (the ones the broker serves from)."""
    prefix = f"{topic}-"
    return {int(e[len(prefix) :]) for e in os.listdir(data_dir) if e.startswith(prefix) and e[len(prefix) :].isdigit()}


async def start_change(client: WireClient, api_key: ApiKey, version: int, body: object) -> None:
    _, frame = client.frame(api_key, version, body)
    client.writer.write(frame)
    await client.writer.drain()


async def check_after_restart(client: WireClient, data_dir: Path, topic: str, full: int, acked: dict[int, int]) -> None:
    assert await fetch(client, GROUP, KEPT, [0, 1]) == acked
    assert await partition_count(client, KEPT) == 2
    count = await partition_count(client, topic)
    assert count in (None, full), f"{topic} came back with {count} of {full} partitions"
    assert served_dirs(data_dir, topic) == (set(range(full)) if count else set())
    assert not [e for e in os.listdir(data_dir) if e.endswith("-delete")]


async def test_kill9_during_topic_deletion_and_creation_leaves_all_or_nothing(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    broker = BrokerProcess(data_dir)
    broker.start()
    rng = random.Random(10)
    try:
        client = await connect(broker.port)
        await create_topic(client, KEPT, 2)
        acked = {0: 11, 1: 22}
        assert await commit(client, GROUP, KEPT, acked)
        await client.close()
        for round_number in range(8):
            deleting = round_number % 2 == 0
            topic = "doomed" if deleting else "wide"
            full = DOOMED_PARTITIONS if deleting else 3_000
            client = await connect(broker.port)
            if deleting:
                await create_topic(client, topic, full)
                await start_change(client, ApiKey.DELETE_TOPICS, 4, DeleteTopicsRequest(topic_names=[topic]))
            else:
                creatable = CreatableTopic(name=topic, num_partitions=full, replication_factor=1)
                await start_change(client, ApiKey.CREATE_TOPICS, 4, CreateTopicsRequest(topics=[creatable]))
            await asyncio.sleep(rng.uniform(0, 0.4))
            broker.kill()
            client.writer.close()  # its answer died with the broker
            broker.start()
            client = await connect(broker.port)
            await check_after_restart(client, data_dir, topic, full, acked)
            if await partition_count(client, topic) is not None:
                request = DeleteTopicsRequest(topic_names=[topic])
                [deleted] = (await client.call(ApiKey.DELETE_TOPICS, 4, request)).responses
                assert deleted.error_code == ErrorCode.NONE, f"round {round_number}"
            await create_topic(client, topic, 2)  # re-create works
            assert await partition_count(client, topic) == 2
            [deleted] = (await client.call(ApiKey.DELETE_TOPICS, 4, DeleteTopicsRequest(topic_names=[topic]))).responses
            assert deleted.error_code == ErrorCode.NONE
            await client.close()
    finally:
        broker.kill()
