"""Compaction of logs that hold transactions, as Kafka's cleaner does it (T44): aborted transactional records are
removed and never supersede anything, nothing at or after the last stable offset is cleaned or counts as newer,
and markers are kept (with their aborted-transaction index entries) so the producer state replays the same after
a restart."""

from __future__ import annotations

from pathlib import Path

import pytest
from structlog.testing import capture_logs

from protocol.control_records import ControlRecordType, EndTxnMarker
from storage.cleaner import LogCleaner, clean
from storage.config import LogConfig
from storage.errors import KafkaStorageError
from storage.log_manager import LogManager
from storage.partition_log import PartitionLog
from storage.txn_index import AbortedTxn
from tests.storage.helpers import NOW, append, decode_all

COMMIT = EndTxnMarker(ControlRecordType.COMMIT, 0)
ABORT = EndTxnMarker(ControlRecordType.ABORT, 0)
CONFIG = LogConfig(segment_bytes=1_000, index_interval_bytes=256, cleanup_policy=("compact",))


def open_log(tmp_path: Path, recovery_point: int | None = None) -> PartitionLog:
    return PartitionLog(tmp_path / "t-0", CONFIG, now_ms=NOW, recovery_point=recovery_point)


def txn(log: PartitionLog, pid: int, seq: int, *ops: tuple[bytes, bytes]) -> None:
    append(log, list(ops), producer=(pid, 0, seq), transactional=True)


def end(log: PartitionLog, pid: int, marker: EndTxnMarker) -> None:
    log.append_end_txn_marker(pid, 0, marker, now_ms=NOW)


def kept(log: PartitionLog) -> list[tuple[int, bytes | None, bytes | None]]:
    """(offset, key, value) of every data record a consumer reading from the start gets."""
    return [
        (offset, record.key, record.value)
        for batch in decode_all(log.read(log.log_start_offset, 1 << 30))
        if not batch.is_control
        for offset, _, record in batch.absolute()
    ]


def batch_kinds(log: PartitionLog) -> list[tuple[int, str]]:
    """(base offset, kind) of every batch: ``data``, ``empty`` (a producer's kept last batch) or ``marker``."""
    return [
        (b.base_offset, "marker" if b.is_control else "data" if b.records else "empty")
        for b in decode_all(log.read(log.log_start_offset, 1 << 30))
    ]


def build_aborted_and_committed(log: PartitionLog) -> None:
    append(log, [(b"k", b"committed"), (b"j", b"1")])  # 0-1
    txn(log, 7, 0, (b"k", b"aborted"), (b"x", b"aborted"))  # 2-3
    end(log, 7, ABORT)  # 4
    txn(log, 8, 0, (b"j", b"2"))  # 5
    end(log, 8, COMMIT)  # 6
    log.roll(now_ms=NOW)


def test_t44_aborted_records_are_removed_and_supersede_nothing_markers_are_kept(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    build_aborted_and_committed(log)
    result = clean(log, NOW)
    # k keeps its committed value: the aborted write at 2 is gone and never counted as newer; j's committed
    # transactional write supersedes the plain one.
    assert kept(log) == [(0, b"k", b"committed"), (5, b"j", b"2")]
    assert result.stats.aborted_removed == 2
    # The aborted batch stays as an empty batch (producer 7's last data batch, as Kafka's cleaner keeps it), and
    # both markers are kept.
    assert batch_kinds(log) == [(0, "data"), (2, "empty"), (4, "marker"), (5, "data"), (6, "marker")]
    assert log.aborted_transactions(0, 10) == [AbortedTxn(7, 2, 4, 5)]


def test_t44_cleaned_transactions_replay_the_same_after_a_restart_or_a_crash(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    build_aborted_and_committed(log)
    clean(log, NOW)
    producers = log.active_producers()
    log.flush()
    point = log.log_end_offset
    log.close()
    for recovery_point in (point, None):  # a clean restart trusts the cleaned index; a crash rebuilds it
        again = open_log(tmp_path, recovery_point)
        assert again.aborted_transactions(0, 10) == [AbortedTxn(7, 2, 4, 5)]
        assert again.active_producers() == producers
        assert again.last_stable_offset() == again.log_end_offset
        assert again.quarantined_files() == []
        again.close()


def test_t44_records_of_an_open_transaction_supersede_nothing(tmp_path: Path) -> None:
    """The open transaction may still abort: its write of k must not cost k its committed value."""
    log = open_log(tmp_path)
    append(log, [(b"k", b"committed")])  # 0
    log.roll(now_ms=NOW)
    txn(log, 7, 0, (b"k", b"pending"))  # 1, open: the LSO
    clean(log, NOW)
    end(log, 7, ABORT)
    log.roll(now_ms=NOW)
    clean(log, NOW)
    assert kept(log) == [(0, b"k", b"committed")]


def test_t44_nothing_at_or_after_the_last_stable_offset_is_cleaned(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    append(log, [(b"k", b"v1")])  # 0
    txn(log, 7, 0, (b"k", b"v2"))  # 1, open
    log.roll(now_ms=NOW)
    append(log, [(b"k", b"v3")])  # 2
    log.roll(now_ms=NOW)
    result = clean(log, NOW)
    assert result.clean_end_offset == 0  # the segment holding the LSO (1) is not cleanable
    assert kept(log) == [(0, b"k", b"v1"), (1, b"k", b"v2"), (2, b"k", b"v3")]
    end(log, 7, COMMIT)  # 3
    log.roll(now_ms=NOW)
    clean(log, NOW)
    assert kept(log) == [(2, b"k", b"v3")]
    assert batch_kinds(log) == [(1, "empty"), (2, "data"), (3, "marker")]


def test_a_log_whose_last_stable_offset_cannot_be_read_is_skipped_not_the_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The LSO may need the producer state replayed from the files, which can fail (a disk error): that log is
    logged and skipped, the other compacted logs are cleaned."""
    manager = LogManager([tmp_path], LogConfig(segment_bytes=1_000), now_ms=NOW)
    manager.create_topic("table", 2, {"cleanup.policy": "compact"}, now_ms=NOW)
    for log in manager.logs().values():
        for n in range(10):
            append(log, [(b"k%d" % (n % 3), b"v%d" % n)])
        log.roll(now_ms=NOW)
    broken = manager.get("table", 1)
    original = PartitionLog.last_stable_offset

    def last_stable_offset(self: PartitionLog) -> int:
        if self is broken:
            raise KafkaStorageError("replay failed: EIO")
        return original(self)

    monkeypatch.setattr(PartitionLog, "last_stable_offset", last_stable_offset)
    with capture_logs() as logs:
        results = LogCleaner().clean_all(manager, NOW)
    assert sorted(results) == [("table", 0)]
    assert [(e["event"], e["partition"]) for e in logs if e["event"] == "log_cleaning_failed"] == [
        ("log_cleaning_failed", 1)
    ]
    manager.close()
