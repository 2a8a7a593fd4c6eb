"""kill -9 of the broker process at seeded random moments while segments roll and the cleaner swaps constantly.

A broker runs with tiny segments (`offsets.topic.segment.bytes`, a data topic's `internal.segment.bytes`) and a
cleaner that never rests (`log.cleaner.backoff.ms=10`, `log.cleaner.min.cleanable.ratio=0.01`), so rolls and cleaner
swaps (`.cleaned` -> `.swap` -> final) happen all the time while, concurrently:

* three groups commit offsets (each value used once, so every fetched value is traceable);
* a producer appends to `roll-topic` (delete policy), each record tagged with a unique value;
* a producer appends keyed records to `compact-topic` (compact policy, cleaned too).

Each round SIGKILLs the broker either after a seeded random delay or, chosen by the seed, the moment a watcher
thread sees a `.cleaned` or `.swap` file appear (so kills land inside cleaner passes, not only between them).
Then the broker restarts with the cleaner held off (a long backoff), and:

* every group's latest acknowledged commit per partition is served by OffsetFetch (or a later one that was sent
  but whose answer was lost to the kill), never an invented value;
* every acknowledged Produce offset of `roll-topic` is readable with the same content;
* every key of `compact-topic` reads back at least as new as its latest acknowledged record;
* no partition directory holds a `.cleaned` or `.swap` file: recovery finished or discarded interrupted swaps.

The default run (`make test`) takes CAMPAIGN_SEEDS=2 seeds of ROUNDS rounds each, about half a minute on 2 cores;
`make campaigns` (CAMPAIGN=1) runs 20 seeds. `tests/durability/test_kill9_steps.py` kills at every single step of
a roll and a swap deterministically; this campaign checks the whole broker (offsets log, checkpoint, loader).
"""

from __future__ import annotations

import asyncio
import os
import random
import threading
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from protocol.errors import ErrorCode
from protocol.messages.create_topics import CreatableTopic, CreatableTopicConfig, CreateTopicsRequest
from protocol.messages.fetch import FetchPartition, FetchRequest, FetchTopic
from protocol.messages.produce import PartitionProduceData, ProduceRequest, TopicProduceData
from protocol.records import Record, RecordBatch, decode_batch, encode_batch
from protocol.registry import ApiKey
from storage.segment import CLEANED_SUFFIX, SWAP_SUFFIX
from tests.broker.wire import WireClient
from tests.durability.offsets_client import commit_once, connect, create_topic, fetch
from tests.support.broker_process import BrokerProcess
from tests.support.campaign import FULL

SEEDS = int(os.environ.get("CAMPAIGN_SEEDS", "20" if FULL else "2"))
ROUNDS = 4
GROUPS = ["kill-a", "kill-b", "kill-c"]
COMMIT_TOPIC = "committed-topic"
PARTITIONS = [0, 1, 2, 3]
ROLL_TOPIC = "roll-topic"
COMPACT_TOPIC = "compact-topic"
KEYS = 5
LEFTOVERS = (CLEANED_SUFFIX, SWAP_SUFFIX)
EAGER = {
    "offsets.topic.num.partitions": "3",
    "offsets.topic.segment.bytes": "2048",
    "log.cleaner.backoff.ms": "10",
    "log.cleaner.min.cleanable.ratio": "0.01",
}
HELD_OFF = {**EAGER, "log.cleaner.backoff.ms": "3600000"}  # restart for checking: no pass runs meanwhile
SMALL_SEGMENTS = {"internal.segment.bytes": "2048"}  # below segment.bytes' 1 MiB floor (Kafka 4)
COMPACTED = {"internal.segment.bytes": "2048", "cleanup.policy": "compact", "min.cleanable.dirty.ratio": "0.01"}


@dataclass
class Acknowledged:
    """What the clients sent and what the broker acknowledged, over all rounds of one seed."""

    commits_sent: dict[str, dict[int, set[int]]] = field(default_factory=lambda: {g: {} for g in GROUPS})
    commits_acked: dict[str, dict[int, int]] = field(default_factory=lambda: {g: {} for g in GROUPS})
    produced: dict[int, bytes] = field(default_factory=dict)  # roll-topic offset -> value
    latest_per_key: dict[bytes, int] = field(default_factory=dict)  # compact-topic key -> sequence
    sequence: int = 0

    def next_value(self) -> int:
        self.sequence += 1
        return self.sequence


async def _create_data_topic(client: WireClient, name: str, configs: dict[str, str]) -> None:
    topic = CreatableTopic(
        name=name,
        num_partitions=1,
        replication_factor=1,
        configs=[CreatableTopicConfig(name=k, value=v) for k, v in configs.items()],
    )
    response = await client.call(ApiKey.CREATE_TOPICS, 4, CreateTopicsRequest(topics=[topic]))
    assert response.topics[0].error_code == ErrorCode.NONE, response


def _batch(key: bytes | None, value: bytes) -> bytes:
    record = Record(offset_delta=0, timestamp_delta=0, key=key, value=value)
    return encode_batch(RecordBatch.from_records([record], base_timestamp=1_700_000_000_000))


async def _produce(client: WireClient, topic: str, records: bytes) -> int | None:
    """Base offset of an acks=-1 Produce, or None when the broker answered with an error."""
    data = TopicProduceData(name=topic, partition_data=[PartitionProduceData(index=0, records=records)])
    response = await client.call(ApiKey.PRODUCE, 9, ProduceRequest(acks=-1, timeout_ms=5000, topic_data=[data]))
    result = response.responses[0].partition_responses[0]
    return int(result.base_offset) if result.error_code == ErrorCode.NONE else None


async def _read_all(client: WireClient, topic: str) -> list[tuple[int, bytes | None, bytes | None]]:
    """(offset, key, value) of every record of partition 0, fetched from the log start to the end."""
    records: list[tuple[int, bytes | None, bytes | None]] = []
    offset = 0
    while True:
        wanted = FetchTopic(topic=topic, partitions=[FetchPartition(partition=0, fetch_offset=offset)])
        wanted.partitions[0].partition_max_bytes = 1 << 20
        request = FetchRequest(max_wait_ms=0, min_bytes=1, max_bytes=1 << 22, topics=[wanted])
        partition = (await client.call(ApiKey.FETCH, 12, request)).responses[0].partitions[0]
        assert partition.error_code == ErrorCode.NONE, partition
        data, pos, before = partition.records or b"", 0, len(records)
        while pos < len(data):
            batch, pos = decode_batch(data, pos)
            records += [(o, r.key, r.value) for o, _, r in batch.absolute() if o >= offset]
        if len(records) == before:
            assert offset >= partition.high_watermark, f"{topic}: no progress at {offset}"
            return records
        offset = records[-1][0] + 1


async def _commit_loop(port: int, group: str, state: Acknowledged) -> None:
    client = await connect(port)
    try:
        while True:
            value = state.next_value()
            partition = value % len(PARTITIONS)
            state.commits_sent[group].setdefault(partition, set()).add(value)
            if await commit_once(client, group, COMMIT_TOPIC, {partition: value}) == {ErrorCode.NONE}:
                state.commits_acked[group][partition] = value
    except (ConnectionError, asyncio.IncompleteReadError, OSError):
        return  # killed mid-request
    finally:
        client.writer.close()


async def _produce_loop(port: int, topic: str, state: Acknowledged) -> None:
    client = await connect(port)
    try:
        while True:
            value = state.next_value()
            if topic == ROLL_TOPIC:
                payload = f"roll-{value}".encode() * 8
                offset = await _produce(client, topic, _batch(None, payload))
                if offset is not None:
                    state.produced[offset] = payload
            else:
                key = f"key-{value % KEYS}".encode()
                if await _produce(client, topic, _batch(key, f"{value}".encode())) is not None:
                    state.latest_per_key[key] = value
    except (ConnectionError, asyncio.IncompleteReadError, OSError):
        return
    finally:
        client.writer.close()


def _partition_dirs(data_dir: Path) -> list[Path]:
    return [p for p in data_dir.iterdir() if p.is_dir() and p.name.rsplit("-", 1)[-1].isdigit()]


def _leftovers(data_dir: Path) -> list[str]:
    return sorted(
        f"{d.name}/{f.name}" for d in _partition_dirs(data_dir) for f in d.iterdir() if f.name.endswith(LEFTOVERS)
    )


def _kill_on_swap_file(broker: BrokerProcess, data_dir: Path, armed: threading.Event, done: threading.Event) -> None:
    """Watcher thread: once armed, SIGKILL the broker the moment any partition holds a `.cleaned`/`.swap` file."""
    while not done.is_set():
        if armed.is_set() and _leftovers(data_dir):
            broker.kill()
            return
        done.wait(0.001)


async def _verify(broker: BrokerProcess, state: Acknowledged, where: str) -> None:
    data_dir = broker.data_dir
    assert not _leftovers(data_dir), f"{where}: leftovers after recovery {_leftovers(data_dir)}"
    client = await connect(broker.port)
    for group in GROUPS:
        fetched = await fetch(client, group, COMMIT_TOPIC, PARTITIONS)
        for partition in PARTITIONS:
            acked = state.commits_acked[group].get(partition, -1)
            value = fetched[partition]
            assert value >= acked, f"{where}: {group}/{partition} acknowledged {acked}, served {value}"
            if value != -1:
                assert value in state.commits_sent[group][partition], f"{where}: {group}/{partition} invented {value}"
    served = {offset: value for offset, _, value in await _read_all(client, ROLL_TOPIC)}
    for offset, payload in state.produced.items():
        assert served.get(offset) == payload, f"{where}: {ROLL_TOPIC} offset {offset} lost or changed"
    latest: dict[bytes, int] = {}
    for _, key, value in await _read_all(client, COMPACT_TOPIC):
        assert key is not None and value is not None
        latest[key] = max(latest.get(key, -1), int(value))
    for key, sequence in state.latest_per_key.items():
        assert latest.get(key, -1) >= sequence, f"{where}: {COMPACT_TOPIC} {key!r} went back from {sequence}"
    await client.close()


async def _round(broker: BrokerProcess, state: Acknowledged, rng: random.Random) -> bool:
    """Load until the kill; True when the kill was triggered by a `.cleaned`/`.swap` file."""
    on_swap = rng.random() < 0.5
    armed, done = threading.Event(), threading.Event()
    watcher = threading.Thread(target=_kill_on_swap_file, args=(broker, broker.data_dir, armed, done), daemon=True)
    watcher.start()
    loads = [asyncio.ensure_future(_commit_loop(broker.port, g, state)) for g in GROUPS]
    loads += [asyncio.ensure_future(_produce_loop(broker.port, t, state)) for t in (ROLL_TOPIC, COMPACT_TOPIC)]
    await asyncio.sleep(rng.uniform(0.2, 1.5))
    if on_swap:
        armed.set()
        await asyncio.to_thread(watcher.join, 10)
    done.set()
    broker.kill()  # no-op when the watcher already killed it
    await asyncio.gather(*loads)
    watcher.join()
    return on_swap


@pytest.mark.campaign
@pytest.mark.parametrize("seed", range(SEEDS))
async def test_kill9_during_rolls_and_cleaner_swaps_loses_nothing_acknowledged(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    state = Acknowledged()
    data_dir = tmp_path / "data"
    broker = BrokerProcess(data_dir, EAGER)
    try:
        broker.start()
        client = await connect(broker.port)
        await create_topic(client, COMMIT_TOPIC, len(PARTITIONS))
        await _create_data_topic(client, ROLL_TOPIC, SMALL_SEGMENTS)
        await _create_data_topic(client, COMPACT_TOPIC, COMPACTED)
        await client.close()
        for round_number in range(ROUNDS):
            await _round(broker, state, rng)
            where = f"seed {seed}, round {round_number}"
            broker.overrides.update(HELD_OFF)
            broker.start()
            await _verify(broker, state, where)
            broker.kill()
            broker.overrides.update(EAGER)
            broker.start()
        assert state.produced and state.latest_per_key, "the producers got acknowledgements"
        assert any(state.commits_acked.values()), "the groups got acknowledgements"
    finally:
        broker.kill()
