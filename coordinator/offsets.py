"""Committed offsets of one group, with Kafka's pending-write bookkeeping and retention rule (Part 1.5, #32-#38).

A committed offset is the position of the *next* record to consume; the broker stores exactly what was committed
(offset, leader epoch, metadata) and never loses an acknowledged commit. Commits become visible only once their
record is durable, so between the append and the durability notice the partition is *pending*: OffsetFetch keeps
returning the previous committed value (or UNSTABLE_OFFSET_COMMIT with require_stable, #38), and the retention
sweep never expires it (#36). Offsets of a TxnOffsetCommit are pending until their producer's marker
(`txn_offsets.py`, T62-T65).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from coordinator.txn_offsets import PendingTransactions
from protocol.messages.offset_commit_value import OffsetCommitValue

NO_EPOCH = -1
NO_EXPIRE = -1

TopicPartition = tuple[str, int]


@dataclass(frozen=True, slots=True)
class OffsetAndMetadata:
    """One committed offset, as OffsetCommitValue stores it."""

    offset: int
    leader_epoch: int
    metadata: str
    commit_timestamp_ms: int
    expire_timestamp_ms: int = NO_EXPIRE
    """Only OffsetCommit v2-v4 with a retention time set this (stored as OffsetCommitValue v1, rule #35)."""

    def to_value(self) -> OffsetCommitValue:
        return OffsetCommitValue(
            offset=self.offset,
            leader_epoch=self.leader_epoch,
            metadata=self.metadata,
            commit_timestamp=self.commit_timestamp_ms,
            expire_timestamp=self.expire_timestamp_ms,
        )

    @property
    def value_version(self) -> int:
        """Kafka writes OffsetCommitValue v1 only to carry an expire timestamp, else v3 (rule #45)."""
        return 1 if self.expire_timestamp_ms != NO_EXPIRE else 3

    @classmethod
    def from_value(cls, value: OffsetCommitValue) -> OffsetAndMetadata:
        return cls(
            offset=value.offset,
            leader_epoch=value.leader_epoch,
            metadata=value.metadata,
            commit_timestamp_ms=value.commit_timestamp,
            expire_timestamp_ms=value.expire_timestamp,
        )

    def is_expired(self, now_wall_ms: int, retention_ms: int, base_timestamp_ms: int) -> bool:
        """Kafka's `OffsetExpirationConditionImpl`: an explicit expire timestamp wins, else base + retention."""
        if self.expire_timestamp_ms != NO_EXPIRE:
            return now_wall_ms >= self.expire_timestamp_ms
        return now_wall_ms - base_timestamp_ms >= retention_ms


class GroupOffsets:
    """Committed offsets by topic and partition, the writes in flight per partition, and the offsets pending in
    producers' transactions (`txn_offsets.py`).

    Every write issued for the group (commit, transactional commit, tombstone), and every record loaded, takes the
    next *position*: the group's records all go to one partition, in the order they are issued, so positions
    follow log order. Committed offsets remember theirs, which decides whether a transaction's offset still wins
    when its COMMIT marker arrives (T64).
    """

    __slots__ = ("_committed", "_deleted_at", "_pending", "_position", "_transactional", "_written_at")

    def __init__(self) -> None:
        self._committed: dict[str, dict[int, OffsetAndMetadata]] = {}
        self._pending: dict[TopicPartition, int] = {}
        self._position = 0
        self._deleted_at: dict[TopicPartition, int] = {}
        self._written_at: dict[TopicPartition, int] = {}
        self._transactional = PendingTransactions()

    # -- committed values ------------------------------------------------------------------------------------

    def get(self, topic: str, partition: int) -> OffsetAndMetadata | None:
        partitions = self._committed.get(topic)
        return None if partitions is None else partitions.get(partition)

    def put(self, topic: str, partition: int, value: OffsetAndMetadata, position: int | None = None) -> None:
        """Make `value` the committed offset; `position` is where its record is in log order (None: a new write
        at the end of the log)."""
        if position is None:
            position = self._next_position()
        elif position > self._position:  # `_seen`, inlined: a durable commit puts each of its offsets here
            self._position = position
        partitions = self._committed.get(topic)
        if partitions is None:
            partitions = self._committed[topic] = {}
        partitions[partition] = value
        self._written_at[(topic, partition)] = position

    def remove(self, topic: str, partition: int) -> OffsetAndMetadata | None:
        partitions = self._committed.get(topic)
        if partitions is None:
            return None
        removed = partitions.pop(partition, None)
        self._written_at.pop((topic, partition), None)
        if not partitions:
            del self._committed[topic]
        return removed

    def items(self) -> Iterator[tuple[str, int, OffsetAndMetadata]]:
        """Every committed offset, topics and partitions in sorted order (stable responses and records)."""
        for topic in sorted(self._committed):
            partitions = self._committed[topic]
            for partition in sorted(partitions):
                yield topic, partition, partitions[partition]

    def topics(self) -> list[str]:
        return sorted(self._committed)

    def partitions_of(self, topic: str) -> list[int]:
        return sorted(self._committed.get(topic, {}))

    def __len__(self) -> int:
        return sum(len(p) for p in self._committed.values())

    def delete(self, topic: str, partition: int) -> None:
        """Remove an offset whose tombstone is being written, with every transaction's pending offset for it
        (T65); in-flight commits to it must not resurrect it."""
        key = (topic, partition)
        position = self._next_position()
        if key in self._pending:
            self._deleted_at[key] = position
        self.remove(topic, partition)
        self._transactional.discard(key)

    def replay_tombstone(self, topic: str, partition: int, position: int) -> None:
        """A loaded tombstone: the committed offset and every pending transactional one go (T65)."""
        self._seen(position)
        self.remove(topic, partition)
        self._transactional.discard((topic, partition))

    # -- in-flight writes ------------------------------------------------------------------------------------

    def add_pending(self, topic: str, partition: int) -> int:
        """A commit to this partition is being written; returns its position, for `finish_pending`."""
        key = (topic, partition)
        pending = self._pending
        pending[key] = pending.get(key, 0) + 1
        self._position = position = self._position + 1  # `_next_position`, inlined: once per committed offset
        return position

    def finish_pending(self, topic: str, partition: int, position: int, value: OffsetAndMetadata | None) -> None:
        """The write finished: apply `value` (None when it failed) unless the offset was deleted since."""
        if self._finish(topic, partition, position) and value is not None:
            self.put(topic, partition, value, position)

    def finish_transactional(
        self, topic: str, partition: int, position: int, producer_id: int, value: OffsetAndMetadata | None
    ) -> None:
        """A TxnOffsetCommit's write finished: `value` (None when it failed) becomes pending in the producer's
        transaction unless the offset was deleted since (T62)."""
        if self._finish(topic, partition, position) and value is not None:
            self._transactional.add(producer_id, (topic, partition), value, position)

    def _finish(self, topic: str, partition: int, position: int) -> bool:
        """Close an in-flight write; whether it still counts (no tombstone was issued after it)."""
        key = (topic, partition)
        deleted_at = self._deleted_at  # empty unless an offset was deleted with a write in flight
        counts = not deleted_at or deleted_at.get(key, -1) < position
        pending = self._pending
        left = pending.get(key, 0) - 1
        if left > 0:
            pending[key] = left
        else:
            pending.pop(key, None)
            if deleted_at:
                deleted_at.pop(key, None)
        return counts

    def is_pending(self, topic: str, partition: int) -> bool:
        return (topic, partition) in self._pending

    def is_unstable(self, topic: str, partition: int) -> bool:
        """A commit is being written, or a transaction has an offset pending here: what require_stable refuses
        to answer (UNSTABLE_OFFSET_COMMIT, #38 and T63)."""
        key = (topic, partition)
        return key in self._pending or self._transactional.is_open(key)

    def pending_partitions(self) -> list[TopicPartition]:
        """Partitions with a write in flight or a transactional offset pending: deleting the group's offsets must
        tombstone them too (T65)."""
        return sorted(set(self._pending) | set(self._transactional.partitions()))

    def has_offsets(self) -> bool:
        """Committed, in flight or pending in a transaction (Kafka's `hasOffsets` and `groupHasNoOffsets`): a
        group with any is not yet removable."""
        return bool(self._committed) or bool(self._pending) or bool(self._transactional)

    # -- transactions ----------------------------------------------------------------------------------------

    @property
    def transactional(self) -> PendingTransactions:
        """The offsets pending in producers' transactions (read-only use; change them through this class)."""
        return self._transactional

    def restore_transactional(
        self, producer_id: int, topic: str, partition: int, value: OffsetAndMetadata, position: int
    ) -> None:
        """A loaded transactional offset whose marker has not been replayed (yet)."""
        self._seen(position)
        self._transactional.add(producer_id, (topic, partition), value, position)

    def complete_transaction(self, producer_id: int, commit: bool) -> TransactionOutcome:
        """The producer's marker is durable (or replayed): on COMMIT its pending offsets become committed, each
        unless an offset written later in log order is already committed; on ABORT they are dropped (T64)."""
        outcome = TransactionOutcome()
        for (topic, partition), pending in sorted(self._transactional.take(producer_id).items()):
            if not commit:
                outcome.dropped.append((topic, partition))
            elif self._written_at.get((topic, partition), -1) > pending.position:
                outcome.superseded.append((topic, partition))
            else:
                self.put(topic, partition, pending.value, pending.position)
                outcome.committed.append((topic, partition))
        return outcome

    def _next_position(self) -> int:
        self._position += 1
        return self._position

    def _seen(self, position: int) -> int:
        self._position = max(self._position, position)
        return position

    # -- retention -------------------------------------------------------------------------------------------

    def expired(
        self,
        now_wall_ms: int,
        retention_ms: int,
        base_timestamp_ms: Callable[[OffsetAndMetadata], int],
        is_subscribed: Callable[[str], bool],
    ) -> list[TopicPartition]:
        """Partitions whose offset has expired (#36): never a subscribed topic, never a pending write, never one
        with a transaction's offset pending (T65, Kafka's `cleanupExpiredOffsets`)."""
        result: list[TopicPartition] = []
        for topic, partition, value in self.items():
            if is_subscribed(topic) or self.is_unstable(topic, partition):
                continue
            if value.is_expired(now_wall_ms, retention_ms, base_timestamp_ms(value)):
                result.append((topic, partition))
        return result


@dataclass(slots=True)
class TransactionOutcome:
    """What a marker did to one group's pending offsets."""

    committed: list[TopicPartition] = field(default_factory=list)
    superseded: list[TopicPartition] = field(default_factory=list)
    """Committed by the transaction but not applied: an offset written later in log order is committed."""
    dropped: list[TopicPartition] = field(default_factory=list)
