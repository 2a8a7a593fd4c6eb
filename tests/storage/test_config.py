"""LogConfig: Kafka's names, defaults, precedence rules and validation."""

from __future__ import annotations

import pytest

from storage.config import INT64_MAX, TOPIC_CONFIG_NAMES, LogConfig, topic_defaults, validate_topic_configs
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


def test_topic_defaults_list_every_name_with_the_broker_value() -> None:
    props = topic_defaults({"log.retention.hours": "2", "message.max.bytes": 5000, "log.cleanup.policy": ["compact"]})
    assert set(props) == TOPIC_CONFIG_NAMES
    assert "internal.segment.bytes" not in props  # Kafka's internal key: described only where a topic sets it
    assert (props["retention.ms"], props["max.message.bytes"], props["cleanup.policy"]) == (
        str(2 * HOUR),
        "5000",
        "compact",
    )
    assert props["min.insync.replicas"] == "1"
    assert props["min.cleanable.dirty.ratio"] == "0.5"
    assert props["message.timestamp.after.max.ms"] == str(HOUR)  # Kafka 4's default: an hour


@pytest.mark.parametrize(
    "configs",
    [
        {"retention.ms": "-2"},
        {"segment.bytes": "13"},
        {"segment.bytes": "4294967296"},
        {"segment.ms": "0"},
        {"cleanup.policy": "archive"},
        {"cleanup.policy": "delete,"},
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


# Kafka 4.4's answers to AlterConfigs/CreateTopics with these values (seen from the reference broker).
@pytest.mark.parametrize(
    ("configs", "message"),
    [
        ({"retention.bytes": "abc"}, "Invalid value abc for configuration retention.bytes: Not a number of type LONG"),
        ({"retention.ms": "-5"}, "Invalid value -5 for configuration retention.ms: Value must be at least -1"),
        ({"retention.ms": "1.5"}, "Invalid value 1.5 for configuration retention.ms: Not a number of type LONG"),
        ({"retention.ms": "0x10"}, "Invalid value 0x10 for configuration retention.ms: Not a number of type LONG"),
        ({"retention.ms": "1_000"}, "Invalid value 1_000 for configuration retention.ms: Not a number of type LONG"),
        ({"retention.ms": ""}, "Invalid value  for configuration retention.ms: Not a number of type LONG"),
        (
            {"max.message.bytes": "2147483648"},
            "Invalid value 2147483648 for configuration max.message.bytes: Not a number of type INT",
        ),
        ({"bogus.key": "1"}, "Unknown topic config name: bogus.key"),
        ({"retention.ms": None}, "Null value not supported for topic configs: retention.ms"),
        (
            {"segment.bytes": "1000"},
            "Invalid value 1000 for configuration segment.bytes: Value must be at least 1048576",
        ),
        (
            {"cleanup.policy": "compact,bogus"},
            "Invalid value bogus for configuration cleanup.policy: String must be one of: compact, delete",
        ),
        ({"cleanup.policy": ","}, "Configuration 'cleanup.policy' values must not be empty."),
        (
            {"min.cleanable.dirty.ratio": "2"},
            "Invalid value 2.0 for configuration min.cleanable.dirty.ratio: Value must be no more than 1",
        ),
        (
            {"min.cleanable.dirty.ratio": "-1"},
            "Invalid value -1.0 for configuration min.cleanable.dirty.ratio: Value must be at least 0",
        ),
        (
            {"min.cleanable.dirty.ratio": "abc"},
            "Invalid value abc for configuration min.cleanable.dirty.ratio: Not a number of type DOUBLE",
        ),
        (
            {"message.timestamp.type": "logappendtime"},
            "Invalid value logappendtime for configuration message.timestamp.type: String must be one of: CreateTime, "
            "LogAppendTime",
        ),
        (
            {"preallocate": "yes"},
            "Invalid value yes for configuration preallocate: Expected value to be either true or false",
        ),
        (
            {"compression.gzip.level": "0"},
            "Invalid value 0 for configuration compression.gzip.level: Value must be between 1 and 9 or equal to -1",
        ),
        (
            {"compression.type": "GZIP"},
            "Invalid value GZIP for configuration compression.type: String must be one of: uncompressed, zstd, lz4, "
            "snappy, gzip, producer",
        ),
        (
            {"leader.replication.throttled.replicas": "0:1,*"},
            "Invalid value [0:1, *] for configuration leader.replication.throttled.replicas: "
            "leader.replication.throttled.replicas must be the literal '*' or a list of replicas in the following "
            "format: [partitionId]:[brokerId],[partitionId]:[brokerId],...",
        ),
        (
            {"remote.storage.enable": "true"},
            "Tiered Storage functionality is disabled in the broker. Topic cannot be configured with remote log "
            "storage.",
        ),
        (
            {"min.compaction.lag.ms": "100", "max.compaction.lag.ms": "50"},
            "conflict topic config setting min.compaction.lag.ms (100) > max.compaction.lag.ms (50)",
        ),
        (
            {"max.compaction.lag.ms": "0"},
            "Invalid value 0 for configuration max.compaction.lag.ms: Value must be at least 1",
        ),
    ],
)
def test_invalid_values_are_refused_in_kafkas_words(configs: dict[str, str | None], message: str) -> None:
    with pytest.raises(InvalidConfigError) as refused:
        validate_topic_configs(configs)
    assert str(refused.value) == message


# Kafka 4.4 shows these values, set by AlterConfigs, like this in DescribeConfigs.
@pytest.mark.parametrize(
    ("name", "raw", "shown"),
    [
        ("retention.bytes", " 77 ", "77"),
        ("retention.ms", "+5", "5"),
        ("retention.bytes", "-9223372036854775808", "-9223372036854775808"),
        ("cleanup.policy", "delete,delete", "delete"),
        ("cleanup.policy", "compact, delete,compact", "compact,delete"),
        ("cleanup.policy", "", ""),
        ("min.cleanable.dirty.ratio", "1e-5", "1.0E-5"),
        ("min.cleanable.dirty.ratio", "1", "1.0"),
        ("min.cleanable.dirty.ratio", "0x1p-3", "0.125"),
        ("min.cleanable.dirty.ratio", "0.12345678901", "0.12345678901"),
        ("min.cleanable.dirty.ratio", "NaN", "NaN"),
        ("preallocate", " TRUE ", "true"),
        ("compression.type", " gzip ", "gzip"),
        ("leader.replication.throttled.replicas", " 0:1 , 1:1 ", "0:1,1:1"),
        ("leader.replication.throttled.replicas", "0:1,0:1", "0:1,0:1"),
        ("leader.replication.throttled.replicas", "0:1,", "0:1,"),
        ("leader.replication.throttled.replicas", "*", "*"),
        ("internal.segment.bytes", "1000", "1000"),
    ],
)
def test_values_are_kept_as_kafka_shows_them(name: str, raw: str, shown: str) -> None:
    assert validate_topic_configs({name: raw}) == {name: shown}


def test_an_empty_cleanup_policy_neither_deletes_nor_compacts() -> None:
    config = LogConfig().with_overrides({"cleanup.policy": ""})
    assert config.cleanup_policy == () and not config.delete_enabled and not config.compact_enabled


def test_internal_segment_bytes_wins_over_segment_bytes() -> None:
    config = LogConfig().with_overrides({"internal.segment.bytes": "1000", "segment.bytes": "2097152"})
    assert config.segment_bytes == 1000


def test_timestamp_window_configs_feed_the_log_config() -> None:
    config = LogConfig().with_overrides(
        {"message.timestamp.before.max.ms": "60000", "message.timestamp.after.max.ms": "0"}
    )
    assert (config.message_timestamp_before_max_ms, config.message_timestamp_after_max_ms) == (60_000, 0)
    assert (LogConfig().message_timestamp_before_max_ms, LogConfig().message_timestamp_after_max_ms) == (
        INT64_MAX,
        HOUR,
    )


def test_the_conflict_check_merges_the_broker_defaults() -> None:
    defaults = topic_defaults({"log.cleaner.max.compaction.lag.ms": 50})
    with pytest.raises(InvalidConfigError, match=r"min.compaction.lag.ms \(100\) > max.compaction.lag.ms \(50\)"):
        validate_topic_configs({"min.compaction.lag.ms": "100"}, defaults)


def test_every_topic_key_kafka_lists() -> None:
    """Kafka 4.4's LogConfig.nonInternalConfigNames, with DescribeConfigs' types (seen from the reference broker)."""
    from storage.config import TOPIC_CONFIGS
    from storage.config_def import ConfigType as T

    kafka = {
        "cleanup.policy": T.LIST, "compression.gzip.level": T.INT, "compression.lz4.level": T.INT,
        "compression.type": T.STRING, "compression.zstd.level": T.INT, "delete.retention.ms": T.LONG,
        "errors.deadletterqueue.group.enable": T.BOOLEAN, "file.delete.delay.ms": T.LONG, "flush.messages": T.LONG,
        "flush.ms": T.LONG, "follower.replication.throttled.replicas": T.LIST, "index.interval.bytes": T.INT,
        "leader.replication.throttled.replicas": T.LIST, "local.retention.bytes": T.LONG,
        "local.retention.ms": T.LONG, "max.compaction.lag.ms": T.LONG, "max.decompressed.message.bytes": T.INT,
        "max.message.bytes": T.INT, "message.timestamp.after.max.ms": T.LONG,
        "message.timestamp.before.max.ms": T.LONG, "message.timestamp.type": T.STRING,
        "min.cleanable.dirty.ratio": T.DOUBLE, "min.compaction.lag.ms": T.LONG, "min.insync.replicas": T.INT,
        "preallocate": T.BOOLEAN, "remote.copy.lag.bytes": T.LONG, "remote.copy.lag.ms": T.LONG,
        "remote.log.copy.disable": T.BOOLEAN, "remote.log.delete.on.disable": T.BOOLEAN,
        "remote.storage.enable": T.BOOLEAN, "retention.bytes": T.LONG, "retention.ms": T.LONG,
        "segment.bytes": T.INT, "segment.index.bytes": T.INT, "segment.jitter.ms": T.LONG, "segment.ms": T.LONG,
        "unclean.leader.election.enable": T.BOOLEAN,
    }  # fmt: skip
    assert {name: key.type for name, key in TOPIC_CONFIGS.items() if not key.internal} == kafka
    assert all(key.doc and not key.sensitive for key in TOPIC_CONFIGS.values())
    assert [s.name for s in TOPIC_CONFIGS["retention.ms"].synonyms] == [
        "log.retention.ms",
        "log.retention.minutes",
        "log.retention.hours",
    ]
