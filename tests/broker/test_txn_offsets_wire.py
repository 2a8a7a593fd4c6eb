"""TxnOffsetCommit and OffsetFetch require_stable over the wire (T56-T64).

A raw client sends TxnOffsetCommit at the versions the broker advertises (v0-4); the offsets stay invisible to
OffsetFetch and make require_stable answer UNSTABLE_OFFSET_COMMIT until the producer's marker is written to the
group's `__consumer_offsets` partition (here through `GroupCoordinator.complete_transaction`, which the broker's
WriteTxnMarkers calls); the partition then holds the transactional batch and the control batch.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from broker.app import Broker
from broker.offsets_log import OFFSETS_TOPIC
from protocol.errors import ErrorCode
from protocol.messages.add_offsets_to_txn import AddOffsetsToTxnRequest
from protocol.messages.init_producer_id import InitProducerIdRequest
from protocol.messages.offset_fetch import OffsetFetchRequest, OffsetFetchRequestGroup, OffsetFetchRequestTopics
from protocol.registry import ApiKey
from tests.broker.conftest import UNVERIFIED_TRANSACTIONS, running_broker
from tests.broker.txn_offsets_wire import complete_transaction, fetch_v7, txn_commit_request
from tests.broker.wire import NAMED_API_VERSIONS, WireClient
from tests.durability.offsets_client import create_topic

TOPIC = "txn-topic"
PID = 7000
EPOCH = 2
UNSTABLE = ErrorCode.UNSTABLE_OFFSET_COMMIT


@pytest.fixture
async def broker(tmp_path: Path) -> AsyncIterator[Broker]:
    """TxnOffsetCommits here come from producers no transaction coordinator knows (no AddOffsetsToTxn), so the
    broker does not ask it (`transaction.partition.verification.enable=false`)."""
    async with running_broker(tmp_path, **UNVERIFIED_TRANSACTIONS) as instance:
        yield instance


async def _client(broker: Broker) -> WireClient:
    client = await WireClient.connect(broker.ports[0])
    await create_topic(client, TOPIC, 2)
    return client


async def test_txn_offset_commit_is_advertised_v0_to_v6(broker: Broker) -> None:
    """T56: TxnOffsetCommit is served up to Kafka 4.4's newest: v5 adds the group's partition to the transaction
    itself (KIP-890), v6 names topics by id (test_newest_versions_wire.py)."""
    client = await WireClient.connect(broker.ports[0])
    response = await client.call(ApiKey.API_VERSIONS, 3, NAMED_API_VERSIONS)
    advertised = {v.api_key: (v.min_version, v.max_version) for v in response.api_keys}
    assert advertised[ApiKey.TXN_OFFSET_COMMIT] == (0, 6)
    await client.close()


@pytest.mark.parametrize("version", [0, 2, 3, 4])
async def test_t63_pending_until_the_commit_marker_then_visible(broker: Broker, version: int) -> None:
    """T62-T64: acknowledged NONE, invisible (-1) without require_stable and UNSTABLE_OFFSET_COMMIT with it, in
    the v7 and v8 forms; after the COMMIT marker the offsets are answered."""
    group = f"wire-group-v{version}"
    client = await _client(broker)
    request = txn_commit_request(group, TOPIC, {0: 10, 1: 11}, producer_id=PID, producer_epoch=EPOCH)
    response = await client.call(ApiKey.TXN_OFFSET_COMMIT, version, request)
    assert [(p.partition_index, p.error_code) for p in response.topics[0].partitions] == [(0, 0), (1, 0)]
    assert await fetch_v7(client, group, TOPIC, [0, 1], require_stable=False) == {0: (-1, 0), 1: (-1, 0)}
    unstable = {0: (-1, UNSTABLE), 1: (-1, UNSTABLE)}
    assert await fetch_v7(client, group, TOPIC, [0, 1], require_stable=True) == unstable
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
    assert fetched_group.topics[0].partitions[0].error_code == UNSTABLE

    assert await complete_transaction(broker, group, PID, commit=True, producer_epoch=EPOCH) == ErrorCode.NONE
    assert await fetch_v7(client, group, TOPIC, [0, 1], require_stable=True) == {0: (10, 0), 1: (11, 0)}
    await client.close()


async def test_t64_abort_marker_over_a_committed_offset(broker: Broker) -> None:
    """T64: an aborted transaction leaves the offset committed before it."""
    client = await _client(broker)
    first = await client.call(
        ApiKey.TXN_OFFSET_COMMIT, 3, txn_commit_request("aborting", TOPIC, {0: 5}, producer_id=PID)
    )
    assert first.topics[0].partitions[0].error_code == ErrorCode.NONE
    assert await complete_transaction(broker, "aborting", PID, commit=True) == ErrorCode.NONE
    await client.call(ApiKey.TXN_OFFSET_COMMIT, 3, txn_commit_request("aborting", TOPIC, {0: 99}, producer_id=PID))
    assert await complete_transaction(broker, "aborting", PID, commit=False) == ErrorCode.NONE
    assert await fetch_v7(client, "aborting", TOPIC, [0], require_stable=True) == {0: (5, 0)}
    await client.close()


async def test_t57_the_partition_holds_the_transactional_batch_and_the_marker(broker: Broker) -> None:
    """T36/T57: the group's `__consumer_offsets` partition holds the commit as a transactional batch of the
    producer and then the producer's COMMIT control batch."""
    group = "logged"
    client = await _client(broker)
    request = txn_commit_request(group, TOPIC, {0: 1}, producer_id=PID, producer_epoch=EPOCH)
    await client.call(ApiKey.TXN_OFFSET_COMMIT, 4, request)
    assert await complete_transaction(broker, group, PID, commit=True, producer_epoch=EPOCH) == ErrorCode.NONE
    partition_log = broker.logs.get(OFFSETS_TOPIC, broker.coordinator.partition_for(group))
    assert partition_log is not None
    batches = [
        (b.producer_id, b.producer_epoch, b.is_transactional, b.is_control) for b in partition_log.iter_batches_from()
    ]
    assert batches[-2:] == [(PID, EPOCH, True, False), (PID, EPOCH, True, True)]
    await client.close()


async def test_t56_unknown_topic_and_empty_group_id(broker: Broker) -> None:
    """T56: a partition the broker does not have is UNKNOWN_TOPIC_OR_PARTITION; an empty group id is
    INVALID_GROUP_ID for every partition."""
    client = await _client(broker)
    request = txn_commit_request("g", "no-such-topic", {0: 1}, producer_id=PID)
    response = await client.call(ApiKey.TXN_OFFSET_COMMIT, 4, request)
    assert response.topics[0].partitions[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    response = await client.call(ApiKey.TXN_OFFSET_COMMIT, 4, txn_commit_request("", TOPIC, {0: 1}, producer_id=PID))
    assert response.topics[0].partitions[0].error_code == ErrorCode.INVALID_GROUP_ID
    await client.close()


@pytest.mark.parametrize("version", [3, 4])
async def test_verification_answers_a_fenced_epoch_as_invalid_producer_epoch(tmp_path: Path, version: int) -> None:
    """With verification on, a TxnOffsetCommit at an epoch the transaction coordinator does not have is answered
    INVALID_PRODUCER_EPOCH, not the coordinator's own PRODUCER_FENCED: Kafka's verification (AddPartitionsToTxnManager)
    turns one into the other for every request it verifies, TxnOffsetCommit as Produce (differential scenario
    txn_offset_commit)."""
    async with running_broker(tmp_path) as verifying:
        client = await _client(verifying)
        tid = "fenced-offsets"
        init = InitProducerIdRequest(transactional_id=tid, transaction_timeout_ms=60_000)
        producer = await client.call(ApiKey.INIT_PRODUCER_ID, 4, init)
        pid, epoch = producer.producer_id, producer.producer_epoch
        added = AddOffsetsToTxnRequest(transactional_id=tid, producer_id=pid, producer_epoch=epoch, group_id="g")
        assert (await client.call(ApiKey.ADD_OFFSETS_TO_TXN, 0, added)).error_code == ErrorCode.NONE
        request = txn_commit_request("g", TOPIC, {0: 5}, producer_id=pid, producer_epoch=epoch + 1)
        request.transactional_id = tid
        response = await client.call(ApiKey.TXN_OFFSET_COMMIT, version, request)
        assert response.topics[0].partitions[0].error_code == ErrorCode.INVALID_PRODUCER_EPOCH
        await client.close()
