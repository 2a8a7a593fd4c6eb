"""How the state of one group type maps onto the other (Kafka's `ConsumerGroup.fromClassicGroup`,
`ConsumerGroup.createConsumerGroupRecords` and `ClassicGroup.fromConsumerGroup`), as pure functions.

The two protocols describe the same facts differently: a classic member's subscription and assignment are opaque
ConsumerProtocol bytes with topic NAMES, chosen by a leader for a generation; a consumer-group member's are typed
fields with topic IDS, chosen by the coordinator for a group epoch. Converting maps generation <-> epoch, bytes <->
fields and names <-> ids through the topic catalog (a topic the catalog does not know is dropped: it cannot be
assigned anyway). Timers, maps and responses belong to the migration mixin (migration.py).
"""

from __future__ import annotations

from collections.abc import Iterable

from coordinator.consumer_group.assignor_spec import MemberAssignment
from coordinator.consumer_group.group import ConsumerGroup
from coordinator.consumer_group.member import ClassicProtocols, ConsumerGroupMember
from coordinator.consumer_group.member_state import MemberAssignmentState, MemberState, Partitions
from coordinator.consumer_group.records import (
    assignment_from,
    assignment_partitions,
    by_topic,
    current_assignment_record,
    group_epoch_record,
    member_metadata_record,
    target_epoch_record,
    target_member_record,
)
from coordinator.consumer_group.topics import TopicCatalog
from coordinator.errors import GroupError
from coordinator.group import CONSUMER_PROTOCOL_TYPE, ClassicGroup
from coordinator.member import ClassicMember
from coordinator.records import CoordinatorRecord
from coordinator.state import GroupState
from protocol.consumer_protocol import decode_assignment, decode_subscription, encode_assignment
from protocol.errors import DecodeError, ErrorCode
from protocol.messages.consumer_protocol_assignment import ConsumerProtocolAssignment
from protocol.messages.consumer_protocol_assignment import TopicPartition as AssignedTopic
from protocol.messages.consumer_protocol_subscription import ConsumerProtocolSubscription

MAX_CONSUMER_PROTOCOL_VERSION = 3


def upgrade_error(group_id: str, why: str) -> GroupError:
    """M3/M7: every refused upgrade is GROUP_ID_NOT_FOUND with this message (the client gives up on the group)."""
    return GroupError(
        ErrorCode.GROUP_ID_NOT_FOUND, f"Cannot upgrade classic group {group_id} to consumer group because {why}"
    )


def parse_subscription(metadata: bytes) -> ConsumerProtocolSubscription:
    """A JoinGroup protocol's metadata as a ConsumerProtocol subscription (DecodeError/ValueError if it is not)."""
    return decode_subscription(metadata)


def subscription_version(metadata: bytes) -> int:
    """The ConsumerProtocol version a member speaks, read off its subscription (0 when unreadable); SyncGroup
    answers its assignment in the same version (M20)."""
    if len(metadata) < 2:
        return 0
    return max(0, min(int.from_bytes(metadata[:2], "big", signed=True), MAX_CONSUMER_PROTOCOL_VERSION))


def names_to_partitions(topics: TopicCatalog, entries: Iterable[tuple[str, Iterable[int]]]) -> Partitions:
    """(topic name, partitions) entries as (topic id, partition) pairs; unknown topics are dropped."""
    pairs: set[tuple[str, int]] = set()
    for name, partitions in entries:
        image = topics.by_name(name)
        if image is not None:
            pairs.update((image.topic_id, p) for p in partitions)
    return frozenset(pairs)


def encode_partitions(topics: TopicCatalog, partitions: Partitions, version: int) -> bytes:
    """(topic id, partition) pairs as a ConsumerProtocol assignment with topic names, topics and partitions in
    ascending order; topics the catalog no longer knows are left out."""
    by_name: list[AssignedTopic] = []
    for topic_id, indexes in by_topic(partitions).items():
        image = topics.by_id(topic_id)
        if image is not None:
            by_name.append(AssignedTopic(topic=image.name, partitions=indexes))
    value = ConsumerProtocolAssignment(assigned_partitions=sorted(by_name, key=lambda topic: topic.topic))
    return encode_assignment(value, version)


def _converted_member(
    classic: ClassicGroup, member: ClassicMember, topics: TopicCatalog
) -> tuple[ConsumerGroupMember, MemberAssignment]:
    """M8 for one member: STABLE at the generation, holding what its classic assignment says."""
    protocol = classic.protocol_name or member.protocols[0][0]
    try:
        subscription = parse_subscription(member.metadata(protocol))
        assignment = decode_assignment(member.assignment) if member.assignment else ConsumerProtocolAssignment()
    except (DecodeError, KeyError, ValueError) as e:
        raise upgrade_error(classic.group_id, "the embedded consumer protocol is malformed.") from e
    if assignment.user_data:
        raise upgrade_error(
            classic.group_id,
            "an unsupported custom assignor is in use. Please refer to the documentation or switch to a default"
            " assignor before re-attempting the upgrade.",
        )
    owned = names_to_partitions(topics, ((t.topic, t.partitions) for t in assignment.assigned_partitions))
    generation = classic.generation_id
    converted = ConsumerGroupMember(
        member_id=member.member_id,
        instance_id=member.group_instance_id,
        rack_id=subscription.rack_id,
        client_id=member.client_id,
        client_host=member.client_host,
        subscribed_topic_names=tuple(sorted(set(subscription.topics))),
        rebalance_timeout_ms=member.rebalance_timeout_ms,
        assignment=MemberAssignmentState(
            member_epoch=generation,
            previous_member_epoch=generation,
            state=MemberState.STABLE,
            assigned_partitions=owned,
        ),
        classic=ClassicProtocols(member.session_timeout_ms, member.protocols),
    )
    return converted, assignment_from(owned)


def fill_from_classic(group: ConsumerGroup, classic: ClassicGroup, topics: TopicCatalog) -> None:
    """M8: make the (new, empty) consumer group `group` what the classic group is, epochs = generation.

    Raises GROUP_ID_NOT_FOUND with Kafka's message when a member's ConsumerProtocol bytes do not parse or its
    assignment carries user data (a custom assignor whose state the server-side assignors cannot keep)."""
    converted = [_converted_member(classic, m, topics) for m in classic.members.values()]
    group.group_epoch = classic.generation_id
    group.assignment_epoch = classic.generation_id
    for member, target in converted:
        overlap = group.held_elsewhere(member)
        if overlap is not None:
            # Kafka's fromClassicGroup throws IllegalStateException here, which the request answers as
            # UNKNOWN_SERVER_ERROR.
            raise GroupError(
                ErrorCode.UNKNOWN_SERVER_ERROR,
                f"Cannot upgrade classic group {classic.group_id}: partition {overlap[0]} is assigned to both"
                f" {overlap[1]} and {member.member_id}.",
            )
        group.put_member(member)
        group.target[member.member_id] = target


def consumer_group_records(group: ConsumerGroup) -> list[CoordinatorRecord]:
    """M9 (`createConsumerGroupRecords`): every member's metadata, the group epoch, every member's target, the
    assignment epoch, then every member's current assignment."""
    group_id = group.group_id
    members = list(group.members.values())
    return [
        *(member_metadata_record(group_id, m) for m in members),
        group_epoch_record(group_id, group.group_epoch),
        *(target_member_record(group_id, m.member_id, group.target_of(m.member_id)) for m in members),
        target_epoch_record(group_id, group.assignment_epoch),
        *(current_assignment_record(group_id, m.member_id, m.assignment) for m in members),
    ]


def classic_group_from(
    group: ConsumerGroup, members: Iterable[ConsumerGroupMember], topics: TopicCatalog, wall_ms: int
) -> tuple[ClassicGroup, dict[str, bytes]]:
    """M33 (`ClassicGroup.fromConsumerGroup`): a STABLE classic group at generation = the group epoch whose
    members are `members` (all classic), each assigned its TARGET partitions in its ConsumerProtocol version;
    the protocol is the classic vote among the members' protocols. Returns the group and its assignments."""
    classic = ClassicGroup(
        group.group_id,
        group.partition,
        state=GroupState.STABLE,
        state_timestamp_ms=wall_ms,
        generation_id=group.group_epoch,
        protocol_type=CONSUMER_PROTOCOL_TYPE,
    )
    for member in members:
        assert member.classic is not None, "only classic members are carried into a classic group"
        classic.add(
            ClassicMember(
                member_id=member.member_id,
                group_instance_id=member.instance_id,
                client_id=member.client_id,
                client_host=member.client_host,
                rebalance_timeout_ms=member.rebalance_timeout_ms,
                session_timeout_ms=member.classic.session_timeout_ms,
                protocol_type=CONSUMER_PROTOCOL_TYPE,
                protocols=member.classic.protocols,
            ),
            None,
        )
    classic.protocol_name = classic.select_protocol()
    assignments: dict[str, bytes] = {}
    for member in members:
        classic_member = classic.members[member.member_id]
        version = subscription_version(classic_member.metadata(classic.protocol_name))
        classic_member.assignment = encode_partitions(
            topics, assignment_partitions(group.target_of(member.member_id)), version
        )
        assignments[member.member_id] = classic_member.assignment
    return classic, assignments
