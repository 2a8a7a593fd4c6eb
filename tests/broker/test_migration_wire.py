"""KIP-848 online migration over the wire (rules M1-M43): a classic group upgraded member by member to the
consumer protocol keeps being served, and converts back when its last consumer-protocol member leaves; a simple
(offsets-only) group accepts a consumer-protocol member."""

from __future__ import annotations

import uuid

import pytest

from broker.app import Broker
from protocol.consumer_protocol import decode_assignment, encode_subscription
from protocol.errors import ErrorCode
from protocol.messages.consumer_group_heartbeat import ConsumerGroupHeartbeatRequest
from protocol.messages.consumer_protocol_subscription import ConsumerProtocolSubscription
from protocol.messages.consumer_protocol_subscription import TopicPartition as OwnedPartitions
from protocol.messages.create_topics import CreatableTopic, CreateTopicsRequest
from protocol.messages.heartbeat import HeartbeatRequest
from protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol
from protocol.messages.offset_commit import OffsetCommitRequest, OffsetCommitRequestPartition, OffsetCommitRequestTopic
from protocol.messages.sync_group import SyncGroupRequest, SyncGroupRequestAssignment
from protocol.registry import ApiKey
from tests.broker.group_wire import assignment, describe
from tests.broker.wire import WireClient

TOPIC = "orders"


@pytest.fixture(autouse=True)
async def _offsets_loaded(broker: Broker) -> None:
    await broker.loaded.wait()


async def _create_topic(client: WireClient, partitions: int) -> None:
    request = CreateTopicsRequest(topics=[CreatableTopic(name=TOPIC, num_partitions=partitions, replication_factor=1)])
    [created] = (await client.call(ApiKey.CREATE_TOPICS, 5, request)).topics
    assert created.error_code == ErrorCode.NONE


def _join(group: str, member_id: str, owned: list[int] | None = None) -> JoinGroupRequest:
    owned_partitions = [] if owned is None else [OwnedPartitions(topic=TOPIC, partitions=owned)]
    metadata = encode_subscription(ConsumerProtocolSubscription(topics=[TOPIC], owned_partitions=owned_partitions), 1)
    return JoinGroupRequest(
        group_id=group,
        session_timeout_ms=10_000,
        rebalance_timeout_ms=30_000,
        member_id=member_id,
        protocol_type="consumer",
        protocols=[JoinGroupRequestProtocol(name="range", metadata=metadata)],
    )


def _consumer_join(group: str, member_id: str) -> ConsumerGroupHeartbeatRequest:
    return ConsumerGroupHeartbeatRequest(
        group_id=group,
        member_id=member_id,
        member_epoch=0,
        rebalance_timeout_ms=30_000,
        subscribed_topic_names=[TOPIC],
        topic_partitions=[],
    )


async def test_rolling_upgrade_then_downgrade_over_the_wire(broker: Broker) -> None:
    """M1-M11 upgrade, M17-M21 the classic member served by the consumer group, M30-M34 downgrade."""
    client = await WireClient.connect(broker.ports[0])
    await _create_topic(client, 2)
    group = "rolling"
    classic_id = (await client.call(ApiKey.JOIN_GROUP, 5, _join(group, ""))).member_id
    joined = await client.call(ApiKey.JOIN_GROUP, 5, _join(group, classic_id))
    assert joined.error_code == ErrorCode.NONE and joined.generation_id == 1
    sync = SyncGroupRequest(
        group_id=group,
        generation_id=1,
        member_id=classic_id,
        assignments=[SyncGroupRequestAssignment(member_id=classic_id, assignment=assignment(TOPIC, 0, 1))],
    )
    assert (await client.call(ApiKey.SYNC_GROUP, 3, sync)).error_code == ErrorCode.NONE

    consumer_id = str(uuid.uuid4())
    upgraded = await client.call(ApiKey.CONSUMER_GROUP_HEARTBEAT, 1, _consumer_join(group, consumer_id))
    assert (upgraded.error_code, upgraded.member_epoch) == (ErrorCode.NONE, 2)

    heartbeat = HeartbeatRequest(group_id=group, generation_id=1, member_id=classic_id)
    assert (await client.call(ApiKey.HEARTBEAT, 3, heartbeat)).error_code == ErrorCode.REBALANCE_IN_PROGRESS
    rejoined = await client.call(ApiKey.JOIN_GROUP, 5, _join(group, classic_id, owned=[]))
    assert (rejoined.error_code, rejoined.generation_id, rejoined.leader) == (ErrorCode.NONE, 2, "")
    synced = await client.call(
        ApiKey.SYNC_GROUP, 3, SyncGroupRequest(group_id=group, generation_id=2, member_id=classic_id)
    )
    kept = [p for t in decode_assignment(synced.assignment).assigned_partitions for p in t.partitions]
    assert synced.error_code == ErrorCode.NONE and len(kept) == 1

    again = ConsumerGroupHeartbeatRequest(group_id=group, member_id=consumer_id, member_epoch=2, topic_partitions=[])
    got = await client.call(ApiKey.CONSUMER_GROUP_HEARTBEAT, 1, again)
    assert got.error_code == ErrorCode.NONE and got.assignment is not None
    assert [p for t in got.assignment.topic_partitions for p in t.partitions] == [1 - kept[0]]

    leave = ConsumerGroupHeartbeatRequest(group_id=group, member_id=consumer_id, member_epoch=-1)
    assert (await client.call(ApiKey.CONSUMER_GROUP_HEARTBEAT, 1, leave)).error_code == ErrorCode.NONE
    described = await describe(client, group)
    assert (described.protocol_type, described.group_state) == ("consumer", "PreparingRebalance")
    await client.close()


async def test_simple_group_accepts_a_consumer_protocol_member(broker: Broker) -> None:
    """M40: an offsets-only (simple) group is replaced by a new consumer group instead of answering
    GROUP_ID_NOT_FOUND; a new group starts at epoch 1, so the first join answers epoch 2 (Kafka 4.4)."""
    client = await WireClient.connect(broker.ports[0])
    await _create_topic(client, 1)
    commit = OffsetCommitRequest(
        group_id="simple",
        generation_id_or_member_epoch=-1,
        topics=[
            OffsetCommitRequestTopic(
                name=TOPIC, partitions=[OffsetCommitRequestPartition(partition_index=0, committed_offset=5)]
            )
        ],
    )
    assert (await client.call(ApiKey.OFFSET_COMMIT, 8, commit)).topics[0].partitions[0].error_code == ErrorCode.NONE
    joined = await client.call(ApiKey.CONSUMER_GROUP_HEARTBEAT, 1, _consumer_join("simple", str(uuid.uuid4())))
    assert (joined.error_code, joined.member_epoch) == (ErrorCode.NONE, 2)
    await client.close()
