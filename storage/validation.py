"""Checks a produced record set and assigns its offsets, as Kafka's ``LogValidator`` does for magic 2.

Everything a client sends is validated before a byte reaches the log: framing and CRC (CORRUPT_MESSAGE), then
Kafka's batch rules (INVALID_RECORD), the CreateTime window of ``message.timestamp.before/after.max.ms``
(INVALID_TIMESTAMP) and the size limit (MESSAGE_TOO_LARGE). Offsets are assigned in place by
overwriting ``baseOffset``, and the leader epoch by overwriting ``partitionLeaderEpoch``; neither field is
covered by the CRC, so this costs no checksum work. Only when the broker must change a CRC-covered field (the
timestamp type and max timestamp, for ``LogAppendTime`` or a wrong max timestamp) is the CRC recomputed, again
exactly as Kafka does.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import Enum
from typing import NamedTuple

from protocol import checksum as crc32c
from protocol.errors import DecodeError
from protocol.record_scan import scan_records
from protocol.records import (
    BATCH_HEADER_SIZE,
    NO_TIMESTAMP,
    BatchHeader,
    RecordsRegion,
    TimestampType,
    batch_records_region,
    parse_records,
    peek_batch_header,
    verify_batch_crc,
)
from storage.config import LogConfig
from storage.errors import CorruptRecordError, InvalidRecordError, InvalidTimestampError, RecordTooLargeError

__all__ = ["AppendOrigin", "BatchMeta", "ValidatedAppend", "validate_and_assign_offsets"]

# Positions of the header fields the broker overwrites (see protocol.records for the full layout).
_BASE_OFFSET = struct.Struct(">q")  # @0, not covered by the CRC
_LEADER_EPOCH = struct.Struct(">i")
_LEADER_EPOCH_AT = 12  # not covered by the CRC
_CRC = struct.Struct(">I")
_CRC_AT = 17
_ATTRIBUTES = struct.Struct(">h")
_ATTRIBUTES_AT = 21  # the CRC covers from here to the end of the batch
_MAX_TIMESTAMP = struct.Struct(">q")
_MAX_TIMESTAMP_AT = 35
_TIMESTAMP_TYPE_BIT = 0x08


class AppendOrigin(Enum):
    """Who is appending, which decides how much is checked (Kafka's ``AppendOrigin``)."""

    #: A producer: every batch rule applies and records are parsed.
    CLIENT = "client"
    #: The broker's own coordinator writing batches it encoded itself: framing and CRC only.
    COORDINATOR = "coordinator"


class BatchMeta(NamedTuple):
    """Where one batch of a validated append sits and which offsets and max timestamp it ended up with."""

    position: int
    size: int
    base_offset: int
    last_offset: int
    max_timestamp: int
    record_count: int


@dataclass(frozen=True, slots=True)
class ValidatedAppend:
    """A record set ready to be written: offsets assigned, one ``BatchMeta`` per batch."""

    data: bytearray
    batches: list[BatchMeta]
    record_count: int
    #: Largest batch max timestamp (-1 when no batch carries one); decides time-based rolling.
    max_timestamp: int

    @property
    def first_offset(self) -> int:
        return self.batches[0].base_offset

    @property
    def last_offset(self) -> int:
        return self.batches[-1].last_offset


def validate_and_assign_offsets(
    records: bytes | bytearray | memoryview,
    *,
    next_offset: int,
    now_ms: int,
    config: LogConfig,
    origin: AppendOrigin = AppendOrigin.CLIENT,
    leader_epoch: int | None = None,
) -> ValidatedAppend:
    """Validate ``records`` (one or more v2 batches) and return a patched copy with offsets from ``next_offset``.

    Raises CorruptRecordError, InvalidRecordError or RecordTooLargeError; nothing is returned half-patched.
    """
    buf = bytearray(records)
    end = len(buf)
    if end == 0:
        raise InvalidRecordError("the record set holds no batch")
    batches: list[BatchMeta] = []
    total_records = 0
    max_timestamp = NO_TIMESTAMP
    pos = 0
    while pos < end:
        header = _checked_header(buf, pos, end, config)
        batch_max = _validate_batch(buf, pos, header, config, origin, now_ms)
        if config.log_append_time:
            _set_max_timestamp(buf, pos, header, TimestampType.LOG_APPEND_TIME, now_ms)
            batch_max = now_ms
        elif header.timestamp_type is not TimestampType.CREATE_TIME or header.max_timestamp != batch_max:
            _set_max_timestamp(buf, pos, header, TimestampType.CREATE_TIME, batch_max)
        _BASE_OFFSET.pack_into(buf, pos, next_offset)
        if leader_epoch is not None:
            _LEADER_EPOCH.pack_into(buf, pos + _LEADER_EPOCH_AT, leader_epoch)
        last_offset = next_offset + header.last_offset_delta
        batches.append(BatchMeta(pos, header.size, next_offset, last_offset, batch_max, header.record_count))
        total_records += header.record_count
        max_timestamp = max(max_timestamp, batch_max)
        next_offset = last_offset + 1
        pos += header.size
    return ValidatedAppend(buf, batches, total_records, max_timestamp)


def _checked_header(buf: bytearray, pos: int, end: int, config: LogConfig) -> BatchHeader:
    """Framing, magic, size limit and CRC of the batch at ``pos``."""
    if end - pos < BATCH_HEADER_SIZE:
        raise CorruptRecordError(f"{end - pos} trailing bytes at position {pos} are less than a batch header")
    try:
        header = peek_batch_header(buf, pos)
    except DecodeError as exc:
        if exc.path == "batch.magic":
            # Produce v3+ may only carry magic 2; Kafka answers older formats with InvalidRecordException.
            raise InvalidRecordError(f"batch at position {pos}: {exc.reason}") from None
        raise CorruptRecordError(f"batch at position {pos}: {exc.reason}") from None
    if header.size > end - pos:
        raise CorruptRecordError(f"batch at position {pos} declares {header.size} bytes, {end - pos} present")
    if header.size > config.max_message_bytes:
        raise RecordTooLargeError(
            f"batch of {header.size} bytes is larger than max.message.bytes ({config.max_message_bytes})"
        )
    try:
        verify_batch_crc(buf, pos, header)
    except DecodeError as exc:
        raise CorruptRecordError(f"batch at position {pos}: {exc.reason}") from None
    return header


def _validate_batch(
    buf: bytearray, pos: int, header: BatchHeader, config: LogConfig, origin: AppendOrigin, now_ms: int
) -> int:
    """Kafka's per-batch rules for client writes; returns the batch's true max timestamp."""
    if origin is not AppendOrigin.CLIENT:
        return header.max_timestamp
    count = header.record_count
    if header.last_offset_delta < 0:
        raise InvalidRecordError(f"batch has an invalid offset range (lastOffsetDelta {header.last_offset_delta})")
    if count <= 0:
        raise InvalidRecordError(f"invalid reported count for record batch: {count}")
    if header.last_offset_delta + 1 != count:
        raise InvalidRecordError(
            f"inconsistent batch offset range (lastOffsetDelta {header.last_offset_delta}) and count of records {count}"
        )
    if header.is_control:
        raise InvalidRecordError("clients are not allowed to write control records")
    if header.producer_id >= 0 and header.base_sequence < 0:
        raise InvalidRecordError(
            f"invalid sequence number {header.base_sequence} in record batch with producerId {header.producer_id}"
        )
    window = None if config.log_append_time else _TimestampWindow(config, now_ms)
    try:
        region = batch_records_region(buf, pos, header)  # compressed batches are decompressed, as Kafka does
        accepted = _accepted_by_the_walk(region, header, config, window)
        if accepted is not None:
            return accepted
        # The full parse, for what the walk did not accept: it names every error exactly.
        records = parse_records(region, count)
    except DecodeError as exc:
        raise CorruptRecordError(f"batch at position {pos}: {exc.reason}") from None
    errors: list[tuple[int, str]] = []
    late: list[tuple[int, str]] = []
    max_timestamp = NO_TIMESTAMP
    compacted = config.compact_enabled
    for index, record in enumerate(records):
        if record.offset_delta != index:
            errors.append((index, f"record has offset delta {record.offset_delta}, expected {index}"))
        if compacted and record.key is None:
            errors.append((index, "Compacted topic cannot accept message without key."))
        timestamp = header.base_timestamp + record.timestamp_delta
        if window is not None and window.refuses(timestamp):
            late.append((index, window.message(timestamp, header.base_offset + record.offset_delta)))
        max_timestamp = max(max_timestamp, timestamp)
    if late:  # Kafka: any timestamp error makes the whole answer INVALID_TIMESTAMP, listing every record error
        raise InvalidTimestampError("One or more records have been rejected due to invalid timestamp", errors + late)
    if errors:
        raise InvalidRecordError(errors[0][1], errors)
    return max_timestamp


def _accepted_by_the_walk(
    region: RecordsRegion, header: BatchHeader, config: LogConfig, window: _TimestampWindow | None
) -> int | None:
    """The batch's max timestamp if an object-free walk shows that no per-record rule refuses it, else None.

    The walk (`protocol.record_scan`) checks each record's framing and offset delta as the full parser does and
    reports the timestamp range and whether every record has a key; a window that holds the smallest and the
    largest timestamp holds them all. Anything else is left to the full parse, which reports it exactly.
    """
    summary = scan_records(region.data, region.start, region.end, header.record_count)
    if summary is None or (config.compact_enabled and not summary.all_keyed):
        return None
    lowest = header.base_timestamp + summary.min_timestamp_delta
    highest = header.base_timestamp + summary.max_timestamp_delta
    if window is not None and not (window.holds(lowest) and window.holds(highest)):
        return None
    return max(NO_TIMESTAMP, highest)


def _java_long(value: int) -> int:
    """``value`` wrapped to 64 bits as Java's long arithmetic wraps it (Kafka prints the bounds it computes)."""
    return (value + (1 << 63)) % (1 << 64) - (1 << 63)


@dataclass(frozen=True, slots=True)
class _TimestampWindow:
    """``message.timestamp.before.max.ms`` / ``after.max.ms`` around the broker's time (CreateTime topics)."""

    config: LogConfig
    now_ms: int

    def refuses(self, timestamp: int) -> bool:
        if timestamp == NO_TIMESTAMP:
            return False
        age = self.now_ms - timestamp
        return age > self.config.message_timestamp_before_max_ms or -age > self.config.message_timestamp_after_max_ms

    def holds(self, timestamp: int) -> bool:
        """Within the window, without `refuses`' pass for NO_TIMESTAMP: a range whose two ends it holds has no
        timestamp between them that `refuses` would refuse."""
        age = self.now_ms - timestamp
        return age <= self.config.message_timestamp_before_max_ms and -age <= self.config.message_timestamp_after_max_ms

    def message(self, timestamp: int, offset: int) -> str:
        low = _java_long(self.now_ms - self.config.message_timestamp_before_max_ms)
        high = _java_long(self.now_ms + self.config.message_timestamp_after_max_ms)
        return (
            f"Timestamp {timestamp} of message with offset {offset} is out of range. "
            f"The timestamp should be within [{low}, {high}]"
        )


def _set_max_timestamp(buf: bytearray, pos: int, header: BatchHeader, kind: TimestampType, timestamp: int) -> None:
    """Rewrite the timestamp type bit and max timestamp, then the CRC they are covered by."""
    attributes = header.attributes & ~_TIMESTAMP_TYPE_BIT
    if kind is TimestampType.LOG_APPEND_TIME:
        attributes |= _TIMESTAMP_TYPE_BIT
    _ATTRIBUTES.pack_into(buf, pos + _ATTRIBUTES_AT, attributes)
    _MAX_TIMESTAMP.pack_into(buf, pos + _MAX_TIMESTAMP_AT, timestamp)
    with memoryview(buf) as view:
        crc = crc32c.crc32c(view[pos + _ATTRIBUTES_AT : pos + header.size])
    _CRC.pack_into(buf, pos + _CRC_AT, crc)
