"""The cluster-level admin APIs of issue #16 at every version both brokers advertise: DescribeCluster,
DescribeTopicPartitions (pagination included), ElectLeaders, DescribeQuorum, List/AlterPartitionReassignments,
Metadata's authorized operations and v13, ApiVersions v5 (KIP-1242), and KIP-714's telemetry APIs, which both
serve without advertising them.

Answers that list the whole broker (every topic) are cut down to this run's topics, since other scenarios create
theirs at the same time; what differs between two brokers by nature (random client instance ids, the KRaft
metadata log's offsets) is recorded as the property that must hold instead.
"""

from __future__ import annotations

import uuid
from typing import Any

from broker.telemetry import subscription_id
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
from tests.differential.normalize import plain
from tests.differential.registry import Known, scenario
from tests.differential.scenarios.group_state import ask, make_topic
from tests.differential.session import Conn, Session

OFFSETS_TOPIC = "__consumer_offsets"
METADATA_TOPIC = "__cluster_metadata"
OFFSET = "<offset>"


async def _topics(s: Session, conn: Conn, prefix: str = "kraft") -> tuple[str, str]:
    """A one-partition and a three-partition topic of this run; their names sort one before three."""
    one, three = s.name(f"{prefix}-one"), s.name(f"{prefix}-three")
    await make_topic(s, conn, one, 1)
    await make_topic(s, conn, three, 3)
    return one, three


@scenario("DescribeCluster")
async def describe_cluster_every_version(s: Session) -> None:
    """DescribeCluster v0-v2: this node as the only broker and the controller; the cluster's authorized
    operations when asked; v2 with fenced brokers asked for; v1+ asking for controllers (MISMATCHED_ENDPOINT_TYPE)
    or an endpoint type that does not exist (UNSUPPORTED_ENDPOINT_TYPE)."""
    conn = await s.connect()
    for v in (0, 1, 2):
        await conn.call(ApiKey.DESCRIBE_CLUSTER, v, DescribeClusterRequest(), f"v{v}")
        asked = DescribeClusterRequest(include_cluster_authorized_operations=True)
        await conn.call(ApiKey.DESCRIBE_CLUSTER, v, asked, f"v{v} with authorized operations")
    fenced = DescribeClusterRequest(include_fenced_brokers=True)
    await conn.call(ApiKey.DESCRIBE_CLUSTER, 2, fenced, "v2 including fenced brokers")
    for v in (1, 2):
        for endpoint_type in (2, 3, 0, -1):
            body = DescribeClusterRequest(endpoint_type=endpoint_type)
            await conn.call(ApiKey.DESCRIBE_CLUSTER, v, body, f"v{v} endpoint type {endpoint_type}")


def _dtp(*names: str, limit: int = 2000, cursor: tuple[str, int] | None = None) -> DescribeTopicPartitionsRequest:
    return DescribeTopicPartitionsRequest(
        topics=[TopicRequest(name=name) for name in names],
        response_partition_limit=limit,
        cursor=None if cursor is None else Cursor(topic_name=cursor[0], partition_index=cursor[1]),
    )


async def _every_topic(s: Session, conn: Conn, body: DescribeTopicPartitionsRequest, step: str) -> None:
    """Every topic from a cursor: only this run's topics are kept, and a next cursor outside them is named as such
    (the pages asked for end inside this run's topics, which no other scenario's names sort between)."""
    answer = await ask(conn, ApiKey.DESCRIBE_TOPIC_PARTITIONS, 0, body)
    if answer is None:
        s.note(step, {"closed": True})
        return
    cursor = answer.next_cursor
    s.note(
        step,
        {
            "topics": [t for t in answer.topics if s.token in t.name],
            "next_cursor": cursor if cursor is None or s.token in cursor.topic_name else "<another run's topic>",
        },
    )


@scenario("DescribeTopicPartitions")
async def describe_topic_partitions_pages(s: Session) -> None:
    """DescribeTopicPartitions v0: named topics in name order, unknown and illegal names, a name given twice, the
    internal offsets topic; pages cut by `response_partition_limit` (0 and negative count as 1) and resumed from
    the cursor, a cursor past a topic's end, and the refused cursors (a negative partition, a topic not named)."""
    conn = await s.connect()
    one, three = await _topics(s, conn, prefix="pages")  # no other scenario's topic sorts between these two
    missing = s.name("kraft-missing")
    cases: list[tuple[str, DescribeTopicPartitionsRequest]] = [
        ("three topics, one unknown", _dtp(three, missing, one)),
        ("an illegal name", _dtp("bad/name")),
        ("a name given twice", _dtp(one, one)),
        ("limit 2 over both", _dtp(three, one, limit=2)),
        ("resumed at three's partition 1", _dtp(three, one, limit=2, cursor=(three, 1))),
        ("limit 1, exactly one's partitions", _dtp(one, limit=1)),
        ("limit 1 over both", _dtp(one, three, limit=1)),
        ("limit 0", _dtp(three, limit=0)),
        ("limit -5", _dtp(three, limit=-5)),
        ("the cursor past three's end", _dtp(three, cursor=(three, 7))),
        ("the cursor before every name", _dtp(one, three, cursor=("", 0))),
        ("the cursor with a negative partition", _dtp(three, cursor=(three, -1))),
        ("the cursor on a topic not named", _dtp(three, one, cursor=(missing, 0))),
        ("the offsets topic, limit 2", _dtp(OFFSETS_TOPIC, limit=2)),
        ("a missing topic and the cursor past it", _dtp(missing, one, cursor=(one, 0))),
    ]
    for step, body in cases:
        await conn.call(ApiKey.DESCRIBE_TOPIC_PARTITIONS, 0, body, step)
    await _every_topic(s, conn, _dtp(limit=3, cursor=(one, 0)), "every topic from one, limit 3")
    await _every_topic(s, conn, _dtp(limit=1, cursor=(three, 1)), "every topic from three's partition 1, limit 1")
    await _every_topic(s, conn, _dtp(cursor=(three, -1)), "every topic, a negative partition")


def _elect(*topics: tuple[str, list[int]], election_type: int = 0) -> ElectLeadersRequest:
    return ElectLeadersRequest(
        election_type=election_type,
        topic_partitions=[TopicPartitions(topic=t, partitions=ps) for t, ps in topics],
    )


async def _elect_everything(s: Session, conn: Conn, version: int) -> None:
    """A null topic list: only this run's topics are kept (the answer lists every topic on the broker)."""
    answer = await ask(conn, ApiKey.ELECT_LEADERS, version, ElectLeadersRequest(topic_partitions=None))
    step = f"v{version} every partition (null)"
    if answer is None:
        s.note(step, {"closed": True})
        return
    mine = sorted((r for r in answer.replica_election_results if s.token in r.topic), key=lambda r: r.topic)
    s.note(step, {"error_code": answer.error_code, "results": mine})


@scenario("ElectLeaders")
async def elect_leaders_every_version(s: Session) -> None:
    """ElectLeaders v0-v2: ELECTION_NOT_NEEDED for partitions that have their leader, UNKNOWN_TOPIC_OR_PARTITION
    with Kafka's messages for an unknown partition or topic, every partition (null: each topic with no result),
    none (empty), v1+ unclean elections and unknown election types (INVALID_REQUEST on every partition named)."""
    conn = await s.connect()
    one, three = await _topics(s, conn)
    missing = s.name("kraft-missing")
    for v in (0, 1, 2):
        mixed = _elect((three, [0, 2, 9, 0]), (missing, [0]), (one, [0]))
        await conn.call(ApiKey.ELECT_LEADERS, v, mixed, f"v{v} existing, unknown and repeated partitions")
        await _elect_everything(s, conn, v)
        await conn.call(ApiKey.ELECT_LEADERS, v, ElectLeadersRequest(topic_partitions=[]), f"v{v} no partition")
        if v >= 1:
            await conn.call(ApiKey.ELECT_LEADERS, v, _elect((three, [1]), election_type=1), f"v{v} unclean")
            for election_type in (2, -1):
                body = _elect((three, [1]), (missing, [0]), election_type=election_type)
                await conn.call(ApiKey.ELECT_LEADERS, v, body, f"v{v} election type {election_type}")
            nothing = ElectLeadersRequest(election_type=5, topic_partitions=None)
            await conn.call(ApiKey.ELECT_LEADERS, v, nothing, f"v{v} election type 5, every partition")


def _quorum(*asked: tuple[str, list[int]]) -> DescribeQuorumRequest:
    return DescribeQuorumRequest(
        topics=[TopicData(topic_name=t, partitions=[PartitionData(partition_index=p) for p in ps]) for t, ps in asked]
    )


def _quorum_answer(answer: Any) -> Any:
    """The metadata log's offsets as `<offset>` (Kafka's grow with every metadata record; group-broker keeps no
    such log); the rest as answered."""
    data = plain(answer)
    for topic in data["topics"]:
        for partition in topic["partitions"]:
            if partition["error_code"] == 0:
                partition["high_watermark"] = OFFSET
                for voter in partition["current_voters"]:
                    voter["log_end_offset"] = OFFSET
    return data


QUORUM_LISTENER = (
    "DescribeQuorum v2 names the node's listeners; group-broker has no controller listener and names the one "
    "clients reach it on."
)


@scenario(
    "DescribeQuorum",
    known=(Known("v2 the metadata partition.nodes[0].listeners[0].name", "PLAINTEXT", "CONTROLLER", QUORUM_LISTENER),),
)
async def describe_quorum_every_version(s: Session) -> None:
    """DescribeQuorum v0-v2: this node as the leader and only voter of `__cluster_metadata` partition 0 (v1+ with
    its fetch times, v2 with its listeners); any other topic, partition or more than one of them is
    UNKNOWN_TOPIC_OR_PARTITION on each one asked (v2 with Kafka's message); nothing asked, nothing answered."""
    conn = await s.connect()
    cases = (
        ("the metadata partition", _quorum((METADATA_TOPIC, [0]))),
        ("another topic", _quorum((s.name("kraft-quorum"), [0]))),
        ("partition 1", _quorum((METADATA_TOPIC, [1]))),
        ("two partitions", _quorum((METADATA_TOPIC, [0, 1]))),
        ("the partition twice", _quorum((METADATA_TOPIC, [0]), (METADATA_TOPIC, [0]))),
        ("nothing", _quorum()),
    )
    for v in (0, 1, 2):
        for step, body in cases:
            answer = await ask(conn, ApiKey.DESCRIBE_QUORUM, v, body)
            s.note(f"v{v} {step}", {"closed": True} if answer is None else _quorum_answer(answer))


def _reassign(*topics: tuple[str, list[tuple[int, list[int] | None]]], **kw: Any) -> AlterPartitionReassignmentsRequest:
    return AlterPartitionReassignmentsRequest(
        topics=[
            ReassignableTopic(
                name=t, partitions=[ReassignablePartition(partition_index=p, replicas=r) for p, r in parts]
            )
            for t, parts in topics
        ],
        **kw,
    )


@scenario("PartitionReassignments")
async def partition_reassignments_on_one_node(s: Session) -> None:
    """ListPartitionReassignments v0 (none, all or named) and AlterPartitionReassignments v0-v1 on one node: to
    the replica set a partition has (accepted, nothing changes), a cancellation (NO_REASSIGNMENT_IN_PROGRESS),
    another broker, a replica twice, an empty or negative list (INVALID_REPLICA_ASSIGNMENT), an unknown partition
    or topic; v1 with `allow_replication_factor_change` false."""
    conn = await s.connect()
    one, three = await _topics(s, conn)
    missing = s.name("kraft-missing")
    listed = ListPartitionReassignmentsRequest(
        topics=[
            ListPartitionReassignmentsTopics(name=three, partition_indexes=[0, 9]),
            ListPartitionReassignmentsTopics(name=missing, partition_indexes=[0]),
        ]
    )
    await conn.call(ApiKey.LIST_PARTITION_REASSIGNMENTS, 0, ListPartitionReassignmentsRequest(), "list every one")
    await conn.call(ApiKey.LIST_PARTITION_REASSIGNMENTS, 0, listed, "list named ones")
    for v in (0, 1):
        mixed = _reassign((three, [(0, [1]), (1, None), (2, [2]), (9, [1])]), (missing, [(0, [1])]))
        await conn.call(ApiKey.ALTER_PARTITION_REASSIGNMENTS, v, mixed, f"v{v} own set, cancel, other broker, unknown")
        bad = _reassign((three, [(0, [1, 2]), (1, [1, 1]), (2, [])]), (one, [(0, [-1, 1])]))
        await conn.call(ApiKey.ALTER_PARTITION_REASSIGNMENTS, v, bad, f"v{v} invalid replica lists")
    fixed = _reassign((three, [(0, [1]), (1, [1, 2])]), allow_replication_factor_change=False)
    await conn.call(ApiKey.ALTER_PARTITION_REASSIGNMENTS, 1, fixed, "v1 replication factor kept")
    await conn.call(ApiKey.LIST_PARTITION_REASSIGNMENTS, 0, listed, "list named ones afterwards")


@scenario("Metadata")
async def metadata_authorized_operations(s: Session) -> None:
    """Metadata v8-v13 asked for the topics' (v8+) and the cluster's (v8-v10) authorized operations: every
    operation, on an unknown topic too; not asked, Kafka's "not requested" value."""
    conn = await s.connect()
    one, _ = await _topics(s, conn)
    topics = [MetadataRequestTopic(name=one), MetadataRequestTopic(name=s.name("kraft-missing"))]
    for v in (8, 10, 11, 12, 13):
        asked = MetadataRequest(
            topics=topics,
            allow_auto_topic_creation=False,
            include_topic_authorized_operations=True,
            include_cluster_authorized_operations=v <= 10,
        )
        await conn.call(ApiKey.METADATA, v, asked, f"v{v} asked")
        plain_request = MetadataRequest(topics=topics[:1], allow_auto_topic_creation=False)
        await conn.call(ApiKey.METADATA, v, plain_request, f"v{v} not asked")


def _api_versions(cluster_id: str | None, node_id: int, name: str = "differential") -> ApiVersionsRequest:
    return ApiVersionsRequest(
        client_software_name=name, client_software_version="1", cluster_id=cluster_id, node_id=node_id
    )


@scenario("ApiVersions")
async def api_versions_names_its_cluster(s: Session) -> None:
    """ApiVersions v5 (KIP-1242): the broker's own cluster id and node id, or neither, get the ranges; another
    cluster or node is REBOOTSTRAP_REQUIRED; only one of the two, or an illegal software name, INVALID_REQUEST.
    Each answer is recorded as its error and whether it listed any ranges (the ranges are #5's)."""
    conn = await s.connect()
    described = await ask(conn, ApiKey.METADATA, 12, MetadataRequest(topics=[]))
    cluster_id = None if described is None else described.cluster_id
    cases = (
        ("neither", _api_versions(None, -1)),
        ("this cluster and node", _api_versions(cluster_id, 1)),
        ("this cluster, another node", _api_versions(cluster_id, 2)),
        ("another cluster, this node", _api_versions("another-cluster", 1)),
        ("a node without a cluster", _api_versions(None, 1)),
        ("a cluster without a node", _api_versions(cluster_id, -1)),
        ("an illegal name and another cluster", _api_versions("another-cluster", 1, name="")),
    )
    for step, body in cases:
        answer = await ask(conn, ApiKey.API_VERSIONS, 5, body)
        outcome = {"closed": True} if answer is None else {"error": answer.error_code, "ranges": bool(answer.api_keys)}
        s.note(f"v5 {step}", outcome)


def _subscription(answer: Any, asked: uuid.UUID) -> dict[str, Any]:
    """A GetTelemetrySubscriptions answer with its random client instance id replaced by what must hold of it, and
    its subscription id by whether it is Kafka's formula's (broker.telemetry.subscription_id) for that id."""
    data = plain(answer)
    given = answer.client_instance_id
    data["client_instance_id"] = "<new id>" if asked.int == 0 and given.int else str(given == asked)
    data["subscription_id"] = answer.subscription_id == subscription_id(given) if given.int else answer.subscription_id
    return data


async def _get(s: Session, conn: Conn, asked: uuid.UUID, step: str) -> uuid.UUID:
    answer = await ask(
        conn, ApiKey.GET_TELEMETRY_SUBSCRIPTIONS, 0, GetTelemetrySubscriptionsRequest(client_instance_id=asked)
    )
    s.note(step, {"closed": True} if answer is None else _subscription(answer, asked))
    return uuid.UUID(int=0) if answer is None else answer.client_instance_id


def _push(instance: uuid.UUID, subscription: int, **kw: Any) -> PushTelemetryRequest:
    return PushTelemetryRequest(client_instance_id=instance, subscription_id=subscription, **kw)


@scenario("KIP-714")
async def telemetry_without_a_metrics_plugin(s: Session) -> None:
    """GetTelemetrySubscriptions and PushTelemetry, not advertised by either broker, answered as Kafka answers
    them without a metrics plugin: a new client instance id and an empty subscription (5-minute interval, ZSTD,
    LZ4, GZIP, SNAPPY, 1 MiB); asked again too early THROTTLING_QUOTA_EXCEEDED; a push right after the
    subscription accepted, the next one throttled unless terminating, none after terminating; a reserved client
    id INVALID_REQUEST, an unknown subscription UNKNOWN_SUBSCRIPTION_ID (and then a Get is not throttled), an
    unknown compression type UNSUPPORTED_COMPRESSION_TYPE, metrics over 1 MiB TELEMETRY_TOO_LARGE."""
    conn = await s.connect("telemetry-client")
    zero = uuid.UUID(int=0)
    instance = await _get(s, conn, zero, "a new client")
    await _get(s, conn, instance, "asked again at once")
    sub = subscription_id(instance)
    pushes = (
        ("a push right after", _push(instance, sub, compression_type=0, metrics=b"")),
        ("another push at once", _push(instance, sub, compression_type=0, metrics=b"")),
        ("a terminating push", _push(instance, sub, terminating=True, compression_type=0, metrics=b"")),
        ("a push after terminating", _push(instance, sub, terminating=True, compression_type=0, metrics=b"")),
        ("the zero client id", _push(zero, 0)),
        ("the metadata topic's id as client id", _push(uuid.UUID(int=1), 0)),
    )
    for step, body in pushes:
        await conn.call(ApiKey.PUSH_TELEMETRY, 0, body, step)
    stranger = uuid.UUID(hex=s.token * 4)  # the same on both brokers, new to each
    await conn.call(ApiKey.PUSH_TELEMETRY, 0, _push(stranger, 7), "an unknown client and subscription")
    await _get(s, conn, stranger, "that client asks for its subscription")
    other = await s.connect("telemetry-client-2")
    for step, compression, size in (("an unknown compression type", 9, 1), ("metrics over 1 MiB", 0, (1 << 20) + 1)):
        fresh = await _get(s, other, zero, f"a new client for {step}")
        body = _push(fresh, subscription_id(fresh), compression_type=compression, metrics=b"m" * size)
        await other.call(ApiKey.PUSH_TELEMETRY, 0, body, step)
