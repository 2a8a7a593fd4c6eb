"""PartitionLog: appends, offsets, reads across segments, timestamps, retention, truncation, validation."""

from __future__ import annotations

import itertools
import struct
from pathlib import Path

import crc32c
import pytest

from protocol.errors import ErrorCode
from protocol.records import (
    Compression,
    Record,
    RecordBatch,
    TimestampType,
    decode_batch,
    encode_batch,
    peek_batch_header,
)
from storage.config import LogConfig
from storage.errors import (
    CorruptRecordError,
    InvalidRecordError,
    LogClosedError,
    OffsetOutOfRangeError,
    RecordListTooLargeError,
    RecordTooLargeError,
)
from storage.partition_log import AppendOrigin, PartitionLog
from tests.storage.helpers import decode_all, make_batch, offsets_of

SMALL = LogConfig(segment_bytes=2_000, index_interval_bytes=300)


def open_log(path: Path, config: LogConfig = SMALL, *, recovery_point: int | None = None) -> PartitionLog:
    return PartitionLog(path / "topic-0", config, now_ms=0, recovery_point=recovery_point)


def fill(log: PartitionLog, batches: int, *, count: int = 3, start_ts: int = 1_000) -> None:
    for i in range(batches):
        log.append(make_batch(count, timestamp=start_ts + 10 * i, tag=i, value_size=50), now_ms=0)


# --- append and read ------------------------------------------------------------------------------------------


def test_new_log_is_empty(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    assert (log.log_start_offset, log.log_end_offset) == (0, 0)
    assert log.read(0, 1000) == b""
    assert (tmp_path / "topic-0" / "00000000000000000000.log").exists()


def test_append_assigns_consecutive_offsets(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    results = [log.append(make_batch(n), now_ms=5) for n in (1, 4, 2)]
    assert [(r.base_offset, r.last_offset) for r in results] == [(0, 0), (1, 4), (5, 6)]
    assert all(r.log_append_time_ms == -1 and r.log_start_offset == 0 for r in results)
    assert log.log_end_offset == 7
    batches = decode_all(log.read(0, 10_000))
    assert [b.base_offset for b in batches] == [0, 1, 5]
    assert [b.records[-1].value for b in batches] == [
        decode_batch(make_batch(n))[0].records[-1].value for n in (1, 4, 2)
    ]


def test_one_append_with_several_batches(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    log.append(make_batch(2), now_ms=0)
    result = log.append(make_batch(3) + make_batch(1) + make_batch(2), now_ms=0)
    assert (result.base_offset, result.last_offset) == (2, 7)
    assert offsets_of(log.read(0, 10_000)) == list(range(8))


def test_offsets_patched_without_touching_the_crc(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    original = make_batch(3)
    log.append(make_batch(5), now_ms=0)
    log.append(original, now_ms=0)
    stored = log.read(5, 10_000)
    # Only baseOffset and the partitionLeaderEpoch (outside the CRC, stamped by the leader) differ: the CRC verifies.
    assert stored[8:12] == original[8:12] and stored[16:] == original[16:]
    assert stored[12:16] == (0).to_bytes(4, "big") and original[12:16] == b"\xff\xff\xff\xff"
    assert peek_batch_header(stored).base_offset == 5
    decode_batch(stored)


def test_read_starts_at_the_batch_containing_the_offset(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    fill(log, 5, count=4)
    assert decode_all(log.read(6, 10_000))[0].base_offset == 4
    assert decode_all(log.read(8, 10_000))[0].base_offset == 8
    assert log.read(20, 10_000) == b""


def test_read_out_of_range(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    fill(log, 2)
    with pytest.raises(OffsetOutOfRangeError) as info:
        log.read(7, 100)
    assert info.value.error_code == ErrorCode.OFFSET_OUT_OF_RANGE
    assert (info.value.log_start_offset, info.value.log_end_offset) == (0, 6)
    with pytest.raises(OffsetOutOfRangeError):
        log.read(-1, 100)


def test_read_max_bytes_whole_batches_and_kip74(tmp_path: Path) -> None:
    log = open_log(tmp_path, LogConfig())
    fill(log, 4)
    size = len(make_batch(3, tag=0, value_size=50))
    assert len(log.read(0, size)) == size
    assert len(log.read(0, 2 * size + 5)) == 2 * size
    # First batch larger than max_bytes: returned whole (KIP-74) unless min_one_batch is off.
    assert len(log.read(0, 1)) == size
    assert log.read(0, 1, min_one_batch=False) == b""
    assert len(log.read(0, 0)) == size


def test_read_max_offset_hides_batches(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    fill(log, 4)  # offsets 0-11, batches at 0, 3, 6, 9
    assert offsets_of(log.read(0, 10_000, max_offset=6)) == list(range(6))
    assert offsets_of(log.read(0, 10_000, max_offset=7)) == list(range(6))
    assert log.read(6, 10_000, max_offset=6) == b""


def test_roll_on_segment_bytes_and_reads_span_segments(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    batch_size = len(make_batch(3, value_size=50))
    fill(log, 40)
    segments = log.segments()
    assert len(segments) > 3
    assert all(s.size <= SMALL.segment_bytes for s in segments)
    assert all(s.size + batch_size > SMALL.segment_bytes for s in segments[:-1])
    for left, right in itertools.pairwise(segments):
        assert left.next_offset == right.base_offset
    files = sorted(p.name for p in (tmp_path / "topic-0").glob("*.log"))
    assert files == [f"{s.base_offset:020d}.log" for s in segments]
    # One read crosses every segment boundary.
    assert offsets_of(log.read(0, 1_000_000)) == list(range(120))
    # A read starting mid-log and limited in size ends on a batch boundary, possibly in a later segment.
    start = segments[1].base_offset - 3
    data = log.read(start, 5 * batch_size + 20)  # keys of later batches are a byte or two longer
    assert offsets_of(data) == list(range(start, start + 15))


def test_roll_on_segment_ms(tmp_path: Path) -> None:
    config = LogConfig(segment_ms=1_000)
    log = open_log(tmp_path, config)
    log.append(make_batch(1, timestamp=10_000), now_ms=10_000)
    log.append(make_batch(1, timestamp=10_500), now_ms=10_500)
    assert log.segment_count == 1
    log.append(make_batch(1, timestamp=11_001), now_ms=11_001)
    assert log.segment_count == 2
    assert log.segments()[1].base_offset == 2


def test_segment_ms_uses_wall_clock_without_timestamps(tmp_path: Path) -> None:
    log = PartitionLog(tmp_path / "t-0", LogConfig(segment_ms=1_000), now_ms=0)
    log.append(make_batch(1, timestamp=-1), now_ms=0)
    log.append(make_batch(1, timestamp=-1), now_ms=1_000)
    assert log.segment_count == 1
    log.append(make_batch(1, timestamp=-1), now_ms=1_001)
    assert log.segment_count == 2


def test_record_list_larger_than_segment(tmp_path: Path) -> None:
    log = open_log(tmp_path, LogConfig(segment_bytes=500))
    with pytest.raises(RecordListTooLargeError) as info:
        log.append(make_batch(3, value_size=300), now_ms=0)
    assert info.value.error_code == ErrorCode.RECORD_LIST_TOO_LARGE
    assert log.log_end_offset == 0


def test_iter_batches_from(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    fill(log, 30)
    assert [b.base_offset for b in log.iter_batches_from()] == list(range(0, 90, 3))
    assert [b.base_offset for b in log.iter_batches_from(10, end_offset=20)] == [9, 12, 15]
    assert list(log.iter_batches_from(90)) == []


# --- timestamps -----------------------------------------------------------------------------------------------


def test_offset_for_timestamp(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    fill(log, 30)  # batch i: offsets 3i..3i+2, timestamps 1000+10i .. +2
    assert log.offset_for_timestamp(0) == (0, 1_000, 0)
    assert log.offset_for_timestamp(1_000) == (0, 1_000, 0)
    assert log.offset_for_timestamp(1_001) == (1, 1_001, 0)
    assert log.offset_for_timestamp(1_003) == (3, 1_010, 0)
    found = log.offset_for_timestamp(1_172)
    assert found is not None and (found.offset, found.timestamp) == (3 * 17 + 2, 1_172)
    assert log.offset_for_timestamp(1_293) is None
    assert log.max_timestamp_offset() == (89, 1_292, 0)
    with pytest.raises(ValueError, match=">= 0"):
        log.offset_for_timestamp(-1)


def test_offset_for_timestamp_out_of_order_timestamps(tmp_path: Path) -> None:
    log = open_log(tmp_path, LogConfig(index_interval_bytes=0))
    for ts in (5_000, 1_000, 3_000, 9_000, 2_000):
        log.append(make_batch(1, timestamp=ts), now_ms=0)
    assert log.offset_for_timestamp(2_500) == (0, 5_000, 0)
    assert log.offset_for_timestamp(6_000) == (3, 9_000, 0)
    assert log.max_timestamp_offset() == (3, 9_000, 0)


def test_offset_for_timestamp_compressed(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    log.append(make_batch(5, timestamp=100, compression=Compression.ZSTD), now_ms=0)
    assert log.offset_for_timestamp(102) == (2, 102, 0)


def test_log_append_time(tmp_path: Path) -> None:
    log = open_log(tmp_path, LogConfig(message_timestamp_type="LogAppendTime"))
    result = log.append(make_batch(3, timestamp=5), now_ms=777)
    assert result.log_append_time_ms == 777
    batch = decode_all(log.read(0, 10_000))[0]  # decode_all verifies the recomputed CRC
    assert batch.timestamp_type is TimestampType.LOG_APPEND_TIME
    assert batch.max_timestamp == 777
    assert log.offset_for_timestamp(700) == (0, 777, 0)


def test_create_time_max_timestamp_is_recomputed(tmp_path: Path) -> None:
    records = [Record(i, i * 10, b"k", b"v") for i in range(3)]
    lying = RecordBatch(last_offset_delta=2, base_timestamp=100, max_timestamp=5, records=records)
    log = open_log(tmp_path)
    log.append(encode_batch(lying), now_ms=0)
    assert decode_all(log.read(0, 10_000))[0].max_timestamp == 120


def test_leader_epoch_is_stamped(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    log.append(make_batch(2), now_ms=0)
    log.append(make_batch(2), now_ms=0, leader_epoch=7)
    log.append(make_batch(2), now_ms=0)
    # by default the partition's current epoch; a newer one becomes current from its first batch on
    assert [b.partition_leader_epoch for b in decode_all(log.read(0, 10_000))] == [0, 7, 7]
    assert [(e.epoch, e.start_offset) for e in log.epoch_entries()] == [(0, 0), (7, 2)]


# --- validation -----------------------------------------------------------------------------------------------


def _corrupt(data: bytes, at: int) -> bytes:
    buf = bytearray(data)
    buf[at] ^= 0xFF
    return bytes(buf)


@pytest.mark.parametrize(
    ("records", "error"),
    [
        (_corrupt(make_batch(3), 70), CorruptRecordError),  # a record byte: CRC mismatch
        (make_batch(3)[:-1], CorruptRecordError),  # truncated
        (make_batch(3) + b"\x00" * 20, CorruptRecordError),  # trailing bytes
        (b"\x00" * 8 + struct.pack(">i", 3) + b"\x00" * 4 + b"\x02" + b"\x00" * 60, CorruptRecordError),  # bad length
        (b"", InvalidRecordError),
    ],
)
def test_bad_input_is_rejected(tmp_path: Path, records: bytes, error: type[Exception]) -> None:
    log = open_log(tmp_path)
    with pytest.raises(error):
        log.append(records, now_ms=0)
    assert log.log_end_offset == 0 and log.size_in_bytes == 0


def _with_header(batch: bytes, fmt: str, at: int, value: int) -> bytes:
    """Patch a CRC-covered header field and fix the CRC, so only the rule under test fails."""
    buf = bytearray(batch)
    struct.pack_into(fmt, buf, at, value)
    struct.pack_into(">I", buf, 17, crc32c.crc32c(bytes(buf[21:])))
    return bytes(buf)


def test_error_codes(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    assert CorruptRecordError("x").error_code == ErrorCode.CORRUPT_MESSAGE
    assert InvalidRecordError("x").error_code == ErrorCode.INVALID_RECORD
    magic1 = bytearray(make_batch(1))
    magic1[16] = 1
    with pytest.raises(InvalidRecordError, match="magic"):
        log.append(bytes(magic1), now_ms=0)


@pytest.mark.parametrize(
    ("fmt", "at", "value", "match"),
    [
        (">i", 23, 5, "inconsistent"),  # lastOffsetDelta vs recordCount
        (">i", 57, 0, "count"),
        (">h", 21, 0x20, "control"),
        (">q", 43, 1234, "sequence"),  # producer id without a base sequence
    ],
)
def test_batch_rules(tmp_path: Path, fmt: str, at: int, value: int, match: str) -> None:
    log = open_log(tmp_path)
    with pytest.raises((InvalidRecordError, CorruptRecordError), match=match):
        log.append(_with_header(make_batch(3), fmt, at, value), now_ms=0)


def test_coordinator_origin_may_write_control_batches(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    control = _with_header(make_batch(1), ">h", 21, 0x20)
    log.append(control, now_ms=0, origin=AppendOrigin.COORDINATOR)
    assert log.log_end_offset == 1


def test_record_offsets_must_be_consecutive(tmp_path: Path) -> None:
    records = [Record(0, 0, b"a", b"1"), Record(2, 0, b"b", b"2")]
    batch = RecordBatch(last_offset_delta=1, base_timestamp=0, max_timestamp=0, records=records)
    log = open_log(tmp_path)
    with pytest.raises(InvalidRecordError) as info:
        log.append(encode_batch(batch), now_ms=0)
    assert info.value.record_errors == [(1, "record has offset delta 2, expected 1")]


def test_compacted_topic_requires_keys(tmp_path: Path) -> None:
    log = open_log(tmp_path, LogConfig(cleanup_policy=("compact",)))
    log.append(make_batch(2), now_ms=0)
    with pytest.raises(InvalidRecordError) as info:
        log.append(make_batch(2, key=False), now_ms=0)
    assert [index for index, _ in info.value.record_errors] == [0, 1]


def test_max_message_bytes(tmp_path: Path) -> None:
    log = open_log(tmp_path, LogConfig(max_message_bytes=200))
    log.append(make_batch(1), now_ms=0)
    with pytest.raises(RecordTooLargeError) as info:
        log.append(make_batch(3, value_size=100), now_ms=0)
    assert info.value.error_code == ErrorCode.MESSAGE_TOO_LARGE


# --- retention ------------------------------------------------------------------------------------------------


def test_retention_by_time_deletes_whole_segments(tmp_path: Path) -> None:
    log = open_log(tmp_path, LogConfig(segment_bytes=2_000, retention_ms=1_000))
    fill(log, 40, start_ts=0)  # batch i has timestamps 10i .. 10i+2
    segments = log.segments()
    assert len(segments) >= 4
    cutoff = segments[1].max_timestamp
    # Segments whose newest record is more than retention.ms older than now go; the rest stays.
    assert log.apply_retention(now_ms=cutoff + 1_001) == 2
    assert log.log_start_offset == segments[2].base_offset
    assert not segments[0].log_path.exists() and not segments[0].index.path.exists()
    assert decode_all(log.read(log.log_start_offset, 100))[0].base_offset == segments[2].base_offset
    with pytest.raises(OffsetOutOfRangeError):
        log.read(0, 100)
    assert log.append(make_batch(1), now_ms=0).log_start_offset == segments[2].base_offset


def test_retention_by_time_can_empty_the_log(tmp_path: Path) -> None:
    log = open_log(tmp_path, LogConfig(segment_bytes=2_000, retention_ms=1_000))
    fill(log, 40, start_ts=0)
    end = log.log_end_offset
    count = log.segment_count
    assert log.apply_retention(now_ms=1_000_000) == count
    assert (log.log_start_offset, log.log_end_offset, log.segment_count) == (end, end, 1)
    assert log.append(make_batch(1), now_ms=0).base_offset == end


def test_retention_by_bytes(tmp_path: Path) -> None:
    log = open_log(tmp_path, LogConfig(segment_bytes=2_000, retention_bytes=3_000, retention_ms=-1))
    fill(log, 40)
    sizes = [s.size for s in log.segments()]
    deleted = log.apply_retention(now_ms=10**12)
    assert deleted >= 1
    assert log.size_in_bytes <= 3_000 + sizes[0]
    assert sum(sizes[deleted:]) == log.size_in_bytes
    assert sum(sizes[deleted - 1 :]) > 3_000  # deleting one segment fewer would not have been enough


def test_no_retention_for_compact_only(tmp_path: Path) -> None:
    log = open_log(tmp_path, LogConfig(segment_bytes=2_000, retention_ms=1, cleanup_policy=("compact",)))
    fill(log, 40)
    assert log.apply_retention(now_ms=10**12) == 0


def test_delete_segments_before(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    fill(log, 40)
    second = log.segments()[1]
    assert log.delete_segments_before(second.next_offset - 1) == 1
    assert log.delete_segments_before(second.next_offset) == 1
    assert log.log_start_offset == second.next_offset


# --- truncation -----------------------------------------------------------------------------------------------


def test_truncate_to_drops_batches_and_segments(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    fill(log, 40)
    target = log.segments()[1].base_offset + 4  # inside a batch: the whole batch goes
    log.truncate_to(target)
    assert log.log_end_offset == target - 1
    assert log.segment_count == 2
    assert offsets_of(log.read(0, 1_000_000)) == list(range(target - 1))
    assert log.append(make_batch(2), now_ms=0).base_offset == target - 1
    log.truncate_to(10**6)  # beyond the end: no-op
    assert log.log_end_offset == target + 1


def test_truncate_below_log_start(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    fill(log, 10)
    log.delete_segments_before(log.segments()[1].base_offset)
    log.truncate_to(2)
    assert (log.log_start_offset, log.log_end_offset) == (2, 2)
    assert log.append(make_batch(1), now_ms=0).base_offset == 2


# --- durability and lifecycle ---------------------------------------------------------------------------------


def test_flush_advances_recovery_point(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    fill(log, 30)
    assert log.recovery_point == 0 and log.has_unflushed
    log.flush()
    assert log.recovery_point == 90 and not log.has_unflushed


def test_flush_messages_and_flush_ms(tmp_path: Path) -> None:
    log = open_log(tmp_path, LogConfig(flush_messages=5, flush_ms=100))
    log.append(make_batch(3), now_ms=0)
    assert log.recovery_point == 0
    log.append(make_batch(3), now_ms=0)
    assert log.recovery_point == 6
    log.append(make_batch(1), now_ms=0)
    assert not log.flush_if_due(50)
    assert log.flush_if_due(100)
    assert log.recovery_point == 7
    assert not log.flush_if_due(250)  # nothing new to flush


def test_closed_and_deleted(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    fill(log, 2)
    log.close()
    with pytest.raises(LogClosedError):
        log.append(make_batch(1), now_ms=0)
    with pytest.raises(LogClosedError):
        log.read(0, 10)
    log.delete()
    assert not (tmp_path / "topic-0").exists()


def test_reopen_continues_offsets(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    fill(log, 30)
    before = log.read(0, 1_000_000)
    log.flush()
    log.close()
    log = open_log(tmp_path, recovery_point=90)
    assert (log.log_start_offset, log.log_end_offset) == (0, 90)
    assert log.read(0, 1_000_000) == before
    assert log.append(make_batch(1), now_ms=0).base_offset == 90


def test_time_a_caller_does_not_pass_comes_from_the_injected_clock(tmp_path: Path) -> None:
    now = [5_000_000]
    config = LogConfig(segment_ms=100, retention_ms=1_000)
    log = PartitionLog(tmp_path / "t-0", config, clock=lambda: now[0])
    assert log.segments()[0].created_ms == 5_000_000  # the load time
    log.append(make_batch(1, timestamp=-1), now_ms=5_000_010)
    now[0] = 5_000_050
    rolled = log.roll()
    assert rolled.created_ms == 5_000_050
    # A segment without timestamps is as old as its last append (Kafka's lastModified), on the same clock.
    assert log.segments()[0].largest_timestamp() == 5_000_010
    assert log.apply_retention(5_001_010) == 0
    assert log.apply_retention(5_001_011) == 1
