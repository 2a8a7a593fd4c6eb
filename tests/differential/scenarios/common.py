"""Requests the scenarios share: a member's JoinGroup, a topic to commit to, a describe. Each call records."""

from __future__ import annotations

from typing import Any

from protocol.messages.create_topics import CreatableTopic, CreateTopicsRequest
from protocol.messages.describe_groups import DescribeGroupsRequest
from protocol.messages.heartbeat import HeartbeatRequest
from protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol
from protocol.messages.sync_group import SyncGroupRequest
from protocol.registry import ApiKey
from tests.broker.group_wire import assignment, subscription
from tests.coordinator.harness import CoordinatorTestContext
from tests.differential.session import Conn, Pending, Session

JOIN_V = 9
SYNC_V = 5
HEARTBEAT_V = 4
DESCRIBE_V = 5


def join_body(
    group: str,
    member_id: str = "",
    *,
    session_ms: int = 6000,
    rebalance_ms: int = 6000,
    instance_id: str | None = None,
    protocols: tuple[tuple[str, bytes], ...] | None = None,
    topics: tuple[str, ...] = ("orders",),
) -> JoinGroupRequest:
    offered = protocols if protocols is not None else (("range", subscription(*topics)),)
    return JoinGroupRequest(
        group_id=group,
        session_timeout_ms=session_ms,
        rebalance_timeout_ms=rebalance_ms,
        member_id=member_id,
        group_instance_id=instance_id,
        protocol_type="consumer",
        protocols=[JoinGroupRequestProtocol(name=name, metadata=meta) for name, meta in offered],
        reason=None,
    )


def send_join(conn: Conn, group: str, member_id: str = "", version: int = JOIN_V, **kw: Any) -> Pending:
    return conn.send(ApiKey.JOIN_GROUP, version, join_body(group, member_id, **kw))


async def join(s: Session, conn: Conn, group: str, name: str, step: str, **kw: Any) -> Any:
    """A new dynamic member's two-step join (KIP-394): MEMBER_ID_REQUIRED, then the join proper, parked until the
    group completes. Records both answers; the member id is called ``<name>``. Returns the second answer."""
    first = await conn.call(ApiKey.JOIN_GROUP, JOIN_V, join_body(group, **kw), f"{step}: first join")
    s.alias(name, first.member_id)
    return await conn.call(ApiKey.JOIN_GROUP, JOIN_V, join_body(group, first.member_id, **kw), f"{step}: rejoin")


async def member_id_of(s: Session, conn: Conn, group: str, name: str, step: str, **kw: Any) -> str:
    """Only the first step of a join: the member id the broker hands out with MEMBER_ID_REQUIRED."""
    first = await conn.call(ApiKey.JOIN_GROUP, JOIN_V, join_body(group, **kw), step)
    return s.alias(name, first.member_id)


def sync_body(
    group: str, generation: int, member_id: str, plan: dict[str, bytes] | None = None, instance_id: str | None = None
) -> SyncGroupRequest:
    """The coordinator tests' SyncGroup builder (protocol type and name set, as v5+ requires), under the scenarios'
    names; ``plan`` is the leader's assignment per member id."""
    return CoordinatorTestContext.sync_request(
        group, member_id, generation, group_instance_id=instance_id, assignments=plan
    )


async def sync(conn: Conn, group: str, generation: int, member_id: str, step: str, **kw: Any) -> Any:
    return await conn.call(ApiKey.SYNC_GROUP, SYNC_V, sync_body(group, generation, member_id, **kw), step)


async def heartbeat(conn: Conn, group: str, generation: int, member_id: str, step: str, **kw: Any) -> Any:
    body = HeartbeatRequest(group_id=group, generation_id=generation, member_id=member_id, **kw)
    return await conn.call(ApiKey.HEARTBEAT, HEARTBEAT_V, body, step)


async def describe(conn: Conn, group: str, step: str) -> Any:
    body = DescribeGroupsRequest(groups=[group], include_authorized_operations=False)
    return await conn.call(ApiKey.DESCRIBE_GROUPS, DESCRIBE_V, body, step)


async def create_topic(conn: Conn, topic: str, partitions: int, step: str) -> Any:
    body = CreateTopicsRequest(
        topics=[CreatableTopic(name=topic, num_partitions=partitions, replication_factor=1)], timeout_ms=10_000
    )
    return await conn.call(ApiKey.CREATE_TOPICS, 5, body, step)


def one_partition_plan(topic: str, *members: str) -> dict[str, bytes]:
    """Partition i of ``topic`` to the i-th member: a leader's SyncGroup plan."""
    return {member: assignment(topic, index) for index, member in enumerate(members)}
