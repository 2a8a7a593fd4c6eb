"""A Produce whose transactional batches come from more than one producer, over raw requests at every version.

Kafka's ReplicaManager.handleProduceAppend collects the (producer id, epoch) of every transactional batch among the
partitions that passed KafkaApis' checks (known topic and partition, one valid v2 batch) and, when there is more
than one, throws InvalidPidMappingException("Transactional records contained more than one producer ID") before
anything is verified or written: the whole request is answered with that error on every partition it names
(ProduceRequest.getErrorResponse: offsets -1, the message), and an acks=0 request loses its connection. The
differential scenario ``produce_of_two_transactional_producers`` compares the same requests with Kafka 4.4.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from broker.app import Broker
from protocol.errors import ErrorCode
from protocol.messages.produce import PartitionProduceData, ProduceRequest, TopicProduceData
from protocol.registry import ApiKey, supported_range
from tests.broker.conftest import UNVERIFIED_TRANSACTIONS, running_broker
from tests.broker.wire import WireClient
from tests.support.data_plane import batch

TXN_ID = "two-producers"
MESSAGE = "Transactional records contained more than one producer ID"
PRODUCE_VERSIONS = range(supported_range(ApiKey.PRODUCE)[0], supported_range(ApiKey.PRODUCE)[1] + 1)
TOPIC_IDS_VERSION = 13
ERROR_MESSAGE_VERSION = 8  # Produce responses carry error_message from v8


@pytest.fixture
async def broker(tmp_path: Path) -> AsyncIterator[Broker]:
    """No transaction coordinator behind these producers: a single producer's batches are written unverified."""
    async with running_broker(tmp_path, **UNVERIFIED_TRANSACTIONS) as instance:
        instance.create_topic("t", 3, {})
        yield instance


def _txn(pid: int, epoch: int = 0) -> bytes:
    return batch(b"x", producer_id=pid, epoch=epoch, sequence=0, transactional=True)


def _request(
    broker: Broker,
    version: int,
    partitions: list[tuple[int, bytes]],
    *,
    acks: int = -1,
    transactional_id: str | None = TXN_ID,
) -> ProduceRequest:
    """One topic "t" with ``partitions`` as (index, records); named by id from v13 on."""
    data = [PartitionProduceData(index=index, records=records) for index, records in partitions]
    topic = TopicProduceData(name="t", partition_data=data)
    if version >= TOPIC_IDS_VERSION:
        [info] = [info for info in broker.logs.topics() if info.name == "t"]
        topic.name, topic.topic_id = "", info.topic_id
    return ProduceRequest(transactional_id=transactional_id, acks=acks, timeout_ms=5000, topic_data=[topic])


def _answers(response: Any) -> list[tuple[int, int, int, int, int, str | None, list[Any]]]:
    return [
        (
            p.index,
            p.error_code,
            p.base_offset,
            p.log_append_time_ms,
            p.log_start_offset,
            p.error_message,
            p.record_errors,
        )
        for t in response.responses
        for p in t.partition_responses
    ]


def _refused(version: int, *indexes: int) -> list[tuple[int, int, int, int, int, str | None, list[Any]]]:
    message = MESSAGE if version >= ERROR_MESSAGE_VERSION else None
    return [(i, ErrorCode.INVALID_PRODUCER_ID_MAPPING, -1, -1, -1, message, []) for i in indexes]


def _log_ends(broker: Broker) -> list[int]:
    ends = []
    for partition in range(3):
        log = broker.logs.get("t", partition)
        assert log is not None
        ends.append(log.log_end_offset)
    return ends


@pytest.mark.parametrize("version", PRODUCE_VERSIONS)
async def test_two_transactional_producers_are_refused_for_the_whole_request(broker: Broker, version: int) -> None:
    """Every partition of the request gets the error, the unknown one included, and nothing is written."""
    client = await WireClient.connect(broker.ports[0])
    request = _request(broker, version, [(0, _txn(5)), (1, _txn(6)), (9, batch(b"y"))])
    response = await client.call(ApiKey.PRODUCE, version, request)
    assert _answers(response) == _refused(version, 0, 1, 9)
    assert _log_ends(broker) == [0, 0, 0]
    await client.close()


@pytest.mark.parametrize("version", [PRODUCE_VERSIONS.start, PRODUCE_VERSIONS.stop - 1])
async def test_one_producer_at_two_epochs_is_two_producers(broker: Broker, version: int) -> None:
    """Kafka counts (producer id, epoch) pairs."""
    client = await WireClient.connect(broker.ports[0])
    response = await client.call(ApiKey.PRODUCE, version, _request(broker, version, [(0, _txn(5)), (1, _txn(5, 1))]))
    assert _answers(response) == _refused(version, 0, 1)
    assert _log_ends(broker) == [0, 0, 0]
    await client.close()


async def test_only_transactional_batches_of_partitions_that_passed_the_checks_count(broker: Broker) -> None:
    """An idempotent batch of another producer, or a transactional one on an unknown partition or in a record set
    of two batches (refused INVALID_RECORD first), leaves a single transactional producer: written as usual."""
    client = await WireClient.connect(broker.ports[0])
    idempotent = batch(b"i", producer_id=6, epoch=0, sequence=0)
    two_batches = _txn(7) + _txn(8)
    partitions = [(0, _txn(5)), (1, idempotent), (2, two_batches), (9, _txn(9))]
    response = await client.call(ApiKey.PRODUCE, 9, _request(broker, 9, partitions))
    codes = [(index, code, base, message) for index, code, base, _, _, message, _ in _answers(response)]
    assert codes == [
        (0, ErrorCode.NONE, 0, None),
        (1, ErrorCode.NONE, 0, None),
        (2, ErrorCode.INVALID_RECORD, -1, None),  # Kafka's PartitionResponse(INVALID_RECORD) carries no message
        (9, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1, None),
    ]
    await client.close()


async def test_the_check_comes_after_the_transactional_id_and_before_acks(broker: Broker) -> None:
    """Without a transactional id the request is TRANSACTIONAL_ID_AUTHORIZATION_FAILED (KafkaApis checks that
    first); invalid acks are only looked at later (ReplicaManager.appendRecords), so two producers win over them."""
    client = await WireClient.connect(broker.ports[0])
    two = [(0, _txn(5)), (1, _txn(6))]
    anonymous = await client.call(ApiKey.PRODUCE, 9, _request(broker, 9, two, transactional_id=None))
    assert [code for _, code, *_ in _answers(anonymous)] == [ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED] * 2
    bad_acks = await client.call(ApiKey.PRODUCE, 9, _request(broker, 9, two, acks=2))
    assert _answers(bad_acks) == _refused(9, 0, 1)
    await client.close()


async def test_acks_0_loses_its_connection(broker: Broker) -> None:
    """ProduceRequest.getErrorResponse has no answer for acks=0: Kafka closes the connection instead."""
    client = await WireClient.connect(broker.ports[0])
    _, frame = client.frame(ApiKey.PRODUCE, 9, _request(broker, 9, [(0, _txn(5)), (1, _txn(6))], acks=0))
    client.writer.write(frame)
    await client.writer.drain()
    assert await client.closed_by_peer()
    assert _log_ends(broker) == [0, 0, 0]
    await client.close()


async def test_v13_unknown_topic_ids_are_answered_with_the_same_error(broker: Broker) -> None:
    client = await WireClient.connect(broker.ports[0])
    request = _request(broker, 13, [(0, _txn(5)), (1, _txn(6))])
    ghost = uuid.UUID("0f0f0f0f-0000-4000-8000-000000000016")
    request.topic_data.append(
        TopicProduceData(name="", topic_id=ghost, partition_data=[PartitionProduceData(index=0, records=_txn(7))])
    )
    response = await client.call(ApiKey.PRODUCE, 13, request)
    assert sorted((t.topic_id == ghost, t.name) for t in response.responses) == [(False, ""), (True, "")]
    assert sorted(_answers(response)) == sorted(_refused(13, 0, 1, 0))
    await client.close()
