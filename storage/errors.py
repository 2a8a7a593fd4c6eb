"""Typed storage errors, each carrying the Kafka error code the broker puts on the wire.

The storage layer knows why an append or a read failed; the broker only has to copy ``error_code`` (and for
INVALID_RECORD the per-record ``record_errors``) into the response, so the mapping lives in one place.
"""

from __future__ import annotations

import errno
import os
from typing import ClassVar

from protocol.errors import ErrorCode

__all__ = [
    "CorruptLogError",
    "CorruptRecordError",
    "InvalidConfigError",
    "InvalidPartitionsError",
    "InvalidProducerEpochError",
    "InvalidRecordError",
    "InvalidTimestampError",
    "InvalidTopicError",
    "InvalidTxnStateError",
    "KafkaStorageError",
    "LogClosedError",
    "LogDirError",
    "OffsetOutOfRangeError",
    "OutOfOrderSequenceError",
    "RecordListTooLargeError",
    "RecordTooLargeError",
    "StorageError",
    "TopicAlreadyExistsError",
    "TransactionCoordinatorFencedError",
    "UnknownTopicOrPartitionError",
    "os_error_fields",
]


def os_error_fields(exc: BaseException) -> dict[str, object]:
    """``errno`` (symbolic, ``ENOSPC``) and ``error`` (its text) of an OSError, or of the OSError behind a
    KafkaStorageError: the fields every storage failure line carries, so operators can grep one errno."""
    cause = exc if isinstance(exc, OSError) else exc.__cause__
    if not isinstance(cause, OSError) or cause.errno is None:
        return {"errno": None, "error": str(exc)}
    return {"errno": errno.errorcode.get(cause.errno, cause.errno), "error": os.strerror(cause.errno)}


class StorageError(Exception):
    """Base class; ``error_code`` is the Kafka code for this failure."""

    error_code: ClassVar[ErrorCode] = ErrorCode.UNKNOWN_SERVER_ERROR


# --- appends --------------------------------------------------------------------------------------------------


class CorruptRecordError(StorageError):
    """Bytes that are not a well-formed batch: CRC mismatch, truncated batch, bad length, unparseable records."""

    error_code = ErrorCode.CORRUPT_MESSAGE


class InvalidRecordError(StorageError):
    """Well-formed bytes that break a rule: wrong magic, offset span vs count, control batch from a client...

    ``record_errors`` lists ``(batch_index, message)`` pairs in the shape of ProduceResponse's ``record_errors``
    (the index is the record's position inside its batch, as Kafka reports it) when a rule applies per record.
    """

    error_code = ErrorCode.INVALID_RECORD

    def __init__(self, message: str, record_errors: list[tuple[int, str]] | None = None) -> None:
        super().__init__(message)
        self.record_errors: list[tuple[int, str]] = record_errors or []


class InvalidTimestampError(InvalidRecordError):
    """A CreateTime record outside ``message.timestamp.before.max.ms``/``after.max.ms`` (Kafka's
    InvalidTimestampException); ``record_errors`` lists every such record."""

    error_code = ErrorCode.INVALID_TIMESTAMP


class RecordTooLargeError(StorageError):
    """One batch is larger than ``max.message.bytes`` (Kafka's RecordTooLargeException)."""

    error_code = ErrorCode.MESSAGE_TOO_LARGE


class RecordListTooLargeError(StorageError):
    """The whole append is larger than a segment can hold (Kafka's RecordBatchTooLargeException)."""

    error_code = ErrorCode.RECORD_LIST_TOO_LARGE


class KafkaStorageError(StorageError):
    """The file system refused a write or an fsync (ENOSPC, EIO, ...): Kafka's KafkaStorageException.

    Raised at the storage boundary in place of the OSError, after the log was put back as it was before the append,
    so the broker can answer KAFKA_STORAGE_ERROR (Produce) or the coordinator's remap of it and carry on.
    """

    error_code = ErrorCode.KAFKA_STORAGE_ERROR


# --- producer state (Kafka's ProducerAppendInfo checks) -----------------------------------------------------


class InvalidProducerEpochError(StorageError):
    """A batch or marker carries an epoch older than the producer's current one (a zombie producer)."""

    error_code = ErrorCode.INVALID_PRODUCER_EPOCH


class OutOfOrderSequenceError(StorageError):
    """An idempotent producer's batch does not continue its sequence (a gap, or a new epoch not at 0)."""

    error_code = ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER


class InvalidTxnStateError(StorageError):
    """A non-transactional batch from a producer whose transaction is still open on the partition."""

    error_code = ErrorCode.INVALID_TXN_STATE


class TransactionCoordinatorFencedError(StorageError):
    """A marker from a coordinator older than the last one that wrote a marker for this producer."""

    error_code = ErrorCode.TRANSACTION_COORDINATOR_FENCED


# --- reads ----------------------------------------------------------------------------------------------------


class OffsetOutOfRangeError(StorageError):
    """A fetch below the log start or beyond the log end; consumers reset their position on this code."""

    error_code = ErrorCode.OFFSET_OUT_OF_RANGE

    def __init__(self, offset: int, log_start_offset: int, log_end_offset: int) -> None:
        super().__init__(f"offset {offset} is outside the log range [{log_start_offset}, {log_end_offset}]")
        self.offset = offset
        self.log_start_offset = log_start_offset
        self.log_end_offset = log_end_offset


class CorruptLogError(StorageError):
    """Data already on disk is inconsistent (found while serving, not during recovery, which repairs instead)."""

    error_code = ErrorCode.KAFKA_STORAGE_ERROR


class LogClosedError(StorageError):
    """The log was closed or deleted (typically its topic was deleted while a request was in flight)."""

    error_code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


class LogDirError(StorageError):
    """The log directory cannot be used: ``meta.properties`` belongs to another node/cluster, or is unreadable."""

    error_code = ErrorCode.KAFKA_STORAGE_ERROR


# --- topics ---------------------------------------------------------------------------------------------------


class InvalidTopicError(StorageError):
    error_code = ErrorCode.INVALID_TOPIC_EXCEPTION


class TopicAlreadyExistsError(StorageError):
    error_code = ErrorCode.TOPIC_ALREADY_EXISTS


class InvalidPartitionsError(StorageError):
    error_code = ErrorCode.INVALID_PARTITIONS


class UnknownTopicOrPartitionError(StorageError):
    error_code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


class InvalidConfigError(StorageError):
    error_code = ErrorCode.INVALID_CONFIG
