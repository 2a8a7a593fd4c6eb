"""Topic changes with thousands of partitions over TCP: other clients keep being answered while they run, the topic
appears only when complete, and a request naming it meanwhile gets Kafka's answer."""

from __future__ import annotations

import asyncio
import os
import struct
from typing import Any

from broker.app import Broker
from protocol import api
from protocol.errors import ErrorCode
from protocol.messages.create_topics import CreatableTopic, CreateTopicsRequest
from protocol.messages.delete_topics import DeleteTopicsRequest
from protocol.messages.metadata import MetadataRequest, MetadataRequestTopic
from protocol.registry import ApiKey
from tests.broker.wire import NAMED_API_VERSIONS, WireClient
from tests.support.broker_process import wait_until_async

WIDE = 20_000


def create_request(name: str, partitions: int) -> CreateTopicsRequest:
    topic = CreatableTopic(name=name, num_partitions=partitions, replication_factor=1)
    return CreateTopicsRequest(topics=[topic], timeout_ms=600_000)


async def send(client: WireClient, api_key: ApiKey, version: int, body: Any) -> asyncio.Task[Any]:
    """Send one request now; the returned task resolves to its decoded answer."""
    _, frame = client.frame(api_key, version, body)
    client.writer.write(frame)
    await client.writer.drain()

    async def answer() -> Any:
        size = struct.unpack(">i", await client.reader.readexactly(4))[0]
        return api.decode_response(api_key, version, await client.reader.readexactly(size))[1]

    return asyncio.ensure_future(answer())


async def test_other_clients_are_answered_while_20000_partitions_are_created(broker: Broker) -> None:
    """Creating 20,000 partitions used to block the loop for seconds: heartbeats went unanswered meanwhile."""
    creator = await WireClient.connect(broker.ports[0])
    bystander = await WireClient.connect(broker.ports[0])
    data_dir = broker.config.log_dir
    creation = await send(creator, ApiKey.CREATE_TOPICS, 5, create_request("wide", WIDE))
    await wait_until_async(lambda: os.path.isdir(os.path.join(data_dir, "wide-0")) or creation.done(), 60)
    versions = await bystander.call(ApiKey.API_VERSIONS, 3, NAMED_API_VERSIONS)
    assert versions.error_code == ErrorCode.NONE
    assert not creation.done(), "the bystander was answered only after the creation finished"
    # Not visible until complete; creating it again meanwhile is refused as Kafka's controller would.
    metadata = await bystander.call(
        ApiKey.METADATA,
        12,
        MetadataRequest(topics=[MetadataRequestTopic(name="wide")], allow_auto_topic_creation=False),
    )
    assert [t.error_code for t in metadata.topics] == [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]
    again = await send(bystander, ApiKey.CREATE_TOPICS, 5, create_request("wide", 1))
    [created] = (await creation).topics
    assert (created.error_code, created.num_partitions) == (ErrorCode.NONE, WIDE)
    [refused] = (await again).topics
    assert refused.error_code == ErrorCode.TOPIC_ALREADY_EXISTS
    info = broker.logs.topic("wide")
    assert info is not None and info.partitions == WIDE

    deletion = await send(creator, ApiKey.DELETE_TOPICS, 4, DeleteTopicsRequest(topic_names=["wide"], timeout_ms=0))
    versions = await bystander.call(ApiKey.API_VERSIONS, 3, NAMED_API_VERSIONS)
    assert versions.error_code == ErrorCode.NONE
    assert not deletion.done(), "the bystander was answered only after the deletion finished"
    [deleted] = (await deletion).responses
    assert deleted.error_code == ErrorCode.NONE
    assert broker.logs.topic("wide") is None
    assert not [e for e in os.listdir(data_dir) if e.startswith("wide-")]
    await creator.close()
    await bystander.close()


async def test_create_topics_answers_request_timed_out_and_the_creation_still_completes(broker: Broker) -> None:
    client = await WireClient.connect(broker.ports[0])
    request = CreateTopicsRequest(
        topics=[CreatableTopic(name="slow", num_partitions=3_000, replication_factor=1)], timeout_ms=1
    )
    [result] = (await client.call(ApiKey.CREATE_TOPICS, 5, request)).topics
    assert result.error_code == ErrorCode.REQUEST_TIMED_OUT
    await wait_until_async(lambda: broker.logs.topic("slow") is not None, 60)
    assert broker.logs.topic("slow").partitions == 3_000  # type: ignore[union-attr]
    await client.close()
