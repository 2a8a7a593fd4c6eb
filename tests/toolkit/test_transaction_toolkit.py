"""The transaction toolkit (issue #15) through the pytest handle, each control shown by what a real transactional
producer (confluent-kafka, aiokafka) and read_committed readers experience: virtual time past a transaction's
timeout aborts it, `expire_transaction` aborts it now, marker faults delay or fail its completion, and the
transaction timeline tells the story. Time is frozen where a step must wait for `advance`; nothing asserts on time.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest
from aiokafka import AIOKafkaProducer
from aiokafka.errors import ProducerFenced
from confluent_kafka import KafkaError, Producer

from cli.main import main
from tests.e2e.confluent_client import TIMEOUT_S, ConfluentTxnAdapter, commit_refused, produce_acked
from tests.e2e.scenario import Rec, keyed, unique
from tests.e2e.txn_scenario import assert_read_exactly, read_to_sentinels, sentinels
from tests.support.broker_process import wait_until
from toolkit.pytest_plugin import GroupBrokerHandle

PARTITIONS = 2
TIMEOUT_MS = 20_000
"""The producers' transaction.timeout.ms (Kafka's scan for timed-out transactions runs every 10 s)."""


@contextlib.contextmanager
def _adapter(broker: GroupBrokerHandle) -> Iterator[tuple[ConfluentTxnAdapter, str]]:
    adapter = ConfluentTxnAdapter(broker.bootstrap_servers)
    topic = unique("txn-toolkit")
    adapter.create_topic(topic, PARTITIONS)
    try:
        yield adapter, topic
    finally:
        adapter.close()


def _producer(broker: GroupBrokerHandle, transactional_id: str) -> Producer:
    producer = Producer(
        {
            "bootstrap.servers": broker.bootstrap_servers,
            "transactional.id": transactional_id,
            "transaction.timeout.ms": TIMEOUT_MS,
            "linger.ms": 5,
        }
    )
    producer.init_transactions(TIMEOUT_S)
    return producer


def _committed_view(adapter: ConfluentTxnAdapter, topic: str, name: str) -> tuple[list[Rec], list[Rec]]:
    """(what a read_committed reader receives up to the end markers, the end markers)."""
    ends = sentinels(adapter, topic, PARTITIONS)
    return read_to_sentinels(adapter, topic, ends, read_committed=True, name=name), ends


def _kinds(broker: GroupBrokerHandle, transactional_id: str) -> list[str]:
    view = broker.transaction_timeline(transactional_id)
    return [] if view is None else [e["kind"] for e in view["events"]]


def _event(broker: GroupBrokerHandle, transactional_id: str, kind: str) -> dict[str, Any]:
    view = broker.transaction_timeline(transactional_id)
    assert view is not None
    return next(e for e in view["events"] if e["kind"] == kind)


def _describe(broker: GroupBrokerHandle, transactional_id: str, capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    """`group-broker transactions describe` (DescribeTransactions over the wire): its one row by header."""
    args = ["transactions", "describe", "--transactional-id", transactional_id]
    capsys.readouterr()  # drop what was printed before (the embedded broker's log lines, when it logs to stdout)
    assert main([*args, "--bootstrap-server", broker.bootstrap_servers]) == 0
    table = [line for line in capsys.readouterr().out.splitlines() if "\t" in line]  # log lines have no tab
    header, row = (line.split("\t")[:-1] for line in table)
    return {name.strip(): value.strip() for name, value in zip(header, row, strict=True)}


def test_advancing_virtual_time_past_the_timeout_aborts_an_open_transaction(
    group_broker: GroupBrokerHandle, capsys: pytest.CaptureFixture[str]
) -> None:
    """T46-T47: the coordinator's timeout scan runs on the broker clock. With time frozen, the open transaction
    stays Ongoing until `advance` passes its timeout and the next scan; then it is fenced (epoch + 1) and aborted:
    DescribeTransactions says CompleteAbort with the bumped epoch, read_committed never sees its records, and the
    producer's commit fails as librdkafka reports a fenced producer."""
    transactional_id = unique("txn-timeout")
    with _adapter(group_broker) as (adapter, topic):
        group_broker.freeze_time()
        producer = _producer(group_broker, transactional_id)
        producer.begin_transaction()
        produce_acked(producer, topic, keyed(0, 8))
        ongoing = group_broker.transaction(transactional_id)
        assert ongoing is not None and ongoing["state"] == "Ongoing"
        assert ongoing["partitions"] == [f"{topic}-{p}" for p in range(PARTITIONS)]
        assert ongoing["timeout_expires_in_ms"] == TIMEOUT_MS  # frozen: no time has passed since it began

        group_broker.advance(TIMEOUT_MS)  # the timeout has not run *out* yet (Kafka's check is strict)
        assert group_broker.transaction(transactional_id)["state"] == "Ongoing"  # type: ignore[index]
        group_broker.advance(group_broker.transaction(transactional_id)["next_timeout_scan_in_ms"])  # type: ignore[index]

        aborted = group_broker.wait_for_transaction_blocking(transactional_id, state="CompleteAbort")
        assert aborted["producer_epoch"] == ongoing["producer_epoch"] + 1
        described = _describe(group_broker, transactional_id, capsys)
        assert described["TransactionState"] == "CompleteAbort"
        assert described["ProducerEpoch"] == str(ongoing["producer_epoch"] + 1)
        assert described["CurrentTransactionStartTimeMs"] == str(ongoing["start_time_ms"])  # kept, as in Kafka

        read, ends = _committed_view(adapter, topic, "timeout-reader")
        assert_read_exactly(read, ends, "the read_committed reader")
        error = commit_refused(producer)
        assert (error.code(), error.fatal()) == (KafkaError._FENCED, True), error
        del producer

    kinds = _kinds(group_broker, transactional_id)
    assert kinds.index("txn.timed_out") < kinds.index("txn.fenced") < kinds.index("markers.written")
    written = _event(group_broker, transactional_id, "markers.written")
    assert written["detail"]["result"] == "ABORT" and written["partitions"] == ongoing["partitions"]
    end_txn = [e for e in group_broker.transaction_timeline(transactional_id)["events"] if e["kind"] == "EndTxn"]  # type: ignore[index]
    assert end_txn[-1]["error"] == "INVALID_PRODUCER_EPOCH"  # what Kafka answers librdkafka's EndTxn v1


async def test_expire_transaction_aborts_an_aiokafka_transaction_now(group_broker: GroupBrokerHandle) -> None:
    """`expire_transaction` takes the timeout's path at once: aiokafka's commit is refused as fenced, and the
    timeline shows the states Ongoing -> PrepareAbort -> CompleteAbort with the bumped epoch."""
    transactional_id = unique("txn-expire")
    with _adapter(group_broker) as (_, topic):
        producer = AIOKafkaProducer(
            bootstrap_servers=group_broker.bootstrap_servers,
            transactional_id=transactional_id,
            transaction_timeout_ms=TIMEOUT_MS,
        )
        await producer.start()
        try:
            await producer.begin_transaction()
            await producer.send_and_wait(topic, b"doomed", partition=0)
            assert group_broker.transaction(transactional_id)["state"] == "Ongoing"  # type: ignore[index]
            assert group_broker.expire_transaction(transactional_id) is True
            aborted = await group_broker.wait_for_transaction(transactional_id, state="CompleteAbort")
            with pytest.raises(ProducerFenced):
                await producer.commit_transaction()
        finally:
            await producer.stop()
    assert group_broker.expire_transaction(transactional_id) is False  # nothing open to abort any more
    view = group_broker.transaction_timeline(transactional_id)
    assert view is not None
    assert [b["state"] for b in view["states"]][-3:] == ["Ongoing", "PrepareAbort", "CompleteAbort"]
    assert view["states"][-1]["producer_epoch"] == aborted["producer_epoch"]
    assert view["partitions"] == [f"{topic}-0"]


def test_a_failed_marker_write_is_retried_after_the_backoff_and_the_commit_completes(
    group_broker: GroupBrokerHandle,
) -> None:
    """T34: a retriable marker error (NOT_LEADER_OR_FOLLOWER) leaves the transaction in PrepareCommit with its
    markers pending until the retry backoff passes on the broker clock; then the retry writes them."""
    transactional_id = unique("txn-fail-markers")
    with _adapter(group_broker) as (adapter, topic):
        group_broker.freeze_time()
        producer = _producer(group_broker, transactional_id)
        producer.begin_transaction()
        written = produce_acked(producer, topic, keyed(0, 8))
        group_broker.fail_next_markers(transactional_id=transactional_id)
        producer.commit_transaction(TIMEOUT_S)  # answered once PrepareCommit is durable, before the markers

        wait_until(lambda: "txn.markers_failed" in _kinds(group_broker, transactional_id), what="the failed round")
        stuck = group_broker.transaction(transactional_id)
        assert stuck is not None and (stuck["state"], stuck["pending_state"]) == ("PrepareCommit", "CompleteCommit")
        assert stuck["pending_markers"] == [
            {"result": "COMMIT", "producer_epoch": stuck["producer_epoch"], "partitions": stuck["partitions"]}
        ]
        assert _event(group_broker, transactional_id, "fault.markers_failed")["error"] == "NOT_LEADER_OR_FOLLOWER"

        group_broker.advance(100)  # the coordinator's marker retry backoff
        group_broker.wait_for_transaction_blocking(transactional_id, state="CompleteCommit")
        read, ends = _committed_view(adapter, topic, "retried-reader")
        assert_read_exactly(read, [*written, *ends], "the read_committed reader")
        del producer


def test_a_fatal_marker_error_stops_the_transactions_markers(group_broker: GroupBrokerHandle) -> None:
    """T34: INVALID_PRODUCER_EPOCH from a leader means a newer epoch owns the transaction: the coordinator stops
    sending its markers and the id stays in PrepareCommit, as in Kafka."""
    transactional_id = unique("txn-fatal-markers")
    with _adapter(group_broker) as (_, topic):
        producer = _producer(group_broker, transactional_id)
        producer.begin_transaction()
        produce_acked(producer, topic, keyed(0, 4))
        group_broker.fail_next_markers("INVALID_PRODUCER_EPOCH", transactional_id=transactional_id)
        producer.commit_transaction(TIMEOUT_S)
        wait_until(lambda: "txn.markers_abandoned" in _kinds(group_broker, transactional_id), what="abandoned")
        stuck = group_broker.transaction(transactional_id)
        assert stuck is not None and stuck["state"] == "PrepareCommit" and stuck["pending_markers"] == []
        assert _event(group_broker, transactional_id, "txn.markers_abandoned")["error"] == "INVALID_PRODUCER_EPOCH"
        del producer


def test_delayed_markers_are_written_once_the_broker_clock_passes_the_delay(group_broker: GroupBrokerHandle) -> None:
    """Held markers keep the transaction in PrepareCommit (and read_committed readers at the last stable offset);
    with time frozen they go when `advance` passes the delay, not before."""
    transactional_id = unique("txn-delay-markers")
    with _adapter(group_broker) as (adapter, topic):
        group_broker.freeze_time()
        producer = _producer(group_broker, transactional_id)
        producer.begin_transaction()
        written = produce_acked(producer, topic, keyed(0, 8))
        group_broker.delay_markers(5_000, count=1)
        producer.commit_transaction(TIMEOUT_S)

        wait_until(lambda: "fault.markers_held" in _kinds(group_broker, transactional_id), what="the held round")
        held = group_broker.transaction(transactional_id)
        assert held is not None and held["state"] == "PrepareCommit"
        assert held["held_markers"] == [
            {
                "result": "COMMIT",
                "producer_epoch": held["producer_epoch"],
                "partitions": held["partitions"],
                "release_in_ms": 5_000,
            }
        ]
        group_broker.advance(4_999)
        assert group_broker.transaction(transactional_id)["held_markers"][0]["release_in_ms"] == 1  # type: ignore[index]
        group_broker.advance(1)
        group_broker.wait_for_transaction_blocking(transactional_id, state="CompleteCommit")
        read, ends = _committed_view(adapter, topic, "delayed-reader")
        assert_read_exactly(read, [*written, *ends], "the read_committed reader")
        del producer
    assert group_broker.transaction(transactional_id)["held_markers"] == []  # type: ignore[index]
