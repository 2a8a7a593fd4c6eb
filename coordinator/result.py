"""`CoordinatorResult`: what a coordinator operation produces, "a list of records and a response" (Kafka).

A manager never writes: it returns the records its operation wants in `__consumer_offsets` together with the
response, and the runtime (`runtime.py`) appends them and releases the response only once they are durable. The
transaction coordinator uses the same runtime for `__transaction_state`, so the record type is a parameter
(`CoordinatorRecord` unless said otherwise). The response is either a value (answered when the records are
durable, at once when there are none) or a `Reply` that the managers complete themselves: a parked JoinGroup or
SyncGroup. `on_append` runs when the write has an outcome, with the error already mapped to what the request
answers (NONE when durable), before the response is released, so the manager can apply or revert what the records
meant.

Two results write something else than plain records (T57, T64): one with a `producer` writes its records as a
transactional batch of that producer (TxnOffsetCommit), one with a `marker` writes that transaction marker (a
control batch) and no records.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic

from typing_extensions import TypeVar

from coordinator.records import CoordinatorRecord, TransactionalProducer, TransactionMarker
from coordinator.reply import Reply
from protocol.errors import ErrorCode

T = TypeVar("T")
R = TypeVar("R", default=CoordinatorRecord)
"""The record type: `CoordinatorRecord` for the group coordinator, the transaction log's record for its sibling."""

AppendOutcome = Callable[[ErrorCode], None]
"""Called once with the mapped outcome of a result's write."""


@dataclass(slots=True)
class CoordinatorResult(Generic[T, R]):
    """Records to append to one partition of the coordinator's log, and the response (or parked reply) they gate."""

    records: Sequence[R]
    response: T | Reply[T]
    partition: int = -1
    """Where the records go (ignored when there are none)."""
    purpose: str = ""
    """What the write is for, in the `offsets_log.append_failed` event."""
    on_append: AppendOutcome | None = field(default=None, repr=False)
    producer: TransactionalProducer | None = None
    """The transaction the records belong to (a transactional batch), or None."""
    marker: TransactionMarker | None = None
    """A transaction marker to write instead of records."""

    @property
    def writes(self) -> bool:
        """Whether the result appends anything."""
        return bool(self.records) or self.marker is not None

    @classmethod
    def of(cls, response: T | Reply[T]) -> CoordinatorResult[T, R]:
        """A result with nothing to write."""
        return cls((), response)
