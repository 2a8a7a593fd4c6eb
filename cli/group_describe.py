"""What `kafka-consumer-groups.sh --describe` learns about a group, for either group type.

Kafka 4's tool describes a consumer (KIP-848) group with ConsumerGroupDescribe (epochs, the server-side assignor,
each member's current and target assignment by topic name) and a classic group with DescribeGroups (its members'
assignments are the consumer protocol's bytes). ConsumerGroupDescribe answers GROUP_ID_NOT_FOUND for a classic
group, so the CLI asks it first and falls back, as Kafka's admin client does; against a broker without the API it
asks DescribeGroups only.
"""

from __future__ import annotations

from dataclasses import dataclass

from cli.kafka_client import KafkaClient, KafkaClientError
from protocol.consumer_protocol import decode_assignment
from protocol.errors import DecodeError, ErrorCode
from protocol.messages.consumer_group_describe import Assignment, ConsumerGroupDescribeRequest
from protocol.messages.describe_groups import DescribeGroupsRequest
from protocol.registry import ApiKey

TopicPartitions = dict[str, list[int]]


@dataclass(frozen=True, slots=True)
class MemberDescription:
    consumer_id: str
    instance_id: str | None
    host: str
    client_id: str
    assignment: TopicPartitions
    current_epoch: int | None = None
    target_assignment: TopicPartitions | None = None
    target_epoch: int | None = None

    @property
    def partitions(self) -> int:
        return sum(len(p) for p in self.assignment.values())


@dataclass(frozen=True, slots=True)
class GroupDescription:
    group_id: str
    group_type: str
    """`consumer` (KIP-848) or `classic`."""
    state: str
    assignment_strategy: str
    coordinator: tuple[str, int, int]
    """host, port, node id."""
    members: list[MemberDescription]
    group_epoch: int | None = None
    assignment_epoch: int | None = None


def describe(client: KafkaClient, group_id: str) -> GroupDescription:
    coordinator = client.find_coordinator(group_id)
    connection = client.coordinator(group_id)
    if ApiKey.CONSUMER_GROUP_DESCRIBE in connection.versions:
        _, response = connection.call(
            ApiKey.CONSUMER_GROUP_DESCRIBE, ConsumerGroupDescribeRequest(group_ids=[group_id])
        )
        group = response.groups[0]
        if group.error_code == ErrorCode.NONE:
            members = [
                MemberDescription(
                    m.member_id,
                    m.instance_id,
                    m.client_host,
                    m.client_id,
                    _by_topic(m.assignment),
                    m.member_epoch,
                    _by_topic(m.target_assignment),
                    group.assignment_epoch,
                )
                for m in group.members
            ]
            return GroupDescription(
                group_id,
                "consumer",
                group.group_state,
                group.assignor_name,
                coordinator,
                members,
                group.group_epoch,
                group.assignment_epoch,
            )
        if group.error_code != ErrorCode.GROUP_ID_NOT_FOUND:
            raise KafkaClientError(f"ConsumerGroupDescribe {group_id}: {ErrorCode(group.error_code).name}")
    _, described = connection.call(ApiKey.DESCRIBE_GROUPS, DescribeGroupsRequest(groups=[group_id]))
    classic = described.groups[0]
    if classic.error_code != ErrorCode.NONE:
        raise KafkaClientError(f"DescribeGroups {group_id}: {ErrorCode(classic.error_code).name}")
    return GroupDescription(
        group_id,
        "classic",
        classic.group_state,
        classic.protocol_data,
        coordinator,
        [
            MemberDescription(
                m.member_id, m.group_instance_id, m.client_host, m.client_id, _classic_assignment(m.member_assignment)
            )
            for m in classic.members
        ],
    )


def _by_topic(assignment: Assignment) -> TopicPartitions:
    return {tp.topic_name: sorted(tp.partitions) for tp in assignment.topic_partitions}


def _classic_assignment(data: bytes) -> TopicPartitions:
    """The consumer protocol's assignment bytes by topic; {} when empty or not the consumer protocol's."""
    if not data:
        return {}
    try:
        assignment = decode_assignment(data)
    except DecodeError:
        return {}
    return {tp.topic: sorted(tp.partitions) for tp in assignment.assigned_partitions}
