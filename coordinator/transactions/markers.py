"""Transaction markers: Kafka's TransactionMarkerChannelManager contract, minus the network (T32-T34, T55).

Once PrepareCommit or PrepareAbort is durable the outcome is decided. The coordinator then hands the broker one
`TxnMarkers` through its `MarkerSink`: the broker writes a COMMIT or ABORT control batch (producer id and epoch of
the transaction, the coordinator epoch in the marker value) to every partition named, including
`__consumer_offsets` partitions, where it also tells the group coordinator to materialise or drop the pending
transactional offsets. Then it calls `TransactionCoordinator.markers_written(markers, now_ms, errors=...)` with the
error of each partition that failed (every partition not named was written). The coordinator, per partition, as
Kafka's `TransactionMarkerRequestCompletionHandler` does:

* NONE, UNSUPPORTED_FOR_MESSAGE_FORMAT, UNSUPPORTED_VERSION: done with that partition (a deleted topic's partition
  should be reported written: Kafka drops partitions whose topic no longer exists);
* INVALID_PRODUCER_EPOCH, TRANSACTION_COORDINATOR_FENCED: a newer producer epoch or coordinator owns the
  transaction: stop sending its markers (the id stays in PrepareX with CompleteX pending, as in Kafka);
* anything else (NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION, NOT_ENOUGH_REPLICAS, REQUEST_TIMED_OUT,
  KAFKA_STORAGE_ERROR, COORDINATOR_LOAD_IN_PROGRESS from the group coordinator, ...): a new `TxnMarkers` for the
  failed partitions only is sent after `retry_backoff_ms`.

When no partition is left the CompleteCommit/CompleteAbort record is written; if that write fails it is retried
after the backoff for as long as the partition is owned (Kafka retries only COORDINATOR_NOT_AVAILABLE and leaves a
storage error to the next leader; a single broker has no next leader, so it retries every error). Unloading the
partition cancels everything; a late answer for markers that are no longer pending is ignored.

`MarkerSink.send` runs inside a coordinator call: it must only queue the work (never call back into the
coordinator synchronously), and the broker must eventually answer every `TxnMarkers` exactly once.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Protocol

from coordinator.offsets import TopicPartition
from coordinator.time_register import TimeRegister
from coordinator.timer import Timer
from coordinator.transactions.cache import TransactionCache
from coordinator.transactions.events import TransactionEvents
from coordinator.transactions.log import TransactionLog
from coordinator.transactions.metadata import TransactionMetadata, TxnTransit
from coordinator.transactions.state import TransactionState
from protocol.errors import ErrorCode


class TransactionResult(enum.IntEnum):
    """A transaction's outcome; the values are Kafka's control record types (`ControlRecordType`)."""

    ABORT = 0
    COMMIT = 1


@dataclass(frozen=True, slots=True)
class TxnMarkers:
    """The markers one decided transaction needs (one WriteTxnMarkers entry in Kafka)."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    coordinator_epoch: int
    """The `__transaction_state` partition's epoch when it was loaded; goes into each marker's value (T36)."""
    result: TransactionResult
    partitions: tuple[TopicPartition, ...]
    """Sorted; a retry names only the partitions that failed."""
    transaction_version: int = 0
    """The transaction's version, 0 or 2 (WriteTxnMarkers v2's per-marker field); at 2 `producer_epoch` is the
    epoch the outcome bumped to (T71)."""

    @property
    def committed(self) -> bool:
        return self.result is TransactionResult.COMMIT

    def same_transaction(self, other: TxnMarkers) -> bool:
        return (
            self.transactional_id == other.transactional_id
            and self.producer_id == other.producer_id
            and self.producer_epoch == other.producer_epoch
            and self.coordinator_epoch == other.coordinator_epoch
            and self.result is other.result
        )


class MarkerSink(Protocol):
    """The broker's side: takes markers to write (queue them; answer with `markers_written` later)."""

    def send(self, markers: TxnMarkers) -> None: ...


#: Partitions that will never take a marker: Kafka forgets them rather than retry forever.
_DROPPED = frozenset({ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT, ErrorCode.UNSUPPORTED_VERSION})
#: Someone newer owns the transaction: stop sending its markers.
_ABANDON = frozenset({ErrorCode.INVALID_PRODUCER_EPOCH, ErrorCode.TRANSACTION_COORDINATOR_FENCED})


def result_of(state: TransactionState) -> TransactionResult:
    return TransactionResult.COMMIT if state is TransactionState.PREPARE_COMMIT else TransactionResult.ABORT


@dataclass(slots=True)
class _Pending:
    """A decided transaction whose markers or completion are still to be written (Kafka's PendingCompleteTxn)."""

    metadata: TransactionMetadata
    complete: TxnTransit
    markers: TxnMarkers
    unwritten: set[TopicPartition]
    failed: set[TopicPartition] = field(default_factory=set)
    completing: bool = False
    """The completion record is being written (a repeated answer must not write it twice)."""


def _retry_key(transactional_id: str) -> tuple[str, str, str]:
    return ("txn", "markers-retry", transactional_id)


class MarkerChannel:
    """Hands markers to the broker, tracks their answers, writes the completion."""

    __slots__ = ("_backoff_ms", "_cache", "_events", "_log", "_pending", "_sink", "_time", "_timer")

    def __init__(
        self,
        sink: MarkerSink,
        cache: TransactionCache,
        log: TransactionLog,
        timer: Timer,
        time: TimeRegister,
        events: TransactionEvents,
        backoff_ms: int,
    ) -> None:
        self._sink = sink
        self._cache = cache
        self._log = log
        self._timer = timer
        self._time = time
        self._events = events
        self._backoff_ms = backoff_ms
        self._pending: dict[str, _Pending] = {}

    def send(self, metadata: TransactionMetadata, complete: TxnTransit, reason: str) -> None:
        """The outcome in `metadata` (PrepareCommit/PrepareAbort) is durable and `complete` is prepared on it:
        write the markers (Kafka's `addTxnMarkersToSend`)."""
        partition = self._cache.partition_for(metadata.transactional_id)
        markers = TxnMarkers(
            transactional_id=metadata.transactional_id,
            producer_id=metadata.producer_id,
            producer_epoch=metadata.producer_epoch,
            coordinator_epoch=self._cache.coordinator_epoch(partition),
            result=result_of(metadata.state),
            partitions=tuple(sorted(metadata.partitions)),
            transaction_version=metadata.client_transaction_version,
        )
        pending = _Pending(metadata, complete, markers, set(markers.partitions))
        self._pending[metadata.transactional_id] = pending
        if not markers.partitions:
            self._write_completion(pending)
            return
        self._events.markers_sent(
            markers.transactional_id,
            markers.producer_id,
            markers.producer_epoch,
            markers.result.name,
            markers.partitions,
            reason,
        )
        self._sink.send(markers)

    def written(self, markers: TxnMarkers, errors: Mapping[TopicPartition, ErrorCode]) -> None:
        """The broker's answer for `markers` (see the module docstring)."""
        pending = self._pending.get(markers.transactional_id)
        if pending is None or not pending.markers.same_transaction(markers):
            return
        failed: dict[ErrorCode, list[TopicPartition]] = {}
        for tp in markers.partitions:
            error = errors.get(tp, ErrorCode.NONE)
            if error == ErrorCode.NONE or error in _DROPPED:
                pending.unwritten.discard(tp)
            elif error in _ABANDON:
                self._abandon(pending, error)
                return
            elif tp in pending.unwritten:
                failed.setdefault(error, []).append(tp)
        for error, partitions in failed.items():
            self._events.markers_failed(markers.transactional_id, partitions, error.name)
            pending.failed.update(partitions)
        if pending.failed:
            key = _retry_key(markers.transactional_id)
            self._timer.schedule_if_absent(
                key, self._time.now_ms + self._backoff_ms, lambda: self._resend(markers.transactional_id, pending)
            )
        elif not pending.unwritten and not pending.completing:
            self._write_completion(pending)

    def pending_markers(self) -> list[TxnMarkers]:
        """The markers still to be written, per transaction (the partitions not yet answered as written)."""
        return [
            replace(p.markers, partitions=tuple(sorted(p.unwritten)))
            for _, p in sorted(self._pending.items())
            if p.unwritten
        ]

    def cancel_partition(self, partition: int) -> None:
        """T55: the partition was unloaded; its transactions' markers are no longer this coordinator's job."""
        for transactional_id in [t for t in self._pending if self._cache.partition_for(t) == partition]:
            del self._pending[transactional_id]
            self._timer.cancel(_retry_key(transactional_id))

    def _resend(self, transactional_id: str, pending: _Pending) -> None:
        if self._pending.get(transactional_id) is not pending:
            return
        partitions, pending.failed = tuple(sorted(pending.failed)), set()
        retry = replace(pending.markers, partitions=partitions)
        self._events.markers_sent(
            retry.transactional_id, retry.producer_id, retry.producer_epoch, retry.result.name, partitions, "retry"
        )
        self._sink.send(retry)

    def _abandon(self, pending: _Pending, error: ErrorCode) -> None:
        transactional_id = pending.markers.transactional_id
        del self._pending[transactional_id]
        self._timer.cancel(_retry_key(transactional_id))
        self._events.markers_abandoned(transactional_id, pending.markers.producer_id, error.name)

    def _write_completion(self, pending: _Pending) -> None:
        """Kafka's `writeTxnCompletion`: CompleteCommit/CompleteAbort, retried until it lands or the id moves."""
        transactional_id = pending.metadata.transactional_id
        pending.completing = True
        self._timer.cancel(_retry_key(transactional_id))

        def done(error: ErrorCode) -> None:
            if self._pending.get(transactional_id) is not pending:
                return
            metadata = pending.metadata
            gone = not self._cache.is_current(metadata) or metadata.pending_state is not pending.complete.state
            if error == ErrorCode.NONE or gone:  # done, or no longer ours to complete (unloaded, illegal state)
                del self._pending[transactional_id]
                return
            pending.completing = False
            self._timer.schedule(
                _retry_key(transactional_id),
                self._time.now_ms + self._backoff_ms,
                lambda: self._retry_completion(pending),
            )

        self._log.append(pending.metadata, pending.complete, done, keep_pending_on_error=True)

    def _retry_completion(self, pending: _Pending) -> None:
        current = self._pending.get(pending.metadata.transactional_id) is pending
        if current and not pending.completing and self._cache.is_current(pending.metadata):
            self._write_completion(pending)
