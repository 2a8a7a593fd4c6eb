"""Every advertised (api, version) answered and encodable; Metadata and the topic admin APIs over raw requests.

The version sweep is parametrized over what the broker actually registers (`broker.dispatcher.routes`, read from a
throwaway broker at collection time): each (api, version) gets a per-api scenario, a meaningful request and one that
must fail with a known error, and every answer must come back on a connection that stays open, with no
`response.encode_failed` / `request.handler_failed` logged. A field set in a version that lacks it makes the
encoder raise, which is exactly what this catches.
"""

from __future__ import annotations

import asyncio
import tempfile
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from structlog.testing import capture_logs

from broker.app import Broker
from broker.handlers.groups import GROUP_AUTHORIZED_OPERATIONS
from protocol.consumer_protocol import encode_assignment, encode_subscription
from protocol.errors import ErrorCode
from protocol.messages.add_offsets_to_txn import AddOffsetsToTxnRequest
from protocol.messages.add_partitions_to_txn import (
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnTopic,
    AddPartitionsToTxnTransaction,
)
from protocol.messages.api_versions import ApiVersionsRequest
from protocol.messages.consumer_group_describe import ConsumerGroupDescribeRequest
from protocol.messages.consumer_group_heartbeat import ConsumerGroupHeartbeatRequest
from protocol.messages.consumer_protocol_assignment import ConsumerProtocolAssignment
from protocol.messages.consumer_protocol_assignment import TopicPartition as AssignedPartitions
from protocol.messages.consumer_protocol_subscription import ConsumerProtocolSubscription
from protocol.messages.create_acls import AclCreation, CreateAclsRequest
from protocol.messages.create_partitions import CreatePartitionsRequest, CreatePartitionsTopic
from protocol.messages.create_topics import (
    CreatableReplicaAssignment,
    CreatableTopic,
    CreatableTopicConfig,
    CreateTopicsRequest,
)
from protocol.messages.delete_acls import DeleteAclsFilter, DeleteAclsRequest
from protocol.messages.delete_groups import DeleteGroupsRequest
from protocol.messages.delete_records import DeleteRecordsPartition, DeleteRecordsRequest, DeleteRecordsTopic
from protocol.messages.delete_topics import DeleteTopicsRequest, DeleteTopicState
from protocol.messages.describe_acls import DescribeAclsRequest
from protocol.messages.describe_configs import DescribeConfigsRequest, DescribeConfigsResource
from protocol.messages.describe_groups import DescribeGroupsRequest
from protocol.messages.describe_log_dirs import DescribableLogDirTopic, DescribeLogDirsRequest
from protocol.messages.describe_producers import DescribeProducersRequest, TopicRequest
from protocol.messages.describe_transactions import DescribeTransactionsRequest
from protocol.messages.end_txn import EndTxnRequest
from protocol.messages.fetch import FetchPartition, FetchRequest, FetchTopic
from protocol.messages.find_coordinator import FindCoordinatorRequest
from protocol.messages.heartbeat import HeartbeatRequest
from protocol.messages.init_producer_id import InitProducerIdRequest
from protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol
from protocol.messages.leave_group import LeaveGroupRequest, MemberIdentity
from protocol.messages.list_groups import ListGroupsRequest
from protocol.messages.list_offsets import ListOffsetsPartition, ListOffsetsRequest, ListOffsetsTopic
from protocol.messages.list_transactions import ListTransactionsRequest
from protocol.messages.metadata import MetadataRequest, MetadataRequestTopic
from protocol.messages.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
)
from protocol.messages.offset_delete import (
    OffsetDeleteRequest,
    OffsetDeleteRequestPartition,
    OffsetDeleteRequestTopic,
)
from protocol.messages.offset_fetch import (
    OffsetFetchRequest,
    OffsetFetchRequestGroup,
    OffsetFetchRequestTopic,
    OffsetFetchRequestTopics,
)
from protocol.messages.offset_for_leader_epoch import (
    OffsetForLeaderEpochRequest,
    OffsetForLeaderPartition,
    OffsetForLeaderTopic,
)
from protocol.messages.produce import PartitionProduceData, ProduceRequest, TopicProduceData
from protocol.messages.sync_group import SyncGroupRequest, SyncGroupRequestAssignment
from protocol.messages.txn_offset_commit import (
    TxnOffsetCommitRequest,
    TxnOffsetCommitRequestPartition,
    TxnOffsetCommitRequestTopic,
)
from protocol.records import Record, RecordBatch, decode_batch, encode_batch
from protocol.registry import APIS, ApiKey
from tests.broker import configs_wire
from tests.broker.cluster_sweeps import CLUSTER_SWEEPS
from tests.broker.conftest import broker_config
from tests.broker.security_sweeps import SECURITY_SWEEPS
from tests.broker.wire import WireClient
from tests.support.data_plane import batch as producer_batch

ZERO_UUID = uuid.UUID(int=0)
SOURCE_DYNAMIC_TOPIC = 1
SOURCE_STATIC_BROKER = 4
SOURCE_DEFAULT = 5
RESOURCE_TOPIC = 2
RESOURCE_BROKER = 4
BAD_EVENTS = {"response.encode_failed", "request.handler_failed", "connection.closed_on_bad_request"}


def batch(*values: bytes, timestamp: int = 1_700_000_000_000) -> bytes:
    records = [Record(offset_delta=i, timestamp_delta=0, key=None, value=v) for i, v in enumerate(values)]
    return encode_batch(RecordBatch.from_records(records, base_timestamp=timestamp))


def values_of(records: bytes | None) -> list[bytes | None]:
    out: list[bytes | None] = []
    pos = 0
    data = records or b""
    while pos < len(data):
        decoded, pos = decode_batch(data, pos)
        out += [r.value for r in decoded.records]
    return out


# ---------------------------------------------------------------------------------------------------------------
# Every advertised (api, version)
# ---------------------------------------------------------------------------------------------------------------


def _advertised_pairs() -> list[tuple[int, int]]:
    """(api_key, version) for every route a freshly started broker registers."""

    async def probe() -> list[tuple[int, int]]:
        with tempfile.TemporaryDirectory() as tmp:
            broker = Broker(broker_config(Path(tmp)))
            await broker.start()
            try:
                await broker.loaded.wait()
                return [
                    (key, version)
                    for key, route in sorted(broker.dispatcher.routes.items())
                    for version in range(route.min_version, route.max_version + 1)
                ]
            finally:
                await broker.stop()

    with capture_logs():  # keep the probe broker's start/stop lines out of the test output
        return asyncio.run(probe())


ADVERTISED = _advertised_pairs()


def _pair_id(pair: tuple[int, int]) -> str:
    key, version = pair
    return f"{ApiKey(key).name}-v{version}"


class Sweep:
    """What a scenario gets: the broker, a setup client (fixed, well-known versions) and a unique prefix."""

    def __init__(self, broker: Broker, setup: WireClient, prefix: str) -> None:
        self.broker = broker
        self.setup = setup
        self.prefix = prefix

    def topic(self, suffix: str = "t", partitions: int = 1, configs: dict[str, str] | None = None) -> str:
        name = f"{self.prefix}-{suffix}"
        self.broker.create_topic(name, partitions, configs or {})
        return name

    def topic_id(self, topic: str) -> uuid.UUID:
        info = self.broker.logs.topic(topic)
        assert info is not None
        return info.topic_id

    def append(self, topic: str, *values: bytes) -> None:
        assert self.broker.clock is not None
        log = self.broker.logs.get(topic, 0)
        assert log is not None
        log.append(batch(*values), now_ms=self.broker.clock.wall_ms(), leader_epoch=0)

    async def join_and_sync(self, group: str, topic: str = "t") -> tuple[str, int]:
        """One member through JoinGroup v3 (no KIP-394 round trip) and SyncGroup v3 as leader."""
        joined = await self.setup.call(
            ApiKey.JOIN_GROUP,
            3,
            JoinGroupRequest(
                group_id=group,
                session_timeout_ms=30_000,
                rebalance_timeout_ms=30_000,
                member_id="",
                protocol_type="consumer",
                protocols=[JoinGroupRequestProtocol(name="range", metadata=subscription(topic))],
            ),
        )
        assert joined.error_code == ErrorCode.NONE, joined
        synced = await self.setup.call(
            ApiKey.SYNC_GROUP,
            3,
            SyncGroupRequest(
                group_id=group,
                generation_id=joined.generation_id,
                member_id=joined.member_id,
                assignments=[SyncGroupRequestAssignment(member_id=joined.member_id, assignment=assignment(topic))],
            ),
        )
        assert synced.error_code == ErrorCode.NONE, synced
        return joined.member_id, joined.generation_id

    async def commit(self, group: str, topic: str, offset: int) -> None:
        """A simple-consumer commit (generation -1, no member) through OffsetCommit v2."""
        response = await self.setup.call(ApiKey.OFFSET_COMMIT, 2, commit_request(group, topic, offset))
        assert response.topics[0].partitions[0].error_code == ErrorCode.NONE, response


def subscription(topic: str) -> bytes:
    return encode_subscription(ConsumerProtocolSubscription(topics=[topic]), 0)


def assignment(topic: str) -> bytes:
    return encode_assignment(
        ConsumerProtocolAssignment(assigned_partitions=[AssignedPartitions(topic=topic, partitions=[0])]), 0
    )


def commit_request(group: str, topic: str, offset: int, topic_id: uuid.UUID = ZERO_UUID) -> OffsetCommitRequest:
    """By name, and by id too when given (v10+ sends only the id)."""
    return OffsetCommitRequest(
        group_id=group,
        generation_id_or_member_epoch=-1,
        member_id="",
        topics=[
            OffsetCommitRequestTopic(
                name=topic,
                topic_id=topic_id,
                partitions=[
                    OffsetCommitRequestPartition(partition_index=0, committed_offset=offset, committed_metadata="m")
                ],
            )
        ],
    )


Scenario = Callable[[Sweep, WireClient, int], Awaitable[None]]


async def sweep_api_versions(s: Sweep, c: WireClient, v: int) -> None:
    request = ApiVersionsRequest(client_software_name="wire", client_software_version="1") if v >= 3 else None
    response = await c.call(ApiKey.API_VERSIONS, v, request or ApiVersionsRequest())
    assert response.error_code == ErrorCode.NONE
    assert {k.api_key for k in response.api_keys} == {k for k, r in s.broker.dispatcher.routes.items() if r.advertised}


async def sweep_metadata(s: Sweep, c: WireClient, v: int) -> None:
    topic = s.topic(partitions=2)
    response = await c.call(ApiKey.METADATA, v, MetadataRequest(topics=[MetadataRequestTopic(name=topic)]))
    [found] = response.topics
    assert (found.error_code, found.name, len(found.partitions)) == (ErrorCode.NONE, topic, 2)
    assert [b.node_id for b in response.brokers] == [s.broker.config.node_id]
    if v >= 10:
        assert found.topic_id == s.broker.logs.topic(topic).topic_id  # type: ignore[union-attr]
    [illegal] = (await c.call(ApiKey.METADATA, v, MetadataRequest(topics=[MetadataRequestTopic(name="a b")]))).topics
    assert illegal.error_code == ErrorCode.INVALID_TOPIC_EXCEPTION


async def sweep_produce(s: Sweep, c: WireClient, v: int) -> None:
    topic = s.topic()
    s.append(topic, b"before")
    request = ProduceRequest(
        acks=-1,
        timeout_ms=5000,
        topic_data=[TopicProduceData(name=topic, partition_data=[PartitionProduceData(index=0, records=batch(b"x"))])],
    )
    request.topic_data[0].topic_id = s.topic_id(topic)  # v13 names the topic by id only
    response = await c.call(ApiKey.PRODUCE, v, request)
    [partition] = response.responses[0].partition_responses
    assert (partition.error_code, partition.base_offset) == (ErrorCode.NONE, 1)
    if v >= 5:
        assert partition.log_start_offset == 0
    request.topic_data[0].name, request.topic_data[0].topic_id = f"{s.prefix}-missing", uuid.uuid4()
    [missing] = (await c.call(ApiKey.PRODUCE, v, request)).responses[0].partition_responses
    expected = ErrorCode.UNKNOWN_TOPIC_ID if v >= 13 else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert missing.error_code == expected


async def sweep_fetch(s: Sweep, c: WireClient, v: int) -> None:
    topic = s.topic()
    s.append(topic, b"a", b"b")
    topic_id = s.broker.logs.topic(topic).topic_id  # type: ignore[union-attr]
    wanted = FetchTopic(
        topic=topic if v < 13 else "",
        topic_id=topic_id if v >= 13 else ZERO_UUID,
        partitions=[FetchPartition(partition=0, fetch_offset=0, partition_max_bytes=1 << 20)],
    )
    response = await c.call(ApiKey.FETCH, v, FetchRequest(max_wait_ms=0, min_bytes=1, topics=[wanted]))
    [partition] = response.responses[0].partitions
    assert (partition.error_code, partition.high_watermark) == (ErrorCode.NONE, 2)
    assert values_of(partition.records) == [b"a", b"b"]
    wanted.partitions[0].fetch_offset = 5
    response = await c.call(ApiKey.FETCH, v, FetchRequest(max_wait_ms=0, min_bytes=1, topics=[wanted]))
    assert response.responses[0].partitions[0].error_code == ErrorCode.OFFSET_OUT_OF_RANGE


async def sweep_list_offsets(s: Sweep, c: WireClient, v: int) -> None:
    topic = s.topic()
    s.append(topic, b"a", b"b", b"c")
    request = ListOffsetsRequest(
        replica_id=-1,
        topics=[ListOffsetsTopic(name=topic, partitions=[ListOffsetsPartition(partition_index=0, timestamp=-1)])],
    )
    response = await c.call(ApiKey.LIST_OFFSETS, v, request)
    [partition] = response.topics[0].partitions
    assert partition.error_code == ErrorCode.NONE
    if v == 0:
        assert partition.old_style_offsets == [3]
    else:
        assert partition.offset == 3
    request.topics[0].name = f"{s.prefix}-missing"
    [missing] = (await c.call(ApiKey.LIST_OFFSETS, v, request)).topics[0].partitions
    assert missing.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


async def sweep_offset_commit(s: Sweep, c: WireClient, v: int) -> None:
    topic = s.topic()
    response = await c.call(ApiKey.OFFSET_COMMIT, v, commit_request(f"{s.prefix}-g", topic, 7, s.topic_id(topic)))
    assert response.topics[0].partitions[0].error_code == ErrorCode.NONE
    if v >= 1:  # a generation for a group that does not exist
        request = commit_request(f"{s.prefix}-nobody", topic, 7, s.topic_id(topic))
        request.generation_id_or_member_epoch, request.member_id = 3, "ghost"
        response = await c.call(ApiKey.OFFSET_COMMIT, v, request)
        expected = ErrorCode.GROUP_ID_NOT_FOUND if v >= 9 else ErrorCode.ILLEGAL_GENERATION
        assert response.topics[0].partitions[0].error_code == expected


async def sweep_offset_fetch(s: Sweep, c: WireClient, v: int) -> None:
    topic = s.topic()
    group = f"{s.prefix}-g"
    await s.commit(group, topic, 7)
    if v < 8:
        request = OffsetFetchRequest(
            group_id=group, topics=[OffsetFetchRequestTopic(name=topic, partition_indexes=[0])]
        )
        response = await c.call(ApiKey.OFFSET_FETCH, v, request)
        [partition] = response.topics[0].partitions
    else:
        request = OffsetFetchRequest(
            groups=[
                OffsetFetchRequestGroup(
                    group_id=group,
                    topics=[OffsetFetchRequestTopics(name=topic, topic_id=s.topic_id(topic), partition_indexes=[0])],
                )
            ]
        )
        response = await c.call(ApiKey.OFFSET_FETCH, v, request)
        assert response.groups[0].error_code == ErrorCode.NONE
        [partition] = response.groups[0].topics[0].partitions
    assert (partition.error_code, partition.committed_offset) == (ErrorCode.NONE, 7)
    if v < 8:
        request.group_id = f"{s.prefix}-unknown"
        [partition] = (await c.call(ApiKey.OFFSET_FETCH, v, request)).topics[0].partitions
    else:
        request.groups[0].group_id = f"{s.prefix}-unknown"
        [partition] = (await c.call(ApiKey.OFFSET_FETCH, v, request)).groups[0].topics[0].partitions
    assert (partition.error_code, partition.committed_offset) == (ErrorCode.NONE, -1)


async def sweep_find_coordinator(s: Sweep, c: WireClient, v: int) -> None:
    group = f"{s.prefix}-g"
    port = s.broker.ports[0]
    if v < 4:
        response = await c.call(ApiKey.FIND_COORDINATOR, v, FindCoordinatorRequest(key=group))
        assert (response.error_code, response.node_id, response.port) == (ErrorCode.NONE, 1, port)
    else:
        response = await c.call(ApiKey.FIND_COORDINATOR, v, FindCoordinatorRequest(coordinator_keys=[group]))
        [found] = response.coordinators
        assert (found.key, found.error_code, found.node_id, found.port) == (group, ErrorCode.NONE, 1, port)
    if v >= 1:
        request = (
            FindCoordinatorRequest(key="tx", key_type=1)
            if v < 4
            else FindCoordinatorRequest(key_type=1, coordinator_keys=["tx"])
        )
        response = await c.call(ApiKey.FIND_COORDINATOR, v, request)
        found = response if v < 4 else response.coordinators[0]
        assert (found.error_code, found.node_id, found.port) == (ErrorCode.NONE, 1, port)  # T1


async def sweep_join_group(s: Sweep, c: WireClient, v: int) -> None:
    group = f"{s.prefix}-g"
    request = JoinGroupRequest(
        group_id=group,
        session_timeout_ms=30_000,
        rebalance_timeout_ms=30_000,
        member_id="",
        protocol_type="consumer",
        protocols=[JoinGroupRequestProtocol(name="range", metadata=subscription("t"))],
    )
    response = await c.call(ApiKey.JOIN_GROUP, v, request)
    if v >= 4:
        assert response.error_code == ErrorCode.MEMBER_ID_REQUIRED and response.member_id
        request.member_id = response.member_id
        response = await c.call(ApiKey.JOIN_GROUP, v, request)
    assert (response.error_code, response.generation_id) == (ErrorCode.NONE, 1)
    assert response.leader == response.member_id and response.protocol_name == "range"
    assert [m.member_id for m in response.members] == [response.member_id]
    if v >= 7:
        assert response.protocol_type == "consumer"
    request = JoinGroupRequest(
        group_id=f"{s.prefix}-impatient",
        session_timeout_ms=10,
        rebalance_timeout_ms=10,
        protocol_type="consumer",
        protocols=[JoinGroupRequestProtocol(name="range", metadata=subscription("t"))],
    )
    assert (await c.call(ApiKey.JOIN_GROUP, v, request)).error_code == ErrorCode.INVALID_SESSION_TIMEOUT


async def sweep_sync_group(s: Sweep, c: WireClient, v: int) -> None:
    group = f"{s.prefix}-g"
    joined = await s.setup.call(
        ApiKey.JOIN_GROUP,
        3,
        JoinGroupRequest(
            group_id=group,
            session_timeout_ms=30_000,
            rebalance_timeout_ms=30_000,
            protocol_type="consumer",
            protocols=[JoinGroupRequestProtocol(name="range", metadata=subscription("t"))],
        ),
    )
    request = SyncGroupRequest(
        group_id=group,
        generation_id=joined.generation_id,
        member_id=joined.member_id,
        protocol_type="consumer",
        protocol_name="range",
        assignments=[SyncGroupRequestAssignment(member_id=joined.member_id, assignment=assignment("t"))],
    )
    response = await c.call(ApiKey.SYNC_GROUP, v, request)
    assert (response.error_code, response.assignment) == (ErrorCode.NONE, assignment("t"))
    if v >= 5:
        assert (response.protocol_type, response.protocol_name) == ("consumer", "range")
    request.member_id = "stranger"
    assert (await c.call(ApiKey.SYNC_GROUP, v, request)).error_code == ErrorCode.UNKNOWN_MEMBER_ID


async def sweep_heartbeat(s: Sweep, c: WireClient, v: int) -> None:
    group = f"{s.prefix}-g"
    member, generation = await s.join_and_sync(group)
    request = HeartbeatRequest(group_id=group, generation_id=generation, member_id=member)
    assert (await c.call(ApiKey.HEARTBEAT, v, request)).error_code == ErrorCode.NONE
    request.member_id = "stranger"
    assert (await c.call(ApiKey.HEARTBEAT, v, request)).error_code == ErrorCode.UNKNOWN_MEMBER_ID


async def sweep_leave_group(s: Sweep, c: WireClient, v: int) -> None:
    group = f"{s.prefix}-g"
    member, _ = await s.join_and_sync(group)
    if v < 3:
        response = await c.call(ApiKey.LEAVE_GROUP, v, LeaveGroupRequest(group_id=group, member_id=member))
    else:
        request = LeaveGroupRequest(group_id=group, members=[MemberIdentity(member_id=member, reason="sweep")])
        response = await c.call(ApiKey.LEAVE_GROUP, v, request)
        assert [(m.member_id, m.error_code) for m in response.members] == [(member, ErrorCode.NONE)]
    assert response.error_code == ErrorCode.NONE
    if v < 3:
        response = await c.call(ApiKey.LEAVE_GROUP, v, LeaveGroupRequest(group_id=group, member_id="stranger"))
        assert response.error_code == ErrorCode.UNKNOWN_MEMBER_ID
    else:
        request = LeaveGroupRequest(group_id=group, members=[MemberIdentity(member_id="stranger")])
        response = await c.call(ApiKey.LEAVE_GROUP, v, request)
        assert response.error_code == ErrorCode.NONE  # v3+: per member
        assert [(m.member_id, m.error_code) for m in response.members] == [("stranger", ErrorCode.UNKNOWN_MEMBER_ID)]


async def sweep_describe_groups(s: Sweep, c: WireClient, v: int) -> None:
    group = f"{s.prefix}-g"
    member, _ = await s.join_and_sync(group)
    response = await c.call(
        ApiKey.DESCRIBE_GROUPS, v, DescribeGroupsRequest(groups=[group], include_authorized_operations=v >= 3)
    )
    [described] = response.groups
    assert (described.error_code, described.group_state) == (ErrorCode.NONE, "Stable")
    assert (described.protocol_type, described.protocol_data) == ("consumer", "range")
    assert [m.member_id for m in described.members] == [member]
    assert described.members[0].member_assignment == assignment("t")
    response = await c.call(ApiKey.DESCRIBE_GROUPS, v, DescribeGroupsRequest(groups=[f"{s.prefix}-unknown"]))
    expected = ErrorCode.GROUP_ID_NOT_FOUND if v >= 6 else ErrorCode.NONE  # KIP-1043
    assert [(g.error_code, g.group_state, g.members) for g in response.groups] == [(expected, "Dead", [])]


async def sweep_list_groups(s: Sweep, c: WireClient, v: int) -> None:
    group = f"{s.prefix}-g"
    await s.join_and_sync(group)
    request = ListGroupsRequest(states_filter=["Stable"] if v >= 4 else [], types_filter=["classic"] if v >= 5 else [])
    response = await c.call(ApiKey.LIST_GROUPS, v, request)
    assert response.error_code == ErrorCode.NONE
    listed = {g.group_id: g for g in response.groups}
    assert listed[group].protocol_type == "consumer"
    if v >= 4:
        assert listed[group].group_state == "Stable"
    if v >= 5:
        assert listed[group].group_type == "classic"


async def sweep_create_topics(s: Sweep, c: WireClient, v: int) -> None:
    name = f"{s.prefix}-created"
    request = CreateTopicsRequest(
        topics=[
            CreatableTopic(
                name=name,
                num_partitions=2,
                replication_factor=1,
                configs=[CreatableTopicConfig(name="retention.ms", value="60000")],
            )
        ],
        timeout_ms=5000,
    )
    response = await c.call(ApiKey.CREATE_TOPICS, v, request)
    [result] = response.topics
    assert (result.name, result.error_code) == (name, ErrorCode.NONE)
    info = s.broker.logs.topic(name)
    assert info is not None and info.partitions == 2
    if v >= 5:
        assert (result.num_partitions, result.replication_factor) == (2, 1)
        assert {(c.name, c.value, c.config_source) for c in result.configs} >= {
            ("retention.ms", "60000", SOURCE_DYNAMIC_TOPIC)
        }
    if v >= 7:
        assert result.topic_id == info.topic_id
    [again] = (await c.call(ApiKey.CREATE_TOPICS, v, request)).topics
    assert (again.name, again.error_code) == (name, ErrorCode.TOPIC_ALREADY_EXISTS)


async def sweep_delete_topics(s: Sweep, c: WireClient, v: int) -> None:
    topic = s.topic()
    topic_id = s.broker.logs.topic(topic).topic_id  # type: ignore[union-attr]
    if v < 6:
        request = DeleteTopicsRequest(topic_names=[topic], timeout_ms=5000)
    else:
        request = DeleteTopicsRequest(topics=[DeleteTopicState(name=None, topic_id=topic_id)], timeout_ms=5000)
    response = await c.call(ApiKey.DELETE_TOPICS, v, request)
    [result] = response.responses
    assert (result.name, result.error_code) == (topic, ErrorCode.NONE)
    if v >= 6:
        assert result.topic_id == topic_id
    assert s.broker.logs.topic(topic) is None
    [again] = (await c.call(ApiKey.DELETE_TOPICS, v, request)).responses
    assert again.error_code == (ErrorCode.UNKNOWN_TOPIC_ID if v >= 6 else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)


async def sweep_init_producer_id(s: Sweep, c: WireClient, v: int) -> None:
    request = InitProducerIdRequest(transactional_id=None, transaction_timeout_ms=60_000)
    response = await c.call(ApiKey.INIT_PRODUCER_ID, v, request)
    assert response.error_code == ErrorCode.NONE
    assert response.producer_id >= 0 and response.producer_epoch == 0
    request = InitProducerIdRequest(transactional_id=f"{s.prefix}-tx", transaction_timeout_ms=60_000)
    response = await c.call(ApiKey.INIT_PRODUCER_ID, v, request)
    assert (response.error_code, response.producer_epoch) == (ErrorCode.NONE, 0)  # T9: a new id starts at epoch 0
    again = await c.call(ApiKey.INIT_PRODUCER_ID, v, request)
    assert (again.error_code, again.producer_id, again.producer_epoch) == (ErrorCode.NONE, response.producer_id, 1)


async def _initialised(s: Sweep, c: WireClient) -> tuple[str, int, int]:
    """A transactional id this sweep initialised (InitProducerId v3): id, producer id, epoch."""
    transactional_id = f"{s.prefix}-tx"
    request = InitProducerIdRequest(transactional_id=transactional_id, transaction_timeout_ms=60_000)
    response = await s.setup.call(ApiKey.INIT_PRODUCER_ID, 3, request)
    assert response.error_code == ErrorCode.NONE
    return transactional_id, response.producer_id, response.producer_epoch


async def sweep_add_partitions_to_txn(s: Sweep, c: WireClient, v: int) -> None:
    topic = s.topic()
    transactional_id, producer_id, epoch = await _initialised(s, c)
    partitions = [AddPartitionsToTxnTopic(name=topic, partitions=[0])]
    if v < 4:
        request = AddPartitionsToTxnRequest(
            v3_and_below_transactional_id=transactional_id,
            v3_and_below_producer_id=producer_id,
            v3_and_below_producer_epoch=epoch,
            v3_and_below_topics=partitions,
        )
        response = await c.call(ApiKey.ADD_PARTITIONS_TO_TXN, v, request)
        [result] = response.results_by_topic_v3_and_below
    else:  # the brokers' batched form; VerifyOnly asks without adding (T24)
        transaction = AddPartitionsToTxnTransaction(
            transactional_id=transactional_id,
            producer_id=producer_id,
            producer_epoch=epoch,
            verify_only=True,
            topics=partitions,
        )
        response = await c.call(ApiKey.ADD_PARTITIONS_TO_TXN, v, AddPartitionsToTxnRequest(transactions=[transaction]))
        [transaction_result] = response.results_by_transaction
        [result] = transaction_result.topic_results
    [partition] = result.results_by_partition
    expected = ErrorCode.NONE if v < 4 else ErrorCode.TRANSACTION_ABORTABLE  # not added: verification fails
    assert (result.name, partition.partition_index, partition.partition_error_code) == (topic, 0, expected)


async def sweep_add_offsets_to_txn(s: Sweep, c: WireClient, v: int) -> None:
    transactional_id, producer_id, epoch = await _initialised(s, c)
    request = AddOffsetsToTxnRequest(
        transactional_id=transactional_id, producer_id=producer_id, producer_epoch=epoch, group_id=f"{s.prefix}-g"
    )
    assert (await c.call(ApiKey.ADD_OFFSETS_TO_TXN, v, request)).error_code == ErrorCode.NONE
    request.producer_epoch = epoch + 1
    fenced = ErrorCode.PRODUCER_FENCED if v >= 2 else ErrorCode.INVALID_PRODUCER_EPOCH  # T17
    assert (await c.call(ApiKey.ADD_OFFSETS_TO_TXN, v, request)).error_code == fenced


async def sweep_end_txn(s: Sweep, c: WireClient, v: int) -> None:
    transactional_id, producer_id, epoch = await _initialised(s, c)
    request = EndTxnRequest(
        transactional_id=transactional_id, producer_id=producer_id, producer_epoch=epoch, committed=True
    )
    # T28: nothing was added, so there is no transaction to commit
    assert (await c.call(ApiKey.END_TXN, v, request)).error_code == ErrorCode.INVALID_TXN_STATE


async def sweep_describe_transactions(s: Sweep, c: WireClient, v: int) -> None:
    transactional_id, producer_id, epoch = await _initialised(s, c)
    request = DescribeTransactionsRequest(transactional_ids=[transactional_id, f"{s.prefix}-unknown"])
    known, unknown = (await c.call(ApiKey.DESCRIBE_TRANSACTIONS, v, request)).transaction_states
    assert (known.error_code, known.transaction_state, known.producer_id, known.producer_epoch) == (
        ErrorCode.NONE,
        "Empty",
        producer_id,
        epoch,
    )
    assert unknown.error_code == ErrorCode.TRANSACTIONAL_ID_NOT_FOUND


async def sweep_list_transactions(s: Sweep, c: WireClient, v: int) -> None:
    transactional_id, producer_id, _epoch = await _initialised(s, c)
    response = await c.call(ApiKey.LIST_TRANSACTIONS, v, ListTransactionsRequest(producer_id_filters=[producer_id]))
    assert [(t.transactional_id, t.transaction_state) for t in response.transaction_states] == [
        (transactional_id, "Empty")
    ]


async def sweep_describe_producers(s: Sweep, c: WireClient, v: int) -> None:
    topic = s.topic()
    log = s.broker.logs.get(topic, 0)
    assert log is not None
    idempotent = producer_batch(b"a", producer_id=42, epoch=3, sequence=0)
    log.append(idempotent, now_ms=s.broker.clock.wall_ms(), leader_epoch=0)
    request = DescribeProducersRequest(topics=[TopicRequest(name=topic, partition_indexes=[0, 1])])
    [answered] = (await c.call(ApiKey.DESCRIBE_PRODUCERS, v, request)).topics
    [partition, missing] = answered.partitions
    assert partition.error_code == ErrorCode.NONE
    assert [(p.producer_id, p.producer_epoch, p.last_sequence) for p in partition.active_producers] == [(42, 3, 0)]
    assert missing.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


async def sweep_describe_configs(s: Sweep, c: WireClient, v: int) -> None:
    topic = s.topic(configs={"retention.ms": "60000"})
    request = DescribeConfigsRequest(
        resources=[DescribeConfigsResource(resource_type=RESOURCE_TOPIC, resource_name=topic, configuration_keys=None)],
        include_synonyms=v >= 1,
        include_documentation=v >= 3,
    )
    response = await c.call(ApiKey.DESCRIBE_CONFIGS, v, request)
    [result] = response.results
    assert result.error_code == ErrorCode.NONE
    entries = {e.name: e for e in result.configs}
    assert entries["retention.ms"].value == "60000"
    if v == 0:
        assert not entries["retention.ms"].is_default and entries["cleanup.policy"].is_default
    else:
        assert entries["retention.ms"].config_source == SOURCE_DYNAMIC_TOPIC
    request.resources[0].resource_name = f"{s.prefix}-missing"
    [missing] = (await c.call(ApiKey.DESCRIBE_CONFIGS, v, request)).results
    assert missing.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


async def sweep_alter_configs(s: Sweep, c: WireClient, v: int) -> None:
    topic = s.topic(configs={"retention.ms": "60000"})
    assert await configs_wire.alter_configs(c, RESOURCE_TOPIC, topic, {"retention.bytes": "1000"}, version=v) == (
        0,
        None,
    )
    assert dict(s.broker.logs.topic(topic).configs) == {"retention.bytes": "1000"}  # type: ignore[union-attr]
    refused = await configs_wire.alter_configs(c, RESOURCE_TOPIC, topic, {"retention.ms": "-5"}, version=v)
    assert refused == (
        ErrorCode.INVALID_CONFIG,
        "Invalid value -5 for configuration retention.ms: Value must be at least -1",
    )


async def sweep_incremental_alter_configs(s: Sweep, c: WireClient, v: int) -> None:
    topic = s.topic()
    ops = [("cleanup.policy", configs_wire.APPEND, "compact")]
    assert await configs_wire.incremental_alter(c, RESOURCE_TOPIC, topic, ops, version=v) == (0, None)
    assert dict(s.broker.logs.topic(topic).configs) == {"cleanup.policy": "delete,compact"}  # type: ignore[union-attr]
    missing = await configs_wire.incremental_alter(c, RESOURCE_TOPIC, f"{s.prefix}-missing", ops, version=v)
    assert missing[0] == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


async def sweep_list_config_resources(s: Sweep, c: WireClient, v: int) -> None:
    topic = s.topic()
    listed = {
        (r.resource_name, r.resource_type) for r in (await configs_wire.list_resources(c, version=v)).config_resources
    }
    assert listed == set() if v == 0 else (topic, RESOURCE_TOPIC) in listed


async def sweep_create_partitions(s: Sweep, c: WireClient, v: int) -> None:
    topic = s.topic()
    request = CreatePartitionsRequest(
        topics=[CreatePartitionsTopic(name=topic, count=3, assignments=None)], timeout_ms=5000
    )
    response = await c.call(ApiKey.CREATE_PARTITIONS, v, request)
    assert [(r.name, r.error_code) for r in response.results] == [(topic, ErrorCode.NONE)]
    assert s.broker.logs.topic(topic).partitions == 3  # type: ignore[union-attr]
    response = await c.call(ApiKey.CREATE_PARTITIONS, v, request)  # 3 partitions already
    assert [(r.name, r.error_code) for r in response.results] == [(topic, ErrorCode.INVALID_PARTITIONS)]


async def sweep_delete_groups(s: Sweep, c: WireClient, v: int) -> None:
    group = f"{s.prefix}-g"
    await s.commit(group, s.topic(), 3)
    response = await c.call(ApiKey.DELETE_GROUPS, v, DeleteGroupsRequest(groups_names=[group]))
    assert [(r.group_id, r.error_code) for r in response.results] == [(group, ErrorCode.NONE)]
    response = await c.call(ApiKey.DELETE_GROUPS, v, DeleteGroupsRequest(groups_names=[group]))
    assert [(r.group_id, r.error_code) for r in response.results] == [(group, ErrorCode.GROUP_ID_NOT_FOUND)]


async def sweep_offset_delete(s: Sweep, c: WireClient, v: int) -> None:
    group = f"{s.prefix}-g"
    topic = s.topic()
    await s.commit(group, topic, 3)
    request = OffsetDeleteRequest(
        group_id=group,
        topics=[OffsetDeleteRequestTopic(name=topic, partitions=[OffsetDeleteRequestPartition(partition_index=0)])],
    )
    response = await c.call(ApiKey.OFFSET_DELETE, v, request)
    assert response.error_code == ErrorCode.NONE
    assert response.topics[0].partitions[0].error_code == ErrorCode.NONE
    request.group_id = f"{s.prefix}-unknown"
    assert (await c.call(ApiKey.OFFSET_DELETE, v, request)).error_code == ErrorCode.GROUP_ID_NOT_FOUND


async def sweep_consumer_group_heartbeat(s: Sweep, c: WireClient, v: int) -> None:
    topic = s.topic()
    group = f"{s.prefix}-cg"
    join = ConsumerGroupHeartbeatRequest(
        group_id=group,
        member_id=f"{s.prefix}-member" if v >= 1 else "",
        member_epoch=0,
        rebalance_timeout_ms=30_000,
        subscribed_topic_names=[topic],
        topic_partitions=[],
    )
    joined = await c.call(ApiKey.CONSUMER_GROUP_HEARTBEAT, v, join)
    assert (joined.error_code, joined.member_epoch) == (ErrorCode.NONE, 2)  # a new group starts at 1 (KAFKA-20268)
    assert joined.member_id and joined.assignment is not None
    assert sorted(joined.assignment.topic_partitions[0].partitions) == [0]
    leave = ConsumerGroupHeartbeatRequest(group_id=group, member_id=joined.member_id, member_epoch=-1)
    left = await c.call(ApiKey.CONSUMER_GROUP_HEARTBEAT, v, leave)
    assert (left.error_code, left.member_epoch) == (ErrorCode.NONE, -1)
    join.topic_partitions = None
    invalid = await c.call(ApiKey.CONSUMER_GROUP_HEARTBEAT, v, join)
    assert (invalid.error_code, invalid.error_message) == (
        ErrorCode.INVALID_REQUEST,
        "TopicPartitions must be empty when (re-)joining.",
    )


async def sweep_consumer_group_describe(s: Sweep, c: WireClient, v: int) -> None:
    topic = s.topic()
    group = f"{s.prefix}-cgd"
    join = ConsumerGroupHeartbeatRequest(
        group_id=group,
        member_id="m",
        member_epoch=0,
        rebalance_timeout_ms=30_000,
        subscribed_topic_names=[topic],
        topic_partitions=[],
    )
    assert (await c.call(ApiKey.CONSUMER_GROUP_HEARTBEAT, 1, join)).error_code == ErrorCode.NONE
    request = ConsumerGroupDescribeRequest(group_ids=[group, f"{s.prefix}-none"], include_authorized_operations=True)
    found, missing = (await c.call(ApiKey.CONSUMER_GROUP_DESCRIBE, v, request)).groups
    assert (found.error_code, found.group_state, found.group_epoch, found.assignor_name) == (0, "Stable", 2, "uniform")
    assert [(m.member_id, m.member_epoch) for m in found.members] == [("m", 2)]
    assert found.members[0].assignment.topic_partitions[0].topic_name == topic
    assert found.authorized_operations == GROUP_AUTHORIZED_OPERATIONS
    assert missing.error_code == ErrorCode.GROUP_ID_NOT_FOUND


async def sweep_txn_offset_commit(s: Sweep, c: WireClient, v: int) -> None:
    """A producer's offsets are pending until its marker: invisible to OffsetFetch (T63)."""
    topic = s.topic()
    group = f"{s.prefix}-txn"
    request = TxnOffsetCommitRequest(
        transactional_id=f"{s.prefix}-tid",
        group_id=group,
        producer_id=1,
        producer_epoch=0,
        topics=[
            TxnOffsetCommitRequestTopic(
                name=topic,
                topic_id=s.topic_id(topic),  # v6+ sends only the id
                partitions=[TxnOffsetCommitRequestPartition(partition_index=0, committed_offset=7)],
            )
        ],
    )
    response = await c.call(ApiKey.TXN_OFFSET_COMMIT, v, request)
    # KIP-890: no transaction coordinator knows this producer, to verify (v0-4) or to add the partition (v5+)
    assert response.topics[0].partitions[0].error_code == ErrorCode.INVALID_PRODUCER_ID_MAPPING
    fetch = OffsetFetchRequest(group_id=group, topics=[OffsetFetchRequestTopic(name=topic, partition_indexes=[0])])
    fetched = await s.setup.call(ApiKey.OFFSET_FETCH, 2, fetch)
    assert fetched.topics[0].partitions[0].committed_offset == -1
    request.group_id = ""
    response = await c.call(ApiKey.TXN_OFFSET_COMMIT, v, request)
    assert response.topics[0].partitions[0].error_code == ErrorCode.INVALID_GROUP_ID


async def sweep_delete_records(s: Sweep, c: WireClient, v: int) -> None:
    topic = s.topic()
    s.append(topic, b"a", b"b", b"c")
    request = DeleteRecordsRequest(
        topics=[DeleteRecordsTopic(name=topic, partitions=[DeleteRecordsPartition(partition_index=0, offset=2)])],
        timeout_ms=5000,
    )
    [result] = (await c.call(ApiKey.DELETE_RECORDS, v, request)).topics[0].partitions
    assert (result.error_code, result.low_watermark) == (ErrorCode.NONE, 2)
    request.topics[0].partitions[0].offset = 9
    [beyond] = (await c.call(ApiKey.DELETE_RECORDS, v, request)).topics[0].partitions
    assert (beyond.error_code, beyond.low_watermark) == (ErrorCode.OFFSET_OUT_OF_RANGE, -1)


async def sweep_offset_for_leader_epoch(s: Sweep, c: WireClient, v: int) -> None:
    topic = s.topic()
    s.append(topic, b"a", b"b")
    request = OffsetForLeaderEpochRequest(
        replica_id=-1,
        topics=[OffsetForLeaderTopic(topic=topic, partitions=[OffsetForLeaderPartition(partition=0, leader_epoch=0)])],
    )
    [result] = (await c.call(ApiKey.OFFSET_FOR_LEADER_EPOCH, v, request)).topics[0].partitions
    assert (result.error_code, result.leader_epoch, result.end_offset) == (ErrorCode.NONE, 0, 2)
    request.topics[0].partitions[0].current_leader_epoch = 1
    [ahead] = (await c.call(ApiKey.OFFSET_FOR_LEADER_EPOCH, v, request)).topics[0].partitions
    assert ahead.error_code == ErrorCode.UNKNOWN_LEADER_EPOCH


async def sweep_describe_log_dirs(s: Sweep, c: WireClient, v: int) -> None:
    topic = s.topic()
    s.append(topic, b"a")
    request = DescribeLogDirsRequest(topics=[DescribableLogDirTopic(topic=topic, partitions=[0])])
    [result] = (await c.call(ApiKey.DESCRIBE_LOG_DIRS, v, request)).results
    assert result.error_code == ErrorCode.NONE
    [(name, [partition])] = [(t.name, t.partitions) for t in result.topics]
    assert name == topic and partition.partition_size > 0 and partition.offset_lag == 0


async def sweep_acls(s: Sweep, c: WireClient, v: int) -> None:
    """Without an authorizer (the sweep broker's case) every ACL API answers SECURITY_DISABLED; the answers with
    an authorizer are tests/broker/test_acls_wire.py's."""
    acl_filter = {"resource_type_filter": 1, "pattern_type_filter": 1, "operation": 1, "permission_type": 1}
    creation = AclCreation(
        resource_type=2, resource_name=s.topic(), principal="User:a", host="*", operation=3, permission_type=3
    )
    created = await c.call(ApiKey.CREATE_ACLS, v, CreateAclsRequest(creations=[creation]))
    assert [r.error_code for r in created.results] == [ErrorCode.SECURITY_DISABLED]
    described = await c.call(ApiKey.DESCRIBE_ACLS, v, DescribeAclsRequest(**acl_filter))
    assert described.error_code == ErrorCode.SECURITY_DISABLED
    deleted = await c.call(ApiKey.DELETE_ACLS, v, DeleteAclsRequest(filters=[DeleteAclsFilter(**acl_filter)]))
    assert [r.error_code for r in deleted.filter_results] == [ErrorCode.SECURITY_DISABLED]


SCENARIOS: dict[int, Scenario] = {
    ApiKey.API_VERSIONS: sweep_api_versions,
    ApiKey.CREATE_ACLS: sweep_acls,
    ApiKey.DESCRIBE_ACLS: sweep_acls,
    ApiKey.DELETE_ACLS: sweep_acls,
    ApiKey.METADATA: sweep_metadata,
    ApiKey.PRODUCE: sweep_produce,
    ApiKey.FETCH: sweep_fetch,
    ApiKey.LIST_OFFSETS: sweep_list_offsets,
    ApiKey.OFFSET_COMMIT: sweep_offset_commit,
    ApiKey.OFFSET_FETCH: sweep_offset_fetch,
    ApiKey.FIND_COORDINATOR: sweep_find_coordinator,
    ApiKey.JOIN_GROUP: sweep_join_group,
    ApiKey.SYNC_GROUP: sweep_sync_group,
    ApiKey.HEARTBEAT: sweep_heartbeat,
    ApiKey.LEAVE_GROUP: sweep_leave_group,
    ApiKey.DESCRIBE_GROUPS: sweep_describe_groups,
    ApiKey.LIST_GROUPS: sweep_list_groups,
    ApiKey.CREATE_TOPICS: sweep_create_topics,
    ApiKey.DELETE_TOPICS: sweep_delete_topics,
    ApiKey.INIT_PRODUCER_ID: sweep_init_producer_id,
    ApiKey.DESCRIBE_CONFIGS: sweep_describe_configs,
    ApiKey.ALTER_CONFIGS: sweep_alter_configs,
    ApiKey.INCREMENTAL_ALTER_CONFIGS: sweep_incremental_alter_configs,
    ApiKey.LIST_CONFIG_RESOURCES: sweep_list_config_resources,
    ApiKey.DESCRIBE_PRODUCERS: sweep_describe_producers,
    ApiKey.CREATE_PARTITIONS: sweep_create_partitions,
    ApiKey.DELETE_GROUPS: sweep_delete_groups,
    ApiKey.OFFSET_DELETE: sweep_offset_delete,
    ApiKey.CONSUMER_GROUP_HEARTBEAT: sweep_consumer_group_heartbeat,
    ApiKey.CONSUMER_GROUP_DESCRIBE: sweep_consumer_group_describe,
    ApiKey.TXN_OFFSET_COMMIT: sweep_txn_offset_commit,
    ApiKey.ADD_PARTITIONS_TO_TXN: sweep_add_partitions_to_txn,
    ApiKey.ADD_OFFSETS_TO_TXN: sweep_add_offsets_to_txn,
    ApiKey.END_TXN: sweep_end_txn,
    ApiKey.DESCRIBE_TRANSACTIONS: sweep_describe_transactions,
    ApiKey.LIST_TRANSACTIONS: sweep_list_transactions,
    ApiKey.DELETE_RECORDS: sweep_delete_records,
    ApiKey.OFFSET_FOR_LEADER_EPOCH: sweep_offset_for_leader_epoch,
    ApiKey.DESCRIBE_LOG_DIRS: sweep_describe_log_dirs,
    **CLUSTER_SWEEPS,
    **SECURITY_SWEEPS,
}


async def sweep_default_request(s: Sweep, c: WireClient, v: int, api_key: int) -> None:
    """An API registered after these scenarios were written: its default request must at least be answered."""
    await c.call(api_key, v, APIS[api_key].request.struct.cls())


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def sweep_broker(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Broker]:
    instance = Broker(broker_config(tmp_path_factory.mktemp("sweep")))
    await instance.start()
    await instance.loaded.wait()  # group APIs answer COORDINATOR_LOAD_IN_PROGRESS until then
    yield instance
    await instance.stop()


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize(("api_key", "version"), ADVERTISED, ids=[_pair_id(p) for p in ADVERTISED])
async def test_every_advertised_version_is_answered_and_encodable(
    sweep_broker: Broker, api_key: int, version: int
) -> None:
    route = sweep_broker.dispatcher.route(api_key, version)
    assert route is not None, "advertised at collection time, so it must be routed now"
    setup = await WireClient.connect(sweep_broker.ports[0])
    probe = await WireClient.connect(sweep_broker.ports[0])
    sweep = Sweep(sweep_broker, setup, f"sweep-{api_key}-{version}")
    try:
        with capture_logs() as logs:
            scenario = SCENARIOS.get(api_key)
            if scenario is None:
                await sweep_default_request(sweep, probe, version, api_key)
            else:
                await scenario(sweep, probe, version)
            # the connection is still open and in step: the next request is answered
            assert (await probe.call(ApiKey.API_VERSIONS, 0, ApiVersionsRequest())).error_code == ErrorCode.NONE
        bad = [e for e in logs if e["event"] in BAD_EVENTS or e["log_level"] in ("error", "critical")]
        assert not bad, bad
    finally:
        await probe.close()
        await setup.close()


def test_every_codec_api_has_a_sweep_scenario_or_is_not_served() -> None:
    """A newly registered API should come with a meaningful scenario above, not only the default request."""
    served = {key for key, _ in ADVERTISED}
    missing = sorted(ApiKey(k).name for k in served - set(SCENARIOS))
    assert not missing, f"add sweep scenarios for {missing}"


# ---------------------------------------------------------------------------------------------------------------
# Metadata
# ---------------------------------------------------------------------------------------------------------------


async def metadata(client: WireClient, version: int, topics: list[MetadataRequestTopic] | None, **kw: Any) -> Any:
    return await client.call(ApiKey.METADATA, version, MetadataRequest(topics=topics, **kw))


def names(response: Any) -> set[str]:
    return {t.name for t in response.topics}


async def test_metadata_v0_empty_list_means_all_topics(broker: Broker) -> None:
    broker.create_topic("alpha", 1, {})
    broker.create_topic("beta", 2, {})
    client = await WireClient.connect(broker.ports[0])
    response = await metadata(client, 0, [])
    assert names(response) == {"alpha", "beta", "__consumer_offsets", "__transaction_state"}
    await client.close()


async def test_metadata_v1_null_means_all_and_empty_means_none(broker: Broker) -> None:
    broker.create_topic("alpha", 1, {})
    client = await WireClient.connect(broker.ports[0])
    for version in (1, 4, 9, 12):
        assert names(await metadata(client, version, None)) == {"alpha", "__consumer_offsets", "__transaction_state"}
        empty = await metadata(client, version, [])
        assert empty.topics == [] and empty.brokers, version
    await client.close()


async def test_metadata_auto_creates_unknown_topics_when_allowed(broker: Broker) -> None:
    client = await WireClient.connect(broker.ports[0])
    [created] = (await metadata(client, 4, [MetadataRequestTopic(name="auto-yes")])).topics
    assert (created.error_code, created.name, len(created.partitions)) == (ErrorCode.NONE, "auto-yes", 1)
    assert broker.logs.topic("auto-yes") is not None
    [legacy] = (await metadata(client, 3, [MetadataRequestTopic(name="auto-v3")])).topics  # v0-3: no flag, create
    assert legacy.error_code == ErrorCode.NONE and broker.logs.topic("auto-v3") is not None
    refused = await metadata(client, 9, [MetadataRequestTopic(name="auto-no")], allow_auto_topic_creation=False)
    assert [(t.name, t.error_code) for t in refused.topics] == [("auto-no", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)]
    assert broker.logs.topic("auto-no") is None
    [bad] = (await metadata(client, 9, [MetadataRequestTopic(name="bad name!")])).topics
    assert bad.error_code == ErrorCode.INVALID_TOPIC_EXCEPTION
    await client.close()


async def test_metadata_never_auto_creates_when_the_broker_disables_it(tmp_path: Path) -> None:
    broker = Broker(broker_config(tmp_path, auto_create_topics_enable="false"))
    await broker.start()
    try:
        client = await WireClient.connect(broker.ports[0])
        for version in (1, 4, 12):
            response = await metadata(client, version, [MetadataRequestTopic(name=f"nope-{version}")])
            [topic] = response.topics
            assert topic.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, version
        # an illegal name is INVALID_TOPIC_EXCEPTION whether or not it could have been created
        [illegal] = (await metadata(client, 12, [MetadataRequestTopic(name="bad name!")])).topics
        assert illegal.error_code == ErrorCode.INVALID_TOPIC_EXCEPTION
        await broker.loaded.wait()  # a fresh log.dirs' coordinator topics are made while the listener serves
        assert [t.name for t in broker.logs.topics()] == ["__consumer_offsets", "__transaction_state"]
        await client.close()
    finally:
        await broker.stop()


async def test_metadata_topic_ids_from_v10_and_lookup_by_id(broker: Broker) -> None:
    info = broker.create_topic("ids", 2, {})
    client = await WireClient.connect(broker.ports[0])
    [v9] = (await metadata(client, 9, [MetadataRequestTopic(name="ids")])).topics
    assert v9.topic_id == ZERO_UUID  # not on the wire before v10
    [v10] = (await metadata(client, 10, [MetadataRequestTopic(name="ids")])).topics
    assert v10.topic_id == info.topic_id != ZERO_UUID
    [by_id] = (await metadata(client, 12, [MetadataRequestTopic(name=None, topic_id=info.topic_id)])).topics
    assert (by_id.error_code, by_id.name, by_id.topic_id) == (ErrorCode.NONE, "ids", info.topic_id)
    unknown = uuid.uuid4()
    [missing] = (await metadata(client, 12, [MetadataRequestTopic(name=None, topic_id=unknown)])).topics
    assert (missing.error_code, missing.name, missing.topic_id) == (ErrorCode.UNKNOWN_TOPIC_ID, None, unknown)
    await client.close()


async def test_metadata_brokers_controller_and_internal_topic(broker: Broker) -> None:
    broker.create_topic("plain", 1, {})
    client = await WireClient.connect(broker.ports[0])
    response = await metadata(client, 12, None)
    assert [(b.node_id, b.host, b.port) for b in response.brokers] == [(1, "127.0.0.1", broker.ports[0])]
    assert response.controller_id in {b.node_id for b in response.brokers}
    internal = {t.name: t.is_internal for t in response.topics}
    assert internal == {"__consumer_offsets": True, "__transaction_state": True, "plain": False}
    offsets = next(t for t in response.topics if t.name == "__consumer_offsets")
    assert len(offsets.partitions) == broker.config["offsets.topic.num.partitions"]
    assert all(p.leader_id == 1 and p.replica_nodes == [1] and p.isr_nodes == [1] for p in offsets.partitions)
    await client.close()


async def test_cluster_id_is_stable_across_a_restart_on_the_same_log_dir(tmp_path: Path) -> None:
    seen = []
    for _ in range(2):
        broker = Broker(broker_config(tmp_path))
        await broker.start()
        try:
            client = await WireClient.connect(broker.ports[0])
            seen.append((await metadata(client, 2, None)).cluster_id)
            await client.close()
        finally:
            await broker.stop()
    assert seen[0] and seen[0] == seen[1]
    other = Broker(broker_config(tmp_path / "elsewhere"))
    await other.start()
    try:
        client = await WireClient.connect(other.ports[0])
        assert (await metadata(client, 2, None)).cluster_id not in (None, seen[0])
        await client.close()
    finally:
        await other.stop()


# ---------------------------------------------------------------------------------------------------------------
# CreateTopics / DeleteTopics / CreatePartitions
# ---------------------------------------------------------------------------------------------------------------


def creatable(
    name: str, partitions: int = 1, replication: int = 1, configs: dict[str, str | None] | None = None
) -> CreatableTopic:
    return CreatableTopic(
        name=name,
        num_partitions=partitions,
        replication_factor=replication,
        configs=[CreatableTopicConfig(name=k, value=v) for k, v in (configs or {}).items()],
    )


async def create_topics(client: WireClient, version: int, *topics: CreatableTopic, validate_only: bool = False) -> Any:
    request = CreateTopicsRequest(topics=list(topics), timeout_ms=5000, validate_only=validate_only)
    return (await client.call(ApiKey.CREATE_TOPICS, version, request)).topics


async def test_create_topics_minus_one_partitions_means_num_partitions(tmp_path: Path) -> None:
    broker = Broker(broker_config(tmp_path, num_partitions="3"))
    await broker.start()
    try:
        client = await WireClient.connect(broker.ports[0])
        [result] = await create_topics(client, 5, creatable("defaulted", partitions=-1, replication=-1))
        assert (result.error_code, result.num_partitions, result.replication_factor) == (ErrorCode.NONE, 3, 1)
        assert broker.logs.topic("defaulted").partitions == 3  # type: ignore[union-attr]
        await client.close()
    finally:
        await broker.stop()


async def test_create_topics_refusals(broker: Broker) -> None:
    broker.create_topic("exists", 1, {})
    client = await WireClient.connect(broker.ports[0])
    results = await create_topics(
        client,
        4,
        creatable("rf3", replication=3),
        creatable("exists"),
        creatable("bad name!"),
        creatable("unknown-config", configs={"no.such.config": "1"}),
        creatable("bad-value", configs={"retention.ms": "soon"}),
        creatable("zero", partitions=0),
        CreatableTopic(
            name="both",
            num_partitions=2,
            replication_factor=-1,
            assignments=[CreatableReplicaAssignment(partition_index=0, broker_ids=[1])],
        ),
    )
    assert [(r.name, r.error_code) for r in results] == [
        ("rf3", ErrorCode.INVALID_REPLICATION_FACTOR),
        ("exists", ErrorCode.TOPIC_ALREADY_EXISTS),
        ("bad name!", ErrorCode.INVALID_TOPIC_EXCEPTION),
        ("unknown-config", ErrorCode.INVALID_CONFIG),
        ("bad-value", ErrorCode.INVALID_CONFIG),
        ("zero", ErrorCode.INVALID_PARTITIONS),
        ("both", ErrorCode.INVALID_REQUEST),  # partitions given twice: by count and by assignment
    ]
    assert all(r.error_message for r in results)
    assert sorted(t.name for t in broker.logs.topics()) == ["__consumer_offsets", "__transaction_state", "exists"]
    await client.close()


async def test_create_topics_with_manual_assignments(broker: Broker) -> None:
    client = await WireClient.connect(broker.ports[0])
    manual = CreatableTopic(
        name="manual",
        num_partitions=-1,
        replication_factor=-1,
        assignments=[CreatableReplicaAssignment(partition_index=i, broker_ids=[1]) for i in range(3)],
    )
    [result] = await create_topics(client, 5, manual)
    assert (result.error_code, result.num_partitions) == (ErrorCode.NONE, 3)
    assert broker.logs.topic("manual").partitions == 3  # type: ignore[union-attr]
    await client.close()


async def test_create_topics_duplicate_names_in_one_request_are_invalid_request(broker: Broker) -> None:
    """As ControllerApis.createTopics: one INVALID_REQUEST result per duplicated name, which is not created."""
    client = await WireClient.connect(broker.ports[0])
    results = await create_topics(client, 5, creatable("twice"), creatable("once"), creatable("twice"))
    assert [(r.name, r.error_code) for r in results] == [
        ("once", ErrorCode.NONE),
        ("twice", ErrorCode.INVALID_REQUEST),
    ]
    assert results[1].error_message == "Duplicate topic name."
    assert broker.logs.topic("twice") is None and broker.logs.topic("once") is not None
    await client.close()


async def test_create_topics_validate_only_creates_nothing(broker: Broker) -> None:
    broker.create_topic("exists", 1, {})
    client = await WireClient.connect(broker.ports[0])
    results = await create_topics(
        client,
        5,
        creatable("dry-run", partitions=4, configs={"retention.ms": "1000"}),
        creatable("exists"),
        creatable("dry-bad", configs={"retention.ms": "x"}),
        validate_only=True,
    )
    assert [(r.name, r.error_code) for r in results] == [
        ("dry-run", ErrorCode.NONE),
        ("exists", ErrorCode.TOPIC_ALREADY_EXISTS),
        ("dry-bad", ErrorCode.INVALID_CONFIG),
    ]
    assert results[0].num_partitions == 4
    assert broker.logs.topic("dry-run") is None
    await client.close()


async def test_create_topics_v5_echoes_partitions_replication_and_configs(broker: Broker) -> None:
    client = await WireClient.connect(broker.ports[0])
    [result] = await create_topics(client, 5, creatable("echo", partitions=2, configs={"retention.ms": "1234"}))
    assert (result.error_code, result.num_partitions, result.replication_factor) == (ErrorCode.NONE, 2, 1)
    configs = {c.name: (c.value, c.config_source) for c in result.configs}
    assert configs["retention.ms"] == ("1234", SOURCE_DYNAMIC_TOPIC)
    assert configs["cleanup.policy"] == ("delete", SOURCE_DEFAULT)
    [old] = await create_topics(client, 4, creatable("no-echo", partitions=2))
    assert (old.num_partitions, old.replication_factor, old.configs) == (-1, -1, [])  # not on the wire before v5
    await client.close()


async def test_delete_topics_by_name_by_id_and_unknown(broker: Broker) -> None:
    broker.create_topic("by-name", 1, {})
    by_id = broker.create_topic("by-id", 1, {})
    client = await WireClient.connect(broker.ports[0])
    response = await client.call(
        ApiKey.DELETE_TOPICS, 5, DeleteTopicsRequest(topic_names=["by-name", "never"], timeout_ms=1000)
    )
    assert [(r.name, r.error_code) for r in response.responses] == [
        ("by-name", ErrorCode.NONE),
        ("never", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
    ]
    unknown = uuid.uuid4()
    request = DeleteTopicsRequest(
        topics=[DeleteTopicState(name=None, topic_id=by_id.topic_id), DeleteTopicState(name=None, topic_id=unknown)],
        timeout_ms=1000,
    )
    response = await client.call(ApiKey.DELETE_TOPICS, 6, request)
    assert [(r.name, r.topic_id, r.error_code) for r in response.responses] == [
        ("by-id", by_id.topic_id, ErrorCode.NONE),
        (None, unknown, ErrorCode.UNKNOWN_TOPIC_ID),
    ]
    assert [t.name for t in broker.logs.topics()] == ["__consumer_offsets", "__transaction_state"]
    [gone] = (await metadata(client, 9, [MetadataRequestTopic(name="by-name")], allow_auto_topic_creation=False)).topics
    assert gone.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    await client.close()


async def create_partitions(client: WireClient, name: str, count: int, validate_only: bool = False) -> Any:
    request = CreatePartitionsRequest(
        topics=[CreatePartitionsTopic(name=name, count=count, assignments=None)],
        timeout_ms=1000,
        validate_only=validate_only,
    )
    [result] = (await client.call(ApiKey.CREATE_PARTITIONS, 3, request)).results
    return result


async def test_create_partitions_grow_shrink_unknown(broker: Broker) -> None:
    broker.create_topic("grow", 2, {})
    client = await WireClient.connect(broker.ports[0])
    assert (await create_partitions(client, "grow", 5, validate_only=True)).error_code == ErrorCode.NONE
    assert broker.logs.topic("grow").partitions == 2  # type: ignore[union-attr]
    assert (await create_partitions(client, "grow", 4)).error_code == ErrorCode.NONE
    [grown] = (await metadata(client, 12, [MetadataRequestTopic(name="grow")])).topics
    assert [p.partition_index for p in grown.partitions] == [0, 1, 2, 3]
    for count in (3, 4):
        refused = await create_partitions(client, "grow", count)
        assert refused.error_code == ErrorCode.INVALID_PARTITIONS and refused.error_message
    assert (await create_partitions(client, "nope", 3)).error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert broker.logs.topic("grow").partitions == 4  # type: ignore[union-attr]
    await client.close()


async def test_admin_answers_carry_kafkas_messages(broker: Broker) -> None:
    """The messages (and their absence) Kafka 4.4 sends for the same input, found by the differential suite."""
    broker.create_topic("grown", 3, {})
    client = await WireClient.connect(broker.ports[0])
    down = await create_partitions(client, "grown", 2)
    same = await create_partitions(client, "grown", 3)
    assert (down.error_code, down.error_message) == (
        ErrorCode.INVALID_PARTITIONS,
        "The topic grown currently has 3 partition(s); 2 would not be an increase.",
    )
    assert (same.error_code, same.error_message) == (ErrorCode.INVALID_PARTITIONS, "Topic already has 3 partition(s).")
    empty_plan = CreatePartitionsRequest(topics=[CreatePartitionsTopic(name="grown", count=5, assignments=[])])
    [refused] = (await client.call(ApiKey.CREATE_PARTITIONS, 3, empty_plan)).results
    assert (refused.error_code, refused.error_message) == (
        ErrorCode.INVALID_REPLICA_ASSIGNMENT,
        "Attempted to add 2 additional partition(s), but only 0 assignment(s) were specified.",
    )
    assert broker.logs.topic("grown").partitions == 3  # type: ignore[union-attr]
    gone = DeleteTopicsRequest(topics=[DeleteTopicState(name="never")], timeout_ms=1000)
    [unknown] = (await client.call(ApiKey.DELETE_TOPICS, 6, gone)).responses
    assert (unknown.error_code, unknown.error_message) == (
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        "This server does not host this topic-partition.",
    )
    missing = await describe_configs(client, 4, RESOURCE_TOPIC, "never")
    assert (missing.error_code, missing.error_message) == (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "")
    for validate_only in (True, False):
        topic = CreatableTopic(name="fresh", num_partitions=1, replication_factor=1)
        request = CreateTopicsRequest(topics=[topic], timeout_ms=1000, validate_only=validate_only)
        [created] = (await client.call(ApiKey.CREATE_TOPICS, 7, request)).topics
        assert (created.error_code, created.error_message) == (ErrorCode.NONE, None)
    bad = CreatableTopic(name="bad/name", num_partitions=1, replication_factor=1)
    [refused] = (await client.call(ApiKey.CREATE_TOPICS, 7, CreateTopicsRequest(topics=[bad]))).topics
    assert (refused.error_code, refused.error_message) == (
        ErrorCode.INVALID_TOPIC_EXCEPTION,
        "Topic name is invalid: 'bad/name' contains one or more characters other than ASCII alphanumerics, '.', '_' "
        "and '-'",
    )
    too_many = CreatableTopic(name="replicated", num_partitions=1, replication_factor=3)
    [refused] = (await client.call(ApiKey.CREATE_TOPICS, 7, CreateTopicsRequest(topics=[too_many]))).topics
    assert (refused.error_code, refused.error_message) == (
        ErrorCode.INVALID_REPLICATION_FACTOR,
        "Unable to replicate the partition 3 time(s): The target replication factor of 3 cannot be reached because "
        "only 1 broker(s) are registered or some brokers have all their log directories cordoned.",
    )
    await client.close()


# ---------------------------------------------------------------------------------------------------------------
# DescribeConfigs
# ---------------------------------------------------------------------------------------------------------------


async def describe_configs(
    client: WireClient, version: int, resource_type: int, name: str, keys: list[str] | None = None
) -> Any:
    request = DescribeConfigsRequest(
        resources=[DescribeConfigsResource(resource_type=resource_type, resource_name=name, configuration_keys=keys)]
    )
    [result] = (await client.call(ApiKey.DESCRIBE_CONFIGS, version, request)).results
    return result


async def test_describe_configs_topic_override_is_a_dynamic_topic_config(broker: Broker) -> None:
    broker.create_topic("described", 1, {"retention.ms": "4242"})
    client = await WireClient.connect(broker.ports[0])
    result = await describe_configs(client, 4, RESOURCE_TOPIC, "described")
    assert (result.error_code, result.resource_name) == (ErrorCode.NONE, "described")
    entries = {e.name: e for e in result.configs}
    assert (entries["retention.ms"].value, entries["retention.ms"].config_source) == ("4242", SOURCE_DYNAMIC_TOPIC)
    assert entries["cleanup.policy"].config_source == SOURCE_DEFAULT
    only = await describe_configs(client, 4, RESOURCE_TOPIC, "described", ["retention.ms"])
    assert [e.name for e in only.configs] == ["retention.ms"]
    await client.close()


async def test_overrides_of_configs_storage_does_not_act_on_still_show_their_value(broker: Broker) -> None:
    """min.insync.replicas and compression.type are accepted and kept; describing them must show what was set."""
    client = await WireClient.connect(broker.ports[0])
    overrides = {"min.insync.replicas": "2", "compression.type": "gzip"}
    [created] = await create_topics(client, 5, creatable("kept", configs=dict(overrides)))
    echoed = {c.name: (c.value, c.config_source) for c in created.configs}
    described = await describe_configs(client, 4, RESOURCE_TOPIC, "kept", list(overrides))
    shown = {e.name: (e.value, e.config_source) for e in described.configs}
    expected = {name: (value, SOURCE_DYNAMIC_TOPIC) for name, value in overrides.items()}
    assert {k: echoed[k] for k in overrides} == expected
    assert shown == expected
    await client.close()


async def test_describe_configs_broker_resource_lists_broker_configs(broker: Broker) -> None:
    client = await WireClient.connect(broker.ports[0])
    result = await describe_configs(client, 4, RESOURCE_BROKER, "1")
    assert result.error_code == ErrorCode.NONE
    entries = {e.name: e for e in result.configs}
    assert entries["num.partitions"].value == "1"
    assert entries["auto.create.topics.enable"].value == "true"
    assert entries["group.min.session.timeout.ms"].config_source == SOURCE_STATIC_BROKER  # set by the test config
    assert entries["num.partitions"].config_source == SOURCE_DEFAULT
    wrong = await describe_configs(client, 4, RESOURCE_BROKER, "7")
    assert wrong.error_code != ErrorCode.NONE and wrong.configs == []
    await client.close()


async def test_describe_configs_unknown_topic(broker: Broker) -> None:
    client = await WireClient.connect(broker.ports[0])
    result = await describe_configs(client, 4, RESOURCE_TOPIC, "missing")
    assert (result.error_code, result.configs) == (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, [])
    assert result.error_message == ""  # as Kafka 4.4 answers (the differential suite's describe_configs scenario)
    await client.close()
