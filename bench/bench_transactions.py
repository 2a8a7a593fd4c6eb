"""Transactions per second through confluent-kafka (librdkafka), side by side: ours, the mock, Kafka and kfake.

One transaction is what an exactly-once pipeline does per batch, cut down to one record: `begin_transaction`,
produce one record, `send_offsets_to_transaction` of one partition's offset for the producer's own group (with that
group's metadata from an unsubscribed consumer: generation -1, no member id), `commit_transaction` (which flushes
the record first). Transactions run back to back for TXN_WINDOW_S, best of TXN_RUNS windows, with one producer and
with 10 concurrent producers (a thread each, its own transactional id and group; librdkafka waits without the GIL).
The producers retry after RETRY_BACKOFF_MS instead of librdkafka's 100 ms (see there).
Every producer is initialised (InitProducerId) and has committed one transaction before a window starts.

A peer whose ApiVersions lacks a transaction API, or whose InitProducerId for a transactional id fails within
PROBE_TIMEOUT_S, prints "not served" with the reason (the client's own error). Every client call has a timeout, so
a peer that stops answering fails (its column says why) instead of hanging `make bench`. Figures only: nothing fails
on time.
"""

from __future__ import annotations

import tempfile
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

from bench.peers import Measure, NotServed, Peer, comparison_table, each_peer, peer_notes, peers, started, with_failures
from bench.wire_load import print_table, served_version
from protocol.registry import ApiKey

TOPIC = "bench-transactions"
PARTITIONS = 4  # what the mock auto-creates; every peer gets the same
PRODUCERS = (1, 10)
TXN_WINDOW_S = 5.0
TXN_RUNS = 2
PROBE_TIMEOUT_S = 30.0  # Kafka creates __transaction_state (50 partitions) on the first transactional id
CALL_TIMEOUT_S = 15.0
#: librdkafka's wait before retrying a refused request (default 100 ms). A broker still completing the previous
#: transaction (markers being written) answers the next AddPartitionsToTxn with CONCURRENT_TRANSACTIONS, and with the
#: default backoff that wait, not the broker, would make the figure (Kafka 4.4: ~10 txn/s per producer).
RETRY_BACKOFF_MS = 10
TRANSACTION_APIS = (
    ApiKey.INIT_PRODUCER_ID,
    ApiKey.ADD_PARTITIONS_TO_TXN,
    ApiKey.ADD_OFFSETS_TO_TXN,
    ApiKey.END_TXN,
    ApiKey.TXN_OFFSET_COMMIT,
)
ANY_VERSION = 99


class TransactionalClient:
    """One transactional producer, with the metadata of a group of its own for `send_offsets_to_transaction`."""

    def __init__(self, bootstrap: str, name: str, partition: int) -> None:
        self.partition = partition
        self.committed = 0
        self.producer = Producer(
            {
                "bootstrap.servers": bootstrap,
                "transactional.id": f"{name}-txn",
                "linger.ms": 0,
                "acks": "all",
                "retry.backoff.ms": RETRY_BACKOFF_MS,
            }
        )
        self._consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"{name}-group"})
        self.group_metadata = self._consumer.consumer_group_metadata()

    def initialise(self, timeout_s: float) -> None:
        self.producer.init_transactions(timeout_s)

    def transaction(self) -> None:
        """begin, produce one record, send the offset after it for the group, commit."""
        self.producer.begin_transaction()
        self.producer.produce(TOPIC, value=b"one record", partition=self.partition)
        offsets = [TopicPartition(TOPIC, self.partition, self.committed + 1)]
        self.producer.send_offsets_to_transaction(offsets, self.group_metadata, CALL_TIMEOUT_S)
        self.producer.commit_transaction(CALL_TIMEOUT_S)
        self.committed += 1

    def close(self) -> None:
        self._consumer.close()
        # No close() on a Producer: dropping the last reference destroys the librdkafka handle now.
        del self.producer


def refusal(host: str, port: int) -> str | None:
    """Why the peer does not serve transactions, from its ApiVersions answer; None when it advertises them all."""
    missing = [api.name for api in TRANSACTION_APIS if served_version(host, port, api, ANY_VERSION) is None]
    return f"{', '.join(missing)} not in its ApiVersions answer" if missing else None


def _opened(bootstrap: str, count: int, run_id: str) -> list[TransactionalClient]:
    """`count` initialised clients that committed one transaction each; the first initialisation tells whether the
    peer serves transactional ids at all."""
    clients: list[TransactionalClient] = []
    try:
        for index in range(count):
            client = TransactionalClient(bootstrap, f"bench-{run_id}-{index}", index % PARTITIONS)
            clients.append(client)
            try:
                client.initialise(PROBE_TIMEOUT_S if index == 0 else CALL_TIMEOUT_S)
            except KafkaException as exc:
                if index > 0:
                    raise
                error = exc.args[0]
                raise NotServed(f"InitProducerId for a transactional id: {error.name()}: {error.str()}") from None
            client.transaction()
        return clients
    except BaseException:
        for client in clients:
            client.close()
        raise


def _window(clients: Sequence[TransactionalClient]) -> float:
    """Transactions per second of all clients running back to back in threads for TXN_WINDOW_S."""
    start = threading.Barrier(len(clients) + 1)
    errors: list[BaseException] = []
    before = [c.committed for c in clients]
    deadline = 0.0

    def loop(client: TransactionalClient) -> None:
        start.wait()
        try:
            while time.perf_counter() < deadline:
                client.transaction()
        except BaseException as exc:  # handed to the measuring thread
            errors.append(exc)

    threads = [threading.Thread(target=loop, args=(c,), daemon=True) for c in clients]
    for thread in threads:
        thread.start()
    began = time.perf_counter()
    deadline = began + TXN_WINDOW_S
    start.wait()
    for thread in threads:
        thread.join(TXN_WINDOW_S + 2 * CALL_TIMEOUT_S)
    ended = time.perf_counter()
    if errors:
        raise errors[0]
    if any(thread.is_alive() for thread in threads):
        raise TimeoutError(f"a transaction did not end within {2 * CALL_TIMEOUT_S:g} s")
    return sum(c.committed - b for c, b in zip(clients, before, strict=True)) / (ended - began)


@dataclass(frozen=True)
class TxnResult:
    per_second: dict[int, float]  # producers -> best transactions per second


def _measure(bootstrap: str, host: str, port: int) -> TxnResult:
    refused = refusal(host, port)
    if refused is not None:
        raise NotServed(refused)
    run_id = uuid.uuid4().hex[:8]
    best: dict[int, float] = {}
    for count in PRODUCERS:
        clients = _opened(bootstrap, count, f"{run_id}-{count}")
        try:
            best[count] = max(_window(clients) for _ in range(TXN_RUNS))
        finally:
            for client in clients:
                client.close()
    return TxnResult(best)


def run() -> None:
    columns = peers()
    failures: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="bench-transactions-") as tmp:

        def measure(peer: Peer) -> TxnResult:
            with started(peer, Path(tmp) / peer.name, {TOPIC: PARTITIONS}) as server:
                return _measure(f"{server.host}:{server.port}", server.host, server.port)

        results = each_peer(columns, measure, failures)
    measures = [
        Measure(
            f"txn/s, {count} producer{'s' if count > 1 else ''}",
            with_failures({name: r.per_second[count] for name, r in results.items()}, failures),
        )
        for count in PRODUCERS
    ]
    header, rows = comparison_table(measures, columns, ",.0f")
    print_table(
        f"transactions: begin, produce 1 record, send offsets, commit (confluent-kafka); best of {TXN_RUNS} x "
        f"{TXN_WINDOW_S:g} s",
        header,
        rows,
        notes=peer_notes(
            columns,
            failures,
            f"topic {TOPIC}: {PARTITIONS} partitions; each producer writes one partition and commits offsets for a"
            " group of its own (generation -1, no member id)",
            f"producers: librdkafka defaults but linger.ms=0, retry.backoff.ms={RETRY_BACKOFF_MS} (default 100: a"
            " broker answering CONCURRENT_TRANSACTIONS while it completes the previous transaction costs that much)",
        ),
    )


if __name__ == "__main__":
    run()
