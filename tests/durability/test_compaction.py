"""`__consumer_offsets` stays small under endless commits, and compaction never changes what OffsetFetch answers.

Commits to the same ten partitions of one group go through the broker into a partition with small segments; the
background cleaner (in a worker thread) keeps only the latest record per key. The answer of OffsetFetch is the
same before and after compaction, and after a restart that loads the compacted partition.
The storage-level test in tests/storage/test_cleaner.py pushes one million records through the cleaner itself.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from broker.app import Broker
from coordinator.hashing import partition_for
from tests.broker.conftest import broker_config
from tests.durability.offsets_client import commit, connect, create_topic, fetch

GROUP = "compacted-group"
TOPIC = "compacted-topic"
PARTITIONS = list(range(10))
COMMITS = int(os.environ.get("COMPACTION_COMMITS", "10000"))  # each commits all ten partitions
SETTINGS = {"offsets_topic_segment_bytes": "65536", "log_cleaner_backoff_ms": "50"}


def _segments(broker: Broker) -> int:
    partition = partition_for(GROUP, broker.config["offsets.topic.num.partitions"])
    return len(list((broker.config.log_dir / f"__consumer_offsets-{partition}").glob("*.log")))


async def _start(tmp_path: Path) -> Broker:
    broker = Broker(broker_config(tmp_path, **SETTINGS))
    await broker.start()
    await broker.loaded.wait()
    return broker


async def test_endless_commits_keep_few_segments_and_fetch_answers_unchanged(tmp_path: Path) -> None:
    broker = await _start(tmp_path)
    try:
        client = await connect(broker.ports[0])
        await create_topic(client, TOPIC, len(PARTITIONS))
        most_segments = 0
        for round_number in range(1, COMMITS + 1):
            offsets = {p: round_number * 10 + p for p in PARTITIONS}
            assert await commit(client, GROUP, TOPIC, offsets)
            if round_number % 1000 == 0:
                most_segments = max(most_segments, _segments(broker))
        expected = {p: COMMITS * 10 + p for p in PARTITIONS}
        assert await fetch(client, GROUP, TOPIC, PARTITIONS) == expected
        assert broker.compaction is not None
        passes = broker.compaction.passes
        while broker.compaction.passes < passes + 2:  # noqa: ASYNC110 - two full passes after the last commit
            await asyncio.sleep(0.05)
        assert _segments(broker) <= 4, f"{_segments(broker)} segments after compaction"
        assert most_segments <= 8, "the cleaner kept up while commits were flowing"
        assert await fetch(client, GROUP, TOPIC, PARTITIONS) == expected
        await client.close()
    finally:
        await broker.stop()
    restarted = await _start(tmp_path)
    try:
        client = await connect(restarted.ports[0])
        assert await fetch(client, GROUP, TOPIC, PARTITIONS) == expected
        await client.close()
    finally:
        await restarted.stop()
