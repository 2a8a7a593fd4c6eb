"""The group settings both brokers get when they are compared: Kafka's names, values Kafka accepts.

Timeouts are scaled down so timeline scenarios run in real time in seconds (Kafka has no virtual time), but stay above
Kafka's own floors; the initial delay is kept non-zero so KIP-134's
delay is observable on both."""

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

#: For the retention scenario (#36) only, on a pair of brokers of its own: retention at Kafka's floor of one minute,
#: checked every second. Not in the shared settings, because every check also removes Empty groups that have no
#: offsets left, which would race with the other scenarios' looks at their Empty groups.
RETENTION_SETTINGS: dict[str, str] = {
    **SHARED_GROUP_SETTINGS,
    "offsets.retention.minutes": "1",
    "offsets.retention.check.interval.ms": "1000",
}

#: For the KIP-848 session-timeout scenario only, on a pair of brokers of its own: a consumer-protocol session of
#: 1.5 s (Kafka's default is 45 s, with a floor of 45 s too) and a heartbeat interval below it, as Kafka requires.
CONSUMER_SESSION_SETTINGS: dict[str, str] = {
    **SHARED_GROUP_SETTINGS,
    "group.consumer.session.timeout.ms": "1500",
    "group.consumer.min.session.timeout.ms": "1000",
    "group.consumer.heartbeat.interval.ms": "500",
    "group.consumer.min.heartbeat.interval.ms": "500",
}
