"""Produce v11-v13 over the wire with the broker's own transaction coordinator behind it (issue #16).

v11 answers a transactional write to a partition never added TRANSACTION_ABORTABLE (KIP-890 part 1's generic
error); v12 adds the partition to the producer's transaction itself (KIP-890 part 2), where older versions are
refused; v13 names topics by id. The differential scenarios every_version_produce and
txn_produce_v12_adds_the_partition_itself compare the same cases with Kafka 4.4.
"""

from __future__ import annotations

import uuid

import pytest

from broker.app import Broker
from protocol.errors import ErrorCode
from protocol.messages.create_topics import CreatableTopic, CreateTopicsRequest
from protocol.messages.describe_transactions import DescribeTransactionsRequest
from protocol.registry import ApiKey
from tests.broker.wire import WireClient
from tests.support.data_plane import batch, produce, produce_request
from tests.support.txn_wire import TxnWire

TXN_ID = "txn-v12"
GHOST_ID = uuid.UUID("0f0f0f0f-0000-4000-8000-000000000002")


@pytest.fixture(autouse=True)
async def _loaded(broker: Broker) -> None:
    await broker.loaded.wait()


async def _topic(client: WireClient, name: str, partitions: int = 2) -> uuid.UUID:
    body = CreateTopicsRequest(topics=[CreatableTopic(name=name, num_partitions=partitions, replication_factor=1)])
    [created] = (await client.call(ApiKey.CREATE_TOPICS, 7, body)).topics
    assert created.error_code == ErrorCode.NONE
    return created.topic_id


async def _producer(client: WireClient) -> TxnWire:
    producer = TxnWire(client, TXN_ID, 60_000)
    assert await producer.init() == ErrorCode.NONE
    return producer


def _txn_batch(producer: TxnWire, value: bytes, sequence: int = 0, epoch: int | None = None) -> bytes:
    epoch = producer.epoch if epoch is None else epoch
    return batch(value, producer_id=producer.producer_id, epoch=epoch, sequence=sequence, transactional=True)


async def _transaction(client: WireClient) -> tuple[str, list[tuple[str, list[int]]]]:
    [state] = (
        await client.call(ApiKey.DESCRIBE_TRANSACTIONS, 0, DescribeTransactionsRequest(transactional_ids=[TXN_ID]))
    ).transaction_states
    return state.transaction_state, sorted((t.topic, sorted(t.partitions)) for t in state.topics)


@pytest.mark.parametrize(
    ("version", "expected"), [(10, ErrorCode.INVALID_TXN_STATE), (11, ErrorCode.TRANSACTION_ABORTABLE)]
)
async def test_a_partition_never_added_is_refused_before_v12(broker: Broker, version: int, expected: ErrorCode) -> None:
    """KIP-890 part 1: v11 knows TRANSACTION_ABORTABLE, older versions get INVALID_TXN_STATE (Kafka's
    AddPartitionsToTxnManager keeps the generic error from v11 on); nothing is written or added."""
    client = await WireClient.connect(broker.ports[0])
    await _topic(client, "orders")
    producer = await _producer(client)
    refused = await produce(client, "orders", _txn_batch(producer, b"x"), version=version, transactional_id=TXN_ID)
    assert (refused.error_code, refused.base_offset) == (expected, -1)
    assert await _transaction(client) == ("Empty", [])
    await client.close()


async def test_v12_adds_the_partitions_to_the_transaction_itself(broker: Broker) -> None:
    """KIP-890 part 2: no AddPartitionsToTxn; the v12 write makes the transaction Ongoing with its partition, a
    second partition joins it, the producer's next batch on the first needs nothing more, and an EndTxn of
    transaction version 0/1 commits it all."""
    client = await WireClient.connect(broker.ports[0])
    await _topic(client, "orders")
    producer = await _producer(client)
    first = await produce(client, "orders", _txn_batch(producer, b"a"), version=12, transactional_id=TXN_ID)
    assert (first.error_code, first.base_offset) == (ErrorCode.NONE, 0)
    assert await _transaction(client) == ("Ongoing", [("orders", [0])])
    other = await produce(
        client, "orders", _txn_batch(producer, b"b"), partition=1, version=12, transactional_id=TXN_ID
    )
    again = await produce(client, "orders", _txn_batch(producer, b"c", 1), version=12, transactional_id=TXN_ID)
    assert (other.error_code, again.error_code, again.base_offset) == (ErrorCode.NONE, ErrorCode.NONE, 1)
    assert await _transaction(client) == ("Ongoing", [("orders", [0, 1])])
    assert await producer.end(commit=True) == ErrorCode.NONE
    await client.close()


async def test_v12_refusals_of_the_transaction_coordinator(broker: Broker) -> None:
    """The add's own errors, as Kafka's partition leader answers them: an old epoch INVALID_PRODUCER_EPOCH (the
    coordinator's PRODUCER_FENCED), an unknown producer id INVALID_PRODUCER_ID_MAPPING; nothing is written."""
    client = await WireClient.connect(broker.ports[0])
    await _topic(client, "orders")
    producer = await _producer(client)
    old = _txn_batch(producer, b"x", epoch=producer.epoch - 1) if producer.epoch > 0 else None
    if old is not None:
        fenced = await produce(client, "orders", old, version=12, transactional_id=TXN_ID)
        assert fenced.error_code == ErrorCode.INVALID_PRODUCER_EPOCH
    stranger = batch(b"x", producer_id=producer.producer_id + 1000, epoch=0, sequence=0, transactional=True)
    unknown = await produce(client, "orders", stranger, version=12, transactional_id=TXN_ID)
    assert (unknown.error_code, unknown.base_offset) == (ErrorCode.INVALID_PRODUCER_ID_MAPPING, -1)
    assert await _transaction(client) == ("Empty", [])
    await client.close()


async def test_v12_non_transactional_and_idempotent_writes_as_before(broker: Broker) -> None:
    client = await WireClient.connect(broker.ports[0])
    await _topic(client, "orders")
    assert (await produce(client, "orders", batch(b"plain"), version=12)).base_offset == 0
    idempotent = batch(b"once", producer_id=(await _producer(client)).producer_id, epoch=0, sequence=0)
    assert (await produce(client, "orders", idempotent, version=12)).error_code == ErrorCode.NONE
    await client.close()


async def test_v13_names_topics_by_id_and_answers_unknown_ids_last(broker: Broker) -> None:
    """KIP-516: each topic by id, answered by id; an unknown id is UNKNOWN_TOPIC_ID, listed after the topics that
    were written, as Kafka's merged response lists them."""
    client = await WireClient.connect(broker.ports[0])
    orders = await _topic(client, "orders")
    request = produce_request("", batch(b"a"))
    request.topic_data[0].topic_id = GHOST_ID
    written = produce_request("", batch(b"b")).topic_data[0]
    written.topic_id = orders
    request.topic_data.append(written)
    response = await client.call(ApiKey.PRODUCE, 13, request)
    answered = [
        (t.name, t.topic_id, [(p.error_code, p.base_offset) for p in t.partition_responses]) for t in response.responses
    ]
    assert answered == [
        ("", orders, [(ErrorCode.NONE, 0)]),
        ("", GHOST_ID, [(ErrorCode.UNKNOWN_TOPIC_ID, -1)]),
    ]
    await client.close()
