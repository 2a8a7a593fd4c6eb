"""TxnOffsetCommit and OffsetFetch require_stable over the wire (T56-T64).

A raw client sends TxnOffsetCommit at the versions the broker advertises (v0-4); the offsets stay invisible to
OffsetFetch and make require_stable answer UNSTABLE_OFFSET_COMMIT until the producer's marker is written to the
group's `__consumer_offsets` partition (here through `GroupCoordinator.complete_transaction`, which the broker's
WriteTxnMarkers calls); the partition then holds the transactional batch and the control batch.
"""

from __future__ import annotations

import asyncio

import pytest

from broker.app import Broker
from broker.offsets_log import OFFSETS_TOPIC
from protocol.errors import ErrorCode
from protocol.messages.offset_fetch import (
    OffsetFetchRequest,
    OffsetFetchRequestGroup,
    OffsetFetchRequestTopic,
    OffsetFetchRequestTopics,
)
from protocol.messages.txn_offset_commit import (
    TxnOffsetCommitRequest,
    TxnOffsetCommitRequestPartition,
    TxnOffsetCommitRequestTopic,
)
from protocol.registry import ApiKey
from tests.broker.wire import NAMED_API_VERSIONS, WireClient
from tests.durability.offsets_client import create_topic

TOPIC = "txn-topic"
PRODUCER_ID = 7000
EPOCH = 2


@pytest.fixture(autouse=True)
async def _offsets_loaded(broker: Broker) -> None:
    await broker.loaded.wait()


def txn_commit(group: str, offsets: dict[int, int], *, producer_id: int = PRODUCER_ID) -> TxnOffsetCommitRequest:
    return TxnOffsetCommitRequest(
        transactional_id="wire-txn",
        group_id=group,
        producer_id=producer_id,
        producer_epoch=EPOCH,
        topics=[
            TxnOffsetCommitRequestTopic(
                name=TOPIC,
                partitions=[
                    TxnOffsetCommitRequestPartition(partition_index=p, committed_offset=o, committed_metadata=f"m{o}")
                    for p, o in sorted(offsets.items())
                ],
            )
        ],
    )


async def fetch_v7(client: WireClient, group: str, partitions: list[int], require_stable: bool) -> dict[int, tuple]:
    request = OffsetFetchRequest(
        group_id=group,
        topics=[OffsetFetchRequestTopic(name=TOPIC, partition_indexes=partitions)],
        require_stable=require_stable,
    )
    response = await client.call(ApiKey.OFFSET_FETCH, 7, request)
    assert response.error_code == ErrorCode.NONE
    return {p.partition_index: (p.committed_offset, p.error_code) for p in response.topics[0].partitions}


async def complete(broker: Broker, group: str, commit: bool, *, producer_id: int = PRODUCER_ID) -> ErrorCode:
    """What the broker's WriteTxnMarkers handler does for the group's `__consumer_offsets` partition."""
    future: asyncio.Future[ErrorCode] = asyncio.get_running_loop().create_future()
    coordinator = broker.coordinator
    reply = coordinator.complete_transaction(
        coordinator.partition_for(group), producer_id, EPOCH, 0, commit, broker.clock.monotonic_ms()
    )
    broker.rearm_timers()
    reply.on_complete(future.set_result)
    return await asyncio.wait_for(future, 5)


async def test_txn_offset_commit_is_advertised_v0_to_v4(broker: Broker) -> None:
    """T56: TxnOffsetCommit is served at the versions of clients on transaction version 0/1 (v5 is TV2, v6 names
    topics by id)."""
    client = await WireClient.connect(broker.ports[0])
    response = await client.call(ApiKey.API_VERSIONS, 3, NAMED_API_VERSIONS)
    advertised = {v.api_key: (v.min_version, v.max_version) for v in response.api_keys}
    assert advertised[ApiKey.TXN_OFFSET_COMMIT] == (0, 4)
    await client.close()


@pytest.mark.parametrize("version", [0, 2, 3, 4])
async def test_t63_pending_until_the_commit_marker_then_visible(broker: Broker, version: int) -> None:
    """T62-T64: acknowledged NONE, invisible (-1) without require_stable and UNSTABLE_OFFSET_COMMIT with it, in
    the v7 and v8 forms; after the COMMIT marker the offsets are answered."""
    group = f"wire-group-v{version}"
    client = await WireClient.connect(broker.ports[0])
    await create_topic(client, TOPIC, 2)
    response = await client.call(ApiKey.TXN_OFFSET_COMMIT, version, txn_commit(group, {0: 10, 1: 11}))
    assert [(p.partition_index, p.error_code) for p in response.topics[0].partitions] == [(0, 0), (1, 0)]
    assert await fetch_v7(client, group, [0, 1], require_stable=False) == {0: (-1, 0), 1: (-1, 0)}
    unstable = ErrorCode.UNSTABLE_OFFSET_COMMIT
    assert await fetch_v7(client, group, [0, 1], require_stable=True) == {0: (-1, unstable), 1: (-1, unstable)}
    v8 = OffsetFetchRequest(
        groups=[
            OffsetFetchRequestGroup(
                group_id=group, topics=[OffsetFetchRequestTopics(name=TOPIC, partition_indexes=[0])]
            )
        ],
        require_stable=True,
    )
    (fetched_group,) = (await client.call(ApiKey.OFFSET_FETCH, 8, v8)).groups
    assert fetched_group.error_code == ErrorCode.NONE
    assert fetched_group.topics[0].partitions[0].error_code == unstable

    assert await complete(broker, group, commit=True) == ErrorCode.NONE
    assert await fetch_v7(client, group, [0, 1], require_stable=True) == {0: (10, 0), 1: (11, 0)}
    await client.close()


async def test_t64_abort_marker_over_a_committed_offset(broker: Broker) -> None:
    """T64: an aborted transaction leaves the offset committed before it."""
    client = await WireClient.connect(broker.ports[0])
    await create_topic(client, TOPIC, 2)
    first = await client.call(ApiKey.TXN_OFFSET_COMMIT, 3, txn_commit("aborting", {0: 5}))
    assert first.topics[0].partitions[0].error_code == ErrorCode.NONE
    assert await complete(broker, "aborting", commit=True) == ErrorCode.NONE
    await client.call(ApiKey.TXN_OFFSET_COMMIT, 3, txn_commit("aborting", {0: 99}))
    assert await complete(broker, "aborting", commit=False) == ErrorCode.NONE
    assert await fetch_v7(client, "aborting", [0], require_stable=True) == {0: (5, 0)}
    await client.close()


async def test_t57_the_partition_holds_the_transactional_batch_and_the_marker(broker: Broker) -> None:
    """T36/T57: the group's `__consumer_offsets` partition holds the commit as a transactional batch of the
    producer and then the producer's COMMIT control batch."""
    group = "logged"
    client = await WireClient.connect(broker.ports[0])
    await create_topic(client, TOPIC, 2)
    await client.call(ApiKey.TXN_OFFSET_COMMIT, 4, txn_commit(group, {0: 1}))
    assert await complete(broker, group, commit=True) == ErrorCode.NONE
    partition_log = broker.logs.get(OFFSETS_TOPIC, broker.coordinator.partition_for(group))
    assert partition_log is not None
    batches = [
        (b.producer_id, b.producer_epoch, b.is_transactional, b.is_control) for b in partition_log.iter_batches_from()
    ]
    assert batches[-2:] == [(PRODUCER_ID, EPOCH, True, False), (PRODUCER_ID, EPOCH, True, True)]
    await client.close()


async def test_unknown_topic_and_empty_group_id(broker: Broker) -> None:
    """T56: a partition the broker does not have is UNKNOWN_TOPIC_OR_PARTITION; an empty group id is
    INVALID_GROUP_ID for every partition."""
    client = await WireClient.connect(broker.ports[0])
    request = txn_commit("g", {0: 1})
    request.topics[0].name = "no-such-topic"
    response = await client.call(ApiKey.TXN_OFFSET_COMMIT, 4, request)
    assert response.topics[0].partitions[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    await create_topic(client, TOPIC, 2)
    response = await client.call(ApiKey.TXN_OFFSET_COMMIT, 4, txn_commit("", {0: 1}))
    assert response.topics[0].partitions[0].error_code == ErrorCode.INVALID_GROUP_ID
    await client.close()
