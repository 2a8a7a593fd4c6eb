"""Producer state when DeleteRecords moves the log start past a producer's batches (issue #16), as both brokers
answer it at once: Kafka 4.4 forgets no producer then (ProducerStateManager.onLogStartOffsetIncremented), so
DescribeProducers still lists them, a retry of a deleted batch is still answered as a duplicate with its first
offset, and an open transaction below the log start holds the last stable offset at the log start. (What a restart
forgets is storage's, tested in tests/storage/test_producer_state_log_start.py: a scenario cannot restart Kafka.)
"""

from __future__ import annotations

from typing import Any

from protocol.messages.delete_records import DeleteRecordsPartition, DeleteRecordsRequest, DeleteRecordsTopic
from protocol.messages.describe_producers import DescribeProducersRequest, TopicRequest
from protocol.registry import ApiKey
from tests.differential.registry import scenario
from tests.differential.scenarios.group_state import ask
from tests.differential.scenarios.transactions import Txns, _ids, _topic
from tests.differential.session import Session
from tests.support.data_plane import batch, fetch_request, produce_request

IDEMPOTENT_PID = 4242  # Kafka checks no idempotent producer id against its allocator: both brokers take this one
READ_COMMITTED = 1
FETCH_V = 12


async def _delete(t: Txns, topic: str, offset: int, step: str) -> None:
    wanted = DeleteRecordsTopic(name=topic, partitions=[DeleteRecordsPartition(partition_index=0, offset=offset)])
    await t.call(ApiKey.DELETE_RECORDS, 2, DeleteRecordsRequest(topics=[wanted], timeout_ms=5000), step)


async def _describe(t: Txns, topic: str, step: str) -> None:
    request = DescribeProducersRequest(topics=[TopicRequest(name=topic, partition_indexes=[0])])
    answer = await ask(t.conn, ApiKey.DESCRIBE_PRODUCERS, 0, request)
    if answer is not None:  # Kafka lists the producers in its map's order
        answer.topics[0].partitions[0].active_producers.sort(key=lambda p: p.producer_id != IDEMPOTENT_PID)
    t.note(step, answer)


async def _stable(t: Txns, topic: str, offset: int, step: str) -> None:
    """A read_committed Fetch's offsets (its records carry each broker's timestamps)."""
    answer = await ask(t.conn, ApiKey.FETCH, FETCH_V, fetch_request(topic, offset, isolation_level=READ_COMMITTED))
    partition: Any = None if answer is None else answer.responses[0].partitions[0]
    t.s.note(
        step,
        None
        if partition is None
        else {
            "error_code": partition.error_code,
            "high_watermark": partition.high_watermark,
            "last_stable_offset": partition.last_stable_offset,
            "log_start_offset": partition.log_start_offset,
        },
    )


@scenario("#16 DeleteRecords and producer state")
async def delete_records_keeps_the_producer_state(s: Session) -> None:
    """An idempotent producer's batch (offsets 0-1) and a transaction's first record (2) below a DeleteRecords to 3,
    then to the high watermark: DescribeProducers before and after, a read_committed Fetch's last stable offset, the
    retry of the deleted idempotent batch (a duplicate answered with offset 0), then the commit."""
    t = Txns(s, await s.connect("producer-state"))
    t.learn(IDEMPOTENT_PID)
    topic = await _topic(s, t, "producer-state-t", 1)
    idempotent = produce_request(topic, batch(b"i1", b"i2", producer_id=IDEMPOTENT_PID, epoch=0, sequence=0))
    await t.call(ApiKey.PRODUCE, 9, idempotent, "idempotent batch at 0-1")
    tid = s.name("producer-state")
    await t.coordinator(tid)
    pid, epoch = _ids(await t.init(tid, "init"))
    await t.add_partitions(tid, pid, epoch, topic, [0], "add the partition")
    await t.produce(tid, pid, epoch, topic, 0, 0, "transactional record at 2")
    await t.call(ApiKey.PRODUCE, 9, produce_request(topic, batch(b"plain")), "plain record at 3")
    await _describe(t, topic, "producers before DeleteRecords")
    await _delete(t, topic, 3, "DeleteRecords to 3")
    await _describe(t, topic, "producers after DeleteRecords to 3")
    await _stable(t, topic, 3, "read_committed at the log start")
    await t.call(ApiKey.PRODUCE, 9, idempotent, "the idempotent batch again")
    await _delete(t, topic, -1, "DeleteRecords to the high watermark")
    await _describe(t, topic, "producers after DeleteRecords to the high watermark")
    await t.end(tid, pid, epoch, True, "commit")
    for _ in range(100):  # the marker (offset 4) is written after EndTxn's answer
        answer = await ask(t.conn, ApiKey.FETCH, FETCH_V, fetch_request(topic, 4, isolation_level=READ_COMMITTED))
        partition = None if answer is None else answer.responses[0].partitions[0]
        if partition is None or partition.high_watermark > 4:
            break
        await s.sleep_ms(50)
    await _stable(t, topic, 4, "read_committed once the marker is written")
    await _describe(t, topic, "producers after the commit")
