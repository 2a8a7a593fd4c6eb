"""The transaction coordinator's settings: Kafka's names and defaults (T2, T45), validated like the group's."""

from __future__ import annotations

import pytest

from broker.config import BrokerConfig, ConfigError
from coordinator.config import ALL_KAFKA_PROPERTIES, TransactionConfig
from coordinator.config import ConfigError as CoordinatorConfigError

#: Kafka 4.4's names and defaults (TransactionStateManagerConfig, TransactionLogConfig; rules T2, T45).
KAFKA_DEFAULTS = {
    "transaction.state.log.num.partitions": 50,
    "transaction.max.timeout.ms": 900_000,
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": 10_000,
    "transactional.id.expiration.ms": 604_800_000,
    "transaction.remove.expired.transaction.cleanup.interval.ms": 3_600_000,
}


def test_t45_defaults_are_kafkas() -> None:
    config = TransactionConfig()
    assert config.transaction_state_log_num_partitions == 50
    assert config.transaction_max_timeout_ms == 900_000
    assert config.abort_timed_out_transactions_interval_ms == 10_000
    assert config.transactional_id_expiration_ms == 604_800_000
    assert config.remove_expired_transactional_ids_interval_ms == 3_600_000
    assert config.offsets_topic_num_partitions == 50


def test_t45_from_kafka_properties() -> None:
    config = TransactionConfig.from_kafka_props(
        {
            "transaction.state.log.num.partitions": "7",
            "transaction.max.timeout.ms": "60000",
            "transaction.abort.timed.out.transaction.cleanup.interval.ms": "500",
            "transactional.id.expiration.ms": "1000",
            "transaction.remove.expired.transaction.cleanup.interval.ms": "250",
            "offsets.topic.num.partitions": "3",
            "group.max.size": "9",  # not a transaction setting: ignored, as the group config ignores ours
        }
    )
    assert config.transaction_state_log_num_partitions == 7
    assert config.transaction_max_timeout_ms == 60_000
    assert config.abort_timed_out_transactions_interval_ms == 500
    assert config.transactional_id_expiration_ms == 1000
    assert config.remove_expired_transactional_ids_interval_ms == 250
    assert config.offsets_topic_num_partitions == 3


@pytest.mark.parametrize("key", sorted(KAFKA_DEFAULTS))
def test_t45_a_value_below_one_is_refused(key: str) -> None:
    with pytest.raises(CoordinatorConfigError, match=key.replace(".", r"\.")):
        TransactionConfig.from_kafka_props({key: "0"})


def test_t45_a_value_that_is_not_an_integer_names_its_key() -> None:
    with pytest.raises(CoordinatorConfigError, match=r"transaction\.max\.timeout\.ms must be an integer"):
        TransactionConfig.from_kafka_props({"transaction.max.timeout.ms": "soon"})


def test_t45_the_broker_declares_the_keys_with_kafkas_defaults_and_hands_them_over() -> None:
    config = BrokerConfig()
    for key, default in KAFKA_DEFAULTS.items():
        assert config[key] == default, key
        assert key in ALL_KAFKA_PROPERTIES, key
    assert config["transaction.state.log.segment.bytes"] == 104_857_600
    assert config["transaction.state.log.load.buffer.size"] == 5_242_880
    assert config["transaction.partition.verification.enable"] is True
    assert config["transaction.two.phase.commit.enable"] is False
    overridden = BrokerConfig({"transaction.max.timeout.ms": "1234"})
    assert TransactionConfig.from_kafka_props(overridden.coordinator_properties()).transaction_max_timeout_ms == 1234


def test_t45_the_broker_refuses_a_bad_transaction_setting_at_startup() -> None:
    with pytest.raises(ConfigError, match=r"transaction\.state\.log\.num\.partitions"):
        BrokerConfig({"transaction.state.log.num.partitions": "0"})
