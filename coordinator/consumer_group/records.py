"""The records a consumer group writes to `__consumer_offsets`, as Kafka's `GroupCoordinatorRecordHelpers` builds
them (record types 3-8, value version 0), and the conversions between them and the in-memory model.

Kafka writes, per change, only the records of what changed: ConsumerGroupMemberMetadata when a member joins or
changes its subscription, ConsumerGroupPartitionMetadata when the subscribed topics change, ConsumerGroupMetadata
with each new group epoch, ConsumerGroupTargetAssignmentMember for each member whose target moved and then
ConsumerGroupTargetAssignmentMetadata with the new assignment epoch, and ConsumerGroupCurrentMemberAssignment
when a member's reconciliation moves. Removing a member tombstones its three member records; deleting the group
tombstones the group-level ones. Replaying them in log order (loader.py) rebuilds the group exactly.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import TypeVar

from coordinator.consumer_group.assignor_spec import MemberAssignment
from coordinator.consumer_group.member import ConsumerGroupMember
from coordinator.consumer_group.member_state import MemberAssignmentState, MemberState, Partitions
from coordinator.consumer_group.topics import TopicImage
from coordinator.records import TOMBSTONE_VERSION, CoordinatorRecord, RecordValue
from protocol.consumer_offsets import CONSUMER_GROUP_VALUE_VERSION, OffsetsKey, write_key_version
from protocol.kafka_uuid import kafka_uuid_from_str, kafka_uuid_to_str
from protocol.messages import consumer_group_current_member_assignment_value as current_value
from protocol.messages import consumer_group_member_metadata_value as member_value
from protocol.messages import consumer_group_partition_metadata_value as partition_value
from protocol.messages import consumer_group_target_assignment_member_value as target_value
from protocol.messages.consumer_group_current_member_assignment_key import ConsumerGroupCurrentMemberAssignmentKey
from protocol.messages.consumer_group_member_metadata_key import ConsumerGroupMemberMetadataKey
from protocol.messages.consumer_group_metadata_key import ConsumerGroupMetadataKey
from protocol.messages.consumer_group_metadata_value import ConsumerGroupMetadataValue
from protocol.messages.consumer_group_partition_metadata_key import ConsumerGroupPartitionMetadataKey
from protocol.messages.consumer_group_target_assignment_member_key import ConsumerGroupTargetAssignmentMemberKey
from protocol.messages.consumer_group_target_assignment_metadata_key import ConsumerGroupTargetAssignmentMetadataKey
from protocol.messages.consumer_group_target_assignment_metadata_value import (
    ConsumerGroupTargetAssignmentMetadataValue,
)

T = TypeVar("T")


def _record(key: OffsetsKey, value: RecordValue | None) -> CoordinatorRecord:
    return CoordinatorRecord(
        key=key,
        key_version=write_key_version(key),
        value=value,
        value_version=TOMBSTONE_VERSION if value is None else CONSUMER_GROUP_VALUE_VERSION,
    )


# -- topic partitions on the wire and in records ------------------------------------------------------------


def by_topic(partitions: Partitions) -> dict[str, list[int]]:
    """(topic id, partition) pairs as topic id -> partitions, topics and partitions ascending (Kafka's order):
    the one grouping every answer, record and view of partitions uses."""
    grouped: dict[str, list[int]] = {}
    for topic_id, index in partitions:
        grouped.setdefault(topic_id, []).append(index)
    return {topic_id: sorted(grouped[topic_id]) for topic_id in sorted(grouped)}


def topic_partitions(partitions: Partitions, make: Callable[[uuid.UUID, list[int]], T]) -> list[T]:
    """(topic id, partition) pairs as one entry per topic, topics and partitions ascending (Kafka's order)."""
    return [make(kafka_uuid_from_str(topic), parts) for topic, parts in by_topic(partitions).items()]


def assignment_partitions(assignment: MemberAssignment) -> Partitions:
    """A target assignment (topic id -> partitions) as a set of pairs."""
    return frozenset((topic, index) for topic, parts in assignment.items() for index in parts)


def partitions_from(entries: Iterable[tuple[uuid.UUID, Iterable[int]]]) -> Partitions:
    """Pairs from wire/record entries (topic id, partitions)."""
    return frozenset((kafka_uuid_to_str(topic_id), index) for topic_id, parts in entries for index in parts)


def assignment_from(partitions: Partitions) -> MemberAssignment:
    return {topic: frozenset(parts) for topic, parts in by_topic(partitions).items()}


# -- group-level records ------------------------------------------------------------------------------------


def group_epoch_record(group_id: str, epoch: int) -> CoordinatorRecord:
    return _record(ConsumerGroupMetadataKey(group_id=group_id), ConsumerGroupMetadataValue(epoch=epoch))


def subscription_metadata_record(group_id: str, topics: Mapping[str, TopicImage]) -> CoordinatorRecord:
    value = partition_value.ConsumerGroupPartitionMetadataValue(
        topics=[
            partition_value.TopicMetadata(
                topic_id=kafka_uuid_from_str(image.topic_id), topic_name=image.name, num_partitions=image.partitions
            )
            for _, image in sorted(topics.items())
        ]
    )
    return _record(ConsumerGroupPartitionMetadataKey(group_id=group_id), value)


def target_epoch_record(group_id: str, epoch: int) -> CoordinatorRecord:
    return _record(
        ConsumerGroupTargetAssignmentMetadataKey(group_id=group_id),
        ConsumerGroupTargetAssignmentMetadataValue(assignment_epoch=epoch),
    )


def group_tombstones(group_id: str) -> list[CoordinatorRecord]:
    """Kafka's `createGroupTombstoneRecords` tail, after every member's tombstones: target metadata, partition
    metadata, then the group epoch record."""
    return [
        _record(ConsumerGroupTargetAssignmentMetadataKey(group_id=group_id), None),
        _record(ConsumerGroupPartitionMetadataKey(group_id=group_id), None),
        _record(ConsumerGroupMetadataKey(group_id=group_id), None),
    ]


# -- member records -----------------------------------------------------------------------------------------


def member_metadata_record(group_id: str, member: ConsumerGroupMember) -> CoordinatorRecord:
    classic = member.classic
    value = member_value.ConsumerGroupMemberMetadataValue(
        instance_id=member.instance_id,
        rack_id=member.rack_id,
        client_id=member.client_id,
        client_host=member.client_host,
        subscribed_topic_names=list(member.subscribed_topic_names),
        subscribed_topic_regex=member.subscribed_topic_regex,
        rebalance_timeout_ms=member.rebalance_timeout_ms,
        server_assignor=member.server_assignor,
        classic_member_metadata=None
        if classic is None
        else member_value.ClassicMemberMetadata(
            session_timeout_ms=classic.session_timeout_ms,
            supported_protocols=[member_value.ClassicProtocol(name=n, metadata=m) for n, m in classic.protocols],
        ),
    )
    return _record(ConsumerGroupMemberMetadataKey(group_id=group_id, member_id=member.member_id), value)


def target_member_record(group_id: str, member_id: str, assignment: MemberAssignment) -> CoordinatorRecord:
    value = target_value.ConsumerGroupTargetAssignmentMemberValue(
        topic_partitions=topic_partitions(
            assignment_partitions(assignment),
            lambda t, p: target_value.TopicPartition(topic_id=t, partitions=p),
        )
    )
    return _record(ConsumerGroupTargetAssignmentMemberKey(group_id=group_id, member_id=member_id), value)


def current_assignment_record(group_id: str, member_id: str, state: MemberAssignmentState) -> CoordinatorRecord:
    def make(t: uuid.UUID, p: list[int]) -> current_value.TopicPartitions:
        return current_value.TopicPartitions(topic_id=t, partitions=p)

    value = current_value.ConsumerGroupCurrentMemberAssignmentValue(
        member_epoch=state.member_epoch,
        previous_member_epoch=state.previous_member_epoch,
        state=int(state.state),
        assigned_partitions=topic_partitions(state.assigned_partitions, make),
        partitions_pending_revocation=topic_partitions(state.partitions_pending_revocation, make),
    )
    return _record(ConsumerGroupCurrentMemberAssignmentKey(group_id=group_id, member_id=member_id), value)


def member_tombstones(group_id: str, member_id: str) -> list[CoordinatorRecord]:
    """Kafka's order when a member leaves or is fenced: current assignment, target assignment, metadata."""
    return [
        _record(ConsumerGroupCurrentMemberAssignmentKey(group_id=group_id, member_id=member_id), None),
        _record(ConsumerGroupTargetAssignmentMemberKey(group_id=group_id, member_id=member_id), None),
        _record(ConsumerGroupMemberMetadataKey(group_id=group_id, member_id=member_id), None),
    ]


def assignment_state_from(value: current_value.ConsumerGroupCurrentMemberAssignmentValue) -> MemberAssignmentState:
    return MemberAssignmentState(
        member_epoch=value.member_epoch,
        previous_member_epoch=value.previous_member_epoch,
        state=MemberState.from_value(value.state),
        assigned_partitions=partitions_from((t.topic_id, t.partitions) for t in value.assigned_partitions),
        partitions_pending_revocation=partitions_from(
            (t.topic_id, t.partitions) for t in value.partitions_pending_revocation
        ),
    )
