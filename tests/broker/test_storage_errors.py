"""Storage errors over the wire: Kafka's error codes in the response, never a dropped connection or a 5 s wait.

The disk is made to fail for one partition's segment file only (its pwrite raises ENOSPC), so the same broker shows
the failing partition answering KAFKA_STORAGE_ERROR and every other one carrying on.
"""

from __future__ import annotations

import asyncio
import errno
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from broker.app import Broker
from broker.offsets_log import OFFSETS_TOPIC
from protocol import api
from protocol.errors import ErrorCode
from protocol.messages.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
)
from protocol.registry import ApiKey
from storage import segment as segment_module
from storage.partition_log import PartitionLog
from tests.broker.wire import NAMED_API_VERSIONS, WireClient
from tests.support.data_plane import batch, decoded, fetch, produce

COMMIT_VERSION = 8  # flexible: a compact string carries a 40,000-character group id to the broker


@contextmanager
def full_disk(monkeypatch: pytest.MonkeyPatch, log: PartitionLog) -> Iterator[None]:
    """Writes to ``log``'s active segment fail with ENOSPC; every other file is written as usual."""
    real = os.pwrite

    def pwrite(fd: int, data: memoryview, offset: int) -> int:
        if log.segments()[-1]._fd == fd:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd, data, offset)

    with monkeypatch.context() as patch:
        patch.setattr(segment_module.os, "pwrite", pwrite)
        yield


def commit_request(group: str, offset: int) -> OffsetCommitRequest:
    return OffsetCommitRequest(
        group_id=group,
        generation_id_or_member_epoch=-1,
        topics=[
            OffsetCommitRequestTopic(
                name="t", partitions=[OffsetCommitRequestPartition(partition_index=0, committed_offset=offset)]
            )
        ],
    )


def commit_errors(response: Any) -> set[int]:
    return {p.error_code for t in response.topics for p in t.partitions}


async def test_produce_on_a_full_disk_answers_kafka_storage_error_and_the_connection_stays_usable(
    broker: Broker, monkeypatch: pytest.MonkeyPatch
) -> None:
    broker.create_topic("t", 2, {})
    client = await WireClient.connect(broker.ports[0])
    assert (await produce(client, "t", batch(b"a"))).error_code == ErrorCode.NONE
    failing = broker.logs.get("t", 0)
    assert failing is not None
    with full_disk(monkeypatch, failing):
        refused = await produce(client, "t", batch(b"lost"))
        other = await produce(client, "t", batch(b"b"), partition=1)
    assert refused.error_code == ErrorCode.KAFKA_STORAGE_ERROR
    assert other.error_code == ErrorCode.NONE
    versions = await client.call(ApiKey.API_VERSIONS, 3, NAMED_API_VERSIONS)
    assert versions.error_code == ErrorCode.NONE  # the same connection still serves requests
    again = await produce(client, "t", batch(b"c"))
    assert (again.error_code, again.base_offset) == (ErrorCode.NONE, 1)  # right after the last acknowledged one
    assert [value for _, _, value in decoded((await fetch(client, "t")).records)] == [b"a", b"c"]
    await client.close()


async def test_an_unencodable_group_id_commit_is_refused_alone_while_another_group_commits(broker: Broker) -> None:
    broker.create_topic("t", 1, {})
    huge_client = await WireClient.connect(broker.ports[0])
    other_client = await WireClient.connect(broker.ports[0])
    huge_id, huge = huge_client.frame(ApiKey.OFFSET_COMMIT, COMMIT_VERSION, commit_request("x" * 40_000, 5))
    other_id, other = other_client.frame(ApiKey.OFFSET_COMMIT, COMMIT_VERSION, commit_request("g2", 6))
    huge_client.writer.write(huge)  # both in flight together: their records meet in one group-commit turn
    other_client.writer.write(other)
    await asyncio.gather(huge_client.writer.drain(), other_client.writer.drain())
    (huge_header, huge_response), (other_header, other_response) = [
        api.decode_response(ApiKey.OFFSET_COMMIT, COMMIT_VERSION, frame)
        for frame in await asyncio.gather(huge_client.read_frame(), other_client.read_frame())
    ]
    assert (huge_header.correlation_id, other_header.correlation_id) == (huge_id, other_id)
    assert commit_errors(huge_response) == {ErrorCode.UNKNOWN_SERVER_ERROR}
    assert commit_errors(other_response) == {ErrorCode.NONE}
    # The refused client's connection is still usable, and its group has nothing committed.
    versions = await huge_client.call(ApiKey.API_VERSIONS, 3, NAMED_API_VERSIONS)
    assert versions.error_code == ErrorCode.NONE
    await huge_client.close()
    await other_client.close()


async def test_offset_commit_on_a_full_disk_answers_not_coordinator(
    broker: Broker, monkeypatch: pytest.MonkeyPatch
) -> None:
    broker.create_topic("t", 1, {})
    client = await WireClient.connect(broker.ports[0])
    partition = broker.coordinator.partition_for("g")
    offsets_log = broker.logs.get(OFFSETS_TOPIC, partition)
    assert offsets_log is not None
    with full_disk(monkeypatch, offsets_log):
        refused = await client.call(ApiKey.OFFSET_COMMIT, COMMIT_VERSION, commit_request("g", 5))
    # NOT_COORDINATOR is Kafka's remap of KAFKA_STORAGE_ERROR; the old 5 s timeout answered COORDINATOR_NOT_AVAILABLE.
    assert commit_errors(refused) == {ErrorCode.NOT_COORDINATOR}
    accepted = await client.call(ApiKey.OFFSET_COMMIT, COMMIT_VERSION, commit_request("g", 6))
    assert commit_errors(accepted) == {ErrorCode.NONE}
    await client.close()
