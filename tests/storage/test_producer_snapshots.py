"""Producer state snapshots (Kafka's ``<offset>.snapshot`` files): written when a segment rolls and at a clean
shutdown, loaded at the next start so only the batches after the snapshot are replayed; stale ones (beyond the
log end) deleted, damaged ones quarantined (Decision 9) and the state rebuilt from the log."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import crc32c
import pytest
from structlog.testing import capture_logs

from protocol.control_records import ControlRecordType, EndTxnMarker
from storage.config import LogConfig
from storage.damage import QUARANTINE_DIR
from storage.partition_log import PartitionLog
from tests.storage.helpers import make_batch, producer_batch

COMMIT = EndTxnMarker(ControlRecordType.COMMIT, 0)
ABORT = EndTxnMarker(ControlRecordType.ABORT, 0)
CONFIG = LogConfig(segment_bytes=100_000, index_interval_bytes=300)
_ENTRY = struct.Struct(">qhiqiqiq")


def open_log(tmp_path: Path, *, recovery_point: int | None = None) -> PartitionLog:
    return PartitionLog(tmp_path / "t-0", CONFIG, now_ms=0, recovery_point=recovery_point)


def snapshot_path(tmp_path: Path, offset: int) -> Path:
    return tmp_path / "t-0" / f"{offset:020d}.snapshot"


def txn(log: PartitionLog, pid: int, seq: int, value: bytes, *, epoch: int = 0) -> int:
    return log.append(producer_batch(value, producer=(pid, epoch, seq), transactional=True), now_ms=0).base_offset


def idempotent(log: PartitionLog, pid: int, seq: int, count: int = 1) -> int:
    values = [b"v%d" % i for i in range(count)]
    return log.append(producer_batch(*values, producer=(pid, 0, seq), timestamp=77), now_ms=0).base_offset


def restart(log: PartitionLog, tmp_path: Path) -> PartitionLog:
    """A clean shutdown (flush, close) and the next start, from the checkpointed recovery point."""
    log.flush()
    point = log.log_end_offset
    log.close()
    return open_log(tmp_path, recovery_point=point)


def rebuilt(logs: list[dict[str, Any]]) -> dict[str, Any]:
    [event] = [e for e in logs if e["event"] == "producer_state.rebuilt"]
    return event


def test_a_roll_writes_a_snapshot_in_kafkas_version_1_format(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    idempotent(log, 3, 0, count=3)  # 0..2, sequences 0..2
    txn(log, 7, 0, b"a")  # 3: open
    log.append_end_txn_marker(8, 2, EndTxnMarker(ControlRecordType.ABORT, 5), now_ms=9)  # 4: a marker only
    log.roll(now_ms=0)
    data = snapshot_path(tmp_path, 5).read_bytes()
    version, crc, count = struct.unpack_from(">hIi", data)
    assert (version, count) == (1, 3)
    assert crc == crc32c.crc32c(data[6:])
    entries = [_ENTRY.unpack_from(data, 10 + i * _ENTRY.size) for i in range(count)]
    assert len(data) == 10 + count * _ENTRY.size
    # producer id, epoch, last sequence, last offset, offset delta, timestamp, coordinator epoch, txn first offset
    assert sorted(entries) == [(3, 0, 2, 2, 2, 77, -1, -1), (7, 0, 0, 3, 0, 1_000, -1, 3), (8, 2, -1, -1, 0, 9, 5, -1)]


def test_a_restart_replays_only_the_batches_after_the_latest_snapshot(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    for seq in range(50):
        idempotent(log, 3, seq)
    log.roll(now_ms=0)
    idempotent(log, 3, 50)
    idempotent(log, 4, 0)
    producers = log.active_producers()
    with capture_logs() as logs:
        again = restart(log, tmp_path)
        assert again.active_producers() == producers
    event = rebuilt(logs)
    # The state is the shutdown snapshot's (at the log end); the active segment, recovered at every start, is read
    # from the roll's snapshot on to rebuild its .txnindex.
    assert (event["snapshot_offset"], event["index_replay_from"], event["replayed_batches"]) == (52, 50, 2)
    idempotent(again, 3, 51)  # the sequence goes on where it was
    assert again.append(producer_batch(b"v0", producer=(3, 0, 51), timestamp=77), now_ms=0).duplicate


def test_without_a_snapshot_the_whole_log_is_replayed(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    for seq in range(5):
        idempotent(log, 3, seq)
    log.close()
    for path in (tmp_path / "t-0").glob("*.snapshot"):
        path.unlink()
    with capture_logs() as logs:
        assert open_log(tmp_path).active_producers()[0].last_sequence == 4
    event = rebuilt(logs)
    assert (event["snapshot_offset"], event["replayed_batches"]) == (None, 5)


def test_an_open_transaction_survives_a_restart_through_the_snapshot(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    txn(log, 7, 0, b"a")  # 0: open
    txn(log, 8, 0, b"b")  # 1
    log.append_end_txn_marker(8, 0, ABORT, now_ms=5)  # 2
    log.roll(now_ms=0)
    log.append(make_batch(1), now_ms=0)  # 3
    with capture_logs() as logs:
        again = restart(log, tmp_path)
        assert again.last_stable_offset() == 0
    assert (rebuilt(logs)["snapshot_offset"], rebuilt(logs)["index_replay_from"]) == (4, 3)
    assert again.has_ongoing_transaction(7, 0)
    assert [(a.producer_id, a.first_offset) for a in again.aborted_transactions(0, 10)] == [(8, 1)]
    again.append_end_txn_marker(7, 0, COMMIT, now_ms=5)  # 4
    assert again.last_stable_offset() == again.log_end_offset == 5


def test_a_clean_shutdown_writes_a_snapshot_at_the_log_end(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    txn(log, 7, 0, b"a")
    idempotent(log, 3, 0)
    log.flush()
    log.close()
    assert snapshot_path(tmp_path, 2).exists()


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (lambda data: data[:-5], "truncated"),
        (lambda data: data[:20] + bytes([data[20] ^ 0xFF]) + data[21:], "CRC"),
        (lambda data: b"\x00\x07" + data[2:], "version"),
    ],
    ids=["truncated", "bad-crc", "unknown-version"],
)
def test_a_damaged_snapshot_is_quarantined_and_the_state_rebuilt_from_the_log(
    tmp_path: Path, damage: Any, reason: str
) -> None:
    log = open_log(tmp_path)
    txn(log, 7, 0, b"a")  # 0: open
    idempotent(log, 3, 0, count=2)  # 1..2
    log.roll(now_ms=0)
    idempotent(log, 3, 2)  # 3
    producers, lso = log.active_producers(), log.last_stable_offset()
    path = snapshot_path(tmp_path, 3)
    log.flush()
    log.close()
    snapshot_path(tmp_path, 4).unlink()  # the shutdown snapshot never made it: the roll's is the latest
    path.write_bytes(damage(path.read_bytes()))
    with capture_logs() as logs:
        again = open_log(tmp_path, recovery_point=4)
        assert (again.active_producers(), again.last_stable_offset()) == (producers, lso)
    assert (rebuilt(logs)["snapshot_offset"], rebuilt(logs)["replayed_batches"]) == (None, 3)
    [moved] = again.quarantined_files()
    assert moved.original == path.name and reason in moved.reason
    assert Path(moved.moved_to).parent == tmp_path / QUARANTINE_DIR / "t-0"
    assert [e["file"] for e in logs if e["event"] == "log_file_quarantined"] == [path.name]
    assert not path.exists()


def test_a_snapshot_beyond_the_log_end_after_a_torn_tail_is_deleted_not_quarantined(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    txn(log, 7, 0, b"a")  # 0: open
    idempotent(log, 3, 0)  # 1
    idempotent(log, 3, 1)  # 2: torn below
    log.close()  # the shutdown snapshot at 3; then the tail is torn (the data never reached the disk)
    segment = tmp_path / "t-0" / f"{0:020d}.log"
    segment.write_bytes(segment.read_bytes()[:-7])
    with capture_logs() as logs:
        crashed = open_log(tmp_path, recovery_point=None)
    assert crashed.log_end_offset == 2
    assert not snapshot_path(tmp_path, 3).exists()
    assert not crashed.quarantined_files() and not (tmp_path / QUARANTINE_DIR).exists()
    assert [e["offset"] for e in logs if e["event"] == "producer_snapshot.deleted"] == [3]
    assert [p.last_sequence for p in crashed.active_producers()] == [0, 0]
    idempotent(crashed, 3, 1)  # sequence 1 is next again, not a duplicate of the lost batch
    assert crashed.log_end_offset == 3 and crashed.last_stable_offset() == 0


def test_truncation_deletes_the_snapshots_above_the_new_log_end(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    idempotent(log, 3, 0)  # 0
    log.roll(now_ms=0)
    idempotent(log, 3, 1)  # 1
    log.roll(now_ms=0)
    assert snapshot_path(tmp_path, 1).exists() and snapshot_path(tmp_path, 2).exists()
    log.truncate_to(1)
    assert snapshot_path(tmp_path, 1).exists() and not snapshot_path(tmp_path, 2).exists()
    assert log.active_producers()[0].last_sequence == 0
    log.truncate_fully_and_start_at(10)
    assert not list((tmp_path / "t-0").glob("*.snapshot"))


def test_retention_deletes_the_snapshots_below_the_log_start(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    for seq in range(3):
        idempotent(log, 3, seq)
        log.roll(now_ms=0)
    assert [p.name[:20] for p in sorted((tmp_path / "t-0").glob("*.snapshot"))] == [f"{i:020d}" for i in (1, 2, 3)]
    log.delete_segments_before(2, now_ms=0)
    assert sorted(p.name for p in (tmp_path / "t-0").glob("*.snapshot")) == [f"{2:020d}.snapshot", f"{3:020d}.snapshot"]
    assert restart(log, tmp_path).active_producers()[0].last_sequence == 2


def test_a_lost_txn_index_below_the_snapshot_is_rebuilt_by_a_whole_replay(tmp_path: Path) -> None:
    """Every closed segment keeps a .txnindex file, so one that went missing is noticed although a snapshot lies
    after it: the replay starts before it and writes it again."""
    log = open_log(tmp_path)
    txn(log, 7, 0, b"a")  # 0
    log.append_end_txn_marker(7, 0, ABORT, now_ms=5)  # 1
    log.roll(now_ms=0)
    idempotent(log, 3, 0)  # 2
    log.roll(now_ms=0)
    index = tmp_path / "t-0" / f"{2:020d}.txnindex"
    assert index.read_bytes() == b""  # a closed segment without aborts: an empty file
    log.flush()
    log.close()
    (tmp_path / "t-0" / f"{0:020d}.txnindex").unlink()
    with capture_logs() as logs:
        again = open_log(tmp_path, recovery_point=3)
        assert [(a.producer_id, a.first_offset) for a in again.aborted_transactions(0, 10)] == [(7, 0)]
    assert rebuilt(logs)["index_replay_from"] == 0
