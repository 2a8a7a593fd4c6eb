"""The checks every API makes when an authorizer is configured: Kafka's ACL table (``KafkaApis`` with its
``AuthHelper``, and the "Authorization" table of Kafka's documentation), in one place.

:class:`AccessGuards` is a dispatcher middleware, installed only when ``authorizer.class.name`` is set, so without
an authorizer no request pays for it and every handler answers exactly as before. Each served API has an entry in
:data:`GUARDS` (or is in :data:`UNCHECKED`, the APIs Kafka serves to anyone); a guard asks the authorizer about the
request's resources and then, as ``KafkaApis`` does,

- refuses the whole request with the API's error response (a group API without READ on its group, a transactional
  API without WRITE on its transactional id), or
- passes on only the authorized part (the topics, groups or partitions allowed) and merges the refused ones into
  the handler's answer with TOPIC_/GROUP_AUTHORIZATION_FAILED, where Kafka lists them, or
- filters what the answer may show (Metadata of all topics, ListGroups) and replaces the authorized-operations bit
  fields the handlers fill with "everything" by the principal's own (``AuthHelper.authorizedOperations``).
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from broker.authorization import Access, not_authorized_message
from broker.authorized_operations import NOT_REQUESTED
from broker.connection import CloseConnection
from broker.context import RequestContext
from broker.dispatch import Handler, Route
from broker.group_topics import INTERNAL_TOPICS
from broker.responses import top_level_error_response
from broker.security.acl import AclOperation, ResourceType
from broker.security.authorizer import Authorizer
from protocol.errors import DecodeError, ErrorCode
from protocol.messages import (
    add_offsets_to_txn,
    add_partitions_to_txn,
    alter_configs,
    alter_user_scram_credentials,
    consumer_group_describe,
    consumer_group_heartbeat,
    create_partitions,
    create_topics,
    delete_groups,
    delete_records,
    delete_topics,
    describe_cluster,
    describe_configs,
    describe_groups,
    describe_log_dirs,
    describe_producers,
    describe_topic_partitions,
    describe_transactions,
    describe_user_scram_credentials,
    elect_leaders,
    end_txn,
    fetch,
    find_coordinator,
    heartbeat,
    incremental_alter_configs,
    init_producer_id,
    join_group,
    leave_group,
    list_groups,
    list_offsets,
    metadata,
    offset_commit,
    offset_delete,
    offset_fetch,
    offset_for_leader_epoch,
    produce,
    sync_group,
    txn_offset_commit,
)
from protocol.records import peek_batch_header
from protocol.registry import ApiKey
from storage.log_manager import LogManager

__all__ = ["GUARDS", "UNCHECKED", "AccessGuards", "LogTopics", "Topics"]

_O = AclOperation
_T = ResourceType
ZERO_UUID = uuid.UUID(int=0)
#: FindCoordinator's key types.
GROUP_KEY, TRANSACTION_KEY = 0, 1


class Topics(Protocol):
    """What the guards need to know about topics: which exist, the name of an id, whether Metadata creates."""

    def exists(self, name: str) -> bool: ...

    def name_of(self, topic_id: uuid.UUID) -> str | None: ...

    def auto_create(self) -> bool: ...


class LogTopics:
    """:class:`Topics` from the log manager and the static ``auto.create.topics.enable``."""

    def __init__(self, logs: LogManager, auto_create: bool) -> None:
        self._logs = logs
        self._auto_create = auto_create

    def exists(self, name: str) -> bool:
        return self._logs.topic(name) is not None

    def name_of(self, topic_id: uuid.UUID) -> str | None:
        for info in self._logs.topics():
            if info.topic_id == topic_id:
                return info.name
        return None

    def auto_create(self) -> bool:
        return self._auto_create


Guard = Callable[[Access, RequestContext, Any, Handler, Topics], Awaitable[Any]]


class AccessGuards:
    """The dispatcher middleware that runs each request's guard against ``authorizer``."""

    def __init__(self, authorizer: Authorizer, topics: Topics) -> None:
        self._authorizer = authorizer
        self._topics = topics

    def wraps(self, route: Route) -> bool:
        return route.api_key in GUARDS

    async def __call__(self, ctx: RequestContext, route: Route, request: Any, call_next: Handler) -> Any:
        guard = GUARDS[route.api_key]
        return await guard(Access.of(self._authorizer, ctx), ctx, request, call_next, self._topics)


# -- whole-request refusals ------------------------------------------------------------------------------------


def _group_read(api_key: ApiKey) -> Guard:
    """JoinGroup, SyncGroup, Heartbeat, LeaveGroup: READ on the group, else the API's error response."""
    response_cls = {
        ApiKey.JOIN_GROUP: join_group.JoinGroupResponse,
        ApiKey.SYNC_GROUP: sync_group.SyncGroupResponse,
        ApiKey.HEARTBEAT: heartbeat.HeartbeatResponse,
        ApiKey.LEAVE_GROUP: leave_group.LeaveGroupResponse,
    }[api_key]

    async def guard(access: Access, ctx: RequestContext, request: Any, call_next: Handler, topics: Topics) -> Any:
        if not access.allowed(_O.READ, _T.GROUP, request.group_id):
            return response_cls(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED)
        return await call_next(ctx, request)

    return guard


def _transactional_write(response: Callable[[Any], Any]) -> Guard:
    """EndTxn: WRITE on the transactional id, else TRANSACTIONAL_ID_AUTHORIZATION_FAILED."""

    async def guard(access: Access, ctx: RequestContext, request: Any, call_next: Handler, topics: Topics) -> Any:
        if not access.allowed(_O.WRITE, _T.TRANSACTIONAL_ID, request.transactional_id):
            return response(request)
        return await call_next(ctx, request)

    return guard


async def _init_producer_id(
    access: Access, ctx: RequestContext, request: init_producer_id.InitProducerIdRequest, call_next: Handler, _: Topics
) -> Any:
    """A transactional producer needs WRITE on its transactional id; an idempotent one IDEMPOTENT_WRITE on the
    cluster or WRITE on some topic (KIP-679, ``authorizeByResourceType``), else CLUSTER_AUTHORIZATION_FAILED."""
    if request.transactional_id is not None:
        if not access.allowed(_O.WRITE, _T.TRANSACTIONAL_ID, request.transactional_id):
            return init_producer_id.InitProducerIdResponse(
                error_code=ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, producer_epoch=-1
            )
    elif not (access.cluster(_O.IDEMPOTENT_WRITE) or access.any_allowed(_O.WRITE, _T.TOPIC)):
        return init_producer_id.InitProducerIdResponse(
            error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED, producer_epoch=-1
        )
    return await call_next(ctx, request)


async def _add_offsets_to_txn(
    access: Access,
    ctx: RequestContext,
    request: add_offsets_to_txn.AddOffsetsToTxnRequest,
    call_next: Handler,
    _: Topics,
) -> Any:
    """WRITE on the transactional id, then READ on the group."""
    if not access.allowed(_O.WRITE, _T.TRANSACTIONAL_ID, request.transactional_id):
        return add_offsets_to_txn.AddOffsetsToTxnResponse(error_code=ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    if not access.allowed(_O.READ, _T.GROUP, request.group_id):
        return add_offsets_to_txn.AddOffsetsToTxnResponse(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED)
    return await call_next(ctx, request)


# -- Produce, Fetch, ListOffsets -------------------------------------------------------------------------------


def _transactional(request: produce.ProduceRequest) -> bool:
    """Kafka's ``RequestUtils.hasTransactionalRecords``: some partition's first batch is transactional."""
    for topic in request.topic_data:
        for data in topic.partition_data:
            try:
                if data.records and peek_batch_header(data.records, 0).is_transactional:
                    return True
            except DecodeError:
                continue  # the append refuses it
    return False


async def _produce(
    access: Access, ctx: RequestContext, request: produce.ProduceRequest, call_next: Handler, topics: Topics
) -> Any:
    """Transactional records need WRITE on the transactional id (else every partition is
    TRANSACTIONAL_ID_AUTHORIZATION_FAILED); then each topic needs WRITE, a refused one's partitions answering
    TOPIC_AUTHORIZATION_FAILED after the others. acks=0 has no answer: a refusal closes the connection."""
    refused = None
    transactional = request.transactional_id is not None and _transactional(request)
    if transactional and not access.allowed(_O.WRITE, _T.TRANSACTIONAL_ID, request.transactional_id or ""):
        refused = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    by_id = ctx.api_version >= 13
    names = {id(t): (topics.name_of(t.topic_id) if by_id else t.name) for t in request.topic_data}
    allowed = access.allowed_names(_O.WRITE, _T.TOPIC, (n for n in names.values() if n))
    denied = [t for t in request.topic_data if refused or (names[id(t)] and names[id(t)] not in allowed)]
    if not denied:
        return await call_next(ctx, request)
    if request.acks == 0:
        raise CloseConnection(f"acks=0 produce refused: {refused or ErrorCode.TOPIC_AUTHORIZATION_FAILED}")
    error = refused or ErrorCode.TOPIC_AUTHORIZATION_FAILED
    kept = [t for t in request.topic_data if t not in denied]
    response = produce.ProduceResponse()
    if kept:
        response = await call_next(ctx, dataclasses.replace(request, topic_data=kept))
    response.responses.extend(
        produce.TopicProduceResponse(
            name="" if by_id else t.name,
            topic_id=t.topic_id,
            partition_responses=[
                produce.PartitionProduceResponse(index=p.index, error_code=error, base_offset=-1)
                for p in t.partition_data
            ],
        )
        for t in denied
    )
    return response


async def _fetch(
    access: Access, ctx: RequestContext, request: fetch.FetchRequest, call_next: Handler, topics: Topics
) -> Any:
    """A replica's fetch needs CLUSTER_ACTION; a consumer's READ on each topic. Refused partitions answer
    TOPIC_AUTHORIZATION_FAILED after the others (Kafka's ``erroneous`` partitions), and alone without waiting."""
    replica = request.replica_id if ctx.api_version < 15 else request.replica_state.replica_id
    by_id = ctx.api_version >= 13
    names = {id(t): (topics.name_of(t.topic_id) if by_id else t.topic) for t in request.topics}
    if replica >= 0:
        denied = [] if access.cluster(_O.CLUSTER_ACTION) else list(request.topics)
    else:
        allowed = access.allowed_names(_O.READ, _T.TOPIC, (n for n in names.values() if n))
        denied = [t for t in request.topics if names[id(t)] and names[id(t)] not in allowed]
    if not denied:
        return await call_next(ctx, request)
    errors = [
        fetch.FetchableTopicResponse(
            topic=t.topic,
            topic_id=t.topic_id,
            partitions=[
                fetch.PartitionData(
                    partition_index=p.partition,
                    error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                    high_watermark=-1,
                    records=b"",
                )
                for p in t.partitions
            ],
        )
        for t in denied
    ]
    kept = [t for t in request.topics if t not in denied]
    if not kept:
        return fetch.FetchResponse(responses=errors)
    response = await call_next(ctx, dataclasses.replace(request, topics=kept))
    response.responses.extend(errors)
    return response


FIRST, LAST, ORDER = "first", "last", "order"


@dataclass(frozen=True, slots=True)
class TopicSplit:
    """Where an API's request and response list their topics, for a check per topic (Kafka's
    ``filterByAuthorized``): the refused topics answer ``refused(topic)`` (TOPIC_AUTHORIZATION_FAILED on each
    partition), listed where Kafka's merged response lists them: ``LAST`` (after the served ones), ``FIRST`` or
    in the request's ``ORDER``."""

    operation: AclOperation
    topics: str
    name: str
    response_topics: str
    refused: Callable[[Any], Any]
    order: str = LAST


def _by_topic(split: TopicSplit) -> Guard:
    async def guard(access: Access, ctx: RequestContext, request: Any, call_next: Handler, _: Topics) -> Any:
        return await _split_topics(access, ctx, request, call_next, split)

    return guard


async def _split_topics(
    access: Access, ctx: RequestContext, request: Any, call_next: Handler, split: TopicSplit
) -> Any:
    asked = getattr(request, split.topics) or []
    allowed = access.allowed_names(split.operation, _T.TOPIC, (getattr(t, split.name) for t in asked))
    denied = [t for t in asked if getattr(t, split.name) not in allowed]
    if not denied:
        return await call_next(ctx, request)
    kept = [t for t in asked if getattr(t, split.name) in allowed]
    response = await call_next(ctx, dataclasses.replace(request, **{split.topics: kept}))
    answered = getattr(response, split.response_topics)
    errors = [split.refused(t) for t in denied]
    if split.order == FIRST:
        answered[:0] = errors
    elif split.order == LAST:
        answered.extend(errors)
    else:
        by_name = {getattr(t, split.name): t for t in [*answered, *errors]}
        answered[:] = [by_name[getattr(t, split.name)] for t in asked if getattr(t, split.name) in by_name]
    return response


_TAF = ErrorCode.TOPIC_AUTHORIZATION_FAILED
_LIST_OFFSETS = TopicSplit(
    _O.DESCRIBE,
    "topics",
    "name",
    "topics",
    lambda t: list_offsets.ListOffsetsTopicResponse(
        name=t.name,
        partitions=[
            list_offsets.ListOffsetsPartitionResponse(partition_index=p.partition_index, error_code=_TAF)
            for p in t.partitions
        ],
    ),
)
_DELETE_RECORDS = TopicSplit(
    _O.DELETE,
    "topics",
    "name",
    "topics",
    lambda t: delete_records.DeleteRecordsTopicResult(
        name=t.name,
        partitions=[
            delete_records.DeleteRecordsPartitionResult(
                partition_index=p.partition_index, low_watermark=-1, error_code=_TAF
            )
            for p in t.partitions
        ],
    ),
)
_DESCRIBE_PRODUCERS = TopicSplit(
    _O.READ,
    "topics",
    "name",
    "topics",
    lambda t: describe_producers.TopicResponse(
        name=t.name,
        partitions=[
            describe_producers.PartitionResponse(partition_index=p, error_code=_TAF, error_message=_message(_TAF))
            for p in t.partition_indexes
        ],
    ),
    order=ORDER,
)
_OFFSETS_FOR_EPOCHS = TopicSplit(
    _O.DESCRIBE,
    "topics",
    "topic",
    "topics",
    lambda t: offset_for_leader_epoch.OffsetForLeaderTopicResult(
        topic=t.topic,
        partitions=[
            offset_for_leader_epoch.EpochEndOffset(partition=p.partition, error_code=_TAF) for p in t.partitions
        ],
    ),
)
_OFFSET_DELETE = TopicSplit(
    _O.READ,
    "topics",
    "name",
    "topics",
    lambda t: offset_delete.OffsetDeleteResponseTopic(
        name=t.name,
        partitions=[
            offset_delete.OffsetDeleteResponsePartition(partition_index=p.partition_index, error_code=_TAF)
            for p in t.partitions
        ],
    ),
    order=FIRST,
)


async def _offset_for_leader_epoch(
    access: Access, ctx: RequestContext, request: Any, call_next: Handler, _: Topics
) -> Any:
    """CLUSTER_ACTION on the cluster (what a replica has) allows every topic; else DESCRIBE on each topic (KIP-320's
    consumers), a refused one's partitions answering TOPIC_AUTHORIZATION_FAILED after the others."""
    if access.cluster(_O.CLUSTER_ACTION):
        return await call_next(ctx, request)
    return await _split_topics(access, ctx, request, call_next, _OFFSETS_FOR_EPOCHS)


async def _offset_delete(access: Access, ctx: RequestContext, request: Any, call_next: Handler, _: Topics) -> Any:
    """DELETE on the group (else the whole answer GROUP_AUTHORIZATION_FAILED), then READ on each topic."""
    if not access.allowed(_O.DELETE, _T.GROUP, request.group_id):
        return offset_delete.OffsetDeleteResponse(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED)
    return await _split_topics(access, ctx, request, call_next, _OFFSET_DELETE)


def _cluster_only(api_key: ApiKey, operation: AclOperation) -> Guard:
    """An API Kafka serves only to who may ``operation`` the cluster: else its top-level error (and, for
    ElectLeaders, every partition named) is CLUSTER_AUTHORIZATION_FAILED."""

    async def guard(access: Access, ctx: RequestContext, request: Any, call_next: Handler, _: Topics) -> Any:
        if access.cluster(operation):
            return await call_next(ctx, request)
        response = top_level_error_response(api_key, ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
        if api_key == ApiKey.ELECT_LEADERS:
            response.replica_election_results = [
                elect_leaders.ReplicaElectionResult(
                    topic=t.topic,
                    partition_result=[
                        elect_leaders.PartitionResult(
                            partition_id=p, error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED, error_message=None
                        )
                        for p in t.partitions
                    ],
                )
                for t in request.topic_partitions or []
            ]
        return response

    return guard


async def _describe_log_dirs(access: Access, ctx: RequestContext, request: Any, call_next: Handler, _: Topics) -> Any:
    """DESCRIBE on the cluster, else no directory (v3+: with CLUSTER_AUTHORIZATION_FAILED)."""
    if access.cluster(_O.DESCRIBE):
        return await call_next(ctx, request)
    error = ErrorCode.CLUSTER_AUTHORIZATION_FAILED if ctx.api_version >= 3 else ErrorCode.NONE
    return describe_log_dirs.DescribeLogDirsResponse(error_code=error)


#: The ACL resource a config resource type is checked on (Kafka's ``ConfigResource.Type`` codes): brokers, broker
#: loggers and client metrics on the cluster, topics and groups on themselves.
_CONFIG_RESOURCES = {
    2: (_T.TOPIC, ErrorCode.TOPIC_AUTHORIZATION_FAILED),
    4: (_T.CLUSTER, ErrorCode.CLUSTER_AUTHORIZATION_FAILED),
    8: (_T.CLUSTER, ErrorCode.CLUSTER_AUTHORIZATION_FAILED),
    16: (_T.CLUSTER, ErrorCode.CLUSTER_AUTHORIZATION_FAILED),
    32: (_T.GROUP, ErrorCode.GROUP_AUTHORIZATION_FAILED),
}


def _config_refusal(access: Access, operation: AclOperation, resource_type: int, name: str) -> ErrorCode | None:
    """The error for a config resource ``operation`` is refused on, or None (unknown types go to the handler)."""
    target = _CONFIG_RESOURCES.get(resource_type)
    if target is None:
        return None
    acl_type, error = target
    allowed = access.cluster(operation) if acl_type == _T.CLUSTER else access.allowed(operation, acl_type, name)
    return None if allowed else error


def _configs(operation: AclOperation, result: Callable[[Any, ErrorCode], Any], results_field: str) -> Guard:
    """DescribeConfigs (DESCRIBE_CONFIGS), AlterConfigs and IncrementalAlterConfigs (ALTER_CONFIGS): each
    resource checked on its ACL resource; refused ones answer after the others."""

    async def guard(access: Access, ctx: RequestContext, request: Any, call_next: Handler, _: Topics) -> Any:
        refusals = [_config_refusal(access, operation, r.resource_type, r.resource_name) for r in request.resources]
        if not any(refusals):
            return await call_next(ctx, request)
        kept = [r for r, refusal in zip(request.resources, refusals, strict=True) if refusal is None]
        response = await call_next(ctx, dataclasses.replace(request, resources=kept))
        getattr(response, results_field).extend(
            result(r, refusal) for r, refusal in zip(request.resources, refusals, strict=True) if refusal is not None
        )
        return response

    return guard


def _config_refused(result_cls: Any) -> Callable[[Any, ErrorCode], Any]:
    """A refused config resource's result, with Kafka's message for the error."""

    def refused(resource: Any, error: ErrorCode) -> Any:
        return result_cls(
            error_code=error,
            error_message=_message(error),
            resource_type=resource.resource_type,
            resource_name=resource.resource_name,
        )

    return refused


async def _create_partitions(access: Access, ctx: RequestContext, request: Any, call_next: Handler, _: Topics) -> Any:
    """ALTER on each topic; a refused one answers TOPIC_AUTHORIZATION_FAILED (no message), listed first."""
    return await _split_topics(
        access,
        ctx,
        request,
        call_next,
        TopicSplit(
            _O.ALTER,
            "topics",
            "name",
            "results",
            lambda t: create_partitions.CreatePartitionsTopicResult(name=t.name, error_code=_TAF, error_message=None),
            order=FIRST,
        ),
    )


async def _describe_topic_partitions(
    access: Access, ctx: RequestContext, request: Any, call_next: Handler, _: Topics
) -> Any:
    """DESCRIBE on each topic: a named one refused answers TOPIC_AUTHORIZATION_FAILED, and of all topics only the
    allowed show; authorized operations are the principal's."""
    named = [t.name for t in request.topics]
    allowed = access.allowed_names(_O.DESCRIBE, _T.TOPIC, named)
    kept = [t for t in request.topics if t.name in allowed]
    if named and not kept:  # an empty list would ask for every topic
        response = describe_topic_partitions.DescribeTopicPartitionsResponse()
    else:
        response = await call_next(ctx, dataclasses.replace(request, topics=kept))
    if not request.topics:
        shown = access.allowed_names(_O.DESCRIBE, _T.TOPIC, (t.name for t in response.topics if t.name))
        response.topics = [t for t in response.topics if t.name in shown]
    for topic in response.topics:
        if topic.name is not None and topic.topic_authorized_operations != NOT_REQUESTED:
            topic.topic_authorized_operations = access.operations(_T.TOPIC, topic.name)
    response.topics.extend(
        describe_topic_partitions.DescribeTopicPartitionsResponseTopic(error_code=_TAF, name=n)
        for n in named
        if n not in allowed
    )
    return response


async def _describe_transactions(
    access: Access, ctx: RequestContext, request: Any, call_next: Handler, _: Topics
) -> Any:
    """DESCRIBE on each transactional id (a refused one answers TRANSACTIONAL_ID_AUTHORIZATION_FAILED); the
    partitions of topics the principal may not DESCRIBE are left out."""
    allowed = access.allowed_names(_O.DESCRIBE, _T.TRANSACTIONAL_ID, request.transactional_ids)
    kept = [t for t in request.transactional_ids if t in allowed]
    described: dict[str, Any] = {}
    if kept:
        response = await call_next(ctx, dataclasses.replace(request, transactional_ids=kept))
        described = {s.transactional_id: s for s in response.transaction_states}
    states = []
    for transactional_id in request.transactional_ids:
        state = described.get(transactional_id)
        if state is None:
            state = describe_transactions.TransactionState(
                transactional_id=transactional_id, error_code=ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
            )
        else:
            may = access.allowed_names(_O.DESCRIBE, _T.TOPIC, (t.topic for t in state.topics))
            state.topics = [t for t in state.topics if t.topic in may]
        states.append(state)
    return describe_transactions.DescribeTransactionsResponse(transaction_states=states)


async def _list_transactions(access: Access, ctx: RequestContext, request: Any, call_next: Handler, _: Topics) -> Any:
    """Only the transactional ids the principal may DESCRIBE are listed."""
    response = await call_next(ctx, request)
    allowed = access.allowed_names(
        _O.DESCRIBE, _T.TRANSACTIONAL_ID, (s.transactional_id for s in response.transaction_states)
    )
    response.transaction_states = [s for s in response.transaction_states if s.transactional_id in allowed]
    return response


# -- Metadata and the describe APIs ----------------------------------------------------------------------------


async def _metadata(
    access: Access, ctx: RequestContext, request: metadata.MetadataRequest, call_next: Handler, topics: Topics
) -> Any:
    """Kafka's ``handleTopicMetadataRequest``: a topic needs DESCRIBE to be shown; asked by name without it, it
    answers TOPIC_AUTHORIZATION_FAILED (never whether it exists), and among all topics it is left out. A topic
    Metadata would create needs CREATE on the cluster or on it. Authorized operations are the principal's."""
    all_topics = request.topics is None or (ctx.api_version == 0 and not request.topics)
    denied: list[metadata.MetadataResponseTopic] = []
    if not all_topics:
        wanted = list(request.topics or [])
        named = {id(t): t.name if t.name is not None else topics.name_of(t.topic_id) for t in wanted}
        may_describe = access.allowed_names(_O.DESCRIBE, _T.TOPIC, (n for n in named.values() if n))
        kept = []
        for t in wanted:
            name = named[id(t)]
            if name is None or name in may_describe:
                kept.append(t)
            elif t.name is None:
                denied.append(
                    metadata.MetadataResponseTopic(
                        error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED, name=None, topic_id=t.topic_id
                    )
                )
            else:
                denied.append(
                    metadata.MetadataResponseTopic(error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED, name=name)
                )
        creates = topics.auto_create() and (ctx.api_version < 4 or request.allow_auto_topic_creation)
        missing = [t.name for t in kept if t.name is not None and not topics.exists(t.name)]
        if creates and missing and not access.cluster(_O.CREATE):
            may_create = access.allowed_names(_O.CREATE, _T.TOPIC, missing)
            refused_create = [n for n in missing if n not in may_create]
            kept = [t for t in kept if t.name not in refused_create]
            denied[:0] = [
                metadata.MetadataResponseTopic(
                    error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED, name=n, is_internal=n in INTERNAL_TOPICS
                )
                for n in refused_create
            ]
        request = dataclasses.replace(request, topics=kept)
    response = await call_next(ctx, request)
    if not all_topics and not request.topics:  # v0 reads an empty list as every topic
        response.topics = []
    if all_topics:
        shown = access.allowed_names(_O.DESCRIBE, _T.TOPIC, (t.name for t in response.topics if t.name))
        response.topics = [t for t in response.topics if t.name in shown]
    if request.include_topic_authorized_operations:
        for topic in response.topics:
            if topic.name is not None and topic.topic_authorized_operations != NOT_REQUESTED:
                topic.topic_authorized_operations = access.operations(_T.TOPIC, topic.name)
    response.topics.extend(denied)
    if response.cluster_authorized_operations != NOT_REQUESTED:
        response.cluster_authorized_operations = _cluster_operations(access)
    return response


def _cluster_operations(access: Access) -> int:
    """``computeDescribeClusterResponse``: the cluster's operations if DESCRIBE is allowed, else none."""
    return access.operations(_T.CLUSTER, "kafka-cluster") if access.cluster(_O.DESCRIBE) else 0


async def _describe_cluster(
    access: Access, ctx: RequestContext, request: describe_cluster.DescribeClusterRequest, call_next: Handler, _: Topics
) -> Any:
    response = await call_next(ctx, request)
    if response.cluster_authorized_operations != NOT_REQUESTED:
        response.cluster_authorized_operations = _cluster_operations(access)
    return response


# -- the group APIs --------------------------------------------------------------------------------------------


async def _find_coordinator(
    access: Access, ctx: RequestContext, request: find_coordinator.FindCoordinatorRequest, call_next: Handler, _: Topics
) -> Any:
    """DESCRIBE on each group (or transactional id): a refused key answers GROUP_ (or TRANSACTIONAL_ID_)
    AUTHORIZATION_FAILED, with no coordinator (v4+: per key, listed after the others and with an empty message;
    before: the whole answer, with Kafka's message)."""
    resource, error = (
        (_T.TRANSACTIONAL_ID, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
        if request.key_type == TRANSACTION_KEY
        else (_T.GROUP, ErrorCode.GROUP_AUTHORIZATION_FAILED)
    )
    if ctx.api_version < 4:
        if not access.allowed(_O.DESCRIBE, resource, request.key):
            return find_coordinator.FindCoordinatorResponse(
                error_code=error, error_message=_message(error), node_id=-1, host="", port=-1
            )
        return await call_next(ctx, request)
    allowed = access.allowed_names(_O.DESCRIBE, resource, request.coordinator_keys)
    denied = [k for k in request.coordinator_keys if k not in allowed]
    if not denied:
        return await call_next(ctx, request)
    kept = [k for k in request.coordinator_keys if k in allowed]
    response = find_coordinator.FindCoordinatorResponse()
    if kept:
        response = await call_next(ctx, dataclasses.replace(request, coordinator_keys=kept))
    response.coordinators.extend(
        find_coordinator.Coordinator(key=k, node_id=-1, host="", port=-1, error_code=error, error_message="")
        for k in denied
    )
    return response


#: Kafka's ``Errors`` default messages, which a refusal built from ``Errors.X.exception`` carries.
_MESSAGES = {
    ErrorCode.TOPIC_AUTHORIZATION_FAILED: "Topic authorization failed.",
    ErrorCode.GROUP_AUTHORIZATION_FAILED: "Group authorization failed.",
    ErrorCode.CLUSTER_AUTHORIZATION_FAILED: "Cluster authorization failed.",
    ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED: "Transactional Id authorization failed.",
}


def _message(error: ErrorCode) -> str:
    return _MESSAGES[error]


async def _offset_commit(
    access: Access, ctx: RequestContext, request: offset_commit.OffsetCommitRequest, call_next: Handler, topics: Topics
) -> Any:
    """READ on the group (else every partition GROUP_AUTHORIZATION_FAILED), then READ on each topic: refused
    topics' partitions answer TOPIC_AUTHORIZATION_FAILED, listed first."""
    if not access.allowed(_O.READ, _T.GROUP, request.group_id):
        return _commit_errors(offset_commit, request.topics, ErrorCode.GROUP_AUTHORIZATION_FAILED)
    return await _commit_topics(access, ctx, request, call_next, topics, offset_commit)


async def _commit_topics(
    access: Access, ctx: RequestContext, request: Any, call_next: Handler, topics: Topics, module: Any
) -> Any:
    by_id = ctx.api_version >= 10 if module is offset_commit else ctx.api_version >= 6
    names = {id(t): (topics.name_of(t.topic_id) if by_id and not t.name else t.name) for t in request.topics}
    allowed = access.allowed_names(_O.READ, _T.TOPIC, (n for n in names.values() if n))
    denied = [t for t in request.topics if names[id(t)] and names[id(t)] not in allowed]
    if not denied:
        return await call_next(ctx, request)
    errors = _commit_errors(module, denied, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    kept = [t for t in request.topics if t not in denied]
    if kept:
        response = await call_next(ctx, dataclasses.replace(request, topics=kept))
        errors.topics.extend(response.topics)
    return errors


def _commit_errors(module: Any, request_topics: Iterable[Any], error: ErrorCode) -> Any:
    """OffsetCommit's or TxnOffsetCommit's answer with ``error`` on every partition of ``request_topics``."""
    prefix = "OffsetCommit" if module is offset_commit else "TxnOffsetCommit"
    response_cls = getattr(module, f"{prefix}Response")
    topic_cls = getattr(module, f"{prefix}ResponseTopic")
    partition_cls = getattr(module, f"{prefix}ResponsePartition")
    return response_cls(
        topics=[
            topic_cls(
                name=t.name,
                topic_id=t.topic_id,
                partitions=[partition_cls(partition_index=p.partition_index, error_code=error) for p in t.partitions],
            )
            for t in request_topics
        ]
    )


async def _txn_offset_commit(
    access: Access,
    ctx: RequestContext,
    request: txn_offset_commit.TxnOffsetCommitRequest,
    call_next: Handler,
    topics: Topics,
) -> Any:
    """WRITE on the transactional id, READ on the group (each refusal on every partition), then READ per topic."""
    if not access.allowed(_O.WRITE, _T.TRANSACTIONAL_ID, request.transactional_id):
        return _commit_errors(txn_offset_commit, request.topics, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    if not access.allowed(_O.READ, _T.GROUP, request.group_id):
        return _commit_errors(txn_offset_commit, request.topics, ErrorCode.GROUP_AUTHORIZATION_FAILED)
    return await _commit_topics(access, ctx, request, call_next, topics, txn_offset_commit)


async def _offset_fetch(
    access: Access, ctx: RequestContext, request: offset_fetch.OffsetFetchRequest, call_next: Handler, _: Topics
) -> Any:
    """DESCRIBE on each group (a refused group answers GROUP_AUTHORIZATION_FAILED), then on each topic: named
    topics refused answer TOPIC_AUTHORIZATION_FAILED per partition, and of all topics only the allowed show."""
    if ctx.api_version < 8:
        if not access.allowed(_O.DESCRIBE, _T.GROUP, request.group_id):
            return offset_fetch.OffsetFetchResponse(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED)
        response = await call_next(ctx, request)
        _filter_fetched(access, response.topics, request.topics, offset_fetch.OffsetFetchResponsePartition)
        return response
    allowed_groups = access.allowed_names(_O.DESCRIBE, _T.GROUP, (g.group_id for g in request.groups))
    kept = [g for g in request.groups if g.group_id in allowed_groups]
    by_group: dict[str, Any] = {}
    if kept:
        response = await call_next(ctx, dataclasses.replace(request, groups=kept))
        for group, asked in zip(response.groups, kept, strict=False):
            _filter_fetched(access, group.topics, asked.topics, offset_fetch.OffsetFetchResponsePartitions)
            by_group[group.group_id] = group
    return offset_fetch.OffsetFetchResponse(
        groups=[
            by_group.get(g.group_id)
            or offset_fetch.OffsetFetchResponseGroup(
                group_id=g.group_id, error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED
            )
            for g in request.groups
        ]
    )


def _filter_fetched(access: Access, answered: list[Any], asked: list[Any] | None, partition_cls: Any) -> None:
    """Drop (all topics) or mark TOPIC_AUTHORIZATION_FAILED (named topics) the topics without DESCRIBE."""
    allowed = access.allowed_names(_O.DESCRIBE, _T.TOPIC, (t.name for t in answered))
    if asked is None:
        answered[:] = [t for t in answered if t.name in allowed]
        return
    for topic in answered:
        if topic.name not in allowed:
            topic.partitions = [
                partition_cls(
                    partition_index=p.partition_index,
                    committed_offset=-1,
                    metadata="",
                    error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                )
                for p in topic.partitions
            ]


def _describing_groups(response_module: Any, ids_field: str) -> Guard:
    """DescribeGroups and ConsumerGroupDescribe: DESCRIBE on each group; the refused ones answer
    GROUP_AUTHORIZATION_FAILED first, then the described ones, with the principal's authorized operations. A
    consumer group whose members are assigned (or targeted) a topic the principal may not DESCRIBE is answered
    TOPIC_AUTHORIZATION_FAILED instead, without its members, as Kafka does."""

    async def guard(access: Access, ctx: RequestContext, request: Any, call_next: Handler, _: Topics) -> Any:
        asked = getattr(request, ids_field)
        allowed = access.allowed_names(_O.DESCRIBE, _T.GROUP, asked)
        groups = []
        for group_id in asked:
            if group_id not in allowed:
                group = response_module.DescribedGroup(
                    group_id=group_id, error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED
                )
                groups.append(group)
        kept = [g for g in asked if g in allowed]
        if kept:
            response = await call_next(ctx, dataclasses.replace(request, **{ids_field: kept}))
            for group in response.groups:
                if response_module is consumer_group_describe and not _may_see_assigned_topics(access, group):
                    group = consumer_group_describe.DescribedGroup(
                        group_id=group.group_id,
                        error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                        error_message=ASSIGNED_TOPICS_REFUSED,
                    )
                elif request.include_authorized_operations and group.authorized_operations != NOT_REQUESTED:
                    group.authorized_operations = access.operations(_T.GROUP, group.group_id)
                groups.append(group)
        return getattr(response_module, _RESPONSE_NAMES[response_module])(groups=groups)

    return guard


#: Kafka's message for a KIP-848 group described with topics the principal may not describe.
ASSIGNED_TOPICS_REFUSED = "The group has described topic(s) that the client is not authorized to describe."


def _may_see_assigned_topics(access: Access, group: Any) -> bool:
    topics = {
        t.topic_name
        for member in group.members
        for assignment in (member.assignment, member.target_assignment)
        for t in assignment.topic_partitions
    }
    return len(access.allowed_names(_O.DESCRIBE, _T.TOPIC, topics)) == len(topics)


_RESPONSE_NAMES = {
    describe_groups: "DescribeGroupsResponse",
    consumer_group_describe: "ConsumerGroupDescribeResponse",
}


async def _list_groups(
    access: Access, ctx: RequestContext, request: list_groups.ListGroupsRequest, call_next: Handler, _: Topics
) -> Any:
    """DESCRIBE on the cluster lists every group; without it, only the groups the principal may DESCRIBE."""
    response = await call_next(ctx, request)
    if not access.cluster(_O.DESCRIBE):
        allowed = access.allowed_names(_O.DESCRIBE, _T.GROUP, (g.group_id for g in response.groups))
        response.groups = [g for g in response.groups if g.group_id in allowed]
    return response


async def _split_names(
    access: Access,
    ctx: RequestContext,
    request: Any,
    call_next: Handler,
    check: tuple[AclOperation, ResourceType, str, str],
    refused: Callable[[str], Any],
) -> Any:
    """A request naming resources in ``check``'s field: the allowed ones go to the handler, each refused one
    answers ``refused(name)`` after them in ``check``'s results field."""
    operation, resource_type, field, results_field = check
    names = getattr(request, field)
    allowed = access.allowed_names(operation, resource_type, names)
    response = await call_next(ctx, dataclasses.replace(request, **{field: [n for n in names if n in allowed]}))
    getattr(response, results_field).extend(refused(n) for n in names if n not in allowed)
    return response


async def _delete_groups(
    access: Access, ctx: RequestContext, request: delete_groups.DeleteGroupsRequest, call_next: Handler, _: Topics
) -> Any:
    """DELETE on each group; a refused one answers GROUP_AUTHORIZATION_FAILED."""
    return await _split_names(
        access,
        ctx,
        request,
        call_next,
        (_O.DELETE, _T.GROUP, "groups_names", "results"),
        lambda g: delete_groups.DeletableGroupResult(group_id=g, error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED),
    )


async def _consumer_group_heartbeat(
    access: Access,
    ctx: RequestContext,
    request: consumer_group_heartbeat.ConsumerGroupHeartbeatRequest,
    call_next: Handler,
    _: Topics,
) -> Any:
    """READ on the group, then DESCRIBE on every subscribed topic name (KIP-848): either refused answers the
    whole heartbeat (without a message, as Kafka answers)."""
    error = None
    if not access.allowed(_O.READ, _T.GROUP, request.group_id):
        error = ErrorCode.GROUP_AUTHORIZATION_FAILED
    elif request.subscribed_topic_names:
        allowed = access.allowed_names(_O.DESCRIBE, _T.TOPIC, request.subscribed_topic_names)
        if len(allowed) < len(set(request.subscribed_topic_names)):
            error = ErrorCode.TOPIC_AUTHORIZATION_FAILED
    if error is not None:
        return consumer_group_heartbeat.ConsumerGroupHeartbeatResponse(
            error_code=error, error_message=None, member_id=None
        )
    return await call_next(ctx, request)


# -- topic administration --------------------------------------------------------------------------------------


async def _create_topics(
    access: Access, ctx: RequestContext, request: create_topics.CreateTopicsRequest, call_next: Handler, _: Topics
) -> Any:
    """CREATE on the cluster, or on each topic; a refused topic answers TOPIC_AUTHORIZATION_FAILED (with Kafka's
    message). Its configs are shown only with DESCRIBE_CONFIGS on it (else TOPIC_AUTHORIZATION_FAILED in
    ``topic_config_error_code``)."""
    names = [t.name for t in request.topics]
    allowed = set(names) if access.cluster(_O.CREATE) else access.allowed_names(_O.CREATE, _T.TOPIC, names)
    kept = [t for t in request.topics if t.name in allowed]
    response = create_topics.CreateTopicsResponse()
    if kept:
        response = await call_next(ctx, dataclasses.replace(request, topics=kept))
    may_see = access.allowed_names(_O.DESCRIBE_CONFIGS, _T.TOPIC, (r.name for r in response.topics))
    for result in response.topics:
        if result.name not in may_see and result.error_code == ErrorCode.NONE and result.configs is not None:
            result.topic_config_error_code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            result.configs, result.num_partitions, result.replication_factor = [], -1, -1
    response.topics.extend(
        create_topics.CreatableTopicResult(
            name=t.name,
            error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED,
            error_message="Authorization failed.",
            configs=None,
        )
        for t in request.topics
        if t.name not in allowed
    )
    return response


async def _delete_topics(
    access: Access, ctx: RequestContext, request: delete_topics.DeleteTopicsRequest, call_next: Handler, topics: Topics
) -> Any:
    """DELETE on the cluster allows every topic (Kafka's controller asks it first), else DELETE on each topic
    (named, or by id); a refused one answers TOPIC_AUTHORIZATION_FAILED."""
    if access.cluster(_O.DELETE):
        return await call_next(ctx, request)
    if ctx.api_version < 6:
        return await _split_names(
            access,
            ctx,
            request,
            call_next,
            (_O.DELETE, _T.TOPIC, "topic_names", "responses"),
            lambda n: delete_topics.DeletableTopicResult(name=n, error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED),
        )
    named = {id(t): t.name if t.name is not None else topics.name_of(t.topic_id) for t in request.topics}
    allowed = access.allowed_names(_O.DELETE, _T.TOPIC, (n for n in named.values() if n))
    denied = [t for t in request.topics if named[id(t)] and named[id(t)] not in allowed]
    kept = [t for t in request.topics if t not in denied]
    response = delete_topics.DeleteTopicsResponse()
    if kept:
        response = await call_next(ctx, dataclasses.replace(request, topics=kept))
    response.responses.extend(
        delete_topics.DeletableTopicResult(
            name=t.name, topic_id=t.topic_id, error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED
        )
        for t in denied
    )
    return response


# -- transactions ----------------------------------------------------------------------------------------------


async def _add_partitions_to_txn(
    access: Access,
    ctx: RequestContext,
    request: add_partitions_to_txn.AddPartitionsToTxnRequest,
    call_next: Handler,
    _: Topics,
) -> Any:
    """v4+ (brokers verifying) needs CLUSTER_ACTION; a client's v0-3 WRITE on the transactional id (else every
    partition TRANSACTIONAL_ID_AUTHORIZATION_FAILED) and WRITE on each topic (else its partitions
    TOPIC_AUTHORIZATION_FAILED and the others OPERATION_NOT_ATTEMPTED)."""
    R = add_partitions_to_txn
    if ctx.api_version >= 4:
        if not access.cluster(_O.CLUSTER_ACTION):
            return R.AddPartitionsToTxnResponse(error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
        return await call_next(ctx, request)

    def answer(errors: dict[str, ErrorCode]) -> Any:
        return R.AddPartitionsToTxnResponse(
            results_by_topic_v3_and_below=[
                R.AddPartitionsToTxnTopicResult(
                    name=t.name,
                    results_by_partition=[
                        R.AddPartitionsToTxnPartitionResult(partition_index=p, partition_error_code=errors[t.name])
                        for p in t.partitions
                    ],
                )
                for t in request.v3_and_below_topics
            ]
        )

    topic_names = [t.name for t in request.v3_and_below_topics]
    if not access.allowed(_O.WRITE, _T.TRANSACTIONAL_ID, request.v3_and_below_transactional_id):
        return answer(dict.fromkeys(topic_names, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED))
    allowed = access.allowed_names(_O.WRITE, _T.TOPIC, topic_names)
    if len(allowed) < len(set(topic_names)):
        return answer(
            {
                n: ErrorCode.OPERATION_NOT_ATTEMPTED if n in allowed else ErrorCode.TOPIC_AUTHORIZATION_FAILED
                for n in topic_names
            }
        )
    return await call_next(ctx, request)


def _end_txn_refused(request: end_txn.EndTxnRequest) -> end_txn.EndTxnResponse:
    return end_txn.EndTxnResponse(error_code=ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)


async def _describe_user_scram_credentials(
    access: Access, ctx: RequestContext, request: Any, call_next: Handler, _: Topics
) -> Any:
    """DESCRIBE on the cluster (KafkaApis), else CLUSTER_AUTHORIZATION_FAILED with the error's own message at the top
    level and for every user asked about (the request's ``getErrorResponse``)."""
    if access.cluster(_O.DESCRIBE):
        return await call_next(ctx, request)
    refused, message = ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "Cluster authorization failed."
    return describe_user_scram_credentials.DescribeUserScramCredentialsResponse(
        error_code=refused,
        error_message=message,
        results=[
            describe_user_scram_credentials.DescribeUserScramCredentialsResult(
                user=user.name, error_code=refused, error_message=message, credential_infos=[]
            )
            for user in request.users or []
        ],
    )


async def _alter_user_scram_credentials(
    access: Access, ctx: RequestContext, request: Any, call_next: Handler, _: Topics
) -> Any:
    """ALTER on the cluster (the controller's check), else every user named, once and in order, answers
    CLUSTER_AUTHORIZATION_FAILED (the request's ``getErrorResponse``)."""
    if access.cluster(_O.ALTER):
        return await call_next(ctx, request)
    users = sorted({d.name for d in request.deletions} | {u.name for u in request.upsertions})
    return alter_user_scram_credentials.AlterUserScramCredentialsResponse(
        results=[
            alter_user_scram_credentials.AlterUserScramCredentialsResult(
                user=user, error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED, error_message=not_authorized_message(ctx)
            )
            for user in users
        ]
    )


#: Each served API's guard.
GUARDS: dict[int, Guard] = {
    ApiKey.PRODUCE: _produce,
    ApiKey.FETCH: _fetch,
    ApiKey.LIST_OFFSETS: _by_topic(_LIST_OFFSETS),
    ApiKey.DELETE_RECORDS: _by_topic(_DELETE_RECORDS),
    ApiKey.DESCRIBE_PRODUCERS: _by_topic(_DESCRIBE_PRODUCERS),
    ApiKey.OFFSET_FOR_LEADER_EPOCH: _offset_for_leader_epoch,
    ApiKey.OFFSET_DELETE: _offset_delete,
    ApiKey.CREATE_PARTITIONS: _create_partitions,
    ApiKey.DESCRIBE_TOPIC_PARTITIONS: _describe_topic_partitions,
    ApiKey.DESCRIBE_TRANSACTIONS: _describe_transactions,
    ApiKey.LIST_TRANSACTIONS: _list_transactions,
    ApiKey.DESCRIBE_LOG_DIRS: _describe_log_dirs,
    ApiKey.ELECT_LEADERS: _cluster_only(ApiKey.ELECT_LEADERS, _O.ALTER),
    ApiKey.ALTER_PARTITION_REASSIGNMENTS: _cluster_only(ApiKey.ALTER_PARTITION_REASSIGNMENTS, _O.ALTER),
    ApiKey.LIST_PARTITION_REASSIGNMENTS: _cluster_only(ApiKey.LIST_PARTITION_REASSIGNMENTS, _O.DESCRIBE),
    ApiKey.DESCRIBE_QUORUM: _cluster_only(ApiKey.DESCRIBE_QUORUM, _O.DESCRIBE),
    ApiKey.LIST_CONFIG_RESOURCES: _cluster_only(ApiKey.LIST_CONFIG_RESOURCES, _O.DESCRIBE_CONFIGS),
    ApiKey.DESCRIBE_CONFIGS: _configs(
        _O.DESCRIBE_CONFIGS, _config_refused(describe_configs.DescribeConfigsResult), "results"
    ),
    ApiKey.ALTER_CONFIGS: _configs(
        _O.ALTER_CONFIGS, _config_refused(alter_configs.AlterConfigsResourceResponse), "responses"
    ),
    ApiKey.INCREMENTAL_ALTER_CONFIGS: _configs(
        _O.ALTER_CONFIGS, _config_refused(incremental_alter_configs.AlterConfigsResourceResponse), "responses"
    ),
    ApiKey.METADATA: _metadata,
    ApiKey.DESCRIBE_CLUSTER: _describe_cluster,
    ApiKey.FIND_COORDINATOR: _find_coordinator,
    ApiKey.JOIN_GROUP: _group_read(ApiKey.JOIN_GROUP),
    ApiKey.SYNC_GROUP: _group_read(ApiKey.SYNC_GROUP),
    ApiKey.HEARTBEAT: _group_read(ApiKey.HEARTBEAT),
    ApiKey.LEAVE_GROUP: _group_read(ApiKey.LEAVE_GROUP),
    ApiKey.OFFSET_COMMIT: _offset_commit,
    ApiKey.OFFSET_FETCH: _offset_fetch,
    ApiKey.DESCRIBE_GROUPS: _describing_groups(describe_groups, "groups"),
    ApiKey.CONSUMER_GROUP_DESCRIBE: _describing_groups(consumer_group_describe, "group_ids"),
    ApiKey.LIST_GROUPS: _list_groups,
    ApiKey.DELETE_GROUPS: _delete_groups,
    ApiKey.CONSUMER_GROUP_HEARTBEAT: _consumer_group_heartbeat,
    ApiKey.CREATE_TOPICS: _create_topics,
    ApiKey.DELETE_TOPICS: _delete_topics,
    ApiKey.INIT_PRODUCER_ID: _init_producer_id,
    ApiKey.ADD_PARTITIONS_TO_TXN: _add_partitions_to_txn,
    ApiKey.ADD_OFFSETS_TO_TXN: _add_offsets_to_txn,
    ApiKey.END_TXN: _transactional_write(_end_txn_refused),
    ApiKey.TXN_OFFSET_COMMIT: _txn_offset_commit,
    ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS: _describe_user_scram_credentials,
    ApiKey.ALTER_USER_SCRAM_CREDENTIALS: _alter_user_scram_credentials,
}

#: The APIs Kafka serves without an ACL check (ApiVersions, the SASL handshake, KIP-714's telemetry), and the ACL
#: APIs, whose handlers check the cluster themselves (``broker.handlers.acls``).
UNCHECKED = frozenset(
    {
        ApiKey.API_VERSIONS,
        ApiKey.SASL_HANDSHAKE,
        ApiKey.SASL_AUTHENTICATE,
        ApiKey.GET_TELEMETRY_SUBSCRIPTIONS,
        ApiKey.PUSH_TELEMETRY,
        ApiKey.CREATE_ACLS,
        ApiKey.DESCRIBE_ACLS,
        ApiKey.DELETE_ACLS,
    }
)
