"""Transactions (issue #15) end to end with real clients: exactly-once consume-transform-produce and zombie fencing.

`txn_scenario.run_consume_transform_produce` runs once per client (confluent-kafka, aiokafka, kafka-python, kafkajs,
the Java client): one committed and one aborted transaction with the group's offsets, a restart that resumes at the
committed offsets, and readers of both isolation levels. The fencing test drives librdkafka's transactional producer.
The broker is the `e2e_target` fixture's: group-broker by default, the reference Apache Kafka with
`--e2e-broker=kafka` (`make test-e2e-reference`), which is what proves the tests themselves right. Rule numbers (T..)
refer to the Kafka 4.4 transaction rules of the issue's research notes.

The Python and JavaScript clients speak transaction version 0 (EndTxn v0-3, explicit AddPartitionsToTxn and
AddOffsetsToTxn) whatever the broker advertises. The Java client 4.4 uses transaction version 2 (EndTxn v5, Produce
v12+ adding partitions implicitly, TxnOffsetCommit v5+ without AddOffsetsToTxn) against a broker that finalizes
the `transaction.version` feature at 2, as a fresh Kafka 4.4 and group-broker (by default) do; the test reads the
versions it sent off its request log and asserts it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from confluent_kafka import KafkaError, Producer

from tests.e2e.aiokafka_client import AiokafkaTxnAdapter
from tests.e2e.confluent_client import (
    TIMEOUT_S,
    ConfluentTxnAdapter,
    commit_refused,
    produce_acked,
    transactional_producer,
)
from tests.e2e.java_client import JavaTxnAdapter
from tests.e2e.kafka_python_client import KafkaPythonTxnAdapter
from tests.e2e.kafkajs_client import KafkajsTxnAdapter
from tests.e2e.scenario import keyed, unique
from tests.e2e.targets import E2ETarget
from tests.e2e.txn_scenario import (
    TXN_PARTITIONS,
    TxnAdapter,
    assert_read_exactly,
    read_to_sentinels,
    run_consume_transform_produce,
    sentinels,
)

pytestmark = pytest.mark.integration

AdapterFactory = Callable[[str, Path], TxnAdapter]
CLIENTS: dict[str, AdapterFactory] = {
    "confluent": lambda bootstrap, _: ConfluentTxnAdapter(bootstrap),
    "aiokafka": lambda bootstrap, _: AiokafkaTxnAdapter(bootstrap),
    "kafka-python": lambda bootstrap, _: KafkaPythonTxnAdapter(bootstrap),
    "kafkajs": KafkajsTxnAdapter,
    "java": JavaTxnAdapter,
}


@contextlib.contextmanager
def opened(client: str, target: E2ETarget, log_dir: Path) -> Iterator[TxnAdapter]:
    adapter = CLIENTS[client](target.bootstrap, log_dir)
    try:
        yield adapter
    finally:
        adapter.close()


@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_consume_transform_produce_commits_one_transaction_and_aborts_one(
    client: str, e2e_target: E2ETarget, tmp_path: Path
) -> None:
    """T11, T25, T27-T29, T36, T41-T42, T57, T62-T64: a read_committed reader sees exactly the committed
    transactions' records, a read_uncommitted one every data record; the group's committed offsets are exactly
    those sent with the committed transactions, so a restarted pipeline redoes exactly the aborted batch."""
    with opened(client, e2e_target, tmp_path) as adapter:
        run_consume_transform_produce(adapter, client)
        if isinstance(adapter, JavaTxnAdapter):
            _assert_transaction_version_2(adapter.sent_versions())


def _assert_transaction_version_2(sent: dict[str, set[int]]) -> None:
    """T70-T76: the Java client 4.4 ran transaction version 2, as both brokers finalize it: every EndTxn is v5,
    every Produce v12+ and TxnOffsetCommit v5+ (adding their partitions themselves), no AddPartitionsToTxn or
    AddOffsetsToTxn was sent."""
    assert sent.get("END_TXN") == {5}, sent
    assert min(sent["PRODUCE"]) >= 12, sent
    assert min(sent["TXN_OFFSET_COMMIT"]) >= 5, sent
    assert "ADD_PARTITIONS_TO_TXN" not in sent and "ADD_OFFSETS_TO_TXN" not in sent, sent


def _produce_unchecked(producer: Producer, topic: str, records: list[tuple[str, str]]) -> dict[int, KafkaError | None]:
    """Produce without flushing (confluent-kafka's flush() of a producer that hit a fatal error leaves a Python
    exception set: SystemError); the delivery reports fill the returned map (index -> error, None: acknowledged)
    when the producer serves them."""
    reports: dict[int, KafkaError | None] = {}

    def reporter(index: int) -> Callable[[KafkaError | None, object], None]:
        def report(err: KafkaError | None, _: object) -> None:
            reports[index] = err

        return report

    for i, (key, value) in enumerate(records):
        producer.produce(topic, key=key, value=value, on_delivery=reporter(i))
    return reports


@pytest.mark.parametrize("zombie_writes_again", [False, True], ids=["zombie-commits", "zombie-writes-then-commits"])
def test_zombie_producer_is_fenced_and_its_writes_never_become_visible(
    e2e_target: E2ETarget, zombie_writes_again: bool
) -> None:
    """T13-T14, T17, T28, T39: producer A has a transaction open with written records when producer B initialises
    the same transactional id, which makes Kafka abort A's transaction with a bumped epoch. A's commit then fails with
    librdkafka's fatal _FENCED: from EndTxn (Kafka answers INVALID_PRODUCER_EPOCH to librdkafka's EndTxn v1), or,
    when A writes again first, from Produce (INVALID_PRODUCER_EPOCH: every later record of A is refused). B's
    committed transaction is visible to read_committed, nothing of A is; read_uncommitted shows the records A wrote
    before it was fenced and none of the later ones."""
    adapter = ConfluentTxnAdapter(e2e_target.bootstrap)
    topic, transactional_id = unique("txn-zombie"), unique("txn-zombie-id")
    late_records = keyed(100, 12)
    try:
        adapter.create_topic(topic, TXN_PARTITIONS)
        zombie = transactional_producer(adapter.bootstrap, transactional_id)
        zombie.begin_transaction()
        written = produce_acked(zombie, topic, keyed(0, 12))
        assert {r.partition for r in written} == set(range(TXN_PARTITIONS))

        successor = transactional_producer(adapter.bootstrap, transactional_id)

        late = _produce_unchecked(zombie, topic, late_records) if zombie_writes_again else {}
        error = commit_refused(zombie)
        assert (error.code(), error.fatal()) == (KafkaError._FENCED, True), error
        if zombie_writes_again:
            assert zombie.flush(TIMEOUT_S) == 0
            codes = {i: None if err is None else err.code() for i, err in late.items()}
            # The broker refuses what reaches it; once that refusal makes the producer fatal, librdkafka purges
            # what it had not sent yet, so how many records get each answer depends on timing, never on the broker.
            purged = {KafkaError._PURGE_QUEUE, KafkaError._PURGE_INFLIGHT}
            assert set(codes) == set(range(len(late_records))), codes
            assert set(codes.values()) <= {KafkaError.INVALID_PRODUCER_EPOCH, *purged}, codes
            assert KafkaError.INVALID_PRODUCER_EPOCH in codes.values(), codes

        successor.begin_transaction()
        committed = produce_acked(successor, topic, keyed(200, 12))
        successor.commit_transaction(TIMEOUT_S)

        ends = sentinels(adapter, topic, TXN_PARTITIONS)
        read = read_to_sentinels(adapter, topic, ends, read_committed=True, name="zombie-committed-reader")
        assert_read_exactly(read, [*committed, *ends], "the read_committed reader")
        read = read_to_sentinels(adapter, topic, ends, read_committed=False, name="zombie-uncommitted-reader")
        assert_read_exactly(read, [*written, *committed, *ends], "the read_uncommitted reader")
    finally:
        adapter.close()
