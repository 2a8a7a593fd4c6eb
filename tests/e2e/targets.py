"""The broker an end-to-end test written for both group-broker and the reference Kafka runs against.

The `e2e_target` fixture (conftest.py) picks it: group-broker by default, Apache Kafka with `--e2e-broker=kafka`.
"""

from __future__ import annotations

from dataclasses import dataclass

from tests.support.broker_process import BrokerProcess

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
