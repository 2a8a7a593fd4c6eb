"""The data plane over raw requests: Produce, Fetch (with long-poll), ListOffsets and InitProducerId.

Record batches are built with `protocol.records` exactly as a producer builds them; responses are decoded with the
same codec and their record sets decoded back into values.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

from broker.app import Broker
from protocol import api
from protocol.errors import ErrorCode
from protocol.messages.api_versions import ApiVersionsRequest
from protocol.messages.init_producer_id import InitProducerIdRequest
from protocol.messages.list_offsets import ListOffsetsPartition, ListOffsetsRequest, ListOffsetsTopic
from protocol.registry import ApiKey
from tests.broker.conftest import broker_config
from tests.broker.wire import WireClient
from tests.support.data_plane import (
    BASE_TS,
    FETCH_VERSION,
    PRODUCE_VERSION,
    batch,
    decoded,
    fetch,
    fetch_request,
    produce,
    produce_request,
)

EARLIEST, LATEST, MAX_TIMESTAMP = -2, -1, -3


async def connect(broker: Broker) -> WireClient:
    return await WireClient.connect(broker.ports[0])


# ---------------------------------------------------------------------------------------------------------------
# Produce
# ---------------------------------------------------------------------------------------------------------------


async def test_produce_assigns_offsets_on_append_and_fetch_returns_them(broker: Broker) -> None:
    broker.create_topic("orders", 1, {})
    client = await connect(broker)
    first = await produce(client, "orders", batch(b"a"))
    second = await produce(client, "orders", batch(b"b", b"c"))
    third = await produce(client, "orders", batch(b"d", b"e", b"f"))
    assert [(r.error_code, r.base_offset) for r in (first, second, third)] == [
        (ErrorCode.NONE, 0),
        (ErrorCode.NONE, 1),
        (ErrorCode.NONE, 3),
    ]
    assert (third.log_append_time_ms, third.log_start_offset) == (-1, 0)  # CreateTime topic
    fetched = await fetch(client, "orders")
    assert fetched.error_code == ErrorCode.NONE
    assert (fetched.high_watermark, fetched.last_stable_offset, fetched.log_start_offset) == (6, 6, 0)
    assert [(offset, value) for offset, _, value in decoded(fetched.records)] == list(
        enumerate([b"a", b"b", b"c", b"d", b"e", b"f"])
    )
    middle = await fetch(client, "orders", 4)
    offsets = [offset for offset, _, _ in decoded(middle.records)]
    assert offsets[0] <= 4 and offsets[-1] == 5  # whole batches: the one holding offset 4 may start before it
    await client.close()


async def test_produce_to_a_log_append_time_topic_reports_the_append_time(broker: Broker) -> None:
    broker.create_topic("stamped", 1, {"message.timestamp.type": "LogAppendTime"})
    client = await connect(broker)
    result = await produce(client, "stamped", batch(b"x", timestamp=1))
    assert result.error_code == ErrorCode.NONE and result.log_append_time_ms > 1
    [(_, timestamp, _)] = decoded((await fetch(client, "stamped")).records)
    assert timestamp == result.log_append_time_ms
    await client.close()


async def test_acks_0_gets_no_response_at_all(broker: Broker) -> None:
    broker.create_topic("fire", 1, {})
    client = await connect(broker)
    _, silent = client.frame(ApiKey.PRODUCE, PRODUCE_VERSION, produce_request("fire", batch(b"x"), acks=0))
    correlation, probe = client.frame(ApiKey.API_VERSIONS, 0, ApiVersionsRequest())
    client.writer.write(silent + probe)
    await client.writer.drain()
    header, body = api.decode_response(ApiKey.API_VERSIONS, 0, await client.read_frame())
    assert header.correlation_id == correlation and body.error_code == ErrorCode.NONE
    log = broker.logs.get("fire", 0)
    assert log is not None and log.log_end_offset == 1  # written all the same
    await client.close()


async def test_acks_0_produce_that_fails_closes_the_connection(broker: Broker) -> None:
    """Kafka's way to tell an acks=0 producer that something went wrong: it drops the connection."""
    client = await connect(broker)
    _, frame = client.frame(ApiKey.PRODUCE, PRODUCE_VERSION, produce_request("no-such-topic", batch(b"x"), acks=0))
    client.writer.write(frame)
    await client.writer.drain()
    assert await client.closed_by_peer()
    await client.close()


async def test_acks_other_than_minus_one_zero_one_is_invalid_required_acks(broker: Broker) -> None:
    broker.create_topic("acks", 1, {})
    client = await connect(broker)
    response = await client.call(ApiKey.PRODUCE, PRODUCE_VERSION, produce_request("acks", batch(b"x"), acks=2))
    [result] = response.responses[0].partition_responses
    assert result.error_code == ErrorCode.INVALID_REQUIRED_ACKS
    assert broker.logs.get("acks", 0).log_end_offset == 0  # type: ignore[union-attr]
    await client.close()


async def test_produce_refusals(broker: Broker) -> None:
    broker.create_topic("known", 1, {})
    client = await connect(broker)
    assert (await produce(client, "unknown", batch(b"x"))).error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert broker.logs.topic("unknown") is None  # Produce never auto-creates; Metadata does
    unknown_partition = await produce(client, "known", batch(b"x"), partition=3)
    assert unknown_partition.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    internal = await produce(client, "__consumer_offsets", batch(b"x"))
    assert internal.error_code == ErrorCode.INVALID_TOPIC_EXCEPTION
    corrupt = bytearray(batch(b"payload"))
    corrupt[-1] ^= 0xFF  # inside the records: covered by the CRC
    assert (await produce(client, "known", bytes(corrupt))).error_code == ErrorCode.CORRUPT_MESSAGE
    assert (await produce(client, "known", None)).error_code == ErrorCode.INVALID_RECORD
    broker.create_topic("compacted", 1, {"cleanup.policy": "compact"})
    keyless = await produce(client, "compacted", batch(b"no key"))
    assert keyless.error_code == ErrorCode.INVALID_RECORD and keyless.error_message
    assert [(e.batch_index, e.batch_index_error_message) for e in keyless.record_errors] == [
        (0, "Compacted topic cannot accept message without key.")
    ]
    assert broker.logs.get("known", 0).log_end_offset == 0  # type: ignore[union-attr]
    await client.close()


async def test_produce_v3_and_later_allow_exactly_one_batch_per_partition(broker: Broker) -> None:
    """ProduceRequest.validateRecords: a second batch, or a pre-v2 message set, is INVALID_RECORD."""
    broker.create_topic("one-batch", 1, {})
    client = await connect(broker)
    two = await produce(client, "one-batch", batch(b"a") + batch(b"b"))
    assert two.error_code == ErrorCode.INVALID_RECORD
    legacy = bytearray(batch(b"a"))
    legacy[16] = 1  # magic 1
    assert (await produce(client, "one-batch", bytes(legacy))).error_code == ErrorCode.INVALID_RECORD
    assert broker.logs.get("one-batch", 0).log_end_offset == 0  # type: ignore[union-attr]
    await client.close()


async def test_max_message_bytes_is_the_topic_config(tmp_path: Path) -> None:
    """The batch size limit is the topic's max.message.bytes (broker message.max.bytes is only its default)."""
    broker = Broker(broker_config(tmp_path, message_max_bytes="1000"))
    await broker.start()
    try:
        broker.create_topic("small", 1, {})
        broker.create_topic("large", 1, {"max.message.bytes": "100000"})
        client = await connect(broker)
        big = batch(b"x" * 5000)
        assert (await produce(client, "small", big)).error_code == ErrorCode.MESSAGE_TOO_LARGE
        assert (await produce(client, "large", big)).error_code == ErrorCode.NONE
        await client.close()
    finally:
        await broker.stop()


# ---------------------------------------------------------------------------------------------------------------
# Idempotent producers
# ---------------------------------------------------------------------------------------------------------------


async def init_producer_id(client: WireClient, version: int = 4, **kw: Any) -> Any:
    request = InitProducerIdRequest(transactional_id=None, transaction_timeout_ms=60_000, **kw)
    return await client.call(ApiKey.INIT_PRODUCER_ID, version, request)


async def test_idempotent_producer_sequences_duplicates_and_gaps(broker: Broker) -> None:
    broker.create_topic("idem", 1, {})
    client = await connect(broker)
    pid = await init_producer_id(client)
    assert (pid.error_code, pid.producer_epoch) == (ErrorCode.NONE, 0) and pid.producer_id >= 0
    producer = {"producer_id": pid.producer_id, "epoch": 0}
    first = batch(b"a", b"b", sequence=0, **producer)  # sequences 0-1
    offsets = [
        (await produce(client, "idem", first)).base_offset,
        (await produce(client, "idem", batch(b"c", sequence=2, **producer))).base_offset,
        (await produce(client, "idem", batch(b"d", sequence=3, **producer))).base_offset,
    ]
    assert offsets == [0, 2, 3]
    retried = await produce(client, "idem", batch(b"c", sequence=2, **producer))
    # Kafka answers a duplicate with the original batch's timestamp as its log append time, CreateTime or not
    assert (retried.error_code, retried.base_offset, retried.log_append_time_ms) == (ErrorCode.NONE, 2, BASE_TS)
    oldest = await produce(client, "idem", first)
    assert (oldest.error_code, oldest.base_offset) == (ErrorCode.NONE, 0)
    gap = await produce(client, "idem", batch(b"e", sequence=6, **producer))
    assert gap.error_code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert [v for _, _, v in decoded((await fetch(client, "idem")).records)] == [b"a", b"b", b"c", b"d"]
    assert (await produce(client, "idem", batch(b"e", sequence=4, **producer))).base_offset == 4
    await client.close()


async def test_idempotent_producer_epoch_bump_fences_the_old_epoch(broker: Broker) -> None:
    """The Java client bumps an idempotent producer's epoch locally (KIP-360) and restarts at sequence 0."""
    broker.create_topic("epochs", 1, {})
    client = await connect(broker)
    pid = (await init_producer_id(client)).producer_id
    assert (await produce(client, "epochs", batch(b"a", producer_id=pid, epoch=0, sequence=0))).base_offset == 0
    bumped = await produce(client, "epochs", batch(b"b", producer_id=pid, epoch=1, sequence=0))
    assert (bumped.error_code, bumped.base_offset) == (ErrorCode.NONE, 1)
    stale = await produce(client, "epochs", batch(b"c", producer_id=pid, epoch=0, sequence=1))
    assert stale.error_code == ErrorCode.INVALID_PRODUCER_EPOCH
    not_zero = await produce(client, "epochs", batch(b"c", producer_id=pid, epoch=2, sequence=5))
    assert not_zero.error_code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER  # a new epoch starts at sequence 0
    assert broker.logs.get("epochs", 0).log_end_offset == 2  # type: ignore[union-attr]
    await client.close()


async def test_init_producer_id_hands_out_distinct_ids_to_idempotent_and_transactional_producers(
    broker: Broker,
) -> None:
    client = await connect(broker)
    first = await init_producer_id(client, version=0)
    second = await init_producer_id(client, version=4)
    assert first.producer_id != second.producer_id and first.error_code == second.error_code == ErrorCode.NONE
    # Without a transactional id Kafka's TransactionCoordinator ignores the given id/epoch: always a fresh id.
    again = await init_producer_id(client, version=4, producer_id=second.producer_id, producer_epoch=0)
    assert again.error_code == ErrorCode.NONE
    assert again.producer_id not in (first.producer_id, second.producer_id) and again.producer_epoch == 0
    seen = {first.producer_id, second.producer_id, again.producer_id}
    for version in (0, 4):  # T9: a transactional id gets an id of the same allocator, at epoch 0
        request = InitProducerIdRequest(transactional_id=f"tx-{version}", transaction_timeout_ms=60_000)
        transactional = await client.call(ApiKey.INIT_PRODUCER_ID, version, request)
        assert (transactional.error_code, transactional.producer_epoch) == (ErrorCode.NONE, 0)
        assert transactional.producer_id not in seen
        seen.add(transactional.producer_id)
    await client.close()


async def test_producer_ids_and_sequence_state_survive_a_restart(tmp_path: Path) -> None:
    """A retry that straddles a broker restart is still recognised (Kafka rebuilds producer state from the log)."""
    broker = Broker(broker_config(tmp_path))
    await broker.start()
    try:
        broker.create_topic("durable", 1, {})
        client = await connect(broker)
        pid = (await init_producer_id(client)).producer_id
        sent = batch(b"a", producer_id=pid, epoch=0, sequence=0)
        assert (await produce(client, "durable", sent)).base_offset == 0
        await client.close()
    finally:
        await broker.stop()
    broker = Broker(broker_config(tmp_path))
    await broker.start()
    try:
        client = await connect(broker)
        assert (await init_producer_id(client)).producer_id != pid
        retried = await produce(client, "durable", sent)
        assert (retried.error_code, retried.base_offset) == (ErrorCode.NONE, 0)
        gap = await produce(client, "durable", batch(b"c", producer_id=pid, epoch=0, sequence=5))
        assert gap.error_code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
        assert broker.logs.get("durable", 0).log_end_offset == 1  # type: ignore[union-attr]
        await client.close()
    finally:
        await broker.stop()


async def test_producer_state_does_not_outlive_a_deleted_topic(broker: Broker) -> None:
    """A topic deleted and created again starts with no producer state: nothing is mistaken for a retry."""
    broker.create_topic("again", 1, {})
    client = await connect(broker)
    pid = (await init_producer_id(client)).producer_id
    sent = batch(b"a", producer_id=pid, epoch=0, sequence=0)
    assert (await produce(client, "again", sent)).base_offset == 0
    await broker.topics.delete_topic("again")
    broker.create_topic("again", 1, {})
    result = await produce(client, "again", sent)
    assert (result.error_code, result.base_offset) == (ErrorCode.NONE, 0)
    assert broker.logs.get("again", 0).log_end_offset == 1  # type: ignore[union-attr]
    await client.close()


# ---------------------------------------------------------------------------------------------------------------
# Fetch
# ---------------------------------------------------------------------------------------------------------------


async def test_fetch_offsets_out_of_range_and_at_the_end(broker: Broker) -> None:
    broker.create_topic("range", 1, {})
    client = await connect(broker)
    await produce(client, "range", batch(b"a", b"b"))
    at_end = await fetch(client, "range", 2)
    assert (at_end.error_code, at_end.records, at_end.high_watermark) == (ErrorCode.NONE, b"", 2)
    beyond = await fetch(client, "range", 3)
    assert beyond.error_code == ErrorCode.OFFSET_OUT_OF_RANGE
    assert not decoded(beyond.records)
    missing = await fetch(client, "nope")
    assert missing.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    await client.close()


async def test_fetch_long_poll_completes_when_a_produce_arrives(broker: Broker) -> None:
    broker.create_topic("poll", 1, {})
    consumer = await connect(broker)
    producer = await connect(broker)
    waiting = asyncio.create_task(fetch(consumer, "poll", 0, max_wait_ms=5000, min_bytes=1))
    while len(broker.fetches) == 0:  # parked in the fetch purgatory
        assert not waiting.done(), waiting.result()
        await asyncio.sleep(0.001)
    assert (await produce(producer, "poll", batch(b"news"))).error_code == ErrorCode.NONE
    fetched = await waiting
    assert fetched.error_code == ErrorCode.NONE and fetched.high_watermark == 1
    assert [v for _, _, v in decoded(fetched.records)] == [b"news"]
    assert len(broker.fetches) == 0
    await consumer.close()
    await producer.close()


async def test_fetch_long_poll_with_nothing_produced_returns_empty(broker: Broker) -> None:
    broker.create_topic("quiet", 1, {})
    client = await connect(broker)
    fetched = await fetch(client, "quiet", 0, max_wait_ms=200, min_bytes=1)
    assert (fetched.error_code, fetched.records, fetched.high_watermark) == (ErrorCode.NONE, b"", 0)
    assert len(broker.fetches) == 0
    await client.close()


async def test_fetch_long_poll_answers_at_once_on_an_error(broker: Broker) -> None:
    client = await connect(broker)
    fetched = await fetch(client, "missing", 0, max_wait_ms=60_000, min_bytes=1)
    assert fetched.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    await client.close()


async def test_fetch_v13_by_topic_id_and_unknown_topic_id(broker: Broker) -> None:
    info = broker.create_topic("by-id", 1, {})
    client = await connect(broker)
    await produce(client, "by-id", batch(b"x", b"y"))
    for version in (13, 16):
        response = await client.call(ApiKey.FETCH, version, fetch_request("", topic_id=info.topic_id))
        [topic] = response.responses
        assert topic.topic_id == info.topic_id
        [partition] = topic.partitions
        assert (partition.error_code, partition.high_watermark) == (ErrorCode.NONE, 2)
        assert [v for _, _, v in decoded(partition.records)] == [b"x", b"y"]
        unknown = uuid.uuid4()
        response = await client.call(ApiKey.FETCH, version, fetch_request("", topic_id=unknown, max_wait_ms=60_000))
        [topic] = response.responses
        assert topic.topic_id == unknown
        assert [p.error_code for p in topic.partitions] == [ErrorCode.UNKNOWN_TOPIC_ID]
    await client.close()


async def test_fetch_with_a_session_is_refused(broker: Broker) -> None:
    """No KIP-227 sessions: a full fetch asks with session 0, anything else is FETCH_SESSION_ID_NOT_FOUND."""
    broker.create_topic("sess", 1, {})
    client = await connect(broker)
    request = fetch_request("sess")
    request.session_id, request.session_epoch = 77, 3
    response = await client.call(ApiKey.FETCH, FETCH_VERSION, request)
    assert response.error_code == ErrorCode.FETCH_SESSION_ID_NOT_FOUND
    request = fetch_request("sess")
    request.session_epoch = 0  # asks for a new session: answered as a full fetch with session id 0
    response = await client.call(ApiKey.FETCH, FETCH_VERSION, request)
    assert (response.error_code, response.session_id) == (ErrorCode.NONE, 0)
    await client.close()


# ---------------------------------------------------------------------------------------------------------------
# ListOffsets
# ---------------------------------------------------------------------------------------------------------------


async def list_offsets(client: WireClient, topic: str, timestamp: int, version: int = 8, **kw: Any) -> Any:
    request = ListOffsetsRequest(
        replica_id=-1,
        topics=[
            ListOffsetsTopic(
                name=topic, partitions=[ListOffsetsPartition(partition_index=0, timestamp=timestamp, **kw)]
            )
        ],
    )
    [partition] = (await client.call(ApiKey.LIST_OFFSETS, version, request)).topics[0].partitions
    return partition


async def test_list_offsets_earliest_latest_by_timestamp_and_max_timestamp(broker: Broker) -> None:
    broker.create_topic("times", 1, {})
    client = await connect(broker)
    empty = await list_offsets(client, "times", LATEST)
    assert (empty.error_code, empty.offset) == (ErrorCode.NONE, 0)
    await produce(client, "times", batch(b"a", b"b", timestamp=BASE_TS, timestamp_step=1))  # offsets 0-1
    await produce(client, "times", batch(b"c", timestamp=BASE_TS + 5000))  # offset 2: the max timestamp
    await produce(client, "times", batch(b"d", b"e", timestamp=BASE_TS + 3000, timestamp_step=1))  # offsets 3-4
    answers = {
        "earliest": await list_offsets(client, "times", EARLIEST),
        "latest": await list_offsets(client, "times", LATEST),
        "exact": await list_offsets(client, "times", BASE_TS + 1),
        "between": await list_offsets(client, "times", BASE_TS + 2000),
        "after-all": await list_offsets(client, "times", BASE_TS + 9000),
        "max": await list_offsets(client, "times", MAX_TIMESTAMP),
    }
    assert {name: (r.error_code, r.offset, r.timestamp) for name, r in answers.items()} == {
        "earliest": (ErrorCode.NONE, 0, -1),
        "latest": (ErrorCode.NONE, 5, -1),
        "exact": (ErrorCode.NONE, 1, BASE_TS + 1),
        "between": (ErrorCode.NONE, 2, BASE_TS + 5000),  # the first record (by offset) at or after the time
        "after-all": (ErrorCode.NONE, -1, -1),
        "max": (ErrorCode.NONE, 2, BASE_TS + 5000),
    }
    assert answers["latest"].leader_epoch == 0 and answers["after-all"].leader_epoch == -1
    missing = await list_offsets(client, "nope", LATEST)
    assert missing.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    await client.close()


async def test_list_offsets_v0_answers_old_style_offsets(broker: Broker) -> None:
    broker.create_topic("legacy", 1, {})
    client = await connect(broker)
    await produce(client, "legacy", batch(b"a", b"b", b"c"))
    latest = await list_offsets(client, "legacy", LATEST, version=0, max_num_offsets=1)
    earliest = await list_offsets(client, "legacy", EARLIEST, version=0, max_num_offsets=1)
    assert (latest.error_code, latest.old_style_offsets) == (ErrorCode.NONE, [3])
    assert (earliest.error_code, earliest.old_style_offsets) == (ErrorCode.NONE, [0])
    none = await list_offsets(client, "legacy", LATEST, version=0, max_num_offsets=0)
    assert none.old_style_offsets == []
    await client.close()


async def test_error_answers_carry_kafkas_sentinels(broker: Broker) -> None:
    """As Kafka 4.4 answers (found by the differential suite): a refused produce has base offset -1; a fetch error
    has high watermark, last stable and log start offset -1; read_uncommitted fetches carry no aborted-transaction
    list (null), nor does a failed read, while an unknown topic gets an empty one."""
    broker.create_topic("sentinels", 1, {})
    client = await connect(broker)
    ok = await produce(client, "sentinels", batch(b"one", b"two"))
    assert (ok.error_code, ok.base_offset) == (ErrorCode.NONE, 0)
    refused = await produce(client, "nowhere", batch(b"x"))
    assert (refused.error_code, refused.base_offset) == (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1)
    read = await fetch(client, "sentinels", 0)
    assert (read.error_code, read.high_watermark, read.aborted_transactions) == (ErrorCode.NONE, 2, None)
    for topic, offset, error, aborted in (
        ("sentinels", 99, ErrorCode.OFFSET_OUT_OF_RANGE, None),
        ("nowhere", 0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, []),
    ):
        response = await client.call(ApiKey.FETCH, FETCH_VERSION, fetch_request(topic, offset))
        [failed] = response.responses[0].partitions
        assert (failed.error_code, failed.high_watermark, failed.last_stable_offset, failed.log_start_offset) == (
            error,
            -1,
            -1,
            -1,
        )
        assert failed.aborted_transactions == aborted
    await client.close()
