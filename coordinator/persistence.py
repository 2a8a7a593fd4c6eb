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

Reading a partition back (loading, #46/#47) is the broker's job: it reads the records and passes them to
`GroupCoordinator.load_partition`. `InMemoryRecordStore` keeps the log so tests can do exactly that.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol

from typing_extensions import TypeVar

from coordinator.records import CoordinatorRecord
from protocol.errors import ErrorCode

AppendCallback = Callable[[ErrorCode], None]
R = TypeVar("R", default=CoordinatorRecord)
R_contra = TypeVar("R_contra", contravariant=True, default=CoordinatorRecord)


class RecordLog(Protocol[R_contra]):
    """Where the coordinator's records go."""

    def append(self, partition: int, records: Sequence[R_contra], on_durable: AppendCallback) -> None:
        """Append `records` to `partition`; report durability (NONE) or failure through `on_durable`, once."""
        ...


@dataclass(slots=True)
class _PendingAppend(Generic[R]):
    partition: int
    records: tuple[R, ...]
    on_durable: AppendCallback


class InMemoryRecordStore(Generic[R]):
    """A `RecordLog` in a dict, for tests, the simulator and a single-process broker without a durable log yet.

    With `auto_durable=True` (default) an append is durable at once and its callback runs inside `append`. With
    `auto_durable=False` appends wait until `flush()` (durable, in order) or `fail_pending(error)`, which lets
    tests observe the window in which a SyncGroup or OffsetCommit is written but not yet acknowledged.
    `fail_next(error)` makes the next append(s) fail, for append-error paths.
    """

    def __init__(self, *, auto_durable: bool = True) -> None:
        self.auto_durable = auto_durable
        self._logs: dict[int, list[R]] = {}
        self._pending: list[_PendingAppend[R]] = []
        self._fail_next: list[ErrorCode] = []
        self.appends = 0

    # -- RecordLog -------------------------------------------------------------------------------------------

    def append(self, partition: int, records: Sequence[R], on_durable: AppendCallback) -> None:
        self.appends += 1
        if self._fail_next:
            on_durable(self._fail_next.pop(0))
            return
        pending = _PendingAppend(partition, tuple(records), on_durable)
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

    def records(self, partition: int) -> list[R]:
        """The durable log of one partition, in append order (what a loader replays)."""
        return list(self._logs.get(partition, ()))

    def partitions(self) -> list[int]:
        return sorted(self._logs)

    def _next_pending(self, partition: int | None) -> int | None:
        for index, pending in enumerate(self._pending):
            if partition is None or pending.partition == partition:
                return index
        return None

    def _make_durable(self, pending: _PendingAppend[R]) -> None:
        self._logs.setdefault(pending.partition, []).extend(pending.records)
        pending.on_durable(ErrorCode.NONE)
