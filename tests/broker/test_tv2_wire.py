"""Transaction version 2 (KIP-890 part 2) over raw requests, with the broker's own transaction coordinator: the
`transaction.version` feature in ApiVersions (and the setting that picks it), EndTxn and AddPartitionsToTxn at
every advertised version, and a version 2 consume-transform-produce (Produce v12, TxnOffsetCommit v5, EndTxn v5)
whose markers carry the bumped epoch and fence the producer's older epoch on the data partitions (T70-T77).
The differential scenarios end_txn_v5_* compare the same answers with Kafka 4.4.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from broker.app import Broker
from protocol.errors import ErrorCode
from protocol.messages.add_partitions_to_txn import (
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnTopic,
    AddPartitionsToTxnTransaction,
)
from protocol.messages.create_topics import CreatableTopic, CreateTopicsRequest
from protocol.messages.end_txn import EndTxnRequest
from protocol.registry import ApiKey
from tests.broker.conftest import running_broker
from tests.broker.wire import NAMED_API_VERSIONS, WireClient
from tests.support.broker_process import wait_until_awaited
from tests.support.data_plane import batch, produce
from tests.support.txn_wire import TxnWire, describe, offsets, read_committed

TXN_ID = "txn-v2"
TOPIC = "orders"


async def _setup(broker: Broker) -> tuple[WireClient, TxnWire]:
    client = await WireClient.connect(broker.ports[0])
    body = CreateTopicsRequest(topics=[CreatableTopic(name=TOPIC, num_partitions=2, replication_factor=1)])
    [created] = (await client.call(ApiKey.CREATE_TOPICS, 7, body)).topics
    assert created.error_code == ErrorCode.NONE
    producer = TxnWire(client, TXN_ID, 60_000)
    assert await producer.init() == ErrorCode.NONE
    return client, producer


async def _features(broker: Broker, version: int = 4) -> tuple[Any, dict[int, tuple[int, int]]]:
    client = await WireClient.connect(broker.ports[0])
    response = await client.call(ApiKey.API_VERSIONS, version, NAMED_API_VERSIONS)
    await client.close()
    return response, {a.api_key: (a.min_version, a.max_version) for a in response.api_keys}


async def test_api_versions_finalizes_transaction_version_2_by_default(broker: Broker) -> None:
    """As a new Kafka 4.4 cluster: transaction.version supported 0-2 and finalized at 2 (with an epoch a client
    accepts), and every transaction API version Kafka serves, version 2's included."""
    response, advertised = await _features(broker)
    assert [(f.name, f.min_version, f.max_version) for f in response.supported_features] == [
        ("transaction.version", 0, 2)
    ]
    assert [(f.name, f.min_version_level, f.max_version_level) for f in response.finalized_features] == [
        ("transaction.version", 2, 2)
    ]
    assert response.finalized_features_epoch >= 0
    assert advertised[ApiKey.END_TXN] == (0, 5)
    assert advertised[ApiKey.ADD_PARTITIONS_TO_TXN] == (0, 5)
    assert advertised[ApiKey.INIT_PRODUCER_ID] == (0, 5)
    assert advertised[ApiKey.TXN_OFFSET_COMMIT] == (0, 6)
    assert advertised[ApiKey.PRODUCE] == (3, 13)
    older, _ = await _features(broker, 3)  # v3: a supported range from 0 is left out (KAFKA-17011), as Kafka does
    assert older.supported_features == []
    assert [(f.name, f.max_version_level) for f in older.finalized_features] == [("transaction.version", 2)]


@pytest.mark.parametrize(("level", "finalized"), [("0", []), ("1", [("transaction.version", 1, 1)])])
async def test_the_transaction_version_setting_picks_the_finalized_level(
    tmp_path: Path, level: str, finalized: list[tuple[str, int, int]]
) -> None:
    """`transaction.version=0` (or 1) keeps clients on version 0/1; a disabled level is not listed as finalized,
    as in Kafka. The versions served do not change (a request's version picks its rules)."""
    async with running_broker(tmp_path, transaction_version=level) as broker:
        response, advertised = await _features(broker)
    assert [(f.name, f.min_version_level, f.max_version_level) for f in response.finalized_features] == finalized
    assert [f.name for f in response.supported_features] == ["transaction.version"]
    assert advertised[ApiKey.END_TXN] == (0, 5)


def _end(producer_id: int, epoch: int, commit: bool = True) -> EndTxnRequest:
    return EndTxnRequest(transactional_id=TXN_ID, producer_id=producer_id, producer_epoch=epoch, committed=commit)


@pytest.mark.parametrize("version", range(6))
async def test_end_txn_at_every_version(broker: Broker, version: int) -> None:
    """v0-4 keep the epoch and answer no producer (-1/-1 is the schema's default); v5 bumps it and names it. A
    stale epoch is PRODUCER_FENCED (INVALID_PRODUCER_EPOCH before v2), another producer id
    INVALID_PRODUCER_ID_MAPPING; a retry of v5 with the epoch it sent is NONE with the bumped epoch."""
    client, producer = await _setup(broker)
    assert await producer.add_partitions(TOPIC, [0]) == ErrorCode.NONE
    assert (await producer.produce(TOPIC, 0, b"x"))[0] == ErrorCode.NONE
    pid, epoch = producer.producer_id, producer.epoch
    wrong_id = await client.call(ApiKey.END_TXN, version, _end(pid + 1, epoch))
    assert wrong_id.error_code == ErrorCode.INVALID_PRODUCER_ID_MAPPING
    fenced = await client.call(ApiKey.END_TXN, version, _end(pid, epoch + 1))
    assert fenced.error_code == (ErrorCode.PRODUCER_FENCED if version >= 2 else ErrorCode.INVALID_PRODUCER_EPOCH)
    ended = await client.call(ApiKey.END_TXN, version, _end(pid, epoch))
    bumped = epoch + 1 if version >= 5 else epoch
    assert ended.error_code == ErrorCode.NONE
    if version >= 5:
        assert (ended.producer_id, ended.producer_epoch) == (pid, bumped)
    await _completed(client)
    assert (await describe(client, TXN_ID)).producer_epoch == bumped
    assert (await read_committed(client, TOPIC, 0)).records == [(0, b"x")]
    retry = await client.call(ApiKey.END_TXN, version, _end(pid, epoch))
    if version >= 5:  # a retry names the epoch it sent: the stored one is one above
        assert (retry.error_code, retry.producer_id, retry.producer_epoch) == (ErrorCode.NONE, pid, bumped)
    else:
        assert retry.error_code == ErrorCode.NONE
    await client.close()


async def _completed(client: WireClient) -> None:
    """Until the transaction's markers are written (CompleteCommit/CompleteAbort)."""

    async def complete() -> bool:
        return (await describe(client, TXN_ID)).state in ("CompleteCommit", "CompleteAbort")

    await wait_until_awaited(complete, what="the transaction's markers")


def _add(version: int, producer: TxnWire, partition: int, *, verify_only: bool = False) -> AddPartitionsToTxnRequest:
    topics = [AddPartitionsToTxnTopic(name=TOPIC, partitions=[partition])]
    if version < 4:
        return AddPartitionsToTxnRequest(
            v3_and_below_transactional_id=TXN_ID,
            v3_and_below_producer_id=producer.producer_id,
            v3_and_below_producer_epoch=producer.epoch,
            v3_and_below_topics=topics,
        )
    txn = AddPartitionsToTxnTransaction(
        transactional_id=TXN_ID,
        producer_id=producer.producer_id,
        producer_epoch=producer.epoch,
        verify_only=verify_only,
        topics=topics,
    )
    return AddPartitionsToTxnRequest(transactions=[txn])


def _errors(version: int, response: Any) -> dict[int, ErrorCode]:
    results = (
        response.results_by_topic_v3_and_below if version < 4 else response.results_by_transaction[0].topic_results
    )
    return {p.partition_index: ErrorCode(p.partition_error_code) for t in results for p in t.results_by_partition}


@pytest.mark.parametrize("version", range(6))
async def test_add_partitions_to_txn_at_every_version(broker: Broker, version: int) -> None:
    """v0-3 (clients) and v4-5 (brokers, batched) add the partition; v4+ records the transaction as a version 2
    one. v4-5 VerifyOnly answers TRANSACTION_ABORTABLE for a partition not in the transaction."""
    client, producer = await _setup(broker)
    if version >= 4:
        verified = await client.call(
            ApiKey.ADD_PARTITIONS_TO_TXN, version, _add(version, producer, 1, verify_only=True)
        )
        assert _errors(version, verified) == {1: ErrorCode.TRANSACTION_ABORTABLE}
    added = await client.call(ApiKey.ADD_PARTITIONS_TO_TXN, version, _add(version, producer, 0))
    assert _errors(version, added) == {0: ErrorCode.NONE}
    described = await describe(client, TXN_ID)
    assert (described.state, described.partitions) == ("Ongoing", frozenset({(TOPIC, 0)}))
    await client.close()


async def test_a_version_2_transaction_end_to_end(broker: Broker) -> None:
    """Produce v12 and TxnOffsetCommit v5 add their partitions themselves; EndTxn v5 commits with the epoch bumped,
    the markers carry it, and the next transaction starts at the new epoch with sequence 0. The old epoch is now
    fenced on the data partition; the second transaction aborts with one more bump and is invisible."""
    client, producer = await _setup(broker)
    first_epoch = producer.epoch
    assert (await producer.produce(TOPIC, 0, b"a", version=12))[0] == ErrorCode.NONE
    assert (await producer.produce(TOPIC, 1, b"b", version=12))[0] == ErrorCode.NONE
    assert await producer.commit_offsets("group-v2", TOPIC, {0: 1}, version=5) == ErrorCode.NONE
    described = await describe(client, TXN_ID)
    assert described.state == "Ongoing"
    assert {tp for tp in described.partitions if tp[0] == TOPIC} == {(TOPIC, 0), (TOPIC, 1)}
    assert len(described.partitions) == 3  # and the group's __consumer_offsets partition
    assert await producer.end(commit=True, version=5) == ErrorCode.NONE
    assert producer.epoch == first_epoch + 1
    await _completed(client)
    # The next transaction's first batch: the new epoch at sequence 0.
    error, offset = await producer.produce(TOPIC, 0, b"c", version=12)
    assert (error, offset) == (ErrorCode.NONE, 2)  # after "a" and the COMMIT marker (written at the new epoch)
    stale = batch(b"zombie", producer_id=producer.producer_id, epoch=first_epoch, sequence=1, transactional=True)
    refused = await produce(client, TOPIC, stale, partition=0, version=12, transactional_id=TXN_ID)
    assert refused.error_code == ErrorCode.INVALID_PRODUCER_EPOCH
    assert await producer.end(commit=False, version=5) == ErrorCode.NONE
    assert producer.epoch == first_epoch + 2
    await _completed(client)
    assert [v for _, v in (await read_committed(client, TOPIC, 0)).records] == [b"a"]
    assert [v for _, v in (await read_committed(client, TOPIC, 1)).records] == [b"b"]
    assert (await offsets(client, "group-v2", TOPIC, [0], require_stable=True))[0] == (1, ErrorCode.NONE)
    await client.close()
