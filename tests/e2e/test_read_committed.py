"""confluent-kafka (librdkafka) consumers with `isolation.level=read_committed` and `read_uncommitted` against the
broker process, over a partition holding committed, aborted and open transactions (T41-T43).

The transactional producer side needs the transaction coordinator (another part of issue #15), so the partition is
written through the storage API while the broker is down: transactional batches as a producer sends them and the
COMMIT/ABORT markers the coordinator writes. What the consumers see is then entirely the broker's doing: Fetch up to
the last stable offset with the aborted transactions (librdkafka drops their records itself), ListOffsets by
isolation level, and an open transaction that holds the LSO across a restart (and a kill -9 right after a
transactional Produce over the wire) until its marker is written.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest
from confluent_kafka import Consumer, TopicPartition

from broker.config import BrokerConfig
from protocol.control_records import ControlRecordType, EndTxnMarker
from protocol.errors import ErrorCode
from protocol.records import Record, RecordBatch, encode_batch
from storage.log_manager import LogManager
from storage.partition_log import PartitionLog
from tests.broker.wire import WireClient
from tests.e2e.scenario import assert_broker_accepted_every_request
from tests.support.broker_process import running_broker, wait_until
from tests.support.data_plane import batch, produce

pytestmark = pytest.mark.integration

TOPIC = "txn-view"
NOW = 1_700_000_000_000
ABORTED, COMMITTED, OPEN = 1000, 2000, 3000  # producer ids


def _batch(*values: bytes, producer: tuple[int, int] | None = None) -> bytes:
    """A batch as a producer sends it: transactional (producer id, sequence) when ``producer`` is given."""
    records = [Record(offset_delta=i, timestamp_delta=0, key=None, value=v) for i, v in enumerate(values)]
    pid, seq = producer if producer is not None else (-1, -1)
    return encode_batch(
        RecordBatch.from_records(
            records,
            base_timestamp=NOW,
            producer_id=pid,
            producer_epoch=0 if producer is not None else -1,
            base_sequence=seq,
            is_transactional=producer is not None,
        )
    )


def _open_partition(data_dir: Path) -> tuple[LogManager, PartitionLog]:
    logs = LogManager([data_dir], node_id=BrokerConfig({}).node_id)
    if logs.topic(TOPIC) is None:
        logs.create_topic(TOPIC, 1, {})
    log = logs.get(TOPIC, 0)
    assert log is not None
    return logs, log


def _write_transactions(data_dir: Path) -> None:
    logs, log = _open_partition(data_dir)
    for data in (
        _batch(b"plain-0"),  # 0
        _batch(b"aborted-1", b"aborted-2", producer=(ABORTED, 0)),  # 1-2
        _batch(b"committed-3", producer=(COMMITTED, 0)),  # 3
    ):
        log.append(data, now_ms=NOW)
    log.append_end_txn_marker(ABORTED, 0, EndTxnMarker(ControlRecordType.ABORT, 0), now_ms=NOW)  # 4
    log.append(_batch(b"plain-5"), now_ms=NOW)  # 5
    log.append_end_txn_marker(COMMITTED, 0, EndTxnMarker(ControlRecordType.COMMIT, 0), now_ms=NOW)  # 6
    log.append(_batch(b"open-7", producer=(OPEN, 0)), now_ms=NOW)  # 7: no marker yet
    log.append(_batch(b"plain-8"), now_ms=NOW)  # 8
    logs.close()


def _commit_open_transaction(data_dir: Path) -> None:
    logs, log = _open_partition(data_dir)
    log.append_end_txn_marker(OPEN, 0, EndTxnMarker(ControlRecordType.COMMIT, 0), now_ms=NOW)  # 9
    logs.close()


def _consumer(bootstrap: str, isolation: str) -> Consumer:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"view-{uuid.uuid4().hex[:8]}",
            "enable.auto.commit": False,
            "isolation.level": isolation,
        }
    )
    consumer.assign([TopicPartition(TOPIC, 0, 0)])
    return consumer


def _values(consumer: Consumer, count: int) -> list[tuple[int, bytes]]:
    """The first ``count`` records the consumer delivers, as (offset, value)."""
    got: list[tuple[int, bytes]] = []

    def more() -> bool:
        message = consumer.poll(0.2)
        if message is not None:
            assert message.error() is None, message.error()
            got.append((message.offset(), message.value()))
        return len(got) >= count

    wait_until(more, what=f"{count} records", detail=lambda: f"got {got}")
    return got


def test_read_committed_consumers_see_only_committed_records_up_to_the_lso(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    _write_transactions(data_dir)
    with running_broker(data_dir) as broker:
        committed = _consumer(broker.bootstrap, "read_committed")
        everything = _consumer(broker.bootstrap, "read_uncommitted")
        try:
            # librdkafka drops the aborted transaction's records using the Fetch's aborted-transaction list, and
            # reads nothing at or after the LSO (7: the open transaction).
            assert _values(committed, 3) == [(0, b"plain-0"), (3, b"committed-3"), (5, b"plain-5")]
            assert [v for _, v in _values(everything, 7)] == [
                b"plain-0",
                b"aborted-1",
                b"aborted-2",
                b"committed-3",
                b"plain-5",
                b"open-7",
                b"plain-8",
            ]
            # ListOffsets by isolation level (T43): the LSO for read_committed, the high watermark otherwise.
            partition = TopicPartition(TOPIC, 0)
            assert committed.get_watermark_offsets(partition, timeout=10, cached=False) == (0, 7)
            assert everything.get_watermark_offsets(partition, timeout=10, cached=False) == (0, 9)
        finally:
            committed.close()
            everything.close()
        assert_broker_accepted_every_request(broker, "confluent-kafka")
        broker.stop()
        # The open transaction is still open after the restart; its COMMIT marker is what releases it.
        broker.start()
        held = _consumer(broker.bootstrap, "read_committed")
        try:
            assert held.get_watermark_offsets(TopicPartition(TOPIC, 0), timeout=10, cached=False) == (0, 7)
        finally:
            held.close()
        broker.stop()
        _commit_open_transaction(data_dir)
        broker.start()
        released = _consumer(broker.bootstrap, "read_committed")
        try:
            assert [v for _, v in _values(released, 5)] == [
                b"plain-0",
                b"committed-3",
                b"plain-5",
                b"open-7",
                b"plain-8",
            ]
        finally:
            released.close()
        assert_broker_accepted_every_request(broker, "confluent-kafka")


async def _produce_transactional(port: int) -> None:
    """One transactional batch over the wire, as a transactional producer sends it (Produce with its id)."""
    client = await WireClient.connect(port)
    try:
        records = batch(b"in-flight", producer_id=OPEN, epoch=0, sequence=0, transactional=True)
        result = await produce(client, TOPIC, records, transactional_id="e2e-txn")
        assert (result.error_code, result.base_offset) == (ErrorCode.NONE, 1)
    finally:
        await client.close()


def test_kill_9_mid_transaction_keeps_it_open(tmp_path: Path) -> None:
    """A transaction with no marker when the broker is killed is open again after the restart: read_committed
    consumers stay below it (the producer's coordinator will abort or commit it), others read it."""
    data_dir = tmp_path / "data"
    logs, log = _open_partition(data_dir)
    log.append(_batch(b"before"), now_ms=NOW)  # 0
    logs.close()
    # the producer here is written by hand, not a transaction coordinator's, so the broker does not ask it
    with running_broker(data_dir, {"transaction.partition.verification.enable": "false"}) as broker:
        asyncio.run(_produce_transactional(broker.port))  # 1
        broker.kill()
        broker.start()
        committed = _consumer(broker.bootstrap, "read_committed")
        everything = _consumer(broker.bootstrap, "read_uncommitted")
        try:
            partition = TopicPartition(TOPIC, 0)
            assert committed.get_watermark_offsets(partition, timeout=10, cached=False) == (0, 1)
            assert _values(committed, 1) == [(0, b"before")]
            assert _values(everything, 2) == [(0, b"before"), (1, b"in-flight")]
        finally:
            committed.close()
            everything.close()
        assert_broker_accepted_every_request(broker, "confluent-kafka")
