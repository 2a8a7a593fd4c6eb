"""Replaying a partition's consumer-group records (types 3-8) into consumer groups (K56-K57).

Records are folded in log order, last write wins per key, tombstones delete, exactly what the log means whether
or not it has been compacted. A group exists once its ConsumerGroupMetadata (epoch) record does; a member once
its MemberMetadata does, with the reconciliation state of its CurrentMemberAssignment (a tombstone or none:
epoch 0, nothing assigned). The group resumes with the same epochs, target and member states, so a group loaded
mid-reconciliation carries on where it stopped. Timers are the manager's to arm (`install_consumer_groups`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeVar

from coordinator.consumer_group.assignor_spec import MemberAssignment
from coordinator.consumer_group.group import ConsumerGroup
from coordinator.consumer_group.member import ClassicProtocols, ConsumerGroupMember
from coordinator.consumer_group.member_state import MemberAssignmentState
from coordinator.consumer_group.records import assignment_from, assignment_state_from, partitions_from
from coordinator.consumer_group.topics import TopicImage
from protocol.consumer_offsets import ConsumerGroupKey, ConsumerGroupValue
from protocol.kafka_uuid import kafka_uuid_to_str
from protocol.messages.consumer_group_current_member_assignment_key import ConsumerGroupCurrentMemberAssignmentKey
from protocol.messages.consumer_group_current_member_assignment_value import (
    ConsumerGroupCurrentMemberAssignmentValue,
)
from protocol.messages.consumer_group_member_metadata_key import ConsumerGroupMemberMetadataKey
from protocol.messages.consumer_group_member_metadata_value import (
    ConsumerGroupMemberMetadataValue,
)
from protocol.messages.consumer_group_metadata_key import ConsumerGroupMetadataKey
from protocol.messages.consumer_group_metadata_value import ConsumerGroupMetadataValue
from protocol.messages.consumer_group_partition_metadata_key import ConsumerGroupPartitionMetadataKey
from protocol.messages.consumer_group_partition_metadata_value import ConsumerGroupPartitionMetadataValue
from protocol.messages.consumer_group_target_assignment_member_key import ConsumerGroupTargetAssignmentMemberKey
from protocol.messages.consumer_group_target_assignment_member_value import (
    ConsumerGroupTargetAssignmentMemberValue,
)
from protocol.messages.consumer_group_target_assignment_metadata_key import ConsumerGroupTargetAssignmentMetadataKey
from protocol.messages.consumer_group_target_assignment_metadata_value import (
    ConsumerGroupTargetAssignmentMetadataValue,
)

T = TypeVar("T")
_OTHER_TYPE = "consumer group key with a value of another type"


@dataclass(slots=True)
class _Replayed:
    """One group's records as folded so far."""

    epoch: int | None = None
    assignment_epoch: int = 0
    metadata: dict[str, TopicImage] = field(default_factory=dict)
    members: dict[str, ConsumerGroupMemberMetadataValue] = field(default_factory=dict)
    targets: dict[str, MemberAssignment] = field(default_factory=dict)
    current: dict[str, MemberAssignmentState] = field(default_factory=dict)


class ConsumerGroupReplay:
    """Folds consumer-group records; `groups(partition)` builds the groups at the end."""

    def __init__(self) -> None:
        self._groups: dict[str, _Replayed] = {}

    def apply(self, key: ConsumerGroupKey, value: ConsumerGroupValue | None) -> str | None:
        """Fold one record; None when folded, else why it is skipped (a damaged record: a value that does not
        belong to its key, or a member no handler could serve)."""
        state = self._groups.setdefault(key.group_id, _Replayed())
        if isinstance(key, ConsumerGroupMetadataKey):
            if value is None:
                self._groups[key.group_id] = _Replayed()
                return None
            if not isinstance(value, ConsumerGroupMetadataValue):
                return _OTHER_TYPE
            state.epoch = value.epoch
        elif isinstance(key, ConsumerGroupPartitionMetadataKey):
            if value is not None and not isinstance(value, ConsumerGroupPartitionMetadataValue):
                return _OTHER_TYPE
            state.metadata = {} if value is None else _metadata(value)
        elif isinstance(key, ConsumerGroupMemberMetadataKey):
            if value is not None and not isinstance(value, ConsumerGroupMemberMetadataValue):
                return _OTHER_TYPE
            classic = None if value is None else value.classic_member_metadata
            if classic is not None and not classic.supported_protocols:
                return "consumer group member with classic metadata but no protocol"
            _put(state.members, key.member_id, value)
        elif isinstance(key, ConsumerGroupTargetAssignmentMetadataKey):
            if value is not None and not isinstance(value, ConsumerGroupTargetAssignmentMetadataValue):
                return _OTHER_TYPE
            state.assignment_epoch = 0 if value is None else value.assignment_epoch
        elif isinstance(key, ConsumerGroupTargetAssignmentMemberKey):
            if value is not None and not isinstance(value, ConsumerGroupTargetAssignmentMemberValue):
                return _OTHER_TYPE
            target = None
            if value is not None:
                target = assignment_from(partitions_from((t.topic_id, t.partitions) for t in value.topic_partitions))
            _put(state.targets, key.member_id, target)
        elif isinstance(key, ConsumerGroupCurrentMemberAssignmentKey):
            if value is not None and not isinstance(value, ConsumerGroupCurrentMemberAssignmentValue):
                return _OTHER_TYPE
            _put(state.current, key.member_id, None if value is None else assignment_state_from(value))
        return None

    def group_ids(self) -> set[str]:
        """Groups that exist at the end of the log (their epoch record is live)."""
        return {group_id for group_id, state in self._groups.items() if state.epoch is not None}

    def groups(self, partition: int) -> dict[str, ConsumerGroup]:
        built: dict[str, ConsumerGroup] = {}
        for group_id, state in sorted(self._groups.items()):
            if state.epoch is None:
                continue
            group = ConsumerGroup(group_id, partition)
            group.group_epoch = state.epoch
            group.assignment_epoch = state.assignment_epoch
            group.subscription_metadata = dict(state.metadata)
            for member_id, value in state.members.items():
                member = _member(member_id, value, state.current.get(member_id, MemberAssignmentState()))
                overlap = group.held_elsewhere(member)
                if overlap is not None:  # Kafka's replay throws IllegalStateException: the load fails
                    raise ValueError(
                        f"consumer group {group_id}: partition {overlap[0]} is held by both {overlap[1]} and"
                        f" {member_id}"
                    )
                group.put_member(member)
                group.target[member_id] = state.targets.get(member_id, {})
            group.state = group.computed_state()
            built[group_id] = group
        return built


def _put(mapping: dict[str, T], key: str, value: T | None) -> None:
    if value is None:
        mapping.pop(key, None)
    else:
        mapping[key] = value


def _metadata(value: ConsumerGroupPartitionMetadataValue) -> dict[str, TopicImage]:
    return {
        t.topic_name: TopicImage(kafka_uuid_to_str(t.topic_id), t.topic_name, t.num_partitions) for t in value.topics
    }


def _member(
    member_id: str, value: ConsumerGroupMemberMetadataValue, assignment: MemberAssignmentState
) -> ConsumerGroupMember:
    classic = value.classic_member_metadata
    return ConsumerGroupMember(
        member_id=member_id,
        instance_id=value.instance_id,
        rack_id=value.rack_id,
        client_id=value.client_id,
        client_host=value.client_host,
        subscribed_topic_names=tuple(sorted(set(value.subscribed_topic_names))),
        subscribed_topic_regex=value.subscribed_topic_regex or None,
        rebalance_timeout_ms=value.rebalance_timeout_ms,
        server_assignor=value.server_assignor,
        assignment=assignment,
        classic=None
        if classic is None
        else ClassicProtocols(
            classic.session_timeout_ms, tuple((p.name, p.metadata) for p in classic.supported_protocols)
        ),
    )
