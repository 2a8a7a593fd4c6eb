"""pytest plugin (entry point `pytest11`): a real group-broker for your tests, with time and faults under control.

    def test_my_consumer_survives_a_dead_peer(group_broker):
        ...  # point your Kafka client at group_broker.bootstrap_servers
        group_broker.advance(10_000)           # session timeouts pass, without sleeping
        group_broker.wait_for_group_blocking("my-group", state="Stable", members=1)

The broker runs in this process, on its own thread and event loop, so blocking clients (kafka-python,
confluent-kafka) and asyncio clients (aiokafka) both work. Override settings per test or module with the
`group_broker_config` fixture (Kafka config names), and secure the listener with `group_broker_security`:

    @pytest.mark.parametrize("group_broker_security", ["PLAINTEXT", "mTLS"])
    def test_my_client_over_tls(group_broker):
        producer = KafkaProducer(bootstrap_servers=group_broker.bootstrap_servers,
                                 **group_broker.client_settings.kafka_python())

This module is a leaf, loaded by every pytest run where group-broker is installed: it imports pytest and the
light handle only; the broker itself is imported when a test first uses the `group_broker` fixture.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from toolkit.handle import FrozenTimeError, GroupBrokerHandle, GroupNotReadyError, TransactionNotReadyError

if TYPE_CHECKING:
    from toolkit.security import Security

__all__ = [
    "FrozenTimeError",
    "GroupBrokerHandle",
    "GroupNotReadyError",
    "TransactionNotReadyError",
    "group_broker",
    "group_broker_config",
    "group_broker_security",
]


@pytest.fixture
def group_broker_config() -> dict[str, str]:
    """Kafka settings for the `group_broker` fixture; override this fixture to change them."""
    return {}


@pytest.fixture
def group_broker_security() -> str | Security:
    """How the `group_broker` fixture's listener is secured: "PLAINTEXT" (the default), "SSL" (TLS), "mTLS" (TLS
    with a client certificate, principal `User:CN=client`), "SASL_PLAINTEXT" (PLAIN), "SASL_SSL" (SCRAM-SHA-512 over
    TLS), a mechanism of your choice ("SASL_SSL:SCRAM-SHA-256"), each with the user alice (principal `User:alice`),
    or a `toolkit.security.Security` (your own user). Override the fixture, or
    parametrize it: `@pytest.mark.parametrize("group_broker_security", ["PLAINTEXT", "mTLS"])`. Clients take their
    settings from `group_broker.client_settings`."""
    return "PLAINTEXT"


@pytest.fixture
def group_broker(
    group_broker_config: dict[str, str], group_broker_security: str | Security
) -> Iterator[GroupBrokerHandle]:
    """A fresh broker on an ephemeral 127.0.0.1 port, recording every request, stopped after the test."""
    from toolkit.embedded import EmbeddedBroker  # the whole server: only once a test asks for a broker

    embedded = EmbeddedBroker(group_broker_config, security=group_broker_security).start()
    embedded.call(lambda: setattr(embedded.kit.recorder, "enabled", True))
    try:
        yield GroupBrokerHandle(embedded)
    finally:
        embedded.stop()
