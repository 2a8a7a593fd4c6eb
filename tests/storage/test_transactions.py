"""Transactions in the partition log: markers, the last stable offset, the aborted-transaction index, and how all
of it survives a restart, a crash and a damaged index (T36-T42)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from protocol.control_records import ControlRecordType, EndTxnMarker, decode_end_txn_marker
from protocol.records import peek_batch_header
from storage.config import LogConfig
from storage.damage import QUARANTINE_DIR
from storage.errors import (
    InvalidProducerEpochError,
    InvalidTxnStateError,
    TransactionCoordinatorFencedError,
)
from storage.partition_log import PartitionLog, SegmentSlice
from storage.producer_state import ProducerSummary
from storage.txn_index import AbortedTxn
from tests.storage.helpers import decode_all, make_batch, offsets_of, producer_batch

COMMIT = EndTxnMarker(ControlRecordType.COMMIT, 0)
ABORT = EndTxnMarker(ControlRecordType.ABORT, 0)
SMALL = LogConfig(segment_bytes=2_000, index_interval_bytes=300)


def open_log(tmp_path: Path, *, recovery_point: int | None = None) -> PartitionLog:
    return PartitionLog(tmp_path / "t-0", SMALL, now_ms=0, recovery_point=recovery_point)


def txn(log: PartitionLog, pid: int, seq: int, *values: bytes, epoch: int = 0) -> int:
    """A transactional batch of ``values``; returns its base offset."""
    data = producer_batch(*values, producer=(pid, epoch, seq), transactional=True)
    return log.append(data, now_ms=0).base_offset


def end(log: PartitionLog, pid: int, marker: EndTxnMarker, *, epoch: int = 0) -> int:
    return log.append_end_txn_marker(pid, epoch, marker, now_ms=5).base_offset


# --- markers -----------------------------------------------------------------------------------------------------


def test_t36_a_marker_is_a_control_batch_with_kafkas_record(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    txn(log, 7, 0, b"a")
    offset = end(log, 7, EndTxnMarker(ControlRecordType.COMMIT, 3), epoch=0)
    [batch] = decode_all(log.read(offset, 10_000))
    assert (batch.base_offset, batch.is_control, batch.is_transactional) == (1, True, True)
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence, batch.partition_leader_epoch) == (7, 0, -1, 0)
    assert decode_end_txn_marker(batch.records[0]) == EndTxnMarker(ControlRecordType.COMMIT, 3)


def test_t37_a_marker_with_an_old_producer_epoch_is_refused_and_not_written(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    txn(log, 7, 0, b"a", epoch=3)
    with pytest.raises(InvalidProducerEpochError):
        end(log, 7, COMMIT, epoch=2)
    assert log.log_end_offset == 1
    assert log.last_stable_offset() == 0


def test_t37_a_marker_from_an_older_coordinator_is_fenced(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    txn(log, 7, 0, b"a")
    end(log, 7, EndTxnMarker(ControlRecordType.COMMIT, 5))
    txn(log, 7, 1, b"b")
    with pytest.raises(TransactionCoordinatorFencedError):
        end(log, 7, EndTxnMarker(ControlRecordType.ABORT, 4))
    assert log.log_end_offset == 3


def test_t39_plain_write_while_the_transaction_is_open_is_invalid_txn_state(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    txn(log, 7, 0, b"a")
    with pytest.raises(InvalidTxnStateError):
        log.append(producer_batch(b"b", producer=(7, 0, 1)), now_ms=0)


def test_a_retried_batch_is_answered_with_its_original_offsets_and_not_written(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    data = producer_batch(b"a", b"b", producer=(7, 0, 0), transactional=True)
    first = log.append(data, now_ms=0)
    retry = log.append(data, now_ms=0)
    assert (retry.base_offset, retry.last_offset, retry.duplicate) == (0, 1, True)
    assert not first.duplicate and log.log_end_offset == 2


def test_a_retried_batch_is_answered_with_its_original_timestamp_as_log_append_time(tmp_path: Path) -> None:
    """Kafka's UnifiedLog.append answers a duplicate with the remembered batch's timestamp (its max timestamp) as
    the log append time, even on a CreateTime topic, where a first write answers -1; across a restart too."""
    log = open_log(tmp_path)
    data = producer_batch(b"a", producer=(7, 0, 0), timestamp=1_234)
    assert log.append(data, now_ms=0).log_append_time_ms == -1
    assert log.append(data, now_ms=0).log_append_time_ms == 1_234
    log.flush()
    log.close()
    assert open_log(tmp_path).append(data, now_ms=0).log_append_time_ms == 1_234


# --- last stable offset and the index -----------------------------------------------------------------------------


def test_t41_the_lso_is_the_first_offset_of_the_oldest_open_transaction(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    log.append(make_batch(2), now_ms=0)  # 0-1, not transactional
    assert log.last_stable_offset() == 2
    a = txn(log, 7, 0, b"a1")  # 2
    log.append(make_batch(1), now_ms=0)  # 3
    b = txn(log, 8, 0, b"b1")  # 4
    assert (a, b, log.last_stable_offset(), log.high_watermark) == (2, 4, 2, 5)
    end(log, 7, COMMIT)  # 5
    assert log.last_stable_offset() == 4
    end(log, 8, ABORT)  # 6
    assert log.last_stable_offset() == log.log_end_offset == 7


def test_t40_an_abort_is_indexed_with_the_lso_at_the_time_and_committed_ones_are_not(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    txn(log, 7, 0, b"a1")  # 0
    txn(log, 8, 0, b"b1")  # 1
    txn(log, 7, 1, b"a2")  # 2
    end(log, 7, ABORT)  # 3: pid 8's transaction (from 1) still holds the LSO
    end(log, 8, COMMIT)  # 4
    txn(log, 9, 0, b"c1")  # 5
    end(log, 9, ABORT)  # 6: nothing else open, the LSO after it is 7
    assert log.segments()[0].txn_index.entries == [AbortedTxn(7, 0, 3, 1), AbortedTxn(9, 5, 6, 7)]
    assert (tmp_path / "t-0" / "00000000000000000000.txnindex").stat().st_size == 2 * 34


def test_t42_aborted_transactions_overlapping_a_range_across_segments(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    txn(log, 7, 0, b"a1")  # 0
    end(log, 7, ABORT)  # 1
    log.roll(now_ms=0)
    txn(log, 8, 0, b"b1")  # 2
    log.roll(now_ms=0)
    log.append(make_batch(1), now_ms=0)  # 3
    end(log, 8, ABORT)  # 4, in the third segment; the transaction started in the second
    assert log.aborted_transactions(0, 5) == [AbortedTxn(7, 0, 1, 2), AbortedTxn(8, 2, 4, 5)]
    assert log.aborted_transactions(2, 3) == [AbortedTxn(8, 2, 4, 5)]
    assert log.aborted_transactions(3, 4) == [AbortedTxn(8, 2, 4, 5)]  # a transaction around the range
    assert log.aborted_transactions(5, 6) == []


def test_t42_read_committed_stops_at_the_lso_and_lists_the_aborted_transactions_it_returns(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    txn(log, 7, 0, b"a1")  # 0
    end(log, 7, ABORT)  # 1
    log.append(make_batch(1), now_ms=0)  # 2
    txn(log, 8, 0, b"b1")  # 3: open, the LSO
    log.append(make_batch(1), now_ms=0)  # 4
    read = log.read_committed(0, 1 << 20)
    try:
        data = b"".join(piece_bytes(piece) for piece in read.slices)
    finally:
        for piece in read.slices:
            piece.close()
    assert offsets_of(data) == [0, 1, 2]  # the marker is returned (consumers skip control batches)
    assert (read.last_stable_offset, read.aborted) == (3, [AbortedTxn(7, 0, 1, 2)])
    beyond = log.read_committed(3, 1 << 20)
    assert (beyond.slices, beyond.aborted) == ([], [])


def piece_bytes(piece: SegmentSlice) -> bytes:
    return os.pread(piece.fd, piece.length, piece.position)


def test_t69_active_producers(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    log.append(producer_batch(b"x", b"y", producer=(3, 1, 0), timestamp=50), now_ms=0)
    txn(log, 7, 0, b"a")
    assert log.active_producers() == [ProducerSummary(3, 1, 1, 50, -1, -1), ProducerSummary(7, 0, 0, 1_000, -1, 2)]
    assert log.has_ongoing_transaction(7, 0) and not log.has_ongoing_transaction(3, 1)


# --- restarts, crashes and damage ---------------------------------------------------------------------------------


def build_transactions(tmp_path: Path) -> PartitionLog:
    """Two segments: an aborted and a committed transaction, then one left open (no marker yet)."""
    log = open_log(tmp_path)
    txn(log, 7, 0, b"a1")  # 0
    txn(log, 8, 0, b"b1")  # 1
    end(log, 7, ABORT)  # 2
    log.roll(now_ms=0)
    end(log, 8, COMMIT)  # 3
    txn(log, 9, 0, b"c1")  # 4: open
    log.append(make_batch(1), now_ms=0)  # 5
    return log


def restart(log: PartitionLog, tmp_path: Path) -> PartitionLog:
    """A clean shutdown (flush, close) and the next start, from the checkpointed recovery point."""
    log.flush()
    point = log.log_end_offset
    log.close()
    return open_log(tmp_path, recovery_point=point)


def test_an_open_transaction_survives_a_clean_restart_and_completes_after_it(tmp_path: Path) -> None:
    log = build_transactions(tmp_path)
    producers = log.active_producers()
    again = restart(log, tmp_path)
    assert again.last_stable_offset() == 4
    assert again.active_producers() == producers
    assert again.aborted_transactions(0, 10) == [AbortedTxn(7, 0, 2, 1)]
    end(again, 9, ABORT)  # 6
    assert again.last_stable_offset() == 7
    assert again.aborted_transactions(0, 10) == [AbortedTxn(7, 0, 2, 1), AbortedTxn(9, 4, 6, 7)]


def test_kill_9_mid_transaction_keeps_it_open_until_its_marker(tmp_path: Path) -> None:
    """No close, no flush, no recovery point: everything is scanned, the transaction is still open (LSO held)."""
    build_transactions(tmp_path)
    crashed = open_log(tmp_path, recovery_point=None)
    assert crashed.last_stable_offset() == 4
    assert crashed.has_ongoing_transaction(9, 0)
    assert crashed.aborted_transactions(0, 10) == [AbortedTxn(7, 0, 2, 1)]
    end(crashed, 9, COMMIT)
    assert crashed.last_stable_offset() == crashed.log_end_offset


def test_a_damaged_txn_index_is_quarantined_and_rebuilt_from_the_log(tmp_path: Path) -> None:
    log = build_transactions(tmp_path)
    index = tmp_path / "t-0" / "00000000000000000000.txnindex"
    log.flush()
    index.write_bytes(index.read_bytes()[:-3])  # a torn entry
    again = restart(log, tmp_path)
    [moved] = again.quarantined_files()
    assert moved.original == index.name and "multiple" in moved.reason
    assert Path(moved.moved_to).parent == tmp_path / QUARANTINE_DIR / "t-0"
    assert again.aborted_transactions(0, 10) == [AbortedTxn(7, 0, 2, 1)]
    assert index.read_bytes() == AbortedTxn(7, 0, 2, 1).encode()


def test_a_missing_txn_index_is_rebuilt(tmp_path: Path) -> None:
    log = build_transactions(tmp_path)
    index = tmp_path / "t-0" / "00000000000000000000.txnindex"
    log.flush()
    index.unlink()
    again = restart(log, tmp_path)
    assert again.aborted_transactions(0, 10) == [AbortedTxn(7, 0, 2, 1)]
    assert index.exists() and not again.quarantined_files()


def test_truncation_below_a_marker_reopens_its_transaction(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    txn(log, 7, 0, b"a1")  # 0
    end(log, 7, ABORT)  # 1
    log.truncate_to(1)
    assert log.last_stable_offset() == 0 and log.aborted_transactions(0, 10) == []
    assert not (tmp_path / "t-0" / "00000000000000000000.txnindex").exists()
    end(log, 7, COMMIT)
    assert log.last_stable_offset() == 2


def test_the_lso_never_falls_below_the_log_start(tmp_path: Path) -> None:
    """A transaction whose first batch retention deleted still holds the LSO, at the log start (Kafka's clamp)."""
    log = open_log(tmp_path)
    txn(log, 7, 0, b"a1")  # 0
    log.roll(now_ms=0)
    log.append(make_batch(1), now_ms=0)  # 1
    log.delete_segments_before(1, now_ms=0)
    assert (log.log_start_offset, log.last_stable_offset()) == (1, 1)


def test_a_control_batch_header_is_what_kafka_reads(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    txn(log, 7, 0, b"a1")
    end(log, 7, COMMIT)
    segment = log.segments()[0]
    [(_, first), (position, control)] = list(segment.iter_headers())
    assert not first.is_control and control.is_control and control.is_transactional
    assert peek_batch_header(segment.read(position, control.size)) == control
