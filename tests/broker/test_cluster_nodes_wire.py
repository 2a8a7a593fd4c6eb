"""Three nodes in one process (`cluster.nodes=3`, issue #19), over raw requests to each node's own port: what each
node advertises, that each serves only what it leads (Kafka's NOT_LEADER_OR_FOLLOWER with KIP-951's current leader,
and NOT_COORDINATOR), and what a stopped node changes (new leaders, leader epochs bumped, coordinators moved)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from broker.app import Broker
from protocol.errors import ErrorCode
from protocol.messages.find_coordinator import FindCoordinatorRequest
from protocol.messages.list_offsets import ListOffsetsPartition, ListOffsetsRequest, ListOffsetsTopic
from protocol.messages.metadata import MetadataRequest, MetadataRequestTopic
from protocol.messages.offset_fetch import OffsetFetchRequest
from protocol.messages.offset_for_leader_epoch import (
    OffsetForLeaderEpochRequest,
    OffsetForLeaderPartition,
    OffsetForLeaderTopic,
)
from protocol.registry import ApiKey
from tests.broker.conftest import running_broker
from tests.broker.group_wire import join_request
from tests.broker.wire import WireClient
from tests.support.broker_process import wait_until_async
from tests.support.data_plane import batch, fetch_request, produce, produce_request

NODES = (1, 2, 3)


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[Broker]:
    async with running_broker(tmp_path, cluster_nodes="3", offsets_topic_num_partitions="6") as broker:
        broker.create_topic("orders", 3, {})  # auto-creation's replication factor: default.replication.factor=1
        yield broker


async def connect(broker: Broker, node_id: int) -> WireClient:
    return await WireClient.connect(broker.node_ports(node_id - 1)[0])


async def metadata(client: WireClient, topic: str) -> tuple[object, dict[int, object]]:
    answer = await client.call(ApiKey.METADATA, 12, MetadataRequest(topics=[MetadataRequestTopic(name=topic)]))
    [described] = answer.topics
    return answer, {p.partition_index: p for p in described.partitions}


async def test_each_node_has_its_own_port_and_metadata_lists_them_all(cluster: Broker) -> None:
    ports = {node_id: cluster.node_ports(node_id - 1)[0] for node_id in NODES}
    assert len(set(ports.values())) == 3
    assert cluster.bootstrap_servers == ",".join(f"127.0.0.1:{ports[n]}" for n in NODES)
    for node_id in NODES:
        client = await connect(cluster, node_id)
        answer, partitions = await metadata(client, "orders")
        assert {(b.node_id, b.port) for b in answer.brokers} == set(ports.items())
        assert answer.controller_id == 1
        # One replica each, led round-robin from the first node (Kafka's placement with start index 0).
        assert [(p.leader_id, p.replica_nodes, p.isr_nodes) for p in partitions.values()] == [
            (1, [1], [1]),
            (2, [2], [2]),
            (3, [3], [3]),
        ]
        await client.close()


async def test_a_node_answers_only_for_the_partitions_it_leads(cluster: Broker) -> None:
    leader, follower = await connect(cluster, 1), await connect(cluster, 2)
    assert (await produce(leader, "orders", batch(b"a"))).error_code == ErrorCode.NONE
    refused = await follower.call(ApiKey.PRODUCE, 10, produce_request("orders", batch(b"b")))
    [result] = refused.responses[0].partition_responses
    assert result.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
    # KIP-951: the answer names the current leader and where it is.
    assert (result.current_leader.leader_id, result.current_leader.leader_epoch) == (1, 0)
    assert [(e.node_id, e.port) for e in refused.node_endpoints] == [(1, cluster.node_ports(0)[0])]
    topic_id = cluster.logs.topic("orders").topic_id  # type: ignore[union-attr]
    fetched = await follower.call(ApiKey.FETCH, 16, fetch_request("orders", topic_id=topic_id))
    [data] = fetched.responses[0].partitions
    assert data.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
    assert data.current_leader.leader_id == 1 and [e.node_id for e in fetched.node_endpoints] == [1]
    offsets = ListOffsetsRequest(
        replica_id=-1, topics=[ListOffsetsTopic(name="orders", partitions=[ListOffsetsPartition(timestamp=-1)])]
    )
    listed = await follower.call(ApiKey.LIST_OFFSETS, 7, offsets)
    assert listed.topics[0].partitions[0].error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
    await leader.close()
    await follower.close()


async def test_only_the_coordinators_node_serves_a_group(cluster: Broker) -> None:
    partition = cluster.coordinator.partition_for("billing")
    coordinator = cluster.cluster.leader_id("__consumer_offsets", partition)
    other = next(n for n in NODES if n != coordinator)
    client = await connect(cluster, other)
    found = await client.call(ApiKey.FIND_COORDINATOR, 3, FindCoordinatorRequest(key="billing"))
    assert (found.error_code, found.node_id, found.port) == (
        ErrorCode.NONE,
        coordinator,
        cluster.node_ports(coordinator - 1)[0],
    )
    joined = await client.call(ApiKey.JOIN_GROUP, 9, join_request("billing"))
    assert joined.error_code == ErrorCode.NOT_COORDINATOR
    at_coordinator = await connect(cluster, coordinator)
    joined = await at_coordinator.call(ApiKey.JOIN_GROUP, 9, join_request("billing"))
    assert joined.error_code == ErrorCode.MEMBER_ID_REQUIRED
    await client.close()
    await at_coordinator.close()


async def test_stopping_a_node_moves_its_leaders_and_coordinators_with_new_epochs(cluster: Broker) -> None:
    client = await connect(cluster, 1)
    victim_connection = await connect(cluster, 2)
    group_partition = cluster.coordinator.partition_for("billing")
    events: list[tuple[str, object]] = []  # what the node control's subscribers (the timelines) are told
    cluster.nodes.events.subscribe(lambda event, fields: events.append((event, fields.get("cause"))))
    moved = cluster.nodes.move_leader("__consumer_offsets", group_partition, 2)  # None: node 2 led it already
    assert await victim_connection.call(ApiKey.OFFSET_FETCH, 7, OffsetFetchRequest(group_id="billing")) is not None
    changes = cluster.nodes.stop(2)
    assert await victim_connection.closed_by_peer()
    await victim_connection.close()
    assert ("orders", 1, 2, -1) in {(c.topic, c.partition, c.before, c.after) for c in changes}  # its only replica
    _, partitions = await metadata(client, "orders")
    assert (partitions[1].error_code, partitions[1].leader_id, partitions[1].leader_epoch) == (
        ErrorCode.LEADER_NOT_AVAILABLE,
        -1,
        1,
    )
    assert partitions[1].offline_replicas == [2]
    # The group's coordinator partition had three replicas: it moved to a running node, which loaded it.
    new_coordinator = cluster.cluster.leader_id("__consumer_offsets", group_partition)
    assert new_coordinator in (1, 3)
    found = await client.call(ApiKey.FIND_COORDINATOR, 3, FindCoordinatorRequest(key="billing"))
    assert found.node_id == new_coordinator
    # The node comes back on the same port, in sync, and leads again what had no leader (epoch bumped again).
    cluster.nodes.start(2)
    _, partitions = await metadata(client, "orders")
    assert (partitions[1].leader_id, partitions[1].leader_epoch, partitions[1].offline_replicas) == (2, 2, [])
    back = await connect(cluster, 2)
    assert (await produce(back, "orders", batch(b"x"), partition=1)).error_code == ErrorCode.NONE
    moves = [("partition.leader_changed", "moved")] if moved else []
    stops = [("partition.leader_changed", "node_stopped")] * len(changes) + [("node.stopped", None)]
    starts = [e for e in events[len(moves) + len(stops) :] if e[0] == "partition.leader_changed"]
    assert events[: len(moves) + len(stops)] == moves + stops
    assert set(starts) == {("partition.leader_changed", "node_started")} and events[-1] == ("node.started", None)
    for connection in (client, back):
        await connection.close()


async def test_after_a_leader_change_a_consumers_position_is_validated_not_reset(cluster: Broker) -> None:
    """What KIP-320 clients do: the old epoch is fenced at the new leader, and OffsetForLeaderEpoch for the epoch the
    consumer last fetched says where that epoch ended, so a position at or below it is kept."""
    info = cluster.topics.create_topic("moving", 1, {}, 3)  # three replicas: the partition moves, nothing lost
    assert info.replication_factor == 3
    old_leader = await connect(cluster, 1)
    for value in (b"a", b"b", b"c"):
        assert (await produce(old_leader, "moving", batch(value))).error_code == ErrorCode.NONE
    await old_leader.close()
    [change] = [c for c in cluster.nodes.stop(1) if c.topic == "moving"]
    new_leader = await connect(cluster, change.after)
    stale = fetch_request("moving", 3)
    stale.topics[0].partitions[0].current_leader_epoch = 0
    fenced = await new_leader.call(ApiKey.FETCH, 12, stale)
    assert fenced.responses[0].partitions[0].error_code == ErrorCode.FENCED_LEADER_EPOCH
    validate = OffsetForLeaderEpochRequest(
        replica_id=-1,
        topics=[
            OffsetForLeaderTopic(
                topic="moving", partitions=[OffsetForLeaderPartition(current_leader_epoch=1, leader_epoch=0)]
            )
        ],
    )
    answer = await new_leader.call(ApiKey.OFFSET_FOR_LEADER_EPOCH, 4, validate)
    [result] = answer.topics[0].partitions
    assert (result.error_code, result.leader_epoch, result.end_offset) == (ErrorCode.NONE, 0, 3)
    await new_leader.close()


async def test_a_moved_coordinator_partition_loads_after_its_load_time_on_the_broker_clock(tmp_path: Path) -> None:
    """`cluster.coordinator.load.ms`: the new leader answers COORDINATOR_LOAD_IN_PROGRESS for that long, in virtual
    time when the clock is frozen, then loads the partition from the log."""
    async with running_broker(
        tmp_path, cluster_nodes="3", offsets_topic_num_partitions="6", cluster_coordinator_load_ms="5000"
    ) as broker:
        broker.clock.freeze()
        partition = broker.coordinator.partition_for("billing")
        target = next(n for n in NODES if n != broker.cluster.leader_id("__consumer_offsets", partition))
        broker.nodes.move_leader("__consumer_offsets", partition, target)
        broker.rearm_timers()
        client = await connect(broker, target)

        async def offset_fetch_error() -> int:
            answer = await client.call(ApiKey.OFFSET_FETCH, 7, OffsetFetchRequest(group_id="billing"))
            return int(answer.error_code)

        assert await offset_fetch_error() == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        broker.advance_time(4_999)
        assert await offset_fetch_error() == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        broker.advance_time(1)  # the load starts: read in a worker thread, then replayed
        loaded = lambda: broker.coordinator.owned_partitions().get(partition) == "active"  # noqa: E731
        await wait_until_async(loaded, 10, 0.01, what=f"__consumer_offsets-{partition} loaded")
        assert await offset_fetch_error() == ErrorCode.NONE
        await client.close()
