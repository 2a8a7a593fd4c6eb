"""The transactional (exactly-once) end-to-end scenario of issue #15, driven through a small adapter per client.

Each client (confluent-kafka, aiokafka, kafka-python, kafkajs) implements `TxnAdapter` with its own transactional
producer, consumers and admin API; `run_consume_transform_produce` then runs one acceptance scenario, a
consume-transform-produce pipeline as applications write it (KIP-98 / KIP-447):

1. an input topic holds a first batch of keyed records; the pipeline (a read_committed classic-group consumer and a
   transactional producer) consumes it, produces one transformed record per input record to an output topic, sends
   the consumed offsets with `send_offsets_to_transaction` and COMMITS;
2. a second batch is consumed, transformed and produced the same way, and the transaction is ABORTED;
3. the pipeline restarts (a new producer with the same transactional id, a new consumer in the group): its
   initialisation completes only once the abort did (T11), the group's committed offsets are exactly those of the
   committed transaction (T62, T64: the aborted transaction's pending offsets are dropped), and the new consumer
   resumes there, so it reprocesses exactly the aborted batch, in a transaction it commits;
4. a plain record at the end of every output partition marks how far a reader must get (reading up to them means
   every transaction marker before them was read past, so "nothing else arrives" is checked without waiting on time);
5. a read_committed reader of the output sees exactly the committed transactions' records (T41, T42) and a
   read_uncommitted one every data record written, aborted ones included, and never a control record; each COMMIT
   or ABORT marker takes one offset in every partition its transaction wrote to (T36);
6. the group's committed offsets end at the end of both input batches.

The records a reader must see are compared whole (partition, offset, key, value): the acknowledged positions of
what the pipeline produced are the expectation. Nothing asserts on time; every wait polls a condition.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Protocol

from tests.e2e.scenario import WAIT_S, GroupConsumer, Pump, Rec, end_offsets, keyed, unique
from tests.support.broker_process import wait_until

TXN_PARTITIONS = 3
BATCH = 30
#: What a transactional id's transactions may take at most (Kafka's clients default to 60 s; below the broker's
#: transaction.max.timeout.ms); a failing test never waits on it.
TRANSACTION_TIMEOUT_MS = 60_000
SENTINEL_VALUE = "end-of-partition"


def transformed(record: Rec) -> tuple[str, str]:
    """The pipeline's output for one input record: same key (so the same partitioner decides), a new value."""
    return record.key, f"{record.value}-processed"


class TxnPipeline(Protocol):
    """A consume-transform-produce pipeline: `consumer` is a read_committed member of the group (classic protocol),
    the transactional producer was initialised (InitProducerId) when the pipeline was made."""

    consumer: GroupConsumer

    def transaction(self, consumed: Sequence[Rec], output: str, commit: bool) -> list[Rec]:
        """Begin a transaction, produce `transformed(r)` of every consumed record to `output` (all acknowledged),
        send the offsets after `consumed` for the group, then commit or abort. Returns what was produced, with the
        acknowledged partitions and offsets."""

    def close(self) -> None: ...


class TxnAdapter(Protocol):
    def create_topic(self, topic: str, partitions: int) -> None: ...

    def produce(self, topic: str, records: Sequence[tuple[str, str]], partition: int | None = None) -> list[Rec]:
        """Plain (non-transactional) produce, acknowledged; returns the records with their partition and offset."""

    def pipeline(self, group: str, topic: str, transactional_id: str, name: str) -> TxnPipeline: ...

    def reader(self, topic: str, name: str, read_committed: bool) -> GroupConsumer:
        """A consumer of `topic` from the beginning with the given isolation level, in a group of its own."""

    def committed_offsets(self, group: str, topic: str) -> dict[int, int]:
        """The group's committed offsets through the admin API (partitions without one left out)."""

    def close(self) -> None: ...


def in_order(records: Iterable[Rec]) -> list[Rec]:
    return sorted(records, key=lambda r: r.position)


# -- consuming ---------------------------------------------------------------------------------------------------


def consume_exactly(consumer: GroupConsumer, wanted: Sequence[Rec], what: str) -> list[Rec]:
    """Poll until every wanted record arrived; the consumer must have received those records and nothing else."""
    pump = Pump([consumer])
    positions = {r.position for r in wanted}
    pump.until(lambda: positions <= pump.positions(), what)
    received = pump.all_received()
    assert_read_exactly(received, wanted, what)
    return received


def read_to_sentinels(
    adapter: TxnAdapter, topic: str, sentinels: Iterable[Rec], read_committed: bool, name: str
) -> list[Rec]:
    """Everything a reader with that isolation level receives until the sentinels that end every partition."""
    reader = adapter.reader(topic, name, read_committed)
    try:
        pump = Pump([reader])
        ends = {r.position for r in sentinels}
        isolation = "read_committed" if read_committed else "read_uncommitted"
        pump.until(lambda: ends <= pump.positions(), f"a {isolation} reader of {topic} to reach the end markers")
        return pump.all_received()
    finally:
        reader.close()


def sentinels(adapter: TxnAdapter, topic: str, partitions: int) -> list[Rec]:
    """One plain record at the end of every partition, produced after every transaction ended."""
    return [r for p in range(partitions) for r in adapter.produce(topic, [(f"end-{p}", SENTINEL_VALUE)], partition=p)]


# -- assertions --------------------------------------------------------------------------------------------------


def assert_read_exactly(received: Sequence[Rec], expected: Iterable[Rec], reader: str) -> None:
    """Each expected record once, with its content, and nothing else (a control record would be something else)."""
    expected = list(expected)
    counts = Counter(received)
    twice = [r for r, n in counts.items() if n > 1]
    assert not twice, f"{reader} received records twice, e.g. {twice[:5]}"
    missing = set(expected) - set(counts)
    unexpected = set(counts) - set(expected)
    assert not missing and not unexpected, (
        f"{reader}: {len(missing)} expected records missing, e.g. {in_order(missing)[:5]}; "
        f"{len(unexpected)} unexpected records, e.g. {in_order(unexpected)[:5]}"
    )


def assert_one_marker_per_transaction(transactions: Sequence[Sequence[Rec]], ends: Sequence[Rec]) -> None:
    """In every partition, the end record's offset counts the data records before it plus one offset for the
    COMMIT/ABORT marker of each transaction that wrote to the partition (T36): markers take offsets, readers skip."""
    for end in ends:
        data = sum(1 for txn in transactions for r in txn if r.partition == end.partition)
        markers = sum(1 for txn in transactions if any(r.partition == end.partition for r in txn))
        assert end.offset == data + markers, (
            f"partition {end.partition}: end record at offset {end.offset}, "
            f"expected {data} data records + {markers} transaction markers before it"
        )


def wait_committed(adapter: TxnAdapter, group: str, topic: str, expected: dict[int, int], what: str) -> None:
    """The group's committed offsets become `expected` (a COMMIT marker is written after EndTxn answers, T29)."""
    seen: dict[str, dict[int, int]] = {}

    def reached() -> bool:
        seen["committed"] = adapter.committed_offsets(group, topic)
        return seen["committed"] == expected

    wait_until(reached, WAIT_S, interval_s=0.1, what=what, detail=lambda: f"committed {seen}, expected {expected}")


# -- the scenario ------------------------------------------------------------------------------------------------


def run_consume_transform_produce(adapter: TxnAdapter, prefix: str) -> None:
    """The scenario of the module docstring, with topics, group and transactional id unique to this run."""
    source, sink = unique(f"{prefix}-txn-in"), unique(f"{prefix}-txn-out")
    group, transactional_id = unique(f"{prefix}-txn-group"), unique(f"{prefix}-txn-id")
    adapter.create_topic(source, TXN_PARTITIONS)
    adapter.create_topic(sink, TXN_PARTITIONS)
    first = adapter.produce(source, keyed(0, BATCH))
    assert {r.partition for r in first} == set(range(TXN_PARTITIONS)), "the keys spread over every partition"

    # 1-2. One committed and one aborted transaction, both with the group's offsets.
    pipeline = adapter.pipeline(group, source, transactional_id, f"{prefix}-pipeline")
    try:
        consumed = consume_exactly(pipeline.consumer, first, "the pipeline to consume the first batch")
        committed = pipeline.transaction(consumed, sink, commit=True)
        second = adapter.produce(source, keyed(BATCH, BATCH))
        consumed = consume_exactly(pipeline.consumer, second, "the pipeline to consume the second batch")
        aborted = pipeline.transaction(consumed, sink, commit=False)
    finally:
        pipeline.close()

    # 3. The restarted pipeline resumes at the committed transaction's offsets and redoes the aborted batch.
    after_first = end_offsets(first)
    restarted = adapter.pipeline(group, source, transactional_id, f"{prefix}-pipeline-restarted")
    try:
        # Initialising the transactional id again waited for the abort to complete, markers included.
        assert adapter.committed_offsets(group, source) == after_first, "offsets of the aborted transaction"
        assert restarted.consumer.committed(range(TXN_PARTITIONS)) == after_first
        consumed = consume_exactly(restarted.consumer, second, "the restarted pipeline to consume the aborted batch")
        redone = restarted.transaction(consumed, sink, commit=True)
    finally:
        restarted.close()
    wait_committed(adapter, group, source, end_offsets(first, second), "the redone transaction's offsets")

    # 4-5. What each isolation level reads of the output.
    for produced, batch in ((committed, first), (aborted, second), (redone, second)):
        assert Counter((r.key, r.value) for r in produced) == Counter(transformed(r) for r in batch)
    ends = sentinels(adapter, sink, TXN_PARTITIONS)
    read = read_to_sentinels(adapter, sink, ends, read_committed=True, name=f"{prefix}-committed-reader")
    assert_read_exactly(read, [*committed, *redone, *ends], "the read_committed reader")
    read = read_to_sentinels(adapter, sink, ends, read_committed=False, name=f"{prefix}-uncommitted-reader")
    assert_read_exactly(read, [*committed, *aborted, *redone, *ends], "the read_uncommitted reader")
    assert_one_marker_per_transaction([committed, aborted, redone], ends)
