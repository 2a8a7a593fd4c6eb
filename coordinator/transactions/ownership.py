"""Owning `__transaction_state` partitions: loading them, resuming their decided transactions, unloading them
(Kafka's `onElection` / `onResignation`, T3, T53, T55).

Loading replays the records (`loader.py`), installs the ids, and for every transaction whose outcome was written
(PrepareCommit or PrepareAbort) prepares the completion and hands its markers to the broker again: a transaction
decided before a crash completes after the restart. Ongoing transactions are left to the timeout scan. A load that
cannot finish (the reader raises) leaves the partition FAILED (NOT_COORDINATOR for its ids, the reason kept for
the control API), as the group coordinator does; other partitions are not affected. Unloading drops the ids,
cancels their markers and fails their in-flight writes with NOT_COORDINATOR.
"""

from __future__ import annotations

from collections.abc import Iterable

from coordinator.partitions import PartitionStatus
from coordinator.runtime import CoordinatorRuntime
from coordinator.transactions.housekeeping import Housekeeping
from coordinator.transactions.loader import replay
from coordinator.transactions.metadata import IllegalTransitionError
from coordinator.transactions.parts import TxnParts
from coordinator.transactions.records import DamagedTxnRecord, TxnRecord
from protocol.errors import ErrorCode


class PartitionOwnership:
    """Begin, finish, fail and undo the loading of `__transaction_state` partitions."""

    __slots__ = ("_housekeeping", "_parts", "_quarantined", "_runtime")

    def __init__(self, parts: TxnParts, runtime: CoordinatorRuntime[TxnRecord], housekeeping: Housekeeping) -> None:
        self._parts = parts
        self._runtime = runtime
        self._housekeeping = housekeeping
        self._quarantined: dict[int, list[DamagedTxnRecord]] = {}

    def begin_loading(self, partition: int) -> None:
        cache = self._parts.cache
        cache.check_partition(partition)
        status = cache.status(partition)
        if status is not None and status is not PartitionStatus.FAILED:
            raise ValueError(f"partition {partition} is already {status.value}")
        cache.mark_loading(partition)
        self._parts.events.txn_partition_loading(partition)

    def load_partition(
        self, partition: int, records: Iterable[TxnRecord | DamagedTxnRecord], coordinator_epoch: int
    ) -> bool:
        """Replay and serve `partition`; False (and FAILED) when that cannot finish. `records` may be lazy."""
        parts = self._parts
        parts.cache.check_partition(partition)
        if parts.cache.status(partition) is PartitionStatus.ACTIVE:
            raise ValueError(f"partition {partition} is already loaded")
        try:
            loaded = replay(partition, records, parts.cache, parts.events)
        except Exception as exc:  # a reader that fails fails this partition's load only
            self.fail_loading(partition, repr(exc))
            return False
        parts.cache.activate(partition, loaded.transactions, coordinator_epoch)
        self._quarantined[partition] = loaded.quarantined
        self._housekeeping.start()
        parts.events.txn_partition_loaded(partition, len(loaded.transactions), loaded.records, len(loaded.quarantined))
        for txn in loaded.transactions.values():
            if txn.state.is_prepare:
                try:
                    complete = txn.prepare_complete(parts.time.wall_ms)
                except IllegalTransitionError as exc:
                    parts.events.illegal_state(txn.transactional_id, str(exc))
                    continue
                parts.markers.send(txn, complete, "loaded")
        return True

    def fail_loading(self, partition: int, reason: str) -> None:
        self._parts.cache.check_partition(partition)
        self._parts.cache.mark_failed(partition, reason)
        self._parts.events.txn_partition_load_failed(partition, reason)

    def unload_partition(self, partition: int) -> None:
        parts = self._parts
        transactions = parts.cache.forget(partition)
        if transactions is None:
            return
        self._quarantined.pop(partition, None)
        parts.markers.cancel_partition(partition)
        self._runtime.fail_partition(partition, ErrorCode.NOT_LEADER_OR_FOLLOWER)
        if not parts.cache.partitions():
            self._housekeeping.stop()
        parts.events.txn_partition_unloaded(partition, transactions)

    def shutdown(self) -> None:
        for partition in self._parts.cache.partitions():
            self.unload_partition(partition)
        self._parts.cache.deactivate()

    def quarantined(self) -> dict[int, list[DamagedTxnRecord]]:
        """Per loaded partition, the records its load set aside (Decision 9)."""
        return {p: list(q) for p, q in sorted(self._quarantined.items()) if q}
