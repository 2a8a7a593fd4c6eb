"""LogManager: topic lifecycle persisted across restarts, stable cluster id, Kafka's errors."""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import uuid
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from protocol.errors import ErrorCode
from storage.config import LogConfig
from storage.errors import (
    InvalidConfigError,
    InvalidPartitionsError,
    InvalidTopicError,
    LogDirError,
    TopicAlreadyExistsError,
    UnknownTopicOrPartitionError,
)
from storage.files import read_offset_checkpoint, read_properties
from storage.log_manager import LogManager, parse_partition_dir
from storage.topics import kafka_uuid_from_str, kafka_uuid_to_str, new_kafka_uuid
from tests.storage.helpers import make_batch, offsets_of


def manager(path: Path, **kwargs: object) -> LogManager:
    return LogManager([path / "logs"], LogConfig(segment_bytes=2_000), now_ms=0, **kwargs)  # type: ignore[arg-type]


def test_cluster_id_is_generated_once(tmp_path: Path) -> None:
    first = manager(tmp_path, node_id=3)
    assert re.fullmatch(r"[A-Za-z0-9_-]{22}", first.cluster_id)
    first.close()
    props = read_properties(tmp_path / "logs" / "meta.properties")
    assert props == {"version": "1", "cluster.id": first.cluster_id, "node.id": "3"}
    second = manager(tmp_path, node_id=3)
    assert second.cluster_id == first.cluster_id
    second.close()
    assert manager(tmp_path / "other").cluster_id != first.cluster_id


def test_meta_properties_mismatch(tmp_path: Path) -> None:
    manager(tmp_path, node_id=1).close()
    with pytest.raises(LogDirError, match="node id"):
        manager(tmp_path, node_id=2)
    with pytest.raises(LogDirError, match="cluster id"):
        manager(tmp_path, node_id=1, cluster_id="somethingElse")


def test_explicit_cluster_id(tmp_path: Path) -> None:
    assert manager(tmp_path, cluster_id="MkU3OEVBNTcwNTJENDM2Qg").cluster_id == "MkU3OEVBNTcwNTJENDM2Qg"


def test_create_append_restart(tmp_path: Path) -> None:
    logs = manager(tmp_path)
    info = logs.create_topic("orders", 3, {"retention.ms": "1000", "cleanup.policy": "delete"})
    assert info.partitions == 3 and info.configs == {"retention.ms": "1000", "cleanup.policy": "delete"}
    assert sorted(p.name for p in (tmp_path / "logs").iterdir() if p.is_dir()) == [
        "orders-0",
        "orders-1",
        "orders-2",
    ]
    log = logs.get("orders", 1)
    assert log is not None and log.config.retention_ms == 1000
    for _ in range(30):
        log.append(make_batch(2, value_size=50), now_ms=0)
    logs.close()
    assert read_offset_checkpoint(tmp_path / "logs" / "recovery-point-offset-checkpoint")[("orders", 1)] == 60

    again = manager(tmp_path)
    (topic,) = again.topics()
    assert (topic.name, topic.topic_id, topic.partitions) == ("orders", info.topic_id, 3)
    assert again.topic_config("orders").retention_ms == 1000
    assert again.topic_config("orders").segment_bytes == 2_000  # broker default
    reopened = again.get("orders", 1)
    assert reopened is not None and offsets_of(reopened.read(0, 10**6)) == list(range(60))
    assert again.get("orders", 3) is None and again.get("nope", 0) is None


def test_delete_topic(tmp_path: Path) -> None:
    logs = manager(tmp_path)
    logs.create_topic("a", 2)
    logs.create_topic("b", 1)
    log = logs.get("a", 0)
    assert log is not None
    log.append(make_batch(1), now_ms=0)
    deleted = logs.delete_topic("a")
    assert deleted.name == "a" and log.closed
    assert logs.get("a", 0) is None
    assert not (tmp_path / "logs" / "a-0").exists()
    logs.close()
    again = manager(tmp_path)
    assert [t.name for t in again.topics()] == ["b"]
    # The name is free again, with a fresh id and empty logs.
    info = again.create_topic("a", 1)
    assert info.topic_id != deleted.topic_id
    recreated = again.get("a", 0)
    assert recreated is not None and recreated.log_end_offset == 0


def test_add_partitions(tmp_path: Path) -> None:
    logs = manager(tmp_path)
    logs.create_topic("t", 1)
    grown = logs.add_partitions("t", 4)
    assert grown.partitions == 4
    assert all(logs.get("t", p) is not None for p in range(4))
    with pytest.raises(InvalidPartitionsError, match="already has 4"):
        logs.add_partitions("t", 4)
    with pytest.raises(InvalidPartitionsError, match="higher than the requested 2"):
        logs.add_partitions("t", 2)
    with pytest.raises(UnknownTopicOrPartitionError) as info:
        logs.add_partitions("missing", 2)
    assert info.value.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    logs.close()
    assert manager(tmp_path).topic("t").partitions == 4  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "name",
    ["", ".", "..", "a" * 250, "has space", "slash/es", "ünïcode", "colon:", "star*"],
)
def test_bad_topic_names(tmp_path: Path, name: str) -> None:
    logs = manager(tmp_path)
    with pytest.raises(InvalidTopicError) as info:
        logs.create_topic(name, 1)
    assert info.value.error_code == ErrorCode.INVALID_TOPIC_EXCEPTION
    assert logs.topics() == []


def test_legal_edge_names(tmp_path: Path) -> None:
    logs = manager(tmp_path)
    for name in ("a" * 249, "...", "_-.", "__consumer_offsets", "with-dash-0"):
        logs.create_topic(name, 1)
    logs.close()
    assert len(manager(tmp_path).topics()) == 5


def test_topic_errors(tmp_path: Path) -> None:
    logs = manager(tmp_path)
    logs.create_topic("metrics.cpu", 1)
    with pytest.raises(TopicAlreadyExistsError) as exists:
        logs.create_topic("metrics.cpu", 1)
    assert exists.value.error_code == ErrorCode.TOPIC_ALREADY_EXISTS
    with pytest.raises(InvalidTopicError, match="collides"):
        logs.create_topic("metrics_cpu", 1)
    for partitions in (0, -1):
        with pytest.raises(InvalidPartitionsError) as bad:
            logs.create_topic("x", partitions)
        assert bad.value.error_code == ErrorCode.INVALID_PARTITIONS
    with pytest.raises(InvalidConfigError) as config:
        logs.create_topic("x", 1, {"retention.ms": "soon"})
    assert config.value.error_code == ErrorCode.INVALID_CONFIG
    with pytest.raises(InvalidConfigError, match="Unknown"):
        logs.create_topic("x", 1, {"no.such.config": "1"})
    with pytest.raises(UnknownTopicOrPartitionError):
        logs.delete_topic("x")
    assert [t.name for t in logs.topics()] == ["metrics.cpu"]
    assert not (tmp_path / "logs" / "x-0").exists()


def test_stray_and_deleted_directories(tmp_path: Path) -> None:
    logs = manager(tmp_path)
    logs.create_topic("t", 1)
    logs.close()
    root = tmp_path / "logs"
    (root / "ghost-0").mkdir()  # not in the catalogue: set aside, never served
    (root / "t-5").mkdir()  # beyond the partition count
    (root / "t-0.abc-delete").mkdir()  # an interrupted delete
    (root / "not a partition").mkdir()
    again = manager(tmp_path)
    names = sorted(p.name for p in root.iterdir())
    assert "t-0.abc-delete" not in names and "ghost-0" not in names and "t-5" not in names
    assert sum(name.endswith("-stray") for name in names) == 2
    assert again.get("ghost", 0) is None
    again.create_topic("ghost", 1)
    assert again.get("ghost", 0) is not None


def test_missing_partition_directory_is_recreated(tmp_path: Path) -> None:
    logs = manager(tmp_path)
    logs.create_topic("t", 2)
    logs.close()
    shutil.rmtree(tmp_path / "logs" / "t-1")
    again = manager(tmp_path)
    log = again.get("t", 1)
    assert log is not None and log.log_end_offset == 0


def test_corrupt_catalogue_refuses_to_start(tmp_path: Path) -> None:
    manager(tmp_path).close()
    (tmp_path / "logs" / "topics.json").write_text("{not json")
    with pytest.raises(LogDirError):
        manager(tmp_path)


def test_catalogue_format(tmp_path: Path) -> None:
    logs = manager(tmp_path)
    topic_id = uuid.UUID("12345678-1234-5678-1234-567812345678")
    logs.create_topic("t", 2, {"segment.bytes": "1048576"}, topic_id=topic_id)
    data = json.loads((tmp_path / "logs" / "topics.json").read_text())
    assert data == {
        "version": 1,
        "topics": {
            "t": {"topic_id": kafka_uuid_to_str(topic_id), "partitions": 2, "configs": {"segment.bytes": "1048576"}}
        },
    }


def test_retention_and_flush_across_logs(tmp_path: Path) -> None:
    logs = LogManager([tmp_path], LogConfig(segment_bytes=2_000, retention_bytes=0, flush_ms=10), now_ms=0)
    logs.create_topic("t", 2, now_ms=0)
    for partition in range(2):
        log = logs.get("t", partition)
        assert log is not None
        for _ in range(20):
            log.append(make_batch(2, value_size=50), now_ms=0)
    assert logs.flush_due(10) == 2
    deleted = logs.apply_retention(now_ms=0)
    assert deleted >= 4
    assert all(log.log_start_offset == log.log_end_offset == 40 for log in logs.logs().values())


def test_parse_partition_dir() -> None:
    assert parse_partition_dir("with-dash-12") == ("with-dash", 12)
    assert parse_partition_dir("t-0.abc-delete") is None
    assert parse_partition_dir("t--1") == ("t-", 1)  # "t-" is a legal topic name
    assert parse_partition_dir("t-x") is None
    assert parse_partition_dir("bad name-0") is None
    assert parse_partition_dir("t") is None


def test_kafka_uuid_text() -> None:
    for _ in range(50):
        value = new_kafka_uuid()
        text = kafka_uuid_to_str(value)
        assert len(text) == 22 and not text.startswith("-")
        assert kafka_uuid_from_str(text) == value


def test_damage_and_quarantine_are_reported_for_every_log(tmp_path: Path) -> None:
    logs = manager(tmp_path)
    logs.create_topic("t", 2, {"internal.segment.bytes": "1000"})
    for i in range(12):
        logs.get("t", i % 2).append(make_batch(3, value_size=100, tag=i), now_ms=0)  # type: ignore[union-attr]
    logs.close()
    root = tmp_path / "logs"
    first = sorted((root / "t-0").glob("*.log"))[0]
    data = bytearray(first.read_bytes())
    data[70] ^= 0xFF  # the CRC of the first batch of t-0
    first.write_bytes(bytes(data))
    (root / "t-1" / "junk.log").write_bytes(b"junk")
    (root / "ghost-0").mkdir()
    again = manager(tmp_path)
    assert again.get("t", 0).read(0, 10**9)  # type: ignore[union-attr]  # a reader meets the damage
    [damage] = again.damaged_ranges()
    assert (damage.topic, damage.partition, damage.segment, damage.start) == ("t", 0, first.name, 0)
    quarantined = {(q.topic, q.partition, q.original) for q in again.quarantined_files()}
    assert quarantined == {("ghost", 0, "ghost-0"), ("t", 1, "junk.log")}
    assert (root / "quarantine" / "t-1").is_dir()
    assert again.get("quarantine", 0) is None  # the quarantine folder is never loaded as a log


def test_close_on_a_failing_disk_logs_each_failure_and_still_closes_every_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    manager = LogManager([tmp_path], LogConfig(), now_ms=0)
    manager.create_topic("t", 3, now_ms=0)
    logs = manager.logs()
    for log in logs.values():
        log.append(make_batch(2), now_ms=0)
    failing = logs[("t", 1)]
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        if os.readlink(f"/proc/self/fd/{fd}").startswith(str(failing.directory)):
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real_fsync(fd)

    def no_space(*_: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr("storage.log_manager.write_offset_checkpoint", no_space)
    with capture_logs() as lines:
        assert manager.close() is False
    flush_failed = [line for line in lines if line["event"] == "storage.shutdown_flush_failed"]
    checkpoint_failed = [line for line in lines if line["event"] == "storage.shutdown_checkpoint_failed"]
    assert [(f["topic"], f["partition"], f["errno"]) for f in flush_failed] == [("t", 1, "EIO")]
    assert [c["errno"] for c in checkpoint_failed] == ["ENOSPC"]
    assert all(log.closed for log in logs.values())  # every descriptor released, the failing log's too
    assert logs[("t", 0)].recovery_point == 2 and failing.recovery_point == 0  # the others were still flushed


def test_new_partitions_take_their_creation_time_from_the_injected_clock(tmp_path: Path) -> None:
    now = [7_000_000]
    manager = LogManager([tmp_path], LogConfig(), clock=lambda: now[0])
    now[0] = 7_000_500
    manager.create_topic("timed", 2, {})
    now[0] = 7_000_900
    manager.add_partitions("timed", 3)
    created = [manager.get("timed", p).segments()[0].created_ms for p in range(3)]  # type: ignore[union-attr]
    assert created == [7_000_500, 7_000_500, 7_000_900]
    manager.close()
