"""A fresh `log.dirs`: the listeners answer before the coordinator topics exist (issue #18, startup).

The broker takes the names `__consumer_offsets` and `__transaction_state` before its listeners serve and makes
their partitions while it already answers. Until they are made and loaded, group and transaction requests get
COORDINATOR_LOAD_IN_PROGRESS (as during any load), Metadata does not list the topics (as Kafka's before it created
them), and nothing can take the names. The creation is held here (`TopicChanges.in_turn`) to look at that window.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from broker.app import Broker
from broker.offsets_log import OFFSETS_TOPIC
from broker.transaction_state_log import TRANSACTION_STATE_TOPIC
from protocol.errors import ErrorCode
from protocol.messages.create_topics import CreatableTopic, CreateTopicsRequest
from protocol.messages.find_coordinator import FindCoordinatorRequest
from protocol.messages.init_producer_id import InitProducerIdRequest
from protocol.messages.metadata import MetadataRequest, MetadataRequestTopic
from protocol.registry import ApiKey
from storage.errors import LogDirError
from storage.log_manager import Steps
from storage.topics import TopicInfo
from tests.broker.conftest import broker_config
from tests.broker.group_wire import join_request
from tests.broker.wire import NAMED_API_VERSIONS, WireClient

COORDINATOR_TOPICS = {OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC}


class HeldCreation:
    """Holds the broker's topic changes until `release()`."""

    def __init__(self, broker: Broker) -> None:
        self.released = asyncio.Event()
        real = broker.topics.in_turn

        async def held(steps: Steps[TopicInfo]) -> TopicInfo:
            await self.released.wait()
            return await real(steps)

        broker.topics.in_turn = held  # type: ignore[method-assign]

    def release(self) -> None:
        self.released.set()


@pytest.fixture
async def held(tmp_path: Path) -> AsyncIterator[tuple[Broker, HeldCreation, WireClient]]:
    broker = Broker(broker_config(tmp_path))
    hold = HeldCreation(broker)
    await broker.start()
    client = await WireClient.connect(broker.ports[0])
    try:
        yield broker, hold, client
    finally:
        await client.close()
        await broker.stop()


async def _listed(client: WireClient) -> dict[str, int]:
    response = await client.call(ApiKey.METADATA, 12, MetadataRequest(topics=None))
    return {t.name: len(t.partitions) for t in response.topics}


async def test_requests_while_the_coordinator_topics_are_made(held: tuple[Broker, HeldCreation, WireClient]) -> None:
    broker, hold, client = held
    assert (await client.call(ApiKey.API_VERSIONS, 3, NAMED_API_VERSIONS)).error_code == ErrorCode.NONE
    assert not COORDINATOR_TOPICS & set(await _listed(client))
    joined = await client.call(ApiKey.JOIN_GROUP, 9, join_request("g"))
    assert joined.error_code == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
    init = InitProducerIdRequest(transactional_id="t", transaction_timeout_ms=60_000)
    assert (await client.call(ApiKey.INIT_PRODUCER_ID, 5, init)).error_code == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
    # The names are taken: neither CreateTopics nor Metadata's auto-creation makes them with other settings.
    created = await client.call(
        ApiKey.CREATE_TOPICS,
        7,
        CreateTopicsRequest(topics=[CreatableTopic(name=OFFSETS_TOPIC, num_partitions=1, replication_factor=1)]),
    )
    assert [t.error_code for t in created.topics] == [ErrorCode.TOPIC_ALREADY_EXISTS]
    asked = await client.call(ApiKey.METADATA, 12, MetadataRequest(topics=[MetadataRequestTopic(name=OFFSETS_TOPIC)]))
    assert [t.error_code for t in asked.topics] != [ErrorCode.NONE]
    assert broker.logs.topic(OFFSETS_TOPIC) is None

    hold.release()
    await broker.loaded.wait()
    config = broker.config
    assert {name: n for name, n in (await _listed(client)).items() if name in COORDINATOR_TOPICS} == {
        OFFSETS_TOPIC: config["offsets.topic.num.partitions"],
        TRANSACTION_STATE_TOPIC: config["transaction.state.log.num.partitions"],
    }
    found = await client.call(ApiKey.FIND_COORDINATOR, 3, FindCoordinatorRequest(key="g"))
    assert found.error_code == ErrorCode.NONE
    assert (await client.call(ApiKey.JOIN_GROUP, 9, join_request("g"))).error_code == ErrorCode.MEMBER_ID_REQUIRED


async def test_a_stop_before_they_are_made_leaves_no_partition(tmp_path: Path) -> None:
    """Rolled back: a restart creates them whole."""
    broker = Broker(broker_config(tmp_path))
    HeldCreation(broker)
    await broker.start()
    assert [p.name for p in (tmp_path / "data").iterdir() if p.name.startswith("__")]  # partition 0 of each
    await broker.stop()
    assert not [p.name for p in (tmp_path / "data").iterdir() if p.name.startswith("__")]
    again = Broker(broker_config(tmp_path))
    await again.start()
    try:
        await again.loaded.wait()
        assert {t.name for t in again.logs.topics()} >= COORDINATOR_TOPICS
    finally:
        await again.stop()


async def test_a_topic_that_cannot_be_made_fails_its_coordinator(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As a partition that cannot be read: NOT_COORDINATOR for its keys, the reason logged, the broker serves on."""
    broker = Broker(broker_config(tmp_path))
    real = broker.topics.in_turn

    async def refused(steps: Steps[TopicInfo]) -> Any:
        steps.close()
        raise LogDirError("cannot create topic: No space left on device")

    monkeypatch.setattr(broker.topics, "in_turn", refused)
    await broker.start()
    try:
        await broker.loaded.wait()
        monkeypatch.setattr(broker.topics, "in_turn", real)
        client = await WireClient.connect(broker.ports[0])
        try:
            joined = await client.call(ApiKey.JOIN_GROUP, 9, join_request("g"))
            assert joined.error_code == ErrorCode.NOT_COORDINATOR
            init = InitProducerIdRequest(transactional_id="t", transaction_timeout_ms=60_000)
            assert (await client.call(ApiKey.INIT_PRODUCER_ID, 5, init)).error_code == ErrorCode.NOT_COORDINATOR
            assert (await client.call(ApiKey.API_VERSIONS, 3, NAMED_API_VERSIONS)).error_code == ErrorCode.NONE
        finally:
            await client.close()
    finally:
        await broker.stop()
