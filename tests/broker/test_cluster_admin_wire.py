"""The cluster-level admin APIs of issue #16 over raw requests, at every version the broker advertises, errors
included: DescribeCluster, DescribeTopicPartitions, ElectLeaders, DescribeQuorum, List/AlterPartitionReassignments,
the KIP-714 telemetry APIs (served, not advertised), Metadata v13 with authorized operations and ApiVersions v5
(KIP-1242). What Kafka answers for the same requests is compared in tests/differential/scenarios/cluster_admin.py."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest

from broker import authorized_operations
from broker.app import Broker
from broker.telemetry import PUSH_INTERVAL_MS, subscription_id
from protocol.errors import ErrorCode
from protocol.messages.alter_partition_reassignments import (
    AlterPartitionReassignmentsRequest,
    ReassignablePartition,
    ReassignableTopic,
)
from protocol.messages.api_versions import ApiVersionsRequest
from protocol.messages.describe_cluster import DescribeClusterRequest
from protocol.messages.describe_quorum import DescribeQuorumRequest, PartitionData, TopicData
from protocol.messages.describe_topic_partitions import Cursor, DescribeTopicPartitionsRequest, TopicRequest
from protocol.messages.elect_leaders import ElectLeadersRequest, TopicPartitions
from protocol.messages.get_telemetry_subscriptions import GetTelemetrySubscriptionsRequest
from protocol.messages.list_partition_reassignments import (
    ListPartitionReassignmentsRequest,
    ListPartitionReassignmentsTopics,
)
from protocol.messages.metadata import MetadataRequest, MetadataRequestTopic
from protocol.messages.push_telemetry import PushTelemetryRequest
from protocol.registry import ApiKey
from tests.broker.wire import WireClient
from tests.support.broker_process import wait_until_async

NODE = 1
NOT_REQUESTED = authorized_operations.NOT_REQUESTED


@pytest.fixture
async def client(broker: Broker) -> AsyncIterator[WireClient]:
    broker.create_topic("one", 1, {})
    broker.create_topic("three", 3, {})
    connection = await WireClient.connect(broker.ports[0])
    yield connection
    await connection.close()


def versions(broker: Broker, api_key: ApiKey) -> range:
    route = broker.dispatcher.routes[api_key]
    return range(route.min_version, route.max_version + 1)


# -- ApiVersions v5 (KIP-1242) and Metadata v13 --------------------------------------------------------------------


def named(cluster_id: str | None, node_id: int, name: str = "wire") -> ApiVersionsRequest:
    return ApiVersionsRequest(
        client_software_name=name, client_software_version="1", cluster_id=cluster_id, node_id=node_id
    )


async def test_api_versions_v5_checks_the_cluster_and_node_the_client_means(broker: Broker, client: WireClient) -> None:
    cluster_id = broker.logs.cluster_id
    for body, error in (
        (named(None, -1), ErrorCode.NONE),
        (named(cluster_id, NODE), ErrorCode.NONE),
        (named(cluster_id, NODE + 1), ErrorCode.REBOOTSTRAP_REQUIRED),
        (named("another", NODE), ErrorCode.REBOOTSTRAP_REQUIRED),
        (named(None, NODE), ErrorCode.INVALID_REQUEST),  # both or neither
        (named(cluster_id, -1), ErrorCode.INVALID_REQUEST),
        (named("another", NODE, name=""), ErrorCode.INVALID_REQUEST),  # KIP-511's check comes first
    ):
        response = await client.call(ApiKey.API_VERSIONS, 5, body)
        assert (response.error_code, bool(response.api_keys)) == (error, error == ErrorCode.NONE), body
    # v3 and v4 carry no cluster id: nothing to check
    assert (await client.call(ApiKey.API_VERSIONS, 4, named(None, -1))).error_code == ErrorCode.NONE


async def test_api_versions_lists_every_served_api_but_the_telemetry_ones(broker: Broker, client: WireClient) -> None:
    response = await client.call(ApiKey.API_VERSIONS, 5, named(None, -1))
    listed = {v.api_key: (v.min_version, v.max_version) for v in response.api_keys}
    assert listed[ApiKey.API_VERSIONS] == (0, 5) and listed[ApiKey.METADATA] == (0, 13)
    for api_key, served in (
        (ApiKey.DESCRIBE_CLUSTER, (0, 2)),
        (ApiKey.DESCRIBE_TOPIC_PARTITIONS, (0, 0)),
        (ApiKey.ELECT_LEADERS, (0, 2)),
        (ApiKey.DESCRIBE_QUORUM, (0, 2)),
        (ApiKey.LIST_PARTITION_REASSIGNMENTS, (0, 0)),
        (ApiKey.ALTER_PARTITION_REASSIGNMENTS, (0, 1)),
    ):
        assert listed[api_key] == served, api_key.name
    assert ApiKey.GET_TELEMETRY_SUBSCRIPTIONS not in listed and ApiKey.PUSH_TELEMETRY not in listed
    assert ApiKey.GET_TELEMETRY_SUBSCRIPTIONS in broker.dispatcher.routes


async def test_metadata_reports_authorized_operations_when_asked(broker: Broker, client: WireClient) -> None:
    topics = [MetadataRequestTopic(name="one"), MetadataRequestTopic(name="missing")]
    for v in range(8, 14):
        asked = MetadataRequest(
            topics=topics,
            allow_auto_topic_creation=False,
            include_topic_authorized_operations=True,
            include_cluster_authorized_operations=v <= 10,
        )
        response = await client.call(ApiKey.METADATA, v, asked)
        assert [(t.name, t.topic_authorized_operations) for t in response.topics] == [
            ("one", authorized_operations.TOPIC),
            ("missing", authorized_operations.TOPIC),
        ]
        expected_cluster = authorized_operations.CLUSTER if v <= 10 else NOT_REQUESTED
        assert response.cluster_authorized_operations == expected_cluster
        not_asked = await client.call(ApiKey.METADATA, v, MetadataRequest(topics=topics[:1]))
        assert not_asked.topics[0].topic_authorized_operations == NOT_REQUESTED
        assert not_asked.cluster_authorized_operations == NOT_REQUESTED
    v13 = await client.call(ApiKey.METADATA, 13, MetadataRequest(topics=None))
    assert v13.error_code == ErrorCode.NONE and {"one", "three"} <= {t.name for t in v13.topics}


# -- DescribeCluster ------------------------------------------------------------------------------------------------


async def test_describe_cluster_names_this_node_as_broker_and_controller(broker: Broker, client: WireClient) -> None:
    for v in versions(broker, ApiKey.DESCRIBE_CLUSTER):
        response = await client.call(ApiKey.DESCRIBE_CLUSTER, v, DescribeClusterRequest())
        assert (response.error_code, response.error_message) == (ErrorCode.NONE, None)
        assert (response.cluster_id, response.controller_id) == (broker.logs.cluster_id, NODE)
        [node] = response.brokers
        assert (node.broker_id, node.host, node.port, node.rack, node.is_fenced) == (
            NODE,
            "127.0.0.1",
            broker.ports[0],
            None,
            False,
        )
        assert response.cluster_authorized_operations == NOT_REQUESTED
        asked = DescribeClusterRequest(include_cluster_authorized_operations=True, include_fenced_brokers=v >= 2)
        answered = await client.call(ApiKey.DESCRIBE_CLUSTER, v, asked)
        assert answered.cluster_authorized_operations == authorized_operations.CLUSTER == 8096
        assert answered.brokers == response.brokers


async def test_describe_cluster_refuses_other_endpoint_types(broker: Broker, client: WireClient) -> None:
    for v in versions(broker, ApiKey.DESCRIBE_CLUSTER):
        if v == 0:
            continue  # v0 has no endpoint type: always brokers
        for endpoint_type, error, message in (
            (
                2,
                ErrorCode.MISMATCHED_ENDPOINT_TYPE,
                "The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type CONTROLLER",
            ),
            (3, ErrorCode.UNSUPPORTED_ENDPOINT_TYPE, "Unsupported endpoint type 3"),
            (-1, ErrorCode.UNSUPPORTED_ENDPOINT_TYPE, "Unsupported endpoint type -1"),
        ):
            response = await client.call(
                ApiKey.DESCRIBE_CLUSTER, v, DescribeClusterRequest(endpoint_type=endpoint_type)
            )
            assert (response.error_code, response.error_message) == (error, message)
            assert (response.cluster_id, response.controller_id, response.brokers) == ("", -1, [])


# -- DescribeTopicPartitions ----------------------------------------------------------------------------------------


def dtp(*names: str, limit: int = 2000, cursor: tuple[str, int] | None = None) -> DescribeTopicPartitionsRequest:
    return DescribeTopicPartitionsRequest(
        topics=[TopicRequest(name=n) for n in names],
        response_partition_limit=limit,
        cursor=None if cursor is None else Cursor(topic_name=cursor[0], partition_index=cursor[1]),
    )


async def test_describe_topic_partitions_pages_follow_the_cursor(broker: Broker, client: WireClient) -> None:
    """Two partitions a page over "three" and "one" (answered in name order): every partition exactly once."""
    seen: list[tuple[str, int]] = []
    request = dtp("three", "one", limit=2)
    for _ in range(5):
        response = await client.call(ApiKey.DESCRIBE_TOPIC_PARTITIONS, 0, request)
        for topic in response.topics:
            assert topic.error_code == ErrorCode.NONE
            assert topic.topic_id == broker.logs.topic(topic.name).topic_id  # type: ignore[union-attr]
            assert topic.topic_authorized_operations == authorized_operations.TOPIC
            for p in topic.partitions:
                assert (p.leader_id, p.leader_epoch, p.replica_nodes, p.isr_nodes) == (NODE, 0, [NODE], [NODE])
                assert (p.eligible_leader_replicas, p.last_known_elr, p.offline_replicas) == ([], [], [])
                seen.append((topic.name, p.partition_index))
        if response.next_cursor is None:
            break
        request.cursor = response.next_cursor
    assert seen == [("one", 0), ("three", 0), ("three", 1), ("three", 2)]


async def test_describe_topic_partitions_of_every_topic(broker: Broker, client: WireClient) -> None:
    response = await client.call(ApiKey.DESCRIBE_TOPIC_PARTITIONS, 0, dtp())
    listed = {t.name: (t.is_internal, len(t.partitions)) for t in response.topics}
    assert listed["one"] == (False, 1) and listed["three"] == (False, 3)
    assert listed["__consumer_offsets"] == (True, broker.config["offsets.topic.num.partitions"])
    assert [t.name for t in response.topics] == sorted(listed)
    from_three = await client.call(ApiKey.DESCRIBE_TOPIC_PARTITIONS, 0, dtp(limit=1, cursor=("three", 2)))
    assert [(t.name, [p.partition_index for p in t.partitions]) for t in from_three.topics] == [("three", [2])]
    assert from_three.next_cursor is None


async def test_describe_topic_partitions_limits_and_cursors(broker: Broker, client: WireClient) -> None:
    async def shown(request: DescribeTopicPartitionsRequest) -> tuple[list[tuple[str, int, list[int]]], Cursor | None]:
        response = await client.call(ApiKey.DESCRIBE_TOPIC_PARTITIONS, 0, request)
        topics = [(t.name, t.error_code, [p.partition_index for p in t.partitions]) for t in response.topics]
        return topics, response.next_cursor

    assert await shown(dtp("three", limit=0)) == ([("three", 0, [0])], Cursor(topic_name="three", partition_index=1))
    assert await shown(dtp("three", limit=-3)) == ([("three", 0, [0])], Cursor(topic_name="three", partition_index=1))
    assert await shown(dtp("one", "three", limit=1)) == (
        [("one", 0, [0])],
        Cursor(topic_name="three", partition_index=0),
    )
    assert await shown(dtp("three", cursor=("three", 9))) == ([("three", 0, [])], None)
    assert await shown(dtp("one", "one")) == ([("one", 0, [0])], None)
    assert await shown(dtp("one", "missing", "a/b")) == (
        [
            ("a/b", ErrorCode.INVALID_TOPIC_EXCEPTION, []),
            ("missing", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, []),
            ("one", 0, [0]),
        ],
        None,
    )
    # names before the cursor's topic are left out
    assert await shown(dtp("one", "three", cursor=("three", 1))) == ([("three", 0, [1, 2])], None)
    # refused cursors: INVALID_REQUEST on each named topic, once per name, in the order named
    assert await shown(dtp("three", "one", "three", cursor=("missing", 0))) == (
        [("three", ErrorCode.INVALID_REQUEST, []), ("one", ErrorCode.INVALID_REQUEST, [])],
        None,
    )
    assert await shown(dtp("three", cursor=("three", -1))) == ([("three", ErrorCode.INVALID_REQUEST, [])], None)
    assert await shown(dtp(cursor=("three", -1))) == ([], None)


# -- ElectLeaders ---------------------------------------------------------------------------------------------------


def elect(*topics: tuple[str, list[int]], election_type: int = 0) -> ElectLeadersRequest:
    return ElectLeadersRequest(
        election_type=election_type, topic_partitions=[TopicPartitions(topic=t, partitions=ps) for t, ps in topics]
    )


async def test_elect_leaders_is_never_needed_on_one_node(broker: Broker, client: WireClient) -> None:
    not_needed = (ErrorCode.ELECTION_NOT_NEEDED, "Leader election not needed for topic partition.")
    for v in versions(broker, ApiKey.ELECT_LEADERS):
        for election_type in (0, 1) if v >= 1 else (0,):
            request = elect(("three", [0, 2, -1, 3]), ("missing", [0]), election_type=election_type)
            response = await client.call(ApiKey.ELECT_LEADERS, v, request)
            assert response.error_code == ErrorCode.NONE
            assert [
                (r.topic, [(p.partition_id, p.error_code, p.error_message) for p in r.partition_result])
                for r in response.replica_election_results
            ] == [
                (
                    "three",
                    [
                        (0, *not_needed),
                        (2, *not_needed),
                        (-1, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "No such partition as three--1"),
                        (3, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "No such partition as three-3"),
                    ],
                ),
                ("missing", [(0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "No such topic as missing")]),
            ]
        everything = await client.call(ApiKey.ELECT_LEADERS, v, ElectLeadersRequest(topic_partitions=None))
        results = {r.topic: r.partition_result for r in everything.replica_election_results}
        assert {"one", "three", "__consumer_offsets"} <= set(results) and not any(results.values())
        nothing = await client.call(ApiKey.ELECT_LEADERS, v, ElectLeadersRequest(topic_partitions=[]))
        assert nothing.replica_election_results == []


async def test_elect_leaders_refuses_an_unknown_election_type(broker: Broker, client: WireClient) -> None:
    for v in versions(broker, ApiKey.ELECT_LEADERS):
        if v == 0:
            continue  # v0 has no election type: always the preferred leader
        response = await client.call(ApiKey.ELECT_LEADERS, v, elect(("three", [0]), ("missing", [1]), election_type=2))
        assert response.error_code == ErrorCode.INVALID_REQUEST
        assert [
            (r.topic, [(p.partition_id, p.error_code, p.error_message) for p in r.partition_result])
            for r in response.replica_election_results
        ] == [
            ("three", [(0, ErrorCode.INVALID_REQUEST, "Unknown election type 2")]),
            ("missing", [(1, ErrorCode.INVALID_REQUEST, "Unknown election type 2")]),
        ]
        everything = ElectLeadersRequest(election_type=-1, topic_partitions=None)
        refused = await client.call(ApiKey.ELECT_LEADERS, v, everything)
        assert (refused.error_code, refused.replica_election_results) == (ErrorCode.INVALID_REQUEST, [])


# -- DescribeQuorum -------------------------------------------------------------------------------------------------


def quorum(*asked: tuple[str, list[int]]) -> DescribeQuorumRequest:
    return DescribeQuorumRequest(
        topics=[TopicData(topic_name=t, partitions=[PartitionData(partition_index=p) for p in ps]) for t, ps in asked]
    )


async def test_describe_quorum_names_this_node_the_leader_and_only_voter(broker: Broker, client: WireClient) -> None:
    broker.clock.freeze()
    now = broker.clock.wall_ms()
    for v in versions(broker, ApiKey.DESCRIBE_QUORUM):
        response = await client.call(ApiKey.DESCRIBE_QUORUM, v, quorum(("__cluster_metadata", [0])))
        assert response.error_code == ErrorCode.NONE
        [topic] = response.topics
        [partition] = topic.partitions
        assert (topic.topic_name, partition.partition_index, partition.error_code) == ("__cluster_metadata", 0, 0)
        assert (partition.leader_id, partition.leader_epoch, partition.high_watermark) == (NODE, 1, 0)
        [voter] = partition.current_voters
        assert (voter.replica_id, voter.replica_directory_id, voter.log_end_offset) == (NODE, uuid.UUID(int=0), 0)
        fetched = now if v >= 1 else -1
        assert (voter.last_fetch_timestamp, voter.last_caught_up_timestamp) == (fetched, fetched)
        assert partition.observers == []
        if v >= 2:
            [node] = response.nodes
            assert node.node_id == NODE
            assert [(x.name, x.host, x.port) for x in node.listeners] == [("PLAINTEXT", "127.0.0.1", broker.ports[0])]


async def test_describe_quorum_knows_only_the_metadata_partition(broker: Broker, client: WireClient) -> None:
    for v in versions(broker, ApiKey.DESCRIBE_QUORUM):
        message = "This server does not host this topic-partition." if v >= 2 else ""
        for asked in (
            (("three", [0]),),
            (("__cluster_metadata", [1]),),
            (("__cluster_metadata", [0, 0]),),
            (("__cluster_metadata", [0]), ("three", [1])),
        ):
            response = await client.call(ApiKey.DESCRIBE_QUORUM, v, quorum(*asked))
            assert response.error_code == ErrorCode.NONE and response.nodes == []
            assert [
                (t.topic_name, [(p.partition_index, p.error_code, p.error_message) for p in t.partitions])
                for t in response.topics
            ] == [(t, [(p, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, message) for p in ps]) for t, ps in asked]
        assert (await client.call(ApiKey.DESCRIBE_QUORUM, v, quorum())).topics == []


# -- Partition reassignments ----------------------------------------------------------------------------------------


def reassign(*parts: tuple[str, int, list[int] | None], **kw: bool) -> AlterPartitionReassignmentsRequest:
    topics: dict[str, list[ReassignablePartition]] = {}
    for topic, index, replicas in parts:
        topics.setdefault(topic, []).append(ReassignablePartition(partition_index=index, replicas=replicas))
    return AlterPartitionReassignmentsRequest(
        topics=[ReassignableTopic(name=name, partitions=ps) for name, ps in topics.items()], **kw
    )


async def test_reassignments_on_one_node(broker: Broker, client: WireClient) -> None:
    invalid = ErrorCode.INVALID_REPLICA_ASSIGNMENT
    prefix = "The manual partition assignment includes"
    for v in versions(broker, ApiKey.ALTER_PARTITION_REASSIGNMENTS):
        request = reassign(
            ("three", 0, [NODE]),
            ("three", 1, None),
            ("three", 2, [2, NODE]),
            ("three", 2, [NODE, NODE]),
            ("three", 2, []),
            ("three", 2, [NODE, -5]),
            ("three", 5, [NODE]),
            ("missing", 0, [NODE]),
        )
        response = await client.call(ApiKey.ALTER_PARTITION_REASSIGNMENTS, v, request)
        assert (response.error_code, response.error_message, response.allow_replication_factor_change) == (
            0,
            None,
            True,
        )
        assert [
            (r.name, [(p.partition_index, p.error_code, p.error_message) for p in r.partitions])
            for r in response.responses
        ] == [
            (
                "three",
                [
                    (0, ErrorCode.NONE, None),
                    (1, ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, None),
                    (2, invalid, f"{prefix} broker 2, but no such broker is registered."),
                    (2, invalid, f"{prefix} the broker {NODE} more than once."),
                    (2, invalid, f"{prefix} an empty replica list."),
                    (2, invalid, f"{prefix} broker -5, but no such broker is registered."),
                    (5, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "Unable to find partition three:5."),
                ],
            ),
            ("missing", [(0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "Unable to find a topic named missing.")]),
        ]
    kept = await client.call(
        ApiKey.ALTER_PARTITION_REASSIGNMENTS, 1, reassign(("one", 0, [NODE]), allow_replication_factor_change=False)
    )
    assert kept.allow_replication_factor_change is False and kept.responses[0].partitions[0].error_code == 0
    listed = ListPartitionReassignmentsRequest(
        topics=[ListPartitionReassignmentsTopics(name="three", partition_indexes=[0, 1, 9])]
    )
    for request in (ListPartitionReassignmentsRequest(), listed):
        response = await client.call(ApiKey.LIST_PARTITION_REASSIGNMENTS, 0, request)
        assert (response.error_code, response.error_message, response.topics) == (ErrorCode.NONE, None, [])
    assert broker.logs.topic("three").partitions == 3  # type: ignore[union-attr]


# -- KIP-714 telemetry ----------------------------------------------------------------------------------------------


async def test_telemetry_is_answered_as_kafka_without_a_metrics_plugin(broker: Broker, client: WireClient) -> None:
    broker.clock.freeze()
    got = await client.call(ApiKey.GET_TELEMETRY_SUBSCRIPTIONS, 0, GetTelemetrySubscriptionsRequest())
    instance = got.client_instance_id
    assert (got.error_code, instance.int != 0, got.subscription_id) == (ErrorCode.NONE, True, subscription_id(instance))
    assert (got.accepted_compression_types, got.push_interval_ms, got.telemetry_max_bytes) == (
        [4, 3, 1, 2],
        300_000,
        1 << 20,
    )
    assert (got.delta_temporality, got.requested_metrics) == (True, [])
    again = GetTelemetrySubscriptionsRequest(client_instance_id=instance)
    assert (
        await client.call(ApiKey.GET_TELEMETRY_SUBSCRIPTIONS, 0, again)
    ).error_code == ErrorCode.THROTTLING_QUOTA_EXCEEDED
    push = PushTelemetryRequest(client_instance_id=instance, subscription_id=got.subscription_id, metrics=b"otlp")
    assert (await client.call(ApiKey.PUSH_TELEMETRY, 0, push)).error_code == ErrorCode.NONE
    assert (await client.call(ApiKey.PUSH_TELEMETRY, 0, push)).error_code == ErrorCode.THROTTLING_QUOTA_EXCEEDED
    broker.advance_time(PUSH_INTERVAL_MS)
    assert (await client.call(ApiKey.PUSH_TELEMETRY, 0, push)).error_code == ErrorCode.NONE
    broker.advance_time(PUSH_INTERVAL_MS)
    assert (await client.call(ApiKey.GET_TELEMETRY_SUBSCRIPTIONS, 0, again)).client_instance_id == instance


async def test_a_client_instance_is_forgotten_when_its_connection_closes(broker: Broker, client: WireClient) -> None:
    got = await client.call(ApiKey.GET_TELEMETRY_SUBSCRIPTIONS, 0, GetTelemetrySubscriptionsRequest())
    again = GetTelemetrySubscriptionsRequest(client_instance_id=got.client_instance_id)
    other = await WireClient.connect(broker.ports[0])
    try:
        throttled = await other.call(ApiKey.GET_TELEMETRY_SUBSCRIPTIONS, 0, again)
        assert throttled.error_code == ErrorCode.THROTTLING_QUOTA_EXCEEDED  # still known: its connection is open
        await client.close()
        await wait_closed(broker, count=1)
        assert (await other.call(ApiKey.GET_TELEMETRY_SUBSCRIPTIONS, 0, again)).error_code == ErrorCode.NONE
    finally:
        await other.close()


async def wait_closed(broker: Broker, count: int) -> None:
    """Until the broker has `count` connections left (the closed one's handler has run its end)."""
    await wait_until_async(lambda: len(broker.connections) == count, what="the connection closed on the broker side")
