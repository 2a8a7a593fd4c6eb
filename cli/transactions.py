"""`group-broker transactions list|describe`: Kafka's `kafka-transactions.sh list` and `describe`, over the protocol.

`list` asks every broker of the cluster (Metadata) for its transactions (ListTransactions), as Kafka's Admin
`listTransactions` does, and prints TransactionalId, Coordinator (the broker that answered), ProducerId and
TransactionState. `describe --transactional-id X` finds the id's coordinator (FindCoordinator key type 1) and
prints its DescribeTransactions answer: CoordinatorId, TransactionalId, ProducerId, ProducerEpoch,
TransactionState, TransactionTimeoutMs, CurrentTransactionStartTimeMs and TransactionDurationMs ("None" when no
transaction is open; the duration is measured on this machine's clock, as Kafka's tool measures it) and
TopicPartitions (`topic-partition`, comma-separated).

Both print the table the way Kafka's `TransactionsCommand.prettyPrintTable` does: every column padded to its
widest value and followed by a tab. Coordinators that are still loading (COORDINATOR_LOAD_IN_PROGRESS,
COORDINATOR_NOT_AVAILABLE) are asked again for a few seconds, as Kafka's Admin retries them.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from cli.kafka_client import TRANSACTION_KEY, KafkaClient, RetriableError, check
from protocol.messages.describe_transactions import DescribeTransactionsRequest
from protocol.messages.list_transactions import ListTransactionsRequest
from protocol.registry import ApiKey

LIST_HEADERS = ("TransactionalId", "Coordinator", "ProducerId", "TransactionState")
DESCRIBE_HEADERS = (
    "CoordinatorId",
    "TransactionalId",
    "ProducerId",
    "ProducerEpoch",
    "TransactionState",
    "TransactionTimeoutMs",
    "CurrentTransactionStartTimeMs",
    "TransactionDurationMs",
    "TopicPartitions",
)
RETRY_FOR_S = 10.0
RETRY_BACKOFF_S = 0.1
T = TypeVar("T")


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Kafka's `prettyPrintTable`: each value padded to its column's widest, then a tab; one line per row."""
    widths = [max([len(h), *(len(row[i]) for row in rows)]) for i, h in enumerate(headers)]
    return "".join("".join(value.ljust(width) + "\t" for value, width in zip(line, widths, strict=True)) + "\n"
                   for line in [headers, *rows])  # fmt: skip


def _retrying(call: Callable[[], T]) -> T:
    """`call()`, asked again while it raises `RetriableError`, for up to `RETRY_FOR_S`."""
    deadline = time.monotonic() + RETRY_FOR_S
    while True:
        try:
            return call()
        except RetriableError:
            if time.monotonic() > deadline:
                raise
            time.sleep(RETRY_BACKOFF_S)


def list_rows(client: KafkaClient) -> list[list[str]]:
    """One row per transactional id of every broker: TransactionalId, Coordinator, ProducerId, TransactionState."""
    rows: list[list[str]] = []
    for node_id, host, port in client.brokers():
        response = _retrying(functools.partial(_listed, client, node_id, host, port))
        rows.extend(
            [t.transactional_id, str(node_id), str(t.producer_id), t.transaction_state]
            for t in sorted(response.transaction_states, key=lambda t: t.transactional_id)
        )
    return rows


def _listed(client: KafkaClient, node_id: int, host: str, port: int) -> Any:
    _, response = client.connection(host, port).call(ApiKey.LIST_TRANSACTIONS, ListTransactionsRequest())
    check(response.error_code, f"Failed to list transactions (broker {node_id})")
    return response


def describe_row(client: KafkaClient, transactional_id: str, now_ms: Callable[[], int]) -> list[str]:
    """The id's DescribeTransactions answer as `describe`'s one row (see the module docstring)."""
    what = f"Failed to describe transaction state of transactional-id `{transactional_id}`"

    def described() -> tuple[int, Any]:
        host, port, node_id = client.find_coordinator(transactional_id, TRANSACTION_KEY)
        request = DescribeTransactionsRequest(transactional_ids=[transactional_id])
        _, response = client.connection(host, port).call(ApiKey.DESCRIBE_TRANSACTIONS, request)
        [state] = response.transaction_states
        check(state.error_code, what)
        return node_id, state

    node_id, state = _retrying(described)
    start = state.transaction_start_time_ms
    return [
        str(node_id),
        transactional_id,
        str(state.producer_id),
        str(state.producer_epoch),
        state.transaction_state,
        str(state.transaction_timeout_ms),
        "None" if start < 0 else str(start),
        "None" if start < 0 else str(now_ms() - start),
        ",".join(f"{t.topic}-{p}" for t in state.topics for p in t.partitions),
    ]
