"""`PartitionLog.read_slices`: the ranges `read` would copy, pinned by descriptors that outlive the segments."""

from __future__ import annotations

import os
from pathlib import Path

from storage.config import LogConfig
from storage.partition_log import PartitionLog, SegmentSlice
from tests.storage.helpers import make_batch

SMALL = LogConfig(segment_bytes=2_000, index_interval_bytes=300)


def filled(path: Path, batches: int = 20) -> PartitionLog:
    log = PartitionLog(path / "topic-0", SMALL, now_ms=0)
    for i in range(batches):
        log.append(make_batch(3, tag=i, value_size=50), now_ms=0)
    return log


def joined(slices: list[SegmentSlice]) -> bytes:
    return b"".join(os.pread(s.fd, s.length, s.position) for s in slices)


def test_slices_hold_exactly_what_read_returns(tmp_path: Path) -> None:
    log = filled(tmp_path)
    assert log.segment_count >= 2
    for offset, max_bytes, first in [(0, 10**9, True), (4, 700, True), (10, 0, True), (10, 0, False), (50, 100, True)]:
        slices = log.read_slices(offset, max_bytes, min_one_batch=first)
        assert joined(slices) == log.read(offset, max_bytes, min_one_batch=first)
        for piece in slices:
            piece.close()
    log.close()


def test_slices_stay_readable_after_their_segments_are_deleted(tmp_path: Path) -> None:
    log = filled(tmp_path)
    expected = log.read(0, 10**9)
    slices = log.read_slices(0, 10**9)
    assert len(slices) == log.segment_count  # one range per segment
    deleted = log.delete_segments_before(log.log_end_offset)  # retention removes every closed segment
    assert deleted > 0
    assert joined(slices) == expected
    for piece in slices:
        piece.close()
    log.close()
