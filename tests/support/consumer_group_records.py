"""One record of each KIP-848 consumer-group type (`__consumer_offsets` key versions 3-8) and a tombstone, for the
tests of the tools and the loader that must read a log holding them."""

from __future__ import annotations

import uuid
from typing import Any

from protocol import consumer_offsets
from protocol.messages.consumer_group_current_member_assignment_key import ConsumerGroupCurrentMemberAssignmentKey
from protocol.messages.consumer_group_current_member_assignment_value import (
    ConsumerGroupCurrentMemberAssignmentValue,
    TopicPartitions,
)
from protocol.messages.consumer_group_member_metadata_key import ConsumerGroupMemberMetadataKey
from protocol.messages.consumer_group_member_metadata_value import (
    ClassicMemberMetadata,
    ClassicProtocol,
    ConsumerGroupMemberMetadataValue,
)
from protocol.messages.consumer_group_metadata_key import ConsumerGroupMetadataKey
from protocol.messages.consumer_group_metadata_value import ConsumerGroupMetadataValue
from protocol.messages.consumer_group_partition_metadata_key import ConsumerGroupPartitionMetadataKey
from protocol.messages.consumer_group_partition_metadata_value import ConsumerGroupPartitionMetadataValue, TopicMetadata
from protocol.messages.consumer_group_target_assignment_member_key import ConsumerGroupTargetAssignmentMemberKey
from protocol.messages.consumer_group_target_assignment_member_value import ConsumerGroupTargetAssignmentMemberValue
from protocol.messages.consumer_group_target_assignment_member_value import TopicPartition as TargetPartition
from protocol.messages.consumer_group_target_assignment_metadata_key import ConsumerGroupTargetAssignmentMetadataKey
from protocol.messages.consumer_group_target_assignment_metadata_value import (
    ConsumerGroupTargetAssignmentMetadataValue,
)

TOPIC_ID = uuid.UUID(int=1)


def consumer_group_records(group_id: str = "cg") -> list[tuple[Any, Any]]:
    """(key, value) pairs in the order Kafka's coordinator writes a member joining, then a removed member's
    tombstone."""
    return [
        (ConsumerGroupMetadataKey(group_id=group_id), ConsumerGroupMetadataValue(epoch=3)),
        (
            ConsumerGroupPartitionMetadataKey(group_id=group_id),
            ConsumerGroupPartitionMetadataValue(
                topics=[TopicMetadata(topic_id=TOPIC_ID, topic_name="orders", num_partitions=2)]
            ),
        ),
        (
            ConsumerGroupMemberMetadataKey(group_id=group_id, member_id="m1"),
            ConsumerGroupMemberMetadataValue(
                instance_id=None,
                rack_id=None,
                subscribed_topic_regex=None,
                client_id="c1",
                client_host="/127.0.0.1",
                subscribed_topic_names=["orders"],
                rebalance_timeout_ms=300_000,
                server_assignor="uniform",
                classic_member_metadata=ClassicMemberMetadata(
                    session_timeout_ms=45_000, supported_protocols=[ClassicProtocol(name="range", metadata=b"\x01\x02")]
                ),
            ),
        ),
        (
            ConsumerGroupTargetAssignmentMetadataKey(group_id=group_id),
            ConsumerGroupTargetAssignmentMetadataValue(assignment_epoch=3),
        ),
        (
            ConsumerGroupTargetAssignmentMemberKey(group_id=group_id, member_id="m1"),
            ConsumerGroupTargetAssignmentMemberValue(
                topic_partitions=[TargetPartition(topic_id=TOPIC_ID, partitions=[0, 1])]
            ),
        ),
        (
            ConsumerGroupCurrentMemberAssignmentKey(group_id=group_id, member_id="m1"),
            ConsumerGroupCurrentMemberAssignmentValue(
                member_epoch=3,
                previous_member_epoch=2,
                assigned_partitions=[TopicPartitions(topic_id=TOPIC_ID, partitions=[0])],
                partitions_pending_revocation=[TopicPartitions(topic_id=TOPIC_ID, partitions=[1])],
            ),
        ),
        (ConsumerGroupCurrentMemberAssignmentKey(group_id=group_id, member_id="gone"), None),
    ]


def consumer_group_record_bytes(group_id: str = "cg") -> list[tuple[bytes, bytes | None]]:
    """The same records as the log holds them."""
    return [
        (consumer_offsets.encode_key(key), consumer_offsets.encode_value(value))
        for key, value in consumer_group_records(group_id)
    ]
