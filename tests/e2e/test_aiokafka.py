"""aiokafka against the broker process: the consumer-group lifecycle and partitions added under a live group.

The lifecycle scenario drives the clients of aiokafka_client.py (on an event loop in a background thread). The
CreatePartitions test is a plain async test.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewPartitions, NewTopic

from tests.e2e.aiokafka_client import AiokafkaAdapter, consumer_config, described, to_recs
from tests.e2e.scenario import (
    WAIT_S,
    Rec,
    broker_generation,
    explained_by_broker,
    keyed,
    run_group_lifecycle,
    unique,
)
from tests.support.broker_process import BrokerProcess, wait_until_async

pytestmark = pytest.mark.integration


@pytest.fixture
def adapter(bootstrap: str) -> Iterator[AiokafkaAdapter]:
    client = AiokafkaAdapter(bootstrap)
    yield client
    client.close()


def test_group_lifecycle(adapter: AiokafkaAdapter, broker_process: BrokerProcess) -> None:
    """600 records over 6 partitions, 3 consumers, one leaves, commit, a new consumer resumes at the commit."""
    run_group_lifecycle(adapter, broker_process, "aio")


async def test_consumer_gets_partitions_added_by_create_partitions(
    bootstrap: str, broker_process: BrokerProcess
) -> None:
    """CreatePartitions 2 -> 4 under a subscribed consumer (metadata refreshed every 500 ms): the leader notices
    the new partition count, the group rebalances, the consumer is assigned all four partitions and consumes what
    is produced to a new one."""
    topic, group = unique("aio-grow"), unique("aio-grow-group")
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap)
    consumer = AIOKafkaConsumer(topic, metadata_max_age_ms=500, **consumer_config(bootstrap, group, "aio-grow-member"))
    await admin.start()
    await producer.start()
    try:
        await admin.create_topics([NewTopic(topic, 2, 1)])
        await consumer.start()
        with explained_by_broker(broker_process, group):
            two = {TopicPartition(topic, 0), TopicPartition(topic, 1)}
            await polling_until(consumer, lambda _: consumer.assignment() == two, "the consumer to own both partitions")
            [response] = await admin.describe_consumer_groups([group])
            generation = await asyncio.to_thread(
                broker_generation, broker_process, group, described(response, group, topic)
            )

            await admin.create_partitions({topic: NewPartitions(total_count=4)})
            await polling_until(consumer, lambda _: len(consumer.assignment()) == 4, "the consumer to get 4 partitions")
            assert consumer.assignment() == {TopicPartition(topic, p) for p in range(4)}
            [response] = await admin.describe_consumer_groups([group])
            view = described(response, group, topic)
            assert view.state == "Stable"
            assert list(view.assignments.values()) == [frozenset(range(4))]
            await asyncio.to_thread(broker_generation, broker_process, group, view, generation)

            produced = []
            for k, v in keyed(0, 10):
                md = await producer.send_and_wait(topic, key=k.encode(), value=v.encode(), partition=3)
                produced.append(Rec(md.partition, md.offset, k, v))
            wanted = {r.position for r in produced}
            received = await polling_until(
                consumer,
                lambda got: wanted <= {r.position for r in got},
                "the records on the new partition to be consumed",
            )
            assert sorted(received, key=lambda r: r.position) == produced
    finally:
        await consumer.stop()
        await producer.stop()
        await admin.close()


async def polling_until(consumer: AIOKafkaConsumer, predicate: Callable[[list[Rec]], bool], what: str) -> list[Rec]:
    """Poll the consumer, as an application does, until the predicate holds for what the polls received so far;
    returns that."""
    received: list[Rec] = []

    async def consume() -> None:
        received.extend(to_recs(await consumer.getmany(timeout_ms=50)))

    await wait_until_async(lambda: predicate(received), WAIT_S, what=what, step=consume)
    return received
