"""Topics with many partitions, long names and full disks: bounded descriptors, complete rollbacks, deletions that
need no free space, and a deletion killed at any step that leaves the whole topic or none of it."""

from __future__ import annotations

import os
import resource
from collections.abc import Iterator
from pathlib import Path

import pytest

from storage.descriptors import SEGMENT_DESCRIPTORS, default_limit
from storage.errors import LogDirError, StorageError
from storage.log_manager import LogManager, run_steps
from storage.topics import MAX_DIR_NAME_LENGTH, MAX_TOPIC_NAME_LENGTH, TopicCatalogue
from tests.storage.helpers import make_batch
from tests.support.tmpfs import fill, small_tmpfs

LONG_TOPIC = "t" * MAX_TOPIC_NAME_LENGTH


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def append(logs: LogManager, topic: str, partition: int, *, tag: int = 0, size: int = 10) -> None:
    """One batch of one record; its value starts with ``v<tag>-0-``."""
    log = logs.get(topic, partition)
    assert log is not None
    log.append(make_batch(1, value_size=size, tag=tag), now_ms=1_000)


def partition_dirs(root: Path, topic: str) -> list[str]:
    prefix = f"{topic}-"
    return sorted(e for e in os.listdir(root) if e.startswith(prefix) and e[len(prefix) :].isdigit())


@pytest.fixture
def descriptor_limit() -> Iterator[int]:
    """A small cap on open segment descriptors for the test, restored afterwards."""
    saved = SEGMENT_DESCRIPTORS.limit
    SEGMENT_DESCRIPTORS.limit = 32
    yield 32
    SEGMENT_DESCRIPTORS.limit = saved


# --- descriptors ------------------------------------------------------------------------------------------------


@pytest.fixture
def low_nofile() -> Iterator[int]:
    """A soft `ulimit -n` of about 2,000 above what is open now, and the segment budget a broker started under it
    gets (`default_limit`), both restored afterwards: the scale of a 20,000-partition topic under `ulimit -n`
    20,000, an eighth of the work."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    low = min(soft, open_fds() + 2_000)
    saved = SEGMENT_DESCRIPTORS.limit
    resource.setrlimit(resource.RLIMIT_NOFILE, (low, hard))
    SEGMENT_DESCRIPTORS.limit = default_limit()
    try:
        yield low
    finally:
        SEGMENT_DESCRIPTORS.limit = saved
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_more_partitions_than_the_descriptor_limit_fit_under_it(tmp_path: Path, low_nofile: int) -> None:
    """20,000 partitions with `ulimit -n` at 20,000 used to run out of descriptors (each kept its segment open)."""
    partitions = low_nofile + 500
    before = open_fds()
    logs = LogManager([tmp_path])
    logs.create_topic("wide", partitions)
    assert open_fds() - before <= SEGMENT_DESCRIPTORS.limit + 8
    for partition in range(0, partitions, 11):
        append(logs, "wide", partition)
    assert open_fds() - before <= SEGMENT_DESCRIPTORS.limit + 8
    logs.close()
    assert open_fds() <= before + 2


def test_idle_segment_descriptors_are_closed_and_reopened_on_use(tmp_path: Path, descriptor_limit: int) -> None:
    logs = LogManager([tmp_path])
    logs.create_topic("many", 200)
    before = open_fds()
    for partition in range(200):
        append(logs, "many", partition, tag=partition)
    assert len(SEGMENT_DESCRIPTORS) <= descriptor_limit
    assert open_fds() - before <= descriptor_limit
    for partition in range(200):  # the evicted ones reopen and still hold their record
        log = logs.get("many", partition)
        assert log is not None
        assert f"v{partition}-0-".encode() in log.read(0, 1 << 20)
    logs.close()


def test_a_creation_failing_midway_rolls_back_without_leaks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    logs = LogManager([tmp_path])
    logs.create_topic("kept", 2)
    real_create = LogManager._create_log
    calls = 0

    def failing_create(self: LogManager, *args: object, **kwargs: object) -> object:
        nonlocal calls
        calls += 1
        if calls == 500:
            raise OSError(24, "Too many open files")
        return real_create(self, *args, **kwargs)  # type: ignore[arg-type]

    before_fds = open_fds()
    before_entries = sorted(os.listdir(tmp_path))
    monkeypatch.setattr(LogManager, "_create_log", failing_create)
    with pytest.raises(LogDirError):
        logs.create_topic("doomed", 1_000)
    monkeypatch.undo()
    assert open_fds() == before_fds
    assert sorted(os.listdir(tmp_path)) == before_entries
    assert logs.topic("doomed") is None
    assert "doomed" not in TopicCatalogue(tmp_path / "topics.json").load()
    assert logs.create_topic("doomed", 3).partitions == 3  # the name is free again
    logs.close()


# --- long names -------------------------------------------------------------------------------------------------


def test_a_249_character_topic_can_be_deleted_and_created_again(tmp_path: Path) -> None:
    logs = LogManager([tmp_path])
    logs.create_topic(LONG_TOPIC, 2)
    append(logs, LONG_TOPIC, 1)
    logs.delete_topic(LONG_TOPIC)
    assert logs.topic(LONG_TOPIC) is None
    assert partition_dirs(tmp_path, LONG_TOPIC) == []
    assert [e for e in os.listdir(tmp_path) if e.endswith("-delete")] == []
    logs.create_topic(LONG_TOPIC, 2)
    log = logs.get(LONG_TOPIC, 1)
    assert log is not None and log.log_end_offset == 0
    logs.close()


def test_startup_recognises_a_cut_short_delete_directory_of_a_long_topic(tmp_path: Path) -> None:
    """Killed right after the first rename: the leftover's name is cut to 255 characters, the topic still goes."""
    logs = LogManager([tmp_path])
    logs.create_topic(LONG_TOPIC, 3)
    logs.create_topic("other", 1)
    append(logs, "other", 0)
    steps = logs.delete_topic_steps(LONG_TOPIC)
    while not any(e.endswith("-delete") for e in os.listdir(tmp_path)):
        next(steps)
    leftover = next(e for e in os.listdir(tmp_path) if e.endswith("-delete"))
    assert len(leftover) == MAX_DIR_NAME_LENGTH
    logs.flush_all()
    reopened = LogManager([tmp_path])
    assert reopened.topic(LONG_TOPIC) is None
    assert [e for e in os.listdir(tmp_path) if e.endswith(("-delete", "-stray"))] == []
    assert partition_dirs(tmp_path, LONG_TOPIC) == []
    other = reopened.get("other", 0)
    assert other is not None and other.log_end_offset == 1
    reopened.create_topic(LONG_TOPIC, 1)
    reopened.close()


def test_a_long_topic_directory_not_in_the_catalogue_is_set_aside_under_a_capped_stray_name(tmp_path: Path) -> None:
    """Kafka's ``-stray`` names are capped like ``-delete`` names, so a 249-character topic's leftover fits too."""
    (tmp_path / f"{LONG_TOPIC}-0").mkdir()
    logs = LogManager([tmp_path])
    [stray] = [e for e in os.listdir(tmp_path) if e.endswith("-stray")]
    assert len(stray) == MAX_DIR_NAME_LENGTH
    [set_aside] = logs.quarantined_files()
    assert (set_aside.topic, set_aside.partition, set_aside.original) == (LONG_TOPIC, 0, f"{LONG_TOPIC}-0")
    logs.close()


# --- crash safety -----------------------------------------------------------------------------------------------


def count_steps(root: Path) -> int:
    logs = LogManager([root])
    logs.create_topic("probe", 3)
    for partition in range(3):
        append(logs, "probe", partition)
    steps = logs.delete_topic_steps("probe")
    count = 0
    for _ in steps:
        count += 1
    logs.close()
    return count


def test_a_deletion_killed_at_any_step_leaves_the_whole_topic_or_none(tmp_path: Path) -> None:
    """Abandon the deletion after each possible step (as kill -9 would) and restart on the directory."""
    total = count_steps(tmp_path / "probe")
    assert total >= 6
    for stop_after in range(total + 1):
        root = tmp_path / f"run{stop_after}"
        logs = LogManager([root])
        logs.create_topic("doomed", 3)
        logs.create_topic("kept", 2)
        for partition in range(3):
            append(logs, "doomed", partition)
        for partition in range(2):
            append(logs, "kept", partition)
        logs.flush_all()
        steps = logs.delete_topic_steps("doomed")
        for _ in range(stop_after):
            next(steps, None)
        restarted = LogManager([root])
        doomed = restarted.topic("doomed")
        if doomed is not None:
            ends = [restarted.get("doomed", p).log_end_offset for p in range(3)]  # type: ignore[union-attr]
            assert ends == [1, 1, 1], f"half a topic after step {stop_after}"
        else:
            assert partition_dirs(root, "doomed") == []
        assert [e for e in os.listdir(root) if e.endswith(("-delete", "-stray"))] == []
        assert [restarted.get("kept", p).log_end_offset for p in range(2)] == [1, 1]  # type: ignore[union-attr]
        if doomed is not None:
            restarted.delete_topic("doomed")
        restarted.create_topic("doomed", 2)
        restarted.close()
        steps.close()


# --- full disk --------------------------------------------------------------------------------------------------


def test_delete_topics_frees_space_on_a_full_disk() -> None:
    with small_tmpfs(4 * 1024 * 1024) as root:
        logs = LogManager([root / "data"])
        logs.create_topic("kept", 1)
        append(logs, "kept", 0)
        logs.create_topic("big", 4)
        for partition in range(4):
            for _ in range(40):
                append(logs, "big", partition, size=4_096)
        logs.flush_all()
        fill(root)
        with pytest.raises(OSError):  # really full: a catalogue-sized write fails
            (root / "data" / "probe").write_bytes(b"x" * 65_536)
        logs.delete_topic("big")
        assert logs.topic("big") is None
        assert "big" not in TopicCatalogue(root / "data" / "topics.json").load()
        assert partition_dirs(root / "data", "big") == []
        logs.create_topic("after", 1)  # the freed space is usable
        logs.close()
        reopened = LogManager([root / "data"])
        assert reopened.topic("big") is None
        kept = reopened.get("kept", 0)
        assert kept is not None and kept.log_end_offset == 1
        reopened.close()


def test_steps_run_one_partition_at_a_time(tmp_path: Path) -> None:
    """The broker slices topic operations between other work: a step must be one partition, not the topic."""
    logs = LogManager([tmp_path])
    steps = logs.create_topic_steps("sliced", 50)
    next(steps)
    assert len(partition_dirs(tmp_path, "sliced")) == 1
    assert logs.topic("sliced") is None
    with pytest.raises(StorageError):  # the name is taken while it is being created
        logs.create_topic("sliced", 1)
    info = run_steps(steps)
    assert info.partitions == 50 and logs.topic("sliced") == info
    logs.close()
