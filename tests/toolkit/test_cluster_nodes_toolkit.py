"""A three-node cluster through the pytest handle (issue #19): aiokafka's consumer group keeps consuming, with
nothing lost and nothing twice, while its coordinator's node stops and starts, and an idempotent producer with
acks=all keeps producing through the leader changes."""

from __future__ import annotations

import asyncio

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from toolkit.handle import GroupBrokerHandle


@pytest.fixture
def group_broker_config() -> dict[str, str]:
    return {"cluster.nodes": "3", "offsets.topic.num.partitions": "6"}


async def test_nodes_are_listed_and_a_stopped_node_leads_nothing(group_broker: GroupBrokerHandle) -> None:
    servers = group_broker.bootstrap_servers
    assert len(servers.split(",")) == 3
    admin = AIOKafkaAdminClient(bootstrap_servers=servers)
    await admin.start()
    try:
        await admin.create_topics([NewTopic("orders", 6, 3)])
        described = await admin.describe_cluster()
        assert [b["node_id"] for b in described["brokers"]] == [1, 2, 3]
        nodes = group_broker.nodes()
        assert [(n["node_id"], n["running"]) for n in nodes] == [(1, True), (2, True), (3, True)]
        changes = group_broker.stop_node(2)
        assert {c["leader_before"] for c in changes} == {2} and 2 not in {c["leader"] for c in changes}
        assert [n["leads"] for n in group_broker.nodes() if n["node_id"] == 2] == [0]
        assert group_broker.start_node(2) == []  # in sync again, but it leads nothing until a move
        [moved] = group_broker.move_leader("orders", 1, 2)
        assert moved["leader"] == 2
        with pytest.raises(ValueError, match="no node 7"):
            group_broker.stop_node(7)
    finally:
        await admin.close()


async def test_a_group_keeps_consuming_while_its_coordinators_node_stops_and_starts(
    group_broker: GroupBrokerHandle,
) -> None:
    servers = group_broker.bootstrap_servers
    admin = AIOKafkaAdminClient(bootstrap_servers=servers)
    await admin.start()
    await admin.create_topics([NewTopic("orders", 3, 3)])
    await admin.close()
    producer = AIOKafkaProducer(bootstrap_servers=servers, acks="all", enable_idempotence=True)
    consumer = AIOKafkaConsumer(
        "orders", bootstrap_servers=servers, group_id="billing", auto_offset_reset="earliest", enable_auto_commit=False
    )
    await producer.start()
    await consumer.start()
    seen: list[bytes] = []

    async def consume(count: int) -> None:
        while len(seen) < count:
            batches = await consumer.getmany(timeout_ms=200)
            seen.extend(m.value for records in batches.values() for m in records if m.value is not None)
            await consumer.commit()

    async def produce(first: int, last: int) -> None:
        for i in range(first, last):
            await producer.send_and_wait("orders", b"%d" % i)

    try:
        await produce(0, 10)
        await asyncio.wait_for(consume(10), 30)
        coordinator = group_broker.coordinator_node("billing")
        group_broker.stop_node(coordinator)
        assert group_broker.coordinator_node("billing") not in (coordinator, -1)
        await produce(10, 20)
        await asyncio.wait_for(consume(20), 60)
        # The group's timeline says where its coordinator went and why, and which node served each request.
        timeline = group_broker.group_timeline("billing", heartbeats=False)
        assert timeline is not None
        [moved] = [e for e in timeline["events"] if e["kind"] == "coordinator.moved"]
        assert moved["reason"] == f"node {coordinator} stopped" and moved["detail"]["node_before"] == coordinator
        before = timeline["events"][: timeline["events"].index(moved)]
        assert {e["node"] for e in before if e["kind"] in ("JoinGroup", "SyncGroup")} == {coordinator}
        group_broker.start_node(coordinator)
        group_broker.move_group_coordinator("billing", coordinator)  # and back, during steady state
        await produce(20, 30)
        await asyncio.wait_for(consume(30), 60)
    finally:
        await consumer.stop()
        await producer.stop()
    assert sorted(seen, key=int) == [b"%d" % i for i in range(30)]  # nothing lost, nothing twice
    # The group's committed offsets are every partition's end: a consumer of the group resumes after the last.
    again = AIOKafkaConsumer(bootstrap_servers=servers, group_id="billing", enable_auto_commit=False)
    await again.start()
    try:
        partitions = [TopicPartition("orders", p) for p in range(3)]
        ends = await again.end_offsets(partitions)
        assert sum(ends.values()) == 30
        assert {tp: await again.committed(tp) for tp in partitions} == ends
    finally:
        await again.stop()
