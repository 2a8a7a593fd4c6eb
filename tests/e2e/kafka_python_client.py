"""kafka-python as the end-to-end tests drive it: consumers, an adapter (producer, admin) for the group scenarios
(test_kafka_python.py) and a transactional pipeline for the transaction scenario (test_transactions.py).

Each KafkaConsumer is polled continuously from a thread of its own, as applications do, not round-robin from the
test thread. kafka-python 3.0.12 runs JoinGroup+SyncGroup as a task on its IO thread and applies the result only
while a `poll()` is waiting on that task (`BaseCoordinator.join_group_async`). If the task completes while no
poll waits, the result is lost: the next poll sees `_join_task.is_done` and sends a fresh JoinGroup (a leader
doing that forces a new rebalance, again and again), or, if the rejoin was metadata-driven and `need_rejoin()` is
now false, never applies the assignment and never re-enables heartbeats, so the member is expired (reproduced and
worked around in tests/support/clients.py). Polled round-robin, a consumer waits a third of the time and hits this
within a few runs; a consumer that is always inside `poll()`, with long polls and no metadata-driven rejoin
(`subscribed_consumer`), practically never does.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from typing import Any

from kafka import KafkaAdminClient, KafkaProducer, OffsetAndMetadata, TopicPartition

from tests.e2e.scenario import (
    HEARTBEAT_INTERVAL_MS,
    SESSION_TIMEOUT_MS,
    ConsumerThread,
    GroupView,
    Rec,
    end_offsets,
    unique,
)
from tests.e2e.txn_scenario import TRANSACTION_TIMEOUT_MS, transformed
from tests.support.clients import subscribed_consumer

SEND_TIMEOUT_S = 10
#: How long init_transactions() (and a send waiting for metadata) may block: kafka-python's max_block_ms.
INIT_TIMEOUT_MS = 30_000


def send_acked(
    producer: KafkaProducer, topic: str, records: Sequence[tuple[str, str]], partition: int | None = None
) -> list[Rec]:
    """Send keyed records (to `partition`, or where the partitioner puts them), flush, return them acknowledged."""
    futures = [producer.send(topic, key=k.encode(), value=v.encode(), partition=partition) for k, v in records]
    producer.flush()
    acked = [f.get(timeout=SEND_TIMEOUT_S) for f in futures]
    return [Rec(md.partition, md.offset, k, v) for md, (k, v) in zip(acked, records, strict=True)]


class KafkaPythonConsumer:
    """A KafkaConsumer polled continuously in its own thread (see the module docstring for why)."""

    def __init__(self, bootstrap: str, group: str, topic: str, name: str, **config: Any) -> None:
        self.name = name
        self.topic = topic
        self.consumer = subscribed_consumer(  # no metadata-driven rejoin (tests/support/clients.py)
            [topic],
            bootstrap_servers=bootstrap,
            group_id=group,
            client_id=name,
            **{
                "auto_offset_reset": "earliest",
                "enable_auto_commit": False,
                "session_timeout_ms": SESSION_TIMEOUT_MS,
                "heartbeat_interval_ms": HEARTBEAT_INTERVAL_MS,
                **config,
            },
        )
        self.thread = ConsumerThread(name, self._poll, poll_s=0.5)

    def _poll(self, timeout_s: float) -> list[Rec]:
        batches = self.consumer.poll(timeout_ms=int(timeout_s * 1000))
        return [
            Rec(m.partition, m.offset, m.key.decode(), m.value.decode())
            for records in batches.values()
            for m in records
        ]

    def poll(self, timeout_s: float) -> list[Rec]:
        return self.thread.take(timeout_s)

    def assignment(self) -> set[int]:
        return {tp.partition for tp in self.consumer.assignment() if tp.topic == self.topic}

    def commit(self) -> None:
        self.thread.call(self.consumer.commit)

    def committed(self, partitions: Iterable[int]) -> dict[int, int | None]:
        return self.thread.call(lambda: {p: self.consumer.committed(TopicPartition(self.topic, p)) for p in partitions})

    def held(self) -> AbstractContextManager[None]:
        """Out of poll(), so no rejoin: kafka-python joins only inside a poll (its heartbeat thread runs on)."""
        return self.thread.held()

    def close(self) -> None:
        self.thread.stop(self.consumer.close)


class KafkaPythonAdapter:
    def __init__(self, bootstrap: str) -> None:
        self.bootstrap = bootstrap
        self.admin = KafkaAdminClient(bootstrap_servers=bootstrap)
        self.producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=5)

    def create_topic(self, topic: str, partitions: int, replicas: int = 1) -> None:
        result = self.admin.create_topics({topic: {"num_partitions": partitions, "replication_factor": replicas}})
        assert [(t["name"], t["error_code"], t["num_partitions"]) for t in result["topics"]] == [(topic, 0, partitions)]

    def produce(self, topic: str, records: Sequence[tuple[str, str]], partition: int | None = None) -> list[Rec]:
        return send_acked(self.producer, topic, records, partition)

    def consumer(self, group: str, topic: str, name: str, **config: Any) -> KafkaPythonConsumer:
        return KafkaPythonConsumer(self.bootstrap, group, topic, name, **config)

    def committed_offsets(self, group: str, topic: str) -> dict[int, int]:
        offsets = self.admin.list_group_offsets({group: None})[group]
        return {tp.partition: om.offset for tp, om in offsets.items() if tp.topic == topic and om.offset >= 0}

    def describe(self, group: str, topic: str) -> GroupView:
        described = self.admin.describe_groups([group])[group]
        assert described["error"] is None, described
        assignments = {}
        for member in described["members"]:
            assignment = member["member_assignment"] or {"assigned_partitions": []}
            assignments[member["member_id"]] = frozenset(
                p for tps in assignment["assigned_partitions"] if tps["topic"] == topic for p in tps["partitions"]
            )
        return GroupView(described["group_state"], assignments)

    def close(self) -> None:
        self.producer.close()
        self.admin.close()


class KafkaPythonPipeline:
    """consume-transform-produce with kafka-python 3: `KafkaProducer(transactional_id=...)`, `init_transactions()`,
    and `send_offsets_to_transaction` with the consumer's `group_metadata()` (KIP-447 member id and generation)."""

    def __init__(self, bootstrap: str, group: str, topic: str, transactional_id: str, name: str) -> None:
        self.topic = topic
        self.producer = KafkaProducer(
            bootstrap_servers=bootstrap,
            transactional_id=transactional_id,
            transaction_timeout_ms=TRANSACTION_TIMEOUT_MS,
            linger_ms=5,
            max_block_ms=INIT_TIMEOUT_MS,
        )
        try:
            self.producer.init_transactions()
            self.consumer = KafkaPythonConsumer(bootstrap, group, topic, name, isolation_level="read_committed")
        except BaseException:
            self.producer.close()
            raise

    def transaction(self, consumed: Sequence[Rec], output: str, commit: bool) -> list[Rec]:
        self.producer.begin_transaction()
        produced = send_acked(self.producer, output, [transformed(r) for r in consumed])
        offsets = {
            TopicPartition(self.topic, p): OffsetAndMetadata(o, "", -1) for p, o in end_offsets(consumed).items()
        }
        metadata = self.consumer.thread.call(self.consumer.consumer.group_metadata)
        self.producer.send_offsets_to_transaction(offsets, metadata)
        if commit:
            self.producer.commit_transaction()
        else:
            self.producer.abort_transaction()
        return produced

    def close(self) -> None:
        try:
            self.consumer.close()
        finally:
            self.producer.close()


class KafkaPythonTxnAdapter(KafkaPythonAdapter):
    """`txn_scenario.TxnAdapter` for kafka-python."""

    def pipeline(self, group: str, topic: str, transactional_id: str, name: str) -> KafkaPythonPipeline:
        return KafkaPythonPipeline(self.bootstrap, group, topic, transactional_id, name)

    def reader(self, topic: str, name: str, read_committed: bool) -> KafkaPythonConsumer:
        isolation = "read_committed" if read_committed else "read_uncommitted"
        return self.consumer(unique(f"{name}-group"), topic, name, isolation_level=isolation)
