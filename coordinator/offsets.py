"""Committed offsets of one group, with Kafka's pending-write bookkeeping and retention rule (Part 1.5, #32-#38).

A committed offset is the position of the *next* record to consume; the broker stores exactly what was committed
(offset, leader epoch, metadata) and never loses an acknowledged commit. Commits become visible only once their
record is durable, so between the append and the durability notice the partition is *pending*: OffsetFetch keeps
returning the previous committed value (or UNSTABLE_OFFSET_COMMIT with require_stable, #38), and the retention
sweep never expires it (#36).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

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
    """Committed offsets by topic and partition, plus how many writes are in flight per partition."""

    __slots__ = ("_committed", "_deleted_at", "_pending", "_writes")

    def __init__(self) -> None:
        self._committed: dict[str, dict[int, OffsetAndMetadata]] = {}
        self._pending: dict[TopicPartition, int] = {}
        self._writes = 0
        self._deleted_at: dict[TopicPartition, int] = {}

    # -- committed values ------------------------------------------------------------------------------------

    def get(self, topic: str, partition: int) -> OffsetAndMetadata | None:
        partitions = self._committed.get(topic)
        return None if partitions is None else partitions.get(partition)

    def put(self, topic: str, partition: int, value: OffsetAndMetadata) -> None:
        self._committed.setdefault(topic, {})[partition] = value

    def remove(self, topic: str, partition: int) -> OffsetAndMetadata | None:
        partitions = self._committed.get(topic)
        if partitions is None:
            return None
        removed = partitions.pop(partition, None)
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
        """Remove an offset whose tombstone is being written; in-flight commits to it must not resurrect it."""
        self._writes += 1
        if (topic, partition) in self._pending:
            self._deleted_at[(topic, partition)] = self._writes
        self.remove(topic, partition)

    # -- in-flight writes ------------------------------------------------------------------------------------

    def add_pending(self, topic: str, partition: int) -> int:
        """A commit to this partition is being written; returns the marker to pass to `finish_pending`."""
        key = (topic, partition)
        self._pending[key] = self._pending.get(key, 0) + 1
        return self._writes

    def finish_pending(self, topic: str, partition: int, marker: int, value: OffsetAndMetadata | None) -> None:
        """The write finished: apply `value` (None when it failed) unless the offset was deleted since."""
        key = (topic, partition)
        if value is not None and self._deleted_at.get(key, -1) <= marker:
            self.put(topic, partition, value)
        left = self._pending.get(key, 0) - 1
        if left > 0:
            self._pending[key] = left
        else:
            self._pending.pop(key, None)
            self._deleted_at.pop(key, None)

    def is_pending(self, topic: str, partition: int) -> bool:
        return (topic, partition) in self._pending

    def pending_partitions(self) -> list[TopicPartition]:
        return sorted(self._pending)

    def has_offsets(self) -> bool:
        """Committed or in flight (Kafka's `hasOffsets`): a group with either is not yet removable."""
        return bool(self._committed) or bool(self._pending)

    # -- retention -------------------------------------------------------------------------------------------

    def expired(
        self,
        now_wall_ms: int,
        retention_ms: int,
        base_timestamp_ms: Callable[[OffsetAndMetadata], int],
        is_subscribed: Callable[[str], bool],
    ) -> list[TopicPartition]:
        """Partitions whose offset has expired (#36): never a subscribed topic, never a pending write."""
        result: list[TopicPartition] = []
        for topic, partition, value in self.items():
            if is_subscribed(topic) or (topic, partition) in self._pending:
                continue
            if value.is_expired(now_wall_ms, retention_ms, base_timestamp_ms(value)):
                result.append((topic, partition))
        return result
