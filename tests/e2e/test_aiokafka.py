"""aiokafka against the broker process: the consumer-group lifecycle and partitions added under a live group.

The lifecycle scenario is synchronous (shared with the blocking clients), so its aiokafka clients live on an event
loop in a background thread (`LoopThread`): heartbeats, rebalances and prefetching run there continuously, as in
an application, and the test thread calls in with `run`. The CreatePartitions test is a plain async test.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TypeVar

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewPartitions, NewTopic
from aiokafka.coordinator.protocol import ConsumerProtocolMemberAssignment

from tests.e2e.scenario import (
    HEARTBEAT_INTERVAL_MS,
    SESSION_TIMEOUT_MS,
    WAIT_S,
    GroupView,
    LoopThread,
    Rec,
    broker_generation,
    explained_by_broker,
    keyed,
    run_group_lifecycle,
    unique,
)
from tests.support.broker_process import BrokerProcess

pytestmark = pytest.mark.integration

T = TypeVar("T")


def consumer_config(bootstrap: str, group: str, name: str) -> dict[str, Any]:
    return {
        "bootstrap_servers": bootstrap,
        "group_id": group,
        "client_id": name,
        "auto_offset_reset": "earliest",
        "enable_auto_commit": False,
        "session_timeout_ms": SESSION_TIMEOUT_MS,
        "heartbeat_interval_ms": HEARTBEAT_INTERVAL_MS,
    }


def to_recs(batches: dict[TopicPartition, list[Any]]) -> list[Rec]:
    return [
        Rec(m.partition, m.offset, m.key.decode(), m.value.decode()) for records in batches.values() for m in records
    ]


def described(response: Any, group: str, topic: str) -> GroupView:
    """A DescribeGroups v0-v3 response (aiokafka hands back the raw struct) as a GroupView."""
    [(error_code, group_id, state, _protocol_type, _protocol, members, *_)] = response.groups
    assert (error_code, group_id) == (0, group), response
    assignments = {}
    for member_id, _client_id, _host, _metadata, assignment in members:
        decoded = ConsumerProtocolMemberAssignment.decode(assignment) if assignment else None
        partitions = decoded.partitions() if decoded is not None else []
        assignments[member_id] = frozenset(tp.partition for tp in partitions if tp.topic == topic)
    return GroupView(state, assignments)


class AiokafkaConsumer:
    def __init__(self, loop: LoopThread, bootstrap: str, group: str, topic: str, name: str) -> None:
        self.name = name
        self.topic = topic
        self.loop = loop

        async def start() -> AIOKafkaConsumer:
            consumer = AIOKafkaConsumer(topic, **consumer_config(bootstrap, group, name))
            await consumer.start()
            return consumer

        self.consumer = loop.run(start())

    def _call(self, fn: Callable[[], T]) -> T:
        async def call() -> T:
            return fn()

        return self.loop.run(call())

    def poll(self, timeout_s: float) -> list[Rec]:
        return to_recs(self.loop.run(self.consumer.getmany(timeout_ms=int(timeout_s * 1000))))

    def assignment(self) -> set[int]:
        return self._call(lambda: {tp.partition for tp in self.consumer.assignment() if tp.topic == self.topic})

    def commit(self) -> None:
        self.loop.run(self.consumer.commit())

    def committed(self, partitions: Iterable[int]) -> dict[int, int | None]:
        async def read() -> dict[int, int | None]:
            return {p: await self.consumer.committed(TopicPartition(self.topic, p)) for p in partitions}

        return self.loop.run(read())

    def close(self) -> None:
        self.loop.run(self.consumer.stop())


class AiokafkaAdapter:
    def __init__(self, bootstrap: str) -> None:
        self.bootstrap = bootstrap
        self.loop = LoopThread()

        async def start() -> tuple[AIOKafkaAdminClient, AIOKafkaProducer]:
            admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
            producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=5)
            await admin.start()
            await producer.start()
            return admin, producer

        self.admin, self.producer = self.loop.run(start())

    def create_topic(self, topic: str, partitions: int) -> None:
        response = self.loop.run(self.admin.create_topics([NewTopic(topic, partitions, 1)]))
        assert [tuple(t[:2]) for t in response.topic_errors] == [(topic, 0)]

    def produce(self, topic: str, records: Sequence[tuple[str, str]]) -> list[Rec]:
        async def send_all() -> list[Rec]:
            futures = [await self.producer.send(topic, key=k.encode(), value=v.encode()) for k, v in records]
            acked = await asyncio.gather(*futures)
            return [Rec(md.partition, md.offset, k, v) for md, (k, v) in zip(acked, records, strict=True)]

        return self.loop.run(send_all())

    def consumer(self, group: str, topic: str, name: str) -> AiokafkaConsumer:
        return AiokafkaConsumer(self.loop, self.bootstrap, group, topic, name)

    def committed_offsets(self, group: str, topic: str) -> dict[int, int]:
        offsets = self.loop.run(self.admin.list_consumer_group_offsets(group))
        return {tp.partition: om.offset for tp, om in offsets.items() if tp.topic == topic and om.offset >= 0}

    def describe(self, group: str, topic: str) -> GroupView:
        [response] = self.loop.run(self.admin.describe_consumer_groups([group]))
        return described(response, group, topic)

    def close(self) -> None:
        async def stop() -> None:
            await self.producer.stop()
            await self.admin.close()

        self.loop.run(stop())
        self.loop.close()


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
    try:
        async with asyncio.timeout(WAIT_S):
            while not predicate(received):
                received.extend(to_recs(await consumer.getmany(timeout_ms=50)))
    except TimeoutError:
        raise AssertionError(f"timed out waiting for {what}") from None
    return received
