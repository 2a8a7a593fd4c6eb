"""OffsetsLog group commit: one bad record or one failing partition never fails the others' appends.

Every append is validated (encodable, within `max.message.bytes`) before it joins a batch and is refused alone; a
write that fails (a full disk, an unexpected exception) fails only the appends whose records it held. Outcomes
are delivered in the same flush, never left for `offsets.commit.timeout.ms` to answer.
"""

from __future__ import annotations

import errno
from collections.abc import Iterator
from pathlib import Path

import pytest

from broker.offsets_log import _PLAIN, OFFSETS_TOPIC, _BatchKind, _encode_batch
from coordinator.offsets import OffsetAndMetadata
from coordinator.records import CoordinatorRecord, TransactionalProducer, offset_commit_record
from protocol.errors import ErrorCode
from protocol.records import NO_PRODUCER_EPOCH, NO_PRODUCER_ID, NO_SEQUENCE, Record, RecordBatch, encode_batch
from storage import segment as segment_module
from tests.broker.offsets_log_store import LogStore

PARTITIONS = 2


class Harness(LogStore):
    """A LogStore whose appends are named, so a test can say which one got which outcome."""

    def __init__(self, directory: Path, configs: dict[str, str] | None = None) -> None:
        super().__init__(directory, PARTITIONS, configs)
        self.logs = self.manager
        self.outcomes: dict[str, ErrorCode] = {}

    def add(self, name: str, partition: int, records: list[CoordinatorRecord]) -> None:
        def done(error: ErrorCode) -> None:
            assert name not in self.outcomes, "an append is answered once"
            self.outcomes[name] = error

        self.append(partition, records, done)

    def groups_in(self, partition: int) -> list[str]:
        return [r.key.group for r in self.read_all(partition)]  # type: ignore[union-attr]


def commit(group: str, metadata: str = "", partition: int = 0) -> CoordinatorRecord:
    return offset_commit_record(
        group,
        "t",
        partition,
        OffsetAndMetadata(offset=5, leader_epoch=-1, metadata=metadata, commit_timestamp_ms=1_000),
    )


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    h = Harness(tmp_path / "data")
    yield h
    h.logs.close()


def test_an_unencodable_record_is_refused_alone(harness: Harness) -> None:
    """A 40,000-character group id cannot be written as Kafka's int16-length string: only its append fails."""
    harness.add("before", 0, [commit("g1")])
    harness.add("huge", 0, [commit("x" * 40_000)])
    harness.add("after", 0, [commit("g2")])
    harness.end_turn()
    assert harness.outcomes == {"before": ErrorCode.NONE, "huge": ErrorCode.UNKNOWN_SERVER_ERROR, "after": 0}
    assert harness.groups_in(0) == ["g1", "g2"]
    assert harness.deliveries == 1


def test_a_record_larger_than_max_message_bytes_is_refused_alone(tmp_path: Path) -> None:
    h = Harness(tmp_path / "data", {"max.message.bytes": "2000"})
    h.add("small", 0, [commit("g1")])
    h.add("large", 0, [commit("g2", metadata="m" * 3_000)])
    h.end_turn()
    assert h.outcomes == {"small": ErrorCode.NONE, "large": ErrorCode.MESSAGE_TOO_LARGE}
    assert h.groups_in(0) == ["g1"]
    h.logs.close()


def test_appends_that_together_exceed_max_message_bytes_go_out_in_several_batches(tmp_path: Path) -> None:
    h = Harness(tmp_path / "data", {"max.message.bytes": "2000"})
    for i in range(6):
        h.add(f"c{i}", 0, [commit(f"g{i}", metadata="m" * 700)])
    h.end_turn()
    assert h.outcomes == {f"c{i}": ErrorCode.NONE for i in range(6)}
    assert h.groups_in(0) == [f"g{i}" for i in range(6)]
    batches = list(h.logs.get(OFFSETS_TOPIC, 0).iter_batches_from())  # type: ignore[union-attr]
    assert len(batches) > 1 and all(len(b.records) >= 1 for b in batches)


def test_a_failing_write_fails_only_the_appends_of_its_partition(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ENOSPC while writing partition 1: its callers get KAFKA_STORAGE_ERROR, partition 0's are written."""
    failing = harness.logs.get(OFFSETS_TOPIC, 1)
    assert failing is not None
    real_pwrite = segment_module.os.pwrite

    def pwrite(fd: int, data: memoryview, offset: int) -> int:
        if failing.segments()[-1]._fd == fd:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_pwrite(fd, data, offset)

    harness.add("p0-a", 0, [commit("a")])
    harness.add("p1", 1, [commit("b", partition=1)])
    harness.add("p0-b", 0, [commit("c")])
    with monkeypatch.context() as patch:
        patch.setattr(segment_module.os, "pwrite", pwrite)
        harness.end_turn()
    assert harness.outcomes == {"p0-a": 0, "p1": ErrorCode.KAFKA_STORAGE_ERROR, "p0-b": 0}
    assert harness.groups_in(0) == ["a", "c"] and harness.groups_in(1) == []
    # Space is back: the same partition takes appends again.
    harness.add("retry", 1, [commit("b", partition=1)])
    harness.end_turn()
    assert harness.outcomes["retry"] == ErrorCode.NONE and harness.groups_in(1) == ["b"]


def test_an_unexpected_exception_in_one_write_fails_only_that_partition(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = harness.logs.get(OFFSETS_TOPIC, 0)
    assert broken is not None

    def explode(*args: object, **kwargs: object) -> None:
        raise RuntimeError("bug in the write path")

    monkeypatch.setattr(broken, "append", explode)
    harness.add("p0", 0, [commit("a")])
    harness.add("p1", 1, [commit("b", partition=1)])
    harness.end_turn()
    assert harness.outcomes == {"p0": ErrorCode.UNKNOWN_SERVER_ERROR, "p1": ErrorCode.NONE}
    assert harness.groups_in(1) == ["b"]


@pytest.mark.parametrize("producer", [None, TransactionalProducer(producer_id=7, producer_epoch=2)])
@pytest.mark.parametrize("count", [0, 1, 3, 200])
def test_a_batch_is_the_one_from_records_builds(producer: TransactionalProducer | None, count: int) -> None:
    """The batch is built with what `RecordBatch.from_records` would derive (offset deltas, one timestamp)."""
    records = [(f"key-{i}".encode(), None if i % 5 == 4 else bytes(i)) for i in range(count)]
    kind = _PLAIN if producer is None else _BatchKind(producer)
    expected = RecordBatch.from_records(
        [Record(key=k, value=v, timestamp_delta=0, offset_delta=i) for i, (k, v) in enumerate(records)],
        base_timestamp=1_700_000_000_000,
        producer_id=NO_PRODUCER_ID if producer is None else producer.producer_id,
        producer_epoch=NO_PRODUCER_EPOCH if producer is None else producer.producer_epoch,
        base_sequence=NO_SEQUENCE if producer is None else 0,
        is_transactional=producer is not None,
    )
    assert _encode_batch(records, 1_700_000_000_000, kind) == encode_batch(expected)
