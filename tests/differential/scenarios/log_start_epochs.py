"""DeleteRecords and leader epochs (issue #16): the log start offset DeleteRecords moves, as Fetch, ListOffsets and
DeleteRecords itself report it; the leader epoch of a new partition in Metadata, Fetch, ListOffsets and
OffsetForLeaderEpoch, with their epoch checks; committed leader epochs; DescribeLogDirs' per-partition answer."""

from __future__ import annotations

from typing import Any

from protocol.messages.create_topics import CreatableTopic, CreatableTopicConfig, CreateTopicsRequest
from protocol.messages.delete_records import DeleteRecordsPartition, DeleteRecordsRequest, DeleteRecordsTopic
from protocol.messages.delete_topics import DeleteTopicsRequest
from protocol.messages.describe_log_dirs import DescribableLogDirTopic, DescribeLogDirsRequest
from protocol.messages.fetch import FetchPartition, FetchRequest, FetchTopic
from protocol.messages.list_offsets import ListOffsetsPartition, ListOffsetsRequest, ListOffsetsTopic
from protocol.messages.metadata import MetadataRequest, MetadataRequestTopic
from protocol.messages.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
)
from protocol.messages.offset_fetch import OffsetFetchRequest, OffsetFetchRequestTopic
from protocol.messages.offset_for_leader_epoch import (
    OffsetForLeaderEpochRequest,
    OffsetForLeaderPartition,
    OffsetForLeaderTopic,
)
from protocol.messages.produce import PartitionProduceData, ProduceRequest, TopicProduceData
from protocol.registry import ApiKey
from tests.differential.registry import scenario
from tests.differential.scenarios.group_state import ask, make_topic
from tests.differential.session import Conn, Session
from tests.support.data_plane import batch

FETCH_V = 12  # the newest Fetch that names topics (v13+ use topic ids)


async def _produce(conn: Conn, topic: str, values: int) -> None:
    for i in range(values):
        body = ProduceRequest(
            acks=-1,
            timeout_ms=5000,
            topic_data=[
                TopicProduceData(name=topic, partition_data=[PartitionProduceData(index=0, records=batch(b"v%d" % i))])
            ],
        )
        await ask(conn, ApiKey.PRODUCE, 9, body)


async def _delete(conn: Conn, version: int, topic: str, offset: int, step: str, partition: int = 0) -> Any:
    body = DeleteRecordsRequest(
        topics=[
            DeleteRecordsTopic(
                name=topic, partitions=[DeleteRecordsPartition(partition_index=partition, offset=offset)]
            )
        ],
        timeout_ms=5000,
    )
    return await conn.call(ApiKey.DELETE_RECORDS, version, body, step)


def _fetch_body(topic: str, offset: int, current: int = -1, last_fetched: int = -1) -> FetchRequest:
    wanted = FetchPartition(
        partition=0,
        fetch_offset=offset,
        partition_max_bytes=1 << 20,
        current_leader_epoch=current,
        last_fetched_epoch=last_fetched,
    )
    return FetchRequest(
        max_wait_ms=0, min_bytes=0, max_bytes=1 << 20, topics=[FetchTopic(topic=topic, partitions=[wanted])]
    )


async def _fetch(s: Session, conn: Conn, topic: str, offset: int, step: str, **kw: int) -> None:
    """A Fetch's partition answer without its records (their bytes carry each broker's timestamps): the error,
    offsets, diverging epoch, and how many bytes came back."""
    answer = await ask(conn, ApiKey.FETCH, FETCH_V, _fetch_body(topic, offset, **kw))
    if answer is None:
        s.note(step, None)
        return
    [partition] = answer.responses[0].partitions
    records = partition.records or b""
    partition.records = b""
    s.note(step, {"partition": partition, "has_records": len(records) > 0})


async def _list_offsets(conn: Conn, version: int, topic: str, timestamp: int, step: str, current: int = -1) -> Any:
    body = ListOffsetsRequest(
        replica_id=-1,
        topics=[
            ListOffsetsTopic(
                name=topic,
                partitions=[ListOffsetsPartition(partition_index=0, timestamp=timestamp, current_leader_epoch=current)],
            )
        ],
    )
    return await conn.call(ApiKey.LIST_OFFSETS, version, body, step)


async def _epoch_end(conn: Conn, version: int, topic: str, epoch: int, step: str, current: int = -1) -> Any:
    body = OffsetForLeaderEpochRequest(
        replica_id=-1,
        topics=[
            OffsetForLeaderTopic(
                topic=topic,
                partitions=[OffsetForLeaderPartition(partition=0, current_leader_epoch=current, leader_epoch=epoch)],
            )
        ],
    )
    return await conn.call(ApiKey.OFFSET_FOR_LEADER_EPOCH, version, body, step)


async def _leader_epoch(s: Session, conn: Conn, topic: str, step: str) -> None:
    answer = await ask(conn, ApiKey.METADATA, 12, MetadataRequest(topics=[MetadataRequestTopic(name=topic)]))
    s.note(step, None if answer is None else [(p.error_code, p.leader_epoch) for p in answer.topics[0].partitions])


@scenario("DeleteRecords")
async def delete_records_moves_the_log_start(s: Session) -> None:
    """DeleteRecords v0-v2 to an offset, to -1 (the high watermark), below the log start, past the high watermark,
    below 0; an unknown partition, an internal topic, a compacted topic; then Fetch below and at the new log start
    and ListOffsets EARLIEST."""
    conn = await s.connect()
    topic, compacted = s.name("dr-t"), s.name("dr-compact")
    await make_topic(s, conn, topic, 1)
    body = CreateTopicsRequest(
        topics=[
            CreatableTopic(
                name=compacted,
                num_partitions=1,
                replication_factor=1,
                configs=[CreatableTopicConfig(name="cleanup.policy", value="compact")],
            )
        ],
        timeout_ms=10_000,
    )
    created = await ask(conn, ApiKey.CREATE_TOPICS, 5, body)
    s.note("create a compacted topic", None if created is None else created.topics[0].error_code)
    await make_topic(s, conn, s.name("dr-unused"), 1)  # a moment for the compacted topic's metadata, too
    await _produce(conn, topic, 10)
    await _delete(conn, 0, topic, 3, "v0 to offset 3")
    await _delete(conn, 1, topic, 4, "v1 to offset 4")
    await _delete(conn, 2, topic, 2, "v2 below the log start")
    await _delete(conn, 2, topic, 11, "v2 past the high watermark")
    await _delete(conn, 2, topic, -2, "v2 to -2")
    await _delete(conn, 2, topic, 0, "v2 to an unknown partition", partition=1)
    await _delete(conn, 2, "__consumer_offsets", 0, "v2 on __consumer_offsets")
    await _delete(conn, 2, compacted, 0, "v2 on a compacted topic")
    await _fetch(s, conn, topic, 3, "fetch below the log start")
    await _fetch(s, conn, topic, 4, "fetch at the log start")
    for version in (1, 4, 11):
        await _list_offsets(conn, version, topic, -2, f"ListOffsets v{version} EARLIEST")
    await _delete(conn, 2, topic, -1, "v2 to the high watermark")
    await _fetch(s, conn, topic, 10, "fetch at the end")
    await _list_offsets(conn, 11, topic, -2, "EARLIEST after deleting everything")


@scenario("leader epochs")
async def leader_epochs_of_a_new_partition(s: Session) -> None:
    """A new partition's leader epoch (0) in Metadata, ListOffsets (every special timestamp, v1-v11), Fetch and
    OffsetForLeaderEpoch v2-v4, with their current-epoch checks (fenced below, unknown above); a fetcher's last
    fetched epoch; a committed leader epoch; a topic deleted and created again."""
    conn = await s.connect()
    topic = s.name("epoch-t")
    await make_topic(s, conn, topic, 1)
    await _produce(conn, topic, 3)
    await _leader_epoch(s, conn, topic, "Metadata leader epoch")
    for version in (1, 3, 4, 7, 8, 9, 10, 11):
        for timestamp in (-1, -2, -3, -4, -5, -6, 0):
            await _list_offsets(conn, version, topic, timestamp, f"ListOffsets v{version} at {timestamp}")
    for current in (-2, 0, 1):
        await _list_offsets(conn, 11, topic, -1, f"ListOffsets LATEST, current epoch {current}", current=current)
        await _fetch(s, conn, topic, 0, f"Fetch, current epoch {current}", current=current)
    for last, offset in ((0, 3), (0, 2), (1, 3), (1, 1)):
        await _fetch(s, conn, topic, offset, f"Fetch at {offset}, last fetched epoch {last}", last_fetched=last)
    for version in (2, 3, 4):
        for epoch, current in ((0, -1), (0, 0), (1, -1), (-1, -1), (0, 1), (0, -2)):
            await _epoch_end(
                conn, version, topic, epoch, f"OffsetForLeaderEpoch v{version} {epoch}, current {current}", current
            )
    await _epoch_end(conn, 4, s.name("epoch-missing"), 0, "OffsetForLeaderEpoch of an unknown topic")

    group = s.name("epoch-g")
    commit = OffsetCommitRequest(
        group_id=group,
        topics=[
            OffsetCommitRequestTopic(
                name=topic,
                partitions=[
                    OffsetCommitRequestPartition(partition_index=0, committed_offset=2, committed_leader_epoch=0)
                ],
            )
        ],
    )
    await conn.call(ApiKey.OFFSET_COMMIT, 7, commit, "commit with leader epoch 0")
    fetch = OffsetFetchRequest(group_id=group, topics=[OffsetFetchRequestTopic(name=topic, partition_indexes=[0])])
    await conn.call(ApiKey.OFFSET_FETCH, 7, fetch, "the committed leader epoch")

    deleted = await ask(conn, ApiKey.DELETE_TOPICS, 4, DeleteTopicsRequest(topic_names=[topic], timeout_ms=10_000))
    s.note("delete the topic", None if deleted is None else deleted.responses[0].error_code)
    await _recreate(s, conn, topic)
    await _produce(conn, topic, 1)
    await _leader_epoch(s, conn, topic, "Metadata leader epoch of the topic created again")
    await _list_offsets(conn, 11, topic, -1, "LATEST of the topic created again")


async def _recreate(s: Session, conn: Conn, topic: str) -> None:
    """CreateTopics until the deleted name is free (Kafka finishes a deletion in the background)."""
    body = CreateTopicsRequest(
        topics=[CreatableTopic(name=topic, num_partitions=1, replication_factor=1)], timeout_ms=10_000
    )
    for _ in range(100):
        created = await ask(conn, ApiKey.CREATE_TOPICS, 5, body)
        if created is not None and created.topics[0].error_code != 36:  # TOPIC_ALREADY_EXISTS: not yet
            s.note("create the topic again", created.topics[0].error_code)
            break
        await s.sleep_ms(100)
    for _ in range(100):
        answer = await ask(conn, ApiKey.METADATA, 12, MetadataRequest(topics=[MetadataRequestTopic(name=topic)]))
        if answer is not None and answer.topics[0].error_code == 0 and answer.topics[0].partitions:
            break
        await s.sleep_ms(100)


@scenario("DescribeLogDirs")
async def describe_log_dirs_of_a_partition(s: Session) -> None:
    """DescribeLogDirs v1-v5 of one written partition and one that does not exist: error codes, size, offset lag,
    future flag (the directory's path, and its total and usable bytes, are each broker's own)."""
    conn = await s.connect()
    topic = s.name("dirs-t")
    await make_topic(s, conn, topic, 1)
    await _produce(conn, topic, 2)
    for version in range(1, 6):
        request = DescribeLogDirsRequest(
            topics=[DescribableLogDirTopic(topic=topic, partitions=[0, 7])],
        )
        answer = await ask(conn, ApiKey.DESCRIBE_LOG_DIRS, version, request)
        if answer is None:
            s.note(f"v{version}", None)
            continue
        s.note(
            f"v{version}",
            {
                "error_code": answer.error_code,
                "dirs": [
                    {
                        "error_code": r.error_code,
                        "absolute": r.log_dir.startswith("/"),
                        "topics": r.topics,
                        "sizes_known": (r.total_bytes > 0, r.usable_bytes > 0),
                        "is_cordoned": r.is_cordoned,
                    }
                    for r in answer.results
                ],
            },
        )
