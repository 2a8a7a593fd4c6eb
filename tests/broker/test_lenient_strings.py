"""Request strings are decoded as Kafka decodes them: malformed UTF-8 becomes U+FFFD, the request is served.

Kafka reads every protocol string with Java's `new String(bytes, UTF_8)`, which replaces malformed input instead of
failing; a client that sends a Latin-1 group id therefore gets an answer, not a dropped connection, and the id (with
its replacement characters) is what gets committed to `__consumer_offsets` and read back after a restart.
"""

from __future__ import annotations

from pathlib import Path

from broker.app import Broker
from protocol import api
from protocol.errors import ErrorCode
from protocol.messages.offset_commit import OffsetCommitRequest, OffsetCommitRequestPartition, OffsetCommitRequestTopic
from protocol.messages.offset_fetch import OffsetFetchRequest, OffsetFetchRequestTopic
from protocol.registry import ApiKey
from tests.broker.conftest import broker_config
from tests.broker.wire import WireClient

PLACEHOLDER = b"billing-Z"
LATIN1_GROUP = b"billing-\xe9"  # "billing-é" in Latin-1: not valid UTF-8
DECODED_GROUP = "billing-\ufffd"  # what Java's decoder (and now ours) makes of it


def commit_frame(client: WireClient, offset: int) -> tuple[int, bytes]:
    request = OffsetCommitRequest(
        group_id=PLACEHOLDER.decode(),
        generation_id_or_member_epoch=-1,
        member_id="",
        topics=[
            OffsetCommitRequestTopic(
                name="orders", partitions=[OffsetCommitRequestPartition(partition_index=0, committed_offset=offset)]
            )
        ],
    )
    correlation_id, frame = client.frame(ApiKey.OFFSET_COMMIT, 8, request)
    assert frame.count(PLACEHOLDER) == 1
    return correlation_id, frame.replace(PLACEHOLDER, LATIN1_GROUP)


async def committed_offset(client: WireClient, group: str) -> int:
    request = OffsetFetchRequest(group_id=group, topics=[OffsetFetchRequestTopic(name="orders", partition_indexes=[0])])
    response = await client.call(ApiKey.OFFSET_FETCH, 7, request)
    assert response.error_code == ErrorCode.NONE
    [partition] = response.topics[0].partitions
    assert partition.error_code == ErrorCode.NONE
    return int(partition.committed_offset)


async def test_non_utf8_group_id_commit_is_served_stored_and_read_back_after_restart(tmp_path: Path) -> None:
    first = Broker(broker_config(tmp_path))
    await first.start()
    await first.loaded.wait()
    first.create_topic("orders", 1, {})
    client = await WireClient.connect(first.ports[0])
    correlation_id, frame = commit_frame(client, 42)
    client.writer.write(frame)
    header, response = api.decode_response(ApiKey.OFFSET_COMMIT, 8, await client.read_frame())
    assert header.correlation_id == correlation_id
    assert [(p.partition_index, p.error_code) for p in response.topics[0].partitions] == [(0, ErrorCode.NONE)]
    assert await committed_offset(client, DECODED_GROUP) == 42
    await client.close()
    await first.stop()

    second = Broker(broker_config(tmp_path))
    await second.start()
    await second.loaded.wait()
    try:
        client = await WireClient.connect(second.ports[0])
        assert await committed_offset(client, DECODED_GROUP) == 42  # replayed from __consumer_offsets
        await client.close()
    finally:
        await second.stop()
