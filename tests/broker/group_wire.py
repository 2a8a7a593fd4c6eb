"""Group requests over the wire for broker tests: a member's JoinGroup/SyncGroup handshake, DescribeGroups, and the
consumer-protocol blobs they carry (shared by the group and connection tests)."""

from __future__ import annotations

from typing import Any

from protocol.consumer_protocol import encode_assignment, encode_subscription
from protocol.errors import ErrorCode
from protocol.messages.consumer_protocol_assignment import ConsumerProtocolAssignment
from protocol.messages.consumer_protocol_assignment import TopicPartition as AssignedPartitions
from protocol.messages.consumer_protocol_subscription import ConsumerProtocolSubscription
from protocol.messages.describe_groups import DescribeGroupsRequest
from protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol
from protocol.messages.sync_group import SyncGroupRequest, SyncGroupRequestAssignment
from protocol.registry import ApiKey
from tests.broker.wire import WireClient


def subscription(*topics: str) -> bytes:
    return encode_subscription(ConsumerProtocolSubscription(topics=list(topics)), 1)


def assignment(topic: str, *partitions: int) -> bytes:
    return encode_assignment(
        ConsumerProtocolAssignment(assigned_partitions=[AssignedPartitions(topic=topic, partitions=list(partitions))]),
        1,
    )


def join_request(group: str, member_id: str = "", *, session_ms: int = 10_000) -> JoinGroupRequest:
    return JoinGroupRequest(
        group_id=group,
        session_timeout_ms=session_ms,
        rebalance_timeout_ms=30_000,
        member_id=member_id,
        protocol_type="consumer",
        protocols=[JoinGroupRequestProtocol(name="range", metadata=subscription("orders"))],
        reason="test" if member_id else None,
    )


async def describe(client: WireClient, group: str) -> Any:
    [described] = (await client.call(ApiKey.DESCRIBE_GROUPS, 5, DescribeGroupsRequest(groups=[group]))).groups
    assert described.error_code == ErrorCode.NONE
    return described


async def join_and_sync(client: WireClient, group: str) -> tuple[str, int]:
    member = (await client.call(ApiKey.JOIN_GROUP, 5, join_request(group))).member_id
    joined = await client.call(ApiKey.JOIN_GROUP, 5, join_request(group, member))
    assert joined.error_code == ErrorCode.NONE
    sync = SyncGroupRequest(
        group_id=group,
        generation_id=joined.generation_id,
        member_id=member,
        assignments=[SyncGroupRequestAssignment(member_id=member, assignment=assignment("orders", 0))],
    )
    assert (await client.call(ApiKey.SYNC_GROUP, 3, sync)).error_code == ErrorCode.NONE
    return member, joined.generation_id
