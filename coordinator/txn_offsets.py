"""One group's pending transactional offsets (T62-T65), Kafka's `pendingTransactionalOffsets` and
`openTransactions` restricted to one group.

A TxnOffsetCommit's offsets belong to the producer's transaction until its marker: COMMIT makes them the
group's committed offsets, ABORT drops them. Until then they are invisible to OffsetFetch, and a partition with
any producer's offset pending is *open*: OffsetFetch with require_stable answers UNSTABLE_OFFSET_COMMIT for it,
expiry neither tombstones its committed offset nor removes the group.

Each pending offset remembers its `position`, where its record stands in the partition's log order (see
`GroupOffsets`): on COMMIT it replaces the committed offset only if that one was written earlier (T64), so the
last write in log order wins, as when Kafka compares record offsets.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from coordinator.offsets import OffsetAndMetadata, TopicPartition


@dataclass(frozen=True, slots=True)
class PendingOffset:
    """A transactional offset waiting for its producer's marker, and where its record is in log order."""

    value: OffsetAndMetadata
    position: int


class PendingTransactions:
    """Pending offsets by producer id, and the producers with an offset pending per partition."""

    __slots__ = ("_by_producer", "_producers_of")

    def __init__(self) -> None:
        self._by_producer: dict[int, dict[TopicPartition, PendingOffset]] = {}
        self._producers_of: dict[TopicPartition, set[int]] = {}

    def add(self, producer_id: int, tp: TopicPartition, value: OffsetAndMetadata, position: int) -> None:
        """The producer's offset for `tp` is written (a later one of the same producer replaces it, T62)."""
        self._by_producer.setdefault(producer_id, {})[tp] = PendingOffset(value, position)
        self._producers_of.setdefault(tp, set()).add(producer_id)

    def take(self, producer_id: int) -> dict[TopicPartition, PendingOffset]:
        """Remove and return everything `producer_id` has pending (its marker arrived, T64)."""
        pending = self._by_producer.pop(producer_id, {})
        for tp in pending:
            self._forget(tp, producer_id)
        return pending

    def discard(self, tp: TopicPartition) -> None:
        """A tombstone for `tp`: every producer's pending offset there goes too (T65)."""
        for producer_id in self._producers_of.pop(tp, ()):
            offsets = self._by_producer[producer_id]
            del offsets[tp]
            if not offsets:
                del self._by_producer[producer_id]

    def is_open(self, tp: TopicPartition) -> bool:
        """Whether any producer has an offset pending for `tp` (Kafka's `hasPendingTransactionalOffsets`)."""
        return tp in self._producers_of

    def has_producer(self, producer_id: int) -> bool:
        return producer_id in self._by_producer

    def producers(self) -> list[int]:
        return sorted(self._by_producer)

    def partitions(self) -> list[TopicPartition]:
        return sorted(self._producers_of)

    def __bool__(self) -> bool:
        return bool(self._by_producer)

    def _forget(self, tp: TopicPartition, producer_id: int) -> None:
        producers = self._producers_of.get(tp)
        if producers is not None:
            producers.discard(producer_id)
            if not producers:
                del self._producers_of[tp]


class OpenTransactionIndex:
    """Per `__consumer_offsets` partition, the groups each producer has offsets pending in, so that a marker visits
    only those groups. An entry may outlive its offsets (a tombstone dropped them, the group went): the marker
    then finds nothing there, which is harmless."""

    __slots__ = ("_groups",)

    def __init__(self) -> None:
        self._groups: dict[int, dict[int, set[str]]] = {}

    def add(self, partition: int, producer_id: int, group_id: str) -> None:
        self._groups.setdefault(partition, {}).setdefault(producer_id, set()).add(group_id)

    def take(self, partition: int, producer_id: int) -> list[str]:
        """The groups to settle for the producer's marker on `partition` (forgotten from now on), sorted."""
        return sorted(self._groups.get(partition, {}).pop(producer_id, ()))

    def forget_partition(self, partition: int) -> None:
        """The partition was unloaded (its groups are gone)."""
        self._groups.pop(partition, None)
