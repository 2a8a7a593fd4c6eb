"""The coordinator test context for KIP-848 consumer groups: a topic catalog the test controls, and builders for
ConsumerGroupHeartbeat / ConsumerGroupDescribe with Kafka's defaults, in the style of Kafka's
GroupMetadataManagerTestContext.consumerGroupHeartbeat."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from coordinator.consumer_group.group import ConsumerGroup
from coordinator.consumer_group.topics import StaticTopicCatalog, TopicImage
from coordinator.reply import Reply
from protocol.kafka_uuid import kafka_uuid_from_str, kafka_uuid_to_str
from protocol.messages.consumer_group_describe import ConsumerGroupDescribeRequest, DescribedGroup
from protocol.messages.consumer_group_heartbeat import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    TopicPartitions,
)
from tests.coordinator.harness import CoordinatorTestContext

HEARTBEAT_VERSION = 1

Owned = Mapping[str, Iterable[int]]
"""topic name -> partitions, as a test writes what a member owns."""


def topic_id(name: str) -> str:
    """A stable topic id per name, so tests can predict ids (Kafka's textual form)."""
    return kafka_uuid_to_str(uuid.uuid5(uuid.NAMESPACE_URL, f"topic:{name}"))


class ConsumerGroupTestContext(CoordinatorTestContext):
    """A coordinator with a controllable topic catalog and consumer-group helpers."""

    def __init__(self, topics: Mapping[str, int] | None = None, **kwargs: Any) -> None:
        # Every heartbeat that needs a new target gets one, unless a test is about the assignment interval.
        kwargs.setdefault("consumer_group_assignment_interval_ms", 0)
        self.topics = StaticTopicCatalog(TopicImage(topic_id(n), n, p) for n, p in (topics or {}).items())
        super().__init__(topics=self.topics, **kwargs)

    # -- topics ----------------------------------------------------------------------------------------------

    def create_topic(self, name: str, partitions: int) -> None:
        self.topics.put(TopicImage(topic_id(name), name, partitions))

    def delete_topic(self, name: str) -> None:
        self.topics.delete(name)

    def owned(self, owned: Owned) -> list[TopicPartitions]:
        return [
            TopicPartitions(topic_id=kafka_uuid_from_str(topic_id(t)), partitions=sorted(p)) for t, p in owned.items()
        ]

    # -- requests --------------------------------------------------------------------------------------------

    def cg_heartbeat(
        self,
        group_id: str = "group",
        member_id: str = "",
        member_epoch: int = 0,
        *,
        version: int = HEARTBEAT_VERSION,
        client_id: str = "consumer",
        **fields: Any,
    ) -> Reply[ConsumerGroupHeartbeatResponse]:
        """Send a ConsumerGroupHeartbeat; `owned={topic: [partitions]}` fills TopicPartitions by topic name."""
        owned = fields.pop("owned", None)
        if owned is not None:
            fields["topic_partitions"] = self.owned(owned)
        request = ConsumerGroupHeartbeatRequest(
            group_id=group_id, member_id=member_id, member_epoch=member_epoch, **fields
        )
        reply = self.coordinator.consumer_group_heartbeat(self.ctx(version, client_id), request, self.now_ms)
        self._after()
        return reply

    def join_cg(
        self,
        group_id: str = "group",
        member_id: str = "m1",
        topics: Iterable[str] = ("foo",),
        *,
        rebalance_timeout_ms: int = 30_000,
        **fields: Any,
    ) -> ConsumerGroupHeartbeatResponse:
        """A full joining heartbeat (epoch 0) that must succeed; returns the response."""
        fields.setdefault("subscribed_topic_names", list(topics))
        fields.setdefault("topic_partitions", [])
        response = self.cg_heartbeat(group_id, member_id, 0, rebalance_timeout_ms=rebalance_timeout_ms, **fields).value
        assert response.error_code == 0, response
        return response

    def cg_describe(self, *group_ids: str) -> list[DescribedGroup]:
        request = ConsumerGroupDescribeRequest(group_ids=list(group_ids))
        return self.coordinator.consumer_group_describe(self.ctx(0), request, self.now_ms).groups

    def cg(self, group_id: str = "group") -> ConsumerGroup:
        group = self.coordinator.consumer_group(group_id)
        assert group is not None, f"no consumer group {group_id!r}"
        return group


def assigned(response: ConsumerGroupHeartbeatResponse) -> dict[str, list[int]] | None:
    """The response's assignment as {topic id: partitions}; None when the field is null."""
    if response.assignment is None:
        return None
    return {kafka_uuid_to_str(tp.topic_id): sorted(tp.partitions) for tp in response.assignment.topic_partitions}


def by_name(response: ConsumerGroupHeartbeatResponse, *names: str) -> dict[str, list[int]] | None:
    """The assignment keyed by topic name (for the names given), for readable assertions."""
    ids = assigned(response)
    if ids is None:
        return None
    return {name: ids[topic_id(name)] for name in names if topic_id(name) in ids}
