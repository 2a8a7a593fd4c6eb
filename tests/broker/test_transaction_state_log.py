"""`__transaction_state` on the segment log: what the transaction coordinator writes is read back as it wrote it,
and a record that does not decode comes back as damage with its reason instead of stopping the read."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from broker.transaction_state_log import TRANSACTION_STATE_TOPIC, TransactionStateLog
from coordinator.transactions import DamagedTxnRecord, TxnRecord, encode_record
from coordinator.transactions.records import tombstone
from protocol.errors import ErrorCode
from protocol.messages.transaction_log_value import PartitionsSchema, TransactionLogValue
from protocol.records import Record, RecordBatch, encode_batch
from storage.log_manager import LogManager
from storage.partition_log import AppendOrigin


def _log(tmp_path: Path) -> tuple[LogManager, TransactionStateLog, list[Callable[[], None]]]:
    logs = LogManager([tmp_path], node_id=1, now_ms=0)
    logs.create_topic(TRANSACTION_STATE_TOPIC, 2, {"cleanup.policy": "compact"})
    scheduled: list[Callable[[], None]] = []

    def deliver(outcomes: list[tuple[Callable[[ErrorCode], None], ErrorCode]]) -> None:
        for callback, error in outcomes:
            callback(error)

    return logs, TransactionStateLog(logs, lambda: 1_700_000_000_000, scheduled.append, deliver), scheduled


def _ongoing(transactional_id: str) -> TxnRecord:
    value = TransactionLogValue(
        producer_id=7,
        producer_epoch=3,
        transaction_timeout_ms=60_000,
        transaction_status=1,
        transaction_partitions=[PartitionsSchema(topic="orders", partition_ids=[0, 2])],
        transaction_last_update_timestamp_ms=1_700_000_000_000,
        transaction_start_timestamp_ms=1_700_000_000_000,
    )
    return TxnRecord(transactional_id, value)


def test_records_written_are_read_back_in_order_tombstones_included(tmp_path: Path) -> None:
    logs, txn_log, scheduled = _log(tmp_path)
    outcomes: list[ErrorCode] = []
    written = [_ongoing("payments"), tombstone("stale")]
    txn_log.append(1, written, outcomes.append)
    for flush in scheduled:
        flush()
    assert outcomes == [ErrorCode.NONE]
    assert txn_log.read_transactions(1) == written
    assert txn_log.read_transactions(0) == []
    logs.close()


def test_a_record_that_does_not_decode_comes_back_as_damage(tmp_path: Path) -> None:
    logs, txn_log, _scheduled = _log(tmp_path)
    key, value = encode_record(_ongoing("payments"))
    broken = RecordBatch.from_records(
        [
            Record(key=b"\x00\x07garbage", value=b"\x00", timestamp_delta=0, offset_delta=0),
            Record(key=key, value=value, timestamp_delta=0, offset_delta=1),
        ],
        base_timestamp=1_700_000_000_000,
    )
    partition_log = logs.get(TRANSACTION_STATE_TOPIC, 0)
    assert partition_log is not None
    partition_log.append(encode_batch(broken), now_ms=1_700_000_000_000, origin=AppendOrigin.COORDINATOR)
    damaged, good = txn_log.read_transactions(0)
    assert isinstance(damaged, DamagedTxnRecord) and damaged.reason
    assert good == _ongoing("payments")
    logs.close()
