"""`group-broker transactions list|describe` over the wire: kafka-transactions.sh's columns and layout for a real
transactional producer (confluent-kafka) in the middle of a transaction, against group-broker and, to prove the
CLI reads any Kafka the same way, against the reference Apache Kafka."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest
from confluent_kafka import Producer

from cli.main import main
from cli.transactions import DESCRIBE_HEADERS, LIST_HEADERS, table
from tests.e2e.confluent_client import TIMEOUT_S, ConfluentAdapter, produce_acked
from tests.e2e.scenario import keyed, unique
from tests.reference.kafka import NODE_ID, ReferenceKafka
from toolkit.pytest_plugin import GroupBrokerHandle

TIMEOUT_MS = 45_000


def _rows(output: str) -> list[list[str]]:
    """Kafka's layout: every value padded to its column, then a tab (the last column too). The embedded broker's
    own log lines can share stdout when structlog prints there (its default), and they have no tab."""
    lines = [line for line in output.splitlines() if "\t" in line]
    assert lines and all(line.endswith("\t") for line in lines), output
    return [[value.rstrip(" ") for value in line.split("\t")[:-1]] for line in lines]


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> list[list[str]]:
    assert main(["transactions", *args]) == 0
    return _rows(capsys.readouterr().out)


@contextlib.contextmanager
def _mid_transaction(bootstrap: str) -> Iterator[tuple[str, str]]:
    """(topic, transactional id) of a confluent-kafka producer whose transaction is open and has written to both
    partitions of the topic; aborted afterwards."""
    adapter = ConfluentAdapter(bootstrap)
    topic, transactional_id = unique("cli-txn"), unique("cli-txn-id")
    adapter.create_topic(topic, 2)
    producer = Producer(
        {"bootstrap.servers": bootstrap, "transactional.id": transactional_id, "transaction.timeout.ms": TIMEOUT_MS}
    )
    try:
        producer.init_transactions(TIMEOUT_S)
        producer.begin_transaction()
        for partition in (0, 1):
            produce_acked(producer, topic, keyed(4 * partition, 4), partition=partition)
        yield topic, transactional_id
        producer.abort_transaction(TIMEOUT_S)
    finally:
        del producer  # no close(): dropping the last reference destroys the librdkafka handle now
        adapter.close()


def _check_list_and_describe(capsys: pytest.CaptureFixture[str], bootstrap: str, topic: str, txn_id: str) -> None:
    """What a mid-transaction producer looks like in `list` and `describe`, whichever broker answers."""
    listed = _run(capsys, "list", "--bootstrap-server", bootstrap)
    assert listed[0] == list(LIST_HEADERS)
    [row] = [r for r in listed[1:] if r[0] == txn_id]
    assert (row[1], row[3]) == (str(NODE_ID), "Ongoing")
    described = _run(capsys, "describe", "--transactional-id", txn_id, "--bootstrap-server", bootstrap)
    assert described[0] == list(DESCRIBE_HEADERS) and len(described) == 2
    fields = dict(zip(DESCRIBE_HEADERS, described[1], strict=True))
    assert fields["CoordinatorId"] == str(NODE_ID)
    assert (fields["TransactionalId"], fields["ProducerId"], fields["ProducerEpoch"]) == (txn_id, row[2], "0")
    assert (fields["TransactionState"], fields["TransactionTimeoutMs"]) == ("Ongoing", str(TIMEOUT_MS))
    assert int(fields["CurrentTransactionStartTimeMs"]) > 0 and int(fields["TransactionDurationMs"]) >= 0
    assert sorted(fields["TopicPartitions"].split(",")) == [f"{topic}-0", f"{topic}-1"]


def test_tables_are_printed_as_kafkas_pretty_print_table() -> None:
    """TransactionsCommand.prettyPrintTable: each value padded to the widest of its column, then a tab."""
    assert table(("A", "Bbb"), [["xx", "y"]]) == "A \tBbb\t\nxx\ty  \t\n"
    assert table(LIST_HEADERS, []) == "TransactionalId\tCoordinator\tProducerId\tTransactionState\t\n"


def test_list_and_describe_show_a_producer_in_the_middle_of_a_transaction(
    group_broker: GroupBrokerHandle, capsys: pytest.CaptureFixture[str]
) -> None:
    with _mid_transaction(group_broker.bootstrap_servers) as (topic, transactional_id):
        _check_list_and_describe(capsys, group_broker.bootstrap_servers, topic, transactional_id)
        snapshot = group_broker.transaction(transactional_id)
        assert snapshot is not None
        described = _run(
            capsys,
            "describe",
            "--transactional-id",
            transactional_id,
            "--bootstrap-server",
            group_broker.bootstrap_servers,
        )
        assert described[1][2] == str(snapshot["producer_id"])
        assert described[1][6] == str(snapshot["start_time_ms"])


def test_describe_of_an_unknown_transactional_id_fails_with_kafkas_sentence(
    group_broker: GroupBrokerHandle, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["transactions", "describe", "--transactional-id", "nobody", "--bootstrap-server"]
    assert main([*args, group_broker.bootstrap_servers]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "Error: Failed to describe transaction state of transactional-id `nobody`: TRANSACTIONAL_ID_NOT_FOUND\n"
    )


def test_describe_needs_a_transactional_id(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["transactions", "describe"])
    assert exited.value.code == 2
    assert "--transactional-id" in capsys.readouterr().err


@pytest.mark.integration
def test_the_cli_reads_the_reference_kafka_the_same_way(
    reference_kafka: ReferenceKafka, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same producer, the same commands, against Apache Kafka 4.4: the same columns and values, so the CLI's
    requests (Metadata, ListTransactions, FindCoordinator key type 1, DescribeTransactions) are Kafka's."""
    with _mid_transaction(reference_kafka.bootstrap) as (topic, transactional_id):
        _check_list_and_describe(capsys, reference_kafka.bootstrap, topic, transactional_id)
