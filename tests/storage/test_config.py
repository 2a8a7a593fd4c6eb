"""LogConfig: Kafka's names, defaults, precedence rules and validation."""

from __future__ import annotations

import pytest

from storage.config import INT64_MAX, TOPIC_CONFIG_NAMES, LogConfig, validate_topic_configs
from storage.errors import InvalidConfigError

HOUR = 3_600_000


def test_kafka_defaults() -> None:
    config = LogConfig()
    assert config.segment_bytes == 1_073_741_824
    assert config.segment_ms == config.retention_ms == 168 * HOUR
    assert config.retention_bytes == -1
    assert config.index_interval_bytes == 4096
    assert config.segment_index_bytes == 10_485_760
    assert config.flush_messages == config.flush_ms == INT64_MAX
    assert config.cleanup_policy == ("delete",) and config.delete_enabled and not config.compact_enabled
    assert config.message_timestamp_type == "CreateTime"


def test_broker_properties_precedence() -> None:
    config = LogConfig.from_broker_properties(
        {
            "log.retention.hours": "1",
            "log.retention.minutes": "2",
            "log.roll.hours": "3",
            "log.segment.bytes": "1048576",
            "log.cleanup.policy": "compact,delete",
            "num.partitions": "3",  # not a log setting: ignored
        }
    )
    assert config.retention_ms == 2 * 60_000  # minutes beat hours
    assert config.segment_ms == 3 * HOUR
    assert config.segment_bytes == 1_048_576
    assert config.cleanup_policy == ("compact", "delete")
    assert LogConfig.from_broker_properties({"log.retention.ms": "5", "log.retention.hours": "1"}).retention_ms == 5
    assert LogConfig.from_broker_properties({"log.retention.hours": "-1"}).retention_ms == -1
    parsed = {
        "log.retention.ms": None,
        "log.retention.hours": 2,
        "log.cleanup.policy": ["compact"],
        "log.roll.ms": None,
    }
    config = LogConfig.from_broker_properties(parsed)
    assert (config.retention_ms, config.cleanup_policy, config.segment_ms) == (2 * HOUR, ("compact",), 168 * HOUR)


def test_topic_overrides() -> None:
    base = LogConfig(segment_bytes=4096)
    config = base.with_overrides(
        {"retention.ms": "100", "message.timestamp.type": "LogAppendTime", "preallocate": "TRUE"}
    )
    assert (config.retention_ms, config.segment_bytes, config.log_append_time) == (100, 4096, True)
    assert base.with_overrides({}) is base


def test_topic_properties_lists_every_name() -> None:
    props = LogConfig(retention_ms=5).topic_properties()
    assert set(props) == TOPIC_CONFIG_NAMES
    assert props["retention.ms"] == "5"
    assert props["cleanup.policy"] == "delete"
    assert props["min.insync.replicas"] == "1"


@pytest.mark.parametrize(
    "configs",
    [
        {"retention.ms": "-2"},
        {"segment.bytes": "13"},
        {"segment.bytes": "4294967296"},
        {"segment.ms": "0"},
        {"cleanup.policy": "archive"},
        {"cleanup.policy": ""},
        {"message.timestamp.type": "createtime"},
        {"min.cleanable.dirty.ratio": "1.5"},
        {"preallocate": "yes"},
        {"compression.type": "brotli"},
        {"retention.bytes": "ten"},
        {"unknown.config": "1"},
    ],
)
def test_invalid_topic_configs(configs: dict[str, str]) -> None:
    with pytest.raises(InvalidConfigError):
        validate_topic_configs(configs)


def test_valid_topic_configs_are_normalized() -> None:
    assert validate_topic_configs({"retention.ms": " 42 ", "cleanup.policy": "compact, delete"}) == {
        "retention.ms": "42",
        "cleanup.policy": "compact,delete",
    }
