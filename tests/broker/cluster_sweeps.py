"""The version sweep's scenarios (test_metadata_admin.py) for the cluster-level admin APIs of issue #16: at each
advertised version an ordinary request and one refused with a known error. The APIs in depth are in
test_cluster_admin_wire.py."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Protocol

from broker import authorized_operations
from broker.app import Broker
from protocol.errors import ErrorCode
from protocol.messages.alter_partition_reassignments import (
    AlterPartitionReassignmentsRequest,
    ReassignablePartition,
    ReassignableTopic,
)
from protocol.messages.describe_cluster import DescribeClusterRequest
from protocol.messages.describe_quorum import DescribeQuorumRequest, PartitionData, TopicData
from protocol.messages.describe_topic_partitions import Cursor, DescribeTopicPartitionsRequest, TopicRequest
from protocol.messages.elect_leaders import ElectLeadersRequest, TopicPartitions
from protocol.messages.get_telemetry_subscriptions import GetTelemetrySubscriptionsRequest
from protocol.messages.list_partition_reassignments import ListPartitionReassignmentsRequest
from protocol.messages.push_telemetry import PushTelemetryRequest
from protocol.registry import ApiKey
from tests.broker.wire import WireClient


class Sweep(Protocol):
    """What the sweep (test_metadata_admin.Sweep) gives a scenario: the broker and a topic maker."""

    broker: Broker

    def topic(self, suffix: str = "t", partitions: int = 1, configs: dict[str, str] | None = None) -> str: ...


Scenario = Callable[[Sweep, WireClient, int], Awaitable[None]]


async def sweep_describe_cluster(s: Sweep, c: WireClient, v: int) -> None:
    asked = DescribeClusterRequest(include_cluster_authorized_operations=True)
    response = await c.call(ApiKey.DESCRIBE_CLUSTER, v, asked)
    assert (response.error_code, response.controller_id) == (ErrorCode.NONE, s.broker.config.node_id)
    assert [b.broker_id for b in response.brokers] == [s.broker.config.node_id]
    assert response.cluster_authorized_operations == authorized_operations.CLUSTER
    if v >= 1:
        refused = await c.call(ApiKey.DESCRIBE_CLUSTER, v, DescribeClusterRequest(endpoint_type=2))
        assert (refused.error_code, refused.brokers) == (ErrorCode.MISMATCHED_ENDPOINT_TYPE, [])


async def sweep_describe_topic_partitions(s: Sweep, c: WireClient, v: int) -> None:
    topic = s.topic(partitions=2)
    request = DescribeTopicPartitionsRequest(topics=[TopicRequest(name=topic)], response_partition_limit=1)
    response = await c.call(ApiKey.DESCRIBE_TOPIC_PARTITIONS, v, request)
    assert [(t.name, [p.partition_index for p in t.partitions]) for t in response.topics] == [(topic, [0])]
    assert response.next_cursor == Cursor(topic_name=topic, partition_index=1)
    request.cursor = Cursor(topic_name=topic, partition_index=-1)
    [refused] = (await c.call(ApiKey.DESCRIBE_TOPIC_PARTITIONS, v, request)).topics
    assert (refused.name, refused.error_code) == (topic, ErrorCode.INVALID_REQUEST)


async def sweep_elect_leaders(s: Sweep, c: WireClient, v: int) -> None:
    topic = s.topic()
    request = ElectLeadersRequest(topic_partitions=[TopicPartitions(topic=topic, partitions=[0, 1])])
    [result] = (await c.call(ApiKey.ELECT_LEADERS, v, request)).replica_election_results
    assert [(p.partition_id, p.error_code) for p in result.partition_result] == [
        (0, ErrorCode.ELECTION_NOT_NEEDED),
        (1, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
    ]


async def sweep_describe_quorum(s: Sweep, c: WireClient, v: int) -> None:
    request = DescribeQuorumRequest(
        topics=[TopicData(topic_name="__cluster_metadata", partitions=[PartitionData(partition_index=0)])]
    )
    [partition] = (await c.call(ApiKey.DESCRIBE_QUORUM, v, request)).topics[0].partitions
    assert (partition.error_code, partition.leader_id) == (ErrorCode.NONE, s.broker.config.node_id)
    request.topics[0].partitions[0].partition_index = 1
    [refused] = (await c.call(ApiKey.DESCRIBE_QUORUM, v, request)).topics[0].partitions
    assert refused.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


async def sweep_list_partition_reassignments(s: Sweep, c: WireClient, v: int) -> None:
    response = await c.call(ApiKey.LIST_PARTITION_REASSIGNMENTS, v, ListPartitionReassignmentsRequest())
    assert (response.error_code, response.topics) == (ErrorCode.NONE, [])


async def sweep_alter_partition_reassignments(s: Sweep, c: WireClient, v: int) -> None:
    topic = s.topic()
    node = s.broker.config.node_id
    request = AlterPartitionReassignmentsRequest(
        topics=[
            ReassignableTopic(
                name=topic,
                partitions=[
                    ReassignablePartition(partition_index=0, replicas=[node]),
                    ReassignablePartition(partition_index=0, replicas=[node + 1]),
                ],
            )
        ]
    )
    [result] = (await c.call(ApiKey.ALTER_PARTITION_REASSIGNMENTS, v, request)).responses
    assert [p.error_code for p in result.partitions] == [ErrorCode.NONE, ErrorCode.INVALID_REPLICA_ASSIGNMENT]


async def sweep_get_telemetry_subscriptions(s: Sweep, c: WireClient, v: int) -> None:
    response = await c.call(ApiKey.GET_TELEMETRY_SUBSCRIPTIONS, v, GetTelemetrySubscriptionsRequest())
    assert response.error_code == ErrorCode.NONE and response.client_instance_id.int
    again = GetTelemetrySubscriptionsRequest(client_instance_id=response.client_instance_id)
    throttled = await c.call(ApiKey.GET_TELEMETRY_SUBSCRIPTIONS, v, again)
    assert throttled.error_code == ErrorCode.THROTTLING_QUOTA_EXCEEDED


async def sweep_push_telemetry(s: Sweep, c: WireClient, v: int) -> None:
    got = await c.call(ApiKey.GET_TELEMETRY_SUBSCRIPTIONS, 0, GetTelemetrySubscriptionsRequest())
    push = PushTelemetryRequest(client_instance_id=got.client_instance_id, subscription_id=got.subscription_id)
    assert (await c.call(ApiKey.PUSH_TELEMETRY, v, push)).error_code == ErrorCode.NONE
    push.client_instance_id = uuid.UUID(int=0)
    assert (await c.call(ApiKey.PUSH_TELEMETRY, v, push)).error_code == ErrorCode.INVALID_REQUEST


CLUSTER_SWEEPS: dict[int, Scenario] = {
    ApiKey.DESCRIBE_CLUSTER: sweep_describe_cluster,
    ApiKey.DESCRIBE_TOPIC_PARTITIONS: sweep_describe_topic_partitions,
    ApiKey.ELECT_LEADERS: sweep_elect_leaders,
    ApiKey.DESCRIBE_QUORUM: sweep_describe_quorum,
    ApiKey.LIST_PARTITION_REASSIGNMENTS: sweep_list_partition_reassignments,
    ApiKey.ALTER_PARTITION_REASSIGNMENTS: sweep_alter_partition_reassignments,
    ApiKey.GET_TELEMETRY_SUBSCRIPTIONS: sweep_get_telemetry_subscriptions,
    ApiKey.PUSH_TELEMETRY: sweep_push_telemetry,
}
