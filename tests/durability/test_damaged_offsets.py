"""Issue #10's damaged `__consumer_offsets` cases, against the broker as a process over TCP.

* one CRC-failing batch in an *old* segment used to kill the loader (every group: LOAD_IN_PROGRESS forever);
* a stray `00000000000000000005.log` or an old segment cut in half used to make recovery drop every newer segment
  (a committed offset went from 1500 back to 13).

Now the damage is skipped and reported (control API, CLI, metrics), everything intact is served, nothing is
deleted.
"""

from __future__ import annotations

import json
import os
import struct
import urllib.request
from pathlib import Path

from broker.offsets_log import decode_record
from cli.main import main as cli_main
from coordinator.hashing import partition_for
from protocol.messages.offset_commit_key import OffsetCommitKey
from protocol.records import iter_batches
from tests.durability.offsets_client import commit, connect, create_topic, fetch
from tests.support.broker_process import FAST_GROUPS, BrokerProcess, control_url

TOPIC = "damaged-topic"
PARTITIONS = 40
SETTINGS = {"offsets.topic.segment.bytes": "1024", "control.listener": "http://127.0.0.1:0"}
NUM_OFFSETS_PARTITIONS = int(FAST_GROUPS["offsets.topic.num.partitions"])


def group_on_other_partition(group: str) -> str:
    mine = partition_for(group, NUM_OFFSETS_PARTITIONS)
    return next(
        f"bystander-{i}" for i in range(1000) if partition_for(f"bystander-{i}", NUM_OFFSETS_PARTITIONS) != mine
    )


def offsets_dir(data_dir: Path, group: str) -> Path:
    return data_dir / f"__consumer_offsets-{partition_for(group, NUM_OFFSETS_PARTITIONS)}"


def batches_of(segment: Path) -> list[tuple[int, int, list[tuple[str, int]]]]:
    """``(start, end, [(topic, partition) committed])`` of every batch of an intact segment."""
    data = segment.read_bytes()
    found = []
    for position, batch in iter_batches(data):
        keys = []
        for record in batch.records:
            decoded = decode_record(record.key, record.value)
            if decoded is not None and isinstance(decoded.key, OffsetCommitKey):
                keys.append((decoded.key.topic, decoded.key.partition))
        size = struct.unpack_from(">i", data, position + 8)[0] + 12
        found.append((position, position + size, keys))
    return found


def read_bytes(path: str | Path) -> bytes:
    return Path(path).read_bytes()


def get_json(url: str) -> dict[str, object]:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())  # type: ignore[no-any-return]


def scrape(url: str) -> str:
    with urllib.request.urlopen(f"{url}/metrics", timeout=10) as response:
        return response.read().decode()


async def test_crc_failure_in_an_old_offsets_segment_skips_one_batch_and_serves_the_rest(
    tmp_path: Path, capsys: object
) -> None:
    data_dir = tmp_path / "data"
    group = "damaged-group"
    bystander = group_on_other_partition(group)
    broker = BrokerProcess(data_dir, SETTINGS)
    broker.start()
    try:
        client = await connect(broker.port)
        await create_topic(client, TOPIC, PARTITIONS)
        for p in range(PARTITIONS):  # one commit (one batch) per partition: many small segments
            assert await commit(client, group, TOPIC, {p: 1000 + p})
        assert await commit(client, bystander, TOPIC, {0: 7})
        await client.close()
        assert broker.stop() == 0  # a clean shutdown: the old segments are below the recovery point, trusted
        segments = sorted(offsets_dir(data_dir, group).glob("*.log"))
        assert len(segments) >= 5
        start, end, keys = batches_of(segments[0])[1]
        [(_, damaged_partition)] = keys
        data = bytearray(segments[0].read_bytes())
        data[end - 3] ^= 0xFF  # covered by the CRC only
        segments[0].write_bytes(bytes(data))

        broker.start()  # waits for "offsets.loaded": the load finishes
        client = await connect(broker.port)
        expected = {p: 1000 + p for p in range(PARTITIONS)} | {damaged_partition: -1}
        assert await fetch(client, group, TOPIC, list(range(PARTITIONS))) == expected
        assert await fetch(client, bystander, TOPIC, [0]) == {0: 7}
        assert await commit(client, group, TOPIC, {damaged_partition: 5})  # the group works as usual
        await client.close()
        assert sorted(offsets_dir(data_dir, group).glob("*.log"))[: len(segments)] == segments

        url = control_url(broker)
        status = get_json(f"{url}/storage")
        [damage] = status["damaged_ranges"]  # type: ignore[misc]
        assert (damage["segment"], damage["start"], damage["end"]) == (segments[0].name, start, end)
        partition = partition_for(group, NUM_OFFSETS_PARTITIONS)
        by_partition = {p["partition"]: p for p in status["offsets_partitions"]}  # type: ignore[attr-defined]
        expected_status = {"partition": partition, "state": "active", "skipped_ranges": 1, "error": None}
        assert by_partition[partition] == expected_status
        assert {p["state"] for p in by_partition.values()} == {"active"}
        metrics = scrape(url)
        assert 'group_broker_offsets_partitions{state="active"} 10.0' in metrics
        assert 'group_broker_offsets_partitions{state="failed"} 0.0' in metrics
        assert f'group_broker_offsets_partition_skipped_ranges{{partition="{partition}"}} 1.0' in metrics
        assert "group_broker_log_damaged_ranges_total 1.0" in metrics
        assert cli_main(["storage", "--control", url]) == 0
        out = capsys.readouterr().out  # type: ignore[attr-defined]
        assert f"partition {partition}: active, 1 damaged range(s) skipped" in out
        assert f"{segments[0].name} bytes {start}..{end}" in out
        assert sum('"log_damaged_range"' in line for line in broker.log_lines()) == 1  # reported once
    finally:
        broker.kill()


async def test_stray_segment_and_old_segment_cut_in_half_keep_the_committed_offset(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    group = "cut-group"
    broker = BrokerProcess(data_dir, SETTINGS)
    broker.start()
    try:
        client = await connect(broker.port)
        await create_topic(client, TOPIC, 1)
        for offset in range(0, 1501, 25):
            assert await commit(client, group, TOPIC, {0: offset})
        await client.close()
        broker.kill()
        directory = offsets_dir(data_dir, group)
        segments = sorted(directory.glob("*.log"))
        assert len(segments) >= 6
        (directory / f"{5:020d}.log").write_bytes(segments[3].read_bytes())  # stray, inside the first segment
        os.truncate(segments[1], segments[1].stat().st_size // 2)  # an old segment cut in half

        broker.start()
        client = await connect(broker.port)
        assert await fetch(client, group, TOPIC, [0]) == {0: 1500}
        await client.close()
        assert all(segment.exists() for segment in segments)  # no newer segment deleted
        assert not (directory / f"{5:020d}.log").exists()
        status = get_json(f"{control_url(broker)}/storage")
        assert [q["original"] for q in status["quarantined_files"]] == [f"{5:020d}.log"]  # type: ignore[attr-defined]
        moved_to = status["quarantined_files"][0]["moved_to"]  # type: ignore[index]
        assert read_bytes(moved_to) == read_bytes(segments[3])
        assert [d["segment"] for d in status["damaged_ranges"]] == [segments[1].name]  # type: ignore[attr-defined]
    finally:
        broker.kill()
