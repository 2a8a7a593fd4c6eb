"""`__consumer_offsets` on the segment log: the coordinator's `RecordLog`, and the reader that loads it back.

The coordinator hands over typed records; here they become Kafka's bytes (version-prefixed keys and values, null
values for tombstones) in one record batch per append, written to the partition's log before the coordinator is
told they are durable. Loading reads the partition back into the same typed records.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import structlog

from coordinator.persistence import AppendCallback
from coordinator.records import CoordinatorRecord, UnknownRecordKey
from protocol import consumer_offsets
from protocol.errors import DecodeError, ErrorCode
from protocol.records import Record, RecordBatch, encode_batch
from protocol.versioned import read_version
from storage.errors import StorageError
from storage.partition_log import AppendOrigin

if TYPE_CHECKING:
    from collections.abc import Callable

    from storage.log_manager import LogManager

log = structlog.get_logger("broker.offsets_log")
OFFSETS_TOPIC = "__consumer_offsets"


def _encode_record(record: CoordinatorRecord) -> tuple[bytes, bytes | None]:
    key = record.key
    assert not isinstance(key, UnknownRecordKey)
    return consumer_offsets.encode_key(key), consumer_offsets.encode_value(record.value)


def decode_record(key: bytes | None, value: bytes | None) -> CoordinatorRecord | None:
    """A stored record as the coordinator's loader wants it; None for a record without a key (never valid)."""
    if key is None:
        return None
    decoded_key = consumer_offsets.decode_key(key)
    key_version = read_version(key, "ConsumerOffsetsKey")
    if decoded_key is None:
        return CoordinatorRecord(UnknownRecordKey(key_version, key), key_version, None, -1)
    decoded_value = consumer_offsets.decode_value(decoded_key, value)
    value_version = read_version(value, "ConsumerOffsetsValue") if value is not None else -1
    return CoordinatorRecord(decoded_key, key_version, decoded_value, value_version)


class OffsetsLog:
    """The coordinator's `RecordLog` over the broker's `__consumer_offsets` partitions, with group commit.

    Appends are queued and written once per event-loop turn: everything every group asked to write to one
    partition in that turn goes out as one record batch in one write() (and one fsync when the flush policy asks
    for one). Only then are the callbacks told the records are durable, so SyncGroup and OffsetCommit answers still
    follow the write, and many concurrent commits cost one system call instead of one each.
    """

    def __init__(
        self,
        logs: LogManager,
        wall_ms: Callable[[], int],
        schedule: Callable[[Callable[[], None]], object],
        deliver: Callable[[list[tuple[AppendCallback, ErrorCode]]], None],
    ) -> None:
        self._logs = logs
        self._wall_ms = wall_ms
        self._schedule = schedule
        self._deliver = deliver
        self._queued: dict[int, list[tuple[Sequence[CoordinatorRecord], AppendCallback]]] = {}
        self._flush_scheduled = False
        self.fail_next: list[ErrorCode] = []  # fault injection: the next appends fail with these errors
        self.on_written: Callable[[str, int], None] | None = None  # wakes long-poll fetches of the partition
        self.appends = 0
        self.writes = 0

    def append(self, partition: int, records: Sequence[CoordinatorRecord], on_durable: AppendCallback) -> None:
        self.appends += 1
        self._queued.setdefault(partition, []).append((records, on_durable))
        if not self._flush_scheduled:
            self._flush_scheduled = True
            self._schedule(self.flush)

    def flush(self) -> None:
        """Write everything queued, one batch per partition, then report durability to every caller."""
        self._flush_scheduled = False
        queued, self._queued = self._queued, {}
        outcomes: list[tuple[AppendCallback, ErrorCode]] = []
        for partition, items in queued.items():
            error = self._write(partition, [record for records, _ in items for record in records])
            outcomes.extend((callback, error) for _, callback in items)
        if outcomes:
            self._deliver(outcomes)

    def _write(self, partition: int, records: list[CoordinatorRecord]) -> ErrorCode:
        if self.fail_next:
            return self.fail_next.pop(0)
        partition_log = self._logs.get(OFFSETS_TOPIC, partition)
        if partition_log is None:
            return ErrorCode.NOT_LEADER_OR_FOLLOWER
        now = self._wall_ms()
        encoded = [_encode_record(r) for r in records]
        batch = RecordBatch.from_records(
            [Record(key=k, value=v, timestamp_delta=0, offset_delta=i) for i, (k, v) in enumerate(encoded)],
            base_timestamp=now,
        )
        try:
            partition_log.append(encode_batch(batch), now_ms=now, origin=AppendOrigin.COORDINATOR, leader_epoch=0)
            partition_log.flush_if_due(now)
        except StorageError as exc:
            log.warning("offsets_log.append_failed", partition=partition, error=str(exc))
            return ErrorCode(exc.error_code)
        self.writes += 1
        if self.on_written is not None:
            self.on_written(OFFSETS_TOPIC, partition)
        return ErrorCode.NONE

    def read_all(self, partition: int) -> list[CoordinatorRecord]:
        return list(self.read_partition(partition))

    def read_partition(self, partition: int) -> Iterator[CoordinatorRecord]:
        """The partition's records in log order. Damaged batches never reach here: the log's reader checks
        every CRC and skips (and reports, once) what does not validate; a record that still does not decode is
        skipped with a warning. Any other error propagates, failing this partition's load only."""
        partition_log = self._logs.get(OFFSETS_TOPIC, partition)
        if partition_log is None:
            return
        for batch in partition_log.iter_batches_from():
            if batch.is_control:
                continue
            for record in batch.records:
                try:
                    decoded = decode_record(record.key, record.value)
                except DecodeError as exc:
                    log.warning("offsets_log.undecodable_record", partition=partition, error=str(exc))
                    continue
                if decoded is not None:
                    yield decoded
