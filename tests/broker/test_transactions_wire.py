"""The transactional data plane over raw requests: transactional Produce, markers, read_committed Fetch with its
aborted transactions, ListOffsets isolation and DescribeProducers (T35-T43, T69).

The transaction coordinator is another part of the broker; here markers are written through the interface it
calls (`Broker.txn_markers`), and Produce verification through the seam it fills in (`Broker.records.verifier`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from broker.app import Broker
from broker.txn_verification import TxnVerification
from protocol.errors import ErrorCode
from protocol.messages.delete_records import DeleteRecordsPartition, DeleteRecordsRequest, DeleteRecordsTopic
from protocol.messages.describe_producers import DescribeProducersRequest, ProducerState, TopicRequest
from protocol.messages.fetch import AbortedTransaction
from protocol.messages.list_offsets import ListOffsetsPartition, ListOffsetsRequest, ListOffsetsTopic
from protocol.records import RecordBatch, decode_batch
from protocol.registry import ApiKey
from tests.broker.conftest import UNVERIFIED_TRANSACTIONS, running_broker
from tests.broker.wire import NAMED_API_VERSIONS, WireClient
from tests.support.data_plane import BASE_TS, batch, fetch, produce

READ_UNCOMMITTED, READ_COMMITTED = 0, 1
TXN_ID = "txn-1"


@pytest.fixture
async def broker(tmp_path: Path) -> AsyncIterator[Broker]:
    """These tests write transactional batches and markers by hand, with no transaction coordinator behind the
    producer, so the broker does not ask it (`transaction.partition.verification.enable=false`)."""
    async with running_broker(tmp_path, **UNVERIFIED_TRANSACTIONS) as instance:
        yield instance


async def connect(broker: Broker) -> WireClient:
    return await WireClient.connect(broker.ports[0])


async def txn_produce(client: WireClient, topic: str, pid: int, seq: int, *values: bytes, epoch: int = 0) -> Any:
    records = batch(*values, producer_id=pid, epoch=epoch, sequence=seq, transactional=True)
    return await produce(client, topic, records, transactional_id=TXN_ID)


def write_marker(
    broker: Broker, topic: str, pid: int, *, commit: bool, epoch: int = 0, coordinator_epoch: int = 0
) -> ErrorCode:
    return broker.txn_markers.write(
        topic, 0, producer_id=pid, producer_epoch=epoch, coordinator_epoch=coordinator_epoch, commit=commit
    )


def batches(partition: Any) -> list[RecordBatch]:
    data = partition.records or b""
    out: list[RecordBatch] = []
    pos = 0
    while pos < len(data):
        one, pos = decode_batch(data, pos)
        out.append(one)
    return out


def values(partition: Any) -> list[bytes | None]:
    """The data records' values, as a consumer hands them over (control batches hold none)."""
    return [record.value for one in batches(partition) if not one.is_control for record in one.records]


# --- Produce -----------------------------------------------------------------------------------------------------


async def test_a_transactional_batch_without_a_transactional_id_is_refused_for_the_whole_request(
    broker: Broker,
) -> None:
    """KafkaApis.handleProduceRequest: transactional records need WRITE on a transactional id, and there is none."""
    broker.create_topic("t", 1, {})
    client = await connect(broker)
    refused = await produce(client, "t", batch(b"a", producer_id=5, epoch=0, sequence=0, transactional=True))
    assert (refused.error_code, refused.base_offset) == (ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, -1)
    assert broker.logs.get("t", 0).log_end_offset == 0  # type: ignore[union-attr]
    await client.close()


async def test_t39_t41_a_transactional_write_holds_the_lso_until_its_commit_marker(broker: Broker) -> None:
    broker.create_topic("t", 1, {})
    client = await connect(broker)
    assert (await produce(client, "t", batch(b"plain"))).error_code == ErrorCode.NONE  # 0
    written = await txn_produce(client, "t", 5, 0, b"t1", b"t2")  # 1-2
    assert (written.error_code, written.base_offset) == (ErrorCode.NONE, 1)
    committed_view = await fetch(client, "t", isolation_level=READ_COMMITTED)
    assert values(committed_view) == [b"plain"]
    assert (committed_view.high_watermark, committed_view.last_stable_offset) == (3, 1)
    assert committed_view.aborted_transactions == []
    everything = await fetch(client, "t", isolation_level=READ_UNCOMMITTED)
    assert values(everything) == [b"plain", b"t1", b"t2"]
    assert (everything.last_stable_offset, everything.aborted_transactions) == (1, None)
    assert write_marker(broker, "t", 5, commit=True) == ErrorCode.NONE  # 3
    after = await fetch(client, "t", isolation_level=READ_COMMITTED)
    assert values(after) == [b"plain", b"t1", b"t2"]
    assert [one.is_control for one in batches(after)] == [False, False, True]  # clients skip the marker
    assert (after.high_watermark, after.last_stable_offset, after.aborted_transactions) == (4, 4, [])
    await client.close()


async def test_t42_read_committed_lists_the_aborted_transactions_of_the_fetched_range(broker: Broker) -> None:
    broker.create_topic("t", 1, {})
    client = await connect(broker)
    await txn_produce(client, "t", 5, 0, b"doomed")  # 0
    await txn_produce(client, "t", 6, 0, b"kept")  # 1
    assert write_marker(broker, "t", 5, commit=False) == ErrorCode.NONE  # 2
    assert write_marker(broker, "t", 6, commit=True) == ErrorCode.NONE  # 3
    committed = await fetch(client, "t", isolation_level=READ_COMMITTED)
    assert committed.aborted_transactions == [AbortedTransaction(producer_id=5, first_offset=0)]
    assert committed.last_stable_offset == 4
    uncommitted = await fetch(client, "t", isolation_level=READ_UNCOMMITTED)
    assert uncommitted.aborted_transactions is None
    past = await fetch(client, "t", 3, isolation_level=READ_COMMITTED)
    assert past.aborted_transactions == []  # the abort ended before offset 3
    await client.close()


async def test_t39_non_transactional_write_during_an_open_transaction_is_invalid_txn_state(broker: Broker) -> None:
    broker.create_topic("t", 1, {})
    client = await connect(broker)
    await txn_produce(client, "t", 5, 0, b"t1")
    plain = await produce(client, "t", batch(b"x", producer_id=5, epoch=0, sequence=1), transactional_id=TXN_ID)
    assert plain.error_code == ErrorCode.INVALID_TXN_STATE
    await client.close()


async def test_a_retried_transactional_batch_gets_its_original_offset(broker: Broker) -> None:
    broker.create_topic("t", 1, {})
    client = await connect(broker)
    await txn_produce(client, "t", 5, 0, b"t1")
    retried = await txn_produce(client, "t", 5, 0, b"t1")
    assert (retried.error_code, retried.base_offset) == (ErrorCode.NONE, 0)
    assert broker.logs.get("t", 0).log_end_offset == 1  # type: ignore[union-attr]
    await client.close()


async def test_the_verifier_decides_for_a_producer_with_no_open_transaction_on_the_partition(broker: Broker) -> None:
    broker.create_topic("t", 1, {})
    asked: list[TxnVerification] = []
    answer = [ErrorCode.INVALID_TXN_STATE]

    def verifier(request: TxnVerification) -> ErrorCode:
        asked.append(request)
        return answer[0]

    broker.records.verifier = verifier
    client = await connect(broker)
    refused = await txn_produce(client, "t", 5, 0, b"t1")
    assert (refused.error_code, refused.base_offset) == (ErrorCode.INVALID_TXN_STATE, -1)
    assert asked == [TxnVerification(TXN_ID, 5, 0, "t", 0, 9)]
    answer[0] = ErrorCode.NONE
    assert (await txn_produce(client, "t", 5, 0, b"t1")).error_code == ErrorCode.NONE
    assert (await txn_produce(client, "t", 5, 1, b"t2")).error_code == ErrorCode.NONE
    assert len(asked) == 2  # the open transaction needs no second verification (Kafka's hasOngoingTransaction)
    assert (await produce(client, "t", batch(b"plain"))).error_code == ErrorCode.NONE
    assert len(asked) == 2  # nor does a non-transactional write
    await client.close()


# --- markers -----------------------------------------------------------------------------------------------------


async def test_t35_t37_marker_refusals(broker: Broker) -> None:
    broker.create_topic("t", 1, {})
    client = await connect(broker)
    assert write_marker(broker, "missing", 5, commit=True) == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    await txn_produce(client, "t", 5, 0, b"t1", epoch=3)
    assert write_marker(broker, "t", 5, commit=True, epoch=2) == ErrorCode.INVALID_PRODUCER_EPOCH
    assert write_marker(broker, "t", 5, commit=False, epoch=3, coordinator_epoch=4) == ErrorCode.NONE
    await txn_produce(client, "t", 5, 1, b"t2", epoch=3)
    assert write_marker(broker, "t", 5, commit=True, epoch=3, coordinator_epoch=3) == (
        ErrorCode.TRANSACTION_COORDINATOR_FENCED
    )
    assert broker.logs.get("t", 0).log_end_offset == 3  # type: ignore[union-attr]
    await client.close()


async def test_t41_a_read_committed_long_poll_waits_for_the_lso_not_the_high_watermark(broker: Broker) -> None:
    broker.create_topic("t", 1, {})
    consumer = await connect(broker)
    producer = await connect(broker)
    waiting = asyncio.create_task(
        fetch(consumer, "t", 0, max_wait_ms=30_000, min_bytes=1, isolation_level=READ_COMMITTED)
    )
    while broker.fetches.parked < 1:
        assert not waiting.done(), waiting.result()
        await asyncio.sleep(0.001)
    await txn_produce(producer, "t", 5, 0, b"t1")
    while broker.fetches.parked < 2:  # woken by the append, found nothing below the LSO, parked again
        assert not waiting.done(), waiting.result()
        await asyncio.sleep(0.001)
    assert write_marker(broker, "t", 5, commit=True) == ErrorCode.NONE
    fetched = await waiting
    assert values(fetched) == [b"t1"] and fetched.last_stable_offset == 2
    await consumer.close()
    await producer.close()


# --- ListOffsets -------------------------------------------------------------------------------------------------


async def list_offset(client: WireClient, timestamp: int, isolation: int, version: int = 7) -> tuple[int, int]:
    request = ListOffsetsRequest(
        replica_id=-1,
        isolation_level=isolation,
        topics=[ListOffsetsTopic(name="t", partitions=[ListOffsetsPartition(partition_index=0, timestamp=timestamp)])],
    )
    response = await client.call(ApiKey.LIST_OFFSETS, version, request)
    [result] = response.topics[0].partitions
    assert result.error_code == ErrorCode.NONE
    return result.offset, result.timestamp


async def test_t43_list_offsets_honours_the_isolation_level(broker: Broker) -> None:
    broker.create_topic("t", 1, {})
    client = await connect(broker)
    await produce(client, "t", batch(b"a", timestamp=BASE_TS))  # 0
    await txn_produce(client, "t", 5, 0, b"t1")  # 1, open; timestamp BASE_TS
    await produce(client, "t", batch(b"late", timestamp=BASE_TS + 50))  # 2
    assert await list_offset(client, -1, READ_COMMITTED) == (1, -1)
    assert await list_offset(client, -1, READ_UNCOMMITTED) == (3, -1)
    assert await list_offset(client, -1, READ_UNCOMMITTED, version=1) == (3, -1)
    assert await list_offset(client, -2, READ_COMMITTED) == (0, -1)
    # A timestamp lookup answering at or beyond the LSO is not returned to a read_committed client.
    assert await list_offset(client, BASE_TS + 10, READ_COMMITTED) == (-1, -1)
    assert await list_offset(client, BASE_TS + 10, READ_UNCOMMITTED) == (2, BASE_TS + 50)
    assert await list_offset(client, BASE_TS, READ_COMMITTED) == (0, BASE_TS)
    assert await list_offset(client, -3, READ_COMMITTED) == (-1, -1)  # the max timestamp is at offset 2
    assert write_marker(broker, "t", 5, commit=True) == ErrorCode.NONE
    assert await list_offset(client, -1, READ_COMMITTED) == (4, -1)
    assert await list_offset(client, BASE_TS + 10, READ_COMMITTED) == (2, BASE_TS + 50)
    await client.close()


# --- DescribeProducers -------------------------------------------------------------------------------------------


async def test_t69_describe_producers_lists_each_partitions_active_producers(broker: Broker) -> None:
    broker.create_topic("t", 1, {})
    client = await connect(broker)
    await produce(client, "t", batch(b"i1", b"i2", producer_id=3, epoch=1, sequence=0, timestamp=BASE_TS))
    await txn_produce(client, "t", 5, 0, b"t1")  # offset 2
    await txn_produce(client, "t", 6, 0, b"t2")  # offset 3
    assert write_marker(broker, "t", 6, commit=True, coordinator_epoch=7) == ErrorCode.NONE
    request = DescribeProducersRequest(
        topics=[TopicRequest(name="t", partition_indexes=[0, 4]), TopicRequest(name="nope", partition_indexes=[1])]
    )
    response = await client.call(ApiKey.DESCRIBE_PRODUCERS, 0, request)
    [known, unknown] = response.topics
    [partition, missing] = known.partitions
    assert (partition.partition_index, partition.error_code, partition.error_message) == (0, ErrorCode.NONE, None)
    marker_timestamp = partition.active_producers[2].last_timestamp
    assert partition.active_producers == [
        ProducerState(
            producer_id=3,
            producer_epoch=1,
            last_sequence=1,
            last_timestamp=BASE_TS,
            coordinator_epoch=-1,
            current_txn_start_offset=-1,
        ),
        ProducerState(
            producer_id=5,
            producer_epoch=0,
            last_sequence=0,
            last_timestamp=BASE_TS,
            coordinator_epoch=-1,
            current_txn_start_offset=2,
        ),
        ProducerState(
            producer_id=6,
            producer_epoch=0,
            last_sequence=0,
            last_timestamp=marker_timestamp,
            coordinator_epoch=7,
            current_txn_start_offset=-1,
        ),
    ]
    assert marker_timestamp > BASE_TS  # the marker's (the broker's clock), not the data's
    assert (missing.partition_index, missing.error_code, missing.active_producers) == (
        4,
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        [],
    )
    assert unknown.name == "nope"
    assert [(p.partition_index, p.error_code) for p in unknown.partitions] == [
        (1, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    ]
    await client.close()


async def test_api_versions_advertises_the_transaction_apis(broker: Broker) -> None:
    """Every version Kafka 4.4 serves but InitProducerId v6 (two-phase commit, unstable there); WriteTxnMarkers is
    broker-to-broker and not served. Transaction version 2's versions and feature: test_tv2_wire.py."""
    client = await connect(broker)
    response = await client.call(ApiKey.API_VERSIONS, 3, NAMED_API_VERSIONS)
    advertised = {api.api_key: (api.min_version, api.max_version) for api in response.api_keys}
    assert advertised[ApiKey.DESCRIBE_PRODUCERS] == (0, 0)
    assert advertised[ApiKey.INIT_PRODUCER_ID] == (0, 5)
    assert advertised[ApiKey.ADD_PARTITIONS_TO_TXN] == (0, 5)
    assert advertised[ApiKey.ADD_OFFSETS_TO_TXN] == (0, 4)
    assert advertised[ApiKey.END_TXN] == (0, 5)
    assert advertised[ApiKey.TXN_OFFSET_COMMIT] == (0, 6)
    assert advertised[ApiKey.DESCRIBE_TRANSACTIONS] == (0, 0)
    assert advertised[ApiKey.LIST_TRANSACTIONS] == (0, 2)
    assert ApiKey.WRITE_TXN_MARKERS not in advertised
    await client.close()


# --- restarts ----------------------------------------------------------------------------------------------------


async def test_an_open_transaction_still_holds_the_lso_after_a_restart(tmp_path: Path) -> None:
    async with running_broker(tmp_path, **UNVERIFIED_TRANSACTIONS) as broker:
        broker.create_topic("t", 1, {})
        client = await connect(broker)
        await txn_produce(client, "t", 5, 0, b"t1")
        await produce(client, "t", batch(b"after"))
        await client.close()
    async with running_broker(tmp_path, **UNVERIFIED_TRANSACTIONS) as broker:
        client = await connect(broker)
        held = await fetch(client, "t", isolation_level=READ_COMMITTED)
        assert (values(held), held.last_stable_offset, held.high_watermark) == ([], 0, 2)
        assert write_marker(broker, "t", 5, commit=False) == ErrorCode.NONE
        done = await fetch(client, "t", isolation_level=READ_COMMITTED)
        assert done.aborted_transactions == [AbortedTransaction(producer_id=5, first_offset=0)]
        assert values(done) == [b"t1", b"after"]  # the consumer drops t1 using the aborted list
        await client.close()


async def _delete_records(client: WireClient, topic: str, offset: int) -> int:
    wanted = DeleteRecordsTopic(name=topic, partitions=[DeleteRecordsPartition(partition_index=0, offset=offset)])
    response = await client.call(ApiKey.DELETE_RECORDS, 2, DeleteRecordsRequest(topics=[wanted], timeout_ms=5000))
    [result] = response.topics[0].partitions
    assert result.error_code == ErrorCode.NONE
    return int(result.low_watermark)


async def _producers(client: WireClient, topic: str) -> dict[int, tuple[int, int]]:
    """DescribeProducers: producer id -> (last sequence, current transaction start offset)."""
    request = DescribeProducersRequest(topics=[TopicRequest(name=topic, partition_indexes=[0])])
    [partition] = (await client.call(ApiKey.DESCRIBE_PRODUCERS, 0, request)).topics[0].partitions
    assert partition.error_code == ErrorCode.NONE
    return {p.producer_id: (p.last_sequence, p.current_txn_start_offset) for p in partition.active_producers}


async def test_delete_records_keeps_the_producers_until_a_restart_finds_them_below_the_log_start(
    tmp_path: Path,
) -> None:
    """Kafka 4.4 (ProducerStateManager.onLogStartOffsetIncremented) forgets no producer when the log start moves: a
    retry of a deleted batch is still its duplicate, an open transaction below the log start holds the last stable
    offset at the log start. Its next load (truncateAndReload) deletes the snapshots at or below the log start, so
    after DeleteRecords up to the high watermark and a clean restart every producer is gone."""
    async with running_broker(tmp_path, **UNVERIFIED_TRANSACTIONS) as broker:
        broker.create_topic("t", 1, {})
        client = await connect(broker)
        idempotent = batch(b"i1", b"i2", producer_id=3, epoch=0, sequence=0)
        await produce(client, "t", idempotent)  # 0..1
        await txn_produce(client, "t", 5, 0, b"t1")  # 2: open
        await produce(client, "t", batch(b"plain"))  # 3
        assert await _delete_records(client, "t", 3) == 3
        assert await _producers(client, "t") == {3: (1, -1), 5: (0, 2)}
        assert (await fetch(client, "t", 3, isolation_level=READ_COMMITTED)).last_stable_offset == 3
        retry = await produce(client, "t", idempotent)
        assert (retry.error_code, retry.base_offset, retry.log_start_offset) == (ErrorCode.NONE, 0, 3)
        assert await _delete_records(client, "t", -1) == 4
        assert await _producers(client, "t") == {3: (1, -1), 5: (0, 2)}
        await client.close()
    async with running_broker(tmp_path, **UNVERIFIED_TRANSACTIONS) as broker:
        client = await connect(broker)
        assert await _producers(client, "t") == {}
        assert (await fetch(client, "t", 4, isolation_level=READ_COMMITTED)).last_stable_offset == 4
        await client.close()
