"""The corruption campaign (issue #10): seeded runs that flip bytes, truncate, or drop stray files into random
segments of `__consumer_offsets` and of a data topic while groups commit, then restart.

After the restart, for every run:

* the restart and the load of every offsets partition finish (the broker would be up and serving);
* every commit that lives in an intact batch is served: for each (group, topic, partition), the committed offset
  is that of the last commit whose batch is still byte-for-byte on disk, and the data topic serves every intact
  batch;
* each damaged range is reported exactly once, and every byte we damaged is accounted for: reported, inside a
  quarantined file, or cut off as the active segment's unflushed tail;
* no valid segment is deleted: every segment file is still in its directory or in the quarantine folder.

It drives the storage layer, the offsets reader and the coordinator's loader in-process (what a broker restart
runs), so a run takes milliseconds and `make test` runs all 50 seeds (`make campaigns` includes them too).
Damage model: any byte a batch's CRC covers, its length, magic or CRC, truncation anywhere, stray files (junk, or
a copy of another segment) under a base offset inside another segment. The base offset and partition leader epoch
of a batch header are outside the v2 format's CRC (in Kafka too): a flipped epoch is not damage anyone can see, a
flipped base offset can pass as a valid batch with wrong offsets; the campaign does not flip those 12 bytes.
"""

from __future__ import annotations

import os
import random
import struct
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from broker.offsets_log import OFFSETS_TOPIC, OffsetsLog
from coordinator.hashing import partition_for
from coordinator.offsets import OffsetAndMetadata
from coordinator.records import offset_commit_record
from storage.config import LogConfig
from storage.damage import QUARANTINE_DIR
from storage.log_manager import LogManager
from tests.coordinator.harness import CoordinatorTestContext
from tests.storage.helpers import make_batch, offsets_of

SEEDS = 50
OFFSETS_PARTITIONS = 3
DATA_TOPIC = "data"
DATA_PARTITIONS = 2
GROUPS = [f"group-{i}" for i in range(6)]
COMMITS = 150
#: Header bytes no check covers in the v2 format (Kafka's too): base offset (0-7), partition leader epoch (12-15).
UNCHECKED = frozenset(range(8)) | frozenset(range(12, 16))


@dataclass
class Batch:
    path: Path
    start: int
    end: int
    data: bytes
    commits: list[tuple[str, int, int, int]] = field(default_factory=list)  # (group, partition, offset, order)


def segment_batches(path: Path) -> list[tuple[int, int]]:
    data = path.read_bytes()
    spans, pos = [], 0
    while pos < len(data):
        size = struct.unpack_from(">i", data, pos + 8)[0] + 12
        spans.append((pos, pos + size))
        pos += size
    return spans


def write_history(root: Path, rng: random.Random) -> list[Batch]:
    """Commit COMMITS offsets (one batch each) and append data batches; every batch with what it holds."""
    logs = LogManager([root], LogConfig(segment_bytes=700), now_ms=0)
    logs.create_topic(OFFSETS_TOPIC, OFFSETS_PARTITIONS, {"cleanup.policy": "compact"})
    logs.create_topic(DATA_TOPIC, DATA_PARTITIONS)
    offsets_log = OffsetsLog(logs, lambda: 0, lambda _flush: None, lambda outcomes: None)
    where: dict[tuple[int, int], tuple[str, int, int, int]] = {}  # (offsets partition, log offset) -> commit
    for order in range(COMMITS):
        group = rng.choice(GROUPS)
        partition = rng.randrange(DATA_PARTITIONS)
        value = OffsetAndMetadata(offset=order, leader_epoch=-1, metadata="", commit_timestamp_ms=0)
        offsets_partition = partition_for(group, OFFSETS_PARTITIONS)
        log = logs.get(OFFSETS_TOPIC, offsets_partition)
        assert log is not None
        where[(offsets_partition, log.log_end_offset)] = (group, partition, order, order)
        record = offset_commit_record(group, DATA_TOPIC, partition, value)
        offsets_log.append(offsets_partition, [record], lambda _error: None)
        offsets_log.flush()
        data_log = logs.get(DATA_TOPIC, rng.randrange(DATA_PARTITIONS))
        assert data_log is not None
        data_log.append(make_batch(rng.randrange(1, 4), value_size=30, tag=order), now_ms=0)
    if rng.random() < 0.7:
        logs.close()  # clean shutdown: a checkpoint, old segments are trusted on the next start
    else:
        logs.flush_all()  # a crash after the last flush: the recovery points are those of the last checkpoint
        for log in logs.logs().values():
            log.close()
    batches = []
    for path in sorted(root.glob("*-*/*.log")):
        data = path.read_bytes()
        offsets_partition = int(path.parent.name.rpartition("-")[2])
        for start, end in segment_batches(path):
            batch = Batch(path, start, end, data[start:end])
            if path.parent.name.startswith(OFFSETS_TOPIC):
                base = int.from_bytes(data[start : start + 8], "big")
                if (offsets_partition, base) in where:
                    batch.commits.append(where[(offsets_partition, base)])
            batches.append(batch)
    return batches


def damage(root: Path, rng: random.Random) -> tuple[list[tuple[Path, int, int]], list[Path]]:
    """Apply 1-4 random damages; returns the byte ranges changed in existing files and the stray files added."""
    changed: list[tuple[Path, int, int]] = []
    strays: list[Path] = []
    for _ in range(rng.randint(1, 4)):
        segments = sorted(p for p in root.glob("*-*/*.log") if p.stat().st_size and p not in strays)
        target = rng.choice(segments)
        kind = rng.choice(["flip", "flip", "truncate", "stray"])
        if kind == "flip":
            if _intact_file(target):
                start, end = rng.choice(segment_batches(target))
                position = rng.choice([p for p in range(start, end) if p - start not in UNCHECKED])
            else:
                position = rng.randrange(target.stat().st_size)
            data = bytearray(target.read_bytes())
            data[position] ^= rng.randrange(1, 256)
            target.write_bytes(bytes(data))
            changed.append((target, position, position + 1))
        elif kind == "truncate":
            size = target.stat().st_size
            cut = rng.randrange(size)
            os.truncate(target, cut)
            changed.append((target, cut, size))
        else:
            base = int(target.name[:20])
            stray = target.parent / f"{base + rng.randint(1, 3):020d}.log"
            if stray.exists():
                continue
            others = sorted(target.parent.glob("*.log"))
            content = rng.choice(others).read_bytes() if rng.random() < 0.5 else os.urandom(rng.randint(10, 900))
            stray.write_bytes(content)
            strays.append(stray)
    return changed, strays


def _intact_file(path: Path) -> bool:
    try:
        spans = segment_batches(path)
    except struct.error:
        return False
    return bool(spans) and spans[-1][1] == path.stat().st_size


def still_on_disk(batch: Batch) -> bool:
    if not batch.path.exists():
        return False
    with open(batch.path, "rb") as f:
        f.seek(batch.start)
        return f.read(batch.end - batch.start) == batch.data


def load_offsets(logs: LogManager) -> CoordinatorTestContext:
    """What a broker start does after recovery: read every offsets partition and load it into a coordinator."""
    ctx = CoordinatorTestContext(partitions=[], offsets_topic_num_partitions=OFFSETS_PARTITIONS)
    offsets_log = OffsetsLog(logs, lambda: 0, lambda _flush: None, lambda outcomes: None)
    for partition in range(OFFSETS_PARTITIONS):
        ctx.coordinator.begin_loading(partition)
        assert ctx.coordinator.load_partition(partition, offsets_log.read_all(partition), ctx.now_ms)
    return ctx


@pytest.mark.campaign
@pytest.mark.parametrize("seed", range(SEEDS))
def test_corruption_campaign(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    root = tmp_path / "logs"
    batches = write_history(root, rng)
    originals = {p: p.read_bytes() for p in root.glob("*-*/*.log")}
    changed, strays = damage(root, rng)

    logs = LogManager([root], LogConfig(segment_bytes=700), now_ms=0)
    ctx = load_offsets(logs)
    for _ in range(2):  # read every data partition twice: damage is reported once however often it is read
        for partition in range(DATA_PARTITIONS):
            log = logs.get(DATA_TOPIC, partition)
            assert log is not None
            offsets_of(log.read(log.log_start_offset, 10**9))
            list(log.iter_batches_from())

    # every commit in an intact batch is served (the last intact one per key wins)
    intact = [b for b in batches if still_on_disk(b)]
    expected: dict[tuple[str, int], int] = {}
    for batch in sorted((b for b in intact if b.commits), key=lambda b: b.commits[0][3]):
        for group, partition, offset, _order in batch.commits:
            expected[(group, partition)] = offset
    served = {
        (group, partition): ctx.committed_offset(group, DATA_TOPIC, partition)
        for group in GROUPS
        for partition in range(DATA_PARTITIONS)
    }
    assert {k: v for k, v in served.items() if k in expected} == expected
    # ... and the data topic serves every intact batch
    for batch in intact:
        if batch.path.parent.name.startswith(DATA_TOPIC):
            log = logs.get(DATA_TOPIC, int(batch.path.parent.name.rpartition("-")[2]))
            assert log is not None
            first = int.from_bytes(batch.data[:8], "big")
            assert batch.data in log.read(first, 10**9), f"intact batch at {first} of {batch.path} not served"

    # each damaged range once; every damaged byte accounted for
    ranges = logs.damaged_ranges()
    keys = [(d.topic, d.partition, d.segment, d.start, d.end) for d in ranges]
    assert len(keys) == len(set(keys))
    quarantined = {Path(q.moved_to).name.split("-", 1)[1]: q for q in logs.quarantined_files()}
    for path, start, _end in changed:
        if not path.exists() and path.name in quarantined:
            continue
        size = path.stat().st_size
        if start >= size:
            continue  # cut off with the active segment's unflushed tail
        topic, _, partition = path.parent.name.rpartition("-")
        assert any(
            (d.topic, d.partition, d.segment) == (topic, int(partition), path.name) and d.start <= start < d.end
            for d in ranges
        ), f"damage at {path.name}:{start} not reported; reported: {keys}"

    # no valid segment deleted: in place, or moved to the quarantine folder
    moved = {q.original: Path(q.moved_to) for q in logs.quarantined_files()}
    for path in list(originals) + strays:
        assert path.exists() or (path.name in moved and moved[path.name].exists()), f"{path} was deleted"
    assert all(Path(q.moved_to).parent.parent.name == QUARANTINE_DIR for q in logs.quarantined_files())
    logs.close()
