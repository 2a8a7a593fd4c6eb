"""A segment's proven ranges (bytes already checked, which reads need not check again): appends extend them, and
ranges proven apart stay apart until the bytes between them are proven."""

from __future__ import annotations

from pathlib import Path

from storage.config import LogConfig
from storage.partition_log import PartitionLog
from tests.storage.helpers import make_batch


def test_appends_keep_one_proven_range_over_the_written_bytes(tmp_path: Path) -> None:
    log = PartitionLog(tmp_path / "topic-0", LogConfig(), now_ms=0)
    for i in range(5):
        log.append(make_batch(3, tag=i), now_ms=0)
    segment = log.segments()[-1]
    assert segment._proven == [(0, segment.size)]
    log.close()


def test_ranges_merge_only_where_they_meet(tmp_path: Path) -> None:
    log = PartitionLog(tmp_path / "topic-0", LogConfig(), now_ms=0)
    segment = log.segments()[-1]
    segment._proven = [(0, 10), (20, 30)]
    segment._mark_proven(30, 40)  # right after the last range: it grows
    assert segment._proven == [(0, 10), (20, 40)]
    segment._mark_proven(12, 15)  # between two ranges, touching neither
    assert segment._proven == [(0, 10), (12, 15), (20, 40)]
    segment._mark_proven(25, 35)  # inside the last range
    assert segment._proven == [(0, 10), (12, 15), (20, 40)]
    segment._mark_proven(10, 20)  # the gaps: everything is one range
    assert segment._proven == [(0, 40)]
    log.close()
