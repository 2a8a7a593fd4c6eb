"""What the coordinator does on its own, on the injected clock (Kafka's "transaction-abort" and
"transactionalId-expiration" scheduler tasks, T46-T48).

* Every `transaction.abort.timed.out.transaction.cleanup.interval.ms`: each Ongoing transaction with no pending
  transition whose `start + timeout < now` (strict, wall clock, as persisted) is fenced (epoch + 1) and aborted with
  that epoch: PrepareAbort, markers, CompleteAbort. Its producer's next request is fenced (T47).
* Every `transaction.remove.expired.transaction.cleanup.interval.ms`: each id in Empty/CompleteCommit/CompleteAbort
  with no pending transition and `last update <= now - transactional.id.expiration.ms` goes pending Dead; the
  partition's tombstones are written together, and once durable the ids leave the cache (a later InitProducerId
  starts over with a new producer id). A failed tombstone write leaves the ids as they were.

Both run while at least one partition is owned, first one interval after the first load, as Kafka schedules them
at startup with their interval as initial delay.
"""

from __future__ import annotations

from coordinator.transactions.end_txn import end_transaction
from coordinator.transactions.markers import TransactionResult
from coordinator.transactions.metadata import TransactionMetadata, TxnTransit
from coordinator.transactions.parts import TxnParts
from coordinator.transactions.records import tombstone
from coordinator.transactions.state import TransactionState
from protocol.errors import ErrorCode

INT32_MAX = 2**31 - 1
"""A two-phase-commit transaction's timeout (KIP-939): never aborted by the coordinator."""
ABORT_KEY = ("txn", "abort-timed-out")
EXPIRE_KEY = ("txn", "expire-ids")
#: Tombstones per write (Kafka fills batches up to the partition's message size; a tombstone is ~40 bytes).
TOMBSTONES_PER_WRITE = 1000


class Housekeeping:
    """The two periodic scans."""

    __slots__ = ("_parts",)

    def __init__(self, parts: TxnParts) -> None:
        self._parts = parts

    def start(self) -> None:
        now = self._parts.time.now_ms
        config = self._parts.config
        timer = self._parts.timer
        timer.schedule_if_absent(ABORT_KEY, now + config.abort_timed_out_transactions_interval_ms, self._abort_scan)
        timer.schedule_if_absent(
            EXPIRE_KEY, now + config.remove_expired_transactional_ids_interval_ms, self._expire_scan
        )

    def stop(self) -> None:
        self._parts.timer.cancel(ABORT_KEY)
        self._parts.timer.cancel(EXPIRE_KEY)

    # -- timed-out transactions ------------------------------------------------------------------------------

    def _abort_scan(self) -> None:
        parts = self._parts
        parts.timer.schedule(
            ABORT_KEY, parts.time.now_ms + parts.config.abort_timed_out_transactions_interval_ms, self._abort_scan
        )
        now = parts.time.wall_ms
        timed_out = [
            txn
            for txn in parts.cache.all_transactions()
            if txn.pending_state is None
            and txn.state is TransactionState.ONGOING
            and txn.timeout_ms != INT32_MAX
            and txn.start_timestamp_ms + txn.timeout_ms < now
        ]
        for txn in timed_out:
            self.abort_timed_out(txn)

    def abort_timed_out(self, txn: TransactionMetadata) -> None:
        """T47: fence the producer and abort its transaction (also the toolkit's "expire this transaction")."""
        parts = self._parts
        if (
            not parts.cache.is_current(txn)
            or txn.pending_state is not None
            or txn.state is not TransactionState.ONGOING
        ):
            return
        parts.events.txn_timed_out(txn.transactional_id, txn.producer_id, txn.producer_epoch, txn.timeout_ms)
        fence = txn.prepare_fence_producer_epoch()
        parts.events.txn_fenced(txn.transactional_id, fence.producer_id, fence.producer_epoch, "timeout")
        end_transaction(
            parts,
            txn.transactional_id,
            fence.producer_id,
            fence.producer_epoch,
            TransactionResult.ABORT,
            from_client=False,
            transaction_version=parts.config.transaction_version,  # the server's, as Kafka's internal aborts
            then=lambda _error, _producer_id, _epoch: None,  # the outcome is in the events (txn.state, append_failed)
        )

    # -- expired transactional ids ---------------------------------------------------------------------------

    def _expire_scan(self) -> None:
        parts = self._parts
        parts.timer.schedule(
            EXPIRE_KEY, parts.time.now_ms + parts.config.remove_expired_transactional_ids_interval_ms, self._expire_scan
        )
        horizon = parts.time.wall_ms - parts.config.transactional_id_expiration_ms
        for partition in parts.cache.partitions():
            expired = [
                (txn, txn.prepare_dead())
                for txn in parts.cache.transactions(partition)
                if txn.pending_state is None
                and txn.state.expiration_allowed
                and txn.last_update_timestamp_ms <= horizon
            ]
            for start in range(0, len(expired), TOMBSTONES_PER_WRITE):
                self._write_tombstones(partition, expired[start : start + TOMBSTONES_PER_WRITE])

    def _write_tombstones(self, partition: int, expired: list[tuple[TransactionMetadata, TxnTransit]]) -> None:
        parts = self._parts

        def written(error: ErrorCode) -> None:
            for txn, dead in expired:
                gone = (
                    error == ErrorCode.NONE
                    and parts.cache.is_current(txn)
                    and txn.pending_state is TransactionState.DEAD
                    and txn.producer_epoch == dead.producer_epoch
                )
                if gone:
                    parts.cache.remove(txn)
                    parts.events.txn_expired(txn.transactional_id, txn.producer_id, partition)
                elif txn.pending_state is TransactionState.DEAD:
                    txn.pending_state = None

        records = [tombstone(txn.transactional_id) for txn, _ in expired]
        parts.log.append_records(partition, records, "expired transactional ids", written)
