"""End-transaction markers: the control batches that close a transaction on a partition (KIP-98).

When a transaction commits or aborts, its coordinator writes one marker to every partition the transaction wrote
to. A marker is a v2 batch with the control and transactional attribute bits set, the transaction's producer id
and epoch, no sequence (-1), and exactly one record (Kafka's ``MemoryRecords.withEndTransactionMarker``)::

    key   = int16 version (0) | int16 type (ABORT = 0, COMMIT = 1)      ControlRecordTypeSchema v0, 4 bytes
    value = int16 version (0) | int32 coordinatorEpoch                  EndTxnMarker v0, 6 bytes

Consumers skip control batches (they are never handed to the application); storage reads them to complete the
producer's transaction and to index aborted ones. Decoding follows Kafka's ``ControlRecordType.parse`` and
``EndTransactionMarker.deserializeValue``: a negative version or a short key/value is invalid, a newer version is
read by the fields version 0 knows, a type other than ABORT/COMMIT is not an end-transaction marker.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import IntEnum

from protocol.errors import DecodeError
from protocol.records import NO_PARTITION_LEADER_EPOCH, NO_SEQUENCE, Record, RecordBatch, encode_batch

__all__ = ["ControlRecordType", "EndTxnMarker", "decode_end_txn_marker", "encode_end_txn_marker_batch"]

_KEY = struct.Struct(">hh")
_VALUE = struct.Struct(">hi")
_CURRENT_VERSION = 0


class ControlRecordType(IntEnum):
    """The control record types of end-transaction markers (Kafka's ``ControlRecordType``)."""

    ABORT = 0
    COMMIT = 1


@dataclass(frozen=True, slots=True)
class EndTxnMarker:
    """What a marker says: how the transaction ended, and the epoch of the coordinator that decided it."""

    control_type: ControlRecordType
    coordinator_epoch: int

    @property
    def is_abort(self) -> bool:
        return self.control_type is ControlRecordType.ABORT


def encode_end_txn_marker_batch(
    marker: EndTxnMarker,
    *,
    producer_id: int,
    producer_epoch: int,
    timestamp: int,
    base_offset: int = 0,
    partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
) -> bytes:
    """The marker's control batch, byte for byte as Kafka writes it (uncompressed, one record at delta 0)."""
    record = Record(
        offset_delta=0,
        timestamp_delta=0,
        key=_KEY.pack(_CURRENT_VERSION, marker.control_type),
        value=_VALUE.pack(_CURRENT_VERSION, marker.coordinator_epoch),
    )
    batch = RecordBatch.from_records(
        [record],
        base_offset=base_offset,
        base_timestamp=timestamp,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=NO_SEQUENCE,
        partition_leader_epoch=partition_leader_epoch,
        is_transactional=True,
        is_control=True,
    )
    return encode_batch(batch)


def decode_end_txn_marker(record: Record) -> EndTxnMarker:
    """The marker a control batch's record holds; DecodeError when it is not a well-formed end-txn marker."""
    key, value = record.key, record.value
    if key is None or len(key) < _KEY.size:
        raise DecodeError(f"control record key of {0 if key is None else len(key)} bytes, need 4", path="key")
    key_version, kind = _KEY.unpack_from(key)
    if key_version < 0:
        raise DecodeError(f"invalid control record key version {key_version}", path="key.version")
    if kind not in (ControlRecordType.ABORT, ControlRecordType.COMMIT):
        raise DecodeError(f"control record type {kind} is not an end-transaction marker", path="key.type")
    if value is None or len(value) < _VALUE.size:
        raise DecodeError(f"marker value of {0 if value is None else len(value)} bytes, need 6", path="value")
    value_version, coordinator_epoch = _VALUE.unpack_from(value)
    if value_version < 0:
        raise DecodeError(f"invalid end transaction marker version {value_version}", path="value.version")
    return EndTxnMarker(ControlRecordType(kind), coordinator_epoch)
