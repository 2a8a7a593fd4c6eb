"""The record of a control batch: Kafka's `ControlRecordType` key and `EndTransactionMarker` value (T36).

A transaction's end is written to each partition it touched as a control batch holding one record whose key is
`int16 version (0)` + `int16 type` (ABORT 0, COMMIT 1; the schema ControlRecordTypeSchema) and whose value is
`int16 version (0)` + `int32 coordinatorEpoch` (EndTxnMarker). Kafka reads a newer key or value version as
version 0 (the fields only grow at the end), and so does this module. Other control types (LEADER_CHANGE and the
KRaft snapshot records) never appear in the partitions this broker writes markers to; `decode_end_txn_marker`
answers None for them, as Kafka's loaders ignore them.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from protocol.errors import DecodeError

CONTROL_KEY_VERSION = 0
END_TXN_MARKER_VERSION = 0
ABORT = 0
COMMIT = 1

_KEY = struct.Struct(">hh")
_VALUE = struct.Struct(">hi")


@dataclass(frozen=True, slots=True)
class EndTxnMarker:
    """A decoded COMMIT or ABORT marker record."""

    commit: bool
    coordinator_epoch: int


def encode_end_txn_marker(marker: EndTxnMarker) -> tuple[bytes, bytes]:
    """(key, value) of the marker's record, byte for byte as Kafka's `EndTransactionMarker` writes them."""
    key = _KEY.pack(CONTROL_KEY_VERSION, COMMIT if marker.commit else ABORT)
    return key, _VALUE.pack(END_TXN_MARKER_VERSION, marker.coordinator_epoch)


def control_type(key: bytes | None) -> int:
    """The control record type of a control batch's record (`ControlRecordType.parse`)."""
    if key is None or len(key) < _KEY.size:
        size = 0 if key is None else len(key)
        raise DecodeError(f"a control record key needs {_KEY.size} bytes, have {size}", path="ControlRecordType")
    return int(_KEY.unpack_from(key)[1])


def decode_end_txn_marker(key: bytes | None, value: bytes | None) -> EndTxnMarker | None:
    """The marker a control record holds, or None for a control record of another type."""
    kind = control_type(key)
    if kind not in (ABORT, COMMIT):
        return None
    if value is None or len(value) < _VALUE.size:
        size = 0 if value is None else len(value)
        raise DecodeError(f"an end transaction marker needs {_VALUE.size} bytes, have {size}", path="EndTxnMarker")
    return EndTxnMarker(commit=kind == COMMIT, coordinator_epoch=int(_VALUE.unpack_from(value)[1]))
