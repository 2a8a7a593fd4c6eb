"""The broker an end-to-end test written for both group-broker and the reference Kafka runs against.

The `e2e_target` fixture (conftest.py) picks it: group-broker by default, Apache Kafka with `--e2e-broker=kafka`.
"""

from __future__ import annotations

import ssl
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass

import pytest

from tests.e2e.scenario import explained_by_broker
from tests.reference.kafka import ReferenceKafka, unavailable_reason
from tests.support.broker_process import BrokerProcess, running_broker

# Kafka's names, values both brokers accept: KIP-848 members heartbeat every 500 ms and a static member has 10 s to
# come back; classic members (the rolling upgrade starts with them) rebalance without KIP-134's initial delay.
CONSUMER_PROTOCOL_SETTINGS = {
    "group.initial.rebalance.delay.ms": "0",
    "group.min.session.timeout.ms": "500",
    "offsets.topic.num.partitions": "10",
    "group.consumer.heartbeat.interval.ms": "500",
    "group.consumer.min.heartbeat.interval.ms": "500",
    "group.consumer.session.timeout.ms": "10000",
    "group.consumer.min.session.timeout.ms": "3000",
}


@dataclass(frozen=True, slots=True)
class E2ETarget:
    """Where the clients connect; `broker` is the group-broker process (its log explains failures), None on Kafka."""

    bootstrap: str
    broker: BrokerProcess | None


def explained(target: E2ETarget, group: str) -> AbstractContextManager[None]:
    """On group-broker, a failed assertion carries the coordinator's events for the group; Kafka's log is its own."""
    return nullcontext() if target.broker is None else explained_by_broker(target.broker, group)


@contextmanager
def bootstrap_with(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    settings: Mapping[str, str],
    client_ssl: ssl.SSLContext | None = None,
) -> Iterator[str]:
    """The bootstrap of a broker started with ``settings`` for a module: group-broker, or the reference Kafka with
    ``--e2e-broker=kafka`` (``client_ssl``: how its readiness probe connects when the settings make it SSL)."""
    if request.config.getoption("--e2e-broker") == "kafka":
        reason = unavailable_reason()
        if reason is not None:
            pytest.fail(f"--e2e-broker=kafka: {reason}", pytrace=False)
        kafka = ReferenceKafka(tmp_path_factory.mktemp("reference-kafka"), dict(settings), client_ssl)
        kafka.start()
        try:
            yield kafka.bootstrap
        finally:
            kafka.stop()
        return
    with running_broker(tmp_path_factory.mktemp("broker-data"), dict(settings)) as broker:
        yield broker.bootstrap
