"""`__consumer_offsets` on the segment log: the coordinator's `RecordLog`, and the reader that loads it back.

The coordinator hands over typed records; here they become Kafka's bytes (version-prefixed keys and values, null
values for tombstones) in one record batch per append, written to the partition's log before the coordinator is
told they are durable. Loading reads the partition back into the same typed records.

Transactions (T36, T57): a TxnOffsetCommit's records are a transactional batch of the producer (its id and epoch,
base sequence 0, the transactional attribute, as Kafka's coordinator runtime builds it), and a transaction's end is
a control batch of the producer with one COMMIT/ABORT record (`protocol.control_records`). Neither is ever merged
with another append. Reading back tags the records of a transactional batch with its producer id and yields each
marker as a `TransactionMarker`, in log order, which is what the loader needs to rebuild pending offsets (T66).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import structlog

from coordinator.persistence import AppendCallback
from coordinator.records import CoordinatorRecord, LogEntry, TransactionalProducer, TransactionMarker, UnknownRecordKey
from protocol import consumer_offsets
from protocol.control_records import (
    ControlRecordType,
    EndTxnMarker,
    decode_end_txn_marker,
    encode_end_txn_marker_batch,
)
from protocol.errors import DecodeError, ErrorCode
from protocol.records import BATCH_HEADER_SIZE, Record, RecordBatch, encode_key_value_batch
from protocol.versioned import read_version
from storage.config import INT32_MAX
from storage.errors import StorageError
from storage.partition_log import AppendOrigin

if TYPE_CHECKING:
    from collections.abc import Callable

    from storage.log_manager import LogManager

log = structlog.get_logger("broker.offsets_log")
OFFSETS_TOPIC = "__consumer_offsets"
#: The most a v2 record adds around its key and value: length, attributes, timestamp and offset deltas, key and
#: value lengths (varints at their widest) and the header count.
_RECORD_OVERHEAD_MAX = 5 + 1 + 10 + 5 + 5 + 5 + 5


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


@dataclass(frozen=True, slots=True)
class _BatchKind:
    """What a batch is besides its records: the producer of a transactional batch, and the marker of a control
    batch (a transaction's end, which has no records of the coordinator's)."""

    producer: TransactionalProducer | None = None
    marker: EndTxnMarker | None = None

    @property
    def alone(self) -> bool:
        """Transactional and control batches hold exactly one append (Kafka writes each in its own batch)."""
        return self.producer is not None


_PLAIN = _BatchKind()


@dataclass(slots=True)
class _Queued:
    """One append waiting for the flush: its records already encoded, and an upper bound of their batch size."""

    records: list[tuple[bytes, bytes | None]]
    size: int
    on_durable: AppendCallback
    kind: _BatchKind = _PLAIN


def _size_bound(records: list[tuple[bytes, bytes | None]]) -> int:
    """What these records can add to a batch at most (Kafka's `estimateSizeInBytes` idea: payload + overhead)."""
    return sum(len(key) + (len(value) if value is not None else 0) + _RECORD_OVERHEAD_MAX for key, value in records)


def _encode_batch(records: Sequence[tuple[bytes, bytes | None]], now_ms: int, kind: _BatchKind = _PLAIN) -> bytes:
    producer = kind.producer
    if producer is not None and kind.marker is not None:
        return encode_end_txn_marker_batch(
            kind.marker, producer_id=producer.producer_id, producer_epoch=producer.producer_epoch, timestamp=now_ms
        )
    # What `RecordBatch.from_records` derives, known here: offset deltas 0..n-1, every timestamp the batch's.
    if producer is None:
        return encode_key_value_batch(records, now_ms)
    return encode_key_value_batch(
        records, now_ms, producer.producer_id, producer.producer_epoch, 0, is_transactional=True
    )


class OffsetsLog:
    """The coordinator's `RecordLog` over the broker's `__consumer_offsets` partitions, with group commit.

    `broker.transaction_state_log.TransactionStateLog` is the same machinery over `__transaction_state` for the
    transaction coordinator (`TOPIC`, `EVENTS` and `_encode` are what it changes).

    Appends are queued and written once per event-loop turn: everything every group asked to write to one
    partition in that turn goes out in as few record batches as `max.message.bytes` allows, one write() each (and
    one fsync when the flush policy asks for one). Only then are the callbacks told the records are durable, so
    SyncGroup and OffsetCommit answers still follow the write, and many concurrent commits cost one system call
    instead of one each.

    Group commit must not make clients share failures they did not cause, so each append is checked before it
    joins a batch (its records encode, and fit one batch) and is refused alone otherwise, with the error Kafka's
    coordinator runtime gives it: UNKNOWN_SERVER_ERROR for a record that cannot be serialized, MESSAGE_TOO_LARGE
    for one that can never fit. The appends of one request always stay in one batch (atomic, as Kafka writes
    them). A write that fails (KAFKA_STORAGE_ERROR on a full disk, or an unexpected exception) fails only the
    appends in that batch; every outcome is delivered in the same flush, at once.
    """

    TOPIC = OFFSETS_TOPIC
    EVENTS = "offsets_log"
    """The prefix of this log's event names (`offsets_log.append_failed`, ...)."""

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
        self._queued: dict[int, list[_Queued]] = {}
        self._refused: list[tuple[AppendCallback, ErrorCode]] = []
        self._flush_scheduled = False
        self.on_written: Callable[[str, int], None] | None = None  # wakes long-poll fetches of the partition
        self.appends = 0
        self.writes = 0

    def append(
        self,
        partition: int,
        records: Sequence[Any],
        on_durable: AppendCallback,
        producer: TransactionalProducer | None = None,
    ) -> None:
        try:
            encoded = [self._encode(r) for r in records]
        except Exception as exc:  # whatever makes a record unwritable refuses that append alone
            self.appends += 1
            log.warning(f"{self.EVENTS}.record_refused", partition=partition, reason="unencodable", error=str(exc))
            self._refuse(on_durable, ErrorCode.UNKNOWN_SERVER_ERROR)
            return
        self._queue(partition, encoded, on_durable, _PLAIN if producer is None else _BatchKind(producer))

    def append_marker(self, partition: int, marker: TransactionMarker, on_durable: AppendCallback) -> None:
        """A transaction's end: a control batch of the producer with its COMMIT or ABORT record (T36)."""
        kind = ControlRecordType.COMMIT if marker.commit else ControlRecordType.ABORT
        producer = TransactionalProducer(marker.producer_id, marker.producer_epoch)
        self._queue(partition, [], on_durable, _BatchKind(producer, EndTxnMarker(kind, marker.coordinator_epoch)))

    def _queue(
        self, partition: int, encoded: list[tuple[bytes, bytes | None]], on_durable: AppendCallback, kind: _BatchKind
    ) -> None:
        self.appends += 1
        queued = _Queued(encoded, _size_bound(encoded), on_durable, kind)
        limit = self._batch_limit(partition)
        if BATCH_HEADER_SIZE + queued.size > limit:
            size = len(_encode_batch(encoded, self._wall_ms(), kind))  # the bound is loose: decide on the exact size
            if size > limit:
                log.warning(f"{self.EVENTS}.record_refused", partition=partition, reason="too_large", size=size)
                self._refuse(on_durable, ErrorCode.MESSAGE_TOO_LARGE)
                return
        self._queued.setdefault(partition, []).append(queued)
        self._schedule_flush()

    def _refuse(self, on_durable: AppendCallback, error: ErrorCode) -> None:
        """Answer with the other outcomes of this turn, so the caller sees one delivery path either way."""
        self._refused.append((on_durable, error))
        self._schedule_flush()

    def _schedule_flush(self) -> None:
        if not self._flush_scheduled:
            self._flush_scheduled = True
            self._schedule(self.flush)

    def _batch_limit(self, partition: int) -> int:
        """The largest batch the partition takes: `max.message.bytes`, and never more than a segment."""
        partition_log = self._logs.get(self.TOPIC, partition)
        if partition_log is None:
            return INT32_MAX  # the write reports NOT_LEADER_OR_FOLLOWER
        config = partition_log.config
        return min(config.max_message_bytes, config.segment_bytes)

    def flush(self) -> None:
        """Write everything queued, in batches per partition, then report each append's outcome."""
        self._flush_scheduled = False
        queued, self._queued = self._queued, {}
        outcomes, self._refused = self._refused, []
        for partition, items in queued.items():
            for batch in self._batches(partition, items):
                error = self._write(partition, [record for item in batch for record in item.records], batch[0].kind)
                outcomes.extend((item.on_durable, error) for item in batch)
        if outcomes:
            self._deliver(outcomes)

    def _batches(self, partition: int, items: list[_Queued]) -> Iterator[list[_Queued]]:
        """Consecutive runs of plain appends whose records fit one batch together (in order, each append whole); a
        transactional or control append is a batch of its own."""
        limit = self._batch_limit(partition)
        batch: list[_Queued] = []
        size = BATCH_HEADER_SIZE
        for item in items:
            if batch and (size + item.size > limit or item.kind.alone or batch[0].kind.alone):
                yield batch
                batch, size = [], BATCH_HEADER_SIZE
            batch.append(item)
            size += item.size
        if batch:
            yield batch

    def _write(self, partition: int, records: list[tuple[bytes, bytes | None]], kind: _BatchKind) -> ErrorCode:
        """One batch to the partition's log; the error that fails exactly the appends it held, or NONE."""
        partition_log = self._logs.get(self.TOPIC, partition)
        if partition_log is None:
            return ErrorCode.NOT_LEADER_OR_FOLLOWER
        now = self._wall_ms()
        try:
            data = _encode_batch(records, now, kind)
            partition_log.append(data, now_ms=now, origin=AppendOrigin.COORDINATOR)
            partition_log.flush_if_due(now)
        except StorageError as exc:
            log.warning(f"{self.EVENTS}.append_failed", partition=partition, error=str(exc), code=exc.error_code.name)
            return ErrorCode(exc.error_code)
        except Exception:  # a bug here must not strand the other partitions' callers
            log.exception(f"{self.EVENTS}.append_crashed", partition=partition, records=len(records))
            return ErrorCode.UNKNOWN_SERVER_ERROR
        self.writes += 1
        if self.on_written is not None:
            self.on_written(self.TOPIC, partition)
        return ErrorCode.NONE

    _encode: Callable[[Any], tuple[bytes, bytes | None]] = staticmethod(_encode_record)
    """A record as the key and value bytes stored in this log's topic (one call per record: no wrapper)."""

    def read_all(self, partition: int) -> list[LogEntry]:
        return list(self.read_partition(partition))

    def read_partition(self, partition: int) -> Iterator[LogEntry]:
        """The partition's records and transaction markers in log order (records of a transactional batch tagged
        with its producer id). Damaged batches never reach here: the log's reader checks every CRC and skips (and
        reports, once) what does not validate; a record that still does not decode is skipped with a warning (a
        control record of another type than COMMIT/ABORT, which never comes here, too). Any other error
        propagates, failing this partition's load only."""
        partition_log = self._logs.get(OFFSETS_TOPIC, partition)
        if partition_log is None:
            return
        for batch in partition_log.iter_batches_from():
            for record in batch.records:
                try:
                    decoded = _decode_entry(batch, record)
                except DecodeError as exc:
                    log.warning("offsets_log.undecodable_record", partition=partition, error=str(exc))
                    continue
                if decoded is not None:
                    yield decoded


def _decode_entry(batch: RecordBatch, record: Record) -> LogEntry | None:
    """A stored record as the loader wants it: a marker for a control record, else the typed record."""
    if batch.is_control:
        marker = decode_end_txn_marker(record)
        commit = marker.control_type is ControlRecordType.COMMIT
        return TransactionMarker(batch.producer_id, batch.producer_epoch, marker.coordinator_epoch, commit)
    decoded = decode_record(record.key, record.value)
    if decoded is not None and batch.is_transactional:
        return replace(decoded, producer_id=batch.producer_id)
    return decoded
