"""Every API's ACL checks over the raw protocol, table-driven: with the StandardAuthorizer and no ACL, a caller
gets exactly the error Kafka answers, where Kafka puts it (per partition, per topic, per group or the whole
request); once the ACL the API needs is granted the same request is served (what it then answers is the API's
own answer). ``base`` ACLs are granted first, to reach a later check (OffsetCommit's topic READ after its group
READ). Every served API has a guard or is one Kafka serves unchecked."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from broker.access import GUARDS, UNCHECKED
from broker.app import Broker
from broker.authorized_operations import NOT_REQUESTED
from broker.security.acl import AclOperation, ResourceType
from protocol.messages import (
    add_offsets_to_txn,
    add_partitions_to_txn,
    alter_configs,
    alter_partition_reassignments,
    alter_user_scram_credentials,
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
    describe_quorum,
    describe_topic_partitions,
    describe_transactions,
    describe_user_scram_credentials,
    elect_leaders,
    end_txn,
    find_coordinator,
    heartbeat,
    incremental_alter_configs,
    init_producer_id,
    join_group,
    leave_group,
    list_config_resources,
    list_groups,
    list_offsets,
    list_partition_reassignments,
    list_transactions,
    metadata,
    offset_commit,
    offset_delete,
    offset_fetch,
    offset_for_leader_epoch,
    sync_group,
    txn_offset_commit,
)
from protocol.messages.consumer_group_describe import ConsumerGroupDescribeRequest
from protocol.messages.create_acls import AclCreation
from protocol.messages.fetch import FetchPartition, FetchRequest, FetchTopic
from protocol.registry import ApiKey
from tests.broker.acl_wire import ADMIN, acl_broker, client_as, creation, grant
from tests.support.data_plane import batch, produce_request

ALICE = "User:alice"
T, G, TX = "t", "g", "tx"
_O = AclOperation


def allow(resource_type: ResourceType, name: str, operation: AclOperation) -> AclCreation:
    return creation((resource_type, name), ALICE, operation)


def on_topic(operation: AclOperation, name: str = T) -> AclCreation:
    return allow(ResourceType.TOPIC, name, operation)


def on_group(operation: AclOperation) -> AclCreation:
    return allow(ResourceType.GROUP, G, operation)


def on_txn(operation: AclOperation) -> AclCreation:
    return allow(ResourceType.TRANSACTIONAL_ID, TX, operation)


@dataclass(frozen=True)
class Case:
    id: str
    api: ApiKey
    version: int
    request: Callable[[], Any]
    outcome: Callable[[Any], Any]
    denied: Any
    grants: tuple[AclCreation, ...]
    allowed: Any
    base: tuple[AclCreation, ...] = ()


def partitions(topics_field: str, partitions_field: str, code: str = "error_code") -> Callable[[Any], list[int]]:
    return lambda r: [getattr(p, code) for t in getattr(r, topics_field) for p in getattr(t, partitions_field)]


def top(r: Any) -> list[int]:
    return [r.error_code]


def _produce(transactional: bool = False) -> Any:
    if transactional:
        return produce_request(
            T, batch(b"v", producer_id=1, epoch=0, sequence=0, transactional=True), transactional_id=TX
        )
    return produce_request(T, batch(b"v"))


def _commit() -> Any:
    return offset_commit.OffsetCommitRequest(
        group_id=G,
        member_id="",
        topics=[
            offset_commit.OffsetCommitRequestTopic(
                name=T, partitions=[offset_commit.OffsetCommitRequestPartition(partition_index=0, committed_offset=1)]
            )
        ],
    )


def _txn_commit() -> Any:
    return txn_offset_commit.TxnOffsetCommitRequest(
        transactional_id=TX,
        group_id=G,
        producer_id=1,
        producer_epoch=0,
        topics=[
            txn_offset_commit.TxnOffsetCommitRequestTopic(
                name=T,
                partitions=[txn_offset_commit.TxnOffsetCommitRequestPartition(partition_index=0, committed_offset=1)],
            )
        ],
    )


def _cg_heartbeat() -> Any:
    return consumer_group_heartbeat.ConsumerGroupHeartbeatRequest(
        group_id=G,
        member_id="m1",
        member_epoch=0,
        rebalance_timeout_ms=10000,
        subscribed_topic_names=[T],
        topic_partitions=[],
    )


TOPIC_ERRORS = partitions("responses", "partition_responses")
FETCH_ERRORS = partitions("responses", "partitions")
COMMIT_ERRORS = partitions("topics", "partitions")

CASES = [
    Case("produce", ApiKey.PRODUCE, 9, _produce, TOPIC_ERRORS, [29], (on_topic(_O.WRITE),), [0]),
    Case(
        "produce-transactional-id",
        ApiKey.PRODUCE,
        9,
        lambda: _produce(transactional=True),
        TOPIC_ERRORS,
        [53],
        (on_txn(_O.WRITE),),
        [49],  # INVALID_PRODUCER_ID_MAPPING: served, the producer id was never initialised
        base=(on_topic(_O.WRITE),),
    ),
    Case(
        "fetch",
        ApiKey.FETCH,
        12,
        lambda: FetchRequest(
            max_wait_ms=0,
            topics=[FetchTopic(topic=T, partitions=[FetchPartition(partition=0, partition_max_bytes=1024)])],
        ),
        FETCH_ERRORS,
        [29],
        (on_topic(_O.READ),),
        [0],
    ),
    Case(
        "list-offsets",
        ApiKey.LIST_OFFSETS,
        7,
        lambda: list_offsets.ListOffsetsRequest(
            replica_id=-1,
            topics=[
                list_offsets.ListOffsetsTopic(
                    name=T, partitions=[list_offsets.ListOffsetsPartition(partition_index=0, timestamp=-1)]
                )
            ],
        ),
        partitions("topics", "partitions"),
        [29],
        (on_topic(_O.DESCRIBE),),
        [0],
    ),
    Case(
        "metadata-named",
        ApiKey.METADATA,
        12,
        lambda: metadata.MetadataRequest(
            topics=[metadata.MetadataRequestTopic(name=T)], include_topic_authorized_operations=True
        ),
        lambda r: [(t.name, t.error_code, t.topic_authorized_operations) for t in r.topics],
        [(T, 29, NOT_REQUESTED)],
        (on_topic(_O.READ),),
        [(T, 0, (1 << 3) | (1 << 8))],  # READ and the DESCRIBE it implies
    ),
    Case(
        "metadata-all-topics",
        ApiKey.METADATA,
        12,
        lambda: metadata.MetadataRequest(topics=None),
        lambda r: sorted(t.name for t in r.topics),
        [],
        (on_topic(_O.DESCRIBE),),
        [T],
    ),
    Case(
        "metadata-auto-create",
        ApiKey.METADATA,
        12,
        lambda: metadata.MetadataRequest(
            topics=[metadata.MetadataRequestTopic(name="new-t")], allow_auto_topic_creation=True
        ),
        lambda r: [(t.name, t.error_code) for t in r.topics],
        [("new-t", 29)],
        (on_topic(_O.CREATE, "new-t"),),
        [("new-t", 0)],
        base=(on_topic(_O.DESCRIBE, "new-t"),),
    ),
    Case(
        "find-coordinator-group",
        ApiKey.FIND_COORDINATOR,
        4,
        lambda: find_coordinator.FindCoordinatorRequest(key_type=0, coordinator_keys=[G]),
        lambda r: [(c.key, c.error_code, c.error_message) for c in r.coordinators],
        [(G, 30, "")],
        (on_group(_O.DESCRIBE),),
        [(G, 0, "")],
    ),
    Case(
        "find-coordinator-transaction",
        ApiKey.FIND_COORDINATOR,
        4,
        lambda: find_coordinator.FindCoordinatorRequest(key_type=1, coordinator_keys=[TX]),
        lambda r: [(c.key, c.error_code) for c in r.coordinators],
        [(TX, 53)],
        (on_txn(_O.DESCRIBE),),
        [(TX, 0)],
    ),
    Case(
        "join-group",
        ApiKey.JOIN_GROUP,
        9,
        lambda: join_group.JoinGroupRequest(
            group_id=G,
            session_timeout_ms=10000,
            rebalance_timeout_ms=10000,
            protocol_type="consumer",
            protocols=[join_group.JoinGroupRequestProtocol(name="range", metadata=b"")],
        ),
        top,
        [30],
        (on_group(_O.READ),),
        [79],  # MEMBER_ID_REQUIRED: served
    ),
    Case(
        "sync-group",
        ApiKey.SYNC_GROUP,
        5,
        lambda: sync_group.SyncGroupRequest(
            group_id=G, generation_id=1, member_id="m", protocol_type="consumer", protocol_name="range"
        ),
        top,
        [30],
        (on_group(_O.READ),),
        [25],
    ),
    Case(
        "heartbeat",
        ApiKey.HEARTBEAT,
        4,
        lambda: heartbeat.HeartbeatRequest(group_id=G, generation_id=1, member_id="m"),
        top,
        [30],
        (on_group(_O.READ),),
        [25],
    ),
    Case(
        "leave-group",
        ApiKey.LEAVE_GROUP,
        5,
        lambda: leave_group.LeaveGroupRequest(group_id=G, members=[leave_group.MemberIdentity(member_id="m")]),
        lambda r: [r.error_code, *(m.error_code for m in r.members)],
        [30],
        (on_group(_O.READ),),
        [0, 25],
    ),
    Case("offset-commit-group", ApiKey.OFFSET_COMMIT, 9, _commit, COMMIT_ERRORS, [30], (on_group(_O.READ),), [29]),
    Case(
        "offset-commit-topic",
        ApiKey.OFFSET_COMMIT,
        9,
        _commit,
        COMMIT_ERRORS,
        [29],
        (on_topic(_O.READ),),
        [0],
        base=(on_group(_O.READ),),
    ),
    Case(
        "offset-fetch",
        ApiKey.OFFSET_FETCH,
        8,
        lambda: offset_fetch.OffsetFetchRequest(groups=[offset_fetch.OffsetFetchRequestGroup(group_id=G, topics=None)]),
        lambda r: [g.error_code for g in r.groups],
        [30],
        (on_group(_O.DESCRIBE),),
        [0],
    ),
    Case(
        "describe-groups",
        ApiKey.DESCRIBE_GROUPS,
        5,
        lambda: describe_groups.DescribeGroupsRequest(groups=[G], include_authorized_operations=True),
        lambda r: [(g.group_id, g.error_code, g.authorized_operations) for g in r.groups],
        [(G, 30, NOT_REQUESTED)],
        (on_group(_O.DESCRIBE),),
        [(G, 0, 1 << 8)],
    ),
    Case(
        "delete-groups",
        ApiKey.DELETE_GROUPS,
        2,
        lambda: delete_groups.DeleteGroupsRequest(groups_names=[G]),
        lambda r: [(g.group_id, g.error_code) for g in r.results],
        [(G, 30)],
        (on_group(_O.DELETE),),
        [(G, 69)],  # GROUP_ID_NOT_FOUND: served
    ),
    Case(
        "consumer-group-heartbeat-group",
        ApiKey.CONSUMER_GROUP_HEARTBEAT,
        0,
        _cg_heartbeat,
        lambda r: [(r.error_code, r.error_message)],
        [(30, None)],
        (on_group(_O.READ),),
        [(29, None)],
    ),
    Case(
        "consumer-group-heartbeat-topic",
        ApiKey.CONSUMER_GROUP_HEARTBEAT,
        0,
        _cg_heartbeat,
        top,
        [29],
        (on_topic(_O.DESCRIBE),),
        [0],
        base=(on_group(_O.READ),),
    ),
    Case(
        "create-topics",
        ApiKey.CREATE_TOPICS,
        7,
        lambda: create_topics.CreateTopicsRequest(
            topics=[create_topics.CreatableTopic(name="c-t", num_partitions=1, replication_factor=1)]
        ),
        lambda r: [(t.name, t.error_code) for t in r.topics],
        [("c-t", 29)],
        (on_topic(_O.CREATE, "c-t"),),
        [("c-t", 0)],
    ),
    Case(
        "delete-topics",
        ApiKey.DELETE_TOPICS,
        6,
        lambda: delete_topics.DeleteTopicsRequest(topics=[delete_topics.DeleteTopicState(name=T)], timeout_ms=5000),
        lambda r: [(t.name, t.error_code) for t in r.responses],
        [(T, 29)],
        (on_topic(_O.DELETE),),
        [(T, 0)],
    ),
    Case(
        "delete-topics-v5",
        ApiKey.DELETE_TOPICS,
        5,
        lambda: delete_topics.DeleteTopicsRequest(topic_names=[T], timeout_ms=5000),
        lambda r: [(t.name, t.error_code) for t in r.responses],
        [(T, 29)],
        (on_topic(_O.DELETE),),
        [(T, 0)],
    ),
    Case(
        "init-producer-id-transactional",
        ApiKey.INIT_PRODUCER_ID,
        5,
        lambda: init_producer_id.InitProducerIdRequest(transactional_id=TX, transaction_timeout_ms=10000),
        top,
        [53],
        (on_txn(_O.WRITE),),
        [0],
    ),
    Case(
        "init-producer-id-idempotent",
        ApiKey.INIT_PRODUCER_ID,
        5,
        lambda: init_producer_id.InitProducerIdRequest(transactional_id=None, transaction_timeout_ms=10000),
        top,
        [31],
        (on_topic(_O.WRITE),),
        [0],
    ),
    Case(
        "end-txn",
        ApiKey.END_TXN,
        4,
        lambda: end_txn.EndTxnRequest(transactional_id=TX, producer_id=1, producer_epoch=0, committed=True),
        top,
        [53],
        (on_txn(_O.WRITE),),
        [49],
    ),
    Case(
        "add-offsets-to-txn",
        ApiKey.ADD_OFFSETS_TO_TXN,
        3,
        lambda: add_offsets_to_txn.AddOffsetsToTxnRequest(
            transactional_id=TX, producer_id=1, producer_epoch=0, group_id=G
        ),
        top,
        [30],
        (on_group(_O.READ),),
        [49],
        base=(on_txn(_O.WRITE),),
    ),
    Case(
        "add-partitions-to-txn",
        ApiKey.ADD_PARTITIONS_TO_TXN,
        3,
        lambda: add_partitions_to_txn.AddPartitionsToTxnRequest(
            v3_and_below_transactional_id=TX,
            v3_and_below_producer_id=1,
            v3_and_below_producer_epoch=0,
            v3_and_below_topics=[add_partitions_to_txn.AddPartitionsToTxnTopic(name=T, partitions=[0])],
        ),
        partitions("results_by_topic_v3_and_below", "results_by_partition", "partition_error_code"),
        [29],
        (on_topic(_O.WRITE),),
        [49],
        base=(on_txn(_O.WRITE),),
    ),
    Case(
        "txn-offset-commit",
        ApiKey.TXN_OFFSET_COMMIT,
        3,
        _txn_commit,
        COMMIT_ERRORS,
        [53],
        (on_txn(_O.WRITE),),
        [49],
        base=(on_group(_O.READ), on_topic(_O.READ)),
    ),
    Case(
        "describe-cluster",
        ApiKey.DESCRIBE_CLUSTER,
        1,
        lambda: describe_cluster.DescribeClusterRequest(include_cluster_authorized_operations=True),
        lambda r: [r.error_code, r.cluster_authorized_operations],
        [0, 0],
        (allow(ResourceType.CLUSTER, "kafka-cluster", _O.DESCRIBE),),
        [0, 1 << 8],
    ),
]

CLUSTER = (ResourceType.CLUSTER, "kafka-cluster")


def on_cluster(operation: AclOperation) -> AclCreation:
    return allow(*CLUSTER, operation)


def cluster_only(api: ApiKey, version: int, request: Callable[[], Any], operation: AclOperation, served: int) -> Case:
    return Case(f"{api.name.lower()}", api, version, request, top, [31], (on_cluster(operation),), [served])


CASES += [
    Case(
        "describe-configs",
        ApiKey.DESCRIBE_CONFIGS,
        4,
        lambda: describe_configs.DescribeConfigsRequest(
            resources=[
                describe_configs.DescribeConfigsResource(resource_type=2, resource_name=T, configuration_keys=[]),
                describe_configs.DescribeConfigsResource(resource_type=4, resource_name="1", configuration_keys=[]),
            ]
        ),
        lambda r: [(x.resource_type, x.error_code, x.error_message) for x in r.results],
        [(2, 29, "Topic authorization failed."), (4, 31, "Cluster authorization failed.")],
        (on_topic(_O.DESCRIBE_CONFIGS), on_cluster(_O.DESCRIBE_CONFIGS)),
        [(2, 0, ""), (4, 0, "")],
    ),
    Case(
        "alter-configs",
        ApiKey.ALTER_CONFIGS,
        2,
        lambda: alter_configs.AlterConfigsRequest(
            resources=[alter_configs.AlterConfigsResource(resource_type=2, resource_name=T, configs=[])]
        ),
        lambda r: [(x.error_code, x.error_message) for x in r.responses],
        [(29, "Topic authorization failed.")],
        (on_topic(_O.ALTER_CONFIGS),),
        [(0, None)],
    ),
    Case(
        "incremental-alter-configs",
        ApiKey.INCREMENTAL_ALTER_CONFIGS,
        1,
        lambda: incremental_alter_configs.IncrementalAlterConfigsRequest(
            resources=[incremental_alter_configs.AlterConfigsResource(resource_type=4, resource_name="1", configs=[])]
        ),
        lambda r: [x.error_code for x in r.responses],
        [31],
        (on_cluster(_O.ALTER_CONFIGS),),
        [0],
    ),
    Case(
        "create-partitions",
        ApiKey.CREATE_PARTITIONS,
        3,
        lambda: create_partitions.CreatePartitionsRequest(
            topics=[create_partitions.CreatePartitionsTopic(name=T, count=2, assignments=None)], timeout_ms=5000
        ),
        lambda r: [x.error_code for x in r.results],
        [29],
        (on_topic(_O.ALTER),),
        [0],
    ),
    Case(
        "delete-records",
        ApiKey.DELETE_RECORDS,
        2,
        lambda: delete_records.DeleteRecordsRequest(
            topics=[
                delete_records.DeleteRecordsTopic(
                    name=T, partitions=[delete_records.DeleteRecordsPartition(partition_index=0, offset=0)]
                )
            ],
            timeout_ms=5000,
        ),
        partitions("topics", "partitions"),
        [29],
        (on_topic(_O.DELETE),),
        [0],
    ),
    Case(
        "describe-producers",
        ApiKey.DESCRIBE_PRODUCERS,
        0,
        lambda: describe_producers.DescribeProducersRequest(
            topics=[describe_producers.TopicRequest(name=T, partition_indexes=[0])]
        ),
        partitions("topics", "partitions"),
        [29],
        (on_topic(_O.READ),),
        [0],
    ),
    Case(
        "offset-for-leader-epoch",
        ApiKey.OFFSET_FOR_LEADER_EPOCH,
        4,
        lambda: offset_for_leader_epoch.OffsetForLeaderEpochRequest(
            replica_id=-1,
            topics=[
                offset_for_leader_epoch.OffsetForLeaderTopic(
                    topic=T, partitions=[offset_for_leader_epoch.OffsetForLeaderPartition(partition=0, leader_epoch=0)]
                )
            ],
        ),
        partitions("topics", "partitions"),
        [29],
        (on_topic(_O.DESCRIBE),),
        [0],
    ),
    Case(
        "offset-delete",
        ApiKey.OFFSET_DELETE,
        0,
        lambda: offset_delete.OffsetDeleteRequest(
            group_id=G,
            topics=[
                offset_delete.OffsetDeleteRequestTopic(
                    name=T, partitions=[offset_delete.OffsetDeleteRequestPartition(partition_index=0)]
                )
            ],
        ),
        lambda r: [r.error_code, *partitions("topics", "partitions")(r)],
        [30],
        (on_group(_O.DELETE),),
        [69, 29],  # served (GROUP_ID_NOT_FOUND), the topic still needing READ
    ),
    Case(
        "describe-topic-partitions",
        ApiKey.DESCRIBE_TOPIC_PARTITIONS,
        0,
        lambda: describe_topic_partitions.DescribeTopicPartitionsRequest(
            topics=[describe_topic_partitions.TopicRequest(name=T)], response_partition_limit=100
        ),
        lambda r: [(t.name, t.error_code, t.topic_authorized_operations) for t in r.topics],
        [(T, 29, NOT_REQUESTED)],
        (on_topic(_O.DESCRIBE),),
        [(T, 0, 1 << 8)],
    ),
    Case(
        "describe-transactions",
        ApiKey.DESCRIBE_TRANSACTIONS,
        0,
        lambda: describe_transactions.DescribeTransactionsRequest(transactional_ids=[TX]),
        lambda r: [(x.transactional_id, x.error_code) for x in r.transaction_states],
        [(TX, 53)],
        (on_txn(_O.DESCRIBE),),
        [(TX, 105)],  # TRANSACTIONAL_ID_NOT_FOUND: served
    ),
    Case(
        "describe-log-dirs",
        ApiKey.DESCRIBE_LOG_DIRS,
        4,
        lambda: describe_log_dirs.DescribeLogDirsRequest(topics=[]),
        lambda r: [r.error_code, len(r.results)],
        [31, 0],
        (on_cluster(_O.DESCRIBE),),
        [0, 1],
    ),
    cluster_only(
        ApiKey.ELECT_LEADERS,
        2,
        lambda: elect_leaders.ElectLeadersRequest(topic_partitions=[], timeout_ms=5000),
        _O.ALTER,
        0,
    ),
    cluster_only(
        ApiKey.ALTER_PARTITION_REASSIGNMENTS,
        0,
        lambda: alter_partition_reassignments.AlterPartitionReassignmentsRequest(timeout_ms=5000, topics=[]),
        _O.ALTER,
        0,
    ),
    cluster_only(
        ApiKey.LIST_PARTITION_REASSIGNMENTS,
        0,
        lambda: list_partition_reassignments.ListPartitionReassignmentsRequest(timeout_ms=5000, topics=None),
        _O.DESCRIBE,
        0,
    ),
    cluster_only(
        ApiKey.LIST_CONFIG_RESOURCES,
        1,
        lambda: list_config_resources.ListConfigResourcesRequest(resource_types=[]),
        _O.DESCRIBE_CONFIGS,
        0,
    ),
    Case(
        "describe-quorum",
        ApiKey.DESCRIBE_QUORUM,
        2,
        lambda: describe_quorum.DescribeQuorumRequest(topics=[]),
        top,
        [31],
        (on_cluster(_O.DESCRIBE),),
        [0],
    ),
    Case(
        "describe-user-scram-credentials",
        ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS,
        0,
        lambda: describe_user_scram_credentials.DescribeUserScramCredentialsRequest(
            users=[describe_user_scram_credentials.UserName(name="nobody")]
        ),
        lambda r: [r.error_code, r.error_message, [(x.user, x.error_code) for x in r.results]],
        [31, "Cluster authorization failed.", [("nobody", 31)]],
        (on_cluster(_O.DESCRIBE),),
        [0, "", [("nobody", 91)]],  # served: RESOURCE_NOT_FOUND (Kafka's empty top-level message)
    ),
    Case(
        "alter-user-scram-credentials",
        ApiKey.ALTER_USER_SCRAM_CREDENTIALS,
        0,
        lambda: alter_user_scram_credentials.AlterUserScramCredentialsRequest(
            deletions=[alter_user_scram_credentials.ScramCredentialDeletion(name="nobody", mechanism=2)],
            upsertions=[],
        ),
        lambda r: [(x.user, x.error_code) for x in r.results],
        [("nobody", 31)],
        (on_cluster(_O.ALTER),),
        [("nobody", 91)],  # served: RESOURCE_NOT_FOUND
    ),
    Case(
        "list-transactions",
        ApiKey.LIST_TRANSACTIONS,
        1,
        lambda: list_transactions.ListTransactionsRequest(),
        lambda r: [r.error_code, len(r.transaction_states)],
        [0, 0],
        (on_txn(_O.DESCRIBE),),
        [0, 0],
    ),
    Case(
        "list-groups",
        ApiKey.LIST_GROUPS,
        4,
        lambda: list_groups.ListGroupsRequest(),
        lambda r: [r.error_code, len(r.groups)],
        [0, 0],
        (on_group(_O.DESCRIBE),),
        [0, 0],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
async def test_each_api_refuses_as_kafka_without_its_acl_and_serves_with_it(tmp_path: Path, case: Case) -> None:
    async with acl_broker(tmp_path) as broker:
        admin = await client_as(broker, ADMIN)
        alice = await client_as(broker, ALICE)
        try:
            broker.create_topic(T, 1, {})
            if case.base:
                await grant(admin, *case.base)
            assert case.outcome(await alice.call(case.api, case.version, case.request())) == case.denied
            await grant(admin, *case.grants)
            assert case.outcome(await alice.call(case.api, case.version, case.request())) == case.allowed
        finally:  # a failed case must not leave sockets open for the next one to trip over
            await admin.close()
            await alice.close()


async def test_every_served_api_has_a_guard_or_is_served_unchecked_as_in_kafka(broker: Broker) -> None:
    served = set(broker.dispatcher.routes)
    assert served - set(GUARDS) - UNCHECKED == set()


async def test_consumer_group_describe_refuses_a_group_assigned_topics_the_caller_may_not_describe(
    tmp_path: Path,
) -> None:
    """KafkaApis.handleConsumerGroupDescribe: a described group whose members' assignments name a topic without
    DESCRIBE is answered TOPIC_AUTHORIZATION_FAILED with Kafka's message and no members."""
    async with acl_broker(tmp_path) as broker:
        admin = await client_as(broker, ADMIN)
        alice = await client_as(broker, ALICE)
        try:
            broker.create_topic(T, 1, {})
            joined = await admin.call(ApiKey.CONSUMER_GROUP_HEARTBEAT, 0, _cg_heartbeat())
            assert joined.error_code == 0
            await grant(admin, on_group(_O.DESCRIBE))
            describe = ConsumerGroupDescribeRequest(group_ids=[G], include_authorized_operations=True)
            refused = (await alice.call(ApiKey.CONSUMER_GROUP_DESCRIBE, 0, describe)).groups
            assert [(g.error_code, g.error_message, g.members) for g in refused] == [
                (29, "The group has described topic(s) that the client is not authorized to describe.", [])
            ]
            await grant(admin, on_topic(_O.DESCRIBE))
            [group] = (await alice.call(ApiKey.CONSUMER_GROUP_DESCRIBE, 0, describe)).groups
            assert (group.error_code, len(group.members), group.authorized_operations) == (0, 1, 1 << 8)
        finally:
            await admin.close()
            await alice.close()
