"""The shared client helpers: a kafka-python member joins in one rebalance even when its SyncGroup outlasts its
polls (kafka-python drops the result of a metadata-driven rejoin that completes outside a poll, see clients.py),
and is closed when the block ends; an aiokafka wait polls the consumer and fails at its deadline."""

from __future__ import annotations

import pytest
from kafka import KafkaAdminClient
from kafka.admin import NewTopic

from tests.support.clients import aiokafka_until, kafka_python_member
from toolkit.pytest_plugin import GroupBrokerHandle

TOPIC = "helper-topic"


def _create_topic(broker: GroupBrokerHandle, partitions: int) -> None:
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers)
    try:
        admin.create_topics([NewTopic(TOPIC, partitions, 1)])
    finally:
        admin.close()


def test_a_kafka_python_member_gets_every_partition_when_sync_group_outlasts_its_polls(
    group_broker: GroupBrokerHandle,
) -> None:
    _create_topic(group_broker, 4)
    group_broker.add_latency("SyncGroup", 300)  # every SyncGroup answers after the member's 100 ms polls gave up
    with kafka_python_member(group_broker.bootstrap_servers, [TOPIC], "helper-kp") as member:
        assert {tp.partition for tp in member.assignment()} == {0, 1, 2, 3}
        group = group_broker.group("helper-kp")
        assert group is not None and group["state"] == "Stable"
    [left] = group_broker.requests(api="LeaveGroup", group_id="helper-kp")  # closed when the block ended
    assert set(left.error_codes) == {0}


async def test_an_aiokafka_wait_polls_the_consumer_and_names_what_it_waited_for(
    group_broker: GroupBrokerHandle,
) -> None:
    from aiokafka import AIOKafkaConsumer

    _create_topic(group_broker, 2)
    consumer = AIOKafkaConsumer(TOPIC, bootstrap_servers=group_broker.bootstrap_servers, group_id="helper-aio")
    await consumer.start()
    try:
        await aiokafka_until(consumer, lambda: len(consumer.assignment()) == 2, what="both partitions")
        with pytest.raises(AssertionError, match=r"^timed out after 0\.2s waiting for a third partition"):
            await aiokafka_until(consumer, lambda: False, timeout_s=0.2, what="a third partition")
    finally:
        await consumer.stop()
