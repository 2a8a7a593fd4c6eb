# test_failover.py — a three-node cluster and a node failure
import asyncio

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic


@pytest.fixture
def group_broker_config():
    return {"cluster.nodes": "3"}


@pytest.mark.asyncio
async def test_billing_keeps_consuming_when_its_coordinator_node_fails(group_broker):
    servers = group_broker.bootstrap_servers  # the three nodes
    admin = AIOKafkaAdminClient(bootstrap_servers=servers)
    await admin.start()
    await admin.create_topics([NewTopic("orders", 3, 3)])  # three replicas of each partition
    await admin.close()

    producer = AIOKafkaProducer(bootstrap_servers=servers, acks="all", enable_idempotence=True)
    consumer = AIOKafkaConsumer(
        "orders",
        bootstrap_servers=servers,
        group_id="billing",
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    )
    await producer.start()
    await consumer.start()
    seen = []

    async def consume(count):
        while len(seen) < count:
            batches = await consumer.getmany(timeout_ms=200)
            seen.extend(m.value for records in batches.values() for m in records)
            await consumer.commit()  # finds the group's new coordinator after a failure

    try:
        for i in range(10):
            await producer.send_and_wait("orders", b"%d" % i)
        await asyncio.wait_for(consume(10), 60)

        failed = group_broker.coordinator_node("billing")
        group_broker.stop_node(failed)  # its connections drop; its partitions get new leaders
        assert group_broker.coordinator_node("billing") != failed
        for i in range(10, 20):
            await producer.send_and_wait("orders", b"%d" % i)
        await asyncio.wait_for(consume(20), 60)
        group_broker.start_node(failed)
    finally:
        await consumer.stop()
        await producer.stop()
    assert sorted(seen, key=int) == [b"%d" % i for i in range(20)]  # nothing lost, nothing twice
