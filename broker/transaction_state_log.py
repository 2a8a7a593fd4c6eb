"""`__transaction_state` on the segment log: the transaction coordinator's `RecordLog` and its reader.

The same group-commit machinery as `__consumer_offsets` (`OffsetsLog`): the transaction coordinator hands over
typed records (`TxnRecord`), written here as Kafka's TransactionLogKey/Value bytes, one batch per flush and
partition, and the coordinator is told they are durable only after the write. Reading back decodes every record
with `decode_record`, which never raises: a record that does not decode comes back as a `DamagedTxnRecord`, which
the coordinator's loader quarantines and reports (Decision 9). Batches that fail their CRC never get here: the
segment reader skips and reports them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from broker.offsets_log import OffsetsLog
from coordinator.persistence import AppendCallback
from coordinator.records import TransactionMarker
from coordinator.transactions import DamagedTxnRecord, TxnRecord, decode_record, encode_record

TRANSACTION_STATE_TOPIC = "__transaction_state"


class TransactionStateLog(OffsetsLog):
    """The transaction coordinator's log: `__transaction_state`, written and read as Kafka does."""

    TOPIC = TRANSACTION_STATE_TOPIC
    EVENTS = "transaction_log"

    @staticmethod
    def _encode(record: Any) -> tuple[bytes, bytes | None]:
        return encode_record(record)

    def append_marker(self, partition: int, marker: TransactionMarker, on_durable: AppendCallback) -> None:
        """Never called: transaction markers go to data and `__consumer_offsets` partitions, not to this log."""
        raise NotImplementedError("__transaction_state holds no transaction markers")

    def leader_epoch(self, partition: int) -> int:
        """The partition's leader epoch: the coordinator epoch its markers carry once it is loaded (Kafka's
        coordinator epoch is the `__transaction_state` partition's leader epoch), so a leader change fences the
        markers of the node that led it before."""
        partition_log = self._logs.get(self.TOPIC, partition)
        return 0 if partition_log is None else partition_log.leader_epoch

    def read_transactions(self, partition: int) -> list[TxnRecord | DamagedTxnRecord]:
        return list(self.iter_transactions(partition))

    def iter_transactions(self, partition: int) -> Iterator[TxnRecord | DamagedTxnRecord]:
        """Every record of the partition in log order, decoded (or the damage, with its bytes and the reason)."""
        partition_log = self._logs.get(self.TOPIC, partition)
        if partition_log is None:
            return
        for batch in partition_log.iter_batches_from():
            if batch.is_control:
                continue
            for record in batch.records:
                yield decode_record(record.key, record.value)
