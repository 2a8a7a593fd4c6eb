"""Topic configs changed at runtime (AlterConfigs): persisted with the topic, applied at once to its logs, and the
broker defaults a topic without an override follows."""

from __future__ import annotations

from pathlib import Path

import pytest

from storage.broker_configs import BrokerConfigFile, DynamicBrokerConfigs
from storage.config import LogConfig
from storage.errors import LogDirError, UnknownTopicOrPartitionError
from storage.log_manager import LogManager
from tests.storage.helpers import make_batch

NOW = 1_000_000


def manager(path: Path, defaults: LogConfig | None = None) -> LogManager:
    return LogManager([path / "logs"], defaults or LogConfig(segment_bytes=2_000), now_ms=NOW)


def fill(logs: LogManager, topic: str, batches: int = 12) -> None:
    log = logs.get(topic, 0)
    assert log is not None
    for i in range(batches):
        log.append(make_batch(3, value_size=100, tag=i, timestamp=NOW), now_ms=NOW)


def test_altered_overrides_replace_the_old_ones_and_survive_a_restart(tmp_path: Path) -> None:
    logs = manager(tmp_path)
    logs.create_topic("t", 1, {"retention.ms": "5000", "segment.ms": "99999"})
    altered = logs.alter_topic_configs("t", {"retention.bytes": "77"})
    assert dict(altered.configs) == {"retention.bytes": "77"}
    assert dict(logs.topic("t").configs) == {"retention.bytes": "77"}  # type: ignore[union-attr]
    assert logs.get("t", 0).config.retention_bytes == 77  # type: ignore[union-attr]
    assert logs.get("t", 0).config.retention_ms == LogConfig().retention_ms  # type: ignore[union-attr]
    logs.close()
    again = manager(tmp_path)
    assert dict(again.topic("t").configs) == {"retention.bytes": "77"}  # type: ignore[union-attr]
    assert again.get("t", 0).config.retention_bytes == 77  # type: ignore[union-attr]
    again.close()


def test_a_retention_shrink_deletes_segments_on_the_next_retention_pass(tmp_path: Path) -> None:
    logs = manager(tmp_path)
    logs.create_topic("t", 1)
    fill(logs, "t")
    log = logs.get("t", 0)
    assert log is not None and log.segment_count > 2
    assert logs.apply_retention(NOW) == 0
    logs.alter_topic_configs("t", {"retention.bytes": "1"})
    assert logs.apply_retention(NOW) > 0
    assert log.segment_count == 1  # only the active segment is left
    logs.close()


def test_switching_to_compact_turns_compaction_on_for_the_logs(tmp_path: Path) -> None:
    logs = manager(tmp_path)
    logs.create_topic("t", 2)
    logs.alter_topic_configs("t", {"cleanup.policy": "compact"})
    assert all(logs.get("t", p).config.compact_enabled for p in (0, 1))  # type: ignore[union-attr]
    logs.alter_topic_configs("t", {})
    assert not any(logs.get("t", p).config.compact_enabled for p in (0, 1))  # type: ignore[union-attr]
    logs.close()


def test_altering_an_unknown_topic_is_unknown_topic_or_partition(tmp_path: Path) -> None:
    logs = manager(tmp_path)
    with pytest.raises(UnknownTopicOrPartitionError, match=r"The topic 'nope' does not exist\."):
        logs.alter_topic_configs("nope", {})
    logs.close()


def test_new_broker_defaults_reach_every_log_without_an_override(tmp_path: Path) -> None:
    logs = manager(tmp_path)
    logs.create_topic("plain", 1)
    logs.create_topic("pinned", 1, {"max.message.bytes": "500"})
    logs.set_defaults(LogConfig(segment_bytes=2_000, max_message_bytes=100, retention_ms=5))
    assert logs.get("plain", 0).config.max_message_bytes == 100  # type: ignore[union-attr]
    assert logs.get("pinned", 0).config.max_message_bytes == 500  # type: ignore[union-attr]
    assert logs.get("pinned", 0).config.retention_ms == 5  # type: ignore[union-attr]
    logs.create_topic("later", 1)
    assert logs.get("later", 0).config.max_message_bytes == 100  # type: ignore[union-attr]
    logs.close()


def test_dynamic_broker_configs_file_round_trips_atomically(tmp_path: Path) -> None:
    store = BrokerConfigFile(tmp_path)
    assert store.load() == DynamicBrokerConfigs() and not store.exists()
    store.save(DynamicBrokerConfigs({"log.retention.ms": "5"}, {"message.max.bytes": "100"}))
    assert store.load() == DynamicBrokerConfigs({"log.retention.ms": "5"}, {"message.max.bytes": "100"})
    assert not list(tmp_path.glob("*.tmp"))


@pytest.mark.parametrize(
    "content",
    [
        b'{"version": 1, "cluster": {"a": 1}, "node": {}}',
        b'{"version": 2, "cluster": {}, "node": {}}',
        b"{tor",
        b"\xff",
    ],
)
def test_a_damaged_dynamic_configs_file_refuses_the_start_and_stays_put(tmp_path: Path, content: bytes) -> None:
    store = BrokerConfigFile(tmp_path)
    store.path.write_bytes(content)
    with pytest.raises(LogDirError, match=r"broker-configs\.json.*refuses to start"):
        store.load()
    assert store.path.read_bytes() == content  # kept for the operator, never deleted


def test_a_smaller_segment_size_or_roll_time_applies_from_the_next_append(tmp_path: Path) -> None:
    logs = manager(tmp_path, LogConfig())
    logs.create_topic("t", 1)
    log = logs.get("t", 0)
    assert log is not None
    fill(logs, "t", batches=4)
    assert log.segment_count == 1
    logs.alter_topic_configs("t", {"internal.segment.bytes": "500"})
    fill(logs, "t", batches=4)
    assert log.segment_count > 2  # each batch (~400 bytes) now fills a segment
    rolled = log.segment_count
    logs.alter_topic_configs("t", {"segment.ms": "1000"})
    # a record more than segment.ms after the active segment's first one (Kafka measures by record timestamps)
    log.append(make_batch(1, timestamp=NOW + 5_000), now_ms=NOW + 5_000)
    assert log.segment_count == rolled + 1
    logs.close()
