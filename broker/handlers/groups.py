"""The group APIs: FindCoordinator answered by `coordinator.routing` over the cluster view (for groups and
transactional ids), everything else a thin bridge (`bridge.py`) to the sans-IO group coordinator."""

from __future__ import annotations

from collections.abc import Callable, Mapping
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
from protocol.registry import ApiKey

# What Kafka 4.4 reports for a group when asked (DescribeGroups v3+) and no authorizer is configured: every
# operation a group supports (AclEntry.supportedOperations(GROUP) = READ, DELETE, DESCRIBE, DESCRIBE_CONFIGS,
# ALTER_CONFIGS; the config operations came with KIP-848's group configs), as a bit field of AclOperation codes
# (READ 3, DELETE 6, DESCRIBE 8, DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11) = 3400, as the differential suite shows.
DescribeRequest = DescribeGroupsRequest | ConsumerGroupDescribeRequest
DescribeResponse = DescribeGroupsResponse | ConsumerGroupDescribeResponse

GROUP_AUTHORIZED_OPERATIONS = (1 << 3) | (1 << 6) | (1 << 8) | (1 << 10) | (1 << 11)


#: Versions Kafka 4.4 defines that these handlers do not serve yet (issue #16): TxnOffsetCommit v5-6.
_CAPPED: dict[ApiKey, tuple[int, int]] = {
    ApiKey.TXN_OFFSET_COMMIT: (0, 4),
}
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
    ) -> None:
        self._coordinator = coordinator
        self._cluster = cluster
        self._clock = clock
        self._rearm = rearm
        self._coordinator_topics = coordinator_topics
        self._topic_ids = topic_ids

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
            by_id = _BY_TOPIC_ID.get(api_key)
            if by_id is not None:
                handler = by_id(handler, self._topic_ids)
            d.register(api_key, handler, _CAPPED.get(api_key))
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
