"""ConsumerGroupDescribe (K41-K42): a consumer group's epochs, assignor and each member's current and target
assignment, with topic names looked up in the broker's metadata as Kafka does."""

from __future__ import annotations

from coordinator.consumer_group.group import ConsumerGroup
from coordinator.consumer_group.member import ConsumerGroupMember
from coordinator.consumer_group.member_state import Partitions
from coordinator.consumer_group.records import assignment_partitions, by_topic
from coordinator.consumer_group.target import preferred_assignor
from coordinator.group_base import GroupManagerBase
from protocol.errors import ErrorCode
from protocol.kafka_uuid import kafka_uuid_from_str
from protocol.messages.consumer_group_describe import (
    Assignment,
    ConsumerGroupDescribeRequest,
    ConsumerGroupDescribeResponse,
    DescribedGroup,
    Member,
    TopicPartitions,
)

CLASSIC_MEMBER = 0
CONSUMER_MEMBER = 1
"""ConsumerGroupDescribe v1's MemberType (KIP-1099): which protocol a member speaks (the Java admin client's
`MemberDescription.upgraded()`)."""


class ConsumerGroupDescribeMixin(GroupManagerBase):
    """ConsumerGroupDescribe."""

    def consumer_group_describe(self, request: ConsumerGroupDescribeRequest) -> ConsumerGroupDescribeResponse:
        """Authorized operations are the broker's to fill in (it knows the authorizer)."""
        return ConsumerGroupDescribeResponse(groups=[self._describe_consumer_group(g) for g in request.group_ids])

    def _describe_consumer_group(self, group_id: str) -> DescribedGroup:
        error = self._gate(group_id, allow_empty_id=False)
        if error is not None:
            return DescribedGroup(group_id=group_id, error_code=error)
        group = self._live_consumer_group(group_id)
        if group is None:
            return DescribedGroup(
                group_id=group_id,
                error_code=ErrorCode.GROUP_ID_NOT_FOUND,
                error_message=self._consumer_group_not_found(group_id),
            )
        return DescribedGroup(
            group_id=group_id,
            group_state=group.state.value,
            group_epoch=group.group_epoch,
            assignment_epoch=group.assignment_epoch,
            assignor_name=preferred_assignor(group, self._config.consumer_group_assignors),
            members=[self._describe_member(group, m) for m in group.members.values()],
        )

    def _describe_member(self, group: ConsumerGroup, member: ConsumerGroupMember) -> Member:
        return Member(
            member_id=member.member_id,
            instance_id=member.instance_id,
            rack_id=member.rack_id,
            member_epoch=member.member_epoch,
            client_id=member.client_id,
            client_host=member.client_host,
            subscribed_topic_names=list(member.subscribed_topic_names),
            subscribed_topic_regex=member.subscribed_topic_regex or "",  # Kafka's member default: "" (no regex)
            assignment=self._named_assignment(member.assignment.assigned_partitions),
            target_assignment=self._named_assignment(assignment_partitions(group.target_of(member.member_id))),
            member_type=CLASSIC_MEMBER if member.uses_classic_protocol else CONSUMER_MEMBER,
        )

    def _named_assignment(self, partitions: Partitions) -> Assignment:
        """Partitions per topic with the topic's current name; a topic that no longer exists is left out."""
        entries: list[TopicPartitions] = []
        for topic_id, indexes in by_topic(partitions).items():
            image = self._topics.by_id(topic_id)
            if image is None:
                continue
            entries.append(
                TopicPartitions(topic_id=kafka_uuid_from_str(topic_id), topic_name=image.name, partitions=indexes)
            )
        return Assignment(topic_partitions=entries)
