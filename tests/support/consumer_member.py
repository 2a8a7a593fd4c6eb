"""A consumer-protocol (KIP-848) group member over the raw wire, one ConsumerGroupHeartbeat at a time.

Tests that need a member to stand still (not revoke, not heartbeat) at a chosen moment drive it by hand: `join`,
then `heartbeat()` reports what it owns, and acknowledges revocations at once (it owns what it was last given).
It reuses the CLI's blocking client, which negotiates versions from ApiVersions like a real client.
"""

from __future__ import annotations

from collections.abc import Sequence

from cli.kafka_client import Connection
from protocol.errors import ErrorCode
from protocol.messages.consumer_group_heartbeat import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    TopicPartitions,
)
from protocol.registry import ApiKey

STEPWISE_SETTINGS = {
    "group.consumer.min.heartbeat.interval.ms": "100",
    "group.consumer.heartbeat.interval.ms": "200",
    # Tests that drive members one heartbeat at a time want each heartbeat that needs a new target to get one, not
    # one per second (Kafka's default assignment interval; its own integration tests set 0 the same way).
    "group.consumer.assignment.interval.ms": "0",
}
"""Broker settings for tests that step consumer-protocol members by hand."""


class WireMember:
    def __init__(self, bootstrap: str, group_id: str, member_id: str, client_id: str | None = None) -> None:
        host, _, port = bootstrap.rpartition(":")
        self.connection = Connection(host, int(port), client_id=client_id or member_id)
        self.group_id = group_id
        self.member_id = member_id
        self.epoch = 0
        self.owned: list[TopicPartitions] = []

    def _send(self, request: ConsumerGroupHeartbeatRequest) -> ConsumerGroupHeartbeatResponse:
        _, response = self.connection.call(ApiKey.CONSUMER_GROUP_HEARTBEAT, request)
        if response.error_code == ErrorCode.NONE:
            self.epoch = response.member_epoch
            if response.assignment is not None:
                self.owned = response.assignment.topic_partitions
        return response  # type: ignore[no-any-return]

    def join(self, topics: Sequence[str], rebalance_timeout_ms: int = 30_000) -> ConsumerGroupHeartbeatResponse:
        return self._send(
            ConsumerGroupHeartbeatRequest(
                group_id=self.group_id,
                member_id=self.member_id,
                member_epoch=0,
                rebalance_timeout_ms=rebalance_timeout_ms,
                subscribed_topic_names=list(topics),
                topic_partitions=[],
            )
        )

    def heartbeat(self) -> ConsumerGroupHeartbeatResponse:
        return self._send(
            ConsumerGroupHeartbeatRequest(
                group_id=self.group_id,
                member_id=self.member_id,
                member_epoch=self.epoch,
                topic_partitions=list(self.owned),
            )
        )

    def owned_partitions(self) -> int:
        return sum(len(tp.partitions) for tp in self.owned)

    def close(self) -> None:
        self.connection.close()
