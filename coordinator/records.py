"""What the coordinator writes to `__consumer_offsets`, as typed records (never bytes; formats #44-#46).

Kafka persists three things: the group's metadata after each rebalance (and when it becomes Empty), every offset
commit, and tombstones (null values) for deleted or expired offsets and groups. The coordinator emits
`CoordinatorRecord`s; the storage layer encodes them with `protocol.consumer_offsets` (key = int16 version +
struct, value likewise, None = tombstone) and tells the coordinator when they are durable.

Transactions add two things (T57, T64): a TxnOffsetCommit's records are appended as a *transactional* batch of
the producer (`TransactionalProducer`), and a transaction's end is a control batch (`TransactionMarker`). Reading
a partition back yields both: records keep the producer id of the batch they came from (`producer_id`), markers
come as `TransactionMarker` entries in log order (`LogEntry`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from coordinator.group import ClassicGroup
from coordinator.offsets import OffsetAndMetadata

# The versions Kafka writes (OffsetCommitKey v1, GroupMetadataKey v2 / Value v3, rules #44-#46) are decided once,
# next to the codec that writes them.
from protocol.consumer_offsets import (
    GROUP_METADATA_KEY_VERSION,
    GROUP_METADATA_VALUE_VERSION,
    OFFSET_COMMIT_KEY_VERSION,
    OffsetsKey,
    OffsetsValue,
)
from protocol.messages.group_metadata_key import GroupMetadataKey
from protocol.messages.group_metadata_value import GroupMetadataValue, MemberMetadata
from protocol.messages.offset_commit_key import OffsetCommitKey

TOMBSTONE_VERSION = -1
NO_PRODUCER_ID = -1


@dataclass(frozen=True, slots=True)
class UnknownRecordKey:
    """A key of a record type this coordinator does not know (share-group keys and later, versions 9 and up).

    The storage layer hands these to the loader, which skips them with a warning, as Kafka does (#44).
    """

    version: int
    data: bytes = b""


#: Every key the codec knows (classic and KIP-848 consumer-group types), or an unknown one.
RecordKey = OffsetsKey | UnknownRecordKey
RecordValue = OffsetsValue


@dataclass(frozen=True, slots=True)
class CoordinatorRecord:
    """One `__consumer_offsets` record: key and value with the versions to write them in; value None = tombstone."""

    key: RecordKey
    key_version: int
    value: RecordValue | None
    value_version: int
    producer_id: int = NO_PRODUCER_ID
    """The producer of the transactional batch a record was read back from (T62); NO_PRODUCER_ID otherwise. The
    coordinator never sets it on what it writes: the producer belongs to the append (`TransactionalProducer`)."""

    @property
    def is_tombstone(self) -> bool:
        return self.value is None

    @property
    def is_transactional(self) -> bool:
        return self.producer_id != NO_PRODUCER_ID


@dataclass(frozen=True, slots=True)
class TransactionalProducer:
    """Whose transaction an append belongs to: its records are written in a transactional batch of this producer
    id and epoch (Kafka's `scheduleTransactionalWriteOperation`, T57)."""

    producer_id: int
    producer_epoch: int


@dataclass(frozen=True, slots=True)
class TransactionMarker:
    """The end of a producer's transaction on one partition: a control batch with one COMMIT or ABORT record
    (Kafka's `EndTransactionMarker`, T36), written for the transaction coordinator and replayed in log order."""

    producer_id: int
    producer_epoch: int
    coordinator_epoch: int
    commit: bool

    @property
    def result(self) -> str:
        return "COMMIT" if self.commit else "ABORT"


LogEntry = CoordinatorRecord | TransactionMarker
"""What a partition holds in log order, as the loader replays it."""


#: How many OffsetCommit keys are kept for reuse: a group commits the same partitions over and over.
COMMIT_KEY_CACHE = 65_536


@lru_cache(maxsize=COMMIT_KEY_CACHE)
def offset_commit_key(group_id: str, topic: str, partition: int) -> OffsetCommitKey:
    """The key of a partition's commits, one object per (group, topic, partition) while it is cached: every commit
    writes one record per partition, and the key is the same each time. Keys in records are never mutated (the
    records are frozen and nothing writes into their keys), so sharing one is safe."""
    return OffsetCommitKey(group=group_id, topic=topic, partition=partition)


def offset_commit_record(group_id: str, topic: str, partition: int, value: OffsetAndMetadata) -> CoordinatorRecord:
    return CoordinatorRecord(
        offset_commit_key(group_id, topic, partition), OFFSET_COMMIT_KEY_VERSION, value.to_value(), value.value_version
    )


def offset_commit_tombstone(group_id: str, topic: str, partition: int) -> CoordinatorRecord:
    return CoordinatorRecord(
        key=OffsetCommitKey(group=group_id, topic=topic, partition=partition),
        key_version=OFFSET_COMMIT_KEY_VERSION,
        value=None,
        value_version=TOMBSTONE_VERSION,
    )


def group_metadata_record(group: ClassicGroup, assignment: Mapping[str, bytes]) -> CoordinatorRecord:
    """The group as Kafka's `newGroupMetadataRecord` writes it: every member with its subscription for the chosen
    protocol and its assignment. An Empty group is written with no members."""
    members: list[MemberMetadata] = []
    protocol = group.protocol_name
    for member in group.members.values():
        assert protocol is not None, "a group with members has a protocol"
        members.append(
            MemberMetadata(
                member_id=member.member_id,
                group_instance_id=member.group_instance_id,
                client_id=member.client_id,
                client_host=member.client_host,
                rebalance_timeout=member.rebalance_timeout_ms,
                session_timeout=member.session_timeout_ms,
                subscription=member.metadata(protocol),
                assignment=assignment.get(member.member_id, b""),
            )
        )
    value = GroupMetadataValue(
        protocol_type=group.protocol_type or "",
        generation=group.generation_id,
        protocol=protocol,
        leader=group.leader_id,
        current_state_timestamp=-1 if group.state_timestamp_ms is None else group.state_timestamp_ms,
        members=members,
    )
    return CoordinatorRecord(
        key=GroupMetadataKey(group=group.group_id),
        key_version=GROUP_METADATA_KEY_VERSION,
        value=value,
        value_version=GROUP_METADATA_VALUE_VERSION,
    )


def group_metadata_tombstone(group_id: str) -> CoordinatorRecord:
    return CoordinatorRecord(
        key=GroupMetadataKey(group=group_id),
        key_version=GROUP_METADATA_KEY_VERSION,
        value=None,
        value_version=TOMBSTONE_VERSION,
    )
