"""Failed writes: an OSError while appending is KAFKA_STORAGE_ERROR, and the log stays as it was before the append.

Kafka takes a log dir offline on an IOException; this broker keeps the partition and carries on once the cause is
gone (README "Disk full"), so a failed append must leave nothing behind: no partial batch where the next append
would follow it, the same sizes, indexes and next offset, and every earlier batch readable after a reopen.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from protocol.errors import ErrorCode
from storage import segment as segment_module
from storage.config import LogConfig
from storage.errors import KafkaStorageError, StorageError
from storage.partition_log import PartitionLog
from tests.storage.helpers import make_batch, offsets_of
from tests.support.tmpfs import fill, small_tmpfs

CONFIG = LogConfig(segment_bytes=64_000, index_interval_bytes=100)


def open_log(path: Path, config: LogConfig = CONFIG) -> PartitionLog:
    return PartitionLog(path / "topic-0", config, now_ms=0)


def state(log: PartitionLog) -> tuple[int, int, int, list[tuple[int, int]], int]:
    """What a failed append must not change: log end, size, segment count, index entries, bytes on disk."""
    active = log.segments()[-1]
    on_disk = sum(s.log_path.stat().st_size for s in log.segments())
    return log.log_end_offset, log.size_in_bytes, log.segment_count, active.index.entries(), on_disk


def short_write_then(error: int) -> Callable[[int, memoryview, int], int]:
    """A pwrite that writes the first half of what it is given once, then fails with ``error`` (disk filling up)."""
    real = os.pwrite
    calls = {"n": 0}

    def pwrite(fd: int, data: memoryview, offset: int) -> int:
        calls["n"] += 1
        if calls["n"] == 1:
            return real(fd, bytes(data[: len(data) // 2]), offset)
        raise OSError(error, os.strerror(error))

    return pwrite


@pytest.mark.parametrize("error", [errno.ENOSPC, errno.EIO])
def test_a_short_then_failed_write_is_a_storage_error_and_leaves_the_log_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: int
) -> None:
    log = open_log(tmp_path)
    for i in range(5):
        log.append(make_batch(3, tag=i, value_size=40), now_ms=0)
    before = state(log)
    with monkeypatch.context() as patch:
        patch.setattr(segment_module.os, "pwrite", short_write_then(error))
        with pytest.raises(KafkaStorageError) as raised:
            log.append(make_batch(3, tag=9, value_size=400), now_ms=0)
    assert raised.value.error_code == ErrorCode.KAFKA_STORAGE_ERROR
    assert isinstance(raised.value, StorageError)
    assert os.strerror(error) in str(raised.value)
    assert state(log) == before
    # The next append follows the last good batch directly and everything reads back, before and after a reopen.
    assert log.append(make_batch(2, tag=10), now_ms=0).base_offset == 15
    assert offsets_of(log.read(0, 1 << 20)) == list(range(17))
    log.close()
    assert offsets_of(open_log(tmp_path).read(0, 1 << 20)) == list(range(17))


def test_a_failed_cut_back_is_retried_before_the_next_append(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """If even the ftruncate that removes a partial batch fails, the next append removes it first."""
    log = open_log(tmp_path)
    log.append(make_batch(3, value_size=40), now_ms=0)
    before = state(log)

    def no_truncate(fd: int, length: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    with monkeypatch.context() as patch:
        patch.setattr(segment_module.os, "pwrite", short_write_then(errno.ENOSPC))
        patch.setattr(segment_module.os, "ftruncate", no_truncate)
        with pytest.raises(KafkaStorageError):
            log.append(make_batch(3, tag=1, value_size=2_000), now_ms=0)
    assert state(log)[:4] == before[:4]
    log.append(make_batch(1, tag=2), now_ms=0)
    active = log.segments()[-1]
    assert active.log_path.stat().st_size == active.size  # no bytes of the failed batch after the new one
    log.close()
    assert offsets_of(open_log(tmp_path).read(0, 1 << 20)) == [0, 1, 2, 3]


def test_a_failed_flush_is_a_storage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = open_log(tmp_path)
    log.append(make_batch(3), now_ms=0)

    def failing_fsync(fd: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    with monkeypatch.context() as patch:
        patch.setattr(segment_module.os, "fsync", failing_fsync)
        with pytest.raises(KafkaStorageError):
            log.flush()
    assert log.has_unflushed  # the recovery point did not move: the next flush tries again
    log.flush()
    assert not log.has_unflushed


def test_disk_full_on_a_real_file_system_then_space_freed(tmp_path: Path) -> None:
    """ENOSPC from a real (tmpfs) file system: refused, nothing half written, and appends work again once freed."""
    with small_tmpfs(1 << 20) as mount:
        log = open_log(mount)
        acknowledged = [log.append(make_batch(3, tag=i, value_size=100), now_ms=0) for i in range(3)]
        before = state(log)
        filler = fill(mount)
        with pytest.raises(KafkaStorageError) as raised:
            log.append(make_batch(5, tag=7, value_size=8_000), now_ms=0)
        assert raised.value.error_code == ErrorCode.KAFKA_STORAGE_ERROR
        assert state(log) == before
        filler.unlink()
        acknowledged.append(log.append(make_batch(5, tag=7, value_size=8_000), now_ms=0))
        log.close()
        reopened = open_log(mount)
        assert offsets_of(reopened.read(0, 1 << 20)) == list(range(acknowledged[-1].last_offset + 1))
        reopened.close()
