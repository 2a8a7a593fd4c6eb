"""The cluster-level admin calls of issue #16 with real clients, and KIP-714 telemetry left alone by them.

The Java AdminClient (describeCluster, describeTopics over DescribeTopicPartitions page by page, electLeaders,
describeMetadataQuorum, list/alterPartitionReassignments), confluent-kafka (describe_cluster, describe_topics,
elect_leaders), kafka-python (the same calls it has, DescribeCluster and DescribeTopicPartitions included) and
aiokafka (describe_cluster). Clients ask for telemetry subscriptions only from a broker that advertises
GetTelemetrySubscriptions; neither Kafka without a metrics plugin nor group-broker does, so librdkafka and the Java
client never ask (on group-broker, its request metrics show it).

Every test passes against group-broker and, with `--e2e-broker=kafka`, against Kafka 4.4 itself: a one-node
cluster whose node id is 1 on both.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterator

import pytest
from aiokafka.admin import AIOKafkaAdminClient
from confluent_kafka import ElectionType, KafkaError, Producer, TopicCollection, TopicPartition
from confluent_kafka.admin import AdminClient
from kafka import TopicPartition as KafkaPythonPartition
from kafka.admin import KafkaAdminClient

from tests.e2e.broker_requests import requests_answered
from tests.e2e.confluent_client import LogLines
from tests.e2e.java_client import ERRORS, JavaProgram, started
from tests.e2e.scenario import assert_broker_accepted_every_request, unique
from tests.e2e.targets import E2ETarget
from tests.support.broker_process import wait_until

pytestmark = pytest.mark.integration

NODE = 1
TIMEOUT_S = 15.0
CLUSTER_OPERATIONS = [
    "ALTER",
    "ALTER_CONFIGS",
    "CLUSTER_ACTION",
    "CREATE",
    "DESCRIBE",
    "DESCRIBE_CONFIGS",
    "IDEMPOTENT_WRITE",
]
TOPIC_OPERATIONS = ["ALTER", "ALTER_CONFIGS", "CREATE", "DELETE", "DESCRIBE", "DESCRIBE_CONFIGS", "READ", "WRITE"]


@pytest.fixture(scope="module")
def java(e2e_target: E2ETarget, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[JavaProgram, JavaProgram]]:
    """The Java AdminClient and a KafkaProducer, one JVM each, for the whole module."""
    with contextlib.ExitStack() as stack:
        admin, producer = started(
            e2e_target.bootstrap, tmp_path_factory.mktemp("java-clients"), stack, "AdminServer", "ProducerServer"
        )
        yield admin, producer


@pytest.fixture(scope="module")
def topics(java: tuple[JavaProgram, JavaProgram]) -> tuple[str, str]:
    """A one-partition and a three-partition topic, once every partition has its leader in the metadata."""
    admin, _ = java
    one, three = unique("cluster-one"), unique("cluster-three")
    for name, partitions in ((one, 1), (three, 3)):
        assert admin.call("createTopic", topic=name, partitions=partitions) is True

    def described() -> bool:
        found = admin.call("describeTopics", topics=[one, three])
        return all(isinstance(t, dict) and all(p["leader"] == NODE for p in t["partitions"]) for t in found.values())

    wait_until(described, what="the new topics' leaders in the metadata")
    return one, three


def broker_accepted(target: E2ETarget, client: str) -> None:
    if target.broker is not None:
        assert_broker_accepted_every_request(target.broker, client)


# -- the Java AdminClient -----------------------------------------------------------------------------------------


def test_java_admin_describes_the_cluster(java: tuple[JavaProgram, JavaProgram], e2e_target: E2ETarget) -> None:
    admin, _ = java
    host, port = e2e_target.bootstrap.rsplit(":", 1)
    cluster = admin.call("describeCluster", authorizedOperations=True)
    assert cluster["nodes"] == [{"id": NODE, "host": host, "port": int(port), "rack": None}]
    assert cluster["controller"] == cluster["nodes"][0] and cluster["clusterId"]
    assert cluster["authorizedOperations"] == CLUSTER_OPERATIONS
    assert admin.call("describeCluster")["authorizedOperations"] is None
    broker_accepted(e2e_target, "Java AdminClient describeCluster")


def test_java_admin_describes_topics_one_partition_per_request(
    java: tuple[JavaProgram, JavaProgram], topics: tuple[str, str], e2e_target: E2ETarget
) -> None:
    """describeTopics with a page of one partition follows DescribeTopicPartitions' cursor to the last partition."""
    admin, _ = java
    one, three = topics
    missing = unique("cluster-missing")
    before = 0.0 if e2e_target.broker is None else requests_answered(e2e_target.broker, "DescribeTopicPartitions")
    described = admin.call("describeTopics", topics=[one, three, missing], pageSize=1, authorizedOperations=True)
    assert described[missing] == ERRORS + "UnknownTopicOrPartitionException"
    for name, count in ((one, 1), (three, 3)):
        topic = described[name]
        assert (topic["internal"], topic["authorizedOperations"]) == (False, TOPIC_OPERATIONS)
        assert topic["partitions"] == [
            {"partition": p, "leader": NODE, "replicas": [NODE], "isr": [NODE], "elr": [], "lastKnownElr": []}
            for p in range(count)
        ]
    assert described[one]["topicId"] != described[three]["topicId"]
    if e2e_target.broker is not None:  # one request per partition: the client did page through the cursor
        assert requests_answered(e2e_target.broker, "DescribeTopicPartitions") - before >= 4
    broker_accepted(e2e_target, "Java AdminClient describeTopics")


def test_java_admin_leader_elections_are_not_needed(
    java: tuple[JavaProgram, JavaProgram], topics: tuple[str, str], e2e_target: E2ETarget
) -> None:
    admin, _ = java
    _, three = topics
    not_needed = ERRORS + "ElectionNotNeededException"
    preferred = admin.call("electLeaders", type="PREFERRED", topic=three, partitions=[0, 1, 2, 7])
    assert preferred == {
        "0": not_needed,
        "1": not_needed,
        "2": not_needed,
        "7": ERRORS + "UnknownTopicOrPartitionException",
    }
    assert admin.call("electLeaders", type="UNCLEAN", topic=three, partitions=[1]) == {"1": not_needed}
    broker_accepted(e2e_target, "Java AdminClient electLeaders")


def test_java_admin_describes_the_metadata_quorum(java: tuple[JavaProgram, JavaProgram], e2e_target: E2ETarget) -> None:
    """The node is the leader and only voter; group-broker names its client listener where Kafka names its
    controller listener (README, Differences from Kafka)."""
    admin, _ = java
    quorum = admin.call("describeMetadataQuorum")
    assert (quorum["leaderId"], quorum["observers"]) == (NODE, [])
    assert quorum["leaderEpoch"] >= 1 and quorum["highWatermark"] >= 0
    [voter] = quorum["voters"]
    assert voter["replicaId"] == NODE and voter["logEndOffset"] >= 0
    assert voter["lastFetchTimestamp"] is not None and voter["lastCaughtUpTimestamp"] is not None
    [endpoint] = quorum["nodes"][str(NODE)]
    assert endpoint["host"] == "127.0.0.1" and endpoint["port"] > 0
    broker_accepted(e2e_target, "Java AdminClient describeMetadataQuorum")


def test_java_admin_partition_reassignments_on_one_node(
    java: tuple[JavaProgram, JavaProgram], topics: tuple[str, str], e2e_target: E2ETarget
) -> None:
    """Nothing is ever being reassigned; moving a partition to the replica it has changes nothing, cancelling finds
    nothing to cancel, and another broker is not a valid replica."""
    admin, _ = java
    _, three = topics
    assert admin.call("listPartitionReassignments") == []
    altered = admin.call("alterPartitionReassignments", topic=three, replicas={"0": [NODE], "1": None, "2": [NODE + 1]})
    assert altered == {
        "0": None,
        "1": ERRORS + "NoReassignmentInProgressException",
        "2": ERRORS + "InvalidReplicaAssignmentException",
    }
    assert admin.call("listPartitionReassignments", topic=three, partitions=[0, 1, 2]) == []
    assert admin.call("describeTopics", topics=[three])[three]["partitions"][0]["replicas"] == [NODE]
    broker_accepted(e2e_target, "Java AdminClient partition reassignments")


# -- confluent-kafka, kafka-python, aiokafka ----------------------------------------------------------------------


def test_confluent_describes_the_cluster_and_topics_and_elects_leaders(
    topics: tuple[str, str], e2e_target: E2ETarget
) -> None:
    one, three = topics
    admin = AdminClient({"bootstrap.servers": e2e_target.bootstrap})
    cluster = admin.describe_cluster(include_authorized_operations=True, request_timeout=TIMEOUT_S).result()
    assert [node.id for node in cluster.nodes] == [NODE] and cluster.controller.id == NODE and cluster.cluster_id
    assert sorted(op.name for op in cluster.authorized_operations) == CLUSTER_OPERATIONS
    described = admin.describe_topics(TopicCollection([one, three]), include_authorized_operations=True)
    for name, count in ((one, 1), (three, 3)):
        topic = described[name].result(TIMEOUT_S)
        assert [(p.id, p.leader.id, [r.id for r in p.replicas], [r.id for r in p.isr]) for p in topic.partitions] == [
            (p, NODE, [NODE], [NODE]) for p in range(count)
        ]
        assert sorted(op.name for op in topic.authorized_operations) == TOPIC_OPERATIONS
    wanted = [TopicPartition(three, 0), TopicPartition(three, 2), TopicPartition(three, 9)]
    elected = admin.elect_leaders(ElectionType.PREFERRED, wanted).result(TIMEOUT_S)
    assert {tp.partition: error.code() for tp, error in elected.items()} == {
        0: KafkaError.ELECTION_NOT_NEEDED,
        2: KafkaError.ELECTION_NOT_NEEDED,
        9: KafkaError.UNKNOWN_TOPIC_OR_PART,
    }
    broker_accepted(e2e_target, "confluent-kafka AdminClient")


def test_kafka_python_cluster_admin(topics: tuple[str, str], e2e_target: E2ETarget) -> None:
    """kafka-python's DescribeCluster, DescribeTopicPartitions (following the cursor by hand), ElectLeaders,
    DescribeQuorum and the partition reassignments."""
    _, three = topics
    admin = KafkaAdminClient(bootstrap_servers=e2e_target.bootstrap)
    try:
        cluster = admin.describe_cluster()
        assert [b["broker_id"] for b in cluster["brokers"]] == [NODE]
        assert cluster["controller_id"] == NODE and cluster["cluster_id"]
        seen, cursor = [], None
        for _ in range(5):
            page = admin.describe_topic_partitions([three], response_partition_limit=2, cursor=cursor)
            seen += [(t["name"], p["partition_index"], p["leader_id"]) for t in page["topics"] for p in t["partitions"]]
            cursor = page["next_cursor"]
            if cursor is None:
                break
        assert seen == [(three, p, NODE) for p in range(3)]
        admin.elect_leaders(0, {three: [0, 1]})  # ELECTION_NOT_NEEDED is not an error to kafka-python
        quorum = admin.describe_metadata_quorum()
        [partition] = quorum["topics"][0]["partitions"]
        assert (partition["leader_id"], partition["error"]) == (NODE, None)
        assert [v["replica_id"] for v in partition["current_voters"]] == [NODE]
        assert admin.list_partition_reassignments() == {}
        moved = admin.alter_partition_reassignments({KafkaPythonPartition(three, 0): [NODE]})
        assert moved == {KafkaPythonPartition(three, 0): None}
    finally:
        admin.close()
    broker_accepted(e2e_target, "kafka-python KafkaAdminClient")


def test_aiokafka_describes_the_cluster(e2e_target: E2ETarget) -> None:
    async def describe() -> dict[str, object]:
        admin = AIOKafkaAdminClient(bootstrap_servers=e2e_target.bootstrap)
        await admin.start()
        try:
            return await admin.describe_cluster()
        finally:
            await admin.close()

    cluster = asyncio.run(describe())
    assert [b["node_id"] for b in cluster["brokers"]] == [NODE]  # type: ignore[index, union-attr]
    assert cluster["controller_id"] == NODE and cluster["cluster_id"]
    broker_accepted(e2e_target, "aiokafka AIOKafkaAdminClient")


# -- KIP-714 telemetry --------------------------------------------------------------------------------------------


def test_librdkafka_never_asks_for_telemetry_subscriptions(topics: tuple[str, str], e2e_target: E2ETarget) -> None:
    """With `enable.metrics.push` on (its default), librdkafka asks a broker for telemetry subscriptions only when
    ApiVersions lists GetTelemetrySubscriptions. Once every connection of a producer has its ApiVersions answer
    (the produce went through), the decision is made: its protocol log shows no such request."""
    one, _ = topics
    log = logging.getLogger(f"rdkafka-{one}")
    log.setLevel(logging.DEBUG)
    lines = LogLines()
    log.addHandler(lines)
    producer = Producer(
        {"bootstrap.servers": e2e_target.bootstrap, "enable.metrics.push": True, "debug": "protocol,telemetry"},
        logger=log,
    )
    try:
        producer.produce(one, b"telemetry?")
        assert producer.flush(TIMEOUT_S) == 0
        producer.poll(0)
    finally:
        log.removeHandler(lines)
    sent = [line for line in lines.lines if " Sent " in line]
    assert any("ApiVersionRequest" in line for line in sent) and any("ProduceRequest" in line for line in sent)
    assert not [line for line in lines.lines if "GetTelemetrySubscriptions" in line]
    if e2e_target.broker is not None:
        assert requests_answered(e2e_target.broker, "GetTelemetrySubscriptions") == 0


def test_java_client_gets_no_telemetry_subscription(
    java: tuple[JavaProgram, JavaProgram], topics: tuple[str, str], e2e_target: E2ETarget
) -> None:
    """The Java producer (telemetry on by default) has no client instance id, the id a telemetry subscription
    hands out: it never got one, because the broker does not offer telemetry."""
    _, producer = java
    one, _ = topics
    producer.call("send", topic=one, records=[["k", "v"]], partition=0)
    assert producer.call("clientInstanceId", timeoutMs=1500) is None
    if e2e_target.broker is not None:
        assert requests_answered(e2e_target.broker, "GetTelemetrySubscriptions") == 0
