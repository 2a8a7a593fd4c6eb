"""Writing transitions to `__transaction_state` through the shared coordinator runtime (Kafka's
`TransactionStateManager.appendTransactionToLog`, T16, T52).

A prepared transit is one record on the id's partition. The runtime appends it, applies the write timeout and maps
a failed write to what the request answers (`append_error_to_response`: timeouts and missing replicas are
COORDINATOR_NOT_AVAILABLE, a lost partition or storage error NOT_COORDINATOR, a record too large
UNKNOWN_SERVER_ERROR). Then, as Kafka's callback does:

* durable, and the metadata is still the cached one: the transition completes (and `txn.state` is logged);
  durable but the partition was unloaded or reloaded meanwhile: NOT_COORDINATOR;
* failed: the pending state is cleared so the id can be used again, unless the caller will retry the same write
  (`keep_pending_on_error`, the CompleteCommit/CompleteAbort write);

and only then does the caller's continuation run with the outcome. Continuations run inside the runtime's
callback; they may start further writes but must not expect them to be durable on return.
"""

from __future__ import annotations

from collections.abc import Callable

from coordinator.result import CoordinatorResult
from coordinator.runtime import CoordinatorRuntime
from coordinator.transactions.cache import TransactionCache
from coordinator.transactions.events import TransactionEvents
from coordinator.transactions.metadata import IllegalTransitionError, TransactionMetadata, TxnTransit
from coordinator.transactions.records import TxnRecord, transit_record
from protocol.errors import ErrorCode
from protocol.transaction_log import TRANSACTION_LOG_VALUE_VERSION

Then = Callable[[ErrorCode], None]
"""A continuation: called once with an operation's outcome (NONE or the error the request answers)."""


class TransactionLog:
    """Appends transits (and tombstones) and applies their outcome to the cached metadata."""

    __slots__ = ("_cache", "_events", "_runtime", "_value_version")

    def __init__(
        self,
        runtime: CoordinatorRuntime[TxnRecord],
        cache: TransactionCache,
        events: TransactionEvents,
        value_version: int = TRANSACTION_LOG_VALUE_VERSION,
    ) -> None:
        """`value_version`: the TransactionLogValue version written (T51: 1 from `transaction.version` 1 on, else
        0, which has no previous/next producer ids nor client transaction version)."""
        self._runtime = runtime
        self._cache = cache
        self._events = events
        self._value_version = value_version

    def append(
        self,
        metadata: TransactionMetadata,
        transit: TxnTransit,
        then: Then,
        *,
        keep_pending_on_error: bool = False,
    ) -> None:
        """Write `transit` (prepared on `metadata`), complete or undo it, then call `then` with the outcome."""

        def on_append(error: ErrorCode) -> None:
            if error == ErrorCode.NONE:
                error = self._complete(metadata, transit)
            elif self._cache.is_current(metadata) and not keep_pending_on_error:
                metadata.pending_state = None
            then(error)

        record = transit_record(metadata.transactional_id, transit, self._value_version)
        self._write([record], metadata, transit.state.state_name, on_append)

    def append_records(self, partition: int, records: list[TxnRecord], purpose: str, on_append: Then) -> None:
        """Write records that are not one id's transition (expiration tombstones); `on_append` gets the outcome."""
        self._runtime.write(CoordinatorResult(records, None, partition, purpose, on_append))

    def _write(self, records: list[TxnRecord], metadata: TransactionMetadata, what: str, on_append: Then) -> None:
        partition = self._cache.partition_for(metadata.transactional_id)
        purpose = f"txn {metadata.transactional_id} {what}"
        self._runtime.write(CoordinatorResult(records, None, partition, purpose, on_append))

    def _complete(self, metadata: TransactionMetadata, transit: TxnTransit) -> ErrorCode:
        if not self._cache.is_current(metadata):
            return ErrorCode.NOT_COORDINATOR
        try:
            old = metadata.complete_transition(transit)
        except IllegalTransitionError as exc:
            metadata.pending_state = None
            self._events.illegal_state(metadata.transactional_id, str(exc))
            return ErrorCode.UNKNOWN_SERVER_ERROR
        self._events.txn_state(
            metadata.transactional_id,
            metadata.producer_id,
            metadata.producer_epoch,
            old.state_name,
            metadata.state.state_name,
            len(metadata.partitions),
        )
        return ErrorCode.NONE
