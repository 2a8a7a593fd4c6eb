"""DeleteRecords, OffsetForLeaderEpoch, DescribeLogDirs, and the leader epochs and log start offset that Fetch,
ListOffsets, Metadata and OffsetCommit/OffsetFetch carry, over raw requests at every advertised version."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest

from broker.app import Broker
from protocol.errors import ErrorCode
from protocol.messages.delete_records import DeleteRecordsPartition, DeleteRecordsRequest, DeleteRecordsTopic
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
from protocol.registry import ApiKey
from tests.broker.wire import WireClient
from tests.support.data_plane import batch, fetch, produce

DELETE_RECORDS_VERSIONS = range(0, 3)
OFFSET_FOR_LEADER_EPOCH_VERSIONS = range(2, 5)
DESCRIBE_LOG_DIRS_VERSIONS = range(1, 6)
FETCH_VERSIONS = range(4, 19)
LIST_OFFSETS_VERSIONS = range(1, 12)
EARLIEST, LATEST, LATEST_TIERED, EARLIEST_PENDING_UPLOAD = -2, -1, -5, -6


@pytest.fixture
async def opened() -> AsyncIterator[list[WireClient]]:
    """The connections a test opened, closed after it."""
    clients: list[WireClient] = []
    yield clients
    for client in clients:
        await client.close()


async def ready(broker: Broker, opened: list[WireClient], topic: str, values: int = 10) -> WireClient:
    broker.create_topic(topic, 1, {})
    client = await WireClient.connect(broker.ports[0])
    opened.append(client)
    for i in range(values):
        await produce(client, topic, batch(b"v%d" % i))
    return client


async def delete_records(client: WireClient, version: int, topic: str, offset: int, partition: int = 0) -> object:
    request = DeleteRecordsRequest(
        topics=[
            DeleteRecordsTopic(
                name=topic, partitions=[DeleteRecordsPartition(partition_index=partition, offset=offset)]
            )
        ],
        timeout_ms=5000,
    )
    response = await client.call(ApiKey.DELETE_RECORDS, version, request)
    [topic_result] = response.topics
    assert topic_result.name == topic
    [result] = topic_result.partitions
    return result


async def list_offset(
    client: WireClient, version: int, topic: str, timestamp: int, current_leader_epoch: int = -1
) -> object:
    request = ListOffsetsRequest(
        replica_id=-1,
        topics=[
            ListOffsetsTopic(
                name=topic,
                partitions=[
                    ListOffsetsPartition(
                        partition_index=0, timestamp=timestamp, current_leader_epoch=current_leader_epoch
                    )
                ],
            )
        ],
    )
    response = await client.call(ApiKey.LIST_OFFSETS, version, request)
    return response.topics[0].partitions[0]


async def epoch_end(
    client: WireClient, version: int, topic: str, epoch: int, current: int = -1, partition: int = 0
) -> object:
    request = OffsetForLeaderEpochRequest(
        replica_id=-1,
        topics=[
            OffsetForLeaderTopic(
                topic=topic,
                partitions=[
                    OffsetForLeaderPartition(partition=partition, current_leader_epoch=current, leader_epoch=epoch)
                ],
            )
        ],
    )
    response = await client.call(ApiKey.OFFSET_FOR_LEADER_EPOCH, version, request)
    return response.topics[0].partitions[0]


async def raw_fetch(
    client: WireClient,
    broker: Broker,
    version: int,
    topic: str,
    offset: int,
    *,
    current_leader_epoch: int = -1,
    last_fetched_epoch: int = -1,
) -> object:
    info = broker.logs.topic(topic)
    assert info is not None
    wanted = FetchPartition(
        partition=0,
        fetch_offset=offset,
        partition_max_bytes=1 << 20,
        current_leader_epoch=current_leader_epoch,
        last_fetched_epoch=last_fetched_epoch,
    )
    request = FetchRequest(
        max_wait_ms=0,
        min_bytes=1,
        max_bytes=1 << 22,
        topics=[
            FetchTopic(topic=topic, topic_id=info.topic_id if version >= 13 else uuid.UUID(int=0), partitions=[wanted])
        ],
    )
    response = await client.call(ApiKey.FETCH, version, request)
    assert response.error_code == ErrorCode.NONE
    return response.responses[0].partitions[0]


# -- DeleteRecords -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", DELETE_RECORDS_VERSIONS)
async def test_delete_records_moves_the_log_start(broker: Broker, opened: list[WireClient], version: int) -> None:
    client = await ready(broker, opened, "dr")
    result = await delete_records(client, version, "dr", 4)
    assert (result.error_code, result.low_watermark) == (ErrorCode.NONE, 4)
    assert (await fetch(client, "dr", 4)).log_start_offset == 4
    below = await fetch(client, "dr", 3)
    assert (below.error_code, below.log_start_offset) == (ErrorCode.OFFSET_OUT_OF_RANGE, -1)
    earliest = await list_offset(client, 11, "dr", EARLIEST)
    assert (earliest.offset, earliest.leader_epoch) == (4, 0)
    assert (await produce(client, "dr", batch(b"x"))).log_start_offset == 4
    # -1 is the high watermark; a smaller offset than the log start changes nothing
    result = await delete_records(client, version, "dr", -1)
    assert (result.error_code, result.low_watermark) == (ErrorCode.NONE, 11)
    result = await delete_records(client, version, "dr", 2)
    assert (result.error_code, result.low_watermark) == (ErrorCode.NONE, 11)


@pytest.mark.parametrize("version", DELETE_RECORDS_VERSIONS)
async def test_delete_records_errors(broker: Broker, opened: list[WireClient], version: int) -> None:
    client = await ready(broker, opened, "dre", 3)
    broker.create_topic("compacted", 1, {"cleanup.policy": "compact"})
    for topic, partition, offset, error in [
        ("dre", 0, 4, ErrorCode.OFFSET_OUT_OF_RANGE),  # past the high watermark
        ("dre", 0, -2, ErrorCode.OFFSET_OUT_OF_RANGE),
        ("dre", 1, 0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
        ("missing", 0, 0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
        ("__consumer_offsets", 0, 0, ErrorCode.INVALID_TOPIC_EXCEPTION),
        ("compacted", 0, 0, ErrorCode.POLICY_VIOLATION),
    ]:
        result = await delete_records(client, version, topic, offset, partition)
        assert (result.error_code, result.low_watermark) == (error, -1), (topic, offset)
    assert (await fetch(client, "dre", 0)).log_start_offset == 0


async def test_delete_records_survives_a_restart(broker: Broker, opened: list[WireClient]) -> None:
    client = await ready(broker, opened, "drr")
    await delete_records(client, 2, "drr", 6)
    log = broker.logs.get("drr", 0)
    assert log is not None
    from storage.partition_log import PartitionLog

    reopened = PartitionLog(log.directory, log.config, now_ms=0)  # what the next start reads, without a close
    assert reopened.log_start_offset == 6
    reopened.close()


# -- OffsetForLeaderEpoch --------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", OFFSET_FOR_LEADER_EPOCH_VERSIONS)
async def test_offset_for_leader_epoch(broker: Broker, opened: list[WireClient], version: int) -> None:
    client = await ready(broker, opened, "ofle", 5)
    answer = await epoch_end(client, version, "ofle", 0)
    assert (answer.error_code, answer.leader_epoch, answer.end_offset) == (ErrorCode.NONE, 0, 5)
    answer = await epoch_end(client, version, "ofle", 0, current=0)
    assert (answer.error_code, answer.leader_epoch, answer.end_offset) == (ErrorCode.NONE, 0, 5)
    answer = await epoch_end(client, version, "ofle", 3)  # an epoch the cache has not seen
    assert (answer.error_code, answer.leader_epoch, answer.end_offset) == (ErrorCode.NONE, -1, -1)
    answer = await epoch_end(client, version, "ofle", 0, current=1)
    assert (answer.error_code, answer.leader_epoch, answer.end_offset) == (ErrorCode.UNKNOWN_LEADER_EPOCH, -1, -1)
    answer = await epoch_end(client, version, "missing", 0)
    assert answer.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    answer = await epoch_end(client, version, "ofle", 0, partition=3)
    assert answer.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION

    log = broker.logs.get("ofle", 0)
    assert log is not None
    log.become_leader(2)  # what a leader change does (multi-node); epoch 0 now ends where epoch 2 started
    await produce(client, "ofle", batch(b"after"))
    answer = await epoch_end(client, version, "ofle", 0, current=2)
    assert (answer.error_code, answer.leader_epoch, answer.end_offset) == (ErrorCode.NONE, 0, 5)
    answer = await epoch_end(client, version, "ofle", 1, current=2)
    assert (answer.leader_epoch, answer.end_offset) == (0, 5)
    answer = await epoch_end(client, version, "ofle", 2, current=2)
    assert (answer.leader_epoch, answer.end_offset) == (2, 6)
    answer = await epoch_end(client, version, "ofle", 0, current=0)
    assert answer.error_code == ErrorCode.FENCED_LEADER_EPOCH


# -- leader epochs in Metadata, Fetch and ListOffsets -------------------------------------------------------------


async def test_metadata_reports_the_partition_leader_epoch(broker: Broker, opened: list[WireClient]) -> None:
    client = await ready(broker, opened, "meta", 1)
    request = MetadataRequest(topics=[MetadataRequestTopic(name="meta")])
    assert (await client.call(ApiKey.METADATA, 12, request)).topics[0].partitions[0].leader_epoch == 0
    log = broker.logs.get("meta", 0)
    assert log is not None
    log.become_leader(4)
    assert (await client.call(ApiKey.METADATA, 12, request)).topics[0].partitions[0].leader_epoch == 4


@pytest.mark.parametrize("version", FETCH_VERSIONS)
async def test_fetch_checks_the_current_leader_epoch(broker: Broker, opened: list[WireClient], version: int) -> None:
    client = await ready(broker, opened, "fe", 3)
    log = broker.logs.get("fe", 0)
    assert log is not None
    log.become_leader(1)
    ok = await raw_fetch(client, broker, version, "fe", 0, current_leader_epoch=1)
    assert (ok.error_code, ok.high_watermark, ok.log_start_offset) == (ErrorCode.NONE, 3, 0 if version >= 5 else -1)
    assert ok.records
    if version < 9:  # no current_leader_epoch on the wire: nothing to check
        return
    fenced = await raw_fetch(client, broker, version, "fe", 0, current_leader_epoch=0)
    assert (fenced.error_code, fenced.high_watermark, fenced.records) == (ErrorCode.FENCED_LEADER_EPOCH, -1, b"")
    unknown = await raw_fetch(client, broker, version, "fe", 0, current_leader_epoch=2)
    assert unknown.error_code == ErrorCode.UNKNOWN_LEADER_EPOCH
    unchecked = await raw_fetch(client, broker, version, "fe", 0, current_leader_epoch=-2)
    assert unchecked.error_code == ErrorCode.NONE  # Fetch takes any negative epoch as "no epoch", as Kafka does


@pytest.mark.parametrize("version", range(12, 19))
async def test_fetch_answers_a_diverging_epoch(broker: Broker, opened: list[WireClient], version: int) -> None:
    client = await ready(broker, opened, "div", 3)
    log = broker.logs.get("div", 0)
    assert log is not None
    log.become_leader(2)
    await produce(client, "div", batch(b"epoch 2"))
    # a fetcher that read epoch 1 up to offset 4 has a log the leader never had past offset 3
    answer = await raw_fetch(client, broker, version, "div", 4, last_fetched_epoch=1)
    assert answer.error_code == ErrorCode.NONE
    assert (answer.diverging_epoch.epoch, answer.diverging_epoch.end_offset) == (0, 3)
    assert answer.records == b""
    same = await raw_fetch(client, broker, version, "div", 3, last_fetched_epoch=0)
    assert (same.diverging_epoch.epoch, same.diverging_epoch.end_offset) == (-1, -1)
    assert same.records


@pytest.mark.parametrize("version", LIST_OFFSETS_VERSIONS)
async def test_list_offsets_answers_leader_epochs(broker: Broker, opened: list[WireClient], version: int) -> None:
    client = await ready(broker, opened, "lo", 4)
    log = broker.logs.get("lo", 0)
    assert log is not None
    log.become_leader(3)
    await produce(client, "lo", batch(b"epoch 3"))
    epoch = (lambda e: e) if version >= 4 else (lambda e: -1)  # v1-3 carry no leader epoch
    earliest = await list_offset(client, version, "lo", EARLIEST)
    assert (earliest.error_code, earliest.offset, earliest.leader_epoch) == (ErrorCode.NONE, 0, epoch(0))
    latest = await list_offset(client, version, "lo", LATEST)
    assert (latest.offset, latest.leader_epoch) == (5, epoch(3))
    for special, since in ((-3, 7), (-4, 8), (LATEST_TIERED, 9), (EARLIEST_PENDING_UPLOAD, 11)):
        answer = await list_offset(client, version, "lo", special)
        if version < since:  # Kafka refuses a special timestamp older versions did not have
            assert (answer.error_code, answer.offset) == (ErrorCode.UNSUPPORTED_VERSION, -1)
        elif special in (LATEST_TIERED, EARLIEST_PENDING_UPLOAD):  # no tiered storage: no offset, no epoch
            assert (answer.error_code, answer.offset, answer.timestamp, answer.leader_epoch) == (0, -1, -1, -1)
        else:
            assert answer.error_code == ErrorCode.NONE and answer.offset >= 0
    if version >= 4:
        fenced = await list_offset(client, version, "lo", LATEST, current_leader_epoch=2)
        assert (fenced.error_code, fenced.offset) == (ErrorCode.FENCED_LEADER_EPOCH, -1)
        unknown = await list_offset(client, version, "lo", LATEST, current_leader_epoch=4)
        assert unknown.error_code == ErrorCode.UNKNOWN_LEADER_EPOCH


async def test_committed_leader_epoch_round_trips(broker: Broker, opened: list[WireClient]) -> None:
    client = await ready(broker, opened, "ce", 1)
    commit = OffsetCommitRequest(
        group_id="epochs",
        topics=[
            OffsetCommitRequestTopic(
                name="ce",
                partitions=[
                    OffsetCommitRequestPartition(partition_index=0, committed_offset=1, committed_leader_epoch=7)
                ],
            )
        ],
    )
    committed = await client.call(ApiKey.OFFSET_COMMIT, 7, commit)
    assert committed.topics[0].partitions[0].error_code == ErrorCode.NONE
    fetched = await client.call(
        ApiKey.OFFSET_FETCH,
        7,
        OffsetFetchRequest(group_id="epochs", topics=[OffsetFetchRequestTopic(name="ce", partition_indexes=[0])]),
    )
    [partition] = fetched.topics[0].partitions
    assert (partition.committed_offset, partition.committed_leader_epoch) == (1, 7)


# -- DescribeLogDirs ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", DESCRIBE_LOG_DIRS_VERSIONS)
async def test_describe_log_dirs(broker: Broker, opened: list[WireClient], version: int) -> None:
    client = await ready(broker, opened, "dirs", 3)
    broker.create_topic("other", 2, {})
    every = await client.call(ApiKey.DESCRIBE_LOG_DIRS, version, DescribeLogDirsRequest(topics=None))
    assert every.error_code == ErrorCode.NONE
    [result] = every.results
    assert (result.error_code, result.log_dir) == (ErrorCode.NONE, str(broker.logs.log_dir.resolve()))
    sizes = {
        (t.name, p.partition_index): (p.partition_size, p.offset_lag, p.is_future_key)
        for t in result.topics
        for p in t.partitions
    }
    log = broker.logs.get("dirs", 0)
    assert log is not None
    assert sizes[("dirs", 0)] == (log.size_in_bytes, 0, False) and log.size_in_bytes > 0
    assert sizes[("other", 1)] == (0, 0, False)
    if version >= 4:
        assert result.total_bytes >= result.usable_bytes > 0
    else:
        assert (result.total_bytes, result.usable_bytes) == (-1, -1)
    asked = DescribeLogDirsRequest(
        topics=[
            DescribableLogDirTopic(topic="other", partitions=[1, 5]),
            DescribableLogDirTopic(topic="nope", partitions=[0]),
        ]
    )
    [only] = (await client.call(ApiKey.DESCRIBE_LOG_DIRS, version, asked)).results
    assert [(t.name, [p.partition_index for p in t.partitions]) for t in only.topics] == [("other", [1])]
    none = await client.call(ApiKey.DESCRIBE_LOG_DIRS, version, DescribeLogDirsRequest(topics=[]))
    assert none.results[0].topics == []
