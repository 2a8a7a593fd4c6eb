"""Producer state when the log start moves past a producer's batches (DeleteRecords, retention), as Kafka 4.4 keeps it.

At once nothing is forgotten: UnifiedLog.maybeIncrementLogStartOffset only calls
ProducerStateManager.onLogStartOffsetIncremented, which drops no producer, so epochs, sequences, the last five
batches (a retry of a deleted batch is still a duplicate) and open transactions stay; the last stable offset is the
first unstable offset raised to the log start (maybeIncrementFirstUnstableOffset).

At the next load the state comes back only from what lies above the log start: ProducerStateManager.
truncateAndReload deletes the snapshots at or below the log start, and UnifiedLog.rebuildProducerState replays the
batches from max(snapshot, log start) on. A producer whose batches all lie below the log start is forgotten unless
a snapshot above the log start still holds it, and an open transaction whose first batch lies below it starts again
at its first batch above it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from protocol.control_records import ControlRecordType, EndTxnMarker
from storage.config import LogConfig
from storage.errors import InvalidTxnStateError, OutOfOrderSequenceError
from storage.partition_log import PartitionLog
from tests.storage.helpers import make_batch, producer_batch

ONE_SEGMENT = LogConfig(segment_bytes=1_000_000, index_interval_bytes=300)
ABORT = EndTxnMarker(ControlRecordType.ABORT, 0)
COMMIT = EndTxnMarker(ControlRecordType.COMMIT, 0)
P, Q, T = 3, 4, 7


def open_log(tmp_path: Path, *, recovery_point: int | None = None) -> PartitionLog:
    return PartitionLog(tmp_path / "t-0", ONE_SEGMENT, now_ms=0, recovery_point=recovery_point)


def idempotent(log: PartitionLog, pid: int, seq: int, value: bytes = b"v") -> tuple[int, bool]:
    result = log.append(producer_batch(value, producer=(pid, 0, seq)), now_ms=0)
    return result.base_offset, result.duplicate


def txn(log: PartitionLog, pid: int, seq: int) -> int:
    return log.append(producer_batch(b"t", producer=(pid, 0, seq), transactional=True), now_ms=0).base_offset


def plain(log: PartitionLog) -> int:
    return log.append(make_batch(1), now_ms=0).base_offset


def crash(log: PartitionLog, tmp_path: Path) -> PartitionLog:
    """What kill -9 leaves: no snapshot at close, no recovery point (every segment is recovered)."""
    return open_log(tmp_path)


def clean_restart(log: PartitionLog, tmp_path: Path) -> PartitionLog:
    log.flush()
    point = log.log_end_offset
    log.close()  # writes a snapshot at the log end
    return open_log(tmp_path, recovery_point=point)


def producers(log: PartitionLog) -> dict[int, tuple[int, int]]:
    """DescribeProducers' view: producer id -> (last sequence, current transaction start offset)."""
    return {p.producer_id: (p.last_sequence, p.current_txn_start_offset) for p in log.active_producers()}


def test_delete_records_forgets_nothing_at_once(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    assert [idempotent(log, P, seq)[0] for seq in range(3)] == [0, 1, 2]
    assert txn(log, T, 0) == 3
    plain(log)  # 4
    log.delete_records(5)
    assert producers(log) == {P: (2, -1), T: (0, 3)}
    retry = log.append(producer_batch(b"v", producer=(P, 0, 2)), now_ms=0)
    assert (retry.duplicate, retry.base_offset, retry.log_start_offset) == (True, 2, 5)  # below the log start
    with pytest.raises(OutOfOrderSequenceError):
        idempotent(log, P, 5)
    with pytest.raises(InvalidTxnStateError):  # T's transaction is still open
        idempotent(log, T, 1)
    assert log.last_stable_offset() == 5  # its first offset (3) raised to the log start
    assert idempotent(log, P, 3) == (5, False)


def test_after_a_crash_the_producers_below_the_log_start_are_forgotten(tmp_path: Path) -> None:
    """No snapshot above the log start: the replay starts at the log start, in the middle of the segment."""
    log = open_log(tmp_path)
    for seq in range(3):
        idempotent(log, P, seq)  # 0..2
    idempotent(log, Q, 0)  # 3
    idempotent(log, Q, 1)  # 4
    log.delete_records(3)
    reopened = crash(log, tmp_path)
    assert producers(reopened) == {Q: (1, -1)}
    assert idempotent(reopened, P, 2) == (5, False)  # P is unknown: its retry is written again, as Kafka writes it
    assert idempotent(reopened, Q, 1) == (4, True)


def test_a_snapshot_above_the_log_start_keeps_them(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    for seq in range(3):
        idempotent(log, P, seq)
    idempotent(log, Q, 0)
    log.delete_records(3)
    reopened = clean_restart(log, tmp_path)  # the snapshot at the log end (4) holds P
    assert producers(reopened) == {P: (2, -1), Q: (0, -1)}
    assert idempotent(reopened, P, 2) == (2, True)


def test_a_snapshot_at_the_log_start_is_deleted_not_loaded(tmp_path: Path) -> None:
    """DeleteRecords up to the log end, then a clean shutdown: its snapshot lies at the log start, which Kafka's
    truncateAndReload deletes, so every producer is forgotten."""
    log = open_log(tmp_path)
    for seq in range(2):
        idempotent(log, P, seq)
    log.delete_records(2)
    reopened = clean_restart(log, tmp_path)
    assert producers(reopened) == {}
    assert not (tmp_path / "t-0" / f"{2:020d}.snapshot").exists()
    assert idempotent(reopened, P, 7) == (2, False)  # an unknown producer may start at any sequence


def test_retention_past_the_latest_snapshot_forgets_the_producers_of_deleted_segments(tmp_path: Path) -> None:
    """The roll's snapshot lies at the new segment's base, which becomes the log start."""
    log = open_log(tmp_path)
    idempotent(log, P, 0)  # 0
    log.roll(now_ms=0)  # snapshot at 1
    idempotent(log, Q, 0)  # 1
    log.delete_segments_before(1, now_ms=0)
    assert log.log_start_offset == 1 and producers(log) == {P: (0, -1), Q: (0, -1)}
    assert producers(crash(log, tmp_path)) == {Q: (0, -1)}


def test_an_open_transaction_started_below_the_log_start_restarts_at_its_first_batch_above(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    assert txn(log, T, 0) == 0
    plain(log)  # 1
    assert txn(log, T, 1) == 2
    log.delete_records(1)
    assert (producers(log), log.last_stable_offset()) == ({T: (1, 0)}, 1)
    reopened = crash(log, tmp_path)
    assert (producers(reopened), reopened.last_stable_offset()) == ({T: (1, 2)}, 2)
    reopened.append_end_txn_marker(T, 0, COMMIT, now_ms=0)
    assert (producers(reopened), reopened.last_stable_offset()) == ({T: (1, -1)}, 4)


def test_the_aborted_transaction_index_is_still_rebuilt_from_the_whole_segment(tmp_path: Path) -> None:
    """The replay into the state starts at the log start, but a segment whose .txnindex must be rebuilt is read
    from its start: an abort above the log start of a transaction that began below it keeps its entry."""
    log = open_log(tmp_path)
    assert txn(log, T, 0) == 0
    plain(log)  # 1
    log.append_end_txn_marker(T, 0, ABORT, now_ms=0)  # 2
    plain(log)  # 3
    log.delete_records(1)
    reopened = crash(log, tmp_path)
    assert [(a.producer_id, a.first_offset, a.last_offset) for a in reopened.aborted_transactions(1, 4)] == [(T, 0, 2)]
    assert producers(reopened) == {T: (-1, -1)}  # the marker above the log start is replayed; it closes nothing
    assert reopened.last_stable_offset() == 4
