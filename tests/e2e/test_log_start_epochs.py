"""DeleteRecords, DescribeLogDirs and fetch-position validation (OffsetForLeaderEpoch) through the clients'
own APIs, against group-broker and, with `--e2e-broker=kafka`, against Kafka 4.4: kafka-python, aiokafka and
confluent-kafka `delete_records`, kafkajs `deleteTopicRecords` + `fetchTopicOffsets`, a consumer that starts from
the earliest position after a deletion, kafka-python `describe_log_dirs`, and a kafka-python consumer resuming
from an offset committed with its leader epoch, which it validates with OffsetForLeaderEpoch (KIP-320)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiokafka.admin import AIOKafkaAdminClient, RecordsToDelete
from aiokafka.structs import TopicPartition as AioTopicPartition
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient
from kafka import KafkaAdminClient, KafkaConsumer
from kafka import TopicPartition as KpTopicPartition

from tests.e2e.broker_requests import requests_answered
from tests.e2e.confluent_client import ConfluentAdapter, LogLines
from tests.e2e.java_client import VALIDATION_LOG_LINE, JavaConsumer, JavaProgram, started
from tests.e2e.kafkajs_client import harness
from tests.e2e.scenario import WAIT_S, keyed, unique
from tests.e2e.targets import E2ETarget
from tests.support.broker_process import wait_until

pytestmark = pytest.mark.integration

RECORDS = 10


@pytest.fixture
def adapter(e2e_target: E2ETarget) -> Iterator[ConfluentAdapter]:
    client = ConfluentAdapter(e2e_target.bootstrap)
    yield client
    client.close()


def _topic_with_records(adapter: ConfluentAdapter, prefix: str) -> str:
    topic = unique(prefix)
    adapter.create_topic(topic, 1)
    adapter.produce(topic, keyed(0, RECORDS), partition=0)
    return topic


def _earliest_offset_read(bootstrap: str, topic: str) -> int:
    """The first offset a kafka-python consumer with no committed offset reads (auto.offset.reset=earliest)."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, auto_offset_reset="earliest", enable_auto_commit=False)
    try:
        partition = KpTopicPartition(topic, 0)
        consumer.assign([partition])
        assert consumer.beginning_offsets([partition])[partition] == consumer.position(partition)
        batches = consumer.poll(timeout_ms=int(WAIT_S * 1000), max_records=1)
        [record] = batches[partition]
        return int(record.offset)
    finally:
        consumer.close()


def test_kafka_python_delete_records_and_consume_from_the_earliest(
    adapter: ConfluentAdapter, e2e_target: E2ETarget
) -> None:
    topic = _topic_with_records(adapter, "kp-del")
    admin = KafkaAdminClient(bootstrap_servers=e2e_target.bootstrap)
    try:
        result = admin.delete_records({KpTopicPartition(topic, 0): 4})
        [(partition, answer)] = result.items()
        assert (partition, answer["low_watermark"], answer["error_code"]) == (KpTopicPartition(topic, 0), 4, 0)
    finally:
        admin.close()
    assert _earliest_offset_read(e2e_target.bootstrap, topic) == 4


def test_kafka_python_describe_log_dirs(adapter: ConfluentAdapter, e2e_target: E2ETarget) -> None:
    topic = _topic_with_records(adapter, "kp-dirs")
    admin = KafkaAdminClient(bootstrap_servers=e2e_target.bootstrap)
    try:
        [broker] = admin.describe_log_dirs(topic_partitions={topic: [0]})
    finally:
        admin.close()
    [log_dir] = broker["log_dirs"]
    assert log_dir["error_code"] == 0 and log_dir["log_dir"].startswith("/")
    [found] = [t for t in log_dir["topics"] if t["name"] == topic]
    [partition] = found["partitions"]
    assert partition["partition_index"] == 0 and partition["partition_size"] > 0
    assert (partition["offset_lag"], partition["is_future_key"]) == (0, False)


def test_aiokafka_delete_records(adapter: ConfluentAdapter, e2e_target: E2ETarget) -> None:
    topic = _topic_with_records(adapter, "aio-del")

    async def delete() -> dict[AioTopicPartition, int]:
        admin = AIOKafkaAdminClient(bootstrap_servers=e2e_target.bootstrap)
        await admin.start()
        try:
            return await admin.delete_records({AioTopicPartition(topic, 0): RecordsToDelete(before_offset=6)})
        finally:
            await admin.close()

    assert asyncio.run(delete()) == {AioTopicPartition(topic, 0): 6}
    assert _earliest_offset_read(e2e_target.bootstrap, topic) == 6


def test_confluent_delete_records_to_the_high_watermark(adapter: ConfluentAdapter, e2e_target: E2ETarget) -> None:
    topic = _topic_with_records(adapter, "ck-del")
    admin = AdminClient({"bootstrap.servers": e2e_target.bootstrap})
    [future] = admin.delete_records([TopicPartition(topic, 0, 3)]).values()
    assert future.result(WAIT_S).low_watermark == 3
    # librdkafka's OFFSET_END (-1) asks for the high watermark
    [future] = admin.delete_records([TopicPartition(topic, 0, -1)]).values()
    assert future.result(WAIT_S).low_watermark == RECORDS
    assert _watermarks(e2e_target.bootstrap, topic) == (RECORDS, RECORDS)


def _watermarks(bootstrap: str, topic: str) -> tuple[int, int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": unique("ck-wm")})
    try:
        low, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=WAIT_S)
        return int(low), int(high)
    finally:
        consumer.close()


def test_kafkajs_delete_topic_records_moves_the_low_offset(
    adapter: ConfluentAdapter, e2e_target: E2ETarget, tmp_path: Path
) -> None:
    topic = _topic_with_records(adapter, "js-del")
    with harness(e2e_target.bootstrap, tmp_path) as h:
        admin = h.rpc("admin.js", "admin")
        admin.call("deleteTopicRecords", topic=topic, partition=0, offset=5)
        assert admin.call("topicOffsets", topic=topic) == [{"partition": 0, "low": 5, "high": RECORDS}]
        assert admin.close() == 0, admin.stderr_tail()


def _answered(target: E2ETarget, api: str) -> float:
    """How many requests of ``api`` group-broker answered without an error (its request metrics); 0 against Kafka,
    whose metrics are not read here."""
    return 0 if target.broker is None else requests_answered(target.broker, api, error="NONE")


def test_kafka_python_consumer_validates_its_position(adapter: ConfluentAdapter, e2e_target: E2ETarget) -> None:
    """kafka-python's KIP-320 position validation, the path it takes after a leader change, a FENCED/UNKNOWN_LEADER_
    EPOCH fetch or a diverging epoch: the consumer read offset 3 in leader epoch 0, is told to validate its position
    (on one node no leader change comes to trigger it), asks OffsetForLeaderEpoch for epoch 0, gets its end offset
    (no truncation) and fetches on from offset 4."""
    topic = _topic_with_records(adapter, "kp-validate")
    partition = KpTopicPartition(topic, 0)
    consumer = KafkaConsumer(bootstrap_servers=e2e_target.bootstrap, enable_auto_commit=False)
    try:
        consumer.assign([partition])
        consumer.seek(partition, 3)
        first = consumer.poll(timeout_ms=int(WAIT_S * 1000), max_records=1)
        assert [r.offset for r in first[partition]] == [3]  # the position is now 4, read in leader epoch 0
        before = _answered(e2e_target, "OffsetForLeaderEpoch")
        assert consumer._subscription.request_position_validation(partition)  # the client's own hook
        read = consumer.poll(timeout_ms=int(WAIT_S * 1000), max_records=1)
        assert [r.offset for r in read[partition]] == [4]
        assert not consumer._subscription.is_offset_validation_needed(partition)
    finally:
        consumer.close()
    if e2e_target.broker is not None:
        assert _answered(e2e_target, "OffsetForLeaderEpoch") > before


def _java_offsets(consumer: JavaConsumer, count: int) -> list[int]:
    """The offsets of the next ``count`` records the Java consumer hands over (it joins its group inside poll)."""
    offsets: list[int] = []
    wait_until(
        lambda: len(offsets) >= count,
        WAIT_S,
        what=f"{count} records for {consumer.name}",
        step=lambda: offsets.extend(r.offset for r in consumer.poll(0.2)),
    )
    return offsets


def _validations(program: JavaProgram) -> int:
    """How many OffsetForLeaderEpoch answers the Java consumers handled (their own debug log line)."""
    return program.stderr_path.read_text(errors="replace").count(VALIDATION_LOG_LINE)


def test_java_consumer_validates_the_committed_position(
    adapter: ConfluentAdapter, e2e_target: E2ETarget, tmp_path: Path
) -> None:
    """The Java consumer's KIP-320 flow on one node: a group member starting from an offset committed with its
    leader epoch seeks to it unvalidated (ConsumerUtils.refreshCommittedOffsets -> SubscriptionState.seekUnvalidated:
    the position has an epoch and the leader's epoch is known, so it awaits validation), asks OffsetForLeaderEpoch
    for that epoch (OffsetFetcher.validatePositionsIfNeeded), finds no truncation and fetches on from there."""
    topic = _topic_with_records(adapter, "java-validate")
    group = unique("java-validate-g")
    with contextlib.ExitStack() as stack:
        [host] = started(e2e_target.bootstrap, tmp_path, stack, "ConsumerServer")
        first = JavaConsumer(host, group, topic, "first")
        assert _java_offsets(first, RECORDS) == list(range(RECORDS))
        first.commit()  # the position's epoch goes with the offset
        assert first.committed_leader_epochs([0]) == {0: 0}
        first.close()
        adapter.produce(topic, keyed(RECORDS, 3), partition=0)
        answered, handled = _answered(e2e_target, "OffsetForLeaderEpoch"), _validations(host)
        second = JavaConsumer(host, group, topic, "second")
        assert _java_offsets(second, 3) == [RECORDS, RECORDS + 1, RECORDS + 2]
        assert _validations(host) > handled, host.stderr_tail()
        second.close()
    if e2e_target.broker is not None:
        assert _answered(e2e_target, "OffsetForLeaderEpoch") > answered


def test_confluent_consumer_validates_a_position_it_seeks_to_with_a_leader_epoch(
    adapter: ConfluentAdapter, e2e_target: E2ETarget
) -> None:
    """librdkafka validates a position when the application seeks to an offset with a leader epoch
    (rd_kafka_toppar_seek -> rd_kafka_offset_validate); a group member starting from a committed offset fetches at
    once without asking (rd_kafka_toppar_fetch_start). Its own log line says the broker's answer (the end offset of
    epoch 0: the log end) validated the position; then it fetches from there."""
    topic = _topic_with_records(adapter, "ck-validate")
    lines = LogLines()
    logger = logging.getLogger(unique("librdkafka"))
    logger.addHandler(lines)
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    settings = {"bootstrap.servers": e2e_target.bootstrap, "group.id": unique("ck-validate-g"), "debug": "fetch"}
    consumer = Consumer({**settings, "enable.auto.commit": False, "logger": logger})
    try:
        consumer.assign([TopicPartition(topic, 0, 2)])
        [first] = _confluent_messages(consumer, 1)
        assert (first.offset(), first.leader_epoch()) == (2, 0)
        answered = _answered(e2e_target, "OffsetForLeaderEpoch")
        consumer.seek(TopicPartition(topic, 0, 6, leader_epoch=0))
        assert [m.offset() for m in _confluent_messages(consumer, 2)] == [6, 7]
    finally:
        consumer.close()
    validated = [line for line in lines.lines if "offset and epoch validation succeeded" in line]
    assert validated and f"broker end offset {RECORDS} (offset leader epoch 0)" in validated[-1]
    if e2e_target.broker is not None:
        assert _answered(e2e_target, "OffsetForLeaderEpoch") > answered


def _confluent_messages(consumer: Consumer, count: int) -> list[Any]:
    """The next ``count`` messages (librdkafka's partition-EOF events are not messages)."""
    messages: list[Any] = []

    def poll() -> None:
        message = consumer.poll(0.2)
        if message is not None and message.error() is None:
            messages.append(message)

    wait_until(lambda: len(messages) >= count, WAIT_S, what=f"{count} messages", step=poll)
    return messages[:count]
