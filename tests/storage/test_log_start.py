"""The log start offset DeleteRecords moves: reads below it refused, segments below it deleted, persisted in
``log-start-offset`` (atomic) so a restart or a kill -9 keeps it, a damaged file quarantined and reported."""

from __future__ import annotations

from pathlib import Path

import pytest

from storage.checkpoints import LOG_START_OFFSET_CHECKPOINT, write_checkpoint
from storage.cleaner import clean
from storage.config import LogConfig
from storage.errors import OffsetOutOfRangeError
from storage.partition_log import PartitionLog
from tests.storage.helpers import NOW, append, make_batch, offsets_of

SMALL = LogConfig(segment_bytes=2_000, index_interval_bytes=300)


def open_log(path: Path, config: LogConfig = SMALL) -> PartitionLog:
    return PartitionLog(path / "topic-0", config, now_ms=0)


def fill(log: PartitionLog, batches: int) -> None:
    for i in range(batches):
        log.append(make_batch(3, tag=i, value_size=50), now_ms=0)


def test_delete_records_moves_the_log_start_inside_a_segment(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    fill(log, 20)  # 60 offsets over several segments
    bases = [s.base_offset for s in log.segments()]
    target = bases[2] + 1  # inside the third segment
    assert log.delete_records(target) == target
    assert log.log_start_offset == target == log.earliest()
    assert [s.base_offset for s in log.segments()] == bases[2:]  # wholly-below segments deleted
    with pytest.raises(OffsetOutOfRangeError):
        log.read(target - 1, 10_000)
    assert target in offsets_of(log.read(target, 100_000))
    assert log.delete_records(target - 1) == target  # never moves back
    assert log.append(make_batch(1), now_ms=0).log_start_offset == target


def test_delete_records_up_to_the_high_watermark_keeps_the_active_segment(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    fill(log, 5)
    end = log.log_end_offset
    assert log.delete_records(end) == end
    assert (log.log_start_offset, log.log_end_offset) == (end, end)
    assert log.segments()[-1].size > 0  # Kafka never deletes the active segment for the log start
    assert log.read(end, 10_000) == b""
    with pytest.raises(OffsetOutOfRangeError):
        log.delete_records(end + 1)
    with pytest.raises(OffsetOutOfRangeError):
        log.delete_records(-5)


def test_log_start_survives_reopen_without_close(tmp_path: Path) -> None:
    """No close, no flush: what a kill -9 leaves. The file was written before delete_records returned."""
    log = open_log(tmp_path)
    fill(log, 10)
    log.delete_records(7)
    reopened = open_log(tmp_path)
    assert reopened.log_start_offset == 7
    with pytest.raises(OffsetOutOfRangeError):
        reopened.read(6, 1_000)
    assert reopened.epoch_entries()[0].start_offset == 7
    log.close()
    reopened.close()


def test_segments_below_a_checkpointed_log_start_are_deleted_on_open(tmp_path: Path) -> None:
    """A kill after the file was written but before the segments went: the next open finishes the job."""
    log = open_log(tmp_path)
    fill(log, 20)
    bases = [s.base_offset for s in log.segments()]
    log.close()
    write_checkpoint(tmp_path / "topic-0" / LOG_START_OFFSET_CHECKPOINT, [("topic", 0, bases[1] + 2)])
    reopened = open_log(tmp_path)
    assert reopened.log_start_offset == bases[1] + 2
    assert [s.base_offset for s in reopened.segments()] == bases[1:]


def test_a_log_start_beyond_the_log_end_restarts_the_log_there(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    fill(log, 2)
    log.close()
    write_checkpoint(tmp_path / "topic-0" / LOG_START_OFFSET_CHECKPOINT, [("topic", 0, 100)])
    reopened = open_log(tmp_path)
    assert (reopened.log_start_offset, reopened.log_end_offset) == (100, 100)
    assert reopened.append(make_batch(1), now_ms=0).base_offset == 100


@pytest.mark.parametrize(
    "content",
    [b"garbage", b"0\n2\ntopic 0 5\n", b"0\n1\nother 0 5\n", b"0\n1\ntopic 0 five\n", b"1\n1\ntopic 0 5\n"],
)
def test_a_damaged_log_start_file_is_quarantined_and_reported(tmp_path: Path, content: bytes) -> None:
    log = open_log(tmp_path)
    fill(log, 3)
    log.close()
    (tmp_path / "topic-0" / LOG_START_OFFSET_CHECKPOINT).write_bytes(content)
    reopened = open_log(tmp_path)
    assert reopened.log_start_offset == 0  # the first segment's base: what the segments prove
    [moved] = reopened.quarantined_files()
    assert moved.original == LOG_START_OFFSET_CHECKPOINT and "log start offset checkpoint" in moved.reason
    assert Path(moved.moved_to).read_bytes() == content  # the evidence is kept, not deleted
    assert not (tmp_path / "topic-0" / LOG_START_OFFSET_CHECKPOINT).exists()


def test_an_interrupted_write_leaves_the_old_log_start(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    fill(log, 3)
    log.delete_records(4)
    log.close()
    (tmp_path / "topic-0" / f"{LOG_START_OFFSET_CHECKPOINT}.tmp").write_bytes(b"0\n1\ntopic 0 ")
    reopened = open_log(tmp_path)
    assert reopened.log_start_offset == 4
    assert not (tmp_path / "topic-0" / f"{LOG_START_OFFSET_CHECKPOINT}.tmp").exists()
    assert reopened.quarantined_files() == []


def test_retention_never_moves_the_log_start_back(tmp_path: Path) -> None:
    log = open_log(tmp_path, LogConfig(segment_bytes=2_000, index_interval_bytes=300, retention_bytes=2_500))
    fill(log, 20)
    target = log.segments()[-2].base_offset + 1
    log.delete_records(target)
    log.apply_retention(now_ms=0)
    assert log.log_start_offset >= target


def test_truncation_below_the_log_start_restarts_the_log(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    fill(log, 5)
    log.delete_records(6)
    log.truncate_to(2)
    assert (log.log_start_offset, log.log_end_offset) == (2, 2)
    assert open_log(tmp_path).log_start_offset == 2


def test_last_stable_offset_and_iteration_start_at_the_log_start(tmp_path: Path) -> None:
    """The coordinators' loads read from the log start: nothing of a batch wholly below it."""
    log = open_log(tmp_path)
    fill(log, 5)
    log.delete_records(6)
    assert log.last_stable_offset() == log.log_end_offset
    first = next(iter(log.iter_batches_from()))
    assert first.base_offset == 6


def test_the_cleaner_maps_from_the_log_start_and_keeps_it(tmp_path: Path) -> None:
    """A `compact,delete` topic takes DeleteRecords; the cleaner's first dirty offset is the log start (Kafka's
    max(checkpoint, logStartOffset)), and its swaps never move the log start back."""
    log = PartitionLog(
        tmp_path / "t-0",
        LogConfig(segment_bytes=2_000, index_interval_bytes=300, cleanup_policy=("compact", "delete")),
        now_ms=0,
    )
    for n in range(60):
        append(log, [(b"key-%d" % (n % 5), b"value-%d-" % n * 20)], timestamp=NOW + n)
    assert log.segment_count > 4
    start = log.segments()[1].base_offset + 1
    log.delete_records(start)
    result = clean(log, NOW + 1_000)
    assert result.first_dirty_offset == start
    assert log.log_start_offset == start
    with pytest.raises(OffsetOutOfRangeError):
        log.read(start - 1, 1_000)
