"""Partition leader changes on a three-node group-broker (issue #19), seen by confluent-kafka (librdkafka):

- an idempotent producer with acks=all keeps producing while the partition's leader node stops, and while the
  leadership moves back: every record is acknowledged, and the log holds each once, in order, written under
  several leader epochs (a batch the stopped node appended but never answered is retried and deduplicated);
- a consumer validates its position after a leader change (KIP-320): librdkafka sends OffsetForLeaderEpoch to the
  new leader instead of resetting its position, and reads on from where it was, re-reading and skipping nothing.

librdkafka is given short reconnect backoffs and metadata refreshes so that a change takes it a second or two.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, Message, Producer, TopicPartition

from tests.e2e.cluster_nodes import NODES, ThreeNodes
from tests.e2e.confluent_client import QUICK_RECOVERY, TIMEOUT_S, ConfluentAdapter
from tests.e2e.scenario import unique
from tests.support.broker_process import wait_until

pytestmark = pytest.mark.integration


@pytest.fixture
def admin(cluster: ThreeNodes) -> Iterator[ConfluentAdapter]:
    adapter = ConfluentAdapter(cluster.bootstrap)
    yield adapter
    adapter.close()


def _leader(admin: ConfluentAdapter, topic: str) -> int:
    """The leader of the topic's partition 0, as Metadata names it."""
    return int(admin.admin.list_topics(topic, timeout=TIMEOUT_S).topics[topic].partitions[0].leader)


def _read_all(cluster: ThreeNodes, topic: str, count: int) -> list[Message]:
    """Partition 0 from its start, `count` records, by a consumer of no group."""
    reader = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": unique("reader"), **QUICK_RECOVERY})
    reader.assign([TopicPartition(topic, 0, 0)])
    read: list[Message] = []
    try:
        wait_until(
            lambda: len(read) >= count,
            30,
            what=f"{count} records of {topic}",
            detail=lambda: f"read {len(read)}",
            step=lambda: read.extend(_records(reader.consume(500, 0.2))),
        )
    finally:
        reader.close()
    return read


def _records(messages: list[Message]) -> list[Message]:
    for m in messages:
        if m.error() is not None:
            raise AssertionError(m.error())
    return messages


def test_an_idempotent_producer_keeps_producing_through_leader_changes(
    cluster: ThreeNodes, admin: ConfluentAdapter
) -> None:
    topic = unique("leader-changes")
    admin.create_topic(topic, 1, replicas=NODES)
    producer = Producer(
        {
            "bootstrap.servers": cluster.bootstrap,
            "enable.idempotence": True,
            "acks": "all",
            "linger.ms": 2,
            **QUICK_RECOVERY,
        }
    )
    failures: list[KafkaError] = []
    acked: list[int] = []

    def report(err: KafkaError | None, m: Any) -> None:
        if err is not None:
            failures.append(err)
        else:
            acked.append(int(m.value()))

    def send(first: int, count: int) -> None:
        for i in range(first, first + count):
            producer.produce(topic, value=b"%d" % i, partition=0, on_delivery=report)
        producer.poll(0)

    send(0, 100)
    assert producer.flush(TIMEOUT_S) == 0
    leader = _leader(admin, topic)
    cluster.stop_node(leader)  # records in flight to it while it stops
    send(100, 200)
    send(300, 100)
    assert producer.flush(TIMEOUT_S) == 0
    cluster.start_node(leader)
    send(400, 100)
    cluster.move_leader(topic, 0, leader)  # and back, with records in flight again
    send(500, 100)
    assert producer.flush(TIMEOUT_S) == 0
    assert not failures, failures[:5]
    assert sorted(acked) == list(range(600))
    read = _read_all(cluster, topic, 600)
    assert [int(m.value()) for m in read] == list(range(600)), "the log holds each record once, in order"
    assert len({m.leader_epoch() for m in read}) == 3, "written under the three leaders' epochs"


def test_a_consumer_validates_its_position_after_a_leader_change(cluster: ThreeNodes, admin: ConfluentAdapter) -> None:
    topic = unique("validated")
    admin.create_topic(topic, 1, replicas=NODES)
    first = admin.produce(topic, [(f"key-{i}", f"value-{i}") for i in range(50)], partition=0)
    consumer = Consumer(
        {
            "bootstrap.servers": cluster.bootstrap,
            "group.id": unique("validating"),
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            **QUICK_RECOVERY,
        }
    )
    read: list[Message] = []

    def poll() -> None:
        read.extend(_records(consumer.consume(500, 0.1)))

    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        wait_until(lambda: len(read) >= len(first), 30, what="the first records", step=poll)
        validations = cluster.requests("OffsetForLeaderEpoch")
        before = _leader(admin, topic)
        [change] = cluster.move_leader(topic, 0, cluster.other_node(before))
        later = admin.produce(topic, [(f"key-{i}", f"value-{i}") for i in range(50, 100)], partition=0)
        assert later[0].offset == len(first)
        wait_until(lambda: len(read) >= 100, 30, what="the records produced after the leader change", step=poll)
        # librdkafka learnt the new leader epoch and asked the new leader where its position's epoch ended.
        wait_until(
            lambda: cluster.requests("OffsetForLeaderEpoch", "NONE") > validations,
            10,
            what="an OffsetForLeaderEpoch after the leader change",
            step=poll,
        )
    finally:
        consumer.close()
    assert change["leader"] != before
    assert [m.offset() for m in read] == list(range(100)), "nothing re-read, nothing skipped"
    assert [m.value().decode() for m in read] == [f"value-{i}" for i in range(100)]
    assert {m.leader_epoch() for m in read[50:]} == {read[0].leader_epoch() + 1}
