"""What OffsetCommit (#32-#35) and TxnOffsetCommit (T56-T61) share: the per-partition steps, in Kafka's order.

1. Partitions the broker does not have are UNKNOWN_TOPIC_OR_PARTITION, answered by Kafka's API layer before the
   coordinator sees the request (a request left with none touches no group);
2. the group-level validation (`ClassicGroup.validateOffsetCommit` / `ConsumerGroup.validateOffsetCommit`, with
   `isTransactional` for TxnOffsetCommit), whose error answers every remaining partition;
3. metadata longer than offset.metadata.max.bytes is OFFSET_METADATA_TOO_LARGE for its partition alone;
4. what remains becomes one OffsetCommit record per partition, each marked in flight in the group's offsets until
   the write has an outcome.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from coordinator.consumer_group.group import ConsumerGroup
from coordinator.consumer_group.offset_checks import validate_offset_commit
from coordinator.errors import GroupError
from coordinator.group import ClassicGroup
from coordinator.offset_base import OffsetManagerBase
from coordinator.offsets import NO_EXPIRE, OffsetAndMetadata
from coordinator.records import CoordinatorRecord, offset_commit_record
from coordinator.state import GroupState
from coordinator.topic_order import merged_by_topic
from protocol.errors import ErrorCode


class PartitionAnswer(Protocol):
    """A response partition of OffsetCommit or TxnOffsetCommit."""

    error_code: int


class RequestPartition(Protocol):
    """A request partition of OffsetCommit or TxnOffsetCommit (only OffsetCommit v1 has a commit timestamp)."""

    @property
    def partition_index(self) -> int: ...
    @property
    def committed_offset(self) -> int: ...
    @property
    def committed_leader_epoch(self) -> int: ...
    @property
    def committed_metadata(self) -> str | None: ...


class RequestTopic(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def partitions(self) -> Sequence[RequestPartition]: ...


T = TypeVar("T", bound="_ResponseTopic")


class _ResponseTopic(Protocol):
    partitions: Any


def java_string_length(value: str) -> int:
    """`String.length()` in Java: UTF-16 code units. Kafka compares commit metadata to
    offset.metadata.max.bytes with it, so "bytes" really means characters (astral ones count twice)."""
    if value.isascii():
        return len(value)
    return len(value.encode("utf-16-le", "surrogatepass")) // 2


@dataclass(slots=True)
class CommitSlot:
    """One requested partition: what to commit, and the response partition that answers it."""

    topic: str
    partition: int
    offset: int
    leader_epoch: int
    metadata: str | None
    answer: PartitionAnswer
    position: int = -1
    """Where the record stands in log order once it is written (`GroupOffsets.add_pending`)."""
    value: OffsetAndMetadata | None = None


@dataclass(frozen=True, slots=True)
class CommitIdentity:
    """Who commits: the group and the KIP-447 member fields."""

    group_id: str
    member_id: str
    group_instance_id: str | None
    generation: int


def answered_topics(slots: list[CommitSlot], rejected: list[CommitSlot], topic: Callable[[str], T]) -> list[T]:
    """The response's topics: rejected partitions first, as Kafka's API layer merges them (`topic_order.py`)."""
    return merged_by_topic([(s.topic, s.answer) for s in rejected], [(s.topic, s.answer) for s in slots], topic)


class CommitBase(OffsetManagerBase):
    """The steps both commit APIs take."""

    def _request_slots(
        self, topics: Iterable[RequestTopic], answer: Callable[[int], PartitionAnswer]
    ) -> tuple[list[CommitSlot], list[CommitSlot]]:
        """(slots to handle, slots answered UNKNOWN_TOPIC_OR_PARTITION by the broker's metadata view), each with
        its response partition made by `answer(partition index)`."""
        known = self._known_partition
        accepted: list[CommitSlot] = []
        rejected: list[CommitSlot] = []
        for topic in topics:
            name = topic.name
            for p in topic.partitions:
                index = p.partition_index
                slot = CommitSlot(
                    name, index, p.committed_offset, p.committed_leader_epoch, p.committed_metadata, answer(index)
                )
                if known is not None and not known(name, index):
                    slot.answer.error_code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                    rejected.append(slot)
                else:
                    accepted.append(slot)
        return accepted, rejected

    def _commit_group(
        self,
        who: CommitIdentity,
        api_version: int,
        *,
        api: str,
        transactional: bool,
        group_id_not_found_version: int,
    ) -> ClassicGroup | ConsumerGroup:
        """#32/#33 and T58-T60 (Kafka `validateOffsetCommit` / `validateTransactionalOffsetCommit`): the group the
        commit goes to; creates a simple group for a generation-less commit to an unknown group. Raises
        GroupError."""
        generation = who.generation
        consumer_group = self._group_manager.consumer_group(who.group_id)
        if consumer_group is not None:
            if consumer_group.is_dead:
                raise GroupError(ErrorCode.COORDINATOR_NOT_AVAILABLE)
            validate_offset_commit(
                consumer_group,
                who.member_id,
                generation,
                api_version,
                instance_id=who.group_instance_id,
                transactional=transactional,
            )
            return consumer_group
        group = self._group_manager.group(who.group_id)
        if group is None:
            if generation < 0:
                return self._group_manager.create_group(who.group_id, f"{api} from a simple consumer")
            if api_version >= group_id_not_found_version:
                raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND)
            raise GroupError(ErrorCode.ILLEGAL_GENERATION)
        validate_classic_commit(group, who, transactional=transactional)
        return group

    def _prepare_writes(
        self, group_id: str, slots: list[CommitSlot], expire_ms: int = NO_EXPIRE
    ) -> tuple[list[CommitSlot], list[CoordinatorRecord]]:
        """The slots to write and their records; oversized metadata answers OFFSET_METADATA_TOO_LARGE alone."""
        wall_ms = self._time.wall_ms
        max_metadata = self._config.offset_metadata_max_bytes
        writes: list[CommitSlot] = []
        records: list[CoordinatorRecord] = []
        for slot in slots:
            metadata = slot.metadata
            if metadata and java_string_length(metadata) > max_metadata:
                slot.answer.error_code = ErrorCode.OFFSET_METADATA_TOO_LARGE
                continue
            # One object per committed partition: the value the group keeps once durable, and its record.
            value = slot.value = OffsetAndMetadata(slot.offset, slot.leader_epoch, metadata or "", wall_ms, expire_ms)
            writes.append(slot)
            records.append(offset_commit_record(group_id, slot.topic, slot.partition, value))
        return writes, records


def validate_classic_commit(group: ClassicGroup, who: CommitIdentity, *, transactional: bool) -> None:
    """Kafka 4.4's `ClassicGroup.validateOffsetCommit`: Dead is COORDINATOR_NOT_AVAILABLE; a generation-less
    commit is accepted into an Empty group, and (transactional only) from a producer that sends no member at all;
    otherwise the member must be known (fenced static instance: FENCED_INSTANCE_ID) at the group's generation;
    a plain commit during CompletingRebalance is REBALANCE_IN_PROGRESS."""
    if group.is_in(GroupState.DEAD):
        raise GroupError(ErrorCode.COORDINATOR_NOT_AVAILABLE)
    generation = who.generation
    if generation < 0 and group.is_in(GroupState.EMPTY):
        return  # a simple/admin consumer committing for an Empty group
    if generation >= 0 or who.member_id or who.group_instance_id is not None:
        group.validate_member(who.member_id, who.group_instance_id)
        if generation != group.generation_id:
            raise GroupError(ErrorCode.ILLEGAL_GENERATION)
    elif not transactional and not group.is_in(GroupState.EMPTY):
        raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID)
    if not transactional and group.is_in(GroupState.COMPLETING_REBALANCE):
        raise GroupError(ErrorCode.REBALANCE_IN_PROGRESS)
