"""The transaction coordinator's structured events: one fact per state change, with ids (architecture.md 4.6).

The same catalogue style as the group coordinator's (`coordinator/events.py`, which this extends so the shared
runtime can report failed writes through it): `txn.state` for every completed transition (transactional id,
producer id and epoch, old and new state), `txn.fenced` / `txn.timed_out` / `txn.expired` for what the coordinator
does on its own, `txn.markers_*` for the marker hand-over to the broker, and `txn_log.*` for the
`__transaction_state` partitions. Events go to `structlog.get_logger("transaction_coordinator")` unless a logger
is injected (tests inject a recorder).
"""

from __future__ import annotations

from collections.abc import Iterable

import structlog

from coordinator.events import EventLogger, Events
from coordinator.offsets import TopicPartition


class TransactionEvents(Events):
    """Events of the transaction coordinator; each method is one event name."""

    __slots__ = ()

    def __init__(self, logger: EventLogger | None = None) -> None:
        super().__init__(logger if logger is not None else structlog.get_logger("transaction_coordinator"))

    # -- transactions ----------------------------------------------------------------------------------------

    def txn_state(
        self, transactional_id: str, producer_id: int, producer_epoch: int, old: str, new: str, partitions: int
    ) -> None:
        self._log.info(
            "txn.state",
            transactional_id=transactional_id,
            producer_id=producer_id,
            producer_epoch=producer_epoch,
            old_state=old,
            new_state=new,
            partitions=partitions,
        )

    def txn_fenced(self, transactional_id: str, producer_id: int, fenced_epoch: int, reason: str) -> None:
        """The producer's epoch was bumped to abort its transaction (re-initialisation or timeout, T14/T47)."""
        self._log.info(
            "txn.fenced",
            transactional_id=transactional_id,
            producer_id=producer_id,
            producer_epoch=fenced_epoch,
            reason=reason,
        )

    def txn_timed_out(self, transactional_id: str, producer_id: int, producer_epoch: int, timeout_ms: int) -> None:
        self._log.info(
            "txn.timed_out",
            transactional_id=transactional_id,
            producer_id=producer_id,
            producer_epoch=producer_epoch,
            timeout_ms=timeout_ms,
        )

    def txn_expired(self, transactional_id: str, producer_id: int, partition: int) -> None:
        self._log.info("txn.expired", transactional_id=transactional_id, producer_id=producer_id, partition=partition)

    def illegal_state(self, transactional_id: str, detail: str) -> None:
        """Kafka's IllegalStateException: a coordinator bug; the request answers UNKNOWN_SERVER_ERROR."""
        self._log.warning("txn.illegal_state", transactional_id=transactional_id, detail=detail)

    # -- markers ---------------------------------------------------------------------------------------------

    def markers_sent(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        result: str,
        partitions: Iterable[TopicPartition],
        reason: str,
    ) -> None:
        self._log.info(
            "txn.markers_sent",
            transactional_id=transactional_id,
            producer_id=producer_id,
            producer_epoch=producer_epoch,
            result=result,
            partitions=sorted(partitions),
            reason=reason,
        )

    def markers_failed(self, transactional_id: str, partitions: Iterable[TopicPartition], error: str) -> None:
        """Some markers could not be written; they are sent again after the retry backoff."""
        self._log.warning(
            "txn.markers_failed", transactional_id=transactional_id, partitions=sorted(partitions), error=error
        )

    def markers_abandoned(self, transactional_id: str, producer_id: int, error: str) -> None:
        """A newer producer epoch or coordinator owns the transaction (T34): its markers are no longer sent."""
        self._log.warning(
            "txn.markers_abandoned", transactional_id=transactional_id, producer_id=producer_id, error=error
        )

    # -- the log ---------------------------------------------------------------------------------------------

    def txn_partition_loading(self, partition: int) -> None:
        self._log.debug("txn_log.partition_loading", partition=partition)

    def txn_partition_loaded(self, partition: int, transactions: int, records: int, quarantined: int) -> None:
        level = self._log.info if transactions or quarantined else self._log.debug
        level(
            "txn_log.partition_loaded",
            partition=partition,
            transactions=transactions,
            records=records,
            quarantined=quarantined,
        )

    def txn_partition_load_failed(self, partition: int, reason: str) -> None:
        self._log.warning("txn_log.partition_load_failed", partition=partition, reason=reason)

    def txn_partition_unloaded(self, partition: int, transactions: int) -> None:
        level = self._log.info if transactions else self._log.debug
        level("txn_log.partition_unloaded", partition=partition, transactions=transactions)

    def record_quarantined(self, partition: int, transactional_id: str | None, reason: str) -> None:
        self._log.warning(
            "txn_log.record_quarantined", partition=partition, transactional_id=transactional_id, reason=reason
        )

    def append_failed(self, partition: int, purpose: str, error: str) -> None:
        self._log.warning("txn_log.append_failed", partition=partition, purpose=purpose, error=error)
