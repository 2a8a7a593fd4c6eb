"""The persistence boundary: append records to a `__consumer_offsets` partition, be told when they are durable.

The founding model is *persist, then respond*: SyncGroup and OffsetCommit (and DeleteGroups / OffsetDelete) are
answered only once their records are durable, exactly as Kafka answers them only after the append to the offsets
topic is acknowledged. The coordinator therefore talks to storage through one small interface, `RecordLog`:

* `append(partition, records, on_durable)`: the records go to that partition atomically and in order with every
  earlier append to it; `on_durable(ErrorCode.NONE)` is called once they are durable, or `on_durable(error)` if
  they never will be (NOT_LEADER_OR_FOLLOWER, KAFKA_STORAGE_ERROR, MESSAGE_TOO_LARGE, UNKNOWN_SERVER_ERROR for a
  record that cannot be serialized, ...), as soon as that is known: a log that batches appends fails only the
  appends a failed write held, never its neighbours', and never leaves them to the timeout. The callback may run
  inside `append` (an in-memory store) or later from the loop that drives the coordinator (a replicated log); the
  coordinator issues appends as the last step of an operation, so either is safe. The callback must run at most
  once. A callback that arrives later from an event loop runs at the coordinator's last known time; the driver
  should call `coordinator.tick(now_ms)` first so that session deadlines restarted by it are measured from now.
  The coordinator also enforces `offsets.commit.timeout.ms` itself, so a log that never answers cannot
  strand a parked reply.

The transaction coordinator appends its `__transaction_state` records through the same interface: `RecordLog` and
`InMemoryRecordStore` take the record type as a parameter (`CoordinatorRecord` unless said otherwise).

Transactions (T57, T64) add two kinds of write to `__consumer_offsets`: `append(..., producer=...)` writes the
records in one transactional batch of that producer (never merged with another producer's records or with plain
ones), and `append_marker` writes a transaction's COMMIT or ABORT control batch. Both report through `on_durable`
exactly as `append` does.

Reading a partition back (loading, #46/#47) is the broker's job: it reads the entries (records, tagged with the
producer id of a transactional batch, and markers, in log order) and passes them to
`GroupCoordinator.load_partition`. `InMemoryRecordStore` keeps the log so tests can do exactly that.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Generic, Protocol, cast

from typing_extensions import TypeVar

from coordinator.records import CoordinatorRecord, TransactionalProducer, TransactionMarker
from protocol.errors import ErrorCode

AppendCallback = Callable[[ErrorCode], None]
R = TypeVar("R", default=CoordinatorRecord)
R_contra = TypeVar("R_contra", contravariant=True, default=CoordinatorRecord)


class RecordLog(Protocol[R_contra]):
    """Where the coordinator's records go."""

    def append(
        self,
        partition: int,
        records: Sequence[R_contra],
        on_durable: AppendCallback,
        producer: TransactionalProducer | None = None,
    ) -> None:
        """Append `records` to `partition` (in a transactional batch of `producer` if given); report durability
        (NONE) or failure through `on_durable`, once."""
        ...

    def append_marker(self, partition: int, marker: TransactionMarker, on_durable: AppendCallback) -> None:
        """Append a transaction's end (a control batch) to `partition`; report through `on_durable`, once."""
        ...


@dataclass(slots=True)
class _PendingAppend(Generic[R]):
    partition: int
    entries: tuple[R | TransactionMarker, ...]
    on_durable: AppendCallback


def _tagged(records: Sequence[R], producer: TransactionalProducer | None) -> tuple[R, ...]:
    """The records as a reader gets them back: tagged with the producer of their transactional batch (only
    `CoordinatorRecord`s are ever written by a producer)."""
    if producer is None:
        return tuple(records)
    return tuple(cast(R, replace(cast(Any, r), producer_id=producer.producer_id)) for r in records)


class InMemoryRecordStore(Generic[R]):
    """A `RecordLog` in a dict, for tests, the simulator and a single-process broker without a durable log yet.

    With `auto_durable=True` (default) an append is durable at once and its callback runs inside `append`. With
    `auto_durable=False` appends wait until `flush()` (durable, in order) or `fail_pending(error)`, which lets
    tests observe the window in which a SyncGroup or OffsetCommit is written but not yet acknowledged.
    `fail_next(error)` makes the next append(s) fail, for append-error paths.
    """

    def __init__(self, *, auto_durable: bool = True) -> None:
        self.auto_durable = auto_durable
        self._logs: dict[int, list[R | TransactionMarker]] = {}
        self._pending: list[_PendingAppend[R]] = []
        self._fail_next: list[ErrorCode] = []
        self.appends = 0

    # -- RecordLog -------------------------------------------------------------------------------------------

    def append(
        self,
        partition: int,
        records: Sequence[R],
        on_durable: AppendCallback,
        producer: TransactionalProducer | None = None,
    ) -> None:
        self._add(_PendingAppend(partition, _tagged(records, producer), on_durable))

    def append_marker(self, partition: int, marker: TransactionMarker, on_durable: AppendCallback) -> None:
        self._add(_PendingAppend(partition, (marker,), on_durable))

    def _add(self, pending: _PendingAppend[R]) -> None:
        self.appends += 1
        if self._fail_next:
            pending.on_durable(self._fail_next.pop(0))
            return
        if self.auto_durable:
            self._make_durable(pending)
        else:
            self._pending.append(pending)

    # -- test controls ---------------------------------------------------------------------------------------

    def fail_next(self, error: ErrorCode, count: int = 1) -> None:
        self._fail_next.extend([error] * count)

    @property
    def pending_appends(self) -> int:
        return len(self._pending)

    def flush(self, partition: int | None = None) -> int:
        """Make pending appends durable in order (appends made by their callbacks too); returns how many."""
        for done in range(1_000_000):
            index = self._next_pending(partition)
            if index is None:
                return done
            self._make_durable(self._pending.pop(index))
        raise RuntimeError("flush did not converge")

    def fail_pending(self, error: ErrorCode, partition: int | None = None, count: int | None = None) -> int:
        """Fail the pending appends (of one partition, or all; the first `count`, or every one) with `error`;
        returns how many."""
        failed = 0
        while (count is None or failed < count) and (index := self._next_pending(partition)) is not None:
            self._pending.pop(index).on_durable(error)
            failed += 1
        return failed

    # -- reading back ----------------------------------------------------------------------------------------

    def records(self, partition: int) -> list[R | TransactionMarker]:
        """The durable log of one partition, in append order (what a loader replays): records, tagged with their
        transactional producer, and transaction markers."""
        return list(self._logs.get(partition, ()))

    def partitions(self) -> list[int]:
        return sorted(self._logs)

    def _next_pending(self, partition: int | None) -> int | None:
        for index, pending in enumerate(self._pending):
            if partition is None or pending.partition == partition:
                return index
        return None

    def _make_durable(self, pending: _PendingAppend[R]) -> None:
        self._logs.setdefault(pending.partition, []).extend(pending.entries)
        pending.on_durable(ErrorCode.NONE)
