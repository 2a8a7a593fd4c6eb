"""End-transaction markers (control batches) byte for byte as Kafka 4.4 writes them (T36).

The golden hex strings were produced by Kafka 4.4.0's own ``MemoryRecords.withEndTransactionMarker`` (the
kafka-clients jar of the pinned reference broker), so a marker written here is one a Kafka consumer, the dump
tool and Kafka's log cleaner read as theirs.
"""

from __future__ import annotations

import pytest

from protocol.control_records import (
    ControlRecordType,
    EndTxnMarker,
    decode_end_txn_marker,
    encode_end_txn_marker_batch,
)
from protocol.errors import DecodeError
from protocol.records import Record, decode_batch, peek_batch_header

#: MemoryRecords.withEndTransactionMarker(42, 1700000000123, 7, 1234, (short) 5, COMMIT, coordinatorEpoch 9)
KAFKA_COMMIT = bytes.fromhex(
    "000000000000002a00000042000000070284c8af6c0030000000000000018bcfe5687b0000018bcfe5687b"
    "00000000000004d20005ffffffff000000012000000008000000010c00000000000900"
)
#: MemoryRecords.withEndTransactionMarker(0, 1700000000123, 0, 1234, (short) 5, ABORT, coordinatorEpoch 0)
KAFKA_ABORT = bytes.fromhex(
    "0000000000000000000000420000000002fe4022eb0030000000000000018bcfe5687b0000018bcfe5687b"
    "00000000000004d20005ffffffff000000012000000008000000000c00000000000000"
)


def test_t36_commit_marker_is_kafkas_exact_bytes() -> None:
    data = encode_end_txn_marker_batch(
        EndTxnMarker(ControlRecordType.COMMIT, 9),
        producer_id=1234,
        producer_epoch=5,
        timestamp=1_700_000_000_123,
        base_offset=42,
        partition_leader_epoch=7,
    )
    assert data == KAFKA_COMMIT


def test_t36_abort_marker_is_kafkas_exact_bytes() -> None:
    data = encode_end_txn_marker_batch(
        EndTxnMarker(ControlRecordType.ABORT, 0),
        producer_id=1234,
        producer_epoch=5,
        timestamp=1_700_000_000_123,
        partition_leader_epoch=0,
    )
    assert data == KAFKA_ABORT


def test_t36_marker_batch_is_control_and_transactional_without_a_sequence() -> None:
    header = peek_batch_header(KAFKA_COMMIT)
    assert (header.is_control, header.is_transactional, header.base_sequence) == (True, True, -1)
    assert (header.producer_id, header.producer_epoch, header.record_count) == (1234, 5, 1)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (KAFKA_COMMIT, EndTxnMarker(ControlRecordType.COMMIT, 9)),
        (KAFKA_ABORT, EndTxnMarker(ControlRecordType.ABORT, 0)),
    ],
)
def test_t36_decode_reads_kafkas_markers(data: bytes, expected: EndTxnMarker) -> None:
    [record] = decode_batch(data)[0].records
    assert decode_end_txn_marker(record) == expected


@pytest.mark.parametrize(
    ("key", "value", "reason"),
    [
        (None, b"\x00\x00\x00\x00\x00\x00", "key"),
        (b"\x00\x00\x00", b"\x00\x00\x00\x00\x00\x00", "key"),
        (b"\xff\xff\x00\x01", b"\x00\x00\x00\x00\x00\x00", "version"),
        (b"\x00\x00\x00\x05", b"\x00\x00\x00\x00\x00\x00", "type"),
        (b"\x00\x00\x00\x01", None, "value"),
        (b"\x00\x00\x00\x01", b"\x00\x00\x00\x00\x00", "value"),
        (b"\x00\x00\x00\x01", b"\xff\xff\x00\x00\x00\x00", "version"),
    ],
)
def test_a_malformed_marker_is_a_decode_error_never_a_crash(
    key: bytes | None, value: bytes | None, reason: str
) -> None:
    record = Record(offset_delta=0, timestamp_delta=0, key=key, value=value)
    with pytest.raises(DecodeError, match=reason):
        decode_end_txn_marker(record)


def test_a_newer_marker_value_version_with_more_bytes_is_read_by_its_known_prefix() -> None:
    """Kafka reads a newer value version by the fields it knows (ControlRecordUtils / EndTransactionMarker)."""
    record = Record(offset_delta=0, timestamp_delta=0, key=b"\x00\x00\x00\x00", value=b"\x00\x01\x00\x00\x00\x03\xaa")
    assert decode_end_txn_marker(record) == EndTxnMarker(ControlRecordType.ABORT, 3)
