"""Compaction of transactional batches (T44, Kafka's LogCleaner with its transaction metadata).

A compacted log written by transactions (`__consumer_offsets` with TxnOffsetCommit, or a data topic) must keep
meaning what it meant: a record of an aborted transaction never hides an older committed value of its key (it is
not mapped, and its batch goes once the ABORT marker is seen); a record of a transaction still open at the end of
the pass is kept whole and hides nothing (its outcome is not known yet); a committed transaction's records
compact like any others. Markers stay.
"""

from __future__ import annotations

from pathlib import Path

from protocol.control_records import ControlRecordType, EndTxnMarker, encode_end_txn_marker_batch
from protocol.records import Record, RecordBatch, encode_batch
from storage.cleaner import clean
from storage.config import LogConfig
from storage.partition_log import AppendOrigin, PartitionLog
from tests.storage.helpers import NOW, decode_all


def open_log(directory: Path) -> PartitionLog:
    config = LogConfig(segment_bytes=100_000, index_interval_bytes=256, cleanup_policy=("compact",))
    return PartitionLog(directory, config, now_ms=NOW)


def write(log: PartitionLog, key: bytes, value: bytes | None, producer_id: int = -1) -> None:
    batch = RecordBatch.from_records(
        [Record(offset_delta=0, timestamp_delta=0, key=key, value=value)],
        base_timestamp=NOW,
        producer_id=producer_id,
        producer_epoch=0 if producer_id >= 0 else -1,
        base_sequence=0 if producer_id >= 0 else -1,
        is_transactional=producer_id >= 0,
    )
    log.append(encode_batch(batch), now_ms=NOW, origin=AppendOrigin.COORDINATOR)


def end(log: PartitionLog, producer_id: int, commit: bool) -> None:
    marker = EndTxnMarker(ControlRecordType.COMMIT if commit else ControlRecordType.ABORT, coordinator_epoch=0)
    data = encode_end_txn_marker_batch(marker, producer_id=producer_id, producer_epoch=0, timestamp=NOW)
    log.append(data, now_ms=NOW, origin=AppendOrigin.COORDINATOR)


def contents(log: PartitionLog) -> list[tuple[int, bytes | None, bytes | None, int, bool]]:
    """(offset, key, value, producer id, control) of every record left."""
    return [
        (offset, record.key, record.value, batch.producer_id, batch.is_control)
        for batch in decode_all(log.read(log.log_start_offset, 1 << 30))
        for offset, _, record in batch.absolute()
    ]


def compacted(log: PartitionLog) -> list[tuple[int, bytes | None, bytes | None, int, bool]]:
    log.roll(now_ms=NOW)  # everything in closed segments: the whole log is cleanable
    clean(log, NOW)
    return contents(log)


def test_t44_an_aborted_record_hides_nothing_and_goes(tmp_path: Path) -> None:
    """T44: the aborted value of `k` is not mapped, so the committed one before it stays; the aborted batch is
    removed; the marker stays."""
    log = open_log(tmp_path / "t-0")
    write(log, b"k", b"committed")
    write(log, b"k", b"aborted", producer_id=1)
    end(log, 1, commit=False)
    left = compacted(log)
    assert [(o, k, v) for o, k, v, _, control in left if not control] == [(0, b"k", b"committed")]
    assert [(o, pid) for o, _, _, pid, control in left if control] == [(2, 1)]
    log.close()


def test_t44_an_open_transaction_is_kept_whole_and_hides_nothing(tmp_path: Path) -> None:
    """T44: a transaction with no marker yet keeps its records (they may still commit) and does not supersede the
    value before it (they may still abort); a later plain value of its key is kept too."""
    log = open_log(tmp_path / "t-0")
    write(log, b"k", b"before")
    write(log, b"k", b"open", producer_id=2)
    write(log, b"j", b"open-j", producer_id=2)
    write(log, b"j", b"after")
    assert [(o, v) for o, _, v, _, _ in compacted(log)] == [(0, b"before"), (1, b"open"), (2, b"open-j"), (3, b"after")]
    end(log, 2, commit=True)  # its marker arrives: the next pass compacts as for any committed record
    assert [(o, v) for o, _, v, _, control in compacted(log) if not control] == [(1, b"open"), (3, b"after")]
    log.close()


def test_t44_a_committed_transaction_compacts_like_plain_records(tmp_path: Path) -> None:
    """T44: committed transactional records supersede older values and are superseded by later ones."""
    log = open_log(tmp_path / "t-0")
    write(log, b"k", b"old")
    write(log, b"k", b"txn", producer_id=3)
    write(log, b"j", b"txn-j", producer_id=3)
    end(log, 3, commit=True)
    write(log, b"j", b"newer")
    left = compacted(log)
    assert [(o, k, v) for o, k, v, _, control in left if not control] == [(1, b"k", b"txn"), (4, b"j", b"newer")]
    log.close()


def test_t44_an_abort_after_a_pass_removes_the_batch_kept_while_open(tmp_path: Path) -> None:
    """A transaction open during one pass (kept whole) that aborts later is removed by the next pass, and the
    committed value it never hid is still there."""
    log = open_log(tmp_path / "t-0")
    write(log, b"k", b"committed")
    write(log, b"k", b"doomed", producer_id=4)
    compacted(log)
    end(log, 4, commit=False)
    left = compacted(log)
    assert [(o, v) for o, _, v, _, control in left if not control] == [(0, b"committed")]
    log.close()
