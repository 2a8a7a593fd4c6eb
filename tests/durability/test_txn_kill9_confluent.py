"""kill -9 during transactions as a librdkafka application lives it (confluent-kafka), issue #15.

Two transactional producers of consume-transform-produce pipelines (3 output partitions, `send_offsets_to_transaction`
for their groups): `parked` commits transaction A, then produces transaction B (acknowledged) and sends its offsets
but never ends it; `decided` commits transaction C, and the broker is SIGKILLed the moment `commit_transaction`
returned (EndTxn answered: PrepareCommit durable, the markers maybe not written). After the restart, the
applications (alive all along: only the broker died) see:

* a read_committed consumer gets exactly A's and C's records, once B aborted at its timeout (plain records at the
  end of every partition, produced after the restart, are where it must get to); a read_uncommitted one gets B's
  records too;
* the groups' committed offsets are exactly A's and C's, none of B's;
* `parked` can no longer commit B: its producer was fenced when B timed out.

The step-exact and randomised versions over raw requests are test_txn_kill9_steps.py and test_txn_kill9_campaign.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

from tests.e2e.confluent_client import TIMEOUT_S, ConfluentTxnAdapter, produce_acked
from tests.e2e.scenario import Rec
from tests.e2e.txn_scenario import assert_read_exactly, read_to_sentinels, sentinels
from tests.support.broker_process import running_broker

pytestmark = pytest.mark.integration

OUTPUT, INPUT = "txn-out", "txn-in"
OUTPUT_PARTITIONS = 3
TIMEOUT_MS = 3000
BROKER = {"transaction.abort.timed.out.transaction.cleanup.interval.ms": "100"}


def _producer(bootstrap: str, transactional_id: str) -> Producer:
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "transactional.id": transactional_id,
            "transaction.timeout.ms": TIMEOUT_MS,
            "linger.ms": 5,
        }
    )
    producer.init_transactions(TIMEOUT_S)
    return producer


def _transaction(
    bootstrap: str, producer: Producer, group: str, name: str, offsets: dict[int, int], *, commit: bool
) -> list[Rec]:
    """Begin, produce two records per output partition (acknowledged), send the group's offsets, and commit when
    `commit` (else the transaction stays open). The group has no member: the metadata is that of a consumer that
    never joined (generation -1), as a simple consumer sends it."""
    producer.begin_transaction()
    produced = [
        record
        for partition in range(OUTPUT_PARTITIONS)
        for record in produce_acked(
            producer, OUTPUT, [(f"{name}-{partition}-{i}", name) for i in range(2)], partition=partition
        )
    ]
    member = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        positions = [TopicPartition(INPUT, p, o) for p, o in offsets.items()]
        producer.send_offsets_to_transaction(positions, member.consumer_group_metadata(), TIMEOUT_S)
    finally:
        member.close()
    if commit:
        producer.commit_transaction(TIMEOUT_S)
    return produced


def test_committed_transactions_survive_kill9_and_an_open_one_aborts_at_its_timeout(tmp_path: Path) -> None:
    with running_broker(tmp_path / "data", BROKER) as broker:
        adapter = ConfluentTxnAdapter(broker.bootstrap)
        parked = _producer(broker.bootstrap, "parked")
        decided = _producer(broker.bootstrap, "decided")
        try:
            adapter.create_topic(OUTPUT, OUTPUT_PARTITIONS)
            adapter.create_topic(INPUT, 2)
            a = _transaction(broker.bootstrap, parked, "group-parked", "a", {0: 10, 1: 20}, commit=True)
            b = _transaction(broker.bootstrap, parked, "group-parked", "b", {0: 11, 1: 21}, commit=False)
            c = _transaction(broker.bootstrap, decided, "group-decided", "c", {0: 30, 1: 40}, commit=True)
            broker.kill()
            broker.start()

            ends = sentinels(adapter, OUTPUT, OUTPUT_PARTITIONS)
            committed = read_to_sentinels(adapter, OUTPUT, ends, True, "after-kill-committed")
            assert_read_exactly(committed, [*a, *c, *ends], "read_committed after kill -9")
            everything = read_to_sentinels(adapter, OUTPUT, ends, False, "after-kill-uncommitted")
            assert_read_exactly(everything, [*a, *b, *c, *ends], "read_uncommitted after kill -9")
            assert adapter.committed_offsets("group-parked", INPUT) == {0: 10, 1: 20}
            assert adapter.committed_offsets("group-decided", INPUT) == {0: 30, 1: 40}
            with pytest.raises(KafkaException):
                parked.commit_transaction(TIMEOUT_S)
        finally:
            adapter.close()
            del parked, decided  # no close(): dropping the last reference destroys the handles now
