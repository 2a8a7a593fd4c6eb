"""Cluster and topic administration: Metadata, CreateTopics, DeleteTopics, CreatePartitions (configs: configs.py).

Answers follow Kafka's shapes per version (Metadata v0 "empty list means all topics", v1+ null; topic ids from v10;
CreateTopics v5 echoing partitions, replication factor and configs). Storage errors carry Kafka error codes, so
every refusal here is the error a real broker gives for the same input.
"""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter
from collections.abc import Coroutine, Mapping, Sequence
from typing import Any, TypeVar

import structlog

from broker import authorized_operations
from broker.cluster import ClusterView
from broker.config import BrokerConfig
from broker.config_describe import topic_entries
from broker.config_layers import ConfigSource
from broker.context import RequestContext
from broker.dispatch import Dispatcher
from broker.dynamic_config import DynamicConfigs
from broker.group_topics import INTERNAL_TOPICS
from broker.leader_epochs import leader_epoch_of
from broker.leadership import NO_LEADER
from broker.topics import TopicChanges
from protocol.errors import ErrorCode
from protocol.messages.create_partitions import (
    CreatePartitionsRequest,
    CreatePartitionsResponse,
    CreatePartitionsTopicResult,
)
from protocol.messages.create_topics import (
    CreatableReplicaAssignment,
    CreatableTopicConfigs,
    CreatableTopicResult,
    CreateTopicsRequest,
    CreateTopicsResponse,
)
from protocol.messages.delete_topics import DeletableTopicResult, DeleteTopicsRequest, DeleteTopicsResponse
from protocol.messages.metadata import (
    MetadataRequest,
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
)
from protocol.registry import ApiKey
from storage.errors import StorageError
from storage.log_manager import LogManager
from storage.topics import TopicInfo, validate_topic_name

log = structlog.get_logger("broker.admin")

#: Kafka's `Errors.UNKNOWN_TOPIC_OR_PARTITION.message()`, which DeleteTopics v5+ carries for an unknown name.
UNKNOWN_TOPIC_MESSAGE = "This server does not host this topic-partition."
_TIMED_OUT = "The topic change did not finish within timeout_ms; it goes on and takes effect when done."

_T = TypeVar("_T")


class ClusterHandlers:
    def __init__(
        self,
        config: BrokerConfig,
        logs: LogManager,
        cluster: ClusterView,
        topics: TopicChanges,
        configs: DynamicConfigs,
    ) -> None:
        self._config = config
        self._configs = configs
        self._logs = logs
        self._cluster = cluster
        self._topics = topics
        #: Topic changes in progress; kept referenced so one whose request timed out still runs to its end.
        self._changes: set[asyncio.Task[Any]] = set()

    def register(self, d: Dispatcher) -> None:
        d.register(ApiKey.METADATA, self.metadata)
        d.register(ApiKey.CREATE_TOPICS, self.create_topics)
        d.register(ApiKey.DELETE_TOPICS, self.delete_topics)
        d.register(ApiKey.CREATE_PARTITIONS, self.create_partitions)

    # -- Metadata ----------------------------------------------------------------------------------------------

    def _topic_metadata(self, info: TopicInfo) -> MetadataResponseTopic:
        cluster = self._cluster
        partitions = []
        for index in range(info.partitions):
            state = cluster.partition_state(info.name, index)
            partitions.append(
                MetadataResponsePartition(
                    error_code=ErrorCode.LEADER_NOT_AVAILABLE if state.leader == NO_LEADER else ErrorCode.NONE,
                    partition_index=index,
                    leader_id=state.leader,
                    leader_epoch=leader_epoch_of(self._logs, info.name, index),
                    replica_nodes=list(state.replicas),
                    isr_nodes=list(state.isr),
                    offline_replicas=cluster.offline_replicas(state),
                )
            )
        return MetadataResponseTopic(
            name=info.name,
            topic_id=info.topic_id,
            is_internal=info.name in INTERNAL_TOPICS,
            partitions=partitions,
        )

    async def metadata(self, ctx: RequestContext, request: MetadataRequest) -> MetadataResponse:
        """v13's top-level error code stays NONE: Kafka 4.4's broker never sets it (KIP-1102 reserves it for
        REBOOTSTRAP_REQUIRED). Authorized operations are reported when asked (v8+), for every topic answered,
        refused ones included, as Kafka does without an authorizer."""
        logs = self._logs
        all_topics = request.topics is None or (ctx.api_version == 0 and not request.topics)
        topics: list[MetadataResponseTopic] = []
        if all_topics:
            topics = [self._topic_metadata(info) for info in logs.topics()]
        else:
            by_id = {info.topic_id: info for info in logs.topics()}
            may_create = self._config["auto.create.topics.enable"] and (
                ctx.api_version < 4 or request.allow_auto_topic_creation
            )
            for wanted in request.topics or []:
                if wanted.name is None:
                    info = by_id.get(wanted.topic_id)
                    if info is None:
                        topics.append(
                            MetadataResponseTopic(
                                error_code=ErrorCode.UNKNOWN_TOPIC_ID, name=None, topic_id=wanted.topic_id
                            )
                        )
                    else:
                        topics.append(self._topic_metadata(info))
                    continue
                topics.append(self._lookup_or_create(wanted.name, may_create))
        if request.include_topic_authorized_operations:
            for topic in topics:
                topic.topic_authorized_operations = authorized_operations.TOPIC
        cluster = self._cluster
        return MetadataResponse(
            brokers=[
                MetadataResponseBroker(node_id=n.node_id, host=n.host, port=n.port, rack=n.rack)
                for n in cluster.nodes()
            ],
            cluster_id=cluster.cluster_id,
            controller_id=cluster.controller_id,
            topics=topics,
            cluster_authorized_operations=authorized_operations.CLUSTER
            if request.include_cluster_authorized_operations
            else authorized_operations.NOT_REQUESTED,
        )

    def _lookup_or_create(self, name: str, may_create: bool) -> MetadataResponseTopic:
        info = self._logs.topic(name)
        if info is None and may_create:
            try:
                info = self._topics.create_topic(name, -1, {})
            except StorageError as exc:
                return MetadataResponseTopic(error_code=exc.error_code, name=name)
        if info is None:
            try:
                validate_topic_name(name)
            except StorageError as exc:  # Kafka names an illegal topic as such, creation allowed or not
                return MetadataResponseTopic(error_code=exc.error_code, name=name)
            return MetadataResponseTopic(error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, name=name)
        return self._topic_metadata(info)

    # -- CreateTopics / DeleteTopics / CreatePartitions --------------------------------------------------------

    async def _finish_within(self, change: Coroutine[Any, Any, _T], timeout_ms: int) -> _T | None:
        """Kafka's ``timeout_ms`` for a topic change: wait at most that long (``<= 0``: until it is done).

        None means it timed out (REQUEST_TIMED_OUT); the change is not abandoned but carries on and takes effect
        when done, as a Kafka controller's would. A client that disconnects does not cancel it either.
        """
        task = asyncio.ensure_future(change)
        self._changes.add(task)
        task.add_done_callback(self._change_done)
        if timeout_ms <= 0:
            return await asyncio.shield(task)
        try:
            return await asyncio.wait_for(asyncio.shield(task), timeout_ms / 1000)
        except TimeoutError:
            log.warning("topic_change_timed_out", timeout_ms=timeout_ms)
            return None

    def _change_done(self, task: asyncio.Task[Any]) -> None:
        self._changes.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.info("topic_change_failed", error=str(task.exception()))

    async def create_topics(self, ctx: RequestContext, request: CreateTopicsRequest) -> CreateTopicsResponse:
        # Kafka (ControllerApis.createTopics) refuses a name listed twice: one INVALID_REQUEST result per such
        # name, after the others, and neither occurrence is created.
        counts = Counter(topic.name for topic in request.topics)
        results = []
        for topic in request.topics:
            if counts[topic.name] > 1:
                continue
            result = CreatableTopicResult(name=topic.name, error_message=None)  # Kafka: null unless refused
            results.append(result)
            error, message = self._check_replication(topic.num_partitions, topic.replication_factor, topic.assignments)
            if error:
                result.error_code, result.error_message = error, message
                continue
            partitions = len(topic.assignments) if topic.assignments else topic.num_partitions
            factor = self._assigned_factor(topic.assignments) if topic.assignments else topic.replication_factor
            configs = {c.name: c.value for c in topic.configs}  # a null value is INVALID_CONFIG, as in Kafka
            try:
                if request.validate_only:
                    created: TopicInfo | None = self._topics.validate_new_topic(topic.name, partitions, configs, factor)
                else:
                    creation = self._topics.create_topic_in_slices(topic.name, partitions, configs, factor)
                    created = await self._finish_within(creation, request.timeout_ms)
            except StorageError as exc:
                result.error_code, result.error_message = exc.error_code, str(exc)
                continue
            if created is None:
                result.error_code, result.error_message = ErrorCode.REQUEST_TIMED_OUT, _TIMED_OUT
                continue
            info = created
            result.topic_id = info.topic_id
            if ctx.api_version >= 5:
                result.num_partitions = info.partitions
                result.replication_factor = info.replication_factor
                result.configs = self._created_configs(info, configs)
        results += [
            CreatableTopicResult(name=name, error_code=ErrorCode.INVALID_REQUEST, error_message="Duplicate topic name.")
            for name, count in counts.items()
            if count > 1
        ]
        return CreateTopicsResponse(topics=results)

    def _assigned_factor(self, assignments: Sequence[CreatableReplicaAssignment]) -> int:
        """The replication factor of a manual assignment: its first partition's replica count, within the nodes
        there are (the replicas themselves follow the placement: README, "Differences from Kafka")."""
        return min(max(len(assignments[0].broker_ids), 1), len(self._cluster.nodes()))

    def _check_replication(
        self, num_partitions: int, replication_factor: int, assignments: Sequence[object]
    ) -> tuple[int, str | None]:
        available = len(self._cluster.nodes())
        if assignments and (replication_factor != -1 or num_partitions != -1):
            message = (
                "Both numPartitions or replicationFactor and replicasAssignments were set. "
                "Both cannot be used at the same time."
            )
            return ErrorCode.INVALID_REQUEST, message
        if replication_factor == 0 or replication_factor < -1:
            return ErrorCode.INVALID_REPLICATION_FACTOR, "Replication factor must be larger than 0, or -1"
        if replication_factor > available:
            message = (
                f"Unable to replicate the partition {replication_factor} time(s): The target replication factor of "
                f"{replication_factor} cannot be reached because only {available} broker(s) are registered or some "
                "brokers have all their log directories cordoned."
            )
            return ErrorCode.INVALID_REPLICATION_FACTOR, message
        return ErrorCode.NONE, None

    def _created_configs(self, info: TopicInfo, given: Mapping[str, str | None]) -> list[CreatableTopicConfigs]:
        """CreateTopics v5+: every config of the new topic as DescribeConfigs would list it (even validate_only),
        but an override shown as the request gave it (Kafka echoes " 5 " as " 5 "; DescribeConfigs shows "5")."""
        entries = topic_entries(info, self._configs.layers, self._configs.topic_defaults())
        return [
            CreatableTopicConfigs(
                name=e.name,
                value=given.get(e.name, e.value) if e.source == ConfigSource.DYNAMIC_TOPIC_CONFIG else e.value,
                read_only=e.read_only,
                config_source=e.source,
                is_sensitive=e.sensitive,
            )
            for e in sorted(entries, key=lambda e: e.name)
        ]

    async def delete_topics(self, ctx: RequestContext, request: DeleteTopicsRequest) -> DeleteTopicsResponse:
        wanted: list[tuple[str | None, uuid.UUID | None]] = [(name, None) for name in request.topic_names]
        wanted += [(t.name, t.topic_id) for t in request.topics]
        by_id = {info.topic_id: info.name for info in self._logs.topics()}
        responses = []
        for name, topic_id in wanted:
            result = DeletableTopicResult(name=name)
            responses.append(result)
            resolved = name
            if name is None and topic_id is not None:
                result.topic_id = topic_id  # an unknown id is echoed with its error, as Kafka does
                resolved = by_id.get(topic_id)
            if resolved is None:
                result.error_code = ErrorCode.UNKNOWN_TOPIC_ID
                continue
            result.name = resolved  # v6 by id: Kafka answers with the name the id resolved to
            if not self._config["delete.topic.enable"]:
                result.error_code = ErrorCode.TOPIC_DELETION_DISABLED
                continue
            if resolved in INTERNAL_TOPICS:
                result.error_code, result.error_message = ErrorCode.INVALID_TOPIC_EXCEPTION, "internal topic"
                continue
            try:
                deleted = await self._finish_within(self._topics.delete_topic(resolved), request.timeout_ms)
            except StorageError as exc:
                result.error_code = exc.error_code
                if exc.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
                    result.error_message = UNKNOWN_TOPIC_MESSAGE  # Kafka: the error's own message
                continue
            if deleted is None:
                result.error_code, result.error_message = ErrorCode.REQUEST_TIMED_OUT, _TIMED_OUT
                continue
            if ctx.api_version >= 6:
                result.topic_id = deleted.topic_id
        return DeleteTopicsResponse(responses=responses)

    async def create_partitions(
        self, ctx: RequestContext, request: CreatePartitionsRequest
    ) -> CreatePartitionsResponse:
        results = []
        for topic in request.topics:
            result = CreatePartitionsTopicResult(name=topic.name)
            results.append(result)
            info = self._logs.topic(topic.name)
            if info is None:
                result.error_code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                continue
            error, message = _partition_increase_error(topic.name, info.partitions, topic.count, topic.assignments)
            if error:
                result.error_code, result.error_message = error, message
                continue
            if request.validate_only:
                continue
            try:
                grown = await self._finish_within(
                    self._topics.add_partitions(topic.name, topic.count), request.timeout_ms
                )
            except StorageError as exc:
                result.error_code, result.error_message = exc.error_code, str(exc)
                continue
            if grown is None:
                result.error_code, result.error_message = ErrorCode.REQUEST_TIMED_OUT, _TIMED_OUT
        return CreatePartitionsResponse(results=results)


def _partition_increase_error(
    name: str, current: int, count: int, assignments: Sequence[object] | None
) -> tuple[int, str | None]:
    """CreatePartitions' refusals in Kafka's order and words (ReplicationControlManager.createPartitions): not an
    increase, then a replica assignment (when given, even empty) that does not cover every new partition."""
    if count < current:
        return (
            ErrorCode.INVALID_PARTITIONS,
            f"The topic {name} currently has {current} partition(s); {count} would not be an increase.",
        )
    if count == current:
        return ErrorCode.INVALID_PARTITIONS, f"Topic already has {current} partition(s)."
    added = count - current
    if assignments is not None and len(assignments) != added:
        given = len(assignments)
        message = f"Attempted to add {added} additional partition(s), but only {given} assignment(s) were specified."
        return ErrorCode.INVALID_REPLICA_ASSIGNMENT, message
    return ErrorCode.NONE, None
