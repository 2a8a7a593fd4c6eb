"""DescribeCluster and DescribeTopicPartitions: the cluster and its topics as the admin clients' describe calls
(Java `describeCluster` / `describeTopics`, librdkafka `DescribeCluster` / `DescribeTopics`) see them.

Answers follow Kafka 4.4's broker (AuthHelper.computeDescribeClusterResponse, DescribeTopicPartitionsRequestHandler)
field by field; the differential scenarios (tests/differential/scenarios/cluster_admin.py) compare them.
"""

from __future__ import annotations

from broker import authorized_operations
from broker.cluster import ClusterView
from broker.context import RequestContext
from broker.dispatch import Dispatcher
from broker.group_topics import INTERNAL_TOPICS
from broker.leader_epochs import leader_epoch_of
from broker.leadership import NO_LEADER
from broker.topic_pages import TopicSlice, page
from protocol.errors import ErrorCode
from protocol.messages.describe_cluster import DescribeClusterBroker, DescribeClusterRequest, DescribeClusterResponse
from protocol.messages.describe_topic_partitions import (
    Cursor,
    DescribeTopicPartitionsRequest,
    DescribeTopicPartitionsResponse,
    DescribeTopicPartitionsResponsePartition,
    DescribeTopicPartitionsResponseTopic,
)
from protocol.registry import ApiKey
from storage.errors import StorageError
from storage.log_manager import LogManager
from storage.topics import TopicInfo, validate_topic_name

#: DescribeCluster's EndpointType (KIP-919): this broker answers for brokers; a controller would for controllers.
BROKER_ENDPOINTS, CONTROLLER_ENDPOINTS = 1, 2
#: `max.request.partition.size.limit`'s default: the most partitions one DescribeTopicPartitions answer holds,
#: whatever the client asks for.
MAX_PARTITIONS_PER_ANSWER = 2000


class DescribeHandlers:
    def __init__(self, logs: LogManager, cluster: ClusterView) -> None:
        self._logs = logs
        self._cluster = cluster

    def register(self, d: Dispatcher) -> None:
        d.register(ApiKey.DESCRIBE_CLUSTER, self.describe_cluster)
        d.register(ApiKey.DESCRIBE_TOPIC_PARTITIONS, self.describe_topic_partitions)

    # -- DescribeCluster ---------------------------------------------------------------------------------------

    async def describe_cluster(self, ctx: RequestContext, request: DescribeClusterRequest) -> DescribeClusterResponse:
        """Every node (none is ever fenced, so `include_fenced_brokers` changes nothing), the controller, and the
        cluster's authorized operations when asked. v1+ may ask for controller endpoints, which a broker refuses:
        MISMATCHED_ENDPOINT_TYPE, or UNSUPPORTED_ENDPOINT_TYPE for a type that does not exist."""
        if request.endpoint_type == CONTROLLER_ENDPOINTS:
            return DescribeClusterResponse(
                error_code=ErrorCode.MISMATCHED_ENDPOINT_TYPE,
                error_message="The request was sent to an endpoint of type BROKER, but we wanted an endpoint of "
                "type CONTROLLER",
            )
        if request.endpoint_type != BROKER_ENDPOINTS:
            return DescribeClusterResponse(
                error_code=ErrorCode.UNSUPPORTED_ENDPOINT_TYPE,
                error_message=f"Unsupported endpoint type {request.endpoint_type}",
            )
        cluster = self._cluster
        return DescribeClusterResponse(
            endpoint_type=BROKER_ENDPOINTS,
            cluster_id=cluster.cluster_id,
            controller_id=cluster.controller_id,
            brokers=[
                DescribeClusterBroker(broker_id=n.node_id, host=n.host, port=n.port, rack=n.rack, is_fenced=False)
                for n in cluster.nodes()
            ],
            cluster_authorized_operations=authorized_operations.CLUSTER
            if request.include_cluster_authorized_operations
            else authorized_operations.NOT_REQUESTED,
        )

    # -- DescribeTopicPartitions -------------------------------------------------------------------------------

    async def describe_topic_partitions(
        self, ctx: RequestContext, request: DescribeTopicPartitionsRequest
    ) -> DescribeTopicPartitionsResponse:
        """The named topics (none: every topic), in name order from the cursor on, at most
        `response_partition_limit` partitions (1 to 2000) per answer, and the cursor of the next answer.

        A cursor whose topic is not among the named ones, or whose partition index is negative, is INVALID_REQUEST
        on every named topic (as Kafka's error response puts it). A named topic that does not exist is
        UNKNOWN_TOPIC_OR_PARTITION, or INVALID_TOPIC_EXCEPTION when its name is not a legal one.
        """
        cursor = request.cursor
        start_name = cursor.topic_name if cursor is not None else ""
        every_topic = not request.topics
        wanted = [info.name for info in self._logs.topics()] if every_topic else [t.name for t in request.topics]
        names = sorted({name for name in wanted if name >= start_name})
        if cursor is not None and ((not every_topic and cursor.topic_name not in names) or cursor.partition_index < 0):
            return _refused(request, ErrorCode.INVALID_REQUEST)

        def first_partition(name: str) -> int:
            return cursor.partition_index if cursor is not None and name == cursor.topic_name else 0

        def partition_count(name: str) -> int | None:
            info = self._logs.topic(name)
            return None if info is None else info.partitions

        limit = max(1, min(MAX_PARTITIONS_PER_ANSWER, request.response_partition_limit))
        answer = page(names, partition_count, first_partition, limit, skip_missing=every_topic)
        response = DescribeTopicPartitionsResponse(topics=[self._described(t) for t in answer.topics])
        if answer.next_cursor is not None:
            name, partition = answer.next_cursor
            response.next_cursor = Cursor(topic_name=name, partition_index=partition)
        return response

    def _described(self, topic: TopicSlice) -> DescribeTopicPartitionsResponseTopic:
        info = self._logs.topic(topic.name)
        if topic.partitions is None or info is None:
            return DescribeTopicPartitionsResponseTopic(
                error_code=_missing_topic_error(topic.name),
                name=topic.name,
                is_internal=topic.name in INTERNAL_TOPICS,
                topic_authorized_operations=authorized_operations.TOPIC,
            )
        return DescribeTopicPartitionsResponseTopic(
            name=info.name,
            topic_id=info.topic_id,
            is_internal=info.name in INTERNAL_TOPICS,
            partitions=[self._partition(info, index) for index in topic.partitions],
            topic_authorized_operations=authorized_operations.TOPIC,
        )

    def _partition(self, info: TopicInfo, index: int) -> DescribeTopicPartitionsResponsePartition:
        state = self._cluster.partition_state(info.name, index)
        return DescribeTopicPartitionsResponsePartition(
            error_code=ErrorCode.LEADER_NOT_AVAILABLE if state.leader == NO_LEADER else ErrorCode.NONE,
            partition_index=index,
            leader_id=state.leader,
            leader_epoch=leader_epoch_of(self._logs, info.name, index),
            replica_nodes=list(state.replicas),
            isr_nodes=list(state.isr),
            eligible_leader_replicas=[],  # Kafka 4.4 has ELR on (KIP-966): empty lists, not null
            last_known_elr=[],
            offline_replicas=self._cluster.offline_replicas(state),
        )


def _missing_topic_error(name: str) -> ErrorCode:
    try:
        validate_topic_name(name)
    except StorageError:
        return ErrorCode.INVALID_TOPIC_EXCEPTION
    return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def _refused(request: DescribeTopicPartitionsRequest, error: ErrorCode) -> DescribeTopicPartitionsResponse:
    """Kafka's error response: `error` on each named topic, once per name, in the order named."""
    names = dict.fromkeys(t.name for t in request.topics)
    return DescribeTopicPartitionsResponse(
        topics=[DescribeTopicPartitionsResponseTopic(error_code=error, name=name) for name in names]
    )
