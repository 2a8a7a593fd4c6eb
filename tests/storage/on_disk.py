"""A partition log on disk to recover or damage: a cleanly closed multi-segment log, reopening it, flipping bytes.

Shared by the recovery, damage and cleaner tests (and the broker's compaction tests).
"""

from __future__ import annotations

import struct
from pathlib import Path

from storage.config import LogConfig
from storage.partition_log import PartitionLog
from tests.storage.helpers import make_batch

CONFIG = LogConfig(segment_bytes=2_000, index_interval_bytes=300)
BATCHES = 40
RECORDS = 3


def build(tmp_path: Path, batches: int = BATCHES) -> tuple[Path, bytes]:
    """A cleanly closed log of several segments; returns its directory and everything it holds."""
    directory = tmp_path / "topic-0"
    log = PartitionLog(directory, CONFIG, now_ms=0)
    for i in range(batches):
        log.append(make_batch(RECORDS, timestamp=1_000 + i, tag=i, value_size=50), now_ms=0)
    log.flush()
    data = log.read(0, 10**9)
    log.close()
    return directory, data


def reopen(directory: Path, recovery_point: int | None = None) -> PartitionLog:
    return PartitionLog(directory, CONFIG, recovery_point=recovery_point, now_ms=0)


def batch_positions(path: Path) -> list[tuple[int, int]]:
    """``(start, end)`` of every batch in a segment file (which must be intact)."""
    return batch_spans(path.read_bytes())


def batch_spans(data: bytes) -> list[tuple[int, int]]:
    """``(start, end)`` of every batch in intact concatenated batches."""
    spans = []
    pos = 0
    while pos < len(data):
        size = struct.unpack_from(">i", data, pos + 8)[0] + 12
        spans.append((pos, pos + size))
        pos += size
    return spans


def flip(path: Path, position: int) -> None:
    data = bytearray(path.read_bytes())
    data[position] ^= 0xFF
    path.write_bytes(bytes(data))
