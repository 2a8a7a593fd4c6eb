"""The leader epoch cache: Kafka's LeaderEpochFileCache answers (assign, end offsets, epoch of an offset,
truncations), persisted in ``leader-epoch-checkpoint`` and rebuilt from the batches when missing or damaged."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from protocol.records import iter_batches
from storage.checkpoints import LEADER_EPOCH_CHECKPOINT, CheckpointError
from storage.config import LogConfig
from storage.leader_epoch import EpochEntry, LeaderEpochCache
from storage.partition_log import PartitionLog
from tests.storage.helpers import make_batch

SMALL = LogConfig(segment_bytes=2_000, index_interval_bytes=300)
TP = ("t", 0)


def cache(tmp_path: Path, *entries: tuple[int, int]) -> LeaderEpochCache:
    return LeaderEpochCache(tmp_path / LEADER_EPOCH_CHECKPOINT, TP, [EpochEntry(e, o) for e, o in entries])


def pairs(c: LeaderEpochCache | PartitionLog) -> list[tuple[int, int]]:
    entries = c.entries() if isinstance(c, LeaderEpochCache) else c.epoch_entries()
    return [(e.epoch, e.start_offset) for e in entries]


def test_assign_keeps_epochs_and_offsets_increasing(tmp_path: Path) -> None:
    c = cache(tmp_path)
    assert c.assign(0, 0)
    assert not c.assign(0, 5)  # the latest epoch at a later offset: nothing new
    assert c.assign(2, 10)
    assert c.assign(3, 10)  # same offset, newer epoch: the older entry at that offset goes
    assert pairs(c) == [(0, 0), (3, 10)]
    assert c.assign(1, 4)  # an older epoch: every entry it contradicts goes, as Kafka's assign does
    assert pairs(c) == [(0, 0), (1, 4)]
    assert pairs(LeaderEpochCache.load(c.path, TP) or cache(tmp_path)) == [(0, 0), (1, 4)]  # written through
    with pytest.raises(ValueError):
        c.assign(-1, 0)


def test_end_offset_for_answers_as_kafka(tmp_path: Path) -> None:
    c = cache(tmp_path, (1, 5), (3, 20), (4, 30))
    assert c.end_offset_for(4, 42) == (4, 42)  # the latest epoch ends at the log end
    assert c.end_offset_for(3, 42) == (3, 30)
    assert c.end_offset_for(2, 42) == (1, 20)  # the largest epoch below, ending where the next one starts
    assert c.end_offset_for(0, 42) == (0, 5)  # below every entry: the requested epoch, the first start
    assert c.end_offset_for(5, 42) == (-1, -1)  # after every entry
    assert c.end_offset_for(-1, 42) == (-1, -1)
    assert cache(tmp_path).end_offset_for(0, 0) == (-1, -1)


def test_epoch_for_offset(tmp_path: Path) -> None:
    c = cache(tmp_path, (1, 5), (3, 20))
    assert [c.epoch_for_offset(o) for o in (4, 5, 19, 20, 99)] == [None, 1, 1, 3, 3]


def test_truncations(tmp_path: Path) -> None:
    c = cache(tmp_path, (1, 5), (3, 20), (4, 30))
    c.truncate_from_start(25)
    assert pairs(c) == [(3, 25), (4, 30)]
    c.truncate_from_end(30)
    assert pairs(c) == [(3, 25)]
    c.truncate_from_start(10)  # below the first entry: nothing to do
    assert pairs(c) == [(3, 25)]


@pytest.mark.parametrize(
    "content", [b"", b"0\n", b"0\n2\n0 0\n", b"0\n1\n0\n", b"0\n2\n1 5\n0 9\n", b"0\n1\n-1 0\n", b"\xff\n"]
)
def test_a_damaged_file_does_not_load(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / LEADER_EPOCH_CHECKPOINT
    path.write_bytes(content)
    with pytest.raises(CheckpointError):
        LeaderEpochCache.load(path, TP)


def test_a_new_log_starts_at_epoch_zero_and_stamps_it(tmp_path: Path) -> None:
    log = PartitionLog(tmp_path / "t-0", SMALL, now_ms=0)
    assert (log.leader_epoch, pairs(log)) == (0, [(0, 0)])
    assert (tmp_path / "t-0" / LEADER_EPOCH_CHECKPOINT).read_text() == "0\n1\n0 0\n"
    log.append(make_batch(2), now_ms=0)
    log.become_leader(3)
    log.append(make_batch(2), now_ms=0)
    assert [b.partition_leader_epoch for _, b in iter_batches(log.read(0, 10_000))] == [0, 3]
    assert log.end_offset_for_epoch(0) == (0, 2)
    assert log.end_offset_for_epoch(3) == (3, 4)
    assert log.epoch_for_offset(1) == 0
    reopened = PartitionLog(tmp_path / "t-0", SMALL, now_ms=0)  # no close: as a kill -9 leaves it
    assert (reopened.leader_epoch, pairs(reopened)) == (3, [(0, 0), (3, 2)])


@pytest.mark.parametrize("damage", ["missing", "garbage"])
def test_a_missing_or_damaged_cache_is_rebuilt_from_the_batches(tmp_path: Path, damage: str) -> None:
    log = PartitionLog(tmp_path / "t-0", SMALL, now_ms=0)
    for epoch in (0, 0, 2, 2, 5):
        log.append(make_batch(3, value_size=200), now_ms=0, leader_epoch=epoch)
    assert log.segment_count > 1
    log.close()
    path = tmp_path / "t-0" / LEADER_EPOCH_CHECKPOINT
    if damage == "missing":
        path.unlink()
    else:
        path.write_bytes(b"0\n7\nnonsense\n")
    reopened = PartitionLog(tmp_path / "t-0", SMALL, now_ms=0)
    assert pairs(reopened) == [(0, 0), (2, 6), (5, 12)]
    assert reopened.leader_epoch == 5
    quarantined = reopened.quarantined_files()
    if damage == "missing":
        assert quarantined == []
    else:
        [moved] = quarantined
        assert moved.original == LEADER_EPOCH_CHECKPOINT and Path(moved.moved_to).read_bytes() == b"0\n7\nnonsense\n"
    assert LeaderEpochCache.load(path, TP) is not None  # written again


def _fsyncs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (calls.append(fd), real(fd))[1])
    return calls


def test_a_new_partition_writes_its_cache_without_fsync(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fsyncs = _fsyncs(monkeypatch)
    log = PartitionLog(tmp_path / "t-0", SMALL, now_ms=0)
    assert fsyncs == []  # a fresh log.dirs creates 100 coordinator partitions at start: no disk flush for any
    assert (tmp_path / "t-0" / LEADER_EPOCH_CHECKPOINT).read_text() == "0\n1\n0 0\n"  # Kafka's layout, as before
    log.become_leader(2)  # an entry the log cannot give back: written durably
    assert fsyncs


def test_a_cache_rebuilt_from_batches_is_written_durably(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = PartitionLog(tmp_path / "t-0", SMALL, now_ms=0)
    log.append(make_batch(2), now_ms=0, leader_epoch=4)
    log.close()
    (tmp_path / "t-0" / LEADER_EPOCH_CHECKPOINT).unlink()
    fsyncs = _fsyncs(monkeypatch)
    assert pairs(PartitionLog(tmp_path / "t-0", SMALL, now_ms=0)) == [(4, 0)]
    assert fsyncs


@pytest.mark.parametrize("batches", [[], [0, 0], [0, 3]])
def test_an_empty_cache_file_is_read_as_never_written(tmp_path: Path, batches: list[int]) -> None:
    """A power loss after the fsync-free write of a new partition's cache may leave the file empty (renamed, its
    data never written): the log gives the entries back, and it is not damage to quarantine."""
    log = PartitionLog(tmp_path / "t-0", SMALL, now_ms=0)
    for epoch in batches:
        log.append(make_batch(2), now_ms=0, leader_epoch=epoch)
    expected = pairs(log)
    log.close()
    path = tmp_path / "t-0" / LEADER_EPOCH_CHECKPOINT
    path.write_bytes(b"")
    reopened = PartitionLog(tmp_path / "t-0", SMALL, now_ms=0)
    assert (pairs(reopened), reopened.quarantined_files()) == (expected, [])
    assert LeaderEpochCache.load(path, TP) is not None  # written again


def test_truncating_the_log_truncates_the_cache(tmp_path: Path) -> None:
    log = PartitionLog(tmp_path / "t-0", SMALL, now_ms=0)
    log.append(make_batch(2), now_ms=0)
    log.append(make_batch(2), now_ms=0, leader_epoch=4)
    log.truncate_to(2)  # epoch 4's batch goes, but epoch 4 is still the leader's: it starts again at 2
    assert (pairs(log), log.log_end_offset) == ([(0, 0), (4, 2)], 2)
    log.delete_records(1)
    assert pairs(log) == [(0, 1), (4, 2)]
    log.truncate_to(1)  # the batch holding offset 1 goes whole: nothing is left from the log start on
    assert (pairs(log), log.log_start_offset, log.log_end_offset) == ([(4, 1)], 1, 1)
    log.truncate_fully_and_start_at(10)
    assert (pairs(log), log.leader_epoch) == ([(4, 10)], 4)


def test_a_leader_that_has_not_written_keeps_its_epoch_across_a_restart(tmp_path: Path) -> None:
    log = PartitionLog(tmp_path / "t-0", SMALL, now_ms=0)
    log.append(make_batch(2), now_ms=0)
    log.become_leader(3)  # starts at the log end, 2: nothing written in it yet
    reopened = PartitionLog(tmp_path / "t-0", SMALL, now_ms=0)
    assert (reopened.leader_epoch, pairs(reopened)) == (3, [(0, 0), (3, 2)])
    assert reopened.end_offset_for_epoch(0) == (0, 2)
