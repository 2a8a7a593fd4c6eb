"""confluent-kafka (librdkafka) as the end-to-end scenarios drive it: a consumer and an adapter (producer, admin).

Shared by the classic-protocol tests (test_confluent.py) and the KIP-848 ones (test_confluent_consumer_protocol.py).
A consumer runs either group protocol: librdkafka's `group.protocol=consumer` refuses the classic protocol's
client-side `session.timeout.ms`, `heartbeat.interval.ms` and `partition.assignment.strategy` (the coordinator owns
them), so the small classic timeouts are only set for classic members.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from confluent_kafka import (
    OFFSET_INVALID,
    Consumer,
    ConsumerGroupTopicPartitions,
    KafkaError,
    KafkaException,
    Message,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient, NewTopic

from tests.e2e.scenario import HEARTBEAT_INTERVAL_MS, SESSION_TIMEOUT_MS, GroupView, Rec, end_offsets, unique
from tests.e2e.txn_scenario import TRANSACTION_TIMEOUT_MS, transformed

TIMEOUT_S = 15.0
# librdkafka finding a stopped node's replacement within a second or two (a cluster's node faults, issue #19):
# quick reconnects and retries, metadata refreshed every second.
QUICK_RECOVERY = {
    "reconnect.backoff.ms": 50,
    "reconnect.backoff.max.ms": 500,
    "retry.backoff.ms": 50,
    "retry.backoff.max.ms": 500,
    "topic.metadata.refresh.interval.ms": 1000,
}
# What a classic member sets client-side to rebalance quickly; a consumer-protocol member gets these from the broker.
CLASSIC_TIMEOUTS = {"session.timeout.ms": SESSION_TIMEOUT_MS, "heartbeat.interval.ms": HEARTBEAT_INTERVAL_MS}


class LogLines(logging.Handler):
    """librdkafka's log, line by line: add it to the Python logger given as confluent-kafka's `logger` setting (with
    a `debug` setting for the facilities to log)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def record_of(m: Message) -> Rec:
    """A consumed message, or a produced one in its delivery report, as the scenarios compare records."""
    return Rec(m.partition(), m.offset(), m.key().decode(), m.value().decode())


def produce_acked(
    producer: Producer, topic: str, records: Sequence[tuple[str, str]], partition: int | None = None
) -> list[Rec]:
    """Produce keyed records (to `partition`, or where the partitioner puts them), flush, and return them with the
    partition and offset of their delivery reports; any delivery error fails the test."""
    acked: dict[int, Rec] = {}

    def delivered(index: int) -> Any:
        def report(err: KafkaError | None, m: Any) -> None:
            assert err is None, err
            acked[index] = record_of(m)

        return report

    for i, (k, v) in enumerate(records):
        extra = {} if partition is None else {"partition": partition}
        producer.produce(topic, key=k, value=v, on_delivery=delivered(i), **extra)
    assert producer.flush(TIMEOUT_S) == 0
    return [acked[i] for i in range(len(records))]


def transactional_producer(bootstrap: str, transactional_id: str) -> Producer:
    """An initialised transactional producer (InitProducerId answered for `transactional_id`)."""
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "transactional.id": transactional_id,
            "transaction.timeout.ms": TRANSACTION_TIMEOUT_MS,
            "linger.ms": 5,
        }
    )
    producer.init_transactions(TIMEOUT_S)
    return producer


class ConfluentConsumer:
    """A subscribed consumer. `topic` is the subscription (a name, or a `^regex`); `assignment()` reports the
    partitions of that topic. Every commit it makes is remembered in `commits` (monotonic time, partition, offset),
    so a test can tell a duplicate after the last commit (at-least-once) from one a commit should have prevented."""

    def __init__(
        self, bootstrap: str, group: str, topic: str, name: str, commit_on_revoke: bool = False, **config: Any
    ) -> None:
        self.name = name
        self.topic = topic
        self.commit_on_revoke = commit_on_revoke
        self.events: list[tuple[str, frozenset[int]]] = []  # ("assign" | "revoke", partitions), in order
        self.commits: list[tuple[float, int, int]] = []
        self.refused: list[KafkaError] = []
        classic = config.get("group.protocol", "classic") == "classic"
        self.consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": group,
                "client.id": name,
                "auto.offset.reset": "earliest",
                "enable.auto.commit": False,
                **(CLASSIC_TIMEOUTS if classic else {}),
                **config,
            }
        )
        self.consumer.subscribe([topic], on_assign=self._on_assign, on_revoke=self._on_revoke)

    def _on_assign(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self.events.append(("assign", frozenset(tp.partition for tp in partitions)))

    def _on_revoke(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self.events.append(("revoke", frozenset(tp.partition for tp in partitions)))
        if not self.commit_on_revoke:
            return
        # Commit what was consumed from the partitions being given up, so their next owner starts right after it.
        positions = [tp for tp in consumer.position(partitions) if tp.offset >= 0]
        if not positions:
            return
        try:
            consumer.commit(offsets=positions, asynchronous=False)
        except KafkaException as exc:
            # Raising inside a librdkafka callback leaves confluent-kafka raising a KafkaError that is no exception
            # at all out of consume() or close(): keep it, and raise it properly after the call (`_check`).
            self.refused.append(exc.args[0])
            return
        self._committed(positions)

    def _check(self) -> None:
        """Fail the test with a commit the broker refused in a revocation callback."""
        if self.refused:
            refused, self.refused = self.refused, []
            raise AssertionError(f"{self.name}: the broker refused a commit of revoked partitions: {refused}")

    def _committed(self, offsets: Iterable[TopicPartition]) -> None:
        now = time.monotonic()
        self.commits.extend((now, tp.partition, tp.offset) for tp in offsets if tp.offset >= 0)

    def poll(self, timeout_s: float) -> list[Rec]:
        received = []
        messages = self.consumer.consume(num_messages=500, timeout=timeout_s)
        self._check()
        for m in messages:
            if m.error() is not None:
                raise KafkaException(m.error())
            received.append(record_of(m))
        return received

    def assignment(self) -> set[int]:
        return {tp.partition for tp in self.consumer.assignment() if tp.topic == self.topic}

    def commit(self) -> None:
        """Commit the current positions. A member that consumed nothing since its partitions' last commit (one
        given partitions their previous owner committed on revoking them) has nothing to commit: librdkafka says
        so with _NO_OFFSET, which is not a failure."""
        try:
            committed = self.consumer.commit(asynchronous=False)
        except KafkaException as exc:
            if exc.args[0].code() != KafkaError._NO_OFFSET:
                raise
            return
        self._committed(committed or [])

    def committed(self, partitions: Iterable[int]) -> dict[int, int | None]:
        found = self.consumer.committed([TopicPartition(self.topic, p) for p in partitions], timeout=TIMEOUT_S)
        return {tp.partition: None if tp.offset == OFFSET_INVALID else tp.offset for tp in found}

    def held(self) -> AbstractContextManager[None]:
        """Nothing to do but not poll it: librdkafka rejoins a rebalance only once the application's poll has
        served the revocation (the rebalance callback this consumer sets)."""
        return nullcontext()

    def memberid(self) -> str:
        return str(self.consumer.memberid())

    def close(self) -> None:
        self.consumer.close()
        self._check()


class ConfluentAdapter:
    def __init__(self, bootstrap: str) -> None:
        self.bootstrap = bootstrap
        self.admin = AdminClient({"bootstrap.servers": bootstrap})
        self.producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})

    def create_topic(self, topic: str, partitions: int, replicas: int = 1) -> None:
        futures = self.admin.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=replicas)])
        futures[topic].result(TIMEOUT_S)

    def produce(self, topic: str, records: Sequence[tuple[str, str]], partition: int | None = None) -> list[Rec]:
        return produce_acked(self.producer, topic, records, partition)

    def consumer(
        self, group: str, topic: str, name: str, commit_on_revoke: bool = False, **config: Any
    ) -> ConfluentConsumer:
        return ConfluentConsumer(self.bootstrap, group, topic, name, commit_on_revoke, **config)

    def committed_offsets(self, group: str, topic: str) -> dict[int, int]:
        futures = self.admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])
        result = futures[group].result(TIMEOUT_S)
        return {tp.partition: tp.offset for tp in result.topic_partitions if tp.topic == topic and tp.offset >= 0}

    def describe(self, group: str, topic: str) -> GroupView:
        description = self.admin.describe_consumer_groups([group])[group].result(TIMEOUT_S)
        assignments = {
            m.member_id: frozenset(tp.partition for tp in m.assignment.topic_partitions if tp.topic == topic)
            for m in description.members
        }
        return GroupView(description.state.name.lower(), assignments)

    def close(self) -> None:
        self.producer.flush(TIMEOUT_S)
        # Neither has a close(): dropping the last reference destroys the librdkafka handle now, not when the
        # garbage collector gets to it after the module's broker is gone (reconnect noise on stderr).
        del self.producer, self.admin


class ConfluentPipeline:
    """consume-transform-produce with librdkafka: offsets go with the consumer's group metadata (KIP-447: member id
    and generation), as `send_offsets_to_transaction` requires."""

    def __init__(self, bootstrap: str, group: str, topic: str, transactional_id: str, name: str) -> None:
        self.topic = topic
        self.producer = transactional_producer(bootstrap, transactional_id)
        self.consumer = ConfluentConsumer(bootstrap, group, topic, name, **PIPELINE_CONSUMER)

    def transaction(self, consumed: Sequence[Rec], output: str, commit: bool) -> list[Rec]:
        self.producer.begin_transaction()
        # Flushed before the offsets: an abort purges what was not sent yet, and the test wants it written.
        produced = produce_acked(self.producer, output, [transformed(r) for r in consumed])
        offsets = [TopicPartition(self.topic, p, offset) for p, offset in end_offsets(consumed).items()]
        metadata = self.consumer.consumer.consumer_group_metadata()
        self.producer.send_offsets_to_transaction(offsets, metadata, TIMEOUT_S)
        if commit:
            self.producer.commit_transaction(TIMEOUT_S)
        else:
            self.producer.abort_transaction(TIMEOUT_S)
        return produced

    def close(self) -> None:
        try:
            self.consumer.close()
        finally:
            del self.producer  # no close(): dropping the last reference destroys the handle now


#: The pipeline's member: read_committed (librdkafka's default, said explicitly) in a classic group.
PIPELINE_CONSUMER = {"isolation.level": "read_committed", "group.protocol": "classic"}


class ConfluentTxnAdapter(ConfluentAdapter):
    """`txn_scenario.TxnAdapter` for confluent-kafka."""

    def pipeline(self, group: str, topic: str, transactional_id: str, name: str) -> ConfluentPipeline:
        return ConfluentPipeline(self.bootstrap, group, topic, transactional_id, name)

    def reader(self, topic: str, name: str, read_committed: bool) -> ConfluentConsumer:
        isolation = "read_committed" if read_committed else "read_uncommitted"
        return self.consumer(unique(f"{name}-group"), topic, name, **{"isolation.level": isolation})


def commit_refused(producer: Producer) -> KafkaError:
    """The error commit_transaction() raised (an AssertionError if it succeeded). Not pytest.raises: its
    ExceptionInfo would keep the test's frame, and with it the producer, alive after the test (a librdkafka handle
    reconnecting to the next module's broker)."""
    try:
        producer.commit_transaction(TIMEOUT_S)
    except KafkaException as exc:
        error: KafkaError = exc.args[0]
        return error
    raise AssertionError("commit_transaction() succeeded")
