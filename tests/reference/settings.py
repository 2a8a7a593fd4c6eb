"""The group settings both brokers get when they are compared: Kafka's names, values Kafka accepts.

Timeouts are scaled down so timeline scenarios run in real time in seconds (Kafka has no virtual time), but stay
above Kafka's own floors; the initial delay is kept non-zero so KIP-134's delay is observable on both.
"""

from __future__ import annotations

SHARED_GROUP_SETTINGS: dict[str, str] = {
    "group.initial.rebalance.delay.ms": "300",
    "group.min.session.timeout.ms": "100",
    "group.max.session.timeout.ms": "30000",
    "group.max.size": "5",
    "offsets.topic.num.partitions": "10",
    "num.partitions": "3",
    "auto.create.topics.enable": "false",
}
