"""Transactional batches and transaction markers in `__consumer_offsets` (T36, T57, T66).

A TxnOffsetCommit's records are written as a transactional batch of the producer (producer id and epoch, base
sequence 0, the transactional attribute), never merged with another append; a transaction's end is a control
batch of the producer holding one COMMIT/ABORT record with Kafka's bytes. Reading the partition back (before and
after a restart) gives the records tagged with their producer and the markers in log order.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from broker.offsets_log import OFFSETS_TOPIC
from coordinator.offsets import OffsetAndMetadata
from coordinator.records import (
    CoordinatorRecord,
    TransactionalProducer,
    TransactionMarker,
    offset_commit_record,
)
from protocol.errors import ErrorCode
from protocol.records import NO_SEQUENCE, RecordBatch
from tests.broker.offsets_log_store import WALL_MS, LogStore

P1 = TransactionalProducer(producer_id=4000, producer_epoch=3)
P2 = TransactionalProducer(producer_id=5000, producer_epoch=0)


def commit(group: str, offset: int = 5) -> CoordinatorRecord:
    return offset_commit_record(
        group, "t", 0, OffsetAndMetadata(offset=offset, leader_epoch=-1, metadata="", commit_timestamp_ms=1_000)
    )


@pytest.fixture
def store(tmp_path: Path) -> Iterator[LogStore]:
    s = LogStore(tmp_path / "data", 1)
    yield s
    s.manager.close()


def _batches(store: LogStore) -> list[RecordBatch]:
    partition_log = store.manager.get(OFFSETS_TOPIC, 0)
    assert partition_log is not None
    return list(partition_log.iter_batches_from())


def _write_mixed(store: LogStore) -> list[ErrorCode]:
    outcomes: list[ErrorCode] = []
    store.append(0, [commit("plain-1")], outcomes.append)
    store.append(0, [commit("txn-a"), commit("txn-b")], outcomes.append, P1)
    store.append(0, [commit("txn-c")], outcomes.append, P1)
    store.append(0, [commit("plain-2")], outcomes.append)
    store.append(0, [commit("txn-d")], outcomes.append, P2)
    store.append_marker(0, TransactionMarker(P1.producer_id, P1.producer_epoch, 7, commit=True), outcomes.append)
    store.append_marker(0, TransactionMarker(P2.producer_id, P2.producer_epoch, 8, commit=False), outcomes.append)
    store.end_turn()
    return outcomes


def test_t57_transactional_appends_are_batches_of_their_producer_and_never_merged(store: LogStore) -> None:
    """T57: each transactional append is its own batch with the producer id and epoch, base sequence 0 and the
    transactional attribute (Kafka's coordinator runtime); plain appends around them keep group commit."""
    assert _write_mixed(store) == [ErrorCode.NONE] * 7
    batches = _batches(store)
    shape = [(b.producer_id, b.producer_epoch, b.is_transactional, b.is_control, len(b.records)) for b in batches]
    assert shape == [
        (-1, -1, False, False, 1),
        (P1.producer_id, 3, True, False, 2),
        (P1.producer_id, 3, True, False, 1),
        (-1, -1, False, False, 1),
        (P2.producer_id, 0, True, False, 1),
        (P1.producer_id, 3, True, True, 1),
        (P2.producer_id, 0, True, True, 1),
    ]
    assert [b.base_sequence for b in batches if b.is_transactional and not b.is_control] == [0, 0, 0]


def test_t36_a_marker_is_a_control_batch_with_kafkas_record_bytes(store: LogStore) -> None:
    """T36: key = int16 version 0 + int16 type (COMMIT 1, ABORT 0), value = int16 version 0 + int32 coordinator
    epoch; the control batch has no sequence and its record the write's timestamp."""
    _write_mixed(store)
    commit_marker, abort_marker = [b for b in _batches(store) if b.is_control]
    (record,) = commit_marker.records
    assert (record.key, record.value, record.headers) == (b"\x00\x00\x00\x01", b"\x00\x00\x00\x00\x00\x07", [])
    assert abort_marker.records[0].key == b"\x00\x00\x00\x00"
    assert abort_marker.records[0].value == b"\x00\x00\x00\x00\x00\x08"
    assert commit_marker.base_sequence == NO_SEQUENCE
    assert commit_marker.timestamp_of(record) == WALL_MS


def test_t66_reading_back_tags_records_with_their_producer_and_yields_markers_in_order(store: LogStore) -> None:
    """T66: the loader's input is the log in order: records (with the producer id of a transactional batch) and
    markers, the same after the logs are reopened."""
    _write_mixed(store)
    expected: list[tuple[str, int] | TransactionMarker] = [
        ("plain-1", -1),
        ("txn-a", P1.producer_id),
        ("txn-b", P1.producer_id),
        ("txn-c", P1.producer_id),
        ("plain-2", -1),
        ("txn-d", P2.producer_id),
        TransactionMarker(P1.producer_id, 3, 7, commit=True),
        TransactionMarker(P2.producer_id, 0, 8, commit=False),
    ]

    def entries() -> list[tuple[str, int] | TransactionMarker]:
        return [
            e if isinstance(e, TransactionMarker) else (e.key.group, e.producer_id)  # type: ignore[union-attr]
            for e in store.read_all(0)
        ]

    assert entries() == expected
    store.reopen()
    assert entries() == expected


def test_a_marker_for_a_partition_not_here_fails_alone(store: LogStore) -> None:
    """A marker append to a partition this broker does not have fails with NOT_LEADER_OR_FOLLOWER; the other
    appends of the turn are written."""
    outcomes: dict[str, ErrorCode] = {}
    store.append(0, [commit("g")], lambda e: outcomes.__setitem__("commit", e), P1)
    store.append_marker(7, TransactionMarker(1, 0, 0, commit=True), lambda e: outcomes.__setitem__("marker", e))
    store.end_turn()
    assert outcomes == {"commit": ErrorCode.NONE, "marker": ErrorCode.NOT_LEADER_OR_FOLLOWER}
