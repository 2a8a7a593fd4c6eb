"""Replaying a `__consumer_offsets` partition into groups and offsets (#44, #46, #47).

Records are applied in log order with last-write-wins per key and null values as deletions, which is what the
log means whether or not it has been compacted. Afterwards:

* a GroupMetadata value becomes a group: Stable if it has members, else Empty (a loaded group can be nothing
  else, Kafka's `onGroupLoaded`); each member supports exactly the group's protocol with its persisted
  subscription; a v0 record's missing rebalance timeout falls back to the session timeout;
* offsets without group metadata (simple consumers, or a group whose metadata was tombstoned) make an Empty
  group with no protocol type;
* KIP-848 consumer-group records (key versions 3-8) become consumer groups (`consumer_group/loader.py`), and the
  offsets committed under a consumer group's id are that group's;
* keys of record types this coordinator does not know (share groups and later) are skipped with a warning;
* an offset record of a transactional batch is pending for its producer until that producer's marker follows
  (T62, T66): COMMIT materialises it unless an offset written later in the log is committed, ABORT drops it; a
  transaction still open at the end stays pending (its marker comes after the load). A tombstone also drops every
  pending offset of its partition (T65), and a group holding only pending offsets is loaded (an empty classic
  group), as Kafka's `OffsetMetadataManager.replay` has it.

This module only builds objects; the coordinator arms timers and installs the groups (`partitions.py`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from coordinator.consumer_group.group import ConsumerGroup
from coordinator.consumer_group.loader import ConsumerGroupReplay
from coordinator.events import Events
from coordinator.group import ClassicGroup
from coordinator.member import ClassicMember
from coordinator.offsets import GroupOffsets, OffsetAndMetadata
from coordinator.records import LogEntry, TransactionMarker, UnknownRecordKey
from coordinator.state import GroupState
from protocol.consumer_offsets import is_consumer_group_key
from protocol.messages.group_metadata_key import GroupMetadataKey
from protocol.messages.group_metadata_value import GroupMetadataValue
from protocol.messages.offset_commit_key import OffsetCommitKey
from protocol.messages.offset_commit_value import OffsetCommitValue


@dataclass(slots=True)
class LoadedPartition:
    """What one partition's records amount to."""

    groups: dict[str, ClassicGroup] = field(default_factory=dict)
    consumer_groups: dict[str, ConsumerGroup] = field(default_factory=dict)
    records: int = 0
    skipped: int = 0


def replay(partition: int, records: Iterable[LogEntry], events: Events) -> LoadedPartition:
    """Fold the records and transaction markers of one partition, in log order, into groups (with offsets)."""
    metadata: dict[str, GroupMetadataValue | None] = {}
    offsets: dict[str, GroupOffsets] = {}
    open_transactions: dict[int, set[str]] = {}
    """Producer id -> the groups it wrote transactional offsets to since its last marker."""
    result = LoadedPartition()
    consumer_groups = ConsumerGroupReplay()
    for position, entry in enumerate(records, start=1):
        result.records += 1
        if isinstance(entry, TransactionMarker):
            for group_id in open_transactions.pop(entry.producer_id, ()):
                offsets[group_id].complete_transaction(entry.producer_id, entry.commit)
            continue
        key, value = entry.key, entry.value
        if isinstance(key, OffsetCommitKey):
            group_offsets = offsets.setdefault(key.group, GroupOffsets())
            if value is None:
                group_offsets.replay_tombstone(key.topic, key.partition, position)
            elif not isinstance(value, OffsetCommitValue):
                result.skipped += 1
                events.record_skipped(partition, entry.key_version, "offset commit key with a non-offset value")
            elif entry.is_transactional:
                value_read = OffsetAndMetadata.from_value(value)
                group_offsets.restore_transactional(entry.producer_id, key.topic, key.partition, value_read, position)
                open_transactions.setdefault(entry.producer_id, set()).add(key.group)
            else:
                group_offsets.put(key.topic, key.partition, OffsetAndMetadata.from_value(value), position)
        elif isinstance(key, GroupMetadataKey):
            if value is None or isinstance(value, GroupMetadataValue):
                metadata[key.group] = value
            else:
                result.skipped += 1
                events.record_skipped(partition, entry.key_version, "group metadata key with a non-group value")
        elif isinstance(key, UnknownRecordKey):
            result.skipped += 1
            events.record_skipped(partition, key.version, "unknown record type")
        else:
            assert is_consumer_group_key(key)
            skipped = consumer_groups.apply(key, value)  # type: ignore[arg-type]
            if skipped is not None:
                result.skipped += 1
                events.record_skipped(partition, entry.key_version, skipped)
    result.consumer_groups = consumer_groups.groups(partition)

    for group_id, value in metadata.items():
        if value is not None and group_id not in result.consumer_groups:
            result.groups[group_id] = group_from_metadata(group_id, partition, value)
    for group_id, group_offsets in offsets.items():
        if not group_offsets.has_offsets():
            continue
        holder: ClassicGroup | ConsumerGroup | None = result.consumer_groups.get(group_id) or result.groups.get(
            group_id
        )
        if holder is None:
            holder = result.groups[group_id] = ClassicGroup(group_id, partition)
        holder.offsets = group_offsets
    return result


def group_from_metadata(group_id: str, partition: int, value: GroupMetadataValue) -> ClassicGroup:
    """A group as persisted after its last rebalance (or when it became Empty)."""
    protocol = value.protocol
    group = ClassicGroup(
        group_id,
        partition,
        state=GroupState.STABLE if value.members else GroupState.EMPTY,
        state_timestamp_ms=None if value.current_state_timestamp == -1 else value.current_state_timestamp,
        generation_id=value.generation,
        protocol_type=value.protocol_type or None,
        protocol_name=protocol,
        leader_id=value.leader,
    )
    for m in value.members:
        member = ClassicMember(
            member_id=m.member_id,
            group_instance_id=m.group_instance_id,
            client_id=m.client_id,
            client_host=m.client_host,
            rebalance_timeout_ms=m.session_timeout if m.rebalance_timeout == -1 else m.rebalance_timeout,
            session_timeout_ms=m.session_timeout,
            protocol_type=value.protocol_type,
            protocols=((protocol or "", m.subscription),),
            assignment=m.assignment,
        )
        group.add(member, None)
    if group.leader_id is not None and group.leader_id not in group.members:
        group.leader_id = next(iter(group.members), None)
    if not group.members:
        group.leader_id = None
    return group
