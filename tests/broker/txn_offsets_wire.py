"""Transactional offsets against a running broker: TxnOffsetCommit and OffsetFetch requests, and the marker a
WriteTxnMarkers naming a group's `__consumer_offsets` partition makes the broker write."""

from __future__ import annotations

import asyncio

from broker.app import Broker
from protocol.errors import ErrorCode
from protocol.messages.offset_fetch import OffsetFetchRequest, OffsetFetchRequestTopic
from protocol.messages.txn_offset_commit import (
    TxnOffsetCommitRequest,
    TxnOffsetCommitRequestPartition,
    TxnOffsetCommitRequestTopic,
)
from protocol.registry import ApiKey
from tests.broker.wire import WireClient


def txn_commit_request(
    group: str, topic: str, offsets: dict[int, int], *, producer_id: int, producer_epoch: int = 0
) -> TxnOffsetCommitRequest:
    """A producer's TxnOffsetCommit without group metadata (generation -1, no member), metadata "m<offset>"."""
    return TxnOffsetCommitRequest(
        transactional_id=f"tid-{producer_id}",
        group_id=group,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        topics=[
            TxnOffsetCommitRequestTopic(
                name=topic,
                partitions=[
                    TxnOffsetCommitRequestPartition(partition_index=p, committed_offset=o, committed_metadata=f"m{o}")
                    for p, o in sorted(offsets.items())
                ],
            )
        ],
    )


async def fetch_v7(
    client: WireClient, group: str, topic: str, partitions: list[int], *, require_stable: bool
) -> dict[int, tuple[int, int]]:
    """(committed offset, error) per partition from OffsetFetch v7."""
    request = OffsetFetchRequest(
        group_id=group,
        topics=[OffsetFetchRequestTopic(name=topic, partition_indexes=partitions)],
        require_stable=require_stable,
    )
    response = await client.call(ApiKey.OFFSET_FETCH, 7, request)
    assert response.error_code == ErrorCode.NONE
    return {p.partition_index: (p.committed_offset, p.error_code) for p in response.topics[0].partitions}


async def complete_transaction(
    broker: Broker, group: str, producer_id: int, commit: bool, *, producer_epoch: int = 0
) -> ErrorCode:
    """What the broker's WriteTxnMarkers handler does for the group's `__consumer_offsets` partition: the
    coordinator writes the marker; its answer once the marker is durable."""
    future: asyncio.Future[ErrorCode] = asyncio.get_running_loop().create_future()
    coordinator = broker.coordinator
    reply = coordinator.complete_transaction(
        coordinator.partition_for(group), producer_id, producer_epoch, 0, commit, broker.clock.monotonic_ms()
    )
    broker.rearm_timers()
    reply.on_complete(future.set_result)
    return await asyncio.wait_for(future, 5)
