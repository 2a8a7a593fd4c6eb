"""Writing transaction markers: what a partition leader does on WriteTxnMarkers, called in-process (T33-T35, T38).

When a transaction commits or aborts, its coordinator writes a COMMIT or ABORT marker to every partition the
transaction wrote to. In Kafka that is a WriteTxnMarkers request to each partition's leader; here the coordinator
and every partition live in this process, so it is a call: :meth:`TxnMarkerWriter.write` appends the marker
(:meth:`storage.partition_log.PartitionLog.append_end_txn_marker`), which closes the producer's transaction on the
partition (the last stable offset moves past it; an abort is indexed for read_committed consumers), and wakes the
fetches waiting on the partition.

The answer is the error code Kafka's leader puts in the WriteTxnMarkers response for the partition:
UNKNOWN_TOPIC_OR_PARTITION for a partition not here, INVALID_PRODUCER_EPOCH or TRANSACTION_COORDINATOR_FENCED for a
marker older than the producer's or coordinator's current epoch (the coordinator stops sending it, T34),
KAFKA_STORAGE_ERROR when the disk refuses the write (the coordinator retries).

``__consumer_offsets`` partitions are not special here; the group coordinator must also see the marker (T35, T64),
in log order with its own queued writes, which is for the caller to arrange.
"""

from __future__ import annotations

from collections.abc import Callable

import structlog

from broker.fetch_purgatory import FetchPurgatory
from protocol.control_records import ControlRecordType, EndTxnMarker
from protocol.errors import ErrorCode
from storage.errors import StorageError
from storage.log_manager import LogManager

__all__ = ["TxnMarkerWriter"]

log = structlog.get_logger("broker.txn_markers")


class TxnMarkerWriter:
    def __init__(self, logs: LogManager, fetches: FetchPurgatory, wall_ms: Callable[[], int]) -> None:
        self._logs = logs
        self._fetches = fetches
        self._wall_ms = wall_ms

    def write(
        self,
        topic: str,
        partition: int,
        *,
        producer_id: int,
        producer_epoch: int,
        coordinator_epoch: int,
        commit: bool,
        transaction_version: int = 0,
    ) -> ErrorCode:
        """Append the marker of ``producer_id``'s transaction to the partition; the partition's error code.
        ``transaction_version`` 2: the marker's epoch was bumped by the EndTxn and must be above the producer's."""
        partition_log = self._logs.get(topic, partition)
        if partition_log is None:
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        kind = ControlRecordType.COMMIT if commit else ControlRecordType.ABORT
        fields = {
            "topic": topic,
            "partition": partition,
            "producer_id": producer_id,
            "producer_epoch": producer_epoch,
            "coordinator_epoch": coordinator_epoch,
            "result": kind.name,
        }
        now = self._wall_ms()
        try:
            written = partition_log.append_end_txn_marker(
                producer_id,
                producer_epoch,
                EndTxnMarker(kind, coordinator_epoch),
                now_ms=now,
                transaction_version=transaction_version,
            )
            partition_log.flush_if_due(now)
        except StorageError as exc:
            log.warning("txn_marker.refused", **fields, code=ErrorCode(exc.error_code).name, reason=str(exc))
            return ErrorCode(exc.error_code)
        log.debug("txn_marker.written", **fields, offset=written.base_offset)
        self._fetches.on_append(topic, partition)
        return ErrorCode.NONE
