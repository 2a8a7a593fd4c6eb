"""The cleaner hook: closed_segments(), new_cleaned_segment() and the atomic replace_segments() swap."""

from __future__ import annotations

from pathlib import Path

import pytest

from protocol.records import iter_batch_headers
from storage.config import LogConfig
from storage.partition_log import PartitionLog
from storage.segment import SWAP_SUFFIX, LogSegment
from tests.storage.helpers import decode_all, make_batch, offsets_of

CONFIG = LogConfig(segment_bytes=2_000, index_interval_bytes=200, cleanup_policy=("compact",))


def build(tmp_path: Path) -> PartitionLog:
    log = PartitionLog(tmp_path / "t-0", CONFIG, now_ms=0)
    for i in range(40):
        log.append(make_batch(3, timestamp=1_000 + i, tag=i, value_size=50), now_ms=0)
    return log


def keep_every_other_batch(log: PartitionLog, old: list[LogSegment]) -> LogSegment:
    """A toy 'cleaning': copy every second batch of ``old`` into one cleaned segment."""
    cleaned = log.new_cleaned_segment(old[0].base_offset, now_ms=0)
    for segment in old:
        data = segment.read(0, segment.size)
        for n, (position, header) in enumerate(iter_batch_headers(data)):
            if n % 2 == 0:
                cleaned.append_batches(data[position : position + header.size])
    return cleaned


def test_replace_segments(tmp_path: Path) -> None:
    log = build(tmp_path)
    old = log.closed_segments()[:2]
    end = log.log_end_offset
    kept = [b.base_offset for s in old for b in decode_all(s.read(0, s.size))][::2]
    cleaned = keep_every_other_batch(log, old)
    log.replace_segments(old, [cleaned])
    directory = tmp_path / "t-0"
    assert not any(p.name.endswith((".cleaned", SWAP_SUFFIX)) for p in directory.iterdir())
    assert not old[1].log_path.exists()
    served = decode_all(log.read(0, 10**6))
    boundary = log.segments()[1].base_offset
    assert [b.base_offset for b in served if b.base_offset < boundary] == kept
    assert log.log_end_offset == end and log.log_start_offset == 0
    # Offsets in the gaps resolve to the next batch, as in a compacted Kafka log.
    assert decode_all(log.read(kept[0] + 3, 1))[0].base_offset == kept[1]
    log.close()
    again = PartitionLog(directory, CONFIG, now_ms=0)
    assert decode_all(again.read(0, 10**6)) == served


def test_interrupted_swap_is_completed_on_open(tmp_path: Path) -> None:
    log = build(tmp_path)
    old = log.closed_segments()[:2]
    cleaned = keep_every_other_batch(log, old)
    expected_tail = offsets_of(log.read(old[1].next_offset, 10**6))
    cleaned.seal()
    cleaned.flush()
    cleaned.rename_suffix(SWAP_SUFFIX)  # crash right after the commit point
    log.close()
    again = PartitionLog(tmp_path / "t-0", CONFIG, now_ms=0)
    names = sorted(p.name for p in (tmp_path / "t-0").glob("*.log"))
    assert old[1].log_path.name not in names
    offsets = offsets_of(again.read(0, 10**6))
    assert offsets[-len(expected_tail) :] == expected_tail
    assert len(offsets) < 120


def test_cleaned_leftover_without_commit_keeps_old_data(tmp_path: Path) -> None:
    log = build(tmp_path)
    before = log.read(0, 10**6)
    old = log.closed_segments()[:2]
    cleaned = keep_every_other_batch(log, old)
    cleaned.flush()
    log.close()
    again = PartitionLog(tmp_path / "t-0", CONFIG, now_ms=0)
    assert again.read(0, 10**6) == before


def test_replace_segments_checks_its_arguments(tmp_path: Path) -> None:
    log = build(tmp_path)
    closed = log.closed_segments()
    cleaned = log.new_cleaned_segment(closed[0].base_offset, now_ms=0)
    with pytest.raises(ValueError, match="consecutive"):
        log.replace_segments([closed[0], closed[2]], [cleaned])
    with pytest.raises(ValueError, match="consecutive"):
        log.replace_segments([log.segments()[-1]], [cleaned])
    misplaced = log.new_cleaned_segment(closed[1].base_offset + 1, now_ms=0)
    with pytest.raises(ValueError, match="first new segment"):
        log.replace_segments([closed[1]], [misplaced])
    too_long = log.new_cleaned_segment(closed[1].base_offset, now_ms=0)
    too_long.append_batches(closed[1].read(0, closed[1].size) + closed[2].read(0, closed[2].size))
    with pytest.raises(ValueError, match="does not fit"):
        log.replace_segments([closed[1]], [too_long])
