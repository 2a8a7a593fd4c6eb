"""message.timestamp.before.max.ms / after.max.ms: a CreateTime record outside the window is INVALID_TIMESTAMP.

Kafka 4.4's LogValidator checks every record of a producer's batch against [now - before, now + after] and refuses
the whole append, listing each offending record (its index in the batch) with Kafka's message.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from protocol.errors import ErrorCode
from protocol.records import Record, RecordBatch, encode_batch
from storage.config import LogConfig
from storage.errors import InvalidRecordError
from storage.partition_log import PartitionLog
from storage.validation import AppendOrigin

NOW = 1_795_526_181_961
HOUR = 3_600_000
WINDOW = LogConfig().with_overrides({"message.timestamp.before.max.ms": "60000"})


def batch(*timestamps: int) -> bytes:
    base = timestamps[0]
    records = [
        Record(offset_delta=i, timestamp_delta=ts - base, key=b"k", value=b"v") for i, ts in enumerate(timestamps)
    ]
    return encode_batch(RecordBatch.from_records(records, base_timestamp=base))


def open_log(tmp_path: Path, config: LogConfig = WINDOW) -> PartitionLog:
    return PartitionLog(tmp_path / "t-0", config, now_ms=NOW)


def test_a_record_too_old_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    with pytest.raises(InvalidRecordError) as refused:
        log.append(batch(NOW, NOW - 120_000), now_ms=NOW)
    assert refused.value.error_code == ErrorCode.INVALID_TIMESTAMP
    assert str(refused.value) == "One or more records have been rejected due to invalid timestamp"
    expected = (
        f"Timestamp {NOW - 120_000} of message with offset 1 is out of range. The timestamp should be within "
        f"[{NOW - 60_000}, {NOW + HOUR}]"
    )
    assert refused.value.record_errors == [(1, expected)]
    assert log.log_end_offset == 0


def test_a_record_more_than_an_hour_ahead_is_refused_by_default(tmp_path: Path) -> None:
    log = open_log(tmp_path, LogConfig())
    with pytest.raises(InvalidRecordError) as refused:
        log.append(batch(NOW + 2 * HOUR), now_ms=NOW)
    [(index, message)] = refused.value.record_errors
    # before.max.ms is Long.MAX: Kafka prints now - Long.MAX as the lower bound
    assert (index, message) == (
        0,
        f"Timestamp {NOW + 2 * HOUR} of message with offset 0 is out of range. The timestamp should be within "
        f"[{NOW - (1 << 63) + 1}, {NOW + HOUR}]",
    )


def test_the_bounds_are_inclusive_and_old_timestamps_pass_by_default(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    assert log.append(batch(NOW - 60_000, NOW + HOUR), now_ms=NOW).base_offset == 0
    assert open_log(tmp_path / "b", LogConfig()).append(batch(1_000), now_ms=NOW).base_offset == 0


def test_an_upper_bound_of_long_max_wraps_in_the_message_as_in_java(tmp_path: Path) -> None:
    config = LogConfig().with_overrides(
        {"message.timestamp.after.max.ms": str((1 << 63) - 1), "message.timestamp.before.max.ms": "0"}
    )
    log = open_log(tmp_path, config)
    with pytest.raises(InvalidRecordError) as refused:
        log.append(batch(NOW - 1), now_ms=NOW)
    assert refused.value.record_errors[0][1].endswith(f"[{NOW}, {NOW + (1 << 63) - 1 - (1 << 64)}]")


def test_log_append_time_and_the_coordinators_own_writes_are_not_checked(tmp_path: Path) -> None:
    stamped = LogConfig().with_overrides(
        {"message.timestamp.type": "LogAppendTime", "message.timestamp.after.max.ms": "0"}
    )
    assert open_log(tmp_path / "a", stamped).append(batch(NOW + 2 * HOUR), now_ms=NOW).base_offset == 0
    log = open_log(tmp_path / "b", LogConfig())
    assert log.append(batch(NOW + 2 * HOUR), now_ms=NOW, origin=AppendOrigin.COORDINATOR).base_offset == 0
