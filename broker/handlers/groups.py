"""The group APIs: FindCoordinator answered by `coordinator.routing` over the cluster view (for groups and
transactional ids), everything else a thin bridge (`bridge.py`) to the sans-IO group coordinator."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from broker.clock import BrokerClock
from broker.cluster import ClusterView
from broker.context import RequestContext
from broker.dispatch import Dispatcher
from broker.handlers.bridge import CoordinatorMethod, Handler, bridge
from broker.handlers.offsets_by_id import TopicIds, offset_commit_by_id, offset_fetch_by_id, txn_offset_commit_by_id
from coordinator.coordinator import GroupCoordinator
from coordinator.routing import CoordinatorTopic, find_coordinator
from protocol.errors import ErrorCode
from protocol.messages.consumer_group_describe import ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse
from protocol.messages.consumer_group_heartbeat import ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse
from protocol.messages.describe_groups import DescribeGroupsRequest, DescribeGroupsResponse
from protocol.messages.find_coordinator import FindCoordinatorRequest, FindCoordinatorResponse
from protocol.messages.txn_offset_commit import (
    TxnOffsetCommitRequest,
    TxnOffsetCommitResponse,
    TxnOffsetCommitResponsePartition,
    TxnOffsetCommitResponseTopic,
)
from protocol.registry import ApiKey

# What Kafka 4.4 reports for a group when asked (DescribeGroups v3+) and no authorizer is configured: every
# operation a group supports (AclEntry.supportedOperations(GROUP) = READ, DELETE, DESCRIBE, DESCRIBE_CONFIGS,
# ALTER_CONFIGS; the config operations came with KIP-848's group configs), as a bit field of AclOperation codes
# (READ 3, DELETE 6, DESCRIBE 8, DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11) = 3400, as the differential suite shows.
DescribeRequest = DescribeGroupsRequest | ConsumerGroupDescribeRequest
DescribeResponse = DescribeGroupsResponse | ConsumerGroupDescribeResponse

GROUP_AUTHORIZED_OPERATIONS = (1 << 3) | (1 << 6) | (1 << 8) | (1 << 10) | (1 << 11)


#: TxnOffsetCommit adds the group's offsets partition to the transaction itself from this version on (KIP-890).
TXN_OFFSET_COMMIT_IMPLICIT_ADD = 5
#: Adds a TxnOffsetCommit's group partition to its transaction: NONE, or the error for every partition.
OffsetsAdder = Callable[[TxnOffsetCommitRequest], Awaitable[ErrorCode]]
#: The offset APIs whose newest versions name topics by id, resolved at this edge (`offsets_by_id`).
_BY_TOPIC_ID = {
    ApiKey.OFFSET_COMMIT: offset_commit_by_id,
    ApiKey.OFFSET_FETCH: offset_fetch_by_id,
    ApiKey.TXN_OFFSET_COMMIT: txn_offset_commit_by_id,
}


class GroupHandlers:
    def __init__(
        self,
        coordinator: GroupCoordinator,
        cluster: ClusterView,
        clock: BrokerClock,
        rearm: Callable[[], None],
        coordinator_topics: Mapping[int, CoordinatorTopic],
        topic_ids: TopicIds,
        add_offsets_partition: OffsetsAdder,
    ) -> None:
        self._coordinator = coordinator
        self._cluster = cluster
        self._clock = clock
        self._rearm = rearm
        self._coordinator_topics = coordinator_topics
        self._topic_ids = topic_ids
        self._add_offsets_partition = add_offsets_partition

    def register(self, d: Dispatcher) -> None:
        d.register(ApiKey.FIND_COORDINATOR, self.find_coordinator)
        coordinator = self._coordinator
        for api_key, method in (
            (ApiKey.JOIN_GROUP, coordinator.join_group),
            (ApiKey.SYNC_GROUP, coordinator.sync_group),
            (ApiKey.HEARTBEAT, coordinator.heartbeat),
            (ApiKey.LEAVE_GROUP, coordinator.leave_group),
            (ApiKey.OFFSET_COMMIT, coordinator.offset_commit),
            (ApiKey.OFFSET_FETCH, coordinator.offset_fetch),
            (ApiKey.LIST_GROUPS, coordinator.list_groups),
            (ApiKey.DELETE_GROUPS, coordinator.delete_groups),
            (ApiKey.OFFSET_DELETE, coordinator.offset_delete),
            (ApiKey.TXN_OFFSET_COMMIT, coordinator.txn_offset_commit),
        ):
            handler = self._bridge(method)
            if api_key == ApiKey.TXN_OFFSET_COMMIT:
                handler = self._adding_offsets_partition(handler)
            by_id = _BY_TOPIC_ID.get(api_key)
            if by_id is not None:
                handler = by_id(handler, self._topic_ids)
            d.register(api_key, handler)
        d.register(
            ApiKey.DESCRIBE_GROUPS,
            self._with_authorized_operations(self._bridge(coordinator.describe_groups)),
        )
        d.register(
            ApiKey.CONSUMER_GROUP_DESCRIBE,
            self._with_authorized_operations(self._bridge(coordinator.consumer_group_describe)),
        )
        d.register(
            ApiKey.CONSUMER_GROUP_HEARTBEAT,
            self._consumer_protocol_only(self._bridge(coordinator.consumer_group_heartbeat)),
        )

    def _bridge(self, method: CoordinatorMethod) -> Handler:
        return bridge(method, self._clock, self._rearm)

    def _adding_offsets_partition(self, commit: Handler) -> Handler:
        """KIP-890 part 2: from TxnOffsetCommit v5 the group's `__consumer_offsets` partition is added to the
        transaction first, as Kafka's group coordinator does for producers that no longer send AddOffsetsToTxn; a
        producer that did (transaction version 0/1) finds it added already. A refusal answers every partition."""

        async def handle(ctx: RequestContext, request: TxnOffsetCommitRequest) -> TxnOffsetCommitResponse:
            if ctx.api_version >= TXN_OFFSET_COMMIT_IMPLICIT_ADD and request.group_id:  # "" is INVALID_GROUP_ID first
                error = await self._add_offsets_partition(request)
                if error != ErrorCode.NONE:
                    return _txn_offset_commit_failed(request, error)
            response: TxnOffsetCommitResponse = await commit(ctx, request)
            return response

        return handle

    def _consumer_protocol_only(
        self, heartbeat: Callable[[RequestContext, Any], Any]
    ) -> Callable[[RequestContext, Any], Any]:
        """K8: with `consumer` left out of group.coordinator.rebalance.protocols, Kafka's API layer answers
        ConsumerGroupHeartbeat UNSUPPORTED_VERSION itself (the API stays advertised)."""
        served = self._coordinator.config.serves("consumer")

        async def handle(ctx: RequestContext, request: ConsumerGroupHeartbeatRequest) -> ConsumerGroupHeartbeatResponse:
            if not served:
                return ConsumerGroupHeartbeatResponse(error_code=ErrorCode.UNSUPPORTED_VERSION)
            response: ConsumerGroupHeartbeatResponse = await heartbeat(ctx, request)
            return response

        return handle

    @staticmethod
    def _with_authorized_operations(
        describe: Callable[[RequestContext, Any], Any],
    ) -> Callable[[RequestContext, Any], Any]:
        """Authorization is the broker's part, not the coordinator's (as in Kafka's KafkaApis): a DescribeGroups
        (or ConsumerGroupDescribe) that asks for authorized operations gets them on every group described without
        error."""

        async def handle(ctx: RequestContext, request: DescribeRequest) -> DescribeResponse:
            response: DescribeResponse = await describe(ctx, request)
            if request.include_authorized_operations:
                for group in response.groups:
                    if group.error_code == ErrorCode.NONE:
                        group.authorized_operations = GROUP_AUTHORIZED_OPERATIONS
            return response

        return handle

    async def find_coordinator(self, ctx: RequestContext, request: FindCoordinatorRequest) -> FindCoordinatorResponse:
        """The coordinator topics always exist here (the broker creates them at startup), so only the cluster
        view's leaders decide the answer."""
        return find_coordinator(request, ctx.api_version, self._coordinator_topics)


def _txn_offset_commit_failed(request: TxnOffsetCommitRequest, error: ErrorCode) -> TxnOffsetCommitResponse:
    """Kafka's TxnOffsetCommitRequest.getErrorResponse: every partition of the request answers `error`."""
    return TxnOffsetCommitResponse(
        topics=[
            TxnOffsetCommitResponseTopic(
                name=topic.name,
                topic_id=topic.topic_id,
                partitions=[
                    TxnOffsetCommitResponsePartition(partition_index=p.partition_index, error_code=error)
                    for p in topic.partitions
                ],
            )
            for topic in request.topics
        ]
    )
