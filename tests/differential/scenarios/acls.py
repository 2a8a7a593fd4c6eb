"""ACLs and authorization with Kafka's StandardAuthorizer on both brokers (issue #17): CreateAcls, DescribeAcls and
DeleteAcls with filters and Kafka's refusals, then the checks of the main APIs for a principal (User:ANONYMOUS, the
plaintext one) denied a topic, a group or a transactional id because the resource is granted to someone else.

Kafka applies an ACL change to its authorizer asynchronously (from the metadata log), so after creating ACLs a
scenario waits, unrecorded, until the authorizer denies what it should before recording anything that depends on
it. Every name carries the run's token: the ACL scenarios share a pair of brokers (``ACL_SETTINGS``).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from protocol.errors import ErrorCode
from protocol.messages.alter_configs import AlterableConfig, AlterConfigsRequest, AlterConfigsResource
from protocol.messages.consumer_group_describe import ConsumerGroupDescribeRequest
from protocol.messages.consumer_group_heartbeat import ConsumerGroupHeartbeatRequest
from protocol.messages.create_acls import AclCreation, CreateAclsRequest
from protocol.messages.create_partitions import CreatePartitionsRequest, CreatePartitionsTopic
from protocol.messages.create_topics import CreatableTopic, CreateTopicsRequest
from protocol.messages.delete_acls import DeleteAclsFilter, DeleteAclsRequest
from protocol.messages.delete_groups import DeleteGroupsRequest
from protocol.messages.delete_records import DeleteRecordsPartition, DeleteRecordsRequest, DeleteRecordsTopic
from protocol.messages.delete_topics import DeleteTopicsRequest, DeleteTopicState
from protocol.messages.describe_acls import DescribeAclsRequest
from protocol.messages.describe_configs import DescribeConfigsRequest, DescribeConfigsResource
from protocol.messages.describe_groups import DescribeGroupsRequest
from protocol.messages.describe_producers import DescribeProducersRequest
from protocol.messages.describe_producers import TopicRequest as ProducersTopic
from protocol.messages.describe_topic_partitions import DescribeTopicPartitionsRequest
from protocol.messages.describe_topic_partitions import TopicRequest as DtpTopic
from protocol.messages.describe_transactions import DescribeTransactionsRequest
from protocol.messages.end_txn import EndTxnRequest
from protocol.messages.fetch import FetchPartition, FetchRequest, FetchTopic
from protocol.messages.find_coordinator import FindCoordinatorRequest
from protocol.messages.incremental_alter_configs import AlterableConfig as IncrementalConfig
from protocol.messages.incremental_alter_configs import AlterConfigsResource as IncrementalResource
from protocol.messages.incremental_alter_configs import IncrementalAlterConfigsRequest
from protocol.messages.init_producer_id import InitProducerIdRequest
from protocol.messages.list_offsets import ListOffsetsPartition, ListOffsetsRequest, ListOffsetsTopic
from protocol.messages.metadata import MetadataRequest, MetadataRequestTopic
from protocol.messages.offset_delete import OffsetDeleteRequest, OffsetDeleteRequestPartition, OffsetDeleteRequestTopic
from protocol.messages.offset_fetch import OffsetFetchRequest, OffsetFetchRequestGroup
from protocol.messages.offset_for_leader_epoch import (
    OffsetForLeaderEpochRequest,
    OffsetForLeaderPartition,
    OffsetForLeaderTopic,
)
from protocol.registry import ApiKey
from tests.differential.registry import scenario
from tests.differential.scenarios.common import join_body
from tests.differential.scenarios.group_state import ask, commit, make_topic
from tests.differential.session import Conn, Session
from tests.reference.settings import ACL_SETTINGS
from tests.support.data_plane import batch, produce_request

TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID = 2, 3, 4, 5
LITERAL, PREFIXED, MATCH, ANY = 3, 4, 2, 1
READ, WRITE, DESCRIBE, ALL = 3, 4, 8, 2
ALLOW, DENY = 3, 2
WAIT_S = 15.0


def acl(
    resource_type: int, name: str, principal: str, operation: int, permission: int = ALLOW, **kw: Any
) -> AclCreation:
    return AclCreation(
        resource_type=resource_type,
        resource_name=name,
        resource_pattern_type=kw.get("pattern", LITERAL),
        principal=principal,
        host=kw.get("host", "*"),
        operation=operation,
        permission_type=permission,
    )


def acl_filter(cls: type, **kw: Any) -> Any:
    """A DescribeAcls request or DeleteAcls filter matching everything but what ``kw`` narrows."""
    fields = {
        "resource_type_filter": ANY,
        "resource_name_filter": None,
        "pattern_type_filter": ANY,
        "principal_filter": None,
        "host_filter": None,
        "operation": ANY,
        "permission_type": ANY,
    }
    return cls(**{**fields, **kw})


def _sorted_acls(response: Any) -> Any:
    """DescribeAcls' resources and ACLs in a fixed order (Kafka lists them in hash order)."""
    if response is None:
        return None
    return {
        "error_code": response.error_code,
        "error_message": response.error_message,
        "resources": sorted(
            (
                r.resource_type,
                r.resource_name,
                r.pattern_type,
                sorted((a.principal, a.host, a.operation, a.permission_type) for a in r.acls),
            )
            for r in response.resources
        ),
    }


def _sorted_deletions(response: Any) -> Any:
    """DeleteAcls' matching ACLs per filter in a fixed order (Kafka lists them in hash order)."""
    if response is None:
        return None
    return [
        (
            f.error_code,
            f.error_message,
            sorted(
                (m.error_code, m.resource_type, m.resource_name, m.pattern_type, m.principal, m.host, m.operation)
                for m in f.matching_acls
            ),
        )
        for f in response.filter_results
    ]


async def _describe_acls(s: Session, conn: Conn, step: str, expected: int, version: int = 3, **kw: Any) -> None:
    """Record DescribeAcls with ``kw``'s filter once it lists ``expected`` ACLs (Kafka applies changes a moment
    after answering them), or after a while regardless."""
    deadline = time.monotonic() + WAIT_S
    while True:
        answer = await ask(conn, ApiKey.DESCRIBE_ACLS, version, acl_filter(DescribeAclsRequest, **kw))
        count = sum(len(r.acls) for r in answer.resources) if answer is not None else -1
        if count == expected or time.monotonic() > deadline:
            s.note(step, _sorted_acls(answer))
            return
        await asyncio.sleep(0.1)


async def _until_topic_denied(conn: Conn, topic: str) -> None:
    """Wait (unrecorded) until Metadata refuses ``topic``: the ACLs reached the authorizer."""
    probe = MetadataRequest(topics=[MetadataRequestTopic(name=topic)], allow_auto_topic_creation=False)
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        answer = await ask(conn, ApiKey.METADATA, 12, probe)
        if answer is not None and answer.topics and answer.topics[0].error_code == 29:
            return
        await asyncio.sleep(0.1)


#: FindCoordinator's refusal of a key the principal may not describe, by key type (group, transactional id).
_KEY_DENIED = {0: ErrorCode.GROUP_AUTHORIZATION_FAILED, 1: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED}


async def _until_key_denied(conn: Conn, key: str, key_type: int) -> None:
    """Wait (unrecorded) until FindCoordinator refuses ``key`` for authorization: any other error (Kafka's
    COORDINATOR_NOT_AVAILABLE while it creates `__transaction_state`) comes before its authorizer has the ACL."""
    probe = FindCoordinatorRequest(key_type=key_type, coordinator_keys=[key])
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        answer = await ask(conn, ApiKey.FIND_COORDINATOR, 4, probe)
        if answer is None or (answer.coordinators and answer.coordinators[0].error_code == _KEY_DENIED[key_type]):
            return
        await asyncio.sleep(0.1)


@scenario("CreateAcls/DescribeAcls/DeleteAcls", settings=ACL_SETTINGS)
async def acl_admin(s: Session) -> None:
    """ACLs created (a literal topic ALLOW, a prefixed group DENY from a CIDR range, a transactional id ALLOW, one
    twice), Kafka's INVALID_REQUEST refusals each alone, a request with an ACL Kafka cannot build (ANY, MATCH)
    refused whole, an UNKNOWN element closing the connection, DescribeAcls by principal, by resource and with MATCH at
    every version, DeleteAcls with several filters (one matching an ACL another matched too), and what is left."""
    conn = await s.connect()
    alice, bob = s.name("User:alice"), s.name("User:bob")
    topic, prefix, tid = s.name("acl-t"), s.name("acl-g"), s.name("acl-tx")
    group = f"{prefix}-1"  # under the prefixed DENY below
    good = [
        acl(TOPIC, topic, alice, READ),
        acl(GROUP, prefix, bob, ALL, DENY, pattern=PREFIXED, host="10.0.0.0/8"),
        acl(TRANSACTIONAL_ID, tid, alice, WRITE),
        acl(TOPIC, topic, alice, READ),
    ]
    bad = [
        acl(CLUSTER, "other-cluster", alice, DESCRIBE),
        acl(TOPIC, "", alice, READ),
        acl(TOPIC, topic, "alice", READ),
        acl(TOPIC, topic, alice, READ, host="10.0.0.0/99"),
    ]
    await conn.call(ApiKey.CREATE_ACLS, 3, CreateAclsRequest(creations=good + bad), "create, some invalid")
    for unbuildable in (
        acl(TOPIC, topic, bob, ANY),
        acl(ANY, topic, bob, READ),
        acl(TOPIC, topic, bob, READ, pattern=MATCH),
    ):
        body = CreateAclsRequest(creations=[acl(TOPIC, topic, bob, WRITE), unbuildable])
        await conn.call(ApiKey.CREATE_ACLS, 2, body, "create beside one Kafka cannot build")
    await _describe_acls(s, conn, "alice's", 2, principal_filter=alice)
    for version in (1, 2, 3):
        await _describe_acls(
            s,
            conn,
            f"v{version}: what applies to the group (MATCH)",
            1,
            version=version,
            resource_type_filter=GROUP,
            resource_name_filter=group,
            pattern_type_filter=MATCH,
        )
    await _describe_acls(
        s,
        conn,
        "the topic's, literally",
        1,
        resource_type_filter=TOPIC,
        resource_name_filter=topic,
        pattern_type_filter=LITERAL,
    )
    filters = [
        acl_filter(DeleteAclsFilter, principal_filter=alice, resource_type_filter=TOPIC),
        acl_filter(DeleteAclsFilter, principal_filter=alice),
        acl_filter(DeleteAclsFilter, principal_filter=s.name("User:nobody")),
    ]
    deleted = await ask(conn, ApiKey.DELETE_ACLS, 3, DeleteAclsRequest(filters=filters))
    s.note("delete alice's, two filters overlapping", _sorted_deletions(deleted))
    await _describe_acls(s, conn, "bob's are left", 1, principal_filter=bob)
    await _describe_acls(s, conn, "alice has none", 0, principal_filter=alice)
    await conn.call(
        ApiKey.DELETE_ACLS,
        2,
        DeleteAclsRequest(filters=[acl_filter(DeleteAclsFilter, principal_filter=bob)]),
        "v2: delete bob's",
    )
    unknown = await s.connect()
    body = CreateAclsRequest(creations=[acl(0, topic, alice, READ)])
    await unknown.call(ApiKey.CREATE_ACLS, 3, body, "an UNKNOWN resource type does not parse: closed")


async def _deny_topic(s: Session, conn: Conn, topic: str) -> None:
    """Grant ``topic`` to someone else only, so ANONYMOUS may no longer touch it; wait until it applies."""
    body = CreateAclsRequest(creations=[acl(TOPIC, topic, s.name("User:owner"), ALL)])
    await conn.call(ApiKey.CREATE_ACLS, 3, body, f"grant {topic} to another user")
    await _until_topic_denied(conn, topic)


@scenario("Produce/Fetch/Metadata ACLs", settings=ACL_SETTINGS)
async def acl_topic_checks(s: Session) -> None:
    """A topic granted to someone else: Produce, Fetch and ListOffsets answer TOPIC_AUTHORIZATION_FAILED for its
    partitions while an open topic in the same request is served; Metadata refuses it by name and by id, hides it
    among all topics and reports the open topic's authorized operations; CreateTopics and DeleteTopics refuse it
    too, and DescribeConfigs."""
    conn = await s.connect()
    denied, open_topic = s.name("acl-denied-t"), s.name("acl-open-t")
    await make_topic(s, conn, denied, 1)
    await make_topic(s, conn, open_topic, 1)
    named = MetadataRequest(topics=[MetadataRequestTopic(name=t) for t in (open_topic, denied)])
    ids = [t.topic_id for t in (await ask(conn, ApiKey.METADATA, 12, named)).topics]  # before the denial
    await _deny_topic(s, conn, denied)
    records = batch(b"v")
    produce = produce_request(denied, records)
    produce.topic_data += produce_request(open_topic, records).topic_data
    await conn.call(ApiKey.PRODUCE, 9, produce, "produce to both")
    fetch = FetchRequest(
        max_wait_ms=0,
        topics=[
            FetchTopic(topic=t, partitions=[FetchPartition(partition=0, partition_max_bytes=1024)])
            for t in (open_topic, denied)
        ],
    )
    await conn.call(ApiKey.FETCH, 12, fetch, "fetch both")
    offsets = ListOffsetsRequest(
        replica_id=-1,
        topics=[
            ListOffsetsTopic(name=t, partitions=[ListOffsetsPartition(partition_index=0, timestamp=-1)])
            for t in (open_topic, denied)
        ],
    )
    await conn.call(ApiKey.LIST_OFFSETS, 7, offsets, "list offsets of both")
    named = MetadataRequest(
        topics=[MetadataRequestTopic(name=t) for t in (denied, open_topic)],
        allow_auto_topic_creation=False,
        include_topic_authorized_operations=True,
    )
    answer = await ask(conn, ApiKey.METADATA, 12, named)
    s.note("metadata by name", sorted((t.name, t.error_code, t.topic_authorized_operations) for t in answer.topics))
    by_id = MetadataRequest(
        topics=[MetadataRequestTopic(name=None, topic_id=t) for t in ids],
        allow_auto_topic_creation=False,
    )
    answer = await ask(conn, ApiKey.METADATA, 12, by_id)
    s.note("metadata by topic id", sorted((t.name or "", t.error_code, len(t.partitions)) for t in answer.topics))
    everything = await ask(conn, ApiKey.METADATA, 12, MetadataRequest(topics=None))
    ours = sorted(t.name for t in everything.topics if t.name in (denied, open_topic))
    s.note("metadata of all topics shows", ours)
    configs = DescribeConfigsRequest(
        resources=[
            DescribeConfigsResource(resource_type=TOPIC, resource_name=denied, configuration_keys=["retention.ms"])
        ]
    )
    await conn.call(ApiKey.DESCRIBE_CONFIGS, 4, configs, "describe the denied topic's configs")
    prefix = s.name("acl-owned-")
    await conn.call(
        ApiKey.CREATE_ACLS,
        3,
        CreateAclsRequest(creations=[acl(TOPIC, prefix, s.name("User:owner"), ALL, pattern=PREFIXED)]),
        "grant a prefix to another user",
    )
    await _until_topic_denied(conn, prefix + "x")
    create = CreateTopicsRequest(
        topics=[CreatableTopic(name=prefix + "x", num_partitions=1, replication_factor=1)], timeout_ms=10_000
    )
    await conn.call(ApiKey.CREATE_TOPICS, 7, create, "create a topic under the prefix")
    delete = DeleteTopicsRequest(topics=[DeleteTopicState(name=denied)], timeout_ms=10_000)
    await conn.call(ApiKey.DELETE_TOPICS, 6, delete, "delete the denied topic")


@scenario("group ACLs", settings=ACL_SETTINGS)
async def acl_group_checks(s: Session) -> None:
    """A group granted to someone else: FindCoordinator (v3 and v4 beside an open group), JoinGroup, OffsetCommit,
    OffsetFetch, DescribeGroups with authorized operations, DeleteGroups, ConsumerGroupDescribe and
    ConsumerGroupHeartbeat answer GROUP_AUTHORIZATION_FAILED for it; an open group committing to a denied topic gets
    TOPIC_AUTHORIZATION_FAILED for that topic only, and a KIP-848 member subscribing to it the whole heartbeat."""
    conn = await s.connect()
    denied, open_group = s.name("acl-denied-g"), s.name("acl-open-g")
    topic, denied_topic = s.name("acl-g-t"), s.name("acl-g-denied-t")
    await make_topic(s, conn, topic, 1)
    await make_topic(s, conn, denied_topic, 1)
    body = CreateAclsRequest(creations=[acl(GROUP, denied, s.name("User:owner"), ALL)])
    await conn.call(ApiKey.CREATE_ACLS, 3, body, "grant the group to another user")
    await _until_key_denied(conn, denied, 0)
    await _deny_topic(s, conn, denied_topic)
    keys = FindCoordinatorRequest(key_type=0, coordinator_keys=[open_group, denied])
    answer = await ask(conn, ApiKey.FIND_COORDINATOR, 4, keys)
    s.note(
        "find coordinators",
        sorted((c.key, c.error_code, c.error_message, c.node_id) for c in answer.coordinators),
    )
    await conn.call(
        ApiKey.FIND_COORDINATOR, 3, FindCoordinatorRequest(key=denied, key_type=0), "v3 for the denied group"
    )
    await conn.call(ApiKey.JOIN_GROUP, 9, join_body(denied), "join the denied group")
    await commit(conn, denied, {(topic, 0): 3}, "commit to the denied group")
    await commit(conn, open_group, {(topic, 0): 3, (denied_topic, 0): 3}, "commit to a denied topic")
    fetch = OffsetFetchRequest(groups=[OffsetFetchRequestGroup(group_id=g, topics=None) for g in (open_group, denied)])
    await conn.call(ApiKey.OFFSET_FETCH, 9, fetch, "fetch offsets of both groups")
    described = DescribeGroupsRequest(groups=[open_group, denied], include_authorized_operations=True)
    await conn.call(ApiKey.DESCRIBE_GROUPS, 5, described, "describe both with authorized operations")
    await conn.call(ApiKey.DELETE_GROUPS, 2, DeleteGroupsRequest(groups_names=[denied]), "delete the denied group")
    cg_described = ConsumerGroupDescribeRequest(group_ids=[denied], include_authorized_operations=True)
    await conn.call(ApiKey.CONSUMER_GROUP_DESCRIBE, 1, cg_described, "consumer-group describe the denied group")
    for group_id, topics, step in (
        (denied, [topic], "consumer heartbeat in the denied group"),
        (s.name("acl-open-cg"), [topic, denied_topic], "consumer heartbeat subscribing to a denied topic"),
    ):
        beat = ConsumerGroupHeartbeatRequest(
            group_id=group_id,
            member_id=s.name("member"),
            member_epoch=0,
            rebalance_timeout_ms=10_000,
            subscribed_topic_names=topics,
            topic_partitions=[],
        )
        await conn.call(ApiKey.CONSUMER_GROUP_HEARTBEAT, 1, beat, step)


@scenario("transactional id ACLs", settings=ACL_SETTINGS)
async def acl_transactional_id_checks(s: Session) -> None:
    """A transactional id granted to someone else: FindCoordinator, InitProducerId and EndTxn answer
    TRANSACTIONAL_ID_AUTHORIZATION_FAILED."""
    conn = await s.connect()
    tid = s.name("acl-tx")
    body = CreateAclsRequest(creations=[acl(TRANSACTIONAL_ID, tid, s.name("User:owner"), ALL)])
    await conn.call(ApiKey.CREATE_ACLS, 3, body, "grant the transactional id to another user")
    await _until_key_denied(conn, tid, 1)
    await conn.call(
        ApiKey.FIND_COORDINATOR, 4, FindCoordinatorRequest(key_type=1, coordinator_keys=[tid]), "find its coordinator"
    )
    init = InitProducerIdRequest(transactional_id=tid, transaction_timeout_ms=10_000)
    await conn.call(ApiKey.INIT_PRODUCER_ID, 5, init, "init the producer")
    end = EndTxnRequest(transactional_id=tid, producer_id=1, producer_epoch=0, committed=True)
    await conn.call(ApiKey.END_TXN, 4, end, "end a transaction")


@scenario("admin API ACLs", settings=ACL_SETTINGS)
async def acl_admin_api_checks(s: Session) -> None:
    """A topic and a transactional id granted to someone else, through the other topic APIs: CreatePartitions,
    DeleteRecords, DescribeProducers, OffsetForLeaderEpoch, AlterConfigs, IncrementalAlterConfigs and
    DescribeTopicPartitions (named, with authorized operations) answer TOPIC_AUTHORIZATION_FAILED for it beside an
    open topic; OffsetDelete in an open group refuses the topic; DescribeTransactions refuses the transactional id."""
    conn = await s.connect()
    denied, open_topic = s.name("acl-adm-denied-t"), s.name("acl-adm-open-t")
    await make_topic(s, conn, denied, 1)
    await make_topic(s, conn, open_topic, 1)
    await _deny_topic(s, conn, denied)
    both = (open_topic, denied)
    partitions = CreatePartitionsRequest(
        topics=[CreatePartitionsTopic(name=t, count=2, assignments=None) for t in both], timeout_ms=10_000
    )
    await conn.call(ApiKey.CREATE_PARTITIONS, 3, partitions, "create partitions of both")
    records = DeleteRecordsRequest(
        topics=[
            DeleteRecordsTopic(name=t, partitions=[DeleteRecordsPartition(partition_index=0, offset=0)]) for t in both
        ],
        timeout_ms=10_000,
    )
    answer = await ask(conn, ApiKey.DELETE_RECORDS, 2, records)  # Kafka lists the topics in hash order
    s.note(
        "delete records of both",
        sorted((t.name, p.error_code, p.low_watermark) for t in answer.topics for p in t.partitions),
    )
    producers = DescribeProducersRequest(topics=[ProducersTopic(name=t, partition_indexes=[0]) for t in both])
    await conn.call(ApiKey.DESCRIBE_PRODUCERS, 0, producers, "describe producers of both")
    epochs = OffsetForLeaderEpochRequest(
        replica_id=-1,
        topics=[
            OffsetForLeaderTopic(topic=t, partitions=[OffsetForLeaderPartition(partition=0, leader_epoch=0)])
            for t in both
        ],
    )
    await conn.call(ApiKey.OFFSET_FOR_LEADER_EPOCH, 4, epochs, "offsets for leader epochs of both")
    alter = AlterConfigsRequest(
        resources=[
            AlterConfigsResource(
                resource_type=TOPIC, resource_name=t, configs=[AlterableConfig(name="retention.ms", value="99999")]
            )
            for t in both
        ]
    )
    answer = await ask(conn, ApiKey.ALTER_CONFIGS, 2, alter)
    s.note("alter configs of both", sorted((r.resource_name, r.error_code, r.error_message) for r in answer.responses))
    incremental = IncrementalAlterConfigsRequest(
        resources=[
            IncrementalResource(
                resource_type=TOPIC,
                resource_name=t,
                configs=[IncrementalConfig(name="retention.ms", config_operation=0, value="88888")],
            )
            for t in both
        ]
    )
    answer = await ask(conn, ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, incremental)
    s.note(
        "incrementally alter configs of both",
        sorted((r.resource_name, r.error_code, r.error_message) for r in answer.responses),
    )
    described = DescribeTopicPartitionsRequest(topics=[DtpTopic(name=t) for t in both], response_partition_limit=100)
    answer = await ask(conn, ApiKey.DESCRIBE_TOPIC_PARTITIONS, 0, described)
    s.note(
        "describe topic partitions of both",
        sorted((t.name, t.error_code, t.topic_authorized_operations, len(t.partitions)) for t in answer.topics),
    )
    group = s.name("acl-adm-g")
    await commit(conn, group, {(open_topic, 0): 1}, "commit to the open topic")
    delete = OffsetDeleteRequest(
        group_id=group,
        topics=[
            OffsetDeleteRequestTopic(name=t, partitions=[OffsetDeleteRequestPartition(partition_index=0)]) for t in both
        ],
    )
    await conn.call(ApiKey.OFFSET_DELETE, 0, delete, "delete the group's offsets of both")
    tid = s.name("acl-adm-tx")
    body = CreateAclsRequest(creations=[acl(TRANSACTIONAL_ID, tid, s.name("User:owner"), ALL)])
    await conn.call(ApiKey.CREATE_ACLS, 3, body, "grant a transactional id to another user")
    await _until_key_denied(conn, tid, 1)
    await conn.call(
        ApiKey.DESCRIBE_TRANSACTIONS,
        0,
        DescribeTransactionsRequest(transactional_ids=[tid]),
        "describe the transaction",
    )
