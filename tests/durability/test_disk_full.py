"""Disk full for real: the broker's log dir on a small tmpfs that is filled up, then freed, without a restart.

While full, Produce answers KAFKA_STORAGE_ERROR and OffsetCommit NOT_COORDINATOR (Kafka's remap of it) at once, on
connections that stay usable. Once space is freed both succeed again in the same process (Kafka would have taken
the log dir offline; this broker keeps the partitions because a failed append leaves them exactly as they were),
and after a restart every acknowledged produce and commit is there.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from protocol.errors import ErrorCode
from protocol.messages.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
)
from protocol.registry import ApiKey
from tests.broker.wire import WireClient
from tests.durability.offsets_client import commit, connect, create_topic
from tests.durability.offsets_client import fetch as fetch_commits
from tests.support.broker_process import BrokerProcess
from tests.support.data_plane import batch, decoded, fetch, produce
from tests.support.tmpfs import fill, small_tmpfs

TOPIC = "disk-full"
PARTITIONS = [0, 1, 2, 3]
BIG_METADATA = "m" * 4_000  # offset.metadata.max.bytes is 4096: four of them need fresh pages of the tmpfs


async def commit_big(client: WireClient, group: str, offset: int) -> set[int]:
    """One OffsetCommit of ~16 KB of records (too much to fit in pages the file system already gave out)."""
    request = OffsetCommitRequest(
        group_id=group,
        generation_id_or_member_epoch=-1,
        topics=[
            OffsetCommitRequestTopic(
                name=TOPIC,
                partitions=[
                    OffsetCommitRequestPartition(
                        partition_index=p, committed_offset=offset, committed_metadata=BIG_METADATA
                    )
                    for p in PARTITIONS
                ],
            )
        ],
    )
    response = await client.call(ApiKey.OFFSET_COMMIT, 8, request)
    return {p.error_code for t in response.topics for p in t.partitions}


@contextmanager
def broker_on_a_small_tmpfs() -> Iterator[tuple[Path, BrokerProcess]]:
    """A broker process whose log dir is on a fresh 16 MB tmpfs: ``(mount point, broker)``."""
    with small_tmpfs(16 << 20) as mount:
        broker = BrokerProcess(mount / "data")
        broker.start()
        try:
            yield mount, broker
        finally:
            if broker.process is not None and broker.process.poll() is None:
                broker.stop()


async def acknowledge(broker: BrokerProcess, offset: int, value: bytes) -> WireClient:
    """Create the topic, then a commit of ``offset`` for every partition and a produce of ``value``, both
    acknowledged; returns the client."""
    client = await connect(broker.port)
    await create_topic(client, TOPIC, len(PARTITIONS))
    assert await commit(client, "g", TOPIC, dict.fromkeys(PARTITIONS, offset))
    assert (await produce(client, TOPIC, batch(value))).error_code == ErrorCode.NONE
    return client


async def assert_restart_serves(broker: BrokerProcess, offset: int, values: list[bytes]) -> None:
    """Start the stopped broker again: it serves the committed ``offset`` of every partition and ``values``."""
    broker.start()
    client = await connect(broker.port)
    assert await fetch_commits(client, "g", TOPIC, PARTITIONS) == dict.fromkeys(PARTITIONS, offset)
    records = decoded((await fetch(client, TOPIC)).records)
    assert [value for _, _, value in records] == values
    await client.close()


async def test_disk_full_answers_kafka_errors_and_the_broker_carries_on_once_space_is_freed() -> None:
    with broker_on_a_small_tmpfs() as (mount, broker):
        client = await acknowledge(broker, 1, b"before")

        filler = fill(mount)
        refused = await produce(client, TOPIC, batch(b"x" * 200_000))
        assert refused.error_code == ErrorCode.KAFKA_STORAGE_ERROR
        assert await commit_big(client, "g", 2) == {ErrorCode.NOT_COORDINATOR}
        assert any('"storage.write_failed"' in line for line in broker.log_lines())

        filler.unlink()  # space is back: the same process, the same connection, carries on
        after = await produce(client, TOPIC, batch(b"after"))
        assert (after.error_code, after.base_offset) == (ErrorCode.NONE, 1)
        assert await commit_big(client, "g", 3) == {ErrorCode.NONE}
        await client.close()

        broker.stop()
        await assert_restart_serves(broker, 3, [b"before", b"after"])


async def test_sigterm_on_a_full_disk_exits_without_a_traceback_and_loses_nothing_acknowledged() -> None:
    """A graceful stop cannot write the recovery-point checkpoint on a full disk: one line says so and why it is
    harmless, every log is still closed, and the exit status is Kafka's for a shutdown whose log flush failed (0:
    KafkaServer.shutdown swallows LogManager.shutdown's error). The next start scans more and serves everything."""
    with broker_on_a_small_tmpfs() as (mount, broker):
        await (await acknowledge(broker, 7, b"acknowledged")).close()

        filler = fill(mount)
        assert broker.stop() == 0
        output = broker.log_lines()
        assert not any("Traceback" in line for line in output), "".join(output[-30:])
        [failure] = [line for line in output if '"storage.shutdown_checkpoint_failed"' in line]
        assert "ENOSPC" in failure and "recovery-point-offset-checkpoint" in failure
        assert any('"broker.stopped"' in line for line in output)

        filler.unlink()
        await assert_restart_serves(broker, 7, [b"acknowledged"])
