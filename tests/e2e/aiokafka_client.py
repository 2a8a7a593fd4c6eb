"""aiokafka as the end-to-end tests drive it: consumers on an event loop in a background thread, an adapter
(producer, admin) for the group scenarios (test_aiokafka.py) and a transactional pipeline for the transaction
scenario (test_transactions.py).

The scenarios are synchronous (shared with the blocking clients), so the aiokafka clients live on an event loop in a
background thread (`LoopThread`): heartbeats, rebalances and prefetching run there continuously, as in an
application, and the test thread calls in with `run`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRebalanceListener, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.coordinator.protocol import ConsumerProtocolMemberAssignment

from tests.e2e.scenario import (
    HEARTBEAT_INTERVAL_MS,
    SESSION_TIMEOUT_MS,
    GroupView,
    LoopThread,
    Rec,
    end_offsets,
    unique,
)
from tests.e2e.txn_scenario import TRANSACTION_TIMEOUT_MS, transformed

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


async def send_acked(
    producer: AIOKafkaProducer, topic: str, records: Sequence[tuple[str, str]], partition: int | None = None
) -> list[Rec]:
    """Send keyed records (to `partition`, or where the partitioner puts them) and return them acknowledged."""
    futures = [await producer.send(topic, key=k.encode(), value=v.encode(), partition=partition) for k, v in records]
    acked = await asyncio.gather(*futures)
    return [Rec(md.partition, md.offset, k, v) for md, (k, v) in zip(acked, records, strict=True)]


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


class HoldingListener(ConsumerRebalanceListener):
    """Holds a rejoin in `on_partitions_revoked` while the consumer is `held`, as a slow application callback does:
    aiokafka awaits the callback before its JoinGroup and keeps heartbeating meanwhile (the heartbeat task stops only
    once the callback returns), so the member stays in the group without rejoining it."""

    def __init__(self) -> None:
        self.released = asyncio.Event()
        self.released.set()

    async def on_partitions_revoked(self, revoked: Any) -> None:
        await self.released.wait()

    async def on_partitions_assigned(self, assigned: Any) -> None:
        return None


class AiokafkaConsumer:
    """A subscribed consumer on the adapter's loop; `config` adds to or overrides `consumer_config`.

    `joined`: the constructor returns once the member has its first assignment (aiokafka's `start()` waits for it
    when subscribed before it); otherwise it subscribes after `start()` and the member joins in the background, so
    a member can be started while the group's rebalance waits for another, held one."""

    def __init__(
        self, loop: LoopThread, bootstrap: str, group: str, topic: str, name: str, joined: bool = True, **config: Any
    ) -> None:
        self.name = name
        self.topic = topic
        self.loop = loop

        async def start() -> tuple[AIOKafkaConsumer, HoldingListener]:
            consumer = AIOKafkaConsumer(**{**consumer_config(bootstrap, group, name), **config})
            listener = HoldingListener()
            if joined:
                consumer.subscribe([topic], listener=listener)
            await consumer.start()
            if not joined:
                consumer.subscribe([topic], listener=listener)
            return consumer, listener

        self.consumer, self.listener = loop.run(start())

    @contextmanager
    def held(self) -> Iterator[None]:
        """No rejoin until the block ends (see `HoldingListener`); the member keeps heartbeating meanwhile."""
        self._call(self.listener.released.clear)
        try:
            yield
        finally:
            self._call(self.listener.released.set)

    def _call(self, fn: Callable[[], T]) -> T:
        async def call() -> T:
            return fn()

        return self.loop.run(call())

    def poll(self, timeout_s: float) -> list[Rec]:
        """What `getmany` returns within about `timeout_s`; nothing if it is still waiting for the member's
        assignment then (aiokafka's `getmany` waits for the end of a rebalance whatever its timeout)."""

        async def poll() -> dict[TopicPartition, list[Any]]:
            try:
                return await asyncio.wait_for(self.consumer.getmany(timeout_ms=int(timeout_s * 1000)), timeout_s + 1)
            except TimeoutError:
                return {}

        return to_recs(self.loop.run(poll()))

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

    def create_topic(self, topic: str, partitions: int, replicas: int = 1) -> None:
        response = self.loop.run(self.admin.create_topics([NewTopic(topic, partitions, replicas)]))
        assert [tuple(t[:2]) for t in response.topic_errors] == [(topic, 0)]

    def produce(self, topic: str, records: Sequence[tuple[str, str]], partition: int | None = None) -> list[Rec]:
        return self.loop.run(send_acked(self.producer, topic, records, partition))

    def consumer(self, group: str, topic: str, name: str, **config: Any) -> AiokafkaConsumer:
        return AiokafkaConsumer(self.loop, self.bootstrap, group, topic, name, **config)

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


class AiokafkaPipeline:
    """consume-transform-produce with aiokafka: `AIOKafkaProducer(transactional_id=...)` (started = InitProducerId)
    and `send_offsets_to_transaction(offsets, group_id)`, which sends the group id only (no KIP-447 member fields)."""

    def __init__(
        self, loop: LoopThread, bootstrap: str, group: str, topic: str, transactional_id: str, name: str
    ) -> None:
        self.loop, self.group, self.topic = loop, group, topic

        async def start() -> AIOKafkaProducer:
            producer = AIOKafkaProducer(
                bootstrap_servers=bootstrap,
                transactional_id=transactional_id,
                transaction_timeout_ms=TRANSACTION_TIMEOUT_MS,
                linger_ms=5,
            )
            try:
                await producer.start()  # InitProducerId for the transactional id
            except BaseException:
                await producer.stop()
                raise
            return producer

        self.producer = loop.run(start())
        try:
            self.consumer = AiokafkaConsumer(loop, bootstrap, group, topic, name, isolation_level="read_committed")
        except BaseException:
            loop.run(self.producer.stop())
            raise

    def transaction(self, consumed: Sequence[Rec], output: str, commit: bool) -> list[Rec]:
        async def run() -> list[Rec]:
            await self.producer.begin_transaction()
            produced = await send_acked(self.producer, output, [transformed(r) for r in consumed])
            offsets = {TopicPartition(self.topic, p): offset for p, offset in end_offsets(consumed).items()}
            await self.producer.send_offsets_to_transaction(offsets, self.group)
            if commit:
                await self.producer.commit_transaction()
            else:
                await self.producer.abort_transaction()
            return produced

        return self.loop.run(run())

    def close(self) -> None:
        try:
            self.consumer.close()
        finally:
            self.loop.run(self.producer.stop())


class AiokafkaTxnAdapter(AiokafkaAdapter):
    """`txn_scenario.TxnAdapter` for aiokafka."""

    def pipeline(self, group: str, topic: str, transactional_id: str, name: str) -> AiokafkaPipeline:
        return AiokafkaPipeline(self.loop, self.bootstrap, group, topic, transactional_id, name)

    def reader(self, topic: str, name: str, read_committed: bool) -> AiokafkaConsumer:
        isolation = "read_committed" if read_committed else "read_uncommitted"
        return self.consumer(unique(f"{name}-group"), topic, name, isolation_level=isolation)
