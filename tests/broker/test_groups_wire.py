"""The group APIs over the wire: FindCoordinator, the KIP-394 join handshake, a whole member life cycle at an old
and at a flexible JoinGroup version, and strictly in-order answers on a connection holding a parked JoinGroup."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import pytest

from broker.app import Broker
from protocol import api
from protocol.consumer_protocol import decode_assignment
from protocol.errors import ErrorCode
from protocol.messages.api_versions import ApiVersionsRequest
from protocol.messages.describe_groups import DescribeGroupsRequest
from protocol.messages.find_coordinator import FindCoordinatorRequest
from protocol.messages.heartbeat import HeartbeatRequest
from protocol.messages.leave_group import LeaveGroupRequest, MemberIdentity
from protocol.messages.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
)
from protocol.messages.offset_fetch import (
    OffsetFetchRequest,
    OffsetFetchRequestGroup,
    OffsetFetchRequestTopic,
    OffsetFetchRequestTopics,
)
from protocol.messages.sync_group import SyncGroupRequest, SyncGroupRequestAssignment
from protocol.registry import ApiKey
from tests.broker.group_wire import assignment, describe, join_and_sync, join_request, subscription
from tests.broker.wire import WireClient

KEY_TYPE_TRANSACTION = 1


@pytest.fixture(autouse=True)
async def _offsets_loaded(broker: Broker) -> None:
    """Groups are served once `__consumer_offsets` is loaded (COORDINATOR_LOAD_IN_PROGRESS before)."""
    await broker.loaded.wait()


# ---------------------------------------------------------------------------------------------------------------
# FindCoordinator
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [0, 1, 2, 3])
async def test_find_coordinator_single_key_is_this_broker(broker: Broker, version: int) -> None:
    client = await WireClient.connect(broker.ports[0])
    response = await client.call(ApiKey.FIND_COORDINATOR, version, FindCoordinatorRequest(key="billing"))
    assert (response.error_code, response.node_id, response.host, response.port) == (
        ErrorCode.NONE,
        broker.config.node_id,
        "127.0.0.1",
        broker.ports[0],
    )
    await client.close()


@pytest.mark.parametrize("version", [4, 5, 6])
async def test_find_coordinator_batched_keys(broker: Broker, version: int) -> None:
    client = await WireClient.connect(broker.ports[0])
    request = FindCoordinatorRequest(coordinator_keys=["billing", "audit", "x" * 200])
    response = await client.call(ApiKey.FIND_COORDINATOR, version, request)
    assert [(c.key, c.error_code, c.node_id, c.host, c.port) for c in response.coordinators] == [
        (key, ErrorCode.NONE, broker.config.node_id, "127.0.0.1", broker.ports[0])
        for key in ("billing", "audit", "x" * 200)
    ]
    transactions = FindCoordinatorRequest(key_type=KEY_TYPE_TRANSACTION, coordinator_keys=["tx"])
    [found] = (await client.call(ApiKey.FIND_COORDINATOR, version, transactions)).coordinators
    assert (found.key, found.error_code, found.node_id, found.port) == (
        "tx",
        ErrorCode.NONE,
        broker.config.node_id,
        broker.ports[0],
    )  # T1: the transaction coordinator of "tx" is this node
    await client.close()


# ---------------------------------------------------------------------------------------------------------------
# JoinGroup v4+: member id required (KIP-394)
# ---------------------------------------------------------------------------------------------------------------


async def test_join_group_v4_plus_without_member_id_gets_member_id_required(broker: Broker) -> None:
    client = await WireClient.connect(broker.ports[0])
    for version in (4, 7, 9):
        response = await client.call(ApiKey.JOIN_GROUP, version, join_request(f"kip394-{version}"))
        assert response.error_code == ErrorCode.MEMBER_ID_REQUIRED, version
        assert response.member_id.startswith("wire-test-") and response.generation_id == -1
        assert response.members == []
        # the id is only pending: the group has no member until the client joins again with it
        assert (await describe(client, f"kip394-{version}")).members == []
    await client.close()


async def test_join_group_errors_carry_a_null_protocol_name_from_v7(broker: Broker) -> None:
    """Kafka's JoinGroupResponse writes an empty protocol name as null where the field is nullable (v7+), as ""
    below; found by the differential suite against Kafka 4."""
    client = await WireClient.connect(broker.ports[0])
    names = {}
    for version in (4, 6, 7, 9):
        response = await client.call(ApiKey.JOIN_GROUP, version, join_request(f"null-name-{version}"))
        assert response.error_code == ErrorCode.MEMBER_ID_REQUIRED
        names[version] = response.protocol_name
    assert names == {4: "", 6: "", 7: None, 9: None}
    await client.close()


# ---------------------------------------------------------------------------------------------------------------
# A whole member life cycle
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Versions:
    join: int
    sync: int
    heartbeat: int
    commit: int
    fetch: int
    leave: int


CLIENT_VERSIONS = {
    # what a Kafka 2.3-era consumer sends, and a flexible-versions (KIP-482) consumer
    "join-v5": Versions(join=5, sync=3, heartbeat=3, commit=7, fetch=5, leave=3),
    "join-v9": Versions(join=9, sync=5, heartbeat=4, commit=8, fetch=8, leave=5),
}


async def offset_fetch(client: WireClient, version: int, group: str, topic: str) -> Any:
    if version < 8:
        request = OffsetFetchRequest(
            group_id=group, topics=[OffsetFetchRequestTopic(name=topic, partition_indexes=[0, 1])]
        )
        response = await client.call(ApiKey.OFFSET_FETCH, version, request)
        assert response.error_code == ErrorCode.NONE
        return response.topics[0].partitions
    request = OffsetFetchRequest(
        groups=[
            OffsetFetchRequestGroup(
                group_id=group, topics=[OffsetFetchRequestTopics(name=topic, partition_indexes=[0, 1])]
            )
        ]
    )
    response = await client.call(ApiKey.OFFSET_FETCH, version, request)
    [group_response] = response.groups
    assert group_response.error_code == ErrorCode.NONE
    return group_response.topics[0].partitions


@pytest.mark.parametrize("versions", list(CLIENT_VERSIONS.values()), ids=list(CLIENT_VERSIONS))
async def test_one_member_join_sync_heartbeat_commit_fetch_leave(broker: Broker, versions: Versions) -> None:
    broker.create_topic("orders", 2, {})
    group = f"cycle-{versions.join}"
    client = await WireClient.connect(broker.ports[0])

    first = await client.call(ApiKey.JOIN_GROUP, versions.join, join_request(group))
    assert first.error_code == ErrorCode.MEMBER_ID_REQUIRED
    member = first.member_id
    joined = await client.call(ApiKey.JOIN_GROUP, versions.join, join_request(group, member))
    assert (joined.error_code, joined.generation_id, joined.member_id, joined.leader) == (
        ErrorCode.NONE,
        1,
        member,
        member,
    )
    assert joined.protocol_name == "range"
    assert [(m.member_id, m.metadata) for m in joined.members] == [(member, subscription("orders"))]
    if versions.join >= 7:
        assert joined.protocol_type == "consumer"
    if versions.join >= 9:
        assert joined.skip_assignment is False

    plan = assignment("orders", 0, 1)
    sync = SyncGroupRequest(
        group_id=group,
        generation_id=1,
        member_id=member,
        protocol_type="consumer",
        protocol_name="range",
        assignments=[SyncGroupRequestAssignment(member_id=member, assignment=plan)],
    )
    synced = await client.call(ApiKey.SYNC_GROUP, versions.sync, sync)
    assert synced.error_code == ErrorCode.NONE
    assert [(t.topic, t.partitions) for t in decode_assignment(synced.assignment).assigned_partitions] == [
        ("orders", [0, 1])
    ]

    beat = HeartbeatRequest(group_id=group, generation_id=1, member_id=member)
    assert (await client.call(ApiKey.HEARTBEAT, versions.heartbeat, beat)).error_code == ErrorCode.NONE
    stale = HeartbeatRequest(group_id=group, generation_id=0, member_id=member)
    assert (await client.call(ApiKey.HEARTBEAT, versions.heartbeat, stale)).error_code == ErrorCode.ILLEGAL_GENERATION

    described = await describe(client, group)
    assert (described.group_state, described.protocol_data) == ("Stable", "range")
    assert [(m.member_id, m.client_id, m.member_assignment) for m in described.members] == [(member, "wire-test", plan)]

    commit = OffsetCommitRequest(
        group_id=group,
        generation_id_or_member_epoch=1,
        member_id=member,
        topics=[
            OffsetCommitRequestTopic(
                name="orders",
                partitions=[
                    OffsetCommitRequestPartition(partition_index=0, committed_offset=10, committed_metadata="m0"),
                    OffsetCommitRequestPartition(partition_index=1, committed_offset=20, committed_metadata=None),
                ],
            )
        ],
    )
    committed = await client.call(ApiKey.OFFSET_COMMIT, versions.commit, commit)
    assert [(p.partition_index, p.error_code) for p in committed.topics[0].partitions] == [
        (0, ErrorCode.NONE),
        (1, ErrorCode.NONE),
    ]
    fetched = await offset_fetch(client, versions.fetch, group, "orders")
    assert [(p.partition_index, p.committed_offset, p.metadata, p.error_code) for p in fetched] == [
        (0, 10, "m0", ErrorCode.NONE),
        (1, 20, "", ErrorCode.NONE),  # a null metadata is stored as "" (OffsetAndMetadata.NO_METADATA)
    ]

    leave = LeaveGroupRequest(group_id=group, members=[MemberIdentity(member_id=member, reason="done")])
    left = await client.call(ApiKey.LEAVE_GROUP, versions.leave, leave)
    assert left.error_code == ErrorCode.NONE
    assert [(m.member_id, m.error_code) for m in left.members] == [(member, ErrorCode.NONE)]
    after = await describe(client, group)
    assert (after.group_state, after.members) == ("Empty", [])
    assert (await client.call(ApiKey.HEARTBEAT, versions.heartbeat, beat)).error_code == ErrorCode.UNKNOWN_MEMBER_ID
    # the group's offsets outlive its members
    assert [p.committed_offset for p in await offset_fetch(client, versions.fetch, group, "orders")] == [10, 20]
    await client.close()


# ---------------------------------------------------------------------------------------------------------------
# Strictly in-order processing
# ---------------------------------------------------------------------------------------------------------------


async def test_parked_join_group_holds_later_requests_on_its_connection_only(broker: Broker) -> None:
    first = await WireClient.connect(broker.ports[0])
    second = await WireClient.connect(broker.ports[0])
    observer = await WireClient.connect(broker.ports[0])
    group = "in-order"
    member_1, generation = await join_and_sync(first, group)
    member_2 = (await second.call(ApiKey.JOIN_GROUP, 5, join_request(group))).member_id

    # back to back on one connection: a JoinGroup that must wait for member 1 to rejoin, then an ApiVersions
    join_correlation, join_frame = second.frame(ApiKey.JOIN_GROUP, 5, join_request(group, member_2))
    versions_correlation, versions_frame = second.frame(ApiKey.API_VERSIONS, 0, ApiVersionsRequest())
    second.writer.write(join_frame + versions_frame)
    await second.writer.drain()
    first_answer = asyncio.create_task(second.read_frame())

    async def parked() -> None:  # the JoinGroup is in the group, parked in PreparingRebalance
        while len((await describe(observer, group)).members) < 2:
            assert not first_answer.done()

    await asyncio.wait_for(parked(), 10)  # a bound for a broken broker, not a timing assertion
    # other connections keep being served meanwhile
    assert (await describe(observer, group)).group_state == "PreparingRebalance"
    beat = HeartbeatRequest(group_id=group, generation_id=generation, member_id=member_1)
    assert (await first.call(ApiKey.HEARTBEAT, 3, beat)).error_code == ErrorCode.REBALANCE_IN_PROGRESS
    assert (await observer.call(ApiKey.API_VERSIONS, 0, ApiVersionsRequest())).error_code == ErrorCode.NONE
    assert not first_answer.done()  # the ApiVersions behind the parked JoinGroup is not answered

    rejoined = await first.call(ApiKey.JOIN_GROUP, 5, join_request(group, member_1))
    assert (rejoined.error_code, rejoined.generation_id) == (ErrorCode.NONE, generation + 1)
    header, joined = api.decode_response(ApiKey.JOIN_GROUP, 5, await first_answer)
    assert header.correlation_id == join_correlation
    assert (joined.error_code, joined.generation_id, joined.member_id) == (ErrorCode.NONE, generation + 1, member_2)
    header, versions = api.decode_response(ApiKey.API_VERSIONS, 0, await second.read_frame())
    assert header.correlation_id == versions_correlation and versions.error_code == ErrorCode.NONE
    for client in (first, second, observer):
        await client.close()


# ---------------------------------------------------------------------------------------------------------------
# DescribeGroups
# ---------------------------------------------------------------------------------------------------------------


async def test_describe_groups_authorized_operations_are_kafka_4_group_operations(broker: Broker) -> None:
    """Without an authorizer Kafka 4.4 reports every operation a group supports: READ (3), DELETE (6), DESCRIBE
    (8), DESCRIBE_CONFIGS (10) and ALTER_CONFIGS (11, group configs since KIP-848) = 3400, as seen by the
    differential suite. Unknown (Dead) groups get them too; without the flag the field keeps its null value."""
    client = await WireClient.connect(broker.ports[0])
    await join_and_sync(client, "ops")
    asked = DescribeGroupsRequest(groups=["ops", "nobody"], include_authorized_operations=True)
    answered = await client.call(ApiKey.DESCRIBE_GROUPS, 5, asked)
    assert [g.authorized_operations for g in answered.groups] == [3400, 3400]
    plain = await client.call(ApiKey.DESCRIBE_GROUPS, 5, DescribeGroupsRequest(groups=["ops"]))
    assert plain.groups[0].authorized_operations == -(2**31)
    await client.close()
