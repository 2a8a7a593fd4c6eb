"""The KIP-848 settings (`group.consumer.*`, `group.coordinator.rebalance.protocols`) with Kafka's defaults and
Kafka's GroupCoordinatorConfig requirements, refused at start-up with the key named."""

from __future__ import annotations

import pytest

from broker.config import BrokerConfig, ConfigError
from coordinator.config import CoordinatorConfig


def test_kafka_4_defaults() -> None:
    config = CoordinatorConfig.from_kafka_props(BrokerConfig().coordinator_properties())
    assert config.consumer_group_session_timeout_ms == 45_000
    assert (config.consumer_group_min_session_timeout_ms, config.consumer_group_max_session_timeout_ms) == (
        45_000,
        60_000,
    )
    assert config.consumer_group_heartbeat_interval_ms == 5_000
    assert (config.consumer_group_min_heartbeat_interval_ms, config.consumer_group_max_heartbeat_interval_ms) == (
        5_000,
        15_000,
    )
    assert config.consumer_group_assignors == ("uniform", "range")
    assert config.consumer_group_migration_policy == "bidirectional"
    assert config.rebalance_protocols == ("classic", "consumer")
    assert config.serves("consumer") and config.serves("classic")


def test_properties_reach_the_coordinator() -> None:
    broker = BrokerConfig(
        {
            "group.consumer.session.timeout.ms": "50000",
            "group.consumer.assignors": "range, Uniform",
            "group.consumer.migration.policy": "UPGRADE",
            "group.coordinator.rebalance.protocols": "classic",
        }
    )
    config = CoordinatorConfig.from_kafka_props(broker.coordinator_properties())
    assert config.consumer_group_session_timeout_ms == 50_000
    assert config.consumer_group_assignors == ("range", "uniform")
    assert config.consumer_group_migration_policy == "upgrade"
    assert not config.serves("consumer")


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"group.consumer.session.timeout.ms": "30000"}, "greater than or equal to group.consumer.min.session"),
        ({"group.consumer.heartbeat.interval.ms": "20000"}, "less than or equal to group.consumer.max.heartbeat"),
        (
            {
                "group.consumer.min.heartbeat.interval.ms": "100",
                "group.consumer.heartbeat.interval.ms": "50000",
                "group.consumer.max.heartbeat.interval.ms": "60000",
            },
            "must be less than group.consumer.session.timeout.ms",
        ),
        ({"group.consumer.assignors": "sticky"}, "unknown assignor 'sticky'"),
        ({"group.consumer.migration.policy": "sideways"}, "must be one of disabled, upgrade"),
        ({"group.coordinator.rebalance.protocols": "consumer"}, "Disabling the 'classic' protocol is not supported"),
        ({"group.coordinator.rebalance.protocols": "classic,share"}, "'share' groups are not served"),
    ],
)
def test_invalid_settings_are_refused_at_startup(props: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        BrokerConfig(props)
